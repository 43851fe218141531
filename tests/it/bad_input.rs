//! Bad input: every kind the reader refuses gets a message naming
//! `file:line:column` and the reason, from the library and from the
//! binary (which exits 3).

use std::path::PathBuf;

use elle_si::history::{Duplicates, LoadOptions, load_bytes};

/// (file name, content, line, column, part of the reason)
type Case = (&'static str, &'static [u8], usize, usize, &'static str);

const OP: &str = "{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}";

/// The history of issue 18's panic (from a public PostgreSQL fuzzing
/// project's `history.edn`), with and without invocations, and with
/// appends for writes.
const DUP_W: &[u8] = b"{:type :invoke, :f :txn, :value [[:w :x 1] [:w :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:w :x 1] [:w :x 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:w :x 1]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:w :x 1]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:r :y nil]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r :y nil]], :process 2, :index 5}
";
const DUP_W_COMPLETIONS: &[u8] =
    b"{:type :ok, :f :txn, :value [[:w :x 1] [:w :x 1]], :process 0, :index 1}
{:type :ok, :f :txn, :value [[:w :x 1]], :process 1, :index 3}
{:type :ok, :f :txn, :value [[:r :y nil]], :process 2, :index 5}
";
const DUP_APPEND: &[u8] =
    b"{:type :invoke, :f :txn, :value [[:append :x 1] [:append :x 1]], :process 0, :index 0}
{:type :ok, :f :txn, :value [[:append :x 1] [:append :x 1]], :process 0, :index 1}
{:type :invoke, :f :txn, :value [[:append :x 1]], :process 1, :index 2}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 1, :index 3}
{:type :invoke, :f :txn, :value [[:r :y nil]], :process 2, :index 4}
{:type :ok, :f :txn, :value [[:r :y nil]], :process 2, :index 5}
";
const DUP_APPEND_COMPLETIONS: &[u8] =
    b"{:type :ok, :f :txn, :value [[:append :x 1] [:append :x 1]], :process 0, :index 1}
{:type :ok, :f :txn, :value [[:append :x 1]], :process 1, :index 3}
{:type :ok, :f :txn, :value [[:r :y nil]], :process 2, :index 5}
";

/// Register values written twice, refused only under `--duplicates
/// reject` (by default a read of one may have observed either write).
const REPEATED: &[Case] = &[
    (
        "dup-write.edn",
        b"{:type :ok, :f :txn, :value [[:w :x 5]], :process 0}\n{:type :ok, :f :txn, :value [[:w :x 5]], :process 1}\n",
        2,
        30,
        "value 5 written to key :x twice",
    ),
    (
        "twice-then-again-w.edn",
        DUP_W,
        2,
        40,
        "value 1 written to key :x twice in one transaction",
    ),
    (
        "twice-then-again-w-completions.edn",
        DUP_W_COMPLETIONS,
        1,
        40,
        "value 1 written to key :x twice in one transaction",
    ),
];

const CASES: &[Case] = &[
    (
        "truncated-map.edn",
        b"{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:app",
        2,
        30,
        "input ends inside this vector: no closing `]` (truncated file?)",
    ),
    (
        "truncated-op.edn",
        b"{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn,",
        2,
        1,
        "input ends inside this map or set: no closing `}` (truncated file?)",
    ),
    (
        "truncated-list.edn",
        b"{:type :ok, :f :txn, :value [[:r 1 [1 2 3",
        1,
        36,
        "input ends inside this vector: no closing `]`",
    ),
    (
        "truncated-string.edn",
        b"{:type :info, :f :start, :process :nemesis, :value \"partial",
        1,
        52,
        "unterminated string",
    ),
    (
        "truncated-vector-file.edn",
        b"[{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n {:type :ok, :f :txn, :value [[:append 1 2]], :process 0}\n",
        1,
        1,
        "input ends inside this vector: no closing `]`",
    ),
    (
        "unbalanced.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1)], :process 0}\n",
        1,
        42,
        "unbalanced brackets: `)` where `]` was expected",
    ),
    (
        "unbalanced-map.edn",
        b"{:type :info, :f :x, :process :nemesis, :value {:a [1 2}}\n",
        1,
        56,
        "unbalanced brackets: `}` where `]` was expected",
    ),
    (
        "stray-close.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}}\n",
        1,
        57,
        "expected an op map",
    ),
    (
        "after-vector.edn",
        b"[{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}]\n]\n",
        2,
        1,
        "after the history's closing `]`",
    ),
    (
        "utf8-string.edn",
        b"{:type :info, :f :x, :process :nemesis, :value \"ab\xff\"}\n",
        1,
        51,
        "invalid UTF-8",
    ),
    (
        "utf8-keyword.edn",
        b"{:type :ok, :f :t\xc3x, :value [[:append 1 1]], :process 0}\n",
        1,
        18,
        "invalid UTF-8",
    ),
    (
        "utf8-key.edn",
        b"{:type :ok, :f :txn, :val\xe2ue [[:append 1 1]], :process 0}\n",
        1,
        26,
        "invalid UTF-8",
    ),
    (
        "utf8-comment.edn",
        b"; fine\n; caf\xe9\n{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n",
        2,
        6,
        "invalid UTF-8",
    ),
    (
        "value-map.edn",
        b"{:type :ok, :f :txn, :value {:append [1 1]}, :process 0}\n",
        1,
        29,
        ":value must be a vector of micro-ops",
    ),
    (
        "mop-map.edn",
        b"{:type :ok, :f :txn, :value [{:f :append, :k 1, :v 1}], :process 0}\n",
        1,
        30,
        "expected a micro-op like [:append k v]",
    ),
    (
        "file-map.edn",
        b"{{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n {:type :ok, :f :txn, :value [[:append 1 1]], :process 0}}\n",
        1,
        2,
        "an op map's keys are keywords (:type, :process, :value, ...); found a map",
    ),
    (
        "string-type.edn",
        b"{:type \"ok\", :f :txn, :value [[:append 1 1]], :process 0}\n",
        1,
        8,
        ":type must be a keyword (:invoke, :ok, :fail or :info), found a string \"ok\"",
    ),
    (
        "unknown-type.edn",
        b"{:type :done, :f :txn, :value [[:append 1 1]], :process 0}\n",
        1,
        8,
        "unknown :type :done",
    ),
    (
        "unknown-mop.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1] [:cas 1 [1 2]]], :process 0}\n",
        1,
        45,
        "unknown micro-op :cas",
    ),
    (
        "short-mop.edn",
        b"{:type :ok, :f :txn, :value [[:append 1]], :process 0}\n",
        1,
        30,
        "a micro-op needs a key and a value",
    ),
    (
        "long-mop.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 2 3]], :process 0}\n",
        1,
        43,
        "a micro-op has three elements",
    ),
    (
        "dup-append.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:r 1 [1]] [:append 1 1]], :process 1}\n",
        2,
        41,
        "value 1 appended to key 1 twice",
    ),
    (
        "double-invoke.edn",
        b"{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}\n",
        2,
        1,
        "process 0 invokes again while its invocation on line 1 has not completed",
    ),
    (
        "orphan-completion.edn",
        b"{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n\n{:type :ok, :f :txn, :value [[:append 1 2]], :process 1}\n",
        3,
        1,
        "a :ok completion for process 1, which has no outstanding invocation",
    ),
    (
        "missing-type.edn",
        b"{:type :invoke, :f :txn, :value [[:append 1 1]], :process 0}\n  {:f :txn, :value [[:append 1 1]], :process 0}\n",
        2,
        3,
        "client op has no :type",
    ),
    (
        "invoke-after-completions.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}\n",
        2,
        1,
        "an :invoke in a history that began with a completion",
    ),
    (
        "duplicate-key.edn",
        b"{:type :ok, :type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n",
        1,
        13,
        "duplicate key :type in op map",
    ),
    (
        "index-string.edn",
        b"{:type :ok, :index \"7\", :f :txn, :value [[:append 1 1]], :process 0}\n",
        1,
        20,
        ":index must be an integer, found a string",
    ),
    (
        "mixed-workloads.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1]], :process 0}\n{:type :ok, :f :txn, :value [[:w 2 1]], :process 0}\n",
        2,
        30,
        "this history mixes list-append and rw-register micro-ops",
    ),
    (
        "not-an-op.edn",
        b"[:type :ok]\n",
        1,
        2,
        "expected an op map",
    ),
    (
        "odd-map.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 1]], :process}\n",
        1,
        46,
        "map key :process has no value",
    ),
    (
        "other-tag.edn",
        b"#inst \"2020-01-01\"\n",
        1,
        1,
        "expected an op map, found the tagged literal #inst",
    ),
    (
        "bad-escape.edn",
        b"{:type :info, :f :x, :process :nemesis, :value \"a\\qb\"}\n",
        1,
        50,
        "unknown string escape `\\q`",
    ),
    (
        "bad-number.edn",
        b"{:type :ok, :f :txn, :value [[:append 1 12ab]], :process 0}\n",
        1,
        41,
        "invalid number `12ab`",
    ),
    // A transaction appending a value twice, then another appending it
    // once and a third: the reader compiled the transactions held behind
    // the refused one, and the second found the refused one's append (a
    // panic, exit 101, in `history::build`). The register versions are
    // read by default (`REPEATED`).
    (
        "twice-then-again-append.edn",
        DUP_APPEND,
        2,
        45,
        "value 1 written to key :x twice in one transaction",
    ),
    (
        "twice-then-again-append-completions.edn",
        DUP_APPEND_COMPLETIONS,
        1,
        45,
        "value 1 written to key :x twice in one transaction",
    ),
    (
        "empty-discard.edn",
        b"[{:type :ok, :f :txn, :value [[:append 1 1]], :process 0} #_]\n",
        1,
        59,
        "`#_` discards nothing",
    ),
    // Jepsen's :index rule (jepsen.history's): real-time order comes from
    // the indices, so indices that contradict the history are refused.
    (
        "index-completion-before-invocation.edn",
        b"{:index 1, :type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n{:index 0, :type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n",
        2,
        1,
        ":index 0 is not above the previous op's :index 1",
    ),
    (
        "index-missing-after-given.edn",
        b"{:index 0, :type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n{:index 1, :type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}\n",
        3,
        1,
        "this op has no :index, though the history's first op has one",
    ),
    (
        "index-not-the-position.edn",
        b"{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n{:index 5, :type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n",
        2,
        1,
        ":index 5 is not this op's position, 1",
    ),
    (
        "index-negative.edn",
        b"{:index 0, :type :invoke, :process 0, :f :txn, :value [[:w 1 1]]}\n{:index -1, :type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n",
        2,
        1,
        ":index -1 is negative",
    ),
    (
        "index-out-of-range.edn",
        b"{:index 99999999999999999999, :type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}\n",
        1,
        9,
        ":index is out of range",
    ),
    (
        // An op map that lacks its closing brace: the next op is where
        // a key would be.
        "unclosed-op.edn",
        b"{:type :invoke, :process 0, :f :txn, :value [[:w 1 1]]\n{:type :ok, :process 0, :f :txn, :value [[:w 1 1]]}\n",
        2,
        1,
        "an op map begins before the one above is closed (no closing `}`)",
    ),
    (
        // What `elle-si gen` writes beside a history, picked up by a glob.
        "h.edn.faults.edn",
        b"[{:fault :lost-update, :elle :lost-update, :txns [1 2], :keys [1]}]\n",
        1,
        2,
        "not a Jepsen op: a map with neither :type nor :process",
    ),
];

#[test]
fn library_errors_name_file_line_column_and_reason() {
    let reject = LoadOptions {
        duplicates: Duplicates::Reject,
        ..LoadOptions::default()
    };
    let mut failures = Vec::new();
    let cases = CASES.iter().map(|c| (c, LoadOptions::default()));
    for (&(name, text, line, col, reason), opts) in
        cases.chain(REPEATED.iter().map(|c| (c, reject)))
    {
        let got = match load_bytes(name, text.to_vec(), opts) {
            Ok(l) => format!("loaded {} transactions", l.history.txns.len()),
            Err(e) => e.to_string(),
        };
        let place = format!("{name}:{line}:{col}: ");
        if !got.starts_with(&place) || !got.contains(reason) {
            failures.push(format!(
                "{name}: expected `{place}... {reason}`, got `{got}`"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn cli_exits_3_with_file_line_column() {
    let dir = own_dir("cases");
    let mut failures = Vec::new();
    let cases = CASES.iter().map(|c| (c, &[][..]));
    let reject = &["--duplicates", "reject"][..];
    for (&(name, text, line, col, reason), flags) in
        cases.chain(REPEATED.iter().map(|c| (c, reject)))
    {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("writing a case");
        let out = crate::support::cli()
            .arg("stats")
            .args(flags)
            .arg(&path)
            .env("NO_COLOR", "1")
            .output()
            .expect("running elle-si");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let place = format!("{}:{line}:{col}", path.display());
        // miette wraps long messages: compare with whitespace folded.
        let folded: String = stderr
            .split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let reason_folded = reason.split_whitespace().collect::<Vec<_>>().join(" ");
        if out.status.code() != Some(3)
            || !stderr.contains(&place)
            || !folded.contains(&reason_folded)
        {
            failures.push(format!(
                "{name}: exit {:?}, expected 3 and `{place}` with `{reason}`; stderr:\n{stderr}",
                out.status.code()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn nesting_too_deep_is_located() {
    let depth = 150;
    let text = format!(
        "{{:type :info, :f :x, :process :nemesis, :value {}1{}}}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let err = match load_bytes("deep.edn", text.into_bytes(), LoadOptions::default()) {
        Ok(_) => panic!("a 150-deep value loaded"),
        Err(e) => e.to_string(),
    };
    // The `[` at column 48 is level 1: the 100th, at column 147, is the
    // first one too deep.
    assert!(
        err.starts_with("deep.edn:1:147: nesting deeper than 100 levels"),
        "{err}"
    );
}

#[test]
fn a_good_file_exits_0() {
    let dir = own_dir("good");
    let path = dir.join("good.edn");
    std::fs::write(&path, format!("{OP}\n{}\n", OP.replace(":invoke", ":ok"))).expect("writing");
    let out = crate::support::cli()
        .arg("stats")
        .arg(&path)
        .output()
        .expect("running elle-si");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("transactions     1 (1 ok"));
}

/// A result that cannot be written (stdout on a full disk) fails the run
/// by name, with status 3, in every output of `check` and in `stats`:
/// never the verdict's status, never a panic; so does an error report
/// that cannot be written. Linux's `/dev/full` stands
/// for the disk; elsewhere the test says so and passes.
#[test]
fn output_to_a_full_disk_is_an_error_not_a_verdict() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let log = crate::support::root().join("test-logs/la-lost-update.edn");
    let runs: [&[&str]; 4] = [
        &["check", "-o", "text"],
        &["check", "-o", "edn"],
        &["check", "-o", "json"],
        &["stats"],
    ];
    for args in runs {
        let out = crate::support::cli()
            .args(args)
            .arg(&log)
            .stdout(full.try_clone().expect("cloning /dev/full"))
            .output()
            .expect("running elle-si");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            stderr.contains("stdout") && stderr.contains("No space left"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // Bad input whose report cannot be written either (stderr on the full
    // disk, or closed: `2>&1 | head`): the status stays 3, never a panic's.
    let dir = own_dir("stderr-full");
    let bad = dir.join("h.edn");
    std::fs::write(&bad, "{:a 1}\n").expect("writing");
    let out = crate::support::cli()
        .arg("check")
        .arg(&bad)
        .stderr(full.try_clone().expect("cloning /dev/full"))
        .output()
        .expect("running elle-si");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
}

/// An error on the last line of a ~100 MB file: locating and rendering it
/// must not rescan the file per label (`cargo test --release -- --ignored
/// --nocapture` prints the times).
#[test]
#[ignore]
fn an_error_at_the_end_of_100_mb_renders_fast() {
    use std::io::Write;
    use std::time::Instant;
    let dir = own_dir("big");
    let path = dir.join("big.edn");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).expect("creating"));
    let mut n = 0u64;
    let mut bytes = 0usize;
    while bytes < 100 << 20 {
        let p = n % 25;
        let line = format!(
            "{{:type :invoke, :f :txn, :value [[:append {n} 1] [:r {p} nil]], :process {p}, :index {}}}\n{{:type :ok, :f :txn, :value [[:append {n} 1] [:r {p} nil]], :process {p}, :index {}}}\n",
            2 * n,
            2 * n + 1
        );
        bytes += line.len();
        w.write_all(line.as_bytes()).expect("writing");
        n += 1;
    }
    w.write_all(b"{:type :invoke, :f :txn, :value [[:append 1 1] [:cas 1 2]], :process 0}\n")
        .expect("writing");
    drop(w);
    let t = Instant::now();
    let err = match elle_si::history::load(&path, LoadOptions::default(), None) {
        Ok(_) => panic!("loaded"),
        Err(elle_si::Error::Input(e)) => e,
        Err(e) => panic!("{e}"),
    };
    let load_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut out = String::new();
    miette::GraphicalReportHandler::new()
        .render_report(&mut out, &*err)
        .expect("rendering");
    let render_secs = t.elapsed().as_secs_f64();
    // Locating alone, on a fresh source: the one scan for the line index.
    let src = elle_si::source::Source::open(&path).expect("opening");
    let t = Instant::now();
    let (line, col) = src.line_col(src.bytes().len() - 30);
    let index_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let again = src.line_col(src.bytes().len() - 31);
    let lookup_secs = t.elapsed().as_secs_f64();
    println!(
        "line index: built in {:.1} ms, then a lookup in {:.3} ms",
        index_secs * 1e3,
        lookup_secs * 1e3
    );
    assert_eq!((line as u64, col, again.1), (2 * n + 1, 43, 42));
    let _ = std::fs::remove_dir_all(&dir);
    let last = 2 * n + 1;
    assert!(err.message.contains("unknown micro-op :cas"), "{err}");
    println!(
        "{:.0} MB: read to the error and located it in {load_secs:.3} s; rendered in {:.1} ms\n{out}",
        bytes as f64 / 1e6,
        render_secs * 1e3
    );
    assert_eq!((err.line as u64, err.column), (last, 49));
    assert!(out.contains(&format!("big.edn:{last}:49")), "{out}");
    assert!(out.contains("[:cas 1 2]"), "{out}");
    // Rendering reads around the error only: a small share of reading the
    // file, whatever the host's load (both are slowed alike).
    assert!(
        render_secs * 10.0 < load_secs,
        "rendering took {render_secs:.3} s, reading {load_secs:.3} s"
    );
}

/// Found by fuzzing: the same value appended twice in one transaction
/// panics in `history::build` (an index into the transactions not yet
/// pushed) instead of being refused.
#[test]
fn the_same_append_twice_in_one_transaction() {
    let text = b"{:type :ok, :f :txn, :value [[:append 1 1] [:append 1 1]], :process 0}\n";
    let e = load_bytes("twice.edn", text.to_vec(), LoadOptions::default())
        .map(|_| ())
        .expect_err("refused");
    assert!(
        e.to_string()
            .starts_with("twice.edn:1:44: value 1 written to key 1 twice in one transaction"),
        "{e}"
    );
}

/// Runs `elle-si check` on a path; (exit code, stdout, stderr).
fn check_cli(path: &std::path::Path) -> (Option<i32>, String, String) {
    let out = crate::support::cli()
        .arg("check")
        .arg(path)
        .env("NO_COLOR", "1")
        .output()
        .expect("running elle-si");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_empty_file_is_bad_input_but_an_empty_store_run_is_unknown() {
    let dir = own_dir("empty");
    let file = dir.join("h.edn");
    std::fs::write(&file, "\n  \n").expect("writing");
    let (code, _, err) = check_cli(&file);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("h.edn: empty history"), "{err}");
    // So is a vector of no op (the generator's faults when none fired).
    std::fs::write(&file, "[]\n").expect("writing");
    let (code, _, err) = check_cli(&file);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("h.edn: empty history"), "{err}");
    assert!(!err.contains("FILE.faults.edn"), "{err}");
    // The generator's faults of a run where none fired say what they are.
    let faults = dir.join("h.edn.faults.edn");
    std::fs::write(&faults, "[]\n").expect("writing");
    let (code, _, err) = check_cli(&faults);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("empty history"), "{err}");
    assert!(err.contains("FILE.faults.edn"), "{err}");
    // A Jepsen run that recorded nothing: checked, and nothing could be.
    let run = dir.join("store/t/20250101T000000.000Z");
    std::fs::create_dir_all(&run).expect("scratch");
    std::fs::write(run.join("history.edn"), "").expect("writing");
    let (code, out, err) = check_cli(&dir.join("store"));
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.contains("UNKNOWN"), "{out}");
    assert!(err.contains("the run recorded nothing"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_carry_no_stray_code_and_a_directory_has_no_position() {
    let dir = own_dir("nohistory");
    std::fs::create_dir_all(dir.join("sub")).expect("scratch");
    let (code, _, err) = check_cli(&dir);
    assert_eq!(code, Some(3), "{err}");
    assert!(!err.contains("elle_si::"), "{err}");
    let name = dir.display().to_string();
    assert!(err.contains(&format!("{name}: no history")), "{err}");
    assert!(!err.contains(&format!("{name}:1:1")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_guessed_format_that_fails_says_what_was_guessed_and_why() {
    let dir = own_dir("guess");
    let fold = |err: &str| {
        err.split(|c: char| c.is_whitespace() || c == '│')
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A micro-op of four elements.
    let bad_op = OP.replace("[:append 1 1]", "[:append 1 1 1]");
    let json_op = "{\"index\": 0, \"type\": \"ok\", \"process\": 0, \"f\": \"txn\", \"value\": [[\"append\", 1, 2]]}";
    // elle-cli's ops (a JSON array of them; one a line is none of its
    // formats): the first bad, so the guess may be wrong; then, in an
    // array, the second cut off, so the guess read a record and the record
    // is what is bad. Likewise an EDN vector's.
    for (name, text, hint) in [
        (
            "first",
            format!("[{},\n{json_op}]\n", json_op.replace(", 1, 2", ", 1")),
            true,
        ),
        (
            "second",
            format!("[\n{json_op},\n{{\"type\": \"ok\", \"pro"),
            false,
        ),
        ("edn.edn", format!("[\n{bad_op}\n{OP}\n]\n"), true),
        ("edn2.edn", format!("[\n{OP}\n{bad_op}\n]\n"), false),
        // Records, not lines: a whole array on one line, its second
        // element bad; a first op over several lines, bad in its middle;
        // a comment before a bad first op.
        (
            "one-line.json",
            format!("[{json_op}, {{\"type\": 3}}]"),
            false,
        ),
        ("one-line.edn", format!("{OP} {bad_op}\n"), false),
        (
            "spread.edn",
            "{:type :invoke,\n :f :txn,\n :value [[:append 1 1 1]],\n :process 0}\n".to_string(),
            true,
        ),
        (
            "comment.edn",
            format!("; a history\n{bad_op}\n{OP}\n"),
            true,
        ),
        // One op a line: no format of elle-cli's, and said how to mend.
        ("lines", format!("{json_op}\n{json_op}\n"), true),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, &text).expect("writing");
        let (code, _, err) = check_cli(&p);
        assert_eq!(code, Some(3), "{name}: {err}");
        let folded = fold(&err);
        assert_eq!(folded.contains("because of"), hint, "{name}: {err}");
        assert_eq!(folded.contains("give -f"), hint, "{name}: {err}");
        if hint {
            let guessed = if name.ends_with(".edn") {
                "edn"
            } else {
                "json"
            };
            assert!(
                folded.contains(&format!("read as {guessed} because of")),
                "{name}: {err}"
            );
        }
        assert!(!folded.contains("dbcop"), "{name}: {err}");
        if name == "lines" {
            assert!(folded.contains("put the ops between [ and ]"), "{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn control_characters_in_bad_input_are_escaped_never_echoed() {
    let dir = own_dir("control");
    let p = dir.join("h.edn");
    // A binary line with a terminal's colour sequence (ESC [31m).
    std::fs::write(&p, format!("{OP}\n\x01\x02garbage\x1b[31m line\n{OP}\n")).expect("writing");
    let (code, _, err) = check_cli(&p);
    assert_eq!(code, Some(3), "{err}");
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
    assert!(err.contains(&format!("{}:2:1", p.display())), "{err}");
    // Said escaped, as Rust writes them.
    assert!(err.contains(r"\u{1}\u{2}garbage\u{1b}"), "{err}");
    // A printable line still gets its snippet.
    std::fs::write(&p, format!("{OP}\ngarbage line\n")).expect("writing");
    let (code, _, err) = check_cli(&p);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("2 │ garbage line"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch directory of a test's own: each test removes its own when it
/// ends, so tests running at once never remove each other's files.
fn own_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-bad-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("creating a scratch directory");
    d
}

/// Issue 18's history through `check` (the command it was found with),
/// under every output: refused on request, exit 3 and the located reason,
/// never a panic; by default, read (nothing reads x, and the only read
/// is of the initial state: Elle's empty transaction graph).
#[test]
fn check_refuses_a_value_written_twice_then_again() {
    let dir = own_dir("issue-18");
    let path = dir.join("issue-18.edn");
    std::fs::write(&path, DUP_W).expect("writing the history");
    let out = crate::support::cli()
        .args(["check", "-c", "serializable"])
        .arg(&path)
        .output()
        .expect("running elle-si");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("empty-transaction-graph"), "{stdout}");
    for output in ["text", "edn", "json"] {
        let out = crate::support::cli()
            .args([
                "check",
                "--duplicates",
                "reject",
                "-c",
                "serializable",
                "-o",
                output,
            ])
            .arg(&path)
            .env("NO_COLOR", "1")
            .output()
            .expect("running elle-si");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{output}: {stderr}");
        assert!(!stderr.contains("panicked"), "{output}: {stderr}");
        if output == "json" {
            // Under -o json the error is JSON, on stdout.
            let e: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            let e = &e["error"];
            assert_eq!((&e["line"], &e["column"]), (&2.into(), &40.into()), "{e}");
            assert!(
                e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("twice in one transaction")),
                "{e}"
            );
            continue;
        }
        assert!(
            stderr.contains(&format!("{}:2:40", path.display()))
                && stderr.contains("twice in one transaction"),
            "{output}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
