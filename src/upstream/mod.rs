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
mod call;
mod catalogue;
mod consent;
mod lifecycle;
mod names;
mod summary;

mod job;
pub mod oauth;
pub mod pins;
pub mod schema;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plugins::api::Effect;
use serde_json::Value;

pub use config::ServerConfig;

use crate::app::App;
use crate::mcp_client::{CallError, Client};

/// Longest an upstream server may take to start and answer `initialize` + `tools/list`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait between restart attempts of a failing server.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Most characters of an upstream tool's description kept.
const MAX_DESCRIPTION: usize = 1_500;
/// Lines of a server's stderr kept for its error messages.
const STDERR_LINES: usize = 20;
/// Bytes of one stderr line read (the first 300 characters are kept, after scrubbing); the rest
/// of a longer line is dropped as it is read.
const MAX_STDERR_LINE: usize = 4096;
/// Longest a failed start waits for the server's stderr to be read to its end.
const STDERR_SETTLE: Duration = Duration::from_millis(300);

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
    pub schema: SchemaText,
    pub effect: Effect,
    /// Rules of the upstream schema workbench does not check (the server does).
    pub unchecked: Vec<String>,
}

/// An upstream tool's normalised input schema as compact JSON text, parsed when a caller needs it
/// (`get_tool_schema`, argument validation; the registry keeps what it parsed). As a
/// `serde_json::Value` tree, 10,000 tools' schemas took about 24 MiB of heap; as text, a fifth.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaText(Box<str>);

impl SchemaText {
    /// The schema as JSON. The text was written from a `Value`, so it parses; were it not to, the
    /// schema that takes no argument at all stands in (nothing is let through unchecked).
    pub fn parse(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or_else(
            |_| serde_json::json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Value> for SchemaText {
    fn from(schema: Value) -> SchemaText {
        SchemaText(schema.to_string().into_boxed_str())
    }
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
    /// The raw `tools/list` tools of each server, as last seen ([`Listing`]: kept as text).
    listings: Mutex<BTreeMap<String, catalogue::Listing>>,
    /// Servers this process already tried to list because they had no listing.
    attempted: Mutex<std::collections::HashSet<String>>,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    generation: AtomicU64,
    /// config.json changed since the catalogue was built: the next [`Upstreams::catalogue`]
    /// rebuilds it (with the storage it is given, where the listings' text is).
    stale: std::sync::atomic::AtomicBool,
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

pub use self::call::{OnRunning, Running, call, failure};
pub use self::consent::{Consent, ConsentError, connect};
pub use self::lifecycle::pseudo_host;
pub use self::names::{Collision, Names, assign_names, base_name, effect_of};
pub use self::summary::{Summary, summaries, waiting_note, waiting_notes};
