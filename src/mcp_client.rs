//! The client side of MCP, to the user's other servers (`crate::upstream` drives it): rmcp's
//! client over a child's stdio or Streamable HTTP, behind a small API without rmcp types, so that
//! only this file and `src/mcp/` know rmcp (ARCHITECTURE.md invariant 1). A module of its own,
//! below `upstream`, apart from the server side in `src/mcp/`: it names no other module of the
//! crate but `jsonrpc` and `net` (a body read within its bound).
//!
//! - [`spawn`] starts a stdio server's process (stderr piped for the caller to read);
//! - [`Client::connect`] does the handshake over a [`Transport`] within a bounded time;
//! - [`Client::list_tools`] returns the server's tools as JSON (`tools/list`, all pages, within
//!   [`MAX_LISTED_TOOLS`], [`MAX_LISTED_BYTES`] and [`MAX_LIST_PAGES`] however the pages go on);
//! - [`Client::call_tool`] runs one tool, forwarding the server's `notifications/progress` for
//!   that request to a callback; dropping its future sends `notifications/cancelled` upstream;
//! - a server's `notifications/tools/list_changed` makes the client list again and hand the fresh
//!   list to the `on_tools_changed` callback given at connect: one listing at a time, however many
//!   notifications come (those during a listing ask for one more after it), each within
//!   [`LIST_TIMEOUT`].
//!
//! A Streamable HTTP server that answers 401 surfaces as [`ConnectError::AuthRequired`] /
//! [`CallError::AuthRequired`] with its `WWW-Authenticate` challenge (the caller runs OAuth).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, ReadBuf};

use crate::jsonrpc::IdScan;

mod http;

pub use reqwest::header::{HeaderName, HeaderValue};

/// Called with a server's fresh tool list after `notifications/tools/list_changed`.
pub type ToolsChanged = Arc<dyn Fn(Vec<Value>) + Send + Sync>;

/// One `notifications/progress` of a running call, as the server sent it (unscrubbed: the caller
/// scrubs before showing it to anyone).
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Called for each progress notification of one call.
pub type OnProgress = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// Most tools read of one server's listing, across its `tools/list` pages: a hostile server's
/// pages could otherwise go on until memory runs out (each page is bounded as a message is).
pub const MAX_LISTED_TOOLS: usize = 5_000;
/// Most bytes of one server's listed tools (as compact JSON), across its pages: as much as one
/// message may hold.
pub const MAX_LISTED_BYTES: usize = MAX_UPSTREAM_LINE_BYTES;
/// Most `tools/list` pages of one listing (pages without tools cost no memory but never end).
pub const MAX_LIST_PAGES: usize = 1_000;
/// Most requests a server may send workbench (`ping`, `roots/list`, ...) in [`REQUEST_WINDOW`]:
/// each is answered, and the answers to a server that does not read them were queued without
/// bound (a million took workbench to 2.4 GiB). Past it the connection ends.
pub const MAX_SERVER_REQUESTS: usize = 1_000;
/// The window [`MAX_SERVER_REQUESTS`] counts in.
pub const REQUEST_WINDOW: Duration = Duration::from_secs(10);

/// The requests a server sent in the current window.
#[derive(Default)]
struct RequestBudget {
    since: Option<std::time::Instant>,
    count: usize,
}

impl RequestBudget {
    /// Counts one request of the server's; `Some(why)` once it is over the budget.
    fn take(&mut self) -> Option<String> {
        let now = std::time::Instant::now();
        if self.since.is_none_or(|s| now.duration_since(s) >= REQUEST_WINDOW) {
            (self.since, self.count) = (Some(now), 0);
        }
        self.count += 1;
        (self.count > MAX_SERVER_REQUESTS).then(|| {
            format!(
                "the server sent workbench more than {MAX_SERVER_REQUESTS} requests of its own in {} s, over workbench's limit; workbench closed the connection",
                REQUEST_WINDOW.as_secs()
            )
        })
    }
}

/// Longest a listing after `notifications/tools/list_changed` may take.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest message (one line) read from a stdio server: 8 MiB, as for our own clients (the stdio
/// transport's `MAX_LINE_BYTES`; a test there keeps the two equal); a 6 MB answer passes. rmcp's
/// own bound (16 MiB) drops an over-long line silently and a dense 16 MiB line parses into
/// gigabytes.
pub const MAX_UPSTREAM_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Most weighed JSON values (`,` 1, `[` 2, `{` 8) in one message from a stdio server: twice the
/// stdio transport's `MAX_LINE_VALUES`.
pub const MAX_UPSTREAM_LINE_VALUES: usize = 200_000;

/// A spawned stdio server, not yet connected.
pub struct Stdio {
    child: Box<ChildTransport>,
    pub pid: Option<u32>,
    /// The server's stderr; the caller takes it to read it.
    pub stderr: Option<tokio::process::ChildStderr>,
}

/// Starts `cmd` with piped stdin/stdout (the MCP channel) and stderr.
pub fn spawn(mut cmd: tokio::process::Command) -> std::io::Result<Stdio> {
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the server's stdin or stdout could not be piped"));
    };
    let stderr = child.stderr.take();
    let refused = Arc::new(Mutex::new(None));
    let read = UpstreamLines {
        inner: stdout,
        line_len: 0,
        scan: IdScan::default(),
        requests: RequestBudget::default(),
        refused: refused.clone(),
    };
    let transport = AsyncRwTransport::new_client(read, stdin).with_max_line_length(MAX_UPSTREAM_LINE_BYTES + 2);
    Ok(Stdio { child: Box::new(ChildTransport { child, transport, refused }), pid, stderr })
}

/// A child's stdio as rmcp's transport, its stdout read through [`UpstreamLines`]. Closing it
/// closes the child's stdin, waits up to 3 s, sends SIGTERM (Unix), waits 2 s more, then kills.
struct ChildTransport {
    child: tokio::process::Child,
    transport: AsyncRwTransport<RoleClient, UpstreamLines<tokio::process::ChildStdout>, tokio::process::ChildStdin>,
    refused: Refused,
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.transport.close().await;
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await.is_ok() {
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on our own child's pid, which we have not reaped yet.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            if tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await.is_ok() {
                return Ok(());
            }
        }
        self.child.kill().await
    }
}

/// Why workbench ended a stdio connection itself (a message over the limits), for the caller.
type Refused = Arc<Mutex<Option<String>>>;

/// A stdio server's stdout with messages bounded: a line over [`MAX_UPSTREAM_LINE_BYTES`] or
/// [`MAX_UPSTREAM_LINE_VALUES`], or a request past [`MAX_SERVER_REQUESTS`], ends the connection
/// (a read error) before rmcp buffers or parses it, and the reason is kept for the call that was
/// waiting.
struct UpstreamLines<R> {
    inner: R,
    line_len: usize,
    scan: IdScan,
    requests: RequestBudget,
    refused: Refused,
}

impl<R: AsyncRead + Unpin> AsyncRead for UpstreamLines<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if let Some(why) = this.refused.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Poll::Ready(Err(std::io::Error::other(why)));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            for &b in &buf.filled()[before..] {
                if b == b'\n' {
                    let request = this.scan.has_method && this.scan.id().is_some();
                    this.line_len = 0;
                    this.scan = IdScan::default();
                    if let Some(why) = request.then(|| this.requests.take()).flatten() {
                        tracing::warn!("{why}");
                        *this.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
                        buf.set_filled(before);
                        return Poll::Ready(Err(std::io::Error::other(why)));
                    }
                    continue;
                }
                this.line_len += 1;
                this.scan.push(b);
                let why = if this.line_len > MAX_UPSTREAM_LINE_BYTES {
                    format!(
                        "the server sent a message over workbench's limit of {MAX_UPSTREAM_LINE_BYTES} bytes (8 MiB) per message; workbench closed the connection without reading it"
                    )
                } else if this.scan.values > MAX_UPSTREAM_LINE_VALUES {
                    format!(
                        "the server sent a message of more than {MAX_UPSTREAM_LINE_VALUES} JSON values (an object counts as 8), over workbench's limit per message; workbench closed the connection without reading it"
                    )
                } else {
                    continue;
                };
                tracing::warn!("{why}");
                *this.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
                buf.set_filled(before);
                return Poll::Ready(Err(std::io::Error::other(why)));
            }
        }
        r
    }
}

/// How to reach a server.
pub enum Transport {
    Stdio(Stdio),
    /// Streamable HTTP on `client` (the caller's guarded client), with extra headers and an
    /// OAuth access token sent as `Authorization: Bearer`.
    Http {
        client: reqwest::Client,
        url: String,
        headers: HashMap<HeaderName, HeaderValue>,
        bearer: Option<String>,
    },
}

/// Why a connection could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectError {
    /// The server answered 401/403 with this `WWW-Authenticate` challenge.
    AuthRequired { challenge: String },
    /// The handshake did not finish in time.
    Timeout,
    /// Anything else (transport, protocol), in words.
    Failed(String),
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// The server answered with a JSON-RPC error: the connection is fine.
    Server(String),
    /// The server asked for (new) authorization: 401/403 with this challenge.
    AuthRequired { challenge: String },
    /// The connection failed or closed.
    Transport(String),
    /// The server sent a message over workbench's limits, so workbench closed the connection.
    TooLarge(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Server(m) | CallError::Transport(m) | CallError::TooLarge(m) => f.write_str(m),
            CallError::AuthRequired { .. } => f.write_str("the server requires authorization"),
        }
    }
}

impl std::error::Error for CallError {}

/// Why a listing failed: the server's error, or workbench's limits across pages.
enum ListFailure {
    Service(rmcp::ServiceError),
    Over(String),
}

/// Counts the bytes serde writes.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every tool of a server's listing, page after page, as JSON: each page's tools turned to JSON
/// and weighed as they come, and the listing refused (nothing of it kept) past
/// [`MAX_LISTED_TOOLS`], [`MAX_LISTED_BYTES`] or [`MAX_LIST_PAGES`].
async fn list_bounded(peer: &rmcp::Peer<RoleClient>) -> Result<Vec<Value>, ListFailure> {
    let mut tools = Vec::new();
    let (mut bytes, mut cursor) = (0usize, None);
    for _ in 0..MAX_LIST_PAGES {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .map_err(ListFailure::Service)?;
        if tools.len() + page.tools.len() > MAX_LISTED_TOOLS {
            return Err(ListFailure::Over(format!(
                "the server listed more than {MAX_LISTED_TOOLS} tools across its tools/list pages, over workbench's limit per server; workbench stopped reading its listing"
            )));
        }
        for tool in &page.tools {
            let mut counted = Counted(0);
            if serde_json::to_writer(&mut counted, tool).is_err() {
                continue;
            }
            bytes += counted.0;
            if bytes > MAX_LISTED_BYTES {
                return Err(ListFailure::Over(format!(
                    "the server's tool listing is larger than {MAX_LISTED_BYTES} bytes (8 MiB) across its tools/list pages, over workbench's limit per server; workbench stopped reading it"
                )));
            }
            if let Ok(v) = serde_json::to_value(tool) {
                tools.push(v);
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(ListFailure::Over(format!(
        "the server's tool listing went on past {MAX_LIST_PAGES} tools/list pages, over workbench's limit per server; workbench stopped reading it"
    )))
}

fn call_error(e: rmcp::ServiceError) -> CallError {
    if let Some(challenge) = e.auth_challenge() {
        return CallError::AuthRequired { challenge: challenge.to_string() };
    }
    match e {
        rmcp::ServiceError::McpError(e) => CallError::Server(e.to_string()),
        other => CallError::Transport(other.to_string()),
    }
}

/// rmcp's client side for one server: who we are, progress routing and tool-list changes.
#[derive(Clone)]
struct Handler {
    progress: ProgressDispatcher,
    on_tools_changed: Option<ToolsChanged>,
    /// Whether a listing after `tools/list_changed` runs (1) and another is asked for (2).
    relisting: Arc<AtomicU8>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("workbench", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let Some(callback) = self.on_tools_changed.clone() else { return };
        // 0: no listing; 1: one running; 2: one running and another asked for after it.
        let state = self.relisting.clone();
        let before = state.fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| Some(if s == 0 { 1 } else { 2 }));
        if before != Ok(0) {
            return;
        }
        let peer = context.peer.clone();
        tokio::spawn(async move {
            loop {
                match tokio::time::timeout(LIST_TIMEOUT, list_bounded(&peer)).await {
                    Ok(Ok(tools)) => callback(tools),
                    Ok(Err(ListFailure::Service(e))) => {
                        tracing::debug!(error = %e, "listing after tools/list_changed failed")
                    }
                    Ok(Err(ListFailure::Over(why))) => {
                        tracing::warn!(why, "listing after tools/list_changed refused; the last listing stays")
                    }
                    Err(_) => tracing::warn!("listing after tools/list_changed took too long; the last listing stays"),
                }
                // 2 -> 1: list once more; 1 -> 0: done.
                if state.fetch_sub(1, Ordering::AcqRel) == 1 {
                    break;
                }
            }
        });
    }
}

/// A connected MCP server.
pub struct Client {
    service: RunningService<RoleClient, Handler>,
    progress: ProgressDispatcher,
    /// Set when workbench closed a stdio connection over a message's size.
    refused: Option<Refused>,
}

impl Client {
    /// Connects and does the MCP handshake within `timeout`.
    pub async fn connect(
        transport: Transport,
        on_tools_changed: Option<ToolsChanged>,
        timeout: Duration,
    ) -> Result<Client, ConnectError> {
        let progress = ProgressDispatcher::new();
        let handler = Handler { progress: progress.clone(), on_tools_changed, relisting: Arc::default() };
        let refused;
        let served = match transport {
            Transport::Stdio(stdio) => {
                refused = Some(stdio.child.refused.clone());
                tokio::time::timeout(timeout, handler.serve(*stdio.child)).await
            }
            Transport::Http { client, url, headers, bearer } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url)
                    .custom_headers(headers)
                    .reinit_on_expired_session(true)
                    // rmcp's default is 16 MiB for both; ours matches the stdio bound.
                    .max_json_response_size(MAX_UPSTREAM_LINE_BYTES)
                    .max_sse_event_size(MAX_UPSTREAM_LINE_BYTES);
                if let Some(token) = bearer {
                    config = config.auth_header(token);
                }
                // Answers are weighed before rmcp parses them (`http::Weighed`).
                let weighed = http::Weighed { client, refused: Arc::new(Mutex::new(None)), requests: Arc::default() };
                refused = Some(weighed.refused.clone());
                let transport = StreamableHttpClientTransport::with_client(weighed, config);
                tokio::time::timeout(timeout, handler.serve(transport)).await
            }
        };
        match served {
            Ok(Ok(service)) => Ok(Client { service, progress, refused }),
            Ok(Err(e)) => match e.auth_challenge() {
                Some(challenge) => Err(ConnectError::AuthRequired { challenge: challenge.to_string() }),
                None => Err(ConnectError::Failed(e.to_string())),
            },
            Err(_) => Err(ConnectError::Timeout),
        }
    }

    /// Whether the connection is gone (the process exited, the session closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.peer().is_transport_closed()
    }

    /// Every tool of the server (`tools/list`, all pages), as JSON.
    pub async fn list_tools(&self) -> Result<Vec<Value>, CallError> {
        match list_bounded(self.service.peer()).await {
            Ok(tools) => Ok(tools),
            Err(ListFailure::Service(e)) => Err(self.error(e)),
            Err(ListFailure::Over(why)) => Err(CallError::TooLarge(why)),
        }
    }

    /// Runs one tool; returns its `CallToolResult` as JSON. The server's progress notifications
    /// for this request go to `on_progress`. Dropping the future before the answer sends
    /// `notifications/cancelled` for the request.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        on_progress: Option<OnProgress>,
    ) -> Result<Value, CallError> {
        let peer = self.service.peer();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(name.to_string()).with_arguments(arguments),
        ));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.error(e))?;
        let mut guard = CancelOnDrop { peer: Some(peer.clone()), id: Some(handle.id.clone()) };
        let mut updates = self.progress.subscribe(handle.progress_token.clone()).await;
        let response = handle.await_response();
        tokio::pin!(response);
        let result = loop {
            tokio::select! {
                r = &mut response => break r,
                Some(p) = updates.next() => {
                    if let Some(f) = &on_progress {
                        f(ProgressUpdate { progress: p.progress, total: p.total, message: p.message });
                    }
                }
            }
        };
        guard.id = None;
        // Notifications already queued behind the answer still count; later ones are dropped.
        while let Some(Some(p)) = updates.next().now_or_never() {
            if let Some(f) = &on_progress {
                f(ProgressUpdate { progress: p.progress, total: p.total, message: p.message });
            }
        }
        match result.map_err(|e| self.error(e))? {
            ServerResult::CallToolResult(r) => serde_json::to_value(r).map_err(|e| CallError::Server(e.to_string())),
            ServerResult::EmptyResult(_) => Ok(serde_json::json!({ "content": [] })),
            _ => Err(CallError::Server("the server answered tools/call with another kind of result".into())),
        }
    }

    /// A failed request's error: [`CallError::TooLarge`] when workbench closed the connection over a
    /// message's size.
    fn error(&self, e: rmcp::ServiceError) -> CallError {
        if let Some(why) = self.refused.as_ref().and_then(|r| r.lock().unwrap_or_else(|e| e.into_inner()).clone()) {
            return CallError::TooLarge(why);
        }
        call_error(e)
    }

    /// Ends the connection: stdin closed, then SIGTERM, then kill for a child (rmcp's order).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting.
struct CancelOnDrop {
    peer: Option<rmcp::Peer<RoleClient>>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(peer), Some(id)) = (self.peer.take(), self.id.take()) else { return };
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let param = CancelledNotificationParam::new(Some(id), Some("the caller stopped waiting".into()));
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}
