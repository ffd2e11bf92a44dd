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

fn full_node() -> Value {
    json!({"id": ISSUE_UUID, "identifier": "ENG-123", "title": "Login fails", "priority": 2, "priorityLabel": "High", "estimate": 3,
        "dueDate": "2026-02-01", "url": "https://linear.app/acme/issue/ENG-123/login-fails", "createdAt": "2026-01-05T10:00:00.000Z",
        "updatedAt": "2026-01-06T10:00:00.000Z", "completedAt": null, "state": {"name": "In Progress", "type": "started"},
        "assignee": {"name": "Ann Lee", "email": "ann@acme.example"}, "team": {"key": "ENG"}, "project": {"name": "Auth"},
        "cycle": {"number": 12}, "labels": {"nodes": [{"name": "Bug"}]}})
}

const SHAPED_NODE: &str = r#"{"identifier": "ENG-123", "id": "9cfb482a-81e3-4154-b6a3-7cf2bd1a0b60", "title": "Login fails",
    "state": "In Progress", "state_type": "started", "priority": "High", "assignee": "Ann Lee", "team": "ENG", "project": "Auth",
    "cycle": 12, "labels": ["Bug"], "estimate": 3, "due_date": "2026-02-01", "updated": "2026-01-06T10:00:00.000Z",
    "url": "https://linear.app/acme/issue/ENG-123/login-fails"}"#;

/// list_issues turns the agent's words into Linear's IssueFilter: team by key, "me", a status
/// type, a project name, a label and the current cycle; the page's end cursor comes back.
#[test]
fn list_issues_builds_the_filter_and_pages() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"issues": {"nodes": [full_node()], "pageInfo": {"hasNextPage": true, "endCursor": "c25"}}}}))
        .ok(
            &LIST_ISSUES,
            json!({"team": "eng", "assignee": "me", "state": "Started", "project": "auth", "label": "Bug", "cycle": "current",
                   "order_by": "created", "limit": 10, "cursor": "c15"}),
        );
    let req = sent(&reqs[0]);
    assert_eq!((req["method"].clone(), req["path"].clone()), (json!("POST"), json!("/graphql")));
    assert!(req["body"]["query"].as_str().unwrap().starts_with("query Issues($filter: IssueFilter"));
    assert_eq!(
        req["body"]["variables"],
        json!({"filter": {"team": {"key": {"eqIgnoreCase": "eng"}}, "assignee": {"isMe": {"eq": true}}, "state": {"type": {"eq": "started"}},
            "project": {"name": {"containsIgnoreCase": "auth"}}, "labels": {"some": {"name": {"eqIgnoreCase": "Bug"}}},
            "cycle": {"isActive": {"eq": true}}}, "first": 10, "after": "c15", "orderBy": "createdAt"})
    );
    let shaped: Value = serde_json::from_str(SHAPED_NODE).unwrap();
    assert_eq!(out, json!({"issues": [shaped], "next_cursor": "c25"}));
}

/// Open-only by default leaves out done and canceled; a status name matches by name; no filter
/// sends null; conflicting or unknown arguments are refused unsent.
#[test]
fn list_issues_open_only_and_refusals() {
    let empty = || json!({"data": {"issues": {"nodes": [], "pageInfo": {"hasNextPage": false, "endCursor": null}}}});
    let (out, reqs) = MockUpstream::new()
        .json(empty())
        .ok(&LIST_ISSUES, json!({"open_only": true, "assignee": "ann@acme.example", "cycle": "7"}));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"]["filter"],
        json!({"assignee": {"email": {"eqIgnoreCase": "ann@acme.example"}}, "state": {"type": {"nin": ["completed", "canceled"]}},
               "cycle": {"number": {"eq": 7}}})
    );
    assert_eq!(out, json!({"issues": []}));
    let (_, reqs) = MockUpstream::new().json(empty()).ok(&LIST_ISSUES, json!({"state": "In Review"}));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"]["filter"],
        json!({"state": {"name": {"eqIgnoreCase": "In Review"}}})
    );
    let (_, reqs) = MockUpstream::new().json(empty()).ok(&LIST_ISSUES, json!({}));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"],
        json!({"filter": null, "first": 25, "after": null, "orderBy": "updatedAt"})
    );
    for args in [json!({"open_only": true, "state": "Done"}), json!({"cycle": "someday"})] {
        let (r, reqs) = MockUpstream::new().call(&LIST_ISSUES, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}

/// update_issue with a status name: the issue's team states are looked up and the name matched
/// to its id, "me" becomes the viewer's id, then one mutation with the identifier.
#[test]
fn update_issue_looks_up_the_status_and_me() {
    let states = json!({"data": {"issue": {"team": {"states": {"nodes": [
        {"id": "s-todo", "name": "Todo", "type": "unstarted"}, {"id": "s-done", "name": "Done", "type": "completed"}]}}}}});
    let mut done = full_node();
    done["state"] = json!({"name": "Done", "type": "completed"});
    done["completedAt"] = json!("2026-01-07T10:00:00.000Z");
    let (out, reqs) = MockUpstream::new()
        .json(states)
        .json(json!({"data": {"viewer": {"id": "u-me"}}}))
        .json(json!({"data": {"issueUpdate": {"success": true, "issue": done}}}))
        .ok(&UPDATE_ISSUE, json!({"id": " ENG-123 ", "state_id": "done", "assignee_id": "me", "priority": 1, "add_label_ids": ["l-bug"]}));
    assert_eq!(sent(&reqs[0])["body"]["variables"], json!({"id": "ENG-123"}));
    assert!(sent(&reqs[0])["body"]["query"].as_str().unwrap().starts_with("query IssueTeamStates"));
    assert!(sent(&reqs[1])["body"]["query"].as_str().unwrap().starts_with("query ViewerId"));
    assert_eq!(
        sent(&reqs[2])["body"]["variables"],
        json!({"id": "ENG-123", "input": {"stateId": "s-done", "assigneeId": "u-me", "priority": 1, "addedLabelIds": ["l-bug"]}})
    );
    assert!(sent(&reqs[2])["body"]["query"].as_str().unwrap().starts_with("mutation IssueUpdate"));
    assert_eq!(out["state"], "Done");
    assert_eq!(out["state_type"], "completed");
    assert_eq!(out["completed"], "2026-01-07T10:00:00.000Z");
    assert_eq!(out["identifier"], "ENG-123");
}

/// An unknown status names the team's statuses and nothing is changed; unassign sends a null
/// assignee; nothing to change is refused unsent; success: false is an error.
#[test]
fn update_issue_unknown_status_unassign_and_failures() {
    let states = json!({"data": {"issue": {"team": {"states": {"nodes": [{"id": "s-todo", "name": "Todo"}, {"id": "s-done", "name": "Done"}]}}}}});
    let (r, reqs) =
        MockUpstream::new().json(states).call(&UPDATE_ISSUE, json!({"id": "ENG-123", "state_id": "Shipped"}));
    assert_eq!(reqs.len(), 1);
    assert_eq!(message(&r.unwrap_err()), "no status 'Shipped' in this team; its statuses are: Todo, Done");

    let (r, reqs) = MockUpstream::new()
        .json(json!({"data": {"issueUpdate": {"success": false}}}))
        .call(&UPDATE_ISSUE, json!({"id": "ENG-123", "unassign": true}));
    assert_eq!(sent(&reqs[0])["body"]["variables"], json!({"id": "ENG-123", "input": {"assigneeId": null}}));
    assert!(message(&r.unwrap_err()).contains("did not update the issue"));

    for args in [json!({"id": "ENG-123"}), json!({"id": "ENG-123", "unassign": true, "assignee_id": "me"})] {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_ISSUE, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}

/// list_projects: name, status type and team filters; progress as a percentage; a long
/// description is cut.
#[test]
fn list_projects_filters_and_shapes_progress() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"projects": {"nodes": [{"id": "p1", "name": "Auth revamp", "description": "x".repeat(400),
            "url": "https://linear.app/acme/project/auth-revamp", "progress": 0.426, "startDate": "2026-01-01", "targetDate": "2026-03-31",
            "status": {"name": "In Progress", "type": "started"}, "lead": {"name": "Ann Lee"}, "teams": {"nodes": [{"key": "ENG"}, {"key": "SEC"}]}},
            {"id": "p2", "name": "Auth docs", "description": "", "progress": 0, "status": {"name": "In Progress"}, "lead": null, "teams": {"nodes": []}}],
            "pageInfo": {"hasNextPage": false, "endCursor": "e"}}}}))
        .ok(&LIST_PROJECTS, json!({"name": "auth", "status": "started", "team": "ENG", "limit": 2}));
    assert!(sent(&reqs[0])["body"]["query"].as_str().unwrap().starts_with("query Projects("));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"],
        json!({"filter": {"name": {"containsIgnoreCase": "auth"}, "status": {"type": {"eq": "started"}},
            "accessibleTeams": {"some": {"key": {"eqIgnoreCase": "ENG"}}}}, "first": 2, "after": null})
    );
    assert_eq!(
        out["projects"][1],
        json!({"id": "p2", "name": "Auth docs", "status": "In Progress", "progress_percent": 0})
    );
    let first = &out["projects"][0];
    assert_eq!(first["progress_percent"], 43);
    assert_eq!(first["teams"], json!(["ENG", "SEC"]));
    assert_eq!(first["lead"], "Ann Lee");
    assert_eq!((first["start_date"].clone(), first["target_date"].clone()), (json!("2026-01-01"), json!("2026-03-31")));
    let desc = first["description"].as_str().unwrap();
    assert!(desc.len() < 400 && desc.starts_with("xxx"), "{desc}");
    assert!(out.get("next_cursor").is_none(), "{out}");
}

/// list_workflow_states: a team by key, states ordered by team then position (Linear's column
/// order), the cursor when more exist.
#[test]
fn list_workflow_states_orders_by_team_and_position() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": {"workflowStates": {"nodes": [
            {"id": "s3", "name": "Done", "type": "completed", "color": "#5e6ad2", "position": 3, "team": {"key": "ENG"}},
            {"id": "s1", "name": "Backlog", "type": "backlog", "color": "#bec2c8", "position": 0, "team": {"key": "ENG"}},
            {"id": "s2", "name": "In Progress", "type": "started", "color": "#f2c94c", "position": 1.5, "team": {"key": "ENG"}}],
            "pageInfo": {"hasNextPage": true, "endCursor": "w3"}}}}))
        .ok(&LIST_WORKFLOW_STATES, json!({"team_id": " ENG ", "limit": 3}));
    assert!(sent(&reqs[0])["body"]["query"].as_str().unwrap().starts_with("query WorkflowStates("));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"],
        json!({"filter": {"team": {"key": {"eqIgnoreCase": "ENG"}}}, "first": 3, "after": null})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "w3", "states": [{"id": "s1", "name": "Backlog", "type": "backlog", "team": "ENG"},
            {"id": "s2", "name": "In Progress", "type": "started", "team": "ENG"},
            {"id": "s3", "name": "Done", "type": "completed", "team": "ENG"}]})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!({"data": {"workflowStates": {"nodes": [], "pageInfo": {"hasNextPage": false}}}}))
        .ok(&LIST_WORKFLOW_STATES, json!({"team_id": ISSUE_UUID, "cursor": "w3"}));
    assert_eq!(
        sent(&reqs[0])["body"]["variables"],
        json!({"filter": {"team": {"id": {"eq": ISSUE_UUID}}}, "first": 100, "after": "w3"})
    );
}
