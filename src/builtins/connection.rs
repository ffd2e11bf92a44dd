//! connection_delete_credentials: disconnect an integration: revoke the token at the provider where
//! it has a revocation endpoint, then erase the local credential and its metadata.

use std::sync::Arc;

use plugins::api::{AuthKind, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::auth::Source;
use crate::registry::BuiltinSpec;

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

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteCredentials {
    /// The integration to disconnect, e.g. "github".
    integration: String,
    /// Also revoke the token at the provider, where it has an endpoint for that.
    #[serde(default = "yes")]
    revoke_remote: bool,
    /// Which account to disconnect, e.g. "work"; omit for the default account.
    #[serde(default)]
    account: Option<String>,
}

async fn delete_credentials(app: Arc<App>, args: DeleteCredentials) -> Result<Value, ToolError> {
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
        return Ok(json!({ "integration": integration.name, "deleted": false, "message": "it was not connected" }));
    };
    let connection = app
        .connection_of(integration, &account)
        .map_err(|e| ToolError::Internal(format!("{e}. {}", crate::secrets::STORE_HELP)))?;
    let Some(connection) = connection else {
        return Ok(json!({ "integration": integration.name, "deleted": false, "message": "it was not connected" }));
    };
    if connection.source == Source::Environment {
        return Err(ToolError::invalid(format!(
            "{}'s account '{account}' is connected through environment variables; unset them to disconnect ({} and the other fields)",
            integration.display_name,
            crate::auth::env_name_as(integration.name, &account, "token")
        )));
    }
    let mut revoked = Value::Null;
    if args.revoke_remote {
        // Through the one credentialed send path, like every call of the integration. A
        // revocation the provider never answered does not keep the credential: it is erased.
        revoked = match crate::send::revoke(&app, integration, Arc::new(connection)).await {
            Ok(None) => Value::Null,
            Ok(Some(ok)) => json!(ok),
            Err(e @ (ToolError::InvalidArguments { .. } | ToolError::Internal(_))) => return Err(e),
            Err(e) => {
                let error = app.exposed.text(&e.to_string());
                tracing::warn!(integration = integration.name, %error, "revocation failed");
                json!(false)
            }
        };
    }
    let erased =
        crate::auth::erase(&app, integration.name, &account).map_err(|e| ToolError::Internal(e.to_string()))?;
    Ok(json!({ "integration": integration.name, "account": account, "deleted": erased, "revoked_remote": revoked }))
}
