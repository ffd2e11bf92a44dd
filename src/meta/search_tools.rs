//! search_tools: ranked tool discovery over the whole catalogue.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{ok, plain_error, str_arg};
use crate::app::App;
use crate::engine::Outcome;

pub fn run(app: &Arc<App>, args: Value) -> Outcome {
    let query = str_arg(&args, "query").trim();
    if query.is_empty() {
        return plain_error("query is empty: describe what you want to do, e.g. \"list open pull requests\"");
    }
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(10) as usize;
    let connected = |integration: &str| app.is_connected(integration);
    let hits = app.registry().index().search(query, limit, &connected);
    let tools: Vec<Value> = hits
        .into_iter()
        .map(|h| {
            json!({
                "name": h.name,
                "description": h.description,
                "integration": h.integration,
                "score": h.score,
                "connected": app.is_connected(h.integration),
            })
        })
        .collect();
    ok(json!({ "tools": tools }))
}
