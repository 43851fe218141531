//! Robustness (issue 52): how often `elle-si check` reaches a definite
//! verdict, and at what cost, over a fixed matrix of generated histories
//! chosen for variety rather than taken from the tuned files; and whether
//! its whole output stays the same when the host is loaded.
//!
//! `cargo bench --bench robustness -- [FILTER...] [--quick] [--limit SECS]
//! [--max-rss-gb GB] [--keep] [--list] [--determinism]`
//!
//! Each (history, model) pair is one child process, `elle-si check -c MODEL
//! FILE` of the release binary cargo built beside this bench, killed after
//! `--limit` seconds of wall time (default 60) or `--max-rss-gb` of
//! resident memory (default 12) and then counted as undecided. A verdict
//! is definite when the process exits 0 or 1 and the output's first line
//! says VALID or INVALID; exit 2 is unknown. The models: serializable,
//! snapshot-isolation, strong-session-serializable,
//! strong-session-snapshot-isolation, strict-serializable.
//!
//! It prints a Markdown table with a row per model (histories, the share
//! with a definite verdict, p50 / p95 / max process CPU seconds, user +
//! system, from `wait4`, and the largest peak RSS), the shares per size
//! class, then the undecided checks (history, model, why: unknown and the
//! output's first line, killed and at which limit, or an error).
//!
//! - FILTER: substrings of history names (as `--list` prints them); a
//!   history is selected when its name contains any of them.
//! - `--quick`: only the histories of at most 10k transactions (a few
//!   minutes).
//! - `--keep`: histories go to `$TMPDIR/elle-si-robustness` and stay there;
//!   a later `--keep` run reuses them. Without it, each history is written
//!   to a per-run directory and removed once checked.
//! - `--list`: prints the selected histories and how often each value of
//!   each axis occurs, and exits.
//! - `--determinism`: checks each history twice at each model, once plainly
//!   and once while two busy-spinning threads of this process load the
//!   CPUs, and compares the two outputs (standard output and exit code)
//!   byte for byte; it reports how many were compared and which differ. A
//!   check killed in either run is not compared. The spinning threads stop
//!   when the history's loaded checks end (and cannot outlive this process).
//!
//! The matrix (`matrix`), about 150 histories from the library generator,
//! written once each: every store (`Db::EVERY`) with each fault that can
//! fire in it (`Fault::applies_to`, at rate 0.1, as in the checkers bench), two seeds each (1 and 2),
//! and each store without faults, five seeds (its valid histories, where a
//! checker does all its work). Seed 1 (and the fault-free 3 and 5) is
//! rw-register, seed 2 (and 4) list-append; duplicate appends only
//! list-append. The other axes are chosen per history, by its place in that
//! order, not as a cartesian product: sessions 2, 3, 5, 10, 25, 64 and keys
//! 10, 20, 30, 100, 1,000, 10,000 from a fixed hash of the place; key
//! distribution uniform or zipf the same way; the size class (2k, 10k, 65k =
//! 65,536 or 262k = 262,144 transactions, the sessions' share rounded up)
//! cycling 2k, 10k, 2k, 10k, 65k, 2k, 10k, 65k, 10k, 262k, so 3 : 4 : 2 : 1.
//! Building the matrix asserts that every value of every axis occurs. Fixed
//! for all: 8 ops per transaction, half reads, 2% of transactions abort
//! (aborted reads need aborted writes), 1% end `:info`; list-append retires
//! a key after 64 appends (as Elle's generator does), so that reads of a
//! few hot keys do not grow with the history.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use elle_si::generator::{Db, Distribution, Fault, GenOptions};
use elle_si::history::Workload;

#[path = "support/mod.rs"]
mod support;
use support::{Limits, Measured, elle_si_bin, generate_file};

/// The models every history is checked at, by the CLI's names.
const MODELS: [&str; 5] = [
    "serializable",
    "snapshot-isolation",
    "strong-session-serializable",
    "strong-session-snapshot-isolation",
    "strict-serializable",
];

const SESSIONS: [u32; 6] = [2, 3, 5, 10, 25, 64];
const KEYS: [u64; 6] = [10, 20, 30, 100, 1_000, 10_000];
/// Size classes: name and transactions.
const SIZES: [(&str, u32); 4] = [
    ("2k", 2_000),
    ("10k", 10_000),
    ("65k", 65_536),
    ("262k", 262_144),
];
/// The size class of the history at place n: `SIZES[SIZE_CYCLE[n % 10]]`.
const SIZE_CYCLE: [usize; 10] = [0, 1, 0, 1, 2, 0, 1, 2, 1, 3];
/// `--quick` keeps the size classes below this index (2k and 10k).
const QUICK_SIZES: usize = 2;
const FAULT_SEEDS: u64 = 2;
const CLEAN_SEEDS: u64 = 5;
const FAULT_RATE: f64 = 0.1;

/// One history of the matrix.
struct History {
    name: String,
    /// Index into [`SIZES`].
    size: usize,
    gen_opts: GenOptions,
}

/// A fixed hash (splitmix64's finaliser) of a history's place and an axis:
/// the axes' choices, spread but the same in every run.
fn pick(n: u64, axis: u64, len: usize) -> usize {
    let mut z = n
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(axis.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z % len as u64) as usize
}

/// The matrix (see the top of this file), smallest size class first.
fn matrix() -> Vec<History> {
    let mut v = Vec::new();
    let mut n = 0u64;
    for db in Db::EVERY {
        let faults = Fault::ALL
            .into_iter()
            .filter(|f| f.applies_to(db, Workload::ListAppend));
        for fault in std::iter::once(None).chain(faults.map(Some)) {
            let seeds = if fault.is_none() {
                CLEAN_SEEDS
            } else {
                FAULT_SEEDS
            };
            for seed in 1..=seeds {
                let workload = if seed % 2 == 0 || fault == Some(Fault::DuplicateAppend) {
                    Workload::ListAppend
                } else {
                    Workload::RwRegister
                };
                let sessions = SESSIONS[pick(n, 1, SESSIONS.len())];
                let keys = KEYS[pick(n, 2, KEYS.len())];
                let distribution = [Distribution::Uniform, Distribution::Zipf][pick(n, 3, 2)];
                let size = SIZE_CYCLE[n as usize % SIZE_CYCLE.len()];
                let mut g = GenOptions {
                    sessions,
                    txns_per_session: SIZES[size].1.div_ceil(sessions),
                    ops_per_txn: 8,
                    read_ratio: 0.5,
                    keys,
                    distribution,
                    workload,
                    seed,
                    db,
                    abort_rate: 0.02,
                    info_rate: 0.01,
                    max_writes_per_key: (workload == Workload::ListAppend).then_some(64),
                    ..GenOptions::default()
                };
                if let Some(f) = fault {
                    g = g.with_fault(f, FAULT_RATE);
                }
                let name = format!(
                    "{}-{}-{}-s{sessions}-k{keys}-{}-{}-seed{seed}",
                    match workload {
                        Workload::ListAppend => "la",
                        _ => "rw",
                    },
                    db.name(),
                    fault.map_or("none", Fault::name),
                    distribution.name(),
                    SIZES[size].0,
                );
                v.push(History {
                    name,
                    size,
                    gen_opts: g,
                });
                n += 1;
            }
        }
    }
    let covered = |f: &dyn Fn(&History, usize) -> bool, len: usize| {
        (0..len).all(|i| v.iter().any(|h| f(h, i)))
    };
    assert!(
        covered(&|h, i| h.gen_opts.sessions == SESSIONS[i], SESSIONS.len())
            && covered(&|h, i| h.gen_opts.keys == KEYS[i], KEYS.len())
            && covered(&|h, i| h.size == i, SIZES.len()),
        "the matrix misses a value of an axis"
    );
    v.sort_by_key(|h| h.size);
    v
}

struct Opts {
    filter: Vec<String>,
    quick: bool,
    limits: Limits,
    keep: bool,
    list: bool,
    determinism: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: cargo bench --bench robustness -- [FILTER...] [--quick] [--limit SECS] \
         [--max-rss-gb GB] [--keep] [--list] [--determinism]"
    );
    std::process::exit(2)
}

/// A flag's positive number, or the usage.
fn positive(v: Option<&String>) -> f64 {
    v.and_then(|s| s.parse().ok())
        .filter(|x: &f64| *x > 0.0 && x.is_finite())
        .unwrap_or_else(|| usage())
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        filter: Vec::new(),
        quick: false,
        limits: Limits {
            timeout: Duration::from_secs(60),
            max_rss_kb: 12 << 20,
        },
        keep: false,
        list: false,
        determinism: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--bench" => {}
            "--limit" => o.limits.timeout = Duration::from_secs_f64(positive(it.next())),
            "--max-rss-gb" => o.limits.max_rss_kb = (positive(it.next()) * (1 << 20) as f64) as u64,
            "--quick" => o.quick = true,
            "--keep" => o.keep = true,
            "--list" => o.list = true,
            "--determinism" => o.determinism = true,
            "-h" | "--help" => usage(),
            f if !f.starts_with('-') => o.filter.push(f.to_string()),
            _ => usage(),
        }
    }
    o
}

// ---------------------------------------------------------------- checks

/// How one check ended.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    /// VALID or INVALID.
    Definite,
    /// Exit 2: the output's first line.
    Unknown(String),
    /// Killed at a limit ("timeout" or "memory").
    Killed(&'static str),
    /// Anything else: the exit code and the first line of stderr.
    Error(String),
}

/// One check's figures, outcome and whole standard output.
struct Run {
    m: Measured,
    outcome: Outcome,
    stdout: Vec<u8>,
}

fn first_line(bytes: &[u8]) -> String {
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let s = String::from_utf8_lossy(line);
    match s.char_indices().nth(160) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.into_owned(),
    }
}

/// `elle-si check -c MODEL FILE`, its output to files in `dir`.
fn check(file: &Path, model: &str, dir: &Path, limits: Limits) -> Run {
    let (out, err) = (dir.join("check.out"), dir.join("check.err"));
    let stdout = fs::File::create(&out).expect("creating the output file");
    let stderr = fs::File::create(&err).expect("creating the error file");
    let m = support::measure(
        Command::new(elle_si_bin())
            .arg("check")
            .arg("-c")
            .arg(model)
            .arg(file)
            .stderr(stderr),
        limits,
        Stdio::from(stdout),
    );
    let stdout = fs::read(&out).unwrap_or_default();
    let line = first_line(&stdout);
    let says = |w: &str| line.split_whitespace().any(|x| x == w);
    let outcome = match (m.killed, m.code) {
        (Some(k), _) => Outcome::Killed(k),
        (None, 0) if says("VALID") => Outcome::Definite,
        (None, 1) if says("INVALID") => Outcome::Definite,
        (None, 2) => Outcome::Unknown(line),
        (None, c) => Outcome::Error(format!(
            "exit {c}: {}",
            first_line(&fs::read(&err).unwrap_or_default())
        )),
    };
    Run { m, outcome, stdout }
}

/// Threads spinning on the CPUs until dropped.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    fn start(n: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Writes the history to `dir` unless a `--keep` run left it there
/// (written under a temporary name and renamed, so a file there is whole);
/// its path, and how many faults fired when it was written now.
fn prepare(h: &History, dir: &Path, keep: bool) -> (PathBuf, Option<usize>) {
    let path = dir.join(format!("{}.edn", h.name));
    if keep && path.exists() {
        eprintln!("  reusing {}", path.display());
        return (path, None);
    }
    let tmp = dir.join(format!("{}.edn.part", h.name));
    let r = generate_file(&h.gen_opts, &tmp);
    fs::rename(&tmp, &path).expect("renaming the history file");
    (path, Some(r.faults.len()))
}

// ---------------------------------------------------------------- report

/// The nearest-rank percentile of sorted figures.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    sorted[i]
}

/// One (history, model) check of the plain pass.
struct Row {
    history: usize,
    model: usize,
    run: Run,
}

fn share(rows: &[&Row]) -> String {
    let definite = rows
        .iter()
        .filter(|r| r.run.outcome == Outcome::Definite)
        .count();
    if rows.is_empty() {
        "-".into()
    } else {
        format!(
            "{definite}/{} ({:.0}%)",
            rows.len(),
            100.0 * definite as f64 / rows.len() as f64
        )
    }
}

fn report(histories: &[&History], rows: &[Row], o: &Opts) {
    println!(
        "\n### Definite verdicts within {} s (CPU: user + system seconds of the whole process)\n",
        o.limits.timeout.as_secs_f64()
    );
    println!("| model | histories | definite | CPU p50 | CPU p95 | CPU max | peak RSS MB max |");
    println!("|---|---|---|---|---|---|---|");
    for (mi, model) in MODELS.iter().enumerate() {
        let of: Vec<&Row> = rows.iter().filter(|r| r.model == mi).collect();
        if of.is_empty() {
            continue;
        }
        let mut cpu: Vec<f64> = of.iter().map(|r| r.run.m.cpu).collect();
        cpu.sort_by(f64::total_cmp);
        let rss = of.iter().map(|r| r.run.m.rss_kb).max().unwrap_or(0);
        println!(
            "| {model} | {} | {} | {:.2} | {:.2} | {:.2} | {:.0} |",
            of.len(),
            share(&of),
            percentile(&cpu, 0.5),
            percentile(&cpu, 0.95),
            percentile(&cpu, 1.0),
            rss as f64 / 1024.0
        );
    }
    println!("\n### Definite verdicts per size class\n");
    println!("| size | histories | {} |", MODELS.join(" | "));
    println!("|---|---|{}", "---|".repeat(MODELS.len()));
    for (si, (size, _)) in SIZES.iter().enumerate() {
        let n = histories.iter().filter(|h| h.size == si).count();
        if n == 0 {
            continue;
        }
        let cells: Vec<String> = (0..MODELS.len())
            .map(|mi| {
                let of: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.model == mi && histories[r.history].size == si)
                    .collect();
                share(&of)
            })
            .collect();
        println!("| {size} | {n} | {} |", cells.join(" | "));
    }
    println!("\n### Undecided\n");
    let mut any = false;
    for r in rows {
        let why = match &r.run.outcome {
            Outcome::Definite => continue,
            Outcome::Unknown(line) => format!("unknown: {line}"),
            Outcome::Killed(k) => format!("killed ({k}) after {:.1} s", r.run.m.wall),
            Outcome::Error(e) => format!("error: {e}"),
        };
        any = true;
        println!(
            "- {} at {}: {why}",
            histories[r.history].name, MODELS[r.model]
        );
    }
    if !any {
        println!("(none)");
    }
}

fn list(histories: &[&History]) {
    for h in histories {
        let g = &h.gen_opts;
        println!(
            "{}  ({} sessions x {} txns)",
            h.name, g.sessions, g.txns_per_session
        );
    }
    let count = |f: &dyn Fn(&History) -> bool| histories.iter().filter(|h| f(h)).count();
    println!("\n{} histories", histories.len());
    let line = |axis: &str, cells: Vec<String>| println!("{axis}: {}", cells.join(", "));
    line(
        "sessions",
        SESSIONS
            .iter()
            .map(|&s| format!("{s}: {}", count(&|h| h.gen_opts.sessions == s)))
            .collect(),
    );
    line(
        "keys",
        KEYS.iter()
            .map(|&k| format!("{k}: {}", count(&|h| h.gen_opts.keys == k)))
            .collect(),
    );
    line(
        "size",
        SIZES
            .iter()
            .enumerate()
            .map(|(i, (s, _))| format!("{s}: {}", count(&|h| h.size == i)))
            .collect(),
    );
    line(
        "workload",
        [Workload::RwRegister, Workload::ListAppend]
            .iter()
            .map(|&w| format!("{}: {}", w.name(), count(&|h| h.gen_opts.workload == w)))
            .collect(),
    );
    line(
        "store",
        Db::EVERY
            .iter()
            .map(|&d| format!("{}: {}", d.name(), count(&|h| h.gen_opts.db == d)))
            .collect(),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --all-targets` runs bench binaries without `--bench`.
    if !args.iter().any(|a| a == "--bench") {
        println!("robustness: run with `cargo bench --bench robustness`");
        return;
    }
    let o = parse_opts(&args);
    let all = matrix();
    let histories: Vec<&History> = all
        .iter()
        .filter(|h| !o.quick || h.size < QUICK_SIZES)
        .filter(|h| o.filter.is_empty() || o.filter.iter().any(|f| h.name.contains(f.as_str())))
        .collect();
    if o.list {
        list(&histories);
        return;
    }
    let dir = std::env::temp_dir().join(if o.keep {
        "elle-si-robustness".to_string()
    } else {
        format!("elle-si-robustness-{}", std::process::id())
    });
    fs::create_dir_all(&dir).expect("temp dir");
    let mut rows = Vec::new();
    // Determinism: outputs compared; checks not compared (killed in a
    // run); those whose outputs differ.
    let (mut compared, mut skipped, mut differ) = (0usize, Vec::new(), Vec::new());
    // Histories with a fault enabled: one fired, none fired, reused.
    let mut faulty = (0usize, 0usize, 0usize);
    for (hi, h) in histories.iter().enumerate() {
        eprintln!("[{}/{}] {}", hi + 1, histories.len(), h.name);
        let (file, fired) = prepare(h, &dir, o.keep);
        if h.gen_opts.faults.enabled().next().is_some() {
            match fired {
                Some(0) => faulty.1 += 1,
                Some(_) => faulty.0 += 1,
                None => faulty.2 += 1,
            }
        }
        let mut plain = Vec::new();
        for (mi, model) in MODELS.iter().enumerate() {
            let run = check(&file, model, &dir, o.limits);
            eprintln!(
                "  {model}: {:?}, {:.2} s CPU, {:.0} MB",
                run.outcome,
                run.m.cpu,
                run.m.rss_kb as f64 / 1024.0
            );
            plain.push(Row {
                history: hi,
                model: mi,
                run,
            });
        }
        if o.determinism {
            let _load = Load::start(2);
            for r in &plain {
                let loaded = check(&file, MODELS[r.model], &dir, o.limits);
                let killed = |run: &Run| matches!(run.outcome, Outcome::Killed(_));
                let what = format!("{} at {}", h.name, MODELS[r.model]);
                if killed(&r.run) || killed(&loaded) {
                    let which = if killed(&r.run) { "plain" } else { "loaded" };
                    skipped.push(format!("{what} (killed in the {which} run)"));
                } else {
                    compared += 1;
                    if loaded.stdout != r.run.stdout || loaded.m.code != r.run.m.code {
                        eprintln!("  {}: the loaded run's output differs", MODELS[r.model]);
                        differ.push(what);
                    }
                }
            }
        }
        // Outputs were compared: keep only the figures.
        rows.extend(plain.into_iter().map(|mut r| {
            r.run.stdout = Vec::new();
            r
        }));
        if !o.keep {
            let _ = fs::remove_file(&file);
        }
    }
    println!(
        "{} histories; of those with a fault enabled, {} had one fire, {} none ({} reused from `--keep`, not counted)",
        histories.len(),
        faulty.0,
        faulty.1,
        faulty.2
    );
    report(&histories, &rows, &o);
    if o.determinism {
        println!(
            "\n### Determinism\n\n{compared} outputs compared between a plain run and one beside two spinning threads; {} differ{}",
            differ.len(),
            if differ.is_empty() { "" } else { ":" }
        );
        for d in &differ {
            println!("- {d}");
        }
        if !skipped.is_empty() {
            println!("\nNot compared ({}):", skipped.len());
            for d in &skipped {
                println!("- {d}");
            }
        }
    }
    if o.keep {
        eprintln!("histories kept in {}", dir.display());
    } else {
        let _ = fs::remove_dir_all(&dir);
    }
}
