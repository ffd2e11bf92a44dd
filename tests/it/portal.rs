//! The portal over the loopback listener, in process and through the real binary: every refusal
//! (closed until enabled, wrong or missing URL token, foreign Host, POST without Origin or from
//! another one, missing or wrong CSRF token, GET on an action), the headers (no-store, a nonce CSP,
//! frame denial), escaping, connect and disconnect, the audit filters and paging, the vault list
//! without values, the secret store and its lock. The real-browser test is tests/portal/.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use workbench::app::App;
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::Secret;
use workbench::secrets::file::{FileStore, Passphrase};
use workbench::storage::AuditEntry;

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app_with};

const GOOD: &str = "todoist-good-token-0123456789";

/// A client that sends what a browser sends with a form submission from the page itself
/// (`Sec-Fetch-Site: same-origin`, `Sec-Fetch-Mode: navigate`): credential POSTs need them.
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut browser = reqwest::header::HeaderMap::new();
    browser.insert("sec-fetch-site", reqwest::header::HeaderValue::from_static("same-origin"));
    browser.insert("sec-fetch-mode", reqwest::header::HeaderValue::from_static("navigate"));
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).default_headers(browser).build().unwrap()
}

/// Todoist's identity call, answered only with the right token; the name carries HTML.
async fn todoist_fake() -> Fake {
    Fake::start(|r| match (r.path.as_str(), r.header("authorization")) {
        ("/user", Some(a)) if a == format!("Bearer {GOOD}") => {
            Reply::json(200, json!({"full_name": "<b>Ada</b>", "email": "ada@example.com"}))
        }
        ("/user", _) => Reply::json(401, json!({"error": "Invalid token"})),
        _ => Reply::json(404, json!({"error": "not found"})),
    })
    .await
}

/// The portal's URL, its origin, and the CSRF token its pages carry.
struct Portal {
    url: String,
    origin: String,
}

async fn open(t: &TestApp) -> Portal {
    let url = workbench::portal::start(&t.app).await.unwrap();
    let rest = url.trim_start_matches("http://");
    let origin = format!("http://{}", &rest[..rest.find('/').unwrap()]);
    Portal { url, origin }
}

fn csrf(html: &str) -> String {
    let at = html.find("name=\"csrf\" value=\"").expect("a CSRF token on the page") + 19;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

async fn get(url: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let r = client().get(url).send().await.unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.unwrap())
}

async fn post(url: &str, origin: Option<&str>, body: &str) -> reqwest::Response {
    let mut req = client().post(url).header("content-type", "application/x-www-form-urlencoded").body(body.to_string());
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    req.send().await.unwrap()
}

fn location(r: &reqwest::Response) -> String {
    r.headers()["location"].to_str().unwrap().to_string()
}

#[tokio::test]
async fn portal_is_closed_until_started_and_refuses_wrong_tokens_and_hosts() {
    let t = app_with(&[]);
    // The MCP server's listener (started for a connect page) never answers portal URLs.
    let listener = workbench::connect::ensure_listener(&t.app).await.unwrap();
    let (status, _, _) = get(&format!("{}/portal/{}/", listener.base(), "0".repeat(64))).await;
    assert_eq!(status, 404);

    let p = open(&t).await;
    assert!(p.url.starts_with(&listener.base()), "the same listener serves it");
    let token = p.url.trim_end_matches('/').rsplit('/').next().unwrap().to_string();
    assert_eq!(token.len(), 64, "256-bit URL token");
    assert_eq!(workbench::portal::start(&t.app).await.unwrap(), p.url, "one token per launch");

    let (status, headers, html) = get(&p.url).await;
    assert_eq!(status, 200);
    assert_eq!(headers["cache-control"], "no-store");
    assert_eq!(headers["referrer-policy"], "same-origin", "no-referrer would make browsers send Origin: null");
    assert_eq!(headers["x-frame-options"], "DENY");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'none'; style-src 'nonce-"), "{csp}");
    assert!(csp.contains("script-src 'nonce-") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap();
    assert!(html.contains(&format!("<script nonce=\"{nonce}\">")), "the page's script carries the header's nonce");
    assert!(!html.contains(" style=\"") && !html.contains(" onclick="), "no inline attributes the CSP would block");
    assert!(!html.contains(&token), "pages link relatively and never print the token");
    let (_, again, _) = get(&p.url).await;
    assert_ne!(again["content-security-policy"], headers["content-security-policy"], "a fresh nonce per page");

    // Wrong, shortened, missing or empty tokens: the listener's plain 404 on every page.
    let base = listener.base();
    let wrong = format!("{}{}", &token[..63], if token.ends_with('0') { '1' } else { '0' });
    for url in [
        format!("{base}/portal/{wrong}/"),
        format!("{base}/portal/{wrong}/audit"),
        format!("{base}/portal/{}/", &token[..32]),
        format!("{base}/portal/"),
        format!("{base}/portal"),
        format!("{base}/portal//audit"),
        format!("{base}/portal/{token}x/secrets"),
    ] {
        let (status, _, body) = get(&url).await;
        assert_eq!(status, 404, "{url}");
        assert!(body.contains("There is nothing at this address"), "{url}");
    }
    // Without the slash it redirects to the page (only with the right token).
    let bare = client().get(p.url.trim_end_matches('/')).send().await.unwrap();
    assert_eq!(bare.status(), 308);
    assert_eq!(location(&bare), format!("/portal/{token}/"));

    // DNS rebinding: a foreign Host is refused even with the right token; localhost is accepted.
    let port = listener.port;
    for (host, want) in
        [("evil.example", 421), (&*format!("evil.example:{port}"), 421), (&*format!("localhost:{port}"), 200)]
    {
        let r = client().get(&p.url).header("host", host).send().await.unwrap();
        assert_eq!(r.status().as_u16(), want, "{host}");
    }
    for page in ["audit", "secrets", "apps"] {
        let (status, headers, html) = get(&format!("{}{page}", p.url)).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(headers["cache-control"], "no-store");
        assert!(html.contains("aria-current=\"page\""), "{page}");
    }
}

#[tokio::test]
async fn actions_need_post_origin_and_csrf_then_connect_and_disconnect() {
    let fake = todoist_fake().await;
    let t = app_with(&[("WORKBENCH_TODOIST_BASE_URL", fake.url.clone())]);
    let p = open(&t).await;
    let (_, _, html) = get(&p.url).await;
    assert!(html.contains("data-integration=\"todoist\" data-state=\"none\""), "Todoist starts not connected");
    let csrf = csrf(&html);
    assert_eq!(csrf.len(), 64);
    assert!(!p.url.contains(&csrf), "the CSRF token is not the URL token");
    let connect = format!("{}connect", p.url);
    let good_body = format!("csrf={csrf}&integration=todoist");

    // Refusals: each leaves no pending connect behind.
    let cases: Vec<(Option<&str>, String, u16)> = vec![
        (None, good_body.clone(), 403),
        (Some("http://evil.example"), good_body.clone(), 403),
        (Some("null"), good_body.clone(), 403),
        (Some(&p.origin), "integration=todoist".into(), 403),
        (Some(&p.origin), format!("csrf={}&integration=todoist", "0".repeat(64)), 403),
        (Some(&p.origin), format!("csrf={}&integration=todoist", &csrf[..63]), 403),
        (Some(&p.origin), "csrf=%ff%fe&integration=todoist".into(), 403),
    ];
    for (origin, body, want) in &cases {
        let r = post(&connect, *origin, body).await;
        assert_eq!(r.status().as_u16(), *want, "origin {origin:?} body {body}");
    }
    let token = p.url.trim_end_matches('/').rsplit('/').next().unwrap();
    let flipped = format!("{}{}", if token.starts_with('a') { 'b' } else { 'a' }, &token[1..]);
    let wrong_token = connect.replace(token, &flipped);
    assert_eq!(
        post(&wrong_token, Some(&p.origin), &good_body).await.status(),
        404,
        "a right CSRF token with a wrong URL"
    );
    assert_eq!(client().get(&connect).send().await.unwrap().status(), 405, "GET never acts");
    assert!(workbench::connect::flows(&t.app).pending().is_empty(), "no refused request started a connect");
    let unknown = post(&connect, Some(&p.origin), &format!("csrf={csrf}&integration=nope<i>")).await;
    assert_eq!(unknown.status(), 400);
    assert!(unknown.text().await.unwrap().contains("Unknown integration: &#39;nope&lt;i&gt;&#39;."));

    // The real thing: the same pending connect and connect page as the meta-tool's.
    let started = post(&connect, Some(&p.origin), &good_body).await;
    assert_eq!(started.status(), 303);
    let to = location(&started);
    let id = to.strip_prefix("/connect/").expect("sent to the connect page").to_string();
    assert_eq!(workbench::connect::flows(&t.app).pending()[&id].integration, "todoist");
    let page_url = format!("{}{to}", p.origin);
    let (status, _, form_html) = get(&page_url).await;
    assert_eq!(status, 200);
    assert!(form_html.contains("Connect Todoist"));
    let at = form_html.find("name=\"form_token\" value=\"").unwrap() + 25;
    let form_token = &form_html[at..at + form_html[at..].find('"').unwrap()];
    let done = post(&page_url, Some(&p.origin), &format!("form_token={form_token}&token={GOOD}")).await;
    assert_eq!(done.status(), 200);
    assert!(t.app.is_connected("todoist"));

    // Connected, with the account label escaped.
    let (_, _, html) = get(&p.url).await;
    assert!(html.contains("data-integration=\"todoist\" data-state=\"stored\""));
    assert!(html.contains("&lt;b&gt;Ada&lt;/b&gt; &lt;ada@example.com&gt;"), "the account, escaped");
    assert!(!html.contains("<b>Ada</b>"));
    assert!(!html.contains(GOOD));

    // Disconnect: refused without the CSRF token, then done through the engine (and audited).
    let disconnect = format!("{}disconnect", p.url);
    assert_eq!(post(&disconnect, Some(&p.origin), "integration=todoist").await.status(), 403);
    assert_eq!(post(&disconnect, None, &good_body).await.status(), 403);
    assert!(t.app.is_connected("todoist"));
    let gone = post(&disconnect, Some(&p.origin), &good_body).await;
    assert_eq!(gone.status(), 303);
    assert!(location(&gone).ends_with("/?done=disconnected&integration=todoist"));
    assert!(!t.app.is_connected("todoist"));
    let (_, _, html) = get(&format!("{}{}", p.origin, location(&gone))).await;
    assert!(html.contains("Todoist is disconnected; its stored credential is erased."));
    assert!(html.contains("data-integration=\"todoist\" data-state=\"none\""));
    let (_, _, audit) = get(&format!("{}audit?tool=connection_delete_credentials", p.url)).await;
    assert!(audit.contains("<code>connection_delete_credentials</code>") && audit.contains("1 entry"), "{audit}");
    // A second disconnect finds nothing to erase; a notice never echoes an unknown name.
    let again = post(&disconnect, Some(&p.origin), &good_body).await;
    assert!(location(&again).contains("done=not-connected"));
    let (_, _, html) = get(&format!("{}?done=disconnected&integration=%3Cscript%3E", p.url)).await;
    assert!(!html.contains("is disconnected") && !html.contains("<script>"));
}

#[tokio::test]
async fn environment_and_public_integrations_are_not_connected_here() {
    let t = app_with(&[("WORKBENCH_TODOIST_TOKEN", GOOD.to_string())]);
    let p = open(&t).await;
    let (_, _, html) = get(&p.url).await;
    assert!(html.contains("data-integration=\"todoist\" data-state=\"environment\""));
    assert!(html.contains("WORKBENCH_TODOIST_* variables"));
    assert!(!html.contains(GOOD));
    let csrf = csrf(&html);
    let r = post(&format!("{}connect", p.url), Some(&p.origin), &format!("csrf={csrf}&integration=todoist")).await;
    assert!(location(&r).ends_with("done=environment&integration=todoist"));
    let r = post(&format!("{}connect", p.url), Some(&p.origin), &format!("csrf={csrf}&integration=wikipedia")).await;
    assert!(location(&r).ends_with("done=public&integration=wikipedia"));
    let r = post(&format!("{}disconnect", p.url), Some(&p.origin), &format!("csrf={csrf}&integration=todoist")).await;
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("environment variables; unset them to disconnect"));
    assert!(workbench::connect::flows(&t.app).pending().is_empty());
}

fn entry(tool: &str, integration: &str, args: serde_json::Value, ok: bool, mutating: bool) -> AuditEntry {
    AuditEntry {
        tool: tool.into(),
        integration: integration.into(),
        args: args.to_string(),
        mutating,
        ok,
        error_code: (!ok).then(|| "UPSTREAM_ERROR".to_string()),
        error: (!ok).then(|| "Todoist answered 500: <oops>".to_string()),
        duration_ms: 12,
        account: None,
    }
}

fn ids(html: &str) -> Vec<i64> {
    html.split("<tr data-id=\"").skip(1).map(|s| s[..s.find('"').unwrap()].parse().unwrap()).collect()
}

#[tokio::test]
async fn audit_log_filters_escapes_and_pages() {
    let t = app_with(&[]);
    let s = &t.app.storage;
    for i in 0..120 {
        s.record_audit(entry("todoist_list_tasks", "todoist", json!({"project": format!("p{i}")}), i % 10 != 0, false))
            .await
            .unwrap();
    }
    s.record_audit(entry("github_create_issue", "github", json!({"title": "<script>alert(1)</script>"}), true, true))
        .await
        .unwrap();
    let p = open(&t).await;
    let audit = format!("{}audit", p.url);

    let (status, _, html) = get(&audit).await;
    assert_eq!(status, 200);
    let first = ids(&html);
    assert_eq!(first.len(), 50, "one page");
    assert_eq!(first[0], 121, "newest first");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !html.contains("<script>alert"), "escaped");
    assert!(html.contains("<option value=\"github\">") && html.contains("<option value=\"todoist_list_tasks\">"));
    // Paging with the cursor, to the last page (which has no older link).
    let older = html.split("href=\"audit?before=").nth(1).map(|s| s[..s.find('"').unwrap()].to_string()).unwrap();
    assert_eq!(older, "72");
    let (_, _, page2) = get(&format!("{audit}?before={older}")).await;
    assert_eq!(ids(&page2)[0], 71);
    assert!(page2.contains("← Newest"));
    let (_, _, last) = get(&format!("{audit}?before=22")).await;
    assert_eq!(ids(&last).len(), 21);
    assert!(!last.contains("Older →"));

    // Filters, alone and together; links keep them.
    let (_, _, failed) = get(&format!("{audit}?status=error")).await;
    assert_eq!(ids(&failed).len(), 12);
    assert!(failed.contains("<b>UPSTREAM_ERROR</b> Todoist answered 500: &lt;oops&gt;"));
    assert!(failed.contains("<option value=\"error\" selected>"));
    let (_, _, gh) = get(&format!("{audit}?integration=github")).await;
    assert_eq!(ids(&gh), vec![121]);
    assert!(gh.contains("b-chg"), "a change is marked");
    let (_, _, changes) = get(&format!("{audit}?changes=1")).await;
    assert_eq!(ids(&changes), vec![121]);
    let (_, _, text) = get(&format!("{audit}?text=%22p11%22&integration=todoist&status=ok")).await;
    assert_eq!(ids(&text), vec![12]);
    let (_, _, none) = get(&format!("{audit}?text=p12&status=error")).await;
    assert!(ids(&none).is_empty() && none.contains("No entries match these filters."));
    let (_, _, recent) = get(&format!("{audit}?period=1h&tool=todoist_list_tasks")).await;
    assert_eq!(ids(&recent).len(), 50);
    assert!(
        recent.contains("href=\"audit?tool=todoist_list_tasks&amp;period=1h&amp;before="),
        "paging keeps the filters"
    );

    // Bad filters get a clear 400, never a 500.
    for (q, says) in [
        ("status=maybe", "status must be ok or error, not &#39;maybe&#39;"),
        ("period=1y", "period must be one of 1h, 24h, 7d, 30d"),
        ("before=abc", "before must be an entry number"),
        ("before=-5", "before must be an entry number"),
        ("text=%ff", "unreadable query"),
    ] {
        let (status, _, html) = get(&format!("{audit}?{q}")).await;
        assert_eq!(status, 400, "{q}");
        assert!(html.contains(says), "{q}: {html}");
    }
    let long = "x".repeat(201);
    assert_eq!(get(&format!("{audit}?text={long}")).await.0, 400);
}

#[tokio::test]
async fn secrets_page_lists_names_and_hosts_never_values() {
    let t = app_with(&[]);
    t.app
        .vault
        .set(
            "deploy_key",
            Secret::new("s3cr3t-value-98765".into()),
            Some("CI <deploy> key".into()),
            vec!["api.example.com".into()],
        )
        .await
        .unwrap();
    t.app.vault.set("unused", Secret::new("another-secret-4321".into()), None, vec![]).await.unwrap();
    let p = open(&t).await;
    let (status, _, html) = get(&format!("{}secrets", p.url)).await;
    assert_eq!(status, 200);
    assert!(html.contains("<tr data-secret=\"deploy_key\">"));
    assert!(html.contains("CI &lt;deploy&gt; key") && html.contains("<code>api.example.com</code>"));
    assert!(html.contains("none: cannot be used"));
    assert!(!html.contains("s3cr3t-value-98765") && !html.contains("another-secret-4321"));
    assert!(html.contains("<b>Process memory</b> <span class=\"muted\">(memory)</span>"));
    assert!(html.contains("Secrets: <b>Process memory</b>"));
    let (_, _, apps) = get(&format!("{}apps", p.url)).await;
    assert!(workbench::portal::custom_apps_section(&t.app).is_empty());
    assert!(apps.contains("No custom apps yet."));

    // A custom app defined by the agent shows up with its tools, host and auth type, never a secret.
    t.ok(
        "custom_create_app",
        serde_json::json!({
            "name": "acme", "description": "Acme <billing>", "base_url": "https://api.acme.test/v2",
            "auth": {"type": "bearer", "token": "{{vault:deploy_key}}"},
            "operations": [{"tool_name": "acme_list_invoices", "method": "GET", "path": "/invoices", "description": "List invoices"}]
        }),
    )
    .await;
    let (_, _, apps) = get(&format!("{}apps", p.url)).await;
    assert!(apps.contains("<tr data-app=\"acme\">"), "{apps}");
    assert!(apps.contains("Acme &lt;billing&gt; — https://api.acme.test/v2"), "{apps}");
    assert!(apps.contains("enabled · auth: bearer") && !apps.contains("s3cr3t-value-98765"), "{apps}");
}

#[tokio::test]
async fn a_locked_store_is_shown_and_unlocked_through_its_page() {
    let home = tempfile::tempdir().unwrap();
    let mut vars = HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.path().display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".to_string(), "1".to_string());
    let settings = Settings::load(&vars).unwrap();
    let store = Arc::new(FileStore::new(home.path().join("secrets.enc"), Passphrase::Missing));
    let app = App::with_parts(settings, Registry::standard(), store);
    let t = TestApp { app, home };
    let p = open(&t).await;
    let (_, _, html) = get(&format!("{}secrets", p.url)).await;
    assert!(html.contains("Secrets: <b>Encrypted file</b> (locked)"));
    assert!(html.contains("<span class=\"badge b-err\">Locked</span>") && html.contains("secrets.enc"));
    let csrf = csrf(&html);
    assert_eq!(post(&format!("{}unlock", p.url), Some(&p.origin), "").await.status(), 403);
    let r = post(&format!("{}unlock", p.url), Some(&p.origin), &format!("csrf={csrf}")).await;
    assert_eq!(r.status(), 303);
    let unlock = location(&r);
    assert!(unlock.starts_with("/unlock/"), "{unlock}");
    let (status, _, page) = get(&format!("{}{unlock}", p.origin)).await;
    assert_eq!(status, 200);
    assert!(page.contains("Unlock workbench's secrets"));
    // Connecting while locked leads to the unlock page as well.
    let r = post(&format!("{}connect", p.url), Some(&p.origin), &format!("csrf={csrf}&integration=todoist")).await;
    assert!(location(&r).starts_with("/unlock/"));
    assert!(workbench::connect::flows(&t.app).pending().is_empty());
}

#[tokio::test]
async fn form_action_allows_the_sign_in_page_of_a_configured_oauth_client_only() {
    let t = app_with(&[]);
    let p = open(&t).await;
    let (_, headers, _) = get(&p.url).await;
    assert!(headers["content-security-policy"].to_str().unwrap().contains("form-action 'self';"));
    let t = app_with(&[
        ("WORKBENCH_GOOGLE_CLIENT_ID", "client-123".into()),
        ("WORKBENCH_GMAIL_AUTHORIZE_URL", "http://127.0.0.1:9/o/auth".into()),
    ]);
    let p = open(&t).await;
    let (_, headers, _) = get(&p.url).await;
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("form-action 'self' ") && csp.contains(" http://127.0.0.1:9"), "{csp}");
    assert!(csp.contains("https://accounts.google.com"), "{csp}");
    assert!(!csp.contains("slack.com"), "no client for Slack: {csp}");
}

#[tokio::test]
async fn the_binary_serves_the_portal_until_stdin_closes() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(crate::support::binary())
        .arg("portal")
        .env("WORKBENCH_HOME", home.path())
        .env("WORKBENCH_SECRET_STORE", "memory")
        .env("WORKBENCH_NO_BROWSER", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await.unwrap().unwrap().unwrap();
    let url = first.strip_prefix("workbench portal: ").expect("the URL first").to_string();
    assert!(url.starts_with("http://127.0.0.1:") && url.contains("/portal/") && url.ends_with('/'), "{url}");
    let (status, _, html) = get(&url).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Integrations</h1>"));
    drop(child.stdin.take());
    let exit = tokio::time::timeout(Duration::from_secs(10), child.wait()).await.expect("exits on EOF").unwrap();
    assert!(exit.success());
    // After it stopped, nothing answers there.
    assert!(client().get(&url).send().await.is_err());
}
