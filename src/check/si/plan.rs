//! The plan: everything the SI / serializability engine may try on one
//! variant of a history, in the order it tries it ([`PLAN`]). Reading
//! this file tells what the engine does; each strategy's module says how.
//!
//! A variant is decided by the first strategy of [`PLAN`] that applies
//! and reaches a verdict ([`Strategy::applies`], [`Strategy::run`]); the
//! outcome says which one it was and on what ([`super::Decision`], in
//! [`super::Stats::decision`]: printed by `-v`, kept in the result map).
//! Every strategy that builds a polygraph goes through the one pipeline,
//! [`super::pipeline::run`] (build, prune, solve, tell), over a
//! [`super::polygraph::Scope`]: the whole history, a window of it, the
//! keys of a suspect, or a guessed order of writes. Each is
//! bounded in work, never in seconds ([`crate::check::budget`]); the
//! run's deadline may only stop it.
//!
//! Why this order. What is cheap and usually decides comes first: the
//! logged order of writes, linear in micro-ops, is a witness for most
//! valid histories ([`Strategy::LoggedOrder`]); where it is not, its short
//! cycles are where a violation most likely is, and parts on their keys
//! refute most invalid ones ([`Strategy::Suspects`]). Then what a
//! stronger variant found (each of this variant's violations is one of
//! its: [`Strategy::AroundClusters`]). Then the witnesses that keep part
//! of the logged order ([`Strategy::ReleasedWitness`],
//! [`Strategy::BandedWitness`]): a valid history pays for them, an
//! invalid one only where nothing cheaper refuted it. Then the windows of
//! the history ([`Strategy::AroundLone`], [`Strategy::Windows`],
//! [`Strategy::GrowingWindows`]), which can only refute. Last the whole
//! polygraph ([`Strategy::Whole`], with the bounded-sessions search where
//! it applies), which is complete but may be beyond reach: bounded in
//! solver decisions on large sessionless histories, `:unknown` where the
//! bound cuts it.
//!
//! Above this, per history ([`super::variants::Checks`]): a variant is
//! first given a glance of its own (this plan's first two strategies,
//! the suspects looked at briefly, [`Looks::Glance`]), then its stronger
//! variants (with real time, with session order) are tried for their
//! verdicts alone, as a pass of theirs proves its own; only then does it
//! go on with the rest of this plan. Before the plan, reads of values
//! written more than once are narrowed to the writers known dependencies
//! allow ([`super::narrow`]).

use super::polygraph::{self, Variant};
use super::refute::{self, Around, Looks};
use super::{
    Decision, Kept, Outcome, Stats, Telling, check_polygraph_telling, narrow, sessions, witness,
};
use crate::check::budget::Budget;
use crate::history::model::*;

/// A strategy the engine may try on a variant (see [`PLAN`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The logged order of each key's writes as a witness
    /// ([`witness::guess`]).
    LoggedOrder,
    /// Parts on the keys of the logged order's short cycles, or of lost
    /// updates ([`refute::by_keys`]), as much as the context's [`Looks`]
    /// says.
    Suspects,
    /// Windows where a stronger variant's violations cluster
    /// ([`refute::around`], [`Around::Clusters`]).
    AroundClusters,
    /// The suspects a glance left ([`Looks::All`] after
    /// [`Looks::Glance`]).
    MoreSuspects,
    /// The logged order kept where it closes no cycle, the rest solved
    /// ([`witness::released`]).
    ReleasedWitness,
    /// The logged order kept for writers far apart, in rounds
    /// ([`witness::banded`]).
    BandedWitness,
    /// Windows around a stronger variant's lone violations
    /// ([`Around::Lone`]).
    AroundLone,
    /// Windows of a large sessionless history in time order
    /// ([`refute::windows`]).
    Windows,
    /// A small sessionless history's whole polygraph, its solver bounded
    /// ([`crate::check::tuning::WHOLE_DECISIONS`]).
    StalledWhole,
    /// Windows of growing size, when that whole stalled
    /// ([`refute::stalled`]).
    GrowingWindows,
    /// The bounded-sessions search where it applies ([`sessions`]), else
    /// the whole polygraph.
    Whole,
}

/// What the engine tries, in order (the reasons are in the module doc).
pub const PLAN: [Strategy; 11] = [
    Strategy::LoggedOrder,
    Strategy::Suspects,
    Strategy::AroundClusters,
    Strategy::MoreSuspects,
    Strategy::ReleasedWitness,
    Strategy::BandedWitness,
    Strategy::AroundLone,
    Strategy::Windows,
    Strategy::StalledWhole,
    Strategy::GrowingWindows,
    Strategy::Whole,
];

/// Where the first look ends ([`Ctx::look`]): the strategies before it
/// are the glance a variant gets before its stronger variants.
const LOOKED: usize = 2;

/// A guessed order that closes cycles ([`witness::Guess::Release`]): the
/// keys they run through and the order.
struct Guessed {
    keys: Vec<bool>,
    cycles: Box<witness::Cycles>,
}

/// A variant's check in progress: the history, the variant, what it may
/// spend and tell, and what the strategies so far left for the next.
pub(super) struct Ctx<'h> {
    h: &'h History,
    variant: Variant,
    budget: Budget,
    telling: Telling,
    /// Where stronger variants found violations ([`Stats::found_at`]).
    stronger: Vec<TxnId>,
    /// How much [`Strategy::Suspects`] looks at.
    looks: Looks,
    /// The logged order, where it closes cycles.
    guessed: Option<Guessed>,
    /// The logged order's keys, places and included transactions, for
    /// [`Strategy::BandedWitness`] (where the route says so).
    band: Option<(Vec<bool>, Vec<u64>, Vec<bool>)>,
    /// How the banded witness's rounds went, said with whatever decides.
    rounds: Option<witness::Rounds>,
    /// [`Strategy::StalledWhole`] ran and its solver stalled.
    stalled: bool,
    /// The next strategy of [`PLAN`] to try.
    next: usize,
}

/// A variant's first look ([`Ctx::look`]).
pub(super) enum Look<'h> {
    /// Decided already.
    Decided(Box<Outcome>),
    /// Not decided: the rest of the plan, to go on with.
    Open(Box<Ctx<'h>>),
}

impl Look<'_> {
    /// Whether the logged order closes cycles (the writers it orders are
    /// not all ordered by what the history shows).
    pub(super) fn unordered(&self) -> bool {
        matches!(self, Look::Open(c) if c.guessed.is_some())
    }
}

impl<'h> Ctx<'h> {
    fn new(h: &'h History, variant: Variant, budget: Budget, looks: Looks) -> Ctx<'h> {
        Ctx {
            h,
            variant,
            budget,
            telling: Telling::FULL,
            stronger: Vec::new(),
            looks,
            guessed: None,
            band: None,
            rounds: None,
            stalled: false,
            next: 0,
        }
    }

    /// The variant's first look: [`PLAN`]'s strategies before
    /// [`LOOKED`], the suspects looked at as `looks` says.
    pub(super) fn look(h: &'h History, variant: Variant, budget: Budget, looks: Looks) -> Look<'h> {
        let mut ctx = Ctx::new(h, variant, budget, looks);
        match ctx.run_to(LOOKED) {
            Some(o) => Look::Decided(Box::new(o)),
            None => Look::Open(Box::new(ctx)),
        }
    }

    /// Tries the strategies from the next one up to `end` (exclusive);
    /// the outcome of the first that decides.
    fn run_to(&mut self, end: usize) -> Option<Outcome> {
        while self.next < end {
            let s = PLAN[self.next];
            self.next += 1;
            if !s.applies(self) {
                continue;
            }
            if self.budget.expired() {
                // No strategy starts past the deadline (or the work this
                // variant was given): undecided.
                return Some(Outcome {
                    anomalies: Vec::new(),
                    timed_out: true,
                    stats: Stats::default(),
                });
            }
            let _stage = crate::check::progress::Stage::enter(|| s.describe().to_string());
            if let Some(mut o) = s.run(self) {
                debug_assert!(
                    o.timed_out || o.stats.decision.is_some(),
                    "{s:?} decided and did not say how"
                );
                o.stats.banded = o.stats.banded.or(self.rounds);
                return Some(o);
            }
        }
        None
    }

    /// The rest of the plan, within `budget`, telling as `telling` asks,
    /// looking first where stronger variants found violations.
    fn finish(mut self, budget: Budget, telling: Telling, stronger: &[TxnId]) -> Outcome {
        self.budget = budget;
        self.telling = telling;
        self.stronger = stronger.to_vec();
        // The whole always decides, or says it could not.
        self.run_to(PLAN.len()).unwrap_or(Outcome {
            anomalies: Vec::new(),
            timed_out: true,
            stats: Stats::default(),
        })
    }
}

impl Strategy {
    /// What `-v` calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Strategy::LoggedOrder => "the logged order of writes as a witness",
            Strategy::Suspects => "a part on the keys of a suspect",
            Strategy::AroundClusters => "a window where a stronger variant's violations cluster",
            Strategy::MoreSuspects => "a part on the keys of a suspect (after a glance)",
            Strategy::ReleasedWitness => {
                "a witness keeping the logged order where it closes no cycle"
            }
            Strategy::BandedWitness => "a witness keeping the logged order for writers far apart",
            Strategy::AroundLone => "a window around a stronger variant's violation",
            Strategy::Windows => "a window of the history in time order",
            Strategy::StalledWhole => "the whole polygraph, its solver bounded",
            Strategy::GrowingWindows => "a window of growing size after the whole stalled",
            Strategy::Whole => "the whole polygraph (or the bounded-sessions search)",
        }
    }

    /// Its keyword in the result map (`:elle-si/decided-by`'s `:by`).
    pub fn keyword(self) -> &'static str {
        match self {
            Strategy::LoggedOrder => "logged-order",
            Strategy::Suspects => "suspects",
            Strategy::AroundClusters => "around-clusters",
            Strategy::MoreSuspects => "more-suspects",
            Strategy::ReleasedWitness => "released-witness",
            Strategy::BandedWitness => "banded-witness",
            Strategy::AroundLone => "around-lone",
            Strategy::Windows => "windows",
            Strategy::StalledWhole => "stalled-whole",
            Strategy::GrowingWindows => "growing-windows",
            Strategy::Whole => "whole",
        }
    }

    /// Whether the strategy may decide this variant, given what the
    /// strategies before it left.
    fn applies(self, c: &Ctx) -> bool {
        let (h, v) = (c.h, c.variant);
        match self {
            Strategy::LoggedOrder | Strategy::Whole => true,
            Strategy::Suspects | Strategy::ReleasedWitness => c.guessed.is_some(),
            Strategy::MoreSuspects => c.guessed.is_some() && c.looks == Looks::Glance,
            Strategy::AroundClusters | Strategy::AroundLone => !c.stronger.is_empty(),
            Strategy::BandedWitness => c.band.is_some() && !polygraph::known_cycle(h, v),
            Strategy::Windows => !v.session,
            Strategy::StalledWhole => c.telling.cycles && refute::stalls_first(h, v),
            Strategy::GrowingWindows => c.stalled,
        }
    }

    /// Runs the strategy: its outcome when it decides, else `None` (what
    /// it learnt left in the context for the next ones).
    fn run(self, c: &mut Ctx) -> Option<Outcome> {
        let (h, v, budget, telling) = (c.h, c.variant, c.budget, c.telling);
        match self {
            Strategy::LoggedOrder => match witness::guess(h, v) {
                witness::Guess::None => None,
                witness::Guess::Holds => Some(witnessed(Stats::default(), Kept::Whole)),
                witness::Guess::Release { keys, cycles } => {
                    c.guessed = Some(Guessed { keys, cycles });
                    None
                }
            },
            Strategy::Suspects => {
                let g = c.guessed.as_ref()?;
                refute::by_keys(h, v, budget, &g.cycles, c.looks, self)
            }
            Strategy::AroundClusters => refute::around(h, v, budget, &c.stronger, Around::Clusters),
            Strategy::MoreSuspects => {
                let g = c.guessed.as_ref()?;
                refute::by_keys(h, v, budget, &g.cycles, Looks::All, self)
            }
            Strategy::ReleasedWitness => {
                let Guessed { keys, cycles } = c.guessed.take()?;
                let (when, inc) = cycles.into_order();
                match witness::route(h, &keys, &inc) {
                    witness::Route::Released => witness::released(h, v, budget, &keys, &when)
                        .map(|stats| witnessed(stats, Kept::Released)),
                    witness::Route::Banded if telling.cycles => {
                        c.band = Some((keys, when, inc));
                        None
                    }
                    witness::Route::Banded | witness::Route::Whole => None,
                }
            }
            Strategy::BandedWitness => {
                let (keys, when, inc) = c.band.take()?;
                match witness::banded(h, v, budget, &keys, (&when, &inc)) {
                    Ok(stats) => Some(witnessed(stats, Kept::Banded)),
                    Err(r) => {
                        c.rounds = (r.end != witness::RoundsEnd::NotTried).then_some(r);
                        None
                    }
                }
            }
            Strategy::AroundLone => refute::around(h, v, budget, &c.stronger, Around::Lone),
            Strategy::Windows => refute::windows(h, v, budget),
            Strategy::StalledWhole => {
                let first = telling.within(crate::check::tuning::WHOLE_DECISIONS);
                let mut o = check_polygraph_telling(h, v, budget, polygraph::Scope::WHOLE, first);
                if !o.timed_out || o.stats.too_big || budget.expired() || first == telling {
                    o.stats.decision = Some(Decision::Whole { bounded: true });
                    return Some(o);
                }
                c.stalled = true;
                None
            }
            Strategy::GrowingWindows => refute::stalled(h, v, budget, telling),
            Strategy::Whole => {
                // A large sessionless history none of the above decided:
                // its whole polygraph holds millions of constraints, beyond
                // pruning's reach, and its solver, unbounded, may not
                // return. Bounded in decisions, it ends, unknown where the
                // bound cuts it.
                let bounded = refute::large_sessionless(h, v);
                let telling = if bounded {
                    telling.within(crate::check::tuning::LARGE_WHOLE_DECISIONS)
                } else {
                    telling
                };
                let mut o = sessions::decide(h, v, budget, telling, |d, t| {
                    check_polygraph_telling(h, v, d, polygraph::Scope::WHOLE, t)
                });
                o.stats.decision.get_or_insert(Decision::Whole { bounded });
                Some(o)
            }
        }
    }
}

/// A valid outcome, by a witness that kept `kept` of the logged order.
fn witnessed(stats: Stats, kept: Kept) -> Outcome {
    Outcome {
        anomalies: Vec::new(),
        timed_out: false,
        stats: Stats {
            decision: Some(Decision::Witness { kept }),
            ..stats
        },
    }
}

/// Decides one variant by [`PLAN`]: reads of values written more than
/// once first narrowed to the writers known dependencies allow (a
/// violation is then told on the history as given). `telling` says how
/// much of a violation to tell; `look`, the variant's first look when it
/// was taken already (on a history with nothing to narrow); `stronger`,
/// where stronger variants found violations ([`Stats::found_at`]).
pub(super) fn decide(
    h: &History,
    variant: Variant,
    budget: Budget,
    telling: Telling,
    (look, stronger): (Option<Look>, &[TxnId]),
) -> Outcome {
    if let Some(look) = look {
        return go_on(look, budget, telling, stronger);
    }
    let Some(n) = narrow::narrow(h, variant, budget) else {
        return given(h, variant, budget, telling, stronger);
    };
    let mut o = given(&n.history, variant, budget, telling, stronger);
    o.stats.narrowed = Some((n.before, n.after));
    if o.timed_out || o.anomalies.is_empty() || !telling.cycles {
        return o;
    }
    // A violation to tell: told on the history as given, where each read
    // keeps every writer it may have observed (the narrowed history's
    // cycles rest on choices the narrowing made); the narrowed telling
    // stands when that one has no time left to tell it.
    let mut as_given = given(h, variant, budget, telling, stronger);
    if as_given.timed_out {
        return o;
    }
    debug_assert!(
        !as_given.anomalies.is_empty(),
        "narrowing changed a verdict"
    );
    as_given.stats.narrowed = o.stats.narrowed;
    as_given
}

/// [`decide`] on the history as given: the whole plan.
pub(super) fn given(
    h: &History,
    variant: Variant,
    budget: Budget,
    telling: Telling,
    stronger: &[TxnId],
) -> Outcome {
    go_on(
        Ctx::look(h, variant, budget, Looks::All),
        budget,
        telling,
        stronger,
    )
}

/// The outcome from a first look on: its verdict, or the rest of the
/// plan.
fn go_on(look: Look, budget: Budget, telling: Telling, stronger: &[TxnId]) -> Outcome {
    match look {
        Look::Decided(o) => *o,
        Look::Open(ctx) => ctx.finish(budget, telling, stronger),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{PLAIN_SER, PLAIN_SI, generated, load_text};
    use super::super::variants::Checks;
    use super::*;
    use crate::check::budget;
    use crate::generator::{Db, GenOptions};
    use crate::history::Workload;

    fn store(db: Db, seed: u64) -> GenOptions {
        GenOptions {
            sessions: 5,
            txns_per_session: 60,
            ops_per_txn: 4,
            keys: 8,
            workload: Workload::RwRegister,
            db,
            seed,
            ..GenOptions::default()
        }
    }

    #[test]
    fn every_strategy_is_in_the_plan_once_and_it_ends_with_the_whole() {
        for (i, s) in PLAN.iter().enumerate() {
            assert!(!PLAN[i + 1..].contains(s), "{s:?} twice");
            assert!(!s.describe().is_empty());
        }
        assert_eq!(PLAN.last(), Some(&Strategy::Whole));
        assert_eq!(
            &PLAN[..LOOKED],
            &[Strategy::LoggedOrder, Strategy::Suspects]
        );
    }

    #[test]
    fn the_outcome_says_which_strategy_decided() {
        // Sessions take turns, each reading what the one before wrote: the
        // logged order is a witness.
        let valid = load_text(
            "w(1,1,0,1)\nr(1,1,1,2)\nw(2,1,1,2)\nr(2,1,0,3)\nw(1,2,0,3)\nr(1,2,1,4)\n\
             w(2,2,1,4)\nr(2,2,0,5)\nw(1,3,0,5)\nr(1,3,1,6)\nw(2,3,1,6)\n",
        );
        let o = Checks::new(&valid, None).check(PLAIN_SER);
        assert!(o.anomalies.is_empty() && !o.timed_out);
        assert_eq!(
            o.stats.decision,
            Some(Decision::Witness { kept: Kept::Whole })
        );
    }

    #[test]
    fn a_decision_reads_in_the_result_map_as_documented() {
        let part = refute::Part {
            size: 812,
            from: 0,
            of: 3000,
            keys: Some((2, 20)),
            after_whole: false,
        };
        let strict = Variant {
            serializable: true,
            session: true,
            realtime: true,
        };
        let d = Decision::Stronger {
            variant: strict,
            by: Box::new(Decision::Part {
                by: Strategy::Suspects,
                part,
            }),
        };
        assert_eq!(
            d.value().to_string(),
            "{:strategy :stronger, :model :strict-serializable, :by {:strategy :window, \
             :by :suspects, :size 812, :from 0, :of 3000, :keys 2, :of-keys 20}}"
        );
        let d = Decision::Witness { kept: Kept::Banded };
        assert_eq!(d.value().to_string(), "{:strategy :witness, :kept :banded}");
        assert_eq!(
            Decision::Whole { bounded: true }.value().to_string(),
            "{:strategy :whole, :bounded true}"
        );
    }

    /// The same history gets the same outcome and spends the same work on
    /// every run: every limit is counted, not timed.
    #[test]
    fn a_check_spends_the_same_work_every_time() {
        // A causal store's races: write skews, which serializability
        // rules out.
        let racy = generated(&store(Db::Causal, 5));
        let run = |v| {
            let before = budget::spent();
            let o = Checks::new(&racy, None).check(v);
            let told: Vec<_> = o.anomalies.iter().map(|a| a.identity()).collect();
            (
                told,
                o.timed_out,
                o.stats.decision,
                budget::spent() - before,
            )
        };
        let mut found = 0;
        for v in [PLAIN_SI, PLAIN_SER] {
            let first = run(v);
            assert!(!first.1 && first.2.is_some(), "{v:?}: decided");
            assert!(first.3 > 0, "{v:?}: work was counted");
            found += first.0.len();
            assert_eq!(run(v), first, "{v:?}");
        }
        assert!(found > 0, "the races are violations");
    }

    /// A strategy's work bound stops it, whatever the time: with none
    /// left, nothing is decided; the run's own budget decides.
    #[test]
    fn no_strategy_starts_once_the_work_is_spent() {
        let valid = generated(&store(Db::Serializable, 4));
        let spent = Budget::NONE.within(0);
        budget::spend(1);
        let o = given(&valid, PLAIN_SER, spent, Telling::FULL, &[]);
        assert!(o.timed_out && o.anomalies.is_empty());
        let o = given(&valid, PLAIN_SER, Budget::NONE, Telling::FULL, &[]);
        assert!(!o.timed_out && o.anomalies.is_empty());
    }
}
