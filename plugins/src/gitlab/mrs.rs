//! Merge requests: list, read (with diffs), open and merge.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::*;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MrState {
    #[default]
    Opened,
    Closed,
    Merged,
    Locked,
    All,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scope {
    CreatedByMe,
    AssignedToMe,
    All,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OrderBy {
    CreatedAt,
    UpdatedAt,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListMrs {
    /// The project: its path like "group/subgroup/project" or its numeric id. Omit to list across all of GitLab.
    project: Option<ProjectId>,
    /// opened (default), merged, closed, locked or all.
    #[serde(default)]
    state: MrState,
    /// created_by_me, assigned_to_me or all. Without a project GitLab defaults to created_by_me; within a project to all.
    scope: Option<Scope>,
    /// Only MRs opened by this username.
    author_username: Option<String>,
    /// Only MRs where this username is a reviewer (your review queue: your own username).
    reviewer_username: Option<String>,
    /// Only MRs assigned to this username.
    assignee_username: Option<String>,
    /// Only MRs carrying all of these labels.
    labels: Option<Vec<String>>,
    /// Words to find in titles and descriptions.
    search: Option<String>,
    /// Only MRs from this source branch.
    source_branch: Option<String>,
    /// Only MRs into this target branch.
    target_branch: Option<String>,
    /// Order by created_at (default) or updated_at, newest first.
    order_by: Option<OrderBy>,
    /// How many merge requests to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitLab's full merge request objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

fn shape_mr(m: &Value) -> Value {
    compact(json!({
        "iid": m["iid"],
        "reference": m["references"]["full"],
        "title": m["title"],
        "state": m["state"],
        "draft": flag(&m["draft"]),
        "author": username(&m["author"]),
        "assignees": usernames(&m["assignees"]),
        "reviewers": usernames(&m["reviewers"]),
        "source_branch": m["source_branch"],
        "target_branch": m["target_branch"],
        "labels": non_empty(&m["labels"]),
        "merge_status": m["detailed_merge_status"],
        "created_at": m["created_at"],
        "updated_at": m["updated_at"],
        "merged_at": m["merged_at"],
        "url": m["web_url"],
    }))
}

pub(crate) const LIST_MRS: ToolSpec = tool! {
    name: "gitlab_list_mrs",
    effect: Read,
    results: Private,
    args: ListMrs,
    run: list_mrs,
    keywords: ["merge requests", "MRs", "code review", "pull requests", "open MRs", "review requested", "assigned to me", "MRs to review", "pending merge requests"],
    description: "List GitLab merge requests (MRs) in a project, or across GitLab when no project is given (then yours by default), filtered by state (opened, merged, closed), scope, author, reviewer, labels or search words.",
};

pub(crate) async fn list_mrs(up: Arc<dyn Upstream>, args: ListMrs) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let path = match &args.project {
        Some(p) => format!("{}/merge_requests", p.path()),
        None => "/merge_requests".to_string(),
    };
    let req = HttpRequest::get(path)
        .query("state", wire(&args.state))
        .query_opt("scope", args.scope.as_ref().map(wire))
        .query_opt("author_username", args.author_username.as_deref())
        .query_opt("reviewer_username", args.reviewer_username.as_deref())
        .query_opt("assignee_username", args.assignee_username.as_deref())
        .query_opt("labels", args.labels.as_ref().filter(|l| !l.is_empty()).map(|l| l.join(",")))
        .query_opt("search", args.search.as_deref())
        .query_opt("source_branch", args.source_branch.as_deref())
        .query_opt("target_branch", args.target_branch.as_deref())
        .query_opt("order_by", args.order_by.as_ref().map(wire));
    let resp = up.send(with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    let mrs: Vec<Value> = body.as_array().into_iter().flatten().map(shape_mr).collect();
    let out = compact(json!({"merge_requests": mrs, "next_cursor": next_cursor(&resp, per_page)}));
    Ok(with_raw(out, args.include_raw, &body))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetMr {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The merge request's iid: the number in !123 (not its global id).
    #[schemars(range(min = 1))]
    mr_iid: u64,
    /// Also return the changed files and their unified diff (cut at max_chars).
    #[serde(default)]
    include_diffs: bool,
    /// Longest description and longest diff to return; longer ones are cut and marked truncated.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 200_000))]
    max_chars: usize,
    /// Also return GitLab's full merge request object under "raw".
    #[serde(default)]
    include_raw: bool,
}

/// One file's diff entry as a git-style unified diff.
fn unified(d: &Value) -> String {
    let old = d["old_path"].as_str().unwrap_or("");
    let new = d["new_path"].as_str().unwrap_or(old);
    let mut s = format!("diff --git a/{old} b/{new}\n");
    let (from, to) = if d["new_file"] == true {
        s.push_str(&format!("new file mode {}\n", d["b_mode"].as_str().unwrap_or("100644")));
        ("/dev/null".to_string(), format!("b/{new}"))
    } else if d["deleted_file"] == true {
        s.push_str(&format!("deleted file mode {}\n", d["a_mode"].as_str().unwrap_or("100644")));
        (format!("a/{old}"), "/dev/null".to_string())
    } else {
        if d["renamed_file"] == true {
            s.push_str(&format!("rename from {old}\nrename to {new}\n"));
        }
        (format!("a/{old}"), format!("b/{new}"))
    };
    match d["diff"].as_str().filter(|t| !t.is_empty()) {
        Some(text) => {
            s.push_str(&format!("--- {from}\n+++ {to}\n{text}"));
            if !text.ends_with('\n') {
                s.push('\n');
            }
        }
        None if d["too_large"] == true || d["collapsed"] == true => {
            s.push_str("(diff too large; GitLab did not include it)\n");
        }
        None => {}
    }
    s
}

fn file_status(d: &Value) -> &'static str {
    if d["new_file"] == true {
        "added"
    } else if d["deleted_file"] == true {
        "deleted"
    } else if d["renamed_file"] == true {
        "renamed"
    } else {
        "modified"
    }
}

pub(crate) const GET_MR: ToolSpec = tool! {
    name: "gitlab_get_mr",
    effect: Read,
    results: Private,
    args: GetMr,
    run: get_mr,
    keywords: ["merge request", "MR details", "diff", "changes", "changed files", "pipeline status", "conflicts", "show MR", "what changed", "merge conflicts"],
    description: "Get one GitLab merge request (MR) by its !iid: description, branches, merge status, conflicts and head pipeline; optionally its diff (cut at max_chars) and changed files.",
};

pub(crate) async fn get_mr(up: Arc<dyn Upstream>, args: GetMr) -> Result<Value, ToolError> {
    let path = format!("{}/merge_requests/{}", args.project.path(), args.mr_iid);
    let mr = up.send(HttpRequest::get(&path)).await?.json()?;
    let (description, desc_cut) = cut(mr["description"].as_str().filter(|d| !d.is_empty()), args.max_chars);
    let pipeline = mr["head_pipeline"]
        .as_object()
        .map(|p| compact(json!({"id": p.get("id"), "status": p.get("status"), "url": p.get("web_url")})));
    let mut out = merge(
        shape_mr(&mr),
        compact(json!({
            "description": description,
            "sha": mr["sha"],
            "has_conflicts": mr["has_conflicts"],
            "merge_commit_sha": mr["merge_commit_sha"],
            "squash_commit_sha": mr["squash_commit_sha"],
            "merged_by": if mr["merge_user"].is_object() { username(&mr["merge_user"]) } else { username(&mr["merged_by"]) },
            "pipeline": pipeline,
            "changes_count": mr["changes_count"],
            "comments": mr["user_notes_count"],
            "squash": flag(&mr["squash"]),
            "remove_source_branch": flag(&mr["force_remove_source_branch"]),
        })),
    );
    let mut truncated = desc_cut;
    if args.include_diffs {
        let resp = up.send(with_paging(HttpRequest::get(format!("{path}/diffs")), 1, 100)).await?;
        let diffs = resp.json()?;
        let entries = diffs.as_array().cloned().unwrap_or_default();
        let files: Vec<Value> = entries
            .iter()
            .map(|d| {
                compact(json!({
                    "path": d["new_path"],
                    "status": file_status(d),
                    "old_path": if d["renamed_file"] == true { d["old_path"].clone() } else { Value::Null },
                }))
            })
            .collect();
        let text: String = entries.iter().map(unified).collect();
        let (diff, diff_cut) = truncate_chars(&text, args.max_chars);
        if resp.header("x-next-page").is_some_and(|p| !p.trim().is_empty()) {
            out["more_files"] = json!(true);
        }
        out["files"] = Value::Array(files);
        out["diff"] = json!(diff);
        out["diff_truncated"] = json!(diff_cut);
        truncated |= diff_cut;
    }
    out["truncated"] = json!(truncated);
    Ok(with_raw(out, args.include_raw, &mr))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateMr {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The branch with the changes.
    #[schemars(length(min = 1))]
    source_branch: String,
    /// The branch to merge into, e.g. "main".
    #[schemars(length(min = 1))]
    target_branch: String,
    /// The merge request title.
    #[schemars(length(min = 1))]
    title: String,
    /// The description in Markdown ("Closes #12" links an issue).
    description: Option<String>,
    /// Numeric user ids to assign.
    assignee_ids: Option<Vec<u64>>,
    /// Numeric user ids to ask for review.
    reviewer_ids: Option<Vec<u64>>,
    /// Label names to apply.
    labels: Option<Vec<String>>,
    /// Delete the source branch when the MR is merged.
    remove_source_branch: Option<bool>,
    /// Squash the commits into one when merging.
    squash: Option<bool>,
    /// Open it as a draft (GitLab marks drafts with a "Draft:" title prefix).
    #[serde(default)]
    draft: bool,
}

pub(crate) const CREATE_MR: ToolSpec = tool! {
    name: "gitlab_create_mr",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: CreateMr,
    run: create_mr,
    keywords: ["open MR", "new merge request", "propose changes", "pull request", "submit for review", "draft"],
    description: "Open a GitLab merge request (MR) from a source branch into a target branch, with title, description, assignees, reviewers, labels, optionally as a draft.",
};

pub(crate) async fn create_mr(up: Arc<dyn Upstream>, args: CreateMr) -> Result<Value, ToolError> {
    let is_draft_title = {
        let t = args.title.trim_start().to_ascii_lowercase();
        t.starts_with("draft:") || t.starts_with("[draft]") || t.starts_with("(draft)")
    };
    let title = if args.draft && !is_draft_title { format!("Draft: {}", args.title) } else { args.title.clone() };
    let mut body = json!({
        "source_branch": args.source_branch,
        "target_branch": args.target_branch,
        "title": title,
    });
    if let Some(d) = args.description {
        body["description"] = json!(d);
    }
    if let Some(a) = args.assignee_ids {
        body["assignee_ids"] = json!(a);
    }
    if let Some(r) = args.reviewer_ids {
        body["reviewer_ids"] = json!(r);
    }
    if let Some(l) = args.labels.filter(|l| !l.is_empty()) {
        body["labels"] = json!(l.join(","));
    }
    if let Some(r) = args.remove_source_branch {
        body["remove_source_branch"] = json!(r);
    }
    if let Some(s) = args.squash {
        body["squash"] = json!(s);
    }
    let mr = up.send(HttpRequest::post(format!("{}/merge_requests", args.project.path())).json(body)).await?.json()?;
    Ok(shape_mr(&mr))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MergeMr {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The merge request's iid: the number in !123.
    #[schemars(range(min = 1))]
    mr_iid: u64,
    /// Squash the commits into one.
    squash: Option<bool>,
    /// Delete the source branch after merging.
    should_remove_source_branch: Option<bool>,
    /// Do not merge now: merge automatically once the pipeline succeeds (auto-merge).
    #[serde(default)]
    auto_merge: bool,
    /// Only merge if the source branch's head is still this commit sha (sha from gitlab_get_mr).
    sha: Option<String>,
    /// Custom merge commit message.
    merge_commit_message: Option<String>,
    /// Custom squash commit message (with squash).
    squash_commit_message: Option<String>,
}

pub(crate) const MERGE_MR: ToolSpec = tool! {
    name: "gitlab_merge_mr",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: MergeMr,
    run: merge_mr,
    keywords: ["merge", "accept merge request", "squash", "land", "ship", "auto-merge", "merge when pipeline succeeds"],
    description: "Merge (accept) a GitLab merge request (MR), optionally squashing and deleting the source branch, or set it to auto-merge when its pipeline succeeds; fails with a clear reason when it cannot.",
};

pub(crate) async fn merge_mr(up: Arc<dyn Upstream>, args: MergeMr) -> Result<Value, ToolError> {
    let mut body = serde_json::Map::new();
    if let Some(s) = args.squash {
        body.insert("squash".into(), json!(s));
    }
    if let Some(r) = args.should_remove_source_branch {
        body.insert("should_remove_source_branch".into(), json!(r));
    }
    if args.auto_merge {
        body.insert("auto_merge".into(), json!(true));
    }
    if let Some(s) = args.sha {
        body.insert("sha".into(), json!(s));
    }
    if let Some(m) = args.merge_commit_message {
        body.insert("merge_commit_message".into(), json!(m));
    }
    if let Some(m) = args.squash_commit_message {
        body.insert("squash_commit_message".into(), json!(m));
    }
    let path = format!("{}/merge_requests/{}/merge", args.project.path(), args.mr_iid);
    let iid = args.mr_iid;
    let mr = match up.send(HttpRequest::new(Method::Put, path).json(Value::Object(body))).await {
        Err(ToolError::Upstream { status: status @ (405 | 406 | 409 | 422), message, retry_after }) => {
            let why = match status {
                405 => {
                    "GitLab will not merge it now: it is a draft, closed, blocked by discussions or approvals, or its pipeline has not succeeded; check merge_status with gitlab_get_mr"
                }
                406 => "it has merge conflicts with the target branch; rebase or resolve them first",
                409 => {
                    "the source branch moved: its head no longer matches sha; re-read it with gitlab_get_mr and retry with the current sha"
                }
                _ => "GitLab could not merge it; check merge_status with gitlab_get_mr",
            };
            return Err(ToolError::Upstream {
                status,
                message: format!("merge request !{iid} was not merged: {message} ({why})"),
                retry_after,
            });
        }
        other => other?.json()?,
    };
    let out = merge(
        shape_mr(&mr),
        compact(json!({
            "merge_commit_sha": mr["merge_commit_sha"],
            "squash_commit_sha": mr["squash_commit_sha"],
            "auto_merge": flag(&mr["merge_when_pipeline_succeeds"]),
        })),
    );
    Ok(out)
}
