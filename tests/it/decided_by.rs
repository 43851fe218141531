//! `:elle-si/decided-by`: with `-v`, the result map says how each verdict
//! the polygraph's checkers gave was reached (the strategy of the plan and
//! what it decided on, per model); without it, the map is Elle's.

use crate::support;

/// Sessions take turns, each reading what the other wrote before: the
/// logged order of writes is a witness (the plan's unit tests' history).
const TURNS: &str = "w(1,1,0,1)\nr(1,1,1,2)\nw(2,1,1,2)\nr(2,1,0,3)\nw(1,2,0,3)\nr(1,2,1,4)\n\
                     w(2,2,1,4)\nr(2,2,0,5)\nw(1,3,0,5)\nr(1,3,1,6)\nw(2,3,1,6)\n";

#[test]
fn the_result_map_names_the_deciding_strategy_with_v_only() {
    let models = "serializable,strict-serializable,prefix";
    let (code, out) = support::run_on("t.txt", TURNS, &["check", "-c", models, "-o", "edn"]);
    assert_eq!((code, out.trim()), (0, "{:valid? true}"));
    let (code, out) = support::run_on("t.txt", TURNS, &["check", "-c", models, "-o", "edn", "-v"]);
    assert_eq!(code, 0, "{out}");
    // Serializable: its own glance, the logged order. Strict: the text
    // format has no times, so real time orders nothing and the
    // strong-session variant decides, by its logged order. Prefix: its
    // whole polygraph.
    let map = "{:valid? true, :elle-si/decided-by {:serializable {:strategy :logged-order}, \
               :strict-serializable {:strategy :without, :model :strong-session-serializable, \
               :by {:strategy :logged-order}}, :prefix {:strategy :whole}}}";
    assert!(out.starts_with(map), "{out}");
    assert!(
        out.contains("PL-3: decided by the logged order of writes as a witness"),
        "{out}"
    );
    let (_, json) = support::run_on("t.txt", TURNS, &["check", "-c", "ser", "-o", "json", "-v"]);
    assert!(
        json.contains(r#""elle-si/decided-by":{"serializable":{"strategy":"logged-order"}}"#),
        "{json}"
    );
}

#[test]
fn an_invalid_verdict_names_its_strategy_the_same_on_any_threads() {
    // A causal store's races: write skews, which serializability rules
    // out; small and sessioned, so its whole polygraph decides, its solver
    // bounded first.
    let dir = std::env::temp_dir().join(format!("elle-si-decided-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("racy.edn");
    support::generate(
        &file,
        &[
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "5",
            "--txns-per-session",
            "60",
            "--ops-per-txn",
            "4",
            "--keys",
            "8",
            "--seed",
            "5",
        ],
    );
    let run = |jobs: &str| {
        let out = crate::support::cli()
            .args(["check", "-j", jobs, "-c", "serializable,snapshot-isolation"])
            .args(["-o", "edn", "-v"])
            .arg(&file)
            .output()
            .expect("run elle-si");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run("1");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            ":elle-si/decided-by {:snapshot-isolation {:strategy :whole, :bounded true}, \
             :serializable {:strategy :whole, :bounded true}}"
        ),
        "{out}"
    );
    assert_eq!(run("2"), (code, out));
    let _ = std::fs::remove_dir_all(&dir);
}
