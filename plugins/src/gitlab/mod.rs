//! GitLab REST API v4 (gitlab.com or a self-managed instance): projects, files, merge requests,
//! issues, notes and CI/CD pipelines.
//!
//! The engine attaches `PRIVATE-TOKEN: <token>`. Projects are named by numeric id or by path
//! (`group/subgroup/project`, sent URL-encoded as one segment). Lists page with GitLab's
//! `X-Next-Page` header, turned into an opaque `cursor`.

mod flow;
mod issues;
mod mrs;
mod projects;

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::api::*;

pub static INTEGRATION: Integration = Integration {
    name: "gitlab",
    display_name: "GitLab",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field {
                name: "token",
                label: "Personal access token",
                secret: true,
                required: true,
                help: "GitLab > Preferences > Access tokens (gitlab.com/-/user_settings/personal_access_tokens), scope api (read_api for read-only)",
            },
            Field {
                name: "base_url",
                label: "Self-managed GitLab API URL",
                secret: false,
                required: false,
                help: "Only for a self-managed instance, including /api/v4, e.g. https://gitlab.example.com/api/v4; leave empty for gitlab.com",
            },
        ],
        inject: Inject::Header { name: "PRIVATE-TOKEN", prefix: "", field: "token" },
        identity: Some(Identity {
            request: || HttpRequest::get("/user"),
            label: |b| b["username"].as_str().map(str::to_string),
        }),
        oauth: None,
    },
    // Single words here count as naming GitLab in a search; only words that imply it (the product-word rule in docs/writing-an-integration.md).
    keywords: &["repo", "repository", "git", "MR", "merge request", "pipeline", "self-managed GitLab"],
    hosts: &[Host { key: "base_url", default_url: "https://gitlab.com/api/v4" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(300),
    side: Some(flow::side),
    tools: &[
        projects::LIST_PROJECTS,
        projects::GET_FILE,
        mrs::LIST_MRS,
        mrs::GET_MR,
        mrs::CREATE_MR,
        mrs::MERGE_MR,
        issues::CREATE_COMMENT,
        issues::LIST_ISSUES,
        issues::CREATE_ISSUE,
        issues::UPDATE_ISSUE,
        projects::LIST_PIPELINES,
        projects::RUN_PIPELINE,
    ],
    error_message,
};

/// Default budget for long text (descriptions, files, diffs).
const TEXT_BUDGET: usize = 10_000;

/// GitLab's `message` (a string, a list, or field -> messages), or `error` / `error_description`.
fn error_message(body: &Value) -> Option<String> {
    match body.get("message") {
        Some(Value::String(s)) => return Some(s.clone()),
        Some(Value::Array(a)) => {
            let parts: Vec<String> = a.iter().filter_map(Value::as_str).map(str::to_string).collect();
            if !parts.is_empty() {
                return Some(parts.join("; "));
            }
        }
        Some(Value::Object(fields)) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(field, msgs)| {
                    let msgs = match msgs {
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if field == "base" { msgs } else { format!("{field} {msgs}") }
                })
                .collect();
            if !parts.is_empty() {
                return Some(parts.join("; "));
            }
        }
        _ => {}
    }
    let error = body.get("error").and_then(Value::as_str)?;
    match body.get("error_description").and_then(Value::as_str) {
        Some(d) => Some(format!("{error}: {d}")),
        None => Some(error.to_string()),
    }
}

/// A project named by numeric id or by path (`group/subgroup/project`, or its web URL).
#[derive(Debug, Clone)]
pub(crate) struct ProjectId(pub String);

impl<'de> Deserialize<'de> for ProjectId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if !s.trim().is_empty() => Ok(ProjectId(s.trim().to_string())),
            Value::Number(n) if n.is_u64() => Ok(ProjectId(n.to_string())),
            other => Err(serde::de::Error::custom(format!(
                "expected a project path like \"group/project\" or a numeric id, got {other}"
            ))),
        }
    }
}

impl JsonSchema for ProjectId {
    fn schema_name() -> Cow<'static, str> {
        "ProjectId".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["string", "integer"], "minLength": 1})
    }
}

impl ProjectId {
    /// The project's path (or id) as GitLab's `:id`: numeric ids as they are, paths URL-encoded as
    /// one segment (`group%2Fproject`). Web URLs and `.git` suffixes are reduced to the path.
    fn encoded(&self) -> String {
        let mut p = self.0.as_str();
        if let Some(rest) = p.strip_prefix("https://").or_else(|| p.strip_prefix("http://")) {
            p = rest.split_once('/').map(|(_, path)| path).unwrap_or("");
        }
        let p = p.split("/-/").next().unwrap_or(p).trim_matches('/');
        let p = p.strip_suffix(".git").unwrap_or(p);
        encode_segment(p)
    }

    fn path(&self) -> String {
        format!("/projects/{}", self.encoded())
    }
}

/// GitLab's `X-Next-Page` (empty on the last page) as the next cursor.
fn next_cursor(resp: &HttpResponse, per_page: u32) -> Option<String> {
    let next = resp.header("x-next-page")?.trim();
    let page: u32 = next.parse().ok()?;
    let per_page = resp.header("x-per-page").and_then(|p| p.trim().parse().ok()).unwrap_or(per_page);
    Some(format!("{page}:{per_page}"))
}

fn username(user: &Value) -> Value {
    user.get("username").cloned().unwrap_or(Value::Null)
}

/// Usernames of a user array; null when absent or empty.
fn usernames(users: &Value) -> Value {
    match users.as_array() {
        Some(a) if !a.is_empty() => Value::Array(a.iter().map(username).collect()),
        _ => Value::Null,
    }
}

fn non_empty(v: &Value) -> Value {
    match v {
        Value::Array(a) if a.is_empty() => Value::Null,
        other => other.clone(),
    }
}

/// `true` for a true boolean, else null (so `compact` drops false flags).
fn flag(v: &Value) -> Value {
    if v.as_bool() == Some(true) { Value::Bool(true) } else { Value::Null }
}

fn cut(text: Option<&str>, max: usize) -> (Value, bool) {
    match text {
        Some(t) => {
            let (t, cut) = truncate_chars(t, max);
            (Value::String(t), cut)
        }
        None => (Value::Null, false),
    }
}

/// An argument enum's API spelling (its serde name).
fn wire<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Items per page when a tool's `limit` is left out.
const DEFAULT_LIMIT: u32 = 20;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn project_paths_encode_as_one_segment() {
        assert_eq!(ProjectId("group/sub/project".into()).path(), "/projects/group%2Fsub%2Fproject");
        assert_eq!(ProjectId("278964".into()).path(), "/projects/278964");
        assert_eq!(ProjectId("https://gitlab.com/acme/api/-/merge_requests/3".into()).path(), "/projects/acme%2Fapi");
        assert_eq!(ProjectId("acme/api.git".into()).path(), "/projects/acme%2Fapi");
    }

    #[test]
    fn error_shapes() {
        assert_eq!(error_message(&json!({"message": "404 Project Not Found"})).unwrap(), "404 Project Not Found");
        assert_eq!(
            error_message(&json!({"message": {"title": ["can't be blank"], "base": ["Reference not found"]}})).unwrap(),
            "title can't be blank; Reference not found"
        );
        assert_eq!(
            error_message(&json!({"message": ["Another open merge request already exists"]})).unwrap(),
            "Another open merge request already exists"
        );
        assert_eq!(
            error_message(&json!({"error": "invalid_token", "error_description": "Token was revoked"})).unwrap(),
            "invalid_token: Token was revoked"
        );
        assert_eq!(error_message(&json!({"error": "title is missing"})).unwrap(), "title is missing");
    }

    #[test]
    fn next_page_header_becomes_the_cursor() {
        let resp = |next: &str| HttpResponse {
            status: 200,
            headers: vec![("x-next-page".into(), next.into()), ("x-per-page".into(), "2".into())],
            body: Vec::new(),
        };
        assert_eq!(next_cursor(&resp("3"), 20).as_deref(), Some("3:2"));
        assert_eq!(next_cursor(&resp(""), 20), None);
        assert_eq!(paging(20, Some("3:2")).unwrap(), (3, 2));
        assert!(paging(20, Some("x")).is_err());
    }
}

#[cfg(test)]
mod tool_tests;
