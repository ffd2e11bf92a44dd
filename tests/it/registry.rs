//! Invariants over every tool in the catalogue, and snapshots of the public schemas.

use std::collections::HashSet;

use plugins::schema::SUPPORTED_KEYWORDS;
use serde_json::{Value, json};
use workbench::registry::Registry;

use crate::support::{assert_snapshot, assert_snapshot_dir, line_diff};

fn check_schema(tool: &str, path: &str, schema: &Value, problems: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        problems.push(format!("{tool}{path}: schema is not an object"));
        return;
    };
    for key in obj.keys() {
        if !SUPPORTED_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{tool}{path}: unsupported keyword '{key}'"));
        }
    }
    if let Some(t) = obj.get("type") {
        let ok = |s: &str| ["string", "integer", "number", "boolean", "object", "array", "null"].contains(&s);
        let valid = match t {
            Value::String(s) => ok(s),
            Value::Array(a) => a.iter().all(|x| x.as_str().is_some_and(ok)),
            _ => false,
        };
        if !valid {
            problems.push(format!("{tool}{path}: bad type {t}"));
        }
    }
    if let Some(props) = obj.get("properties") {
        let Some(props) = props.as_object() else {
            problems.push(format!("{tool}{path}: properties is not an object"));
            return;
        };
        for (name, p) in props {
            if path.is_empty() && p.get("description").and_then(Value::as_str).is_none_or(str::is_empty) {
                problems.push(format!("{tool}: parameter '{name}' has no description"));
            }
            if name.chars().any(|c| c.is_ascii_uppercase()) {
                problems.push(format!("{tool}: parameter '{name}' is not snake_case"));
            }
            check_schema(tool, &format!("{path}/{name}"), p, problems);
        }
        if let Some(req) = obj.get("required").and_then(Value::as_array) {
            for r in req {
                if !r.as_str().is_some_and(|r| props.contains_key(r)) {
                    problems.push(format!("{tool}{path}: required {r} is not a property"));
                }
            }
        }
    }
    if let Some(items) = obj.get("items") {
        check_schema(tool, &format!("{path}[]"), items, problems);
    }
    if let Some(ap @ Value::Object(_)) = obj.get("additionalProperties") {
        check_schema(tool, &format!("{path}{{}}"), ap, problems);
    }
}

/// The smallest value a schema accepts: required properties only, each minimal, recursively.
fn minimal_value(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!("x".repeat(schema["minLength"].as_u64().unwrap_or(1).max(1) as usize)),
        Some("integer") | Some("number") => json!(schema["minimum"].as_f64().map(|m| m as i64).unwrap_or(1)),
        Some("boolean") => json!(true),
        Some("array") => {
            let n = schema["minItems"].as_u64().unwrap_or(1).max(1) as usize;
            Value::Array((0..n).map(|_| minimal_value(&schema["items"])).collect())
        }
        Some("object") | None if schema.get("properties").is_some() => {
            let mut out = serde_json::Map::new();
            for r in schema["required"].as_array().into_iter().flatten() {
                let name = r.as_str().unwrap();
                out.insert(name.to_string(), minimal_value(&schema["properties"][name]));
            }
            Value::Object(out)
        }
        Some("object") => json!({}),
        _ => json!("x"),
    }
}

#[test]
fn every_tool_keeps_the_catalogue_invariants() {
    let registry = Registry::standard();
    let mut names = HashSet::new();
    let mut problems = Vec::new();
    let integration_names: Vec<&str> = registry.integrations().iter().map(|i| i.name).collect();
    for tool in registry.tools() {
        if !names.insert(tool.name) {
            problems.push(format!("duplicate tool name {}", tool.name));
        }
        if !tool.name.starts_with(&format!("{}_", tool.integration)) {
            problems.push(format!("{} lacks its integration prefix {}_", tool.name, tool.integration));
        }
        // No integration's prefix may be a prefix of another's (google_ vs google_drive_).
        for other in &integration_names {
            if *other != tool.integration
                && tool.name.starts_with(&format!("{other}_"))
                && other.len() > tool.integration.len()
            {
                problems.push(format!("{} also carries the prefix of {other}", tool.name));
            }
        }
        if tool.name.len() > 40 || !tool.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            problems.push(format!("{}: names are snake_case ASCII, at most 40 chars", tool.name));
        }
        if tool.description.len() < 40 {
            problems.push(format!("{}: description too short to be found by search", tool.name));
        }
        let schema = tool.schema();
        if schema["type"] != "object" {
            problems.push(format!("{}: schema is not object-rooted", tool.name));
        }
        for k in ["anyOf", "oneOf", "allOf", "$ref", "$defs"] {
            if schema.to_string().contains(&format!("\"{k}\"")) {
                problems.push(format!("{}: schema uses {k}", tool.name));
            }
        }
        check_schema(tool.name, "", schema, &mut problems);
        // The smallest call the schema allows must pass the validator (defaults must validate).
        let minimal = minimal_value(schema);
        if let Err(p) = workbench::validate::validate(schema, &minimal) {
            problems.push(format!("{}: its own minimal valid call is rejected: {p:?}", tool.name));
        }
    }
    for integration in registry.integrations() {
        if integration.tools.is_empty() {
            problems.push(format!("{} has no tools", integration.name));
        }
        if integration.hosts.first().map(|h| h.key) != Some("base_url") {
            problems.push(format!("{}: the first host must be base_url", integration.name));
        }
    }
    assert!(problems.is_empty(), "catalogue invariants broken:\n{}", problems.join("\n"));
}

/// The catalogue is the registry: what ships is what `plugins::INTEGRATIONS` and the built-ins
/// list, and each tool's public face is its snapshot under `snapshots/tools/` (regenerated by
/// `UPDATE_SNAPSHOTS=1`). No separate list or count is kept by hand: every figure below is derived.
#[test]
fn registry_is_the_integrations_and_the_builtins() {
    let registry = Registry::standard();
    let shipped: Vec<&str> = registry.integrations().iter().map(|i| i.name).collect();
    let listed: Vec<&str> = plugins::INTEGRATIONS.iter().map(|i| i.name).collect();
    assert_eq!(shipped, listed, "the registry ships every integration of plugins::INTEGRATIONS, in its order");
    let mut expected: Vec<(&str, &str, bool)> = plugins::INTEGRATIONS
        .iter()
        .flat_map(|i| i.tools.iter().map(move |t| (t.name, i.name, t.effect.mutating())))
        .collect();
    let plugin_tools = expected.len();
    let builtins: Vec<&str> = registry.tools().iter().filter(|t| t.plugin().is_none()).map(|t| t.name).collect();
    assert!(!builtins.is_empty(), "the built-ins are in the catalogue");
    let mut actual: Vec<(&str, &str, bool)> = registry
        .tools()
        .iter()
        .filter(|t| t.plugin().is_some())
        .map(|t| (t.name, t.integration, t.mutating()))
        .collect();
    expected.sort_unstable();
    actual.sort_unstable();
    assert_eq!(actual, expected, "every plugin tool is in the registry once, as its spec declares it");
    assert_eq!(registry.tools().len(), plugin_tools + builtins.len());
    for b in &builtins {
        assert!(
            !shipped.iter().any(|i| b.starts_with(&format!("{i}_"))),
            "{b}: a built-in never carries an integration's prefix"
        );
    }
}

#[test]
fn tool_schemas_snapshot() {
    let registry = Registry::standard();
    let entries: Vec<(String, Value)> = registry
        .tools()
        .iter()
        .map(|tool| {
            let entry = json!({ "integration": tool.integration, "mutating": tool.mutating(), "description": tool.description, "schema": tool.schema() });
            (tool.name.to_string(), entry)
        })
        .collect();
    assert_snapshot_dir("tools", &entries);
}

/// The snapshot diff names the changed lines with context, not the two whole texts.
#[test]
fn snapshot_diff_shows_only_the_changed_lines() {
    let expected: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    let actual = expected.replace("line 20\n", "line twenty\n").replace("line 40\n", "");
    let diff = line_diff(&expected, &actual);
    assert_eq!(
        diff,
        "@@ line 18 @@\n line 18\n line 19\n-line 20\n+line twenty\n line 21\n line 22\n@@ line 38 @@\n line 38\n line 39\n-line 40\n line 41\n line 42\n"
    );
    assert!(!diff.contains("line 1\n") && !diff.contains("line 30"));
}

#[test]
fn tools_list_is_the_nine_meta_tools_and_is_snapshotted() {
    let tools = serde_json::to_value(workbench::mcp::tool_list()).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_tools",
            "get_tool_schema",
            "execute_tools",
            "whoami",
            "list_integrations",
            "connect",
            "wait_for_connection",
            "get_auth_url",
            "curl_session"
        ]
    );
    for t in tools.as_array().unwrap() {
        for (name, p) in t["inputSchema"]["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{}.{name} lacks a description",
                t["name"]
            );
        }
        let a = &t["annotations"];
        assert!(a["readOnlyHint"].is_boolean() && a["openWorldHint"].is_boolean(), "{} lacks annotations", t["name"]);
        // destructiveHint and idempotentHint mean something only for a tool that writes (the
        // specification); a tool that writes always says whether it destroys.
        if a["readOnlyHint"] == true {
            assert!(a.get("destructiveHint").is_none() && a.get("idempotentHint").is_none(), "{}", t["name"]);
        } else {
            assert!(a["destructiveHint"].is_boolean(), "{} does not say whether it destroys", t["name"]);
        }
    }
    let by_name = |n: &str| tools.as_array().unwrap().iter().find(|t| t["name"] == n).unwrap().clone();
    for (name, destructive) in [("execute_tools", true), ("curl_session", true), ("connect", false)] {
        assert_eq!(by_name(name)["annotations"]["destructiveHint"], destructive, "{name}");
        assert_eq!(by_name(name)["annotations"]["readOnlyHint"], false, "{name}");
    }
    // get_auth_url (deprecated) takes exactly connect's arguments under the same rules; only its
    // words are fewer.
    let strip = |mut v: Value| {
        for p in v["properties"].as_object_mut().unwrap().values_mut() {
            p.as_object_mut().unwrap().remove("description");
        }
        v
    };
    assert_eq!(strip(by_name("get_auth_url")["inputSchema"].clone()), strip(by_name("connect")["inputSchema"].clone()));
    let curl = tools.as_array().unwrap().iter().find(|t| t["name"] == "curl_session").unwrap();
    assert!(
        curl["description"].as_str().unwrap().starts_with("HIGH RISK — do not call without explicit user approval.")
    );
    let bytes = serde_json::to_string(&json!({ "tools": tools })).unwrap().len();
    eprintln!("tools/list: {bytes} bytes, ~{} tokens (bytes/4)", bytes / 4);
    // About 1,500 cl100k tokens (issue 30; scripts/footprint.sh counts them exactly).
    assert!(bytes < 6_800, "tools/list grew to {bytes} bytes; every conversation pays for it");
    assert_snapshot("tools_list.json", &tools);
}

/// Every built-in carries the outbound-data guard's labels (issue 24 item 1), and the ones the
/// rules fix are as flows.md says: `http_send_request` is always a send of public results.
#[test]
fn every_builtin_carries_its_flow_labels() {
    use plugins::flow::{Audience, Results};
    let mut problems = Vec::new();
    for b in workbench::builtins::BUILTINS {
        if b.results.is_none() {
            problems.push(format!("{}: no results label", b.name));
        }
        if b.effect.mutating() != b.audience.is_some() {
            problems.push(format!("{}: an audience label exactly when it writes", b.name));
        }
    }
    assert!(problems.is_empty(), "flow labels missing:\n{}", problems.join("\n"));
    let label = |name: &str| {
        let b = workbench::builtins::BUILTINS.iter().find(|b| b.name == name).unwrap();
        (b.results, b.audience)
    };
    assert!(matches!(label("http_send_request"), (Some(Results::Public), Some(Audience::Outside(_)))));
    assert!(matches!(label("custom_create_app"), (Some(Results::Public), Some(Audience::Outside(_)))));
    assert!(matches!(label("audit_search_log"), (Some(Results::Private), None)));
    for name in ["data_query_json", "data_convert_csv", "time_get_current"] {
        assert!(matches!(label(name), (Some(Results::Public), None)), "{name}");
    }
}
