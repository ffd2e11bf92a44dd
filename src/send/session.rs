//! Login sessions for integrations whose credential is a login (`Inject::Session`, e.g. Superset).
//!
//! The engine opens a session by running the integration's login steps with the connection's
//! fields (the only place a password leaves its wrapper), keeps the captured values (access token,
//! CSRF token, cookies) in memory per integration, and attaches them to requests as the
//! integration's [`SessionSpec`] says. One lock per integration: concurrent calls wait for the same
//! login instead of each logging in. A session belongs to the exact connection it was opened with
//! (a fingerprint of its fields), so reconnecting with another account or host never reuses it.
//! Values are held as [`Secret`]s and never logged; the upstream reports every value it attaches
//! so the call's scrubber removes them from results, errors and the audit row.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use plugins::api::{Attach, Body, Capture, HttpRequest, HttpResponse, Integration, Method, On, SessionSpec, ToolError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::auth::{Connection, SecretPairs};
use crate::secrets::Secret;

pub use crate::auth::sessions::{Session, Sessions};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn fingerprint(connection: &Connection) -> [u8; 32] {
    let mut fields: Vec<(&String, &Secret<String>)> = connection.fields.iter().collect();
    fields.sort_by(|a, b| a.0.cmp(b.0));
    let mut hash = Sha256::new();
    for (k, v) in fields {
        hash.update(k.as_bytes());
        hash.update([0]);
        hash.update(v.expose().as_bytes());
        hash.update([0]);
    }
    hash.finalize().into()
}

/// The session to use for this connection: the cached one, or a fresh login. `rejected` names a
/// session a request just found expired; it is replaced, unless a concurrent call already did.
pub async fn current(
    app: &Arc<App>,
    integration: &'static Integration,
    spec: &'static SessionSpec,
    connection: &Connection,
    deadline: Instant,
    rejected: Option<u64>,
) -> Result<Arc<Session>, ToolError> {
    let fingerprint = fingerprint(connection);
    let slot = app.state.sessions.slot(&connection.account_key());
    let mut cached = slot.lock().await;
    if let Some(s) = cached.as_ref()
        && s.fingerprint == fingerprint
        && Some(s.id) != rejected
    {
        return Ok(s.clone());
    }
    *cached = None;
    let values = login(app, integration, spec, connection, deadline).await?;
    let session = Arc::new(Session::new(NEXT_ID.fetch_add(1, Ordering::Relaxed), fingerprint, values));
    tracing::info!(integration = integration.name, session = session.id, "logged in");
    *cached = Some(session.clone());
    Ok(session)
}

/// Runs the login steps; returns the captured values.
async fn login(
    app: &Arc<App>,
    integration: &'static Integration,
    spec: &'static SessionSpec,
    connection: &Connection,
    deadline: Instant,
) -> Result<HashMap<&'static str, Secret<String>>, ToolError> {
    let mut values: HashMap<&'static str, Secret<String>> = HashMap::new();
    for step in spec.login {
        let template = (step.request)();
        let what = format!("{} {}", template.method.as_str(), template.path);
        let ctx = Fillers { app, integration, connection, values: &values };
        let request = render_request(template, &ctx)?;
        let reply = match super::send(
            app.clone(),
            integration,
            deadline,
            Some(Arc::new(connection.clone())),
            request,
            Vec::new(),
        )
        .await
        {
            Ok(reply) => reply,
            Err(ToolError::Upstream { status: status @ (401 | 403), message, retry_after }) => {
                return Err(ToolError::Upstream {
                    status,
                    message: format!("{} refused the login ({what}): {message}", integration.display_name),
                    retry_after,
                });
            }
            Err(e) => return Err(e),
        };
        for capture in step.capture {
            let (name, value) = captured(&reply, capture).map_err(|missing| ToolError::Upstream {
                status: reply.status,
                message: format!("{}'s answer to the login step {what} had no {missing}", integration.display_name),
                retry_after: None,
            })?;
            values.insert(name, Secret::new(value));
        }
    }
    Ok(values)
}

/// One captured value, or a description of what was missing.
/// What a login step's answer lacked (`'csrf' cookie`, `'/result' in its body`).
#[derive(Debug, PartialEq, thiserror::Error)]
enum Missing {
    #[error("'{0}' in its body")]
    Json(&'static str),
    #[error("'{0}' cookie")]
    Cookie(&'static str),
}

fn captured(reply: &HttpResponse, capture: &Capture) -> Result<(&'static str, String), Missing> {
    match *capture {
        Capture::Json { pointer, name } => {
            let body: Value = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
            let value = match body.pointer(pointer) {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => return Err(Missing::Json(pointer)),
            };
            Ok((name, value))
        }
        Capture::Cookie { cookie, name } => reply
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
            .filter_map(|(_, v)| {
                let pair = v.split(';').next()?.trim();
                let (n, value) = pair.split_once('=')?;
                (n.trim() == cookie && !value.trim().is_empty()).then(|| value.trim().to_string())
            })
            .next_back()
            .map(|v| (name, v))
            .ok_or(Missing::Cookie(cookie)),
    }
}

/// The headers that carry the session on one request (cookies joined into one `cookie` header).
pub fn attachments(
    app: &Arc<App>,
    integration: &'static Integration,
    spec: &'static SessionSpec,
    session: &Session,
    connection: &Connection,
    method: Method,
) -> Result<SecretPairs, ToolError> {
    let write = matches!(method, Method::Post | Method::Put | Method::Patch | Method::Delete);
    let applies = |on: On| on == On::All || (on == On::Writes && write);
    let ctx = Fillers { app, integration, connection, values: &session.values };
    let mut headers: SecretPairs = Vec::new();
    let mut cookies = Vec::new();
    for rule in spec.attach {
        match *rule {
            Attach::Header { name, value, on } if applies(on) => {
                headers.push((name.to_ascii_lowercase(), Secret::new(render(value, &ctx)?)));
            }
            Attach::Cookie { name, value, on } if applies(on) => {
                cookies.push(format!("{name}={}", render(value, &ctx)?));
            }
            _ => {}
        }
    }
    if !cookies.is_empty() {
        headers.push(("cookie".to_string(), Secret::new(cookies.join("; "))));
    }
    Ok(headers)
}

/// Whether an error answer means the session is no longer valid (log in again once).
/// `status` and `message` are a refused answer's (the provider's own words, when read).
pub fn expired(spec: &SessionSpec, status: u16, message: &str) -> bool {
    status == 401 || spec.renew_on.iter().any(|(s, piece)| *s == status && message.contains(piece))
}

/// What a session template's placeholders are filled from.
struct Fillers<'a> {
    app: &'a Arc<App>,
    integration: &'static Integration,
    connection: &'a Connection,
    values: &'a HashMap<&'static str, Secret<String>>,
}

/// Fills `{{field:NAME}}`, `{{field:NAME|default}}`, `{{session:NAME}}` and `{{host:KEY}}`.
fn render(template: &str, ctx: &Fillers<'_>) -> Result<String, ToolError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find("}}") else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &rest[start + 2..start + len];
        out.push_str(&fill(inner, ctx)?);
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn fill(placeholder: &str, ctx: &Fillers<'_>) -> Result<String, ToolError> {
    let name = ctx.integration.name;
    let bug = |what: String| ToolError::Internal(format!("{name}'s session spec: {what}"));
    let (kind, arg) = placeholder.split_once(':').ok_or_else(|| bug(format!("'{{{{{placeholder}}}}}' has no kind")))?;
    match kind {
        "field" => {
            let (field, default) = match arg.split_once('|') {
                Some((f, d)) => (f, Some(d)),
                None => (arg, None),
            };
            match ctx.connection.fields.get(field).map(|v| v.expose().as_str()).filter(|v| !v.is_empty()) {
                Some(v) => Ok(v.to_string()),
                None => default.map(str::to_string).ok_or_else(|| {
                    ToolError::invalid(format!("{name} needs the connection's '{field}'; reconnect and fill it in"))
                }),
            }
        }
        "session" => ctx
            .values
            .get(arg)
            .map(|v| v.expose().clone())
            .ok_or_else(|| bug(format!("session value '{arg}' is used before a login step captures it"))),
        "host" => super::host_url(ctx.app, ctx.integration, arg, &[], Some(ctx.connection)),
        other => Err(bug(format!("unknown template kind '{other}'"))),
    }
}

/// A login step's request with every template filled (headers, query, JSON strings, form values).
fn render_request(mut request: HttpRequest, ctx: &Fillers<'_>) -> Result<HttpRequest, ToolError> {
    for (_, v) in request.query.iter_mut().chain(request.headers.iter_mut()) {
        *v = render(v, ctx)?;
    }
    request.body = match request.body {
        Body::Json(mut v) => {
            render_json(&mut v, ctx)?;
            Body::Json(v)
        }
        Body::Form(pairs) => {
            Body::Form(pairs.into_iter().map(|(k, v)| Ok((k, render(&v, ctx)?))).collect::<Result<_, ToolError>>()?)
        }
        other => other,
    };
    Ok(request)
}

fn render_json(value: &mut Value, ctx: &Fillers<'_>) -> Result<(), ToolError> {
    match value {
        Value::String(s) if s.contains("{{") => *s = render(s, ctx)?,
        Value::Array(items) => {
            for v in items {
                render_json(v, ctx)?;
            }
        }
        Value::Object(map) => {
            for v in map.values_mut() {
                render_json(v, ctx)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(headers: &[(&str, &str)], body: &str) -> HttpResponse {
        HttpResponse {
            status: 200,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn captures_json_values_and_cookies() {
        let r = reply(
            &[("set-cookie", "other=1; Path=/"), ("Set-Cookie", "session=abc.def; HttpOnly; Path=/; SameSite=Lax")],
            r#"{"result": "csrf-1", "n": 7, "empty": ""}"#,
        );
        assert_eq!(
            captured(&r, &Capture::Json { pointer: "/result", name: "csrf" }).unwrap(),
            ("csrf", "csrf-1".into())
        );
        assert_eq!(captured(&r, &Capture::Json { pointer: "/n", name: "n" }).unwrap(), ("n", "7".into()));
        assert!(captured(&r, &Capture::Json { pointer: "/empty", name: "e" }).is_err());
        assert!(captured(&r, &Capture::Json { pointer: "/missing", name: "m" }).is_err());
        assert_eq!(captured(&r, &Capture::Cookie { cookie: "session", name: "s" }).unwrap(), ("s", "abc.def".into()));
        assert_eq!(
            captured(&r, &Capture::Cookie { cookie: "nope", name: "s" }).unwrap_err().to_string(),
            "'nope' cookie"
        );
    }

    #[test]
    fn expiry_is_401_or_a_listed_answer() {
        static SPEC: SessionSpec = SessionSpec { login: &[], attach: &[], renew_on: &[(400, "CSRF")] };
        assert!(expired(&SPEC, 401, "Token has expired"));
        assert!(expired(&SPEC, 401, ""));
        assert!(expired(&SPEC, 400, "400 Bad Request: The CSRF session token is missing."));
        assert!(!expired(&SPEC, 400, "Invalid SQL"));
        assert!(!expired(&SPEC, 403, "Forbidden"));
    }
}
