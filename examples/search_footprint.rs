//! search_tools' memory and speed in process: heap (a counting allocator) and RSS after each
//! step (registry, index build, first search, many searches), index build time and search
//! latency percentiles, over the shipped catalogue and, with `--upstream N`, N synthetic
//! upstream tools made by recombining MCP-Bench's real servers' tools (tests/it/data/mcpbench)
//! under new server names.
//!
//!   cargo run --example search_footprint [-- --upstream 10000] [--searches 2000] [--schemas]
//!       [--store FILE] [--dump FILE] [--min-words N] [--slowest N]
//!
//! `--store FILE` keeps the upstream servers' vectors in that SQLite file, as the server does:
//! the first run embeds every upstream tool and stores them, a second run with the same file (a
//! restart) loads them and embeds nothing (the line "embedded" says how many were).
//! `--dump FILE` writes every query's results there, to diff two builds' rankings.
//! `--min-words N` keeps only the queries of at least N words (to profile the tail).
//! `--slowest N` prints the N requests that take longest (each one's least time of five).
//! `WORKBENCH_SEARCH_THREADS=N` sets the threads a long request is ranked on, as in the server.
//!
//! Figures from a dev build are for relative change (heap and RSS); latency needs an optimised
//! build (`--release`, see docs/search.md). `--schemas` builds every tool's schema before the
//! index, so that the index's own share shows apart from the schemas'.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use workbench::registry::Registry;
use workbench::upstream::{Catalogue, Listed, schema};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only a counter is kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (VmRSS, RssAnon, RssFile) in KiB.
fn rss() -> (u64, u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
}

fn step(label: &str) {
    let (rss, anon, file) = rss();
    let mib = |k: u64| k as f64 / 1024.0;
    println!(
        "{label:<34} heap {:>7.2} MiB   RSS {:>6.1} MiB (anon {:>5.1}, file {:>5.1})",
        LIVE.load(Ordering::Relaxed) as f64 / 1048576.0,
        mib(rss),
        mib(anon),
        mib(file)
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[(((sorted.len() - 1) as f64) * p).round() as usize]
}

/// `size` upstream tools: servers of up to 20 tools, each server a new name over one of
/// MCP-Bench's servers, its tools drawn from that server and the next ones so that every server's
/// listing is a new combination (real names, descriptions and parameters).
pub fn synthetic_upstream(size: usize) -> Arc<Catalogue> {
    let listing: Value =
        serde_json::from_str(include_str!("../tests/it/data/mcpbench/tools.json")).expect("tools.json parses");
    let servers = listing["servers"].as_array().expect("servers");
    let pool: Vec<(&str, &Value)> = servers
        .iter()
        .flat_map(|s| {
            let name = s["server"].as_str().unwrap_or("server");
            s["tools"].as_array().into_iter().flatten().map(move |t| (name, t))
        })
        .collect();
    let per_server = 20;
    let mut next = 0;
    let servers = (0..size.div_ceil(per_server))
        .map(|s| {
            let base: String = pool[next % pool.len()]
                .0
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
                .collect();
            let mut seen = std::collections::HashSet::new();
            let mut tools = Vec::new();
            while tools.len() < per_server.min(size - s * per_server) {
                let (_, t) = pool[next % pool.len()];
                next += 7;
                let name = t["name"].as_str().unwrap_or("tool").to_string();
                if !seen.insert(name.clone()) {
                    next += 1;
                    continue;
                }
                let normalised = schema::normalise(&json!({"type": "object", "properties": t["params"]}));
                tools.push(Listed {
                    tool: name,
                    description: t["description"].as_str().unwrap_or("").to_string(),
                    schema: normalised.schema.into(),
                    effect: plugins::api::Effect::Read,
                    unchecked: normalised.unchecked,
                });
            }
            (format!("{base}{s}"), tools)
        })
        .collect();
    Arc::new(Catalogue { generation: 1, servers })
}

fn queries() -> Vec<String> {
    let own: Vec<Value> = serde_json::from_str(include_str!("../tests/it/data/search_queries.json")).expect("parses");
    let tasks: Value = serde_json::from_str(include_str!("../tests/it/data/mcpbench/tasks.json")).expect("parses");
    let mut out: Vec<String> = own.iter().filter_map(|q| q["q"].as_str().map(str::to_string)).collect();
    for kind in ["single", "multi"] {
        for t in tasks[kind].as_array().into_iter().flatten() {
            if let Some(q) = t["q"].as_str() {
                out.push(q.to_string());
            }
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let upstream = arg("--upstream", 0);
    let searches = arg("--searches", 2000);
    // Only the requests of at least this many words (the tail: MCP-Bench's multi-step tasks).
    let min_words = arg("--min-words", 0);
    let mut queries = queries();
    queries.retain(|q| q.split_whitespace().count() >= min_words);
    step("start");
    // As the server reads it: the threads a long request's texts are ranked on (0: the cores).
    if let Some(threads) = std::env::var("WORKBENCH_SEARCH_THREADS").ok().and_then(|v| v.parse().ok()) {
        workbench::registry::search::set_threads(threads);
    }
    let mut registry = Registry::standard();
    step("registry (catalogue)");
    if upstream > 0 {
        let catalogue = synthetic_upstream(upstream);
        step("synthetic upstream listing");
        registry = registry.with_upstream(catalogue);
        step("registry with upstream");
    }
    if let Some(path) = args.iter().position(|a| a == "--store").and_then(|i| args.get(i + 1)) {
        registry.keep_vectors_in(workbench::storage::Storage::new(path.into()));
    }
    if args.iter().any(|a| a == "--schemas") {
        for t in registry.tools() {
            std::hint::black_box(t.schema());
        }
        step("every tool's schema");
    }
    let started = Instant::now();
    std::hint::black_box(registry.index());
    let build = started.elapsed();
    step("index built");
    let mut parts = registry.index().heap_report();
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    for (part, bytes) in parts {
        println!("    {part:<40} {:>8.1} KiB", bytes as f64 / 1024.0);
    }
    let connected = |i: &str| i.starts_with("hackernews") || i.starts_with("wikipedia") || i.starts_with("open_meteo");
    let started = Instant::now();
    let first = registry.index().search("open a ticket about the login bug", 10, &connected);
    let first_time = started.elapsed();
    step("after the first search");
    let mut samples = Vec::with_capacity(searches);
    for i in 0..searches {
        let q = &queries[i % queries.len()];
        let t = Instant::now();
        std::hint::black_box(registry.index().search(q, 10, &connected));
        samples.push(t.elapsed());
    }
    step(&format!("after {searches} more"));
    if let Some(path) = args.iter().position(|a| a == "--dump").and_then(|i| args.get(i + 1)) {
        // Every query's results, to check that a change to the search leaves rankings as they were.
        let mut out = String::new();
        let hostile = "find the issue, then plot it and save it; notify the team\n".repeat(70);
        for q in queries.iter().chain([&hostile]) {
            out.push_str(q);
            out.push('\n');
            for hit in registry.index().search(q, 10, &connected) {
                out.push_str(&format!("  {} {} {}\n", hit.name, hit.score, hit.weak));
            }
        }
        std::fs::write(path, out).expect("writes the dump");
    }
    if let Some(n) = args.iter().position(|a| a == "--slowest").and_then(|i| args.get(i + 1)) {
        // The requests that make the tail: each one's least time of five, slowest first.
        let n: usize = n.parse().expect("--slowest takes a number");
        let mut each: Vec<(std::time::Duration, &String)> = queries
            .iter()
            .map(|q| {
                let least = (0..5)
                    .map(|_| {
                        let t = Instant::now();
                        std::hint::black_box(registry.index().search(q, 10, &connected));
                        t.elapsed()
                    })
                    .min()
                    .unwrap_or_default();
                (least, q)
            })
            .collect();
        each.sort_by_key(|e| std::cmp::Reverse(e.0));
        for (time, q) in each.iter().take(n) {
            let words = q.split_whitespace().count();
            let head: String = q.chars().take(90).collect();
            println!("  {time:>9.1?} {words:>4} words  {head}");
        }
    }
    samples.sort();
    println!(
        "tools {}  index build {build:.2?}  first search {first_time:.2?} ({} hits)  embedded {} tool texts",
        registry.tools().len(),
        first.len(),
        workbench::registry::search::tool_embeddings()
    );
    if !samples.is_empty() {
        println!(
            "search over {} queries: p50 {:.3?}  p90 {:.3?}  p99 {:.3?}  max {:.3?}",
            queries.len(),
            percentile(&samples, 0.5),
            percentile(&samples, 0.9),
            percentile(&samples, 0.99),
            samples[samples.len() - 1]
        );
    }
}
