//! Ranking a request read through the glossary ([`glossary::gloss`]): the ranking of its English
//! words and the multilingual table's ranking of the request as written, scored together.

use super::*;

/// How deep each of the two rankings is read.
const FUSED_DEPTH: usize = 20;
/// The glossary's ranking stands alone when its first tool leads the second by this much: the
/// table is asked only between near tools (about half the dev requests; dev top-1 the same
/// from 0.05 to 0.2 as with no such lead, 0.733 at 0.02).
const SURE_LEAD: f32 = 0.1;

impl SearchIndex {
    /// The ranking of a request (`trimmed`) read through the glossary as `english`: each tool
    /// scored `1 - w` by the English words' ranking and `w` by the multilingual table's
    /// (`Fusion::gloss_table`; a tool one ranking does not list scores 0 there), unless the
    /// glossary's first tool leads by [`SURE_LEAD`]. The two readings err apart: a sense the
    /// glossary gives wrongly, a word the table places near the wrong tool.
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
        let mut glossed = self.ranked(english, depth, connected, fusion, false);
        if let [first, second, ..] = glossed.as_slice()
            && first.0 - second.0 >= SURE_LEAD
        {
            glossed.truncate(limit);
            return glossed;
        }
        let written = self.ranked(trimmed, depth, connected, fusion, true);
        let mut at: hash::Map<u32, usize> = hash::Map::default();
        let mut fused: Vec<(f32, u32)> = Vec::with_capacity(glossed.len() + written.len());
        for (share, list) in [(1.0 - w, &glossed), (w, &written)] {
            for &(s, d) in list {
                let i = *at.entry(d).or_insert_with(|| {
                    fused.push((0.0, d));
                    fused.len() - 1
                });
                fused[i].0 += share * s;
            }
        }
        // A tool one reading lists weakly and the other not at all can fall below the floor
        // every result keeps (found by the `search` fuzz target: 0.65 x 0.03).
        fused.retain(|&(s, _)| s >= WEAK_FLOOR);
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
        let lead = |list: &[(f32, u32)]| list[0].0 - list[1].0;
        assert!(lead(&index.ranked(&english, 3, &connected, with(0.0), false)) < SURE_LEAD, "not a near tie");
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

    #[test]
    fn a_glossed_request_that_leads_clearly_stands_alone() {
        let registry = crate::registry::Registry::standard();
        let index = registry.index();
        let connected = |_: &str| true;
        let q = "发送邮件";
        let english = glossary::gloss(q, &|w| index.products.contains_key(w)).expect("a gloss");
        let glossed = index.ranked(&english, 20, &connected, Fusion::default(), false);
        assert!(glossed[0].0 - glossed[1].0 >= SURE_LEAD, "{glossed:?}");
        let fused = index.ranked_glossed(q, &english, 5, &connected, Fusion::default());
        assert_eq!(fused, glossed[..5]);
        assert!(index.foreign.get().is_none(), "the table was asked");
    }

    /// The fuzz target's find: a fused ranking kept a tool at 0.019, below [`MIN_SCORE`].
    #[test]
    fn a_fused_ranking_keeps_no_result_below_the_floor() {
        let registry = crate::registry::Registry::standard();
        let index = registry.index();
        let connected = |i: &str| i.len().is_multiple_of(2);
        let q = "onva/Chhert 3pm CET to A\u{10}con CETom et Arica2 mkdmerica/Chikago, PAY-2/2";
        let hits = index.search(q, 50, &connected);
        assert!(!hits.is_empty());
        for h in &hits {
            assert!(h.score >= MIN_SCORE, "{} scored {}", h.name, h.score);
        }
    }
}
