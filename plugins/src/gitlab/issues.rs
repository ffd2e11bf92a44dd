//! Issues and notes (comments) on issues and merge requests.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::mrs::{OrderBy, Scope};
use super::*;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IssueState {
    #[default]
    Opened,
    Closed,
    All,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListIssues {
    /// The project: its path like "group/subgroup/project" or its numeric id. Omit to list across all of GitLab.
    project: Option<ProjectId>,
    /// opened (default), closed or all.
    #[serde(default)]
    state: IssueState,
    /// Only issues carrying all of these labels.
    labels: Option<Vec<String>>,
    /// Only issues assigned to this username.
    assignee_username: Option<String>,
    /// Only issues opened by this username.
    author_username: Option<String>,
    /// Words to find in titles and descriptions.
    search: Option<String>,
    /// created_by_me, assigned_to_me or all. Without a project GitLab defaults to created_by_me; within a project to all.
    scope: Option<Scope>,
    /// Only issues in this milestone (its title).
    milestone: Option<String>,
    /// Order by created_at (default) or updated_at, newest first.
    order_by: Option<OrderBy>,
    /// How many issues to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitLab's full issue objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

fn shape_issue(i: &Value) -> Value {
    compact(json!({
        "iid": i["iid"],
        "reference": i["references"]["full"],
        "title": i["title"],
        "state": i["state"],
        "author": username(&i["author"]),
        "assignees": usernames(&i["assignees"]),
        "labels": non_empty(&i["labels"]),
        "milestone": i["milestone"]["title"],
        "due_date": i["due_date"],
        "confidential": flag(&i["confidential"]),
        "comments": i["user_notes_count"],
        "created_at": i["created_at"],
        "updated_at": i["updated_at"],
        "closed_at": i["closed_at"],
        "url": i["web_url"],
    }))
}

pub(crate) const LIST_ISSUES: ToolSpec = tool! {
    name: "gitlab_list_issues",
    effect: Read,
    results: Private,
    args: ListIssues,
    run: list_issues,
    keywords: ["issues", "bugs", "tickets", "backlog", "assigned to me", "labels", "tasks", "open issues", "open bugs"],
    description: "List GitLab issues (bugs, tickets) in a project, or across GitLab when no project is given (then yours by default), filtered by state (opened or closed), labels, assignee, author or search words.",
};

pub(crate) async fn list_issues(up: Arc<dyn Upstream>, args: ListIssues) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let path = match &args.project {
        Some(p) => format!("{}/issues", p.path()),
        None => "/issues".to_string(),
    };
    let req = HttpRequest::get(path)
        .query("state", wire(&args.state))
        .query_opt("labels", args.labels.as_ref().filter(|l| !l.is_empty()).map(|l| l.join(",")))
        .query_opt("assignee_username", args.assignee_username.as_deref())
        .query_opt("author_username", args.author_username.as_deref())
        .query_opt("search", args.search.as_deref())
        .query_opt("scope", args.scope.as_ref().map(wire))
        .query_opt("milestone", args.milestone.as_deref())
        .query_opt("order_by", args.order_by.as_ref().map(wire));
    let resp = up.send(with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    let issues: Vec<Value> = body.as_array().into_iter().flatten().map(shape_issue).collect();
    let out = compact(json!({"issues": issues, "next_cursor": next_cursor(&resp, per_page)}));
    Ok(with_raw(out, args.include_raw, &body))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateIssue {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The issue title.
    #[schemars(length(min = 1))]
    title: String,
    /// The description in Markdown.
    description: Option<String>,
    /// Label names to apply (created in the project if they do not exist).
    labels: Option<Vec<String>>,
    /// Numeric user ids to assign.
    assignee_ids: Option<Vec<u64>>,
    /// Numeric id of the milestone to put the issue in.
    milestone_id: Option<u64>,
    /// Due date, YYYY-MM-DD.
    due_date: Option<String>,
    /// Only visible to project members with at least Planner/Reporter access.
    #[serde(default)]
    confidential: bool,
}

pub(crate) const CREATE_ISSUE: ToolSpec = tool! {
    name: "gitlab_create_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: CreateIssue,
    run: create_issue,
    keywords: ["new issue", "file a bug", "open ticket", "report", "feature request", "task"],
    description: "Open (file) a new issue in a GitLab project: a bug, ticket or task, with description (Markdown), labels, assignees, milestone and due date.",
};

pub(crate) async fn create_issue(up: Arc<dyn Upstream>, args: CreateIssue) -> Result<Value, ToolError> {
    if let Some(d) = &args.due_date {
        check_date("due_date", d)?;
    }
    let mut body = json!({"title": args.title});
    if let Some(d) = args.description {
        body["description"] = json!(d);
    }
    if let Some(l) = args.labels.filter(|l| !l.is_empty()) {
        body["labels"] = json!(l.join(","));
    }
    if let Some(a) = args.assignee_ids {
        body["assignee_ids"] = json!(a);
    }
    if let Some(m) = args.milestone_id {
        body["milestone_id"] = json!(m);
    }
    if let Some(d) = args.due_date {
        body["due_date"] = json!(d);
    }
    if args.confidential {
        body["confidential"] = json!(true);
    }
    let issue = up.send(HttpRequest::post(format!("{}/issues", args.project.path())).json(body)).await?.json()?;
    Ok(shape_issue(&issue))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StateEvent {
    Close,
    Reopen,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateIssue {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The issue's iid: the number in #123 (not its global id).
    #[schemars(range(min = 1))]
    issue_iid: u64,
    /// New title.
    title: Option<String>,
    /// New description in Markdown (replaces the old one).
    description: Option<String>,
    /// close or reopen the issue.
    state_event: Option<StateEvent>,
    /// Replace all labels with these ([] removes every label).
    labels: Option<Vec<String>>,
    /// Labels to add, keeping the others.
    add_labels: Option<Vec<String>>,
    /// Labels to remove, keeping the others.
    remove_labels: Option<Vec<String>>,
    /// Replace the assignees with these numeric user ids ([] unassigns everyone).
    assignee_ids: Option<Vec<u64>>,
    /// Numeric id of the milestone to move the issue to (0 removes it).
    milestone_id: Option<u64>,
    /// Due date, YYYY-MM-DD.
    due_date: Option<String>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "gitlab_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: UpdateIssue,
    run: update_issue,
    keywords: ["close issue", "reopen", "edit issue", "relabel", "assign", "due date", "close", "change labels", "reassign"],
    description: "Edit a GitLab issue: close or reopen it, change title or description, add or remove labels, set assignees, milestone or due date.",
};

pub(crate) async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    if let Some(d) = &args.due_date {
        check_date("due_date", d)?;
    }
    let mut body = serde_json::Map::new();
    if let Some(t) = args.title {
        body.insert("title".into(), json!(t));
    }
    if let Some(d) = args.description {
        body.insert("description".into(), json!(d));
    }
    if let Some(s) = args.state_event {
        body.insert("state_event".into(), json!(wire(&s)));
    }
    if let Some(l) = args.labels {
        body.insert("labels".into(), json!(l.join(",")));
    }
    if let Some(l) = args.add_labels.filter(|l| !l.is_empty()) {
        body.insert("add_labels".into(), json!(l.join(",")));
    }
    if let Some(l) = args.remove_labels.filter(|l| !l.is_empty()) {
        body.insert("remove_labels".into(), json!(l.join(",")));
    }
    if let Some(a) = args.assignee_ids {
        body.insert("assignee_ids".into(), json!(a));
    }
    if let Some(m) = args.milestone_id {
        body.insert("milestone_id".into(), json!(m));
    }
    if let Some(d) = args.due_date {
        body.insert("due_date".into(), json!(d));
    }
    if body.is_empty() {
        return Err(ToolError::invalid(
            "nothing to change: give at least one of title, description, state_event, labels, add_labels, remove_labels, assignee_ids, milestone_id, due_date",
        ));
    }
    let path = format!("{}/issues/{}", args.project.path(), args.issue_iid);
    let issue = up.send(HttpRequest::new(Method::Put, path).json(Value::Object(body))).await?.json()?;
    Ok(shape_issue(&issue))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TargetType {
    Mr,
    Issue,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateComment {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// mr (a merge request) or issue.
    target_type: TargetType,
    /// The iid of the merge request (!123) or issue (#123).
    #[schemars(range(min = 1))]
    iid: u64,
    /// The comment in Markdown.
    #[schemars(length(min = 1))]
    body: String,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "gitlab_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "note", "reply", "discussion", "MR comment", "issue comment"],
    description: "Add a comment (note) to a GitLab merge request (MR) or issue, in Markdown.",
};

pub(crate) async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let (collection, sigil) = match args.target_type {
        TargetType::Mr => ("merge_requests", '!'),
        TargetType::Issue => ("issues", '#'),
    };
    let path = format!("{}/{collection}/{}/notes", args.project.path(), args.iid);
    let note = up.send(HttpRequest::post(path).json(json!({"body": args.body}))).await?.json()?;
    Ok(compact(json!({
        "id": note["id"],
        "on": format!("{sigil}{}", args.iid),
        "noteable_type": note["noteable_type"],
        "author": username(&note["author"]),
        "created_at": note["created_at"],
    })))
}
