//! `connect` with integration `mcp:<server>`: the consent of a Streamable HTTP server that uses
//! OAuth.

use std::sync::Arc;

use crate::app::App;

use super::*;

/// Why `connect` with `mcp:<server>` could not start the consent.
#[derive(Debug, thiserror::Error)]
pub enum ConsentError {
    /// `reason` is the [`oauth::OAuthError`]'s text with every known secret scrubbed.
    #[error("cannot start signing in to '{server}': {reason}")]
    Begin { server: String, reason: String },
}

/// `connect` with integration `mcp:<server>`: the consent URL of a Streamable HTTP server that
/// uses OAuth ([`oauth::begin`]), opened in the user's browser when it can be.
/// What `connect` with `mcp:<server>` answers: the server's consent URL to open.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Consent {
    /// Always `PENDING`: the user signs in on the server's page, then the agent retries.
    pub status: &'static str,
    pub integration: String,
    pub url: String,
    pub opened_in_browser: bool,
    pub message: String,
}

pub async fn connect(app: &Arc<App>, server: &str) -> Result<Consent, ConsentError> {
    match oauth::begin(app, server).await {
        Ok(url) => {
            let opened = crate::connect::open_in_browser(app, &url);
            let message = format!(
                "Ask the user to open {url} on this computer{} and sign in to the MCP server '{server}'; then retry the call.",
                if opened { " (it was just opened in their browser)" } else { "" },
            );
            Ok(Consent {
                status: "PENDING",
                integration: oauth::store_key(server),
                url,
                opened_in_browser: opened,
                message,
            })
        }
        Err(e) => Err(ConsentError::Begin { server: server.to_string(), reason: app.exposed.text(&e.to_string()) }),
    }
}
