//! `elle-si convert` end to end, and the resolution of Jepsen store
//! directories that `check` uses.

use std::path::{Path, PathBuf};

use elle_si::convert::expand_inputs;
use elle_si::history::model::*;
use elle_si::history::{self, Format, LoadOptions};

use crate::support;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn elle_si(args: &[&str]) -> (bool, String, String) {
    let out = crate::support::cli().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SAMPLE: &str = "test-logs/formats/list-append.edn";

/// Converts `input` to `to` as `dir/out.<to>`: success, stderr, the
/// output's path.
fn convert_to(input: &Path, dir: &Path, to: &str) -> (bool, String, PathBuf) {
    let out = dir.join(format!("out.{to}"));
    let (ok, _, err) = elle_si(&[
        "convert",
        input.to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        to,
    ]);
    (ok, err, out)
}

/// An `:info` write, a never-completed read and keyword keys.
const UNSURE: &str = "{:type :invoke, :process 0, :value [[:w :x 1] [:w :y 1]], :index 0}
{:type :ok, :process 0, :value [[:w :x 1] [:w :y 1]], :index 1}
{:type :invoke, :process 1, :value [[:w :x 2]], :index 2}
{:type :info, :process 1, :value [[:w :x 2]], :index 3}
{:type :invoke, :process 2, :value [[:r :x nil]], :index 4}
{:type :invoke, :process 3, :value [[:r :y nil] [:w :y 3]], :index 5}
{:type :ok, :process 3, :value [[:r :y 1] [:w :y 3]], :index 6}
{:type :invoke, :process 4, :value [[:r :x nil] [:w :x 4]], :index 7}
{:type :fail, :process 4, :value [[:r :x nil] [:w :x 4]], :index 8}
";

#[test]
fn register_formats_notes_say_what_the_output_holds() {
    let d = temp_dir("notes");
    let input = d.join("unsure.edn");
    std::fs::write(&input, UNSURE).unwrap();
    for to in ["text", "dbcop-hist", "dbcop-json", "dbcop-bincode"] {
        let (ok, err, out) = convert_to(&input, &d, to);
        assert!(ok, "{to}: {err}");
        // The :info write is written; the never-completed read, with
        // nothing left to write, is left out, and counted only there.
        assert!(
            err.contains("1 indeterminate transaction (:info, or never completed) written"),
            "{to}: {err}"
        );
        assert!(
            err.contains("1 transaction with nothing to write left out"),
            "{to}: {err}"
        );
        assert!(!err.contains("kept as indeterminate"), "{to}: {err}");
        // The text format drops the never-completed read's too.
        let dropped = if to == "text" {
            "2 reads of aborted or indeterminate transactions dropped"
        } else {
            "1 read of an aborted transaction dropped"
        };
        assert!(err.contains(dropped), "{to}: {err}");
        let h = history::load(
            &out,
            LoadOptions {
                format: Format::parse(to),
                ..LoadOptions::default()
            },
            None,
        )
        .unwrap_or_else(|e| panic!("{to}: {e}"))
        .history;
        // The aborted one is written, its write kept and its read dropped.
        assert_eq!(h.txns.len(), 4, "{to}");
        if to != "text" {
            // dbcop's variables stay dense: its tools size tables by
            // n_variable.
            assert!(
                err.contains("2 keys given new numbers, from 0 up"),
                "{to}: {err}"
            );
            let mut keys: Vec<_> = h.keys.iter().filter_map(|k| k.as_int()).collect();
            keys.sort_unstable();
            assert_eq!(keys, [0, 1], "{to}");
        }
    }
    let json = std::fs::read_to_string(d.join("out.dbcop-json")).unwrap();
    assert!(json.contains("\"n_variable\": 2,"), "{json}");
}

#[test]
fn what_a_target_cannot_hold_is_noted_or_refused_by_name() {
    let d = temp_dir("hold");
    let input = d.join("in.edn");
    let convert = |text: &str, to: &str| {
        std::fs::write(&input, text).unwrap();
        let _ = std::fs::remove_file(d.join(format!("out.{to}")));
        let (ok, err, out) = convert_to(&input, &d, to);
        (ok, err, out.exists())
    };
    // JSON has no keywords: :x and "x" would become one key.
    let (ok, err, written) = convert(
        "{:type :ok, :process 0, :value [[:w :x 1] [:w \"x\" 2]], :index 0}\n",
        "json",
    );
    assert!(!ok && !written, "{err}");
    assert!(
        err.contains(":x and \"x\" would both be written as \"x\""),
        "{err}"
    );
    // A nemesis op is not in the model: every target says it is left out.
    let nemesis = "{:type :ok, :process 0, :value [[:w 1 1]], :index 0}\n\
                   {:type :info, :process :nemesis, :f :kill, :value nil, :index 1}\n";
    for to in ["edn", "json", "text", "dbcop-json"] {
        let (ok, err, _) = convert(nemesis, to);
        assert!(ok, "{to}: {err}");
        assert!(
            err.contains("1 op without an integer :process (nemesis and others) left out"),
            "{to}: {err}"
        );
    }
    // dbcop's text form keeps names it can: only the others are counted
    // as renumbered.
    let (ok, err, _) = convert(
        "{:type :ok, :process 0, :value [[:w \"ab\" 1] [:w \"a b\" 1] [:w 3 1]], :index 0}\n",
        "dbcop-hist",
    );
    assert!(ok, "{err}");
    assert!(err.contains("1 key given new numbers, from 4 up"), "{err}");
    let hist = std::fs::read_to_string(d.join("out.dbcop-hist")).unwrap();
    assert!(hist.contains("ab:=1"), "{hist}");
    // A write of nil: the register formats read nil as the initial state,
    // so a fresh number for the write would make its own read disagree
    // with it. Refused by name, the transaction's line given. The reader
    // refuses it too, whatever the target (a read of nil cannot be of
    // that write): the text writer, which streams, says so first.
    let nil_write = "{:type :ok, :process 0, :value [[:w 2 2]], :index 0}\n\
                     {:type :ok, :process 0, :value [[:w 1 nil] [:r 1 nil]], :index 1}\n";
    for to in [
        "text",
        "dbcop-json",
        "dbcop-hist",
        "dbcop-bincode",
        "edn",
        "json",
    ] {
        let (ok, err, written) = convert(nil_write, to);
        assert!(!ok && !written, "{to}: {err}");
        assert!(
            err.contains("writes nil") || err.contains("a register write of nil"),
            "{to}: {err}"
        );
        assert!(err.contains("in.edn:2:"), "{to}: {err}");
    }
}

#[test]
fn every_writable_format_reads_back() {
    let d = temp_dir("all");
    let src = support::load(&support::root().join(SAMPLE)).history;
    for f in Format::ALL.into_iter().filter(|f| f.writable()) {
        let out = d.join(format!("out.{}", f.name()));
        let (ok, _, err) = elle_si(&["convert", SAMPLE, out.to_str().unwrap(), "--to", f.name()]);
        assert!(ok, "{}: {err}", f.name());
        let opts = LoadOptions {
            format: Some(f),
            ..LoadOptions::default()
        };
        let h = history::load(&out, opts, None).unwrap().history;
        // The :info transaction is committed in register formats; the
        // failed one stays aborted; the dangling invocation has nothing to
        // write and is left out there.
        let statuses: Vec<Status> = h.txns.iter().map(|t| t.status).collect();
        use Status::*;
        let want: &[Status] = match f {
            Format::Edn | Format::Json => {
                &[Committed, Indeterminate, Committed, Aborted, Indeterminate]
            }
            _ => &[Committed, Committed, Committed, Aborted],
        };
        let mut got = statuses.clone();
        let mut want = want.to_vec();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{}", f.name());
        if matches!(f, Format::Edn | Format::Json) {
            assert_eq!(h.workload, Some(Workload::ListAppend));
            assert_eq!(h.orders.len(), src.orders.len());
        } else {
            assert!(
                err.contains("each append became a write"),
                "{}: {err}",
                f.name()
            );
            assert!(err.contains("indeterminate"), "{}: {err}", f.name());
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn hist_keeps_version_orders_in_comments() {
    let (ok, out, _) = elle_si(&["convert", SAMPLE, "-", "--to", "dbcop-hist"]);
    assert!(ok);
    assert!(out.contains("// x 1\n// y 1\n"), "{out}");
    // String keys stay names.
    assert!(out.contains("[x:=1 y==?]\n"), "{out}");
}

#[test]
fn read_only_formats_are_refused_as_targets() {
    let (ok, _, err) = elle_si(&["convert", SAMPLE, "-", "--to", "cobra"]);
    assert!(!ok);
    assert!(err.contains("read only"), "{err}");
    let (ok, _, err) = elle_si(&["convert", SAMPLE, "-", "--to", "csv"]);
    assert!(!ok);
    assert!(err.contains("unknown format `csv`"), "{err}");
}

#[test]
fn streaming_errors_are_located() {
    let d = temp_dir("bad");
    let bad = d.join("history.edn");
    std::fs::write(
        &bad,
        "{:type :invoke, :process 0, :value [[:append 1 1]]}\n{:type :ok, :process 0, :value [[:append 1 1] [:cas 1 2]]}\n",
    )
    .unwrap();
    let (ok, _, err) = elle_si(&["convert", bad.to_str().unwrap(), "-", "--to", "text"]);
    assert!(!ok);
    assert!(err.contains("history.edn:2:"), "{err}");
    // -f, which reading errors suggest, is convert's too.
    let (ok, _, err) = elle_si(&["convert", "-f", "edn", SAMPLE, "-", "--to", "json"]);
    assert!(ok, "{err}");
    // Into a file, streamed or not: no empty or partial output is left,
    // and a file already there is left as it was.
    for to in ["text", "edn"] {
        let out = d.join(format!("out.{to}"));
        for existing in [false, true] {
            if existing {
                std::fs::write(&out, "precious").unwrap();
            }
            let (ok, _, err) = elle_si(&[
                "convert",
                bad.to_str().unwrap(),
                out.to_str().unwrap(),
                "--to",
                to,
            ]);
            assert!(!ok && err.contains("history.edn:2:"), "{err}");
            if existing {
                assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious", "{to}");
            } else {
                assert!(
                    !out.exists(),
                    "{to}: a failed conversion left {}",
                    out.display()
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn reads_of_several_writers_convert_to_every_format_and_read_back_alike() {
    // Two sessions write x = 1; a third reads it: either write. Every
    // register format names a version by its value, and every reader
    // reads a repeated value so, so each says it as it is.
    let d = temp_dir("dups");
    let hist = d.join("dup.hist");
    std::fs::write(&hist, "[x:=1]\n---\n[x:=1]\n---\n[x==1]\n").unwrap();
    // Converts under a duplicates policy into `to`: success, stderr, and
    // the output's path.
    let convert = |policy: &str, to: &str| {
        let out = d.join(format!("out.{to}"));
        let (ok, _, err) = elle_si(&[
            "convert",
            "--from",
            "dbcop-hist",
            "--duplicates",
            policy,
            hist.to_str().unwrap(),
            out.to_str().unwrap(),
            "--to",
            to,
        ]);
        (ok, err, out)
    };
    for to in ["edn", "json", "text", "dbcop-json"] {
        let (ok, err, out) = convert("any", to);
        assert!(ok, "{to}: {err}");
        let back = support::load(&out);
        assert_eq!(back.history.candidates.len(), 1, "{to}");
        assert_eq!(
            back.history.repeated.map(|r| r.ambiguous.len()),
            Some(1),
            "{to}"
        );
    }
    // Under another policy, the values are written as they are, and the
    // note says the policy is how check reads them.
    let (ok, err, _) = convert("last-writer", "edn");
    assert!(ok && err.contains("keeps the repeated values"), "{err}");
    // Refused by default, and under the old flag's name.
    let (ok, err, _) = convert("reject", "edn");
    assert!(!ok && err.contains("dbcop requires every"), "{err}");
    let out = d.join("old.edn");
    let (ok, _, err) = elle_si(&[
        "convert",
        "--dbcop-duplicates",
        "any",
        hist.to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        "edn",
    ]);
    assert!(ok, "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn dbcop_duplicates_policy_on_the_command_line() {
    if !support::corpus() {
        return;
    }
    let rh = "../shared/histories/valid/dbcop-bincode/general-RH-10k.bincode";
    let (ok, _, err) = elle_si(&["convert", rh, "-", "--to", "dbcop-json"]);
    assert!(!ok);
    assert!(err.contains("written the value 69 twice"), "{err}");
    let (ok, out, err) = elle_si(&[
        "convert",
        rh,
        "-",
        "--to",
        "dbcop-hist",
        "--dbcop-duplicates",
        "last-writer",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("25 (variable, value) pairs"), "{err}");
    // The output holds the values, not the guesses.
    assert!(err.contains("keeps the repeated values"), "{err}");
    assert_eq!(out.lines().filter(|l| *l == "---").count(), 24);
    assert_eq!(out.lines().filter(|l| l.starts_with('[')).count(), 10_000);
}

fn store() -> PathBuf {
    let d = temp_dir("store");
    let edn = std::fs::read(support::root().join(SAMPLE)).unwrap();
    for run in [
        "a/20240101T000000.000Z",
        "a/20240102T000000.000Z",
        "b/20240101T000000.000Z",
    ] {
        std::fs::create_dir_all(d.join(run)).unwrap();
        std::fs::write(d.join(run).join("history.edn"), &edn).unwrap();
        std::fs::write(d.join(run).join("results.edn"), "{:valid? true}").unwrap();
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.join("a/20240102T000000.000Z"), d.join("a/latest")).unwrap();
        std::os::unix::fs::symlink(d.join("a"), d.join("latest")).unwrap();
    }
    d
}

#[test]
fn jepsen_store_directories() {
    let d = store();
    let all = expand_inputs(std::slice::from_ref(&d)).unwrap();
    let rel: Vec<String> = all
        .iter()
        .map(|p| p.strip_prefix(&d).unwrap().display().to_string())
        .collect();
    assert_eq!(
        rel,
        [
            "a/20240101T000000.000Z/history.edn",
            "a/20240102T000000.000Z/history.edn",
            "b/20240101T000000.000Z/history.edn"
        ],
        "symlinks are not followed when walking"
    );
    #[cfg(unix)]
    {
        let latest = expand_inputs(&[d.join("a/latest")]).unwrap();
        assert_eq!(latest, [d.join("a/latest/history.edn")]);
        // A run directory converts like its history.edn.
        let (ok, out, err) = elle_si(&[
            "convert",
            d.join("a/latest").to_str().unwrap(),
            "-",
            "--to",
            "text",
        ]);
        assert!(ok, "{err}");
        assert!(out.starts_with("w("), "{out}");
    }
    let (ok, _, err) = elle_si(&["convert", d.to_str().unwrap(), "-", "--to", "text"]);
    assert!(!ok);
    assert!(err.contains("holds 3 histories"), "{err}");
    let empty = temp_dir("empty");
    let e = expand_inputs(std::slice::from_ref(&empty))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no history under this directory"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_conversion_writes_into_an_existing_output_and_never_into_its_input() {
    use std::os::unix::fs::PermissionsExt;
    let d = temp_dir("keep");
    let out = d.join("out.txt");
    std::fs::write(&out, "precious").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Into the file itself: its mode and its other names stay.
    let other = d.join("other.txt");
    std::fs::hard_link(&out, &other).unwrap();
    let (ok, _, err) = elle_si(&["convert", SAMPLE, out.to_str().unwrap(), "--to", "text"]);
    assert!(ok, "{err}");
    let written = std::fs::read_to_string(&other).unwrap();
    assert!(
        written.starts_with("r(") || written.starts_with("w("),
        "{written}"
    );
    let mode = std::fs::metadata(&out).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // The input as its own output, and a folder, are refused by name
    // before any work.
    let (ok, _, err) = elle_si(&["convert", SAMPLE, SAMPLE, "--to", "edn"]);
    assert!(!ok && err.contains("is the input"), "{err}");
    let (ok, _, err) = elle_si(&["convert", SAMPLE, d.to_str().unwrap(), "--to", "json"]);
    assert!(!ok && err.contains("is a directory"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A history with no client transaction (every op without an integer
/// :process) is refused rather than written empty: `check` refuses an
/// empty file. No output is left behind.
#[test]
fn nothing_to_write_is_refused() {
    let d = temp_dir("nothing");
    let input = d.join("nemesis.edn");
    std::fs::write(
        &input,
        "{:type :info, :f :start, :process :nemesis, :value nil, :index 0}\n\
         {:type :invoke, :value [[:append 1 1]], :index 1}\n",
    )
    .unwrap();
    for to in ["edn", "json", "text", "dbcop-hist"] {
        let (ok, err, out) = convert_to(&input, &d, to);
        assert!(!ok, "{to}: {err}");
        assert!(
            err.contains("no client transaction to write"),
            "{to}: {err}"
        );
        assert!(!out.exists(), "{to}: {} left behind", out.display());
    }
    let _ = std::fs::remove_dir_all(&d);
}
