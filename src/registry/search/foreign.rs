//! Ranking a request read through the glossary ([`glossary::gloss`]): the ranking of its English
//! words and the multilingual table's ranking of the request as written, scored together.

use super::*;

/// How deep each of the two rankings is read.
const FUSED_DEPTH: usize = 20;

impl SearchIndex {
    /// The ranking of a request (`trimmed`) read through the glossary as `english`: each tool
    /// scored `1 - w` by the English words' ranking and `w` by the multilingual table's
    /// (`Fusion::gloss_table`; a tool one ranking does not list scores 0 there). The two
    /// readings err apart: a sense the glossary gives wrongly, a word the table places near
    /// the wrong tool.
    pub(super) fn ranked_glossed(
        &self,
        trimmed: &str,
        english: &str,
        limit: usize,
        connected: &dyn Fn(&str) -> bool,
        fusion: Fusion,
    ) -> Vec<(f32, u32)> {
        let w = fusion.gloss_table.clamp(0.0, 1.0);
        if w == 0.0 {
            return self.ranked(english, limit, connected, fusion, false);
        }
        let depth = limit.max(FUSED_DEPTH);
        let glossed = self.ranked(english, depth, connected, fusion, false);
        let written = self.ranked(trimmed, depth, connected, fusion, true);
        let mut fused: Vec<(f32, u32)> = glossed.iter().map(|&(s, d)| ((1.0 - w) * s, d)).collect();
        for &(s, d) in &written {
            match fused.iter_mut().find(|(_, e)| *e == d) {
                Some(e) => e.0 += w * s,
                None => fused.push((w * s, d)),
            }
        }
        fused.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        fused.truncate(limit);
        fused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glossed_request_is_scored_by_both_readings() {
        let registry = crate::registry::Registry::standard();
        let index = registry.index();
        let connected = |_: &str| true;
        let q = "busca la página de notion sobre contratación";
        let english = glossary::gloss(q, &|w| index.products.contains_key(w)).expect("a gloss");
        let names = |list: Vec<(f32, u32)>| list.iter().map(|(_, d)| index.docs[*d as usize].name).collect::<Vec<_>>();
        let with = |w: f32| Fusion { gloss_table: w, ..Fusion::default() };
        // All weight on one reading: that reading's ranking (its first three: ties further down
        // may be put in another order).
        let glossed = names(index.ranked(&english, 3, &connected, with(0.0), false));
        assert_eq!(names(index.ranked_glossed(q, &english, 3, &connected, with(0.0))), glossed);
        let written = names(index.ranked(q, 3, &connected, with(1.0), true));
        assert_eq!(names(index.ranked_glossed(q, &english, 3, &connected, with(1.0))), written);
        assert_ne!(glossed, written, "the two readings rank alike: the test shows nothing");
        // Between: both readings' tools, best first, as many as asked for.
        let fused = index.ranked_glossed(q, &english, 3, &connected, with(0.35));
        assert_eq!(fused.len(), 3);
        assert!(fused.windows(2).all(|w| w[0].0 >= w[1].0), "{fused:?}");
        assert_eq!(names(fused)[0], "notion_search_pages");
    }
}
