//! One upstream tool call: progress passed on (scrubbed, capped), cancellation on drop, the result
//! shaped as a tool result, and the agent-facing error of a failed call.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use plugins::api::ToolError;
use serde_json::{Value, json};

pub use config::ServerConfig;

use crate::app::App;
use crate::error::{ErrorCode, ToolFailure};
use crate::mcp_client::{self as client, CallError};

use super::*;

/// Runs one upstream tool call (the engine's task for `Runner::Upstream`).
/// The server's `notifications/progress` for the call reach `progress` (scrubbed, capped). Dropping
/// the future (timeout, cancellation) sends `notifications/cancelled` upstream.
pub async fn call(
    app: Arc<App>,
    tool: Arc<UpstreamTool>,
    args: Value,
    progress: Option<OnRunning>,
) -> Result<Value, ToolError> {
    let conn = app.upstream().connection(&app, &tool.server).await.map_err(|e| ToolError::Network(e.to_string()))?;
    let arguments = match args {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let on_progress = progress.map(|hook| forward_progress(&app, hook));
    match conn.client.call_tool(&tool.tool, arguments, on_progress).await {
        Ok(result) => {
            app.upstream().succeeded(&tool.server);
            shape(&result)
        }
        Err(CallError::AuthRequired { challenge }) => {
            // The token expired or was revoked mid-session: renew it for the next call, or ask
            // for consent again.
            app.upstream().oauth.challenged(&tool.server, &challenge);
            app.upstream().crashed(&app, &tool.server, &conn, "the server asked for authorization again".into()).await;
            let url = match app.upstream().configs().get(&tool.server) {
                Some(Ok(ServerConfig::Http { url, .. })) => url.clone(),
                _ => String::new(),
            };
            match oauth::refresh(&app, &tool.server, &url).await {
                Ok(_) => Err(ToolError::Network(format!(
                    "upstream server '{}' asked for authorization again; workbench renewed it, retry the call",
                    tool.server
                ))),
                Err(_) => Err(ToolError::Network(format!(
                    "upstream server '{}' {NEEDS_CONSENT} '{}' and have the user finish in the browser, then retry",
                    tool.server,
                    oauth::store_key(&tool.server)
                ))),
            }
        }
        Err(e) => {
            // Give the reader a moment to see the exit before deciding it crashed.
            tokio::time::sleep(Duration::from_millis(50)).await;
            if let CallError::TooLarge(why) = &e {
                app.upstream().crashed(&app, &tool.server, &conn, why.clone()).await;
                return Err(ToolError::Network(format!(
                    "upstream server '{}' failed the call: {why}; workbench starts it again on the next call",
                    tool.server
                )));
            }
            if conn.http && (conn.closed() || !matches!(e, CallError::Server(_))) {
                let what = format!("the connection failed ({e})");
                app.upstream().crashed(&app, &tool.server, &conn, what.clone()).await;
                Err(ToolError::Network(format!(
                    "upstream server '{}' is unreachable: {what}; workbench reconnects on the next call",
                    tool.server
                )))
            } else if conn.closed() {
                let tail = conn.stderr_tail();
                let what = format!(
                    "it exited during the call{}",
                    if tail.is_empty() { String::new() } else { format!(" (stderr: {tail})") }
                );
                app.upstream().crashed(&app, &tool.server, &conn, what.clone()).await;
                Err(ToolError::Network(format!(
                    "upstream server '{}' stopped: {what}; workbench starts it again on the next call",
                    tool.server
                )))
            } else {
                Err(ToolError::Network(format!("upstream server '{}' failed the call: {e}", tool.server)))
            }
        }
    }
}

/// Most progress notifications of one call passed on (a chatty server cannot flood the client).
const MAX_PROGRESS: usize = 100;
/// Most characters of an upstream progress message passed on.
const MAX_PROGRESS_MESSAGE: usize = 200;

/// How far a running upstream call is, as its server reported it (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// How far the execution is (0..=1), when the tool said both its progress and total.
    pub fraction: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's [`Running`] reports go (the engine turns them into its progress reports).
pub type OnRunning = Arc<dyn Fn(Running) + Send + Sync>;

/// An upstream progress callback that hands each notification on as a [`Running`]: its message
/// scrubbed of every secret this process knows, shortened, and at most [`MAX_PROGRESS`] per call.
fn forward_progress(app: &Arc<App>, hook: OnRunning) -> client::OnProgress {
    let app = Arc::downgrade(app);
    let sent = std::sync::atomic::AtomicUsize::new(0);
    Arc::new(move |update: client::ProgressUpdate| {
        let Some(app) = app.upgrade() else { return };
        if sent.fetch_add(1, Ordering::SeqCst) >= MAX_PROGRESS {
            return;
        }
        let fraction = update
            .total
            .filter(|t| *t > 0.0 && t.is_finite() && update.progress.is_finite())
            .map(|t| (update.progress / t).clamp(0.0, 1.0));
        let message = update
            .message
            .map(|m| plugins::api::truncate_chars(&app.exposed.text(m.trim()), MAX_PROGRESS_MESSAGE).0)
            .filter(|m| !m.is_empty());
        hook(Running { fraction, message });
    })
}

/// A `CallToolResult` (as JSON) as a tool result: `structuredContent` when given, else the text
/// (parsed when it is JSON), else the content blocks. `isError` becomes an upstream error.
fn shape(v: &Value) -> Result<Value, ToolError> {
    let content = v.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let texts: Vec<&str> = content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    if v.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = if texts.is_empty() { "the tool reported an error".to_string() } else { texts.join("\n") };
        return Err(ToolError::Upstream { status: 0, message, retry_after: None });
    }
    if let Some(s) = v.get("structuredContent").filter(|s| !s.is_null()) {
        return Ok(s.clone());
    }
    if texts.len() == content.len() {
        if let [one] = texts.as_slice()
            && let Ok(parsed) = serde_json::from_str::<Value>(one)
            && (parsed.is_object() || parsed.is_array())
        {
            return Ok(parsed);
        }
        return Ok(json!({ "text": texts.join("\n") }));
    }
    Ok(json!({ "content": content }))
}

/// The agent-facing error of a failed upstream call.
pub fn failure(e: ToolError, name: &str, tool: &UpstreamTool) -> Result<ToolFailure, ToolError> {
    match e {
        ToolError::Upstream { message, .. } => Ok(ToolFailure::new(
            ErrorCode::UpstreamError,
            format!("{name} (tool '{}' of upstream server '{}') reported an error: {message}", tool.tool, tool.server),
        )
        .with("server", tool.server.clone())),
        ToolError::Network(message) if message.contains(NEEDS_CONSENT) => {
            let integration = oauth::store_key(&tool.server);
            Ok(ToolFailure::new(ErrorCode::NotConnected, message)
                .with("server", tool.server.clone())
                .with("integration", integration.clone())
                .with("next_step", json!({ "tool": "connect", "arguments": { "integration": integration } })))
        }
        ToolError::Network(message) => Ok(ToolFailure::new(ErrorCode::NetworkError, message)
            .with("server", tool.server.clone())
            .with("hint", "the user can check it with `workbench servers list`")),
        other => Err(other),
    }
}
