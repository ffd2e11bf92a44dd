//! Apache Superset (self-hosted, per-user host): dashboards, charts and their data, datasets,
//! databases, CSV export and SQL Lab.
//!
//! The credential is a login, not a token: the engine logs in with the connection's username and
//! password (`POST /api/v1/security/login`), fetches a CSRF token and the `session` cookie
//! (`GET /api/v1/security/csrf_token/`), and attaches `Authorization: Bearer <access token>` to
//! every request plus `X-CSRFToken`, `Referer` and the cookie to writes ([`SESSION`]). This module
//! never sees any of it. Lists take a Rison `q` (`page`/`page_size`), which this module builds
//! from plain parameters and turns into an opaque `cursor`.

mod browse;
mod rison;
mod sqllab;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::api::*;

/// How the engine logs in to Superset and keeps the session.
pub static SESSION: SessionSpec = SessionSpec {
    login: &[
        LoginStep {
            request: || {
                HttpRequest::post("/api/v1/security/login").json(json!({
                    "username": "{{field:username}}",
                    "password": "{{field:password}}",
                    "provider": "{{field:provider|db}}",
                    "refresh": true,
                }))
            },
            capture: &[Capture::Json { pointer: "/access_token", name: "access_token" }],
        },
        LoginStep {
            request: || {
                HttpRequest::get("/api/v1/security/csrf_token/")
                    .header("authorization", "Bearer {{session:access_token}}")
            },
            capture: &[
                Capture::Json { pointer: "/result", name: "csrf_token" },
                Capture::Cookie { cookie: "session", name: "session_cookie" },
            ],
        },
    ],
    attach: &[
        Attach::Header { name: "authorization", value: "Bearer {{session:access_token}}", on: On::All },
        Attach::Header { name: "x-csrftoken", value: "{{session:csrf_token}}", on: On::Writes },
        Attach::Header { name: "referer", value: "{{host:base_url}}", on: On::Writes },
        Attach::Cookie { name: "session", value: "{{session:session_cookie}}", on: On::Writes },
    ],
    // Flask-WTF answers a stale or foreign CSRF token with 400 "The CSRF ... token ...".
    renew_on: &[(400, "CSRF")],
};

pub static INTEGRATION: Integration = Integration {
    name: "superset",
    display_name: "Apache Superset",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::Cookie,
        fields: &[
            Field {
                name: "base_url",
                label: "Superset URL",
                secret: false,
                required: true,
                help: "The address you open Superset at, e.g. https://superset.example.com",
            },
            Field {
                name: "username",
                label: "Username",
                secret: false,
                required: true,
                help: "Your Superset login (a database or LDAP user; SSO-only accounts cannot log in here)",
            },
            Field {
                name: "password",
                label: "Password",
                secret: true,
                required: true,
                help: "Used only to log in to your Superset; workbench keeps the session in memory",
            },
            Field {
                name: "provider",
                label: "Login provider",
                secret: false,
                required: false,
                help: "db (the default) or ldap, as your Superset's AUTH_TYPE says",
            },
        ],
        inject: Inject::Session(&SESSION),
        identity: Some(Identity {
            request: || HttpRequest::get("/api/v1/me/"),
            label: |b| {
                let u = &b["result"];
                let name = [u["first_name"].as_str(), u["last_name"].as_str()]
                    .into_iter()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                match u["username"].as_str() {
                    Some(login) if !name.is_empty() => Some(format!("{login} ({name})")),
                    Some(login) => Some(login.to_string()),
                    None => (!name.is_empty()).then_some(name),
                }
            },
        }),
        oauth: None,
    },
    // Single words here count as naming Superset in a search (the product-word rule in docs/writing-an-integration.md).
    keywords: &["dashboard", "chart", "SQL Lab", "BI", "analytics", "visualization", "dataset", "Preset"],
    hosts: &[Host { key: "base_url", default_url: "https://{base_url}" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::NONE,
    side: Some(flow_side),
    tools: &[
        browse::LIST_DASHBOARDS,
        browse::GET_DASHBOARD,
        browse::LIST_CHARTS,
        browse::GET_CHART_DATA,
        sqllab::EXPORT_CSV,
        browse::LIST_DATASETS,
        browse::LIST_DATABASES,
        sqllab::RUN_SQL,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the logged-in user (`GET /api/v1/me/`: `result.username`, `result.email`). SQL Lab runs stay in the user's Superset (inside: its readers are the user's organisation).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/api/v1/me/")).await?.json()?;
        crate::flow::side_from(&me, &["/result/email"], &["/result/username", "/result/id"])
    })
}

/// Most rows a list page holds (FAB's `page_size` cap).
const MAX_PAGE: u32 = 100;
/// Budget for SQL text echoed back (a chart's or query's SQL).
const SQL_BUDGET: usize = 2_000;

/// Superset's error shapes: `{message}` (a string, or field -> messages from validation),
/// `{errors: [{message, error_type}]}`, flask-jwt-extended's `{msg}`, and `{error}`.
fn error_message(body: &Value) -> Option<String> {
    match &body["message"] {
        Value::String(s) if !s.is_empty() => return Some(s.clone()),
        Value::Object(fields) if !fields.is_empty() => {
            let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {}", flatten(v))).collect();
            return Some(parts.join("; "));
        }
        _ => {}
    }
    let errors: Vec<String> = body["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str().or_else(|| e.as_str()).map(str::to_string))
        .collect();
    if !errors.is_empty() {
        return Some(errors.join("; "));
    }
    body["msg"].as_str().or_else(|| body["error"].as_str()).map(str::to_string)
}

fn flatten(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(flatten).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map.iter().map(|(k, v)| format!("{k}: {}", flatten(v))).collect::<Vec<_>>().join("; "),
        other => other.to_string(),
    }
}

/// The Superset address links are made absolute with (the connection's `base_url`).
fn base_url(up: &dyn Upstream) -> Option<String> {
    let base = up.field("base_url")?;
    let base = base.trim().trim_end_matches('/');
    if base.is_empty() {
        return None;
    }
    Some(if base.starts_with("http://") || base.starts_with("https://") {
        base.to_string()
    } else {
        format!("https://{base}")
    })
}

/// An absolute link from Superset's relative `url` (`/superset/dashboard/7/`).
fn link(base: Option<&str>, relative: &Value) -> Value {
    match (relative.as_str(), base) {
        (Some(r), _) if r.starts_with("http") => json!(r),
        (Some(r), Some(b)) if r.starts_with('/') => json!(format!("{b}{r}")),
        (Some(r), _) => json!(r),
        _ => Value::Null,
    }
}

/// `first last` of a FAB user object, or null.
fn person(user: &Value) -> Value {
    let name = [user["first_name"].as_str(), user["last_name"].as_str()]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if name.is_empty() { user["username"].clone() } else { json!(name) }
}

/// Names of an array of users, or null when there are none.
fn people(users: &Value) -> Value {
    match users.as_array() {
        Some(a) if !a.is_empty() => Value::Array(a.iter().map(person).collect()),
        _ => Value::Null,
    }
}

/// Text cut to a budget: the value and whether it was cut.
fn cut(text: Option<&str>, max: usize) -> (Value, bool) {
    match text {
        Some(t) => {
            let (t, cut) = truncate_chars(t, max);
            (Value::String(t), cut)
        }
        None => (Value::Null, false),
    }
}

/// The page and page size to ask for: from the cursor when continuing, else page 0 of `limit`.
fn paging(limit: u32, cursor: Option<&str>) -> Result<(u32, u32), ToolError> {
    let Some(c) = cursor else { return Ok((0, limit.clamp(1, MAX_PAGE))) };
    let parsed = c.split_once(':').and_then(|(p, n)| Some((p.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
    match parsed {
        Some((page, size)) if (1..=MAX_PAGE).contains(&size) => Ok((page, size)),
        _ => Err(invalid(
            "cursor",
            format!("cursor '{c}' is not one this tool issued"),
            "pass next_cursor from the previous call",
        )),
    }
}

/// The cursor of the next page, when `count` says there is one.
fn next_cursor(count: &Value, page: u32, size: u32) -> Option<String> {
    let count = count.as_u64()?;
    ((u64::from(page) + 1) * u64::from(size) < count).then(|| format!("{}:{size}", page + 1))
}

/// A FAB filter `(col:..,opr:..,value:..)`.
fn filter(col: &str, opr: &str, value: Value) -> Value {
    json!({"col": col, "opr": opr, "value": value})
}

/// The Rison `q` of a list request: filters, order, page.
fn list_q(filters: Vec<Value>, order: (&str, &str), page: u32, size: u32) -> String {
    let mut q = Map::new();
    if !filters.is_empty() {
        q.insert("filters".into(), Value::Array(filters));
    }
    q.insert("order_column".into(), json!(order.0));
    q.insert("order_direction".into(), json!(order.1));
    q.insert("page".into(), json!(page));
    q.insert("page_size".into(), json!(size));
    rison::encode(&Value::Object(q))
}

/// A search string, trimmed; `None` when blank.
fn search_term(s: &Option<String>) -> Option<String> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// Items per page when a tool's `limit` is left out.
const DEFAULT_LIMIT: u32 = 25;
/// Characters of text kept when a tool's text budget is left out.
const TEXT_BUDGET: usize = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_shapes() {
        assert_eq!(error_message(&json!({"message": "Not found"})).unwrap(), "Not found");
        assert_eq!(
            error_message(&json!({"message": {"database_id": ["Missing data for required field."]}})).unwrap(),
            "database_id: Missing data for required field."
        );
        assert_eq!(
            error_message(&json!({"errors": [{"message": "400 Bad Request: The CSRF token is missing.", "error_type": "GENERIC_BACKEND_ERROR"}]}))
                .unwrap(),
            "400 Bad Request: The CSRF token is missing."
        );
        assert_eq!(error_message(&json!({"msg": "Token has expired"})).unwrap(), "Token has expired");
        assert_eq!(error_message(&json!({"foo": 1})), None);
    }

    #[test]
    fn cursors_round_trip() {
        assert_eq!(paging(25, None).unwrap(), (0, 25));
        assert_eq!(paging(500, None).unwrap(), (0, 100));
        assert_eq!(paging(25, Some("2:10")).unwrap(), (2, 10));
        assert!(paging(25, Some("x")).is_err());
        assert!(paging(25, Some("1:0")).is_err());
        assert_eq!(next_cursor(&json!(30), 0, 25).as_deref(), Some("1:25"));
        assert_eq!(next_cursor(&json!(25), 0, 25), None);
        assert_eq!(next_cursor(&Value::Null, 0, 25), None);
    }

    #[test]
    fn list_queries_are_rison() {
        let q = list_q(
            vec![filter("dashboard_title", "ct", json!("sales report"))],
            ("changed_on_delta_humanized", "desc"),
            1,
            25,
        );
        assert_eq!(
            q,
            "(filters:!((col:dashboard_title,opr:ct,value:'sales report')),order_column:changed_on_delta_humanized,order_direction:desc,page:1,page_size:25)"
        );
    }

    #[test]
    fn links_become_absolute() {
        assert_eq!(
            link(Some("https://bi.example.com"), &json!("/superset/dashboard/7/")),
            json!("https://bi.example.com/superset/dashboard/7/")
        );
        assert_eq!(link(None, &json!("/x")), json!("/x"));
        assert_eq!(link(Some("https://b"), &Value::Null), Value::Null);
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new()
            .json(serde_json::json!({"result": {"username": "ann", "email": "ann@acme.example", "id": 3}}))
            .side(side);
        let s = s.unwrap();
        assert!(s.has_email("ann@acme.example") && s.has_id("ann") && s.has_id("3"));
        assert_eq!(reqs[0].path, "/api/v1/me/");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
