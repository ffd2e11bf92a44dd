//! get_tool_schema: one tool's JSON Schema (2020-12, object-rooted).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{ok, str_arg};
use crate::app::App;
use crate::engine::Outcome;

pub fn run(app: &Arc<App>, args: Value) -> Outcome {
    let name = str_arg(&args, "tool").trim();
    match app.registry().get(name) {
        Some(tool) => ok(json!({ "schema": tool.schema() })),
        None => {
            let mut body = json!({ "error": "Tool not found" });
            let similar = app.registry().similar_names(name, 3);
            if !similar.is_empty() {
                body["did_you_mean"] = json!(similar);
            }
            Outcome { body, is_error: true }
        }
    }
}
