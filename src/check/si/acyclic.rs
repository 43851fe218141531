//! An acyclicity theory for the SAT solver: edges switched on by literals,
//! kept in an incremental topological order (Pearce & Kelly, JEA 2006), so
//! that adding an edge costs only the region of the order it disturbs, and
//! a cycle is found the moment it closes. Its explanation is the set of
//! literals whose edges lie on the cycle. Backtracking removes edges in the
//! reverse order they came, which leaves the order valid.
//!
//! The theory is independent of the solver: [`Acyclic`] works on plain
//! literals, and a thin adapter implements batsat's `Theory`.

use batsat::theory::Theory;
use batsat::{Lit, TheoryArg};

use crate::check::graph::Digraph;

/// Marks an edge that no literal switches (always present).
pub const KNOWN: u32 = u32::MAX;

/// A directed graph with an incremental topological order.
pub struct Order {
    ord: Vec<u32>,
    at: Vec<u32>,
    /// Edges fixed at the start (reason [`KNOWN`], never removed), in
    /// compressed sparse rows: `fixed_out[fixed_out_at[u]..fixed_out_at[u + 1]]`.
    fixed_out_at: Vec<u32>,
    fixed_out: Vec<u32>,
    fixed_in_at: Vec<u32>,
    fixed_in: Vec<u32>,
    out: Vec<Vec<(u32, u32)>>,
    inn: Vec<Vec<(u32, u32)>>,
    mark: Vec<u32>,
    epoch: u32,
    parent: Vec<(u32, u32)>,
    stack: Vec<u32>,
    fwd: Vec<u32>,
    bwd: Vec<u32>,
}

impl Order {
    /// A graph on `n` nodes, ordered by `topo` (every node once).
    pub fn new(n: usize, topo: &[u32]) -> Order {
        let mut ord = vec![0u32; n];
        let mut at = vec![0u32; n];
        for (i, &v) in topo.iter().enumerate() {
            ord[v as usize] = i as u32;
            at[i] = v;
        }
        Order {
            ord,
            at,
            fixed_out_at: vec![0; n + 1],
            fixed_out: Vec::new(),
            fixed_in_at: vec![0; n + 1],
            fixed_in: Vec::new(),
            out: vec![Vec::new(); n],
            inn: vec![Vec::new(); n],
            mark: vec![0; n],
            epoch: 0,
            parent: vec![(0, 0); n],
            stack: Vec::new(),
            fwd: Vec::new(),
            bwd: Vec::new(),
        }
    }

    /// A graph on `n` nodes holding `edges` for good, ordered by `topo`
    /// (every node once); None when the edges close a cycle. The edges
    /// `topo` already orders are laid out at once, without a search.
    pub fn seeded(n: usize, topo: &[u32], edges: &[(u32, u32)]) -> Option<Order> {
        let mut o = Order::new(n, topo);
        let mut back = Vec::new();
        let mut out_at = vec![0u32; n + 1];
        let mut in_at = vec![0u32; n + 1];
        for &(u, v) in edges {
            if o.ord[u as usize] < o.ord[v as usize] {
                out_at[u as usize + 1] += 1;
                in_at[v as usize + 1] += 1;
            }
        }
        for i in 0..n {
            out_at[i + 1] += out_at[i];
            in_at[i + 1] += in_at[i];
        }
        let mut out = vec![0u32; out_at[n] as usize];
        let mut inn = vec![0u32; in_at[n] as usize];
        let (mut fo, mut fi) = (out_at.clone(), in_at.clone());
        for &(u, v) in edges {
            if o.ord[u as usize] < o.ord[v as usize] {
                out[fo[u as usize] as usize] = v;
                fo[u as usize] += 1;
                inn[fi[v as usize] as usize] = u;
                fi[v as usize] += 1;
            } else {
                back.push((u, v));
            }
        }
        o.fixed_out_at = out_at;
        o.fixed_out = out;
        o.fixed_in_at = in_at;
        o.fixed_in = inn;
        for (u, v) in back {
            o.add(u, v, KNOWN).ok()?;
        }
        Some(o)
    }

    /// A graph on `n = g.len()` nodes holding `g`'s edges for good,
    /// ordered by `topo`, a topological order of `g` (every node once).
    pub fn from_graph(g: &Digraph, topo: &[u32]) -> Order {
        let n = g.len();
        let mut o = Order::new(n, topo);
        let (out_at, out) = g.csr();
        let mut in_at = vec![0u32; n + 1];
        for &v in out {
            in_at[v as usize + 1] += 1;
        }
        for i in 0..n {
            in_at[i + 1] += in_at[i];
        }
        let mut fill = in_at.clone();
        let mut inn = vec![0u32; out.len()];
        for u in 0..n as u32 {
            for &v in g.out(u) {
                inn[fill[v as usize] as usize] = u;
                fill[v as usize] += 1;
            }
        }
        o.fixed_out_at = out_at.to_vec();
        o.fixed_out = out.to_vec();
        o.fixed_in_at = in_at;
        o.fixed_in = inn;
        o
    }

    /// Position of each node in the current order.
    pub fn ranks(&self) -> &[u32] {
        &self.ord
    }

    fn bump(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Adds `u -> v` (with a reason tag). On a cycle, returns the reasons
    /// of its edges (the new one last) and leaves the graph unchanged.
    pub fn add(&mut self, u: u32, v: u32, reason: u32) -> Result<(), Vec<u32>> {
        if u == v {
            return Err(vec![reason]);
        }
        let (lb, ub) = (self.ord[v as usize], self.ord[u as usize]);
        if lb < ub {
            // Forward from v within the affected region.
            let e = self.bump();
            self.fwd.clear();
            self.stack.clear();
            self.stack.push(v);
            self.mark[v as usize] = e;
            while let Some(x) = self.stack.pop() {
                self.fwd.push(x);
                let (lo, hi) = (
                    self.fixed_out_at[x as usize] as usize,
                    self.fixed_out_at[x as usize + 1] as usize,
                );
                let fixed = (lo..hi).map(|i| (self.fixed_out[i], KNOWN));
                let k = self.out[x as usize].len();
                for (y, r) in fixed.chain((0..k).map(|i| self.out[x as usize][i])) {
                    if y == u {
                        // Cycle: v ->* x -> u -> v.
                        let mut reasons = vec![r];
                        let mut cur = x;
                        while cur != v {
                            let (p, pr) = self.parent[cur as usize];
                            reasons.push(pr);
                            cur = p;
                        }
                        reasons.push(reason);
                        return Err(reasons);
                    }
                    if self.mark[y as usize] != e && self.ord[y as usize] < ub {
                        self.mark[y as usize] = e;
                        self.parent[y as usize] = (x, r);
                        self.stack.push(y);
                    }
                }
            }
            // Backward from u within the region.
            let e2 = self.bump();
            self.bwd.clear();
            self.stack.clear();
            self.stack.push(u);
            self.mark[u as usize] = e2;
            while let Some(x) = self.stack.pop() {
                self.bwd.push(x);
                let (lo, hi) = (
                    self.fixed_in_at[x as usize] as usize,
                    self.fixed_in_at[x as usize + 1] as usize,
                );
                let k = self.inn[x as usize].len();
                let fixed = (lo..hi).map(|i| self.fixed_in[i]);
                for y in fixed.chain((0..k).map(|i| self.inn[x as usize][i].0)) {
                    if self.mark[y as usize] != e2 && self.ord[y as usize] > lb {
                        self.mark[y as usize] = e2;
                        self.stack.push(y);
                    }
                }
            }
            // Reorder: everything that reaches u, then everything v reaches,
            // into the same positions.
            let ord = &self.ord;
            self.bwd.sort_unstable_by_key(|&x| ord[x as usize]);
            self.fwd.sort_unstable_by_key(|&x| ord[x as usize]);
            let mut slots: Vec<u32> = self
                .bwd
                .iter()
                .chain(self.fwd.iter())
                .map(|&x| self.ord[x as usize])
                .collect();
            slots.sort_unstable();
            for (i, &x) in self.bwd.iter().chain(self.fwd.iter()).enumerate() {
                let p = slots[i];
                self.ord[x as usize] = p;
                self.at[p as usize] = x;
            }
        }
        self.out[u as usize].push((v, reason));
        self.inn[v as usize].push((u, reason));
        Ok(())
    }

    /// Removes the last edge added from `u` to `v`.
    pub fn remove_last(&mut self, u: u32, v: u32) {
        if let Some(i) = self.out[u as usize].iter().rposition(|&(y, _)| y == v) {
            self.out[u as usize].remove(i);
        }
        if let Some(i) = self.inn[v as usize].iter().rposition(|&(y, _)| y == u) {
            self.inn[v as usize].remove(i);
        }
    }
}

/// A group of edges and the literals that must all hold to switch it on.
type Group = (Vec<Lit>, Vec<(u32, u32)>);

/// Edges switched on by conjunctions of literals.
pub struct Acyclic {
    pub order: Order,
    /// Groups of edges: the literals that must all hold, and the edges.
    groups: Vec<Group>,
    /// For each literal (by index), the groups it takes part in.
    watch: Vec<Vec<u32>>,
    /// Active groups, in activation order.
    active: Vec<u32>,
    is_active: Vec<bool>,
    /// Per level: (active groups, model literals seen).
    levels: Vec<(usize, usize)>,
    seen: usize,
    conflict: Vec<Lit>,
    pub conflicts: u64,
}

fn lit_index(l: Lit) -> usize {
    l.idx() as usize
}

impl Acyclic {
    pub fn new(order: Order) -> Acyclic {
        Acyclic {
            order,
            groups: Vec::new(),
            watch: Vec::new(),
            active: Vec::new(),
            is_active: Vec::new(),
            levels: Vec::new(),
            seen: 0,
            conflict: Vec::new(),
            conflicts: 0,
        }
    }

    /// Edges present whenever all of `lits` are true.
    pub fn add_group(&mut self, lits: Vec<Lit>, edges: Vec<(u32, u32)>) {
        let g = self.groups.len() as u32;
        for &l in &lits {
            let i = lit_index(l);
            if self.watch.len() <= i {
                self.watch.resize(i + 1, Vec::new());
            }
            self.watch[i].push(g);
        }
        self.groups.push((lits, edges));
        self.is_active.push(false);
    }

    fn deactivate_to(&mut self, len: usize) {
        while self.active.len() > len {
            let Some(g) = self.active.pop() else { break };
            let edges = std::mem::take(&mut self.groups[g as usize].1);
            for &(u, v) in edges.iter().rev() {
                self.order.remove_last(u, v);
            }
            self.groups[g as usize].1 = edges;
            self.is_active[g as usize] = false;
        }
    }

    /// Takes in newly true literals; on a cycle, returns the conflict
    /// clause (negations of the literals behind the cycle).
    pub fn assert_lits(&mut self, model: &[Lit], value: impl Fn(Lit) -> bool) -> Option<&[Lit]> {
        if self.seen > model.len() {
            self.seen = model.len();
        }
        while self.seen < model.len() {
            let l = model[self.seen];
            self.seen += 1;
            let i = lit_index(l);
            let Some(gs) = self.watch.get(i) else {
                continue;
            };
            for k in 0..gs.len() {
                let g = self.watch[i][k];
                if self.is_active[g as usize]
                    || !self.groups[g as usize].0.iter().all(|&x| value(x))
                {
                    continue;
                }
                // Activate the group's edges one by one.
                let edges = std::mem::take(&mut self.groups[g as usize].1);
                let mut added = 0;
                let mut cycle: Option<Vec<u32>> = None;
                for &(u, v) in &edges {
                    match self.order.add(u, v, g) {
                        Ok(()) => added += 1,
                        Err(r) => {
                            cycle = Some(r);
                            break;
                        }
                    }
                }
                if let Some(reasons) = cycle {
                    for &(u, v) in edges[..added].iter().rev() {
                        self.order.remove_last(u, v);
                    }
                    self.groups[g as usize].1 = edges;
                    self.conflicts += 1;
                    self.conflict.clear();
                    let mut gs: Vec<u32> = reasons.into_iter().filter(|&r| r != KNOWN).collect();
                    gs.sort_unstable();
                    gs.dedup();
                    for r in gs {
                        for &l in &self.groups[r as usize].0 {
                            self.conflict.push(!l);
                        }
                    }
                    self.conflict.sort_unstable();
                    self.conflict.dedup();
                    // Unprocessed literals are looked at again after backtracking.
                    self.seen -= 1;
                    return Some(&self.conflict);
                }
                self.groups[g as usize].1 = edges;
                self.is_active[g as usize] = true;
                self.active.push(g);
            }
        }
        None
    }

    pub fn push_level(&mut self) {
        self.levels.push((self.active.len(), self.seen));
    }

    pub fn pop_levels(&mut self, n: usize) {
        let mut target = None;
        for _ in 0..n {
            target = self.levels.pop();
        }
        if let Some((active, seen)) = target {
            self.deactivate_to(active);
            self.seen = seen;
        }
    }
}

/// batsat adapter.
pub struct Th<'a>(pub &'a mut Acyclic);

impl Th<'_> {
    fn check(&mut self, acts: &mut TheoryArg) {
        let conflict = {
            let args: &TheoryArg = acts;
            let value = |l: Lit| (args.value(l.var()) ^ !l.sign()) == batsat::lbool::TRUE;
            self.0.assert_lits(args.model(), value).map(|c| c.to_vec())
        };
        if let Some(c) = conflict
            && !c.is_empty()
        {
            acts.raise_conflict(&c, true);
        }
    }
}

impl Theory for Th<'_> {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
    }

    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
    }

    fn create_level(&mut self) {
        self.0.push_level();
    }

    fn pop_levels(&mut self, n: usize) {
        self.0.pop_levels(n);
    }

    fn n_levels(&self) -> usize {
        self.0.levels.len()
    }

    fn explain_propagation(&mut self, _p: Lit) -> &[Lit] {
        // This theory raises conflicts but never propagates.
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_detects_cycles_and_backtracks() {
        let mut o = Order::new(4, &[0, 1, 2, 3]);
        assert!(o.add(0, 1, KNOWN).is_ok());
        assert!(o.add(1, 2, 7).is_ok());
        // Backward edge without a cycle: reorders.
        assert!(o.add(3, 0, 8).is_ok());
        assert!(o.ord[3] < o.ord[0]);
        // Closing 0 -> 1 -> 2 -> 3 -> 0.
        let cyc = o.add(2, 3, 9).unwrap_err();
        let mut c = cyc.clone();
        c.sort_unstable();
        assert_eq!(c, vec![7, 8, 9, KNOWN]);
        o.remove_last(3, 0);
        assert!(o.add(2, 3, 9).is_ok());
    }
}
