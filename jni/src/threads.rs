//! The bridge's threads: every check the JVM asks for runs inside a rayon
//! pool of exactly the size its `:threads` option asks (by default, as the
//! command line, one thread per core), never on rayon's global pool.
//!
//! A pool is built once per size and kept, so the checks of one JVM share
//! it: Jepsen's `checker/compose` runs its checkers under `pmap`, and each
//! call building its own pool would multiply the threads by the number of
//! checkers; sharing one pool of the cores' size keeps the native checking
//! threads at the cores however many checks run at once (they queue for
//! its threads). At most [`KEPT_POOLS`] sizes are kept; asking for another
//! drops the least recently used, whose threads end when the checks inside
//! it are done.
//!
//! The streamed check's decoding thread (`stream`) is not in the pool: it
//! waits on the JVM's chunks, and a pool thread blocked there could keep
//! the pool's other checks waiting behind a JVM thread.

use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

/// The largest `:threads` taken: more is a typo, not a machine.
pub const MAX_THREADS: usize = 1024;

/// How many pools (of distinct sizes) are kept built.
pub const KEPT_POOLS: usize = 4;

/// The pools built, the most recently used last.
static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());

/// The default size: one thread per core, as the command line's `-j`.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The name of the pool threads of a pool of `n`: `elle-si-<n>t-<i>`.
pub fn thread_name(n: usize, i: usize) -> String {
    format!("elle-si-{n}t-{i}")
}

/// The pool of `n` threads, built on first use.
fn pool(n: usize) -> Result<Arc<ThreadPool>, String> {
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(at) = pools.iter().position(|(size, _)| *size == n) {
        let entry = pools.remove(at);
        let p = entry.1.clone();
        pools.push(entry);
        return Ok(p);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(move |i| thread_name(n, i))
        .build()
        .map_err(|e| format!("elle-si: cannot start {n} threads: {e}"))?;
    let p = Arc::new(p);
    if pools.len() >= KEPT_POOLS {
        pools.remove(0);
    }
    pools.push((n, p.clone()));
    Ok(p)
}

/// Runs `f` inside the pool of `threads` threads (None: [`default_threads`]);
/// the calling (JVM) thread waits for it.
pub fn run<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    let p = pool(threads.unwrap_or_else(default_threads))?;
    Ok(p.install(f))
}
