//! Format round trips keep verdicts: a generated rw-register history in
//! Jepsen EDN, converted to the text format (streaming, and through the
//! model's writer), gets the same verdict at every model that does not
//! look at real time (the text format has none) as the EDN itself; and the
//! generator's own text rendering of the same run agrees with its EDN.
//!
//! Conversions run without `:info` transactions: the text format writes an
//! indeterminate transaction as committed writes (it cannot say "maybe"),
//! which is a different history when it did not commit. The generator's
//! text holds the truth (committed transactions only, with what their reads
//! returned), so it knows more than the EDN whenever a transaction ended
//! `:info`: there the verdicts need only agree one way (a history the EDN
//! already breaks, the text breaks too; a lost update between an `:info`
//! transaction's unknown read and a committed write shows in the text
//! alone). Without `:info` they must be equal.
//!
//! The default run keeps to smaller histories than `SMALL`: without real
//! time, the SI/serializable search over a text history of a few hundred
//! rw-register transactions can take tens of seconds (seen: 679
//! transactions, 44 s to solve at serializable, against 0.2 s for the same
//! history in EDN with its times). Long run, larger histories:
//! `cargo test --release --test it prop_roundtrip:: -- --ignored`.

use elle_si::generator::{Fault, GenOptions, Generated, generate};
use elle_si::history::formats::{self, Notes};
use elle_si::history::{Format, Workload};
use elle_si::report::Valid;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

use crate::support::load_generated;
use crate::support::prop::{LARGE, Size, UNTIMED, any_db, check_at, config, describe, fail, shape};

/// Rw-register options, with at most one fault the store can show.
fn strategy(size: Size, info: bool) -> impl Strategy<Value = GenOptions> {
    let fault = prop_oneof![
        2 => Just(None),
        3 => (prop::sample::select(Fault::ALL.to_vec()), 0.05f64..=1.0).prop_map(Some),
    ];
    (shape(size, any_db(), Just(Workload::RwRegister)), fault).prop_map(move |(mut o, f)| {
        o.format = Format::Edn;
        if !info {
            o.info_rate = 0.0;
        }
        if let Some((f, rate)) = f
            && f.applies_to(o.db, o.workload)
        {
            o = o.with_fault(f, rate);
        }
        o
    })
}

/// At most 6 sessions of 20 transactions.
const TINY: Size = Size {
    sessions: (2, 6),
    txns: (5, 20),
    ops: (1, 6),
    keys: (2, 20),
};

fn verdicts(bytes: Vec<u8>, format: Format) -> Vec<(&'static str, Valid, String)> {
    let l = load_generated(bytes, format);
    UNTIMED
        .iter()
        .map(|m| {
            let r = check_at(&l, m);
            (*m, r.valid, describe(&r))
        })
        .collect()
}

fn compare(
    name: &str,
    opts: &GenOptions,
    g: &Generated,
    left: &[(&'static str, Valid, String)],
    right_name: &str,
    right: Vec<u8>,
    right_knows_more: bool,
) -> Result<(), TestCaseError> {
    let theirs = verdicts(right.clone(), Format::Text);
    let mut wrong = Vec::new();
    for ((m, a, da), (_, b, db)) in left.iter().zip(&theirs) {
        let agree = if right_knows_more {
            *a != Valid::False || *b == Valid::False
        } else {
            a == b
        };
        if !agree {
            wrong.push(format!(
                "{m}: EDN says {}, {right_name} says {}\n  EDN: {da}\n  {right_name}: {db}",
                a.edn(),
                b.edn()
            ));
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    // Keep the text beside the EDN for the failure report.
    let _ = std::fs::create_dir_all("/tmp/props-failures");
    let _ = std::fs::write(format!("/tmp/props-failures/{name}.converted.txt"), &right);
    Err(fail(name, opts, &g.history, &g.faults, wrong.join("\n")))
}

fn edn_to_text_same_verdicts(opts: GenOptions) -> Result<(), TestCaseError> {
    let g = generate(&opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
    let ours = verdicts(g.history.clone(), Format::Edn);

    let mut streamed = Vec::new();
    let mut notes = Notes::default();
    if let Err(e) =
        formats::text::stream_from_edn(&g.history, &mut streamed, &mut notes, &mut |_| {})
    {
        return Err(fail(
            "roundtrip-stream",
            &opts,
            &g.history,
            &g.faults,
            format!("streaming EDN -> text failed: {e:?}"),
        ));
    }
    compare(
        "roundtrip-stream",
        &opts,
        &g,
        &ours,
        "streamed text",
        streamed,
        false,
    )?;

    let l = load_generated(g.history.clone(), Format::Edn);
    let mut written = Vec::new();
    let mut notes = Notes::default();
    formats::text::write(&l.history, &mut written, &mut notes)
        .unwrap_or_else(|e| panic!("writing to memory failed: {e}"));
    compare(
        "roundtrip-model",
        &opts,
        &g,
        &ours,
        "written text",
        written,
        false,
    )
}

fn generated_text_same_verdicts(opts: GenOptions) -> Result<(), TestCaseError> {
    let g = generate(&opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
    let text_opts = GenOptions {
        format: Format::Text,
        ..opts.clone()
    };
    let t = generate(&text_opts).unwrap_or_else(|e| panic!("generator refused {opts:?}: {e}"));
    assert_eq!(
        g.faults.len(),
        t.faults.len(),
        "the format changed which faults fired"
    );
    let ours = verdicts(g.history.clone(), Format::Edn);
    compare(
        "roundtrip-gen-text",
        &opts,
        &g,
        &ours,
        "generated text",
        t.history,
        g.history.windows(5).any(|w| w == b":info"),
    )
}

fn run(
    cases: u32,
    s: impl Strategy<Value = GenOptions>,
    p: fn(GenOptions) -> Result<(), TestCaseError>,
) {
    if let Err(e) = TestRunner::new(config(cases)).run(&s, p) {
        panic!("{e}");
    }
}

#[test]
fn edn_to_text_keeps_verdicts() {
    run(16, strategy(TINY, false), edn_to_text_same_verdicts);
}

#[test]
fn generated_text_agrees_with_generated_edn() {
    run(16, strategy(TINY, true), generated_text_same_verdicts);
}

#[test]
#[ignore = "long run: cargo test --release --test it prop_roundtrip:: -- --ignored"]
fn edn_to_text_keeps_verdicts_long() {
    run(500, strategy(LARGE, false), edn_to_text_same_verdicts);
}

#[test]
#[ignore = "long run: cargo test --release --test it prop_roundtrip:: -- --ignored"]
fn generated_text_agrees_with_generated_edn_long() {
    run(500, strategy(LARGE, true), generated_text_same_verdicts);
}
