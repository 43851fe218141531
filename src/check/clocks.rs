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

    /// A random DAG of sessions; clocks by vectors and by tree clocks must
    /// agree with each other and with brute-force reachability.
    #[test]
    fn tree_clocks_agree_with_vectors() {
        let mut seed = 0x9E3779B97F4A7C15u64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
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
}
