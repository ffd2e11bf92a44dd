//! Projects, repository files and CI/CD pipelines.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::*;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProjectOrder {
    Id,
    Name,
    Path,
    CreatedAt,
    UpdatedAt,
    #[default]
    LastActivityAt,
    StarCount,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SortDir {
    Desc,
    Asc,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListProjects {
    /// Words to find in project names and paths.
    search: Option<String>,
    /// Only projects you are a member of (default true); false lists every project you can see, which on gitlab.com is all public ones.
    #[serde_inline_default(true)]
    membership: bool,
    /// Only projects you own (in your personal namespace).
    #[serde(default)]
    owned: bool,
    /// Only projects you starred.
    #[serde(default)]
    starred: bool,
    /// Include archived projects (default: only active ones).
    #[serde(default)]
    include_archived: bool,
    /// Order by last_activity_at (default), updated_at, created_at, name, path, id or star_count.
    #[serde(default)]
    order_by: ProjectOrder,
    /// desc (default) or asc.
    sort: Option<SortDir>,
    /// How many projects to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitLab's full project objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "gitlab_list_projects",
    effect: Read,
    results: PrivateUnlessPublic,
    args: ListProjects,
    run: list_projects,
    keywords: ["repos", "repositories", "my projects", "find project", "groups", "namespace", "list repositories", "gitlab repos"],
    description: "List GitLab projects (repositories) you are a member of, or search them by name, most recently active first, with path, default branch, visibility and open issue count.",
};

pub(crate) async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let mut req = HttpRequest::get("/projects")
        .query_opt("search", args.search.as_deref().filter(|s| !s.is_empty()))
        .query("order_by", wire(&args.order_by))
        .query_opt("sort", args.sort.as_ref().map(wire));
    if args.membership {
        req = req.query("membership", "true");
    }
    if args.owned {
        req = req.query("owned", "true");
    }
    if args.starred {
        req = req.query("starred", "true");
    }
    if !args.include_archived {
        req = req.query("archived", "false");
    }
    let resp = up.send(with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    if body.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(super::flow::is_public)) {
        up.mark_public();
    }
    let projects: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            compact(json!({
                "id": p["id"],
                "path": p["path_with_namespace"],
                "name": p["name"],
                "description": p["description"].as_str().filter(|d| !d.is_empty()),
                "default_branch": p["default_branch"],
                "visibility": p["visibility"],
                "archived": flag(&p["archived"]),
                "stars": p["star_count"],
                "forks": p["forks_count"],
                "open_issues": p["open_issues_count"],
                "last_activity_at": p["last_activity_at"],
                "url": p["web_url"],
            }))
        })
        .collect();
    let out = compact(json!({"projects": projects, "next_cursor": next_cursor(&resp, per_page)}));
    Ok(with_raw(out, args.include_raw, &body))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetFile {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// Path of the file in the repository, e.g. "src/app.py".
    #[schemars(length(min = 1))]
    file_path: String,
    /// Branch, tag or commit sha; default is the project's default branch.
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    /// Longest text to return; longer files are cut and marked truncated.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 200_000))]
    max_chars: usize,
}

pub(crate) const GET_FILE: ToolSpec = tool! {
    name: "gitlab_get_file",
    effect: Read,
    results: PrivateUnlessPublic,
    args: GetFile,
    run: get_file,
    keywords: ["read file", "raw file", "source", "contents", "cat", "README", "repository file"],
    description: "Read a file from a GitLab project's repository as text, at a branch, tag or commit (default branch by default); long files are cut at max_chars.",
};

pub(crate) async fn get_file(up: Arc<dyn Upstream>, args: GetFile) -> Result<Value, ToolError> {
    let file_path = args.file_path.trim_matches('/');
    if file_path.is_empty() || file_path.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
        return Err(invalid(
            "file_path",
            format!("'{}' is not a file path in the repository", args.file_path),
            "like src/app.py",
        ));
    }
    // The whole file path is one URL-encoded segment (src%2Fapp.py), as GitLab requires.
    let path = format!("{}/repository/files/{}/raw", args.project.path(), encode_segment(file_path));
    // The raw file answer does not say whether the project is public: one more call does.
    let public = super::flow::project_is_public(&*up, &args.project).await;
    let resp = up.send(HttpRequest::get(path).query_opt("ref", args.git_ref.as_deref())).await?;
    if public {
        up.mark_public();
    }
    let header = |name: &str| resp.header(name).map(str::to_string);
    let mut out = compact(json!({
        "project": args.project.0,
        "file_path": file_path,
        "ref": args.git_ref.clone().or_else(|| header("x-gitlab-ref")),
        "size": resp.body.len(),
        "blob_id": header("x-gitlab-blob-id"),
        "last_commit_id": header("x-gitlab-last-commit-id"),
    }));
    match String::from_utf8(resp.body.clone()) {
        Ok(text) if !text.contains('\0') => {
            let (content, truncated) = truncate_chars(&text, args.max_chars);
            out["content"] = json!(content);
            out["truncated"] = json!(truncated);
        }
        _ => {
            out["binary"] = json!(true);
            out["note"] = json!("binary file: its content is not shown as text");
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PipelineStatus {
    Created,
    WaitingForResource,
    Preparing,
    Pending,
    Running,
    Success,
    Failed,
    Canceled,
    Skipped,
    Manual,
    Scheduled,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListPipelines {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// Only pipelines for this branch or tag.
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    /// Only pipelines with this status, e.g. failed, success, running, pending, canceled.
    status: Option<PipelineStatus>,
    /// Only pipelines started this way, e.g. push, merge_request_event, schedule, web, api, trigger.
    source: Option<String>,
    /// Only pipelines started by this username.
    username: Option<String>,
    /// How many pipelines to return (1-100), newest first.
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitLab's full pipeline objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

fn shape_pipeline(p: &Value) -> Value {
    compact(json!({
        "id": p["id"],
        "iid": p["iid"],
        "status": p["status"],
        "ref": p["ref"],
        "sha": p["sha"],
        "source": p["source"],
        "created_at": p["created_at"],
        "updated_at": p["updated_at"],
        "url": p["web_url"],
    }))
}

pub(crate) const LIST_PIPELINES: ToolSpec = tool! {
    name: "gitlab_list_pipelines",
    effect: Read,
    results: Private,
    args: ListPipelines,
    run: list_pipelines,
    keywords: ["CI", "CI/CD", "builds", "pipeline status", "failed pipelines", "jobs", "tests", "CI status", "build status", "pipeline failed"],
    description: "List a GitLab project's CI/CD pipelines (builds), newest first, filtered by branch or tag, status (failed, success, running) or source.",
};

pub(crate) async fn list_pipelines(up: Arc<dyn Upstream>, args: ListPipelines) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let req = HttpRequest::get(format!("{}/pipelines", args.project.path()))
        .query_opt("ref", args.git_ref.as_deref())
        .query_opt("status", args.status.as_ref().map(wire))
        .query_opt("source", args.source.as_deref())
        .query_opt("username", args.username.as_deref());
    let resp = up.send(with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    let pipelines: Vec<Value> = body.as_array().into_iter().flatten().map(shape_pipeline).collect();
    let out = compact(json!({"pipelines": pipelines, "next_cursor": next_cursor(&resp, per_page)}));
    Ok(with_raw(out, args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum VariableType {
    #[default]
    EnvVar,
    File,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PipelineVariable {
    /// Variable name, e.g. "DEPLOY_ENV".
    #[schemars(length(min = 1))]
    key: String,
    /// Variable value.
    value: String,
    /// env_var (default) or file (the value is written to a file whose path is the variable).
    #[serde(default)]
    variable_type: VariableType,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunPipeline {
    /// The project: its path like "group/subgroup/project" or its numeric id.
    project: ProjectId,
    /// The branch or tag to run the pipeline for, e.g. "main".
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    git_ref: String,
    /// CI/CD variables for this pipeline run.
    variables: Option<Vec<PipelineVariable>>,
}

pub(crate) const RUN_PIPELINE: ToolSpec = tool! {
    name: "gitlab_run_pipeline",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::project_audience),
    args: RunPipeline,
    run: run_pipeline,
    keywords: ["trigger pipeline", "start CI", "run CI/CD", "deploy", "build", "rerun", "run pipeline", "kick off CI"],
    description: "Start a new GitLab CI/CD pipeline for a branch or tag, optionally with CI variables.",
};

pub(crate) async fn run_pipeline(up: Arc<dyn Upstream>, args: RunPipeline) -> Result<Value, ToolError> {
    let mut body = json!({"ref": args.git_ref});
    if let Some(vars) = args.variables.filter(|v| !v.is_empty()) {
        body["variables"] = vars
            .iter()
            .map(|v| json!({"key": v.key, "value": v.value, "variable_type": wire(&v.variable_type)}))
            .collect();
    }
    let p = up.send(HttpRequest::post(format!("{}/pipeline", args.project.path())).json(body)).await?.json()?;
    Ok(shape_pipeline(&p))
}
