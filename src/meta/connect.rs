//! connect (and its deprecated alias get_auth_url): begin connecting an integration.
//!
//! Minting the link contacts no provider: the provider's consent URL (with its state and PKCE
//! verifier) is built only when the user opens the link. For an integration that is already
//! connected the answer says so (with the account); the page replaces it only on the user's
//! explicit "Replace". An `account` names which of the integration's accounts the page connects
//! (a new name adds one; the agent cannot store anything itself: only the user's page does).

use std::sync::Arc;

use plugins::api::{AuthKind, Integration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde_json::Value;

use super::{Annotations, Failure, Hint, MetaTool, schema_of};
use crate::app::App;
use crate::engine::Hooks;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Integration name from list_integrations or a search result, e.g. "github".
    pub integration: String,
    /// Account to connect or reconnect, e.g. "work" (lowercase letters, digits, '-'); omit for the default. A new name adds an account.
    #[serde(default)]
    pub account: Option<String>,
}

/// The schema of the deprecated alias get_auth_url: the same fields and rules as [`Args`] (its
/// calls are parsed into `Args`), told in fewer words, since its description points at connect.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only its schema is used
pub struct AliasArgs {
    /// Integration name, e.g. "github".
    integration: String,
    /// Account name, e.g. "work"; omit for the default.
    #[serde(default)]
    account: Option<String>,
}

impl Args {
    pub fn new(integration: &str, account: Option<&str>) -> Args {
        Args { integration: integration.to_string(), account: account.map(str::to_string) }
    }
}

/// What connect did.
#[derive(Debug, Clone, PartialEq)]
pub enum Connection {
    /// Nothing to connect: a custom app, a built-in, a public integration, or an account whose
    /// credential comes from the environment. Its tools work now.
    Ready(Ready),
    /// A connect page for the user was minted (see [`Link::existing`] for a connected account).
    Link(Link),
    /// An upstream MCP server's own sign-in (OAuth, `mcp:<server>`): the consent URL to open.
    Consent(crate::upstream::Consent),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ready {
    pub integration: String,
    /// For an environment credential: the account it is.
    pub account_name: Option<String>,
    /// `environment` for an environment credential.
    pub source: Option<&'static str>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub connection_id: String,
    pub url: String,
    pub integration: &'static str,
    /// The account is connected already, as this identity: the page replaces it only on the
    /// user's explicit "Replace"; the stored connection keeps working until then.
    pub existing: Option<String>,
    pub account_name: String,
    pub auth_type: &'static str,
    pub expires_in_seconds: u64,
    pub opened_in_browser: bool,
    pub message: String,
}

/// The wire form: one object whose fields each case fills in (`status` says CONNECTED).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wire<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connection_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    integration: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    account_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_in_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    opened_in_browser: Option<bool>,
    message: &'a str,
}

impl Serialize for Connection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            Connection::Consent(c) => return c.serialize(s),
            Connection::Ready(r) => Wire {
                status: Some("CONNECTED"),
                connection_id: None,
                url: None,
                integration: &r.integration,
                account: None,
                account_name: r.account_name.as_deref(),
                source: r.source,
                auth_type: None,
                expires_in_seconds: None,
                opened_in_browser: None,
                message: &r.message,
            },
            Connection::Link(l) => Wire {
                status: l.existing.is_some().then_some("CONNECTED"),
                connection_id: Some(&l.connection_id),
                url: Some(&l.url),
                integration: l.integration,
                account: l.existing.as_deref(),
                account_name: Some(&l.account_name),
                source: None,
                auth_type: Some(l.auth_type),
                expires_in_seconds: Some(l.expires_in_seconds),
                opened_in_browser: Some(l.opened_in_browser),
                message: &l.message,
            },
        };
        wire.serialize(s)
    }
}

fn ready(integration: &str, message: String) -> Connection {
    Connection::Ready(Ready { integration: integration.to_string(), account_name: None, source: None, message })
}

pub async fn run(app: &Arc<App>, args: Args) -> Result<Connection, Failure> {
    let name = args.integration.trim();
    // An upstream MCP server's OAuth (src/upstream/oauth.rs).
    if let Some(server) = name.strip_prefix("mcp:") {
        return crate::upstream::connect(app, server)
            .await
            .map(Connection::Consent)
            .map_err(|e| Failure::plain(e.to_string()));
    }
    let registry = app.registry();
    let Some(integration) = registry.integration(name) else {
        if registry.is_custom_app(name) {
            return Ok(ready(
                name,
                format!(
                    "{name} is a custom app; its credentials are vault secrets (vault_set_secret), so there is nothing to connect."
                ),
            ));
        }
        if registry.is_builtin_namespace(name) {
            return Ok(ready(name, format!("{name} is built into workbench; its tools need no connection.")));
        }
        let names: Vec<String> = registry.integrations().iter().map(|i| i.name.to_string()).collect();
        let mut failure = Failure::plain(format!("Unknown integration: {name}"));
        if let Some(near) = crate::validate::nearest(name, names.iter()) {
            failure = failure.hint(Hint::Nearest(near.to_string()));
        }
        return Err(failure);
    };
    if integration.auth.kind == AuthKind::None {
        return Ok(ready(
            integration.name,
            format!("{} needs no connection; its tools work as they are.", integration.display_name),
        ));
    }
    // The account to connect: the one named (a new name adds an account once the user finishes
    // the page), else the default one (or `default` for a first connection).
    let requested = args.account.as_deref().map(str::trim).filter(|a| !a.is_empty());
    if let Some(problem) = requested.and_then(crate::auth::account_problem) {
        return Err(Failure::plain(format!("account: {problem}; nothing was started")));
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
        let message = format!(
            "{}'s account '{account}' is connected through environment variables (like {example}); change them there to use another account, or connect another account name.",
            integration.display_name,
        );
        return Ok(Connection::Ready(Ready {
            integration: integration.name.to_string(),
            account_name: Some(account),
            source: Some("environment"),
            message,
        }));
    }
    if app.secrets.locked() {
        return Err(match crate::connect::ensure_listener(app).await {
            Ok(listener) => {
                let url = format!("{}/unlock/{}", listener.base(), crate::connect::begin_unlock(app));
                crate::connect::open_in_browser(app, &url);
                Failure::plain(format!(
                    "The encrypted secret store is locked. Ask the user to open {url} and type its passphrase, then call connect again."
                ))
                .hint(Hint::UnlockUrl(url))
            }
            Err(e) => Failure::plain(format!("Cannot connect {}: {e}", integration.display_name)),
        });
    }
    probe_store(app, integration).await.map_err(|e| Failure::plain(e.to_string()))?;
    let listener = crate::connect::ensure_listener(app)
        .await
        .map_err(|e| Failure::plain(format!("Cannot connect {}: {e}", integration.display_name)))?;
    let id = crate::connect::begin(app, integration.name, &account);
    let url = format!("{}/connect/{id}", listener.base());
    let opened = crate::connect::open_in_browser(app, &url);
    let opened_note = if opened { " (it was just opened in their browser)" } else { "" };
    // Already connected: the page shows the account and replaces it only if the user ticks
    // "Replace"; the stored connection keeps working until then.
    let existing = app
        .storage
        .account_meta(integration.name, &account)
        .ok()
        .flatten()
        .map(|meta| meta.account_label.unwrap_or_else(|| "an account".into()));
    let message = match &existing {
        Some(label) => format!(
            "{} is already connected as {label}; its tools work now. Only if the user wants another account: ask them to open {url}{opened_note} and confirm replacing it there, then call wait_for_connection with this connectionId.",
            integration.display_name,
        ),
        None => format!(
            "Ask the user to open {url} on this computer{opened_note} and finish connecting {} there; then call wait_for_connection with this connectionId.",
            integration.display_name
        ),
    };
    Ok(Connection::Link(Link {
        connection_id: id,
        url,
        integration: integration.name,
        existing,
        account_name: account,
        auth_type: integration.auth.kind.as_str(),
        expires_in_seconds: app.settings.connect_ttl.as_secs(),
        opened_in_browser: opened,
        message,
    }))
}

/// Probes the secret store now (off the async threads, with its own deadline), so the user is not
/// sent to a page whose result could not be stored. The error says what to do, for an agent or a
/// page alike.
pub async fn probe_store(app: &Arc<App>, integration: &Integration) -> Result<(), StoreProbeError> {
    let store = app.secrets.clone();
    let name = integration.display_name;
    match tokio::task::spawn_blocking(move || store.get("probe:connect")).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(source)) => Err(StoreProbeError::Store { name, source }),
        Err(source) => Err(StoreProbeError::Check { name, source }),
    }
}

/// Why [`probe_store`] refused: the store answered with an error, or the check itself failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreProbeError {
    #[error("Cannot connect {name}: {source}. {help}", help = crate::secrets::STORE_HELP)]
    Store { name: &'static str, source: crate::secrets::StoreError },
    #[error("Cannot connect {name}: the secret store check failed: {source}")]
    Check { name: &'static str, source: tokio::task::JoinError },
}

const DESCRIPTION: &str = "Begin connecting an integration. Returns a connectionId and a URL for the user to open: a page workbench serves on this computer (127.0.0.1), where the user enters credentials (never in the chat); the link works for no one else. Call wait_for_connection afterward.";

/// The meta-tool.
pub struct Connect;

impl MetaTool for Connect {
    const NAME: &'static str = "connect";
    const TITLE: &'static str = "Connect an integration";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const ANNOTATIONS: Annotations = Annotations::LOCAL;
    const OFFERS_LINK: bool = true;
    type Args = Args;
    type Answer = Connection;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, _: &Hooks) -> Result<Connection, Failure> {
        run(app, args).await
    }
}

/// The meta-tool (the deprecated alias of [`Connect`]: same arguments, same answer).
pub struct GetAuthUrl;

impl MetaTool for GetAuthUrl {
    const NAME: &'static str = "get_auth_url";
    const TITLE: &'static str = "Get auth URL (deprecated)";
    const DESCRIPTION: &'static str =
        "Deprecated alias of connect() (same arguments, same answer). Get a URL to connect an integration.";
    const ANNOTATIONS: Annotations = Annotations::LOCAL;
    const OFFERS_LINK: bool = true;
    type Args = Args;
    type Answer = Connection;
    fn schema() -> Value {
        schema_of!(AliasArgs)
    }
    async fn run(app: &Arc<App>, args: Args, _: &Hooks) -> Result<Connection, Failure> {
        run(app, args).await
    }
}
