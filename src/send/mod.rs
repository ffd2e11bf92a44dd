//! The engine's side of `plugins::api::Upstream`: the only code that sends a plugin's requests.
//!
//! It resolves the integration's host (with overrides), attaches the User-Agent (and, for
//! credentialed integrations, the credential), enforces the call's deadline and a body size cap,
//! retries a 429 once or twice when `Retry-After` fits in the deadline, and maps error statuses to
//! `ToolError::Upstream` with the provider's own message. Integrations whose credential is a login
//! (`Inject::Session`) get their session from [`super::session`]: opened on first use, attached to
//! each request, and renewed once when a request finds it expired.
//!
//! [`deliver`] is the one send path of the engine (plugin requests and custom apps): every
//! request's client comes from `App::client_for`, the address guard (`net`), so nothing
//! reaches loopback or a private address unless the user configured that origin, and nothing ever
//! reaches workbench's own listener; then the governor's slot, 429 handling and the body cap.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plugins::api::{Body, BoxFuture, HttpRequest, HttpResponse, Inject, Integration, ToolError, Upstream};
use serde_json::Value;

use crate::app::App;
use crate::auth::{Connection, SecretPairs};

pub mod files;
pub mod governor;
pub mod session;

/// Largest response body a plugin may receive.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Longest `Retry-After` the engine waits out by itself.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
const MAX_ATTEMPTS: usize = 3;

pub struct EngineUpstream {
    pub app: Arc<App>,
    pub integration: &'static Integration,
    pub deadline: Instant,
    /// The credential for this call; replaced when an OAuth token is refreshed mid-call.
    connection: ConnectionSlot,
    /// Session values (tokens, cookies) this call attached; the engine scrubs them from what the
    /// call returns and records.
    revealed: AttachedSecrets,
    /// The local files this call may touch: what its tool declared, as this call gave them.
    files: CallFiles,
    /// Set when the tool's shaping code says the resource it read is public
    /// ([`Upstream::mark_public`]); the engine reads it for the outbound-data guard.
    public: Arc<std::sync::atomic::AtomicBool>,
}

/// The local paths one call named in its tool's declared file arguments (`plugins::api::Files`).
/// The engine held the call to the safety policy as mutating because of them; any other local
/// file use is refused.
#[derive(Debug, Clone, Default)]
struct CallFiles {
    tool: &'static str,
    reads: Vec<String>,
    writes: Vec<String>,
}

impl CallFiles {
    fn undeclared(&self, kind: &str, path: &str) -> ToolError {
        ToolError::Internal(format!(
            "{} tried to {kind} the local file '{path}', which this call did not name in an argument the tool declares (files: {} in its tool! entry); refused, so no local file use bypasses the safety policy (a bug in the tool)",
            if self.tool.is_empty() { "this request" } else { self.tool },
            if kind == "read" { "Reads" } else { "Writes" }
        ))
    }
}

/// Secret values an upstream attached to requests that are not the connection's own fields.
pub type AttachedSecrets = Arc<Mutex<Vec<String>>>;

/// Seconds before expiry at which an OAuth token is refreshed ahead of use.
const REFRESH_AHEAD_SECS: i64 = 60;

impl EngineUpstream {
    pub fn new(
        app: Arc<App>,
        integration: &'static Integration,
        deadline: Instant,
        connection: Option<Arc<Connection>>,
    ) -> Self {
        EngineUpstream {
            app,
            integration,
            deadline,
            connection: Arc::new(Mutex::new(connection)),
            revealed: AttachedSecrets::default(),
            files: CallFiles::default(),
            public: Arc::default(),
        }
    }

    /// Lets the running `tool` touch the local files this call names in the arguments it
    /// declares (`files`); without it no local file can be read or written.
    pub fn with_files(mut self, tool: &'static str, files: plugins::api::Files, args: &Value) -> Self {
        self.files = CallFiles { tool, reads: files.read_paths(args), writes: files.write_paths(args) };
        self
    }

    /// The session values this upstream attaches, as the call goes (for the call's scrubber).
    pub fn attached_secrets(&self) -> AttachedSecrets {
        self.revealed.clone()
    }

    /// Whether the tool said its result came from a public resource, as the call goes.
    pub fn marked_public(&self) -> Arc<std::sync::atomic::AtomicBool> {
        self.public.clone()
    }

    fn current(&self) -> Option<Arc<Connection>> {
        self.connection.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn refreshable(c: &Connection) -> bool {
    c.fields.contains_key("refresh_token")
}

/// The base URL for one of an integration's hosts. Precedence: a configured override (tests,
/// `WORKBENCH_<INTEGRATION>_BASE_URL`), then the connection's own URL for that host (GitHub
/// Enterprise, self-managed GitLab), then the default with `{var}` placeholders filled from the
/// request and the connection's non-secret fields (a Jira `{site}`).
pub fn host_url(
    app: &App,
    integration: &Integration,
    key: &str,
    vars: &[(&'static str, String)],
    connection: Option<&Connection>,
) -> Result<String, ToolError> {
    base_url(app, integration, key, vars, connection).map(|(url, _)| url)
}

/// [`host_url`], and whether its origin is the user's own configuration (a host override, or a
/// host the user gave in the connection: such an origin may be private or loopback). A `{var}`
/// the request fills into the host part makes it the catalogue's again (public only).
pub(crate) fn base_url(
    app: &App,
    integration: &Integration,
    key: &str,
    vars: &[(&'static str, String)],
    connection: Option<&Connection>,
) -> Result<(String, bool), ToolError> {
    let host = integration
        .host(key)
        .ok_or_else(|| ToolError::Internal(format!("{} has no host '{key}'", integration.name)))?;
    let from_connection = connection.and_then(|c| c.public_field(key)).filter(|u| u.starts_with("http"));
    let overridden = !app.settings.host_url(integration.name, key, "").is_empty();
    let default = from_connection.as_deref().unwrap_or(host.default_url);
    let mut url = app.settings.host_url(integration.name, key, default).trim_end_matches('/').to_string();
    let mut user_origin = overridden || from_connection.is_some();
    let authority_end = |u: &str| u.find("://").map(|i| i + 3).map(|i| u[i..].find('/').map_or(u.len(), |j| i + j));
    for (name, value) in vars {
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(ToolError::invalid(format!("'{value}' is not a valid value for {name}")));
        }
        let placeholder = format!("{{{name}}}");
        if let (Some(at), Some(end)) = (url.find(&placeholder), authority_end(&url))
            && at < end
        {
            user_origin = false;
        }
        url = url.replace(&placeholder, value);
    }
    while let Some(start) = url.find('{') {
        let Some(len) = url[start..].find('}') else { break };
        let name = url[start + 1..start + len].to_string();
        let value = connection.and_then(|c| c.public_field(&name)).ok_or_else(|| {
            ToolError::invalid(format!(
                "{} needs the connection's '{name}'; reconnect and fill it in",
                integration.name
            ))
        })?;
        let value =
            value.trim().trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/').to_string();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':')) {
            return Err(ToolError::invalid(format!("the connection's {name} '{value}' is not a host name")));
        }
        // A site the user typed on the connect page (or in WORKBENCH_<I>_SITE) is theirs.
        if authority_end(&url).is_some_and(|end| start < end) {
            user_origin = true;
        }
        url.replace_range(start..start + len + 1, &value);
    }
    Ok((url, user_origin))
}

/// The origins (`scheme://host:port`) a tool of this integration may send requests to, for vault
/// `allowed_hosts`: every host as configured, with the connection's own host fields (GitHub
/// Enterprise, self-managed GitLab, a Jira `{site}`) filled in. A host whose subdomain a request
/// chooses (`{lang}`) is given as `scheme://*.rest:port`.
pub fn target_hosts(app: &App, integration: &Integration, connection: Option<&Connection>) -> Vec<String> {
    integration
        .hosts
        .iter()
        .filter_map(|h| {
            let placeholders = placeholders(h.default_url);
            // A placeholder the connection fills (`{site}`) without a connection: no target yet.
            if connection.is_none() && placeholders.iter().any(|n| integration.auth.fields.iter().any(|f| f.name == *n))
            {
                return None;
            }
            let vars: Vec<(&'static str, String)> = placeholders
                .into_iter()
                .filter(|n| connection.and_then(|c| c.public_field(n)).is_none())
                .map(|n| (n, "x-placeholder".to_string()))
                .collect();
            let url = match base_url(app, integration, h.key, &vars, connection) {
                Ok((url, _)) => url,
                // A `{site}` the connection lacks: the request would fail anyway.
                Err(_) => return None,
            };
            let origin = crate::net::Origin::of(&reqwest::Url::parse(&url).ok()?)?;
            Some(origin.to_string().replace("x-placeholder", "*"))
        })
        .collect()
}

/// The `{name}` placeholders of a host URL template.
fn placeholders(template: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else { break };
        out.push(crate::ids::intern(&rest[start + 1..start + len]));
        rest = &rest[start + len + 1..];
    }
    out
}

impl Upstream for EngineUpstream {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>> {
        let app = self.app.clone();
        let integration = self.integration;
        let deadline = self.deadline;
        let slot = self.connection.clone();
        let revealed = self.revealed.clone();
        Box::pin(async move {
            let method = request.method;
            let call = Credentialed { app: &app, integration, deadline, slot: &slot, revealed: &revealed };
            call.run(
                method,
                |connection, extra| send(app.clone(), integration, deadline, connection, request.clone(), extra),
                |result| match result {
                    Err(ToolError::Upstream { status, message, .. }) => Some((*status, message.clone())),
                    _ => None,
                },
            )
            .await
        })
    }

    fn field(&self, name: &str) -> Option<String> {
        self.current().and_then(|c| c.public_field(name))
    }

    fn read_local_file(&self, path: &str) -> BoxFuture<Result<Vec<u8>, ToolError>> {
        if !self.files.reads.iter().any(|p| p == path) {
            let refused = self.files.undeclared("read", path);
            return Box::pin(std::future::ready(Err(refused)));
        }
        let dir = crate::send::files::FilesDir::of(&self.app.settings);
        let path = path.to_string();
        Box::pin(async move { crate::send::files::read(&dir, &path).await })
    }

    fn write_local_file(&self, path: &str, bytes: Vec<u8>, overwrite: bool) -> BoxFuture<Result<u64, ToolError>> {
        // The path itself, or a file directly in a folder the call named (attachments saved).
        let named = |p: &String| {
            let folder = p.trim_end_matches(['/', '\\']);
            p == path || path.rsplit_once(['/', '\\']).is_some_and(|(parent, _)| parent == folder)
        };
        if !self.files.writes.iter().any(named) {
            let refused = self.files.undeclared("write", path);
            return Box::pin(std::future::ready(Err(refused)));
        }
        let dir = crate::send::files::FilesDir::of(&self.app.settings);
        let path = path.to_string();
        Box::pin(async move { crate::send::files::write(&dir, &path, bytes, overwrite).await })
    }

    fn new_id(&self) -> String {
        crate::ids::random_hex(16)
    }

    fn mark_public(&self) {
        self.public.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<()> {
        let until = (Instant::now() + duration).min(self.deadline);
        Box::pin(async move { tokio::time::sleep_until(until.into()).await })
    }
}

/// The connection one call uses; replaced when its OAuth token is refreshed mid-call.
pub(crate) type ConnectionSlot = Arc<Mutex<Option<Arc<Connection>>>>;

/// The one path of every credentialed request (plugin tools through [`EngineUpstream`], the curl
/// proxy through [`proxy_send`]): it attaches the connection (and, for `Inject::Session`
/// integrations, the session it opens or reuses), refreshes an OAuth token that expires within a
/// minute before sending, and retries once: after refreshing the token when the answer is a 401
/// and the token is refreshable, else after logging in again when the answer says the session
/// expired. What goes on the wire (address guard, governor, 429, cap) is [`deliver`]'s part.
pub(crate) struct Credentialed<'a> {
    pub app: &'a Arc<App>,
    pub integration: &'static Integration,
    pub deadline: Instant,
    /// The call's connection (`None`: a public integration, or no account).
    pub slot: &'a ConnectionSlot,
    /// Session values attached so far (the call's scrubber removes them).
    pub revealed: &'a AttachedSecrets,
}

impl Credentialed<'_> {
    fn connection(&self) -> Option<Arc<Connection>> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn replace(&self, fresh: Connection) -> Arc<Connection> {
        let fresh = Arc::new(fresh);
        *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
        fresh
    }

    /// Runs `attempt` with the connection and the session's attachments; `failed` reads an
    /// attempt's outcome as (status, provider message) when it is a refusal worth one retry.
    pub(crate) async fn run<T, Fut>(
        &self,
        method: plugins::api::Method,
        attempt: impl Fn(Option<Arc<Connection>>, SecretPairs) -> Fut,
        failed: impl Fn(&Result<T, ToolError>) -> Option<(u16, String)>,
    ) -> Result<T, ToolError>
    where
        Fut: std::future::Future<Output = Result<T, ToolError>>,
    {
        let integration = self.integration;
        let mut connection = self.connection();
        if let Some(c) = connection.clone()
            && refreshable(&c)
            && c.expires_at.is_some_and(|t| t - crate::auth::oauth::now_unix() < REFRESH_AHEAD_SECS)
        {
            match crate::auth::oauth::refresh(self.app, integration, &c).await {
                Ok(fresh) => connection = Some(self.replace(fresh)),
                Err(e) => {
                    tracing::warn!(integration = integration.name, error = %e, "token refresh ahead of expiry failed")
                }
            }
        }
        let spec = match (integration.auth.inject, &connection) {
            (Inject::Session(spec), Some(_)) => Some(spec),
            _ => None,
        };
        let mut session = None;
        let extra = match (spec, &connection) {
            (Some(spec), Some(c)) => {
                let s = self.session(spec, c, None).await?;
                let extra = session::attachments(self.app, integration, spec, &s, c, method)?;
                session = Some(s.id);
                extra
            }
            _ => Vec::new(),
        };
        let result = attempt(connection.clone(), extra).await;
        let Some((status, message)) = failed(&result) else { return result };
        match (connection, spec) {
            (Some(c), _) if status == 401 && refreshable(&c) => {
                tracing::info!(integration = integration.name, "the service answered 401; refreshing the token once");
                let fresh = self.replace(crate::auth::oauth::refresh(self.app, integration, &c).await?);
                attempt(Some(fresh), Vec::new()).await
            }
            (Some(c), Some(spec)) if session::expired(spec, status, &message) => {
                tracing::info!(integration = integration.name, "the session expired; logging in again");
                let s = self.session(spec, &c, session).await?;
                let extra = session::attachments(self.app, integration, spec, &s, &c, method)?;
                attempt(Some(c), extra).await
            }
            _ => result,
        }
    }

    /// The session for `connection` (a fresh login when `rejected` is the cached one), its values
    /// recorded as revealed.
    async fn session(
        &self,
        spec: &'static plugins::api::SessionSpec,
        connection: &Connection,
        rejected: Option<u64>,
    ) -> Result<Arc<session::Session>, ToolError> {
        let s = session::current(self.app, self.integration, spec, connection, self.deadline, rejected).await?;
        self.revealed.lock().unwrap_or_else(|p| p.into_inner()).extend(s.secret_values());
        Ok(s)
    }
}

/// Sends one request: host resolved, the connection's `Inject` credential and any `extra`
/// (session) headers attached, then [`deliver`]ed; error statuses mapped.
pub(crate) async fn send(
    app: Arc<App>,
    integration: &'static Integration,
    deadline: Instant,
    connection: Option<Arc<Connection>>,
    req: HttpRequest,
    extra: SecretPairs,
) -> Result<HttpResponse, ToolError> {
    let connection = connection.as_deref();
    let (base, user_origin) = base_url(&app, integration, req.host, &req.host_vars, connection)?;
    let (mut auth_headers, auth_query) = match connection {
        Some(c) => c.injection(&integration.auth.inject),
        None => (Vec::new(), Vec::new()),
    };
    auth_headers.extend(extra);
    let url = same_origin_url(&base, &req.path)?;
    let method =
        reqwest::Method::from_bytes(req.method.as_str().as_bytes()).map_err(|e| ToolError::Internal(e.to_string()))?;
    let out = Outgoing {
        method,
        url,
        user_origin,
        query: req.query,
        secret_query: auth_query,
        headers: req.headers,
        secret_headers: auth_headers,
        body: req.body,
    };
    // Each account spends its own budget (providers limit per token) and carries its own block.
    let key = connection.map(Connection::account_key);
    let budget = Budget {
        key: key.as_deref().unwrap_or(integration.name),
        display: integration.display_name,
        limit: rate_limit(&app, integration)?,
    };
    let reply = deliver(&app, &budget, deadline, &out).await?;
    if (200..300).contains(&reply.status) {
        return Ok(reply);
    }
    let retry_after = reply.header("retry-after").and_then(retry_after_secs);
    Err(ToolError::Upstream { status: reply.status, message: provider_message(integration, &reply), retry_after })
}

/// Whether a plugin's path holds a `.` or `..` segment, written or percent-encoded (`%2e`): URL
/// parsing resolves those, so the request would reach another endpoint than the tool's
/// (`/calendars/team/events/..` is the calendar itself). Plugins never write one; it can only come
/// from an argument placed in a path segment.
fn has_dot_segment(path: &str) -> bool {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    path.split('/').any(|segment| {
        let plain = segment.to_ascii_lowercase().replace("%2e", ".");
        plain == "." || plain == ".."
    })
}

/// `base` + `path`, refused if the path would take it to another origin (`@host`, `//host`).
fn same_origin_url(base: &str, path: &str) -> Result<reqwest::Url, ToolError> {
    if has_dot_segment(path) {
        return Err(ToolError::invalid(format!(
            "the path '{path}' has a '.' or '..' segment (an id or name given as '.' or '..'?); it is not sent"
        )));
    }
    let base_url = reqwest::Url::parse(base)
        .map_err(|e| ToolError::invalid(format!("the base URL '{base}' is not a URL: {e}")))?;
    let url = reqwest::Url::parse(&format!("{base}{path}"))
        .map_err(|e| ToolError::invalid(format!("'{base}{path}' is not a URL: {e}")))?;
    let origin = crate::net::Origin::of;
    if origin(&url).is_none()
        || origin(&url) != origin(&base_url)
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(ToolError::invalid(format!("the path '{path}' would leave {base}; it is not sent")));
    }
    Ok(url)
}

/// One request as workbench will send it: every part, secrets included.
pub(crate) struct Outgoing {
    pub method: reqwest::Method,
    pub url: reqwest::Url,
    /// The URL's origin is the user's own configuration (see [`App::client_for`]).
    pub user_origin: bool,
    pub query: Vec<(String, String)>,
    pub secret_query: SecretPairs,
    pub headers: Vec<(String, String)>,
    /// Credential headers; they win over `headers` of the same name.
    pub secret_headers: SecretPairs,
    pub body: Body,
}

/// Whose request budget a request spends (an integration, or `custom:<app>`), and its name for
/// messages.
pub(crate) struct Budget<'a> {
    pub key: &'a str,
    pub display: &'a str,
    pub limit: plugins::api::RateLimit,
}

/// The one send path of the engine: address guard, the governor's slot, the deadline, 429
/// retried once or twice when `Retry-After` fits in the deadline, provider reset headers observed,
/// the body capped. Returns the final answer whatever its status.
pub(crate) async fn deliver(
    app: &App,
    budget: &Budget<'_>,
    deadline: Instant,
    out: &Outgoing,
) -> Result<HttpResponse, ToolError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        // Checked before every attempt: the listener may have started meanwhile.
        let mut builder = app.request(out.method.clone(), out.url.clone(), out.user_origin)?;
        if !out.query.is_empty() {
            builder = builder.query(&out.query);
        }
        for (k, v) in &out.secret_query {
            builder = builder.query(&[(k.as_str(), v.expose().as_str())]);
        }
        for (k, v) in &out.headers {
            if out.secret_headers.iter().any(|(a, _)| a.eq_ignore_ascii_case(k)) {
                continue;
            }
            builder = builder.header(k, v);
        }
        for (k, v) in &out.secret_headers {
            builder = builder.header(k.as_str(), v.expose().as_str());
        }
        builder = match &out.body {
            Body::None => builder,
            Body::Json(v) => builder.json(v),
            Body::Form(pairs) => builder.form(pairs),
            Body::Raw { content_type, bytes } => builder.header("content-type", content_type).body(bytes.clone()),
        };
        let response = on_the_wire(app, budget, deadline, builder, true).await?;
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect();
        let body = read_capped(response, app).await?;
        let reply = HttpResponse { status, headers, body };
        if status == 429 && attempt < MAX_ATTEMPTS {
            let wait = Duration::from_secs(reply.header("retry-after").and_then(retry_after_secs).unwrap_or(1));
            if wait <= MAX_RETRY_WAIT && Instant::now() + wait < deadline {
                tracing::info!(
                    budget = budget.key,
                    wait_secs = wait.as_secs(),
                    "rate limited; retrying after Retry-After"
                );
                app.state.governor.block_until(budget.key, Instant::now() + wait);
                // The governor holds this (and every other) request of the budget until then.
                continue;
            }
        }
        return Ok(reply);
    }
}

/// Revokes `connection`'s OAuth token at the integration's `revoke_url` (a user's override in the
/// settings wins), through the one credentialed path like any call of the integration: the
/// connection attached as the integration injects it (a bearer for Slack's `auth.revoke`), and the
/// token also as the form field `token` (RFC 7009, which Google's endpoint reads), then
/// [`deliver`]ed (address guard, governor, cap). `Ok(None)`: the integration has no revocation
/// endpoint or the connection no token; `Ok(Some(ok))`: whether the provider answered 2xx.
pub async fn revoke(
    app: &Arc<App>,
    integration: &'static Integration,
    connection: Arc<Connection>,
) -> Result<Option<bool>, ToolError> {
    let Some(revoke_url) = integration.auth.oauth.as_ref().and_then(|o| o.revoke_url) else { return Ok(None) };
    if !connection.fields.contains_key("token") {
        return Ok(None);
    }
    let url = app.settings.host_url(integration.name, "revoke_url", revoke_url);
    let user_origin = !app.settings.host_url(integration.name, "revoke_url", "").is_empty();
    let url = reqwest::Url::parse(&url).map_err(|e| ToolError::Internal(format!("revoke URL {url}: {e}")))?;
    let deadline = Instant::now() + app.settings.call_timeout;
    let slot: ConnectionSlot = Arc::new(Mutex::new(Some(connection)));
    let revealed = AttachedSecrets::default();
    let call = Credentialed { app, integration, deadline, slot: &slot, revealed: &revealed };
    let reply = call
        .run(
            plugins::api::Method::Post,
            |connection, extra| {
                let url = url.clone();
                async move {
                    let connection = connection.ok_or_else(|| ToolError::Internal("no connection to revoke".into()))?;
                    let token = connection.fields.get("token").map(|t| t.expose().clone()).unwrap_or_default();
                    let (mut secret_headers, secret_query) = connection.injection(&integration.auth.inject);
                    secret_headers.extend(extra);
                    let out = Outgoing {
                        method: reqwest::Method::POST,
                        url,
                        user_origin,
                        query: Vec::new(),
                        secret_query,
                        headers: Vec::new(),
                        secret_headers,
                        body: Body::Form(vec![("token".to_string(), token)]),
                    };
                    let key = connection.account_key();
                    let budget =
                        Budget { key: &key, display: integration.display_name, limit: rate_limit(app, integration)? };
                    deliver(app, &budget, deadline, &out).await
                }
            },
            |result| match result {
                Ok(reply) if reply.status == 401 => Some((401, String::new())),
                _ => None,
            },
        )
        .await?;
    Ok(Some((200..300).contains(&reply.status)))
}

/// The integration's request budget: the user's `WORKBENCH_<INTEGRATION>_RATE_LIMIT` (e.g.
/// `190/10s` for a HubSpot Pro portal, parsed at start-up) or the catalogue's.
pub fn rate_limit(app: &App, integration: &Integration) -> Result<plugins::api::RateLimit, ToolError> {
    configured_rate_limit(app, integration.name, integration.rate_limit)
}

/// `WORKBENCH_<NAME>_RATE_LIMIT` if the user set one, else `default`. A value that did not parse
/// fails closed: no request is sent until the user fixes it.
pub fn configured_rate_limit(
    app: &App,
    name: &str,
    default: plugins::api::RateLimit,
) -> Result<plugins::api::RateLimit, ToolError> {
    match app.settings.rate_limits.get(&name.to_ascii_lowercase()) {
        Some(Ok(limit)) => Ok(*limit),
        Some(Err(bad)) => Err(ToolError::Internal(format!(
            "the request budget for {name} is misconfigured ({bad}), so nothing is sent to it until the user fixes it"
        ))),
        None => Ok(default),
    }
}

/// Waits for the governor's slot for one request, or says when to retry if it comes too late.
pub(crate) async fn wait_for_slot(app: &App, budget: &Budget<'_>, deadline: Instant) -> Result<(), ToolError> {
    let limit = budget.limit;
    match app.state.governor.reserve(budget.key, limit, Instant::now(), deadline) {
        governor::Slot::After(wait) => {
            if !wait.is_zero() {
                tracing::debug!(
                    budget = budget.key,
                    wait_ms = wait.as_millis() as u64,
                    "queued by the rate-limit governor"
                );
                tokio::time::sleep(wait).await;
            }
            Ok(())
        }
        governor::Slot::TooLate(wait) => {
            let seconds = wait.as_secs_f64().ceil() as u64;
            let limit_text = if limit.is_none() {
                "the provider asked to slow down".to_string()
            } else {
                format!("the budget is {} requests per {} s", limit.requests, limit.per_seconds)
            };
            Err(ToolError::Upstream {
                status: 429,
                message: format!(
                    "workbench is holding requests to {} to stay within its rate limit ({limit_text}); the next slot is in {seconds} s, after this call's deadline",
                    budget.display
                ),
                retry_after: Some(seconds.max(1)),
            })
        }
    }
}

/// `Retry-After` as seconds: a number, or an HTTP date (RFC 9110) counted from now.
pub(crate) fn retry_after_secs(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(secs);
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some((when.timestamp() - chrono::Utc::now().timestamp()).max(0) as u64)
}

pub(crate) fn network_error(e: &reqwest::Error, app: &App) -> ToolError {
    // A host name the guard's resolver refused (it resolves to a private address).
    if let Some(refusal) = crate::net::refusal_in(e) {
        return ToolError::invalid(format!("{refusal}; {}", crate::net::PRIVATE_HOSTS_HELP));
    }
    if e.is_timeout() {
        ToolError::Timeout { seconds: app.settings.call_timeout.as_secs() }
    } else if e.is_connect() {
        ToolError::Network(format!("could not connect: {}", root_cause(e)))
    } else {
        ToolError::Network(root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

pub(crate) async fn read_capped(response: reqwest::Response, app: &App) -> Result<Vec<u8>, ToolError> {
    crate::net::read_limited(response, MAX_BODY_BYTES).await.map_err(|e| network_error(&e, app))?.ok_or_else(too_large)
}

fn too_large() -> ToolError {
    ToolError::Upstream {
        status: 200,
        message: format!("the service sent more than {} MiB; narrow the request", MAX_BODY_BYTES / (1024 * 1024)),
        retry_after: None,
    }
}

/// The provider's own words for an error, or a short piece of the body.
fn provider_message(integration: &Integration, reply: &HttpResponse) -> String {
    if let Ok(json) = serde_json::from_slice::<Value>(&reply.body)
        && let Some(m) = (integration.error_message)(&json)
    {
        return m;
    }
    let text = reply.text();
    let text = text.trim();
    if text.is_empty() || text.starts_with('<') {
        return format!("HTTP {}", reply.status);
    }
    plugins::api::truncate_chars(text, 300).0
}

/// Proves a credential works with the integration's cheap identity call (before it is stored),
/// and returns the account's label. A rejected credential is an error that says so.
pub async fn verify_identity(
    app: &Arc<App>,
    integration: &'static Integration,
    connection: Connection,
) -> Result<Option<String>, ToolError> {
    let Some(identity) = integration.auth.identity else { return Ok(None) };
    let deadline = Instant::now() + app.settings.call_timeout.min(Duration::from_secs(20));
    let upstream = EngineUpstream::new(app.clone(), integration, deadline, Some(Arc::new(connection)));
    let result = identity_of(integration, &identity, &upstream).await;
    // Session values (a login's tokens) are not connection fields; the caller cannot scrub them.
    let revealed = upstream.attached_secrets().lock().unwrap_or_else(|p| p.into_inner()).clone();
    let scrubber = crate::scrub::Scrubber::new(revealed);
    result.map_err(|e| match e {
        ToolError::Upstream { status, message, retry_after } => {
            ToolError::Upstream { status, message: scrubber.text(&message), retry_after }
        }
        ToolError::Network(m) => ToolError::Network(scrubber.text(&m)),
        ToolError::Internal(m) => ToolError::Internal(scrubber.text(&m)),
        other => other,
    })
}

async fn identity_of(
    integration: &'static Integration,
    identity: &plugins::api::Identity,
    upstream: &EngineUpstream,
) -> Result<Option<String>, ToolError> {
    match upstream.send((identity.request)()).await {
        Ok(reply) => {
            let body = reply.json()?;
            // Providers that report failure with HTTP 200 (Slack's ok:false, GraphQL errors[]) are
            // recognised by their own error extractor.
            let failed = body.get("ok") == Some(&Value::Bool(false))
                || body.get("errors").and_then(Value::as_array).is_some_and(|e| !e.is_empty());
            if failed {
                let message = (integration.error_message)(&body).unwrap_or_else(|| "the credential was refused".into());
                return Err(ToolError::Upstream {
                    status: 401,
                    message: format!("{} rejected this credential: {message}", integration.display_name),
                    retry_after: None,
                });
            }
            Ok((identity.label)(&body))
        }
        Err(ToolError::Upstream { status: status @ (401 | 403), message, .. }) => Err(ToolError::Upstream {
            status,
            message: format!("{} rejected this credential: {message}", integration.display_name),
            retry_after: None,
        }),
        Err(e) => Err(e),
    }
}

/// One request for the curl proxy: a path (with its query) relative to the integration's base URL.
pub struct ProxyCall {
    pub method: reqwest::Method,
    pub path_and_query: String,
    /// The caller's headers, already stripped of hop-by-hop, Host, Authorization and cookies.
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

/// What the upstream answered, unread, with every secret value the request carried (so the
/// proxy can keep them out of what it passes back).
pub struct ProxyAnswer {
    pub response: reqwest::Response,
    pub secrets: Vec<String>,
}

/// Longest a proxied response may stream after its headers arrived.
const PROXY_STREAM_LIMIT: Duration = Duration::from_secs(600);

/// Sends a curl-proxy request with the integration's credential, injected exactly as for its
/// tools (OAuth tokens refreshed ahead of expiry and once on a 401; session integrations logged
/// in and renewed once). The URL is pinned to the base URL's host and path: anything that would
/// resolve elsewhere is refused before a byte is sent.
pub async fn proxy_send(
    app: &Arc<App>,
    integration: &'static Integration,
    connection: Arc<Connection>,
    call: &ProxyCall,
    deadline: Instant,
) -> Result<ProxyAnswer, ToolError> {
    let method = match call.method.as_str() {
        "GET" => plugins::api::Method::Get,
        "HEAD" => plugins::api::Method::Head,
        "POST" => plugins::api::Method::Post,
        "PUT" => plugins::api::Method::Put,
        "PATCH" => plugins::api::Method::Patch,
        _ => plugins::api::Method::Delete,
    };
    let first_values = connection.secret_values();
    let slot: ConnectionSlot = Arc::new(Mutex::new(Some(connection)));
    let revealed = AttachedSecrets::default();
    let credentialed = Credentialed { app, integration, deadline, slot: &slot, revealed: &revealed };
    let response = credentialed
        .run(
            method,
            |connection, extra| proxy_attempt(app, integration, connection, call, extra, deadline),
            |result| match result {
                Ok(r) if r.status().as_u16() == 401 => Some((401, String::new())),
                _ => None,
            },
        )
        .await?;
    // Every value the request may have carried: the first connection's, a refreshed one's, the
    // session's.
    let mut secrets = first_values;
    if let Some(c) = slot.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        secrets.extend(c.secret_values());
    }
    secrets.extend(revealed.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned());
    Ok(ProxyAnswer { response, secrets })
}

/// One proxied request with `connection` and the session's `extra` headers attached, pinned to
/// the integration's base URL, unread.
async fn proxy_attempt(
    app: &App,
    integration: &'static Integration,
    connection: Option<Arc<Connection>>,
    call: &ProxyCall,
    extra: SecretPairs,
    deadline: Instant,
) -> Result<reqwest::Response, ToolError> {
    let connection = connection.ok_or_else(|| ToolError::Internal("the curl proxy needs a connection".into()))?;
    let host_key = integration.hosts.first().map(|h| h.key).unwrap_or("base_url");
    let (base, user_origin) = base_url(app, integration, host_key, &[], Some(&connection))?;
    let mut target = pinned_url(&base, &call.path_and_query)?;
    let (mut auth_headers, auth_query) = connection.injection(&integration.auth.inject);
    auth_headers.extend(extra);
    if !auth_query.is_empty() {
        let mut pairs = target.query_pairs_mut();
        for (k, v) in &auth_query {
            pairs.append_pair(k, v.expose());
        }
    }
    let mut builder = app.request(call.method.clone(), target, user_origin)?.timeout(PROXY_STREAM_LIMIT);
    for (k, v) in &call.headers {
        // The credential's own headers are never taken from the caller.
        if auth_headers.iter().any(|(a, _)| a.eq_ignore_ascii_case(k)) {
            continue;
        }
        builder = builder.header(k.as_str(), v.as_slice());
    }
    for (k, v) in &auth_headers {
        builder = builder.header(k.as_str(), v.expose().as_str());
    }
    if !call.body.is_empty() {
        builder = builder.body(call.body.clone());
    }
    let key = connection.account_key();
    let budget = Budget { key: &key, display: integration.display_name, limit: rate_limit(app, integration)? };
    on_the_wire(app, &budget, deadline, builder, false).await
}

/// One request on the wire: the governor's slot, the call's deadline for the answer's headers
/// (and for its body too when `body_by_deadline`; a proxied stream has its own limit), the
/// provider's reset headers observed. The body is the caller's to read.
async fn on_the_wire(
    app: &App,
    budget: &Budget<'_>,
    deadline: Instant,
    mut builder: reqwest::RequestBuilder,
    body_by_deadline: bool,
) -> Result<reqwest::Response, ToolError> {
    wait_for_slot(app, budget, deadline).await?;
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Err(ToolError::Timeout { seconds: app.settings.call_timeout.as_secs() });
    }
    if body_by_deadline {
        builder = builder.timeout(remaining);
    }
    let response = match tokio::time::timeout(remaining, builder.send()).await {
        Err(_) => return Err(ToolError::Timeout { seconds: app.settings.call_timeout.as_secs() }),
        Ok(r) => r.map_err(|e| network_error(&e, app))?,
    };
    let seen: Vec<(String, String)> = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    app.state.governor.observe(budget.key, response.status().as_u16(), &seen);
    Ok(response)
}

/// `base` + `path_and_query`, refused unless it stays on the base URL's scheme, host and port and
/// under its path.
pub fn pinned_url(base: &str, path_and_query: &str) -> Result<reqwest::Url, ToolError> {
    let base_url = reqwest::Url::parse(base).map_err(|e| ToolError::Internal(format!("bad base URL {base}: {e}")))?;
    let joined = format!("{}{}", base.trim_end_matches('/'), path_and_query);
    let url = reqwest::Url::parse(&joined).map_err(|e| ToolError::invalid(format!("not a usable path: {e}")))?;
    let base_path = base_url.path().trim_end_matches('/');
    let same_origin = url.scheme() == base_url.scheme()
        && url.host_str() == base_url.host_str()
        && url.port_or_known_default() == base_url.port_or_known_default()
        && url.username().is_empty()
        && url.password().is_none();
    let under = url.path() == base_path || url.path().starts_with(&format!("{base_path}/")) || base_path.is_empty();
    if !same_origin || !under {
        return Err(ToolError::invalid(format!("the path would leave {base}; only paths under it are proxied")));
    }
    Ok(url)
}
