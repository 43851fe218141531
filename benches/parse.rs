//! Reading + compiling speed and peak memory on a list-append history (a
//! plain binary, not criterion: one 100 MB pass is the measure, and
//! criterion's repeated sampling of it would take minutes and its
//! statistics add nothing to a throughput figure with a few % of noise).
//!
//! `cargo bench --bench parse` writes a ~100 MB history with the project's
//! generator (`elle-si gen`'s defaults: its serializable store, 25
//! sessions, 20 micro-ops per transaction, half reads, 10k uniform keys;
//! only the number of transactions is chosen, to reach the size) to the
//! temp directory, then loads it with `elle_si::history::load`
//! (memory-mapped) and prints MB/s and the peak resident memory (VmHWM)
//! against the compiled history's size. `PARSE_HISTORY=synthetic` writes
//! instead the simpler history earlier figures were taken on (every
//! transaction committed, no aborts). `cargo test` runs it on 1 MB as a
//! smoke test. Size with `PARSE_MB=N`; `PARSE_FILE=path` reads that file
//! (generating it there first if it does not exist), and `PARSE_REPEAT=N`
//! repeats the load (for profilers). `PARSE_THREADS=1,2` loads it inside a
//! rayon pool of each of those sizes in turn (default: 1 and the cores),
//! where a file over `PARALLEL_FROM` is read in pieces on the pool; CPU
//! is then the whole process's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use elle_si::generator::{GenOptions, generate_to};
use elle_si::history::{History, LoadOptions, load};

/// A small xorshift generator: the history only needs to look random.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const PROCESSES: usize = 25;
const KEYS: u64 = 10_000;
const MOPS: usize = 20;

enum Mop {
    Append(u64, u64),
    Read(u64),
}

/// Counts what is written, and keeps none of it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn gen_options(txns_per_session: u32) -> GenOptions {
    GenOptions {
        txns_per_session,
        seed: 7,
        ..GenOptions::default()
    }
}

fn gen_bytes(txns_per_session: u32) -> std::io::Result<u64> {
    let mut count = Count(0);
    generate_to(&gen_options(txns_per_session), &mut count).map_err(std::io::Error::other)?;
    Ok(count.0)
}

/// Writes the generator's list-append history of about `target` bytes.
/// Reads return whole lists, which grow as the history does, so the size
/// is about `a n + b n^2` in the transactions per session `n`: `n` doubles
/// until the size passes the target, then the curve through the last two
/// sizes gives it.
fn generate_gen(path: &Path, target: u64) -> std::io::Result<u64> {
    let (mut n, mut size) = (4u32, gen_bytes(4)?);
    let (mut m, mut prev) = (0u32, 0u64);
    while size < target && n < 1 << 24 {
        (m, prev) = (n, size);
        n *= 2;
        size = gen_bytes(n)?;
    }
    let pick = if m == 0 {
        n
    } else {
        // s(x) = a x + b x^2 through (m, prev) and (n, size).
        let (x1, y1, x2, y2) = (f64::from(m), prev as f64, f64::from(n), size as f64);
        let b = (y2 / x2 - y1 / x1) / (x2 - x1);
        let a = y1 / x1 - b * x1;
        let t = target as f64;
        let x = if b > 0.0 {
            (-a + (a * a + 4.0 * b * t).sqrt()) / (2.0 * b)
        } else {
            t / a
        };
        (x.round() as u32).clamp(m, n)
    };
    let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    generate_to(&gen_options(pick), out).map_err(std::io::Error::other)?;
    Ok(std::fs::metadata(path)?.len())
}

/// Writes a synthetic list-append history of about `target` bytes (every
/// transaction committed, reads of growing lists over 10k keys), one op
/// per line as Jepsen does, streaming (so the generator's memory is small).
fn generate(path: &Path, target: u64) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut lists: Vec<Vec<u64>> = vec![Vec::new(); KEYS as usize];
    let mut next: Vec<u64> = vec![0; KEYS as usize];
    let mut pending: Vec<Option<Vec<Mop>>> = (0..PROCESSES).map(|_| None).collect();
    let mut written = 0u64;
    let mut index = 0u64;
    let mut time = 1_000_000u64;
    let mut line = String::with_capacity(4096);
    while written < target || pending.iter().any(Option::is_some) {
        let p = rng.below(PROCESSES as u64) as usize;
        line.clear();
        time += 1 + rng.below(100_000);
        match pending[p].take() {
            None if written < target => {
                let txn: Vec<Mop> = (0..MOPS)
                    .map(|_| {
                        let k = rng.below(KEYS);
                        if rng.below(2) == 0 {
                            Mop::Read(k)
                        } else {
                            // As Jepsen does: 1, 2, 3, ... per key.
                            next[k as usize] += 1;
                            Mop::Append(k, next[k as usize])
                        }
                    })
                    .collect();
                line.push_str("{:type :invoke, :f :txn, :value [");
                for (i, m) in txn.iter().enumerate() {
                    if i > 0 {
                        line.push(' ');
                    }
                    match m {
                        Mop::Append(k, v) => line.push_str(&format!("[:append {k} {v}]")),
                        Mop::Read(k) => line.push_str(&format!("[:r {k} nil]")),
                    }
                }
                line.push_str(&format!(
                    "], :time {time}, :process {p}, :index {index}}}\n"
                ));
                pending[p] = Some(txn);
            }
            None => continue,
            Some(txn) => {
                // Takes effect at completion: reads see every append so far.
                line.push_str("{:type :ok, :f :txn, :value [");
                for (i, m) in txn.iter().enumerate() {
                    if i > 0 {
                        line.push(' ');
                    }
                    match *m {
                        Mop::Append(k, v) => {
                            lists[k as usize].push(v);
                            line.push_str(&format!("[:append {k} {v}]"));
                        }
                        Mop::Read(k) => {
                            let l = &lists[k as usize];
                            if l.is_empty() {
                                line.push_str(&format!("[:r {k} nil]"));
                            } else {
                                line.push_str(&format!("[:r {k} ["));
                                for (j, e) in l.iter().enumerate() {
                                    if j > 0 {
                                        line.push(' ');
                                    }
                                    line.push_str(&e.to_string());
                                }
                                line.push_str("]]");
                            }
                        }
                    }
                }
                line.push_str(&format!(
                    "], :time {time}, :process {p}, :index {index}}}\n"
                ));
            }
        }
        index += 1;
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
    }
    out.flush()?;
    Ok(written)
}

/// Nanoseconds the whole process (every thread) has run on a CPU, from
/// /proc/self/stat's utime and stime (clock ticks, taken as 100 a second).
fn process_cpu_ns() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis, from the 3rd
    // (state) on: utime and stime are the 14th and 15th.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    (tick(14 - 3) + tick(15 - 3)) * 10_000_000
}

fn status_kb(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Resets VmHWM to the current RSS (Linux 4.0+), so the peak measured is
/// the load's, not the generator's.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Bytes the compiled history holds, from its vectors' capacities (the
/// interned-value table is left out: list-append values are inline ints).
fn history_bytes(h: &History) -> usize {
    use elle_si::history::model::{Mop, Session, Txn, VersionOrder};
    use std::mem::size_of;
    let mut n = h.txns.capacity() * size_of::<Txn>()
        + h.mops.capacity() * size_of::<Mop>()
        + h.keys.capacity() * 8
        + h.sessions.capacity() * size_of::<Session>()
        + h.orders.capacity() * size_of::<VersionOrder>();
    for s in &h.sessions {
        n += s.txns.capacity() * 4;
    }
    for o in &h.orders {
        n += o.elems.capacity() * 8 + o.writes.capacity() * 4 + o.unobserved.capacity() * 4;
    }
    for v in h.irregular.values() {
        n += v.capacity() * 8 + 32;
    }
    n
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let mb: u64 = std::env::var("PARSE_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if bench { 100 } else { 1 });
    let repeat: usize = std::env::var("PARSE_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let (path, generated) = match std::env::var("PARSE_FILE") {
        Ok(p) if Path::new(&p).exists() => (PathBuf::from(p), false),
        given => {
            let keep = given.is_ok();
            let path = given.map(PathBuf::from).unwrap_or_else(|_| {
                std::env::temp_dir()
                    .join(format!("elle-si-bench-{}-{mb}mb.edn", std::process::id()))
            });
            let t = Instant::now();
            let n = if std::env::var("PARSE_HISTORY").is_ok_and(|v| v == "synthetic") {
                generate(&path, mb << 20)
            } else {
                generate_gen(&path, mb << 20)
            }
            .expect("writing the history");
            eprintln!(
                "generated {:.1} MB in {:.1} s: {}",
                n as f64 / 1e6,
                t.elapsed().as_secs_f64(),
                path.display()
            );
            (path, !keep)
        }
    };
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    // Warm the page cache so the figure is parsing, not the disk.
    let _ = std::fs::read(&path).map(|b| b.len());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: Vec<usize> = std::env::var("PARSE_THREADS")
        .ok()
        .map(|s| s.split(',').filter_map(|t| t.trim().parse().ok()).collect())
        .unwrap_or_else(|| if cores > 1 { vec![1, cores] } else { vec![1] });
    for (j, _) in threads
        .iter()
        .flat_map(|&j| (0..repeat).map(move |r| (j, r)))
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(j)
            .build()
            .expect("a pool");
        reset_peak();
        let base = status_kb("VmRSS:");
        let t = Instant::now();
        let c = process_cpu_ns();
        let loaded = pool
            .install(|| load(&path, LoadOptions::default(), None))
            .expect("loading the history");
        let secs = t.elapsed().as_secs_f64();
        let cpu = (process_cpu_ns() - c) as f64 / 1e9;
        let peak = status_kb("VmHWM:");
        let h = &loaded.history;
        let hb = history_bytes(h);
        println!(
            "parse -j {j}: {:.1} MB in {:.3} s = {:.0} MB/s ({:.3} s on CPU = {:.0} MB/s); {} txns, {} mops, {} keys",
            size as f64 / 1e6,
            secs,
            size as f64 / 1e6 / secs,
            cpu,
            size as f64 / 1e6 / cpu,
            h.txns.len(),
            h.mops.len(),
            h.keys.len()
        );
        println!(
            "memory: peak RSS during load {:.1} MB (+{:.1} MB over the {:.1} MB before it); compiled history ~{:.1} MB",
            peak as f64 / 1024.0,
            peak.saturating_sub(base) as f64 / 1024.0,
            base as f64 / 1024.0,
            hb as f64 / 1e6
        );
        assert!(!h.txns.is_empty() || std::env::var_os("NOBUILD").is_some());
    }
    if generated {
        let _ = std::fs::remove_file(&path);
    }
}
