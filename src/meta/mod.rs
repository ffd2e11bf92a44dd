//! The nine meta-tools, each one item of its own module: name, title, description, annotations,
//! argument type and handler together, as an implementation of [`MetaTool`] (no MCP types here, so
//! every meta-tool is testable without a transport).
//!
//! Each meta-tool's `Args` type (serde + schemars) gives its input schema (see [`schema`]); its
//! `run(&App, Args, &Hooks) -> Result<Answer, Failure>` a typed answer, and one failure type for
//! all of them. The CLI and the portal call those functions directly; [`call`] / [`call_with`]
//! are only the MCP dispatch: validate the JSON arguments against the schema (every problem at
//! once, in the agent-facing error object), deserialise `Args`, run, and serialise through
//! [`wire`], the one place where answers become JSON.

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
pub mod wire;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::app::App;
use crate::engine::{Batched, Hooks};
use crate::error::{ErrorCode, ToolFailure};
pub use wire::Answer;

/// A meta-tool: everything about it in one item of its own module. The MCP dispatch reaches it
/// through [`Tool::of`]; the CLI and the portal call its module's typed functions.
pub trait MetaTool: 'static {
    const NAME: &'static str;
    const TITLE: &'static str;
    const DESCRIPTION: &'static str;
    const ANNOTATIONS: Annotations;
    /// Fields of the arguments that `run` checks itself rather than the schema (the schema names
    /// their common form only, because strict clients need one type).
    const SELF_CHECKED: &'static [&'static str] = &[];
    /// Servers pasted into config.json and never listed get listed before the tool runs (the
    /// tools that look tools up).
    const LOOKS_UP_TOOLS: bool = false;
    /// What the whole answer passes before it goes back, beyond the MCP layer's own scrub.
    const FINISH: Finish = Finish::AsIs;
    /// Its answer may carry a connect link the client is asked to open.
    const OFFERS_LINK: bool = false;
    type Args: DeserializeOwned + Send;
    type Answer: Serialize + Send;
    /// The input schema (committed text described by an `Args`-shaped type, read once per
    /// process: [`schema_of`]).
    fn schema() -> Value;
    fn run(
        app: &Arc<App>,
        args: Self::Args,
        hooks: &Hooks,
    ) -> impl Future<Output = Result<Self::Answer, Failure>> + Send;
}

/// A meta-tool's hints for clients (tools/list annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// Reads local state only, and asking twice answers the same.
    pub const READ: Annotations =
        Annotations { read_only: true, destructive: false, idempotent: true, open_world: false };
    /// Changes local state only (a pending connection).
    pub const LOCAL: Annotations =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: false };
    /// Runs anything against the outside world.
    pub const ANYTHING: Annotations =
        Annotations { read_only: false, destructive: true, idempotent: false, open_world: true };
}

/// What the whole answer of a meta-tool passes in [`wire`] before it goes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    AsIs,
    /// The response size cap.
    Capped,
    /// Every secret known now, then the size cap (execute_tools: executions run side by side, so
    /// one may return a value another resolved after it started).
    ScrubbedAndCapped,
}

/// The future of one erased meta-tool call.
pub type Call<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

/// A meta-tool as a profile lists it and the MCP dispatch calls it: [`Tool::of`] a [`MetaTool`].
pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The input schema: committed text generated from the tool's `Args` ([`schema`]).
    pub schema: fn() -> Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
    /// See [`MetaTool::OFFERS_LINK`].
    pub offers_link: bool,
    self_checked: &'static [&'static str],
    call: for<'a> fn(&'a Arc<App>, Value, &'a Hooks) -> Call<'a>,
}

impl Tool {
    pub const fn of<T: MetaTool>() -> Tool {
        Tool {
            name: T::NAME,
            title: T::TITLE,
            description: T::DESCRIPTION,
            schema: T::schema,
            read_only: T::ANNOTATIONS.read_only,
            destructive: T::ANNOTATIONS.destructive,
            idempotent: T::ANNOTATIONS.idempotent,
            open_world: T::ANNOTATIONS.open_world,
            offers_link: T::OFFERS_LINK,
            self_checked: T::SELF_CHECKED,
            call: call_erased::<T>,
        }
    }

    /// The MCP dispatch of this tool: parse the arguments into its `Args` (see [`parse`]), run
    /// it, and serialise its answer or failure ([`wire`]).
    pub fn call<'a>(&'static self, app: &'a Arc<App>, args: Value, hooks: &'a Hooks) -> Call<'a> {
        (self.call)(app, args, hooks)
    }
}

fn call_erased<'a, T: MetaTool>(app: &'a Arc<App>, args: Value, hooks: &'a Hooks) -> Call<'a> {
    Box::pin(async move {
        if T::LOOKS_UP_TOOLS {
            app.upstream().list_unlisted(app).await;
        }
        match parse::<T::Args>(&Tool::of::<T>(), args) {
            Ok(a) => wire::finish(app, T::FINISH, wire::answer(T::run(app, a, hooks).await)),
            Err(f) => wire::answer::<()>(Err(f)),
        }
    })
}

/// The default profile's tools, in tools/list order.
pub static META_TOOLS: &[Tool] = &[
    Tool::of::<search_tools::SearchTools>(),
    Tool::of::<get_tool_schema::GetToolSchema>(),
    Tool::of::<execute_tools::ExecuteTools>(),
    Tool::of::<whoami::Whoami>(),
    Tool::of::<list_integrations::ListIntegrations>(),
    Tool::of::<connect::Connect>(),
    Tool::of::<wait_for_connection::WaitForConnection>(),
    Tool::of::<connect::GetAuthUrl>(),
    Tool::of::<curl_session::CurlSession>(),
];

/// A meta-tool's input schema, described by an `Args`-shaped type: its committed text
/// (`src/schemas.rs`, keyed by profile and name), parsed once per process. In this crate's tests it
/// is generated from the type instead, and a test checks the committed text is the same
/// ([`schema`]).
macro_rules! schema_of {
    ($args:ty) => {{
        static SCHEMA: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        #[cfg(not(test))]
        let schema = SCHEMA
            .get_or_init(|| $crate::meta::schema::committed(module_path!(), <Self as $crate::meta::MetaTool>::NAME));
        #[cfg(test)]
        let schema = SCHEMA.get_or_init($crate::meta::schema::args_schema::<$args>);
        schema.clone()
    }};
}
pub(crate) use schema_of;

/// The arguments of a meta-tool that takes none (whoami, list_integrations): any field is refused.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Why a meta-tool call failed: the one failure type of every meta-tool, in the error styles the
/// README documents ("Error codes"). [`wire`] serialises it.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The agent-facing error object `{error: {code, message, ...}}` (src/error.rs): arguments that
    /// do not fit the tool's schema, and failures of execute_tools itself.
    Tool(ToolFailure),
    /// `{error: "<message>", ...hints}`: the plain-string style of the meta-tools other than
    /// execute_tools, with what helps the agent next (`did_you_mean`, `unlock_url`, ...) in order.
    Plain { message: String, hints: Vec<Hint> },
    /// A batch that failed as a whole (`{error: {...}, completed, not_run}`).
    Batch(Box<Batched>),
}

/// What a plain-string failure tells the agent beside its message, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum Hint {
    /// `toolName`: the tool the call named.
    ToolName(String),
    /// `did_you_mean`: the names closest to a wrong one.
    DidYouMean(Vec<String>),
    /// `did_you_mean`: the one name closest to a wrong one.
    Nearest(String),
    /// `unlock_url`: the page that unlocks the secret store.
    UnlockUrl(String),
    /// `pattern`: the pattern that did not compile.
    Pattern(String),
    /// `code` and the details of a refusal (the safety policy's, with its approval page).
    Refusal(ToolFailure),
    /// The runstack profile's execute_tool failures.
    Run(runstack::RunFailure),
}

impl Failure {
    /// A plain-string failure (see [`Failure::Plain`]).
    pub fn plain(message: impl Into<String>) -> Failure {
        Failure::Plain { message: message.into(), hints: Vec::new() }
    }

    /// The plain-string failure with one more hint (after the ones it has).
    pub fn hint(mut self, hint: Hint) -> Failure {
        if let Failure::Plain { hints, .. } = &mut self {
            hints.push(hint);
        }
        self
    }

    /// What went wrong, in words (for a terminal or a page).
    pub fn message(&self) -> String {
        match self {
            Failure::Tool(f) => f.message.clone(),
            Failure::Plain { message, .. } => message.clone(),
            Failure::Batch(b) => b.failure().map(|f| f.message.clone()).unwrap_or_default(),
        }
    }

    /// The closest name to a wrong one, if the failure offers one.
    pub fn nearest(&self) -> Option<&str> {
        let Failure::Plain { hints, .. } = self else { return None };
        hints.iter().find_map(|h| match h {
            Hint::Nearest(n) => Some(n.as_str()),
            _ => None,
        })
    }
}

impl From<ToolFailure> for Failure {
    fn from(f: ToolFailure) -> Self {
        Failure::Tool(f)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A typed answer as the agent gets it (see [`wire::answer`]).
pub fn answer<T: Serialize>(result: Result<T, Failure>) -> Answer {
    wire::answer(result)
}

pub fn find(name: &str) -> Option<&'static Tool> {
    META_TOOLS.iter().find(|t| t.name == name)
}

/// Runs a meta-tool; `None` when no meta-tool has that name.
pub async fn call(app: &Arc<App>, name: &str, args: Value) -> Option<Answer> {
    call_with(app, name, args, &Hooks::default()).await
}

/// [`call`] with progress reports and cancellation for `execute_tools`.
pub async fn call_with(app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Answer> {
    Some(find(name)?.call(app, args, hooks).await)
}

/// A meta-tool's JSON arguments as its `Args`: validated against its schema first (defaults
/// applied; every problem at once, each with its JSON Pointer, plus the expected parameters), then
/// deserialised. A missing or mistyped field is INVALID_ARGUMENTS naming it, never a default.
pub fn parse<A: DeserializeOwned>(tool: &Tool, args: Value) -> Result<A, Failure> {
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

fn invalid_arguments(tool: &Tool, problems: Vec<plugins::api::ArgProblem>) -> Failure {
    Failure::Tool(
        ToolFailure::new(
            ErrorCode::InvalidArguments,
            format!("{} problem(s) with the arguments for {}", problems.len(), tool.name),
        )
        .with("problems", serde_json::to_value(problems).unwrap_or_default())
        .with("expected_parameters", crate::validate::expected_parameters(&(tool.schema)())),
    )
}

/// Validates `args` against a meta-tool's schema (defaults applied) or says what is wrong. The
/// fields the tool checks itself ([`MetaTool::SELF_CHECKED`]) pass through as they are.
fn checked_args(tool: &Tool, args: Value) -> Result<Value, Failure> {
    let mut args = args;
    let own: Vec<(&str, Value)> = match args.as_object_mut() {
        Some(map) => tool.self_checked.iter().filter_map(|k| map.remove(*k).map(|v| (*k, v))).collect(),
        None => Vec::new(),
    };
    let mut args = crate::validate::validate(&(tool.schema)(), &args).map_err(|p| invalid_arguments(tool, p))?;
    if let Some(map) = args.as_object_mut() {
        for (k, v) in own {
            map.insert(k.into(), v);
        }
    }
    Ok(args)
}
