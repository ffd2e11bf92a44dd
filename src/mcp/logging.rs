//! Client logging: workbench's own tracing events, sent to the MCP client as `notifications/message`
//! through rmcp's peer (stdout is never written directly; stderr logging is unchanged).
//!
//! Which events go out:
//! - only events of workbench's own modules (never rmcp's, which log whole messages, nor the HTTP
//!   stack's); their text passes the token scrubber and is cut to [`MAX_TEXT`] characters;
//! - at or above the level the client asked for: per request through
//!   `_meta["io.modelcontextprotocol/logLevel"]` (the 2026-07-28 way, carried on the call's tracing
//!   span so events of that call inherit it), else the session level of `logging/setLevel`
//!   (2025-11-25); nothing before the client asks;
//! - at most [`BURST`] at once and [`PER_SECOND`] a second after that, through a queue of
//!   [`QUEUE`]; what does not fit is counted and reported once a second as one warning.
//!
//! Logging is deprecated by SEP-2577; rmcp marks its types so, hence the `allow` below.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber, span};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Messages that may go out at once.
pub const BURST: f64 = 30.0;
/// Messages a second after the burst.
pub const PER_SECOND: f64 = 10.0;
/// Messages waiting to be written.
pub const QUEUE: usize = 64;
/// Longest text of one field.
pub const MAX_TEXT: usize = 2_000;

/// MCP's levels as numbers: 0 = nothing, 1 = debug ... 8 = emergency.
pub fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 1,
        LoggingLevel::Info => 2,
        LoggingLevel::Notice => 3,
        LoggingLevel::Warning => 4,
        LoggingLevel::Error => 5,
        LoggingLevel::Critical => 6,
        LoggingLevel::Alert => 7,
        LoggingLevel::Emergency => 8,
    }
}

fn from_tracing(level: &Level) -> (u8, LoggingLevel) {
    match *level {
        Level::ERROR => (5, LoggingLevel::Error),
        Level::WARN => (4, LoggingLevel::Warning),
        Level::INFO => (2, LoggingLevel::Info),
        _ => (1, LoggingLevel::Debug),
    }
}

/// The level a request opted into (0 when it did not).
pub fn request_level(meta: &RequestMetaObject) -> u8 {
    meta.log_level().map(severity).unwrap_or(0)
}

/// The messages this client may still be sent right now (a token bucket: `tokens` left when last
/// counted, `at`).
struct SendAllowance {
    tokens: f64,
    at: Instant,
}

/// One client's log stream: its session level, the rate limit and the queue to the writer.
pub struct ClientLog {
    session_level: AtomicU8,
    allowance: Mutex<SendAllowance>,
    dropped: AtomicU64,
    tx: Mutex<Option<mpsc::Sender<LoggingMessageNotificationParam>>>,
    /// The secrets this process used: every forwarded message is scrubbed of them.
    exposed: Arc<crate::scrub::Exposed>,
}

impl ClientLog {
    pub fn new(exposed: Arc<crate::scrub::Exposed>) -> Arc<ClientLog> {
        Arc::new(ClientLog {
            session_level: AtomicU8::new(0),
            allowance: Mutex::new(SendAllowance { tokens: BURST, at: Instant::now() }),
            dropped: AtomicU64::new(0),
            tx: Mutex::new(None),
            exposed,
        })
    }

    pub fn set_session_level(&self, level: LoggingLevel) {
        self.session_level.store(severity(level), Ordering::Relaxed);
    }

    fn take_token(&self) -> bool {
        let mut b = self.allowance.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        b.tokens = (b.tokens + now.duration_since(b.at).as_secs_f64() * PER_SECOND).min(BURST);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn offer(&self, mut message: LoggingMessageNotificationParam) {
        self.exposed.scrub(&mut message.data);
        let sent = self.take_token()
            && self
                .tx
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .is_some_and(|tx| tx.try_send(message).is_ok());
        if !sent {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The log stream of the connection being served (one client per process).
static ACTIVE: RwLock<Option<Arc<ClientLog>>> = RwLock::new(None);

fn active() -> Option<Arc<ClientLog>> {
    ACTIVE.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Starts sending `log`'s messages to `peer`; returns the writer task.
pub fn activate(log: &Arc<ClientLog>, peer: Peer<RoleServer>) -> tokio::task::JoinHandle<()> {
    let (tx, rx) = mpsc::channel(QUEUE);
    *log.tx.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    *ACTIVE.write().unwrap_or_else(|p| p.into_inner()) = Some(log.clone());
    tokio::spawn(write(log.clone(), rx, peer))
}

/// Stops forwarding (the connection ended).
pub fn deactivate(log: &Arc<ClientLog>) {
    log.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut active = ACTIVE.write().unwrap_or_else(|p| p.into_inner());
    if active.as_ref().is_some_and(|a| Arc::ptr_eq(a, log)) {
        *active = None;
    }
}

async fn write(log: Arc<ClientLog>, mut rx: mpsc::Receiver<LoggingMessageNotificationParam>, peer: Peer<RoleServer>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        let message = tokio::select! {
            m = rx.recv() => match m {
                Some(m) => m,
                None => return,
            },
            _ = tick.tick() => {
                let n = log.dropped.swap(0, Ordering::Relaxed);
                if n == 0 {
                    continue;
                }
                LoggingMessageNotificationParam::new(
                    LoggingLevel::Warning,
                    json!({ "message": format!("{n} log message(s) were not sent: workbench sends at most {BURST} at once and {PER_SECOND} a second") }),
                )
                .with_logger("workbench")
            }
        };
        if peer.notify_logging_message(message).await.is_err() {
            return;
        }
    }
}

/// The layer to add to the tracing subscriber (with its own filter: workbench's events only).
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    ForwardLayer.with_filter(tracing_subscriber::filter::filter_fn(|m| {
        m.target().starts_with("workbench") && !m.target().starts_with(module_path!())
    }))
}

/// Installs the process's tracing: human-readable lines on stderr at `stderr_level`, plus
/// forwarding to the MCP client.
pub fn init_tracing(stderr_level: tracing_subscriber::filter::LevelFilter) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // stdout is the protocol: logs go to stderr, always.
    // The MCP library logs whole JSON-RPC messages (tool arguments, a vault value being stored)
    // at debug and trace: those events never reach the log, whatever WORKBENCH_LOG says.
    let no_wire_dumps = tracing_subscriber::filter::filter_fn(|meta| {
        !(meta.target().starts_with("rmcp") && *meta.level() > tracing::Level::INFO)
    });
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(stderr_level)
        .with_filter(no_wire_dumps);
    tracing_subscriber::registry().with(stderr).with(layer()).init();
}

struct ForwardLayer;

/// The level a request asked for, kept on its span.
struct RequestLevel(u8);

impl<S> Layer<S> for ForwardLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "mcp_request" {
            return;
        }
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let level = fields.0.get("client_log_level").and_then(Value::as_u64).unwrap_or(0);
        if level > 0
            && let Some(span) = ctx.span(id)
        {
            span.extensions_mut().insert(RequestLevel(level as u8));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(log) = active() else { return };
        let mut threshold = log.session_level.load(Ordering::Relaxed);
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                if let Some(RequestLevel(l)) = span.extensions().get::<RequestLevel>() {
                    threshold = *l;
                    break;
                }
            }
        }
        let (severity, level) = from_tracing(event.metadata().level());
        if threshold == 0 || severity < threshold {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let message =
            LoggingMessageNotificationParam::new(level, Value::Object(fields.0)).with_logger(event.metadata().target());
        log.offer(message);
    }
}

/// An event's fields as JSON, each string scrubbed of token-shaped text and cut to size.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Fields {
    fn text(&mut self, field: &Field, s: &str) {
        let s = crate::scrub::redact_tokens(s).unwrap_or_else(|| s.to_string());
        let (s, _) = plugins::api::truncate_chars(&s, MAX_TEXT);
        self.0.insert(field.name().to_string(), Value::String(s));
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.text(field, &format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, value);
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), json!(value));
    }
}
