//! What a check may spend: the run's deadline (the user's `--timeout`,
//! the only clock a check reads) and a bound in work done.
//!
//! Work is counted on a per-thread meter ([`spend`], [`spent`]) by the
//! loops that cost the time: the polygraph's build (edges and
//! constraints made), pruning (reachability words and constraints
//! examined), the solver's acyclicity theory (nodes its searches visit)
//! and its decisions. A strategy's limit is a mark on that meter
//! ([`Budget::within`]), as a deadline is a mark on the clock; whether a
//! strategy gives up then depends only on the input and the flags, never
//! on the host's load, so the same history gets the same verdict, the
//! same anomalies and the same output on an idle laptop and on a loaded
//! CI runner. The deadline may only stop a check (its verdict becomes
//! `:unknown`); it never changes which strategy decides.
//!
//! A unit of work is about one memory access of a graph walk: on this
//! project's machines about 150-300 million units a second (see
//! `docs/performance.md`). The checks of one thread share its meter;
//! marks are absolute, so nested limits are the nearer mark.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static SPENT: Cell<u64> = const { Cell::new(0) };
    /// The work each SI / serializability run on this thread may do, when
    /// [`runs_within`] bounds it (tests); none otherwise.
    static RUN_WORK: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Counts `units` of work done on this thread.
#[inline]
pub fn spend(units: u64) {
    SPENT.with(|s| s.set(s.get().wrapping_add(units)));
}

/// The work done on this thread so far.
#[inline]
pub fn spent() -> u64 {
    SPENT.with(Cell::get)
}

/// Whether `deadline` (`None`: none) has passed: the one place a check
/// reads the clock.
#[inline]
pub fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() > d)
}

/// Runs `f` with every SI / serializability run it starts on this thread
/// ([`Budget::for_run`]) bounded to `units` of work besides its deadline:
/// how a test makes the engine's work run out on a small history, which
/// its strategies' own marks never cut (`tests/it/unknown_reason.rs`).
/// Nothing else sets it; the bound is work, so the same `units` give the
/// same outcome on every host.
pub fn runs_within<T>(units: u64, f: impl FnOnce() -> T) -> T {
    run_bound(Some(units), f)
}

/// Runs `a` and `b` side by side on rayon's pool (`rayon::join`), each
/// under the [`runs_within`] bound of the calling thread: the pool's
/// threads are not the caller's, and would otherwise run unbounded (or
/// under the bound of a job they were in when they took this one).
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    let bound = RUN_WORK.with(Cell::get);
    rayon::join(
        || {
            #[cfg(any(test, feature = "test-hooks"))]
            joined_on();
            run_bound(bound, a)
        },
        || {
            #[cfg(any(test, feature = "test-hooks"))]
            joined_on();
            run_bound(bound, b)
        },
    )
}

/// Test hook: the thread each half of a [`join`] ran on (its name) and the
/// size of the rayon pool it was in, for the test that the bridge's checks
/// stay in the pool of the size asked (elle-si-jni's tests, through the
/// feature `test-hooks`).
#[cfg(any(test, feature = "test-hooks"))]
#[doc(hidden)]
pub static JOINED_ON: std::sync::Mutex<Vec<(Option<String>, usize)>> =
    std::sync::Mutex::new(Vec::new());

#[cfg(any(test, feature = "test-hooks"))]
fn joined_on() {
    let here = (
        std::thread::current().name().map(String::from),
        rayon::current_num_threads(),
    );
    JOINED_ON
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(here);
}

/// Runs `f` with [`RUN_WORK`] set to `bound`, restored after.
fn run_bound<T>(bound: Option<u64>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RUN_WORK.with(|w| w.set(self.0));
        }
    }
    let _restore = Restore(RUN_WORK.with(|w| w.replace(bound)));
    f()
}

/// A deadline and a mark on the work meter, either absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// The run's deadline (`--timeout`).
    pub deadline: Option<Instant>,
    /// The meter's mark past which the work is spent.
    pub work: Option<u64>,
}

/// Why a budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The run's deadline came.
    Deadline,
    /// A strategy's work was spent.
    Work,
}

impl Budget {
    /// No bound at all.
    pub const NONE: Budget = Budget {
        deadline: None,
        work: None,
    };

    /// The run's deadline alone.
    pub fn until(deadline: Option<Instant>) -> Budget {
        Budget {
            deadline,
            work: None,
        }
    }

    /// The budget an SI / serializability run starts with: the run's
    /// deadline, and the work [`runs_within`] allows, if it is set.
    pub fn for_run(deadline: Option<Instant>) -> Budget {
        let b = Budget::until(deadline);
        match RUN_WORK.with(Cell::get) {
            Some(units) => b.within(units),
            None => b,
        }
    }

    /// This budget with at most `units` more work from now.
    pub fn within(self, units: u64) -> Budget {
        let mark = spent().saturating_add(units);
        Budget {
            work: Some(self.work.map_or(mark, |w| w.min(mark))),
            ..self
        }
    }

    /// Why it ran out, if it did: the work first (it is what a strategy
    /// is bounded by), then the deadline.
    pub fn cause(&self) -> Option<Cause> {
        if self.work.is_some_and(|w| spent() > w) {
            Some(Cause::Work)
        } else if self.deadline_passed() {
            Some(Cause::Deadline)
        } else {
            None
        }
    }

    /// Whether it ran out.
    #[inline]
    pub fn expired(&self) -> bool {
        self.cause().is_some()
    }

    /// Whether the run's deadline has passed (its work aside).
    pub fn deadline_passed(&self) -> bool {
        passed(self.deadline)
    }

    /// Whether this budget allows at least what `other` does: a deadline
    /// and a mark each no nearer (`None` is none).
    pub fn no_tighter(&self, other: &Budget) -> bool {
        fn no_nearer<T: Ord>(a: Option<T>, b: Option<T>) -> bool {
            match (a, b) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(a), Some(b)) => a >= b,
            }
        }
        no_nearer(self.deadline, other.deadline) && no_nearer(self.work, other.work)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn work_marks_are_counted_not_timed() {
        let b = Budget::NONE.within(100);
        assert!(!b.expired());
        spend(100);
        assert!(!b.expired(), "the mark itself is still within");
        spend(1);
        assert_eq!(b.cause(), Some(Cause::Work));
        // Nested: the nearer mark holds.
        let outer = Budget::NONE.within(1_000);
        let inner = outer.within(10);
        assert_eq!(inner.work, Some(spent() + 10));
        assert_eq!(outer.within(10_000).work, outer.work);
        assert!(outer.no_tighter(&inner) && !inner.no_tighter(&outer));
        assert!(Budget::NONE.no_tighter(&outer));
    }

    #[test]
    fn a_run_is_bounded_only_within_runs_within() {
        assert_eq!(Budget::for_run(None), Budget::NONE);
        let inner = runs_within(10, || {
            let b = Budget::for_run(None);
            // Nested: the innermost bound holds, and is undone after.
            let nested = runs_within(3, || Budget::for_run(None));
            (b, nested, Budget::for_run(None))
        });
        assert_eq!(inner.0.work, Some(spent() + 10));
        assert_eq!(inner.1.work, Some(spent() + 3));
        assert_eq!(inner.2, inner.0);
        assert_eq!(Budget::for_run(None), Budget::NONE);
    }

    #[test]
    fn join_carries_the_bound_to_the_pool() {
        // What each half sees as its run's bound: the meter's mark minus
        // what its own thread had spent.
        let bound = || Budget::for_run(None).work.map(|w| w - spent());
        let both = runs_within(7, || join(bound, bound));
        assert_eq!(both, (Some(7), Some(7)));
        assert_eq!(join(bound, bound), (None, None));
    }

    #[test]
    fn the_deadline_is_the_only_clock() {
        let Some(past) = Instant::now().checked_sub(Duration::from_secs(1)) else {
            return;
        };
        let b = Budget::until(Some(past)).within(u64::MAX / 2);
        assert_eq!(b.cause(), Some(Cause::Deadline));
        assert!(b.deadline_passed());
        let far = Instant::now() + Duration::from_secs(3600);
        assert!(!Budget::until(Some(far)).expired());
    }
}
