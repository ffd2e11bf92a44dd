//! Pull requests: list, read (with diff and files), open, merge and review.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::issues::IssueState;
use super::repos::Order;
use super::*;

const ACCEPT_DIFF: &str = "application/vnd.github.diff";

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PrSort {
    Created,
    Updated,
    Popularity,
    LongRunning,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListPrs {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// open (default), closed (includes merged) or all.
    #[serde(default)]
    state: IssueState,
    /// Only PRs from this head branch: "branch" (in this repository) or "user:branch" (from a fork).
    head: Option<String>,
    /// Only PRs targeting this base branch, e.g. "main".
    base: Option<String>,
    /// Order by created (default), updated, popularity (comments) or long-running.
    sort: Option<PrSort>,
    /// desc (default) or asc.
    direction: Option<Order>,
    /// How many pull requests to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full pull request objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

fn shape_pr(p: &Value) -> Value {
    let state = if p["merged_at"].is_string() { json!("merged") } else { p["state"].clone() };
    let head_repo = p["head"]["repo"]["full_name"].as_str();
    let base_repo = p["base"]["repo"]["full_name"].as_str();
    let mut reviewers: Vec<Value> = p["requested_reviewers"].as_array().into_iter().flatten().map(login).collect();
    reviewers.extend(
        p["requested_teams"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| json!(format!("team:{}", t["slug"].as_str().unwrap_or("")))),
    );
    compact(json!({
        "number": p["number"],
        "title": p["title"],
        "state": state,
        "draft": if p["draft"].as_bool() == Some(true) { json!(true) } else { Value::Null },
        "author": login(&p["user"]),
        "head": p["head"]["ref"],
        "base": p["base"]["ref"],
        "head_repo": head_repo.filter(|h| Some(*h) != base_repo),
        "labels": label_names(&p["labels"]).as_array().filter(|l| !l.is_empty()),
        "requested_reviewers": (!reviewers.is_empty()).then_some(reviewers),
        "assignees": logins(&p["assignees"]).as_array().filter(|a| !a.is_empty()),
        "created_at": p["created_at"],
        "updated_at": p["updated_at"],
        "closed_at": p["closed_at"],
        "merged_at": p["merged_at"],
        "url": p["html_url"],
    }))
}

fn pulls_path(owner: &str, repo: &str) -> String {
    format!("{}/pulls", repo_path(owner, repo))
}

pub(crate) const LIST_PRS: ToolSpec = tool! {
    name: "github_list_prs",
    effect: Read,
    results: PrivateUnlessPublic,
    args: ListPrs,
    run: list_prs,
    keywords: ["pull requests", "PRs", "open PRs", "code review", "merge requests", "branches", "pending PRs", "PRs to review"],
    description: "List pull requests (PRs) in a GitHub repository, filtered by state (open, closed or all), head branch or base branch, with author, branches, draft flag and reviewers.",
};

pub(crate) async fn list_prs(up: Arc<dyn Upstream>, args: ListPrs) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    // GitHub filters head by "user:ref"; a bare branch means this repository's owner.
    let head =
        args.head.as_deref().map(|h| if h.contains(':') { h.to_string() } else { format!("{}:{h}", args.owner) });
    let req = HttpRequest::get(pulls_path(&args.owner, &args.repo))
        .query("state", wire(&args.state))
        .query_opt("head", head)
        .query_opt("base", args.base.as_deref())
        .query_opt("sort", args.sort.as_ref().map(wire))
        .query_opt("direction", args.direction.as_ref().map(wire));
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    super::flow::mark_if_all_public(&*up, body.as_array().into_iter().flatten().map(|p| &p["base"]["repo"]));
    let prs: Vec<Value> = body.as_array().into_iter().flatten().map(shape_pr).collect();
    Ok(with_raw(compact(json!({"pull_requests": prs, "next_cursor": next_cursor(&resp)})), args.include_raw, &body))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetPr {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The pull request number (the #123 in the URL).
    #[schemars(range(min = 1))]
    pull_number: u64,
    /// Also return the unified diff of the whole PR (cut at max_chars).
    #[serde(default)]
    include_diff: bool,
    /// Also return the changed files with their status and line counts (up to 100 files).
    #[serde(default)]
    include_files: bool,
    /// Longest description and longest diff to return; longer ones are cut and marked truncated.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 200_000))]
    max_chars: usize,
    /// Also return GitHub's full pull request object under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_PR: ToolSpec = tool! {
    name: "github_get_pr",
    effect: Read,
    results: PrivateUnlessPublic,
    args: GetPr,
    run: get_pr,
    keywords: ["pull request", "PR details", "diff", "changes", "changed files", "patch", "mergeable", "review", "show PR", "what changed", "files changed"],
    description: "Get one pull request (PR) with its description, branches, mergeability and size; optionally the unified diff (cut at max_chars) and the list of changed files.",
};

pub(crate) async fn get_pr(up: Arc<dyn Upstream>, args: GetPr) -> Result<Value, ToolError> {
    let path = format!("{}/{}", pulls_path(&args.owner, &args.repo), args.pull_number);
    let pr = send(&*up, HttpRequest::get(&path)).await?.json()?;
    super::flow::mark_if_all_public(&*up, [&pr["base"]["repo"]]);
    let (body, body_cut) = cut(pr["body"].as_str(), args.max_chars);
    let mut out = merge(
        shape_pr(&pr),
        compact(json!({
            "body": body,
            "head_sha": pr["head"]["sha"],
            "mergeable": pr["mergeable"],
            "mergeable_state": pr["mergeable_state"],
            "merged_by": login(&pr["merged_by"]),
            "merge_commit_sha": pr["merge_commit_sha"].as_str().filter(|_| pr["merged_at"].is_string()),
            "auto_merge": pr["auto_merge"].is_object().then_some(true),
            "commits": pr["commits"],
            "additions": pr["additions"],
            "deletions": pr["deletions"],
            "changed_files": pr["changed_files"],
            "comments": pr["comments"],
            "review_comments": pr["review_comments"],
        })),
    );
    let mut truncated = body_cut;
    if args.include_diff {
        let diff = send_accepting(&*up, HttpRequest::get(&path), ACCEPT_DIFF).await?.text();
        let (diff, diff_cut) = truncate_chars(&diff, args.max_chars);
        out["diff"] = json!(diff);
        out["diff_truncated"] = json!(diff_cut);
        truncated |= diff_cut;
    }
    if args.include_files {
        let files = send(&*up, with_paging(HttpRequest::get(format!("{path}/files")), 1, 100)).await?.json()?;
        let files: Vec<Value> = files
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                compact(json!({
                    "path": f["filename"],
                    "status": f["status"],
                    "previous_path": f["previous_filename"],
                    "additions": f["additions"],
                    "deletions": f["deletions"],
                }))
            })
            .collect();
        let total = pr["changed_files"].as_u64().unwrap_or(files.len() as u64);
        if total > files.len() as u64 {
            out["more_files"] = json!(total - files.len() as u64);
        }
        out["files"] = Value::Array(files);
    }
    out["truncated"] = json!(truncated);
    Ok(with_raw(out, args.include_raw, &pr))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreatePr {
    /// The account that owns the repository (user or organization) the PR is opened in.
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The pull request title.
    #[schemars(length(min = 1))]
    title: String,
    /// The branch with the changes: "branch" in this repository, or "user:branch" from a fork.
    #[schemars(length(min = 1))]
    head: String,
    /// The branch to merge into, e.g. "main".
    #[schemars(length(min = 1))]
    base: String,
    /// The PR description in Markdown (what changed and why; "Closes #12" links an issue).
    body: Option<String>,
    /// Open it as a draft (not ready for review).
    #[serde(default)]
    draft: bool,
    /// Let maintainers of the base repository push to the head branch (forks only).
    maintainer_can_modify: Option<bool>,
}

pub(crate) const CREATE_PR: ToolSpec = tool! {
    name: "github_create_pr",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: CreatePr,
    run: create_pr,
    keywords: ["open PR", "new pull request", "propose changes", "submit for review", "draft PR", "raise PR", "create pull request"],
    description: "Open a pull request (PR) on GitHub to merge a head branch into a base branch, with title, description, and optionally as a draft.",
};

pub(crate) async fn create_pr(up: Arc<dyn Upstream>, args: CreatePr) -> Result<Value, ToolError> {
    let mut body = json!({"title": args.title, "head": args.head, "base": args.base, "draft": args.draft});
    if let Some(b) = args.body {
        body["body"] = json!(b);
    }
    if let Some(m) = args.maintainer_can_modify {
        body["maintainer_can_modify"] = json!(m);
    }
    let pr = send(&*up, HttpRequest::post(pulls_path(&args.owner, &args.repo)).json(body)).await?.json()?;
    Ok(shape_pr(&pr))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MergeMethod {
    Merge,
    Squash,
    Rebase,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergePr {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The pull request number.
    #[schemars(range(min = 1))]
    pull_number: u64,
    /// merge (a merge commit; GitHub's default), squash (one commit) or rebase (replay the commits).
    merge_method: Option<MergeMethod>,
    /// Title of the merge or squash commit.
    commit_title: Option<String>,
    /// Extra detail for the merge or squash commit message.
    commit_message: Option<String>,
    /// Only merge if the PR's head is still this commit sha (head_sha from github_get_pr).
    sha: Option<String>,
}

pub(crate) const MERGE_PR: ToolSpec = tool! {
    name: "github_merge_pr",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: MergePr,
    run: merge_pr,
    keywords: ["merge PR", "squash", "rebase", "land", "ship"],
    description: "Merge a GitHub pull request (PR) with a merge commit, squash or rebase; fails with a clear message when it conflicts or the head changed.",
};

pub(crate) async fn merge_pr(up: Arc<dyn Upstream>, args: MergePr) -> Result<Value, ToolError> {
    let mut body = serde_json::Map::new();
    if let Some(m) = args.merge_method {
        body.insert("merge_method".into(), json!(wire(&m)));
    }
    if let Some(t) = args.commit_title {
        body.insert("commit_title".into(), json!(t));
    }
    if let Some(m) = args.commit_message {
        body.insert("commit_message".into(), json!(m));
    }
    if let Some(s) = args.sha {
        body.insert("sha".into(), json!(s));
    }
    let path = format!("{}/{}/merge", pulls_path(&args.owner, &args.repo), args.pull_number);
    let n = args.pull_number;
    let resp = match send(&*up, HttpRequest::new(Method::Put, path).json(Value::Object(body))).await {
        Err(ToolError::Upstream { status: status @ (405 | 409), message, retry_after }) => {
            let why = if status == 409 {
                "the head branch changed (it no longer matches sha) or conflicts with the base; re-read it with github_get_pr and retry with its current head_sha"
            } else {
                "GitHub will not merge it as it is: merge conflicts with the base branch, failing required checks, missing approvals, or still a draft; see mergeable_state from github_get_pr"
            };
            return Err(ToolError::Upstream {
                status,
                message: format!("pull request #{n} was not merged: {message} ({why})"),
                retry_after,
            });
        }
        other => other?,
    };
    let r = resp.json()?;
    Ok(compact(json!({
        "pull_number": n,
        "merged": r["merged"],
        "sha": r["sha"],
        "message": r["message"],
    })))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ReviewEvent {
    Approve,
    RequestChanges,
    Comment,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Side {
    Left,
    Right,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewComment {
    /// File path relative to the repository root, as in the PR's files.
    #[schemars(length(min = 1))]
    path: String,
    /// Line number in the file the comment is on (the new version for side right).
    #[schemars(range(min = 1))]
    line: u64,
    /// The comment text in Markdown.
    #[schemars(length(min = 1))]
    body: String,
    /// right (default: the new version, added or unchanged lines) or left (the old version, deleted lines).
    side: Option<Side>,
    /// First line of a multi-line comment ending at line.
    #[schemars(range(min = 1))]
    start_line: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreatePrReview {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The pull request number.
    #[schemars(range(min = 1))]
    pull_number: u64,
    /// approve, request_changes or comment (neither approves nor blocks).
    event: ReviewEvent,
    /// The review summary in Markdown; required for request_changes, and for comment without inline comments.
    body: Option<String>,
    /// Inline comments on specific lines of changed files.
    comments: Option<Vec<ReviewComment>>,
    /// Review this commit sha instead of the PR's latest commit.
    commit_id: Option<String>,
}

pub(crate) const CREATE_PR_REVIEW: ToolSpec = tool! {
    name: "github_create_pr_review",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: CreatePrReview,
    run: create_pr_review,
    keywords: ["review", "approve", "LGTM", "request changes", "code review", "inline comments", "line comment", "approve PR", "review a pull request"],
    description: "Submit a pull request review on GitHub: approve, request changes or comment, with an optional summary and inline comments on specific lines of files.",
};

pub(crate) async fn create_pr_review(up: Arc<dyn Upstream>, args: CreatePrReview) -> Result<Value, ToolError> {
    let has_body = args.body.as_deref().is_some_and(|b| !b.trim().is_empty());
    let has_comments = args.comments.as_ref().is_some_and(|c| !c.is_empty());
    match args.event {
        ReviewEvent::RequestChanges if !has_body => {
            return Err(invalid(
                "body",
                "request_changes needs a body saying what to change",
                "required for request_changes",
            ));
        }
        ReviewEvent::Comment if !has_body && !has_comments => {
            return Err(invalid("body", "a comment review needs a body or inline comments", "give body or comments"));
        }
        _ => {}
    }
    let mut body = json!({"event": wire(&args.event).to_ascii_uppercase()});
    if let Some(b) = args.body {
        body["body"] = json!(b);
    }
    if let Some(c) = args.commit_id {
        body["commit_id"] = json!(c);
    }
    if let Some(comments) = args.comments.filter(|c| !c.is_empty()) {
        let mut out = Vec::new();
        for (i, c) in comments.into_iter().enumerate() {
            if c.start_line.is_some_and(|s| s >= c.line) {
                return Err(invalid(
                    &format!("comments/{i}/start_line"),
                    "start_line must come before line",
                    "below line",
                ));
            }
            let side = wire(&c.side.unwrap_or(Side::Right)).to_ascii_uppercase();
            let mut v = json!({"path": c.path, "line": c.line, "side": side, "body": c.body});
            if let Some(s) = c.start_line {
                v["start_line"] = json!(s);
                v["start_side"] = json!(side);
            }
            out.push(v);
        }
        body["comments"] = Value::Array(out);
    }
    let path = format!("{}/{}/reviews", pulls_path(&args.owner, &args.repo), args.pull_number);
    let r = send(&*up, HttpRequest::post(path).json(body)).await?.json()?;
    Ok(compact(json!({
        "id": r["id"],
        "state": r["state"],
        "author": login(&r["user"]),
        "commit_id": r["commit_id"],
        "submitted_at": r["submitted_at"],
        "url": r["html_url"],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Body, Method};
    use crate::mock::MockUpstream;

    /// list_prs: a bare head branch is qualified with the owner (GitHub filters by `user:ref`),
    /// GitHub's headers ride on the request, paging is sent as numbers, the `Link` header's next
    /// page becomes the opaque cursor, and a PR from a fork names its head repository.
    #[test]
    fn list_prs_builds_the_request_and_shapes_the_page() {
        let pr = json!({
            "number": 7, "title": "Fix parser", "state": "open", "draft": false, "merged_at": null,
            "user": {"login": "octo", "id": 1}, "node_id": "PR_x", "_links": {},
            "head": {"ref": "feature", "repo": {"full_name": "octo/demo"}},
            "base": {"ref": "main", "repo": {"full_name": "acme/demo"}},
            "labels": [], "requested_reviewers": [{"login": "rev"}], "requested_teams": [{"slug": "core"}],
            "assignees": [], "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z"
        });
        let link = r#"<https://api.github.com/repositories/1/pulls?state=open&per_page=10&page=2>; rel="next""#;
        let (out, requests) = MockUpstream::new()
            .json_with_headers(json!([pr]), &[("link", link)])
            .ok(&LIST_PRS, json!({"owner": "acme", "repo": "demo", "head": "feature", "limit": 10}));
        let req = &requests[0];
        assert_eq!((req.method, req.path.as_str(), &req.body), (Method::Get, "/repos/acme/demo/pulls", &Body::None));
        let query: Vec<(&str, &str)> = req.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(query, [("state", "open"), ("head", "acme:feature"), ("per_page", "10"), ("page", "1")]);
        assert!(req.headers.contains(&("accept".into(), "application/vnd.github+json".into())));
        assert!(req.headers.contains(&("x-github-api-version".into(), "2022-11-28".into())));
        assert_eq!(out["next_cursor"], "2:10");
        let shaped = &out["pull_requests"][0];
        assert_eq!(shaped["number"], 7);
        assert_eq!(shaped["head_repo"], "octo/demo");
        assert_eq!(shaped["requested_reviewers"], json!(["rev", "team:core"]));
        assert!(shaped.get("node_id").is_none() && shaped.get("draft").is_none());
    }

    /// A cursor this tool did not issue is an argument error and nothing is sent.
    #[test]
    fn list_prs_refuses_a_foreign_cursor() {
        let (result, requests) =
            MockUpstream::new().call(&LIST_PRS, json!({"owner": "acme", "repo": "demo", "cursor": "page=2"}));
        assert!(matches!(result, Err(ToolError::InvalidArguments { .. })), "{result:?}");
        assert!(requests.is_empty());
    }
}
