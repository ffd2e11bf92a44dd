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

use serde_json::{Map, Value, json};

use super::{MetaTool, ok, str_arg};
use crate::app::App;
use crate::engine::{self, Batch, Execution, Hooks, Outcome};
use crate::registry::ToolEntry;

/// Most tools one search returns (each carries its whole parameter schema).
pub const MAX_RESULTS: usize = 20;
/// Longest regex accepted.
const MAX_PATTERN_CHARS: usize = 500;

pub const INSTRUCTIONS: &str = "Tools for many services behind four tools. search_tools(pattern) finds tools by regex \
over names and descriptions, with their parameters. check_authentication(toolName) says whether its provider is \
connected; if not, initiate_connection(provider) gives a link for the user to open, then retry. \
execute_tool(toolName, args) runs it; credentials are added for you, never put tokens in args.";

pub static RUNSTACK_TOOLS: &[MetaTool] = &[
    MetaTool {
        name: "search_tools",
        title: "Search tools",
        description: "Search the tool registry by regex pattern (case-insensitive), e.g. \"github.*issue\". searchIn picks what the pattern is matched against: names, descriptions or both (default). Returns matching tools with names, descriptions, parameter schemas and requiredAuth (null when no connection is needed), name matches first, at most 20.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "pattern": { "type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS, "description": "Regex to match, e.g. \"github.*issue\" or \"^slack_\"." },
                    "searchIn": { "type": "string", "enum": ["names", "descriptions", "both"], "default": "both", "description": "Match tool names, descriptions, or both." }
                },
                "required": ["pattern"],
                "additionalProperties": false
            })
        },
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "check_authentication",
        title: "Check authentication",
        description: "Verify that the user has connected the provider a tool needs. Returns {authenticated, toolName}; when not authenticated also requiredAuth, provider and a reason (token_missing: provider not connected; user_not_found: no local user). Tools that need no connection answer authenticated: true with reason no_auth_required.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "toolName": { "type": "string", "minLength": 1, "description": "Exact tool name from search_tools." },
                    "account": { "type": "string", "description": "Which connected account of the provider to check, e.g. \"work\"; omit for the default account." }
                },
                "required": ["toolName"],
                "additionalProperties": false
            })
        },
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    },
    MetaTool {
        name: "initiate_connection",
        title: "Initiate a connection",
        description: "Get a link the user can open to connect a provider, e.g. \"github\", \"notion\", \"gmail\", \"linear\", \"google-sheets\", \"googlecalendar\". Returns {link, provider}. The link is a page served by workbench on this computer (127.0.0.1) where the user enters credentials, never in the chat; after they finish, retry the tool call. Not needed if check_authentication returns authenticated: true.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "provider": { "type": "string", "minLength": 1, "description": "Provider to connect, e.g. \"github\" (the provider field of search_tools or check_authentication)." }
                },
                "required": ["provider"],
                "additionalProperties": false
            })
        },
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    },
    MetaTool {
        name: "execute_tool",
        title: "Execute a tool",
        description: "Execute any registered tool by name with the provided arguments. Returns {toolName, success: true, result}. Failures carry error and toolName: invalid arguments list expectedParameters and providedParameters; a missing connection names requiredAuth and provider (call initiate_connection). Auth tokens are injected from the user's stored connections; never pass tokens in args.",
        schema: || {
            json!({
                "type": "object",
                "properties": {
                    "toolName": { "type": "string", "minLength": 1, "description": "Exact tool name from search_tools." },
                    "args": { "type": "object", "description": "Arguments matching the tool's parameters (any keys)." },
                    "account": { "type": "string", "description": "Which connected account of the provider to use, e.g. \"work\"; omit for the default account." }
                },
                "required": ["toolName"],
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
    RUNSTACK_TOOLS.iter().find(|t| t.name == name)
}

/// Runs one of the four tools; `None` when the profile has no tool by that name.
pub async fn call_with(app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Outcome> {
    let tool = find(name)?;
    let args = match super::checked_args(tool, args) {
        Ok(a) => a,
        Err(outcome) => return Some(outcome),
    };
    Some(match name {
        "search_tools" => search(app, &args),
        "check_authentication" => check_authentication(app, &args).await,
        "initiate_connection" => initiate_connection(app, &args).await,
        "execute_tool" => execute_tool(app, args, hooks).await,
        _ => return None,
    })
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

fn search(app: &Arc<App>, args: &Value) -> Outcome {
    let pattern = str_arg(args, "pattern");
    let search_in = args.get("searchIn").and_then(Value::as_str).unwrap_or("both");
    let regex = match regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .dfa_size_limit(1 << 20)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return Outcome {
                body: json!({ "error": format!("Invalid regex pattern: {e}"), "pattern": pattern }),
                is_error: true,
            };
        }
    };
    let (names, descriptions) = match search_in {
        "names" => (true, false),
        "descriptions" => (false, true),
        _ => (true, true),
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
    let listed: Vec<Value> = matches
        .iter()
        .take(MAX_RESULTS)
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "parameters": t.schema(),
                "requiredAuth": required_auth(t),
                "provider": provider(t),
            })
        })
        .collect();
    let mut body = json!({ "tools": listed, "total": total });
    if total > MAX_RESULTS {
        body["note"] = json!(format!(
            "{total} tools matched; showing the first {MAX_RESULTS}. Use a narrower pattern (e.g. ^github_.*issue) to see the rest."
        ));
    }
    engine::cap::cap_response(&mut body, engine::cap::MAX_RESPONSE_CHARS);
    ok(body)
}

fn tool_not_found(app: &Arc<App>, name: &str) -> Outcome {
    let mut body = json!({ "error": "Tool not found", "toolName": name });
    let similar = app.registry().similar_names(name, 3);
    if !similar.is_empty() {
        body["did_you_mean"] = json!(similar);
    }
    Outcome { body, is_error: true }
}

async fn check_authentication(app: &Arc<App>, args: &Value) -> Outcome {
    let name = str_arg(args, "toolName").trim();
    let registry = app.registry();
    let Some(entry) = registry.get(name) else {
        return tool_not_found(app, name);
    };
    let required = required_auth(entry);
    let mut body = json!({ "toolName": entry.name });
    let user = app.storage.user().await;
    if !matches!(user, Ok(Some(_))) {
        if let Err(e) = user {
            tracing::error!(error = %e, "check_authentication could not read the user record");
        }
        body["authenticated"] = json!(false);
        if let Some(r) = required {
            body["requiredAuth"] = json!(r);
        }
        body["reason"] = json!("user_not_found");
        return ok(body);
    }
    match required {
        None => {
            body["authenticated"] = json!(true);
            body["reason"] = json!("no_auth_required");
        }
        Some(_) if account_connected(app, entry, args) => {
            body["authenticated"] = json!(true);
            if let Some(a) = args.get("account").and_then(Value::as_str) {
                body["account"] = json!(a);
            }
        }
        Some(r) => {
            body["authenticated"] = json!(false);
            body["requiredAuth"] = json!(r);
            body["reason"] = json!("token_missing");
            body["provider"] = json!(entry.integration);
        }
    }
    ok(body)
}

/// Whether the tool's integration is connected, as the account the call names (if it names one).
fn account_connected(app: &Arc<App>, entry: &ToolEntry, args: &Value) -> bool {
    match (args.get("account").and_then(Value::as_str), entry.plugin()) {
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

async fn initiate_connection(app: &Arc<App>, args: &Value) -> Outcome {
    let given = str_arg(args, "provider").trim();
    let Some(name) = resolve_provider(app, given) else {
        let names: Vec<String> = app.registry().integrations().iter().map(|i| i.name.to_string()).collect();
        let mut body = json!({ "error": format!("Unknown provider: {given}") });
        if let Some(near) = crate::validate::nearest(&given.to_ascii_lowercase().replace('-', "_"), names.iter()) {
            body["did_you_mean"] = json!(near);
        }
        return Outcome { body, is_error: true };
    };
    let outcome = super::connect::run(app, json!({ "integration": name })).await;
    if outcome.is_error {
        return outcome;
    }
    let b = &outcome.body;
    if let Some(url) = b.get("url").and_then(Value::as_str) {
        return ok(json!({
            "link": url,
            "provider": given,
            "connectionId": b["connectionId"],
            "expiresInSeconds": b["expiresInSeconds"],
            "message": format!("Ask the user to open {url} on this computer and finish connecting there, then retry the tool call."),
        }));
    }
    // Public integrations, built-ins and environment credentials are connected already.
    ok(json!({
        "provider": given,
        "authenticated": true,
        "link": null,
        "message": b.get("message").cloned().unwrap_or_else(|| json!("Already connected; call execute_tool.")),
    }))
}

async fn execute_tool(app: &Arc<App>, args: Value, hooks: &Hooks) -> Outcome {
    let name = str_arg(&args, "toolName").trim().to_string();
    let tool_args = args.get("args").cloned().unwrap_or_else(|| json!({}));
    let account = args.get("account").and_then(Value::as_str).map(str::to_string);
    let registry = app.registry();
    let Some(entry) = registry.get(&name) else {
        return tool_not_found(app, &name);
    };
    let batch = Batch {
        executions: vec![Execution { tool: name.clone(), args: tool_args.clone(), ref_id: None, account }],
        compose: false,
        ret: None,
    };
    let outcome = engine::execute_with(app, batch, hooks).await;
    let item = match outcome.body.get("results").and_then(|r| r.get(0)) {
        Some(item) if !outcome.is_error => item.clone(),
        // The batch as a whole was refused (e.g. a {{step:...}} ref): report its error.
        _ => outcome.body.clone(),
    };
    if let Some(result) = item.get("result") {
        return ok(json!({ "toolName": name, "success": true, "result": result }));
    }
    let error = item.get("error").and_then(Value::as_object).cloned().unwrap_or_default();
    let code = error.get("code").and_then(Value::as_str).unwrap_or("INTERNAL_ERROR");
    let body = match code {
        "INVALID_ARGUMENTS" => {
            let provided: Vec<&String> = tool_args.as_object().map(|o| o.keys().collect()).unwrap_or_default();
            json!({
                "error": "Invalid arguments for tool",
                "toolName": name,
                "expectedParameters": entry.schema().get("properties").cloned().unwrap_or_else(|| json!({})),
                "providedParameters": provided,
                "problems": error.get("problems").cloned().unwrap_or_else(|| json!([])),
            })
        }
        // An account the call named that the provider does not have: say which ones it has.
        "NOT_CONNECTED" if error.contains_key("accounts") => json!({
            "error": "Tool requires connection",
            "toolName": name,
            "requiredAuth": required_auth(entry),
            "provider": entry.integration,
            "accounts": error.get("accounts").cloned().unwrap_or_default(),
            "message": error.get("message").cloned().unwrap_or_default(),
        }),
        "NOT_CONNECTED" => json!({
            "error": "Tool requires connection",
            "toolName": name,
            "requiredAuth": required_auth(entry),
            "provider": entry.integration,
            "message": "Use initiate_connection(provider) to connect.",
        }),
        _ => {
            let mut body = Map::new();
            body.insert("error".into(), json!("Tool execution failed"));
            body.insert("toolName".into(), json!(name));
            for (k, v) in error {
                body.entry(k).or_insert(v);
            }
            Value::Object(body)
        }
    };
    Outcome { body, is_error: true }
}
