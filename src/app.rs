//! The handle every module works on: the shared parts (settings, storage, the secret store, the
//! vault, the set of exposed secrets, the guarded HTTP clients) and one typed state slot per
//! module that keeps state of its own (`App::state`). Cheap to build (no I/O), so the server
//! answers `initialize` at once.
//!
//! `App` names no module above it: connect keeps its pending flows, auth its refresh locks and
//! sessions, the send path its governor, the registry its snapshot, and so on, each in its own
//! state type behind its own small API. Modules may add methods to `App` in their own files
//! (`impl App` in `auth`, `registry`, ...); the constructors `App::new` and `App::with_parts`
//! live in the composition root, [`crate::start`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use plugins::api::ToolError;

use crate::config::{Settings, StoreKind};
use crate::net;
use crate::scrub::Exposed;
use crate::secrets::Secret;
use crate::secrets::file::{FileStore, Passphrase};
use crate::secrets::keychain::KeychainStore;
use crate::secrets::{MemoryStore, SecretStore, Vault};
use crate::storage::Storage;

/// One module's state, created on first use (see [`App::state`]).
type Slot = Arc<dyn Any + Send + Sync>;

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
    /// Per-module state, keyed by its type.
    slots: RwLock<HashMap<TypeId, Slot>>,
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
    /// The shared handles alone; every module's state starts empty. The composition root
    /// ([`crate::start`]) adds the catalogue and the listener's routes.
    pub(crate) fn from_handles(settings: Settings, secrets: Arc<dyn SecretStore>) -> App {
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
            slots: RwLock::new(HashMap::new()),
        }
    }

    /// The state of type `T` (one per app), created with `T::default()` on first use.
    pub fn state<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        self.state_with(T::default)
    }

    /// The state of type `T`, created with `init` on first use. `init` runs outside the lock (it
    /// may read other state); should two callers race, one value is kept and the other dropped.
    pub fn state_with<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let id = TypeId::of::<T>();
        if let Some(slot) = self.slots.read().unwrap_or_else(|p| p.into_inner()).get(&id) {
            return downcast(slot.clone());
        }
        let fresh: Slot = Arc::new(init());
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        downcast(slots.entry(id).or_insert(fresh).clone())
    }

    /// Sets the state of type `T` if it has none yet; `false` when it had one (which stays).
    pub fn set_state<T: Any + Send + Sync>(&self, value: T) -> bool {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        match slots.entry(TypeId::of::<T>()) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Arc::new(value));
                true
            }
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

fn downcast<T: Any + Send + Sync>(slot: Slot) -> Arc<T> {
    slot.downcast::<T>().unwrap_or_else(|_| unreachable!("a state slot holds the type it is keyed by"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counter(std::sync::atomic::AtomicUsize);

    /// One value per type and app: every caller gets the same one, a second `set_state` is
    /// refused, and another app starts empty.
    #[test]
    fn state_slots_hold_one_value_per_type() {
        let home = std::env::temp_dir().join(format!("workbench-slots-{}", crate::ids::random_hex(8)));
        let vars: HashMap<String, String> = [("WORKBENCH_HOME".to_string(), home.display().to_string())].into();
        let settings = Settings::load(&vars).unwrap();
        let app = App::from_handles(settings.clone(), Arc::new(MemoryStore::default()));
        app.state::<Counter>().0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(app.state::<Counter>().0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(Arc::ptr_eq(&app.state::<Counter>(), &app.state_with(|| Counter(99.into()))));
        assert!(!app.set_state(Counter::default()), "a slot that is set stays");
        assert!(app.set_state(7u32) && *app.state_with(|| 0u32) == 7);
        let other = App::from_handles(settings, Arc::new(MemoryStore::default()));
        assert_eq!(other.state::<Counter>().0.load(std::sync::atomic::Ordering::SeqCst), 0);
        let _ = std::fs::remove_dir_all(home);
    }
}
