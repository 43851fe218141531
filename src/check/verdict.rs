//! The verdict of a check as Elle returns it: `:valid?` (three-valued),
//! why a check is unknown, the result map (`:anomaly-types`,
//! `:anomalies`, `:not`, `:also-not`), and the verdict of each model asked
//! from what the checkers found (the anomalies a model prohibits, the
//! checkers that decide it). Computed here, in `check`; `report` renders
//! it (EDN, JSON, text).

use std::collections::{BTreeMap, BTreeSet};

use crate::anomaly::Anomaly;
use crate::spec::anomaly::{finders, settled_without_polygraph};
use crate::spec::cycles::{self, Shapes};
use crate::spec::{AnomalyType, Checker, Decider, Model, Pattern, lattice};

/// Elle's three-valued verdict.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Valid {
    /// The history satisfies the models checked.
    True,
    /// It violates one.
    False,
    /// elle-si cannot tell (a deadline, an empty dependency graph, a
    /// finding that may rest on an inferred order).
    Unknown,
}

impl Valid {
    /// The verdict as Elle's `:valid?` value.
    pub fn edn(self) -> &'static str {
        match self {
            Valid::True => "true",
            Valid::False => "false",
            Valid::Unknown => ":unknown",
        }
    }

    /// The CLI's exit status for this verdict.
    pub fn exit_code(self) -> i32 {
        match self {
            Valid::True => 0,
            Valid::False => 1,
            Valid::Unknown => 2,
        }
    }
}

/// Why a verdict is unknown: the text report's second line, the result
/// map's `:elle-si/unknown-reason` (Elle's result map has no such key) and
/// index.html say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// The deadline came before this check (a variant, or a causal level)
    /// gave a verdict.
    Deadline(String),
    /// This check's work bound (its solver's decisions) ran out first.
    Budget(String),
    /// Every violation found rests on which of two equal writes a read
    /// observed (the last-writer guess for duplicated dbcop values), and
    /// it could not be settled; `deadline`: the timeout ran out first.
    /// Those violations are listed as unconfirmed.
    Guess {
        /// The timeout ran out before settling was done.
        deadline: bool,
    },
    /// No committed transaction read a key another transaction wrote.
    EmptyGraph,
    /// A model asked is decided only through a stronger one, which the
    /// history violates.
    Undecided(Model, Model),
    /// A finding of this type rests on an order the checked model's rules
    /// inferred: it may or may not be one.
    Inferred(String),
    /// The request could not be honoured.
    Refused(String),
}

impl Unknown {
    /// Its keyword (`:cause` in `:elle-si/unknown-reason`).
    pub fn cause(&self) -> &'static str {
        match self {
            Unknown::Deadline(_) => "deadline",
            Unknown::Budget(_) => "budget",
            // The deadline is what stopped settling: the cause a caller
            // acts on (a longer --timeout), as for any check it cut.
            Unknown::Guess { deadline: true } => "deadline",
            Unknown::Guess { deadline: false } => "unsettled-guess",
            Unknown::EmptyGraph => "empty-transaction-graph",
            Unknown::Undecided(..) => "undecided",
            Unknown::Inferred(_) => "inferred-order",
            Unknown::Refused(_) => "refused",
        }
    }
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unknown::Deadline(what) => write!(f, "the deadline came before {what} gave a verdict"),
            Unknown::Budget(what) => write!(
                f,
                "{what} ran out of its work bound (the solver's decisions) before a verdict"
            ),
            Unknown::Guess { deadline } => write!(
                f,
                "every violation found rests on which of two equal writes a read observed (duplicated values, resolved to the last writer), and {}: they are listed as unconfirmed",
                if *deadline {
                    "the deadline came before that guess was settled"
                } else {
                    "no check without the guess settled it"
                }
            ),
            Unknown::EmptyGraph => f.write_str(
                "no committed transaction read a key another transaction wrote: no dependency could be checked",
            ),
            Unknown::Undecided(m, s) => {
                write!(
                    f,
                    "{} is decided only through {}, which the history violates",
                    m.friendly(),
                    s.friendly()
                )?;
                match m.see_also() {
                    Some(c) => write!(
                        f,
                        " ({} is Bailis's single-object causal consistency; for transactional causal consistency, which elle-si decides completely, ask for `{}` or `tcc`)",
                        m.name(),
                        c.name()
                    ),
                    None => Ok(()),
                }
            }
            Unknown::Inferred(t) => write!(
                f,
                "a {t} found rests on an order only the checked model's rules infer: it may not be one"
            ),
            Unknown::Refused(why) => write!(f, "the request was refused: {why}"),
        }
    }
}

/// Anomaly types that make a verdict unknown rather than false.
pub const UNKNOWN_TYPES: &[&str] = &["empty-transaction-graph", "cycle-search-timeout"];

/// One history's verdict.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// The verdict.
    pub valid: Valid,
    /// Sorted, as Elle sorts keywords.
    pub anomaly_types: Vec<String>,
    /// The anomalies reported, by the type each is filed under.
    pub anomalies: BTreeMap<String, Vec<Anomaly>>,
    /// Elle's `:not`: the weakest models the anomalies rule out.
    pub not: BTreeSet<String>,
    /// Elle's `:also-not`: the stronger models they rule out too.
    pub also_not: BTreeSet<String>,
    /// How the check went (stage times, constraint counts), for --verbose.
    pub notes: Vec<String>,
    /// Requested models elle-si decides only through a stronger one, as
    /// (model, the stronger), where the history violates the stronger:
    /// their verdict is unknown, and what the stronger one prohibits is
    /// reported as the reason.
    pub undecided: Vec<(Model, Model)>,
    /// Cycles of dependencies (G0, G1c, ...) that no version order of the
    /// history needs: a cycle the polygraph's checkers tell whose steps
    /// only look like one says nothing of a part that asks them for
    /// nothing else ([`settled_without_polygraph`]).
    pub ruled_out: BTreeSet<AnomalyType>,
    /// Why checks gave no verdict, or none that holds (the deadline, a
    /// work bound, a guess not settled), as the checks said; see
    /// [`CheckResult::unknown_reasons`] for every reason.
    pub unknown: Vec<Unknown>,
    /// Violations that rest on a guess that could not be settled
    /// ([`Unknown::Guess`]), by type: reported as unconfirmed, not found.
    pub unconfirmed: BTreeMap<String, Vec<Anomaly>>,
    /// How the polygraph's checkers reached each verdict they gave, by
    /// the model whose graph was checked (in the order checked): the
    /// result map's `:elle-si/decided-by`, when the caller asks for it
    /// (`-v`, the JNI's `:decided-by true`; the edges clear it otherwise,
    /// so that a result map is Elle's unless asked).
    pub decided_by: Vec<(&'static str, crate::check::si::Decision)>,
}

impl CheckResult {
    /// How many anomalies are reported.
    pub fn count(&self) -> usize {
        self.anomalies.values().map(Vec::len).sum()
    }

    /// Why the verdict, or a part's, is unknown: what the checks said
    /// ([`CheckResult::unknown`]), then what the result shows (an empty
    /// graph, a model undecided, a finding resting on an inferred order).
    /// Empty for a valid history (a check past the deadline that a part
    /// did not need says nothing then).
    pub fn unknown_reasons(&self) -> Vec<Unknown> {
        if self.valid == Valid::True {
            return Vec::new();
        }
        let mut v = self.unknown.clone();
        let mut add = |u: Unknown| {
            if !v.contains(&u) {
                v.push(u);
            }
        };
        if self.anomalies.contains_key("empty-transaction-graph") {
            add(Unknown::EmptyGraph);
        }
        for &(m, s) in &self.undecided {
            add(Unknown::Undecided(m, s));
        }
        for a in self.anomalies.values().flatten() {
            if a.told.is_some() && !a.kind.is_marker() {
                add(Unknown::Inferred(a.told_name().to_string()));
            }
        }
        if v.is_empty() {
            // The checks gave no verdict without saying why: a search
            // that timed out (as deadline, had it said).
            if self.anomalies.contains_key("cycle-search-timeout") {
                v.push(Unknown::Deadline("a check".into()));
            }
        }
        v
    }

    /// Moves the violations found (not the markers of checks that gave no
    /// verdict) to [`CheckResult::unconfirmed`]: they rest on a guess not
    /// settled. The verdict becomes unknown, and no model is ruled out.
    pub fn unconfirm(&mut self, deadline: bool) {
        let found: Vec<String> = self
            .anomalies
            .keys()
            .filter(|t| !UNKNOWN_TYPES.contains(&t.as_str()))
            .cloned()
            .collect();
        for t in found {
            if let Some(list) = self.anomalies.remove(&t) {
                self.unconfirmed.insert(t, list);
            }
        }
        self.anomaly_types = self.anomalies.keys().cloned().collect();
        self.valid = Valid::Unknown;
        self.not.clear();
        self.also_not.clear();
        self.unknown.push(Unknown::Guess { deadline });
    }
}

/// Every anomaly type an anomaly counts under: its type and its pattern,
/// or, when its claim is narrowed (`rules_out`), that alone. Markers
/// (`empty-transaction-graph`, ...) count under none.
pub fn names_of(a: &Anomaly) -> Vec<AnomalyType> {
    if let Some(r) = a.rules_out {
        return vec![r];
    }
    let mut v: Vec<AnomalyType> = a.kind.anomaly().into_iter().collect();
    if let Some(t) = a.pattern.map(Pattern::anomaly)
        && !v.contains(&t)
    {
        v.push(t);
    }
    v
}

/// The types an anomaly's own steps name, whatever its narrowed claim.
fn told_names(a: &Anomaly) -> Vec<AnomalyType> {
    a.told.unwrap_or(a.kind).anomaly().into_iter().collect()
}

/// How a part of a request is decided (see [`verdict_under`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    /// A model, by the checkers that look for what it prohibits (its
    /// complete checker, or those of Elle's anomaly set: see
    /// [`finders_of`]): another checker's cycle that only looks like one
    /// of its anomalies (its steps rest on an order that checker's model
    /// inferred) says nothing of it.
    Checked(BTreeSet<Checker>),
    /// A model decided only through a stronger one the history violates.
    Undecided,
    /// Anomalies asked for by name, looked for by whichever checkers find
    /// them.
    Anomalies,
}

/// The checkers that decide model `m`: its complete checker; or, for a
/// model Elle defines by the anomalies it prohibits, the checkers that
/// look for those as if asked by name ([`anomaly_checkers`]: the cycles
/// with an anti-dependency are the cycle checker's, which finds one where
/// every version order closes one; SI's checker, stopping at its first
/// violation, need not tell one of them), or where the cycle checker
/// cannot decide them together, each anomaly's finders; or those of the
/// stronger model that implies it.
pub fn finders_of(m: Model) -> BTreeSet<Checker> {
    match m.decider() {
        Decider::Complete(c) => BTreeSet::from([c]),
        Decider::ElleAnomalies => {
            let prohibited = lattice::prohibited_by(&[m]);
            if Shapes::of(&prohibited).claim().is_some() {
                anomaly_checkers(&prohibited)
            } else {
                finders(&prohibited)
            }
        }
        Decider::ImpliedBy(s) => finders_of(s),
    }
}

/// The checkers run for model `m`: those that decide it
/// ([`finders_of`]) and, for a model Elle defines by its anomalies, its
/// anomalies' polygraph finders too (SI's checker: a cycle it tells that
/// the model prohibits decides it without the cycle checker, and its
/// witness, kept, is the cycle checker's first try). Not C4's read
/// committed, whose G1c the cycle checker decides, weighing every writer
/// a read of a repeated value may have observed where C4's reads a guess.
pub fn runs_for(m: Model) -> BTreeSet<Checker> {
    let mut out = finders_of(m);
    if m.decider() == Decider::ElleAnomalies {
        out.extend(
            finders(&lattice::prohibited_by(&[m]))
                .into_iter()
                .filter(|c| c.is_polygraph()),
        );
    }
    out
}

/// The checkers that look for anomalies asked for by name (`asked`,
/// closed under implication): each one's finders, except that the cycles
/// of the dependency graph they rule out, once one of those has an
/// anti-dependency, are the cycle checker's ([`Checker::Cycles`]): SI's
/// and serializability's would rule out more (a G2-item asked alone
/// allows a G1c).
pub fn anomaly_checkers(asked: &BTreeSet<AnomalyType>) -> BTreeSet<Checker> {
    let shapes = Shapes::of(asked);
    if !shapes.has_rw() {
        return finders(asked);
    }
    let mut out = finders(asked.iter().filter(|&&a| !cycles::is_cycle_type(a)));
    out.insert(Checker::Cycles(shapes));
    out
}

/// The verdict on one part of a request, the anomaly types it prohibits
/// being `prohibited`: valid when the whole is; else invalid where a
/// reported anomaly proves one of them; else unknown where undecided,
/// where a check gave no verdict (it ran out of time, or no dependency
/// could be checked; not a telling cut short, whose verdict stands),
/// where a reported anomaly may be one of them (its cycle rests on an
/// order a model's rules inferred) and came from a checker that decides
/// this part, or, for anomalies asked for by name, where the whole is
/// unknown; else valid (a model whose checkers found nothing it
/// prohibits, beside another one the history violates or that elle-si
/// cannot decide).
pub fn verdict_under(r: &CheckResult, prohibited: &BTreeSet<AnomalyType>, basis: &Basis) -> Valid {
    if r.valid == Valid::True {
        return Valid::True;
    }
    let any = |names: fn(&Anomaly) -> Vec<AnomalyType>, mine: &dyn Fn(&Anomaly) -> bool| {
        r.anomalies
            .values()
            .flatten()
            .any(|a| mine(a) && names(a).iter().any(|n| prohibited.contains(n)))
    };
    // Whether an anomaly whose claim was narrowed to a model's
    // `*-cycle-exists` came from one of this part's checkers.
    let mine = |a: &Anomaly| match (basis, a.rules_out) {
        (Basis::Checked(finders), Some(claim)) => {
            claim.finders().iter().any(|c| finders.contains(c))
        }
        (Basis::Checked(_), _) => false,
        _ => true,
    };
    // Whether the polygraph's findings cannot decide this part (its
    // cycles of dependencies ruled out).
    let settled = settled_without_polygraph(prohibited, &r.ruled_out);
    // A check that gave no verdict in time (a telling cut short says why,
    // and its verdict stands; the polygraph's, for a settled part, did
    // not have to give one).
    let undecided_check = r
        .anomalies
        .iter()
        .filter(|(t, _)| UNKNOWN_TYPES.contains(&t.as_str()))
        .flat_map(|(_, list)| list)
        .any(|a| {
            let polygraph_s = a.undecided_claim().is_some_and(|c| {
                !c.finders().is_empty() && c.finders().iter().all(|f| f.is_polygraph())
            });
            let excused = a.is_telling_cut() || (settled && polygraph_s);
            !excused
        });
    // A violation of this part resting on a guess not settled.
    let unconfirmed = r
        .unconfirmed
        .values()
        .flatten()
        .any(|a| names_of(a).iter().any(|n| prohibited.contains(n)));
    if any(names_of, &|_| true) {
        Valid::False
    } else if *basis == Basis::Undecided
        || undecided_check
        || unconfirmed
        || (!settled && any(told_names, &mine))
        || (*basis == Basis::Anomalies && r.valid == Valid::Unknown)
    {
        Valid::Unknown
    } else {
        Valid::True
    }
}

/// Each requested model's verdict ([`verdict_under`] its prohibited
/// anomalies).
pub fn model_verdicts(r: &CheckResult, models: &[Model]) -> Vec<(Model, Valid)> {
    models
        .iter()
        .map(|&m| {
            let basis = if r.undecided.iter().any(|&(u, _)| u == m) {
                Basis::Undecided
            } else {
                Basis::Checked(finders_of(m))
            };
            (m, verdict_under(r, &lattice::prohibited_by(&[m]), &basis))
        })
        .collect()
}

/// Elle's `result-map`: which anomalies are prohibited (by the models
/// checked, see [`lattice::prohibited_by`]) decides `:valid?` and what is
/// reported; all anomalies found shape `:not`. Each anomaly is filed under
/// what it proves ([`Anomaly::filed`]): one whose claim was narrowed (its
/// cycle rests on an inferred order) is reported under the narrowed claim,
/// its steps' type kept beside it. One whose steps name a prohibited type
/// but whose narrowed claim is not prohibited is reported all the same and
/// makes the verdict `:unknown`: it may or may not be what it looks like.
/// So does one only `reasons` holds (what a stronger model prohibits, when
/// a requested model is decided only through it): it is why the verdict
/// is unknown.
pub fn result_map(
    prohibited: &BTreeSet<AnomalyType>,
    reasons: &BTreeSet<AnomalyType>,
    found: Vec<Anomaly>,
    ruled_out: BTreeSet<AnomalyType>,
) -> CheckResult {
    let mut all: BTreeSet<AnomalyType> = BTreeSet::new();
    let mut anomalies: BTreeMap<String, Vec<Anomaly>> = BTreeMap::new();
    let mut bad = false;
    let settled = settled_without_polygraph(prohibited, &ruled_out);
    for a in found {
        let a = a.filed();
        let names = names_of(&a);
        let is_bad = names.iter().any(|n| prohibited.contains(n));
        let maybe = !is_bad && !settled && told_names(&a).iter().any(|n| prohibited.contains(n));
        let unknown = a.kind.is_marker() || names.iter().any(|n| reasons.contains(n));
        all.extend(names);
        if is_bad || maybe || unknown {
            bad |= is_bad;
            anomalies.entry(a.name().to_string()).or_default().push(a);
        }
    }
    if anomalies.is_empty() {
        return CheckResult {
            valid: Valid::True,
            anomaly_types: Vec::new(),
            anomalies,
            not: BTreeSet::new(),
            also_not: BTreeSet::new(),
            notes: Vec::new(),
            undecided: Vec::new(),
            ruled_out,
            unknown: Vec::new(),
            unconfirmed: BTreeMap::new(),
            decided_by: Vec::new(),
        };
    }
    let (not, also_not) = lattice::boundary(&all);
    anomalies.values_mut().for_each(crate::anomaly::cap);
    CheckResult {
        valid: if bad { Valid::False } else { Valid::Unknown },
        anomaly_types: anomalies.keys().cloned().collect(),
        anomalies,
        not,
        also_not,
        notes: Vec::new(),
        undecided: Vec::new(),
        ruled_out,
        unknown: Vec::new(),
        unconfirmed: BTreeMap::new(),
        decided_by: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settled_part_is_decided_whatever_the_polygraph_did() {
        let rc = lattice::prohibited_by(&[Model::ReadCommitted]);
        let ser = lattice::prohibited_by(&[Model::Serializable]);
        let mut whole = rc.clone();
        whole.extend(ser.iter().copied());
        let rc_basis = Basis::Checked(finders_of(Model::ReadCommitted));
        let ser_basis = Basis::Checked(finders_of(Model::Serializable));
        // A cycle SI's checker told resting on orders SI forces, its steps
        // a G0; serializability's check out of time.
        let mut inferred = Anomaly::new(crate::spec::AnomalyType::G0);
        inferred.txns = vec![1, 2, 3];
        inferred.rules_out = Some(AnomalyType::PlSiCycleExists);
        let timeout = Anomaly::search_timeout("PL-3-cycle-exists");
        let ruled_out: BTreeSet<AnomalyType> =
            [AnomalyType::G0, AnomalyType::G1c].into_iter().collect();
        for (found, ser_verdict) in [(inferred, Valid::False), (timeout, Valid::Unknown)] {
            // Unless no version order needs a G0 or G1c, read committed
            // cannot tell.
            let r = result_map(
                &whole,
                &BTreeSet::new(),
                vec![found.clone()],
                BTreeSet::new(),
            );
            assert_eq!(verdict_under(&r, &rc, &rc_basis), Valid::Unknown);
            let r = result_map(&whole, &BTreeSet::new(), vec![found], ruled_out.clone());
            assert_eq!(r.valid, ser_verdict);
            assert_eq!(verdict_under(&r, &rc, &rc_basis), Valid::True);
            assert_eq!(verdict_under(&r, &ser, &ser_basis), ser_verdict);
        }
    }
}
