//! Threads change nothing a user sees: a run over several files, at
//! several models, prints byte for byte the same with `-j 1` as with more
//! threads (files checked at once, the causal levels beside SI and
//! serializability within a check), in the order the files were given,
//! a file that cannot be read included.

use std::path::{Path, PathBuf};

use crate::support;

/// `elle-si check -j JOBS ARGS FILES`: exit status, stdout, stderr.
fn check(jobs: &str, args: &[&str], files: &[PathBuf]) -> (Option<i32>, Vec<u8>, Vec<u8>) {
    let out = crate::support::cli()
        .args(["check", "-j", jobs])
        .args(args)
        .args(files)
        .output()
        .expect("running elle-si check");
    (out.status.code(), out.stdout, out.stderr)
}

fn histories(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut files = Vec::new();
    let shapes: &[&[&str]] = &[
        &[
            "--workload",
            "list-append",
            "--db",
            "causal",
            "--sessions",
            "4",
        ],
        &[
            "--workload",
            "rw-register",
            "--db",
            "causal",
            "--sessions",
            "3",
        ],
        &[
            "--workload",
            "list-append",
            "--db",
            "serializable",
            "--sessions",
            "5",
        ],
        &[
            "--workload",
            "rw-register",
            "--db",
            "snapshot-isolation",
            "--sessions",
            "4",
            "--long-fork",
            "0.2",
        ],
        &[
            "--workload",
            "list-append",
            "--db",
            "snapshot-isolation",
            "--sessions",
            "3",
        ],
    ];
    for (i, shape) in shapes.iter().enumerate() {
        for seed in 1..=2 {
            let f = dir.join(format!("h{i}-{seed}.edn"));
            let seed = seed.to_string();
            let mut args = shape.to_vec();
            args.extend(["--txns-per-session", "60", "--seed", &seed]);
            support::generate(&f, &args);
            files.push(f);
        }
        if i == 2 {
            // One that cannot be read, among them.
            let bad = dir.join("unreadable.edn");
            std::fs::write(&bad, "{:type :ok, :process 0, :value [[:r 1 ").unwrap();
            files.push(bad);
        }
    }
    files
}

#[test]
fn every_thread_count_prints_the_same() {
    let dir = std::env::temp_dir().join(format!("elle-si-parallel-{}", std::process::id()));
    let files = histories(&dir);
    let models = "read-committed,read-atomic,causal-cerone,snapshot-isolation,serializable,prefix,parallel-snapshot-isolation,strict-serializable";
    for output in ["text", "edn", "json"] {
        let args = ["-c", models, "-o", output];
        let one = check("1", &args, &files);
        // The unreadable file fails the run; the others are all told.
        assert_eq!(one.0, Some(3), "{}", String::from_utf8_lossy(&one.2));
        let stdout = String::from_utf8_lossy(&one.1);
        if output == "text" {
            let told: Vec<usize> = files
                .iter()
                .filter(|f| !f.ends_with("unreadable.edn"))
                .map(|f| {
                    stdout
                        .find(&format!("{}:", f.display()))
                        .unwrap_or_else(|| panic!("{} not told: {stdout}", f.display()))
                })
                .collect();
            assert!(
                told.windows(2).all(|w| w[0] < w[1]),
                "out of order: {stdout}"
            );
        }
        for jobs in ["2", "3", "8"] {
            let many = check(jobs, &args, &files);
            assert_eq!(one.0, many.0, "-j {jobs} -o {output}");
            assert!(one.1 == many.1, "-j {jobs} -o {output}: stdout differs");
            assert!(one.2 == many.2, "-j {jobs} -o {output}: stderr differs");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
