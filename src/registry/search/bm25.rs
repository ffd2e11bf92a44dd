//! A third, plain signal: Okapi BM25 over each tool's name words and description. It knows no
//! synonyms and no intents, but it reads a long request's many words as evidence where the
//! lexical tier reads them as context, and it needs nothing curated: what an upstream server's
//! tool says about itself is all it uses.

use super::hash::{Map, Set};
use super::lexicon::Words;
use super::text::{stem_owned, stem_str, tokenize};

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Words that say nothing about which tool (articles, pronouns, "please").
static STOP: Words = Words::new(&[
    "a", "an", "the", "of", "to", "for", "and", "or", "in", "on", "with", "by", "is", "it", "me", "my", "i", "you",
    "your", "we", "our", "be", "are", "this", "that", "from", "at", "as", "can", "could", "would", "please", "all",
    "any", "some", "want", "need", "like", "so", "do", "if", "then", "them", "they", "their", "there", "what", "which",
]);

/// What scoring a request's texts shares: each word's known terms (a clause's words are the
/// request's own).
#[derive(Default)]
pub struct Memo {
    /// Off for a request of one text.
    on: bool,
    /// word -> its terms' place in `terms` (one list for every word's terms).
    known: Map<String, (u32, u32)>,
    terms: Vec<u32>,
}

impl Memo {
    /// A memo for a request of `words` words (room made for them once).
    pub fn new(on: bool, words: usize) -> Memo {
        let mut known = Map::default();
        if on {
            known.reserve(words.min(super::query::MEMO_ROOM));
        }
        Memo { on, known, terms: Vec::new() }
    }

    /// How many words the memo holds without growing.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.known.capacity()
    }
}

#[derive(Default)]
pub struct Bm25 {
    terms: Map<String, u32>,
    /// term -> (doc, the term's part of the doc's score): `idf * f * (k1 + 1) / (f + norm)`
    /// of the term's frequency `f` in the doc, made at build as a search made it (the same
    /// bits), so a search only adds.
    postings: Vec<Vec<(u32, f32)>>,
}

/// A text's terms: words split at '_', '-' and camelCase, lower-cased, stemmed, stopwords out.
pub fn terms(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && prev_lower {
            spaced.push(' ');
        }
        prev_lower = c.is_lowercase();
        spaced.push(if c == '_' || c == '-' { ' ' } else { c });
    }
    tokenize(&spaced).into_iter().filter(|t| !STOP.contains(t)).map(stem_owned).collect()
}

/// [`terms`] of one word, each handed to `f` as it is read: for an ASCII word without an
/// apostrophe (most of a request's), a piece at a time through `buf`, with no string made; any
/// other word through [`terms`].
fn each_term(word: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    if !word.is_ascii() || word.contains('\'') {
        terms(word).iter().for_each(|t| f(t));
        return;
    }
    // The pieces [`terms`] reads: runs of letters and digits, a new one at a capital after a
    // small letter.
    let bytes = word.as_bytes();
    let mut start = 0;
    let mut prev_lower = false;
    for i in 0..=bytes.len() {
        let b = bytes.get(i).copied();
        let alnum = b.is_some_and(|b| b.is_ascii_alphanumeric());
        let camel = b.is_some_and(|b| b.is_ascii_uppercase()) && prev_lower;
        if !alnum || camel {
            if start < i {
                buf.clear();
                buf.push_str(&word[start..i]);
                buf.make_ascii_lowercase();
                if !STOP.contains(buf) {
                    f(&stem_str(buf));
                }
            }
            start = if alnum { i } else { i + 1 };
        }
        prev_lower = b.is_some_and(|b| b.is_ascii_lowercase());
    }
}

impl Bm25 {
    /// Bytes of heap the index takes (estimated from capacities).
    pub fn heap_bytes(&self) -> usize {
        super::heap::map_bytes(&self.terms)
            + self.terms.keys().map(String::capacity).sum::<usize>()
            + super::heap::vec_bytes(&self.postings)
            + self.postings.iter().map(super::heap::vec_bytes).sum::<usize>()
    }

    /// `texts`: each tool's name and description, in the index's order.
    #[cfg(test)]
    pub fn build<'a>(texts: impl Iterator<Item = &'a str>) -> Bm25 {
        let terms: Vec<Vec<String>> = texts.map(terms).collect();
        Self::from_terms(terms.iter().map(|t| t.iter().map(String::as_str)))
    }

    /// The same from each text's [`terms`] (read before, or kept from an earlier build).
    pub fn from_terms<'a, D: ExactSizeIterator<Item = &'a str>>(docs: impl Iterator<Item = D>) -> Bm25 {
        let mut index = Bm25::default();
        let mut lengths = Vec::new();
        for (d, words) in docs.enumerate() {
            let mut tf: Map<u32, f32> = Map::default();
            lengths.push(words.len() as f32);
            for w in words {
                let id = match index.terms.get(w) {
                    Some(&id) => id,
                    None => {
                        let id = index.terms.len() as u32;
                        index.terms.insert(w.to_string(), id);
                        index.postings.push(Vec::new());
                        id
                    }
                };
                *tf.entry(id).or_default() += 1.0;
            }
            for (id, f) in tf {
                index.postings[id as usize].push((d as u32, f));
            }
        }
        let n = lengths.len().max(1) as f32;
        let avg = (lengths.iter().sum::<f32>() / n).max(1.0);
        // Each doc's length normalisation, `k1 * (1 - b + b * len / avg)`.
        let norm: Vec<f32> = lengths.iter().map(|l| K1 * (1.0 - B + B * l / avg)).collect();
        let idf: Vec<f32> = index
            .postings
            .iter()
            .map(|p| {
                let df = p.len() as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        for (p, &idf) in index.postings.iter_mut().zip(&idf) {
            for (d, part) in p.iter_mut() {
                let f = *part;
                *part = idf * f * (K1 + 1.0) / (f + norm[*d as usize]);
            }
        }
        index
    }

    /// Each matching doc's score over the best one's (0..1], into `out` (indexed by doc);
    /// returns the docs that match.
    #[cfg(test)]
    pub fn score(&self, query: &str, out: &mut [f32]) -> Vec<u32> {
        let mut touched = Vec::new();
        self.score_with(query, out, &mut Memo::default(), &mut touched);
        touched
    }

    /// [`Bm25::score`], each word's terms read once for all of a request's texts; the docs
    /// that match are added to `touched`.
    pub fn score_with(&self, query: &str, out: &mut [f32], memo: &mut Memo, touched: &mut Vec<u32>) {
        let start = touched.len();
        // A text's terms are its words' terms, one after the other.
        let mut ids: Vec<u32> = Vec::new();
        let mut buf = String::new();
        for word in query.split_whitespace() {
            match memo.known.get(word) {
                Some(&(a, b)) => ids.extend_from_slice(&memo.terms[a as usize..b as usize]),
                None => {
                    let before = ids.len();
                    each_term(word, &mut buf, |t| ids.extend(self.terms.get(t).copied()));
                    if memo.on {
                        let a = memo.terms.len() as u32;
                        memo.terms.extend_from_slice(&ids[before..]);
                        memo.known.insert(word.to_string(), (a, memo.terms.len() as u32));
                    }
                }
            }
        }
        // Each term once, where it first stands (a long request has a hundred terms and more:
        // a set, not the list searched for each).
        if ids.len() > 16 {
            let mut seen: Set<u32> = Set::with_capacity_and_hasher(ids.len(), Default::default());
            ids.retain(|id| seen.insert(*id));
        } else {
            let mut kept = 0;
            for j in 0..ids.len() {
                if !ids[..kept].contains(&ids[j]) {
                    ids[kept] = ids[j];
                    kept += 1;
                }
            }
            ids.truncate(kept);
        }
        for id in ids {
            for &(d, part) in &self.postings[id as usize] {
                let slot = &mut out[d as usize];
                if *slot == 0.0 {
                    touched.push(d);
                }
                *slot += part;
            }
        }
        let touched = &touched[start..];
        let best = touched.iter().map(|&d| out[d as usize]).fold(0.0, f32::max);
        if best > 0.0 {
            for &d in touched {
                out[d as usize] /= best;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_rare_words_and_splits_names() {
        let bm = Bm25::build(
            ["getPoolDetails Get details of a liquidity pool", "list_networks List the networks", "echo Echo back"]
                .into_iter(),
        );
        let mut out = vec![0.0; 3];
        let touched = bm.score("details of the pool", &mut out);
        assert_eq!(touched, vec![0]);
        assert!((out[0] - 1.0).abs() < 1e-6);
        let mut out = vec![0.0; 3];
        assert!(bm.score("the of and", &mut out).is_empty());
    }

    /// A word's terms read a piece at a time are its [`terms`], for words of every shape.
    #[test]
    fn each_term_reads_what_terms_reads() {
        let words = [
            "getPoolDetails",
            "list_networks",
            "fetch-pool-stats",
            "Echo",
            "ECHO",
            "a",
            "",
            "_",
            "--x--",
            "the",
            "The",
            "issues,",
            "(v2.0)",
            "3.5km",
            "camelCaseWordsHere",
            "HTTPServer",
            "iPhone",
            "network's",
            "café",
            "naïveTerms",
            "x_Y_z",
            "aB",
            "Ab",
            "replies.",
            "stories!",
            "it's",
            "UPPER_snake",
            "a1B2c3",
        ];
        let mut buf = String::new();
        for w in words {
            let mut read: Vec<String> = Vec::new();
            each_term(w, &mut buf, |t| read.push(t.to_string()));
            assert_eq!(read, terms(w), "{w:?}");
        }
    }

    /// A text's terms are its words' terms in order, so texts scored with a shared memo score
    /// as each alone, to the bit.
    #[test]
    fn texts_scored_together_score_as_each_alone() {
        let texts = [
            "getPoolDetails Get details of a liquidity pool",
            "list_networks List the networks",
            "echo Echo back what's said",
            "fetch-pool-stats for the network's pools",
        ];
        let bm = Bm25::build(texts.into_iter());
        for t in ["getPoolDetails List the pools", "the networks' details, of pools", ""] {
            assert_eq!(terms(t), t.split_whitespace().flat_map(terms).collect::<Vec<_>>(), "{t}");
        }
        let mut memo = Memo::new(true, 32);
        for q in ["details of the liquidity pool", "pool details", "list networks and echo", "pool details"] {
            let (mut alone, mut together) = (vec![0.0; 4], vec![0.0; 4]);
            let a = bm.score(q, &mut alone);
            // Added after what the list held.
            let mut b = vec![7];
            bm.score_with(q, &mut together, &mut memo, &mut b);
            assert_eq!(b[0], 7);
            assert_eq!(a, b[1..], "{q}");
            assert_eq!(
                alone.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                together.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
            assert!(!a.is_empty(), "{q}");
        }
    }
}
