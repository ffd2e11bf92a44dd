//! Tool schemas from argument types, normalised into the portable subset of JSON Schema 2020-12
//! that strict MCP clients accept and that workbench's own validator understands completely.
//!
//! schemars describes `Option<T>` as "T or null", adds `$schema`/`title`, and emits Rust-specific
//! `format`s (`uint32`); none of that helps an agent and some of it trips strict clients. The
//! normalisation below removes it, so an optional field is simply absent from `required`.

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

/// The normalised JSON Schema for an argument type.
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
