//! Byte-level scanning for the EDN op reader's fast paths: runs of short
//! integers (read eight bytes at a time, SWAR), Jepsen's usual spelling of
//! micro-op vectors and list reads, checked or skipped without the generic
//! reader. Each function answers None (or stops early) on anything it does
//! not recognise, and the careful path in [`super::read`](mod@super::read) takes over; the
//! property tests there hold each against the generic reader.

use crate::edn::parse::{is_delim, is_ws};
use crate::history::model::Val;

/// Reads whitespace-separated integers into `out` as far as they go, and
/// returns where something else starts (the generic path takes it from
/// there). List elements are the bulk of a list-append history: this loop
/// reads an element of up to 7 digits from one 8-byte load, without a
/// branch per digit.
#[inline]
pub(super) fn int_run(src: &[u8], mut i: usize, out: &mut Vec<Val>) -> usize {
    let n = src.len();
    loop {
        while i < n && is_ws(src[i]) {
            i += 1;
        }
        if let Some(w) = word_at(src, i) {
            let len = digit_len(w);
            if (1..=7).contains(&len) && is_delim((w >> (8 * len)) as u8) {
                // Up to 7 digits: always an inline value.
                if let Some(v) = Val::int(swar_value(w, len) as i64) {
                    out.push(v);
                    i += len;
                    continue;
                }
            }
            if len != 8 && src[i] != b'-' {
                return i;
            }
        }
        // Near the end of the input, negative and long numbers: a byte at
        // a time.
        let start = i;
        let neg = i < n && src[i] == b'-';
        if neg {
            i += 1;
        }
        let (v, len) = digits(src, i);
        i += len;
        // Longer numbers (bigints) and anything that is not a plain
        // integer token go the careful way.
        if len == 0 || len > 18 || (i < n && !is_delim(src[i])) {
            return start;
        }
        let x = if neg { -(v as i64) } else { v as i64 };
        match Val::int(x) {
            Some(val) => out.push(val),
            None => return start,
        }
    }
}

/// Where the micro-op vector at `at` ends, if it is spelt exactly as Jepsen
/// writes an invocation's: `[[:append 12 3] [:r 12 nil] [:w 5 7]]`, single
/// spaces, keys and values of 1 to 7 digits or nil. Such a vector is one
/// [`EdnReader::micro_ops`](super::read::EdnReader::micro_ops) reads without error, so an invocation's need
/// not be read: None for anything else, which is then read the careful
/// way. This is some 10% of the instructions of reading a Jepsen history.
#[inline]
pub(super) fn skim_micro_ops(src: &[u8], at: usize) -> Option<usize> {
    if src.get(at) != Some(&b'[') {
        return None;
    }
    let mut i = at + 1;
    if src.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        let head = src.get(i..i + 4)?;
        i = if head == b"[:r " || head == b"[:w " {
            i + 4
        } else if src.get(i..i + 9) == Some(b"[:append ") {
            i + 9
        } else {
            return None;
        };
        i = short_int(src, i)?.1;
        if src.get(i) != Some(&b' ') {
            return None;
        }
        i += 1;
        if src.get(i..i + 4) == Some(b"nil]") {
            i += 4;
        } else {
            i = short_int(src, i)?.1;
            if src.get(i) != Some(&b']') {
                return None;
            }
            i += 1;
        }
        match src.get(i) {
            Some(b' ') => i += 1,
            Some(b']') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// Where the list from `at` (just past its `[`) ends, and how many spaces
/// it holds, when it holds only digits and spaces and is followed by `]]`
/// (the end of the micro-op): such a list reads as integers whatever its
/// spacing and lengths (see `EdnReader::resolve_lists`). The end is
/// found by `memchr`, the bytes before it checked 32 at a time; None for
/// anything else.
#[inline]
pub(super) fn plain_list(src: &[u8], at: usize) -> Option<(usize, u32)> {
    let end = at + memchr::memchr(b']', src.get(at..)?)?;
    if src.get(end + 1) != Some(&b']') {
        return None;
    }
    Some((end, digits_or_spaces(&src[at..end])?))
}

/// The number of spaces in `s` if every byte of it is an ASCII digit or a
/// space. Blocks of 16 bytes are checked by [`digits_or_spaces_blocks`],
/// the rest 8 bytes at a time (the last 8 overlapping what was checked
/// before them).
#[inline]
pub(super) fn digits_or_spaces(s: &[u8]) -> Option<u32> {
    let (mut spaces, rest) = digits_or_spaces_blocks(s)?;
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().ok()?);
        let sp = zero_bytes(w ^ (0x20 * LANES));
        if nondigit_bytes(w) != sp {
            return None;
        }
        spaces += sp.count_ones();
    }
    let left = words.remainder().len();
    if left > 0 {
        if s.len() >= 8 {
            // The last 8 bytes, of which the top `left` are still to check
            // (the bytes below them passed, so no carry spoils the test).
            let w = u64::from_le_bytes(s[s.len() - 8..].try_into().ok()?);
            let lanes = (0x80 * LANES) & !((1u64 << (8 * (8 - left))) - 1);
            let sp = zero_bytes(w ^ (0x20 * LANES)) & lanes;
            if nondigit_bytes(w) & lanes != sp {
                return None;
            }
            spaces += sp.count_ones();
        } else {
            for &c in words.remainder() {
                if c == b' ' {
                    spaces += 1;
                } else if !c.is_ascii_digit() {
                    return None;
                }
            }
        }
    }
    Some(spaces)
}

/// [`digits_or_spaces`] on the 16-byte blocks of `s`: the spaces in them,
/// and the bytes after them (None if a block holds anything else). SSE2 is
/// part of x86-64, so needs no detection; a block costs a few instructions
/// where a byte at a time costs a few per byte.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn digits_or_spaces_blocks(s: &[u8]) -> Option<(u32, &[u8])> {
    use core::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_max_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_sad_epu8, _mm_set1_epi8, _mm_setzero_si128,
        _mm_srli_si128, _mm_sub_epi8,
    };
    let mut blocks = s.chunks_exact(16);
    let mut spaces = 0u32;
    // SAFETY: SSE2 is in every x86-64 processor; each load reads the 16
    // bytes of its block, which `chunks_exact` guarantees.
    let all = unsafe {
        let space = _mm_set1_epi8(b' ' as i8);
        let zero = _mm_set1_epi8(b'0' as i8);
        let nine = _mm_set1_epi8(9);
        let mut all = _mm_set1_epi8(-1);
        // Spaces are counted per byte lane (a lane's mask is -1), and the
        // lanes summed every 255 blocks, before a lane could overflow:
        // x86-64 without target flags has no popcount instruction.
        let mut lanes = _mm_setzero_si128();
        let mut n = 0;
        let sum = |lanes: __m128i| {
            let s = _mm_sad_epu8(lanes, _mm_setzero_si128());
            (_mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_srli_si128::<8>(s))) as u32
        };
        for b in &mut blocks {
            let x = _mm_loadu_si128(b.as_ptr().cast::<__m128i>());
            let sp = _mm_cmpeq_epi8(x, space);
            // A digit is at most 9 above '0', unsigned.
            let d = _mm_sub_epi8(x, zero);
            let digit = _mm_cmpeq_epi8(_mm_max_epu8(d, nine), nine);
            all = _mm_and_si128(all, _mm_or_si128(sp, digit));
            lanes = _mm_sub_epi8(lanes, sp);
            n += 1;
            if n == 255 {
                spaces += sum(lanes);
                lanes = _mm_setzero_si128();
                n = 0;
            }
        }
        spaces += sum(lanes);
        _mm_movemask_epi8(all)
    };
    (all == 0xFFFF).then_some((spaces, blocks.remainder()))
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(super) fn digits_or_spaces_blocks(s: &[u8]) -> Option<(u32, &[u8])> {
    let mut spaces = 0u32;
    let mut blocks = s.chunks_exact(32);
    for b in &mut blocks {
        let (bad, n) = b.iter().fold((0u8, 0u8), |(bad, n), &c| {
            let space = c == b' ';
            (
                bad | u8::from(c.wrapping_sub(b'0') > 9 && !space),
                n + u8::from(space),
            )
        });
        if bad != 0 {
            return None;
        }
        spaces += u32::from(n);
    }
    Some((spaces, blocks.remainder()))
}

/// A list of integers as Jepsen prints them, `1 2 3]` (from just past the
/// `[`): adds its elements to `out` and returns where it ends (past the
/// `]`), or None, having added nothing, for any other spelling (commas,
/// other whitespace, signs, numbers of more than 8 digits, non-integers),
/// which [`int_run`] and the generic path then read. The list is checked
/// and its separators found 8 bytes at a time; each element is then read
/// from one 8-byte load.
#[inline]
pub(super) fn int_list(src: &[u8], at: usize, out: &mut Vec<Val>) -> Option<usize> {
    let end = at + memchr::memchr(b']', src.get(at..)?)?;
    let base = out.len();
    let r = int_list_body(src, at, end, out);
    if r.is_none() {
        out.truncate(base);
    }
    r.map(|()| end + 1)
}

#[inline]
pub(super) fn int_list_body(src: &[u8], at: usize, end: usize, out: &mut Vec<Val>) -> Option<()> {
    if at == end {
        return Some(());
    }
    let mut start = at;
    let mut i = at;
    while i < end {
        let w = match word_at(src, i) {
            Some(w) => w,
            None => {
                let mut b = [0u8; 8];
                let tail = &src[i..];
                b[..tail.len()].copy_from_slice(tail);
                u64::from_le_bytes(b)
            }
        };
        let lanes = if end - i >= 8 {
            0x80 * LANES
        } else {
            (0x80 * LANES) & ((1u64 << (8 * (end - i))) - 1)
        };
        let spaces = zero_bytes(w ^ (0x20 * LANES)) & lanes;
        // Every byte a digit or a space.
        if nondigit_bytes(w) & lanes != spaces {
            return None;
        }
        let mut bits = spaces;
        while bits != 0 {
            let p = i + (bits.trailing_zeros() / 8) as usize;
            out.push(element(src, start, p)?);
            start = p + 1;
            bits &= bits - 1;
        }
        i += 8;
    }
    out.push(element(src, start, end)?);
    Some(())
}

/// The list element `src[start..end]`, all digits: None when empty or
/// longer than 8 digits.
#[inline]
pub(super) fn element(src: &[u8], start: usize, end: usize) -> Option<Val> {
    let len = end - start;
    if len == 0 || len > 8 {
        return None;
    }
    Val::int(swar_value(word_at(src, start)?, len) as i64)
}

/// The top bit of each zero byte of `x`.
#[inline]
pub(super) fn zero_bytes(x: u64) -> u64 {
    !((((x & (0x7F * LANES)) + 0x7F * LANES) | x) | (0x7F * LANES))
}

/// The top bit of each byte of `w` that is not an ASCII digit (exact up to
/// the first byte >= 0xFA, which is itself flagged).
#[inline]
pub(super) fn nondigit_bytes(w: u64) -> u64 {
    let hi = (w & (0xF0 * LANES)) ^ (0x30 * LANES);
    let lo = (w.wrapping_add(0x06 * LANES) & (0xF0 * LANES)) ^ (0x30 * LANES);
    let m = hi | lo;
    (((m & (0x7F * LANES)) + 0x7F * LANES) | m) & (0x80 * LANES)
}

/// The 8 bytes at `i`, little-endian, if there are 8.
#[inline]
pub(super) fn word_at(src: &[u8], i: usize) -> Option<u64> {
    let b: [u8; 8] = src.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

const LANES: u64 = 0x0101_0101_0101_0101;

/// How many of the word's bytes, from the first, are ASCII digits (8 when
/// all are).
#[inline]
pub(super) fn digit_len(w: u64) -> usize {
    (nondigit_bytes(w).trailing_zeros() / 8) as usize
}

/// The value of the first `len` (1 to 8) bytes of `w`, all digits.
#[inline]
pub(super) fn swar_value(w: u64, len: usize) -> u64 {
    // Move the digits to the top so the bytes below read as leading zeros,
    // then combine pairs, quads and halves.
    let d = (w & (0x0F * LANES)) << (8 * (8 - len));
    let d = (d * 10 + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
    let d = (d * 100 + (d >> 16)) & 0x0000_FFFF_0000_FFFF;
    (d * 10_000 + (d >> 32)) & 0xFFFF_FFFF
}

/// The value of the decimal digits at `i` (up to 7, then a delimiter), and
/// where they end.
#[inline]
pub(super) fn short_int(src: &[u8], i: usize) -> Option<(Val, usize)> {
    let w = word_at(src, i)?;
    let len = digit_len(w);
    if !(1..=7).contains(&len) {
        return None;
    }
    Some((Val::int(swar_value(w, len) as i64)?, i + len))
}

/// The value and count of the decimal digits at `i` (wrapping past 19).
#[inline]
pub(super) fn digits(src: &[u8], mut i: usize) -> (u64, usize) {
    let first = i;
    let mut v: u64 = 0;
    while let Some(&c) = src.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    (v, i - first)
}
