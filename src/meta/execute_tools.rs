//! execute_tools: the argument shape; everything else is the engine's.

use std::sync::Arc;

use serde_json::Value;

use crate::app::App;
use crate::engine::{self, Batch, Execution, Hooks, Outcome};
use crate::error::{ErrorCode, ToolFailure};

pub async fn run(app: &Arc<App>, args: Value, hooks: &Hooks) -> Outcome {
    let executions: Vec<Execution> = match serde_json::from_value(args.get("executions").cloned().unwrap_or_default()) {
        Ok(e) => e,
        Err(e) => {
            return ToolFailure::new(ErrorCode::InvalidArguments, format!("executions: {e}")).into();
        }
    };
    let batch = Batch {
        executions,
        compose: args.get("compose").and_then(Value::as_bool).unwrap_or(false),
        ret: args.get("return").cloned(),
    };
    engine::execute_with(app, batch, hooks).await
}
