//! Against Elle's verdicts on generated histories
//! (`elle-differential.tsv`, Elle 0.2.8 at six models, read committed
//! among them in Elle's, Adya's, meaning): elle-si never accepts what Elle
//! rejects. Where Elle accepts and elle-si rejects, the row is counted by
//! the reason: Elle is incomplete for rw-register (weak version-order
//! inference) and for read atomic (it checks internal, G1a and future-read
//! only), and counts no session edge at snapshot isolation.

mod common;
use common::*;
use elle_si::report::Valid;

/// Long (1,700 checks, several minutes on two cores): run with
/// `--ignored`.
#[test]
#[ignore]
fn never_accepts_what_elle_rejects() {
    let Ok(tsv) = std::fs::read_to_string(shared("elle-differential.tsv")) else {
        eprintln!("skipping: ../shared/histories/elle-differential.tsv not found");
        return;
    };
    let (mut agree, mut stricter, mut rows) = (0, Vec::new(), 0);
    for line in tsv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("name\t"))
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, model, elle) = (cols[0], cols[2], cols[3]);
        let l = load(&shared(&format!("elle-differential/{file}")));
        let (ours, types) = verdict(&l, model);
        rows += 1;
        match (elle, ours) {
            ("false", Valid::True) => panic!("{file} at {model}: Elle rejects, we accept"),
            ("true", Valid::False) => stricter.push((file, model, types)),
            _ => agree += 1,
        }
    }
    for (file, model, types) in &stricter {
        // Elle's incompleteness: rw-register version orders, read atomic's
        // short list.
        let explained = file.starts_with("rw-") || *model == "read-atomic";
        assert!(
            explained,
            "{file} at {model}: we reject ({types:?}) where Elle accepts, unexplained"
        );
    }
    eprintln!(
        "{rows} rows: {agree} agree, {} stricter (rw-register or read atomic)",
        stricter.len()
    );
}
