//! connect (and its deprecated alias get_auth_url): begin connecting an integration.
//!
//! Minting the link contacts no provider: the provider's consent URL (with its state and PKCE
//! verifier) is built only when the user opens the link. For an integration that is already
//! connected the answer says so (with the account); the page replaces it only on the user's
//! explicit "Replace". An `account` names which of the integration's accounts the page connects
//! (a new name adds one; the agent cannot store anything itself: only the user's page does).

use std::sync::Arc;

use plugins::api::AuthKind;
use serde_json::{Value, json};

use super::{ok, plain_error, str_arg};
use crate::app::App;
use crate::engine::Outcome;

pub async fn run(app: &Arc<App>, args: Value) -> Outcome {
    let name = str_arg(&args, "integration").trim();
    // An upstream MCP server's OAuth (src/upstream/oauth.rs).
    if let Some(server) = name.strip_prefix("mcp:") {
        return crate::upstream::connect(app, server).await;
    }
    let registry = app.registry();
    let Some(integration) = registry.integration(name) else {
        if registry.is_custom_app(name) {
            return ok(json!({
                "status": "CONNECTED",
                "integration": name,
                "message": format!("{name} is a custom app; its credentials are vault secrets (vault_set_secret), so there is nothing to connect."),
            }));
        }
        if registry.is_builtin_namespace(name) {
            return ok(json!({
                "status": "CONNECTED",
                "integration": name,
                "message": format!("{name} is built into workbench; its tools need no connection."),
            }));
        }
        let names: Vec<String> = registry.integrations().iter().map(|i| i.name.to_string()).collect();
        let mut body = json!({ "error": format!("Unknown integration: {name}") });
        if let Some(near) = crate::validate::nearest(name, names.iter()) {
            body["did_you_mean"] = json!(near);
        }
        return Outcome { body, is_error: true };
    };
    if integration.auth.kind == AuthKind::None {
        return ok(json!({
            "status": "CONNECTED",
            "integration": integration.name,
            "message": format!("{} needs no connection; its tools work as they are.", integration.display_name),
        }));
    }
    // The account to connect: the one named (a new name adds an account once the user finishes
    // the page), else the default one (or `default` for a first connection).
    let requested = args.get("account").and_then(Value::as_str).map(str::trim).filter(|a| !a.is_empty());
    if let Some(problem) = requested.and_then(crate::auth::account_problem) {
        return plain_error(format!("account: {problem}; nothing was started"));
    }
    let account = match requested {
        Some(a) => a.to_string(),
        None => app
            .resolve_account(integration, None)
            .ok()
            .flatten()
            .unwrap_or_else(|| crate::auth::DEFAULT_ACCOUNT.to_string()),
    };
    if crate::auth::from_env_as(integration, &account, &|v| app.settings.credential_env.get(v).cloned()).is_some() {
        let example = crate::auth::env_name_as(integration.name, &account, "token");
        return ok(json!({
            "status": "CONNECTED",
            "integration": integration.name,
            "accountName": account,
            "source": "environment",
            "message": format!(
                "{}'s account '{account}' is connected through environment variables (like {example}); change them there to use another account, or connect another account name.",
                integration.display_name,
            ),
        }));
    }
    // Probe the secret store now (off the async threads, with its own deadline), so the user is
    // not sent to a page whose result could not be stored.
    if app.secrets.locked() {
        return match crate::connect::ensure_listener(app).await {
            Ok(listener) => {
                let url = format!("{}/unlock/{}", listener.base(), crate::connect::begin_unlock(app));
                crate::connect::open_in_browser(app, &url);
                Outcome {
                    body: json!({
                        "error": format!("The encrypted secret store is locked. Ask the user to open {url} and type its passphrase, then call connect again."),
                        "unlock_url": url,
                    }),
                    is_error: true,
                }
            }
            Err(e) => plain_error(format!("Cannot connect {}: {e}", integration.display_name)),
        };
    }
    let store = app.secrets.clone();
    let probe = tokio::task::spawn_blocking(move || store.get("probe:connect")).await;
    match probe {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            return plain_error(format!(
                "Cannot connect {}: {e}. {}",
                integration.display_name,
                crate::secrets::STORE_HELP
            ));
        }
        Err(e) => {
            return plain_error(format!(
                "Cannot connect {}: the secret store check failed: {e}",
                integration.display_name
            ));
        }
    }
    let listener = match crate::connect::ensure_listener(app).await {
        Ok(l) => l,
        Err(e) => return plain_error(format!("Cannot connect {}: {e}", integration.display_name)),
    };
    let id = crate::connect::begin(app, integration.name, &account);
    let url = format!("{}/connect/{id}", listener.base());
    let opened = crate::connect::open_in_browser(app, &url);
    // Already connected: the page shows the account and replaces it only if the user ticks
    // "Replace"; the stored connection keeps working until then.
    let existing = app.storage.account_meta(integration.name, &account).ok().flatten();
    if let Some(meta) = existing {
        let account_name = account;
        let account = meta.account_label.unwrap_or_else(|| "an account".into());
        return ok(json!({
            "status": "CONNECTED",
            "connectionId": id,
            "url": url,
            "integration": integration.name,
            "account": account,
            "accountName": account_name,
            "authType": integration.auth.kind.as_str(),
            "expiresInSeconds": app.settings.connect_ttl.as_secs(),
            "openedInBrowser": opened,
            "message": format!(
                "{} is already connected as {account}; its tools work now. Only if the user wants another account: ask them to open {url}{} and confirm replacing it there, then call wait_for_connection with this connectionId.",
                integration.display_name,
                if opened { " (it was just opened in their browser)" } else { "" },
            ),
        }));
    }
    ok(json!({
        "connectionId": id,
        "url": url,
        "integration": integration.name,
        "accountName": account,
        "authType": integration.auth.kind.as_str(),
        "expiresInSeconds": app.settings.connect_ttl.as_secs(),
        "openedInBrowser": opened,
        "message": format!(
            "Ask the user to open {url} on this computer{} and finish connecting {} there; then call wait_for_connection with this connectionId.",
            if opened { " (it was just opened in their browser)" } else { "" },
            integration.display_name
        ),
    }))
}
