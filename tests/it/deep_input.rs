//! No input can overflow the stack (issue 13, item 8): deeply nested expressions, arguments,
//! upstream bodies and documents give a clean error or a degraded conversion, in-process on a
//! normal test thread (2 MiB stack, like the runtime's workers) and over stdio against the real
//! binary, which keeps answering afterwards.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fake::{Fake, Reply};
use crate::support::{app, app_with, binary};

fn parens(n: usize) -> String {
    format!("{}a{}", "(".repeat(n), ")".repeat(n))
}

fn deep_array_text(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

/// `inner` wrapped in `n` arrays (small n: built and dropped normally).
fn nest(inner: Value, n: usize) -> Value {
    (0..n).fold(inner, |v, _| Value::Array(vec![v]))
}

/// Attack: `data_query_json` with an 8 KB expression of 4,000 nested parentheses aborted the
/// process (stack overflow inside the `jmespath` crate). Now a clear INVALID_ARGUMENTS, at 4,000
/// and at 100,000 levels, and the next query runs.
#[tokio::test]
async fn data_query_json_refuses_deeply_nested_expressions() {
    let t = app();
    for n in [4_000, 100_000] {
        let err = t.err("data_query_json", json!({"expression": parens(n), "data": {"a": 1}})).await;
        assert_eq!(err["code"], "INVALID_ARGUMENTS", "{err}");
        let message = err["message"].as_str().unwrap();
        assert!(message.contains("more than 64 levels"), "{message}");
    }
    let long = format!("a{}", ".a".repeat(100_000));
    let err = t.err("data_query_json", json!({"expression": long, "data": {"a": 1}})).await;
    assert!(err["message"].as_str().unwrap().contains("more than 256 operators"), "{err}");
    let ok = t
        .ok("data_query_json", json!({"expression": "items[?n > `1`].n", "data": {"items": [{"n": 1}, {"n": 2}]}}))
        .await;
    assert_eq!(ok["result"], json!([2]));
}

/// A 100,000-deep JSON array as tool data (JSON text: as a JSON value the client's message
/// itself cannot parse, see the stdio test) and as an upstream body: clean errors.
#[tokio::test]
async fn a_100000_deep_json_array_in_args_or_from_upstream_is_a_clean_error() {
    let t = app();
    let err = t.err("data_query_json", json!({"expression": "@", "data": deep_array_text(100_000)})).await;
    assert_eq!(err["code"], "INVALID_ARGUMENTS", "{err}");
    assert!(err["message"].as_str().unwrap().contains("128 levels"), "{err}");

    // Jira answers an issue with a 100,000-deep array: HttpResponse::json (serde_json, 128 levels).
    let fake = Fake::start(|_| Reply {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: deep_array_text(100_000),
    })
    .await;
    let t = app_with(&[
        ("WORKBENCH_JIRA_BASE_URL", fake.url.clone()),
        ("WORKBENCH_JIRA_SITE", "acme.atlassian.net".into()),
        ("WORKBENCH_JIRA_EMAIL", "ada@acme.test".into()),
        ("WORKBENCH_JIRA_TOKEN", "jira-token-for-deep-test".into()),
    ]);
    let err = t.err("jira_get_issue", json!({"issue_key": "ENG-1"})).await;
    assert_eq!(err["code"], "UPSTREAM_ERROR", "{err}");
    assert!(err["message"].as_str().unwrap().contains("malformed JSON"), "{err}");
    assert!(fake.requests().iter().any(|r| r.path.contains("/issue/ENG-1")));
}

/// Compose steps cannot grow a value without bound: each step's result may be placed inside
/// nested arguments of the next, so resolved arguments deeper than 256 levels are refused.
#[tokio::test]
async fn compose_refs_cannot_build_values_deeper_than_the_bound() {
    let t = app();
    let out = t
        .call(
            "execute_tools",
            json!({"compose": true, "executions": [
                {"tool": "data_query_json", "ref_id": "a", "args": {"expression": "@", "data": nest(json!(1), 120).to_string()}},
                {"tool": "data_query_json", "ref_id": "b", "args": {"expression": "@", "data": nest(json!("{{step:a.result}}"), 120)}},
                {"tool": "data_query_json", "ref_id": "c", "args": {"expression": "@", "data": nest(json!("{{step:b.result}}"), 20)}}
            ]}),
        )
        .await;
    // Compose stops at the failing step: a and b ran (240 levels are still fine), c was refused.
    assert!(out.is_error);
    assert_eq!(out.body["completed"], json!(["a", "b"]), "{:.300}", out.body);
    let err = &out.body["error"];
    assert_eq!((err["code"].as_str(), err["ref_id"].as_str()), (Some("INVALID_ARGUMENTS"), Some("c")), "{err:.300}");
    assert!(err["message"].as_str().unwrap().contains("256 levels"), "{err}");
}

fn deep_page(storage: &str) -> Value {
    json!({
        "id": "123456", "title": "Deep", "status": "current", "spaceId": "98306", "parentId": "65537",
        "version": {"number": 1, "message": "", "createdAt": "2026-01-10T12:00:00.000Z"},
        "createdAt": "2026-01-02T10:00:00.000Z", "authorId": "5b10ac8d82e05b22cc7d4ef5",
        "_links": {"webui": "/spaces/ENG/pages/123456/Deep", "base": "http://confluence.test/wiki"},
        "body": {"storage": {"representation": "storage", "value": storage}}
    })
}

/// Attack: a Confluence page whose storage XHTML nests `<div>` 20,000 deep aborted the process
/// through `confluence_get_page`. Now the page converts (deeper than 64 levels as flat text), at
/// 20,000 and at 100,000 levels, and its text is all there.
#[tokio::test]
async fn confluence_get_page_with_deeply_nested_storage_converts() {
    for n in [20_000, 100_000] {
        let storage = format!("{}deep words{}<p>after the divs</p>", "<div>".repeat(n), "</div>".repeat(n));
        let fake = Fake::start(move |r| {
            if r.path == "/wiki/api/v2/pages/123456" {
                Reply::json(200, deep_page(&storage))
            } else {
                Reply::json(404, json!({"errors": [{"status": 404, "code": "NOT_FOUND", "title": "Not Found"}]}))
            }
        })
        .await;
        let t = app_with(&[
            ("WORKBENCH_CONFLUENCE_BASE_URL", format!("{}/wiki", fake.url)),
            ("WORKBENCH_CONFLUENCE_SITE", "acme.atlassian.net".into()),
            ("WORKBENCH_CONFLUENCE_EMAIL", "ada@acme.test".into()),
            ("WORKBENCH_CONFLUENCE_TOKEN", "ATATT3xFfGF0-confluence-deep-42".into()),
        ]);
        let page = t.ok("confluence_get_page", json!({"page_id": "123456"})).await;
        let body = page["body"].as_str().unwrap();
        assert!(body.contains("deep words") && body.contains("after the divs"), "{body:.200}");
        // Markdown -> storage on the way in, nested as deep: finishes too (the fake refuses the
        // update, which is fine; the conversion ran before sending).
        let md = ">".repeat(n) + " quoted";
        let update = json!({"executions": [{"tool": "confluence_update_page", "args": {"page_id": "123456", "title": "Deep", "body": md}}]});
        let _ = t.call("execute_tools", update).await;
    }
}

/// Attack, end to end against the real binary over stdio: a message nested 100,000 levels, a
/// 4,000-parenthesis expression and 100,000-deep JSON text as data; each gets an answer or is
/// dropped by the transport, the process stays up and answers the next request.
#[test]
fn the_binary_answers_after_deep_input() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary())
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_SECRET_STORE", "memory")
        .env("WORKBENCH_NO_BROWSER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let call = |id: u64, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "execute_tools", "arguments": args}})
            .to_string()
    };
    let deep_message = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"execute_tools","arguments":{{"executions":{}}}}}}}"#,
        deep_array_text(100_000)
    );
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        deep_message,
        call(3, json!({"executions": [{"tool": "data_query_json", "args": {"expression": parens(4_000), "data": {"a": 1}}}]})),
        call(4, json!({"executions": [{"tool": "data_query_json", "args": {"expression": "@", "data": deep_array_text(100_000)}}]})),
        call(5, json!({"executions": [{"tool": "data_query_json", "args": {"expression": "a", "data": {"a": "still here"}}}]})),
        json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}).to_string(),
    ];
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut responses = std::collections::HashMap::new();
    let started = Instant::now();
    while !(3..=6).all(|id| responses.contains_key(&id)) {
        assert!(started.elapsed() < Duration::from_secs(60), "no answers for {:?}", responses.keys());
        let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) else { break };
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("non-JSON line on stdout: {line:.200}"));
        if let Some(id) = v.get("id").and_then(Value::as_u64) {
            responses.insert(id, v);
        }
    }
    assert!(child.try_wait().unwrap().is_none(), "the server died");
    let result = |id: u64| -> Value {
        let text =
            responses[&id]["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{}", responses[&id]));
        serde_json::from_str(text).unwrap()
    };
    assert_eq!(result(3)["results"][0]["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(result(4)["results"][0]["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(result(5)["results"][0]["result"]["result"], "still here");
    assert!(responses[&6]["result"].is_object());
    if let Some(r) = responses.get(&2) {
        assert!(r.get("error").is_some(), "the deep message is never run: {r:.200}");
    }
    drop(stdin);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(5), "did not exit after stdin closed");
        std::thread::sleep(Duration::from_millis(20));
    }
}
