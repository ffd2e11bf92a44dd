//! The connect pages' form parser (`src/connect/form.rs`) on arbitrary bodies: never panics, never
//! returns more than MAX_FIELDS fields, and what it returns re-encodes to a body that parses back
//! to the same fields.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workbench::connect::form;

fuzz_target!(|body: &[u8]| {
    let Some(fields) = form::parse(body) else { return };
    assert!(fields.len() <= form::MAX_FIELDS, "{} fields", fields.len());
    let again: Vec<String> = fields.iter().map(|(k, v)| format!("{}={}", form::encode(k), form::encode(v))).collect();
    let reparsed = form::parse(again.join("&").as_bytes()).expect("an encoded form parses");
    assert_eq!(reparsed, fields, "encode then parse is the identity");
});
