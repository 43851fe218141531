//! One object per history for its SI and serializability checks
//! ([`Checks`]): it decides each variant at most once in a run and
//! remembers the outcome, so the attempts of a variant's stronger ones,
//! the weaker variants [`Checks::qualified`] consults to name a
//! cycle, and a request of several models all share the same decisions.
//!
//! Data flow: a variant's outcome is either remembered or made by
//! [`super::plan::decide`] (build, prune, solve, tell); a variant whose
//! session order or real time orders no two transactions is the variant
//! without it (but session order stays beside real time), and takes that
//! one's outcome; a variant is first given a glance of its own (its
//! logged order, a few suspects), then tried with real time, then with
//! session order (it passes whenever one of those does, and they are far
//! cheaper); the outcome a caller sees is then qualified by what the
//! weaker variants reject (Elle's `-process` / `-realtime` suffixes,
//! PolySI's write orders inferred through cycles SI allows).
//!
//! What is told is proportional to what is asked ([`Telling`]): a variant
//! tried only for its verdict (a stronger one tried first, a weaker
//! variant consulted for a name) tells no cycle, and its solver is bounded
//! in decisions, not seconds, so the same history always gets the same
//! names.

use crate::check::budget::Budget;

use rustc_hash::FxHashSet;

use super::cycles::claims_of;
use super::plan::{self, Ctx, Look};
use super::polygraph::Variant;
use super::{Decision, Outcome, Telling};
use crate::anomaly::{Anomaly, Datum, Field};
use crate::history::model::{History, Status, TxnId, from};
use crate::spec::{AnomalyType, Kind, Order};

/// The SI and serializability checks of one history within one budget.
pub struct Checks<'h> {
    h: &'h History,
    budget: Budget,
    /// Each variant's outcome as [`super::plan::decide`] gave it.
    decided: Vec<Decided>,
    /// Whether the history has a lost update (see
    /// [`Checks::sure_to_reject`]), once looked for.
    lost_update: Option<bool>,
    /// Whether real time orders any two transactions (see
    /// [`Checks::timed`]), once looked for.
    realtime: Option<bool>,
    /// Whether session order orders any two (see [`Checks::sessioned`]).
    sessions: Option<bool>,
}

/// A variant's outcome, the budget it was decided within and how much
/// it tells.
struct Decided {
    variant: Variant,
    outcome: Outcome,
    until: Budget,
    telling: Telling,
}

impl<'h> Checks<'h> {
    pub fn new(h: &'h History, deadline: Option<std::time::Instant>) -> Checks<'h> {
        Checks {
            h,
            budget: Budget::for_run(deadline),
            decided: Vec::new(),
            lost_update: None,
            realtime: None,
            sessions: None,
        }
    }

    /// Where the variant's outcome, decided by its own graph within
    /// `until` and telling as `telling` asks, is kept: decided once, unless
    /// an earlier attempt told less than is asked now (it found a violation
    /// and told no cycle), or ran out of a shorter time or a tighter bound
    /// than this one has.
    fn decide(&mut self, v: Variant, until: Budget, telling: Telling) -> usize {
        self.decide_after(v, until, telling, None)
    }

    /// [`Checks::decide`], the variant's first look taken already (`look`:
    /// used when the variant is decided now).
    fn decide_after(
        &mut self,
        v: Variant,
        until: Budget,
        telling: Telling,
        look: Option<Look>,
    ) -> usize {
        let known = self.decided.iter().position(|d| d.variant == v);
        if let Some(i) = known {
            let d = &self.decided[i];
            let valid = !d.outcome.timed_out && d.outcome.anomalies.is_empty();
            let tells_enough = d.telling.cycles || !telling.cycles || valid;
            let settled = !d.outcome.timed_out
                || (d.until.no_tighter(&until) && d.telling.no_tighter(telling));
            if tells_enough && settled {
                return i;
            }
        }
        // Where stronger variants found violations, told or not: each of
        // this one's is one of theirs.
        let stronger: Vec<TxnId> = self
            .decided
            .iter()
            .filter(|d| d.variant != v && d.variant.implies(v))
            .flat_map(|d| {
                let told = d.outcome.anomalies.iter().filter_map(|a| a.txns.first());
                d.outcome.stats.found_at.iter().chain(told).copied()
            })
            .collect();
        let outcome = plan::decide(self.h, v, until, telling, (look, &stronger));
        self.keep(v, outcome, until, telling)
    }

    /// Keeps the variant's outcome, decided within `until` and telling as
    /// `telling` asks (in place of one kept before); where it is kept.
    fn keep(&mut self, v: Variant, outcome: Outcome, until: Budget, telling: Telling) -> usize {
        let decided = Decided {
            variant: v,
            outcome,
            until,
            telling,
        };
        match self.decided.iter().position(|d| d.variant == v) {
            Some(i) => {
                self.decided[i] = decided;
                i
            }
            None => {
                self.decided.push(decided);
                self.decided.len() - 1
            }
        }
    }

    /// Where the variant's outcome is kept, its cycles named by their
    /// steps; `Err` with the figures of the attempt when the budget left
    /// it undecided. A history that passes with real time or session order
    /// as a dependency passes without it (fewer edges, fewer cycles), and
    /// each makes the check far cheaper (reachability, and a good guess of
    /// the commit order): a variant first tries its stronger ones
    /// ([`Checks::shortcuts`]), for their verdicts alone (their cycles are
    /// not its own).
    fn settle(
        &mut self,
        v: Variant,
        until: Budget,
        telling: Telling,
    ) -> Result<usize, Box<super::Stats>> {
        // Session order or real time that orders no two transactions (one
        // transaction per session, as a format may give; a format without
        // times): the variant's polygraph is the one without it, whose
        // outcome it takes, with the shortcuts and witnesses only a
        // sessionless variant without real time is given (without them,
        // one session per transaction left the session variants without a
        // verdict where the sessionless one answered at once). A variant
        // that keeps real
        // time keeps session order too: with it, the write orders real
        // time implies are known before any is guessed, and its cycles
        // are told through them.
        let realtime = v.realtime && self.timed();
        let bare = Variant {
            session: v.session && (realtime || self.sessioned()),
            realtime,
            ..v
        };
        if bare != v {
            let i = self.settle(bare, until, telling)?;
            let mut outcome = self.outcome_of(i, bare);
            outcome.stats.decision = outcome.stats.decision.map(|by| Decision::Without {
                variant: bare,
                by: Box::new(by),
            });
            return Ok(self.keep(v, outcome, until, telling));
        }
        if !v.realtime && !self.decided.iter().any(|d| d.variant == v) && !self.sure_to_reject(v) {
            let verdict = Telling {
                cycles: false,
                ..telling
            };
            // A glance of the variant's own comes first: its logged order
            // as a witness, or a violation on the keys of one of that
            // order's first few short cycles, is cheaper than any stronger
            // variant's attempt (a fraction of one, on the long forks
            // measured). Not where reads are
            // narrowed first (the look is of the history as narrowed).
            let mut look = None;
            if self.h.candidates.is_empty() && (!v.session || self.timed()) {
                match Ctx::look(self.h, v, until, super::refute::Looks::Glance) {
                    Look::Decided(o) => return Ok(self.keep(v, *o, until, telling)),
                    open => look = Some(open),
                }
            }
            let unordered = look.as_ref().is_some_and(Look::unordered);
            let shortcuts = self.shortcuts(v, unordered);
            for s in shortcuts {
                let first = self.decide(s, until, verdict);
                let o = &self.decided[first].outcome;
                if o.anomalies.is_empty() && !o.timed_out {
                    return Ok(first);
                }
                // No time left for the variant itself: undecided.
                if until.expired() {
                    return Err(Box::new(o.stats.clone()));
                }
            }
            return Ok(self.decide_after(v, until, telling, look));
        }
        Ok(self.decide(v, until, telling))
    }

    /// The stronger variants whose pass proves `v`'s, in the order tried:
    /// with real time, where the history has any (Jepsen's invocations and
    /// completions) and the logged order left writers `unordered` (an
    /// rw-register history whose logged order closes cycles), then with
    /// session order. Real time orders most of a key's writers, where
    /// session order leaves every pair of two sessions' writers to a
    /// constraint (some thirty times fewer constraints on the serializable
    /// store measured). List-append reads reveal the writers' order, and
    /// real time adds an attempt that fails where session order's does.
    fn shortcuts(&mut self, v: Variant, unordered: bool) -> Vec<Variant> {
        let mut out = Vec::new();
        if unordered && self.timed() {
            out.push(Variant {
                session: true,
                realtime: true,
                ..v
            });
        }
        if !v.session && self.sessioned() {
            out.push(Variant { session: true, ..v });
        }
        out
    }

    /// Whether session order orders any two transactions, once looked for
    /// (where every transaction is its own session, the session variant
    /// is the variant itself, with none of its shortcuts, which would
    /// only repeat its own check: its banded witness decides instead).
    fn sessioned(&mut self) -> bool {
        let h = self.h;
        *self.sessions.get_or_insert_with(|| {
            crate::check::deps::has_session_order(h, &crate::check::deps::included(h))
        })
    }

    /// Whether real time orders any two transactions, once looked for.
    fn timed(&mut self) -> bool {
        let h = self.h;
        *self.realtime.get_or_insert_with(|| {
            crate::check::deps::has_realtime(h, &crate::check::deps::included(h))
        })
    }

    /// Whether the variant is sure to reject, so that trying its stronger
    /// ones first (a shortcut to a valid verdict) would be wasted: its
    /// known edges alone close a cycle, or two transactions read one
    /// version of a key (the initial one, or one a transaction
    /// that did not abort wrote) and both wrote the key (Elle's lost
    /// update: whichever write comes first, the other's read missed it).
    pub(super) fn sure_to_reject(&mut self, v: Variant) -> bool {
        let h = self.h;
        *self.lost_update.get_or_insert_with(|| {
            crate::check::basic::lost_update_groups(h)
                .iter()
                .any(|&((_, version), _)| {
                    version == from::INITIAL
                        || h.txns[h.txn_of(version) as usize].status != Status::Aborted
                })
        }) || super::polygraph::known_cycle(h, v)
    }

    /// The outcome kept at `i` ([`Checks::settle`]) as variant `v`'s: a
    /// stronger variant's pass says it decided.
    fn outcome_of(&self, i: usize, v: Variant) -> Outcome {
        let d = &self.decided[i];
        let mut o = d.outcome.clone();
        if d.variant != v {
            o.stats.decision = o.stats.decision.map(|by| Decision::Stronger {
                variant: d.variant,
                by: Box::new(by),
            });
        }
        o
    }

    /// The variant's outcome, its cycles named by their steps.
    pub fn check(&mut self, v: Variant) -> Outcome {
        match self.settle(v, self.budget, Telling::FULL) {
            Ok(i) => self.outcome_of(i, v),
            Err(stats) => Outcome {
                anomalies: Vec::new(),
                timed_out: true,
                stats: *stats,
            },
        }
    }

    /// Whether the variant finds a cycle, deciding it for its verdict
    /// alone, its solver bounded as naming is ([`Telling::VERDICT`]).
    fn rejects(&mut self, v: Variant) -> bool {
        if !v.session && self.sure_to_reject(v) {
            return true;
        }
        self.settle(v, self.budget, Telling::VERDICT)
            .is_ok_and(|i| {
                let o = &self.decided[i].outcome;
                !o.timed_out && !o.anomalies.is_empty()
            })
    }

    /// Whether the variant is decided valid, for its verdict alone, its
    /// solver bounded as naming is (undecided within that: false).
    pub(super) fn accepts(&mut self, v: Variant) -> bool {
        if self.sure_to_reject(v) {
            return false;
        }
        self.settle(v, self.budget, Telling::VERDICT)
            .is_ok_and(|i| {
                let o = &self.decided[i].outcome;
                !o.timed_out && o.anomalies.is_empty()
            })
    }

    /// The variant's outcome with its cycles named by what they rest on.
    ///
    /// Elle names a cycle by its own steps, but here a cycle of data
    /// dependencies alone may use a write-write order that was inferred
    /// through session or real-time edges elsewhere (rw-register histories
    /// reveal no version order). Named by its steps, such a cycle would
    /// claim the sessionless models too (`:not serializable`) though they
    /// accept the history. So when the weaker variant does not reject,
    /// every cycle found rests on what it leaves out, and takes its suffix.
    ///
    /// A cycle through write orders pruning inferred or the solver
    /// guessed is narrowed where it is told (`cycles::claiming`,
    /// `cycles::unsat_witness`); a contradiction claims what both orders
    /// of its pair prove (`cycles::contradiction`).
    ///
    /// The weaker variants are consulted for their verdicts alone, their
    /// solvers bounded by [`Telling::NAMING_DECISIONS`]: one undecided
    /// within that is taken as not rejecting, which only narrows the
    /// claims (a cycle then rules out the stronger variant alone). The
    /// bound is work, not time, so the names do not depend on the host's
    /// load.
    pub fn qualified(&mut self, v: Variant) -> Outcome {
        let mut outcome = self.check(v);
        // Violations found but not told, the telling's work spent: counted
        // on the last one told, as `:also`.
        if outcome.stats.untold > 0
            && let Some(a) = outcome.anomalies.pop()
        {
            let also = Datum::Int(outcome.stats.untold as i64);
            outcome.anomalies.push(a.field(Field::Also, also));
        }
        // The weakest variant known to reject.
        let mut base = v;
        while let Some((w, order)) = weaker(base) {
            if outcome.anomalies.is_empty() {
                return outcome;
            }
            // A cycle told that claims the weaker variant proves that it
            // rejects: no need to decide it (at strict serializability,
            // two more polygraphs built and pruned).
            if claims_any(&outcome.anomalies, w) || self.rejects(w) {
                // The weaker variant can carry the claims. Narrower ones
                // (which cycle needs what) would take a check per cycle.
                base = w;
                continue;
            }
            for a in &mut outcome.anomalies {
                if let Kind::Anomaly(t) = a.kind {
                    a.kind = t.with_order(order).into();
                }
            }
            break;
        }
        if base != v && !outcome.anomalies.is_empty() && !claims_any(&outcome.anomalies, base) {
            // Every cycle told rests on session order or real time (a
            // dependency path through them orders the writers its
            // anti-dependencies need, and such a path stands in for the
            // data paths beside it), yet the weaker variant rejects: its
            // own cycles say what it rules out, as Elle's graph holds them
            // beside the others. Decided as a variant consulted for a name
            // is (its solver bounded in decisions), so the same history
            // always gets the same report.
            if let Ok(i) = self.settle(base, self.budget, Telling::FULL.naming()) {
                let weaker = &self.decided[i].outcome;
                if !weaker.timed_out {
                    outcome.anomalies.extend(weaker.anomalies.iter().cloned());
                }
            }
        }
        outcome
    }
}

/// The weaker variant (without real time, else without session order) and
/// the order a cycle that needs what was left out is named by.
fn weaker(v: Variant) -> Option<(Variant, Order)> {
    if v.realtime {
        Some((
            Variant {
                realtime: false,
                ..v
            },
            Order::Realtime,
        ))
    } else if v.session {
        Some((
            Variant {
                session: false,
                ..v
            },
            Order::Process,
        ))
    } else {
        None
    }
}

/// Whether some anomaly of `anomalies` (cycles named by their steps, or
/// narrowed) rules out variant `v`: by the lattice, what it claims
/// covers every model `v`'s own `*-cycle-exists` rules out (a name that
/// needs an order `v` lacks, or a claim narrowed to a stronger model's,
/// does not). Each name and claim is asked once.
fn claims_any(anomalies: &[Anomaly], v: Variant) -> bool {
    use crate::spec::lattice::impossible_models;
    let own = v.cycle_exists();
    let wanted = impossible_models(&[own].into_iter().collect());
    let mut asked: FxHashSet<(Kind, Option<AnomalyType>)> = FxHashSet::default();
    anomalies
        .iter()
        .any(|a| asked.insert((a.kind, a.rules_out)) && wanted.is_subset(&claims_of(a)))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{PLAIN_SER, PLAIN_SI, generated};
    use super::*;
    use crate::generator::{Db, GenOptions};
    use crate::history::model::Workload;

    /// A small causal-store history, invalid at serializability in many
    /// places (the causal store lets writes of one key race).
    fn contended() -> History {
        generated(&GenOptions {
            sessions: 6,
            txns_per_session: 30,
            ops_per_txn: 4,
            keys: 6,
            workload: Workload::RwRegister,
            db: Db::Causal,
            seed: 7,
            ..GenOptions::default()
        })
    }

    #[test]
    fn the_work_budget_alone_truncates_the_telling() {
        let h = contended();
        let tell = |steps| {
            let t = Telling {
                steps,
                ..Telling::FULL
            };
            plan::decide(&h, PLAIN_SER, Budget::NONE, t, (None, &[]))
        };
        let full = tell(Telling::TELL_STEPS);
        assert!(!full.timed_out);
        assert_eq!(full.stats.untold, 0);
        assert!(full.anomalies.len() >= 2, "{}", full.anomalies.len());
        // A budget too small to tell them all: fewer told, the rest
        // counted; the verdict stands.
        let small = tell(40);
        assert!(small.stats.untold > 0);
        assert!(!small.anomalies.is_empty());
        assert!(small.anomalies.len() < full.anomalies.len());
        assert!(!small.stats.explain_cut);
        // And the same budget tells the same, however often.
        for _ in 0..3 {
            let again = tell(40);
            assert_eq!(again.anomalies, small.anomalies);
            assert_eq!(again.stats.untold, small.stats.untold);
        }
    }

    #[test]
    fn names_do_not_depend_on_the_hosts_load() {
        let h = contended();
        let alone = Checks::new(&h, None).qualified(PLAIN_SER);
        assert!(!alone.anomalies.is_empty());
        // Two threads spinning beside the check: with naming bounded in
        // seconds, the weaker variant's verdict could come too late.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                    }
                })
            })
            .collect();
        let loaded = Checks::new(&h, None).qualified(PLAIN_SER);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for s in spinners {
            s.join().expect("spinner");
        }
        assert_eq!(alone.anomalies, loaded.anomalies);
    }

    /// The variants a run decided, in the order it decided them.
    fn decided(c: &Checks) -> Vec<Variant> {
        c.decided.iter().map(|d| d.variant).collect()
    }

    #[test]
    fn a_valid_variant_passes_by_its_real_time_variant_first() {
        // Serializable-store histories whose logged order is no witness
        // (a commit's completion is logged late): each passes plain SI
        // and serializability through real time, the first stronger
        // variant tried, with no session-order attempt; the plain
        // variants decided alone by their own graphs agree.
        let mut seen = 0;
        for seed in 0..40 {
            let h = generated(&GenOptions {
                sessions: 8,
                txns_per_session: 40,
                ops_per_txn: 4,
                keys: 8,
                distribution: crate::generator::Distribution::Zipf,
                workload: Workload::RwRegister,
                db: Db::Serializable,
                seed,
                ..GenOptions::default()
            });
            for v in [PLAIN_SI, PLAIN_SER] {
                if !matches!(
                    super::super::witness::guess(&h, v),
                    super::super::witness::Guess::Release { .. }
                ) {
                    continue;
                }
                seen += 1;
                let mut c = Checks::new(&h, None);
                let o = c.check(v);
                assert!(o.anomalies.is_empty() && !o.timed_out, "seed {seed}");
                let strong = Variant {
                    session: true,
                    realtime: true,
                    ..v
                };
                assert_eq!(decided(&c), vec![strong], "seed {seed}");
                let alone = plan::decide(&h, v, Budget::NONE, Telling::FULL, (None, &[]));
                assert!(
                    alone.anomalies.is_empty() && !alone.timed_out,
                    "seed {seed}"
                );
            }
        }
        assert!(seen >= 5, "{seen}");
    }

    #[test]
    fn no_session_variant_is_tried_where_every_transaction_is_its_own_session() {
        // A write skew (each reads the other's key initial, then writes
        // its own) and a valid pair after it, each transaction its own
        // session: session order orders nothing, so the session variant
        // would be the variant itself; none is tried.
        let skew = "r(1,0,0,1)\nw(2,1,0,1)\nr(2,0,1,2)\nw(1,1,1,2)\nw(3,1,2,3)\nr(3,1,3,4)\n";
        let h = super::super::tests::load_text(skew);
        // The file's order is the logged order (no session comes back in
        // it, nor could one).
        assert!(super::super::solve::time_keys(&h).is_some());
        for (v, valid) in [(PLAIN_SI, true), (PLAIN_SER, false)] {
            let mut c = Checks::new(&h, None);
            let o = c.check(v);
            assert_eq!(o.anomalies.is_empty(), valid, "{v:?}");
            assert!(!o.timed_out, "{v:?}");
            assert!(decided(&c).iter().all(|d| !d.session), "{v:?}");
            assert!(!c.sessioned());
            // Its session and real-time variants are the variant itself
            // (the text format has no times): each decided as it (the
            // variant decided first), with its outcome and names, the
            // weaker variants rejecting what it rejects.
            for (session, realtime) in [(true, false), (false, true), (true, true)] {
                let sv = Variant {
                    session,
                    realtime,
                    ..v
                };
                let mut c = Checks::new(&h, None);
                let so = c.qualified(sv);
                assert_eq!(decided(&c).first(), Some(&v), "{sv:?}");
                assert_eq!(so.anomalies, c.qualified(v).anomalies, "{sv:?}");
                assert_eq!(so.anomalies.is_empty(), valid, "{sv:?}");
            }
        }
        // Two transactions in one session: session order orders them.
        let h = super::super::tests::load_text(&skew.replace("r(3,1,3,4)", "r(3,1,2,4)"));
        assert!(Checks::new(&h, None).sessioned());
    }

    #[test]
    fn a_glance_refutes_before_any_stronger_variant_is_tried() {
        // The SI store's long forks, 100k transactions as the benchmark's
        // row: the plain variants' logged order closes cycles, and the
        // keys of one of its first short cycles refute them, so no
        // stronger variant is decided (each would cost a polygraph of the
        // whole history).
        let h = generated(
            &GenOptions {
                sessions: 25,
                txns_per_session: 4000,
                ops_per_txn: 8,
                keys: 1000,
                distribution: crate::generator::Distribution::Zipf,
                workload: Workload::RwRegister,
                db: Db::SnapshotIsolation,
                ..GenOptions::default()
            }
            .with_fault(crate::generator::Fault::LongFork, 0.1),
        );
        for v in [PLAIN_SI, PLAIN_SER] {
            let mut c = Checks::new(&h, None);
            let o = c.check(v);
            assert!(!o.anomalies.is_empty() && !o.timed_out, "{v:?}");
            let part = o.stats.part().expect("refuted on a part");
            assert!(part.keys.is_some(), "{v:?}");
            assert_eq!(decided(&c), vec![v]);
        }
    }

    #[test]
    fn cycle_names_take_what_they_rest_on() {
        use AnomalyType as A;
        assert_eq!(
            A::GSingleItem.with_order(Order::Process),
            A::GSingleItemProcess
        );
        assert_eq!(
            A::G2ItemProcess.with_order(Order::Process),
            A::G2ItemProcess
        );
        assert_eq!(
            A::G2ItemProcess.with_order(Order::Realtime),
            A::G2ItemRealtime
        );
        assert_eq!(A::G0Realtime.with_order(Order::Realtime), A::G0Realtime);
        assert_eq!(A::LostUpdate.with_order(Order::Process), A::LostUpdate);
    }
}
