//! Upstream servers' search data, kept across restarts: one SQLite row per server
//! (`search_vectors`, migration 9), keyed by a SHA-256 of everything the index reads of the
//! server's tools (their names, descriptions and schema texts, in order) with the version of the
//! reading ([`ANALYSIS_VERSION`]), the table's fingerprint and its width. The row holds each
//! tool's vector and its [`Analysis`] (tokens of its prose and examples, parameter names, BM25
//! terms): a restart loads each server's row instead of embedding and tokenising its tools; a
//! server whose listing changed (or a new one) is read alone and its row replaced. A row whose
//! hash, format or length does not match, that is larger than [`MAX_ROW`], or whose vectors are
//! not unit vectors, is ignored and recomputed: the row is a cache, never trusted over the tools'
//! own texts.

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::embed::{self, Model, Quantized, Vectors};
use super::hash::Map;
use super::index::{Analysis, Pool, analyse, embedded_text_with};
use super::precomputed::{Entry, Reader};
use crate::registry::ToolEntry;
use crate::storage::Storage;

/// The version of what a row holds besides vectors: bump it whenever tokenising, stemming, the
/// glossary's reading of a description, BM25's terms or parameter names change, so that rows
/// written before are read again (`the_analysis_version_is_current` fails until it is).
pub const ANALYSIS_VERSION: u32 = 7;

/// The largest row read back (a larger one is recomputed, and not stored).
pub const MAX_ROW: usize = 32 << 20;

const ROW_MAGIC: &[u8; 8] = b"WBROW2\0\0";

/// Where per-server vectors persist (SQLite in the server; anything in a test).
pub trait VectorStore: Send + Sync {
    /// `server`'s stored row: its listing hash and its vectors, if there is one.
    fn load(&self, server: &str) -> Option<(Vec<u8>, Vec<u8>)>;
    /// Replaces `server`'s row. A failure is not an error of the search: the vectors are
    /// computed again next time.
    fn save(&self, server: &str, hash: &[u8], vectors: &[u8]);
}

impl VectorStore for Storage {
    fn load(&self, server: &str) -> Option<(Vec<u8>, Vec<u8>)> {
        let server = server.to_string();
        self.call_blocking(move |c| {
            c.query_row(
                "SELECT hash, vectors FROM search_vectors WHERE server = ?1 AND length(vectors) <= ?2",
                params![server, MAX_ROW as i64],
                |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?)),
            )
            .optional()
        })
        .map_err(|e| tracing::debug!(error = %e, "stored search vectors could not be read"))
        .ok()
        .flatten()
    }

    fn save(&self, server: &str, hash: &[u8], vectors: &[u8]) {
        let (server, hash, vectors) = (server.to_string(), hash.to_vec(), vectors.to_vec());
        let saved = self.call_blocking(move |c| {
            c.execute(
                "INSERT INTO search_vectors (server, hash, vectors) VALUES (?1, ?2, ?3)
                 ON CONFLICT (server) DO UPDATE SET hash = excluded.hash, vectors = excluded.vectors",
                params![server, hash, vectors],
            )
            .map(|_| ())
        });
        if let Err(e) = saved {
            tracing::debug!(error = %e, "search vectors could not be stored");
        }
    }
}

/// A row's bytes: per tool, its scale (f32, little-endian; 0 for a tool without a vector) and
/// its `dim` int8 components.
pub fn encode(vectors: &[Option<Quantized>], dim: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(vectors.len() * (4 + dim));
    for v in vectors {
        match v {
            Some(q) if q.data.len() == dim => {
                out.extend_from_slice(&q.scale.to_le_bytes());
                out.extend(q.data.iter().map(|&x| x as u8));
            }
            _ => {
                out.extend_from_slice(&0.0_f32.to_le_bytes());
                out.extend(std::iter::repeat_n(0, dim));
            }
        }
    }
    out
}

/// A row read back: `None` when it is not `count` vectors of `dim`, or any vector is not a unit
/// vector in int8 steps (a corrupt or forged row).
pub fn decode(bytes: &[u8], count: usize, dim: usize) -> Option<Vec<Option<Quantized>>> {
    let width = 4 + dim;
    if dim == 0 || bytes.len() != count.checked_mul(width)? {
        return None;
    }
    bytes
        .chunks_exact(width)
        .map(|row| {
            let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
            let data: Box<[i8]> = row[4..].iter().map(|&b| b as i8).collect();
            if scale == 0.0 && data.iter().all(|&x| x == 0) {
                return Some(None);
            }
            // A unit vector's largest component is at most 1 and at least 1/sqrt(dim).
            let max = data.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
            let norm = scale * data.iter().map(|&x| f32::from(x).powi(2)).sum::<f32>().sqrt();
            let unit = scale.is_finite() && scale > 0.0 && max == 127 && (norm - 1.0).abs() < 0.02;
            unit.then_some(Some(Quantized { scale, data }))
        })
        .collect()
}

/// The key of a server's row: everything the index reads of its tools, in order, with the
/// version of the reading and the table the vectors are embedded by.
pub fn row_key(tools: &[&ToolEntry], dim: usize) -> [u8; 32] {
    key_of(
        tools.iter().map(|t| [t.name, t.integration, t.description, t.listed_schema().map_or("", |s| s.as_str())]),
        dim,
    )
}

/// [`row_key`] of each tool's (name, integration, description, schema text).
fn key_of<'a>(tools: impl ExactSizeIterator<Item = [&'a str; 4]>, dim: usize) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"workbench search rows 2\0");
    h.update(ANALYSIS_VERSION.to_le_bytes());
    h.update(embed::MODEL_ID.to_le_bytes());
    h.update((dim as u64).to_le_bytes());
    h.update((tools.len() as u64).to_le_bytes());
    for parts in tools {
        for part in parts {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
    }
    h.finalize().into()
}

/// A server's row: its strings once each (a u32 count, then per string a u32 length and its
/// UTF-8 bytes), then per tool its vector ([`encode`]'s layout), whether it takes an
/// `integration` argument (a byte) and its analysis' five lists of strings (each a u32 count and
/// the strings' u32 places in the row's strings).
pub fn encode_row(tools: &[(&Analysis, Option<&Quantized>)], pool: &Pool, dim: usize) -> Vec<u8> {
    let mut strings: Vec<&str> = Vec::new();
    let mut places: Map<&str, u32> = Map::default();
    let mut place = |id: u32| {
        let s = pool.get(id);
        *places.entry(s).or_insert_with(|| {
            strings.push(s);
            (strings.len() - 1) as u32
        })
    };
    let lists: Vec<[Vec<u32>; 5]> = tools
        .iter()
        .map(|(a, _)| {
            [&a.name, &a.examples, &a.prose, &a.params, &a.bm25].map(|l| l.iter().map(|&i| place(i)).collect())
        })
        .collect();
    let mut out = ROW_MAGIC.to_vec();
    out.extend((tools.len() as u32).to_le_bytes());
    out.extend((strings.len() as u32).to_le_bytes());
    for s in &strings {
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s.as_bytes());
    }
    for ((a, vector), lists) in tools.iter().zip(&lists) {
        out.extend(encode(&[vector.cloned()], dim));
        out.push(u8::from(a.agnostic));
        for list in lists {
            out.extend((list.len() as u32).to_le_bytes());
            for &i in list {
                out.extend(i.to_le_bytes());
            }
        }
    }
    out
}

/// A row read back, its strings pushed to `pool`: `None` (and nothing pushed) unless it is
/// exactly `count` tools' data in [`encode_row`]'s layout, with UTF-8 strings, places within the
/// row's strings and unit vectors of `dim` (a corrupt, truncated or forged row).
pub fn decode_row(
    bytes: &[u8],
    count: usize,
    dim: usize,
    pool: &mut Pool,
) -> Option<Vec<(Analysis, Option<Quantized>)>> {
    let mut r = Reader(bytes);
    if dim == 0 || r.take(8)? != ROW_MAGIC || r.u32()? as usize != count {
        return None;
    }
    // Counts the bytes cannot hold are refused before anything is allocated for them: a string
    // takes at least 4 bytes, a tool its vector, a byte and five counts.
    let n = r.u32()? as usize;
    if n > r.0.len() / 4 || count > r.0.len() / (4 + dim + 1 + 20) {
        return None;
    }
    let mut strings: Vec<&str> = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.u32()? as usize;
        strings.push(std::str::from_utf8(r.take(len)?).ok()?);
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let vector = decode(r.take(4 + dim)?, 1, dim)?.pop()?;
        let agnostic = match r.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let mut lists: [Vec<u32>; 5] = Default::default();
        for list in &mut lists {
            let len = r.u32()? as usize;
            if len > r.0.len() / 4 {
                return None;
            }
            list.reserve_exact(len);
            for _ in 0..len {
                let i = r.u32()?;
                if i as usize >= n {
                    return None;
                }
                list.push(i);
            }
        }
        let [name, examples, prose, params, bm25] = lists;
        out.push((Analysis { name, examples, prose, params, agnostic, bm25 }, vector));
    }
    if !r.0.is_empty() {
        return None;
    }
    let base = pool.len() as u32;
    for s in strings {
        pool.push(s);
    }
    for (a, _) in &mut out {
        for list in [&mut a.name, &mut a.examples, &mut a.prose, &mut a.params, &mut a.bm25] {
            list.iter_mut().for_each(|i| *i += base);
        }
    }
    Some(out)
}

/// Every tool's [`Analysis`] and vector, in the registry's order. The catalogue's and custom
/// apps' tools are read here (their vectors from the committed data or the process-wide cache);
/// upstream servers' tools, with a store and the table, from their server's row when its key
/// matches, else they are read and embedded (that server's only) and the row replaced.
/// `pre`: the compiled tools' committed data (their analyses and vectors, used as they are).
pub fn tool_data(
    model: Option<&Model>,
    tools: &[ToolEntry],
    pre: &mut [Option<Entry>],
    pool: &mut Pool,
    store: Option<&Arc<dyn VectorStore>>,
) -> (Vec<Analysis>, Vectors) {
    let mut analyses: Vec<Option<Analysis>> = Vec::with_capacity(tools.len());
    let mut found: Vec<Option<Quantized>> = Vec::with_capacity(tools.len());
    let mut servers: Map<&str, Vec<usize>> = Map::default();
    let mut order: Vec<&str> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let entry = pre.get_mut(i).and_then(Option::take);
        if let Some(e) = entry {
            analyses.push(Some(e.analysis));
            found.push(e.vector);
            continue;
        }
        if let (Some(_), Some(_), Some(u)) = (model, store, tool.upstream()) {
            let members = servers.entry(u.server.as_str()).or_default();
            if members.is_empty() {
                order.push(u.server.as_str());
            }
            members.push(i);
            analyses.push(None);
            found.push(None);
            continue;
        }
        let (analysis, params) = analyse(tool, pool);
        found
            .push(model.and_then(|m| embed::embed_cached(m, &embedded_text_with(tool, &params))).map(|q| (*q).clone()));
        analyses.push(Some(analysis));
    }
    if let (Some(model), Some(store)) = (model, store) {
        let dim = model.dim();
        for server in order {
            let members = &servers[server];
            let entries: Vec<&ToolEntry> = members.iter().map(|&i| &tools[i]).collect();
            let key = row_key(&entries, dim);
            let stored = store
                .load(server)
                .filter(|(h, _)| h.as_slice() == key.as_slice())
                .and_then(|(_, bytes)| decode_row(&bytes, entries.len(), dim, pool));
            let data = match stored {
                Some(data) => data,
                None => {
                    let fresh: Vec<(Analysis, Option<Quantized>)> = entries
                        .iter()
                        .map(|t| {
                            let (analysis, params) = analyse(t, pool);
                            let vector = model.embed_tool(&embedded_text_with(t, &params));
                            (analysis, vector)
                        })
                        .collect();
                    let refs: Vec<(&Analysis, Option<&Quantized>)> =
                        fresh.iter().map(|(a, v)| (a, v.as_ref())).collect();
                    let row = encode_row(&refs, pool, dim);
                    if row.len() <= MAX_ROW {
                        store.save(server, &key, &row);
                    }
                    fresh
                }
            };
            for (&i, (analysis, vector)) in members.iter().zip(data) {
                analyses[i] = Some(analysis);
                found[i] = vector;
            }
        }
    }
    let analyses = analyses.into_iter().map(Option::unwrap_or_default).collect();
    let vectors = match model {
        Some(model) => {
            let mut out = Vectors::with_capacity(model.dim(), tools.len());
            for v in &found {
                out.push(v.as_ref());
            }
            out
        }
        None => Vectors::default(),
    };
    (analyses, vectors)
}

/// The fingerprint of [`ANALYSIS_VERSION`]'s reading (`the_analysis_version_is_current`).
#[cfg(test)]
const ANALYSIS_FINGERPRINT: u64 = 0xa45f_aa23_2cc0_ef22;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_and_forged_rows_are_refused() {
        let m = embed::model().expect("decodes");
        let dim = m.dim();
        let vectors = vec![m.embed_tool("create a jira issue"), None, m.embed_tool("send an email")];
        let bytes = encode(&vectors, dim);
        assert_eq!(decode(&bytes, 3, dim), Some(vectors.clone()));
        // Wrong count, wrong length, truncated.
        assert_eq!(decode(&bytes, 2, dim), None);
        assert_eq!(decode(&bytes[..bytes.len() - 1], 3, dim), None);
        assert_eq!(decode(&[], 1, dim), None);
        // A scale that is not finite, negative or makes no unit vector.
        for scale in [f32::NAN, f32::INFINITY, -0.01, 1.0, 1e-9] {
            let mut forged = bytes.clone();
            forged[..4].copy_from_slice(&scale.to_le_bytes());
            assert_eq!(decode(&forged, 3, dim), None, "{scale}");
        }
        // Components not in the unit vector's steps.
        let mut forged = bytes.clone();
        forged[4..4 + dim].fill(127);
        assert_eq!(decode(&forged, 3, dim), None);
        // An absurd count does not overflow.
        assert_eq!(decode(&bytes, usize::MAX, dim), None);
    }

    /// Three upstream tools' analyses and vectors, as the build reads them.
    fn sample(pool: &mut Pool) -> Vec<(Analysis, Option<Quantized>)> {
        let m = embed::model().expect("decodes");
        let registry =
            crate::registry::Registry::standard().with_upstream(catalogue("Wettervorhersage für eine Stadt"));
        registry
            .tools()
            .iter()
            .filter(|t| t.upstream().is_some())
            .take(3)
            .map(|t| {
                let (analysis, params) = analyse(t, pool);
                (analysis, m.embed_tool(&embedded_text_with(t, &params)))
            })
            .collect()
    }

    fn strings(pool: &Pool, a: &Analysis) -> Vec<Vec<String>> {
        [&a.name, &a.examples, &a.prose, &a.params, &a.bm25]
            .iter()
            .map(|l| l.iter().map(|&i| pool.get(i).to_string()).collect())
            .collect()
    }

    #[test]
    fn analysis_rows_round_trip_and_broken_rows_are_refused() {
        let dim = embed::model().expect("decodes").dim();
        let mut pool = Pool::default();
        let tools = sample(&mut pool);
        let refs: Vec<(&Analysis, Option<&Quantized>)> = tools.iter().map(|(a, v)| (a, v.as_ref())).collect();
        let row = encode_row(&refs, &pool, dim);
        let mut back = Pool::default();
        let read = decode_row(&row, 3, dim, &mut back).expect("reads back");
        for ((a, v), (b, w)) in tools.iter().zip(&read) {
            assert_eq!(strings(&pool, a), strings(&back, b));
            assert_eq!(a.agnostic, b.agnostic);
            assert_eq!(v, w);
        }
        assert!(strings(&back, &read[0].0)[2].len() > 3, "the prose is kept");
        let refused = |bytes: &[u8], count: usize| {
            let mut pool = Pool::default();
            let read = decode_row(bytes, count, dim, &mut pool);
            assert!(read.is_none() && pool.len() == 0, "nothing is read of a broken row");
        };
        // Another count, truncated anywhere, a byte more, nothing, another width or format.
        refused(&row, 2);
        refused(&row, usize::MAX);
        for cut in [0, 7, 12, 16, row.len() / 2, row.len() - 1] {
            refused(&row[..cut], 3);
        }
        refused(&[row.as_slice(), &[0]].concat(), 3);
        assert!(decode_row(&row, 3, dim + 1, &mut Pool::default()).is_none());
        let mut other = row.clone();
        other[5] ^= 1;
        refused(&other, 3);
        // Absurd counts of strings and of a list's entries, a place past the strings, text that
        // is not UTF-8: each byte of the row changed in turn is refused or read without panic.
        let strings_at = 16;
        let mut forged = row.clone();
        forged[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        refused(&forged, 3);
        let mut forged = row.clone();
        forged[strings_at + 4] = 0xff;
        refused(&forged, 3);
        let last_place = row.len() - 4;
        let mut forged = row.clone();
        forged[last_place..].copy_from_slice(&u32::MAX.to_le_bytes());
        refused(&forged, 3);
        for i in 0..row.len() {
            let mut flipped = row.clone();
            flipped[i] ^= 0x80;
            let _ = decode_row(&flipped, 3, dim, &mut Pool::default());
        }
    }

    /// Every search over the tools ranks the same, to the score, whether the upstream servers'
    /// rows were read back or computed.
    #[test]
    fn an_index_read_from_rows_ranks_as_a_fresh_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let storage = Storage::new(dir.path().join("wb.db"));
        let upstream = catalogue("Wettervorhersage für eine Stadt, stündlich");
        let fresh = crate::registry::Registry::standard().with_upstream(upstream.clone());
        let stored = |_: ()| {
            let r = crate::registry::Registry::standard().with_upstream(upstream.clone());
            r.keep_vectors_in(storage.clone());
            r
        };
        let _ = stored(()).index();
        let before = embed::tool_embeddings();
        let restarted = stored(());
        let _ = restarted.index();
        assert_eq!(embed::tool_embeddings(), before, "the restart read every row");
        for q in [
            "weather forecast for tomorrow",
            "book a train seat",
            "find my notes about the trip",
            "tag a note",
            "wetter morgen",
            "create a jira issue",
            "search train tickets from berlin to paris",
        ] {
            let a = fresh.index().search(q, 10, &|_| true);
            let b = restarted.index().search(q, 10, &|_| true);
            assert_eq!(a, b, "{q}");
        }
        assert_eq!(fresh.index().heap_report(), restarted.index().heap_report());
    }

    /// What a row holds besides vectors is pinned: when tokenising, stemming, the glossary's
    /// reading, BM25's terms or parameter names change, rows written before must not be read as
    /// current. Bump [`ANALYSIS_VERSION`] and set the fingerprint this test prints.
    #[test]
    fn the_analysis_version_is_current() {
        let registry = crate::registry::Registry::standard().with_upstream(catalogue(
            "Prévisions météo heure par heure pour une ville (\"Paris\", 'Lyon'): température, vent; \
             les relevés enregistrés arrondis à l'entier le plus proche",
        ));
        let mut pool = Pool::default();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for tool in registry.tools() {
            let (analysis, params) = analyse(tool, &mut pool);
            let text = format!("{:?} {} {params:?}", strings(&pool, &analysis), analysis.agnostic);
            for &b in text.as_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        }
        assert_eq!(
            (ANALYSIS_VERSION, h),
            (ANALYSIS_VERSION, ANALYSIS_FINGERPRINT),
            "what the index reads of a tool changed: bump ANALYSIS_VERSION and set ANALYSIS_FINGERPRINT to {h:#x}"
        );
    }

    fn server(name: &str, tools: &[(&str, &str)]) -> (String, Vec<crate::upstream::Listed>) {
        let listed = tools
            .iter()
            .map(|(tool, description)| crate::upstream::Listed {
                tool: tool.to_string(),
                description: description.to_string(),
                schema: serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}}).into(),
                effect: plugins::api::Effect::Read,
                unchecked: vec![],
            })
            .collect();
        (name.to_string(), listed)
    }

    fn catalogue(weather: &str) -> Arc<crate::upstream::Catalogue> {
        Arc::new(crate::upstream::Catalogue {
            generation: 1,
            servers: vec![
                server(
                    "trains",
                    &[("search_tickets", "Search train tickets between two stations"), ("book", "Book a seat")],
                ),
                server("skyview", &[("forecast", weather), ("alerts", "Severe weather alerts for a region")]),
                server(
                    "notes",
                    &[("add_note", "Add a note"), ("find_notes", "Find notes by text"), ("tag", "Tag a note")],
                ),
            ],
        })
    }

    /// Builds the index of the catalogue plus `upstream` over `storage` (as a new process would,
    /// with no vectors of these servers in memory); returns the embeddings it took and a ranking.
    fn build(storage: &Arc<Storage>, upstream: Arc<crate::upstream::Catalogue>) -> (u64, Vec<&'static str>) {
        let registry = crate::registry::Registry::standard().with_upstream(upstream);
        registry.keep_vectors_in(storage.clone());
        let before = embed::tool_embeddings();
        let index = registry.index();
        let took = embed::tool_embeddings() - before;
        let hits = index.search("weather forecast for tomorrow", 5, &|_| true).into_iter().map(|h| h.name).collect();
        (took, hits)
    }

    #[test]
    fn a_restart_embeds_nothing_and_a_changed_server_only_its_tools() {
        let dir = tempfile::tempdir().expect("tempdir");
        let storage = Storage::new(dir.path().join("wb.db"));
        // The catalogue's own tools come from the process-wide cache once embedded here.
        let _ = crate::registry::Registry::standard().index();
        let (first, hits) = build(&storage, catalogue("Weather forecast for a city"));
        assert_eq!(first, 7, "every upstream tool is embedded once");
        assert!(hits.iter().any(|h| h.starts_with("skyview")), "{hits:?}");
        let (again, same) = build(&storage, catalogue("Weather forecast for a city"));
        assert_eq!(again, 0, "a restart loads every server's vectors");
        assert_eq!(same, hits, "and ranks as before");
        let (changed, _) = build(&storage, catalogue("Hourly weather forecast for any place"));
        assert_eq!(changed, 2, "only the changed server's tools are embedded");
        let (after, _) = build(&storage, catalogue("Hourly weather forecast for any place"));
        assert_eq!(after, 0);
    }

    #[test]
    fn a_corrupt_or_forged_row_is_recomputed_not_trusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let storage = Storage::new(dir.path().join("wb.db"));
        let _ = crate::registry::Registry::standard().index();
        let (_, hits) = build(&storage, catalogue("Weather forecast for a city"));
        let tamper = |sql: &str| {
            let sql = sql.to_string();
            storage.call_blocking(move |c| c.execute(&sql, []).map(|_| ())).expect("update");
        };
        for sql in [
            // Wrong length, wrong hash, vectors that are no unit vectors, a row of another type.
            "UPDATE search_vectors SET vectors = substr(vectors, 1, 100) WHERE server = 'skyview'",
            "UPDATE search_vectors SET hash = zeroblob(32) WHERE server = 'skyview'",
            "UPDATE search_vectors SET vectors = randomblob(length(vectors)) WHERE server = 'skyview'",
            "UPDATE search_vectors SET vectors = 'not a blob', hash = 42 WHERE server = 'skyview'",
            // Larger than any row is read.
            "UPDATE search_vectors SET vectors = zeroblob(33554433) WHERE server = 'skyview'",
        ] {
            tamper(sql);
            let (took, again) = build(&storage, catalogue("Weather forecast for a city"));
            assert_eq!(took, 2, "{sql}: that server's tools are embedded again");
            assert_eq!(again, hits, "{sql}");
            let (took, _) = build(&storage, catalogue("Weather forecast for a city"));
            assert_eq!(took, 0, "{sql}: and its row is whole again");
        }
    }

    #[test]
    fn the_key_follows_every_text_their_order_and_the_width() {
        let key = |tools: &[[&str; 4]], dim| key_of(tools.iter().copied(), dim);
        let a = [["s_one", "s", "One.", "{}"], ["s_two", "s", "Two.", "{}"]];
        let b = [a[1], a[0]];
        assert_ne!(key(&a, 128), key(&b, 128));
        assert_ne!(key(&a, 128), key(&a, 64));
        assert_ne!(key(&a, 128), key(&a[..1], 128));
        // Parts do not run into each other, and the schema counts.
        assert_ne!(key(&[["s_one", "s", "One.", "{}"]], 128), key(&[["s_on", "es", "One.", "{}"]], 128));
        assert_ne!(key(&a[..1], 128), key(&[["s_one", "s", "One.", "{\"type\":\"object\"}"]], 128));
        assert_eq!(key(&a, 128), key(&a.clone(), 128));
    }
}
