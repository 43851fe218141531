//! Every consistency model of Elle's `elle.consistency-model` (canonical
//! names, friendly names, the `models` graph and `all-models`), plus C4's
//! stricter read committed under names of its own; short aliases for the
//! CLI; and which checker decides each.

use super::{AnomalyType, Checker, Decider, named};

named! {
    /// A consistency model, by Elle's canonical name.
    pub enum Model {
        ReadUncommitted = "PL-1",
        ReadCommitted = "PL-2",
        CursorStability = "PL-CS",
        MonotonicView = "PL-2L",
        MonotonicSnapshotRead = "PL-MSR",
        ConsistentView = "PL-2+",
        ForwardConsistentView = "PL-FCV",
        UpdateSerializable = "PL-3U",
        RepeatableRead = "PL-2.99",
        SnapshotIsolation = "PL-SI",
        Serializable = "PL-3",
        StrictSerializable = "PL-SS",
        ViewSerializable = "view-serializable",
        MonotonicAtomicView = "monotonic-atomic-view",
        ReadAtomic = "read-atomic",
        CausalCerone = "causal-cerone",
        ParallelSnapshotIsolation = "parallel-snapshot-isolation",
        Prefix = "prefix",
        /// Elle 0.2.8's `update-atomic`; newer Elle calls it `ROLA`.
        UpdateAtomic = "update-atomic",
        SessionSerializable = "session-serializable",
        OneSr = "1SR",
        Linearizable = "linearizable",
        Sequential = "sequential",
        Causal = "causal",
        WritesFollowReads = "writes-follow-reads",
        Pram = "PRAM",
        MonotonicReads = "monotonic-reads",
        MonotonicWrites = "monotonic-writes",
        ReadYourWrites = "read-your-writes",
        StrongSessionReadUncommitted = "strong-session-PL-1",
        StrongSessionReadCommitted = "strong-session-PL-2",
        StrongReadUncommitted = "strong-PL-1",
        StrongReadCommitted = "strong-PL-2",
        StrongSessionSnapshotIsolation = "strong-session-snapshot-isolation",
        StrongSnapshotIsolation = "strong-snapshot-isolation",
        StrongSessionSerializable = "strong-session-serializable",
        /// Ours: read committed as C4, Plume and Biswas & Enea define it
        /// (reads observe a prefix of each writer's commit order: no
        /// non-monotonic reads within a transaction), without session order.
        ReadCommittedC4 = "read-committed-c4",
        /// Ours: C4's read committed with session order.
        StrongSessionReadCommittedC4 = "strong-session-read-committed-c4",
    }
}

use Model::*;

/// Friendly names (Elle's `canonical-model-names`, plus ours). The first
/// entry for a model is the one printed.
const FRIENDLY: &[(&str, Model)] = &[
    ("consistent-view", ConsistentView),
    ("serializable", Serializable),
    ("conflict-serializable", Serializable),
    ("cursor-stability", CursorStability),
    ("forward-consistent-view", ForwardConsistentView),
    ("monotonic-snapshot-read", MonotonicSnapshotRead),
    ("monotonic-view", MonotonicView),
    ("read-committed", ReadCommitted),
    ("read-uncommitted", ReadUncommitted),
    ("repeatable-read", RepeatableRead),
    ("snapshot-isolation", SnapshotIsolation),
    ("strong-serializable", StrictSerializable),
    ("strict-serializable", StrictSerializable),
    ("update-serializable", UpdateSerializable),
    (
        "strong-session-read-uncommitted",
        StrongSessionReadUncommitted,
    ),
    ("strong-session-read-committed", StrongSessionReadCommitted),
    ("strong-read-uncommitted", StrongReadUncommitted),
    ("strong-read-committed", StrongReadCommitted),
];

/// Short aliases the CLI and the JNI accept.
const ALIASES: &[(&str, Model)] = &[
    // Cerone's transactional causal consistency is Elle's causal-cerone;
    // newer Elle's name for update-atomic.
    ("transactional-causal-consistency", CausalCerone),
    ("ROLA", UpdateAtomic),
    ("rc", ReadCommitted),
    ("rc-c4", ReadCommittedC4),
    ("ssrc", StrongSessionReadCommitted),
    ("ssrc-c4", StrongSessionReadCommittedC4),
    ("ra", ReadAtomic),
    ("tcc", CausalCerone),
    ("cc", CausalCerone),
    ("si", SnapshotIsolation),
    ("psi", ParallelSnapshotIsolation),
    ("ssi", StrongSessionSnapshotIsolation),
    ("ser", Serializable),
    ("sser", StrongSessionSerializable),
    ("strict", StrictSerializable),
];

/// Model -> the models it implies (directly weaker): Elle's `models`
/// graph, canonicalized, plus C4's read committed between read atomic and
/// Adya's read committed.
pub(super) const WEAKER: &[(Model, &[Model])] = &[
    (CausalCerone, &[ReadAtomic]),
    (ConsistentView, &[CursorStability, MonotonicView]),
    (
        Serializable,
        &[
            ViewSerializable,
            RepeatableRead,
            UpdateSerializable,
            SnapshotIsolation,
        ],
    ),
    (CursorStability, &[ReadCommitted]),
    (ForwardConsistentView, &[ConsistentView]),
    (ReadCommitted, &[ReadUncommitted]),
    (UpdateSerializable, &[ForwardConsistentView]),
    (MonotonicAtomicView, &[ReadCommitted]),
    (MonotonicView, &[ReadCommitted]),
    (MonotonicSnapshotRead, &[ReadCommitted]),
    (ParallelSnapshotIsolation, &[CausalCerone, UpdateAtomic]),
    (Prefix, &[CausalCerone]),
    (
        ReadAtomic,
        &[MonotonicAtomicView, StrongSessionReadCommittedC4],
    ),
    (RepeatableRead, &[CursorStability, MonotonicAtomicView]),
    (UpdateAtomic, &[ReadAtomic]),
    (SessionSerializable, &[OneSr]),
    // Elle places Cerone's models (which read their own session's writes,
    // as our read atomic and causal checkers do) below Adya's SI (which
    // need not). We keep Elle's lattice as it is, so `:not` means what it
    // means in Elle; session findings count only for models that keep
    // sessions (see `SESSIONED`).
    (
        SnapshotIsolation,
        &[
            ForwardConsistentView,
            MonotonicAtomicView,
            MonotonicSnapshotRead,
            ParallelSnapshotIsolation,
            Prefix,
        ],
    ),
    (
        StrictSerializable,
        &[
            Serializable,
            Linearizable,
            SnapshotIsolation,
            StrongSnapshotIsolation,
            StrongSessionSerializable,
            SessionSerializable,
        ],
    ),
    (StrongSessionReadUncommitted, &[ReadUncommitted]),
    (
        StrongSessionReadCommitted,
        &[ReadCommitted, StrongSessionReadUncommitted],
    ),
    (StrongReadUncommitted, &[StrongSessionReadUncommitted]),
    (
        StrongReadCommitted,
        &[StrongSessionReadCommitted, StrongReadUncommitted],
    ),
    (
        StrongSessionSerializable,
        &[Serializable, StrongSessionSnapshotIsolation],
    ),
    (
        StrongSessionSnapshotIsolation,
        &[SnapshotIsolation, StrongSessionReadCommitted],
    ),
    (
        StrongSnapshotIsolation,
        &[StrongSessionSnapshotIsolation, StrongReadCommitted],
    ),
    (Linearizable, &[Sequential]),
    (Sequential, &[Causal]),
    (Causal, &[WritesFollowReads, Pram]),
    (Pram, &[MonotonicReads, MonotonicWrites, ReadYourWrites]),
    (ReadCommittedC4, &[ReadCommitted]),
    (
        StrongSessionReadCommittedC4,
        &[ReadCommittedC4, StrongSessionReadCommitted],
    ),
];

/// Model -> the anomalies it directly proscribes: Elle's
/// `direct-proscribed-anomalies`, plus C4's patterns at the level C4
/// places them and thin-air reads with G0. A model prohibits these and
/// everything its weaker models prohibit, closed over [`AnomalyType`]'s
/// implications (see `lattice::prohibited_by`).
pub(super) const PROSCRIBES: &[(Model, &[AnomalyType])] = {
    use AnomalyType as A;
    &[
        (
            CausalCerone,
            &[
                A::Internal,
                A::G1a,
                A::CoConflictAo,
                A::ConflictAo,
                A::ConflictProcess,
            ],
        ),
        (CursorStability, &[A::G1, A::GCursor, A::LostUpdate]),
        (MonotonicView, &[A::G1, A::GMonotonic]),
        (MonotonicSnapshotRead, &[A::G1, A::GMsr]),
        (ConsistentView, &[A::G1, A::GSingle]),
        (ForwardConsistentView, &[A::G1, A::GSIbAdya]),
        (
            ParallelSnapshotIsolation,
            &[A::Internal, A::G1a, A::PsiCycleExists],
        ),
        (
            Serializable,
            &[
                A::G1,
                A::G2,
                A::PredicateReadMiss,
                A::Pl3CycleExists,
                A::Internal,
            ],
        ),
        (ReadCommitted, &[A::G1, A::Pl2CycleExists]),
        (
            ReadUncommitted,
            &[
                A::G0,
                A::DuplicateElements,
                A::CyclicVersions,
                A::Pl1CycleExists,
                A::ThinAirRead,
            ],
        ),
        (Prefix, &[A::Internal, A::G1a, A::PrefixCycleExists]),
        (
            SnapshotIsolation,
            &[
                A::Internal,
                A::G1,
                A::GSIAdya,
                A::GNonadjacent,
                A::PlSiCycleExists,
            ],
        ),
        (
            ReadAtomic,
            &[
                A::Internal,
                A::G1a,
                A::FutureRead,
                A::NonRepeatableRead,
                A::FracturedReadCo,
                A::FracturedReadAo,
                A::FracturedReadProcess,
            ],
        ),
        (
            RepeatableRead,
            &[A::G1, A::G2Item, A::Pl299CycleExists, A::LostUpdate],
        ),
        (UpdateAtomic, &[A::LostUpdate]),
        (
            StrictSerializable,
            &[A::G1, A::G1cRealtime, A::G2Realtime, A::PlSsCycleExists],
        ),
        (
            StrongSessionReadUncommitted,
            &[A::StrongSessionPl1CycleExists, A::G0Process],
        ),
        (
            StrongSessionReadCommitted,
            &[A::StrongSessionPl2CycleExists, A::G1cProcess],
        ),
        (
            StrongReadUncommitted,
            &[A::StrongPl1CycleExists, A::G0Realtime],
        ),
        (
            StrongReadCommitted,
            &[A::StrongPl2CycleExists, A::G1cRealtime],
        ),
        (
            StrongSessionSnapshotIsolation,
            &[
                A::Internal,
                A::G1Process,
                A::GNonadjacentProcess,
                A::StrongSessionSiCycleExists,
            ],
        ),
        (
            StrongSnapshotIsolation,
            &[
                A::Internal,
                A::G1Realtime,
                A::GNonadjacentRealtime,
                A::StrongSiCycleExists,
            ],
        ),
        (
            StrongSessionSerializable,
            &[A::G1Process, A::G2Process, A::StrongSessionSerCycleExists],
        ),
        (UpdateSerializable, &[A::G1, A::GUpdate]),
        (
            ReadCommittedC4,
            &[
                A::NotMyOwnWrite,
                A::NotMyLastWrite,
                A::NonMonoReadCo,
                A::NonMonoReadAo,
            ],
        ),
        (
            StrongSessionReadCommittedC4,
            &[A::CyclicCo, A::NonMonoReadProcess],
        ),
    ]
};

/// Models that keep session order: Cerone's (reads see their session's
/// writes), and Elle's strong-session and strong (real-time) ones. Session
/// findings (see `AnomalyType::is_session`) rule out only these.
pub(super) const SESSIONED: &[Model] = &[
    ReadAtomic,
    CausalCerone,
    UpdateAtomic,
    ParallelSnapshotIsolation,
    Prefix,
    StrongSessionReadUncommitted,
    StrongSessionReadCommitted,
    StrongReadUncommitted,
    StrongReadCommitted,
    StrongSessionSnapshotIsolation,
    StrongSnapshotIsolation,
    StrongSessionSerializable,
    StrictSerializable,
    StrongSessionReadCommittedC4,
];

/// A model name no model has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownModel(pub String);

impl std::fmt::Display for UnknownModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = Model::accepted_names();
        super::unknown_name(f, "consistency model", &self.0, "accepted names", &names)
    }
}

impl Model {
    /// Parses any accepted name: canonical, friendly, or a short alias,
    /// with or without a leading colon.
    pub fn parse(name: &str) -> Result<Model, UnknownModel> {
        let n = name.trim().trim_start_matches(':');
        Model::from_name(n)
            .or_else(|| FRIENDLY.iter().find(|(f, _)| *f == n).map(|p| p.1))
            .or_else(|| ALIASES.iter().find(|(a, _)| *a == n).map(|p| p.1))
            .ok_or_else(|| UnknownModel(name.to_string()))
    }

    /// The name Elle prints (`friendly-model-name`).
    pub fn friendly(self) -> &'static str {
        FRIENDLY
            .iter()
            .find(|(_, m)| *m == self)
            .map_or(self.name(), |p| p.0)
    }

    /// Every name that parses to this model.
    pub fn names(self) -> Vec<&'static str> {
        let mut v = vec![self.name()];
        for (n, m) in FRIENDLY.iter().chain(ALIASES) {
            if *m == self {
                v.push(n);
            }
        }
        v
    }

    /// Every accepted name (Elle's `all-models`, ours, and the aliases),
    /// sorted.
    pub fn accepted_names() -> Vec<&'static str> {
        let mut v: Vec<&str> = Model::ALL.iter().flat_map(|m| m.names()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// A model decided completely that a user asking for this one may have
    /// meant: Bailis's single-object `causal` (decided only through
    /// strict serializability) is often asked for where transactional
    /// causal consistency (`tcc`, Elle's `causal-cerone`) is meant.
    pub fn see_also(self) -> Option<Model> {
        match self {
            Causal => Some(CausalCerone),
            _ => None,
        }
    }

    /// The models directly weaker than this one.
    pub fn weaker(self) -> &'static [Model] {
        WEAKER.iter().find(|(m, _)| *m == self).map_or(&[], |p| p.1)
    }

    /// The anomalies the model directly proscribes.
    pub fn proscribes(self) -> &'static [AnomalyType] {
        PROSCRIBES
            .iter()
            .find(|(m, _)| *m == self)
            .map_or(&[], |p| p.1)
    }

    /// Whether session findings count against the model.
    pub fn keeps_sessions(self) -> bool {
        SESSIONED.contains(&self)
    }

    /// Ours, not Elle's.
    pub fn is_ours(self) -> bool {
        matches!(self, ReadCommittedC4 | StrongSessionReadCommittedC4)
    }

    /// How elle-si decides the model.
    pub fn decider(self) -> Decider {
        use Checker as C;
        let si = |session, realtime| Decider::Complete(C::SnapshotIsolation { session, realtime });
        let ser = |session, realtime| Decider::Complete(C::Serializable { session, realtime });
        match self {
            ReadCommittedC4 => Decider::Complete(C::ReadCommittedC4 { sessions: false }),
            StrongSessionReadCommittedC4 => {
                Decider::Complete(C::ReadCommittedC4 { sessions: true })
            }
            ReadAtomic => Decider::Complete(C::ReadAtomic),
            // Elle's read atomic without lost updates: the read atomic
            // checker, and the lost updates `check::basic` finds.
            UpdateAtomic => Decider::Complete(C::ReadAtomic),
            Prefix => Decider::Complete(C::Prefix),
            ParallelSnapshotIsolation => Decider::Complete(C::ParallelSnapshotIsolation),
            CausalCerone => Decider::Complete(C::Causal),
            SnapshotIsolation => si(false, false),
            StrongSessionSnapshotIsolation => si(true, false),
            StrongSnapshotIsolation => si(true, true),
            Serializable => ser(false, false),
            // Adya's PL-2.99 is PL-3 where every read is an item read, as
            // every read elle-si takes is: serializability's checker
            // decides its cycles (a violation it finds is a PL-2.99 one,
            // see `spec::anomaly::IMPLIED`), `check::basic` the rest (not
            // `:internal`, which Elle's repeatable read allows).
            RepeatableRead => ser(false, false),
            StrongSessionSerializable => ser(true, false),
            StrictSerializable => ser(true, true),
            ViewSerializable => Decider::ImpliedBy(Serializable),
            SessionSerializable | OneSr | Linearizable | Sequential | Causal
            | WritesFollowReads | Pram | MonotonicReads | MonotonicWrites | ReadYourWrites => {
                Decider::ImpliedBy(StrictSerializable)
            }
            _ => Decider::ElleAnomalies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        assert_eq!(Model::parse("serializable"), Ok(Serializable));
        assert_eq!(Model::parse(":snapshot-isolation"), Ok(SnapshotIsolation));
        assert_eq!(Model::parse("tcc"), Ok(CausalCerone));
        assert_eq!(Model::parse("ssi"), Ok(StrongSessionSnapshotIsolation));
        assert_eq!(Model::parse("strict-serializable"), Ok(StrictSerializable));
        assert_eq!(Model::parse("PL-2"), Ok(ReadCommitted));
        assert_eq!(Model::parse("ROLA"), Ok(UpdateAtomic));
        let e = Model::parse("no-such-model").unwrap_err().to_string();
        assert!(
            e.contains("no-such-model") && e.contains("rc-c4") && e.contains("repeatable-read")
        );
        for m in Model::ALL {
            for n in m.names() {
                assert_eq!(Model::parse(n), Ok(*m), "{n}");
            }
            assert_eq!(Model::parse(m.friendly()), Ok(*m));
        }
    }

    #[test]
    fn every_model_of_elle_is_known() {
        // Elle's all-models: the graph's vertices and both sides of
        // canonical-model-names.
        for n in [
            "1SR",
            "PL-1",
            "PL-2",
            "PL-2+",
            "PL-2.99",
            "PL-2L",
            "PL-3",
            "PL-3U",
            "PL-CS",
            "PL-FCV",
            "PL-MSR",
            "PL-SI",
            "PL-SS",
            "PRAM",
            "causal",
            "causal-cerone",
            "conflict-serializable",
            "consistent-view",
            "cursor-stability",
            "forward-consistent-view",
            "linearizable",
            "monotonic-atomic-view",
            "monotonic-reads",
            "monotonic-snapshot-read",
            "monotonic-view",
            "monotonic-writes",
            "parallel-snapshot-isolation",
            "prefix",
            "read-atomic",
            "read-committed",
            "read-uncommitted",
            "read-your-writes",
            "repeatable-read",
            "sequential",
            "serializable",
            "session-serializable",
            "snapshot-isolation",
            "strict-serializable",
            "strong-PL-1",
            "strong-PL-2",
            "strong-read-committed",
            "strong-read-uncommitted",
            "strong-serializable",
            "strong-session-PL-1",
            "strong-session-PL-2",
            "strong-session-read-committed",
            "strong-session-read-uncommitted",
            "strong-session-serializable",
            "strong-session-snapshot-isolation",
            "strong-snapshot-isolation",
            "update-serializable",
            "view-serializable",
            "writes-follow-reads",
            "update-atomic",
            "ROLA",
        ] {
            assert!(Model::parse(n).is_ok(), "{n}");
        }
    }

    #[test]
    fn deciders_point_at_stronger_complete_models() {
        for m in Model::ALL {
            if let Decider::ImpliedBy(s) = m.decider() {
                assert!(matches!(s.decider(), Decider::Complete(_)), "{m}");
                assert!(
                    super::super::lattice::implied_models(&[s]).contains(m),
                    "{m}"
                );
            }
        }
    }
}
