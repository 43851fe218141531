//! Results as Elle returns them: `:valid?`, `:anomaly-types`, `:anomalies`,
//! `:not`, `:also-not`, and their renderings (EDN, JSON, text).

pub mod dot;
pub mod folder;
pub mod html;
pub mod picture;
pub mod render;
pub mod svg;

use std::collections::{BTreeMap, BTreeSet};

use crate::anomaly::Anomaly;
use crate::spec::{AnomalyType, Model, anomaly::pattern_name, lattice};

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
}

impl CheckResult {
    /// How many anomalies are reported.
    pub fn count(&self) -> usize {
        self.anomalies.values().map(Vec::len).sum()
    }
}

/// Every anomaly type an anomaly counts under: its type and its pattern,
/// or, when its claim is narrowed (`rules_out`), that alone. Markers
/// (`empty-transaction-graph`, ...) count under none.
pub fn names_of(a: &Anomaly) -> Vec<AnomalyType> {
    if let Some(r) = a.rules_out {
        return AnomalyType::parse(r).into_iter().collect();
    }
    let mut v: Vec<AnomalyType> = AnomalyType::parse(&a.name).into_iter().collect();
    if let Some(p) = a.pattern
        && let Ok(t) = AnomalyType::parse(&pattern_name(p))
        && !v.contains(&t)
    {
        v.push(t);
    }
    v
}

/// The types an anomaly's own steps name, whatever its narrowed claim.
fn told_names(a: &Anomaly) -> Vec<AnomalyType> {
    AnomalyType::parse(a.told_name()).into_iter().collect()
}

/// The verdict on one part of a request, the anomaly types it prohibits
/// being `prohibited`, `undecided` when it is a model decided only
/// through a stronger one that the history violates. The whole's verdict
/// when that is valid or unknown (each part is then valid, or may not
/// be); when it is invalid: invalid where a reported anomaly proves one of
/// them, else unknown where undecided, where a reported anomaly may be
/// one of them (its cycle rests on an inferred order) or where a check
/// ran out of time, else valid.
pub fn verdict_under(
    r: &CheckResult,
    prohibited: &BTreeSet<AnomalyType>,
    undecided: bool,
) -> Valid {
    if r.valid != Valid::False {
        return r.valid;
    }
    let any = |names: fn(&Anomaly) -> Vec<AnomalyType>| {
        r.anomalies
            .values()
            .flatten()
            .any(|a| names(a).iter().any(|n| prohibited.contains(n)))
    };
    let cut = r
        .anomalies
        .keys()
        .any(|t| UNKNOWN_TYPES.contains(&t.as_str()));
    if any(names_of) {
        Valid::False
    } else if undecided || cut || any(told_names) {
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
            let undecided = r.undecided.iter().any(|&(u, _)| u == m);
            let v = verdict_under(r, &lattice::prohibited_by(&[m]), undecided);
            (m, v)
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
) -> CheckResult {
    let mut all: BTreeSet<AnomalyType> = BTreeSet::new();
    let mut anomalies: BTreeMap<String, Vec<Anomaly>> = BTreeMap::new();
    let mut bad = false;
    for a in found {
        let a = a.filed();
        let names = names_of(&a);
        let is_bad = names.iter().any(|n| prohibited.contains(n));
        let maybe = !is_bad && told_names(&a).iter().any(|n| prohibited.contains(n));
        let unknown =
            UNKNOWN_TYPES.contains(&a.name.as_str()) || names.iter().any(|n| reasons.contains(n));
        all.extend(names);
        if is_bad || maybe || unknown {
            bad |= is_bad;
            anomalies.entry(a.name.clone()).or_default().push(a);
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
        };
    }
    let (not, also_not) = lattice::boundary(&all);
    CheckResult {
        valid: if bad { Valid::False } else { Valid::Unknown },
        anomaly_types: anomalies.keys().cloned().collect(),
        anomalies,
        not,
        also_not,
        notes: Vec::new(),
        undecided: Vec::new(),
    }
}
