//! curl_session and its proxy end to end: tokens minted by the meta-tool, requests through
//! `/c/<integration>/<path>` with real `curl` and with reqwest, against fakes on 127.0.0.1 that
//! check the credential the way the real APIs do; and every refusal.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::fake::{Fake, Recorded, Reply};
use crate::support::{TestApp, app_with};

const GH_TOKEN: &str = "ghp_realGithubToken0123456789abcdef";
const STRIPE_KEY: &str = "sk_test_realStripeKey0123456789";
const DISCORD_TOKEN: &str = "discord-bot-token-0123456789";

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A GitHub stand-in: real token in `Authorization: Bearer`, never the proxy token or a cookie.
async fn github(other_host: String) -> Fake {
    Fake::start(move |r: &Recorded| {
        if r.header("authorization") != Some(&format!("Bearer {GH_TOKEN}")) {
            return Reply::json(401, json!({"message": "Bad credentials"}));
        }
        if r.header("cookie").is_some() || r.header("x-forwarded-for").is_some() {
            return Reply::json(400, json!({"message": "unexpected header"}));
        }
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/user") => Reply::json(200, json!({"login": "ada", "page": r.q("page")}))
                .with_header("set-cookie", "_gh_sess=abc; HttpOnly")
                .with_header("x-ratelimit-remaining", "4999"),
            ("GET", "/echo") => Reply::json(200, json!({"you_sent": r.header("authorization")})),
            ("GET", "/big") => Reply {
                status: 200,
                headers: vec![("content-type".into(), "text/plain".into())],
                body: "0123456789".repeat(300_000),
            },
            ("POST", "/repos/ada/x/issues") => {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                if r.header("content-type") != Some("application/json") || body["title"].as_str().is_none() {
                    return Reply::json(422, json!({"message": "Validation Failed"}));
                }
                Reply::json(201, json!({"number": 7, "title": body["title"]}))
            }
            ("PATCH", "/repos/ada/x/issues/7") => Reply::json(200, json!({"state": "closed"})),
            ("PUT", "/user/starred/ada/x") => Reply { status: 204, headers: vec![], body: String::new() },
            ("DELETE", "/repos/ada/x/labels/bug") => Reply { status: 204, headers: vec![], body: String::new() },
            ("GET", "/moved") => {
                Reply { status: 302, headers: vec![("location".into(), "/user".into())], body: String::new() }
            }
            ("GET", "/elsewhere") => Reply {
                status: 302,
                headers: vec![("location".into(), format!("{other_host}/steal"))],
                body: String::new(),
            },
            _ => Reply::json(404, json!({"message": "Not Found"})),
        }
    })
    .await
}

struct Setup {
    t: TestApp,
    gh: Fake,
    other: Fake,
    stripe: Fake,
    discord: Fake,
}

async fn setup() -> Setup {
    let other = Fake::start(|_| Reply::json(200, json!({"stolen": true}))).await;
    let gh = github(other.url.clone()).await;
    let stripe = Fake::start(|r| {
        if r.header("authorization") == Some(&format!("Bearer {STRIPE_KEY}")) {
            Reply::json(200, json!({"object": "balance"}))
        } else {
            Reply::json(401, json!({"error": {"message": "Invalid API Key"}}))
        }
    })
    .await;
    let discord = Fake::start(|r| {
        if r.header("authorization") == Some(&format!("Bot {DISCORD_TOKEN}")) {
            Reply::json(200, json!({"id": "1", "path": r.path}))
        } else {
            Reply::json(401, json!({"message": "401: Unauthorized"}))
        }
    })
    .await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_TOKEN", GH_TOKEN.into()),
        ("WORKBENCH_GITHUB_BASE_URL", gh.url.clone()),
        ("WORKBENCH_STRIPE_API_KEY", STRIPE_KEY.into()),
        ("WORKBENCH_STRIPE_BASE_URL", stripe.url.clone()),
        ("WORKBENCH_DISCORD_TOKEN", DISCORD_TOKEN.into()),
        ("WORKBENCH_DISCORD_BASE_URL", discord.url.clone()),
    ]);
    Setup { t, gh, other, stripe, discord }
}

async fn mint(t: &TestApp, integrations: &[&str]) -> (String, String) {
    let out = t.call("curl_session", json!({ "integrations": integrations })).await;
    assert!(!out.is_error, "{}", out.body);
    (out.body["token"].as_str().unwrap().to_string(), out.body["proxyBaseUrl"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn minting_is_all_or_nothing_and_shaped_as_documented() {
    let s = setup().await;
    let out = s.t.call("curl_session", json!({"integrations": ["github"]})).await;
    assert!(!out.is_error, "{}", out.body);
    let b = &out.body;
    assert_eq!(b["expiresIn"], 900);
    assert_eq!(b["token"].as_str().unwrap().split('.').count(), 3);
    let base = b["proxyBaseUrl"].as_str().unwrap();
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/c"), "{base}");
    assert_eq!(b["usage"], format!("Send requests to {base}/<integration>/<path> with Authorization: Bearer <token>"));
    assert_eq!(b["upstreams"]["github"]["forwardsTo"], s.gh.url);
    assert!(!b.to_string().contains(GH_TOKEN));

    let short = s.t.call("curl_session", json!({"integrations": ["stripe"], "expiresInSeconds": 60})).await;
    assert_eq!(short.body["expiresIn"], 60);
    assert_eq!(short.body["upstreams"]["stripe"]["allows"], "GET only");

    let bad = s.t.call("curl_session", json!({"integrations": ["github", "nope", "wikipedia", "slack"]})).await;
    assert!(bad.is_error);
    assert_eq!(
        bad.body["error"],
        "Unknown integration: nope; wikipedia: curl proxy is not enabled for this integration (use http_send_request for public URLs); slack: not connected (call connect first)"
    );
    assert!(bad.body.get("token").is_none());
    let range = s.t.call("curl_session", json!({"integrations": ["github"], "expiresInSeconds": 7200})).await;
    assert!(range.is_error, "{}", range.body);

    // Each mint is audited, without the token.
    let log = s.t.ok("audit_search_log", json!({"tool": "curl_session"})).await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 2, "{log}");
    assert!(!log.to_string().contains(b["token"].as_str().unwrap()));
}

#[tokio::test]
async fn requests_pass_through_with_the_real_credential_and_nothing_secret_comes_back() {
    let s = setup().await;
    let (token, base) = mint(&s.t, &["github"]).await;
    let c = http();
    let bearer = format!("Bearer {token}");

    let r = c
        .get(format!("{base}/github/user?page=2"))
        .header("authorization", &bearer)
        .header("cookie", "session=from-the-caller")
        .header("x-forwarded-for", "10.0.0.1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("set-cookie").is_none(), "upstream cookies never come back");
    assert_eq!(r.headers()["x-ratelimit-remaining"], "4999");
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"login": "ada", "page": "2"}));
    assert!(s.gh.requests().iter().all(|q| q.header("authorization") == Some(&format!("Bearer {GH_TOKEN}"))));

    // The injected credential never appears in what the caller gets.
    let echo = c.get(format!("{base}/github/echo")).header("authorization", &bearer).send().await.unwrap();
    let text = echo.text().await.unwrap();
    assert!(!text.contains(GH_TOKEN) && text.contains("[REDACTED]"), "{text}");

    // Bodies of every method pass through; big responses stream through intact.
    let created = c
        .post(format!("{base}/github/repos/ada/x/issues"))
        .header("authorization", &bearer)
        .json(&json!({"title": "Proxy works"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(created.json::<Value>().await.unwrap()["title"], "Proxy works");
    let patched = c
        .patch(format!("{base}/github/repos/ada/x/issues/7"))
        .header("authorization", &bearer)
        .json(&json!({"state": "closed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let put = c.put(format!("{base}/github/user/starred/ada/x")).header("authorization", &bearer).send().await.unwrap();
    assert_eq!(put.status(), 204);
    let del = c
        .delete(format!("{base}/github/repos/ada/x/labels/bug"))
        .header("authorization", &bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(del.status(), 204);
    let big = c.get(format!("{base}/github/big")).header("authorization", &bearer).send().await.unwrap();
    let body = big.bytes().await.unwrap();
    assert_eq!(body.len(), 3_000_000);
    assert!(body.starts_with(b"0123456789012"));

    // Upstream errors come back as they are.
    let missing = c.get(format!("{base}/github/nothing-here")).header("authorization", &bearer).send().await.unwrap();
    assert_eq!(missing.status(), 404);

    // A same-host redirect is followed; one to another host is handed back, not followed.
    let moved = c.get(format!("{base}/github/moved")).header("authorization", &bearer).send().await.unwrap();
    assert_eq!(moved.status(), 200);
    let away = c.get(format!("{base}/github/elsewhere")).header("authorization", &bearer).send().await.unwrap();
    assert_eq!(away.status(), 302);
    assert!(s.other.requests().is_empty(), "the credential never went to another host");

    // Every proxied request is audited: method, path (no query), status; no secrets.
    let log = s.t.ok("audit_search_log", json!({"tool": "curl_proxy", "limit": 50})).await;
    let rows = log["entries"].as_array().unwrap();
    assert_eq!(rows.len(), 10, "{log}");
    let text = log.to_string();
    assert!(
        rows.iter().any(|r| r["args"] == json!({"method": "POST", "path": "/repos/ada/x/issues", "status": 201})),
        "{text}"
    );
    assert!(!text.contains("page=2") && !text.contains(GH_TOKEN) && !text.contains(&token));
    assert!(rows.iter().any(|r| r["mutating"] == true) && rows.iter().any(|r| r["status"] == "error"));
}

#[tokio::test]
async fn real_curl_through_the_proxy() {
    let s = setup().await;
    let (token, base) = mint(&s.t, &["github"]).await;
    let run = |args: Vec<String>| async move {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new("curl").args(&args).output().expect("curl is installed")
        })
        .await
        .unwrap()
    };
    let ok =
        run(vec!["-sS".into(), "-H".into(), format!("Authorization: Bearer {token}"), format!("{base}/github/user")])
            .await;
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&ok.stdout).unwrap()["login"], "ada");
    let posted = run(vec![
        "-sS".into(),
        "-X".into(),
        "POST".into(),
        "-H".into(),
        format!("Authorization: Bearer {token}"),
        "-H".into(),
        "Content-Type: application/json".into(),
        "-d".into(),
        r#"{"title":"from curl"}"#.into(),
        "-w".into(),
        "\n%{http_code}".into(),
        format!("{base}/github/repos/ada/x/issues"),
    ])
    .await;
    let out = String::from_utf8_lossy(&posted.stdout);
    assert!(out.ends_with("\n201") && out.contains("from curl"), "{out}");
    // curl --path-as-is sends the dots unnormalised: refused, nothing reaches GitHub.
    let before = s.gh.requests().len();
    let dots = run(vec![
        "-s".into(),
        "--path-as-is".into(),
        "-o".into(),
        "/dev/null".into(),
        "-w".into(),
        "%{http_code}".into(),
        "-H".into(),
        format!("Authorization: Bearer {token}"),
        format!("{base}/github/../../etc/passwd"),
    ])
    .await;
    assert_eq!(String::from_utf8_lossy(&dots.stdout), "400");
    let no_token = run(vec![
        "-s".into(),
        "-o".into(),
        "/dev/null".into(),
        "-w".into(),
        "%{http_code}".into(),
        format!("{base}/github/user"),
    ])
    .await;
    assert_eq!(String::from_utf8_lossy(&no_token.stdout), "401");
    assert_eq!(s.gh.requests().len(), before);
}

#[tokio::test]
async fn every_refusal() {
    let s = setup().await;
    let (token, base) = mint(&s.t, &["github", "stripe", "discord"]).await;
    let (gh_only, _) = mint(&s.t, &["github"]).await;
    let c = http();
    let status = |r: reqwest::Response| r.status().as_u16();
    let get = |url: String, auth: Option<String>| {
        let c = c.clone();
        async move {
            let mut b = c.get(url);
            if let Some(a) = auth {
                b = b.header("authorization", a);
            }
            b.send().await.unwrap()
        }
    };
    let seen = s.gh.requests().len();

    // No token, a forged token, an expired token, a token for other integrations.
    assert_eq!(status(get(format!("{base}/github/user"), None).await), 401);
    // One signature character changed (in the middle, where every bit counts).
    let mut forged: Vec<char> = token.chars().collect();
    let i = forged.len() - 10;
    forged[i] = if forged[i] == 'A' { 'B' } else { 'A' };
    let forged: String = forged.into_iter().collect();
    let r = get(format!("{base}/github/user"), Some(format!("Bearer {forged}"))).await;
    assert_eq!(status(r), 401);
    let key = workbench::proxy::signing_key(&s.t.app).await.unwrap();
    let now = chrono::Utc::now().timestamp();
    let expired = workbench::proxy::token::sign(
        key.expose(),
        &workbench::proxy::token::Claims {
            iss: "workbench".into(),
            aud: workbench::proxy::token::AUDIENCE.into(),
            sub: "usr".into(),
            integrations: vec!["github".into()],
            accounts: Default::default(),
            iat: now - 1000,
            exp: now - 1,
            jti: "x".into(),
        },
    );
    let r = get(format!("{base}/github/user"), Some(format!("Bearer {expired}"))).await;
    assert_eq!(status(r), 401);
    let r = get(format!("{base}/stripe/v1/balance"), Some(format!("Bearer {gh_only}"))).await;
    assert_eq!(status(r), 403);
    let body: Value = r_json(get(format!("{base}/stripe/v1/balance"), Some(format!("Bearer {gh_only}"))).await).await;
    assert!(body["error"].as_str().unwrap().contains("github only"), "{body}");

    // Paths that would leave the base URL, in every spelling, sent byte for byte.
    let port: u16 = base.trim_start_matches("http://127.0.0.1:").trim_end_matches("/c").parse().unwrap();
    for path in [
        "/c/github/../../etc/passwd",
        "/c/github/%2e%2e/x",
        "/c/github/%2E%2E/%2E%2E/x",
        "/c/github/a%2fb",
        "/c/github/a%5cb",
        "/c/github/a\\b",
        "/c/github//evil.example/x",
        "/c/github/a/%252e%252e",
    ] {
        assert_eq!(raw_status(port, path, &token).await, 400, "{path}");
    }
    // A wrong Host (DNS rebinding) is refused before the token is looked at.
    let r = c
        .get(format!("{base}/github/user"))
        .header("host", format!("evil.example:{port}"))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 421);
    assert_eq!(s.gh.requests().len(), seen, "none of these reached GitHub");

    // Per-integration policies: Stripe is read-only; Discord writes only to message/thread routes.
    let r = get(format!("{base}/stripe/v1/balance"), Some(format!("Bearer {token}"))).await;
    assert_eq!(status(r), 200);
    let r = c
        .post(format!("{base}/stripe/v1/refunds"))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    assert_eq!(s.stripe.requests().len(), 1);
    let r = c
        .post(format!("{base}/discord/channels/42/messages"))
        .header("authorization", format!("Bearer {token}"))
        .json(&json!({"content": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 200);
    let r = c
        .delete(format!("{base}/discord/guilds/1/members/2"))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(status(r), 403);
    assert_eq!(s.discord.requests().len(), 1);
    assert_eq!(s.discord.last().header("authorization"), Some(format!("Bot {DISCORD_TOKEN}").as_str()));
}

/// Sends a GET with the path exactly as given (no client-side normalisation) and returns the status.
async fn raw_status(port: u16, path: &str, token: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

async fn r_json(r: reqwest::Response) -> Value {
    r.json().await.unwrap()
}

#[tokio::test]
async fn a_disconnected_integration_stops_working_through_old_tokens() {
    let seen = Arc::new(Mutex::new(0));
    let counter = seen.clone();
    let fake = Fake::start(move |_| {
        *counter.lock().unwrap() += 1;
        Reply::json(200, json!({"ok": true}))
    })
    .await;
    let t = app_with(&[("WORKBENCH_TODOIST_BASE_URL", fake.url.clone())]);
    t.ok("connection_delete_credentials", json!({"integration": "todoist", "revoke_remote": false})).await.to_string();
    let out = t.call("curl_session", json!({"integrations": ["todoist"]})).await;
    assert!(out.is_error);
    assert_eq!(out.body["error"], "todoist: not connected (call connect first)");
    assert_eq!(*seen.lock().unwrap(), 0);
}
