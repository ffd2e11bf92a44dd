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

fn adf_text(text: &str) -> Value {
    json!({"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [{"type": "text", "text": text}]}]})
}

/// get_issue asks for the standard fields plus comments, an extra field and the transitions;
/// the description comes back as Markdown, links in their own direction, sub-tasks and the
/// extra field in a simple form.
#[test]
fn get_issue_with_comments_transitions_and_an_extra_field() {
    let mut i = issue();
    let f = &mut i["fields"];
    f["description"] = adf_text("Steps to reproduce.");
    f["reporter"] = json!({"accountId": "5b11", "displayName": "Bob Ray"});
    f["project"] = json!({"key": "ENG", "name": "Engineering"});
    f["labels"] = json!(["login"]);
    f["components"] = json!([{"name": "Auth"}]);
    f["created"] = json!("2026-01-04T10:00:00.000+0000");
    f["parent"] = json!({"key": "ENG-1", "fields": {"summary": "Auth epic"}});
    f["subtasks"] = json!([{"key": "ENG-8", "fields": {"summary": "Add test", "status": {"name": "To Do"}}}]);
    f["issuelinks"] = json!([{"type": {"name": "Blocks", "inward": "is blocked by", "outward": "blocks"},
        "inwardIssue": {"key": "ENG-3", "fields": {"summary": "SSO setup", "status": {"name": "Done"}}}}]);
    f["customfield_10020"] = json!([{"id": 4, "name": "Sprint 12", "state": "active"}]);
    f["comment"] = json!({"total": 1, "comments": [{"id": "100", "author": {"displayName": "Bob Ray"}, "body": adf_text("Seen on Safari."),
        "created": "2026-01-05T11:00:00.000+0000", "updated": "2026-01-05T11:00:00.000+0000"}]});
    i["transitions"] =
        json!([{"id": "31", "name": "Done", "to": {"name": "Done", "statusCategory": {"name": "Done"}}}]);
    let (out, reqs) = MockUpstream::new().json(i).ok(
        &GET_ISSUE,
        json!({"issue_key": " ENG-7 ", "fields": ["customfield_10020", "labels"], "include_comments": true, "include_transitions": true}),
    );
    let mut fields: Vec<&str> = ISSUE_FIELDS.to_vec();
    fields.extend(["comment", "customfield_10020"]);
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/issue/ENG-7", "body": null,
               "query": [["fields", fields.join(",")], ["expand", "transitions"]]})
    );
    assert_eq!(
        out,
        json!({"key": "ENG-7", "id": "10002", "url": "https://acme.atlassian.net/browse/ENG-7", "summary": "Login fails", "type": "Bug",
            "status": "In Progress", "status_category": "In Progress", "priority": "High",
            "assignee": {"name": "Ann Lee", "account_id": "5b10"}, "reporter": {"name": "Bob Ray", "account_id": "5b11"},
            "project": "ENG", "parent": {"key": "ENG-1", "summary": "Auth epic"}, "labels": ["login"], "components": ["Auth"],
            "created": "2026-01-04T10:00:00.000+0000", "updated": "2026-01-05T10:00:00.000+0000", "description": "Steps to reproduce.",
            "subtasks": [{"key": "ENG-8", "summary": "Add test", "status": "To Do"}],
            "links": [{"relation": "is blocked by", "key": "ENG-3", "summary": "SSO setup", "status": "Done"}],
            "comments": [{"id": "100", "author": "Bob Ray", "created": "2026-01-05T11:00:00.000+0000", "body": "Seen on Safari.",
                          "url": "https://acme.atlassian.net/browse/ENG-7?focusedCommentId=100"}],
            "comment_count": 1,
            "transitions": [{"id": "31", "name": "Done", "to_status": "Done", "to_category": "Done"}],
            "fields": {"customfield_10020": ["Sprint 12"], "labels": ["login"]}})
    );
}

/// An issue key is one path segment, whatever it contains.
#[test]
fn get_issue_keeps_the_key_in_one_segment() {
    let (_, reqs) = MockUpstream::new().json(issue()).ok(&GET_ISSUE, json!({"issue_key": "ENG-7/../../myself"}));
    assert_eq!(sent(&reqs[0])["path"], "/rest/api/3/issue/ENG-7%2F..%2F..%2Fmyself");
    assert_eq!(sent(&reqs[0])["query"], json!([["fields", ISSUE_FIELDS.join(",")]]));
}

/// list_comments: Jira's offset paging as the cursor, newest first on request; an edited comment
/// shows when; restricted visibility is named.
#[test]
fn list_comments_pages_by_offset() {
    let c = |id: &str, updated: &str| {
        json!({"self": format!("https://acme.atlassian.net/rest/api/3/issue/10002/comment/{id}"), "id": id,
            "author": {"accountId": "5b11", "displayName": "Bob Ray"}, "body": adf_text("Looking into it."),
            "created": "2026-01-05T11:00:00.000+0000", "updated": updated})
    };
    let mut restricted = c("102", "2026-01-06T09:00:00.000+0000");
    restricted["visibility"] = json!({"type": "role", "value": "Developers"});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"startAt": 2, "maxResults": 2, "total": 5, "comments": [c("101", "2026-01-05T11:00:00.000+0000"), restricted]}))
        .ok(&LIST_COMMENTS, json!({"issue_key": "ENG-7", "limit": 2, "cursor": "2", "order_by": "newest_first"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/issue/ENG-7/comment", "body": null,
               "query": [["startAt", "2"], ["maxResults", "2"], ["orderBy", "-created"]]})
    );
    assert_eq!(
        out,
        json!({"issue_key": "ENG-7", "total": 5, "next_cursor": "4", "comments": [
            {"id": "101", "author": "Bob Ray", "created": "2026-01-05T11:00:00.000+0000", "body": "Looking into it.",
             "url": "https://acme.atlassian.net/browse/ENG-7?focusedCommentId=101"},
            {"id": "102", "author": "Bob Ray", "created": "2026-01-05T11:00:00.000+0000", "updated": "2026-01-06T09:00:00.000+0000",
             "body": "Looking into it.", "visibility": "Developers", "url": "https://acme.atlassian.net/browse/ENG-7?focusedCommentId=102"}]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!({"startAt": 0, "total": 0, "comments": []}))
        .ok(&LIST_COMMENTS, json!({"issue_key": "ENG-7"}));
    assert_eq!(sent(&reqs[0])["query"], json!([["startAt", "0"], ["maxResults", "25"], ["orderBy", "created"]]));
    assert_eq!(out, json!({"issue_key": "ENG-7", "total": 0, "comments": []}));
    let (r, reqs) = MockUpstream::new().call(&LIST_COMMENTS, json!({"issue_key": "ENG-7", "cursor": "tok"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}

/// list_projects: the filter and offset paging; Jira's styles in the words the UI uses.
#[test]
fn list_projects_names_the_style_and_pages() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"startAt": 0, "maxResults": 2, "total": 3, "isLast": false, "values": [
            {"id": "10000", "key": "ENG", "name": "Engineering", "projectTypeKey": "software", "style": "classic",
             "projectCategory": {"id": "1", "name": "Product"}},
            {"id": "10001", "key": "OPS", "name": "Operations", "projectTypeKey": "service_desk", "style": "next-gen"}]}))
        .ok(&LIST_PROJECTS, json!({"query": "e", "limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/project/search", "body": null,
               "query": [["query", "e"], ["startAt", "0"], ["maxResults", "2"]]})
    );
    assert_eq!(
        out,
        json!({"total": 3, "next_cursor": "2", "projects": [
            {"key": "ENG", "id": "10000", "name": "Engineering", "type": "software", "style": "company-managed", "category": "Product"},
            {"key": "OPS", "id": "10001", "name": "Operations", "type": "service_desk", "style": "team-managed"}]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!({"startAt": 2, "total": 3, "isLast": true, "values": [{"id": "10002", "key": "HR", "name": "People"}]}))
        .ok(&LIST_PROJECTS, json!({"cursor": "2"}));
    assert_eq!(sent(&reqs[0])["query"], json!([["startAt", "2"], ["maxResults", "50"]]));
    assert_eq!(out, json!({"total": 3, "projects": [{"key": "HR", "id": "10002", "name": "People"}]}));
}

/// search_users: the account id an agent needs, apps flagged by their account type.
#[test]
fn search_users_returns_account_ids() {
    let (out, reqs) = MockUpstream::new()
        .json(json!([
            {"self": "https://acme.atlassian.net/rest/api/3/user?accountId=5b10", "accountId": "5b10", "accountType": "atlassian",
             "emailAddress": "ann@acme.example", "displayName": "Ann Lee", "active": true},
            {"accountId": "5c20", "accountType": "app", "displayName": "Automation for Jira", "active": true}]))
        .ok(&SEARCH_USERS, json!({"query": "ann", "limit": 5}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/3/user/search", "body": null, "query": [["query", "ann"], ["maxResults", "5"]]})
    );
    assert_eq!(
        out,
        json!({"users": [{"account_id": "5b10", "name": "Ann Lee", "email": "ann@acme.example", "active": true},
                         {"account_id": "5c20", "name": "Automation for Jira", "active": true, "account_type": "app"}]})
    );
}

/// list_sprints by project key: the project's boards are looked up and its scrum board chosen
/// (the others named); active and future sprints by default.
#[test]
fn list_sprints_finds_the_projects_scrum_board() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"values": [{"id": 3, "name": "ENG Kanban", "type": "kanban"}, {"id": 7, "name": "ENG Scrum", "type": "scrum"}]}))
        .json(json!({"maxResults": 50, "startAt": 0, "isLast": true, "values": [
            {"id": 41, "state": "active", "name": "Sprint 12", "startDate": "2026-01-05T09:00:00.000Z", "endDate": "2026-01-19T09:00:00.000Z",
             "goal": "Ship login", "originBoardId": 7},
            {"id": 42, "state": "future", "name": "Sprint 13", "goal": "", "originBoardId": 7}]}))
        .ok(&LIST_SPRINTS, json!({"project_key": " ENG "}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/agile/1.0/board", "body": null, "query": [["projectKeyOrId", "ENG"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/rest/agile/1.0/board/7/sprint", "body": null,
               "query": [["state", "active,future"], ["startAt", "0"], ["maxResults", "50"]]})
    );
    assert_eq!(
        out,
        json!({"board": {"id": 7, "name": "ENG Scrum", "type": "scrum"}, "other_boards": [{"id": 3, "name": "ENG Kanban", "type": "kanban"}],
            "sprints": [{"id": 41, "name": "Sprint 12", "state": "active", "start": "2026-01-05T09:00:00.000Z",
                         "end": "2026-01-19T09:00:00.000Z", "goal": "Ship login"},
                        {"id": 42, "name": "Sprint 13", "state": "future"}]})
    );
}

/// By board id, closed sprints page by offset; a project without boards is a 404 that says why;
/// neither or both of board_id and project_key is refused unsent.
#[test]
fn list_sprints_by_board_and_the_refusals() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"isLast": false, "values": [{"id": 30, "state": "closed", "name": "Sprint 1", "completeDate": "2025-06-01T09:00:00.000Z"}]}))
        .ok(&LIST_SPRINTS, json!({"board_id": 7, "state": ["closed"], "limit": 1, "cursor": "5"}));
    assert_eq!(sent(&reqs[0])["query"], json!([["state", "closed"], ["startAt", "5"], ["maxResults", "1"]]));
    assert_eq!(
        out,
        json!({"board": {"id": 7}, "next_cursor": "6",
               "sprints": [{"id": 30, "name": "Sprint 1", "state": "closed", "completed": "2025-06-01T09:00:00.000Z"}]})
    );
    let (r, reqs) = MockUpstream::new().json(json!({"values": []})).call(&LIST_SPRINTS, json!({"project_key": "HR"}));
    assert_eq!(reqs.len(), 1);
    let Err(ToolError::Upstream { status: 404, message, .. }) = r else { panic!("{r:?}") };
    assert_eq!(message, "project HR has no board you can see; sprints live on scrum boards");
    for args in [json!({}), json!({"board_id": 7, "project_key": "ENG"})] {
        let (r, reqs) = MockUpstream::new().call(&LIST_SPRINTS, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}
