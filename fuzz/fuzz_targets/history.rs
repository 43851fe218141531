//! The Jepsen op reader and compiler: never panics, and every refusal is a
//! located input error that renders as a miette diagnostic.
#![no_main]

use elle_si::Error;
use elle_si::history::{Format, LoadOptions, Workload, load_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for workload in [None, Some(Workload::ListAppend), Some(Workload::RwRegister)] {
        let opts = LoadOptions {
            format: Some(Format::Edn),
            workload,
            ..LoadOptions::default()
        };
        match load_bytes("fuzz.edn", data.to_vec(), opts) {
            Ok(l) => {
                assert!(l.history.txns.len() as u64 <= l.history.stats.client_ops);
            }
            Err(Error::Input(e)) => {
                assert!(e.to_string().starts_with("fuzz.edn:"), "{e}");
                assert!(e.line >= 1 && e.column >= 1, "{e}");
                let mut out = String::new();
                miette::GraphicalReportHandler::new()
                    .render_report(&mut out, &*e)
                    .expect("rendering a diagnostic");
            }
            Err(e) => panic!("not an input error: {e}"),
        }
    }
});
