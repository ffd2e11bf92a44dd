//! Security review as tests: a full session of the real binary (trace logging on, credentials in
//! the environment, vault secrets, a custom app, the curl proxy, failing calls whose upstream echoes
//! the credential) is scanned end to end (every stdout line, every log line, every file in the
//! data directory: database, WAL, encrypted store) for the secrets it used; every loopback endpoint
//! refuses a foreign Host (DNS rebinding) and cross-site POSTs (CSRF); the data dir and its files
//! are private.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::fake::{Fake, Reply};
use crate::support::{app_with, binary};

const GH_TOKEN: &str = "ghp_SecurityScanToken0123456789abcdefXYZ";
const VAULT_VALUE: &str = "vault-value-SecurityScan-7c1d9e";
const PASSPHRASE: &str = "file-store-passphrase-SecurityScan";

/// A GitHub stand-in that echoes whatever credential and body it gets, in answers and errors.
async fn echoing_github() -> Fake {
    Fake::start(|r| {
        let auth = r.header("authorization").unwrap_or_default().to_string();
        if auth != format!("Bearer {GH_TOKEN}") && !r.path.starts_with("/acme") {
            return Reply::json(401, json!({"message": format!("Bad credentials: {auth}")}));
        }
        match r.path.as_str() {
            "/repos/acme/app" => Reply::json(
                200,
                json!({"id": 1, "name": "app", "full_name": "acme/app", "description": format!("seen {auth}"),
                       "owner": {"login": "acme"}, "private": false, "html_url": "https://github.com/acme/app",
                       "default_branch": "main", "stargazers_count": 1, "forks_count": 0, "open_issues_count": 0}),
            ),
            "/repos/acme/broken" => Reply::json(500, json!({"message": format!("internal error handling {auth}")})),
            "/repos/acme/app/issues" => {
                let body = String::from_utf8_lossy(&r.body).to_string();
                Reply::json(201, json!({"number": 1, "title": "t", "html_url": "https://github.com/acme/app/issues/1", "body": body, "state": "open"}))
            }
            "/echo" => Reply::json(200, json!({"auth": auth})),
            p if p.starts_with("/acme") => Reply::json(200, json!({"key_seen": r.header("x-api-key")})),
            _ => Reply::json(404, json!({"message": format!("Not Found for {auth}")})),
        }
    })
    .await
}

fn rpc(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

fn exec(tool: &str, args: Value) -> Value {
    json!({"executions": [{"tool": tool, "args": args}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_appears_in_any_output_log_or_file_of_a_full_session() {
    let gh = echoing_github().await;
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(binary())
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_LOG", "trace")
        .env("WORKBENCH_NO_BROWSER", "1")
        .env("WORKBENCH_SECRET_STORE", "file")
        .env("WORKBENCH_VAULT_PASSPHRASE", PASSPHRASE)
        .env("WORKBENCH_GITHUB_TOKEN", GH_TOKEN)
        .env("WORKBENCH_GITHUB_BASE_URL", &gh.url)
        // The custom app below talks to the same fake: the user lists its origin.
        .env("WORKBENCH_PRIVATE_HOSTS", &gh.url)
        .env("WORKBENCH_POLICY_DEFAULT", "allow")
        // The session defines a custom app after private reads, which the outbound-data guard
        // holds (`flow_guard.rs`); this test is about secrets, so the guard is off.
        .env("WORKBENCH_FLOW", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut seen_stdout = String::new();
    let mut send = |msg: Value| -> Value {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        let Some(id) = msg.get("id").cloned() else { return Value::Null };
        let id = Some(id);
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            seen_stdout.push_str(&line);
            let v: Value = serde_json::from_str(&line).unwrap();
            if id.is_none() || v.get("id") == id.as_ref() {
                return v;
            }
        }
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "scan", "version": "1"}}});
    send(init);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let text = |v: &Value| v["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();

    let ok = send(rpc(1, "execute_tools", exec("github_get_repo", json!({"owner": "acme", "repo": "app"}))));
    assert!(text(&ok).contains("acme/app"), "{ok}");
    send(rpc(2, "execute_tools", exec("github_get_repo", json!({"owner": "acme", "repo": "broken"}))));
    send(rpc(3, "execute_tools", exec("github_get_repo", json!({"owner": "acme", "repo": "missing"}))));
    send(rpc(
        4,
        "execute_tools",
        exec("vault_set_secret", json!({"name": "V", "value": VAULT_VALUE, "allowed_hosts": [&gh.url]})),
    ));
    // The vault value is sent upstream inside an issue body, and the fake echoes it back.
    let issue = send(rpc(
        5,
        "execute_tools",
        exec("github_create_issue", json!({"owner": "acme", "repo": "app", "title": "t", "body": "key={{vault:V}}"})),
    ));
    assert!(!text(&issue).contains("\"error\""), "{issue}");
    send(rpc(
        6,
        "execute_tools",
        exec(
            "custom_create_app",
            json!({
                "name": "acme", "base_url": format!("{}/acme", gh.url),
                "auth": {"type": "header", "name": "X-Api-Key", "value": "{{vault:V}}"},
                "operations": [{"tool_name": "acme_get_key", "method": "GET", "path": "/key", "description": "Echo the key"}]
            }),
        ),
    ));
    let custom = send(rpc(7, "execute_tools", exec("acme_get_key", json!({}))));
    assert!(text(&custom).contains("key_seen"), "{custom}");
    // The curl proxy, from outside, with a response that echoes the credential.
    let minted = send(rpc(8, "curl_session", json!({"integrations": ["github"]})));
    let minted: Value = serde_json::from_str(&text(&minted)).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let proxied = reqwest::Client::new()
        .get(format!("{}/github/echo", minted["proxyBaseUrl"].as_str().unwrap()))
        .header("authorization", format!("Bearer {}", minted["token"].as_str().unwrap()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(proxied.contains("[REDACTED]"), "{proxied}");
    send(rpc(9, "execute_tools", exec("audit_search_log", json!({"limit": 100}))));
    send(rpc(10, "search_tools", json!({"query": "github token"})));
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    let logs = err_thread.join().unwrap();
    assert!(logs.lines().count() > 20, "trace logging produced little: {logs}");

    // Every byte that came out or was left behind.
    let mut haystacks = vec![
        ("stdout".to_string(), seen_stdout.into_bytes()),
        ("stderr log".to_string(), logs.into_bytes()),
        ("proxy answer".to_string(), proxied.into_bytes()),
    ];
    for entry in walk(home.path()) {
        haystacks.push((entry.display().to_string(), std::fs::read(&entry).unwrap()));
    }
    assert!(haystacks.iter().any(|(n, _)| n.ends_with("workbench.db")), "the database was scanned");
    assert!(haystacks.iter().any(|(n, _)| n.ends_with("secrets.enc")), "the encrypted store was scanned");
    for (name, bytes) in &haystacks {
        for secret in [GH_TOKEN, VAULT_VALUE, PASSPHRASE] {
            if let Some(at) = bytes.windows(secret.len()).position(|w| w == secret.as_bytes()) {
                let from = at.saturating_sub(300);
                let context = String::from_utf8_lossy(&bytes[from..(at + secret.len() + 100).min(bytes.len())]);
                panic!("{secret} leaked into {name}: ...{context}...");
            }
        }
    }
    // The upstream did get the real credentials (so the scan above means something).
    assert!(gh.requests().iter().any(|r| r.header("authorization") == Some(&format!("Bearer {GH_TOKEN}"))));
    assert!(gh.requests().iter().any(|r| String::from_utf8_lossy(&r.body).contains(VAULT_VALUE)));
    assert!(gh.requests().iter().any(|r| r.header("x-api-key") == Some(VAULT_VALUE)));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[tokio::test]
async fn every_loopback_endpoint_refuses_foreign_hosts_and_cross_site_posts() {
    let t = app_with(&[]);
    // Start the listener with a real pending connect, vault page and unlock page behind it.
    let connect = t.call("connect", json!({"integration": "todoist"})).await;
    let url = connect.body["url"].as_str().unwrap().to_string();
    let base = url[..url.find("/connect/").unwrap()].to_string();
    let port = base.trim_start_matches("http://127.0.0.1:").to_string();
    let id = url.rsplit('/').next().unwrap().to_string();
    let vault = t.ok("vault_set_secret", json!({"name": "S", "allowed_hosts": ["api.example.com"]})).await;
    let vault_id = vault["url"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
    // A real pending approval (a held call from a client that cannot ask).
    t.app.approvals().enable_browser();
    let cannot_ask = workbench::engine::Hooks {
        approve: Some(std::sync::Arc::new(|_| {
            Box::pin(async { workbench::engine::policy::Approval::Unavailable("no elicitation".into()) })
        })),
        ..Default::default()
    };
    t.ok("vault_set_secret", json!({"name": "D", "value": "v-0123456789", "allowed_hosts": ["api.example.com"]})).await;
    let held = workbench::meta::call_with(
        &t.app,
        "execute_tools",
        json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "D"}}]}),
        &cannot_ask,
    )
    .await
    .unwrap();
    let approval = held.body["results"][0]["error"]["approval_url"].as_str().unwrap().to_string();
    let approval_id = approval.rsplit('/').next().unwrap().to_string();
    assert!(approval.starts_with(&base), "the approval page is on the same listener: {approval}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();

    let gets = [
        format!("/connect/{id}"),
        "/oauth/callback?code=x&state=y".to_string(),
        format!("/vault/{vault_id}"),
        "/unlock/abc".to_string(),
        format!("/approve/{approval_id}"),
        "/portal/abc/".to_string(),
        "/portal/abc/audit".to_string(),
        "/c/github/user".to_string(),
        "/anything".to_string(),
    ];
    for path in &gets {
        for host in [format!("evil.example:{port}"), format!("127.0.0.1.evil.example:{port}"), "127.0.0.1".to_string()]
        {
            let r = http.get(format!("{base}{path}")).header("host", &host).send().await.unwrap();
            assert_eq!(r.status(), 421, "GET {path} with Host {host}");
        }
    }
    let posts = [
        format!("/connect/{id}"),
        format!("/vault/{vault_id}"),
        "/unlock/abc".to_string(),
        format!("/approve/{approval_id}"),
        "/portal/abc/connect".to_string(),
        "/portal/abc/disconnect".to_string(),
        "/portal/abc/unlock".to_string(),
    ];
    for path in &posts {
        let r = http.post(format!("{base}{path}")).header("host", format!("evil.example:{port}")).send().await.unwrap();
        assert_eq!(r.status(), 421, "POST {path} rebinding");
        for origin in [None, Some("null"), Some("http://evil.example"), Some("http://127.0.0.1:1")] {
            let mut b = http
                .post(format!("{base}{path}"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body("a=b");
            if let Some(o) = origin {
                b = b.header("origin", o);
            }
            let r = b.send().await.unwrap();
            assert_eq!(r.status(), 403, "POST {path} with Origin {origin:?}");
        }
    }
    // Pages are never cached or framed.
    let page = http.get(&url).send().await.unwrap();
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    // The approval page too, and after all those refused requests it still approves nothing:
    // the held secret is there.
    let page = http.get(&approval).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let listed = t.ok("vault_list_secrets", json!({})).await;
    assert_eq!(listed["secrets"][0]["name"], "D", "{listed}");
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_dir_and_its_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let t = app_with(&[
        ("WORKBENCH_HOME", data.display().to_string()),
        ("WORKBENCH_SECRET_STORE", "file".into()),
        ("WORKBENCH_VAULT_PASSPHRASE", PASSPHRASE.into()),
    ]);
    // app_with points WORKBENCH_HOME at its own temp dir; use that app's home.
    let dir = t.app.settings.home.clone();
    let store = workbench::secrets::file::FileStore::new(
        dir.join("secrets.enc"),
        workbench::secrets::file::Passphrase::Value(workbench::secrets::Secret::new(PASSPHRASE.into())),
    );
    use workbench::secrets::SecretStore;
    store.set("k", &workbench::secrets::Secret::new("v".into())).unwrap();
    t.ok("time_get_current", json!({})).await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    for name in ["workbench.db", "workbench.db-wal", "workbench.db-shm", "secrets.enc"] {
        let p = dir.join(name);
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{name}");
        } else {
            assert_ne!(name, "workbench.db", "the database exists");
        }
    }
}
