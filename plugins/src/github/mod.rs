//! GitHub REST API (github.com or GitHub Enterprise Server): repositories, files, branches, issues,
//! pull requests, reviews and Actions runs.
//!
//! Every request carries `Accept: application/vnd.github+json` and the pinned
//! `X-GitHub-Api-Version`; the engine adds `Authorization: Bearer <token>`. Lists page with GitHub's
//! `Link` header (`page`/`per_page`), which this module turns into an opaque `cursor`.

mod actions;
mod flow;
mod issues;
mod pulls;
mod repos;

use serde_json::Value;

use crate::api::*;

pub static INTEGRATION: Integration = Integration {
    name: "github",
    display_name: "GitHub",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field {
                name: "token",
                label: "Personal access token",
                secret: true,
                required: true,
                help: "github.com/settings/tokens — fine-grained (Contents, Issues, Pull requests, Actions: read and write; Metadata: read) or classic with repo and workflow",
            },
            Field {
                name: "base_url",
                label: "GitHub Enterprise API URL",
                secret: false,
                required: false,
                help: "Only for GitHub Enterprise Server, e.g. https://github.example.com/api/v3; leave empty for github.com",
            },
        ],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || gh(HttpRequest::get("/user"), ACCEPT_JSON),
            label: |b| b["login"].as_str().map(str::to_string),
        }),
        oauth: None,
    },
    // Single words here count as naming GitHub in a search; only words that imply it (the product-word rule in docs/writing-an-integration.md).
    keywords: &[
        "repo",
        "repository",
        "git",
        "pull request",
        "PR",
        "Actions",
        "workflow run",
        "code review",
        "open source",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://api.github.com" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_hour(5000),
    side: Some(flow::side),
    tools: &[
        repos::LIST_REPOS,
        repos::GET_REPO,
        repos::SEARCH_REPOS,
        repos::SEARCH_CODE,
        repos::GET_FILE,
        repos::UPDATE_FILE,
        repos::CREATE_BRANCH,
        issues::LIST_ISSUES,
        issues::SEARCH_ISSUES,
        issues::GET_ISSUE,
        issues::CREATE_ISSUE,
        issues::UPDATE_ISSUE,
        issues::CREATE_COMMENT,
        pulls::LIST_PRS,
        pulls::GET_PR,
        pulls::CREATE_PR,
        pulls::MERGE_PR,
        pulls::CREATE_PR_REVIEW,
        actions::LIST_WORKFLOW_RUNS,
        actions::RUN_WORKFLOW,
    ],
    error_message,
};

const ACCEPT_JSON: &str = "application/vnd.github+json";
const API_VERSION: &str = "2022-11-28";
/// Default budget for long text (bodies, files, diffs).
const TEXT_BUDGET: usize = 10_000;

/// GitHub's message plus the details of its `errors` array (validation failures).
fn error_message(body: &Value) -> Option<String> {
    let message = body.get("message").and_then(Value::as_str)?;
    let details: Vec<String> = body
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            Value::String(s) => Some(s.clone()),
            Value::Object(_) => e["message"].as_str().map(str::to_string).or_else(|| {
                let field = [e["resource"].as_str(), e["field"].as_str()].into_iter().flatten().collect::<Vec<_>>();
                e["code"].as_str().map(|code| format!("{} {code}", field.join(".")).trim().to_string())
            }),
            _ => None,
        })
        .collect();
    if details.is_empty() { Some(message.to_string()) } else { Some(format!("{message}: {}", details.join("; "))) }
}

/// Adds the headers GitHub wants on every request.
fn gh(req: HttpRequest, accept: &str) -> HttpRequest {
    req.header("accept", accept).header("x-github-api-version", API_VERSION)
}

/// Sends a JSON API request with GitHub's headers.
async fn send(up: &dyn Upstream, req: HttpRequest) -> Result<HttpResponse, ToolError> {
    send_accepting(up, req, ACCEPT_JSON).await
}

/// Sends with a specific media type (diffs, raw file bytes). GitHub answers an exhausted rate limit
/// with 403; that is a wait, not a credential problem, so it becomes a 429.
async fn send_accepting(up: &dyn Upstream, req: HttpRequest, accept: &str) -> Result<HttpResponse, ToolError> {
    match up.send(gh(req, accept)).await {
        Err(ToolError::Upstream { status: 403, message, retry_after })
            if message.to_ascii_lowercase().contains("rate limit") =>
        {
            Err(ToolError::Upstream { status: 429, message, retry_after })
        }
        // GitHub hides private resources from tokens that cannot see them behind a plain 404.
        Err(ToolError::Upstream { status: 404, message, retry_after }) if message == "Not Found" => {
            Err(ToolError::Upstream {
                status: 404,
                message: "Not Found (it does not exist, or this token cannot see it: GitHub answers 404 for private repositories outside the token's access)".into(),
                retry_after,
            })
        }
        other => other,
    }
}

/// `/repos/{owner}/{repo}` with both segments encoded.
fn repo_path(owner: &str, repo: &str) -> String {
    format!("/repos/{}/{}", encode_segment(owner), encode_segment(repo.trim_end_matches(".git")))
}

/// A slash-separated path (file path, branch name) with every segment encoded and the slashes kept.
fn encode_path(arg: &str, path: &str) -> Result<String, ToolError> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| *p == "." || *p == "..") {
        return Err(invalid(
            &format!("/{arg}"),
            format!("'{path}' may not contain '.' or '..' segments"),
            "use a plain repository path",
        ));
    }
    Ok(parts.iter().map(|p| encode_segment(p)).collect::<Vec<_>>().join("/"))
}

/// The cursor for the page GitHub's `Link: <…?page=3&per_page=30>; rel="next"` points at.
fn next_cursor(resp: &HttpResponse) -> Option<String> {
    let link = resp.header("link")?;
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        if !params.split(';').any(|p| p.trim() == "rel=\"next\"") {
            return None;
        }
        let url = url.trim().trim_start_matches('<').trim_end_matches('>');
        let query = url.split_once('?')?.1;
        let param = |name: &str| {
            query.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
        };
        let page = param("page")?;
        let per_page = param("per_page").unwrap_or_else(|| "30".into());
        Some(format!("{page}:{per_page}"))
    })
}

/// A user object's login.
fn login(user: &Value) -> Value {
    user.get("login").cloned().unwrap_or(Value::Null)
}

/// Logins of an array of users, or null when absent.
fn logins(users: &Value) -> Value {
    match users.as_array() {
        Some(a) => Value::Array(a.iter().map(login).collect()),
        None => Value::Null,
    }
}

/// Names of an array of labels (objects or strings).
fn label_names(labels: &Value) -> Value {
    match labels.as_array() {
        Some(a) => Value::Array(
            a.iter()
                .map(|l| l.get("name").cloned().unwrap_or_else(|| if l.is_string() { l.clone() } else { Value::Null }))
                .collect(),
        ),
        None => Value::Null,
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

/// `true` for a true boolean, else null (so `compact` drops false flags).
fn flag(v: &Value) -> Value {
    if v.as_bool() == Some(true) { Value::Bool(true) } else { Value::Null }
}

/// Checks an ISO 8601 date or timestamp (`2026-01-31` or `2026-01-31T12:00:00Z`); returns it as a
/// timestamp GitHub accepts.
fn iso_timestamp(arg: &str, value: &str) -> Result<String, ToolError> {
    let b = value.as_bytes();
    let date_ok = b.len() >= 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b[..10].iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !date_ok || (b.len() > 10 && b[10] != b'T') {
        return Err(invalid(
            arg,
            format!("'{value}' is not an ISO 8601 date"),
            "expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ",
        ));
    }
    Ok(if b.len() == 10 { format!("{value}T00:00:00Z") } else { value.to_string() })
}

/// An argument enum's API spelling (its serde name).
fn wire<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Items per page when a tool's `limit` is left out.
const DEFAULT_LIMIT: u32 = 30;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resp(link: &str) -> HttpResponse {
        HttpResponse { status: 200, headers: vec![("link".into(), link.into())], body: Vec::new() }
    }

    #[test]
    fn link_header_next_page_becomes_the_cursor() {
        let r = resp(
            "<https://api.github.com/user/repos?per_page=2&page=2>; rel=\"next\", <https://api.github.com/user/repos?per_page=2&page=9>; rel=\"last\"",
        );
        assert_eq!(next_cursor(&r).as_deref(), Some("2:2"));
        let last = resp(
            "<https://api.github.com/user/repos?per_page=2&page=1>; rel=\"prev\", <https://api.github.com/user/repos?per_page=2&page=1>; rel=\"first\"",
        );
        assert_eq!(next_cursor(&last), None);
        assert_eq!(paging(25, Some("2:2")).unwrap(), (2, 2));
        assert_eq!(paging(500, None).unwrap(), (1, 100));
        assert!(paging(25, Some("abc")).is_err());
        assert!(paging(25, Some("0:10")).is_err());
    }

    #[test]
    fn validation_errors_name_the_fields() {
        let body = json!({"message": "Validation Failed", "errors": [{"resource": "Issue", "code": "missing_field", "field": "title"}], "documentation_url": "x"});
        assert_eq!(error_message(&body).unwrap(), "Validation Failed: Issue.title missing_field");
        let body = json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "No commits between main and feature"}]});
        assert_eq!(error_message(&body).unwrap(), "Validation Failed: No commits between main and feature");
        assert_eq!(error_message(&json!({"message": "Not Found"})).unwrap(), "Not Found");
    }

    #[test]
    fn paths_keep_slashes_and_refuse_dot_segments() {
        assert_eq!(encode_path("path", "/src/my file.rs").unwrap(), "src/my%20file.rs");
        assert_eq!(encode_path("branch", "release/1.x").unwrap(), "release/1.x");
        assert!(encode_path("path", "src/../../etc").is_err());
        assert_eq!(repo_path("acme", "demo.git"), "/repos/acme/demo");
    }

    #[test]
    fn dates_become_timestamps() {
        assert_eq!(iso_timestamp("since", "2026-01-31").unwrap(), "2026-01-31T00:00:00Z");
        assert_eq!(iso_timestamp("since", "2026-01-31T08:00:00Z").unwrap(), "2026-01-31T08:00:00Z");
        assert!(iso_timestamp("since", "last week").is_err());
    }
}

#[cfg(test)]
mod tool_tests;
