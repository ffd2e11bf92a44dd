//! Argument validation against a tool's JSON Schema, with defaults applied.
//!
//! Written for agents: every problem is reported at once, each with a JSON Pointer, what was
//! expected and what was given, so a model can fix a call in one retry. Only the keywords in
//! [`plugins::schema::SUPPORTED_KEYWORDS`] exist in tool schemas (an invariant test checks this), so
//! this validator understands every schema it meets; anything else is ignored rather than guessed.

use plugins::api::ArgProblem;
use serde_json::{Map, Value};

/// Deepest nesting the validator walks; deeper input is reported, not recursed into.
const MAX_DEPTH: usize = 64;

/// Deepest nesting of arrays and objects a value may have anywhere inside workbench (arguments after
/// `{{step:...}}` refs are filled in, query data and results). serde_json refuses input deeper than
/// 128 levels, so only values that workbench itself combines can come near it; every walker over a
/// `Value` (clone, drop, serialise, scrub, cap) recurses, so nesting is refused before that.
pub const MAX_VALUE_DEPTH: usize = 256;

pub use plugins::text::nests_deeper_than;

/// Drops a value of any depth without recursion (serde_json's own drop recurses once per level).
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Validates `args` (`null` counts as `{}`) and returns them with schema defaults filled in.
pub fn validate(schema: &Value, args: &Value) -> Result<Value, Vec<ArgProblem>> {
    let mut value = if args.is_null() { Value::Object(Map::new()) } else { args.clone() };
    let mut problems = Vec::new();
    check(schema, &mut value, String::new(), 0, &mut problems);
    if problems.is_empty() { Ok(value) } else { Err(problems) }
}

fn check(schema: &Value, value: &mut Value, path: String, depth: usize, out: &mut Vec<ArgProblem>) {
    let Value::Object(s) = schema else { return };
    if depth > MAX_DEPTH {
        out.push(problem(&path, format!("nested deeper than {MAX_DEPTH} levels")));
        return;
    }
    if let Some(types) = s.get("type") {
        let allowed: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| type_matches(t, value)) {
            out.push(problem(&path, format!("expected {}, got {}", allowed.join(" or "), describe(value))));
            return;
        }
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        out.push(problem(&path, format!("expected one of {}, got {}", list.join(", "), describe(value))));
        return;
    }
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            if let Some(min) = s.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                out.push(problem(&path, format!("must be at least {}, got {n}", fmt_num(min))));
            }
            if let Some(max) = s.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                out.push(problem(&path, format!("must be at most {}, got {n}", fmt_num(max))));
            }
        }
        Value::String(text) => {
            let len = text.chars().count();
            if let Some(min) = s.get("minLength").and_then(Value::as_u64)
                && (len as u64) < min
            {
                let what = if len == 0 { "an empty string".to_string() } else { format!("{len}") };
                out.push(problem(&path, format!("must be at least {min} characters long, got {what}")));
            }
            if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
                && len as u64 > max
            {
                out.push(problem(&path, format!("must be at most {max} characters long, got {len}")));
            }
        }
        Value::Array(items) => {
            if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                out.push(problem(&path, format!("needs at least {min} item(s), got {}", items.len())));
            }
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                out.push(problem(&path, format!("takes at most {max} item(s), got {}", items.len())));
            }
            if let Some(item_schema) = s.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    check(item_schema, item, format!("{path}/{i}"), depth + 1, out);
                }
            }
        }
        Value::Object(map) => check_object(s, map, &path, depth, out),
        _ => {}
    }
}

fn check_object(
    s: &Map<String, Value>,
    map: &mut Map<String, Value>,
    path: &str,
    depth: usize,
    out: &mut Vec<ArgProblem>,
) {
    let empty = Map::new();
    let props = s.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    if let Some(Value::Array(required)) = s.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                let hint = props
                    .get(name)
                    .and_then(|p| p.get("type"))
                    .map(|t| format!(" ({})", t.as_str().unwrap_or("value")))
                    .unwrap_or_default();
                out.push(problem(&format!("{path}/{}", escape(name)), format!("required parameter is missing{hint}")));
            }
        }
    }
    let additional = s.get("additionalProperties");
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let child_path = format!("{path}/{}", escape(&key));
        if let Some(prop_schema) = props.get(&key) {
            if let Some(v) = map.get_mut(&key) {
                check(prop_schema, v, child_path, depth + 1, out);
            }
        } else {
            match additional {
                Some(Value::Bool(false)) => {
                    let mut message = format!("unknown parameter '{key}'");
                    if let Some(near) = nearest(&key, props.keys()) {
                        message.push_str(&format!("; did you mean '{near}'?"));
                    } else if !props.is_empty() {
                        let names: Vec<&str> = props.keys().map(String::as_str).collect();
                        message.push_str(&format!("; parameters are: {}", names.join(", ")));
                    }
                    out.push(problem(&child_path, message));
                }
                Some(extra @ Value::Object(_)) => {
                    if let Some(v) = map.get_mut(&key) {
                        check(extra, v, child_path, depth + 1, out);
                    }
                }
                _ => {}
            }
        }
    }
    for (name, prop_schema) in props {
        if !map.contains_key(name)
            && let Some(default) = prop_schema.get("default")
        {
            map.insert(name.clone(), default.clone());
        }
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// A short, human description of a value for "expected X, got Y".
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let (cut, more) = plugins::api::truncate_chars(s, 40);
            format!("string \"{cut}{}\"", if more { "…" } else { "" })
        }
        Value::Array(a) => format!("an array of {} item(s)", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{}", x as i64) } else { format!("{x}") }
}

fn problem(path: &str, message: String) -> ArgProblem {
    ArgProblem { path: path.to_string(), problem: message }
}

/// JSON Pointer escaping (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The closest known name to a mistyped one, when it is close enough to be a likely typo or a
/// common variant (`repo_name` for `repo`).
pub fn nearest<'a>(wrong: &str, candidates: impl Iterator<Item = &'a String>) -> Option<&'a str> {
    let wrong_l = wrong.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let cl = c.to_ascii_lowercase();
        let d = if cl.contains(&wrong_l) || wrong_l.contains(&cl) { 1 } else { levenshtein(&wrong_l, &cl) };
        let limit = (c.len().max(wrong.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c.as_str()));
        }
    }
    best.map(|(_, c)| c)
}

/// Edit distance over chars counting a swap of neighbours as one edit (optimal string alignment),
/// so "titel" is one typo away from "title". Inputs here are short identifiers and words.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// Compact list of a schema's parameters for error messages: name, type, required.
pub fn expected_parameters(schema: &Value) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, p) in props {
            let ty = match p.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                _ => "any".into(),
            };
            let ty = match p.get("enum").and_then(Value::as_array) {
                Some(values) => format!("{ty}: {}", values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("|")),
                None => ty,
            };
            let tag = if required.contains(&name.as_str()) { ", required" } else { "" };
            out.insert(name.clone(), Value::String(format!("{ty}{tag}")));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["owner", "repo", "title"],
            "properties": {
                "owner": {"type": "string", "minLength": 1},
                "repo": {"type": "string"},
                "title": {"type": "string"},
                "draft": {"type": "boolean", "default": false},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            }
        })
    }

    #[test]
    fn applies_defaults_and_accepts_valid_args() {
        let out = validate(&schema(), &json!({"owner": "a", "repo": "b", "title": "t"})).unwrap();
        assert_eq!(out["draft"], false);
        assert_eq!(out["limit"], 10);
        assert!(out.get("state").is_none());
    }

    #[test]
    fn reports_every_problem_at_once() {
        let err = validate(
            &schema(),
            &json!({"owner": "", "repo_name": "b", "limit": 99, "state": "merged", "labels": ["a", 3, "c"]}),
        )
        .unwrap_err();
        let paths: Vec<&str> = err.iter().map(|p| p.path.as_str()).collect();
        for want in ["/owner", "/repo", "/title", "/repo_name", "/limit", "/state", "/labels", "/labels/1"] {
            assert!(paths.contains(&want), "missing {want} in {err:?}");
        }
        let by = |p: &str| err.iter().find(|x| x.path == p).unwrap().problem.clone();
        assert_eq!(by("/repo_name"), "unknown parameter 'repo_name'; did you mean 'repo'?");
        assert_eq!(by("/limit"), "must be at most 50, got 99");
        assert_eq!(by("/state"), "expected one of \"open\", \"closed\", got string \"merged\"");
        assert_eq!(by("/labels/1"), "expected string, got number 3");
        assert_eq!(by("/title"), "required parameter is missing (string)");
    }

    #[test]
    fn null_args_mean_empty_object_and_wrong_root_type_is_reported() {
        let s = json!({"type": "object", "properties": {"q": {"type": "string", "default": "x"}}});
        assert_eq!(validate(&s, &Value::Null).unwrap(), json!({"q": "x"}));
        let err = validate(&s, &json!([1])).unwrap_err();
        assert_eq!(err[0].problem, "expected object, got an array of 1 item(s)");
    }

    #[test]
    fn integers_accept_whole_floats_only() {
        let s = json!({"type": "integer"});
        assert!(validate(&s, &json!(3.0)).is_ok());
        assert!(validate(&s, &json!(3.5)).is_err());
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let s = json!({"type": "array", "items": {"type": "array"}});
        let mut deep = json!(1);
        for _ in 0..200 {
            deep = json!([deep]);
        }
        // The item schema stops at depth 2, so this is simply valid; no recursion blow-up.
        assert!(validate(&s, &deep).is_ok());
    }

    #[test]
    fn swapped_letters_are_one_typo() {
        assert_eq!(levenshtein("titel", "title"), 1);
        assert_eq!(levenshtein("calender", "calendar"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        let names = ["title".to_string(), "lang".to_string()];
        assert_eq!(nearest("titel", names.iter()), Some("title"));
    }

    #[test]
    fn expected_parameters_are_compact() {
        let e = expected_parameters(&schema());
        assert_eq!(e["owner"], "string, required");
        assert_eq!(e["state"], "string: \"open\"|\"closed\"");
    }
}
