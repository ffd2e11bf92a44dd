//! The nine meta-tools: their descriptions, schemas and annotations as data, and their logic as
//! plain Rust over [`App`] (no MCP types here, so every meta-tool is testable without a transport).
//!
//! Each meta-tool is a module with an `Args` type (serde + schemars: its input schema is generated
//! from it, see [`schema`]) and `run(&App, Args) -> Result<Answer, Failure>`: a typed answer, and
//! one failure type for all of them. The CLI and the portal call those functions directly;
//! [`call`] / [`call_with`] are only the MCP dispatch: validate the JSON arguments against the
//! schema (every problem at once, in the agent-facing error object), deserialise `Args`, run,
//! serialise.

pub mod connect;
pub mod curl_session;
pub mod execute_tools;
pub mod get_tool_schema;
pub mod list_integrations;
pub mod runstack;
pub mod schema;
pub mod search_answer;
pub mod search_tools;
pub mod wait_for_connection;
pub mod whoami;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::engine::{Hooks, Outcome};
use crate::error::{ErrorCode, ToolFailure};

/// How a meta-tool presents itself in tools/list.
pub struct MetaTool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The input schema, generated from the tool's `Args` ([`schema::args_schema`]).
    pub schema: fn() -> Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

const CONNECT_DESCRIPTION: &str = "Begin connecting an integration. Returns a connectionId and a URL for the user to open: a page workbench serves on this computer (127.0.0.1), where the user enters credentials (never in the chat); the link works for no one else. Call wait_for_connection afterward.";

/// The batch's mechanics (compose, ref_id, return, account) are told once, in the schema's field
/// descriptions; the description says what the tool is for and points at them.
const EXECUTE_DESCRIPTION: &str = "Execute one or more tools in a single call. Runs them concurrently (bounded) and returns a results array in the same order as executions. A single tool failing does not abort the others — its entry carries an error instead of a result. For a single tool, pass a one-element executions array. Get each tool's args from get_tool_schema first.\n\
compose chains steps and return trims the answer, to keep large payloads out of your context. Stored secrets go in args as \"{{vault:NAME}}\"; you never see their values.";

const CURL_DESCRIPTION: &str = "HIGH RISK — do not call without explicit user approval. Mints a short-lived proxy token (15 min by default; set expiresInSeconds for 60s–1h, and ask for no longer than the task needs) granting ARBITRARY API calls (GET/POST/PUT/PATCH/DELETE), including destructive writes, against the listed integration(s) — the proxy injects the user's real credential transparently at /c/<integration>/<path>, so anything reachable via that credential is reachable through this token. Before invoking, tell the user exactly which integration(s) and what action you intend to perform, and wait for their explicit go-ahead; do not mint speculatively or as a default first step. Only integrations that have curl proxy enabled are accepted.";

/// A meta-tool's input schema from its `Args` type, generated once per process.
macro_rules! schema_of {
    ($args:ty) => {{
        fn schema() -> serde_json::Value {
            static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
            SCHEMA.get_or_init($crate::meta::schema::args_schema::<$args>).clone()
        }
        schema
    }};
}
pub(crate) use schema_of;

/// The arguments of a meta-tool that takes none (whoami, list_integrations): any field is refused.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Why a meta-tool call failed: the one failure type of every meta-tool, in the error styles the
/// README documents ("Error codes").
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The agent-facing error object `{error: {code, message, ...}}` (src/error.rs): arguments that
    /// do not fit the tool's schema, and failures of execute_tools itself.
    Tool(ToolFailure),
    /// `{error: "<message>", ...details}`: the plain-string style of the meta-tools other than
    /// execute_tools, with what helps the agent next (`did_you_mean`, `unlock_url`, ...) in order.
    Plain { message: String, details: Map<String, Value> },
    /// A batch refused as a whole, as the engine shaped it (`{error: {...}, completed, not_run}`).
    Batch(Value),
}

impl Failure {
    /// A plain-string failure (see [`Failure::Plain`]).
    pub fn plain(message: impl Into<String>) -> Failure {
        Failure::Plain { message: message.into(), details: Map::new() }
    }

    /// The failure with one more detail field (after the ones it has).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Failure {
        match &mut self {
            Failure::Tool(f) => {
                f.details.insert(key.to_string(), value.into());
            }
            Failure::Plain { details, .. } => {
                details.insert(key.to_string(), value.into());
            }
            Failure::Batch(body) => {
                if let Value::Object(map) = body {
                    map.insert(key.to_string(), value.into());
                }
            }
        }
        self
    }

    /// What went wrong, in words (for a terminal or a page).
    pub fn message(&self) -> String {
        match self {
            Failure::Tool(f) => f.message.clone(),
            Failure::Plain { message, .. } => message.clone(),
            Failure::Batch(body) => {
                body["error"]["message"].as_str().map(str::to_string).unwrap_or_else(|| body.to_string())
            }
        }
    }

    /// A detail field, if the failure has it.
    pub fn detail(&self, key: &str) -> Option<&Value> {
        match self {
            Failure::Tool(f) => f.details.get(key),
            Failure::Plain { details, .. } => details.get(key),
            Failure::Batch(body) => body.get(key),
        }
    }

    /// The body the agent gets.
    pub fn to_value(&self) -> Value {
        match self {
            Failure::Tool(f) => f.to_value(),
            Failure::Plain { message, details } => {
                let mut map = Map::new();
                map.insert("error".into(), json!(message));
                for (k, v) in details {
                    map.insert(k.clone(), v.clone());
                }
                Value::Object(map)
            }
            Failure::Batch(body) => body.clone(),
        }
    }
}

impl From<ToolFailure> for Failure {
    fn from(f: ToolFailure) -> Self {
        Failure::Tool(f)
    }
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Self {
        Outcome { body: f.to_value(), is_error: true }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A typed answer as the agent gets it.
pub fn answer<T: Serialize>(result: Result<T, Failure>) -> Outcome {
    match result.and_then(|t| {
        serde_json::to_value(t).map_err(|e| {
            Failure::Tool(ToolFailure::new(ErrorCode::InternalError, format!("the answer could not be encoded: {e}")))
        })
    }) {
        Ok(body) => Outcome { body, is_error: false },
        Err(f) => f.into(),
    }
}

pub fn find(name: &str) -> Option<&'static MetaTool> {
    META_TOOLS.iter().find(|t| t.name == name)
}

/// Runs a meta-tool; `None` when no meta-tool has that name.
pub async fn call(app: &Arc<App>, name: &str, args: Value) -> Option<Outcome> {
    call_with(app, name, args, &Hooks::default()).await
}

/// The MCP dispatch of one profile's tool: parse the arguments into the tool's `Args` (see
/// [`parse`]), run it, and turn its answer or failure into the agent's body.
macro_rules! dispatch {
    ($tool:expr, $args:expr, |$a:ident| $run:expr) => {
        match $crate::meta::parse($tool, $args) {
            Ok($a) => $crate::meta::answer($run),
            Err(f) => f.into(),
        }
    };
    ($tool:expr, $args:expr, |_: $ty:ty| $run:expr) => {
        match $crate::meta::parse::<$ty>($tool, $args) {
            Ok(_) => $crate::meta::answer($run),
            Err(f) => f.into(),
        }
    };
}
pub(crate) use dispatch;

/// [`call`] with progress reports and cancellation for `execute_tools`.
pub async fn call_with(app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Outcome> {
    let tool = find(name)?;
    // Servers pasted into config.json and never listed get listed before a lookup needs them.
    if matches!(name, "search_tools" | "get_tool_schema" | "execute_tools") {
        app.upstream().list_unlisted(app).await;
    }
    Some(match name {
        "search_tools" => dispatch!(tool, args, |a| search_tools::run(app, a)),
        "get_tool_schema" => dispatch!(tool, args, |a| get_tool_schema::run(app, a)),
        "execute_tools" => dispatch!(tool, args, |a| execute_tools::run(app, a, hooks).await),
        "whoami" => dispatch!(tool, args, |_: NoArgs| whoami::run(app).await),
        "list_integrations" => dispatch!(tool, args, |_: NoArgs| list_integrations::run(app).await),
        "connect" | "get_auth_url" => dispatch!(tool, args, |a| connect::run(app, a).await),
        "wait_for_connection" => dispatch!(tool, args, |a| wait_for_connection::run(app, a).await),
        "curl_session" => dispatch!(tool, args, |a| curl_session::run(app, a, hooks).await),
        _ => return None,
    })
}

/// A meta-tool's JSON arguments as its `Args`: validated against its schema first (defaults
/// applied; every problem at once, each with its JSON Pointer, plus the expected parameters), then
/// deserialised. A missing or mistyped field is INVALID_ARGUMENTS naming it, never a default.
pub fn parse<A: DeserializeOwned>(tool: &MetaTool, args: Value) -> Result<A, Failure> {
    let mut args = checked_args(tool, args)?;
    whole_numbers(&(tool.schema)(), &mut args);
    serde_json::from_value(args).map_err(|e| {
        let problem = plugins::api::ArgProblem { path: String::new(), problem: e.to_string() };
        invalid_arguments(tool, vec![problem])
    })
}

/// `5.0` where the schema says integer becomes `5` (the validator accepts it as an integer; serde
/// would refuse it for an integer field).
fn whole_numbers(schema: &Value, value: &mut Value) {
    match value {
        Value::Number(n) if schema["type"] == "integer" && n.as_i64().is_none() && n.as_u64().is_none() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                *value = json!(f as i64);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if let Some(s) = schema["properties"].get(k) {
                    whole_numbers(s, v);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                whole_numbers(&schema["items"], v);
            }
        }
        _ => {}
    }
}

fn invalid_arguments(tool: &MetaTool, problems: Vec<plugins::api::ArgProblem>) -> Failure {
    Failure::Tool(
        ToolFailure::new(
            ErrorCode::InvalidArguments,
            format!("{} problem(s) with the arguments for {}", problems.len(), tool.name),
        )
        .with("problems", serde_json::to_value(problems).unwrap_or_default())
        .with("expected_parameters", crate::validate::expected_parameters(&(tool.schema)())),
    )
}

/// Validates `args` against a meta-tool's schema (defaults applied) or says what is wrong.
fn checked_args(tool: &MetaTool, args: Value) -> Result<Value, Failure> {
    let mut args = args;
    // `return` is any template (string, object or array); the engine checks it before anything
    // runs. The schema names its common form only, because strict clients need one type.
    let template = match (tool.name, args.as_object_mut()) {
        ("execute_tools", Some(map)) => map.remove("return"),
        _ => None,
    };
    let mut args = crate::validate::validate(&(tool.schema)(), &args).map_err(|p| invalid_arguments(tool, p))?;
    if let (Some(t), Some(map)) = (template, args.as_object_mut()) {
        map.insert("return".into(), t);
    }
    Ok(args)
}

pub static META_TOOLS: &[MetaTool] = &[
    MetaTool {
        name: "search_tools",
        title: "Search tools",
        description: "Search available tools by what you want to do, e.g. \"create jira issue\" or \"send email\". Matches words in any order, tolerates typos and common synonyms, and returns the best matches first with a relevance score.",
        schema: schema_of!(search_tools::Args),
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "get_tool_schema",
        title: "Get tool schema",
        description: "Get input schema for a specific tool",
        schema: schema_of!(get_tool_schema::Args),
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "execute_tools",
        title: "Execute tools",
        description: EXECUTE_DESCRIPTION,
        schema: schema_of!(execute_tools::Args),
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
    MetaTool {
        name: "whoami",
        title: "Who am I",
        description: "Return the current authenticated workbench user (id + email). Like /me — identity only, not connected integrations.",
        schema: schema_of!(NoArgs),
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "list_integrations",
        title: "List integrations",
        description: "List all available integrations and connection status",
        schema: schema_of!(NoArgs),
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "connect",
        title: "Connect an integration",
        description: CONNECT_DESCRIPTION,
        schema: schema_of!(connect::Args),
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    MetaTool {
        name: "wait_for_connection",
        title: "Wait for a connection",
        description: "Block until a connection started by connect() completes. Returns status CONNECTED, TIMEOUT, or EXPIRED.",
        schema: schema_of!(wait_for_connection::Args),
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "get_auth_url",
        title: "Get auth URL (deprecated)",
        description: "Deprecated alias of connect() (same arguments, same answer). Get a URL to connect an integration.",
        schema: schema_of!(connect::AliasArgs),
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    MetaTool {
        name: "curl_session",
        title: "Mint a curl proxy session",
        description: CURL_DESCRIPTION,
        schema: schema_of!(curl_session::Args),
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    },
];
