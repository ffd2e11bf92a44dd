//! `workbench tools search|schema|call`: the agent's meta-tools' typed functions and the engine,
//! driven from a shell; JSON in (text, `-` or `@FILE`), JSON out.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::app::App;
use crate::engine::{self, Batch, Execution};
use crate::error::{ErrorCode, ToolFailure};
use crate::meta::{self, Failure};

use super::{StatusLine, exit, print_json};

/// `tools search`: the agent's search_tools, as JSON.
pub async fn tools_search(app: &Arc<App>, query: &str, limit: u32) -> u8 {
    let args = meta::search_tools::Args { query: query.to_string(), limit: limit as usize };
    // As for the agent: servers pasted into config.json and never listed are listed first.
    app.upstream().list_unlisted(app).await;
    print_answer(meta::search_tools::run(app, args))
}

/// `tools schema`: the agent's get_tool_schema, as JSON.
pub async fn tools_schema(app: &Arc<App>, tool: &str) -> u8 {
    app.upstream().list_unlisted(app).await;
    print_answer(meta::get_tool_schema::run(app, meta::get_tool_schema::Args { tool: tool.to_string() }))
}

/// Prints a meta-tool's answer (or failure) as the agent would get it; the exit status says which.
fn print_answer<T: serde::Serialize>(result: Result<T, Failure>) -> u8 {
    let out = meta::answer(result);
    print_json(&out.body);
    if out.is_error { exit::FAILED } else { exit::OK }
}

/// Why a command-line JSON input (arguments or a batch) was not usable; nothing was run.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {what} from stdin: {source}")]
    Stdin { what: String, source: std::io::Error },
    #[error("cannot read {what} from {path}: {source}")]
    File { what: String, path: String, source: std::io::Error },
    #[error("{what}: not valid JSON ({source})")]
    Json { what: String, source: serde_json::Error },
    #[error("unknown key '{0}' (a batch has executions, compose and return)")]
    UnknownBatchKey(String),
    #[error("compose must be true or false, got {0}")]
    Compose(Value),
    #[error("a batch object needs \"executions\"")]
    NoExecutions,
    #[error("a batch is a list of executions or an object with \"executions\"")]
    NotABatch,
    #[error("executions: {0}")]
    Executions(serde_json::Error),
}

/// Reads a command-line JSON argument: the text itself, `-` for stdin, or `@FILE`.
pub fn read_json_arg(text: &str, what: &str) -> Result<Value, InputError> {
    let source = if text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|source| InputError::Stdin { what: what.to_string(), source })?;
        s
    } else if let Some(path) = text.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|source| InputError::File {
            what: what.to_string(),
            path: path.to_string(),
            source,
        })?
    } else {
        text.to_string()
    };
    serde_json::from_str(&source).map_err(|source| InputError::Json { what: what.to_string(), source })
}

/// Turns a batch file's JSON into a batch: either a list of executions or execute_tools' own
/// arguments (`{executions, compose?, return?}`).
pub fn parse_batch(v: Value) -> Result<Batch, InputError> {
    let (executions, compose, ret) = match v {
        Value::Array(_) => (v, false, None),
        Value::Object(mut map) => {
            if let Some(k) = map.keys().find(|k| !matches!(k.as_str(), "executions" | "compose" | "return")) {
                return Err(InputError::UnknownBatchKey(k.clone()));
            }
            let compose = match map.remove("compose") {
                None => false,
                Some(Value::Bool(b)) => b,
                Some(other) => return Err(InputError::Compose(other)),
            };
            let executions = map.remove("executions").ok_or(InputError::NoExecutions)?;
            (executions, compose, map.remove("return"))
        }
        _ => return Err(InputError::NotABatch),
    };
    let executions: Vec<Execution> = serde_json::from_value(executions).map_err(InputError::Executions)?;
    Ok(Batch { executions, compose, ret })
}

/// Hooks for `tools call`: a write the safety policy holds is asked about on the terminal (y/N);
/// without a terminal to ask on, it is refused (CONFIRMATION_REQUIRED), never silently run.
fn terminal_hooks() -> engine::Hooks {
    use std::io::IsTerminal;
    engine::Hooks {
        approve: Some(Arc::new(|request: engine::policy::ApprovalRequest| {
            Box::pin(async move {
                if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
                    return engine::policy::Approval::Unavailable(
                        "there is no terminal to ask on (stdin is not a terminal)".into(),
                    );
                }
                let answer = tokio::task::spawn_blocking(move || {
                    eprint!("{}\nAllow? [y/N] ", request.summary);
                    let mut line = String::new();
                    let _ = std::io::stdin().read_line(&mut line);
                    line
                })
                .await
                .unwrap_or_default();
                if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                    engine::policy::Approval::Approved
                } else {
                    engine::policy::Approval::Declined("the user answered no on the terminal".into())
                }
            })
        })),
        ..Default::default()
    }
}

/// Runs a batch through the engine, drawing progress on a terminal (executions finished, counted
/// from the audit rows the engine writes as each one ends) while it runs.
async fn run_batch(app: &Arc<App>, batch: Batch) -> engine::Batched {
    let total = batch.executions.iter().filter(|e| app.registry().get(&e.tool).is_some()).count();
    let run = {
        let app = app.clone();
        async move { engine::execute_with(&app, batch, &terminal_hooks()).await }
    };
    with_status_line(app, total, run).await.unwrap_or_else(|e| {
        engine::Batched::Refused(ToolFailure::new(ErrorCode::InternalError, format!("the batch task failed: {e}")))
    })
}

/// Runs `run` (executions of the engine) with a progress line on a TTY, counted from the audit
/// rows the executions leave.
async fn with_status_line<T: Send + 'static>(
    app: &Arc<App>,
    total: usize,
    run: impl Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let mut progress = StatusLine::new();
    if !progress.enabled || total == 0 {
        return Ok(run.await);
    }
    let last_id = |app: &Arc<App>| {
        let app = app.clone();
        async move {
            app.storage
                .call(|c| c.query_row("SELECT COALESCE(MAX(id), 0) FROM audit", [], |r| r.get::<_, i64>(0)))
                .await
        }
    };
    let start = last_id(app).await.unwrap_or(0);
    let task = tokio::spawn(run);
    tokio::pin!(task);
    loop {
        tokio::select! {
            done = &mut task => {
                progress.finish();
                return done;
            }
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                let done = last_id(app).await.map(|id| (id - start).max(0) as usize).unwrap_or(0).min(total);
                progress.tick(&format!("{done}/{total} executions finished"));
            }
        }
    }
}

/// `tools call <tool> <json>`: one execution; prints its result (or `{"error": ...}`) as JSON.
pub async fn tools_call(app: &Arc<App>, tool: &str, args: Value) -> u8 {
    if !args.is_object() {
        eprintln!("workbench: the arguments must be a JSON object, e.g. '{{\"query\": \"rust\"}}'");
        return exit::USAGE;
    }
    app.upstream().list_unlisted(app).await;
    let total = usize::from(app.registry().get(tool).is_some());
    let exec = Execution { tool: tool.to_string(), args, ref_id: None, account: None };
    let run = {
        let app = app.clone();
        async move { engine::execute_one(&app, exec, &terminal_hooks()).await }
    };
    let result = with_status_line(app, total, run)
        .await
        .unwrap_or_else(|e| Err(ToolFailure::new(ErrorCode::InternalError, format!("the batch task failed: {e}"))));
    match result {
        Ok(result) => {
            print_json(&result);
            exit::OK
        }
        Err(failure) => {
            let line = format!("workbench: {}: {}", failure.code.as_str(), failure.message);
            print_json(&meta::wire::failure(&Failure::Tool(failure)));
            eprintln!("{line}");
            exit::FAILED
        }
    }
}

/// `tools call --batch FILE`: a whole execute_tools batch; prints the response as the agent gets
/// it. Fails when the batch or any execution failed.
pub async fn tools_batch(app: &Arc<App>, batch: Batch) -> u8 {
    let out = run_batch(app, batch).await;
    print_json(&meta::wire::batch(app, &out).body);
    if out.any_failed() { exit::FAILED } else { exit::OK }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn batches_come_as_lists_or_execute_tools_arguments() {
        let b = parse_batch(json!([{"tool": "a", "args": {}}, {"tool": "b"}])).unwrap();
        assert_eq!(b.executions.len(), 2);
        assert!(!b.compose);
        let b =
            parse_batch(json!({"executions": [{"tool": "a", "ref_id": "x"}], "compose": true, "return": "{{step:x}}"}))
                .unwrap();
        assert!(b.compose);
        assert_eq!(b.ret, Some(json!("{{step:x}}")));
        let err = |v: Value| parse_batch(v).unwrap_err().to_string();
        assert_eq!(
            err(json!({"executions": [], "extra": 1})),
            "unknown key 'extra' (a batch has executions, compose and return)"
        );
        assert_eq!(err(json!({"compose": true})), "a batch object needs \"executions\"");
        assert_eq!(err(json!({"executions": [], "compose": 1})), "compose must be true or false, got 1");
        assert!(err(json!([{"tool": "a", "bogus": 1}])).contains("bogus"));
        assert!(parse_batch(json!("x")).is_err());
    }

    #[test]
    fn json_arguments_name_what_is_wrong() {
        assert_eq!(read_json_arg("{\"a\": 1}", "the arguments").unwrap(), json!({"a": 1}));
        let e = read_json_arg("{a: 1}", "the arguments").unwrap_err().to_string();
        assert!(e.starts_with("the arguments: not valid JSON (key must be a string"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.json");
        std::fs::write(&f, "[1]").unwrap();
        assert_eq!(read_json_arg(&format!("@{}", f.display()), "x").unwrap(), json!([1]));
        let e = read_json_arg("@/nonexistent/file", "x").unwrap_err().to_string();
        assert!(e.starts_with("cannot read x from /nonexistent/file: "), "{e}");
    }
}
