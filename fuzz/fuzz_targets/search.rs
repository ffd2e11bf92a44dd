//! search_tools' ranking (`src/registry/search/`): any query against the real catalogue, and any
//! query against the catalogue joined with an upstream server whose tool names and descriptions
//! are fuzzed too (a hostile server lists what it likes). Never panics; every hit is a tool of
//! the registry, at most `limit` of them, no duplicates, scores within MIN_SCORE..=1 and sorted,
//! the weak ones (below RELEVANT_SCORE) marked weak.
#![no_main]

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use plugins::api::Effect;
use serde_json::json;
use workbench::registry::Registry;
use workbench::registry::search::{MIN_SCORE, RELEVANT_SCORE};
use workbench::upstream::{Catalogue, Listed};

fn standard() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Registry::standard)
}

fn check(registry: &Registry, query: &str, limit: usize) {
    let connected = |i: &str| i.len() % 2 == 0;
    let hits = registry.index().search(query, limit, &connected);
    assert!(hits.len() <= limit, "{} hits for limit {limit}", hits.len());
    let mut last = f64::INFINITY;
    let mut seen = HashSet::new();
    for hit in &hits {
        assert!(registry.get(hit.name).is_some(), "{} is no tool", hit.name);
        assert!((MIN_SCORE..=1.0).contains(&hit.score), "{} scored {}", hit.name, hit.score);
        assert!(hit.score <= last, "not sorted at {}", hit.name);
        assert!(seen.insert(hit.name), "{} twice", hit.name);
        last = hit.score;
    }
    assert!(hits.iter().all(|h| h.weak == (h.score < RELEVANT_SCORE)), "weak marks");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let limit = usize::from(mode % 50) + 1;
    if mode & 0x80 == 0 {
        check(standard(), &text, limit);
        return;
    }
    // "name<TAB>description" lines are the server's tools; the last line is the query.
    let mut lines: Vec<&str> = text.split('\n').collect();
    let query = lines.pop().unwrap_or_default();
    let tools = lines
        .iter()
        .take(8)
        .map(|line| {
            let (tool, description) = line.split_once('\t').unwrap_or((line, ""));
            Listed {
                tool: tool.to_string(),
                description: description.to_string(),
                schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}).into(),
                effect: Effect::Read,
                unchecked: Vec::new(),
            }
        })
        .collect();
    let catalogue = Catalogue { generation: 1, servers: vec![("srv".to_string(), tools)] };
    let registry = standard().with_upstream(Arc::new(catalogue));
    check(&registry, query, limit);
});
