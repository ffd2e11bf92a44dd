//! Linear: issues, comments, teams, projects and workflow states through the GraphQL API
//! (`POST https://api.linear.app/graphql`).
//!
//! Personal API keys go in `Authorization` as-is (no `Bearer`). GraphQL reports failures in an
//! `errors` array — with HTTP 200, or with 400/401 — so every call goes through [`gql`], which maps
//! them to `ToolError::Upstream` with a fitting status (`RATELIMITED` -> 429, authentication ->
//! 401, forbidden -> 403, not found -> 404, else 400). Identifiers like `ENG-123` are accepted
//! wherever an issue id is; team keys (`ENG`) wherever a team id is.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

mod graphql;

use graphql::{error_message, gql, invalid, is_uuid, issue_uuid, not_found, pick_state, team_uuid, user_id};

pub static INTEGRATION: Integration = Integration {
    name: "linear",
    display_name: "Linear",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "api_key",
            label: "Personal API key",
            secret: true,
            required: true,
            help: "linear.app → Settings → Security & access → Personal API keys; starts with lin_api_",
        }],
        inject: Inject::Header { name: "Authorization", prefix: "", field: "api_key" },
        identity: Some(Identity {
            request: || {
                HttpRequest::post("/graphql").json(json!({ "query": "query Viewer { viewer { id name email } }" }))
            },
            label: viewer_label,
        }),
        oauth: None,
    },
    keywords: &["linear", "cycle", "triage", "ENG-123", "issue tracker", "ticket", "backlog", "roadmap", "sprint"],
    hosts: &[Host { key: "base_url", default_url: "https://api.linear.app" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_hour(1500),
    side: Some(flow_side),
    tools: &[
        SEARCH_ISSUES,
        LIST_ISSUES,
        GET_ISSUE,
        CREATE_ISSUE,
        UPDATE_ISSUE,
        CREATE_COMMENT,
        LIST_TEAMS,
        LIST_PROJECTS,
        LIST_WORKFLOW_STATES,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the `viewer` (`id`, `email`) and its organisation's `id`. Every Linear issue and comment stays in the user's workspace (inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up
            .send(
                HttpRequest::post("/graphql")
                    .json(json!({ "query": "query Viewer { viewer { id name email organization { id } } }" })),
            )
            .await?
            .json()?;
        crate::flow::side_from(&me, &["/data/viewer/email"], &["/data/viewer/id", "/data/viewer/organization/id"])
    })
}

fn viewer_label(body: &Value) -> Option<String> {
    let v = &body["data"]["viewer"];
    v["email"].as_str().or(v["name"].as_str()).filter(|s| !s.is_empty()).map(str::to_string)
}

const ISSUE_FIELDS: &str = "id identifier title priority priorityLabel estimate dueDate url createdAt updatedAt completedAt state { name type } assignee { name email } team { key } project { name } cycle { number } labels { nodes { name } }";
const BODY_CHARS: usize = 10_000;
const COMMENT_CHARS: usize = 4_000;

fn shape_issue(n: &Value) -> Value {
    let labels: Vec<Value> = n["labels"]["nodes"].as_array().into_iter().flatten().map(|l| l["name"].clone()).collect();
    compact(json!({
        "identifier": n["identifier"],
        "id": n["id"],
        "title": n["title"],
        "state": n["state"]["name"],
        "state_type": n["state"]["type"],
        "priority": n["priorityLabel"],
        "assignee": n["assignee"]["name"],
        "team": n["team"]["key"],
        "project": n["project"]["name"],
        "cycle": n["cycle"]["number"],
        "labels": (!labels.is_empty()).then_some(labels),
        "estimate": n["estimate"],
        "due_date": n["dueDate"],
        "completed": n["completedAt"],
        "updated": n["updatedAt"],
        "url": n["url"],
    }))
}

fn next_cursor(connection: &Value) -> Value {
    if connection["pageInfo"]["hasNextPage"].as_bool() == Some(true) {
        connection["pageInfo"]["endCursor"].clone()
    } else {
        Value::Null
    }
}

// ---------------------------------------------------------------- search and list

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchIssues {
    /// Words to search for.
    #[schemars(length(min = 1))]
    term: String,
    /// Only this team: its key (e.g. ENG) or id.
    team_id: Option<String>,
    /// Also match words in comments.
    #[serde(default)]
    include_comments: bool,
    /// Issues per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const SEARCH_ISSUES: ToolSpec = tool! {
    name: "linear_search_issues",
    effect: Read,
    results: Private,
    args: SearchIssues,
    run: search_issues,
    keywords: ["find issue", "full-text", "search tickets", "bug", "keyword"],
    description: "Full-text search of Linear issues (tickets, bugs) by words in title, description and optionally comments; returns identifier (ENG-123), title, status, assignee and link.",
};

async fn search_issues(up: Arc<dyn Upstream>, args: SearchIssues) -> Result<Value, ToolError> {
    let team = match &args.team_id {
        Some(t) => Some(team_uuid(&*up, t, "/team_id").await?),
        None => None,
    };
    let query = format!(
        "query SearchIssues($term: String!, $first: Int, $after: String, $teamId: String, $includeComments: Boolean) {{ searchIssues(term: $term, first: $first, after: $after, teamId: $teamId, includeComments: $includeComments) {{ nodes {{ {ISSUE_FIELDS} }} pageInfo {{ hasNextPage endCursor }} totalCount }} }}"
    );
    let data = gql(
        &*up,
        &query,
        json!({
            "term": args.term,
            "first": args.limit.clamp(1, 100),
            "after": args.cursor,
            "teamId": team,
            "includeComments": args.include_comments,
        }),
    )
    .await?;
    let conn = &data["searchIssues"];
    let issues: Vec<Value> = conn["nodes"].as_array().into_iter().flatten().map(shape_issue).collect();
    Ok(compact(json!({ "issues": issues, "total": conn["totalCount"], "next_cursor": next_cursor(conn) })))
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum IssueOrder {
    #[default]
    Updated,
    Created,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListIssues {
    /// Team key (e.g. ENG) or team id.
    team: Option<String>,
    /// Assignee: "me", "none" (unassigned), an email address, a user id, or part of a name.
    assignee: Option<String>,
    /// Status name (e.g. "In Review") or status type: triage, backlog, unstarted, started, completed, canceled.
    state: Option<String>,
    /// Leave out completed and canceled issues.
    #[serde(default)]
    open_only: bool,
    /// Project name (or part of it) or project id.
    project: Option<String>,
    /// Label name, e.g. Bug.
    label: Option<String>,
    /// Cycle: "current", "next", "previous", or a cycle number.
    cycle: Option<String>,
    /// Order by last update (default) or creation, newest first.
    #[serde(default)]
    order_by: IssueOrder,
    /// Issues per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

const STATE_TYPES: &[&str] = &["triage", "backlog", "unstarted", "started", "completed", "canceled"];

fn issue_filter(args: &ListIssues) -> Result<Map<String, Value>, ToolError> {
    let mut f = Map::new();
    if let Some(team) = args.team.as_deref().map(str::trim) {
        let t = if is_uuid(team) { json!({"id": {"eq": team}}) } else { json!({"key": {"eqIgnoreCase": team}}) };
        f.insert("team".into(), t);
    }
    if let Some(who) = args.assignee.as_deref().map(str::trim) {
        let a = match who.to_ascii_lowercase().as_str() {
            "me" => json!({"isMe": {"eq": true}}),
            "none" | "unassigned" | "nobody" => json!({"null": true}),
            _ if who.contains('@') => json!({"email": {"eqIgnoreCase": who}}),
            _ if is_uuid(who) => json!({"id": {"eq": who}}),
            _ => json!({"name": {"containsIgnoreCase": who}}),
        };
        f.insert("assignee".into(), a);
    }
    match args.state.as_deref().map(str::trim) {
        Some(s) if STATE_TYPES.contains(&s.to_ascii_lowercase().as_str()) => {
            f.insert("state".into(), json!({"type": {"eq": s.to_ascii_lowercase()}}));
        }
        Some(s) => {
            f.insert("state".into(), json!({"name": {"eqIgnoreCase": s}}));
        }
        None if args.open_only => {
            f.insert("state".into(), json!({"type": {"nin": ["completed", "canceled"]}}));
        }
        None => {}
    }
    if args.open_only && args.state.is_some() {
        return Err(invalid(
            "/open_only",
            "open_only and state cannot be combined; state already picks the statuses",
            "conflicts with state",
        ));
    }
    if let Some(p) = args.project.as_deref().map(str::trim) {
        let p = if is_uuid(p) { json!({"id": {"eq": p}}) } else { json!({"name": {"containsIgnoreCase": p}}) };
        f.insert("project".into(), p);
    }
    if let Some(l) = args.label.as_deref().map(str::trim) {
        f.insert("labels".into(), json!({"some": {"name": {"eqIgnoreCase": l}}}));
    }
    if let Some(c) = args.cycle.as_deref().map(str::trim) {
        let c = match c.to_ascii_lowercase().as_str() {
            "current" | "active" => json!({"isActive": {"eq": true}}),
            "next" => json!({"isNext": {"eq": true}}),
            "previous" | "last" => json!({"isPrevious": {"eq": true}}),
            _ if is_uuid(c) => json!({"id": {"eq": c}}),
            _ => match c.parse::<u64>() {
                Ok(n) => json!({"number": {"eq": n}}),
                Err(_) => {
                    return Err(invalid(
                        "/cycle",
                        format!("cycle '{c}' is not current, next, previous or a number"),
                        "unknown cycle",
                    ));
                }
            },
        };
        f.insert("cycle".into(), c);
    }
    Ok(f)
}

pub(crate) const LIST_ISSUES: ToolSpec = tool! {
    name: "linear_list_issues",
    effect: Read,
    results: Private,
    args: ListIssues,
    run: list_issues,
    keywords: ["my issues", "assigned to me", "backlog", "in progress", "current cycle", "triage", "open tickets", "filter", "open issues", "list tickets", "my tickets"],
    description: "List Linear issues with filters: team, assignee (\"me\"), status or status type (backlog, started, completed…), project, label, cycle (current/next or number), open only; newest activity first.",
};

async fn list_issues(up: Arc<dyn Upstream>, args: ListIssues) -> Result<Value, ToolError> {
    let filter = issue_filter(&args)?;
    let query = format!(
        "query Issues($filter: IssueFilter, $first: Int, $after: String, $orderBy: PaginationOrderBy) {{ issues(filter: $filter, first: $first, after: $after, orderBy: $orderBy) {{ nodes {{ {ISSUE_FIELDS} }} pageInfo {{ hasNextPage endCursor }} }} }}"
    );
    let data = gql(
        &*up,
        &query,
        json!({
            "filter": if filter.is_empty() { Value::Null } else { Value::Object(filter) },
            "first": args.limit.clamp(1, 100),
            "after": args.cursor,
            "orderBy": match args.order_by { IssueOrder::Updated => "updatedAt", IssueOrder::Created => "createdAt" },
        }),
    )
    .await?;
    let conn = &data["issues"];
    let issues: Vec<Value> = conn["nodes"].as_array().into_iter().flatten().map(shape_issue).collect();
    Ok(compact(json!({ "issues": issues, "next_cursor": next_cursor(conn) })))
}

// ---------------------------------------------------------------- one issue

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetIssue {
    /// The issue's identifier (e.g. ENG-123) or id.
    #[schemars(length(min = 1))]
    id: String,
    /// Include the comments (up to 50, oldest first).
    #[serde_inline_default(true)]
    include_comments: bool,
    /// Character budget for the description; longer text is cut and `truncated` is set.
    #[serde_inline_default(BODY_CHARS)]
    #[schemars(range(min = 50, max = 100000))]
    max_chars: usize,
}

pub(crate) const GET_ISSUE: ToolSpec = tool! {
    name: "linear_get_issue",
    effect: Read,
    results: Private,
    args: GetIssue,
    run: get_issue,
    keywords: ["ENG-123", "issue details", "ticket", "description", "comments", "read issue", "show ticket", "ticket details"],
    description: "Get one Linear issue by identifier (ENG-123) or id: title, status, priority, assignee, labels, project, cycle, parent and sub-issues, the Markdown description and its comments.",
};

async fn get_issue(up: Arc<dyn Upstream>, args: GetIssue) -> Result<Value, ToolError> {
    let comments = if args.include_comments {
        "comments(first: 50) { nodes { id body createdAt user { name } parent { id } } }"
    } else {
        ""
    };
    let query = format!(
        "query Issue($id: String!) {{ issue(id: $id) {{ {ISSUE_FIELDS} description creator {{ name }} parent {{ identifier title }} children(first: 50) {{ nodes {{ identifier title state {{ name }} }} }} {comments} }} }}"
    );
    let data = gql(&*up, &query, json!({ "id": args.id.trim() })).await?;
    let issue = &data["issue"];
    if issue.is_null() {
        return Err(not_found(format!("Linear has no issue {}", args.id)));
    }
    let mut out = shape_issue(issue);
    let (description, cut) = truncate_chars(issue["description"].as_str().unwrap_or(""), args.max_chars);
    let children: Vec<Value> = issue["children"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| compact(json!({"identifier": c["identifier"], "title": c["title"], "state": c["state"]["name"]})))
        .collect();
    let extra = compact(json!({
        "creator": issue["creator"]["name"],
        "created": issue["createdAt"],
        "parent": if issue["parent"].is_object() {
            json!({"identifier": issue["parent"]["identifier"], "title": issue["parent"]["title"]})
        } else { Value::Null },
        "sub_issues": (!children.is_empty()).then_some(children),
        "description": (!description.is_empty()).then_some(description),
        "truncated": cut.then_some(true),
    }));
    if let (Value::Object(o), Value::Object(e)) = (&mut out, extra) {
        o.extend(e);
    }
    if args.include_comments {
        let mut nodes = issue["comments"]["nodes"].as_array().cloned().unwrap_or_default();
        nodes.sort_by(|a, b| a["createdAt"].as_str().cmp(&b["createdAt"].as_str()));
        let comments: Vec<Value> = nodes
            .iter()
            .map(|c| {
                let (body, cut) = truncate_chars(c["body"].as_str().unwrap_or(""), COMMENT_CHARS);
                compact(json!({
                    "id": c["id"],
                    "author": c["user"]["name"],
                    "created": c["createdAt"],
                    "body": body,
                    "truncated": cut.then_some(true),
                    "reply_to": c["parent"]["id"],
                }))
            })
            .collect();
        out["comments"] = Value::Array(comments);
    }
    Ok(out)
}

// ---------------------------------------------------------------- create / update

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIssue {
    /// The team to file it in: team key (e.g. ENG) or team id.
    #[schemars(length(min = 1))]
    team_id: String,
    /// Issue title.
    #[schemars(length(min = 1))]
    title: String,
    /// Description in Markdown.
    description: Option<String>,
    /// Assignee's user id, or "me".
    assignee_id: Option<String>,
    /// Priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low.
    #[schemars(range(min = 0, max = 4))]
    priority: Option<u8>,
    /// Status: a workflow state id or a status name of the team, e.g. Todo (default: the team's default).
    state_id: Option<String>,
    /// Label ids to set.
    label_ids: Option<Vec<String>>,
    /// Project id to add it to.
    project_id: Option<String>,
    /// Cycle id to add it to.
    cycle_id: Option<String>,
    /// Due date, YYYY-MM-DD.
    due_date: Option<String>,
    /// Parent issue (makes this a sub-issue): identifier like ENG-100 or id.
    parent_id: Option<String>,
    /// Estimate in the team's points scale.
    estimate: Option<f64>,
}

pub(crate) const CREATE_ISSUE: ToolSpec = tool! {
    name: "linear_create_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateIssue,
    run: create_issue,
    keywords: ["new issue", "file a bug", "create ticket", "report", "task", "sub-issue"],
    description: "Create a Linear issue (ticket/bug/task) in a team, with Markdown description, assignee (or \"me\"), priority, status, labels, project, cycle, due date and parent issue.",
};

async fn create_issue(up: Arc<dyn Upstream>, args: CreateIssue) -> Result<Value, ToolError> {
    if let Some(d) = &args.due_date {
        check_date("/due_date", d)?;
    }
    let team = team_uuid(&*up, &args.team_id, "/team_id").await?;
    let mut input = Map::new();
    input.insert("teamId".into(), json!(team));
    input.insert("title".into(), json!(args.title));
    if let Some(d) = &args.description {
        input.insert("description".into(), json!(d));
    }
    if let Some(a) = &args.assignee_id {
        input.insert("assigneeId".into(), json!(user_id(&*up, a).await?));
    }
    if let Some(p) = args.priority {
        input.insert("priority".into(), json!(p));
    }
    if let Some(s) = &args.state_id {
        let id = if is_uuid(s.trim()) {
            s.trim().to_string()
        } else {
            let data = gql(
                &*up,
                "query TeamStates($id: String!) { team(id: $id) { states { nodes { id name type } } } }",
                json!({ "id": team }),
            )
            .await?;
            pick_state(&data["team"]["states"], s)?
        };
        input.insert("stateId".into(), json!(id));
    }
    if let Some(l) = &args.label_ids {
        input.insert("labelIds".into(), json!(l));
    }
    if let Some(p) = &args.project_id {
        input.insert("projectId".into(), json!(p));
    }
    if let Some(c) = &args.cycle_id {
        input.insert("cycleId".into(), json!(c));
    }
    if let Some(d) = &args.due_date {
        input.insert("dueDate".into(), json!(d));
    }
    if let Some(p) = &args.parent_id {
        input.insert("parentId".into(), json!(issue_uuid(&*up, p).await?));
    }
    if let Some(e) = args.estimate {
        input.insert("estimate".into(), json!(e));
    }
    let query = format!(
        "mutation IssueCreate($input: IssueCreateInput!) {{ issueCreate(input: $input) {{ success issue {{ {ISSUE_FIELDS} }} }} }}"
    );
    let data = gql(&*up, &query, json!({ "input": input })).await?;
    let payload = &data["issueCreate"];
    if payload["success"].as_bool() != Some(true) {
        return Err(ToolError::Upstream {
            status: 400,
            message: "Linear did not create the issue".into(),
            retry_after: None,
        });
    }
    Ok(shape_issue(&payload["issue"]))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateIssue {
    /// The issue's identifier (e.g. ENG-123) or id.
    #[schemars(length(min = 1))]
    id: String,
    /// New status: a workflow state id or a status name of the issue's team, e.g. "In Progress" or "Done".
    state_id: Option<String>,
    /// New assignee's user id, or "me".
    assignee_id: Option<String>,
    /// Remove the assignee.
    #[serde(default)]
    unassign: bool,
    /// Priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low.
    #[schemars(range(min = 0, max = 4))]
    priority: Option<u8>,
    /// New title.
    title: Option<String>,
    /// New description in Markdown (replaces the old one).
    description: Option<String>,
    /// Replace all labels with these label ids.
    label_ids: Option<Vec<String>>,
    /// Label ids to add, keeping the others.
    add_label_ids: Option<Vec<String>>,
    /// Label ids to remove.
    remove_label_ids: Option<Vec<String>>,
    /// Move to this project id.
    project_id: Option<String>,
    /// Move to this cycle id.
    cycle_id: Option<String>,
    /// New due date, YYYY-MM-DD.
    due_date: Option<String>,
    /// New estimate in the team's points scale.
    estimate: Option<f64>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "linear_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateIssue,
    run: update_issue,
    keywords: ["change status", "move to done", "assign", "unassign", "priority", "relabel", "edit ticket", "close issue", "mark done", "reassign", "in progress", "mark in progress"],
    description: "Update a Linear issue by identifier (ENG-123): change status (by name, e.g. Done), assignee, priority, title, Markdown description, labels, project, cycle, estimate or due date.",
};

async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    if args.unassign && args.assignee_id.is_some() {
        return Err(invalid(
            "/unassign",
            "give either assignee_id or unassign, not both",
            "conflicts with assignee_id",
        ));
    }
    if let Some(d) = &args.due_date {
        check_date("/due_date", d)?;
    }
    let mut input = Map::new();
    if let Some(s) = &args.state_id {
        let id = if is_uuid(s.trim()) {
            s.trim().to_string()
        } else {
            let data = gql(
                &*up,
                "query IssueTeamStates($id: String!) { issue(id: $id) { team { states { nodes { id name type } } } } }",
                json!({ "id": args.id.trim() }),
            )
            .await?;
            pick_state(&data["issue"]["team"]["states"], s)?
        };
        input.insert("stateId".into(), json!(id));
    }
    if args.unassign {
        input.insert("assigneeId".into(), Value::Null);
    } else if let Some(a) = &args.assignee_id {
        input.insert("assigneeId".into(), json!(user_id(&*up, a).await?));
    }
    let simple = [
        ("priority", args.priority.map(|p| json!(p))),
        ("title", args.title.as_ref().map(|t| json!(t))),
        ("description", args.description.as_ref().map(|d| json!(d))),
        ("labelIds", args.label_ids.as_ref().map(|l| json!(l))),
        ("addedLabelIds", args.add_label_ids.as_ref().map(|l| json!(l))),
        ("removedLabelIds", args.remove_label_ids.as_ref().map(|l| json!(l))),
        ("projectId", args.project_id.as_ref().map(|p| json!(p))),
        ("cycleId", args.cycle_id.as_ref().map(|c| json!(c))),
        ("dueDate", args.due_date.as_ref().map(|d| json!(d))),
        ("estimate", args.estimate.map(|e| json!(e))),
    ];
    for (key, value) in simple {
        if let Some(v) = value {
            input.insert(key.into(), v);
        }
    }
    if input.is_empty() {
        return Err(ToolError::invalid(
            "nothing to change: give at least one field to update (state_id, assignee_id, unassign, priority, title, …)",
        ));
    }
    let query = format!(
        "mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {{ issueUpdate(id: $id, input: $input) {{ success issue {{ {ISSUE_FIELDS} }} }} }}"
    );
    let data = gql(&*up, &query, json!({ "id": args.id.trim(), "input": input })).await?;
    let payload = &data["issueUpdate"];
    if payload["success"].as_bool() != Some(true) {
        return Err(ToolError::Upstream {
            status: 400,
            message: "Linear did not update the issue".into(),
            retry_after: None,
        });
    }
    Ok(shape_issue(&payload["issue"]))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The issue's identifier (e.g. ENG-123) or id.
    #[schemars(length(min = 1))]
    issue_id: String,
    /// The comment in Markdown.
    #[schemars(length(min = 1))]
    body: String,
    /// Reply in the thread of this comment id.
    parent_id: Option<String>,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "linear_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "note", "discussion", "add comment"],
    description: "Comment on a Linear issue (by identifier such as ENG-123) in Markdown, or reply in an existing comment thread.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let issue = issue_uuid(&*up, &args.issue_id).await?;
    let mut input = json!({ "issueId": issue, "body": args.body });
    if let Some(p) = &args.parent_id {
        input["parentId"] = json!(p);
    }
    let data = gql(
        &*up,
        "mutation CommentCreate($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { id url createdAt issue { identifier } parent { id } } } }",
        json!({ "input": input }),
    )
    .await?;
    let payload = &data["commentCreate"];
    if payload["success"].as_bool() != Some(true) {
        return Err(ToolError::Upstream {
            status: 400,
            message: "Linear did not create the comment".into(),
            retry_after: None,
        });
    }
    let c = &payload["comment"];
    Ok(compact(json!({
        "id": c["id"],
        "issue": c["issue"]["identifier"],
        "reply_to": c["parent"]["id"],
        "created": c["createdAt"],
        "url": c["url"],
    })))
}

// ---------------------------------------------------------------- teams, projects, states

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTeams {
    /// Teams per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_TEAMS: ToolSpec = tool! {
    name: "linear_list_teams",
    effect: Read,
    results: Private,
    args: ListTeams,
    run: list_teams,
    keywords: ["teams", "team key", "team id", "workspace"],
    description: "List Linear teams with id, key (the ENG in ENG-123) and name; team ids and keys are what the other Linear tools take.",
};

async fn list_teams(up: Arc<dyn Upstream>, args: ListTeams) -> Result<Value, ToolError> {
    let data = gql(
        &*up,
        "query Teams($first: Int, $after: String) { teams(first: $first, after: $after) { nodes { id key name description visibility } pageInfo { hasNextPage endCursor } } }",
        json!({ "first": args.limit.clamp(1, 100), "after": args.cursor }),
    )
    .await?;
    let conn = &data["teams"];
    let teams: Vec<Value> = conn["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            compact(json!({
                "id": t["id"],
                "key": t["key"],
                "name": t["name"],
                "description": t["description"].as_str().filter(|d| !d.is_empty()),
                // `Team.private` is deprecated for `visibility` (public, private or restricted).
                "visibility": t["visibility"].as_str().filter(|v| *v != "public"),
            }))
        })
        .collect();
    Ok(compact(json!({ "teams": teams, "next_cursor": next_cursor(conn) })))
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ProjectStatus {
    Backlog,
    Planned,
    Started,
    Paused,
    Completed,
    Canceled,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProjects {
    /// Only projects whose name contains this text.
    name: Option<String>,
    /// Only projects with this status type: backlog, planned, started, paused, completed, canceled.
    status: Option<ProjectStatus>,
    /// Only projects of this team (key, e.g. ENG).
    team: Option<String>,
    /// Projects per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "linear_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["projects", "roadmap", "initiative", "milestone", "progress", "project progress", "project status"],
    description: "List Linear projects with status, lead, progress, start and target dates; filter by name, status type or team.",
};

async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let mut filter = Map::new();
    if let Some(n) = &args.name {
        filter.insert("name".into(), json!({"containsIgnoreCase": n}));
    }
    if let Some(s) = args.status {
        let kind = format!("{s:?}").to_ascii_lowercase();
        filter.insert("status".into(), json!({"type": {"eq": kind}}));
    }
    if let Some(t) = &args.team {
        let t = t.trim();
        let team = if is_uuid(t) { json!({"id": {"eq": t}}) } else { json!({"key": {"eqIgnoreCase": t}}) };
        filter.insert("accessibleTeams".into(), json!({"some": team}));
    }
    let data = gql(
        &*up,
        "query Projects($filter: ProjectFilter, $first: Int, $after: String) { projects(filter: $filter, first: $first, after: $after) { nodes { id name description url progress startDate targetDate status { name type } lead { name } teams { nodes { key } } } pageInfo { hasNextPage endCursor } } }",
        json!({
            "filter": if filter.is_empty() { Value::Null } else { Value::Object(filter) },
            "first": args.limit.clamp(1, 100),
            "after": args.cursor,
        }),
    )
    .await?;
    let conn = &data["projects"];
    let projects: Vec<Value> = conn["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let teams: Vec<Value> =
                p["teams"]["nodes"].as_array().into_iter().flatten().map(|t| t["key"].clone()).collect();
            compact(json!({
                "id": p["id"],
                "name": p["name"],
                "status": p["status"]["name"],
                "lead": p["lead"]["name"],
                "progress_percent": p["progress"].as_f64().map(|x| (x * 100.0).round() as u64),
                "start_date": p["startDate"],
                "target_date": p["targetDate"],
                "teams": (!teams.is_empty()).then_some(teams),
                "description": p["description"].as_str().filter(|d| !d.is_empty()).map(|d| truncate_chars(d, 300).0),
                "url": p["url"],
            }))
        })
        .collect();
    Ok(compact(json!({ "projects": projects, "next_cursor": next_cursor(conn) })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListWorkflowStates {
    /// The team: key (e.g. ENG) or id. Default: every team's states.
    team_id: Option<String>,
    /// States per page (1-250).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 250))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_WORKFLOW_STATES: ToolSpec = tool! {
    name: "linear_list_workflow_states",
    effect: Read,
    results: Private,
    args: ListWorkflowStates,
    run: list_workflow_states,
    keywords: ["statuses", "workflow", "columns", "backlog", "todo", "in progress", "done", "state id"],
    description: "List a Linear team's workflow states (statuses such as Backlog, Todo, In Progress, Done, Canceled) with their ids and types, for setting an issue's status.",
};

async fn list_workflow_states(up: Arc<dyn Upstream>, args: ListWorkflowStates) -> Result<Value, ToolError> {
    let filter = args.team_id.as_deref().map(str::trim).map(|t| {
        if is_uuid(t) { json!({"team": {"id": {"eq": t}}}) } else { json!({"team": {"key": {"eqIgnoreCase": t}}}) }
    });
    let data = gql(
        &*up,
        "query WorkflowStates($filter: WorkflowStateFilter, $first: Int, $after: String) { workflowStates(filter: $filter, first: $first, after: $after) { nodes { id name type color position team { key } } pageInfo { hasNextPage endCursor } } }",
        json!({ "filter": filter, "first": args.limit.clamp(1, 250), "after": args.cursor }),
    )
    .await?;
    let conn = &data["workflowStates"];
    let mut nodes = conn["nodes"].as_array().cloned().unwrap_or_default();
    nodes.sort_by(|a, b| {
        let ka = (a["team"]["key"].as_str().unwrap_or(""), a["position"].as_f64().unwrap_or(0.0));
        let kb = (b["team"]["key"].as_str().unwrap_or(""), b["position"].as_f64().unwrap_or(0.0));
        ka.0.cmp(kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let states: Vec<Value> = nodes
        .iter()
        .map(|s| compact(json!({"id": s["id"], "name": s["name"], "type": s["type"], "team": s["team"]["key"]})))
        .collect();
    Ok(compact(json!({ "states": states, "next_cursor": next_cursor(conn) })))
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new().json(serde_json::json!({"data": {"viewer": {"id": "u1", "email": "ann@acme.example", "organization": {"id": "o1"}}}})).side(side);
        let s = s.unwrap();
        assert!(s.has_email("bob@acme.example"));
        assert!(s.has_id("u1") && s.has_id("o1"));
        assert_eq!(reqs[0].path, "/graphql");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
