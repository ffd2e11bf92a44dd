//! The meta-tools other than execute_tools, in-process.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use workbench::connect::{PendingConnect, PendingState};
use workbench::meta::Answer as Outcome;

use crate::support::{app, app_with};

#[tokio::test]
async fn search_finds_tools_by_intent_and_refuses_bad_input() {
    let t = app();
    let out = t.call("search_tools", json!({"query": "whats the weather in lisbon tomorrow"})).await;
    let tools = out.body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "open_meteo_get_forecast");
    assert_eq!(tools[0]["integration"], "open_meteo");
    // open_meteo needs no account: it is not among the integrations to connect first.
    let not_connected = out.body["not_connected"].as_array().cloned().unwrap_or_default();
    assert!(!not_connected.contains(&json!("open_meteo")), "{}", out.body);
    assert!(tools[0].get("connected").is_none());
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
    // Nothing serves it: the answer is empty or weak guesses only, each marked weak.
    let none = t.call("search_tools", json!({"query": "order a pizza"})).await;
    assert!(none.body["tools"].as_array().unwrap().iter().all(|t| t["weak"] == true), "{}", none.body);
    // Jira needs an account: the answer says so once, and results well below the best one carry
    // the first clause of their description.
    let jira = t.call("search_tools", json!({"query": "create a jira issue"})).await;
    assert_eq!(jira.body["not_connected"], json!(["jira"]), "{}", jira.body);
    let hits = jira.body["tools"].as_array().unwrap();
    assert_eq!(hits[0]["name"], "jira_create_issue");
    let full = t.app.registry().get("jira_create_issue").unwrap().description;
    assert_eq!(hits[0]["description"], full);
    let best = hits[0]["score"].as_f64().unwrap();
    let far = hits.iter().find(|h| h["score"].as_f64().unwrap() <= best - 0.1).expect("a weaker result");
    let far_full = t.app.registry().get(far["name"].as_str().unwrap()).unwrap().description;
    let shown = far["description"].as_str().unwrap();
    assert!(far_full.starts_with(shown) && shown.len() < far_full.len() && !shown.is_empty(), "{far}");
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

/// Every tool of both profiles with a required field: the field, a wrong-typed value for it, the
/// validator's words for that value, and otherwise valid arguments.
fn required_fields() -> Vec<(&'static str, bool, &'static str, Value, &'static str, Value)> {
    vec![
        ("search_tools", false, "query", json!(5), "expected string, got number 5", json!({"limit": 3})),
        ("get_tool_schema", false, "tool", json!(["x"]), "expected string, got an array of 1 item(s)", json!({})),
        (
            "execute_tools",
            false,
            "executions",
            json!("time_get_current"),
            "expected array, got string \"time_get_current\"",
            json!({"compose": false}),
        ),
        ("connect", false, "integration", json!(true), "expected string, got boolean true", json!({"account": "work"})),
        ("get_auth_url", false, "integration", json!({}), "expected string, got an object", json!({})),
        (
            "wait_for_connection",
            false,
            "connectionId",
            json!(7),
            "expected string, got number 7",
            json!({"timeoutSec": 1}),
        ),
        (
            "curl_session",
            false,
            "integrations",
            json!("github"),
            "expected array, got string \"github\"",
            json!({"expiresInSeconds": 60}),
        ),
        ("search_tools", true, "pattern", json!(null), "expected string, got null", json!({"searchIn": "names"})),
        ("check_authentication", true, "toolName", json!(1.5), "expected string, got number 1.5", json!({})),
        ("initiate_connection", true, "provider", json!(false), "expected string, got boolean false", json!({})),
        ("execute_tool", true, "toolName", json!({"name": "x"}), "expected string, got an object", json!({"args": {}})),
    ]
}

async fn call_profile(t: &crate::support::TestApp, runstack: bool, tool: &str, args: Value) -> Outcome {
    let hooks = workbench::engine::Hooks::default();
    let out = if runstack {
        workbench::meta::runstack::call_with(&t.app, tool, args, &hooks).await
    } else {
        workbench::meta::call_with(&t.app, tool, args, &hooks).await
    };
    out.expect("a tool of the profile")
}

/// Nothing ran: no pending connection, no audit row, no token.
async fn nothing_happened(t: &crate::support::TestApp) {
    assert!(workbench::connect::flows(&t.app).pending().is_empty(), "a connection was started");
    let rows =
        t.app.storage.search_audit(workbench::storage::AuditQuery { limit: 100, ..Default::default() }).await.unwrap();
    assert!(rows.is_empty(), "something was audited: {rows:?}");
}

#[tokio::test]
async fn every_meta_tool_refuses_a_missing_or_mistyped_required_field_by_name() {
    let t = app();
    for (tool, runstack, field, wrong, said, rest) in required_fields() {
        let pointer = format!("/{field}");
        // Missing: the old `""` default would have run the tool (search for "", connect "", ...).
        let out = call_profile(&t, runstack, tool, rest.clone()).await;
        assert!(out.is_error, "{tool} without {field}: {}", out.body);
        let error = &out.body["error"];
        assert_eq!(error["code"], "INVALID_ARGUMENTS", "{tool}: {}", out.body);
        assert_eq!(error["problems"], json!([{"path": pointer, "problem": error["problems"][0]["problem"]}]), "{tool}");
        assert!(
            error["problems"][0]["problem"].as_str().unwrap().starts_with("required parameter is missing"),
            "{tool}: {}",
            out.body
        );
        assert!(error["expected_parameters"][field].as_str().unwrap().ends_with("required"), "{tool}: {}", out.body);
        // Mistyped: named, with what was given.
        let mut args = rest.clone();
        args[field] = wrong.clone();
        let out = call_profile(&t, runstack, tool, args).await;
        assert!(out.is_error, "{tool} with {field} = {wrong}: {}", out.body);
        assert_eq!(out.body["error"]["code"], "INVALID_ARGUMENTS");
        assert_eq!(out.body["error"]["problems"], json!([{"path": pointer, "problem": said}]), "{tool}");
    }
    nothing_happened(&t).await;
}

#[tokio::test]
async fn typed_arguments_refuse_what_the_schema_refuses_even_without_the_validator() {
    use workbench::meta;
    // The serde layer alone (what a caller of the typed functions builds from JSON): a missing
    // field is an error naming it, never an empty default.
    let e = serde_json::from_value::<meta::connect::Args>(json!({})).unwrap_err().to_string();
    assert_eq!(e, "missing field `integration`");
    let e = serde_json::from_value::<meta::search_tools::Args>(json!({"query": 5})).unwrap_err().to_string();
    assert!(e.starts_with("invalid type: integer `5`, expected a string"), "{e}");
    let e = serde_json::from_value::<meta::wait_for_connection::Args>(json!({"connectionId": "x", "timeoutSec": "5"}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("invalid type: string \"5\", expected u64"), "{e}");
    let e = serde_json::from_value::<meta::curl_session::Args>(json!({"integrations": ["github"], "approve": true}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("unknown field `approve`"), "{e}");
    let e =
        serde_json::from_value::<meta::execute_tools::Args>(json!({"executions": [{"tool": "x", "policy": "allow"}]}))
            .unwrap_err()
            .to_string();
    assert!(e.starts_with("unknown field `policy`"), "{e}");
    let e = serde_json::from_value::<meta::NoArgs>(json!({"email": "x@example.com"})).unwrap_err().to_string();
    assert!(e.starts_with("unknown field `email`"), "{e}");
    let e = serde_json::from_value::<meta::runstack::SearchArgs>(json!({"pattern": "x", "searchIn": "everything"}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("unknown variant `everything`"), "{e}");
    // Defaults are the schema's.
    let a = serde_json::from_value::<meta::search_tools::Args>(json!({"query": "x"})).unwrap();
    assert_eq!(a.limit, 10);
    let a = serde_json::from_value::<meta::wait_for_connection::Args>(json!({"connectionId": "x"})).unwrap();
    assert_eq!(a.timeout_sec, workbench::meta::wait_for_connection::DEFAULT_TIMEOUT_SECS);
    let a = serde_json::from_value::<meta::curl_session::Args>(json!({"integrations": ["github"]})).unwrap();
    assert_eq!(a.expires_in_seconds, 900);
}

#[tokio::test]
async fn an_injected_agents_extra_fields_are_refused_and_change_nothing() {
    let t = app_with(&[("WORKBENCH_GITHUB_TOKEN", "ghp_from_env_0123456789".into())]);
    // Fields an injected prompt might add to get past the user: none is a parameter, every tool
    // refuses them before doing anything, consistent with additionalProperties: false.
    let cases = [
        (false, "connect", json!({"integration": "linear", "token": "lin_x", "store": true})),
        (false, "get_auth_url", json!({"integration": "linear", "skip_page": true})),
        (false, "wait_for_connection", json!({"connectionId": "abc", "state": "CONNECTED"})),
        (false, "curl_session", json!({"integrations": ["github"], "approved": true, "expiresInSeconds": 60})),
        (false, "curl_session", json!({"integrations": ["github"], "policy": "allow"})),
        (
            false,
            "execute_tools",
            json!({"executions": [{"tool": "github_create_issue", "args": {}, "approved": true}]}),
        ),
        (false, "execute_tools", json!({"executions": [{"tool": "time_get_current"}], "confirm": false})),
        (false, "whoami", json!({"email": "attacker@example.com"})),
        (false, "list_integrations", json!({"include_secrets": true})),
        (false, "search_tools", json!({"query": "issues", "include_hidden": true})),
        (false, "get_tool_schema", json!({"tool": "time_get_current", "raw": true})),
        (true, "execute_tool", json!({"toolName": "time_get_current", "args": {}, "confirm": true})),
        (true, "initiate_connection", json!({"provider": "linear", "token": "lin_x"})),
        (true, "check_authentication", json!({"toolName": "github_get_me", "authenticated": true})),
        (true, "search_tools", json!({"pattern": "github", "limit": 500})),
    ];
    for (runstack, tool, args) in cases {
        let extra: Vec<String> = {
            let known = if runstack {
                workbench::meta::runstack::find(tool).unwrap()
            } else {
                workbench::meta::find(tool).unwrap()
            };
            let schema = (known.schema)();
            assert_eq!(schema["additionalProperties"], false, "{tool}");
            let props = schema["properties"].as_object().unwrap();
            let mut found = Vec::new();
            for (k, v) in args.as_object().unwrap() {
                if !props.contains_key(k) {
                    found.push(format!("/{k}"));
                }
                if let Some(items) = v.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        for key in item.as_object().map(|o| o.keys().collect::<Vec<_>>()).unwrap_or_default() {
                            if !["tool", "args", "ref_id", "account"].contains(&key.as_str()) {
                                found.push(format!("/{k}/{i}/{key}"));
                            }
                        }
                    }
                }
            }
            found
        };
        let out = call_profile(&t, runstack, tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args}: {}", out.body);
        assert_eq!(out.body["error"]["code"], "INVALID_ARGUMENTS", "{tool}: {}", out.body);
        let paths: Vec<&str> =
            out.body["error"]["problems"].as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap()).collect();
        assert_eq!(paths, extra, "{tool}: {}", out.body);
        for p in out.body["error"]["problems"].as_array().unwrap() {
            assert!(p["problem"].as_str().unwrap().starts_with("unknown parameter"), "{tool}: {p}");
        }
    }
    nothing_happened(&t).await;
    // The same calls without the extra fields do run (the refusal was the field, not the call).
    let ok = t.call("connect", json!({"integration": "linear"})).await;
    assert!(!ok.is_error && ok.body["connectionId"].is_string(), "{}", ok.body);
}

#[tokio::test]
async fn the_typed_functions_answer_what_the_dispatch_answers() {
    use workbench::meta;
    let t = app();
    // The CLI and the portal call these directly; MCP goes through meta::call: same bodies.
    let typed =
        meta::answer(meta::search_tools::run(&t.app, meta::search_tools::Args { query: "weather".into(), limit: 2 }));
    assert_eq!(typed, t.call("search_tools", json!({"query": "weather", "limit": 2})).await);
    let typed = meta::answer(meta::get_tool_schema::run(&t.app, meta::get_tool_schema::Args { tool: "nope".into() }));
    assert!(typed.is_error);
    assert_eq!(typed, t.call("get_tool_schema", json!({"tool": "nope"})).await);
    let typed = meta::answer(meta::connect::run(&t.app, meta::connect::Args::new("wikipedia", None)).await);
    assert_eq!(typed, t.call("connect", json!({"integration": "wikipedia"})).await);
    match meta::connect::run(&t.app, meta::connect::Args::new("github", Some("work"))).await.unwrap() {
        meta::connect::Connection::Link(link) => {
            assert_eq!(link.account_name, "work");
            assert!(link.existing.is_none());
            assert!(link.url.ends_with(&format!("/connect/{}", link.connection_id)));
            // The one wait loop: a link that nobody completes times out and is dropped.
            let waited = meta::wait_for_connection::run(
                &t.app,
                meta::wait_for_connection::Args { connection_id: link.connection_id.clone(), timeout_sec: 1 },
            )
            .await
            .unwrap();
            assert_eq!(waited.status, meta::wait_for_connection::Status::Timeout);
            assert!(!workbench::connect::flows(&t.app).pending().contains_key(&link.connection_id));
        }
        other => panic!("expected a link, got {other:?}"),
    }
    let failure = meta::connect::run(&t.app, meta::connect::Args::new("githb", None)).await.unwrap_err();
    assert_eq!(failure.message(), "Unknown integration: githb");
    assert_eq!(failure.nearest(), Some("github"));
}

#[tokio::test]
async fn whole_numbers_written_as_floats_are_integers() {
    let t = app();
    // 2.0 passes the schema's integer check; it is 2, not a refusal and not the default 10.
    let out = t.call("search_tools", json!({"query": "weather", "limit": 2.0})).await;
    assert!(!out.is_error, "{}", out.body);
    assert_eq!(out.body["tools"].as_array().unwrap().len(), 2);
    let out = t.call("search_tools", json!({"query": "weather", "limit": 2.5})).await;
    assert_eq!(out.body["error"]["problems"][0]["path"], "/limit", "{}", out.body);
}
