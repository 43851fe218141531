//! Repeated values (`--repeat-values P`, rw-register): a write shows, with
//! probability P, a value already written to its key, as transaction
//! fuzzers' histories do, so a read of it may have observed either write.
//!
//! The store keeps its own values unique (its rules and the fault logic
//! name versions by them); only what is written out repeats: each write's
//! shown value is chosen when it is planned, and a read shows its
//! version's. The history stays a projection of a run that satisfies the
//! store's level, under the reading "a read observed some write of its
//! value", so a history without faults is valid at the store's level.
//!
//! A fault stays detectable: it fires only if every read its transactions
//! made shows a value written once so far (no other write could explain
//! it), and those values are never shown again ([`Repeats::pin`]). A
//! transaction whose fault would rest on a repeated value aborts instead
//! (`Sim::commit`), leaving no trace.

use rustc_hash::{FxHashMap, FxHashSet};

use super::rng::Rng;

pub(crate) struct Repeats {
    rate: f64,
    rng: Rng,
    /// By key: the values shown for its writes so far, each once.
    written: FxHashMap<u64, Vec<u32>>,
    /// (key, store value) -> the value shown, for the writes that repeat.
    shown: FxHashMap<(u64, u32), u32>,
    /// (key, shown value) pairs written more than once.
    shared: FxHashSet<(u64, u32)>,
    /// (key, shown value) pairs a fault's reads showed: never repeated.
    pinned: FxHashSet<(u64, u32)>,
}

/// Tries for a value to repeat before writing a fresh one.
const TRIES: usize = 4;

impl Repeats {
    pub fn new(rate: f64, seed: u64) -> Repeats {
        Repeats {
            rate,
            rng: Rng::new(seed, 5),
            written: FxHashMap::default(),
            shown: FxHashMap::default(),
            shared: FxHashSet::default(),
            pinned: FxHashSet::default(),
        }
    }

    /// Whether any value may repeat.
    pub fn on(&self) -> bool {
        self.rate > 0.0
    }

    /// The value a new write of store value `val` to `key` shows: with the
    /// rate's probability an earlier write's (not one `mine`, the values
    /// this transaction already shows for the key, holds, nor a pinned
    /// one), else its own.
    pub fn plan(&mut self, key: u64, val: u32, mine: &[u32]) -> u32 {
        if !self.on() {
            return val;
        }
        let earlier = self.written.entry(key).or_default();
        let mut shown = val;
        if !earlier.is_empty() && self.rng.chance(self.rate) {
            for _ in 0..TRIES {
                let u = earlier[self.rng.below(earlier.len() as u64) as usize];
                if !mine.contains(&u) && !self.pinned.contains(&(key, u)) {
                    shown = u;
                    break;
                }
            }
        }
        if shown == val {
            earlier.push(val);
        } else {
            self.shown.insert((key, val), shown);
            self.shared.insert((key, shown));
        }
        shown
    }

    /// The value a version of `key` with store value `val` shows.
    #[inline]
    pub fn show(&self, key: u64, val: u32) -> u32 {
        if self.shown.is_empty() {
            return val;
        }
        self.shown.get(&(key, val)).copied().unwrap_or(val)
    }

    /// Whether the reads `(key, store value)` each show a value written
    /// once so far (0, the initial state, always does).
    pub fn unique(&self, reads: &[(u64, u32)]) -> bool {
        reads
            .iter()
            .all(|&(k, v)| v == 0 || !self.shared.contains(&(k, self.show(k, v))))
    }

    /// Keeps the values these reads show from being repeated.
    pub fn pin(&mut self, reads: &[(u64, u32)]) {
        for &(k, v) in reads {
            if v != 0 {
                self.pinned.insert((k, self.show(k, v)));
            }
        }
    }
}
