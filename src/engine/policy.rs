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

/// What the user configured for an integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Allow,
    ReadOnly,
    Confirm,
}

impl Policy {
    pub fn parse(text: &str) -> Option<Policy> {
        match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "allow" => Some(Policy::Allow),
            "read_only" | "readonly" => Some(Policy::ReadOnly),
            "confirm" => Some(Policy::Confirm),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Allow => "allow",
            Policy::ReadOnly => "read_only",
            Policy::Confirm => "confirm",
        }
    }
}

/// One thing the user is asked to approve.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool (or `curl_session`).
    pub action: String,
    /// The integration(s) it acts on.
    pub integration: String,
    /// What will happen, in words, with the (scrubbed, shortened) arguments.
    pub summary: String,
    /// SHA-256 of the canonical JSON of the resolved arguments (`approval::args_digest`): what an
    /// approval given outside this call (the browser page, a sealed 2026-07-28 request state) binds
    /// to. Never shown, never sent.
    pub args_sha256: String,
    /// The arguments as the user sees them (scrubbed).
    pub shown: Value,
}

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

/// The policy the user configured for `integration`: `WORKBENCH_POLICY_<INTEGRATION>`, else
/// `WORKBENCH_POLICY_DEFAULT`, else none.
pub fn configured(app: &App, integration: &str) -> Option<Policy> {
    let env = &app.settings.credential_env;
    let specific = env.get(&format!("WORKBENCH_POLICY_{}", integration.to_ascii_uppercase()));
    specific.or_else(|| env.get("WORKBENCH_POLICY_DEFAULT")).and_then(|v| Policy::parse(v))
}

/// The policy a tool of `integration` with `effect` runs under.
pub fn for_tool(app: &App, integration: &str, effect: Effect) -> Policy {
    configured(app, integration).unwrap_or(if effect == Effect::Destructive { Policy::Confirm } else { Policy::Allow })
}

/// The policy `curl_session` runs under for `integration` (arbitrary writes: confirm by default).
pub fn for_curl_session(app: &App, integration: &str) -> Policy {
    configured(app, integration).unwrap_or(Policy::Confirm)
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
        "configured": configured(app, integration).map(Policy::as_str),
        "destructive_default": "confirm",
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
