//! The stdio transport in-process (`mcp::transport::serve` over an in-memory duplex, the real
//! Server): over-long lines, wrong param types, unknown methods, and prompt shutdown when the input
//! closes with a call still running.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use workbench::mcp::transport::{self, EOF_GRACE, MAX_LINE_BYTES};

use crate::support::{TestApp, app};

struct Session {
    _app: TestApp,
    write: WriteHalf<DuplexStream>,
    read: tokio::io::Lines<BufReader<ReadHalf<DuplexStream>>>,
    serving: JoinHandle<anyhow::Result<()>>,
}

async fn start(max_line: usize) -> Session {
    let t = app();
    let (client, server) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server);
    let serving = tokio::spawn(transport::serve(t.app.clone(), sr, sw, max_line));
    let (cr, cw) = tokio::io::split(client);
    let mut s = Session { _app: t, write: cw, read: BufReader::new(cr).lines(), serving };
    s.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}})).await;
    assert_eq!(s.next().await["result"]["serverInfo"]["name"], "workbench");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    s
}

impl Session {
    async fn send(&mut self, v: &Value) {
        self.raw(v.to_string().as_bytes()).await;
    }
    async fn raw(&mut self, line: &[u8]) {
        self.write.write_all(line).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        self.write.flush().await.unwrap();
    }
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.read.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}

#[tokio::test]
async fn an_over_long_request_gets_a_clear_error_and_the_next_is_served() {
    let mut s = start(4096).await;
    // The TypeScript SDK's key order: the id comes last.
    let big = json!({"method": "tools/call", "params": {"name": "search_tools", "arguments": {"query": "x".repeat(5000), "id": 99}}, "jsonrpc": "2.0", "id": 1});
    let big_len = big.to_string().len();
    s.send(&big).await;
    let r = s.next().await;
    assert_eq!(r["id"], 1, "{r}");
    assert_eq!(r["error"]["code"], -32600);
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "Message too large: {big_len} bytes on one line, over workbench's limit of 4096 bytes"
        )),
        "{msg}"
    );
    // A notification over the limit has no id to answer: dropped.
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"pad": "y".repeat(5000)}})).await;
    // A line just under the limit is served as usual.
    let query = "time ".repeat(700);
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_tools", "arguments": {"query": query}}})).await;
    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    // Answers come as calls finish (the ping may overtake the search).
    let (a, b) = (s.next().await, s.next().await);
    let mut ids = [a["id"].clone(), b["id"].clone()];
    ids.sort_by_key(|v| v.as_i64());
    assert_eq!(ids, [json!(2), json!(3)], "{a} {b}");
    let search = if a["id"] == 2 { a } else { b };
    assert_eq!(search["result"]["isError"], false, "{search}");
    s.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
    assert_eq!(s.next().await["id"], 4, "nothing else was sent");
}

#[tokio::test]
async fn wrong_param_types_are_invalid_params_and_unknown_methods_not_found() {
    let mut s = start(MAX_LINE_BYTES).await;
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}})).await;
    let r = s.next().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(msg.starts_with("Invalid params for tools/call: ") && msg.contains("integer"), "{msg}");

    s.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/frobnicate", "params": {}})).await;
    let r = s.next().await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert_eq!(r["error"]["message"], "Method not found: prompts/frobnicate");

    // Not JSON, and nesting past serde_json's limit: ignored, no answer, still serving.
    s.raw(b"{not json").await;
    s.raw(&[b'['; 10_000]).await;
    // JSON that is no JSON-RPC message: one Invalid Request.
    s.raw(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"x"}"#).await;
    let r = s.next().await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    s.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await;
    assert_eq!(s.next().await["id"], 5);
}

#[tokio::test]
async fn closing_the_input_stops_calls_still_running_after_the_grace() {
    let mut s = start(MAX_LINE_BYTES).await;
    s.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "connect", "arguments": {"integration": "github"}}})).await;
    let r = s.next().await;
    let body: Value = serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let id = body["connectionId"].as_str().expect("a pending connect link").to_string();
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait_for_connection", "arguments": {"connectionId": id, "timeoutSec": 600}}})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let closed = Instant::now();
    s.write.shutdown().await.unwrap();
    tokio::time::timeout(EOF_GRACE + Duration::from_secs(2), s.serving)
        .await
        .expect("serve returns soon after the input closes")
        .unwrap()
        .unwrap();
    let took = closed.elapsed();
    assert!(took >= EOF_GRACE - Duration::from_millis(50), "in-flight calls get the grace: {took:?}");
}

#[tokio::test]
async fn a_peer_that_leaves_before_initialize_is_not_an_error() {
    let t = app();
    let (client, server) = tokio::io::duplex(1024);
    let (sr, sw) = tokio::io::split(server);
    drop(client);
    transport::serve(t.app.clone(), sr, sw, MAX_LINE_BYTES).await.unwrap();
}
