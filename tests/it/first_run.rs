//! Issue 29's first run on a machine without a keychain (no D-Bus session, as over SSH or in a
//! container): install (the binary's `clients register` and `setup`, which install.sh runs), then
//! connect GitHub through the connect page of the server Cursor launches, with no hand-edited
//! file and no environment in the client's entry. GitHub is a fake on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::binary;
use crate::support::fake::{Fake, Reply};

const TOKEN: &str = "ghp_firstRunToken0123456789abcdefghij";

/// A home directory with Cursor installed, no D-Bus session and no WORKBENCH_* variable.
struct Box_ {
    dir: tempfile::TempDir,
}

impl Box_ {
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn data(&self) -> PathBuf {
        self.home().join(".local/share/workbench")
    }
    /// The environment a desktop client (or an SSH shell) gives: HOME and PATH, and a runtime
    /// directory with no bus in it, so the keychain cannot answer however the host is set up.
    fn env(&self, c: &mut Command) {
        c.env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            // No browser to open on this box (the test opens the link itself).
            .env("WORKBENCH_NO_BROWSER", "1");
    }
    fn run(&self, args: &[&str]) -> Output {
        let mut c = Command::new(binary());
        self.env(&mut c);
        c.args(args).stdin(Stdio::null()).output().unwrap()
    }
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line {prefix:?}:\n{text}"))
}

/// One JSON-RPC request to the server on stdio; its response.
fn rpc(stdin: &mut impl Write, out: &mut impl BufRead, id: u64, method: &str, params: Value) -> Value {
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
    stdin.flush().unwrap();
    loop {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "the server closed stdout");
        let v: Value = serde_json::from_str(&l).unwrap_or_else(|_| panic!("non-JSON on stdout: {l:?}"));
        if v["id"] == json!(id) {
            return v;
        }
    }
}

fn tool_body(response: &Value) -> Value {
    serde_json::from_str(response["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// Starts the server exactly as Cursor's config says: its command, its env (none), HOME.
fn launch_as_cursor(b: &Box_) -> Child {
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(b.home().join(".cursor/mcp.json")).unwrap()).unwrap();
    let entry = &cfg["mcpServers"]["workbench"];
    assert!(entry.get("env").is_none(), "no env block is needed: {entry}");
    let mut c = Command::new(entry["command"].as_str().unwrap());
    b.env(&mut c);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_d_bus_install_then_connect_github_on_the_page_with_no_hand_edited_file() {
    let github = Fake::start(|r| match (r.path.as_str(), r.header("authorization")) {
        ("/user", Some(a)) if a.ends_with(TOKEN) => Reply::json(200, json!({"login": "octocat", "id": 1})),
        _ => Reply::json(401, json!({"message": "Bad credentials"})),
    })
    .await;
    let b = Box_ { dir: tempfile::tempdir().unwrap() };
    std::fs::create_dir_all(b.home().join(".cursor")).unwrap();
    std::fs::create_dir_all(b.dir.path().join("run")).unwrap();

    // install.sh's steps: register, then setup, then doctor.
    let reg = b.run(&["clients", "register", "--client", "cursor", "--command", binary().to_str().unwrap()]);
    assert!(reg.status.success(), "{}", text(&reg));
    let doctor = b.run(&["doctor"]);
    let report = text(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{report}");
    assert!(line(&report, "FAIL  secret store").contains("no D-Bus session bus"), "{report}");
    assert!(line(&report, "FAIL  Cursor launches").contains("no D-Bus session bus"), "{report}");
    assert!(report.contains("fix: run `workbench setup`"), "{report}");
    // With no terminal, setup chooses nothing by itself and says how.
    let asked = b.run(&["setup"]);
    assert_eq!(asked.status.code(), Some(1));
    assert!(text(&asked).contains("workbench setup --secret-store file"), "{}", text(&asked));
    let setup = b.run(&["setup", "--secret-store", "file"]);
    assert!(setup.status.success(), "{}", text(&setup));
    let doctor = b.run(&["doctor"]);
    let report = text(&doctor);
    assert_eq!(doctor.status.code(), Some(0), "{report}");
    let warn = line(&report, "WARN  secret store");
    assert!(warn.contains("secrets.key") && warn.contains("not against anything running as you"), "{warn}");
    assert!(line(&report, "OK    Cursor launches").contains("which answers"), "{report}");

    // The network this box lives on: GitHub is at 127.0.0.1 (a setting, not a secret).
    let config_path = b.data().join("config.json");
    let mut config: Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["private_hosts"] = json!([format!("http://{}", github.addr())]);
    config["base_urls"] = json!({"github": {"base_url": github.url}});
    std::fs::write(&config_path, config.to_string()).unwrap();

    // The server Cursor launches: the agent asks to connect GitHub.
    let mut server = launch_as_cursor(&b);
    let mut stdin = server.stdin.take().unwrap();
    let mut out = BufReader::new(server.stdout.take().unwrap());
    let init =
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cursor", "version": "1"}});
    assert_eq!(rpc(&mut stdin, &mut out, 1, "initialize", init)["result"]["serverInfo"]["name"], "workbench");
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let connect =
        rpc(&mut stdin, &mut out, 2, "tools/call", json!({"name": "connect", "arguments": {"integration": "github"}}));
    let body = tool_body(&connect);
    let url = body["url"].as_str().unwrap_or_else(|| panic!("{body}")).to_string();

    // The user opens the link: the page names the store that will hold the token, and it answers.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("sec-fetch-site", reqwest::header::HeaderValue::from_static("same-origin"));
    headers.insert("sec-fetch-mode", reqwest::header::HeaderValue::from_static("navigate"));
    let http = reqwest::Client::builder().default_headers(headers).no_proxy().build().unwrap();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("the encrypted file") && html.contains("secrets.key"), "{html}");
    assert!(!html.contains("OS keychain") && !html.contains("store-error"), "{html}");
    let at = html.find("name=\"form_token\" value=\"").unwrap() + 25;
    let form_token = &html[at..at + html[at..].find('"').unwrap()];
    let origin = url[..url.find("/connect/").unwrap()].to_string();
    let done = http
        .post(&url)
        .header("origin", &origin)
        .form(&[("form_token", form_token), ("token", TOKEN)])
        .send()
        .await
        .unwrap();
    let page = done.text().await.unwrap();
    assert!(page.contains("octocat") || page.contains("Connected"), "{page}");
    assert!(github.requests().iter().any(|r| r.path == "/user"), "the token was checked with GitHub");

    // The agent sees it connected; the server keeps working.
    let listed = rpc(&mut stdin, &mut out, 3, "tools/call", json!({"name": "list_integrations", "arguments": {}}));
    assert!(listed.to_string().contains("octocat"), "{listed}");
    drop(stdin);
    let _ = server.wait();

    // The token is only in the encrypted file: not in plain text anywhere in the data directory.
    assert_no_plain_token(&b.data());
    // And it lasts: a new process (status) reads it back through the key file.
    let status = b.run(&["status"]);
    let st = text(&status);
    assert!(line(&st, "store state:").contains("answers"), "{st}");
    assert!(line(&st, "github ").contains("yes"), "{st}");
}

fn assert_no_plain_token(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_no_plain_token(&path);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            assert!(!String::from_utf8_lossy(&bytes).contains(TOKEN), "the token is readable in {}", path.display());
        }
    }
}
