//! A plugin's or server's error as the agent-facing failure of one execution.

use plugins::api::{ArgProblem, ToolError};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolFailure};
use crate::registry::ToolEntry;

/// The failure for arguments that break the tool's schema (or, with `provider`, that the
/// provider refused with its own words).
pub(crate) fn invalid_arguments(
    entry: &ToolEntry,
    given: &Value,
    mut problems: Vec<ArgProblem>,
    provider: Option<&str>,
) -> ToolFailure {
    let provided: Vec<&String> = given.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    let message = match provider {
        None => format!("{} problem(s) with the arguments for {}; fix them all and retry", problems.len(), entry.name),
        Some(said) => {
            let message = format!("{} problem(s) with the arguments for {} ({said})", problems.len(), entry.name);
            if problems.is_empty() {
                problems.push(ArgProblem { path: String::new(), problem: said.to_string() });
            }
            message
        }
    };
    ToolFailure::new(ErrorCode::InvalidArguments, message)
        .with("problems", serde_json::to_value(&problems).unwrap_or_default())
        .with("expected_parameters", crate::validate::expected_parameters(entry.schema()))
        .with("provided", json!(provided))
}

fn is_rate_limit_text(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("rate limit")
        || m.contains("ratelimit")
        || m.contains("too many requests")
        || m.contains("quota exceeded")
}

/// Maps a plugin's error to the agent-facing error object; a rejected credential of a named
/// account says to reconnect that account, not the default.
pub(crate) fn failure_from(e: ToolError, entry: &ToolEntry, args: &Value, account: Option<&str>) -> ToolFailure {
    let e = match entry.upstream() {
        Some(tool) => match crate::upstream::failure(e, entry.name, tool) {
            Ok(f) => return f,
            Err(e) => e,
        },
        None => e,
    };
    // A named account other than the default is the one to reconnect.
    let account = account.filter(|a| *a != crate::auth::DEFAULT_ACCOUNT);
    match e {
        ToolError::InvalidArguments { message, problems } => invalid_arguments(entry, args, problems, Some(&message)),
        // GitHub and Google also signal rate limits with 403; the provider's words tell them apart
        // from a credential problem.
        ToolError::Upstream { status: status @ (429 | 403), message, retry_after }
            if status == 429 || is_rate_limit_text(&message) =>
        {
            let mut f = ToolFailure::new(
                ErrorCode::RateLimited,
                format!("{} is rate-limiting requests: {message}", entry.integration),
            )
            .with("status", status);
            if let Some(s) = retry_after {
                f = f.with("retry_after_seconds", s);
            }
            f
        }
        ToolError::Upstream { status, message, .. } if status == 401 || status == 403 => {
            let hint = if entry.plugin().is_some_and(crate::registry::is_public) {
                "the service refused the request".to_string()
            } else {
                let which = account.map(|a| format!(" and account '{a}'")).unwrap_or_default();
                format!(
                    "the credential for {} was rejected or lacks permission; call connect with integration '{}'{which} to reconnect",
                    entry.integration, entry.integration
                )
            };
            let mut f = ToolFailure::new(ErrorCode::UpstreamError, format!("{hint}: {message}"))
                .with("status", status)
                .with("integration", entry.integration);
            if let Some(a) = account {
                f = f.with("account", a);
            }
            f
        }
        ToolError::Upstream { status, message, .. } => {
            ToolFailure::new(ErrorCode::UpstreamError, format!("{} answered {status}: {message}", entry.integration))
                .with("status", status)
        }
        ToolError::Network(m) => {
            ToolFailure::new(ErrorCode::NetworkError, format!("could not reach {}: {m}", entry.integration))
        }
        ToolError::Timeout { seconds } => {
            ToolFailure::new(ErrorCode::Timeout, format!("{} did not finish within {seconds}s", entry.name))
        }
        ToolError::Internal(m) => ToolFailure::new(ErrorCode::InternalError, m),
    }
}
