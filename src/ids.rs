//! Unguessable identifiers from the operating system's random source.

/// `bytes` random bytes as lowercase hex (so `random_hex(16)` carries 128 bits).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the operating system's random source is available");
    buf.iter().map(|b| format!("{b:02x}")).collect()
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
