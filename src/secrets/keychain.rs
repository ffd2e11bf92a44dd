//! The OS keychain (macOS Keychain, Windows Credential Manager, Linux Secret Service) through the
//! `keyring` crate. Every call runs on its own thread with a deadline, so a keychain that hangs
//! (a locked collection waiting for a prompt, a stuck D-Bus) cannot stall a tool call; nothing
//! touches the keychain until a secret is first needed.

use std::sync::mpsc;
use std::time::Duration;

use super::{Secret, SecretStore, StoreError};

const SERVICE: &str = "workbench";
const DEADLINE: Duration = Duration::from_secs(5);

pub struct KeychainStore {
    service: String,
}

impl Default for KeychainStore {
    fn default() -> Self {
        KeychainStore { service: SERVICE.to_string() }
    }
}

impl KeychainStore {
    /// A store under another service name (tests use their own, never the user's entries).
    pub fn with_service(service: &str) -> Self {
        KeychainStore { service: service.to_string() }
    }

    fn run<T: Send + 'static>(
        &self,
        key: &str,
        op: impl FnOnce(keyring::Entry) -> keyring::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::channel();
        let service = self.service.clone();
        let key = key.to_string();
        std::thread::spawn(move || {
            let result = keyring::Entry::new(&service, &key).and_then(op);
            let _ = tx.send(result);
        });
        match rx.recv_timeout(DEADLINE) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(unavailable(e)),
            Err(_) => Err(StoreError::Unavailable {
                store: "keychain",
                reason: format!(
                    "the OS keychain ({}) did not answer within {}s (is it locked?)",
                    crate::platform::keychain_name(crate::platform::Os::current()),
                    DEADLINE.as_secs()
                ),
            }),
        }
    }
}

fn unavailable(e: keyring::Error) -> StoreError {
    let reason = match e {
        keyring::Error::NoDefaultStore => no_keychain_reason(),
        e => e.to_string(),
    };
    StoreError::Unavailable { store: "keychain", reason }
}

/// Why the keyring crate has no store ("No default store has been set"), in the user's terms:
/// on Linux the Secret Service is reached over the D-Bus session bus, which SSH logins,
/// containers, WSL and services usually do not have, or where no keyring daemon runs.
pub fn no_keychain_reason() -> String {
    let init = match keyring::Entry::store_status() {
        Err(e) => e.to_string(),
        Ok(()) => keyring::Error::NoDefaultStore.to_string(),
    };
    let why = if cfg!(any(target_os = "macos", target_os = "windows")) {
        "the OS keychain could not be opened".to_string()
    } else {
        linux_why(std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty()))
    };
    format!("no OS keychain answers here: {why} (the keyring library says: {init})")
}

fn linux_why(has_session_bus: bool) -> String {
    if has_session_bus {
        "the session D-Bus has no Secret Service (org.freedesktop.secrets): no gnome-keyring, KeePassXC or other keyring daemon is running and unlocked".into()
    } else {
        "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set, as over SSH, in containers, on WSL and in services), so no Secret Service can be reached".into()
    }
}

impl SecretStore for KeychainStore {
    fn name(&self) -> &'static str {
        "keychain"
    }

    fn describe(&self) -> String {
        let which = if cfg!(target_os = "macos") {
            "macOS Keychain"
        } else if cfg!(target_os = "windows") {
            "Windows Credential Manager"
        } else {
            "the Secret Service on the D-Bus session bus"
        };
        format!("the OS keychain ({which}), service name '{}'", self.service)
    }

    fn get(&self, key: &str) -> Result<Option<Secret<String>>, StoreError> {
        self.run(key, |entry| match entry.get_password() {
            Ok(v) => Ok(Some(Secret::new(v))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(e),
        })
    }

    fn set(&self, key: &str, value: &Secret<String>) -> Result<(), StoreError> {
        let value = value.clone();
        self.run(key, move |entry| entry.set_password(value.expose()))
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.run(key, |entry| match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(e),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29: "No default store has been set" is explained by its cause.
    #[test]
    fn a_missing_store_is_explained() {
        assert!(linux_why(false).contains("no D-Bus session bus"));
        assert!(linux_why(true).contains("no gnome-keyring"));
        if !cfg!(any(target_os = "macos", target_os = "windows")) {
            let r = no_keychain_reason();
            assert!(r.starts_with("no OS keychain answers here"), "{r}");
        }
    }
}
