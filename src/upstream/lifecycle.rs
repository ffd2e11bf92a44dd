//! Starting, reusing and restarting a server: its connection slot, the backoff after failures, a
//! stdio process (spawned with its environment resolved for `mcp:<server>`) or a Streamable HTTP
//! session, and the tail of its stderr kept for error messages.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use config::ServerConfig;

use crate::app::App;
use crate::mcp_client::{self as client, Client, ConnectError, Transport};

use super::*;
impl Upstreams {
    pub(super) fn slot(&self, server: &str) -> Arc<Slot> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).entry(server.to_string()).or_default().clone()
    }

    /// This process's view of a server (nothing is started).
    pub fn status(&self, server: &str) -> Status {
        let slot = self.slots.lock().unwrap_or_else(|p| p.into_inner()).get(server).cloned();
        slot.map(|s| s.status.lock().unwrap_or_else(|p| p.into_inner()).clone()).unwrap_or_default()
    }

    /// Starts `server` if needed (and lists its tools); returns how many tools it has.
    pub async fn ensure_started(&self, app: &Arc<App>, server: &str) -> Result<usize, StartError> {
        self.refresh_config();
        self.connection(app, server).await?;
        let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        Ok(listings.get(server).map_or(0, catalogue::Listing::len))
    }

    /// Ends every running server: stdin closed, then SIGTERM, then kill (rmcp's shutdown order).
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<Slot>> = self.slots.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        for slot in slots {
            let conn = slot.conn.lock().await.take();
            if let Some(conn) = conn
                && let Ok(conn) = Arc::try_unwrap(conn)
            {
                conn.client.close().await;
            }
        }
    }

    /// The running connection to `server`, started (or restarted) here if needed.
    pub(super) async fn connection(&self, app: &Arc<App>, server: &str) -> Result<Arc<Conn>, StartError> {
        let slot = self.slot(server);
        let mut guard = slot.conn.lock().await;
        if let Some(conn) = guard.as_ref() {
            if !conn.closed() {
                return Ok(conn.clone());
            }
            let tail = conn.stderr_tail();
            let error =
                format!("it exited{}", if tail.is_empty() { String::new() } else { format!(" (stderr: {tail})") });
            self.failed(app, &slot, server, error).await;
            *guard = None;
        }
        let retry_in = {
            let status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
            status.retry_at.and_then(|at| at.checked_duration_since(Instant::now())).map(|d| (d, status.clone()))
        };
        if let Some((wait, status)) = retry_in {
            return Err(StartError::Backoff {
                server: server.to_string(),
                failures: status.failures,
                last: status.last_error.unwrap_or_default(),
                wait_secs: wait.as_secs().max(1),
            });
        }
        match self.start(app, server).await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                {
                    let mut status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
                    status.running = true;
                    status.pid = conn.pid;
                    status.starts += 1;
                }
                *guard = Some(conn.clone());
                Ok(conn)
            }
            Err(e) => {
                let e = app.exposed.text(&e.to_string());
                self.failed(app, &slot, server, e.clone()).await;
                Err(StartError::NotStarted { server: server.to_string(), reason: e })
            }
        }
    }

    async fn failed(&self, app: &App, slot: &Slot, server: &str, error: String) {
        let error = app.exposed.text(&error);
        {
            let mut status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
            status.running = false;
            status.pid = None;
            status.failures += 1;
            status.last_error = Some(error.clone());
            // One failure may restart at once (a crash); repeated ones wait, doubling.
            status.retry_at = (status.failures >= 2).then(|| {
                let wait = Duration::from_secs(1u64 << (status.failures - 2).min(6)).min(MAX_BACKOFF);
                Instant::now() + wait
            });
        }
        tracing::warn!(server, error = %error, "upstream server failed");
        if let Err(e) = app.storage.set_upstream_error(server.to_string(), error).await {
            tracing::debug!(error = %e, "could not record the upstream error");
        }
    }

    pub(super) fn succeeded(&self, server: &str) {
        let slot = self.slot(server);
        let mut status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
        status.failures = 0;
        status.retry_at = None;
    }

    /// Connects to the server (spawns it, or opens its Streamable HTTP session), does the MCP
    /// handshake and reads its tool list.
    async fn start(&self, app: &Arc<App>, server: &str) -> Result<Conn, ConnError> {
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let configs = self.configs();
        let http = matches!(configs.get(server), Some(Ok(ServerConfig::Http { .. })));
        let mut reading = None;
        let (pid, transport) = match configs.get(server) {
            Some(Ok(ServerConfig::Stdio { command, args, env, .. })) => {
                let mut stdio = self.spawn(app, server, command, args, env).await?;
                if let Some(stderr) = stdio.stderr.take() {
                    let task = read_stderr(stderr, tail.clone(), server.to_string(), Arc::downgrade(app));
                    reading = Some(tokio::spawn(task));
                }
                (stdio.pid, Transport::Stdio(stdio))
            }
            Some(Ok(ServerConfig::Http { url, headers, .. })) => {
                (None, http_transport(app, server, url, headers).await?)
            }
            Some(Err(e)) => return Err(ConnError::InvalidEntry(e.clone())),
            None => return Err(ConnError::NotConfigured),
        };
        let on_changed: client::ToolsChanged = {
            let (server, app) = (server.to_string(), Arc::downgrade(app));
            Arc::new(move |tools: Vec<Value>| {
                let (server, app) = (server.clone(), app.clone());
                tokio::spawn(async move {
                    if let Some(app) = app.upgrade() {
                        let n = app.upstream().store_listing(&app, &server, tools).await;
                        tracing::info!(server, tools = n, "upstream tool list changed");
                    }
                });
            })
        };
        let client = match Client::connect(transport, Some(on_changed.clone()), START_TIMEOUT).await {
            Ok(c) => c,
            Err(ConnectError::Failed(message)) => {
                return Err(ConnError::Handshake { message, stderr: stderr_tail(&mut reading, &tail).await });
            }
            Err(ConnectError::AuthRequired { challenge }) => {
                self.oauth.challenged(server, &challenge);
                // A stored refresh token may still be good: renew and connect once more.
                let retried = match configs.get(server) {
                    Some(Ok(ServerConfig::Http { url, headers, .. }))
                        if oauth::refresh(app, server, url).await.is_ok() =>
                    {
                        let transport = http_transport(app, server, url, headers).await?;
                        Client::connect(transport, Some(on_changed), START_TIMEOUT).await.ok()
                    }
                    _ => None,
                };
                match retried {
                    Some(c) => c,
                    None => {
                        return Err(ConnError::NeedsConsent { key: oauth::store_key(server) });
                    }
                }
            }
            Err(ConnectError::Timeout) => {
                return Err(ConnError::InitTimeout {
                    secs: START_TIMEOUT.as_secs(),
                    stderr: stderr_tail(&mut reading, &tail).await,
                });
            }
        };
        let tools = match tokio::time::timeout(START_TIMEOUT, client.list_tools()).await {
            Ok(Ok(t)) => t,
            Ok(Err(source)) => {
                return Err(ConnError::ListTools { source, stderr: stderr_tail(&mut reading, &tail).await });
            }
            Err(_) => return Err(ConnError::ListTimeout { secs: START_TIMEOUT.as_secs() }),
        };
        let count = self.store_listing(app, server, tools).await;
        tracing::info!(server, pid, tools = count, "upstream server started");
        Ok(Conn { client, pid, stderr: tail, http })
    }

    /// Spawns a stdio server.
    async fn spawn(
        &self,
        app: &Arc<App>,
        server: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> Result<client::Stdio, ConnError> {
        let env = resolve_map(app, server, env, "env").await?;
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args);
        // workbench's own credentials are not the upstream server's business.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("WORKBENCH_") {
                cmd.env_remove(&name);
            }
        }
        cmd.envs(&env).kill_on_drop(true);
        #[cfg(target_os = "linux")]
        // SAFETY: the closure runs in the forked child before exec and only calls prctl and
        // getppid, both async-signal-safe.
        unsafe {
            let parent = std::process::id() as libc::pid_t;
            cmd.pre_exec(move || {
                // The server gets SIGKILL when workbench dies, however it dies; if workbench
                // already died before this line, exit now.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent {
                    return Err(std::io::Error::other("the parent is gone"));
                }
                Ok(())
            });
        }
        // Windows: started suspended, put into workbench's job object, then resumed (`job`).
        job::prepare(&mut cmd);
        let stdio = client::spawn(cmd).map_err(|source| ConnError::Spawn { command: command.to_string(), source })?;
        job::adopt(stdio.pid).map_err(|source| ConnError::Spawn { command: command.to_string(), source })?;
        Ok(stdio)
    }

    /// Marks the running connection as dead after a transport failure.
    pub(super) async fn crashed(&self, app: &App, server: &str, conn: &Arc<Conn>, error: String) {
        let slot = self.slot(server);
        let mut guard = slot.conn.lock().await;
        if guard.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            *guard = None;
            drop(guard);
            self.failed(app, &slot, server, error).await;
        }
    }
}

/// The Streamable HTTP transport of a server: its URL checked by workbench's address guard (the
/// entry is the user's own configuration, so a private or loopback origin is allowed; workbench's
/// own listener never is), the guarded client (same-origin redirects only, no proxy), and its
/// headers with `{{vault:NAME}}` resolved for `mcp:<server>` only.
async fn http_transport(
    app: &App,
    server: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<Transport, ConnError> {
    use client::{HeaderName, HeaderValue};
    let parsed =
        reqwest::Url::parse(url).map_err(|source| ConnError::BadUrl { url: url.to_string(), source: source.into() })?;
    let client = app.client_for(&parsed, true).map_err(|r| ConnError::Refused(r.0))?.clone();
    let resolved = resolve_map(app, server, headers, "headers").await?;
    let mut custom = HashMap::new();
    for (name, value) in resolved {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| ConnError::HeaderName(name.clone()))?;
        if matches!(header.as_str(), "accept" | "mcp-session-id" | "last-event-id" | "host" | "content-type") {
            return Err(ConnError::ReservedHeader(name));
        }
        let mut value = HeaderValue::from_str(&value).map_err(|_| ConnError::HeaderValue(name.clone()))?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    // OAuth tokens (stored for this very URL) unless the entry brings its own Authorization.
    let bearer = match custom.contains_key(&reqwest::header::AUTHORIZATION) {
        true => None,
        false => oauth::bearer(app, server, url).await,
    };
    Ok(Transport::Http { client, url: url.to_string(), headers: custom, bearer })
}

/// Resolves `{{vault:NAME}}` in an entry's env or header values, for the pseudo-host
/// `mcp:<server>` only.
async fn resolve_map(
    app: &App,
    server: &str,
    map: &BTreeMap<String, String>,
    what: &str,
) -> Result<BTreeMap<String, String>, ConnError> {
    let template = serde_json::to_value(map)?;
    let names = crate::template::vault_names(&template).map_err(|f| ConnError::Template(f.message))?;
    let hosts = vec![pseudo_host(server)];
    let values = app.vault.resolve(&names, &hosts).await.map_err(|f| ConnError::Template(f.message))?;
    let lookup = |name: &str| values.lookup(name);
    let no_steps =
        if what == "env" { "a server's env cannot use step refs" } else { "a server's headers cannot use step refs" };
    let resolving = format!("the {what} of server '{server}'");
    let scope = crate::template::Scope {
        steps: None,
        vault: Some(&lookup),
        no_steps_reason: no_steps,
        no_vault_reason: "",
        resolving: &resolving,
        max_bytes: crate::template::MAX_RESOLVED_BYTES,
    };
    let resolved = crate::template::resolve(&template, &scope).map_err(|f| ConnError::Template(f.message))?;
    Ok(serde_json::from_value(resolved.value)?)
}

/// The vault pseudo-host of a server: a secret whose `allowed_hosts` lists it may be used in the
/// server's env and in arguments of its tools, and nowhere else. No real host contains ':'.
pub fn pseudo_host(server: &str) -> String {
    format!("mcp:{server}")
}

/// The last three lines a failed server wrote to stderr, for its error: what it wrote before it
/// exited is read first (the reader runs on its own and may not have reached it yet), waiting at
/// most [`STDERR_SETTLE`] for a server that is still running.
async fn stderr_tail(reading: &mut Option<tokio::task::JoinHandle<()>>, tail: &Mutex<VecDeque<String>>) -> String {
    if let Some(task) = reading.as_mut() {
        let _ = tokio::time::timeout(STDERR_SETTLE, task).await;
    }
    let lines = tail.lock().unwrap_or_else(|p| p.into_inner());
    let text = lines.iter().rev().take(3).rev().cloned().collect::<Vec<_>>().join(" | ");
    if text.is_empty() { String::new() } else { format!(" (stderr: {text})") }
}

async fn read_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    server: String,
    app: Weak<App>,
) {
    use tokio::io::AsyncBufReadExt as _;
    // One line, scrubbed and cut, into the tail; false once workbench is gone.
    let keep = |line: &[u8]| {
        let Some(app) = app.upgrade() else { return false };
        let text = app.exposed.text(String::from_utf8_lossy(line).trim_end_matches('\r'));
        let (text, _) = plugins::api::truncate_chars(&text, 300);
        tracing::debug!(server = %server, "upstream stderr: {text}");
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        t.push_back(text);
        true
    };
    let mut reader = tokio::io::BufReader::new(stderr);
    // A line's first MAX_STDERR_LINE bytes; the rest of it is read and dropped (a server's
    // stderr may be one endless line).
    let mut line: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) if !buf.is_empty() => buf,
            // The end (or a read error): the last line, if it had no newline.
            _ => {
                if !line.is_empty() {
                    keep(&line);
                }
                return;
            }
        };
        let end = buf.iter().position(|&b| b == b'\n');
        let part = &buf[..end.unwrap_or(buf.len())];
        line.extend_from_slice(&part[..part.len().min(MAX_STDERR_LINE.saturating_sub(line.len()))]);
        let used = end.map_or(buf.len(), |e| e + 1);
        reader.consume(used);
        if end.is_some() {
            if !keep(&line) {
                return;
            }
            line.clear();
        }
    }
}
