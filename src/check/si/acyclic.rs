//! An acyclicity theory for the SAT solver: edges switched on by literals,
//! kept in an incremental topological order (Pearce & Kelly, JEA 2006), so
//! that adding an edge costs only the region of the order it disturbs, and
//! a cycle is found the moment it closes. Its explanation is the set of
//! literals whose edges lie on the cycle. Backtracking removes edges in the
//! reverse order they came, which leaves the order valid.
//!
//! Data flow: each group of edges watches one of its literals that is not
//! (yet seen) true; when that one turns true the group moves its watch to
//! another, or, having none left, switches its edges on (a cycle is a
//! conflict). Optionally ([`Acyclic::budget`]), a switched-on group's new
//! edges are followed by bounded walks that propagate false the literal
//! of any group one literal short of switching on whose edge would close
//! a cycle, with the cycle's literals as the reason. The walks' hits are
//! looked for among the edges into what the backward walk reached, of
//! the groups still live (none of their literals false, not on); groups
//! leave that set as they switch on or a literal turns false and come
//! back on backtracking, so the scan shrinks as the search goes deeper.
//! Propagation may start late ([`Acyclic::after`]): on easy searches it
//! costs more than the conflicts it spares.
//!
//! The theory is independent of the solver: [`Acyclic`] works on plain
//! literals, and a thin adapter implements batsat's `Theory`.

use batsat::theory::Theory;
use batsat::{Lit, TheoryArg, lbool};

use crate::check::budget::spend;
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
        // Edges the searches scan, counted as work.
        let mut scanned = 0u64;
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
                scanned += (hi - lo + k) as u64;
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
                        spend(scanned + 1);
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
                scanned += (hi - lo + k) as u64;
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
            spend(scanned + (self.fwd.len() + self.bwd.len()) as u64);
        }
        spend(1);
        self.out[u as usize].push((v, reason));
        self.inn[v as usize].push((u, reason));
        Ok(())
    }

    /// Removes the last edge added from `u` to `v`.
    pub fn remove_last(&mut self, u: u32, v: u32) {
        spend(1);
        if let Some(i) = self.out[u as usize].iter().rposition(|&(y, _)| y == v) {
            self.out[u as usize].remove(i);
        }
        if let Some(i) = self.inn[v as usize].iter().rposition(|&(y, _)| y == u) {
            self.inn[v as usize].remove(i);
        }
    }
}

/// A reason tag that names no edge: a walk's starting node has no parent.
const START: u32 = u32::MAX - 1;

/// The group edges by head node, each row split into a live prefix (edges
/// of groups that may still switch on: none of their literals is false
/// and they are not on) and the rest. A group leaves (all its edges move
/// out of the live prefixes) when it switches on or one of its literals
/// turns false, and comes back, in reverse order, on backtracking, so a
/// propagation scans only the edges that can still matter.
struct Live {
    /// Row `v` is `items[at[v]..at[v + 1]]`, its live prefix
    /// `items[at[v]..at[v] + live[v]]`.
    at: Vec<u32>,
    live: Vec<u32>,
    /// `(tail, group, edge index)`.
    items: Vec<(u32, u32, u32)>,
    /// Each group edge's place in `items`.
    pos: Vec<u32>,
    /// Per group: whether it has left.
    gone: Vec<bool>,
    /// Groups that left, in order.
    log: Vec<u32>,
    /// For each literal (by index), the groups holding it.
    occ: Vec<Vec<u32>>,
}

/// The nodes a bounded breadth-first walk of an [`Order`] reached, each
/// with the node it came from and the reason of the edge it came by.
pub struct Walk {
    mark: Vec<u32>,
    epoch: u32,
    parent: Vec<(u32, u32)>,
    /// Nodes reached, in the order reached (the starting nodes first).
    pub reached: Vec<u32>,
}

impl Walk {
    /// A walk over `n` nodes, reaching none yet.
    pub fn new(n: usize) -> Walk {
        Walk {
            mark: vec![0; n],
            epoch: 0,
            parent: vec![(0, START); n],
            reached: Vec::new(),
        }
    }

    fn restart(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        self.reached.clear();
    }

    /// Whether the last walk reached `x`.
    #[inline]
    pub fn has(&self, x: u32) -> bool {
        self.mark[x as usize] == self.epoch
    }

    fn reach(&mut self, x: u32, from: u32, reason: u32) {
        self.mark[x as usize] = self.epoch;
        self.parent[x as usize] = (from, reason);
        self.reached.push(x);
    }

    /// The reasons of the edges on the walk's path to `x` (which it
    /// reached), into `out`.
    pub fn path(&self, mut x: u32, out: &mut Vec<u32>) {
        loop {
            let (p, r) = self.parent[x as usize];
            if r == START {
                return;
            }
            out.push(r);
            x = p;
        }
    }
}

impl Order {
    /// Walks breadth-first from `sources`, along edges (`forward`) or
    /// against them, until `budget` nodes are reached: `w` then holds the
    /// nodes reached (nearest first) and the path to each.
    pub fn walk(&self, sources: &[u32], forward: bool, budget: usize, w: &mut Walk) {
        w.restart();
        for &s in sources {
            if !w.has(s) {
                w.reach(s, s, START);
            }
        }
        let (at, fixed, dynamic) = if forward {
            (&self.fixed_out_at, &self.fixed_out, &self.out)
        } else {
            (&self.fixed_in_at, &self.fixed_in, &self.inn)
        };
        let mut head = 0;
        while head < w.reached.len() && w.reached.len() < budget {
            let x = w.reached[head];
            head += 1;
            let (lo, hi) = (at[x as usize] as usize, at[x as usize + 1] as usize);
            for &y in &fixed[lo..hi] {
                if !w.has(y) {
                    w.reach(y, x, KNOWN);
                }
            }
            for &(y, r) in &dynamic[x as usize] {
                if w.reached.len() >= budget {
                    break;
                }
                if !w.has(y) {
                    w.reach(y, x, r);
                }
            }
        }
        spend(w.reached.len() as u64);
    }
}

/// Edges switched on by conjunctions of literals (groups), kept acyclic:
/// a group whose literals all hold adds its edges to the [`Order`], and a
/// cycle is a conflict whose clause negates the literals of the groups on
/// it.
///
/// Propagation: once a group's edges are in, a bounded walk forward from
/// each new edge's head and backward from its tail finds the groups
/// waiting on one literal whose edges would close a cycle through it; that
/// literal is propagated false, the cycle's groups its reason.
/// Each group watches one literal that is not (yet seen) true; when it
/// turns true the group moves its watch to another, or, having none,
/// switches on.
pub struct Acyclic {
    /// The graph: known edges and those of the groups switched on.
    pub order: Order,
    /// Group `g`'s literals are `lits[lit_at[g]..lit_at[g + 1]]`.
    lit_at: Vec<u32>,
    lits: Vec<Lit>,
    /// Group `g`'s edges are `edges[edge_at[g]..edge_at[g + 1]]`.
    edge_at: Vec<u32>,
    edges: Vec<(u32, u32)>,
    /// For each literal (by index), the groups watching it.
    watch: Vec<Vec<u32>>,
    /// Active groups, in activation order.
    active: Vec<u32>,
    is_active: Vec<bool>,
    /// Per level: (active groups, model literals seen, groups gone).
    levels: Vec<(usize, usize, usize)>,
    seen: usize,
    conflict: Vec<Lit>,
    /// Cycles found (conflicts raised).
    pub conflicts: u64,
    /// Nodes each propagation walk may reach; 0 (the default) switches
    /// propagation off. Measured on VeriStrong's 10k-transaction
    /// histories at serializability (one run each, shared machine), with
    /// propagation from the start and the scan over live groups only:
    /// write-heavy 1,110 -> 756 conflicts but 0.86 -> 7.4 s CPU,
    /// blind-write 0.41 -> 3.0 s; the walks and the scan cost more than
    /// the conflicts they spare there, hence [`Acyclic::after`].
    pub budget: usize,
    /// Conflicts before propagation starts (at the next return to level
    /// 0, a restart): searches that end sooner pay nothing for it.
    pub after: u64,
    /// Literals propagated.
    pub propagations: u64,
    /// Live group edges by head, built when propagation starts.
    into: Option<Live>,
    fwd: Walk,
    bwd: Walk,
    /// Propagations found in the last check: literal, reason.
    found: Vec<(Lit, Vec<Lit>)>,
    /// Per variable: the check that last proposed it (no duplicates).
    proposed: Vec<u32>,
    stamp: u32,
    /// Per variable: the reason of its propagated literal.
    why: Vec<Vec<Lit>>,
    /// Per variable: whether a cycle (a conflict or a propagation's
    /// reason) has named it ([`Acyclic::named`]).
    named: Vec<bool>,
    scratch: Vec<u32>,
}

impl Acyclic {
    /// A theory over `order`'s graph, with no groups yet.
    pub fn new(order: Order) -> Acyclic {
        let n = order.ord.len();
        Acyclic {
            order,
            lit_at: vec![0],
            lits: Vec::new(),
            edge_at: vec![0],
            edges: Vec::new(),
            watch: Vec::new(),
            active: Vec::new(),
            is_active: Vec::new(),
            levels: Vec::new(),
            seen: 0,
            conflict: Vec::new(),
            conflicts: 0,
            budget: 0,
            after: 0,
            propagations: 0,
            into: None,
            fwd: Walk::new(n),
            bwd: Walk::new(n),
            found: Vec::new(),
            proposed: Vec::new(),
            stamp: 0,
            why: Vec::new(),
            named: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Edges present whenever all of `lits` (at least one; a group
    /// without literals is ignored) are true.
    pub fn add_group(&mut self, lits: Vec<Lit>, edges: Vec<(u32, u32)>) {
        let g = self.is_active.len() as u32;
        let Some(&first) = lits.first() else {
            return;
        };
        let i = lit_index(first);
        if self.watch.len() <= i {
            self.watch.resize(i + 1, Vec::new());
        }
        self.watch[i].push(g);
        self.lits.extend_from_slice(&lits);
        self.lit_at.push(self.lits.len() as u32);
        self.edges.extend_from_slice(&edges);
        self.edge_at.push(self.edges.len() as u32);
        self.is_active.push(false);
        self.into = None;
    }

    fn group_lits(&self, g: u32) -> &[Lit] {
        &self.lits[self.lit_at[g as usize] as usize..self.lit_at[g as usize + 1] as usize]
    }

    fn group_edges(&self, g: u32) -> std::ops::Range<usize> {
        self.edge_at[g as usize] as usize..self.edge_at[g as usize + 1] as usize
    }

    fn deactivate_to(&mut self, len: usize) {
        while self.active.len() > len {
            let Some(g) = self.active.pop() else { break };
            for i in self.group_edges(g).rev() {
                let (u, v) = self.edges[i];
                self.order.remove_last(u, v);
            }
            self.is_active[g as usize] = false;
        }
    }

    /// Adds group `g`'s edges; on a cycle, leaves the graph as it was and
    /// sets the conflict clause.
    fn activate(&mut self, g: u32) -> bool {
        let range = self.group_edges(g);
        for i in range.clone() {
            let (u, v) = self.edges[i];
            if let Err(reasons) = self.order.add(u, v, g) {
                for k in (range.start..i).rev() {
                    let (u, v) = self.edges[k];
                    self.order.remove_last(u, v);
                }
                self.conflicts += 1;
                self.conflict.clear();
                let mut gs: Vec<u32> = reasons.into_iter().filter(|&r| r != KNOWN).collect();
                gs.sort_unstable();
                gs.dedup();
                for r in gs {
                    let ls = &self.lits
                        [self.lit_at[r as usize] as usize..self.lit_at[r as usize + 1] as usize];
                    self.conflict.extend(ls.iter().map(|&l| !l));
                }
                self.conflict.sort_unstable();
                self.conflict.dedup();
                name(&mut self.named, &self.conflict);
                return false;
            }
        }
        self.is_active[g as usize] = true;
        self.active.push(g);
        if let Some(mut into) = self.into.take() {
            self.leave(&mut into, g);
            self.into = Some(into);
        }
        true
    }

    /// Takes in newly true literals; on a cycle, returns the conflict
    /// clause (negations of the literals behind the cycle). Propagations
    /// found are left in [`Acyclic::found`].
    pub fn assert_lits(&mut self, model: &[Lit], value: impl Fn(Lit) -> lbool) -> Option<&[Lit]> {
        self.found.clear();
        self.stamp = self.stamp.wrapping_add(1);
        if self.seen > model.len() {
            self.seen = model.len();
        }
        // Propagation starts at level 0 once `after` conflicts are in:
        // what is false or on there stays so.
        if self.budget > 0
            && self.into.is_none()
            && self.conflicts >= self.after
            && self.levels.is_empty()
        {
            self.build_into();
            for &l in &model[..self.seen] {
                self.leave_false(!l);
            }
        }
        while self.seen < model.len() {
            let l = model[self.seen];
            self.seen += 1;
            self.leave_false(!l);
            let i = lit_index(l);
            if i >= self.watch.len() || self.watch[i].is_empty() {
                continue;
            }
            let mut ws = std::mem::take(&mut self.watch[i]);
            let mut keep = 0;
            let mut k = 0;
            let mut failed = false;
            spend(ws.len() as u64);
            while k < ws.len() {
                let g = ws[k];
                k += 1;
                if !self.is_active[g as usize] {
                    let other = self
                        .group_lits(g)
                        .iter()
                        .copied()
                        .find(|&x| x != l && value(x) != lbool::TRUE);
                    if let Some(o) = other {
                        let oi = lit_index(o);
                        if self.watch.len() <= oi {
                            self.watch.resize(oi + 1, Vec::new());
                        }
                        self.watch[oi].push(g);
                        continue;
                    }
                    if !self.activate(g) {
                        failed = true;
                    } else if self.into.is_some() {
                        self.propagate_from(g, &value);
                    }
                }
                ws[keep] = g;
                keep += 1;
                if failed {
                    break;
                }
            }
            if failed {
                // Keep the watches not looked at.
                while k < ws.len() {
                    ws[keep] = ws[k];
                    keep += 1;
                    k += 1;
                }
            }
            ws.truncate(keep);
            self.watch[i] = ws;
            if failed {
                // Unprocessed literals are looked at again after backtracking.
                self.seen -= 1;
                self.found.clear();
                return Some(&self.conflict);
            }
        }
        None
    }

    /// Group edges by head, built once all groups are in.
    fn build_into(&mut self) {
        let n = self.order.ord.len();
        let groups = self.is_active.len();
        let mut pairs = Vec::with_capacity(self.edges.len());
        let mut occ: Vec<Vec<u32>> = vec![Vec::new(); self.watch.len()];
        for g in 0..groups as u32 {
            for i in self.group_edges(g) {
                let (u, v) = self.edges[i];
                pairs.push((v, (u, g, i as u32)));
            }
            for &l in self.group_lits(g) {
                let i = lit_index(l);
                if occ.len() <= i {
                    occ.resize(i + 1, Vec::new());
                }
                occ[i].push(g);
            }
        }
        let (at, items) = crate::check::graph::group(n, &pairs);
        let mut pos = vec![0u32; self.edges.len()];
        for (k, &(_, _, i)) in items.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        let live = (0..n).map(|v| at[v + 1] - at[v]).collect();
        let mut into = Live {
            at,
            live,
            items,
            pos,
            gone: vec![false; groups],
            log: Vec::new(),
            occ,
        };
        // Groups already on (at level 0) leave at once.
        for &g in &self.active {
            self.leave(&mut into, g);
        }
        self.into = Some(into);
    }

    /// Group `g`'s edges leave the live prefixes (unless gone already).
    fn leave(&self, into: &mut Live, g: u32) {
        if into.gone[g as usize] {
            return;
        }
        into.gone[g as usize] = true;
        into.log.push(g);
        spend(self.group_edges(g).len() as u64);
        for i in self.group_edges(g) {
            let v = self.edges[i].1 as usize;
            let k = into.pos[i] as usize;
            let last = (into.at[v] + into.live[v] - 1) as usize;
            into.items.swap(k, last);
            into.pos[into.items[k].2 as usize] = k as u32;
            into.pos[i] = last as u32;
            into.live[v] -= 1;
        }
    }

    /// Brings back the groups that left after the log had `len` entries.
    fn come_back_to(&mut self, len: usize) {
        let Some(into) = self.into.as_mut() else {
            return;
        };
        while into.log.len() > len {
            let Some(g) = into.log.pop() else { break };
            into.gone[g as usize] = false;
            let range = self.edge_at[g as usize] as usize..self.edge_at[g as usize + 1] as usize;
            spend(range.len() as u64);
            for i in range.rev() {
                into.live[self.edges[i].1 as usize] += 1;
            }
        }
    }

    /// Groups holding `q`, now false, leave.
    fn leave_false(&mut self, q: Lit) {
        let Some(mut into) = self.into.take() else {
            return;
        };
        let i = lit_index(q);
        if i < into.occ.len() {
            let gs = std::mem::take(&mut into.occ[i]);
            for &g in &gs {
                self.leave(&mut into, g);
            }
            into.occ[i] = gs;
        }
        self.into = Some(into);
    }

    /// After group `g` switched on: the groups one literal away from
    /// switching on whose edges would close a cycle through one of `g`'s.
    fn propagate_from(&mut self, g: u32, value: &impl Fn(Lit) -> lbool) {
        let range = self.group_edges(g);
        // One pair of walks per head: forward from it, backward from
        // every tail of an edge into it.
        let mut heads = std::mem::take(&mut self.scratch);
        heads.clear();
        heads.extend(self.edges[range.clone()].iter().map(|&(_, v)| v));
        heads.sort_unstable();
        heads.dedup();
        let mut tails = Vec::new();
        for &v in &heads {
            tails.clear();
            tails.extend(
                self.edges[range.clone()]
                    .iter()
                    .filter(|&&(_, h)| h == v)
                    .map(|&(u, _)| u),
            );
            self.order.walk(&[v], true, self.budget, &mut self.fwd);
            self.order.walk(&tails, false, self.budget, &mut self.bwd);
            let Some(into) = &self.into else { return };
            for &y in &self.bwd.reached {
                let lo = into.at[y as usize] as usize;
                let hi = lo + into.live[y as usize] as usize;
                spend((hi - lo) as u64);
                for &(x, g2, _) in &into.items[lo..hi] {
                    if !self.fwd.has(x) || self.is_active[g2 as usize] {
                        continue;
                    }
                    // Exactly one literal not true, and it unassigned.
                    let ls = &self.lits
                        [self.lit_at[g2 as usize] as usize..self.lit_at[g2 as usize + 1] as usize];
                    let mut open = None;
                    let mut unit = true;
                    for &q in ls {
                        let vq = value(q);
                        if vq == lbool::TRUE {
                            continue;
                        }
                        if vq == lbool::FALSE || open.is_some() {
                            unit = false;
                            break;
                        }
                        open = Some(q);
                    }
                    let (true, Some(q)) = (unit, open) else {
                        continue;
                    };
                    let var = q.var().idx() as usize;
                    if self.proposed.len() <= var {
                        self.proposed.resize(var + 1, 0);
                    }
                    if self.proposed[var] == self.stamp {
                        continue;
                    }
                    self.proposed[var] = self.stamp;
                    // Reason: the groups on the cycle x -> y ->* tail ->
                    // v ->* x, and g2's other literals.
                    let mut gs = vec![g];
                    self.fwd.path(x, &mut gs);
                    self.bwd.path(y, &mut gs);
                    gs.retain(|&r| r != KNOWN);
                    gs.sort_unstable();
                    gs.dedup();
                    let mut why: Vec<Lit> = ls.iter().copied().filter(|&p| p != q).collect();
                    for r in gs {
                        why.extend_from_slice(
                            &self.lits[self.lit_at[r as usize] as usize
                                ..self.lit_at[r as usize + 1] as usize],
                        );
                    }
                    why.sort_unstable();
                    why.dedup();
                    self.found.push((!q, why));
                }
            }
        }
        self.scratch = heads;
    }

    /// Records why `p` is propagated (for [`Theory::explain_propagation`]).
    fn set_why(&mut self, p: Lit, why: Vec<Lit>) {
        let var = p.var().idx() as usize;
        if self.why.len() <= var {
            self.why.resize(var + 1, Vec::new());
        }
        name(&mut self.named, &why);
        name(&mut self.named, &[p]);
        self.why[var] = why;
    }

    /// Whether a cycle the theory found (a conflict, or a propagation's
    /// reason) named `l`'s variable. Every clause the solver learns from
    /// the theory is over named variables, so when it answers unsat the
    /// groups of named literals (with the clauses over them) have no
    /// solution either: an unsatisfiable subset, found at no cost, though
    /// not a minimal one.
    pub fn named(&self, l: Lit) -> bool {
        self.named
            .get(l.var().idx() as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Opens a backtracking level.
    pub fn push_level(&mut self) {
        let log = self.into.as_ref().map_or(0, |i| i.log.len());
        self.levels.push((self.active.len(), self.seen, log));
    }

    /// Closes `n` levels, switching off the groups switched on in them.
    pub fn pop_levels(&mut self, n: usize) {
        let mut target = None;
        for _ in 0..n {
            target = self.levels.pop();
        }
        if let Some((active, seen, log)) = target {
            self.deactivate_to(active);
            self.come_back_to(log);
            self.seen = seen;
        }
    }
}

/// Marks `lits`' variables in `named` ([`Acyclic::named`]).
fn name(named: &mut Vec<bool>, lits: &[Lit]) {
    for l in lits {
        let var = l.var().idx() as usize;
        if named.len() <= var {
            named.resize(var + 1, false);
        }
        named[var] = true;
    }
}

fn lit_index(l: Lit) -> usize {
    l.idx() as usize
}

/// batsat adapter.
pub struct Th<'a>(pub &'a mut Acyclic);

impl Th<'_> {
    fn check(&mut self, acts: &mut TheoryArg) {
        let conflict = {
            let args: &TheoryArg = acts;
            let value = |l: Lit| args.value(l.var()) ^ !l.sign();
            self.0.assert_lits(args.model(), value).map(|c| c.to_vec())
        };
        if let Some(c) = conflict {
            if !c.is_empty() {
                acts.raise_conflict(&c, true);
            }
            return;
        }
        let found = std::mem::take(&mut self.0.found);
        for (p, why) in found {
            let v = acts.value(p.var()) ^ !p.sign();
            if v == lbool::TRUE {
                continue;
            }
            self.0.set_why(p, why);
            self.0.propagations += 1;
            if !acts.propagate(p) {
                break;
            }
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

    fn explain_propagation(&mut self, p: Lit) -> &[Lit] {
        self.0
            .why
            .get(p.var().idx() as usize)
            .map_or(&[], |w| w.as_slice())
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

    /// A group by literal numbers, and its edges.
    type TestGroup = (Vec<usize>, Vec<(u32, u32)>);

    /// Solves groups over `n` nodes ordered 0..n with the known `edges`,
    /// under `assume`; the model's values of `lits`, and propagations.
    fn solve_groups(
        n: usize,
        edges: &[(u32, u32)],
        groups: &[TestGroup],
        vars: usize,
        assume: &[(usize, bool)],
        budget: usize,
    ) -> (Option<Vec<bool>>, u64) {
        use batsat::interface::SolverInterface;
        let topo: Vec<u32> = (0..n as u32).collect();
        let order = Order::seeded(n, &topo, edges).expect("acyclic");
        let mut th = Acyclic::new(order);
        th.budget = budget;
        let mut solver =
            batsat::Solver::new(Default::default(), batsat::callbacks::Basic::default());
        let lits: Vec<Lit> = (0..vars)
            .map(|_| Lit::new(solver.new_var_default(), true))
            .collect();
        for (ls, es) in groups {
            th.add_group(ls.iter().map(|&i| lits[i]).collect(), es.clone());
        }
        let assumptions: Vec<Lit> = assume
            .iter()
            .map(|&(i, b)| if b { lits[i] } else { !lits[i] })
            .collect();
        let r = solver.solve_limited_th(&mut Th(&mut th), &assumptions);
        let model = (r == lbool::TRUE).then(|| {
            lits.iter()
                .map(|&l| solver.value_var(l.var()) ^ !l.sign() == lbool::TRUE)
                .collect()
        });
        (model, th.propagations)
    }

    #[test]
    fn groups_switch_on_when_all_their_literals_hold() {
        // 0 -> 1 known; x0: 1 -> 2; x1 and x2 together: 2 -> 0.
        let groups = vec![(vec![0], vec![(1, 2)]), (vec![1, 2], vec![(2, 0)])];
        for budget in [0, 8] {
            let (m, _) = solve_groups(3, &[(0, 1)], &groups, 3, &[(0, true), (1, true)], budget);
            // x2 must be false: with it the cycle 0 -> 1 -> 2 -> 0 closes.
            assert!(!m.expect("satisfiable")[2], "budget {budget}");
            let all = [(0, true), (1, true), (2, true)];
            let (m, _) = solve_groups(3, &[(0, 1)], &groups, 3, &all, budget);
            assert!(m.is_none(), "budget {budget}");
        }
    }

    #[test]
    fn propagation_skips_groups_gone_and_finds_them_again_after_backtracking() {
        use batsat::interface::SolverInterface;
        // Known 0 -> 1; x0: 1 -> 2; x1: 2 -> 0; x2 and x1 together: 2 -> 0.
        let order = Order::seeded(3, &[0, 1, 2], &[(0, 1)]).expect("acyclic");
        let mut th = Acyclic::new(order);
        th.budget = 8;
        let mut solver =
            batsat::Solver::new(Default::default(), batsat::callbacks::Basic::default());
        let x: Vec<Lit> = (0..3)
            .map(|_| Lit::new(solver.new_var_default(), true))
            .collect();
        th.add_group(vec![x[0]], vec![(1, 2)]);
        th.add_group(vec![x[1]], vec![(2, 0)]);
        th.add_group(vec![x[1], x[2]], vec![(2, 0)]);
        // Values as a trail gives them.
        let value = |trail: &[Lit]| {
            let trail = trail.to_vec();
            move |l: Lit| {
                if trail.contains(&l) {
                    lbool::TRUE
                } else if trail.contains(&!l) {
                    lbool::FALSE
                } else {
                    lbool::UNDEF
                }
            }
        };
        let proposed = |th: &Acyclic| -> Vec<Lit> {
            let mut ps: Vec<Lit> = th.found.iter().map(|(p, _)| *p).collect();
            ps.sort_unstable();
            ps
        };
        // Propagation starts at level 0.
        assert!(th.assert_lits(&[], value(&[])).is_none());
        // x0 on: x1 would close 0 -> 1 -> 2 -> 0 (the group of x1 and x2
        // is two literals short: nothing to say of it).
        th.push_level();
        let trail = [x[0]];
        assert!(th.assert_lits(&trail, value(&trail)).is_none());
        assert_eq!(proposed(&th), vec![!x[1]]);
        let (_, why) = &th.found[0];
        assert_eq!(why, &vec![x[0]]);
        // Backtrack; x1 false first, then x0: the groups holding x1 are
        // gone, nothing to propagate.
        th.pop_levels(1);
        th.push_level();
        let trail = [!x[1], x[0]];
        assert!(th.assert_lits(&trail, value(&trail)).is_none());
        assert!(proposed(&th).is_empty());
        // Backtrack again; x2 true, then x0: both groups of x1 are back,
        // and each is one literal (x1) short.
        th.pop_levels(1);
        th.push_level();
        let trail = [x[2], x[0]];
        assert!(th.assert_lits(&trail, value(&trail)).is_none());
        assert_eq!(proposed(&th), vec![!x[1]]);
    }

    #[test]
    fn propagation_turns_off_the_edge_that_would_close_a_cycle() {
        // Known 0 -> 1; x0: 1 -> 2. Once x0 holds, x1 (2 -> 0) would
        // close a cycle: propagated false, with x0 as the reason.
        let groups = vec![(vec![0], vec![(1, 2)]), (vec![1], vec![(2, 0)])];
        let (m, props) = solve_groups(3, &[(0, 1)], &groups, 2, &[(0, true)], 8);
        assert_eq!(m.expect("satisfiable"), vec![true, false]);
        assert!(props >= 1);
        let (m, props) = solve_groups(3, &[(0, 1)], &groups, 2, &[(0, true)], 0);
        assert_eq!(m.expect("satisfiable"), vec![true, false]);
        assert_eq!(props, 0);
        // Both forced: unsatisfiable either way.
        for budget in [0, 8] {
            let (m, _) = solve_groups(3, &[(0, 1)], &groups, 2, &[(0, true), (1, true)], budget);
            assert!(m.is_none());
        }
    }

    #[test]
    fn an_unsat_answer_names_only_the_literals_on_its_cycles() {
        use batsat::interface::SolverInterface;
        // x and w close a cycle whichever way each goes: x puts 0 -> 1
        // and 2 -> 3 (else 4 -> 5 and 6 -> 7), w the reverse of the first
        // pair of each (else of the second). y and z lie apart (8 -> 9
        // or back, 10 -> 11 or back) and always fit.
        for budget in [0, 8] {
            let order = Order::seeded(12, &(0..12).collect::<Vec<u32>>(), &[]).expect("no edges");
            let mut th = Acyclic::new(order);
            th.budget = budget;
            let mut solver =
                batsat::Solver::new(Default::default(), batsat::callbacks::Basic::default());
            let [y, x, w, z]: [Lit; 4] =
                std::array::from_fn(|_| Lit::new(solver.new_var_default(), true));
            th.add_group(vec![x], vec![(0, 1), (2, 3)]);
            th.add_group(vec![!x], vec![(4, 5), (6, 7)]);
            th.add_group(vec![w], vec![(1, 0), (5, 4)]);
            th.add_group(vec![!w], vec![(3, 2), (7, 6)]);
            for (l, a) in [(y, 8), (z, 10)] {
                th.add_group(vec![l], vec![(a, a + 1)]);
                th.add_group(vec![!l], vec![(a + 1, a)]);
            }
            let r = solver.solve_limited_th(&mut Th(&mut th), &[]);
            assert_eq!(r, lbool::FALSE, "budget {budget}");
            assert!(th.named(x) && th.named(!w), "budget {budget}");
            assert!(!th.named(y) && !th.named(z), "budget {budget}");
        }
    }
}
