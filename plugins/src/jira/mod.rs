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

// ---------------------------------------------------------------- search

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchIssues {
    /// JQL query, e.g. `project = ENG AND status != Done AND assignee = currentUser() ORDER BY updated DESC` or `text ~ "login error"`. Unbounded queries are rejected by Jira: include a restriction such as a project.
    #[schemars(length(min = 1))]
    jql: String,
    /// Extra fields to return per issue besides key, summary, type, status, priority, assignee and updated, e.g. ["labels","duedate","customfield_10016"].
    fields: Option<Vec<String>>,
    /// Issues per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page of the same JQL.
    cursor: Option<String>,
    /// Also return Jira's full response as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_ISSUES: ToolSpec = tool! {
    name: "jira_search_issues",
    effect: Read,
    results: Private,
    args: SearchIssues,
    run: search_issues,
    keywords: ["jql", "find tickets", "query", "filter", "my issues", "open bugs", "backlog", "assigned to me", "stories", "list tickets", "open tickets", "search jira"],
    description: "Search Jira issues (tickets, bugs, stories, tasks, epics) with JQL, e.g. `project = ENG AND status != Done AND assignee = currentUser()`; returns key, summary, status, assignee, priority and type, page by page.",
};

async fn search_issues(up: Arc<dyn Upstream>, args: SearchIssues) -> Result<Value, ToolError> {
    let extra: Vec<String> = args.fields.clone().unwrap_or_default();
    let mut fields: Vec<String> = SEARCH_FIELDS.iter().map(|s| s.to_string()).collect();
    fields.extend(extra.iter().filter(|f| !SEARCH_FIELDS.contains(&f.as_str())).cloned());
    let limit = args.limit.clamp(1, 100);
    let req = if args.jql.len() > LONG_JQL {
        let mut body = json!({ "jql": args.jql, "maxResults": limit, "fields": fields });
        if let Some(c) = &args.cursor {
            body["nextPageToken"] = json!(c);
        }
        HttpRequest::post("/rest/api/3/search/jql").json(body)
    } else {
        HttpRequest::get("/rest/api/3/search/jql")
            .query("jql", &args.jql)
            .query("maxResults", limit)
            .query("fields", fields.join(","))
            .query_opt("nextPageToken", args.cursor.as_deref())
    };
    let body = up.send(req).await?.json()?;
    let issues = body["issues"].as_array().cloned().unwrap_or_default();
    let root = issues.first().and_then(|i| site_root(&i["self"], &*up)).or_else(|| site_root(&Value::Null, &*up));
    let shaped: Vec<Value> = issues.iter().map(|i| shape_issue_summary(i, &root, &extra)).collect();
    let last = body["isLast"].as_bool().unwrap_or(true) || body["nextPageToken"].as_str().is_none();
    let out = compact(json!({
        "issues": shaped,
        "next_cursor": if last { Value::Null } else { body["nextPageToken"].clone() },
    }));
    Ok(with_raw(out, args.include_raw, &body))
}

// ---------------------------------------------------------------- get issue

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetIssue {
    /// The issue key, e.g. PROJ-123 (the numeric issue id works too).
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Extra fields to include besides the standard ones, e.g. ["customfield_10016","fixVersions","environment"].
    fields: Option<Vec<String>>,
    /// Also return the most recent comments (up to 20; use jira_list_comments for more).
    #[serde(default)]
    include_comments: bool,
    /// Also return the workflow transitions available now (as jira_list_transitions does).
    #[serde(default)]
    include_transitions: bool,
    /// Character budget for the description (Markdown); longer text is cut and `truncated` is set.
    #[serde_inline_default(BODY_CHARS)]
    #[schemars(range(min = 50, max = 100000))]
    max_chars: usize,
    /// Also return Jira's full response as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_ISSUE: ToolSpec = tool! {
    name: "jira_get_issue",
    effect: Read,
    results: Private,
    args: GetIssue,
    run: get_issue,
    keywords: ["ticket", "bug", "story", "details", "description", "read issue", "PROJ-123", "show ticket", "issue details"],
    description: "Get one Jira issue (ticket/bug/story) by key such as PROJ-123: summary, status, assignee, reporter, priority, labels, parent/epic, sub-tasks, links and the description as Markdown; optionally comments and available transitions.",
};

async fn get_issue(up: Arc<dyn Upstream>, args: GetIssue) -> Result<Value, ToolError> {
    let extra = args.fields.clone().unwrap_or_default();
    let mut fields: Vec<String> = ISSUE_FIELDS.iter().map(|s| s.to_string()).collect();
    if args.include_comments {
        fields.push("comment".into());
    }
    fields.extend(extra.iter().filter(|f| !fields.contains(f)).cloned().collect::<Vec<_>>());
    let req = HttpRequest::get(issue_path(&args.issue_key))
        .query("fields", fields.join(","))
        .query_opt("expand", args.include_transitions.then_some("transitions"));
    let issue = up.send(req).await?.json()?;
    let root = site_root(&issue["self"], &*up);
    let f = &issue["fields"];
    let (description, cut) = truncate_chars(&adf::to_markdown(&f["description"]), args.max_chars);
    let subtasks: Vec<Value> = f["subtasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            compact(
                json!({"key": s["key"], "summary": s["fields"]["summary"], "status": s["fields"]["status"]["name"]}),
            )
        })
        .collect();
    let links: Vec<Value> = f["issuelinks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let (relation, other) = if l["outwardIssue"].is_object() {
                (&l["type"]["outward"], &l["outwardIssue"])
            } else {
                (&l["type"]["inward"], &l["inwardIssue"])
            };
            compact(json!({
                "relation": relation,
                "key": other["key"],
                "summary": other["fields"]["summary"],
                "status": other["fields"]["status"]["name"],
            }))
        })
        .collect();
    let names = |v: &Value| -> Value {
        let list: Vec<Value> = v.as_array().into_iter().flatten().map(|c| c["name"].clone()).collect();
        if list.is_empty() { Value::Null } else { Value::Array(list) }
    };
    let mut out = compact(json!({
        "key": issue["key"],
        "id": issue["id"],
        "url": browse_url(&root, &issue["key"]),
        "summary": f["summary"],
        "type": f["issuetype"]["name"],
        "status": f["status"]["name"],
        "status_category": f["status"]["statusCategory"]["name"],
        "resolution": f["resolution"]["name"],
        "priority": f["priority"]["name"],
        "assignee": person(&f["assignee"]),
        "reporter": person(&f["reporter"]),
        "project": f["project"]["key"],
        "parent": if f["parent"].is_object() {
            compact(json!({"key": f["parent"]["key"], "summary": f["parent"]["fields"]["summary"]}))
        } else { Value::Null },
        "labels": f["labels"].as_array().filter(|a| !a.is_empty()).map(|_| f["labels"].clone()),
        "components": names(&f["components"]),
        "created": f["created"],
        "updated": f["updated"],
        "due_date": f["duedate"],
        "description": (!description.is_empty()).then_some(description),
        "truncated": cut.then_some(true),
        "subtasks": (!subtasks.is_empty()).then_some(subtasks),
        "links": (!links.is_empty()).then_some(links),
    }));
    if args.include_comments {
        let comments = &f["comment"]["comments"];
        let all = comments.as_array().cloned().unwrap_or_default();
        let recent: Vec<Value> =
            all.iter().skip(all.len().saturating_sub(20)).map(|c| shape_comment(c, &root, &issue["key"])).collect();
        out["comments"] = Value::Array(recent);
        out["comment_count"] = f["comment"]["total"].clone();
    }
    if args.include_transitions {
        out["transitions"] =
            Value::Array(issue["transitions"].as_array().into_iter().flatten().map(shape_transition).collect());
    }
    let mut extras = Map::new();
    for name in &extra {
        if let Some(v) = f.get(name).filter(|v| !v.is_null()) {
            extras.insert(name.clone(), simple_field(v));
        }
    }
    if !extras.is_empty() {
        out["fields"] = Value::Object(extras);
    }
    Ok(with_raw(out, args.include_raw, &issue))
}

// ---------------------------------------------------------------- create / update

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIssue {
    /// Key of the project to create the issue in, e.g. ENG (see jira_list_projects).
    #[schemars(length(min = 1))]
    project_key: String,
    /// One-line title (summary) of the issue.
    #[schemars(length(min = 1, max = 255))]
    summary: String,
    /// Issue type name as the project defines it, e.g. Task, Bug, Story, Epic or Sub-task.
    #[schemars(length(min = 1))]
    issue_type: String,
    /// Description in Markdown (headings, lists, code blocks, links, tables); converted to Jira's rich text.
    description: Option<String>,
    /// accountId of the assignee (from jira_search_users).
    assignee_account_id: Option<String>,
    /// Priority name, e.g. Highest, High, Medium, Low, Lowest.
    priority: Option<String>,
    /// Labels to set (no spaces inside a label).
    labels: Option<Vec<String>>,
    /// Key of the parent issue: the epic for a story/task, or the parent task for a sub-task.
    parent_key: Option<String>,
    /// Due date, YYYY-MM-DD.
    due_date: Option<String>,
    /// Component names to set.
    components: Option<Vec<String>>,
    /// Other fields by id, passed through as Jira expects them, e.g. {"customfield_10016": 5} for story points.
    fields: Option<Map<String, Value>>,
}

pub(crate) const CREATE_ISSUE: ToolSpec = tool! {
    name: "jira_create_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateIssue,
    run: create_issue,
    keywords: ["new ticket", "file a bug", "open issue", "create story", "task", "sub-task", "epic", "report"],
    description: "Create a Jira issue: a ticket, bug, story, task, epic or sub-task in a project, with a Markdown description, assignee, priority, labels, components, due date and parent (epic or parent task).",
};

async fn create_issue(up: Arc<dyn Upstream>, args: CreateIssue) -> Result<Value, ToolError> {
    if let Some(d) = &args.due_date {
        check_date("/due_date", d)?;
    }
    let mut fields = args.fields.clone().unwrap_or_default();
    fields.insert("project".into(), json!({ "key": args.project_key.trim() }));
    fields.insert("summary".into(), json!(args.summary));
    fields.insert("issuetype".into(), json!({ "name": args.issue_type }));
    if let Some(d) = &args.description {
        fields.insert("description".into(), adf::from_markdown(d));
    }
    if let Some(a) = &args.assignee_account_id {
        fields.insert("assignee".into(), json!({ "accountId": a }));
    }
    if let Some(p) = &args.priority {
        fields.insert("priority".into(), json!({ "name": p }));
    }
    if let Some(l) = &args.labels {
        fields.insert("labels".into(), json!(l));
    }
    if let Some(p) = &args.parent_key {
        fields.insert("parent".into(), json!({ "key": p }));
    }
    if let Some(d) = &args.due_date {
        fields.insert("duedate".into(), json!(d));
    }
    if let Some(c) = &args.components {
        fields.insert("components".into(), Value::Array(c.iter().map(|n| json!({ "name": n })).collect()));
    }
    let created = up.send(HttpRequest::post("/rest/api/3/issue").json(json!({ "fields": fields }))).await?.json()?;
    let root = site_root(&created["self"], &*up);
    Ok(compact(json!({
        "key": created["key"],
        "id": created["id"],
        "url": browse_url(&root, &created["key"]),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateIssue {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// New one-line title (summary).
    summary: Option<String>,
    /// New description in Markdown; replaces the whole description.
    description: Option<String>,
    /// accountId to assign the issue to (from jira_search_users).
    assignee_account_id: Option<String>,
    /// Remove the assignee (leave the issue unassigned).
    #[serde(default)]
    unassign: bool,
    /// New priority name, e.g. High.
    priority: Option<String>,
    /// Labels to add (others stay).
    labels_add: Option<Vec<String>>,
    /// Labels to remove.
    labels_remove: Option<Vec<String>>,
    /// New due date, YYYY-MM-DD; an empty string clears it.
    due_date: Option<String>,
    /// Other fields by id to set, passed through as Jira expects them, e.g. {"customfield_10016": 8}.
    fields: Option<Map<String, Value>>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "jira_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateIssue,
    run: update_issue,
    keywords: ["edit ticket", "assign", "unassign", "reassign", "change priority", "labels", "due date", "rename"],
    description: "Edit a Jira issue (ticket): change summary, Markdown description, priority, due date or custom fields, add/remove labels, and assign it to someone, reassign or unassign it. Use jira_transition_issue to change its status.",
};

async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    if args.unassign && args.assignee_account_id.is_some() {
        return Err(invalid(
            "/unassign",
            "give either assignee_account_id or unassign, not both",
            "conflicts with assignee_account_id",
        ));
    }
    if let Some(d) = args.due_date.as_deref().filter(|d| !d.is_empty()) {
        check_date("/due_date", d)?;
    }
    let mut fields = args.fields.clone().unwrap_or_default();
    let mut changed: Vec<String> = fields.keys().cloned().collect();
    if let Some(s) = &args.summary {
        fields.insert("summary".into(), json!(s));
        changed.push("summary".into());
    }
    if let Some(d) = &args.description {
        fields.insert("description".into(), adf::from_markdown(d));
        changed.push("description".into());
    }
    if let Some(p) = &args.priority {
        fields.insert("priority".into(), json!({ "name": p }));
        changed.push("priority".into());
    }
    if let Some(d) = &args.due_date {
        fields.insert("duedate".into(), if d.is_empty() { Value::Null } else { json!(d) });
        changed.push("due_date".into());
    }
    let mut label_ops: Vec<Value> = Vec::new();
    for l in args.labels_add.iter().flatten() {
        label_ops.push(json!({ "add": l }));
    }
    for l in args.labels_remove.iter().flatten() {
        label_ops.push(json!({ "remove": l }));
    }
    if !label_ops.is_empty() {
        changed.push("labels".into());
    }
    let assignment =
        if args.unassign { Some(Value::Null) } else { args.assignee_account_id.clone().map(Value::String) };
    if fields.is_empty() && label_ops.is_empty() && assignment.is_none() {
        return Err(ToolError::invalid(
            "nothing to change: give at least one of summary, description, assignee_account_id, unassign, priority, labels_add, labels_remove, due_date or fields",
        ));
    }
    if !fields.is_empty() || !label_ops.is_empty() {
        let mut body = json!({});
        if !fields.is_empty() {
            body["fields"] = Value::Object(fields);
        }
        if !label_ops.is_empty() {
            body["update"] = json!({ "labels": label_ops });
        }
        up.send(HttpRequest::new(Method::Put, issue_path(&args.issue_key)).json(body)).await?;
    }
    if let Some(account) = assignment {
        let path = format!("{}/assignee", issue_path(&args.issue_key));
        up.send(HttpRequest::new(Method::Put, path).json(json!({ "accountId": account }))).await?;
        changed.push(if args.unassign { "unassigned".into() } else { "assignee".into() });
    }
    let root = site_root(&Value::Null, &*up);
    Ok(compact(json!({
        "key": args.issue_key,
        "updated": changed,
        "url": browse_url(&root, &json!(args.issue_key)),
    })))
}

// ---------------------------------------------------------------- transitions

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTransitions {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
}

fn shape_transition(t: &Value) -> Value {
    compact(json!({
        "id": t["id"],
        "name": t["name"],
        "to_status": t["to"]["name"],
        "to_category": t["to"]["statusCategory"]["name"],
    }))
}

async fn fetch_transitions(up: &dyn Upstream, key: &str) -> Result<Vec<Value>, ToolError> {
    let body = up.send(HttpRequest::get(format!("{}/transitions", issue_path(key)))).await?.json()?;
    Ok(body["transitions"].as_array().cloned().unwrap_or_default())
}

pub(crate) const LIST_TRANSITIONS: ToolSpec = tool! {
    name: "jira_list_transitions",
    effect: Read,
    results: Private,
    args: ListTransitions,
    run: list_transitions,
    keywords: ["workflow", "status", "next status", "move", "available transitions", "possible statuses", "what status next", "allowed moves"],
    description: "List the workflow transitions (status moves such as Start Progress, Done, Reopen) currently available for a Jira issue, with the status each leads to.",
};

async fn list_transitions(up: Arc<dyn Upstream>, args: ListTransitions) -> Result<Value, ToolError> {
    let transitions = fetch_transitions(&*up, &args.issue_key).await?;
    Ok(json!({
        "issue_key": args.issue_key,
        "transitions": transitions.iter().map(shape_transition).collect::<Vec<_>>(),
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TransitionIssue {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Where to move it: a transition id from jira_list_transitions (e.g. "31"), or the target status name (e.g. "Done", "In Progress") or transition name; names match case-insensitively.
    #[schemars(length(min = 1))]
    transition: String,
    /// A comment to add with the move, in Markdown.
    comment: Option<String>,
    /// Resolution name to set when closing, e.g. Done, Won't Do, Duplicate (only if the transition screen has it).
    resolution: Option<String>,
    /// Other fields the transition screen requires, by id, passed through as Jira expects them.
    fields: Option<Map<String, Value>>,
}

pub(crate) const TRANSITION_ISSUE: ToolSpec = tool! {
    name: "jira_transition_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: TransitionIssue,
    run: transition_issue,
    keywords: ["change status", "move to done", "close ticket", "resolve", "reopen", "in progress", "workflow", "mark done", "move ticket"],
    description: "Move a Jira issue (ticket) to another status, e.g. In Progress or Done: give a transition id or simply the target status name; optionally add a Markdown comment and a resolution.",
};

async fn transition_issue(up: Arc<dyn Upstream>, args: TransitionIssue) -> Result<Value, ToolError> {
    let available = fetch_transitions(&*up, &args.issue_key).await?;
    let wanted = args.transition.trim();
    let found = available
        .iter()
        .find(|t| t["id"].as_str() == Some(wanted))
        .or_else(|| available.iter().find(|t| t["to"]["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(wanted))))
        .or_else(|| available.iter().find(|t| t["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(wanted))));
    let Some(found) = found else {
        let options: Vec<String> = available
            .iter()
            .map(|t| {
                format!(
                    "{} → {} (id {})",
                    t["name"].as_str().unwrap_or("?"),
                    t["to"]["name"].as_str().unwrap_or("?"),
                    t["id"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let listed = if options.is_empty() { "none".to_string() } else { options.join(", ") };
        return Err(invalid(
            "/transition",
            format!("{} has no transition '{wanted}' from its current status; available: {listed}", args.issue_key),
            "not an available transition",
        ));
    };
    let mut body = json!({ "transition": { "id": found["id"] } });
    let mut fields = args.fields.clone().unwrap_or_default();
    if let Some(r) = &args.resolution {
        fields.insert("resolution".into(), json!({ "name": r }));
    }
    if !fields.is_empty() {
        body["fields"] = Value::Object(fields);
    }
    if let Some(c) = &args.comment {
        body["update"] = json!({ "comment": [{ "add": { "body": adf::from_markdown(c) } }] });
    }
    up.send(HttpRequest::post(format!("{}/transitions", issue_path(&args.issue_key))).json(body)).await?;
    let root = site_root(&Value::Null, &*up);
    Ok(compact(json!({
        "key": args.issue_key,
        "transition": { "id": found["id"], "name": found["name"] },
        "status": found["to"]["name"],
        "url": browse_url(&root, &json!(args.issue_key)),
    })))
}

// ---------------------------------------------------------------- comments

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CommentOrder {
    #[default]
    OldestFirst,
    NewestFirst,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListComments {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Comments per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// oldest_first (default, reads like a conversation) or newest_first.
    #[serde(default)]
    order_by: CommentOrder,
}

fn shape_comment(c: &Value, root: &Option<String>, key: &Value) -> Value {
    let (body, cut) = truncate_chars(&adf::to_markdown(&c["body"]), COMMENT_CHARS);
    let edited = c["updated"].is_string() && c["updated"] != c["created"];
    let url = match (root, key.as_str(), c["id"].as_str()) {
        (Some(r), Some(k), Some(id)) => json!(format!("{r}/browse/{k}?focusedCommentId={id}")),
        _ => Value::Null,
    };
    compact(json!({
        "id": c["id"],
        "author": c["author"]["displayName"],
        "created": c["created"],
        "updated": if edited { c["updated"].clone() } else { Value::Null },
        "body": body,
        "truncated": cut.then_some(true),
        "visibility": c["visibility"]["value"],
        "url": url,
    }))
}

pub(crate) const LIST_COMMENTS: ToolSpec = tool! {
    name: "jira_list_comments",
    effect: Read,
    results: Private,
    args: ListComments,
    run: list_comments,
    keywords: ["comments", "discussion", "replies", "conversation", "ticket comments", "read comments", "show comments"],
    description: "List the comments on a Jira issue (ticket), oldest or newest first, with author, date and the comment text as Markdown.",
};

async fn list_comments(up: Arc<dyn Upstream>, args: ListComments) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let order = match args.order_by {
        CommentOrder::OldestFirst => "created",
        CommentOrder::NewestFirst => "-created",
    };
    let req = HttpRequest::get(format!("{}/comment", issue_path(&args.issue_key)))
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 100))
        .query("orderBy", order);
    let body = up.send(req).await?.json()?;
    let comments = body["comments"].as_array().cloned().unwrap_or_default();
    let root = comments.first().and_then(|c| site_root(&c["self"], &*up)).or_else(|| site_root(&Value::Null, &*up));
    let key = json!(args.issue_key);
    let shaped: Vec<Value> = comments.iter().map(|c| shape_comment(c, &root, &key)).collect();
    let next = start + comments.len() as u64;
    let total = body["total"].as_u64().unwrap_or(next);
    Ok(compact(json!({
        "issue_key": args.issue_key,
        "total": total,
        "comments": shaped,
        "next_cursor": (!comments.is_empty() && next < total).then(|| next.to_string()),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// The comment in Markdown (lists, code, links, tables work).
    #[schemars(length(min = 1))]
    body: String,
    /// Restrict visibility to members of this project role, e.g. Developers.
    visible_to_role: Option<String>,
    /// Restrict visibility to members of this group, e.g. jira-software-users.
    visible_to_group: Option<String>,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "jira_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "note", "add comment", "ticket update"],
    description: "Add a comment to a Jira issue (ticket), written in Markdown; optionally visible only to a project role or group.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let mut body = json!({ "body": adf::from_markdown(&args.body) });
    match (&args.visible_to_role, &args.visible_to_group) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "/visible_to_group",
                "a comment can be restricted to a role or to a group, not both",
                "conflicts with visible_to_role",
            ));
        }
        (Some(role), None) => body["visibility"] = json!({ "type": "role", "value": role }),
        (None, Some(group)) => body["visibility"] = json!({ "type": "group", "value": group }),
        (None, None) => {}
    }
    let created =
        up.send(HttpRequest::post(format!("{}/comment", issue_path(&args.issue_key))).json(body)).await?.json()?;
    let root = site_root(&created["self"], &*up);
    let mut out = shape_comment(&created, &root, &json!(args.issue_key));
    if let Value::Object(o) = &mut out {
        o.remove("body");
        o.remove("truncated");
        o.insert("issue_key".into(), json!(args.issue_key));
    }
    Ok(out)
}

// ---------------------------------------------------------------- projects and people

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProjects {
    /// Filter: text matched against project name and key (case-insensitive).
    query: Option<String>,
    /// Projects per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "jira_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["projects", "project key", "spaces", "boards"],
    description: "List the Jira projects you can see (key, name, type), optionally filtered by name or key; project keys are what JQL and jira_create_issue need.",
};

async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let req = HttpRequest::get("/rest/api/3/project/search")
        .query_opt("query", args.query.as_deref())
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 100));
    let body = up.send(req).await?.json()?;
    let values = body["values"].as_array().cloned().unwrap_or_default();
    let projects: Vec<Value> = values
        .iter()
        .map(|p| {
            let managed = match p["style"].as_str() {
                Some("next-gen") => Some("team-managed"),
                Some("classic") => Some("company-managed"),
                _ => None,
            };
            compact(json!({
                "key": p["key"],
                "id": p["id"],
                "name": p["name"],
                "type": p["projectTypeKey"],
                "style": managed,
                "category": p["projectCategory"]["name"],
            }))
        })
        .collect();
    let next = start + values.len() as u64;
    let last = body["isLast"].as_bool().unwrap_or(values.is_empty());
    Ok(compact(json!({
        "projects": projects,
        "total": body["total"],
        "next_cursor": (!last && !values.is_empty()).then(|| next.to_string()),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchUsers {
    /// Name, part of a name, or email address to look for.
    #[schemars(length(min = 1))]
    query: String,
    /// Most users to return (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
}

pub(crate) const SEARCH_USERS: ToolSpec = tool! {
    name: "jira_search_users",
    effect: Read,
    results: Private,
    args: SearchUsers,
    run: search_users,
    keywords: ["people", "user", "account id", "assignee", "mention", "find person", "colleague"],
    description: "Find Jira users (people) by name or email to get their accountId, which assigning issues and @-mentions need.",
};

async fn search_users(up: Arc<dyn Upstream>, args: SearchUsers) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/rest/api/3/user/search")
        .query("query", &args.query)
        .query("maxResults", args.limit.clamp(1, 100));
    let body = up.send(req).await?.json()?;
    let users: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            compact(json!({
                "account_id": u["accountId"],
                "name": u["displayName"],
                "email": u["emailAddress"],
                "active": u["active"],
                "account_type": u["accountType"].as_str().filter(|t| *t != "atlassian"),
            }))
        })
        .collect();
    Ok(json!({ "users": users }))
}

// ---------------------------------------------------------------- sprints

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum SprintState {
    Active,
    Future,
    Closed,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListSprints {
    /// Numeric id of the scrum board; give this or project_key.
    #[schemars(range(min = 1))]
    board_id: Option<u64>,
    /// Project key whose (first scrum) board to use when board_id is not known, e.g. ENG.
    project_key: Option<String>,
    /// Which sprints: any of active, future, closed. Default: active and future.
    state: Option<Vec<SprintState>>,
    /// Sprints per page (1-50).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_SPRINTS: ToolSpec = tool! {
    name: "jira_list_sprints",
    effect: Read,
    results: Private,
    args: ListSprints,
    run: list_sprints,
    keywords: ["sprint", "scrum", "board", "iteration", "active sprint", "agile", "current sprint", "sprints", "upcoming sprint", "sprint board"],
    description: "List the sprints (active, future or closed) of a Jira Software scrum board, by board id or project key, with dates and sprint goal.",
};

async fn list_sprints(up: Arc<dyn Upstream>, args: ListSprints) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let mut board = Value::Null;
    let mut other_boards = Vec::new();
    let board_id = match (args.board_id, args.project_key.as_deref()) {
        (Some(id), None) => id,
        (None, Some(project)) => {
            let req = HttpRequest::get("/rest/agile/1.0/board").query("projectKeyOrId", project.trim());
            let boards = up.send(req).await?.json()?;
            let values = boards["values"].as_array().cloned().unwrap_or_default();
            let chosen = values
                .iter()
                .find(|b| b["type"] == "scrum")
                .or_else(|| values.iter().find(|b| b["type"] == "simple"))
                .or(values.first())
                .cloned()
                .ok_or_else(|| ToolError::Upstream {
                    status: 404,
                    message: format!("project {project} has no board you can see; sprints live on scrum boards"),
                    retry_after: None,
                })?;
            for b in &values {
                if b["id"] != chosen["id"] {
                    other_boards.push(compact(json!({"id": b["id"], "name": b["name"], "type": b["type"]})));
                }
            }
            board = compact(json!({"id": chosen["id"], "name": chosen["name"], "type": chosen["type"]}));
            chosen["id"].as_u64().ok_or_else(|| ToolError::Internal("board without a numeric id".into()))?
        }
        _ => {
            return Err(invalid("", "give exactly one of board_id or project_key", "expected board_id or project_key"));
        }
    };
    let states = args.state.clone().unwrap_or_else(|| vec![SprintState::Active, SprintState::Future]);
    let state_param: Vec<&str> = states
        .iter()
        .map(|s| match s {
            SprintState::Active => "active",
            SprintState::Future => "future",
            SprintState::Closed => "closed",
        })
        .collect();
    let req = HttpRequest::get(format!("/rest/agile/1.0/board/{board_id}/sprint"))
        .query("state", state_param.join(","))
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 50));
    let body = up.send(req).await?.json()?;
    let values = body["values"].as_array().cloned().unwrap_or_default();
    let sprints: Vec<Value> = values
        .iter()
        .map(|s| {
            compact(json!({
                "id": s["id"],
                "name": s["name"],
                "state": s["state"],
                "start": s["startDate"],
                "end": s["endDate"],
                "completed": s["completeDate"],
                "goal": s["goal"].as_str().filter(|g| !g.is_empty()),
            }))
        })
        .collect();
    let next = start + values.len() as u64;
    let last = body["isLast"].as_bool().unwrap_or(true);
    if board.is_null() {
        board = json!({ "id": board_id });
    }
    Ok(compact(json!({
        "board": board,
        "other_boards": (!other_boards.is_empty()).then_some(other_boards),
        "sprints": sprints,
        "next_cursor": (!last && !values.is_empty()).then(|| next.to_string()),
    })))
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
