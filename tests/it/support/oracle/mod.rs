//! A brute-force oracle for every level, and its comparison with elle-si.
//!
//! The oracle decides each level of a tiny history from its definition by
//! enumeration, sharing no code with the checkers or the history compiler:
//! [`history`] is its own history type (rendered to Jepsen EDN for elle-si),
//! [`facts`] reads who read from whom, [`axioms`] enumerates commit orders
//! against Biswas & Enea's axioms, [`adya`] enumerates version orders
//! against Adya's phenomena, [`anomalies`] against the cycles anomalies
//! asked for by name prohibit, [`histories`] makes the histories.
//! [`elle_si`] is the one function that calls elle-si; [`MAPPING`] says
//! which of its models each oracle level is compared with.

#![allow(dead_code)]

pub mod adya;
pub mod anomalies;
pub mod axioms;
pub mod facts;
pub mod histories;
pub mod history;

use std::collections::BTreeMap;

use axioms::Order;
use elle_si::report::Valid;
use facts::{Assume, Interp, assume, choices, infos};
use history::History;

/// The oracle's verdicts: Biswas & Enea's levels under each [`Order`], and
/// Adya's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdicts {
    pub be: [axioms::Verdicts; 3],
    pub adya: adya::Verdicts,
}

pub const ORDERS: [Order; 3] = [Order::None, Order::Session, Order::SessionRealtime];

/// Most ways the reads of repeated values may resolve that the oracle
/// enumerates (a history with more is not for it).
pub const MAX_PICKS: usize = 1 << 12;

/// Decides every level: valid iff some choice of which `:info`
/// transactions committed, and of which writer each read of a value
/// written more than once observed ([`facts::choices`]), makes it valid.
pub fn oracle(h: &History) -> Verdicts {
    oracle_assuming(h, Assume::default())
}

/// [`oracle`], the version orders restricted to those Elle's key options
/// `a` allow ([`assume`]).
pub fn oracle_assuming(h: &History, a: Assume) -> Verdicts {
    let mut v = Verdicts {
        be: [0; 3],
        adya: 0,
    };
    for mut f in resolutions(h, false) {
        assume(h, &mut f, a);
        for (i, &o) in ORDERS.iter().enumerate() {
            v.be[i] |= axioms::decide(&f, o);
        }
        v.adya |= adya::decide(&f);
    }
    v
}

/// The facts of every resolution of `h` that gives facts: each choice of
/// which `:info` transactions committed and of which writer each read of
/// a value written more than once observed ([`facts::choices`]); reads of
/// intermediate writes kept when `intermediate` ([`facts::interpret_with`]).
pub fn resolutions(h: &History, intermediate: bool) -> Vec<facts::Facts> {
    let points = choices(h);
    let ways: usize = points.iter().map(|(_, w)| w.len()).product();
    assert!(
        ways <= MAX_PICKS,
        "{ways} resolutions: too many for the oracle"
    );
    let mut out = Vec::new();
    for mask in 0..1u32 << infos(h).len() {
        let mut picks = vec![0usize; points.len()];
        for _ in 0..ways {
            if let Interp::Facts(f) = facts::interpret_with(h, mask, &picks, intermediate) {
                out.push(f);
            }
            // The next choice, counting in mixed radix.
            for (i, (_, ws)) in picks.iter_mut().zip(&points) {
                *i = (*i + 1) % ws.len();
                if *i != 0 {
                    break;
                }
            }
        }
    }
    out
}

/// What a level of the oracle is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Biswas & Enea's level (index into [`axioms::LEVELS`]) under an order.
    Axiom(Order, usize),
    /// Adya's level (index into [`adya::LEVELS`]).
    Adya(usize),
}

impl Level {
    pub fn holds(self, v: &Verdicts) -> bool {
        match self {
            Level::Axiom(o, l) => {
                let i = ORDERS.iter().position(|&x| x == o).unwrap_or(0);
                v.be[i] & (1 << l) != 0
            }
            Level::Adya(l) => v.adya & (1 << l) != 0,
        }
    }
    pub fn name(self) -> String {
        match self {
            Level::Axiom(o, l) => format!("{} ({o:?})", axioms::LEVELS[l]),
            Level::Adya(l) => format!("Adya {}", adya::LEVELS[l]),
        }
    }
}

/// Whether elle-si's `read-committed` is Adya's PL-2 (the spec helper's
/// naming) rather than C4's read committed without sessions (today's).
pub const READ_COMMITTED_IS_ADYA: bool = true;

/// Compared for soundness only (elle-si must never reject what the oracle
/// accepts): none now. (Repeatable read, decided by serializability's
/// checker since PL-2.99 is PL-3 on item reads, and read committed are
/// compared for equality, each but for `:internal` reads, which Elle's
/// table has neither prohibit while the oracle rejects them at every
/// level.) Prefix and parallel snapshot isolation are decided completely
/// and compared for equality.
pub const SOUND_ONLY: &[&str] = &[];

/// Models that allow `:internal` reads (see [`SOUND_ONLY`]).
pub const INTERNAL_ALLOWED: &[&str] = &["repeatable-read", "read-committed", "consistent-view"];

/// Models elle-si may leave `:unknown` on a history with dependencies:
/// none (each is decided: a version order without the cycles it
/// prohibits, or the cycle).
pub const MAY_BE_UNKNOWN: &[&str] = &[];

pub const RC: usize = 0;
pub const RA: usize = 1;
pub const CC: usize = 2;
pub const PC: usize = 3;
pub const PSI: usize = 4;
pub const SI: usize = 5;
pub const SER: usize = 6;

/// Each oracle level and the elle-si model (today's name) it is compared
/// with. A model elle-si refuses (no checker yet) is skipped and counted.
/// (Not PL-1: the oracle's is stricter than Adya's on aborted and
/// intermediate reads.)
pub const MAPPING: &[(Level, &str)] = &[
    (
        if READ_COMMITTED_IS_ADYA {
            Level::Adya(1)
        } else {
            Level::Axiom(Order::None, RC)
        },
        "read-committed",
    ),
    (Level::Axiom(Order::None, RC), "read-committed-c4"),
    (
        Level::Axiom(Order::Session, RC),
        "strong-session-read-committed-c4",
    ),
    (Level::Axiom(Order::Session, RA), "read-atomic"),
    (Level::Axiom(Order::Session, CC), "causal-cerone"),
    (Level::Axiom(Order::Session, PC), "prefix"),
    (
        Level::Axiom(Order::Session, PSI),
        "parallel-snapshot-isolation",
    ),
    (Level::Axiom(Order::None, SI), "snapshot-isolation"),
    (Level::Adya(3), "snapshot-isolation"),
    (
        Level::Axiom(Order::Session, SI),
        "strong-session-snapshot-isolation",
    ),
    (
        Level::Axiom(Order::SessionRealtime, SI),
        "strong-snapshot-isolation",
    ),
    (Level::Axiom(Order::None, SER), "serializable"),
    (Level::Adya(4), "serializable"),
    (Level::Adya(2), "repeatable-read"),
    (Level::Adya(5), "consistent-view"),
    (
        Level::Axiom(Order::Session, SER),
        "strong-session-serializable",
    ),
    (
        Level::Axiom(Order::SessionRealtime, SER),
        "strict-serializable",
    ),
];

/// What elle-si is asked: a model, or anomalies by name (comma-separated,
/// no model: Elle's `:consistency-models nil`).
#[derive(Clone, Copy, Debug)]
pub enum Ask<'a> {
    Model(&'a str),
    Anomalies(&'a str),
}

/// THE adapter: elle-si's verdict on a Jepsen EDN history at each ask
/// (Elle's names), `None` where elle-si refuses it.
pub fn elle_si(
    edn: &str,
    workload: history::Workload,
    asks: &[Ask],
) -> Result<Vec<Option<Valid>>, String> {
    elle_si_assuming(edn, workload, asks, Assume::default())
}

/// [`elle_si`] with Elle's key options `a` (`--wfr-keys`, ...).
pub fn elle_si_assuming(
    edn: &str,
    workload: history::Workload,
    asks: &[Ask],
    a: Assume,
) -> Result<Vec<Option<Valid>>, String> {
    use elle_si::check::{CheckOptions, entry, resolve_anomalies, resolve_models};
    use elle_si::history::{KeyOrders, LoadOptions, Workload, load_bytes};
    let opts = LoadOptions {
        workload: Some(match workload {
            history::Workload::Register => Workload::RwRegister,
            history::Workload::List => Workload::ListAppend,
        }),
        keys: KeyOrders {
            wfr: a.wfr,
            sequential: a.sequential,
            linearizable: a.linearizable,
        },
        ..LoadOptions::default()
    };
    let loaded =
        load_bytes("oracle.edn", edn.as_bytes().to_vec(), opts).map_err(|e| e.to_string())?;
    Ok(asks
        .iter()
        .map(|ask| {
            let (m, opts) = match *ask {
                Ask::Model(m) => (
                    m,
                    CheckOptions {
                        models: resolve_models(&[m.to_string()]).ok()?,
                        timeout: None,
                        anomalies: Vec::new(),
                    },
                ),
                Ask::Anomalies(a) => (
                    a,
                    CheckOptions {
                        models: Vec::new(),
                        timeout: None,
                        anomalies: resolve_anomalies(&[a.to_string()]).ok()?,
                    },
                ),
            };
            // Through the entry point, which settles what a guessed writer
            // of a repeated value decided.
            let r = entry::check_loaded(&loaded, &opts).ok()?;
            // An undecided answer must be Elle's for a graph with no edges
            // (there is no deadline here).
            assert!(
                r.valid != Valid::Unknown
                    || matches!(ask, Ask::Anomalies(_))
                    || MAY_BE_UNKNOWN.contains(&m)
                    || r.anomaly_types
                        .iter()
                        .any(|t| t == "empty-transaction-graph"),
                "{m}: unknown without an empty graph: {:?}\n{edn}",
                r.anomaly_types
            );
            Some(r.valid)
        })
        .collect())
}

/// Checks the oracle against itself: the lattice's implications, and the
/// two characterizations that must coincide (Adya's PL-3 and PL-SI are
/// Biswas & Enea's serializability and SI without sessions).
pub fn self_check(h: &History, v: &Verdicts) -> Result<(), String> {
    let be = |o: usize, l: usize| v.be[o] & (1 << l) != 0;
    let ad = |l: usize| v.adya & (1 << l) != 0;
    let mut errs = Vec::new();
    if ad(4) != be(0, SER) {
        errs.push("Adya PL-3 != serializability (no sessions)");
    }
    if ad(3) != be(0, SI) {
        errs.push("Adya PL-SI != SI (no sessions)");
    }
    for o in 0..3 {
        for (strong, weak) in [
            (SER, SI),
            (SI, PC),
            (SI, PSI),
            (PC, CC),
            (PSI, CC),
            (CC, RA),
            (RA, RC),
        ] {
            if be(o, strong) && !be(o, weak) {
                errs.push("a stronger axiom holds where a weaker does not");
            }
        }
        if o > 0 && (v.be[o] & !v.be[o - 1]) != 0 {
            errs.push("a level holds with more order but not with less");
        }
    }
    for (strong, weak) in [(4, 3), (4, 2), (3, 1), (2, 1), (1, 0)] {
        if ad(strong) && !ad(weak) {
            errs.push("a stronger Adya level holds where a weaker does not");
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!("oracle inconsistent: {errs:?}\n{}", h.to_edn()))
    }
}

/// A checker bug the oracle found: elle-si accepts, at these models,
/// histories of this shape that the oracle rejects. Each has a minimal
/// regression test in `tests/it/oracle.rs`, ignored until it is fixed; the
/// comparison counts such disagreements apart (as excused) so that it
/// still fails on any other.
pub struct KnownBug {
    pub what: &'static str,
    pub models: Family,
    pub shows: fn(&History) -> bool,
}

/// Which of elle-si's checkers a bug lies in.
#[derive(Clone, Copy, Debug)]
pub enum Family {
    /// The causal-pattern checkers (read committed to causal).
    Causal,
    /// The polygraph + SAT checkers (SI and serializability).
    Solver,
    /// Of the causal checkers, read atomic and causal.
    AtomicAndCausal,
    All,
}

impl Family {
    pub fn contains(self, model: &str) -> bool {
        const CAUSAL: [&str; 5] = [
            "read-committed",
            "read-committed-c4",
            "strong-session-read-committed-c4",
            "read-atomic",
            "causal-cerone",
        ];
        match self {
            Family::Causal => CAUSAL.contains(&model),
            Family::Solver => !CAUSAL.contains(&model),
            Family::AtomicAndCausal => CAUSAL[3..].contains(&model),
            Family::All => true,
        }
    }
}

/// Checker bugs the oracle found and that are not fixed yet, each known
/// by the shape of the histories that show it (none open now: the four it
/// found are fixed, their regression tests in `tests/it/oracle.rs`).
pub const KNOWN_BUGS: &[KnownBug] = &[];

/// One disagreement between the oracle and elle-si.
#[derive(Clone, Debug)]
pub struct Disagreement {
    pub edn: String,
    pub level: String,
    pub model: &'static str,
    pub oracle: bool,
    pub elle_si: Valid,
}

/// Counts of a comparison run.
#[derive(Default, Debug)]
pub struct Tally {
    pub histories: usize,
    /// (history, level) pairs compared.
    pub compared: usize,
    /// Per model: (compared, agreed, refused by elle-si).
    pub per_model: BTreeMap<&'static str, (usize, usize, usize)>,
    /// Per oracle level: histories it accepted, rejected.
    pub per_level: BTreeMap<String, (usize, usize)>,
    pub disagreements: Vec<Disagreement>,
    /// Disagreements a known bug explains, per bug.
    pub excused: BTreeMap<&'static str, usize>,
    /// Elle's key options both sides assume (none by default).
    pub assume: Assume,
    /// Anomalies requests elle-si left `:unknown`, per request.
    pub undecided: BTreeMap<&'static str, usize>,
}

impl Tally {
    /// Decides `h` by the oracle and elle-si at every mapped level.
    pub fn compare(&mut self, h: &History) {
        let v = oracle_assuming(h, self.assume);
        if let Err(e) = self_check(h, &v) {
            panic!("{e}");
        }
        let edn = h.to_edn();
        let models: Vec<Ask> = MAPPING.iter().map(|m| Ask::Model(m.1)).collect();
        let ours = elle_si_assuming(&edn, h.workload, &models, self.assume)
            .unwrap_or_else(|e| panic!("elle-si refused the history: {e}\n{edn}"));
        self.histories += 1;
        for (&(level, model), got) in MAPPING.iter().zip(ours) {
            let want = level.holds(&v);
            let e = self.per_level.entry(level.name()).or_default();
            if want {
                e.0 += 1;
            } else {
                e.1 += 1;
            }
            let m = self.per_model.entry(model).or_default();
            let Some(got) = got else {
                m.2 += 1;
                continue;
            };
            m.0 += 1;
            self.compared += 1;
            // Nothing committed: Elle's empty-transaction-graph, :unknown.
            let nothing = h.txns.iter().all(|t| t.status == history::Status::Fail);
            // Elle's :unknown (empty-transaction-graph, which the adapter
            // makes sure of) where the history is valid and no dependency
            // was observed.
            let agree = match (want, got) {
                // (Without a dependency: the adapter asserts the graph is
                // empty where a model outside MAY_BE_UNKNOWN is unknown.)
                (_, Valid::Unknown) => {
                    nothing || want || SOUND_ONLY.contains(&model)
                    // Only an internal read the model allows, and no
                    // dependency (Elle's empty transaction graph).
                    || (INTERNAL_ALLOWED.contains(&model) && facts::internal(h))
                }
                (true, Valid::True) | (false, Valid::False) => !nothing,
                // Read committed accepts what the oracle rejects only for
                // reads of a transaction's own writes (Elle's allows them).
                (false, Valid::True) if INTERNAL_ALLOWED.contains(&model) => facts::internal(h),
                (false, Valid::True) => SOUND_ONLY.contains(&model),
                _ => false,
            };
            let known = KNOWN_BUGS
                .iter()
                .find(|b| !want && got == Valid::True && b.models.contains(model) && (b.shows)(h));
            if agree {
                m.1 += 1;
            } else if let Some(b) = known {
                *self.excused.entry(b.what).or_default() += 1;
            } else {
                self.disagreements.push(Disagreement {
                    edn: edn.clone(),
                    level: level.name(),
                    model,
                    oracle: want,
                    elle_si: got,
                });
            }
        }
    }

    /// Decides `h` by the oracle and elle-si at every anomalies request
    /// ([`anomalies::REQUESTS`]), where some choice of the `:info`
    /// transactions gives facts (reads of intermediate writes kept: no
    /// request prohibits G1b, though each with an anti-dependency cycle
    /// catches the one it makes); the others (aborted or thin-air reads,
    /// internal reads, incompatible list orders: what the requests do not
    /// prohibit but the facts cannot state) are not compared.
    pub fn compare_anomalies(&mut self, h: &History) {
        let facts = resolutions(h, true);
        if facts.is_empty() {
            return;
        }
        let edn = h.to_edn();
        let asks: Vec<Ask> = anomalies::REQUESTS
            .iter()
            .map(|r| Ask::Anomalies(r.names))
            .collect();
        let ours = elle_si(&edn, h.workload, &asks)
            .unwrap_or_else(|e| panic!("elle-si refused the history: {e}\n{edn}"));
        self.histories += 1;
        let nothing = h.txns.iter().all(|t| t.status == history::Status::Fail);
        for (r, got) in anomalies::REQUESTS.iter().zip(ours) {
            let want = facts.iter().any(|f| anomalies::holds(f, r));
            let m = self.per_model.entry(r.names).or_default();
            let Some(got) = got else {
                m.2 += 1;
                continue;
            };
            m.0 += 1;
            self.compared += 1;
            // Unknown is never wrong, and is counted: where a cycle rests
            // on an anti-dependency that may be a write-write step instead
            // (`check::si::shapes::check`), or no dependency was observed.
            if got == Valid::Unknown {
                *self.undecided.entry(r.names).or_default() += 1;
            }
            let agree = match (want, got) {
                (_, Valid::Unknown) => true,
                (true, Valid::True) | (false, Valid::False) => !nothing || want,
                _ => false,
            };
            if agree {
                m.1 += 1;
            } else {
                self.disagreements.push(Disagreement {
                    edn: edn.clone(),
                    level: format!("anomalies {}", r.names),
                    model: r.names,
                    oracle: want,
                    elle_si: got,
                });
            }
        }
    }

    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} histories, {} (history, level) comparisons, {} disagreements\n",
            self.histories,
            self.compared,
            self.disagreements.len()
        );
        for (what, n) in &self.undecided {
            s += &format!("  undecided {n} (anomalies {what})\n");
        }
        for (what, n) in &self.excused {
            s += &format!("  excused {n} (known bug: {what})\n");
        }
        for (m, (c, a, r)) in &self.per_model {
            s += &format!("  {m:36} compared {c:6}  agreed {a:6}  refused {r:6}\n");
        }
        for (l, (yes, no)) in &self.per_level {
            s += &format!("  oracle {l:24} valid {yes:6}  invalid {no:6}\n");
        }
        s
    }

    /// The smallest disagreement of each (level, model, direction).
    pub fn smallest(&self) -> Vec<&Disagreement> {
        let mut best: BTreeMap<(String, &str, bool), &Disagreement> = BTreeMap::new();
        for d in &self.disagreements {
            let key = (d.level.clone(), d.model, d.oracle);
            let e = best.entry(key).or_insert(d);
            if d.edn.len() < e.edn.len() {
                *e = d;
            }
        }
        best.into_values().collect()
    }
}
