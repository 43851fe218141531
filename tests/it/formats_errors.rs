//! Bad input in each format gives an error naming the file and the place
//! (line and column in text formats, byte offset and record in binary
//! ones) and the reason; never a panic.

use elle_si::history::{self, Format, LoadOptions, formats};

fn err(name: &str, bytes: &[u8], format: Option<Format>) -> String {
    let opts = LoadOptions {
        format,
        ..LoadOptions::default()
    };
    match history::load_bytes(name, bytes.to_vec(), opts) {
        Ok(_) => panic!("{name}: {:?} was accepted", String::from_utf8_lossy(bytes)),
        Err(e) => e.to_string(),
    }
}

fn has(e: &str, parts: &[&str]) {
    for p in parts {
        assert!(e.contains(p), "`{p}` not in: {e}");
    }
}

#[test]
fn dbcop_hist_errors() {
    let e = err("h.hist", b"[x:=1 y==2]\n---\n[x==1 y=?]\n", None);
    has(&e, &["h.hist:3:7:", "y=?"]);
    let e = err("h.hist", b"[x:=1]\n[]\n", None);
    has(&e, &["h.hist:2:1:", "empty transaction"]);
    let e = err("h.hist", b"[x:=1\n", None);
    has(&e, &["h.hist:1:1:", "no closing"]);
    let e = err("h.hist", b"[x:=-1]\n", None);
    has(&e, &["h.hist:1:2:", "non-negative"]);
    let e = err("h.hist", b"[x:=1]\n--x\n", None);
    has(&e, &["h.hist:2:3:"]);
}

#[test]
fn dbcop_json_errors() {
    let e = err(
        "d.json",
        b"{\"data\": [[\n {\"events\": [[\"w\", 0, 1]], \"committed\": true},\n {\"events\": [[\"x\", 0, 1]], \"committed\": true}]]}",
        Some(Format::DbcopJson),
    );
    has(&e, &["d.json:3:14:", "expected an event"]);
    let e = err(
        "d.json",
        b"[[{\"events\": [[\"w\", 0, 1]]}]]",
        Some(Format::DbcopJson),
    );
    has(&e, &["d.json:1:3:", "committed"]);
    let e = err(
        "d.json",
        b"[[{\"events\": [[\"w\", 0, 1]",
        Some(Format::DbcopJson),
    );
    has(&e, &["d.json:1:"]);
    // Duplicate writes, refused on request, name both places.
    let bytes = b"[[{\"events\": [[\"w\", 0, 1]], \"committed\": true}],\n [{\"events\": [[\"w\", 0, 1]], \"committed\": false}]]";
    let opts = LoadOptions {
        format: Some(Format::DbcopJson),
        duplicates: history::Duplicates::Reject,
        ..LoadOptions::default()
    };
    let e = match history::load_bytes("d.json", bytes.to_vec(), opts) {
        Ok(_) => panic!("duplicate writes accepted under reject"),
        Err(e) => e.to_string(),
    };
    has(
        &e,
        &["d.json:2:15:", "written the value 1 twice", "session 2"],
    );
}

#[test]
fn dbcop_bincode_errors() {
    // A header, then a session count far beyond the file.
    let mut b = vec![0u8; 40];
    for _ in 0..3 {
        b.extend_from_slice(&0u64.to_le_bytes());
    }
    b.extend_from_slice(&1000u64.to_le_bytes());
    let e = err("h.bincode", &b, None);
    has(&e, &["at byte 64", "session count", "1000 items"]);
    // One session, one transaction, one event whose `write` byte is 7.
    let mut b = vec![0u8; 40];
    for _ in 0..3 {
        b.extend_from_slice(&0u64.to_le_bytes());
    }
    for n in [1u64, 1, 1] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.push(7);
    b.extend_from_slice(&[0; 17]);
    b.push(1);
    let e = err("h.bincode", &b, None);
    has(
        &e,
        &[
            "at byte 88",
            "session 1, transaction 0, event 0: field `write`",
            "0x07",
        ],
    );
    // Trailing bytes.
    let mut b = vec![0u8; 72];
    b.push(9);
    let e = err("h.bincode", &b, None);
    has(&e, &["at byte 72", "1 bytes follow"]);
}

#[test]
fn elle_cli_json_errors() {
    let e = err(
        "h.json",
        b"[{\"type\": \"ok\", \"process\": 0, \"value\": [[\"append\", 1, 1]]},\n {\"type\": \"ok\", \"process\": 0, \"value\": [[\"cas\", 1, 1]]}]",
        None,
    );
    has(&e, &["h.json:2:2:", "expected a micro-op", "cas"]);
    let e = err(
        "h.json",
        b"[{\"type\": \"ok\", \"process\": 0, \"value\": []},\n {\"type\": \"invoke\", \"process\": 0, \"value\": []}]",
        None,
    );
    has(&e, &["h.json:2:2:", "began with a completion"]);
    let e = err(
        "h.json",
        b"[{\"type\": \"ok\", \"process\": 0, \"value\": [}]",
        None,
    );
    has(&e, &["h.json:1:", "bad JSON"]);
    // Jepsen's :index rule, as for EDN.
    let e = err(
        "h.json",
        b"[{\"index\": 3, \"type\": \"invoke\", \"process\": 0, \"value\": []},\n {\"index\": 2, \"type\": \"ok\", \"process\": 0, \"value\": []}]",
        None,
    );
    has(&e, &["h.json:2:2:", ":index 2 is not above"]);
    let e = err(
        "h.json",
        b"[{\"index\": 0, \"type\": \"invoke\", \"process\": 0, \"value\": []},\n {\"index\": 1.5, \"type\": \"ok\", \"process\": 0, \"value\": []}]",
        None,
    );
    has(&e, &["h.json:2:2:", "\"index\" must be a 64-bit integer"]);
}

#[test]
fn unknown_content() {
    let e = err("h", b"hello\n", None);
    has(&e, &["h: cannot tell the format"]);
}

/// Mutated samples of every format: an error or a history, never a panic.
#[test]
fn mutated_samples_never_panic() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // A dbcop bincode sample of our own: the dbcop JSON sample, rewritten.
    let bincode = {
        let json =
            std::fs::read(crate::support::root().join("test-logs/formats/dbcop.json")).unwrap();
        let l = history::load_bytes("dbcop.json", json, LoadOptions::default()).unwrap();
        let mut out = Vec::new();
        formats::write(
            &l.history,
            Format::DbcopBincode,
            &mut out,
            &mut formats::Notes::default(),
        )
        .unwrap();
        out
    };
    let samples: Vec<(Format, Vec<u8>)> = vec![
        (
            Format::Json,
            std::fs::read(
                crate::support::root().join("test-logs/formats/elle-cli-list-append.json"),
            )
            .unwrap(),
        ),
        (
            Format::DbcopJson,
            std::fs::read(crate::support::root().join("test-logs/formats/dbcop.json")).unwrap(),
        ),
        (
            Format::DbcopHist,
            std::fs::read(crate::support::root().join("test-logs/formats/dbcop.hist")).unwrap(),
        ),
        (Format::DbcopBincode, bincode),
        (
            Format::Viper,
            std::fs::read(crate::support::root().join("test-logs/formats/viper/J1.log")).unwrap(),
        ),
        (Format::Cobra, {
            let mut b = Vec::new();
            for (op, xs) in [
                (b'S', vec![1i64]),
                (b'W', vec![5, 6, 7]),
                (b'R', vec![1, 5, 6, 7]),
                (b'C', vec![1]),
            ] {
                b.push(op);
                for x in xs {
                    b.extend_from_slice(&x.to_be_bytes());
                }
            }
            b
        }),
    ];
    let alphabet = b"[]{}(),:=\"!?-0129 \n\x00\x01\xffrwS";
    for (f, base) in &samples {
        for _ in 0..400 {
            let mut b = base.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() as usize) % b.len().max(1);
                match next() % 3 {
                    0 if !b.is_empty() => b[i] = alphabet[(next() as usize) % alphabet.len()],
                    1 if !b.is_empty() => {
                        b.remove(i);
                    }
                    _ => b.insert(i.min(b.len()), alphabet[(next() as usize) % alphabet.len()]),
                }
            }
            if next() % 5 == 0 {
                let n = (next() as usize) % (b.len() + 1);
                b.truncate(n);
            }
            let name = match f {
                Format::Viper => "J1.log",
                Format::Cobra => "T1.log",
                _ => "h",
            };
            let opts = LoadOptions {
                format: Some(*f),
                ..LoadOptions::default()
            };
            let _ = history::load_bytes(name, b, opts);
        }
    }
}
