//! Jira Cloud: issues (tickets), JQL search, comments, workflow transitions, projects, people and
//! sprints, through REST v3 (`/rest/api/3`) and Jira Software's agile API (`/rest/agile/1.0`).
//!
//! Auth is Basic `email:token` on the user's own site (`https://{site}`). Search uses
//! `/rest/api/3/search/jql` with `nextPageToken` (the old `/rest/api/3/search` is gone).
//! Descriptions and comments are ADF on the wire and Markdown at the tool boundary ([`adf`]).

pub mod adf;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::{atlassian, tool};

mod issues;
mod workspace;

use issues::*;
use workspace::*;

pub static INTEGRATION: Integration = Integration {
    name: "jira",
    display_name: "Jira Cloud",
    version: "1.0.0",
    auth: atlassian::auth(
        &[
            atlassian::site("Jira site", "Your Atlassian site's host name, e.g. acme.atlassian.net"),
            atlassian::EMAIL,
            atlassian::token(
                "id.atlassian.com/manage-profile/security/api-tokens — tokens expire after 1–365 days; create a new one when Jira starts refusing it",
            ),
        ],
        Identity { request: || HttpRequest::get("/rest/api/3/myself"), label: myself_label },
    ),
    keywords: &[
        "jira",
        "atlassian",
        "ticket",
        "jql",
        "sprint",
        "story points",
        "epic",
        "backlog",
        "scrum",
        "kanban",
        "bug",
        "story",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://{site}" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(10),
    side: Some(side),
    tools: &[
        SEARCH_ISSUES,
        GET_ISSUE,
        CREATE_ISSUE,
        UPDATE_ISSUE,
        LIST_TRANSITIONS,
        TRANSITION_ISSUE,
        LIST_COMMENTS,
        CREATE_COMMENT,
        LIST_PROJECTS,
        SEARCH_USERS,
        LIST_SPRINTS,
    ],
    error_message,
};

/// The user's side: `myself` (`emailAddress`, hidden by some privacy settings, and `accountId`).
/// Everything written on the connected site is inside (flows.md section 3).
fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/rest/api/3/myself")).await?.json()?;
        crate::flow::side_from(&me, &["/emailAddress"], &["/accountId"])
    })
}

fn myself_label(body: &Value) -> Option<String> {
    body["emailAddress"].as_str().or(body["displayName"].as_str()).filter(|s| !s.is_empty()).map(str::to_string)
}

/// Jira's `{errorMessages: [...], errors: {field: message}}` (plus the odd `{message}`).
fn error_message(body: &Value) -> Option<String> {
    let mut parts: Vec<String> =
        body["errorMessages"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect();
    if let Some(errors) = body["errors"].as_object() {
        for (field, msg) in errors {
            if let Some(m) = msg.as_str() {
                parts.push(format!("{field}: {m}"));
            }
        }
    }
    if parts.is_empty()
        && let Some(m) = body["message"].as_str().or(body["errorMessage"].as_str())
    {
        parts.push(m.to_string());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

const BODY_CHARS: usize = 10_000;
const COMMENT_CHARS: usize = 4_000;
const SEARCH_FIELDS: &[&str] = &["summary", "status", "assignee", "priority", "issuetype", "updated"];
const ISSUE_FIELDS: &[&str] = &[
    "summary",
    "description",
    "status",
    "assignee",
    "reporter",
    "priority",
    "issuetype",
    "project",
    "labels",
    "components",
    "created",
    "updated",
    "duedate",
    "resolution",
    "parent",
    "subtasks",
    "issuelinks",
];
/// JQL longer than this goes in a POST body instead of the query string.
const LONG_JQL: usize = 1_500;

fn issue_path(key: &str) -> String {
    format!("/rest/api/3/issue/{}", encode_segment(key.trim()))
}

/// The site root (`https://acme.atlassian.net`) from a `self` link, or from the connection.
fn site_root(self_link: &Value, up: &dyn Upstream) -> Option<String> {
    if let Some(s) = self_link.as_str()
        && let Some(at) = s.find("/rest/")
    {
        return Some(s[..at].to_string());
    }
    up.field("site").map(|s| {
        let host = s.trim().trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/');
        format!("https://{host}")
    })
}

fn browse_url(root: &Option<String>, key: &Value) -> Value {
    match (root, key.as_str()) {
        (Some(r), Some(k)) => json!(format!("{r}/browse/{k}")),
        _ => Value::Null,
    }
}

fn person(v: &Value) -> Value {
    if !v.is_object() {
        return Value::Null;
    }
    compact(json!({ "name": v["displayName"], "account_id": v["accountId"] }))
}

/// A custom or extra field's value as something short an agent can read.
fn simple_field(v: &Value) -> Value {
    match v {
        Value::Object(_) if adf::is_doc(v) => json!(truncate_chars(&adf::to_markdown(v), 2_000).0),
        Value::Object(o) => ["displayName", "name", "value", "key"]
            .iter()
            .find_map(|k| o.get(*k).filter(|x| !x.is_null()).cloned())
            .unwrap_or_else(|| v.clone()),
        Value::Array(a) => Value::Array(a.iter().map(simple_field).collect()),
        other => other.clone(),
    }
}

fn offset_cursor(cursor: &Option<String>) -> Result<u64, ToolError> {
    match cursor {
        None => Ok(0),
        Some(c) => c.parse().map_err(|_| {
            invalid(
                "/cursor",
                format!("cursor '{c}' is not one this tool issued"),
                "pass next_cursor from the previous call",
            )
        }),
    }
}

/// The fields every issue summary shows.
fn shape_issue_summary(issue: &Value, root: &Option<String>, extra: &[String]) -> Value {
    let f = &issue["fields"];
    let mut out = compact(json!({
        "key": issue["key"],
        "id": issue["id"],
        "summary": f["summary"],
        "type": f["issuetype"]["name"],
        "status": f["status"]["name"],
        "status_category": f["status"]["statusCategory"]["name"],
        "priority": f["priority"]["name"],
        "assignee": f["assignee"]["displayName"],
        "updated": f["updated"],
        "url": browse_url(root, &issue["key"]),
    }));
    if !extra.is_empty() {
        let mut fields = Map::new();
        for name in extra {
            if let Some(v) = f.get(name).filter(|v| !v.is_null()) {
                fields.insert(name.clone(), simple_field(v));
            }
        }
        if !fields.is_empty() {
            out["fields"] = Value::Object(fields);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_read_like_jira() {
        let body =
            json!({"errorMessages": ["Issue does not exist or you do not have permission to see it."], "errors": {}});
        assert_eq!(error_message(&body).unwrap(), "Issue does not exist or you do not have permission to see it.");
        let body = json!({"errorMessages": [], "errors": {"summary": "You must specify a summary of the issue."}});
        assert_eq!(error_message(&body).unwrap(), "summary: You must specify a summary of the issue.");
        assert_eq!(error_message(&json!({"foo": 1})), None);
    }

    #[test]
    fn custom_fields_read_simply() {
        assert_eq!(simple_field(&json!({"self": "x", "value": "Blue", "id": "1"})), json!("Blue"));
        assert_eq!(simple_field(&json!([{"name": "v1"}, {"name": "v2"}])), json!(["v1", "v2"]));
        assert_eq!(simple_field(&json!(5.0)), json!(5.0));
        let doc = json!({"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [{"type": "text", "text": "hi"}]}]});
        assert_eq!(simple_field(&doc), json!("hi"));
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::flow::{Results, Verdict};
    use crate::mock::MockUpstream;

    #[test]
    fn every_tool_is_labelled_and_writes_stay_on_the_site() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
            if t.effect.mutating() {
                let v = MockUpstream::new().verdict(t, json!({}), &crate::flow::Side::default());
                assert_eq!(v, Verdict::Inside, "{}", t.name);
            }
        }
    }

    #[test]
    fn side_is_myself() {
        let side = INTEGRATION.side.unwrap();
        let (s, reqs) =
            MockUpstream::new().json(json!({"accountId": "5b10a", "emailAddress": "ann@acme.example"})).side(side);
        let s = s.unwrap();
        assert_eq!(
            (s.emails.as_slice(), s.ids.as_slice()),
            (&["ann@acme.example".to_string()][..], &["5b10a".to_string()][..])
        );
        assert_eq!(reqs[0].path, "/rest/api/3/myself");
        // An address hidden by the profile's privacy settings: the account id alone.
        assert_eq!(MockUpstream::new().json(json!({"accountId": "5b10a"})).side(side).0.unwrap().ids, ["5b10a"]);
        assert!(MockUpstream::new().json(json!({"displayName": "Ann"})).side(side).0.is_err());
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
