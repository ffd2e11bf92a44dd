//! Identifiers: unguessable ones from the operating system's random source, and interned names
//! (custom apps' and upstream servers' tool names, which live as long as the process).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

/// `bytes` random bytes as lowercase hex (so `random_hex(16)` carries 128 bits).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the operating system's random source is available");
    hex::encode(buf)
}

/// Names of custom and upstream tools live as long as the process: the registry's entries are `&'static
/// str` like the compiled catalogue's. Each distinct string is kept once, so memory grows only
/// with distinct definitions, never with reloads.
pub fn intern(s: &str) -> &'static str {
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = STRINGS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(existing) = set.get(s) {
        return existing;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_long_and_distinct() {
        let a = super::random_hex(16);
        assert_eq!(a.len(), 32);
        assert_ne!(a, super::random_hex(16));
    }
}
