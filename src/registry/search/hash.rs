//! A fast, non-cryptographic hash for the index's maps (the Fx hash of rustc): the keys are the
//! catalogue's own words, nothing an attacker chooses, and std's SipHash dominated build time.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type Map<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
pub type Set<T> = HashSet<T, BuildHasherDefault<FxHasher>>;

/// The hash of `word` without its `skip`-th character: the typo index's deletion keys, without
/// building the strings.
pub fn deletion_hash(word: &[char], skip: Option<usize>) -> u64 {
    let mut h = FxHasher::default();
    for (i, &c) in word.iter().enumerate() {
        if Some(i) != skip {
            h.add(u64::from(c));
        }
    }
    h.add(word.len() as u64 - u64::from(skip.is_some()));
    h.finish()
}

/// Every key one deletion away from `word`, and `word`'s own.
pub fn deletion_hashes(word: &str) -> Vec<u64> {
    let chars: Vec<char> = word.chars().collect();
    let mut keys: Vec<u64> =
        std::iter::once(None).chain((0..chars.len()).map(Some)).map(|s| deletion_hash(&chars, s)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}
