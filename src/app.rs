//! The application state every meta-tool works on: settings, the registry, storage, secrets and
//! pending connections. Cheap to build (no I/O), so the server answers `initialize` at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use plugins::api::Integration;

use crate::auth::{self, Connection};
use crate::builtins::ssrf;
use crate::config::{Settings, StoreKind};
use crate::registry::Registry;
use crate::secrets::Secret;
use crate::secrets::file::{FileStore, Passphrase};
use crate::secrets::keychain::KeychainStore;
use crate::secrets::{MemoryStore, SecretStore, StoreError, Vault};
use crate::storage::Storage;

/// How a pending connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingState {
    Waiting,
    Connected,
}

/// An OAuth authorization in flight: the single-use `state` and the PKCE verifier.
#[derive(Debug, Clone)]
pub struct OAuthInFlight {
    pub state: String,
    pub verifier: String,
    pub redirect_uri: String,
}

/// A connect flow the user has not finished yet.
#[derive(Debug, Clone)]
pub struct PendingConnect {
    pub integration: String,
    /// The account this flow stores into (`default` unless the agent or the user named one).
    pub account_name: String,
    pub created: Instant,
    pub expires: Instant,
    pub state: PendingState,
    /// One-time tokens of forms handed out for this connection; each POST must spend one.
    pub form_tokens: Vec<String>,
    pub oauth: Option<OAuthInFlight>,
    /// The account the connection ended up as (for the success page and whoami).
    pub account: Option<String>,
}

impl PendingConnect {
    pub fn new(integration: &str, account_name: &str, ttl: std::time::Duration) -> Self {
        let now = Instant::now();
        PendingConnect {
            integration: integration.to_string(),
            account_name: account_name.to_string(),
            created: now,
            expires: now + ttl,
            state: PendingState::Waiting,
            form_tokens: Vec::new(),
            oauth: None,
            account: None,
        }
    }
}

/// A vault secret waiting for the user to type its value on the local page.
#[derive(Debug, Clone)]
pub struct PendingSecret {
    pub name: String,
    pub description: Option<String>,
    pub allowed_hosts: Vec<String>,
    pub expires: Instant,
    pub form_tokens: Vec<String>,
    pub done: bool,
}

/// One account of an integration, as `list_integrations` and `status` show it (no secret).
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub name: String,
    /// The identity workbench verified (login, email), when known.
    pub identity: Option<String>,
    pub default: bool,
    pub source: auth::Source,
}

pub struct App {
    pub settings: Settings,
    /// The current catalogue snapshot; read it with [`App::registry`].
    registry: RwLock<Arc<Registry>>,
    pub storage: Arc<Storage>,
    pub secrets: Arc<dyn SecretStore>,
    pub vault: Vault,
    pub pending: Mutex<HashMap<String, PendingConnect>>,
    pub pending_secrets: Mutex<HashMap<String, PendingSecret>>,
    /// Unlock pages for a locked secret store: id -> (expiry, unspent form tokens).
    pub unlock_pages: Mutex<HashMap<String, (Instant, Vec<String>)>>,
    /// Live checks of cookie/session integrations for list_integrations: integration -> (when, ok).
    pub live_checks: Mutex<HashMap<String, (Instant, bool)>>,
    /// The loopback listener, started on first need.
    pub listener: tokio::sync::OnceCell<crate::connect::ListenerInfo>,
    /// One lock per integration so concurrent callers wait for the same token refresh.
    pub refresh_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Login sessions of `Inject::Session` integrations, in memory only.
    pub sessions: crate::engine::session::Sessions,
    /// Per-integration request budgets (the rate-limit governor).
    pub governor: crate::engine::governor::Governor,
    /// Every secret value this process resolved or attached; whatever leaves the server is
    /// scrubbed of them (`engine::scrub::Exposed`).
    pub exposed: Arc<crate::engine::scrub::Exposed>,
    /// The curl proxy's signing key, read from (or created in) the secret store on first use.
    pub proxy_key: tokio::sync::OnceCell<Arc<Secret<Vec<u8>>>>,
    /// Calls held by the safety policy waiting for the user's click on a local page.
    pub approvals: crate::approval::Approvals,
    /// The engine's HTTP clients, one per address policy, each built on first use.
    http_public: OnceLock<reqwest::Client>,
    http_private: OnceLock<reqwest::Client>,
    /// The user's other MCP servers: their cached tool lists and running connections
    /// (`src/upstream`; nothing starts before a server's first call).
    pub upstream: crate::upstream::Upstreams,
}

impl App {
    /// The app as the binary runs it: the shipped catalogue and the configured secret store.
    pub fn new(settings: Settings) -> Arc<App> {
        let store: Arc<dyn SecretStore> = match settings.secret_store {
            StoreKind::Keychain => Arc::new(KeychainStore::default()),
            StoreKind::File => {
                let pass = match (
                    settings.credential_env.get("WORKBENCH_VAULT_PASSPHRASE"),
                    settings.credential_env.get("WORKBENCH_VAULT_PASSPHRASE_COMMAND"),
                ) {
                    (Some(p), _) => Passphrase::Value(Secret::new(p.clone())),
                    (None, Some(c)) => Passphrase::Command(c.clone()),
                    (None, None) => Passphrase::Missing,
                };
                Arc::new(FileStore::new(settings.home.join("secrets.enc"), pass))
            }
            StoreKind::Memory => Arc::new(MemoryStore::default()),
        };
        Self::with_parts(settings, Registry::standard(), store)
    }

    pub fn with_parts(settings: Settings, registry: Registry, secrets: Arc<dyn SecretStore>) -> Arc<App> {
        let storage = Storage::new(settings.database_path());
        let vault = Vault::new(secrets.clone(), storage.clone());
        let upstream =
            crate::upstream::Upstreams::new(settings.mcp_servers.clone()).watching(settings.home.join("config.json"));
        Arc::new(App {
            upstream,
            settings,
            registry: RwLock::new(Arc::new(registry)),
            storage,
            secrets,
            vault,
            pending: Mutex::new(HashMap::new()),
            pending_secrets: Mutex::new(HashMap::new()),
            unlock_pages: Mutex::new(HashMap::new()),
            live_checks: Mutex::new(HashMap::new()),
            listener: tokio::sync::OnceCell::new(),
            refresh_locks: Mutex::new(HashMap::new()),
            sessions: Default::default(),
            governor: Default::default(),
            exposed: Default::default(),
            proxy_key: tokio::sync::OnceCell::new(),
            approvals: Default::default(),
            http_public: OnceLock::new(),
            http_private: OnceLock::new(),
        })
    }

    /// The catalogue as it stands now: the compiled tools plus the custom apps in SQLite. A change
    /// made by any process (the generation counter moved) builds a new snapshot here.
    pub fn registry(&self) -> Arc<Registry> {
        let current = self.registry.read().unwrap_or_else(|p| p.into_inner()).clone();
        if self.upstream.catalogue(&self.storage).generation != current.upstream().generation {
            return self.reload_registry();
        }
        match self.storage.custom_generation() {
            Ok(generation) if generation == current.custom().generation => current,
            Ok(_) => self.reload_registry(),
            Err(e) => {
                tracing::debug!(error = %e, "custom apps could not be read; using the last catalogue");
                current
            }
        }
    }

    /// Reads the custom apps again and builds a new catalogue snapshot.
    pub fn reload_registry(&self) -> Arc<Registry> {
        let mut base = self.registry.read().unwrap_or_else(|p| p.into_inner()).clone();
        // Upstream servers' tools come before custom apps, so a custom app cannot take their names.
        let upstream = self.upstream.catalogue(&self.storage);
        if upstream.generation != base.upstream().generation {
            base = Arc::new(base.with_upstream(upstream));
        }
        let taken = crate::custom::Taken {
            namespaces: &|n: &str| base.reserved_namespace(n),
            tools: &|n: &str| base.compiled_tool(n),
        };
        match crate::custom::load(&self.storage, &taken) {
            Ok(loaded) => {
                let fresh = Arc::new(base.with_custom(loaded));
                *self.registry.write().unwrap_or_else(|p| p.into_inner()) = fresh.clone();
                fresh
            }
            Err(e) => {
                tracing::warn!(error = %e, "custom apps could not be loaded");
                *self.registry.write().unwrap_or_else(|p| p.into_inner()) = base.clone();
                base
            }
        }
    }

    /// Whether the user can run `integration`'s tools now. Public integrations always can; the rest
    /// need a credential (any account) in the environment or a stored connection (SQLite says
    /// so; the secret store is not touched here).
    pub fn is_connected(&self, integration: &str) -> bool {
        // The snapshot as the caller's own `registry()` left it: asked once per integration (search
        // ranking, list_integrations), so no second generation read per integration.
        let registry = self.registry.read().unwrap_or_else(|p| p.into_inner()).clone();
        match registry.integration(integration) {
            Some(i) => crate::registry::is_public(i) || !self.accounts(i).is_empty(),
            None => {
                registry.is_builtin_namespace(integration)
                    || registry.is_custom_app(integration)
                    || registry.is_upstream_server(integration)
            }
        }
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.settings.credential_env.get(name).cloned()
    }

    /// An integration's accounts: those the environment names (its credential complete there)
    /// and those stored, the environment's winning for a name in both. The default is the one
    /// the user chose (stored), else `default`, else the first by name. No secret store access.
    pub fn accounts(&self, integration: &'static Integration) -> Vec<Account> {
        let mut out: Vec<Account> = Vec::new();
        let stored = self.storage.accounts_of(integration.name).unwrap_or_default();
        let mut env_names = vec![auth::DEFAULT_ACCOUNT.to_string()];
        env_names.extend(auth::env_account_names(integration.name, self.settings.credential_env.keys()));
        for name in env_names {
            if auth::from_env_as(integration, &name, &|v| self.env_var(v)).is_some() {
                let identity = stored.iter().find(|m| m.account == name).and_then(|m| m.account_label.clone());
                out.push(Account { name, identity, default: false, source: auth::Source::Environment });
            }
        }
        for m in &stored {
            if !out.iter().any(|a| a.name == m.account) {
                out.push(Account {
                    name: m.account.clone(),
                    identity: m.account_label.clone(),
                    default: false,
                    source: auth::Source::Store,
                });
            }
        }
        let chosen = stored
            .iter()
            .find(|m| m.is_default)
            .map(|m| m.account.clone())
            .or_else(|| out.iter().find(|a| a.name == auth::DEFAULT_ACCOUNT).map(|a| a.name.clone()))
            .or_else(|| out.iter().map(|a| a.name.clone()).min());
        for a in &mut out {
            a.default = Some(&a.name) == chosen.as_ref();
        }
        out.sort_by(|a, b| b.default.cmp(&a.default).then(a.name.cmp(&b.name)));
        out
    }

    /// The account a call uses: the one it named (which must exist: an unknown name is an error
    /// listing the accounts, never a silent fall-back to the default), else the default one.
    /// `Ok(None)`: the integration has no account and the call named none.
    pub fn resolve_account(
        &self,
        integration: &'static Integration,
        requested: Option<&str>,
    ) -> Result<Option<String>, crate::error::ToolFailure> {
        let accounts = self.accounts(integration);
        match requested {
            None => Ok(accounts.iter().find(|a| a.default).map(|a| a.name.clone())),
            Some(name) if accounts.iter().any(|a| a.name == name) => Ok(Some(name.to_string())),
            Some(name) => Err(unknown_account(integration, name, &accounts)),
        }
    }

    /// The credential for an integration's default account: the environment wins over a stored
    /// connection.
    pub fn connection(&self, integration: &'static Integration) -> Result<Option<Connection>, StoreError> {
        match self.resolve_account(integration, None).ok().flatten() {
            Some(account) => self.connection_of(integration, &account),
            None => Ok(None),
        }
    }

    /// The credential of one account: the environment's wins over a stored one of that name.
    pub fn connection_of(
        &self,
        integration: &'static Integration,
        account: &str,
    ) -> Result<Option<Connection>, StoreError> {
        let found = match auth::from_env_as(integration, account, &|name| self.env_var(name)) {
            Some(c) => Some(c),
            None => {
                let meta = self
                    .storage
                    .account_meta(integration.name, account)
                    .map_err(|e| StoreError::Unavailable { store: "sqlite", reason: e.to_string() })?;
                match meta {
                    Some(meta) => auth::from_store(integration, self.secrets.as_ref(), &meta)?,
                    None => None,
                }
            }
        };
        // A credential read in this process is never shown to the agent, whichever call reads it.
        if let Some(c) = &found {
            for secret in c.secret_values() {
                self.exposed.remember(&secret);
            }
        }
        Ok(found)
    }

    /// workbench's own listener ports (the running one, and the configured one): no request of
    /// workbench may reach them.
    pub fn listener_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.listener.get().map(|l| l.port).into_iter().collect();
        if self.settings.listener_port != 0 && !ports.contains(&self.settings.listener_port) {
            ports.push(self.settings.listener_port);
        }
        ports
    }

    /// The guarded client for one request to `url`, or why it may not be sent. `user_origin`:
    /// the URL's origin is the user's own configuration (an integration's host override, a host
    /// the user typed on the connect page); otherwise only public addresses and the user's
    /// `private_hosts` are reachable. Same-origin redirects only; built on first use (TLS set-up
    /// stays off the start-up path).
    pub fn client_for(&self, url: &reqwest::Url, user_origin: bool) -> Result<&reqwest::Client, ssrf::Refusal> {
        let ports = self.listener_ports();
        let guard = ssrf::Guard {
            reachable: &[],
            private: &self.settings.private_hosts,
            user_origin,
            listener_ports: &ports,
            who: "workbench",
        };
        Ok(match ssrf::check_parsed(url, None, &guard)? {
            ssrf::Reach::Public => self.http_public.get_or_init(|| ssrf::engine_client(ssrf::Reach::Public)),
            ssrf::Reach::Private => self.http_private.get_or_init(|| ssrf::engine_client(ssrf::Reach::Private)),
        })
    }
}

/// The error for a call naming an account the integration does not have: it lists the accounts
/// (names only) and how the user adds one.
pub fn unknown_account(integration: &Integration, name: &str, accounts: &[Account]) -> crate::error::ToolFailure {
    let names: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    let listed =
        if names.is_empty() { "it has none yet".to_string() } else { format!("its accounts: {}", names.join(", ")) };
    crate::error::ToolFailure::new(
        crate::error::ErrorCode::NotConnected,
        format!(
            "{} has no account named '{name}' ({listed}); name one of those, or leave account out for the default; to add '{name}', call connect with integration '{}' and account '{name}' and have the user finish in the browser",
            integration.display_name, integration.name
        ),
    )
    .with("integration", integration.name)
    .with("account", name)
    .with("accounts", names)
}
