//! Todoist against a fake of the unified API v1: Bearer token, `{results, next_cursor}` pages,
//! v1 JSON errors (and plain-text ones), 204 on close, and 410 Gone for the retired `/rest/v2`,
//! which no tool may ever call.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "0123456789abcdef0123456789abcdef01234567";
const INBOX: &str = "6Jf8VQXxpwv56VQ7";
const WORK: &str = "6Jf8VQXxpwv56VQ8";
const TASK: &str = "6X7rM8997g3RQmvh";
const CURSOR: &str = "bmV4dDo2WDdyTTg5OTdnM1JRbXZq";

fn v1_error(status: u16, error: &str, code: u32, tag: &str, extra: Value) -> Reply {
    let mut extra = extra;
    extra["event_id"] = json!("c2f1a8b3e4d54f6a");
    Reply::json(
        status,
        json!({"error": error, "error_code": code, "error_extra": extra, "error_tag": tag, "http_code": status}),
    )
}

fn task(id: &str, content: &str, project: &str, priority: u8, due: Value, labels: &[&str]) -> Value {
    json!({
        "id": id, "user_id": "2671355", "project_id": project, "section_id": null, "parent_id": null,
        "added_by_uid": "2671355", "assigned_by_uid": null, "responsible_uid": null, "labels": labels,
        "deadline": null, "duration": null, "checked": false, "is_deleted": false,
        "added_at": "2026-11-28T09:00:00.000000Z", "completed_at": null, "updated_at": "2026-11-29T10:00:00.000000Z",
        "due": due, "priority": priority, "child_order": 1, "content": content, "description": "", "note_count": 0,
        "day_order": -1, "is_collapsed": false
    })
}

fn due(date: &str, string: &str, recurring: bool) -> Value {
    json!({"date": date, "timezone": null, "string": string, "lang": "en", "is_recurring": recurring})
}

fn all_tasks() -> Vec<Value> {
    let mut rent = task("6X7rM8997g3RQmvj", "Pay rent", INBOX, 4, due("2026-12-01", "every 1st", true), &["home"]);
    rent["description"] = json!("Transfer to landlord, reference APT-4B");
    vec![
        task(TASK, "Buy milk", INBOX, 1, due("2026-11-30", "today", false), &["errands"]),
        rent,
        task("6X7rM8997g3RQmvk", "Quarterly report", WORK, 3, Value::Null, &[]),
    ]
}

fn page(r: &Recorded, items: Vec<Value>) -> Reply {
    let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(50);
    if limit > 200 {
        return v1_error(400, "Invalid argument value", 20, "INVALID_ARGUMENT_VALUE", json!({"argument": "limit"}));
    }
    let start = match r.q("cursor") {
        None => 0,
        Some(CURSOR) => 2,
        Some(_) => return v1_error(400, "Invalid cursor", 20, "INVALID_ARGUMENT_VALUE", json!({"argument": "cursor"})),
    };
    let slice: Vec<Value> = items.iter().skip(start).take(limit).cloned().collect();
    let next = (start == 0 && items.len() > limit).then_some(CURSOR);
    Reply::json(200, json!({"results": slice, "next_cursor": next}))
}

fn json_body(r: &Recorded) -> Result<Value, Reply> {
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err(v1_error(400, "Invalid JSON", 10, "INVALID_JSON", json!({})));
    }
    serde_json::from_slice(&r.body).map_err(|_| v1_error(400, "Invalid JSON", 10, "INVALID_JSON", json!({})))
}

fn todoist_api(r: &Recorded) -> Reply {
    if r.path.starts_with("/rest/v2") || r.path.starts_with("/sync/v9") {
        return Reply { status: 410, headers: vec![("content-type".into(), "text/plain".into())], body: "Gone".into() };
    }
    if !has_user_agent(r) {
        return v1_error(400, "Missing user agent", 1, "BAD_REQUEST", json!({}));
    }
    if r.header("authorization") != Some(format!("Bearer {TOKEN}").as_str()) {
        return Reply {
            status: 401,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: "Unauthorized".into(),
        };
    }
    let path = r.path.as_str();
    match (r.method.as_str(), path) {
        ("GET", "/api/v1/user") => Reply::json(
            200,
            json!({"id": "2671355", "email": "sam@example.com", "full_name": "Sam Rivera", "inbox_project_id": INBOX,
                   "tz_info": {"timezone": "Europe/Lisbon", "gmt_string": "+00:00"}, "is_premium": true, "lang": "en"}),
        ),
        ("GET", "/api/v1/tasks") => {
            let items: Vec<Value> = all_tasks()
                .into_iter()
                .filter(|t| r.q("project_id").is_none_or(|p| t["project_id"] == p))
                .filter(|t| r.q("label").is_none_or(|l| t["labels"].as_array().unwrap().iter().any(|x| x == l)))
                .collect();
            page(r, items)
        }
        ("GET", "/api/v1/tasks/filter") => match r.q("query") {
            None => v1_error(400, "Required argument is missing", 19, "ARGUMENT_MISSING", json!({"argument": "query"})),
            Some("#Nowhere") => {
                v1_error(400, "Invalid filter query: project 'Nowhere' not found", 482, "INVALID_FILTER", json!({}))
            }
            Some("today | overdue") => page(r, all_tasks().into_iter().take(1).collect()),
            Some(_) => page(r, all_tasks()),
        },
        ("POST", "/api/v1/tasks") => {
            let b = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            let Some(content) = b["content"].as_str() else {
                return v1_error(
                    400,
                    "Required argument is missing",
                    19,
                    "ARGUMENT_MISSING",
                    json!({"argument": "content"}),
                );
            };
            if b["project_id"].as_str().is_some_and(|p| p != INBOX && p != WORK) {
                return v1_error(404, "Project not found", 478, "NOT_FOUND", json!({}));
            }
            let d = match (b["due_string"].as_str(), b["due_date"].as_str()) {
                (Some(s), _) => due("2026-12-01", s, s.starts_with("every")),
                (None, Some(date)) => due(date, date, false),
                _ => Value::Null,
            };
            let labels: Vec<&str> =
                b["labels"].as_array().map(|l| l.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            let mut t = task(
                "6X7rM8997g3RQmvz",
                content,
                b["project_id"].as_str().unwrap_or(INBOX),
                b["priority"].as_u64().unwrap_or(1) as u8,
                d,
                &labels,
            );
            t["description"] = b.get("description").cloned().unwrap_or(json!(""));
            Reply::json(200, t)
        }
        ("POST", "/api/v1/tasks/quick") => {
            let b = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if b.get("content").is_some() {
                return v1_error(400, "Unknown argument", 20, "INVALID_ARGUMENT_VALUE", json!({"argument": "content"}));
            }
            let Some(text) = b["text"].as_str() else {
                return v1_error(
                    400,
                    "Required argument is missing",
                    19,
                    "ARGUMENT_MISSING",
                    json!({"argument": "text"}),
                );
            };
            // What Quick Add makes of "Pay rent every 1st #Home p1" (the only sentence this fake parses).
            if text != "Pay rent every 1st #Home p1" {
                return v1_error(
                    400,
                    "Quick add could not parse the text",
                    20,
                    "INVALID_ARGUMENT_VALUE",
                    json!({"argument": "text"}),
                );
            }
            let mut t =
                task("6X7rM8997g3RQmvq", "Pay rent", "6Jf8VQXxpwv56VQ9", 4, due("2026-12-01", "every 1st", true), &[]);
            t["description"] = b.get("note").cloned().unwrap_or(json!(""));
            Reply::json(200, t)
        }
        ("POST", p) if p == format!("/api/v1/tasks/{TASK}") => {
            let b = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            let mut t = all_tasks()[0].clone();
            for (k, v) in b.as_object().unwrap() {
                match k.as_str() {
                    "due_string" if v == "no date" => t["due"] = Value::Null,
                    "due_string" => t["due"] = due("2026-12-05", v.as_str().unwrap(), false),
                    "due_date" => t["due"] = due(v.as_str().unwrap(), v.as_str().unwrap(), false),
                    _ => t[k] = v.clone(),
                }
            }
            Reply::json(200, t)
        }
        ("POST", p) if p == format!("/api/v1/tasks/{TASK}/close") => {
            Reply { status: 204, headers: vec![], body: String::new() }
        }
        ("POST", p) if p.starts_with("/api/v1/tasks/") && p.ends_with("/close") => {
            v1_error(404, "Task not found", 478, "NOT_FOUND", json!({}))
        }
        ("GET", "/api/v1/projects") => {
            let project = |id: &str, name: &str, inbox: bool, fav: bool| {
                json!({"id": id, "name": name, "color": "charcoal", "parent_id": null, "child_order": 0, "is_shared": false,
                       "is_favorite": fav, "is_archived": false, "is_deleted": false, "is_collapsed": false, "inbox_project": inbox,
                       "view_style": "list", "description": "", "creator_uid": "2671355", "created_at": "2024-01-01T00:00:00Z",
                       "updated_at": "2026-11-01T00:00:00Z", "default_order": 0, "can_assign_tasks": false, "role": null})
            };
            page(
                r,
                vec![
                    project(INBOX, "Inbox", true, false),
                    project(WORK, "Work", false, true),
                    project("6Jf8VQXxpwv56VQ9", "Home", false, false),
                ],
            )
        }
        ("POST", "/api/v1/comments") => {
            let b = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if b.get("task_id").is_some() == b.get("project_id").is_some() {
                return v1_error(
                    400,
                    "Exactly one of task_id or project_id is required",
                    19,
                    "ARGUMENT_MISSING",
                    json!({}),
                );
            }
            let mut c = json!({"id": "6X8Fqw9RwCWQ3VRr", "posted_uid": "2671355", "content": b["content"], "file_attachment": null,
                               "uids_to_notify": null, "is_deleted": false, "posted_at": "2026-11-30T10:00:00.000000Z", "reactions": null});
            match b.get("task_id") {
                Some(t) => c["item_id"] = t.clone(),
                None => c["project_id"] = b["project_id"].clone(),
            }
            Reply::json(200, c)
        }
        _ => v1_error(404, "Not found", 404, "NOT_FOUND", json!({})),
    }
}

async fn todoist_app() -> (TestApp, Fake) {
    let fake = Fake::start(todoist_api).await;
    let t = app_with(&[
        ("WORKBENCH_TODOIST_BASE_URL", format!("{}/api/v1", fake.url)),
        ("WORKBENCH_TODOIST_TOKEN", TOKEN.to_string()),
    ]);
    (t, fake)
}

fn auth_ok(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

fn never_rest_v2(f: &Fake) {
    for r in f.requests() {
        assert!(r.path.starts_with("/api/v1/"), "only API v1 is called, not {}", r.path);
    }
}

fn body(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn todoist_list_tasks_pages_with_next_cursor() {
    let (t, f) = todoist_app().await;
    let p1 = t.ok("todoist_list_tasks", json!({"project_id": INBOX, "label": "@errands", "limit": 1})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/tasks"));
    auth_ok(&req);
    assert_eq!(req.q("project_id"), Some(INBOX));
    assert_eq!(req.q("label"), Some("errands"), "the @ is not part of the label name");
    assert_eq!(req.q("limit"), Some("1"));
    assert_eq!(
        p1,
        json!({"tasks": [{
            "id": TASK, "content": "Buy milk", "project_id": INBOX, "due": {"date": "2026-11-30", "string": "today"},
            "priority": 1, "priority_label": "p4", "labels": ["errands"], "added_at": "2026-11-28T09:00:00.000000Z",
            "url": format!("https://app.todoist.com/app/task/{TASK}")
        }]})
    );

    let p1 = t.ok("todoist_list_tasks", json!({"limit": 2, "include_raw": true})).await;
    assert_eq!(p1["next_cursor"], CURSOR);
    assert_eq!(p1["tasks"][1]["priority_label"], "p1");
    assert_eq!(p1["tasks"][1]["due"], json!({"date": "2026-12-01", "string": "every 1st", "recurring": true}));
    assert_eq!(p1["tasks"][1]["description"], "Transfer to landlord, reference APT-4B");
    let raw_bytes = p1["raw"].to_string().len();
    let mut shaped = p1.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped_bytes = shaped.to_string().len();
    eprintln!("todoist_list_tasks: raw {raw_bytes} bytes -> shaped {shaped_bytes} bytes");
    assert!(shaped_bytes < raw_bytes, "shaped {shaped_bytes} vs raw {raw_bytes}");

    let p2 = t.ok("todoist_list_tasks", json!({"limit": 2, "cursor": CURSOR})).await;
    assert_eq!(f.last().q("cursor"), Some(CURSOR));
    assert_eq!(p2["tasks"][0]["content"], "Quarterly report");
    assert!(p2.get("next_cursor").is_none());
    never_rest_v2(&f);
}

#[tokio::test]
async fn todoist_search_tasks_with_a_filter_query() {
    let (t, f) = todoist_app().await;
    let r = t.ok("todoist_search_tasks", json!({"query": "today | overdue", "lang": "en", "limit": 10})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/tasks/filter"));
    auth_ok(&req);
    assert_eq!(req.q("query"), Some("today | overdue"));
    assert_eq!(req.q("lang"), Some("en"));
    assert_eq!(req.q("limit"), Some("10"));
    assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(r["tasks"][0]["content"], "Buy milk");

    let bad = t.err("todoist_search_tasks", json!({"query": "#Nowhere"})).await;
    assert_eq!(bad["code"], "UPSTREAM_ERROR");
    assert_eq!(bad["status"], 400);
    assert_eq!(bad["message"], "todoist answered 400: Invalid filter query: project 'Nowhere' not found");
    never_rest_v2(&f);
}

#[tokio::test]
async fn todoist_create_task_plain_and_quick_add() {
    let (t, f) = todoist_app().await;
    let r = t
        .ok(
            "todoist_create_task",
            json!({"content": "Renew passport", "description": "Photos first", "due_string": "next monday", "priority": 4,
                   "project_id": WORK, "labels": ["@errands", "admin"]}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/v1/tasks"));
    auth_ok(&req);
    assert_eq!(
        body(&req),
        json!({"content": "Renew passport", "description": "Photos first", "due_string": "next monday", "priority": 4,
               "project_id": WORK, "labels": ["errands", "admin"]})
    );
    assert_eq!(r["priority_label"], "p1");
    assert_eq!(r["due"]["string"], "next monday");
    assert_eq!(r["labels"], json!(["errands", "admin"]));
    assert_eq!(r["project_id"], WORK);

    let q = t
        .ok(
            "todoist_create_task",
            json!({"content": "Pay rent every 1st #Home p1", "description": "APT-4B", "quick_add": true}),
        )
        .await;
    let req = f.last();
    assert_eq!(req.path, "/api/v1/tasks/quick");
    assert_eq!(body(&req), json!({"text": "Pay rent every 1st #Home p1", "note": "APT-4B"}));
    assert_eq!(q["content"], "Pay rent");
    assert_eq!(q["due"]["recurring"], true);
    assert_eq!(q["description"], "APT-4B");

    let before = f.requests().len();
    let mixed = t.err("todoist_create_task", json!({"content": "x", "quick_add": true, "priority": 4})).await;
    assert_eq!(mixed["code"], "INVALID_ARGUMENTS");
    assert_eq!(mixed["problems"][0]["path"], "/priority");
    let both =
        t.err("todoist_create_task", json!({"content": "x", "due_string": "today", "due_date": "2026-12-01"})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let words = t.err("todoist_create_task", json!({"content": "x", "due_date": "tomorrow"})).await;
    assert!(words["message"].as_str().unwrap().contains("use due_string"), "{words}");
    assert_eq!(f.requests().len(), before);

    let unknown = t.err("todoist_create_task", json!({"content": "x", "project_id": "6Jf8VQXxpwv56VQ0"})).await;
    assert_eq!(unknown["status"], 404);
    assert!(unknown["message"].as_str().unwrap().contains("Project not found"), "{unknown}");
    never_rest_v2(&f);
}

#[tokio::test]
async fn todoist_update_and_complete_task() {
    let (t, f) = todoist_app().await;
    let r = t
        .ok(
            "todoist_update_task",
            json!({"task_id": TASK, "content": "Buy oat milk", "due_string": "no date", "priority": 2, "labels": []}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", format!("/api/v1/tasks/{TASK}").as_str()));
    auth_ok(&req);
    assert_eq!(body(&req), json!({"content": "Buy oat milk", "due_string": "no date", "priority": 2, "labels": []}));
    assert_eq!(r["content"], "Buy oat milk");
    assert!(r.get("due").is_none() && r.get("labels").is_none());
    assert_eq!(r["priority_label"], "p3");

    let nothing = t.err("todoist_update_task", json!({"task_id": TASK})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");

    let done = t.ok("todoist_complete_task", json!({"task_id": TASK})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", format!("/api/v1/tasks/{TASK}/close").as_str()));
    auth_ok(&req);
    assert!(req.body.is_empty());
    assert_eq!(done, json!({"task_id": TASK, "completed": true}));

    let missing = t.err("todoist_complete_task", json!({"task_id": "6X7rM8997g3RQm00"})).await;
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["message"], "todoist answered 404: Task not found");
    never_rest_v2(&f);
}

#[tokio::test]
async fn todoist_list_projects_and_comment() {
    let (t, f) = todoist_app().await;
    let p = t.ok("todoist_list_projects", json!({"limit": 2})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/projects"));
    auth_ok(&req);
    assert_eq!(req.q("limit"), Some("2"));
    assert_eq!(
        p["projects"],
        json!([
            {"id": INBOX, "name": "Inbox", "color": "charcoal", "inbox": true, "view": "list", "url": format!("https://app.todoist.com/app/project/{INBOX}")},
            {"id": WORK, "name": "Work", "color": "charcoal", "favorite": true, "view": "list", "url": format!("https://app.todoist.com/app/project/{WORK}")}
        ])
    );
    assert_eq!(p["next_cursor"], CURSOR);
    let p2 = t.ok("todoist_list_projects", json!({"limit": 2, "cursor": CURSOR})).await;
    assert_eq!(p2["projects"][0]["name"], "Home");
    assert!(p2.get("next_cursor").is_none());

    let c = t.ok("todoist_create_comment", json!({"content": "Oat milk only", "task_id": TASK})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/v1/comments"));
    auth_ok(&req);
    assert_eq!(body(&req), json!({"content": "Oat milk only", "task_id": TASK}));
    assert_eq!(
        c,
        json!({"id": "6X8Fqw9RwCWQ3VRr", "task_id": TASK, "content": "Oat milk only", "posted_at": "2026-11-30T10:00:00.000000Z"})
    );
    let pc = t.ok("todoist_create_comment", json!({"content": "Q4 plan attached", "project_id": WORK})).await;
    assert_eq!(body(&f.last()), json!({"content": "Q4 plan attached", "project_id": WORK}));
    assert_eq!(pc["project_id"], WORK);
    let neither = t.err("todoist_create_comment", json!({"content": "x"})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    never_rest_v2(&f);
}

#[tokio::test]
async fn todoist_rejected_token_rate_limit_identity_and_no_rest_v2() {
    let fake = Fake::start(|r: &Recorded| {
        if r.path == "/api/v1/projects" && r.header("authorization") == Some(format!("Bearer {TOKEN}").as_str()) {
            return v1_error(429, "Too many requests", 35, "LIMITS_REACHED", json!({"retry_after": 120}))
                .with_header("retry-after", "120");
        }
        todoist_api(r)
    })
    .await;
    let wrong = app_with(&[
        ("WORKBENCH_TODOIST_BASE_URL", format!("{}/api/v1", fake.url)),
        ("WORKBENCH_TODOIST_TOKEN", "ffffffffffffffffffffffffffffffffffffffff".into()),
    ]);
    let e = wrong.err("todoist_list_tasks", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.ends_with("Unauthorized"), "{msg}");

    let t = app_with(&[
        ("WORKBENCH_TODOIST_BASE_URL", format!("{}/api/v1", fake.url)),
        ("WORKBENCH_TODOIST_TOKEN", TOKEN.to_string()),
    ]);

    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> =
            HashMap::from([("token".to_string(), Secret::new(token.to_string()))]);
        workbench::auth::from_fields(&plugins::todoist::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::todoist::INTEGRATION, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("Sam Rivera <sam@example.com>"));
    assert_eq!(fake.last().path, "/api/v1/user");
    let err = workbench::send::verify_identity(
        &t.app,
        &plugins::todoist::INTEGRATION,
        conn("0000000000000000000000000000000000000000"),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("Todoist rejected this credential"), "{err}");

    // The default host is API v1, and the retired REST v2 is gone for good.
    assert_eq!(plugins::todoist::INTEGRATION.hosts[0].default_url, "https://api.todoist.com/api/v1");
    never_rest_v2(&fake);

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let rl = t.err("todoist_list_projects", json!({})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn todoist_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("complete todoist task", "todoist_complete_task"),
        ("todoist p1 tasks due today", "todoist_search_tasks"),
        ("add a todo in todoist: buy milk tomorrow", "todoist_create_task"),
        ("what's on my todo list", "todoist_list_tasks"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
