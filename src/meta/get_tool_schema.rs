//! get_tool_schema: one tool's JSON Schema (2020-12, object-rooted).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Failure;
use crate::app::App;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Exact tool name from search_tools, e.g. "github_create_pr".
    #[schemars(length(min = 1))]
    pub tool: String,
}

/// The tool's input schema.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSchema {
    pub schema: Value,
}

pub fn run(app: &Arc<App>, args: Args) -> Result<ToolSchema, Failure> {
    let name = args.tool.trim();
    match app.registry().get(name) {
        Some(tool) => Ok(ToolSchema { schema: tool.schema().clone() }),
        None => {
            let mut failure = Failure::plain("Tool not found");
            let similar = app.registry().similar_names(name, 3);
            if !similar.is_empty() {
                failure = failure.with("did_you_mean", similar);
            }
            Err(failure)
        }
    }
}
