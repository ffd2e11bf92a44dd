//! A Rust MCP client for workbench, built on rmcp's client over a child process.
//!
//! ```text
//! cargo build && cargo run --example client
//! WORKBENCH_BIN=/path/to/workbench cargo run --example client
//! ```
//!
//! It starts the server with a throwaway WORKBENCH_HOME, connects (initialize, protocol
//! 2025-11-25), lists the meta-tools, searches the catalogue, inspects the top hit's schema and
//! runs a two-step compose batch with `return` using only built-ins, so it works offline: the time
//! in Tokyo, then a JMESPath query that keeps two fields of it. Only the projection comes back.
//! rmcp puts a progress token on every request, so the server reports each finished step.
//!
//! The work is [`run`], which the integration tests call too (tests/it/client_example.rs).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

/// The client side: who we are, and what the server reported while working.
#[derive(Clone, Default)]
pub struct ExampleClient {
    pub progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for ExampleClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("workbench-client-example", "0.1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(&self, p: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let line = format!("{}/{} {}", p.progress, p.total.unwrap_or(0.0), p.message.unwrap_or_default());
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }
}

/// What one run saw.
#[derive(Debug)]
pub struct Report {
    pub server: String,
    pub tools: Vec<String>,
    pub top_hit: String,
    pub schema_properties: Vec<String>,
    /// The `result` of the compose batch: exactly the `return` projection.
    pub result: Value,
    /// Progress notifications received during the batch (`done/total message`).
    pub progress: Vec<String>,
}

/// The tool result's JSON: `structuredContent` when present, else the text block parsed.
fn body(result: &rmcp::model::CallToolResult) -> anyhow::Result<Value> {
    if let Some(v) = &result.structured_content {
        return Ok(v.clone());
    }
    let text = result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
    Ok(serde_json::from_str(&text)?)
}

async fn call(
    client: &rmcp::service::RunningService<RoleClient, ExampleClient>,
    tool: &'static str,
    args: Value,
) -> anyhow::Result<Value> {
    let Value::Object(args) = args else { anyhow::bail!("arguments must be an object") };
    let result = client.call_tool(CallToolRequestParams::new(tool).with_arguments(args)).await?;
    let value = body(&result)?;
    if result.is_error == Some(true) {
        anyhow::bail!("{tool} failed: {value}");
    }
    Ok(value)
}

/// Connects to the `binary` with its data in `home`, then discover -> inspect -> run.
pub async fn run(binary: &Path, home: &Path, verbose: bool) -> anyhow::Result<Report> {
    let say = |line: String| {
        if verbose {
            println!("{line}");
        }
    };
    let command = tokio::process::Command::new(binary).configure(|c| {
        c.env("WORKBENCH_HOME", home);
    });
    let handler = ExampleClient::default();
    let client = handler.clone().serve(TokioChildProcess::new(command)?).await?;
    let server = client
        .peer_info()
        .and_then(|i| i.server_info.clone())
        .map(|s| format!("{} {}", s.name, s.version))
        .unwrap_or_default();
    say(format!("connected to {server}"));

    let tools: Vec<String> = client.list_all_tools().await?.into_iter().map(|t| t.name.to_string()).collect();
    say(format!("meta-tools: {}", tools.join(", ")));

    let found = call(&client, "search_tools", json!({ "query": "what time is it in tokyo", "limit": 3 })).await?;
    for hit in found["tools"].as_array().into_iter().flatten() {
        say(format!("  {:<28} score {}", hit["name"].as_str().unwrap_or("?"), hit["score"]));
    }
    let top_hit = found["tools"][0]["name"].as_str().unwrap_or_default().to_string();

    let schema = call(&client, "get_tool_schema", json!({ "tool": "time_get_current" })).await?;
    let schema_properties: Vec<String> =
        schema["schema"]["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    say(format!("time_get_current takes: {}", schema_properties.join(", ")));

    let out = call(
        &client,
        "execute_tools",
        json!({
            "compose": true,
            "executions": [
                { "ref_id": "now", "tool": "time_get_current", "args": { "timezone": "Asia/Tokyo" } },
                {
                    "ref_id": "pick",
                    "tool": "data_query_json",
                    "args": { "data": "{{step:now.now}}", "expression": "{zone: timezone, weekday: weekday}" }
                }
            ],
            "return": { "tokyo": "{{step:pick.result}}", "local_time": "{{step:now.now.local}}" }
        }),
    )
    .await?;
    let result = out["result"].clone();
    say(format!("compose result: {result}"));
    let progress = handler.progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for p in &progress {
        say(format!("  progress {p}"));
    }
    client.cancel().await?;
    Ok(Report { server, tools, top_hit, schema_properties, result, progress })
}

fn binary() -> PathBuf {
    match std::env::var_os("WORKBENCH_BIN") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/debug/workbench"),
    }
}

#[allow(dead_code)] // the integration tests include this file for `run` only
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let binary = binary();
    anyhow::ensure!(
        binary.is_file(),
        "{} does not exist; run `cargo build` first or set WORKBENCH_BIN",
        binary.display()
    );
    let home = tempfile::tempdir()?;
    run(&binary, home.path(), true).await?;
    Ok(())
}
