//! The argument validator (`src/validate.rs`): arbitrary arguments against the real tool schemas,
//! and arbitrary schemas against arbitrary arguments. Never panics, and a rejection lists problems.
//! Against a real tool schema, what it accepts (with defaults filled in) it accepts again unchanged:
//! every default our schemas declare is valid. A fuzzed schema may declare a default its own rules
//! refuse (`{"enum": ["a"], "default": "x"}`); the validator trusts schema defaults, so that
//! property is only asserted for the real ones.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use workbench::registry::Registry;
use workbench::validate;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::standard)
}

fn json_or_string(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let schema_owned;
    let real = data[0] & 1 == 0;
    let (schema, args) = if real {
        // A real tool's schema, picked by the second byte.
        let tools = registry().tools();
        let tool = &tools[data[1] as usize % tools.len()];
        (tool.schema(), json_or_string(&data[2..]))
    } else {
        // Schema and arguments both from the input, split at the first NUL.
        let rest = &data[1..];
        let cut = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
        schema_owned = json_or_string(&rest[..cut]);
        (&schema_owned, json_or_string(rest.get(cut + 1..).unwrap_or(&[])))
    };
    match validate::validate(schema, &args) {
        Ok(filled) if real => {
            let again = validate::validate(schema, &filled);
            assert_eq!(again.as_ref().ok(), Some(&filled), "accepted arguments must validate again unchanged");
        }
        Ok(_) => {}
        Err(problems) => {
            assert!(!problems.is_empty());
        }
    }
    let _ = validate::expected_parameters(schema);
});
