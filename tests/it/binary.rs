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

/// A running binary spoken to line by line (raw JSON-RPC over stdio).
struct Session {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    _home: tempfile::TempDir,
}

impl Session {
    fn spawn() -> Session {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(binary())
            .env("WORKBENCH_HOME", home.path())
            .env("WORKBENCH_NO_BROWSER", "1")
            .env("WORKBENCH_SECRET_STORE", "memory")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Session { child, stdin, out, _home: home }
    }

    /// Sends one request and reads lines until its response (notifications are skipped).
    fn ask(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "the server closed stdout before answering {request}");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("id") == request.get("id") {
                return v;
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The 2026-07-28 request `_meta`: version, capabilities and client identity on every request.
fn modern(version: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
    })
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The 2026-07-28 surface against the specification's text: `server/discover` and `tools/list`
/// are complete results with cache hints (`ttlMs`, `cacheScope`; nothing user-specific, so
/// public); every result says its `resultType`; an input-required result carries no cache hints;
/// results name the server in `_meta`; tools/list keeps one order (twice, and the same as a
/// 2025-11-25 session sees); an unsupported version gets exactly the UnsupportedProtocolVersion
/// error (-32022, data `requested` and `supported`).
#[test]
fn the_2026_07_28_surface_follows_the_specification() {
    let mut s = Session::spawn();
    let m = modern("2026-07-28", json!({}));
    let discover = s.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": m}}));
    let d = &discover["result"];
    assert_eq!(d["resultType"], "complete", "{discover}");
    let versions: Vec<&str> = d["supportedVersions"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(versions.contains(&"2026-07-28") && versions.contains(&"2025-11-25"), "both generations: {versions:?}");
    assert!(d["ttlMs"].as_u64().unwrap() > 0, "discover is cacheable: {discover}");
    assert_eq!(d["cacheScope"], "public");
    assert_eq!(d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "workbench");
    assert!(d["instructions"].as_str().unwrap().contains("search_tools"));

    let first = s.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": m}}));
    let second = s.ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": m}}));
    assert_eq!(first["result"]["resultType"], "complete");
    assert!(first["result"]["ttlMs"].as_u64().unwrap() > 0, "{first}");
    assert_eq!(first["result"]["cacheScope"], "public");
    assert_eq!(first["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "workbench");
    assert_eq!(first["result"], second["result"], "the same list, in the same order");

    let call = s.ask(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"_meta": m, "name": "whoami", "arguments": {}}}));
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    assert_eq!(call["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "workbench");
    assert!(call["result"].get("ttlMs").is_none(), "tools/call results are not cacheable");

    // A held call on a client with form elicitation: an interim result, never cacheable.
    let form = modern("2026-07-28", json!({"elicitation": {"form": {}}}));
    let set = json!({"executions": [{"tool": "vault_set_secret", "args": {"name": "K", "value": "v-0123456789", "allowed_hosts": ["api.example.com"]}}]});
    s.ask(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"_meta": form, "name": "execute_tools", "arguments": set}}));
    let del = json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "K"}}]});
    let held = s.ask(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"_meta": form, "name": "execute_tools", "arguments": del}}));
    let h = &held["result"];
    assert_eq!(h["resultType"], "input_required", "{held}");
    assert!(h["requestState"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(h["inputRequests"]["approve_1"]["method"], "elicitation/create", "{held}");
    assert_eq!(h["inputRequests"]["approve_1"]["params"]["mode"], "form");
    assert!(h.get("ttlMs").is_none() && h.get("cacheScope").is_none(), "no cache hints on input_required: {held}");

    // Versions the server does not implement, on any method: exactly the specification's error.
    for (id, method, version) in [(7, "tools/list", "1900-01-01"), (8, "tools/call", "2099-01-01")] {
        let params = json!({"_meta": modern(version, json!({})), "name": "whoami", "arguments": {}});
        let r = s.ask(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert!(r.get("result").is_none(), "{r}");
        let e = &r["error"];
        assert_eq!(e["code"], -32022, "{r}");
        assert_eq!(e["message"], "Unsupported protocol version");
        assert_eq!(e["data"]["requested"], version);
        let supported: Vec<&str> =
            e["data"]["supported"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(supported, versions, "the same list discover gives");
    }

    // The order a 2025-11-25 session sees is the same.
    let mut legacy = Session::spawn();
    legacy.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}}));
    writeln!(legacy.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let old = legacy.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(names(&old), names(&first), "one order across protocol versions");
    assert!(
        old["result"].get("resultType").is_none() && old["result"].get("ttlMs").is_none(),
        "2025-11-25 results stay as they were: {old}"
    );
    assert!(old["result"].get("_meta").is_none());
}

/// Trace context end to end: a tools/call with `_meta.traceparent` (W3C) over stdio leaves an
/// audit row carrying it (read back with audit_search_log); a malformed one (an injection
/// attempt: arbitrary text in the field) is dropped, never stored.
#[test]
fn a_calls_traceparent_reaches_its_audit_row_and_a_malformed_one_is_dropped() {
    let mut s = Session::spawn();
    let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let bad = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'); DROP TABLE audit; --";
    let call = |id: u64, tz: &str, traceparent: &str| {
        let mut meta = modern("2026-07-28", json!({}));
        meta["traceparent"] = json!(traceparent);
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"_meta": meta, "name": "execute_tools",
            "arguments": {"executions": [{"tool": "time_get_current", "args": {"timezone": tz}}]}}})
    };
    let r = s.ask(call(1, "UTC", good));
    assert_eq!(r["result"]["isError"], false, "{r}");
    let r = s.ask(call(2, "Europe/Paris", bad));
    assert_eq!(r["result"]["isError"], false, "a malformed traceparent does not fail the call: {r}");
    let search = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"_meta": modern("2026-07-28", json!({})),
        "name": "execute_tools", "arguments": {"executions": [{"tool": "audit_search_log", "args": {"tool": "time_get_current"}}]}}});
    let found = s.ask(search);
    let rows = found["result"]["structuredContent"]["results"][0]["result"]["entries"].clone();
    let rows = rows.as_array().unwrap_or_else(|| panic!("audit rows: {found}"));
    let utc = rows.iter().find(|r| r["args"].to_string().contains("UTC")).unwrap_or_else(|| panic!("{rows:?}"));
    let paris = rows.iter().find(|r| r["args"].to_string().contains("Paris")).unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(utc["traceparent"], good, "{utc}");
    assert!(paris.get("traceparent").is_none(), "dropped: {paris}");
    assert!(!found.to_string().contains("DROP TABLE"), "the malformed text is stored nowhere");
}

/// On Linux the binary is linked at a fixed address (`build.rs`): no load-time relocation of the
/// catalogue's static data at each start (docs/footprint.md). ELF `e_type` 2 is ET_EXEC, 3 ET_DYN
/// (a PIE); `WORKBENCH_PIE=1` at build time keeps a PIE.
#[cfg(target_os = "linux")]
#[test]
fn the_linux_binary_is_not_position_independent_unless_asked() {
    let bytes = std::fs::read(binary()).expect("the binary");
    assert_eq!(&bytes[..4], b"\x7fELF");
    let e_type = match bytes[5] {
        2 => u16::from_be_bytes([bytes[16], bytes[17]]),
        _ => u16::from_le_bytes([bytes[16], bytes[17]]),
    };
    let pie_wanted = option_env!("WORKBENCH_PIE").is_some_and(|v| !v.is_empty() && v != "0");
    assert_eq!(e_type, if pie_wanted { 3 } else { 2 }, "ELF type {e_type}");
}
