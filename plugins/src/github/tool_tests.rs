//! GitHub issue tools on `MockUpstream` (pull requests have theirs in `pulls.rs`): the exact
//! request of reads and writes (owner and repo as encoded segments, paging, GitHub's headers) and
//! the issues as an agent reads them; a result is marked public only when GitHub says the
//! repository is.

use serde_json::json;

use super::issues::{CREATE_COMMENT, CREATE_ISSUE, LIST_ISSUES};
use super::*;
use crate::mock::{MockUpstream, header, sent};

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
