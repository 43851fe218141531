//! The bridge's checks: an encoded history, a history file, or a decoded
//! stream, checked under the options' models and rendered as Elle's result
//! map in EDN (errors as one message naming the op and what to do).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::check::{self, CheckOptions};
use crate::edn::Value;
use crate::error::{self, Error, Remedy};
use crate::history::{self, LoadOptions, Loaded};
use crate::report::{folder, render};

use super::options::BridgeOptions;
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
        Remedy::DbcopDuplicates => "check-file refuses such a history, as dbcop does; the elle-si \
             command line reads it (elle-si check --dbcop-duplicates)"
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

/// Checks a compiled history and renders Elle's result map as EDN.
pub(super) fn check_loaded(
    loaded: &Loaded,
    copts: &CheckOptions,
    opts: &BridgeOptions,
    times: &[(&str, Duration)],
) -> Result<String, String> {
    let t0 = Instant::now();
    let result = check::entry::check_loaded(loaded, None, copts).unwrap_or_else(|e| {
        let mut r = check::check(loaded, copts);
        r.notes.push(e.to_string());
        r
    });
    let check_time = t0.elapsed();
    if let Some(dir) = &opts.directory {
        folder::write_folder(
            Path::new(dir),
            opts.name.as_deref().unwrap_or(loaded.source.name()),
            &loaded.history,
            &result,
            &copts.models,
            &opts.plot,
        )
        .map_err(|e| error_text(&e))?;
    }
    let t1 = Instant::now();
    let mut value = render::result_value(&loaded.history, &result);
    if opts.op_refs {
        op_refs(&mut value);
    }
    if opts.timings {
        let render_time = t1.elapsed();
        let kw = |s: &str| Value::Keyword(s.to_string());
        let ns = |d: Duration| Value::Int(d.as_nanos().min(i64::MAX as u128) as i64);
        let s = &loaded.history.stats;
        let mut t: Vec<(Value, Value)> = times.iter().map(|&(k, d)| (kw(k), ns(d))).collect();
        if let Value::Map(m) = &mut value {
            t.extend([
                (kw("check-ns"), ns(check_time)),
                (kw("render-ns"), ns(render_time)),
                (kw("ops"), Value::Int(s.ops as i64)),
                (kw("client-ops"), Value::Int(s.client_ops as i64)),
                (kw("txns"), Value::Int(loaded.history.txns.len() as i64)),
            ]);
            m.push((kw("elle-si/timings"), Value::Map(t)));
        }
    }
    Ok(value.to_string())
}

/// Checks an encoded history; the result is Elle's result map in EDN.
pub fn check_encoded(values: &[u8], ops: &[u8], options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    let t0 = Instant::now();
    let mut d = Decoding::new(&opts, opts.timings);
    d.values(values)?;
    d.ops(ops)?;
    let done = d.finish()?;
    // Decoding alone is the bridge's cost; compiling into the model the CLI
    // does too, after parsing.
    let times = [
        ("decode-ns", t0.elapsed().saturating_sub(done.compile)),
        ("compile-ns", done.compile),
    ];
    check_loaded(&done.loaded, &copts, &opts, &times)
}

/// Checks a history file (EDN or the text format, detected as the CLI
/// detects it).
pub fn check_file(path: &str, options: &str) -> Result<String, String> {
    let opts = BridgeOptions::parse(options)?;
    let copts = opts.check_options()?;
    let t0 = Instant::now();
    let lopts = LoadOptions {
        format: None,
        workload: opts.workload,
        ..LoadOptions::default()
    };
    let loaded = history::load(Path::new(path), lopts, None).map_err(|e| error_text(&e))?;
    check_loaded(&loaded, &copts, &opts, &[("decode-ns", t0.elapsed())])
}
