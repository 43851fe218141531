//! The library's one entry point for checking: a typed request on a
//! history (loaded here from a path, or already in memory), refused by
//! name when it cannot be honoured, checked, and, for register histories
//! whose repeated values left some read's writer to a guess, settled
//! (`settle.rs`) so that no verdict rests on the guess. The CLI and the
//! JNI bridge both call it.

use std::path::Path;
use std::time::Instant;

use super::settle::settle_guessed_reads;
use super::verdict::{CheckResult, Valid};
use super::{CheckOptions, Plan, check_plan, plan};
use crate::error::Error;
use crate::history::{self, LoadOptions, Loaded};

/// Loads `path` and checks it.
pub fn check_file(
    path: &Path,
    load: LoadOptions,
    opts: &CheckOptions,
) -> Result<(Loaded, CheckResult), Error> {
    let p = plan(opts)?;
    let l = history::load(path, load, None)?;
    let r = run(&l, opts, &p);
    Ok((l, r))
}

/// Checks a loaded history (read from a file or not: guessed reads are
/// settled on the history itself).
pub fn check_loaded(l: &Loaded, opts: &CheckOptions) -> Result<CheckResult, Error> {
    let p = plan(opts)?;
    Ok(run(l, opts, &p))
}

fn run(l: &Loaded, opts: &CheckOptions, p: &Plan) -> CheckResult {
    let started = Instant::now();
    let r = check_plan(l, opts, p);
    let Some(rep) = &l.history.repeated else {
        return r;
    };
    let mut r = if r.valid != Valid::True && rep.guessed() {
        settle_guessed_reads(l, rep, r, opts, (p, started))
    } else {
        r
    };
    if !rep.ambiguous.is_empty() {
        r.notes.push(format!(
            "{} of a value written more than once may have observed more than one write (--duplicates {}; the result map lists them under :elle-si/ambiguous-reads)",
            match rep.ambiguous.len() {
                1 => "1 read".to_string(),
                n => format!("{n} reads"),
            },
            rep.policy.name()
        ));
    }
    r
}
