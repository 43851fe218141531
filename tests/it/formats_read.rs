//! Every format reads its samples into the model with the sessions,
//! statuses and reads-from the file says (hand-made logs in test-logs/, and
//! the shared histories in ../shared/histories).

use std::path::{Path, PathBuf};

use elle_si::check::basic;
use elle_si::history::Duplicates;
use elle_si::history::model::*;
use elle_si::history::{self, Format, LoadOptions, Loaded};

use crate::support;

fn statuses(h: &History) -> Vec<Status> {
    h.txns.iter().map(|t| t.status).collect()
}

/// Each read's writer as (writer txn, writer's position in it), or a
/// `from` constant as (u32::MAX, from).
fn reads_from(h: &History) -> Vec<(u32, u32)> {
    h.mops
        .iter()
        .filter(|m| m.is_read())
        .map(|m| match m.observed() {
            Some(w) => {
                let t = h.txn_of(w);
                (t, w - h.txns[t as usize].start)
            }
            None => (u32::MAX, m.from),
        })
        .collect()
}

fn anomaly_names(l: &Loaded) -> Vec<String> {
    let mut v: Vec<String> = l
        .anomalies
        .iter()
        .chain(basic::anomalies(&l.history).iter())
        .map(|a| a.name().to_string())
        .collect();
    v.sort();
    v
}

const INIT: (u32, u32) = (u32::MAX, from::INITIAL);

#[test]
fn elle_cli_list_append() {
    let l = support::load(&support::root().join("test-logs/formats/elle-cli-list-append.json"));
    assert_eq!(l.format, Format::Json);
    let h = &l.history;
    assert_eq!(h.workload, Some(Workload::ListAppend));
    use Status::*;
    assert_eq!(
        statuses(h),
        [Committed, Committed, Aborted, Indeterminate, Committed]
    );
    assert_eq!(h.stats.skipped_ops, 1, "the nemesis op");
    let procs: Vec<i64> = h.sessions.iter().map(|s| s.process).collect();
    assert_eq!(procs, [1, 2, 3, 4, 5]);
    // T1 reads key 1 = [1] from T0; T4 reads [1 2] on both keys.
    assert_eq!(reads_from(h), [INIT, (0, 0), (2, 0), (3, 0)]);
    // The :info completion had no value: the invocation's append stands.
    assert_eq!(h.txn_mops(3).len(), 1);
    assert_eq!(h.read_list(h.txns[4].start).len(), 2);
    assert!(anomaly_names(&l).contains(&"G1a".to_string()));
}

#[test]
fn elle_cli_rw_register_keeps_string_keys() {
    let l = support::load(&support::root().join("test-logs/formats/elle-cli-rw-register.json"));
    let h = &l.history;
    assert_eq!(h.workload, Some(Workload::RwRegister));
    assert_eq!(h.key_value(0), elle_si::edn::Value::String("x".into()));
    assert_eq!(reads_from(h), [(0, 0), INIT]);
    assert!(anomaly_names(&l).is_empty());
}

/// dbcop's JSON and text form of the same history (variables 0/1 vs x/y).
#[test]
fn dbcop_json_and_hist() {
    for (f, fmt) in [
        ("dbcop.json", Format::DbcopJson),
        ("dbcop.hist", Format::DbcopHist),
    ] {
        let l = support::load(&support::root().join("test-logs/formats").join(f));
        assert_eq!(l.format, fmt);
        let h = &l.history;
        use Status::*;
        assert_eq!(
            statuses(h),
            [Committed, Aborted, Committed, Committed],
            "{f}"
        );
        assert_eq!(h.sessions.len(), 2);
        assert_eq!(h.sessions[1].txns, [2, 3]);
        assert_eq!(reads_from(h), [(0, 0), INIT, (1, 0)], "{f}");
        assert_eq!(anomaly_names(&l), ["G1a"], "{f}");
    }
}

#[test]
fn viper_directory() {
    let l = support::load(&support::root().join("test-logs/formats/viper"));
    assert_eq!(l.format, Format::Viper);
    let h = &l.history;
    assert_eq!(h.txns.len(), 3);
    let procs: Vec<i64> = h.sessions.iter().map(|s| s.process).collect();
    assert_eq!(procs, [1, 2]);
    // J2 reads key 2 = 0, which nobody wrote: the initial state.
    assert_eq!(reads_from(h), [(0, 0), (1, 1), INIT]);
}

/// A Cobra record.
enum Rec {
    S(i64),
    C(i64),
    W(i64, i64),
    R(i64, i64, i64),
    /// A write of a value: write id, key, value.
    Wv(i64, i64, i64),
    /// A read of a value: writer, write id, key, value.
    Rv(i64, i64, i64, i64),
}

fn cobra_bytes(recs: &[Rec]) -> Vec<u8> {
    let mut b = Vec::new();
    for r in recs {
        let mut put = |op: u8, xs: &[i64]| {
            b.push(op);
            for x in xs {
                b.extend_from_slice(&x.to_be_bytes());
            }
        };
        match *r {
            Rec::S(t) => put(b'S', &[t]),
            Rec::C(t) => put(b'C', &[t]),
            Rec::W(wid, k) => put(b'W', &[wid, k, 77]),
            Rec::R(wt, wid, k) => put(b'R', &[wt, wid, k, 77]),
            Rec::Wv(wid, k, v) => put(b'W', &[wid, k, v]),
            Rec::Rv(wt, wid, k, v) => put(b'R', &[wt, wid, k, v]),
        }
    }
    b
}

/// The error loading `p` gives, as the user reads it, with the default
/// options except that repeated values are refused (as dbcop refuses
/// them; by default a read of one may have observed either write); `why`
/// says why it must fail.
fn refused(p: &Path, why: &str) -> String {
    let opts = LoadOptions {
        duplicates: Duplicates::Reject,
        ..LoadOptions::default()
    };
    history::load(p, opts, None).err().expect(why).to_string()
}

/// Writes Cobra records as the log `name` in `d`.
fn write_log(d: &Path, name: &str, recs: &[Rec]) {
    std::fs::write(d.join(name), cobra_bytes(recs)).unwrap();
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("elle-si-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn cobra_directory() {
    use Rec::*;
    const INIT: i64 = 0xbebeebee;
    let d = temp_dir("cobra");
    let t1 = (1i64 << 32) + 1;
    let t2 = (2i64 << 32) + 1;
    let t3 = (2i64 << 32) + 2;
    write_log(
        &d,
        "T1.log",
        &[S(t1), R(INIT, INIT, 500), W(11, 500), W(12, 600), C(t1)],
    );
    write_log(
        &d,
        "T2.log",
        &[
            S(t2),
            R(t1, 11, 500),
            C(t2),
            S(t3),
            R(t1, 12, 600),
            W(13, 600),
            C(t3),
        ],
    );
    let l = support::load(&d);
    assert_eq!(l.format, Format::Cobra);
    let h = &l.history;
    assert_eq!(h.txns.len(), 3);
    assert_eq!(h.sessions.len(), 2);
    assert_eq!(h.sessions[1].txns, [1, 2]);
    assert_eq!(reads_from(h), [(u32::MAX, from::INITIAL), (0, 1), (0, 2)]);
    // A read naming the wrong writer transaction is refused.
    write_log(&d, "T2.log", &[S(t2), R(t3, 11, 500), C(t2)]);
    let e = refused(&d, "a wrong writer id must be refused");
    assert!(e.contains("T2.log") && e.contains("at byte 9"), "{e}");
    // A truncated record names its byte offset and field.
    let mut b = cobra_bytes(&[S(t2), R(t1, 11, 500), C(t2)]);
    b.truncate(20);
    std::fs::write(d.join("T2.log"), b).unwrap();
    let e = refused(&d, "truncation must be refused");
    assert!(e.contains("at byte 18") && e.contains("write_id"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn cobra_logs_naming_versions_by_value() {
    // VeriStrong's TPC-C / RUBiS / Twitter logs: every write carries the
    // universal write id, and reads name it as writer and write id.
    use Rec::*;
    const INIT_TXN: i64 = 0xbebeebee;
    const U: i64 = 0xabddefee;
    let d = temp_dir("cobra-by-value");
    let (t1, t2, t3, t4) = (1 << 32, 2 << 32, (2 << 32) + 1, 3 << 32);
    write_log(
        &d,
        "T1.log",
        &[S(t1), R(INIT_TXN, INIT_TXN, 500), Wv(U, 500, 5), C(t1)],
    );
    write_log(
        &d,
        "T2.log",
        &[
            S(t2),
            Rv(U, U, 500, 5),
            C(t2),
            S(t3),
            Rv(U, U, 500, 5),
            Wv(U, 500, 6),
            C(t3),
        ],
    );
    let l = support::load(&d);
    assert_eq!(l.format, Format::Cobra);
    let h = &l.history;
    assert_eq!(h.txns.len(), 3);
    assert_eq!(reads_from(h), [INIT, (0, 1), (0, 1)]);
    assert!(h.candidates.is_empty());
    // A third session writes value 5 again: refused on request, naming
    // the file and byte of each write...
    write_log(&d, "T3.log", &[S(t4), Wv(U, 500, 5), C(t4)]);
    let e = refused(&d, "a value written twice is refused on request");
    assert!(e.contains("T3.log") && e.contains("at byte 9"), "{e}");
    assert!(e.contains("byte 42") && e.contains("T1.log"), "{e}");
    // ...in Cobra's terms, not dbcop's.
    assert!(
        e.contains("Cobra's logs name a version by its value") && !e.contains("dbcop requires"),
        "{e}"
    );
    // ...and by default (`any`), both reads may have observed either
    // write.
    let l = support::load(&d);
    assert_eq!(l.history.candidates.len(), 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn shared_dbcop_tap_cases() {
    if !support::corpus() {
        return;
    }
    // PolySI's converter made these: session 1 writes value 1 to every key
    // (the former initial state), values renumbered. tap-a is a thin-air
    // read, tap-b an aborted read that the converter turned into a read of
    // an unwritten value, tap-d NotMyOwnWrite.
    for (case, expect) in [
        ("a", "thin-air-read"),
        ("b", "thin-air-read"),
        ("d", "internal"),
        ("c", "future-read"),
    ] {
        let l = support::load(&support::shared(&format!(
            "tap-cases/dbcop-bincode/tap-{case}.bincode"
        )));
        assert_eq!(l.format, Format::DbcopBincode);
        let h = &l.history;
        assert!(h.sessions.len() >= 2, "tap-{case}");
        let first = &h.txn_mops(0);
        assert!(
            first
                .iter()
                .all(|m| m.is_write() && h.value(m.val).as_int() == Some(1)),
            "tap-{case}: the converted initial state"
        );
        assert!(
            anomaly_names(&l).contains(&expect.to_string()),
            "tap-{case}: {:?}",
            anomaly_names(&l)
        );
    }
}

#[test]
fn shared_dbcop_10k_duplicates() {
    if !support::corpus() {
        return;
    }
    let rh = support::shared("valid/dbcop-bincode/general-RH-10k.bincode");
    let e = refused(&rh, "duplicate writes are refused on request");
    assert!(
        e.contains("at byte 304166") && e.contains("variable 4394") && e.contains("session 5"),
        "{e}"
    );
    for (f, pairs) in [("RH", 25), ("WH", 2569)] {
        let p = support::shared(&format!("valid/dbcop-bincode/general-{f}-10k.bincode"));
        let opts = LoadOptions {
            duplicates: Duplicates::LastWriter,
            ..LoadOptions::default()
        };
        let l = history::load(&p, opts, None).unwrap();
        let h = &l.history;
        assert_eq!(h.txns.len(), 10_000);
        assert_eq!(h.sessions.len(), 25);
        assert_eq!(h.mops.len(), 80_000);
        assert!(h.txns.iter().all(|t| t.status == Status::Committed));
        assert!(
            l.notes
                .lines
                .iter()
                .any(|n| n.starts_with(&format!("{pairs} "))),
            "{:?}",
            l.notes
        );
        // The guess travels typed, beside the note that tells it.
        assert_eq!(
            l.history.repeated.as_ref().map(|r| r.policy),
            Some(Duplicates::LastWriter),
            "{f}"
        );
        // No read is left unresolved: every value read was written.
        assert!(h.mops.iter().all(|m| m.from != from::THIN_AIR), "{f}");
    }
}

#[test]
fn shared_text_and_edn_detect() {
    if !support::corpus() {
        return;
    }
    let l = support::load(&support::shared("tap-cases/text/tap-b.txt"));
    assert_eq!(l.format, Format::Text);
    let l = support::load(&support::shared("tap-cases/list-append/tap-b.edn"));
    assert_eq!(l.format, Format::Edn);
    assert_eq!(anomaly_names(&l), ["G1a"]);
}

#[test]
fn detection_by_content() {
    let cases: [(&str, &[u8], Format); 7] = [
        ("h", b"{:type :ok, :process 0, :value []}\n", Format::Edn),
        (
            "h",
            b"[{\"type\": \"ok\", \"process\": 0, \"value\": []}]",
            Format::Json,
        ),
        (
            "h",
            b"[[{\"events\": [], \"committed\": true}]]",
            Format::DbcopJson,
        ),
        ("h", b"{\"data\": []}", Format::DbcopJson),
        ("h", b"[x:=1]\n---\n[x==1]\n", Format::DbcopHist),
        ("h", b"r(1,0,0,0)\n", Format::Text),
        (
            "J1.log",
            b"{\"value\": [[\"r\", 1, 0, false]]}\n",
            Format::Viper,
        ),
    ];
    for (name, bytes, f) in cases {
        assert_eq!(Format::detect(Path::new(name), bytes), Some(f), "{bytes:?}");
    }
    assert_eq!(
        Format::detect(Path::new("x"), &[0, 0, 0, 0, 0, 0, 0, 0]),
        Some(Format::DbcopBincode)
    );
}
