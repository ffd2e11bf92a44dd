//! The shipped catalogue's per-tool search data, computed once and committed
//! (`model/catalogue.bin`): each compiled tool's int8 vector and its [`Analysis`] (the tokens of
//! its name, prose, examples and parameter names, and its BM25 terms). Building the index from
//! them instead of generating all ~200 schemas, embedding all ~200 texts and tokenising them keeps
//! the first search from touching the schema code of every plugin and most of the 3.6 MB
//! embedding table (about 8 MiB of resident pages, docs/footprint.md, "Round 3"), and the build
//! from reading texts fixed at compile time (docs/search.md, "Round 6").
//!
//! A record is used only when its tool's name, integration, integration display name and
//! description hash as the running tool's do, and the file only when it was made with the same
//! table ([`embed::MODEL_ID`]), width and reading ([`ANALYSIS_VERSION`]); anything else is
//! computed as before. The records are read with `store.rs`'s row decoder, as checked as an
//! upstream server's stored row (a broken file is not read). The test
//! `catalogue_data_is_current` fails when the file differs from what the registry gives now;
//! `UPDATE_SNAPSHOTS=1 cargo test --locked --lib search::precomputed` rewrites it.

use super::embed::{self, Model, Quantized};
use super::hash::Map;
use super::index::{Analysis, Keywords, Pool};
use super::store::{ANALYSIS_VERSION, decode_row};
use crate::registry::ToolEntry;

static DATA: &[u8] = include_bytes!("model/catalogue.bin");
const MAGIC: &[u8; 8] = b"WBCAT2\0\0";

/// One compiled tool's search data.
pub struct Entry {
    pub analysis: Analysis,
    pub keywords: Keywords,
    /// `None`: none of the tool's words is in the table.
    pub vector: Option<Quantized>,
}

/// What the record's key covers: everything the index reads of the tool but its parameters
/// (FNV-1a, stable across builds).
fn key(tool: &ToolEntry) -> u64 {
    let display = tool.plugin().map(|i| i.display_name).unwrap_or("");
    key_of(&[tool.name, tool.integration, display, tool.description], tool.keywords)
}

fn key_of(parts: &[&str], keywords: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts.iter().chain(keywords) {
        for &b in part.as_bytes().iter().chain(b"\0") {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Whether `tool` ships in the binary (a plugin's or a built-in: the only tools recorded).
fn compiled(tool: &ToolEntry) -> bool {
    tool.plugin().is_some() || matches!(tool.runner, crate::registry::Runner::Builtin(_))
}

/// The file's records by tool name (their place and key), its rows' bytes (`store.rs`'s
/// layout) and its keywords' bytes ([`decode_keywords`]); `None` when the file is not this
/// build's (magic, table, width, reading) or broken.
type Parsed<'a> = (Map<&'a str, (usize, u64)>, &'a [u8], &'a [u8]);

fn parse(data: &[u8], dim: usize) -> Option<Parsed<'_>> {
    let mut r = super::precomputed::Reader(data);
    if r.take(8)? != MAGIC || r.u64()? != embed::MODEL_ID || r.u32()? as usize != dim || r.u32()? != ANALYSIS_VERSION {
        return None;
    }
    let count = r.u32()? as usize;
    if count > r.0.len() / 10 {
        return None;
    }
    let mut records = Map::default();
    records.reserve(count);
    for place in 0..count {
        let name = r.str()?;
        records.insert(name, (place, r.u64()?));
    }
    let rows = r.u32()? as usize;
    let rows = r.take(rows)?;
    (records.len() == count).then_some((records, rows, r.0))
}

/// Each tool's [`Keywords`]: the strings once each (a u32 count, then per string a u32 length
/// and its UTF-8 bytes), then per tool its three lists (each a u32 count and the strings' u32
/// places), as `store.rs` lays out a row's analyses.
#[cfg(test)]
fn encode_keywords(tools: &[Keywords], pool: &Pool) -> Vec<u8> {
    let mut strings: Vec<&str> = Vec::new();
    let mut places: Map<&str, u32> = Map::default();
    let mut lists: Vec<u32> = Vec::new();
    for k in tools {
        for list in [&k.tokens, &k.intents, &k.phrases] {
            lists.push(list.len() as u32);
            for &i in list {
                let s = pool.get(i);
                lists.push(*places.entry(s).or_insert_with(|| {
                    strings.push(s);
                    (strings.len() - 1) as u32
                }));
            }
        }
    }
    let mut out = (strings.len() as u32).to_le_bytes().to_vec();
    for s in &strings {
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s.as_bytes());
    }
    out.extend(lists.iter().flat_map(|i| i.to_le_bytes()));
    out
}

/// [`encode_keywords`]' bytes read back, their strings pushed to `pool`: `None` (and nothing
/// pushed) unless they are exactly `count` tools' lists of places within the strings.
fn decode_keywords(bytes: &[u8], count: usize, pool: &mut Pool) -> Option<Vec<Keywords>> {
    let mut r = super::precomputed::Reader(bytes);
    let n = r.u32()? as usize;
    if n > r.0.len() / 4 || count > r.0.len() / 12 {
        return None;
    }
    let mut strings: Vec<&str> = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.u32()? as usize;
        strings.push(std::str::from_utf8(r.take(len)?).ok()?);
    }
    let base = pool.len() as u32;
    let list = |r: &mut Reader| -> Option<Vec<u32>> {
        let len = r.u32()? as usize;
        if len > r.0.len() / 4 {
            return None;
        }
        (0..len).map(|_| r.u32().filter(|&i| (i as usize) < n).map(|i| i + base)).collect()
    };
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(Keywords { tokens: list(&mut r)?, intents: list(&mut r)?, phrases: list(&mut r)? });
    }
    if !r.0.is_empty() {
        return None;
    }
    for s in strings {
        pool.push(s);
    }
    Some(out)
}

/// Each of `tools`' committed data, in their order (`None` for a tool not recorded as it is
/// now); the analyses' strings are pushed to `pool`, once, when any tool is found.
pub fn lookup(model: Option<&Model>, tools: &[ToolEntry], pool: &mut Pool) -> Vec<Option<Entry>> {
    let mut out: Vec<Option<Entry>> = tools.iter().map(|_| None).collect();
    let Some((records, rows, keywords)) = model.and_then(|m| parse(DATA, m.dim())) else { return out };
    let places: Vec<Option<usize>> = tools
        .iter()
        .map(|t| match records.get(t.name) {
            Some(&(place, k)) if compiled(t) && k == key(t) => Some(place),
            _ => None,
        })
        .collect();
    if places.iter().all(Option::is_none) {
        return out;
    }
    let dim = model.map_or(0, Model::dim);
    // (A broken row leaves the keywords' strings unused in the build's pool.)
    let Some(keywords) = decode_keywords(keywords, records.len(), pool) else { return out };
    let Some(data) = decode_row(rows, records.len(), dim, pool) else { return out };
    let mut data: Vec<Option<(Analysis, Option<Quantized>, Keywords)>> =
        data.into_iter().zip(keywords).map(|((a, v), k)| Some((a, v, k))).collect();
    for (slot, place) in out.iter_mut().zip(places) {
        if let Some((analysis, vector, keywords)) = place.and_then(|p| data.get_mut(p).and_then(Option::take)) {
            *slot = Some(Entry { analysis, keywords, vector });
        }
    }
    out
}

/// A little-endian reader over a byte slice; every read is checked (also `store.rs`'s rows).
pub(super) struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = b;
        Some(a)
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn str(&mut self) -> Option<&'a str> {
        let n = usize::from(u16::from_le_bytes(self.take(2)?.try_into().ok()?));
        std::str::from_utf8(self.take(n)?).ok()
    }
}

/// Each of `tools`' data computed the way the index computes it without the file.
#[cfg(test)]
fn fresh(model: &Model, tools: &[&ToolEntry], pool: &mut Pool) -> Vec<(Analysis, Option<Quantized>, Keywords)> {
    tools
        .iter()
        .map(|t| {
            let (analysis, params) = super::index::analyse(t, pool);
            let vector = model.embed(&super::index::embedded_text_with(t, &params)).map(|v| Quantized::new(&v));
            (analysis, vector, super::index::keyword_analysis(t, pool))
        })
        .collect()
}

/// The file's bytes for `registry`'s compiled tools.
#[cfg(test)]
fn generate(model: &Model, registry: &crate::registry::Registry) -> Vec<u8> {
    let tools: Vec<&ToolEntry> = registry.tools().iter().filter(|t| compiled(t)).collect();
    let mut out = MAGIC.to_vec();
    out.extend(embed::MODEL_ID.to_le_bytes());
    out.extend((model.dim() as u32).to_le_bytes());
    out.extend(ANALYSIS_VERSION.to_le_bytes());
    out.extend((tools.len() as u32).to_le_bytes());
    for tool in &tools {
        out.extend((u16::try_from(tool.name.len()).expect("short")).to_le_bytes());
        out.extend(tool.name.as_bytes());
        out.extend(key(tool).to_le_bytes());
    }
    let mut pool = Pool::default();
    let data = fresh(model, &tools, &mut pool);
    let refs: Vec<(&Analysis, Option<&Quantized>)> = data.iter().map(|(a, v, _)| (a, v.as_ref())).collect();
    let row = super::store::encode_row(&refs, &pool, model.dim());
    out.extend((row.len() as u32).to_le_bytes());
    out.extend(row);
    let keywords: Vec<Keywords> = data.into_iter().map(|(_, _, k)| k).collect();
    out.extend(encode_keywords(&keywords, &pool));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn strings<'a>(pool: &'a Pool, a: &Analysis, k: &Keywords) -> (Vec<Vec<&'a str>>, bool) {
        let lists = [&a.name, &a.examples, &a.prose, &a.params, &a.bm25, &k.tokens, &k.intents, &k.phrases];
        (lists.iter().map(|l| l.iter().map(|&i| pool.get(i)).collect()).collect(), a.agnostic)
    }

    /// The committed file is what the shipped catalogue gives now (rewrite it with
    /// `UPDATE_SNAPSHOTS=1`), and every compiled tool is found in it, with the analysis, keywords
    /// and vector the index would compute.
    #[test]
    fn catalogue_data_is_current() {
        let model = embed::model().expect("the table decodes");
        let registry = Registry::standard();
        let fresh_bytes = generate(model, &registry);
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/registry/search/model/catalogue.bin");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &fresh_bytes).expect("write catalogue.bin");
            return;
        }
        assert!(
            fresh_bytes == DATA,
            "src/registry/search/model/catalogue.bin is stale: run UPDATE_SNAPSHOTS=1 cargo test --locked --lib search::precomputed"
        );
        let tools = registry.tools();
        let mut pool = Pool::default();
        let found = lookup(Some(model), tools, &mut pool);
        let mut own = Pool::default();
        let mut with_phrases = 0;
        for (tool, entry) in tools.iter().zip(found) {
            if !compiled(tool) {
                assert!(entry.is_none(), "{}", tool.name);
                continue;
            }
            let entry = entry.unwrap_or_else(|| panic!("{} is recorded", tool.name));
            let (analysis, vector, keywords) = fresh(model, &[tool], &mut own).remove(0);
            assert_eq!(
                strings(&pool, &entry.analysis, &entry.keywords),
                strings(&own, &analysis, &keywords),
                "{}",
                tool.name
            );
            assert_eq!(entry.vector, vector, "{}", tool.name);
            with_phrases += usize::from(!keywords.phrases.is_empty());
        }
        assert!(with_phrases > 10, "keywords' phrases are recorded ({with_phrases} tools)");
    }

    /// A record whose tool changed since (another description, integration, product name or
    /// keyword) is not used, and a file made with another table, width or reading, or broken, is
    /// not read.
    #[test]
    fn a_changed_tool_or_table_is_computed_again() {
        let model = embed::model().expect("decodes");
        let dim = model.dim();
        let registry = Registry::standard();
        let tools = registry.tools();
        let at = tools.iter().position(|t| t.plugin().is_some() && !t.keywords.is_empty()).expect("a plugin tool");
        let tool = &tools[at];
        assert!(lookup(Some(model), tools, &mut Pool::default())[at].is_some());
        let display = tool.plugin().map(|i| i.display_name).unwrap_or("");
        let (records, rows, keywords) = parse(DATA, dim).expect("parses");
        let (_, stored) = records[tool.name];
        assert_eq!(stored, key(tool));
        let key = |parts: [&str; 4], keywords: &[&str]| key_of(&parts, keywords);
        assert_eq!(stored, key([tool.name, tool.integration, display, tool.description], tool.keywords));
        assert_ne!(stored, key([tool.name, tool.integration, display, "Something else entirely."], tool.keywords));
        assert_ne!(stored, key([tool.name, tool.integration, "Another product", tool.description], tool.keywords));
        assert_ne!(stored, key([tool.name, "another", display, tool.description], tool.keywords));
        assert_ne!(stored, key([tool.name, tool.integration, display, tool.description], &tool.keywords[1..]));
        // Parts do not run into each other.
        assert_ne!(key(["ab", "c", "", ""], &[]), key(["a", "bc", "", ""], &[]));
        let mut pool = Pool::default();
        assert!(lookup(None, tools, &mut pool).iter().all(Option::is_none));
        assert_eq!(pool.len(), 0, "nothing is read without the table");
        assert!(parse(DATA, dim + 1).is_none());
        // Another reading: the version sits after the magic, the table's id and the width.
        let mut other = DATA.to_vec();
        other[20] ^= 1;
        assert!(parse(&other, dim).is_none());
        // Both parts are read as a stored row is: truncated or a byte more, not at all, and
        // nothing of a broken part is pushed.
        let n = records.len();
        assert!(decode_row(rows, n, dim, &mut Pool::default()).is_some());
        assert!(decode_keywords(keywords, n, &mut Pool::default()).is_some());
        let refused = |bytes: &[u8]| {
            let mut pool = Pool::default();
            decode_keywords(bytes, n, &mut pool).is_none() && pool.len() == 0
        };
        for cut in [0, 3, 4, keywords.len() / 2, keywords.len() - 1] {
            assert!(refused(&keywords[..cut]), "{cut}");
        }
        assert!(refused(&[keywords, &[0]].concat()));
        let mut forged = keywords.to_vec();
        forged[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(refused(&forged));
        let last_place = keywords.len() - 4;
        forged = keywords.to_vec();
        forged[last_place..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(refused(&forged), "a place past the strings");
        assert!(decode_row(&rows[..rows.len() - 1], n, dim, &mut Pool::default()).is_none());
        for cut in [0, 9, 30, DATA.len() / 2, DATA.len() - 1] {
            assert!(parse(&DATA[..cut], dim).is_none_or(|(r, rows, keywords)| {
                decode_row(rows, r.len(), dim, &mut Pool::default()).is_none()
                    || decode_keywords(keywords, r.len(), &mut Pool::default()).is_none()
            }));
        }
        // Any byte changed: refused or read without panic.
        for i in (0..DATA.len()).step_by(211) {
            let mut flipped = DATA.to_vec();
            flipped[i] ^= 0x80;
            if let Some((r, rows, keywords)) = parse(&flipped, dim) {
                let _ = decode_row(rows, r.len(), dim, &mut Pool::default());
                let _ = decode_keywords(keywords, r.len(), &mut Pool::default());
            }
        }
    }
}
