//! Every anomaly type: Elle's (`implied-anomalies` and the names its
//! `direct-proscribed-anomalies` uses), C4's patterns under kebab-case
//! names, and ours (`thin-air-read`); which imply which; and which elle-si
//! checkers can report each.

use std::collections::BTreeSet;

use super::{Checker, named};

named! {
    /// An anomaly type, by the name Elle (or C4, kebab-cased) gives it.
    pub enum AnomalyType {
        G0 = "G0",
        G0Process = "G0-process",
        G0Realtime = "G0-realtime",
        G1a = "G1a",
        G1b = "G1b",
        G1c = "G1c",
        G1cProcess = "G1c-process",
        G1cRealtime = "G1c-realtime",
        G1 = "G1",
        G1Process = "G1-process",
        G1Realtime = "G1-realtime",
        GSingleItem = "G-single-item",
        GSingleItemProcess = "G-single-item-process",
        GSingleItemRealtime = "G-single-item-realtime",
        GSingle = "G-single",
        GSingleProcess = "G-single-process",
        GSingleRealtime = "G-single-realtime",
        GNonadjacentItem = "G-nonadjacent-item",
        GNonadjacentItemProcess = "G-nonadjacent-item-process",
        GNonadjacentItemRealtime = "G-nonadjacent-item-realtime",
        GNonadjacent = "G-nonadjacent",
        GNonadjacentProcess = "G-nonadjacent-process",
        GNonadjacentRealtime = "G-nonadjacent-realtime",
        G2 = "G2",
        G2Process = "G2-process",
        G2Realtime = "G2-realtime",
        G2Item = "G2-item",
        G2ItemProcess = "G2-item-process",
        G2ItemRealtime = "G2-item-realtime",
        GSIa = "GSIa",
        GSIb = "GSIb",
        GSI = "GSI",
        IncompatibleOrder = "incompatible-order",
        FutureRead = "future-read",
        DirtyUpdate = "dirty-update",
        LostUpdate = "lost-update",
        WriteSkew = "write-skew",
        Internal = "internal",
        GCursor = "G-cursor",
        GMonotonic = "G-monotonic",
        GMsr = "G-MSR",
        /// Elle's forward-consistent-view spelling (not `GSIb`).
        GSIbAdya = "G-SIb",
        /// Elle's snapshot-isolation spelling (not `GSI`).
        GSIAdya = "G-SI",
        GUpdate = "G-update",
        PredicateReadMiss = "predicate-read-miss",
        DuplicateElements = "duplicate-elements",
        CyclicVersions = "cyclic-versions",
        Pl1CycleExists = "PL-1-cycle-exists",
        Pl2CycleExists = "PL-2-cycle-exists",
        Pl299CycleExists = "PL-2.99-cycle-exists",
        Pl3CycleExists = "PL-3-cycle-exists",
        PlSiCycleExists = "PL-SI-cycle-exists",
        PlSsCycleExists = "PL-SS-cycle-exists",
        StrongSessionPl1CycleExists = "strong-session-PL-1-cycle-exists",
        StrongSessionPl2CycleExists = "strong-session-PL-2-cycle-exists",
        StrongPl1CycleExists = "strong-PL-1-cycle-exists",
        StrongPl2CycleExists = "strong-PL-2-cycle-exists",
        StrongSessionSiCycleExists = "strong-session-snapshot-isolation-cycle-exists",
        StrongSiCycleExists = "strong-snapshot-isolation-cycle-exists",
        StrongSessionSerCycleExists = "strong-session-serializable-cycle-exists",
        // C4's patterns (Plume's names, kebab-cased).
        NotMyOwnWrite = "not-my-own-write",
        NotMyLastWrite = "not-my-last-write",
        NonMonoReadCo = "non-mono-read-co",
        NonMonoReadAo = "non-mono-read-ao",
        NonMonoReadProcess = "non-mono-read-process",
        FracturedReadCo = "fractured-read-co",
        FracturedReadAo = "fractured-read-ao",
        FracturedReadProcess = "fractured-read-process",
        CoConflictAo = "co-conflict-ao",
        ConflictAo = "conflict-ao",
        ConflictProcess = "conflict-process",
        CyclicCo = "cyclic-co",
        NonRepeatableRead = "non-repeatable-read",
        AbortedRead = "aborted-read",
        IntermediateRead = "intermediate-read",
        ThinAirRead = "thin-air-read",
        /// Ours: a cycle prefix consistency forbids (of dependencies, and
        /// anti-dependencies each entered by a read or session step) in
        /// every choice of the write orders; it needs session order.
        PrefixCycleExists = "prefix-cycle-exists",
        /// Ours: a cycle parallel snapshot isolation forbids (with at most
        /// one anti-dependency) in every choice of the write orders; it
        /// needs session order.
        PsiCycleExists = "parallel-snapshot-isolation-cycle-exists",
    }
}

named! {
    /// A C4 (Plume) pattern, by its CamelCase name.
    pub enum Pattern {
        NotMyOwnWrite = "NotMyOwnWrite",
        NotMyLastWrite = "NotMyLastWrite",
        NonRepeatableRead = "NonRepeatableRead",
        AbortedRead = "AbortedRead",
        IntermediateRead = "IntermediateRead",
        ThinAirRead = "ThinAirRead",
        FutureRead = "FutureRead",
        CyclicCo = "CyclicCO",
        NonMonoReadCo = "NonMonoReadCO",
        FracturedReadCo = "FracturedReadCO",
        CoConflictAo = "COConflictAO",
        NonMonoReadAo = "NonMonoReadAO",
        FracturedReadAo = "FracturedReadAO",
        ConflictAo = "ConflictAO",
    }
}

impl Pattern {
    /// The anomaly type of the pattern's kebab-case name.
    pub fn anomaly(self) -> AnomalyType {
        match self {
            Pattern::NotMyOwnWrite => NotMyOwnWrite,
            Pattern::NotMyLastWrite => NotMyLastWrite,
            Pattern::NonRepeatableRead => NonRepeatableRead,
            Pattern::AbortedRead => AbortedRead,
            Pattern::IntermediateRead => IntermediateRead,
            Pattern::ThinAirRead => ThinAirRead,
            Pattern::FutureRead => FutureRead,
            Pattern::CyclicCo => CyclicCo,
            Pattern::NonMonoReadCo => NonMonoReadCo,
            Pattern::FracturedReadCo => FracturedReadCo,
            Pattern::CoConflictAo => CoConflictAo,
            Pattern::NonMonoReadAo => NonMonoReadAo,
            Pattern::FracturedReadAo => FracturedReadAo,
            Pattern::ConflictAo => ConflictAo,
        }
    }
}

named! {
    /// A finding that is no anomaly: why a check could not decide.
    pub enum Marker {
        EmptyTransactionGraph = "empty-transaction-graph",
        CycleSearchTimeout = "cycle-search-timeout",
    }
}

/// What a finding is: an anomaly type, or a marker saying why a check
/// could not decide (Elle files both under `:anomaly-types`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// An anomaly type.
    Anomaly(AnomalyType),
    /// A marker: nothing to check, or no verdict in time.
    Marker(Marker),
}

impl Kind {
    /// The name Elle gives it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Anomaly(a) => a.name(),
            Kind::Marker(m) => m.name(),
        }
    }

    /// The anomaly type, when it is one.
    pub fn anomaly(self) -> Option<AnomalyType> {
        match self {
            Kind::Anomaly(a) => Some(a),
            Kind::Marker(_) => None,
        }
    }

    /// Whether it is a marker.
    pub fn is_marker(self) -> bool {
        matches!(self, Kind::Marker(_))
    }
}

impl From<AnomalyType> for Kind {
    fn from(a: AnomalyType) -> Kind {
        Kind::Anomaly(a)
    }
}

impl From<Marker> for Kind {
    fn from(m: Marker) -> Kind {
        Kind::Marker(m)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An order beyond the data's that closes a cycle: session order or real
/// time (Elle's `-process` / `-realtime` suffixes).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// Session (process) order.
    Process,
    /// Real-time order.
    Realtime,
}

use AnomalyType::*;

/// Anomaly -> the anomalies it is also an instance of: Elle's
/// `implied-anomalies`, plus C4's patterns that are Elle's by another name.
pub(super) const IMPLIED: &[(AnomalyType, &[AnomalyType])] = &[
    (G0, &[G1c, G0Process]),
    (G0Process, &[G1cProcess, G0Realtime]),
    (G0Realtime, &[G1cRealtime]),
    (G1a, &[G1]),
    (G1b, &[G1]),
    (G1c, &[G1, G1cProcess]),
    (G1cProcess, &[G1cRealtime, G1Process]),
    (G1cRealtime, &[G1Realtime]),
    (G1, &[G1Process]),
    (G1Process, &[G1Realtime]),
    (
        GSingleItem,
        &[GSingle, GSingleItemProcess, GNonadjacentItem],
    ),
    (
        GSingleItemProcess,
        &[GSingleProcess, GSingleItemRealtime, GNonadjacentItemProcess],
    ),
    (
        GSingleItemRealtime,
        &[GSingleRealtime, GNonadjacentItemRealtime],
    ),
    (GSingle, &[GNonadjacent, GSIb, GSingleProcess]),
    (GSingleProcess, &[GNonadjacentProcess, GSingleRealtime]),
    (GSingleRealtime, &[GNonadjacentRealtime]),
    (
        GNonadjacentItem,
        &[GNonadjacent, G2Item, GNonadjacentItemProcess],
    ),
    (
        GNonadjacentItemProcess,
        &[GNonadjacentProcess, G2ItemProcess, GNonadjacentItemRealtime],
    ),
    (
        GNonadjacentItemRealtime,
        &[G2ItemRealtime, GNonadjacentRealtime],
    ),
    (GNonadjacent, &[G2, GNonadjacentProcess]),
    (GNonadjacentProcess, &[G2Process, GNonadjacentRealtime]),
    (GNonadjacentRealtime, &[G2Realtime]),
    (G2, &[G2Process]),
    (G2Item, &[G2, G2ItemProcess]),
    (G2ItemProcess, &[G2Process, G2ItemRealtime]),
    (G2ItemRealtime, &[G2Realtime]),
    (G2Process, &[G2Realtime]),
    (GSIa, &[GSI]),
    (GSIb, &[GSI]),
    (IncompatibleOrder, &[G1a]),
    (FutureRead, &[G1c]),
    (DirtyUpdate, &[G1a]),
    (LostUpdate, &[WriteSkew, G2Item]),
    (WriteSkew, &[G2]),
    (AbortedRead, &[G1a]),
    (IntermediateRead, &[G1b]),
    (ThinAirRead, &[G1a]),
    // Ours: every read elle-si takes is an item read, so a cycle in every
    // version order (of G0, G1c or G2-item steps: `PL-3-cycle-exists`) is
    // one PL-2.99 prohibits too (Adya's PL-2.99 differs from PL-3 only on
    // predicate reads).
    (Pl3CycleExists, &[Pl299CycleExists]),
];

/// Each cycle type with its `-process` and `-realtime` variants.
const ORDERED: &[[AnomalyType; 3]] = &[
    [G0, G0Process, G0Realtime],
    [G1c, G1cProcess, G1cRealtime],
    [G1, G1Process, G1Realtime],
    [GSingleItem, GSingleItemProcess, GSingleItemRealtime],
    [GSingle, GSingleProcess, GSingleRealtime],
    [
        GNonadjacentItem,
        GNonadjacentItemProcess,
        GNonadjacentItemRealtime,
    ],
    [GNonadjacent, GNonadjacentProcess, GNonadjacentRealtime],
    [G2Item, G2ItemProcess, G2ItemRealtime],
    [G2, G2Process, G2Realtime],
];

/// Findings that need session (or real-time) order: C4's pattern
/// instances whose visibility or order runs through a session, a cycle of
/// session order and reads (`cyclic-co`), and Elle's cycles through
/// process or real-time steps. They rule out only models that keep
/// sessions: a model that does not (Adya's serializable, SI) never
/// prohibits one, though a weaker model below it in the lattice may (our
/// read atomic keeps sessions, as C4's does).
pub(super) const SESSION: &[AnomalyType] = &[
    CyclicCo,
    NonMonoReadProcess,
    FracturedReadProcess,
    ConflictProcess,
    PrefixCycleExists,
    PsiCycleExists,
    G0Process,
    G0Realtime,
    G1cProcess,
    G1cRealtime,
    G1Process,
    G1Realtime,
    GSingleItemProcess,
    GSingleItemRealtime,
    GSingleProcess,
    GSingleRealtime,
    GNonadjacentItemProcess,
    GNonadjacentItemRealtime,
    GNonadjacentProcess,
    GNonadjacentRealtime,
    G2Process,
    G2Realtime,
    G2ItemProcess,
    G2ItemRealtime,
];

/// Whether a set of prohibited anomalies asks the polygraph's checkers
/// only for cycles `ruled_out` holds (none a version order needs): what
/// those checkers tell then cannot decide it.
pub fn settled_without_polygraph(
    prohibited: &BTreeSet<AnomalyType>,
    ruled_out: &BTreeSet<AnomalyType>,
) -> bool {
    !ruled_out.is_empty()
        && prohibited
            .iter()
            .filter(|a| a.polygraph_finds())
            .all(|a| ruled_out.contains(a))
}

/// An anomaly name no anomaly type has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAnomaly(pub String);

impl std::fmt::Display for UnknownAnomaly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known: Vec<&str> = AnomalyType::ALL.iter().map(|a| a.name()).collect();
        super::unknown_name(f, "anomaly type", &self.0, "known types", &known)
    }
}

impl AnomalyType {
    /// Parses a name, with or without a leading colon.
    pub fn parse(name: &str) -> Result<AnomalyType, UnknownAnomaly> {
        AnomalyType::from_name(name.trim().trim_start_matches(':'))
            .ok_or_else(|| UnknownAnomaly(name.to_string()))
    }

    /// The cycle type closed by `order` too (`G0` -> `G0-process`; a
    /// `-process` type with real time becomes `-realtime`: real time is what
    /// the cycle rests on then); a type that has no such variant, or says as
    /// much already, stays as it is.
    pub fn with_order(self, order: Order) -> AnomalyType {
        ORDERED
            .iter()
            .find(|t| t.contains(&self))
            .map_or(self, |&[base, process, realtime]| match order {
                Order::Process if self == base => process,
                Order::Process => self,
                Order::Realtime => realtime,
            })
    }

    /// The model a `*-cycle-exists` marker stands for (`PL-SI` for
    /// `PL-SI-cycle-exists`), as Elle names it in `:anomaly-spec-type`.
    pub fn cycle_exists_model(self) -> Option<&'static str> {
        self.name().strip_suffix("-cycle-exists")
    }

    /// The anomaly types this one is directly also an instance of.
    pub fn implies(self) -> &'static [AnomalyType] {
        IMPLIED
            .iter()
            .find(|(a, _)| *a == self)
            .map_or(&[], |p| p.1)
    }

    /// Whether only models that keep sessions prohibit it.
    pub fn is_session(self) -> bool {
        SESSION.contains(&self)
    }

    /// The checkers that can report an anomaly of exactly this type (an
    /// anomaly implying it is looked for by its own finders). Empty when
    /// no checker of elle-si reports it.
    pub fn finders(self) -> &'static [Checker] {
        use Checker as C;
        const SI: C = C::SnapshotIsolation {
            session: false,
            realtime: false,
        };
        const SI_P: C = C::SnapshotIsolation {
            session: true,
            realtime: false,
        };
        const SI_R: C = C::SnapshotIsolation {
            session: true,
            realtime: true,
        };
        const SER: C = C::Serializable {
            session: false,
            realtime: false,
        };
        const SER_P: C = C::Serializable {
            session: true,
            realtime: false,
        };
        const SER_R: C = C::Serializable {
            session: true,
            realtime: true,
        };
        const RC: C = C::ReadCommittedC4 { sessions: false };
        const RC_P: C = C::ReadCommittedC4 { sessions: true };
        match self {
            G1a | G1b | Internal | DirtyUpdate | LostUpdate | FutureRead | IncompatibleOrder
            | DuplicateElements | ThinAirRead | AbortedRead | IntermediateRead
            | NonRepeatableRead | CyclicVersions => &[C::Basic],
            G0 | G1c => &[RC, SI],
            G0Process | G1cProcess => &[RC_P, SI_P],
            G0Realtime | G1cRealtime => &[SI_R],
            GSingleItem | GNonadjacentItem => &[SI],
            GSingleItemProcess | GNonadjacentItemProcess => &[SI_P],
            GSingleItemRealtime | GNonadjacentItemRealtime => &[SI_R],
            G2Item => &[SER],
            G2ItemProcess => &[SER_P],
            G2ItemRealtime => &[SER_R],
            PlSiCycleExists => &[SI],
            StrongSessionSiCycleExists => &[SI_P],
            StrongSiCycleExists => &[SI_R],
            Pl3CycleExists => &[SER],
            StrongSessionSerCycleExists => &[SER_P],
            PlSsCycleExists => &[SER_R],
            NotMyOwnWrite | NotMyLastWrite | NonMonoReadCo | NonMonoReadAo => &[RC],
            NonMonoReadProcess | CyclicCo => &[RC_P],
            FracturedReadCo | FracturedReadAo | FracturedReadProcess => &[C::ReadAtomic],
            CoConflictAo | ConflictAo | ConflictProcess => &[C::Causal],
            PrefixCycleExists => &[C::Prefix],
            PsiCycleExists => &[C::ParallelSnapshotIsolation],
            // Unions of other types (G1, G-single, G2, ...), found through
            // the types that imply them; and what no checker reports
            // (predicate reads, Adya's cursor and monotonic phenomena,
            // cycle-exists markers of levels without a complete checker).
            _ => &[],
        }
    }

    /// Whether a checker over the dependency polygraph can report it.
    pub fn polygraph_finds(self) -> bool {
        self.finders().iter().any(|c| c.is_polygraph())
    }
}

/// The checkers that can report an anomaly of any of these types.
pub fn finders<'a>(anomalies: impl IntoIterator<Item = &'a AnomalyType>) -> BTreeSet<Checker> {
    anomalies
        .into_iter()
        .flat_map(|a| a.finders().iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_names() {
        // Each pattern's anomaly is its CamelCase name kebab-cased.
        for p in Pattern::ALL {
            let mut kebab = String::new();
            let chars: Vec<char> = p.name().chars().collect();
            for (i, &c) in chars.iter().enumerate() {
                let prev = i.checked_sub(1).map(|j| chars[j]);
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                if c.is_ascii_uppercase()
                    && prev.is_some_and(|q| {
                        q.is_ascii_lowercase() || (q.is_ascii_uppercase() && next_lower)
                    })
                {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            assert_eq!(p.anomaly().name(), kebab, "{p}");
        }
    }

    #[test]
    fn names_parse_back() {
        for a in AnomalyType::ALL {
            assert_eq!(AnomalyType::parse(a.name()), Ok(*a));
        }
        assert_eq!(AnomalyType::parse(":G2-item"), Ok(G2Item));
        assert!(
            AnomalyType::parse("G3")
                .unwrap_err()
                .to_string()
                .contains("G2-item")
        );
    }
}
