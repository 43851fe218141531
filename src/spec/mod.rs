//! Elle's contract as one typed specification: every consistency model
//! Elle knows ([`Model`], `elle.consistency-model`'s `models` graph and
//! names), every anomaly type ([`AnomalyType`], Elle's `implied-anomalies`
//! plus C4's patterns and ours), what each model prohibits, and which
//! elle-si checker decides it ([`Decider`]). Checkers, the generator and the
//! report read this module; names are parsed into it only at the edges (CLI,
//! JNI), by [`Model::parse`] and [`AnomalyType::parse`].
//!
//! Data flow: a request names models and anomalies; [`lattice`] closes them
//! over Elle's graphs into the set of prohibited anomaly types; [`Decider`]
//! and [`AnomalyType::finders`] pick the checkers that look for them; the
//! anomalies found are judged against the same set, and `:not` /
//! `:also-not` come from [`lattice::boundary`].

pub mod anomaly;
pub mod cycles;
pub mod lattice;
pub mod model;
pub mod naming;

pub use anomaly::{AnomalyType, Kind, Marker, Order, Pattern};
pub use model::Model;

/// Defines a name-carrying enum: every variant, its one spelling, and the
/// parse from that spelling.
macro_rules! named {
    ($(#[$m:meta])* pub enum $E:ident { $($(#[$vm:meta])* $V:ident = $n:literal,)* }) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $E { $($(#[$vm])* #[doc = concat!("\n\nElle's name: `", $n, "`.")] $V,)* }
        impl $E {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$E] = &[$($E::$V,)*];
            /// The name Elle (or elle-si, for our own) gives it.
            pub fn name(self) -> &'static str {
                match self { $($E::$V => $n,)* }
            }
            /// The variant of exactly this name.
            pub fn from_name(s: &str) -> Option<$E> {
                match s { $($n => Some($E::$V),)* _ => None }
            }
        }
        impl std::fmt::Display for $E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use named;

/// The accepted name closest to a misspelled one, when one is close enough
/// to be what was meant (Jaro-Winkler similarity of at least 0.8, letter
/// case ignored, as clap suggests subcommands).
pub fn closest<'a>(name: &str, accepted: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let n = name.trim().trim_start_matches(':').to_lowercase();
    accepted
        .into_iter()
        .map(|a| (strsim::jaro_winkler(&n, &a.to_lowercase()), a))
        .filter(|&(s, _)| s >= 0.8)
        .max_by(|x, y| x.0.total_cmp(&y.0).then_with(|| y.1.cmp(x.1)))
        .map(|(_, a)| a)
}

/// "unknown WHAT `name`", with the closest accepted name when one is near,
/// then every accepted name (`listed` says what they are).
pub(crate) fn unknown_name(
    f: &mut std::fmt::Formatter<'_>,
    what: &str,
    name: &str,
    listed: &str,
    accepted: &[&str],
) -> std::fmt::Result {
    let all = accepted.join(", ");
    match closest(name, accepted.iter().copied()) {
        Some(near) => write!(
            f,
            "unknown {what} `{name}`: did you mean `{near}`? ({listed}: {all})"
        ),
        None => write!(f, "unknown {what} `{name}`; {listed}: {all}"),
    }
}

/// A checker of elle-si, as the specification names it (the check module
/// maps each to its implementation).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Checker {
    /// Anomalies seen without a dependency graph (G1a, G1b, internal,
    /// dirty updates, lost updates, thin-air reads, ...): always run.
    Basic,
    /// C4's read committed (Biswas & Enea): with or without session order.
    ReadCommittedC4 {
        /// With session order.
        sessions: bool,
    },
    /// Cerone's read atomic (with session order).
    ReadAtomic,
    /// Cerone's transactional causal consistency.
    Causal,
    /// Snapshot isolation over the dependency polygraph; session order
    /// and real time optional.
    SnapshotIsolation {
        /// With session order.
        session: bool,
        /// With real-time order.
        realtime: bool,
    },
    /// Serializability over the dependency polygraph.
    Serializable {
        /// With session order.
        session: bool,
        /// With real-time order.
        realtime: bool,
    },
    /// Prefix consistency over SI's polygraph, with session order.
    Prefix,
    /// Parallel snapshot isolation over SI's polygraph, with session
    /// order.
    ParallelSnapshotIsolation,
    /// A version order closing none of these cycles, over the polygraph
    /// (anomalies asked for by name, and models whose cycles are no
    /// other checker's).
    Cycles(cycles::Shapes),
}

impl Checker {
    /// Whether it runs over the dependency polygraph (SI's and
    /// serializability's checkers, prefix and parallel SI, and the
    /// checker of prohibited cycles).
    pub fn is_polygraph(self) -> bool {
        matches!(
            self,
            Checker::SnapshotIsolation { .. }
                | Checker::Serializable { .. }
                | Checker::Prefix
                | Checker::ParallelSnapshotIsolation
                | Checker::Cycles(_)
        )
    }
}

/// How elle-si decides a model.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decider {
    /// A checker complete for the model: it rejects exactly the histories
    /// the model prohibits.
    Complete(Checker),
    /// Elle's anomaly set: every anomaly Elle's table prohibits for the
    /// model is looked for with the checkers that can find it
    /// ([`AnomalyType::finders`]), and the cycles with an anti-dependency
    /// among them by the cycle checker ([`Checker::Cycles`]), complete:
    /// valid iff some version order closes none of them.
    ElleAnomalies,
    /// Elle prohibits no anomaly for the model (single-object models,
    /// view serializability): a stronger model with a complete checker
    /// implies it, so a history that model accepts is accepted; one it
    /// rejects is `:unknown`.
    ImpliedBy(Model),
}
