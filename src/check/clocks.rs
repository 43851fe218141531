//! Causal-order reachability for the causal checker: vector clocks (one
//! entry per session) and tree clocks (Mathur et al., ASPLOS'22).
//!
//! Both answer `a ->CO* b` in O(1): with sessions as chains, `b`'s clock
//! entry for `a`'s session is the highest position there that reaches `b`,
//! so `a` reaches `b` exactly when that entry is at least `a`'s position.
//! Tree clocks make a join cost what it changes instead of the number of
//! sessions, by keeping in a tree who learned what from whom and skipping
//! subtrees already known.

const NONE: u32 = u32::MAX;

use crate::check::graph::Digraph;

/// Vector clocks for many nodes, stored flat.
#[derive(Clone, Debug)]
pub struct Vectors {
    width: usize,
    data: Vec<u32>,
}

impl Vectors {
    /// Clocks for `nodes` nodes over `sessions` sessions, all zero.
    pub fn new(nodes: usize, sessions: usize) -> Vectors {
        Vectors {
            width: sessions,
            data: vec![0; nodes * sessions],
        }
    }

    /// Entries per clock: the sessions.
    pub fn width(&self) -> usize {
        self.width
    }

    #[inline]
    /// Node `node`'s entry for session `session`.
    pub fn get(&self, node: u32, session: u32) -> u32 {
        self.data[node as usize * self.width + session as usize]
    }

    #[inline]
    /// Node `node`'s whole clock, one entry per session.
    pub fn row(&self, node: u32) -> &[u32] {
        let s = node as usize * self.width;
        &self.data[s..s + self.width]
    }

    /// `dst := dst ⊔ src`.
    #[inline]
    pub fn join(&mut self, dst: u32, src: u32) {
        if dst == src {
            return;
        }
        let w = self.width;
        let (d, s) = (dst as usize * w, src as usize * w);
        let (a, b) = if d < s {
            let (lo, hi) = self.data.split_at_mut(s);
            (&mut lo[d..d + w], &hi[..w])
        } else {
            let (lo, hi) = self.data.split_at_mut(d);
            (&mut hi[..w], &lo[s..s + w])
        };
        for (x, y) in a.iter_mut().zip(b) {
            *x = (*x).max(*y);
        }
    }

    #[inline]
    /// Raises node `node`'s entry for `session` to at least `value`.
    pub fn raise(&mut self, node: u32, session: u32, value: u32) {
        let i = node as usize * self.width + session as usize;
        self.data[i] = self.data[i].max(value);
    }
}

/// A chain cover of a DAG's members ([`chains`]): each node's chain and
/// place in it (from 1; [`NONE`] for a node that is no member, which
/// reaches nothing), and how many chains.
pub struct Chains {
    pub chain: Vec<u32>,
    pub pos: Vec<u32>,
    pub count: usize,
}

/// A chain cover of the members of DAG `dg` (`session` gives a member's
/// session, `None` for a node that is none), so that vector clocks need
/// one entry per chain rather than per session. Taken in `topo` order,
/// each member continues the chain of a member with an edge to it that
/// still ends its chain (its session predecessor first, else the first
/// to offer), else starts one; a chain is so ordered by `dg`'s paths, and
/// a session whose members follow each other by edges lies within one.
/// Sessions joined by dependencies share a chain, so that a history of
/// many short sessions (Jepsen gives a crashed client's thread a new
/// process; a format may give every transaction its own session) does
/// not get an entry per session: its clocks would grow with the square
/// of its transactions.
pub fn chains(
    dg: &Digraph,
    topo: &[u32],
    session: impl Fn(u32) -> Option<u32>,
    sessions: usize,
) -> Chains {
    let n = dg.len();
    let mut chain = vec![NONE; n];
    let mut pos = vec![NONE; n];
    let mut tail: Vec<u32> = Vec::new();
    // A member with an edge to each node, offering its chain.
    let mut offer = vec![NONE; n];
    // Each session's last member placed so far.
    let mut last_in = vec![NONE; sessions];
    // Whether member `p` still ends its chain.
    let free =
        |p: u32, chain: &[u32], tail: &[u32]| p != NONE && tail[chain[p as usize] as usize] == p;
    for &a in topo {
        let Some(s) = session(a) else {
            continue;
        };
        let ai = a as usize;
        let sp = last_in[s as usize];
        let from = if free(sp, &chain, &tail) && dg.out(sp).contains(&a) {
            sp
        } else {
            offer[ai]
        };
        if free(from, &chain, &tail) {
            let c = chain[from as usize];
            chain[ai] = c;
            pos[ai] = pos[from as usize] + 1;
            tail[c as usize] = a;
        } else {
            chain[ai] = tail.len() as u32;
            pos[ai] = 1;
            tail.push(a);
        }
        last_in[s as usize] = a;
        for &b in dg.out(a) {
            if !free(offer[b as usize], &chain, &tail) {
                offer[b as usize] = a;
            }
        }
    }
    for c in &mut chain {
        if *c == NONE {
            *c = 0;
        }
    }
    Chains {
        chain,
        pos,
        count: tail.len().max(1),
    }
}

/// One tree clock over `k` sessions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeClock {
    root: u32,
    clk: Vec<u32>,
    /// The parent's entry when this entry was learned through it.
    aclk: Vec<u32>,
    parent: Vec<u32>,
    /// Children in decreasing `aclk` order, as a linked list.
    first: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl TreeClock {
    /// A zero clock over `k` sessions, rooted at session `root`.
    pub fn new(k: usize, root: u32) -> TreeClock {
        TreeClock {
            root,
            clk: vec![0; k],
            aclk: vec![0; k],
            parent: vec![NONE; k],
            first: vec![NONE; k],
            next: vec![NONE; k],
            prev: vec![NONE; k],
        }
    }

    #[inline]
    /// The entry for session `s`.
    pub fn get(&self, s: u32) -> u32 {
        self.clk[s as usize]
    }

    /// Raises the root's own entry. Do it before joining what the new
    /// position learns: an entry attached at root time `c` is taken as known
    /// by anyone who knows the root at `c`.
    pub fn set_root(&mut self, value: u32) {
        let r = self.root as usize;
        self.clk[r] = self.clk[r].max(value);
    }

    fn in_tree(&self, u: u32) -> bool {
        u == self.root || self.parent[u as usize] != NONE
    }

    fn detach(&mut self, u: u32) {
        let ui = u as usize;
        let p = self.parent[ui];
        if p == NONE {
            return;
        }
        let (pv, nx) = (self.prev[ui], self.next[ui]);
        if pv == NONE {
            self.first[p as usize] = nx;
        } else {
            self.next[pv as usize] = nx;
        }
        if nx != NONE {
            self.prev[nx as usize] = pv;
        }
        self.parent[ui] = NONE;
        self.prev[ui] = NONE;
        self.next[ui] = NONE;
    }

    /// Attaches `u` under `p`, keeping children in decreasing `aclk`.
    fn attach(&mut self, u: u32, p: u32, aclk: u32) {
        let ui = u as usize;
        self.parent[ui] = p;
        self.aclk[ui] = aclk;
        let mut before = NONE;
        let mut cur = self.first[p as usize];
        while cur != NONE && self.aclk[cur as usize] > aclk {
            before = cur;
            cur = self.next[cur as usize];
        }
        self.prev[ui] = before;
        self.next[ui] = cur;
        if before == NONE {
            self.first[p as usize] = u;
        } else {
            self.next[before as usize] = u;
        }
        if cur != NONE {
            self.prev[cur as usize] = u;
        }
    }

    /// `self := self ⊔ other`, touching only entries `other` improves.
    /// Returns how many entries changed.
    pub fn join(&mut self, other: &TreeClock) -> usize {
        let or = other.root;
        if other.clk[or as usize] <= self.clk[or as usize] {
            return 0;
        }
        // Nodes of `other` that carry news, parents before children. A
        // child learned before what we already know of its parent is known,
        // and so are its later-sorted siblings.
        let mut updated: Vec<u32> = Vec::new();
        let mut stack = vec![or];
        while let Some(u) = stack.pop() {
            updated.push(u);
            let known_u = self.clk[u as usize];
            let mut v = other.first[u as usize];
            while v != NONE {
                let vi = v as usize;
                if other.clk[vi] > self.clk[vi] {
                    stack.push(v);
                } else if other.aclk[vi] <= known_u {
                    break;
                }
                v = other.next[vi];
            }
        }
        for &u in &updated {
            if u != self.root {
                self.detach(u);
            }
        }
        for &u in &updated {
            let ui = u as usize;
            self.clk[ui] = self.clk[ui].max(other.clk[ui]);
            if u == self.root {
                continue;
            }
            let (p, a) = if u == or {
                (self.root, self.clk[self.root as usize])
            } else {
                (other.parent[ui], other.aclk[ui])
            };
            // The parent may be our root, which is always in the tree.
            let p = if self.in_tree(p) || p == self.root {
                p
            } else {
                self.root
            };
            self.attach(u, p, a);
        }
        updated.len()
    }

    /// A copy of `self` rooted elsewhere is not needed here: a transaction
    /// starts from its session predecessor's clock, which has the same root.
    pub fn entries(&self) -> &[u32] {
        &self.clk
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    /// Numbers below `n`, pseudo-random from `seed` (xorshift).
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// A random DAG of sessions; clocks by vectors and by tree clocks must
    /// agree with each other and with brute-force reachability.
    #[test]
    fn tree_clocks_agree_with_vectors() {
        let mut rnd = xorshift(0x9E3779B97F4A7C15);
        for _round in 0..200 {
            let k = 1 + rnd(6) as usize;
            let per = 1 + rnd(8) as usize;
            let n = k * per;
            // node = session * per + pos; edges go from earlier "time" only
            // (time = pos * k + session), so the graph is acyclic.
            let time = |v: usize| (v % per) * k + v / per;
            let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
            for v in 0..n {
                for u in 0..n {
                    if u / per != v / per && time(u) < time(v) && rnd(4) == 0 {
                        preds[v].push(u);
                    }
                }
            }
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&v| time(v));
            let mut vecs = Vectors::new(n, k);
            let mut trees: Vec<TreeClock> = (0..n)
                .map(|v| TreeClock::new(k, (v / per) as u32))
                .collect();
            for &v in &order {
                let (s, pos) = (v / per, v % per);
                if pos > 0 {
                    vecs.join(v as u32, (v - 1) as u32);
                    trees[v] = trees[v - 1].clone();
                }
                // Own entry first: what this node learns is attributed to it.
                trees[v].set_root(pos as u32 + 1);
                for &u in &preds[v] {
                    vecs.join(v as u32, u as u32);
                    let src = trees[u].clone();
                    trees[v].join(&src);
                }
                vecs.raise(v as u32, s as u32, pos as u32 + 1);
            }
            // Brute-force reachability.
            let mut reach = vec![vec![false; n]; n];
            for &v in &order {
                reach[v][v] = true;
                let (s, pos) = (v / per, v % per);
                let mut from: Vec<usize> = preds[v].clone();
                if pos > 0 {
                    from.push(s * per + pos - 1);
                }
                for u in from {
                    for w in 0..n {
                        if reach[u][w] {
                            reach[v][w] = true;
                        }
                    }
                }
            }
            for v in 0..n {
                assert_eq!(
                    vecs.row(v as u32),
                    trees[v].entries(),
                    "round {_round} node {v}"
                );
                for u in 0..n {
                    let (su, pu) = (u / per, u % per);
                    let by_clock = vecs.get(v as u32, su as u32) > pu as u32;
                    assert_eq!(by_clock, reach[v][u], "reach {u} -> {v}");
                }
            }
        }
    }

    /// Many short sessions over a random DAG (each edge forward in node
    /// order, session order among the edges): clocks over a chain cover
    /// answer reachability exactly, with fewer entries than sessions.
    #[test]
    fn a_chain_cover_answers_reachability_with_fewer_entries() {
        let mut rnd = xorshift(0x2545F4914F6CDD1D);
        let mut fewer = 0;
        for round in 0..100 {
            let n = 20 + rnd(60) as usize;
            // Sessions of 1-3 nodes, consecutive in node order; some
            // nodes are no members (left out of the cover).
            let mut session = vec![0u32; n];
            let mut sessions = 0;
            let mut v = 0;
            while v < n {
                let len = 1 + rnd(3) as usize;
                for x in v..(v + len).min(n) {
                    session[x] = sessions;
                }
                sessions += 1;
                v += len;
            }
            let member: Vec<bool> = (0..n).map(|_| rnd(8) != 0).collect();
            let mut edges: Vec<(u32, u32)> = Vec::new();
            for b in 1..n {
                if session[b] == session[b - 1] {
                    edges.push((b as u32 - 1, b as u32));
                }
                for _ in 0..rnd(3) {
                    edges.push((rnd(b as u64) as u32, b as u32));
                }
            }
            let dg = Digraph::from_edges(n, &edges);
            let topo: Vec<u32> = (0..n as u32).collect();
            let c = chains(
                &dg,
                &topo,
                |a| member[a as usize].then_some(session[a as usize]),
                sessions as usize,
            );
            fewer += usize::from(c.count < sessions as usize);
            let mut vecs = Vectors::new(n, c.count);
            for &a in &topo {
                if member[a as usize] {
                    vecs.raise(a, c.chain[a as usize], c.pos[a as usize]);
                }
                for &b in dg.out(a) {
                    vecs.join(b, a);
                }
            }
            // Brute force: every node's descendants.
            let mut reach = vec![vec![false; n]; n];
            for a in (0..n).rev() {
                reach[a][a] = true;
                for &b in dg.out(a as u32) {
                    for w in 0..n {
                        if reach[b as usize][w] {
                            reach[a][w] = true;
                        }
                    }
                }
            }
            for a in (0..n).filter(|&a| member[a]) {
                for b in 0..n {
                    let by_clock = vecs.get(b as u32, c.chain[a]) >= c.pos[a];
                    assert_eq!(by_clock, reach[a][b], "round {round}: {a} -> {b}");
                }
            }
            assert!((0..n).all(|a| member[a] || c.pos[a] == NONE));
        }
        assert!(fewer > 90, "{fewer}");
    }
}
