//! The handle every module works on: the shared parts (settings, storage, the secret store, the
//! vault, the set of exposed secrets, the guarded HTTP clients) and [`State`], one named field per
//! module that keeps state of its own. Cheap to build (no I/O), so the server answers
//! `initialize` at once.
//!
//! `App`'s code names no module above it; its [`State`] is the one place whose *types* come from
//! above (connect's pending flows, auth's refresh locks and sessions, the send path's governor,
//! the registry's snapshot, ...): each module keeps its state type, with its own small API, in
//! its own files, and the composition root, [`crate::start`], builds every field (`State::new`
//! and the constructors `App::new` and `App::with_parts` live there). Modules may add methods to
//! `App` in their own files (`impl App` in `auth`, `registry`, ...).

use std::sync::{Arc, OnceLock};

use plugins::api::ToolError;

use crate::config::{Settings, StoreKind};
use crate::net;
use crate::scrub::Exposed;
use crate::secrets::Secret;
use crate::secrets::file::{FileStore, Passphrase};
use crate::secrets::keychain::KeychainStore;
use crate::secrets::{MemoryStore, SecretStore, Vault};
use crate::storage::Storage;

/// Each module's own state, one named field per module (ARCHITECTURE.md, "Layers"), built by the
/// composition root ([`crate::start`]) with no I/O: what needs I/O (the proxy's signing key, the
/// upstream servers' cache) is read on first use by the module that owns it.
pub struct State {
    /// The compiled integrations of the catalogue (auth looks an integration up by name).
    pub integrations: Vec<&'static plugins::api::Integration>,
    /// The catalogue as it stands (compiled tools, upstream servers' tools, custom apps).
    pub registry: Arc<crate::registry::Snapshot>,
    /// The user's other MCP servers: configuration, cached catalogue, running clients.
    pub upstreams: Arc<crate::upstream::Upstreams>,
    /// Login sessions of session (cookie) integrations, per account.
    pub sessions: crate::auth::sessions::Sessions,
    /// One OAuth refresh at a time per account.
    pub refresh_locks: crate::auth::oauth::RefreshLocks,
    /// The outbound-data guard's session state.
    pub flow: Arc<crate::engine::flow::FlowState>,
    /// Other modules' answers to the OAuth callback (an upstream server's consent).
    pub callback_hooks: crate::connect::CallbackHooks,
    /// Pending connect, vault-secret and unlock pages.
    pub connect_flows: Arc<crate::connect::Flows>,
    /// The loopback listener: its routes, and where it runs once started.
    pub listener: crate::listener::Listener,
    /// list_integrations' recent live checks of session integrations.
    pub live_checks: crate::meta::list_integrations::LiveChecks,
    /// The curl proxy's token-signing key (read from the secret store on first use).
    pub signing_key: crate::proxy::SigningKey,
    /// The rate-limit governor of the send path.
    pub governor: crate::send::governor::Governor,
    /// Approvals waiting in the browser.
    pub approvals: Arc<crate::approval::Approvals>,
}

pub struct App {
    pub settings: Settings,
    pub storage: Arc<Storage>,
    pub secrets: Arc<dyn SecretStore>,
    pub vault: Vault,
    /// Every secret value this process resolved or attached; whatever leaves the server is
    /// scrubbed of them (`scrub::Exposed`).
    pub exposed: Arc<Exposed>,
    /// The loopback listener's port once it is bound (no request of workbench may reach it).
    listening: OnceLock<u16>,
    /// The guarded HTTP clients, one per address policy, each built on first use.
    http_public: OnceLock<reqwest::Client>,
    http_private: OnceLock<reqwest::Client>,
    /// Each module's own state, by name.
    pub state: State,
}

/// The secret store the settings name (nothing is opened or probed here).
pub fn secret_store(settings: &Settings) -> Arc<dyn SecretStore> {
    match settings.secret_store {
        StoreKind::Keychain => Arc::new(KeychainStore::default()),
        StoreKind::File => {
            let pass = match (
                settings.credential_env.get("WORKBENCH_VAULT_PASSPHRASE"),
                settings.credential_env.get("WORKBENCH_VAULT_PASSPHRASE_COMMAND"),
            ) {
                (Some(p), _) => Passphrase::Value(Secret::new(p.clone())),
                (None, Some(c)) => Passphrase::Command(c.clone()),
                (None, None) => match &settings.vault_key_file {
                    Some(path) => Passphrase::KeyFile(path.clone()),
                    None => Passphrase::Missing,
                },
            };
            Arc::new(FileStore::new(settings.home.join("secrets.enc"), pass))
        }
        StoreKind::Memory => Arc::new(MemoryStore::default()),
    }
}

impl App {
    /// The shared handles around `state` (built by the composition root, [`crate::start`], which
    /// then mounts the listener's routes).
    pub(crate) fn from_parts(settings: Settings, secrets: Arc<dyn SecretStore>, state: State) -> App {
        let storage = Storage::new(settings.database_path());
        let exposed: Arc<Exposed> = Default::default();
        let vault = Vault::new(secrets.clone(), storage.clone(), exposed.clone());
        App {
            settings,
            storage,
            secrets,
            vault,
            exposed,
            listening: OnceLock::new(),
            http_public: OnceLock::new(),
            http_private: OnceLock::new(),
            state,
        }
    }

    /// Records the port the loopback listener bound (once).
    pub fn set_listening(&self, port: u16) {
        let _ = self.listening.set(port);
    }

    /// workbench's own listener ports (the running one, and the configured one): no request of
    /// workbench may reach them.
    pub fn listener_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.listening.get().copied().into_iter().collect();
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
    pub fn client_for(&self, url: &reqwest::Url, user_origin: bool) -> Result<&reqwest::Client, net::Refusal> {
        let ports = self.listener_ports();
        let guard = net::Guard {
            reachable: &[],
            private: &self.settings.private_hosts,
            user_origin,
            listener_ports: &ports,
            who: "workbench",
        };
        Ok(match net::check_parsed(url, None, &guard)? {
            net::Reach::Public => self.http_public.get_or_init(|| net::engine_client(net::Reach::Public)),
            net::Reach::Private => self.http_private.get_or_init(|| net::engine_client(net::Reach::Private)),
        })
    }

    /// A guarded request builder for `url`: the address guard picks the client, or refuses.
    pub fn request(
        &self,
        method: reqwest::Method,
        url: reqwest::Url,
        user_origin: bool,
    ) -> Result<reqwest::RequestBuilder, ToolError> {
        let client = self.client_for(&url, user_origin).map_err(|r| ToolError::invalid(r.0))?;
        Ok(client.request(method, url))
    }
}
