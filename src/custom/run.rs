//! Running an operation: its vault refs resolved for its own origin (`prepare`), its request filled
//! from the arguments (`plan`), and the request sent and its answer shaped (`send`).

use super::*;

/// The app's auth and headers with vault refs resolved (for its own host only).
pub struct Prepared {
    pub headers: Vec<(String, Secret<String>)>,
    pub query: Vec<(String, Secret<String>)>,
    pub basic: Option<(String, Secret<String>)>,
    /// Every resolved secret value, for the call's scrubber.
    pub secrets: Vec<String>,
}

/// Resolves the app's vault refs; refused unless each secret allows the app's origin.
pub async fn prepare(app: &Arc<App>, op: &Operation) -> Result<Prepared, ToolFailure> {
    let values = app.vault.resolve(&vault_refs(&op.app.def), std::slice::from_ref(&op.app.origin)).await?;
    let lookup = |name: &str| values.lookup(name);
    let scope = template::Scope {
        steps: None,
        vault: Some(&lookup),
        no_steps_reason: "",
        no_vault_reason: "",
        resolving: "the custom app's request",
        max_bytes: template::MAX_RESOLVED_BYTES,
    };
    let fill = |s: &str| -> Result<String, ToolFailure> {
        match template::resolve(&Value::String(s.to_string()), &scope)?.value {
            Value::String(v) => Ok(v),
            other => Ok(other.to_string()),
        }
    };
    let mut headers = Vec::new();
    let mut query = Vec::new();
    let mut basic = None;
    for (k, v) in &op.app.def.headers {
        headers.push((k.clone(), Secret::new(fill(v)?)));
    }
    if let Some(auth) = &op.app.def.auth {
        let get = |v: &Option<String>| fill(v.as_deref().unwrap_or_default());
        match auth.kind {
            AuthScheme::None => {}
            AuthScheme::Bearer => {
                headers.push(("authorization".into(), Secret::new(format!("Bearer {}", get(&auth.token)?))))
            }
            AuthScheme::Header => headers.push((auth.name.clone().unwrap_or_default(), Secret::new(get(&auth.value)?))),
            AuthScheme::Query => query.push((auth.name.clone().unwrap_or_default(), Secret::new(get(&auth.value)?))),
            AuthScheme::Basic => basic = Some((get(&auth.username)?, Secret::new(get(&auth.password)?))),
        }
    }
    let secrets = values.values().map(str::to_string).collect();
    Ok(Prepared { headers, query, basic, secrets })
}

/// The request an operation sends for some arguments, before credentials are attached: what the
/// approval question shows the user and what [`send`] sends.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub method: reqwest::Method,
    /// The full URL without the query string.
    pub url: String,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Planned {
    /// "DELETE https://api.acme.com/v2/items/42?force=true" and the JSON body, for a person.
    pub fn describe(&self) -> String {
        let mut line = format!("{} {}", self.method, self.url);
        if !self.query.is_empty()
            && let Ok(q) = reqwest::Url::parse_with_params("http://x/", &self.query)
            && let Some(q) = q.query()
        {
            line.push('?');
            line.push_str(q);
        }
        if let Some(body) = &self.body {
            line.push_str(&format!("\nBody: {}", plugins::api::truncate_chars(&body.to_string(), 600).0));
        }
        line
    }
}

/// Fills an operation's path, query and body from (validated) arguments.
pub fn plan(op: &Operation, args: &Map<String, Value>) -> Result<Planned, ToolError> {
    let mut path = op.path.clone();
    for p in &op.path_params {
        let value = match args.get(p) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => {
                return Err(ToolError::invalid(format!("{p} is required (it is part of the path)")));
            }
            Some(other) => other.to_string(),
        };
        if value.is_empty() {
            return Err(ToolError::invalid(format!("{p} cannot be empty (it is part of the path)")));
        }
        path = path.replace(&format!("{{{p}}}"), &plugins::api::encode_segment(&value));
    }
    let rest: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| !op.path_params.contains(k) && !op.body_params.contains(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let has_body_method = matches!(op.method, reqwest::Method::POST | reqwest::Method::PUT | reqwest::Method::PATCH);
    let (body, query_args) = match (&op.body, has_body_method) {
        (Some(template), _) => (Some(fill_body(template, args)), rest),
        (None, true) => (Some(Value::Object(rest)), Map::new()),
        (None, false) => (None, rest),
    };
    let query = query_args
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s,
                Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().map(str::to_string).unwrap_or(x.to_string()))
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            (k, v)
        })
        .collect();
    Ok(Planned { method: op.method.clone(), url: format!("{}{}", op.app.base_url, path), query, body })
}

/// Sends one operation's request and shapes the answer.
pub async fn send(
    app: Arc<App>,
    op: Arc<Operation>,
    prepared: Prepared,
    args: Value,
    deadline: Instant,
) -> Result<Value, ToolError> {
    let args = match args {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    let Planned { url, query, body, .. } = plan(&op, &args)?;
    let url =
        reqwest::Url::parse(&url).map_err(|e| ToolError::invalid(format!("the request URL is not valid: {e}")))?;
    // Parameters fill path segments (encoded); the request never leaves the app's origin.
    if crate::net::Origin::of(&url).map(|o| o.to_string()).as_deref() != Some(op.app.origin.as_str()) {
        return Err(ToolError::invalid(format!("the request would leave {}; it is not sent", op.app.origin)));
    }
    let mut secret_headers = prepared.headers;
    if let Some((user, pass)) = &prepared.basic {
        let encoded = plugins::codec::base64_encode(format!("{user}:{}", pass.expose()).as_bytes());
        secret_headers.push(("authorization".into(), Secret::new(format!("Basic {encoded}"))));
    }
    let out = crate::send::Outgoing {
        method: op.method.clone(),
        url,
        // The definition is the agent's: only the user's private_hosts widen the guard.
        user_origin: false,
        query,
        secret_query: prepared.query,
        headers: vec![("accept".into(), "application/json".into())],
        secret_headers,
        body: match body {
            Some(b) => plugins::api::Body::Json(b),
            None => plugins::api::Body::None,
        },
    };
    let key = format!("custom:{}", op.app.def.name);
    let budget = crate::send::Budget {
        key: &key,
        display: &op.app.def.name,
        limit: crate::send::configured_rate_limit(&app, &op.app.def.name, CUSTOM_RATE_LIMIT)?,
    };
    let reply = crate::send::deliver(&app, &budget, deadline, &out).await?;
    let status = reply.status;
    let retry_after = reply.header("retry-after").and_then(crate::send::retry_after_secs);
    let bytes = reply.body;
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    if !(200..300).contains(&status) {
        let message = parsed
            .as_ref()
            .and_then(|j| {
                ["message", "error_description", "error", "detail", "title"].iter().find_map(|k| {
                    j.get(*k).and_then(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .or_else(|| v.get("message").and_then(Value::as_str).map(str::to_string))
                    })
                })
            })
            .unwrap_or_else(|| {
                let text = String::from_utf8_lossy(&bytes);
                let text = text.trim();
                if text.is_empty() || text.starts_with('<') {
                    format!("HTTP {status}")
                } else {
                    plugins::api::truncate_chars(text, 300).0
                }
            });
        return Err(ToolError::Upstream { status, message, retry_after });
    }
    Ok(match parsed {
        Some(v) => v,
        None if bytes.is_empty() => json!({ "ok": true, "status": status }),
        None => {
            let text = String::from_utf8_lossy(&bytes);
            json!({ "status": status, "text": plugins::api::truncate_chars(&text, 50_000).0 })
        }
    })
}
