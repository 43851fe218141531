//! The `elle-si` command: check histories, print their statistics, convert
//! between formats.

/// `eprintln!` that cannot panic: with stderr closed (`2>&1 | head`) the
/// message is lost, not the run's exit status.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod cli;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use elle_si::check::{self, CheckOptions};
use elle_si::convert::{self, ConvertOptions};
use elle_si::error::Error;
use elle_si::history::{self, Duplicates, Format, LoadOptions, Loaded, Workload};
use elle_si::report::{CheckResult, Valid, folder, render};
use elle_si::spec::{AnomalyType, Model};
use elle_si::spec::{Kind, Marker};

#[derive(Parser)]
#[command(
    name = "elle-si",
    version,
    about = "A black-box checker of transactional isolation for database histories"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Copy, Clone, ValueEnum)]
enum WorkloadArg {
    #[value(alias = "elle-list-append")]
    ListAppend,
    #[value(alias = "elle-rw-register")]
    RwRegister,
}

#[derive(Copy, Clone, ValueEnum, PartialEq)]
enum OutputArg {
    Text,
    Edn,
    Json,
    /// elle-cli's line per file: `FILE \t true` (or false, unknown).
    ElleCli,
    /// `-o edn --pretty`: the EDN over several lines.
    #[value(skip)]
    PrettyEdn,
}

#[derive(clap::Args)]
struct InputArgs {
    /// Workload (default: detected from the micro-ops); -m/--model as in
    /// elle-cli, whose model names the checker.
    #[arg(
        short,
        long,
        value_enum,
        visible_short_alias = 'm',
        visible_alias = "model"
    )]
    workload: Option<WorkloadArg>,
    /// Input format: edn, json (elle-cli), text, dbcop-bincode, dbcop-json,
    /// dbcop-hist, cobra, viper (default: detected).
    #[arg(short, long)]
    format: Option<String>,
    /// Register histories (any format), two writes of one (key, value): a
    /// read of it may have observed either (any, the default: exact for SI
    /// and serializability; causal levels read the last writer in file
    /// order, and a violation resting on that is settled without those
    /// reads or by strong-session serializability or SI, else unknown),
    /// the file is refused (reject, as dbcop does), reads resolve to the
    /// last writer in file order (last-writer, as PolySI does; a violation
    /// that depends on that guess is reported as unknown), or those reads
    /// are left out (drop-reads). Also --dbcop-duplicates.
    #[arg(
        long = "duplicates",
        visible_alias = "dbcop-duplicates",
        default_value = "any"
    )]
    dbcop_duplicates: String,
    /// Say more: how the input was read, and how each check went.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    keys: cli::keys::KeyArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check histories against consistency models.
    Check {
        /// History files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        input: InputArgs,
        /// Comma-separated consistency models (any of Elle's names, or rc,
        /// rc-c4, ra, tcc, si, ssi, ser, strict). Default:
        /// strict-serializable, as in Elle; with -a and no -c, only the
        /// anomalies are prohibited (Elle's `:consistency-models nil`).
        #[arg(short, long)]
        consistency_models: Vec<String>,
        /// Output: a human summary, Elle's EDN result map, JSON, or
        /// elle-cli's line per file (`FILE \t true`).
        #[arg(short, long, value_enum, default_value = "text")]
        output: OutputArg,
        /// With -o edn: the result map laid out over several lines (each
        /// anomaly on its own, 80 columns), as Clojure's pprint would.
        #[arg(long)]
        pretty: bool,
        /// Give up after this many seconds: the answer is then :unknown.
        #[arg(long, value_parser = seconds)]
        timeout: Option<f64>,
        /// elle-cli's timeout, in milliseconds: elle-si gives up after this
        /// long on the whole check (Elle: per cycle search), as --timeout.
        #[arg(short = 's', long)]
        cycle_search_timeout: Option<u64>,
        /// Write Elle's elle/ folder here: <type>.txt explaining each
        /// anomaly, <type>/<n>.svg and .dot pictures, and index.html (one
        /// folder per file, in a subfolder named after it, when several).
        #[arg(short, long)]
        directory: Option<PathBuf>,
        /// Picture format (Elle's :plot-format): svg, or png (the SVG
        /// rasterized by resvg).
        #[arg(short, long, default_value = "svg")]
        plot_format: String,
        /// Drop a picture that takes longer than this many milliseconds to
        /// draw (Elle's :plot-timeout).
        #[arg(short = 't', long, default_value_t = 5000)]
        plot_timeout: u64,
        /// Skip a picture whose DOT is longer than this (Elle's
        /// :max-plot-bytes).
        #[arg(short = 'b', long, default_value_t = 65536)]
        max_plot_bytes: usize,
        /// With -d: also draw, for each cycle drawn, the whole strongly
        /// connected component it lies in (sccs/<n>.svg, as Elle's sccs/;
        /// at most 24 transactions drawn, the rest said by count).
        #[arg(long)]
        plot_scc: bool,
        /// Also prohibit these anomaly types (comma-separated, Elle's
        /// `:anomalies`), and every anomaly that implies one of them.
        #[arg(short, long, value_delimiter = ',')]
        anomalies: Vec<String>,
        /// Threads: files checked at once, and, within a check, the causal
        /// levels beside SI / serializability (default: the number of
        /// cores). The output is the same for every -j; at most one
        /// history per thread is in memory at once.
        #[arg(short, long, value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
    },
    /// Count a history's ops, transactions, sessions and keys, and time the
    /// reading.
    Stats {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        input: InputArgs,
    },
    /// Convert a history to another format (notes on what the target cannot
    /// say go to stderr).
    Convert {
        /// Input file or directory.
        input: PathBuf,
        /// Output file, or - for stdout.
        output: PathBuf,
        /// Output format: edn, json (elle-cli), text, dbcop-bincode,
        /// dbcop-json, dbcop-hist.
        #[arg(long)]
        to: String,
        /// Input format, as check's -f/--format (default: detected); cobra
        /// and viper are read too.
        #[arg(long, short = 'f', visible_alias = "format")]
        from: Option<String>,
        /// Workload (default: detected from the micro-ops).
        #[arg(short, long, value_enum)]
        workload: Option<WorkloadArg>,
        /// As for check, but refused by default (reject): the target
        /// format may require unique writes. Also --dbcop-duplicates.
        #[arg(
            long = "duplicates",
            visible_alias = "dbcop-duplicates",
            default_value = "reject"
        )]
        dbcop_duplicates: String,
    },
    /// Generate a history from a simulated database, with known faults.
    Gen(cli::generate::GenArgs),
}

fn parse_format(f: &str) -> Result<Format, Error> {
    Format::parse(f).ok_or_else(|| {
        Error::Usage(format!(
            "unknown format `{f}`: expected edn, json, text, dbcop-bincode, dbcop-json, dbcop-hist, cobra or viper"
        ))
    })
}

fn parse_duplicates(s: &str) -> Result<Duplicates, Error> {
    Duplicates::parse(s).ok_or_else(|| {
        Error::Usage(format!(
            "unknown --duplicates `{s}`: expected any, reject, last-writer or drop-reads"
        ))
    })
}

fn workload(w: Option<WorkloadArg>) -> Option<Workload> {
    w.map(|w| match w {
        WorkloadArg::ListAppend => Workload::ListAppend,
        WorkloadArg::RwRegister => Workload::RwRegister,
    })
}

fn run_convert(
    input: &std::path::Path,
    output: &std::path::Path,
    to: &str,
    from: Option<&str>,
    w: Option<WorkloadArg>,
    dups: &str,
) -> Result<u8, Error> {
    let opts = ConvertOptions {
        from: from.map(parse_format).transpose()?,
        to: parse_format(to)?,
        load: LoadOptions {
            workload: workload(w),
            duplicates: parse_duplicates(dups)?,
            ..LoadOptions::default()
        },
    };
    let notes = convert::convert(input, output, &opts)?;
    for n in &notes.lines {
        say!("{}: {n}", input.display());
    }
    Ok(0)
}

fn load_opts(input: &InputArgs) -> Result<LoadOptions, Error> {
    Ok(LoadOptions {
        format: input.format.as_deref().map(parse_format).transpose()?,
        workload: workload(input.workload),
        duplicates: parse_duplicates(&input.dbcop_duplicates)?,
        keys: input.keys.orders(),
    })
}

/// What the check is doing, drawn on stderr while it runs when stderr is
/// a terminal ([`check::progress`]): a spinner with the stages under way
/// (the file, the model or level, the strategy). Stopped and cleared
/// when dropped; nothing is drawn otherwise.
struct Progress(Option<Drawing>);

/// The spinner's thread, the signal that stops it and the spinner (none
/// while nothing is under way or [`Progress::quiet`] holds it).
struct Drawing {
    stop: Arc<AtomicBool>,
    bar: Arc<Mutex<Option<indicatif::ProgressBar>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Progress {
    fn start() -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        check::progress::enable();
        let stop = Arc::new(AtomicBool::new(false));
        let bar: Arc<Mutex<Option<indicatif::ProgressBar>>> = Arc::default();
        let (stopped, shown) = (stop.clone(), bar.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let now = check::progress::now();
                if let Ok(mut bar) = shown.lock() {
                    if now.is_empty() {
                        // Nothing under way (a file being read draws its
                        // own bar): the spinner goes.
                        if let Some(b) = bar.take() {
                            b.finish_and_clear();
                        }
                    } else {
                        let b = bar.get_or_insert_with(|| {
                            let b = indicatif::ProgressBar::new_spinner();
                            b.set_style(
                                indicatif::ProgressStyle::with_template(
                                    "{spinner} {elapsed} {wide_msg}",
                                )
                                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                            );
                            b
                        });
                        b.set_message(now);
                        b.tick();
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Progress(Some(Drawing { stop, bar, thread }))
    }

    /// Runs `f` (which prints) with the spinner cleared and held off.
    fn quiet<T>(&self, f: impl FnOnce() -> T) -> T {
        let Some(d) = &self.0 else { return f() };
        let mut bar = d.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = bar.take() {
            b.finish_and_clear();
        }
        f()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            d.stop.store(true, Ordering::Relaxed);
            let _ = d.thread.join();
            if let Some(b) = d.bar.lock().ok().and_then(|mut b| b.take()) {
                b.finish_and_clear();
            }
        }
    }
}

/// Loads a file, with a progress bar for big files on a terminal.
fn load(path: &std::path::Path, opts: LoadOptions) -> Result<Loaded, Error> {
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > 8 << 20 && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(size);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(path.display().to_string());
        let tick = |off: u64| bar.set_position(off);
        let r = history::load(path, opts, Some(&tick));
        bar.finish_and_clear();
        r
    } else {
        history::load(path, opts, None)
    }
}

/// Loads a file, or reports why not (as `errors` says) and marks the run
/// as failed to read (exit status 3).
fn load_or_report(
    path: &std::path::Path,
    opts: LoadOptions,
    errors: Errors,
    worst: &mut u8,
) -> Option<Loaded> {
    match load(path, opts) {
        Ok(l) => Some(l),
        Err(e) => {
            report_error(&e, errors);
            *worst = 3;
            None
        }
    }
}

/// How errors are told: on stderr for a person, or as JSON on stdout when
/// the results go there as JSON (`-o json`), so that a program reading
/// them reads the errors too.
#[derive(Copy, Clone, PartialEq)]
enum Errors {
    Text,
    Json,
}

fn report_error(e: &Error, errors: Errors) {
    if errors == Errors::Json {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", error_json(e))
            .and_then(|()| out.flush())
            .is_ok()
        {
            return;
        }
        // stdout is gone: stderr is all that is left.
    }
    match e {
        Error::Input(ie) => say!("{}", snippet(ie)),
        // The reader of a pipe has gone (`| head`): nothing more can reach
        // it, so say why the output stopped where it did.
        Error::Io { path, err } if err.kind() == std::io::ErrorKind::BrokenPipe => {
            say!("elle-si: {path} was closed before all the output was written (broken pipe)")
        }
        other => say!("error: {other}"),
    }
}

/// An input error as miette draws it, snippet and all; where miette
/// cannot draw it (it panics on positions it cannot lay out), the plain
/// `file:line:column: reason` with the help below it.
fn snippet(e: &elle_si::error::InputError) -> String {
    let report = miette::Report::new(e.clone());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| format!("{report:?}")));
    std::panic::set_hook(hook);
    drawn.unwrap_or_else(|_| {
        let help = miette::Diagnostic::help(e)
            .map(|h| format!("\n  help: {h}"))
            .unwrap_or_default();
        format!("error: {e}{help}")
    })
}

/// An error as one JSON object: `{"error": {"kind": ..., "message": ...}}`,
/// with `file`, `line`, `column` and `help` where it has them.
fn error_json(e: &Error) -> serde_json::Value {
    use serde_json::json;
    let body = match e {
        Error::Input(ie) => {
            let mut m = json!({
                "kind": "input",
                "file": ie.file,
                "message": ie.message,
            });
            if ie.line > 0 {
                m["line"] = json!(ie.line);
                m["column"] = json!(ie.column);
            }
            if let Some(h) = miette::Diagnostic::help(&**ie) {
                m["help"] = json!(h.to_string());
            }
            m
        }
        Error::Io { path, err } => json!({
            "kind": "io",
            "file": path,
            "message": err.to_string(),
        }),
        Error::Usage(m) => json!({"kind": "usage", "message": m}),
    };
    json!({ "error": body })
}

fn verbose_notes(l: &Loaded) {
    let s = &l.history.stats;
    let h = &l.history;
    say!(
        "{}: {} format, {} workload, {} ops ({} client, {} skipped), {} transactions in {} sessions",
        l.source.name(),
        l.format.name(),
        h.workload.map_or("unknown", |w| w.name()),
        s.ops,
        s.client_ops,
        s.skipped_ops,
        h.txns.len(),
        h.sessions.len()
    );
    if s.completions_only {
        say!(
            "{}: the file holds completions only: each op stands alone as a transaction",
            l.source.name()
        );
    }
    if s.dangling_invokes > 0 {
        say!(
            "{}: {} invocation{} never completed: kept as indeterminate",
            l.source.name(),
            s.dangling_invokes,
            if s.dangling_invokes == 1 { "" } else { "s" }
        );
    }
}

/// A time in seconds as `--timeout` takes it: a finite, non-negative
/// number a duration can hold (at most about 31,700 years).
fn seconds(s: &str) -> Result<f64, String> {
    let t: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !t.is_finite() || t < 0.0 {
        return Err(format!(
            "{s} is not a time: give a finite, non-negative number of seconds"
        ));
    }
    // A deadline this far off would overflow the clock.
    if t > 1e12 {
        return Err(format!(
            "{s} is more than the 10^12 seconds a timeout may be"
        ));
    }
    Ok(t)
}

/// The headline of a check: the verdict under the models and anomalies
/// asked for (`asked` the anomalies as given, `anomalies` resolved), and,
/// where they differ, each one's: a history may violate one model and
/// satisfy the others.
fn headline(
    r: &CheckResult,
    models: &[Model],
    (asked, anomalies): (&[String], &[AnomalyType]),
) -> String {
    let mut parts: Vec<(String, Valid)> = elle_si::report::model_verdicts(r, models)
        .into_iter()
        .map(|(m, v)| (m.friendly().to_string(), v))
        .collect();
    if !asked.is_empty() {
        let prohibited = elle_si::spec::lattice::anomalies_implying(anomalies);
        let v = elle_si::report::verdict_under(r, &prohibited, &elle_si::report::Basis::Anomalies);
        // Each name once, in the order given.
        let mut names: Vec<&str> = Vec::new();
        for a in asked {
            if !names.contains(&a.as_str()) {
                names.push(a);
            }
        }
        parts.push((format!("anomalies {}", names.join(",")), v));
    }
    let word = |v: Valid| match v {
        Valid::True => "VALID",
        Valid::False => "INVALID",
        Valid::Unknown => "UNKNOWN",
    };
    if parts.iter().all(|&(_, v)| v == r.valid) || !parts.iter().any(|&(_, v)| v == r.valid) {
        // One verdict for all, said once (and, which cannot be, parts none
        // of which has the whole's verdict: that is never contradicted).
        let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
        return format!("{} under {}", word(r.valid), names.join(", "));
    }
    // The whole's verdict first, in capitals; then the others.
    let mut order = vec![r.valid];
    order.extend(
        [Valid::False, Valid::Unknown, Valid::True]
            .into_iter()
            .filter(|&v| v != r.valid),
    );
    let groups: Vec<String> = order
        .into_iter()
        .filter_map(|v| {
            let names: Vec<&str> = parts
                .iter()
                .filter(|(_, p)| *p == v)
                .map(|(n, _)| n.as_str())
                .collect();
            let w = if v == r.valid {
                word(v).to_string()
            } else {
                word(v).to_lowercase()
            };
            (!names.is_empty()).then(|| format!("{w} under {}", names.join(", ")))
        })
        .collect();
    groups.join("; ")
}

fn text_summary(
    l: &Loaded,
    r: &CheckResult,
    models: &[Model],
    anomalies: (&[String], &[AnomalyType]),
) -> String {
    let head = headline(r, models, anomalies);
    let mut out = format!("{}: {head}\n", l.source.name());
    // What was left out of the check, second: a history of nothing but
    // skipped ops is unknown for that reason.
    let skipped = l.history.stats.skipped_ops;
    if skipped > 0 {
        out.push_str(&format!(
            "  {skipped} op{} skipped: {} :process is not a client's (a nemesis, or none)\n",
            if skipped == 1 { "" } else { "s" },
            if skipped == 1 { "its" } else { "their" }
        ));
    }
    // Why anything is unknown, first.
    let part_unknown = elle_si::report::model_verdicts(r, models)
        .iter()
        .any(|&(_, v)| v == Valid::Unknown);
    if r.valid == Valid::Unknown || part_unknown {
        for u in r.unknown_reasons() {
            out.push_str(&format!("  unknown: {u}\n"));
        }
    }
    for (m, s) in &r.undecided {
        out.push_str(&format!(
            "  {}: elle-si decides it only through {}, which the history violates (below), so \
             it cannot tell\n",
            m.friendly(),
            s.friendly()
        ));
    }
    for (t, list) in &r.unconfirmed {
        out.push_str(&format!(
            "  unconfirmed {t}: {} (resting on a guessed writer; -o edn lists them under :elle-si/unconfirmed)\n",
            elle_si::anomaly::found(list)
        ));
    }
    for (t, list) in &r.anomalies {
        out.push_str(&format!("  {t}: {}\n", elle_si::anomaly::found(list)));
        for a in list.iter().take(3) {
            let lines: Vec<String> = a
                .txns
                .iter()
                .map(|&t| elle_si::explain::text::place(&l.history, t))
                .collect();
            let pat = a.pattern.map(|p| format!(" ({p})")).unwrap_or_default();
            if let Some(elle_si::anomaly::Datum::Str(why)) = a.get(elle_si::anomaly::Field::Reason)
            {
                out.push_str(&format!("    {}: {why}\n", a.name()));
                continue;
            }
            if lines.is_empty() && a.kind == Kind::Marker(Marker::CycleSearchTimeout) {
                // Elle's map for it names no transaction: say what it means.
                let of = match a.get(elle_si::anomaly::Field::AnomalySpecType) {
                    Some(elle_si::anomaly::Datum::Kw(w)) => {
                        let model = a.undecided_claim().and_then(|t| t.cycle_exists_model());
                        format!(" on {}", model.unwrap_or(w))
                    }
                    _ => String::new(),
                };
                out.push_str(&format!(
                    "    {}: no verdict{of} within the time or the work the check was given\n",
                    a.name()
                ));
                continue;
            }
            out.push_str(&format!("    {}{pat} at {}\n", a.name(), lines.join(", ")));
            out.push_str(&elle_si::explain::text::explain(&l.history, a, "      "));
        }
        // Those shown above are the first three listed.
        let (found, listed) = (elle_si::anomaly::found(list), list.len() as u64);
        let more = found - listed.min(3);
        if more > 0 {
            out.push_str(&if found > listed {
                format!(
                    "    ... and {more} more (-o edn lists {listed}; the other {} are counted in :also)\n",
                    found - listed
                )
            } else {
                format!("    ... and {more} more (-o edn lists all)\n")
            });
        }
    }
    if !r.not.is_empty() {
        let v: Vec<&str> = r.not.iter().map(String::as_str).collect();
        out.push_str(&format!("  not: {}\n", v.join(", ")));
    }
    // A report longer than a screen ends with what it began with, and the
    // count of each type found.
    if out.lines().count() > SCREEN {
        let types: Vec<String> = r
            .anomalies
            .iter()
            .map(|(t, list)| format!("{t} {}", elle_si::anomaly::found(list)))
            .collect();
        out.push_str(&format!(
            "{}: {head} ({})\n",
            l.source.name(),
            types.join(", ")
        ));
    }
    out
}

/// The lines a text report holds before it repeats its headline at its
/// end.
const SCREEN: usize = 40;

/// A file checked (with the deadline its run had, for rendering).
enum Checked {
    Done(Box<(Loaded, CheckResult)>, Option<Instant>),
    /// It could not be read: the run fails (exit status 3), the other
    /// files are still checked.
    Unread(Error),
    /// The check could not be made: the run ends.
    Failed(Error),
}

/// What the files told so far share: stdout, the worst exit status, the
/// reader gone, and an error that ends the run.
struct Told {
    stdout: std::io::Stdout,
    worst: u8,
    /// Set when stdout's reader has gone.
    cut: Option<std::io::Error>,
    /// An error that ends the run: later files are not told.
    failed: Option<Error>,
    /// Each run's row on the folder's top page, when several files are
    /// checked into a folder.
    runs: Vec<elle_si::report::html::Run>,
}

/// What a check of many files asks of each.
struct Ask<'a> {
    input: &'a InputArgs,
    opts: LoadOptions,
    copts: CheckOptions,
    models: &'a [Model],
    anomalies: &'a [String],
    output: OutputArg,
    folder: Option<(&'a std::path::Path, folder::PlotOptions)>,
    several: bool,
    /// Each file's folder under the one asked for, when several are
    /// checked into one (else none).
    run_folders: Vec<PathBuf>,
}

/// Reads and checks one file, within its own timeout.
fn check_one(f: &std::path::Path, ask: &Ask) -> Checked {
    // --timeout bounds each file's whole run, reading included.
    let started = Instant::now();
    let deadline = ask.copts.timeout.and_then(|t| started.checked_add(t));
    let l = match load(f, ask.opts) {
        Ok(l) => l,
        Err(e) => return Checked::Unread(e),
    };
    // The file by its last two parts (a store's runs are all
    // `<time>/history.edn`).
    let _stage = check::progress::Stage::enter(|| {
        let parts: Vec<_> = f.iter().collect();
        let tail = &parts[parts.len().saturating_sub(2)..];
        tail.iter().collect::<PathBuf>().display().to_string()
    });
    let copts = CheckOptions {
        timeout: ask
            .copts
            .timeout
            .map(|t| t.saturating_sub(started.elapsed())),
        ..ask.copts.clone()
    };
    match check::entry::check_loaded(&l, &copts) {
        Ok(r) => Checked::Done(Box::new((l, r)), deadline),
        Err(e) => Checked::Failed(e),
    }
}

/// Tells what a file's check found, in the files' order: notes on
/// stderr, the result on stdout, the elle/ folder asked for.
fn tell_one(files: &[PathBuf], i: usize, checked: Checked, ask: &Ask, t: &mut Told) {
    let f = &files[i];
    let errors = if ask.output == OutputArg::Json {
        Errors::Json
    } else {
        Errors::Text
    };
    let (l, mut r, deadline) = match checked {
        Checked::Done(lr, deadline) => {
            let (l, r) = *lr;
            (l, r, deadline)
        }
        Checked::Unread(e) => {
            report_error(&e, errors);
            t.worst = 3;
            if !ask.run_folders.is_empty() {
                t.runs
                    .push(folder::unread_row(&f.display().to_string(), e.to_string()));
            }
            return;
        }
        Checked::Failed(e) => {
            t.failed = Some(e);
            return;
        }
    };
    for n in &l.notes.lines {
        say!("{}: {n}", l.source.name());
    }
    if ask.input.verbose {
        verbose_notes(&l);
        for n in &r.notes {
            say!("{}: {n}", l.source.name());
        }
    } else {
        // How each verdict was reached goes in the result map with -v
        // only: otherwise the map is Elle's.
        r.decided_by.clear();
    }
    let code = r.valid.exit_code() as u8;
    if t.worst != 3 && (code == 1 || (code == 2 && t.worst == 0)) {
        t.worst = code;
    }
    // A result that cannot be written (a full disk) fails the run by
    // name, never passing for the verdict's exit status.
    let mut lock = t.stdout.lock();
    let stdout = &mut lock;
    let written = match ask.output {
        // The reader has gone: the rest is for the folder alone.
        _ if t.cut.is_some() => Ok(()),
        OutputArg::Text => stdout.write_all(
            text_summary(&l, &r, ask.models, (ask.anomalies, &ask.copts.anomalies)).as_bytes(),
        ),
        // As elle-cli prints it (`println filepath "\t" valid?`).
        OutputArg::ElleCli => writeln!(
            stdout,
            "{} \t {}",
            f.display(),
            r.valid.edn().trim_start_matches(':')
        ),
        OutputArg::Edn | OutputArg::PrettyEdn | OutputArg::Json => {
            // Written as rendered: a large violation's map is never
            // held whole.
            let mut out = std::io::BufWriter::new(&mut *stdout);
            let name = f.display().to_string();
            let syntax = match ask.output {
                OutputArg::Json => render::Syntax::Json {
                    file: ask.several.then_some(name.as_str()),
                },
                OutputArg::PrettyEdn => render::Syntax::PrettyEdn,
                _ => render::Syntax::Edn,
            };
            (if ask.several && matches!(syntax, render::Syntax::Edn | render::Syntax::PrettyEdn) {
                writeln!(out, ";; {name}")
            } else {
                Ok(())
            })
            .and_then(|()| {
                // Bounded by the input's size, and by the deadline.
                let bounds = render::Bounds::for_input(l.source.bytes().len(), deadline);
                render::write_result(&mut out, &l.history, &r, syntax, &bounds)
            })
            .and_then(|_| writeln!(out))
            .and_then(|()| out.flush())
        }
    };
    match written.and_then(|()| stdout.flush()) {
        Ok(()) => {}
        // A closed pipe (`| head`) still lets the folders asked for be
        // written; the run then fails by name.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => t.cut = Some(e),
        Err(e) => {
            t.failed = Some(Error::io("stdout", e));
            return;
        }
    }
    if let Some((dir, plot)) = &ask.folder {
        // Several files (a store's runs are all history.edn): a folder
        // each, named by its path in the store (`<test>/<time>`), and a
        // page listing them all.
        let dir = match ask.run_folders.get(i) {
            Some(sub) => {
                t.runs.push(folder::run_row(
                    sub,
                    &f.display().to_string(),
                    &r,
                    ask.models,
                ));
                dir.join(sub)
            }
            _ => dir.to_path_buf(),
        };
        let plot = folder::PlotOptions {
            deadline,
            ..plot.clone()
        };
        if let Err(e) =
            folder::write_folder(&dir, l.source.name(), &l.history, &r, ask.models, &plot)
        {
            t.failed = Some(e);
        }
    }
}

/// Checks the files on rayon's pool, and tells each in the order given.
/// A file checked waits, history and all, until those before it are
/// told; no more files are handed out than the pool has threads beyond
/// the next to be told, so at most one history per thread is in memory
/// at once.
fn run_check(
    files: &[PathBuf],
    input: &InputArgs,
    models: &[String],
    anomalies: &[String],
    output: OutputArg,
    timeout: Option<f64>,
    folder: Option<(&std::path::Path, folder::PlotOptions)>,
) -> Result<u8, Error> {
    let opts = load_opts(input)?;
    let models = if models.is_empty() && anomalies.is_empty() {
        vec![Model::StrictSerializable]
    } else {
        check::resolve_models(models)?
    };
    let copts = CheckOptions {
        models: models.clone(),
        timeout: timeout.map(Duration::from_secs_f64),
        anomalies: check::resolve_anomalies(anomalies)?,
    };
    // Refuse what cannot be honoured before reading any file.
    check::plan(&copts)?;
    let progress = Progress::start();
    let files = &convert::expand_inputs(files)?;
    let ask = Ask {
        input,
        opts,
        copts,
        models: &models,
        anomalies,
        output,
        several: files.len() > 1,
        run_folders: if folder.is_some() && files.len() > 1 {
            folder::run_folders(files)
        } else {
            Vec::new()
        },
        folder,
    };
    let mut t = Told {
        stdout: std::io::stdout(),
        worst: 0,
        cut: None,
        failed: None,
        runs: Vec::new(),
    };
    // At most this many files checked and not yet told: each holds its
    // history until it is told.
    let window = rayon::current_num_threads().max(1);
    let (done, results) = std::sync::mpsc::channel::<(usize, Checked)>();
    let ask = &ask;
    // The checks run on rayon's pool; this thread (not one of the pool's)
    // hands them out and tells each in turn, so no thread of the pool
    // ever waits for another file.
    rayon::in_place_scope(|s| {
        let mut waiting: std::collections::BTreeMap<usize, Checked> = Default::default();
        let mut given = 0;
        for told in 0..files.len() {
            while given < files.len() && given < told + window && t.failed.is_none() {
                let (i, done) = (given, done.clone());
                s.spawn(move |_| {
                    let _ = done.send((i, check_one(&files[i], ask)));
                });
                given += 1;
            }
            if given <= told {
                // The run ended: nothing more was handed out.
                break;
            }
            let c = loop {
                if let Some(c) = waiting.remove(&told) {
                    break c;
                }
                match results.recv() {
                    Ok((i, c)) => {
                        waiting.insert(i, c);
                    }
                    Err(_) => return,
                }
            };
            if t.failed.is_none() {
                progress.quiet(|| tell_one(files, told, c, ask, &mut t));
            }
        }
    });
    if let Some((dir, _)) = &ask.folder
        && !ask.run_folders.is_empty()
        && t.failed.is_none()
    {
        folder::write_runs_page(dir, &t.runs)?;
    }
    match (t.failed, t.cut) {
        (Some(e), _) => Err(e),
        (None, Some(e)) => Err(Error::io("stdout", e)),
        (None, None) => Ok(t.worst),
    }
}

fn run_stats(files: &[PathBuf], input: &InputArgs) -> Result<u8, Error> {
    let opts = load_opts(input)?;
    let mut worst = 0;
    for f in files {
        let t0 = Instant::now();
        let Some(l) = load_or_report(f, opts, Errors::Text, &mut worst) else {
            continue;
        };
        let secs = t0.elapsed().as_secs_f64();
        let h = &l.history;
        let s = &h.stats;
        let (ok, fail, info) = h.status_counts();
        let bytes = l.source.bytes().len() as f64;
        let reads = h.mops.iter().filter(|m| m.is_read()).count();
        let mut t = std::io::stdout().lock();
        // A full disk fails the run by name (println! would panic).
        let written = (|| -> std::io::Result<()> {
            writeln!(t, "{}", l.source.name())?;
            writeln!(t, "  format           {}", l.format.name())?;
            writeln!(
                t,
                "  workload         {}",
                h.workload.map_or("unknown", |w| w.name())
            )?;
            writeln!(
                t,
                "  ops              {} ({} client, {} skipped)",
                s.ops, s.client_ops, s.skipped_ops
            )?;
            writeln!(
                t,
                "  transactions     {} ({ok} ok, {fail} fail, {info} info)",
                h.txns.len()
            )?;
            writeln!(t, "  sessions         {}", h.sessions.len())?;
            writeln!(t, "  keys             {}", h.keys.len())?;
            if h.key_orders.any() {
                let inf = check::keys::inferred(h);
                writeln!(
                    t,
                    "  inferred orders  {} ({}), cyclic-versions {}",
                    inf.ww.len(),
                    h.key_orders.names().join(", "),
                    inf.cyclic.len()
                )?;
            }
            writeln!(
                t,
                "  micro-ops        {} ({reads} reads, {} writes)",
                h.mops.len(),
                h.mops.len() - reads
            )?;
            writeln!(t, "  completions only {}", s.completions_only)?;
            writeln!(
                t,
                "  read + compile   {:.3} s ({:.0} MB/s)",
                secs,
                bytes / 1e6 / secs.max(1e-9)
            )?;
            t.flush()
        })();
        written.map_err(|e| Error::io("stdout", e))?;
    }
    Ok(worst)
}

/// The command line, with `check` put in front where none of the
/// subcommands is named and the first argument is an option or a file
/// (`elle-si history.edn`, `elle-si -c si run/`, as elle-cli is run).
fn args() -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let Some(first) = v.get(1).and_then(|a| a.to_str()) else {
        return v;
    };
    let named = Cli::command()
        .get_subcommands()
        .any(|c| c.get_name() == first || c.get_all_aliases().any(|a| a == first))
        || first == "help";
    let own = matches!(first, "-h" | "--help" | "-V" | "--version");
    let checkable = first.starts_with('-') || std::path::Path::new(first).exists();
    if !named && !own && checkable {
        v.insert(1, "check".into());
    }
    v
}

/// Sizes rayon's pool, which every check of the run shares: `-j`, or as
/// many threads as cores.
fn threads(jobs: Option<u16>) -> Result<(), Error> {
    let n = jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| Error::Usage(format!("cannot start {n} threads: {e}")))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(args()) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 3 } else { 0 });
        }
    };
    let r = match &cli.cmd {
        Cmd::Check {
            files,
            input,
            consistency_models,
            output,
            pretty,
            timeout,
            anomalies,
            cycle_search_timeout,
            directory,
            plot_format,
            plot_timeout,
            max_plot_bytes,
            plot_scc,
            jobs,
        } => folder::PlotFormat::parse(plot_format)
            .map_err(Error::Usage)
            .and_then(|format| {
                threads(*jobs)?;
                let output = match (*output, *pretty) {
                    (o, false) => o,
                    (OutputArg::Edn, true) => OutputArg::PrettyEdn,
                    (_, true) => {
                        return Err(Error::Usage(
                            "--pretty lays out EDN: give it with -o edn".into(),
                        ));
                    }
                };
                let ms = cycle_search_timeout.map(|ms| ms as f64 / 1000.0);
                let timeout = match (*timeout, ms) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let plot = folder::PlotOptions {
                    format,
                    max_plot_bytes: *max_plot_bytes,
                    plot_timeout: Duration::from_millis(*plot_timeout),
                    scc: *plot_scc,
                    ..Default::default()
                };
                run_check(
                    files,
                    input,
                    consistency_models,
                    anomalies,
                    output,
                    timeout,
                    directory.as_deref().map(|d| (d, plot)),
                )
            }),
        Cmd::Stats { files, input } => run_stats(files, input),
        Cmd::Convert {
            input,
            output,
            to,
            from,
            workload,
            dbcop_duplicates,
        } => run_convert(
            input,
            output,
            to,
            from.as_deref(),
            *workload,
            dbcop_duplicates,
        ),
        Cmd::Gen(args) => cli::generate::run(args),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let errors = match &cli.cmd {
                Cmd::Check {
                    output: OutputArg::Json,
                    ..
                } if !matches!(&e, Error::Io { err, .. } if err.kind() == std::io::ErrorKind::BrokenPipe) => {
                    Errors::Json
                }
                _ => Errors::Text,
            };
            report_error(&e, errors);
            ExitCode::from(3)
        }
    }
}
