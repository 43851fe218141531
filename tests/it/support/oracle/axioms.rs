//! Biswas & Enea's axioms ("On the complexity of checking transactional
//! consistency", OOPSLA 2019, section 2, figure 2), decided by enumerating
//! every commit order: a history satisfies a level iff some strict total
//! order `co` of its committed transactions, extending session order and
//! write-read (and, for lists, the write order the reads reveal; for the
//! strong variants, real time), satisfies the level's axiom. With t1 the
//! writer `t3` read key x from and t2 != t1 another writer of x, each
//! axiom says when t2 must precede t1 in `co`:
//!
//! - read committed: t3 read some key from t2 earlier in its program;
//! - read atomic: t2 (wr ∪ so) t3;
//! - causal: t2 (wr ∪ so)+ t3;
//! - prefix: t2 co* t4 (wr ∪ so) t3 for some t4;
//! - conflict: t2 co* t4 co t3 for some t4 writing a key t3 writes;
//! - snapshot isolation: prefix and conflict;
//! - serializability: t2 co t3.
//!
//! Parallel snapshot isolation (Cerone, Bernardi & Gotsman 2015: Ext,
//! Session, TransVis, NoConflict) in the same shape: with vis the least
//! transitive relation containing wr, so and `co` between writers of one
//! key (NoConflict), t2 vis t3 forces t2 co t1.
//!
//! The relation called `so` above is a parameter ([`Order`]): none (Elle's
//! sessionless models), session order, or session order and real time.

use super::facts::{Facts, Set, bit};

/// What plays the part of session order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Order {
    None,
    Session,
    SessionRealtime,
}

/// The levels, in the bit order of [`Verdicts`].
pub const LEVELS: [&str; 7] = ["RC", "RA", "CC", "PC", "PSI", "SI", "SER"];

/// Bit i: the history satisfies `LEVELS[i]`.
pub type Verdicts = u8;
pub const ALL: Verdicts = (1 << LEVELS.len()) - 1;

/// The levels some commit order of `f` satisfies, with `order` as session
/// order.
pub fn decide(f: &Facts, order: Order) -> Verdicts {
    if f.impossible {
        return 0;
    }
    let n = f.n;
    let mut so: Vec<(usize, usize)> = match order {
        Order::None => Vec::new(),
        Order::Session => f.so.clone(),
        Order::SessionRealtime => f.so.iter().chain(&f.rt).copied().collect(),
    };
    so.sort_unstable();
    so.dedup();
    // Predecessors each node must follow in co.
    let mut before: Vec<Set> = vec![0; n];
    let mut wr_so: Vec<Set> = vec![0; n];
    for &(a, b) in &so {
        before[b] |= bit(a);
        wr_so[b] |= bit(a);
    }
    for r in &f.reads {
        wr_so[r.reader] |= bit(r.src);
        if r.src != r.reader {
            before[r.reader] |= bit(r.src);
        }
    }
    for &(a, b) in &f.wo {
        before[b] |= bit(a);
    }
    for b in &mut before {
        *b &= !1; // node 0 is first anyway
    }
    let causal = closure(&wr_so);
    // For read committed: for each read, the sources of earlier reads in
    // the same transaction.
    let earlier: Vec<Set> = (0..f.reads.len())
        .map(|i| {
            f.reads[..i]
                .iter()
                .filter(|r| r.reader == f.reads[i].reader)
                .fold(0, |s, r| s | bit(r.src))
        })
        .collect();
    let writers_of = |k| -> Set {
        (0..n)
            .filter(|&v| f.writes_key(v, k))
            .fold(0, |s, v| s | bit(v))
    };
    let writers: Vec<Set> = f.reads.iter().map(|r| writers_of(r.key)).collect();
    let mut ctx = Search {
        f,
        before: &before,
        wr_so: &wr_so,
        causal: &causal,
        earlier: &earlier,
        writers: &writers,
        pos: vec![0; n],
        placed: 1,
        order: vec![0],
        found: 0,
    };
    ctx.dfs();
    ctx.found
}

fn closure(rel: &[Set]) -> Vec<Set> {
    // rel[b] = set of a with a -> b; the transitive closure.
    let mut c = rel.to_vec();
    loop {
        let mut changed = false;
        for b in 0..c.len() {
            let mut s = c[b];
            for (a, &ca) in c.iter().enumerate() {
                if s & bit(a) != 0 {
                    s |= ca;
                }
            }
            if s != c[b] {
                c[b] = s;
                changed = true;
            }
        }
        if !changed {
            return c;
        }
    }
}

struct Search<'a> {
    f: &'a Facts,
    before: &'a [Set],
    wr_so: &'a [Set],
    causal: &'a [Set],
    earlier: &'a [Set],
    writers: &'a [Set],
    pos: Vec<usize>,
    placed: Set,
    order: Vec<usize>,
    found: Verdicts,
}

impl Search<'_> {
    fn dfs(&mut self) {
        if self.found == ALL {
            return;
        }
        let n = self.f.n;
        if self.order.len() == n {
            self.found |= self.check();
            return;
        }
        for v in 1..n {
            if self.placed & bit(v) == 0 && self.before[v] & !self.placed == 0 {
                self.pos[v] = self.order.len();
                self.order.push(v);
                self.placed |= bit(v);
                self.dfs();
                self.placed &= !bit(v);
                self.order.pop();
            }
        }
    }

    /// The levels this complete order satisfies.
    fn check(&self) -> Verdicts {
        let f = self.f;
        let n = f.n;
        let pos = &self.pos;
        // co* set before-or-equal each node, as a set.
        let upto = |v: usize| -> Set { self.order[..=pos[v]].iter().fold(0, |s, &x| s | bit(x)) };
        // PSI's visibility: wr ∪ so ∪ co between writers of a key, closed.
        let mut vis: Vec<Set> = self.wr_so.to_vec();
        for a in 0..n {
            for b in 0..n {
                if a != b && pos[a] < pos[b] && f.writes[a] & f.writes[b] != 0 {
                    vis[b] |= bit(a);
                }
            }
        }
        let vis = closure(&vis);
        let mut ok = ALL;
        for (i, r) in f.reads.iter().enumerate() {
            let (t1, t3) = (r.src, r.reader);
            // Writers that must precede t1, per level.
            let prefix_pred = (0..n)
                .filter(|&t4| self.wr_so[t3] & bit(t4) != 0)
                .fold(0, |s, t4| s | upto(t4));
            let conflict_pred = (0..n)
                .filter(|&t4| t4 != t3 && pos[t4] < pos[t3] && f.writes[t4] & f.writes[t3] != 0)
                .fold(0, |s, t4| s | upto(t4));
            let co_pred = upto(t3) & !bit(t3);
            let premises: [Set; 7] = [
                self.earlier[i],
                self.wr_so[t3],
                self.causal[t3],
                prefix_pred,
                vis[t3],
                prefix_pred | conflict_pred,
                co_pred,
            ];
            for (l, &p) in premises.iter().enumerate() {
                let t2s = p & self.writers[i] & !bit(t1);
                let violated = (0..n).any(|t2| t2s & bit(t2) != 0 && pos[t2] >= pos[t1]);
                if violated {
                    ok &= !(1 << l);
                }
            }
        }
        ok
    }
}
