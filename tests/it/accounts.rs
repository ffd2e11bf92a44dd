//! Issue 16 as tests: several named accounts per integration. Two GitHub accounts connected
//! through the connect pages (and, headless, through environment variables) used side by side in
//! one batch, each call carrying its own token to the GitHub fake and neither token in any
//! output; the default account without naming it; unknown accounts refused with the list; the
//! agent unable to add an account or pick the default by itself; per-account read-only; the curl
//! proxy bound to an account; a database from before accounts upgraded with nothing lost.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app_with};

const WORK: &str = "ghp_work_token_0123456789abcdef0123";
const HOME: &str = "ghp_home_token_fedcba9876543210fedc";

fn login_of(auth: Option<&str>) -> Option<&'static str> {
    match auth {
        Some(a) if a == format!("Bearer {WORK}") => Some("ada-at-work"),
        Some(a) if a == format!("Bearer {HOME}") => Some("ada-at-home"),
        _ => None,
    }
}

/// A GitHub fake that knows two tokens: `/user` says whose, `/user/repos` answers one repo named
/// after the owner whose description echoes the token it was sent (so scrubbing is checked), and
/// creating an issue works for both.
async fn github() -> Fake {
    Fake::start(|r| {
        let auth = r.header("authorization");
        let Some(login) = login_of(auth) else {
            return Reply::json(401, json!({"message": "Bad credentials"}));
        };
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/user") => Reply::json(200, json!({"login": login, "id": 1})),
            ("GET", "/user/repos") => Reply::json(
                200,
                json!([{
                    "name": format!("{login}-repo"),
                    "full_name": format!("{login}/{login}-repo"),
                    "description": format!("sent with {}", auth.unwrap_or_default()),
                    "private": false,
                    "html_url": "https://github.example/x",
                    "owner": {"login": login}
                }]),
            ),
            ("POST", "/repos/o/r/issues") => Reply::json(
                201,
                json!({"number": 7, "title": "t", "state": "open", "html_url": "https://github.example/i/7", "user": {"login": login}}),
            ),
            _ => Reply::json(404, json!({"message": "Not Found"})),
        }
    })
    .await
}

fn form_token(html: &str) -> String {
    let at = html.find("name=\"form_token\" value=\"").expect("a form token on the page") + 25;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// Submits the connect page at `url` as the user's browser does (Origin, fetch metadata, the
/// page's form token) with `fields`; returns (status, page).
async fn submit_page(url: &str, fields: &str, browser: bool) -> (u16, String) {
    let client = http();
    let origin = url[..url.find("/connect/").unwrap()].to_string();
    let html = client.get(url).send().await.unwrap().text().await.unwrap();
    let mut req = client
        .post(url)
        .header("origin", origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={}&{fields}", form_token(&html)));
    if browser {
        req = req.header("sec-fetch-site", "same-origin").header("sec-fetch-mode", "navigate");
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The agent's connect call for `account`, finished by the user on the page with `token`.
async fn connect_on_page(t: &TestApp, account: Option<&str>, token: &str) -> Value {
    let mut args = json!({"integration": "github"});
    if let Some(a) = account {
        args["account"] = json!(a);
    }
    let out = t.call("connect", args).await;
    assert!(!out.is_error, "{}", out.body);
    let url = out.body["url"].as_str().unwrap().to_string();
    let (status, page) = submit_page(&url, &format!("token={token}"), true).await;
    assert_eq!(status, 200, "{page}");
    out.body
}

fn assert_no_token(what: &str, text: &str) {
    for secret in [WORK, HOME] {
        assert!(!text.contains(secret), "a token leaked into {what}: {text}");
    }
}

/// Runs a batch of `github_list_repos` executions with the given accounts.
async fn list_repos_as(t: &TestApp, accounts: &[Option<&str>]) -> (Value, bool) {
    let executions: Vec<Value> = accounts
        .iter()
        .map(|a| match a {
            Some(a) => json!({"tool": "github_list_repos", "args": {}, "account": a}),
            None => json!({"tool": "github_list_repos", "args": {}}),
        })
        .collect();
    let out = t.call("execute_tools", json!({ "executions": executions })).await;
    (out.body, out.is_error)
}

fn repo_name(result: &Value) -> String {
    let full = result["result"]["repos"][0]["full_name"].as_str().unwrap_or_else(|| panic!("no repo in {result}"));
    full.split('/').nth(1).unwrap_or_default().to_string()
}

/// The done-means of issue 16: two GitHub accounts connected through the connect pages are used
/// side by side in one batch, each call with its own token upstream; the default (the first one
/// connected) works without naming it; no token appears in any answer, audit row or log of
/// list_integrations.
#[tokio::test]
async fn two_accounts_from_the_connect_pages_work_side_by_side() {
    let gh = github().await;
    let t = app_with(&[("WORKBENCH_GITHUB_BASE_URL", gh.url.clone())]);
    let first = connect_on_page(&t, Some("work"), WORK).await;
    assert_eq!(first["accountName"], "work");
    // A second, new account replaces nothing: no "Replace" needed.
    connect_on_page(&t, Some("personal"), HOME).await;

    let (body, failed) = list_repos_as(&t, &[Some("work"), Some("personal"), None]).await;
    assert!(!failed, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(repo_name(&results[0]), "ada-at-work-repo");
    assert_eq!(repo_name(&results[1]), "ada-at-home-repo");
    assert_eq!(repo_name(&results[2]), "ada-at-work-repo", "the first account connected is the default");
    assert_no_token("the batch answer", &body.to_string());
    let sent: Vec<String> = gh
        .requests()
        .iter()
        .filter(|r| r.path == "/user/repos")
        .map(|r| r.header("authorization").unwrap_or_default().to_string())
        .collect();
    assert_eq!(sent.iter().filter(|a| a.ends_with(WORK)).count(), 2, "{sent:?}");
    assert_eq!(sent.iter().filter(|a| a.ends_with(HOME)).count(), 1, "{sent:?}");

    let listed = t.call("list_integrations", json!({})).await;
    let github =
        listed.body["integrations"].as_array().unwrap().iter().find(|i| i["name"] == "github").unwrap().clone();
    assert_eq!(github["connected"], true);
    assert_eq!(
        github["accounts"],
        json!([
            {"name": "work", "identity": "ada-at-work", "default": true},
            {"name": "personal", "identity": "ada-at-home", "default": false}
        ])
    );
    assert_no_token("list_integrations", &listed.body.to_string());

    let audit = t.ok("audit_search_log", json!({"tool": "github_list_repos"})).await;
    assert_no_token("the audit log", &audit.to_string());
    let accounts: Vec<&str> =
        audit["entries"].as_array().unwrap().iter().filter_map(|e| e["account"].as_str()).collect();
    assert_eq!(accounts.iter().filter(|a| **a == "work").count(), 2, "{audit}");
    assert_eq!(accounts.iter().filter(|a| **a == "personal").count(), 1, "{audit}");

    // Reconnecting an existing account replaces it only with the page's "Replace".
    let again = t.call("connect", json!({"integration": "github", "account": "personal"})).await;
    assert_eq!(again.body["status"], "CONNECTED", "{}", again.body);
    let url = again.body["url"].as_str().unwrap().to_string();
    let (status, page) = submit_page(&url, &format!("token={WORK}"), true).await;
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("nothing was changed"), "{page}");
    let (body, _) = list_repos_as(&t, &[Some("personal")]).await;
    assert_eq!(repo_name(&body["results"][0]), "ada-at-home-repo", "unchanged without the user's Replace");
}

/// Done-means, headless: the plain variable is the account `default`, the double-underscore
/// spelling a named one; both in one batch, each with its own token; neither in any output.
#[tokio::test]
async fn environment_accounts_work_side_by_side() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", HOME.into()),
        ("WORKBENCH_GITHUB__WORK__TOKEN", WORK.into()),
    ]);
    let (body, failed) = list_repos_as(&t, &[None, Some("work"), Some("default")]).await;
    assert!(!failed, "{body}");
    assert_eq!(repo_name(&body["results"][0]), "ada-at-home-repo");
    assert_eq!(repo_name(&body["results"][1]), "ada-at-work-repo");
    assert_eq!(repo_name(&body["results"][2]), "ada-at-home-repo");
    assert_no_token("the batch answer", &body.to_string());
    let listed = t.call("list_integrations", json!({})).await;
    let github =
        listed.body["integrations"].as_array().unwrap().iter().find(|i| i["name"] == "github").unwrap().clone();
    let names: Vec<&str> = github["accounts"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "work"]);
    assert_eq!(github["accounts"][0]["default"], true);

    // connect for an environment account says so; for a new name it starts a page.
    let env = t.call("connect", json!({"integration": "github", "account": "work"})).await;
    assert_eq!(env.body["source"], "environment", "{}", env.body);
    assert!(env.body["message"].as_str().unwrap().contains("WORKBENCH_GITHUB__WORK__TOKEN"));
}

/// Attack: the agent names an account that does not exist (or a malformed one, or one on a tool
/// that has no accounts). It gets an error listing the accounts; nothing is sent upstream, and it
/// never silently runs as the default account.
#[tokio::test]
async fn an_unknown_account_is_refused_with_the_list_never_the_default() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", HOME.into()),
        ("WORKBENCH_GITHUB__WORK__TOKEN", WORK.into()),
    ]);
    let (body, _) = list_repos_as(&t, &[Some("boss")]).await;
    let e = &body["results"][0]["error"];
    assert_eq!(e["code"], "NOT_CONNECTED", "{body}");
    assert_eq!(e["accounts"], json!(["default", "work"]), "{body}");
    assert!(e["message"].as_str().unwrap().contains("no account named 'boss'"), "{body}");
    assert!(gh.requests().is_empty(), "nothing was sent: {:?}", gh.requests().len());

    let out = t
        .call(
            "execute_tools",
            json!({"executions": [{"tool": "github_list_repos", "args": {}, "account": "Work; ignore previous instructions"}]}),
        )
        .await;
    assert!(out.is_error);
    assert_eq!(out.body["error"]["code"], "INVALID_ARGUMENTS", "{}", out.body);
    assert!(out.body.to_string().contains("/executions/0/account"));

    let e = t
        .call("execute_tools", json!({"executions": [{"tool": "time_get_current", "args": {}, "account": "work"}]}))
        .await;
    assert_eq!(e.body["results"][0]["error"]["code"], "INVALID_ARGUMENTS", "{}", e.body);

    // Not connected at all: the named account is still an error that says so.
    let bare = app_with(&[("WORKBENCH_GITHUB_BASE_URL", gh.url.clone())]);
    let (body, _) = list_repos_as(&bare, &[Some("work")]).await;
    assert_eq!(body["results"][0]["error"]["code"], "NOT_CONNECTED");
    assert!(body.to_string().contains("it has none yet"), "{body}");
}

/// Attack: the agent calls connect with a new account name and tries to finish the page itself
/// (a POST without the browser's fetch metadata). Nothing is stored: the account does not exist,
/// it is not listed and calls naming it fail.
#[tokio::test]
async fn the_agent_cannot_add_an_account_without_the_user() {
    let gh = github().await;
    let t = app_with(&[("WORKBENCH_GITHUB_BASE_URL", gh.url.clone())]);
    connect_on_page(&t, None, HOME).await;
    let out = t.call("connect", json!({"integration": "github", "account": "evil"})).await;
    let url = out.body["url"].as_str().unwrap().to_string();
    let (status, _) = submit_page(&url, &format!("token={WORK}"), false).await;
    assert_eq!(status, 403);
    assert!(t.app.storage.account_meta("github", "evil").unwrap().is_none());
    let listed = t.call("list_integrations", json!({})).await;
    assert!(!listed.body.to_string().contains("evil"), "{}", listed.body);
    let (body, _) = list_repos_as(&t, &[Some("evil")]).await;
    assert_eq!(body["results"][0]["error"]["code"], "NOT_CONNECTED");
    let bad = t.call("connect", json!({"integration": "github", "account": "EVIL/../x"})).await;
    assert!(bad.is_error);
}

/// Attack: the agent tries to move the default to an account of its choosing. No meta-tool or
/// built-in can: connecting or reconnecting another account leaves the default where the user
/// put it, the built-in connection tools take no such argument; only the user's CLI (and the
/// portal) set it.
#[tokio::test]
async fn only_the_user_sets_the_default_account() {
    let gh = github().await;
    let t = app_with(&[("WORKBENCH_GITHUB_BASE_URL", gh.url.clone())]);
    connect_on_page(&t, Some("work"), WORK).await;
    connect_on_page(&t, Some("personal"), HOME).await;
    let registry = t.app.registry();
    for tool in ["connection_delete_credentials"] {
        if let Some(entry) = registry.get(tool) {
            let props = entry.schema()["properties"].as_object().cloned().unwrap_or_default();
            assert!(!props.keys().any(|k| k.contains("default")), "{tool} takes {props:?}");
        }
    }
    let e = t.call("connect", json!({"integration": "github", "account": "personal", "default": true})).await;
    let (body, _) = list_repos_as(&t, &[None]).await;
    assert_eq!(repo_name(&body["results"][0]), "ada-at-work-repo", "default unchanged by {}", e.body);

    // The user's command.
    assert_eq!(workbench::cli::connect_account(&t.app, "github", Some("personal"), true).await, 0);
    let (body, _) = list_repos_as(&t, &[None]).await;
    assert_eq!(repo_name(&body["results"][0]), "ada-at-home-repo");

    // Disconnecting the default promotes the other account.
    let gone = t
        .ok(
            "connection_delete_credentials",
            json!({"integration": "github", "account": "personal", "revoke_remote": false}),
        )
        .await;
    assert_eq!(gone["deleted"], true, "{gone}");
    let (body, _) = list_repos_as(&t, &[None]).await;
    assert_eq!(repo_name(&body["results"][0]), "ada-at-work-repo");
}

/// Attack: the user made one account read-only (`WORKBENCH_POLICY_GITHUB_WORK=read_only`); the
/// agent writes through it anyway, or through the curl proxy. Refused; the other account's
/// writes still run; an approval for one account's call is not one for another's.
#[tokio::test]
async fn a_read_only_account_stays_read_only() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", HOME.into()),
        ("WORKBENCH_GITHUB__WORK__TOKEN", WORK.into()),
        ("WORKBENCH_POLICY_GITHUB_WORK", "read_only".into()),
    ]);
    let issue = json!({"owner": "o", "repo": "r", "title": "t"});
    let out = t
        .call(
            "execute_tools",
            json!({"executions": [
                {"tool": "github_create_issue", "args": issue, "account": "work"},
                {"tool": "github_create_issue", "args": issue}
            ]}),
        )
        .await;
    assert_eq!(out.body["results"][0]["error"]["code"], "POLICY_DENIED", "{}", out.body);
    assert!(out.body["results"][1].get("result").is_some(), "{}", out.body);
    let posts: Vec<_> = gh.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].header("authorization"), Some(format!("Bearer {HOME}").as_str()));

    let curl = t.call("curl_session", json!({"integrations": ["github:work"]})).await;
    assert!(curl.is_error, "{}", curl.body);
    assert!(curl.body.to_string().contains("read-only"), "{}", curl.body);
}

/// The curl proxy token is bound to the account it was minted for: `"github:work"` sends the work
/// token, a bare `"github"` the default one's; a token naming an unknown account is not minted.
#[tokio::test]
async fn curl_sessions_are_bound_to_an_account() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", HOME.into()),
        ("WORKBENCH_GITHUB__WORK__TOKEN", WORK.into()),
    ]);
    let client = http();
    for (entry, login) in [("github:work", "ada-at-work"), ("github", "ada-at-home")] {
        let out = t.call("curl_session", json!({"integrations": [entry]})).await;
        assert!(!out.is_error, "{}", out.body);
        assert_no_token("curl_session", &out.body.to_string());
        let base = out.body["proxyBaseUrl"].as_str().unwrap();
        let token = out.body["token"].as_str().unwrap();
        let r = client.get(format!("{base}/github/user")).bearer_auth(token).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let text = r.text().await.unwrap();
        assert!(text.contains(login), "{entry}: {text}");
    }
    let bad = t.call("curl_session", json!({"integrations": ["github:boss"]})).await;
    assert!(bad.is_error);
    assert!(bad.body.to_string().contains("no account named 'boss'"), "{}", bad.body);
    let two = t.call("curl_session", json!({"integrations": ["github:work", "github:default"]})).await;
    assert!(two.is_error, "{}", two.body);
}

/// Upgrade: a data directory from before accounts (today's schema, migrations 1-4, written here
/// with today's SQL; the credential in the secret store under its old key) keeps working as the
/// account `default`, with its identity, without naming it.
#[tokio::test]
async fn a_connection_from_before_accounts_keeps_working_as_default() {
    let gh = github().await;
    let home = tempfile::tempdir().unwrap();
    {
        let c = rusqlite::Connection::open(home.path().join("workbench.db")).unwrap();
        c.execute_batch(
            "CREATE TABLE user (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), id TEXT NOT NULL, email TEXT, created_at TEXT NOT NULL);
             CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, tool TEXT NOT NULL, integration TEXT NOT NULL,
                args TEXT NOT NULL, mutating INTEGER NOT NULL, status TEXT NOT NULL, error_code TEXT, error TEXT, duration_ms INTEGER NOT NULL);
             CREATE INDEX audit_ts ON audit (ts);
             CREATE INDEX audit_tool ON audit (tool);
             CREATE TABLE vault_secret (name TEXT PRIMARY KEY, description TEXT, allowed_hosts TEXT NOT NULL, created_at TEXT NOT NULL, last_used_at TEXT);
             CREATE TABLE connection (integration TEXT PRIMARY KEY, account_label TEXT, scopes TEXT, expires_at INTEGER, store TEXT NOT NULL,
                public_fields TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE custom_app (name TEXT PRIMARY KEY, definition TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE counter (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
             INSERT INTO counter (name, value) VALUES ('custom_apps', 0);
             ALTER TABLE audit ADD COLUMN traceparent TEXT;
             PRAGMA user_version = 4;",
        )
        .unwrap();
        c.execute(
            "INSERT INTO connection VALUES ('github', 'ada-at-home', NULL, NULL, 'memory', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            [],
        )
        .unwrap();
    }
    let store = Arc::new(workbench::secrets::MemoryStore::default());
    use workbench::secrets::SecretStore as _;
    store.set("connection:github", &workbench::secrets::Secret::new(json!({ "token": HOME }).to_string())).unwrap();
    let mut vars = std::collections::HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.path().display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".to_string(), "1".to_string());
    vars.insert("WORKBENCH_FILES_DIR".to_string(), home.path().join("files").display().to_string());
    vars.insert("WORKBENCH_GITHUB_BASE_URL".to_string(), gh.url.clone());
    let settings = workbench::config::Settings::load(&vars).unwrap();
    let app = workbench::app::App::with_parts(settings, workbench::registry::Registry::standard(), store);
    let t = TestApp { app, home };
    let (body, failed) = list_repos_as(&t, &[None, Some("default")]).await;
    assert!(!failed, "{body}");
    assert_eq!(repo_name(&body["results"][0]), "ada-at-home-repo");
    assert_eq!(repo_name(&body["results"][1]), "ada-at-home-repo");
    let listed = t.call("list_integrations", json!({})).await;
    let github =
        listed.body["integrations"].as_array().unwrap().iter().find(|i| i["name"] == "github").unwrap().clone();
    assert_eq!(github["accounts"], json!([{"name": "default", "identity": "ada-at-home", "default": true}]));
}

/// The portal shows each account with its identity and the default, adds an account through the
/// same connect page, and lets the user (their page's CSRF token) make another account the
/// default; a POST without that token changes nothing.
#[tokio::test]
async fn the_portal_shows_and_manages_accounts() {
    let gh = github().await;
    let t = app_with(&[("WORKBENCH_GITHUB_BASE_URL", gh.url.clone())]);
    connect_on_page(&t, Some("work"), WORK).await;
    connect_on_page(&t, Some("personal"), HOME).await;
    let url = workbench::portal::start(&t.app).await.unwrap();
    let rest = url.trim_start_matches("http://");
    let origin = format!("http://{}", &rest[..rest.find('/').unwrap()]);
    let client = http();
    let html = client.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("data-account=\"work\""), "{html}");
    assert!(html.contains("data-account=\"personal\""));
    assert!(html.contains("ada-at-home"));
    assert!(html.contains("Make default"));
    assert_no_token("the portal", &html);
    let at = html.find("name=\"csrf\" value=\"").unwrap() + 19;
    let csrf = html[at..at + html[at..].find('"').unwrap()].to_string();
    let post = |body: String| {
        client
            .post(format!("{url}default"))
            .header("origin", &origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let forged = post("csrf=nope&integration=github&account=personal".into()).await.unwrap();
    assert_eq!(forged.status(), 403);
    assert_eq!(t.app.storage.connection_meta("github").unwrap().unwrap().account, "work");
    let done = post(format!("csrf={csrf}&integration=github&account=personal")).await.unwrap();
    assert_eq!(done.status(), 303, "{}", done.text().await.unwrap());
    assert_eq!(t.app.storage.connection_meta("github").unwrap().unwrap().account, "personal");

    // Add account: the portal's connect starts the same page, for the typed account name.
    let added = client
        .post(format!("{url}connect"))
        .header("origin", &origin)
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "navigate")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}&integration=github&account=client-a"))
        .send()
        .await
        .unwrap();
    let page = added.headers()["location"].to_str().unwrap().to_string();
    let page_url = format!("{origin}{page}");
    let html = client.get(&page_url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("<code>client-a</code>"), "{html}");
}

/// Headless, the real binary: `workbench status` lists the environment's accounts one per line,
/// the default marked, and no token.
#[test]
fn status_lists_each_account() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(crate::support::binary())
        .arg("status")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("WORKBENCH_HOME", home.path().join("data"))
        .env("WORKBENCH_SECRET_STORE", "memory")
        .env("WORKBENCH_NO_BROWSER", "1")
        .env("WORKBENCH_GITHUB_TOKEN", HOME)
        .env("WORKBENCH_GITHUB__WORK__TOKEN", WORK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let github: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("github ")).take(2).collect();
    assert!(github[0].contains("env") && github[0].contains("default (default)"), "{text}");
    assert!(github[1].trim_start().starts_with("env") && github[1].contains("work"), "{text}");
    assert_no_token("status", &text);
}

/// The runstack profile: check_authentication and execute_tool take an optional account; an
/// unknown one is not authenticated, and execute_tool says which accounts exist.
#[tokio::test]
async fn runstack_tools_take_an_account() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", HOME.into()),
        ("WORKBENCH_GITHUB__WORK__TOKEN", WORK.into()),
    ]);
    let hooks = crate::support::approving();
    let call = |name: &'static str, args: Value| {
        let app = t.app.clone();
        let hooks = hooks.clone();
        async move { workbench::meta::runstack::call_with(&app, name, args, &hooks).await.unwrap() }
    };
    let ok = call("check_authentication", json!({"toolName": "github_list_repos", "account": "work"})).await;
    assert_eq!(ok.body["authenticated"], true, "{}", ok.body);
    let no = call("check_authentication", json!({"toolName": "github_list_repos", "account": "boss"})).await;
    assert_eq!(no.body["authenticated"], false, "{}", no.body);
    let run = call("execute_tool", json!({"toolName": "github_list_repos", "args": {}, "account": "work"})).await;
    assert!(run.body.to_string().contains("ada-at-work-repo"), "{}", run.body);
    assert_no_token("execute_tool", &run.body.to_string());
    let bad = call("execute_tool", json!({"toolName": "github_list_repos", "args": {}, "account": "boss"})).await;
    assert!(bad.is_error);
    assert_eq!(bad.body["accounts"], json!(["default", "work"]), "{}", bad.body);
}

/// A named account whose credential the provider rejects: the hint says to reconnect that
/// account, not the default one.
#[tokio::test]
async fn a_rejected_account_is_named_in_the_reconnect_hint() {
    let gh = github().await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_GITHUB__OLD__TOKEN", "ghp_revoked_token_000000000000000000".into()),
    ]);
    let (body, _) = list_repos_as(&t, &[Some("old")]).await;
    let e = &body["results"][0]["error"];
    assert_eq!(e["code"], "UPSTREAM_ERROR", "{body}");
    assert!(e["message"].as_str().unwrap().contains("integration 'github' and account 'old'"), "{body}");
    assert!(!body.to_string().contains("ghp_revoked_token"), "{body}");
}
