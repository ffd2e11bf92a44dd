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
    StoreError::Unavailable { store: "keychain", reason: e.to_string() }
}

impl SecretStore for KeychainStore {
    fn name(&self) -> &'static str {
        "keychain"
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
