//! GitHub against a fake on 127.0.0.1 that checks what api.github.com checks (Bearer token, API
//! version header, media type, JSON bodies) and answers with bodies shaped like GitHub's.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

pub(crate) const TOKEN: &str = "ghp_testtoken000000000000000000000000";
const MAIN_SHA: &str = "aa218f56b14c9653891f9e74264a383fa43fefbd";
const RELEASE_SHA: &str = "bb7d1c3a2f3f5e6a7b8c9d0e1f2a3b4c5d6e7f80";
const HEAD_SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const README_SHA: &str = "3d21ec53a331a6f037a91c368710b99387d012c1";
const API: &str = "https://api.github.com";

// ---------------------------------------------------------------- GitHub-shaped payloads

/// Joins two JSON objects (big literals are split to stay under json!'s recursion limit).
fn merge(mut a: Value, b: Value) -> Value {
    a.as_object_mut().unwrap().extend(b.as_object().unwrap().clone());
    a
}

fn user(login: &str) -> Value {
    json!({
        "login": login, "id": login.len() * 1000, "node_id": format!("MDQ6VXNlcj{login}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", login.len()), "gravatar_id": "",
        "url": format!("{API}/users/{login}"), "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("{API}/users/{login}/followers"), "following_url": format!("{API}/users/{login}/following{{/other_user}}"),
        "gists_url": format!("{API}/users/{login}/gists{{/gist_id}}"), "starred_url": format!("{API}/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{API}/users/{login}/subscriptions"), "organizations_url": format!("{API}/users/{login}/orgs"),
        "repos_url": format!("{API}/users/{login}/repos"), "events_url": format!("{API}/users/{login}/events{{/privacy}}"),
        "received_events_url": format!("{API}/users/{login}/received_events"), "type": "User", "user_view_type": "public", "site_admin": false
    })
}

fn repo(name: &str, n: u64) -> Value {
    let full = format!("acme/{name}");
    let private = n.is_multiple_of(2);
    let mut r = merge(
        json!({
                "id": 1_296_269 + n, "node_id": format!("MDEwOlJlcG9zaXRvcnkx{n}"), "name": name, "full_name": full,
                "private": private, "owner": user("acme"), "html_url": format!("https://github.com/{full}"),
                "description": format!("The {name} service"), "fork": false, "url": format!("{API}/repos/{full}"),
                "archive_url": format!("{API}/repos/{full}/{{archive_format}}{{/ref}}"), "assignees_url": format!("{API}/repos/{full}/assignees{{/user}}"),
                "blobs_url": format!("{API}/repos/{full}/git/blobs{{/sha}}"), "branches_url": format!("{API}/repos/{full}/branches{{/branch}}"),
                "collaborators_url": format!("{API}/repos/{full}/collaborators{{/collaborator}}"), "comments_url": format!("{API}/repos/{full}/comments{{/number}}"),
                "commits_url": format!("{API}/repos/{full}/commits{{/sha}}"), "compare_url": format!("{API}/repos/{full}/compare/{{base}}...{{head}}"),
                "contents_url": format!("{API}/repos/{full}/contents/{{+path}}"), "contributors_url": format!("{API}/repos/{full}/contributors"),
                "deployments_url": format!("{API}/repos/{full}/deployments"), "downloads_url": format!("{API}/repos/{full}/downloads"),
                "events_url": format!("{API}/repos/{full}/events"), "forks_url": format!("{API}/repos/{full}/forks"),
                "git_commits_url": format!("{API}/repos/{full}/git/commits{{/sha}}"), "git_refs_url": format!("{API}/repos/{full}/git/refs{{/sha}}"),
                "hooks_url": format!("{API}/repos/{full}/hooks"), "issues_url": format!("{API}/repos/{full}/issues{{/number}}"),
                "languages_url": format!("{API}/repos/{full}/languages"), "pulls_url": format!("{API}/repos/{full}/pulls{{/number}}")
        }),
        json!({
            "git_url": format!("git://github.com/{full}.git"), "ssh_url": format!("git@github.com:{full}.git"),
            "clone_url": format!("https://github.com/{full}.git"), "svn_url": format!("https://github.com/{full}"),
            "homepage": null, "size": 108 * n, "stargazers_count": 80 * n, "watchers_count": 80 * n, "language": "Rust",
            "has_issues": true, "has_projects": true, "has_downloads": true, "has_wiki": true, "has_pages": false,
            "has_discussions": false, "forks_count": 9 * n, "mirror_url": null, "archived": n == 3, "disabled": false,
            "open_issues_count": n, "license": {"key": "mit", "name": "MIT License", "spdx_id": "MIT", "url": format!("{API}/licenses/mit"), "node_id": "MDc6TGljZW5zZW1pdA=="},
            "allow_forking": true, "is_template": false, "web_commit_signoff_required": false, "topics": ["api", "rust"],
            "visibility": if private { "private" } else { "public" }, "forks": 9 * n, "open_issues": n, "watchers": 80 * n,
            "default_branch": "main", "created_at": "2024-01-26T19:01:12Z", "updated_at": "2026-03-01T10:00:00Z",
            "pushed_at": format!("2026-03-{:02}T10:00:00Z", 10 - n.min(9)),
            "permissions": {"admin": false, "maintain": false, "push": true, "triage": true, "pull": true}
        }),
    );
    if name == "demo" {
        r["subscribers_count"] = json!(42);
    }
    r
}

fn label(name: &str) -> Value {
    json!({"id": 208045946, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "url": format!("{API}/repos/acme/demo/labels/{name}"), "name": name, "description": "Something isn't working", "color": "f29513", "default": true})
}

fn issue(n: u64, pr: bool) -> Value {
    let kind = if pr { "pull" } else { "issues" };
    let mut i = json!({
        "id": 1_347_000 + n, "node_id": format!("MDU6SXNzdWUx{n}"), "url": format!("{API}/repos/acme/demo/issues/{n}"),
        "repository_url": format!("{API}/repos/acme/demo"), "labels_url": format!("{API}/repos/acme/demo/issues/{n}/labels{{/name}}"),
        "comments_url": format!("{API}/repos/acme/demo/issues/{n}/comments"), "events_url": format!("{API}/repos/acme/demo/issues/{n}/events"),
        "html_url": format!("https://github.com/acme/demo/{kind}/{n}"), "number": n, "state": "open",
        "title": format!("Login times out after {n} seconds"), "body": format!("Steps to reproduce #{n}:\n1. Open the app\n2. Wait"),
        "user": user("alice"), "labels": [label("bug")], "assignee": user("bob"), "assignees": [user("bob")], "milestone": null,
        "locked": false, "active_lock_reason": null, "comments": 2, "closed_at": null,
        "created_at": "2026-02-01T09:00:00Z", "updated_at": "2026-02-03T09:00:00Z", "closed_by": null,
        "author_association": "MEMBER", "state_reason": null, "timeline_url": format!("{API}/repos/acme/demo/issues/{n}/timeline"),
        "performed_via_github_app": null,
        "reactions": {"url": format!("{API}/repos/acme/demo/issues/{n}/reactions"), "total_count": 3, "+1": 3, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0, "eyes": 0}
    });
    if pr {
        i["pull_request"] = json!({
            "url": format!("{API}/repos/acme/demo/pulls/{n}"), "html_url": format!("https://github.com/acme/demo/pull/{n}"),
            "diff_url": format!("https://github.com/acme/demo/pull/{n}.diff"), "patch_url": format!("https://github.com/acme/demo/pull/{n}.patch"),
            "merged_at": null
        });
        i["draft"] = json!(false);
    }
    i
}

fn pull(n: u64) -> Value {
    merge(
        json!({
                "url": format!("{API}/repos/acme/demo/pulls/{n}"), "id": 1_934_000 + n, "node_id": format!("MDExOlB1bGxSZXF1ZXN0{n}"),
                "html_url": format!("https://github.com/acme/demo/pull/{n}"), "diff_url": format!("https://github.com/acme/demo/pull/{n}.diff"),
                "patch_url": format!("https://github.com/acme/demo/pull/{n}.patch"), "issue_url": format!("{API}/repos/acme/demo/issues/{n}"),
                "commits_url": format!("{API}/repos/acme/demo/pulls/{n}/commits"), "review_comments_url": format!("{API}/repos/acme/demo/pulls/{n}/comments"),
                "statuses_url": format!("{API}/repos/acme/demo/statuses/{HEAD_SHA}"), "number": n, "state": "open", "locked": false,
                "title": "Fix login timeout", "user": user("alice"), "body": "Raises the timeout.\n\nCloses #42", "labels": [label("bug")]
        }),
        json!({
            "milestone": null, "active_lock_reason": null, "created_at": "2026-02-04T09:00:00Z", "updated_at": "2026-02-05T09:00:00Z",
            "closed_at": null, "merged_at": null, "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6",
            "assignee": null, "assignees": [], "requested_reviewers": [user("carol")],
            "requested_teams": [{"id": 1, "node_id": "MDQ6VGVhbTE=", "url": format!("{API}/teams/1"), "html_url": "https://github.com/orgs/acme/teams/core", "name": "Core", "slug": "core", "description": "Core team", "privacy": "closed", "permission": "admin"}],
            "head": {"label": "acme:fix/login", "ref": "fix/login", "sha": HEAD_SHA, "user": user("acme"), "repo": repo("demo", 1)},
            "base": {"label": "acme:main", "ref": "main", "sha": MAIN_SHA, "user": user("acme"), "repo": repo("demo", 1)},
            "_links": {"self": {"href": format!("{API}/repos/acme/demo/pulls/{n}")}, "html": {"href": format!("https://github.com/acme/demo/pull/{n}")}},
            "author_association": "MEMBER", "auto_merge": null, "draft": n == 9
        }),
    )
}

fn pull_detail(n: u64) -> Value {
    let mut p = pull(n);
    for (k, v) in [
        ("merged", json!(false)),
        ("mergeable", json!(true)),
        ("rebaseable", json!(true)),
        ("mergeable_state", json!("clean")),
        ("merged_by", Value::Null),
        ("comments", json!(1)),
        ("review_comments", json!(0)),
        ("maintainer_can_modify", json!(false)),
        ("commits", json!(3)),
        ("additions", json!(40)),
        ("deletions", json!(5)),
        ("changed_files", json!(2)),
    ] {
        p[k] = v;
    }
    p
}

fn diff_text() -> String {
    let mut d = String::from(
        "diff --git a/src/login.rs b/src/login.rs\nindex 3d21ec5..9f8e7d6 100644\n--- a/src/login.rs\n+++ b/src/login.rs\n@@ -1,4 +1,4 @@\n",
    );
    for i in 0..60 {
        d.push_str(&format!("-const TIMEOUT_{i}: u64 = 30;\n+const TIMEOUT_{i}: u64 = 120;\n"));
    }
    d
}

fn run(id: u64, conclusion: &str) -> Value {
    merge(
        json!({
                "id": id, "name": "CI", "node_id": format!("WFR_kwLOBQ{id}"), "head_branch": "main", "head_sha": MAIN_SHA,
                "path": ".github/workflows/ci.yml", "display_title": "Fix login timeout", "run_number": id - 30_000_000, "event": "push",
                "status": "completed", "conclusion": conclusion, "workflow_id": 161335, "check_suite_id": 42, "check_suite_node_id": "MDEwOkNoZWNrU3VpdGU0Mg==",
                "url": format!("{API}/repos/acme/demo/actions/runs/{id}"), "html_url": format!("https://github.com/acme/demo/actions/runs/{id}"),
                "pull_requests": [], "created_at": "2026-02-05T09:00:00Z", "updated_at": "2026-02-05T09:06:00Z"
        }),
        json!({
            "actor": user("alice"), "run_attempt": 1, "referenced_workflows": [], "run_started_at": "2026-02-05T09:00:00Z",
            "triggering_actor": user("alice"), "jobs_url": format!("{API}/repos/acme/demo/actions/runs/{id}/jobs"),
            "logs_url": format!("{API}/repos/acme/demo/actions/runs/{id}/logs"), "check_suite_url": format!("{API}/repos/acme/demo/check-suites/42"),
            "artifacts_url": format!("{API}/repos/acme/demo/actions/runs/{id}/artifacts"), "cancel_url": format!("{API}/repos/acme/demo/actions/runs/{id}/cancel"),
            "rerun_url": format!("{API}/repos/acme/demo/actions/runs/{id}/rerun"), "workflow_url": format!("{API}/repos/acme/demo/actions/workflows/161335"),
            "head_commit": {"id": MAIN_SHA, "tree_id": "d23f6eedb1e1b9610bbc754ddb5197bfe7271223", "message": "Fix login timeout", "timestamp": "2026-02-05T08:59:00Z",
                            "author": {"name": "Alice", "email": "alice@example.com"}, "committer": {"name": "GitHub", "email": "noreply@github.com"}},
            "repository": {"id": 1_296_270, "name": "demo", "full_name": "acme/demo", "owner": user("acme")},
            "head_repository": {"id": 1_296_270, "name": "demo", "full_name": "acme/demo", "owner": user("acme")}
        }),
    )
}

fn file_entry(path: &str, sha: &str, text: &[u8]) -> Value {
    // GitHub wraps base64 content at 60 columns with newlines.
    let b64 = plugins::codec::base64_encode(text);
    let wrapped: Vec<String> = b64.as_bytes().chunks(60).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    let name = path.rsplit('/').next().unwrap();
    json!({
        "type": "file", "encoding": "base64", "size": text.len(), "name": name, "path": path, "content": wrapped.join("\n") + "\n",
        "sha": sha, "url": format!("{API}/repos/acme/demo/contents/{path}?ref=main"),
        "git_url": format!("{API}/repos/acme/demo/git/blobs/{sha}"), "html_url": format!("https://github.com/acme/demo/blob/main/{path}"),
        "download_url": format!("https://raw.githubusercontent.com/acme/demo/main/{path}"),
        "_links": {"self": format!("{API}/repos/acme/demo/contents/{path}?ref=main"), "git": format!("{API}/repos/acme/demo/git/blobs/{sha}"), "html": format!("https://github.com/acme/demo/blob/main/{path}")}
    })
}

const README: &str = "# Demo\n\nA demo service.\n\n## Setup\n\nRun `cargo run`. Ünïcode is fine.\nSee docs/setup.md for configuration, environment variables and deployment notes.\n";

// ---------------------------------------------------------------- the fake

fn gh_error(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"message": message, "documentation_url": "https://docs.github.com/rest", "status": status.to_string()}),
    )
}

fn validation(resource: &str, field: &str, code: &str) -> Reply {
    Reply::json(
        422,
        json!({"message": "Validation Failed", "errors": [{"resource": resource, "code": code, "field": field}], "documentation_url": "https://docs.github.com/rest"}),
    )
}

fn text_reply(content_type: &str, body: String) -> Reply {
    Reply { status: 200, headers: vec![("content-type".into(), content_type.into())], body }
}

fn no_content() -> Reply {
    Reply { status: 204, headers: vec![], body: String::new() }
}

/// One page of `all`, with GitHub's Link header (next/last/prev/first) built from page/per_page.
fn paged(r: &Recorded, path: &str, all: &[Value], wrap: impl Fn(Vec<Value>) -> Value) -> Reply {
    let per_page: usize = r.q("per_page").and_then(|v| v.parse().ok()).unwrap_or(30);
    let page: usize = r.q("page").and_then(|v| v.parse().ok()).unwrap_or(1);
    let items: Vec<Value> = all.iter().skip((page - 1) * per_page).take(per_page).cloned().collect();
    let last = all.len().div_ceil(per_page).max(1);
    let link = |p: usize, rel: &str| format!("<{API}{path}?per_page={per_page}&page={p}>; rel=\"{rel}\"");
    let mut links = Vec::new();
    if page > 1 {
        links.push(link(page - 1, "prev"));
        links.push(link(1, "first"));
    }
    if page < last {
        links.push(link(page + 1, "next"));
        links.push(link(last, "last"));
    }
    let reply = Reply::json(200, wrap(items));
    if links.is_empty() { reply } else { reply.with_header("link", &links.join(", ")) }
}

fn json_body(r: &Recorded) -> Result<Value, Reply> {
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err(gh_error(415, "Unsupported Media Type"));
    }
    serde_json::from_slice(&r.body).map_err(|_| gh_error(400, "Problems parsing JSON"))
}

pub(crate) fn github(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return gh_error(
            403,
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header",
        );
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return gh_error(401, "Bad credentials");
    }
    if r.header("x-github-api-version") != Some("2022-11-28") {
        return gh_error(400, "Missing or unsupported X-GitHub-Api-Version header");
    }
    let accept = r.header("accept").unwrap_or("");
    // GitHub Enterprise Server serves the same API under /api/v3.
    let path = r.path.strip_prefix("/api/v3").unwrap_or(&r.path).to_string();
    let special = match (r.method.as_str(), path.as_str(), accept) {
        ("GET", "/repos/acme/demo/pulls/7", "application/vnd.github.diff") => {
            return text_reply("text/plain; charset=utf-8", diff_text());
        }
        ("GET", "/repos/acme/demo/contents/data/large.csv", "application/vnd.github.raw+json") => {
            return text_reply("application/vnd.github.raw+json", "id,name\n1,alpha\n2,beta\n".into());
        }
        (_, _, "application/vnd.github+json") => None,
        _ => Some(gh_error(415, "Unsupported 'Accept' header")),
    };
    if let Some(reply) = special {
        return reply;
    }
    let body = if matches!(r.method.as_str(), "POST" | "PUT" | "PATCH") {
        match json_body(r) {
            Ok(b) => b,
            Err(reply) => return reply,
        }
    } else {
        Value::Null
    };
    match (r.method.as_str(), path.as_str()) {
        ("GET", "/user") => Reply::json(200, {
            let mut u = user("octocat");
            u["name"] = json!("The Octocat");
            u["plan"] = json!({"name": "pro", "space": 976562499, "private_repos": 9999});
            u
        }),
        ("GET", "/user/repos") => {
            if r.q("type").is_some() && (r.q("visibility").is_some() || r.q("affiliation").is_some()) {
                return gh_error(422, "If you specify visibility or affiliation, you cannot specify type.");
            }
            let all: Vec<Value> = ["demo", "api", "web", "infra", "docs"]
                .iter()
                .enumerate()
                .map(|(i, n)| repo(n, i as u64 + 1))
                .collect();
            paged(r, "/user/repos", &all, Value::Array)
        }
        ("GET", "/repos/acme/demo") => Reply::json(200, repo("demo", 1)),
        ("GET", "/repos/acme/busy") => {
            gh_error(429, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
                .with_header("retry-after", "120")
        }
        ("GET", "/repos/acme/quota") => gh_error(403, "API rate limit exceeded for user ID 1.")
            .with_header("x-ratelimit-remaining", "0")
            .with_header("retry-after", "60"),
        ("GET", "/repos/acme/secret") => gh_error(403, "Resource not accessible by personal access token"),
        ("GET", "/search/repositories") => {
            if r.q("q").is_none_or(str::is_empty) {
                return validation("Search", "q", "missing");
            }
            let all: Vec<Value> = (1..=3).map(|i| repo(&format!("cli-{i}"), i)).collect();
            paged(
                r,
                "/search/repositories",
                &all,
                |items| json!({"total_count": 3, "incomplete_results": false, "items": items}),
            )
        }
        ("GET", "/search/code") => {
            if r.q("q").is_none_or(str::is_empty) {
                return validation("Search", "q", "missing");
            }
            let item = json!({
                "name": "login.rs", "path": "src/login.rs", "sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
                "url": format!("{API}/repositories/1296270/contents/src/login.rs?ref=aa218f5"), "git_url": format!("{API}/repositories/1296270/git/blobs/9f8e7d6"),
                "html_url": "https://github.com/acme/demo/blob/aa218f5/src/login.rs", "repository": repo("demo", 1), "score": 1.0
            });
            Reply::json(200, json!({"total_count": 1, "incomplete_results": false, "items": [item]}))
        }
        ("GET", "/search/issues") => {
            let items = vec![issue(42, false), {
                let mut p = issue(7, true);
                p["pull_request"]["merged_at"] = json!("2026-02-06T10:00:00Z");
                p["state"] = json!("closed");
                p
            }];
            paged(
                r,
                "/search/issues",
                &items,
                |items| json!({"total_count": 2, "incomplete_results": false, "items": items}),
            )
        }
        ("GET", "/repos/acme/demo/contents/README.md") => {
            Reply::json(200, file_entry("README.md", README_SHA, README.as_bytes()))
        }
        ("GET", "/repos/acme/demo/contents/src/my%20lib.rs") => Reply::json(
            200,
            file_entry("src/my lib.rs", "1111111111111111111111111111111111111111", b"pub fn hi() {}\n"),
        ),
        ("GET", "/repos/acme/demo/contents/logo.png") => Reply::json(
            200,
            file_entry("logo.png", "2222222222222222222222222222222222222222", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ),
        ("GET", "/repos/acme/demo/contents/data/large.csv") => {
            let mut f = file_entry("data/large.csv", "4444444444444444444444444444444444444444", b"");
            f["content"] = json!("");
            f["encoding"] = json!("none");
            f["size"] = json!(2_000_000);
            Reply::json(200, f)
        }
        ("GET", "/repos/acme/demo/contents/docs") => Reply::json(
            200,
            json!([
                {"type": "file", "size": 625, "name": "setup.md", "path": "docs/setup.md", "sha": "5555555555555555555555555555555555555555",
                 "url": format!("{API}/repos/acme/demo/contents/docs/setup.md?ref=main"), "html_url": "https://github.com/acme/demo/blob/main/docs/setup.md",
                 "git_url": format!("{API}/repos/acme/demo/git/blobs/5555"), "download_url": "https://raw.githubusercontent.com/acme/demo/main/docs/setup.md", "_links": {}},
                {"type": "dir", "size": 0, "name": "img", "path": "docs/img", "sha": "6666666666666666666666666666666666666666",
                 "url": format!("{API}/repos/acme/demo/contents/docs/img?ref=main"), "html_url": "https://github.com/acme/demo/tree/main/docs/img",
                 "git_url": format!("{API}/repos/acme/demo/git/trees/6666"), "download_url": null, "_links": {}}
            ]),
        ),
        ("PUT", p) if p.starts_with("/repos/acme/demo/contents/") => {
            let file = p.trim_start_matches("/repos/acme/demo/contents/");
            let (Some(message), Some(content)) = (body["message"].as_str(), body["content"].as_str()) else {
                return validation("Contents", "message", "missing_field");
            };
            let Some(bytes) = plugins::codec::base64_decode(content) else {
                return gh_error(422, "content is not valid Base64");
            };
            let exists = file == "README.md";
            match (exists, body["sha"].as_str()) {
                (true, None) => return gh_error(422, "Invalid request.\n\n\"sha\" wasn't supplied."),
                (true, Some(s)) if s != README_SHA => {
                    return gh_error(409, &format!("README.md is at {README_SHA} but expected {s}"));
                }
                _ => {}
            }
            let decoded = String::from_utf8(bytes).unwrap();
            let mut entry =
                file_entry(&file.replace("%2F", "/"), "95b966ae1c166bd92f8ae7d1c313e738c731dfc3", decoded.as_bytes());
            entry.as_object_mut().unwrap().remove("content");
            entry.as_object_mut().unwrap().remove("encoding");
            Reply::json(
                if exists { 200 } else { 201 },
                json!({
                    "content": entry,
                    "commit": {
                        "sha": "7638417db6d59f3c431d3e1f261cc637155684cd", "node_id": "MDY6Q29tbWl0NzYzODQxN2RiNmQ1OWYzYzQzMWQzZTFmMjYxY2M2MzcxNTU2ODRjZA==",
                        "url": format!("{API}/repos/acme/demo/git/commits/7638417db6d59f3c431d3e1f261cc637155684cd"),
                        "html_url": "https://github.com/acme/demo/commit/7638417db6d59f3c431d3e1f261cc637155684cd",
                        "author": {"date": "2026-02-05T13:13:22Z", "name": "Octo Cat", "email": "octocat@github.com"},
                        "committer": {"date": "2026-02-05T13:13:22Z", "name": "Octo Cat", "email": "octocat@github.com"},
                        "message": message, "tree": {"url": format!("{API}/repos/acme/demo/git/trees/691272480426f78a0138979dd3ce63b77f706feb"), "sha": "691272480426f78a0138979dd3ce63b77f706feb"},
                        "parents": [{"url": format!("{API}/repos/acme/demo/git/commits/{MAIN_SHA}"), "html_url": format!("https://github.com/acme/demo/commit/{MAIN_SHA}"), "sha": MAIN_SHA}],
                        "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null}
                    }
                }),
            )
        }
        ("GET", p) if p.starts_with("/repos/acme/demo/contents/") => gh_error(404, "Not Found"),
        ("GET", "/repos/acme/demo/git/ref/heads/main") | ("GET", "/repos/acme/demo/git/ref/heads/release/1.x") => {
            let (name, sha) = if path.ends_with("/main") { ("main", MAIN_SHA) } else { ("release/1.x", RELEASE_SHA) };
            Reply::json(
                200,
                json!({"ref": format!("refs/heads/{name}"), "node_id": "MDM6UmVmcmVmcy9oZWFkcy9mZWF0dXJlQQ==", "url": format!("{API}/repos/acme/demo/git/refs/heads/{name}"),
                       "object": {"type": "commit", "sha": sha, "url": format!("{API}/repos/acme/demo/git/commits/{sha}")}}),
            )
        }
        ("GET", p) if p.starts_with("/repos/acme/demo/git/ref/") => gh_error(404, "Not Found"),
        ("POST", "/repos/acme/demo/git/refs") => {
            let (Some(rf), Some(sha)) = (body["ref"].as_str(), body["sha"].as_str()) else {
                return validation("Reference", "ref", "missing_field");
            };
            if !rf.starts_with("refs/") || rf.matches('/').count() < 2 {
                return gh_error(422, "Reference name is invalid");
            }
            if rf == "refs/heads/main" {
                return gh_error(422, "Reference already exists");
            }
            if sha.len() != 40 {
                return gh_error(422, "Object does not exist");
            }
            Reply::json(
                201,
                json!({"ref": rf, "node_id": "MDM6UmVmcmVmcy9oZWFkcy9mZWF0dXJlQQ==", "url": format!("{API}/repos/acme/demo/git/{rf}"),
                       "object": {"type": "commit", "sha": sha, "url": format!("{API}/repos/acme/demo/git/commits/{sha}")}}),
            )
        }
        ("GET", "/repos/acme/demo/issues") => {
            // Issues 1..=5 with every third one a pull request, as the real endpoint mixes them.
            let all: Vec<Value> = (1..=5).rev().map(|n| issue(n, n % 3 == 0)).collect();
            paged(r, "/repos/acme/demo/issues", &all, Value::Array)
        }
        ("GET", "/repos/acme/demo/issues/42") => Reply::json(200, issue(42, false)),
        ("GET", "/repos/acme/demo/issues/42/comments") => Reply::json(
            200,
            json!([{
                "id": 1, "node_id": "MDEyOklzc3VlQ29tbWVudDE=", "url": format!("{API}/repos/acme/demo/issues/comments/1"),
                "html_url": "https://github.com/acme/demo/issues/42#issuecomment-1", "body": "I can reproduce this.", "user": user("bob"),
                "created_at": "2026-02-02T09:00:00Z", "updated_at": "2026-02-02T09:00:00Z", "issue_url": format!("{API}/repos/acme/demo/issues/42"),
                "author_association": "MEMBER", "reactions": {"total_count": 0}, "performed_via_github_app": null
            }]),
        ),
        ("POST", "/repos/acme/demo/issues") => {
            if body["title"].as_str().is_none_or(|t| t.trim().is_empty()) {
                return validation("Issue", "title", "missing_field");
            }
            let mut i = issue(43, false);
            i["title"] = body["title"].clone();
            i["body"] = body.get("body").cloned().unwrap_or(Value::Null);
            i["labels"] = json!(
                body["labels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(label)
                    .collect::<Vec<_>>()
            );
            i["assignees"] = json!(
                body["assignees"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(user)
                    .collect::<Vec<_>>()
            );
            i["comments"] = json!(0);
            Reply::json(201, i)
        }
        ("PATCH", "/repos/acme/demo/issues/42") => {
            let mut i = issue(42, false);
            for k in ["title", "body", "state", "state_reason"] {
                if let Some(v) = body.get(k) {
                    i[k] = v.clone();
                }
            }
            if let Some(l) = body.get("labels") {
                i["labels"] =
                    json!(l.as_array().into_iter().flatten().filter_map(Value::as_str).map(label).collect::<Vec<_>>());
            }
            if body["state"] == "closed" {
                i["closed_at"] = json!("2026-02-07T10:00:00Z");
                i["closed_by"] = user("octocat");
            }
            Reply::json(200, i)
        }
        ("POST", "/repos/acme/demo/issues/42/comments") => {
            if body["body"].as_str().is_none_or(str::is_empty) {
                return validation("IssueComment", "body", "missing_field");
            }
            Reply::json(
                201,
                json!({
                    "id": 1_661_000, "node_id": "IC_kwDOA", "url": format!("{API}/repos/acme/demo/issues/comments/1661000"),
                    "html_url": "https://github.com/acme/demo/issues/42#issuecomment-1661000", "body": body["body"], "user": user("octocat"),
                    "created_at": "2026-02-07T10:00:00Z", "updated_at": "2026-02-07T10:00:00Z", "issue_url": format!("{API}/repos/acme/demo/issues/42"),
                    "author_association": "OWNER"
                }),
            )
        }
        ("GET", "/repos/acme/demo/pulls") => {
            let mut merged = pull(5);
            merged["state"] = json!("closed");
            merged["merged_at"] = json!("2026-02-01T10:00:00Z");
            paged(r, "/repos/acme/demo/pulls", &[pull(9), pull(7), merged], Value::Array)
        }
        ("GET", "/repos/acme/demo/pulls/7") => Reply::json(200, pull_detail(7)),
        ("GET", "/repos/acme/demo/pulls/7/files") => Reply::json(
            200,
            json!([
                {"sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": "src/login.rs", "status": "modified", "additions": 30, "deletions": 5, "changes": 35,
                 "blob_url": "https://github.com/acme/demo/blob/6dcb09b/src/login.rs", "raw_url": "https://github.com/acme/demo/raw/6dcb09b/src/login.rs",
                 "contents_url": format!("{API}/repos/acme/demo/contents/src/login.rs?ref=6dcb09b"), "patch": "@@ -1,4 +1,4 @@\n-old\n+new"},
                {"sha": "cccd538c8e72b8c175046e27cc8f907076331401", "filename": "src/session.rs", "previous_filename": "src/auth.rs", "status": "renamed", "additions": 10, "deletions": 0, "changes": 10,
                 "blob_url": "https://github.com/acme/demo/blob/6dcb09b/src/session.rs", "raw_url": "https://github.com/acme/demo/raw/6dcb09b/src/session.rs",
                 "contents_url": format!("{API}/repos/acme/demo/contents/src/session.rs?ref=6dcb09b"), "patch": "@@ -0,0 +1 @@\n+x"}
            ]),
        ),
        ("POST", "/repos/acme/demo/pulls") => {
            for f in ["title", "head", "base"] {
                if body[f].as_str().is_none_or(str::is_empty) {
                    return validation("PullRequest", f, "missing_field");
                }
            }
            if body["head"] == "empty-branch" {
                return Reply::json(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "custom", "message": "No commits between main and empty-branch"}], "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "422"}),
                );
            }
            let mut p = pull_detail(10);
            p["title"] = body["title"].clone();
            p["body"] = body.get("body").cloned().unwrap_or(Value::Null);
            p["draft"] = body.get("draft").cloned().unwrap_or(json!(false));
            p["head"]["ref"] = body["head"].clone();
            p["base"]["ref"] = body["base"].clone();
            p["requested_reviewers"] = json!([]);
            p["requested_teams"] = json!([]);
            Reply::json(201, p)
        }
        ("PUT", "/repos/acme/demo/pulls/7/merge") => {
            if body.get("sha").is_some_and(|s| s != HEAD_SHA) {
                return gh_error(409, "Head branch was modified. Review and try the merge again.");
            }
            if body
                .get("merge_method")
                .is_some_and(|m| !["merge", "squash", "rebase"].contains(&m.as_str().unwrap_or("")))
            {
                return validation("PullRequest", "merge_method", "invalid");
            }
            Reply::json(
                200,
                json!({"sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "merged": true, "message": "Pull Request successfully merged"}),
            )
        }
        ("PUT", "/repos/acme/demo/pulls/8/merge") => gh_error(405, "Pull Request is not mergeable"),
        ("POST", "/repos/acme/demo/pulls/7/reviews") => {
            let event = body["event"].as_str().unwrap_or("");
            if !["APPROVE", "REQUEST_CHANGES", "COMMENT"].contains(&event) {
                return validation("PullRequestReview", "event", "invalid");
            }
            for c in body["comments"].as_array().into_iter().flatten() {
                if c["path"].as_str().is_none()
                    || c["line"].as_u64().is_none()
                    || !["LEFT", "RIGHT"].contains(&c["side"].as_str().unwrap_or(""))
                {
                    return gh_error(422, "Unprocessable Entity: comments are invalid");
                }
            }
            let state = match event {
                "APPROVE" => "APPROVED",
                "REQUEST_CHANGES" => "CHANGES_REQUESTED",
                _ => "COMMENTED",
            };
            Reply::json(
                200,
                json!({
                    "id": 80, "node_id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=", "user": user("octocat"), "body": body.get("body").cloned().unwrap_or(json!("")),
                    "state": state, "html_url": "https://github.com/acme/demo/pull/7#pullrequestreview-80",
                    "pull_request_url": format!("{API}/repos/acme/demo/pulls/7"), "submitted_at": "2026-02-07T10:00:00Z", "commit_id": HEAD_SHA,
                    "author_association": "OWNER", "_links": {}
                }),
            )
        }
        ("GET", "/repos/acme/demo/actions/runs") | ("GET", "/repos/acme/demo/actions/workflows/ci.yml/runs") => {
            let all = vec![run(30_000_433, "failure"), run(30_000_432, "success"), run(30_000_431, "success")];
            paged(r, &path, &all, |items| json!({"total_count": 3, "workflow_runs": items}))
        }
        ("POST", "/repos/acme/demo/actions/workflows/deploy.yml/dispatches") => {
            if body["ref"].as_str().is_none() {
                return gh_error(422, "Invalid request.\n\n\"ref\" wasn't supplied.");
            }
            if body["return_run_details"] == true {
                Reply::json(
                    200,
                    json!({"workflow_run_id": 30_000_500, "run_url": format!("{API}/repos/acme/demo/actions/runs/30000500"), "html_url": "https://github.com/acme/demo/actions/runs/30000500"}),
                )
            } else {
                no_content()
            }
        }
        // An Enterprise Server that predates return_run_details.
        ("POST", "/repos/acme/demo/actions/workflows/161335/dispatches") => {
            if body.get("return_run_details").is_some() {
                return gh_error(422, "Invalid request.\n\n\"return_run_details\" is not a permitted key.");
            }
            no_content()
        }
        _ => gh_error(404, "Not Found"),
    }
}

/// A GitHub app without the outbound-data guard, for tests that count the requests a write
/// sends (the guard's own lookups would be among them; `flow_guard.rs` tests those).
async fn gh_unguarded() -> (TestApp, Fake) {
    let fake = Fake::start(github).await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", TOKEN.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    (t, fake)
}

async fn gh() -> (TestApp, Fake) {
    let fake = Fake::start(github).await;
    let t = app_with(&[("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()), ("WORKBENCH_GITHUB_TOKEN", TOKEN.into())]);
    (t, fake)
}

fn tail(fake: &Fake, n: usize) -> Vec<Recorded> {
    let all = fake.requests();
    all[all.len() - n..].to_vec()
}

fn body_of(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

// ---------------------------------------------------------------- repositories

#[tokio::test]
async fn github_list_repos_pages_with_the_link_header() {
    let (t, fake) = gh().await;
    let r = t
        .ok(
            "github_list_repos",
            json!({"limit": 2, "visibility": "all", "affiliation": ["owner", "organization_member"]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/user/repos"));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(req.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(req.header("x-github-api-version"), Some("2022-11-28"));
    assert_eq!(req.q("visibility"), Some("all"));
    assert_eq!(req.q("affiliation"), Some("owner,organization_member"));
    assert_eq!(req.q("sort"), Some("updated"));
    assert_eq!((req.q("per_page"), req.q("page")), (Some("2"), Some("1")));
    assert_eq!(
        r["repos"][0],
        json!({
            "full_name": "acme/demo", "description": "The demo service", "visibility": "public", "default_branch": "main",
            "language": "Rust", "stars": 80, "forks": 9, "open_issues": 1, "pushed_at": "2026-03-09T10:00:00Z",
            "url": "https://github.com/acme/demo"
        })
    );
    assert_eq!(r["next_cursor"], "2:2");

    let r2 = t.ok("github_list_repos", json!({"cursor": r["next_cursor"]})).await;
    assert_eq!((fake.last().q("page"), fake.last().q("per_page")), (Some("2"), Some("2")));
    assert_eq!(
        (r2["repos"][0]["full_name"].as_str(), r2["repos"][0]["archived"].as_bool()),
        (Some("acme/web"), Some(true))
    );
    assert_eq!((r2["repos"][1]["visibility"].as_str(), r2["repos"][1].get("archived")), (Some("private"), None));
    let r3 = t.ok("github_list_repos", json!({"cursor": r2["next_cursor"]})).await;
    assert_eq!(r3["repos"].as_array().unwrap().len(), 1);
    assert!(r3.get("next_cursor").is_none(), "the last page has no next_cursor: {r3}");

    let raw = t.ok("github_list_repos", json!({"limit": 5, "include_raw": true})).await;
    let shaped = t.ok("github_list_repos", json!({"limit": 5})).await;
    let (raw_len, shaped_len) = (raw["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("github_list_repos: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 5 < raw_len, "shaping should cut the payload a lot");
}

#[tokio::test]
async fn github_get_repo_shapes_and_can_include_raw() {
    let (t, fake) = gh().await;
    let r = t.ok("github_get_repo", json!({"owner": "acme", "repo": "demo"})).await;
    assert_eq!(fake.last().path, "/repos/acme/demo");
    assert_eq!(r["default_branch"], "main");
    assert_eq!(r["topics"], json!(["api", "rust"]));
    assert_eq!(r["license"], "MIT");
    assert_eq!(r["watchers"], 42);
    assert_eq!(r["clone_url"], "https://github.com/acme/demo.git");
    assert_eq!(r["your_permissions"], json!(["push", "triage", "pull"]));
    assert!(r.get("raw").is_none() && r.get("homepage").is_none());
    let raw = t.ok("github_get_repo", json!({"owner": "acme", "repo": "demo", "include_raw": true})).await;
    assert_eq!(raw["raw"]["node_id"], "MDEwOlJlcG9zaXRvcnkx1");
}

#[tokio::test]
async fn github_search_repos_and_code() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_search_repos", json!({"q": "cli language:rust", "sort": "stars", "order": "desc", "limit": 2}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/search/repositories");
    assert_eq!((req.q("q"), req.q("sort"), req.q("order")), (Some("cli language:rust"), Some("stars"), Some("desc")));
    assert_eq!(r["total_count"], 3);
    assert_eq!(r["repos"][1]["full_name"], "acme/cli-2");
    assert_eq!(r["next_cursor"], "2:2");
    let r = t.ok("github_search_repos", json!({"q": "cli", "sort": "help-wanted-issues"})).await;
    assert_eq!(fake.last().q("sort"), Some("help-wanted-issues"));
    assert!(r.get("next_cursor").is_none());

    let c = t.ok("github_search_code", json!({"q": "login_timeout repo:acme/demo"})).await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("q"), req.q("per_page")),
        ("/search/code", Some("login_timeout repo:acme/demo"), Some("20"))
    );
    assert_eq!(
        c,
        json!({"total_count": 1, "files": [{"repo": "acme/demo", "path": "src/login.rs", "name": "login.rs",
               "sha": "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "url": "https://github.com/acme/demo/blob/aa218f5/src/login.rs"}]})
    );
}

#[tokio::test]
async fn github_get_file_decodes_lists_and_handles_big_and_binary_files() {
    let (t, fake) = gh().await;
    let f =
        t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "README.md", "ref": "v1.2.0"})).await;
    let req = fake.last();
    assert_eq!((req.path.as_str(), req.q("ref")), ("/repos/acme/demo/contents/README.md", Some("v1.2.0")));
    assert_eq!(f["content"], README, "base64 with GitHub's line breaks decodes to the original text");
    assert_eq!(
        (f["sha"].as_str(), f["truncated"].as_bool(), f["type"].as_str()),
        (Some(README_SHA), Some(false), Some("file"))
    );

    let cut =
        t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "README.md", "max_chars": 100})).await;
    assert!(fake.last().q("ref").is_none());
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["content"].as_str().unwrap(), README.chars().take(100).collect::<String>());

    let spaced = t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "/src/my lib.rs"})).await;
    assert_eq!(fake.last().path, "/repos/acme/demo/contents/src/my%20lib.rs");
    assert_eq!(spaced["content"], "pub fn hi() {}\n");

    let dir = t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "docs"})).await;
    assert_eq!(
        dir,
        json!({"type": "dir", "path": "docs", "count": 2, "entries": [
            {"name": "setup.md", "type": "file", "path": "docs/setup.md", "size": 625},
            {"name": "img", "type": "dir", "path": "docs/img"}
        ]})
    );

    let big = t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "data/large.csv"})).await;
    let reqs = tail(&fake, 2);
    assert_eq!(reqs[0].header("accept"), Some("application/vnd.github+json"));
    assert_eq!(
        reqs[1].header("accept"),
        Some("application/vnd.github.raw+json"),
        "files over 1 MB come through the raw media type"
    );
    assert_eq!(big["content"], "id,name\n1,alpha\n2,beta\n");
    assert_eq!(big["size"], 2_000_000);

    let png = t.ok("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "logo.png"})).await;
    assert_eq!(png["binary"], true);
    assert!(png.get("content").is_none());
    assert_eq!(png["download_url"], "https://raw.githubusercontent.com/acme/demo/main/logo.png");

    let missing = t.err("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "nope.txt"})).await;
    assert_eq!((missing["code"].as_str(), missing["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(404)));
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .starts_with("github answered 404: Not Found (it does not exist, or this token cannot see it"),
        "{missing}"
    );
    let sneaky = t.err("github_get_file", json!({"owner": "acme", "repo": "demo", "path": "../../user"})).await;
    assert_eq!(sneaky["code"], "INVALID_ARGUMENTS");
    assert_eq!(sneaky["problems"][0]["path"], "/path");
}

#[tokio::test]
async fn github_update_file_looks_up_the_sha_creates_and_reports_conflicts() {
    let (t, fake) = gh_unguarded().await;
    let new_text = "# Demo\n\nUpdated.\n";
    let r = t
        .ok(
            "github_update_file",
            json!({"owner": "acme", "repo": "demo", "path": "README.md", "content": new_text, "message": "Update README", "branch": "docs-update"}),
        )
        .await;
    let reqs = tail(&fake, 2);
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str(), reqs[0].q("ref")),
        ("GET", "/repos/acme/demo/contents/README.md", Some("docs-update"))
    );
    assert_eq!((reqs[1].method.as_str(), reqs[1].path.as_str()), ("PUT", "/repos/acme/demo/contents/README.md"));
    assert_eq!(reqs[1].header("content-type"), Some("application/json"));
    assert_eq!(
        body_of(&reqs[1]),
        json!({"message": "Update README", "content": plugins::codec::base64_encode(new_text.as_bytes()), "branch": "docs-update", "sha": README_SHA})
    );
    assert_eq!(
        r,
        json!({"path": "README.md", "created": false, "branch": "docs-update", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3",
               "commit_sha": "7638417db6d59f3c431d3e1f261cc637155684cd",
               "commit_url": "https://github.com/acme/demo/commit/7638417db6d59f3c431d3e1f261cc637155684cd",
               "url": "https://github.com/acme/demo/blob/main/README.md"})
    );

    let created = t
        .ok(
            "github_update_file",
            json!({"owner": "acme", "repo": "demo", "path": "docs/new.md", "content": "hello", "message": "Add docs"}),
        )
        .await;
    let reqs = tail(&fake, 2);
    assert_eq!(reqs[0].path, "/repos/acme/demo/contents/docs/new.md");
    assert_eq!(body_of(&reqs[1]), json!({"message": "Add docs", "content": "aGVsbG8="}), "a new file has no sha");
    assert_eq!(created["created"], true);

    let dir = t
        .err(
            "github_update_file",
            json!({"owner": "acme", "repo": "demo", "path": "docs", "content": "x", "message": "m"}),
        )
        .await;
    assert_eq!((dir["code"].as_str(), dir["problems"][0]["path"].as_str()), (Some("INVALID_ARGUMENTS"), Some("/path")));
    assert_eq!(fake.last().method, "GET", "nothing is written over a directory");

    let before = fake.requests().len();
    let stale = "0000000000000000000000000000000000000000";
    let e = t
        .err(
            "github_update_file",
            json!({"owner": "acme", "repo": "demo", "path": "README.md", "content": "x", "message": "m", "sha": stale}),
        )
        .await;
    assert_eq!(fake.requests().len(), before + 1, "a given sha is used as is");
    assert_eq!(e["status"], 409);
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("README.md is at {README_SHA} but expected {stale}")) && msg.contains("github_get_file"),
        "{e}"
    );
}

#[tokio::test]
async fn github_create_branch_resolves_the_default_branch_a_named_ref_or_a_sha() {
    let (t, fake) = gh_unguarded().await;
    let r = t.ok("github_create_branch", json!({"owner": "acme", "repo": "demo", "branch": "fix/login"})).await;
    let reqs = tail(&fake, 3);
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("GET", "/repos/acme/demo"));
    assert_eq!((reqs[1].method.as_str(), reqs[1].path.as_str()), ("GET", "/repos/acme/demo/git/ref/heads/main"));
    assert_eq!((reqs[2].method.as_str(), reqs[2].path.as_str()), ("POST", "/repos/acme/demo/git/refs"));
    assert_eq!(body_of(&reqs[2]), json!({"ref": "refs/heads/fix/login", "sha": MAIN_SHA}));
    assert_eq!(r, json!({"branch": "fix/login", "ref": "refs/heads/fix/login", "sha": MAIN_SHA, "from": "main"}));

    let r = t
        .ok(
            "github_create_branch",
            json!({"owner": "acme", "repo": "demo", "branch": "hotfix", "from_ref": "release/1.x"}),
        )
        .await;
    let reqs = tail(&fake, 2);
    assert_eq!(reqs[0].path, "/repos/acme/demo/git/ref/heads/release/1.x");
    assert_eq!(body_of(&reqs[1])["sha"], RELEASE_SHA);
    assert_eq!(r["from"], "release/1.x");

    let before = fake.requests().len();
    t.ok("github_create_branch", json!({"owner": "acme", "repo": "demo", "branch": "pinned", "from_ref": HEAD_SHA}))
        .await;
    assert_eq!(fake.requests().len(), before + 1, "a commit sha needs no lookup");
    assert_eq!(body_of(&fake.last()), json!({"ref": "refs/heads/pinned", "sha": HEAD_SHA}));

    let exists = t
        .err("github_create_branch", json!({"owner": "acme", "repo": "demo", "branch": "main", "from_ref": "main"}))
        .await;
    assert_eq!(
        (exists["status"].as_u64(), exists["message"].as_str()),
        (Some(422), Some("github answered 422: Reference already exists"))
    );
    let nobranch = t
        .err("github_create_branch", json!({"owner": "acme", "repo": "demo", "branch": "x", "from_ref": "nope"}))
        .await;
    assert_eq!(nobranch["status"], 404);
    assert!(nobranch["message"].as_str().unwrap().contains("acme/demo has no branch named 'nope'"), "{nobranch}");
}

// ---------------------------------------------------------------- issues

#[tokio::test]
async fn github_list_issues_drops_pull_requests_and_pages() {
    let (t, fake) = gh().await;
    let r = t
        .ok(
            "github_list_issues",
            json!({"owner": "acme", "repo": "demo", "state": "all", "labels": ["bug", "p1"], "assignee": "bob", "since": "2026-01-01", "sort": "updated", "limit": 3}),
        )
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/repos/acme/demo/issues");
    assert_eq!((req.q("state"), req.q("labels"), req.q("assignee")), (Some("all"), Some("bug,p1"), Some("bob")));
    assert_eq!(
        (req.q("since"), req.q("sort"), req.q("per_page")),
        (Some("2026-01-01T00:00:00Z"), Some("updated"), Some("3"))
    );
    let numbers: Vec<u64> = r["issues"].as_array().unwrap().iter().map(|i| i["number"].as_u64().unwrap()).collect();
    assert_eq!(numbers, [5, 4], "#3 is a pull request and is dropped");
    assert_eq!(
        r["issues"][0],
        json!({"number": 5, "title": "Login times out after 5 seconds", "state": "open", "author": "alice", "assignees": ["bob"],
               "labels": ["bug"], "comments": 2, "created_at": "2026-02-01T09:00:00Z", "updated_at": "2026-02-03T09:00:00Z",
               "url": "https://github.com/acme/demo/issues/5"})
    );
    assert_eq!(r["next_cursor"], "2:3");
    let r2 = t.ok("github_list_issues", json!({"owner": "acme", "repo": "demo", "cursor": "2:3"})).await;
    assert_eq!(fake.last().q("page"), Some("2"));
    assert_eq!(r2["issues"].as_array().unwrap().len(), 2);
    assert!(r2.get("next_cursor").is_none());

    let raw = t.ok("github_list_issues", json!({"owner": "acme", "repo": "demo", "include_raw": true})).await;
    let shaped = t.ok("github_list_issues", json!({"owner": "acme", "repo": "demo"})).await;
    let (raw_len, shaped_len) = (raw["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("github_list_issues: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 4 < raw_len);
    assert!(raw["raw"].as_array().unwrap().iter().all(|i| i.get("pull_request").is_none()));

    let bad = t.err("github_list_issues", json!({"owner": "acme", "repo": "demo", "since": "last week"})).await;
    assert_eq!(bad["problems"][0]["path"], "/since");
}

#[tokio::test]
async fn github_search_issues_marks_prs_and_repos() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_search_issues", json!({"q": "is:open review-requested:@me", "sort": "updated", "order": "asc"}))
        .await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("q"), req.q("sort"), req.q("order")),
        ("/search/issues", Some("is:open review-requested:@me"), Some("updated"), Some("asc"))
    );
    assert_eq!(r["total_count"], 2);
    assert_eq!((r["items"][0]["type"].as_str(), r["items"][0]["repo"].as_str()), (Some("issue"), Some("acme/demo")));
    assert_eq!(
        (r["items"][1]["type"].as_str(), r["items"][1]["merged"].as_bool(), r["items"][1]["number"].as_u64()),
        (Some("pr"), Some(true), Some(7))
    );
    assert_eq!(r["items"][1]["url"], "https://github.com/acme/demo/pull/7");
}

#[tokio::test]
async fn github_get_issue_with_comments() {
    let (t, fake) = gh().await;
    let r = t.ok("github_get_issue", json!({"owner": "acme", "repo": "demo", "issue_number": 42, "include_comments": true, "comments_limit": 10})).await;
    let reqs = tail(&fake, 2);
    assert_eq!(reqs[0].path, "/repos/acme/demo/issues/42");
    assert_eq!((reqs[1].path.as_str(), reqs[1].q("per_page")), ("/repos/acme/demo/issues/42/comments", Some("10")));
    assert_eq!(r["body"], "Steps to reproduce #42:\n1. Open the app\n2. Wait");
    assert_eq!(
        r["comment_list"],
        json!([{"id": 1, "author": "bob", "created_at": "2026-02-02T09:00:00Z", "body": "I can reproduce this.",
                "url": "https://github.com/acme/demo/issues/42#issuecomment-1"}])
    );
    assert_eq!(r["more_comments"], 1, "the issue says 2 comments, one came back");
    let short =
        t.ok("github_get_issue", json!({"owner": "acme", "repo": "demo", "issue_number": 42, "max_chars": 100})).await;
    assert!(short.get("comment_list").is_none());
    assert_eq!(fake.last().path, "/repos/acme/demo/issues/42");
}

#[tokio::test]
async fn github_create_and_update_issues_and_comment() {
    let (t, fake) = gh().await;
    let r = t
        .ok(
            "github_create_issue",
            json!({"owner": "acme", "repo": "demo", "title": "Crash on start", "body": "It crashes.", "labels": ["bug"], "assignees": ["bob"], "milestone": 3}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/repos/acme/demo/issues"));
    assert_eq!(
        body_of(&req),
        json!({"title": "Crash on start", "body": "It crashes.", "labels": ["bug"], "assignees": ["bob"], "milestone": 3})
    );
    assert_eq!(
        (r["number"].as_u64(), r["title"].as_str(), r["labels"].clone()),
        (Some(43), Some("Crash on start"), json!(["bug"]))
    );

    let e = t.err("github_create_issue", json!({"owner": "acme", "repo": "demo", "title": "   "})).await;
    assert_eq!(e["status"], 422);
    assert_eq!(e["message"], "github answered 422: Validation Failed: Issue.title missing_field");

    let closed = t
        .ok(
            "github_update_issue",
            json!({"owner": "acme", "repo": "demo", "issue_number": 42, "state_reason": "not_planned", "labels": []}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", "/repos/acme/demo/issues/42"));
    assert_eq!(body_of(&req), json!({"state": "closed", "state_reason": "not_planned", "labels": []}));
    assert_eq!((closed["state"].as_str(), closed["state_reason"].as_str()), (Some("closed"), Some("not_planned")));
    assert!(closed.get("labels").is_none());
    let retitled = t
        .ok(
            "github_update_issue",
            json!({"owner": "acme", "repo": "demo", "issue_number": 42, "title": "New title", "state": "open"}),
        )
        .await;
    assert_eq!(body_of(&fake.last()), json!({"title": "New title", "state": "open"}));
    assert_eq!(retitled["title"], "New title");
    let nothing = t.err("github_update_issue", json!({"owner": "acme", "repo": "demo", "issue_number": 42})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");

    let c = t
        .ok(
            "github_create_comment",
            json!({"owner": "acme", "repo": "demo", "issue_number": 42, "body": "Fixed in #7."}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/repos/acme/demo/issues/42/comments"));
    assert_eq!(body_of(&req), json!({"body": "Fixed in #7."}));
    assert_eq!(
        c,
        json!({"id": 1661000, "issue_number": 42, "author": "octocat", "created_at": "2026-02-07T10:00:00Z",
               "url": "https://github.com/acme/demo/issues/42#issuecomment-1661000"})
    );
}

// ---------------------------------------------------------------- pull requests

#[tokio::test]
async fn github_list_prs_filters_and_shapes() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_list_prs", json!({"owner": "acme", "repo": "demo", "state": "all", "head": "fix/login", "base": "main", "sort": "long-running", "direction": "asc", "limit": 2}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/repos/acme/demo/pulls");
    assert_eq!((req.q("state"), req.q("head"), req.q("base")), (Some("all"), Some("acme:fix/login"), Some("main")));
    assert_eq!((req.q("sort"), req.q("direction"), req.q("per_page")), (Some("long-running"), Some("asc"), Some("2")));
    assert_eq!(
        r["pull_requests"][1],
        json!({"number": 7, "title": "Fix login timeout", "state": "open", "author": "alice", "head": "fix/login", "base": "main",
               "labels": ["bug"], "requested_reviewers": ["carol", "team:core"], "created_at": "2026-02-04T09:00:00Z",
               "updated_at": "2026-02-05T09:00:00Z", "url": "https://github.com/acme/demo/pull/7"})
    );
    assert_eq!(r["pull_requests"][0]["draft"], true);
    assert_eq!(r["next_cursor"], "2:2");
    let r2 = t
        .ok("github_list_prs", json!({"owner": "acme", "repo": "demo", "head": "someone:patch-1", "cursor": "2:2"}))
        .await;
    assert_eq!(fake.last().q("head"), Some("someone:patch-1"));
    assert_eq!(r2["pull_requests"][0]["state"], "merged");
}

#[tokio::test]
async fn github_get_pr_with_diff_and_files() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_get_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "include_diff": true, "include_files": true, "max_chars": 500}))
        .await;
    let reqs = tail(&fake, 3);
    assert_eq!(
        (reqs[0].path.as_str(), reqs[0].header("accept")),
        ("/repos/acme/demo/pulls/7", Some("application/vnd.github+json"))
    );
    assert_eq!(
        (reqs[1].path.as_str(), reqs[1].header("accept")),
        ("/repos/acme/demo/pulls/7", Some("application/vnd.github.diff"))
    );
    assert_eq!(reqs[1].header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!((reqs[2].path.as_str(), reqs[2].q("per_page")), ("/repos/acme/demo/pulls/7/files", Some("100")));
    assert_eq!(r["diff"].as_str().unwrap().chars().count(), 500);
    assert!(r["diff"].as_str().unwrap().starts_with("diff --git a/src/login.rs b/src/login.rs\n"));
    assert_eq!((r["diff_truncated"].as_bool(), r["truncated"].as_bool()), (Some(true), Some(true)));
    assert_eq!(
        r["files"],
        json!([{"path": "src/login.rs", "status": "modified", "additions": 30, "deletions": 5},
               {"path": "src/session.rs", "status": "renamed", "previous_path": "src/auth.rs", "additions": 10, "deletions": 0}])
    );
    assert_eq!(
        (r["mergeable"].as_bool(), r["mergeable_state"].as_str(), r["head_sha"].as_str()),
        (Some(true), Some("clean"), Some(HEAD_SHA))
    );
    assert_eq!((r["commits"].as_u64(), r["changed_files"].as_u64()), (Some(3), Some(2)));
    assert!(r.get("merge_commit_sha").is_none(), "a test-merge sha of an open PR is noise");

    let full =
        t.ok("github_get_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "include_diff": true})).await;
    assert_eq!(full["diff"].as_str().unwrap(), diff_text());
    assert_eq!((full["diff_truncated"].as_bool(), full["truncated"].as_bool()), (Some(false), Some(false)));
    let plain = t.ok("github_get_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 7})).await;
    assert!(plain.get("diff").is_none() && plain.get("files").is_none());
    assert_eq!(plain["body"], "Raises the timeout.\n\nCloses #42");
}

#[tokio::test]
async fn github_create_pr_and_the_no_commits_error() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_create_pr", json!({"owner": "acme", "repo": "demo", "title": "Add SSO", "head": "feature/sso", "base": "main", "body": "Adds SSO.", "draft": true}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/repos/acme/demo/pulls"));
    assert_eq!(
        body_of(&req),
        json!({"title": "Add SSO", "head": "feature/sso", "base": "main", "draft": true, "body": "Adds SSO."})
    );
    assert_eq!(
        (r["number"].as_u64(), r["draft"].as_bool(), r["head"].as_str()),
        (Some(10), Some(true), Some("feature/sso"))
    );
    assert_eq!(r["url"], "https://github.com/acme/demo/pull/10");
    let e = t
        .err(
            "github_create_pr",
            json!({"owner": "acme", "repo": "demo", "title": "t", "head": "empty-branch", "base": "main"}),
        )
        .await;
    assert_eq!(e["status"], 422);
    assert_eq!(e["message"], "github answered 422: Validation Failed: No commits between main and empty-branch");
}

#[tokio::test]
async fn github_merge_pr_and_clear_merge_failures() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_merge_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "merge_method": "squash", "commit_title": "Fix login (#7)", "sha": HEAD_SHA}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", "/repos/acme/demo/pulls/7/merge"));
    assert_eq!(body_of(&req), json!({"merge_method": "squash", "commit_title": "Fix login (#7)", "sha": HEAD_SHA}));
    assert_eq!(
        r,
        json!({"pull_number": 7, "merged": true, "sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6", "message": "Pull Request successfully merged"})
    );

    let conflict =
        t.err("github_merge_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "sha": MAIN_SHA})).await;
    assert_eq!((conflict["code"].as_str(), conflict["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(409)));
    let msg = conflict["message"].as_str().unwrap();
    assert!(
        msg.contains("pull request #7 was not merged: Head branch was modified. Review and try the merge again."),
        "{msg}"
    );
    assert!(msg.contains("retry with its current head_sha"), "{msg}");

    let blocked = t.err("github_merge_pr", json!({"owner": "acme", "repo": "demo", "pull_number": 8})).await;
    assert_eq!(blocked["status"], 405);
    assert!(
        blocked["message"]
            .as_str()
            .unwrap()
            .contains("Pull Request is not mergeable (GitHub will not merge it as it is: merge conflicts")
    );
    assert_eq!(body_of(&fake.last()), json!({}), "no options, empty JSON body");
}

#[tokio::test]
async fn github_create_pr_review_with_line_comments() {
    let (t, fake) = gh_unguarded().await;
    let r = t
        .ok(
            "github_create_pr_review",
            json!({"owner": "acme", "repo": "demo", "pull_number": 7, "event": "request_changes", "body": "Two things.",
                   "comments": [{"path": "src/login.rs", "line": 12, "body": "Use a constant."},
                                {"path": "src/auth.rs", "line": 4, "start_line": 2, "side": "left", "body": "Why remove this?"}]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/repos/acme/demo/pulls/7/reviews"));
    assert_eq!(
        body_of(&req),
        json!({"event": "REQUEST_CHANGES", "body": "Two things.", "comments": [
            {"path": "src/login.rs", "line": 12, "side": "RIGHT", "body": "Use a constant."},
            {"path": "src/auth.rs", "line": 4, "side": "LEFT", "body": "Why remove this?", "start_line": 2, "start_side": "LEFT"}
        ]})
    );
    assert_eq!(
        r,
        json!({"id": 80, "state": "CHANGES_REQUESTED", "author": "octocat", "commit_id": HEAD_SHA, "submitted_at": "2026-02-07T10:00:00Z",
               "url": "https://github.com/acme/demo/pull/7#pullrequestreview-80"})
    );
    let ok = t
        .ok("github_create_pr_review", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "event": "approve"}))
        .await;
    assert_eq!(body_of(&fake.last()), json!({"event": "APPROVE"}));
    assert_eq!(ok["state"], "APPROVED");
    let before = fake.requests().len();
    let e = t
        .err(
            "github_create_pr_review",
            json!({"owner": "acme", "repo": "demo", "pull_number": 7, "event": "request_changes"}),
        )
        .await;
    assert_eq!((e["code"].as_str(), e["problems"][0]["path"].as_str()), (Some("INVALID_ARGUMENTS"), Some("/body")));
    let e = t
        .err("github_create_pr_review", json!({"owner": "acme", "repo": "demo", "pull_number": 7, "event": "comment", "comments": [{"path": "a", "line": 2, "start_line": 5, "body": "x"}]}))
        .await;
    assert_eq!(e["problems"][0]["path"], "/comments/0/start_line");
    assert_eq!(fake.requests().len(), before, "argument problems never reach GitHub");
}

// ---------------------------------------------------------------- Actions

#[tokio::test]
async fn github_list_workflow_runs_for_a_repo_or_one_workflow() {
    let (t, fake) = gh().await;
    let r = t.ok("github_list_workflow_runs", json!({"owner": "acme", "repo": "demo", "branch": "main", "status": "failure", "event": "push", "limit": 1})).await;
    let req = fake.last();
    assert_eq!(req.path, "/repos/acme/demo/actions/runs");
    assert_eq!(
        (req.q("branch"), req.q("status"), req.q("event"), req.q("per_page")),
        (Some("main"), Some("failure"), Some("push"), Some("1"))
    );
    assert_eq!(
        r["runs"][0],
        json!({"id": 30000433, "workflow": "CI", "title": "Fix login timeout", "status": "completed", "conclusion": "failure",
               "branch": "main", "sha": MAIN_SHA, "event": "push", "run_number": 433, "actor": "alice",
               "created_at": "2026-02-05T09:00:00Z", "updated_at": "2026-02-05T09:06:00Z", "url": "https://github.com/acme/demo/actions/runs/30000433"})
    );
    assert_eq!((r["total_count"].as_u64(), r["next_cursor"].as_str()), (Some(3), Some("2:1")));
    let w = t
        .ok(
            "github_list_workflow_runs",
            json!({"owner": "acme", "repo": "demo", "workflow_id": "ci.yml", "status": "in_progress"}),
        )
        .await;
    assert_eq!(
        (fake.last().path.as_str(), fake.last().q("status")),
        ("/repos/acme/demo/actions/workflows/ci.yml/runs", Some("in_progress"))
    );
    assert_eq!(w["runs"].as_array().unwrap().len(), 3);
    let by_id = t.err("github_list_workflow_runs", json!({"owner": "acme", "repo": "demo", "workflow_id": 999})).await;
    assert_eq!(fake.last().path, "/repos/acme/demo/actions/workflows/999/runs");
    assert_eq!(by_id["status"], 404);
}

#[tokio::test]
async fn github_run_workflow_returns_the_run_and_falls_back_on_older_servers() {
    let (t, fake) = gh().await;
    let r = t
        .ok("github_run_workflow", json!({"owner": "acme", "repo": "demo", "workflow_id": "deploy.yml", "ref": "main", "inputs": {"environment": "staging", "dry_run": true}}))
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/repos/acme/demo/actions/workflows/deploy.yml/dispatches")
    );
    assert_eq!(
        body_of(&req),
        json!({"ref": "main", "inputs": {"environment": "staging", "dry_run": true}, "return_run_details": true})
    );
    assert_eq!(
        r,
        json!({"dispatched": true, "workflow_id": "deploy.yml", "ref": "main", "run_id": 30000500, "run_url": "https://github.com/acme/demo/actions/runs/30000500"})
    );
    let old = t
        .ok("github_run_workflow", json!({"owner": "acme", "repo": "demo", "workflow_id": 161335, "ref": "v2.0.0"}))
        .await;
    let reqs = tail(&fake, 2);
    assert_eq!(body_of(&reqs[0]), json!({"ref": "v2.0.0", "return_run_details": true}));
    assert_eq!(body_of(&reqs[1]), json!({"ref": "v2.0.0"}), "repeated without the flag the server rejected");
    assert_eq!(old["dispatched"], true);
    assert!(old.get("run_id").is_none() && old["note"].as_str().unwrap().contains("github_list_workflow_runs"));
}

// ---------------------------------------------------------------- auth, errors, limits

#[tokio::test]
async fn github_rejected_token_says_reconnect() {
    let fake = Fake::start(github).await;
    let t =
        app_with(&[("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()), ("WORKBENCH_GITHUB_TOKEN", "ghp_revoked".into())]);
    let e = t.err("github_get_repo", json!({"owner": "acme", "repo": "demo"})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(401)));
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Bad credentials"), "{msg}");
    assert!(!msg.contains("ghp_revoked"));
    let forbidden = {
        let (t, _f) = gh().await;
        t.err("github_get_repo", json!({"owner": "acme", "repo": "secret"})).await
    };
    assert_eq!(forbidden["status"], 403);
    assert!(forbidden["message"].as_str().unwrap().contains("Resource not accessible by personal access token"));
}

#[tokio::test]
async fn github_rate_limits_become_rate_limited() {
    let (t, _fake) = gh().await;
    let e = t.err("github_get_repo", json!({"owner": "acme", "repo": "busy"})).await;
    assert_eq!((e["code"].as_str(), e["retry_after_seconds"].as_u64()), (Some("RATE_LIMITED"), Some(120)));
    assert!(e["message"].as_str().unwrap().contains("secondary rate limit"));
    // The governor now holds GitHub calls of this process for those 120 s.
    let held = t.err("github_get_repo", json!({"owner": "acme", "repo": "quota"})).await;
    assert_eq!(held["code"], "RATE_LIMITED");
    assert!(held["message"].as_str().unwrap().contains("holding requests"), "{held}");
    // GitHub reports an exhausted quota as 403; that is a wait, not a bad credential.
    let (t, _fake) = gh().await;
    let q = t.err("github_get_repo", json!({"owner": "acme", "repo": "quota"})).await;
    assert_eq!((q["code"].as_str(), q["retry_after_seconds"].as_u64()), (Some("RATE_LIMITED"), Some(60)));
    assert!(!q["message"].as_str().unwrap().contains("reconnect"));
}

fn fields(pairs: &[(&str, &str)]) -> HashMap<String, Secret<String>> {
    pairs.iter().map(|(k, v)| (k.to_string(), Secret::new(v.to_string()))).collect()
}

#[tokio::test]
async fn github_identity_names_the_login_and_rejects_bad_tokens() {
    let (t, fake) = gh().await;
    let integration = &plugins::github::INTEGRATION;
    let good = workbench::auth::from_fields(integration, fields(&[("token", TOKEN)]), workbench::auth::Source::Store);
    let label = workbench::send::verify_identity(&t.app, integration, good).await.unwrap();
    assert_eq!(label.as_deref(), Some("octocat"));
    assert_eq!(fake.last().path, "/user");
    let bad =
        workbench::auth::from_fields(integration, fields(&[("token", "ghp_wrong")]), workbench::auth::Source::Store);
    let e = workbench::send::verify_identity(&t.app, integration, bad).await.unwrap_err();
    assert!(e.to_string().contains("GitHub rejected this credential: Bad credentials"), "{e}");
}

#[tokio::test]
async fn github_enterprise_base_url_comes_from_the_connection() {
    let fake = Fake::start(github).await;
    let t = app_with(&[]);
    let integration = &plugins::github::INTEGRATION;
    let conn = workbench::auth::from_fields(
        integration,
        fields(&[("token", TOKEN), ("base_url", &format!("{}/api/v3", fake.url))]),
        workbench::auth::Source::Store,
    );
    let label = workbench::send::verify_identity(&t.app, integration, conn).await.unwrap();
    assert_eq!(label.as_deref(), Some("octocat"));
    assert_eq!(fake.last().path, "/api/v3/user");
}
