//! The approval pages: the question (integration, tool, what will be sent, Approve and Deny) and
//! the answers. Server-rendered HTML in the connect pages' layout; every interpolated value escaped.

use super::ApprovalRequest;
use crate::listener::pages::{escape, layout_with_footer};

/// The approval pages' footer: nothing is typed here, and only this click approves.
pub const FOOTER: &str = "workbench runs on this computer. Only your click on this page approves the call; nothing your agent sends can approve it.";

fn layout(title: &str, body: &str) -> String {
    layout_with_footer(title, body, FOOTER)
}

/// Longest shown arguments (the page is for reading, the binding is the full digest).
const MAX_SHOWN: usize = 4000;

fn pretty(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let (text, cut) = plugins::api::truncate_chars(&text, MAX_SHOWN);
    if cut { format!("{text}\n… (shortened)") } else { text.to_string() }
}

/// The question for one held call.
pub fn question(
    request: &ApprovalRequest,
    target: Option<&str>,
    action: &str,
    form_token: &str,
    left_secs: u64,
) -> String {
    let target = target.map(|t| format!("<label>Sent to</label><code>{}</code>", escape(t))).unwrap_or_default();
    let form = |decision: &str, label: &str, style: &str| {
        format!(
            "<form method=\"post\" action=\"{action}\" style=\"display:inline-block;margin-right:12px\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\"><input type=\"hidden\" name=\"decision\" value=\"{decision}\"><button type=\"submit\" id=\"{decision}\"{style}>{label}</button></form>",
            action = escape(action),
            token = escape(form_token),
        )
    };
    layout(
        &format!("Approve {}", request.action),
        &format!(
            "<h1>Approve <code>{tool}</code>?</h1><p class=\"sub\">Your agent asked workbench to run <code>{tool}</code> on <b>{integration}</b>. Your safety policy holds it until you decide. It runs once, only if the agent repeats exactly this call within {minutes} minutes.</p>\
             <label>What it does</label><pre style=\"white-space:pre-wrap;background:#f1f3f6;padding:10px;border-radius:6px\">{summary}</pre>{target}\
             <label>Arguments (secrets hidden)</label><pre id=\"arguments\" style=\"white-space:pre-wrap;background:#f1f3f6;padding:10px;border-radius:6px\">{args}</pre>\
             {approve}{deny}",
            tool = escape(&request.action),
            integration = escape(&request.integration),
            minutes = left_secs.div_ceil(60).max(1),
            summary = escape(&request.summary),
            args = escape(&pretty(&request.shown)),
            approve = form("approve", "Approve", ""),
            deny = form("deny", "Deny", " style=\"background:#8a1f1f\""),
        ),
    )
}

/// After the click.
pub fn decided(approved: bool, request: &ApprovalRequest) -> String {
    if approved {
        layout(
            "Approved",
            &format!(
                "<h1>Approved</h1><div class=\"ok\" id=\"result\">{} on {} is approved for one run. Tell your agent to run it again now.</div><p>You can close this tab.</p>",
                escape(&request.action),
                escape(&request.integration)
            ),
        )
    } else {
        layout(
            "Denied",
            &format!(
                "<h1>Denied</h1><div class=\"err\" id=\"result\">{} on {} was not run, and this link approves nothing any more.</div><p>You can close this tab.</p>",
                escape(&request.action),
                escape(&request.integration)
            ),
        )
    }
}

/// A refused or unreadable form.
pub fn failure(title: &str, message: &str) -> String {
    layout(title, &format!("<h1>{}</h1><div class=\"err\">{}</div>", escape(title), escape(message)))
}

/// An unknown, used or expired link.
pub fn gone(message: &str) -> String {
    layout(
        "Approval link not valid",
        &format!("<h1>Approval link not valid</h1><div class=\"err\" id=\"result\">{}</div>", escape(message)),
    )
}
