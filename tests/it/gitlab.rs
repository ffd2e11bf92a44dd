//! GitLab against a fake on 127.0.0.1 that checks what GitLab checks (PRIVATE-TOKEN, URL-encoded
//! project paths, parameter values, JSON bodies) and answers like GitLab's REST API v4, including
//! its X-Next-Page pagination and its `message` / `error` error shapes.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "glpat-testtoken0000000000";
const MR_SHA: &str = "8888888887777777777666666666655555555555";
const WEB: &str = "https://gitlab.example.com";

// ---------------------------------------------------------------- GitLab-shaped payloads

/// Joins two JSON objects (big literals are split to stay under json!'s recursion limit).
fn merge(mut a: Value, b: Value) -> Value {
    a.as_object_mut().unwrap().extend(b.as_object().unwrap().clone());
    a
}

fn user(username: &str, id: u64) -> Value {
    json!({"id": id, "username": username, "name": username.to_uppercase(), "state": "active", "locked": false,
           "avatar_url": format!("https://secure.gravatar.com/avatar/{id}?s=80&d=identicon"), "web_url": format!("{WEB}/{username}")})
}

fn project(id: u64, path: &str) -> Value {
    let name = path.rsplit('/').next().unwrap();
    merge(
        json!({
                "id": id, "description": format!("The {name} project"), "name": name, "name_with_namespace": format!("Acme / {name}"),
                "path": name, "path_with_namespace": path, "created_at": "2024-02-01T10:00:00.000Z", "default_branch": "main",
                "tag_list": [], "topics": ["python"], "ssh_url_to_repo": format!("git@gitlab.example.com:{path}.git"),
                "http_url_to_repo": format!("{WEB}/{path}.git"), "web_url": format!("{WEB}/{path}"), "readme_url": format!("{WEB}/{path}/-/blob/main/README.md"),
                "forks_count": id % 3, "avatar_url": null, "star_count": id * 2, "last_activity_at": format!("2026-03-{:02}T10:00:00.000Z", 20 - id % 10),
                "namespace": {"id": 7, "name": "Acme", "path": "acme", "kind": "group", "full_path": "acme", "parent_id": null, "avatar_url": null, "web_url": format!("{WEB}/groups/acme")},
                "container_registry_image_prefix": format!("registry.gitlab.example.com/{path}"),
                "_links": {"self": format!("{WEB}/api/v4/projects/{id}"), "issues": format!("{WEB}/api/v4/projects/{id}/issues"),
                           "merge_requests": format!("{WEB}/api/v4/projects/{id}/merge_requests"), "repo_branches": format!("{WEB}/api/v4/projects/{id}/repository/branches"),
                           "labels": format!("{WEB}/api/v4/projects/{id}/labels"), "events": format!("{WEB}/api/v4/projects/{id}/events"), "members": format!("{WEB}/api/v4/projects/{id}/members")}
        }),
        json!({
            "packages_enabled": true, "empty_repo": false, "archived": id == 44, "visibility": if id.is_multiple_of(2) { "private" } else { "internal" },
            "resolve_outdated_diff_discussions": false, "container_registry_enabled": true, "issues_enabled": true, "merge_requests_enabled": true,
            "wiki_enabled": true, "jobs_enabled": true, "snippets_enabled": true, "service_desk_enabled": false, "can_create_merge_request_in": true,
            "issues_access_level": "enabled", "repository_access_level": "enabled", "merge_requests_access_level": "enabled",
            "shared_runners_enabled": true, "lfs_enabled": true, "creator_id": 1, "import_status": "none", "open_issues_count": id % 7,
            "ci_default_git_depth": 20, "public_jobs": true, "build_timeout": 3600, "auto_cancel_pending_pipelines": "enabled",
            "only_allow_merge_if_pipeline_succeeds": false, "request_access_enabled": true, "merge_method": "merge", "squash_option": "default_off",
            "permissions": {"project_access": {"access_level": 40, "notification_level": 3}, "group_access": null}
        }),
    )
}

fn mr(iid: u64) -> Value {
    merge(
        json!({
                "id": 93_000 + iid, "iid": iid, "project_id": 42, "title": "Fix login timeout", "description": "Raises the timeout.\n\nCloses #7",
                "state": "opened", "created_at": "2026-02-04T09:00:00.000Z", "updated_at": "2026-02-05T09:00:00.000Z",
                "merged_by": null, "merge_user": null, "merged_at": null, "closed_by": null, "closed_at": null,
                "target_branch": "main", "source_branch": "fix/login", "user_notes_count": 1, "upvotes": 0, "downvotes": 0,
                "author": user("alice", 11), "assignees": [user("bob", 12)], "assignee": user("bob", 12), "reviewers": [user("carol", 13)]
        }),
        json!({
            "source_project_id": 42, "target_project_id": 42, "labels": ["bug", "backend"], "draft": iid == 15, "work_in_progress": iid == 15,
            "milestone": null, "merge_when_pipeline_succeeds": false, "merge_status": "can_be_merged", "detailed_merge_status": "mergeable",
            "sha": MR_SHA, "merge_commit_sha": null, "squash_commit_sha": null, "discussion_locked": null, "should_remove_source_branch": null,
            "force_remove_source_branch": true, "prepared_at": "2026-02-04T09:00:05.000Z", "reference": format!("!{iid}"),
            "references": {"short": format!("!{iid}"), "relative": format!("!{iid}"), "full": format!("acme/api!{iid}")},
            "web_url": format!("{WEB}/acme/api/-/merge_requests/{iid}"),
            "time_stats": {"time_estimate": 0, "total_time_spent": 0, "human_time_estimate": null, "human_total_time_spent": null},
            "squash": false, "squash_on_merge": false, "task_completion_status": {"count": 0, "completed_count": 0},
            "has_conflicts": false, "blocking_discussions_resolved": true, "approvals_before_merge": null
        }),
    )
}

fn mr_detail(iid: u64) -> Value {
    let mut m = mr(iid);
    for (k, v) in [
        ("subscribed", json!(true)),
        ("changes_count", json!("3")),
        ("latest_build_started_at", json!("2026-02-05T09:01:00.000Z")),
        ("latest_build_finished_at", json!("2026-02-05T09:06:00.000Z")),
        ("first_deployed_to_production_at", Value::Null),
        (
            "pipeline",
            json!({"id": 7001, "iid": 301, "project_id": 42, "sha": MR_SHA, "ref": "fix/login", "status": "success", "source": "push", "web_url": format!("{WEB}/acme/api/-/pipelines/7001")}),
        ),
        (
            "head_pipeline",
            json!({"id": 7001, "iid": 301, "project_id": 42, "sha": MR_SHA, "ref": "fix/login", "status": "success", "source": "push",
                   "created_at": "2026-02-05T09:00:00.000Z", "updated_at": "2026-02-05T09:06:00.000Z", "web_url": format!("{WEB}/acme/api/-/pipelines/7001"),
                   "before_sha": "0000000000000000000000000000000000000000", "tag": false, "yaml_errors": null, "user": user("alice", 11),
                   "started_at": "2026-02-05T09:00:10.000Z", "finished_at": "2026-02-05T09:06:00.000Z", "duration": 350, "coverage": "87.5",
                   "detailed_status": {"icon": "status_success", "text": "Passed", "label": "passed", "group": "success"}}),
        ),
        (
            "diff_refs",
            json!({"base_sha": "1111111111111111111111111111111111111111", "head_sha": MR_SHA, "start_sha": "1111111111111111111111111111111111111111"}),
        ),
        ("merge_error", Value::Null),
        ("first_contribution", json!(false)),
        ("user", json!({"can_merge": true})),
    ] {
        m[k] = v;
    }
    m
}

fn issue(iid: u64) -> Value {
    merge(
        json!({
                "id": 76_000 + iid, "iid": iid, "project_id": 42, "title": format!("Crash when saving draft {iid}"),
                "description": "Steps:\n1. Open editor\n2. Save", "state": "opened", "created_at": "2026-01-10T09:00:00.000Z",
                "updated_at": "2026-01-12T09:00:00.000Z", "closed_at": null, "closed_by": null, "labels": ["bug"],
                "milestone": {"id": 12, "iid": 3, "project_id": 42, "title": "v1.0", "description": "", "state": "active", "created_at": "2025-12-01T09:00:00.000Z",
                              "updated_at": "2025-12-01T09:00:00.000Z", "due_date": "2026-03-31", "start_date": "2026-01-01", "expired": false, "web_url": format!("{WEB}/acme/api/-/milestones/3")},
                "assignees": [user("bob", 12)], "author": user("alice", 11), "type": "ISSUE", "assignee": user("bob", 12)
        }),
        json!({
            "user_notes_count": 3, "merge_requests_count": 0, "upvotes": 2, "downvotes": 0, "due_date": "2026-03-01", "confidential": false,
            "discussion_locked": null, "issue_type": "issue", "web_url": format!("{WEB}/acme/api/-/issues/{iid}"),
            "time_stats": {"time_estimate": 0, "total_time_spent": 0, "human_time_estimate": null, "human_total_time_spent": null},
            "task_completion_status": {"count": 0, "completed_count": 0}, "has_tasks": false,
            "_links": {"self": format!("{WEB}/api/v4/projects/42/issues/{iid}"), "notes": format!("{WEB}/api/v4/projects/42/issues/{iid}/notes"),
                       "award_emoji": format!("{WEB}/api/v4/projects/42/issues/{iid}/award_emoji"), "project": format!("{WEB}/api/v4/projects/42")},
            "references": {"short": format!("#{iid}"), "relative": format!("#{iid}"), "full": format!("acme/api#{iid}")},
            "severity": "UNKNOWN", "moved_to_id": null, "service_desk_reply_to": null
        }),
    )
}

fn pipeline(id: u64, status: &str) -> Value {
    json!({"id": id, "iid": id - 6700, "project_id": 42, "sha": MR_SHA, "ref": "main", "status": status, "source": "push",
           "created_at": "2026-02-05T09:00:00.000Z", "updated_at": "2026-02-05T09:06:00.000Z", "web_url": format!("{WEB}/acme/api/-/pipelines/{id}"), "name": null})
}

fn diffs() -> Value {
    json!([
        {"old_path": "src/login.py", "new_path": "src/login.py", "a_mode": "100644", "b_mode": "100644",
         "diff": "@@ -1,3 +1,3 @@\n-TIMEOUT = 30\n+TIMEOUT = 120\n", "new_file": false, "renamed_file": false, "deleted_file": false, "generated_file": false},
        {"old_path": "docs/old.md", "new_path": "docs/new.md", "a_mode": "100644", "b_mode": "100644", "diff": "",
         "new_file": false, "renamed_file": true, "deleted_file": false, "generated_file": false},
        {"old_path": "src/new.py", "new_path": "src/new.py", "a_mode": "0", "b_mode": "100644", "diff": "@@ -0,0 +1 @@\n+print('hi')\n",
         "new_file": true, "renamed_file": false, "deleted_file": false, "generated_file": false}
    ])
}

fn long_doc() -> String {
    (1..=30).map(|i| format!("Line {i:02} of the guide.\n")).collect()
}

const APP_PY: &str =
    "import os\n\nTIMEOUT = int(os.environ.get(\"TIMEOUT\", \"30\"))\n\ndef main():\n    print(\"hello\")\n";

// ---------------------------------------------------------------- the fake

fn gl_error(status: u16, message: Value) -> Reply {
    Reply::json(status, json!({"message": message}))
}

/// One page of `all` with GitLab's pagination headers (X-Next-Page is empty on the last page).
fn gl_paged(r: &Recorded, all: &[Value]) -> Reply {
    let per_page: usize = r.q("per_page").and_then(|v| v.parse().ok()).unwrap_or(20);
    let page: usize = r.q("page").and_then(|v| v.parse().ok()).unwrap_or(1);
    let items: Vec<Value> = all.iter().skip((page - 1) * per_page).take(per_page).cloned().collect();
    let pages = all.len().div_ceil(per_page).max(1);
    let next = if page < pages { (page + 1).to_string() } else { String::new() };
    let prev = if page > 1 { (page - 1).to_string() } else { String::new() };
    Reply::json(200, Value::Array(items))
        .with_header("x-page", &page.to_string())
        .with_header("x-per-page", &per_page.to_string())
        .with_header("x-next-page", &next)
        .with_header("x-prev-page", &prev)
        .with_header("x-total", &all.len().to_string())
        .with_header("x-total-pages", &pages.to_string())
}

fn check_enum(r: &Recorded, key: &str, allowed: &[&str]) -> Option<Reply> {
    match r.q(key) {
        Some(v) if !allowed.contains(&v) => {
            Some(Reply::json(400, json!({"error": format!("{key} does not have a valid value")})))
        }
        _ => None,
    }
}

fn gitlab(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return gl_error(400, json!("400 Bad request"));
    }
    if r.header("private-token") != Some(TOKEN) {
        return gl_error(401, json!("401 Unauthorized"));
    }
    let Some(path) = r.path.strip_prefix("/api/v4") else {
        return Reply {
            status: 404,
            headers: vec![("content-type".into(), "text/html".into())],
            body: "<html>Not Found</html>".into(),
        };
    };
    let body = if matches!(r.method.as_str(), "POST" | "PUT") {
        if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
            return gl_error(415, json!("415 Unsupported Media Type"));
        }
        match serde_json::from_slice::<Value>(&r.body) {
            Ok(b) => b,
            Err(_) => {
                return Reply::json(
                    400,
                    json!({"error": "The provided content-type 'application/json' is not supported."}),
                );
            }
        }
    } else {
        Value::Null
    };
    let segs: Vec<&str> = path.split('/').skip(1).collect();
    // Projects are addressed by numeric id or URL-encoded full path.
    let known = |id: &str| matches!(id, "42" | "acme%2Fapi");
    for (key, allowed) in [
        ("state", &["opened", "closed", "locked", "merged", "all"][..]),
        ("scope", &["created_by_me", "assigned_to_me", "all"][..]),
        (
            "order_by",
            &["id", "name", "path", "created_at", "updated_at", "last_activity_at", "star_count", "similarity"][..],
        ),
    ] {
        if let Some(reply) = check_enum(r, key, allowed) {
            return reply;
        }
    }
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["user"]) => Reply::json(200, {
            let mut u = user("jdoe", 1);
            u["email"] = json!("jdoe@example.com");
            u["is_admin"] = json!(false);
            u
        }),
        ("GET", ["projects"]) => {
            if r.q("search") == Some("throttled") {
                return Reply {
                    status: 429,
                    headers: vec![("retry-after".into(), "120".into())],
                    body: "Retry later".into(),
                };
            }
            let all: Vec<Value> =
                [(42, "acme/api"), (43, "acme/web"), (44, "acme/legacy"), (45, "acme/infra/terraform")]
                    .iter()
                    .map(|(id, p)| project(*id, p))
                    .collect();
            let all: Vec<Value> = if r.q("archived") == Some("false") {
                all.into_iter().filter(|p| p["archived"] == false).collect()
            } else {
                all
            };
            gl_paged(r, &all)
        }
        ("GET", ["projects", id, "repository", "files", file, "raw"]) if known(id) => match *file {
            "src%2Fapp.py" => Reply {
                status: 200,
                headers: vec![
                    ("content-type".into(), "text/plain; charset=utf-8".into()),
                    ("x-gitlab-blob-id".into(), "79f7bbd25901e8334750839545a9bd021f0e4c83".into()),
                    ("x-gitlab-last-commit-id".into(), "570e7b2abdd848b95f2f578043fc23bd6f6fd24d".into()),
                    ("x-gitlab-ref".into(), r.q("ref").unwrap_or("main").into()),
                    ("x-gitlab-file-path".into(), "src/app.py".into()),
                    ("x-gitlab-size".into(), APP_PY.len().to_string()),
                ],
                body: APP_PY.into(),
            },
            "docs%2Flong.md" => {
                Reply { status: 200, headers: vec![("content-type".into(), "text/plain".into())], body: long_doc() }
            }
            "logo.png" => Reply {
                status: 200,
                headers: vec![("content-type".into(), "image/png".into())],
                body: "\u{0}PNG\u{0}\u{0}".into(),
            },
            _ => gl_error(404, json!("404 File Not Found")),
        },
        ("GET", ["merge_requests"]) => gl_paged(r, &[mr(12), mr(15)]),
        ("GET", ["projects", id, "merge_requests"]) if known(id) => gl_paged(r, &[mr(15), mr(12), mr(9)]),
        ("GET", ["projects", id, "merge_requests", "12"]) if known(id) => Reply::json(200, mr_detail(12)),
        ("GET", ["projects", id, "merge_requests", "12", "diffs"]) if known(id) => {
            gl_paged(r, diffs().as_array().unwrap())
        }
        ("POST", ["projects", id, "merge_requests"]) if known(id) => {
            for f in ["source_branch", "target_branch", "title"] {
                if body[f].as_str().is_none_or(str::is_empty) {
                    return Reply::json(400, json!({"error": format!("{f} is missing")}));
                }
            }
            if body["source_branch"] == "dup" {
                return gl_error(409, json!(["Another open merge request already exists for this source branch: !12"]));
            }
            let mut m = mr(16);
            for k in ["title", "description", "source_branch", "target_branch"] {
                if let Some(v) = body.get(k) {
                    m[k] = v.clone();
                }
            }
            m["draft"] = json!(body["title"].as_str().unwrap().starts_with("Draft:"));
            m["labels"] = json!(body["labels"].as_str().map(|l| l.split(',').collect::<Vec<_>>()).unwrap_or_default());
            m["reviewers"] = json!(
                body["reviewer_ids"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|id| user("carol", id.as_u64().unwrap()))
                    .collect::<Vec<_>>()
            );
            m["assignees"] = json!([]);
            m["references"]["full"] = json!("acme/api!16");
            Reply::json(201, m)
        }
        ("PUT", ["projects", id, "merge_requests", iid, "merge"]) if known(id) => match *iid {
            "12" => {
                if body.get("sha").is_some_and(|s| s != MR_SHA) {
                    return gl_error(409, json!(format!("SHA does not match HEAD of source branch: {MR_SHA}")));
                }
                let mut m = mr_detail(12);
                if body["auto_merge"] == true {
                    m["merge_when_pipeline_succeeds"] = json!(true);
                } else {
                    m["state"] = json!("merged");
                    m["merged_at"] = json!("2026-02-06T10:00:00.000Z");
                    m["merge_user"] = user("jdoe", 1);
                    m["merged_by"] = user("jdoe", 1);
                    m["merge_commit_sha"] = json!("9999999999999999999999999999999999999999");
                    if body["squash"] == true {
                        m["squash_commit_sha"] = json!("5555555555555555555555555555555555555555");
                    }
                }
                Reply::json(200, m)
            }
            "13" => gl_error(406, json!("Branch cannot be merged")),
            "14" => gl_error(405, json!("405 Method Not Allowed")),
            _ => gl_error(404, json!("404 Not found")),
        },
        ("POST", ["projects", id, kind @ ("merge_requests" | "issues"), iid, "notes"]) if known(id) => {
            if body["body"].as_str().is_none_or(str::is_empty) {
                return Reply::json(400, json!({"error": "body is missing"}));
            }
            let noteable = if *kind == "issues" { "Issue" } else { "MergeRequest" };
            Reply::json(
                201,
                json!({"id": 302, "type": null, "body": body["body"], "attachment": null, "author": user("jdoe", 1),
                       "created_at": "2026-02-07T10:00:00.000Z", "updated_at": "2026-02-07T10:00:00.000Z", "system": false,
                       "noteable_id": 93012, "noteable_type": noteable, "project_id": 42, "resolvable": false, "confidential": false,
                       "internal": false, "noteable_iid": iid.parse::<u64>().unwrap(), "commands_changes": {}}),
            )
        }
        ("GET", ["issues"]) => gl_paged(r, &[issue(7)]),
        ("GET", ["projects", id, "issues"]) if known(id) => gl_paged(r, &[issue(9), issue(8), issue(7)]),
        ("POST", ["projects", id, "issues"]) if known(id) => {
            let Some(title) = body["title"].as_str() else {
                return Reply::json(400, json!({"error": "title is missing"}));
            };
            if title.trim().is_empty() {
                return gl_error(400, json!({"title": ["can't be blank"]}));
            }
            let mut i = issue(10);
            i["title"] = json!(title);
            i["description"] = body.get("description").cloned().unwrap_or(Value::Null);
            i["labels"] = json!(body["labels"].as_str().map(|l| l.split(',').collect::<Vec<_>>()).unwrap_or_default());
            i["due_date"] = body.get("due_date").cloned().unwrap_or(Value::Null);
            i["milestone"] = Value::Null;
            i["user_notes_count"] = json!(0);
            i["confidential"] = body.get("confidential").cloned().unwrap_or(json!(false));
            Reply::json(201, i)
        }
        ("PUT", ["projects", id, "issues", "7"]) if known(id) => {
            let mut i = issue(7);
            if let Some(t) = body.get("title") {
                i["title"] = t.clone();
            }
            match body["state_event"].as_str() {
                Some("close") => {
                    i["state"] = json!("closed");
                    i["closed_at"] = json!("2026-02-07T10:00:00.000Z");
                }
                Some("reopen") | None => {}
                Some(_) => return Reply::json(400, json!({"error": "state_event does not have a valid value"})),
            }
            let mut labels: Vec<String> = vec!["bug".into()];
            if let Some(add) = body["add_labels"].as_str() {
                labels.extend(add.split(',').map(str::to_string));
            }
            if let Some(remove) = body["remove_labels"].as_str() {
                labels.retain(|l| !remove.split(',').any(|r| r == l));
            }
            i["labels"] = json!(labels);
            Reply::json(200, i)
        }
        ("GET", ["projects", id, "pipelines"]) if known(id) => {
            let status = r.q("status");
            if status.is_some_and(|s| {
                !["created", "pending", "running", "success", "failed", "canceled", "skipped", "manual", "scheduled"]
                    .contains(&s)
            }) {
                return Reply::json(400, json!({"error": "status does not have a valid value"}));
            }
            let all: Vec<Value> = [(7003, "failed"), (7002, "success"), (7001, "success")]
                .iter()
                .map(|(id, s)| pipeline(*id, s))
                .filter(|p| status.is_none_or(|s| p["status"] == s))
                .collect();
            gl_paged(r, &all)
        }
        ("POST", ["projects", id, "pipeline"]) if known(id) => {
            let Some(rf) = body["ref"].as_str() else {
                return Reply::json(400, json!({"error": "ref is missing"}));
            };
            if rf != "main" {
                return gl_error(400, json!({"base": ["Reference not found"]}));
            }
            for v in body["variables"].as_array().into_iter().flatten() {
                if v["key"].as_str().is_none()
                    || !["env_var", "file"].contains(&v["variable_type"].as_str().unwrap_or(""))
                {
                    return Reply::json(400, json!({"error": "variables is invalid"}));
                }
            }
            let mut p = pipeline(7004, "created");
            p["source"] = json!("api");
            p["before_sha"] = json!("0000000000000000000000000000000000000000");
            p["tag"] = json!(false);
            p["yaml_errors"] = Value::Null;
            p["user"] = user("jdoe", 1);
            p["detailed_status"] =
                json!({"icon": "status_created", "text": "Created", "label": "created", "group": "created"});
            Reply::json(201, p)
        }
        ("GET", ["projects", _, ..]) | ("POST", ["projects", _, ..]) | ("PUT", ["projects", _, ..]) => {
            gl_error(404, json!("404 Project Not Found"))
        }
        _ => Reply::json(404, json!({"error": "404 Not Found"})),
    }
}

async fn gl() -> (TestApp, Fake) {
    let fake = Fake::start(gitlab).await;
    let t = app_with(&[
        ("WORKBENCH_GITLAB_BASE_URL", format!("{}/api/v4", fake.url)),
        ("WORKBENCH_GITLAB_TOKEN", TOKEN.into()),
    ]);
    (t, fake)
}

fn body_of(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

// ---------------------------------------------------------------- projects and files

#[tokio::test]
async fn gitlab_list_projects_pages_with_x_next_page() {
    let (t, fake) = gl().await;
    let r = t.ok("gitlab_list_projects", json!({"limit": 2, "search": "acme"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v4/projects"));
    assert_eq!(req.header("private-token"), Some(TOKEN));
    assert!(req.header("authorization").is_none());
    assert_eq!(
        (req.q("membership"), req.q("archived"), req.q("order_by")),
        (Some("true"), Some("false"), Some("last_activity_at"))
    );
    assert_eq!((req.q("search"), req.q("per_page"), req.q("page")), (Some("acme"), Some("2"), Some("1")));
    assert_eq!(
        r["projects"][0],
        json!({"id": 42, "path": "acme/api", "name": "api", "description": "The api project", "default_branch": "main",
               "visibility": "private", "stars": 84, "forks": 0, "open_issues": 0, "last_activity_at": "2026-03-18T10:00:00.000Z",
               "url": "https://gitlab.example.com/acme/api"})
    );
    assert_eq!(r["next_cursor"], "2:2");
    let r2 = t.ok("gitlab_list_projects", json!({"cursor": "2:2"})).await;
    assert_eq!((fake.last().q("page"), fake.last().q("per_page")), (Some("2"), Some("2")));
    assert_eq!(r2["projects"][0]["path"], "acme/infra/terraform");
    assert!(r2.get("next_cursor").is_none(), "the archived project is filtered out, so page 2 is the last");

    let all = t
        .ok("gitlab_list_projects", json!({"include_archived": true, "owned": true, "order_by": "name", "sort": "asc"}))
        .await;
    let req = fake.last();
    assert_eq!(
        (req.q("archived"), req.q("owned"), req.q("order_by"), req.q("sort")),
        (None, Some("true"), Some("name"), Some("asc"))
    );
    assert_eq!(all["projects"][2]["archived"], true);

    let raw = t.ok("gitlab_list_projects", json!({"include_raw": true})).await;
    let shaped = t.ok("gitlab_list_projects", json!({})).await;
    let (raw_len, shaped_len) = (raw["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("gitlab_list_projects: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 5 < raw_len);
}

#[tokio::test]
async fn gitlab_get_file_encodes_project_and_file_paths() {
    let (t, fake) = gl().await;
    let f =
        t.ok("gitlab_get_file", json!({"project": "acme/api", "file_path": "src/app.py", "ref": "release-1"})).await;
    let req = fake.last();
    assert_eq!(req.path, "/api/v4/projects/acme%2Fapi/repository/files/src%2Fapp.py/raw");
    assert_eq!(req.q("ref"), Some("release-1"));
    assert_eq!(
        f,
        json!({"project": "acme/api", "file_path": "src/app.py", "ref": "release-1", "size": APP_PY.len(),
               "blob_id": "79f7bbd25901e8334750839545a9bd021f0e4c83", "last_commit_id": "570e7b2abdd848b95f2f578043fc23bd6f6fd24d",
               "content": APP_PY, "truncated": false})
    );
    let by_id = t.ok("gitlab_get_file", json!({"project": 42, "file_path": "/src/app.py"})).await;
    let req = fake.last();
    assert_eq!((req.path.as_str(), req.q("ref")), ("/api/v4/projects/42/repository/files/src%2Fapp.py/raw", None));
    assert_eq!(by_id["ref"], "main", "no ref: GitLab serves the default branch and says which");
    let by_url = t
        .ok(
            "gitlab_get_file",
            json!({"project": "https://gitlab.example.com/acme/api/-/tree/main", "file_path": "src/app.py"}),
        )
        .await;
    assert_eq!(fake.last().path, "/api/v4/projects/acme%2Fapi/repository/files/src%2Fapp.py/raw");
    assert_eq!(by_url["content"], APP_PY);
    let long =
        t.ok("gitlab_get_file", json!({"project": "acme/api", "file_path": "docs/long.md", "max_chars": 100})).await;
    assert_eq!(fake.last().path, "/api/v4/projects/acme%2Fapi/repository/files/docs%2Flong.md/raw");
    assert_eq!(long["content"], long_doc().chars().take(100).collect::<String>());
    assert_eq!((long["truncated"].as_bool(), long["size"].as_u64()), (Some(true), Some(long_doc().len() as u64)));

    let bin = t.ok("gitlab_get_file", json!({"project": "acme/api", "file_path": "logo.png"})).await;
    assert_eq!((bin["binary"].as_bool(), bin.get("content")), (Some(true), None));
    let missing = t.err("gitlab_get_file", json!({"project": "acme/api", "file_path": "nope.txt"})).await;
    assert_eq!(
        (missing["status"].as_u64(), missing["message"].as_str()),
        (Some(404), Some("gitlab answered 404: 404 File Not Found"))
    );
    let noproject = t.err("gitlab_get_file", json!({"project": "acme/ghost", "file_path": "a.txt"})).await;
    assert_eq!(noproject["message"], "gitlab answered 404: 404 Project Not Found");
    let sneaky = t.err("gitlab_get_file", json!({"project": "acme/api", "file_path": "src/../../etc/passwd"})).await;
    assert_eq!(
        (sneaky["code"].as_str(), sneaky["problems"][0]["path"].as_str()),
        (Some("INVALID_ARGUMENTS"), Some("/file_path"))
    );
    let badtype = t.err("gitlab_get_file", json!({"project": true, "file_path": "a"})).await;
    assert_eq!(badtype["code"], "INVALID_ARGUMENTS");
}

// ---------------------------------------------------------------- merge requests

#[tokio::test]
async fn gitlab_list_mrs_in_a_project_and_across_gitlab() {
    let (t, fake) = gl().await;
    let r = t
        .ok(
            "gitlab_list_mrs",
            json!({"project": "acme/api", "state": "opened", "reviewer_username": "carol", "labels": ["bug", "backend"], "search": "login", "order_by": "updated_at", "limit": 2}),
        )
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/api/v4/projects/acme%2Fapi/merge_requests");
    assert_eq!(
        (req.q("state"), req.q("reviewer_username"), req.q("labels")),
        (Some("opened"), Some("carol"), Some("bug,backend"))
    );
    assert_eq!((req.q("search"), req.q("order_by"), req.q("per_page")), (Some("login"), Some("updated_at"), Some("2")));
    assert_eq!(
        r["merge_requests"][1],
        json!({"iid": 12, "reference": "acme/api!12", "title": "Fix login timeout", "state": "opened", "author": "alice",
               "assignees": ["bob"], "reviewers": ["carol"], "source_branch": "fix/login", "target_branch": "main",
               "labels": ["bug", "backend"], "merge_status": "mergeable", "created_at": "2026-02-04T09:00:00.000Z",
               "updated_at": "2026-02-05T09:00:00.000Z", "url": "https://gitlab.example.com/acme/api/-/merge_requests/12"})
    );
    assert_eq!(r["merge_requests"][0]["draft"], true);
    assert_eq!(r["next_cursor"], "2:2");
    let r2 = t.ok("gitlab_list_mrs", json!({"project": 42, "cursor": "2:2"})).await;
    assert_eq!((fake.last().path.as_str(), fake.last().q("page")), ("/api/v4/projects/42/merge_requests", Some("2")));
    assert_eq!(r2["merge_requests"][0]["iid"], 9);
    assert!(r2.get("next_cursor").is_none());

    let mine = t.ok("gitlab_list_mrs", json!({"scope": "assigned_to_me", "state": "all"})).await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("scope"), req.q("state")),
        ("/api/v4/merge_requests", Some("assigned_to_me"), Some("all"))
    );
    assert_eq!(mine["merge_requests"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn gitlab_get_mr_with_diffs() {
    let (t, fake) = gl().await;
    let r = t.ok("gitlab_get_mr", json!({"project": "acme/api", "mr_iid": 12, "include_diffs": true})).await;
    let reqs = fake.requests();
    let reqs = &reqs[reqs.len() - 2..];
    assert_eq!(reqs[0].path, "/api/v4/projects/acme%2Fapi/merge_requests/12");
    assert_eq!(
        (reqs[1].path.as_str(), reqs[1].q("per_page")),
        ("/api/v4/projects/acme%2Fapi/merge_requests/12/diffs", Some("100"))
    );
    assert_eq!(
        r["diff"],
        "diff --git a/src/login.py b/src/login.py\n--- a/src/login.py\n+++ b/src/login.py\n@@ -1,3 +1,3 @@\n-TIMEOUT = 30\n+TIMEOUT = 120\n\
         diff --git a/docs/old.md b/docs/new.md\nrename from docs/old.md\nrename to docs/new.md\n\
         diff --git a/src/new.py b/src/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1 @@\n+print('hi')\n"
    );
    assert_eq!(
        r["files"],
        json!([{"path": "src/login.py", "status": "modified"}, {"path": "docs/new.md", "status": "renamed", "old_path": "docs/old.md"},
               {"path": "src/new.py", "status": "added"}])
    );
    assert_eq!((r["diff_truncated"].as_bool(), r["truncated"].as_bool()), (Some(false), Some(false)));
    assert_eq!(
        r["pipeline"],
        json!({"id": 7001, "status": "success", "url": "https://gitlab.example.com/acme/api/-/pipelines/7001"})
    );
    assert_eq!(
        (r["sha"].as_str(), r["has_conflicts"].as_bool(), r["changes_count"].as_str()),
        (Some(MR_SHA), Some(false), Some("3"))
    );
    assert_eq!(r["description"], "Raises the timeout.\n\nCloses #7");
    assert_eq!(r["remove_source_branch"], true);

    let cut = t
        .ok("gitlab_get_mr", json!({"project": "acme/api", "mr_iid": 12, "include_diffs": true, "max_chars": 100}))
        .await;
    assert_eq!(cut["diff"].as_str().unwrap().chars().count(), 100);
    assert_eq!((cut["diff_truncated"].as_bool(), cut["truncated"].as_bool()), (Some(true), Some(true)));
    let plain = t.ok("gitlab_get_mr", json!({"project": "acme/api", "mr_iid": 12, "include_raw": true})).await;
    assert!(plain.get("diff").is_none());
    assert_eq!(plain["raw"]["diff_refs"]["head_sha"], MR_SHA);
    let missing = t.err("gitlab_get_mr", json!({"project": "acme/api", "mr_iid": 999})).await;
    assert_eq!(missing["status"], 404);
}

#[tokio::test]
async fn gitlab_create_mr_marks_drafts_and_reports_duplicates() {
    let (t, fake) = gl().await;
    let r = t
        .ok(
            "gitlab_create_mr",
            json!({"project": "acme/api", "source_branch": "feature/sso", "target_branch": "main", "title": "Add SSO", "description": "Adds SSO.",
                   "reviewer_ids": [13], "labels": ["feature", "auth"], "remove_source_branch": true, "draft": true}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/v4/projects/acme%2Fapi/merge_requests"));
    assert_eq!(
        body_of(&req),
        json!({"source_branch": "feature/sso", "target_branch": "main", "title": "Draft: Add SSO", "description": "Adds SSO.",
               "reviewer_ids": [13], "labels": "feature,auth", "remove_source_branch": true})
    );
    assert_eq!(
        (r["iid"].as_u64(), r["draft"].as_bool(), r["title"].as_str()),
        (Some(16), Some(true), Some("Draft: Add SSO"))
    );
    assert_eq!((r["reviewers"].clone(), r["labels"].clone()), (json!(["carol"]), json!(["feature", "auth"])));
    assert_eq!(r["reference"], "acme/api!16");
    t.ok("gitlab_create_mr", json!({"project": "acme/api", "source_branch": "a", "target_branch": "main", "title": "Draft: already", "draft": true})).await;
    assert_eq!(body_of(&fake.last())["title"], "Draft: already");

    let dup = t
        .err(
            "gitlab_create_mr",
            json!({"project": "acme/api", "source_branch": "dup", "target_branch": "main", "title": "Again"}),
        )
        .await;
    assert_eq!(dup["status"], 409);
    assert_eq!(
        dup["message"],
        "gitlab answered 409: Another open merge request already exists for this source branch: !12"
    );
}

#[tokio::test]
async fn gitlab_merge_mr_and_why_it_could_not() {
    let (t, fake) = gl().await;
    let r = t
        .ok("gitlab_merge_mr", json!({"project": "acme/api", "mr_iid": 12, "squash": true, "should_remove_source_branch": true, "sha": MR_SHA}))
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("PUT", "/api/v4/projects/acme%2Fapi/merge_requests/12/merge")
    );
    assert_eq!(body_of(&req), json!({"squash": true, "should_remove_source_branch": true, "sha": MR_SHA}));
    assert_eq!((r["state"].as_str(), r["merged_at"].as_str()), (Some("merged"), Some("2026-02-06T10:00:00.000Z")));
    assert_eq!(
        (r["merge_commit_sha"].as_str(), r["squash_commit_sha"].as_str()),
        (Some("9999999999999999999999999999999999999999"), Some("5555555555555555555555555555555555555555"))
    );

    let auto = t.ok("gitlab_merge_mr", json!({"project": "acme/api", "mr_iid": 12, "auto_merge": true})).await;
    assert_eq!(body_of(&fake.last()), json!({"auto_merge": true}));
    assert_eq!((auto["state"].as_str(), auto["auto_merge"].as_bool()), (Some("opened"), Some(true)));

    let conflict = t.err("gitlab_merge_mr", json!({"project": "acme/api", "mr_iid": 13})).await;
    assert_eq!(conflict["status"], 406);
    let msg = conflict["message"].as_str().unwrap();
    assert!(
        msg.contains("merge request !13 was not merged: Branch cannot be merged") && msg.contains("merge conflicts"),
        "{msg}"
    );
    let blocked = t.err("gitlab_merge_mr", json!({"project": "acme/api", "mr_iid": 14})).await;
    assert!(
        blocked["message"].as_str().unwrap().contains("405 Method Not Allowed (GitLab will not merge it now"),
        "{blocked}"
    );
    let moved = t.err("gitlab_merge_mr", json!({"project": "acme/api", "mr_iid": 12, "sha": "0123"})).await;
    assert_eq!(moved["status"], 409);
    assert!(moved["message"].as_str().unwrap().contains("SHA does not match HEAD of source branch"), "{moved}");
}

#[tokio::test]
async fn gitlab_comments_on_mrs_and_issues() {
    let (t, fake) = gl().await;
    let c = t
        .ok("gitlab_create_comment", json!({"project": "acme/api", "target_type": "mr", "iid": 12, "body": "LGTM"}))
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/api/v4/projects/acme%2Fapi/merge_requests/12/notes")
    );
    assert_eq!(body_of(&req), json!({"body": "LGTM"}));
    assert_eq!(
        c,
        json!({"id": 302, "on": "!12", "noteable_type": "MergeRequest", "author": "jdoe", "created_at": "2026-02-07T10:00:00.000Z"})
    );
    let c =
        t.ok("gitlab_create_comment", json!({"project": 42, "target_type": "issue", "iid": 7, "body": "On it."})).await;
    assert_eq!(fake.last().path, "/api/v4/projects/42/issues/7/notes");
    assert_eq!((c["on"].as_str(), c["noteable_type"].as_str()), (Some("#7"), Some("Issue")));
}

// ---------------------------------------------------------------- issues

#[tokio::test]
async fn gitlab_list_issues_in_a_project_and_mine() {
    let (t, fake) = gl().await;
    let r = t
        .ok("gitlab_list_issues", json!({"project": "acme/api", "state": "opened", "labels": ["bug"], "assignee_username": "bob", "search": "crash", "limit": 2}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/api/v4/projects/acme%2Fapi/issues");
    assert_eq!(
        (req.q("state"), req.q("labels"), req.q("assignee_username"), req.q("search")),
        (Some("opened"), Some("bug"), Some("bob"), Some("crash"))
    );
    assert_eq!(
        r["issues"][0],
        json!({"iid": 9, "reference": "acme/api#9", "title": "Crash when saving draft 9", "state": "opened", "author": "alice",
               "assignees": ["bob"], "labels": ["bug"], "milestone": "v1.0", "due_date": "2026-03-01", "comments": 3,
               "created_at": "2026-01-10T09:00:00.000Z", "updated_at": "2026-01-12T09:00:00.000Z", "url": "https://gitlab.example.com/acme/api/-/issues/9"})
    );
    assert_eq!(r["next_cursor"], "2:2");
    let r2 = t.ok("gitlab_list_issues", json!({"project": "acme/api", "cursor": r["next_cursor"]})).await;
    assert_eq!(r2["issues"][0]["iid"], 7);
    assert!(r2.get("next_cursor").is_none());

    let mine = t.ok("gitlab_list_issues", json!({"scope": "assigned_to_me", "include_raw": true})).await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("scope"), req.q("state")),
        ("/api/v4/issues", Some("assigned_to_me"), Some("opened"))
    );
    let shaped = t.ok("gitlab_list_issues", json!({"scope": "assigned_to_me"})).await;
    let (raw_len, shaped_len) = (mine["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("gitlab_list_issues: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 3 < raw_len);
}

#[tokio::test]
async fn gitlab_create_and_update_issues() {
    // Counts the requests writes send: without the outbound-data guard's lookups (`flow_guard.rs`).
    let fake = Fake::start(gitlab).await;
    let t = app_with(&[
        ("WORKBENCH_GITLAB_BASE_URL", format!("{}/api/v4", fake.url)),
        ("WORKBENCH_GITLAB_TOKEN", TOKEN.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    let r = t
        .ok(
            "gitlab_create_issue",
            json!({"project": "acme/api", "title": "Export fails", "description": "500 on export", "labels": ["bug", "p1"], "assignee_ids": [12], "milestone_id": 12, "due_date": "2026-04-01", "confidential": true}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/v4/projects/acme%2Fapi/issues"));
    assert_eq!(
        body_of(&req),
        json!({"title": "Export fails", "description": "500 on export", "labels": "bug,p1", "assignee_ids": [12], "milestone_id": 12, "due_date": "2026-04-01", "confidential": true})
    );
    assert_eq!(
        (r["iid"].as_u64(), r["labels"].clone(), r["confidential"].as_bool()),
        (Some(10), json!(["bug", "p1"]), Some(true))
    );
    let blank = t.err("gitlab_create_issue", json!({"project": "acme/api", "title": " "})).await;
    assert_eq!(blank["message"], "gitlab answered 400: title can't be blank");
    let before = fake.requests().len();
    let baddate =
        t.err("gitlab_create_issue", json!({"project": "acme/api", "title": "x", "due_date": "next friday"})).await;
    assert_eq!(baddate["problems"][0]["path"], "/due_date");
    assert_eq!(fake.requests().len(), before);

    let u = t
        .ok("gitlab_update_issue", json!({"project": "acme/api", "issue_iid": 7, "state_event": "close", "add_labels": ["wontfix"], "remove_labels": ["bug"]}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", "/api/v4/projects/acme%2Fapi/issues/7"));
    assert_eq!(body_of(&req), json!({"state_event": "close", "add_labels": "wontfix", "remove_labels": "bug"}));
    assert_eq!((u["state"].as_str(), u["labels"].clone()), (Some("closed"), json!(["wontfix"])));
    let nothing = t.err("gitlab_update_issue", json!({"project": "acme/api", "issue_iid": 7})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
}

// ---------------------------------------------------------------- pipelines

#[tokio::test]
async fn gitlab_list_and_run_pipelines() {
    let (t, fake) = gl().await;
    let r = t
        .ok(
            "gitlab_list_pipelines",
            json!({"project": "acme/api", "ref": "main", "status": "success", "source": "push", "limit": 1}),
        )
        .await;
    let req = fake.last();
    assert_eq!(req.path, "/api/v4/projects/acme%2Fapi/pipelines");
    assert_eq!(
        (req.q("ref"), req.q("status"), req.q("source"), req.q("per_page")),
        (Some("main"), Some("success"), Some("push"), Some("1"))
    );
    assert_eq!(
        r,
        json!({"pipelines": [{"id": 7002, "iid": 302, "status": "success", "ref": "main", "sha": MR_SHA, "source": "push",
               "created_at": "2026-02-05T09:00:00.000Z", "updated_at": "2026-02-05T09:06:00.000Z", "url": "https://gitlab.example.com/acme/api/-/pipelines/7002"}],
               "next_cursor": "2:1"})
    );
    let r2 = t.ok("gitlab_list_pipelines", json!({"project": "acme/api", "status": "success", "cursor": "2:1"})).await;
    assert_eq!(r2["pipelines"][0]["id"], 7001);
    assert!(r2.get("next_cursor").is_none());

    let p = t
        .ok("gitlab_run_pipeline", json!({"project": "acme/api", "ref": "main", "variables": [{"key": "DEPLOY_ENV", "value": "staging"}, {"key": "CFG", "value": "a=1", "variable_type": "file"}]}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/v4/projects/acme%2Fapi/pipeline"));
    assert_eq!(
        body_of(&req),
        json!({"ref": "main", "variables": [{"key": "DEPLOY_ENV", "value": "staging", "variable_type": "env_var"}, {"key": "CFG", "value": "a=1", "variable_type": "file"}]})
    );
    assert_eq!(
        (p["id"].as_u64(), p["status"].as_str(), p["source"].as_str()),
        (Some(7004), Some("created"), Some("api"))
    );
    let noref = t.err("gitlab_run_pipeline", json!({"project": "acme/api", "ref": "nope"})).await;
    assert_eq!(noref["message"], "gitlab answered 400: Reference not found");
}

// ---------------------------------------------------------------- auth, errors, limits

#[tokio::test]
async fn gitlab_rejected_token_says_reconnect() {
    let fake = Fake::start(gitlab).await;
    let t = app_with(&[
        ("WORKBENCH_GITLAB_BASE_URL", format!("{}/api/v4", fake.url)),
        ("WORKBENCH_GITLAB_TOKEN", "glpat-revoked".into()),
    ]);
    let e = t.err("gitlab_list_projects", json!({})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(401)));
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("401 Unauthorized"), "{msg}");
    assert_eq!(fake.last().header("private-token"), Some("glpat-revoked"));
}

#[tokio::test]
async fn gitlab_rate_limit_becomes_rate_limited() {
    let (t, _fake) = gl().await;
    let e = t.err("gitlab_list_projects", json!({"search": "throttled"})).await;
    assert_eq!((e["code"].as_str(), e["retry_after_seconds"].as_u64()), (Some("RATE_LIMITED"), Some(120)));
    assert!(e["message"].as_str().unwrap().contains("Retry later"));
    let bad_cursor = t.err("gitlab_list_projects", json!({"cursor": "nope"})).await;
    assert_eq!(bad_cursor["problems"][0]["path"], "/cursor");
}

fn fields(pairs: &[(&str, &str)]) -> HashMap<String, Secret<String>> {
    pairs.iter().map(|(k, v)| (k.to_string(), Secret::new(v.to_string()))).collect()
}

#[tokio::test]
async fn gitlab_identity_and_self_managed_base_url() {
    let fake = Fake::start(gitlab).await;
    // No override: the self-managed URL comes from the connection's base_url field.
    let t = app_with(&[]);
    let integration = &plugins::gitlab::INTEGRATION;
    let base = format!("{}/api/v4", fake.url);
    let good = workbench::auth::from_fields(
        integration,
        fields(&[("token", TOKEN), ("base_url", &base)]),
        workbench::auth::Source::Store,
    );
    let label = workbench::send::verify_identity(&t.app, integration, good).await.unwrap();
    assert_eq!(label.as_deref(), Some("jdoe"));
    assert_eq!((fake.last().path.as_str(), fake.last().header("private-token")), ("/api/v4/user", Some(TOKEN)));
    let bad = workbench::auth::from_fields(
        integration,
        fields(&[("token", "glpat-nope"), ("base_url", &base)]),
        workbench::auth::Source::Store,
    );
    let e = workbench::send::verify_identity(&t.app, integration, bad).await.unwrap_err();
    assert!(e.to_string().contains("GitLab rejected this credential: 401 Unauthorized"), "{e}");
}
