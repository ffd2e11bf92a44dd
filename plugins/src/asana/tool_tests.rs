//! Asana tools on `MockUpstream`: the exact request of reads and writes (`data` envelopes,
//! `opt_fields`, numeric gids only in paths) and the task as an agent reads it.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn task() -> Value {
    json!({"gid": "1204567890123456", "resource_type": "task", "resource_subtype": "default_task",
        "name": "Write launch copy", "completed": false, "completed_at": null,
        "assignee": {"gid": "12", "name": "Ann Lee", "email": "ann@acme.example"}, "due_on": "2026-12-01", "due_at": null,
        "notes": "Hero text and three blurbs.", "projects": [{"gid": "55", "name": "Launch"}],
        "memberships": [{"project": {"gid": "55", "name": "Launch"}, "section": {"gid": "56", "name": "Doing"}}],
        "tags": [], "parent": null, "num_subtasks": 2, "followers": [{"gid": "12", "name": "Ann Lee"}],
        "custom_fields": [{"gid": "9", "name": "Priority", "display_value": "High"}, {"gid": "10", "name": "Cost", "display_value": null}],
        "created_at": "2026-11-01T09:00:00.000Z", "modified_at": "2026-11-02T09:00:00.000Z",
        "permalink_url": "https://app.asana.com/0/55/1204567890123456"})
}

#[test]
fn get_task_asks_for_its_fields_and_shapes_the_task() {
    let (out, reqs) =
        MockUpstream::new().json(json!({"data": task()})).ok(&GET_TASK, json!({"task_gid": " 1204567890123456 "}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/tasks/1204567890123456", "query": [["opt_fields", TASK_FIELDS]], "body": null})
    );
    assert_eq!(
        out,
        json!({"gid": "1204567890123456", "name": "Write launch copy", "completed": false, "assignee": "Ann Lee",
            "assignee_email": "ann@acme.example", "due": "2026-12-01", "notes": "Hero text and three blurbs.",
            "projects": ["Launch"], "sections": ["Launch / Doing"], "subtasks": 2, "followers": ["Ann Lee"],
            "custom_fields": {"Priority": "High"}, "created": "2026-11-01T09:00:00.000Z",
            "modified": "2026-11-02T09:00:00.000Z", "url": "https://app.asana.com/0/55/1204567890123456"})
    );
}

/// A gid is a number: a path-shaped id is refused before anything is sent; an answer without
/// `data` is an empty task, not a panic.
#[test]
fn get_task_refuses_a_non_numeric_gid_and_survives_an_empty_answer() {
    let (r, reqs) = MockUpstream::new().call(&GET_TASK, json!({"task_gid": "../workspaces"}));
    assert!(message(&r.unwrap_err()).contains("is not an Asana gid"));
    assert!(reqs.is_empty());
    let (out, _) = MockUpstream::new().json(json!({"errors": []})).ok(&GET_TASK, json!({"task_gid": "1"}));
    assert_eq!(out, json!({}));
}

#[test]
fn create_task_sends_the_data_envelope() {
    let (out, reqs) = MockUpstream::new().json(json!({"data": task()})).ok(
        &CREATE_TASK,
        json!({"name": "Write launch copy", "projects": ["55"], "assignee": "me", "due_on": "2026-12-01",
               "notes": "Hero text", "followers": ["ann@acme.example"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/tasks", "query": [["opt_fields", LIST_TASK_FIELDS]], "body": {"data": {
            "name": "Write launch copy", "projects": ["55"], "assignee": "me", "due_on": "2026-12-01",
            "notes": "Hero text", "followers": ["ann@acme.example"]}}})
    );
    assert_eq!(
        out,
        json!({"gid": "1204567890123456", "name": "Write launch copy", "completed": false, "assignee": "Ann Lee",
            "due": "2026-12-01", "modified": "2026-11-02T09:00:00.000Z", "url": "https://app.asana.com/0/55/1204567890123456"})
    );
    // Nowhere to put it, or two due dates: refused before sending.
    for bad in [
        json!({"name": "x"}),
        json!({"name": "x", "workspace": "1", "due_on": "2026-01-01", "due_at": "2026-01-01T10:00:00Z"}),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_TASK, bad);
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
        assert!(reqs.is_empty());
    }
}

/// update_task: an empty assignee or due date clears it; nothing to change is refused.
#[test]
fn update_task_puts_the_changes_and_clears_with_empty_strings() {
    let (_, reqs) = MockUpstream::new()
        .json(json!({"data": task()}))
        .ok(&UPDATE_TASK, json!({"task_gid": "1204567890123456", "completed": true, "assignee": " ", "due_on": ""}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/tasks/1204567890123456", "query": [["opt_fields", LIST_TASK_FIELDS]],
               "body": {"data": {"completed": true, "assignee": null, "due_on": null}}})
    );
    let (r, reqs) = MockUpstream::new().call(&UPDATE_TASK, json!({"task_gid": "1"}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
}

#[test]
fn create_comment_posts_a_story() {
    let story = json!({"data": {"gid": "777", "resource_type": "story", "type": "comment", "text": "Looks good",
        "created_by": {"gid": "12", "name": "Ann Lee"}, "created_at": "2026-11-03T10:00:00.000Z", "is_pinned": true}});
    let (out, reqs) = MockUpstream::new()
        .json(story)
        .ok(&CREATE_COMMENT, json!({"task_gid": "42", "text": "Looks good", "is_pinned": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/tasks/42/stories", "query": [], "body": {"data": {"text": "Looks good", "is_pinned": true}}})
    );
    assert_eq!(
        out,
        json!({"gid": "777", "task_gid": "42", "text": "Looks good", "author": "Ann Lee", "created": "2026-11-03T10:00:00.000Z", "is_pinned": true})
    );
    let (r, _) = MockUpstream::new()
        .call(&CREATE_COMMENT, json!({"task_gid": "42", "text": "a", "html_text": "<body>b</body>"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
}

/// list_tasks: Asana's `next_page.offset` (JWT-shaped) travels wrapped as an opaque cursor and
/// comes back as `offset`; a cursor the tool did not issue is refused unsent.
#[test]
fn list_tasks_wraps_the_offset_as_the_cursor() {
    let offset = "eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9";
    let page = json!({"data": [task()], "next_page": {"offset": offset, "path": "/tasks?offset=x", "uri": "https://app.asana.com/api/1.0/tasks?offset=x"}});
    let (out, reqs) =
        MockUpstream::new().json(page).ok(&LIST_TASKS, json!({"assignee": "me", "workspace": "1331", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/tasks", "body": null, "query": [["assignee", "me"], ["workspace", "1331"],
            ["completed_since", "now"], ["opt_fields", LIST_TASK_FIELDS], ["limit", "1"]]})
    );
    let cursor = out["next_cursor"].as_str().unwrap().to_string();
    assert_ne!(cursor, offset, "the token is wrapped, not passed bare");
    let (_, reqs) =
        MockUpstream::new().json(json!({"data": []})).ok(&LIST_TASKS, json!({"project": "55", "cursor": cursor}));
    assert_eq!(sent(&reqs[0])["query"].as_array().unwrap().last().unwrap(), &json!(["offset", offset]));
    for args in [
        json!({"project": "55", "cursor": "not-ours!"}),
        json!({"project": "55", "section": "56"}),
        json!({"assignee": "me"}),
    ] {
        let (r, reqs) = MockUpstream::new().call(&LIST_TASKS, args);
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
        assert!(reqs.is_empty());
    }
}
