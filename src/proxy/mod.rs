//! The curl proxy behind `curl_session`: `/c/<integration>/<path>` on the loopback listener, with
//! `Authorization: Bearer <token>`, forwarded to the integration's base URL with the user's real
//! credential injected by the engine (`send::proxy_send`).
//!
//! Refused before anything is sent: a missing, forged or expired token; an integration the token
//! does not name, or whose proxy policy does not allow the method and path; paths with dot
//! segments, encoded slashes, dots or backslashes, or anything that would resolve off the base
//! URL. The caller's Authorization and cookies never go upstream; Set-Cookie never comes back;
//! every secret value the request carried is replaced in the streamed response (headers and body).
//! Each proxied request leaves an audit row: method, integration, path (no query), status,
//! duration; never bodies or secrets.

pub mod token;

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::app::App;
use crate::secrets::Secret;
use crate::storage::AuditEntry;

/// Largest request body the proxy forwards.
pub const MAX_REQUEST_BODY: usize = 32 * 1024 * 1024;
/// Lifetime bounds of a token, in seconds.
pub const MIN_TTL: u64 = 60;
pub const MAX_TTL: u64 = 3600;
pub const DEFAULT_TTL: u64 = 900;

const REDACTED: &[u8] = b"[REDACTED]";

/// The proxy's state: its signing key once read.
#[derive(Default)]
pub struct SigningKey(tokio::sync::OnceCell<Arc<Secret<Vec<u8>>>>);

/// The curl proxy's route (bearer token: the listener's Host check alone), mounted by the
/// composition root.
pub fn routes() -> axum::Router<crate::listener::Site> {
    axum::Router::new().route(
        "/c/{*rest}",
        axum::routing::any(
            |axum::extract::State(site): axum::extract::State<crate::listener::Site>, request: Request| {
                handle(site.app, request)
            },
        ),
    )
}

/// The per-install signing key: read from the secret store (or created there) once per process.
/// Why the signing key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(transparent)]
    Store(#[from] crate::secrets::StoreError),
    #[error("the stored curl proxy key is damaged")]
    Damaged,
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
}

pub async fn signing_key(app: &Arc<App>) -> Result<Arc<Secret<Vec<u8>>>, KeyError> {
    app.state
        .signing_key
        .0
        .get_or_try_init(|| async {
            let store = app.secrets.clone();
            tokio::task::spawn_blocking(move || -> Result<Arc<Secret<Vec<u8>>>, KeyError> {
                if let Some(existing) = store.get(token::KEY_NAME)? {
                    let bytes = hex_decode(existing.expose()).ok_or(KeyError::Damaged)?;
                    return Ok(Arc::new(Secret::new(bytes)));
                }
                let fresh = crate::ids::random_hex(32);
                store.set(token::KEY_NAME, &Secret::new(fresh.clone()))?;
                Ok(Arc::new(Secret::new(hex_decode(&fresh).unwrap_or_default())))
            })
            .await?
        })
        .await
        .cloned()
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() < 32 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let mut response = (status, axum::Json(json!({ "error": message.into(), "code": code }))).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"workbench\""));
    }
    response
}

/// Splits `/c/<integration>/<rest>` (raw, still percent-encoded) and checks the rest is a plain
/// path: no dot segments, no encoded '/', '\' or '.', no backslashes, no empty segments.
/// Why a proxied path is refused (the `BAD_PATH` message).
#[derive(Debug, thiserror::Error)]
enum PathError {
    #[error("proxy paths look like /c/<integration>/<path>")]
    Shape,
    #[error("'{0}' is not an integration name; use /c/<integration>/<path>")]
    Integration(String),
    #[error("encoded '{0}' is not allowed in proxied paths")]
    Encoded(&'static str),
    #[error("backslashes and control characters are not allowed in proxied paths")]
    Characters,
    #[error("empty, '.' and '..' path segments are not allowed")]
    Segments,
}

fn split_path(raw: &str) -> Result<(String, String), PathError> {
    let rest = raw.strip_prefix("/c/").ok_or(PathError::Shape)?;
    let (integration, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if integration.is_empty() || !integration.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(PathError::Integration(integration.to_string()));
    }
    let lower = path.to_ascii_lowercase();
    for bad in ["%2f", "%5c", "%2e", "%00", "%25"] {
        if lower.contains(bad) {
            return Err(PathError::Encoded(bad));
        }
    }
    if path.contains('\\') || path.bytes().any(|b| b.is_ascii_control()) {
        return Err(PathError::Characters);
    }
    // A trailing slash is part of many APIs' paths (Superset's); other empty segments are not.
    let inner = path[1..].strip_suffix('/').unwrap_or(&path[1..]);
    if path.len() > 1 && inner.split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..") {
        return Err(PathError::Segments);
    }
    Ok((integration.to_string(), path.to_string()))
}

/// Headers that never cross the proxy in either direction.
fn hop_by_hop(name: &str) -> bool {
    matches!(
        name,
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

/// The caller's headers that may go upstream.
fn forwardable(headers: &HeaderMap) -> Vec<(String, Vec<u8>)> {
    headers
        .iter()
        .filter(|(k, _)| {
            let k = k.as_str();
            !hop_by_hop(k)
                && !matches!(k, "authorization" | "cookie" | "accept-encoding" | "origin" | "referer")
                && !k.starts_with("x-forwarded-")
                && !k.starts_with("sec-")
        })
        .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
        .collect()
}

/// Replaces each secret in `bytes`.
fn redact(bytes: &mut Vec<u8>, secrets: &[Vec<u8>]) {
    for s in secrets {
        if s.is_empty() || bytes.len() < s.len() {
            continue;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i..].starts_with(s) {
                out.extend_from_slice(REDACTED);
                i += s.len();
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        *bytes = out;
    }
}

/// A response body stream with every secret replaced, even when one spans two chunks: the last
/// `longest - 1` bytes are held back until the next chunk (or the end) arrives.
fn scrubbed_stream(
    response: reqwest::Response,
    secrets: Vec<Vec<u8>>,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send {
    let keep = secrets.iter().map(Vec::len).max().unwrap_or(1).saturating_sub(1);
    futures::stream::unfold(Some((response, Vec::new())), move |state| {
        let secrets = secrets.clone();
        async move {
            let (mut response, mut carry) = state?;
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    carry.extend_from_slice(&chunk);
                    redact(&mut carry, &secrets);
                    let cut = carry.len().saturating_sub(keep);
                    let out: Vec<u8> = carry.drain(..cut).collect();
                    Some((Ok(out), Some((response, carry))))
                }
                Ok(None) => {
                    redact(&mut carry, &secrets);
                    if carry.is_empty() { None } else { Some((Ok(carry), None)) }
                }
                Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
            }
        }
    })
}

/// Handles one proxied request.
pub async fn handle(app: Arc<App>, request: Request) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let raw_path = request.uri().path().to_string();
    let query = request.uri().query().map(str::to_string);
    let (integration_name, path) = match split_path(&raw_path) {
        Ok(v) => v,
        Err(m) => return refuse(StatusCode::BAD_REQUEST, "BAD_PATH", m.to_string()),
    };

    // The token first: nothing about integrations is said to a caller without one.
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .map(str::to_string);
    let Some(bearer) = bearer else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "NO_TOKEN",
            "send Authorization: Bearer <token> with a token from curl_session",
        );
    };
    let key = match signing_key(&app).await {
        Ok(k) => k,
        Err(e) => {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "SECRET_STORE_UNAVAILABLE",
                format!("the curl proxy key could not be read: {e}"),
            );
        }
    };
    let claims = match token::verify(key.expose(), &bearer, crate::auth::oauth::now_unix()) {
        Ok(c) => c,
        Err(e) => return refuse(StatusCode::UNAUTHORIZED, "BAD_TOKEN", e.to_string()),
    };
    if !claims.integrations.contains(&integration_name) {
        return refuse(
            StatusCode::FORBIDDEN,
            "NOT_IN_TOKEN",
            format!(
                "this token is for {} only; mint one for {integration_name} with curl_session",
                claims.integrations.join(", ")
            ),
        );
    }
    let registry = app.registry();
    let Some(integration) = registry.integration(&integration_name) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "UNKNOWN_INTEGRATION",
            format!("no integration named {integration_name}"),
        );
    };
    if !matches!(method.as_str(), "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE") {
        return refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "METHOD_NOT_ALLOWED",
            "the proxy forwards GET, HEAD, POST, PUT, PATCH and DELETE",
        );
    }
    if !integration.curl_proxy.allows(method.as_str(), &path) {
        return refuse(
            StatusCode::FORBIDDEN,
            "NOT_ALLOWED",
            format!(
                "the curl proxy allows {} for {}; {} {path} is not among them",
                integration.curl_proxy.describe(),
                integration.name,
                method
            ),
        );
    }
    // The account the token was minted for (bound in its claims), else the default one.
    let account = match claims.accounts.get(integration.name) {
        Some(a) => Some(a.clone()),
        None => app.resolve_account(integration, None).ok().flatten(),
    };
    let read = match &account {
        Some(a) => app.connection_of(integration, a),
        None => Ok(None),
    };
    let connection = match read {
        Ok(Some(c)) => Arc::new(c),
        Ok(None) => {
            return refuse(
                StatusCode::FORBIDDEN,
                "NOT_CONNECTED",
                format!("{} is not connected any more; call connect", integration.name),
            );
        }
        Err(e) => {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "SECRET_STORE_UNAVAILABLE",
                format!("the credential for {} could not be read: {e}", integration.name),
            );
        }
    };
    let headers = forwardable(request.headers());
    let body = match axum::body::to_bytes(request.into_body(), MAX_REQUEST_BODY).await {
        Ok(b) => b.to_vec(),
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "TOO_LARGE",
                format!("request bodies are limited to {} MiB", MAX_REQUEST_BODY / (1024 * 1024)),
            );
        }
    };
    let path_and_query = match &query {
        Some(q) => format!("{path}?{q}"),
        None => path.clone(),
    };
    let call = crate::send::ProxyCall {
        method: reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap_or(reqwest::Method::GET),
        path_and_query,
        headers,
        body,
    };
    let deadline = Instant::now() + app.settings.call_timeout;
    let answer = crate::send::proxy_send(&app, integration, connection, &call, deadline).await;
    let mutating = !matches!(method.as_str(), "GET" | "HEAD");
    let (response, status, code, error) = match answer {
        Ok(answer) => {
            let status = answer.response.status().as_u16();
            (Ok(answer), status, (status >= 400).then(|| "UPSTREAM_ERROR".to_string()), None)
        }
        Err(e) => {
            let (status, code) = match &e {
                plugins::api::ToolError::Timeout { .. } => (504, "TIMEOUT"),
                plugins::api::ToolError::Network(_) => (502, "NETWORK_ERROR"),
                plugins::api::ToolError::InvalidArguments { .. } => (400, "BAD_PATH"),
                plugins::api::ToolError::Upstream { status, .. } => (*status, "UPSTREAM_ERROR"),
                plugins::api::ToolError::Internal(_) => (500, "INTERNAL_ERROR"),
            };
            (Err(e), status, Some(code.to_string()), None::<String>)
        }
    };
    let row = AuditEntry {
        tool: "curl_proxy".into(),
        integration: integration.name.into(),
        args: json!({ "method": method.as_str(), "path": path, "status": status }).to_string(),
        mutating,
        ok: code.is_none(),
        error_code: code,
        error,
        duration_ms: started.elapsed().as_millis() as u64,
        account,
    };
    if let Err(e) = app.storage.record_audit(row).await {
        tracing::warn!(error = %e, "could not write the curl proxy audit row");
    }
    match response {
        Err(e) => {
            let scrubber = crate::scrub::Scrubber::new(Vec::new());
            let message = scrubber.text(&e.to_string());
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
            let code = match status.as_u16() {
                504 => "TIMEOUT",
                502 => "NETWORK_ERROR",
                400 => "BAD_PATH",
                _ => "UPSTREAM_ERROR",
            };
            refuse(status, code, message)
        }
        Ok(answer) => pass_back(answer),
    }
}

/// The upstream's answer as the caller gets it: status, headers minus hop-by-hop and cookies,
/// secrets replaced everywhere, body streamed.
fn pass_back(answer: crate::send::ProxyAnswer) -> Response {
    let secrets: Vec<Vec<u8>> = answer.secrets.iter().filter(|s| s.len() >= 4).map(|s| s.as_bytes().to_vec()).collect();
    let status = StatusCode::from_u16(answer.response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut headers = HeaderMap::new();
    for (k, v) in answer.response.headers() {
        let name = k.as_str();
        if hop_by_hop(name) || matches!(name, "set-cookie" | "set-cookie2") {
            continue;
        }
        let mut value = v.as_bytes().to_vec();
        redact(&mut value, &secrets);
        if let (Ok(n), Ok(v)) = (axum::http::HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(&value)) {
            headers.append(n, v);
        }
    }
    let body = Body::from_stream(scrubbed_stream(answer.response, secrets));
    let mut response = (status, body).into_response();
    *response.headers_mut() = headers;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_split_and_checked() {
        assert_eq!(split_path("/c/github/user/repos").unwrap(), ("github".into(), "/user/repos".into()));
        assert_eq!(split_path("/c/github").unwrap(), ("github".into(), "/".into()));
        assert_eq!(split_path("/c/discord/users/@me").unwrap().1, "/users/@me");
        assert_eq!(split_path("/c/superset/api/v1/database/").unwrap().1, "/api/v1/database/");
        for bad in [
            "/c/github/../etc",
            "/c/github/a/./b",
            "/c/github/a//b",
            "/c/github//",
            "/c/github/../",
            "/c/github/a%2f..%2fb",
            "/c/github/%2e%2e/x",
            "/c/github/a%5cb",
            "/c/github/a\\b",
            "/c/github/%252e%252e/x",
            "/c/GitHub/x",
            "/c//x",
            "/x/github/y",
        ] {
            assert!(split_path(bad).is_err(), "{bad} must be refused");
        }
    }

    #[test]
    fn redaction_covers_every_occurrence() {
        let mut b = b"tok123 and tok123!".to_vec();
        redact(&mut b, &[b"tok123".to_vec()]);
        assert_eq!(b, b"[REDACTED] and [REDACTED]!");
    }
}
