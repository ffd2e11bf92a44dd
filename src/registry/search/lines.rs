//! A vocabulary kept as static text, one entry a line, found by its text through a small
//! open-addressing table of u16 ids (linear probing, a power of two at least twice the entries:
//! a miss ends in about two probes). Both static token tables look their pieces up in one: the
//! English WordPiece table ([`super::embed`]) and the multilingual one ([`super::multilingual`]).
//! Nothing is copied: the heap holds a u32 line start and a u16 slot or two per entry.

use std::hash::{BuildHasher, Hasher};

/// An empty slot.
const EMPTY: u16 = u16::MAX;

pub struct Lines {
    text: &'static str,
    /// Where each entry's line starts in `text` (count + 1 entries: the last one is the end).
    starts: Vec<u32>,
    slots: Vec<u16>,
}

fn slot_hash(entry: &[u8]) -> usize {
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(entry);
    h.finish() as usize
}

impl Lines {
    /// The lines of `text`, which must be exactly `count` (at least one, and ids must fit a u16);
    /// otherwise `None`. A repeated line is found as its last id, as a map built in order would.
    pub fn new(text: &'static str, count: usize) -> Option<Lines> {
        if count == 0 || count >= usize::from(EMPTY) {
            return None;
        }
        let mut starts = Vec::with_capacity(count + 1);
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            starts.push(u32::try_from(at).ok()?);
            at += line.len();
        }
        if starts.len() != count {
            return None;
        }
        starts.push(u32::try_from(at).ok()?);
        let mut lines = Lines { text, starts, slots: vec![EMPTY; (2 * count).next_power_of_two()] };
        let mask = lines.slots.len() - 1;
        for id in 0..count {
            let entry = lines.get(id);
            let mut i = slot_hash(entry.as_bytes()) & mask;
            while lines.slots[i] != EMPTY && lines.get(usize::from(lines.slots[i])) != entry {
                i = (i + 1) & mask;
            }
            lines.slots[i] = id as u16;
        }
        Some(lines)
    }

    /// Entry `id`'s text (its line without the line end).
    pub fn get(&self, id: usize) -> &'static str {
        let (start, end) = (self.starts[id] as usize, self.starts[id + 1] as usize);
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// The id of an entry.
    pub fn id(&self, entry: &str) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = slot_hash(entry.as_bytes()) & mask;
        loop {
            let slot = self.slots[i];
            if slot == EMPTY {
                return None;
            }
            if self.get(usize::from(slot)) == entry {
                return Some(usize::from(slot));
            }
            i = (i + 1) & mask;
        }
    }

    /// Bytes of heap (the line starts and the table of ids).
    pub fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 4 + self.slots.capacity() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_found_by_its_text_and_a_repeat_by_its_last_id() {
        let lines = Lines::new("a\r\nbb\n##c\nbb\nlast", 5).expect("five lines");
        assert_eq!((0..5).map(|i| lines.get(i)).collect::<Vec<_>>(), ["a", "bb", "##c", "bb", "last"]);
        assert_eq!(lines.id("a"), Some(0));
        assert_eq!(lines.id("bb"), Some(3));
        assert_eq!(lines.id("##c"), Some(2));
        assert_eq!(lines.id("last"), Some(4));
        assert_eq!(lines.id("c"), None);
        assert_eq!(lines.id(""), None);
    }

    #[test]
    fn a_count_that_does_not_match_or_fit_is_refused() {
        assert!(Lines::new("a\nb\n", 3).is_none());
        assert!(Lines::new("a\nb\n", 1).is_none());
        assert!(Lines::new("", 0).is_none());
        let many: &'static str = "x\n".repeat(usize::from(EMPTY)).leak();
        assert!(Lines::new(many, usize::from(EMPTY)).is_none());
    }
}
