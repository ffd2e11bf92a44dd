//! GitLab tools on `MockUpstream`: the exact request of reads and writes (a project path as one
//! encoded `:id` segment, paging parameters, label lists) and the shapes an agent reads.

use serde_json::json;

use super::issues::{CREATE_COMMENT, CREATE_ISSUE, LIST_ISSUES};
use super::mrs::{CREATE_MR, MERGE_MR};
use super::projects::GET_FILE;
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
