//! The loopback listener: connect pages, the OAuth callback and the vault secret page.
//!
//! It starts on first need, binds 127.0.0.1 only (never another interface), and every request must
//! name this listener in its `Host` header (DNS rebinding). Every POST must carry an `Origin` of this
//! listener and spend a one-time form token; a POST that stores a credential or a secret or unlocks
//! the store must also be a browser's form submission (`Sec-Fetch-Site: same-origin`,
//! `Sec-Fetch-Mode: navigate`), and replacing a stored connection needs the page's "Replace" box.
//! OAuth callbacks must present a single-use `state`. No request workbench itself sends can reach
//! this listener (the address guard in `builtins::ssrf` refuses its port).
//! Every answer carries no-store, a same-origin referrer policy, a strict CSP and frame denial, and
//! bodies are capped.

// Page lookups return the finished error page as their `Err`; a large `Err` is fine on a path that
// runs once per human click.
#![allow(clippy::result_large_err)]

pub mod form;
pub mod oauth;
pub mod pages;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use plugins::api::{AuthKind, Integration};

use crate::app::{App, OAuthInFlight, PendingConnect, PendingSecret, PendingState};
use crate::auth::{self, Saved, Source};
use crate::secrets::Secret;

/// Largest form body accepted.
const MAX_BODY: usize = 64 * 1024;

/// Where the listener is.
#[derive(Debug, Clone)]
pub struct ListenerInfo {
    pub port: u16,
    /// The portal's per-launch keys (unset, so the portal answers nothing, until `workbench portal`).
    pub portal: Arc<crate::portal::Portal>,
}

impl ListenerInfo {
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// Starts the listener once (on the configured port, or any free one) and returns where it is.
pub async fn ensure_listener(app: &Arc<App>) -> Result<ListenerInfo, String> {
    app.listener
        .get_or_try_init(|| async {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], app.settings.listener_port));
            // A taken port is an error, not a fallback to another port: OAuth apps register the
            // exact loopback redirect, so a page on another port could not finish the flow.
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                let port = app.settings.listener_port;
                if e.kind() == std::io::ErrorKind::AddrInUse {
                    format!(
                        "127.0.0.1:{port} is already in use (another program, perhaps another workbench, listens there); set WORKBENCH_PORT to a free port, or unset it to use any free port"
                    )
                } else {
                    format!("cannot listen on 127.0.0.1:{port} for the connect page: {e} (set WORKBENCH_PORT to a free port)")
                }
            })?;
            let port = listener.local_addr().map_err(|e| e.to_string())?.port();
            let portal = Arc::new(crate::portal::Portal::default());
            let router = router(app.clone(), port, portal.clone());
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

#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) app: Arc<App>,
    pub(crate) port: u16,
    pub(crate) portal: Arc<crate::portal::Portal>,
}

fn router(app: Arc<App>, port: u16, portal: Arc<crate::portal::Portal>) -> axum::Router {
    let ctx = Ctx { app, port, portal };
    // The curl proxy authenticates with its bearer token (no cookies, no forms): it gets the Host
    // check but not the form rules, and streams bodies up to its own cap.
    let proxy = axum::Router::new()
        .route("/c/{*rest}", axum::routing::any(proxy_route))
        .layer(middleware::from_fn_with_state(ctx.clone(), host_guard))
        .with_state(ctx.clone());
    let pages = axum::Router::new()
        .merge(crate::portal::routes())
        .route("/connect/{id}", get(connect_page).post(connect_submit))
        .route("/oauth/callback", get(oauth_callback))
        .route("/vault/{id}", get(secret_page).post(secret_submit))
        .route("/unlock/{id}", get(unlock_page).post(unlock_submit))
        .route("/approve/{id}", get(crate::approval::approval_page).post(crate::approval::approval_submit))
        .fallback(|| async {
            page(StatusCode::NOT_FOUND, pages::failure("Not found", "There is nothing at this address."))
        })
        .layer(middleware::from_fn_with_state(ctx.clone(), guard))
        .with_state(ctx);
    proxy.merge(pages)
}

async fn proxy_route(State(ctx): State<Ctx>, request: Request) -> Response {
    crate::proxy::handle(ctx.app, request).await
}

fn host_ok(request: &Request, port: u16) -> bool {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    host == format!("127.0.0.1:{port}") || host == format!("localhost:{port}")
}

/// The Host check alone (DNS rebinding), for the curl proxy.
async fn host_guard(State(ctx): State<Ctx>, request: Request, next: Next) -> Response {
    if !host_ok(&request, ctx.port) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            axum::Json(serde_json::json!({ "error": "the curl proxy only answers at 127.0.0.1 on this computer", "code": "WRONG_HOST" })),
        )
            .into_response();
    }
    next.run(request).await
}

/// Host check (DNS rebinding), Origin check on POST, body cap, and security headers on every answer.
async fn guard(State(ctx): State<Ctx>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let allowed = [format!("127.0.0.1:{}", ctx.port), format!("localhost:{}", ctx.port)];
    let mut response = if !allowed.iter().any(|a| a == host) {
        page(
            StatusCode::MISDIRECTED_REQUEST,
            pages::failure("Wrong address", "This page only answers at 127.0.0.1 on this computer."),
        )
    } else if request.method() == axum::http::Method::POST && !origin_ok(request.headers(), ctx.port) {
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

pub(crate) fn page(status: StatusCode, html: String) -> Response {
    (status, Html(html)).into_response()
}

fn new_token() -> String {
    crate::ids::random_hex(32)
}

/// Registers a pending connection of one account (`auth::DEFAULT_ACCOUNT` unless one was
/// named) and returns its id (the listener must be running).
pub fn begin(app: &App, integration: &str, account: &str) -> String {
    let id = crate::ids::random_hex(16);
    let mut pending = app.pending.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    pending.retain(|_, p| p.expires > now || p.state == PendingState::Connected);
    pending.insert(id.clone(), PendingConnect::new(integration, account, app.settings.connect_ttl));
    id
}

/// Looks up a live pending connection; expired ones are reported as such.
fn live(app: &App, id: &str) -> Result<(&'static Integration, PendingConnect), Response> {
    let pending = app.pending.lock().unwrap_or_else(|p| p.into_inner());
    let Some(p) = pending.get(id).cloned() else {
        return Err(page(
            StatusCode::NOT_FOUND,
            pages::failure(
                "Link not found",
                "This connect link is unknown or was already used. Ask your agent to call connect again.",
            ),
        ));
    };
    if p.state == PendingState::Connected {
        return Err(page(StatusCode::OK, pages::success("Already connected", "This connection is complete.")));
    }
    if Instant::now() >= p.expires {
        return Err(page(
            StatusCode::GONE,
            pages::failure("Link expired", "This connect link has expired. Ask your agent to call connect again."),
        ));
    }
    let integration = app.registry().integration(&p.integration).ok_or_else(|| {
        page(
            StatusCode::NOT_FOUND,
            pages::failure("Unknown integration", "This workbench does not know that integration."),
        )
    })?;
    Ok((integration, p))
}

fn issue_form_token(app: &App, id: &str) -> String {
    let token = new_token();
    if let Some(p) = app.pending.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
        p.form_tokens.push(token.clone());
    }
    token
}

/// The account a new credential would replace: `Some(label)` when this account of the
/// integration is already stored (reconnecting it needs the user's explicit "replace"; adding
/// another account does not replace anything).
fn replaced_account(app: &App, integration: &Integration, account: &str) -> Option<String> {
    let meta = app.storage.account_meta(integration.name, account).ok().flatten()?;
    let label = meta.account_label.unwrap_or_else(|| "an account whose name is not known".to_string());
    Some(if account == auth::DEFAULT_ACCOUNT { label } else { format!("{label} (workbench account '{account}')") })
}

/// The account a pending flow stores into.
fn pending_account(app: &App, id: &str) -> String {
    app.pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(id)
        .map(|p| p.account_name.clone())
        .unwrap_or_else(|| auth::DEFAULT_ACCOUNT.to_string())
}

/// A line telling the user which of the integration's accounts this page connects (when it is not
/// the only, default one).
fn account_note(app: &App, integration: &'static Integration, account: &str) -> Option<String> {
    let others = app.accounts(integration).into_iter().any(|a| a.name != account);
    (account != auth::DEFAULT_ACCOUNT || others).then(|| {
        format!(
            "This connects the {} account <code>{}</code>.",
            pages::escape(integration.display_name),
            pages::escape(account)
        )
    })
}

fn form_page(
    app: &App,
    id: &str,
    integration: &'static Integration,
    error: Option<&str>,
    note: Option<&str>,
) -> Response {
    let token = issue_form_token(app, id);
    let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    let account = pending_account(app, id);
    let replacing = replaced_account(app, integration, &account);
    let account_line = account_note(app, integration, &account);
    let note = match (note, account_line.as_deref()) {
        (Some(n), Some(a)) => Some(format!("{a} {n}")),
        (n, a) => n.or(a).map(str::to_string),
    };
    let note = note.as_deref();
    page(
        status,
        pages::credential_form(
            integration,
            integration.auth.fields,
            &format!("/connect/{id}"),
            &token,
            error,
            note,
            replacing.as_deref(),
        ),
    )
}

/// Sends the browser to the provider's consent page (state and PKCE verifier kept for the callback).
fn oauth_redirect(
    ctx: &Ctx,
    id: &str,
    integration: &'static Integration,
    spec: &'static plugins::api::OAuth,
    client: &crate::config::OAuthClient,
) -> Response {
    let app = &ctx.app;
    let (verifier, challenge) = oauth::pkce_pair();
    let state = new_token();
    let redirect_uri = redirect_uri(spec, ctx.port);
    let url = oauth::authorize_url(app, integration, spec, client, &redirect_uri, &state, &challenge);
    if let Some(p) = app.pending.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
        p.oauth = Some(OAuthInFlight { state, verifier, redirect_uri });
    }
    // 303: the browser follows a POST (the replace confirmation) with a GET.
    Redirect::to(&url).into_response()
}

/// The loopback redirect URI the provider sends the browser back to (Slack wants `localhost`).
fn redirect_uri(spec: &plugins::api::OAuth, port: u16) -> String {
    let host = if spec.client == "slack" { "localhost" } else { "127.0.0.1" };
    format!("http://{host}:{port}/oauth/callback")
}

/// The bring-your-own OAuth client guide: how to create the client at the provider (redirect URI,
/// scopes, app type), then a form for its id and secret.
fn client_guide(
    ctx: &Ctx,
    id: &str,
    integration: &'static Integration,
    spec: &'static plugins::api::OAuth,
    error: Option<&str>,
) -> Response {
    let token = issue_form_token(&ctx.app, id);
    let fixed_port = ctx.app.settings.listener_port != 0;
    page(
        if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK },
        pages::oauth_client_guide(
            integration,
            spec,
            &redirect_uri(spec, ctx.port),
            fixed_port,
            &format!("/connect/{id}"),
            &token,
            error,
        ),
    )
}

/// Refuses a credential POST that is not a form submitted by a browser from our own page: every
/// current browser sends `Sec-Fetch-Site: same-origin` and `Sec-Fetch-Mode: navigate` with one;
/// a script, another program or a cross-site page does not.
fn browser_form(headers: &HeaderMap) -> Result<(), Response> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("");
    if get("sec-fetch-site") == "same-origin" && get("sec-fetch-mode") == "navigate" {
        return Ok(());
    }
    Err(page(
        StatusCode::FORBIDDEN,
        pages::failure(
            "Refused",
            "This form stores a credential, so only a person can send it: open the page in your web browser and submit it there. Nothing was stored.",
        ),
    ))
}

async fn connect_page(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    let app = &ctx.app;
    let (integration, _) = match live(app, &id) {
        Ok(v) => v,
        Err(r) => return r,
    };
    match (integration.auth.kind, integration.auth.oauth.as_ref()) {
        (AuthKind::OAuth2, Some(spec)) => match oauth::client_for(app, spec) {
            Some(client) => match replaced_account(app, integration, &pending_account(app, &id)) {
                // Signing in again replaces the stored connection: the user confirms that first.
                Some(account) => {
                    let token = issue_form_token(app, &id);
                    page(
                        StatusCode::OK,
                        pages::replace_confirm(integration, &account, &format!("/connect/{id}"), &token, None),
                    )
                }
                None => oauth_redirect(&ctx, &id, integration, spec, &client),
            },
            None if !integration.auth.fields.is_empty() => {
                let note = format!(
                    "No <code>{}</code> OAuth client is configured, so sign-in is not available; paste a token instead (see the README for creating your own OAuth client).",
                    pages::escape(spec.client)
                );
                form_page(app, &id, integration, None, Some(&note))
            }
            // No client configured: walk the user through creating one, then take it here.
            None => client_guide(&ctx, &id, integration, spec, None),
        },
        _ => form_page(app, &id, integration, None, None),
    }
}

async fn connect_submit(State(ctx): State<Ctx>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &ctx.app;
    if let Err(refused) = browser_form(&headers) {
        return refused;
    }
    let (integration, pending) = match live(app, &id) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Some(fields) = form::parse(&body) else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Unreadable form", "That form could not be read."));
    };
    let sent: HashMap<&str, &str> = fields.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    // The one-time token: spend it, or refuse the whole submission.
    let token_ok = match sent.get("form_token") {
        Some(t) => {
            let mut all = app.pending.lock().unwrap_or_else(|p| p.into_inner());
            match all.get_mut(&id) {
                Some(p) => match p.form_tokens.iter().position(|x| x == t) {
                    Some(i) => {
                        p.form_tokens.remove(i);
                        true
                    }
                    None => false,
                },
                None => false,
            }
        }
        None => false,
    };
    if !token_ok {
        return page(
            StatusCode::FORBIDDEN,
            pages::failure(
                "Form expired",
                "This form was already used or is stale. Reload the connect page and try again.",
            ),
        );
    }
    // The guide's form: the OAuth client the user created at the provider. Stored in the secret
    // store (never a file or SQLite), then the sign-in continues.
    if integration.auth.kind == AuthKind::OAuth2
        && let Some(spec) = integration.auth.oauth.as_ref()
        && sent.contains_key("oauth_client_id")
        && oauth::client_for(app, spec).is_none()
    {
        let client_id = sent.get("oauth_client_id").map(|v| v.trim()).unwrap_or_default();
        let secret = sent.get("oauth_client_secret").map(|v| v.trim()).filter(|v| !v.is_empty());
        let printable = |v: &str| v.len() <= 1024 && v.bytes().all(|b| b.is_ascii_graphic());
        if client_id.is_empty() || !printable(client_id) || secret.is_some_and(|s| !printable(s)) {
            return client_guide(
                &ctx,
                &id,
                integration,
                spec,
                Some("Paste the client ID (and secret) exactly as the provider shows them; nothing was stored."),
            );
        }
        if let Err(e) = oauth::store_client(app, spec, client_id, secret) {
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                pages::failure("Could not store the OAuth client", &format!("{e}. {}", crate::secrets::STORE_HELP)),
            );
        }
        if let Some(s) = secret {
            app.exposed.remember(s);
        }
        let Some(client) = oauth::client_for(app, spec) else {
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                pages::failure("Could not read the OAuth client back", crate::secrets::STORE_HELP),
            );
        };
        if let Some(account) = replaced_account(app, integration, &pending.account_name) {
            let token = issue_form_token(app, &id);
            return page(
                StatusCode::OK,
                pages::replace_confirm(integration, &account, &format!("/connect/{id}"), &token, None),
            );
        }
        return oauth_redirect(&ctx, &id, integration, spec, &client);
    }
    // Replacing a stored account needs the user's explicit approval on the page.
    if let Some(account) = replaced_account(app, integration, &pending.account_name)
        && sent.get("replace").copied() != Some("yes")
    {
        let error = format!(
            "{} is already connected as {account}. Tick \"Replace\" to replace that connection; nothing was changed.",
            integration.display_name
        );
        if integration.auth.kind == AuthKind::OAuth2
            && let Some(spec) = integration.auth.oauth.as_ref()
            && oauth::client_for(app, spec).is_some()
        {
            let token = issue_form_token(app, &id);
            return page(
                StatusCode::BAD_REQUEST,
                pages::replace_confirm(integration, &account, &format!("/connect/{id}"), &token, Some(&error)),
            );
        }
        return form_page(app, &id, integration, Some(&error), None);
    }
    if integration.auth.kind == AuthKind::OAuth2
        && let Some(spec) = integration.auth.oauth.as_ref()
        && let Some(client) = oauth::client_for(app, spec)
    {
        return oauth_redirect(&ctx, &id, integration, spec, &client);
    }
    let mut values = HashMap::new();
    let mut missing = Vec::new();
    for f in integration.auth.fields {
        match sent.get(f.name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            Some(v) => {
                values.insert(f.name.to_string(), Secret::new(v.to_string()));
            }
            None if f.required => missing.push(f.label),
            None => {}
        }
    }
    if !missing.is_empty() {
        return form_page(app, &id, integration, Some(&format!("Please fill in: {}.", missing.join(", "))), None);
    }
    let mut connection = auth::from_fields(integration, values, Source::Store);
    connection.account = pending.account_name.clone();
    let label = match crate::engine::http::verify_identity(app, integration, connection.clone()).await {
        Ok(label) => label,
        Err(e) => {
            let message = match e {
                plugins::api::ToolError::Upstream { message, .. } => message,
                other => format!("{} could not be reached to check it: {other}", integration.display_name),
            };
            let scrubbed = crate::engine::scrub::Scrubber::new(connection.secret_values()).text(&message);
            return form_page(
                app,
                &id,
                integration,
                Some(&format!("That did not work: {scrubbed}. Nothing was stored.")),
                None,
            );
        }
    };
    finish(app, &id, integration, &connection, Saved { account_label: label, scopes: None, expires_at: None })
}

/// Stores a verified connection, marks the pending flow done and shows the success page.
fn finish(
    app: &App,
    id: &str,
    integration: &'static Integration,
    connection: &auth::Connection,
    saved: Saved,
) -> Response {
    let label = saved.account_label.clone();
    if let Err(e) = auth::save(app, connection, saved) {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            pages::failure("Could not store the credential", &format!("{e}. {}", crate::secrets::STORE_HELP)),
        );
    }
    if let Some(p) = app.pending.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
        p.state = PendingState::Connected;
        p.form_tokens.clear();
        p.oauth = None;
        p.account = label.clone();
    }
    let mut who = label.map(|l| format!(" as {l}")).unwrap_or_default();
    if connection.account != auth::DEFAULT_ACCOUNT {
        who.push_str(&format!(" (account '{}')", connection.account));
    }
    page(
        StatusCode::OK,
        pages::success(
            &format!("{} connected", integration.display_name),
            &format!("workbench is connected to {}{who}.", integration.display_name),
        ),
    )
}

async fn oauth_callback(State(ctx): State<Ctx>, Query(q): Query<HashMap<String, String>>) -> Response {
    let app = &ctx.app;
    let Some(state) = q.get("state") else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Sign-in failed", "The sign-in answer had no state."));
    };
    // An upstream MCP server's consent (src/upstream/oauth.rs) has its own states.
    if let Some((status, html)) = crate::upstream::oauth::callback(app, state, &q).await {
        return page(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), html);
    }
    // Find and spend the state: it works once.
    let found = {
        let mut all = app.pending.lock().unwrap_or_else(|p| p.into_inner());
        all.iter_mut()
            .find(|(_, p)| p.oauth.as_ref().is_some_and(|o| &o.state == state))
            .map(|(id, p)| (id.clone(), p.oauth.take(), p.integration.clone(), p.expires, p.account_name.clone()))
    };
    let Some((id, Some(flight), integration_name, expires, account_name)) = found else {
        return page(
            StatusCode::BAD_REQUEST,
            pages::failure(
                "Sign-in failed",
                "This sign-in answer is unknown or was already used. Ask your agent to call connect again.",
            ),
        );
    };
    if Instant::now() >= expires {
        return page(
            StatusCode::GONE,
            pages::failure("Link expired", "This connect link has expired. Ask your agent to call connect again."),
        );
    }
    if let Some(err) = q.get("error") {
        let detail = q.get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        return page(
            StatusCode::BAD_REQUEST,
            pages::failure(
                "Sign-in was not completed",
                &format!("The provider answered {err}{detail}. Nothing was stored."),
            ),
        );
    }
    let Some(code) = q.get("code") else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Sign-in failed", "The sign-in answer had no code."));
    };
    let Some(integration) = app.registry().integration(&integration_name) else {
        return page(
            StatusCode::NOT_FOUND,
            pages::failure("Unknown integration", "This workbench does not know that integration."),
        );
    };
    let (Some(spec), Some(client)) =
        (integration.auth.oauth.as_ref(), integration.auth.oauth.as_ref().and_then(|o| oauth::client_for(app, o)))
    else {
        return page(
            StatusCode::BAD_REQUEST,
            pages::failure("Sign-in failed", "No OAuth client is configured for this integration."),
        );
    };
    let tokens =
        match oauth::exchange_code(app, integration, spec, &client, code, &flight.verifier, &flight.redirect_uri).await
        {
            Ok(t) => t,
            Err(e) => {
                return page(
                    StatusCode::BAD_GATEWAY,
                    pages::failure("Sign-in failed", &format!("The token exchange failed: {e}. Nothing was stored.")),
                );
            }
        };
    let mut connection = oauth::connection_from_tokens(integration, &tokens, None);
    connection.account = account_name;
    let label = match crate::engine::http::verify_identity(app, integration, connection.clone()).await {
        Ok(l) => l,
        Err(e) => {
            let scrubbed = crate::engine::scrub::Scrubber::new(connection.secret_values()).text(&e.to_string());
            return page(
                StatusCode::BAD_GATEWAY,
                pages::failure(
                    "Sign-in failed",
                    &format!("The new token did not work: {scrubbed}. Nothing was stored."),
                ),
            );
        }
    };
    let saved = Saved { account_label: label, scopes: tokens.scope.clone(), expires_at: connection.expires_at };
    finish(app, &id, integration, &connection, saved)
}

/// Registers a vault secret to be typed on the local page; returns its page id.
pub fn begin_secret(app: &App, name: &str, description: Option<String>, allowed_hosts: Vec<String>) -> String {
    let id = crate::ids::random_hex(16);
    let mut all = app.pending_secrets.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    all.retain(|_, s| s.expires > now && !s.done);
    all.insert(
        id.clone(),
        PendingSecret {
            name: name.to_string(),
            description,
            allowed_hosts,
            expires: now + app.settings.connect_ttl,
            form_tokens: Vec::new(),
            done: false,
        },
    );
    id
}

fn live_secret(app: &App, id: &str) -> Result<PendingSecret, Response> {
    let all = app.pending_secrets.lock().unwrap_or_else(|p| p.into_inner());
    match all.get(id) {
        Some(s) if s.done => Err(page(StatusCode::OK, pages::success("Stored", "This secret is already stored."))),
        Some(s) if Instant::now() < s.expires => Ok(s.clone()),
        Some(_) => {
            Err(page(StatusCode::GONE, pages::failure("Link expired", "This link has expired. Ask your agent again.")))
        }
        None => Err(page(StatusCode::NOT_FOUND, pages::failure("Link not found", "This link is unknown."))),
    }
}

fn secret_form_page(app: &App, id: &str, s: &PendingSecret, error: Option<&str>) -> Response {
    let token = new_token();
    if let Some(p) = app.pending_secrets.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
        p.form_tokens.push(token.clone());
    }
    let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    page(
        status,
        pages::secret_form(&s.name, s.description.as_deref(), &s.allowed_hosts, &format!("/vault/{id}"), &token, error),
    )
}

async fn secret_page(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    match live_secret(&ctx.app, &id) {
        Ok(s) => secret_form_page(&ctx.app, &id, &s, None),
        Err(r) => r,
    }
}

async fn secret_submit(State(ctx): State<Ctx>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &ctx.app;
    if let Err(refused) = browser_form(&headers) {
        return refused;
    }
    let s = match live_secret(app, &id) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some(fields) = form::parse(&body) else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Unreadable form", "That form could not be read."));
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let spent = {
        let mut all = app.pending_secrets.lock().unwrap_or_else(|p| p.into_inner());
        match (all.get_mut(&id), get("form_token")) {
            (Some(p), Some(t)) => match p.form_tokens.iter().position(|x| *x == t) {
                Some(i) => {
                    p.form_tokens.remove(i);
                    true
                }
                None => false,
            },
            _ => false,
        }
    };
    if !spent {
        return page(
            StatusCode::FORBIDDEN,
            pages::failure("Form expired", "This form was already used or is stale. Reload the page and try again."),
        );
    }
    let Some(value) = get("value").filter(|v| !v.is_empty()) else {
        return secret_form_page(app, &id, &s, Some("Please enter the value."));
    };
    if let Err(e) = app.vault.set(&s.name, Secret::new(value), s.description.clone(), s.allowed_hosts.clone()).await {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            pages::failure("Could not store the secret", &format!("{}. {}", e.message, crate::secrets::STORE_HELP)),
        );
    }
    if let Some(p) = app.pending_secrets.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&id) {
        p.done = true;
        p.form_tokens.clear();
    }
    page(
        StatusCode::OK,
        pages::success("Secret stored", &format!("'{}' is stored. Your agent can now use it by name.", s.name)),
    )
}

/// Registers an unlock page for a locked secret store; returns its id.
pub fn begin_unlock(app: &App) -> String {
    let id = crate::ids::random_hex(16);
    let mut all = app.unlock_pages.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    all.retain(|_, (expires, _)| *expires > now);
    all.insert(id.clone(), (now + app.settings.connect_ttl, Vec::new()));
    id
}

fn unlock_form(app: &App, id: &str, error: Option<&str>) -> Response {
    let token = new_token();
    if let Some((_, tokens)) = app.unlock_pages.lock().unwrap_or_else(|p| p.into_inner()).get_mut(id) {
        tokens.push(token.clone());
    }
    let error = error.map(|e| format!("<div class=\"err\">{}</div>", pages::escape(e))).unwrap_or_default();
    let html = pages::layout(
        "Unlock secrets",
        &format!(
            "<h1>Unlock workbench's secrets</h1><p class=\"sub\">Your secrets are kept in an encrypted file on this computer. Type its passphrase to unlock it until workbench restarts (a new passphrase if this is the first time).</p>{error}\
             <form method=\"post\" action=\"/unlock/{id}\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\">\
             <label for=\"passphrase\">Passphrase</label><input id=\"passphrase\" name=\"passphrase\" type=\"password\" autocomplete=\"off\" required><button type=\"submit\">Unlock</button></form>",
            id = pages::escape(id),
        ),
    );
    page(if error.is_empty() { StatusCode::OK } else { StatusCode::BAD_REQUEST }, html)
}

fn unlock_live(app: &App, id: &str) -> bool {
    app.unlock_pages
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(id)
        .is_some_and(|(expires, _)| Instant::now() < *expires)
}

async fn unlock_page(State(ctx): State<Ctx>, Path(id): Path<String>) -> Response {
    if !unlock_live(&ctx.app, &id) {
        return page(
            StatusCode::NOT_FOUND,
            pages::failure("Link not found", "This unlock link is unknown or expired."),
        );
    }
    unlock_form(&ctx.app, &id, None)
}

async fn unlock_submit(State(ctx): State<Ctx>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &ctx.app;
    if let Err(refused) = browser_form(&headers) {
        return refused;
    }
    if !unlock_live(app, &id) {
        return page(
            StatusCode::NOT_FOUND,
            pages::failure("Link not found", "This unlock link is unknown or expired."),
        );
    }
    let Some(fields) = form::parse(&body) else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Unreadable form", "That form could not be read."));
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let spent = match (app.unlock_pages.lock().unwrap_or_else(|p| p.into_inner()).get_mut(&id), get("form_token")) {
        (Some((_, tokens)), Some(t)) => match tokens.iter().position(|x| *x == t) {
            Some(i) => {
                tokens.remove(i);
                true
            }
            None => false,
        },
        _ => false,
    };
    if !spent {
        return page(
            StatusCode::FORBIDDEN,
            pages::failure("Form expired", "This form was already used or is stale. Reload the page and try again."),
        );
    }
    let Some(pass) = get("passphrase").filter(|p| !p.is_empty()) else {
        return unlock_form(app, &id, Some("Please type the passphrase."));
    };
    let store = app.secrets.clone();
    let result = tokio::task::spawn_blocking(move || store.unlock(Secret::new(pass))).await;
    match result {
        Ok(Ok(())) => {
            app.unlock_pages.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            page(
                StatusCode::OK,
                pages::success(
                    "Unlocked",
                    "Your secrets are unlocked until workbench restarts. Ask your agent to try again.",
                ),
            )
        }
        Ok(Err(e)) => unlock_form(app, &id, Some(&e.to_string())),
        Err(e) => unlock_form(app, &id, Some(&e.to_string())),
    }
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
