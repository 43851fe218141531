//! Helpers shared by the integration tests: loading a history (the one
//! [`load`] and [`load_bytes`]), the shared corpus ([`corpus`], [`shared`]),
//! checking at a model, and running the CLI. Beside them, the larger
//! helpers of a few suites: [`oracle`] (the brute-force oracle), [`prop`]
//! (the property tests' strategies), [`generated`] (the dependency graph of
//! a generated history) and [`mutant`] (semantic mutants, which the fuzz
//! target includes by path, so it uses nothing of this module).
#![allow(dead_code)]

pub mod generated;
pub mod mutant;
pub mod oracle;
pub mod prop;

use std::path::{Path, PathBuf};

use elle_si::check::{self, CheckOptions};
use elle_si::history::{self, Format, LoadOptions, Loaded};
use elle_si::report::{CheckResult, Valid};

/// The repository's root, where `test-logs/`, `tests/` and `src/` are
/// (this test binary belongs to the cli/ crate, whose directory is the
/// working directory cargo runs it in).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ is inside the repository")
}

/// A path under the repository's root, as text (for a command's arguments).
pub fn at(rel: &str) -> String {
    root().join(rel).display().to_string()
}

/// The `elle-si` binary, run in the repository's root: the paths the tests
/// give it (`test-logs/...`, `../shared/histories/...`) are relative to it.
pub fn cli() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_elle-si"));
    c.current_dir(root());
    c
}

/// A file under the shared data folder beside the checkout. Tests that
/// read it first ask [`corpus`] whether it is there.
pub fn shared(rel: &str) -> PathBuf {
    corpus_root().join(rel)
}

fn corpus_root() -> PathBuf {
    root().join("../shared/histories")
}

/// Whether the shared corpus (`../shared/histories`, beside the checkout)
/// is there. A clone without it skips the tests that read it: this says so
/// once a run, on the terminal (past the harness's capture).
/// CI, which has the corpus, sets `ELLE_SI_REQUIRE_CORPUS=1`: there its
/// absence fails the test instead of skipping it.
pub fn corpus() -> bool {
    use std::io::Write;
    use std::sync::Once;
    static SAID: Once = Once::new();
    let root = corpus_root();
    if root.is_dir() {
        return true;
    }
    if std::env::var_os("ELLE_SI_REQUIRE_CORPUS").is_some_and(|v| !v.is_empty() && v != "0") {
        panic!(
            "ELLE_SI_REQUIRE_CORPUS is set but the shared corpus is missing at {}",
            root.display()
        );
    }
    SAID.call_once(|| {
        // Straight to the file descriptor: the test harness captures only
        // the print macros.
        let _ = writeln!(
            std::io::stderr(),
            "note: {} is absent (it sits beside the checkout in CI): the tests that read it are skipped",
            root.display()
        );
    });
    false
}

/// The history in the file (or store directory) at `path`, read with the
/// default options; a test fails, naming the file, if it does not load.
pub fn load(path: &Path) -> Loaded {
    history::load(path, LoadOptions::default(), None)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The history in `bytes`, read as a file named `name` (whose extension may
/// tell the format) with `opts`; a test fails if it does not load.
pub fn load_bytes(name: &str, bytes: Vec<u8>, opts: LoadOptions) -> Loaded {
    history::load_bytes(name, bytes, opts).unwrap_or_else(|e| panic!("{name} does not load: {e}"))
}

/// [`load_bytes`] of a text with the default options.
pub fn load_str(name: &str, text: &str) -> Loaded {
    load_bytes(name, text.as_bytes().to_vec(), LoadOptions::default())
}

/// [`load_bytes`] of a generated history written in `format`.
pub fn load_generated(bytes: Vec<u8>, format: Format) -> Loaded {
    let name = match format {
        Format::Text => "gen.txt",
        _ => "gen.edn",
    };
    load_bytes(name, bytes, LoadOptions::default())
}

pub fn check_models(l: &Loaded, models: &str) -> CheckResult {
    let models = check::resolve_models(&[models.to_string()]).unwrap_or_else(|e| panic!("{e}"));
    check::check(
        l,
        &CheckOptions {
            models,
            timeout: None,
            anomalies: Vec::new(),
        },
    )
}

/// Verdict and anomaly types at a model.
pub fn verdict(l: &Loaded, model: &str) -> (Valid, Vec<String>) {
    let r = check_models(l, model);
    (r.valid, r.anomaly_types)
}

/// The C4 patterns named in a result.
pub fn patterns(r: &CheckResult) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = r
        .anomalies
        .values()
        .flatten()
        .filter_map(|a| a.pattern.map(|p| p.name()))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// How a child process ended ([`run_guarded`]).
#[cfg(unix)]
#[derive(Debug)]
pub struct Ran {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Killed at the wall-clock limit it was given.
    pub hung: bool,
    /// CPU time (user + system), its own.
    pub cpu: std::time::Duration,
    /// Wall time, spawn to reaping.
    pub wall: std::time::Duration,
    /// Its peak resident set, in KiB.
    pub max_rss_kib: u64,
    /// Files holding its stdout and stderr (the caller removes them).
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// Runs `cmd` with its stdout and stderr going to files (a pipe would have
/// to be drained while it runs, and a result may be large), reaped by
/// `wait4` for its own CPU time and peak memory; past `limit` of wall time
/// (a hang guard, never a test's bound) it is killed.
#[cfg(unix)]
pub fn run_guarded(cmd: &mut std::process::Command, limit: Option<std::time::Duration>) -> Ran {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    static N: AtomicUsize = AtomicUsize::new(0);
    let base = std::env::temp_dir().join(format!(
        "elle-si-run-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let (out, err) = (base.with_extension("out"), base.with_extension("err"));
    let file = |p: &std::path::Path| std::fs::File::create(p).expect("output file");
    let started = Instant::now();
    let mut child = cmd
        .stdout(file(&out))
        .stderr(file(&err))
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut hung = false;
    loop {
        let flags = if limit.is_some() { libc::WNOHANG } else { 0 };
        // SAFETY: pid is our child, not reaped yet; the pointers are to
        // live locals.
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if r == pid {
            break;
        }
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        assert_eq!(r, 0, "wait4");
        if limit.is_some_and(|l| started.elapsed() > l) && !hung {
            hung = true;
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = started.elapsed();
    // Reaped above: the handle must not wait again.
    std::mem::forget(child);
    let tv =
        |t: libc::timeval| Duration::from_micros(t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64);
    Ran {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
        hung,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        wall,
        max_rss_kib: ru.ru_maxrss.max(0) as u64,
        stdout: out,
        stderr: err,
    }
}

/// Runs `cmd` and returns its exit code, the CPU time (user + system) it
/// used, its own (`wait4`), and its stderr then stdout: CPU time is what
/// tests bound instead of wall time, which a shared host stretches.
#[cfg(unix)]
pub fn cpu_of(cmd: &mut std::process::Command) -> (Option<i32>, std::time::Duration, String) {
    let ran = run_guarded(cmd, None);
    let text = [&ran.stderr, &ran.stdout]
        .iter()
        .map(|p| {
            let t = std::fs::read_to_string(p).unwrap_or_default();
            let _ = std::fs::remove_file(p);
            t
        })
        .collect();
    (ran.code, ran.cpu, text)
}

/// Writes `elle-si gen ARGS`'s history to `out`.
pub fn generate(out: &std::path::Path, args: &[&str]) {
    let run = cli()
        .arg("gen")
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .expect("running elle-si gen");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Runs `elle-si ARGS FILE` on `text` written to a file of its own (named
/// like `name`, whose extension may tell the format): its exit code, and
/// its stdout then stderr. A file per call: tests run at once.
pub fn run_on(name: &str, text: &str, args: &[&str]) -> (i32, String) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("elle-si-run-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write history");
    let out = cli().args(args).arg(&path).output().expect("run elle-si");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// A Jepsen EDN history of transactions `(process, completed micro-ops)`
/// whose events come in `order`: `('i', t)` invokes transaction `t` (its
/// reads unknown: nil), `('c', t)` completes it (:ok), `:index` by position.
pub fn timed(txns: &[(u32, &str)], order: &[(char, usize)]) -> String {
    let mut out = String::new();
    for (index, &(e, t)) in order.iter().enumerate() {
        let (p, done) = txns[t];
        let (ty, value) = if e == 'i' {
            ("invoke", unread(done))
        } else {
            ("ok", done.to_string())
        };
        out += &format!("{{:index {index} :type :{ty} :process {p} :f :txn :value {value}}}\n");
    }
    out
}

/// Micro-ops in EDN with each read's value nil, as an invocation has them.
fn unread(mops: &str) -> String {
    let mut out = String::new();
    let mut rest = mops;
    while let Some(i) = rest.find("[:r ") {
        out += &rest[..i];
        // The read's end: its bracket's match.
        let mut depth = 0;
        let mut end = rest.len();
        for (j, c) in rest[i..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let key = rest[i..end].split_whitespace().nth(1).unwrap_or("");
        out += &format!("[:r {key} nil");
        rest = &rest[end..];
    }
    out + rest
}
