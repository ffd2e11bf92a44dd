//! Faults, each giving the agent a clear error while the server stays up: upstream 429s, 5xx,
//! timeouts, resets, malformed JSON, huge bodies and slow loris; a secret store that breaks or
//! locks mid-session; SQLite held by another writer; `kill -9` of the real binary during a batch
//! and during a token refresh; the loopback port already taken; clock skew around token expiry.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use workbench::app::App;
use workbench::auth::{self, AccountDetails, Source};
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::{MemoryStore, Secret, SecretStore};

use crate::support::fake::{Fake, Recorded, Reply};
use crate::support::raw::{RawFake, Step, chunk, head};
use crate::support::{TestApp, app_with, binary};

// ---------------------------------------------------------------------------------------------
// Upstream faults, through a public plugin tool (hackernews_get_user: GET /user/<name>.json).

const USER: &str = "hackernews_get_user";

fn user_json(name: &str) -> Reply {
    Reply::json(200, json!({"id": name, "karma": 7, "created": 0}))
}

fn hn(url: &str) -> TestApp {
    app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", url.to_string()), ("WORKBENCH_CALL_TIMEOUT_SECS", "2".into())])
}

fn message(e: &Value) -> &str {
    e["message"].as_str().unwrap_or_default()
}

/// The app still answers: a healthy call after the fault.
async fn still_up(t: &TestApp) {
    let now = t.ok("time_get_current", json!({"timezone": "UTC"})).await;
    assert!(now["now"]["utc"].is_string());
}

#[tokio::test]
async fn rate_limits_are_retried_when_short_and_reported_when_long() {
    let seen = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
    let s = seen.clone();
    let http_date =
        (chrono::Utc::now() + chrono::Duration::seconds(120)).format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let fake = Fake::start(move |r| {
        let n = {
            let mut seen = s.lock().unwrap();
            let n = seen.entry(r.path.clone()).or_default();
            *n += 1;
            *n
        };
        match (r.path.as_str(), n) {
            ("/user/short.json", 1) => Reply::json(429, json!({"error": "slow down"})).with_header("retry-after", "1"),
            ("/user/long.json", _) => Reply::json(429, json!({"error": "slow down"})).with_header("retry-after", "120"),
            ("/user/dated.json", _) => {
                Reply::json(429, json!({"error": "slow down"})).with_header("retry-after", &http_date)
            }
            (p, _) => user_json(p.trim_start_matches("/user/").trim_end_matches(".json")),
        }
    })
    .await;
    let t = app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", fake.url.clone())]);

    let started = Instant::now();
    let ok = t.ok(USER, json!({"username": "short"})).await;
    assert_eq!(ok["username"], "short");
    assert!(started.elapsed() >= Duration::from_millis(900), "it waited out Retry-After: {:?}", started.elapsed());
    assert_eq!(seen.lock().unwrap()["/user/short.json"], 2);

    let e = t.err(USER, json!({"username": "long"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["retry_after_seconds"], 120);
    assert_eq!(e["status"], 429);
    assert!(message(&e).contains("hackernews is rate-limiting requests"), "{e}");
    assert_eq!(seen.lock().unwrap()["/user/long.json"], 1, "a long wait is reported, not slept through");

    let e = t.err(USER, json!({"username": "dated"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    let secs = e["retry_after_seconds"].as_u64().expect("an HTTP-date Retry-After is counted in seconds");
    assert!((110..=121).contains(&secs), "{e}");
    still_up(&t).await;
}

#[tokio::test]
async fn server_errors_malformed_json_and_huge_bodies_are_named() {
    let fake = Fake::start(|r| match r.path.as_str() {
        "/user/down.json" => Reply { status: 503, headers: vec![], body: "upstream unavailable".into() },
        "/user/html500.json" => Reply { status: 500, headers: vec![], body: "<html><body>Oops</body></html>".into() },
        "/user/broken.json" => Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: "{\"id\": ".into(),
        },
        "/user/huge.json" => Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: format!("{{\"id\": \"{}\"}}", "x".repeat(9 * 1024 * 1024)),
        },
        p => user_json(p.trim_start_matches("/user/").trim_end_matches(".json")),
    })
    .await;
    let t = hn(&fake.url);
    let e = t.err(USER, json!({"username": "down"})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(503)));
    assert_eq!(message(&e), "hackernews answered 503: upstream unavailable");
    let e = t.err(USER, json!({"username": "html500"})).await;
    assert_eq!(message(&e), "hackernews answered 500: HTTP 500", "an HTML error page is not dumped");
    let e = t.err(USER, json!({"username": "broken"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert!(message(&e).contains("malformed JSON"), "{e}");
    let e = t.err(USER, json!({"username": "huge"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert!(message(&e).contains("more than 8 MiB"), "{e}");
    assert_eq!(t.ok(USER, json!({"username": "fine"})).await["username"], "fine");
}

/// A raw upstream whose behaviour depends on the user name in the request line.
async fn raw_upstream() -> RawFake {
    RawFake::start(|_, head_text| {
        let path = head_text.split_whitespace().nth(1).unwrap_or("").to_string();
        let json_head =
            |len: usize| head(200, &[("content-type", "application/json"), ("content-length", &len.to_string())]);
        match path.as_str() {
            // Half the body, then a TCP reset.
            "/user/reset.json" => vec![Step::Send(json_head(200)), Step::Send(b"{\"id\": \"res".to_vec()), Step::Reset],
            // Reset before any answer.
            "/user/refused.json" => vec![Step::Reset],
            // Half the body, then a clean close: fewer bytes than announced.
            "/user/short.json" => vec![Step::Send(json_head(200)), Step::Send(b"{\"id\": \"sho".to_vec())],
            // No answer at all within the call's time.
            "/user/silent.json" => vec![Step::Wait(Duration::from_secs(6))],
            // Headers at once, then a byte every 250 ms (slow loris).
            "/user/loris.json" => {
                let mut steps = vec![Step::Send(json_head(40))];
                for _ in 0..40 {
                    steps.push(Step::Wait(Duration::from_millis(250)));
                    steps.push(Step::Send(b" ".to_vec()));
                }
                steps
            }
            // 9 MiB in chunks with no Content-Length.
            "/user/flood.json" => {
                let mut steps = vec![Step::Send(head(
                    200,
                    &[("content-type", "application/json"), ("transfer-encoding", "chunked")],
                ))];
                for _ in 0..(9 * 16) {
                    steps.push(Step::Send(chunk(&[b' '; 64 * 1024])));
                }
                steps.push(Step::Send(chunk(b"")));
                steps
            }
            _ => {
                let body = br#"{"id": "fine", "karma": 1, "created": 0}"#;
                vec![Step::Send(json_head(body.len())), Step::Send(body.to_vec())]
            }
        }
    })
    .await
}

#[tokio::test]
async fn resets_timeouts_slow_loris_and_floods_end_with_a_clear_error() {
    let raw = raw_upstream().await;
    let t = hn(&raw.url);
    for (user, code, words) in [
        ("reset", "NETWORK_ERROR", "could not reach hackernews"),
        ("refused", "NETWORK_ERROR", "could not reach hackernews"),
        ("short", "NETWORK_ERROR", "could not reach hackernews"),
        ("flood", "UPSTREAM_ERROR", "more than 8 MiB"),
    ] {
        let e = t.err(USER, json!({ "username": user })).await;
        assert_eq!(e["code"], code, "{user}: {e}");
        assert!(message(&e).contains(words), "{user}: {e}");
    }
    for user in ["silent", "loris"] {
        let started = Instant::now();
        let e = t.err(USER, json!({ "username": user })).await;
        assert_eq!(e["code"], "TIMEOUT", "{user}: {e}");
        assert!(message(&e).contains("within 2s"), "{user}: {e}");
        assert!(started.elapsed() < Duration::from_millis(3000), "{user}: {:?}", started.elapsed());
    }
    assert_eq!(t.ok(USER, json!({"username": "fine"})).await["username"], "fine");
    assert!(raw.connections() >= 7);
    let log = t.ok("audit_search_log", json!({"tool": USER, "status": "error"})).await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 6, "every failure is audited");
}

// ---------------------------------------------------------------------------------------------
// The secret store breaks or locks mid-session.

const GITHUB_TOKEN: &str = "ghp_faultTESTtoken000000000000000000000";
const PASSPHRASE: &str = "fault test passphrase";

fn file_store_app(home: &Path, extra: &[(&str, String)]) -> Arc<App> {
    let mut vars: HashMap<String, String> = extra.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".into(), "1".into());
    vars.insert("WORKBENCH_SECRET_STORE".into(), "file".into());
    vars.entry("WORKBENCH_VAULT_PASSPHRASE".into()).or_insert_with(|| PASSPHRASE.into());
    App::new(Settings::load(&vars).unwrap())
}

fn save_connection(app: &App, integration: &str, fields: &[(&str, &str)], expires_at: Option<i64>) {
    let integration = app.registry().integration(integration).unwrap();
    let fields = fields.iter().map(|(k, v)| (k.to_string(), Secret::new(v.to_string()))).collect();
    let connection = auth::from_fields(integration, fields, Source::Store);
    auth::save(app, &connection, AccountDetails { expires_at, ..AccountDetails::default() }).unwrap();
}

const REPOS: &str = "github_list_repos";

async fn github_fake() -> Fake {
    Fake::start(|r| match r.header("authorization") {
        Some(a) if a == format!("Bearer {GITHUB_TOKEN}") => {
            Reply::json(200, json!([{"full_name": "octocat/hello", "private": false}]))
        }
        _ => Reply::json(401, json!({"message": "Bad credentials"})),
    })
    .await
}

async fn exec(app: &Arc<App>, tool: &str, args: Value) -> Value {
    let out = workbench::meta::call(app, "execute_tools", json!({"executions": [{"tool": tool, "args": args}]}))
        .await
        .unwrap();
    out.body["results"][0].clone()
}

#[tokio::test]
async fn a_secret_store_that_breaks_mid_session_is_reported_and_recovers() {
    let fake = github_fake().await;
    let home = tempfile::tempdir().unwrap();
    let env = [("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()), ("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())];
    let app = file_store_app(home.path(), &env);
    save_connection(&app, "github", &[("token", GITHUB_TOKEN)], None);
    app.vault.set("hook", Secret::new("vault-value-5150".into()), None, vec![fake.url.clone()]).await.unwrap();
    assert_eq!(exec(&app, REPOS, json!({})).await["result"]["repos"][0]["full_name"], "octocat/hello");

    // Another program damages the file while this session runs.
    let file = home.path().join("secrets.enc");
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, b"{ not what it was").unwrap();
    let e = exec(&app, REPOS, json!({})).await["error"].clone();
    assert_eq!(e["code"], "SECRET_STORE_UNAVAILABLE", "{e}");
    assert!(message(&e).contains("is damaged") && message(&e).contains("To fix it"), "{e}");
    let e = exec(&app, "wikipedia_search_articles", json!({"query": "{{vault:hook}}"})).await["error"].clone();
    assert_eq!(e["code"], "SECRET_STORE_UNAVAILABLE", "a vault ref says the store is the problem: {e}");
    let connect = workbench::meta::call(&app, "connect", json!({"integration": "github"})).await.unwrap();
    assert!(connect.is_error);
    assert!(connect.body["error"].as_str().unwrap().contains("is damaged"), "{}", connect.body);
    // What does not need the store keeps working, and SQLite still knows the connection.
    assert!(exec(&app, "time_get_current", json!({})).await["result"]["now"].is_object());
    let list = workbench::meta::call(&app, "list_integrations", json!({})).await.unwrap();
    let github = list.body["integrations"].as_array().unwrap().iter().find(|i| i["name"] == "github").unwrap().clone();
    assert_eq!(github["connected"], true);

    // Re-keyed by another process with another passphrase: refused, never decrypted with ours.
    let rekeyed = workbench::secrets::file::FileStore::new(
        file.clone(),
        workbench::secrets::file::Passphrase::Value(Secret::new("another".into())),
    );
    std::fs::remove_file(&file).unwrap();
    rekeyed.set("connection:github", &Secret::new("{}".into())).unwrap();
    let e = exec(&app, REPOS, json!({})).await["error"].clone();
    assert_eq!(e["code"], "SECRET_STORE_UNAVAILABLE", "{e}");
    assert!(message(&e).contains("the passphrase does not open"), "{e}");

    // The file comes back: the same session works again.
    std::fs::write(&file, &good).unwrap();
    assert_eq!(exec(&app, REPOS, json!({})).await["result"]["repos"][0]["full_name"], "octocat/hello");
    let log = exec(&app, "audit_search_log", json!({"status": "error"})).await;
    assert!(!log.to_string().contains(GITHUB_TOKEN) && !log.to_string().contains("vault-value-5150"));
}

#[tokio::test]
async fn a_locked_file_store_says_how_to_unlock_and_works_once_unlocked() {
    let fake = github_fake().await;
    let home = tempfile::tempdir().unwrap();
    let env = [("WORKBENCH_GITHUB_BASE_URL", fake.url.clone())];
    save_connection(&file_store_app(home.path(), &env), "github", &[("token", GITHUB_TOKEN)], None);

    // The next session starts without the passphrase: the store is locked.
    let mut vars: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".into(), "1".into());
    vars.insert("WORKBENCH_SECRET_STORE".into(), "file".into());
    let app = App::new(Settings::load(&vars).unwrap());
    assert!(app.secrets.locked());
    let e = exec(&app, REPOS, json!({})).await["error"].clone();
    assert_eq!(e["code"], "SECRET_STORE_UNAVAILABLE", "{e}");
    assert!(message(&e).contains("locked") && message(&e).contains("WORKBENCH_VAULT_PASSPHRASE"), "{e}");
    let connect = workbench::meta::call(&app, "connect", json!({"integration": "github"})).await.unwrap();
    assert!(connect.is_error);
    assert!(connect.body["unlock_url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "{}", connect.body);
    assert!(app.secrets.unlock(Secret::new("wrong".into())).is_err());
    app.secrets.unlock(Secret::new(PASSPHRASE.into())).unwrap();
    assert_eq!(exec(&app, REPOS, json!({})).await["result"]["repos"][0]["full_name"], "octocat/hello");
}

// ---------------------------------------------------------------------------------------------
// SQLite held by another writer.

/// Another connection (as a second workbench process would) holds the write lock for `hold`.
fn hold_write_lock(db: &Path, hold: Duration) -> std::thread::JoinHandle<()> {
    let db = db.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("BEGIN IMMEDIATE").unwrap();
        c.execute(
            "INSERT INTO vault_secret (name, allowed_hosts, created_at) VALUES (?1, '[]', 'now')",
            [format!("other-process-{}", workbench::ids::random_hex(4))],
        )
        .unwrap();
        tx.send(()).unwrap();
        std::thread::sleep(hold);
        c.execute_batch("COMMIT").unwrap();
    });
    rx.recv().unwrap();
    handle
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_database_delays_the_audit_row_but_never_the_result_or_the_row() {
    let t = app_with(&[]);
    still_up(&t).await; // creates the database
    let db = t.home.path().join("workbench.db");

    // Held shorter than the busy timeout: the write waits, then lands.
    let holder = hold_write_lock(&db, Duration::from_millis(1500));
    let started = Instant::now();
    let r = t.ok("time_get_current", json!({"timezone": "Europe/Lisbon"})).await;
    assert_eq!(r["now"]["timezone"], "Europe/Lisbon");
    assert!(started.elapsed() >= Duration::from_millis(1200), "the audit write waited: {:?}", started.elapsed());
    holder.join().unwrap();

    // Held longer than the busy timeout (5 s): the result still comes back, the row waits in
    // memory and is written once the other writer lets go.
    let holder = hold_write_lock(&db, Duration::from_secs(7));
    let started = Instant::now();
    let r = t.ok("time_get_current", json!({"timezone": "Asia/Tokyo"})).await;
    assert_eq!(r["now"]["timezone"], "Asia/Tokyo");
    assert!(started.elapsed() < Duration::from_millis(6500), "{:?}", started.elapsed());
    holder.join().unwrap();
    let log = t.ok("audit_search_log", json!({"tool": "time_get_current"})).await;
    let args: Vec<String> = log["entries"].as_array().unwrap().iter().map(|e| e["args"].to_string()).collect();
    assert_eq!(args.len(), 3, "{args:?}");
    assert!(args[0].contains("Asia/Tokyo") && args[1].contains("Europe/Lisbon"), "{args:?}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let check: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
}

// ---------------------------------------------------------------------------------------------
// The loopback port already taken.

#[tokio::test]
async fn a_taken_port_is_a_clear_error_and_connect_works_once_it_is_free() {
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = squatter.local_addr().unwrap().port();
    let t = app_with(&[("WORKBENCH_PORT", port.to_string())]);
    let out = t.call("connect", json!({"integration": "github"})).await;
    assert!(out.is_error, "{}", out.body);
    let text = out.body["error"].as_str().unwrap();
    assert!(text.contains(&format!("127.0.0.1:{port} is already in use")), "{text}");
    assert!(text.contains("WORKBENCH_PORT"), "{text}");
    let e = t.err("vault_set_secret", json!({"name": "api_key"})).await;
    assert!(message(&e).contains("already in use"), "{e}");
    still_up(&t).await;
    // No silent fallback to another port (OAuth apps register the exact redirect port); the same
    // session connects once the port is free.
    drop(squatter);
    let out = t.call("connect", json!({"integration": "github"})).await;
    assert!(!out.is_error, "{}", out.body);
    assert!(out.body["url"].as_str().unwrap().starts_with(&format!("http://127.0.0.1:{port}/connect/")));
}

// ---------------------------------------------------------------------------------------------
// Clock skew around an OAuth token's expiry (Google Calendar, refreshed at a fake token endpoint).

struct Google {
    fake: Fake,
    /// The access token the fake API accepts.
    valid: Arc<Mutex<String>>,
    /// Refreshes answered.
    refreshes: Arc<AtomicUsize>,
    /// What the token endpoint does: answer, refuse, or be down.
    token_mode: Arc<Mutex<&'static str>>,
}

async fn google() -> Google {
    let valid = Arc::new(Mutex::new("at-old".to_string()));
    let refreshes = Arc::new(AtomicUsize::new(0));
    let token_mode = Arc::new(Mutex::new("answer"));
    let (v, n, m) = (valid.clone(), refreshes.clone(), token_mode.clone());
    let fake = Fake::start(move |r: &Recorded| match r.path.as_str() {
        "/token" => match *m.lock().unwrap() {
            "refuse" => Reply::json(
                400,
                json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}),
            ),
            "down" => Reply { status: 503, headers: vec![], body: "unavailable".into() },
            _ => {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                let token = format!("at-new-{k}");
                *v.lock().unwrap() = token.clone();
                Reply::json(200, json!({"access_token": token, "expires_in": 3600}))
            }
        },
        "/users/me/calendarList" if r.header("authorization") == Some(&format!("Bearer {}", v.lock().unwrap())) => {
            Reply::json(200, json!({"items": [{"id": "primary", "summary": "Ada", "accessRole": "owner"}]}))
        }
        _ => Reply::json(
            401,
            json!({"error": {"code": 401, "message": "Invalid Credentials", "status": "UNAUTHENTICATED"}}),
        ),
    })
    .await;
    Google { fake, valid, refreshes, token_mode }
}

fn google_env(g: &Google) -> Vec<(&'static str, String)> {
    vec![
        ("WORKBENCH_GOOGLE_CLIENT_ID", "client-123".into()),
        ("WORKBENCH_GOOGLE_CALENDAR_TOKEN_URL", format!("{}/token", g.fake.url)),
        ("WORKBENCH_GOOGLE_CALENDAR_BASE_URL", g.fake.url.clone()),
    ]
}

fn google_app(g: &Google, expires_in: i64) -> TestApp {
    let home = tempfile::tempdir().unwrap();
    let mut vars: HashMap<String, String> = google_env(g).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    let app = App::with_parts(Settings::load(&vars).unwrap(), Registry::standard(), Arc::new(MemoryStore::default()));
    let expires_at = chrono::Utc::now().timestamp() + expires_in;
    save_connection(&app, "google_calendar", &[("token", "at-old"), ("refresh_token", "rt-1")], Some(expires_at));
    TestApp { app, home }
}

const CALENDARS: &str = "google_calendar_list_calendars";

#[tokio::test]
async fn clock_skew_around_token_expiry_refreshes_when_it_must_and_only_then() {
    let g = google().await;
    let bearer = |g: &Google| g.fake.last().header("authorization").unwrap_or_default().to_string();

    // Expired minutes ago by our clock: refreshed before the call.
    let t = google_app(&g, -300);
    assert_eq!(t.ok(CALENDARS, json!({})).await["calendars"][0]["id"], "primary");
    assert_eq!((g.refreshes.load(Ordering::SeqCst), bearer(&g)), (1, "Bearer at-new-1".to_string()));
    let stored = t.app.storage.connection_meta("google_calendar").unwrap().unwrap();
    assert!(stored.expires_at.unwrap() > chrono::Utc::now().timestamp() + 3000, "the new expiry is stored");

    // Expiring within the minute ahead: refreshed too.
    *g.valid.lock().unwrap() = "at-old".into();
    let t = google_app(&g, 30);
    t.ok(CALENDARS, json!({})).await;
    assert_eq!(g.refreshes.load(Ordering::SeqCst), 2);

    // Valid for minutes yet by our clock, and the provider agrees: no refresh.
    *g.valid.lock().unwrap() = "at-old".into();
    let t = google_app(&g, 300);
    t.ok(CALENDARS, json!({})).await;
    assert_eq!((g.refreshes.load(Ordering::SeqCst), bearer(&g)), (2, "Bearer at-old".to_string()));

    // Valid for minutes by our clock, but the provider's clock says expired (401): refreshed once
    // and retried.
    *g.valid.lock().unwrap() = "revoked-by-provider-clock".into();
    let t = google_app(&g, 300);
    assert_eq!(t.ok(CALENDARS, json!({})).await["calendars"][0]["id"], "primary");
    assert_eq!((g.refreshes.load(Ordering::SeqCst), bearer(&g)), (3, "Bearer at-new-3".to_string()));

    // Expired by our clock (ours runs ahead) while the token endpoint is down: the old token is
    // still tried, and the provider still takes it.
    *g.valid.lock().unwrap() = "at-old".into();
    *g.token_mode.lock().unwrap() = "down";
    let t = google_app(&g, -120);
    t.ok(CALENDARS, json!({})).await;
    assert_eq!(bearer(&g), "Bearer at-old");

    // Expired on both clocks and the refresh is refused: one clear error that says to reconnect.
    *g.valid.lock().unwrap() = "gone".into();
    *g.token_mode.lock().unwrap() = "refuse";
    let t = google_app(&g, -120);
    let e = t.err(CALENDARS, json!({})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(401)), "{e}");
    assert!(message(&e).contains("call connect with integration 'google_calendar'"), "{e}");
    assert!(message(&e).contains("Token has been expired or revoked"), "{e}");
    assert!(!e.to_string().contains("rt-1") && !e.to_string().contains("at-old"));
    still_up(&t).await;
}

// ---------------------------------------------------------------------------------------------
// kill -9 of the real binary.

/// The real binary on stdio, with async pipes so fakes in this runtime keep serving.
struct Server {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Server {
    async fn start(home: &Path, env: &[(&str, String)]) -> Server {
        let mut cmd = tokio::process::Command::new(binary());
        cmd.env("WORKBENCH_HOME", home)
            .env("WORKBENCH_NO_BROWSER", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut s = Server { child, stdin, lines };
        s.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}})).await;
        s.answer(0).await;
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        s
    }

    async fn send(&mut self, v: Value) {
        self.stdin.write_all(format!("{v}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn call_async(&mut self, id: u64, tool: &str, args: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
        )
        .await;
    }

    async fn answer(&mut self, id: u64) -> Value {
        let read = async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("non-JSON on stdout: {line}"));
                if v["id"] == id {
                    return v;
                }
            }
            panic!("the server closed stdout before answering {id}");
        };
        tokio::time::timeout(Duration::from_secs(60), read).await.expect("an answer within 60 s")
    }

    /// A tool call's JSON body.
    async fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.call_async(id, tool, args).await;
        let v = self.answer(id).await;
        serde_json::from_str(v["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
    }

    async fn kill_9(mut self) {
        self.child.start_kill().unwrap();
        let status = self.child.wait().await.unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status}");
    }
}

fn integrity(db: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(db).unwrap();
    let check: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_batch_leaves_a_sound_database_and_a_server_that_starts_again() {
    let slow = Fake::start(|r| {
        std::thread::sleep(Duration::from_millis(150));
        user_json(r.path.trim_start_matches("/user/").trim_end_matches(".json"))
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let env = [("WORKBENCH_HACKERNEWS_BASE_URL", slow.url.clone())];
    let mut s = Server::start(home.path(), &env).await;
    let user_id = s.call(1, "whoami", json!({})).await["id"].as_str().unwrap().to_string();
    s.kill_9().await;
    let db = home.path().join("workbench.db");
    let mut rows_before = 0i64;
    for (round, delay) in [40u64, 250, 700].into_iter().enumerate() {
        let mut s = Server::start(home.path(), &env).await;
        let executions: Vec<Value> = (0..40)
            .map(|i| {
                if i % 2 == 0 {
                    json!({"tool": "time_get_current", "args": {"timezone": "UTC"}})
                } else {
                    json!({"tool": USER, "args": {"username": format!("u{round}x{i}")}})
                }
            })
            .collect();
        s.call_async(2, "execute_tools", json!({ "executions": executions })).await;
        tokio::time::sleep(Duration::from_millis(delay)).await;
        s.kill_9().await;
        let c = integrity(&db);
        let id: String = c.query_row("SELECT id FROM user", [], |r| r.get(0)).unwrap();
        assert_eq!(id, user_id, "the local user survives");
        let rows: i64 = c.query_row("SELECT count(*) FROM audit", [], |r| r.get(0)).unwrap();
        assert!(rows >= rows_before && rows <= rows_before + 40, "round {round}: {rows_before} -> {rows}");
        let incomplete: i64 = c
            .query_row("SELECT count(*) FROM audit WHERE tool = '' OR status NOT IN ('ok', 'error')", [], |r| r.get(0))
            .unwrap();
        assert_eq!(incomplete, 0);
        rows_before = rows;
    }
    let mut s = Server::start(home.path(), &env).await;
    assert_eq!(s.call(3, "whoami", json!({})).await["id"], user_id.as_str());
    let r = s.call(4, "execute_tools", json!({"executions": [{"tool": USER, "args": {"username": "after"}}]})).await;
    assert_eq!(r["results"][0]["result"]["username"], "after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_in_one_batch_leave_the_binary_answering() {
    let raw = raw_upstream().await;
    let home = tempfile::tempdir().unwrap();
    let env = [("WORKBENCH_HACKERNEWS_BASE_URL", raw.url.clone()), ("WORKBENCH_CALL_TIMEOUT_SECS", "2".into())];
    let mut s = Server::start(home.path(), &env).await;
    let users = ["reset", "refused", "short", "silent", "loris", "flood", "fine"];
    let executions: Vec<Value> = users.iter().map(|u| json!({"tool": USER, "args": {"username": u}})).collect();
    let r = s.call(1, "execute_tools", json!({ "executions": executions })).await;
    let codes: Vec<&str> =
        r["results"].as_array().unwrap().iter().map(|x| x["error"]["code"].as_str().unwrap_or("ok")).collect();
    assert_eq!(
        codes,
        ["NETWORK_ERROR", "NETWORK_ERROR", "NETWORK_ERROR", "TIMEOUT", "TIMEOUT", "UPSTREAM_ERROR", "ok"]
    );
    s.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await;
    assert!(s.answer(2).await["result"].is_object());
    assert_eq!(s.call(3, "whoami", json!({})).await["id"].as_str().map(|i| i.starts_with("usr_")), Some(true));
}

/// A Google token endpoint that rotates both tokens on every refresh (`at-new-N`, `rt-new-N`),
/// after `delay`, and tells the test when it answered.
struct Rotating {
    fake: Fake,
    delay: Arc<Mutex<Duration>>,
    answered: Arc<Mutex<Option<std::sync::mpsc::Sender<usize>>>>,
    calls: Arc<AtomicUsize>,
}

async fn rotating() -> Rotating {
    let delay = Arc::new(Mutex::new(Duration::ZERO));
    let answered: Arc<Mutex<Option<std::sync::mpsc::Sender<usize>>>> = Arc::new(Mutex::new(None));
    let calls = Arc::new(AtomicUsize::new(0));
    let (d, a, n) = (delay.clone(), answered.clone(), calls.clone());
    let fake = Fake::start(move |r| match r.path.as_str() {
        "/token" => {
            let form: HashMap<String, String> =
                workbench::connect::form::parse(&r.body).unwrap_or_default().into_iter().collect();
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            // Every refresh token this provider ever issued stays valid (as Google's do).
            if !(presented == "rt-old" || presented.starts_with("rt-new-")) {
                return Reply::json(400, json!({"error": "invalid_grant"}));
            }
            let k = n.fetch_add(1, Ordering::SeqCst) + 1;
            let wait = *d.lock().unwrap();
            std::thread::sleep(wait);
            if let Some(tx) = a.lock().unwrap().as_ref() {
                let _ = tx.send(k);
            }
            Reply::json(200, json!({"access_token": format!("at-new-{k}"), "refresh_token": format!("rt-new-{k}"), "expires_in": 3600}))
        }
        "/users/me/calendarList" if r.header("authorization").is_some_and(|a| a.starts_with("Bearer at-new-")) => {
            Reply::json(200, json!({"items": [{"id": "primary", "summary": "Ada", "accessRole": "owner"}]}))
        }
        _ => Reply::json(401, json!({"error": {"code": 401, "message": "Invalid Credentials"}})),
    })
    .await;
    Rotating { fake, delay, answered, calls }
}

/// The stored credential, read as a fresh process would, and checked to be whole.
fn stored_pair(app: &App) -> (String, String) {
    let integration = app.registry().integration("google_calendar").unwrap();
    let c = app.connection(integration).expect("the store opens").expect("the connection is still there");
    let token = c.fields["token"].expose().clone();
    let refresh = c.fields["refresh_token"].expose().clone();
    let whole = (token == "at-old" && refresh == "rt-old")
        || token.strip_prefix("at-new-").is_some_and(|k| refresh == format!("rt-new-{k}"));
    assert!(whole, "a half-written credential: token {token}, refresh token {refresh}");
    (token, refresh)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_during_a_token_refresh_loses_no_credential() {
    let g = rotating().await;
    let home = tempfile::tempdir().unwrap();
    let env = vec![
        ("WORKBENCH_SECRET_STORE", "file".to_string()),
        ("WORKBENCH_VAULT_PASSPHRASE", PASSPHRASE.to_string()),
        ("WORKBENCH_GOOGLE_CLIENT_ID", "client-123".into()),
        ("WORKBENCH_GOOGLE_CALENDAR_TOKEN_URL", format!("{}/token", g.fake.url)),
        ("WORKBENCH_GOOGLE_CALENDAR_BASE_URL", g.fake.url.clone()),
    ];
    let reader = file_store_app(home.path(), &env);
    let expired = chrono::Utc::now().timestamp() - 600;
    save_connection(&reader, "google_calendar", &[("token", "at-old"), ("refresh_token", "rt-old")], Some(expired));
    let db = home.path().join("workbench.db");
    let list = json!({"executions": [{"tool": CALENDARS, "args": {}}]});

    // Killed while the token request is in flight: the old pair is intact.
    *g.delay.lock().unwrap() = Duration::from_secs(5);
    let (tx, rx) = std::sync::mpsc::channel();
    *g.answered.lock().unwrap() = Some(tx);
    let mut s = Server::start(home.path(), &env).await;
    s.call_async(1, "execute_tools", list.clone()).await;
    let waited = Instant::now();
    while g.calls.load(Ordering::SeqCst) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(30), "the binary never asked to refresh");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.kill_9().await;
    assert_eq!(stored_pair(&reader), ("at-old".to_string(), "rt-old".to_string()));
    integrity(&db);
    let _ = rx.recv_timeout(Duration::from_secs(10)); // the slow answer went nowhere

    // Killed just after the provider answered, at several moments of storing the rotated pair:
    // whatever was stored is a whole pair, and the next process works with it.
    *g.delay.lock().unwrap() = Duration::ZERO;
    for after in [0u64, 2, 5, 15, 60] {
        let (tx, rx) = std::sync::mpsc::channel();
        *g.answered.lock().unwrap() = Some(tx);
        let mut s = Server::start(home.path(), &env).await;
        // Expired again, so this process refreshes.
        let mut meta = reader.storage.connection_meta("google_calendar").unwrap().unwrap();
        meta.expires_at = Some(expired);
        reader.storage.put_connection_meta(&meta).unwrap();
        s.call_async(1, "execute_tools", list.clone()).await;
        rx.recv_timeout(Duration::from_secs(30)).expect("the binary refreshed");
        tokio::time::sleep(Duration::from_millis(after)).await;
        s.kill_9().await;
        stored_pair(&reader);
        let c = integrity(&db);
        let n: i64 = c
            .query_row("SELECT count(*) FROM connection WHERE integration = 'google_calendar'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the connection row is still there");
    }

    // A clean run afterwards refreshes from whatever pair survived and works.
    *g.answered.lock().unwrap() = None;
    let mut s = Server::start(home.path(), &env).await;
    let r = s.call(2, "execute_tools", list.clone()).await;
    assert_eq!(r["results"][0]["result"]["calendars"][0]["id"], "primary", "{r}");
    let (token, _) = stored_pair(&reader);
    assert!(token.starts_with("at-new-"), "{token}");
    let secrets = std::fs::read(home.path().join("secrets.enc")).unwrap();
    assert!(!String::from_utf8_lossy(&secrets).contains("rt-"), "the file holds ciphertext only");
}
