//! The contract between workbench's engine and its integrations.
//!
//! A plugin describes: which integration it is (auth kind, hosts, whether the curl proxy may reach
//! it), which tools it has (name, description, keywords, effect, JSON Schema), and for each tool a
//! handler that turns validated arguments into HTTP requests and shapes the responses. Plugins never
//! perform I/O themselves: every request goes through [`Upstream`], which the engine implements, so
//! credentials, timeouts, retries, scrubbing and auditing live in one place.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A boxed, sendable future; what every handler and upstream call returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A tool's handler: validated arguments in, shaped result out, upstream calls through `Upstream`.
pub type Handler = fn(Arc<dyn Upstream>, Value) -> BoxFuture<Result<Value, ToolError>>;

/// How an integration authenticates. The engine owns credential storage and injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthKind {
    /// Public API: always connected, nothing stored.
    None,
    /// The user pastes a token (and maybe a site URL) into a local form.
    ApiKey,
    /// Authorization code with PKCE through the loopback listener.
    OAuth2,
    /// Username and password login producing a session (JWT, cookie, CSRF token): the engine
    /// logs in with [`Inject::Session`] (Superset).
    Cookie,
}

impl AuthKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::None => "none",
            AuthKind::ApiKey => "api_key",
            AuthKind::OAuth2 => "oauth2",
            AuthKind::Cookie => "cookie",
        }
    }
}

/// What a tool does to the world; drives the MCP annotations and the audit log's `mutating` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    Read,
    /// Creates or changes something; can be undone or is additive.
    Write,
    /// Deletes, merges, moves money or otherwise cannot be taken back.
    Destructive,
}

impl Effect {
    pub fn mutating(self) -> bool {
        !matches!(self, Effect::Read)
    }
}

/// Which of a tool's arguments name local files it reads (uploads, attachments) or writes
/// (downloads, exports): top-level argument names whose value is a path, a list of paths, or (for
/// a write) a folder the files go into. The engine counts a call that gives one of them as
/// mutating for the user's safety policy (sending a local file's content anywhere is a write, and
/// so is writing the user's disk), names the paths in the approval question, and refuses
/// [`Upstream::read_local_file`] / [`Upstream::write_local_file`] to a call that did not give a
/// declared argument of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Files {
    /// No local file access (the default).
    #[default]
    None,
    /// Reads the local files these arguments name.
    Reads(&'static [&'static str]),
    /// Writes the local files (or into the folders) these arguments name.
    Writes(&'static [&'static str]),
}

impl Files {
    /// The declared arguments that name files the tool reads.
    pub fn reads(self) -> &'static [&'static str] {
        match self {
            Files::Reads(args) => args,
            _ => &[],
        }
    }

    /// The declared arguments that name files (or folders) the tool writes.
    pub fn writes(self) -> &'static [&'static str] {
        match self {
            Files::Writes(args) => args,
            _ => &[],
        }
    }

    /// The local paths a call with `args` names in the arguments `names`: each non-empty string,
    /// alone or in a list. A `{{step:...}}` ref not yet resolved counts as the path it will be.
    pub fn paths_in(names: &[&str], args: &Value) -> Vec<String> {
        let mut out = Vec::new();
        for name in names {
            match args.get(*name) {
                Some(Value::String(s)) => out.push(s.clone()),
                Some(Value::Array(items)) => {
                    out.extend(items.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
                }
                Some(Value::Null) | None => {}
                Some(other) => out.push(other.to_string()),
            }
        }
        out
    }

    /// The local files a call with `args` reads.
    pub fn read_paths(self, args: &Value) -> Vec<String> {
        Self::paths_in(self.reads(), args)
    }

    /// The local files (or folders) a call with `args` writes.
    pub fn write_paths(self, args: &Value) -> Vec<String> {
        Self::paths_in(self.writes(), args)
    }

    /// The effect of one call of a tool declared with `effect`: at least [`Effect::Write`] when
    /// the call names a local file to read or write.
    pub fn effect_of(self, effect: Effect, args: &Value) -> Effect {
        let touches = !self.read_paths(args).is_empty() || !self.write_paths(args).is_empty();
        if touches && effect == Effect::Read { Effect::Write } else { effect }
    }
}

/// One field of an integration's connect form (and of its `WORKBENCH_<INTEGRATION>_<FIELD>`
/// environment variables).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// snake_case; also the environment suffix (`token` -> `WORKBENCH_GITHUB_TOKEN`).
    pub name: &'static str,
    pub label: &'static str,
    /// Secret fields go to the secret store; the rest (site, email, host) are connection metadata
    /// that tools may read through [`Upstream::field`].
    pub secret: bool,
    pub required: bool,
    /// One line shown under the form field: where to get it, what it looks like.
    pub help: &'static str,
}

/// How the engine attaches a connection's credential to each request.
#[derive(Debug, Clone, Copy)]
pub enum Inject {
    None,
    /// `Authorization: Bearer <field>`.
    Bearer(&'static str),
    /// `<name>: <prefix><field>`, e.g. `PRIVATE-TOKEN: <t>`, `Authorization: Bot <t>`,
    /// `Authorization: Token token=<t>`, Linear's bare `Authorization: <key>`.
    Header {
        name: &'static str,
        prefix: &'static str,
        field: &'static str,
    },
    /// `Authorization: Basic base64(<user>:<pass>)`.
    Basic {
        user: &'static str,
        pass: &'static str,
    },
    /// Query parameters `(param, field)`, e.g. Trello's `key` and `token`.
    Query(&'static [(&'static str, &'static str)]),
    /// A login session the engine opens from the connection's fields and keeps in memory
    /// (Superset: username and password -> JWT, CSRF token and `session` cookie). See
    /// [`SessionSpec`].
    Session(&'static SessionSpec),
}

/// A login session, described declaratively: the engine runs the login steps on first use,
/// keeps the captured values in memory per integration (one login at a time, shared by
/// concurrent calls), attaches them to every later request as `attach` says, and logs in again
/// once when a request is refused with 401 (or an answer listed in `renew_on`). Captured values
/// never reach a plugin, a result, a log line or the audit log.
///
/// Templates, usable in login-step header values, query values and JSON/form body strings, and in
/// `attach` values:
/// - `{{field:NAME}}`: a field of the connection, secret ones included;
///   `{{field:NAME|default}}` when the field is optional;
/// - `{{session:NAME}}`: a value captured by an earlier login step;
/// - `{{host:KEY}}`: the resolved URL of one of the integration's hosts (a `Referer`).
#[derive(Debug)]
pub struct SessionSpec {
    /// Requests sent in order to open a session; nothing else is attached to them.
    pub login: &'static [LoginStep],
    /// How the session rides on every other request.
    pub attach: &'static [Attach],
    /// Error answers besides 401 that mean the session is no longer valid: a status and a piece
    /// of the provider's message (`""` matches any), e.g. `(400, "CSRF")`.
    pub renew_on: &'static [(u16, &'static str)],
}

/// One login request and what to keep from its answer. A 401/403 answer means the connection's
/// credential was refused; a value that cannot be captured fails the login.
#[derive(Debug)]
pub struct LoginStep {
    pub request: fn() -> HttpRequest,
    pub capture: &'static [Capture],
}

/// A value a login step keeps, under a session value name.
#[derive(Debug, Clone, Copy)]
pub enum Capture {
    /// A string (or number) at a JSON Pointer in the answer's body, e.g. `/access_token`.
    Json { pointer: &'static str, name: &'static str },
    /// A cookie the answer sets (`Set-Cookie: <cookie>=...`).
    Cookie { cookie: &'static str, name: &'static str },
}

/// Which requests an [`Attach`] rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    All,
    /// POST, PUT, PATCH and DELETE (what CSRF protection guards).
    Writes,
}

/// How session values are attached to requests. Values are templates (see [`SessionSpec`]).
#[derive(Debug, Clone, Copy)]
pub enum Attach {
    /// A header, e.g. `Authorization: Bearer {{session:access_token}}`; it wins over a plugin's
    /// header of the same name.
    Header { name: &'static str, value: &'static str, on: On },
    /// A cookie in the `Cookie` header, e.g. `session={{session:session_cookie}}`.
    Cookie { name: &'static str, value: &'static str, on: On },
}

/// The cheap call that proves a credential works, and how to name the account it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Identity {
    pub request: fn() -> HttpRequest,
    /// A human label for the account from the identity response (login, email, workspace).
    pub label: fn(&Value) -> Option<String>,
}

/// OAuth 2 authorization-code flow (PKCE S256) details.
#[derive(Debug, Clone, Copy)]
pub struct OAuth {
    pub authorize_url: &'static str,
    pub token_url: &'static str,
    pub revoke_url: Option<&'static str>,
    pub scopes: &'static [&'static str],
    /// Name of the scope parameter (`scope`; Slack user tokens use `user_scope`).
    pub scope_param: &'static str,
    pub extra_params: &'static [(&'static str, &'static str)],
    /// Which configured OAuth client to use (`google` is shared by the four Google integrations).
    pub client: &'static str,
}

/// Everything about how an integration authenticates.
#[derive(Debug, Clone, Copy)]
pub struct AuthSpec {
    pub kind: AuthKind,
    /// The connect form's fields (for `oauth2`, the fallback personal-token form, if any).
    pub fields: &'static [Field],
    pub inject: Inject,
    pub identity: Option<Identity>,
    pub oauth: Option<OAuth>,
}

impl AuthSpec {
    /// A public API: nothing to connect, nothing to attach.
    pub const NONE: AuthSpec =
        AuthSpec { kind: AuthKind::None, fields: &[], inject: Inject::None, identity: None, oauth: None };

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A named upstream host. The first host of an integration is its `base_url`.
#[derive(Debug, Clone, Copy)]
pub struct Host {
    /// Config key, e.g. `base_url`, `algolia_base_url`; the environment override is
    /// `WORKBENCH_<INTEGRATION>_<KEY>` upper-cased.
    pub key: &'static str,
    /// Default URL without trailing slash. `{var}` placeholders are filled per request
    /// ([`HttpRequest::host_var`]) or from the connection's non-secret fields (a Jira `{site}`).
    /// A connection field named like the host key (`base_url`) replaces the URL outright
    /// (GitHub Enterprise, self-managed GitLab).
    pub default_url: &'static str,
}

/// What the curl proxy (`curl_session`) may reach for an integration: paths are relative to its
/// base URL; the proxy never leaves the base URL's host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CurlProxy {
    /// Not proxied (public integrations: `http_send_request` covers them).
    Off,
    /// Every method, any path under the base URL.
    Full,
    /// GET (and HEAD) only: money movement and the like go through the typed, audited tools.
    ReadOnly,
    /// GET anywhere; other methods only on paths starting with one of these patterns, where
    /// `*` matches one path segment (`/channels/*/messages`).
    WritesUnder(&'static [&'static str]),
}

impl CurlProxy {
    pub fn enabled(self) -> bool {
        self != CurlProxy::Off
    }

    /// Whether the proxy may send `method` to `path` (a path relative to the base URL).
    pub fn allows(self, method: &str, path: &str) -> bool {
        let read = matches!(method, "GET" | "HEAD");
        match self {
            CurlProxy::Off => false,
            CurlProxy::Full => true,
            CurlProxy::ReadOnly => read,
            CurlProxy::WritesUnder(patterns) => read || patterns.iter().any(|p| path_under(p, path)),
        }
    }

    /// The policy in words, for the agent.
    pub fn describe(self) -> String {
        match self {
            CurlProxy::Off => "not proxied".into(),
            CurlProxy::Full => "GET, POST, PUT, PATCH, DELETE on any path".into(),
            CurlProxy::ReadOnly => "GET only".into(),
            CurlProxy::WritesUnder(p) => {
                format!("GET on any path; POST, PUT, PATCH, DELETE only under {}", p.join(", "))
            }
        }
    }
}

fn path_under(pattern: &str, path: &str) -> bool {
    let mut have = path.trim_start_matches('/').split('/');
    for want in pattern.trim_start_matches('/').split('/') {
        match have.next() {
            Some(seg) if !seg.is_empty() && (want == "*" || want == seg) => {}
            _ => return false,
        }
    }
    true
}

/// A request budget: at most `requests` per `per_seconds` (a token bucket that refills evenly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub requests: u32,
    pub per_seconds: u32,
}

impl RateLimit {
    /// No budget (self-hosted services).
    pub const NONE: RateLimit = RateLimit { requests: 0, per_seconds: 0 };

    pub const fn per_second(n: u32) -> Self {
        RateLimit { requests: n, per_seconds: 1 }
    }
    pub const fn per_minute(n: u32) -> Self {
        RateLimit { requests: n, per_seconds: 60 }
    }
    pub const fn per_hour(n: u32) -> Self {
        RateLimit { requests: n, per_seconds: 3600 }
    }
    pub fn is_none(self) -> bool {
        self.requests == 0 || self.per_seconds == 0
    }
    /// Parses "100/10s", "5/s", "150/min", "5000/h" (a user's override).
    pub fn parse(text: &str) -> Option<RateLimit> {
        let (n, window) = text.trim().split_once('/')?;
        let requests: u32 = n.trim().parse().ok()?;
        let w = window.trim().to_ascii_lowercase();
        let (count, unit) = match w.find(|c: char| !c.is_ascii_digit()) {
            Some(0) => (1, w.as_str()),
            Some(i) => (w[..i].parse().ok()?, &w[i..]),
            None => return None,
        };
        let unit_seconds = match unit {
            "s" | "sec" | "second" => 1,
            "m" | "min" | "minute" => 60,
            "h" | "hour" => 3600,
            _ => return None,
        };
        let per_seconds: u32 = count * unit_seconds;
        (requests > 0 && per_seconds > 0).then_some(RateLimit { requests, per_seconds })
    }
}

/// One integration: a service and all of its tools.
#[derive(Debug)]
pub struct Integration {
    pub name: &'static str,
    pub display_name: &'static str,
    pub version: &'static str,
    pub auth: AuthSpec,
    /// Words people use for this product that are not in its name (indexed by search).
    pub keywords: &'static [&'static str],
    pub hosts: &'static [Host],
    /// What `curl_session`'s proxy may do with this integration's credential.
    pub curl_proxy: CurlProxy,
    /// The request budget workbench keeps to (the catalogue's limits, per process); the engine's
    /// governor queues requests to stay inside it.
    pub rate_limit: RateLimit,
    /// Looks up the user's own side of a connected account (identities, domain, organisations)
    /// for the outbound-data guard ([`crate::flow`]); `None` for a public integration.
    pub side: Option<crate::flow::SideFn>,
    pub tools: &'static [ToolSpec],
    /// Pulls the provider's own error message out of an error response body.
    pub error_message: fn(&Value) -> Option<String>,
}

impl Integration {
    pub fn host(&self, key: &str) -> Option<&Host> {
        self.hosts.iter().find(|h| h.key == key)
    }
}

/// One tool of an integration.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// Extra search words: synonyms, jargon, product-implying terms.
    pub keywords: &'static [&'static str],
    pub effect: Effect,
    /// The arguments that name local files the tool reads or writes (see [`Files`]).
    pub files: Files,
    /// What the tool's results are for the outbound-data guard (public or private); every tool
    /// declares it (a test checks).
    pub results: Option<crate::flow::Results>,
    /// For a write: who will see what it sends; every mutating tool declares it (a test checks).
    pub audience: Option<crate::flow::Audience>,
    /// The tool's JSON Schema (object-rooted): its committed text ([`crate::schemas`]), generated
    /// from the argument type by [`crate::schema::schema_for`].
    pub schema: fn() -> Value,
    pub run: Handler,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Defines a [`ToolSpec`] whose schema comes from an argument type and whose handler is an
/// `async fn(Arc<dyn Upstream>, Args) -> Result<Value, ToolError>`. A tool that reads or writes
/// local files names the arguments that carry the paths after its effect, e.g.
/// `files: Reads(&["attachments"]),` or `files: Writes(&["save_to"]),` (default: none). Then the
/// outbound-data guard's labels ([`crate::flow`]): `results: Private,` (or `Public`,
/// `PrivateUnlessPublic`) and, for a write, `audience: Audience::Own,` (or `Outside("why")`,
/// `Decide(f)`).
#[macro_export]
macro_rules! tool {
    (@files) => { $crate::api::Files::None };
    (@files $kind:ident $names:expr) => { $crate::api::Files::$kind($names) };
    (@opt) => { None };
    (@opt $v:expr) => { Some($v) };
    // The committed schema of the tool; in this crate's tests, the one generated from its
    // argument type (a test checks the two are the same text).
    (@schema $name:literal, $args:ty) => {{
        #[cfg(not(test))]
        let schema: fn() -> _ = || $crate::schema::committed($crate::schemas::SCHEMAS, $name);
        #[cfg(test)]
        let schema: fn() -> _ = $crate::schema::schema_for::<$args>;
        schema
    }};
    (
        name: $name:literal,
        effect: $effect:ident,
        $(files: $fkind:ident($fnames:expr),)?
        $(results: $results:ident,)?
        $(audience: $audience:expr,)?
        args: $args:ty,
        run: $run:path,
        keywords: [$($kw:literal),* $(,)?],
        description: $desc:expr $(,)?
    ) => {
        $crate::api::ToolSpec {
            name: $name,
            description: $desc,
            keywords: &[$($kw),*],
            effect: $crate::api::Effect::$effect,
            files: $crate::tool!(@files $($fkind $fnames)?),
            results: $crate::tool!(@opt $($crate::flow::Results::$results)?),
            audience: $crate::tool!(@opt $($audience)?),
            schema: $crate::tool!(@schema $name, $args),
            run: |upstream, args| {
                Box::pin(async move {
                    let args: $args = $crate::api::parse_args(args)?;
                    $run(upstream, args).await
                })
            },
        }
    };
}

/// HTTP methods a plugin may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// A request body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    None,
    Json(Value),
    Form(Vec<(String, String)>),
    Raw { content_type: String, bytes: Vec<u8> },
}

/// A request described by a plugin; the engine resolves the host, attaches credentials and sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub method: Method,
    /// Key of one of the integration's [`Host`]s.
    pub host: &'static str,
    /// Values for `{var}` placeholders in the host URL.
    pub host_vars: Vec<(&'static str, String)>,
    /// Path below the host URL, starting with `/`; segments already percent-encoded.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl HttpRequest {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        HttpRequest {
            method,
            host: "base_url",
            host_vars: Vec::new(),
            path: path.into(),
            query: Vec::new(),
            headers: Vec::new(),
            body: Body::None,
        }
    }
    pub fn get(path: impl Into<String>) -> Self {
        Self::new(Method::Get, path)
    }
    pub fn post(path: impl Into<String>) -> Self {
        Self::new(Method::Post, path)
    }
    pub fn on(mut self, host: &'static str) -> Self {
        self.host = host;
        self
    }
    pub fn host_var(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.host_vars.push((name, value.into()));
        self
    }
    pub fn query(mut self, key: &str, value: impl ToString) -> Self {
        self.query.push((key.to_string(), value.to_string()));
        self
    }
    /// Adds the pair only when a value is present.
    pub fn query_opt<T: ToString>(self, key: &str, value: Option<T>) -> Self {
        match value {
            Some(v) => self.query(key, v),
            None => self,
        }
    }
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }
    pub fn json(mut self, body: Value) -> Self {
        self.body = Body::Json(body);
        self
    }
    pub fn form(mut self, pairs: Vec<(String, String)>) -> Self {
        self.body = Body::Form(pairs);
        self
    }
}

/// What came back from upstream (only 2xx reaches a plugin; the engine maps the rest to errors).
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The body as JSON, or an upstream error naming what was wrong with it.
    pub fn json(&self) -> Result<Value, ToolError> {
        if self.body.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&self.body).map_err(|e| ToolError::Upstream {
            status: self.status,
            message: format!("the service answered with malformed JSON: {e}"),
            retry_after: None,
        })
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// The engine's side of the contract: send one request to this tool's integration.
pub trait Upstream: Send + Sync {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>>;
    /// A non-secret field of the user's connection (site, email, host), if set.
    fn field(&self, name: &str) -> Option<String>;
    /// Reads a local file the user named (uploads), inside the user's files folder only,
    /// size-capped; only for a tool that declared [`Files::Reads`] and a call that gave one.
    fn read_local_file(&self, path: &str) -> BoxFuture<Result<Vec<u8>, ToolError>>;
    /// Writes a local file the user named (downloads), inside the user's files folder only;
    /// refuses to overwrite unless `overwrite`; only for a tool that declared [`Files::Writes`]
    /// and a call that gave one. Returns the number of bytes written.
    fn write_local_file(&self, path: &str, bytes: Vec<u8>, overwrite: bool) -> BoxFuture<Result<u64, ToolError>>;
    /// A fresh random id (128 bits, hex), e.g. for Stripe's `Idempotency-Key` or MIME boundaries.
    fn new_id(&self) -> String;
    /// Says that this call's result came from a resource the service reports as public (a
    /// public repository): for a tool labelled [`crate::flow::Results::PrivateUnlessPublic`],
    /// the outbound-data guard then counts the result as public. Default: ignored.
    fn mark_public(&self) {}
    /// Waits before polling again (an async job's status). The engine never waits past the
    /// call's deadline; implementations without a clock (test mocks) return at once.
    fn sleep(&self, duration: std::time::Duration) -> BoxFuture<()> {
        let _ = duration;
        Box::pin(std::future::ready(()))
    }
}

/// A problem with one argument, in terms an agent can act on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArgProblem {
    /// JSON Pointer to the argument, e.g. `/executions/0/tool`; empty for the whole object.
    pub path: String,
    pub problem: String,
}

/// Why a tool call failed. The engine turns these into the agent-facing error object.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolError {
    /// The arguments passed the schema but are still wrong (e.g. neither of two alternatives given).
    InvalidArguments { message: String, problems: Vec<ArgProblem> },
    /// The provider answered with an error status.
    Upstream { status: u16, message: String, retry_after: Option<u64> },
    /// The request never got an answer (connection refused, DNS, TLS).
    Network(String),
    /// The call ran past its deadline.
    Timeout { seconds: u64 },
    /// Anything else; a bug, described.
    Internal(String),
}

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments { message: message.into(), problems: Vec::new() }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::InvalidArguments { message, .. } => {
                write!(f, "invalid arguments: {message}")
            }
            ToolError::Upstream { status, message, .. } => write!(f, "upstream {status}: {message}"),
            ToolError::Network(m) => write!(f, "network: {m}"),
            ToolError::Timeout { seconds } => write!(f, "timed out after {seconds}s"),
            ToolError::Internal(m) => write!(f, "internal: {m}"),
        }
    }
}

impl std::error::Error for ToolError {}

/// An id given as a number or as a string (a name, a slug, a file name): GitHub workflow ids,
/// Superset dashboards. Kept as the text to put in a path; a blank string or anything else is an
/// argument error.
#[derive(Debug, Clone)]
pub struct IdOrName(pub String);

impl<'de> serde::Deserialize<'de> for IdOrName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if !s.trim().is_empty() => Ok(IdOrName(s.trim().to_string())),
            Value::Number(n) if n.is_u64() => Ok(IdOrName(n.to_string())),
            other => Err(serde::de::Error::custom(format!("expected a numeric id or a name, got {other}"))),
        }
    }
}

impl schemars::JsonSchema for IdOrName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IdOrName".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "integer"], "minLength": 1})
    }
}

/// Deserializes validated arguments into the tool's argument type.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::invalid(e.to_string()))
}

/// Percent-encodes one path segment (RFC 3986 unreserved characters stay as they are).
pub fn encode_segment(segment: &str) -> String {
    crate::codec::percent_encode(segment)
}

/// Cuts `text` to at most `max_chars` characters; returns the text and whether it was cut.
pub fn truncate_chars(text: &str, max_chars: usize) -> (String, bool) {
    match text.char_indices().nth(max_chars) {
        Some((idx, _)) => (text[..idx].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// Adds the provider's whole payload as `raw` when the agent asked for it (`include_raw`).
pub fn with_raw(mut shaped: Value, include_raw: bool, raw: &Value) -> Value {
    if include_raw && let Value::Object(o) = &mut shaped {
        o.insert("raw".into(), raw.clone());
    }
    shaped
}

/// Merges the members of `extra` into `base` (both objects).
pub fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}

/// An argument problem at one parameter (`arg` is its name or a JSON Pointer).
pub fn invalid(arg: &str, message: impl Into<String>, problem: impl Into<String>) -> ToolError {
    let path = if arg.is_empty() || arg.starts_with('/') { arg.to_string() } else { format!("/{arg}") };
    ToolError::InvalidArguments {
        message: message.into(),
        problems: vec![ArgProblem { path, problem: problem.into() }],
    }
}

/// Checks a `YYYY-MM-DD` date argument.
pub fn check_date(arg: &str, value: &str) -> Result<(), ToolError> {
    let b = value.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(invalid(arg, format!("'{value}' is not a date in YYYY-MM-DD form"), "expected YYYY-MM-DD"))
    }
}

/// Page-numbered APIs (GitHub, GitLab): the opaque `page:per_page` cursor back to numbers, or page 1
/// with `limit` (1-100) when there is no cursor.
pub fn paging(limit: u32, cursor: Option<&str>) -> Result<(u32, u32), ToolError> {
    let Some(c) = cursor else { return Ok((1, limit.clamp(1, 100))) };
    let parsed = c.split_once(':').and_then(|(p, n)| Some((p.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
    match parsed {
        Some((page, per_page)) if page >= 1 && (1..=100).contains(&per_page) => Ok((page, per_page)),
        _ => Err(invalid(
            "cursor",
            format!("cursor '{c}' is not one this tool issued"),
            "pass next_cursor from the previous call",
        )),
    }
}

/// Adds `per_page` and `page` query parameters.
pub fn with_paging(req: HttpRequest, page: u32, per_page: u32) -> HttpRequest {
    req.query("per_page", per_page).query("page", page)
}

/// Drops `null` values from a JSON object so shaped results stay small.
pub fn compact(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.retain(|_, v| !v.is_null());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_parse() {
        assert_eq!(RateLimit::parse("100/10s"), Some(RateLimit { requests: 100, per_seconds: 10 }));
        assert_eq!(RateLimit::parse("5/s"), Some(RateLimit::per_second(5)));
        assert_eq!(RateLimit::parse("150/min"), Some(RateLimit::per_minute(150)));
        assert_eq!(RateLimit::parse("5000/h"), Some(RateLimit::per_hour(5000)));
        for bad in ["", "10", "x/s", "10/fortnight", "0/s", "10/0s"] {
            assert_eq!(RateLimit::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn curl_proxy_policies() {
        let discord = CurlProxy::WritesUnder(&["/channels/*/messages"]);
        assert!(discord.allows("GET", "/guilds/1/members"));
        assert!(discord.allows("POST", "/channels/9/messages"));
        assert!(discord.allows("PUT", "/channels/9/messages/5/reactions/x/@me"));
        assert!(!discord.allows("DELETE", "/guilds/1/members/2"));
        assert!(!discord.allows("POST", "/channels//messages"));
        assert!(!discord.allows("POST", "/channels/9"));
        assert!(CurlProxy::ReadOnly.allows("GET", "/v1/charges") && !CurlProxy::ReadOnly.allows("POST", "/v1/refunds"));
        assert!(!CurlProxy::Off.allows("GET", "/"));
    }

    #[test]
    fn encodes_path_segments() {
        assert_eq!(encode_segment("Rust (language)"), "Rust%20%28language%29");
        assert_eq!(encode_segment("a/b"), "a%2Fb");
        assert_eq!(encode_segment("Zürich"), "Z%C3%BCrich");
        assert_eq!(encode_segment("plain-1.0_~"), "plain-1.0_~");
    }

    #[test]
    fn truncates_on_char_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), ("hé".to_string(), true));
        assert_eq!(truncate_chars("hi", 5), ("hi".to_string(), false));
    }
}
