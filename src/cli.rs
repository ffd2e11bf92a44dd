//! Terminal commands: the same meta-tools, engine, stores and pages the agent uses, driven from a
//! shell so a user can set up accounts and try tools before opening their agent.
//!
//! Each command returns its exit status (see [`exit`]). Results go to stdout (JSON for `tools`),
//! messages to stderr; progress is drawn on stderr only when stderr is a terminal.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::app::App;
use crate::clients::{self, Action, Client, Locations, Op};
use crate::engine::{self, Batch, Execution};
use crate::error::{ErrorCode, ToolFailure};
use crate::meta::connect::Connection;
use crate::meta::wait_for_connection::Finished;
use crate::meta::{self, Failure};

/// `println!` that ignores a closed stdout (`workbench status | head` must not panic).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Exit statuses of every command.
pub mod exit {
    /// Done.
    pub const OK: u8 = 0;
    /// The command ran and something failed: a tool error, a connection that did not finish, a
    /// doctor FAIL, a client config that was refused.
    pub const FAILED: u8 = 1;
    /// The command line or its input was wrong (unknown command or option, arguments that are
    /// not JSON); nothing was done.
    pub const USAGE: u8 = 2;
}

/// A one-line progress display on stderr, drawn only when stderr is a terminal, and only once the
/// work has taken long enough to be worth it.
pub struct StatusLine {
    enabled: bool,
    drawn: bool,
    started: Instant,
    frame: usize,
}

impl StatusLine {
    /// Work shorter than this shows nothing.
    const DELAY: Duration = Duration::from_millis(300);

    pub fn new() -> StatusLine {
        StatusLine { enabled: std::io::stderr().is_terminal(), drawn: false, started: Instant::now(), frame: 0 }
    }

    /// Redraws the line with `message` and the time since start.
    pub fn tick(&mut self, message: &str) {
        if !self.enabled || self.started.elapsed() < Self::DELAY {
            return;
        }
        const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
        self.frame = (self.frame + 1) % FRAMES.len();
        self.drawn = true;
        let secs = self.started.elapsed().as_secs();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{} {message} ({secs}s)", FRAMES[self.frame]);
        let _ = err.flush();
    }

    /// Clears the line, if anything was drawn.
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Default for StatusLine {
    fn default() -> Self {
        Self::new()
    }
}

fn print_json(v: &Value) {
    out!("{}", serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
}

/// Connects an integration from the terminal: prints the local page's URL and waits for it.
pub async fn connect(app: &Arc<App>, integration: &str) -> u8 {
    connect_account(app, integration, None, false).await
}

/// `workbench connect <integration> [--account NAME] [--default]`: connects (or reconnects) one
/// account; `--default` makes it the integration's default, at once when it is connected already
/// (no page), else once the page is completed. Only the user sets the default: the agent has no
/// tool for it.
pub async fn connect_account(app: &Arc<App>, integration: &str, account: Option<&str>, make_default: bool) -> u8 {
    if let Some(problem) = account.and_then(crate::auth::account_problem) {
        eprintln!("workbench: --account: {problem}");
        return exit::USAGE;
    }
    if make_default {
        let Some(i) = app.registry().integration(integration) else {
            eprintln!("workbench: unknown integration '{integration}'; `workbench status` lists them");
            return exit::FAILED;
        };
        let name = account.unwrap_or(crate::auth::DEFAULT_ACCOUNT);
        if app.accounts(i).iter().any(|a| a.name == name) {
            return set_default(app, i, name);
        }
    }
    let connection = meta::connect::run(app, meta::connect::Args::new(integration, account)).await;
    let code = finish_connect(app, integration, connection).await;
    if code == exit::OK
        && make_default
        && let Some(i) = app.registry().integration(integration)
    {
        return set_default(app, i, account.unwrap_or(crate::auth::DEFAULT_ACCOUNT));
    }
    code
}

/// Makes a stored account the integration's default (an environment-only account cannot be:
/// the default lives in SQLite with the stored accounts).
fn set_default(app: &Arc<App>, integration: &'static plugins::api::Integration, account: &str) -> u8 {
    match app.storage.set_default_account(integration.name, account) {
        Ok(true) => {
            out!("{}'s default account is now '{account}'.", integration.name);
            exit::OK
        }
        Ok(false) => {
            eprintln!(
                "workbench: '{account}' is not a stored account of {} (an account from environment variables cannot be made the default; connect it here first)",
                integration.name
            );
            exit::FAILED
        }
        Err(e) => {
            eprintln!("workbench: {e}");
            exit::FAILED
        }
    }
}

/// How often `workbench connect` looks whether the page was completed.
const CONNECT_POLL: Duration = Duration::from_millis(250);

async fn finish_connect(app: &Arc<App>, integration: &str, connection: Result<Connection, Failure>) -> u8 {
    let link = match connection {
        Err(failure) => {
            eprintln!("workbench: {}", failure.message());
            if let Some(near) = failure.nearest() {
                eprintln!("           did you mean '{near}'?");
            }
            return exit::FAILED;
        }
        Ok(Connection::Ready(ready)) => {
            out!("{}", ready.message);
            return exit::OK;
        }
        // Connected already: its tools work; the page would only replace the account.
        Ok(Connection::Link(link)) if link.existing.is_some() => {
            out!("{}", link.message);
            return exit::OK;
        }
        // An upstream MCP server's sign-in: its own page; the next call uses the token.
        Ok(Connection::Consent(consent)) => {
            out!("{}", consent.message);
            return exit::OK;
        }
        Ok(Connection::Link(link)) => link,
    };
    out!("Open this page to connect {integration}:\n\n    {}\n", link.url);
    if link.opened_in_browser {
        out!("(opened in your browser)");
    }
    let _ = std::io::stdout().flush();
    let mut line = StatusLine::new();
    let finished = meta::wait_for_connection::wait(app, &link.connection_id, None, CONNECT_POLL, |left| {
        let left = left.as_secs();
        line.tick(&format!("waiting for the page to be completed; the link expires in {}:{:02}", left / 60, left % 60));
    })
    .await;
    line.finish();
    match finished {
        Ok(Finished::Connected { account }) => {
            let who = account.map(|a| format!(" as {a}")).unwrap_or_default();
            out!("{integration} connected{who}.");
            exit::OK
        }
        Ok(Finished::Expired | Finished::TimedOut) => {
            out!("The link expired before the page was completed; run the command again.");
            exit::FAILED
        }
        Err(_) => {
            out!("The connection attempt is gone; run the command again.");
            exit::FAILED
        }
    }
}

/// Erases an integration's stored credential through `connection_delete_credentials` (so it is
/// audited, and the token is revoked at the provider where it has an endpoint for that).
pub async fn disconnect(app: &Arc<App>, integration: &str, revoke: bool) -> u8 {
    disconnect_account(app, integration, None, revoke).await
}

/// `workbench disconnect <integration> [--account NAME]`: erases one account (the default when
/// none is named); the oldest remaining account becomes the default if it was.
pub async fn disconnect_account(app: &Arc<App>, integration: &str, account: Option<&str>, revoke: bool) -> u8 {
    if app.registry().integration(integration).is_none() {
        eprintln!("workbench: unknown integration '{integration}'; `workbench status` lists them");
        return exit::FAILED;
    }
    use crate::builtins::connection::{self, DeleteCredentials, Disconnected};
    let args = DeleteCredentials {
        integration: integration.to_string(),
        revoke_remote: revoke,
        account: account.map(String::from),
    };
    // The user typed this command: no model is involved, so no safety policy asks.
    match connection::disconnect_by_user(app, args).await {
        Err(e) => {
            eprintln!("workbench: {}", app.exposed.text(&connection::message(&e)));
            return exit::FAILED;
        }
        Ok(Disconnected::Erased { account, erased: true, revoked, .. }) => {
            let revoked = match revoked {
                Some(true) => " and revoked its token at the provider",
                Some(false) => " (the provider did not confirm the token's revocation)",
                None => "",
            };
            let which = match account.as_str() {
                crate::auth::DEFAULT_ACCOUNT => String::new(),
                a => format!(" (account '{a}')"),
            };
            out!("{integration}{which} disconnected: erased the stored credential{revoked}.");
        }
        Ok(_) => out!("{integration} was not connected; nothing to erase."),
    }
    exit::OK
}

/// Prints integrations with their connection state and the stores in use.
pub fn status(app: &Arc<App>) -> u8 {
    out!("data directory: {}", app.settings.home.display());
    out!("secret store:   {} ({})", app.secrets.name(), app.secrets.describe());
    let answer = if app.secrets.locked() {
        "locked: type its passphrase on the unlock page a connect link opens, or run `workbench setup`".to_string()
    } else if app.secrets.name() == "memory" {
        "in memory: nothing is kept after this process".to_string()
    } else {
        match crate::secrets::probe(app.secrets.clone(), crate::doctor::STORE_DEADLINE) {
            Ok(()) => "answers".to_string(),
            Err(reason) => format!("DOES NOT ANSWER: {reason} (see `workbench doctor`)"),
        }
    };
    out!("store state:    {answer}");
    out!();
    out!("{:<18} {:<10} {:<12} account", "integration", "auth", "connected");
    let mut several = false;
    for i in app.registry().integrations() {
        let accounts = if crate::registry::is_public(i) { Vec::new() } else { app.accounts(i) };
        let state = |a: Option<&crate::auth::Account>| match a {
            _ if crate::registry::is_public(i) => "public",
            Some(a) if a.source == crate::auth::Source::Environment => "env",
            Some(_) => "yes",
            None => "no",
        };
        // One account named `default`: the line as it always was. Several (or a named one): one
        // line per account, `name: identity`, the default marked.
        if accounts.len() <= 1 && accounts.iter().all(|a| a.name == crate::auth::DEFAULT_ACCOUNT) {
            let identity = accounts.first().and_then(|a| a.identity.clone()).unwrap_or_default();
            out!("{:<18} {:<10} {:<12} {}", i.name, i.auth.kind.as_str(), state(accounts.first()), identity);
            continue;
        }
        several = true;
        for (n, a) in accounts.iter().enumerate() {
            let (name, kind) = if n == 0 { (i.name, i.auth.kind.as_str()) } else { ("", "") };
            let mark = if a.default { " (default)" } else { "" };
            let identity = a.identity.as_deref().map(|l| format!(": {l}")).unwrap_or_default();
            out!("{:<18} {:<10} {:<12} {}{mark}{identity}", name, kind, state(Some(a)), a.name);
        }
    }
    if several {
        out!();
        out!(
            "Change an integration's default account with `workbench connect <integration> --account <name> --default`."
        );
    }
    exit::OK
}

/// `tools search`: the agent's search_tools, as JSON.
pub async fn tools_search(app: &Arc<App>, query: &str, limit: u32) -> u8 {
    let args = meta::search_tools::Args { query: query.to_string(), limit: limit as usize };
    // As for the agent: servers pasted into config.json and never listed are listed first.
    app.upstream().list_unlisted(app).await;
    print_answer(meta::search_tools::run(app, args))
}

/// `tools schema`: the agent's get_tool_schema, as JSON.
pub async fn tools_schema(app: &Arc<App>, tool: &str) -> u8 {
    app.upstream().list_unlisted(app).await;
    print_answer(meta::get_tool_schema::run(app, meta::get_tool_schema::Args { tool: tool.to_string() }))
}

/// Prints a meta-tool's answer (or failure) as the agent would get it; the exit status says which.
fn print_answer<T: serde::Serialize>(result: Result<T, Failure>) -> u8 {
    let out = meta::answer(result);
    print_json(&out.body);
    if out.is_error { exit::FAILED } else { exit::OK }
}

/// Why a command-line JSON input (arguments or a batch) was not usable; nothing was run.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {what} from stdin: {source}")]
    Stdin { what: String, source: std::io::Error },
    #[error("cannot read {what} from {path}: {source}")]
    File { what: String, path: String, source: std::io::Error },
    #[error("{what}: not valid JSON ({source})")]
    Json { what: String, source: serde_json::Error },
    #[error("unknown key '{0}' (a batch has executions, compose and return)")]
    UnknownBatchKey(String),
    #[error("compose must be true or false, got {0}")]
    Compose(Value),
    #[error("a batch object needs \"executions\"")]
    NoExecutions,
    #[error("a batch is a list of executions or an object with \"executions\"")]
    NotABatch,
    #[error("executions: {0}")]
    Executions(serde_json::Error),
}

/// Reads a command-line JSON argument: the text itself, `-` for stdin, or `@FILE`.
pub fn read_json_arg(text: &str, what: &str) -> Result<Value, InputError> {
    let source = if text == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|source| InputError::Stdin { what: what.to_string(), source })?;
        s
    } else if let Some(path) = text.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|source| InputError::File {
            what: what.to_string(),
            path: path.to_string(),
            source,
        })?
    } else {
        text.to_string()
    };
    serde_json::from_str(&source).map_err(|source| InputError::Json { what: what.to_string(), source })
}

/// Turns a batch file's JSON into a batch: either a list of executions or execute_tools' own
/// arguments (`{executions, compose?, return?}`).
pub fn parse_batch(v: Value) -> Result<Batch, InputError> {
    let (executions, compose, ret) = match v {
        Value::Array(_) => (v, false, None),
        Value::Object(mut map) => {
            if let Some(k) = map.keys().find(|k| !matches!(k.as_str(), "executions" | "compose" | "return")) {
                return Err(InputError::UnknownBatchKey(k.clone()));
            }
            let compose = match map.remove("compose") {
                None => false,
                Some(Value::Bool(b)) => b,
                Some(other) => return Err(InputError::Compose(other)),
            };
            let executions = map.remove("executions").ok_or(InputError::NoExecutions)?;
            (executions, compose, map.remove("return"))
        }
        _ => return Err(InputError::NotABatch),
    };
    let executions: Vec<Execution> = serde_json::from_value(executions).map_err(InputError::Executions)?;
    Ok(Batch { executions, compose, ret })
}

/// Hooks for `tools call`: a write the safety policy holds is asked about on the terminal (y/N);
/// without a terminal to ask on, it is refused (CONFIRMATION_REQUIRED), never silently run.
fn terminal_hooks() -> engine::Hooks {
    use std::io::IsTerminal;
    engine::Hooks {
        approve: Some(Arc::new(|request: engine::policy::ApprovalRequest| {
            Box::pin(async move {
                if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
                    return engine::policy::Approval::Unavailable(
                        "there is no terminal to ask on (stdin is not a terminal)".into(),
                    );
                }
                let answer = tokio::task::spawn_blocking(move || {
                    eprint!("{}\nAllow? [y/N] ", request.summary);
                    let mut line = String::new();
                    let _ = std::io::stdin().read_line(&mut line);
                    line
                })
                .await
                .unwrap_or_default();
                if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
                    engine::policy::Approval::Approved
                } else {
                    engine::policy::Approval::Declined("the user answered no on the terminal".into())
                }
            })
        })),
        ..Default::default()
    }
}

/// Runs a batch through the engine, drawing progress on a terminal (executions finished, counted
/// from the audit rows the engine writes as each one ends) while it runs.
async fn run_batch(app: &Arc<App>, batch: Batch) -> engine::Batched {
    let total = batch.executions.iter().filter(|e| app.registry().get(&e.tool).is_some()).count();
    let run = {
        let app = app.clone();
        async move { engine::execute_with(&app, batch, &terminal_hooks()).await }
    };
    with_status_line(app, total, run).await.unwrap_or_else(|e| {
        engine::Batched::Refused(ToolFailure::new(ErrorCode::InternalError, format!("the batch task failed: {e}")))
    })
}

/// Runs `run` (executions of the engine) with a progress line on a TTY, counted from the audit
/// rows the executions leave.
async fn with_status_line<T: Send + 'static>(
    app: &Arc<App>,
    total: usize,
    run: impl Future<Output = T> + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let mut progress = StatusLine::new();
    if !progress.enabled || total == 0 {
        return Ok(run.await);
    }
    let last_id = |app: &Arc<App>| {
        let app = app.clone();
        async move {
            app.storage
                .call(|c| c.query_row("SELECT COALESCE(MAX(id), 0) FROM audit", [], |r| r.get::<_, i64>(0)))
                .await
        }
    };
    let start = last_id(app).await.unwrap_or(0);
    let task = tokio::spawn(run);
    tokio::pin!(task);
    loop {
        tokio::select! {
            done = &mut task => {
                progress.finish();
                return done;
            }
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                let done = last_id(app).await.map(|id| (id - start).max(0) as usize).unwrap_or(0).min(total);
                progress.tick(&format!("{done}/{total} executions finished"));
            }
        }
    }
}

/// `tools call <tool> <json>`: one execution; prints its result (or `{"error": ...}`) as JSON.
pub async fn tools_call(app: &Arc<App>, tool: &str, args: Value) -> u8 {
    if !args.is_object() {
        eprintln!("workbench: the arguments must be a JSON object, e.g. '{{\"query\": \"rust\"}}'");
        return exit::USAGE;
    }
    app.upstream().list_unlisted(app).await;
    let total = usize::from(app.registry().get(tool).is_some());
    let exec = Execution { tool: tool.to_string(), args, ref_id: None, account: None };
    let run = {
        let app = app.clone();
        async move { engine::execute_one(&app, exec, &terminal_hooks()).await }
    };
    let result = with_status_line(app, total, run)
        .await
        .unwrap_or_else(|e| Err(ToolFailure::new(ErrorCode::InternalError, format!("the batch task failed: {e}"))));
    match result {
        Ok(result) => {
            print_json(&result);
            exit::OK
        }
        Err(failure) => {
            let line = format!("workbench: {}: {}", failure.code.as_str(), failure.message);
            print_json(&meta::wire::failure(&Failure::Tool(failure)));
            eprintln!("{line}");
            exit::FAILED
        }
    }
}

/// `tools call --batch FILE`: a whole execute_tools batch; prints the response as the agent gets
/// it. Fails when the batch or any execution failed.
pub async fn tools_batch(app: &Arc<App>, batch: Batch) -> u8 {
    let out = run_batch(app, batch).await;
    print_json(&meta::wire::batch(app, &out).body);
    if out.any_failed() { exit::FAILED } else { exit::OK }
}

/// Why a binary path cannot go into a client config.
#[derive(Debug, thiserror::Error)]
pub enum CommandPathError {
    #[error("cannot tell where this binary is: {0}")]
    Unknown(std::io::Error),
    #[error("--command must be an absolute path, got {}", .0.display())]
    NotAbsolute(PathBuf),
    #[error("--command {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("{} is not valid UTF-8", .0.display())]
    NotUtf8(PathBuf),
}

/// The binary itself, as a client config should name it.
pub fn current_binary() -> Result<PathBuf, CommandPathError> {
    let exe = std::env::current_exe().map_err(CommandPathError::Unknown)?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// `clients register|unregister`: edits each chosen (or every installed) client's config and says
/// what it did. `explicit` means the user named the clients, so a missing one is a failure.
pub fn clients(op: Op<'_>, chosen: &[Client], dry_run: bool) -> u8 {
    let Some(loc) = Locations::from_env() else {
        eprintln!("workbench: HOME is not set, so client configs cannot be found");
        return exit::FAILED;
    };
    let explicit = !chosen.is_empty();
    let targets: Vec<Client> = if explicit { chosen.to_vec() } else { Client::ALL.to_vec() };
    let reports = clients::apply(&loc, &targets, op, dry_run);
    let mut failed = false;
    for r in &reports {
        let name = r.client.display();
        let path = r.path.display();
        match &r.action {
            Action::NotInstalled if explicit => {
                failed = true;
                out!("{name}: not found here ({path} and its folder are missing)");
            }
            Action::NotInstalled => out!("{name}: not installed, skipped"),
            Action::Unchanged => match op {
                Op::Register(_) => out!("{name}: already registered in {path}; nothing changed"),
                Op::Unregister => out!("{name}: no workbench entry in {path}; nothing changed"),
                Op::Replace(..) => out!("{name}: already as wanted in {path}; nothing changed"),
            },
            Action::Changed { summary, backup } => {
                if dry_run {
                    out!("{name}: would edit {path}: {summary} (after a backup)");
                    if let Some(diff) = &r.preview {
                        for line in diff.lines() {
                            out!("    {line}");
                        }
                    }
                } else {
                    let backup = backup.as_ref().map(|b| format!("; backup: {}", b.display())).unwrap_or_default();
                    out!("{name}: {summary} in {path}{backup}");
                    out!("    {} to use it", r.client.after_change());
                }
            }
            Action::Refused(why) => {
                failed = true;
                out!("{name}: REFUSED to edit {path}: {why}");
                out!("    The file was left exactly as it was. Fix it by hand, then run this again.");
            }
            Action::Failed(why) => {
                failed = true;
                out!("{name}: FAILED on {path}: {why}");
            }
        }
    }
    if !explicit
        && let Op::Register(command) = op
        && reports.iter().all(|r| r.action == Action::NotInstalled)
    {
        let entry = serde_json::to_string(&Client::Cursor.entry(command)).unwrap_or_default();
        out!("No MCP client found. To add workbench to one by hand, put this under \"mcpServers\":");
        out!("    \"workbench\": {entry}");
    }
    if dry_run {
        out!("(dry run: no file was changed)");
    }
    if failed { exit::FAILED } else { exit::OK }
}

/// Checks a `--command` path for registration: absolute, and present unless this is a dry run
/// (install.sh's dry run names the binary it would install).
pub fn registration_command(given: Option<&Path>, dry_run: bool) -> Result<String, CommandPathError> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => current_binary()?,
    };
    if !path.is_absolute() {
        return Err(CommandPathError::NotAbsolute(path));
    }
    if !dry_run && !path.is_file() {
        return Err(CommandPathError::Missing(path));
    }
    match path.to_str() {
        Some(p) => Ok(p.to_string()),
        None => Err(CommandPathError::NotUtf8(path)),
    }
}

/// `doctor`: every check, printed; the exit status says whether any FAILed.
pub fn doctor() -> u8 {
    let settings = crate::config::Settings::from_env();
    let app = settings.as_ref().ok().map(|s| App::new(s.clone()));
    let store = app.as_ref().map(|a| a.secrets.clone());
    let loc = Locations::from_env();
    out!("workbench {} doctor", env!("CARGO_PKG_VERSION"));
    let vars: std::collections::HashMap<String, String> = std::env::vars().collect();
    let mut checks = crate::doctor::run(&settings, store, loc.as_ref(), &vars);
    checks.extend(app.as_ref().and_then(|a| crate::doctor::upstream_servers(a)));
    crate::doctor::print(&checks, &mut std::io::stdout())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn batches_come_as_lists_or_execute_tools_arguments() {
        let b = parse_batch(json!([{"tool": "a", "args": {}}, {"tool": "b"}])).unwrap();
        assert_eq!(b.executions.len(), 2);
        assert!(!b.compose);
        let b =
            parse_batch(json!({"executions": [{"tool": "a", "ref_id": "x"}], "compose": true, "return": "{{step:x}}"}))
                .unwrap();
        assert!(b.compose);
        assert_eq!(b.ret, Some(json!("{{step:x}}")));
        let err = |v: Value| parse_batch(v).unwrap_err().to_string();
        assert_eq!(
            err(json!({"executions": [], "extra": 1})),
            "unknown key 'extra' (a batch has executions, compose and return)"
        );
        assert_eq!(err(json!({"compose": true})), "a batch object needs \"executions\"");
        assert_eq!(err(json!({"executions": [], "compose": 1})), "compose must be true or false, got 1");
        assert!(err(json!([{"tool": "a", "bogus": 1}])).contains("bogus"));
        assert!(parse_batch(json!("x")).is_err());
    }

    #[test]
    fn json_arguments_name_what_is_wrong() {
        assert_eq!(read_json_arg("{\"a\": 1}", "the arguments").unwrap(), json!({"a": 1}));
        let e = read_json_arg("{a: 1}", "the arguments").unwrap_err().to_string();
        assert!(e.starts_with("the arguments: not valid JSON (key must be a string"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.json");
        std::fs::write(&f, "[1]").unwrap();
        assert_eq!(read_json_arg(&format!("@{}", f.display()), "x").unwrap(), json!([1]));
        let e = read_json_arg("@/nonexistent/file", "x").unwrap_err().to_string();
        assert!(e.starts_with("cannot read x from /nonexistent/file: "), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// `workbench servers`: the user's other MCP servers behind workbench (src/upstream).

/// Why a server name cannot be used, if it cannot.
fn server_name_problem(name: &str) -> Option<String> {
    if !crate::upstream::config::valid_name(name) {
        return Some(format!(
            "'{name}' is not a usable server name ({}); try '{}'",
            crate::upstream::config::NAME_RULE,
            crate::upstream::config::clean_name(name)
        ));
    }
    let compiled = crate::registry::Registry::standard();
    if compiled.reserved_namespace(name) || matches!(name, "vault" | "custom" | "connection" | "curl" | "workbench") {
        return Some(format!("'{name}' is taken by workbench's own tools; call it '{name}_mcp' instead"));
    }
    None
}

/// Why `servers add` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ServerAddError {
    /// The name cannot be used (the text says why and what to use instead).
    #[error("{0}")]
    Name(String),
    #[error("give the server's command after --, e.g. workbench servers add clock -- uvx mcp-server-time")]
    NoCommand,
    #[error(transparent)]
    Settings(#[from] crate::config::ConfigError),
    /// config.json could not be edited.
    #[error(transparent)]
    Config(#[from] crate::upstream::config::EditError),
}

/// `servers add NAME -- CMD ARGS...` (or `-- URL` for a Streamable HTTP server): writes the entry
/// to config.json (atomically, other keys kept). Returns the data directory.
pub fn servers_add_config(name: &str, command: &[String]) -> Result<PathBuf, ServerAddError> {
    if let Some(p) = server_name_problem(name) {
        return Err(ServerAddError::Name(p));
    }
    let Some((program, args)) = command.split_first() else {
        return Err(ServerAddError::NoCommand);
    };
    let settings = crate::config::Settings::from_env()?;
    let entry = if args.is_empty() && (program.starts_with("http://") || program.starts_with("https://")) {
        crate::upstream::ServerConfig::Http {
            url: program.clone(),
            headers: Default::default(),
            effects: Default::default(),
        }
    } else {
        crate::upstream::ServerConfig::Stdio {
            command: program.clone(),
            args: args.to_vec(),
            env: Default::default(),
            effects: Default::default(),
        }
    };
    crate::upstream::config::edit_config(&settings.home, |servers| {
        servers.insert(name.to_string(), entry.to_value());
        Ok(())
    })
    .map_err(ServerAddError::Config)?;
    Ok(settings.home)
}

/// After `servers add`: starts the server once to cache its tool list, then stops it.
pub async fn servers_fetch(app: &Arc<App>, name: &str) -> u8 {
    out!("{name}: added to {}", app.settings.home.join("config.json").display());
    let result = app.upstream().ensure_started(app, name).await;
    app.upstream().shutdown().await;
    // The definitions listed now are the ones the user accepted by adding the server.
    if result.is_ok()
        && let Err(e) = app.upstream().accept(&app.storage, name)
    {
        out!("{name}: its tool definitions could not be pinned: {e}");
    }
    match result {
        Ok(n) => {
            out!("{name}: started, {n} tool(s) listed and cached; they are searchable now as {name}_*");
            out!("    restart your MCP client (or workbench) so a running workbench picks the server up");
            exit::OK
        }
        Err(e) => {
            out!("{name}: FAILED to start: {e}");
            out!(
                "    the entry stays in config.json; fix the command and run `workbench servers add` again, or `workbench servers remove {name}`"
            );
            exit::FAILED
        }
    }
}

/// `servers list`: every configured server with its state, tool count and last error.
pub fn servers_list(app: &Arc<App>) -> u8 {
    let upstreams = app.upstream();
    let configs = upstreams.configs();
    if configs.is_empty() {
        out!("No upstream MCP servers. Add one with `workbench servers add NAME -- COMMAND ARGS...`");
        out!("or bring over the ones your MCP clients run with `workbench servers import`.");
        return exit::OK;
    }
    let cached: std::collections::HashMap<String, crate::storage::UpstreamListing> =
        app.storage.upstream_listings().unwrap_or_default().into_iter().map(|l| (l.server.clone(), l)).collect();
    let pending = upstreams.pending(&app.storage);
    let registry = app.registry();
    let collisions = registry.upstream_collisions();
    let exposed: std::collections::HashMap<(&str, &str), &str> = registry
        .tools()
        .iter()
        .filter_map(|t| t.upstream().map(|u| ((u.server.as_str(), u.tool.as_str()), t.name)))
        .collect();
    let mut failed = false;
    for (name, config) in configs.iter() {
        match config {
            Err(e) => {
                failed = true;
                out!("{name}: INVALID entry in config.json: {e}");
            }
            Ok(c) => {
                let status = app.upstream().status(name);
                let state = if status.running {
                    format!("running (pid {})", status.pid.map(|p| p.to_string()).unwrap_or_default())
                } else {
                    "not running (starts on first use)".to_string()
                };
                let tools = match cached.get(name) {
                    Some(l) => {
                        let n = serde_json::from_str::<Value>(&l.tools).ok().and_then(|v| v.as_array().map(Vec::len));
                        format!("{} tool(s), listed {}", n.unwrap_or(0), l.listed_at)
                    }
                    None => "no tools listed yet".to_string(),
                };
                out!("{name}: {state}; {tools}");
                out!("    {}", c.describe());
                if let Some(problem) = server_name_problem(name) {
                    out!("    NOT OFFERED: {problem}");
                }
                // Each tool: the name it is offered as and the effect it is treated with.
                let waiting = pending.get(name.as_str());
                let listed = cached
                    .get(name)
                    .and_then(|l| serde_json::from_str::<Value>(&l.tools).ok())
                    .and_then(|v| v.as_array().cloned())
                    .unwrap_or_default();
                for t in &listed {
                    let Some(tool) = t.get("name").and_then(Value::as_str) else { continue };
                    let (effect, why) = crate::upstream::effect_of(Some(c), t);
                    let offered = match waiting.and_then(|w| w.iter().find(|ch| ch.tool == tool)) {
                        Some(ch) => format!("WAITING FOR REVIEW ({})", ch.describe()),
                        None => exposed.get(&(name.as_str(), tool)).map_or_else(
                            || "NOT OFFERED (see the name clash below)".to_string(),
                            |n| format!("offered as {n}"),
                        ),
                    };
                    out!(
                        "    tool {tool}: {offered}; effect {} ({})",
                        crate::upstream::effect_word(effect),
                        why.describe()
                    );
                }
                if let Some(w) = waiting {
                    out!(
                        "    {} change(s) waiting: run `workbench servers review {name}` to see them and accept them",
                        w.len()
                    );
                }
                for clash in collisions.iter().filter(|cl| cl.tools.iter().any(|(s, _)| s == name)) {
                    out!("    NAME CLASH: {}", clash.describe());
                }
                if let Some(e) = status.last_error.or_else(|| cached.get(name).and_then(|l| l.last_error.clone())) {
                    out!("    last error: {e}");
                }
            }
        }
    }
    if failed { exit::FAILED } else { exit::OK }
}

/// `servers review [NAME] [--accept]`: the tools whose definitions a server changed since the user
/// accepted them (or added), with what changed; `--accept` accepts NAME's current definitions.
pub fn servers_review(app: &Arc<App>, name: Option<&str>, accept: bool) -> u8 {
    let pending = app.upstream().pending(&app.storage);
    let configs = app.upstream().configs();
    if let Some(n) = name
        && !matches!(configs.get(n), Some(Ok(_)))
    {
        out!("{n}: not configured (`workbench servers list` shows the configured ones)");
        return exit::FAILED;
    }
    let chosen: Vec<(&String, &Vec<crate::upstream::pins::Change>)> =
        pending.iter().filter(|(s, _)| name.is_none_or(|n| n == s.as_str())).collect();
    if chosen.is_empty() {
        match name {
            Some(n) => out!("{n}: no changes waiting; its tools are the definitions you accepted"),
            None => out!("No changes waiting: every upstream tool is the definition you accepted."),
        }
        return exit::OK;
    }
    let text = |v: &Value, key: &str| -> String {
        let t = v.get(key).map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)).unwrap_or_default();
        plugins::api::truncate_chars(&app.exposed.text(&t), 400).0
    };
    for (server, changes) in &chosen {
        let config = configs.get(*server).and_then(|c| c.as_ref().ok());
        out!("{server}: {} tool(s) waiting for your review (not searchable or callable until accepted)", changes.len());
        for ch in changes.iter() {
            let (effect, why) = crate::upstream::effect_of(config, &ch.now);
            out!(
                "  tool {}: {}; effect {} ({})",
                ch.tool,
                ch.describe(),
                crate::upstream::effect_word(effect),
                why.describe()
            );
            if let Some(was) = &ch.was {
                for key in ["description", "inputSchema", "annotations"] {
                    if was.get(key) != ch.now.get(key) {
                        out!("    {key} was: {}", text(was, key));
                        out!("    {key} now: {}", text(&ch.now, key));
                    }
                }
            } else {
                out!("    description: {}", text(&ch.now, "description"));
            }
        }
    }
    if !accept {
        out!("To accept a server's current tools: workbench servers review NAME --accept");
        return exit::OK;
    }
    let Some(server) = name else { return exit::USAGE };
    match app.upstream().accept(&app.storage, server) {
        Ok(n) => {
            out!("{server}: accepted {n} change(s); its tools are offered as listed now");
            exit::OK
        }
        Err(e) => {
            out!("{server}: could not record the acceptance: {e}");
            exit::FAILED
        }
    }
}

/// `servers remove NAME`: takes it out of config.json and forgets its cached tools.
pub async fn servers_remove(app: &Arc<App>, name: &str) -> u8 {
    let mut found = false;
    let edited = crate::upstream::config::edit_config(&app.settings.home, |servers| {
        found = servers.remove(name).is_some();
        Ok(())
    });
    if let Err(e) = edited {
        out!("workbench: {e}");
        return exit::FAILED;
    }
    let _ = app.storage.delete_upstream_listing(name.to_string()).await;
    let _ = app.storage.delete_upstream_pins(name);
    if found {
        out!("{name}: removed from {}", app.settings.home.join("config.json").display());
        exit::OK
    } else {
        out!("{name}: not configured; nothing changed (`workbench servers list` shows the configured ones)");
        exit::FAILED
    }
}

/// One server another client runs, as `servers import` offers it.
#[derive(Debug, Clone)]
pub struct Offer {
    pub client: Client,
    /// Its name in the client's config.
    pub original: String,
    /// The name it gets in workbench.
    pub name: String,
    pub config: Result<crate::upstream::ServerConfig, crate::upstream::config::EntryError>,
}

/// The servers registered in the installed clients' configs that workbench does not have yet.
pub fn import_offers(loc: &Locations, chosen: &[Client], have: &dyn Fn(&str) -> bool) -> Vec<Offer> {
    let targets: Vec<Client> = if chosen.is_empty() { Client::ALL.to_vec() } else { chosen.to_vec() };
    let mut offers: Vec<Offer> = Vec::new();
    for client in targets {
        let Ok(text) = std::fs::read_to_string(loc.config_path(client)) else { continue };
        let Ok(servers) = clients::other_servers(&text) else { continue };
        for (original, entry) in servers {
            let mut name = crate::upstream::config::clean_name(&original);
            if server_name_problem(&name).is_some() {
                name = crate::upstream::config::clean_name(&format!("{name}_mcp"));
            }
            if have(&name) || offers.iter().any(|o| o.name == name) {
                continue;
            }
            offers.push(Offer { client, original, name, config: crate::upstream::ServerConfig::parse(&entry) });
        }
    }
    offers
}

/// `servers import [--yes] [--replace]`: offers the servers Claude Desktop, Cursor and Claude
/// Code run, adds the chosen ones to config.json, and with `--replace` removes them from those
/// clients' configs (registering workbench there instead; backup + byte-exact splice).
/// Returns the exit status and the names added (whose tools `servers_fetch_all` lists next).
pub fn servers_import(chosen: &[Client], yes: bool, replace: bool, dry_run: bool) -> (u8, Vec<String>) {
    let mut added = Vec::new();
    let status = import_inner(chosen, yes, replace, dry_run, &mut added);
    (status, added)
}

/// Starts each named server once to cache its tool list (so its tools are searchable and callable
/// at once), then stops them all.
pub async fn servers_fetch_all(app: &Arc<App>, names: &[String]) -> u8 {
    let mut status = exit::OK;
    for name in names {
        match app.upstream().ensure_started(app, name).await {
            Ok(n) => {
                out!("{name}: {n} tool(s) listed and cached");
                if let Err(e) = app.upstream().accept(&app.storage, name) {
                    out!("{name}: its tool definitions could not be pinned: {e}");
                }
            }
            Err(e) => {
                status = exit::FAILED;
                out!("{name}: FAILED to start: {e} (it stays configured; `workbench servers list` shows it)");
            }
        }
    }
    app.upstream().shutdown().await;
    status
}

fn import_inner(chosen: &[Client], yes: bool, replace: bool, dry_run: bool, added: &mut Vec<String>) -> u8 {
    let Some(loc) = Locations::from_env() else {
        eprintln!("workbench: HOME is not set, so client configs cannot be found");
        return exit::FAILED;
    };
    let settings = match crate::config::Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let offers = import_offers(&loc, chosen, &|n| settings.mcp_servers.contains_key(n));
    if offers.is_empty() {
        out!("No MCP servers to import: the clients' configs list none that workbench does not already have.");
        return exit::OK;
    }
    out!("MCP servers registered in your clients:");
    for o in &offers {
        let rename = if o.name != o.original { format!(" (as {})", o.name) } else { String::new() };
        match &o.config {
            Ok(c) => out!("  {}{rename} from {}: {}", o.original, o.client.display(), c.describe()),
            Err(e) => out!("  {}{rename} from {}: SKIPPED ({e})", o.original, o.client.display()),
        }
    }
    let usable: Vec<&Offer> = offers.iter().filter(|o| o.config.is_ok()).collect();
    if usable.is_empty() {
        out!("None of them can be imported as they are; nothing was changed.");
        return exit::OK;
    }
    if dry_run {
        out!("(dry run: nothing was changed)");
        return exit::OK;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            out!(
                "Run `workbench servers import --yes` to add them (add --replace to also move them out of the clients' configs)."
            );
            return exit::OK;
        }
        out!("Add these {} server(s) to workbench? [y/N] ", usable.len());
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            out!("Nothing was changed.");
            return exit::OK;
        }
    }
    let edited = crate::upstream::config::edit_config(&settings.home, |servers| {
        for o in &usable {
            if let Ok(c) = &o.config {
                servers.insert(o.name.clone(), c.to_value());
            }
        }
        Ok(())
    });
    if let Err(e) = edited {
        out!("workbench: {e}");
        return exit::FAILED;
    }
    added.extend(usable.iter().map(|o| o.name.clone()));
    out!(
        "Added {} server(s) to {}; listing their tools once:",
        usable.len(),
        settings.home.join("config.json").display()
    );
    if !replace {
        out!(
            "Your clients still run them directly; `workbench servers import --replace --yes` moves them behind workbench."
        );
        return exit::OK;
    }
    let command = match registration_command(None, false) {
        Ok(c) => c,
        Err(e) => {
            out!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let mut status = exit::OK;
    for client in Client::ALL {
        let moved: Vec<String> = usable.iter().filter(|o| o.client == client).map(|o| o.original.clone()).collect();
        if moved.is_empty() {
            continue;
        }
        if clients(Op::Replace(&command, &moved), &[client], false) != exit::OK {
            status = exit::FAILED;
        }
    }
    status
}
