//! Notion property values at the tool boundary: read as simple values (a status name, a date
//! string, a list of tag names, people's names) and written from simple values, converted with the
//! property types of a data source schema or of the page itself.

use serde_json::{Map, Value, json};

use super::markdown::{md_to_rich_text, plain_text};
use crate::api::*;

pub(super) fn person(u: &Value) -> Value {
    u["name"].as_str().map(Value::from).unwrap_or_else(|| u["id"].clone())
}

/// A property value as the simple value a person would read.
pub(super) fn simplify(p: &Value) -> Value {
    let t = p["type"].as_str().unwrap_or_default();
    let v = &p[t];
    let names = |arr: &Value| -> Value { arr.as_array().into_iter().flatten().map(|o| o["name"].clone()).collect() };
    match t {
        "title" | "rich_text" => Value::String(plain_text(v)),
        "number" | "checkbox" | "url" | "email" | "phone_number" | "created_time" | "last_edited_time" => v.clone(),
        "select" | "status" => v["name"].clone(),
        "multi_select" => names(v),
        "date" => date_value(v),
        "people" => v.as_array().into_iter().flatten().map(person).collect(),
        "relation" => v.as_array().into_iter().flatten().map(|r| r["id"].clone()).collect(),
        "files" => v
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                f["external"]["url"]
                    .as_str()
                    .or(f["file"]["url"].as_str())
                    .map(Value::from)
                    .unwrap_or(f["name"].clone())
            })
            .collect(),
        "created_by" | "last_edited_by" => person(v),
        "formula" => match v["type"].as_str() {
            Some("date") => date_value(&v["date"]),
            Some(ft) => v[ft].clone(),
            None => Value::Null,
        },
        "rollup" => match v["type"].as_str() {
            Some("array") => v["array"].as_array().into_iter().flatten().map(simplify).collect(),
            Some("date") => date_value(&v["date"]),
            Some(rt) => v[rt].clone(),
            None => Value::Null,
        },
        "unique_id" => match (v["prefix"].as_str(), v["number"].as_u64()) {
            (Some(prefix), Some(n)) => Value::String(format!("{prefix}-{n}")),
            (None, Some(n)) => Value::from(n),
            _ => Value::Null,
        },
        "verification" => v["state"].clone(),
        _ => Value::Null,
    }
}

pub(super) fn date_value(d: &Value) -> Value {
    if d.is_null() {
        return Value::Null;
    }
    match d["end"].as_str() {
        Some(end) => json!({"start": d["start"], "end": end}),
        None => d["start"].clone(),
    }
}

pub(super) fn simple_properties(page: &Value) -> Value {
    let mut out = Map::new();
    for (name, p) in page["properties"].as_object().into_iter().flatten() {
        if p["type"] == "title" {
            continue;
        }
        let v = simplify(p);
        let empty = v.is_null() || v.as_str() == Some("") || v.as_array().is_some_and(Vec::is_empty);
        if !empty {
            out.insert(name.clone(), v);
        }
    }
    Value::Object(out)
}

/// Why a simple property value cannot be converted (the text is the problem the agent reads).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PropertyError {
    /// The schema has no property of that name (nor one differing only in case).
    #[error("no property named '{name}'; the properties are: {known}")]
    Unknown { name: String, known: String },
    /// The value does not fit the property's type.
    #[error("'{name}' is a {kind} property: give {expected}")]
    Expected { name: String, kind: String, expected: &'static str },
    /// Notion computes the property (formula, rollup, created time...).
    #[error("'{name}' is a {kind} property, which Notion computes; it cannot be set")]
    Computed { name: String, kind: String },
}

/// A simple value (or a raw Notion property value) as the property value Notion wants.
pub(super) fn property_value(name: &str, kind: &str, v: &Value) -> Result<Value, PropertyError> {
    // A raw property value ({"select": {...}}) passes through untouched.
    if let Some(obj) = v.as_object()
        && obj.len() == 1
        && obj.contains_key(kind)
    {
        return Ok(v.clone());
    }
    let list = |v: &Value| -> Vec<String> {
        match v {
            Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
            Value::String(s) => s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect(),
            _ => Vec::new(),
        }
    };
    let text = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let expect =
        |expected: &'static str| PropertyError::Expected { name: name.to_string(), kind: kind.to_string(), expected };
    Ok(match kind {
        "title" | "rich_text" => json!({kind: md_to_rich_text(&text(v).ok_or_else(|| expect("text"))?)}),
        "number" => match v {
            Value::Number(_) | Value::Null => json!({"number": v}),
            Value::String(s) => json!({"number": s.trim().parse::<f64>().map_err(|_| expect("a number"))?}),
            _ => return Err(expect("a number")),
        },
        "select" | "status" => match v {
            Value::Null => json!({kind: null}),
            _ => json!({kind: {"name": text(v).ok_or_else(|| expect("an option name"))?}}),
        },
        "multi_select" => json!({"multi_select": list(v).into_iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}),
        "date" => match v {
            Value::Null => json!({"date": null}),
            Value::String(s) => json!({"date": {"start": s}}),
            Value::Object(o) if o.contains_key("start") => json!({"date": v}),
            _ => return Err(expect("a date string (2026-05-01 or 2026-05-01T09:00:00Z) or {start, end}")),
        },
        "checkbox" => match v {
            Value::Bool(b) => json!({"checkbox": b}),
            Value::String(s) if s == "true" || s == "false" => json!({"checkbox": s == "true"}),
            _ => return Err(expect("true or false")),
        },
        "url" | "email" | "phone_number" => match v {
            Value::Null => json!({kind: null}),
            _ => json!({kind: text(v).ok_or_else(|| expect("text"))?}),
        },
        "people" | "relation" => {
            json!({kind: list(v).into_iter().map(|id| json!({"id": id})).collect::<Vec<_>>()})
        }
        "files" => json!({"files": list(v).into_iter().map(|url| {
            let name = url.rsplit('/').next().unwrap_or(&url).to_string();
            json!({"name": name, "type": "external", "external": {"url": url}})
        }).collect::<Vec<_>>()}),
        other => return Err(PropertyError::Computed { name: name.to_string(), kind: other.to_string() }),
    })
}

/// Converts the agent's simple property values with a schema (data source properties or a page's
/// own properties: both map names to objects with a `type`).
pub(super) fn build_properties(schema: &Value, given: &Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    let known = schema.as_object().cloned().unwrap_or_default();
    let mut out = Map::new();
    let mut problems = Vec::new();
    for (name, v) in given {
        let found = known.get_key_value(name).or_else(|| known.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)));
        let Some((real, p)) = found else {
            let names: Vec<&str> = known.keys().map(String::as_str).collect();
            let problem = PropertyError::Unknown { name: name.clone(), known: names.join(", ") };
            problems.push(ArgProblem { path: format!("/properties/{name}"), problem: problem.to_string() });
            continue;
        };
        match property_value(real, p["type"].as_str().unwrap_or_default(), v) {
            Ok(value) => {
                out.insert(real.clone(), value);
            }
            Err(problem) => {
                problems.push(ArgProblem { path: format!("/properties/{name}"), problem: problem.to_string() })
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ToolError::InvalidArguments {
            message: problems.iter().map(|p| p.problem.clone()).collect::<Vec<_>>().join("; "),
            problems,
        })
    }
}

pub(super) fn title_property_name(schema: &Value) -> Option<String> {
    schema.as_object()?.iter().find(|(_, p)| p["type"] == "title").map(|(k, _)| k.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_property_values_convert_by_type() {
        let schema = json!({
            "Name": {"id": "title", "type": "title", "title": {}},
            "Status": {"id": "a", "type": "status", "status": {"options": []}},
            "Tags": {"id": "b", "type": "multi_select", "multi_select": {"options": []}},
            "Due": {"id": "c", "type": "date", "date": {}},
            "Points": {"id": "d", "type": "number", "number": {"format": "number"}},
            "Done": {"id": "e", "type": "checkbox", "checkbox": {}},
            "Owner": {"id": "f", "type": "people", "people": {}},
            "Score": {"id": "g", "type": "formula", "formula": {"expression": "1"}}
        });
        let given = json!({"status": "Done", "Tags": "a, b", "Due": "2026-05-01", "Points": "3", "Done": true, "Owner": ["u1"]});
        let props = build_properties(&schema, given.as_object().unwrap()).unwrap();
        assert_eq!(
            Value::Object(props),
            json!({
                "Status": {"status": {"name": "Done"}},
                "Tags": {"multi_select": [{"name": "a"}, {"name": "b"}]},
                "Due": {"date": {"start": "2026-05-01"}},
                "Points": {"number": 3.0},
                "Done": {"checkbox": true},
                "Owner": {"people": [{"id": "u1"}]}
            })
        );
        let bad = build_properties(&schema, json!({"Score": 1, "Nope": 2, "Done": "maybe"}).as_object().unwrap());
        let Err(ToolError::InvalidArguments { problems, .. }) = bad else { panic!("expected problems") };
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/properties/Score", "/properties/Nope", "/properties/Done"]);
        assert_eq!(problems[0].problem, "'Score' is a formula property, which Notion computes; it cannot be set");
        assert_eq!(
            problems[1].problem,
            "no property named 'Nope'; the properties are: Name, Status, Tags, Due, Points, Done, Owner, Score"
        );
        assert_eq!(problems[2].problem, "'Done' is a checkbox property: give true or false");
    }

    #[test]
    fn property_values_simplify_for_reading() {
        assert_eq!(simplify(&json!({"type": "status", "status": {"name": "Done", "color": "green"}})), json!("Done"));
        assert_eq!(
            simplify(&json!({"type": "date", "date": {"start": "2026-05-01", "end": null}})),
            json!("2026-05-01")
        );
        assert_eq!(simplify(&json!({"type": "formula", "formula": {"type": "number", "number": 42}})), json!(42));
        assert_eq!(
            simplify(&json!({"type": "unique_id", "unique_id": {"prefix": "TASK", "number": 7}})),
            json!("TASK-7")
        );
        assert_eq!(
            simplify(
                &json!({"type": "people", "people": [{"object": "user", "id": "u1", "name": "Ada"}, {"object": "user", "id": "u2"}]})
            ),
            json!(["Ada", "u2"])
        );
    }
}
