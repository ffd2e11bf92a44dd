//! Linear tools on `MockUpstream`: the exact GraphQL request of reads and writes (one POST to
//! /graphql, agent text only in `variables`, never in the query), identifier lookups before
//! mutations, `errors[]` answered with HTTP 200 mapped to statuses, and the shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

const ISSUE_UUID: &str = "9cfb482a-81e3-4154-b6a3-7cf2bd1a0b60";

#[test]
fn list_teams_sends_one_graphql_query_and_pages() {
    let data = json!({"data": {"teams": {"nodes": [
        {"id": "t1", "key": "ENG", "name": "Engineering", "description": "", "visibility": "public"},
        {"id": "t2", "key": "SEC", "name": "Security", "description": "Private work", "visibility": "private"}],
        "pageInfo": {"hasNextPage": true, "endCursor": "c2"}}}});
    let (out, reqs) = MockUpstream::new().json(data).ok(&LIST_TEAMS, json!({"limit": 2}));
    let req = sent(&reqs[0]);
    assert_eq!(
        (req["method"].clone(), req["path"].clone(), req["query"].clone()),
        (json!("POST"), json!("/graphql"), json!([]))
    );
    assert!(req["body"]["query"].as_str().unwrap().starts_with("query Teams($first: Int, $after: String)"));
    assert_eq!(req["body"]["variables"], json!({"first": 2, "after": null}));
    assert_eq!(
        out,
        json!({"next_cursor": "c2", "teams": [{"id": "t1", "key": "ENG", "name": "Engineering"},
            {"id": "t2", "key": "SEC", "name": "Security", "description": "Private work", "visibility": "private"}]})
    );
}

/// create_comment looks the identifier up first, then sends the mutation; the agent's text
/// travels in variables only.
#[test]
fn create_comment_resolves_the_identifier_then_mutates() {
    let body = "Fixed in \" } mutation { issueDelete";
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"issue": {"id": ISSUE_UUID}}}))
        .json(json!({"data": {"commentCreate": {"success": true, "comment": {"id": "c9", "url": "https://linear.app/acme/issue/ENG-123#comment-c9",
            "createdAt": "2026-01-07T10:00:00.000Z", "issue": {"identifier": "ENG-123"}, "parent": null}}}}))
        .ok(&CREATE_COMMENT, json!({"issue_id": "ENG-123", "body": body}));
    assert_eq!(sent(&reqs[0])["body"]["variables"], json!({"id": "ENG-123"}));
    let mutation = sent(&reqs[1]);
    assert_eq!(mutation["body"]["variables"], json!({"input": {"issueId": ISSUE_UUID, "body": body}}));
    assert!(!mutation["body"]["query"].as_str().unwrap().contains("issueDelete"));
    assert_eq!(
        out,
        json!({"id": "c9", "issue": "ENG-123", "created": "2026-01-07T10:00:00.000Z", "url": "https://linear.app/acme/issue/ENG-123#comment-c9"})
    );
    // A UUID needs no lookup; success: false is an error, not a silent success.
    let (r, reqs) = MockUpstream::new()
        .json(json!({"data": {"commentCreate": {"success": false}}}))
        .call(&CREATE_COMMENT, json!({"issue_id": ISSUE_UUID, "body": "x"}));
    assert!(message(&r.unwrap_err()).contains("did not create the comment"));
    assert_eq!(reqs.len(), 1);
}

/// Linear answers errors with HTTP 200 and `errors[]`: they become statuses the engine maps.
#[test]
fn graphql_errors_become_statuses() {
    let (r, _) = MockUpstream::new()
        .json(json!({"data": null, "errors": [{"message": "Entity not found: Issue", "extensions": {"code": "INPUT_ERROR", "type": "invalid input"}}]}))
        .call(&GET_ISSUE, json!({"id": "ENG-999"}));
    let Err(ToolError::Upstream { status: 404, message, .. }) = r else { panic!("{r:?}") };
    assert!(message.contains("Entity not found") && message.contains("[INPUT_ERROR]"), "{message}");
    let (r, _) = MockUpstream::new()
        .json(json!({"errors": [{"message": "Rate limit exceeded", "extensions": {"code": "RATELIMITED"}}]}))
        .call(&LIST_TEAMS, json!({}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 429, .. })), "{r:?}");
    // An issue that is null (no such id) is a 404 naming it.
    let (r, _) = MockUpstream::new().json(json!({"data": {"issue": null}})).call(&GET_ISSUE, json!({"id": "ENG-1"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, ref message, .. }) if message.contains("ENG-1")));
}

fn node() -> Value {
    json!({"id": ISSUE_UUID, "identifier": "ENG-123", "title": "Login fails", "state": {"name": "Todo", "type": "unstarted"},
        "priorityLabel": "High", "assignee": {"name": "Ann Lee"}, "team": {"key": "ENG"}, "project": null, "cycle": {"number": 7},
        "labels": {"nodes": [{"name": "Bug"}]}, "estimate": 3, "dueDate": "2026-03-01", "completedAt": null,
        "updatedAt": "2026-01-05T10:00:00.000Z", "url": "https://linear.app/acme/issue/ENG-123/login-fails"})
}

const SHAPED: &str = r#"{"identifier": "ENG-123", "id": "9cfb482a-81e3-4154-b6a3-7cf2bd1a0b60", "title": "Login fails",
    "state": "Todo", "state_type": "unstarted", "priority": "High", "assignee": "Ann Lee", "team": "ENG", "cycle": 7,
    "labels": ["Bug"], "estimate": 3, "due_date": "2026-03-01", "updated": "2026-01-05T10:00:00.000Z",
    "url": "https://linear.app/acme/issue/ENG-123/login-fails"}"#;

/// search_issues: the team key is looked up first; the term travels as a variable.
#[test]
fn search_issues_resolves_the_team_and_pages() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"teams": {"nodes": [{"id": "t1", "key": "ENG"}]}}}))
        .json(json!({"data": {"searchIssues": {"nodes": [node()], "totalCount": 4, "pageInfo": {"hasNextPage": true, "endCursor": "c9"}}}}))
        .ok(&SEARCH_ISSUES, json!({"term": "login", "team_id": "eng", "limit": 1}));
    assert_eq!(sent(&reqs[0])["body"]["variables"], json!({"key": "eng"}));
    assert_eq!(
        sent(&reqs[1])["body"]["variables"],
        json!({"term": "login", "first": 1, "after": null, "teamId": "t1", "includeComments": false})
    );
    let shaped: Value = serde_json::from_str(SHAPED).unwrap();
    assert_eq!(out, json!({"issues": [shaped], "total": 4, "next_cursor": "c9"}));
    // A team key nobody has is an argument error naming it.
    let (r, _) = MockUpstream::new()
        .json(json!({"data": {"teams": {"nodes": []}}}))
        .call(&SEARCH_ISSUES, json!({"term": "x", "team_id": "NOPE"}));
    assert!(message(&r.unwrap_err()).contains("no Linear team with key 'NOPE'"));
}

/// create_issue: team key, "me" and a status name are turned into ids before the mutation.
#[test]
fn create_issue_resolves_names_to_ids() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"teams": {"nodes": [{"id": "t1", "key": "ENG"}]}}}))
        .json(json!({"data": {"viewer": {"id": "u1"}}}))
        .json(json!({"data": {"team": {"states": {"nodes": [{"id": "s1", "name": "Backlog", "type": "backlog"}, {"id": "s2", "name": "Todo", "type": "unstarted"}]}}}}))
        .json(json!({"data": {"issueCreate": {"success": true, "issue": node()}}}))
        .ok(&CREATE_ISSUE, json!({"team_id": "ENG", "title": "Login fails", "assignee_id": "me", "state_id": "todo", "priority": 2, "due_date": "2026-03-01"}));
    assert_eq!(reqs.len(), 4);
    assert_eq!(sent(&reqs[2])["body"]["variables"], json!({"id": "t1"}));
    assert_eq!(
        sent(&reqs[3])["body"]["variables"],
        json!({"input": {"teamId": "t1", "title": "Login fails", "assigneeId": "u1", "priority": 2, "stateId": "s2", "dueDate": "2026-03-01"}})
    );
    assert_eq!(out, serde_json::from_str::<Value>(SHAPED).unwrap());
    // A status the team does not have lists the ones it has; a bad date sends nothing.
    let (r, _) = MockUpstream::new()
        .json(json!({"data": {"team": {"states": {"nodes": [{"id": "s1", "name": "Backlog"}]}}}}))
        .call(&CREATE_ISSUE, json!({"team_id": ISSUE_UUID, "title": "x", "state_id": "Shipped"}));
    assert!(message(&r.unwrap_err()).contains("its statuses are: Backlog"));
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_ISSUE, json!({"team_id": "ENG", "title": "x", "due_date": "soon"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
    assert!(reqs.is_empty());
}
