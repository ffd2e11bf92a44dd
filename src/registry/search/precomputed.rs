//! The shipped catalogue's per-tool search data, computed once and committed
//! (`model/catalogue.bin`): each compiled tool's parameter names and its int8 vector. Building
//! the index from them instead of generating all ~200 schemas and embedding all ~200 texts keeps
//! the first search from touching the schema code of every plugin and most of the 3.6 MB
//! embedding table (about 8 MiB of resident pages and half the build's time, docs/footprint.md,
//! "Round 3"); searches then touch only their query's rows.
//!
//! A record is used only when its tool's name, integration display name and description hash as
//! the running tool's do, and the file only when it was made with the same table
//! ([`embed::MODEL_ID`]) and width; anything else is computed as before. The test
//! `catalogue_data_is_current` fails when the file differs from what the registry gives now;
//! `UPDATE_SNAPSHOTS=1 cargo test --locked --lib search::precomputed` rewrites it.

use std::sync::OnceLock;

use super::embed::{self, Model, Quantized};
use super::hash::Map;
use crate::registry::ToolEntry;

static DATA: &[u8] = include_bytes!("model/catalogue.bin");
const MAGIC: &[u8; 8] = b"WBCAT1\0\0";

/// One compiled tool's search data.
pub struct Entry {
    pub params: Vec<String>,
    /// `None`: none of the tool's words is in the table.
    pub vector: Option<Quantized>,
}

/// What the record's key covers: everything the index reads of the tool but its parameters
/// (FNV-1a, stable across builds).
fn key(tool: &ToolEntry) -> u64 {
    key_of(tool.name, tool.plugin().map(|i| i.display_name).unwrap_or(""), tool.description)
}

fn key_of(name: &str, display: &str, description: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [name, "\0", display, "\0", description] {
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

/// Records by tool name: (key, parameter names, the vector's scale and int8 bytes).
type Records = Map<&'static str, (u64, Vec<&'static str>, &'static [u8])>;

/// The committed records by tool name: (key, the record's parameter names and vector bytes).
fn records(dim: usize) -> &'static Records {
    static RECORDS: OnceLock<Records> = OnceLock::new();
    RECORDS.get_or_init(|| parse(DATA, dim).unwrap_or_default())
}

fn parse(data: &'static [u8], dim: usize) -> Option<Records> {
    let mut r = Reader(data);
    if r.take(8)? != MAGIC || r.u64()? != embed::MODEL_ID || r.u32()? as usize != dim {
        return None;
    }
    let count = r.u32()? as usize;
    let mut out = Map::default();
    for _ in 0..count {
        let name = r.str()?;
        let key = r.u64()?;
        let n = usize::from(r.take(1)?[0]);
        let params = (0..n).map(|_| r.str()).collect::<Option<Vec<_>>>()?;
        let vector = r.take(4 + dim)?;
        out.insert(name, (key, params, vector));
    }
    r.0.is_empty().then_some(out)
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

/// `tool`'s committed data, when it is a compiled tool recorded as it is now.
pub fn lookup(model: Option<&Model>, tool: &ToolEntry) -> Option<Entry> {
    let model = model?;
    if !compiled(tool) {
        return None;
    }
    let (k, params, bytes) = records(model.dim()).get(tool.name)?;
    if *k != key(tool) {
        return None;
    }
    let scale = f32::from_le_bytes(bytes[..4].try_into().ok()?);
    let vector = (scale != 0.0).then(|| Quantized { scale, data: bytes[4..].iter().map(|&b| b as i8).collect() });
    Some(Entry { params: params.iter().map(|p| p.to_string()).collect(), vector })
}

/// The file's bytes for `registry`'s compiled tools, computed the way the index computes them.
#[cfg(test)]
fn generate(model: &Model, registry: &crate::registry::Registry) -> Vec<u8> {
    let tools: Vec<&ToolEntry> = registry.tools().iter().filter(|t| compiled(t)).collect();
    let mut out = MAGIC.to_vec();
    out.extend(embed::MODEL_ID.to_le_bytes());
    out.extend((model.dim() as u32).to_le_bytes());
    out.extend((tools.len() as u32).to_le_bytes());
    let push_str = |out: &mut Vec<u8>, s: &str| {
        out.extend((u16::try_from(s.len()).expect("short")).to_le_bytes());
        out.extend(s.as_bytes());
    };
    for tool in tools {
        let params = super::index::param_names(tool);
        push_str(&mut out, tool.name);
        out.extend(key(tool).to_le_bytes());
        out.push(u8::try_from(params.len()).expect("fewer than 256 parameters"));
        for p in &params {
            push_str(&mut out, p);
        }
        match model.embed(&super::index::embedded_text_with(tool, &params)).map(|v| Quantized::new(&v)) {
            Some(q) => {
                out.extend(q.scale.to_le_bytes());
                out.extend(q.data.iter().map(|&x| x as u8));
            }
            None => out.extend(std::iter::repeat_n(0, 4 + model.dim())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// The committed file is what the shipped catalogue gives now (rewrite it with
    /// `UPDATE_SNAPSHOTS=1`), and every compiled tool is found in it.
    #[test]
    fn catalogue_data_is_current() {
        let model = embed::model().expect("the table decodes");
        let registry = Registry::standard();
        let fresh = generate(model, &registry);
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/registry/search/model/catalogue.bin");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &fresh).expect("write catalogue.bin");
            return;
        }
        assert!(
            fresh == DATA,
            "src/registry/search/model/catalogue.bin is stale: run UPDATE_SNAPSHOTS=1 cargo test --locked --lib search::precomputed"
        );
        for tool in registry.tools().iter().filter(|t| compiled(t)) {
            let entry = lookup(Some(model), tool).unwrap_or_else(|| panic!("{} is recorded", tool.name));
            assert_eq!(entry.params, super::super::index::param_names(tool), "{}", tool.name);
            let text = super::super::index::embedded_text_with(tool, &entry.params);
            assert_eq!(entry.vector, model.embed(&text).map(|v| Quantized::new(&v)), "{}", tool.name);
        }
    }

    /// A record whose tool changed since (another description) is not used, and a file made with
    /// another table or width is not read at all.
    #[test]
    fn a_changed_tool_or_table_is_computed_again() {
        let model = embed::model().expect("decodes");
        let registry = Registry::standard();
        let tool = registry.tools().iter().find(|t| t.plugin().is_some()).expect("a plugin tool");
        assert!(lookup(Some(model), tool).is_some());
        let display = tool.plugin().map(|i| i.display_name).unwrap_or("");
        let (stored, _, _) = &records(model.dim())[tool.name];
        assert_eq!(*stored, key(tool));
        assert_ne!(*stored, key_of(tool.name, display, "Something else entirely."));
        assert_ne!(*stored, key_of(tool.name, "Another product", tool.description));
        assert!(lookup(None, tool).is_none());
        assert!(parse(DATA, model.dim() + 1).is_none());
        assert!(parse(&DATA[..DATA.len() - 1], model.dim()).is_none());
    }
}
