//! The connect flows on the loopback listener ([`crate::listener`]): connect pages, the OAuth
//! callback, the vault secret page and the unlock page.
//!
//! Every POST spends a one-time form token of a page this module served; a POST that stores a
//! credential or a secret or unlocks the store must also be a browser's form submission
//! (`Sec-Fetch-Site: same-origin`, `Sec-Fetch-Mode: navigate`), and replacing a stored connection
//! needs the page's "Replace" box. OAuth callbacks must present a single-use `state`. The
//! listener's guard (Host, Origin, body cap, security headers) covers every route here. The flows
//! in progress are connect's own state ([`Flows`]).

// Page lookups return the finished error page as their `Err`; a large `Err` is fine on a path that
// runs once per human click.
#![allow(clippy::result_large_err)]

pub mod form;
pub mod pages;

/// OAuth's old path (it is part of [`crate::auth`] now: the refresh needs no page).
use crate::auth::oauth;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use plugins::api::{AuthKind, Integration};

use crate::app::App;
use crate::auth::{self, AccountDetails, Source};
use crate::listener::Site;
use crate::secrets::Secret;

pub use crate::listener::{ListenerInfo, ensure_listener, open_in_browser, page};

/// How a pending connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingState {
    Waiting,
    Connected,
}

/// An OAuth authorization in flight: the single-use `state` and the PKCE verifier.
#[derive(Debug, Clone)]
pub struct OAuthInFlight {
    pub state: String,
    pub verifier: String,
    pub redirect_uri: String,
}

/// A connect flow the user has not finished yet.
#[derive(Debug, Clone)]
pub struct PendingConnect {
    pub integration: String,
    /// The account this flow stores into (`default` unless the agent or the user named one).
    pub account_name: String,
    pub created: Instant,
    pub expires: Instant,
    pub state: PendingState,
    /// One-time tokens of forms handed out for this connection; each POST must spend one.
    pub form_tokens: Vec<String>,
    pub oauth: Option<OAuthInFlight>,
    /// The account the connection ended up as (for the success page and whoami).
    pub account: Option<String>,
}

impl PendingConnect {
    pub fn new(integration: &str, account_name: &str, ttl: std::time::Duration) -> Self {
        let now = Instant::now();
        PendingConnect {
            integration: integration.to_string(),
            account_name: account_name.to_string(),
            created: now,
            expires: now + ttl,
            state: PendingState::Waiting,
            form_tokens: Vec::new(),
            oauth: None,
            account: None,
        }
    }
}

/// A vault secret waiting for the user to type its value on the local page.
#[derive(Debug, Clone)]
pub struct PendingSecret {
    pub name: String,
    pub description: Option<String>,
    pub allowed_hosts: Vec<String>,
    pub expires: Instant,
    pub form_tokens: Vec<String>,
    pub done: bool,
}

/// connect's state: the flows the user has not finished (connect links, vault secret pages,
/// unlock pages), each with the one-time tokens of the forms it served.
#[derive(Default)]
pub struct Flows {
    pending: Mutex<HashMap<String, PendingConnect>>,
    secrets: Mutex<HashMap<String, PendingSecret>>,
    /// Unlock pages for a locked secret store: id -> (expiry, unspent form tokens).
    unlocks: Mutex<HashMap<String, (Instant, Vec<String>)>>,
}

impl Flows {
    /// The pending connect flows by id (connect's own pages, `wait_for_connection`, the CLI).
    pub fn pending(&self) -> MutexGuard<'_, HashMap<String, PendingConnect>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn secrets(&self) -> MutexGuard<'_, HashMap<String, PendingSecret>> {
        self.secrets.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn unlocks(&self) -> MutexGuard<'_, HashMap<String, (Instant, Vec<String>)>> {
        self.unlocks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A consent flow of a module above connect that shares the loopback OAuth callback
/// (`/oauth/callback`): given the callback's `state` and query, it answers `Some((status, page))`
/// when the state is its own (spending it), `None` otherwise.
pub type CallbackHook = fn(Arc<App>, String, HashMap<String, String>) -> plugins::api::BoxFuture<Option<(u16, String)>>;

/// The callback hooks the composition root registered ([`add_callback_hook`]).
#[derive(Default)]
pub struct CallbackHooks(Mutex<Vec<CallbackHook>>);

/// Lets another module's consent flow answer the OAuth callbacks whose state it issued.
pub fn add_callback_hook(app: &App, hook: CallbackHook) {
    app.state.callback_hooks.0.lock().unwrap_or_else(|p| p.into_inner()).push(hook);
}

/// The app's connect flows.
pub fn flows(app: &App) -> Arc<Flows> {
    app.state.connect_flows.clone()
}

/// connect's pages, mounted on the listener by the composition root.
pub fn routes() -> axum::Router<Site> {
    axum::Router::new()
        .route("/connect/{id}", get(connect_page).post(connect_submit))
        .route("/oauth/callback", get(oauth_callback))
        .route("/vault/{id}", get(secret_page).post(secret_submit))
        .route("/unlock/{id}", get(unlock_page).post(unlock_submit))
}

fn new_token() -> String {
    crate::ids::random_hex(32)
}

/// Registers a pending connection of one account (`auth::DEFAULT_ACCOUNT` unless one was
/// named) and returns its id (the listener must be running).
pub fn begin(app: &App, integration: &str, account: &str) -> String {
    let id = crate::ids::random_hex(16);
    let flows = flows(app);
    let mut pending = flows.pending();
    let now = Instant::now();
    pending.retain(|_, p| p.expires > now || p.state == PendingState::Connected);
    pending.insert(id.clone(), PendingConnect::new(integration, account, app.settings.connect_ttl));
    id
}

/// Looks up a live pending connection; expired ones are reported as such.
fn live(app: &App, id: &str) -> Result<(&'static Integration, PendingConnect), Response> {
    let flows = flows(app);
    let pending = flows.pending();
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
    let integration = auth::integration(app, &p.integration).ok_or_else(|| {
        page(
            StatusCode::NOT_FOUND,
            pages::failure("Unknown integration", "This workbench does not know that integration."),
        )
    })?;
    Ok((integration, p))
}

fn issue_form_token(app: &App, id: &str) -> String {
    let token = new_token();
    if let Some(p) = flows(app).pending().get_mut(id) {
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
    flows(app).pending().get(id).map(|p| p.account_name.clone()).unwrap_or_else(|| auth::DEFAULT_ACCOUNT.to_string())
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
    // A locked file store has its own unlock page first; any other store is asked now, so the
    // page says where the credential goes and whether that store answers before it is typed.
    let answer = if app.secrets.locked() || app.secrets.name() == "memory" {
        Ok(())
    } else {
        crate::secrets::probe(app.secrets.clone(), crate::secrets::PROBE_DEADLINE)
    };
    let store = pages::StoreState { described: app.secrets.describe(), answer };
    page(
        status,
        pages::credential_form(
            integration,
            &format!("/connect/{id}"),
            &token,
            error,
            note,
            replacing.as_deref(),
            &store,
        ),
    )
}

/// Sends the browser to the provider's consent page (state and PKCE verifier kept for the callback).
fn oauth_redirect(
    site: &Site,
    id: &str,
    integration: &'static Integration,
    spec: &'static plugins::api::OAuth,
    client: &crate::config::OAuthClient,
) -> Response {
    let app = &site.app;
    let (verifier, challenge) = oauth::pkce_pair();
    let state = new_token();
    let redirect_uri = redirect_uri(spec, site.port);
    let url = oauth::authorize_url(app, integration, spec, client, &redirect_uri, &state, &challenge);
    if let Some(p) = flows(app).pending().get_mut(id) {
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
    site: &Site,
    id: &str,
    integration: &'static Integration,
    spec: &'static plugins::api::OAuth,
    error: Option<&str>,
) -> Response {
    let token = issue_form_token(&site.app, id);
    let fixed_port = site.app.settings.listener_port != 0;
    page(
        if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK },
        pages::oauth_client_guide(
            integration,
            spec,
            &redirect_uri(spec, site.port),
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

async fn connect_page(State(site): State<Site>, Path(id): Path<String>) -> Response {
    let app = &site.app;
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
                None => oauth_redirect(&site, &id, integration, spec, &client),
            },
            None if !integration.auth.fields.is_empty() => {
                let note = format!(
                    "No <code>{}</code> OAuth client is configured, so sign-in is not available; paste a token instead (see the README for creating your own OAuth client).",
                    pages::escape(spec.client)
                );
                form_page(app, &id, integration, None, Some(&note))
            }
            // No client configured: walk the user through creating one, then take it here.
            None => client_guide(&site, &id, integration, spec, None),
        },
        _ => form_page(app, &id, integration, None, None),
    }
}

async fn connect_submit(State(site): State<Site>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &site.app;
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
            let flows = flows(app);
            let mut all = flows.pending();
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
                &site,
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
        return oauth_redirect(&site, &id, integration, spec, &client);
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
        return oauth_redirect(&site, &id, integration, spec, &client);
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
    let label = match crate::send::verify_identity(app, integration, connection.clone()).await {
        Ok(label) => label,
        Err(e) => {
            let message = match e {
                plugins::api::ToolError::Upstream { message, .. } => message,
                other => format!("{} could not be reached to check it: {other}", integration.display_name),
            };
            let scrubbed = crate::scrub::Scrubber::new(connection.secret_values()).text(&message);
            return form_page(
                app,
                &id,
                integration,
                Some(&format!("That did not work: {scrubbed}. Nothing was stored.")),
                None,
            );
        }
    };
    finish(app, &id, integration, &connection, AccountDetails { account_label: label, scopes: None, expires_at: None })
}

/// Stores a verified connection, marks the pending flow done and shows the success page.
fn finish(
    app: &App,
    id: &str,
    integration: &'static Integration,
    connection: &auth::Connection,
    saved: AccountDetails,
) -> Response {
    let label = saved.account_label.clone();
    if let Err(e) = auth::save(app, connection, saved) {
        return page(
            StatusCode::SERVICE_UNAVAILABLE,
            pages::failure("Could not store the credential", &format!("{e}. {}", crate::secrets::STORE_HELP)),
        );
    }
    if let Some(p) = flows(app).pending().get_mut(id) {
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

async fn oauth_callback(State(site): State<Site>, Query(q): Query<HashMap<String, String>>) -> Response {
    let app = &site.app;
    let Some(state) = q.get("state") else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Sign-in failed", "The sign-in answer had no state."));
    };
    // Another module's consent flow (mounted by the composition root) may own this state.
    let hooks = app.state.callback_hooks.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for hook in hooks {
        if let Some((status, html)) = hook(site.app.clone(), state.clone(), q.clone()).await {
            return page(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), html);
        }
    }
    // Find and spend the state: it works once.
    let found = {
        let flows = flows(app);
        let mut all = flows.pending();
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
    let Some(integration) = auth::integration(app, &integration_name) else {
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
    let label = match crate::send::verify_identity(app, integration, connection.clone()).await {
        Ok(l) => l,
        Err(e) => {
            let scrubbed = crate::scrub::Scrubber::new(connection.secret_values()).text(&e.to_string());
            return page(
                StatusCode::BAD_GATEWAY,
                pages::failure(
                    "Sign-in failed",
                    &format!("The new token did not work: {scrubbed}. Nothing was stored."),
                ),
            );
        }
    };
    let saved =
        AccountDetails { account_label: label, scopes: tokens.scope.clone(), expires_at: connection.expires_at };
    finish(app, &id, integration, &connection, saved)
}

/// Registers a vault secret to be typed on the local page; returns its page id.
pub fn begin_secret(app: &App, name: &str, description: Option<String>, allowed_hosts: Vec<String>) -> String {
    let id = crate::ids::random_hex(16);
    let flows = flows(app);
    let mut all = flows.secrets();
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
    let flows = flows(app);
    let all = flows.secrets();
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
    if let Some(p) = flows(app).secrets().get_mut(id) {
        p.form_tokens.push(token.clone());
    }
    let status = if error.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
    page(
        status,
        pages::secret_form(&s.name, s.description.as_deref(), &s.allowed_hosts, &format!("/vault/{id}"), &token, error),
    )
}

async fn secret_page(State(site): State<Site>, Path(id): Path<String>) -> Response {
    match live_secret(&site.app, &id) {
        Ok(s) => secret_form_page(&site.app, &id, &s, None),
        Err(r) => r,
    }
}

async fn secret_submit(State(site): State<Site>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &site.app;
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
        let flows = flows(app);
        let mut all = flows.secrets();
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
    if let Some(p) = flows(app).secrets().get_mut(&id) {
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
    let flows = flows(app);
    let mut all = flows.unlocks();
    let now = Instant::now();
    all.retain(|_, (expires, _)| *expires > now);
    all.insert(id.clone(), (now + app.settings.connect_ttl, Vec::new()));
    id
}

fn unlock_form(app: &App, id: &str, error: Option<&str>) -> Response {
    let token = new_token();
    if let Some((_, tokens)) = flows(app).unlocks().get_mut(id) {
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
    flows(app).unlocks().get(id).is_some_and(|(expires, _)| Instant::now() < *expires)
}

async fn unlock_page(State(site): State<Site>, Path(id): Path<String>) -> Response {
    if !unlock_live(&site.app, &id) {
        return page(
            StatusCode::NOT_FOUND,
            pages::failure("Link not found", "This unlock link is unknown or expired."),
        );
    }
    unlock_form(&site.app, &id, None)
}

async fn unlock_submit(State(site): State<Site>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let app = &site.app;
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
    let spent = match (flows(app).unlocks().get_mut(&id), get("form_token")) {
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
            flows(app).unlocks().remove(&id);
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
