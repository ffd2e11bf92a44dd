//! http_send_request end to end through execute_tools: what it sends and how it shapes answers,
//! and every refusal of its SSRF guard — at the first URL and at every redirect hop — plus the size
//! and time caps. Fakes on 127.0.0.1 are reachable only through the test allowance
//! (`Settings::http_reachable_for_tests`, exact addresses of IP literals).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use workbench::config::Settings;

use crate::support::fake::{Fake, Recorded, Reply};
use crate::support::raw::{RawFake, Step, chunk, head};
use crate::support::{TestApp, app_reaching};

const TOOL: &str = "http_send_request";

fn html(body: &str) -> Reply {
    Reply { status: 200, headers: vec![("content-type".into(), "text/html; charset=utf-8".into())], body: body.into() }
}

fn redirect(status: u16, to: &str) -> Reply {
    Reply { status, headers: vec![("location".into(), to.into())], body: String::new() }
}

/// A fake site: pages by path, echoing what it received where that helps a test.
fn site(r: &Recorded) -> Reply {
    match r.path.as_str() {
        "/api" => Reply::json(
            200,
            json!({"method": r.method, "q": r.q("q"), "page": r.q("page"), "accept": r.header("accept"),
                   "body": String::from_utf8_lossy(&r.body), "content_type": r.header("content-type")}),
        )
        .with_header("set-cookie", "session=abc123; HttpOnly")
        .with_header("x-request-id", "r-1"),
        "/page" => html(
            "<html><head><title>The  Page</title><script>var x = '<b>hidden</b>';</script></head>\
             <body><h1>Welcome</h1><p>Read <a href='/docs'>the docs</a>&hellip;</p></body></html>",
        ),
        "/plain" => {
            Reply { status: 200, headers: vec![("content-type".into(), "text/plain".into())], body: "just text".into() }
        }
        "/image" => Reply {
            status: 200,
            headers: vec![("content-type".into(), "image/png".into())],
            body: "\u{1}PNGDATA".into(),
        },
        "/broken-json" => Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: "{\"a\": ".into(),
        },
        "/missing" => Reply::json(404, json!({"error": "no such page"})),
        "/big" => Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: "x".repeat(3 * 1024 * 1024),
        },
        "/slow" => {
            std::thread::sleep(Duration::from_secs(3));
            Reply { status: 200, headers: vec![], body: "late".into() }
        }
        "/loop" => redirect(302, "/loop"),
        "/post-then-see-other" => redirect(303, "/api"),
        _ => Reply::json(404, json!({"error": "unknown"})),
    }
}

async fn fake_site() -> (TestApp, Fake) {
    let fake = Fake::start(site).await;
    let t = app_reaching(&[], &[fake.addr()]);
    (t, fake)
}

fn problem_path(e: &Value) -> &str {
    e["problems"][0]["path"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn json_is_parsed_and_nothing_of_ours_is_sent() {
    let (t, fake) = fake_site().await;
    let r = t
        .ok(
            TOOL,
            json!({"url": format!("{}/api#frag", fake.url), "query": {"q": "rust lang", "page": 2},
                   "headers": {"Accept": "application/json"}}),
        )
        .await;
    assert_eq!(r["status"], 200);
    assert_eq!(r["ok"], true);
    assert_eq!(r["format"], "json");
    assert_eq!(r["body"]["method"], "GET");
    assert_eq!(r["body"]["q"], "rust lang");
    assert_eq!(r["body"]["page"], "2");
    assert_eq!(r["body"]["accept"], "application/json");
    assert_eq!(r["headers"]["x-request-id"], "r-1");
    assert!(r["headers"].get("set-cookie").is_none(), "cookies are neither kept nor returned: {r}");
    assert_eq!(r["url"], format!("{}/api?page=2&q=rust+lang", fake.url));
    let sent = fake.last();
    assert!(sent.header("user-agent").is_some_and(|ua| ua.starts_with("workbench/")));
    for h in ["authorization", "cookie", "proxy-authorization"] {
        assert!(sent.header(h).is_none(), "{h} was sent");
    }
    // A second request to the same site carries no cookie from the first answer.
    t.ok(TOOL, json!({"url": format!("{}/api", fake.url)})).await;
    assert!(fake.last().header("cookie").is_none());
}

#[tokio::test]
async fn bodies_are_sent_as_json_or_text_and_get_refuses_one() {
    let (t, fake) = fake_site().await;
    let url = format!("{}/api", fake.url);
    let r = t.ok(TOOL, json!({"url": url, "method": "POST", "body": {"name": "x", "n": [1, 2]}})).await;
    assert_eq!(r["body"]["method"], "POST");
    assert_eq!(r["body"]["content_type"], "application/json");
    assert_eq!(r["body"]["body"], r#"{"name":"x","n":[1,2]}"#);
    let r = t
        .ok(TOOL, json!({"url": url, "method": "PUT", "body": "a=1", "headers": {"content-type": "application/x-www-form-urlencoded"}}))
        .await;
    assert_eq!(r["body"]["content_type"], "application/x-www-form-urlencoded");
    assert_eq!(r["body"]["body"], "a=1");
    let r = t.ok(TOOL, json!({"url": url, "method": "PATCH", "body": "plain words"})).await;
    assert_eq!(r["body"]["content_type"], "text/plain; charset=utf-8");
    let e = t.err(TOOL, json!({"url": url, "body": {"a": 1}})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(problem_path(&e), "/body");
    assert!(e["message"].as_str().unwrap().contains("a GET request has no body"), "{e}");
    let e = t.err(TOOL, json!({"url": url, "method": "get"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS", "methods are upper case: {e}");
    let e = t.err(TOOL, json!({"url": url, "query": {"q": {"nested": true}}})).await;
    assert_eq!(problem_path(&e), "/query/q");
}

#[tokio::test]
async fn html_text_binary_and_error_statuses_are_shaped_for_reading() {
    let (t, fake) = fake_site().await;
    let page = t.ok(TOOL, json!({"url": format!("{}/page", fake.url)})).await;
    assert_eq!(page["format"], "html");
    assert_eq!(page["title"], "The Page");
    assert_eq!(page["text"], "Welcome\n\nRead the docs…");
    let md = t.ok(TOOL, json!({"url": format!("{}/page", fake.url), "as": "markdown"})).await;
    assert_eq!(md["text"], format!("# Welcome\n\nRead [the docs]({}/docs)…", fake.url));
    let raw = t.ok(TOOL, json!({"url": format!("{}/page", fake.url), "as": "raw"})).await;
    assert!(raw["text"].as_str().unwrap().contains("<script>"), "raw is the text unprocessed");

    let plain = t.ok(TOOL, json!({"url": format!("{}/plain", fake.url)})).await;
    assert_eq!((plain["format"].as_str(), plain["text"].as_str()), (Some("text"), Some("just text")));
    let image = t.ok(TOOL, json!({"url": format!("{}/image", fake.url)})).await;
    assert_eq!(image["format"], "binary");
    assert!(image.get("text").is_none() && image.get("body").is_none(), "{image}");
    assert!(image["note"].as_str().unwrap().contains("image/png, 8 bytes"), "{image}");
    let head = t.ok(TOOL, json!({"url": format!("{}/page", fake.url), "method": "HEAD"})).await;
    assert_eq!(head["format"], "empty");
    assert_eq!(fake.last().method, "HEAD");

    let broken = t.ok(TOOL, json!({"url": format!("{}/broken-json", fake.url)})).await;
    assert_eq!(broken["format"], "text");
    assert!(broken["note"].as_str().unwrap().contains("not valid JSON"), "{broken}");
    let e = t.err(TOOL, json!({"url": format!("{}/broken-json", fake.url), "as": "json"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert!(e["message"].as_str().unwrap().contains("the body is not JSON"), "{e}");

    let missing = t.ok(TOOL, json!({"url": format!("{}/missing", fake.url)})).await;
    assert_eq!((missing["status"].as_u64(), missing["ok"].as_bool()), (Some(404), Some(false)));
    assert_eq!(missing["body"]["error"], "no such page");
}

#[tokio::test]
async fn every_kind_of_first_url_is_refused_before_anything_is_sent() {
    let (t, fake) = fake_site().await;
    let port = fake.addr().port();
    let cases: Vec<(String, &str)> = vec![
        (format!("http://127.0.0.1:{}/api", port + 1), "127.0.0.1 is a loopback address"),
        (format!("http://localhost:{port}/api"), "'localhost' resolves to 127.0.0.1, a loopback address"),
        (format!("http://[::1]:{port}/api"), "::1 is the loopback address"),
        (format!("http://[::ffff:127.0.0.1]:{port}/api"), "IPv4-mapped form of 127.0.0.1"),
        (format!("http://2130706433:{port}/api"), "unusual spelling of the IP address 127.0.0.1"),
        (format!("http://0x7f.1:{port}/api"), "unusual spelling of the IP address 127.0.0.1"),
        (format!("http://0177.0.0.1:{port}/api"), "unusual spelling"),
        ("http://169.254.169.254/latest/meta-data/iam/".into(), "the cloud metadata service (169.254.169.254)"),
        ("http://metadata.google.internal/computeMetadata/v1/".into(), "cloud metadata service"),
        ("http://[fd00:ec2::254]/latest/".into(), "unique local address"),
        ("http://[fe80::1]/".into(), "link-local"),
        ("http://10.0.0.8/".into(), "private address (RFC 1918"),
        ("http://192.168.1.1/admin".into(), "private address (RFC 1918"),
        ("http://100.64.1.1/".into(), "carrier-grade NAT"),
        ("http://0.0.0.0/".into(), "unspecified"),
        ("http://224.0.0.251/".into(), "multicast"),
        ("http://255.255.255.255/".into(), "broadcast"),
        ("http://192.0.2.10/".into(), "documentation"),
        ("http://[2001:db8::1]/".into(), "documentation"),
        ("file:///etc/passwd".into(), "the scheme 'file:' is refused"),
        ("ftp://example.com/x".into(), "the scheme 'ftp:' is refused"),
        ("gopher://example.com/".into(), "the scheme 'gopher:' is refused"),
        (format!("http://user:pass@127.0.0.1:{port}/api"), "user names and passwords in URLs are refused"),
        ("example.com/path".into(), "not an absolute URL"),
    ];
    for (url, why) in &cases {
        let e = t.err(TOOL, json!({ "url": url })).await;
        assert_eq!(e["code"], "INVALID_ARGUMENTS", "{url}: {e}");
        assert_eq!(problem_path(&e), "/url", "{url}: {e}");
        let message = e["problems"][0]["problem"].as_str().unwrap();
        assert!(message.contains(why), "{url}: expected '{why}' in: {message}");
    }
    assert!(fake.requests().is_empty(), "a refused URL reached the fake");
    // The allowance is the exact literal address: the same fake by name stays refused (above), and
    // by its literal it answers.
    t.ok(TOOL, json!({"url": format!("http://127.0.0.1:{port}/plain")})).await;
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn redirects_are_followed_and_every_hop_is_checked_again() {
    let target = Fake::start(site).await;
    let hidden = Fake::start(site).await; // running, but not in the allowance
    let target_url = target.url.clone();
    let hidden_url = hidden.url.clone();
    let port = target.addr().port();
    let redirector = Fake::start(move |r| match r.path.as_str() {
        "/to-target" => redirect(301, &format!("{target_url}/api?via=redirect")),
        "/relative" => redirect(302, "/local"),
        "/local" => Reply::json(200, json!({"here": true})),
        "/to-loopback" => redirect(302, "http://127.0.0.1:1/admin"),
        "/to-hidden" => redirect(307, &format!("{hidden_url}/api")),
        "/to-metadata" => redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/to-metadata-name" => redirect(302, "http://metadata.google.internal/"),
        "/to-name" => redirect(302, &format!("http://localhost:{port}/api")),
        "/to-decimal" => redirect(302, "http://2130706433/"),
        "/to-file" => redirect(302, "file:///etc/passwd"),
        "/to-userinfo" => redirect(302, &format!("http://a:b@127.0.0.1:{port}/api")),
        "/to-mapped" => redirect(308, "http://[::ffff:169.254.169.254]/"),
        "/hop" => redirect(302, "/to-loopback"),
        _ => site(r),
    })
    .await;
    let t = app_reaching(&[], &[redirector.addr(), target.addr()]);

    let r = t.ok(TOOL, json!({"url": format!("{}/to-target", redirector.url)})).await;
    assert_eq!(r["redirects"], json!([format!("{}/api?via=redirect", target.url)]));
    assert_eq!(r["body"]["method"], "GET");
    let r = t.ok(TOOL, json!({"url": format!("{}/relative", redirector.url)})).await;
    assert_eq!(r["body"]["here"], true);
    // 303 after a POST continues as a GET without the body.
    let r = t
        .ok(TOOL, json!({"url": format!("{}/post-then-see-other", redirector.url), "method": "POST", "body": {"a": 1}}))
        .await;
    assert_eq!((r["body"]["method"].as_str(), r["body"]["body"].as_str()), (Some("GET"), Some("")));

    for (path, why) in [
        ("/to-loopback", "127.0.0.1 is a loopback address"),
        ("/hop", "127.0.0.1 is a loopback address"),
        ("/to-hidden", "127.0.0.1 is a loopback address"),
        ("/to-metadata", "the cloud metadata service (169.254.169.254)"),
        ("/to-metadata-name", "cloud metadata service"),
        ("/to-name", "'localhost' resolves to 127.0.0.1"),
        ("/to-decimal", "unusual spelling of the IP address 127.0.0.1"),
        ("/to-file", "the scheme 'file:' is refused"),
        ("/to-userinfo", "user names and passwords"),
        ("/to-mapped", "IPv4-mapped form of 169.254.169.254"),
    ] {
        let e = t.err(TOOL, json!({"url": format!("{}{path}", redirector.url)})).await;
        assert_eq!(e["code"], "UPSTREAM_ERROR", "{path}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains("which was refused") && message.contains(why), "{path}: {message}");
    }
    assert!(hidden.requests().is_empty(), "the refused hop was never requested");

    let e = t.err(TOOL, json!({"url": format!("{}/loop", redirector.url)})).await;
    assert!(e["message"].as_str().unwrap().contains("stopped after 5 redirects"), "{e}");
    assert_eq!(redirector.requests().iter().filter(|r| r.path == "/loop").count(), 6);
}

#[tokio::test]
async fn credentials_and_cookies_cannot_be_sent() {
    let (t, fake) = fake_site().await;
    let url = format!("{}/api", fake.url);
    for (name, why) in [
        ("Authorization", "credentials are not sent"),
        ("cookie", "cookies are not sent"),
        ("Proxy-Authorization", "credentials are not sent"),
        ("Host", "the host comes from the URL"),
    ] {
        let e = t.err(TOOL, json!({"url": url, "headers": { name: "x" }})).await;
        assert_eq!(problem_path(&e), format!("/headers/{name}"), "{e}");
        assert!(e["message"].as_str().unwrap().contains(why), "{e}");
    }
    let e = t.err(TOOL, json!({"url": url, "headers": {"bad header": "x"}})).await;
    assert!(e["message"].as_str().unwrap().contains("not a valid header name"), "{e}");
    t.app
        .vault
        .set("api", workbench::secrets::Secret::new("vault-secret-4242".into()), None, vec!["127.0.0.1".into()])
        .await
        .unwrap();
    let e = t.err(TOOL, json!({"url": url, "headers": {"x-key": "{{vault:api}}"}})).await;
    assert_eq!(e["code"], "VAULT_DENIED", "{e}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_the_cap_named() {
    let (t, fake) = fake_site().await;
    let e = t.err(TOOL, json!({"url": format!("{}/big", fake.url)})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    let message = e["message"].as_str().unwrap();
    assert!(message.contains("3145728 bytes, more than max_bytes (2097152 bytes)"), "{message}");
    let e = t.err(TOOL, json!({"url": format!("{}/page", fake.url), "max_bytes": 50})).await;
    assert!(e["message"].as_str().unwrap().contains("more than max_bytes (50 bytes)"), "{e}");
    let e = t.err(TOOL, json!({"url": format!("{}/page", fake.url), "max_bytes": 3_000_000})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS", "max_bytes above the cap: {e}");

    // No Content-Length: the cap is counted while the chunks arrive.
    let stream = RawFake::start(|_, _| {
        let mut steps =
            vec![Step::Send(head(200, &[("content-type", "text/plain"), ("transfer-encoding", "chunked")]))];
        for _ in 0..40 {
            steps.push(Step::Send(chunk(&[b'y'; 64 * 1024])));
        }
        steps.push(Step::Send(chunk(b"")));
        steps
    })
    .await;
    let t = app_reaching(&[], &[stream.addr]);
    let e = t.err(TOOL, json!({"url": format!("{}/stream", stream.url)})).await;
    assert!(e["message"].as_str().unwrap().contains("more than max_bytes (2097152 bytes)"), "{e}");
}

#[tokio::test]
async fn slow_answers_hit_the_time_cap() {
    let (t, fake) = fake_site().await;
    let started = Instant::now();
    let e = t.err(TOOL, json!({"url": format!("{}/slow", fake.url), "timeout_s": 1})).await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert!(e["message"].as_str().unwrap().contains("within 1s"), "{e}");
    assert!(started.elapsed() < Duration::from_millis(2500), "{:?}", started.elapsed());

    // Headers at once, then a byte every 300 ms: the cap covers the whole body, not each read.
    let trickle = RawFake::start(|_, _| {
        let mut steps = vec![Step::Send(head(200, &[("content-type", "text/plain"), ("content-length", "100")]))];
        for _ in 0..100 {
            steps.push(Step::Wait(Duration::from_millis(300)));
            steps.push(Step::Send(b"z".to_vec()));
        }
        steps
    })
    .await;
    let t = app_reaching(&[("WORKBENCH_CALL_TIMEOUT_SECS", "2".into())], &[trickle.addr]);
    let started = Instant::now();
    let e = t.err(TOOL, json!({"url": trickle.url.clone()})).await;
    assert_eq!(e["code"], "TIMEOUT", "{e}");
    assert!(started.elapsed() < Duration::from_millis(3500), "{:?}", started.elapsed());
}

#[tokio::test]
async fn calls_are_audited_as_mutating_with_their_url() {
    let (t, fake) = fake_site().await;
    t.ok(TOOL, json!({"url": format!("{}/plain", fake.url)})).await;
    t.err(TOOL, json!({"url": "http://169.254.169.254/"})).await;
    let log = t.ok("audit_search_log", json!({"tool": TOOL})).await;
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["error_code"], "INVALID_ARGUMENTS");
    assert!(entries[1]["args"].to_string().contains("/plain"), "{log}");
    assert_eq!(entries[1]["mutating"], true, "a tool that can POST counts as mutating");
}

#[test]
fn no_environment_variable_or_config_key_widens_the_guard() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.json"),
        r#"{"http_reachable_for_tests": ["127.0.0.1:80"], "http": {"allow_private": true}}"#,
    )
    .unwrap();
    let mut vars: HashMap<String, String> = HashMap::new();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    for name in ["WORKBENCH_HTTP_REACHABLE_FOR_TESTS", "WORKBENCH_HTTP_ALLOW_PRIVATE", "WORKBENCH_SSRF_ALLOW"] {
        vars.insert(name.into(), "127.0.0.1:80".into());
    }
    let settings = Settings::load(&vars).unwrap();
    assert!(settings.http_reachable_for_tests.is_empty());
}
