//! Naming a dependency cycle the way Elle does (`elle.txn`): by its
//! anti-dependencies, then read dependencies, then write dependencies, with
//! `-process` / `-realtime` when session or real-time order closes it; and
//! recognising the shapes engineers know by name; and the relation of a
//! cycle's step ([`Rel`]).
//!
//! - one rw edge: G-single-item (read skew; with two transactions and one
//!   key, a lost update);
//! - several rw edges, none adjacent: G-nonadjacent-item (a long fork when
//!   two readers each miss the other's writer);
//! - adjacent rw edges: G2-item (write skew with two transactions);
//! - wr and ww only: G1c; ww only: G0.

use super::{AnomalyType, Order};

/// A step's relation, as Elle labels it (`:ww`, `:wr`, `:rw`, `:process`,
/// `:realtime`), and C4's `:ao`: the arbitration order, which for two
/// writers of a key is their version order; a read of one writer's
/// version, though the other was visible to the reader, puts the other
/// first (C4's Ext axiom).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rel {
    /// Write-write: a later version of the same key.
    Ww,
    /// Write-read: a read of the write.
    Wr,
    /// Read-write: an anti-dependency (the read missed the write).
    Rw,
    /// Session order.
    Process,
    /// Real time: one completed before the other was invoked.
    Realtime,
    /// C4's arbitration order (no dependency to show).
    Ao,
}

impl Rel {
    /// Elle's keyword for the relation, without the colon.
    pub fn name(self) -> &'static str {
        match self {
            Rel::Ww => "ww",
            Rel::Wr => "wr",
            Rel::Rw => "rw",
            Rel::Process => "process",
            Rel::Realtime => "realtime",
            Rel::Ao => "ao",
        }
    }
}

/// Elle's anomaly type for a cycle with these steps, in order.
pub fn name(steps: &[Rel]) -> AnomalyType {
    name_resting(steps, &[])
}

/// Elle's anomaly type for a cycle with these steps, in order, some of
/// which rest on these further orders (session order or real time, which
/// a write order the steps need came from): the orders count toward the
/// `-process` / `-realtime` suffix as steps of theirs would, not toward
/// the cycle's shape.
pub fn name_resting(steps: &[Rel], rests: &[Rel]) -> AnomalyType {
    let rw = steps.iter().filter(|&&r| r == Rel::Rw).count();
    let n = steps.len();
    let adjacent = (0..n).any(|i| steps[i] == Rel::Rw && steps[(i + 1) % n] == Rel::Rw);
    let base = if rw == 1 {
        AnomalyType::GSingleItem
    } else if rw > 1 {
        if adjacent {
            AnomalyType::G2Item
        } else {
            AnomalyType::GNonadjacentItem
        }
    } else if steps.contains(&Rel::Wr) {
        AnomalyType::G1c
    } else {
        AnomalyType::G0
    };
    let has = |r: Rel| steps.contains(&r) || rests.contains(&r);
    if has(Rel::Realtime) {
        base.with_order(Order::Realtime)
    } else if has(Rel::Process) {
        base.with_order(Order::Process)
    } else {
        base
    }
}

/// The everyday name of a cycle's shape, when it has one. `keys` are the
/// keys of the data steps (None for session or real-time steps).
pub fn shape(steps: &[Rel], keys: &[Option<u32>]) -> Option<&'static str> {
    let data_keys: Vec<u32> = keys.iter().flatten().copied().collect();
    let one_key = data_keys.windows(2).all(|w| w[0] == w[1]);
    match steps {
        [Rel::Ww, Rel::Rw] | [Rel::Rw, Rel::Ww] if one_key => Some("lost-update"),
        [Rel::Rw, Rel::Rw] if !one_key => Some("write-skew"),
        _ => {
            let n = steps.len();
            let rw = steps.iter().filter(|&&r| r == Rel::Rw).count();
            let wr = steps.iter().filter(|&&r| r == Rel::Wr).count();
            let alternating =
                n == 4 && rw == 2 && wr == 2 && (0..n).all(|i| steps[i] != steps[(i + 1) % n]);
            (alternating && !one_key).then_some("long-fork")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Rel::*;

    #[test]
    fn elle_names() {
        assert_eq!(name(&[Rw, Ww]).name(), "G-single-item");
        assert_eq!(name(&[Wr, Rw, Wr, Rw]).name(), "G-nonadjacent-item");
        assert_eq!(name(&[Rw, Rw]).name(), "G2-item");
        assert_eq!(name(&[Ww, Wr]).name(), "G1c");
        assert_eq!(name(&[Ww, Ww]).name(), "G0");
        assert_eq!(name(&[Ww, Process]).name(), "G0-process");
        assert_eq!(
            name(&[Rw, Process, Realtime]).name(),
            "G-single-item-realtime"
        );
        // Adjacency wraps around.
        assert_eq!(name(&[Rw, Wr, Rw]).name(), "G2-item");
    }

    #[test]
    fn what_steps_rest_on_names_the_suffix_not_the_shape() {
        // Two rw steps adjacent across the wrap, one resting on session
        // order: a G2-item-process, not a G-nonadjacent one.
        assert_eq!(
            name_resting(&[Rw, Process, Rw], &[Process]).name(),
            "G2-item-process"
        );
        assert_eq!(
            name_resting(&[Rw, Wr, Rw, Wr], &[Realtime]).name(),
            "G-nonadjacent-item-realtime"
        );
        assert_eq!(
            name_resting(&[Rw, Wr], &[Process, Realtime]).name(),
            "G-single-item-realtime"
        );
        assert_eq!(name_resting(&[Rw, Rw], &[]).name(), name(&[Rw, Rw]).name());
    }

    #[test]
    fn shapes() {
        assert_eq!(shape(&[Ww, Rw], &[Some(1), Some(1)]), Some("lost-update"));
        assert_eq!(shape(&[Rw, Rw], &[Some(1), Some(2)]), Some("write-skew"));
        assert_eq!(
            shape(&[Wr, Rw, Wr, Rw], &[Some(1), Some(2), Some(2), Some(1)]),
            Some("long-fork")
        );
        assert_eq!(shape(&[Ww, Wr], &[Some(1), Some(1)]), None);
    }
}
