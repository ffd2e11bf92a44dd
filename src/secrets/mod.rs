//! Secrets: the `Secret<T>` wrapper, the `SecretStore` interface and vault lookups.
//!
//! A `Secret` cannot be printed: it has no `Display`, its `Debug` is redacted, and the only way in
//! is `expose()`, which marks each place a secret value is actually needed. Stores hold values by
//! key; SQLite holds only metadata about them. The in-memory store serves tests and runs where no
//! durable store has been configured.

pub mod file;
pub mod keychain;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::{ErrorCode, ToolFailure};
use crate::scrub::Exposed;
use crate::storage::{Storage, VaultMeta};

/// A value that must never be logged, stored in SQLite or returned to the agent.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    pub fn new(value: T) -> Self {
        Secret(value)
    }
    /// The secret value itself; every call site is a place the secret leaves its wrapper.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> std::fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// What to do when no secret store works; shown wherever that failure reaches a person.
pub const STORE_HELP: &str = "To fix it: unlock or start your OS keychain (on Linux, the Secret Service: gnome-keyring or KeePassXC), \
or use the encrypted file store (WORKBENCH_SECRET_STORE=file with WORKBENCH_VAULT_PASSPHRASE or WORKBENCH_VAULT_PASSPHRASE_COMMAND), \
or give the credential in the environment as WORKBENCH_<INTEGRATION>_<FIELD>.";

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum StoreError {
    #[error("the secret store ({store}) is unavailable: {reason}")]
    Unavailable { store: &'static str, reason: String },
}

/// Where secret values live, by key.
pub trait SecretStore: Send + Sync {
    /// A short name for status output, e.g. "memory", "keychain".
    fn name(&self) -> &'static str;
    /// Where the values are and what opens them, in words for status, doctor and the pages
    /// (never a secret).
    fn describe(&self) -> String {
        self.name().to_string()
    }
    fn get(&self, key: &str) -> Result<Option<Secret<String>>, StoreError>;
    fn set(&self, key: &str, value: &Secret<String>) -> Result<(), StoreError>;
    fn delete(&self, key: &str) -> Result<bool, StoreError>;
    /// Whether the store waits for a passphrase the user can type on the local unlock page.
    fn locked(&self) -> bool {
        false
    }
    /// Unlocks the store with a passphrase typed by the user (only stores that can be locked).
    fn unlock(&self, _passphrase: Secret<String>) -> Result<(), StoreError> {
        Err(StoreError::Unavailable {
            store: self.name(),
            reason: "this store cannot be unlocked with a passphrase".into(),
        })
    }
}

/// Secrets in process memory only; gone when the process exits.
#[derive(Default)]
pub struct MemoryStore {
    values: Mutex<HashMap<String, Secret<String>>>,
}

impl SecretStore for MemoryStore {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn describe(&self) -> String {
        "process memory only (gone when this workbench process exits)".into()
    }
    fn get(&self, key: &str) -> Result<Option<Secret<String>>, StoreError> {
        Ok(self.values.lock().unwrap_or_else(|p| p.into_inner()).get(key).cloned())
    }
    fn set(&self, key: &str, value: &Secret<String>) -> Result<(), StoreError> {
        self.values.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string(), value.clone());
        Ok(())
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        Ok(self.values.lock().unwrap_or_else(|p| p.into_inner()).remove(key).is_some())
    }
}

/// How long a store may take to answer [`probe`] (doctor, status, the portal and connect pages).
pub const PROBE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3);

/// Asks `store` for a key that does not exist, on its own thread with a deadline: `Ok` when the
/// store answers (a locked keychain, a missing D-Bus session or a file store without its key fail
/// here instead of at the first connection). The error is the store's reason, never a secret.
pub fn probe(store: Arc<dyn SecretStore>, deadline: std::time::Duration) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let name = store.name();
    std::thread::spawn(move || {
        let _ = tx.send(store.get("workbench-doctor-probe").map(|_| ()));
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(StoreError::Unavailable { reason, .. })) => Err(reason),
        Err(_) => Err(format!(
            "the {name} store did not answer within {}s (locked, or waiting for a prompt?)",
            deadline.as_secs()
        )),
    }
}

/// Named secrets the agent can reference as `{{vault:NAME}}` but never read.
pub struct Vault {
    store: Arc<dyn SecretStore>,
    storage: Arc<Storage>,
    /// The process's exposed-secret set: every value [`Vault::resolve`] hands out is registered
    /// there first, so whatever leaves the server is scrubbed of it.
    exposed: Arc<Exposed>,
}

/// The values of the vault refs a request uses, each already registered with the process's
/// exposed-secret set (see [`Vault::resolve`]).
#[derive(Default)]
pub struct VaultValues(HashMap<String, Secret<String>>);

impl VaultValues {
    /// The value of `name`, for a template's `{{vault:NAME}}` (`template::Scope::vault`).
    pub fn lookup(&self, name: &str) -> Result<String, ToolFailure> {
        self.0
            .get(name)
            .map(|s| s.expose().clone())
            .ok_or_else(|| ToolFailure::new(ErrorCode::BadRef, format!("vault secret '{name}' was not resolved")))
    }

    /// Every resolved value (for a call's own scrubber).
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.0.values().map(|s| s.expose().as_str())
    }
}

fn store_key(name: &str) -> String {
    format!("vault:{name}")
}

impl Vault {
    /// The vault over `store` (values) and `storage` (metadata); the values it resolves are
    /// registered with `exposed`, the process's set.
    pub fn new(store: Arc<dyn SecretStore>, storage: Arc<Storage>, exposed: Arc<Exposed>) -> Self {
        Vault { store, storage, exposed }
    }

    /// The one resolution of vault refs: the secrets `names` for a request whose targets are
    /// `hosts` (origins, `scheme://host:port`, or an upstream server's pseudo-host), each refused
    /// unless its `allowed_hosts` allow every target, and each value registered with the
    /// process's exposed-secret set before it is returned (the engine, custom apps and upstream
    /// servers all resolve through here; `tests/it/tidy.rs` checks no other code reads a vault
    /// value).
    pub async fn resolve(&self, names: &[String], hosts: &[String]) -> Result<VaultValues, ToolFailure> {
        let mut values = HashMap::new();
        for name in names {
            if values.contains_key(name) {
                continue;
            }
            let secret = self.resolve_for_hosts(name, hosts).await?;
            self.exposed.remember(secret.expose());
            values.insert(name.clone(), secret);
        }
        Ok(VaultValues(values))
    }

    /// Stores or replaces a secret and its metadata.
    pub async fn set(
        &self,
        name: &str,
        value: Secret<String>,
        description: Option<String>,
        allowed_hosts: Vec<String>,
    ) -> Result<(), ToolFailure> {
        self.store
            .set(&store_key(name), &value)
            .map_err(|e| ToolFailure::new(ErrorCode::SecretStoreUnavailable, format!("{e}. {STORE_HELP}")))?;
        self.storage
            .put_vault_meta(VaultMeta {
                name: name.to_string(),
                description,
                allowed_hosts: allowed_hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
                created_at: crate::storage::now_rfc3339(),
                last_used_at: None,
            })
            .await
            .map_err(|e| ToolFailure::new(ErrorCode::InternalError, e.to_string()))
    }

    /// Deletes a secret and its metadata; true when it existed.
    pub async fn delete(&self, name: &str) -> Result<bool, ToolFailure> {
        let had_meta = self
            .storage
            .delete_vault_meta(name.to_string())
            .await
            .map_err(|e| ToolFailure::new(ErrorCode::InternalError, e.to_string()))?;
        let had_value = self
            .store
            .delete(&store_key(name))
            .map_err(|e| ToolFailure::new(ErrorCode::SecretStoreUnavailable, format!("{e}. {STORE_HELP}")))?;
        Ok(had_meta || had_value)
    }

    /// The secret `name` for a call whose requests go to `hosts` (origins, `scheme://host:port`);
    /// refused unless the secret's `allowed_hosts` allow every one of them (see [`origin_allowed`]).
    /// The lookup alone, registering nothing: code outside the vault resolves with
    /// [`Vault::resolve`] (tests read a stored value back with this).
    pub async fn resolve_for_hosts(&self, name: &str, hosts: &[String]) -> Result<Secret<String>, ToolFailure> {
        let meta = self
            .storage
            .vault_meta(name.to_string())
            .await
            .map_err(|e| ToolFailure::new(ErrorCode::InternalError, e.to_string()))?;
        let Some(meta) = meta else {
            return Err(ToolFailure::new(
                ErrorCode::BadRef,
                format!("there is no vault secret named '{name}'; ask the user to store it with vault_set_secret"),
            ));
        };
        if hosts.is_empty() {
            return Err(ToolFailure::new(
                ErrorCode::VaultDenied,
                format!("vault secret '{name}' can only be sent to a known host, and this tool sends nothing anywhere"),
            ));
        }
        let denied: Vec<&String> = hosts.iter().filter(|h| !origin_allowed(&meta.allowed_hosts, h)).collect();
        if !denied.is_empty() {
            return Err(ToolFailure::new(
                ErrorCode::VaultDenied,
                format!(
                    "vault secret '{name}' may only be sent to {}; this tool would send it to {}",
                    if meta.allowed_hosts.is_empty() { "no host".to_string() } else { meta.allowed_hosts.join(", ") },
                    denied.iter().map(|h| h.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
            .with("secret", name));
        }
        let value = self
            .store
            .get(&store_key(name))
            .map_err(|e| ToolFailure::new(ErrorCode::SecretStoreUnavailable, format!("{e}. {STORE_HELP}")))?
            .ok_or_else(|| {
                ToolFailure::new(
                    ErrorCode::BadRef,
                    format!(
                        "vault secret '{name}' is listed but its value is missing from the {} store; set it again",
                        self.store.name()
                    ),
                )
            })?;
        let _ = self.storage.touch_vault(name.to_string()).await;
        Ok(value)
    }
}

/// One `allowed_hosts` entry, or a target origin: scheme, host (maybe `*.suffix`) and port.
#[derive(Debug, PartialEq, Eq)]
struct OriginPattern {
    scheme: String,
    host: String,
    port: u16,
}

/// Reads an `allowed_hosts` entry: `api.acme.com` is `https://api.acme.com:443`, `*.acme.com`
/// its subdomains on https and 443; `http://host:8080` or `https://host:8443` say otherwise; a
/// scheme without a port means that scheme's default port. Target origins parse the same way.
fn parse_pattern(entry: &str) -> Option<OriginPattern> {
    let e = entry.trim().to_ascii_lowercase();
    let (scheme, rest) = match (e.strip_prefix("https://"), e.strip_prefix("http://")) {
        (Some(r), _) => ("https", r),
        (_, Some(r)) => ("http", r),
        _ if e.contains("://") => return None,
        _ => ("https", e.as_str()),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() || rest.contains(['/', '@', '?', '#', ' ']) {
        return None;
    }
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => {
            let (inside, after) = v6.split_once(']')?;
            (format!("[{inside}]"), after)
        }
        None => match rest.rsplit_once(':') {
            Some((h, _)) => (h.to_string(), &rest[h.len()..]),
            None => (rest.to_string(), ""),
        },
    };
    let port = match port.strip_prefix(':') {
        Some(p) => p.parse().ok()?,
        None if port.is_empty() => {
            if scheme == "https" {
                443
            } else {
                80
            }
        }
        None => return None,
    };
    let host = host.trim_end_matches('.').to_string();
    (!host.is_empty()).then(|| OriginPattern { scheme: scheme.to_string(), host, port })
}

/// Whether a secret whose `allowed_hosts` are `allowed` may be sent to `origin`
/// (`scheme://host:port`). The one matcher for vault secrets: scheme, host and port must all
/// match; a `*.` entry matches subdomains (not the domain itself).
pub fn origin_allowed(allowed: &[String], origin: &str) -> bool {
    // An upstream MCP server's pseudo-host (`mcp:<server>`) matches only itself, exactly.
    if origin.starts_with("mcp:") {
        return allowed.iter().any(|a| a.trim().eq_ignore_ascii_case(origin));
    }
    let Some(target) = parse_pattern(origin) else { return false };
    allowed.iter().filter_map(|a| parse_pattern(a)).any(|a| {
        a.scheme == target.scheme
            && a.port == target.port
            && match a.host.strip_prefix("*.") {
                Some(suffix) => target.host.ends_with(&format!(".{suffix}")),
                None => a.host == target.host,
            }
    })
}

/// Why an `allowed_hosts` entry cannot be read, if it cannot (for vault_set_secret's checks).
pub fn check_allowed_host(entry: &str) -> Result<(), NotAHost> {
    match parse_pattern(entry) {
        Some(_) => Ok(()),
        None => Err(NotAHost(entry.to_string())),
    }
}

/// An `allowed_hosts` entry that is not a host pattern.
#[derive(Debug, thiserror::Error)]
#[error(
    "'{0}' is not a host: write api.example.com (https on port 443), *.example.com, or an origin such as http://127.0.0.1:8080"
)]
pub struct NotAHost(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("hunter2".to_string());
        assert_eq!(format!("{s:?}"), "Secret([redacted])");
        assert_eq!(s.expose(), "hunter2");
    }

    /// Issue 13 item 7: an allowed host binds scheme and port too; a plain name means https:443.
    #[test]
    fn host_patterns_are_origins() {
        let allows = |a: &str, o: &str| origin_allowed(&[a.to_string()], o);
        assert!(allows("api.example.com", "https://API.example.com:443"));
        assert!(!allows("api.example.com", "http://api.example.com:80"));
        assert!(!allows("api.example.com", "https://api.example.com:8443"));
        assert!(allows("*.example.com", "https://a.example.com:443"));
        assert!(!allows("*.example.com", "https://example.com:443"));
        assert!(!allows("*.example.com", "http://a.example.com:8080"));
        assert!(!allows("example.com", "https://evil-example.com:443"));
        assert!(allows("http://127.0.0.1:8080", "http://127.0.0.1:8080"));
        assert!(!allows("http://127.0.0.1:8080", "http://127.0.0.1:8081"));
        assert!(!allows("127.0.0.1", "http://127.0.0.1:8080"));
        assert!(allows("https://svc.example", "https://svc.example:443"));
        assert!(allows("http://svc.example", "http://svc.example:80"));
        assert!(allows("https://h:8443/", "https://h:8443"));
        assert!(allows("[::1]", "https://[::1]:443"));
        assert!(check_allowed_host("ftp://x").is_err());
        assert!(check_allowed_host("https://h/path").is_err());
        assert!(check_allowed_host("h:notaport").is_err());
    }

    #[tokio::test]
    async fn vault_enforces_allowed_hosts() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::new(dir.path().join("w.db"));
        let exposed = Arc::new(Exposed::default());
        let vault = Vault::new(Arc::new(MemoryStore::default()), storage, exposed.clone());
        vault.set("api_key", Secret::new("v4lue-123".into()), None, vec!["api.example.com".into()]).await.unwrap();
        let ok = vault.resolve_for_hosts("api_key", &["https://api.example.com:443".into()]).await.unwrap();
        assert_eq!(ok.expose(), "v4lue-123");
        let denied = vault.resolve_for_hosts("api_key", &["https://evil.test:443".into()]).await.unwrap_err();
        assert_eq!(denied.code, ErrorCode::VaultDenied);
        let denied = vault.resolve_for_hosts("api_key", &["http://api.example.com:80".into()]).await.unwrap_err();
        assert_eq!(denied.code, ErrorCode::VaultDenied);
        assert!(!denied.message.contains("v4lue"));
        let missing = vault.resolve_for_hosts("nope", &["api.example.com".into()]).await.unwrap_err();
        assert_eq!(missing.code, ErrorCode::BadRef);
        assert_eq!(exposed.text("v4lue-123"), "v4lue-123", "a lookup alone registers nothing");
        // The one resolution registers what it hands out, and refuses as the lookup does.
        let hosts = ["https://api.example.com:443".to_string()];
        let values = vault.resolve(&["api_key".into(), "api_key".into()], &hosts).await.unwrap();
        assert_eq!(values.lookup("api_key").unwrap(), "v4lue-123");
        assert_eq!(values.lookup("other").unwrap_err().code, ErrorCode::BadRef);
        assert!(!exposed.text("said v4lue-123").contains("v4lue-123"), "registered for scrubbing");
        let denied = vault.resolve(&["api_key".into()], &["https://evil.test:443".into()]).await;
        assert_eq!(denied.err().unwrap().code, ErrorCode::VaultDenied);
    }
}
