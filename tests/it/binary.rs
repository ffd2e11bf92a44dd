//! The real binary over stdio: handshake, tools/list, a call, stdout hygiene, prompt exit.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{assert_snapshot, binary};

#[test]
fn speaks_only_json_rpc_on_stdout_and_exits_when_stdin_closes() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary())
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "execute_tools", "arguments": {"executions": [{"tool": "time_get_current", "args": {"timezone": "UTC"}}]}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nine_tools_only", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "wikipedia_get_summary", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}),
    ];
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut responses = std::collections::HashMap::new();
    while responses.len() < 6 {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("non-JSON line on stdout: {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0");
        if let Some(id) = v.get("id").and_then(Value::as_u64) {
            responses.insert(id, v);
        }
    }
    assert_eq!(responses[&1]["result"]["serverInfo"]["name"], "workbench");
    assert_eq!(responses[&1]["result"]["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(responses[&1]["result"]["instructions"].as_str().unwrap().contains("search_tools"));
    assert_snapshot("tools_list.json", &responses[&2]["result"]["tools"]);
    let text = responses[&3]["result"]["content"][0]["text"].as_str().unwrap();
    let body: Value = serde_json::from_str(text).unwrap();
    assert_eq!(body["results"][0]["result"]["now"]["timezone"], "UTC");
    assert_eq!(responses[&4]["error"]["code"], -32602, "unknown tools are a protocol error");
    assert_eq!(responses[&5]["result"]["isError"], true, "a catalogue tool called directly gets guidance");
    assert!(responses[&5]["result"]["content"][0]["text"].as_str().unwrap().contains("execute_tools"));
    assert!(responses[&6]["result"].is_object());

    drop(stdin);
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(2), "did not exit within 2s of stdin closing");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    assert!(rest.trim().is_empty(), "stdout after the last response: {rest:?}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("DEBUG") || stderr.contains("INFO"), "logs go to stderr");
}

#[test]
fn version_and_help_and_bad_commands() {
    let out = Command::new(binary()).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("workbench {}", env!("CARGO_PKG_VERSION")));
    let out = Command::new(binary()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("mcpServers"));
    let out = Command::new(binary()).arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_client_that_leaves_before_initialize_is_not_a_failure() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(binary()).env("WORKBENCH_HOME", home.path()).stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{:?} {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn terminal_connect_serves_the_page_waits_and_stores() {
    use crate::support::fake::{Fake, Reply};
    let fake = Fake::start(|r| match (r.path.as_str(), r.header("authorization")) {
        ("/user", Some("Bearer ghp_cliTESTtoken0000000000000000000000")) => {
            Reply::json(200, json!({"login": "octocat", "id": 1}))
        }
        _ => {
            Reply::json(401, json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}))
        }
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(binary())
        .args(["connect", "github"])
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_SECRET_STORE", "file")
        .env("WORKBENCH_VAULT_PASSPHRASE", "cli test passphrase")
        .env("WORKBENCH_NO_BROWSER", "1")
        .env("WORKBENCH_GITHUB_BASE_URL", &fake.url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    while !url.contains("/connect/") {
        url.clear();
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut url).await.unwrap();
    }
    let url = url.trim().to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    let at = html.find("name=\"form_token\" value=\"").unwrap() + 25;
    let token = &html[at..at + html[at..].find('"').unwrap()];
    let origin = url[..url.find("/connect/").unwrap()].to_string();
    // What a browser sends with a form submission from the page (credential POSTs need it).
    let done = http
        .post(&url)
        .header("origin", origin)
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "navigate")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&token=ghp_cliTESTtoken0000000000000000000000"))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 200);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.unwrap().unwrap();
    assert!(status.success());
    let mut rest = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut out, &mut rest).await.unwrap();
    assert!(rest.contains("connected as octocat"), "{rest}");
    // A second process sees the connection (SQLite metadata + the encrypted file store).
    let status = Command::new(binary())
        .arg("status")
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_SECRET_STORE", "file")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    let line = text.lines().find(|l| l.starts_with("github ")).unwrap();
    assert!(line.contains("yes") && line.contains("octocat"), "{line}");
    let enc = std::fs::read_to_string(home.path().join("secrets.enc")).unwrap();
    assert!(!enc.contains("ghp_cliTESTtoken"), "the file store holds ciphertext only");
}
