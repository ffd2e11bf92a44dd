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
