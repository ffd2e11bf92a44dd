//! connection_delete_credentials: disconnect an integration: revoke the token at the provider where
//! it has a revocation endpoint, then erase the local credential and its metadata.

use std::sync::Arc;

use plugins::api::{AuthKind, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::auth::Source;
use crate::error::ErrorCode;
use crate::registry::BuiltinSpec;
use crate::storage::AuditEntry;

pub const DELETE_CREDENTIALS: BuiltinSpec = builtin! {
    name: "connection_delete_credentials",
    namespace: "connection",
    effect: Destructive,
    results: Public,
    audience: plugins::flow::Audience::Own,
    args: DeleteCredentials,
    run: delete_credentials,
    keywords: ["disconnect", "log out", "sign out", "revoke access", "remove account", "forget token", "unlink"],
    description: "Disconnect an integration: revoke its token at the provider where possible (Google, Slack), then erase the stored credential. list_integrations shows it disconnected afterwards.",
};

// What to disconnect (the built-in's arguments; a doc comment here would enter its schema).
#[serde_inline_default]
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteCredentials {
    /// The integration to disconnect, e.g. "github".
    pub integration: String,
    /// Also revoke the token at the provider, where it has an endpoint for that.
    #[serde_inline_default(true)]
    pub revoke_remote: bool,
    /// Which account to disconnect, e.g. "work"; omit for the default account.
    #[serde(default)]
    pub account: Option<String>,
}

/// What a disconnect did.
#[derive(Debug, Clone, PartialEq)]
pub enum Disconnected {
    /// The account was not connected: nothing to erase.
    NotConnected { integration: &'static str },
    /// The stored credential of `account` is erased (`erased` false: it was gone already);
    /// `revoked` says whether the provider confirmed the token's revocation (`None`: not tried).
    Erased { integration: &'static str, account: String, erased: bool, revoked: Option<bool> },
}

/// The built-in's result: the tool's JSON.
async fn delete_credentials(app: Arc<App>, args: DeleteCredentials) -> Result<Value, ToolError> {
    Ok(match disconnect(&app, args).await? {
        Disconnected::NotConnected { integration } => {
            json!({ "integration": integration, "deleted": false, "message": "it was not connected" })
        }
        Disconnected::Erased { integration, account, erased, revoked } => {
            json!({ "integration": integration, "account": account, "deleted": erased, "revoked_remote": revoked })
        }
    })
}

/// The user's own disconnect (the portal's button, `workbench disconnect`): no model is involved,
/// so no safety policy asks; the action is audited like the built-in's run.
pub async fn disconnect_by_user(app: &Arc<App>, args: DeleteCredentials) -> Result<Disconnected, ToolError> {
    let started = std::time::Instant::now();
    let mut shown = serde_json::Map::new();
    shown.insert("integration".into(), json!(args.integration));
    shown.insert("revoke_remote".into(), json!(args.revoke_remote));
    if let Some(a) = &args.account {
        shown.insert("account".into(), json!(a));
    }
    let integration = app.registry().integration(&args.integration).map(|i| i.name).unwrap_or_default();
    let result = disconnect(app, args).await;
    let (ok, error_code, error) = match &result {
        Ok(_) => (true, None, None),
        Err(e) => {
            let code = match e {
                ToolError::InvalidArguments { .. } => ErrorCode::InvalidArguments,
                ToolError::Network(_) => ErrorCode::NetworkError,
                ToolError::Timeout { .. } => ErrorCode::Timeout,
                ToolError::Upstream { .. } => ErrorCode::UpstreamError,
                ToolError::Internal(_) => ErrorCode::InternalError,
            };
            (false, Some(code.as_str().to_string()), Some(plugins::api::truncate_chars(&message(e), 500).0))
        }
    };
    let row = AuditEntry {
        tool: DELETE_CREDENTIALS.name.to_string(),
        integration: integration.to_string(),
        args: Value::Object(shown).to_string(),
        mutating: true,
        ok,
        error_code,
        error,
        duration_ms: started.elapsed().as_millis() as u64,
        account: None,
    };
    if let Err(e) = app.storage.record_audit(row).await {
        tracing::warn!(error = %e, "could not write the audit row of a disconnect");
    }
    result
}

/// A disconnect's failure in words.
pub fn message(e: &ToolError) -> String {
    match e {
        ToolError::InvalidArguments { message, .. } | ToolError::Internal(message) => message.clone(),
        other => other.to_string(),
    }
}

/// Disconnects one account of an integration: revokes the token at the provider where it has an
/// endpoint for that (and `revoke_remote` asks), then erases the stored credential.
pub async fn disconnect(app: &Arc<App>, args: DeleteCredentials) -> Result<Disconnected, ToolError> {
    let Some(integration) = app.registry().integration(&args.integration) else {
        return Err(ToolError::invalid(format!("unknown integration '{}'", args.integration)));
    };
    if integration.auth.kind == AuthKind::None {
        return Err(ToolError::invalid(format!("{} has no credentials to delete", integration.display_name)));
    }
    if let Some(problem) = args.account.as_deref().and_then(crate::auth::account_problem) {
        return Err(ToolError::invalid(format!("account: {problem}")));
    }
    let Some(account) =
        app.resolve_account(integration, args.account.as_deref()).map_err(|f| ToolError::invalid(f.message))?
    else {
        return Ok(Disconnected::NotConnected { integration: integration.name });
    };
    let connection = app
        .connection_of(integration, &account)
        .map_err(|e| ToolError::Internal(format!("{e}. {}", crate::secrets::STORE_HELP)))?;
    let Some(connection) = connection else {
        return Ok(Disconnected::NotConnected { integration: integration.name });
    };
    if connection.source == Source::Environment {
        return Err(ToolError::invalid(format!(
            "{}'s account '{account}' is connected through environment variables; unset them to disconnect ({} and the other fields)",
            integration.display_name,
            crate::auth::env_name_as(integration.name, &account, "token")
        )));
    }
    let mut revoked = None;
    if args.revoke_remote {
        // Through the one credentialed send path, like every call of the integration. A
        // revocation the provider never answered does not keep the credential: it is erased.
        revoked = match crate::send::revoke(app, integration, Arc::new(connection)).await {
            Ok(answer) => answer,
            Err(e @ (ToolError::InvalidArguments { .. } | ToolError::Internal(_))) => return Err(e),
            Err(e) => {
                let error = app.exposed.text(&e.to_string());
                tracing::warn!(integration = integration.name, %error, "revocation failed");
                Some(false)
            }
        };
    }
    let erased = crate::auth::erase(app, integration.name, &account).map_err(|e| ToolError::Internal(e.to_string()))?;
    Ok(Disconnected::Erased { integration: integration.name, account, erased, revoked })
}
