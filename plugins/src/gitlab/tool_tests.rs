//! GitLab tools on `MockUpstream`: the exact request of reads and writes (a project path as one
//! encoded `:id` segment, paging parameters, label lists) and the shapes an agent reads.

use serde_json::json;

use super::issues::{CREATE_COMMENT, CREATE_ISSUE, LIST_ISSUES, UPDATE_ISSUE};
use super::mrs::{CREATE_MR, GET_MR, LIST_MRS, MERGE_MR};
use super::projects::{GET_FILE, LIST_PIPELINES, LIST_PROJECTS, RUN_PIPELINE};
use super::*;
use crate::mock::{MockUpstream, message, sent};

fn issue() -> Value {
    json!({"id": 84, "iid": 14, "project_id": 4, "title": "Crash on save", "description": "Steps...", "state": "opened",
        "created_at": "2026-01-10T10:00:00.000Z", "updated_at": "2026-01-11T10:00:00.000Z", "closed_at": null,
        "labels": ["bug"], "milestone": {"id": 1, "title": "v2.0"}, "assignees": [{"id": 5, "username": "ann"}],
        "author": {"id": 1, "username": "root", "name": "Administrator"}, "user_notes_count": 3, "due_date": null,
        "confidential": false, "web_url": "https://gitlab.example.com/acme/app/-/issues/14",
        "references": {"short": "#14", "relative": "#14", "full": "acme/app#14"}})
}

const SHAPED: &str = r#"{"iid": 14, "reference": "acme/app#14", "title": "Crash on save", "state": "opened",
    "author": "root", "assignees": ["ann"], "labels": ["bug"], "milestone": "v2.0", "comments": 3,
    "created_at": "2026-01-10T10:00:00.000Z", "updated_at": "2026-01-11T10:00:00.000Z",
    "url": "https://gitlab.example.com/acme/app/-/issues/14"}"#;

/// list_issues: a web URL of a project becomes its encoded path; filters and paging go in the
/// query; `X-Next-Page` becomes the cursor.
#[test]
fn list_issues_encodes_the_project_and_pages() {
    let (out, reqs) = MockUpstream::new()
        .json_with_headers(json!([issue()]), &[("x-next-page", "2"), ("x-per-page", "10")])
        .ok(
            &LIST_ISSUES,
            json!({"project": "https://gitlab.example.com/acme/app/-/issues", "labels": ["bug", "p1"], "search": "save", "limit": 10}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects/acme%2Fapp/issues", "body": null, "query": [
            ["state", "opened"], ["labels", "bug,p1"], ["search", "save"], ["per_page", "10"], ["page", "1"]]})
    );
    let shaped: Value = serde_json::from_str(SHAPED).unwrap();
    assert_eq!(out, json!({"issues": [shaped], "next_cursor": "2:10"}));
    // The last page has an empty X-Next-Page; a foreign cursor is refused before sending.
    let (out, reqs) = MockUpstream::new()
        .json_with_headers(json!([]), &[("x-next-page", "")])
        .ok(&LIST_ISSUES, json!({"cursor": "2:10"}));
    assert_eq!((reqs[0].path.as_str(), sent(&reqs[0])["query"][2].clone()), ("/issues", json!(["page", "2"])));
    assert_eq!(out, json!({"issues": []}));
    let (r, reqs) = MockUpstream::new().call(&LIST_ISSUES, json!({"cursor": "page=2"}));
    assert!(message(&r.unwrap_err()).contains("not one this tool issued"));
    assert!(reqs.is_empty());
}

#[test]
fn create_issue_posts_the_fields() {
    let (out, reqs) = MockUpstream::new().json(issue()).ok(
        &CREATE_ISSUE,
        json!({"project": 4, "title": "Crash on save", "description": "Steps...", "labels": ["bug"],
               "assignee_ids": [5], "confidential": true}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/projects/4/issues", "query": [], "body": {"title": "Crash on save",
            "description": "Steps...", "labels": "bug", "assignee_ids": [5], "confidential": true}})
    );
    assert_eq!(out, serde_json::from_str::<Value>(SHAPED).unwrap());
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_ISSUE, json!({"project": 4, "title": "x", "due_date": "tomorrow"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
    assert!(reqs.is_empty());
}

/// A project path is one segment: `..` and `?` cannot leave `/projects/:id`.
#[test]
fn a_project_path_cannot_traverse() {
    let note = json!({"id": 302, "body": "hi", "noteable_type": "Issue", "author": {"id": 1, "username": "root"},
        "created_at": "2026-01-12T10:00:00.000Z", "system": false});
    let (out, reqs) = MockUpstream::new()
        .json(note)
        .ok(&CREATE_COMMENT, json!({"project": "../../users?x=", "target_type": "issue", "iid": 1, "body": "hi"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/projects/..%2F..%2Fusers%3Fx%3D/issues/1/notes", "query": [], "body": {"body": "hi"}})
    );
    assert_eq!(
        out,
        json!({"id": 302, "on": "#1", "noteable_type": "Issue", "author": "root", "created_at": "2026-01-12T10:00:00.000Z"})
    );
}

/// merge_mr: GitLab's refusals (405/406/409/422) say why in the agent's words.
#[test]
fn merge_mr_puts_the_options_and_explains_a_refusal() {
    let merged = json!({"iid": 7, "title": "Add docs", "state": "merged", "merge_commit_sha": "abc123",
        "squash_commit_sha": null, "merge_when_pipeline_succeeds": false, "source_branch": "docs", "target_branch": "main",
        "author": {"username": "ann"}, "web_url": "https://gitlab.example.com/acme/app/-/merge_requests/7"});
    let (out, reqs) = MockUpstream::new()
        .json(merged)
        .ok(&MERGE_MR, json!({"project": "acme/app", "mr_iid": 7, "squash": true, "sha": "def456"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/projects/acme%2Fapp/merge_requests/7/merge", "query": [],
               "body": {"squash": true, "sha": "def456"}})
    );
    assert_eq!((out["state"].clone(), out["merge_commit_sha"].clone()), (json!("merged"), json!("abc123")));
    assert!(out.get("auto_merge").is_none());
    let (r, _) = MockUpstream::new()
        .error(ToolError::Upstream { status: 406, message: "Branch cannot be merged".into(), retry_after: None })
        .call(&MERGE_MR, json!({"project": "acme/app", "mr_iid": 7}));
    let Err(ToolError::Upstream { status: 406, message, .. }) = r else { panic!("{r:?}") };
    assert!(
        message.starts_with("merge request !7 was not merged: Branch cannot be merged (it has merge conflicts"),
        "{message}"
    );
}

/// create_mr: a draft gets GitLab's `Draft:` prefix once; labels are one comma list.
#[test]
fn create_mr_marks_a_draft_in_the_title() {
    let mr = json!({"iid": 8, "title": "Draft: Add docs", "state": "opened", "draft": true, "source_branch": "docs", "target_branch": "main",
        "author": {"username": "ann"}, "web_url": "https://gitlab.example.com/acme/app/-/merge_requests/8"});
    let (out, reqs) = MockUpstream::new().json(mr).ok(
        &CREATE_MR,
        json!({"project": "acme/app", "source_branch": "docs", "target_branch": "main", "title": "Add docs", "draft": true, "labels": ["docs", "p2"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/projects/acme%2Fapp/merge_requests", "query": [],
               "body": {"source_branch": "docs", "target_branch": "main", "title": "Draft: Add docs", "labels": "docs,p2"}})
    );
    assert_eq!(out["iid"], 8);
    let (_, reqs) = MockUpstream::new().json(json!({"iid": 9})).ok(
        &CREATE_MR,
        json!({"project": 4, "source_branch": "a", "target_branch": "b", "title": "[Draft] x", "draft": true}),
    );
    assert_eq!(sent(&reqs[0])["body"]["title"], "[Draft] x");
}

/// get_file: the whole file path is one encoded segment; GitLab's headers give the blob and
/// commit; the result is public only when the project says so; `..` is refused unsent.
#[test]
fn get_file_reads_raw_content_and_headers() {
    let up = MockUpstream::new().json(json!({"id": 4, "visibility": "public"})).reply_raw(
        b"fn main() {}\n".to_vec(),
        &[
            ("x-gitlab-blob-id", "79f7bbd25901e8334750839545a9bd021f0e4c83"),
            ("x-gitlab-last-commit-id", "570e7b2a"),
            ("x-gitlab-ref", "main"),
        ],
    );
    let (out, public) = up.ok_marked(&GET_FILE, json!({"project": "acme/app", "file_path": "/src/main.rs"}));
    assert!(public);
    assert_eq!(
        out,
        json!({"project": "acme/app", "file_path": "src/main.rs", "ref": "main", "size": 13,
            "blob_id": "79f7bbd25901e8334750839545a9bd021f0e4c83", "last_commit_id": "570e7b2a", "content": "fn main() {}\n", "truncated": false})
    );
    let (_, reqs) = MockUpstream::new()
        .error(ToolError::Network("down".into()))
        .reply_raw(b"x".to_vec(), &[])
        .ok(&GET_FILE, json!({"project": "acme/app", "file_path": "src/main.rs", "ref": "v1"}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/projects/acme%2Fapp/repository/files/src%2Fmain.rs/raw", "query": [["ref", "v1"]], "body": null})
    );
    let (r, reqs) = MockUpstream::new().call(&GET_FILE, json!({"project": "acme/app", "file_path": "src/../../.env"}));
    assert!(message(&r.unwrap_err()).contains("is not a file path"));
    assert!(reqs.is_empty());
}

/// update_issue: a PUT with only the fields given, label lists comma-joined, the state event
/// spelled as GitLab does; nothing to change or a bad date is refused unsent.
#[test]
fn update_issue_puts_only_the_changes() {
    let mut closed = issue();
    closed["state"] = json!("closed");
    closed["labels"] = json!(["bug", "done"]);
    closed["due_date"] = json!("2026-02-01");
    let (out, reqs) = MockUpstream::new().json(closed).ok(
        &UPDATE_ISSUE,
        json!({"project": "acme/app", "issue_iid": 14, "state_event": "close", "add_labels": ["done"], "remove_labels": [],
               "assignee_ids": [], "milestone_id": 0, "due_date": "2026-02-01"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/projects/acme%2Fapp/issues/14", "query": [], "body": {"state_event": "close",
            "add_labels": "done", "assignee_ids": [], "milestone_id": 0, "due_date": "2026-02-01"}})
    );
    assert_eq!(
        out,
        json!({"iid": 14, "reference": "acme/app#14", "title": "Crash on save", "state": "closed", "author": "root", "assignees": ["ann"],
            "labels": ["bug", "done"], "milestone": "v2.0", "due_date": "2026-02-01", "comments": 3,
            "created_at": "2026-01-10T10:00:00.000Z", "updated_at": "2026-01-11T10:00:00.000Z",
            "url": "https://gitlab.example.com/acme/app/-/issues/14"})
    );
    let (_, reqs) = MockUpstream::new()
        .json(issue())
        .ok(&UPDATE_ISSUE, json!({"project": 4, "issue_iid": 14, "labels": [], "title": "Crash on save (macOS)"}));
    assert_eq!(sent(&reqs[0])["body"], json!({"title": "Crash on save (macOS)", "labels": ""}));
    for args in
        [json!({"project": 4, "issue_iid": 14}), json!({"project": 4, "issue_iid": 14, "due_date": "02/01/2026"})]
    {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_ISSUE, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}

fn mr() -> Value {
    json!({"id": 301, "iid": 7, "project_id": 4, "title": "Add docs", "description": "Adds the user guide.", "state": "opened",
        "draft": true, "author": {"id": 5, "username": "ann"}, "assignees": [{"id": 5, "username": "ann"}],
        "reviewers": [{"id": 6, "username": "bob"}], "source_branch": "docs", "target_branch": "main", "labels": [],
        "detailed_merge_status": "not_approved", "created_at": "2026-01-12T10:00:00.000Z", "updated_at": "2026-01-13T10:00:00.000Z",
        "merged_at": null, "sha": "abc123", "has_conflicts": false, "merge_commit_sha": null, "squash_commit_sha": null,
        "merge_user": null, "merged_by": null, "user_notes_count": 2, "changes_count": "2", "squash": false,
        "force_remove_source_branch": true, "head_pipeline": {"id": 900, "status": "success", "ref": "docs",
            "web_url": "https://gitlab.example.com/acme/app/-/pipelines/900"},
        "references": {"short": "!7", "full": "acme/app!7"}, "web_url": "https://gitlab.example.com/acme/app/-/merge_requests/7"})
}

/// list_mrs across GitLab (no project) sends the reviewer queue filters; X-Next-Page becomes the
/// cursor; a project's list goes under its encoded path.
#[test]
fn list_mrs_sends_filters_and_pages() {
    let (out, reqs) = MockUpstream::new().json_with_headers(json!([mr()]), &[("x-next-page", "3"), ("x-per-page", "5")]).ok(
        &LIST_MRS,
        json!({"state": "opened", "scope": "all", "reviewer_username": "bob", "labels": ["docs", "p2"], "search": "guide",
               "target_branch": "main", "order_by": "updated_at", "limit": 5, "cursor": "2:5"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/merge_requests", "body": null, "query": [["state", "opened"], ["scope", "all"],
            ["reviewer_username", "bob"], ["labels", "docs,p2"], ["search", "guide"], ["target_branch", "main"],
            ["order_by", "updated_at"], ["per_page", "5"], ["page", "2"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "3:5", "merge_requests": [{"iid": 7, "reference": "acme/app!7", "title": "Add docs", "state": "opened",
            "draft": true, "author": "ann", "assignees": ["ann"], "reviewers": ["bob"], "source_branch": "docs", "target_branch": "main",
            "merge_status": "not_approved", "created_at": "2026-01-12T10:00:00.000Z", "updated_at": "2026-01-13T10:00:00.000Z",
            "url": "https://gitlab.example.com/acme/app/-/merge_requests/7"}]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!([]))
        .ok(&LIST_MRS, json!({"project": "acme/app", "state": "merged", "author_username": "ann"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects/acme%2Fapp/merge_requests", "body": null,
               "query": [["state", "merged"], ["author_username", "ann"], ["per_page", "20"], ["page", "1"]]})
    );
    assert_eq!(out, json!({"merge_requests": []}));
}

/// get_mr with diffs: the MR with its head pipeline, then its diffs as files and one git-style
/// unified diff (a new file, a rename); another page of diffs is flagged.
#[test]
fn get_mr_with_diffs_builds_a_unified_diff() {
    let diffs = json!([
        {"old_path": "docs/guide.md", "new_path": "docs/guide.md", "a_mode": "0", "b_mode": "100644", "new_file": true,
         "renamed_file": false, "deleted_file": false, "diff": "@@ -0,0 +1 @@\n+# Guide\n"},
        {"old_path": "README", "new_path": "README.md", "a_mode": "100644", "b_mode": "100644", "new_file": false,
         "renamed_file": true, "deleted_file": false, "diff": ""}]);
    let (out, reqs) = MockUpstream::new()
        .json(mr())
        .json_with_headers(diffs, &[("x-next-page", "2")])
        .ok(&GET_MR, json!({"project": "acme/app", "mr_iid": 7, "include_diffs": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects/acme%2Fapp/merge_requests/7", "query": [], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/projects/acme%2Fapp/merge_requests/7/diffs", "query": [["per_page", "100"], ["page", "1"]], "body": null})
    );
    let diff = "diff --git a/docs/guide.md b/docs/guide.md\nnew file mode 100644\n--- /dev/null\n+++ b/docs/guide.md\n@@ -0,0 +1 @@\n+# Guide\n\
                diff --git a/README b/README.md\nrename from README\nrename to README.md\n";
    assert_eq!(
        out,
        json!({"iid": 7, "reference": "acme/app!7", "title": "Add docs", "state": "opened", "draft": true, "author": "ann",
            "assignees": ["ann"], "reviewers": ["bob"], "source_branch": "docs", "target_branch": "main", "merge_status": "not_approved",
            "created_at": "2026-01-12T10:00:00.000Z", "updated_at": "2026-01-13T10:00:00.000Z",
            "url": "https://gitlab.example.com/acme/app/-/merge_requests/7", "description": "Adds the user guide.", "sha": "abc123",
            "has_conflicts": false, "pipeline": {"id": 900, "status": "success", "url": "https://gitlab.example.com/acme/app/-/pipelines/900"},
            "changes_count": "2", "comments": 2, "remove_source_branch": true, "more_files": true,
            "files": [{"path": "docs/guide.md", "status": "added"}, {"path": "README.md", "status": "renamed", "old_path": "README"}],
            "diff": diff, "diff_truncated": false, "truncated": false})
    );
}

/// list_projects: membership and active-only by default; all-public results are marked public,
/// a private one keeps them private.
#[test]
fn list_projects_sends_defaults_and_marks_public_results() {
    let project = |id: u64, visibility: &str| {
        json!({"id": id, "name": "app", "path_with_namespace": format!("acme/app{id}"), "description": "",
            "default_branch": "main", "visibility": visibility, "archived": false, "star_count": 4, "forks_count": 1,
            "open_issues_count": 12, "last_activity_at": "2026-01-14T10:00:00.000Z", "web_url": format!("https://gitlab.example.com/acme/app{id}")})
    };
    let up = MockUpstream::new()
        .json_with_headers(json!([project(4, "public")]), &[("x-next-page", "2"), ("x-per-page", "1")]);
    let (out, public) = up.ok_marked(&LIST_PROJECTS, json!({"search": "app", "limit": 1}));
    assert!(public);
    assert_eq!(
        out,
        json!({"next_cursor": "2:1", "projects": [{"id": 4, "path": "acme/app4", "name": "app", "default_branch": "main",
            "visibility": "public", "stars": 4, "forks": 1, "open_issues": 12, "last_activity_at": "2026-01-14T10:00:00.000Z",
            "url": "https://gitlab.example.com/acme/app4"}]})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!([]))
        .ok(&LIST_PROJECTS, json!({"search": "app", "owned": true, "order_by": "name", "sort": "asc", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects", "body": null, "query": [["search", "app"], ["order_by", "name"], ["sort", "asc"],
            ["membership", "true"], ["owned", "true"], ["archived", "false"], ["per_page", "1"], ["page", "1"]]})
    );
    let up = MockUpstream::new().json(json!([project(4, "public"), project(5, "private")]));
    let (_, public) = up.ok_marked(&LIST_PROJECTS, json!({"membership": false, "include_archived": true}));
    assert!(!public);
}

/// list_pipelines: ref, status and source filters, each pipeline as an agent reads it.
#[test]
fn list_pipelines_filters_and_shapes() {
    let (out, reqs) = MockUpstream::new()
        .json(json!([{"id": 901, "iid": 55, "project_id": 4, "status": "failed", "source": "push", "ref": "main", "sha": "abc123",
            "created_at": "2026-01-14T10:00:00.000Z", "updated_at": "2026-01-14T10:09:00.000Z",
            "web_url": "https://gitlab.example.com/acme/app/-/pipelines/901"}]))
        .ok(&LIST_PIPELINES, json!({"project": 4, "ref": "main", "status": "failed", "source": "push", "username": "ann", "limit": 10}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects/4/pipelines", "body": null, "query": [["ref", "main"], ["status", "failed"],
            ["source", "push"], ["username", "ann"], ["per_page", "10"], ["page", "1"]]})
    );
    assert_eq!(
        out,
        json!({"pipelines": [{"id": 901, "iid": 55, "status": "failed", "ref": "main", "sha": "abc123", "source": "push",
            "created_at": "2026-01-14T10:00:00.000Z", "updated_at": "2026-01-14T10:09:00.000Z",
            "url": "https://gitlab.example.com/acme/app/-/pipelines/901"}]})
    );
}

/// run_pipeline: a POST to `/pipeline` with the ref and typed variables; GitLab's refusal comes
/// through as the error.
#[test]
fn run_pipeline_posts_ref_and_variables() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": 902, "iid": 56, "status": "created", "source": "api", "ref": "main", "sha": "abc123",
            "created_at": "2026-01-14T11:00:00.000Z", "updated_at": "2026-01-14T11:00:00.000Z",
            "web_url": "https://gitlab.example.com/acme/app/-/pipelines/902"}))
        .ok(
            &RUN_PIPELINE,
            json!({"project": "acme/app", "ref": "main", "variables": [
            {"key": "DEPLOY_ENV", "value": "staging"}, {"key": "CONFIG", "value": "a=1", "variable_type": "file"}]}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/projects/acme%2Fapp/pipeline", "query": [], "body": {"ref": "main", "variables": [
            {"key": "DEPLOY_ENV", "value": "staging", "variable_type": "env_var"}, {"key": "CONFIG", "value": "a=1", "variable_type": "file"}]}})
    );
    assert_eq!(
        out,
        json!({"id": 902, "iid": 56, "status": "created", "ref": "main", "sha": "abc123", "source": "api",
            "created_at": "2026-01-14T11:00:00.000Z", "updated_at": "2026-01-14T11:00:00.000Z",
            "url": "https://gitlab.example.com/acme/app/-/pipelines/902"})
    );
    let (r, reqs) = MockUpstream::new()
        .error(ToolError::Upstream { status: 400, message: "base Reference not found".into(), retry_after: None })
        .call(&RUN_PIPELINE, json!({"project": 4, "ref": "nope", "variables": []}));
    assert_eq!(sent(&reqs[0])["body"], json!({"ref": "nope"}));
    assert_eq!(message(&r.unwrap_err()), "base Reference not found");
}
