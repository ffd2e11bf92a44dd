//! The nine meta-tools: their descriptions, schemas and annotations as data, and their logic as
//! plain Rust over [`App`] (no MCP types here, so every meta-tool is testable without a transport).

mod connect;
mod curl_session;
mod execute_tools;
mod get_tool_schema;
mod list_integrations;
pub mod runstack;
mod search_tools;
mod wait_for_connection;
mod whoami;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::app::App;
use crate::engine::{Hooks, Outcome};
use crate::error::{ErrorCode, ToolFailure};

/// How a meta-tool presents itself in tools/list.
pub struct MetaTool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub schema: fn() -> Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

const CONNECT_DESCRIPTION: &str = "Begin connecting an integration. Returns a connectionId and a workbench URL for the user to open. The link is a page served by workbench on this computer (127.0.0.1); the user enters credentials there, never in the chat, and the link works for no one else. Call wait_for_connection afterward.";

const EXECUTE_DESCRIPTION: &str = "Execute one or more tools in a single call. Runs them concurrently (bounded) and returns a results array in the same order as executions. A single tool failing does not abort the others — its entry carries an error instead of a result. For a single tool, pass a one-element executions array.\n\
Each execution is {tool, args, ref_id?, account?}; get args' shape from get_tool_schema first. account picks one of the integration's connected accounts (list_integrations shows them); without it the default account is used.\n\
compose: true runs executions in order (at most 8, each with a ref_id) and lets later args read earlier results with \"{{step:<ref_id>.<path>}}\" (keys or array indexes, e.g. {{step:list.items.0.id}}); a ref that is the whole string keeps the value's type. A failing step ends the run. Use it to keep large intermediate payloads out of your context.\n\
return (with or without compose) is a template over results by ref_id — a string, object or array of refs — and is the only thing sent back, e.g. {\"id\": \"{{step:create.id}}\"}.\n\
Stored secrets can be passed as \"{{vault:NAME}}\" in args; you never see their values.";

const CURL_DESCRIPTION: &str = "HIGH RISK — do not call without explicit user approval. Mints a short-lived proxy token (15 min by default; set expiresInSeconds for 60s–1h, and ask for no longer than the task needs) granting ARBITRARY API calls (GET/POST/PUT/PATCH/DELETE), including destructive writes, against the listed integration(s) — the proxy injects the user's real credential transparently at /c/<integration>/<path>, so anything reachable via that credential is reachable through this token. Before invoking, tell the user exactly which integration(s) and what action you intend to perform, and wait for their explicit go-ahead; do not mint speculatively or as a default first step. Only integrations that have curl proxy enabled are accepted.";

fn no_params() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

fn connect_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "integration": { "type": "string", "description": "Integration name from list_integrations or a search result, e.g. \"github\"." },
            "account": { "type": "string", "description": "Name of the account to connect or reconnect, e.g. \"work\" (lowercase letters, digits, '-'); omit for the default one. A new name adds an account; the user finishes on the page." }
        },
        "required": ["integration"],
        "additionalProperties": false
    })
}

pub static META_TOOLS: &[MetaTool] = &[
    MetaTool {
        name: "search_tools",
        title: "Search tools",
        description: "Search available tools by what you want to do, e.g. \"create jira issue\" or \"send email\". Matches words in any order, tolerates typos and common synonyms, and returns the best matches first with a relevance score. Returns the top 10 by default; pass limit (max 50) for more.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "minLength": 1, "description": "What you want to do, in plain words." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "Most results to return (1-50)." }
                },
                "required": ["query"],
                "additionalProperties": false
            })
        },
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "get_tool_schema",
        title: "Get tool schema",
        description: "Get input schema for a specific tool",
        schema: || {
            json!({
                "type": "object",
                "properties": { "tool": { "type": "string", "minLength": 1, "description": "Exact tool name from search_tools, e.g. \"github_create_pr\"." } },
                "required": ["tool"],
                "additionalProperties": false
            })
        },
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "execute_tools",
        title: "Execute tools",
        description: EXECUTE_DESCRIPTION,
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "executions": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": crate::engine::MAX_BATCH,
                        "description": "Tools to run, in order.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "tool": { "type": "string", "minLength": 1, "description": "Exact tool name." },
                                "args": { "type": "object", "description": "Arguments matching the tool's schema (any keys)." },
                                "ref_id": { "type": "string", "description": "Name for this execution's result, used by {{step:...}} refs and return; required with compose." },
                                "account": { "type": "string", "description": "Which connected account of the tool's integration to use, e.g. \"work\" (from list_integrations); omit for the default account." }
                            },
                            "required": ["tool"],
                            "additionalProperties": false
                        }
                    },
                    "compose": { "type": "boolean", "default": false, "description": "Run in order so later args can use {{step:<ref_id>.<path>}}." },
                    "return": { "type": "object", "description": "Template over results by ref_id, e.g. {\"id\": \"{{step:create.id}}\"}; only this is sent back. A single ref string or an array of refs works too." }
                },
                "required": ["executions"],
                "additionalProperties": false
            })
        },
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
    MetaTool {
        name: "whoami",
        title: "Who am I",
        description: "Return the current authenticated workbench user (id + email). Like /me — identity only, not connected integrations.",
        schema: no_params,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "list_integrations",
        title: "List integrations",
        description: "List all available integrations and connection status",
        schema: no_params,
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "connect",
        title: "Connect an integration",
        description: CONNECT_DESCRIPTION,
        schema: connect_schema,
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    MetaTool {
        name: "wait_for_connection",
        title: "Wait for a connection",
        description: "Block until a connection started by connect() completes. Returns status CONNECTED, TIMEOUT, or EXPIRED.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "connectionId": { "type": "string", "minLength": 1, "description": "The connectionId returned by connect." },
                    "timeoutSec": { "type": "integer", "minimum": 1, "maximum": 600, "default": wait_for_connection::DEFAULT_TIMEOUT_SECS, "description": "Longest wait in seconds (1-600)." }
                },
                "required": ["connectionId"],
                "additionalProperties": false
            })
        },
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "get_auth_url",
        title: "Get auth URL (deprecated)",
        description: "Deprecated alias of connect(). Get a URL to connect an integration.",
        schema: connect_schema,
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    MetaTool {
        name: "curl_session",
        title: "Mint a curl proxy session",
        description: CURL_DESCRIPTION,
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "integrations": { "type": "array", "minItems": 1, "items": { "type": "string" }, "description": "Integrations the token may call, e.g. [\"github\"]; \"github:work\" binds it to that account (default: the default account)." },
                    "expiresInSeconds": { "type": "integer", "minimum": 60, "maximum": 3600, "default": 900, "description": "Token lifetime in seconds (60-3600)." }
                },
                "required": ["integrations"],
                "additionalProperties": false
            })
        },
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
];

pub fn find(name: &str) -> Option<&'static MetaTool> {
    META_TOOLS.iter().find(|t| t.name == name)
}

/// Runs a meta-tool; `None` when no meta-tool has that name.
pub async fn call(app: &Arc<App>, name: &str, args: Value) -> Option<Outcome> {
    call_with(app, name, args, &Hooks::default()).await
}

/// Validates `args` against a meta-tool's schema (defaults applied) or says what is wrong.
pub(crate) fn checked_args(tool: &MetaTool, args: Value) -> Result<Value, Outcome> {
    let mut args = args;
    // `return` is any template (string, object or array); the engine checks it before anything
    // runs. The schema names its common form only, because strict clients need one type.
    let template = match (tool.name, args.as_object_mut()) {
        ("execute_tools", Some(map)) => map.remove("return"),
        _ => None,
    };
    let mut args = match crate::validate::validate(&(tool.schema)(), &args) {
        Ok(a) => a,
        Err(problems) => {
            let f = ToolFailure::new(
                ErrorCode::InvalidArguments,
                format!("{} problem(s) with the arguments for {}", problems.len(), tool.name),
            )
            .with("problems", serde_json::to_value(problems).unwrap_or_default())
            .with("expected_parameters", crate::validate::expected_parameters(&(tool.schema)()));
            return Err(Outcome { body: f.to_value(), is_error: true });
        }
    };
    if let (Some(t), Some(map)) = (template, args.as_object_mut()) {
        map.insert("return".into(), t);
    }
    Ok(args)
}

/// [`call`] with progress reports and cancellation for `execute_tools`.
pub async fn call_with(app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Outcome> {
    let tool = find(name)?;
    let args = match checked_args(tool, args) {
        Ok(a) => a,
        Err(outcome) => return Some(outcome),
    };
    // Servers pasted into config.json and never listed get listed before a lookup needs them.
    if matches!(name, "search_tools" | "get_tool_schema" | "execute_tools") {
        app.upstream.list_unlisted(app).await;
    }
    Some(match name {
        "search_tools" => search_tools::run(app, args),
        "get_tool_schema" => get_tool_schema::run(app, args),
        "execute_tools" => execute_tools::run(app, args, hooks).await,
        "whoami" => whoami::run(app).await,
        "list_integrations" => list_integrations::run(app).await,
        "connect" | "get_auth_url" => connect::run(app, args).await,
        "wait_for_connection" => wait_for_connection::run(app, args).await,
        "curl_session" => curl_session::run(app, args, hooks).await,
        _ => return None,
    })
}

/// `{error: "..."}`, the plain-string error style of the meta-tools other than execute_tools
/// (README, "Error codes"), marked as a failed call.
pub(crate) fn plain_error(message: impl Into<String>) -> Outcome {
    Outcome { body: json!({ "error": message.into() }), is_error: true }
}

pub(crate) fn ok(body: Value) -> Outcome {
    Outcome { body, is_error: false }
}

pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}
