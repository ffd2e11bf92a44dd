//! The semantic tier: static token embeddings (model2vec-style), distilled offline from the
//! all-MiniLM-L6-v2 sentence encoder by scripts/distill-embeddings.py, fine-tuned contrastively
//! on tool-finding queries by scripts/train-embeddings.py, and committed under `model/` (the
//! vocabulary and one vector per WordPiece token: `bits`-bit signed integers, packed, with a
//! scale that carries the token's weight). A text's vector is the sum of its tokens' vectors, L2
//! normalised; two texts are as related as their vectors' cosine.
//!
//! Nothing is read at start-up, and the table is never decoded into the heap: the vectors and
//! scales are read in place from the binary's static bytes, and the vocabulary is found through
//! a small open-addressing table of token ids over the static vocabulary text (built on the
//! first search: about 240 KB, where a map of strings took about 1 MB). Tool vectors are kept
//! compact, one int8 row and a scale per tool ([`Quantized`], [`Vectors`]), and cached
//! process-wide by a hash of the embedded text ([`embed_cached`]), so a registry snapshot rebuilt
//! for a new custom app embeds only the tools it has not seen; upstream servers' vectors persist
//! in SQLite per server ([`super::store`]).

use std::sync::{Arc, Mutex, OnceLock};

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use super::hash::Map;
use super::lines::Lines;

mod vectors;
pub use vectors::{Bounds, Quantized, Vectors};

static VECTORS: &[u8] = MODEL_BYTES;
static VOCAB: &str = include_str!("model/vocab.txt");

/// A fingerprint of the committed table, computed at compile time (every 61st byte and the
/// length, FNV-1a): stored vectors made with another table are not used.
pub const MODEL_ID: u64 = {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < VECTORS_LEN {
        h ^= MODEL_BYTES[i] as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
        i += 61;
    }
    h ^ VECTORS_LEN as u64
};
const MODEL_BYTES: &[u8] = include_bytes!("model/vectors.bin");
const VECTORS_LEN: usize = MODEL_BYTES.len();

/// The most rows of a request [`Model::embed_many`] makes room for at once (a long request has
/// about 150 distinct tokens; more grow the buffer as needed).
const RESERVED_ROWS: usize = 256;
/// Longest word WordPiece splits; longer ones are skipped (as BERT does, by [UNK]).
const MAX_WORD: usize = 100;
/// Only a text's first this many bytes are embedded: the meaning of a request is in its start,
/// and a megabyte query from a hostile agent must not stall search in WordPiece.
const MAX_TEXT: usize = 4096;

thread_local! {
    /// How many tool texts this thread has embedded (not found in the cache or the store): an
    /// index is built on the thread that asks for it, so tests count here that a restart embeds
    /// nothing, whatever other threads do.
    static TOOL_EMBEDDINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Tool texts embedded on this thread so far.
pub fn tool_embeddings() -> u64 {
    TOOL_EMBEDDINGS.with(std::cell::Cell::get)
}

/// The table's format: magic, count, dim, bits (u32 each), then count little-endian f32 scales,
/// then count rows of `dim` values of `bits` bits each, packed eight values to `bits` bytes
/// (least significant first), each stored as `q + (2^(bits-1) - 1)` for `q` in
/// `-(2^(bits-1) - 1)..=2^(bits-1) - 1` (scripts/train-embeddings.py writes it).
const MAGIC: &[u8; 8] = b"WBEMB2\0\0";
const HEADER: usize = 20;

/// The table, read in place.
pub struct Model {
    dim: usize,
    count: usize,
    /// Bits a value (2 to 8).
    bits: usize,
    /// count little-endian f32 scales, as stored.
    scales: &'static [u8],
    /// count rows of dim * bits / 8 bytes, as stored.
    data: &'static [u8],
    /// The vocabulary, one token a line, found by its text ([`Lines`]).
    vocab: Lines,
}

/// The model, made ready on first use; `None` if the committed table does not parse (then search
/// is lexical only).
pub fn model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL.get_or_init(|| Model::decode(VECTORS, VOCAB)).as_ref()
}

impl Model {
    fn decode(bytes: &'static [u8], vocab: &'static str) -> Option<Model> {
        let header = bytes.get(..HEADER)?;
        if &header[..8] != MAGIC {
            return None;
        }
        let u32_at = |at: usize| u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let (count, dim, bits) = (u32_at(8) as usize, u32_at(12) as usize, u32_at(16) as usize);
        // Whole groups of eight values a row, at most a byte a value.
        if dim == 0 || !dim.is_multiple_of(8) || !(2..=8).contains(&bits) {
            return None;
        }
        let scales_end = HEADER + count.checked_mul(4)?;
        let scales = bytes.get(HEADER..scales_end)?;
        let row = dim / 8 * bits;
        let data = bytes.get(scales_end..scales_end.checked_add(count.checked_mul(row)?)?)?;
        if scales_end + data.len() != bytes.len() {
            return None;
        }
        // Token ids are u16 in the lookup table: a larger vocabulary is not this build's.
        let vocab = Lines::new(vocab, count)?;
        Some(Model { dim, count, bits, scales, data, vocab })
    }

    /// Adds `scale` times row `id` to `v` (`v.len() == dim`).
    fn add_row(&self, id: usize, scale: f32, v: &mut [f32]) {
        let row = self.dim / 8 * self.bits;
        let bytes = &self.data[id * row..(id + 1) * row];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            assert!(v.len() == self.dim && (2..=8).contains(&self.bits));
            // SAFETY: the CPU has AVX2; `bytes` is dim / 8 groups of `bits` bytes, `v` dim long.
            unsafe { add_packed_avx2(bytes, self.bits, scale, v) };
            return;
        }
        add_packed(bytes, self.bits, scale, v);
    }

    /// The id of a vocabulary token.
    fn id(&self, piece: &str) -> Option<u32> {
        self.vocab.id(piece).map(|id| id as u32)
    }

    fn scale(&self, id: usize) -> f32 {
        let b = &self.scales[id * 4..id * 4 + 4];
        f32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// BERT's uncased WordPiece: lower-case, split at spaces and punctuation (and camelCase and
    /// snake_case, which tool and parameter names use), then each word greedily into the longest
    /// vocabulary pieces (`##` marks a continuation). Punctuation itself is dropped.
    fn tokens(&self, text: &str, out: &mut Vec<u32>) {
        self.tokens_with(text, out, &mut |word, out| self.word_pieces(word, out));
    }

    /// [`Model::tokens`], each word split by `pieces`.
    fn tokens_with(&self, text: &str, out: &mut Vec<u32>, pieces: &mut dyn FnMut(&str, &mut Vec<u32>)) {
        let mut word = String::new();
        let mut prev_lower = false;
        let mut flush = |word: &mut String, out: &mut Vec<u32>| {
            if !word.is_empty() {
                pieces(word, out);
                word.clear();
            }
        };
        for c in text.chars() {
            if c.is_alphanumeric() {
                if c.is_uppercase() && prev_lower {
                    flush(&mut word, out);
                }
                prev_lower = c.is_lowercase() || c.is_ascii_digit();
                if c.is_ascii() {
                    word.push(c.to_ascii_lowercase());
                } else {
                    word.extend(c.to_lowercase());
                }
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
        // A whole word the vocabulary has is its one piece, found first: no string is made.
        if let Some(id) = self.id(word) {
            out.push(id);
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
                if let Some(id) = self.id(&piece) {
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
        let mut ids = Vec::new();
        self.tokens(super::text::prefix(text, MAX_TEXT), &mut ids);
        let mut v = vec![0.0_f32; self.dim];
        for id in ids {
            let id = id as usize;
            if id >= self.count {
                continue;
            }
            self.add_row(id, self.scale(id), &mut v);
        }
        unit(v)
    }

    /// [`Model::embed`] of each of a request's texts, to the bit, with what they share read once:
    /// a word's pieces, and a token's row decoded and scaled (the clauses of a request are its
    /// own words again).
    pub fn embed_many(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        // (Room made once for the whole request's words, the first text: most of a clause's
        // words are the request's again.)
        let words = texts.first().map_or(0, |t| super::query::memo_room(t));
        // Word -> its pieces' place in `known` (one list for every word's pieces).
        let mut pieces: Map<String, (u32, u32)> = Map::default();
        pieces.reserve(words);
        let mut known: Vec<u32> = Vec::new();
        // Token id -> its scaled row's place in `rows`.
        let mut at: Map<u32, usize> = Map::default();
        at.reserve(words);
        let mut rows: Vec<f32> = Vec::new();
        let mut ids = Vec::new();
        // A text's tokens' rows, as places in `rows`.
        let mut starts: Vec<usize> = Vec::new();
        let mut split = |word: &str, out: &mut Vec<u32>| match pieces.get(word) {
            Some(&(a, b)) => out.extend_from_slice(&known[a as usize..b as usize]),
            None => {
                let start = out.len();
                self.word_pieces(word, out);
                let a = known.len() as u32;
                known.extend_from_slice(&out[start..]);
                pieces.insert(word.to_string(), (a, known.len() as u32));
            }
        };
        texts
            .iter()
            .map(|text| {
                ids.clear();
                self.tokens_with(super::text::prefix(text, MAX_TEXT), &mut ids, &mut split);
                // The first text is the whole request: room for the rows its clauses read too
                // (a request's distinct tokens; a long run of one repeated word asks no more).
                if rows.is_empty() {
                    rows.reserve(ids.len().min(RESERVED_ROWS) * self.dim);
                }
                starts.clear();
                for &id in &ids {
                    if id as usize >= self.count {
                        continue;
                    }
                    starts.push(*at.entry(id).or_insert_with(|| {
                        let start = rows.len();
                        rows.resize(start + self.dim, 0.0);
                        // Added to zeros, each value is the scaled one `add_row` adds.
                        self.add_row(id as usize, self.scale(id as usize), &mut rows[start..]);
                        start
                    }));
                }
                let mut v = vec![0.0_f32; self.dim];
                add_rows(&rows, &starts, &mut v);
                unit(v)
            })
            .collect()
    }
}

/// Adds the rows of `rows` that start at `starts` to `v`, one after the other (each row as long
/// as `v`): `v[j] += row[j]` for each row in turn, the reference [`add_rows_avx`] is checked
/// against.
fn add_rows(rows: &[f32], starts: &[usize], v: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if v.len().is_multiple_of(8) && std::arch::is_x86_feature_detected!("avx") {
        let dim = v.len();
        assert!(starts.iter().all(|&s| s.checked_add(dim).is_some_and(|end| end <= rows.len())));
        // SAFETY: the CPU has AVX; every row `starts[k]..starts[k] + v.len()` is in `rows`, and
        // `v` is a whole number of groups of eight.
        unsafe { add_rows_avx(rows, starts, v) };
        return;
    }
    let dim = v.len();
    for &s in starts {
        for (x, r) in v.iter_mut().zip(&rows[s..s + dim]) {
            *x += r;
        }
    }
}

/// [`add_rows`] eight values at a time: each group of eight of `v` held in a register while
/// every row's group is added to it in the rows' order, so each value takes the same additions
/// in the same order as in the scalar loop (the same bits). A long request's texts sum a few
/// hundred rows of 128 values; the package is built for size, where that loop stayed scalar.
///
/// # Safety
/// The CPU must have AVX; `v.len()` a multiple of eight; `starts[k] + v.len() <= rows.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn add_rows_avx(rows: &[f32], starts: &[usize], v: &mut [f32]) {
    use std::arch::x86_64::*;
    let base = rows.as_ptr();
    for (g, out) in v.chunks_exact_mut(8).enumerate() {
        // SAFETY: `out` is eight f32.
        let mut acc = unsafe { _mm256_loadu_ps(out.as_ptr()) };
        for &s in starts {
            // SAFETY: `s + 8 * g + 8 <= s + v.len() <= rows.len()` (the caller's promise).
            acc = _mm256_add_ps(acc, unsafe { _mm256_loadu_ps(base.add(s + 8 * g)) });
        }
        // SAFETY: as above.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), acc) };
    }
}

/// Adds `scale` times the packed values of `bytes` (groups of eight values in `bits` bytes) to
/// `v`: each value `x += scale * (q - offset)`, the reference [`add_packed_avx2`] is checked
/// against.
fn add_packed(bytes: &[u8], bits: usize, scale: f32, v: &mut [f32]) {
    let mask = (1u64 << bits) - 1;
    let offset = ((1u64 << (bits - 1)) - 1) as f32;
    for (group, out) in bytes.chunks_exact(bits).zip(v.chunks_exact_mut(8)) {
        let mut word = [0u8; 8];
        word[..bits].copy_from_slice(group);
        let word = u64::from_le_bytes(word);
        for (k, x) in out.iter_mut().enumerate() {
            *x += scale * (((word >> (k * bits)) & mask) as f32 - offset);
        }
    }
}

/// [`add_packed`] eight values at a time in AVX2 registers: a group's word shifted by each
/// value's place in two registers of four, the low halves gathered and masked, then the same
/// float operations in the same order (subtract, multiply, add: no fused multiply-add), so
/// every value has the scalar path's bits. (The package is built for size, which turns LLVM's
/// vectorisers off: this loop was the largest part of embedding a request.)
///
/// # Safety
/// The CPU must have AVX2; `bits` in 2..=8, `bytes` a whole number of groups of `bits` bytes,
/// and `v` at least eight values a group.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_packed_avx2(bytes: &[u8], bits: usize, scale: f32, v: &mut [f32]) {
    use std::arch::x86_64::*;
    let b = bits as i64;
    let low = _mm256_setr_epi64x(0, b, 2 * b, 3 * b);
    let high = _mm256_setr_epi64x(4 * b, 5 * b, 6 * b, 7 * b);
    // The low 32 bits of each 64-bit lane, first.
    let gather = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let mask = _mm256_set1_epi32(((1u32 << bits) - 1) as i32);
    let offset = _mm256_set1_ps(((1u64 << (bits - 1)) - 1) as f32);
    let scale = _mm256_set1_ps(scale);
    for (g, out) in v.chunks_exact_mut(8).take(bytes.len() / bits).enumerate() {
        // The group's bytes as the low ones of a word: eight read at once where the row has
        // them (the bytes past the group's are shifted out of every value), else copied.
        let at = g * bits;
        let word = match bytes.get(at..at + 8) {
            Some(eight) => i64::from_le_bytes(eight.try_into().unwrap_or_default()),
            None => {
                let mut word = [0u8; 8];
                word[..bits].copy_from_slice(&bytes[at..at + bits]);
                i64::from_le_bytes(word)
            }
        };
        let word = _mm256_set1_epi64x(word);
        let lo = _mm256_permutevar8x32_epi32(_mm256_srlv_epi64(word, low), gather);
        let hi = _mm256_permutevar8x32_epi32(_mm256_srlv_epi64(word, high), gather);
        let q = _mm256_and_si256(_mm256_inserti128_si256(lo, _mm256_castsi256_si128(hi), 1), mask);
        let x = _mm256_mul_ps(scale, _mm256_sub_ps(_mm256_cvtepi32_ps(q), offset));
        // SAFETY: `out` is eight f32.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), _mm256_add_ps(_mm256_loadu_ps(out.as_ptr()), x)) };
    }
}

/// `v` over its length, or `None` when it has none.
fn unit(mut v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm <= f32::EPSILON {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}

impl Model {
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether `word` is a whole word of the vocabulary (the multilingual tier's evidence that a
    /// request is English).
    pub fn knows_word(&self, word: &str) -> bool {
        self.id(word).is_some()
    }

    /// Bytes of heap the table takes (the vocabulary's line starts and its table of ids).
    pub fn heap_bytes(&self) -> usize {
        self.vocab.heap_bytes()
    }

    /// A tool text's compact vector, counted as one embedding done.
    pub fn embed_tool(&self, text: &str) -> Option<Quantized> {
        TOOL_EMBEDDINGS.with(|n| n.set(n.get() + 1));
        self.embed(text).map(|v| Quantized::new(&v))
    }
}

/// A tool text's vector, from the process-wide cache when this exact text was embedded before.
pub fn embed_cached(model: &Model, text: &str) -> Option<Arc<Quantized>> {
    type Cache = Mutex<Map<u64, Option<Arc<Quantized>>>>;
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
    let v: Option<Arc<Quantized>> = model.embed_tool(text).map(Arc::new);
    cache.lock().unwrap_or_else(|p| p.into_inner()).insert(key, v.clone());
    v
}

/// Cosine of two unit vectors.
#[cfg(test)]
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

    /// The packed rows read as the values written: a table of two tokens in each width, and a
    /// table cut short, padded, in another format or width is refused (search is then lexical
    /// only) rather than read out of bounds.
    #[test]
    fn packed_rows_decode_exactly_and_a_damaged_table_is_refused() {
        for bits in 2..=8usize {
            let top = (1i64 << (bits - 1)) - 1;
            let rows: Vec<Vec<i64>> = vec![(0..16).map(|j| j % (2 * top + 1) - top).collect(), vec![top; 16]];
            let mut bytes = MAGIC.to_vec();
            for n in [2u32, 16, bits as u32] {
                bytes.extend(n.to_le_bytes());
            }
            bytes.extend(0.5f32.to_le_bytes());
            bytes.extend(2.0f32.to_le_bytes());
            for row in &rows {
                for group in row.chunks(8) {
                    let word = group.iter().enumerate().fold(0u64, |w, (k, &q)| w | (((q + top) as u64) << (k * bits)));
                    bytes.extend(&word.to_le_bytes()[..bits]);
                }
            }
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            let m = Model::decode(bytes, "a\nb\n").unwrap_or_else(|| panic!("{bits} bits decode"));
            for (id, row) in rows.iter().enumerate() {
                let mut v = vec![0.0; 16];
                m.add_row(id, m.scale(id), &mut v);
                let want: Vec<f32> = row.iter().map(|&q| q as f32 * [0.5, 2.0][id]).collect();
                assert_eq!(v, want, "{bits} bits, row {id}");
            }
            assert!(Model::decode(&bytes[..bytes.len() - 1], "a\nb\n").is_none());
            let padded: &'static [u8] = Box::leak([bytes, &[0]].concat().into_boxed_slice());
            assert!(Model::decode(padded, "a\nb\n").is_none());
            let mut other = bytes.to_vec();
            other[16] = 9;
            assert!(Model::decode(Box::leak(other.into_boxed_slice()), "a\nb\n").is_none());
            let mut old = bytes.to_vec();
            old[..8].copy_from_slice(b"WBEMB1\0\0");
            assert!(Model::decode(Box::leak(old.into_boxed_slice()), "a\nb\n").is_none());
        }
        assert!(Model::decode(&VECTORS[..VECTORS.len() - 1], VOCAB).is_none());
    }

    /// Rows decoded eight values at a time in AVX2 add the scalar path's bits, in every width,
    /// over every value a width has and onto values already there.
    #[test]
    fn packed_rows_add_the_same_bits_either_way() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            for bits in 2..=8usize {
                let bytes: Vec<u8> = (0..bits * 64).map(|i| (i * 151 % 256) as u8).collect();
                for scale in [0.013_f32, -3.5, 1e-7] {
                    let start: Vec<f32> = (0..512).map(|i| (i as f32 * 0.37).sin()).collect();
                    let (mut a, mut b) = (start.clone(), start);
                    add_packed(&bytes, bits, scale, &mut a);
                    // SAFETY: AVX2 is there; 64 groups of `bits` bytes and 512 values.
                    unsafe { add_packed_avx2(&bytes, bits, scale, &mut b) };
                    let bits_of = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits_of(&a), bits_of(&b), "{bits} bits, scale {scale}");
                }
            }
        }
        let m = model().expect("decodes");
        let (mut a, mut b) = (vec![0.0; m.dim()], vec![0.0; m.dim()]);
        let row = m.dim() / 8 * m.bits;
        add_packed(&m.data[7 * row..8 * row], m.bits, m.scale(7), &mut a);
        m.add_row(7, m.scale(7), &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn wordpiece_splits_names_and_unknown_words() {
        let m = model().expect("decodes");
        let mut ids = Vec::new();
        m.tokens("listDirectory git_status", &mut ids);
        assert!(ids.len() >= 4, "{ids:?}");
        // Every vocabulary line is found as itself, through the table of ids.
        for id in (0..m.count).step_by(97) {
            let token = m.vocab.get(id);
            assert_eq!(m.vocab.get(m.id(token).expect("known") as usize), token);
        }
        assert_eq!(m.id("zzqxzzqx"), None);
    }

    /// Rows summed eight values at a time give the scalar sum's bits: rows of every sign and
    /// size, a row repeated, none at all, values that cancel and overflow.
    #[test]
    fn rows_add_the_same_bits_either_way() {
        let dim = 128;
        let mut rows = Vec::new();
        let mut x = 0x2545_f491_u32;
        for _ in 0..40 * dim {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = (x as f32 / u32::MAX as f32 - 0.5) * 10f32.powi((x % 9) as i32 - 4);
            rows.push(v);
        }
        rows[5 * dim..6 * dim].fill(f32::MAX);
        rows[6 * dim..7 * dim].iter_mut().for_each(|v| *v = -*v);
        let starts: Vec<usize> = [0, 3, 3, 39, 5, 5, 6, 1, 17, 0].iter().map(|k| k * dim).collect();
        for n in 0..=starts.len() {
            let mut fast = vec![0.25_f32; dim];
            add_rows(&rows, &starts[..n], &mut fast);
            let mut slow = vec![0.25_f32; dim];
            for &s in &starts[..n] {
                for (x, r) in slow.iter_mut().zip(&rows[s..s + dim]) {
                    *x += r;
                }
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&slow), "{n} rows");
        }
    }

    /// A request's texts embedded together are each embedded alone, to the bit: repeated
    /// words, camelCase, unknown words, an empty text and one past the bytes embedded.
    #[test]
    fn texts_embedded_together_are_each_ones_own() {
        let m = model().expect("decodes");
        let long = "list open pull requests, then merge them ".repeat(150);
        let texts = [
            "read the sales sheet, plot it as a bar chart and save it",
            "read the sales sheet",
            "plot it as a bar chart",
            "listDirectory git_status zzqxzzqx",
            "",
            "@@@ ###",
            long.as_str(),
            "plot it as a bar chart",
        ];
        let together = m.embed_many(&texts);
        assert_eq!(together.len(), texts.len());
        for (t, v) in texts.iter().zip(&together) {
            let alone = m.embed(t);
            let bits = |v: &Option<Vec<f32>>| v.as_ref().map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            assert_eq!(bits(v), bits(&alone), "{t:.40}");
        }
        assert!(together[4].is_none() && together[5].is_none() && together[0].is_some());
    }
}
