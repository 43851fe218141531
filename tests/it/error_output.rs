//! How errors reach the user (issue 53): a place miette cannot draw (past
//! column 65,535 of a one-line history) still gets `file:line:column:
//! reason` and exit status 3, never a panic; errors are JSON under
//! `-o json`; a closed pipe is named, and the folder asked for beside it is
//! still written; a gzipped history is read, and a broken one refused by
//! name. The logs are written here, by hand.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use elle_si::error::ParseError;
use elle_si::source::Source;

fn elle_si(args: &[&str], dir: &Path) -> Output {
    crate::support::cli()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running elle-si")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("elle-si-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A one-line history of `ops` appends whose last op map is never closed:
/// the error is past column 65,535 and names the op map opened at column
/// 1 of that op, also far along the line.
fn one_line(ops: usize, gap: usize) -> String {
    let mut s = String::from("[");
    for i in 0..ops {
        s.push_str(&format!(
            "{{:type :ok, :f :txn, :value [[:append 1 {i}]], :process 0}} "
        ));
    }
    s.push_str("{:type :ok, :f :txn, :value [[:append 1 -1]], :process 0");
    s.push_str(&" ".repeat(gap));
    s.push_str(" {:type :ok}]");
    s
}

/// `check`, `stats` and `convert` on a one-line history whose syntax
/// error lies past column 65,535, with the place it refers to 70,000
/// columns before it: exit 3 with `file:1:column: reason`, never miette's
/// panic ("Formatting argument out of range", exit 101).
#[test]
fn errors_past_column_65535_exit_3_with_their_place() {
    let dir = scratch("long-line");
    let text = one_line(10, 70_000);
    std::fs::write(dir.join("long.edn"), &text).expect("writing");
    let col = text.rfind(" {:type :ok}").expect("the next op") + 2;
    for args in [
        &["check", "long.edn"][..],
        &["stats", "long.edn"],
        &["convert", "long.edn", "-", "--to", "json"],
    ] {
        let out = elle_si(args, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            err.contains(&format!("long.edn:1:{col}")),
            "{args:?}: {err}"
        );
        assert!(err.contains("the op map opened here"), "{args:?}: {err}");
        // A window of the line, not the 70 KB of it.
        assert!(err.len() < 8192, "{args:?}: {} bytes", err.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every place on long lines, with a related place at every distance: the
/// error draws (miette's graphical handler, as the CLI uses it) without a
/// panic, and names both places.
#[test]
fn every_label_on_a_long_line_can_be_drawn() {
    let line = "x".repeat(200_000);
    let text = format!("{line}\n{line}\n\t{line}\n");
    let src = Arc::new(Source::from_bytes("wide.edn", text.into_bytes()));
    let len = src.bytes().len();
    let mut drawn = 0;
    for at in [
        0usize, 10, 4_000, 65_530, 65_536, 70_000, 199_999, 200_001, 300_000, 400_003,
    ] {
        for far in [0usize, 1, 100, 3_000, 66_000, 150_000, 250_000] {
            for span in [1usize, 300, 100_000] {
                let related = at.saturating_sub(far).min(len - 1);
                let e = ParseError::new(at, "bad")
                    .with_len(span)
                    .with_related(related, span, "opened here")
                    .locate(&src);
                let mut out = String::new();
                miette::GraphicalReportHandler::new()
                    .render_report(&mut out, &e)
                    .expect("rendering");
                assert!(
                    out.contains(&format!("wide.edn:{}:{}", e.line, e.column)),
                    "{out}"
                );
                assert!(out.contains("opened here"), "{at} {far}: {out}");
                drawn += 1;
            }
        }
    }
    assert_eq!(drawn, 210);
}

/// Under `-o json` an error is a JSON object on stdout, with the file, its
/// line and column and the reason: for bad input, a missing file and a
/// bad option alike (all exit 3).
#[test]
fn errors_under_json_output_are_json() {
    let dir = scratch("json-errors");
    std::fs::write(
        dir.join("bad.edn"),
        "{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:frob 1 1]], :process 0}\n",
    )
    .expect("writing");
    let out = elle_si(&["check", "-o", "json", "bad.edn", "missing.edn"], &dir);
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let bad = &lines[0]["error"];
    assert_eq!(bad["kind"], "input");
    assert_eq!(bad["file"], "bad.edn");
    assert_eq!(bad["line"], 2);
    assert!(bad["column"].as_u64().is_some_and(|c| c > 1), "{bad}");
    assert!(
        bad["message"].as_str().is_some_and(|m| m.contains(":frob")),
        "{bad}"
    );
    assert_eq!(lines[1]["error"]["kind"], "io");
    assert_eq!(lines[1]["error"]["file"], "missing.edn");
    let out = elle_si(
        &["check", "-o", "json", "-c", "no-such-model", "bad.edn"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3));
    let usage: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(usage["error"]["kind"], "usage");
    assert!(
        usage["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no-such-model")),
        "{usage}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

const SERIAL: &str = "\
{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append 1 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:r 1 [2]]], :process 1, :index 3}
";

/// stdout a pipe nobody reads (`elle-si check ... | head -1` once head
/// has gone): the run says so on stderr and exits 3, and the folder asked
/// for with `-d` is written all the same.
#[test]
fn a_closed_pipe_is_named_and_the_folder_still_written() {
    let dir = scratch("pipe");
    std::fs::write(dir.join("h.edn"), SERIAL).expect("writing");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = crate::support::cli()
        .args(["check", "h.edn", "-d", "out"])
        .current_dir(&dir)
        .stdout(writer)
        .output()
        .expect("running elle-si");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("broken pipe"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(dir.join("out/index.html").is_file(), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).expect("compressing");
    z.finish().expect("compressing")
}

/// A gzipped history is read as the text it holds: the same verdict and
/// exit status as the plain file (here a thin-air read, exit 1), its format
/// told by the name without `.gz`; an error in it is placed in the
/// decompressed text, and says so; a truncated gzip file is refused by
/// name (it was read as dbcop bincode: "879367862917468245 items follow").
#[test]
fn gzip_histories_are_read() {
    let dir = scratch("gzip");
    std::fs::write(dir.join("h.edn"), SERIAL).expect("writing");
    let z = gzip(SERIAL.as_bytes());
    std::fs::write(dir.join("h.edn.gz"), &z).expect("writing");
    std::fs::write(dir.join("h.gz"), &z).expect("writing");
    let plain = elle_si(&["check", "-o", "edn", "h.edn"], &dir);
    assert_eq!(plain.status.code(), Some(1));
    for name in ["h.edn.gz", "h.gz"] {
        let out = elle_si(&["check", "-o", "edn", name], &dir);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert_eq!(out.stdout, plain.stdout, "{name}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("read as gzip"));
    }
    let broken = SERIAL.replace("[:r 1 [2]]]", "[:r 1 [2]]");
    std::fs::write(dir.join("bad.edn.gz"), gzip(broken.as_bytes())).expect("writing");
    let out = elle_si(&["check", "bad.edn.gz"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("bad.edn.gz:4:"), "{err}");
    assert!(err.contains("the file is gzip"), "{err}");
    std::fs::write(dir.join("cut.edn.gz"), &z[..z.len() / 2]).expect("writing");
    let out = elle_si(&["check", "cut.edn.gz"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot be decompressed"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
