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
        let bits = self.bits;
        let row = self.dim / 8 * bits;
        let bytes = &self.data[id * row..(id + 1) * row];
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
        let mut pieces: Map<String, Vec<u32>> = Map::default();
        // Token id -> its scaled row's place in `rows`.
        let mut at: Map<u32, usize> = Map::default();
        let mut rows: Vec<f32> = Vec::new();
        let mut ids = Vec::new();
        let mut split = |word: &str, out: &mut Vec<u32>| match pieces.get(word) {
            Some(p) => out.extend_from_slice(p),
            None => {
                let start = out.len();
                self.word_pieces(word, out);
                pieces.insert(word.to_string(), out[start..].to_vec());
            }
        };
        texts
            .iter()
            .map(|text| {
                ids.clear();
                self.tokens_with(super::text::prefix(text, MAX_TEXT), &mut ids, &mut split);
                let mut v = vec![0.0_f32; self.dim];
                for &id in &ids {
                    if id as usize >= self.count {
                        continue;
                    }
                    let start = *at.entry(id).or_insert_with(|| {
                        let start = rows.len();
                        rows.resize(start + self.dim, 0.0);
                        // Added to zeros, each value is the scaled one `add_row` adds.
                        self.add_row(id as usize, self.scale(id as usize), &mut rows[start..]);
                        start
                    });
                    for (x, r) in v.iter_mut().zip(&rows[start..start + self.dim]) {
                        *x += r;
                    }
                }
                unit(v)
            })
            .collect()
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

/// A tool's vector, compact: int8 components and the scale that makes them the unit vector
/// (`x = scale * q`). Ranking reads the same within rounding (each component is off by at most
/// half a step of 1/127 of the largest).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub data: Box<[i8]>,
}

impl Quantized {
    /// `v` (unit length) rounded to int8 steps of its largest component.
    pub fn new(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
        if max <= f32::EPSILON || !max.is_finite() {
            return Quantized { scale: 0.0, data: vec![0; v.len()].into() };
        }
        let scale = max / 127.0;
        Quantized { scale, data: v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect() }
    }
}

/// Every tool's vector in one block: a row of `dim` int8 values and a scale per tool (scale 0:
/// the tool has no vector, none of its words is known).
#[derive(Default)]
pub struct Vectors {
    dim: usize,
    scales: Vec<f32>,
    data: Vec<i8>,
    /// Each row's L1 norm times its scale (the unit vector's L1 norm): how far a query rounded
    /// to int8 steps can move the row's dot product ([`Vectors::approx_many`]).
    spread: Vec<f32>,
}

impl Vectors {
    pub fn with_capacity(dim: usize, tools: usize) -> Vectors {
        Vectors {
            dim,
            scales: Vec::with_capacity(tools),
            data: Vec::with_capacity(dim * tools),
            spread: Vec::with_capacity(tools),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    pub fn push(&mut self, v: Option<&Quantized>) {
        match v {
            Some(q) if q.data.len() == self.dim && q.scale.is_finite() && q.scale > 0.0 => {
                self.scales.push(q.scale);
                self.data.extend_from_slice(&q.data);
                let l1: i64 = q.data.iter().map(|&x| i64::from(x).abs()).sum();
                self.spread.push(q.scale * l1 as f32);
            }
            _ => {
                self.scales.push(0.0);
                self.data.extend(std::iter::repeat_n(0, self.dim));
                self.spread.push(0.0);
            }
        }
    }

    /// Each tool's cosine with the unit vector `q` (`None` for tools without a vector): the
    /// reference [`Vectors::cosines_many`] is checked against.
    #[cfg(test)]
    pub fn cosines(&self, q: &[f32]) -> Vec<Option<f32>> {
        if q.len() != self.dim || self.dim == 0 {
            return vec![None; self.scales.len()];
        }
        let dot = dot_fn(self.dim);
        self.scales
            .iter()
            .zip(self.data.chunks_exact(self.dim))
            .map(|(&scale, row)| (scale > 0.0).then(|| scale * dot(q, row)))
            .collect()
    }

    /// Each tool's cosine with each of the unit vectors `qs`, in one pass over the tools (each
    /// row is read once for all of them): query `k`'s cosine with tool `d` at `k * tools + d`,
    /// NaN for tools without a vector. The same bits as [`Vectors::cosines`].
    pub fn cosines_many(&self, qs: &[&[f32]]) -> Vec<f32> {
        let tools = self.scales.len();
        let mut out = vec![f32::NAN; qs.len() * tools];
        if self.dim == 0 {
            return out;
        }
        let dots = dots_fn(self.dim);
        let valid: Vec<(usize, &[f32])> = qs.iter().copied().enumerate().filter(|(_, q)| q.len() == self.dim).collect();
        let mut dot = vec![0.0_f32; valid.len()];
        for group in valid.chunks(GROUP) {
            let queries: Vec<&[f32]> = group.iter().map(|&(_, q)| q).collect();
            let dot = &mut dot[..group.len()];
            for (d, (&scale, row)) in self.scales.iter().zip(self.data.chunks_exact(self.dim)).enumerate() {
                if scale > 0.0 {
                    dots(&queries, row, dot);
                    for (&(k, _), &x) in group.iter().zip(dot.iter()) {
                        out[k * tools + d] = scale * x;
                    }
                }
            }
        }
        out
    }

    /// Tool `d`'s cosine with the unit vector `q`: the bits [`Vectors::cosines_many`] gives it,
    /// NaN when the tool has no vector or `q` is of another length.
    #[inline]
    pub fn cosine(&self, d: usize, q: &[f32]) -> f32 {
        let scale = self.scales[d];
        if scale > 0.0 && q.len() == self.dim && self.dim > 0 {
            scale * dot_fn(self.dim)(q, &self.data[d * self.dim..(d + 1) * self.dim])
        } else {
            f32::NAN
        }
    }

    /// Each tool's cosine with each of the unit vectors `qs`, nearly: each query rounded to
    /// int8 steps of its largest component and multiplied in integers, in one pass over the
    /// tools (NaN for tools without a vector). Query `k`'s true cosine
    /// with tool `d` (what [`Vectors::cosine`] gives) is within [`Vectors::bounds`] of it. A large
    /// catalogue's cosines are read this way, and the exact one is made only for the tools
    /// whose bound can still matter (the integer products cost about a third of the float ones).
    /// `None` when this machine has no fast integer products (or the rows are not of a length
    /// they take): every cosine is then taken exactly, with [`Vectors::cosines_many`].
    pub fn approx_many(&self, qs: &[&[f32]]) -> Option<Approx> {
        let int_dots = int_dots_fn(self.dim)?;
        let tools = self.scales.len();
        // Each query in int8 steps of its largest component; a query of the wrong length or
        // without a finite largest component is left out (it has no values).
        let mut slots = vec![None; qs.len()];
        let mut steps: Vec<f32> = Vec::new();
        let mut rounded: Vec<i8> = Vec::new();
        for (k, q) in qs.iter().enumerate() {
            let max = q.iter().fold(0.0_f32, |m, x| m.max(x.abs()));
            if q.len() != self.dim || max <= f32::EPSILON || !max.is_finite() {
                continue;
            }
            let step = max / 127.0;
            rounded.extend(q.iter().map(|x| (x / step).round().clamp(-127.0, 127.0) as i8));
            slots[k] = Some(steps.len());
            steps.push(step);
        }
        let mut values = vec![f32::NAN; steps.len() * tools];
        if !values.is_empty() {
            int_dots(&rounded, &steps, &self.data, &self.scales, &mut values);
        }
        Some(Approx { values, slots, steps })
    }

    /// Query `k`'s values in `approx`, and what bounds each tool's cosine from above: the
    /// cosine of tool `d` is at most `values[d] + half * spread[d] + MARGIN` (half an int8 step
    /// of the query, with room for rounding, times the row's L1 norm: each component of the
    /// query is off by at most half a step). `None` when the query was left out.
    pub fn bounds<'a>(&'a self, approx: &'a Approx, k: usize) -> Option<Bounds<'a>> {
        let tools = self.scales.len();
        let j = approx.slots.get(k).copied().flatten()?;
        let half = approx.steps[j] / 2.0 * 1.001;
        Some(Bounds { values: &approx.values[j * tools..(j + 1) * tools], spread: &self.spread, half })
    }

    /// Bytes of heap the vectors take.
    pub fn heap_bytes(&self) -> usize {
        self.scales.capacity() * 4 + self.data.capacity() + self.spread.capacity() * 4
    }
}

/// [`Vectors::approx_many`]'s values: query `k`'s near cosine with tool `d` at
/// `slots[k] * tools + d` (no slot: the query was left out), and each slot's int8 step.
pub struct Approx {
    values: Vec<f32>,
    slots: Vec<Option<usize>>,
    steps: Vec<f32>,
}

/// One query's near cosines with every tool, and what bounds the true ones ([`Vectors::bounds`]).
pub struct Bounds<'a> {
    pub values: &'a [f32],
    pub spread: &'a [f32],
    pub half: f32,
}

impl Bounds<'_> {
    /// Room for the float sums' rounding (the exact cosine's and the near one's).
    pub const MARGIN: f32 = 1e-4;

    /// At least tool `d`'s cosine (NaN for a tool without a vector).
    #[inline]
    pub fn upper(&self, d: usize) -> f32 {
        self.values[d] + self.half * self.spread[d] + Self::MARGIN
    }
}

/// The near cosines of int8 queries with every row of a table of tools, when this machine has
/// a fast way (`None`: take every cosine exactly): `int_dots(qs, steps, data, scales, out)`, the
/// queries one after another in `qs`, each of the rows' length (`data.len() / scales.len()`),
/// query `j`'s integer product with row `d` times `scales[d] * steps[j]` into
/// `out[j * tools + d]` (rows of scale 0 are left as they are). The integer sums are exact in
/// any order: every way gives the same values.
type IntDots = fn(&[i8], &[f32], &[i8], &[f32], &mut [f32]);

fn int_dots_fn(dim: usize) -> Option<IntDots> {
    #[cfg(target_arch = "x86_64")]
    if dim > 0 && dim.is_multiple_of(32) && std::arch::is_x86_feature_detected!("avx2") {
        return Some(int_dots_avx2_checked);
    }
    let _ = dim;
    None
}

/// The reference the fast [`IntDots`] are checked against. (127 * 128 * a row's length stays
/// far inside i32 for any table this build reads.)
#[cfg(test)]
fn int_dots(qs: &[i8], steps: &[f32], data: &[i8], scales: &[f32], out: &mut [f32]) {
    let tools = scales.len();
    let dim = data.len() / tools;
    for (d, row) in data.chunks_exact(dim).enumerate() {
        if scales[d] > 0.0 {
            for (j, q) in qs.chunks_exact(dim).enumerate() {
                let x: i32 = q.iter().zip(row).map(|(&a, &b)| i32::from(a) * i32::from(b)).sum();
                out[j * tools + d] = scales[d] * steps[j] * x as f32;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn int_dots_avx2_checked(qs: &[i8], steps: &[f32], data: &[i8], scales: &[f32], out: &mut [f32]) {
    let tools = scales.len();
    assert!(tools > 0 && data.len().is_multiple_of(tools));
    let dim = data.len() / tools;
    assert!(dim > 0 && dim.is_multiple_of(32) && qs.len() == steps.len() * dim);
    assert!(out.len() == tools * steps.len());
    // SAFETY: chosen by `int_dots_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { int_dots_avx2(qs, steps, data, dim, scales, out) }
}

/// [`int_dots`] in AVX2 registers, 32 values and four queries at a time: the row's absolute
/// values (read unsigned, so a stored -128 is 128) times each query's values with the row's
/// signs, in pairs of i16 (at most 2 * 128 * 127: no saturation), summed into i32 lanes. The
/// queries are rounded by [`Vectors::approx_many`] and never -128 (whose sign could not be
/// turned).
///
/// # Safety
/// The CPU must have AVX2; `dim` a multiple of 32, `data` rows of `dim`, one per scale, `qs`
/// one query of `dim` per step, and `out` one value per row and query.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn int_dots_avx2(qs: &[i8], steps: &[f32], data: &[i8], dim: usize, scales: &[f32], out: &mut [f32]) {
    use std::arch::x86_64::*;
    let nq = steps.len();
    let tools = scales.len();
    let ones = _mm256_set1_epi16(1);
    let q = qs.as_ptr();
    // One query's 32-value products with a row's, paired into i32 lanes (a macro: a closure
    // would not be compiled for AVX2).
    macro_rules! term {
        ($x:expr, $ax:expr, $y:expr) => {
            _mm256_madd_epi16(
                _mm256_maddubs_epi16($ax, _mm256_sign_epi8(_mm256_loadu_si256($y.cast::<__m256i>()), $x)),
                ones,
            )
        };
    }
    for (d, &scale) in scales.iter().enumerate() {
        if scale.is_nan() || scale <= 0.0 {
            continue;
        }
        // SAFETY: row d is data[d * dim..(d + 1) * dim].
        let r = unsafe { data.as_ptr().add(d * dim) };
        let mut j = 0;
        while j + 4 <= nq {
            let (mut a0, mut a1, mut a2, mut a3) =
                (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256());
            let mut i = 0;
            while i < dim {
                // SAFETY: i + 32 <= dim; queries j..j + 4 are below nq.
                unsafe {
                    let x = _mm256_loadu_si256(r.add(i).cast::<__m256i>());
                    let ax = _mm256_abs_epi8(x);
                    a0 = _mm256_add_epi32(a0, term!(x, ax, q.add(j * dim + i)));
                    a1 = _mm256_add_epi32(a1, term!(x, ax, q.add((j + 1) * dim + i)));
                    a2 = _mm256_add_epi32(a2, term!(x, ax, q.add((j + 2) * dim + i)));
                    a3 = _mm256_add_epi32(a3, term!(x, ax, q.add((j + 3) * dim + i)));
                }
                i += 32;
            }
            // Per 128-bit half: (a0, a1, a2, a3) summed, then the halves added.
            let h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
            let s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            let mut four = [0_i32; 4];
            // SAFETY: four i32 into an array of four.
            unsafe { _mm_storeu_si128(four.as_mut_ptr().cast::<__m128i>(), s) };
            for (t, x) in four.into_iter().enumerate() {
                out[(j + t) * tools + d] = scale * steps[j + t] * x as f32;
            }
            j += 4;
        }
        while j < nq {
            let mut a = _mm256_setzero_si256();
            let mut i = 0;
            while i < dim {
                // SAFETY: as above.
                unsafe {
                    let x = _mm256_loadu_si256(r.add(i).cast::<__m256i>());
                    a = _mm256_add_epi32(a, term!(x, _mm256_abs_epi8(x), q.add(j * dim + i)));
                }
                i += 32;
            }
            let s = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
            out[j * tools + d] = scale * steps[j] * _mm_cvtsi128_si32(s) as f32;
            j += 1;
        }
    }
}

/// The dot product of a query vector and an int8 row, the fastest way this machine has (the
/// reference [`dots_fn`] is checked against). Every way sums in the same order ([`dot_lanes`]), so they give the same bits.
fn dot_fn(dim: usize) -> fn(&[f32], &[i8]) -> f32 {
    if !dim.is_multiple_of(LANES) {
        return dot_sequential;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return dot_avx2_checked;
    }
    dot_lanes
}

/// How many queries one pass over the rows takes (a request's texts: the whole request and up
/// to eight clauses).
const GROUP: usize = 9;

/// The dot products of up to [`GROUP`] query vectors with one int8 row, into `out`: each the
/// bits of [`dot_fn`]'s, the row converted once for all of them.
fn dots_fn(dim: usize) -> fn(&[&[f32]], &[i8], &mut [f32]) {
    if dim.is_multiple_of(LANES) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return dots_avx2_checked;
        }
        return |qs, row, out| qs.iter().zip(out).for_each(|(q, o)| *o = dot_lanes(q, row));
    }
    |qs, row, out| qs.iter().zip(out).for_each(|(q, o)| *o = dot_sequential(q, row))
}

#[cfg(target_arch = "x86_64")]
fn dots_avx2_checked(qs: &[&[f32]], row: &[i8], out: &mut [f32]) {
    assert!(qs.len() <= GROUP && out.len() >= qs.len() && row.len().is_multiple_of(LANES));
    assert!(qs.iter().all(|q| q.len() == row.len()));
    // SAFETY: chosen by `dots_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { dots_avx2(qs, row, out) }
}

/// [`dot_lanes`] of several queries with one row in AVX2 registers, four queries at a time:
/// the row's eight values converted once for the four, then multiplied and added into each
/// query's own sums (multiply and add apart: no fused multiply-add, which rounds once where the
/// scalar path rounds twice), and each query's lanes reduced in the scalar path's order.
///
/// # Safety
/// The CPU must have AVX2; `out` at least as long as `qs`, each query of `row`'s length (a
/// multiple of 8).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dots_avx2(qs: &[&[f32]], row: &[i8], out: &mut [f32]) {
    use std::arch::x86_64::*;
    // (0+4, 1+5, 2+6, 3+7), then (b0+b2, b1+b3), then c0+c1.
    let reduce = |acc: __m256| {
        let b = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
        let c = _mm_add_ps(b, _mm_movehl_ps(b, b));
        _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps(c, c, 1)))
    };
    let len = row.len();
    let r = row.as_ptr();
    let mut k = 0;
    while k + 4 <= qs.len() {
        let (q0, q1, q2, q3) = (qs[k].as_ptr(), qs[k + 1].as_ptr(), qs[k + 2].as_ptr(), qs[k + 3].as_ptr());
        let (mut a0, mut a1, mut a2, mut a3) =
            (_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        while i < len {
            // SAFETY: i + 8 <= len, and every query is len long.
            unsafe {
                let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(r.add(i).cast::<__m128i>())));
                a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(q0.add(i)), x));
                a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(q1.add(i)), x));
                a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(q2.add(i)), x));
                a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(q3.add(i)), x));
            }
            i += LANES;
        }
        out[k] = reduce(a0);
        out[k + 1] = reduce(a1);
        out[k + 2] = reduce(a2);
        out[k + 3] = reduce(a3);
        k += 4;
    }
    while k < qs.len() {
        let q = qs[k].as_ptr();
        let mut a = _mm256_setzero_ps();
        let mut i = 0;
        while i < len {
            // SAFETY: as above.
            unsafe {
                let x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(r.add(i).cast::<__m128i>())));
                a = _mm256_add_ps(a, _mm256_mul_ps(_mm256_loadu_ps(q.add(i)), x));
            }
            i += LANES;
        }
        out[k] = reduce(a);
        k += 1;
    }
}

/// Lanes of the dot product: lane `k` sums components `k`, `k + 8`, ..., and the lanes are added
/// pairwise at the end (`(0+4) + (2+6)`, then `(1+5) + (3+7)`, then those two), as the AVX2 path
/// does in its registers.
const LANES: usize = 8;

fn dot_sequential(q: &[f32], row: &[i8]) -> f32 {
    q.iter().zip(row).map(|(x, &r)| x * f32::from(r)).sum()
}

/// The scalar dot product in lanes (`q.len()` a multiple of [`LANES`]).
fn dot_lanes(q: &[f32], row: &[i8]) -> f32 {
    let mut acc = [0.0_f32; LANES];
    for (x, r) in q.chunks_exact(LANES).zip(row.chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] += x[k] * f32::from(r[k]);
        }
    }
    let b = [acc[0] + acc[4], acc[1] + acc[5], acc[2] + acc[6], acc[3] + acc[7]];
    let c = [b[0] + b[2], b[1] + b[3]];
    c[0] + c[1]
}

#[cfg(target_arch = "x86_64")]
fn dot_avx2_checked(q: &[f32], row: &[i8]) -> f32 {
    assert!(q.len() == row.len() && q.len().is_multiple_of(LANES));
    // SAFETY: chosen by `dot_fn` only when the CPU has AVX2; the lengths are checked above.
    unsafe { dot_avx2(q, row) }
}

/// [`dot_lanes`] in AVX2 registers: multiply and add apart (no fused multiply-add, which rounds
/// once where the scalar path rounds twice), the lanes reduced in the scalar path's order.
///
/// # Safety
/// The CPU must have AVX2; `q` and `row` must have the same length, a multiple of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(q: &[f32], row: &[i8]) -> f32 {
    use std::arch::x86_64::*;
    let mut acc = _mm256_setzero_ps();
    let mut i = 0;
    while i < q.len() {
        // SAFETY: i + 8 <= len for both slices (same length, a multiple of 8).
        let (x, r) =
            unsafe { (_mm256_loadu_ps(q.as_ptr().add(i)), _mm_loadl_epi64(row.as_ptr().add(i).cast::<__m128i>())) };
        let r = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(r));
        acc = _mm256_add_ps(acc, _mm256_mul_ps(x, r));
        i += LANES;
    }
    // (0+4, 1+5, 2+6, 3+7), then (b0+b2, b1+b3), then c0+c1.
    let b = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    let c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    let d = _mm_add_ss(c, _mm_shuffle_ps(c, c, 1));
    _mm_cvtss_f32(d)
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

    /// The AVX2 dot product gives the scalar one's bits, on the table's own vectors and on
    /// extreme values.
    #[test]
    fn every_dot_product_path_gives_the_same_bits() {
        let m = model().expect("decodes");
        let texts = ["open a ticket about the login bug", "weather forecast for paris", "list my pull requests"];
        let queries: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).expect("known")).collect();
        let mut rows: Vec<Vec<i8>> = queries.iter().map(|q| Quantized::new(q).data.into_vec()).collect();
        rows.push(vec![127; m.dim()]);
        rows.push(vec![-127; m.dim()]);
        rows.push((0..m.dim()).map(|i| (i as i64 * 37 % 255 - 127) as i8).collect());
        for q in &queries {
            for row in &rows {
                let lanes = dot_lanes(q, row);
                assert!((lanes - dot_sequential(q, row)).abs() < 1e-3);
                assert_eq!(dot_fn(m.dim())(q, row).to_bits(), lanes.to_bits());
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    assert_eq!(dot_avx2_checked(q, row).to_bits(), lanes.to_bits());
                }
            }
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

    /// The fused kernel gives each query the single dot product's bits, for every count of
    /// queries up to a group, on the table's vectors and on extreme rows.
    #[test]
    fn the_fused_dot_products_give_each_querys_own_bits() {
        let m = model().expect("decodes");
        let texts = [
            "open a ticket about the login bug",
            "weather forecast for paris",
            "list my pull requests",
            "send an email to the team",
            "plot the sales as a bar chart",
            "read the config file",
            "search the web for rust news",
            "book a table for two",
            "merge the branch",
        ];
        let queries: Vec<Vec<f32>> = texts.iter().map(|t| m.embed(t).expect("known")).collect();
        let mut rows: Vec<Vec<i8>> = queries.iter().map(|q| Quantized::new(q).data.into_vec()).collect();
        rows.push(vec![127; m.dim()]);
        rows.push(vec![-127; m.dim()]);
        rows.push((0..m.dim()).map(|i| (i as i64 * 37 % 255 - 127) as i8).collect());
        let single = dot_fn(m.dim());
        for n in 1..=GROUP {
            let qs: Vec<&[f32]> = queries[queries.len() - n..].iter().map(Vec::as_slice).collect();
            for row in &rows {
                let mut out = vec![f32::NAN; n];
                dots_fn(m.dim())(&qs, row, &mut out);
                for (q, x) in qs.iter().zip(&out) {
                    assert_eq!(x.to_bits(), single(q, row).to_bits(), "{n} queries");
                    assert_eq!(x.to_bits(), dot_lanes(q, row).to_bits(), "{n} queries");
                }
            }
        }
    }

    #[test]
    fn compact_vectors_rank_as_the_full_ones() {
        let m = model().expect("decodes");
        let q = m.embed("open a ticket about the login bug").expect("known words");
        let texts = ["create a jira issue", "post a slack message", "list pull requests", "report a bug"];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        let mut full = Vec::new();
        for t in texts {
            let v = m.embed(t).expect("known");
            full.push(cosine(&q, &v));
            block.push(Some(&Quantized::new(&v)));
        }
        block.push(None);
        let compact = block.cosines(&q);
        assert_eq!(compact.last(), Some(&None));
        for (c, f) in compact.iter().zip(&full) {
            assert!((c.expect("a vector") - f).abs() < 0.01, "{c:?} vs {f}");
        }
        // A wrong-length or non-finite vector is stored as none.
        let mut bad = Vectors::with_capacity(m.dim(), 2);
        bad.push(Some(&Quantized { scale: 1.0, data: vec![1; 3].into() }));
        bad.push(Some(&Quantized { scale: f32::NAN, data: vec![1; m.dim()].into() }));
        assert_eq!(bad.cosines(&q), vec![None, None]);
    }

    /// Several queries' cosines in one pass are each query's own, to the bit, NaN where a tool
    /// has no vector or a query the wrong length.
    #[test]
    fn cosines_of_several_queries_are_each_ones_own() {
        let m = model().expect("decodes");
        let texts = ["create a jira issue", "post a slack message", "list pull requests", "report a bug"];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        for t in texts {
            block.push(m.embed_tool(t).as_ref());
        }
        block.push(None);
        // More queries than the fused kernel takes at once, and one of the wrong length among them.
        let queries: Vec<Vec<f32>> = [
            "open a ticket about the login bug",
            "weather in paris",
            "merge my branch",
            "send an email",
            "read a file",
            "plot a chart",
            "search the web",
            "book a flight",
            "list my calendar events",
            "translate this text",
        ]
        .iter()
        .map(|t| m.embed(t).expect("known"))
        .collect();
        assert!(queries.len() > GROUP);
        let short = vec![0.5_f32; 3];
        let qs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).chain([short.as_slice()]).collect();
        let many = block.cosines_many(&qs);
        let tools = texts.len() + 1;
        assert_eq!(many.len(), qs.len() * tools);
        for (k, q) in queries.iter().enumerate() {
            for (d, c) in block.cosines(q).into_iter().enumerate() {
                match c {
                    Some(c) => assert_eq!(many[k * tools + d].to_bits(), c.to_bits()),
                    None => assert!(many[k * tools + d].is_nan()),
                }
            }
        }
        assert!(many[queries.len() * tools..].iter().all(|c| c.is_nan()));
    }

    /// The fast integer products give the reference's values to the bit, for every count of
    /// queries up to a request's texts, on extreme rows (a stored -128 among them) and a row
    /// without a vector.
    #[test]
    fn the_integer_products_give_the_reference_values() {
        let Some(fast) = int_dots_fn(128) else { return };
        let dim = 128;
        let mut data: Vec<i8> = Vec::new();
        data.extend(std::iter::repeat_n(127, dim));
        data.extend(std::iter::repeat_n(-128, dim));
        data.extend((0..dim).map(|i| (i as i64 * 37 % 256 - 128) as i8));
        data.extend(std::iter::repeat_n(5, dim));
        let scales = [0.01, 0.02, 0.003, 0.0];
        for nq in 1..=GROUP {
            let qs: Vec<i8> = (0..nq * dim).map(|i| (i as i64 * 53 % 255 - 127) as i8).collect();
            let steps: Vec<f32> = (0..nq).map(|j| 0.001 * (j + 1) as f32).collect();
            let (mut a, mut b) = (vec![f32::NAN; nq * 4], vec![f32::NAN; nq * 4]);
            fast(&qs, &steps, &data, &scales, &mut a);
            int_dots(&qs, &steps, &data, &scales, &mut b);
            assert_eq!(
                a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
            // The row without a vector is left as it was.
            assert!((0..nq).all(|j| a[j * 4 + 3].is_nan()));
        }
    }

    /// Every exact cosine lies within the near one's bounds, for the table's own texts as
    /// queries and tools; the bounds are tight enough to pass most tools over.
    #[test]
    fn near_cosines_bound_the_exact_ones() {
        let m = model().expect("decodes");
        let texts = [
            "create a jira issue",
            "post a slack message to the team channel",
            "list pull requests waiting for my review",
            "report a bug",
            "weather forecast for paris tomorrow",
            "convert 100 usd to eur",
            "read the sales sheet, plot it as a bar chart and save it",
            "x",
        ];
        let mut block = Vectors::with_capacity(m.dim(), texts.len() + 1);
        for t in texts {
            block.push(m.embed_tool(t).as_ref());
        }
        block.push(None);
        let queries: Vec<Vec<f32>> = texts.iter().filter_map(|t| m.embed(t)).collect();
        let mut qs: Vec<&[f32]> = queries.iter().map(Vec::as_slice).collect();
        qs.insert(2, &[0.5; 3]);
        let Some(approx) = block.approx_many(&qs) else { return };
        assert!(block.bounds(&approx, 2).is_none(), "a query of the wrong length has no values");
        let mut widest = 0.0_f32;
        for (k, q) in qs.iter().enumerate().filter(|(k, _)| *k != 2) {
            let bounds = block.bounds(&approx, k).expect("a query of the table's length");
            for d in 0..texts.len() + 1 {
                let exact = block.cosine(d, q);
                if d == texts.len() {
                    assert!(exact.is_nan() && bounds.upper(d).is_nan());
                    continue;
                }
                let (near, upper) = (bounds.values[d], bounds.upper(d));
                assert!(
                    exact <= upper && exact >= near - (upper - near),
                    "{k} {d}: {exact} vs {near} +- {}",
                    upper - near
                );
                widest = widest.max(upper - near);
            }
        }
        assert!(widest < 0.05, "bounds {widest} wide");
    }
}
