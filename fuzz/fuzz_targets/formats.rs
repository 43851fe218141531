//! The readers of the field's other formats (elle-cli's JSON, the text
//! format, dbcop's three, Cobra's and Viper's logs), each forced on the
//! same bytes: never a panic, every refusal an input error naming the
//! file, and what is read holds together as the checkers index it.
//! dbcop's readers run under each policy for duplicate writes, since each
//! takes its own path through the reads.
#![no_main]

use elle_si::Error;
use elle_si::history::{Duplicates, Format, LoadOptions, load_bytes};
use libfuzzer_sys::fuzz_target;

fn check(format: Format, duplicates: Duplicates, data: &[u8]) {
    let opts = LoadOptions {
        format: Some(format),
        workload: None,
        duplicates,
        ..LoadOptions::default()
    };
    match load_bytes("fuzz.log", data.to_vec(), opts) {
        Ok(l) => {
            // What the checkers index by must hold together.
            let h = &l.history;
            for t in &h.txns {
                assert!(
                    t.start <= t.end && t.end as usize <= h.mops.len(),
                    "{format:?}"
                );
                assert!((t.session as usize) < h.sessions.len(), "{format:?}");
            }
            for m in &h.mops {
                assert!((m.key as usize) < h.keys.len(), "{format:?}");
            }
        }
        Err(Error::Input(e)) => assert!(e.to_string().starts_with("fuzz.log"), "{format:?}: {e}"),
        Err(e) => panic!("{format:?}: not an input error: {e}"),
    }
}

fuzz_target!(|data: &[u8]| {
    for format in Format::ALL {
        match format {
            // Fuzzed by the `history` target.
            Format::Edn => {}
            Format::DbcopBincode | Format::DbcopJson | Format::DbcopHist => {
                for d in [
                    Duplicates::Reject,
                    Duplicates::LastWriter,
                    Duplicates::DropReads,
                    Duplicates::Any,
                ] {
                    check(format, d, data);
                }
            }
            _ => check(format, Duplicates::default(), data),
        }
    }
});
