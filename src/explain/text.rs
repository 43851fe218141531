//! Plain-language explanations of anomalies for the text report, in the
//! manner of Elle's `elle.txn` explainer: name each transaction once, then
//! say, step by step, why each must precede the next, so that a cycle reads
//! as a contradiction a database engineer can check against the log by
//! hand. Non-cycle anomalies list their details with the history's values.

use std::fmt::Write;

use crate::anomaly::{Anomaly, Datum, Field, Grounds, On, Path, Rel, Step};
use crate::edn::Value;
use crate::history::model::*;
use crate::report::picture::{MAX_ELEMS, Row, rows, short, show, shown, step_mops};
use crate::report::render::{datum_value, mop_value_upto};
use crate::spec::{AnomalyType, Kind};

/// A few lines explaining `a`, each indented by `indent`.
pub fn explain(h: &History, a: &Anomaly, indent: &str) -> String {
    let mut out = String::new();
    match &a.cycle {
        Some(c) => {
            explain_cycle(h, c, a.told.is_some(), indent, &mut out);
            if let Some(Datum::Alternative(kind, other)) = a.get(Field::Otherwise) {
                let pair: Vec<String> = match a.get(Field::Unordered) {
                    Some(Datum::List(ts)) => ts
                        .iter()
                        .filter_map(|d| match d {
                            Datum::Txn(t) => Some(place(h, *t)),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                // The other cycle in one line: its transactions in order.
                let through = other.as_ref().map_or(String::new(), |p| {
                    let ts: Vec<String> = p.txns.iter().map(|&t| place(h, t)).collect();
                    format!(" ({})", ts.join(" -> "))
                });
                let _ = writeln!(
                    out,
                    "{indent}([assumed]: no read fixes the order of the writes at {}: the other order closes a {kind} cycle instead{through}; -o edn shows it under :otherwise)",
                    pair.join(" and ")
                );
            } else if c.steps.iter().any(|s| s.grounds == Grounds::Assumed) {
                let _ = writeln!(
                    out,
                    "{indent}([assumed] steps are write orders no read fixes, taken to tell one cycle: every other order of those writes closes a prohibited cycle too)"
                );
            }
        }
        None => explain_fields(h, a, indent, &mut out),
    }
    let cycle_claim = a
        .kind
        .anomaly()
        .is_some_and(crate::spec::cycles::is_cycle_type);
    match &a.told {
        // A claim that is a cycle type: anomalies asked for by name,
        // every order of the writes closing one of the cycles they
        // prohibit (no model's rules are involved).
        Some(t) if cycle_claim => {
            let _ = writeln!(
                out,
                "{indent}(its steps tell a {t} in the write order assumed here; other orders close other prohibited cycles: it is filed as {}, what every order's cycle proves)",
                a.name()
            );
        }
        Some(t) => {
            let _ = writeln!(
                out,
                "{indent}(its steps tell a {t}, but it rests on orders only the checked model forces: it is filed as {}, what it proves)",
                a.name()
            );
        }
        None => {}
    }
    out
}

/// Where a transaction is in its file: its line, or its `:index` for
/// formats that have no lines (dbcop's binary and JSON files).
pub fn place(h: &History, t: TxnId) -> String {
    let op = &h.txns[t as usize].complete;
    if op.line > 0 {
        format!("line {}", op.line)
    } else if op.index >= 0 {
        format!(":index {}", op.index)
    } else {
        format!("transaction {t}")
    }
}

/// `T1 = line 8 (:index 7, process 2): [[:append 5 1] ...]`: a long
/// transaction's micro-ops shown as its picture's box shows them
/// ([`rows`]), every one of `cited` kept and its neighbours around it,
/// the rest said by count where they fall.
fn describe_txn(h: &History, t: TxnId, cited: &[MopId]) -> String {
    let txn = &h.txns[t as usize];
    let (rows, _) = rows(h, t, cited);
    let mops: Vec<String> = rows
        .into_iter()
        .map(|r| match r {
            Row::Mop { text, .. } => text,
            Row::Elided(1) => "... 1 micro-op".to_string(),
            Row::Elided(n) => format!("... {n} micro-ops"),
        })
        .collect();
    let mut s = String::new();
    if txn.complete.line > 0 {
        let _ = write!(s, "line {}, ", txn.complete.line);
    }
    if txn.complete.index >= 0 {
        let _ = write!(s, ":index {}, ", txn.complete.index);
    }
    let _ = write!(
        s,
        "process {}, {}: [{}]",
        h.sessions[txn.session as usize].process,
        txn.status.keyword(),
        mops.join(" ")
    );
    s
}

/// `filed`: the anomaly is filed under a narrowed claim (its inferred
/// steps rest on the checked model's own rules).
fn explain_cycle(h: &History, c: &Path, filed: bool, indent: &str, out: &mut String) {
    let (txns, steps) = (&c.txns, &c.steps);
    // Elle's :cycle repeats the first transaction at its end.
    let distinct: Vec<TxnId> = {
        let mut v: Vec<TxnId> = Vec::new();
        for &t in txns.iter() {
            if !v.contains(&t) {
                v.push(t);
            }
        }
        v
    };
    let label = |t: TxnId| -> String {
        let i = distinct.iter().position(|&x| x == t).unwrap_or(0);
        format!("T{}", i + 1)
    };
    // The micro-ops each step rests on, kept in view.
    let mut cited: Vec<MopId> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let (a, b) = step_mops(h, txns.get(i).copied(), txns.get(i + 1).copied(), step);
        cited.extend(a.into_iter().chain(b));
        if let On::Forced(r) = step.on {
            cited.push(r);
        }
    }
    for &t in &distinct {
        let _ = writeln!(out, "{indent}{} = {}", label(t), describe_txn(h, t, &cited));
    }
    let appends = h.workload == Some(Workload::ListAppend);
    for (i, step) in steps.iter().enumerate() {
        let (Some(&a), Some(&b)) = (txns.get(i), txns.get(i + 1)) else {
            break;
        };
        let why = step_reason(h, step, a, &label(a), &label(b), appends);
        let lead = if i + 1 == steps.len() && i > 0 {
            "but "
        } else {
            ""
        };
        let mark = match (step.grounds.mark(), writer_seen(h, step, a)) {
            (None, _) => String::new(),
            // An order inferred for an rw step: who wrote the version read,
            // the writer the inference puts before the overwriter.
            (Some(m), Some(w)) if step.grounds != Grounds::Assumed => {
                let who = if distinct.contains(&w) {
                    label(w)
                } else {
                    place(h, w)
                };
                let v = shown(h, step).value;
                format!(" [{m}: {v} was written by {who}]")
            }
            (Some(m), _) => format!(" [{m}]"),
        };
        let _ = writeln!(
            out,
            "{indent}{lead}{} < {}: {why}{mark}",
            label(a),
            label(b)
        );
    }
    let _ = writeln!(
        out,
        "{indent}a cycle: no order of these transactions explains what they saw."
    );
    if steps.iter().any(|s| s.grounds == Grounds::Inferred) {
        let _ = if filed {
            writeln!(
                out,
                "{indent}([inferred] steps are not in the history: the checked model forces them, given other transactions' reads; the cycle shows that model fails, and says nothing of weaker ones)"
            )
        } else {
            writeln!(
                out,
                "{indent}([inferred] steps are not in the history: the other order of those writes closes another cycle of the history's own dependencies, which every model this cycle rules out prohibits too)"
            )
        };
    }
    if steps
        .iter()
        .any(|s| matches!(s.grounds, Grounds::Through(Rel::Wr | Rel::Ww)))
    {
        let _ = writeln!(
            out,
            "{indent}([inferred through reads] steps need a write order no read shows: the writer of the version read precedes the overwriter by reads and writes, so the other order would close a G1c cycle, which every model this cycle rules out prohibits too)"
        );
    }
    if steps
        .iter()
        .any(|s| matches!(s.grounds, Grounds::Through(Rel::Process | Rel::Realtime)))
    {
        let _ = writeln!(
            out,
            "{indent}([inferred through ...] steps need a write order no read shows: the checked model takes it from process order or real time, which put the writer of the version read before the overwriter; the cycle says nothing of models without that order)"
        );
    }
}

/// For an rw step from `t`, the transaction whose write of the version
/// `t` read it observed.
fn writer_seen(h: &History, step: &Step, t: TxnId) -> Option<TxnId> {
    let On::Versions(k, Some(v), _) = step.on else {
        return None;
    };
    if step.rel != Rel::Rw {
        return None;
    }
    h.mops[h.txns[t as usize].mops()]
        .iter()
        .find(|m| m.is_read() && m.key == k && m.val == v)
        .and_then(|m| m.observed())
        .map(|w| h.txn_of(w))
}

/// Why one step's transactions are ordered as they are.
fn step_reason(h: &History, step: &Step, ta: TxnId, a: &str, b: &str, appends: bool) -> String {
    let s = shown(h, step);
    let (key, v, v2) = (&s.key, &s.value, &s.later);
    let wrote = if appends { "appended" } else { "wrote" };
    match step.rel {
        Rel::Ww => format!("{a} {wrote} {v} to key {key}, and {b} {wrote} {v2} after it (ww)"),
        Rel::Wr => format!("{b} read {a}'s write of {v} to key {key} (wr)"),
        Rel::Rw if s.initial => format!(
            "{a} read key {key} in its initial state, so it did not see {b}'s {} of {v2} (rw)",
            if appends { "append" } else { "write" }
        ),
        Rel::Rw if appends => {
            format!("{a} read key {key} up to {v}, so it did not see {b}'s append of {v2} (rw)")
        }
        Rel::Rw => format!("{a} read key {key} as {v}, so it did not see {b}'s write of {v2} (rw)"),
        Rel::Process => format!("{a} came before {b} in the same process (process)"),
        Rel::Realtime => format!("{a} completed before {b} was invoked (realtime)"),
        Rel::Ao => match step.on {
            On::Forced(r) => {
                let m = &h.mops[r as usize];
                let reader = place(h, m.txn);
                format!(
                    "{reader} read key {key} as {v}, {b}'s write, though {a}, which also {wrote} key {key}, was visible to it ({}): so {a}'s write must take effect before {b}'s (ao)",
                    how_visible(h, ta, m.txn, a, &reader)
                )
            }
            _ => "the checked model orders them (ao)".to_string(),
        },
    }
}

/// How `t2` was visible to `t3` (an arbitration step's reader): by
/// session order, by a read, or through causal order.
fn how_visible(h: &History, t2: TxnId, t3: TxnId, a: &str, reader: &str) -> String {
    let (x, y) = (&h.txns[t2 as usize], &h.txns[t3 as usize]);
    if x.session == y.session && x.seq < y.seq {
        let p = h.sessions[x.session as usize].process;
        return format!("{a} came before {reader} in process {p}");
    }
    if h.txns[t3 as usize]
        .mops()
        .any(|i| crate::check::deps::external_source(h, i, t3) == Some(t2))
    {
        return format!("{reader} read from {a}");
    }
    format!("{a} precedes {reader} in causal order")
}

/// A lost update in one sentence: the transactions read one version of
/// the key, each then wrote the key, so whichever took effect later
/// overwrote a write it never saw.
fn lost_update_lead(h: &History, a: &Anomaly, indent: &str, out: &mut String) {
    let Some(Datum::Key(k)) = a.get(Field::Key) else {
        return;
    };
    let appends = h.workload == Some(Workload::ListAppend);
    let key = short(&h.key_value(*k));
    let read = match a.get(Field::Value) {
        None | Some(Datum::Nil) => "in its initial state".to_string(),
        Some(v) if appends => format!("up to {}", show(h, Some(v))),
        Some(v) => format!("as {}", show(h, Some(v))),
    };
    let writes: Vec<String> = a
        .txns
        .iter()
        .map(|&t| {
            let vals: Vec<String> = h.txns[t as usize]
                .mops()
                .map(|i| &h.mops[i])
                .filter(|m| m.is_write() && m.key == *k)
                .map(|m| short(&h.value(m.val)))
                .collect();
            format!("{}: {}", place(h, t), vals.join(", "))
        })
        .collect();
    // What the order of their writes costs: an overwritten register
    // loses an update; a list keeps every append, but no order explains
    // every read.
    let then = match (appends, a.txns.len() > 2) {
        (false, false) => {
            "whichever took effect later overwrote the other's write without \
                           seeing it: that update was lost"
        }
        (false, true) => {
            "each but the first to take effect overwrote an earlier one's write \
                          without seeing it: those updates were lost"
        }
        (true, false) => {
            "whichever took effect later appended without seeing the other's \
                          append: no order of the two explains both reads"
        }
        (true, true) => {
            "each but the first to take effect appended without seeing an \
                         earlier one's append: no order of them explains every read"
        }
    };
    let verb = if appends { "appended to" } else { "wrote" };
    let _ = writeln!(
        out,
        "{indent}each read key {key} {read}, then {verb} it ({}): {then}",
        writes.join("; ")
    );
}

/// A read micro-op's key and value as text (`[:r k v]`'s `k` and `v`,
/// long lists shortened).
fn read_of(h: &History, m: MopId) -> (String, String) {
    match mop_value_upto(h, m, MAX_ELEMS) {
        Value::Vector(v) if v.len() == 3 => (short(&v[1]), short(&v[2])),
        v => (short(&v), String::new()),
    }
}

/// The sentence that opens a non-cycle anomaly of Elle's single-read
/// kinds (aborted, intermediate, thin-air and future reads, internal
/// inconsistencies, dirty updates, incompatible orders, duplicate
/// elements): what was read, and why no correct database returns it.
/// None for the kinds told otherwise (cycles, lost updates, causal
/// patterns) or markers.
fn lead(h: &History, a: &Anomaly) -> Option<String> {
    let appends = h.workload == Some(Workload::ListAppend);
    let txn = |f: Field| match a.get(f) {
        Some(Datum::Txn(t)) => Some(*t),
        _ => None,
    };
    let mop = match a.get(Field::Mop) {
        Some(Datum::Mop(m)) => Some(*m),
        _ => None,
    };
    let element = a.get(Field::Element).map(|d| show(h, Some(d)));
    let read = |m: MopId| {
        let (k, v) = read_of(h, m);
        let reader = place(h, h.mops[m as usize].txn);
        (reader, k, v)
    };
    Some(match a.name() {
        "G1a" => {
            let (reader, k, v) = read(mop?);
            let writer = place(h, txn(Field::Writer)?);
            match element {
                Some(e) if appends => format!(
                    "{reader} read key {k} as {v}: its element {e} was appended by {writer}, which aborted, so no committed state ever held it (aborted read)"
                ),
                _ => format!(
                    "{reader} read {v} from key {k}, written by {writer}, which aborted, so no committed state ever held it (aborted read)"
                ),
            }
        }
        "G1b" => {
            let m = mop?;
            let (reader, k, v) = read(m);
            let w = txn(Field::Writer)?;
            let writer = place(h, w);
            let key = h.mops[m as usize].key;
            let last = h.mops[h.txns[w as usize].mops()]
                .iter()
                .rfind(|x| x.is_write() && x.key == key)
                .map(|x| short(&h.value(x.val)));
            let then = last.map_or(String::new(), |l| {
                if appends {
                    format!(" (its last append to key {k} is {l})")
                } else {
                    format!(" with {l}")
                }
            });
            if appends {
                format!(
                    "{reader} read key {k} as {v}, which ends inside {writer}'s appends: {writer} appended more to key {k} before it committed{then}, so {reader} saw a state that transaction never left (intermediate read)"
                )
            } else {
                format!(
                    "{reader} read {v} from key {k}, a value {writer} wrote and then overwrote{then} before it committed, so no committed state ever held it (intermediate read)"
                )
            }
        }
        "thin-air-read" => {
            let (reader, k, v) = read(mop?);
            let e = element.unwrap_or_else(|| v.clone());
            if appends {
                format!(
                    "{reader} read key {k} as {v}: no transaction appended its element {e} (a read out of thin air)"
                )
            } else {
                format!(
                    "{reader} read {e} from key {k}, which no transaction wrote (a read out of thin air)"
                )
            }
        }
        "future-read" => {
            let (reader, k, v) = read(mop?);
            let e = element.unwrap_or_else(|| v.clone());
            format!(
                "{reader} read key {k} as {v}, which shows {e}: a write of that transaction's own that comes later in it (a read from its future)"
            )
        }
        "internal" => {
            let (reader, k, v) = read(mop?);
            let expected = show(h, a.get(Field::Expected));
            format!(
                "{reader} read key {k} as {v}, but its own earlier micro-ops on key {k} imply {expected} (an internal inconsistency)"
            )
        }
        "dirty-update" => {
            let k = show(h, a.get(Field::Key));
            let (first, last) = (a.txns.first()?, a.txns.last()?);
            format!(
                "in key {k}'s version order, {} (committed) follows a write of {}, which aborted: a committed write built on one that never took effect (dirty update)",
                place(h, *last),
                place(h, *first)
            )
        }
        "incompatible-order" => {
            let k = show(h, a.get(Field::Key));
            format!(
                "reads of key {k} show orders of its elements that no one version order explains: neither is a prefix of the other (see values)"
            )
        }
        "duplicate-elements" => {
            let k = show(h, a.get(Field::Key));
            match mop {
                Some(m) => {
                    let (reader, _, v) = read(m);
                    format!(
                        "{reader} read key {k} as {v}, which holds an element more than once: each append is one element, so no order of appends explains it"
                    )
                }
                None => format!(
                    "a read of key {k} holds an element more than once: each append is one element, so no order of appends explains it"
                ),
            }
        }
        _ => return None,
    })
}

/// Details other than the transactions already listed, one per line.
fn explain_fields(h: &History, a: &Anomaly, indent: &str, out: &mut String) {
    // A causal pattern, in one sentence first.
    if let (Some(Datum::Txn(op)), Some(Datum::Txn(over))) =
        (a.get(Field::Op), a.get(Field::Overwriter))
    {
        let writer = match a.get(Field::Writer) {
            Some(Datum::Txn(w)) => place(h, *w),
            _ => "the initial state".to_string(),
        };
        let key = show(h, a.get(Field::Key));
        let _ = writeln!(
            out,
            "{indent}{} read key {key} from {writer}, though {}, which wrote key {key} after {writer}, was visible to it (see visible and order below)",
            place(h, *op),
            place(h, *over)
        );
    }
    if a.kind == Kind::Anomaly(AnomalyType::LostUpdate) {
        lost_update_lead(h, a, indent, out);
    }
    if let Some(lead) = lead(h, a) {
        let _ = writeln!(out, "{indent}{lead}");
    }
    // The micro-ops the anomaly names (its read), and each writer's
    // write of that key, kept in view.
    let mut cited: Vec<MopId> = Vec::new();
    if let Some(Datum::Mop(m)) = a.get(Field::Mop) {
        cited.push(*m);
        let key = h.mops[*m as usize].key;
        for &t in &a.txns {
            cited.extend(
                h.txns[t as usize]
                    .mops()
                    .filter(|&i| h.mops[i].key == key && h.mops[i].is_write())
                    .map(|i| i as MopId),
            );
        }
    } else if let Some(Datum::Key(k)) = a.get(Field::Key) {
        for &t in &a.txns {
            cited.extend(
                h.txns[t as usize]
                    .mops()
                    .filter(|&i| h.mops[i].key == *k)
                    .map(|i| i as MopId),
            );
        }
    }
    let mut named: Vec<TxnId> = Vec::new();
    for &t in &a.txns {
        if !named.contains(&t) {
            named.push(t);
            let _ = writeln!(out, "{indent}{}", describe_txn(h, t, &cited));
        }
    }
    let appends = h.workload == Some(Workload::ListAppend);
    let txn_field = |k: Field| match a.get(k) {
        Some(Datum::Txn(t)) => Some(*t),
        _ => None,
    };
    for (f, d) in &a.fields {
        let k = f.name();
        if matches!(d, Datum::Txn(t) if named.contains(t)) {
            continue;
        }
        // A path that orders two transactions: each step's reason.
        if let Datum::Path(p) = d {
            let (ops, steps) = (&p.txns, &p.steps);
            let path: Vec<String> = ops.iter().map(|&t| place(h, t)).collect();
            let _ = writeln!(out, "{indent}{k}: {}", path.join(" < "));
            for (i, step) in steps.iter().enumerate() {
                if let (Some(a), Some(b)) = (path.get(i), path.get(i + 1)) {
                    let _ = writeln!(
                        out,
                        "{indent}  {a} < {b}: {}",
                        step_reason(h, step, ops[i], a, b, appends)
                    );
                }
            }
            continue;
        }
        // How one transaction is visible to another, in one step (a chain
        // of them is a path, above).
        if *f == Field::Visible
            && let (Some(from), Some(to)) = (txn_field(Field::Overwriter), txn_field(Field::Op))
            && let Datum::Step(step) = d
        {
            let (a, b) = (place(h, from), place(h, to));
            let _ = writeln!(
                out,
                "{indent}{k}: {a} < {b}: {}",
                step_reason(h, step, from, &a, &b, appends)
            );
            continue;
        }
        if let Datum::List(items) = d
            && !items.is_empty()
            && items.iter().all(|d| {
                matches!(d, Datum::Txn(t) if named.contains(t)) || matches!(d, Datum::Sym(_))
            })
        {
            continue;
        }
        // Long values are shortened form by form, never cut mid-form.
        let v: Value = datum_value(h, d);
        let _ = writeln!(out, "{indent}{k}: {}", short(&v));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::history::{LoadOptions, Loaded, load_bytes};
    use crate::report::CheckResult;

    /// `l` checked at serializability (shared with the pictures' tests).
    pub(crate) fn at_serializable(l: &Loaded) -> CheckResult {
        crate::check::check(
            l,
            &crate::check::CheckOptions {
                models: crate::check::resolve_models(&["serializable".to_string()])
                    .expect("a known model"),
                ..Default::default()
            },
        )
    }

    #[test]
    fn lost_update_reads_as_a_contradiction() {
        let log = b"{:type :ok, :process 0, :index 1, :value [[:r :x nil] [:w :x 1]]}\n\
                    {:type :ok, :process 1, :index 3, :value [[:r :x nil] [:w :x 2]]}\n";
        let l = load_bytes("t.edn", log.to_vec(), LoadOptions::default()).expect("loads");
        let r = at_serializable(&l);
        let a = r
            .anomalies
            .values()
            .flatten()
            .find(|a| a.cycle.is_some())
            .expect("a cycle");
        let text = explain(&l.history, a, "");
        assert!(text.contains("T1 = line"), "{text}");
        assert!(text.contains("in its initial state"), "{text}");
        assert!(text.contains("a cycle"), "{text}");
    }

    #[test]
    fn a_lost_update_says_what_each_read_and_wrote() {
        let text = |log: &[u8]| -> String {
            let l = load_bytes("t.edn", log.to_vec(), LoadOptions::default()).expect("loads");
            let r = at_serializable(&l);
            let a = r
                .anomalies
                .get("lost-update")
                .and_then(|v| v.first())
                .expect("a lost update");
            explain(&l.history, a, "")
        };
        let rw = text(
            b"{:type :ok, :process 0, :index 1, :value [[:w :x 5]]}\n\
              {:type :ok, :process 1, :index 3, :value [[:r :x 5] [:w :x 6] [:w :y 1]]}\n\
              {:type :ok, :process 2, :index 5, :value [[:r :x 5] [:w :x 7]]}\n",
        );
        assert!(
            rw.contains(
                "each read key :x as 5, then wrote it (line 2: 6; line 3: 7): whichever took \
                 effect later overwrote the other's write without seeing it: that update was \
                 lost"
            ),
            "{rw}"
        );
        let la = text(
            b"{:type :ok, :process 0, :index 1, :value [[:r :x nil] [:append :x 1]]}\n\
              {:type :ok, :process 1, :index 3, :value [[:r :x nil] [:append :x 2]]}\n\
              {:type :ok, :process 2, :index 5, :value [[:r :x nil] [:append :x 3]]}\n\
              {:type :ok, :process 3, :index 7, :value [[:r :x [1 2 3]]]}\n",
        );
        assert!(
            la.contains(
                "each read key :x in its initial state, then appended to it (line 1: 1; \
                 line 2: 2; line 3: 3): each but the first to take effect appended without \
                 seeing an earlier one's append: no order of them explains every read"
            ),
            "{la}"
        );
    }

    #[test]
    fn every_single_read_kind_opens_with_a_sentence() {
        // The first explanation of each named type, at serializability.
        let first = |log: &[u8], name: &str| -> String {
            let l = load_bytes("t.edn", log.to_vec(), LoadOptions::default()).expect("loads");
            let r = at_serializable(&l);
            let a = r
                .anomalies
                .get(name)
                .and_then(|v| v.first())
                .unwrap_or_else(|| panic!("a {name} in {:?}", r.anomaly_types));
            explain(&l.history, a, "")
        };
        let la = b"{:type :fail, :process 0, :index 1, :value [[:append 1 5]]}\n\
                   {:type :ok, :process 2, :index 3, :value [[:append 1 6] [:append 1 7]]}\n\
                   {:type :ok, :process 1, :index 5, :value [[:r 1 [5 6]]]}\n\
                   {:type :ok, :process 3, :index 7, :value [[:r 1 [5 6 7 8]] [:append 1 9] [:r 1 [5 6 7]]]}\n\
                   {:type :ok, :process 4, :index 9, :value [[:r 2 [1 1]]]}\n";
        let rw = b"{:type :fail, :process 0, :index 1, :value [[:w 2 3]]}\n\
                   {:type :ok, :process 1, :index 3, :value [[:w 4 3] [:w 4 4]]}\n\
                   {:type :ok, :process 2, :index 5, :value [[:r 2 3] [:r 4 3] [:r 5 77]]}\n";
        for (log, name, sentence) in [
            (
                &la[..],
                "G1a",
                "line 3 read key 1 as [5 6]: its element 5 was appended by line 1, which aborted",
            ),
            (
                la,
                "G1b",
                "line 3 read key 1 as [5 6], which ends inside line 2's appends",
            ),
            (
                la,
                "thin-air-read",
                "line 4 read key 1 as [5 6 7 8]: no transaction appended its element 8",
            ),
            (
                la,
                "internal",
                "line 4 read key 1 as [5 6 7], but its own earlier micro-ops on key 1 imply [5 6 7 8 9]",
            ),
            (
                la,
                "dirty-update",
                "in key 1's version order, line 2 (committed) follows a write of line 1, which aborted",
            ),
            (
                la,
                "duplicate-elements",
                "line 5 read key 2 as [1 1], which holds an element more than once",
            ),
            (
                &rw[..],
                "G1a",
                "line 3 read 3 from key 2, written by line 1, which aborted",
            ),
            (
                rw,
                "G1b",
                "line 3 read 3 from key 4, a value line 2 wrote and then overwrote with 4 before it committed",
            ),
            (
                rw,
                "thin-air-read",
                "line 3 read 77 from key 5, which no transaction wrote",
            ),
        ] {
            let text = first(log, name);
            assert!(text.contains(sentence), "{name}: {text}");
        }
        // A read that shows one element nobody appended twice is one
        // thin-air read of it, not two.
        let l = load_bytes("t.edn", la.to_vec(), LoadOptions::default()).expect("loads");
        let r = at_serializable(&l);
        assert_eq!(r.anomalies.get("thin-air-read").map(Vec::len), Some(2));
    }

    #[test]
    fn long_transactions_and_values_are_shortened_by_whole_forms() {
        // A lost update whose transactions hold 20 micro-ops each.
        let pad = |v: u32| -> String { (10..28).map(|k| format!(" [:w {k} {v}]")).collect() };
        let (p1, p2) = (pad(1), pad(2));
        let log = format!(
            "{{:type :ok, :process 0, :index 1, :value [[:r :x nil] [:w :x 1]{p1}]}}\n\
             {{:type :ok, :process 1, :index 3, :value [[:r :x nil] [:w :x 2]{p2}]}}\n"
        );
        let l = load_bytes("t.edn", log.into_bytes(), LoadOptions::default()).expect("loads");
        let r = at_serializable(&l);
        let text: String = r
            .anomalies
            .values()
            .flatten()
            .map(|a| explain(&l.history, a, ""))
            .collect();
        assert!(text.contains("... 13 micro-ops]"), "{text}");
        assert!(!text.contains("[:w 27 1]"), "{text}");
    }

    #[test]
    fn a_long_transaction_keeps_the_micro_ops_its_steps_rest_on() {
        // A write skew whose reads sit in the middle of 30 writes: each
        // step's read and write stay in view.
        let pad =
            |from: u32| -> String { (from..from + 15).map(|k| format!(" [:w {k} 1]")).collect() };
        let log = format!(
            "{{:type :ok, :process 0, :index 1, :value [{}[:r :x nil]{} [:w :y 1]]}}\n\
             {{:type :ok, :process 1, :index 3, :value [{}[:r :y nil]{} [:w :x 1]]}}\n",
            pad(100),
            pad(200),
            pad(300),
            pad(400)
        );
        let l = load_bytes("t.edn", log.into_bytes(), LoadOptions::default()).expect("loads");
        let r = at_serializable(&l);
        let a = r
            .anomalies
            .get("G2-item")
            .and_then(|v| v.first())
            .expect("a write skew");
        let text = explain(&l.history, a, "");
        for mop in ["[:r :x nil]", "[:r :y nil]", "[:w :x 1]", "[:w :y 1]"] {
            assert!(text.contains(mop), "{mop}: {text}");
        }
        assert!(text.contains(" micro-ops "), "{text}");
    }

    #[test]
    fn a_transaction_without_a_line_is_placed_by_its_index() {
        let log = b"{:type :ok, :process 0, :index 7, :value [[:w :x 1]]}\n";
        let mut l = load_bytes("t.edn", log.to_vec(), LoadOptions::default()).expect("loads");
        assert_eq!(place(&l.history, 0), "line 1");
        // dbcop's binary and JSON files have no lines: the index stands in.
        l.history.txns[0].complete.line = 0;
        assert_eq!(place(&l.history, 0), ":index 7");
    }
}
