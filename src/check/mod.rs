//! Decides consistency models on a compiled history: runs the checker of
//! each level family a request needs and assembles Elle's result map.

pub mod basic;
pub mod causal;
pub mod clocks;
pub mod deps;
pub mod graph;
pub mod si;

use crate::anomaly::Anomaly;
use crate::error::Error;
use crate::history::Loaded;
use crate::report::{self, CheckResult, lattice};

/// What to check.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Canonical model names (see [`resolve_models`]).
    pub models: Vec<&'static str>,
    /// Give up (`:valid? :unknown`) after this long.
    pub timeout: Option<std::time::Duration>,
    /// Anomaly types to prohibit besides the models' (Elle's `:anomalies`):
    /// each, and every anomaly that implies it.
    pub anomalies: Vec<String>,
}

/// The causal-family level that decides a model, if one does, and whether
/// session order takes part.
fn causal_level(canon: &str) -> Option<(causal::Level, bool)> {
    match canon {
        "PL-2" => Some((causal::Level::ReadCommitted, false)),
        "strong-session-PL-2" => Some((causal::Level::ReadCommitted, true)),
        "read-atomic" => Some((causal::Level::ReadAtomic, true)),
        "causal-cerone" => Some((causal::Level::Causal, true)),
        _ => None,
    }
}

/// The dependency-graph variant that decides a model, if one does.
fn si_variant(canon: &str) -> Option<si::polygraph::Variant> {
    let v = |serializable, session, realtime| si::polygraph::Variant {
        serializable,
        session,
        realtime,
    };
    match canon {
        "PL-SI" => Some(v(false, false, false)),
        "strong-session-snapshot-isolation" => Some(v(false, true, false)),
        "strong-snapshot-isolation" => Some(v(false, true, true)),
        "PL-3" => Some(v(true, false, false)),
        "strong-session-serializable" => Some(v(true, true, false)),
        "PL-SS" => Some(v(true, true, true)),
        _ => None,
    }
}

/// Models whose every prohibited anomaly some checker here can find.
fn supported(canon: &str) -> bool {
    causal_level(canon).is_some() || si_variant(canon).is_some()
}

/// Resolves user-given model names; refuses unknown and unsupported ones.
pub fn resolve_models(names: &[String]) -> Result<Vec<&'static str>, Error> {
    let mut out = Vec::new();
    for n in names
        .iter()
        .flat_map(|n| n.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let Some(c) = lattice::canonical(n) else {
            return Err(Error::Usage(format!(
                "unknown consistency model `{n}`; known models: {}",
                lattice::known_names().join(", ")
            )));
        };
        if !supported(c) {
            return Err(Error::Usage(format!(
                "elle-si cannot check `{n}` yet: no checker for it exists, and it will not pass a history it has not checked"
            )));
        }
        if !out.contains(&c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        return Err(Error::Usage("no consistency model given".into()));
    }
    Ok(out)
}

/// Checks a loaded history against the given models.
pub fn check(loaded: &Loaded, opts: &CheckOptions) -> CheckResult {
    // Anomalies asked for without a model: look with the strictest
    // checker, and prohibit only what was asked.
    // Anomalies asked for beyond what the models prohibit need the
    // strictest checkers to be looked for.
    let by_models = report::lattice::prohibited_by(&opts.models);
    let asked = report::lattice::anomalies_implying(&opts.anomalies);
    let mut run_models: Vec<&str> = opts.models.clone();
    if !asked.is_subset(&by_models) {
        run_models.extend(["PL-SS", "causal-cerone"]);
    }
    let h = &loaded.history;
    let mut found: Vec<Anomaly> = loaded.anomalies.clone();
    if h.txns
        .iter()
        .all(|t| t.status == crate::history::Status::Aborted)
    {
        found.push(Anomaly::new("empty-transaction-graph"));
    }
    found.extend(basic::anomalies(h));
    let mut levels: Vec<(causal::Level, bool)> =
        run_models.iter().filter_map(|m| causal_level(m)).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut graph: Vec<Anomaly> = Vec::new();
    // One deadline for the whole check: each checker stops at it, keeps
    // what it found, and says it was cut short.
    let deadline = opts.timeout.map(|t| std::time::Instant::now() + t);
    let mut notes = Vec::new();
    let mut causal_cut = false;
    for (level, sessions) in levels {
        let (found_here, stats) =
            causal::check(h, level, sessions, causal::Clocks::default(), deadline);
        if stats.timed_out {
            notes.push(format!(
                "{level:?}: the deadline came before every pattern was looked for: {} found",
                found_here.len()
            ));
            causal_cut |= found_here.is_empty();
        }
        for a in found_here {
            if !graph
                .iter()
                .any(|g| g.name == a.name && g.txns == a.txns && g.fields == a.fields)
            {
                graph.push(a);
            }
        }
    }
    found.extend(graph);
    if causal_cut {
        found.push(
            Anomaly::new("cycle-search-timeout")
                .field("does-not-contain", crate::anomaly::Datum::List(Vec::new())),
        );
    }
    let mut variants: Vec<si::polygraph::Variant> =
        run_models.iter().filter_map(|m| si_variant(m)).collect();
    variants.dedup();
    let mut outcomes = Outcomes {
        h,
        deadline,
        done: Vec::new(),
    };
    for v in variants {
        let mut outcome = outcomes.get(v).clone();
        qualify(&mut outcomes, v, &mut outcome);
        let s = &outcome.stats;
        notes.push(format!(
            "{}: constraints {} -> {} after {} pruning rounds, unknown dependencies {} -> {}; \
             construct {:.3} s, prune {:.3} s, solve {:.3} s ({} conflicts), interpret {:.3} s",
            v.cycle_exists().trim_end_matches("-cycle-exists"),
            s.constraints_before,
            s.constraints_after,
            s.prune_rounds,
            s.unknown_before,
            s.unknown_after,
            s.construct_s,
            s.prune_s,
            s.solve_s,
            s.solver_conflicts,
            s.interpret_s
        ));
        if s.too_big {
            notes.push(format!(
                "{}: more than {} unordered writer pairs; no verdict",
                v.cycle_exists().trim_end_matches("-cycle-exists"),
                si::polygraph::MAX_PAIRS
            ));
        }
        if s.explain_cut {
            notes.push(format!(
                "{}: the deadline came while telling the violation: {} told, more may exist",
                v.cycle_exists().trim_end_matches("-cycle-exists"),
                outcome.anomalies.len()
            ));
        }
        if outcome.timed_out {
            found.push(
                Anomaly::new("cycle-search-timeout")
                    .field("does-not-contain", crate::anomaly::Datum::List(Vec::new())),
            );
        }
        for a in outcome.anomalies {
            if !found.iter().any(|g| g.name == a.name && g.txns == a.txns) {
                found.push(a);
            }
        }
    }
    let mut prohibited = by_models;
    prohibited.extend(asked);
    let mut r = report::result_map(&prohibited, found);
    r.notes = notes;
    r
}

/// The SI and serializability checks of one run, each made once: naming a
/// variant's cycles asks whether weaker variants reject ([`qualify`]), and
/// a run that checks several models has often checked those itself.
struct Outcomes<'h> {
    h: &'h crate::history::model::History,
    deadline: Option<std::time::Instant>,
    /// Each variant's outcome as its checker gave it (before [`qualify`]).
    done: Vec<(si::polygraph::Variant, si::Outcome)>,
}

impl Outcomes<'_> {
    fn get(&mut self, v: si::polygraph::Variant) -> &si::Outcome {
        let i = match self.done.iter().position(|(w, _)| *w == v) {
            Some(i) => i,
            None => {
                let o = si::check(self.h, v, self.deadline);
                self.done.push((v, o));
                self.done.len() - 1
            }
        };
        &self.done[i].1
    }

    /// Whether the variant finds a cycle (within the time budget).
    fn rejects(&mut self, v: si::polygraph::Variant) -> bool {
        let o = self.get(v);
        !o.timed_out && !o.anomalies.is_empty()
    }
}

/// The weaker variant (without real time, else without session order) and
/// the suffix Elle gives a cycle that needs what was left out.
fn weaker(v: si::polygraph::Variant) -> Option<(si::polygraph::Variant, &'static str)> {
    if v.realtime {
        Some((
            si::polygraph::Variant {
                realtime: false,
                ..v
            },
            "-realtime",
        ))
    } else if v.session {
        Some((
            si::polygraph::Variant {
                session: false,
                ..v
            },
            "-process",
        ))
    } else {
        None
    }
}

/// Names the cycles a variant with session order or real time found by
/// what they rest on. Elle names a cycle by its own steps, but here a cycle
/// of data dependencies alone may use a write-write order that was
/// inferred through session or real-time edges elsewhere (rw-register
/// histories reveal no version order). Named by its steps, such a cycle
/// would claim the sessionless models too (`:not serializable`) though they
/// accept the history. So when the weaker variant does not reject, every
/// cycle found rests on what it leaves out, and takes its suffix.
///
/// Likewise a cycle serializability finds may use an order inferred from
/// a cycle SI allows (two adjacent anti-dependencies): when SI does not
/// reject, the cycles keep their names (their steps are as told) but rule
/// out only the serializable model checked.
fn qualify(outcomes: &mut Outcomes<'_>, v: si::polygraph::Variant, outcome: &mut si::Outcome) {
    // The weakest variant known to reject.
    let mut base = v;
    while let Some((w, suffix)) = weaker(base) {
        if outcome.anomalies.is_empty() {
            return;
        }
        if outcomes.rejects(w) {
            // The weaker variant can carry the claims. Narrower ones (which
            // cycle needs what) would take a check per cycle.
            base = w;
            continue;
        }
        for a in &mut outcome.anomalies {
            if let Some(n) = qualified(&a.name, suffix) {
                a.name = n;
            }
        }
        break;
    }
    if base.serializable
        && !outcome.anomalies.is_empty()
        && !outcomes.rejects(si::polygraph::Variant {
            serializable: false,
            ..base
        })
    {
        for a in &mut outcome.anomalies {
            a.rules_out.get_or_insert(base.cycle_exists());
        }
    }
}

/// `G-single-item` with `-process` is `G-single-item-process`; with
/// `-realtime`, a `-process` name becomes `-realtime` too (real time is
/// what the cycle rests on). None when the name already says as much or
/// is not a cycle's.
fn qualified(name: &str, suffix: &str) -> Option<String> {
    if !name.starts_with('G') || name.ends_with("-realtime") {
        return None;
    }
    match name.strip_suffix("-process") {
        Some(base) if suffix == "-realtime" => Some(format!("{base}{suffix}")),
        Some(_) => None,
        None => Some(format!("{name}{suffix}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_names_take_what_they_rest_on() {
        assert_eq!(
            qualified("G-single-item", "-process").as_deref(),
            Some("G-single-item-process")
        );
        assert_eq!(qualified("G2-item-process", "-process"), None);
        assert_eq!(
            qualified("G2-item-process", "-realtime").as_deref(),
            Some("G2-item-realtime")
        );
        assert_eq!(qualified("G0-realtime", "-realtime"), None);
        assert_eq!(qualified("lost-update", "-process"), None);
    }
}
