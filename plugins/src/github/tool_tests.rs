//! GitHub issue and repository tools on `MockUpstream` (pull requests have theirs in `pulls.rs`): the exact
//! request of reads and writes (owner and repo as encoded segments, paging, GitHub's headers) and
//! the issues as an agent reads them; a result is marked public only when GitHub says the
//! repository is.

use serde_json::json;

use super::actions::{LIST_WORKFLOW_RUNS, RUN_WORKFLOW};
use super::issues::{CREATE_COMMENT, CREATE_ISSUE, GET_ISSUE, LIST_ISSUES, SEARCH_ISSUES, UPDATE_ISSUE};
use super::pulls::{CREATE_PR, CREATE_PR_REVIEW, GET_PR, LIST_PRS, MERGE_PR};
use super::repos::{CREATE_BRANCH, GET_FILE, GET_REPO, LIST_REPOS, SEARCH_CODE, SEARCH_REPOS, UPDATE_FILE};
use super::*;
use crate::mock::{MockUpstream, header, message, sent};

fn issue(number: u64) -> Value {
    json!({"id": 1, "node_id": "I_x", "number": number, "title": "Crash on save", "state": "open", "state_reason": null,
        "user": {"login": "octocat", "id": 1}, "assignees": [{"login": "hubot"}], "labels": [{"id": 208045946, "name": "bug", "color": "f29513"}],
        "milestone": {"title": "v1.0", "number": 1}, "comments": 2, "created_at": "2026-01-01T10:00:00Z",
        "updated_at": "2026-01-02T10:00:00Z", "closed_at": null, "html_url": format!("https://github.com/acme/demo/issues/{number}"),
        "reactions": {"total_count": 0}})
}

/// list_issues asks about the repository first (public or not), then lists; pull requests are
/// left out; the result is marked public because GitHub said the repository is.
#[test]
fn list_issues_leaves_out_pull_requests_and_marks_a_public_repo() {
    let mut pr = issue(8);
    pr["pull_request"] = json!({"url": "https://api.github.com/repos/acme/demo/pulls/8"});
    let link = r#"<https://api.github.com/repositories/1/issues?state=open&per_page=2&page=2>; rel="next""#;
    let up = MockUpstream::new()
        .json(json!({"id": 1, "full_name": "acme/demo", "private": false, "visibility": "public"}))
        .json_with_headers(json!([issue(7), pr]), &[("link", link)]);
    let (out, public) =
        up.ok_marked(&LIST_ISSUES, json!({"owner": "acme", "repo": "demo", "labels": ["bug", "p1"], "limit": 2}));
    assert!(public);
    assert_eq!(
        out,
        json!({"next_cursor": "2:2", "issues": [{"number": 7, "title": "Crash on save", "state": "open", "author": "octocat",
            "assignees": ["hubot"], "labels": ["bug"], "milestone": "v1.0", "comments": 2, "created_at": "2026-01-01T10:00:00Z",
            "updated_at": "2026-01-02T10:00:00Z", "url": "https://github.com/acme/demo/issues/7"}]})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!({"private": true}))
        .json(json!([]))
        .ok(&LIST_ISSUES, json!({"owner": "acme", "repo": "demo.git", "state": "closed"}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/repos/acme/demo", "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/repos/acme/demo/issues", "body": null, "query": [["state", "closed"], ["per_page", "30"], ["page", "1"]]})
    );
    assert_eq!(header(&reqs[1], "x-github-api-version"), Some("2022-11-28"));
}

/// A private repository (or a failed lookup) leaves the result private.
#[test]
fn list_issues_of_a_private_repo_stays_private() {
    let up = MockUpstream::new().json(json!({"private": true, "visibility": "private"})).json(json!([]));
    assert!(!up.ok_marked(&LIST_ISSUES, json!({"owner": "acme", "repo": "secret"})).1);
    let up = MockUpstream::new().error(ToolError::Network("reset".into())).json(json!([]));
    assert!(!up.ok_marked(&LIST_ISSUES, json!({"owner": "acme", "repo": "secret"})).1);
}

#[test]
fn create_issue_posts_the_fields() {
    let (out, reqs) = MockUpstream::new().json(issue(9)).ok(
        &CREATE_ISSUE,
        json!({"owner": "acme", "repo": "demo", "title": "Crash on save", "body": "Steps...", "labels": ["bug"], "assignees": ["hubot"], "milestone": 1}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/repos/acme/demo/issues", "query": [], "body": {"title": "Crash on save", "body": "Steps...",
            "labels": ["bug"], "assignees": ["hubot"], "milestone": 1}})
    );
    assert_eq!((out["number"].clone(), out["url"].clone()), (json!(9), json!("https://github.com/acme/demo/issues/9")));
}

/// Owner and repo are segments: a `/` in them cannot reach another endpoint. (A whole segment of
/// `..` is refused by the engine before sending: `tests/it/google_calendar.rs`,
/// `a_dot_segment_in_an_id_is_never_sent`.)
#[test]
fn create_comment_encodes_owner_and_repo() {
    let comment = json!({"id": 1, "body": "Thanks", "user": {"login": "octocat"}, "created_at": "2026-01-03T10:00:00Z",
        "html_url": "https://github.com/acme/demo/issues/7#issuecomment-1"});
    let (out, reqs) = MockUpstream::new()
        .json(comment)
        .ok(&CREATE_COMMENT, json!({"owner": "acme", "repo": "../../user/keys", "issue_number": 7, "body": "Thanks"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/repos/acme/..%2F..%2Fuser%2Fkeys/issues/7/comments", "query": [], "body": {"body": "Thanks"}})
    );
    assert_eq!(
        out,
        json!({"id": 1, "issue_number": 7, "author": "octocat", "created_at": "2026-01-03T10:00:00Z", "url": "https://github.com/acme/demo/issues/7#issuecomment-1"})
    );
}

fn repo(private: bool) -> Value {
    json!({"id": 1296269, "full_name": "acme/demo", "private": private, "visibility": if private { "private" } else { "public" },
        "description": "Demo", "default_branch": "main", "language": "Rust", "stargazers_count": 80, "forks_count": 9,
        "open_issues_count": 0, "archived": false, "fork": false, "pushed_at": "2026-01-01T10:00:00Z",
        "html_url": "https://github.com/acme/demo", "owner": {"login": "acme"}, "topics": [], "license": {"spdx_id": "MIT"},
        "permissions": {"admin": false, "push": true, "pull": true}})
}

/// get_repo marks the result public from GitHub's own answer, never from the arguments.
#[test]
fn get_repo_shapes_and_marks_from_the_answer() {
    let (out, public) =
        MockUpstream::new().json(repo(false)).ok_marked(&GET_REPO, json!({"owner": "acme", "repo": "demo"}));
    assert!(public);
    assert_eq!(out["visibility"], "public");
    assert_eq!(out["license"], "MIT");
    assert_eq!(out["your_permissions"], json!(["push", "pull"]));
    assert!(!MockUpstream::new().json(repo(true)).ok_marked(&GET_REPO, json!({"owner": "acme", "repo": "demo"})).1);
}

/// list_repos: public only when every repository listed is.
#[test]
fn list_repos_is_public_only_when_every_repo_is() {
    let (out, public) = MockUpstream::new()
        .json(json!([repo(false), repo(true)]))
        .ok_marked(&LIST_REPOS, json!({"visibility": "all", "affiliation": ["owner", "organization_member"]}));
    assert!(!public);
    assert_eq!(out["repos"].as_array().unwrap().len(), 2);
    let (_, reqs) =
        MockUpstream::new().json(json!([])).ok(&LIST_REPOS, json!({"affiliation": ["owner", "organization_member"]}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/user/repos", "body": null, "query": [["affiliation", "owner,organization_member"],
            ["sort", "updated"], ["per_page", "30"], ["page", "1"]]})
    );
}

/// get_file: the repository is asked about first, then the file, decoded from base64; a path
/// with `..` is refused before anything is sent.
#[test]
fn get_file_decodes_the_content() {
    let file = json!({"type": "file", "encoding": "base64", "size": 12, "name": "README.md", "path": "docs/README.md",
        "content": "SGVsbG8gd29y\nbGQh\n", "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
        "html_url": "https://github.com/acme/demo/blob/main/docs/README.md"});
    let (out, reqs) = MockUpstream::new()
        .json(repo(true))
        .json(file)
        .ok(&GET_FILE, json!({"owner": "acme", "repo": "demo", "path": "/docs/README.md", "ref": "v1.0"}));
    assert_eq!(sent(&reqs[0])["path"], "/repos/acme/demo");
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/repos/acme/demo/contents/docs/README.md", "query": [["ref", "v1.0"]], "body": null})
    );
    assert_eq!(
        out,
        json!({"type": "file", "path": "docs/README.md", "ref": "v1.0", "size": 12, "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
            "url": "https://github.com/acme/demo/blob/main/docs/README.md", "content": "Hello world!", "truncated": false})
    );
    let (r, reqs) =
        MockUpstream::new().call(&GET_FILE, json!({"owner": "acme", "repo": "demo", "path": "docs/../../../user"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
    assert!(reqs.is_empty());
    // Content that is not base64 is a clear error, not a panic.
    let (r, _) = MockUpstream::new()
        .json(repo(true))
        .json(json!({"type": "file", "encoding": "base64", "content": "%%%"}))
        .call(&GET_FILE, json!({"owner": "acme", "repo": "demo", "path": "x"}));
    assert!(matches!(r, Err(ToolError::Internal(ref m)) if m.contains("not valid base64")), "{r:?}");
}

/// update_file reads the current sha, then PUTs the new content; a 409 says to re-read.
#[test]
fn update_file_reads_the_sha_then_puts() {
    let current = json!({"type": "file", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3", "path": "notes.md"});
    let written = json!({"content": {"path": "notes.md", "sha": "new1", "html_url": "https://github.com/acme/demo/blob/docs/notes.md"},
        "commit": {"sha": "c0ffee", "html_url": "https://github.com/acme/demo/commit/c0ffee"}});
    let (out, reqs) = MockUpstream::new()
        .json(current)
        .json(written)
        .ok(&UPDATE_FILE, json!({"owner": "acme", "repo": "demo", "path": "notes.md", "content": "hi", "message": "Update notes", "branch": "docs"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/repos/acme/demo/contents/notes.md", "query": [["ref", "docs"]], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PUT", "path": "/repos/acme/demo/contents/notes.md", "query": [], "body": {"message": "Update notes",
            "content": "aGk=", "branch": "docs", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3"}})
    );
    assert_eq!(
        out,
        json!({"path": "notes.md", "created": false, "branch": "docs", "sha": "new1", "commit_sha": "c0ffee",
            "commit_url": "https://github.com/acme/demo/commit/c0ffee", "url": "https://github.com/acme/demo/blob/docs/notes.md"})
    );
    let (r, _) = MockUpstream::new()
        .error(ToolError::Upstream { status: 409, message: "notes.md does not match 95b966".into(), retry_after: None })
        .call(&UPDATE_FILE, json!({"owner": "acme", "repo": "demo", "path": "notes.md", "content": "hi", "message": "m", "sha": "95b966"}));
    assert!(message(&r.unwrap_err()).contains("read it again with github_get_file"));
}

/// create_branch without from_ref: the default branch, its head, then the new ref.
#[test]
fn create_branch_starts_from_the_default_branch() {
    let (out, reqs) = MockUpstream::new()
        .json(repo(false))
        .json(json!({"ref": "refs/heads/main", "object": {"sha": "aa218f56b14c9653891f9e74264a383fa43fefbd", "type": "commit"}}))
        .json(json!({"ref": "refs/heads/feature/x", "object": {"sha": "aa218f56b14c9653891f9e74264a383fa43fefbd"}}))
        .ok(&CREATE_BRANCH, json!({"owner": "acme", "repo": "demo", "branch": "feature/x"}));
    assert_eq!(sent(&reqs[1])["path"], "/repos/acme/demo/git/ref/heads/main");
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "POST", "path": "/repos/acme/demo/git/refs", "query": [],
               "body": {"ref": "refs/heads/feature/x", "sha": "aa218f56b14c9653891f9e74264a383fa43fefbd"}})
    );
    assert_eq!(
        out,
        json!({"branch": "feature/x", "ref": "refs/heads/feature/x", "sha": "aa218f56b14c9653891f9e74264a383fa43fefbd", "from": "main"})
    );
    let (r, _) = MockUpstream::new()
        .json(json!({"full_name": "acme/demo"}))
        .call(&CREATE_BRANCH, json!({"owner": "acme", "repo": "demo", "branch": "x"}));
    assert!(matches!(r, Err(ToolError::Internal(ref m)) if m.contains("default")), "{r:?}");
}

#[test]
fn create_pr_posts_head_and_base() {
    let pr = json!({"number": 12, "title": "Add docs", "state": "open", "draft": true, "user": {"login": "octocat"},
        "head": {"ref": "docs", "repo": {"full_name": "acme/demo"}}, "base": {"ref": "main", "repo": {"full_name": "acme/demo"}},
        "html_url": "https://github.com/acme/demo/pull/12", "created_at": "2026-01-04T10:00:00Z"});
    let (out, reqs) = MockUpstream::new()
        .json(pr)
        .ok(&CREATE_PR, json!({"owner": "acme", "repo": "demo", "title": "Add docs", "head": "docs", "base": "main", "draft": true, "body": "Adds docs"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/repos/acme/demo/pulls", "query": [],
               "body": {"title": "Add docs", "head": "docs", "base": "main", "draft": true, "body": "Adds docs"}})
    );
    assert_eq!((out["number"].clone(), out["url"].clone()), (json!(12), json!("https://github.com/acme/demo/pull/12")));
}

/// merge_pr: GitHub's 405 and 409 are explained in the agent's words.
#[test]
fn merge_pr_puts_the_method_and_explains_refusals() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "merged": true, "message": "Pull Request successfully merged"}))
        .ok(&MERGE_PR, json!({"owner": "acme", "repo": "demo", "pull_number": 12, "merge_method": "squash", "sha": "abc"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/repos/acme/demo/pulls/12/merge", "query": [], "body": {"merge_method": "squash", "sha": "abc"}})
    );
    assert_eq!(
        out,
        json!({"pull_number": 12, "merged": true, "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "message": "Pull Request successfully merged"})
    );
    let (r, _) = MockUpstream::new()
        .error(ToolError::Upstream { status: 405, message: "Pull Request is not mergeable".into(), retry_after: None })
        .call(&MERGE_PR, json!({"owner": "acme", "repo": "demo", "pull_number": 12}));
    let m = message(&r.unwrap_err());
    assert!(
        m.starts_with("pull request #12 was not merged: Pull Request is not mergeable (GitHub will not merge it"),
        "{m}"
    );
}

/// create_pr_review: inline comments in GitHub's shape (upper-case sides, a range's start);
/// request_changes without a body and a range that runs backwards are refused unsent.
#[test]
fn create_pr_review_sends_inline_comments() {
    let review = json!({"id": 80, "state": "CHANGES_REQUESTED", "user": {"login": "rev"}, "commit_id": "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091",
        "submitted_at": "2026-01-05T10:00:00Z", "html_url": "https://github.com/acme/demo/pull/12#pullrequestreview-80"});
    let (out, reqs) = MockUpstream::new().json(review).ok(
        &CREATE_PR_REVIEW,
        json!({"owner": "acme", "repo": "demo", "pull_number": 12, "event": "request_changes", "body": "See inline",
               "comments": [{"path": "src/lib.rs", "line": 14, "start_line": 10, "body": "Extract this"}]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/repos/acme/demo/pulls/12/reviews", "query": [], "body": {"event": "REQUEST_CHANGES",
            "body": "See inline", "comments": [{"path": "src/lib.rs", "line": 14, "side": "RIGHT", "body": "Extract this",
            "start_line": 10, "start_side": "RIGHT"}]}})
    );
    assert_eq!(out["state"], "CHANGES_REQUESTED");
    for args in [
        json!({"owner": "a", "repo": "b", "pull_number": 1, "event": "request_changes"}),
        json!({"owner": "a", "repo": "b", "pull_number": 1, "event": "comment", "comments": [{"path": "x", "line": 3, "start_line": 5, "body": "b"}]}),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_PR_REVIEW, args);
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
        assert!(reqs.is_empty());
    }
}

/// search_issues tells issues from pull requests and names each one's repository.
#[test]
fn search_issues_tells_issues_from_prs() {
    let mut pr = issue(8);
    pr["pull_request"] = json!({"merged_at": "2026-01-03T10:00:00Z"});
    pr["repository_url"] = json!("https://api.github.com/repos/acme/demo");
    let mut plain = issue(7);
    plain["repository_url"] = json!("https://api.github.com/repos/acme/other");
    let (out, reqs) = MockUpstream::new()
        .json(json!({"total_count": 2, "incomplete_results": false, "items": [plain, pr]}))
        .ok(&SEARCH_ISSUES, json!({"q": "crash is:open org:acme", "limit": 5}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search/issues", "body": null, "query": [["q", "crash is:open org:acme"], ["per_page", "5"], ["page", "1"]]})
    );
    assert_eq!(out["total_count"], 2);
    assert_eq!(
        (out["items"][0]["type"].clone(), out["items"][0]["repo"].clone()),
        (json!("issue"), json!("acme/other"))
    );
    assert_eq!((out["items"][1]["type"].clone(), out["items"][1]["merged"].clone()), (json!("pr"), json!(true)));
}

/// update_issue: a state reason implies the state (reopened opens, the others close).
#[test]
fn update_issue_derives_the_state_from_the_reason() {
    let (_, reqs) = MockUpstream::new()
        .json(issue(7))
        .ok(&UPDATE_ISSUE, json!({"owner": "acme", "repo": "demo", "issue_number": 7, "state_reason": "not_planned"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/repos/acme/demo/issues/7", "query": [], "body": {"state": "closed", "state_reason": "not_planned"}})
    );
    let (r, reqs) =
        MockUpstream::new().call(&UPDATE_ISSUE, json!({"owner": "acme", "repo": "demo", "issue_number": 7}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
}

fn run(id: u64, conclusion: Option<&str>, attempt: u64) -> Value {
    json!({"id": id, "name": "CI", "display_title": "Fix flaky test", "status": "completed", "conclusion": conclusion,
        "head_branch": "main", "head_sha": "a1b2c3d", "event": "push", "run_number": 412, "run_attempt": attempt,
        "actor": {"login": "octocat", "id": 1}, "created_at": "2026-01-03T10:00:00Z", "updated_at": "2026-01-03T10:05:00Z",
        "html_url": format!("https://github.com/acme/demo/actions/runs/{id}"),
        "repository": {"full_name": "acme/demo", "private": false}})
}

/// list_workflow_runs of one workflow by file name, with GitHub's filters; a retried run shows
/// its attempt; the Link header gives the cursor; runs of public repositories mark the result
/// public.
#[test]
fn list_workflow_runs_filters_one_workflow_and_pages() {
    let link = r#"<https://api.github.com/repositories/1/actions/workflows/ci.yml/runs?status=failure&per_page=2&page=3>; rel="next""#;
    let up = MockUpstream::new().json_with_headers(
        json!({"total_count": 57, "workflow_runs": [run(9001, Some("failure"), 2), run(9000, Some("failure"), 1)]}),
        &[("link", link)],
    );
    let (out, public) = up.ok_marked(
        &LIST_WORKFLOW_RUNS,
        json!({"owner": "acme", "repo": "demo", "workflow_id": "ci.yml", "branch": "main", "status": "failure",
               "event": "push", "actor": "octocat", "limit": 2, "cursor": "2:2"}),
    );
    assert!(public);
    assert_eq!(
        out,
        json!({"total_count": 57, "next_cursor": "3:2", "runs": [
            {"id": 9001, "workflow": "CI", "title": "Fix flaky test", "status": "completed", "conclusion": "failure", "branch": "main",
             "sha": "a1b2c3d", "event": "push", "run_number": 412, "attempt": 2, "actor": "octocat", "created_at": "2026-01-03T10:00:00Z",
             "updated_at": "2026-01-03T10:05:00Z", "url": "https://github.com/acme/demo/actions/runs/9001"},
            {"id": 9000, "workflow": "CI", "title": "Fix flaky test", "status": "completed", "conclusion": "failure", "branch": "main",
             "sha": "a1b2c3d", "event": "push", "run_number": 412, "actor": "octocat", "created_at": "2026-01-03T10:00:00Z",
             "updated_at": "2026-01-03T10:05:00Z", "url": "https://github.com/acme/demo/actions/runs/9000"}]})
    );
    let (_, reqs) = MockUpstream::new().json(json!({"total_count": 0, "workflow_runs": []})).ok(
        &LIST_WORKFLOW_RUNS,
        json!({"owner": "acme", "repo": "demo", "workflow_id": "ci.yml", "branch": "main", "status": "failure",
               "event": "push", "actor": "octocat", "limit": 2, "cursor": "2:2"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/repos/acme/demo/actions/workflows/ci.yml/runs", "body": null, "query": [
            ["branch", "main"], ["status", "failure"], ["event", "push"], ["actor", "octocat"], ["per_page", "2"], ["page", "2"]]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!({"total_count": 0, "workflow_runs": []}))
        .ok(&LIST_WORKFLOW_RUNS, json!({"owner": "acme", "repo": "demo", "status": "in_progress"}));
    assert_eq!(sent(&reqs[0])["path"], "/repos/acme/demo/actions/runs");
    assert_eq!(sent(&reqs[0])["query"], json!([["status", "in_progress"], ["per_page", "20"], ["page", "1"]]));
    assert_eq!(out, json!({"total_count": 0, "runs": []}));
}

/// run_workflow asks GitHub for the new run's details and returns its id; a server that does not
/// know `return_run_details` gets the plain dispatch, and the agent is told where to find the run.
#[test]
fn run_workflow_dispatches_and_falls_back_without_run_details() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"workflow_run_id": 9100, "run_url": "https://api.github.com/repos/acme/demo/actions/runs/9100",
                     "html_url": "https://github.com/acme/demo/actions/runs/9100"}))
        .ok(&RUN_WORKFLOW, json!({"owner": "acme", "repo": "demo", "workflow_id": "deploy.yml", "ref": "main", "inputs": {"environment": "staging"}}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/repos/acme/demo/actions/workflows/deploy.yml/dispatches", "query": [],
               "body": {"ref": "main", "inputs": {"environment": "staging"}, "return_run_details": true}})
    );
    assert_eq!(
        out,
        json!({"dispatched": true, "workflow_id": "deploy.yml", "ref": "main", "run_id": 9100,
               "run_url": "https://github.com/acme/demo/actions/runs/9100"})
    );

    let (out, reqs) = MockUpstream::new()
        .error(ToolError::Upstream {
            status: 422,
            message: "Invalid request: \"return_run_details\" is not a permitted key.".into(),
            retry_after: None,
        })
        .answer(204, Vec::new())
        .ok(&RUN_WORKFLOW, json!({"owner": "acme", "repo": "demo", "workflow_id": 1234, "ref": "v1.2.0"}));
    assert_eq!(reqs.len(), 2);
    assert_eq!(sent(&reqs[1])["path"], "/repos/acme/demo/actions/workflows/1234/dispatches");
    assert_eq!(sent(&reqs[1])["body"], json!({"ref": "v1.2.0"}));
    assert_eq!(out["dispatched"], true);
    assert_eq!(out["workflow_id"], "1234");
    assert!(out.get("run_id").is_none(), "{out}");
    assert!(out["note"].as_str().unwrap().contains("github_list_workflow_runs"), "{out}");

    let inputs: serde_json::Map<String, Value> = (0..26).map(|i| (format!("k{i}"), json!("v"))).collect();
    let (r, reqs) = MockUpstream::new().call(
        &RUN_WORKFLOW,
        json!({"owner": "acme", "repo": "demo", "workflow_id": "deploy.yml", "ref": "main", "inputs": inputs}),
    );
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}

/// get_issue with comments: the repository's visibility first, then the issue, then its
/// comments; comments beyond the page are counted.
#[test]
fn get_issue_with_comments_counts_the_rest() {
    let mut i = issue(7);
    i["body"] = json!("It crashes when saving a file with a long name.");
    i["comments"] = json!(3);
    i["closed_by"] = Value::Null;
    let comment = json!({"id": 501, "user": {"login": "hubot"}, "created_at": "2026-01-01T11:00:00Z",
        "body": "Reproduced on 1.2.", "html_url": "https://github.com/acme/demo/issues/7#issuecomment-501"});
    let up = MockUpstream::new()
        .json(json!({"full_name": "acme/demo", "private": false, "visibility": "public"}))
        .json(i)
        .json(json!([comment, {"id": 502, "user": {"login": "octocat"}, "created_at": "2026-01-01T12:00:00Z", "body": "Fix coming."}]));
    let (out, public) = up.ok_marked(
        &GET_ISSUE,
        json!({"owner": "acme", "repo": "demo", "issue_number": 7, "include_comments": true, "comments_limit": 2}),
    );
    assert!(public);
    assert_eq!(
        out,
        json!({"number": 7, "title": "Crash on save", "state": "open", "author": "octocat", "assignees": ["hubot"], "labels": ["bug"],
            "milestone": "v1.0", "comments": 3, "created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-02T10:00:00Z",
            "url": "https://github.com/acme/demo/issues/7", "body": "It crashes when saving a file with a long name.",
            "more_comments": 1, "comment_list": [
                {"id": 501, "author": "hubot", "created_at": "2026-01-01T11:00:00Z", "body": "Reproduced on 1.2.",
                 "url": "https://github.com/acme/demo/issues/7#issuecomment-501"},
                {"id": 502, "author": "octocat", "created_at": "2026-01-01T12:00:00Z", "body": "Fix coming."}]})
    );
    let (_, reqs) = MockUpstream::new().json(json!({"private": true})).json(issue(7)).json(json!([])).ok(
        &GET_ISSUE,
        json!({"owner": "acme", "repo": "demo", "issue_number": 7, "include_comments": true, "comments_limit": 2}),
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/repos/acme/demo/issues/7", "query": [], "body": null})
    );
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "GET", "path": "/repos/acme/demo/issues/7/comments", "query": [["per_page", "2"], ["page", "1"]], "body": null})
    );
}

/// A pull request read as an issue says so; a missing issue's 404 explains GitHub's hiding.
#[test]
fn get_issue_of_a_pull_request_and_a_missing_one() {
    let mut pr = issue(8);
    pr["pull_request"] = json!({"url": "https://api.github.com/repos/acme/demo/pulls/8", "merged_at": null});
    pr["locked"] = json!(true);
    pr["body"] = Value::Null;
    let (out, _) = MockUpstream::new()
        .json(json!({"private": true}))
        .json(pr)
        .ok(&GET_ISSUE, json!({"owner": "acme", "repo": "demo", "issue_number": 8}));
    assert_eq!(out["is_pull_request"], true);
    assert_eq!(out["locked"], true);
    assert!(out.get("body").is_none() && out.get("comment_list").is_none(), "{out}");

    let (r, _) = MockUpstream::new()
        .json(json!({"private": true}))
        .error(ToolError::Upstream { status: 404, message: "Not Found".into(), retry_after: None })
        .call(&GET_ISSUE, json!({"owner": "acme", "repo": "demo", "issue_number": 999}));
    assert!(message(&r.unwrap_err()).starts_with("Not Found (it does not exist, or this token cannot see it"));
}

fn pr(number: u64) -> Value {
    json!({"number": number, "title": "Add retry", "state": "open", "draft": true, "user": {"login": "alice"},
        "head": {"ref": "retry", "sha": "f00d", "repo": {"full_name": "alice/demo"}},
        "base": {"ref": "main", "repo": {"full_name": "acme/demo", "private": false, "visibility": "public"}},
        "labels": [{"name": "enhancement"}], "requested_reviewers": [{"login": "bob"}], "requested_teams": [{"slug": "core"}],
        "assignees": [], "created_at": "2026-01-04T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z", "closed_at": null,
        "merged_at": null, "html_url": format!("https://github.com/acme/demo/pull/{number}")})
}

/// list_prs: a fork's head as `user:branch`, GitHub's sort and direction, a fork PR names its
/// head repository, reviewers include teams.
#[test]
fn list_prs_sends_filters_and_shapes_fork_prs() {
    let link = r#"<https://api.github.com/repositories/1/pulls?state=open&per_page=1&page=2>; rel="next""#;
    let up = MockUpstream::new().json_with_headers(json!([pr(12)]), &[("link", link)]);
    let (out, public) = up.ok_marked(
        &LIST_PRS,
        json!({"owner": "acme", "repo": "demo", "head": "alice:retry", "base": "main", "sort": "updated", "direction": "asc", "limit": 1}),
    );
    assert!(public);
    assert_eq!(
        out,
        json!({"next_cursor": "2:1", "pull_requests": [{"number": 12, "title": "Add retry", "state": "open", "draft": true, "author": "alice",
            "head": "retry", "base": "main", "head_repo": "alice/demo", "labels": ["enhancement"], "requested_reviewers": ["bob", "team:core"],
            "created_at": "2026-01-04T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z", "url": "https://github.com/acme/demo/pull/12"}]})
    );
    let (_, reqs) = MockUpstream::new().json(json!([])).ok(
        &LIST_PRS,
        json!({"owner": "acme", "repo": "demo", "state": "all", "head": "alice:retry", "base": "main", "sort": "updated", "direction": "asc", "limit": 1}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/repos/acme/demo/pulls", "body": null, "query": [["state", "all"], ["head", "alice:retry"],
            ["base", "main"], ["sort", "updated"], ["direction", "asc"], ["per_page", "1"], ["page", "1"]]})
    );
}

/// get_pr with diff and files: the PR, its diff (GitHub's diff media type) and its files; a merged
/// PR's state is merged with its merge commit; files beyond the page are counted.
#[test]
fn get_pr_with_diff_and_files() {
    let mut p = pr(12);
    p["merged_at"] = json!("2026-01-06T10:00:00Z");
    p["state"] = json!("closed");
    p["draft"] = json!(false);
    p["body"] = json!("Retries failed uploads.");
    p["merged_by"] = json!({"login": "carol"});
    p["merge_commit_sha"] = json!("beef");
    p["mergeable"] = Value::Null;
    p["mergeable_state"] = json!("unknown");
    for (k, v) in [
        ("commits", 3),
        ("additions", 40),
        ("deletions", 2),
        ("changed_files", 3),
        ("comments", 1),
        ("review_comments", 4),
    ] {
        p[k] = json!(v);
    }
    let diff = "diff --git a/src/up.rs b/src/up.rs\n+retry();\n";
    let (out, reqs) = MockUpstream::new()
        .json(p)
        .reply_raw(diff.as_bytes().to_vec(), &[("content-type", "text/plain")])
        .json(json!([{"filename": "src/up.rs", "status": "modified", "additions": 38, "deletions": 2, "changes": 40},
                     {"filename": "src/retry.rs", "previous_filename": "src/again.rs", "status": "renamed", "additions": 2, "deletions": 0}]))
        .ok(&GET_PR, json!({"owner": "acme", "repo": "demo", "pull_number": 12, "include_diff": true, "include_files": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/repos/acme/demo/pulls/12", "query": [], "body": null})
    );
    assert_eq!(sent(&reqs[1])["path"], "/repos/acme/demo/pulls/12");
    assert_eq!(header(&reqs[1], "accept"), Some("application/vnd.github.diff"));
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "GET", "path": "/repos/acme/demo/pulls/12/files", "query": [["per_page", "100"], ["page", "1"]], "body": null})
    );
    assert_eq!(
        out,
        json!({"number": 12, "title": "Add retry", "state": "merged", "author": "alice", "head": "retry", "base": "main",
            "head_repo": "alice/demo", "labels": ["enhancement"], "requested_reviewers": ["bob", "team:core"],
            "created_at": "2026-01-04T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z", "merged_at": "2026-01-06T10:00:00Z",
            "url": "https://github.com/acme/demo/pull/12", "body": "Retries failed uploads.", "head_sha": "f00d",
            "mergeable_state": "unknown", "merged_by": "carol", "merge_commit_sha": "beef", "commits": 3, "additions": 40,
            "deletions": 2, "changed_files": 3, "comments": 1, "review_comments": 4, "diff": diff, "diff_truncated": false,
            "files": [{"path": "src/up.rs", "status": "modified", "additions": 38, "deletions": 2},
                      {"path": "src/retry.rs", "status": "renamed", "previous_path": "src/again.rs", "additions": 2, "deletions": 0}],
            "more_files": 1, "truncated": false})
    );
}

/// search_repos: the query with GitHub's sort spelling; each repository as an agent reads it;
/// an incomplete search says so; all-public results are marked public.
#[test]
fn search_repos_sends_the_query_and_shapes_repos() {
    let body = json!({"total_count": 1204, "incomplete_results": true, "items": [{"id": 1, "full_name": "acme/httpx",
        "description": "An HTTP client", "private": false, "visibility": "public", "default_branch": "main", "language": "Rust",
        "stargazers_count": 5300, "forks_count": 210, "open_issues_count": 31, "archived": false, "fork": false,
        "pushed_at": "2026-01-02T08:00:00Z", "html_url": "https://github.com/acme/httpx"}]});
    let link = r#"<https://api.github.com/search/repositories?q=http&per_page=1&page=2>; rel="next", <https://api.github.com/search/repositories?q=http&per_page=1&page=1000>; rel="last""#;
    let up = MockUpstream::new().json_with_headers(body, &[("link", link)]);
    let (out, public) = up.ok_marked(
        &SEARCH_REPOS,
        json!({"q": "http client language:rust stars:>500", "sort": "help-wanted-issues", "order": "asc", "limit": 1}),
    );
    assert!(public);
    assert_eq!(
        out,
        json!({"total_count": 1204, "incomplete_results": true, "next_cursor": "2:1", "repos": [{"full_name": "acme/httpx",
            "description": "An HTTP client", "visibility": "public", "default_branch": "main", "language": "Rust", "stars": 5300,
            "forks": 210, "open_issues": 31, "pushed_at": "2026-01-02T08:00:00Z", "url": "https://github.com/acme/httpx"}]})
    );
    let (_, reqs) = MockUpstream::new().json(json!({"total_count": 0, "incomplete_results": false, "items": []})).ok(
        &SEARCH_REPOS,
        json!({"q": "http client language:rust stars:>500", "sort": "help-wanted-issues", "order": "asc", "limit": 1}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search/repositories", "body": null, "query": [["q", "http client language:rust stars:>500"],
            ["sort", "help-wanted-issues"], ["order", "asc"], ["per_page", "1"], ["page", "1"]]})
    );
}

/// search_code: files with their repository; one private repository keeps the result private; a
/// cursor this tool did not issue is refused unsent.
#[test]
fn search_code_shapes_files_and_keeps_private_results_private() {
    let item = |repo: &str, private: bool| {
        json!({"name": "config.rs", "path": "src/config.rs", "sha": "abc123", "url": "https://api.github.com/x",
            "git_url": "https://api.github.com/y", "html_url": format!("https://github.com/{repo}/blob/main/src/config.rs"),
            "repository": {"full_name": repo, "private": private}, "score": 1.0})
    };
    let up = MockUpstream::new()
        .json(json!({"total_count": 2, "incomplete_results": false, "items": [item("acme/api", false), item("acme/secret", true)]}));
    let (out, public) =
        up.ok_marked(&SEARCH_CODE, json!({"q": "parse_config org:acme language:rust", "cursor": "3:10"}));
    assert!(!public);
    assert_eq!(
        out,
        json!({"total_count": 2, "files": [
            {"repo": "acme/api", "path": "src/config.rs", "name": "config.rs", "sha": "abc123", "url": "https://github.com/acme/api/blob/main/src/config.rs"},
            {"repo": "acme/secret", "path": "src/config.rs", "name": "config.rs", "sha": "abc123", "url": "https://github.com/acme/secret/blob/main/src/config.rs"}]})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!({"total_count": 0, "items": []}))
        .ok(&SEARCH_CODE, json!({"q": "parse_config org:acme language:rust", "cursor": "3:10"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search/code", "body": null,
               "query": [["q", "parse_config org:acme language:rust"], ["per_page", "10"], ["page", "3"]]})
    );
    let (r, reqs) = MockUpstream::new().call(&SEARCH_CODE, json!({"q": "x", "cursor": "page=2"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}
