//! The semantic tier: static token embeddings (model2vec-style), distilled offline from the
//! all-MiniLM-L6-v2 sentence encoder by scripts/distill-embeddings.py, fine-tuned contrastively
//! on tool-finding queries by scripts/train-embeddings.py, and committed under `model/` (the
//! vocabulary and one int8 vector per WordPiece token, with a scale that carries the token's
//! weight). A text's vector is the sum of its tokens' vectors, L2 normalised; two texts are as
//! related as their vectors' cosine.
//!
//! Nothing is read at start-up: the table is part of the binary and decoded on the first
//! search ([`model`]). Tool vectors are cached process-wide by a hash of the embedded text
//! ([`embed_cached`]), so a registry snapshot rebuilt for a new custom app or upstream server
//! embeds only the tools it has not seen.

use std::sync::{Arc, Mutex, OnceLock};

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use super::hash::Map;

static VECTORS: &[u8] = include_bytes!("model/vectors.bin");
static VOCAB: &str = include_str!("model/vocab.txt");

/// Longest word WordPiece splits; longer ones are skipped (as BERT does, by [UNK]).
const MAX_WORD: usize = 100;
/// Only a text's first this many bytes are embedded: the meaning of a request is in its start,
/// and a megabyte query from a hostile agent must not stall search in WordPiece.
const MAX_TEXT: usize = 4096;

/// The decoded table.
pub struct Model {
    dim: usize,
    ids: Map<&'static str, u32>,
    scales: Vec<f32>,
    /// count x dim int8 values, as stored.
    data: &'static [u8],
}

/// The model, decoded on first use; `None` if the committed table does not parse (then search
/// is lexical only).
pub fn model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL.get_or_init(|| Model::decode(VECTORS, VOCAB)).as_ref()
}

impl Model {
    fn decode(bytes: &'static [u8], vocab: &'static str) -> Option<Model> {
        let header = bytes.get(..16)?;
        if &header[..8] != b"WBEMB1\0\0" {
            return None;
        }
        let count = u32::from_le_bytes(header[8..12].try_into().ok()?) as usize;
        let dim = u32::from_le_bytes(header[12..16].try_into().ok()?) as usize;
        let scales_end = 16 + count * 4;
        let scales: Vec<f32> =
            bytes.get(16..scales_end)?.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let data = bytes.get(scales_end..scales_end + count * dim)?;
        let ids: Map<&'static str, u32> = vocab.lines().enumerate().map(|(i, t)| (t, i as u32)).collect();
        (ids.len() == count && dim > 0).then_some(Model { dim, ids, scales, data })
    }

    /// BERT's uncased WordPiece: lower-case, split at spaces and punctuation (and camelCase and
    /// snake_case, which tool and parameter names use), then each word greedily into the longest
    /// vocabulary pieces (`##` marks a continuation). Punctuation itself is dropped.
    fn tokens(&self, text: &str, out: &mut Vec<u32>) {
        let mut word = String::new();
        let mut prev_lower = false;
        let flush = |word: &mut String, out: &mut Vec<u32>| {
            if !word.is_empty() {
                self.word_pieces(word, out);
                word.clear();
            }
        };
        for c in text.chars() {
            if c.is_alphanumeric() {
                if c.is_uppercase() && prev_lower {
                    flush(&mut word, out);
                }
                prev_lower = c.is_lowercase() || c.is_ascii_digit();
                word.extend(c.to_lowercase());
            } else {
                prev_lower = false;
                flush(&mut word, out);
            }
        }
        flush(&mut word, out);
    }

    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        if word.len() > MAX_WORD || !word.is_ascii() {
            return;
        }
        let start_len = out.len();
        let mut start = 0;
        let mut piece = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.ids.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    // BERT reads the whole word as [UNK], which carries nothing.
                    out.truncate(start_len);
                    return;
                }
            }
        }
    }

    /// The text's vector (unit length), or `None` when no token of it is known.
    pub fn embed(&self, text: &str) -> Option<Vec<f32>> {
        let mut end = text.len().min(MAX_TEXT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        let mut ids = Vec::new();
        self.tokens(text, &mut ids);
        let mut v = vec![0.0_f32; self.dim];
        for id in ids {
            let id = id as usize;
            let scale = self.scales[id];
            let row = &self.data[id * self.dim..(id + 1) * self.dim];
            for (x, &q) in v.iter_mut().zip(row) {
                *x += scale * f32::from(q as i8);
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm <= f32::EPSILON {
            return None;
        }
        v.iter_mut().for_each(|x| *x /= norm);
        Some(v)
    }
}

/// A tool text's vector, from the process-wide cache when this exact text was embedded before.
pub fn embed_cached(model: &Model, text: &str) -> Option<Arc<[f32]>> {
    type Cache = Mutex<Map<u64, Option<Arc<[f32]>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    // SipHash, not the index's Fx hash: custom tools' texts are the agent's to choose.
    let mut h = DefaultHasher::new();
    h.write(text.as_bytes());
    h.write_u32(text.len() as u32);
    let key = h.finish();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return v.clone();
    }
    let v: Option<Arc<[f32]>> = model.embed(text).map(Into::into);
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, v.clone());
    v
}

/// Cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_decodes_and_relates_meanings() {
        let m = model().expect("model/vectors.bin decodes");
        let e = |t: &str| m.embed(t).expect("known words");
        let issue = e("create a new issue");
        assert!(cosine(&issue, &e("open a bug ticket")) > cosine(&issue, &e("weather forecast for paris")));
        assert!(m.embed("@@@ ###").is_none());
    }

    /// Attack: a hostile agent sends a megabyte query to stall search; only its first
    /// [`MAX_TEXT`] bytes are embedded, so the cost is bounded.
    #[test]
    fn a_huge_query_is_embedded_by_its_start_only() {
        let m = model().expect("decodes");
        let start = "list open pull requests ".repeat(200);
        let huge = format!("{start}{}", "zzqx".repeat(250_000));
        let started = std::time::Instant::now();
        assert_eq!(m.embed(&huge), m.embed(&huge[..MAX_TEXT]));
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn wordpiece_splits_names_and_unknown_words() {
        let m = model().expect("decodes");
        let mut ids = Vec::new();
        m.tokens("listDirectory git_status", &mut ids);
        assert!(ids.len() >= 4, "{ids:?}");
    }
}
