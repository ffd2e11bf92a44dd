//! The runstack profile: the four tools of the Runstack design, their shapes and error strings,
//! in-process (rmcp client over a pipe) and through `workbench serve --profile runstack`.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};
use workbench::mcp::{Profile, tools_for};

use crate::mcp_features::{Recorder, call, connect, eventually, text_of};
use crate::support::fake::{Fake, Reply};
use crate::support::{app, app_with, assert_snapshot, binary};

const FOUR: [&str; 4] = ["search_tools", "check_authentication", "initiate_connection", "execute_tool"];

/// The JSON of a result (structuredContent on success, the text otherwise) and its isError flag.
async fn run(client: &crate::mcp_features::Client, tool: &str, args: Value) -> (Value, bool) {
    let r = call(client, tool, args).await;
    let is_error = r.is_error == Some(true);
    (r.structured_content.clone().unwrap_or_else(|| text_of(&r)), is_error)
}

#[test]
fn tools_list_is_exactly_the_four_tools_and_is_snapshotted() {
    let tools = serde_json::to_value(tools_for(Profile::Runstack)).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, FOUR);
    let bytes = serde_json::to_string(&json!({ "tools": tools })).unwrap().len();
    eprintln!("runstack tools/list: {bytes} bytes");
    assert!(bytes < 5_000, "runstack tools/list grew to {bytes} bytes");
    assert_snapshot("tools_list_runstack.json", &tools);
    assert_eq!(Profile::from_name("runstack"), Ok(Profile::Runstack));
    assert_eq!(Profile::from_name("default"), Ok(Profile::Default));
    assert_eq!(
        Profile::from_name("nine").unwrap_err().to_string(),
        "unknown profile 'nine'; profiles are: default, runstack"
    );
}

#[tokio::test]
async fn search_tools_matches_a_regex_in_names_descriptions_or_both() {
    let t = app();
    let (client, _) = connect(&t, Profile::Runstack).await;
    let (body, is_error) = run(&client, "search_tools", json!({"pattern": "github.*issue", "searchIn": "both"})).await;
    assert!(!is_error, "{body}");
    let names: Vec<&str> = body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["github_create_issue", "github_list_issues", "github_update_issue", "github_get_issue"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let create = body["tools"].as_array().unwrap().iter().find(|t| t["name"] == "github_create_issue").unwrap();
    assert_eq!(create["requiredAuth"], "githubToken");
    assert_eq!(create["provider"], "github");
    assert_eq!(create["parameters"]["type"], "object");
    assert!(create["parameters"]["properties"]["title"].is_object(), "parameter schemas come along");
    assert!(create["description"].as_str().unwrap().len() > 10);
    assert_eq!(body["total"], names.len());

    // Case-insensitive; names only vs descriptions only.
    let (by_name, _) = run(&client, "search_tools", json!({"pattern": "^TIME_", "searchIn": "names"})).await;
    let names: Vec<&str> = by_name["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.starts_with("time_")), "{names:?}");
    assert!(by_name["tools"][0]["requiredAuth"].is_null(), "built-ins need no connection");
    let (in_desc, _) = run(&client, "search_tools", json!({"pattern": "JMESPath", "searchIn": "descriptions"})).await;
    assert!(in_desc["tools"].as_array().unwrap().iter().any(|t| t["name"] == "data_query_json"), "{in_desc}");
    let (not_in_names, _) = run(&client, "search_tools", json!({"pattern": "JMESPath", "searchIn": "names"})).await;
    assert_eq!(not_in_names["tools"], json!([]));
    // Name matches come before description-only matches.
    let (mixed, _) = run(&client, "search_tools", json!({"pattern": "weather|forecast"})).await;
    assert_eq!(mixed["tools"][0]["name"], "open_meteo_get_forecast", "{mixed}");

    // Too many matches: the first 20, the total and how to narrow.
    let (all, _) = run(&client, "search_tools", json!({"pattern": "."})).await;
    assert_eq!(all["tools"].as_array().unwrap().len(), workbench::meta::runstack::MAX_RESULTS);
    assert_eq!(all["total"], t.app.registry().tools().len());
    assert!(all["note"].as_str().unwrap().contains("narrower pattern"));

    // Bad input is a clear error.
    let (bad, is_error) = run(&client, "search_tools", json!({"pattern": "github(issue"})).await;
    assert!(is_error);
    assert!(bad["error"].as_str().unwrap().starts_with("Invalid regex pattern: "), "{bad}");
    let (bad, is_error) = run(&client, "search_tools", json!({"pattern": "x", "searchIn": "everything"})).await;
    assert!(is_error);
    assert_eq!(bad["error"]["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["error"]["problems"][0]["path"], "/searchIn");
}

#[tokio::test]
async fn check_authentication_answers_with_the_designs_reasons() {
    let t = app();
    let (client, _) = connect(&t, Profile::Runstack).await;
    let (body, is_error) = run(&client, "check_authentication", json!({"toolName": "github_create_issue"})).await;
    assert!(!is_error);
    assert_eq!(
        body,
        json!({"toolName": "github_create_issue", "authenticated": false, "requiredAuth": "githubToken", "reason": "token_missing", "provider": "github"})
    );
    for tool in ["time_get_current", "wikipedia_get_summary"] {
        let (body, _) = run(&client, "check_authentication", json!({"toolName": tool})).await;
        assert_eq!(body, json!({"toolName": tool, "authenticated": true, "reason": "no_auth_required"}));
    }
    let (missing, is_error) = run(&client, "check_authentication", json!({"toolName": "github_create_isue"})).await;
    assert!(is_error);
    assert_eq!(missing["error"], "Tool not found");
    assert_eq!(missing["did_you_mean"][0], "github_create_issue");

    // A connected provider (here through the environment) is authenticated.
    let connected = app_with(&[("WORKBENCH_GITHUB_TOKEN", "ghp_runstackTESTtoken00000000000000000".into())]);
    let (client2, _) = connect(&connected, Profile::Runstack).await;
    let (body, _) = run(&client2, "check_authentication", json!({"toolName": "github_create_issue"})).await;
    assert_eq!(body, json!({"toolName": "github_create_issue", "authenticated": true}));

    // No local user record: user_not_found.
    t.app.storage.call(|c| c.execute("DELETE FROM user", []).map(|_| ())).await.unwrap();
    let (body, _) = run(&client, "check_authentication", json!({"toolName": "github_create_issue"})).await;
    assert_eq!(body["authenticated"], false);
    assert_eq!(body["reason"], "user_not_found");
}

#[tokio::test]
async fn initiate_connection_gives_a_local_link_for_the_provider() {
    let t = app();
    let (client, _) = connect(&t, Profile::Runstack).await;
    let (body, is_error) = run(&client, "initiate_connection", json!({"provider": "google-sheets"})).await;
    assert!(!is_error, "{body}");
    assert_eq!(body["provider"], "google-sheets");
    let link = body["link"].as_str().unwrap();
    assert!(link.starts_with("http://127.0.0.1:") && link.contains("/connect/"), "{link}");
    let id = body["connectionId"].as_str().unwrap();
    assert_eq!(
        workbench::connect::flows(&t.app).pending()[id].integration,
        "google_sheets",
        "the same connect flow as connect"
    );
    let (body, _) = run(&client, "initiate_connection", json!({"provider": "googlecalendar"})).await;
    assert!(body["link"].as_str().unwrap().contains("/connect/"));

    let (public, is_error) = run(&client, "initiate_connection", json!({"provider": "wikipedia"})).await;
    assert!(!is_error);
    assert_eq!(public["authenticated"], true);
    assert!(public["link"].is_null());

    let (unknown, is_error) = run(&client, "initiate_connection", json!({"provider": "githbu"})).await;
    assert!(is_error);
    assert_eq!(unknown, json!({"error": "Unknown provider: githbu", "did_you_mean": "github"}));
}

#[tokio::test]
async fn execute_tool_runs_through_the_engine_with_the_designs_result_and_error_shapes() {
    let fake = Fake::start(|r| {
        if r.path.ends_with("/Nowhere") {
            Reply::json(404, json!({"type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found", "title": "Not found.", "detail": "Page or revision not found."}))
        } else {
            Reply::json(200, json!({"title": "Ada Lovelace", "extract": "English mathematician.", "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/Ada_Lovelace"}}}))
        }
    })
    .await;
    let t = app_with(&[("WORKBENCH_WIKIPEDIA_BASE_URL", fake.url.clone())]);
    let (client, recorder) = connect(&t, Profile::Runstack).await;

    let (ok, is_error) =
        run(&client, "execute_tool", json!({"toolName": "time_get_current", "args": {"timezone": "UTC"}})).await;
    assert!(!is_error, "{ok}");
    assert_eq!(ok["toolName"], "time_get_current");
    assert_eq!(ok["success"], true);
    assert_eq!(ok["result"]["now"]["timezone"], "UTC");
    eventually("one progress notification", || recorder.progress.lock().unwrap().len() == 1).await;

    let (bad, is_error) =
        run(&client, "execute_tool", json!({"toolName": "time_get_current", "args": {"timezone": 5}})).await;
    assert!(is_error);
    assert_eq!(bad["error"], "Invalid arguments for tool");
    assert_eq!(bad["toolName"], "time_get_current");
    assert_eq!(bad["expectedParameters"]["timezone"]["type"], "string");
    assert_eq!(bad["providedParameters"], json!(["timezone"]));
    assert_eq!(bad["problems"][0]["path"], "/timezone");

    let (needs, is_error) = run(
        &client,
        "execute_tool",
        json!({"toolName": "github_create_issue", "args": {"owner": "o", "repo": "r", "title": "t"}}),
    )
    .await;
    assert!(is_error);
    assert_eq!(
        needs,
        json!({"error": "Tool requires connection", "toolName": "github_create_issue", "requiredAuth": "githubToken", "provider": "github", "message": "Use initiate_connection(provider) to connect."})
    );

    let (gone, is_error) = run(&client, "execute_tool", json!({"toolName": "github_create_isue", "args": {}})).await;
    assert!(is_error);
    assert_eq!(gone["error"], "Tool not found");

    let (up, is_error) =
        run(&client, "execute_tool", json!({"toolName": "wikipedia_get_summary", "args": {"title": "Nowhere"}})).await;
    assert!(is_error);
    assert_eq!(up["error"], "Tool execution failed");
    assert_eq!(up["code"], "UPSTREAM_ERROR");
    assert_eq!(up["status"], 404);
    let (found, is_error) =
        run(&client, "execute_tool", json!({"toolName": "wikipedia_get_summary", "args": {"title": "Ada Lovelace"}}))
            .await;
    assert!(!is_error, "{found}");
    assert_eq!(found["result"]["title"], "Ada Lovelace");

    // The same audit log as execute_tools.
    let rows =
        t.app.storage.search_audit(workbench::storage::AuditQuery { limit: 50, ..Default::default() }).await.unwrap();
    let tools: Vec<&str> = rows.iter().map(|r| r["tool"].as_str().unwrap()).collect();
    assert!(tools.contains(&"time_get_current") && tools.contains(&"wikipedia_get_summary"), "{tools:?}");
}

#[tokio::test]
async fn other_names_are_refused_in_the_runstack_profile() {
    let t = app();
    let (client, _) = connect(&t, Profile::Runstack).await;
    let direct = call(&client, "wikipedia_get_summary", json!({"title": "x"})).await;
    assert_eq!(direct.is_error, Some(true));
    assert!(
        text_of(&direct)["error"].as_str().unwrap().contains("execute_tool: {\"toolName\": \"wikipedia_get_summary\"")
    );
    for name in ["execute_tools", "get_tool_schema", "nope"] {
        let err = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(Default::default()))
            .await
            .expect_err("not a tool of this profile");
        assert!(err.to_string().contains("-32602") || err.to_string().contains("Unknown tool"), "{err}");
    }
}

#[tokio::test]
async fn the_binary_serves_the_profile_it_is_asked_for() {
    let home = tempfile::tempdir().unwrap();
    let command = tokio::process::Command::new(binary()).configure(|c| {
        c.args(["serve", "--profile", "runstack"]).env("WORKBENCH_HOME", home.path()).stderr(Stdio::null());
    });
    let client = Recorder::default().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert!(info.instructions.as_deref().unwrap().contains("initiate_connection"));
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, FOUR);
    let (body, is_error) = run(&client, "execute_tool", json!({"toolName": "time_get_current", "args": {}})).await;
    assert!(!is_error && body["success"] == true, "{body}");
    client.cancel().await.unwrap();

    for args in [&["serve", "--profile", "nine"][..], &["serve", "--profle", "runstack"], &["serve", "--profile"]] {
        let out = std::process::Command::new(binary()).args(args).env("WORKBENCH_HOME", home.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("profile") || err.contains("--profle"), "{args:?}: {err}");
    }
}
