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

/// list_workspaces: the wrapped cursor goes back as Asana's `offset`, the next one comes back
/// wrapped.
#[test]
fn list_workspaces_pages_and_shapes() {
    let next = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJvZmZzZXQiOjJ9.sig";
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": [{"gid": "1100", "resource_type": "workspace", "name": "Acme", "is_organization": true},
                              {"gid": "1200", "resource_type": "workspace", "name": "Personal", "is_organization": false}],
                     "next_page": {"offset": next, "path": "/workspaces?offset=x", "uri": "https://app.asana.com/api/1.0/workspaces?offset=x"}}))
        .ok(&LIST_WORKSPACES, json!({"limit": 2, "cursor": base64url_encode(b"prevtoken")}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/workspaces", "body": null,
               "query": [["opt_fields", "name,is_organization"], ["limit", "2"], ["offset", "prevtoken"]]})
    );
    assert_eq!(
        out,
        json!({"workspaces": [{"gid": "1100", "name": "Acme", "is_organization": true},
                              {"gid": "1200", "name": "Personal", "is_organization": false}],
               "next_cursor": base64url_encode(next.as_bytes())})
    );
}

/// list_projects: workspace and team as numeric gids, active projects by default, each with
/// owner, team and dates; a non-numeric team is refused unsent.
#[test]
fn list_projects_filters_by_team_and_shapes_projects() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"data": [{"gid": "55", "name": "Launch", "archived": false, "owner": {"gid": "12", "name": "Ann Lee"},
            "team": {"gid": "77", "name": "Marketing"}, "start_on": null, "due_on": "2026-12-15",
            "modified_at": "2026-11-20T10:00:00.000Z", "permalink_url": "https://app.asana.com/0/55/list"}], "next_page": null}))
        .ok(&LIST_PROJECTS, json!({"workspace": "1100", "team": " 77 "}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/projects", "body": null, "query": [["workspace", "1100"], ["team", "77"], ["archived", "false"],
            ["opt_fields", "name,archived,owner.name,team.name,due_on,start_on,modified_at,permalink_url"], ["limit", "50"]]})
    );
    assert_eq!(
        out,
        json!({"projects": [{"gid": "55", "name": "Launch", "archived": false, "owner": "Ann Lee", "team": "Marketing",
            "due_on": "2026-12-15", "modified": "2026-11-20T10:00:00.000Z", "url": "https://app.asana.com/0/55/list"}]})
    );
    let (r, reqs) = MockUpstream::new().call(&LIST_PROJECTS, json!({"workspace": "1100", "team": "marketing"}));
    let Err(ToolError::InvalidArguments { problems, .. }) = r else { panic!("{r:?}") };
    assert_eq!(problems[0].path, "/team");
    assert!(reqs.is_empty());
}

/// search_tasks: Asana's dotted filters, projects joined as gids; a full page says more may
/// exist; a 402 (free workspace) names the alternative.
#[test]
fn search_tasks_sends_dotted_filters_and_explains_a_402() {
    let hit = json!({"gid": "901", "name": "Fix signup bug", "completed": false, "assignee": {"gid": "12", "name": "Ann Lee"},
        "due_on": "2026-11-30", "due_at": null, "modified_at": "2026-11-29T08:00:00.000Z", "permalink_url": "https://app.asana.com/0/55/901"});
    let (out, reqs) = MockUpstream::new().json(json!({"data": [hit]})).ok(
        &SEARCH_TASKS,
        json!({"workspace": "1100", "text": "signup", "assignee_any": ["me", "ann@acme.example"], "projects_any": ["55", "56"],
               "completed": false, "due_on_before": "2026-12-01", "sort_by": "due_date", "sort_ascending": true, "limit": 1}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/workspaces/1100/tasks/search", "body": null, "query": [
            ["text", "signup"], ["assignee.any", "me,ann@acme.example"], ["projects.any", "55,56"], ["completed", "false"],
            ["due_on.before", "2026-12-01"], ["sort_by", "due_date"], ["sort_ascending", "true"],
            ["opt_fields", LIST_TASK_FIELDS], ["limit", "1"]]})
    );
    assert_eq!(
        out,
        json!({"tasks": [{"gid": "901", "name": "Fix signup bug", "completed": false, "assignee": "Ann Lee", "due": "2026-11-30",
            "modified": "2026-11-29T08:00:00.000Z", "url": "https://app.asana.com/0/55/901"}], "more_may_exist": true})
    );

    let (r, _) = MockUpstream::new()
        .error(ToolError::Upstream {
            status: 402,
            message: "Search is only available to premium users.".into(),
            retry_after: None,
        })
        .call(&SEARCH_TASKS, json!({"workspace": "1100", "text": "signup"}));
    let m = message(&r.unwrap_err());
    assert!(m.starts_with("Search is only available to premium users. — task search needs a premium"), "{m}");
    assert!(m.contains("asana_list_tasks"), "{m}");

    let (r, reqs) = MockUpstream::new().call(&SEARCH_TASKS, json!({"workspace": "1100", "due_on_after": "next week"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}
