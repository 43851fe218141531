//! The simulated databases' shared storage: every committed write, per key,
//! in commit order, read through a per-transaction [`View`].
//!
//! One global commit sequence number (csn) orders all commits; it is the
//! version order of every key (and the arbitration order of the causal
//! store: a write visible to a transaction always committed before that
//! transaction began, so csn order extends visibility). The levels differ
//! only in which commits a transaction's view admits and in what commit
//! refuses:
//!
//! - serializable: a prefix of the commit order at begin; an updating
//!   transaction aborts when a key it read or wrote changed since (OCC).
//! - snapshot isolation: a prefix at begin; first committer wins.
//! - prefix: a prefix at begin, and no write conflict refused (lost
//!   updates, no long fork).
//! - parallel snapshot isolation: the causal store's replica snapshot at
//!   begin; a commit is refused when a key it writes has a version the
//!   snapshot lacks (long forks, no lost update).
//! - causal: each replica's applied set, described by a vector clock;
//!   replicas apply remote commits in causal order. A list key may only be
//!   appended at a replica that has applied all its earlier appends, which
//!   keeps every list read a prefix of the key's order (Elle's premise).
//! - read atomic: a stale prefix plus a random subset of later commits and
//!   the session's own (for lists, closed under earlier writers of the same
//!   key, so reads stay prefixes).
//! - read committed: the latest committed state at each read; writes take
//!   no-wait write locks held to commit.

use rustc_hash::{FxHashMap, FxHashSet};

use super::rng::Rng;

/// A transaction, numbered in invocation order.
pub(crate) type TxnNo = u32;
/// A commit sequence number; 0 is the initial state.
pub(crate) type Csn = u32;

/// One committed write: a transaction that writes a key twice leaves two
/// versions with the same csn, the final one last.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    pub csn: Csn,
    pub val: u32,
}

#[derive(Default)]
pub(crate) struct KeyState {
    pub versions: Vec<Version>,
    /// The last value handed out for this key (values start at 1).
    pub last_val: u32,
    /// Read committed's write lock.
    pub lock: Option<TxnNo>,
    /// The latest aborted (`:fail`) transaction's writes to this key.
    pub aborted: Option<(TxnNo, Vec<u32>)>,
}

/// Which commits a transaction sees.
#[derive(Clone, Debug)]
pub(crate) enum View {
    /// Commits up to `upto`, minus `hidden`.
    Prefix { upto: Csn, hidden: Vec<Csn> },
    /// Everything committed so far, at the time of each read.
    Latest,
    /// Commits up to `upto`, plus `extra`.
    Atomic { upto: Csn, extra: FxHashSet<Csn> },
    /// What a replica had applied: `vc[r]` commits of each origin `r`.
    Causal { vc: Vec<u32> },
}

pub(crate) static LATEST: View = View::Latest;

/// Who committed a csn, and where (for the causal store).
#[derive(Copy, Clone, Debug)]
pub(crate) struct CommitInfo {
    pub txn: TxnNo,
    pub origin: u32,
    /// Position among the origin replica's commits, from 1.
    pub oseq: u32,
}

pub(crate) struct Store {
    pub keys: FxHashMap<u64, KeyState>,
    /// Indexed by csn; entry 0 stands for the initial state.
    pub commits: Vec<CommitInfo>,
    /// Causal store: each replica's vector clock.
    pub replicas: Vec<Vec<u32>>,
    /// Causal store: each origin's commits, in order.
    pub origin_log: Vec<Vec<Csn>>,
    /// Causal store: each commit's dependency clock, `replicas.len()` wide.
    pub deps: Vec<u32>,
}

impl Store {
    pub fn new(replicas: usize) -> Store {
        let r = replicas.max(1);
        Store {
            keys: FxHashMap::default(),
            commits: vec![CommitInfo {
                txn: u32::MAX,
                origin: 0,
                oseq: 0,
            }],
            replicas: vec![vec![0; r]; r],
            origin_log: vec![Vec::new(); r],
            deps: vec![0; r],
        }
    }

    pub fn last_csn(&self) -> Csn {
        (self.commits.len() - 1) as Csn
    }

    pub fn writer(&self, csn: Csn) -> TxnNo {
        self.commits[csn as usize].txn
    }

    pub fn visible(&self, view: &View, csn: Csn) -> bool {
        match view {
            View::Prefix { upto, hidden } => csn <= *upto && !hidden.contains(&csn),
            View::Latest => true,
            View::Atomic { upto, extra } => csn <= *upto || extra.contains(&csn),
            View::Causal { vc } => {
                let c = self.commits[csn as usize];
                c.oseq <= vc[c.origin as usize]
            }
        }
    }

    pub fn versions(&self, key: u64) -> &[Version] {
        self.keys.get(&key).map_or(&[], |k| &k.versions)
    }

    /// Index of the register's visible version (the final write of the
    /// latest visible commit), skipping commit `except`.
    pub fn read_reg(&self, key: u64, view: &View, except: Option<Csn>) -> Option<usize> {
        let vs = self.versions(key);
        (0..vs.len())
            .rev()
            .find(|&i| Some(vs[i].csn) != except && self.visible(view, vs[i].csn))
    }

    /// The visible elements of a list, in order, skipping commit `except`.
    pub fn read_list(&self, key: u64, view: &View, except: Option<Csn>, out: &mut Vec<Version>) {
        out.clear();
        out.extend(
            self.versions(key)
                .iter()
                .filter(|v| Some(v.csn) != except && self.visible(view, v.csn)),
        );
    }

    /// Csn of the key's latest commit (0 when never written).
    pub fn latest(&self, key: u64) -> Csn {
        self.versions(key).last().map_or(0, |v| v.csn)
    }

    /// Records a commit made at replica `origin` (0 outside the causal
    /// store); `dep` is its dependency clock (causal store only).
    pub fn push_commit(&mut self, txn: TxnNo, origin: usize, dep: Option<&[u32]>) -> Csn {
        let csn = self.commits.len() as Csn;
        let oseq = self.origin_log[origin].len() as u32 + 1;
        self.origin_log[origin].push(csn);
        self.commits.push(CommitInfo {
            txn,
            origin: origin as u32,
            oseq,
        });
        let r = self.replicas.len();
        match dep {
            Some(d) => self.deps.extend_from_slice(d),
            None => self.deps.extend(std::iter::repeat_n(0, r)),
        }
        self.deps[csn as usize * r + origin] = oseq - 1;
        self.replicas[origin][origin] = oseq;
        csn
    }

    /// One step of the causal store's replication: a random replica applies
    /// the next commit of a random other origin, if everything that commit
    /// depends on is already applied there (causal delivery).
    pub fn replicate(&mut self, rng: &mut Rng) {
        let r = self.replicas.len();
        if r < 2 {
            return;
        }
        let to = rng.below(r as u64) as usize;
        let mut from = rng.below(r as u64 - 1) as usize;
        if from >= to {
            from += 1;
        }
        let next = self.replicas[to][from] as usize;
        let Some(&csn) = self.origin_log[from].get(next) else {
            return;
        };
        let dep = &self.deps[csn as usize * r..(csn as usize + 1) * r];
        if dep
            .iter()
            .zip(&self.replicas[to])
            .all(|(d, have)| d <= have)
        {
            self.replicas[to][from] = next as u32 + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_respects_causal_order() {
        let mut s = Store::new(3);
        // Commit a at replica 0; replica 1 applies it, then commits b on top.
        let a = s.push_commit(0, 0, Some(&[0, 0, 0]));
        let mut rng = Rng::new(1, 1);
        for _ in 0..1000 {
            if s.replicas[1][0] >= 1 {
                break;
            }
            s.replicate(&mut rng);
        }
        assert_eq!(s.replicas[1][0], 1);
        let dep = s.replicas[1].clone();
        let b = s.push_commit(1, 1, Some(&dep));
        // Replica 2 must never apply b before a.
        let mut rng = Rng::new(5, 5);
        for _ in 0..1000 {
            s.replicate(&mut rng);
            let vc = &s.replicas[2];
            assert!(vc[1] == 0 || vc[0] >= 1, "b applied before a: {vc:?}");
        }
        let v = View::Causal {
            vc: s.replicas[2].clone(),
        };
        assert!(s.visible(&v, a) && s.visible(&v, b));
    }

    #[test]
    fn register_reads_take_the_final_write_of_the_latest_visible_commit() {
        let mut s = Store::new(1);
        let c1 = s.push_commit(0, 0, None);
        let c2 = s.push_commit(1, 0, None);
        let k = s.keys.entry(5).or_default();
        k.versions.push(Version { csn: c1, val: 1 });
        k.versions.push(Version { csn: c2, val: 2 });
        k.versions.push(Version { csn: c2, val: 3 });
        let all = View::Prefix {
            upto: c2,
            hidden: vec![],
        };
        assert_eq!(s.read_reg(5, &all, None), Some(2));
        assert_eq!(s.read_reg(5, &all, Some(c2)), Some(0));
        let old = View::Prefix {
            upto: c1,
            hidden: vec![],
        };
        assert_eq!(s.read_reg(5, &old, None), Some(0));
        assert_eq!(s.read_reg(6, &old, None), None);
    }
}
