//! Issue 13 items 3, 4 and 7 as tests: the address guard of every request workbench sends
//! (custom apps, plugin calls, http_send_request, the curl proxy), credential pages that only the
//! user's browser can complete, and vault `allowed_hosts` bound to scheme, host and port.
//! Every service is a fake on 127.0.0.1; "the user lists an origin" is `WORKBENCH_PRIVATE_HOSTS`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app, app_in, app_reaching, app_with};

const GOOD: &str = "todoist-good-token-0123456789";
const ATTACKER: &str = "todoist-attacker-token-987654";

/// A service that answers every GET with some data, and says who asked.
async fn service() -> Fake {
    Fake::start(|r| Reply::json(200, json!({"data": "internal", "path": r.path, "auth": r.header("authorization")})))
        .await
}

/// A custom app with one GET operation at `base`, authenticated with `auth` when given.
fn app_def(name: &str, base: &str, auth: Option<Value>) -> Value {
    let mut def = json!({
        "name": name,
        "base_url": base,
        "operations": [{"tool_name": format!("{name}_get_data"), "method": "GET", "path": "/data", "description": "Get the data"}]
    });
    if let Some(a) = auth {
        def["auth"] = a;
    }
    def
}

/// A port nothing listens on now, to fix workbench's listener at (WORKBENCH_PORT).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn text(v: &Value) -> String {
    v.to_string()
}

/// Attack 3: a custom app on a loopback service was accepted and its GET returned the service's
/// data. Now it is refused at definition and at send time, unless the user listed the origin.
#[tokio::test]
async fn a_custom_app_on_loopback_needs_the_user_to_list_its_origin() {
    let fake = service().await;
    let t = app();
    let e = t.err("custom_create_app", app_def("acme", &fake.url, None)).await;
    let message = text(&e);
    assert!(message.contains("loopback") && message.contains("private_hosts"), "{e}");
    assert!(message.contains("WORKBENCH_PRIVATE_HOSTS"), "the error names the config key: {e}");
    assert_eq!(t.ok("custom_list_apps", json!({})).await["apps"], json!([]), "nothing was stored");

    // Listed by the user: defined and run.
    let listed = app_with(&[("WORKBENCH_PRIVATE_HOSTS", fake.url.clone())]);
    listed.ok("custom_create_app", app_def("acme", &format!("{}/v1", fake.url), None)).await;
    assert_eq!(listed.ok("acme_get_data", json!({})).await["data"], "internal");
    assert_eq!(fake.requests().len(), 1);

    // The config changed (another process on the same data dir without the entry): refused at
    // send time, nothing sent.
    let later = TestApp { app: app_in(listed.home.path()), home: tempfile::tempdir().unwrap() };
    let e = later.err("acme_get_data", json!({})).await;
    assert!(text(&e).contains("private_hosts"), "{e}");
    assert_eq!(fake.requests().len(), 1, "nothing more reached the service");
}

/// Attack 3: private ranges, the metadata address, IPv6 loopback and names that resolve to
/// loopback are refused for a custom app even when another loopback origin is listed.
#[tokio::test]
async fn private_metadata_and_loopback_names_are_refused_for_custom_apps() {
    let fake = service().await;
    let port = fake.addr().port();
    let t = app_with(&[("WORKBENCH_PRIVATE_HOSTS", fake.url.clone())]);
    for (base, why) in [
        ("http://10.0.0.1/api".to_string(), "RFC 1918"),
        ("http://169.254.169.254/latest".to_string(), "metadata"),
        ("http://metadata.google.internal/".to_string(), "metadata"),
        ("http://db.corp.internal/".to_string(), ".internal"),
        (format!("http://[::1]:{port}"), "loopback"),
        (format!("http://localhost:{port}"), "resolves to"),
        (format!("https://127.0.0.1:{port}"), "loopback"),
    ] {
        let e = t.err("custom_create_app", app_def("acme", &base, None)).await;
        assert!(text(&e).contains(why), "{base}: {e}");
    }
    assert!(fake.requests().is_empty());
}

/// Attack 3: a redirect from an allowed service to another loopback port is not followed. (The
/// engine's same-origin redirect rule already held this on main; kept so the new guarded clients
/// keep it.)
#[tokio::test]
async fn a_redirect_from_an_allowed_service_to_another_loopback_port_is_not_followed() {
    let other = service().await;
    let target = format!("{}/steal", other.url);
    let fake = Fake::start(move |_| Reply {
        status: 302,
        headers: vec![("location".into(), target.clone())],
        body: String::new(),
    })
    .await;
    let t = app_with(&[("WORKBENCH_PRIVATE_HOSTS", fake.url.clone())]);
    t.ok("custom_create_app", app_def("acme", &fake.url, None)).await;
    let e = t.err("acme_get_data", json!({})).await;
    assert!(text(&e).contains("302"), "the redirect is answered, not followed: {e}");
    assert_eq!(fake.requests().len(), 1);
    assert!(other.requests().is_empty(), "the other port was never reached");
}

/// Attack 4: nothing workbench sends reaches its own listener, even when the user (or a test)
/// allows that origin: custom apps, http_send_request, a plugin whose base URL is the listener,
/// the curl proxy.
#[tokio::test]
async fn no_request_of_workbench_reaches_its_own_listener() {
    let port = free_port();
    let listener = format!("http://127.0.0.1:{port}");
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let t = app_reaching(
        &[
            ("WORKBENCH_PORT", port.to_string()),
            ("WORKBENCH_PRIVATE_HOSTS", format!("{listener},http://localhost:{port}")),
            ("WORKBENCH_TODOIST_BASE_URL", listener.clone()),
            ("WORKBENCH_TODOIST_TOKEN", GOOD.into()),
            ("WORKBENCH_GITHUB_BASE_URL", format!("http://localhost:{port}")),
            ("WORKBENCH_GITHUB_TOKEN", "ghp_0123456789abcdefghijABCDEFGHIJ012345".into()),
        ],
        &[addr],
    );
    workbench::connect::ensure_listener(&t.app).await.unwrap();
    assert_eq!(workbench::listener::running(&t.app).unwrap().port, port);

    for base in [listener.clone(), format!("http://localhost:{port}"), format!("http://0.0.0.0:{port}")] {
        let e = t.err("custom_create_app", app_def("acme", &base, None)).await;
        assert!(text(&e).contains("own listener"), "{base}: {e}");
    }
    let e = t.err("http_send_request", json!({"url": format!("{listener}/connect/x")})).await;
    assert!(text(&e).contains("own listener"), "{e}");
    let e = t.err("todoist_list_projects", json!({})).await;
    assert!(text(&e).contains("own listener"), "a plugin override at the listener: {e}");

    let minted = t.call("curl_session", json!({"integrations": ["github"]})).await;
    assert!(!minted.is_error, "{}", minted.body);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let proxied = reqwest::Client::new()
        .get(format!("{}/github/user", minted.body["proxyBaseUrl"].as_str().unwrap()))
        .header("authorization", format!("Bearer {}", minted.body["token"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    let status = proxied.status();
    let body = proxied.text().await.unwrap();
    assert!(!status.is_success() && body.contains("own listener"), "{status} {body}");
}

/// Todoist's identity call: two accounts, one per token.
async fn todoist() -> Fake {
    Fake::start(|r| match r.header("authorization") {
        Some(a) if a == format!("Bearer {GOOD}") => {
            Reply::json(200, json!({"full_name": "Ada", "email": "ada@example.com"}))
        }
        Some(a) if a == format!("Bearer {ATTACKER}") => {
            Reply::json(200, json!({"full_name": "Mallory", "email": "mallory@evil.example"}))
        }
        _ => Reply::json(401, json!({"error": "bad token"})),
    })
    .await
}

fn form_token(html: &str) -> String {
    let at = html.find("name=\"form_token\" value=\"").expect("a form token on the page") + 25;
    html[at..at + html[at..].find('"').unwrap()].to_string()
}

fn account(t: &TestApp) -> Option<String> {
    t.app.storage.connection_meta("todoist").unwrap().and_then(|m| m.account_label)
}

/// Attack 4 end to end: the agent starts `connect`, then tries to read the connect page (for its
/// form token) and post its own token through a custom app and http_send_request: refused. A POST
/// from outside with the right Origin and form token but without the browser's fetch metadata is
/// refused too; the browser's works; replacing a connection needs the page's "Replace".
#[tokio::test]
async fn only_the_users_browser_completes_the_connect_page() {
    let fake = todoist().await;
    let port = free_port();
    let listener = format!("http://127.0.0.1:{port}");
    let t = app_with(&[
        ("WORKBENCH_PORT", port.to_string()),
        ("WORKBENCH_TODOIST_BASE_URL", fake.url.clone()),
        // The worst case: the user even listed the listener's origin.
        ("WORKBENCH_PRIVATE_HOSTS", listener.clone()),
    ]);
    let out = t.call("connect", json!({"integration": "todoist"})).await;
    assert!(!out.is_error, "{}", out.body);
    let url = out.body["url"].as_str().unwrap().to_string();
    let id = out.body["connectionId"].as_str().unwrap().to_string();

    // The agent's custom app aimed at the connect page, with a forged Origin.
    let attack = json!({
        "name": "grab",
        "base_url": listener,
        "headers": {"Origin": listener},
        "operations": [
            {"tool_name": "grab_get_page", "method": "GET", "path": format!("/connect/{id}"), "description": "Read the page"},
            {"tool_name": "grab_post_token", "method": "POST", "path": format!("/connect/{id}"), "description": "Post a token",
             "params": {"type": "object", "properties": {"token": {"type": "string"}, "form_token": {"type": "string"}}}}
        ]
    });
    let e = t.err("custom_create_app", attack).await;
    assert!(text(&e).contains("own listener"), "{e}");
    let e = t.err("http_send_request", json!({"url": url})).await;
    assert!(text(&e).contains("own listener") || text(&e).contains("loopback"), "{e}");
    assert!(workbench::connect::flows(&t.app).pending()[&id].form_tokens.is_empty(), "no form was ever served");
    assert!(account(&t).is_none(), "not connected");

    // A program outside (no fetch metadata) with the right Origin and form token: refused.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let plain = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let post = |client: &reqwest::Client, token: &str, body: String, browser: bool| {
        let mut req = client
            .post(&url)
            .header("origin", &listener)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("form_token={token}&{body}"));
        if browser {
            req = req.header("sec-fetch-site", "same-origin").header("sec-fetch-mode", "navigate");
        }
        req.send()
    };
    let html = plain.get(&url).send().await.unwrap().text().await.unwrap();
    let token = form_token(&html);
    let refused = post(&plain, &token, format!("token={ATTACKER}"), false).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("only a person can send it"));
    for (site, mode) in [("cross-site", "navigate"), ("same-origin", "cors"), ("none", "navigate")] {
        let r = plain
            .post(&url)
            .header("origin", &listener)
            .header("sec-fetch-site", site)
            .header("sec-fetch-mode", mode)
            .body(format!("form_token={token}&token={ATTACKER}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{site} {mode}");
    }
    assert!(account(&t).is_none(), "nothing was stored");

    // The user's browser (which sends the fetch metadata with a form submission): connected.
    let done = post(&plain, &token, format!("token={GOOD}"), true).await.unwrap();
    assert_eq!(done.status(), 200);
    assert_eq!(account(&t).as_deref(), Some("Ada <ada@example.com>"));

    // Reconnecting: the answer says it is connected; the page says which account is replaced.
    let again = t.call("connect", json!({"integration": "todoist"})).await;
    assert_eq!(again.body["status"], "CONNECTED", "{}", again.body);
    assert_eq!(again.body["account"], "Ada <ada@example.com>");
    let url2 = again.body["url"].as_str().unwrap().to_string();
    let html = plain.get(&url2).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("already connected as <strong>Ada &lt;ada@example.com&gt;</strong>"), "{html}");
    assert!(html.contains("name=\"replace\""));
    let token = form_token(&html);
    let browser_post = |token: &str, body: String| {
        plain
            .post(&url2)
            .header("origin", &listener)
            .header("sec-fetch-site", "same-origin")
            .header("sec-fetch-mode", "navigate")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("form_token={token}&{body}"))
            .send()
    };
    let unconfirmed = browser_post(&token, format!("token={ATTACKER}")).await.unwrap();
    assert_eq!(unconfirmed.status(), 400);
    assert!(unconfirmed.text().await.unwrap().contains("nothing was changed"));
    assert_eq!(account(&t).as_deref(), Some("Ada <ada@example.com>"), "no replace, no change");
    let identity_calls = fake.requests().len();
    let html = plain.get(&url2).send().await.unwrap().text().await.unwrap();
    let replaced = browser_post(&form_token(&html), format!("token={ATTACKER}&replace=yes")).await.unwrap();
    assert_eq!(replaced.status(), 200);
    assert_eq!(account(&t).as_deref(), Some("Mallory <mallory@evil.example>"), "replaced with the user's yes");
    assert_eq!(fake.requests().len(), identity_calls + 1);
}

/// Attack 4: the vault page and the unlock page need the browser's fetch metadata as well.
#[tokio::test]
async fn the_vault_page_needs_the_browser_too() {
    let t = app();
    let started = t.ok("vault_set_secret", json!({"name": "deploy_key", "allowed_hosts": ["api.example.com"]})).await;
    let url = started["url"].as_str().unwrap().to_string();
    let origin = url[..url.find("/vault/").unwrap()].to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    let token = form_token(&html);
    let send = |browser: bool| {
        let mut req = http
            .post(&url)
            .header("origin", &origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("form_token={token}&value=typed-4242"));
        if browser {
            req = req.header("sec-fetch-site", "same-origin").header("sec-fetch-mode", "navigate");
        }
        req.send()
    };
    assert_eq!(send(false).await.unwrap().status(), 403);
    assert!(t.app.storage.vault_meta("deploy_key".into()).await.unwrap().is_none(), "nothing stored");
    assert_eq!(send(true).await.unwrap().status(), 200);
    assert!(t.app.storage.vault_meta("deploy_key".into()).await.unwrap().is_some());
}

/// Attack 7: a secret allowed for one service was sent as a bearer token over plain http to an
/// agent-defined app on another port of the same host. Now allowed_hosts bind scheme and port.
#[tokio::test]
async fn a_secret_goes_only_to_its_scheme_host_and_port() {
    let svc = service().await;
    let other = service().await;
    let t = app_with(&[("WORKBENCH_PRIVATE_HOSTS", format!("{},{}", svc.url, other.url))]);
    let bearer = |name: &str| Some(json!({"type": "bearer", "token": format!("{{{{vault:{name}}}}}")}));
    t.ok("vault_set_secret", json!({"name": "SVC", "value": "svc-secret-31337", "allowed_hosts": [&svc.url]})).await;
    t.ok("vault_set_secret", json!({"name": "PLAIN", "value": "plain-secret-4711", "allowed_hosts": ["127.0.0.1"]}))
        .await;

    // The agent's app on the other port: the create answer warns, the call is refused.
    let created = t.ok("custom_create_app", app_def("thief", &other.url, bearer("SVC"))).await;
    assert!(text(&created["warnings"]).contains("does not allow"), "{created}");
    let e = t.err("thief_get_data", json!({})).await;
    assert_eq!(e["code"], "VAULT_DENIED", "{e}");
    assert!(other.requests().is_empty(), "nothing was sent to the other port");

    // The explicit origin works; a plain host name means https on 443, so it does not.
    t.ok("custom_create_app", app_def("svc", &svc.url, bearer("SVC"))).await;
    assert_eq!(t.ok("svc_get_data", json!({})).await["data"], "internal");
    assert_eq!(svc.last().header("authorization"), Some("Bearer svc-secret-31337"));
    t.ok("custom_create_app", app_def("plain", &svc.url, bearer("PLAIN"))).await;
    let e = t.err("plain_get_data", json!({})).await;
    assert_eq!(e["code"], "VAULT_DENIED", "{e}");
    assert!(text(&e).contains(&svc.url), "the error names the origin: {e}");

    // Plugin targets are origins too (the base URL override here).
    let wiki = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", svc.url.clone())]);
    wiki.ok("vault_set_secret", json!({"name": "K", "value": "k-value-5150", "allowed_hosts": [&svc.url]})).await;
    wiki.ok("vault_set_secret", json!({"name": "O", "value": "o-value-5150", "allowed_hosts": [&other.url]})).await;
    let denied = wiki.err("wikipedia_search_articles", json!({"query": "{{vault:O}}"})).await;
    assert_eq!(denied["code"], "VAULT_DENIED", "{denied}");
    let _ = wiki.exec("wikipedia_search_articles", json!({"query": "{{vault:K}}"})).await;
    assert!(
        svc.requests().iter().any(|r| r.q("search") == Some("k-value-5150")
            || r.q("q") == Some("k-value-5150")
            || r.query.iter().any(|(_, v)| v.contains("k-value-5150"))),
        "the allowed secret was sent"
    );
}

/// Item 3: custom-app requests go through the engine's send path: their own budget in the
/// governor, 429 Retry-After honoured, the body cap.
#[tokio::test]
async fn custom_app_requests_spend_a_budget_honour_429_and_are_capped() {
    let hits = Arc::new(AtomicUsize::new(0));
    let seen = hits.clone();
    let fake = Fake::start(move |r| match r.path.as_str() {
        "/limited/data" => {
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                Reply::json(429, json!({"message": "slow down"})).with_header("retry-after", "1")
            } else {
                Reply::json(200, json!({"data": "after the wait"}))
            }
        }
        "/big/data" => Reply { status: 200, headers: vec![], body: "x".repeat(9 * 1024 * 1024) },
        _ => Reply::json(200, json!({"data": "ok"})),
    })
    .await;
    let t = app_with(&[
        ("WORKBENCH_PRIVATE_HOSTS", fake.url.clone()),
        ("WORKBENCH_ACME_RATE_LIMIT", "1/30s".into()),
        ("WORKBENCH_CALL_TIMEOUT_SECS", "5".into()),
    ]);
    t.ok("custom_create_app", app_def("acme", &fake.url, None)).await;
    t.ok("custom_create_app", app_def("slow", &format!("{}/limited", fake.url), None)).await;
    t.ok("custom_create_app", app_def("huge", &format!("{}/big", fake.url), None)).await;

    assert_eq!(t.ok("acme_get_data", json!({})).await["data"], "ok");
    let e = t.err("acme_get_data", json!({})).await;
    assert_eq!(e["code"], "RATE_LIMITED", "the app's own budget (1 per 30 s) is spent: {e}");
    assert_eq!(fake.requests().len(), 1, "the second call was held before sending");

    let started = std::time::Instant::now();
    assert_eq!(t.ok("slow_get_data", json!({})).await["data"], "after the wait", "another app's budget");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "Retry-After was waited out");
    assert_eq!(hits.load(Ordering::SeqCst), 2);

    let e = t.err("huge_get_data", json!({})).await;
    assert!(text(&e).contains("more than 8 MiB"), "{e}");
}

/// Item 7: a plugin's targets are origins, with the connection's own host field filled in
/// (GitHub Enterprise, a Jira site), so `allowed_hosts` are matched against what the call reaches.
#[tokio::test]
async fn plugin_targets_are_the_origins_the_call_reaches() {
    let t = app();
    let targets = |i: &'static plugins::api::Integration, fields: &[(&str, &str)]| {
        let conn = (!fields.is_empty()).then(|| {
            let fields =
                fields.iter().map(|(k, v)| (k.to_string(), workbench::secrets::Secret::new(v.to_string()))).collect();
            workbench::auth::from_fields(i, fields, workbench::auth::Source::Store)
        });
        workbench::send::target_hosts(&t.app, i, conn.as_ref())
    };
    let github = &plugins::github::INTEGRATION;
    assert_eq!(targets(github, &[]), ["https://api.github.com:443"]);
    assert_eq!(
        targets(github, &[("token", "ghp_x"), ("base_url", "http://ghe.corp.example:8080/api/v3")]),
        ["http://ghe.corp.example:8080"],
        "GitHub Enterprise: the connection's host"
    );
    let jira = &plugins::jira::INTEGRATION;
    assert!(targets(jira, &[]).is_empty(), "no site yet, no target");
    assert_eq!(
        targets(jira, &[("site", "acme.atlassian.net"), ("email", "a@b.c"), ("token", "t")]),
        ["https://acme.atlassian.net:443"]
    );
    assert_eq!(targets(&plugins::wikipedia::INTEGRATION, &[]), ["https://*.wikipedia.org:443"]);
    // A plain-host entry allows https on 443 only; the GHES origin needs its own entry.
    assert!(workbench::secrets::origin_allowed(&["api.github.com".into()], "https://api.github.com:443"));
    assert!(!workbench::secrets::origin_allowed(&["ghe.corp.example".into()], "http://ghe.corp.example:8080"));
    assert!(workbench::secrets::origin_allowed(
        &["http://ghe.corp.example:8080".into()],
        "http://ghe.corp.example:8080"
    ));
}
