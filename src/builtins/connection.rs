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
    if args.revoke_remote
        && let Some(revoke_url) = integration.auth.oauth.as_ref().and_then(|o| o.revoke_url)
        && let Some(token) = connection.fields.get("token")
    {
        let url = app.settings.host_url(integration.name, "revoke_url", revoke_url);
        let user_origin = !app.settings.host_url(integration.name, "revoke_url", "").is_empty();
        // Through the address guard like every request workbench sends.
        let post = reqwest::Url::parse(&url)
            .map_err(|e| ToolError::Internal(format!("revoke URL {url}: {e}")))
            .and_then(|u| app.request(reqwest::Method::POST, u, user_origin))?;
        let result = if url.contains("slack.com") || integration.name == "slack" {
            post.bearer_auth(token.expose()).send().await
        } else {
            post.form(&[("token", token.expose().as_str())]).send().await
        };
        revoked = json!(matches!(&result, Ok(r) if r.status().is_success()));
        if let Err(e) = &result {
            tracing::warn!(integration = integration.name, error = %crate::scrub::redact_tokens(&e.to_string()).unwrap_or_else(|| e.to_string()), "revocation failed");
        }
    }
    let erased =
        crate::auth::erase(&app, integration.name, &account).map_err(|e| ToolError::Internal(e.to_string()))?;
    Ok(json!({ "integration": integration.name, "account": account, "deleted": erased, "revoked_remote": revoked }))
}
