//! Value-level fuzzing through the command line (issue 53): semantic
//! mutants (`support::mutant`: values respelled as bigints, doubles,
//! strings, keywords or nil, long and repeated list elements, processes
//! reused after an `:info`, and the rest of its mutations) written to a
//! file and checked by the real `elle-si check`, under a few models drawn
//! from every model it accepts, each output (text, `-o edn`, `-o json`,
//! sometimes `-d DIR` beside it) and a `--timeout`. Each run must exit
//! with a documented status (0-3: never a panic's 101 nor a signal), a
//! refusal must name the file, line and column, a result must read back
//! and agree with the exit status, a committed read of a value nobody
//! wrote must not pass, and stdout must stay within the README's bound:
//! 16 bytes of anomalies per byte of input plus 16 MiB
//! (`render::Bounds::for_input`), besides a frame of 64 KiB (as
//! `tests/it/output_bound.rs` allows). The `-d` folder is held to the same.
//!
//! The default run drives a handful of cases (the driver's own test); the
//! long run drives cases for `FUZZ_SECONDS` (default 60) from `FUZZ_SEED`
//! (default 53), and `FUZZ_CASE=n` replays one:
//!
//! ```sh
//! FUZZ_SECONDS=1800 nice -n 19 cargo test --release --test it fuzz_cli::cli_fuzz -- --ignored --nocapture
//! ```
//!
//! It also writes the mutants the JVM driver (`clj/bench/elle_si/fuzz.clj`,
//! `lein fuzz`) checks through JNI, one history file each:
//!
//! ```sh
//! FUZZ_MUTANTS=/tmp/mutants FUZZ_COUNT=20000 cargo test --release --test it fuzz_cli::write_mutants -- --ignored
//! ```
//!
//! A failing case's history and command are kept under
//! `$TMPDIR/elle-si-fuzz-cli/failures/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use elle_si::report::render::Bounds;
use elle_si::spec::Model;

use crate::support;
use crate::support::mutant::{Draw, Mutant, has_thin_air_read, mutant};

/// What a result may hold besides its bounded anomalies: `:valid?`, the
/// types, `:not`, the unknown reasons.
const FRAME: u64 = 64 << 10;

/// A run's wall-clock limit past its `--timeout`: a hang guard on a loaded
/// host, not a bound the run is held to.
const HANG: Duration = Duration::from_secs(180);

/// The bytes case `case` of run `seed` builds its mutant from (as the
/// property test's are drawn: up to 48).
fn case_bytes(seed: u64, case: u64) -> Vec<u8> {
    let key = [seed.to_le_bytes(), case.to_le_bytes()].concat();
    let mut d = Draw::new(&key);
    // Past the key itself, the draw is a generator seeded by it.
    for _ in 0..key.len() {
        d.byte();
    }
    let n = d.below(49);
    (0..n).map(|_| d.byte()).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Text,
    Edn,
    Json,
}

/// How a case is checked.
#[derive(Debug)]
struct Invocation {
    /// `-c`, when not empty (else the default, strict serializability).
    models: Vec<&'static str>,
    output: Output,
    timeout: f64,
    folder: bool,
    /// `-w`, when given.
    workload: Option<&'static str>,
}

fn invocation(d: &mut Draw) -> Invocation {
    let models = (0..d.below(4))
        .map(|_| Model::ALL[d.below(Model::ALL.len())].friendly())
        .collect();
    Invocation {
        models,
        output: [Output::Text, Output::Edn, Output::Json][d.below(3)],
        timeout: [0.5, 2.0, 2.0, 5.0][d.below(4)],
        folder: d.below(4) == 0,
        workload: [
            None,
            None,
            None,
            None,
            Some("list-append"),
            Some("rw-register"),
        ][d.below(6)],
    }
}

impl Invocation {
    fn args(&self, file: &Path, dir: &Path) -> Vec<String> {
        let mut a = vec!["check".to_string(), file.display().to_string()];
        if !self.models.is_empty() {
            a.extend(["-c".into(), self.models.join(",")]);
        }
        match self.output {
            Output::Text => {}
            Output::Edn => a.extend(["-o".into(), "edn".into()]),
            Output::Json => a.extend(["-o".into(), "json".into()]),
        }
        a.extend(["--timeout".into(), self.timeout.to_string()]);
        if self.folder {
            a.extend(["-d".into(), dir.display().to_string()]);
        }
        if let Some(w) = self.workload {
            a.extend(["-w".into(), w.into()]);
        }
        a
    }
}

/// What the runs so far saw.
#[derive(Debug, Default)]
struct Tally {
    cases: u64,
    /// Runs by exit status 0, 1, 2, 3.
    codes: [u64; 4],
    /// Refusals that name the whole file (an empty history), not a line.
    whole_file_errors: u64,
    /// Runs that reached a verdict, by the mutations their case holds.
    reached: std::collections::BTreeMap<String, u64>,
    /// Refusals by reason, its numbers left out.
    refusals: std::collections::BTreeMap<String, u64>,
    with_folder: u64,
    failures: Vec<String>,
    peak_rss_kib: u64,
    largest_input: usize,
    largest_output: u64,
    /// The largest share of its bound a run's stdout (or folder) took.
    most_of_bound: f64,
    /// Runs whose CPU time passed their timeout by more than 10% + 0.5 s.
    cpu_past_timeout: u64,
    most_cpu: Duration,
    elapsed: Duration,
}

impl Tally {
    /// The most frequent reasons for refusals.
    fn top_refusals(&self, n: usize) -> String {
        let mut v: Vec<(&String, &u64)> = self.refusals.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1));
        v.iter()
            .take(n)
            .map(|(r, k)| format!("  {k:6}  {r}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn summary(&self) -> String {
        format!(
            "{} runs in {:.0} s ({:.2} runs/s); exit 0/1/2/3: {:?} ({} refusals of the whole file); \
             {} with -d; {} failures; peak RSS {} MiB; largest input {} bytes, largest stdout {} bytes, \
             at most {:.3} of the bound; CPU past timeout x1.1 + 0.5 s: {} runs (most CPU {:.2} s)",
            self.cases,
            self.elapsed.as_secs_f64(),
            self.cases as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.codes,
            self.whole_file_errors,
            self.with_folder,
            self.failures.len(),
            self.peak_rss_kib >> 10,
            self.largest_input,
            self.largest_output,
            self.most_of_bound,
            self.cpu_past_timeout,
            self.most_cpu.as_secs_f64(),
        )
    }
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join("elle-si-fuzz-cli")
}

/// The bytes under `p`, a file or a folder.
fn size_of(p: &Path) -> u64 {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => std::fs::read_dir(p)
            .map(|es| es.flatten().map(|e| size_of(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// A refusal names the file and where in it (or, for an empty history,
/// the file alone); `Ok(true)` for the latter.
fn located(file: &str, output: Output, stdout: &[u8], stderr: &str) -> Result<bool, String> {
    if output == Output::Json {
        let v: serde_json::Value = serde_json::from_slice(stdout)
            .map_err(|e| format!("the JSON error does not parse: {e}"))?;
        let e = &v["error"];
        let whole = e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("empty history"));
        let at = e["line"].as_u64().is_some_and(|l| l >= 1)
            && e["column"].as_u64().is_some_and(|c| c >= 1);
        return if e["kind"] == "input" && e["file"] == file && (at || whole) {
            Ok(!at)
        } else {
            Err(format!("an error not located: {v}"))
        };
    }
    let first = stderr.lines().next().unwrap_or_default();
    let at = first
        .split_once(&format!("{file}:"))
        .map(|(_, rest)| {
            let mut p = rest.splitn(3, ':');
            let num = |s: Option<&str>| s.is_some_and(|s| s.parse::<u64>().is_ok_and(|n| n >= 1));
            num(p.next()) && num(p.next())
        })
        .unwrap_or(false);
    let whole = first.contains(&format!("{file}: empty history"));
    if at || whole {
        Ok(!at)
    } else {
        Err(format!("an error not located: {stderr}"))
    }
}

/// Why a run was refused, its numbers and the file left out (to count
/// refusals by kind).
fn reason(file: &str, stdout: &[u8], stderr: &str) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(stdout) {
        Ok(v) => v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        Err(_) => stderr.lines().next().unwrap_or_default().replace(file, ""),
    };
    let mut out = String::new();
    for c in text.chars().take(90) {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out.trim_start_matches([' ', '\u{d7}', ':', '#'])
        .to_string()
}

/// `:valid?` of a result, as the exit status it stands for.
fn verdict_code(output: Output, stdout: &[u8]) -> Result<Option<i32>, String> {
    match output {
        Output::Edn => {
            let v = elle_si::edn::read_one(stdout).map_err(|e| format!("EDN: {e:?}"))?;
            Ok(match v.get(&elle_si::edn::Value::keyword("valid?")) {
                Some(elle_si::edn::Value::Bool(true)) => Some(0),
                Some(elle_si::edn::Value::Bool(false)) => Some(1),
                Some(elle_si::edn::Value::Keyword(k)) if k == "unknown" => Some(2),
                _ => None,
            })
        }
        Output::Json => {
            let v: serde_json::Value =
                serde_json::from_slice(stdout).map_err(|e| format!("JSON: {e}"))?;
            Ok(match &v["valid?"] {
                serde_json::Value::Bool(true) => Some(0),
                serde_json::Value::Bool(false) => Some(1),
                serde_json::Value::String(s) if s == "unknown" => Some(2),
                _ => None,
            })
        }
        Output::Text => Ok(None),
    }
}

/// Checks one case through the binary; what broke, if anything.
fn run_case(m: &Mutant, inv: &Invocation, at: &Path, t: &mut Tally) -> Vec<String> {
    let text = m.edn();
    let file = at.join("case.edn");
    let dir = at.join("folder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::write(&file, &text).expect("write the case");
    let args = inv.args(&file, &dir);
    let limit = Duration::from_secs_f64(inv.timeout * 1.1) + HANG;
    let ran = support::run_guarded(crate::support::cli().args(&args), Some(limit));
    let mut bad = Vec::new();
    let out_len = size_of(&ran.stdout);
    let bound = Bounds::for_input(text.len(), None).bytes + FRAME;
    let folder = inv.folder.then(|| size_of(&dir));
    t.peak_rss_kib = t.peak_rss_kib.max(ran.max_rss_kib);
    t.largest_input = t.largest_input.max(text.len());
    t.largest_output = t.largest_output.max(out_len);
    t.most_of_bound = t
        .most_of_bound
        .max(out_len.max(folder.unwrap_or(0)) as f64 / bound as f64);
    t.most_cpu = t.most_cpu.max(ran.cpu);
    if ran.cpu > Duration::from_secs_f64(inv.timeout * 1.1 + 0.5) {
        t.cpu_past_timeout += 1;
    }
    if ran.hung {
        bad.push(format!("still running after {limit:?}: killed"));
    } else if let Some(s) = ran.signal {
        bad.push(format!("killed by signal {s}"));
    }
    if out_len > bound {
        bad.push(format!("stdout {out_len} bytes, over its bound {bound}"));
    }
    if let Some(n) = folder.filter(|&n| n > bound) {
        bad.push(format!("the -d folder {n} bytes, over its bound {bound}"));
    }
    // Small enough to read: the bound holds (else it was said above).
    let stdout = if out_len <= bound {
        std::fs::read(&ran.stdout).unwrap_or_default()
    } else {
        Vec::new()
    };
    let stderr = std::fs::read_to_string(&ran.stderr).unwrap_or_default();
    let name = file.display().to_string();
    match ran.code {
        Some(c @ 0..=3) => {
            t.codes[c as usize] += 1;
            if c < 3 {
                for mu in &m.mutations {
                    *t.reached.entry(format!("{mu:?}")).or_default() += 1;
                }
            }
        }
        Some(c) => bad.push(format!("exit status {c}")),
        None => {}
    }
    match ran.code {
        Some(3) => match located(&name, inv.output, &stdout, &stderr) {
            Ok(whole) => {
                t.whole_file_errors += whole as u64;
                *t.refusals
                    .entry(reason(&name, &stdout, &stderr))
                    .or_default() += 1;
            }
            Err(e) => bad.push(e),
        },
        Some(c @ 0..=2) if out_len <= bound => {
            match verdict_code(inv.output, &stdout) {
                Ok(Some(v)) if v != c => bad.push(format!("exit status {c}, :valid? says {v}")),
                Ok(None) if inv.output != Output::Text => bad.push("no :valid?".into()),
                Err(e) => bad.push(format!("the result does not read back: {e}")),
                Ok(_) => {}
            }
            if inv.output == Output::Text && !String::from_utf8_lossy(&stdout).starts_with(&name) {
                bad.push("the text report does not open with the file's name".into());
            }
            if c == 0 && has_thin_air_read(&m.ops) {
                bad.push("valid, with a committed read of a value nobody wrote".into());
            }
        }
        _ => {}
    }
    if !bad.is_empty() {
        let keep = scratch().join("failures");
        let _ = std::fs::create_dir_all(&keep);
        let n = t.failures.len();
        let kept = keep.join(format!("{}-{n}.edn", std::process::id()));
        let _ = std::fs::copy(&file, &kept);
        let why = format!(
            "{}: {:?}\n  elle-si {}\n  mutations {:?} after {:?}\n  stderr: {}",
            kept.display(),
            bad,
            args.join(" "),
            m.mutations,
            m.options,
            stderr.chars().take(2000).collect::<String>()
        );
        let _ = std::fs::write(kept.with_extension("txt"), &why);
        t.failures.push(why);
    }
    t.with_folder += inv.folder as u64;
    let _ = std::fs::remove_file(&ran.stdout);
    let _ = std::fs::remove_file(&ran.stderr);
    bad
}

fn env_u64(k: &str, default: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Cases from `seed` until `seconds` have passed or `max` cases ran.
fn fuzz(seed: u64, seconds: u64, max: u64, only: Option<u64>) -> Tally {
    let at = scratch().join(format!("{}", std::process::id()));
    std::fs::create_dir_all(&at).expect("scratch directory");
    let started = Instant::now();
    let mut t = Tally::default();
    let cases: Box<dyn Iterator<Item = u64>> = match only {
        Some(c) => Box::new(std::iter::once(c)),
        None => Box::new(0..max),
    };
    for case in cases {
        if started.elapsed() >= Duration::from_secs(seconds) {
            break;
        }
        let bytes = case_bytes(seed, case);
        let m = mutant(&bytes);
        let mut d = Draw::new(&bytes);
        for _ in 0..64 {
            d.byte();
        }
        let inv = invocation(&mut d);
        let bad = run_case(&m, &inv, &at, &mut t);
        if !bad.is_empty() {
            eprintln!(
                "case {case} (seed {seed}): {}",
                t.failures.last().map_or("", |s| s)
            );
        }
        t.cases += 1;
        if t.cases % 500 == 0 {
            t.elapsed = started.elapsed();
            eprintln!("{}", t.summary());
        }
    }
    t.elapsed = started.elapsed();
    let _ = std::fs::remove_dir_all(&at);
    eprintln!("refusals by reason:\n{}", t.top_refusals(25));
    eprintln!("runs reaching a verdict, by mutation: {:?}", t.reached);
    t
}

#[cfg(unix)]
#[test]
fn a_few_mutants_through_the_cli() {
    let t = fuzz(53, u64::MAX, 12, None);
    eprintln!("{}", t.summary());
    assert_eq!(t.cases, 12);
    assert!(t.failures.is_empty(), "{:#?}", t.failures);
    // The cases reach the checkers, not only the reader's refusals.
    assert!(t.codes[..3].iter().sum::<u64>() > 0, "{:?}", t.codes);
}

#[cfg(unix)]
#[test]
#[ignore = "long run: FUZZ_SECONDS=1800 cargo test --release --test it fuzz_cli::cli_fuzz -- --ignored --nocapture"]
fn cli_fuzz() {
    let only = std::env::var("FUZZ_CASE").ok().and_then(|c| c.parse().ok());
    let t = fuzz(
        env_u64("FUZZ_SEED", 53),
        env_u64("FUZZ_SECONDS", 60),
        u64::MAX,
        only,
    );
    eprintln!("{}", t.summary());
    assert!(t.failures.is_empty(), "{:#?}", t.failures);
}

/// The mutants for the JVM driver: `FUZZ_COUNT` (default 5,000) history
/// files in `FUZZ_MUTANTS`, from `FUZZ_SEED` (default 530), each
/// `<n>.edn`.
#[test]
#[ignore = "writes mutants for clj/bench/elle_si/fuzz.clj: FUZZ_MUTANTS=DIR cargo test --release --test it fuzz_cli::write_mutants -- --ignored"]
fn write_mutants() {
    let dir =
        PathBuf::from(std::env::var("FUZZ_MUTANTS").expect("FUZZ_MUTANTS: the folder to write"));
    std::fs::create_dir_all(&dir).expect("the mutants' folder");
    let seed = env_u64("FUZZ_SEED", 530);
    let count = env_u64("FUZZ_COUNT", 5_000);
    let mut bytes = 0;
    for case in 0..count {
        let m = mutant(&case_bytes(seed, case));
        let text = m.edn();
        bytes += text.len();
        std::fs::write(dir.join(format!("{case:06}.edn")), text).expect("write a mutant");
    }
    eprintln!("{count} mutants, {bytes} bytes, in {}", dir.display());
}
