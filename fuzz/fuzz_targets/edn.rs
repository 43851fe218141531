//! The generic EDN reader: never panics, and what it reads prints back as
//! EDN that reads to the same value (compared as printed text, since NaN is
//! not equal to itself).
#![no_main]

use elle_si::edn::read_all;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(values) = read_all(data) else {
        return;
    };
    let printed: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    let text = printed.join("\n");
    let again = match read_all(text.as_bytes()) {
        Ok(v) => v,
        Err(e) => panic!("printed EDN does not read back: {e:?}\n{text}"),
    };
    let reprinted: Vec<String> = again.iter().map(|v| v.to_string()).collect();
    assert_eq!(printed, reprinted);
});
