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
use super::index::{Analysis, Pool};
use super::store::{ANALYSIS_VERSION, decode_row};
use crate::registry::ToolEntry;

static DATA: &[u8] = include_bytes!("model/catalogue.bin");
const MAGIC: &[u8; 8] = b"WBCAT2\0\0";

/// One compiled tool's search data.
pub struct Entry {
    pub analysis: Analysis,
    /// `None`: none of the tool's words is in the table.
    pub vector: Option<Quantized>,
}

/// What the record's key covers: everything the index reads of the tool but its parameters
/// (FNV-1a, stable across builds).
fn key(tool: &ToolEntry) -> u64 {
    key_of(tool.name, tool.integration, tool.plugin().map(|i| i.display_name).unwrap_or(""), tool.description)
}

fn key_of(name: &str, integration: &str, display: &str, description: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [name, "\0", integration, "\0", display, "\0", description] {
        for &b in part.as_bytes() {
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

/// The file's records by tool name (their place and key), and its rows' bytes (`store.rs`'s
/// layout); `None` when the file is not this build's (magic, table, width, reading) or broken.
fn parse(data: &[u8], dim: usize) -> Option<(Map<&str, (usize, u64)>, &[u8])> {
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
    (records.len() == count).then_some((records, r.0))
}

/// Each of `tools`' committed data, in their order (`None` for a tool not recorded as it is
/// now); the analyses' strings are pushed to `pool`, once, when any tool is found.
pub fn lookup(model: Option<&Model>, tools: &[ToolEntry], pool: &mut Pool) -> Vec<Option<Entry>> {
    let mut out: Vec<Option<Entry>> = tools.iter().map(|_| None).collect();
    let Some((records, rows)) = model.and_then(|m| parse(DATA, m.dim())) else { return out };
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
    let Some(data) = decode_row(rows, records.len(), dim, pool) else { return out };
    let mut data: Vec<Option<(Analysis, Option<Quantized>)>> = data.into_iter().map(Some).collect();
    for (slot, place) in out.iter_mut().zip(places) {
        if let Some((analysis, vector)) = place.and_then(|p| data[p].take()) {
            *slot = Some(Entry { analysis, vector });
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
fn fresh(model: &Model, tools: &[&ToolEntry], pool: &mut Pool) -> Vec<(Analysis, Option<Quantized>)> {
    tools
        .iter()
        .map(|t| {
            let (analysis, params) = super::index::analyse(t, pool);
            (analysis, model.embed(&super::index::embedded_text_with(t, &params)).map(|v| Quantized::new(&v)))
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
    let refs: Vec<(&Analysis, Option<&Quantized>)> = data.iter().map(|(a, v)| (a, v.as_ref())).collect();
    out.extend(super::store::encode_row(&refs, &pool, model.dim()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn strings<'a>(pool: &'a Pool, a: &Analysis) -> (Vec<Vec<&'a str>>, bool) {
        let lists = [&a.name, &a.examples, &a.prose, &a.params, &a.bm25];
        (lists.iter().map(|l| l.iter().map(|&i| pool.get(i)).collect()).collect(), a.agnostic)
    }

    /// The committed file is what the shipped catalogue gives now (rewrite it with
    /// `UPDATE_SNAPSHOTS=1`), and every compiled tool is found in it, with the analysis and
    /// vector the index would compute.
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
        for (tool, entry) in tools.iter().zip(found) {
            if !compiled(tool) {
                assert!(entry.is_none(), "{}", tool.name);
                continue;
            }
            let entry = entry.unwrap_or_else(|| panic!("{} is recorded", tool.name));
            let (analysis, vector) = fresh(model, &[tool], &mut own).remove(0);
            assert_eq!(strings(&pool, &entry.analysis), strings(&own, &analysis), "{}", tool.name);
            assert_eq!(entry.vector, vector, "{}", tool.name);
        }
    }

    /// A record whose tool changed since (another description, integration or product name) is
    /// not used, and a file made with another table, width or reading, or broken, is not read.
    #[test]
    fn a_changed_tool_or_table_is_computed_again() {
        let model = embed::model().expect("decodes");
        let dim = model.dim();
        let registry = Registry::standard();
        let tools = registry.tools();
        let at = tools.iter().position(|t| t.plugin().is_some()).expect("a plugin tool");
        let tool = &tools[at];
        assert!(lookup(Some(model), tools, &mut Pool::default())[at].is_some());
        let display = tool.plugin().map(|i| i.display_name).unwrap_or("");
        let (records, rows) = parse(DATA, dim).expect("parses");
        let (_, stored) = records[tool.name];
        assert_eq!(stored, key(tool));
        assert_ne!(stored, key_of(tool.name, tool.integration, display, "Something else entirely."));
        assert_ne!(stored, key_of(tool.name, tool.integration, "Another product", tool.description));
        assert_ne!(stored, key_of(tool.name, "another", display, tool.description));
        let mut pool = Pool::default();
        assert!(lookup(None, tools, &mut pool).iter().all(Option::is_none));
        assert_eq!(pool.len(), 0, "nothing is read without the table");
        assert!(parse(DATA, dim + 1).is_none());
        // Another reading: the version sits after the magic, the table's id and the width.
        let mut other = DATA.to_vec();
        other[20] ^= 1;
        assert!(parse(&other, dim).is_none());
        // The records' rows are read as a stored row is: truncated or a byte more, not at all.
        assert!(decode_row(rows, records.len(), dim, &mut Pool::default()).is_some());
        assert!(decode_row(&rows[..rows.len() - 1], records.len(), dim, &mut Pool::default()).is_none());
        assert!(decode_row(&[rows, &[0]].concat(), records.len(), dim, &mut Pool::default()).is_none());
        for cut in [0, 9, 30, DATA.len() / 2] {
            assert!(
                parse(&DATA[..cut], dim)
                    .is_none_or(|(r, rows)| decode_row(rows, r.len(), dim, &mut Pool::default()).is_none())
            );
        }
    }
}
