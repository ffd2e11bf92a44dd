//! A Sentry event as a developer reads it: exceptions with their stack traces (most recent call
//! last, cut to a budget from the oldest end), the last breadcrumbs, tags, request, user, contexts.

use serde_json::{Map, Value, json};

use crate::api::{compact, truncate_chars};

/// One stack frame as a line a developer reads: `path:line in function`, then the code.
fn frame_lines(frame: &Value) -> String {
    let file = frame["filename"].as_str().or(frame["absPath"].as_str()).or(frame["module"].as_str()).unwrap_or("?");
    let mut line = format!("  {file}");
    if let Some(n) = frame["lineNo"].as_u64() {
        line.push_str(&format!(":{n}"));
        if let Some(c) = frame["colNo"].as_u64() {
            line.push_str(&format!(":{c}"));
        }
    }
    if let Some(f) = frame["function"].as_str() {
        line.push_str(&format!(" in {f}"));
    }
    if frame["inApp"].as_bool() == Some(true) {
        line.push_str(" [app]");
    }
    let code = frame["context"].as_array().and_then(|ctx| {
        ctx.iter()
            .find(|c| {
                c.get(0).and_then(Value::as_u64).is_some()
                    && c.get(0).and_then(Value::as_u64) == frame["lineNo"].as_u64()
            })
            .and_then(|c| c.get(1).and_then(Value::as_str))
    });
    if let Some(code) = code {
        line.push_str(&format!("\n      {}", code.trim()));
    }
    line
}

/// Renders an exception's frames, most recent call last, within `budget` characters (keeping the
/// most recent frames when it has to cut).
fn render_stack(frames: &[Value], budget: usize) -> (String, bool) {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    let mut cut = false;
    for frame in frames.iter().rev() {
        let text = frame_lines(frame);
        if used + text.len() + 1 > budget {
            cut = true;
            break;
        }
        used += text.len() + 1;
        kept.push(text);
    }
    kept.reverse();
    let mut out = kept.join("\n");
    if cut {
        out = format!("  ... {} older frames not shown\n{out}", frames.len() - kept.len());
    }
    (out, cut)
}

pub(super) fn shape_event(event: &Value, max_breadcrumbs: usize, max_chars: usize) -> Value {
    let entries = event["entries"].as_array().cloned().unwrap_or_default();
    let entry = |kind: &str| entries.iter().find(|e| e["type"] == kind).map(|e| &e["data"]);
    let mut truncated = false;

    let exceptions: Vec<Value> = match entry("exception") {
        Some(data) => {
            let values = data["values"].as_array().cloned().unwrap_or_default();
            let budget = max_chars / values.len().max(1);
            values
                .iter()
                .map(|x| {
                    let frames = x["stacktrace"]["frames"].as_array().cloned().unwrap_or_default();
                    let (stack, cut) = render_stack(&frames, budget);
                    truncated |= cut;
                    compact(json!({
                        "type": x["type"],
                        "value": x["value"],
                        "module": x["module"],
                        "handled": x["mechanism"]["handled"],
                        "mechanism": x["mechanism"]["type"],
                        "stacktrace": (!stack.is_empty()).then_some(stack),
                    }))
                })
                .collect()
        }
        None => Vec::new(),
    };

    let breadcrumbs: Vec<Value> = entry("breadcrumbs")
        .and_then(|d| d["values"].as_array())
        .map(|crumbs| {
            let skip = crumbs.len().saturating_sub(max_breadcrumbs);
            crumbs
                .iter()
                .skip(skip)
                .map(|b| {
                    compact(json!({
                        "time": b["timestamp"],
                        "category": b["category"],
                        "level": b["level"],
                        "message": b["message"].as_str().map(|m| truncate_chars(m, 300).0),
                        "data": b["data"].as_object().filter(|d| !d.is_empty()).map(|_| b["data"].clone()),
                    }))
                })
                .collect()
        })
        .unwrap_or_default();

    let mut tags = Map::new();
    for t in event["tags"].as_array().into_iter().flatten() {
        if let (Some(k), Some(v)) = (t["key"].as_str(), t["value"].as_str()) {
            tags.insert(k.to_string(), Value::String(v.to_string()));
        }
    }

    let request = entry("request").map(|r| compact(json!({ "method": r["method"], "url": r["url"] })));
    let message =
        entry("message").and_then(|m| m["formatted"].as_str().or(m["message"].as_str())).or(event["message"].as_str());
    let message = message.filter(|m| !m.is_empty()).map(|m| truncate_chars(m, 2_000).0);
    let user = &event["user"];
    let user = if user.is_object() {
        compact(
            json!({ "id": user["id"], "email": user["email"], "username": user["username"], "ip_address": user["ip_address"] }),
        )
    } else {
        Value::Null
    };
    let contexts: Map<String, Value> = event["contexts"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, c)| {
            let name = c["name"].as_str()?;
            let label = match c["version"].as_str() {
                Some(v) => format!("{name} {v}"),
                None => name.to_string(),
            };
            Some((k.clone(), Value::String(label)))
        })
        .collect();
    let release = match &event["release"] {
        Value::Object(r) => r.get("version").cloned().unwrap_or(Value::Null),
        other => other.clone(),
    };

    compact(json!({
        "event_id": event["eventID"].as_str().or(event["id"].as_str()),
        "title": event["title"],
        "message": message,
        "date": event["dateCreated"],
        "platform": event["platform"],
        "environment": tags.get("environment").cloned(),
        "release": release,
        "exceptions": (!exceptions.is_empty()).then_some(exceptions),
        "breadcrumbs": (!breadcrumbs.is_empty()).then_some(breadcrumbs),
        "tags": (!tags.is_empty()).then_some(Value::Object(tags)),
        "request": request,
        "user": user.as_object().filter(|u| !u.is_empty()).map(|_| user.clone()),
        "contexts": (!contexts.is_empty()).then_some(Value::Object(contexts)),
        "sdk": event["sdk"]["name"].as_str().map(|n| match event["sdk"]["version"].as_str() {
            Some(v) => format!("{n} {v}"),
            None => n.to_string(),
        }),
        "truncated": truncated.then_some(true),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_traces_keep_the_most_recent_frames() {
        let frames: Vec<Value> = (1..=50)
            .map(|i| json!({"filename": format!("app/f{i}.py"), "lineNo": i, "function": format!("fn{i}"), "inApp": i > 45, "context": [[i, format!("  call{i}()  ")]]}))
            .collect();
        let (all, cut) = render_stack(&frames, 100_000);
        assert!(!cut);
        assert!(all.starts_with("  app/f1.py:1 in fn1\n      call1()"));
        assert!(all.ends_with("  app/f50.py:50 in fn50 [app]\n      call50()"));
        let (some, cut) = render_stack(&frames, 300);
        assert!(cut);
        assert!(some.contains("older frames not shown"));
        assert!(some.ends_with("call50()"));
        assert!(!some.contains("fn1 "));
    }
}
