//! `elle-si gen`: a workload generator over simulated databases, with fault
//! injection, whose histories come with their ground truth.
//!
//! Sessions run transactions of random reads and writes (list-append or
//! rw-register, values unique per key) against a simulated store that
//! provably gives one isolation level ([`Db`]; see `store.rs` for how each
//! one works), interleaved at random from the seed so transactions overlap
//! in real time. Output is a Jepsen `history.edn` or the
//! `r(key,value,session,txn)` text format, streamed to any writer, so a
//! million transactions need no more memory than the store itself.
//!
//! # Ground truth
//!
//! With every fault rate at 0, a history satisfies its store's level and
//! everything weaker ([`Db::guarantees`]). A fault fires only where its
//! effect is visible and provable from the history alone (a lost update
//! counts only if both transactions read the same version, wrote the key and
//! committed; a fractured read only if the reader saw part of a writer's
//! writes and missed another part on a key it read; a causality violation
//! only if a read missed a write causally before one it saw), and it is
//! recorded, as a [`FiredFault`], exactly then. A fault is injected only into
//! a store whose level forbids it ([`Fault::applies_to`]), and kept clean:
//! with one kind of fault enabled, the history violates exactly the models
//! [`Fault::violates`] names, and is valid at the weaker ones. (Two kinds at
//! once may interact; every recorded fault still shows.)
//!
//! # Faults, the anomalies they leave, and the levels they violate
//!
//! Elle's name is the anomaly type Elle reports; C4's is the pattern C4 and
//! Plume report (CamelCase, as `FiredFault::c4` gives it). RC = read
//! committed, RA = read atomic, TCC = causal (Cerone's transactional causal
//! consistency, `causal-cerone`), SI = snapshot isolation, SSI = strong
//! session SI, SER = serializable, SSER = strong session serializable.
//! "x" = violated. Every fault also violates strong SI and strict
//! serializability. RA and TCC are meant as Cerone defines them, with the
//! session order inside visibility (Elle's models of the same names have no
//! sessions, so Elle itself finds no stale session read there).
//!
//! | fault | Elle | C4 | RC | RA | TCC | SI | SSI | SER | SSER |
//! |---|---|---|---|---|---|---|---|---|---|
//! | `lost-update`: skip the write-write conflict check | lost-update | (none: allowed) | | | | x | x | x | x |
//! | `long-fork`: a reader sees T2 but not a concurrent T1 that another reader saw without T2 | G-nonadjacent-item | (none: allowed) | | | | x | x | x | x |
//! | `fractured-read`: see one of a txn's writes, miss another on a key read | G-single-item | FracturedReadCO / AO | | x | x | x | x | x | x |
//! | `causality-violation`: miss a write causally before one seen | G-single-item | COConflictAO / ConflictAO | | | x | x | x | x | x |
//! | `aborted-read`: read an aborted txn's write | G1a | AbortedRead | x | x | x | x | x | x | x |
//! | `intermediate-read`: read a non-final write of another txn | G1b | IntermediateRead | x | x | x | x | x | x | x |
//! | `non-repeatable-read`: two reads of a key see different versions | internal | NonRepeatableRead | | x | x | x | x | x | x |
//! | `stale-session-read`: miss the session's own earlier write | G-single-item-process | FracturedReadCO (previous txn) / COConflictAO | | x | x | | x | | x |
//! | `thin-air-read`: read a value nobody wrote | thin-air-read | ThinAirRead | x | x | x | x | x | x | x |
//! | `duplicate-append`: an element twice in a list (list-append) | duplicate-elements | (none) | x | x | x | x | x | x | x |
//!
//! Read uncommitted forbids only the last two. Where each fault can fire:
//! lost update and long fork in the serializable and SI stores; causality
//! violations also in the causal store; fractured, non-repeatable and
//! stale-session reads in every store but read committed (stale session
//! reads in the serializable store only in read-only transactions); the rest
//! everywhere.
//!
//! `--info-rate` is not a fault: the client times out (`:info`) and the
//! seed decides whether the transaction committed.
//!
//! # Use
//!
//! ```
//! use elle_si::generator::{Db, Fault, GenOptions, generate};
//!
//! let opts = GenOptions {
//!     db: Db::SnapshotIsolation,
//!     sessions: 5,
//!     txns_per_session: 30,
//!     keys: 6,
//!     seed: 3,
//!     ..GenOptions::default()
//! }
//! .with_fault(Fault::LostUpdate, 1.0);
//! let g = generate(&opts)?; // or generate_to(&opts, writer) to stream
//! for f in &g.faults {
//!     // Detected at the levels that forbid it, under this name...
//!     assert_eq!(f.fault.violates("snapshot-isolation"), Some(true));
//!     assert_eq!(f.elle, "lost-update");
//!     // ...and allowed below them.
//!     assert_eq!(f.fault.violates("causal-cerone"), Some(false));
//! }
//! # Ok::<(), elle_si::Error>(())
//! ```

mod emit;
mod faults;
mod keys;
mod rng;
mod sim;
mod store;

use std::io::Write;

pub use keys::Distribution;

use crate::error::Error;
use crate::history::{Format, Workload};
use crate::spec::Model;

/// The simulated database, by the isolation level it gives.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Db {
    /// Optimistic concurrency control on snapshots: strictly serializable.
    Serializable,
    /// MVCC with first-committer-wins; strong (real-time) snapshots.
    SnapshotIsolation,
    /// Replicas with causal delivery and last-writer-wins; sessions sticky.
    Causal,
    /// Cerone's read atomic: no fractured reads, no causality.
    ReadAtomic,
    /// Read committed: each read sees committed data, nothing more.
    ReadCommitted,
    /// Snapshots of a prefix of the commit order, without first committer
    /// wins: prefix consistency (lost updates happen, long forks cannot).
    Prefix,
    /// Replicas with causal delivery, and a commit refused when a key it
    /// writes has a version its snapshot does not hold: parallel snapshot
    /// isolation (long forks happen, lost updates cannot).
    ParallelSnapshotIsolation,
}

/// The models the level table speaks of, weakest first, then prefix and
/// parallel snapshot isolation (between causal and SI, apart). The stores'
/// read committed is C4's.
const MODELS: [Model; 12] = [
    Model::ReadUncommitted,
    Model::ReadCommittedC4,
    Model::ReadAtomic,
    Model::CausalCerone,
    Model::SnapshotIsolation,
    Model::StrongSessionSnapshotIsolation,
    Model::StrongSnapshotIsolation,
    Model::Serializable,
    Model::StrongSessionSerializable,
    Model::StrictSerializable,
    Model::Prefix,
    Model::ParallelSnapshotIsolation,
];

fn model_bit(model: &str) -> Option<u16> {
    let c = Model::parse(model).ok()?;
    MODELS.iter().position(|m| *m == c).map(|i| 1 << i)
}

impl Db {
    /// The five stores the fault tests cover.
    pub const ALL: [Db; 5] = [
        Db::Serializable,
        Db::SnapshotIsolation,
        Db::Causal,
        Db::ReadAtomic,
        Db::ReadCommitted,
    ];

    /// Every store: [`Db::ALL`] (whose faults the fault tests cover) and
    /// the prefix and parallel snapshot isolation stores.
    pub const EVERY: [Db; 7] = [
        Db::Serializable,
        Db::SnapshotIsolation,
        Db::Causal,
        Db::ReadAtomic,
        Db::ReadCommitted,
        Db::Prefix,
        Db::ParallelSnapshotIsolation,
    ];

    /// Its name, as `elle-si gen --db` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Db::Serializable => "serializable",
            Db::SnapshotIsolation => "snapshot-isolation",
            Db::Causal => "causal",
            Db::ReadAtomic => "read-atomic",
            Db::ReadCommitted => "read-committed",
            Db::Prefix => "prefix",
            Db::ParallelSnapshotIsolation => "parallel-snapshot-isolation",
        }
    }

    /// The store of this name (any of [`Db::EVERY`]).
    pub fn parse(s: &str) -> Option<Db> {
        Db::EVERY.into_iter().find(|d| d.name() == s)
    }

    /// The strongest model its histories satisfy, by Elle's name.
    pub fn model(self) -> &'static str {
        match self {
            Db::Serializable => "strict-serializable",
            Db::SnapshotIsolation => "strong-snapshot-isolation",
            Db::Causal => "causal-cerone",
            Db::ReadAtomic => "read-atomic",
            Db::ReadCommitted => "read-committed-c4",
            Db::Prefix => "prefix",
            Db::ParallelSnapshotIsolation => "parallel-snapshot-isolation",
        }
    }

    fn guaranteed(self) -> u16 {
        match self {
            Db::Serializable => 0b1111_1111_1111,
            Db::SnapshotIsolation => 0b1100_0111_1111,
            Db::Causal => 0b0000_0000_1111,
            Db::ReadAtomic => 0b0000_0000_0111,
            Db::ReadCommitted => 0b0000_0000_0011,
            Db::Prefix => 0b0100_0000_1111,
            Db::ParallelSnapshotIsolation => 0b1000_0000_1111,
        }
    }

    /// Whether fault-free histories of this store satisfy `model` (any name
    /// [`Model::parse`] knows); None for models outside the table.
    pub fn guarantees(self, model: &str) -> Option<bool> {
        model_bit(model).map(|b| self.guaranteed() & b != 0)
    }
}

/// A fault the simulated stores can inject.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Two writers of a key both read the version before either (Elle's `lost-update`).
    LostUpdate,
    /// Two writers seen in opposite orders by two readers (G-nonadjacent).
    LongFork,
    /// A reader sees one of a transaction's writes but an older version of another.
    FracturedRead,
    /// A reader sees an effect but misses its cause.
    CausalityViolation,
    /// A read of an aborted transaction's write (G1a).
    AbortedRead,
    /// A read of a version its writer later overwrote (G1b).
    IntermediateRead,
    /// Two reads of a key in one transaction disagree (internal).
    NonRepeatableRead,
    /// A session reads a version older than one it already saw.
    StaleSessionRead,
    /// A read of a value nobody wrote.
    ThinAirRead,
    /// A list read that shows an element twice (list-append only).
    DuplicateAppend,
}

impl Fault {
    /// Every fault, in the order of [`FaultRates`].
    pub const ALL: [Fault; 10] = [
        Fault::LostUpdate,
        Fault::LongFork,
        Fault::FracturedRead,
        Fault::CausalityViolation,
        Fault::AbortedRead,
        Fault::IntermediateRead,
        Fault::NonRepeatableRead,
        Fault::StaleSessionRead,
        Fault::ThinAirRead,
        Fault::DuplicateAppend,
    ];

    /// The kebab-case name (the CLI flag without `--`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::LostUpdate => "lost-update",
            Fault::LongFork => "long-fork",
            Fault::FracturedRead => "fractured-read",
            Fault::CausalityViolation => "causality-violation",
            Fault::AbortedRead => "aborted-read",
            Fault::IntermediateRead => "intermediate-read",
            Fault::NonRepeatableRead => "non-repeatable-read",
            Fault::StaleSessionRead => "stale-session-read",
            Fault::ThinAirRead => "thin-air-read",
            Fault::DuplicateAppend => "duplicate-append",
        }
    }

    /// What a transaction needs for the fault to fire in it, and what may
    /// give one, said when an enabled fault fired nothing.
    pub fn needs(self) -> String {
        let contention = "more contention may give one (fewer keys, --distribution zipf, \
                          more sessions or ops per transaction)";
        // Any read or append will do: only the rate or the size is short.
        let more = "more transactions or a higher rate may give one";
        let (what, remedy) = match self {
            Fault::LostUpdate => (
                "a transaction that read a key and wrote it after another committed a write of it",
                contention,
            ),
            Fault::LongFork | Fault::FracturedRead | Fault::CausalityViolation => {
                ("a read a concurrent commit can be hidden from", contention)
            }
            Fault::AbortedRead => (
                "a read of a key an aborted transaction wrote (--abort-rate)",
                contention,
            ),
            Fault::IntermediateRead => (
                "a read of a key its writer wrote twice in one transaction",
                contention,
            ),
            Fault::NonRepeatableRead => (
                "a transaction that reads a key twice while another commits a write of it",
                contention,
            ),
            Fault::StaleSessionRead => (
                "a transaction that reads a key its session wrote before",
                contention,
            ),
            Fault::ThinAirRead => ("a read", more),
            Fault::DuplicateAppend => ("an append", more),
        };
        format!("it needs {what}; {remedy}")
    }

    /// The fault of this kebab-case name.
    pub fn parse(s: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The anomaly type Elle reports for it.
    pub fn elle(self) -> &'static str {
        match self {
            Fault::LostUpdate => "lost-update",
            Fault::LongFork => "G-nonadjacent-item",
            Fault::FracturedRead | Fault::CausalityViolation => "G-single-item",
            Fault::AbortedRead => "G1a",
            Fault::IntermediateRead => "G1b",
            Fault::NonRepeatableRead => "internal",
            Fault::StaleSessionRead => "G-single-item-process",
            Fault::ThinAirRead => "thin-air-read",
            Fault::DuplicateAppend => "duplicate-elements",
        }
    }

    fn violated(self) -> u16 {
        match self {
            // Prefix allows a lost update, parallel snapshot isolation a
            // long fork; both keep sessions.
            Fault::LostUpdate => 0b1011_1111_0000,
            Fault::LongFork => 0b0111_1111_0000,
            Fault::FracturedRead | Fault::NonRepeatableRead => 0b1111_1111_1100,
            Fault::CausalityViolation => 0b1111_1111_1000,
            Fault::AbortedRead | Fault::IntermediateRead => 0b1111_1111_1110,
            Fault::StaleSessionRead => 0b1111_0110_1100,
            Fault::ThinAirRead | Fault::DuplicateAppend => 0b1111_1111_1111,
        }
    }

    /// Whether a history with this fault violates `model` (any name
    /// [`Model::parse`] knows); None for models outside the table.
    pub fn violates(self, model: &str) -> Option<bool> {
        model_bit(model).map(|b| self.violated() & b != 0)
    }

    /// Whether the fault can fire in this store: only where the store's
    /// level forbids it (a lost update in a causal store is no fault).
    pub fn applies_to(self, db: Db, workload: Workload) -> bool {
        db.guaranteed() & self.violated() != 0
            && (self != Fault::DuplicateAppend || workload == Workload::ListAppend)
    }
}

/// A probability per eligible transaction for each fault.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultRates([f64; 10]);

impl FaultRates {
    /// The rate of fault `f`.
    pub fn rate(&self, f: Fault) -> f64 {
        self.0[f as usize]
    }

    /// Sets the rate of fault `f`.
    pub fn set(&mut self, f: Fault, rate: f64) {
        self.0[f as usize] = rate;
    }

    /// The faults with a positive rate.
    pub fn enabled(&self) -> impl Iterator<Item = Fault> + '_ {
        Fault::ALL.into_iter().filter(|&f| self.rate(f) > 0.0)
    }
}

/// PolySI's general workloads: 25 sessions x 400 transactions x 8 ops over
/// 10,000 Zipfian keys, rw-register, at 95%, 50% and 30% reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Read-heavy: 95% reads.
    GeneralRh,
    /// Balanced: 50% reads.
    GeneralRw,
    /// Write-heavy: 30% reads.
    GeneralWh,
}

/// Everything that shapes a generated history. Plain data, so property
/// tests can build it field by field; [`GenOptions::check`] says what is
/// out of range.
#[derive(Clone, Debug, PartialEq)]
pub struct GenOptions {
    /// Sessions (Jepsen processes) running side by side.
    pub sessions: u32,
    /// Transactions each session runs.
    pub txns_per_session: u32,
    /// Micro-ops per transaction.
    pub ops_per_txn: u32,
    /// Probability that an op is a read.
    pub read_ratio: f64,
    /// Number of keys.
    pub keys: u64,
    /// How operations pick keys.
    pub distribution: Distribution,
    /// Zipf's exponent (YCSB's 0.99 by default).
    pub zipf_exponent: f64,
    /// List-append or rw-register.
    pub workload: Workload,
    /// The seed: one seed, one history.
    pub seed: u64,
    /// The format written (EDN or text).
    pub format: Format,
    /// The simulated store.
    pub db: Db,
    /// Replicas of the causal store (sessions stick to one each).
    pub replicas: u32,
    /// Rates of the faults to inject.
    pub faults: FaultRates,
    /// Probability that a transaction's client times out (`:info`).
    pub info_rate: f64,
    /// Probability that a transaction rolls itself back (`:fail`), so every
    /// store has aborted writes to read.
    pub abort_rate: f64,
    /// Retire a key after this many writes and move on to a fresh one (as
    /// Elle's list-append generator does), keeping lists short.
    pub max_writes_per_key: Option<u32>,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            sessions: 25,
            txns_per_session: 200,
            ops_per_txn: 20,
            read_ratio: 0.5,
            keys: 10_000,
            distribution: Distribution::Uniform,
            zipf_exponent: 0.99,
            workload: Workload::ListAppend,
            seed: 0,
            format: Format::Edn,
            db: Db::Serializable,
            replicas: 3,
            faults: FaultRates::default(),
            info_rate: 0.0,
            abort_rate: 0.0,
            max_writes_per_key: None,
        }
    }
}

impl GenOptions {
    /// A PolySI preset (other fields at their defaults).
    pub fn preset(p: Preset) -> GenOptions {
        GenOptions {
            sessions: 25,
            txns_per_session: 400,
            ops_per_txn: 8,
            read_ratio: match p {
                Preset::GeneralRh => 0.95,
                Preset::GeneralRw => 0.5,
                Preset::GeneralWh => 0.3,
            },
            keys: 10_000,
            distribution: Distribution::Zipf,
            workload: Workload::RwRegister,
            ..GenOptions::default()
        }
    }

    /// The same options with one fault at `rate`.
    pub fn with_fault(mut self, f: Fault, rate: f64) -> GenOptions {
        self.faults.set(f, rate);
        self
    }

    /// Enabled faults that cannot fire with this store and workload.
    pub fn inapplicable_faults(&self) -> Vec<Fault> {
        self.faults
            .enabled()
            .filter(|f| !f.applies_to(self.db, self.workload))
            .collect()
    }

    /// Refuses options out of range.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Usage(m));
        let prob = |name: &str, p: f64| -> Result<(), Error> {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                bad(format!("{name} must be between 0 and 1, not {p}"))
            }
        };
        if self.sessions == 0
            || self.txns_per_session == 0
            || self.ops_per_txn == 0
            || self.keys == 0
        {
            // An empty history is no history: `check` refuses it.
            return bad(
                "sessions, transactions per session, ops per transaction and keys must be positive"
                    .into(),
            );
        }
        if self.sessions as u64 * self.txns_per_session as u64 > (1 << 31) {
            return bad("at most 2^31 transactions in one history".into());
        }
        if self.sessions > 1 << 20 {
            return bad("at most 2^20 sessions".into());
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent.is_finite()) {
            return bad(format!(
                "the Zipf exponent must be positive, not {}",
                self.zipf_exponent
            ));
        }
        if !(1..=64).contains(&self.replicas) {
            return bad("replicas must be between 1 and 64".into());
        }
        if self.max_writes_per_key == Some(0) {
            return bad("max writes per key must be positive".into());
        }
        if !matches!(self.format, Format::Edn | Format::Text) {
            return bad(format!(
                "gen writes edn or text, not {}: convert its output with `elle-si convert`",
                self.format.name()
            ));
        }
        if self.format == Format::Text && self.workload == Workload::ListAppend {
            return bad(
                "the text format holds register reads and writes: use --workload rw-register, or --format edn".into(),
            );
        }
        prob("the read ratio", self.read_ratio)?;
        prob("the info rate", self.info_rate)?;
        prob("the abort rate", self.abort_rate)?;
        for f in Fault::ALL {
            prob(&format!("the {} rate", f.name()), self.faults.rate(f))?;
        }
        Ok(())
    }
}

/// A fault that fired and shows in the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiredFault {
    /// Which fault.
    pub fault: Fault,
    /// The anomaly type Elle reports for it.
    pub elle: &'static str,
    /// C4's pattern for this instance, when C4 forbids it.
    pub c4: Option<&'static str>,
    /// The transactions involved, numbered as elle-si's reader numbers them
    /// (`TxnId`, the order of completions; in the text format, of
    /// transactions); the one that observed the fault first, except for a
    /// lost update, where the earlier writer comes first.
    pub txns: Vec<u32>,
    /// Each transaction's completion `:index` (text format: its txn id).
    pub indices: Vec<i64>,
    /// The keys involved (for fractured reads and causality violations: the
    /// stale key, then the key read from the newer writer).
    pub keys: Vec<i64>,
}

/// Counts of a generated history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GenStats {
    /// Transactions run.
    pub txns: u64,
    /// Of them committed (`:ok`).
    pub ok: u64,
    /// Of them aborted (`:fail`).
    pub fail: u64,
    /// Of them indeterminate (`:info`).
    pub info: u64,
    /// Op maps (EDN) or lines (text) written.
    pub ops_written: u64,
    /// Injections into transactions that then aborted or timed out: they
    /// left no trace.
    pub dropped_injections: u64,
}

/// What a run produced besides the history.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Every fault that shows in the history.
    pub faults: Vec<FiredFault>,
    /// Enabled faults that cannot fire with this store and workload.
    pub inapplicable: Vec<Fault>,
    /// Counts of the history.
    pub stats: GenStats,
}

/// A generated history, in memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generated {
    /// The history, in the format asked for.
    pub history: Vec<u8>,
    /// Every fault that shows in the history.
    pub faults: Vec<FiredFault>,
    /// Enabled faults that cannot fire with this store and workload.
    pub inapplicable: Vec<Fault>,
    /// Counts of the history.
    pub stats: GenStats,
}

/// Generates a history into `out`, streaming.
pub fn generate_to<W: Write>(opts: &GenOptions, out: W) -> Result<Report, Error> {
    opts.check()?;
    let (report, _) = sim::Sim::new(opts, out).run()?;
    Ok(report)
}

/// Generates a history in memory.
pub fn generate(opts: &GenOptions) -> Result<Generated, Error> {
    let mut history = Vec::new();
    let r = generate_to(opts, &mut history)?;
    Ok(Generated {
        history,
        faults: r.faults,
        inapplicable: r.inapplicable,
        stats: r.stats,
    })
}

/// The fault record as EDN: a vector of maps, one per line.
pub fn faults_edn(faults: &[FiredFault]) -> String {
    let ints = |v: &mut String, xs: &mut dyn Iterator<Item = i64>| {
        v.push('[');
        let items: Vec<String> = xs.map(|x| x.to_string()).collect();
        v.push_str(&items.join(" "));
        v.push(']');
    };
    let mut s = String::from("[");
    for (i, f) in faults.iter().enumerate() {
        if i > 0 {
            s.push_str("\n ");
        }
        s.push_str(&format!(
            "{{:fault :{}, :elle :{}, :c4 {}, :txns ",
            f.fault.name(),
            f.elle,
            f.c4.map_or("nil".to_string(), |c| format!("\"{c}\""))
        ));
        ints(&mut s, &mut f.txns.iter().map(|&t| t as i64));
        s.push_str(", :indices ");
        ints(&mut s, &mut f.indices.iter().copied());
        s.push_str(", :keys ");
        ints(&mut s, &mut f.keys.iter().copied());
        s.push('}');
    }
    s.push_str("]\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_table_matches_store_levels() {
        // A store's own faults violate its level; the rest are allowed there.
        for f in Fault::ALL {
            for db in Db::EVERY {
                let hits = f.violates(db.model()) == Some(true);
                assert_eq!(
                    f.applies_to(db, Workload::ListAppend),
                    hits,
                    "{} in {}",
                    f.name(),
                    db.name()
                );
            }
        }
        assert_eq!(Fault::StaleSessionRead.violates("si"), Some(false));
        assert_eq!(Fault::StaleSessionRead.violates("ssi"), Some(true));
        assert_eq!(Fault::LostUpdate.violates("tcc"), Some(false));
        assert_eq!(Fault::ThinAirRead.violates("read-uncommitted"), Some(true));
        assert_eq!(Fault::LostUpdate.violates("prefix"), Some(false));
        assert_eq!(Fault::LostUpdate.violates("psi"), Some(true));
        assert_eq!(Fault::LostUpdate.violates("no-such-model"), None);
        assert_eq!(
            Fault::LostUpdate.violates("parallel-snapshot-isolation"),
            Some(true)
        );
        assert_eq!(Fault::LongFork.violates("prefix"), Some(true));
        assert_eq!(
            Fault::LongFork.violates("parallel-snapshot-isolation"),
            Some(false)
        );
        assert_eq!(Db::Prefix.guarantees("causal-cerone"), Some(true));
        assert_eq!(
            Db::Prefix.guarantees("parallel-snapshot-isolation"),
            Some(false)
        );
        assert_eq!(
            Db::ParallelSnapshotIsolation.guarantees("prefix"),
            Some(false)
        );
        assert_eq!(
            Db::SnapshotIsolation.guarantees("parallel-snapshot-isolation"),
            Some(true)
        );
        assert_eq!(
            Db::SnapshotIsolation.guarantees("serializable"),
            Some(false)
        );
        assert_eq!(Db::Causal.guarantees("ra"), Some(true));
    }

    #[test]
    fn names_round_trip() {
        for f in Fault::ALL {
            assert_eq!(Fault::parse(f.name()), Some(f));
        }
        for d in Db::EVERY {
            assert_eq!(Db::parse(d.name()), Some(d));
        }
    }
}
