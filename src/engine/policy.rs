//! The safety policy for writes. Per integration, from the user's configuration only:
//! `allow`, `read_only` (mutating tools refused) or `confirm` (mutating tools need the user's
//! approval, asked through the client: MCP elicitation). With nothing configured, destructive
//! tools (deletions, merges, refunds: `Effect::Destructive`) and `curl_session` default to
//! `confirm`; other writes to `allow`. Reads are never held.
//!
//! The approval comes only from the [`ApproveFn`] the caller's transport provides (the MCP layer
//! asks the human through the client; the portal and the terminal are the human's own action).
//! No argument of a tool call can grant it: nothing the model writes is read here.

use std::sync::Arc;

use plugins::api::{BoxFuture, Effect};
use serde_json::{Value, json};

use crate::app::App;
use crate::error::{ErrorCode, ToolFailure};
use crate::registry::ToolEntry;

use crate::config::BadSetting;
pub use crate::config::Policy;

pub use crate::approval::ApprovalRequest;

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    Approved,
    Declined(String),
    /// The client cannot ask (no elicitation); says why.
    Unavailable(String),
}

/// Asks the user; provided by the transport (MCP elicitation, the portal, the terminal).
pub type ApproveFn = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<Approval> + Send + Sync>;

/// What the user set for `integration`: `WORKBENCH_POLICY_<INTEGRATION>` (or config.json's
/// `policy.<integration>`), else the `default` one, else nothing. A value that did not parse is
/// returned as its error: the policy fails closed, never falls back to a laxer one.
pub fn configured<'a>(app: &'a App, integration: &str) -> Option<Result<Policy, &'a BadSetting>> {
    let policies = &app.settings.policies;
    let specific = policies.get(&integration.to_ascii_lowercase());
    specific.or_else(|| policies.get("default")).map(|p| p.as_ref().copied())
}

/// What the user set for one account of `integration`, looked up in this order (the first
/// that is set wins, a bad value failing closed as always):
/// 1. `<integration>__<account>` (`WORKBENCH_POLICY_GITHUB__WORK`): the unambiguous spelling;
/// 2. `<integration>_<account>` (`WORKBENCH_POLICY_GITHUB_WORK`), unless that is itself an
///    integration's name (`google` + `drive` would read `google_drive`'s policy: skipped);
/// 3. the integration's own, then `default`.
///
/// `account: None` (no connection, the default account of an env-less call) skips 1 and 2.
pub fn configured_as<'a>(
    app: &'a App,
    integration: &str,
    account: Option<&str>,
) -> Option<Result<Policy, &'a BadSetting>> {
    let policies = &app.settings.policies;
    if let Some(account) = account {
        let lower = integration.to_ascii_lowercase();
        let account = account.replace('-', "_");
        if let Some(p) = policies.get(&format!("{lower}__{account}")) {
            return Some(p.as_ref().copied());
        }
        let single = format!("{lower}_{account}");
        if app.registry().integration(&single).is_none()
            && let Some(p) = policies.get(&single)
        {
            return Some(p.as_ref().copied());
        }
    }
    configured(app, integration)
}

/// The error for a policy the user misspelled: writes are refused until it is fixed.
fn misconfigured(integration: &str, bad: &BadSetting) -> ToolFailure {
    ToolFailure::new(
        ErrorCode::PolicyDenied,
        format!(
            "the safety policy for {integration} is misconfigured ({bad}), so its writes are refused until the user fixes it; nothing was run"
        ),
    )
    .with("policy", "invalid")
    .with("setting", bad.source.clone())
    .with("accepted", Policy::ACCEPTED)
}

/// The policy a tool of `integration` with `effect` runs under. With nothing configured,
/// destructive tools and the `custom` namespace (defining or deleting a custom app changes what
/// workbench may do) confirm; other writes are allowed.
pub fn for_tool(app: &App, integration: &str, effect: Effect) -> Result<Policy, ToolFailure> {
    for_tool_as(app, integration, None, effect)
}

/// [`for_tool`] for one account of the integration (its own policy first: [`configured_as`]).
pub fn for_tool_as(app: &App, integration: &str, account: Option<&str>, effect: Effect) -> Result<Policy, ToolFailure> {
    match configured_as(app, integration, account) {
        Some(Ok(p)) => Ok(p),
        Some(Err(bad)) => Err(misconfigured(integration, bad)),
        None if effect == Effect::Destructive || integration == "custom" => Ok(Policy::Confirm),
        None => Ok(Policy::Allow),
    }
}

/// The policy `curl_session` runs under for `integration` (arbitrary writes: confirm by default).
pub fn for_curl_session(app: &App, integration: &str) -> Result<Policy, ToolFailure> {
    for_curl_session_as(app, integration, None)
}

/// [`for_curl_session`] for one account of the integration.
pub fn for_curl_session_as(app: &App, integration: &str, account: Option<&str>) -> Result<Policy, ToolFailure> {
    match configured_as(app, integration, account) {
        Some(Ok(p)) => Ok(p),
        Some(Err(bad)) => Err(misconfigured(integration, bad)),
        None => Ok(Policy::Confirm),
    }
}

fn how_to_change(integration: &str) -> String {
    format!(
        "the user can change it with WORKBENCH_POLICY_{}=allow|read_only|confirm in the environment workbench starts with",
        integration.to_ascii_uppercase()
    )
}

/// Holds a mutating action to the policy: returns when it may run, or the error to give back.
pub async fn check(
    app: &Arc<App>,
    policy: Policy,
    request: ApprovalRequest,
    approve: Option<&ApproveFn>,
) -> Result<(), ToolFailure> {
    let integration = request.integration.clone();
    match policy {
        Policy::Allow => Ok(()),
        Policy::ReadOnly => Err(ToolFailure::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} is read-only by the user's policy, so {} was not run; {}",
                integration,
                request.action,
                how_to_change(integration.split(',').next().unwrap_or_default())
            ),
        )
        .with("policy", "read_only")),
        Policy::Confirm => {
            let answer = match approve {
                Some(ask) => ask(request.clone()).await,
                None => Approval::Unavailable("this caller cannot ask the user".into()),
            };
            let _ = app;
            match answer {
                Approval::Approved => {
                    tracing::info!(action = request.action, "approved by the user");
                    Ok(())
                }
                Approval::Declined(why) => Err(ToolFailure::new(
                    ErrorCode::PolicyDenied,
                    format!("the user did not approve {} ({why}); nothing was run", request.action),
                )
                .with("policy", "confirm")),
                // The client cannot ask: the user approves this exact call on a local page.
                Approval::Unavailable(why) => {
                    let change = how_to_change(integration.split(',').next().unwrap_or_default());
                    crate::approval::hold(app, &request, &why, &change).await
                }
            }
        }
    }
}

/// The effect of one call, which can be more than its tool's: naming local files makes it a write;
/// replacing a vault secret that
/// exists (its value or hosts change what an existing `{{vault:...}}` ref sends where) is as
/// serious as deleting it, so it confirms by default like a destructive tool.
pub async fn effect_of_call(app: &App, entry: &ToolEntry, args: &Value) -> Effect {
    // A call that names local files to read or write counts as a write (`ToolEntry::effect_for`).
    let mut effect = entry.effect_for(args);
    if entry.name == crate::builtins::vault::SET_SECRET.name
        && let Some(name) = args.get("name").and_then(Value::as_str)
        && matches!(app.storage.vault_meta(name.to_string()).await, Ok(Some(_)) | Err(_))
    {
        effect = Effect::Destructive;
    }
    effect
}

/// What a call will really send, for the approval question, where workbench knows it before
/// running: a custom app operation's method, full URL and body; for a custom app definition, its
/// base URL, auth scheme and every operation's method and path (not only the names and
/// descriptions the agent wrote).
pub fn what_is_sent(entry: &ToolEntry, args: &Value) -> Option<String> {
    if let Some(op) = entry.custom() {
        let empty = serde_json::Map::new();
        let args = args.as_object().unwrap_or(&empty);
        return crate::custom::plan(op, args).ok().map(|p| p.describe());
    }
    if entry.name == crate::builtins::custom::CREATE_APP.name {
        let def: crate::custom::AppDef = serde_json::from_value(args.clone()).ok()?;
        let auth = def.auth.as_ref().map(|a| format!("{:?}", a.kind).to_ascii_lowercase()).unwrap_or("none".into());
        let mut lines = vec![format!("an app '{}' sending requests to {} (auth: {auth})", def.name, def.base_url)];
        for op in &def.operations {
            lines.push(format!(
                "  {} {}{} as {}",
                op.method.to_ascii_uppercase(),
                def.base_url.trim_end_matches('/'),
                op.path,
                op.tool_name
            ));
        }
        return Some(lines.join("\n"));
    }
    None
}

/// The summary shown to the user for a tool call: the tool, its integration and its arguments
/// (already scrubbed by the caller), cut short.
pub fn summarize(action: &str, integration: &str, description: &str, args: &Value) -> String {
    let (args, _) = plugins::api::truncate_chars(&args.to_string(), 600);
    let (description, _) = plugins::api::truncate_chars(description, 200);
    format!("Allow workbench to run {action} on {integration}?\n{description}\nArguments: {args}")
}

/// The policies in force, for `whoami`-like reports and the README's table.
pub fn describe(app: &App, integration: &str) -> Value {
    json!({
        "configured": match configured(app, integration) {
            Some(Ok(p)) => json!(p.as_str()),
            Some(Err(bad)) => json!(format!("invalid: {bad}")),
            None => Value::Null,
        },
        "destructive_default": "confirm",
        "custom_apps_default": "confirm",
        "write_default": "allow",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_policies() {
        assert_eq!(Policy::parse("allow"), Some(Policy::Allow));
        assert_eq!(Policy::parse("Read-Only"), Some(Policy::ReadOnly));
        assert_eq!(Policy::parse(" confirm "), Some(Policy::Confirm));
        assert_eq!(Policy::parse("yes"), None);
    }
}
