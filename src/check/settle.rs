//! Settling a violation that rests on a guessed writer: register
//! histories whose repeated values leave some read's writer open
//! ([`History::candidates`]), where the causal checkers read a guess (the
//! SI and serializability checkers weigh every writer). Called by
//! `entry.rs` when the first check of such a history found a violation.

use crate::check::tuning::{SETTLE_EXHAUSTIVE, SETTLE_SEARCH_CHECKS};
use std::time::Instant;

use rustc_hash::FxHashSet;

use super::cc_witness::Axiom;
use super::cc_witness::Search::{Consistent, Inconsistent, Undecided};
use super::verdict::{CheckResult, Unknown, Valid, model_verdicts};
use super::{CheckOptions, Plan, check_plan, plan};
use crate::anomaly::{Datum, Field, On, Rel};
use crate::history::Loaded;
use crate::history::build::drop_ambiguous;
use crate::history::model::{Duplicates, History, KeyId, MopId, Repeated, TxnId};
use crate::spec::lattice::{implied_models, prohibited_by};
use crate::spec::{Checker, Decider, Model};

/// Whether a checker reads a guessed writer where a read has several
/// candidates (the SI and serializability checkers weigh them all).
fn guesses(c: Checker) -> bool {
    matches!(
        c,
        Checker::ReadCommittedC4 { .. } | Checker::ReadAtomic | Checker::Causal
    )
}

/// A violation found with a guessed writer for reads of repeated values
/// may be an artefact of the guess (and an unknown verdict may rest on a
/// writer a checker assumed). It stands if the history without those
/// reads ([`drop_ambiguous`]: a subset of every resolution's dependencies)
/// still has one, or (reads with candidates) if the SI and serializability
/// models asked for, checked exactly, have one, or if every resolution of
/// the ambiguous reads violates a model asked ([`resolutions`], when they
/// are few). The history is valid as asked when a model that implies
/// everything asked holds, checked exactly ([`SETTLING`]), or when one
/// resolution satisfies every model asked ([`resolutions`], or a search
/// from the guess). Every check after the first gets what is left of the
/// timeout since `started` (the run's start), and none is made once it has
/// run out. Otherwise the answer is unknown, never a guessed false.
pub(super) fn settle_guessed_reads(
    l: &Loaded,
    rep: &Repeated,
    r: CheckResult,
    copts: &CheckOptions,
    (p, started): (&Plan, Instant),
) -> CheckResult {
    let candidates = rep.policy == Duplicates::Any;
    // With candidates, only the causal checkers guess a violation; an
    // unknown verdict may rest on a choice any checker assumed.
    if candidates && r.valid == Valid::False && !p.checkers.iter().any(|&c| guesses(c)) {
        return r;
    }
    // An unknown the deadline or a work bound made is not the guess's.
    if r.valid == Valid::Unknown
        && r.unknown_reasons()
            .iter()
            .any(|u| matches!(u, Unknown::Deadline(_) | Unknown::Budget(_)))
    {
        return r;
    }
    let again = with_time_left(copts, started)
        .and_then(|_| drop_ambiguous(&l.history))
        .map(|history| with_history(l, history))
        .and_then(|l2| Some(check_plan(&l2, &with_time_left(copts, started)?, p)));
    if let Some(mut r2) = again.filter(|r2| r2.valid == Valid::False) {
        r2.notes.push(
            "violations found again with the ambiguous reads of repeated values left out: they hold whichever write was read"
                .into(),
        );
        return r2;
    }
    let exact: Vec<_> = copts
        .models
        .iter()
        .copied()
        .filter(|m| matches!(m.decider(), Decider::Complete(c) if !guesses(c)))
        .collect();
    // The models asked that SI and serializability decide exactly,
    // weighing every writer: None when there is none (or no time).
    let r3 = (candidates && !exact.is_empty())
        .then(|| {
            let o = with_time_left(&only(copts, exact.clone()), started)?;
            let p3 = plan(&o).ok()?;
            Some(check_plan(l, &o, &p3))
        })
        .flatten();
    if let Some(mut r3) = r3.clone().filter(|r3| r3.valid == Valid::False) {
        r3.notes.push(
            "violations of SI or serializability, weighing every writer a read may have observed; the causal levels' own findings rested on a guessed writer and are left out"
                .into(),
        );
        return r3;
    }
    if candidates && let Some(valid) = valid_when_stronger(l, copts, &exact, started) {
        return valid;
    }
    let exact_hold = exact.is_empty() || r3.is_some_and(|r3| r3.valid == Valid::True);
    if candidates
        && exact_hold
        && copts.anomalies.is_empty()
        && let Some(settled) = resolutions(l, copts, p, started)
    {
        return settled;
    }
    // Not found, then: a violation unconfirmed, and the verdict unknown.
    let mut r = r;
    if r.valid == Valid::False {
        r.unconfirm(with_time_left(copts, started).is_none());
    }
    r
}

/// The candidate of read `r` a store most likely let it observe: the last
/// (in the history's order) whose transaction completed before the
/// reader was invoked, else before the reader completed, else the last.
fn likeliest(h: &History, r: MopId, cands: &[MopId]) -> usize {
    let reader = &h.txns[h.txn_of(r) as usize];
    let done = |w: MopId| h.txns[h.txn_of(w) as usize].complete.index;
    let before = |bound: i64| cands.iter().rposition(|&w| done(w) < bound);
    reader
        .invoke
        .and_then(|i| before(i.index))
        .or_else(|| before(reader.complete.index))
        .unwrap_or(cands.len() - 1)
}

/// The keys a detail of an anomaly names.
fn keys_of(h: &History, d: &Datum, out: &mut Vec<KeyId>) {
    match d {
        Datum::Key(k) => out.push(*k),
        Datum::Mop(m) => out.push(h.mops[*m as usize].key),
        Datum::Step(s) => match s.on {
            On::Read(k, _) | On::Versions(k, _, _) => out.push(k),
            On::Forced(m) => out.push(h.mops[m as usize].key),
            _ => {}
        },
        Datum::Path(p) => {
            for s in &p.steps {
                keys_of(h, &Datum::Step(*s), out);
            }
        }
        Datum::List(ds) => ds.iter().for_each(|d| keys_of(h, d, out)),
        Datum::Map(ds) => ds.iter().for_each(|(a, b)| {
            keys_of(h, a, out);
            keys_of(h, b, out);
        }),
        Datum::Alternative(_, Some(p)) => keys_of(h, &Datum::Path(p.clone()), out),
        _ => {}
    }
}

/// `l` with another history (the same transactions and micro-ops).
fn with_history(l: &Loaded, history: History) -> Loaded {
    Loaded {
        history,
        anomalies: l.anomalies.clone(),
        source: l.source.clone(),
        format: l.format,
        notes: Default::default(),
    }
}

/// `l` with each ambiguous read of `reads` observing the candidate `pick`
/// names (an index into its candidates): a history the guessing checkers
/// decide exactly.
pub(super) fn resolved(l: &Loaded, reads: &[(MopId, Vec<MopId>)], pick: &[usize]) -> Loaded {
    let mut x = l.history.clone();
    for ((r, c), &i) in reads.iter().zip(pick) {
        x.mops[*r as usize].from = c[i];
    }
    x.candidates.clear();
    with_history(l, x)
}

/// The resolution after `pick`, counting in mixed radix (the first read
/// fastest); after the last, the first again.
pub(super) fn next_pick(pick: &mut [usize], reads: &[(MopId, Vec<MopId>)]) {
    for (i, (_, c)) in pick.iter_mut().zip(reads) {
        *i = (*i + 1) % c.len();
        if *i != 0 {
            break;
        }
    }
}

/// `opts` asking for `models` alone.
fn only(opts: &CheckOptions, models: Vec<Model>) -> CheckOptions {
    CheckOptions {
        models,
        timeout: opts.timeout,
        anomalies: Vec::new(),
    }
}

/// The models asked, decided on histories whose ambiguous reads each read
/// one of their candidates (each a history the guessing checkers decide
/// exactly). Valid when one resolution satisfies them all: found among
/// all resolutions when there are at most [`SETTLE_EXHAUSTIVE`], else a
/// causally consistent (or read atomic) one found by SAT
/// ([`super::cc_witness`]) or searched for from the likeliest writers
/// ([`search`]). Invalid when every resolution (all tried) violates one
/// model asked, or when none satisfies an axiom every model asked implies.
/// None otherwise, or once the timeout has run out.
fn resolutions(
    l: &Loaded,
    copts: &CheckOptions,
    p: &Plan,
    started: Instant,
) -> Option<CheckResult> {
    let h = &l.history;
    let mut reads: Vec<(MopId, Vec<MopId>)> =
        h.candidates.iter().map(|(&r, c)| (r, c.clone())).collect();
    reads.sort_unstable_by_key(|r| r.0);
    let deadline = copts.timeout.and_then(|t| started.checked_add(t));
    let narrowed = super::si::narrowed_by_sessions(h, deadline);
    // Each read's candidates, the likeliest first (of those session order
    // and certain reads leave it, then the rest).
    for (r, c) in &mut reads {
        let kept: Vec<MopId> = match narrowed.as_ref() {
            Some(n) => match n.candidates.get(r) {
                Some(k) => k.clone(),
                None => vec![n.mops[*r as usize].from],
            },
            None => c.clone(),
        };
        let first = kept[likeliest(h, *r, &kept)];
        c.sort_by_key(|w| (*w != first, !kept.contains(w)));
    }
    let check = |pick: &[usize]| -> Option<CheckResult> {
        let o = with_time_left(copts, started)?;
        Some(check_plan(&resolved(l, &reads, pick), &o, p))
    };
    let total = reads.iter().try_fold(1usize, |n, (_, c)| {
        n.checked_mul(c.len()).filter(|&n| n <= SETTLE_EXHAUSTIVE)
    });
    let Some(total) = total else {
        // A choice satisfying the strongest of Biswas & Enea's axioms
        // every model asked implies (causality, else read atomicity) is
        // the likeliest witness; the checkers asked confirm it. None at
        // all violates every model asked, if each implies that axiom.
        let causal = copts
            .models
            .iter()
            .all(|&m| implies(m, Model::CausalCerone));
        let axiom = if causal {
            Axiom::Causal
        } else {
            Axiom::ReadAtomic
        };
        let proves = causal || copts.models.iter().all(|&m| implies(m, Model::ReadAtomic));
        match super::cc_witness::search(h, &reads, axiom, deadline) {
            Consistent(pick) => {
                let rx = check(&pick)?;
                if rx.valid == Valid::True {
                    return Some(valid_by(
                        rx,
                        &format!(
                            "a {} choice, found by SAT over the reads' writers",
                            axiom.name()
                        ),
                    ));
                }
            }
            Inconsistent if proves => {
                let mut rx = check(&vec![0; reads.len()])?;
                if rx.valid == Valid::False {
                    rx.notes.push(format!(
                        "violated whichever write each of the {} ambiguous reads of a repeated value observed: no choice of writers is {} (SAT over the reads' writers found none); the anomalies shown are those of the likeliest choice",
                        reads.len(),
                        axiom.name()
                    ));
                    return Some(rx);
                }
            }
            Inconsistent | Undecided => {}
        }
        return search(h, &reads, check);
    };
    let mut pick = vec![0usize; reads.len()];
    let mut held = vec![false; copts.models.len()];
    let mut failed: Option<CheckResult> = None;
    for n in 0..total {
        let rx = check(&pick)?;
        if rx.valid == Valid::True {
            return Some(valid_by(rx, &format!("resolution {} of {total}", n + 1)));
        }
        for (at, (_, v)) in model_verdicts(&rx, &copts.models).into_iter().enumerate() {
            held[at] |= v == Valid::True;
        }
        if rx.valid == Valid::False && failed.is_none() {
            failed = Some(rx);
        }
        next_pick(&mut pick, &reads);
    }
    // Every resolution tried: a model none of them satisfies is violated.
    let mut r = failed.filter(|_| held.iter().any(|&v| !v))?;
    r.notes.push(format!(
        "violated whichever write each ambiguous read of a repeated value observed (all {total} resolutions tried; the anomalies shown are one's)"
    ));
    Some(r)
}

/// Whether model `m` implies model `weaker`.
fn implies(m: Model, weaker: Model) -> bool {
    implied_models(&[m]).contains(&weaker)
}

/// `r`, valid with each ambiguous read observing one writer (`which`).
fn valid_by(mut r: CheckResult, which: &str) -> CheckResult {
    r.notes.push(format!(
        "valid with each ambiguous read of a repeated value observing one of its writers ({which}): a history of writes each read may have observed"
    ));
    r
}

/// A resolution every model asked holds under, searched for from each
/// read's likeliest writer: while the violations found name ambiguous
/// reads (their micro-op, or one of their transaction's on a key they
/// name), each other writer of those reads is tried in turn, and the
/// first choice that leaves fewer violations kept (with the same choice
/// for the transaction's other reads of the key); within
/// [`SETTLE_SEARCH_CHECKS`] checks. Finds a witness or nothing: it never proves a
/// violation.
fn search(
    h: &History,
    reads: &[(MopId, Vec<MopId>)],
    check: impl Fn(&[usize]) -> Option<CheckResult>,
) -> Option<CheckResult> {
    let count = |r: &CheckResult| r.anomalies.values().map(Vec::len).sum::<usize>();
    let mut pick = vec![0usize; reads.len()];
    let mut cur = check(&pick)?;
    let mut checks = 1;
    while checks < SETTLE_SEARCH_CHECKS {
        if cur.valid == Valid::True {
            return Some(valid_by(
                cur,
                &format!("found by a search of {checks} checks"),
            ));
        }
        let suspects = suspects(h, &cur, reads);
        let mut better = None;
        'try_flips: for &i in &suspects {
            for alt in 1..reads[i].1.len() {
                if checks >= SETTLE_SEARCH_CHECKS {
                    break 'try_flips;
                }
                // The transaction's other reads of the key observe the
                // same write (else they differ, which only weak levels
                // allow).
                let mut next = pick.clone();
                let to = (pick[i] + alt) % reads[i].1.len();
                let (txn, key) = (h.txn_of(reads[i].0), h.mops[reads[i].0 as usize].key);
                for (j, (r, c)) in reads.iter().enumerate() {
                    if h.txn_of(*r) == txn && h.mops[*r as usize].key == key && *c == reads[i].1 {
                        next[j] = to;
                    }
                }
                let rx = check(&next)?;
                checks += 1;
                if rx.valid == Valid::True || count(&rx) < count(&cur) {
                    better = Some((next, rx));
                    break 'try_flips;
                }
            }
        }
        let (next, rx) = better?;
        pick = next;
        cur = rx;
    }
    (cur.valid == Valid::True)
        .then(|| valid_by(cur, &format!("found by a search of {checks} checks")))
}

/// The positions in `reads` of the ambiguous reads the violations of `r`
/// may rest on, likeliest first: an anomaly's micro-op; a cycle step's
/// read (the reader's of a write-read step, the missing reader's of a
/// read-write one); then any read by the anomaly's transactions of a key
/// it names.
fn suspects(h: &History, r: &CheckResult, reads: &[(MopId, Vec<MopId>)]) -> Vec<usize> {
    let at = |m: MopId| reads.binary_search_by_key(&m, |x| x.0).ok();
    let reads_of = |t: TxnId, k: KeyId, out: &mut Vec<usize>| {
        for m in h.txns[t as usize].mops() {
            if h.mops[m].key == k
                && let Some(i) = at(m as MopId)
            {
                out.push(i);
            }
        }
    };
    let (mut first, mut steps, mut then) = (Vec::new(), Vec::new(), Vec::new());
    for a in r.anomalies.values().flatten() {
        if let Some(Datum::Mop(m)) = a.get(Field::Mop)
            && let Some(i) = at(*m)
        {
            first.push(i);
        }
        let paths = a
            .cycle
            .iter()
            .chain(a.fields.iter().filter_map(|(_, d)| match d {
                Datum::Path(p) => Some(p),
                _ => None,
            }));
        for p in paths {
            for (s, w) in p.steps.iter().zip(p.txns.windows(2)) {
                let mut keys = Vec::new();
                keys_of(h, &Datum::Step(*s), &mut keys);
                let reader = match s.rel {
                    Rel::Wr => w[1],
                    Rel::Rw => w[0],
                    _ => continue,
                };
                for k in keys {
                    reads_of(reader, k, &mut steps);
                }
            }
        }
        let mut keys = Vec::new();
        for (_, d) in &a.fields {
            keys_of(h, d, &mut keys);
        }
        for s in a.cycle.iter().flat_map(|c| &c.steps) {
            keys_of(h, &Datum::Step(*s), &mut keys);
        }
        for &t in &a.txns {
            for &k in &keys {
                reads_of(t, k, &mut then);
            }
        }
    }
    first.extend(steps);
    first.extend(then);
    let mut seen = FxHashSet::default();
    first.retain(|i| seen.insert(*i));
    first
}

/// `opts` with what is left of its timeout since `started` (the run's
/// start): one budget for the run, however many checks settling makes.
/// None when it has run out.
fn with_time_left(opts: &CheckOptions, started: Instant) -> Option<CheckOptions> {
    let timeout = match opts.timeout {
        Some(t) => Some(t.checked_sub(started.elapsed()).filter(|t| !t.is_zero())?),
        None => None,
    };
    Some(CheckOptions {
        timeout,
        ..opts.clone()
    })
}

/// Models the polygraph's checkers decide exactly, weighing every writer
/// a read of a duplicated value may have observed, that imply the causal
/// levels: all keep session order, as Cerone's causal consistency does
/// (Elle's lattice places causal-cerone below plain SI too, which does
/// not: a plain model here would be unsound). The strong-session ones
/// first (the cheaper), then the two between SI and causal consistency,
/// which hold where those do not (a store allowing lost updates or long
/// forks).
const SETTLING: [Model; 4] = [
    Model::StrongSessionSerializable,
    Model::StrongSessionSnapshotIsolation,
    Model::Prefix,
    Model::ParallelSnapshotIsolation,
];

/// The first of [`SETTLING`] that implies every model asked not decided
/// exactly (the causal levels, and those Elle's anomalies decide) and
/// prohibits, with the models asked that are (`exact`), every anomaly
/// asked, under which with `exact` the history is valid: that check's
/// result (each within what is left of the run's timeout); None when
/// there is none. Valid under a model, the history is valid under every
/// model it implies, whatever the causal levels' guessed writers made
/// them find (a dbcop history valid at causal consistency only with
/// the right writers is valid under strong-session serializability). As
/// for several exact models asked
/// together, each model may hold with its own choice of writers.
fn valid_when_stronger(
    l: &Loaded,
    copts: &CheckOptions,
    exact: &[Model],
    started: Instant,
) -> Option<CheckResult> {
    for m in SETTLING {
        let implied = implied_models(&[m]);
        let mut models = exact.to_vec();
        models.push(m);
        let prohibited = prohibited_by(&models);
        if !copts
            .models
            .iter()
            .filter(|x| !exact.contains(x))
            .all(|x| implied.contains(x))
            || !copts.anomalies.iter().all(|a| prohibited.contains(a))
        {
            continue;
        }
        let o = with_time_left(
            &CheckOptions {
                models,
                timeout: copts.timeout,
                anomalies: Vec::new(),
            },
            started,
        )?;
        let mut r = plan(&o).ok().map(|p| check_plan(l, &o, &p))?;
        if r.valid == Valid::True {
            r.notes.push(format!(
                "valid under {}, weighing every writer a read may have observed, and so under the causal levels asked: their own findings rested on a guessed writer",
                m.friendly()
            ));
            return Some(r);
        }
    }
    None
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn settling_checks_share_the_runs_timeout() {
        use std::time::Duration;
        let opts = |timeout| CheckOptions {
            models: vec![Model::CausalCerone],
            timeout,
            anomalies: Vec::new(),
        };
        let now = Instant::now();
        let left = with_time_left(&opts(Some(Duration::from_secs(3600))), now)
            .and_then(|o| o.timeout)
            .expect("time left");
        assert!(left <= Duration::from_secs(3600) && left > Duration::from_secs(3500));
        assert_eq!(
            with_time_left(&opts(None), now).map(|o| o.timeout),
            Some(None)
        );
        let Some(long_ago) = now.checked_sub(Duration::from_secs(2)) else {
            return;
        };
        assert!(with_time_left(&opts(Some(Duration::from_secs(1))), long_ago).is_none());
    }

    /// x = 1 written twice; read from the last writer the reader misses
    /// what that writer saw (a causal violation), from the first nothing
    /// is wrong (`tests/it/unknown_reason.rs` has it beside a long fork).
    pub(in crate::check) const GUESSED: &str =
        "[x:=1]\n[y:=5]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n";

    #[test]
    fn settling_past_the_deadline_makes_no_check_and_names_the_deadline() {
        use crate::history::{Format, LoadOptions, load_bytes};
        use std::time::Duration;
        let load = LoadOptions {
            format: Some(Format::DbcopHist),
            ..LoadOptions::default()
        };
        let l = load_bytes("g.hist", GUESSED.as_bytes().to_vec(), load).expect("loads");
        let rep = l.history.repeated.clone().expect("x = 1 repeats");
        let unbounded = CheckOptions {
            models: vec![Model::CausalCerone],
            timeout: None,
            anomalies: Vec::new(),
        };
        let p = plan(&unbounded).expect("plan");
        let guessed = check_plan(&l, &unbounded, &p);
        assert_eq!(guessed.valid, Valid::False, "the last-writer guess");
        // With time, settled: valid with the read observing the first write.
        let settled =
            settle_guessed_reads(&l, &rep, guessed.clone(), &unbounded, (&p, Instant::now()));
        assert_eq!(settled.valid, Valid::True, "{:?}", settled.notes);
        // The run's timeout spent before settling: no check is made (the
        // notes are the guessed check's alone), and the verdict is
        // unknown because of the deadline.
        let Some(long_ago) = Instant::now().checked_sub(Duration::from_secs(2)) else {
            return;
        };
        let timed = CheckOptions {
            timeout: Some(Duration::from_secs(1)),
            ..unbounded
        };
        let r = settle_guessed_reads(&l, &rep, guessed.clone(), &timed, (&p, long_ago));
        assert_eq!(r.valid, Valid::Unknown);
        assert_eq!(r.notes, guessed.notes);
        let causes: Vec<&str> = r.unknown_reasons().iter().map(|u| u.cause()).collect();
        assert_eq!(causes, ["deadline"]);
        assert!(r.anomalies.is_empty() && !r.unconfirmed.is_empty());
    }

    #[test]
    fn settling_models_keep_sessions_and_imply_the_guessing_levels() {
        for m in SETTLING {
            assert!(m.keeps_sessions(), "{m}");
            let implied = implied_models(&[m]);
            for g in [
                Model::CausalCerone,
                Model::ReadAtomic,
                Model::ReadCommittedC4,
                Model::StrongSessionReadCommittedC4,
            ] {
                assert!(implied.contains(&g), "{m} implies {g}");
                assert!(matches!(g.decider(), Decider::Complete(c) if guesses(c)));
            }
        }
    }
}
