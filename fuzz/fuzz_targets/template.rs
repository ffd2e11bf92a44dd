//! The `{{step:...}}` / `{{vault:...}}` resolver (`src/engine/template.rs`) on arbitrary templates:
//! never panics, and keeps its one-pass promise: a secret appears in the output only when the
//! template itself names it (text that came out of a step is never scanned again; step `a` holds a
//! string that looks like a vault ref).
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use workbench::template::{self, Scope, StepOutcome};
use workbench::error::{ErrorCode, ToolFailure};

const SECRET: &str = "s3cr3t-VALUE";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    // Even modes read the rest as a JSON template (when it is JSON), odd ones as one string.
    let tpl: Value = if mode % 2 == 0 {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.to_string()))
    } else {
        Value::String(text.to_string())
    };
    let steps: HashMap<String, StepOutcome> = HashMap::from([
        ("a".to_string(), StepOutcome::Ok(json!({"x": [1, {"y": "{{vault:k}}"}], "n": 2.5, "s": "{{step:b.x}}"}))),
        ("b".to_string(), StepOutcome::Failed),
        ("c-1".to_string(), StepOutcome::Ok(json!("plain"))),
    ]);
    let vault = |name: &str| -> Result<String, ToolFailure> {
        if name == "k" {
            Ok(SECRET.to_string())
        } else {
            Err(ToolFailure::new(ErrorCode::VaultDenied, "no such secret"))
        }
    };
    let scope = Scope {
        steps: if mode & 2 == 0 { Some(&steps) } else { None },
        vault: if mode & 4 == 0 { Some(&vault) } else { None },
        no_steps_reason: "fuzz: no steps",
        no_vault_reason: "fuzz: no vault",
        resolving: "fuzz",
        max_bytes: template::MAX_RESOLVED_BYTES,
    };
    let _ = template::mentions_step(&tpl);
    let refs = template::step_refs(&tpl);
    let names = template::vault_names(&tpl);
    // Text the template itself carries may come back (in the output or an error's quote of it).
    let typed_by_agent = tpl.to_string().contains(SECRET);
    match template::resolve(&tpl, &scope) {
        Ok(resolved) => {
            let out = resolved.value.to_string();
            let named_by_template = names.as_ref().map(|n| n.iter().any(|n| n == "k")).unwrap_or(true);
            if out.contains(SECRET) && !typed_by_agent {
                assert!(named_by_template, "a secret reached the output without the template naming it: {tpl}");
            }
            assert!(resolved.secrets.iter().all(|s| s == SECRET));
            if scope.steps.is_none() {
                assert!(refs.map(|r| r.is_empty()).unwrap_or(false), "step refs resolved without steps: {tpl}");
            }
        }
        Err(e) => assert!(typed_by_agent || !e.message.contains(SECRET), "an error carries the secret: {}", e.message),
    }
});
