//! OAuth for Streamable HTTP upstream servers, as the MCP authorization spec describes it, with
//! workbench's loopback flow (the listener's `/oauth/callback`, PKCE S256).
//!
//! - **Discovery.** The server's 401 names its protected resource metadata
//!   (`WWW-Authenticate: Bearer resource_metadata="..."`, RFC 9728), else the well-known URL under
//!   the server's origin is tried. That document's `resource` must be the server's own URL and its
//!   first `authorization_servers` entry is asked for its metadata (RFC 8414, then OpenID
//!   discovery), whose `issuer` must match and which must offer PKCE S256.
//! - **Client.** Registered dynamically (RFC 7591) when the authorization server offers it, as a
//!   public client with the loopback redirect URI.
//! - **Consent.** `connect` with integration `mcp:<server>` returns the authorization URL (with
//!   `state`, the PKCE challenge and `resource` = the server URL, RFC 8707); the callback exchanges
//!   the code.
//! - **Tokens** live in the secret store only, under `mcp:<server>` ([`store_key`]), with the
//!   resource they were issued for: they are sent only to that server's URL (a changed URL drops
//!   them), refreshed a minute before they expire and again on a 401.
//! - **Guard.** Every metadata, registration and token URL goes through `App::client_for`: never
//!   workbench's own listener, and a private or loopback address only on the configured server's
//!   own host (a public server cannot point workbench at the user's network).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::App;
use crate::secrets::Secret;

/// How long a consent link works.
const FLIGHT_TTL: Duration = Duration::from_secs(15 * 60);
/// Longest a metadata, registration or token request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Largest metadata or token answer read.
const MAX_BODY: usize = 256 * 1024;

/// The secret-store key of a server's tokens; also the `integration` the agent passes to `connect`.
pub fn store_key(server: &str) -> String {
    format!("mcp:{server}")
}

/// A server's tokens as the secret store holds them.
#[derive(Serialize, Deserialize)]
struct Stored {
    /// The server URL the tokens were issued for (RFC 8707 `resource`).
    resource: String,
    access: String,
    refresh: Option<String>,
    /// Unix seconds.
    expires_at: Option<i64>,
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
}

/// One consent in progress, by its `state`.
struct Flight {
    server: String,
    verifier: String,
    redirect_uri: String,
    token_endpoint: String,
    client_id: String,
    client_secret: Option<String>,
    resource: String,
    expires: Instant,
}

/// Why a token could not be got, refreshed or stored, or a consent not started. The texts name
/// no token: a refused token endpoint's own words are scrubbed ([`crate::app::App::exposed`]).
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("the secret store refused: {0}")]
    Store(#[source] crate::secrets::StoreError),
    #[error("no tokens are stored")]
    NoTokens,
    #[error("the stored tokens are for another URL")]
    OtherUrl,
    #[error("the authorization server gave no refresh token")]
    NoRefreshToken,
    #[error("{url} is refused: {reason}")]
    Refused { url: String, reason: String },
    #[error("the answer is too large")]
    TooLarge,
    #[error(transparent)]
    Body(reqwest::Error),
    #[error("{url} is not a URL: {source}")]
    NotAUrl { url: String, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("{url}: {source}")]
    Request { url: String, source: reqwest::Error },
    #[error("{url} answered HTTP {status} without a JSON object")]
    NoJsonObject { url: String, status: u16 },
    #[error("the token endpoint is not a URL: {0}")]
    TokenEndpointUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the token endpoint: {0}")]
    TokenRequest(#[source] reqwest::Error),
    /// The endpoint's `error_description` (or `error`, or the HTTP status), scrubbed.
    #[error("the token endpoint refused: {0}")]
    TokenRefused(String),
    #[error("the token endpoint sent no access_token")]
    NoAccessToken,
    #[error("'{0}' is a stdio server; only HTTP servers use OAuth")]
    Stdio(String),
    #[error("the entry of '{server}' in config.json is invalid: {source}")]
    InvalidEntry { server: String, source: super::config::EntryError },
    #[error("'{0}' is not a configured upstream server")]
    NotConfigured(String),
    #[error("its url is not a URL: {0}")]
    ServerUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("no protected resource metadata was found ({last})")]
    NoResourceMetadata { last: String },
    #[error("its protected resource metadata names another resource ('{0}'), so it is not used")]
    OtherResource(String),
    #[error("its protected resource metadata names no authorization server")]
    NoAuthorizationServer,
    #[error("authorization server '{issuer}': {source}")]
    IssuerUrl { issuer: String, source: Box<dyn std::error::Error + Send + Sync> },
    #[error("the authorization server {issuer} publishes no metadata ({last})")]
    NoServerMetadata { issuer: String, last: String },
    #[error("the authorization server metadata at {0} names another issuer")]
    OtherIssuer(String),
    #[error("the authorization server {0} does not offer PKCE (S256), which MCP requires")]
    NoPkce(String),
    #[error("the authorization server has no authorization_endpoint")]
    NoAuthorizationEndpoint,
    #[error("the authorization server has no token_endpoint")]
    NoTokenEndpoint,
    #[error("authorization_endpoint: {0}")]
    AuthorizeUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the authorization_endpoint is not an http(s) URL")]
    AuthorizeNotWeb,
    #[error("token_endpoint: {0}")]
    TokenUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error(transparent)]
    Listener(#[from] crate::listener::ListenError),
    #[error(
        "the authorization server {0} offers no dynamic client registration; give a token in the entry's headers instead"
    )]
    NoRegistration(String),
    #[error("registration_endpoint: {0}")]
    RegistrationUrl(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("client registration: {0}")]
    Registration(#[source] reqwest::Error),
    #[error("client registration answered HTTP {0}")]
    RegistrationStatus(u16),
}

/// The consents in progress and the last challenge of each server (one field of `Upstreams`).
#[derive(Default)]
pub struct Flights {
    by_state: std::sync::Mutex<HashMap<String, Flight>>,
    challenges: std::sync::Mutex<HashMap<String, String>>,
}

impl Flights {
    /// Keeps a server's `WWW-Authenticate` challenge for the next [`begin`].
    pub fn challenged(&self, server: &str, challenge: &str) {
        let mut all = self.challenges.lock().unwrap_or_else(|p| p.into_inner());
        all.insert(server.to_string(), challenge.to_string());
    }
}

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

fn load(app: &App, server: &str) -> Option<Stored> {
    let blob = app.secrets.get(&store_key(server)).ok().flatten()?;
    let stored: Stored = serde_json::from_str(blob.expose()).ok()?;
    app.exposed.remember(&stored.access);
    if let Some(r) = &stored.refresh {
        app.exposed.remember(r);
    }
    if let Some(s) = &stored.client_secret {
        app.exposed.remember(s);
    }
    Some(stored)
}

fn save(app: &App, server: &str, stored: &Stored) -> Result<(), OAuthError> {
    let blob = serde_json::to_string(stored)?;
    app.secrets.set(&store_key(server), &Secret::new(blob)).map_err(OAuthError::Store)
}

/// Whether `a` and `b` are the same resource URL (scheme, host, port, path; a trailing `/` aside).
fn same_resource(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        reqwest::Url::parse(s)
            .ok()
            .map(|u| format!("{}{}", u.origin().ascii_serialization(), u.path().trim_end_matches('/')))
    };
    norm(a).is_some() && norm(a) == norm(b)
}

/// The access token to send to `server` at `url`: `None` when there is none for this URL. One that
/// expires within a minute is refreshed first (a failed refresh gives `None`: the server's 401
/// then asks for consent again).
pub async fn bearer(app: &App, server: &str, url: &str) -> Option<String> {
    let stored = load(app, server)?;
    if !same_resource(&stored.resource, url) {
        return None;
    }
    if stored.expires_at.is_some_and(|at| at - 60 <= now_unix()) {
        return refresh(app, server, url).await.ok();
    }
    Some(stored.access)
}

/// Refreshes `server`'s tokens (after a 401 or near expiry); returns the new access token.
pub async fn refresh(app: &App, server: &str, url: &str) -> Result<String, OAuthError> {
    let stored = load(app, server).ok_or(OAuthError::NoTokens)?;
    if !same_resource(&stored.resource, url) {
        return Err(OAuthError::OtherUrl);
    }
    let refresh = stored.refresh.clone().ok_or(OAuthError::NoRefreshToken)?;
    let mut form = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", refresh.clone()),
        ("client_id", stored.client_id.clone()),
        ("resource", stored.resource.clone()),
    ];
    if let Some(s) = &stored.client_secret {
        form.push(("client_secret", s.clone()));
    }
    let tokens = post_form(app, &stored.token_endpoint, url, form).await?;
    let fresh = Stored {
        access: tokens.access,
        refresh: tokens.refresh.or(Some(refresh)),
        expires_at: tokens.expires_in.map(|s| now_unix() + s),
        ..stored
    };
    save(app, server, &fresh)?;
    Ok(fresh.access)
}

struct Tokens {
    access: String,
    refresh: Option<String>,
    expires_in: Option<i64>,
}

/// The guarded client for a URL the server's metadata named: workbench's listener never; a
/// private or loopback address only on the configured server's own host.
fn client_for<'a>(app: &'a App, url: &reqwest::Url, server_url: &str) -> Result<&'a reqwest::Client, OAuthError> {
    let server_host = reqwest::Url::parse(server_url).ok().and_then(|u| u.host_str().map(str::to_string));
    let user_origin = server_host.is_some() && url.host_str().map(str::to_string) == server_host;
    app.client_for(url, user_origin).map_err(|r| OAuthError::Refused { url: url.to_string(), reason: r.0 })
}

async fn read_json(response: reqwest::Response) -> Result<(u16, Value), OAuthError> {
    let status = response.status().as_u16();
    let bytes =
        crate::net::read_limited(response, MAX_BODY).await.map_err(OAuthError::Body)?.ok_or(OAuthError::TooLarge)?;
    Ok((status, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

async fn get_json(app: &App, url: &str, server_url: &str) -> Result<Value, OAuthError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| OAuthError::NotAUrl { url: url.to_string(), source: e.into() })?;
    let client = client_for(app, &parsed, server_url)?;
    let response = client
        .get(parsed)
        .header("accept", "application/json")
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|source| OAuthError::Request { url: url.to_string(), source })?;
    match read_json(response).await? {
        (200..=299, v) if v.is_object() => Ok(v),
        (status, _) => Err(OAuthError::NoJsonObject { url: url.to_string(), status }),
    }
}

async fn post_form(app: &App, url: &str, server_url: &str, form: Vec<(&str, String)>) -> Result<Tokens, OAuthError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| OAuthError::TokenEndpointUrl(e.into()))?;
    let client = client_for(app, &parsed, server_url)?;
    let response = client
        .post(parsed)
        .header("accept", "application/json")
        .form(&form)
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(OAuthError::TokenRequest)?;
    let (status, body) = read_json(response).await?;
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
    if !(200..300).contains(&status) || body.get("error").is_some() {
        let why = text("error_description").or_else(|| text("error")).unwrap_or_else(|| format!("HTTP {status}"));
        return Err(OAuthError::TokenRefused(app.exposed.text(&why)));
    }
    let access = text("access_token").ok_or(OAuthError::NoAccessToken)?;
    let tokens =
        Tokens { access, refresh: text("refresh_token"), expires_in: body.get("expires_in").and_then(Value::as_i64) };
    app.exposed.remember(&tokens.access);
    if let Some(r) = &tokens.refresh {
        app.exposed.remember(r);
    }
    Ok(tokens)
}

/// The `resource_metadata` URL of a `WWW-Authenticate: Bearer ...` challenge.
fn resource_metadata(challenge: &str) -> Option<String> {
    let at = challenge.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &challenge[at..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_string())
}

/// `{origin}/.well-known/{name}{path}` (RFC 8414 / RFC 9728 path insertion), and the same without
/// the path.
fn well_known(url: &reqwest::Url, name: &str) -> Vec<String> {
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!("{origin}/.well-known/{name}{path}"));
    }
    out.push(format!("{origin}/.well-known/{name}"));
    out
}

/// The first of `candidates` (metadata URLs, in the order the RFCs give) that answers with JSON;
/// else the last one's error.
async fn first_json(app: &App, candidates: Vec<String>, server_url: &str) -> Result<Value, String> {
    let mut last = String::new();
    for candidate in candidates {
        match get_json(app, &candidate, server_url).await {
            Ok(v) => return Ok(v),
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

/// Starts the consent for `server` (a configured Streamable HTTP server): discovers its
/// authorization server, registers workbench as a client when it can, and returns the URL for the
/// user to open. Nothing is stored until the user finishes.
pub async fn begin(app: &Arc<App>, server: &str) -> Result<String, OAuthError> {
    let configs = app.upstream().configs();
    let url = match configs.get(server) {
        Some(Ok(super::ServerConfig::Http { url, .. })) => url.clone(),
        Some(Ok(_)) => return Err(OAuthError::Stdio(server.to_string())),
        Some(Err(e)) => return Err(OAuthError::InvalidEntry { server: server.to_string(), source: e.clone() }),
        None => return Err(OAuthError::NotConfigured(server.to_string())),
    };
    let parsed = reqwest::Url::parse(&url).map_err(|e| OAuthError::ServerUrl(e.into()))?;
    client_for(app, &parsed, &url)?;
    let challenge = app.upstream().oauth.challenges.lock().unwrap_or_else(|p| p.into_inner()).get(server).cloned();
    let mut candidates: Vec<String> = challenge.as_deref().and_then(resource_metadata).into_iter().collect();
    candidates.extend(well_known(&parsed, "oauth-protected-resource"));
    let prm = first_json(app, candidates, &url).await.map_err(|last| OAuthError::NoResourceMetadata { last })?;
    let resource = prm.get("resource").and_then(Value::as_str).unwrap_or_default().to_string();
    // RFC 9728 §3.3: the metadata must be about this very server, or it is not to be used.
    if !same_resource(&resource, &url) {
        return Err(OAuthError::OtherResource(resource));
    }
    let issuer = prm
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or(OAuthError::NoAuthorizationServer)?
        .to_string();
    let issuer_url =
        reqwest::Url::parse(&issuer).map_err(|e| OAuthError::IssuerUrl { issuer: issuer.clone(), source: e.into() })?;
    let metadata =
        [well_known(&issuer_url, "oauth-authorization-server"), well_known(&issuer_url, "openid-configuration")]
            .concat();
    let asm = first_json(app, metadata, &url)
        .await
        .map_err(|last| OAuthError::NoServerMetadata { issuer: issuer.clone(), last })?;
    let field = |k: &str| asm.get(k).and_then(Value::as_str).map(str::to_string);
    if field("issuer").is_none_or(|i| i.trim_end_matches('/') != issuer.trim_end_matches('/')) {
        return Err(OAuthError::OtherIssuer(issuer));
    }
    let pkce = asm
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|x| x == "S256"));
    if !pkce {
        return Err(OAuthError::NoPkce(issuer));
    }
    let authorize = field("authorization_endpoint").ok_or(OAuthError::NoAuthorizationEndpoint)?;
    let token_endpoint = field("token_endpoint").ok_or(OAuthError::NoTokenEndpoint)?;
    // The consent page is the user's browser's business, but it must be a web URL.
    let authorize_url = reqwest::Url::parse(&authorize).map_err(|e| OAuthError::AuthorizeUrl(e.into()))?;
    if !matches!(authorize_url.scheme(), "https" | "http") {
        return Err(OAuthError::AuthorizeNotWeb);
    }
    client_for(app, &reqwest::Url::parse(&token_endpoint).map_err(|e| OAuthError::TokenUrl(e.into()))?, &url)?;

    let listener = crate::connect::ensure_listener(app).await?;
    let redirect_uri = format!("http://127.0.0.1:{}/oauth/callback", listener.port);
    let (client_id, client_secret) = match field("registration_endpoint") {
        Some(endpoint) => register(app, &endpoint, &url, &redirect_uri).await?,
        None => {
            return Err(OAuthError::NoRegistration(issuer));
        }
    };
    let (verifier, challenge) = crate::auth::oauth::pkce_pair();
    let state = crate::ids::random_hex(32);
    let mut consent = authorize_url;
    {
        let mut q = consent.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &url);
        if let Some(scopes) = prm.get("scopes_supported").and_then(Value::as_array) {
            let scopes: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
        }
    }
    let flight = Flight {
        server: server.to_string(),
        verifier,
        redirect_uri,
        token_endpoint,
        client_id,
        client_secret,
        resource: url,
        expires: Instant::now() + FLIGHT_TTL,
    };
    let upstreams = app.upstream();
    let mut flights = upstreams.oauth.by_state.lock().unwrap_or_else(|p| p.into_inner());
    flights.retain(|_, f| f.expires > Instant::now());
    flights.insert(state, flight);
    Ok(consent.to_string())
}

/// Registers workbench as a public client (RFC 7591) with the loopback redirect URI.
async fn register(
    app: &App,
    endpoint: &str,
    server_url: &str,
    redirect_uri: &str,
) -> Result<(String, Option<String>), OAuthError> {
    let parsed = reqwest::Url::parse(endpoint).map_err(|e| OAuthError::RegistrationUrl(e.into()))?;
    let client = client_for(app, &parsed, server_url)?;
    let body = serde_json::json!({
        "client_name": "workbench",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    let response =
        client.post(parsed).json(&body).timeout(REQUEST_TIMEOUT).send().await.map_err(OAuthError::Registration)?;
    let (status, v) = read_json(response).await?;
    let id = v.get("client_id").and_then(Value::as_str).filter(|_| (200..300).contains(&status));
    let id = id.ok_or(OAuthError::RegistrationStatus(status))?.to_string();
    let secret = v.get("client_secret").and_then(Value::as_str).map(str::to_string);
    if let Some(s) = &secret {
        app.exposed.remember(s);
    }
    Ok((id, secret))
}

/// The listener's `/oauth/callback` for an MCP consent: `None` when `state` is not one of ours
/// (then it is an integration's). Otherwise the status and page to show.
pub async fn callback(app: &Arc<App>, state: &str, query: &HashMap<String, String>) -> Option<(u16, String)> {
    use crate::listener::pages::{failure, success};
    let flight = app.upstream().oauth.by_state.lock().unwrap_or_else(|p| p.into_inner()).remove(state)?;
    if Instant::now() >= flight.expires {
        return Some((
            410,
            failure("Link expired", "This sign-in link has expired. Ask your agent to call connect again."),
        ));
    }
    if let Some(err) = query.get("error") {
        let message = format!("The authorization server answered {}. Nothing was stored.", app.exposed.text(err));
        return Some((400, failure("Sign-in was not completed", &message)));
    }
    let Some(code) = query.get("code") else {
        return Some((400, failure("Sign-in failed", "The sign-in answer had no code.")));
    };
    let mut form = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code.clone()),
        ("redirect_uri", flight.redirect_uri.clone()),
        ("client_id", flight.client_id.clone()),
        ("code_verifier", flight.verifier.clone()),
        ("resource", flight.resource.clone()),
    ];
    if let Some(s) = &flight.client_secret {
        form.push(("client_secret", s.clone()));
    }
    let tokens = match post_form(app, &flight.token_endpoint, &flight.resource, form).await {
        Ok(t) => t,
        Err(e) => return Some((502, failure("Sign-in failed", &app.exposed.text(&e.to_string())))),
    };
    let stored = Stored {
        resource: flight.resource,
        access: tokens.access,
        refresh: tokens.refresh,
        expires_at: tokens.expires_in.map(|s| now_unix() + s),
        token_endpoint: flight.token_endpoint,
        client_id: flight.client_id,
        client_secret: flight.client_secret,
    };
    if let Err(e) = save(app, &flight.server, &stored) {
        return Some((500, failure("Could not store the sign-in", &e.to_string())));
    }
    app.upstream().authorized(&flight.server);
    tracing::info!(server = %flight.server, "upstream server authorized");
    let message = format!("workbench can now use the MCP server '{}'.", flight.server);
    Some((200, success("Signed in", &message)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_name_their_metadata() {
        let c = r#"Bearer error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            resource_metadata(c).as_deref(),
            Some("http://localhost:3000/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            resource_metadata("Bearer resource_metadata=https://a.example/x, scope=y").as_deref(),
            Some("https://a.example/x")
        );
        assert_eq!(resource_metadata("Bearer realm=x"), None);
        let u = reqwest::Url::parse("https://a.example/mcp/").unwrap();
        assert_eq!(
            well_known(&u, "oauth-protected-resource"),
            [
                "https://a.example/.well-known/oauth-protected-resource/mcp",
                "https://a.example/.well-known/oauth-protected-resource"
            ]
        );
        assert!(same_resource("http://localhost:3000/mcp", "http://localhost:3000/mcp/"));
        assert!(!same_resource("http://localhost:3000/mcp", "http://localhost:3001/mcp"));
        assert!(!same_resource("", ""));
    }
}
