//! What the user's views and the agent are told about the configured servers: a summary of each
//! (this process's view, else what SQLite recorded) and the notes about tools waiting for review.

use std::collections::HashMap;

use serde_json::Value;

pub use config::ServerConfig;

use crate::app::App;

use super::*;

/// One configured server as the portal shows it.
#[derive(Debug, Clone)]
pub struct Summary {
    pub name: String,
    /// `stdio`, `http` or `invalid`.
    pub transport: &'static str,
    /// The command line or URL (never env or header values).
    pub target: String,
    /// `running`, `idle`, `failing`, `needs sign-in`, `not listed yet` or `invalid`.
    pub state: &'static str,
    /// Tools in its last listing, if it was ever listed.
    pub tools: Option<usize>,
    pub last_error: Option<String>,
}

/// Every configured server with its state, tool count and last error: this process's view where it
/// has one (a running server), else what SQLite recorded (the last listing and error of any
/// process). Starts nothing.
pub fn summaries(app: &App) -> Vec<Summary> {
    let configs = app.upstream().configs();
    if configs.is_empty() {
        return Vec::new();
    }
    let cached: HashMap<String, crate::storage::UpstreamListing> =
        app.storage.upstream_listings().unwrap_or_default().into_iter().map(|l| (l.server.clone(), l)).collect();
    configs
        .iter()
        .map(|(name, config)| {
            let status = app.upstream().status(name);
            let row = cached.get(name);
            let tools = row
                .filter(|r| r.last_error.is_none() || r.tools != "[]")
                .and_then(|r| serde_json::from_str::<Value>(&r.tools).ok())
                .and_then(|v| v.as_array().map(Vec::len));
            let last_error = match config {
                Err(e) => Some(e.to_string()),
                Ok(_) => status.last_error.clone().or_else(|| row.and_then(|r| r.last_error.clone())),
            }
            .map(|e| plugins::api::truncate_chars(&app.exposed.text(&e), 300).0);
            let (transport, target) = match config {
                Ok(c @ ServerConfig::Stdio { .. }) => ("stdio", c.describe()),
                Ok(c @ ServerConfig::Http { .. }) => ("http", c.describe()),
                Err(_) => ("invalid", String::new()),
            };
            let state = match config {
                Err(_) => "invalid",
                Ok(_) if status.running => "running",
                Ok(_) if last_error.as_deref().is_some_and(|e| e.contains(NEEDS_CONSENT)) => "needs sign-in",
                Ok(_) if last_error.is_some() => "failing",
                Ok(_) if tools.is_none() => "not listed yet",
                Ok(_) => "idle",
            };
            Summary { name: name.clone(), transport, target, state, tools, last_error }
        })
        .collect()
}

/// What the agent is told about a server with `n` tools waiting for the user's review.
pub fn waiting_note(server: &str, n: usize) -> String {
    format!(
        "upstream server '{server}' has {n} new or changed tool(s) waiting for the user's review; they are not offered until the user accepts them (workbench servers review {server}, or the portal)"
    )
}

/// [`waiting_note`] for every server with changes waiting (starts nothing).
pub fn waiting_notes(app: &App) -> Vec<String> {
    if app.upstream().configs().is_empty() {
        return Vec::new();
    }
    app.upstream().pending(&app.storage).iter().map(|(s, c)| waiting_note(s, c.len())).collect()
}
