//! One vault resolution (`Vault::resolve`): each place that resolves `{{vault:NAME}}` (a tool's
//! arguments in the engine, a custom app's auth and headers, an upstream server's env) registers
//! the value with the process's exposed-secret set, so it is scrubbed from whatever leaves the
//! server afterwards, results and errors of other calls included. The values are stored with
//! `Vault::set` directly (not through `vault_set_secret`, which registers what it is given), so
//! only the resolution can have registered them. `tests/it/tidy.rs` checks that no other code
//! reads a vault value.

use std::sync::Arc;

use serde_json::json;
use workbench::app::App;
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Reply};
use crate::support::{app_in, app_with};

/// Whether the process's exposed-secret set knows `value`.
fn known(app: &Arc<App>, value: &str) -> bool {
    app.exposed.scrubber().known().iter().any(|k| k == value)
}

#[tokio::test]
async fn a_tool_argument_resolved_by_the_engine_is_registered_and_scrubbed() {
    let fake = Fake::start(|r| {
        let q = r.q("q").unwrap_or_default().to_string();
        Reply::json(
            200,
            json!({"pages": [{"key": "K", "title": "T", "excerpt": format!("you searched {q}"), "description": q}]}),
        )
    })
    .await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())]);
    let secret = "engine-path-secret-5531";
    t.app.vault.set("k", Secret::new(secret.into()), None, vec![fake.url.clone()]).await.unwrap();
    assert!(!known(&t.app, secret));
    let r = t.ok("wikipedia_search_articles", json!({"query": "{{vault:k}}"})).await;
    assert_eq!(fake.last().q("q"), Some(secret), "the upstream got the value");
    assert!(known(&t.app, secret), "the engine's resolution registered it");
    assert!(!r.to_string().contains(secret), "{r}");
    // Another call that quotes the value without a ref (the agent learnt it somehow) gets it scrubbed.
    let echoed = t.ok("data_query_json", json!({"expression": "@", "data": {"v": secret}})).await;
    assert!(!echoed.to_string().contains(secret), "{echoed}");
}

#[tokio::test]
async fn a_custom_apps_auth_resolved_for_its_request_is_registered_and_scrubbed() {
    let fake = Fake::start(|r| Reply::json(200, json!({"seen": r.header("authorization")}))).await;
    let t = app_with(&[("WORKBENCH_PRIVATE_HOSTS", fake.url.clone())]);
    let secret = "custom-path-secret-7719";
    t.app.vault.set("T", Secret::new(secret.into()), None, vec![fake.url.clone()]).await.unwrap();
    let made = t
        .ok(
            "custom_create_app",
            json!({
                "name": "echoer",
                "description": "Echoes the request's authorization",
                "base_url": format!("{}/", fake.url),
                "auth": {"type": "bearer", "token": "{{vault:T}}"},
                "operations": [{"tool_name": "echoer_get_echo", "method": "GET", "path": "/x", "description": "Echo"}]
            }),
        )
        .await;
    assert_eq!(made["created"], true, "{made}");
    assert!(!known(&t.app, secret));
    let r = t.ok("echoer_get_echo", json!({})).await;
    assert_eq!(fake.last().header("authorization"), Some(format!("Bearer {secret}").as_str()));
    assert!(known(&t.app, secret), "the custom app's resolution registered it");
    assert!(!r.to_string().contains(secret), "{r}");
}

#[tokio::test]
async fn an_upstream_servers_env_resolved_at_start_is_registered_and_scrubbed() {
    let home = tempfile::tempdir().unwrap();
    let servers = json!({"mcp_servers": {"quick": {"command": "true", "env": {"K": "{{vault:up}}"}}}});
    std::fs::write(home.path().join("config.json"), servers.to_string()).unwrap();
    let app = app_in(home.path());
    let secret = "upstream-path-secret-3307";
    app.vault.set("up", Secret::new(secret.into()), None, vec!["mcp:quick".into()]).await.unwrap();
    assert!(!known(&app, secret));
    // `true` exits at once: the start fails, after the env was resolved for the child.
    let e = app.upstream().ensure_started(&app, "quick").await.unwrap_err().to_string();
    assert!(known(&app, secret), "the upstream resolution registered it");
    assert!(!e.contains(secret), "{e}");
}
