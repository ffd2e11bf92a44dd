//! execute_tools end to end: ordering and the pool bound, compose, return projection, refs, vault,
//! errors, timeouts, panics, scrubbing, the size cap and the audit log.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use plugins::api::{AuthKind, AuthSpec, Effect, Field, Host, HttpRequest, Inject, Integration, ToolSpec, Upstream};
use serde_json::{Value, json};
use workbench::app::App;
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::{MemoryStore, Secret};

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app, app_with};

/// A fake Hacker News user endpoint that answers slowly and records the most requests in flight.
async fn slow_users(delay: Duration) -> (Fake, Arc<AtomicUsize>) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (i, p) = (in_flight.clone(), peak.clone());
    let fake = Fake::start(move |r| {
        let now = i.fetch_add(1, Ordering::SeqCst) + 1;
        p.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(delay);
        i.fetch_sub(1, Ordering::SeqCst);
        let name = r.path.trim_start_matches("/user/").trim_end_matches(".json").to_string();
        Reply::json(
            200,
            json!({"id": name, "karma": name.trim_start_matches('u').parse::<u64>().unwrap_or(0), "created": 0}),
        )
    })
    .await;
    (fake, peak)
}

#[tokio::test]
async fn batches_keep_order_and_respect_the_pool_bound() {
    let (fake, peak) = slow_users(Duration::from_millis(150)).await;
    let t = app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", fake.url.clone())]);
    let executions: Vec<Value> =
        (0..20).map(|i| json!({"tool": "hackernews_get_user", "args": {"username": format!("u{i}")}})).collect();
    let started = std::time::Instant::now();
    let out = t.call("execute_tools", json!({ "executions": executions })).await;
    let elapsed = started.elapsed();
    assert!(!out.is_error);
    let results = out.body["results"].as_array().unwrap();
    assert_eq!(results.len(), 20);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["result"]["karma"], i as u64, "result {i} is in request order");
    }
    assert_eq!(peak.load(Ordering::SeqCst), 8, "at most 8 executions run at once");
    assert!(elapsed >= Duration::from_millis(3 * 150), "20 calls at 8 wide take at least 3 rounds: {elapsed:?}");

    let (fake, peak) = slow_users(Duration::from_millis(50)).await;
    let t = app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", fake.url.clone()), ("WORKBENCH_CONCURRENCY", "2".into())]);
    let executions: Vec<Value> =
        (0..6).map(|i| json!({"tool": "hackernews_get_user", "args": {"username": format!("u{i}")}})).collect();
    t.call("execute_tools", json!({ "executions": executions })).await;
    assert_eq!(peak.load(Ordering::SeqCst), 2, "the bound is configurable");
}

#[tokio::test]
async fn one_failure_does_not_abort_the_others() {
    let t = app();
    let out = t
        .call(
            "execute_tools",
            json!({"executions": [
                {"tool": "time_get_current", "args": {"timezone": "UTC"}},
                {"tool": "jira_create_isue", "args": {}},
                {"tool": "data_query_json", "args": {"expression": "a", "data": {"a": 1}, "bogus": true}},
                {"tool": "data_query_json", "args": {"expression": "length(@)", "data": [1, 2, 3]}}
            ]}),
        )
        .await;
    let r = out.body["results"].as_array().unwrap();
    assert_eq!(r[0]["result"]["now"]["timezone"], "UTC");
    assert_eq!(r[1]["error"]["code"], "TOOL_NOT_FOUND");
    assert_eq!(r[2]["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(r[2]["error"]["problems"][0]["path"], "/bogus");
    assert_eq!(r[2]["error"]["provided"], json!(["expression", "data", "bogus"]));
    assert_eq!(r[2]["error"]["expected_parameters"]["expression"], "string, required");
    assert_eq!(r[3]["result"]["result"], 3);
}

#[tokio::test]
async fn unknown_tools_suggest_close_names() {
    let t = app();
    let e = t.err("hackernews_get_usr", json!({})).await;
    assert_eq!(e["code"], "TOOL_NOT_FOUND");
    assert_eq!(e["did_you_mean"][0], "hackernews_get_user");
}

#[tokio::test]
async fn compose_passes_values_between_steps_with_their_types() {
    let t = app();
    let out = t
        .call(
            "execute_tools",
            json!({
                "compose": true,
                "executions": [
                    {"ref_id": "csv", "tool": "data_convert_csv", "args": {"input": "name,stars\nalpha,5\nbeta,12\n", "to": "json"}},
                    {"ref_id": "top", "tool": "data_query_json", "args": {"expression": "max_by(rows, &stars)", "data": "{{step:csv}}"}},
                    {"ref_id": "table", "tool": "data_convert_csv", "args": {"input": ["{{step:top.result}}"], "to": "markdown"}},
                    {"ref_id": "msg", "tool": "data_query_json", "args": {"expression": "@", "data": "best: {{step:top.result.name}} ({{step:top.result.stars}}), rows {{step:csv.row_count}}, first {{step:csv.rows.0}}"}}
                ]
            }),
        )
        .await;
    assert!(!out.is_error, "{}", out.body);
    assert_eq!(
        out.body["result"]["result"], "best: beta (12), rows 2, first {\"name\":\"alpha\",\"stars\":5}",
        "without return, the last step's result comes back"
    );

    let out = t
        .call(
            "execute_tools",
            json!({
                "compose": true,
                "executions": [
                    {"ref_id": "csv", "tool": "data_convert_csv", "args": {"input": "name,stars\nalpha,5\nbeta,12\n", "to": "json"}},
                    {"ref_id": "sum", "tool": "data_query_json", "args": {"expression": "sum(rows[].stars)", "data": "{{step:csv}}"}}
                ],
                "return": {"total": "{{step:sum.result}}", "count": "{{step:csv.row_count}}", "names": ["{{step:csv.rows.0.name}}", "{{step:csv.rows.1.name}}"]}
            }),
        )
        .await;
    assert_eq!(out.body, json!({"result": {"total": 17, "count": 2, "names": ["alpha", "beta"]}}));

    let single = t
        .call(
            "execute_tools",
            json!({"compose": true, "executions": [{"ref_id": "a", "tool": "time_get_current", "args": {"timezone": "UTC"}}], "return": "{{step:a.now.timezone}}"}),
        )
        .await;
    assert_eq!(single.body, json!({"result": "UTC"}));
}

#[tokio::test]
async fn compose_rules_are_checked_before_anything_runs() {
    let t = app();
    let step = |id: &str| json!({"ref_id": id, "tool": "time_get_current", "args": {}});
    let nine: Vec<Value> = (0..9).map(|i| step(&format!("s{i}"))).collect();
    let too_many = t.call("execute_tools", json!({"compose": true, "executions": nine})).await;
    assert!(too_many.is_error);
    assert_eq!(too_many.body["error"]["code"], "INVALID_ARGUMENTS");
    let no_ref = t.call("execute_tools", json!({"compose": true, "executions": [{"tool": "time_get_current"}]})).await;
    assert_eq!(no_ref.body["error"]["problems"][0]["path"], "/executions/0/ref_id");
    let dup = t.call("execute_tools", json!({"compose": true, "executions": [step("a"), step("a")]})).await;
    assert!(dup.body["error"]["problems"][0]["problem"].as_str().unwrap().contains("used twice"));
    let bad_return =
        t.call("execute_tools", json!({"compose": true, "executions": [step("a")], "return": "{{step:b.x}}"})).await;
    assert_eq!(bad_return.body["error"]["code"], "BAD_REF");
    let vault_return = t.call("execute_tools", json!({"executions": [step("a")], "return": "{{vault:token}}"})).await;
    assert_eq!(vault_return.body["error"]["code"], "BAD_REF");
    let refs_without_compose =
        t.call("execute_tools", json!({"executions": [step("a"), {"tool": "data_query_json", "args": {"expression": "@", "data": "{{step:a.now}}"}}]})).await;
    assert_eq!(refs_without_compose.body["error"]["code"], "BAD_REF");
    let empty = t.call("execute_tools", json!({"executions": []})).await;
    assert_eq!(empty.body["error"]["code"], "INVALID_ARGUMENTS");
    // None of these ran anything.
    let log = t.ok("audit_search_log", json!({})).await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 0, "{log}");
}

#[tokio::test]
async fn a_bad_ref_stops_compose_after_earlier_steps_took_effect() {
    let t = app();
    let out = t
        .call(
            "execute_tools",
            json!({"compose": true, "executions": [
                {"ref_id": "one", "tool": "time_get_current", "args": {}},
                {"ref_id": "two", "tool": "data_query_json", "args": {"expression": "@", "data": "{{step:one.now.}}"}},
                {"ref_id": "three", "tool": "time_get_current", "args": {}}
            ]}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(out.body["error"]["code"], "BAD_REF");
    assert_eq!(out.body["error"]["ref_id"], "two");
    assert_eq!(out.body["completed"], json!(["one"]));
    assert_eq!(out.body["not_run"], json!(["three"]));
    let missing = t
        .call(
            "execute_tools",
            json!({"compose": true, "executions": [
                {"ref_id": "one", "tool": "time_get_current", "args": {}},
                {"ref_id": "two", "tool": "data_query_json", "args": {"expression": "@", "data": "{{step:one.constructor}}"}}
            ]}),
        )
        .await;
    assert!(missing.body["error"]["message"].as_str().unwrap().contains("has no 'constructor'"));
    let log = t.ok("audit_search_log", json!({"tool": "time_get_current"})).await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 2, "step one ran in both runs; step three never ran");
}

#[tokio::test]
async fn return_without_compose_lists_failures_and_refuses_refs_to_them() {
    let t = app();
    let ok_and_fail = json!([
        {"ref_id": "good", "tool": "data_query_json", "args": {"expression": "a", "data": {"a": 42}}},
        {"ref_id": "bad", "tool": "data_query_json", "args": {"expression": "a[", "data": {}}}
    ]);
    let out =
        t.call("execute_tools", json!({"executions": ok_and_fail, "return": {"answer": "{{step:good.result}}"}})).await;
    assert!(!out.is_error);
    assert_eq!(out.body["result"], json!({"answer": 42}));
    assert_eq!(out.body["errors"][0]["index"], 1);
    assert_eq!(out.body["errors"][0]["ref_id"], "bad");
    assert_eq!(out.body["errors"][0]["error"]["code"], "INVALID_ARGUMENTS");
    let out = t
        .call(
            "execute_tools",
            json!({"executions": ok_and_fail, "return": ["{{step:good.result}}", "{{step:bad.result}}"]}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(out.body["error"]["code"], "BAD_REF");
    assert!(out.body["error"]["message"].as_str().unwrap().contains("failed"));
    assert!(out.body["errors"].is_array(), "the failure is still listed");
}

async fn echo_wiki() -> Fake {
    // Echoes the search query back in the excerpt, like a search page quoting the terms.
    Fake::start(|r| {
        let q = r.q("q").unwrap_or_default().to_string();
        Reply::json(
            200,
            json!({"pages": [{"key": "K", "title": "T", "excerpt": format!("you searched {q}"), "description": q}]}),
        )
    })
    .await
}

#[tokio::test]
async fn vault_refs_reach_allowed_hosts_only_and_never_come_back() {
    let fake = echo_wiki().await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())]);
    let secret = "zq-very-secret-value-81723";
    t.app.vault.set("wiki_key", Secret::new(secret.to_string()), None, vec![fake.url.clone()]).await.unwrap();
    t.app
        .vault
        .set("other_key", Secret::new("another-secret-999".to_string()), None, vec!["api.example.com".into()])
        .await
        .unwrap();

    let r = t.ok("wikipedia_search_articles", json!({"query": "key {{vault:wiki_key}}"})).await;
    assert_eq!(fake.last().q("q"), Some(format!("key {secret}").as_str()), "the upstream got the real value");
    assert_eq!(r["results"][0]["excerpt"], "you searched key [redacted]", "the echoed value is scrubbed");
    assert!(!r.to_string().contains(secret));

    let denied = t.err("wikipedia_search_articles", json!({"query": "{{vault:other_key}}"})).await;
    assert_eq!(denied["code"], "VAULT_DENIED");
    let missing = t.err("wikipedia_search_articles", json!({"query": "{{vault:nope}}"})).await;
    assert_eq!(missing["code"], "BAD_REF");
    let local = t.err("data_query_json", json!({"expression": "@", "data": "{{vault:wiki_key}}"})).await;
    assert_eq!(local["code"], "VAULT_DENIED", "a tool that sends nothing anywhere cannot receive secrets");

    let fake_title = "{{vault:wiki_key}}";
    // A step whose *output* is vault-ref text (built without writing a ref in args) passes it on
    // literally: step output is never scanned again.
    let out = t
        .call(
            "execute_tools",
            json!({"compose": true, "executions": [
                {"ref_id": "a", "tool": "data_query_json", "args": {"expression": "join('', ['{{', 'vault:wiki_key', '}}'])", "data": {}}},
                {"ref_id": "b", "tool": "wikipedia_search_articles", "args": {"query": "{{step:a.result}}"}}
            ]}),
        )
        .await;
    assert!(!out.is_error, "{}", out.body);
    assert_eq!(fake.last().q("q"), Some(fake_title), "the literal text reached the tool, not the secret");

    // The audit log holds the agent's template, never the value.
    let log = t.ok("audit_search_log", json!({"tool": "wikipedia_search_articles", "limit": 100})).await;
    let text = log.to_string();
    assert!(text.contains("{{vault:wiki_key}}"));
    assert!(!text.contains(secret));
    let db = std::fs::read(t.home.path().join("workbench.db")).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains(secret), "no secret in SQLite");
}

#[tokio::test]
async fn token_shaped_strings_are_scrubbed_from_results_and_audit() {
    let fake = echo_wiki().await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())]);
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let r = t.ok("wikipedia_search_articles", json!({"query": format!("leaked {token}")})).await;
    assert!(!r.to_string().contains(token), "{r}");
    let log = t.ok("audit_search_log", json!({})).await;
    assert!(!log.to_string().contains(token));
}

#[tokio::test]
async fn slow_tools_time_out_and_the_call_is_cancelled() {
    let (fake, _) = slow_users(Duration::from_secs(3)).await;
    let t =
        app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", fake.url.clone()), ("WORKBENCH_CALL_TIMEOUT_SECS", "1".into())]);
    let started = std::time::Instant::now();
    let e = t.err("hackernews_get_user", json!({"username": "u1"})).await;
    assert_eq!(e["code"], "TIMEOUT");
    assert!(started.elapsed() < Duration::from_millis(2500), "{:?}", started.elapsed());
}

#[tokio::test]
async fn large_responses_are_capped_with_a_hint() {
    let big = "lorem ipsum ".repeat(9_000);
    let fake = Fake::start(move |r| {
        Reply::json(
            200,
            json!({"query": {"pages": [{"title": r.q("titles").unwrap_or_default(), "extract": big.clone()}]}}),
        )
    })
    .await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())]);
    let executions: Vec<Value> = (0..3)
        .map(|i| json!({"tool": "wikipedia_get_article", "args": {"title": format!("A{i}"), "max_chars": 100000}}))
        .collect();
    let out = t.call("execute_tools", json!({ "executions": executions })).await;
    let text = out.body.to_string();
    assert!(text.len() <= 60_000, "{}", text.len());
    assert_eq!(out.body["truncated"]["limit_chars"], 60_000);
    assert!(out.body["truncated"]["original_chars"].as_u64().unwrap() > 300_000);
    assert_eq!(out.body["results"][2]["result"]["title"], "A2", "every result is still there, shortened");
}

// A test-only integration run by the real engine: proves panics and missing credentials are
// handled. Its handlers are ordinary plugin handlers; nothing of workbench is replaced.
fn no_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}
static TEST_TOOLS: [ToolSpec; 1] = [ToolSpec {
    name: "crashy_get_thing",
    description: "A tool whose handler panics, to prove one bad call never takes the server down.",
    keywords: &[],
    effect: Effect::Read,
    files: plugins::api::Files::None,
    results: Some(plugins::flow::Results::Private),
    audience: None,
    schema: no_schema,
    run: |_up: Arc<dyn Upstream>, _args| Box::pin(async move { panic!("handler bug") }),
}];
static CRASHY: Integration = Integration {
    name: "crashy",
    display_name: "Crashy",
    version: "0.0.1",
    auth: AuthSpec::NONE,
    keywords: &[],
    hosts: &[Host { key: "base_url", default_url: "http://127.0.0.1:9" }],
    curl_proxy: plugins::api::CurlProxy::Off,
    rate_limit: plugins::api::RateLimit::NONE,
    side: None,
    tools: &TEST_TOOLS,
    error_message: |_| None,
};
static LOCKED_TOOLS: [ToolSpec; 1] = [ToolSpec {
    name: "locked_get_thing",
    description: "A tool of an integration that needs a credential the user has not given.",
    keywords: &[],
    effect: Effect::Write,
    files: plugins::api::Files::None,
    results: Some(plugins::flow::Results::Private),
    audience: None,
    schema: no_schema,
    // Echoes what it received, as a careless API might: the credential must still never come back.
    run: |up, _args| {
        Box::pin(async move {
            let r = up.send(HttpRequest::get("/echo")).await?;
            r.json()
        })
    },
}];
static LOCKED: Integration = Integration {
    name: "locked",
    display_name: "Locked",
    version: "0.0.1",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field { name: "token", label: "Token", secret: true, required: true, help: "" }],
        inject: Inject::Bearer("token"),
        identity: None,
        oauth: None,
    },
    keywords: &[],
    hosts: &[Host { key: "base_url", default_url: "http://127.0.0.1:9" }],
    curl_proxy: plugins::api::CurlProxy::Full,
    rate_limit: plugins::api::RateLimit::NONE,
    side: None,
    tools: &LOCKED_TOOLS,
    error_message: |_| None,
};

fn custom_app_with(env: &[(&str, String)]) -> TestApp {
    let home = tempfile::tempdir().unwrap();
    let mut vars: std::collections::HashMap<String, String> =
        env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    let settings = Settings::load(&vars).unwrap();
    let app = App::with_parts(
        settings,
        Registry::new(&[&CRASHY, &LOCKED], workbench::builtins::BUILTINS),
        Arc::new(MemoryStore::default()),
    );
    TestApp { app, home }
}

fn custom_app() -> TestApp {
    custom_app_with(&[])
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_and_the_engine_keeps_working() {
    let t = custom_app();
    let out = t
        .call("execute_tools", json!({"executions": [{"tool": "crashy_get_thing"}, {"tool": "time_get_current", "args": {"timezone": "UTC"}}]}))
        .await;
    assert_eq!(out.body["results"][0]["error"]["code"], "INTERNAL_ERROR");
    assert_eq!(out.body["results"][1]["result"]["now"]["timezone"], "UTC");
    let again = t.ok("time_get_current", json!({})).await;
    assert!(again["now"]["utc"].is_string());
}

#[tokio::test]
async fn tools_of_unconnected_integrations_say_how_to_connect() {
    let t = custom_app();
    let e = t.err("locked_get_thing", json!({})).await;
    assert_eq!(e["code"], "NOT_CONNECTED");
    assert_eq!(e["integration"], "locked");
    assert_eq!(e["next_step"], json!({"tool": "connect", "arguments": {"integration": "locked"}}));
    let list = t.call("list_integrations", json!({})).await;
    assert_eq!(
        list.body["integrations"],
        json!([{"name": "crashy", "version": "0.0.1", "connected": true}, {"name": "locked", "version": "0.0.1", "connected": false}])
    );
    let curl = t.call("curl_session", json!({"integrations": ["locked", "crashy", "nope"]})).await;
    assert!(curl.is_error);
    assert_eq!(
        curl.body["error"],
        "locked: not connected (call connect first); crashy: curl proxy is not enabled for this integration (use http_send_request for public URLs); Unknown integration: nope"
    );
    let audit = t.ok("audit_search_log", json!({"status": "error"})).await;
    assert_eq!(audit["entries"][0]["error_code"], "NOT_CONNECTED");
    assert_eq!(audit["entries"][0]["mutating"], true);
}

#[tokio::test]
async fn environment_credentials_connect_and_are_injected_but_never_returned() {
    let fake = Fake::start(|r| {
        // The fake checks the scheme like the real service, then carelessly echoes the header.
        match r.header("authorization") {
            Some(a) if a == "Bearer env-token-1234567" => Reply::json(200, json!({"you_sent": a, "path": r.path})),
            _ => Reply::json(401, json!({"message": "Bad credentials"})),
        }
    })
    .await;
    let t = custom_app_with(&[
        ("WORKBENCH_LOCKED_BASE_URL", fake.url.clone()),
        ("WORKBENCH_LOCKED_TOKEN", "env-token-1234567".into()),
    ]);
    assert!(t.app.is_connected("locked"));
    let r = t.ok("locked_get_thing", json!({})).await;
    assert_eq!(fake.last().header("authorization"), Some("Bearer env-token-1234567"));
    assert_eq!(r, json!({"you_sent": "Bearer [redacted]", "path": "/echo"}));
    let log = t.ok("audit_search_log", json!({})).await;
    assert!(!log.to_string().contains("env-token-1234567"));

    let wrong = custom_app_with(&[
        ("WORKBENCH_LOCKED_BASE_URL", fake.url.clone()),
        ("WORKBENCH_LOCKED_TOKEN", "nope-nope-nope".into()),
    ]);
    let e = wrong.err("locked_get_thing", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("call connect with integration 'locked' to reconnect"), "{e}");
}
