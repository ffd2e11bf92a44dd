//! The client side of MCP, to the user's other servers (`crate::upstream` drives it): rmcp's
//! client over a child's stdio or Streamable HTTP, behind a small API without rmcp types, so that
//! only `src/mcp/` knows rmcp (ARCHITECTURE.md invariant 1).
//!
//! - [`spawn`] starts a stdio server's process (stderr piped for the caller to read);
//! - [`Client::connect`] does the handshake over a [`Transport`] within a bounded time;
//! - [`Client::list_tools`] returns the server's tools as JSON (`tools/list`, all pages);
//! - [`Client::call_tool`] runs one tool, forwarding the server's `notifications/progress` for
//!   that request to a callback; dropping its future sends `notifications/cancelled` upstream;
//! - a server's `notifications/tools/list_changed` makes the client list again and hand the fresh
//!   list to the `on_tools_changed` callback given at connect.
//!
//! A Streamable HTTP server that answers 401 surfaces as [`ConnectError::AuthRequired`] /
//! [`CallError::AuthRequired`] with its `WWW-Authenticate` challenge (the caller runs OAuth).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, ProgressNotificationParam, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Map, Value};

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

/// A spawned stdio server, not yet connected.
pub struct Stdio {
    child: rmcp::transport::TokioChildProcess,
    pub pid: Option<u32>,
    /// The server's stderr; the caller takes it to read it.
    pub stderr: Option<tokio::process::ChildStderr>,
}

/// Starts `cmd` with piped stdin/stdout (the MCP channel) and stderr.
pub fn spawn(cmd: tokio::process::Command) -> std::io::Result<Stdio> {
    let (child, stderr) =
        rmcp::transport::TokioChildProcess::builder(cmd).stderr(std::process::Stdio::piped()).spawn()?;
    let pid = child.id();
    Ok(Stdio { child, pid, stderr })
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
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Server(m) | CallError::Transport(m) => f.write_str(m),
            CallError::AuthRequired { .. } => f.write_str("the server requires authorization"),
        }
    }
}

impl std::error::Error for CallError {}

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
        let peer = context.peer.clone();
        tokio::spawn(async move {
            match peer.list_all_tools().await {
                Ok(tools) => callback(tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect()),
                Err(e) => tracing::debug!(error = %e, "listing after tools/list_changed failed"),
            }
        });
    }
}

/// A connected MCP server.
pub struct Client {
    service: RunningService<RoleClient, Handler>,
    progress: ProgressDispatcher,
}

impl Client {
    /// Connects and does the MCP handshake within `timeout`.
    pub async fn connect(
        transport: Transport,
        on_tools_changed: Option<ToolsChanged>,
        timeout: Duration,
    ) -> Result<Client, ConnectError> {
        let progress = ProgressDispatcher::new();
        let handler = Handler { progress: progress.clone(), on_tools_changed };
        let served = match transport {
            Transport::Stdio(stdio) => tokio::time::timeout(timeout, handler.serve(stdio.child)).await,
            Transport::Http { client, url, headers, bearer } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url)
                    .custom_headers(headers)
                    .reinit_on_expired_session(true);
                if let Some(token) = bearer {
                    config = config.auth_header(token);
                }
                let transport = StreamableHttpClientTransport::with_client(client, config);
                tokio::time::timeout(timeout, handler.serve(transport)).await
            }
        };
        match served {
            Ok(Ok(service)) => Ok(Client { service, progress }),
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
        let tools = self.service.peer().list_all_tools().await.map_err(call_error)?;
        Ok(tools.iter().filter_map(|t| serde_json::to_value(t).ok()).collect())
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
        let handle =
            peer.send_request_with_option(request, PeerRequestOptions::no_options()).await.map_err(call_error)?;
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
        match result.map_err(call_error)? {
            ServerResult::CallToolResult(r) => serde_json::to_value(r).map_err(|e| CallError::Server(e.to_string())),
            ServerResult::EmptyResult(_) => Ok(serde_json::json!({ "content": [] })),
            _ => Err(CallError::Server("the server answered tools/call with another kind of result".into())),
        }
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
