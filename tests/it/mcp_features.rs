//! MCP protocol features with rmcp's own client: structuredContent, ping, progress notifications,
//! cancellation (in-process over a duplex pipe, with a slow upstream on 127.0.0.1), client logging
//! (through the real binary, where main installs the tracing layer), and tool names and schemas
//! that strict clients accept.

#![allow(deprecated)] // rmcp marks the logging API deprecated (SEP-2577); clients still use it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    LoggingLevel, LoggingMessageNotificationParam, PingRequest, ProgressNotificationParam, ProtocolVersion,
    ServerResult, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbench::mcp::{Profile, Server};

use crate::support::{TestApp, app, app_with, binary};

/// A client that records what the server sends it unasked.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("it-recorder", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
    async fn on_progress(&self, p: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(p);
    }
    async fn on_logging_message(&self, m: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.logs.lock().unwrap().push(m);
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// A client connected to an in-process server over a duplex pipe.
pub async fn connect(t: &TestApp, profile: Profile) -> (Client, Recorder) {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = Server::with_profile(t.app.clone(), profile);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let recorder = Recorder::default();
    let client = recorder.clone().serve(client_io).await.expect("client connects");
    (client, recorder)
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else { panic!("args must be an object") };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

pub fn text_of(r: &CallToolResult) -> Value {
    let text = &r.content[0].as_text().expect("a text block").text;
    serde_json::from_str(text).expect("the text block is JSON")
}

/// Waits until `check` holds (a notification is handled on its own task).
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < Duration::from_secs(5), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn results_carry_structured_content_and_the_same_json_as_text() {
    let t = app();
    let (client, _) = connect(&t, Profile::Default).await;
    let r = call(&client, "whoami", json!({})).await;
    assert_eq!(r.is_error, Some(false));
    let structured = r.structured_content.clone().expect("structuredContent on success");
    assert!(structured.is_object(), "structuredContent must be an object");
    assert!(structured["id"].as_str().unwrap().starts_with("usr_"));
    assert_eq!(text_of(&r), structured, "the text block is a copy of the structured result");

    let batch = call(
        &client,
        "execute_tools",
        json!({"executions": [{"tool": "time_get_current", "args": {"timezone": "UTC"}}]}),
    )
    .await;
    assert_eq!(batch.structured_content.unwrap()["results"][0]["result"]["now"]["timezone"], "UTC");

    // Errors stay isError with text only.
    let missing = call(&client, "get_tool_schema", json!({"tool": "no_such_tool_at_all"})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(missing.structured_content.is_none());
    assert_eq!(text_of(&missing)["error"], "Tool not found");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn ping_is_answered() {
    let t = app();
    let (client, _) = connect(&t, Profile::Default).await;
    let answer = client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.expect("ping");
    assert!(matches!(answer, ServerResult::EmptyResult(_)), "{answer:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_batch_reports_progress_once_per_finished_execution() {
    let t = app();
    let (client, recorder) = connect(&t, Profile::Default).await;
    // rmcp's client puts a progress token on every request.
    let r = call(
        &client,
        "execute_tools",
        json!({"executions": [
            {"tool": "time_get_current", "args": {"timezone": "UTC"}},
            {"tool": "no_such_tool", "args": {}},
            {"tool": "data_query_json", "args": {"expression": "a", "data": {"a": 1}}}
        ]}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));
    eventually("3 progress notifications", || recorder.progress.lock().unwrap().len() == 3).await;
    let progress = recorder.progress.lock().unwrap().clone();
    let done: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert_eq!(done, [1.0, 2.0, 3.0], "progress counts finished executions, in order");
    assert!(progress.iter().all(|p| p.total == Some(3.0)));
    let mut messages: Vec<String> = progress.iter().map(|p| p.message.clone().unwrap()).collect();
    messages.sort();
    assert_eq!(messages, ["data_query_json ok", "no_such_tool failed (TOOL_NOT_FOUND)", "time_get_current ok"]);

    // A compose reports its steps in order; a call that runs nothing reports nothing.
    recorder.progress.lock().unwrap().clear();
    call(
        &client,
        "execute_tools",
        json!({"compose": true, "executions": [
            {"ref_id": "a", "tool": "time_get_current", "args": {"timezone": "UTC"}},
            {"ref_id": "b", "tool": "data_query_json", "args": {"expression": "timezone", "data": "{{step:a.now}}"}}
        ], "return": "{{step:b}}"}),
    )
    .await;
    eventually("2 progress notifications", || recorder.progress.lock().unwrap().len() == 2).await;
    let steps: Vec<String> = recorder.progress.lock().unwrap().iter().map(|p| p.message.clone().unwrap()).collect();
    assert_eq!(steps, ["time_get_current ok", "data_query_json ok"]);
    recorder.progress.lock().unwrap().clear();
    call(&client, "search_tools", json!({"query": "weather"})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(recorder.progress.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}

/// An upstream that accepts connections, reads the request and never answers; it records each
/// connection and when the client closed it.
struct Silent {
    url: String,
    opened: Arc<Mutex<usize>>,
    closed: Arc<Mutex<usize>>,
}

async fn silent_upstream() -> Silent {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (opened, closed) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
    let (o, c) = (opened.clone(), closed.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            *o.lock().unwrap() += 1;
            let c = c.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                // Read the request, then keep reading: 0 bytes means the client hung up.
                loop {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                *c.lock().unwrap() += 1;
                let _ = socket.shutdown().await;
            });
        }
    });
    Silent { url, opened, closed }
}

#[tokio::test]
async fn cancelling_a_batch_aborts_the_running_call_and_starts_nothing_else() {
    let upstream = silent_upstream().await;
    let t = app_with(&[("WORKBENCH_HACKERNEWS_BASE_URL", upstream.url.clone()), ("WORKBENCH_CONCURRENCY", "1".into())]);
    let (client, _) = connect(&t, Profile::Default).await;
    let client = Arc::new(client);
    let executions: Vec<Value> =
        (1..=3).map(|i| json!({"tool": "hackernews_get_user", "args": {"username": format!("u{i}")}})).collect();
    let c = client.clone();
    let pending = tokio::spawn(async move {
        c.call_tool(
            CallToolRequestParams::new("execute_tools")
                .with_arguments(json!({ "executions": executions }).as_object().unwrap().clone()),
        )
        .await
    });
    eventually("the first upstream request", || *upstream.opened.lock().unwrap() == 1).await;
    let started = Instant::now();
    // Dropping the request future makes rmcp's client send notifications/cancelled.
    pending.abort();
    eventually("the upstream connection to close", || *upstream.closed.lock().unwrap() == 1).await;
    assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());

    // The cancelled execution is audited as such; the two queued ones never started.
    let query =
        workbench::storage::AuditQuery { tool: Some("hackernews_get_user".into()), limit: 10, ..Default::default() };
    let started = Instant::now();
    let mut entries = Vec::new();
    while entries.is_empty() {
        assert!(started.elapsed() < Duration::from_secs(5), "no audit row");
        tokio::time::sleep(Duration::from_millis(20)).await;
        entries = t.app.storage.search_audit(query.clone()).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(*upstream.opened.lock().unwrap(), 1, "no other execution reached the upstream");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["error_code"], "CANCELLED");
    assert!(entries[0]["error"].as_str().unwrap().contains("cancelled by the client"), "{}", entries[0]);

    // The server is still serving.
    let r = call(&client, "whoami", json!({})).await;
    assert_eq!(r.is_error, Some(false));
}

/// A client on the real binary, which installs the tracing layer that forwards logs.
async fn spawn_binary(args: &[&str]) -> (Client, Recorder, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let command = tokio::process::Command::new(binary()).configure(|c| {
        c.args(args)
            .env("WORKBENCH_HOME", home.path())
            .env("WORKBENCH_LOG", "error")
            .stderr(std::process::Stdio::null());
    });
    let recorder = Recorder::default();
    let client = recorder.clone().serve(TokioChildProcess::new(command).unwrap()).await.expect("connects");
    (client, recorder, home)
}

fn finished_logs(r: &Recorder, tool: &str) -> usize {
    let want = format!("{tool} finished");
    r.logs.lock().unwrap().iter().filter(|m| m.data["message"] == want.as_str()).count()
}

#[tokio::test]
async fn logging_set_level_forwards_our_events_at_or_above_the_level_and_rate_limits_a_storm() {
    let (client, recorder, _home) = spawn_binary(&[]).await;
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert!(caps.logging.is_some(), "the logging capability is declared");

    // Nothing is sent before the client asks.
    call(&client, "whoami", json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(recorder.logs.lock().unwrap().is_empty(), "{:?}", recorder.logs.lock().unwrap());

    client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.expect("logging/setLevel");
    call(&client, "whoami", json!({})).await;
    eventually("the whoami log message", || finished_logs(&recorder, "whoami") == 1).await;
    {
        let logs = recorder.logs.lock().unwrap();
        let m = logs.iter().find(|m| m.data["message"] == "whoami finished").unwrap();
        assert_eq!(m.level, LoggingLevel::Info);
        assert_eq!(m.logger.as_deref(), Some("workbench::mcp"));
        assert_eq!(m.data["error"], false);
        assert!(
            logs.iter().all(|m| m.logger.as_deref().is_some_and(|l| l.starts_with("workbench"))),
            "only workbench's own events go out, never rmcp's: {logs:?}"
        );
    }

    // Debug adds the per-execution events; error leaves info out.
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)).await.unwrap();
    call(&client, "execute_tools", json!({"executions": [{"tool": "time_get_current", "args": {}}]})).await;
    eventually("the debug event of the execution", || {
        recorder.logs.lock().unwrap().iter().any(|m| {
            m.level == LoggingLevel::Debug && m.data["message"] == "execution 1/1 finished: time_get_current ok"
        })
    })
    .await;
    // Token-shaped text never goes out, even in a message that quotes what the agent sent.
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    call(&client, "execute_tools", json!({"executions": [{"tool": token, "args": {}}]})).await;
    eventually("the event of the unknown tool", || {
        recorder
            .logs
            .lock()
            .unwrap()
            .iter()
            .any(|m| m.data["message"] == "execution 1/1 finished: [redacted] failed (TOOL_NOT_FOUND)")
    })
    .await;
    assert!(!format!("{:?}", recorder.logs.lock().unwrap()).contains(token));
    assert!(!format!("{:?}", recorder.progress.lock().unwrap()).contains(token), "nor in progress messages");
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.unwrap();
    call(&client, "whoami", json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(finished_logs(&recorder, "whoami"), 1, "info is below error");

    // A storm: 100 calls at once produce 100 info events; at most the burst (30) plus the refill
    // (10/s) go out, then one warning says how many were not sent.
    client.set_level(SetLevelRequestParams::new(LoggingLevel::Info)).await.unwrap();
    recorder.logs.lock().unwrap().clear();
    let client = Arc::new(client);
    let started = Instant::now();
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let c = client.clone();
            tokio::spawn(async move { call(&c, "whoami", json!({})).await })
        })
        .collect();
    for c in calls {
        c.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    eventually("the dropped-messages warning", || {
        recorder.logs.lock().unwrap().iter().any(|m| {
            m.level == LoggingLevel::Warning && m.data["message"].as_str().is_some_and(|s| s.contains("were not sent"))
        })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let sent = finished_logs(&recorder, "whoami");
    let bound = 30 + (elapsed * 10.0).ceil() as usize + 1;
    // Earlier messages used part of the burst; the bucket refills at 10 a second.
    assert!(sent >= 20 && sent <= bound, "{sent} of 100 sent in {elapsed:.2}s (bound {bound})");
    let reported: usize = recorder
        .logs
        .lock()
        .unwrap()
        .iter()
        .filter_map(|m| {
            m.data["message"]
                .as_str()?
                .strip_suffix(" log message(s) were not sent: workbench sends at most 30 at once and 10 a second")
                .map(str::to_string)
        })
        .map(|n| n.parse::<usize>().unwrap())
        .sum();
    assert_eq!(sent + reported, 100, "every message is either sent or counted as not sent");
}

const STRICT_NAME: &str = "^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$";

/// Keywords strict clients accept in a tool's input schema. Gemini's function declarations take
/// an OpenAPI 3.0 subset (no `$ref`/`$defs`, `$schema`, `anyOf`/`oneOf`/`allOf`, `const`, type
/// arrays); OpenAI wants a plain object root. `additionalProperties` appears only as `false`
/// (OpenAI strict mode requires it; Gemini clients strip it), `default` is an annotation both keep.
const PORTABLE_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "default",
    "additionalProperties",
];

/// Free-form objects by design (a tool's own arguments, a return template). Gemini's classic
/// `parameters` path wants properties on every object; its JSON Schema path (`parametersJsonSchema`,
/// what gemini-cli sends) and OpenAI accept an object without them.
const FREE_FORM: &[&str] = &["/properties/executions/items/properties/args", "/properties/return", "/properties/args"];

fn check_node(path: &str, s: &Value, problems: &mut Vec<String>) {
    let Some(obj) = s.as_object() else {
        problems.push(format!("{path}: not a schema object"));
        return;
    };
    for key in obj.keys() {
        if !PORTABLE_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{path}: keyword '{key}' is not portable"));
        }
    }
    let ty = obj.get("type").and_then(Value::as_str);
    match ty {
        Some("object" | "array" | "string" | "integer" | "number" | "boolean") => {}
        _ => problems.push(format!(
            "{path}: needs one type of object/array/string/integer/number/boolean, has {:?}",
            obj.get("type")
        )),
    }
    if let Some(ap) = obj.get("additionalProperties")
        && ap != &Value::Bool(false)
    {
        problems.push(format!("{path}: additionalProperties may only be false, is {ap}"));
    }
    if ty != Some("object") && (obj.contains_key("properties") || obj.contains_key("required")) {
        problems.push(format!("{path}: properties/required on a non-object"));
    }
    if ty == Some("array") {
        match obj.get("items") {
            Some(items) => check_node(&format!("{path}/items"), items, problems),
            None => problems.push(format!("{path}: an array needs items")),
        }
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array)
        && !values.iter().all(Value::is_string)
    {
        problems.push(format!("{path}: enum values must be strings"));
    }
    if ty == Some("object") {
        let props = obj.get("properties").and_then(Value::as_object);
        if props.is_none_or(|p| p.is_empty()) && !path.is_empty() && !FREE_FORM.contains(&path) {
            problems.push(format!("{path}: a nested object needs properties"));
        }
        for (name, p) in props.into_iter().flatten() {
            if p.get("description").and_then(Value::as_str).is_none_or(str::is_empty) {
                problems.push(format!("{path}/properties/{name}: no description"));
            }
            check_node(&format!("{path}/properties/{name}"), p, problems);
        }
        for r in obj.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !r.as_str().is_some_and(|r| props.is_some_and(|p| p.contains_key(r))) {
                problems.push(format!("{path}: required {r} is not a property"));
            }
        }
    }
}

fn portability_problems(profile: Profile) -> Vec<String> {
    let name_re = regex::Regex::new(STRICT_NAME).unwrap();
    let task_re = regex::Regex::new("^[A-Za-z0-9_.-]{1,64}$").unwrap();
    let mut problems = Vec::new();
    for tool in workbench::mcp::tools_for(profile) {
        let name = tool.name.to_string();
        if !task_re.is_match(&name) || !name_re.is_match(&name) {
            problems.push(format!("{name}: name is not portable"));
        }
        if tool.description.as_deref().is_none_or(str::is_empty) {
            problems.push(format!("{name}: no description"));
        }
        let schema = Value::Object((*tool.input_schema).clone());
        // OpenAI and Gemini: the root is a plain object (no combinators, enum or ref at the top).
        if schema["type"] != "object" || !schema["properties"].is_object() {
            problems.push(format!("{name}: the root must be type object with properties"));
        }
        let mut node = Vec::new();
        check_node("", &schema, &mut node);
        problems.extend(node.into_iter().map(|p| format!("{name}{p}")));
        if tool.output_schema.is_some() {
            problems.push(format!("{name}: outputSchema costs tokens in every tools/list"));
        }
    }
    problems
}

#[test]
fn tool_names_and_schemas_are_portable_to_strict_clients() {
    for profile in [Profile::Default, Profile::Runstack] {
        let problems = portability_problems(profile);
        assert!(problems.is_empty(), "{profile:?}:\n{}", problems.join("\n"));
    }
}

#[test]
fn the_portability_check_catches_what_strict_clients_reject() {
    let mut problems = Vec::new();
    let bad = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/x", "description": "ref"},
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "union"},
            "c": {"type": ["string", "null"], "description": "type array"},
            "d": {"type": "object", "additionalProperties": true, "description": "open map"},
            "e": {"type": "array", "description": "no items"},
            "f": {"description": "no type"},
            "g": {"type": "integer", "enum": [1, 2], "description": "number enum"}
        }
    });
    check_node("", &bad, &mut problems);
    for want in [
        "/properties/a: keyword '$ref'",
        "/properties/b: keyword 'anyOf'",
        "/properties/c: needs one type",
        "/properties/d: additionalProperties may only be false",
        "/properties/d: a nested object needs properties",
        "/properties/e: an array needs items",
        "/properties/f: needs one type",
        "/properties/g: enum values must be strings",
    ] {
        assert!(problems.iter().any(|p| p.starts_with(want)), "missing {want:?} in {problems:#?}");
    }
}
