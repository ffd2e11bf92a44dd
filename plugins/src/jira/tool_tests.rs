//! Jira tools on `MockUpstream`: the exact request of reads and writes (JQL search parameters,
//! issue keys as one encoded segment, Markdown sent as ADF, transitions by status name) and the
//! shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn issue() -> Value {
    json!({"id": "10002", "key": "ENG-7", "self": "https://acme.atlassian.net/rest/api/3/issue/10002", "fields": {
        "summary": "Login fails", "status": {"name": "In Progress", "statusCategory": {"name": "In Progress"}},
        "assignee": {"accountId": "5b10", "displayName": "Ann Lee"}, "priority": {"name": "High"},
        "issuetype": {"name": "Bug"}, "updated": "2026-01-05T10:00:00.000+0000", "customfield_10016": 5}})
}

#[test]
fn search_issues_sends_the_jql_and_pages_with_the_token() {
    let reply = json!({"issues": [issue()], "nextPageToken": "tok2", "isLast": false});
    let (out, reqs) = MockUpstream::new()
        .json(reply)
        .ok(&SEARCH_ISSUES, json!({"jql": "project = ENG", "fields": ["customfield_10016", "status"], "limit": 10}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/search/jql", "body": null, "query": [["jql", "project = ENG"],
            ["maxResults", "10"], ["fields", "summary,status,assignee,priority,issuetype,updated,customfield_10016"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "tok2", "issues": [{"key": "ENG-7", "id": "10002", "summary": "Login fails", "type": "Bug",
            "status": "In Progress", "status_category": "In Progress", "priority": "High", "assignee": "Ann Lee",
            "updated": "2026-01-05T10:00:00.000+0000", "url": "https://acme.atlassian.net/browse/ENG-7",
            "fields": {"customfield_10016": 5, "status": "In Progress"}}]})
    );
    // The last page: no cursor; the token goes back as nextPageToken.
    let (out, reqs) = MockUpstream::new()
        .json(json!({"issues": [], "isLast": true}))
        .ok(&SEARCH_ISSUES, json!({"jql": "project = ENG", "cursor": "tok2"}));
    assert_eq!(sent(&reqs[0])["query"][3], json!(["nextPageToken", "tok2"]));
    assert_eq!(out, json!({"issues": []}));
}

/// transition_issue finds the transition by its target status, then posts it with a resolution
/// and the comment as ADF; an unknown status lists the ones available and posts nothing.
#[test]
fn transition_issue_moves_by_status_name() {
    let transitions = json!({"transitions": [
        {"id": "21", "name": "Start Progress", "to": {"name": "In Progress", "statusCategory": {"name": "In Progress"}}},
        {"id": "31", "name": "Finish", "to": {"name": "Done", "statusCategory": {"name": "Done"}}}]});
    let (out, reqs) = MockUpstream::new()
        .with_field("site", "acme.atlassian.net")
        .json(transitions.clone())
        .answer(204, Vec::new())
        .ok(
            &TRANSITION_ISSUE,
            json!({"issue_key": "ENG-7", "transition": "done", "resolution": "Fixed", "comment": "Shipped in **2.1**"}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/issue/ENG-7/transitions", "query": [], "body": null})
    );
    let post = sent(&reqs[1]);
    assert_eq!(
        (post["method"].clone(), post["path"].clone()),
        (json!("POST"), json!("/rest/api/3/issue/ENG-7/transitions"))
    );
    assert_eq!(post["body"]["transition"], json!({"id": "31"}));
    assert_eq!(post["body"]["fields"], json!({"resolution": {"name": "Fixed"}}));
    assert_eq!(post["body"]["update"]["comment"][0]["add"]["body"], adf::from_markdown("Shipped in **2.1**"));
    assert_eq!(post["body"]["update"]["comment"][0]["add"]["body"]["type"], "doc");
    assert_eq!(
        out,
        json!({"key": "ENG-7", "transition": {"id": "31", "name": "Finish"}, "status": "Done", "url": "https://acme.atlassian.net/browse/ENG-7"})
    );
    let (r, reqs) = MockUpstream::new()
        .json(transitions)
        .call(&TRANSITION_ISSUE, json!({"issue_key": "ENG-7", "transition": "Archived"}));
    let m = message(&r.unwrap_err());
    assert!(m.contains("no transition 'Archived'") && m.contains("Finish → Done (id 31)"), "{m}");
    assert_eq!(reqs.len(), 1);
}

/// An issue key is one segment; a transitions answer of the wrong type lists none, no panic.
#[test]
fn list_transitions_encodes_the_key_and_survives_an_odd_answer() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"transitions": "x"}))
        .ok(&LIST_TRANSITIONS, json!({"issue_key": "../../myself"}));
    assert_eq!(reqs[0].path, "/rest/api/3/issue/..%2F..%2Fmyself/transitions");
    assert_eq!(out, json!({"issue_key": "../../myself", "transitions": []}));
}

#[test]
fn create_comment_sends_adf_and_visibility() {
    let created = json!({"id": "10050", "self": "https://acme.atlassian.net/rest/api/3/issue/10002/comment/10050",
        "author": {"accountId": "5b10", "displayName": "Ann Lee"}, "body": {"type": "doc", "version": 1, "content": []},
        "created": "2026-01-06T10:00:00.000+0000", "updated": "2026-01-06T10:00:00.000+0000"});
    let (out, reqs) = MockUpstream::new()
        .json(created)
        .ok(&CREATE_COMMENT, json!({"issue_key": "ENG-7", "body": "Looks *good*", "visible_to_role": "Developers"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/rest/api/3/issue/ENG-7/comment", "query": [],
               "body": {"body": adf::from_markdown("Looks *good*"), "visibility": {"type": "role", "value": "Developers"}}})
    );
    assert_eq!((out["id"].clone(), out["issue_key"].clone()), (json!("10050"), json!("ENG-7")));
    assert!(out.get("body").is_none());
    let (r, reqs) = MockUpstream::new().call(
        &CREATE_COMMENT,
        json!({"issue_key": "ENG-7", "body": "x", "visible_to_role": "a", "visible_to_group": "b"}),
    );
    assert!(message(&r.unwrap_err()).contains("not both"));
    assert!(reqs.is_empty());
}

/// create_issue: the description goes as ADF, people and names as Jira's objects; the answer's
/// `self` link gives the browse URL.
#[test]
fn create_issue_sends_fields_in_jiras_shape() {
    let created = json!({"id": "10010", "key": "ENG-8", "self": "https://acme.atlassian.net/rest/api/3/issue/10010"});
    let (out, reqs) = MockUpstream::new().json(created).ok(
        &CREATE_ISSUE,
        json!({"project_key": " ENG ", "summary": "Login fails", "issue_type": "Bug", "description": "Steps:\n\n1. Open",
               "assignee_account_id": "5b10", "priority": "High", "labels": ["auth"], "due_date": "2026-03-01", "components": ["Web"],
               "fields": {"customfield_10016": 5}}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/rest/api/3/issue", "query": [], "body": {"fields": {"customfield_10016": 5,
            "project": {"key": "ENG"}, "summary": "Login fails", "issuetype": {"name": "Bug"},
            "description": adf::from_markdown("Steps:\n\n1. Open"), "assignee": {"accountId": "5b10"}, "priority": {"name": "High"},
            "labels": ["auth"], "duedate": "2026-03-01", "components": [{"name": "Web"}]}}})
    );
    assert_eq!(out, json!({"key": "ENG-8", "id": "10010", "url": "https://acme.atlassian.net/browse/ENG-8"}));
}

/// update_issue: fields and label operations in one PUT, the assignee in its own; an empty
/// due date clears it; both unassign and an assignee is refused unsent.
#[test]
fn update_issue_puts_fields_then_the_assignee() {
    let (out, reqs) = MockUpstream::new()
        .with_field("site", "https://acme.atlassian.net/")
        .answer(204, Vec::new())
        .answer(204, Vec::new())
        .ok(&UPDATE_ISSUE, json!({"issue_key": "ENG-7", "summary": "Login fails on Safari", "due_date": "", "labels_add": ["safari"], "unassign": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/rest/api/3/issue/ENG-7", "query": [], "body": {
            "fields": {"summary": "Login fails on Safari", "duedate": null}, "update": {"labels": [{"add": "safari"}]}}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PUT", "path": "/rest/api/3/issue/ENG-7/assignee", "query": [], "body": {"accountId": null}})
    );
    assert_eq!(
        out,
        json!({"key": "ENG-7", "updated": ["summary", "due_date", "labels", "unassigned"], "url": "https://acme.atlassian.net/browse/ENG-7"})
    );
    for (args, why) in [
        (json!({"issue_key": "ENG-7", "unassign": true, "assignee_account_id": "5b10"}), "not both"),
        (json!({"issue_key": "ENG-7"}), "nothing to change"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_ISSUE, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}
