//! Approvals in the browser for clients without elicitation, over raw HTTP to the loopback
//! listener: a held call answers CONFIRMATION_REQUIRED with an approval page; the user's Approve
//! (a same-origin form POST spending a one-time token) lets exactly that call run once; nothing
//! else (a GET, a forged or cross-site POST, other arguments, a second repeat, Deny, expiry)
//! approves anything.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use workbench::engine::Hooks;
use workbench::engine::policy::Approval;

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app_with};

/// Hooks of a client that cannot ask the user (no elicitation).
fn cannot_ask() -> Hooks {
    Hooks {
        approve: Some(Arc::new(|_| {
            Box::pin(async { Approval::Unavailable("this MCP client cannot ask the user (no elicitation)".into()) })
        })),
        ..Default::default()
    }
}

fn served() -> TestApp {
    let t = app_with(&[]);
    t.app.approvals().enable_browser();
    t
}

async fn run(t: &TestApp, tool: &str, args: Value) -> Value {
    let out = workbench::meta::call_with(
        &t.app,
        "execute_tools",
        json!({"executions": [{"tool": tool, "args": args}]}),
        &cannot_ask(),
    )
    .await
    .unwrap();
    out.body["results"][0].clone()
}

async fn with_secret(t: &TestApp, name: &str) {
    t.ok("vault_set_secret", json!({"name": name, "value": "v-0123456789", "allowed_hosts": ["api.example.com"]}))
        .await;
}

async fn secrets(t: &TestApp) -> Vec<String> {
    let listed = t.ok("vault_list_secrets", json!({})).await;
    listed["secrets"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

/// The approval page address of a CONFIRMATION_REQUIRED answer.
fn approval_url(r: &Value) -> String {
    assert_eq!(r["error"]["code"], "CONFIRMATION_REQUIRED", "{r}");
    assert!(r["error"]["expires_in_seconds"].as_u64().unwrap() > 0, "{r}");
    let url = r["error"]["approval_url"].as_str().unwrap_or_else(|| panic!("no approval_url: {r}")).to_string();
    assert!(r["error"]["message"].as_str().unwrap().contains(&url), "the agent reads the URL: {r}");
    url
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn origin(url: &str) -> String {
    let u = reqwest::Url::parse(url).unwrap();
    format!("http://127.0.0.1:{}", u.port().unwrap())
}

/// GETs the page and returns its body and one form token.
async fn open_page(url: &str) -> (String, String) {
    let page = client().get(url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let marker = "name=\"form_token\" value=\"";
    let start = html.find(marker).expect("a form token") + marker.len();
    let token = html[start..start + html[start..].find('"').unwrap()].to_string();
    (html, token)
}

/// POSTs a decision as the page's own form would (same origin, a navigation).
async fn decide(url: &str, token: &str, decision: &str) -> reqwest::Response {
    client()
        .post(url)
        .header("origin", origin(url))
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "navigate")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&decision={decision}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn approve_in_the_browser_runs_the_same_call_once() {
    let t = served();
    with_secret(&t, "K").await;
    let held = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    let url = approval_url(&held);
    assert!(url.starts_with("http://127.0.0.1:") && url.contains("/approve/"), "{url}");
    assert_eq!(secrets(&t).await, ["K"], "nothing ran");

    let (html, token) = open_page(&url).await;
    assert!(html.contains("vault_delete_secret") && html.contains("vault"), "the page names the tool: {html}");
    assert!(html.contains("&quot;name&quot;: &quot;K&quot;"), "the page shows the arguments: {html}");
    // Its own footer: nothing is typed here (the connect pages' footer speaks of credentials).
    assert!(html.contains("Only your click on this page approves the call"), "{html}");
    assert!(!html.contains("what you enter here goes to its secret store"), "{html}");
    let answer = decide(&url, &token, "approve").await;
    assert_eq!(answer.status(), 200);
    assert!(answer.text().await.unwrap().contains("Approved"));

    let ran = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(ran["result"]["deleted"], true, "{ran}");
    assert!(secrets(&t).await.is_empty());

    // A second repeat asks again, on a new page.
    with_secret(&t, "K").await;
    let again = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_ne!(approval_url(&again), url, "the approval was spent");
    assert_eq!(secrets(&t).await, ["K"]);
    // The used page approves nothing more.
    let replay = decide(&url, &token, "approve").await;
    assert_ne!(replay.status(), 200);
}

/// Attack: the agent gets one call approved, then runs a different one (other arguments).
#[tokio::test]
async fn an_approval_covers_only_its_own_arguments() {
    let t = served();
    with_secret(&t, "K").await;
    with_secret(&t, "L").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    let (_, token) = open_page(&url).await;
    assert_eq!(decide(&url, &token, "approve").await.status(), 200);
    let other = run(&t, "vault_delete_secret", json!({"name": "L"})).await;
    assert_ne!(approval_url(&other), url);
    assert_eq!(secrets(&t).await, ["K", "L"], "the other call did not run");
    // The approved one still runs.
    let ran = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(ran["result"]["deleted"], true, "{ran}");
}

#[tokio::test]
async fn deny_refuses_and_a_repeat_asks_again() {
    let t = served();
    with_secret(&t, "K").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    let (_, token) = open_page(&url).await;
    let answer = decide(&url, &token, "deny").await;
    assert_eq!(answer.status(), 200);
    assert!(answer.text().await.unwrap().contains("Denied"));
    let again = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_ne!(approval_url(&again), url, "after Deny, a new question");
    assert_eq!(secrets(&t).await, ["K"]);
    // Approving the denied page later does nothing.
    let (_, token2) = (String::new(), token);
    assert_ne!(decide(&url, &token2, "approve").await.status(), 200);
    let still = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(still["error"]["code"], "CONFIRMATION_REQUIRED");
    assert_eq!(secrets(&t).await, ["K"]);
}

/// Attack: an approval kept past its lifetime (or a page answered after it).
#[tokio::test]
async fn expired_approvals_refuse() {
    let t = served();
    t.app.approvals().set_ttl(Duration::from_millis(1500));
    with_secret(&t, "K").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    let (_, token) = open_page(&url).await;
    assert_eq!(decide(&url, &token, "approve").await.status(), 200);
    tokio::time::sleep(Duration::from_millis(1700)).await;
    let late = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    let second = approval_url(&late);
    assert_eq!(secrets(&t).await, ["K"], "an expired approval ran nothing");
    // A page answered after its lifetime approves nothing either.
    let (_, token) = open_page(&second).await;
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(decide(&second, &token, "approve").await.status(), 410);
    assert_eq!(client().get(&second).send().await.unwrap().status(), 410);
    let last = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(last["error"]["code"], "CONFIRMATION_REQUIRED");
    assert_eq!(secrets(&t).await, ["K"]);
}

/// Attack: something that can make the browser load the page (a link, a prefetch, an image) but
/// not submit the page's own form: looking approves nothing.
#[tokio::test]
async fn a_get_alone_approves_nothing() {
    let t = served();
    with_secret(&t, "K").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    for _ in 0..3 {
        open_page(&url).await;
    }
    let still = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(still["error"]["code"], "CONFIRMATION_REQUIRED");
    assert_eq!(secrets(&t).await, ["K"]);
}

/// Attack: forged POSTs — no form token, a made-up token, another site's Origin, a cross-site or
/// scripted (fetch) request, a rebinding Host. None approves anything.
#[tokio::test]
async fn forged_posts_approve_nothing() {
    let t = served();
    with_secret(&t, "K").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    let (_, token) = open_page(&url).await;
    let post = |origin: String, site: &'static str, mode: &'static str, body: String| {
        let url = url.clone();
        async move {
            client()
                .post(&url)
                .header("origin", origin)
                .header("sec-fetch-site", site)
                .header("sec-fetch-mode", mode)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    let own = origin(&url);
    let good = format!("form_token={token}&decision=approve");
    assert_eq!(post(own.clone(), "same-origin", "navigate", "decision=approve".into()).await, 403, "no token");
    assert_eq!(post(own.clone(), "same-origin", "navigate", "form_token=beef&decision=approve".into()).await, 403);
    assert_eq!(post("http://evil.example".into(), "cross-site", "navigate", good.clone()).await, 403, "other origin");
    assert_eq!(post(own.clone(), "cross-site", "navigate", good.clone()).await, 403, "cross-site");
    assert_eq!(post(own.clone(), "same-origin", "cors", good.clone()).await, 403, "a script's fetch");
    let rebound = client()
        .post(&url)
        .header("host", "evil.example")
        .header("origin", "http://evil.example")
        .header("sec-fetch-site", "same-origin")
        .header("sec-fetch-mode", "navigate")
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 421, "DNS rebinding");
    let still = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(still["error"]["code"], "CONFIRMATION_REQUIRED");
    assert_eq!(secrets(&t).await, ["K"]);
    // The real form still works (the refused attempts spent nothing it needs).
    assert_eq!(post(own, "same-origin", "navigate", good).await, 200);
    assert_eq!(run(&t, "vault_delete_secret", json!({"name": "K"})).await["result"]["deleted"], true);
}

/// Nothing the model sends approves a held call, even with the page's id in hand.
#[tokio::test]
async fn no_argument_approves_anything() {
    let t = served();
    with_secret(&t, "K").await;
    let url = approval_url(&run(&t, "vault_delete_secret", json!({"name": "K"})).await);
    let id = url.rsplit('/').next().unwrap().to_string();
    for args in [
        json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "K", "approval_id": id}}]}),
        json!({"executions": [{"tool": "vault_delete_secret", "args": {"name": "K"}}], "approval_url": url}),
    ] {
        let out = workbench::meta::call_with(&t.app, "execute_tools", args.clone(), &cannot_ask()).await.unwrap();
        assert!(!out.body.to_string().contains("\"deleted\""), "{args} -> {}", out.body);
    }
    assert_eq!(secrets(&t).await, ["K"]);
}

#[tokio::test]
async fn github_merge_pr_and_curl_session_are_approved_in_the_browser() {
    let fake = Fake::start(|r| match (r.method.as_str(), r.path.as_str()) {
        ("PUT", "/repos/acme/demo/pulls/7/merge") => Reply::json(
            200,
            json!({"sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "merged": true, "message": "Pull Request successfully merged"}),
        ),
        _ => Reply::json(404, json!({"message": "Not Found"})),
    })
    .await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", "ghp_approvaltoken00000000000000000000000".into()),
        // Counts GitHub's requests: without the outbound-data guard's lookups (`flow_guard.rs`).
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    t.app.approvals().enable_browser();
    let args = json!({"owner": "acme", "repo": "demo", "pull_number": 7});
    let url = approval_url(&run(&t, "github_merge_pr", args.clone()).await);
    assert!(fake.requests().is_empty(), "nothing sent before the click");
    let (html, token) = open_page(&url).await;
    assert!(html.contains(&fake.url), "the page says where it goes: {html}");
    assert!(!html.contains("ghp_approvaltoken"), "no credential on the page");
    assert_eq!(decide(&url, &token, "approve").await.status(), 200);
    let merged = run(&t, "github_merge_pr", args.clone()).await;
    assert_eq!(merged["result"]["merged"], true, "{merged}");
    assert_eq!(fake.requests().len(), 1);
    approval_url(&run(&t, "github_merge_pr", args).await);
    assert_eq!(fake.requests().len(), 1, "the second repeat was held");

    // curl_session (not a proxy-enabled integration here: use the default catalogue's check).
    let curl_args = json!({"integrations": ["github"]});
    let held = workbench::meta::call_with(&t.app, "curl_session", curl_args.clone(), &cannot_ask()).await.unwrap();
    if held.body["code"] == "CONFIRMATION_REQUIRED" {
        let url = held.body["approval_url"].as_str().unwrap().to_string();
        let (_, token) = open_page(&url).await;
        let denied = decide(&url, &token, "deny").await;
        assert_eq!(denied.status(), 200);
        let again = workbench::meta::call_with(&t.app, "curl_session", curl_args.clone(), &cannot_ask()).await.unwrap();
        assert!(again.body.get("token").is_none(), "denied: no token");
        let url = again.body["approval_url"].as_str().unwrap().to_string();
        let (_, token) = open_page(&url).await;
        assert_eq!(decide(&url, &token, "approve").await.status(), 200);
        let minted =
            workbench::meta::call_with(&t.app, "curl_session", curl_args.clone(), &cannot_ask()).await.unwrap();
        assert!(!minted.is_error, "{}", minted.body);
        let once = workbench::meta::call_with(&t.app, "curl_session", curl_args, &cannot_ask()).await.unwrap();
        assert_eq!(once.body["code"], "CONFIRMATION_REQUIRED", "{}", once.body);
    } else {
        panic!("curl_session was not held: {}", held.body);
    }
}

/// The one-shot terminal (`workbench tools call` without a terminal) keeps today's answer: no page
/// that would die with the process.
#[tokio::test]
async fn without_a_serving_transport_there_is_no_page() {
    let t = app_with(&[]);
    with_secret(&t, "K").await;
    let r = run(&t, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(r["error"]["code"], "CONFIRMATION_REQUIRED");
    assert!(r["error"].get("approval_url").is_none(), "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("WORKBENCH_POLICY_VAULT"), "{r}");
}
