//! `cargo +nightly fuzz run cvec`: connection-vector parsing (both formats,
//! strict and lenient) never panics; what parses converts to every structure
//! model and writes in the alternate format, which parses back to the same
//! connections.

#![no_main]

use exp_traffic::cvec::{parse, write_alternate, Format, Structure};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for format in [Format::Auto, Format::Original, Format::Alternate] {
        for lenient in [false, true] {
            let Ok(parsed) = parse(text, "fuzz.cvec", format, lenient) else {
                continue;
            };
            for structure in Structure::ALL {
                let converted: Vec<_> = parsed.connections.iter().map(|c| structure.apply(c)).collect();
                let _ = converted.iter().map(|c| c.total_bytes()).count();
            }
            let mut bytes = Vec::new();
            write_alternate(&mut bytes, &parsed.connections).expect("the alternate format writes any connection");
            let alternate = String::from_utf8(bytes).expect("UTF-8");
            let back = parse(&alternate, "back.cvec", Format::Alternate, false)
                .unwrap_or_else(|e| panic!("the alternate text does not parse back: {e}\n{alternate}"));
            assert_eq!(back.connections, parsed.connections);
        }
    }
});
