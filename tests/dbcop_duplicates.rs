//! Histories where two transactions write the same (variable, value), read
//! with `--dbcop-duplicates last-writer`: a violation stands only when it
//! holds whichever write a read observed; otherwise the answer is unknown.

use std::process::Command;

/// x = 1 is written twice. Read from the last writer, the reader of x must
/// also see y = 5 (its writer's own read) and does not: a cycle. Read from
/// the first writer, nothing is wrong.
const AMBIGUOUS: &str = "[x:=1]\n[y:=5]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n";

/// The same, plus a session that reads z = 1 and then z's initial state:
/// a violation of strong-session SI whatever x's readers saw.
const SURE: &str =
    "[x:=1]\n[y:=5]\n[z:=1]\n---\n[y==5 x:=1]\n---\n[x==1 y==?]\n---\n[z==1]\n[z==?]\n";

fn check(name: &str, text: &str, args: &[&str]) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("elle-si-dups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write history");
    let out = Command::new(env!("CARGO_BIN_EXE_elle-si"))
        .arg("check")
        .args(args)
        .arg(&path)
        .output()
        .expect("run elle-si");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn duplicates_are_refused_by_default() {
    let (code, out) = check("refused.hist", AMBIGUOUS, &["-c", "ssi"]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("twice"), "{out}");
}

#[test]
fn a_violation_that_depends_on_the_guess_is_unknown() {
    for m in ["ssi", "ser"] {
        let (code, out) = check(
            "amb.hist",
            AMBIGUOUS,
            &["-c", m, "--dbcop-duplicates", "last-writer", "-v"],
        );
        assert_eq!(code, 2, "{m}: {out}");
        assert!(out.contains("UNKNOWN"), "{m}: {out}");
        assert!(
            out.contains("depends on which of two equal writes"),
            "{m}: {out}"
        );
    }
}

#[test]
fn a_violation_that_holds_either_way_stands() {
    let (code, out) = check(
        "sure.hist",
        SURE,
        &[
            "-c",
            "ssi",
            "--dbcop-duplicates",
            "last-writer",
            "-o",
            "edn",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(":G-single-item-process"), "{out}");
    // Without session order the z reads are fine, and x's reader is the
    // only suspect: no verdict.
    let (code, out) = check(
        "sure.hist",
        SURE,
        &["-c", "ser", "--dbcop-duplicates", "last-writer"],
    );
    assert_eq!(code, 2, "{out}");
}

#[test]
fn drop_reads_leaves_out_only_the_ambiguous_reads() {
    let (code, out) = check(
        "drop.hist",
        AMBIGUOUS,
        &["-c", "ser", "--dbcop-duplicates", "drop-reads", "-v"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("reads of them left out"), "{out}");
}
