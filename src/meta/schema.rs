//! The input schemas of the meta-tools, generated from their `Args` types by the normaliser the
//! plugins use ([`plugins::schema::schema_for`]), then put in the meta-tools' wire form.
//!
//! The server does not generate them: they are committed in `src/schemas.rs` (with the built-in
//! tools' schemas) and read by [`committed`]. In this crate's tests `schema_of!` and `builtin!`
//! generate them instead, and `committed_schemas_match_the_argument_types` checks that the
//! committed file is exactly what the argument types give (`UPDATE_SCHEMAS=1` rewrites it).
//!
//! The meta-tools' schemas are a published wire format (the tools/list snapshots of both profiles)
//! that predates the normaliser, so two wire details are settled here rather than in the
//! normaliser (which would change every plugin schema with them):
//! - Key order. schemars emits keys in the order its attributes are applied, and the normaliser's
//!   removals move keys around; here every schema object is put in one fixed order: `type`,
//!   `properties`, `required`, the bounds, an `items` of plain values, `enum`, `default`,
//!   `description`, an `items` of objects (a field's own words before the parts it holds),
//!   `additionalProperties`.
//! - Objects that take any keys (`args`, `return`) are `{"type": "object"}` alone, without the
//!   normaliser's explicit `additionalProperties: true` (both mean the same to a validator).
//!
//! A struct's rustdoc stays out of the schema: descriptions belong to fields (the tool's own
//! description is its `MetaTool::description`).

use serde_json::Value;
#[cfg(test)]
use {schemars::JsonSchema, serde_json::Map};

/// The `//!` lines of `src/schemas.rs`.
#[cfg(test)]
const DOC: &str = "\
//! @generated: the input schemas of workbench's own tools: `builtin/<name>` for the built-in
//! tools (`plugins::schema::schema_for` of their argument types), `meta/<name>` and
//! `runstack/<name>` for the two profiles' meta-tools (`meta::schema::args_schema`). The server
//! reads these instead of running schemars; the test
//! `meta::schema::committed_tests::committed_schemas_match_the_argument_types` regenerates them
//! and fails on any difference. Update with
//! `UPDATE_SCHEMAS=1 cargo test --locked --lib committed_schemas`; do not edit.
";

/// The key of a meta-tool's committed schema: `runstack/<name>` for a tool defined in
/// `meta::runstack` (the runstack profile), `meta/<name>` for the default profile's.
pub fn meta_key(module: &str, name: &str) -> String {
    let profile = if module.ends_with("::runstack") { "runstack" } else { "meta" };
    format!("{profile}/{name}")
}

/// The committed input schema of the meta-tool `name` defined in `module` (its `module_path!()`).
pub fn committed(module: &str, name: &str) -> Value {
    plugins::schema::committed(crate::schemas::SCHEMAS, &meta_key(module, name))
}

/// The wire order of schema keywords (`items` is placed by [`wire_order`] itself).
#[cfg(test)]
const ORDER: &[&str] = &[
    "type",
    "properties",
    "required",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "enum",
    "default",
    "description",
    "additionalProperties",
];

/// The meta-tool input schema for an `Args` type (tests only: it generates the committed text).
#[cfg(test)]
pub fn args_schema<T: JsonSchema>() -> Value {
    let mut value = plugins::schema::schema_for::<T>();
    wire_form(&mut value, true);
    value
}

#[cfg(test)]
fn wire_form(value: &mut Value, root: bool) {
    let Value::Object(map) = value else { return };
    if map.contains_key("properties") {
        map.remove("description");
    } else if !root
        && map.get("type").and_then(Value::as_str) == Some("object")
        && map.get("additionalProperties") == Some(&Value::Bool(true))
    {
        map.remove("additionalProperties");
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for prop in props.values_mut() {
            wire_form(prop, false);
        }
    }
    if let Some(items) = map.get_mut("items") {
        wire_form(items, false);
    }
    *map = wire_order(std::mem::take(map));
}

/// `map` with its keys in [`ORDER`] (unknown keys last, as they came).
#[cfg(test)]
fn wire_order(mut map: Map<String, Value>) -> Map<String, Value> {
    let items = map.remove("items");
    let nested = items.as_ref().is_some_and(|i| i.get("properties").is_some());
    let mut out = Map::new();
    for key in ORDER {
        if *key == "enum"
            && !nested
            && let Some(items) = &items
        {
            out.insert("items".into(), items.clone());
        }
        if *key == "additionalProperties"
            && nested
            && let Some(items) = &items
        {
            out.insert("items".into(), items.clone());
        }
        if let Some(v) = map.remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    out.extend(map);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        /// A name.
        #[schemars(length(min = 1))]
        name: String,
        /// Any keys.
        args: Option<Map<String, Value>>,
    }

    /// Rustdoc that must not reach the schema.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// Things.
        #[schemars(length(min = 1, max = 3))]
        items: Vec<Item>,
        /// Tags.
        #[schemars(length(min = 1))]
        tags: Vec<String>,
        /// How many.
        #[serde(default = "ten")]
        #[schemars(range(min = 1, max = 50))]
        limit: u32,
    }

    fn ten() -> u32 {
        10
    }

    #[test]
    fn keys_come_in_the_wire_order() {
        let s = args_schema::<Args>();
        let expected = json!({
            "type": "object",
            "properties": {
                "items": {
                    "type": "array", "minItems": 1, "maxItems": 3, "description": "Things.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "minLength": 1, "description": "A name." },
                            "args": { "type": "object", "description": "Any keys." }
                        },
                        "required": ["name"],
                        "additionalProperties": false
                    }
                },
                "tags": { "type": "array", "minItems": 1, "items": { "type": "string" }, "description": "Tags." },
                "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "How many." }
            },
            "required": ["items", "tags"],
            "additionalProperties": false
        });
        // The same text, keys in the same order (maps compare equal in any order).
        assert_eq!(serde_json::to_string(&s).unwrap(), serde_json::to_string(&expected).unwrap());
        let order: Vec<&String> = s["properties"]["limit"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["type", "minimum", "maximum", "default", "description"]);
        let order: Vec<&String> = s["properties"]["tags"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["type", "minItems", "items", "description"]);
        let order: Vec<&String> = s["properties"]["items"].as_object().unwrap().keys().collect();
        assert_eq!(order, ["type", "minItems", "maxItems", "description", "items"]);
    }
}

#[cfg(test)]
mod committed_tests {
    use super::*;
    use crate::builtins::BUILTINS;
    use crate::meta::META_TOOLS;
    use crate::meta::runstack::RUNSTACK_TOOLS;

    /// Every built-in tool's and meta-tool's schema by its committed key, generated now from the
    /// argument types (in this crate's tests `builtin!` and `schema_of!` generate).
    fn generated() -> Vec<(String, Value)> {
        let builtins = BUILTINS.iter().map(|b| (format!("builtin/{}", b.name), (b.schema)()));
        let meta = META_TOOLS.iter().map(|t| (format!("meta/{}", t.name), (t.schema)()));
        let runstack = RUNSTACK_TOOLS.iter().map(|t| (format!("runstack/{}", t.name), (t.schema)()));
        builtins.chain(meta).chain(runstack).collect()
    }

    #[test]
    fn committed_schemas_match_the_argument_types() {
        let generated = generated();
        assert_eq!(generated.len(), BUILTINS.len() + META_TOOLS.len() + RUNSTACK_TOOLS.len());
        assert!(BUILTINS.len() > 5 && META_TOOLS.len() > 5 && RUNSTACK_TOOLS.len() == 4, "the tools were read");
        let update = "cargo test --locked --lib committed_schemas";
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/schemas.rs");
        if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
            // The table compiled into this test is the old one until the next build.
            std::fs::write(&file, plugins::schema::render_table(DOC, &generated)).unwrap();
            return;
        }
        let on_disk = std::fs::read_to_string(&file).unwrap();
        plugins::schema::check_table("src/schemas.rs", &on_disk, DOC, crate::schemas::SCHEMAS, &generated, update)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(crate::schemas::SCHEMAS.len(), generated.len(), "exactly one schema per tool");
        // What the server reads, by the keys it looks them up with, is the generated text.
        for b in BUILTINS {
            let read = plugins::schema::committed(crate::schemas::SCHEMAS, &format!("builtin/{}", b.name));
            assert_eq!(read.to_string(), (b.schema)().to_string(), "{}", b.name);
        }
        for (tools, module) in
            [(META_TOOLS, "workbench::meta::search_tools"), (RUNSTACK_TOOLS, "workbench::meta::runstack")]
        {
            for t in tools {
                assert_eq!(committed(module, t.name).to_string(), (t.schema)().to_string(), "{}", t.name);
            }
        }
    }

    /// The two profiles' `search_tools` are two schemas: the key follows the defining module.
    #[test]
    fn the_profile_is_part_of_a_meta_key() {
        assert_eq!(meta_key("workbench::meta::runstack", "search_tools"), "runstack/search_tools");
        assert_eq!(meta_key("workbench::meta::search_tools", "search_tools"), "meta/search_tools");
        assert_eq!(meta_key("workbench::meta::connect", "get_auth_url"), "meta/get_auth_url");
        assert_ne!(
            committed("workbench::meta::runstack", "search_tools"),
            committed("workbench::meta::search_tools", "search_tools")
        );
    }
}
