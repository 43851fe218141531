//! What the Clojure side asks for: the options map of every native call, as
//! EDN, parsed into [`BridgeOptions`] and refused by name when it asks for
//! what cannot be honoured.

use std::time::Duration;

use elle_si::check::{self, CheckOptions};
use elle_si::edn::{self, Value};
use elle_si::history::KeyOrders;
use elle_si::history::model::*;
use elle_si::report::folder;

use super::threads;

/// What the Clojure side asks for, as an EDN map:
/// `{:models ["serializable"] :anomalies ["G1"] :timeout-ms 1000
///   :workload "list-append" :name "history" :timings true :threads 2}`.
#[derive(Debug)]
pub struct BridgeOptions {
    /// Elle's model names to check (`:consistency-models`).
    pub models: Vec<String>,
    /// Anomaly types to look for (`:anomalies`).
    pub anomalies: Vec<String>,
    /// Give up after this long, answering `:unknown`.
    pub timeout: Option<Duration>,
    /// Read as this workload; None: detect it.
    pub workload: Option<Workload>,
    /// The history's name in messages.
    pub name: Option<String>,
    /// Add `:elle-si/timings` (decode, check, render, in ns) to the result.
    pub timings: bool,
    /// `:decided-by true`: keep `:elle-si/decided-by` (how each polygraph
    /// verdict was reached) in the result.
    pub decided_by: bool,
    /// Render each op in the anomalies as `#elle-si/op <index>`: the JVM
    /// holds the history and puts its own op there, and a result with many
    /// anomalies does not repeat whole ops (reading them back was most of
    /// the time of a check with 100k anomalies).
    pub op_refs: bool,
    /// Elle's `:directory`: write the elle/ folder there (see
    /// [`elle_si::report::folder`]), with Elle's plot options
    /// (`:plot-format`, `:max-plot-bytes`, `:plot-timeout-ms`) and ours,
    /// `:plot-scc` (each cycle's whole component drawn too).
    pub directory: Option<String>,
    /// Elle's plot options for the folder.
    pub plot: folder::PlotOptions,
    /// `:max-result-bytes`: a result map longer than this is refused by
    /// an exception naming the limit, never a string the JVM cannot hold
    /// ([`DEFAULT_MAX_RESULT_BYTES`] unless given).
    pub max_result_bytes: usize,
    /// Elle's key options (`:linearizable-keys`, `:sequential-keys`,
    /// `:wfr-keys`, each `true` or `false`).
    pub keys: KeyOrders,
    /// `:threads`: the size of the pool the check runs in (see
    /// [`super::threads`]); None: one thread per core.
    pub threads: Option<usize>,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        BridgeOptions {
            models: Vec::new(),
            anomalies: Vec::new(),
            timeout: None,
            workload: None,
            name: None,
            timings: false,
            decided_by: false,
            op_refs: false,
            directory: None,
            plot: folder::PlotOptions::default(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            keys: KeyOrders::default(),
            threads: None,
        }
    }
}

/// The longest result map the bridge returns unless told otherwise: 256
/// MiB of EDN, which the JVM holds as a string of up to twice that and
/// reads into maps of several times more.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 << 20;

pub(super) fn names(v: &Value, what: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Nil => Ok(Vec::new()),
        Value::Vector(xs) | Value::List(xs) | Value::Set(xs) => xs
            .iter()
            .map(|x| match x {
                Value::String(s) | Value::Keyword(s) | Value::Symbol(s) => Ok(s.clone()),
                other => Err(format!("{what} must be names, found {other}")),
            })
            .collect(),
        other => Err(format!(
            "{what} must be a collection of names, found {other}"
        )),
    }
}

/// A boolean option: `true`, `false` or `nil` (false).
fn flag(v: &Value, k: &str) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Nil => Ok(false),
        other => Err(format!(":{k} must be true or false, found {other}")),
    }
}

impl BridgeOptions {
    /// Parses the options map; an error names what is wrong.
    pub fn parse(text: &str) -> Result<BridgeOptions, String> {
        let mut o = BridgeOptions::default();
        if text.trim().is_empty() {
            return Ok(o);
        }
        let v = edn::read_one(text.as_bytes())
            .map_err(|e| format!("bad options {text:?}: {}", e.message))?;
        let Value::Map(entries) = v else {
            return Err(format!("options must be an EDN map, found {text}"));
        };
        for (k, v) in &entries {
            let Value::Keyword(k) = k else {
                return Err(format!("option keys must be keywords, found {k}"));
            };
            match k.as_str() {
                "models" => o.models = names(v, ":models")?,
                "anomalies" => o.anomalies = names(v, ":anomalies")?,
                "timeout-ms" => match v {
                    Value::Nil => {}
                    Value::Int(ms) if *ms >= 0 => {
                        o.timeout = Some(Duration::from_millis(*ms as u64))
                    }
                    other => {
                        return Err(format!(
                            ":timeout-ms must be a non-negative integer, found {other}"
                        ));
                    }
                },
                "workload" => {
                    o.workload = match v {
                        Value::Nil => None,
                        Value::String(s) | Value::Keyword(s) => match s.as_str() {
                            "list-append" => Some(Workload::ListAppend),
                            "rw-register" => Some(Workload::RwRegister),
                            other => {
                                return Err(format!(
                                    "unknown workload {other}: expected list-append or rw-register"
                                ));
                            }
                        },
                        other => return Err(format!(":workload must be a name, found {other}")),
                    }
                }
                "name" => match v {
                    Value::String(s) => o.name = Some(s.clone()),
                    Value::Nil => {}
                    other => return Err(format!(":name must be a string, found {other}")),
                },
                "timings" => o.timings = matches!(v, Value::Bool(true)),
                "decided-by" => o.decided_by = flag(v, k)?,
                "linearizable-keys" => o.keys.linearizable = flag(v, k)?,
                "sequential-keys" => o.keys.sequential = flag(v, k)?,
                "wfr-keys" => o.keys.wfr = flag(v, k)?,
                "threads" => match v {
                    Value::Int(n) if (1..=threads::MAX_THREADS as i64).contains(n) => {
                        o.threads = Some(*n as usize)
                    }
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":threads must be a whole number of threads from 1 to {}, found {other}",
                            threads::MAX_THREADS
                        ));
                    }
                },
                "op-refs" => o.op_refs = matches!(v, Value::Bool(true)),
                "directory" => match v {
                    Value::String(s) => o.directory = Some(s.clone()),
                    Value::Nil => {}
                    other => return Err(format!(":directory must be a string, found {other}")),
                },
                "plot-format" => match v {
                    Value::String(s) | Value::Keyword(s) => {
                        o.plot.format = folder::PlotFormat::parse(s)?
                    }
                    Value::Nil => {}
                    other => return Err(format!(":plot-format must be a name, found {other}")),
                },
                "plot-scc" => o.plot.scc = flag(v, k)?,
                "max-plot-bytes" => match v {
                    Value::Int(n) if *n >= 0 => o.plot.max_plot_bytes = *n as usize,
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":max-plot-bytes must be a non-negative integer, found {other}"
                        ));
                    }
                },
                "max-result-bytes" => match v {
                    Value::Int(n) if *n > 0 => o.max_result_bytes = *n as usize,
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":max-result-bytes must be a positive integer, found {other}"
                        ));
                    }
                },
                "plot-timeout-ms" => match v {
                    Value::Int(ms) if *ms >= 0 => {
                        o.plot.plot_timeout = Duration::from_millis(*ms as u64)
                    }
                    Value::Nil => {}
                    other => {
                        return Err(format!(
                            ":plot-timeout must be a non-negative integer, found {other}"
                        ));
                    }
                },
                other => return Err(format!("unknown option :{other}")),
            }
        }
        Ok(o)
    }

    /// Parses the model names and Elle's `:anomalies` into a typed request,
    /// refused (by name) where it cannot be honoured, as the CLI refuses it.
    ///
    /// An empty model list is Elle's `:consistency-models nil`: only the
    /// anomalies (and the ones implying them) are prohibited, looked for by
    /// whichever checkers can find them ([`check::plan`]).
    pub(super) fn check_options(&self) -> Result<CheckOptions, String> {
        let o = CheckOptions {
            models: check::resolve_models(&self.models).map_err(|e| e.to_string())?,
            timeout: self.timeout,
            anomalies: check::resolve_anomalies(&self.anomalies).map_err(|e| e.to_string())?,
        };
        check::plan(&o).map_err(|e| e.to_string())?;
        Ok(o)
    }
}
