//! The op reader of a large EDN file on several threads: the file split
//! into pieces at line starts, each piece's op maps read on rayon's pool
//! (into buffers, with a value table of its own), and the pieces handed to
//! the compiler ([`super::compile`]) in file order, so that the history, its
//! indices, the pairing and the first error are the one-thread reader's.
//!
//! Only the reading of op maps runs in parallel (the op reader's
//! `read_op`); numbering, pairing, and compiling into the builder stay on
//! the calling thread, in file order, while the pool reads the next
//! pieces.
//!
//! A piece starts where a line starts with an op map (`{` or `#`, after
//! spaces), which is a guess: the line may be inside a multi-line form or
//! a string. The guess is checked, never trusted: a piece read from the
//! start of the file is the one-thread reader exactly, and it stops at the
//! first point between two ops at or past its end; the next piece's reading
//! is kept only when it started at that very point (the one-thread reader,
//! there, is in the state a fresh reader starts in). Otherwise it is read
//! again from that point, on this thread. So a wrong guess costs time,
//! never a different answer.
//!
//! Values a piece interns go to its own table; when its ops are taken, the
//! values each op added are interned in the file's table in the order the
//! op added them, which is the order the one-thread reader interns them in.

use std::ops::Range;

use super::read::{Deferred, EdnReader, OpFields};
use crate::error::ParseError;
use crate::history::build::{Arg, RawMop};
use crate::history::model::*;

/// Files smaller than this are read on one thread: under 8 MB a read
/// takes a few tens of milliseconds, of which the split would save a few,
/// and the buffers it fills cost about as much.
pub const PARALLEL_FROM: usize = 8 << 20;

/// The size of a piece: large enough that a piece's start and hand-over
/// cost nothing beside its reading, small enough that the pieces in flight
/// (two per thread: the ones being taken and the ones being read) hold
/// little memory.
pub const PIECE_BYTES: usize = 2 << 20;

/// How a file is read: in one piece on this thread, or split.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// On this thread, as one piece.
    Sequential,
    /// In pieces, read side by side on the current rayon pool.
    Pieces {
        /// About how long a piece is (it ends at the next op's line).
        bytes: usize,
        /// How many pieces are read at once, while the ones before are
        /// taken.
        threads: usize,
    },
}

impl Split {
    /// The split for a file of `len` bytes on the current rayon pool:
    /// sequential on one thread or under [`PARALLEL_FROM`].
    pub fn for_file(len: usize) -> Split {
        let threads = rayon::current_num_threads();
        if threads <= 1 || len < PARALLEL_FROM {
            Split::Sequential
        } else {
            Split::Pieces {
                bytes: PIECE_BYTES,
                threads,
            }
        }
    }
}

/// An op map a piece read.
pub(super) struct PieceOp {
    pub(super) fields: OpFields,
    /// Where the reader stood after it.
    end: usize,
    mops: Range<usize>,
    elems: Range<usize>,
    deferred: Range<usize>,
    /// The ids of the piece's own value table this op added.
    values: Range<u32>,
}

/// How a piece's reading ended.
enum Stop {
    /// Between two ops, at this offset, at or past the piece's end.
    At(usize),
    /// At the end of the history.
    End,
    /// At an error: the first of the piece.
    Error(ParseError),
}

/// The op maps of one piece, read.
pub(super) struct Piece {
    /// Where its reading started, and the end it was given.
    start: usize,
    end: usize,
    ops: Vec<PieceOp>,
    mops: Vec<RawMop>,
    elems: Vec<Val>,
    deferred: Vec<Deferred>,
    values: Values,
    stop: Stop,
}

/// The ends of the pieces of `src` from `from` on: after each end the
/// next line that starts (after spaces or tabs) with `{` or `#`. The last
/// is the file's end.
fn ends(src: &[u8], from: usize, bytes: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = from;
    while at + bytes < src.len() {
        let mut i = at + bytes;
        let found = loop {
            let Some(nl) = memchr::memchr(b'\n', &src[i..]) else {
                break None;
            };
            let mut j = i + nl + 1;
            while matches!(src.get(j), Some(b' ' | b'\t')) {
                j += 1;
            }
            if matches!(src.get(j), Some(b'{' | b'#')) {
                break Some(j);
            }
            i = j;
        };
        match found {
            Some(j) => {
                out.push(j);
                at = j;
            }
            None => break,
        }
    }
    out.push(src.len());
    out
}

impl<'a> EdnReader<'a, Values> {
    /// Reads the op maps from `from` to the first point between two ops at
    /// or past `end` (`last`: to the end of the history).
    fn piece(
        src: &'a [u8],
        wrapped: Option<(u8, usize)>,
        from: usize,
        end: usize,
        last: bool,
    ) -> Piece {
        let mut r = EdnReader::new(src, Values::default());
        r.wrapped = wrapped;
        r.cur.pos = from;
        let mut p = Piece {
            start: from,
            end,
            ops: Vec::new(),
            mops: Vec::new(),
            elems: Vec::new(),
            deferred: Vec::new(),
            values: Values::default(),
            stop: Stop::End,
        };
        p.stop = loop {
            if let Err(e) = r.cur.skip_ws(1) {
                break Stop::Error(e);
            }
            if !last && r.cur.pos >= end {
                break Stop::At(r.cur.pos);
            }
            match r.at_op() {
                Ok(true) => {}
                Ok(false) => break Stop::End,
                Err(e) => break Stop::Error(e),
            }
            r.raw.clear();
            let before = r.sink.len();
            let fields = match r.read_op() {
                Ok(f) => f,
                Err(e) => break Stop::Error(e),
            };
            let mops = p.mops.len()..p.mops.len() + r.raw.mops.len();
            p.mops.extend_from_slice(&r.raw.mops);
            let elems = p.elems.len()..p.elems.len() + r.raw.elems.len();
            p.elems.extend_from_slice(&r.raw.elems);
            let deferred = p.deferred.len()..p.deferred.len() + r.deferred.len();
            p.deferred.append(&mut r.deferred);
            p.ops.push(PieceOp {
                fields,
                end: r.cur.pos,
                mops,
                elems,
                deferred,
                values: before..r.sink.len(),
            });
        };
        p.values = r.sink;
        p
    }
}

/// Reads the pieces of `spans` (start, end; the last ends at the file's
/// end) side by side on the pool.
fn read_pieces(src: &[u8], wrapped: Option<(u8, usize)>, spans: &[(usize, usize)]) -> Vec<Piece> {
    use rayon::prelude::*;
    spans
        .par_iter()
        .map(|&(from, end)| EdnReader::piece(src, wrapped, from, end, end == src.len()))
        .collect()
}

/// The pieces of a file, read a window ahead of the one being taken.
pub(super) struct Pieces {
    /// The pieces' (start, end), in file order.
    spans: Vec<(usize, usize)>,
    threads: usize,
    /// Where the one-thread reader stands: the end of the last piece taken.
    at: usize,
    done: bool,
}

impl Pieces {
    pub(super) fn new(src: &[u8], from: usize, bytes: usize, threads: usize) -> Pieces {
        let ends = ends(src, from, bytes.max(1));
        let mut start = from;
        let spans = ends
            .into_iter()
            .map(|e| {
                let s = (start, e);
                start = e;
                s
            })
            .collect();
        Pieces {
            spans,
            threads: threads.max(1),
            at: from,
            done: false,
        }
    }

    /// Takes every op of the file, in order, into `take`; the pool reads
    /// the next window of pieces meanwhile.
    pub(super) fn run<'a, T>(
        mut self,
        r: &mut EdnReader<'a, T>,
        mut take: impl FnMut(&mut EdnReader<'a, T>, OpFields) -> Result<(), ParseError> + Send,
    ) -> Result<(), ParseError>
    where
        EdnReader<'a, T>: Send,
        T: super::read::OpSink,
    {
        let src = r.src;
        let wrapped = r.wrapped;
        let window = self.threads;
        let spans = std::mem::take(&mut self.spans);
        let mut windows = spans.chunks(window);
        let mut ready = windows
            .next()
            .map(|w| read_pieces(src, wrapped, w))
            .unwrap_or_default();
        let mut map: Vec<Val> = Vec::new();
        while !ready.is_empty() {
            let next = windows.next();
            let (taken, read) = rayon::join(
                || -> Result<(), ParseError> {
                    for p in ready {
                        if self.done {
                            break;
                        }
                        self.take_piece(p, src, wrapped, r, &mut map, &mut take)?;
                    }
                    Ok(())
                },
                || {
                    next.map(|w| read_pieces(src, wrapped, w))
                        .unwrap_or_default()
                },
            );
            taken?;
            if self.done {
                return Ok(());
            }
            ready = read;
        }
        Ok(())
    }

    /// Takes one piece's ops, or, when its reading did not start where the
    /// one-thread reader stands, reads it again from there.
    fn take_piece<'a, T: super::read::OpSink>(
        &mut self,
        p: Piece,
        src: &'a [u8],
        wrapped: Option<(u8, usize)>,
        r: &mut EdnReader<'a, T>,
        map: &mut Vec<Val>,
        take: &mut impl FnMut(&mut EdnReader<'a, T>, OpFields) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let p = if p.start == self.at {
            p
        } else {
            EdnReader::piece(src, wrapped, self.at, p.end, p.end == src.len())
        };
        map.clear();
        map.push(Val::NIL);
        let Piece {
            ops,
            mops,
            elems,
            deferred,
            values,
            stop,
            ..
        } = p;
        for op in ops {
            for i in op.values.clone() {
                let v = values.entry(i).clone();
                let g = r.sink.values().intern(v);
                debug_assert_eq!(map.len(), i as usize);
                map.push(g);
            }
            let remap = |v: Val| remap(v, map);
            r.raw.clear();
            r.raw
                .mops
                .extend(mops[op.mops.clone()].iter().map(|m| RawMop {
                    key: remap(m.key),
                    arg: match m.arg {
                        Arg::Val(v) => Arg::Val(remap(v)),
                        a => a,
                    },
                    ..*m
                }));
            r.raw
                .elems
                .extend(elems[op.elems.clone()].iter().map(|&v| remap(v)));
            r.deferred.clear();
            r.deferred
                .extend(deferred[op.deferred.clone()].iter().map(|d| Deferred {
                    key: remap(d.key),
                    ..*d
                }));
            let mut fields = op.fields;
            fields.f = remap(fields.f);
            r.cur.pos = op.end;
            take(r, fields)?;
        }
        match stop {
            Stop::At(at) => {
                self.at = at;
                r.cur.pos = at;
                Ok(())
            }
            Stop::End => {
                self.done = true;
                Ok(())
            }
            Stop::Error(e) => Err(e),
        }
    }
}

/// A value of a piece's table as the file's table has it.
#[inline]
fn remap(v: Val, map: &[Val]) -> Val {
    match v.as_int() {
        Some(_) => v,
        None => map[(v.raw() >> 1) as usize],
    }
}
