//! Finding the cycles that tell a violation: shortest cycles through an
//! edge of G2 ([`cycle_through`], [`nonadjacent_cycle_through`]), the
//! passes of [`PASSES`] from the cycle that proves most to the one that
//! proves least ([`strongest_cycle`], over the resumable breadth-first
//! [`Bfs`] within [`Components`]), the cycles among known edges
//! ([`known_cycles`]), and the witness of an unsatisfiable core
//! ([`contradiction`], [`unsat_witness`]).
//!
//! Data flow: the known (or solved) edges form an adjacency of G2; each
//! pass's graph (its edge kinds) and its strongly connected components are
//! made once ([`Components`]) and bound each search; for each edge of a
//! cyclic component, each pass in turn searches (breadth-first, resumed
//! from one edge to the next that starts from the same node) a path back,
//! and the first pass that closes a cycle names it; [`super::tell`] turns
//! the cycle into an anomaly. As Elle's cycle-exists cases guide its
//! searches, a pass for cycles with no two rw steps adjacent (G-single-item,
//! G-nonadjacent-item) searches from no rw edge whose states' components
//! ([`PassAdjacency::rw_states`]) rule such a cycle out, so that a store
//! whose violations are write skews pays nothing for those passes. Every
//! search spends from one [`Work`] allowance (edges looked at): what it
//! leaves untold is counted, never timed, so the same history always gets
//! the same cycles.

use crate::check::budget::Budget;
use crate::check::tuning::{
    MAX_CYCLES_PER_SCC, MAX_NONADJACENT_MISSES_PER_SCC, MAX_SEARCH_STATES, OTHER_ORDER_STEPS,
};
use std::cell::{OnceCell, RefCell};
use std::collections::BTreeSet;

use rustc_hash::{FxHashMap, FxHashSet};

use super::grounds::DataOrders;
use super::polygraph::{EdgeId, EdgeKind, Polygraph, Sel};
use super::tell::{
    any_kind, cycle_anomaly, cycle_name, data_dep, data_or_session, through, ww_only, ww_wr,
};
use super::{G2, untold};
use crate::anomaly::{Anomaly, Datum, Field, Grounds};
use crate::check::graph::{Digraph, sccs};
use crate::history::model::*;
use crate::spec::AnomalyType;

/// A shortest cycle in G2 through edge `(u -> v)` labelled `e`, as
/// transaction-level edges in order, starting with `e`.
pub(super) fn cycle_through(
    adj: &[Vec<(u32, EdgeId)>],
    u: u32,
    v: u32,
    e: EdgeId,
    allowed: impl Fn(u32) -> bool,
    edge_ok: impl Fn(EdgeId) -> bool,
) -> Option<Vec<EdgeId>> {
    if u == v {
        return Some(vec![e]);
    }
    let mut bfs = Bfs::new((v, 0));
    let step = |_, y, x| (allowed(y) && edge_ok(x)).then_some(0);
    let mut work = Work::unbounded();
    bfs.reach((u, 0), usize::MAX, step, |x| &adj[x as usize], &mut work)?;
    let mut path = bfs.path_to((u, 0));
    // From the step into `u`: then `e`, then the path from v.
    path.insert(0, e);
    path.rotate_right(1);
    Some(path)
}

/// The cycle searches, in the order Elle's searches go and from the cycle
/// that proves most to the one that proves least: write cycles (G0), write
/// and read cycles (G1c), then cycles with a single anti-dependency
/// (G-single-item: through an rw edge, back by other steps), with several
/// none adjacent (G-nonadjacent-item: a long fork), then any; each in the
/// graph of its kinds, first of data dependencies alone, then with session
/// order, then with real time.
pub(super) const PASSES: [Pass; 11] = [
    (ww_only, Shape::Any),
    (ww_wr, Shape::Any),
    (data_dep, Shape::SingleRw),
    (data_dep, Shape::NonadjacentRw),
    (data_dep, Shape::Any),
    (data_or_session, Shape::SingleRw),
    (data_or_session, Shape::NonadjacentRw),
    (data_or_session, Shape::Any),
    (any_kind, Shape::SingleRw),
    (any_kind, Shape::NonadjacentRw),
    (any_kind, Shape::Any),
];

/// The cycle through `(u -> v)` labelled `e` that the first of [`PASSES`]
/// (up to pass `last`) finds, with that pass's position: the cycle that
/// proves most (a G1c where there is one, rather than a shorter G2-item
/// beside it). At pass `last` itself only a cycle shorter than `shorter`
/// edges counts (the best found so far is that long).
#[allow(clippy::too_many_arguments)]
pub(super) fn strongest_cycle(
    g: &Polygraph,
    adj: &[Vec<(u32, EdgeId)>],
    u: u32,
    v: u32,
    e: EdgeId,
    last: usize,
    shorter: usize,
    comps: &mut Components,
    work: &mut Work,
) -> Option<(usize, Vec<EdgeId>)> {
    let kind = |x: EdgeId| g.edges[x as usize].kind;
    let e_rw = kind(e) == EdgeKind::Rw;
    for (i, &(keep, shape)) in PASSES[..=last].iter().enumerate() {
        // The cycle is `e` and a path back from v to u.
        if kinds_mask(keep) & edge_bit(g, e) == 0 || !comps.may_reach(g, adj, keep, v, u) {
            continue;
        }
        let limit = if i == last { shorter } else { usize::MAX };
        let found = match shape {
            Shape::Any => comps.path(g, adj, i, (v, u, limit), work),
            Shape::SingleRw if e_rw => comps.path(g, adj, i, (v, u, limit), work),
            Shape::NonadjacentRw if e_rw => comps.path(g, adj, i, (v, u, limit), work),
            _ => None,
        };
        if let Some(mut path) = found {
            path.insert(0, e);
            if shape != Shape::NonadjacentRw {
                // As [`cycle_through`] tells it: from the step into `u`.
                path.rotate_right(1);
            }
            return Some((i, path));
        }
    }
    None
}

/// A node of G2 and what a search has seen on its way there (see [`Bfs`]).
pub(super) type State = (u32, u8);

/// A breadth-first search from one node of G2 over the edges a pass keeps,
/// resumable: asked for a path to another node, it goes on from where it
/// stopped, until that node is reached or no path of the length asked can
/// be. Every edge of a contradiction's side leads back to the same node,
/// so one search serves them all, and nodes are discovered in the order a
/// fresh search would discover them (the paths are the same).
///
/// States are (node, bits): for G-nonadjacent-item passes, bit 1 = the
/// last step was rw, bit 2 = another rw step was taken (the search starts
/// after the rw edge closing the cycle, in state 1); other passes use 0.
pub(super) struct Bfs {
    /// Each state reached ([`packed`]), in the order reached: the state it
    /// was reached from (packed), by which edge, and its distance from the
    /// start. Those from `head` on are the ones still to expand (a
    /// breadth-first queue is the order of discovery).
    seen: Vec<(u64, u64, EdgeId, u32)>,
    /// The first state of `seen` not yet expanded.
    head: usize,
    /// Each state's place in `seen`, once there are more than
    /// [`Bfs::SMALL`] (until then a scan finds it): most searches of a
    /// telling reach a handful of states, and a map each (made, grown and
    /// freed by the million on a strict check of a large causal store)
    /// cost more than the searches.
    index: FxHashMap<u64, u32>,
    start: (u32, u8),
}

/// A state as one word: its hash and comparison cost one step, not one
/// per field (the searches' map lookups were a twentieth of a strict
/// check of a causal store).
fn packed((node, bits): State) -> u64 {
    (u64::from(node) << 8) | u64::from(bits)
}

/// The state a word packs.
fn unpacked(w: u64) -> State {
    ((w >> 8) as u32, w as u8)
}

impl Bfs {
    /// States a search finds by a scan of `seen`, before it keeps an index.
    const SMALL: usize = 16;

    fn new(start: (u32, u8)) -> Bfs {
        Bfs {
            seen: vec![(packed(start), packed(start), EdgeId::MAX, 0)],
            head: 0,
            index: FxHashMap::default(),
            start,
        }
    }

    /// Where state `w` ([`packed`]) is in `seen`, if reached.
    fn find(&self, w: u64) -> Option<usize> {
        if self.seen.len() <= Self::SMALL {
            self.seen.iter().position(|s| s.0 == w)
        } else {
            self.index.get(&w).map(|&i| i as usize)
        }
    }

    /// Records state `w`, reached from `from` by edge `e`, `d` steps away.
    fn add(&mut self, w: u64, from: u64, e: EdgeId, d: u32) {
        self.seen.push((w, from, e, d));
        let n = self.seen.len();
        if n == Self::SMALL + 1 {
            self.index = (0..n as u32)
                .map(|i| (self.seen[i as usize].0, i))
                .collect();
        } else if n > Self::SMALL {
            self.index.insert(w, n as u32 - 1);
        }
    }

    /// Searches on until `target` is reached, or every state closer than
    /// `within` steps is; its distance when reached. `step` gives, from a
    /// state's bits, the node an edge leads to and the edge, the bits of
    /// the state it reaches, or none where the edge is not taken.
    fn reach<'a>(
        &mut self,
        target: (u32, u8),
        within: usize,
        step: impl Fn(u8, u32, EdgeId) -> Option<u8>,
        out: impl Fn(u32) -> &'a [(u32, EdgeId)],
        work: &mut Work,
    ) -> Option<u32> {
        if let Some(i) = self.find(packed(target)) {
            let d = self.seen[i].3;
            return ((d as usize) < within).then_some(d);
        }
        loop {
            let &(xw, _, _, d) = self.seen.get(self.head)?;
            let x = unpacked(xw);
            // Each edge looked at is a step of work; none left, no more.
            let outs = out(x.0);
            if !work.spend(outs.len() as u64 + 1) {
                return None;
            }
            // Expanding x reaches states d + 1 away.
            if d as usize + 1 >= within {
                return None;
            }
            self.head += 1;
            let mut hit = false;
            for &(y, le) in outs {
                let Some(bits) = step(x.1, y, le) else {
                    continue;
                };
                let next = (y, bits);
                let w = packed(next);
                if self.find(w).is_none() {
                    self.add(w, xw, le, d + 1);
                    hit |= next == target;
                }
            }
            // x's edges all taken, as a resumed search expects.
            if hit {
                return Some(d + 1);
            }
        }
    }

    /// The entry of `seen` a reached state's path steps back to.
    fn back(&self, s: (u32, u8)) -> (u64, EdgeId) {
        let i = self
            .find(packed(s))
            .expect("a state reached: path_to and nodes_to follow reached states");
        (self.seen[i].1, self.seen[i].2)
    }

    /// The edges from the start to a reached state, in order.
    fn path_to(&self, mut s: (u32, u8)) -> Vec<EdgeId> {
        let mut out = Vec::new();
        while s != self.start {
            let (p, e) = self.back(s);
            out.push(e);
            s = unpacked(p);
        }
        out.reverse();
        out
    }

    /// The nodes of the states from the start to a reached state.
    fn nodes_to(&self, mut s: (u32, u8)) -> Vec<u32> {
        let mut out = vec![s.0];
        while s != self.start {
            s = unpacked(self.back(s).0);
            out.push(s.0);
        }
        out
    }

    /// States reached so far.
    fn size(&self) -> usize {
        self.seen.len()
    }
}

/// A deterministic allowance for telling cycles, counted in the edges the
/// searches look at, never in seconds: the same history always gets the
/// same report, however loaded the host. Once spent, every search finds
/// nothing, and the telling says how much it left untold. A part of the
/// telling may be given a share of what is left ([`Work::share`]), so that
/// one kind of search cannot starve the next.
#[derive(Clone, Copy, Debug)]
pub(super) struct Work {
    left: u64,
    /// What the current share may still spend (see [`Work::share`]).
    cap: u64,
}

impl Work {
    /// No bound (the searches of the other checkers, which bound their own).
    pub(super) fn unbounded() -> Work {
        Work::new(u64::MAX)
    }

    pub(super) fn new(steps: u64) -> Work {
        Work {
            left: steps,
            cap: u64::MAX,
        }
    }

    /// Spends `n` steps; false when there were not that many left (then
    /// none are, in the share or in all).
    fn spend(&mut self, n: u64) -> bool {
        match (self.left.checked_sub(n), self.cap.checked_sub(n)) {
            (Some(l), Some(c)) => {
                self.left = l;
                self.cap = c;
                true
            }
            (None, _) => {
                self.left = 0;
                false
            }
            (Some(l), None) => {
                self.left = l - self.cap;
                self.cap = 0;
                false
            }
        }
    }

    /// From now on, until the next share or [`Work::unshare`], at most half
    /// of what is left may be spent.
    fn share(&mut self) {
        self.cap = self.left / 2;
    }

    /// No share any more: all that is left may be spent.
    fn unshare(&mut self) {
        self.cap = u64::MAX;
    }

    /// Whether it is all spent, or the current share is.
    pub(super) fn spent(&self) -> bool {
        self.left == 0 || self.cap == 0
    }
}

/// Strongly connected components of a graph of G2 (an adjacency), one
/// partition per set of edge kinds a pass keeps, each computed when first
/// asked for (reachability once per pass graph), with that graph's edges.
/// They come numbered in reverse topological order, so a path from a to b
/// needs b's component numbered no later than a's: where it is later, the
/// pass's search from a is not made, and a search for b enters no node
/// numbered before b's component (none of them leads to b).
pub(super) struct Components {
    /// Each pass graph, by the kinds it keeps of those the adjacency has
    /// (passes that keep the same edges share one).
    by_kinds: FxHashMap<u8, PassAdjacency>,
    /// The kinds of the adjacency's edges ([`kinds_mask`] bits), once
    /// known.
    present: Option<u8>,
    /// Searches from a node in a pass's graph (see [`Bfs`]), by (node,
    /// pass, the component searched for, and for G-nonadjacent-item the
    /// state component); dropped all at once when they
    /// hold more than [`MAX_SEARCH_STATES`] states.
    searches: FxHashMap<(u32, usize, u32, u32), Bfs>,
    /// States in `searches`.
    searched: usize,
    /// Each polygraph edge's kind.
    kinds: Vec<EdgeKind>,
    /// Each polygraph edge's bit in [`kinds_mask`] ([`edge_bit`]).
    bits: Vec<u8>,
}

/// A pass's graph for its searches: its components (and which are
/// cyclic), and the edges it keeps, by node (compressed rows): a search of
/// the pass looks at no edge the pass drops.
struct PassAdjacency {
    comp: Vec<u32>,
    /// Per component, the lowest component number it reaches (itself
    /// included). Components are numbered as a depth-first search
    /// finishes them, so a node reaches another only if its number is no
    /// lower and its `low` no higher (GRAIL's interval test, Yildirim et
    /// al., VLDB 2010): most pairs a search cannot join are told apart at
    /// once.
    low: Vec<u32>,
    /// A second such labelling, per component, from a depth-first search
    /// that takes successors in the other order: (finish number, lowest
    /// finish number reached). Each labelling tells apart pairs the other
    /// cannot. Made once the searches of this graph have reached as many
    /// states as it has nodes (as much as making it costs; telling a
    /// contradiction or two reaches far fewer).
    second: Option<Vec<(u32, u32)>>,
    /// States the searches of this graph have reached, and those of its
    /// G-nonadjacent-item searches.
    reached: (u64, u64),
    /// Whether each component is cyclic (more than one node, or a
    /// self-loop).
    cyclic: Vec<bool>,
    offsets: Vec<u32>,
    edges: Vec<(u32, EdgeId)>,
    /// For G-nonadjacent-item searches, once they have reached as many
    /// states as the graph has (four per node): the components of their
    /// states' graph
    /// ([`nonadjacent_step`]), by state (`4 * node + bits`), over every
    /// edge (not a component's alone: a contradiction's side closes its
    /// cycle with an edge the graph does not hold).
    states: Option<Vec<u32>>,
    /// The components of the graph of [`single_rw_step`]'s states (`2 *
    /// node + bits`), once a pass asks: an edge `u -> v` of rw lies on a
    /// cycle with no two rw steps adjacent only if `(v, 1)` and `(u, 0)`
    /// share one (Elle's cycle-exists test, which guides its searches).
    rw_states: Option<Vec<u32>>,
}

/// Labels that rule nothing out (before [`PassAdjacency::second`] is
/// made).
const NO_LABEL: (u32, u32) = (u32::MAX, 0);

impl PassAdjacency {
    /// The second labelling of component `c` ([`NO_LABEL`] while there
    /// is none).
    fn second(&self, c: u32) -> (u32, u32) {
        self.second.as_ref().map_or(NO_LABEL, |l| l[c as usize])
    }

    /// Makes the second labelling and the states' components once the
    /// searches have reached enough states to pay for them (see
    /// [`PassAdjacency::reached`]).
    fn prepare(&mut self, kinds: &[EdgeKind]) {
        let nodes = self.comp.len() as u64;
        if self.second.is_none() && self.reached.0 >= nodes {
            self.second = Some(second_labels(self));
        }
        if self.states.is_none() && self.reached.1 >= 4 * nodes {
            self.states = Some(self.state_comps(kinds, 4, nonadjacent_step));
        }
    }

    /// Counts the states a search of `shape` reached.
    fn count(&mut self, shape: Shape, states: usize) {
        self.reached.0 += states as u64;
        if shape == Shape::NonadjacentRw {
            self.reached.1 += states as u64;
        }
    }
}

/// A step along an edge (rw or not) from a state whose bit says whether
/// the step into it was rw: none where both would be.
fn single_rw_step(bits: u8, rw: bool) -> Option<u8> {
    (!(rw && bits != 0)).then_some(u8::from(rw))
}

/// A G-nonadjacent-item search's step along an edge (rw or not) from a
/// state's bits (see [`Bfs`]): the bits of the state it reaches, or none
/// (two rw steps in a row).
fn nonadjacent_step(bits: u8, rw: bool) -> Option<u8> {
    (!(rw && bits & 1 != 0)).then(|| u8::from(rw) | (bits & 2) | if rw { 2 } else { 0 })
}

impl PassAdjacency {
    /// The components of the graph of `per` states a node whose steps
    /// `step` gives (from a state's bits, along an edge rw or not): those
    /// of the G-nonadjacent-item searches ([`PassAdjacency::states`]),
    /// and of cycles with no two rw steps adjacent
    /// ([`PassAdjacency::rw_states`]).
    fn state_comps(
        &self,
        kinds: &[EdgeKind],
        per: u8,
        step: fn(u8, bool) -> Option<u8>,
    ) -> Vec<u32> {
        // The states' rows written in place, state `per * x + bits` after
        // the one before: no list of pairs to sort (it was a seventh of a
        // strict check's peak memory on a causal store).
        let n = self.comp.len();
        let per32 = u32::from(per);
        let mut offsets = Vec::with_capacity(per as usize * n + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        for x in 0..n as u32 {
            for bits in 0..per {
                for &(y, e) in self.out(x) {
                    let rw = kinds[e as usize] == EdgeKind::Rw;
                    if let Some(next) = step(bits, rw) {
                        targets.push(per32 * y + u32::from(next));
                    }
                }
                offsets.push(targets.len() as u32);
            }
        }
        sccs(&Digraph::from_csr(offsets, targets)).comp
    }

    /// Makes [`PassAdjacency::rw_states`], once.
    fn make_rw_states(&mut self, kinds: &[EdgeKind]) {
        if self.rw_states.is_none() {
            self.rw_states = Some(self.state_comps(kinds, 2, single_rw_step));
        }
    }

    /// False when rw edge `u -> v` lies on no cycle with no two rw steps
    /// adjacent (see [`PassAdjacency::rw_states`], once made).
    fn rw_may_close(&self, u: u32, v: u32) -> bool {
        u == v
            || self
                .rw_states
                .as_deref()
                .is_none_or(|sc| sc[2 * v as usize + 1] == sc[2 * u as usize])
    }

    fn new(adj: &[Vec<(u32, EdgeId)>], keep: impl Fn(EdgeId) -> bool) -> PassAdjacency {
        let mut offsets = Vec::with_capacity(adj.len() + 1);
        let mut edges = Vec::new();
        offsets.push(0);
        for outs in adj {
            edges.extend(outs.iter().filter(|&&(_, e)| keep(e)));
            offsets.push(edges.len() as u32);
        }
        let dg = Digraph::from_csr(offsets.clone(), edges.iter().map(|&(v, _)| v).collect());
        let sccs = sccs(&dg);
        let mut cyclic = vec![false; sccs.count()];
        for c in sccs.cyclic(&dg) {
            cyclic[c as usize] = true;
        }
        // A component's successors are numbered before it: nodes by
        // component, in that order, see their successors' `low` done.
        let mut by_comp: Vec<(u32, u32)> = (0..adj.len() as u32)
            .map(|x| (sccs.comp[x as usize], x))
            .collect();
        by_comp.sort_unstable();
        let mut low: Vec<u32> = (0..sccs.count() as u32).collect();
        for &(c, x) in &by_comp {
            for &y in dg.out(x) {
                let l = low[sccs.comp[y as usize] as usize];
                if l < low[c as usize] {
                    low[c as usize] = l;
                }
            }
        }
        PassAdjacency {
            low,
            second: None,
            reached: (0, 0),
            comp: sccs.comp,
            cyclic,
            offsets,
            edges,
            states: None,
            rw_states: None,
        }
    }

    fn out(&self, u: u32) -> &[(u32, EdgeId)] {
        &self.edges[self.offsets[u as usize] as usize..self.offsets[u as usize + 1] as usize]
    }

    /// Whether `a` may reach `b`: false when it cannot (see
    /// [`PassAdjacency::low`]).
    fn may_reach(&self, a: u32, b: u32) -> bool {
        let (ca, cb) = (self.comp[a as usize], self.comp[b as usize]);
        let (sa, sb) = (self.second(ca), self.second(cb));
        cb <= ca && self.low[ca as usize] <= self.low[cb as usize] && sb.0 <= sa.0 && sa.1 <= sb.1
    }

    /// Whether `u`'s component is cyclic.
    fn on_cycle(&self, u: u32) -> bool {
        self.cyclic[self.comp[u as usize] as usize]
    }
}

/// The second labelling of [`PassAdjacency::second`]: a depth-first
/// search over the components' graph, from the components in the order
/// numbered last first, each one's successors taken last first.
fn second_labels(pa: &PassAdjacency) -> Vec<(u32, u32)> {
    let (comp, count) = (&pa.comp, pa.low.len());
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for x in 0..comp.len() as u32 {
        let cx = comp[x as usize];
        for &(y, _) in pa.out(x) {
            let cy = comp[y as usize];
            if cy != cx {
                edges.push((cx, cy));
            }
        }
    }
    let cg = Digraph::from_edges(count, &edges);
    const UNSEEN: u32 = u32::MAX;
    let mut label = vec![(UNSEEN, UNSEEN); count];
    let mut next = 0u32;
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for root in (0..count as u32).rev() {
        if label[root as usize].0 != UNSEEN {
            continue;
        }
        // A component on the stack is marked by a low of 0 until done.
        label[root as usize] = (UNSEEN, 0);
        stack.push((root, cg.out(root).len()));
        while let Some(&mut (c, ref mut i)) = stack.last_mut() {
            if *i > 0 {
                *i -= 1;
                let d = cg.out(c)[*i];
                if label[d as usize] == (UNSEEN, UNSEEN) {
                    label[d as usize] = (UNSEEN, 0);
                    stack.push((d, cg.out(d).len()));
                }
                continue;
            }
            stack.pop();
            let low = cg
                .out(c)
                .iter()
                .map(|&d| label[d as usize].1)
                .fold(next, u32::min);
            label[c as usize] = (next, low);
            next += 1;
        }
    }
    label
}

impl Components {
    /// The key of the graph of `adj`'s edges whose kinds `mask` keeps,
    /// made when first asked for (see [`Components::by_kinds`]).
    fn pass_graph(&mut self, g: &Polygraph, adj: &[Vec<(u32, EdgeId)>], mask: u8) -> u8 {
        if self.kinds.len() != g.edges.len() {
            self.kinds = g.edges.iter().map(|e| e.kind).collect();
            self.bits = (0..g.edges.len() as EdgeId)
                .map(|e| edge_bit(g, e))
                .collect();
        }
        let bits = &self.bits;
        let present = *self.present.get_or_insert_with(|| {
            adj.iter()
                .flatten()
                .fold(0, |m, &(_, e)| m | bits[e as usize])
        });
        let key = mask & present;
        self.by_kinds
            .entry(key)
            .or_insert_with(|| PassAdjacency::new(adj, |e| key & bits[e as usize] != 0));
        key
    }

    pub(super) fn new() -> Components {
        Components {
            by_kinds: FxHashMap::default(),
            present: None,
            searches: FxHashMap::default(),
            searched: 0,
            kinds: Vec::new(),
            bits: Vec::new(),
        }
    }

    /// A shortest path of pass `pass`'s graph from `v` back to `u`, of
    /// fewer than `within - 1` edges (so that with the edge `u -> v` the
    /// cycle is shorter than `within`), as its edges in order: any for
    /// [`Shape::Any`], with no rw step for [`Shape::SingleRw`], and for
    /// [`Shape::NonadjacentRw`] (the edge `u -> v` being rw) with another
    /// rw step and no two adjacent, passing no transaction twice.
    ///
    /// The search enters no node whose component (in the pass's graph) is
    /// numbered before `u`'s: none leads to `u`, nor is any reached
    /// through a node that does, so the nodes that do are discovered in the
    /// same order as without the bound and the paths are the same, at the
    /// cost of what lies between `v` and `u` rather than of all `v`
    /// reaches.
    fn path(
        &mut self,
        g: &Polygraph,
        adj: &[Vec<(u32, EdgeId)>],
        pass: usize,
        (v, u, within): (u32, u32, usize),
        work: &mut Work,
    ) -> Option<Vec<EdgeId>> {
        if u == v {
            // The edge alone is the cycle (a self-loop of G2).
            return (PASSES[pass].1 != Shape::NonadjacentRw).then(Vec::new);
        }
        let (keep, shape) = PASSES[pass];
        // A G-single-item's path back takes no rw step: it is searched in
        // the pass's graph without them, whose components bound it
        // tighter (in a store whose dependencies alone are acyclic, an rw
        // edge's path back is most often ruled out by them at once).
        let mask = match shape {
            Shape::SingleRw => kinds_mask(keep) & !RW_BITS,
            _ => kinds_mask(keep),
        };
        let key = self.pass_graph(g, adj, mask);
        // Each edge's kind, compact: the searches look up many.
        let kinds = &self.kinds;
        let kind = |x: EdgeId| kinds[x as usize];
        if let Some(pa) = self.by_kinds.get_mut(&key) {
            pa.prepare(kinds);
        }
        let pa = &self.by_kinds[&key];
        let floor = pa.comp[u as usize];
        if !pa.may_reach(v, u) {
            return None;
        }
        let ceiling = pa.low[floor as usize];
        let target = pa.second(floor);
        // A G-nonadjacent-item's search goes through states: bounded by
        // their components, as the others by the nodes'.
        let states = pa
            .states
            .as_deref()
            .filter(|_| shape == Shape::NonadjacentRw);
        let state_floor = match states {
            Some(sc) => {
                let (from, to) = (sc[4 * v as usize + 1], sc[4 * u as usize + 2]);
                if from < to {
                    return None;
                }
                to
            }
            None => 0,
        };
        let out = |x: u32| pa.out(x);
        // Only nodes that may reach u are entered; where v and u share a
        // component, only that component's (every node of a path from v
        // to u is reached from u too).
        let within_comp = pa.comp[v as usize] == floor;
        let above = |y: u32| {
            let c = pa.comp[y as usize];
            if within_comp {
                return c == floor;
            }
            let s = pa.second(c);
            c >= floor && pa.low[c as usize] <= ceiling && target.0 <= s.0 && s.1 <= target.1
        };
        if self.searched > MAX_SEARCH_STATES {
            self.searches.clear();
            self.searched = 0;
        }
        let (start, target) = match shape {
            Shape::NonadjacentRw => ((v, 1), (u, 2)),
            _ => ((v, 0), (u, 0)),
        };
        let bfs = self
            .searches
            .entry((v, pass, floor, state_floor))
            .or_insert_with(|| Bfs::new(start));
        let within = within.saturating_sub(1);
        let before = bfs.size();
        let reached = match shape {
            Shape::Any => bfs.reach(target, within, |_, y, _| above(y).then_some(0), out, work),
            // The pass's graph here has no rw edge (see `mask`).
            Shape::SingleRw => {
                bfs.reach(target, within, |_, y, _| above(y).then_some(0), out, work)
            }
            Shape::NonadjacentRw => {
                // Without the states' components yet, only nodes bound it.
                let may = |at: usize| {
                    states.is_none_or(|sc| sc.get(at).is_some_and(|&c| c >= state_floor))
                };
                bfs.reach(
                    target,
                    within,
                    |bits, y, x| {
                        let next = nonadjacent_step(bits, kind(x) == EdgeKind::Rw)?;
                        (above(y) && may(4 * y as usize + usize::from(next))).then_some(next)
                    },
                    out,
                    work,
                )
            }
        };
        self.searched += bfs.size() - before;
        if let Some(pa) = self.by_kinds.get_mut(&key) {
            pa.count(shape, bfs.size() - before);
        }
        reached?;
        let path = bfs.path_to(target);
        if shape == Shape::NonadjacentRw {
            // A walk through the states may pass a transaction twice, and
            // that is two cycles, not one to tell.
            let mut nodes = bfs.nodes_to(target);
            nodes.sort_unstable();
            nodes.dedup();
            if nodes.len() != path.len() + 1 {
                return None;
            }
        }
        Some(path)
    }

    /// False when no path of `keep`'s edges leads from `a` to `b`.
    fn may_reach(
        &mut self,
        g: &Polygraph,
        adj: &[Vec<(u32, EdgeId)>],
        keep: fn(EdgeKind) -> bool,
        a: u32,
        b: u32,
    ) -> bool {
        let key = self.pass_graph(g, adj, kinds_mask(keep));
        self.by_kinds[&key].may_reach(a, b)
    }
}

/// Of the cycles through any of `edges` (polygraph edges, each mapped into
/// G2), the one that proves most, the shortest of those.
pub(super) fn strongest_cycle_over(
    g: &Polygraph,
    g2: &G2,
    adj: &[Vec<(u32, EdgeId)>],
    comps: &mut Components,
    edges: impl IntoIterator<Item = EdgeId>,
    (budget, work): (Budget, &mut Work),
) -> Option<Vec<EdgeId>> {
    let mut best: Option<(usize, Vec<EdgeId>)> = None;
    let mut buf = Vec::new();
    for e in edges {
        // Past the budget, the best so far is the one told
        // (or none); nothing beats a G0 of two steps.
        if budget.expired()
            || work.spent()
            || best.as_ref().is_some_and(|(p, b)| *p == 0 && b.len() <= 2)
        {
            break;
        }
        buf.clear();
        g2.map(g, e, &mut buf);
        for &(u, v) in &buf {
            // A later pass than the best so far cannot beat it.
            let (last, shorter) = best
                .as_ref()
                .map_or((PASSES.len() - 1, usize::MAX), |(p, b)| (*p, b.len()));
            if let Some((pass, c)) = strongest_cycle(g, adj, u, v, e, last, shorter, comps, work)
                && best
                    .as_ref()
                    .is_none_or(|(p, b)| (pass, c.len()) < (*p, b.len()))
            {
                best = Some((pass, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// A pass: the edge kinds its graph keeps, and the cycles it looks for.
pub(super) type Pass = (fn(EdgeKind) -> bool, Shape);

/// Which cycles a pass of [`known_cycles`] looks for.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Shape {
    Any,
    /// Through an rw edge, back by other kinds: G-single-item.
    SingleRw,
    /// Through an rw edge, with more rw edges, none adjacent:
    /// G-nonadjacent-item.
    NonadjacentRw,
}

/// Cycles among known edges: each cyclic component of G2 yields cycles
/// through its edges until every edge is covered (up to a bound).
/// Past the budget it stops, and says so (the second value:
/// how many cyclic components of G2 it told no cycle of; at least 1).
pub(super) fn known_cycles(
    h: &History,
    g: &Polygraph,
    g2: &G2,
    inferred: &Inferred,
    (budget, work): (Budget, &mut Work),
) -> (Vec<Anomaly>, usize) {
    let full = g2.adjacency(g, &[]);
    let mut covered: FxHashSet<EdgeId> = FxHashSet::default();
    // Cycles told, by their transactions: as Elle's lost-update test
    // expects, a G-single-item-process over the two transactions of a
    // write skew is not told beside it.
    let mut seen_cycles: FxHashSet<Vec<TxnId>> = FxHashSet::default();
    let mut out = Vec::new();
    // As Elle does, a component's cycle of a type that one already told
    // implies (a G-single-item-process beside a G-single-item) is not told:
    // it says nothing more. Components of the whole graph, names told in
    // each.
    // The searches, resumed from one candidate to the next (many share
    // the node they search from), and each pass's graph and components,
    // made once for the passes that keep the same edges.
    let mut searches = Components::new();
    let all = searches.pass_graph(g, &full, ALL_KINDS);
    let (whole, whole_cyclic): (Vec<u32>, Vec<u32>) = {
        let pa = &searches.by_kinds[&all];
        let cyclic = (0..pa.cyclic.len() as u32)
            .filter(|&c| pa.cyclic[c as usize])
            .collect();
        (pa.comp.clone(), cyclic)
    };
    // Cyclic components of the whole graph none of whose cycles was told.
    let untold = |told: &FxHashMap<u32, Vec<AnomalyType>>| {
        let n = whole_cyclic
            .iter()
            .filter(|c| told.get(c).is_none_or(Vec::is_empty))
            .count();
        n.max(1)
    };
    // What ends the telling early, with nothing told (the budget, or the
    // work spent before a search succeeded): one cycle still, any
    // (Elle's fallback cycle when its search times out).
    let cut = |mut out: Vec<Anomaly>, untold: usize| {
        if out.is_empty()
            && let Some(c) = fallback_cycle(&full, &whole, whole_cyclic.first().copied())
        {
            out.push(claiming(cycle_anomaly(h, g, &c), (h, g, g2), &c, inferred));
        }
        (out, untold)
    };
    let mut told: rustc_hash::FxHashMap<u32, Vec<AnomalyType>> = Default::default();
    // What the names told in each component imply (see the loop).
    let mut implied: FxHashMap<u32, BTreeSet<AnomalyType>> = FxHashMap::default();
    // Without the single-rw passes a component with both shapes would be
    // explained by whichever cycle is shortest, and the G-single-item an SI
    // store's fault makes would go unnamed behind a G-nonadjacent or G2
    // one; likewise a long fork behind the write skews of a store that
    // allows them; without the data-only passes, a long fork would be told
    // through real-time steps it does not need.
    // Each pass may spend at most half of what is left (see
    // [`Work::share`]): a pass whose searches all fail (G-single-item in a
    // store with none, over a million rw edges) leaves the next passes
    // their turn.
    let mut ran_out = false;
    for (pass, &(keep, shape)) in PASSES.iter().enumerate() {
        work.share();
        let key = searches.pass_graph(g, &full, kinds_mask(keep));
        if !searches.by_kinds[&key].cyclic.contains(&true) {
            continue;
        }
        // A G-single-item or G-nonadjacent-item pass searches from no rw
        // edge that lies on no cycle of its shapes: in a store whose
        // violations are all write skews, none of its millions (searches
        // that would find nothing, most of such a store's telling).
        if shape != Shape::Any
            && let Some(pa) = searches.by_kinds.get_mut(&key)
        {
            pa.make_rw_states(&searches.kinds);
        }
        let pa = &searches.by_kinds[&key];
        let mut per_comp: rustc_hash::FxHashMap<u32, usize> = rustc_hash::FxHashMap::default();
        let mut failed: rustc_hash::FxHashMap<u32, usize> = rustc_hash::FxHashMap::default();
        // Data edges first: session and real-time edges close cycles but
        // are rarely what a cycle is about. Each with its component.
        // (Two walks over the edges: a sort by kind took a twentieth of a
        // strict check of a causal store.)
        let mut candidates: Vec<(u32, u32, EdgeId, u32)> = Vec::new();
        for data in [true, false] {
            for u in 0..full.len() as u32 {
                let c = pa.comp[u as usize];
                if !pa.on_cycle(u) {
                    continue;
                }
                for &(v, e) in pa.out(u) {
                    let kind = g.edges[e as usize].kind;
                    if pa.comp[v as usize] == c
                        && (shape == Shape::Any || (kind == EdgeKind::Rw && pa.rw_may_close(u, v)))
                        && matches!(kind, EdgeKind::Rw | EdgeKind::Ww) == data
                    {
                        candidates.push((u, v, e, c));
                    }
                }
            }
        }
        for (u, v, e, c) in candidates {
            if budget.expired() {
                return cut(out, untold(&told));
            }
            if work.spent() {
                ran_out = true;
                break;
            }
            // An edge on a cycle already told is not searched again, as the
            // lost-update and G-nonadjacent tests of Elle expect: a stale
            // read's G-single-item-process through the rw edge of a write
            // skew is not told beside it.
            if covered.contains(&e)
                || per_comp.get(&c).copied().unwrap_or(0) >= MAX_CYCLES_PER_SCC
                || (shape == Shape::NonadjacentRw
                    && failed.get(&c).copied().unwrap_or(0) >= MAX_NONADJACENT_MISSES_PER_SCC)
            {
                continue;
            }
            // A pass whose every cycle would be implied by what its whole
            // component told (a G-nonadjacent-item beside a G-single-item)
            // tells nothing there in this pass: not searched, so that
            // telling costs what it tells (a 10k causal store at
            // serializability: 63 cycles told, 0.25 s of 0.36 spent on
            // such searches). The cycles it would have found, untold, no
            // longer cover their edges: a later pass may tell one through
            // them, under a name the component already told.
            let w = whole[u as usize];
            if let Some(i) = implied.get(&w)
                && silenced(shape, keep, i, told.get(&w).map_or(&[], Vec::as_slice))
            {
                continue;
            }
            // A cycle of data dependencies alone first, where the pass
            // keeps more (as Elle names a cycle by the first type it
            // finds, and session or real-time steps rarely explain
            // anything); each path is the one a search confined to the
            // component would find (see [`Components::path`]).
            let data_first = shape == Shape::Any
                && !kinds_within(keep, data_dep)
                && kinds_mask(data_dep) & edge_bit(g, e) != 0;
            let mut found = None;
            if data_first {
                found = searches.path(g, &full, DATA_ANY, (v, u, usize::MAX), work);
            }
            if found.is_none() {
                found = searches.path(g, &full, pass, (v, u, usize::MAX), work);
            }
            let cyc = found.map(|mut path| {
                path.insert(0, e);
                if shape != Shape::NonadjacentRw {
                    // From the step into `u`, as [`cycle_through`] tells it.
                    path.rotate_right(1);
                }
                path
            });
            let Some(cyc) = cyc else {
                *failed.entry(c).or_default() += 1;
                continue;
            };
            covered.extend(cyc.iter().copied());
            let mut txns: Vec<TxnId> = cyc.iter().map(|&x| g.edges[x as usize].a).collect();
            txns.sort_unstable();
            let name = cycle_name(g, &cyc);
            let names = told.entry(w).or_default();
            let implies = implied.entry(w).or_default();
            if !names.contains(&name) && implies.contains(&name) {
                // Counted, so a large component's pass ends as it would
                // have had it told them.
                *per_comp.entry(c).or_default() += 1;
                continue;
            }
            if !seen_cycles.insert(txns) {
                continue;
            }
            if !names.contains(&name) {
                implies.extend(crate::spec::lattice::implied_anomalies(&[name]));
                names.push(name);
            }
            *per_comp.entry(c).or_default() += 1;
            out.push(claiming(
                cycle_anomaly(h, g, &cyc),
                (h, g, g2),
                &cyc,
                inferred,
            ));
        }
    }
    work.unshare();
    if work.spent() || ran_out {
        // A search ran out: what it would have told is untold.
        return cut(out, untold(&told));
    }
    (out, 0)
}

/// Any cycle of component `comp` (of `whole`, the components of `adj`'s
/// graph): one of its edges and a shortest path back, looked for
/// without bound (one breadth-first search within the component).
fn fallback_cycle(
    adj: &[Vec<(u32, EdgeId)>],
    whole: &[u32],
    comp: Option<u32>,
) -> Option<Vec<EdgeId>> {
    let c = comp?;
    let inside = |y: u32| whole[y as usize] == c;
    let u = (0..adj.len() as u32).find(|&u| inside(u))?;
    let &(v, e) = adj[u as usize].iter().find(|&&(v, _)| inside(v))?;
    cycle_through(adj, u, v, e, inside, |_| true)
}

/// Whether no cycle a pass of `shape` keeping `keep`'s edges could find
/// would be told in a component that told `names`, which imply
/// `implied`: each name it could have is implied by them without being
/// one of them (see [`known_cycles`]).
fn silenced(
    shape: Shape,
    keep: fn(EdgeKind) -> bool,
    implied: &BTreeSet<AnomalyType>,
    names: &[AnomalyType],
) -> bool {
    use AnomalyType as A;
    let [plain, process, realtime] = match shape {
        Shape::SingleRw => [
            A::GSingleItem,
            A::GSingleItemProcess,
            A::GSingleItemRealtime,
        ],
        Shape::NonadjacentRw => [
            A::GNonadjacentItem,
            A::GNonadjacentItemProcess,
            A::GNonadjacentItemRealtime,
        ],
        Shape::Any => return false,
    };
    // The names it could have: the plain one, and those of the steps kept.
    [
        (plain, true),
        (process, keep(EdgeKind::Process)),
        (realtime, keep(EdgeKind::Realtime)),
    ]
    .iter()
    .filter(|&&(_, can)| can)
    .all(|(t, _)| implied.contains(t) && !names.contains(t))
}

/// The pass of data dependencies alone, any shape.
const DATA_ANY: usize = 4;

/// Whether every kind `a` keeps, `b` keeps.
fn kinds_within(a: fn(EdgeKind) -> bool, b: fn(EdgeKind) -> bool) -> bool {
    kinds_mask(a) & !kinds_mask(b) == 0
}

/// The edge kinds, in the order of their bits in [`kinds_mask`].
const KINDS: [EdgeKind; 5] = [
    EdgeKind::Process,
    EdgeKind::Realtime,
    EdgeKind::Wr,
    EdgeKind::Ww,
    EdgeKind::Rw,
];

/// An edge kind's bit in [`kinds_mask`].
fn kind_bit(k: EdgeKind) -> u8 {
    KINDS.iter().position(|&x| x == k).map_or(0, |i| 1 << i)
}

/// The bit in [`kinds_mask`] of an rw edge that rests on session order
/// (see [`super::grounds`]): kept by the passes that keep both.
const THROUGH_PROCESS: u8 = 1 << 5;

/// Likewise, of one that rests on real time.
const THROUGH_REALTIME: u8 = 1 << 6;

/// The bits of rw edges, whatever they rest on.
const RW_BITS: u8 = (1 << 4) | THROUGH_PROCESS | THROUGH_REALTIME;

/// Every kind's bit.
const ALL_KINDS: u8 = ((1 << KINDS.len()) - 1) | THROUGH_PROCESS | THROUGH_REALTIME;

/// The edge kinds a pass keeps, as a bit set: an rw edge that rests on
/// session order or real time is kept where that order is too.
pub(super) fn kinds_mask(keep: fn(EdgeKind) -> bool) -> u8 {
    let kinds = KINDS
        .iter()
        .enumerate()
        .fold(0u8, |m, (i, &k)| m | (u8::from(keep(k)) << i));
    let rw = keep(EdgeKind::Rw);
    let through = |k: EdgeKind, bit: u8| if rw && keep(k) { bit } else { 0 };
    kinds
        | through(EdgeKind::Process, THROUGH_PROCESS)
        | through(EdgeKind::Realtime, THROUGH_REALTIME)
}

/// Edge `e`'s bit in [`kinds_mask`]: its kind's, or for an rw edge that
/// rests on session order or real time, that one's.
fn edge_bit(g: &Polygraph, e: EdgeId) -> u8 {
    match through(g, e) {
        Some(EdgeKind::Process) => THROUGH_PROCESS,
        Some(_) => THROUGH_REALTIME,
        None => kind_bit(g.edges[e as usize].kind),
    }
}

/// The edges pruning inferred (forced by a cycle the other order of a
/// pair would close), as a set over edge ids: telling marks the steps that
/// rest on one, and narrows the cycle's claim unless the other order
/// closes a cycle of the history's own edges that claims as much (asked of
/// the cycles told only).
pub(super) struct Inferred {
    bits: Vec<u64>,
    /// The history's own known edges: the first this many.
    observed: usize,
    data: OnceCell<DataOrders>,
    /// G2 over the history's own known edges, for the other orders'
    /// cycles; their searches' components and work.
    own: OnceCell<Vec<Vec<(u32, EdgeId)>>>,
    searches: RefCell<(Components, Work)>,
    /// Per constraint, what the other order's cycle claims (None: none
    /// found among the history's own edges).
    other: RefCell<FxHashMap<usize, Option<BTreeSet<crate::spec::Model>>>>,
}

impl Inferred {
    /// The edges of `g` pruning added: its known edges after the first
    /// `observed`.
    pub(super) fn new(g: &Polygraph, observed: usize) -> Inferred {
        let mut bits = vec![0u64; g.edges.len().div_ceil(64)];
        for &e in g.known.get(observed..).unwrap_or_default() {
            if let Some(w) = bits.get_mut(e as usize / 64) {
                *w |= 1 << (e % 64);
            }
        }
        Inferred {
            bits,
            observed,
            data: OnceCell::new(),
            own: OnceCell::new(),
            searches: RefCell::new((Components::new(), Work::new(OTHER_ORDER_STEPS))),
            other: RefCell::default(),
        }
    }

    pub(super) fn contains(&self, e: &EdgeId) -> bool {
        self.bits
            .get(*e as usize / 64)
            .is_some_and(|w| w & (1 << (e % 64)) != 0)
    }

    fn data(&self, g: &Polygraph) -> &DataOrders {
        self.data
            .get_or_init(|| DataOrders::new(g, self.observed, |e| self.contains(&e)))
    }

    /// Whether inferred edge `e` of `g` rests on data alone.
    fn on_data(&self, g: &Polygraph, e: EdgeId) -> bool {
        self.data(g).on_data(e)
    }

    /// What the cycle the other order of inferred edge `e`'s pair closes
    /// among the history's own edges claims, if one is found.
    fn other_claims(
        &self,
        h: &History,
        g: &Polygraph,
        g2: &G2,
        e: EdgeId,
    ) -> Option<BTreeSet<crate::spec::Model>> {
        let (c, side) = self.data(g).other_side(g, e)?;
        if let Some(k) = self.other.borrow().get(&c) {
            return k.clone();
        }
        let own = self.own.get_or_init(|| {
            let observed = g.known.get(..self.observed).unwrap_or_default();
            g2.adjacency_over(g, observed.iter().copied())
        });
        let claims = {
            let (comps, work) = &mut *self.searches.borrow_mut();
            strongest_cycle_over(
                g,
                g2,
                own,
                comps,
                side.iter().copied(),
                (Budget::NONE, work),
            )
            .map(|cyc| claims_of(&cycle_anomaly(h, g, &cyc)))
        };
        self.other.borrow_mut().insert(c, claims.clone());
        claims
    }
}

/// The models anomaly `a` rules out.
pub(super) fn claims_of(a: &Anomaly) -> BTreeSet<crate::spec::Model> {
    let names = crate::check::verdict::names_of(a).into_iter().collect();
    crate::spec::lattice::impossible_models(&names)
}

/// An anomaly whose cycle goes through an edge that pruning inferred
/// claims only the model checked: its name (say G0, from write-write steps
/// pruning chose) would claim weaker models, which may well accept. Each
/// inferred step is marked `:inferred? true`. The name stands where, for
/// each such step, the other order of its writers closes a cycle of the
/// history's own edges that claims every model the name does: each such
/// model fails whichever order holds. Steps data alone orders (the other
/// order closes a G0 or G1c cycle) are marked as inferred through reads.
pub(super) fn claiming(
    mut a: Anomaly,
    (h, g, g2): (&History, &Polygraph, &G2),
    cyc: &[EdgeId],
    inferred: &Inferred,
) -> Anomaly {
    let mut steps = cyc.iter().filter(|e| inferred.contains(e)).peekable();
    if steps.peek().is_none() {
        return a;
    }
    let claims = claims_of(&a);
    // Every model claimed prohibits a G1c: a write order data alone gives
    // (its other order closes a G0 or G1c cycle) stands as the history's.
    let g1c = crate::spec::lattice::impossible_models(&[AnomalyType::G1c].into_iter().collect());
    let within_g1c = claims.is_subset(&g1c);
    let stands = |e: EdgeId| {
        (within_g1c && inferred.on_data(g, e))
            || inferred
                .other_claims(h, g, g2, e)
                .is_some_and(|k| claims.is_subset(&k))
    };
    if steps.all(|&e| stands(e)) {
        let data = Grounds::Through(crate::anomaly::Rel::Wr);
        mark_steps(
            &mut a,
            cyc,
            |e| inferred.contains(e) && inferred.on_data(g, *e),
            data,
        );
        mark_steps(&mut a, cyc, |e| inferred.contains(e), Grounds::Inferred);
        return a;
    }
    a.rules_out = Some(g.cycle_exists);
    mark_steps(&mut a, cyc, |e| inferred.contains(e), Grounds::Inferred);
    a
}

/// Marks as `grounds` the observed steps of `a` (its cycle `cyc`) whose
/// edges `is` picks.
pub(super) fn mark_steps(
    a: &mut Anomaly,
    cyc: &[EdgeId],
    is: impl Fn(&EdgeId) -> bool,
    grounds: Grounds,
) {
    if let Some(c) = &mut a.cycle {
        for (step, e) in c.steps.iter_mut().zip(cyc) {
            if is(e) && step.grounds == Grounds::Observed {
                step.grounds = grounds;
            }
        }
    }
}

/// Marks the steps of `a` (its cycle `cyc`) whose edges are in `guessed`
/// as assumed: write orders no read fixes, taken to tell the cycle.
fn assuming(mut a: Anomaly, cyc: &[EdgeId], guessed: &FxHashSet<EdgeId>) -> Anomaly {
    mark_steps(&mut a, cyc, |e| guessed.contains(e), Grounds::Assumed);
    a
}

/// A constraint neither side of which can hold: the cycle each side closes.
#[allow(clippy::too_many_arguments)]
pub(super) fn contradiction(
    h: &History,
    g: &Polygraph,
    g2: &G2,
    inferred: &Inferred,
    (adj, comps): (&[Vec<(u32, EdgeId)>], &mut Components),
    (c, e1, e2): (usize, EdgeId, EdgeId),
    (budget, work): (Budget, &mut Work),
) -> Option<Anomaly> {
    // Per order, the cycle that proves most: the anomaly claims what the
    // weaker of the two proves, and a short cycle that proves little (a
    // G2-item beside a long fork) would give away what both orders prove.
    // Each edge of a side that closes a cycle is a way to tell that side;
    // the one that proves most is told (pruning stopped at the first).
    let mut cyc = |side: &[EdgeId], first: EdgeId| {
        strongest_cycle_over(
            g,
            g2,
            adj,
            comps,
            std::iter::once(first).chain(side.iter().copied()),
            (budget, &mut *work),
        )
    };
    let con = &g.constraints[c];
    let (c1, c2) = (cyc(&con.either, e1)?, cyc(&con.or, e2)?);
    // Each cycle rests on one order of the pair, so the history has one or
    // the other: the anomaly must claim no more than the weaker of the two
    // proves. Name it after the cycle that rules out fewer models (the
    // shorter when they claim alike); the other is the alternative.
    let sides: FxHashSet<EdgeId> = con.either.iter().chain(&con.or).copied().collect();
    let (a1, a2) = (
        assuming(
            claiming(cycle_anomaly(h, g, &c1), (h, g, g2), &c1, inferred),
            &c1,
            &sides,
        ),
        assuming(
            claiming(cycle_anomaly(h, g, &c2), (h, g, g2), &c2, inferred),
            &c2,
            &sides,
        ),
    );
    let (k1, k2) = (claims_of(&a1), claims_of(&a2));
    let first = if k1 == k2 {
        c1.len() <= c2.len()
    } else if k1.is_subset(&k2) {
        true
    } else if k2.is_subset(&k1) {
        false
    } else {
        k1.len() <= k2.len()
    };
    let (mut a, alt_anomaly) = if first { (a1, a2) } else { (a2, a1) };
    if !(k1.is_subset(&k2) || k2.is_subset(&k1)) {
        // Neither claim holds under the other order: only the variant's
        // own graph is sure to have a cycle.
        a.rules_out = Some(g.cycle_exists);
    }
    a = a.field(
        Field::Otherwise,
        Datum::Alternative(alt_anomaly.kind, alt_anomaly.cycle),
    );
    a = a.field(
        Field::Unordered,
        Datum::List(vec![Datum::Txn(con.a), Datum::Txn(con.c)]),
    );
    Some(a)
}

/// A witness for an unsatisfiable set of constraints and choices: order
/// each pair of writers by invocation, let each read of several candidate
/// writers observe the one the history's other checkers assume (any choice
/// closes a cycle, since the core is unsatisfiable), then report a cycle of
/// that graph, and the constraints whose every order closes one.
pub(super) fn unsat_witness(
    h: &History,
    g: &Polygraph,
    g2: &G2,
    core: &[usize],
    choices: &[usize],
    (budget, work): (Budget, &mut Work),
) -> (Anomaly, bool) {
    let mut chosen: FxHashSet<Sel> = FxHashSet::default();
    for &i in choices {
        let ch = &g.choices[i];
        let guess = h.mops[ch.mop as usize]
            .observed()
            .map(|w| h.txn_of(w))
            .and_then(|t| ch.writers.iter().position(|&x| x == t))
            .unwrap_or(ch.writers.len() - 1);
        chosen.insert(ch.first + guess as Sel);
    }
    let mut extra = Vec::new();
    let pick = |es: &[(Sel, EdgeId)], extra: &mut Vec<EdgeId>| {
        extra.extend(
            es.iter()
                .filter(|(s, _)| chosen.contains(s))
                .map(|&(_, e)| e),
        );
    };
    pick(&g.cond_known, &mut extra);
    for &c in core {
        let con = &g.constraints[c];
        let a_first =
            h.txns[con.a as usize].invoke_index() <= h.txns[con.c as usize].invoke_index();
        if a_first {
            extra.extend_from_slice(&con.either);
            pick(&con.either_if, &mut extra);
        } else {
            extra.extend_from_slice(&con.or);
            pick(&con.or_if, &mut extra);
        }
    }
    let adj = g2.adjacency(g, &extra);
    // The cycle named is the one that names most (G1c before G2-item), the
    // shortest of those.
    let best = strongest_cycle_over(
        g,
        g2,
        &adj,
        &mut Components::new(),
        extra.iter().copied(),
        (budget, &mut *work),
    );
    let cut = best.is_none() && (budget.expired() || work.spent());
    let pairs = Datum::List(
        core.iter()
            .map(|&c| {
                Datum::List(vec![
                    Datum::Txn(g.constraints[c].a),
                    Datum::Txn(g.constraints[c].c),
                ])
            })
            .collect(),
    );
    match best {
        // The write orders here are guesses (any order closes some cycle):
        // the cycle proves only that the variant's graph has one.
        Some(cyc) => {
            let guessed: FxHashSet<EdgeId> = extra.iter().copied().collect();
            let a = assuming(cycle_anomaly(h, g, &cyc), &cyc, &guessed);
            let mut a = a.field(Field::Unordered, pairs);
            a.rules_out = Some(g.cycle_exists);
            (a, false)
        }
        None => {
            // The budget or the work ran out first (else it cannot happen: the known
            // graph is acyclic, so every cycle uses a constraint edge); say
            // only that a cycle exists.
            let mut a = untold(g).field(Field::Unordered, pairs);
            for &c in core {
                a = a.txn(g.constraints[c].a).txn(g.constraints[c].c);
            }
            (a, cut)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::Rng;
    use super::*;

    /// Every state a search from `start` can reach in the graph (node x
    /// rw bits, by `step`, or bits 0 throughout when `step` is none), by
    /// brute force.
    fn reachable(
        pa: &PassAdjacency,
        kinds: &[EdgeKind],
        start: State,
        step: Option<fn(u8, bool) -> Option<u8>>,
    ) -> FxHashSet<State> {
        let mut seen = FxHashSet::from_iter([start]);
        let mut todo = vec![start];
        while let Some((x, bits)) = todo.pop() {
            for &(y, e) in pa.out(x) {
                let next = match step {
                    Some(step) => step(bits, kinds[e as usize] == EdgeKind::Rw),
                    None => Some(0),
                };
                if let Some(b) = next
                    && seen.insert((y, b))
                {
                    todo.push((y, b));
                }
            }
        }
        seen
    }

    #[test]
    fn what_the_labels_rule_out_no_path_reaches() {
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        let mut ruled_out = [0usize; 3];
        for _ in 0..40 {
            let n = 4 + r.next(20) as usize;
            let mut adj: Vec<Vec<(u32, EdgeId)>> = vec![Vec::new(); n];
            let mut kinds = Vec::new();
            for _ in 0..r.next(3 * n as u64) {
                let (a, b) = (r.next(n as u64) as u32, r.next(n as u64) as u32);
                // Mostly forward, so that the graph has components of
                // several sizes and nodes that cannot reach each other.
                let (a, b) = if r.next(5) == 0 {
                    (b, a)
                } else {
                    (a.min(b), a.max(b))
                };
                adj[a as usize].push((b, kinds.len() as EdgeId));
                kinds.push(if r.next(3) == 0 {
                    EdgeKind::Rw
                } else {
                    EdgeKind::Ww
                });
            }
            let mut pa = PassAdjacency::new(&adj, |_| true);
            pa.second = Some(second_labels(&pa));
            pa.states = Some(pa.state_comps(&kinds, 4, nonadjacent_step));
            pa.make_rw_states(&kinds);
            let sc = pa.states.clone().unwrap_or_default();
            for a in 0..n as u32 {
                let nodes = reachable(&pa, &kinds, (a, 0), None);
                let states = reachable(&pa, &kinds, (a, 1), Some(nonadjacent_step));
                // An rw edge a -> b ruled out lies on no cycle with no two
                // rw steps adjacent: from b, after that rw step, none
                // leads back to a so as to take it again.
                for &(b, e) in pa.out(a) {
                    if kinds[e as usize] == EdgeKind::Rw && !pa.rw_may_close(a, b) {
                        ruled_out[2] += 1;
                        let back = reachable(&pa, &kinds, (b, 1), Some(single_rw_step));
                        assert!(!back.contains(&(a, 0)), "rw {a} -> {b} ruled out");
                    }
                }
                for b in 0..n as u32 {
                    if !pa.may_reach(a, b) {
                        ruled_out[0] += 1;
                        assert!(
                            !nodes.contains(&(b, 0)),
                            "{a} -> {b} ruled out, yet reached"
                        );
                    }
                    if sc[4 * a as usize + 1] < sc[4 * b as usize + 2] {
                        ruled_out[1] += 1;
                        assert!(!states.contains(&(b, 2)), "({a}, 1) -> ({b}, 2) ruled out");
                    }
                }
            }
        }
        // The tests must rule something out to mean anything.
        assert!(
            ruled_out[0] > 1000 && ruled_out[1] > 1000 && ruled_out[2] > 20,
            "{ruled_out:?}"
        );
    }

    #[test]
    fn searches_whose_every_cycle_is_implied_are_silenced() {
        use crate::spec::lattice::implied_anomalies;
        let told = |names: &[&str]| {
            let ts: Vec<AnomalyType> = names
                .iter()
                .filter_map(|n| AnomalyType::parse(n).ok())
                .collect();
            (implied_anomalies(&ts), ts)
        };
        let silenced_after = |shape, keep, names: &[&str]| {
            let (i, n) = told(names);
            silenced(shape, keep, &i, &n)
        };
        use Shape::*;
        // Beside a G-single-item, a G-nonadjacent-item is implied: not
        // told, so not looked for, whichever steps the pass keeps.
        for keep in [data_dep, data_or_session, any_kind] {
            assert!(silenced_after(NonadjacentRw, keep, &["G-single-item"]));
        }
        // Another G-single-item is told beside one.
        assert!(!silenced_after(SingleRw, data_dep, &["G-single-item"]));
        // A G-single-item-process implies no plain G-single-item, which a
        // pass of data steps may find; a pass keeping session steps finds
        // a -process one, told beside it.
        assert!(!silenced_after(
            NonadjacentRw,
            data_dep,
            &["G-single-item-process"]
        ));
        assert!(!silenced_after(
            SingleRw,
            data_or_session,
            &["G-single-item-process"]
        ));
        // A G-single-item-process implies the -process and -realtime
        // G-nonadjacent-items, not the plain one a pass may still find.
        assert!(!silenced_after(
            NonadjacentRw,
            any_kind,
            &["G-single-item-process"]
        ));
        assert!(!silenced_after(
            SingleRw,
            any_kind,
            &["G-single-item", "G2-item"]
        ));
        // Nothing silences a pass that may find any shape, nor an empty
        // component.
        assert!(!silenced_after(
            Any,
            data_dep,
            &["G0", "G1c", "G-single-item"]
        ));
        assert!(!silenced_after(NonadjacentRw, data_dep, &[]));
    }
}
