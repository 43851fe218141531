//! A result's size is bounded by its input's (issue 53): each anomaly type
//! lists at most `anomaly::MAX_INSTANCES` (the rest counted in `:also`), a
//! transaction is shown to `render::SHOWN` micro-ops and list elements at
//! its first mention in an anomaly and to `render::SHOWN_AGAIN` at later
//! ones, and past `render::Bounds` (bytes per byte of input, or the
//! deadline) the anomalies left are counted under `:elle-si/elided`, in EDN and
//! JSON alike. The logs are made here: one transaction reading a list
//! nobody appended (each element a thin-air read).

use std::time::Instant;

use elle_si::anomaly::{self, MAX_INSTANCES};
use elle_si::edn::Value;
use elle_si::report::Valid;
use elle_si::report::render::{self, Bounds, Cut, SHOWN, SHOWN_AGAIN, Syntax};

use crate::support;

/// Two ops: a transaction reading key 1 as `[1 .. n]`, which nobody
/// appended.
fn thin_air_log(n: usize) -> String {
    let list: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!(
        "{{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0, :index 0}}\n\
         {{:type :ok, :f :txn, :value [[:r 1 [{}]]], :process 0, :index 1}}\n",
        list.join(" ")
    )
}

fn scratch(name: &str, text: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-bound-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch directory");
    let f = d.join(name);
    std::fs::write(&f, text).expect("write log");
    f
}

/// `elle-si check -o <syntax>` on `f`: its stdout.
fn cli(f: &std::path::Path, syntax: &str) -> Vec<u8> {
    let out = crate::support::cli()
        .args(["check", "-o", syntax])
        .arg(f)
        .output()
        .expect("running elle-si check");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The map under `key` (a keyword) of an EDN map.
fn get<'v>(v: &'v Value, key: &str) -> &'v Value {
    match v {
        Value::Map(m) => m
            .iter()
            .find(|(k, _)| *k == Value::Keyword(key.into()))
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no :{key} in {}", v.abbreviated(4))),
        other => panic!("not a map: {}", other.abbreviated(4)),
    }
}

/// A list read's elements as rendered, and the `... n more` that closes it.
fn shown_list(mop: &Value) -> (usize, String) {
    let Value::Vector(m) = mop else {
        panic!("not a micro-op: {mop}")
    };
    let Value::Vector(elems) = &m[2] else {
        panic!("not a list read: {mop}")
    };
    match elems.last() {
        Some(Value::String(s)) => (elems.len() - 1, s.clone()),
        _ => (elems.len(), String::new()),
    }
}

#[test]
fn a_long_thin_air_read_lists_a_bounded_number_and_counts_the_rest() {
    let n = 5 * MAX_INSTANCES;
    let l = support::load_str("thin.edn", &thin_air_log(n));
    let r = support::check_models(&l, "read-committed");
    assert_eq!(r.valid, Valid::False);
    let list = &r.anomalies["thin-air-read"];
    assert_eq!(list.len(), MAX_INSTANCES);
    assert_eq!(anomaly::found(list), n as u64, "the rest counted in :also");
    assert_eq!(
        list.last().map(|a| a.also()),
        Some((n - MAX_INSTANCES) as u64)
    );
}

#[test]
fn output_is_bounded_by_the_input_in_edn_and_json() {
    let mut sizes = Vec::new();
    for n in [2_000, 20_000] {
        let text = thin_air_log(n);
        let f = scratch(&format!("thin-{n}.edn"), &text);
        let bound = Bounds::for_input(text.len(), None).bytes;
        for syntax in ["edn", "json"] {
            let out = cli(&f, syntax);
            // The frame (verdict, types, :not) is a few KB besides.
            assert!(
                (out.len() as u64) < bound + (64 << 10),
                "{n} elements, -o {syntax}: {} bytes, bound {bound}",
                out.len()
            );
            sizes.push(out.len());
            if syntax == "json" {
                let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON parses");
                let list = v["anomalies"]["thin-air-read"].as_array().expect("a list");
                assert_eq!(list.len(), MAX_INSTANCES);
                continue;
            }
            let v = elle_si::edn::read_one(&out).expect("EDN parses");
            let list = match get(get(&v, "anomalies"), "thin-air-read") {
                Value::Vector(xs) => xs,
                other => panic!("{}", other.abbreviated(3)),
            };
            assert_eq!(list.len(), MAX_INSTANCES);
            let last = list.last().expect("one");
            assert_eq!(*get(last, "also"), Value::Int((n - MAX_INSTANCES) as i64));
            // The op shown to SHOWN elements; its micro-op, beside it, to
            // SHOWN_AGAIN; each says how many it leaves out.
            let first = &list[0];
            let op_mop = match get(get(first, "op"), "value") {
                Value::Vector(ms) => ms[0].clone(),
                other => panic!("{other}"),
            };
            let (shown, more) = shown_list(&op_mop);
            assert_eq!((shown, more), (SHOWN, format!("... {} more", n - SHOWN)));
            let (shown, more) = shown_list(get(first, "mop"));
            assert_eq!(
                (shown, more),
                (SHOWN_AGAIN, format!("... {} more", n - SHOWN_AGAIN))
            );
        }
    }
    // Ten times the input, hardly more output: not quadratic, not even
    // linear past the bounds.
    assert!(sizes[2] < sizes[0] * 3 / 2, "{sizes:?}");
    assert!(sizes[3] < sizes[1] * 3 / 2, "{sizes:?}");
}

/// Renders `r` as `syntax` within `bounds`: the text and what was left
/// out.
fn rendered(
    l: &elle_si::history::Loaded,
    r: &elle_si::report::CheckResult,
    syntax: Syntax,
    bounds: &Bounds,
) -> (Vec<u8>, render::Elided) {
    let mut out = Vec::new();
    let e = render::write_result(&mut out, &l.history, r, syntax, bounds).expect("rendered");
    (out, e)
}

#[test]
fn past_the_byte_bound_the_anomalies_left_are_counted_under_elided() {
    let n = 3_000;
    let l = support::load_str("thin.edn", &thin_air_log(n));
    let r = support::check_models(&l, "read-committed");
    let whole = rendered(&l, &r, Syntax::Edn, &Bounds::NONE).0;
    let bounds = Bounds {
        bytes: whole.len() as u64 / 4,
        deadline: None,
    };
    for syntax in [Syntax::Edn, Syntax::PrettyEdn, Syntax::Json { file: None }] {
        let (out, e) = rendered(&l, &r, syntax, &bounds);
        assert_eq!(e.cut, Some(Cut::Bytes(bounds.bytes)));
        assert!(
            (out.len() as u64) < bounds.bytes + (16 << 10),
            "{}",
            out.len()
        );
        let left = e.counts["thin-air-read"];
        let (listed, elided) = match syntax {
            Syntax::Edn | Syntax::PrettyEdn => {
                let v = elle_si::edn::read_one(&out).expect("EDN parses");
                let listed = match get(get(&v, "anomalies"), "thin-air-read") {
                    Value::Vector(xs) => xs.len() as u64,
                    other => panic!("{other}"),
                };
                let elided =
                    get(get(get(&v, "elle-si/elided"), "anomalies"), "thin-air-read").clone();
                (listed, elided == Value::Int(left as i64))
            }
            Syntax::Json { .. } => {
                let v: serde_json::Value = serde_json::from_slice(&out).expect("JSON parses");
                let listed = v["anomalies"]["thin-air-read"]
                    .as_array()
                    .map_or(0, Vec::len);
                let reason = v["elle-si/elided"]["reason"].as_str().unwrap_or_default();
                assert!(reason.contains("bytes per byte of input"), "{reason}");
                (
                    listed as u64,
                    v["elle-si/elided"]["anomalies"]["thin-air-read"] == left,
                )
            }
        };
        assert!(elided, "the count of those left out is written");
        assert!(listed > 0 && listed < MAX_INSTANCES as u64);
        // Those listed, and those left out with what they counted, are all
        // that was found.
        assert_eq!(listed + left, n as u64);
    }
}

#[test]
fn past_the_deadline_rendering_stops_and_says_so() {
    let l = support::load_str("thin.edn", &thin_air_log(2_000));
    let r = support::check_models(&l, "read-committed");
    let bounds = Bounds {
        bytes: u64::MAX,
        deadline: Some(Instant::now()),
    };
    let (out, e) = rendered(&l, &r, Syntax::Edn, &bounds);
    assert_eq!(e.cut, Some(Cut::Deadline));
    assert_eq!(e.counts["thin-air-read"], 2_000);
    let v = elle_si::edn::read_one(&out).expect("EDN parses");
    let reason = get(get(&v, "elle-si/elided"), "reason").to_string();
    assert!(reason.contains("deadline"), "{reason}");
    // The verdict stands.
    assert_eq!(*get(&v, "valid?"), Value::Bool(false));
}
