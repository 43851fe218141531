//! Agreement with Elle's own verdicts (`elle-verdicts.tsv`, Elle 0.2.8 on
//! the shared histories), wherever Elle decides. Where we differ, Elle is
//! incomplete or crashes, and the exceptions below say why.

use elle_si::report::Valid;

use crate::support::*;

/// (file, model, our verdict, why we differ from Elle)
const DIFFERENCES: &[(&str, &str, &str, &str)] = &[
    // Elle's rw-register checker draws no edge from a read of a value
    // nobody wrote (3 here) and passes the history; it is a thin-air read.
    (
        "elle/rw-register.edn",
        "*",
        "false",
        "thin-air read Elle ignores",
    ),
];

fn parse_valid(s: &str) -> Option<Valid> {
    match s {
        "true" => Some(Valid::True),
        "false" => Some(Valid::False),
        ":unknown" => Some(Valid::Unknown),
        _ => None,
    }
}

#[test]
fn verdicts_agree_with_elle() {
    if !corpus() {
        return;
    }
    let tsv = std::fs::read_to_string(shared("elle-verdicts.tsv")).expect("elle-verdicts.tsv");
    let mut checked = 0;
    for line in tsv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, model, elle) = (cols[0], cols[1], cols[2]);
        let l = load(&shared(file));
        let ours = verdict(&l, model);
        if let Some(&(_, _, v, why)) = DIFFERENCES
            .iter()
            .find(|d| d.0 == file && (d.1 == "*" || d.1 == model))
        {
            assert_eq!(Some(ours.0), parse_valid(v), "{file} at {model}: {why}");
            continue;
        }
        match parse_valid(elle) {
            // Elle crashed (a thin-air read in tap-a): we must still decide.
            None => assert_eq!(
                ours.0,
                Valid::False,
                "{file} at {model}: Elle crashed ({elle})"
            ),
            Some(e) => assert_eq!(
                ours.0,
                e,
                "{file} at {model}: Elle says {elle} {:?}, we say {:?}",
                cols.get(3),
                ours
            ),
        }
        checked += 1;
    }
    assert!(checked > 60, "only {checked} rows checked");
}

/// Anomaly names match Elle's where the cycle is unambiguous.
#[test]
fn anomaly_names_match_elle() {
    if !corpus() {
        return;
    }
    let cases: &[(&str, &str, &[&str])] = &[
        ("elle/si-without-g-single.edn", "serializable", &["G2-item"]),
        (
            "elle/si-without-g-single.edn",
            "strict-serializable",
            &["G-single-item-realtime", "G2-item"],
        ),
        ("elle/list-append-gh-30.edn", "serializable", &["G2-item"]),
        (
            "elle/paper-example-with-process.edn",
            "strong-session-snapshot-isolation",
            &["G-single-item"],
        ),
        (
            "tap-cases/list-append/tap-g.edn",
            "strong-session-snapshot-isolation",
            &["G1c-process"],
        ),
        (
            "tap-cases/list-append/tap-m.edn",
            "strong-session-snapshot-isolation",
            &["G-single-item-process"],
        ),
        (
            "tap-cases/list-append/tap-j.edn",
            "serializable",
            &["incompatible-order", "internal"],
        ),
        (
            "violations/mongodb-aborted-read.edn",
            "strong-session-snapshot-isolation",
            &["G-nonadjacent-item-process", "G1a", "incompatible-order"],
        ),
    ];
    for &(file, model, types) in cases {
        let l = load(&shared(file));
        let (_, ours) = verdict(&l, model);
        assert_eq!(ours, types, "{file} at {model}");
    }
}
