//! Where the search index's heap goes: estimates from capacities, for
//! `examples/search_footprint.rs`.

use super::*;

/// Heap bytes of a map's table (hashbrown: buckets of the entry and a control byte, the
/// buckets a power of two at most 7/8 full).
pub(super) fn map_bytes<K, V, S>(m: &std::collections::HashMap<K, V, S>) -> usize {
    let buckets = if m.capacity() == 0 { 0 } else { (m.capacity() * 8 / 7).next_power_of_two() };
    buckets * (std::mem::size_of::<(K, V)>() + 1)
}

pub(super) fn set_bytes<K, S>(m: &std::collections::HashSet<K, S>) -> usize {
    let buckets = if m.capacity() == 0 { 0 } else { (m.capacity() * 8 / 7).next_power_of_two() };
    buckets * (std::mem::size_of::<K>() + 1)
}

pub(super) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

impl SearchIndex {
    /// Where the index's heap goes, by part (bytes, estimated from capacities): what
    /// examples/search_footprint.rs prints.
    #[doc(hidden)]
    pub fn heap_report(&self) -> Vec<(&'static str, usize)> {
        let strings = |v: &mut dyn Iterator<Item = &String>| v.map(String::capacity).sum::<usize>();
        let docs = vec_bytes(&self.docs)
            + self
                .docs
                .iter()
                .map(|d| {
                    d.verb.capacity()
                        + vec_bytes(&d.intents)
                        + strings(&mut d.intents.iter())
                        + vec_bytes(&d.name_terms)
                })
                .sum::<usize>()
            + map_bytes(&self.by_name);
        let terms = map_bytes(&self.terms)
            + strings(&mut self.terms.keys())
            + vec_bytes(&self.term_text)
            + strings(&mut self.term_text.iter())
            + vec_bytes(&self.idf)
            + vec_bytes(&self.term_max);
        let postings = vec_bytes(&self.postings) + self.postings.iter().map(vec_bytes).sum::<usize>();
        let typos = vec_bytes(&self.sorted)
            + self.sorted.iter().map(|(t, _)| t.capacity()).sum::<usize>()
            + vec_bytes(&self.typo_keys.keys)
            + vec_bytes(&self.typo_keys.ids);
        let phrases = map_bytes(&self.phrases)
            + self.phrases.iter().map(|(k, v)| k.capacity() + vec_bytes(v)).sum::<usize>()
            + map_bytes(&self.products)
            + self.products.iter().map(|(k, v)| k.capacity() + vec_bytes(v)).sum::<usize>();
        let lexicon = map_bytes(&self.synonyms)
            + map_bytes(&self.synonyms_by_stem)
            + strings(&mut self.synonyms_by_stem.keys())
            + map_bytes(&self.verbs)
            + set_bytes(&self.dual)
            + set_bytes(&self.stopwords);
        vec![
            ("tools (docs, names)", docs),
            ("terms", terms),
            ("postings", postings),
            ("typo keys and prefixes", typos),
            ("phrases and products", phrases),
            ("lexicon maps", lexicon),
            ("tool vectors", self.vectors.heap_bytes()),
            ("bm25", self.bm25.heap_bytes()),
            ("semantic table (vocabulary ids)", embed::model().map_or(0, embed::Model::heap_bytes)),
            ("multilingual tool vectors", self.foreign.get().map_or(0, embed::Vectors::heap_bytes)),
            (
                "multilingual table (piece ids)",
                if self.foreign.get().is_some() {
                    multilingual::table().map_or(0, multilingual::Table::heap_bytes)
                } else {
                    0
                },
            ),
            ("glossary (the parts inflated so far)", glossary::heap_bytes()),
            (
                "search buffers",
                self.scratch.lock().unwrap_or_else(|p| p.into_inner()).iter().map(rank::Scratch::heap_bytes).sum(),
            ),
        ]
    }
}
