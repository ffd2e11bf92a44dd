//! Drive the workbench binary over stdio by hand: newline-delimited JSON-RPC, no MCP library.
//!
//! ```text
//! cargo build && cargo run --example drive [-- path/to/workbench]
//! ```
//!
//! It starts the server with a throwaway WORKBENCH_HOME, does the MCP handshake, searches for a
//! tool, reads its schema, and runs a two-step compose (the time in Tokyo, then a Markdown table of
//! it) that sends back only the table. Every message is printed, so this doubles as a wire-level
//! tour of what an MCP client does.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};

use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

/// A minimal MCP client over a child process's stdin/stdout.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn spawn(binary: &Path, home: &Path) -> Result<Session, Error> {
        let mut child = Command::new(binary)
            .env("WORKBENCH_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout pipe")?);
        Ok(Session { child, stdin: Some(stdin), stdout, next_id: 1 })
    }

    fn send(&mut self, message: &Value) -> Result<(), Error> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        let mut line = serde_json::to_string(message)?;
        line.push('\n');
        stdin.write_all(line.as_bytes())?;
        stdin.flush()?;
        Ok(())
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), Error> {
        println!("→ {method} (notification)");
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// Sends a request and returns its `result`, answering or skipping whatever arrives first.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err(format!("the server closed stdout while we waited for the {method} response").into());
            }
            let Ok(message) = serde_json::from_str::<Value>(line.trim()) else {
                eprintln!("(skipping a non-JSON line on stdout: {})", line.trim());
                continue;
            };
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id") {
                    // A request from the server (e.g. ping): an empty result is always acceptable.
                    let reply = json!({ "jsonrpc": "2.0", "id": request_id, "result": {} });
                    self.send(&reply)?;
                }
                continue;
            }
            if message.get("id") != Some(&json!(id)) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{method} failed: {error}").into());
            }
            return Ok(message.get("result").cloned().unwrap_or(Value::Null));
        }
    }

    /// tools/call; returns the parsed JSON of the single text block and the isError flag.
    fn call_tool(&mut self, name: &str, arguments: Value) -> Result<(Value, bool), Error> {
        println!("\n→ tools/call {name} {}", serde_json::to_string(&arguments)?);
        let result = self.request("tools/call", json!({ "name": name, "arguments": arguments }))?;
        let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
        let text = result
            .pointer("/content/0/text")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{name} returned no text content: {result}"))?;
        let body: Value = serde_json::from_str(text)?;
        Ok((body, is_error))
    }

    /// Closes stdin (the server's cue to exit) and waits for it.
    fn finish(mut self) -> Result<(), Error> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        println!("\nserver exited: {status}");
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            drop(self.stdin.take());
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn run(binary: PathBuf, home: PathBuf) -> Result<(), Error> {
    println!("workbench binary: {}", binary.display());
    println!("WORKBENCH_HOME:   {}\n", home.display());
    let mut s = Session::spawn(&binary, &home)?;

    // 1. The handshake.
    println!("→ initialize (protocolVersion 2025-11-25)");
    let init = s.request(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "workbench-drive-example", "version": "0.1.0" }
        }),
    )?;
    println!(
        "← {} {} speaks protocol {}",
        init.pointer("/serverInfo/name").and_then(Value::as_str).unwrap_or("?"),
        init.pointer("/serverInfo/version").and_then(Value::as_str).unwrap_or("?"),
        init.get("protocolVersion").and_then(Value::as_str).unwrap_or("?"),
    );
    s.notify("notifications/initialized", json!({}))?;

    // 2. Discover.
    let (found, is_error) = s.call_tool("search_tools", json!({ "query": "current time in another timezone" }))?;
    if is_error {
        return Err(format!("search_tools failed: {found}").into());
    }
    let hits = found.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    for hit in hits.iter().take(5) {
        println!(
            "← {:<34} score {:<6} {}",
            hit.get("name").and_then(Value::as_str).unwrap_or("?"),
            hit.get("score").map(Value::to_string).unwrap_or_default(),
            hit.get("integration").and_then(Value::as_str).unwrap_or(""),
        );
    }
    let top = hits
        .first()
        .and_then(|h| h.get("name"))
        .and_then(Value::as_str)
        .ok_or("search_tools found nothing")?
        .to_string();
    if top != "time_get_current" {
        println!("(note: the top hit is {top}, not time_get_current; the compose below still uses time_get_current)");
    }

    // 3. Inspect.
    let (schema, is_error) = s.call_tool("get_tool_schema", json!({ "tool": top }))?;
    if is_error {
        return Err(format!("get_tool_schema failed: {schema}").into());
    }
    if let Some(props) = schema.pointer("/schema/properties").and_then(Value::as_object) {
        for (name, prop) in props {
            println!("← {name:<16} {}", prop.get("description").and_then(Value::as_str).unwrap_or(""));
        }
    }

    // 4. Run: two steps in order; only the return template comes back.
    let (out, is_error) = s.call_tool(
        "execute_tools",
        json!({
            "executions": [
                { "tool": "time_get_current", "ref_id": "now", "args": { "timezone": "Asia/Tokyo" } },
                {
                    "tool": "data_convert_csv",
                    "ref_id": "csv",
                    "args": {
                        "input": [{ "zone": "Asia/Tokyo", "local": "{{step:now.now.local}}" }],
                        "to": "markdown"
                    }
                }
            ],
            "compose": true,
            "return": "{{step:csv.markdown}}"
        }),
    )?;
    if is_error {
        return Err(format!("execute_tools failed:\n{}", pretty(&out)).into());
    }
    match out.get("result").and_then(Value::as_str) {
        Some(table) => println!("← result (the Markdown table, nothing else):\n\n{table}"),
        None => println!("← {}", pretty(&out)),
    }

    s.finish()
}

fn main() -> ExitCode {
    let binary = match std::env::args_os().nth(1) {
        Some(path) => PathBuf::from(path),
        None => {
            let relative = PathBuf::from("target/debug/workbench");
            if relative.exists() { relative } else { PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative) }
        }
    };
    if !binary.is_file() {
        eprintln!(
            "drive: {} does not exist; build it first with `cargo build`, or pass the binary's path",
            binary.display()
        );
        return ExitCode::from(2);
    }
    let home = std::env::temp_dir().join(format!("workbench-drive-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&home) {
        eprintln!("drive: cannot create {}: {e}", home.display());
        return ExitCode::FAILURE;
    }
    let outcome = run(binary, home.clone());
    let _ = std::fs::remove_dir_all(&home);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("drive: {e}");
            ExitCode::FAILURE
        }
    }
}
