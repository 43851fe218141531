//! The bridge's checks: an encoded history, a history file, or a decoded
//! stream, checked under the options' models and rendered as Elle's result
//! map in EDN (errors as one message naming the op and what to do).

use std::path::Path;
use std::time::{Duration, Instant};

use elle_si::check::{self, CheckOptions};
use elle_si::edn::Value;
use elle_si::error::{self, Error, Remedy};
use elle_si::history::{self, LoadOptions, Loaded};
use elle_si::report::{folder, render};

use super::options::BridgeOptions;
use super::threads;
use super::wire::Decoding;

/// An input error as one message: where, what, and the help line.
pub(super) fn error_text(e: &Error) -> String {
    match e {
        Error::Input(ie) => {
            match error::advice(ie.help.as_deref(), ie.remedy.map(clojure_remedy)) {
                Some(h) => format!("{ie}\n  help: {h}"),
                None => ie.to_string(),
            }
        }
        other => other.to_string(),
    }
}

/// A [`Remedy`] in the Clojure library's terms (the CLI's are its flags).
pub(super) fn clojure_remedy(r: Remedy) -> String {
    match r {
        Remedy::UnfixWorkload(w) => format!(
            "elle-si.{w}/check and /check-file (or :workload :{w}) check a {w} history; \
             elle-si.core/check and /check-file without :workload detect the workload"
        ),
        Remedy::DirectoryFormat => "check-file takes a history file, or a directory holding a \
             Jepsen run's history.edn, or Cobra's logs alone, or Viper's alone"
            .into(),
        Remedy::NameFormat => "check-file reads Jepsen EDN, elle-cli JSON, the r(k,v,s,t) text \
             format, dbcop, Cobra and Viper histories, told apart by their content"
            .into(),
        Remedy::Duplicates => "check and check-file let a read of such a value have observed \
             either write; the elle-si command line chooses otherwise with --duplicates"
            .into(),
    }
}

/// The `:index` of an op map as [`render::op_value`] writes it.
pub(super) fn op_index(entries: &[(Value, Value)]) -> Option<i64> {
    let mut index = None;
    let mut is_op = false;
    for (k, v) in entries {
        match (k, v) {
            (Value::Keyword(k), Value::Int(i)) if k == "index" => index = Some(*i),
            (Value::Keyword(k), Value::Keyword(t)) if k == "type" => {
                is_op = matches!(t.as_str(), "invoke" | "ok" | "fail" | "info")
            }
            _ => {}
        }
    }
    if is_op { index } else { None }
}

/// Replaces every op map in a rendered result by `#elle-si/op <index>`.
pub(super) fn op_refs(v: &mut Value) {
    match v {
        Value::Map(entries) => {
            if let Some(i) = op_index(entries) {
                *v = Value::Tagged("elle-si/op".into(), Box::new(Value::Int(i)));
                return;
            }
            for (_, x) in entries.iter_mut() {
                op_refs(x);
            }
        }
        Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs.iter_mut().for_each(op_refs),
        _ => {}
    }
}

/// A buffer that refuses to grow past `limit` bytes: a result over the
/// bridge's `:max-result-bytes` is an error naming it, never a string the
/// JVM cannot hold.
struct Capped {
    buf: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if self.buf.len().saturating_add(b.len()) > self.limit {
            return Err(std::io::Error::other(TOO_LARGE));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`Capped`]'s error, told from others.
const TOO_LARGE: &str = "elle-si: result over :max-result-bytes";

/// Checks a compiled history of `input` bytes (as the JVM gave them) and
/// renders Elle's result map as EDN, bounded as the command line bounds
/// it ([`render::Bounds`]), and at most `:max-result-bytes` long.
pub(super) fn check_loaded(
    loaded: &Loaded,
    copts: &CheckOptions,
    opts: &BridgeOptions,
    input: usize,
    times: &[(&str, Duration)],
) -> Result<String, String> {
    let t0 = Instant::now();
    let deadline = copts.timeout.and_then(|t| t0.checked_add(t));
    let mut result = check::entry::check_loaded(loaded, copts).unwrap_or_else(|e| {
        let mut r = check::check(loaded, copts);
        r.notes.push(e.to_string());
        r
    });
    if !opts.decided_by {
        result.decided_by.clear();
    }
    let check_time = t0.elapsed();
    if let Some(dir) = &opts.directory {
        folder::write_folder(
            Path::new(dir),
            opts.name.as_deref().unwrap_or(loaded.source.name()),
            &loaded.history,
            &result,
            &copts.models,
            &folder::PlotOptions {
                deadline,
                ..opts.plot.clone()
            },
        )
        .map_err(|e| error_text(&e))?;
    }
    let t1 = Instant::now();
    let mut out = Capped {
        buf: Vec::new(),
        limit: opts.max_result_bytes,
    };
    let edit = |v: &mut Value| {
        if opts.op_refs {
            op_refs(v)
        }
    };
    let bounds = render::Bounds::for_input(input, deadline);
    let written = render::write_result_with(
        &mut out,
        &loaded.history,
        &result,
        render::Syntax::Edn,
        &bounds,
        &edit,
    );
    let too_large = || {
        format!(
            "elle-si: the result map is more than the :max-result-bytes limit of {} bytes; \
             raise :max-result-bytes, or check fewer anomaly types (its anomalies are bounded to {} \
             bytes for this history, {} per byte of input plus {} MiB)",
            opts.max_result_bytes,
            bounds.bytes,
            render::Bounds::PER_INPUT_BYTE,
            render::Bounds::FLOOR >> 20
        )
    };
    match written {
        Ok(_) => {}
        Err(e) if e.to_string() == TOO_LARGE => return Err(too_large()),
        Err(e) => return Err(format!("elle-si: could not render the result: {e}")),
    }
    let mut text = out.buf;
    if opts.timings {
        let render_time = t1.elapsed();
        let kw = |s: &str| Value::Keyword(s.to_string());
        let ns = |d: Duration| Value::Int(d.as_nanos().min(i64::MAX as u128) as i64);
        let s = &loaded.history.stats;
        let mut t: Vec<(Value, Value)> = times.iter().map(|&(k, d)| (kw(k), ns(d))).collect();
        t.extend([
            (kw("check-ns"), ns(check_time)),
            (kw("render-ns"), ns(render_time)),
            (kw("ops"), Value::Int(s.ops as i64)),
            (kw("client-ops"), Value::Int(s.client_ops as i64)),
            (kw("txns"), Value::Int(loaded.history.txns.len() as i64)),
        ]);
        // The map's closing brace, then this entry in its place.
        text.pop();
        let entry = format!(", :elle-si/timings {}}}", Value::Map(t));
        if text.len().saturating_add(entry.len()) > opts.max_result_bytes {
            return Err(too_large());
        }
        text.extend_from_slice(entry.as_bytes());
    }
    String::from_utf8(text).map_err(|e| format!("elle-si: the result is not UTF-8: {e}"))
}

/// Checks an encoded history; the result is Elle's result map in EDN.
/// Decoding and checking run in the pool of `:threads` ([`threads::run`]).
pub fn check_encoded(values: &[u8], ops: &[u8], options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    threads::run(opts.threads, || {
        let t0 = Instant::now();
        let mut d = Decoding::new(&opts, opts.timings);
        d.values(values)?;
        d.ops(ops)?;
        let done = d.finish()?;
        // Decoding alone is the bridge's cost; compiling into the model the
        // CLI does too, after parsing.
        let times = [
            ("decode-ns", t0.elapsed().saturating_sub(done.compile)),
            ("compile-ns", done.compile),
        ];
        check_loaded(
            &done.loaded,
            &copts,
            &opts,
            values.len().saturating_add(ops.len()),
            &times,
        )
    })?
}

/// Checks a history file (EDN or the text format, detected as the CLI
/// detects it). Reading and checking run in the pool of `:threads`
/// ([`threads::run`]).
pub fn check_file(path: &str, options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    threads::run(opts.threads, || {
        let t0 = Instant::now();
        let lopts = LoadOptions {
            format: None,
            workload: opts.workload,
            keys: opts.keys,
            ..LoadOptions::default()
        };
        let loaded = history::load(Path::new(path), lopts, None).map_err(|e| error_text(&e))?;
        let input = loaded.source.bytes().len();
        check_loaded(
            &loaded,
            &copts,
            &opts,
            input,
            &[("decode-ns", t0.elapsed())],
        )
    })?
}
