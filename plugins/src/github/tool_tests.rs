//! GitHub issue and repository tools on `MockUpstream` (pull requests have theirs in `pulls.rs`): the exact
//! request of reads and writes (owner and repo as encoded segments, paging, GitHub's headers) and
//! the issues as an agent reads them; a result is marked public only when GitHub says the
//! repository is.

use serde_json::json;

use super::issues::{CREATE_COMMENT, CREATE_ISSUE, LIST_ISSUES, SEARCH_ISSUES, UPDATE_ISSUE};
use super::pulls::{CREATE_PR, CREATE_PR_REVIEW, MERGE_PR};
use super::repos::{CREATE_BRANCH, GET_FILE, GET_REPO, LIST_REPOS, UPDATE_FILE};
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
