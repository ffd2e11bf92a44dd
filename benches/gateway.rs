//! workbench's benchmark suite (a bench binary, not timed tests): cold start and memory of the
//! release binary, tools/list size, search latency, and execute_tools overhead against a local fake.
//!
//! Run: `cargo bench --bench gateway` (add `-- quick` for fewer iterations, `-- search` for the search
//! figures only). Figures go to stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plugins::api::{Integration, ToolSpec};
use serde_json::{Value, json};
use workbench::app::App;
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::MemoryStore;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{name:<48} n={:<5} median {:>9.3?}  p90 {:>9.3?}  p99 {:>9.3?}  min {:>9.3?}",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        percentile(&samples, 0.99),
        samples[0]
    );
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// Spawn -> initialize response, and RSS right after it.
fn cold_start(runs: usize) {
    let bin = env!("CARGO_BIN_EXE_workbench");
    let home = tempfile::tempdir().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mut times = Vec::new();
    let mut rss = Vec::new();
    let mut list_bytes = 0;
    let mut rss_search = Vec::new();
    let mut first_search = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let mut child = Command::new(bin)
            .env("WORKBENCH_HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{init}").unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        times.push(started.elapsed());
        assert!(line.contains("\"serverInfo\""), "{line}");
        if let Some(kib) = rss_kib(child.id()) {
            rss.push(kib);
        }
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        writeln!(stdin, "{list}").unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        list_bytes = serde_json::to_string(&v["result"]).unwrap().len();
        // The first search builds the index and decodes the semantic tier's table.
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_tools", "arguments": {"query": "open a ticket about the login bug"}}});
        let searched = Instant::now();
        writeln!(stdin, "{call}").unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        first_search.push(searched.elapsed());
        assert!(line.contains("\"result\""), "{line}");
        if let Some(kib) = rss_kib(child.id()) {
            rss_search.push(kib);
        }
        drop(stdin);
        child.wait().unwrap();
    }
    summary("cold start: spawn -> initialize response", times);
    rss.sort();
    if !rss.is_empty() {
        println!(
            "{:<48} median {:.1} MiB  max {:.1} MiB",
            "RSS after initialize",
            rss[rss.len() / 2] as f64 / 1024.0,
            *rss.last().unwrap() as f64 / 1024.0
        );
    }
    println!("{:<48} {} bytes, ~{} tokens (bytes/4)", "tools/list result", list_bytes, list_bytes / 4);
    summary("first search_tools call (index + embeddings)", first_search);
    rss_search.sort();
    if !rss_search.is_empty() {
        println!(
            "{:<48} median {:.1} MiB  max {:.1} MiB",
            "RSS after the first search",
            rss_search[rss_search.len() / 2] as f64 / 1024.0,
            *rss_search.last().unwrap() as f64 / 1024.0
        );
    }
}

/// The project's search evaluation queries (tests/it/data/search_queries.json): realistic
/// phrasings, short and long, typos, negatives.
fn eval_queries() -> Vec<String> {
    let all: Vec<Value> = serde_json::from_str(include_str!("../tests/it/data/search_queries.json")).unwrap();
    all.iter().map(|q| q["q"].as_str().unwrap().to_string()).collect()
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// A synthetic catalogue of `size` tools, what custom apps could grow to: apps of 20 tools each,
/// made from the real tools (descriptions, keywords, schemas) under new app names, so the
/// vocabulary is realistic and every word is shared by many tools.
fn synthetic_integrations(size: usize) -> Vec<&'static Integration> {
    const STEMS: [&str; 12] = [
        "acme", "nimbus", "orbit", "quartz", "harbor", "lumen", "vertex", "cobalt", "summit", "prairie", "delta",
        "zephyr",
    ];
    let templates: Vec<(&'static Integration, &'static ToolSpec)> =
        plugins::INTEGRATIONS.iter().flat_map(|i| i.tools.iter().map(move |t| (*i, t))).collect();
    let per_app = 20;
    let mut next = 0;
    (0..size.div_ceil(per_app))
        .map(|a| {
            let stem = STEMS[a % STEMS.len()];
            let name = leak(format!("{stem}{a}"));
            let display = leak(format!("{}{stem} {a}", stem[..1].to_uppercase(), stem = &stem[1..]));
            let mut seen = std::collections::HashSet::new();
            let mut tools = Vec::with_capacity(per_app);
            while tools.len() < per_app.min(size - a * per_app) {
                let (integration, t) = templates[next % templates.len()];
                next += 1;
                let local = t.name[integration.name.len()..].trim_start_matches('_');
                if !seen.insert(local) {
                    continue;
                }
                tools.push(ToolSpec {
                    name: leak(format!("{name}_{local}")),
                    description: leak(t.description.replace(integration.display_name, display)),
                    keywords: t.keywords,
                    effect: t.effect,
                    files: t.files,
                    results: t.results,
                    audience: t.audience,
                    schema: t.schema,
                    run: t.run,
                });
            }
            let template = plugins::INTEGRATIONS[a % plugins::INTEGRATIONS.len()];
            &*Box::leak(Box::new(Integration {
                name,
                display_name: display,
                version: "1",
                auth: template.auth,
                keywords: &[],
                hosts: template.hosts,
                curl_proxy: plugins::api::CurlProxy::Off,
                rate_limit: plugins::api::RateLimit::NONE,
                side: template.side,
                tools: Box::leak(tools.into_boxed_slice()),
                error_message: template.error_message,
            }))
        })
        .collect()
}

/// A synthetic upstream catalogue of `size` tools: MCP servers of 20 tools each, made from the real
/// tools' descriptions and schemas under new server and tool names, joined as `Runner::Upstream`
/// entries (no keywords, no lexicon: the semantic tier embeds each when the index is built).
fn synthetic_upstream(size: usize) -> Arc<workbench::upstream::Catalogue> {
    let templates: Vec<(&'static Integration, &'static ToolSpec)> =
        plugins::INTEGRATIONS.iter().flat_map(|i| i.tools.iter().map(move |t| (*i, t))).collect();
    let per_server = 20;
    let servers = (0..size.div_ceil(per_server))
        .map(|s| {
            let tools = (0..per_server.min(size - s * per_server))
                .map(|k| {
                    let (integration, t) = templates[(s * per_server + k) % templates.len()];
                    let local = t.name[integration.name.len()..].trim_start_matches('_');
                    workbench::upstream::Listed {
                        tool: format!("{local}_{k}"),
                        description: t.description.replace(integration.display_name, &format!("Server {s}")),
                        schema: (t.schema)().into(),
                        effect: t.effect,
                        unchecked: vec![],
                    }
                })
                .collect();
            (format!("srv{s}"), tools)
        })
        .collect();
    Arc::new(workbench::upstream::Catalogue { generation: 1, servers })
}

/// Index build time and search latency over one catalogue.
fn search_bench(label: &str, make: &dyn Fn() -> Registry, builds: usize, iterations: usize) {
    let queries = eval_queries();
    let mut build_times = Vec::new();
    let mut registry = make();
    for _ in 0..builds {
        registry = make();
        let started = Instant::now();
        std::hint::black_box(registry.index());
        build_times.push(started.elapsed());
    }
    let tools = registry.tools().len();
    summary(&format!("search index build, {label} ({tools} tools)"), build_times);
    // Public integrations count as connected, as in a fresh install.
    let connected = |i: &str| i.starts_with("hackernews") || i.starts_with("wikipedia") || i.starts_with("open_meteo");
    let mut samples = Vec::with_capacity(iterations);
    let mut results = 0;
    for i in 0..iterations {
        let q = &queries[i % queries.len()];
        let t = Instant::now();
        let hits = registry.index().search(q, 10, &connected);
        samples.push(t.elapsed());
        results += hits.len();
        std::hint::black_box(hits);
    }
    summary(&format!("search_tools ranking, {label}"), samples);
    if let Some(kib) = rss_kib(std::process::id()) {
        println!("{:<48} {:.1} MiB", "  RSS of the bench process after it", kib as f64 / 1024.0);
    }
    println!(
        "{:<48} {} queries, {:.1} results per query on average",
        "  (query mix: the search evaluation set)",
        queries.len(),
        results as f64 / iterations as f64
    );
}

fn search_latency(iterations: usize) {
    let started = Instant::now();
    let registry = Registry::standard();
    let index = registry.index();
    println!(
        "{:<48} {:.3?} ({} tools)",
        "first registry + search index build",
        started.elapsed(),
        registry.tools().len()
    );
    let _ = index;
    search_bench("real catalogue", &Registry::standard, 20, iterations);
    let synthetic = synthetic_integrations(10_000);
    search_bench(
        "synthetic 10k",
        &|| Registry::new(&synthetic, workbench::builtins::BUILTINS),
        3,
        (iterations / 4).max(200),
    );
    // The first build embeds all 10,000 tool texts; later builds find them in the vector cache.
    let upstream = synthetic_upstream(10_000);
    search_bench(
        "synthetic 10k upstream tools",
        &|| Registry::standard().with_upstream(upstream.clone()),
        3,
        (iterations / 4).max(200),
    );
}

fn app_for(fake: &str) -> Arc<App> {
    let home = tempfile::tempdir().unwrap().keep();
    let mut vars = std::collections::HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.display().to_string());
    vars.insert("WORKBENCH_HACKERNEWS_BASE_URL".to_string(), fake.to_string());
    App::with_parts(Settings::load(&vars).unwrap(), Registry::standard(), Arc::new(MemoryStore::default()))
}

async fn start_fake(delay: Duration) -> String {
    let app = axum::Router::new().fallback(move || async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        axum::Json(json!({"id": "pg", "karma": 1, "created": 0}))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

async fn execute_overhead(calls: usize) {
    let fake = start_fake(Duration::ZERO).await;
    let app = app_for(&fake);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let url = format!("{fake}/user/pg.json");
    // Warm both paths (connection pools, lazy index, database open).
    for _ in 0..20 {
        client.get(&url).send().await.unwrap().bytes().await.unwrap();
        workbench::meta::call(
            &app,
            "execute_tools",
            json!({"executions": [{"tool": "hackernews_get_user", "args": {"username": "pg"}}]}),
        )
        .await;
    }
    let mut direct = Vec::new();
    for _ in 0..calls {
        let t = Instant::now();
        client.get(&url).send().await.unwrap().bytes().await.unwrap();
        direct.push(t.elapsed());
    }
    let mut via = Vec::new();
    for _ in 0..calls {
        let t = Instant::now();
        let out = workbench::meta::call(
            &app,
            "execute_tools",
            json!({"executions": [{"tool": "hackernews_get_user", "args": {"username": "pg"}}]}),
        )
        .await
        .unwrap();
        via.push(t.elapsed());
        assert!(out.body["results"][0]["result"]["karma"] == 1, "{}", out.body);
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (d, e) = (med(&mut direct.clone()), med(&mut via.clone()));
    summary("fake called directly (reqwest)", direct);
    summary("execute_tools, one call, sequential", via);
    println!(
        "{:<48} {:.3?} per call (median difference, incl. audit row)",
        "execute_tools overhead",
        e.saturating_sub(d)
    );

    // Concurrency 8: eight single-call batches at once.
    let t = Instant::now();
    let rounds = calls / 8;
    for _ in 0..rounds {
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let app = app.clone();
            set.spawn(async move {
                workbench::meta::call(
                    &app,
                    "execute_tools",
                    json!({"executions": [{"tool": "hackernews_get_user", "args": {"username": "pg"}}]}),
                )
                .await
            });
        }
        while set.join_next().await.is_some() {}
    }
    let per = t.elapsed() / (rounds * 8) as u32;
    println!("{:<48} {:.3?} per call ({} calls)", "execute_tools at concurrency 8 (throughput)", per, rounds * 8);

    // A batch of 100 against a fake that answers in 50 ms: the pool bound of 8 shows as ~13 rounds.
    let slow = start_fake(Duration::from_millis(50)).await;
    let app = app_for(&slow);
    let executions: Vec<Value> =
        (0..100).map(|_| json!({"tool": "hackernews_get_user", "args": {"username": "pg"}})).collect();
    let t = Instant::now();
    let out = workbench::meta::call(&app, "execute_tools", json!({ "executions": executions })).await.unwrap();
    let took = t.elapsed();
    assert_eq!(out.body["results"].as_array().unwrap().len(), 100);
    println!("{:<48} {:.3?} (ideal with 8 wide: 13 x 50 ms = 650 ms)", "batch of 100 x 50 ms upstream", took);
}

/// The outbound-data guard's added latency per execution: one Gmail send (to a colleague at the
/// user's domain) with the guard off and on. A sent mail's result is private, so from the second
/// send on the session holds private data and every send's audience is decided (the user's side
/// looked up once per session, then cached); the tainted app starts that way.
async fn flow_guard_overhead(calls: usize) {
    let app = axum::Router::new().fallback(|| async {
        axum::Json(json!({"emailAddress": "bob@example.com", "id": "m1", "threadId": "t1", "labelIds": ["SENT"]}))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let fake = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let gmail_app = |flow: &str| {
        let home = tempfile::tempdir().unwrap().keep();
        let mut vars = std::collections::HashMap::new();
        vars.insert("WORKBENCH_HOME".to_string(), home.display().to_string());
        vars.insert("WORKBENCH_GMAIL_BASE_URL".to_string(), format!("{fake}/gmail/v1/users/me"));
        vars.insert("WORKBENCH_GMAIL_TOKEN".to_string(), "ya29.bench-token".to_string());
        vars.insert("WORKBENCH_FLOW".to_string(), flow.to_string());
        // Gmail's own budget (10/s) would dominate the figure.
        vars.insert("WORKBENCH_GMAIL_RATE_LIMIT".to_string(), "100000/s".to_string());
        App::with_parts(Settings::load(&vars).unwrap(), Registry::standard(), Arc::new(MemoryStore::default()))
    };
    let send = json!({"executions": [{"tool": "gmail_send_email",
        "args": {"to": ["alice@example.com"], "subject": "s", "body": "b"}}]});
    let run = |app: Arc<App>, n: usize| {
        let send = send.clone();
        async move {
            let mut v = Vec::new();
            for _ in 0..n {
                let t = Instant::now();
                let out = workbench::meta::call(&app, "execute_tools", send.clone()).await.unwrap();
                v.push(t.elapsed());
                assert!(out.body["results"][0].get("result").is_some(), "{}", out.body);
            }
            v
        }
    };
    let off = gmail_app("off");
    let clean = gmail_app("guard");
    let tainted = gmail_app("guard");
    tainted.flow().absorb(&workbench::engine::flow::Sources::one("gmail_get_email m1 (private)".into()));
    for app in [&off, &clean, &tainted] {
        run(app.clone(), 20).await;
    }
    let med = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    // Interleaved, so a busy machine slows the three alike.
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..calls {
        a.extend(run(off.clone(), 1).await);
        b.extend(run(clean.clone(), 1).await);
        c.extend(run(tainted.clone(), 1).await);
    }
    let (ma, mb, mc) = (med(&a), med(&b), med(&c));
    summary("gmail_send_email, WORKBENCH_FLOW=off", a);
    summary("gmail_send_email, guard (fresh session)", b);
    summary("gmail_send_email, guard, private data read", c);
    println!("{:<48} {:.3?} per execution (median difference)", "guard added (fresh session)", mb.saturating_sub(ma));
    println!(
        "{:<48} {:.3?} per execution (median difference)",
        "guard added, private data read",
        mc.saturating_sub(ma)
    );
    let (fb, fc) = (clean.flow().figures(), tainted.flow().figures());
    println!(
        "{:<48} {} (fresh session), {} (private data read) for {} sends each after 20 warm-up",
        "guard lookups (extra service calls)", fb.lookups, fc.lookups, calls
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let (starts, searches, calls) = if quick { (10, 2_000, 200) } else { (40, 20_000, 2_000) };
    println!(
        "workbench benchmarks ({} mode), {} cores",
        if quick { "quick" } else { "full" },
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    // `-- flow` runs the outbound-data guard's figures only.
    if std::env::args().any(|a| a == "flow") {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(flow_guard_overhead(calls));
        return;
    }
    // `-- search` runs the search figures only.
    if std::env::args().any(|a| a == "search") {
        search_latency(searches);
        return;
    }
    cold_start(starts);
    search_latency(searches);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(execute_overhead(calls));
    rt.block_on(flow_guard_overhead(calls));
}
