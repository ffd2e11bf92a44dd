//! execute_tools: the argument shape; everything else is the engine's.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Annotations, Failure, Finish, MetaTool, schema_of};
use crate::app::App;
use crate::engine::{self, Batch, Batched, Execution, Hooks, MAX_BATCH};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Tools to run, in order.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub executions: Vec<ExecutionArgs>,
    /// Run in order (at most 8, each with a ref_id); later args read earlier results as "{{step:<ref_id>.<path>}}", the path being keys or array indexes (e.g. {{step:list.items.0.id}}); a whole-string ref keeps the value's type. A failing step ends the run.
    #[serde(default)]
    pub compose: bool,
    /// Template over results by ref_id, e.g. {"id": "{{step:create.id}}"}, a single ref string or an array of refs; only this is sent back.
    // Any template (string, object or array): the schema names its common form only, because
    // strict clients need one type; the engine checks it before anything runs.
    #[serde(default, rename = "return")]
    #[schemars(extend("type" = "object"))]
    pub ret: Option<Value>,
}

/// One execution of a batch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecutionArgs {
    /// Exact tool name.
    #[schemars(length(min = 1))]
    pub tool: String,
    /// Arguments matching the tool's schema.
    #[serde(default)]
    pub args: Option<Map<String, Value>>,
    /// Names this result for {{step:...}} refs and return; required with compose.
    #[serde(default)]
    pub ref_id: Option<String>,
    /// Connected account to use, e.g. "work" (list_integrations shows them); omit for the default.
    #[serde(default)]
    pub account: Option<String>,
}

impl Args {
    /// One execution, as the CLI and the portal run a single tool.
    pub fn one(tool: &str, args: Map<String, Value>) -> Args {
        Args {
            executions: vec![ExecutionArgs { tool: tool.to_string(), args: Some(args), ref_id: None, account: None }],
            compose: false,
            ret: None,
        }
    }
}

impl From<Args> for Batch {
    fn from(a: Args) -> Batch {
        let executions = a
            .executions
            .into_iter()
            .map(|e| Execution {
                tool: e.tool,
                args: e.args.map(Value::Object).unwrap_or(Value::Null),
                ref_id: e.ref_id,
                account: e.account,
            })
            .collect();
        Batch { executions, compose: a.compose, ret: a.ret }
    }
}

/// The batch's mechanics (compose, ref_id, return, account) are told once, in the schema's field
/// descriptions; the description says what the tool is for and points at them.
const DESCRIPTION: &str = "Execute one or more tools in a single call. Runs them concurrently (bounded) and returns a results array in the same order as executions. A single tool failing does not abort the others — its entry carries an error instead of a result. For a single tool, pass a one-element executions array. Get each tool's args from get_tool_schema first.\n\
compose chains steps and return trims the answer, to keep large payloads out of your context. Stored secrets go in args as \"{{vault:NAME}}\"; you never see their values.";

/// The meta-tool.
pub struct ExecuteTools;

impl MetaTool for ExecuteTools {
    const NAME: &'static str = "execute_tools";
    const TITLE: &'static str = "Execute tools";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const ANNOTATIONS: Annotations = Annotations::ANYTHING;
    // `return` is any template (string, object or array); the engine checks it before anything
    // runs. The schema names its common form only, because strict clients need one type.
    const SELF_CHECKED: &'static [&'static str] = &["return"];
    const LOOKS_UP_TOOLS: bool = true;
    const FINISH: Finish = Finish::ScrubbedAndCapped;
    type Args = Args;
    type Answer = Batched;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, hooks: &Hooks) -> Result<Batched, Failure> {
        run(app, args, hooks).await
    }
}

/// The engine's typed outcome: a failed batch is the [`Failure`], a batch whose executions
/// failed one by one is not.
pub async fn run(app: &Arc<App>, args: Args, hooks: &Hooks) -> Result<Batched, Failure> {
    let outcome = engine::execute_with(app, args.into(), hooks).await;
    if outcome.is_error() { Err(Failure::Batch(Box::new(outcome))) } else { Ok(outcome) }
}
