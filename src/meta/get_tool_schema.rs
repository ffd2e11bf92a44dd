//! get_tool_schema: one tool's JSON Schema (2020-12, object-rooted).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Annotations, Failure, Hint, MetaTool, schema_of};
use crate::app::App;
use crate::engine::Hooks;

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
                failure = failure.hint(Hint::DidYouMean(similar.into_iter().map(String::from).collect()));
            }
            Err(failure)
        }
    }
}

/// The meta-tool.
pub struct GetToolSchema;

impl MetaTool for GetToolSchema {
    const NAME: &'static str = "get_tool_schema";
    const TITLE: &'static str = "Get tool schema";
    const DESCRIPTION: &'static str = "Get input schema for a specific tool";
    const ANNOTATIONS: Annotations = Annotations::READ;
    const LOOKS_UP_TOOLS: bool = true;
    type Args = Args;
    type Answer = ToolSchema;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, _: &Hooks) -> Result<ToolSchema, Failure> {
        run(app, args)
    }
}
