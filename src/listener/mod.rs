//! The loopback listener's core: binding 127.0.0.1 (never another interface) on first need, the
//! guards every request passes, and the routes the modules above mount on it.
//!
//! Every request must name this listener in its `Host` header (DNS rebinding). Page routes
//! ([`Mount::Pages`]: connect, vault, unlock, approval, portal) also get the form rules: every POST
//! must carry an `Origin` of this listener, bodies are capped, and every answer carries no-store, a
//! same-origin referrer policy, a strict CSP and frame denial. Bearer-token routes
//! ([`Mount::Bare`]: the curl proxy) get the Host check alone. No request workbench itself sends
//! can reach this listener (the address guard in [`crate::net`] refuses its port).
//!
//! The listener knows no page: the composition root ([`crate::start`]) mounts each module's
//! routes before anything can start it, so this module depends on none of them.

pub mod pages;

use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};

use crate::app::App;

/// Largest form body accepted.
const MAX_BODY: usize = 64 * 1024;

/// What every route handler of the listener gets: the app, and the port it is served on.
#[derive(Clone)]
pub struct Site {
    pub app: Arc<App>,
    pub port: u16,
    /// The portal's per-launch keys (unset, so the portal answers nothing, until enabled).
    pub portal: Arc<Portal>,
}

/// Where the listener is.
#[derive(Debug, Clone)]
pub struct ListenerInfo {
    pub port: u16,
    /// The portal's per-launch keys (unset, so the portal answers nothing, until `workbench portal`).
    pub portal: Arc<Portal>,
}

impl ListenerInfo {
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// The portal's per-launch keys; empty (the portal answers nothing) until [`Portal::enable`].
#[derive(Default)]
pub struct Portal {
    keys: OnceLock<Keys>,
}

/// The URL token and the CSRF token of this launch.
pub struct Keys {
    pub token: String,
    pub csrf: String,
}

impl std::fmt::Debug for Portal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Portal").field("enabled", &self.keys.get().is_some()).finish()
    }
}

impl Portal {
    /// Mints this launch's tokens (once per process; later calls return the same ones).
    pub fn enable(&self) -> &Keys {
        self.keys.get_or_init(|| Keys { token: crate::ids::random_hex(32), csrf: crate::ids::random_hex(32) })
    }

    /// This launch's keys, when `token` is its URL token (compared in constant time).
    pub fn keys_for(&self, token: &str) -> Option<&Keys> {
        self.keys.get().filter(|k| same(k.token.as_bytes(), token.as_bytes()))
    }
}

/// Constant-time equality (length aside, which is public).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A module's routes, and which guard covers them.
#[derive(Clone, Copy)]
pub enum Mount {
    /// Pages and forms: Host and Origin checks, body cap, security headers.
    Pages(fn() -> axum::Router<Site>),
    /// Bearer-token endpoints: the Host check alone; they cap their own bodies.
    Bare(fn() -> axum::Router<Site>),
}

/// The listener's state: where it runs once started, and the routes to serve.
#[derive(Default)]
pub struct Listener {
    running: tokio::sync::OnceCell<ListenerInfo>,
    mounts: Mutex<Vec<Mount>>,
}

/// Adds routes to the listener; only before it starts (the composition root does this).
pub fn mount(app: &App, mount: Mount) {
    app.state.listener.mounts.lock().unwrap_or_else(|p| p.into_inner()).push(mount);
}

/// Where the listener runs, if it has started.
pub fn running(app: &App) -> Option<ListenerInfo> {
    app.state.listener.running.get().cloned()
}

/// Starts the listener once (on the configured port, or any free one) and returns where it is.
/// Why the listener could not start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error(
        "127.0.0.1:{port} is already in use (another program, perhaps another workbench, listens there); set WORKBENCH_PORT to a free port, or unset it to use any free port"
    )]
    PortTaken { port: u16, source: std::io::Error },
    #[error("cannot listen on 127.0.0.1:{port} for the connect page: {source} (set WORKBENCH_PORT to a free port)")]
    Bind { port: u16, source: std::io::Error },
    #[error("{0}")]
    Address(#[source] std::io::Error),
}

pub async fn ensure_listener(app: &Arc<App>) -> Result<ListenerInfo, ListenError> {
    let state = &app.state.listener;
    state
        .running
        .get_or_try_init(|| async {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], app.settings.listener_port));
            // A taken port is an error, not a fallback to another port: OAuth apps register the
            // exact loopback redirect, so a page on another port could not finish the flow.
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| {
                let port = app.settings.listener_port;
                if source.kind() == std::io::ErrorKind::AddrInUse {
                    ListenError::PortTaken { port, source }
                } else {
                    ListenError::Bind { port, source }
                }
            })?;
            let port = listener.local_addr().map_err(ListenError::Address)?.port();
            app.set_listening(port);
            let portal = Arc::new(Portal::default());
            let mounts = state.mounts.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let router = router(Site { app: app.clone(), port, portal: portal.clone() }, &mounts);
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, router).await {
                    tracing::error!(error = %e, "the connect listener stopped");
                }
            });
            tracing::info!(port, "connect listener started on 127.0.0.1");
            Ok(ListenerInfo { port, portal })
        })
        .await
        .cloned()
}

fn router(site: Site, mounts: &[Mount]) -> axum::Router {
    let mut bare = axum::Router::new();
    let mut pages = axum::Router::new();
    for m in mounts {
        match m {
            Mount::Bare(routes) => bare = bare.merge(routes()),
            Mount::Pages(routes) => pages = pages.merge(routes()),
        }
    }
    let bare = bare.layer(middleware::from_fn_with_state(site.clone(), host_guard)).with_state(site.clone());
    let pages = pages
        .fallback(|| async {
            page(StatusCode::NOT_FOUND, pages::failure("Not found", "There is nothing at this address."))
        })
        .layer(middleware::from_fn_with_state(site.clone(), guard))
        .with_state(site);
    bare.merge(pages)
}

fn host_ok(request: &Request, port: u16) -> bool {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    host == format!("127.0.0.1:{port}") || host == format!("localhost:{port}")
}

/// The Host check alone (DNS rebinding), for the curl proxy.
async fn host_guard(State(site): State<Site>, request: Request, next: Next) -> Response {
    if !host_ok(&request, site.port) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            axum::Json(serde_json::json!({ "error": "the curl proxy only answers at 127.0.0.1 on this computer", "code": "WRONG_HOST" })),
        )
            .into_response();
    }
    next.run(request).await
}

/// Host check (DNS rebinding), Origin check on POST, body cap, and security headers on every answer.
async fn guard(State(site): State<Site>, request: Request, next: Next) -> Response {
    let mut response = if !host_ok(&request, site.port) {
        page(
            StatusCode::MISDIRECTED_REQUEST,
            pages::failure("Wrong address", "This page only answers at 127.0.0.1 on this computer."),
        )
    } else if request.method() == axum::http::Method::POST && !origin_ok(request.headers(), site.port) {
        page(
            StatusCode::FORBIDDEN,
            pages::failure("Refused", "This form can only be sent from the page workbench served."),
        )
    } else if request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0)
        > MAX_BODY
    {
        page(
            StatusCode::PAYLOAD_TOO_LARGE,
            pages::failure("Too large", "That form is larger than any form workbench serves."),
        )
    } else {
        next.run(request).await
    };
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with every form POST (Fetch
    // standard), which the Origin check above rightly refuses. `same-origin` sends our origin to us
    // and nothing to any other site (an OAuth provider included).
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    // The portal sets its own, stricter one (nonces instead of 'unsafe-inline').
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        );
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn origin_ok(headers: &HeaderMap, port: u16) -> bool {
    match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        Some(o) => o == format!("http://127.0.0.1:{port}") || o == format!("http://localhost:{port}"),
        None => false,
    }
}

pub fn page(status: StatusCode, html: String) -> Response {
    (status, Html(html)).into_response()
}

/// Opens a URL in the user's browser when there is a desktop to show it on. Never blocks and
/// never writes to stdout; the URL is always returned to the agent as well.
pub fn open_in_browser(app: &App, url: &str) -> bool {
    if !app.settings.open_browser {
        return false;
    }
    let desktop = cfg!(any(target_os = "macos", target_os = "windows"))
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some();
    desktop && open::that_detached(url).is_ok()
}
