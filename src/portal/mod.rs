//! `workbench portal`: a small local web page over the loopback listener (src/connect) showing the
//! integrations and their accounts (with connect and disconnect), the audit log, the vault's
//! secret names, the secret store in use and custom apps.
//!
//! Security, on top of the listener's own guard (Host check against DNS rebinding, `Origin` on
//! every POST, body cap, no-store, a same-origin referrer policy, frame denial):
//! - Every portal URL carries a per-launch token in its path (`/portal/<token>/...`, 256 bits, minted
//!   when `workbench portal` starts). A wrong or missing token answers the listener's plain 404, so
//!   nothing tells a prober that a portal exists. Only a process that ran `workbench portal` has
//!   one: the MCP server's listener never answers portal URLs at all.
//! - Every state-changing action is a POST carrying a per-launch CSRF token in its form body (a
//!   second 256-bit value, distinct from the URL token, so a URL that leaks through a screen or a
//!   shell history is not enough to act), compared in constant time; GET never changes anything.
//! - Pages send a CSP with a fresh nonce for their one stylesheet and one small script (no inline
//!   attributes, no external assets; the script may fetch only from the listener) and `form-action` limited to the listener itself plus the
//!   sign-in pages of configured OAuth clients (a connect redirects there); every value put in
//!   HTML is escaped.
//!
//! The token sits in the path rather than in `?token=`: the pages then link to each other with
//! plain relative URLs (`audit`, `secrets`) and every GET form keeps it without a hidden field;
//! both forms end up in browser history alike, and `Referrer-Policy: same-origin` keeps either
//! from leaking to another site.

// Page handlers return the finished error page as their `Err`, like src/connect.
#![allow(clippy::result_large_err)]

pub mod pages;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use plugins::api::{AuthKind, Integration};
use serde_json::Value;

use crate::app::App;
use crate::connect::form;
use crate::listener::{Keys, Site as Ctx};
use crate::storage::{AuditQuery, StorageError};

/// Audit entries per page.
pub const AUDIT_PAGE: usize = 50;
/// Longest audit text filter accepted.
const MAX_FILTER: usize = 200;

/// Constant-time equality (length aside, which is public).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The loopback listener could not be started (the text says why).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NoListener(pub String);

/// Starts the listener if needed, enables the portal and returns its URL.
pub async fn start(app: &Arc<App>) -> Result<String, NoListener> {
    let listener = crate::connect::ensure_listener(app).await.map_err(|e| NoListener(e.to_string()))?;
    let keys = listener.portal.enable();
    Ok(format!("{}/portal/{}/", listener.base(), keys.token))
}

/// `workbench portal`: serve the portal until Ctrl-C or the end of standard input; the exit code.
pub async fn run(app: &Arc<App>) -> u8 {
    let url = match start(app).await {
        Ok(u) => u,
        Err(e) => {
            eprintln!("workbench: {e}");
            return 1;
        }
    };
    println!("workbench portal: {url}");
    if crate::connect::open_in_browser(app, &url) {
        println!("(opened in your browser)");
    }
    println!("The address works only on this computer and only while this runs; stop it with Ctrl-C (or Ctrl-D).");
    let _ = std::io::stdout().flush();
    // Ctrl-C ends the process (the default SIGINT action: nothing here needs tidying up); the end
    // of standard input ends it too, so a parent process can stop it by closing the pipe.
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(std::io::Read::read(&mut stdin, &mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    let _ = rx.await;
    println!("workbench portal: stopped.");
    0
}

/// The portal's routes, merged into the listener's router (so its guard covers them).
pub(crate) fn routes() -> axum::Router<Ctx> {
    axum::Router::new()
        .route("/portal/{token}", get(bare))
        .route("/portal/{token}/", get(integrations_page))
        .route("/portal/{token}/audit", get(audit_page))
        .route("/portal/{token}/secrets", get(secrets_page))
        .route("/portal/{token}/apps", get(apps_page))
        .route("/portal/{token}/connect", post(connect_action))
        .route("/portal/{token}/disconnect", post(disconnect_action))
        .route("/portal/{token}/default", post(default_action))
        .route("/portal/{token}/unlock", post(unlock_action))
        .route("/portal/{token}/review", post(review_action))
}

fn not_found() -> Response {
    crate::connect::page(
        StatusCode::NOT_FOUND,
        crate::listener::pages::failure("Not found", "There is nothing at this address."),
    )
}

fn refused(message: &str) -> Response {
    crate::connect::page(StatusCode::FORBIDDEN, crate::listener::pages::failure("Refused", message))
}

/// A rendered portal page with its own CSP (nonce for the stylesheet and the script).
fn html(ctx: &Ctx, status: StatusCode, page: pages::Page) -> Response {
    let nonce = crate::ids::random_hex(16);
    let csp = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; connect-src 'self'; form-action {}; frame-ancestors 'none'; base-uri 'none'",
        form_targets(&ctx.app)
    );
    let mut response = (status, axum::response::Html(pages::render(&ctx.app, &page, &nonce))).into_response();
    if let Ok(v) = HeaderValue::from_str(&csp) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response
}

/// Where portal forms may lead: this listener, and the sign-in origin of every OAuth integration
/// whose client is configured (its connect page redirects there, and a browser holds a form's whole
/// redirect chain to `form-action`).
fn form_targets(app: &App) -> String {
    let mut out = vec!["'self'".to_string()];
    for i in app.registry().integrations() {
        let Some(spec) = i.auth.oauth.as_ref() else { continue };
        if crate::auth::oauth::client_for(app, spec).is_none() {
            continue;
        }
        let base = crate::auth::oauth::authorize_url_base(app, i, spec);
        if let Ok(url) = reqwest::Url::parse(&base)
            && matches!(url.scheme(), "http" | "https")
        {
            let origin = url.origin().ascii_serialization();
            // Only characters a CSP source may hold (an origin serialization has no others).
            if origin.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:/[]".contains(&b)) && !out.contains(&origin) {
                out.push(origin);
            }
        }
    }
    out.join(" ")
}

/// Why the audit page cannot show what its address asks for.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("that address has an unreadable query")]
    Query,
    #[error("the {0} filter is longer than {MAX_FILTER} characters")]
    TooLong(String),
    #[error("status must be ok or error, not '{0}'")]
    Status(String),
    #[error("period must be one of {periods}, not '{0}'", periods = PERIODS.iter().map(|(k, _, _)| *k).collect::<Vec<_>>().join(", "))]
    Period(String),
    #[error("before must be an entry number, not '{0}'")]
    Before(String),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

fn params(raw: Option<String>) -> Result<HashMap<String, String>, AuditError> {
    let raw = raw.unwrap_or_default();
    let pairs = form::parse(raw.as_bytes()).ok_or(AuditError::Query)?;
    Ok(pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect())
}

async fn bare(State(ctx): State<Ctx>, Path(token): Path<String>) -> Response {
    match ctx.portal.keys_for(&token) {
        Some(k) => Redirect::permanent(&format!("/portal/{}/", k.token)).into_response(),
        None => not_found(),
    }
}

/// One line above the page's content after an action (fixed texts; only a known name is filled in).
fn notice(app: &App, q: &HashMap<String, String>) -> Option<pages::Notice> {
    let name = q.get("integration").and_then(|n| app.registry().integration(n))?.display_name;
    let text = match q.get("done").map(String::as_str)? {
        "disconnected" => format!("{name} is disconnected; its stored credential is erased."),
        "not-connected" => format!("{name} was not connected."),
        "public" => format!("{name} needs no account; its tools work as they are."),
        "environment" => format!("{name} is connected through environment variables; change them there."),
        "default" => format!("{name}'s default account is changed."),
        "bad-account" => "Account names are 1-32 lowercase letters, digits or '-'; nothing was done.".to_string(),
        _ => return None,
    };
    Some(pages::Notice::Ok(text))
}

async fn integrations_page(State(ctx): State<Ctx>, Path(token): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let Some(keys) = ctx.portal.keys_for(&token) else { return not_found() };
    let q = params(raw).unwrap_or_default();
    let page = integrations(&ctx.app, keys, notice(&ctx.app, &q));
    html(&ctx, StatusCode::OK, page)
}

/// How one integration stands, for the integrations page.
#[derive(Debug, Clone)]
pub struct IntegrationRow {
    pub name: &'static str,
    pub display_name: &'static str,
    pub auth: AuthKind,
    pub state: ConnState,
    pub account: Option<String>,
    pub since: Option<String>,
    /// Every account of the integration (names, identities, which is the default); shown one
    /// per line with its own buttons when there is more than the one `default`.
    pub accounts: Vec<crate::auth::Account>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// No account needed.
    Public,
    /// A credential from `WORKBENCH_<I>_*` (read-only from here).
    Environment,
    /// A connection stored through a connect page.
    Stored,
    NotConnected,
}

/// Every integration's state, as `workbench status` and list_integrations see it (SQLite metadata
/// and the environment; the secret store is not touched).
pub fn integration_rows(app: &App) -> Vec<IntegrationRow> {
    let mut rows: Vec<IntegrationRow> = app
        .registry()
        .integrations()
        .iter()
        .map(|i| {
            let env = crate::auth::from_env(i, &|v| app.settings.credential_env.get(v).cloned()).is_some();
            let meta = app.storage.connection_meta(i.name).ok().flatten();
            let state = if crate::registry::is_public(i) {
                ConnState::Public
            } else if env {
                ConnState::Environment
            } else if meta.is_some() {
                ConnState::Stored
            } else {
                ConnState::NotConnected
            };
            let (account, since) = match (state, meta) {
                (ConnState::Stored, Some(m)) => (m.account_label, Some(m.created_at)),
                _ => (None, None),
            };
            let accounts = if crate::registry::is_public(i) { Vec::new() } else { app.accounts(i) };
            let state = match state {
                // Named accounts only (no `default` one): connected all the same.
                ConnState::NotConnected if accounts.iter().any(|a| a.source == crate::auth::Source::Store) => {
                    ConnState::Stored
                }
                ConnState::NotConnected if !accounts.is_empty() => ConnState::Environment,
                s => s,
            };
            IntegrationRow {
                name: i.name,
                display_name: i.display_name,
                auth: i.auth.kind,
                state,
                account,
                since,
                accounts,
            }
        })
        .collect();
    rows.sort_by_key(|r| r.display_name.to_ascii_lowercase());
    rows
}

fn integrations(app: &App, keys: &Keys, notice: Option<pages::Notice>) -> pages::Page {
    pages::Page { tab: pages::Tab::Integrations, notice, body: pages::integrations(&integration_rows(app), &keys.csrf) }
}

/// The filters of the audit page, as read from its query.
#[derive(Debug, Clone, Default)]
pub struct AuditFilters {
    pub integration: Option<String>,
    pub tool: Option<String>,
    pub status: Option<String>,
    pub text: Option<String>,
    pub period: Option<String>,
    pub changes_only: bool,
    pub before: Option<i64>,
}

/// The periods the audit page offers: query value, label, length in seconds.
pub const PERIODS: &[(&str, &str, i64)] = &[
    ("1h", "Last hour", 3600),
    ("24h", "Last 24 hours", 86_400),
    ("7d", "Last 7 days", 7 * 86_400),
    ("30d", "Last 30 days", 30 * 86_400),
];

impl AuditFilters {
    fn parse(q: &HashMap<String, String>) -> Result<AuditFilters, AuditError> {
        let text = |k: &str| -> Result<Option<String>, AuditError> {
            match q.get(k).map(|v| v.trim()).filter(|v| !v.is_empty()) {
                Some(v) if v.chars().count() > MAX_FILTER => Err(AuditError::TooLong(k.to_string())),
                v => Ok(v.map(str::to_string)),
            }
        };
        let status = text("status")?;
        if let Some(s) = &status
            && s != "ok"
            && s != "error"
        {
            return Err(AuditError::Status(s.clone()));
        }
        let period = text("period")?;
        if let Some(p) = &period
            && !PERIODS.iter().any(|(k, _, _)| k == p)
        {
            return Err(AuditError::Period(p.clone()));
        }
        let before = match text("before")? {
            Some(b) => match b.parse::<i64>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(AuditError::Before(b)),
            },
            None => None,
        };
        Ok(AuditFilters {
            integration: text("integration")?,
            tool: text("tool")?,
            status,
            text: text("text")?,
            period,
            changes_only: q.get("changes").is_some_and(|v| v == "1"),
            before,
        })
    }

    /// The query string for these filters (without `before`), for links that keep them.
    pub fn query(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("integration", &self.integration),
            ("tool", &self.tool),
            ("status", &self.status),
            ("text", &self.text),
            ("period", &self.period),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={}", form::encode(v)));
            }
        }
        if self.changes_only {
            parts.push("changes=1".into());
        }
        parts.join("&")
    }

    pub fn is_filtered(&self) -> bool {
        self.query() != ""
    }
}

/// One page of the audit log, newest first, and the cursor of the next (older) page.
pub async fn audit_entries(app: &Arc<App>, f: &AuditFilters) -> Result<(Vec<Value>, Option<i64>), AuditError> {
    let since = f.period.as_ref().and_then(|p| PERIODS.iter().find(|(k, _, _)| k == p)).map(|(_, _, secs)| {
        (chrono::Utc::now() - chrono::Duration::seconds(*secs)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    });
    let query = AuditQuery {
        since,
        until: None,
        integration: f.integration.clone(),
        tool: f.tool.clone(),
        mutating_only: f.changes_only,
        status: f.status.clone(),
        text: f.text.clone(),
        before_id: f.before,
        limit: AUDIT_PAGE + 1,
    };
    let mut rows = app.storage.search_audit(query).await?;
    let more = rows.len() > AUDIT_PAGE;
    rows.truncate(AUDIT_PAGE);
    let next = if more { rows.last().and_then(|r| r["id"].as_i64()) } else { None };
    Ok((rows, next))
}

/// Integrations and tools that appear in the audit log, for the filter choices.
async fn audit_choices(app: &Arc<App>) -> (Vec<String>, Vec<String>) {
    let distinct = |column: &'static str| {
        let storage = app.storage.clone();
        async move {
            storage
                .call(move |c| {
                    let mut stmt =
                        c.prepare(&format!("SELECT DISTINCT {column} FROM audit ORDER BY {column} LIMIT 500"))?;
                    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                    rows.collect::<rusqlite::Result<Vec<String>>>()
                })
                .await
                .unwrap_or_default()
        }
    };
    (distinct("integration").await, distinct("tool").await)
}

async fn audit_page(State(ctx): State<Ctx>, Path(token): Path<String>, RawQuery(raw): RawQuery) -> Response {
    if ctx.portal.keys_for(&token).is_none() {
        return not_found();
    }
    let app = &ctx.app;
    let (choices_i, choices_t) = audit_choices(app).await;
    let parsed = params(raw).and_then(|q| AuditFilters::parse(&q));
    let (filters, result, status) = match parsed {
        Ok(f) => {
            let r = audit_entries(app, &f).await;
            let status = if r.is_ok() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
            (f, r, status)
        }
        Err(e) => (AuditFilters::default(), Err(e), StatusCode::BAD_REQUEST),
    };
    let notice = result.as_ref().err().map(|e| pages::Notice::Err(format!("The audit log could not be read: {e}")));
    let (rows, next) = result.unwrap_or_default();
    let page = pages::Page {
        tab: pages::Tab::Audit,
        notice,
        body: pages::audit(&filters, &rows, next, &choices_i, &choices_t),
    };
    html(&ctx, status, page)
}

/// Which secret store is in use, for the secrets page.
#[derive(Debug, Clone)]
pub struct StoreInfo {
    pub name: &'static str,
    pub locked: bool,
    pub location: Option<String>,
    /// Where the values are and what opens them (`SecretStore::describe`).
    pub described: String,
    /// Whether the store answered a probe just now (None when locked or memory: not asked).
    pub answer: Option<Result<(), String>>,
}

/// The store in use, asked whether it answers (on a blocking thread, with doctor's deadline).
pub async fn store_info(app: &App) -> StoreInfo {
    let name = app.secrets.name();
    let location = (name == "file").then(|| app.settings.home.join("secrets.enc").display().to_string());
    let locked = app.secrets.locked();
    let answer = if locked || name == "memory" {
        None
    } else {
        let store = app.secrets.clone();
        let deadline = crate::doctor::STORE_DEADLINE;
        tokio::task::spawn_blocking(move || crate::secrets::probe(store, deadline)).await.ok()
    };
    StoreInfo { name, locked, location, described: app.secrets.describe(), answer }
}

async fn secrets_page(State(ctx): State<Ctx>, Path(token): Path<String>) -> Response {
    let Some(keys) = ctx.portal.keys_for(&token) else { return not_found() };
    let (secrets, notice, status) = match ctx.app.storage.list_vault_meta(None).await {
        Ok(s) => (s, None, StatusCode::OK),
        Err(e) => (
            Vec::new(),
            Some(pages::Notice::Err(format!("The vault list could not be read: {e}"))),
            StatusCode::SERVICE_UNAVAILABLE,
        ),
    };
    let page = pages::Page {
        tab: pages::Tab::Secrets,
        notice,
        body: pages::secrets(&store_info(&ctx.app).await, &secrets, &keys.csrf)
            + &pages::flow_guard(&ctx.app.settings.flow, &ctx.app.storage.flow_decisions(20).await.unwrap_or_default()),
    };
    html(&ctx, status, page)
}

/// A custom app as the portal lists it.
#[derive(Debug, Clone)]
pub struct CustomAppRow {
    pub name: String,
    pub description: String,
    /// How many tools it adds.
    pub tools: usize,
    /// A short state, e.g. "enabled" or the reason it is not usable.
    pub status: String,
}

/// The custom apps to list, as the registry has them now (another process's changes included):
/// name, description, base URL host and auth type (never secrets), tools, and whether it checks.
pub fn custom_apps_section(app: &App) -> Vec<CustomAppRow> {
    let registry = app.registry();
    registry
        .custom()
        .apps
        .iter()
        .map(|a| {
            let def = a.def.as_ref();
            let base = def.map(|d| d.base_url.clone()).unwrap_or_default();
            let auth = def
                .and_then(|d| d.auth.as_ref())
                .map(|x| {
                    serde_json::to_value(x.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
                })
                .unwrap_or_else(|| "none".into());
            let description = match def.and_then(|d| d.description.clone()) {
                Some(d) => format!("{d} — {base}"),
                None => base,
            };
            let status = if a.problems.is_empty() {
                format!("enabled · auth: {auth}")
            } else {
                format!(
                    "hidden: {}",
                    a.problems.iter().map(|p| format!("{} {}", p.path, p.problem)).collect::<Vec<_>>().join("; ")
                )
            };
            CustomAppRow { name: a.name.clone(), description, tools: a.operations.len(), status }
        })
        .collect()
}

async fn apps_page(State(ctx): State<Ctx>, Path(token): Path<String>) -> Response {
    let Some(keys) = ctx.portal.keys_for(&token) else {
        return not_found();
    };
    let pending = ctx.app.upstream().pending(&ctx.app.storage);
    let body = pages::apps(&custom_apps_section(&ctx.app))
        + &pages::servers(&crate::upstream::summaries(&ctx.app))
        + &pages::review(&pending, &keys.csrf);
    let page = pages::Page { tab: pages::Tab::Apps, notice: None, body };
    html(&ctx, StatusCode::OK, page)
}

/// Accepts an upstream server's current tool definitions (the review section of the apps page).
async fn review_action(State(ctx): State<Ctx>, Path(token): Path<String>, body: Bytes) -> Response {
    let (keys, fields) = match action_form(&ctx, &token, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let server = fields.get("server").cloned().unwrap_or_default();
    if !ctx.app.upstream().is_server(&server) {
        return refused("That MCP server is not configured. Reload the portal and try again.");
    }
    let app = ctx.app.clone();
    let accepted = tokio::task::spawn_blocking(move || app.upstream().accept(&app.storage, &server)).await;
    match accepted {
        Ok(Ok(_)) => Redirect::to(&format!("/portal/{}/apps#review", keys.token)).into_response(),
        _ => refused("The change could not be recorded. Try again, or use `workbench servers review`."),
    }
}

/// Checks the URL token and the form's CSRF token of a portal POST; returns the form's fields.
/// (The listener's guard has already refused a POST without this listener's `Origin`.)
fn action_form<'a>(ctx: &'a Ctx, token: &str, body: &[u8]) -> Result<(&'a Keys, HashMap<String, String>), Response> {
    let Some(keys) = ctx.portal.keys_for(token) else { return Err(not_found()) };
    let Some(fields) = form::parse(body) else {
        return Err(refused("That form could not be read. Reload the portal and try again."));
    };
    let fields: HashMap<String, String> = fields.into_iter().collect();
    match fields.get("csrf") {
        Some(t) if same(t.as_bytes(), keys.csrf.as_bytes()) => Ok((keys, fields)),
        _ => Err(refused("This form did not come from this portal. Reload the portal and try again.")),
    }
}

/// An action form (see [`action_form`]) that names a catalogue integration in its `integration`
/// field; an unknown name answers the integrations page with the error.
fn integration_form<'a>(
    ctx: &'a Ctx,
    token: &str,
    body: &[u8],
) -> Result<(&'a Keys, HashMap<String, String>, &'static Integration), Response> {
    let (keys, fields) = action_form(ctx, token, body)?;
    let name = fields.get("integration").map(String::as_str).unwrap_or_default();
    match ctx.app.registry().integration(name) {
        Some(integration) => Ok((keys, fields, integration)),
        None => Err(integrations_error(ctx, keys, StatusCode::BAD_REQUEST, format!("Unknown integration: '{name}'."))),
    }
}

fn back_to(keys: &Keys, done: &str, integration: &str) -> Response {
    Redirect::to(&format!("/portal/{}/?done={done}&integration={}", keys.token, form::encode(integration)))
        .into_response()
}

/// An integrations page with an error above it.
fn integrations_error(ctx: &Ctx, keys: &Keys, status: StatusCode, message: String) -> Response {
    let page = integrations(&ctx.app, keys, Some(pages::Notice::Err(message)));
    html(ctx, status, page)
}

/// Starts connecting an integration the way the `connect` meta-tool does (same pending connect,
/// same page), then sends the browser to that page. The browser is not opened again: it is here.
async fn connect_action(State(ctx): State<Ctx>, Path(token): Path<String>, body: Bytes) -> Response {
    let (keys, fields, integration) = match integration_form(&ctx, &token, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let app = &ctx.app;
    if integration.auth.kind == AuthKind::None {
        return back_to(keys, "public", integration.name);
    }
    // The account to connect: the one typed (a new name adds an account), else `default`.
    let account =
        fields.get("account").map(|a| a.trim()).filter(|a| !a.is_empty()).unwrap_or(crate::auth::DEFAULT_ACCOUNT);
    if crate::auth::account_problem(account).is_some() {
        return back_to(keys, "bad-account", integration.name);
    }
    let account = account.to_string();
    if crate::auth::from_env_as(integration, &account, &|v| app.settings.credential_env.get(v).cloned()).is_some() {
        return back_to(keys, "environment", integration.name);
    }
    if app.secrets.locked() {
        return Redirect::to(&format!("/unlock/{}", crate::connect::begin_unlock(app))).into_response();
    }
    // Probe the secret store first, as the connect meta-tool does, so the user is not sent to a
    // page whose result could not be stored.
    if let Err(e) = crate::meta::connect::probe_store(app, integration).await {
        return integrations_error(&ctx, keys, StatusCode::SERVICE_UNAVAILABLE, e.to_string());
    }
    let id = crate::connect::begin(app, integration.name, &account);
    Redirect::to(&format!("/connect/{id}")).into_response()
}

/// Disconnects through the connection module: the token is revoked at the provider where it can
/// be, the credential erased, and the action lands in the audit log. The user clicked Disconnect on
/// their own portal page (and confirmed it there); no model is involved.
async fn disconnect_action(State(ctx): State<Ctx>, Path(token): Path<String>, body: Bytes) -> Response {
    use crate::builtins::connection::{self, DeleteCredentials, Disconnected};
    let (keys, fields, integration) = match integration_form(&ctx, &token, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let account = fields.get("account").filter(|a| crate::auth::account_problem(a).is_none()).cloned();
    let args = DeleteCredentials { integration: integration.name.to_string(), revoke_remote: true, account };
    let done = match connection::disconnect_by_user(&ctx.app, args).await {
        Ok(Disconnected::Erased { erased: true, .. }) => "disconnected",
        Ok(_) => "not-connected",
        Err(e) => {
            let message = ctx.app.exposed.text(&connection::message(&e));
            return integrations_error(
                &ctx,
                keys,
                StatusCode::BAD_REQUEST,
                format!("Could not disconnect {}: {message}", integration.display_name),
            );
        }
    };
    back_to(keys, done, integration.name)
}

/// Sends the browser to a fresh unlock page of the secret store.
async fn unlock_action(State(ctx): State<Ctx>, Path(token): Path<String>, body: Bytes) -> Response {
    let keys = match action_form(&ctx, &token, &body) {
        Ok((keys, _)) => keys,
        Err(r) => return r,
    };
    if !ctx.app.secrets.locked() {
        return Redirect::to(&format!("/portal/{}/secrets", keys.token)).into_response();
    }
    Redirect::to(&format!("/unlock/{}", crate::connect::begin_unlock(&ctx.app))).into_response()
}

/// Makes a stored account its integration's default: the user's click on their own portal page
/// (CSRF token checked); no meta-tool or built-in can do this.
async fn default_action(State(ctx): State<Ctx>, Path(token): Path<String>, body: Bytes) -> Response {
    let (keys, fields, integration) = match integration_form(&ctx, &token, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let app = &ctx.app;
    let account = fields.get("account").map(String::as_str).unwrap_or_default();
    if crate::auth::account_problem(account).is_some() {
        return back_to(keys, "bad-account", integration.name);
    }
    match app.storage.set_default_account(integration.name, account) {
        Ok(true) => back_to(keys, "default", integration.name),
        Ok(false) => integrations_error(
            &ctx,
            keys,
            StatusCode::BAD_REQUEST,
            format!(
                "{} has no stored account '{account}' (an account from environment variables cannot be the default).",
                integration.display_name
            ),
        ),
        Err(e) => integrations_error(&ctx, keys, StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}
