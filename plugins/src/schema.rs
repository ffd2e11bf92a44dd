//! Tool schemas from argument types, normalised into the portable subset of JSON Schema 2020-12
//! that strict MCP clients accept and that workbench's own validator understands completely.
//!
//! schemars describes `Option<T>` as "T or null", adds `$schema`/`title`, and emits Rust-specific
//! `format`s (`uint32`); none of that helps an agent and some of it trips strict clients. The
//! normalisation below removes it, so an optional field is simply absent from `required`.
//!
//! The shipped binary does not run schemars: each tool's normalised schema is committed as text
//! ([`crate::schemas`] here, `src/schemas.rs` for workbench's own tools) and read with
//! [`committed`]. [`schema_for`] stays the source of truth: the tests of both crates regenerate
//! every committed schema with it from the argument types and fail on any difference
//! ([`drift`], [`check_table`]); nothing outside tests calls it, so it and the types'
//! `JsonSchema` impls are left out of the release build.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema keywords tool schemas may use (and the validator implements).
pub const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "examples",
];

/// The normalised JSON Schema for an argument type. Called by tests only (they generate the
/// committed schemas with it); the running server reads [`committed`] text instead.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = schema.to_value();
    normalise(&mut value);
    if let Value::Object(root) = &mut value {
        root.remove("title");
        root.entry("additionalProperties").or_insert(Value::Bool(false));
        root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    }
    value
}

/// The committed schema of `key` in `table` (sorted by key, as [`render_table`] writes it).
///
/// # Panics
/// When `key` has no schema or its text is not JSON: the tests check that every tool has exactly
/// one committed schema, generated from its argument type.
pub fn committed(table: &[(&str, &str)], key: &str) -> Value {
    let text = match table.binary_search_by(|(k, _)| (*k).cmp(key)) {
        Ok(i) => table[i].1,
        Err(_) => panic!("no committed schema for `{key}`"),
    };
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the committed schema of `{key}` is not JSON: {e}"))
}

/// The source of a committed schema table: `doc` (the file's `//!` lines), then one
/// `(key, compact JSON)` line per schema, sorted by key. Raw strings carry as many `#` as the
/// text needs.
pub fn render_table(doc: &str, schemas: &[(String, Value)]) -> String {
    let mut sorted: Vec<&(String, Value)> = schemas.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::from(doc);
    out.push_str("\n/// (key, normalised JSON Schema), sorted by key.\n#[rustfmt::skip]\n");
    out.push_str("pub static SCHEMAS: &[(&str, &str)] = &[\n");
    for (key, schema) in sorted {
        let text = schema.to_string();
        let mut hashes = String::from("#");
        while text.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        out.push_str(&format!("    ({key:?}, r{hashes}\"{text}\"{hashes}),\n"));
    }
    out.push_str("];\n");
    out
}

/// How a committed table differs from the schemas generated now, one line per key: a key
/// generated twice, a tool without a committed schema, a committed schema of no tool, and a
/// schema whose text changed. Empty when they agree.
pub fn drift(committed: &[(&str, &str)], generated: &[(String, Value)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (key, schema) in generated {
        if !seen.insert(key.as_str()) {
            out.push(format!("`{key}`: two tools have this key (each needs its own schema)"));
            continue;
        }
        let text = schema.to_string();
        match committed.iter().filter(|(k, _)| k == key).map(|(_, t)| *t).collect::<Vec<_>>()[..] {
            [] => out.push(format!("`{key}`: no committed schema")),
            [committed_text] if committed_text == text => {}
            [_] => out.push(format!("`{key}`: the committed schema differs from its argument type's")),
            _ => out.push(format!("`{key}`: committed more than once")),
        }
    }
    for (key, _) in committed {
        if !seen.contains(key) {
            out.push(format!("`{key}`: committed, but no tool has this key"));
        }
    }
    if committed.windows(2).any(|w| w[0].0 >= w[1].0) {
        out.push("the committed keys are not sorted (lookups search them by halves)".into());
    }
    out
}

/// The check of a committed table file `path` whose text is `on_disk` against the schemas
/// generated now: `Err` names each [`drift`] (or a file not as [`render_table`] writes it) and
/// says how to update the file (`UPDATE_SCHEMAS=1 <update>`). Reading and rewriting the file is
/// the tests' part (this crate does no I/O).
pub fn check_table(
    path: &str,
    on_disk: &str,
    doc: &str,
    committed: &[(&str, &str)],
    generated: &[(String, Value)],
    update: &str,
) -> Result<(), String> {
    let mut problems = drift(committed, generated);
    if problems.is_empty() && on_disk != render_table(doc, generated) {
        problems.push("the file is not as the generator writes it".into());
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{path} does not match the argument types:\n  {}\nRegenerate it with `UPDATE_SCHEMAS=1 {update}` and commit it.",
        problems.join("\n  ")
    ))
}

/// The same normalisation for a schema that did not come from a Rust type (an upstream MCP
/// server's `inputSchema`): null types collapsed, `$schema`/`title`/`format` removed. Callers
/// still check that only [`SUPPORTED_KEYWORDS`] remain.
pub fn normalise_value(value: &mut Value) {
    normalise(value)
}

fn normalise(value: &mut Value) {
    let Value::Object(map) = value else { return };
    collapse_nullable(map);
    map.remove("$schema");
    map.remove("title");
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::String(format)) = map.remove("format")
        && format.starts_with("uint")
        && !map.contains_key("minimum")
    {
        map.insert("minimum".into(), Value::from(0));
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for prop in props.values_mut() {
            normalise(prop);
        }
    }
    if let Some(items) = map.get_mut("items") {
        normalise(items);
    }
    if let Some(Value::Object(_)) = map.get("additionalProperties")
        && let Some(ap) = map.get_mut("additionalProperties")
    {
        normalise(ap);
    }
    if map.get("type").and_then(Value::as_str) == Some("object") && !map.contains_key("properties") {
        // A free-form object: say so explicitly rather than leaving it to defaults.
        map.entry("additionalProperties").or_insert(Value::Bool(true));
    }
}

/// `type: ["string","null"]` becomes `type: "string"`; `anyOf: [X, {type: null}]` becomes X.
fn collapse_nullable(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get("type") {
        let non_null: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if non_null.len() == 1 {
            map.insert("type".into(), non_null[0].clone());
        } else if non_null.len() != types.len() {
            map.insert("type".into(), Value::Array(non_null));
        }
    }
    if let Some(Value::Array(variants)) = map.get("anyOf") {
        let non_null: Vec<&Value> =
            variants.iter().filter(|v| v.get("type").and_then(Value::as_str) != Some("null")).collect();
        if non_null.len() == 1
            && variants.len() == 2
            && let Value::Object(inner) = non_null[0].clone()
        {
            map.remove("anyOf");
            for (k, v) in inner {
                map.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

/// The `//!` lines of `plugins/src/schemas.rs`.
#[cfg(test)]
const PLUGINS_DOC: &str = "\
//! @generated: every plugin tool's input schema (by tool name), the normalised text
//! `schema::schema_for` makes of its argument type. The server reads these instead of running
//! schemars; the test `schema::committed_tests::committed_schemas_match_the_argument_types` regenerates
//! them and fails on any difference. Update with
//! `UPDATE_SCHEMAS=1 cargo test --locked -p workbench-plugins committed_schemas`; do not edit.
";

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Kind {
        #[serde(rename = "top")]
        Top,
        #[serde(rename = "new")]
        New,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Who to greet.
        name: String,
        /// How many times.
        #[serde(default = "three")]
        times: u32,
        /// Optional kind.
        kind: Option<Kind>,
        /// Tags.
        tags: Option<Vec<String>>,
    }

    fn three() -> u32 {
        3
    }

    #[test]
    fn options_become_plain_optional_properties() {
        let s = schema_for::<Args>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], serde_json::json!(["name"]));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["name"]["description"], "Who to greet.");
        assert_eq!(s["properties"]["times"]["default"], 3);
        assert_eq!(s["properties"]["times"]["minimum"], 0);
        assert!(s["properties"]["times"].get("format").is_none());
        assert_eq!(s["properties"]["kind"]["enum"], serde_json::json!(["top", "new"]));
        assert_eq!(s["properties"]["tags"]["type"], "array");
        assert!(s.get("$schema").is_none() && s.get("title").is_none());
        let text = s.to_string();
        assert!(!text.contains("null"), "no null types left: {text}");
        assert!(!text.contains("$ref"), "subschemas inlined: {text}");
    }
}

#[cfg(test)]
mod committed_tests {
    use super::*;
    use serde_json::json;

    /// Every plugin tool's schema, generated now from its argument type (in this crate's tests a
    /// `ToolSpec`'s `schema` is the generator, see `tool!`).
    fn generated() -> Vec<(String, Value)> {
        crate::INTEGRATIONS.iter().flat_map(|i| i.tools).map(|t| (t.name.to_string(), (t.schema)())).collect()
    }

    #[test]
    fn committed_schemas_match_the_argument_types() {
        let generated = generated();
        assert!(generated.len() > 100, "the tools were read: {}", generated.len());
        let update = "cargo test --locked -p workbench-plugins committed_schemas";
        let rewritten = crate::schema_file::update_if_asked("src/schemas.rs", PLUGINS_DOC, &generated)
            .unwrap_or_else(|e| panic!("{e}"));
        if rewritten {
            return;
        }
        check_table(
            "plugins/src/schemas.rs",
            crate::schema_file::PLUGINS_SCHEMAS,
            PLUGINS_DOC,
            crate::schemas::SCHEMAS,
            &generated,
            update,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // What the server reads is the generated schema, keys in the same order.
        for (name, schema) in &generated {
            assert_eq!(committed(crate::schemas::SCHEMAS, name).to_string(), schema.to_string(), "{name}");
        }
        assert_eq!(crate::schemas::SCHEMAS.len(), generated.len(), "exactly one schema per tool");
    }

    /// The drift check can fail: a planted changed, missing, extra, doubled and unsorted table is
    /// reported key by key, and the file check names the command that updates the file.
    #[test]
    fn a_planted_drift_is_reported() {
        let generated = vec![
            ("a_tool".to_string(), json!({"type": "object", "properties": {}})),
            ("b_tool".to_string(), json!({"type": "object", "properties": {"x": {"type": "string"}}})),
            ("c_tool".to_string(), json!({"type": "object"})),
        ];
        let texts: Vec<String> = generated.iter().map(|(_, s)| s.to_string()).collect();
        let agreeing = [("a_tool", texts[0].as_str()), ("b_tool", texts[1].as_str()), ("c_tool", texts[2].as_str())];
        assert!(drift(&agreeing, &generated).is_empty());

        let changed = r#"{"type":"object","properties":{"x":{"type":"integer"}}}"#;
        let planted = [("a_tool", texts[0].as_str()), ("b_tool", changed), ("d_tool", texts[2].as_str())];
        assert_eq!(
            drift(&planted, &generated),
            [
                "`b_tool`: the committed schema differs from its argument type's",
                "`c_tool`: no committed schema",
                "`d_tool`: committed, but no tool has this key",
            ]
        );
        let doubled = [("a_tool", texts[0].as_str()), ("a_tool", texts[0].as_str())];
        let twice = vec![generated[0].clone(), generated[0].clone()];
        assert_eq!(
            drift(&doubled, &twice),
            [
                "`a_tool`: committed more than once",
                "`a_tool`: two tools have this key (each needs its own schema)",
                "the committed keys are not sorted (lookups search them by halves)",
            ]
        );
        let unsorted = [("b_tool", texts[1].as_str()), ("a_tool", texts[0].as_str()), ("c_tool", texts[2].as_str())];
        assert_eq!(drift(&unsorted, &generated), ["the committed keys are not sorted (lookups search them by halves)"]);

        let file = render_table("//! doc\n", &generated);
        assert_eq!(check_table("t.rs", &file, "//! doc\n", &agreeing, &generated, "cargo test x"), Ok(()));
        let err = check_table("t.rs", &file, "//! doc\n", &planted, &generated, "cargo test x").unwrap_err();
        assert!(err.starts_with("t.rs does not match the argument types:\n  `b_tool`: the committed"), "{err}");
        assert!(err.ends_with("Regenerate it with `UPDATE_SCHEMAS=1 cargo test x` and commit it."), "{err}");
        // Same schemas, but the file is not what the generator writes (edited by hand).
        let err = check_table("t.rs", "//! doc, edited\n", "//! doc\n", &agreeing, &generated, "x").unwrap_err();
        assert!(err.contains("not as the generator writes it"), "{err}");
    }

    /// A schema text holding `"#` gets a raw string with more `#`s, and the table reads back.
    #[test]
    fn the_table_source_quotes_any_text() {
        let schemas = vec![
            ("z".to_string(), json!({"description": "#channel"})),
            ("a".to_string(), json!({"description": "\"#\"##"})),
        ];
        let text = render_table("//! doc\n", &schemas);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[5], r####"    ("a", r###"{"description":"\"#\"##"}"###),"####);
        assert_eq!(lines[6], r####"    ("z", r##"{"description":"#channel"}"##),"####);
        let table = [("a", r###"{"description":"\"#\"##"}"###), ("z", r##"{"description":"#channel"}"##)];
        assert_eq!(committed(&table, "z"), schemas[0].1);
        assert_eq!(committed(&table, "a"), schemas[1].1);
    }

    #[test]
    #[should_panic(expected = "no committed schema for `missing`")]
    fn a_key_without_a_schema_is_a_bug() {
        committed(&[("a", "{}")], "missing");
    }
}
