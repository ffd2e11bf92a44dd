//! The runstack compatibility profile (`workbench serve --profile runstack`): the four meta-tools
//! of the Runstack design (search_tools by regex, check_authentication, initiate_connection,
//! execute_tool) with its argument names, result shapes and error strings, over the same registry,
//! engine and credentials as the default nine. Prompts written for that design work unchanged.
//!
//! Where the design is silent: the regex is case-insensitive and ASCII (`\w` is `[0-9A-Za-z_]`);
//! search returns at most [`MAX_RESULTS`] tools (name matches first) with `total` and a note when
//! there were more; `requiredAuth` is `<integration in camelCase>Token` (`githubToken`) for
//! integrations that need a credential and `null` otherwise; every answer also names the
//! `provider` to pass to initiate_connection; failures are MCP `isError` results.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Annotations, Answer, Failure, Finish, Hint, MetaTool, Tool, schema_of};
use crate::app::App;
use crate::engine::{self, Execution, Hooks};
use crate::error::{ErrorCode, ToolFailure};
use crate::registry::ToolEntry;

/// Most tools one search returns (each carries its whole parameter schema).
pub const MAX_RESULTS: usize = 20;
/// Longest regex accepted.
const MAX_PATTERN_CHARS: usize = 500;

pub const INSTRUCTIONS: &str = "Tools for many services behind four tools. search_tools(pattern) finds tools by regex \
over names and descriptions, with their parameters. check_authentication(toolName) says whether its provider is \
connected; if not, initiate_connection(provider) gives a link for the user to open, then retry. \
execute_tool(toolName, args) runs it; credentials are added for you, never put tokens in args.";

/// search_tools' arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Regex to match, e.g. "github.*issue" or "^slack_".
    #[schemars(length(min = 1, max = MAX_PATTERN_CHARS))]
    pub pattern: String,
    /// Match tool names, descriptions, or both.
    #[serde(rename = "searchIn", default)]
    pub search_in: SearchIn,
}

/// What a search pattern is matched against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchIn {
    Names,
    Descriptions,
    #[default]
    Both,
}

/// check_authentication's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// Exact tool name from search_tools.
    #[serde(rename = "toolName")]
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// Which connected account of the provider to check, e.g. "work"; omit for the default account.
    #[serde(default)]
    pub account: Option<String>,
}

/// initiate_connection's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitiateArgs {
    /// Provider to connect, e.g. "github" (the provider field of search_tools or check_authentication).
    #[schemars(length(min = 1))]
    pub provider: String,
}

/// execute_tool's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteArgs {
    /// Exact tool name from search_tools.
    #[serde(rename = "toolName")]
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// Arguments matching the tool's parameters (any keys).
    #[serde(default)]
    pub args: Option<Map<String, Value>>,
    /// Which connected account of the provider to use, e.g. "work"; omit for the default account.
    #[serde(default)]
    pub account: Option<String>,
}

/// runstack's search_tools.
pub struct SearchTools;

impl MetaTool for SearchTools {
    const NAME: &'static str = "search_tools";
    const TITLE: &'static str = "Search tools";
    const DESCRIPTION: &'static str = "Search the tool registry by regex pattern (case-insensitive), e.g. \"github.*issue\". searchIn picks what the pattern is matched against: names, descriptions or both (default). Returns matching tools with names, descriptions, parameter schemas and requiredAuth (null when no connection is needed), name matches first, at most 20.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    const LOOKS_UP_TOOLS: bool = true;
    // Long schemas are shortened, with a note.
    const FINISH: Finish = Finish::Capped;
    type Args = SearchArgs;
    type Answer = Matches;
    fn schema() -> Value {
        schema_of!(SearchArgs)
    }
    async fn run(app: &Arc<App>, args: SearchArgs, _: &Hooks) -> Result<Matches, Failure> {
        search(app, args)
    }
}

/// check_authentication.
pub struct CheckAuthentication;

impl MetaTool for CheckAuthentication {
    const NAME: &'static str = "check_authentication";
    const TITLE: &'static str = "Check authentication";
    const DESCRIPTION: &'static str = "Verify that the user has connected the provider a tool needs. Returns {authenticated, toolName}; when not authenticated also requiredAuth, provider and a reason (token_missing: provider not connected; user_not_found: no local user). Tools that need no connection answer authenticated: true with reason no_auth_required.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Args = CheckArgs;
    type Answer = Authentication;
    fn schema() -> Value {
        schema_of!(CheckArgs)
    }
    async fn run(app: &Arc<App>, args: CheckArgs, _: &Hooks) -> Result<Authentication, Failure> {
        check_authentication(app, args).await
    }
}

/// initiate_connection.
pub struct InitiateConnection;

impl MetaTool for InitiateConnection {
    const NAME: &'static str = "initiate_connection";
    const TITLE: &'static str = "Initiate a connection";
    const DESCRIPTION: &'static str = "Get a link the user can open to connect a provider, e.g. \"github\", \"notion\", \"gmail\", \"linear\", \"google-sheets\", \"googlecalendar\". Returns {link, provider}. The link is a page served by workbench on this computer (127.0.0.1) where the user enters credentials, never in the chat; after they finish, retry the tool call. Not needed if check_authentication returns authenticated: true.";
    const ANNOTATIONS: Annotations = Annotations::LOCAL;
    type Args = InitiateArgs;
    type Answer = Initiated;
    fn schema() -> Value {
        schema_of!(InitiateArgs)
    }
    async fn run(app: &Arc<App>, args: InitiateArgs, _: &Hooks) -> Result<Initiated, Failure> {
        initiate_connection(app, args).await
    }
}

/// execute_tool.
pub struct ExecuteTool;

impl MetaTool for ExecuteTool {
    const NAME: &'static str = "execute_tool";
    const TITLE: &'static str = "Execute a tool";
    const DESCRIPTION: &'static str = "Execute any registered tool by name with the provided arguments. Returns {toolName, success: true, result}. Failures carry error and toolName: invalid arguments list expectedParameters and providedParameters; a missing connection names requiredAuth and provider (call initiate_connection). Auth tokens are injected from the user's stored connections; never pass tokens in args.";
    const ANNOTATIONS: Annotations = Annotations::ANYTHING;
    const LOOKS_UP_TOOLS: bool = true;
    type Args = ExecuteArgs;
    type Answer = ToolRun;
    fn schema() -> Value {
        schema_of!(ExecuteArgs)
    }
    async fn run(app: &Arc<App>, args: ExecuteArgs, hooks: &Hooks) -> Result<ToolRun, Failure> {
        execute_tool(app, args, hooks).await
    }
}

/// The profile's four tools, in tools/list order.
pub static RUNSTACK_TOOLS: &[Tool] = &[
    Tool::of::<SearchTools>(),
    Tool::of::<CheckAuthentication>(),
    Tool::of::<InitiateConnection>(),
    Tool::of::<ExecuteTool>(),
];

pub fn find(name: &str) -> Option<&'static Tool> {
    RUNSTACK_TOOLS.iter().find(|t| t.name == name)
}

/// Runs one of the four tools; `None` when the profile has no tool by that name.
pub async fn call_with(app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Answer> {
    Some(find(name)?.call(app, args, hooks).await)
}

/// `githubToken` for integrations that need a credential; `None` for public ones and built-ins.
pub fn required_auth(entry: &ToolEntry) -> Option<String> {
    let integration = entry.plugin().filter(|i| !crate::registry::is_public(i))?;
    let mut out = String::new();
    let mut upper = false;
    for c in integration.name.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out.push_str("Token");
    Some(out)
}

/// The integration a tool belongs to (`None` for built-ins).
fn provider(entry: &ToolEntry) -> Option<&'static str> {
    entry.plugin().map(|i| i.name)
}

/// search_tools' answer: the matching tools (at most [`MAX_RESULTS`]), how many matched, and a
/// note when there were more. The response size cap works on it (long schemas are shortened,
/// with a note): [`Finish::Capped`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matches {
    pub tools: Vec<Match>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One matching tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Value,
    pub required_auth: Option<String>,
    pub provider: Option<&'static str>,
}

/// search_tools: every tool whose name or description matches, name matches first.
pub fn search(app: &Arc<App>, args: SearchArgs) -> Result<Matches, Failure> {
    let pattern = args.pattern.as_str();
    let regex = regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
        .map_err(|e| Failure::plain(format!("Invalid regex pattern: {e}")).hint(Hint::Pattern(pattern.to_string())))?;
    let (names, descriptions) = match args.search_in {
        SearchIn::Names => (true, false),
        SearchIn::Descriptions => (false, true),
        SearchIn::Both => (true, true),
    };
    let registry = app.registry();
    let tools = registry.tools();
    let by_name = tools.iter().filter(|t| names && regex.is_match(t.name.as_bytes()));
    let by_description = tools
        .iter()
        .filter(|t| !(names && regex.is_match(t.name.as_bytes())))
        .filter(|t| descriptions && regex.is_match(t.description.as_bytes()));
    let matches: Vec<&ToolEntry> = by_name.chain(by_description).collect();
    let total = matches.len();
    let listed = matches
        .iter()
        .take(MAX_RESULTS)
        .map(|t| Match {
            name: t.name,
            description: t.description,
            parameters: t.schema().clone(),
            required_auth: required_auth(t),
            provider: provider(t),
        })
        .collect();
    let note = (total > MAX_RESULTS).then(|| {
        format!(
            "{total} tools matched; showing the first {MAX_RESULTS}. Use a narrower pattern (e.g. ^github_.*issue) to see the rest."
        )
    });
    Ok(Matches { tools: listed, total, note })
}

fn tool_not_found(app: &Arc<App>, name: &str) -> Failure {
    let mut failure = Failure::plain("Tool not found").hint(Hint::ToolName(name.to_string()));
    let similar = app.registry().similar_names(name, 3);
    if !similar.is_empty() {
        failure = failure.hint(Hint::DidYouMean(similar.into_iter().map(String::from).collect()));
    }
    failure
}

/// check_authentication's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Authentication {
    pub tool_name: String,
    pub authenticated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_auth: Option<String>,
    /// `user_not_found`, `no_auth_required` or `token_missing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The account the call named, when it is connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

pub async fn check_authentication(app: &Arc<App>, args: CheckArgs) -> Result<Authentication, Failure> {
    let name = args.tool_name.trim();
    let registry = app.registry();
    let Some(entry) = registry.get(name) else {
        return Err(tool_not_found(app, name));
    };
    let required = required_auth(entry);
    let mut answer = Authentication {
        tool_name: entry.name.to_string(),
        authenticated: false,
        required_auth: None,
        reason: None,
        provider: None,
        account: None,
    };
    let user = app.storage.user().await;
    if !matches!(user, Ok(Some(_))) {
        if let Err(e) = user {
            tracing::error!(error = %e, "check_authentication could not read the user record");
        }
        answer.required_auth = required;
        answer.reason = Some("user_not_found");
        return Ok(answer);
    }
    match required {
        None => {
            answer.authenticated = true;
            answer.reason = Some("no_auth_required");
        }
        Some(_) if account_connected(app, entry, args.account.as_deref()) => {
            answer.authenticated = true;
            answer.account = args.account;
        }
        Some(r) => {
            answer.required_auth = Some(r);
            answer.reason = Some("token_missing");
            answer.provider = Some(entry.integration.to_string());
        }
    }
    Ok(answer)
}

/// Whether the tool's integration is connected, as the account the call names (if it names one).
fn account_connected(app: &Arc<App>, entry: &ToolEntry, account: Option<&str>) -> bool {
    match (account, entry.plugin()) {
        (Some(account), Some(i)) => app.accounts(i).iter().any(|a| a.name == account),
        _ => app.is_connected(entry.integration),
    }
}

/// `google-sheets`, `googlesheets`, `Google Sheets` -> `google_sheets`.
fn resolve_provider(app: &Arc<App>, given: &str) -> Option<String> {
    let squash = |s: &str| s.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase();
    let wanted = squash(given);
    if wanted.is_empty() {
        return None;
    }
    for i in app.registry().integrations() {
        if squash(i.name) == wanted || squash(i.display_name) == wanted {
            return Some(i.name.to_string());
        }
    }
    app.registry().is_builtin_namespace(&wanted).then_some(wanted)
}

/// initiate_connection's answer: a link to open, or word that the provider is connected already.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Initiated {
    #[serde(rename_all = "camelCase")]
    Link { link: String, provider: String, connection_id: String, expires_in_seconds: u64, message: String },
    /// Public integrations, built-ins and environment credentials are connected already.
    Connected {
        provider: String,
        authenticated: bool,
        /// Always `null`.
        link: Option<String>,
        message: String,
    },
}

pub async fn initiate_connection(app: &Arc<App>, args: InitiateArgs) -> Result<Initiated, Failure> {
    let given = args.provider.trim();
    let Some(name) = resolve_provider(app, given) else {
        let names: Vec<String> = app.registry().integrations().iter().map(|i| i.name.to_string()).collect();
        let mut failure = Failure::plain(format!("Unknown provider: {given}"));
        if let Some(near) = crate::validate::nearest(&given.to_ascii_lowercase().replace('-', "_"), names.iter()) {
            failure = failure.hint(Hint::Nearest(near.to_string()));
        }
        return Err(failure);
    };
    let connection = super::connect::run(app, super::connect::Args::new(&name, None)).await?;
    Ok(match connection {
        super::connect::Connection::Link(l) => Initiated::Link {
            message: format!(
                "Ask the user to open {} on this computer and finish connecting there, then retry the tool call.",
                l.url
            ),
            link: l.url,
            provider: given.to_string(),
            connection_id: l.connection_id,
            expires_in_seconds: l.expires_in_seconds,
        },
        super::connect::Connection::Ready(r) => {
            Initiated::Connected { provider: given.to_string(), authenticated: true, link: None, message: r.message }
        }
        // Providers resolve to the registry's integrations, never to an `mcp:<server>` sign-in.
        super::connect::Connection::Consent(c) => return Err(Failure::plain(c.message)),
    })
}

/// execute_tool's answer: the tool's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub tool_name: String,
    /// Always `true`: failures are [`Failure`]s.
    pub success: bool,
    pub result: Value,
}

/// Why execute_tool failed, in the Runstack design's shapes (serialised by [`super::wire`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RunFailure {
    /// `expectedParameters` (the tool's properties), `providedParameters` (the keys given) and
    /// the schema's `problems`.
    InvalidArguments { expected: Value, provided: Vec<String>, problems: Value },
    /// The provider is not connected (or not as the named account): `requiredAuth`, `provider`,
    /// the accounts it has when the call named another one, and what to do.
    NeedsConnection { required_auth: Option<String>, provider: &'static str, accounts: Option<Value>, message: String },
    /// Any other failure: the error object's fields.
    Failed(ToolFailure),
}

pub async fn execute_tool(app: &Arc<App>, args: ExecuteArgs, hooks: &Hooks) -> Result<ToolRun, Failure> {
    let name = args.tool_name.trim().to_string();
    let tool_args = Value::Object(args.args.unwrap_or_default());
    let account = args.account;
    let registry = app.registry();
    let Some(entry) = registry.get(&name) else {
        return Err(tool_not_found(app, &name));
    };
    let exec = Execution { tool: name.clone(), args: tool_args.clone(), ref_id: None, account };
    let mut failure = match engine::execute_one(app, exec, hooks).await {
        Ok(result) => return Ok(ToolRun { tool_name: name, success: true, result }),
        Err(f) => f,
    };
    let (message, run) = match failure.code {
        ErrorCode::InvalidArguments => {
            let provided = tool_args.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            let run = RunFailure::InvalidArguments {
                expected: entry.schema().get("properties").cloned().unwrap_or_else(|| Value::Object(Map::new())),
                provided,
                problems: failure.details.remove("problems").unwrap_or_else(|| Value::Array(Vec::new())),
            };
            ("Invalid arguments for tool", run)
        }
        ErrorCode::NotConnected => {
            // An account the call named that the provider does not have: say which ones it has.
            let accounts = failure.details.remove("accounts");
            let message = match accounts {
                Some(_) => failure.message,
                None => "Use initiate_connection(provider) to connect.".to_string(),
            };
            let run = RunFailure::NeedsConnection {
                required_auth: required_auth(entry),
                provider: entry.integration,
                accounts,
                message,
            };
            ("Tool requires connection", run)
        }
        _ => ("Tool execution failed", RunFailure::Failed(failure)),
    };
    Err(Failure::plain(message).hint(Hint::ToolName(name)).hint(Hint::Run(run)))
}
