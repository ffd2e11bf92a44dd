//! audit_search_log: read back the local audit log of executed tools (arguments scrubbed).

use std::sync::Arc;

use plugins::api::ToolError;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::registry::BuiltinSpec;
use crate::storage::AuditQuery;

pub const SEARCH_LOG: BuiltinSpec = builtin! {
    name: "audit_search_log",
    namespace: "audit",
    effect: Read,
    results: Private,
    args: SearchLog,
    run: search_log,
    keywords: ["audit log", "history", "what did you do", "activity", "recent actions", "tool calls", "changes made", "executed", "which tools ran", "what ran", "tool history", "failed tools"],
    description: "Search the local audit log of tools workbench has run: when, which tool and integration, the arguments (secrets redacted), whether it changed something, status, duration and error. Newest first.",
};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Error,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchLog {
    /// Only entries at or after this time: RFC 3339, a date, or an expression like "2 hours ago" or "yesterday".
    since: Option<String>,
    /// Only entries at or before this time (same forms as since).
    until: Option<String>,
    /// Only this integration, e.g. "github".
    integration: Option<String>,
    /// Only this tool, e.g. "github_create_issue".
    tool: Option<String>,
    /// Only tools that change something.
    #[serde(default)]
    mutating_only: bool,
    /// Only successful (ok) or failed (error) executions.
    status: Option<Status>,
    /// Text to find in the tool name, arguments or error.
    text: Option<String>,
    /// How many entries (1-500).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 500))]
    limit: usize,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

fn to_utc(path: &str, expr: &str) -> Result<String, ToolError> {
    let now = chrono::Utc::now().with_timezone(&super::time::Tz::utc());
    let t = super::time::resolve(expr, now)
        .map_err(|why| ToolError::invalid(format!("{path}: could not understand '{expr}': {why}")))?;
    Ok(t.with_timezone(&chrono::Utc).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

async fn search_log(app: Arc<App>, args: SearchLog) -> Result<Value, ToolError> {
    let before_id = match &args.cursor {
        Some(c) => Some(
            c.parse::<i64>().map_err(|_| ToolError::invalid(format!("cursor '{c}' is not one this tool issued")))?,
        ),
        None => None,
    };
    let query = AuditQuery {
        since: args.since.as_deref().map(|s| to_utc("since", s)).transpose()?,
        until: args.until.as_deref().map(|s| to_utc("until", s)).transpose()?,
        integration: args.integration,
        tool: args.tool,
        mutating_only: args.mutating_only,
        status: args.status.map(|s| format!("{s:?}").to_lowercase()),
        text: args.text,
        before_id,
        limit: args.limit.clamp(1, 500) + 1,
    };
    let mut rows = app.storage.search_audit(query).await.map_err(|e| ToolError::Internal(e.to_string()))?;
    let more = rows.len() > args.limit;
    rows.truncate(args.limit);
    let next = if more { rows.last().and_then(|r| r["id"].as_i64()).map(|id| id.to_string()) } else { None };
    let entries: Vec<Value> = rows
        .into_iter()
        .map(|mut r| {
            if let Value::Object(o) = &mut r {
                o.retain(|_, v| !v.is_null());
            }
            r
        })
        .collect();
    Ok(json!({ "entries": entries, "next_cursor": next }))
}
