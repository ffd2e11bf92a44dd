//! Issues, issue and PR search, and conversation comments.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::repos::{Order, SEARCH_LIMIT};
use super::*;

/// Longest comment body returned with an issue.
const COMMENT_CHARS: usize = 2_000;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IssueState {
    #[default]
    Open,
    Closed,
    All,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum IssueSort {
    Created,
    Updated,
    Comments,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListIssues {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// open (default), closed or all.
    #[serde(default)]
    state: IssueState,
    /// Only issues carrying all of these labels, e.g. ["bug", "p1"].
    labels: Option<Vec<String>>,
    /// Only issues assigned to this login; "none" for unassigned, "*" for assigned to anyone.
    assignee: Option<String>,
    /// Only issues created by this login.
    creator: Option<String>,
    /// Only issues updated at or after this time: YYYY-MM-DD or an ISO 8601 timestamp.
    since: Option<String>,
    /// Order by created (default), updated or comments, newest / most first.
    sort: Option<IssueSort>,
    /// How many issues to ask GitHub for per page (1-100); pull requests on the page are dropped, so fewer may come back.
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full issue objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

fn non_empty(v: Value) -> Value {
    match &v {
        Value::Array(a) if a.is_empty() => Value::Null,
        _ => v,
    }
}

pub(super) fn shape_issue(i: &Value) -> Value {
    compact(json!({
        "number": i["number"],
        "title": i["title"],
        "state": i["state"],
        "state_reason": i["state_reason"],
        "author": login(&i["user"]),
        "assignees": non_empty(logins(&i["assignees"])),
        "labels": non_empty(label_names(&i["labels"])),
        "milestone": i["milestone"]["title"],
        "comments": i["comments"],
        "created_at": i["created_at"],
        "updated_at": i["updated_at"],
        "closed_at": i["closed_at"],
        "url": i["html_url"],
    }))
}

pub(crate) const LIST_ISSUES: ToolSpec = tool! {
    name: "github_list_issues",
    effect: Read,
    results: PrivateUnlessPublic,
    args: ListIssues,
    run: list_issues,
    keywords: ["issues", "bugs", "tickets", "open issues", "backlog", "tasks", "labels", "open bugs", "closed issues"],
    description: "List issues (bugs, tickets) in one GitHub repository, filtered by state (open or closed), labels, assignee or update time; pull requests are left out.",
};

pub(crate) async fn list_issues(up: Arc<dyn Upstream>, args: ListIssues) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let since = args.since.as_deref().map(|s| iso_timestamp("since", s)).transpose()?;
    let req = HttpRequest::get(format!("{}/issues", repo_path(&args.owner, &args.repo)))
        .query("state", wire(&args.state))
        .query_opt("labels", args.labels.as_ref().filter(|l| !l.is_empty()).map(|l| l.join(",")))
        .query_opt("assignee", args.assignee.as_deref())
        .query_opt("creator", args.creator.as_deref())
        .query_opt("since", since)
        .query_opt("sort", args.sort.as_ref().map(wire));
    let public = super::flow::repo_is_public(&*up, &args.owner, &args.repo).await;
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    if public {
        up.mark_public();
    }
    // The issues endpoint also returns pull requests; they carry a `pull_request` key.
    let issues: Vec<&Value> =
        body.as_array().into_iter().flatten().filter(|i| i.get("pull_request").is_none()).collect();
    let shaped: Vec<Value> = issues.iter().map(|i| shape_issue(i)).collect();
    let raw = Value::Array(issues.into_iter().cloned().collect());
    Ok(with_raw(compact(json!({"issues": shaped, "next_cursor": next_cursor(&resp)})), args.include_raw, &raw))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum IssueSearchSort {
    Comments,
    Reactions,
    Created,
    Updated,
    Interactions,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchIssues {
    /// Search words and qualifiers, e.g. "is:pr is:open review-requested:@me", "is:issue label:bug repo:acme/api crash", "author:alice is:merged".
    #[schemars(length(min = 1))]
    q: String,
    /// Sort by comments, reactions, created, updated or interactions; default is best match.
    sort: Option<IssueSearchSort>,
    /// Sort direction with sort: desc (default) or asc.
    order: Option<Order>,
    /// How many results to return (1-100).
    #[serde_inline_default(SEARCH_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full result items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_ISSUES: ToolSpec = tool! {
    name: "github_search_issues",
    effect: Read,
    results: Private,
    args: SearchIssues,
    run: search_issues,
    keywords: ["find issues", "pull requests", "PRs", "review requested", "assigned to me", "my PRs", "mentions", "tickets", "search pull requests", "review requests", "across repositories", "involving me"],
    description: "Search issues and pull requests (PRs) across GitHub with qualifiers: is:issue / is:pr, is:open, repo:owner/name, author:alice, assignee:@me, review-requested:@me, label:bug, mentions:@me.",
};

pub(crate) async fn search_issues(up: Arc<dyn Upstream>, args: SearchIssues) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let req = HttpRequest::get("/search/issues")
        .query("q", &args.q)
        .query_opt("sort", args.sort.as_ref().map(wire))
        .query_opt("order", args.order.as_ref().map(wire));
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    let items: Vec<Value> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            let is_pr = i.get("pull_request").is_some();
            let repo = i["repository_url"].as_str().and_then(|u| u.split("/repos/").nth(1)).map(str::to_string);
            let merged = i["pull_request"]["merged_at"].as_str().map(|_| true);
            merge(
                compact(json!({"type": if is_pr { "pr" } else { "issue" }, "repo": repo})),
                merge(shape_issue(i), compact(json!({"draft": flag(&i["draft"]), "merged": merged}))),
            )
        })
        .collect();
    let out = compact(json!({
        "total_count": body["total_count"],
        "items": items,
        "next_cursor": next_cursor(&resp),
    }));
    Ok(with_raw(out, args.include_raw, &body["items"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetIssue {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The issue number (the #123 in the URL); pull request numbers work too.
    #[schemars(range(min = 1))]
    issue_number: u64,
    /// Also return the comments (oldest first).
    #[serde(default)]
    include_comments: bool,
    /// How many comments to return with include_comments (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    comments_limit: u32,
    /// Longest issue body to return; longer bodies are cut and marked truncated.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 100_000))]
    max_chars: usize,
    /// Also return GitHub's full issue object under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_ISSUE: ToolSpec = tool! {
    name: "github_get_issue",
    effect: Read,
    results: PrivateUnlessPublic,
    args: GetIssue,
    run: get_issue,
    keywords: ["issue details", "bug", "ticket", "comments", "discussion", "thread", "show issue", "issue comments"],
    description: "Get one GitHub issue (bug, ticket) by number with its body, labels, assignees and state, optionally with its comments (the discussion thread).",
};

pub(crate) async fn get_issue(up: Arc<dyn Upstream>, args: GetIssue) -> Result<Value, ToolError> {
    let path = format!("{}/issues/{}", repo_path(&args.owner, &args.repo), args.issue_number);
    let public = super::flow::repo_is_public(&*up, &args.owner, &args.repo).await;
    let issue = send(&*up, HttpRequest::get(&path)).await?.json()?;
    if public {
        up.mark_public();
    }
    let (body, truncated) = cut(issue["body"].as_str(), args.max_chars);
    let mut out = merge(
        shape_issue(&issue),
        compact(json!({
            "body": body,
            "truncated": truncated.then_some(true),
            "is_pull_request": issue.get("pull_request").map(|_| true),
            "locked": flag(&issue["locked"]),
            "closed_by": login(&issue["closed_by"]),
        })),
    );
    if args.include_comments {
        let req = with_paging(HttpRequest::get(format!("{path}/comments")), 1, args.comments_limit);
        let comments = send(&*up, req).await?.json()?;
        let shaped: Vec<Value> = comments.as_array().into_iter().flatten().map(shape_comment).collect();
        let total = issue["comments"].as_u64().unwrap_or(0);
        if total > shaped.len() as u64 {
            out["more_comments"] = json!(total - shaped.len() as u64);
        }
        out["comment_list"] = Value::Array(shaped);
    }
    Ok(with_raw(out, args.include_raw, &issue))
}

fn shape_comment(c: &Value) -> Value {
    let (body, truncated) = cut(c["body"].as_str(), COMMENT_CHARS);
    compact(json!({
        "id": c["id"],
        "author": login(&c["user"]),
        "created_at": c["created_at"],
        "body": body,
        "truncated": truncated.then_some(true),
        "url": c["html_url"],
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateIssue {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The issue title.
    #[schemars(length(min = 1))]
    title: String,
    /// The issue description in Markdown.
    body: Option<String>,
    /// Label names to apply, e.g. ["bug"]; labels must already exist unless you can push to the repository.
    labels: Option<Vec<String>>,
    /// Logins to assign, e.g. ["alice"].
    assignees: Option<Vec<String>>,
    /// Milestone number (not its title) to put the issue in.
    #[schemars(range(min = 1))]
    milestone: Option<u64>,
}

pub(crate) const CREATE_ISSUE: ToolSpec = tool! {
    name: "github_create_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: CreateIssue,
    run: create_issue,
    keywords: ["new issue", "file a bug", "report bug", "open ticket", "feature request", "task"],
    description: "Open (file) a new issue in a GitHub repository: a bug report, ticket or feature request, with optional body (Markdown), labels, assignees and milestone.",
};

pub(crate) async fn create_issue(up: Arc<dyn Upstream>, args: CreateIssue) -> Result<Value, ToolError> {
    let mut body = json!({"title": args.title});
    if let Some(b) = args.body {
        body["body"] = json!(b);
    }
    if let Some(l) = args.labels {
        body["labels"] = json!(l);
    }
    if let Some(a) = args.assignees {
        body["assignees"] = json!(a);
    }
    if let Some(m) = args.milestone {
        body["milestone"] = json!(m);
    }
    let path = format!("{}/issues", repo_path(&args.owner, &args.repo));
    let issue = send(&*up, HttpRequest::post(path).json(body)).await?.json()?;
    Ok(shape_issue(&issue))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OpenClosed {
    Open,
    Closed,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StateReason {
    Completed,
    NotPlanned,
    Duplicate,
    Reopened,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateIssue {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The issue number.
    #[schemars(range(min = 1))]
    issue_number: u64,
    /// New title.
    title: Option<String>,
    /// New description in Markdown (replaces the old one).
    body: Option<String>,
    /// closed to close the issue, open to reopen it.
    state: Option<OpenClosed>,
    /// Why it was closed or reopened: completed, not_planned, duplicate or reopened; implies the matching state when state is omitted.
    state_reason: Option<StateReason>,
    /// Replace all labels with these names ([] removes every label).
    labels: Option<Vec<String>>,
    /// Replace all assignees with these logins ([] unassigns everyone).
    assignees: Option<Vec<String>>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "github_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: UpdateIssue,
    run: update_issue,
    keywords: ["close issue", "reopen", "edit issue", "label", "assign", "not planned", "resolve", "close", "change labels", "assign issue", "reassign"],
    description: "Edit a GitHub issue: change title or body, close it (completed or not planned) or reopen it, replace its labels or assignees.",
};

pub(crate) async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    let mut body = serde_json::Map::new();
    if let Some(t) = args.title {
        body.insert("title".into(), json!(t));
    }
    if let Some(b) = args.body {
        body.insert("body".into(), json!(b));
    }
    let state = args.state.or(match args.state_reason {
        Some(StateReason::Reopened) => Some(OpenClosed::Open),
        Some(_) => Some(OpenClosed::Closed),
        None => None,
    });
    if let Some(s) = state {
        body.insert("state".into(), json!(wire(&s)));
    }
    if let Some(r) = args.state_reason {
        body.insert("state_reason".into(), json!(wire(&r)));
    }
    if let Some(l) = args.labels {
        body.insert("labels".into(), json!(l));
    }
    if let Some(a) = args.assignees {
        body.insert("assignees".into(), json!(a));
    }
    if body.is_empty() {
        return Err(ToolError::invalid(
            "nothing to change: give at least one of title, body, state, state_reason, labels, assignees",
        ));
    }
    let path = format!("{}/issues/{}", repo_path(&args.owner, &args.repo), args.issue_number);
    let issue = send(&*up, HttpRequest::new(Method::Patch, path).json(Value::Object(body))).await?.json()?;
    Ok(shape_issue(&issue))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateComment {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The issue or pull request number to comment on.
    #[schemars(range(min = 1))]
    issue_number: u64,
    /// The comment in Markdown.
    #[schemars(length(min = 1))]
    body: String,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "github_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "respond", "discussion", "PR comment", "note"],
    description: "Add a comment (reply) to a GitHub issue or to a pull request's conversation, in Markdown.",
};

pub(crate) async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let path = format!("{}/issues/{}/comments", repo_path(&args.owner, &args.repo), args.issue_number);
    let c = send(&*up, HttpRequest::post(path).json(json!({"body": args.body}))).await?.json()?;
    Ok(compact(json!({
        "id": c["id"],
        "issue_number": args.issue_number,
        "author": login(&c["user"]),
        "created_at": c["created_at"],
        "url": c["html_url"],
    })))
}
