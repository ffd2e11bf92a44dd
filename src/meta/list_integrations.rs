//! list_integrations: every integration with its connection state. `connected` is true for public
//! integrations, "a credential exists" for token and OAuth ones, and a live login check for
//! session (cookie) ones, cached briefly so listing stays cheap. Connected integrations list their
//! accounts `[{name, identity, default}]` (names and verified identities only, from SQLite and the
//! environment's variable names; no secret store access).

use std::sync::Arc;
use std::time::{Duration, Instant};

use plugins::api::{AuthKind, Inject, Integration};
use serde::Serialize;

use serde_json::Value;

use super::{Annotations, Failure, MetaTool, NoArgs, schema_of};
use crate::app::App;
use crate::engine::Hooks;

/// How long a live session check stays valid.
const LIVE_CHECK_TTL: Duration = Duration::from_secs(60);

/// Every integration, custom app and upstream server, in that order.
#[derive(Debug, Clone, Serialize)]
pub struct Integrations {
    pub integrations: Vec<Listed>,
}

/// One row of the list.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub name: String,
    /// The integration's version, `custom` for a custom app, `mcp` for an upstream server.
    pub version: &'static str,
    pub connected: bool,
    /// The accounts a call can name (`execute_tools` `account`); only integrations that have any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<AccountRow>,
    /// Always `true` when present: a custom app.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamRow>,
}

/// One account of an integration: its name and verified identity, never a secret.
#[derive(Debug, Clone, Serialize)]
pub struct AccountRow {
    pub name: String,
    pub identity: Option<String>,
    pub default: bool,
}

/// An upstream MCP server's transport, state in this process, listed tool count and last error.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamRow {
    pub transport: &'static str,
    pub state: &'static str,
    pub tools: Option<usize>,
    pub last_error: Option<String>,
    /// New or changed tools waiting for the user's review (not offered until accepted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes_waiting: Option<String>,
}

pub async fn run(app: &Arc<App>) -> Result<Integrations, Failure> {
    let mut integrations = Vec::new();
    let registry = app.registry();
    for i in registry.integrations() {
        let connected =
            if i.auth.kind == AuthKind::Cookie { live_check(app, i).await } else { app.is_connected(i.name) };
        let accounts = if crate::registry::is_public(i) { Vec::new() } else { app.accounts(i) };
        integrations.push(Listed {
            name: i.name.to_string(),
            version: i.version,
            connected,
            accounts: accounts
                .into_iter()
                .map(|a| AccountRow { name: a.name, identity: a.identity, default: a.default })
                .collect(),
            custom: None,
            upstream: None,
        });
    }
    // Custom apps the user defined: their credentials are vault refs, so there is nothing to
    // connect; an app whose stored definition no longer checks has no tools and is not usable.
    for a in &registry.custom().apps {
        integrations.push(Listed {
            name: a.name.clone(),
            version: "custom",
            connected: !a.operations.is_empty(),
            accounts: Vec::new(),
            custom: Some(true),
            upstream: None,
        });
    }
    integrations.extend(upstream_rows(app));
    Ok(Integrations { integrations })
}

/// The user's upstream MCP servers (src/upstream): nothing to connect, so `connected` says whether
/// the entry is usable; `upstream` gives its transport, this process's state, its listed tool
/// count and its last error. Listing starts nothing.
fn upstream_rows(app: &Arc<App>) -> Vec<Listed> {
    use crate::upstream::ServerConfig;
    let upstreams = app.upstream();
    let configs = upstreams.configs();
    if configs.is_empty() {
        return Vec::new();
    }
    let catalogue = upstreams.catalogue(&app.storage);
    let pending = upstreams.pending(&app.storage);
    let registry = app.registry();
    configs
        .iter()
        .map(|(name, config)| {
            let status = upstreams.status(name);
            let tools = catalogue.servers.iter().find(|(s, _)| s == name).map(|(_, t)| t.len());
            let (transport, state) = match config {
                Err(_) => ("invalid", "invalid"),
                Ok(c) => (
                    if matches!(c, ServerConfig::Http { .. }) { "http" } else { "stdio" },
                    if status.running {
                        "running"
                    } else if status.failures > 0 {
                        "failing"
                    } else {
                        "idle"
                    },
                ),
            };
            let last_error = match config {
                Err(e) => Some(e.to_string()),
                Ok(_) => status.last_error.map(|e| plugins::api::truncate_chars(&e, 300).0),
            };
            Listed {
                name: name.to_string(),
                version: "mcp",
                connected: config.is_ok() && registry.is_upstream_server(name),
                accounts: Vec::new(),
                custom: None,
                upstream: Some(UpstreamRow {
                    transport,
                    state,
                    tools,
                    last_error,
                    changes_waiting: pending.get(name).map(|c| crate::upstream::waiting_note(name, c.len())),
                }),
            }
        })
        .collect()
}

/// list_integrations' state: recent live checks of session integrations: name -> (when, ok).
#[derive(Default)]
pub struct LiveChecks(std::sync::Mutex<std::collections::HashMap<String, (Instant, bool)>>);

async fn live_check(app: &Arc<App>, integration: &'static Integration) -> bool {
    if !app.is_connected(integration.name) {
        return false;
    }
    if let Some((at, ok)) =
        app.state.live_checks.0.lock().unwrap_or_else(|p| p.into_inner()).get(integration.name).copied()
        && at.elapsed() < LIVE_CHECK_TTL
    {
        return ok;
    }
    let ok = match (integration.auth.inject, app.connection(integration)) {
        (Inject::Session(spec), Ok(Some(connection))) => {
            let deadline = Instant::now() + Duration::from_secs(10);
            crate::send::session::current(app, integration, spec, &connection, deadline, None).await.is_ok()
        }
        (_, Ok(Some(_))) => true,
        _ => false,
    };
    app.state
        .live_checks
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(integration.name.to_string(), (Instant::now(), ok));
    ok
}

/// The meta-tool.
pub struct ListIntegrations;

impl MetaTool for ListIntegrations {
    const NAME: &'static str = "list_integrations";
    const TITLE: &'static str = "List integrations";
    const DESCRIPTION: &'static str = "List all available integrations and connection status";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Args = NoArgs;
    type Answer = Integrations;
    fn schema() -> Value {
        schema_of!(NoArgs)
    }
    async fn run(app: &Arc<App>, _: NoArgs, _: &Hooks) -> Result<Integrations, Failure> {
        run(app).await
    }
}
