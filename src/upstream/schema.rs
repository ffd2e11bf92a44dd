//! An upstream MCP server's `inputSchema`, brought into the portable subset workbench's validator
//! implements completely (`plugins::schema::SUPPORTED_KEYWORDS`).
//!
//! Local `$ref`s (`#/$defs/...`, `#/definitions/...`) are inlined, null types collapse (the shared
//! `plugins::schema` normalisation), `const` becomes a one-value `enum`, an integer's exclusive
//! bounds become inclusive ones, and keywords that only annotate (`$comment`, `readOnly`,
//! `deprecated`, ...) are dropped. A keyword that imposes a rule workbench cannot check
//! (`pattern`, `anyOf`, `uniqueItems`, ...) is removed from the schema the agent sees and
//! validation runs, and named in [`Normalised::unchecked`]: the tool's description says which rules
//! only the upstream server checks, so no rule is ever ignored silently.

use serde_json::{Map, Value};

/// Deepest nesting (and `$ref` expansion) followed; deeper parts become free-form and are named.
const MAX_DEPTH: usize = 24;

/// Keywords that say something about a value but never refuse one.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "format",
    "$anchor",
];

/// A schema in the portable subset, and the rules only the upstream server checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalised {
    pub schema: Value,
    /// `"<keyword> at <JSON pointer>"` for every rule that was taken out.
    pub unchecked: Vec<String>,
}

/// Normalises an upstream tool's `inputSchema` (a missing or non-object one means "no arguments").
pub fn normalise(input: &Value) -> Normalised {
    let defs = Defs { root: input };
    let mut unchecked = Vec::new();
    let mut schema = walk(input, &defs, "", 0, &mut unchecked);
    if let Value::Object(root) = &mut schema {
        if root.get("type").and_then(Value::as_str) != Some("object") {
            root.insert("type".into(), Value::from("object"));
        }
        root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        // As for every tool: an argument the schema does not name is refused before anything runs.
        root.entry("additionalProperties").or_insert(Value::Bool(false));
    } else {
        schema = serde_json::json!({ "type": "object", "properties": {}, "additionalProperties": false });
    }
    unchecked.sort();
    unchecked.dedup();
    Normalised { schema, unchecked }
}

struct Defs<'a> {
    root: &'a Value,
}

impl Defs<'_> {
    /// The target of a local ref, if it is one.
    fn get(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(pointer)
    }
}

fn walk(schema: &Value, defs: &Defs, path: &str, depth: usize, unchecked: &mut Vec<String>) -> Value {
    let Value::Object(input) = schema else {
        // `true` (anything) stays anything; `false` (nothing) cannot be said portably.
        if schema == &Value::Bool(false) {
            unchecked.push(format!("false schema at {}", shown(path)));
        }
        return Value::Object(Map::new());
    };
    if depth > MAX_DEPTH {
        unchecked.push(format!("nesting deeper than {MAX_DEPTH} at {}", shown(path)));
        return Value::Object(Map::new());
    }
    let mut map = input.clone();
    if let Some(Value::String(reference)) = map.remove("$ref") {
        match defs.get(&reference) {
            Some(target) => {
                let expanded = walk(target, defs, path, depth + 1, unchecked);
                if let Value::Object(target) = expanded {
                    for (k, v) in target {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            None => unchecked.push(format!("$ref {reference} at {}", shown(path))),
        }
    }
    let mut value = Value::Object(map);
    plugins::schema::normalise_value(&mut value);
    let Value::Object(mut map) = value else { unreachable!("normalise keeps an object") };
    for key in ANNOTATIONS {
        map.remove(*key);
    }
    if let Some(c) = map.remove("const") {
        map.entry("enum").or_insert(Value::Array(vec![c]));
    }
    let integer = map.get("type").and_then(Value::as_str) == Some("integer");
    for (exclusive, inclusive, step) in [("exclusiveMinimum", "minimum", 1), ("exclusiveMaximum", "maximum", -1)] {
        if let Some(bound) = map.remove(exclusive) {
            match bound.as_i64() {
                Some(b) if integer && !map.contains_key(inclusive) => {
                    map.insert(inclusive.into(), Value::from(b + step));
                }
                _ => unchecked.push(format!("{exclusive} at {}", shown(path))),
            }
        }
    }
    // A `type` list becomes one type when only one is left; an unknown type name is a rule we
    // cannot check.
    if let Some(t) = map.get("type") {
        let known = |s: &str| ["string", "integer", "number", "boolean", "object", "array", "null"].contains(&s);
        let ok = match t {
            Value::String(s) => known(s),
            Value::Array(a) => a.iter().all(|x| x.as_str().is_some_and(known)),
            _ => false,
        };
        if !ok {
            unchecked.push(format!("type {t} at {}", shown(path)));
            map.remove("type");
        }
    }
    if let Some(Value::Object(props)) = map.remove("properties") {
        let mut out = Map::new();
        for (name, p) in props {
            let child = walk(&p, defs, &format!("{path}/properties/{}", escape(&name)), depth + 1, unchecked);
            out.insert(name, child);
        }
        map.insert("properties".into(), Value::Object(out));
    }
    if let Some(items) = map.remove("items") {
        if items.is_object() || items.is_boolean() {
            map.insert("items".into(), walk(&items, defs, &format!("{path}/items"), depth + 1, unchecked));
        } else {
            unchecked.push(format!("items (tuple form) at {}", shown(path)));
        }
    }
    match map.remove("additionalProperties") {
        Some(Value::Bool(b)) => {
            map.insert("additionalProperties".into(), Value::Bool(b));
        }
        Some(ap @ Value::Object(_)) => {
            let child = walk(&ap, defs, &format!("{path}/additionalProperties"), depth + 1, unchecked);
            map.insert("additionalProperties".into(), child);
        }
        Some(_) | None => {}
    }
    if let Some(Value::Array(required)) = map.get("required") {
        let kept: Vec<Value> = required.iter().filter(|r| r.is_string()).cloned().collect();
        map.insert("required".into(), Value::Array(kept));
    }
    for key in map.keys().cloned().collect::<Vec<_>>() {
        if !plugins::schema::SUPPORTED_KEYWORDS.contains(&key.as_str()) {
            map.remove(&key);
            unchecked.push(format!("{key} at {}", shown(path)));
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("object") && !map.contains_key("properties") {
        map.entry("additionalProperties").or_insert(Value::Bool(true));
    }
    Value::Object(map)
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "the root" } else { path }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_nullables_and_consts_become_portable() {
        let input = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Args",
            "properties": {
                "mode": { "const": "fast" },
                "count": { "type": "integer", "exclusiveMinimum": 0 },
                "who": { "$ref": "#/$defs/Person" },
                "note": { "anyOf": [{ "type": "string" }, { "type": "null" }], "default": null }
            },
            "required": ["who"],
            "$defs": { "Person": { "type": "object", "properties": { "name": { "type": "string" } } } }
        });
        let n = normalise(&input);
        assert!(n.unchecked.is_empty(), "{:?}", n.unchecked);
        let s = n.schema;
        assert_eq!(s["properties"]["mode"]["enum"], json!(["fast"]));
        assert_eq!(s["properties"]["count"]["minimum"], 1);
        assert_eq!(s["properties"]["who"]["properties"]["name"]["type"], "string");
        assert_eq!(s["properties"]["note"]["type"], "string");
        assert_eq!(s["additionalProperties"], false);
        let text = s.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs") && !text.contains("null") && !text.contains("title"));
    }

    #[test]
    fn rules_we_cannot_check_are_named_not_dropped_silently() {
        let input = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "pattern": "^/" },
                "tags": { "type": "array", "uniqueItems": true, "items": { "type": "string" } },
                "either": { "oneOf": [{ "type": "string" }, { "type": "integer" }] }
            }
        });
        let n = normalise(&input);
        assert_eq!(
            n.unchecked,
            vec!["oneOf at /properties/either", "pattern at /properties/path", "uniqueItems at /properties/tags"]
        );
        assert!(n.schema["properties"]["path"].get("pattern").is_none());
    }

    #[test]
    fn a_recursive_ref_stops_at_the_depth_bound() {
        let input = json!({
            "type": "object",
            "properties": { "node": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
        });
        let n = normalise(&input);
        assert!(n.unchecked.iter().any(|u| u.starts_with("nesting deeper")), "{:?}", n.unchecked);
    }
}
