//! The meta-tools other than execute_tools, in-process.

use std::time::{Duration, Instant};

use serde_json::json;
use workbench::connect::{PendingConnect, PendingState};

use crate::support::{app, app_with};

#[tokio::test]
async fn search_finds_tools_by_intent_and_refuses_bad_input() {
    let t = app();
    let out = t.call("search_tools", json!({"query": "whats the weather in lisbon tomorrow"})).await;
    let tools = out.body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "open_meteo_get_forecast");
    assert_eq!(tools[0]["integration"], "open_meteo");
    assert_eq!(tools[0]["connected"], true);
    let s = tools[0]["score"].as_f64().unwrap();
    assert!(s > 0.5 && s <= 1.0, "{s}");
    for (query, want) in [
        ("hackernews_get_user", "hackernews_get_user"),
        ("front page of hacker news", "hackernews_list_stories"),
        ("who is ada lovelace", "wikipedia_get_summary"),
        ("convert csv to markdown table", "data_convert_csv"),
        ("what time is it in tokyo", "time_get_current"),
        ("wether forcast", "open_meteo_get_forecast"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
    let none = t.call("search_tools", json!({"query": "order a pizza"})).await;
    assert_eq!(none.body["tools"].as_array().unwrap().len(), 0, "{}", none.body);
    let limited = t.call("search_tools", json!({"query": "weather", "limit": 1})).await;
    assert_eq!(limited.body["tools"].as_array().unwrap().len(), 1);
    let bad = t.call("search_tools", json!({"query": "x", "limit": 51})).await;
    assert!(bad.is_error);
    assert_eq!(bad.body["error"]["problems"][0]["problem"], "must be at most 50, got 51");
    let empty = t.call("search_tools", json!({"query": "   "})).await;
    assert!(empty.is_error);
    assert!(empty.body["error"].as_str().unwrap().contains("query is empty"));
}

#[tokio::test]
async fn get_tool_schema_found_and_not_found() {
    let t = app();
    let out = t.call("get_tool_schema", json!({"tool": "open_meteo_get_forecast"})).await;
    assert!(!out.is_error);
    assert_eq!(out.body["schema"]["type"], "object");
    assert_eq!(out.body["schema"]["properties"]["forecast_days"]["maximum"], 16);
    let missing = t.call("get_tool_schema", json!({"tool": "wikipedia_get_sumary"})).await;
    assert!(missing.is_error);
    assert_eq!(missing.body["error"], "Tool not found");
    assert_eq!(missing.body["did_you_mean"][0], "wikipedia_get_summary");
}

#[tokio::test]
async fn whoami_is_stable_and_takes_the_configured_email() {
    let t = app();
    let a = t.call("whoami", json!({})).await;
    let b = t.call("whoami", json!({})).await;
    assert_eq!(a.body, b.body);
    assert!(a.body["id"].as_str().unwrap().starts_with("usr_"));
    assert!(a.body["email"].is_null());
    let t2 = app_with(&[("WORKBENCH_EMAIL", "ada@example.com".into())]);
    assert_eq!(t2.call("whoami", json!({})).await.body["email"], "ada@example.com");
    // A missing user record is reported, not invented.
    t2.app.storage.call(|c| c.execute("DELETE FROM user", []).map(|_| ())).await.unwrap();
    let gone = t2.call("whoami", json!({})).await;
    assert!(gone.is_error);
    assert_eq!(gone.body, json!({"error": "User not found"}));
}

#[tokio::test]
async fn list_integrations_and_connect_for_public_services() {
    let t = app();
    let out = t.call("list_integrations", json!({})).await;
    let all = out.body["integrations"].as_array().unwrap();
    assert_eq!(all.len(), t.app.registry().integrations().len());
    for i in all {
        let public = ["hackernews", "wikipedia", "open_meteo"].contains(&i["name"].as_str().unwrap());
        assert_eq!(i["connected"], public, "with no credentials, exactly the public integrations are connected: {i}");
        assert!(i["version"].is_string());
    }
    let c = t.call("connect", json!({"integration": "wikipedia"})).await;
    assert_eq!(c.body["status"], "CONNECTED");
    let alias = t.call("get_auth_url", json!({"integration": "wikipedia"})).await;
    assert_eq!(alias.body, c.body, "get_auth_url is the same handler");
    let unknown = t.call("connect", json!({"integration": "hackernew"})).await;
    assert!(unknown.is_error);
    assert_eq!(unknown.body, json!({"error": "Unknown integration: hackernew", "did_you_mean": "hackernews"}));
    let builtin = t.call("connect", json!({"integration": "data"})).await;
    assert_eq!(builtin.body["status"], "CONNECTED");
    let curl = t.call("curl_session", json!({"integrations": ["wikipedia"], "expiresInSeconds": 30})).await;
    assert!(curl.is_error);
    assert_eq!(curl.body["error"]["problems"][0]["path"], "/expiresInSeconds");
}

#[tokio::test]
async fn wait_for_connection_covers_every_status() {
    let t = app();
    let unknown = t.call("wait_for_connection", json!({"connectionId": "nope"})).await;
    assert_eq!(unknown.body, json!({"error": "Unknown connectionId"}));
    let add = |id: &str, state: PendingState, ttl: Duration| {
        let mut p = PendingConnect::new("wikipedia", "default", ttl);
        p.state = state;
        workbench::connect::flows(&t.app).pending().insert(id.to_string(), p);
    };
    add("done", PendingState::Connected, Duration::from_secs(60));
    assert_eq!(
        t.call("wait_for_connection", json!({"connectionId": "done"})).await.body,
        json!({"status": "CONNECTED"})
    );
    add("old", PendingState::Waiting, Duration::from_millis(0));
    assert_eq!(t.call("wait_for_connection", json!({"connectionId": "old"})).await.body, json!({"status": "EXPIRED"}));
    add("slow", PendingState::Waiting, Duration::from_secs(60));
    let started = Instant::now();
    let out = t.call("wait_for_connection", json!({"connectionId": "slow", "timeoutSec": 1})).await;
    assert_eq!(out.body, json!({"status": "TIMEOUT"}));
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(!workbench::connect::flows(&t.app).pending().contains_key("slow"), "a timeout reaps the pending record");
    // A connection that completes while waiting is seen within a poll.
    add("later", PendingState::Waiting, Duration::from_secs(60));
    let app = t.app.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        workbench::connect::flows(&app).pending().get_mut("later").unwrap().state = PendingState::Connected;
    });
    let out = t.call("wait_for_connection", json!({"connectionId": "later", "timeoutSec": 5})).await;
    assert_eq!(out.body, json!({"status": "CONNECTED"}));
}
