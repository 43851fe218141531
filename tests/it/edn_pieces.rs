//! The EDN reader in pieces on several threads (`history::formats::edn`'s
//! `pieces`) reads every history as the one-thread reader does: the same
//! history (indices, pairing, values and their order) or the same first
//! error (file, line, column, reason). Pieces are forced tiny here, so
//! that small histories split many times, at every kind of line: the
//! generator's histories, the project's mutants of them (`support::mutant`),
//! and hand-written files with whole-file vectors, multi-line maps,
//! comments, strings holding newlines and `{`, and Jepsen's `#jepsen.history.Op`
//! records; each also cut short and with a byte changed, for errors.

use elle_si::history::{EdnSplit, read_edn_split};

use crate::support;

/// What a read gives, as text to compare: the history and its anomalies,
/// or the error as told (its message with file, line and column).
fn outcome(text: &[u8], split: EdnSplit) -> String {
    match read_edn_split("history.edn", text.to_vec(), split) {
        Ok((h, anomalies)) => format!("{h:?}\n{anomalies:?}"),
        Err(e) => format!("error: {e}\n{e:?}"),
    }
}

/// Reads `text` on one thread and in pieces of several sizes on a pool of
/// two, and asserts they agree; returns whether it read (not an error).
fn same_every_way(pool: &rayon::ThreadPool, text: &[u8], what: &str) -> bool {
    let one = outcome(text, EdnSplit::Sequential);
    for bytes in [1, 13, 64, 257, 4096] {
        for threads in [2, 3] {
            let split = EdnSplit::Pieces { bytes, threads };
            let many = pool.install(|| outcome(text, split));
            assert!(
                one == many,
                "{what}: pieces of {bytes} bytes, {threads} at a time, differ from one thread:\n--- one thread\n{}\n--- pieces\n{}\n--- input\n{}",
                &one[..one.len().min(3000)],
                &many[..many.len().min(3000)],
                String::from_utf8_lossy(&text[..text.len().min(3000)])
            );
        }
    }
    !one.starts_with("error: ")
}

/// `text`, cut short and with a byte changed at a few places (each an
/// error or another history, both to be read alike).
fn damaged(text: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let n = text.len();
    for at in [n / 3, n / 2, n * 3 / 4] {
        out.push(text[..at].to_vec());
        for b in [b'}', b'{', b'"', b']', b'x', b'\n'] {
            let mut t = text.to_vec();
            if at < t.len() {
                t[at] = b;
                out.push(t);
            }
        }
    }
    out
}

fn pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
}

#[test]
fn generated_histories_read_the_same_in_pieces() {
    use elle_si::generator::{Db, GenOptions, generate};
    use elle_si::history::Workload;
    let pool = pool();
    let mut read = 0;
    for seed in 0..6u64 {
        let g = generate(&GenOptions {
            sessions: 4,
            txns_per_session: 25,
            ops_per_txn: 4,
            keys: 6,
            workload: if seed % 2 == 0 {
                Workload::ListAppend
            } else {
                Workload::RwRegister
            },
            db: [Db::Serializable, Db::SnapshotIsolation, Db::ReadCommitted][seed as usize % 3],
            info_rate: 0.1,
            abort_rate: 0.1,
            seed,
            ..GenOptions::default()
        })
        .unwrap();
        read += same_every_way(&pool, &g.history, &format!("seed {seed}")) as usize;
        for (i, t) in damaged(&g.history).iter().enumerate() {
            same_every_way(&pool, t, &format!("seed {seed}, damaged {i}"));
        }
    }
    assert_eq!(read, 6, "every generated history reads");
}

#[test]
fn mutants_read_the_same_in_pieces() {
    let pool = pool();
    let (mut read, mut refused) = (0, 0);
    for case in 0..40u32 {
        // The mutant's choices from a few bytes, as the property test
        // draws them.
        let bytes: Vec<u8> = (0..48u32)
            .map(|i| {
                (case
                    .wrapping_mul(2654435761)
                    .wrapping_add(i.wrapping_mul(40503))
                    >> 7) as u8
            })
            .collect();
        let m = support::mutant::mutant(&bytes);
        let text = m.edn();
        if same_every_way(&pool, &text, &format!("mutant {case} {:?}", m.mutations)) {
            read += 1;
        } else {
            refused += 1;
        }
        for (i, t) in damaged(&text).iter().enumerate().step_by(3) {
            same_every_way(&pool, t, &format!("mutant {case}, damaged {i}"));
        }
    }
    assert!(read > 0, "some mutants read ({refused} refused)");
}

/// Forms that span lines, and lines that look like an op's start but are
/// inside one: each piece start guessed there is found wrong and read
/// again.
#[test]
fn forms_across_lines_read_the_same_in_pieces() {
    let pool = pool();
    let op = |i: usize, t: &str, v: &str| {
        format!("{{:index {i}, :type :{t}, :process 0, :f :txn, :value {v}}}")
    };
    let inv = op(0, "invoke", "[[:append 1 1] [:r 1 nil]]");
    let ok = op(1, "ok", "[[:append 1 1] [:r 1 [1]]]");
    let inv2 = op(2, "invoke", "[[:r 1 nil]]");
    let ok2 = op(3, "ok", "[[:r 1 [1]]]");
    let cases = [
        // One op per line, and as a whole-file vector across lines.
        format!("{inv}\n{ok}\n{inv2}\n{ok2}\n"),
        format!("[{inv}\n{ok}\n{inv2}\n{ok2}]\n"),
        format!("[\n{inv}\n{ok}\n{inv2}\n{ok2}\n]\n"),
        format!("(\n{inv}\n {ok}\n{inv2}\n{ok2})"),
        // Multi-line maps, a map's key at a line's start.
        format!(
            "{{:index 0,\n:type :invoke,\n :process 0, :f :txn,\n:value [[:append 1 1]]}}\n{{:index 1, :type :ok, :process 0, :f :txn, :value\n[[:append 1 1]]}}\n{inv2}\n{ok2}\n"
        ),
        // Comments, with what looks like an op inside.
        format!("; a comment\n{inv}\n;{ok}\n{ok}\n; {{:type :ok\n{inv2}\n{ok2}\n"),
        // Strings holding newlines and `{` at a line's start: a nemesis
        // op's value, and an :error.
        format!(
            "{inv}\n{{:type :info, :process :nemesis, :f :kill, :value \"a\n{{:type :ok, :process 0}}\n\"}}\n{ok}\n{inv2}\n{{:index 3, :type :ok, :process 0, :f :txn, :value [[:r 1 [1]]], :error \"x\n{{\n\"}}\n"
        ),
        // Discarded forms across lines.
        format!("{inv}\n#_\n{{:type :ok, :process 0}}\n{ok}\n#_ {{:a\n{{:b 1}}}}\n{inv2}\n{ok2}\n"),
        // Jepsen's records.
        format!(
            "#jepsen.history.Op{inv}\n#jepsen.history.Op\n{ok}\n#jepsen.history.Op {inv2}\n{ok2}\n"
        ),
        // Errors: an unclosed map, then more lines; a vector never closed;
        // a stray closing bracket; trailing text after the vector.
        format!("{inv}\n{{:index 1, :type :ok, :process 0\n{inv2}\n{ok2}\n"),
        format!("[{inv}\n{ok}\n{inv2}\n{ok2}\n"),
        format!("{inv}\n{ok}\n]\n{inv2}\n{ok2}\n"),
        format!("[{inv}\n{ok}]\n{inv2}\n"),
        format!("{inv}\n{ok}\n{{:index 1, :type :ok, :process 0, :f :txn, :value [[:r 1 [1]]]}}\n"),
        format!("{inv}\n\"open\n{ok}\n{inv2}\n{ok2}\n"),
    ];
    let read: Vec<bool> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| same_every_way(&pool, c.as_bytes(), &format!("case {i}")))
        .collect();
    for i in [0, 1, 2, 3, 4, 5, 7, 8] {
        assert!(read[i], "case {i} reads");
    }
    for (i, r) in read.iter().enumerate().skip(9) {
        assert!(!r, "case {i} is an error");
    }
}
