//! The input schemas of the meta-tools, generated from their `Args` types by the normaliser the
//! plugins use ([`plugins::schema::schema_for`]), then put in the meta-tools' wire form.
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

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The wire order of schema keywords (`items` is placed by [`wire_order`] itself).
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

/// The meta-tool input schema for an `Args` type.
pub fn args_schema<T: JsonSchema>() -> Value {
    let mut value = plugins::schema::schema_for::<T>();
    wire_form(&mut value, true);
    value
}

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
