//! Connect end to end against fakes on 127.0.0.1: connect -> page -> form POST or OAuth redirect +
//! callback -> identity check -> stored -> wait_for_connection -> execute with the credential ->
//! token refresh -> disconnect; and every refusal (Host, Origin, replayed form token, replayed or
//! unknown state, expired link, rejected credential).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use plugins::api::{
    AuthKind, AuthSpec, Effect, Field, Host, HttpRequest, Identity, Inject, Integration, OAuth, ToolSpec,
};
use serde_json::{Value, json};
use workbench::app::App;
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::MemoryStore;

use crate::support::TestApp;
use crate::support::fake::{Fake, Reply};

fn no_args() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

static ACME_TOOLS: [ToolSpec; 1] = [ToolSpec {
    name: "acme_get_profile",
    description: "Read the Acme profile of the connected account (test integration).",
    keywords: &[],
    effect: Effect::Read,
    files: plugins::api::Files::None,
    results: Some(plugins::flow::Results::Private),
    audience: None,
    schema: no_args,
    run: |up, _| Box::pin(async move { up.send(HttpRequest::get("/me")).await?.json() }),
}];

static ACME: Integration = Integration {
    name: "acme",
    display_name: "Acme",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field { name: "site", label: "Site", secret: false, required: true, help: "your-team.acme.test" },
            Field { name: "token", label: "API token", secret: true, required: true, help: "" },
        ],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || HttpRequest::get("/me"),
            label: |b| b["login"].as_str().map(str::to_string),
        }),
        oauth: None,
    },
    keywords: &[],
    hosts: &[Host { key: "base_url", default_url: "https://{site}" }],
    curl_proxy: plugins::api::CurlProxy::Full,
    rate_limit: plugins::api::RateLimit::NONE,
    side: None,
    tools: &ACME_TOOLS,
    error_message: |b| b["message"].as_str().map(str::to_string),
};

static OIDC_TOOLS: [ToolSpec; 1] = [ToolSpec {
    name: "oidc_get_profile",
    description: "Read the profile of the OAuth-connected account (test integration).",
    keywords: &[],
    effect: Effect::Read,
    files: plugins::api::Files::None,
    results: Some(plugins::flow::Results::Private),
    audience: None,
    schema: no_args,
    run: |up, _| Box::pin(async move { up.send(HttpRequest::get("/me")).await?.json() }),
}];

static OIDC: Integration = Integration {
    name: "oidc",
    display_name: "OIDC Test",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || HttpRequest::get("/me"),
            label: |b| b["email"].as_str().map(str::to_string),
        }),
        oauth: Some(OAuth {
            authorize_url: "https://auth.invalid/authorize",
            token_url: "https://auth.invalid/token",
            revoke_url: Some("https://auth.invalid/revoke"),
            scopes: &["profile", "email"],
            scope_param: "scope",
            extra_params: &[("access_type", "offline")],
            client: "google",
        }),
    },
    keywords: &[],
    hosts: &[Host { key: "base_url", default_url: "https://api.invalid" }],
    curl_proxy: plugins::api::CurlProxy::Full,
    rate_limit: plugins::api::RateLimit::NONE,
    side: None,
    tools: &OIDC_TOOLS,
    error_message: |b| b["error"]["message"].as_str().map(str::to_string),
};

fn test_app(env: &[(&str, String)]) -> TestApp {
    let home = tempfile::tempdir().unwrap();
    let mut vars: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".into(), "1".into());
    let app = App::with_parts(
        Settings::load(&vars).unwrap(),
        Registry::new(&[&ACME, &OIDC], workbench::builtins::BUILTINS),
        Arc::new(MemoryStore::default()),
    );
    TestApp { app, home }
}

/// A client that sends what a browser sends with a form submission from the page itself
/// (`Sec-Fetch-Site: same-origin`, `Sec-Fetch-Mode: navigate`): credential POSTs need them.
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut browser = reqwest::header::HeaderMap::new();
    browser.insert("sec-fetch-site", reqwest::header::HeaderValue::from_static("same-origin"));
    browser.insert("sec-fetch-mode", reqwest::header::HeaderValue::from_static("navigate"));
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).default_headers(browser).build().unwrap()
}

fn form_token(html: &str) -> String {
    let at = html.find("name=\"form_token\" value=\"").expect("a form token on the page") + 25;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

fn origin_of(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    format!("http://{}", &rest[..rest.find('/').unwrap()])
}

const GOOD: &str = "acme-good-token-31337";

async fn acme_fake() -> Fake {
    Fake::start(|r| match (r.path.as_str(), r.header("authorization")) {
        ("/me", Some(a)) if a == format!("Bearer {GOOD}") => {
            Reply::json(200, json!({"login": "ada", "plan": "pro", "echo": a}))
        }
        ("/me", _) => Reply::json(401, json!({"message": "Bad credentials"})),
        _ => Reply::json(404, json!({"message": "Not Found"})),
    })
    .await
}

#[tokio::test]
async fn api_key_connect_flow_end_to_end_with_every_refusal() {
    let fake = acme_fake().await;
    let t = test_app(&[("WORKBENCH_ACME_BASE_URL", fake.url.clone())]);
    let http = client();

    let not_yet = t.err("acme_get_profile", json!({})).await;
    assert_eq!(not_yet["code"], "NOT_CONNECTED");

    let out = t.call("connect", json!({"integration": "acme"})).await;
    assert!(!out.is_error, "{}", out.body);
    let id = out.body["connectionId"].as_str().unwrap().to_string();
    let url = out.body["url"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 32, "128-bit connection ids");
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with(&format!("/connect/{id}")));
    assert!(fake.requests().is_empty(), "minting the link contacts no provider");
    let origin = origin_of(&url);

    let page = http.get(&url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert_eq!(page.headers()["referrer-policy"], "same-origin");
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
    let html = page.text().await.unwrap();
    assert!(html.contains("name=\"site\"") && html.contains("type=\"password\""));
    let token = form_token(&html);

    // DNS rebinding: a foreign Host is refused even on GET.
    let rebound = http.get(&url).header("host", "evil.example:80").send().await.unwrap();
    assert_eq!(rebound.status(), 421);
    // A POST from another origin, or with no origin, is refused and spends nothing.
    let body = format!("form_token={token}&site=acme.test&token={GOOD}");
    for bad_origin in [Some("http://evil.example"), None] {
        let mut req = http.post(&url).header("content-type", "application/x-www-form-urlencoded").body(body.clone());
        if let Some(o) = bad_origin {
            req = req.header("origin", o);
        }
        assert_eq!(req.send().await.unwrap().status(), 403);
    }
    // A wrong token: checked with the provider, refused, nothing stored.
    let wrong = http
        .post(&url)
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&site=acme.test&token=nope-nope-nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 400);
    let wrong_html = wrong.text().await.unwrap();
    assert!(wrong_html.contains("Bad credentials") && wrong_html.contains("Nothing was stored"), "{wrong_html}");
    assert!(!t.app.is_connected("acme"));
    // The form token was spent by that attempt: replaying it is refused.
    let replay = http
        .post(&url)
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 403);
    // The error page carries a fresh token; the good credential goes through.
    let good = http
        .post(&url)
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={}&site=acme.test&token={GOOD}", form_token(&wrong_html)))
        .send()
        .await
        .unwrap();
    assert_eq!(good.status(), 200);
    assert!(good.text().await.unwrap().contains("connected to Acme as ada"));

    let waited = t.call("wait_for_connection", json!({"connectionId": id, "timeoutSec": 5})).await;
    assert_eq!(waited.body, json!({"status": "CONNECTED"}));
    let list = t.call("list_integrations", json!({})).await;
    assert_eq!(
        list.body["integrations"][0],
        json!({"name": "acme", "version": "1.0.0", "connected": true,
               "accounts": [{"name": "default", "identity": "ada", "default": true}]})
    );

    let profile = t.ok("acme_get_profile", json!({})).await;
    assert_eq!(fake.last().header("authorization"), Some(format!("Bearer {GOOD}").as_str()));
    assert_eq!(profile["login"], "ada");
    assert_eq!(profile["echo"], "Bearer [redacted]");

    // Metadata holds the site, never the token; the data directory holds no secret at all.
    let meta = t.app.storage.connection_meta("acme").unwrap().unwrap();
    assert_eq!(meta.public_fields["site"], "acme.test");
    assert_eq!(meta.account_label.as_deref(), Some("ada"));
    assert_eq!(meta.store, "memory");
    assert_no_secret_in(t.home.path(), GOOD);

    let gone = t.ok("connection_delete_credentials", json!({"integration": "acme"})).await;
    assert_eq!(gone["deleted"], true);
    assert!(!t.app.is_connected("acme"));
    assert_eq!(t.err("acme_get_profile", json!({})).await["code"], "NOT_CONNECTED");
}

fn assert_no_secret_in(dir: &std::path::Path, secret: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(!String::from_utf8_lossy(&bytes).contains(secret), "{} contains the secret", path.display());
        }
    }
}

#[tokio::test]
async fn expired_and_unknown_links_are_refused() {
    let t = test_app(&[]);
    let http = client();
    let out = t.call("connect", json!({"integration": "acme"})).await;
    let id = out.body["connectionId"].as_str().unwrap().to_string();
    let url = out.body["url"].as_str().unwrap().to_string();
    workbench::connect::flows(&t.app).pending().get_mut(&id).unwrap().expires = std::time::Instant::now();
    assert_eq!(http.get(&url).send().await.unwrap().status(), 410);
    assert_eq!(t.call("wait_for_connection", json!({"connectionId": id})).await.body, json!({"status": "EXPIRED"}));
    let unknown = url.replace(&id, "00000000000000000000000000000000");
    assert_eq!(http.get(&unknown).send().await.unwrap().status(), 404);
}

/// A fake authorization server + API: checks PKCE (S256) and the client, issues rotating tokens.
struct AuthServer {
    fake: Fake,
    refreshes: Arc<AtomicUsize>,
    valid: Arc<Mutex<String>>,
}

async fn auth_server() -> AuthServer {
    let challenge: Arc<Mutex<Option<(String, String)>>> = Arc::new(Mutex::new(None));
    let refreshes = Arc::new(AtomicUsize::new(0));
    let valid = Arc::new(Mutex::new(String::from("at-1-xxxxxxxxxxxx")));
    let (c, rf, v) = (challenge.clone(), refreshes.clone(), valid.clone());
    let fake = Fake::start(move |r| match r.path.as_str() {
        "/authorize" => {
            if r.q("response_type") != Some("code") || r.q("client_id") != Some("client-123") || r.q("code_challenge_method") != Some("S256") {
                return Reply::json(400, json!({"error": "invalid_request"}));
            }
            assert_eq!(r.q("scope"), Some("profile email"));
            assert_eq!(r.q("access_type"), Some("offline"));
            *c.lock().unwrap() = Some((r.q("code_challenge").unwrap().to_string(), r.q("redirect_uri").unwrap().to_string()));
            let location = format!("{}?code=code-abc&state={}", r.q("redirect_uri").unwrap(), r.q("state").unwrap());
            Reply { status: 302, headers: vec![("location".into(), location)], body: String::new() }
        }
        "/token" => {
            let form: HashMap<String, String> = url_form(&r.body);
            match form.get("grant_type").map(String::as_str) {
                Some("authorization_code") => {
                    let (chal, redirect) = c.lock().unwrap().clone().unwrap();
                    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
                    let ok = form.get("code").map(String::as_str) == Some("code-abc")
                        && form.get("client_id").map(String::as_str) == Some("client-123")
                        && form.get("redirect_uri") == Some(&redirect)
                        && workbench::auth::oauth::challenge(&verifier) == chal;
                    if ok {
                        Reply::json(200, json!({"access_token": "at-1-xxxxxxxxxxxx", "refresh_token": "rt-1-yyyyyyyyyyyy", "expires_in": 3600, "scope": "profile email", "token_type": "Bearer"}))
                    } else {
                        Reply::json(400, json!({"error": "invalid_grant", "error_description": "PKCE verification failed"}))
                    }
                }
                Some("refresh_token") if form.get("refresh_token").map(String::as_str) == Some("rt-1-yyyyyyyyyyyy") => {
                    let n = rf.fetch_add(1, Ordering::SeqCst) + 2;
                    let token = format!("at-{n}-xxxxxxxxxxxx");
                    *v.lock().unwrap() = token.clone();
                    Reply::json(200, json!({"access_token": token, "expires_in": 3600}))
                }
                _ => Reply::json(400, json!({"error": "invalid_grant"})),
            }
        }
        "/me" => {
            let want = format!("Bearer {}", v.lock().unwrap());
            if r.header("authorization") == Some(want.as_str()) {
                Reply::json(200, json!({"email": "ada@example.com"}))
            } else {
                Reply::json(401, json!({"error": {"code": 401, "message": "Invalid Credentials", "status": "UNAUTHENTICATED"}}))
            }
        }
        _ => Reply::json(404, json!({"error": {"code": 404, "message": "not found"}})),
    })
    .await;
    AuthServer { fake, refreshes, valid }
}

fn url_form(body: &[u8]) -> HashMap<String, String> {
    workbench::connect::form::parse(body).unwrap_or_default().into_iter().collect()
}

fn oauth_env(fake: &Fake) -> Vec<(&'static str, String)> {
    vec![
        ("WORKBENCH_GOOGLE_CLIENT_ID", "client-123".to_string()),
        ("WORKBENCH_OIDC_AUTHORIZE_URL", format!("{}/authorize", fake.url)),
        ("WORKBENCH_OIDC_TOKEN_URL", format!("{}/token", fake.url)),
        ("WORKBENCH_OIDC_BASE_URL", fake.url.clone()),
    ]
}

async fn connect_oauth(t: &TestApp, http: &reqwest::Client) -> (String, String) {
    let out = t.call("connect", json!({"integration": "oidc"})).await;
    let id = out.body["connectionId"].as_str().unwrap().to_string();
    let page = http.get(out.body["url"].as_str().unwrap()).send().await.unwrap();
    assert!(page.status().is_redirection(), "{}", page.status());
    let authorize = page.headers()["location"].to_str().unwrap().to_string();
    // The "browser" visits the provider, which redirects back to the loopback callback.
    let consent = http.get(&authorize).send().await.unwrap();
    let callback = consent.headers()["location"].to_str().unwrap().to_string();
    assert!(callback.starts_with("http://127.0.0.1:") && callback.contains("/oauth/callback?code=code-abc&state="));
    (id, callback)
}

#[tokio::test]
async fn oauth_pkce_flow_refreshes_once_and_refuses_replayed_state() {
    let server = auth_server().await;
    let t = test_app(&oauth_env(&server.fake));
    let http = client();
    let (id, callback) = connect_oauth(&t, &http).await;
    let done = http.get(&callback).send().await.unwrap();
    assert_eq!(done.status(), 200);
    assert!(done.text().await.unwrap().contains("as ada@example.com"));
    assert_eq!(t.call("wait_for_connection", json!({"connectionId": id})).await.body, json!({"status": "CONNECTED"}));
    let meta = t.app.storage.connection_meta("oidc").unwrap().unwrap();
    assert_eq!(meta.scopes.as_deref(), Some("profile email"));
    assert!(meta.expires_at.unwrap() > chrono::Utc::now().timestamp() + 3000);
    assert_eq!(
        t.call("whoami", json!({})).await.body["email"],
        "ada@example.com",
        "whoami learns the email from the account"
    );

    // The state works once.
    let replay = http.get(&callback).send().await.unwrap();
    assert_eq!(replay.status(), 400);
    let forged = callback.split("state=").next().unwrap().to_string() + "state=forged";
    assert_eq!(http.get(&forged).send().await.unwrap().status(), 400);

    assert_eq!(t.ok("oidc_get_profile", json!({})).await["email"], "ada@example.com");

    // The provider revokes the access token: the next calls refresh it once, together.
    *server.valid.lock().unwrap() = "at-rotated-elsewhere".into();
    let _ = server.refreshes.load(Ordering::SeqCst);
    let executions: Vec<Value> = (0..5).map(|_| json!({"tool": "oidc_get_profile"})).collect();
    let out = t.call("execute_tools", json!({ "executions": executions })).await;
    for r in out.body["results"].as_array().unwrap() {
        assert_eq!(r["result"]["email"], "ada@example.com", "{r}");
    }
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 1, "concurrent callers share one refresh");
    let stored = t.app.connection(&OIDC).unwrap().unwrap();
    assert_eq!(stored.fields["token"].expose(), "at-2-xxxxxxxxxxxx");
    assert_eq!(
        stored.fields["refresh_token"].expose(),
        "rt-1-yyyyyyyyyyyy",
        "the refresh token is kept when not rotated"
    );

    // A token about to expire is refreshed before use.
    let mut meta = t.app.storage.connection_meta("oidc").unwrap().unwrap();
    meta.expires_at = Some(chrono::Utc::now().timestamp() + 5);
    t.app.storage.put_connection_meta(&meta).unwrap();
    *server.valid.lock().unwrap() = "at-2-xxxxxxxxxxxx".into();
    assert_eq!(t.ok("oidc_get_profile", json!({})).await["email"], "ada@example.com");
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 2);
    assert_eq!(server.fake.last().header("authorization"), Some("Bearer at-3-xxxxxxxxxxxx"));
    assert_no_secret_in(t.home.path(), "rt-1-yyyyyyyyyyyy");
}

#[tokio::test]
async fn oauth_without_a_client_explains_what_to_do() {
    let t = test_app(&[]);
    let out = t.call("connect", json!({"integration": "oidc"})).await;
    let page = client().get(out.body["url"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("WORKBENCH_GOOGLE_CLIENT_ID"), "{html}");
}

/// Issue 16 item 4: without a configured OAuth client the connect page walks the user through
/// creating one (redirect URI, scopes, app type) and takes its ID and secret; the secret goes to
/// the secret store only (no file in the data dir holds it), and the sign-in continues with it.
/// Attack: a program other than the user's browser posts its own client (no fetch metadata, or no
/// form token): refused, nothing stored.
#[tokio::test]
async fn the_connect_page_guides_the_user_through_their_own_oauth_client() {
    let server = auth_server().await;
    let env: Vec<(&str, String)> =
        oauth_env(&server.fake).into_iter().filter(|(k, _)| *k != "WORKBENCH_GOOGLE_CLIENT_ID").collect();
    let t = test_app(&env);
    let http = client();
    let out = t.call("connect", json!({"integration": "oidc"})).await;
    let url = out.body["url"].as_str().unwrap().to_string();
    let origin = url[..url.find("/connect/").unwrap()].to_string();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains(&format!("{origin}/oauth/callback")), "the exact redirect URI: {html}");
    assert!(html.contains("<code>profile</code>") && html.contains("<code>email</code>"), "the scopes: {html}");
    assert!(html.contains("Desktop app"), "the app type: {html}");
    assert!(html.contains("name=\"oauth_client_id\""));
    let token = html.find("name=\"form_token\" value=\"").map(|at| html[at + 25..at + 25 + 64].to_string()).unwrap();
    let form =
        |token: &str| format!("form_token={token}&oauth_client_id=client-123&oauth_client_secret=shh-client-secret-42");
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let refused = plain
        .post(&url)
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&token))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    let no_token = http.post(&url).header("origin", &origin).body(form("0".repeat(64).as_str())).send().await.unwrap();
    assert_eq!(no_token.status(), 403);
    assert!(workbench::auth::oauth::client_for(&t.app, OIDC.auth.oauth.as_ref().unwrap()).is_none());

    let saved = http
        .post(&url)
        .header("origin", &origin)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&token))
        .send()
        .await
        .unwrap();
    assert!(saved.status().is_redirection(), "{}", saved.status());
    let authorize = saved.headers()["location"].to_str().unwrap().to_string();
    assert!(authorize.contains("client_id=client-123"), "{authorize}");
    let consent = http.get(&authorize).send().await.unwrap();
    let callback = consent.headers()["location"].to_str().unwrap().to_string();
    let done = http.get(&callback).send().await.unwrap();
    assert_eq!(done.status(), 200, "{}", done.text().await.unwrap());
    assert_eq!(t.ok("oidc_get_profile", json!({})).await["email"], "ada@example.com");
    let exchange = server.fake.requests().into_iter().find(|r| r.path == "/token").unwrap();
    assert_eq!(url_form(&exchange.body).get("client_secret").map(String::as_str), Some("shh-client-secret-42"));
    assert_no_secret_in(t.home.path(), "shh-client-secret-42");
    assert!(!t.call("list_integrations", json!({})).await.body.to_string().contains("shh-client-secret-42"));
}

#[tokio::test]
async fn environment_connections_need_no_page_and_stay_read_only() {
    let fake = acme_fake().await;
    let t = test_app(&[
        ("WORKBENCH_ACME_BASE_URL", fake.url.clone()),
        ("WORKBENCH_ACME_SITE", "acme.test".into()),
        ("WORKBENCH_ACME_TOKEN", GOOD.into()),
    ]);
    let out = t.call("connect", json!({"integration": "acme"})).await;
    assert_eq!(out.body["status"], "CONNECTED");
    assert_eq!(out.body["source"], "environment");
    assert_eq!(t.ok("acme_get_profile", json!({})).await["login"], "ada");
    let e = t.err("connection_delete_credentials", json!({"integration": "acme"})).await;
    assert!(e["message"].as_str().unwrap().contains("environment variables"));
}

#[tokio::test]
async fn a_locked_file_store_is_unlocked_on_the_local_page_and_the_server_keeps_working() {
    let home = tempfile::tempdir().unwrap();
    let mut vars = HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.path().display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".to_string(), "1".to_string());
    let store = workbench::secrets::file::FileStore::new(
        home.path().join("secrets.enc"),
        workbench::secrets::file::Passphrase::Missing,
    );
    let app = App::with_parts(
        Settings::load(&vars).unwrap(),
        Registry::new(&[&ACME], workbench::builtins::BUILTINS),
        Arc::new(store),
    );
    let t = TestApp { app, home };
    let out = t.call("connect", json!({"integration": "acme"})).await;
    assert!(out.is_error);
    assert!(out.body["error"].as_str().unwrap().contains("locked"), "{}", out.body);
    assert_eq!(t.ok("time_get_current", json!({"timezone": "UTC"})).await["now"]["timezone"], "UTC");
    // The user unlocks it on the local page; then connect works.
    let url = out.body["unlock_url"].as_str().unwrap().to_string();
    let http = client();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    let token = form_token(&html);
    let unlocked = http
        .post(&url)
        .header("origin", origin_of(&url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&passphrase=my+own+passphrase"))
        .send()
        .await
        .unwrap();
    assert_eq!(unlocked.status(), 200);
    let again = t.call("connect", json!({"integration": "acme"})).await;
    assert!(!again.is_error, "{}", again.body);
    assert!(again.body["url"].as_str().unwrap().contains("/connect/"));
}

#[tokio::test]
async fn vault_secrets_typed_on_the_local_page_are_usable_but_never_readable() {
    let fake = acme_fake().await;
    let t = test_app(&[
        ("WORKBENCH_ACME_BASE_URL", fake.url.clone()),
        ("WORKBENCH_ACME_SITE", "x".into()),
        ("WORKBENCH_ACME_TOKEN", GOOD.into()),
    ]);
    let http = client();
    let started = t
        .ok(
            "vault_set_secret",
            json!({"name": "deploy_key", "description": "Deploy key", "allowed_hosts": ["127.0.0.1"]}),
        )
        .await;
    assert_eq!(started["stored"], false);
    let url = started["url"].as_str().unwrap().to_string();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("{{vault:deploy_key}}"));
    let token = form_token(&html);
    let posted = http
        .post(&url)
        .header("origin", origin_of(&url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&value=typed-secret-4242"))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 200);
    let replay = http
        .post(&url)
        .header("origin", origin_of(&url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&value=other"))
        .send()
        .await
        .unwrap();
    assert!(replay.text().await.unwrap().contains("already stored"));
    let kept = t.app.vault.resolve_for_hosts("deploy_key", &["https://127.0.0.1:443".to_string()]).await.unwrap();
    assert_eq!(kept.expose(), "typed-secret-4242", "a spent form changes nothing");

    let listed = t.ok("vault_list_secrets", json!({})).await;
    assert_eq!(listed["secrets"][0]["name"], "deploy_key");
    assert_eq!(listed["secrets"][0]["allowed_hosts"], json!(["127.0.0.1"]));
    assert!(!listed.to_string().contains("typed-secret-4242"));

    // Given inline, the value is stored but never echoed or audited.
    let inline = t
        .ok(
            "vault_set_secret",
            json!({"name": "inline_key", "value": "inline-value-777", "allowed_hosts": ["api.example.com"]}),
        )
        .await;
    assert_eq!(inline["stored"], true);
    assert!(!inline.to_string().contains("inline-value-777"));
    let audit = t.ok("audit_search_log", json!({"tool": "vault_set_secret"})).await;
    assert!(!audit.to_string().contains("inline-value-777"), "{audit}");
    // vault_* tools take names literally: a ref in their arguments is not resolved.
    let literal = t.err("vault_delete_secret", json!({"name": "{{vault:deploy_key}}"})).await;
    assert_eq!(literal["code"], "INVALID_ARGUMENTS");
    assert!(!literal.to_string().contains("typed-secret-4242"));
    assert_eq!(t.ok("vault_delete_secret", json!({"name": "inline_key"})).await["deleted"], true);
    assert_eq!(t.err("vault_delete_secret", json!({"name": "inline_key"})).await["status"], 404);
    assert_no_secret_in(t.home.path(), "typed-secret-4242");
}

/// The OIDC fake connected through the page, and a curl proxy session for it: (fake, app, browser
/// client, proxy token, proxy base URL).
async fn connected_with_a_proxy_session() -> (AuthServer, TestApp, reqwest::Client, String, String) {
    let server = auth_server().await;
    let t = test_app(&oauth_env(&server.fake));
    let http = client();
    let (_, callback) = connect_oauth(&t, &http).await;
    assert_eq!(http.get(&callback).send().await.unwrap().status(), 200);
    let minted = t.call("curl_session", json!({"integrations": ["oidc"], "expiresInSeconds": 120})).await;
    assert!(!minted.is_error, "{}", minted.body);
    let token = minted.body["token"].as_str().unwrap().to_string();
    let base = minted.body["proxyBaseUrl"].as_str().unwrap().to_string();
    (server, t, http, token, base)
}

#[tokio::test]
async fn the_curl_proxy_refreshes_an_oauth_token_like_the_tools_do() {
    let (server, t, http, token, base) = connected_with_a_proxy_session().await;
    // The provider rotated the access token: the proxy's first try gets 401, refreshes, retries.
    *server.valid.lock().unwrap() = "at-rotated-elsewhere".into();
    let r =
        http.get(format!("{base}/oidc/me")).header("authorization", format!("Bearer {token}")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["email"], "ada@example.com");
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 1);
    assert_eq!(server.fake.last().header("authorization"), Some("Bearer at-2-xxxxxxxxxxxx"));
    // The refreshed token was stored: the tools use it without another refresh.
    assert_eq!(t.ok("oidc_get_profile", json!({})).await["email"], "ada@example.com");
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 1);
}

/// Plugin tools and the curl proxy share one credentialed path (`send::Credentialed`): a token
/// that stops working under both at once is refreshed once (one refresh lock per account), and
/// both requests then succeed with the fresh token.
#[tokio::test]
async fn a_401_on_a_tool_and_on_the_proxy_at_once_refreshes_once() {
    let (server, t, http, token, base) = connected_with_a_proxy_session().await;
    *server.valid.lock().unwrap() = "at-rotated-elsewhere".into();
    let proxied = http.get(format!("{base}/oidc/me")).header("authorization", format!("Bearer {token}")).send();
    let (proxied, tool) = tokio::join!(proxied, t.ok("oidc_get_profile", json!({})));
    let proxied = proxied.unwrap();
    assert_eq!(proxied.status(), 200);
    assert_eq!(proxied.json::<Value>().await.unwrap()["email"], "ada@example.com");
    assert_eq!(tool["email"], "ada@example.com");
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 1, "one refresh for both");
    // Rotated again: the tool's 401 refreshes once more, and the proxy uses what it stored.
    *server.valid.lock().unwrap() = "at-rotated-again".into();
    assert_eq!(t.ok("oidc_get_profile", json!({})).await["email"], "ada@example.com");
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 2);
    let again =
        http.get(format!("{base}/oidc/me")).header("authorization", format!("Bearer {token}")).send().await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(server.refreshes.load(Ordering::SeqCst), 2);
    assert_eq!(server.fake.last().header("authorization"), Some("Bearer at-3-xxxxxxxxxxxx"));
}

/// A consent flow above connect (an upstream server's OAuth) answers the shared loopback callback
/// for the states it issued, through the hook the composition root registers; every other state
/// is connect's (unknown here), and the listener's Host check still comes first.
#[tokio::test]
async fn oauth_callback_hooks_answer_only_their_own_state() {
    let t = test_app(&[]);
    workbench::connect::add_callback_hook(&t.app, |_, state, query| {
        Box::pin(async move {
            (state == "hooked-state")
                .then(|| (200, format!("hooked, code {}", query.get("code").cloned().unwrap_or_default())))
        })
    });
    let listener = workbench::connect::ensure_listener(&t.app).await.unwrap();
    let http = client();
    let r = http.get(format!("{}/oauth/callback?state=hooked-state&code=c-1", listener.base())).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("hooked, code c-1"));
    let other =
        http.get(format!("{}/oauth/callback?state=someone-else&code=c-1", listener.base())).send().await.unwrap();
    assert_eq!(other.status(), 400);
    assert!(!other.text().await.unwrap().contains("hooked"));
    let rebound = http
        .get(format!("{}/oauth/callback?state=hooked-state&code=c-1", listener.base()))
        .header("host", "attacker.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 421, "the Host check runs before any hook");
}
