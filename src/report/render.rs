//! Renders results: Elle's EDN result map, the same in JSON, and a short
//! human summary. Transactions in anomalies become op maps rebuilt from the
//! model (list reads from the key's version order), with their file line.

use crate::anomaly::{Anomaly, Datum, Grounds, On, Path, Rel, Step};
use crate::edn::Value;
use crate::history::model::*;
use crate::report::CheckResult;

fn kw(s: &str) -> Value {
    Value::Keyword(s.to_string())
}

/// Most micro-ops of a transaction, and elements of a list read, a
/// rendered result shows at a transaction's first mention in an anomaly;
/// the rest are closed by `... n more`.
pub const SHOWN: usize = 1000;

/// The same at a later mention of a transaction in the same anomaly (a
/// cycle's closing op, a thin-air read's `:mop` beside its `:op`): it was
/// shown already.
pub const SHOWN_AGAIN: usize = 100;

/// A micro-op as Elle writes it (at most [`SHOWN`] elements of a list
/// read, as a result shows it).
pub fn mop_value(h: &History, m: MopId) -> Value {
    mop_upto(h, m, Upto::result(SHOWN))
}

/// How much of a collection to show, and how to say what is left out.
#[derive(Clone, Copy)]
struct Upto {
    /// Most items shown.
    n: usize,
    /// In a result map: what is left out is said by a string, which reads
    /// back as one element (the text report's symbol reads as three).
    result: bool,
}

impl Upto {
    fn result(n: usize) -> Upto {
        Upto { n, result: true }
    }

    fn text(n: usize) -> Upto {
        Upto { n, result: false }
    }

    /// `... n more`, closing a collection shown in part.
    fn more(self, n: usize) -> Value {
        let s = format!("... {n} more");
        if self.result {
            Value::String(s)
        } else {
            Value::Symbol(s)
        }
    }
}

/// A micro-op with at most `limit` elements of a list read, then
/// `... n more` (what a report shows, built without the rest).
pub fn mop_value_upto(h: &History, m: MopId, limit: usize) -> Value {
    mop_upto(h, m, Upto::text(limit))
}

fn mop_upto(h: &History, m: MopId, upto: Upto) -> Value {
    let limit = upto.n;
    let mop = &h.mops[m as usize];
    let la = h.workload == Some(Workload::ListAppend);
    let (f, v) = if mop.is_write() {
        (if la { "append" } else { "w" }, h.value(mop.val))
    } else if mop.from == from::UNKNOWN || mop.has(flag::NIL) {
        ("r", Value::Nil)
    } else if la {
        let l = h.read_list(m);
        let mut v: Vec<Value> = l.iter().take(limit).map(|&v| h.value(v)).collect();
        if l.len() > limit {
            v.push(upto.more(l.len() - limit));
        }
        ("r", Value::Vector(v))
    } else {
        ("r", h.value(mop.val))
    };
    Value::Vector(vec![kw(f), h.key_value(mop.key), v])
}

/// A transaction as its completion op map (at most [`SHOWN`] micro-ops
/// and list elements, as a result shows it).
pub fn op_value(h: &History, t: TxnId) -> Value {
    op_map(h, t, Upto::result(SHOWN), None)
}

/// A transaction's op map with at most `limit` micro-ops, and list reads
/// of at most `limit` elements, each then closed by `... n more`.
pub fn op_value_upto(h: &History, t: TxnId, limit: usize) -> Value {
    op_map(h, t, Upto::text(limit), None)
}

/// A transaction's invocation op map, as Jepsen logged it (its reads not
/// yet answered, `nil`): a real-time step's later transaction, which
/// Elle's explainer gives by its invocation, the op that shows the other
/// had completed before it began. Its completion where the history has
/// no invocation.
pub fn invocation_value(h: &History, t: TxnId) -> Value {
    invocation_upto(h, t, Upto::result(SHOWN))
}

/// [`invocation_value`] showing `upto`.
fn invocation_upto(h: &History, t: TxnId, upto: Upto) -> Value {
    op_map(h, t, upto, h.txns[t as usize].invoke)
}

/// The transactions an anomaly's rendering has shown so far, and how
/// much of one to show: `first` at its first mention, `again` at a later
/// one.
struct Mentions {
    seen: rustc_hash::FxHashSet<TxnId>,
    first: usize,
    again: usize,
}

impl Mentions {
    /// A result's anomaly: [`SHOWN`], then [`SHOWN_AGAIN`].
    fn bounded() -> Mentions {
        Mentions {
            seen: Default::default(),
            first: SHOWN,
            again: SHOWN_AGAIN,
        }
    }

    /// Everything, every time (for callers that shorten what they get).
    fn whole() -> Mentions {
        Mentions {
            seen: Default::default(),
            first: usize::MAX,
            again: usize::MAX,
        }
    }

    /// How much of `t` to show at this mention, noting it shown.
    fn limit(&mut self, t: TxnId) -> Upto {
        let n = self.mop_limit(t);
        self.seen.insert(t);
        n
    }

    /// How much of a micro-op of `t` to show: its transaction shown
    /// already, it was too.
    fn mop_limit(&self, t: TxnId) -> Upto {
        Upto::result(if self.seen.contains(&t) {
            self.again
        } else {
            self.first
        })
    }
}

/// A transaction's op map showing `upto`, or with `invoked` the
/// invocation at that place.
fn op_map(h: &History, t: TxnId, upto: Upto, invoked: Option<OpPos>) -> Value {
    let limit = upto.n;
    let txn = &h.txns[t as usize];
    let at = invoked.unwrap_or(txn.complete);
    let mut m = Vec::with_capacity(8);
    if at.index >= 0 {
        m.push((kw("index"), Value::Int(at.index)));
    }
    if at.time >= 0 {
        m.push((kw("time"), Value::Int(at.time)));
    }
    m.push((
        kw("type"),
        kw(if invoked.is_some() {
            "invoke"
        } else {
            txn.status.keyword()
        }),
    ));
    m.push((
        kw("process"),
        Value::Int(h.sessions[txn.session as usize].process),
    ));
    m.push((
        kw("f"),
        if txn.f == Val::NIL {
            kw("txn")
        } else {
            h.value(txn.f)
        },
    ));
    let mut value: Vec<Value> = txn
        .mops()
        .take(limit)
        .map(|i| match mop_upto(h, i as MopId, upto) {
            // An invocation's reads are yet to be answered.
            Value::Vector(mut mv) if invoked.is_some() && !h.mops[i].is_write() => {
                mv[2] = Value::Nil;
                Value::Vector(mv)
            }
            v => v,
        })
        .collect();
    if txn.mops().len() > limit {
        value.push(upto.more(txn.mops().len() - limit));
    }
    m.push((kw("value"), Value::Vector(value)));
    if at.line > 0 {
        m.push((kw("line"), Value::Int(at.line as i64)));
    }
    Value::Map(m)
}

/// A detail as EDN, transactions as op maps, whole.
pub fn datum_value(h: &History, d: &Datum) -> Value {
    datum_in(h, d, &mut Mentions::whole())
}

/// [`datum_value`] within an anomaly whose rendering showed `seen`.
fn datum_in(h: &History, d: &Datum, seen: &mut Mentions) -> Value {
    match d {
        Datum::Nil => Value::Nil,
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Int(i) => Value::Int(*i),
        Datum::Str(s) => Value::String(s.clone()),
        Datum::Kw(s) => kw(s),
        Datum::Sym(s) => Value::Symbol(s.clone()),
        Datum::Txn(t) => op_map(h, *t, seen.limit(*t), None),
        Datum::Mop(m) => mop_upto(h, *m, seen.mop_limit(h.mops[*m as usize].txn)),
        Datum::Key(k) => h.key_value(*k),
        Datum::Val(v) => h.value(*v),
        Datum::Vals(vs) => Value::Vector(vs.iter().map(|v| h.value(*v)).collect()),
        Datum::Set(vs) => Value::Set(vs.iter().map(|v| h.value(*v)).collect()),
        Datum::List(ds) => Value::Vector(ds.iter().map(|d| datum_in(h, d, seen)).collect()),
        Datum::Map(kvs) => {
            let mut m: Vec<(Value, Value)> = kvs
                .iter()
                .map(|(k, v)| (datum_in(h, k, seen), datum_in(h, v, seen)))
                .collect();
            // Integers in order, then the rest as printed.
            m.sort_by_cached_key(|(k, _)| match k {
                Value::Int(i) => (0, *i, String::new()),
                k => (1, 0, k.to_string()),
            });
            Value::Map(m)
        }
        Datum::Step(s) => step_in(h, s, seen),
        Datum::Path(p) => Value::Map(vec![
            (kw("ops"), txns_value(h, &p.txns, seen)),
            (kw("steps"), steps_value(h, p, seen)),
        ]),
        Datum::Alternative(name, c) => Value::Map(vec![
            (kw("type"), kw(name.name())),
            (
                kw("cycle"),
                c.as_ref()
                    .map_or(Value::Nil, |c| txns_value(h, &c.txns, seen)),
            ),
            (
                kw("steps"),
                c.as_ref().map_or(Value::Nil, |c| steps_value(h, c, seen)),
            ),
        ]),
    }
}

/// Transactions as a vector of op maps.
fn txns_value(h: &History, ts: &[TxnId], seen: &mut Mentions) -> Value {
    Value::Vector(
        ts.iter()
            .map(|&t| op_map(h, t, seen.limit(t), None))
            .collect(),
    )
}

/// Steps as a vector of step maps.
fn steps_value(h: &History, p: &Path, seen: &mut Mentions) -> Value {
    Value::Vector(
        p.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut v = step_in(h, s, seen);
                if let (Value::Map(m), Some(&a), Some(&b)) =
                    (&mut v, p.txns.get(i), p.txns.get(i + 1))
                    && let Some((ai, bi)) = mop_indices(h, a, b, s)
                {
                    m.push((kw("a-mop-index"), Value::Int(ai as i64)));
                    m.push((kw("b-mop-index"), Value::Int(bi as i64)));
                }
                v
            })
            .collect(),
    )
}

/// Elle's `:a-mop-index` / `:b-mop-index` of a dependency step from `a`
/// to `b`: where, in each transaction's micro-ops, the write or read the
/// step rests on is (ww: `a`'s write and `b`'s overwrite; wr: `a`'s write
/// and `b`'s read of it; rw: `a`'s read and `b`'s write it missed). None
/// for the other steps, and where either is not found.
fn mop_indices(h: &History, a: TxnId, b: TxnId, s: &Step) -> Option<(usize, usize)> {
    let at = |t: TxnId, k: KeyId, v: Val, write: bool| {
        let r = h.txns[t as usize].mops();
        h.mops[r]
            .iter()
            .position(|m| m.key == k && m.val == v && m.is_write() == write)
    };
    let (aw, ak, av, bw, bv) = match (s.rel, s.on) {
        (Rel::Wr, On::Read(k, v)) => (true, k, v, false, v),
        (Rel::Ww, On::Versions(k, Some(v), v2)) => (true, k, v, true, v2),
        (Rel::Rw, On::Versions(k, v, v2)) => (false, k, v.unwrap_or(Val::NIL), true, v2),
        _ => return None,
    };
    Some((at(a, ak, av, aw)?, at(b, ak, bv, bw)?))
}

/// One step as Elle's step map: `{:type :ww, :key k, :value v, :value' v'}`
/// (`:initial-state` for the initial version), `{:type :wr, :key k, :value
/// v}`, `{:type :process, :process p}`, `{:type :realtime, :a' op, :b op}`;
/// `:inferred? true` when elle-si inferred the order (with `:through
/// :process` or `:realtime` when only that order forces it), `:assumed?
/// true` when it took one of several to tell the cycle.
pub fn step_value(h: &History, s: &Step) -> Value {
    step_in(h, s, &mut Mentions::bounded())
}

/// [`step_value`] within an anomaly whose rendering showed `seen`.
fn step_in(h: &History, s: &Step, seen: &mut Mentions) -> Value {
    let mut m = vec![(kw("type"), kw(s.rel.name()))];
    match s.on {
        On::Nothing => {}
        On::Forced(r) => {
            // The read that forced the order: its key, the value it read
            // (the step's second transaction's write), and its reader.
            let read = &h.mops[r as usize];
            m.push((kw("key"), h.key_value(read.key)));
            m.push((kw("value"), h.value(read.val)));
            m.push((kw("op"), op_map(h, read.txn, seen.limit(read.txn), None)));
        }
        On::Process(p) => m.push((kw("process"), Value::Int(p))),
        On::Realtime(a, b) => {
            m.push((kw("a'"), op_map(h, a, seen.limit(a), None)));
            m.push((kw("b"), invocation_upto(h, b, seen.limit(b))));
        }
        On::Read(k, v) => {
            m.push((kw("key"), h.key_value(k)));
            m.push((kw("value"), h.value(v)));
        }
        On::Versions(k, v, v2) => {
            m.push((kw("key"), h.key_value(k)));
            m.push((
                kw("value"),
                v.map_or_else(|| kw("initial-state"), |v| h.value(v)),
            ));
            m.push((kw("value'"), h.value(v2)));
        }
    }
    match s.grounds {
        Grounds::Observed => {}
        Grounds::Inferred => m.push((kw("inferred?"), Value::Bool(true))),
        Grounds::Assumed => m.push((kw("assumed?"), Value::Bool(true))),
        Grounds::Through(r) => {
            m.push((kw("inferred?"), Value::Bool(true)));
            m.push((kw("through"), kw(r.name())));
        }
    }
    Value::Map(m)
}

/// One anomaly as Elle's map (plus `:cycle-type`, the type its steps tell,
/// when it is filed under a narrowed claim, and `:pattern` when a C4
/// pattern applies).
pub fn anomaly_value(h: &History, a: &Anomaly) -> Value {
    if given_as_true(a.name()) {
        return Value::Bool(true);
    }
    let mut m: Vec<(Value, Value)> = Vec::new();
    let seen = &mut Mentions::bounded();
    if let Some(c) = &a.cycle {
        m.push((kw("cycle"), txns_value(h, &c.txns, seen)));
        m.push((kw("steps"), steps_value(h, c, seen)));
    }
    m.extend(
        a.fields
            .iter()
            .map(|(k, d)| (kw(k.name()), datum_in(h, d, seen))),
    );
    m.push((kw("type"), kw(a.name())));
    if let Some(t) = &a.told {
        m.push((kw("cycle-type"), kw(t.name())));
    }
    if let Some(p) = a.pattern {
        m.push((kw("pattern"), kw(p.name())));
    }
    Value::Map(m)
}

/// The text a result map is written in.
#[derive(Clone, Copy, Debug)]
pub enum Syntax<'a> {
    /// Elle's EDN, as `Display` gives [`result_value`].
    Edn,
    /// The same EDN over several lines, each anomaly starting its own
    /// and laid out to 80 columns ([`Value::pretty`]): `--pretty`.
    PrettyEdn,
    /// JSON, as [`json`] gives it (keys sorted), with a `"file"` entry
    /// when one is named.
    Json {
        /// The history's file, for runs of several.
        file: Option<&'a str>,
    },
}

/// How much a rendered result may hold: past `bytes` of anomalies, or
/// once the deadline has passed, the anomalies left are not written but
/// counted, by type, under `:elle-si/elided` (with why). A result is at most
/// [`Bounds::PER_INPUT_BYTE`] bytes per byte of input plus
/// [`Bounds::FLOOR`], besides its frame (`:valid?`, the types, `:not`).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Most bytes of anomalies written.
    pub bytes: u64,
    /// Stop writing anomalies once this has passed.
    pub deadline: Option<std::time::Instant>,
}

impl Bounds {
    /// Bytes of anomalies a result may hold per byte of input.
    pub const PER_INPUT_BYTE: u64 = 16;
    /// And besides, whatever the input (a small history's violations are
    /// written whole).
    pub const FLOOR: u64 = 16 << 20;

    /// The bounds of a result on `input` bytes, written by `deadline`.
    pub fn for_input(input: usize, deadline: Option<std::time::Instant>) -> Bounds {
        Bounds {
            bytes: Self::FLOOR.saturating_add((input as u64).saturating_mul(Self::PER_INPUT_BYTE)),
            deadline,
        }
    }

    /// No bound (tests comparing whole renderings).
    pub const NONE: Bounds = Bounds {
        bytes: u64::MAX,
        deadline: None,
    };
}

/// Why anomalies were left out of a rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The output bound ([`Bounds::bytes`]) was reached.
    Bytes(u64),
    /// The deadline came while writing.
    Deadline,
}

impl Cut {
    /// What `:elle-si/elided`'s `:reason` says.
    fn reason(self) -> String {
        match self {
            Cut::Bytes(n) => format!(
                "the output bound came first: {n} bytes of anomalies ({} bytes per byte of input, plus {} MiB)",
                Bounds::PER_INPUT_BYTE,
                Bounds::FLOOR >> 20
            ),
            Cut::Deadline => "the deadline came while the anomalies were written".into(),
        }
    }
}

/// What a rendering left out: why, and how many anomalies of each type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Elided {
    /// Why, when anything was.
    pub cut: Option<Cut>,
    /// By type, the anomalies not written (with those their `:also`
    /// counted).
    pub counts: std::collections::BTreeMap<String, u64>,
}

impl Elided {
    /// The `:elle-si/elided` entry: `{:reason "...", :anomalies {:G1a 12}}`.
    fn value(&self) -> Option<Value> {
        let cut = self.cut?;
        let counts = self
            .counts
            .iter()
            .map(|(t, &n)| (kw(t), Value::Int(n.min(i64::MAX as u64) as i64)))
            .collect();
        Some(Value::Map(vec![
            (kw("reason"), Value::String(cut.reason())),
            (kw("anomalies"), Value::Map(counts)),
        ]))
    }
}

/// Writes [`result_value`]'s text in `syntax` to `out`, rendering one
/// anomaly at a time: a large violation's map is never held whole (a
/// 100k-transaction list-append history with lost updates at strict
/// serializability: 14k cycles whose ops hold long list reads, 1.5 GB of
/// EDN, which as one value peaked at 11 GB). Within `bounds`: what they
/// leave out is counted under `:elle-si/elided` and returned.
pub fn write_result(
    out: &mut impl std::io::Write,
    h: &History,
    r: &CheckResult,
    syntax: Syntax,
    bounds: &Bounds,
) -> std::io::Result<Elided> {
    write_result_with(out, h, r, syntax, bounds, &|_| {})
}

/// [`write_result`], each anomaly's value passed through `edit` before it
/// is written (the JNI bridge's op references).
pub fn write_result_with(
    out: &mut impl std::io::Write,
    h: &History,
    r: &CheckResult,
    syntax: Syntax,
    bounds: &Bounds,
    edit: &dyn Fn(&mut Value),
) -> std::io::Result<Elided> {
    let frame = result_with(h, r, &|_| Value::Vector(Vec::new()));
    // The entries written one anomaly at a time, and their lists.
    let streamed = |k: &str| match k {
        "anomalies" => Some(&r.anomalies),
        UNCONFIRMED => Some(&r.unconfirmed),
        _ => None,
    };
    // The frame's entries as text, in order, each streamed one's value
    // None and its name.
    let entries: Vec<(String, Option<String>, &str)> = match syntax {
        Syntax::Edn | Syntax::PrettyEdn => match &frame {
            Value::Map(m) => m
                .iter()
                .map(|(k, v)| {
                    let name = match k {
                        Value::Keyword(n) if streamed(n).is_some() => n.as_str(),
                        _ => "",
                    };
                    let key = k.to_string();
                    let text = |v: &Value| match syntax {
                        Syntax::PrettyEdn => v.pretty(key.len() + 2),
                        _ => v.to_string(),
                    };
                    let v = name.is_empty().then(|| text(v));
                    (key, v, name)
                })
                .collect(),
            _ => Vec::new(),
        },
        Syntax::Json { file } => match json(&frame) {
            serde_json::Value::Object(mut m) => {
                if let Some(f) = file {
                    m.insert("file".into(), serde_json::Value::String(f.into()));
                }
                m.iter()
                    .map(|(k, v)| {
                        let key = serde_json::Value::String(k.clone()).to_string();
                        let name = match k.as_str() {
                            "anomalies" => "anomalies",
                            UNCONFIRMED => UNCONFIRMED,
                            _ => "",
                        };
                        (key, name.is_empty().then(|| v.to_string()), name)
                    })
                    .collect()
            }
            _ => Vec::new(),
        },
    };
    let json_syntax = matches!(syntax, Syntax::Json { .. });
    let pretty = matches!(syntax, Syntax::PrettyEdn);
    // Between a key and its value, between entries, between a streamed
    // map's entries and between its lists' anomalies; what opens a
    // streamed map and each of its lists.
    let (is, then, then_inner, next, open, open_list) = match syntax {
        Syntax::Json { .. } => (":", ",", ",", ",", "{", ""),
        Syntax::Edn => (" ", ", ", ", ", " ", "{", ""),
        Syntax::PrettyEdn => (" ", ",\n ", ",\n  ", "\n   ", "\n {", "\n  "),
    };
    let key = |t: &str| {
        if json_syntax {
            serde_json::Value::String(t.into()).to_string()
        } else {
            kw(t).to_string()
        }
    };
    let text = |v: &Value| -> std::io::Result<Vec<u8>> {
        if json_syntax {
            serde_json::to_vec(&json(v)).map_err(std::io::Error::from)
        } else if pretty {
            Ok(v.pretty(3).into_bytes())
        } else {
            Ok(v.to_string().into_bytes())
        }
    };
    let mut elided = Elided::default();
    let mut written = 0u64;
    out.write_all(b"{")?;
    for (i, (k, v, name)) in entries.iter().enumerate() {
        if i > 0 {
            out.write_all(then.as_bytes())?;
        }
        if let Some(v) = v {
            write!(out, "{k}{is}")?;
            out.write_all(v.as_bytes())?;
            continue;
        }
        let lists = streamed(name).into_iter().flatten();
        write!(out, "{k}")?;
        if !pretty {
            out.write_all(is.as_bytes())?;
        }
        out.write_all(open.as_bytes())?;
        for (j, (t, list)) in lists.enumerate() {
            if j > 0 {
                out.write_all(then_inner.as_bytes())?;
            }
            write!(out, "{}", key(t))?;
            if given_as_true(t) {
                write!(out, "{is}true")?;
                continue;
            }
            if !pretty {
                out.write_all(is.as_bytes())?;
            }
            out.write_all(open_list.as_bytes())?;
            out.write_all(b"[")?;
            let mut first = true;
            // A check's marker (no verdict, an empty graph) is always
            // written: it holds no op, and says why the verdict is unknown.
            let marker = super::UNKNOWN_TYPES.contains(&t.as_str());
            for a in list {
                if !marker && elided.cut.is_none() && crate::check::budget::passed(bounds.deadline)
                {
                    elided.cut = Some(Cut::Deadline);
                }
                let shown = match elided.cut {
                    Some(_) if !marker => None,
                    _ => {
                        let mut v = anomaly_value(h, a);
                        edit(&mut v);
                        let bytes = text(&v)?;
                        let fits =
                            marker || written.saturating_add(bytes.len() as u64) <= bounds.bytes;
                        if !fits {
                            elided.cut = Some(Cut::Bytes(bounds.bytes));
                        }
                        fits.then_some(bytes)
                    }
                };
                let Some(bytes) = shown else {
                    *elided.counts.entry(t.clone()).or_default() += 1 + a.also();
                    continue;
                };
                if !first {
                    out.write_all(next.as_bytes())?;
                }
                first = false;
                written += bytes.len() as u64;
                out.write_all(&bytes)?;
            }
            out.write_all(b"]")?;
        }
        out.write_all(b"}")?;
    }
    if let Some(v) = elided.value() {
        let v = if json_syntax {
            json(&v).to_string()
        } else {
            v.to_string()
        };
        write!(out, "{then}{}{is}{v}", key("elle-si/elided"))?;
    }
    out.write_all(b"}")?;
    Ok(elided)
}

/// Whether Elle gives anomalies of type `t` as `true` rather than a list
/// of them (an empty transaction graph has nothing to list).
fn given_as_true(t: &str) -> bool {
    t == "empty-transaction-graph"
}

/// Elle's result map, and elle-si's `:elle-si/unknown-reason` (why an
/// unknown verdict is: `[{:cause :deadline, :reason "..."}]`),
/// `:elle-si/unconfirmed` (violations resting on a guess not settled),
/// `:elle-si/ambiguous-reads` ([`ambiguous_reads`]) and, when kept,
/// `:elle-si/decided-by` ([`crate::check::si::Decision::value`]).
pub fn result_value(h: &History, r: &CheckResult) -> Value {
    result_with(h, r, &|list| {
        Value::Vector(list.iter().map(|a| anomaly_value(h, a)).collect())
    })
}

/// The key of violations resting on a guess not settled.
const UNCONFIRMED: &str = "elle-si/unconfirmed";

/// [`result_value`], each anomaly list's value given by `list`.
fn result_with(h: &History, r: &CheckResult, list: &dyn Fn(&[Anomaly]) -> Value) -> Value {
    let mut m = vec![(
        kw("valid?"),
        match r.valid {
            super::Valid::True => Value::Bool(true),
            super::Valid::False => Value::Bool(false),
            super::Valid::Unknown => kw("unknown"),
        },
    )];
    let why = r.unknown_reasons();
    if !why.is_empty() {
        let v = why
            .iter()
            .map(|u| {
                Value::Map(vec![
                    (kw("cause"), kw(u.cause())),
                    (kw("reason"), Value::String(u.to_string())),
                ])
            })
            .collect();
        m.push((kw("elle-si/unknown-reason"), Value::Vector(v)));
    }
    let by_type = |map: &std::collections::BTreeMap<String, Vec<Anomaly>>| {
        Value::Map(
            map.iter()
                .map(|(t, l)| {
                    let v = if given_as_true(t) {
                        Value::Bool(true)
                    } else {
                        list(l)
                    };
                    (kw(t), v)
                })
                .collect(),
        )
    };
    if !r.anomalies.is_empty() {
        m.push((
            kw("anomaly-types"),
            Value::Vector(r.anomaly_types.iter().map(|t| kw(t)).collect()),
        ));
        m.push((kw("anomalies"), by_type(&r.anomalies)));
        m.push((kw("not"), Value::Set(r.not.iter().map(|s| kw(s)).collect())));
        m.push((
            kw("also-not"),
            Value::Set(r.also_not.iter().map(|s| kw(s)).collect()),
        ));
    }
    if !r.unconfirmed.is_empty() {
        m.push((kw(UNCONFIRMED), by_type(&r.unconfirmed)));
    }
    if let Some(v) = ambiguous_reads(h) {
        m.push((kw("elle-si/ambiguous-reads"), v));
    }
    if !r.decided_by.is_empty() {
        let by = r.decided_by.iter().map(|(m, d)| (kw(m), d.value()));
        m.push((kw("elle-si/decided-by"), Value::Map(by.collect())));
    }
    Value::Map(m)
}

/// Most ambiguous reads a result lists (the rest are counted).
pub const AMBIGUOUS_SHOWN: usize = 16;

/// The reads of values written more than once that may have observed
/// more than one write: `{:policy :any, :count n, :reads [{:index i,
/// :process p, :mop [:r k v], :writers [i ...]} ...]}`, the first
/// [`AMBIGUOUS_SHOWN`] listed (`:index` is the op's, or the line where the
/// history has no index; `:writers` the ops a read may have observed).
/// None when there is none.
pub fn ambiguous_reads(h: &History) -> Option<Value> {
    let rep = h.repeated.as_ref().filter(|r| !r.ambiguous.is_empty())?;
    let place = |t: TxnId| {
        let op = &h.txns[t as usize].complete;
        if op.index >= 0 || op.line == 0 {
            (kw("index"), Value::Int(op.index))
        } else {
            (kw("line"), Value::Int(op.line as i64))
        }
    };
    let reads = rep
        .ambiguous
        .iter()
        .take(AMBIGUOUS_SHOWN)
        .map(|&r| {
            let t = h.txn_of(r);
            let m = h.mops[r as usize];
            let writers = h
                .candidates
                .get(&r)
                .map(|ws| ws.iter().map(|&w| place(h.txn_of(w)).1).collect())
                .unwrap_or_default();
            let mop = Value::Vector(vec![kw("r"), h.key_value(m.key), h.value(m.val)]);
            let mut e = vec![
                place(t),
                (
                    kw("process"),
                    Value::Int(h.sessions[h.txns[t as usize].session as usize].process),
                ),
                (kw("mop"), mop),
            ];
            if !h.candidates.is_empty() {
                e.push((kw("writers"), Value::Vector(writers)));
            }
            Value::Map(e)
        })
        .collect();
    Some(Value::Map(vec![
        (kw("policy"), kw(rep.policy.name())),
        (kw("count"), Value::Int(rep.ambiguous.len() as i64)),
        (kw("reads"), Value::Vector(reads)),
    ]))
}

/// EDN as JSON (see [`crate::edn::to_json`]).
pub use crate::edn::to_json as json;
