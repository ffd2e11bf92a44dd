//! The vault built-ins: store a named secret (preferably typed by the user on a local page), list
//! names, delete. No tool ever returns a value; the vault_* tools take names literally (their own
//! arguments are never scanned for refs, because a vault tool's job is the ref's name itself).

use std::sync::Arc;

use plugins::api::{ArgProblem, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::registry::BuiltinSpec;
use crate::secrets::Secret;

pub const SET_SECRET: BuiltinSpec = builtin! {
    name: "vault_set_secret",
    namespace: "vault",
    effect: Write,
    results: Public,
    audience: plugins::flow::Audience::Own,
    args: SetSecret,
    run: set_secret,
    keywords: ["api key", "password", "store secret", "save token", "credential", "keychain", "remember key"],
    description: "Store or replace a named secret (API key, password, token) in the OS keychain for use as {{vault:NAME}} in tool arguments sent to its allowed hosts. Without value it returns a local page where the user types the value, keeping it out of the chat (preferred). No tool ever returns the value.",
};

pub const LIST_SECRETS: BuiltinSpec = builtin! {
    name: "vault_list_secrets",
    namespace: "vault",
    effect: Read,
    results: Public,
    args: ListSecrets,
    run: list_secrets,
    keywords: ["stored secrets", "api keys", "passwords", "which keys", "credentials"],
    description: "List stored vault secrets by name with their description, allowed hosts and when they were created and last used; never their values.",
};

pub const DELETE_SECRET: BuiltinSpec = builtin! {
    name: "vault_delete_secret",
    namespace: "vault",
    effect: Destructive,
    results: Public,
    audience: plugins::flow::Audience::Own,
    args: DeleteSecret,
    run: delete_secret,
    keywords: ["remove secret", "forget key", "delete password", "revoke api key"],
    description: "Delete a named vault secret from the keychain (and its metadata).",
};

fn check_name(name: &str) -> Result<(), ToolError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::InvalidArguments {
            message: format!("'{name}' is not a usable secret name"),
            problems: vec![ArgProblem {
                path: "/name".into(),
                problem: "use 1-64 letters, digits, '_', '-' or '.'".into(),
            }],
        })
    }
}

fn check_hosts(hosts: &[String]) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        let h = h.trim().to_ascii_lowercase();
        // `mcp:<server>`: the pseudo-host of an upstream MCP server (src/upstream).
        if let Some(server) = h.strip_prefix("mcp:")
            && crate::upstream::config::valid_name(server)
        {
            out.push(h);
            continue;
        }
        // A bare host (https on 443), or an origin with its scheme and port (issue 13 item 7).
        let ok = match h.split_once("://") {
            None => {
                let body = h.strip_prefix("*.").unwrap_or(&h);
                !body.is_empty()
                    && body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.'))
                    && !body.starts_with('.')
            }
            Some((scheme, _)) => matches!(scheme, "http" | "https") && crate::secrets::check_allowed_host(&h).is_ok(),
        };
        if !ok {
            return Err(ToolError::InvalidArguments {
                message: format!("'{h}' is not a host name or origin"),
                problems: vec![ArgProblem {
                    path: format!("/allowed_hosts/{i}"),
                    problem: "expected a host like api.example.com or *.example.com (https on port 443), an origin like http://127.0.0.1:8080 (no path), or mcp:<server> for an upstream MCP server".into(),
                }],
            });
        }
        out.push(h);
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SetSecret {
    /// The secret's name, used as {{vault:NAME}}: letters, digits, '_', '-', '.'.
    name: String,
    /// The value. Leave it out so the user types it on a local page instead of into the chat.
    value: Option<String>,
    /// What the secret is for (shown to the user and in vault_list_secrets).
    description: Option<String>,
    /// Where the secret may be sent, matched on scheme, host and port: "api.example.com" means https on port 443, "*.example.com" its subdomains (https, 443); write an origin for anything else, e.g. "http://127.0.0.1:8080" or "https://api.example.com:8443". Without any, it cannot be used.
    #[serde(default)]
    allowed_hosts: Vec<String>,
}

async fn set_secret(app: Arc<App>, args: SetSecret) -> Result<Value, ToolError> {
    check_name(&args.name)?;
    let hosts = check_hosts(&args.allowed_hosts)?;
    let warning = hosts
        .is_empty()
        .then_some("No allowed_hosts: the secret cannot be sent anywhere until it is set again with allowed_hosts.");
    match args.value {
        Some(value) => {
            if value.is_empty() {
                return Err(ToolError::invalid("value is empty; leave it out to let the user type it on a local page"));
            }
            app.vault
                .set(&args.name, Secret::new(value), args.description, hosts.clone())
                .await
                .map_err(|f| ToolError::Internal(f.message))?;
            Ok(plugins::api::compact(json!({
                "name": args.name,
                "stored": true,
                "allowed_hosts": hosts,
                "usage": format!("{{{{vault:{}}}}}", args.name),
                "warning": warning,
            })))
        }
        None => {
            let listener =
                crate::connect::ensure_listener(&app).await.map_err(|e| ToolError::Internal(e.to_string()))?;
            let id = crate::connect::begin_secret(&app, &args.name, args.description, hosts.clone());
            let url = format!("{}/vault/{id}", listener.base());
            let opened = crate::connect::open_in_browser(&app, &url);
            Ok(plugins::api::compact(json!({
                "name": args.name,
                "stored": false,
                "url": url,
                "opened_in_browser": opened,
                "allowed_hosts": hosts,
                "message": format!("Ask the user to open {url} and type the value there; it is then usable as {{{{vault:{}}}}}.", args.name),
                "warning": warning,
            })))
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListSecrets {
    /// Only names starting with this.
    prefix: Option<String>,
}

async fn list_secrets(app: Arc<App>, args: ListSecrets) -> Result<Value, ToolError> {
    let rows = app.storage.list_vault_meta(args.prefix).await.map_err(|e| ToolError::Internal(e.to_string()))?;
    let secrets: Vec<Value> = rows
        .into_iter()
        .map(|m| {
            plugins::api::compact(json!({
                "name": m.name,
                "description": m.description,
                "allowed_hosts": m.allowed_hosts,
                "created_at": m.created_at,
                "last_used_at": m.last_used_at,
            }))
        })
        .collect();
    Ok(json!({ "secrets": secrets }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteSecret {
    /// The secret's name.
    name: String,
    /// Delete even when something still refers to it.
    #[serde(default)]
    force: bool,
}

async fn delete_secret(app: Arc<App>, args: DeleteSecret) -> Result<Value, ToolError> {
    check_name(&args.name)?;
    let users: Vec<String> = app
        .registry()
        .custom()
        .apps
        .iter()
        .filter(|a| a.def.as_ref().is_some_and(|d| crate::custom::vault_refs(d).contains(&args.name)))
        .map(|a| a.name.clone())
        .collect();
    if !users.is_empty() && !args.force {
        return Err(ToolError::InvalidArguments {
            message: format!(
                "vault secret '{}' is used by the custom app(s) {}; delete or change them first, or pass force: true",
                args.name,
                users.join(", ")
            ),
            problems: vec![ArgProblem { path: "/force".into(), problem: "still referenced by a custom app".into() }],
        });
    }
    let existed = app.vault.delete(&args.name).await.map_err(|f| ToolError::Internal(f.message))?;
    if !existed {
        return Err(ToolError::Upstream {
            status: 404,
            message: format!("there is no vault secret named '{}'", args.name),
            retry_after: None,
        });
    }
    Ok(json!({ "name": args.name, "deleted": true }))
}
