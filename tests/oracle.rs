//! elle-si against a brute-force oracle of every level (see
//! `oracle_support`): random small histories from a fixed seed, and every
//! history of a tiny shape. The long run (many more, larger histories):
//!
//! ```text
//! cargo test --release --test oracle -- --ignored long
//! ```

mod oracle_support;

use oracle_support::Tally;
use oracle_support::histories::{Rng, exhaustive, random};
use oracle_support::history::Workload;

fn report(t: &Tally) {
    eprintln!("{}", t.summary());
    for d in t.smallest() {
        eprintln!(
            "DISAGREE {} vs {}: oracle {}, elle-si {:?}\n{}",
            d.level, d.model, d.oracle, d.elle_si, d.edn
        );
    }
}

fn run_random(seed: u64, count: usize, max_txns: usize) -> Tally {
    let mut t = Tally::default();
    let mut rng = Rng::new(seed);
    for i in 0..count {
        let w = if i % 2 == 0 { Workload::Register } else { Workload::List };
        t.compare(&random(&mut rng, w, max_txns));
    }
    t
}

#[test]
fn random_histories_agree() {
    let t = run_random(18, 2000, 6);
    report(&t);
    assert!(t.disagreements.is_empty(), "{} disagreements", t.disagreements.len());
}

#[test]
fn tiny_histories_agree() {
    let mut t = Tally::default();
    for w in [Workload::Register, Workload::List] {
        for h in exhaustive(w, 2, 2, 2) {
            t.compare(&h);
        }
    }
    report(&t);
    assert!(t.disagreements.is_empty(), "{} disagreements", t.disagreements.len());
}
