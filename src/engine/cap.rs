//! The response size cap: nothing larger than the limit leaves the engine.
//!
//! A response over the cap is shrunk structurally (long arrays keep their first items, long strings
//! their beginning) rather than cut mid-JSON, and gains a `truncated` note that tells the agent how
//! to ask for less. The shrunk response is still valid JSON of the same shape.

use serde_json::{Value, json};

/// The cap on one execute_tools response, in characters of compact JSON (README, "execute_tools in brief").
pub const MAX_RESPONSE_CHARS: usize = 60_000;

pub fn len_chars(v: &Value) -> usize {
    // Compact JSON is ASCII except inside strings; byte length is a safe upper bound.
    serde_json::to_string(v).map(|s| s.len()).unwrap_or(usize::MAX)
}

/// Shrinks `response` (an object) to fit `limit`; returns whether anything was cut.
pub fn cap_response(response: &mut Value, limit: usize) -> bool {
    let original = len_chars(response);
    if original <= limit {
        return false;
    }
    // Leave room for the note itself.
    let budget = limit.saturating_sub(600);
    let mut max_string = 4_000usize;
    let mut max_items = 200usize;
    for _ in 0..24 {
        shrink(response, max_string, max_items);
        if len_chars(response) <= budget {
            break;
        }
        max_string = (max_string * 2 / 3).max(40);
        max_items = (max_items * 2 / 3).max(1);
        if max_string == 40 && max_items == 1 && len_chars(response) > budget {
            // Pathological shape (thousands of keys); replace the bulk outright.
            *response = json!({ "results_omitted": true });
            break;
        }
    }
    let note = json!({
        "original_chars": original,
        "limit_chars": limit,
        "hint": "The response was too large and long arrays and strings were shortened (marked with '…'). \
                 Ask for less: use `return` to project only the fields you need, pass a smaller `limit`, \
                 or narrow the call's arguments.",
    });
    if let Value::Object(map) = response {
        map.insert("truncated".into(), note);
    }
    true
}

fn shrink(v: &mut Value, max_string: usize, max_items: usize) {
    match v {
        Value::String(s) if s.len() > max_string => {
            let (mut cut, _) = plugins::api::truncate_chars(s, max_string);
            cut.push('…');
            *s = cut;
        }
        Value::Array(items) => {
            if items.len() > max_items {
                let dropped = items.len() - max_items;
                items.truncate(max_items);
                items.push(Value::String(format!("… {dropped} more item(s) omitted")));
            }
            items.iter_mut().for_each(|i| shrink(i, max_string, max_items));
        }
        Value::Object(map) => map.values_mut().for_each(|i| shrink(i, max_string, max_items)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_responses_are_untouched() {
        let mut v = json!({"results": [{"result": "x"}]});
        assert!(!cap_response(&mut v, 100));
        assert_eq!(v, json!({"results": [{"result": "x"}]}));
    }

    #[test]
    fn large_responses_fit_and_say_so() {
        let rows: Vec<Value> = (0..5_000).map(|i| json!({"id": i, "text": "y".repeat(50)})).collect();
        let mut v = json!({"results": [{"result": {"rows": rows, "body": "z".repeat(100_000)}}]});
        assert!(cap_response(&mut v, MAX_RESPONSE_CHARS));
        assert!(len_chars(&v) <= MAX_RESPONSE_CHARS, "{}", len_chars(&v));
        assert_eq!(v["truncated"]["limit_chars"], MAX_RESPONSE_CHARS);
        assert!(v["truncated"]["hint"].as_str().unwrap().contains("return"));
        assert_eq!(v["results"][0]["result"]["rows"][0]["id"], 0);
    }
}
