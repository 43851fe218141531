//! A resolution of the ambiguous reads of repeated register values under
//! which the history is causally consistent, searched for by SAT over the
//! reads' choices of writer (lazy clause generation). The causal checkers
//! read one guessed writer per read (`settle`); this finds the choice
//! that makes them hold, where a local search from the guess is stuck.
//!
//! Theory (Biswas & Enea, OOPSLA'19, §2, causal consistency): with every
//! read's writer fixed, let `co = (SO ∪ WR)+`. The history is causally
//! consistent iff `co ∪ {t2 -> t1 : t3 reads x from t1, t2 != t1 writes x,
//! t2 co t3}` is acyclic, and no read of the initial state of `x` has a
//! writer of `x` before it in `co`. Each edge of a cycle of that graph
//! rests on the choices of the ambiguous reads along it (a write-read
//! step's own, and a derived edge's read and the `co` path it rests on),
//! so "not all of those choices" is a clause every causally consistent
//! resolution satisfies.
//!
//! Data flow: one selector per (read, candidate writer), exactly one per
//! read, each read's likeliest writer guessed first -> solve -> the
//! resolution's graph (closure of `SO ∪ WR`, derived edges) -> a cycle
//! becomes a clause, again; no cycle: the resolution, which the caller
//! checks with the real checkers (it is a witness only if they agree).
//! No solution, or past [`ROUNDS`] or [`MAX_TXNS`]: nothing found, which
//! proves nothing (the caller's answer stays unknown).

use batsat::interface::SolverInterface;
use batsat::{Lit, lbool};
use rustc_hash::FxHashMap;

use super::budget;
use super::deps::{included, outside_from, so_edges};
use super::graph::{Closure, Digraph, sccs, shortest_path};
use super::tuning::{CC_WITNESS_MAX_TXNS as MAX_TXNS, CC_WITNESS_ROUNDS as ROUNDS};
use crate::history::model::{History, KeyId, MopId, TxnId, from};

/// The pick (an index into each read's candidates, as `reads` lists them)
/// of a causally consistent resolution, if one is found.
pub fn search(h: &History, reads: &[(MopId, Vec<MopId>)]) -> Option<Vec<usize>> {
    let n = h.txns.len();
    if n > MAX_TXNS || reads.is_empty() {
        return None;
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
        if solver.solve_limited(&[]) != lbool::TRUE {
            return None;
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
        let co = Closure::of(&base);
        budget::spend((n as u64).div_ceil(64) * n as u64 + base_pairs.len() as u64);
        // The selectors a co path a ->+ b rests on.
        let path_why = |a: TxnId, b: TxnId| -> Vec<Lit> {
            let p = shortest_path(&base, a, b, |_| true).unwrap_or_default();
            p.windows(2)
                .flat_map(|w| why.get(&(w[0], w[1])).cloned().unwrap_or_default())
                .collect()
        };
        let mut derived: FxHashMap<(TxnId, TxnId), (TxnId, Option<Lit>)> = FxHashMap::default();
        let mut clause: Option<Vec<Lit>> = None;
        'reads: for &(t3, k, w, lit) in &obs {
            let ws = writers.get(&k).map_or(&[][..], Vec::as_slice);
            budget::spend(ws.len() as u64);
            for &t2 in ws {
                if Some(t2) == w || t2 == t3 || !co.reaches(t2, t3) {
                    continue;
                }
                match w {
                    // A write before the read of the initial state.
                    None => {
                        let mut c = path_why(t2, t3);
                        c.extend(lit);
                        clause = Some(c);
                        break 'reads;
                    }
                    Some(t1) => {
                        derived.entry((t2, t1)).or_insert((t3, lit));
                    }
                }
            }
        }
        let clause = clause.or_else(|| {
            let mut pairs = base_pairs.clone();
            pairs.extend(derived.keys().copied());
            let g = Digraph::from_edges(n, &pairs);
            let comps = sccs(&g);
            let &c = comps.cyclic(&g).first()?;
            let inside = |v: u32| comps.comp[v as usize] == c;
            let &(a, b) = pairs.iter().find(|&&(a, b)| inside(a) && inside(b))?;
            let back = shortest_path(&g, b, a, inside)?;
            let mut out = Vec::new();
            for e in std::iter::once((a, b)).chain(back.windows(2).map(|w| (w[0], w[1]))) {
                match why.get(&e) {
                    Some(l) => out.extend(l),
                    None => {
                        let &(t3, lit) = derived.get(&e)?;
                        out.extend(lit);
                        out.extend(path_why(e.0, t3));
                    }
                }
            }
            Some(out)
        });
        let Some(mut clause) = clause else {
            return Some(pick);
        };
        // Rests on no choice: every resolution has it.
        if clause.is_empty() {
            return None;
        }
        for l in &mut clause {
            *l = !*l;
        }
        clause.sort_unstable();
        clause.dedup();
        if !solver.add_clause_reuse(&mut clause) {
            return None;
        }
    }
    None
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
        let pick = search(h, &reads).expect("a witness");
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
        assert_eq!(search(h, &reads), None);
    }
}
