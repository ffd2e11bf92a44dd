//! The user's other MCP servers behind workbench's nine tools ("upstream servers").
//!
//! Each server configured in `config.json`'s `mcp_servers` (Claude Desktop / Cursor shape) adds
//! its tools to the registry as `<server>_<tool>`, with portable schemas ([`schema`]), run by
//! `execute_tools` like any other tool. The state lives in one [`Upstreams`] held by `App`:
//!
//! - **Catalogue.** The last `tools/list` of every server is cached in SQLite
//!   (`upstream_listing`), so search works before a server has started. It is read on the first
//!   registry snapshot, not at start-up. A fresh listing (first start, `servers add`,
//!   `notifications/tools/list_changed`) bumps [`Catalogue::generation`], which makes
//!   `App::registry()` build a new snapshot.
//! - **Lifecycle.** A stdio server starts on its first call (never at workbench's start), with the
//!   handshake done by the MCP client in `crate::mcp_client` (rmcp). Its stdin is a pipe workbench holds, it is killed when its
//!   handle drops (`kill_on_drop`), on Linux it gets `PR_SET_PDEATHSIG` = SIGKILL and on Windows it
//!   runs in workbench's kill-on-close job object ([`job`]), so no server outlives workbench, also
//!   after `kill -9` (or `TerminateProcess`). A server that exits is started again on the next
//!   call; repeated failures wait (1 s, 2 s, 4 s, ... up to a minute) and the agent is told why.
//! - **Secrets.** `{{vault:NAME}}` in an entry's `env` or `headers` (or a call's arguments) resolves only for
//!   the pseudo-host `mcp:<server>`: a secret must list it in `allowed_hosts`. Resolved values join
//!   the process-wide scrubber, so they never come back in a result. `WORKBENCH_*` variables
//!   (workbench's own credentials) are removed from a server's environment.
//! - **Policy.** A server's annotations are its own claims, so they only ever make a tool
//!   stricter: `readOnlyHint: true` (and no `destructiveHint: true`) is a read,
//!   `destructiveHint: false` (and not read-only) is a write, and everything else (no annotations,
//!   both hints true, hints that are not booleans) is destructive, as the MCP specification's
//!   defaults say (confirm by default). The user's `"effect"` / `"tool_effects"` in the server's
//!   entry win over all of it ([`config::Effects`]); `servers list` shows the effect each tool is
//!   treated with and why. `WORKBENCH_POLICY_<SERVER>` sets a server's policy.
//!
//! - **Streamable HTTP.** A `{"url", "headers"}` entry connects on its first call through the
//!   Streamable HTTP client of `crate::mcp_client`, with workbench's guarded HTTP client (`App::client_for`: the URL is
//!   the user's own origin, workbench's own listener never is; same-origin redirects only).
//!   Headers may hold `{{vault:NAME}}` refs, resolved for `mcp:<server>` only. A dropped
//!   session reconnects on the next call, with the same backoff as a stdio server.

pub use crate::config::servers as config;
mod job;
pub mod oauth;
pub mod pins;
pub mod schema;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use plugins::api::{Effect, ToolError};
use serde_json::{Value, json};

pub use config::ServerConfig;

use crate::app::App;
use crate::error::{ErrorCode, ToolFailure};
use crate::mcp_client::{self as client, CallError, Client, ConnectError, Transport};
use crate::storage::Storage;

/// Longest an upstream server may take to start and answer `initialize` + `tools/list`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait between restart attempts of a failing server.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Most characters of an upstream tool's description kept.
const MAX_DESCRIPTION: usize = 1_500;
/// Lines of a server's stderr kept for its error messages.
const STDERR_LINES: usize = 20;

/// The upstream tool behind a registry entry.
#[derive(Debug)]
pub struct UpstreamTool {
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
}

/// One tool of a server's last listing, normalised.
#[derive(Debug, Clone)]
pub struct Listed {
    pub tool: String,
    pub description: String,
    pub schema: Value,
    pub effect: Effect,
    /// Rules of the upstream schema workbench does not check (the server does).
    pub unchecked: Vec<String>,
}

/// Where an upstream tool's effect comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectSource {
    /// The server's annotations, consistent with each other.
    Annotations,
    /// No annotations (or not booleans): the stricter effect.
    Missing,
    /// `readOnlyHint` and `destructiveHint` both true: the stricter effect.
    Contradictory,
    /// The user's `effect` / `tool_effects` in config.json.
    Config,
}

impl EffectSource {
    pub fn describe(self) -> &'static str {
        match self {
            EffectSource::Annotations => "from the server's annotations",
            EffectSource::Missing => "the stricter effect: the server's annotations do not say",
            EffectSource::Contradictory => "the stricter effect: the server's annotations contradict each other",
            EffectSource::Config => "set in config.json",
        }
    }
}

/// The word for an effect in `servers list`, the portal and config.json.
pub fn effect_word(e: Effect) -> &'static str {
    match e {
        Effect::Read => "read",
        Effect::Write => "write",
        Effect::Destructive => "destructive",
    }
}

/// Every configured server's last listing; a new generation replaces it when one changes.
#[derive(Debug, Default)]
pub struct Catalogue {
    pub generation: u64,
    /// By server name.
    pub servers: Vec<(String, Vec<Listed>)>,
}

/// What `servers list` shows about a server in this process.
#[derive(Debug, Clone, Default)]
pub struct Status {
    pub running: bool,
    pub pid: Option<u32>,
    pub starts: u32,
    /// Failures (crashes, failed starts) since the last successful call.
    pub failures: u32,
    pub last_error: Option<String>,
    retry_at: Option<Instant>,
}

struct Conn {
    client: Client,
    pid: Option<u32>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// A Streamable HTTP session (no process: a transport failure means reconnect).
    http: bool,
}

impl Conn {
    fn closed(&self) -> bool {
        self.client.is_closed()
    }
    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().rev().take(3).rev().cloned().collect::<Vec<_>>().join(" | ")
    }
}

#[derive(Default)]
struct Slot {
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
    status: Mutex<Status>,
}

/// Why a server is not available for a call (what `servers add`, `servers list` and the agent
/// are told).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(
        "upstream server '{server}' failed {failures} time(s) in a row (last: {last}); workbench tries again in {wait_secs} s"
    )]
    Backoff { server: String, failures: u32, last: String, wait_secs: u64 },
    /// `reason` is the [`ConnError`]'s text with every known secret scrubbed.
    #[error("upstream server '{server}' could not be started: {reason}")]
    NotStarted { server: String, reason: String },
}

/// Why connecting to a server (spawn or HTTP session, handshake, `tools/list`) failed.
#[derive(Debug, thiserror::Error)]
enum ConnError {
    #[error("its entry in config.json is invalid: {0}")]
    InvalidEntry(#[source] config::EntryError),
    #[error("it is not configured (workbench servers list shows the configured ones)")]
    NotConfigured,
    #[error("cannot run {command}: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("the MCP handshake failed: {message}{stderr}")]
    Handshake { message: String, stderr: String },
    #[error("it {needs} '{key}' and have the user finish in the browser, then retry", needs = NEEDS_CONSENT)]
    NeedsConsent { key: String },
    #[error("it did not answer initialize within {secs} s{stderr}")]
    InitTimeout { secs: u64, stderr: String },
    #[error("tools/list failed: {source}{stderr}")]
    ListTools { source: CallError, stderr: String },
    #[error("tools/list took longer than {secs} s")]
    ListTimeout { secs: u64 },
    #[error("its url '{url}' is not a valid URL: {source}")]
    BadUrl { url: String, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("its url is refused: {0}")]
    Refused(String),
    #[error("headers.{0} is not a valid HTTP header name")]
    HeaderName(String),
    #[error("headers.{0} is set by workbench itself; remove it from the entry")]
    ReservedHeader(String),
    #[error("headers.{0} has a value that is not a valid HTTP header value")]
    HeaderValue(String),
    /// A `{{vault:NAME}}` ref that did not resolve (the tool failure's message).
    #[error("{0}")]
    Template(String),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Why `connect` with `mcp:<server>` could not start the consent.
#[derive(Debug, thiserror::Error)]
pub enum ConsentError {
    /// `reason` is the [`oauth::OAuthError`]'s text with every known secret scrubbed.
    #[error("cannot start signing in to '{server}': {reason}")]
    Begin { server: String, reason: String },
}

/// The configured servers by name (an entry that did not parse is kept as its error).
pub type Configs = BTreeMap<String, Result<ServerConfig, config::EntryError>>;

/// What identifies one version of config.json on disk: modification time, length and inode
/// (`edit_config` renames a new file over the old one). `None`: the file is missing.
type Stamp = Option<(std::time::SystemTime, u64, u64)>;

/// The upstream servers' state: one field of `App`.
pub struct Upstreams {
    configs: std::sync::RwLock<Arc<Configs>>,
    /// The config.json whose `mcp_servers` are read again when it changes on disk.
    watch: Option<std::path::PathBuf>,
    /// The version of `watch` last read; `None` until the first check.
    stamp: Mutex<Option<Stamp>>,
    /// `None` until the SQLite cache is first read.
    catalogue: Mutex<Option<Arc<Catalogue>>>,
    /// The raw `tools/list` tools of each server, as last seen.
    listings: Mutex<BTreeMap<String, Vec<Value>>>,
    /// Servers this process already tried to list because they had no listing.
    attempted: Mutex<std::collections::HashSet<String>>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    generation: AtomicU64,
    empty: Arc<Catalogue>,
    /// OAuth consents in progress for Streamable HTTP servers ([`oauth`]).
    pub oauth: oauth::Flights,
    /// The accepted tool definitions ([`pins`]); `None` until first read (or when SQLite failed:
    /// then no tool is offered).
    pins: Mutex<Option<pins::Read>>,
    /// Tools of each server waiting for the user's review, from the last [`Upstreams::build`].
    pending: Mutex<Arc<BTreeMap<String, Vec<pins::Change>>>>,
}

impl App {
    /// The upstream servers' state (upstream's state slot, built from the settings on first use).
    pub fn upstream(&self) -> Arc<Upstreams> {
        self.state.upstreams.clone()
    }
}

/// What an agent-facing error says when a server needs the user's consent (see [`failure`]).
const NEEDS_CONSENT: &str = "needs the user's authorization: call connect with integration";

/// How long a meta-tool call waits for never-listed servers to list their tools (they go on
/// starting in the background after that, and the next call sees them).
const LIST_WAIT: Duration = Duration::from_secs(12);

impl Upstreams {
    /// No I/O: the cache is read on first use.
    pub fn new(configs: Configs) -> Upstreams {
        Upstreams {
            configs: std::sync::RwLock::new(Arc::new(configs)),
            watch: None,
            stamp: Mutex::new(None),
            catalogue: Mutex::new(None),
            listings: Mutex::new(BTreeMap::new()),
            attempted: Mutex::new(Default::default()),
            slots: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            empty: Arc::default(),
            oauth: Default::default(),
            pins: Mutex::new(None),
            pending: Mutex::new(Arc::default()),
        }
    }

    /// Reads the pins when they were never read or were read more than [`pins::REREAD`] ago;
    /// true when they changed (another process accepted a change).
    fn reread_pins(&self, storage: &Storage) -> bool {
        let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|r| r.at.elapsed() < pins::REREAD) {
            return false;
        }
        match pins::Pins::load(storage) {
            Ok(fresh) => {
                let changed = current.as_ref().is_none_or(|r| r.pins != fresh);
                *current = Some(pins::Read { pins: fresh, at: Instant::now() });
                changed
            }
            Err(e) => {
                tracing::warn!(error = %e, "the accepted upstream tool definitions could not be read; no upstream tool is offered");
                let changed = current.is_some();
                *current = None;
                changed
            }
        }
    }

    /// Trust on first use: a configured server with a listing and no pins (listed for the first
    /// time, or added before pinning existed) has that listing accepted.
    /// `listed` is a server that just answered `tools/list`: pinned even when it listed nothing
    /// (a cached empty listing may be a failure record, never a listing).
    fn pin_first_listings(&self, storage: &Storage, listed: Option<&str>) {
        let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        let Some(read) = current.as_mut() else { return };
        for (server, tools) in listings.iter() {
            if read.pins.servers.contains(server)
                || !self.is_server(server)
                || (tools.is_empty() && listed != Some(server.as_str()))
            {
                continue;
            }
            match read.pins.accept(storage, server, tools) {
                Ok(()) => {
                    tracing::info!(server, tools = tools.len(), "upstream tool definitions pinned (first listing)")
                }
                Err(e) => tracing::warn!(server, error = %e, "could not pin the upstream tool definitions"),
            }
        }
    }

    /// Accepts the current listing of `server` (its new and changed tools become searchable and
    /// callable); returns how many changes were accepted.
    pub fn accept(&self, storage: &Storage, server: &str) -> Result<usize, crate::storage::StorageError> {
        let _ = self.catalogue(storage);
        let waiting = self.pending.lock().unwrap_or_else(|p| p.into_inner()).get(server).map_or(0, Vec::len);
        let tools = self.listings.lock().unwrap_or_else(|p| p.into_inner()).get(server).cloned().unwrap_or_default();
        {
            let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
            let read = current.get_or_insert_with(|| pins::Read { pins: Default::default(), at: Instant::now() });
            read.pins.accept(storage, server, &tools)?;
        }
        let fresh = Arc::new(self.build());
        *self.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh);
        Ok(waiting)
    }

    /// The tools of each server waiting for the user's review (new or changed definitions).
    pub fn pending(&self, storage: &Storage) -> Arc<BTreeMap<String, Vec<pins::Change>>> {
        let _ = self.catalogue(storage);
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The user finished an OAuth consent for `server`: the next call connects with the new token
    /// at once (no backoff wait).
    pub fn authorized(&self, server: &str) {
        let slot = self.slots.lock().unwrap_or_else(|p| p.into_inner()).remove(server);
        drop(slot);
        let slot = self.slot(server);
        let mut status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
        status.retry_at = None;
        status.failures = 0;
    }

    /// Follows `config_json` (still no I/O here): when the file changes on disk while workbench
    /// runs, its `mcp_servers` replace the configured servers at the next registry snapshot, so a
    /// server added or removed by hand (or by `workbench servers add` in another process) shows up
    /// without a restart.
    pub fn watching(mut self, config_json: std::path::PathBuf) -> Upstreams {
        self.watch = Some(config_json);
        self
    }

    /// The configured servers (including entries that did not parse, as their error).
    pub fn configs(&self) -> Arc<Configs> {
        self.configs.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether `name` is a configured server.
    pub fn is_server(&self, name: &str) -> bool {
        matches!(self.configs.read().unwrap_or_else(|p| p.into_inner()).get(name), Some(Ok(_)))
    }

    /// Reads config.json's `mcp_servers` again if the file changed since the last look (one
    /// `stat` per call otherwise). A file that does not parse keeps the servers as they were.
    fn refresh_config(&self) {
        let Some(path) = &self.watch else { return };
        let now: Stamp = std::fs::metadata(path).ok().map(|m| {
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            (m.modified().unwrap_or(std::time::UNIX_EPOCH), m.len(), ino)
        });
        {
            let mut stamp = self.stamp.lock().unwrap_or_else(|p| p.into_inner());
            if stamp.as_ref() == Some(&now) {
                return;
            }
            *stamp = Some(now);
        }
        if now.is_none() {
            return;
        }
        let fresh = match std::fs::read_to_string(path).map(|t| serde_json::from_str::<Value>(&t)) {
            Ok(Ok(root)) => config::parse_all(root.get("mcp_servers")),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "config.json does not parse; the upstream servers stay as they were");
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "config.json could not be read");
                return;
            }
        };
        let old = self.configs();
        if *old == fresh {
            return;
        }
        let gone: Vec<String> =
            old.iter().filter(|(name, c)| fresh.get(*name) != Some(*c)).map(|(name, _)| name.clone()).collect();
        tracing::info!(servers = fresh.len(), "config.json changed: upstream servers reloaded");
        *self.configs.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        // A removed or changed server's process ends when its last call is done (its handle drops).
        {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            let mut attempted = self.attempted.lock().unwrap_or_else(|p| p.into_inner());
            for name in &gone {
                slots.remove(name);
                attempted.remove(name);
            }
        }
        let loaded = self.catalogue.lock().unwrap_or_else(|p| p.into_inner()).is_some();
        if loaded {
            let rebuilt = Arc::new(self.build());
            *self.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(rebuilt);
        }
    }

    /// The catalogue now; the first call reads the SQLite cache (one query). Every call first
    /// checks whether config.json changed ([`Upstreams::watching`]).
    pub fn catalogue(&self, storage: &Storage) -> Arc<Catalogue> {
        self.refresh_config();
        if !self.configs().values().any(Result::is_ok) {
            return self.empty.clone();
        }
        let mut current = self.catalogue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = current.as_ref() {
            if !self.reread_pins(storage) {
                return c.clone();
            }
            let fresh = Arc::new(self.build());
            *current = Some(fresh.clone());
            return fresh;
        }
        match storage.upstream_listings() {
            Ok(rows) => {
                let mut listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
                for row in rows {
                    // Every cached row, also of servers not configured now: one may come back.
                    if let Ok(Value::Array(tools)) = serde_json::from_str::<Value>(&row.tools) {
                        listings.entry(row.server).or_insert(tools);
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "the upstream tool cache could not be read"),
        }
        self.reread_pins(storage);
        self.pin_first_listings(storage, None);
        let fresh = Arc::new(self.build());
        *current = Some(fresh.clone());
        fresh
    }

    /// Lists the configured servers that have no tool listing yet (pasted into config.json by
    /// hand, never listed; or failing last time), so the search or schema lookup that could need
    /// them finds their tools: each is started in parallel, at most once per process, and this
    /// waits at most [`LIST_WAIT`] for them (a slower one goes on in the background). Failures are
    /// recorded for `workbench servers list`. Nothing happens when every server has a listing.
    pub async fn list_unlisted(&self, app: &Arc<App>) {
        let _ = self.catalogue(&app.storage);
        let todo: Vec<String> = {
            let configs = self.configs();
            let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
            let mut attempted = self.attempted.lock().unwrap_or_else(|p| p.into_inner());
            configs
                .iter()
                .filter(|(name, c)| c.is_ok() && listings.get(*name).is_none_or(Vec::is_empty))
                .filter(|&(name, _)| attempted.insert(name.clone()))
                .map(|(name, _)| name.clone())
                .collect()
        };
        if todo.is_empty() {
            return;
        }
        tracing::info!(servers = ?todo, "listing upstream servers that have no cached tool list");
        let tasks: Vec<_> = todo
            .into_iter()
            .map(|server| {
                let app = app.clone();
                tokio::spawn(async move {
                    if let Err(e) = app.upstream().ensure_started(&app, &server).await {
                        tracing::warn!(server, error = %e, "could not list a never-listed upstream server");
                    }
                })
            })
            .collect();
        let _ = tokio::time::timeout(LIST_WAIT, futures::future::join_all(tasks)).await;
    }

    fn build(&self) -> Catalogue {
        let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        let read = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        let mut pending = BTreeMap::new();
        let servers = listings
            .iter()
            .filter(|(server, _)| self.is_server(server))
            .map(|(server, tools)| {
                // Only the definitions the user accepted are offered ([`pins`]).
                let mut changes = Vec::new();
                let accepted: Vec<&Value> = tools
                    .iter()
                    .filter(|t| match read.as_ref() {
                        Some(r) => match r.pins.check(server, t) {
                            None => true,
                            Some(change) => {
                                changes.push(change);
                                false
                            }
                        },
                        None => false,
                    })
                    .collect();
                if !changes.is_empty() {
                    pending.insert(server.clone(), changes);
                }
                let mut listed: Vec<Listed> = accepted.into_iter().filter_map(listed_from).collect();
                listed.sort_by(|a, b| a.tool.cmp(&b.tool));
                // The user's word on effects wins over the server's annotations.
                if let Some(Ok(config)) = self.configs().get(server) {
                    for l in &mut listed {
                        if let Some(e) = config.effects().of(&l.tool) {
                            l.effect = e;
                        }
                    }
                }
                (server.clone(), listed)
            })
            .collect();
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(pending);
        Catalogue { generation: self.generation.fetch_add(1, Ordering::SeqCst) + 1, servers }
    }

    /// Takes a server's fresh `tools/list`: cached in SQLite, and a new catalogue generation when
    /// it changed.
    async fn store_listing(&self, app: &App, server: &str, raw: Vec<Value>) -> usize {
        let count = raw.len();
        let changed = {
            let mut listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
            listings.insert(server.to_string(), raw.clone()) != Some(raw.clone())
        };
        // The pins are read (and a first listing pinned) off the async workers.
        let pinned = {
            let (app, storage, server) = (app.upstream(), app.storage.clone(), server.to_string());
            tokio::task::spawn_blocking(move || {
                let first = app.pins.lock().unwrap_or_else(|p| p.into_inner()).is_none();
                let changed = app.reread_pins(&storage) && !first;
                app.pin_first_listings(&storage, Some(&server));
                changed
            })
            .await
            .unwrap_or(false)
        };
        if changed || pinned {
            let fresh = Arc::new(self.build());
            *self.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh);
        }
        let text = Value::Array(raw).to_string();
        if let Err(e) = app.storage.put_upstream_listing(server.to_string(), text).await {
            tracing::warn!(server, error = %e, "could not cache the upstream tool list");
        }
        count
    }

    fn slot(&self, server: &str) -> Arc<Slot> {
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
        Ok(listings.get(server).map_or(0, Vec::len))
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
    async fn connection(&self, app: &Arc<App>, server: &str) -> Result<Arc<Conn>, StartError> {
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

    fn succeeded(&self, server: &str) {
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
        let (pid, transport) = match configs.get(server) {
            Some(Ok(ServerConfig::Stdio { command, args, env, .. })) => {
                let mut stdio = self.spawn(app, server, command, args, env).await?;
                if let Some(stderr) = stdio.stderr.take() {
                    tokio::spawn(read_stderr(stderr, tail.clone(), server.to_string(), Arc::downgrade(app)));
                }
                (stdio.pid, Transport::Stdio(stdio))
            }
            Some(Ok(ServerConfig::Http { url, headers, .. })) => {
                (None, http_transport(app, server, url, headers).await?)
            }
            Some(Err(e)) => return Err(ConnError::InvalidEntry(e.clone())),
            None => return Err(ConnError::NotConfigured),
        };
        let stderr_tail = |tail: &Arc<Mutex<VecDeque<String>>>| {
            let lines = tail.lock().unwrap_or_else(|p| p.into_inner());
            let text = lines.iter().rev().take(3).rev().cloned().collect::<Vec<_>>().join(" | ");
            if text.is_empty() { String::new() } else { format!(" (stderr: {text})") }
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
                return Err(ConnError::Handshake { message, stderr: stderr_tail(&tail) });
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
                return Err(ConnError::InitTimeout { secs: START_TIMEOUT.as_secs(), stderr: stderr_tail(&tail) });
            }
        };
        let tools = match tokio::time::timeout(START_TIMEOUT, client.list_tools()).await {
            Ok(Ok(t)) => t,
            Ok(Err(source)) => return Err(ConnError::ListTools { source, stderr: stderr_tail(&tail) }),
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
    async fn crashed(&self, app: &App, server: &str, conn: &Arc<Conn>, error: String) {
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

async fn read_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    server: String,
    app: Weak<App>,
) {
    use tokio::io::AsyncBufReadExt as _;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = match app.upgrade() {
            Some(app) => app.exposed.text(&line),
            None => break,
        };
        let (line, _) = plugins::api::truncate_chars(&line, 300);
        tracing::debug!(server = %server, "upstream stderr: {line}");
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        t.push_back(line);
    }
}

/// What a tool's annotations make of its effect: the server's claims only make a tool stricter,
/// so unclear or contradictory claims are destructive.
fn annotated_effect(annotations: Option<&Value>) -> (Effect, EffectSource) {
    let hint = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_bool);
    match (hint("readOnlyHint"), hint("destructiveHint")) {
        (Some(true), Some(true)) => (Effect::Destructive, EffectSource::Contradictory),
        (Some(true), _) => (Effect::Read, EffectSource::Annotations),
        (_, Some(false)) => (Effect::Write, EffectSource::Annotations),
        (_, Some(true)) => (Effect::Destructive, EffectSource::Annotations),
        (_, None) => (Effect::Destructive, EffectSource::Missing),
    }
}

/// The effect a raw `tools/list` tool of `server` is treated with, and why: the user's word in
/// config.json first, else its annotations.
pub fn effect_of(config: Option<&ServerConfig>, tool: &Value) -> (Effect, EffectSource) {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    match config.and_then(|c| c.effects().of(name)) {
        Some(e) => (e, EffectSource::Config),
        None => annotated_effect(tool.get("annotations")),
    }
}

/// One tool of a `tools/list` answer, normalised; `None` for an entry without a name.
fn listed_from(tool: &Value) -> Option<Listed> {
    let name = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
    let annotations = tool.get("annotations");
    let (effect, _) = annotated_effect(annotations);
    let normalised = schema::normalise(tool.get("inputSchema").unwrap_or(&Value::Null));
    let mut description = tool
        .get("description")
        .and_then(Value::as_str)
        .or_else(|| tool.get("title").and_then(Value::as_str))
        .unwrap_or("")
        .trim()
        .to_string();
    description = plugins::api::truncate_chars(&description, MAX_DESCRIPTION).0;
    if !normalised.unchecked.is_empty() {
        description.push_str(&format!(
            "\n(Rules only the upstream server checks: {}.)",
            plugins::api::truncate_chars(&normalised.unchecked.join("; "), 400).0
        ));
    }
    Some(Listed {
        tool: name.to_string(),
        description,
        schema: normalised.schema,
        effect,
        unchecked: normalised.unchecked,
    })
}

/// `<server>_<tool>` under the portable name rule (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`): what a
/// tool is offered as, if no other tool claims the same name ([`assign_names`]).
pub fn base_name(server: &str, tool: &str) -> String {
    let mut base: String = format!("{server}_{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if !base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        base.insert(0, '_');
    }
    base.truncate(64);
    base
}

/// A name that more than one tool claims: none of them is offered under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    pub name: String,
    /// The upstream tools that claim it, as (server, tool on that server).
    pub tools: Vec<(String, String)>,
    /// One of workbench's own tools (or a meta-tool) has the name.
    pub workbench: bool,
}

impl Collision {
    /// One line for `servers list`, doctor and the portal.
    pub fn describe(&self) -> String {
        let who: Vec<String> = self.tools.iter().map(|(s, t)| format!("tool '{t}' of server '{s}'")).collect();
        format!(
            "{} {} the name {}{}, so none of them is offered under it; rename a server (workbench servers remove, then add it under another name)",
            who.join(" and "),
            if who.len() == 1 { "claims" } else { "all claim" },
            self.name,
            if self.workbench { ", which is workbench's own" } else { "" },
        )
    }
}

/// The exposed name of every offered upstream tool, and the names nobody gets.
#[derive(Debug, Default)]
pub struct Names {
    /// By (server, tool on that server).
    pub names: HashMap<(String, String), String>,
    pub collisions: Vec<Collision>,
}

/// Names the tools of `servers` (each `(server, its tools)`): a tool is offered as
/// [`base_name`] only when no other tool (of any server, its own included) has the same base
/// name and `taken` (workbench's own tools and the meta-tools) does not have it. Otherwise every
/// claimant is left out and the clash is a [`Collision`]. So names are unique by construction,
/// and no server, listed before or after, can take a name from another: at worst a clash makes a
/// name unusable, never someone else's.
pub fn assign_names<'a>(
    servers: impl IntoIterator<Item = (&'a str, &'a [Listed])>,
    taken: &dyn Fn(&str) -> bool,
) -> Names {
    let mut claims: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (server, listed) in servers {
        for l in listed {
            claims.entry(base_name(server, &l.tool)).or_default().push((server.to_string(), l.tool.clone()));
        }
    }
    let mut out = Names::default();
    for (name, tools) in claims {
        let workbench = taken(&name);
        if tools.len() == 1 && !workbench {
            let (server, tool) = tools.into_iter().next().unwrap_or_default();
            out.names.insert((server, tool), name);
        } else {
            out.collisions.push(Collision { name, tools, workbench });
        }
    }
    out
}

/// Runs one upstream tool call (the engine's task for `Runner::Upstream`).
/// The server's `notifications/progress` for the call reach `progress` (scrubbed, capped). Dropping
/// the future (timeout, cancellation) sends `notifications/cancelled` upstream.
pub async fn call(
    app: Arc<App>,
    tool: Arc<UpstreamTool>,
    args: Value,
    progress: Option<OnRunning>,
) -> Result<Value, ToolError> {
    let conn = app.upstream().connection(&app, &tool.server).await.map_err(|e| ToolError::Network(e.to_string()))?;
    let arguments = match args {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let on_progress = progress.map(|hook| forward_progress(&app, hook));
    match conn.client.call_tool(&tool.tool, arguments, on_progress).await {
        Ok(result) => {
            app.upstream().succeeded(&tool.server);
            shape(&result)
        }
        Err(CallError::AuthRequired { challenge }) => {
            // The token expired or was revoked mid-session: renew it for the next call, or ask
            // for consent again.
            app.upstream().oauth.challenged(&tool.server, &challenge);
            app.upstream().crashed(&app, &tool.server, &conn, "the server asked for authorization again".into()).await;
            let url = match app.upstream().configs().get(&tool.server) {
                Some(Ok(ServerConfig::Http { url, .. })) => url.clone(),
                _ => String::new(),
            };
            match oauth::refresh(&app, &tool.server, &url).await {
                Ok(_) => Err(ToolError::Network(format!(
                    "upstream server '{}' asked for authorization again; workbench renewed it, retry the call",
                    tool.server
                ))),
                Err(_) => Err(ToolError::Network(format!(
                    "upstream server '{}' {NEEDS_CONSENT} '{}' and have the user finish in the browser, then retry",
                    tool.server,
                    oauth::store_key(&tool.server)
                ))),
            }
        }
        Err(e) => {
            // Give the reader a moment to see the exit before deciding it crashed.
            tokio::time::sleep(Duration::from_millis(50)).await;
            if let CallError::TooLarge(why) = &e {
                app.upstream().crashed(&app, &tool.server, &conn, why.clone()).await;
                return Err(ToolError::Network(format!(
                    "upstream server '{}' failed the call: {why}; workbench starts it again on the next call",
                    tool.server
                )));
            }
            if conn.http && (conn.closed() || !matches!(e, CallError::Server(_))) {
                let what = format!("the connection failed ({e})");
                app.upstream().crashed(&app, &tool.server, &conn, what.clone()).await;
                Err(ToolError::Network(format!(
                    "upstream server '{}' is unreachable: {what}; workbench reconnects on the next call",
                    tool.server
                )))
            } else if conn.closed() {
                let tail = conn.stderr_tail();
                let what = format!(
                    "it exited during the call{}",
                    if tail.is_empty() { String::new() } else { format!(" (stderr: {tail})") }
                );
                app.upstream().crashed(&app, &tool.server, &conn, what.clone()).await;
                Err(ToolError::Network(format!(
                    "upstream server '{}' stopped: {what}; workbench starts it again on the next call",
                    tool.server
                )))
            } else {
                Err(ToolError::Network(format!("upstream server '{}' failed the call: {e}", tool.server)))
            }
        }
    }
}

/// Most progress notifications of one call passed on (a chatty server cannot flood the client).
const MAX_PROGRESS: usize = 100;
/// Most characters of an upstream progress message passed on.
const MAX_PROGRESS_MESSAGE: usize = 200;

/// How far a running upstream call is, as its server reported it (`notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    /// How far the execution is (0..=1), when the tool said both its progress and total.
    pub fraction: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's [`Running`] reports go (the engine turns them into its progress reports).
pub type OnRunning = Arc<dyn Fn(Running) + Send + Sync>;

/// An upstream progress callback that hands each notification on as a [`Running`]: its message
/// scrubbed of every secret this process knows, shortened, and at most [`MAX_PROGRESS`] per call.
fn forward_progress(app: &Arc<App>, hook: OnRunning) -> client::OnProgress {
    let app = Arc::downgrade(app);
    let sent = std::sync::atomic::AtomicUsize::new(0);
    Arc::new(move |update: client::ProgressUpdate| {
        let Some(app) = app.upgrade() else { return };
        if sent.fetch_add(1, Ordering::SeqCst) >= MAX_PROGRESS {
            return;
        }
        let fraction = update
            .total
            .filter(|t| *t > 0.0 && t.is_finite() && update.progress.is_finite())
            .map(|t| (update.progress / t).clamp(0.0, 1.0));
        let message = update
            .message
            .map(|m| plugins::api::truncate_chars(&app.exposed.text(m.trim()), MAX_PROGRESS_MESSAGE).0)
            .filter(|m| !m.is_empty());
        hook(Running { fraction, message });
    })
}

/// A `CallToolResult` (as JSON) as a tool result: `structuredContent` when given, else the text
/// (parsed when it is JSON), else the content blocks. `isError` becomes an upstream error.
fn shape(v: &Value) -> Result<Value, ToolError> {
    let content = v.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    let texts: Vec<&str> = content
        .iter()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    if v.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = if texts.is_empty() { "the tool reported an error".to_string() } else { texts.join("\n") };
        return Err(ToolError::Upstream { status: 0, message, retry_after: None });
    }
    if let Some(s) = v.get("structuredContent").filter(|s| !s.is_null()) {
        return Ok(s.clone());
    }
    if texts.len() == content.len() {
        if let [one] = texts.as_slice()
            && let Ok(parsed) = serde_json::from_str::<Value>(one)
            && (parsed.is_object() || parsed.is_array())
        {
            return Ok(parsed);
        }
        return Ok(json!({ "text": texts.join("\n") }));
    }
    Ok(json!({ "content": content }))
}

/// One configured server as the portal shows it.
#[derive(Debug, Clone)]
pub struct Summary {
    pub name: String,
    /// `stdio`, `http` or `invalid`.
    pub transport: &'static str,
    /// The command line or URL (never env or header values).
    pub target: String,
    /// `running`, `idle`, `failing`, `needs sign-in`, `not listed yet` or `invalid`.
    pub state: &'static str,
    /// Tools in its last listing, if it was ever listed.
    pub tools: Option<usize>,
    pub last_error: Option<String>,
}

/// Every configured server with its state, tool count and last error: this process's view where it
/// has one (a running server), else what SQLite recorded (the last listing and error of any
/// process). Starts nothing.
pub fn summaries(app: &App) -> Vec<Summary> {
    let configs = app.upstream().configs();
    if configs.is_empty() {
        return Vec::new();
    }
    let cached: HashMap<String, crate::storage::UpstreamListing> =
        app.storage.upstream_listings().unwrap_or_default().into_iter().map(|l| (l.server.clone(), l)).collect();
    configs
        .iter()
        .map(|(name, config)| {
            let status = app.upstream().status(name);
            let row = cached.get(name);
            let tools = row
                .filter(|r| r.last_error.is_none() || r.tools != "[]")
                .and_then(|r| serde_json::from_str::<Value>(&r.tools).ok())
                .and_then(|v| v.as_array().map(Vec::len));
            let last_error = match config {
                Err(e) => Some(e.to_string()),
                Ok(_) => status.last_error.clone().or_else(|| row.and_then(|r| r.last_error.clone())),
            }
            .map(|e| plugins::api::truncate_chars(&app.exposed.text(&e), 300).0);
            let (transport, target) = match config {
                Ok(c @ ServerConfig::Stdio { .. }) => ("stdio", c.describe()),
                Ok(c @ ServerConfig::Http { .. }) => ("http", c.describe()),
                Err(_) => ("invalid", String::new()),
            };
            let state = match config {
                Err(_) => "invalid",
                Ok(_) if status.running => "running",
                Ok(_) if last_error.as_deref().is_some_and(|e| e.contains(NEEDS_CONSENT)) => "needs sign-in",
                Ok(_) if last_error.is_some() => "failing",
                Ok(_) if tools.is_none() => "not listed yet",
                Ok(_) => "idle",
            };
            Summary { name: name.clone(), transport, target, state, tools, last_error }
        })
        .collect()
}

/// What the agent is told about a server with `n` tools waiting for the user's review.
pub fn waiting_note(server: &str, n: usize) -> String {
    format!(
        "upstream server '{server}' has {n} new or changed tool(s) waiting for the user's review; they are not offered until the user accepts them (workbench servers review {server}, or the portal)"
    )
}

/// [`waiting_note`] for every server with changes waiting (starts nothing).
pub fn waiting_notes(app: &App) -> Vec<String> {
    if app.upstream().configs().is_empty() {
        return Vec::new();
    }
    app.upstream().pending(&app.storage).iter().map(|(s, c)| waiting_note(s, c.len())).collect()
}

/// `connect` with integration `mcp:<server>`: the consent URL of a Streamable HTTP server that
/// uses OAuth ([`oauth::begin`]), opened in the user's browser when it can be.
/// What `connect` with `mcp:<server>` answers: the server's consent URL to open.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Consent {
    /// Always `PENDING`: the user signs in on the server's page, then the agent retries.
    pub status: &'static str,
    pub integration: String,
    pub url: String,
    pub opened_in_browser: bool,
    pub message: String,
}

pub async fn connect(app: &Arc<App>, server: &str) -> Result<Consent, ConsentError> {
    match oauth::begin(app, server).await {
        Ok(url) => {
            let opened = crate::connect::open_in_browser(app, &url);
            let message = format!(
                "Ask the user to open {url} on this computer{} and sign in to the MCP server '{server}'; then retry the call.",
                if opened { " (it was just opened in their browser)" } else { "" },
            );
            Ok(Consent {
                status: "PENDING",
                integration: oauth::store_key(server),
                url,
                opened_in_browser: opened,
                message,
            })
        }
        Err(e) => Err(ConsentError::Begin { server: server.to_string(), reason: app.exposed.text(&e.to_string()) }),
    }
}

/// The agent-facing error of a failed upstream call.
pub fn failure(e: ToolError, name: &str, tool: &UpstreamTool) -> Result<ToolFailure, ToolError> {
    match e {
        ToolError::Upstream { message, .. } => Ok(ToolFailure::new(
            ErrorCode::UpstreamError,
            format!("{name} (tool '{}' of upstream server '{}') reported an error: {message}", tool.tool, tool.server),
        )
        .with("server", tool.server.clone())),
        ToolError::Network(message) if message.contains(NEEDS_CONSENT) => {
            let integration = oauth::store_key(&tool.server);
            Ok(ToolFailure::new(ErrorCode::NotConnected, message)
                .with("server", tool.server.clone())
                .with("integration", integration.clone())
                .with("next_step", json!({ "tool": "connect", "arguments": { "integration": integration } })))
        }
        ToolError::Network(message) => Ok(ToolFailure::new(ErrorCode::NetworkError, message)
            .with("server", tool.server.clone())
            .with("hint", "the user can check it with `workbench servers list`")),
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(tool: &str) -> Listed {
        Listed {
            tool: tool.into(),
            description: String::new(),
            schema: json!({}),
            effect: Effect::Destructive,
            unchecked: vec![],
        }
    }

    #[test]
    fn names_follow_the_portable_rule() {
        assert_eq!(base_name("fs", "read_file"), "fs_read_file");
        assert_eq!(base_name("fs", "read.file/v2"), "fs_read_file_v2");
        assert_eq!(base_name("fs", &"x".repeat(80)).len(), 64);
    }

    /// Attack (issue 26): a server `notes` with a tool `files_read` and the user's `notes_files`
    /// with `read` both want `notes_files_read`. Neither gets it, whichever sorts or lists first;
    /// a name workbench has is nobody's; names of different length cut to 64 clash the same way.
    #[test]
    fn no_server_takes_another_servers_name() {
        let none = |_: &str| false;
        for order in [["notes", "notes_files"], ["notes_files", "notes"]] {
            let tools =
                |s: &str| if s == "notes" { vec![listed("files_read"), listed("list")] } else { vec![listed("read")] };
            let lists: Vec<(String, Vec<Listed>)> = order.iter().map(|s| (s.to_string(), tools(s))).collect();
            let names = assign_names(lists.iter().map(|(s, l)| (s.as_str(), l.as_slice())), &none);
            assert!(names.names.values().all(|n| n != "notes_files_read"), "{:?}", names.names);
            assert_eq!(names.names[&("notes".to_string(), "list".to_string())], "notes_list");
            assert_eq!(names.collisions.len(), 1);
            let c = &names.collisions[0];
            assert_eq!(c.name, "notes_files_read");
            assert_eq!(c.tools.len(), 2);
            assert!(c.describe().contains("server 'notes'") && c.describe().contains("server 'notes_files'"));
        }
        let lists = [("search".to_string(), vec![listed("tools"), listed("read.file"), listed("read_file")])];
        let names = assign_names(lists.iter().map(|(s, l)| (s.as_str(), l.as_slice())), &|n: &str| n == "search_tools");
        assert!(names.names.is_empty(), "{:?}", names.names);
        assert!(names.collisions.iter().any(|c| c.workbench && c.name == "search_tools"));
        assert!(names.collisions.iter().any(|c| !c.workbench && c.name == "search_read_file"));
    }

    #[test]
    fn annotations_set_the_effect() {
        let t = |a: Value| {
            listed_from(&json!({ "name": "t", "inputSchema": { "type": "object" }, "annotations": a })).unwrap().effect
        };
        assert_eq!(t(json!({ "readOnlyHint": true })), Effect::Read);
        assert_eq!(t(json!({ "readOnlyHint": true, "destructiveHint": false })), Effect::Read);
        assert_eq!(t(json!({ "destructiveHint": true })), Effect::Destructive);
        assert_eq!(t(json!({ "readOnlyHint": false, "destructiveHint": false })), Effect::Write);
        assert_eq!(t(json!({ "destructiveHint": false })), Effect::Write);
        // Attack (issue 26): contradictory or missing claims count as the stricter effect.
        assert_eq!(t(json!({ "readOnlyHint": true, "destructiveHint": true })), Effect::Destructive);
        assert_eq!(t(json!({})), Effect::Destructive);
        assert_eq!(t(json!({ "readOnlyHint": "true" })), Effect::Destructive);
        assert_eq!(t(Value::Null), Effect::Destructive);
    }
}
