//! A resolution of the ambiguous reads of repeated register values under
//! which the history is causally consistent (or read atomic), searched
//! for by SAT over the reads' choices of writer (lazy clause generation).
//! The causal checkers read one guessed writer per read (`settle`); this
//! finds the choice that makes them hold, where a local search from the
//! guess is stuck.
//!
//! Theory (Biswas & Enea, OOPSLA'19, §2, causal consistency): with every
//! read's writer fixed, let `co = (SO ∪ WR)+`. The history is causally
//! consistent iff `co ∪ {t2 -> t1 : t3 reads x from t1, t2 != t1 writes x,
//! t2 co t3}` is acyclic, and no read of the initial state of `x` has a
//! writer of `x` before it in `co`. Each edge of a cycle of that graph
//! rests on the choices of the ambiguous reads along it (a write-read
//! step's own, and a derived edge's read and the `co` path it rests on),
//! so "not all of those choices" is a clause every causally consistent
//! resolution satisfies. Read atomicity (§2 too) is the same with
//! `co = SO ∪ WR`, not closed ([`Axiom`]).
//!
//! Data flow: one selector per (read, candidate writer), exactly one per
//! read, each read's likeliest writer guessed first -> solve -> the
//! resolution's graph (`SO ∪ WR`, closed for causality; derived edges)
//! -> each of its violations (every read of the initial state with a
//! writer before it, one cycle per cyclic component) becomes a clause,
//! again; none: the resolution, which the caller checks with the real
//! checkers (it is a witness only if they agree). No solution: no
//! resolution satisfies the axiom (every clause is one each resolution
//! that does satisfies, so a proof, when `reads` lists every ambiguous
//! read with all its candidates). Past [`ROUNDS`] or [`MAX_TXNS`]:
//! undecided, which proves nothing.

use batsat::interface::SolverInterface;
use batsat::{Lit, lbool};
use rustc_hash::FxHashMap;
use std::time::Instant;

use super::budget;
use super::deps::{included, outside_from, so_edges};
use super::graph::{Closure, Digraph, sccs, shortest_path};
use super::tuning::{CC_WITNESS_MAX_TXNS as MAX_TXNS, CC_WITNESS_ROUNDS as ROUNDS};
use crate::history::model::{History, KeyId, MopId, TxnId, from};

/// What the search over the reads' choices of writer found.
#[derive(Debug, PartialEq, Eq)]
pub enum Search {
    /// The pick (an index into each read's candidates, as `reads` lists
    /// them) of a resolution satisfying the axiom.
    Consistent(Vec<usize>),
    /// No choice of writers satisfies the axiom.
    Inconsistent,
    /// Past the bounds: nothing proved.
    Undecided,
}

/// Which of Biswas & Enea's axioms a resolution must satisfy: the
/// writers of a key a reader must not miss are those before it in
/// `SO ∪ WR` (read atomic) or in its transitive closure (causal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axiom {
    ReadAtomic,
    Causal,
}

impl Axiom {
    /// How a result's note names it.
    pub fn name(self) -> &'static str {
        match self {
            Axiom::ReadAtomic => "read atomic",
            Axiom::Causal => "causally consistent",
        }
    }
}

/// A resolution of `reads` satisfying `axiom`, or a proof there is none;
/// undecided too once `deadline` (the run's `--timeout`) has passed.
pub fn search(
    h: &History,
    reads: &[(MopId, Vec<MopId>)],
    axiom: Axiom,
    deadline: Option<Instant>,
) -> Search {
    let n = h.txns.len();
    if n > MAX_TXNS || reads.is_empty() {
        return Search::Undecided;
    }
    let mut solver = batsat::Solver::new(Default::default(), batsat::callbacks::Basic::default());
    // sel[i][j]: read i observed candidate j; the first guessed.
    let sel: Vec<Vec<Lit>> = reads
        .iter()
        .map(|(_, c)| {
            (0..c.len())
                .map(|j| Lit::new(solver.new_var(lbool::new(j == 0), true), true))
                .collect()
        })
        .collect();
    for s in &sel {
        let mut one = s.clone();
        solver.add_clause_reuse(&mut one);
        for (a, &x) in s.iter().enumerate() {
            for &y in &s[a + 1..] {
                solver.add_clause_reuse(&mut vec![!x, !y]);
            }
        }
    }
    let inc = included(h);
    let so = so_edges(h, &inc);
    // Each transaction's session and place in it: session order is
    // transitive (read atomicity's `SO`, unlike its edges, is not only
    // between neighbours).
    let mut place = vec![(usize::MAX, 0usize); n];
    for (s, sess) in h.sessions.iter().enumerate() {
        for (i, &t) in sess.txns.iter().enumerate() {
            place[t as usize] = (s, i);
        }
    }
    let so_before = |a: TxnId, b: TxnId| {
        let (pa, pb) = (place[a as usize], place[b as usize]);
        pa.0 == pb.0 && pa.0 != usize::MAX && pa.1 < pb.1
    };
    let at: FxHashMap<MopId, usize> = reads.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
    let mut writers: FxHashMap<KeyId, Vec<TxnId>> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if !inc[t] {
            continue;
        }
        for m in &h.mops[txn.mops()] {
            if m.is_write() {
                let ws = writers.entry(m.key).or_default();
                if ws.last() != Some(&(t as TxnId)) {
                    ws.push(t as TxnId);
                }
            }
        }
    }
    // The committed reads, in the history's order: (reader, key, the
    // write observed, or which ambiguous read it is). The same every
    // round; only the ambiguous ones' writers change.
    let slots: Vec<(TxnId, KeyId, Result<u32, usize>)> = h
        .mops
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_read() && inc[m.txn as usize])
        .filter_map(|(i, m)| {
            let src = match at.get(&(i as MopId)) {
                Some(&r) => Err(r),
                None => Ok(outside_from(h, i)?),
            };
            Some((m.txn, m.key, src))
        })
        .collect();
    for _ in 0..ROUNDS {
        if budget::passed(deadline) {
            return Search::Undecided;
        }
        let sat = solver.solve_limited(&[]);
        if sat == lbool::FALSE {
            return Search::Inconsistent;
        }
        if sat != lbool::TRUE {
            return Search::Undecided;
        }
        let pick: Vec<usize> = sel
            .iter()
            .map(|s| {
                s.iter()
                    .position(|&l| solver.value_lit(l) == lbool::TRUE)
                    .unwrap_or(0)
            })
            .collect();
        let lit_of = |i: usize| sel[i][pick[i]];
        // Each committed read: (reader, key, its writer or None for the
        // initial state, its selector).
        let mut obs: Vec<(TxnId, KeyId, Option<TxnId>, Option<Lit>)> = Vec::new();
        for &(t3, k, src) in &slots {
            let (w, lit) = match src {
                Err(r) => (reads[r].1[pick[r]], Some(lit_of(r))),
                Ok(w) => (w, None),
            };
            let writer = match w {
                from::INITIAL => None,
                w if w < from::THIN_AIR => Some(h.txn_of(w)),
                _ => continue,
            };
            if writer != Some(t3) {
                obs.push((t3, k, writer, lit));
            }
        }
        // SO ∪ WR, each edge with the selector it rests on (none beats one).
        let mut why: FxHashMap<(TxnId, TxnId), Vec<Lit>> = FxHashMap::default();
        for &(a, b) in &so {
            why.insert((a, b), Vec::new());
        }
        for &(t3, _, w, lit) in &obs {
            if let Some(t1) = w {
                let e = why
                    .entry((t1, t3))
                    .or_insert_with(|| lit.into_iter().collect());
                if lit.is_none() {
                    e.clear();
                }
            }
        }
        let base_pairs: Vec<(u32, u32)> = why.keys().copied().collect();
        let base = Digraph::from_edges(n, &base_pairs);
        let co = (axiom == Axiom::Causal).then(|| {
            budget::spend((n as u64).div_ceil(64) * n as u64);
            Closure::of(&base)
        });
        budget::spend(base_pairs.len() as u64);
        // Whether a writer `a` comes before a reader `b` (an edge, or a
        // path for causality), and the selectors that rests on.
        let before = |a: TxnId, b: TxnId| match &co {
            Some(co) => co.reaches(a, b),
            None => so_before(a, b) || why.contains_key(&(a, b)),
        };
        let path_why = |a: TxnId, b: TxnId| -> Vec<Lit> {
            if co.is_none() {
                if so_before(a, b) {
                    return Vec::new();
                }
                return why.get(&(a, b)).cloned().unwrap_or_default();
            }
            let p = shortest_path(&base, a, b, |_| true).unwrap_or_default();
            p.windows(2)
                .flat_map(|w| why.get(&(w[0], w[1])).cloned().unwrap_or_default())
                .collect()
        };
        // Every violation of this resolution becomes a clause at once:
        // each read of the initial state with a writer before it, and one
        // cycle per cyclic component of `co` with the derived edges.
        let mut derived: FxHashMap<(TxnId, TxnId), (TxnId, Option<Lit>)> = FxHashMap::default();
        let mut clauses: Vec<Vec<Lit>> = Vec::new();
        for &(t3, k, w, lit) in &obs {
            let ws = writers.get(&k).map_or(&[][..], Vec::as_slice);
            budget::spend(ws.len() as u64);
            for &t2 in ws {
                if Some(t2) == w || t2 == t3 || !before(t2, t3) {
                    continue;
                }
                match w {
                    // A write before the read of the initial state.
                    None => {
                        let mut c = path_why(t2, t3);
                        c.extend(lit);
                        clauses.push(c);
                        break;
                    }
                    Some(t1) => {
                        derived.entry((t2, t1)).or_insert((t3, lit));
                    }
                }
            }
        }
        let mut pairs = base_pairs.clone();
        pairs.extend(derived.keys().copied());
        let g = Digraph::from_edges(n, &pairs);
        let comps = sccs(&g);
        for &c in &comps.cyclic(&g) {
            let inside = |v: u32| comps.comp[v as usize] == c;
            let Some(&(a, b)) = pairs.iter().find(|&&(a, b)| inside(a) && inside(b)) else {
                continue;
            };
            let Some(back) = shortest_path(&g, b, a, inside) else {
                continue;
            };
            budget::spend(back.len() as u64);
            let mut out = Vec::new();
            let edges = std::iter::once((a, b)).chain(back.windows(2).map(|w| (w[0], w[1])));
            // Every edge of `g` is a base or a derived one.
            let grounded = edges
                .into_iter()
                .all(|e| match (why.get(&e), derived.get(&e)) {
                    (Some(l), _) => {
                        out.extend(l);
                        true
                    }
                    (None, Some(&(t3, lit))) => {
                        out.extend(lit);
                        out.extend(path_why(e.0, t3));
                        true
                    }
                    (None, None) => false,
                });
            if grounded {
                clauses.push(out);
            }
        }
        if clauses.is_empty() {
            return Search::Consistent(pick);
        }
        for mut clause in clauses {
            // Rests on no choice: every resolution has it.
            if clause.is_empty() {
                return Search::Inconsistent;
            }
            for l in &mut clause {
                *l = !*l;
            }
            clause.sort_unstable();
            clause.dedup();
            if !solver.add_clause_reuse(&mut clause) {
                return Search::Inconsistent;
            }
        }
    }
    Search::Undecided
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Format, LoadOptions, load_bytes};

    /// x = 1 written twice (T0, then T2 after reading T1's y = 5); T3
    /// reads x = 1 and misses y = 5. Read from T2, T3 sees T2 but not the
    /// y = 5 T2 saw (no causal order explains it); read from T0, nothing is
    /// wrong.
    use crate::check::settle::tests::GUESSED;

    #[test]
    fn the_choice_that_is_causally_consistent_is_found_from_a_wrong_guess() {
        let load = LoadOptions {
            format: Some(Format::DbcopHist),
            ..LoadOptions::default()
        };
        let l = load_bytes("g.hist", GUESSED.as_bytes().to_vec(), load).expect("loads");
        let h = &l.history;
        let (&r, cands) = h.candidates.iter().next().expect("one ambiguous read");
        assert_eq!(h.candidates.len(), 1);
        // The later writer guessed first.
        let mut c = cands.clone();
        c.sort_by_key(|&w| std::cmp::Reverse(h.txn_of(w)));
        let first_writer = h.txn_of(*c.last().expect("two writers"));
        let reads = vec![(r, c.clone())];
        let Search::Consistent(pick) = search(h, &reads, Axiom::Causal, None) else {
            panic!("a witness");
        };
        assert_eq!(h.txn_of(c[pick[0]]), first_writer);
    }

    #[test]
    fn no_choice_is_found_where_every_one_breaks_causality() {
        // Both writers of x = 1 read y = 5, which T3 misses after
        // reading x = 1: no choice explains it.
        let text = "[y:=5]\n[y==5 x:=1]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n";
        let load = LoadOptions {
            format: Some(Format::DbcopHist),
            ..LoadOptions::default()
        };
        let l = load_bytes("g.hist", text.as_bytes().to_vec(), load).expect("loads");
        let h = &l.history;
        let reads: Vec<(MopId, Vec<MopId>)> =
            h.candidates.iter().map(|(&r, c)| (r, c.clone())).collect();
        assert_eq!(reads.len(), 1);
        assert_eq!(search(h, &reads, Axiom::Causal, None), Search::Inconsistent);
    }

    /// On small generated histories with repeated values, against every
    /// resolution of their ambiguous reads decided by the real checker
    /// (causal-cerone or read-atomic, on a history whose every read has
    /// one writer): a pick found holds there, and "inconsistent" exactly
    /// when none does.
    #[test]
    fn agrees_with_every_resolution_checked_by_the_causal_checkers() {
        use crate::spec::Model;
        agrees_at(
            Model::CausalCerone,
            Axiom::Causal,
            &[Db::ReadAtomic, Db::Causal, Db::ReadCommitted],
        );
        agrees_at(
            Model::ReadAtomic,
            Axiom::ReadAtomic,
            &[Db::ReadAtomic, Db::ReadCommitted],
        );
    }

    use crate::generator::Db;

    fn agrees_at(model: crate::spec::Model, axiom: Axiom, dbs: &[Db]) {
        use crate::check::settle::{next_pick, resolved};
        use crate::check::verdict::Valid;
        use crate::check::{CheckOptions, check_plan, plan};
        use crate::generator::{GenOptions, generate};
        let opts = CheckOptions {
            models: vec![model],
            timeout: None,
            anomalies: Vec::new(),
        };
        let p = plan(&opts).expect("a plan");
        let (mut consistent, mut inconsistent) = (0, 0);
        for &db in dbs {
            for seed in 1..=100 {
                let o = GenOptions {
                    sessions: 3,
                    txns_per_session: 4,
                    ops_per_txn: 3,
                    keys: 2,
                    db,
                    seed,
                    repeat_values: 0.6,
                    workload: crate::history::Workload::RwRegister,
                    ..GenOptions::default()
                };
                let g = generate(&o).expect("generated");
                let l = load_bytes("g.edn", g.history, LoadOptions::default()).expect("loads");
                let h = &l.history;
                let reads: Vec<(MopId, Vec<MopId>)> =
                    h.candidates.iter().map(|(&r, c)| (r, c.clone())).collect();
                let total: usize = reads.iter().map(|r| r.1.len()).product();
                if reads.is_empty() || total > 512 {
                    continue;
                }
                let holds = |pick: &[usize]| {
                    check_plan(&resolved(&l, &reads, pick), &opts, &p).valid == Valid::True
                };
                let mut any = false;
                let mut pick = vec![0usize; reads.len()];
                for _ in 0..total {
                    any |= holds(&pick);
                    next_pick(&mut pick, &reads);
                }
                let at = format!("{} seed {seed} at {model:?}", db.name());
                match search(h, &reads, axiom, None) {
                    Search::Consistent(pick) => {
                        assert!(holds(&pick), "{at}: the pick found is violated");
                        consistent += 1;
                    }
                    Search::Inconsistent => {
                        assert!(!any, "{at}: a resolution holds, none was found");
                        inconsistent += 1;
                    }
                    Search::Undecided => panic!("{at}: undecided"),
                }
            }
        }
        assert!(
            consistent > 50 && inconsistent > 20,
            "{consistent} consistent, {inconsistent} inconsistent"
        );
    }
}
