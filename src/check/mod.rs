//! Decides consistency models on a compiled history: runs the checker of
//! each level family a request needs and assembles Elle's result map.

pub mod basic;
pub mod budget;
pub mod causal;
mod cc_witness;
pub(crate) mod clocks;
mod committed;
pub(crate) mod deps;
pub mod entry;
pub(crate) mod graph;
pub mod keys;
pub mod progress;
mod settle;
pub(crate) mod si;
pub mod stages;
pub mod tuning;
pub mod verdict;

use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

use crate::anomaly::{Anomaly, Datum, Field};
use crate::error::Error;
use crate::history::Loaded;
use crate::history::model::History;
use crate::spec::anomaly::{finders, settled_without_polygraph};
use crate::spec::cycles::Shapes;
use crate::spec::{AnomalyType, Checker, Decider, Model, lattice};
use verdict::{CheckResult, Unknown, Valid};

/// What to check: typed, so that no model or anomaly can be asked for by
/// a name that is then ignored (parse names with [`resolve_models`] and
/// [`resolve_anomalies`]).
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// The models the history must satisfy (Elle's `:consistency-models`).
    pub models: Vec<Model>,
    /// Give up (`:valid? :unknown`) after this long.
    pub timeout: Option<std::time::Duration>,
    /// Anomaly types to prohibit besides the models' (Elle's `:anomalies`):
    /// each, and every anomaly that implies it.
    pub anomalies: Vec<AnomalyType>,
}

/// The causal-family level a checker runs, and whether session order
/// takes part.
fn causal_level(c: Checker) -> Option<(causal::Level, bool)> {
    match c {
        Checker::ReadCommittedC4 { sessions } => Some((causal::Level::ReadCommitted, sessions)),
        Checker::ReadAtomic => Some((causal::Level::ReadAtomic, true)),
        Checker::Causal => Some((causal::Level::Causal, true)),
        _ => None,
    }
}

/// The dependency-graph variant a checker runs.
fn si_variant(c: Checker) -> Option<si::polygraph::Variant> {
    let v = |serializable, session, realtime| si::polygraph::Variant {
        serializable,
        session,
        realtime,
    };
    match c {
        Checker::SnapshotIsolation { session, realtime } => Some(v(false, session, realtime)),
        Checker::Serializable { session, realtime } => Some(v(true, session, realtime)),
        _ => None,
    }
}

/// Splits comma-separated names.
fn split(names: &[String]) -> impl Iterator<Item = &str> {
    names
        .iter()
        .flat_map(|n| n.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
}

/// Parses user-given model names (comma-separated allowed); an unknown
/// name is an error listing the accepted ones.
pub fn resolve_models(names: &[String]) -> Result<Vec<Model>, Error> {
    parse_all(names, Model::parse)
}

/// Parses user-given anomaly names (comma-separated allowed).
pub fn resolve_anomalies(names: &[String]) -> Result<Vec<AnomalyType>, Error> {
    parse_all(names, AnomalyType::parse)
}

/// Parses each name once, in order.
fn parse_all<T: PartialEq, E: std::fmt::Display>(
    names: &[String],
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    for n in split(names) {
        let x = parse(n).map_err(|e| Error::Usage(e.to_string()))?;
        if !out.contains(&x) {
            out.push(x);
        }
    }
    Ok(out)
}

/// What a request runs and prohibits.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The checkers to run.
    pub checkers: BTreeSet<Checker>,
    /// The anomaly types that make the history invalid.
    pub prohibited: BTreeSet<AnomalyType>,
    /// Models decided through a stronger one: (model, stronger).
    pub implied_by: Vec<(Model, Model)>,
}

/// The checkers a request needs, by the specification: a model's complete
/// checker, or the finders of every anomaly Elle prohibits for it; and the
/// finders of every requested anomaly and of every anomaly implying it.
/// Refuses an empty request and an anomaly no checker can find.
pub fn plan(opts: &CheckOptions) -> Result<Plan, Error> {
    if opts.models.is_empty() && opts.anomalies.is_empty() {
        return Err(Error::Usage(
            "nothing to check: no consistency model and no anomaly given".into(),
        ));
    }
    let mut checkers = BTreeSet::from([Checker::Basic]);
    let mut implied_by = Vec::new();
    for &m in &opts.models {
        match m.decider() {
            Decider::Complete(c) => {
                checkers.insert(c);
            }
            Decider::ElleAnomalies => {
                checkers.extend(verdict::runs_for(m));
            }
            Decider::ImpliedBy(s) => {
                if let Decider::Complete(c) = s.decider() {
                    checkers.insert(c);
                }
                implied_by.push((m, s));
            }
        }
    }
    let mut unfindable = Vec::new();
    for &a in &opts.anomalies {
        if finders(&lattice::anomalies_implying(&[a])).is_empty() {
            unfindable.push(a.name());
        }
    }
    if !unfindable.is_empty() {
        return Err(Error::Usage(format!(
            "elle-si has no checker that can find {} (nor any anomaly implying it), so it cannot \
             prohibit it; anomaly types it can find: {}",
            unfindable.join(", "),
            findable().join(", ")
        )));
    }
    let asked = lattice::anomalies_implying(&opts.anomalies);
    let shapes = Shapes::of(&asked);
    if shapes.has_rw() && shapes.claim().is_none() {
        let types: Vec<&str> = shapes.types().iter().map(|a| a.name()).collect();
        return Err(Error::Usage(format!(
            "elle-si cannot decide these anomalies together: a history every version order of \
             which closes one of {} proves no one of them, nor any model beyond what each \
             rules out alone; ask for them one at a time",
            types.join(", ")
        )));
    }
    if !opts.anomalies.is_empty() {
        checkers.extend(verdict::anomaly_checkers(&asked));
    }
    let mut prohibited = lattice::prohibited_by(&opts.models);
    prohibited.extend(asked);
    Ok(Plan {
        checkers,
        prohibited,
        implied_by,
    })
}

/// Every anomaly type some checker can find, itself or through one that
/// implies it.
pub fn findable() -> Vec<&'static str> {
    AnomalyType::ALL
        .iter()
        .filter(|a| !finders(&lattice::anomalies_implying(&[**a])).is_empty())
        .map(|a| a.name())
        .collect()
}

/// Elle's `:empty-transaction-graph`, saying why the graph has no edges.
fn empty_graph(h: &crate::history::model::History) -> Anomaly {
    use crate::history::Status;
    let count = |s: Status| h.txns.iter().filter(|t| t.status == s).count();
    let (ok, info, fail) = (
        count(Status::Committed),
        count(Status::Indeterminate),
        count(Status::Aborted),
    );
    Anomaly::new(crate::spec::Marker::EmptyTransactionGraph).field(
        Field::Reason,
        Datum::Str(format!(
            "no committed transaction read a key another transaction wrote, so no \
             dependency could be checked ({ok} committed, {info} indeterminate, {fail} aborted)"
        )),
    )
}

/// Checks a loaded history as a request asks; a request [`plan`] refuses
/// is answered `:unknown` with the reason in the notes (callers that can
/// report an error call [`plan`] first).
pub fn check(loaded: &Loaded, opts: &CheckOptions) -> CheckResult {
    match plan(opts) {
        Ok(p) => check_plan(loaded, opts, &p),
        Err(e) => {
            let mut r = verdict::result_map(
                &BTreeSet::new(),
                &BTreeSet::new(),
                Vec::new(),
                BTreeSet::new(),
            );
            r.valid = Valid::Unknown;
            r.notes.push(e.to_string());
            r.unknown.push(Unknown::Refused(e.to_string()));
            r
        }
    }
}

/// Appends the anomalies of `new` that `into` does not hold yet (same
/// name, transactions, cycle and details), in order; `told` indexes `into` by
/// that identity's hash.
fn merge_new(into: &mut Vec<Anomaly>, told: &mut FxHashMap<u64, Vec<usize>>, new: Vec<Anomaly>) {
    use std::hash::{Hash, Hasher};
    for a in new {
        let mut hs = rustc_hash::FxHasher::default();
        (&a.kind, &a.txns, &a.cycle, &a.fields).hash(&mut hs);
        let same = told.entry(hs.finish()).or_default();
        if !same.iter().any(|&i| {
            let g = &into[i];
            g.kind == a.kind && g.txns == a.txns && g.cycle == a.cycle && g.fields == a.fields
        }) {
            same.push(into.len());
            into.push(a);
        }
    }
}

/// The anomalies kept so far, by [`crate::anomaly::Identity`] (the same
/// cycle filed under another claim says something else: a PSI check's
/// fractured read beside SI's G-single-item over the same two
/// transactions), and where each is.
type Told = FxHashMap<crate::anomaly::Identity, usize>;

/// Adds a variant's cycles to those found, each told once: one an earlier
/// variant told is left out, and what it counted as not told (`:also`, on
/// a variant's last cycle) goes to the one kept, which then counts at
/// least as many (the two counts may overlap, so the larger is kept).
fn add_told(found: &mut Vec<Anomaly>, told: &mut Told, new: Vec<Anomaly>) {
    for a in new {
        match told.entry(a.identity()) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(found.len());
                found.push(a);
            }
            std::collections::hash_map::Entry::Occupied(e) => {
                let kept = &mut found[*e.get()];
                if a.also() > kept.also() {
                    kept.fields.retain(|(k, _)| *k != Field::Also);
                    kept.fields.push((Field::Also, Datum::Int(a.also() as i64)));
                }
            }
        }
    }
}

/// What the causal family's levels found ([`causal_part`]).
struct CausalPart {
    graph: Vec<Anomaly>,
    notes: Vec<String>,
    /// The first level the deadline cut with nothing found.
    cut: Option<Model>,
}

/// Runs the causal family's levels among a plan's checkers, weakest
/// first, each finding told once.
fn causal_part(h: &History, plan: &Plan, deadline: Option<std::time::Instant>) -> CausalPart {
    let mut levels: Vec<(causal::Level, bool)> = plan
        .checkers
        .iter()
        .filter_map(|&c| causal_level(c))
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let mut graph: Vec<Anomaly> = Vec::new();
    let mut notes = Vec::new();
    let mut cut: Option<Model> = None;
    let mut told = FxHashMap::default();
    let mut ledger = causal::Ledger::default();
    for (level, sessions) in levels {
        let _stage = progress::Stage::enter(|| {
            format!("{level:?}{}", if sessions { " with sessions" } else { "" })
        });
        // Past the deadline, a level is not even set up.
        let (found_here, stats) = if budget::passed(deadline) {
            let stats = causal::Stats {
                timed_out: true,
                ..causal::Stats::default()
            };
            (Vec::new(), stats)
        } else {
            causal::check(h, level, sessions, causal::Clocks::default(), deadline)
        };
        if stats.timed_out {
            let more: usize = stats.counted.values().map(|ids| ids.len()).sum();
            notes.push(format!(
                "{level:?}: the deadline came before every pattern was looked for: {} found",
                found_here.len() + more
            ));
            if found_here.is_empty() && more == 0 && cut.is_none() {
                cut = Some(match (level, sessions) {
                    (causal::Level::ReadCommitted, false) => Model::ReadCommittedC4,
                    (causal::Level::ReadCommitted, true) => Model::StrongSessionReadCommittedC4,
                    (causal::Level::ReadAtomic, _) => Model::ReadAtomic,
                    (causal::Level::Causal, _) => Model::CausalCerone,
                });
            }
        }
        let found_here = ledger.level(found_here, stats.counted);
        merge_new(&mut graph, &mut told, found_here);
    }
    ledger.attach(&mut graph);
    CausalPart { graph, notes, cut }
}

/// What the polygraph's checkers found ([`polygraph_part`]): each SI /
/// serializability variant's outcome (none: the deadline came before it
/// was set up), with whether the deadline had passed when it ended; the
/// prefix / PSI levels'; the work they spent.
struct PolygraphPart {
    variants: Vec<(si::polygraph::Variant, Option<(si::Outcome, bool)>)>,
    forks: Vec<(si::forks::Level, si::Outcome)>,
    /// The anomalies-only cycle checks' outcomes, as `variants`'.
    shapes: Vec<(Shapes, Option<(si::Outcome, bool)>)>,
    work: u64,
}

/// Runs the polygraph's checkers among `checkers`, in their order (one
/// [`si::variants::Checks`] carries what each variant learnt to the next).
fn polygraph_part(
    h: &History,
    checkers: &BTreeSet<Checker>,
    deadline: Option<std::time::Instant>,
) -> PolygraphPart {
    let mut variants: Vec<si::polygraph::Variant> =
        checkers.iter().filter_map(|&c| si_variant(c)).collect();
    variants.dedup();
    let work = budget::spent();
    let mut checks = si::variants::Checks::new(h, deadline);
    let variants = variants
        .into_iter()
        .map(|v| {
            let _stage = progress::Stage::enter(|| {
                v.cycle_exists()
                    .cycle_exists_model()
                    .unwrap_or_default()
                    .to_string()
            });
            // Past the deadline, a variant is not even set up.
            let o = (!budget::passed(deadline)).then(|| {
                let o = checks.qualified(v);
                (o, budget::passed(deadline))
            });
            (v, o)
        })
        .collect::<Vec<_>>();
    let forks = si::forks::run(h, checkers, deadline);
    // A cycle a variant told that is one of those a cycle check rules out
    // (or implies one) already proves it violated: it is not run.
    let told: Vec<&Anomaly> = variants
        .iter()
        .filter_map(|(_, o)| o.as_ref())
        .flat_map(|(o, _)| &o.anomalies)
        .collect();
    let shapes = checkers
        .iter()
        .filter_map(|&c| match c {
            Checker::Cycles(shapes) => Some(shapes),
            _ => None,
        })
        .filter(|shapes| {
            let proves = lattice::anomalies_implying(&shapes.types());
            !told
                .iter()
                .any(|a| verdict::names_of(a).iter().any(|n| proves.contains(n)))
        })
        .map(|shapes| {
            let o = (!budget::passed(deadline)).then(|| {
                let o = si::shapes::run(h, shapes, &mut checks, deadline);
                (o, budget::passed(deadline))
            });
            (shapes, o)
        })
        .collect();
    PolygraphPart {
        variants,
        forks,
        shapes,
        work: budget::spent() - work,
    }
}

/// Runs a plan's checkers and judges what they find. The causal family
/// and the polygraph's checkers share nothing but the history: they run
/// side by side (on rayon's pool, as many threads as it has: one runs them
/// one after the other), and what they found is put together in one
/// order, so the result is the same whatever the threads.
pub fn check_plan(loaded: &Loaded, opts: &CheckOptions, plan: &Plan) -> CheckResult {
    let h = &loaded.history;
    let mut found: Vec<Anomaly> = loaded.anomalies.clone();
    if !deps::has_edges(h) && keys::inferred(h).ww.is_empty() {
        found.push(empty_graph(h));
    }
    found.extend(basic::anomalies(h));
    // One deadline for the whole check: each checker stops at it, keeps
    // what it found, and says it was cut short.
    let deadline = opts
        .timeout
        .and_then(|t| std::time::Instant::now().checked_add(t));
    let mut unknown = Vec::new();
    // The parts of the request (each model, the anomalies asked by name):
    // what each prohibits, the checkers that decide it, and whether the
    // polygraph decides it. A part that asks the polygraph only for
    // cycles of dependencies, which some version order may have none of,
    // is settled without it; a polygraph checker runs only for the parts
    // that are not.
    let polygraph = |d: Decider| matches!(d, Decider::Complete(c) if c.is_polygraph());
    let parts: Vec<(BTreeSet<AnomalyType>, BTreeSet<Checker>, bool)> = opts
        .models
        .iter()
        .map(|&m| {
            let by_polygraph = match m.decider() {
                Decider::ImpliedBy(s) => polygraph(s.decider()),
                d => polygraph(d),
            };
            (
                lattice::prohibited_by(&[m]),
                verdict::runs_for(m),
                by_polygraph,
            )
        })
        .chain((!opts.anomalies.is_empty()).then(|| {
            let prohibited = lattice::anomalies_implying(&opts.anomalies);
            let found_by = verdict::anomaly_checkers(&prohibited);
            (prohibited, found_by, false)
        }))
        .collect();
    let ruled_out = committed::ruled_out(h, parts.iter().map(|p| &p.0));
    let checkers: BTreeSet<Checker> = plan
        .checkers
        .iter()
        .copied()
        .filter(|&c| {
            !c.is_polygraph()
                || parts.iter().any(|(prohibited, finders, by_polygraph)| {
                    finders.contains(&c)
                        && (*by_polygraph || !settled_without_polygraph(prohibited, &ruled_out))
                })
        })
        .collect();
    let (causal, poly) = budget::join(
        || causal_part(h, plan, deadline),
        || polygraph_part(h, &checkers, deadline),
    );
    let mut notes = Vec::new();
    if h.key_orders.any() {
        let inf = keys::inferred(h);
        notes.push(format!(
            "key options ({}): {} write orders inferred, {} cyclic-versions{}",
            h.key_orders.names().join(", "),
            inf.ww.len(),
            inf.cyclic.len(),
            if inf.cut {
                "; the inference ran out of work, so no verdict can be valid"
            } else {
                ""
            }
        ));
    }
    notes.extend(causal.notes);
    found.extend(causal.graph);
    if let Some(m) = causal.cut {
        found.push(Anomaly::search_timeout(m.friendly()));
        unknown.push(Unknown::Deadline(m.friendly().to_string()));
    }
    // What is found so far, by identity: a cycle a second variant finds
    // again is told once.
    let mut told: Told = found
        .iter()
        .enumerate()
        .map(|(i, a)| (a.identity(), i))
        .collect();
    // How each verdict the polygraph gave was reached.
    let mut decided_by = Vec::new();
    // The variants some part is decided by; the others ran for the cycle
    // checker (SI's, for Elle's anomaly-set models: [`verdict::runs_for`]),
    // and what they found counts only where it proves a prohibited
    // anomaly (a cycle they tell through an inferred order, or their
    // having no verdict, says nothing of a part the cycle checker
    // decides).
    let deciding: Vec<si::polygraph::Variant> = opts
        .models
        .iter()
        .flat_map(|&m| verdict::finders_of(m))
        .chain(
            (!opts.anomalies.is_empty())
                .then(|| verdict::anomaly_checkers(&lattice::anomalies_implying(&opts.anomalies)))
                .into_iter()
                .flatten(),
        )
        .filter_map(si_variant)
        .collect();
    for (v, mut outcome) in poly.variants {
        if !deciding.contains(&v) {
            if let Some((o, _)) = outcome.as_mut().filter(|(o, _)| !o.timed_out) {
                o.anomalies.retain(|a| {
                    verdict::names_of(a)
                        .iter()
                        .any(|n| plan.prohibited.contains(n))
                });
                add_told(&mut found, &mut told, std::mem::take(&mut o.anomalies));
            }
            continue;
        }
        if let Some((o, _)) = outcome.as_ref().filter(|(o, _)| !o.timed_out)
            && let Some(d) = &o.stats.decision
        {
            decided_by.push((v.model_name(), d.clone()));
        }
        let name = v.cycle_exists().cycle_exists_model().unwrap_or_default();
        let Some((outcome, deadline_passed)) = outcome else {
            notes.push(format!(
                "{name}: no verdict: the deadline came before it was checked"
            ));
            found.push(Anomaly::search_timeout(v.cycle_exists().name()));
            unknown.push(Unknown::Deadline(name.to_string()));
            continue;
        };
        let s = &outcome.stats;
        notes.extend(s.notes(name, "conflicts"));
        if s.explain_cut {
            notes.push(format!(
                "{name}: the deadline came while telling the violation: {} told, more may exist",
                outcome.anomalies.len()
            ));
            // As Elle reports a cycle search its timeout cut: the verdict
            // stands, what is told may not be all, nor the strongest.
            found.push(Anomaly::telling_cut(name));
        }
        if s.untold > 0 {
            notes.push(format!(
                "{name}: telling ran out of work: {} told, {} more found and not told (:also)",
                outcome.anomalies.len(),
                s.untold
            ));
        }
        if outcome.timed_out {
            notes.push(format!(
                "{name}: no verdict: the deadline or the solver's bound came first (the figures above are as far as it got)"
            ));
            found.push(Anomaly::search_timeout(v.cycle_exists().name()));
            // The deadline, or else the solver's bound, came first.
            unknown.push(if deadline_passed {
                Unknown::Deadline(name.to_string())
            } else {
                Unknown::Budget(name.to_string())
            });
        }
        add_told(&mut found, &mut told, outcome.anomalies);
    }
    for (level, o) in &poly.forks {
        if let Some(d) = o.stats.decision.as_ref().filter(|_| !o.timed_out) {
            decided_by.push((level.name(), d.clone()));
        }
    }
    si::forks::tell(poly.forks, &mut found, &mut notes);
    for (shapes, outcome) in poly.shapes {
        let claim = shapes.claim().map_or("", AnomalyType::name);
        let name = format!("cycles ruled out ({claim})");
        match outcome {
            Some((o, _)) if !o.timed_out => {
                if o.stats.constraints_before > 0 || o.stats.work > 0 {
                    notes.extend(o.stats.notes(&name, "conflicts and lemmas"));
                }
                add_told(&mut found, &mut told, o.anomalies);
            }
            o => {
                let deadline_passed = o.as_ref().is_none_or(|(_, passed)| *passed);
                if let Some((o, _)) = o {
                    notes.extend(o.stats.notes(&name, "conflicts and lemmas"));
                }
                notes.push(format!(
                    "{name}: no verdict: the deadline or the check's work bound came first"
                ));
                found.push(Anomaly::search_timeout(claim));
                unknown.push(if deadline_passed {
                    Unknown::Deadline(name.clone())
                } else {
                    Unknown::Budget(name.clone())
                });
            }
        }
    }
    if poly.work > 0 {
        notes.push(format!(
            "polygraph checks: {} units of work (counted, the same on every host)",
            poly.work
        ));
    }
    // Models decided through a stronger one: what that one rejects leaves
    // them undecided, and is reported as the reason.
    let mut reasons = BTreeSet::new();
    let undecided: Vec<(Model, Model)> = plan
        .implied_by
        .iter()
        .copied()
        .filter(|&(_, s)| {
            let by_s = lattice::prohibited_by(&[s]);
            let violated = found
                .iter()
                .any(|a| verdict::names_of(a).iter().any(|n| by_s.contains(n)));
            if violated {
                reasons.extend(by_s);
            }
            violated
        })
        .collect();
    let mut r = verdict::result_map(&plan.prohibited, &reasons, found, ruled_out);
    r.notes = notes;
    if !undecided.is_empty() && r.valid == Valid::True {
        r.valid = Valid::Unknown;
    }
    r.undecided = undecided;
    r.unknown = unknown;
    r.decided_by = decided_by;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::model::History;
    use crate::history::{Format, LoadOptions, load_bytes};

    /// A history from the generator, as `opts` asks (the checkers' tests
    /// share it).
    pub(super) fn generated(opts: &crate::generator::GenOptions) -> History {
        let g = crate::generator::generate(opts).expect("generates");
        let name = match opts.format {
            Format::Text => "gen.txt",
            _ => "gen.edn",
        };
        load_bytes(name, g.history, LoadOptions::default())
            .expect("loads")
            .history
    }

    fn cycle(name: &str, txns: &[u32], also: u64) -> Anomaly {
        let mut a = Anomaly::new(AnomalyType::parse(name).expect("an anomaly type"));
        a.txns = txns.to_vec();
        if also > 0 {
            a = a.field(Field::Also, Datum::Int(also as i64));
        }
        a
    }

    #[test]
    fn a_cycle_told_again_is_kept_once_with_what_the_later_teller_counted() {
        let mut found = Vec::new();
        let mut told = Told::default();
        add_told(&mut found, &mut told, vec![cycle("G2-item", &[1, 2], 0)]);
        // A second variant tells the same cycle last, with 7 it did not
        // tell, and a new one.
        add_told(
            &mut found,
            &mut told,
            vec![cycle("G-single", &[3, 4], 0), cycle("G2-item", &[1, 2], 7)],
        );
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].name(), found[0].also()), ("G2-item", 7));
        assert_eq!((found[1].name(), found[1].also()), ("G-single", 0));
        assert_eq!(crate::anomaly::found(&found), 9);
        // A smaller count told later leaves the larger one.
        add_told(&mut found, &mut told, vec![cycle("G2-item", &[1, 2], 3)]);
        assert_eq!(found[0].also(), 7);
        assert_eq!(found[0].fields.len(), 1);
    }
}
