//! Compact directed graphs over transactions and the walks the checkers
//! need: strongly connected components, topological orders and shortest
//! paths, all iterative
//! (session chains of 100k nodes overflow recursive walks).

/// Groups `(bucket, item)` pairs by bucket, a counting sort that keeps
/// each bucket's items in order: bucket `b`'s are
/// `items[offsets[b]..offsets[b + 1]]`. Buckets are below `n`.
pub fn group<T: Copy>(n: usize, pairs: &[(u32, T)]) -> (Vec<u32>, Vec<T>) {
    let mut offsets = vec![0u32; n + 1];
    let Some(&(_, blank)) = pairs.first() else {
        return (offsets, Vec::new());
    };
    for &(b, _) in pairs {
        offsets[b as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut items = vec![blank; pairs.len()];
    for &(b, it) in pairs {
        items[fill[b as usize] as usize] = it;
        fill[b as usize] += 1;
    }
    (offsets, items)
}

/// A directed graph in compressed sparse row form.
#[derive(Clone, Debug, Default)]
pub struct Digraph {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Digraph {
    /// Builds a graph on `n` nodes from its edges (duplicates allowed).
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Digraph {
        let (offsets, targets) = group(n, edges);
        Digraph { offsets, targets }
    }

    /// A graph from its rows (see [`Digraph::csr`]): `offsets` has one
    /// more entry than there are nodes, ascending, the last
    /// `targets.len()`.
    pub fn from_csr(offsets: Vec<u32>, targets: Vec<u32>) -> Digraph {
        debug_assert_eq!(offsets.last().map_or(0, |&l| l as usize), targets.len());
        Digraph { offsets, targets }
    }

    /// The same graph with every edge reversed.
    pub fn reversed(&self) -> Digraph {
        let n = self.len();
        let mut edges = Vec::with_capacity(self.targets.len());
        for a in 0..n {
            for &b in self.out(a as u32) {
                edges.push((b, a as u32));
            }
        }
        Digraph::from_edges(n, &edges)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// The rows: node `a`'s targets are `targets[offsets[a]..offsets[a + 1]]`.
    pub fn csr(&self) -> (&[u32], &[u32]) {
        (&self.offsets, &self.targets)
    }

    #[inline]
    /// Node `a`'s targets.
    pub fn out(&self, a: u32) -> &[u32] {
        let a = a as usize;
        &self.targets[self.offsets[a] as usize..self.offsets[a + 1] as usize]
    }
}

/// Strongly connected components (Tarjan's algorithm, iteratively).
/// Components come out in reverse topological order: a component's
/// successors are numbered before it.
pub struct Sccs {
    /// Component of each node.
    pub comp: Vec<u32>,
    /// Number of nodes in each component.
    pub sizes: Vec<u32>,
}

impl Sccs {
    /// Number of components.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }

    /// Components with more than one node, or a self-loop.
    pub fn cyclic(&self, g: &Digraph) -> Vec<u32> {
        let mut out: Vec<u32> = (0..self.count() as u32)
            .filter(|&c| self.sizes[c as usize] > 1)
            .collect();
        for a in 0..g.len() as u32 {
            if self.sizes[self.comp[a as usize] as usize] == 1 && g.out(a).contains(&a) {
                out.push(self.comp[a as usize]);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Members of each component.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut m: Vec<Vec<u32>> = self
            .sizes
            .iter()
            .map(|&s| Vec::with_capacity(s as usize))
            .collect();
        for (v, &c) in self.comp.iter().enumerate() {
            m[c as usize].push(v as u32);
        }
        m
    }
}

/// The strongly connected components of `g` (see [`Sccs`]).
pub fn sccs(g: &Digraph) -> Sccs {
    const NONE: u32 = u32::MAX;
    let n = g.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![NONE; n];
    let mut sizes = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    // (node, next edge position)
    let mut call: Vec<(u32, u32)> = Vec::new();
    let mut next = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != NONE {
            continue;
        }
        call.push((root, 0));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            let out = g.out(v);
            if (*i as usize) < out.len() {
                let w = out[*i as usize];
                *i += 1;
                if index[w as usize] == NONE {
                    index[w as usize] = next;
                    low[w as usize] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    call.push((w, 0));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            call.pop();
            if let Some(&(parent, _)) = call.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let c = sizes.len() as u32;
                let mut size = 0;
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    comp[w as usize] = c;
                    size += 1;
                    if w == v {
                        break;
                    }
                }
                sizes.push(size);
            }
        }
    }
    Sccs { comp, sizes }
}

/// Reachability among all nodes of a graph, cyclic or not, as one bitset
/// per strongly connected component: `reaches(a, b)` when a path of zero
/// or more edges leads from `a` to `b`.
pub struct Closure {
    comp: Vec<u32>,
    words: usize,
    bits: Vec<u64>,
}

impl Closure {
    /// The closure of `g`: each component's set is its members and its
    /// successors' sets (successors are numbered first, see [`Sccs`]).
    /// Costs a word per node per component and per edge between
    /// components.
    pub fn of(g: &Digraph) -> Closure {
        let s = sccs(g);
        let words = g.len().div_ceil(64).max(1);
        let mut bits = vec![0u64; s.count() * words];
        let members = s.members();
        for (c, ms) in members.iter().enumerate() {
            for &v in ms {
                bits[c * words + (v as usize >> 6)] |= 1 << (v & 63);
            }
            for &v in ms {
                for &w in g.out(v) {
                    let d = s.comp[w as usize] as usize;
                    if d != c {
                        // Successors' sets are done (numbered before).
                        let (lo, hi) = bits.split_at_mut(c * words);
                        for (x, y) in hi[..words]
                            .iter_mut()
                            .zip(&lo[d * words..d * words + words])
                        {
                            *x |= *y;
                        }
                    }
                }
            }
        }
        Closure {
            comp: s.comp,
            words,
            bits,
        }
    }

    /// Whether `a` reaches `b`.
    pub fn reaches(&self, a: u32, b: u32) -> bool {
        let c = self.comp[a as usize] as usize;
        self.bits[c * self.words + (b as usize >> 6)] & (1 << (b & 63)) != 0
    }
}

/// A shortest path from `from` to `to` (both included) through nodes for
/// which `allowed` holds, by breadth-first search.
pub fn shortest_path(
    g: &Digraph,
    from: u32,
    to: u32,
    allowed: impl Fn(u32) -> bool,
) -> Option<Vec<u32>> {
    use rustc_hash::FxHashMap;
    let mut parent: FxHashMap<u32, u32> = FxHashMap::default();
    let mut queue = std::collections::VecDeque::new();
    queue.push_back(from);
    parent.insert(from, from);
    while let Some(v) = queue.pop_front() {
        for &w in g.out(v) {
            if w == to {
                let mut path = vec![to, v];
                let mut x = v;
                while x != from {
                    x = parent[&x];
                    path.push(x);
                }
                path.reverse();
                return Some(path);
            }
            if allowed(w) && !parent.contains_key(&w) {
                parent.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    None
}

/// Kahn's topological order of a graph, or None if it has a cycle.
pub fn topo_order(g: &Digraph, nodes: &[bool]) -> Option<Vec<u32>> {
    let n = g.len();
    let mut indeg = vec![0u32; n];
    for a in 0..n as u32 {
        for &b in g.out(a) {
            indeg[b as usize] += 1;
        }
    }
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&v| nodes[v as usize] && indeg[v as usize] == 0)
        .collect();
    let mut i = 0;
    while i < order.len() {
        let a = order[i];
        i += 1;
        for &b in g.out(a) {
            indeg[b as usize] -= 1;
            if indeg[b as usize] == 0 {
                order.push(b);
            }
        }
    }
    (order.len() == nodes.iter().filter(|&&b| b).count()).then_some(order)
}

/// A topological order that, among nodes free to go next, takes the one
/// with the lowest priority first (Kahn's algorithm with a heap).
pub fn topo_order_by(g: &Digraph, nodes: &[bool], priority: &[u64]) -> Option<Vec<u32>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = g.len();
    let mut indeg = vec![0u32; n];
    for a in 0..n as u32 {
        for &b in g.out(a) {
            indeg[b as usize] += 1;
        }
    }
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .filter(|&v| nodes[v as usize] && indeg[v as usize] == 0)
        .map(|v| Reverse((priority[v as usize], v)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, a))) = heap.pop() {
        order.push(a);
        for &b in g.out(a) {
            indeg[b as usize] -= 1;
            if indeg[b as usize] == 0 {
                heap.push(Reverse((priority[b as usize], b)));
            }
        }
    }
    (order.len() == nodes.iter().filter(|&&b| b).count()).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sccs_of_a_small_graph() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3, 3 -> 4, 4 -> 4
        let g = Digraph::from_edges(5, &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 4)]);
        let s = sccs(&g);
        assert_eq!(s.comp[0], s.comp[1]);
        assert_eq!(s.comp[1], s.comp[2]);
        assert_ne!(s.comp[2], s.comp[3]);
        assert_eq!(s.count(), 3);
        // Successors come first.
        assert!(s.comp[4] < s.comp[3] && s.comp[3] < s.comp[0]);
        assert_eq!(s.cyclic(&g).len(), 2);
        assert_eq!(shortest_path(&g, 0, 0, |_| true), Some(vec![0, 1, 2, 0]));
        assert_eq!(shortest_path(&g, 3, 0, |_| true), None);
        let c = Closure::of(&g);
        assert!(c.reaches(0, 0) && c.reaches(1, 0) && c.reaches(0, 4) && c.reaches(3, 4));
        assert!(!c.reaches(3, 0) && !c.reaches(4, 3));
    }

    #[test]
    fn long_chains_do_not_overflow() {
        let n = 300_000u32;
        let mut edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        edges.push((n - 1, 0));
        let g = Digraph::from_edges(n as usize, &edges);
        let s = sccs(&g);
        assert_eq!(s.count(), 1);
        assert_eq!(s.sizes[0], n);
    }
}
