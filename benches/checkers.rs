//! Checking time and peak memory of every checker on generated and recorded
//! histories (a plain binary that prints Markdown tables, not criterion: one
//! measurement is a whole process, and its peak memory is the figure).
//!
//! `cargo bench --bench checkers [-- FILTER] [--runs N] [--scale] [--dbcop PATH]`
//!
//! Histories come from the library generator (`elle_si::generator`, as
//! `elle-si gen` makes them) and are written once per configuration to a
//! temporary directory. Each measurement runs in a child process (this
//! binary re-executed with `--child`, or the `elle-si` release binary, or
//! dbcop), so its peak resident memory (`ru_maxrss` from `wait4`) and CPU
//! time (user + system) are its own. The child reports its stages: load
//! (parsing and compiling are one streaming pass in the library, so they are
//! timed together) and check. Figures are medians over `--runs` (default 5);
//! peak memory is the largest over the runs. A child that passes
//! `--timeout` seconds or `--max-rss-gb` is killed and reported as such.
//!
//! Groups (FILTER is a substring of `group/config/level`):
//! - `c4`: C4's default workload (25 sessions x 200 txns x 20 ops, 50%
//!   reads, 10k uniform keys) at ssrc-c4, ra and tcc, in rw-register and
//!   list-append; then C4's fig. 8 sweep at tcc, one parameter at a time.
//! - `wide`: 50 sessions, 50 ops per txn, zipf and hotspot keys.
//! - `polysi`: PolySI's GeneralRH / RW / WH at si, ssi and ser.
//! - `pg`: the PostgreSQL repeatable-read histories in
//!   `../shared/histories/valid/rw-register` (library and whole CLI).
//! - `veristrong`: VeriStrong's 10k-transaction histories in
//!   `../shared/histories/valid/dbcop-bincode`, whose writes are not unique
//!   per (key, value), at ssi and ser (whole CLI, which lets a read of a
//!   duplicated value have observed any of its writers).
//! - `clocks`: the causal checker with vectors, tree clocks and no clocks
//!   (a graph search per question, stopped after `--search-timeout`,
//!   default 60 s), as sessions grow.
//! - `folder`: `elle-si check` of a 10k-transaction list-append history
//!   from the read-committed store (30 keys, ~800 anomalies at causal,
//!   ~650 at 10 keys and SI), without and with `-d` (Elle's elle/ folder:
//!   prose, capped pictures, index.html); the goal is that the folder at
//!   most doubles the run.
//! - `invalid`: invalid histories, each generator store with its faults
//!   (SI store with lost updates and with long forks, the causal store's
//!   own write skews and with causality violations, the serializable store
//!   with aborted reads), rw-register and list-append, 25 sessions x 8
//!   ops over 1,000 zipf keys (list-append: 1,000 per 10k transactions),
//!   faults at rate 0.1, at si, ser and strict
//!   (the generator's line says how many faults fired): 10k transactions, and with `--scale` also
//!   100k, 262k (64 sessions) and 1M. Each row gives the share of the
//!   check's wall time in build, prune, solve and explain
//!   (`elle_si::check::stages`; "other" is the rest: the logged-order
//!   witness, the bounded-sessions search, basic checks), and its valid
//!   counterpart (the same shape without faults, from the same store where
//!   its histories satisfy the level, else from the serializable store),
//!   measured first and selected with it, with the ratios of process CPU
//!   and peak memory. Its rows run once unless `--runs` is given.
//! - `scale` (only with `--scale`): 1M transactions x 20 ops.
//! - `dbcop` (only with `--dbcop PATH`): dbcop's `verify` beside `elle-si
//!   check` on the same dbcop-JSON files.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use elle_si::check::{self, CheckOptions, causal, stages};
use elle_si::convert::{ConvertOptions, convert};
use elle_si::generator::{Db, Distribution, GenOptions, Preset};
use elle_si::history::{Format, LoadOptions, Workload, load};
use elle_si::report::Valid;

#[path = "support/mod.rs"]
mod support;
use support::{Limits, elle_si_bin, generate_file, status_kb};

/// What one measurement runs.
#[derive(Clone)]
enum Job {
    /// This binary with `--child`: load, then check at a model.
    Lib { level: String },
    /// This binary with `--child`: load, then the causal checker alone
    /// with the given clocks.
    Clocks { clocks: &'static str },
    /// `elle-si check -c MODEL FILE`.
    Cli { model: String },
    /// `dbcop verify --consistency LEVEL --input-dir DIR`.
    Dbcop { level: &'static str },
    /// `elle-si check -c MODEL -d DIR FILE`: the check and Elle's folder.
    Folder { model: String },
}

impl Job {
    fn label(&self) -> String {
        match self {
            Job::Lib { level } => level.clone(),
            Job::Clocks { clocks } => format!("tcc@{clocks}"),
            Job::Cli { model } => format!("cli:{model}"),
            Job::Dbcop { level } => format!("dbcop:{level}"),
            Job::Folder { model } => format!("cli:{model}+folder"),
        }
    }
}

/// Where a configuration's history comes from.
#[derive(Clone)]
enum Input {
    Gen(GenOptions),
    File(PathBuf),
}

#[derive(Clone)]
struct Config {
    group: &'static str,
    name: String,
    input: Input,
    jobs: Vec<Job>,
    /// For each level, the config whose row at that level is this one's
    /// valid counterpart (the `invalid` group; empty elsewhere).
    valid: Vec<(String, String)>,
}

/// One child's figures.
#[derive(Clone, Debug, Default)]
struct Sample {
    wall: f64,
    cpu: f64,
    rss_kb: u64,
    load_wall: Option<f64>,
    load_cpu: Option<f64>,
    check_wall: Option<f64>,
    check_cpu: Option<f64>,
    verdict: String,
    killed: Option<&'static str>,
    /// Transactions and micro-ops, as the child compiled them.
    counts: Option<(usize, usize)>,
    /// Seconds of the check in build, prune, solve and explain (see
    /// `elle_si::check::stages`).
    stages: Option<[f64; 4]>,
}

struct Opts {
    filter: Vec<String>,
    runs: usize,
    /// `--runs` was given (the `invalid` group runs once otherwise).
    runs_given: bool,
    scale: bool,
    scale_keys: u64,
    dbcop: Option<PathBuf>,
    timeout: Duration,
    /// For the causal checker without clocks, which C4 also timed out.
    search_timeout: Duration,
    max_rss_kb: u64,
    list: bool,
    keep: bool,
    shared: PathBuf,
}

fn usage() -> ! {
    eprintln!(
        "usage: cargo bench --bench checkers -- [FILTER...] [--runs N] [--quick] [--scale] \
         [--scale-keys N] [--dbcop PATH] [--timeout SECS] [--search-timeout SECS] [--max-rss-gb GB] [--shared DIR] [--list] [--keep]"
    );
    std::process::exit(2)
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        filter: Vec::new(),
        runs: 5,
        runs_given: false,
        scale: false,
        scale_keys: 1_000_000,
        dbcop: None,
        timeout: Duration::from_secs(300),
        search_timeout: Duration::from_secs(60),
        max_rss_kb: 12 << 20,
        list: false,
        keep: false,
        shared: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/histories"),
    };
    let mut timeout_given = false;
    let mut it = args.iter();
    let num =
        |v: Option<&String>| -> f64 { v.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage()) };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--bench" => {}
            "--runs" => {
                o.runs = (num(it.next()) as usize).max(1);
                o.runs_given = true;
            }
            "--quick" => o.runs = 1,
            "--scale" => o.scale = true,
            "--scale-keys" => o.scale_keys = num(it.next()) as u64,
            "--dbcop" => o.dbcop = Some(PathBuf::from(it.next().unwrap_or_else(|| usage()))),
            "--timeout" => {
                o.timeout = Duration::from_secs_f64(num(it.next()));
                timeout_given = true;
            }
            "--search-timeout" => o.search_timeout = Duration::from_secs_f64(num(it.next())),
            "--max-rss-gb" => o.max_rss_kb = (num(it.next()) * (1 << 20) as f64) as u64,
            "--shared" => o.shared = PathBuf::from(it.next().unwrap_or_else(|| usage())),
            "--list" => o.list = true,
            "--keep" => o.keep = true,
            "-h" | "--help" => usage(),
            f if !f.starts_with('-') => o.filter.push(f.to_string()),
            _ => usage(),
        }
    }
    if o.scale && !timeout_given {
        o.timeout = Duration::from_secs(900);
    }
    o
}

// ---------------------------------------------------------------- configs

fn c4(workload: Workload) -> GenOptions {
    GenOptions {
        workload,
        db: Db::Causal,
        ..GenOptions::default()
    }
}

fn lib(levels: &[&str]) -> Vec<Job> {
    levels
        .iter()
        .map(|l| Job::Lib {
            level: l.to_string(),
        })
        .collect()
}

fn configs(o: &Opts) -> Vec<Config> {
    let mut v = Vec::new();
    let gen_cfg = |group, name: String, g: GenOptions, jobs: Vec<Job>| Config {
        group,
        name,
        input: Input::Gen(g),
        jobs,
        valid: Vec::new(),
    };
    // C4's default, both workloads, at the three causal-family levels.
    for (w, wn) in [(Workload::RwRegister, "rw"), (Workload::ListAppend, "la")] {
        v.push(gen_cfg(
            "c4",
            format!("default-{wn}"),
            c4(w),
            lib(&["ssrc-c4", "ra", "tcc"]),
        ));
    }
    // Elle's folder for a history with about a thousand anomalies.
    for (keys, model) in [(30u64, "causal-cerone"), (10, "snapshot-isolation")] {
        v.push(gen_cfg(
            "folder",
            format!("la-rc-s25-t400-o4-k{keys}"),
            GenOptions {
                sessions: 25,
                txns_per_session: 400,
                ops_per_txn: 4,
                keys,
                workload: Workload::ListAppend,
                db: Db::ReadCommitted,
                seed: 1,
                ..GenOptions::default()
            },
            vec![
                Job::Cli {
                    model: model.into(),
                },
                Job::Folder {
                    model: model.into(),
                },
            ],
        ));
    }
    // C4's fig. 8: one parameter at a time from the default, at tcc.
    let base = c4(Workload::RwRegister);
    let sweep: Vec<(String, GenOptions)> = [2u32, 10, 50]
        .iter()
        .map(|&s| {
            (
                format!("sessions={s}"),
                GenOptions {
                    sessions: s,
                    ..base.clone()
                },
            )
        })
        .chain([100u32, 300, 500].iter().map(|&t| {
            (
                format!("txns={t}"),
                GenOptions {
                    txns_per_session: t,
                    ..base.clone()
                },
            )
        }))
        .chain([10u32, 30, 50].iter().map(|&n| {
            (
                format!("ops={n}"),
                GenOptions {
                    ops_per_txn: n,
                    ..base.clone()
                },
            )
        }))
        .chain([0.0, 0.25, 0.75, 1.0].iter().map(|&r| {
            (
                format!("reads={r}"),
                GenOptions {
                    read_ratio: r,
                    ..base.clone()
                },
            )
        }))
        .chain([1_000u64, 5_000].iter().map(|&k| {
            (
                format!("keys={k}"),
                GenOptions {
                    keys: k,
                    ..base.clone()
                },
            )
        }))
        .chain(
            [Distribution::Zipf, Distribution::Hotspot]
                .iter()
                .map(|&d| {
                    (
                        format!("dist={}", d.name()),
                        GenOptions {
                            distribution: d,
                            ..base.clone()
                        },
                    )
                }),
        )
        .collect();
    for (name, g) in sweep {
        v.push(gen_cfg("c4", format!("rw-{name}"), g, lib(&["tcc"])));
    }
    // 50 sessions, 50 ops per txn, skewed keys.
    for (w, wn) in [(Workload::RwRegister, "rw"), (Workload::ListAppend, "la")] {
        for d in [Distribution::Zipf, Distribution::Hotspot] {
            v.push(gen_cfg(
                "wide",
                format!("{wn}-s50-o50-{}", d.name()),
                GenOptions {
                    sessions: 50,
                    ops_per_txn: 50,
                    distribution: d,
                    ..c4(w)
                },
                lib(&["ssrc-c4", "ra", "tcc"]),
            ));
        }
    }
    // PolySI's general workloads, from the serializable store (valid at
    // every level, so every checker does all its work).
    for (p, n) in [
        (Preset::GeneralRh, "general-rh"),
        (Preset::GeneralRw, "general-rw"),
        (Preset::GeneralWh, "general-wh"),
    ] {
        v.push(gen_cfg(
            "polysi",
            n.to_string(),
            GenOptions::preset(p),
            lib(&["si", "ssi", "ser"]),
        ));
    }
    // PostgreSQL repeatable-read histories.
    let pg = o.shared.join("valid/rw-register");
    for f in [
        "pg-rr-s25-t200-o20-uniform.txt",
        "pg-rr-s25-t200-o20-zipf.txt",
        "pg-rr-s50-t200-o20-uniform.txt",
    ] {
        let path = pg.join(f);
        if !path.exists() {
            eprintln!("skipping {}: not found", path.display());
            continue;
        }
        let mut jobs = lib(&[
            "tcc",
            "si",
            "ssi",
            "ser",
            "prefix",
            "parallel-snapshot-isolation",
        ]);
        jobs.extend(["si", "ssi"].iter().map(|m| Job::Cli {
            model: m.to_string(),
        }));
        v.push(Config {
            group: "pg",
            name: f.trim_end_matches(".txt").to_string(),
            input: Input::File(path),
            jobs,
            valid: Vec::new(),
        });
    }
    // VeriStrong's histories with duplicate writes (hyper-polygraphs).
    let vs = o.shared.join("valid/dbcop-bincode");
    for f in ["general-RH-10k.bincode", "general-WH-10k.bincode"] {
        let path = vs.join(f);
        if !path.exists() {
            eprintln!("skipping {}: not found", path.display());
            continue;
        }
        v.push(Config {
            group: "veristrong",
            name: f.trim_end_matches(".bincode").to_string(),
            input: Input::File(path),
            jobs: ["ssi", "ser"]
                .iter()
                .map(|m| Job::Cli {
                    model: m.to_string(),
                })
                .collect(),
            valid: Vec::new(),
        });
    }
    // Clocks for the causal checker, as sessions grow (C4's fig. 11).
    for (s, t) in [
        (5u32, 40u32),
        (5, 200),
        (10, 200),
        (25, 200),
        (50, 200),
        (100, 200),
    ] {
        v.push(gen_cfg(
            "clocks",
            format!("rw-s{s}-t{t}"),
            GenOptions {
                sessions: s,
                txns_per_session: t,
                ..c4(Workload::RwRegister)
            },
            ["vectors", "trees", "search"]
                .iter()
                .map(|&c| Job::Clocks { clocks: c })
                .collect(),
        ));
    }
    v.extend(invalid(o));
    if o.scale {
        for (w, wn) in [(Workload::RwRegister, "rw"), (Workload::ListAppend, "la")] {
            v.push(gen_cfg(
                "scale",
                format!("{wn}-1m-k{}", o.scale_keys),
                GenOptions {
                    sessions: 25,
                    txns_per_session: 40_000,
                    ops_per_txn: 20,
                    keys: o.scale_keys,
                    workload: w,
                    db: Db::SnapshotIsolation,
                    ..GenOptions::default()
                },
                lib(&["tcc", "ssi", "si"]),
            ));
        }
    }
    if o.dbcop.is_some() {
        let levels = |tcc: &str, si: &str, ser: &str| {
            vec![
                Job::Dbcop { level: "causal" },
                Job::Cli { model: tcc.into() },
                Job::Dbcop {
                    level: "snapshot-isolation",
                },
                Job::Cli { model: si.into() },
                Job::Dbcop {
                    level: "serializable",
                },
                Job::Cli { model: ser.into() },
            ]
        };
        let rw = |s, t, n, k, db| GenOptions {
            sessions: s,
            txns_per_session: t,
            ops_per_txn: n,
            keys: k,
            workload: Workload::RwRegister,
            db,
            ..GenOptions::default()
        };
        for (name, g) in [
            ("s5-t100-o10-k1000", rw(5, 100, 10, 1_000, Db::Serializable)),
            (
                "s10-t100-o10-k1000",
                rw(10, 100, 10, 1_000, Db::Serializable),
            ),
            (
                "s25-t200-o20-k10000",
                rw(25, 200, 20, 10_000, Db::Serializable),
            ),
            (
                "s10-t100-o10-k100-lost-update",
                rw(10, 100, 10, 100, Db::SnapshotIsolation)
                    .with_fault(elle_si::generator::Fault::LostUpdate, 0.05),
            ),
            (
                "s10-t100-o10-k100-causality",
                rw(10, 100, 10, 100, Db::Causal)
                    .with_fault(elle_si::generator::Fault::CausalityViolation, 0.05),
            ),
        ] {
            v.push(gen_cfg(
                "dbcop",
                name.into(),
                g,
                levels("tcc", "ssi", "sser"),
            ));
        }
    }
    v
}

/// The `invalid` group's keys: 1,000 for rw-register at every size (the
/// contention of the hard cases); for list-append 1,000 per 10k
/// transactions, since a read returns a key's whole list. Zipf's hottest
/// keys keep their share of the appends however many keys there are, so
/// list-append files still grow faster than the transactions: at 100k,
/// 710 MB from the SI store and over 2.8 GB from the causal store (44 MB
/// at 10k).
fn invalid_keys(w: Workload, txns: u32) -> u64 {
    match w {
        Workload::ListAppend => (u64::from(txns) / 10).max(1000),
        _ => 1000,
    }
}

/// The levels the `invalid` group checks at.
const INVALID_LEVELS: [&str; 3] = ["si", "ser", "strict"];

/// The `invalid` group: each generator store with its faults (SI store
/// with lost updates and with long forks, the causal store's own write
/// skews and with causality violations, the serializable store with
/// aborted reads), rw-register and list-append, 8 ops per txn over 1,000
/// zipf keys (contention, so that the faults fire; see [`invalid_keys`]),
/// faults at rate 0.1;
/// 10k transactions, and with `--scale` 100k, 262k and 1M. Each size and
/// workload first has its valid counterparts: the same shape without
/// faults, from the same store where that store's histories satisfy the
/// level, else from the serializable store.
fn invalid(o: &Opts) -> Vec<Config> {
    use elle_si::generator::Fault;
    let sizes: &[(u32, u32, &str)] = if o.scale {
        &[
            (25, 400, "10k"),
            (25, 4_000, "100k"),
            (64, 4_096, "262k"),
            (25, 40_000, "1m"),
        ]
    } else {
        &[(25, 400, "10k")]
    };
    let stores: [(&str, Db, Option<Fault>); 5] = [
        (
            "si-lost-update",
            Db::SnapshotIsolation,
            Some(Fault::LostUpdate),
        ),
        ("si-long-fork", Db::SnapshotIsolation, Some(Fault::LongFork)),
        ("causal-write-skew", Db::Causal, None),
        (
            "causal-causality-violation",
            Db::Causal,
            Some(Fault::CausalityViolation),
        ),
        (
            "ser-aborted-read",
            Db::Serializable,
            Some(Fault::AbortedRead),
        ),
    ];
    let valid_db = |db: Db, level: &str| {
        if db.guarantees(level) == Some(true) {
            db
        } else {
            Db::Serializable
        }
    };
    let mut v = Vec::new();
    for &(s, t, size) in sizes {
        for (w, wn) in [(Workload::RwRegister, "rw"), (Workload::ListAppend, "la")] {
            let shape = GenOptions {
                sessions: s,
                txns_per_session: t,
                ops_per_txn: 8,
                keys: invalid_keys(w, s * t),
                distribution: Distribution::Zipf,
                workload: w,
                ..GenOptions::default()
            };
            let valid_name = |db: Db| format!("{wn}-{}-valid-{size}", db.name());
            let config = |name, g, levels: Vec<&str>, valid| Config {
                group: "invalid",
                name,
                input: Input::Gen(g),
                jobs: lib(&levels),
                valid,
            };
            for db in [Db::SnapshotIsolation, Db::Serializable] {
                let levels: Vec<&str> = INVALID_LEVELS
                    .into_iter()
                    .filter(|l| stores.iter().any(|&(_, d, _)| valid_db(d, l) == db))
                    .collect();
                let g = GenOptions {
                    db,
                    ..shape.clone()
                };
                v.push(config(valid_name(db), g, levels, Vec::new()));
            }
            for (sn, db, fault) in stores {
                let g = GenOptions {
                    db,
                    ..shape.clone()
                };
                let g = match fault {
                    Some(f) => g.with_fault(f, 0.1),
                    None => g,
                };
                let valid = INVALID_LEVELS
                    .iter()
                    .map(|l| (l.to_string(), valid_name(valid_db(db, l))))
                    .collect();
                v.push(config(
                    format!("{wn}-{sn}-{size}"),
                    g,
                    INVALID_LEVELS.to_vec(),
                    valid,
                ));
            }
        }
    }
    v
}

// ---------------------------------------------------------------- child

/// Nanoseconds this thread has run (the checkers are single-threaded).
fn cpu_s() -> f64 {
    fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0) as f64
        / 1e9
}

fn child(args: &[String]) -> i32 {
    let [file, what, out] = args else {
        eprintln!("--child FILE LEVEL|tcc@CLOCKS OUT");
        return 3;
    };
    let (t0, c0) = (Instant::now(), cpu_s());
    let loaded = match load(Path::new(file), LoadOptions::default(), None) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{file}: {e}");
            return 3;
        }
    };
    let (t1, c1) = (Instant::now(), cpu_s());
    let verdict = if let Some(clocks) = what.strip_prefix("tcc@") {
        let clocks = match clocks {
            "vectors" => causal::Clocks::Vectors,
            "trees" => causal::Clocks::TreeClocks,
            _ => causal::Clocks::Search,
        };
        let (found, _) = causal::check(&loaded.history, causal::Level::Causal, true, clocks, None);
        if found.is_empty() && loaded.anomalies.is_empty() {
            "valid"
        } else {
            "invalid"
        }
    } else {
        let models = match check::resolve_models(std::slice::from_ref(what)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{e}");
                return 3;
            }
        };
        let r = check::check(
            &loaded,
            &CheckOptions {
                models,
                ..CheckOptions::default()
            },
        );
        match r.valid {
            Valid::True => "valid",
            Valid::False => "invalid",
            Valid::Unknown => "unknown",
        }
    };
    let (t2, c2) = (Instant::now(), cpu_s());
    let st = stages::totals();
    let line = format!(
        "{} {} {} {} {verdict} {} {} {} {} {} {} {}\n",
        (t1 - t0).as_secs_f64(),
        c1 - c0,
        (t2 - t1).as_secs_f64(),
        c2 - c1,
        status_kb("self", "VmHWM:"),
        loaded.history.txns.len(),
        loaded.history.mops.len(),
        st.build,
        st.prune,
        st.solve,
        st.explain
    );
    if fs::write(out, line).is_err() {
        return 3;
    }
    0
}

// ---------------------------------------------------------------- parent

/// Runs a command to its end (or kills it at the limits); its figures and
/// exit code.
fn measure(cmd: &mut Command, o: &Opts, timeout: Duration) -> (Sample, i32) {
    let limits = Limits {
        timeout,
        max_rss_kb: o.max_rss_kb,
    };
    let m = support::measure(cmd, limits, Stdio::null());
    let s = Sample {
        wall: m.wall,
        cpu: m.cpu,
        rss_kb: m.rss_kb,
        killed: m.killed,
        ..Sample::default()
    };
    (s, m.code)
}

/// The file a job reads, made on first use.
struct Prepared {
    edn: PathBuf,
    dbcop_dir: Option<PathBuf>,
    /// Transactions and micro-ops, once a child has said.
    counts: Option<(usize, usize)>,
    /// Generated inputs: the transactions committed.
    committed: Option<u64>,
    bytes: u64,
}

fn prepare(c: &Config, dir: &Path, needs_dbcop: bool) -> Prepared {
    let mut committed = None;
    let path = match &c.input {
        Input::File(p) => p.clone(),
        Input::Gen(g) => {
            let p = dir.join(format!("{}-{}.edn", c.group, c.name));
            let r = generate_file(g, &p);
            committed = Some(r.stats.ok);
            p
        }
    };
    let dbcop_dir = needs_dbcop.then(|| {
        let d = dir.join(format!("{}-{}.dbcop", c.group, c.name));
        fs::create_dir_all(&d).expect("dbcop dir");
        let out = d.join("history.json");
        convert(
            &path,
            &out,
            &ConvertOptions {
                from: None,
                to: Format::DbcopJson,
                load: LoadOptions::default(),
            },
        )
        .expect("converting to dbcop JSON");
        d
    });
    let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Prepared {
        edn: path,
        dbcop_dir,
        counts: None,
        committed,
        bytes,
    }
}

fn run_job(job: &Job, p: &Prepared, dir: &Path, o: &Opts) -> Sample {
    match job {
        Job::Lib { .. } | Job::Clocks { .. } => {
            let out = dir.join("child.out");
            let _ = fs::remove_file(&out);
            let what = match job {
                Job::Clocks { clocks } => format!("tcc@{clocks}"),
                Job::Lib { level } => level.clone(),
                _ => unreachable!(),
            };
            let exe = std::env::current_exe().expect("current exe");
            let (mut s, code) = measure(
                Command::new(exe)
                    .arg("--child")
                    .arg(&p.edn)
                    .arg(&what)
                    .arg(&out),
                o,
                if what == "tcc@search" {
                    o.search_timeout.min(o.timeout)
                } else {
                    o.timeout
                },
            );
            if s.killed.is_none() {
                let line = fs::read_to_string(&out).unwrap_or_default();
                let f: Vec<&str> = line.split_whitespace().collect();
                if code == 0 && f.len() == 12 {
                    let n = |i: usize| f[i].parse().ok();
                    s.load_wall = n(0);
                    s.load_cpu = n(1);
                    s.check_wall = n(2);
                    s.check_cpu = n(3);
                    s.verdict = f[4].to_string();
                    // The child's own high-water mark, exact.
                    s.rss_kb = f[5].parse().unwrap_or(s.rss_kb);
                    s.counts = f[6].parse().ok().zip(f[7].parse().ok());
                    let stage = |i: usize| f[8 + i].parse::<f64>().ok();
                    s.stages = (0..4)
                        .map(stage)
                        .collect::<Option<Vec<f64>>>()
                        .and_then(|v| v.try_into().ok());
                } else {
                    s.verdict = format!("error (exit {code})");
                }
            }
            s
        }
        Job::Cli { model } | Job::Folder { model } => {
            let mut cmd = Command::new(elle_si_bin());
            cmd.arg("check").arg("-c").arg(model);
            let folder = p.edn.with_extension("elle");
            if matches!(job, Job::Folder { .. }) {
                let _ = fs::remove_dir_all(&folder);
                cmd.arg("-d").arg(&folder);
            }
            match &p.dbcop_dir {
                Some(d) => cmd.arg("-f").arg("dbcop-json").arg(d.join("history.json")),
                None => cmd.arg(&p.edn),
            };
            let (mut s, code) = measure(&mut cmd, o, o.timeout);
            s.verdict = match code {
                0 => "valid".into(),
                1 => "invalid".into(),
                2 => "unknown".into(),
                c => format!("error (exit {c})"),
            };
            s
        }
        Job::Dbcop { level } => {
            let bin = o.dbcop.as_ref().expect("--dbcop");
            let d = p.dbcop_dir.as_ref().expect("dbcop dir");
            let (mut s, code) = measure(
                Command::new(bin)
                    .arg("verify")
                    .arg("--consistency")
                    .arg(level)
                    .arg("--input-dir")
                    .arg(d)
                    .stderr(Stdio::null()),
                o,
                o.timeout,
            );
            s.verdict = match code {
                0 => "valid".into(),
                1 => "invalid".into(),
                c => format!("error (exit {c})"),
            };
            s
        }
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

fn fmt_pair(w: Option<f64>, c: Option<f64>) -> String {
    match (w, c) {
        (Some(w), Some(c)) => format!("{w:.3} / {c:.3}"),
        _ => "-".into(),
    }
}

/// A job's figures over its runs: medians, the largest peak memory.
struct Row {
    load: (Option<f64>, Option<f64>),
    check: (Option<f64>, Option<f64>),
    process: (Option<f64>, Option<f64>),
    rss_kb: u64,
    /// Median seconds per stage: build, prune, solve, explain.
    stages: Option<[f64; 4]>,
    verdict: String,
}

impl Row {
    fn of(samples: &[Sample]) -> Row {
        let m = |f: &dyn Fn(&Sample) -> Option<f64>| median(samples.iter().filter_map(f).collect());
        let mut verdicts: Vec<String> = samples.iter().map(|s| s.verdict.clone()).collect();
        verdicts.dedup();
        let verdict = match samples.iter().find_map(|s| s.killed) {
            Some(k) => format!(
                "killed ({k}) after {:.0} s",
                samples.last().map_or(0.0, |s| s.wall)
            ),
            None => verdicts.join("/"),
        };
        let stage = |i: usize| m(&|s| s.stages.map(|st| st[i]));
        Row {
            load: (m(&|s| s.load_wall), m(&|s| s.load_cpu)),
            check: (m(&|s| s.check_wall), m(&|s| s.check_cpu)),
            process: (m(&|s| Some(s.wall)), m(&|s| Some(s.cpu))),
            rss_kb: samples.iter().map(|s| s.rss_kb).max().unwrap_or(0),
            stages: (0..4)
                .map(stage)
                .collect::<Option<Vec<f64>>>()
                .and_then(|v| v.try_into().ok()),
            verdict,
        }
    }

    fn rss_mb(&self) -> f64 {
        self.rss_kb as f64 / 1024.0
    }

    /// The stages' shares of the check's wall time, and what is in none.
    fn shares(&self) -> String {
        let (Some(st), Some(total)) = (self.stages, self.check.0) else {
            return "-".into();
        };
        if total <= 0.0 {
            return "-".into();
        }
        let pct = |x: f64| format!("{:.0}", 100.0 * x / total);
        let other = (total - st.iter().sum::<f64>()).max(0.0);
        format!(
            "{} / {} / {} / {} / {}",
            pct(st[0]),
            pct(st[1]),
            pct(st[2]),
            pct(st[3]),
            pct(other)
        )
    }
}

/// How many times a config's jobs run: `--runs`, except that the
/// `invalid` group's heavy rows run once unless `--runs` is given.
fn runs_for(c: &Config, o: &Opts) -> usize {
    if c.group == "invalid" && !o.runs_given {
        1
    } else {
        o.runs
    }
}

fn print_header(group: &str) {
    if group == "invalid" {
        println!(
            "| config | txns (committed) | MB | level | verdict | process wall / cpu | peak RSS MB | check wall | build / prune / solve / explain / other % | valid counterpart: process wall / cpu, RSS MB | invalid / valid: cpu, RSS |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
    } else {
        println!(
            "| config | txns | mops | MB | level | load wall / cpu | check wall / cpu | process wall / cpu | peak RSS MB | verdict |"
        );
        println!("|---|---|---|---|---|---|---|---|---|---|");
    }
}

fn txns(p: &Prepared) -> String {
    p.counts.map_or("-".into(), |c| c.0.to_string())
}

fn print_row(c: &Config, p: &Prepared, label: &str, r: &Row) {
    println!(
        "| {} | {} | {} | {:.1} | {} | {} | {} | {} | {:.0} | {} |",
        c.name,
        txns(p),
        p.counts.map_or("-".into(), |c| c.1.to_string()),
        p.bytes as f64 / 1e6,
        label,
        fmt_pair(r.load.0, r.load.1),
        fmt_pair(r.check.0, r.check.1),
        fmt_pair(r.process.0, r.process.1),
        r.rss_mb(),
        r.verdict
    );
}

/// An `invalid` row: its stage shares and, once measured, its valid
/// counterpart (config name and row) and the ratios to it.
fn print_invalid_row(
    c: &Config,
    p: &Prepared,
    label: &str,
    r: &Row,
    counterpart: Option<(&str, &Row)>,
) {
    let (valid, ratio) = match counterpart {
        Some((name, v)) => (
            format!(
                "{name}: {}, {:.0}",
                fmt_pair(v.process.0, v.process.1),
                v.rss_mb()
            ),
            match (r.process.1, v.process.1) {
                (Some(a), Some(b)) if b > 0.0 && v.verdict == "valid" => {
                    // A row killed at a limit cost at least this much.
                    let at_least = if r.verdict.starts_with("killed") {
                        ">= "
                    } else {
                        ""
                    };
                    format!("{at_least}{:.1}x, {:.1}x", a / b, r.rss_mb() / v.rss_mb())
                }
                _ => format!("- (counterpart {})", v.verdict),
            },
        ),
        None if c.valid.is_empty() => ("(this is one)".into(), "-".into()),
        None => ("not measured".into(), "-".into()),
    };
    // The counterparts of a store that commits everything may commit far
    // fewer (the serializable store aborts most of a zipf shape): said
    // beside the size, since the ratio compares the two.
    let size = match p.committed {
        Some(ok) => format!("{} ({ok})", txns(p)),
        None => txns(p),
    };
    println!(
        "| {} | {} | {:.1} | {} | {} | {} | {:.0} | {} | {} | {} | {} |",
        c.name,
        size,
        p.bytes as f64 / 1e6,
        label,
        r.verdict,
        fmt_pair(r.process.0, r.process.1),
        r.rss_mb(),
        r.check.0.map_or("-".into(), |w| format!("{w:.3}")),
        r.shares(),
        valid,
        ratio
    );
}

/// The configs and jobs the filters select (`group/config/level`
/// substrings), with the valid counterparts of the `invalid` rows selected.
fn select(all: Vec<Config>, o: &Opts) -> Vec<(Config, Vec<Job>)> {
    let id = |c: &Config, level: &str| format!("{}/{}/{level}", c.group, c.name);
    let chosen = |id: &str| o.filter.is_empty() || o.filter.iter().any(|f| id.contains(f.as_str()));
    let counterparts: Vec<String> = all
        .iter()
        .flat_map(|c| {
            c.valid
                .iter()
                .filter(|(l, _)| chosen(&id(c, l)))
                .map(|(l, name)| format!("{}/{name}/{l}", c.group))
        })
        .collect();
    all.into_iter()
        .filter(|c| c.group != "scale" || o.scale)
        .filter_map(|c| {
            let jobs: Vec<Job> = c
                .jobs
                .iter()
                .filter(|j| {
                    let id = id(&c, &j.label());
                    chosen(&id) || counterparts.contains(&id)
                })
                .cloned()
                .collect();
            (!jobs.is_empty()).then_some((c, jobs))
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        std::process::exit(child(&args[1..]));
    }
    // `cargo test --all-targets` runs bench binaries without `--bench`: the
    // harness is for `cargo bench`, and its runs take minutes.
    if !args.iter().any(|a| a == "--bench") {
        println!("checkers: run with `cargo bench --bench checkers`");
        return;
    }
    let o = parse_opts(&args);
    let selected = select(configs(&o), &o);
    if o.list {
        for (c, jobs) in &selected {
            for j in jobs {
                println!("{}/{}/{}", c.group, c.name, j.label());
            }
        }
        return;
    }
    let dir = std::env::temp_dir().join(format!("elle-si-checkers-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    println!(
        "runs per figure: {}{} (medians; peak RSS: the largest); times in seconds, wall / CPU (user + system)\n",
        o.runs,
        if o.runs_given {
            ""
        } else {
            " (the invalid group: 1)"
        }
    );
    let mut group = "";
    // Rows measured so far, by `config/level`: the invalid rows' counterparts.
    let mut rows: HashMap<String, Row> = HashMap::new();
    for (c, jobs) in &selected {
        if c.group != group {
            group = c.group;
            println!("\n### {group}\n");
            print_header(group);
        }
        eprintln!("{}/{}", c.group, c.name);
        let needs_dbcop = jobs.iter().any(|j| matches!(j, Job::Dbcop { .. }));
        let mut p = prepare(c, &dir, needs_dbcop);
        for job in jobs {
            let mut samples: Vec<Sample> = Vec::new();
            for _ in 0..runs_for(c, &o) {
                let s = run_job(job, &p, &dir, &o);
                p.counts = p.counts.or(s.counts);
                let stop = s.killed.is_some();
                samples.push(s);
                if stop {
                    break;
                }
            }
            let row = Row::of(&samples);
            let label = job.label();
            if c.group == "invalid" {
                let counterpart = c
                    .valid
                    .iter()
                    .find(|(l, _)| *l == label)
                    .and_then(|(l, name)| Some((name.as_str(), rows.get(&format!("{name}/{l}"))?)));
                print_invalid_row(c, &p, &label, &row, counterpart);
            } else {
                print_row(c, &p, &label, &row);
            }
            rows.insert(format!("{}/{label}", c.name), row);
        }
        if !o.keep && matches!(c.input, Input::Gen(_)) {
            let _ = fs::remove_file(&p.edn);
        }
    }
    println!(
        "\nThis process held {:.0} MB when it started children: a floor under the CLI and dbcop peak figures (the library rows give the child's own VmHWM).",
        status_kb("self", "VmRSS:") as f64 / 1024.0
    );
    if o.keep {
        eprintln!("histories kept in {}", dir.display());
    } else {
        let _ = fs::remove_dir_all(&dir);
    }
}
