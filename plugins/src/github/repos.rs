//! Repositories, code search, file contents and branches.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::*;
use crate::codec::{base64_decode, base64_encode};
use crate::tool;

const ACCEPT_RAW: &str = "application/vnd.github.raw+json";

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Visibility {
    All,
    Public,
    Private,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Affiliation {
    Owner,
    Collaborator,
    OrganizationMember,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RepoSort {
    Created,
    #[default]
    Updated,
    Pushed,
    FullName,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListRepos {
    /// Only public or only private repositories; default all.
    visibility: Option<Visibility>,
    /// Which relationships to include: owner (yours), collaborator (added to), organization_member (through an org). Default: all three.
    affiliation: Option<Vec<Affiliation>>,
    /// Order: updated (default, most recent first), pushed, created, or full_name (alphabetical).
    #[serde(default)]
    sort: RepoSort,
    /// How many repositories to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full repository objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_REPOS: ToolSpec = tool! {
    name: "github_list_repos",
    effect: Read,
    results: PrivateUnlessPublic,
    args: ListRepos,
    run: list_repos,
    keywords: ["my repos", "repositories", "projects", "git", "organization", "owned", "collaborator", "list repositories", "repos I can access"],
    description: "List the GitHub repositories (repos) you can access: ones you own, collaborate on, or see through your organizations, most recently updated first, with default branch, language, stars and open issue count.",
};

pub(crate) async fn list_repos(up: Arc<dyn Upstream>, args: ListRepos) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let affiliation =
        args.affiliation.as_ref().filter(|a| !a.is_empty()).map(|a| a.iter().map(wire).collect::<Vec<_>>().join(","));
    let req = HttpRequest::get("/user/repos")
        .query_opt("visibility", args.visibility.as_ref().map(wire))
        .query_opt("affiliation", affiliation)
        .query("sort", wire(&args.sort));
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    super::flow::mark_if_all_public(&*up, body.as_array().into_iter().flatten());
    let repos: Vec<Value> = body.as_array().into_iter().flatten().map(shape_repo).collect();
    Ok(with_raw(compact(json!({"repos": repos, "next_cursor": next_cursor(&resp)})), args.include_raw, &body))
}

pub(super) fn shape_repo(r: &Value) -> Value {
    let visibility = r["visibility"]
        .as_str()
        .map(str::to_string)
        .or_else(|| r["private"].as_bool().map(|p| if p { "private".to_string() } else { "public".to_string() }));
    compact(json!({
        "full_name": r["full_name"],
        "description": r["description"],
        "visibility": visibility,
        "default_branch": r["default_branch"],
        "language": r["language"],
        "stars": r["stargazers_count"],
        "forks": r["forks_count"],
        "open_issues": r["open_issues_count"],
        "archived": flag(&r["archived"]),
        "fork": flag(&r["fork"]),
        "pushed_at": r["pushed_at"],
        "url": r["html_url"],
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetRepo {
    /// The account that owns the repository (user or organization), e.g. "rust-lang".
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name without .git, e.g. "cargo".
    #[schemars(length(min = 1))]
    repo: String,
    /// Also return GitHub's full repository object under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_REPO: ToolSpec = tool! {
    name: "github_get_repo",
    effect: Read,
    results: PrivateUnlessPublic,
    args: GetRepo,
    run: get_repo,
    keywords: ["repository", "metadata", "default branch", "topics", "stars", "details", "clone url", "repo info", "license", "forks", "default branch of a repo"],
    description: "Get one GitHub repository's details: description, default branch, topics, visibility, license, stars, forks, open issue count and clone URLs.",
};

pub(crate) async fn get_repo(up: Arc<dyn Upstream>, args: GetRepo) -> Result<Value, ToolError> {
    let body = send(&*up, HttpRequest::get(repo_path(&args.owner, &args.repo))).await?.json()?;
    if super::flow::is_public(&body) {
        up.mark_public();
    }
    let permissions: Option<Vec<String>> = body["permissions"]
        .as_object()
        .map(|p| p.iter().filter(|(_, v)| v.as_bool() == Some(true)).map(|(k, _)| k.clone()).collect());
    let extra = compact(json!({
        "topics": body["topics"].as_array().filter(|t| !t.is_empty()),
        "homepage": body["homepage"].as_str().filter(|h| !h.is_empty()),
        "license": body["license"]["spdx_id"],
        "owner": login(&body["owner"]),
        "parent": body["parent"]["full_name"],
        "watchers": body["subscribers_count"],
        "size_kb": body["size"],
        "has_issues": body["has_issues"],
        "created_at": body["created_at"],
        "updated_at": body["updated_at"],
        "clone_url": body["clone_url"],
        "ssh_url": body["ssh_url"],
        "your_permissions": permissions,
    }));
    Ok(with_raw(merge(shape_repo(&body), extra), args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RepoSearchSort {
    Stars,
    Forks,
    HelpWantedIssues,
    Updated,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Order {
    Desc,
    Asc,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchRepos {
    /// Keywords plus GitHub search qualifiers, e.g. "http client language:rust stars:>500" or "topic:cli org:acme".
    #[schemars(length(min = 1))]
    q: String,
    /// Sort by stars, forks, help-wanted-issues or updated; default is best match.
    sort: Option<RepoSearchSort>,
    /// Sort direction with sort: desc (default) or asc.
    order: Option<Order>,
    /// How many repositories to return (1-100).
    #[serde_inline_default(SEARCH_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full result items under "raw".
    #[serde(default)]
    include_raw: bool,
}

/// Results per search when `limit` is left out (repositories, code, issues).
pub(super) const SEARCH_LIMIT: u32 = 20;

pub(crate) const SEARCH_REPOS: ToolSpec = tool! {
    name: "github_search_repos",
    effect: Read,
    results: PrivateUnlessPublic,
    args: SearchRepos,
    run: search_repos,
    keywords: ["find repository", "discover", "open source", "projects", "stars", "topic", "language", "popular repositories", "find projects", "search github"],
    description: "Search all of GitHub for repositories by keywords and qualifiers (language:rust, topic:cli, stars:>1000, org:acme, user:alice), sorted by best match, stars, forks or recent updates.",
};

pub(crate) async fn search_repos(up: Arc<dyn Upstream>, args: SearchRepos) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let req = HttpRequest::get("/search/repositories")
        .query("q", &args.q)
        .query_opt("sort", args.sort.as_ref().map(wire))
        .query_opt("order", args.order.as_ref().map(wire));
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    super::flow::mark_if_all_public(&*up, body["items"].as_array().into_iter().flatten());
    let repos: Vec<Value> = body["items"].as_array().into_iter().flatten().map(shape_repo).collect();
    let out = compact(json!({
        "total_count": body["total_count"],
        "incomplete_results": flag(&body["incomplete_results"]),
        "repos": repos,
        "next_cursor": next_cursor(&resp),
    }));
    Ok(with_raw(out, args.include_raw, &body["items"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchCode {
    /// Code to find plus qualifiers, e.g. "parse_config repo:acme/api language:rust" or "TODO path:src/ org:acme". GitHub requires at least one search term besides qualifiers.
    #[schemars(length(min = 1))]
    q: String,
    /// How many files to return (1-100).
    #[serde_inline_default(SEARCH_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full result items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_CODE: ToolSpec = tool! {
    name: "github_search_code",
    effect: Read,
    results: PrivateUnlessPublic,
    args: SearchCode,
    run: search_code,
    keywords: ["grep", "find code", "source", "function", "symbol", "usage", "file", "code search", "where is it defined", "definition", "references", "find usages", "search code"],
    description: "Search source code across GitHub repositories (grep-like) with qualifiers such as repo:owner/name, org:acme, language:go, path:src/, extension:yml; returns matching files with repository and path.",
};

pub(crate) async fn search_code(up: Arc<dyn Upstream>, args: SearchCode) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let req = HttpRequest::get("/search/code").query("q", &args.q);
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    super::flow::mark_if_all_public(&*up, body["items"].as_array().into_iter().flatten().map(|i| &i["repository"]));
    let files: Vec<Value> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            compact(json!({
                "repo": i["repository"]["full_name"],
                "path": i["path"],
                "name": i["name"],
                "sha": i["sha"],
                "url": i["html_url"],
            }))
        })
        .collect();
    let out = compact(json!({
        "total_count": body["total_count"],
        "incomplete_results": flag(&body["incomplete_results"]),
        "files": files,
        "next_cursor": next_cursor(&resp),
    }));
    Ok(with_raw(out, args.include_raw, &body["items"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetFile {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// Path inside the repository, e.g. "src/main.rs" or "docs" for a directory; "" for the top-level directory.
    path: String,
    /// Branch, tag or commit sha to read from; default is the repository's default branch.
    #[serde(rename = "ref")]
    git_ref: Option<String>,
    /// Longest text to return; longer files are cut and marked truncated.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 200_000))]
    max_chars: usize,
}

fn contents_path(owner: &str, repo: &str, path: &str) -> Result<String, ToolError> {
    Ok(format!("{}/contents/{}", repo_path(owner, repo), encode_path("path", path)?))
}

pub(crate) const GET_FILE: ToolSpec = tool! {
    name: "github_get_file",
    effect: Read,
    results: PrivateUnlessPublic,
    args: GetFile,
    run: get_file,
    keywords: ["read file", "contents", "source", "cat", "directory", "ls", "download", "README", "show file", "file contents", "view source"],
    description: "Read a file from a GitHub repository (decoded to text) at a branch, tag or commit, or list a directory's entries; long files are cut at max_chars.",
};

pub(crate) async fn get_file(up: Arc<dyn Upstream>, args: GetFile) -> Result<Value, ToolError> {
    let path = contents_path(&args.owner, &args.repo, &args.path)?;
    let req = HttpRequest::get(&path).query_opt("ref", args.git_ref.as_deref());
    // The contents answer does not say whether the repository is public: one more call does.
    let public = super::flow::repo_is_public(&*up, &args.owner, &args.repo).await;
    let body = send(&*up, req.clone()).await?.json()?;
    if public {
        up.mark_public();
    }
    if let Some(entries) = body.as_array() {
        let entries: Vec<Value> = entries
            .iter()
            .map(|e| {
                compact(json!({
                    "name": e["name"],
                    "type": e["type"],
                    "path": e["path"],
                    "size": if e["type"] == "file" { e["size"].clone() } else { Value::Null },
                }))
            })
            .collect();
        return Ok(compact(json!({
            "type": "dir",
            "path": args.path.trim_matches('/'),
            "ref": args.git_ref,
            "count": entries.len(),
            "entries": entries,
        })));
    }
    match body["type"].as_str() {
        Some("symlink") => {
            return Ok(compact(
                json!({"type": "symlink", "path": body["path"], "target": body["target"], "url": body["html_url"]}),
            ));
        }
        Some("submodule") => {
            return Ok(compact(json!({
                "type": "submodule", "path": body["path"], "sha": body["sha"],
                "submodule_git_url": body["submodule_git_url"], "url": body["html_url"],
            })));
        }
        _ => {}
    }
    let bytes = match (body["encoding"].as_str(), body["content"].as_str()) {
        (Some("base64"), Some(content)) => base64_decode(content)
            .ok_or_else(|| ToolError::Internal("GitHub sent file content that is not valid base64".into()))?,
        // Files over 1 MB come without content; the raw media type returns their bytes.
        _ => send_accepting(&*up, req, ACCEPT_RAW).await?.body,
    };
    let mut out = compact(json!({
        "type": "file",
        "path": body["path"],
        "ref": args.git_ref,
        "size": body["size"],
        "sha": body["sha"],
        "url": body["html_url"],
    }));
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            let (content, truncated) = truncate_chars(&text, args.max_chars);
            out["content"] = Value::String(content);
            out["truncated"] = Value::Bool(truncated);
        }
        _ => {
            out["binary"] = Value::Bool(true);
            out["download_url"] = body["download_url"].clone();
            out["note"] = json!("binary file: its content is not shown as text; use download_url to fetch it");
        }
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateFile {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// Path of the file inside the repository, e.g. "docs/setup.md"; created if it does not exist.
    #[schemars(length(min = 1))]
    path: String,
    /// The complete new file content as text (replaces the whole file).
    content: String,
    /// The commit message.
    #[schemars(length(min = 1))]
    message: String,
    /// Branch to commit to; default is the repository's default branch.
    branch: Option<String>,
    /// Blob sha of the file being replaced (from github_get_file), to make sure nobody changed it meanwhile; looked up when omitted.
    sha: Option<String>,
}

pub(crate) const UPDATE_FILE: ToolSpec = tool! {
    name: "github_update_file",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: UpdateFile,
    run: update_file,
    keywords: ["commit", "edit file", "write file", "create file", "push", "change", "save", "commit a change", "edit a file in the repo", "overwrite"],
    description: "Create or update (overwrite) one file in a GitHub repository as a single commit on a branch, with a commit message; the current file's sha is looked up when not given.",
};

pub(crate) async fn update_file(up: Arc<dyn Upstream>, args: UpdateFile) -> Result<Value, ToolError> {
    let path = contents_path(&args.owner, &args.repo, &args.path)?;
    let sha = match &args.sha {
        Some(s) => Some(s.clone()),
        None => {
            let req = HttpRequest::get(&path).query_opt("ref", args.branch.as_deref());
            match send(&*up, req).await {
                Ok(resp) => {
                    let current = resp.json()?;
                    if current.is_array() || current["type"] != "file" {
                        return Err(invalid("path", format!("'{}' is not a regular file", args.path), "name a file"));
                    }
                    current["sha"].as_str().map(str::to_string)
                }
                Err(ToolError::Upstream { status: 404, .. }) => None,
                Err(e) => return Err(e),
            }
        }
    };
    let mut body = json!({"message": args.message, "content": base64_encode(args.content.as_bytes())});
    if let Some(b) = &args.branch {
        body["branch"] = json!(b);
    }
    if let Some(s) = &sha {
        body["sha"] = json!(s);
    }
    let resp = match send(&*up, HttpRequest::new(Method::Put, &path).json(body)).await {
        Err(ToolError::Upstream { status: 409, message, retry_after }) => {
            return Err(ToolError::Upstream {
                status: 409,
                message: format!(
                    "{message} — '{}' changed since that sha; read it again with github_get_file (or omit sha to overwrite the current version)",
                    args.path
                ),
                retry_after,
            });
        }
        other => other?,
    };
    let created = resp.status == 201;
    let r = resp.json()?;
    Ok(compact(json!({
        "path": r["content"]["path"],
        "created": created,
        "branch": args.branch,
        "sha": r["content"]["sha"],
        "commit_sha": r["commit"]["sha"],
        "commit_url": r["commit"]["html_url"],
        "url": r["content"]["html_url"],
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBranch {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// Name of the new branch, e.g. "fix/login-timeout".
    #[schemars(length(min = 1))]
    branch: String,
    /// Branch name or full 40-character commit sha to start from; default is the repository's default branch.
    from_ref: Option<String>,
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn branch_name(s: &str) -> &str {
    s.trim().trim_start_matches("refs/").trim_start_matches("heads/")
}

pub(crate) const CREATE_BRANCH: ToolSpec = tool! {
    name: "github_create_branch",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: CreateBranch,
    run: create_branch,
    keywords: ["new branch", "git branch", "fork off", "checkout -b", "ref", "cut a branch", "branch off"],
    description: "Create a new branch in a GitHub repository from another branch or a commit sha (by default from the repository's default branch).",
};

pub(crate) async fn create_branch(up: Arc<dyn Upstream>, args: CreateBranch) -> Result<Value, ToolError> {
    let base = repo_path(&args.owner, &args.repo);
    let new_branch = branch_name(&args.branch).to_string();
    encode_path("branch", &new_branch)?;
    let (from, sha) = match args.from_ref.as_deref().map(str::trim) {
        Some(r) if is_sha(r) => (r.to_string(), r.to_string()),
        given => {
            let from = match given {
                Some(r) => branch_name(r).to_string(),
                None => {
                    let repo = send(&*up, HttpRequest::get(&base)).await?.json()?;
                    repo["default_branch"]
                        .as_str()
                        .ok_or_else(|| ToolError::Internal("GitHub did not say which branch is the default".into()))?
                        .to_string()
                }
            };
            let path = format!("{base}/git/ref/heads/{}", encode_path("from_ref", &from)?);
            let r = match send(&*up, HttpRequest::get(path)).await {
                Err(ToolError::Upstream { status: 404, retry_after, .. }) => {
                    return Err(ToolError::Upstream {
                        status: 404,
                        message: format!("{}/{} has no branch named '{from}'", args.owner, args.repo),
                        retry_after,
                    });
                }
                other => other?.json()?,
            };
            let sha = r["object"]["sha"]
                .as_str()
                .ok_or_else(|| ToolError::Internal(format!("GitHub returned no commit for branch '{from}'")))?
                .to_string();
            (from, sha)
        }
    };
    let body = json!({"ref": format!("refs/heads/{new_branch}"), "sha": sha});
    let r = send(&*up, HttpRequest::post(format!("{base}/git/refs")).json(body)).await?.json()?;
    Ok(compact(json!({
        "branch": new_branch,
        "ref": r["ref"],
        "sha": r["object"]["sha"],
        "from": from,
    })))
}
