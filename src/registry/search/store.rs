//! Upstream servers' tool vectors, kept across restarts: one SQLite row per server
//! (`search_vectors`, migration 9), keyed by a SHA-256 of what the semantic tier embeds of the
//! server's tools (their texts in order, the table's fingerprint and its width). A restart loads
//! each server's row instead of embedding its tools; a server whose listing changed (or a new
//! one) is embedded alone and its row replaced. A row whose hash or length does not match, or
//! whose vectors are not unit vectors, is ignored and recomputed: the row is a cache, never
//! trusted over the tools' own texts.

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::embed::{self, Model, Quantized, Vectors};
use super::hash::Map;
use crate::registry::ToolEntry;
use crate::storage::Storage;

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
            c.query_row("SELECT hash, vectors FROM search_vectors WHERE server = ?1", [server], |r| {
                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
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

/// The key of a server's row: what is embedded of each tool, in order, with the table it is
/// embedded by.
pub fn listing_hash<T: AsRef<str>>(texts: &[T], dim: usize) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"workbench search vectors 1\0");
    h.update(embed::MODEL_ID.to_le_bytes());
    h.update((dim as u64).to_le_bytes());
    h.update((texts.len() as u64).to_le_bytes());
    for t in texts {
        let t = t.as_ref();
        h.update((t.len() as u64).to_le_bytes());
        h.update(t.as_bytes());
    }
    h.finalize().into()
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

/// Every tool's vector, in the registry's order. The catalogue's and custom apps' tools come from
/// the process-wide cache; upstream servers' tools, with a store, from their server's row when
/// its hash matches, else they are embedded (that server's only) and the row replaced.
/// `embedded`: what is embedded of each tool ([`super::embedded_text`]), in the same order;
/// `known`: a tool's vector when it is already known (the compiled catalogue's, committed), so
/// its text is not embedded (its `embedded` text may be empty).
pub fn tool_vectors(
    model: &Model,
    tools: &[ToolEntry],
    embedded: &[String],
    known: &[Option<Option<Quantized>>],
    store: Option<&Arc<dyn VectorStore>>,
) -> Vectors {
    let dim = model.dim();
    let mut found: Vec<Option<Quantized>> = Vec::with_capacity(tools.len());
    let mut servers: Map<&str, Vec<usize>> = Map::default();
    let mut order: Vec<&str> = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        if let Some(Some(v)) = known.get(i) {
            found.push(v.clone());
            continue;
        }
        match (store, tool.upstream()) {
            (Some(_), Some(u)) => {
                let entry = servers.entry(u.server.as_str()).or_default();
                if entry.is_empty() {
                    order.push(u.server.as_str());
                }
                entry.push(i);
                found.push(None);
            }
            _ => found.push(embed::embed_cached(model, &embedded[i]).map(|q| (*q).clone())),
        }
    }
    if let Some(store) = store {
        for server in order {
            let members = &servers[server];
            let texts: Vec<&str> = members.iter().map(|&i| embedded[i].as_str()).collect();
            let hash = listing_hash(&texts, dim);
            let stored = store
                .load(server)
                .filter(|(h, _)| h.as_slice() == hash.as_slice())
                .and_then(|(_, bytes)| decode(&bytes, texts.len(), dim));
            let vectors = match stored {
                Some(v) => v,
                None => {
                    let fresh: Vec<Option<Quantized>> = texts.iter().map(|t| model.embed_tool(t)).collect();
                    store.save(server, &hash, &encode(&fresh, dim));
                    fresh
                }
            };
            for (&i, v) in members.iter().zip(vectors) {
                found[i] = v;
            }
        }
    }
    let mut out = Vectors::with_capacity(dim, tools.len());
    for v in &found {
        out.push(v.as_ref());
    }
    out
}

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

    fn server(name: &str, tools: &[(&str, &str)]) -> (String, Vec<crate::upstream::Listed>) {
        let listed = tools
            .iter()
            .map(|(tool, description)| crate::upstream::Listed {
                tool: tool.to_string(),
                description: description.to_string(),
                schema: serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}}),
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
    fn the_hash_follows_every_text_and_their_order() {
        let a = vec!["one".to_string(), "two".to_string()];
        let b = vec!["two".to_string(), "one".to_string()];
        let c = vec!["onetwo".to_string()];
        assert_ne!(listing_hash(&a, 128), listing_hash(&b, 128));
        assert_ne!(listing_hash(&a, 128), listing_hash(&c, 128));
        assert_ne!(listing_hash(&a, 128), listing_hash(&a, 64));
        assert_eq!(listing_hash(&a, 128), listing_hash(&a.clone(), 128));
    }
}
