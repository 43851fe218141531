//! What the bench binaries share (each includes this file as a module):
//! running one measurement as a child process with limits, so that its
//! CPU time and peak resident memory (from `wait4`) are its own; the
//! `elle-si` release binary cargo built beside the bench; `/proc` status
//! fields; writing a generated history to a file.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use elle_si::generator::{GenOptions, Report, generate_to};

/// The `elle-si` binary cargo built beside this bench (the bench profile's,
/// so the release build).
pub fn elle_si_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_elle-si"))
}

/// A `/proc/PID/status` field in kB (0 if unreadable).
pub fn status_kb(pid: &str, field: &str) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// When a measured child is killed.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Wall time.
    pub timeout: Duration,
    /// Resident memory, in kB.
    pub max_rss_kb: u64,
}

/// One child process's figures.
#[derive(Clone, Debug)]
pub struct Measured {
    pub wall: f64,
    /// User + system seconds.
    pub cpu: f64,
    /// Peak resident memory (`ru_maxrss`), kB.
    pub rss_kb: u64,
    /// Why it was killed at a limit ("timeout" or "memory"), if it was.
    pub killed: Option<&'static str>,
    /// Its exit code; -1 when a signal ended it.
    pub code: i32,
}

/// Runs a command to its end (or kills it at the limits), its standard
/// output going to `stdout`; its wall time, CPU time, peak RSS and exit code.
pub fn measure(cmd: &mut Command, limits: Limits, stdout: Stdio) -> Measured {
    // A child's ru_maxrss starts from this process's peak (exec keeps the
    // high-water mark of the memory it replaces): reset ours to what we
    // hold now, which is small (histories are on disk, not here).
    let _ = fs::write("/proc/self/clear_refs", "5");
    let t0 = Instant::now();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .spawn()
        .expect("spawning a measurement");
    let pid = child.id() as i32;
    let done = Arc::new(AtomicBool::new(false));
    let killed: Arc<Mutex<Option<&'static str>>> = Arc::default();
    let watch = {
        let (done, killed) = (done.clone(), killed.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(50));
                let why = if t0.elapsed() > limits.timeout {
                    Some("timeout")
                } else if status_kb(&pid.to_string(), "VmRSS:") > limits.max_rss_kb {
                    Some("memory")
                } else {
                    None
                };
                if let Some(w) = why
                    && !done.load(Ordering::Acquire)
                {
                    *killed.lock().expect("lock") = Some(w);
                    // SAFETY: the child is not reaped yet (`done` is set
                    // only after wait4 returns), so the pid is still ours.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    return;
                }
            }
        })
    };
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child; the pointers are to live locals.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    done.store(true, Ordering::Release);
    let wall = t0.elapsed().as_secs_f64();
    let _ = watch.join();
    std::mem::forget(child);
    assert_eq!(r, pid, "wait4");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let killed = *killed.lock().expect("lock");
    Measured {
        wall,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        rss_kb: ru.ru_maxrss as u64,
        killed,
        code,
    }
}

/// Writes the history `g` describes to `path`, saying on stderr how long
/// it took and how many faults fired.
pub fn generate_file(g: &GenOptions, path: &Path) -> Report {
    let t = Instant::now();
    let f = fs::File::create(path).expect("creating the history file");
    let r = generate_to(g, std::io::BufWriter::with_capacity(1 << 20, f)).expect("generating");
    eprintln!(
        "  generated {} ({} txns, {} faults) in {:.1} s",
        path.display(),
        r.stats.txns,
        r.faults.len(),
        t.elapsed().as_secs_f64()
    );
    r
}
