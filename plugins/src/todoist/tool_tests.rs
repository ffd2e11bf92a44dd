//! Todoist tools on `MockUpstream` (list_tasks and quick add have theirs in `todoist.rs`): the
//! exact request of the other reads and writes (API v1 paths, ids checked before they reach a
//! path, labels without their `@`) and the shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn search_tasks_sends_the_filter_query() {
    let page = json!({"results": [{"id": "6X7rM8997g3RQmvh", "content": "Call Mom", "priority": 1, "labels": [],
        "checked": false, "due": {"date": "2026-03-02", "string": "today"}}], "next_cursor": null});
    let (out, reqs) =
        MockUpstream::new().json(page).ok(&SEARCH_TASKS, json!({"query": "today & p1", "lang": "en", "limit": 500}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/tasks/filter", "body": null, "query": [["query", "today & p1"], ["lang", "en"], ["limit", "200"]]})
    );
    assert_eq!(out["tasks"][0]["content"], "Call Mom");
    assert_eq!(out["tasks"][0]["priority_label"], "p4");
    assert!(out.get("next_cursor").is_none());
}

#[test]
fn create_task_sends_structured_fields() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "7", "content": "Pay rent", "priority": 4, "labels": ["home"], "project_id": "220474322",
            "due": {"date": "2026-04-01", "string": "Apr 1", "is_recurring": false}}))
        .ok(&CREATE_TASK, json!({"content": "Pay rent", "due_date": "2026-04-01", "priority": 4, "project_id": "220474322", "labels": ["@home"]}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/tasks", "query": [], "body": {"content": "Pay rent", "due_date": "2026-04-01",
            "priority": 4, "project_id": "220474322", "labels": ["home"]}})
    );
    assert_eq!((out["id"].clone(), out["priority_label"].clone()), (json!("7"), json!("p1")));
    for (args, why) in [
        (json!({"content": "x", "due_date": "tomorrow"}), "due_string"),
        (json!({"content": "x", "due_string": "today", "due_date": "2026-01-01"}), "not both"),
        (json!({"content": "x", "project_id": "../projects"}), "is not a Todoist id"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_TASK, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

#[test]
fn update_and_complete_task_post_to_the_task() {
    let (_, reqs) = MockUpstream::new()
        .json(json!({"id": "7", "content": "Pay rent", "priority": 2}))
        .ok(&UPDATE_TASK, json!({"task_id": "7", "due_string": "every 1st", "priority": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/tasks/7", "query": [], "body": {"due_string": "every 1st", "priority": 2}})
    );
    let (r, reqs) = MockUpstream::new().call(&UPDATE_TASK, json!({"task_id": "7"}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
    let (out, reqs) = MockUpstream::new().answer(204, Vec::new()).ok(&COMPLETE_TASK, json!({"task_id": " 7 "}));
    assert_eq!(sent(&reqs[0]), json!({"method": "POST", "path": "/tasks/7/close", "query": [], "body": null}));
    assert_eq!(out, json!({"task_id": "7", "completed": true}));
}

#[test]
fn list_projects_shapes_flags_and_links() {
    let page = json!({"results": [{"id": "220474322", "name": "Inbox", "color": "grey", "parent_id": null, "inbox_project": true,
        "is_favorite": false, "is_shared": false, "is_archived": false, "view_style": "list", "child_order": 0}], "next_cursor": "c2"});
    let (out, reqs) = MockUpstream::new().json(page).ok(&LIST_PROJECTS, json!({"limit": 1}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/projects", "body": null, "query": [["limit", "1"]]}));
    assert_eq!(
        out,
        json!({"next_cursor": "c2", "projects": [{"id": "220474322", "name": "Inbox", "color": "grey", "inbox": true, "view": "list",
            "url": "https://app.todoist.com/app/project/220474322"}]})
    );
}

#[test]
fn create_comment_goes_to_a_task_or_a_project() {
    let (out, reqs) = MockUpstream::new()
        .json(
            json!({"id": "2992679862", "item_id": "7", "content": "Done?", "posted_at": "2026-01-02T10:00:00.000000Z"}),
        )
        .ok(&CREATE_COMMENT, json!({"task_id": "7", "content": "Done?"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/comments", "query": [], "body": {"content": "Done?", "task_id": "7"}})
    );
    assert_eq!(
        out,
        json!({"id": "2992679862", "task_id": "7", "content": "Done?", "posted_at": "2026-01-02T10:00:00.000000Z"})
    );
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_COMMENT, json!({"task_id": "7", "project_id": "1", "content": "x"}));
    assert!(message(&r.unwrap_err()).contains("exactly one of task_id or project_id"));
    assert!(reqs.is_empty());
}

/// list_tasks in a section, on from a cursor; an id that is not one is refused before any
/// request; an empty page has no cursor.
#[test]
fn list_tasks_reads_a_section_page_by_page() {
    let page = json!({"results": [{"id": "6X7rM8997g3RQmvh", "content": "Draft agenda", "description": "For Monday", "priority": 2,
        "labels": [], "checked": false, "section_id": "6Jf8VQXxpwv56VQ7", "due": null, "deadline": null}], "next_cursor": "c3"});
    let (out, reqs) = MockUpstream::new()
        .json(page)
        .ok(&LIST_TASKS, json!({"section_id": "6Jf8VQXxpwv56VQ7", "cursor": "c2", "limit": 10}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/tasks", "body": null, "query": [["section_id", "6Jf8VQXxpwv56VQ7"], ["limit", "10"], ["cursor", "c2"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "c3", "tasks": [{"id": "6X7rM8997g3RQmvh", "content": "Draft agenda", "description": "For Monday",
            "section_id": "6Jf8VQXxpwv56VQ7", "priority": 2, "priority_label": "p3", "url": "https://app.todoist.com/app/task/6X7rM8997g3RQmvh"}]})
    );
    let (out, _) = MockUpstream::new().json(json!({"results": [], "next_cursor": null})).ok(&LIST_TASKS, json!({}));
    assert_eq!(out, json!({"tasks": []}));
    let (r, reqs) = MockUpstream::new().call(&LIST_TASKS, json!({"project_id": "../projects"}));
    assert!(message(&r.unwrap_err()).contains("'../projects' is not a Todoist id"));
    assert!(reqs.is_empty());
}
