//! The login sessions of `Inject::Session` connections, in memory only: one slot per account
//! (`<integration>:<account>`). The send path (`send::session`) logs in and fills them; erasing a
//! connection ([`super::erase`]) drops its session. Held as the app's `Sessions` state.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::secrets::Secret;

/// An open session: the values its login captured.
pub struct Session {
    /// Distinguishes this login from the next one (a rejected session is replaced, not reused).
    pub id: u64,
    pub(crate) fingerprint: [u8; 32],
    pub(crate) values: HashMap<&'static str, Secret<String>>,
}

impl Session {
    pub(crate) fn new(id: u64, fingerprint: [u8; 32], values: HashMap<&'static str, Secret<String>>) -> Session {
        Session { id, fingerprint, values }
    }

    /// Every captured value, so results and errors can be scrubbed of them.
    pub fn secret_values(&self) -> Vec<String> {
        self.values.values().map(|v| v.expose().clone()).collect()
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&&str> = self.values.keys().collect();
        names.sort();
        f.debug_struct("Session").field("id", &self.id).field("values", &names).finish_non_exhaustive()
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Session>>>>;

/// The in-memory session cache, one slot per account (`<integration>:<account>`).
#[derive(Default)]
pub struct Sessions {
    slots: Mutex<HashMap<String, Slot>>,
}

impl Sessions {
    pub(crate) fn slot(&self, integration: &str) -> Slot {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).entry(integration.to_string()).or_default().clone()
    }

    /// Drops a session (disconnect): one account's (`<integration>:<account>`), or every
    /// account's of an integration (its bare name).
    pub fn forget(&self, key: &str) {
        let prefix = format!("{key}:");
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).retain(|k, _| k != key && !k.starts_with(&prefix));
    }
}
