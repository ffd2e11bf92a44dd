//! The custom-app built-ins: define (or replace), list and delete declarative HTTP apps whose
//! operations become tools. Definitions are checked whole before they are stored.

use std::sync::Arc;

use plugins::api::{ArgProblem, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::custom::{self, AppDef, ReservedNames};
use crate::registry::BuiltinSpec;

pub const CREATE_APP: BuiltinSpec = builtin! {
    name: "custom_create_app",
    namespace: "custom",
    effect: Write,
    results: Public,
    audience: plugins::flow::Audience::Outside(
        "defines an origin: every operation of the app sends its requests there, and its base URL, paths and headers go with them",
    ),
    args: AppDef,
    run: create_app,
    keywords: ["custom api", "define app", "add integration", "own service", "declarative http", "new tool", "unsupported service", "internal api"],
    description: "Define or replace a custom app: a declarative HTTP API (name, base_url, auth none/bearer/header/basic/query whose secret parts are {{vault:NAME}} refs, headers) with operations; each operation (tool_name <app>_<verb>_<object>, method, path with {param} placeholders, description, JSON Schema params, optional body template, mutating) becomes a searchable tool run by execute_tools. Every problem in a definition is reported at once. Ask the user before defining one.",
};

pub const LIST_APPS: BuiltinSpec = builtin! {
    name: "custom_list_apps",
    namespace: "custom",
    effect: Read,
    results: Public,
    args: ListApps,
    run: list_apps,
    keywords: ["custom apps", "my apis", "user defined tools", "declarative http"],
    description: "List the custom apps the user defined, with their base URL, auth type (never secrets) and generated tools; give name for one app's full definition.",
};

pub const DELETE_APP: BuiltinSpec = builtin! {
    name: "custom_delete_app",
    namespace: "custom",
    effect: Destructive,
    results: Public,
    audience: plugins::flow::Audience::Own,
    args: DeleteApp,
    run: delete_app,
    keywords: ["remove custom app", "delete api", "drop tools"],
    description: "Delete a custom app and its tools (the vault secrets it used stay).",
};

async fn create_app(app: Arc<App>, def: AppDef) -> Result<Value, ToolError> {
    // Whether an operation writes follows from its method; a definition cannot declare a write a read.
    let lowered: Vec<ArgProblem> = def
        .operations
        .iter()
        .enumerate()
        .filter(|(_, op)| op.mutating == Some(false) && !op.method.trim().eq_ignore_ascii_case("GET"))
        .map(|(i, op)| ArgProblem {
            path: format!("/operations/{i}/mutating"),
            problem: format!(
                "a {} operation always counts as a change for the user's safety policy; only GET is a read, so leave mutating out",
                op.method.trim().to_ascii_uppercase()
            ),
        })
        .collect();
    if !lowered.is_empty() {
        return Err(ToolError::InvalidArguments {
            message: format!("the custom app definition has {} problem(s); nothing was stored", lowered.len()),
            problems: lowered,
        });
    }
    let operations = {
        let registry = app.registry();
        let taken = ReservedNames {
            namespaces: &|n: &str| registry.reserved_namespace(n),
            tools: &|n: &str| registry.compiled_tool(n),
        };
        custom::check(&def, &taken).map_err(|problems| ToolError::InvalidArguments {
            message: format!("the custom app definition has {} problem(s); nothing was stored", problems.len()),
            problems,
        })?
    };
    // The base URL passes the address guard now (and again on every request: the config may
    // change): a private or loopback origin only if the user listed it in private_hosts.
    check_reachable(&app, &operations[0].app.base_url).await?;
    // Secrets the definition refers to must exist, or the first call would fail: say so now.
    let mut missing = Vec::new();
    for name in custom::vault_refs(&def) {
        match app.storage.vault_meta(name.clone()).await {
            Ok(Some(meta)) if !crate::secrets::origin_allowed(&meta.allowed_hosts, &operations[0].app.origin) => {
                missing.push(format!(
                    "vault secret '{name}' does not allow {} (allowed: {}); set it again with that origin in allowed_hosts",
                    operations[0].app.origin,
                    if meta.allowed_hosts.is_empty() { "none".into() } else { meta.allowed_hosts.join(", ") }
                ))
            }
            Ok(Some(_)) => {}
            Ok(None) => missing.push(format!(
                "vault secret '{name}' does not exist yet; store it with vault_set_secret (allowed_hosts: [\"{}\"])",
                allowed_entry(&operations[0].app.origin)
            )),
            Err(e) => return Err(ToolError::Internal(e.to_string())),
        }
    }
    let definition = serde_json::to_string(&def).map_err(|e| ToolError::Internal(e.to_string()))?;
    let replaced = app
        .storage
        .put_custom_app(def.name.clone(), definition)
        .await
        .map_err(|e| ToolError::Internal(e.to_string()))?;
    app.reload_registry();
    let tools: Vec<Value> = operations
        .iter()
        .map(|op| json!({ "name": op.tool_name, "method": op.method.as_str(), "path": op.path, "mutating": op.effect.mutating() }))
        .collect();
    Ok(plugins::api::compact(json!({
        "name": def.name,
        "created": !replaced,
        "replaced": replaced,
        "base_url": operations[0].app.base_url,
        "tools": tools,
        "warnings": if missing.is_empty() { Value::Null } else { json!(missing) },
        "next_step": "find the tools with search_tools or run them with execute_tools",
    })))
}

/// How to write an origin in allowed_hosts: a bare host for https on 443, else the origin.
fn allowed_entry(origin: &str) -> String {
    match origin.strip_prefix("https://").and_then(|o| o.strip_suffix(":443")) {
        Some(host) => host.to_string(),
        None => origin.to_string(),
    }
}

/// Refuses a base URL the address guard refuses; a host name is looked up once, and refused when
/// it resolves to a private address (a lookup that fails is left to the first request).
async fn check_reachable(app: &App, base_url: &str) -> Result<(), ToolError> {
    let refused = |why: String| ToolError::InvalidArguments {
        message: format!("base_url is refused: {why}; nothing was stored"),
        problems: vec![ArgProblem { path: "/base_url".into(), problem: why }],
    };
    let url = reqwest::Url::parse(base_url).map_err(|e| refused(e.to_string()))?;
    let ports = app.listener_ports();
    let guard = crate::net::Guard {
        reachable: &[],
        private: &app.settings.private_hosts,
        user_origin: false,
        listener_ports: &ports,
        who: "a custom app",
    };
    let reach = crate::net::check_parsed(&url, None, &guard).map_err(|r| refused(r.0))?;
    if reach == crate::net::Reach::Public
        && let Some(host) = url.host_str().filter(|h| !h.starts_with('[') && h.parse::<std::net::Ipv4Addr>().is_err())
        && let Err(e) = crate::net::GuardedResolver::lookup(host).await
        && let Some(r) = crate::net::refusal_in(e.as_ref())
    {
        return Err(refused(format!("{r}; {}", crate::net::PRIVATE_HOSTS_HELP)));
    }
    Ok(())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListApps {
    /// Only this app, with its full definition.
    name: Option<String>,
}

async fn list_apps(app: Arc<App>, args: ListApps) -> Result<Value, ToolError> {
    let registry = app.registry();
    let loaded = registry.custom();
    if let Some(name) = &args.name
        && !loaded.apps.iter().any(|a| &a.name == name)
    {
        return Err(ToolError::Upstream {
            status: 404,
            message: format!("there is no custom app named '{name}'"),
            retry_after: None,
        });
    }
    let apps: Vec<Value> = loaded
        .apps
        .iter()
        .filter(|a| args.name.as_ref().is_none_or(|n| n == &a.name))
        .map(|a| {
            let def = a.def.as_ref();
            let mut v = json!({
                "name": a.name,
                "description": def.and_then(|d| d.description.clone()),
                "base_url": def.map(|d| d.base_url.clone()),
                "auth": def.map(|d| d.auth.as_ref().map(|x| json!(x.kind)).unwrap_or(json!("none"))),
                "vault_secrets": def.map(custom::vault_refs),
                "tools": a.operations.iter().map(|op| json!({
                    "name": op.tool_name, "method": op.method.as_str(), "path": op.path, "mutating": op.effect.mutating(),
                })).collect::<Vec<_>>(),
                "created_at": a.created_at,
                "updated_at": a.updated_at,
            });
            if !a.problems.is_empty() {
                v["problems"] = json!(a.problems);
                v["note"] = json!("this app no longer checks, so its tools are hidden; fix it with custom_create_app");
            }
            if args.name.is_some() {
                // Definitions hold vault refs only, never secret values.
                v["definition"] = serde_json::to_value(def).unwrap_or_default();
            }
            plugins::api::compact(v)
        })
        .collect();
    Ok(json!({ "apps": apps }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteApp {
    /// The custom app's name.
    name: String,
}

async fn delete_app(app: Arc<App>, args: DeleteApp) -> Result<Value, ToolError> {
    let deleted =
        app.storage.delete_custom_app(args.name.clone()).await.map_err(|e| ToolError::Internal(e.to_string()))?;
    if !deleted {
        return Err(ToolError::InvalidArguments {
            message: format!("there is no custom app named '{}'", args.name),
            problems: vec![ArgProblem { path: "/name".into(), problem: "see custom_list_apps for the names".into() }],
        });
    }
    app.reload_registry();
    Ok(json!({ "name": args.name, "deleted": true }))
}
