//! The JSON-RPC input path: the real `mcp::Server` behind the real bounded transport
//! (`workbench::mcp::transport`), over an in-memory duplex instead of stdio.
//!
//! Each input is sent after a valid `initialize` + `notifications/initialized`, as the rest of the
//! client's stream (malformed JSON, huge or deeply nested lines, wrong types, real tool calls), then
//! a final `ping`. The server must answer that ping (one bad message never takes it down), write
//! nothing but JSON-RPC 2.0 objects, and end when the stream closes; all within 10 s, or the input
//! counts as a hang. Lines are capped at 64 KiB here (8 MiB in the binary), and an input whose first
//! byte is 0x01 is the rest repeated past that cap, so the over-long path (the transport's line
//! guard and its id scanner) is reached with small inputs.
//!
//! Nothing leaves the machine: every integration's hosts point at 127.0.0.1:9 (refused), the secret
//! store is in memory, no browser is opened, and each input gets a fresh data directory and runtime
//! (so a `wait_for_connection` left waiting dies with its input).
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use workbench::app::App;
use workbench::config::{Settings, StoreKind};

const MAX_LINE: usize = 64 * 1024;
const INIT: &str = r#"{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;
const FINAL_PING: &str = "\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-final\",\"method\":\"ping\"}\n";

fn settings(home: &std::path::Path) -> Settings {
    let vars = HashMap::from([("WORKBENCH_HOME".to_string(), home.display().to_string())]);
    let mut s = Settings::load(&vars).expect("settings");
    s.secret_store = StoreKind::Memory;
    s.open_browser = false;
    s.call_timeout = Duration::from_secs(2);
    s.credential_env.clear();
    for integration in plugins::INTEGRATIONS {
        for host in integration.hosts {
            s.base_urls.insert((integration.name.to_string(), host.key.to_string()), "http://127.0.0.1:9".into());
        }
    }
    s
}

async fn session(app: std::sync::Arc<App>, input: &[u8]) -> Vec<String> {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(workbench::mcp::transport::serve(app, server_read, server_write, MAX_LINE));
    let (client_read, mut client_write) = tokio::io::split(client);
    // Read everything the server writes while we write, or a full pipe would stall both sides.
    let reader = tokio::spawn(async move {
        let mut lines = Vec::new();
        let mut r = BufReader::new(client_read).lines();
        while let Ok(Some(line)) = r.next_line().await {
            let done = serde_json::from_str::<Value>(&line).is_ok_and(|v| v["id"] == "fuzz-final");
            lines.push(line);
            if done {
                break;
            }
        }
        lines
    });
    // A write fails only when the server stopped reading; the final-ping check below reports it.
    let _ = client_write.write_all(INIT.as_bytes()).await;
    let _ = client_write.write_all(input).await;
    let _ = client_write.write_all(FINAL_PING.as_bytes()).await;
    let _ = client_write.flush().await;
    let lines = reader.await.unwrap();
    let _ = client_write.shutdown().await;
    serving.await.unwrap().expect("the server ends cleanly when the stream closes");
    lines
}

fuzz_target!(|input: &[u8]| {
    let repeated;
    let input = match input.split_first() {
        Some((1, rest)) if !rest.is_empty() => {
            repeated = rest.repeat(MAX_LINE / rest.len() + 2);
            &repeated[..]
        }
        _ => input,
    };
    let home = tempfile::tempdir().unwrap();
    let app = App::new(settings(home.path()));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let lines = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), session(app, input)).await })
        .expect("the session did not finish within 10 s (hang)");
    rt.shutdown_timeout(Duration::from_secs(1));
    let mut answered = false;
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line:.200}"));
        assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line:.200}");
        assert!(v.get("result").is_some() || v.get("error").is_some() || v.get("method").is_some(), "{line:.200}");
        answered |= v["id"] == "fuzz-final" && v.get("result").is_some();
    }
    assert!(answered, "the final ping got no answer: the server stopped serving ({} lines)", lines.len());
});
