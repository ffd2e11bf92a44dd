//! The index's maps use rustc's Fx hash (the `rustc-hash` crate): the keys are the catalogue's
//! own words, nothing an attacker chooses, and std's SipHash dominated build time. (The semantic
//! tier's cache of tool vectors, whose texts custom apps and upstream servers choose, keeps
//! SipHash.)

use std::hash::{BuildHasher, Hasher};

use rustc_hash::FxBuildHasher;
pub use rustc_hash::{FxHashMap as Map, FxHashSet as Set};

/// The hash of `word` without its `skip`-th character: the typo index's deletion keys, without
/// building the strings.
pub fn deletion_hash(word: &[char], skip: Option<usize>) -> u64 {
    let mut h = FxBuildHasher.build_hasher();
    for (i, &c) in word.iter().enumerate() {
        if Some(i) != skip {
            h.write_u32(u32::from(c));
        }
    }
    h.write_u64(word.len() as u64 - u64::from(skip.is_some()));
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
