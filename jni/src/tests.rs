//! The bridge against a small encoder written here, mirroring
//! `elle_si.HistoryEncoder`.

use super::bridge::*;
use super::options::*;
use super::stream::*;
use super::wire::*;
use std::time::Duration;

use elle_si::edn::{self, Value};
use elle_si::history::model::*;

/// A small encoder for the tests, mirroring `elle_si.HistoryEncoder`.
#[derive(Default)]
struct Enc {
    values: Vec<u8>,
    ops: Vec<u8>,
    ids: Vec<String>,
}

enum V<'a> {
    I(i64),
    E(&'a str),
}

use super::write_uv as uv;

fn sv(out: &mut Vec<u8>, i: i64) {
    uv(out, ((i << 1) ^ (i >> 63)) as u64)
}

impl Enc {
    fn new() -> Enc {
        let mut e = Enc::default();
        e.ops.extend_from_slice(MAGIC);
        e.ops.push(WIRE_VERSION);
        e
    }

    fn r(&mut self, v: V) {
        match v {
            V::I(i) => uv(&mut self.ops, (((i << 1) ^ (i >> 63)) as u64) << 1),
            V::E(text) => {
                let id = match self.ids.iter().position(|t| t == text) {
                    Some(p) => p + 1,
                    None => {
                        self.ids.push(text.to_string());
                        uv(&mut self.values, text.len() as u64);
                        self.values.extend_from_slice(text.as_bytes());
                        self.ids.len()
                    }
                };
                uv(&mut self.ops, ((id as u64) << 1) | 1)
            }
        }
    }

    /// `mops`: (function code, key, arg) with arg None, Some(vec) for a
    /// list, or a one-element scalar marker.
    fn op(&mut self, typ: u8, process: i64, index: Option<i64>, mops: Option<&[(u8, i64, Arg2)]>) {
        self.ops.push(REC_OP);
        let state = if mops.is_some() { 2 } else { 1 };
        self.ops
            .push(typ | if index.is_some() { 4 } else { 0 } | (state << 4));
        sv(&mut self.ops, process);
        if let Some(i) = index {
            sv(&mut self.ops, i);
        }
        self.r(V::E(":txn"));
        if let Some(mops) = mops {
            self.mops(mops);
        }
    }

    /// An invocation without its value, as `elle_si.HistoryEncoder`
    /// writes them.
    fn invoke_elided(&mut self, process: i64, index: i64) {
        self.ops.push(REC_OP);
        self.ops.push(INV | 4);
        sv(&mut self.ops, process);
        sv(&mut self.ops, index);
        self.r(V::E(":txn"));
    }

    fn trailer(&mut self, process: i64, mops: &[(u8, i64, Arg2)]) {
        self.ops.push(REC_TRAILER);
        sv(&mut self.ops, process);
        self.ops.push(2);
        self.mops(mops);
    }

    fn mops(&mut self, mops: &[(u8, i64, Arg2)]) {
        {
            uv(&mut self.ops, mops.len() as u64);
            for (f, k, a) in mops {
                let argc = match a {
                    Arg2::Nil => 0,
                    Arg2::One(_) => 1,
                    Arg2::List(_) => 2,
                };
                self.ops.push(f | (argc << 2));
                self.r(V::I(*k));
                match a {
                    Arg2::Nil => {}
                    Arg2::One(v) => self.r(V::I(*v)),
                    Arg2::List(vs) => {
                        uv(&mut self.ops, vs.len() as u64);
                        for v in vs.iter() {
                            self.r(V::I(*v));
                        }
                    }
                }
            }
        }
    }
}

#[derive(Clone)]
enum Arg2 {
    Nil,
    One(i64),
    List(Vec<i64>),
}

const INV: u8 = 0;
const OK: u8 = 1;
const FAIL: u8 = 2;
const APPEND: u8 = 0;
const READ: u8 = 1;

fn opts() -> BridgeOptions {
    BridgeOptions::default()
}

#[test]
fn pairs_invocations_with_completions() {
    let mut e = Enc::new();
    e.op(INV, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.ops.push(REC_SKIP);
    e.op(INV, 1, Some(2), Some(&[(READ, 1, Arg2::Nil)]));
    e.op(OK, 0, Some(3), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.op(OK, 1, Some(4), Some(&[(READ, 1, Arg2::List(vec![1]))]));
    // A failed append without a value: the invocation tells.
    e.op(INV, 0, Some(5), Some(&[(APPEND, 1, Arg2::One(2))]));
    e.op(FAIL, 0, Some(6), None);
    // Never completes.
    e.op(INV, 2, Some(7), Some(&[(APPEND, 1, Arg2::One(3))]));
    let l = decode(&e.values, &e.ops, &opts()).unwrap();
    let h = &l.history;
    assert_eq!(h.stats.ops, 8);
    assert_eq!(h.stats.skipped_ops, 1);
    assert_eq!(h.stats.dangling_invokes, 1);
    assert_eq!(h.workload, Some(Workload::ListAppend));
    let st: Vec<Status> = h.txns.iter().map(|t| t.status).collect();
    assert_eq!(
        st,
        [
            Status::Committed,
            Status::Committed,
            Status::Aborted,
            Status::Indeterminate
        ]
    );
    assert_eq!(h.txns[1].complete.index, 4);
    assert_eq!(h.txns[1].invoke.map(|p| p.index), Some(2));
    // The failed txn's append came from its invocation.
    let m = &h.mops[h.txns[2].start as usize];
    assert_eq!(m.val, Val::int(2).unwrap());
    assert_eq!(h.value(h.txns[0].f), Value::Keyword("txn".into()));
}

#[test]
fn elided_invocation_values_come_from_the_completion_or_the_trailer() {
    let mut e = Enc::new();
    e.invoke_elided(0, 0);
    e.op(OK, 0, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
    // The encoder copies the invocation's value into a bare :fail.
    e.invoke_elided(0, 2);
    e.op(FAIL, 0, Some(3), Some(&[(APPEND, 1, Arg2::One(2))]));
    // Never completes: its value is in the trailer.
    e.invoke_elided(1, 4);
    e.invoke_elided(2, 5);
    e.trailer(2, &[(READ, 1, Arg2::List(vec![1]))]);
    e.trailer(1, &[(APPEND, 1, Arg2::One(3))]);
    let l = decode(&e.values, &e.ops, &opts()).unwrap();
    let h = &l.history;
    assert_eq!(h.stats.ops, 6);
    assert_eq!(h.stats.dangling_invokes, 2);
    let st: Vec<(Status, usize)> = h.txns.iter().map(|t| (t.status, t.mops().len())).collect();
    assert_eq!(
        st,
        [
            (Status::Committed, 1),
            (Status::Aborted, 1),
            (Status::Indeterminate, 1),
            (Status::Indeterminate, 1)
        ]
    );
    // Dangling invocations in history order, each with its own value.
    assert_eq!(h.txns[2].invoke.map(|p| p.index), Some(4));
    assert_eq!(h.mops[h.txns[2].start as usize].kind, MopKind::Write);
    assert_eq!(h.mops[h.txns[3].start as usize].kind, MopKind::Read);
    // A record after the trailer is refused.
    e.op(OK, 3, Some(6), None);
    match decode(&e.values, &e.ops, &opts()) {
        Err(err) => assert!(err.contains("after the trailer"), "{err}"),
        Ok(_) => panic!("a record after the trailer was accepted"),
    }
}

#[test]
fn ops_without_index_get_their_position() {
    let mut e = Enc::new();
    e.ops.push(REC_SKIP);
    e.op(OK, 0, None, Some(&[(APPEND, 1, Arg2::One(1))]));
    let l = decode(&e.values, &e.ops, &opts()).unwrap();
    assert_eq!(l.history.txns[0].complete.index, 1);
    assert!(l.history.stats.completions_only);
}

#[test]
fn indices_that_contradict_the_history_are_refused() {
    // A completion indexed before its invocation: in real time it would
    // precede itself.
    let mut e = Enc::new();
    e.op(INV, 0, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.op(OK, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
    let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
    assert!(err.contains(":index 0 is not above"), "{err}");
    // One op without an index among indexed ones.
    let mut e = Enc::new();
    e.op(INV, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.ops.push(REC_SKIP);
    e.op(OK, 0, None, Some(&[(APPEND, 1, Arg2::One(1))]));
    let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
    assert!(err.contains("no :index"), "{err}");
}

#[test]
fn errors_name_the_op() {
    let mut e = Enc::new();
    e.op(OK, 0, Some(10), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.op(OK, 3, Some(11), Some(&[(APPEND, 1, Arg2::One(1))]));
    let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
    assert!(
        err.starts_with(
            "history: history[1] (:index 11, :process 3): value 1 appended to key 1 twice"
        ),
        "{err}"
    );
    assert!(
        err.contains("written before here: history[0] (:index 10"),
        "{err}"
    );
}

#[test]
fn completion_without_invocation_is_refused() {
    let mut e = Enc::new();
    e.op(INV, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
    e.op(OK, 1, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
    let err = decode(&e.values, &e.ops, &opts()).err().unwrap();
    assert!(err.contains("history[1]"), "{err}");
    assert!(err.contains("no outstanding invocation"), "{err}");
}

#[test]
fn truncated_and_foreign_buffers_are_refused() {
    let mut e = Enc::new();
    e.op(OK, 0, Some(0), Some(&[(APPEND, 1, Arg2::One(1))]));
    let cut = &e.ops[..e.ops.len() - 1];
    let err = decode(&e.values, cut, &opts()).err().unwrap();
    assert!(err.contains("ends in the middle of a record"), "{err}");
    let err = decode(&[], b"{:type :ok}", &opts()).err().unwrap();
    assert!(err.contains("ELSI"), "{err}");
    let mut v2 = e.ops.clone();
    v2[4] = WIRE_VERSION + 1;
    let err = decode(&e.values, &v2, &opts()).err().unwrap();
    assert!(
        err.contains(&format!("wire version {}", WIRE_VERSION + 1)),
        "{err}"
    );
}

#[test]
fn interned_values_round_trip() {
    let mut e = Enc::new();
    e.ops.push(REC_OP);
    e.ops.push(1 | (2 << 4));
    sv(&mut e.ops, 0);
    e.r(V::E(":txn"));
    uv(&mut e.ops, 1);
    e.ops.push(APPEND | (1 << 2));
    e.r(V::E("[:anti 1]"));
    e.r(V::E("\"s\""));
    let l = decode(&e.values, &e.ops, &opts()).unwrap();
    let h = &l.history;
    assert_eq!(
        h.key_value(0),
        Value::Vector(vec![Value::Keyword("anti".into()), Value::Int(1)])
    );
    assert_eq!(h.value(h.mops[0].val), Value::String("s".into()));
}

#[test]
fn op_refs_replace_op_maps_only() {
    let text = "{:anomalies {:G1a [{:op {:index 3, :type :ok, :process 0, :value [[:r :x [1]]]}, \
                :mop [:r :x [1]], :type :G1a, :steps [{:type :ww, :index 9}]}]}}";
    let mut v = edn::read_one(text.as_bytes()).unwrap();
    op_refs(&mut v);
    assert_eq!(
        v.to_string(),
        "{:anomalies {:G1a [{:op #elle-si/op 3, :mop [:r :x [1]], :type :G1a, :steps [{:type :ww, :index 9}]}]}}"
    );
}

#[test]
fn options_parse_and_refuse() {
    let o = BridgeOptions::parse(
        r#"{:models ["serializable"] :anomalies [:G1] :timeout-ms 500 :workload "rw-register" :timings true}"#,
    )
    .unwrap();
    assert_eq!(o.models, ["serializable"]);
    assert_eq!(o.anomalies, ["G1"]);
    assert_eq!(o.timeout, Some(Duration::from_millis(500)));
    assert_eq!(o.workload, Some(Workload::RwRegister));
    assert!(o.timings);
    assert!(!o.op_refs);
    assert!(BridgeOptions::parse("{:op-refs true}").unwrap().op_refs);
    assert!(BridgeOptions::parse("{:bogus 1}").is_err());
    assert!(BridgeOptions::parse("[1]").is_err());
    assert!(!o.plot.scc);
    assert!(BridgeOptions::parse("{:plot-scc true}").unwrap().plot.scc);
    let err = BridgeOptions::parse("{:plot-scc 1}").err().unwrap();
    assert!(err.contains(":plot-scc must be true or false"), "{err}");
}

#[test]
fn key_options_parse_and_reach_the_history() {
    let o = BridgeOptions::parse("{:linearizable-keys true :sequential-keys false :wfr-keys nil}")
        .unwrap();
    assert!(o.keys.linearizable && !o.keys.sequential && !o.keys.wfr);
    let err = BridgeOptions::parse(r#"{:wfr-keys "yes"}"#).err().unwrap();
    assert!(err.contains(":wfr-keys must be true or false"), "{err}");
    // x = 1, then x = 2, then a read of 1, one after another: consistent
    // with a version order unless real time orders x's versions.
    let dir = std::env::temp_dir().join(format!("elle-si-jni-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.edn");
    let mut text = String::new();
    for (i, (p, inv, done)) in [
        (0, "[[:w :x 1]]", "[[:w :x 1]]"),
        (1, "[[:w :x 2]]", "[[:w :x 2]]"),
        (2, "[[:r :x nil]]", "[[:r :x 1]]"),
    ]
    .iter()
    .enumerate()
    {
        text += &format!(
            "{{:index {} :type :invoke :process {p} :f :txn :value {inv}}}\n",
            2 * i
        );
        text += &format!(
            "{{:index {} :type :ok :process {p} :f :txn :value {done}}}\n",
            2 * i + 1
        );
    }
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let plain = check_file(path, r#"{:models ["serializable"]}"#).unwrap();
    assert_eq!(plain, "{:valid? true}");
    let keyed = check_file(
        path,
        r#"{:models ["serializable"] :linearizable-keys true}"#,
    )
    .unwrap();
    assert!(keyed.starts_with("{:valid? false"), "{keyed}");
    assert!(
        keyed.contains(":sources [:initial-state :linearizable-keys]"),
        "{keyed}"
    );
}

#[test]
fn anomalies_reach_the_checker() {
    use elle_si::spec::{AnomalyType as A, Model};
    let copts = |text: &str| BridgeOptions::parse(text).unwrap().check_options();
    // Alone: only G0 (and what implies it) is prohibited.
    let o = copts("{:models [] :anomalies [:G0]}").unwrap();
    assert!(o.models.is_empty());
    assert_eq!(o.anomalies, [A::G0]);
    // Beside models.
    let o = copts(r#"{:models ["serializable"] :anomalies [:G0 ":G1c"]}"#).unwrap();
    assert_eq!(o.models, [Model::Serializable]);
    assert_eq!(o.anomalies, [A::G0, A::G1c]);
    // Beside models that allow them: looked for too.
    let o = copts(r#"{:models ["read-committed"] :anomalies [:G2-item]}"#).unwrap();
    assert_eq!(o.anomalies, [A::G2Item]);
    // An anomaly no checker finds, and an unknown one, are refused.
    let err = copts("{:models [] :anomalies [:G-cursor]}").err().unwrap();
    assert!(err.contains("G-cursor"), "{err}");
    let err = copts("{:models [] :anomalies [:G0 :G9]}").err().unwrap();
    assert!(err.starts_with("unknown anomaly type `G9`"), "{err}");
    let err = copts("{:models []}").err().unwrap();
    assert!(err.starts_with("nothing to check"), "{err}");
}

/// A history in chunks as `elle_si.HistoryEncoder` flushes them: after
/// each record, the value-table entries and the ops written since the
/// last chunk.
type Chunks = Vec<(Vec<u8>, Vec<u8>)>;

fn chunked(build: impl Fn(&mut Enc, &mut dyn FnMut(&Enc))) -> (Enc, Chunks) {
    let mut e = Enc::new();
    let mut marks = vec![(0, 0)];
    build(&mut e, &mut |e: &Enc| {
        marks.push((e.values.len(), e.ops.len()))
    });
    marks.push((e.values.len(), e.ops.len()));
    let chunks = marks
        .windows(2)
        .map(|w| {
            (
                e.values[w[0].0..w[1].0].to_vec(),
                e.ops[w[0].1..w[1].1].to_vec(),
            )
        })
        .collect();
    (e, chunks)
}

fn a_history(e: &mut Enc, mark: &mut dyn FnMut(&Enc)) {
    e.invoke_elided(0, 0);
    mark(e);
    e.op(OK, 0, Some(1), Some(&[(APPEND, 1, Arg2::One(1))]));
    mark(e);
    e.invoke_elided(1, 2);
    mark(e);
    e.op(OK, 1, Some(3), Some(&[(READ, 1, Arg2::List(vec![1, 2]))]));
    mark(e);
    e.invoke_elided(0, 4);
    mark(e);
    e.op(FAIL, 0, Some(5), Some(&[(APPEND, 1, Arg2::One(2))]));
    mark(e);
    e.invoke_elided(2, 6);
    mark(e);
    e.trailer(2, &[(READ, 1, Arg2::List(vec![1]))]);
}

const STRICT: &str = r#"{:models ["strict-serializable"]}"#;

#[test]
fn a_streamed_history_checks_as_a_whole_one() {
    let (e, chunks) = chunked(a_history);
    let whole = check_encoded(&e.values, &e.ops, STRICT).unwrap();
    // The read of [1 2] saw an aborted append: not valid.
    assert!(whole.contains(":valid? false"), "{whole}");
    let mut s = Stream::open(STRICT).unwrap();
    for (values, ops) in chunks.clone() {
        s.feed(values, ops);
    }
    assert_eq!(s.finish().unwrap(), whole);
    // One chunk, or none at all, is a stream too.
    let mut s = Stream::open(STRICT).unwrap();
    s.feed(e.values.clone(), e.ops.clone());
    assert_eq!(s.finish().unwrap(), whole);
    let err = Stream::open(STRICT).unwrap().finish().err().unwrap();
    assert!(err.contains("does not start with ELSI"), "{err}");
}

#[test]
fn a_stream_reports_the_first_bad_chunk_and_can_be_abandoned() {
    let (_, mut chunks) = chunked(a_history);
    // An unknown record tag in the fourth record.
    chunks[3].1[0] = 0x7f;
    let mut s = Stream::open(STRICT).unwrap();
    for (values, ops) in chunks.clone() {
        s.feed(values, ops);
    }
    let err = s.finish().err().unwrap();
    assert!(
        err.contains("history[3]") && err.contains("unknown record tag 127"),
        "{err}"
    );
    // Dropped half-way: the decoding thread stops, nothing hangs.
    let mut s = Stream::open(STRICT).unwrap();
    for (values, ops) in chunks.into_iter().take(2) {
        s.feed(values, ops);
    }
    drop(s);
    let err = Stream::open("{:models [\"no-such-model\"]}").err().unwrap();
    assert!(err.contains("no-such-model"), "{err}");
}

#[test]
fn a_result_over_max_result_bytes_is_an_error_naming_the_limit() {
    // One transaction reading 5,000 elements nobody appended: 5,000
    // thin-air reads, listed to the bound and counted past it.
    let list: Vec<String> = (1..=5000).map(|i| i.to_string()).collect();
    let log = format!(
        "{{:type :invoke, :f :txn, :value [[:r 1 nil]], :process 0, :index 0}}\n\
         {{:type :ok, :f :txn, :value [[:r 1 [{}]]], :process 0, :index 1}}\n",
        list.join(" ")
    );
    let f = std::env::temp_dir().join(format!("elle-si-jni-thin-{}.edn", std::process::id()));
    std::fs::write(&f, &log).unwrap();
    let path = f.to_str().unwrap();
    let whole = check_file(path, r#"{:models ["read-committed"]}"#).expect("a result");
    let bound = elle_si::report::render::Bounds::for_input(log.len(), None).bytes;
    assert!((whole.len() as u64) < bound + (64 << 10), "{}", whole.len());
    assert!(whole.contains(":also 4000"), "the rest counted");
    let err = check_file(
        path,
        r#"{:models ["read-committed"] :max-result-bytes 4096}"#,
    )
    .expect_err("over the limit");
    assert!(
        err.contains(":max-result-bytes limit of 4096 bytes"),
        "{err}"
    );
    // Timings are inside the limit too.
    let err = check_file(
        path,
        &format!(
            r#"{{:models ["read-committed"] :timings true :max-result-bytes {}}}"#,
            whole.len() + 10
        ),
    )
    .expect_err("timings over the limit");
    assert!(err.contains(":max-result-bytes"), "{err}");
    assert!(BridgeOptions::parse("{:max-result-bytes 0}").is_err());
    let _ = std::fs::remove_file(&f);
}

const WRITE: u8 = 2;

/// Key 1 = 1 written by two sessions, key 2 = 5 by the first session
/// before; the second writer read 2 = 5; a reader sees 1 = 1 and key 2's
/// initial state. Read from the second writer, the reader missed what its
/// writer had seen (a causal violation); read from the first, nothing is
/// wrong. Encoded as the JVM sends it: no file to read again.
fn repeated_value(e: &mut Enc) {
    e.invoke_elided(0, 0);
    e.op(OK, 0, Some(1), Some(&[(WRITE, 1, Arg2::One(1))]));
    e.invoke_elided(0, 2);
    e.op(OK, 0, Some(3), Some(&[(WRITE, 2, Arg2::One(5))]));
    e.invoke_elided(1, 4);
    e.op(
        OK,
        1,
        Some(5),
        Some(&[(READ, 2, Arg2::One(5)), (WRITE, 1, Arg2::One(1))]),
    );
    e.invoke_elided(2, 6);
    e.op(
        OK,
        2,
        Some(7),
        Some(&[(READ, 1, Arg2::One(1)), (READ, 2, Arg2::Nil)]),
    );
}

#[test]
fn a_repeated_value_is_decided_without_a_file_and_its_reads_named() {
    let mut e = Enc::new();
    repeated_value(&mut e);
    for model in ["causal-cerone", "read-atomic", "serializable"] {
        let out = check_encoded(&e.values, &e.ops, &format!("{{:models [\"{model}\"]}}"))
            .unwrap_or_else(|err| panic!("{model}: {err}"));
        assert!(out.starts_with("{:valid? true"), "{model}: {out}");
        assert!(
            out.contains(":elle-si/ambiguous-reads {:policy :any, :count 1"),
            "{model}: {out}"
        );
        assert!(out.contains(":writers [1 5]"), "{model}: {out}");
    }
    // Strict serializability: the reader began after both writers
    // completed, and missed 2 = 5 whichever it read.
    let out = check_encoded(&e.values, &e.ops, STRICT).unwrap();
    assert!(out.starts_with("{:valid? false"), "{out}");
}

/// A generated list-append history of a snapshot-isolated store, with
/// aborts and timeouts, as a file in the temp directory (one per seed and
/// test process).
fn generated_file(seed: u64) -> String {
    use elle_si::generator::{Db, GenOptions, generate};
    let g = generate(&GenOptions {
        sessions: 5,
        txns_per_session: 40,
        ops_per_txn: 4,
        keys: 8,
        db: Db::SnapshotIsolation,
        abort_rate: 0.1,
        info_rate: 0.05,
        seed,
        ..GenOptions::default()
    })
    .unwrap();
    let path = std::env::temp_dir().join(format!(
        "elle-si-jni-threads-{}-{seed}.edn",
        std::process::id()
    ));
    std::fs::write(&path, g.history).unwrap();
    path.to_string_lossy().into_owned()
}

const MODELS: &str =
    r#":models ["serializable" "snapshot-isolation" "causal-cerone" "read-committed"]"#;

#[test]
fn a_check_gives_the_same_result_on_one_thread_and_on_two() {
    for seed in 0..3 {
        let path = generated_file(seed);
        let one = check_file(&path, &format!("{{{MODELS} :threads 1}}")).unwrap();
        let two = check_file(&path, &format!("{{{MODELS} :threads 2}}")).unwrap();
        assert_eq!(one, two, "seed {seed}");
        // And without the option: one per core.
        assert_eq!(check_file(&path, &format!("{{{MODELS}}}")).unwrap(), one);
        assert!(one.contains(":valid?"), "{one}");
    }
    // The encoded and streamed paths too.
    let (e, chunks) = chunked(a_history);
    let with = |n| format!("{{{MODELS} :threads {n}}}");
    let one = check_encoded(&e.values, &e.ops, &with(1)).unwrap();
    assert!(one.contains(":valid? false"), "{one}");
    assert_eq!(check_encoded(&e.values, &e.ops, &with(2)).unwrap(), one);
    let mut s = Stream::open(&with(2)).unwrap();
    for (values, ops) in chunks {
        s.feed(values, ops);
    }
    assert_eq!(s.finish().unwrap(), one);
}

#[test]
fn a_bad_thread_count_is_refused_by_name() {
    for bad in ["0", "-1", "\"x\"", "1.5", "100000", ":many"] {
        let text = format!("{{:threads {bad}}}");
        let err = BridgeOptions::parse(&text).unwrap_err();
        assert!(err.contains(":threads must be"), "{bad}: {err}");
        assert!(err.contains(bad), "{bad}: {err}");
        // Refused before anything is read or started.
        assert!(
            check_file("/nonexistent", &text)
                .unwrap_err()
                .contains(":threads")
        );
        assert!(Stream::open(&text).err().unwrap().contains(":threads"));
    }
    assert_eq!(
        BridgeOptions::parse("{:threads 3}").unwrap().threads,
        Some(3)
    );
    assert_eq!(
        BridgeOptions::parse("{:threads nil}").unwrap().threads,
        None
    );
}

/// The threads a check of `n` threads ran its side-by-side checkers on
/// (`budget::join`'s halves), seen by the test hook
/// [`elle_si::check::budget::JOINED_ON`]: only the pool's own threads, in a
/// pool of `n`. Other tests run checks at the same time on rayon's global
/// pool (unnamed threads) or on these pools; each entry is told apart by
/// its thread's name.
fn pool_threads_seen(n: usize, path: &str) -> std::collections::BTreeSet<String> {
    use elle_si::check::budget::JOINED_ON;
    let prefix = format!("elle-si-{n}t-");
    let before = JOINED_ON.lock().unwrap().len();
    check_file(path, &format!("{{{MODELS} :threads {n}}}")).unwrap();
    let seen = JOINED_ON.lock().unwrap()[before..].to_vec();
    let ours: Vec<_> = seen
        .iter()
        .filter(|(name, _)| name.as_deref().is_some_and(|s| s.starts_with(&prefix)))
        .collect();
    for (name, size) in &ours {
        assert_eq!(*size, n, "{name:?} in a pool of {size}");
    }
    ours.iter().filter_map(|(name, _)| name.clone()).collect()
}

#[test]
fn a_check_uses_no_more_threads_than_asked() {
    let path = generated_file(7);
    for n in [1, 2, 3] {
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let s = pool_threads_seen(n, &path);
            // Both halves of every join ran, on the pool's threads.
            assert!(!s.is_empty(), "no join of the check ran in the pool of {n}");
            seen.extend(s);
        }
        assert!(seen.len() <= n, "{n} threads asked, {seen:?} used");
        for name in &seen {
            let i: usize = name[format!("elle-si-{n}t-").len()..].parse().unwrap();
            assert!(i < n, "{name}");
        }
    }
    // Inside the bridge's run, the pool is the size asked, not rayon's
    // global one.
    for n in [1, 2, 5] {
        let size = super::threads::run(Some(n), rayon::current_num_threads).unwrap();
        assert_eq!(size, n);
        let name = super::threads::run(Some(n), || std::thread::current().name().map(String::from))
            .unwrap();
        assert!(name.is_some_and(|s| s.starts_with(&format!("elle-si-{n}t-"))));
    }
}
