//! Asana against a fake that checks the Bearer token, requires the `{"data": …}` envelope on writes,
//! answers `{errors: [{message, help}]}`, pages with JWT-shaped `next_page.offset` tokens, and
//! refuses task search on a free workspace with 402.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "2/1204000000000001/1208765432109876:3f2a9c8d7e6b5a4f3e2d1c0b9a8f7e6d";
const PAID: &str = "1200000000000001";
const FREE: &str = "1200000000000002";
const PROJECT: &str = "1201111111111111";
const TASK: &str = "1209999999999001";
/// Asana's offsets look like JWTs.
const OFFSET: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJib3JkZXJfcmFuayI6IltcIjEyMDk5OTk5OTk5OTkwMDJcIl0iLCJpYXQiOjE3NjQ0OTc2MDB9.k3J8x2Qv9Lw1pZr7Yt5Uo0Ni4Mb6Vc8Xa2Sd1Fg3Hj4";

fn errors(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"errors": [{"message": message, "help": "For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors"}]}),
    )
}

fn user(gid: &str, name: &str) -> Value {
    json!({"gid": gid, "name": name, "resource_type": "user"})
}

fn task(gid: &str, name: &str, completed: bool, due_on: Option<&str>) -> Value {
    json!({
        "gid": gid, "resource_type": "task", "name": name, "completed": completed,
        "assignee": user("1204000000000001", "Ada Lovelace"), "due_on": due_on, "due_at": null,
        "permalink_url": format!("https://app.asana.com/0/{PROJECT}/{gid}"), "modified_at": "2026-11-29T16:20:00.000Z"
    })
}

fn fields(r: &Recorded) -> Vec<String> {
    r.q("opt_fields").unwrap_or_default().split(',').map(str::to_string).collect()
}

fn data_of(r: &Recorded) -> Result<Value, Reply> {
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err(errors(400, "Could not parse request data, invalid JSON"));
    }
    let body: Value =
        serde_json::from_slice(&r.body).map_err(|_| errors(400, "Could not parse request data, invalid JSON"))?;
    match body.get("data") {
        Some(d) if d.is_object() => Ok(d.clone()),
        _ => Err(errors(400, "data: Missing input")),
    }
}

fn asana_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return errors(400, "missing user agent");
    }
    if r.header("authorization") != Some(format!("Bearer {TOKEN}").as_str()) {
        return errors(401, "Not Authorized");
    }
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/api/1.0/users/me") => Reply::json(
            200,
            json!({"data": {"gid": "1204000000000001", "email": "ada@acme.test", "name": "Ada Lovelace", "resource_type": "user",
                            "photo": null, "workspaces": [{"gid": PAID, "name": "Acme", "resource_type": "workspace"}]}}),
        ),
        ("GET", "/api/1.0/workspaces") => {
            let ws = |gid: &str, name: &str, org: bool| json!({"gid": gid, "name": name, "resource_type": "workspace", "is_organization": org});
            if r.q("offset") == Some(OFFSET) {
                Reply::json(200, json!({"data": [ws(FREE, "Personal Projects", false)], "next_page": null}))
            } else {
                Reply::json(
                    200,
                    json!({"data": [ws(PAID, "Acme", true)], "next_page": {"offset": OFFSET,
                        "path": format!("/workspaces?limit=1&offset={OFFSET}"), "uri": format!("https://app.asana.com/api/1.0/workspaces?limit=1&offset={OFFSET}")}}),
                )
            }
        }
        ("GET", "/api/1.0/projects") => {
            if r.q("workspace").is_none() && r.q("team").is_none() {
                return errors(400, "workspace: Missing input");
            }
            let archived = r.q("archived") == Some("true");
            Reply::json(
                200,
                json!({"data": [{
                    "gid": PROJECT, "resource_type": "project", "name": "Website relaunch", "archived": archived,
                    "owner": user("1204000000000001", "Ada Lovelace"), "team": {"gid": "1203", "name": "Marketing", "resource_type": "team"},
                    "due_on": "2026-12-15", "start_on": null, "modified_at": "2026-11-30T08:00:00.000Z",
                    "permalink_url": format!("https://app.asana.com/0/{PROJECT}/{PROJECT}")
                }], "next_page": null}),
            )
        }
        ("GET", "/api/1.0/tasks") => {
            let scopes = [
                r.q("project").is_some(),
                r.q("section").is_some(),
                r.q("assignee").is_some() && r.q("workspace").is_some(),
            ];
            if scopes.iter().filter(|s| **s).count() != 1 {
                return errors(
                    400,
                    "Must specify exactly one of project, tag, section, user task list, or assignee + workspace",
                );
            }
            if r.q("project").is_some_and(|p| p != PROJECT) {
                return errors(404, "project: Unknown object: 1201111111111000");
            }
            let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
            let mut all = vec![
                task(TASK, "Draft homepage copy", false, Some("2026-12-01")),
                task("1209999999999002", "Pick hero image", false, None),
                task("1209999999999003", "Book photographer", false, Some("2026-12-03")),
            ];
            if r.q("completed_since").is_none() {
                all.push(task("1209999999999000", "Kickoff meeting", true, Some("2026-11-01")));
            }
            let start = if r.q("offset") == Some(OFFSET) { limit } else { 0 };
            let page: Vec<Value> = all.iter().skip(start).take(limit).cloned().collect();
            let next = (start + limit < all.len()).then(|| {
                json!({"offset": OFFSET, "path": format!("/tasks?project={PROJECT}&limit={limit}&offset={OFFSET}"),
                       "uri": format!("https://app.asana.com/api/1.0/tasks?project={PROJECT}&limit={limit}&offset={OFFSET}")})
            });
            Reply::json(200, json!({"data": page, "next_page": next}))
        }
        ("GET", p) if p.ends_with("/tasks/search") => {
            if p == format!("/api/1.0/workspaces/{FREE}/tasks/search") {
                return errors(402, "Search is only available to premium users.");
            }
            if p != format!("/api/1.0/workspaces/{PAID}/tasks/search") {
                return errors(404, "workspace: Unknown object");
            }
            Reply::json(200, json!({"data": [task(TASK, "Draft homepage copy", false, Some("2026-12-01"))]}))
        }
        ("GET", p) if p == format!("/api/1.0/tasks/{TASK}") => {
            let wanted = fields(r);
            if !wanted.iter().any(|f| f == "notes") {
                return Reply::json(
                    200,
                    json!({"data": {"gid": TASK, "resource_type": "task", "name": "Draft homepage copy"}}),
                );
            }
            Reply::json(
                200,
                json!({"data": {
                    "gid": TASK, "resource_type": "task", "resource_subtype": "default_task", "name": "Draft homepage copy",
                    "notes": "Write the hero text and three feature blurbs.\nKeep it under 200 words.", "completed": false, "completed_at": null,
                    "assignee": {"gid": "1204000000000001", "name": "Ada Lovelace", "email": "ada@acme.test", "resource_type": "user"},
                    "due_on": "2026-12-01", "due_at": null, "start_on": null,
                    "projects": [{"gid": PROJECT, "name": "Website relaunch", "resource_type": "project"}],
                    "memberships": [{"project": {"gid": PROJECT, "name": "Website relaunch"}, "section": {"gid": "1205", "name": "In progress"}}],
                    "tags": [{"gid": "1206", "name": "copy"}], "parent": null, "num_subtasks": 2,
                    "followers": [user("1204000000000001", "Ada Lovelace"), user("1204000000000002", "Grace Hopper")],
                    "custom_fields": [{"gid": "1207", "name": "Effort", "display_value": "M"}, {"gid": "1208", "name": "Budget", "display_value": null}],
                    "created_at": "2026-11-20T10:00:00.000Z", "modified_at": "2026-11-29T16:20:00.000Z",
                    "permalink_url": format!("https://app.asana.com/0/{PROJECT}/{TASK}")
                }}),
            )
        }
        ("POST", "/api/1.0/tasks") => {
            let d = match data_of(r) {
                Ok(d) => d,
                Err(e) => return e,
            };
            if d["workspace"].is_null() && d["projects"].is_null() && d["parent"].is_null() {
                return errors(400, "You should specify one of workspace, parent, projects");
            }
            if d["projects"].as_array().is_some_and(|p| p.iter().any(|p| p != PROJECT)) {
                return errors(400, "projects: [0]: Not a recognized ID: 1");
            }
            let mut t = task("1209999999999100", d["name"].as_str().unwrap_or(""), false, d["due_on"].as_str());
            if d["assignee"] == "me" {
                t["assignee"] = user("1204000000000001", "Ada Lovelace");
            } else {
                t["assignee"] = Value::Null;
            }
            Reply::json(201, json!({"data": t}))
        }
        ("PUT", p) if p == format!("/api/1.0/tasks/{TASK}") => {
            let d = match data_of(r) {
                Ok(d) => d,
                Err(e) => return e,
            };
            let mut t = task(
                TASK,
                d["name"].as_str().unwrap_or("Draft homepage copy"),
                d["completed"] == true,
                Some("2026-12-01"),
            );
            if d.get("due_on").is_some_and(Value::is_null) {
                t["due_on"] = Value::Null;
            }
            if d.get("assignee").is_some_and(Value::is_null) {
                t["assignee"] = Value::Null;
            }
            Reply::json(200, json!({"data": t}))
        }
        ("POST", p) if p == format!("/api/1.0/tasks/{TASK}/stories") => {
            let d = match data_of(r) {
                Ok(d) => d,
                Err(e) => return e,
            };
            let text = match (d["text"].as_str(), d["html_text"].as_str()) {
                (Some(t), _) => t.to_string(),
                (None, Some(h)) => h.replace("<body>", "").replace("</body>", ""),
                _ => return errors(400, "text: Missing input"),
            };
            Reply::json(
                201,
                json!({"data": {"gid": "1210000000000001", "resource_type": "story", "created_at": "2026-11-30T09:30:00.000Z",
                                "created_by": user("1204000000000001", "Ada Lovelace"), "resource_subtype": "comment_added", "type": "comment",
                                "text": text, "is_pinned": d["is_pinned"] == true, "is_edited": false, "hearted": false, "num_hearts": 0}}),
            )
        }
        _ => errors(404, "Unknown object"),
    }
}

async fn asana_app() -> (TestApp, Fake) {
    let fake = Fake::start(asana_api).await;
    let t = app_with(&[
        ("WORKBENCH_ASANA_BASE_URL", format!("{}/api/1.0", fake.url)),
        ("WORKBENCH_ASANA_TOKEN", TOKEN.to_string()),
    ]);
    (t, fake)
}

fn auth_ok(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

fn body(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn asana_workspaces_page_with_jwt_shaped_offsets() {
    let (t, f) = asana_app().await;
    let p1 = t.ok("asana_list_workspaces", json!({"limit": 1})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/1.0/workspaces"));
    auth_ok(&req);
    assert_eq!(req.q("limit"), Some("1"));
    assert_eq!(req.q("offset"), None);
    assert_eq!(p1["workspaces"], json!([{"gid": PAID, "name": "Acme", "is_organization": true}]));
    let cursor = p1["next_cursor"].as_str().expect("a next page").to_string();
    assert!(!cursor.contains("redacted"), "the engine's scrubber must not eat the cursor: {cursor}");

    let p2 = t.ok("asana_list_workspaces", json!({"limit": 1, "cursor": cursor})).await;
    assert_eq!(f.last().q("offset"), Some(OFFSET), "the cursor carries Asana's offset back unchanged");
    assert_eq!(p2["workspaces"][0]["gid"], FREE);
    assert!(p2.get("next_cursor").is_none());

    let bad = t.err("asana_list_workspaces", json!({"cursor": "%%%"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn asana_list_projects_of_a_workspace() {
    let (t, f) = asana_app().await;
    let r = t.ok("asana_list_projects", json!({"workspace": PAID, "team": "1203"})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/1.0/projects"));
    auth_ok(&req);
    assert_eq!(req.q("workspace"), Some(PAID));
    assert_eq!(req.q("team"), Some("1203"));
    assert_eq!(req.q("archived"), Some("false"));
    assert_eq!(req.q("limit"), Some("50"));
    assert!(fields(&req).contains(&"permalink_url".to_string()));
    assert_eq!(
        r,
        json!({"projects": [{
            "gid": PROJECT, "name": "Website relaunch", "archived": false, "owner": "Ada Lovelace", "team": "Marketing",
            "due_on": "2026-12-15", "modified": "2026-11-30T08:00:00.000Z", "url": format!("https://app.asana.com/0/{PROJECT}/{PROJECT}")
        }]})
    );
    let bad = t.err("asana_list_projects", json!({"workspace": "Acme"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["problems"][0]["path"], "/workspace");
}

#[tokio::test]
async fn asana_list_tasks_open_by_default_and_paged() {
    let (t, f) = asana_app().await;
    let p1 = t.ok("asana_list_tasks", json!({"project": PROJECT, "limit": 2})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/1.0/tasks"));
    auth_ok(&req);
    assert_eq!(req.q("project"), Some(PROJECT));
    assert_eq!(req.q("completed_since"), Some("now"), "open tasks only unless asked");
    assert_eq!(req.q("limit"), Some("2"));
    assert_eq!(
        p1["tasks"][0],
        json!({"gid": TASK, "name": "Draft homepage copy", "completed": false, "assignee": "Ada Lovelace", "due": "2026-12-01",
               "modified": "2026-11-29T16:20:00.000Z", "url": format!("https://app.asana.com/0/{PROJECT}/{TASK}")})
    );
    assert!(p1["tasks"][1].get("due").is_none());
    let cursor = p1["next_cursor"].as_str().unwrap().to_string();
    let p2 = t.ok("asana_list_tasks", json!({"project": PROJECT, "limit": 2, "cursor": cursor})).await;
    assert_eq!(f.last().q("offset"), Some(OFFSET));
    assert_eq!(p2["tasks"].as_array().unwrap().len(), 1);
    assert!(p2.get("next_cursor").is_none());

    let mine = t
        .ok(
            "asana_list_tasks",
            json!({"assignee": "me", "workspace": PAID, "include_completed": true, "include_raw": true}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.q("assignee"), req.q("workspace"), req.q("completed_since")), (Some("me"), Some(PAID), None));
    assert_eq!(mine["tasks"].as_array().unwrap().len(), 4);
    let raw_bytes = mine["raw"].to_string().len();
    let mut shaped = mine.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped_bytes = shaped.to_string().len();
    eprintln!("asana_list_tasks: raw {raw_bytes} bytes -> shaped {shaped_bytes} bytes");
    assert!(shaped_bytes < raw_bytes);

    let before = f.requests().len();
    for args in [json!({}), json!({"assignee": "me"}), json!({"project": PROJECT, "section": "1205"})] {
        let e = t.err("asana_list_tasks", args).await;
        assert_eq!(e["code"], "INVALID_ARGUMENTS");
    }
    assert_eq!(f.requests().len(), before);

    // The provider's own message reaches the agent.
    let e = t.err("asana_list_tasks", json!({"project": "1201111111111000"})).await;
    assert_eq!(e["status"], 404);
    assert_eq!(e["message"], "asana answered 404: project: Unknown object: 1201111111111000");
}

#[tokio::test]
async fn asana_search_tasks_maps_filters_and_explains_the_free_plan_402() {
    let (t, f) = asana_app().await;
    let r = t
        .ok(
            "asana_search_tasks",
            json!({"workspace": PAID, "text": "homepage", "assignee_any": ["me"], "projects_any": [PROJECT], "completed": false,
                   "due_on_before": "2026-12-31", "sort_by": "due_date", "sort_ascending": true, "limit": 10}),
        )
        .await;
    let req = f.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", format!("/api/1.0/workspaces/{PAID}/tasks/search").as_str())
    );
    auth_ok(&req);
    for (k, v) in [
        ("text", "homepage"),
        ("assignee.any", "me"),
        ("projects.any", PROJECT),
        ("completed", "false"),
        ("due_on.before", "2026-12-31"),
        ("sort_by", "due_date"),
        ("sort_ascending", "true"),
        ("limit", "10"),
    ] {
        assert_eq!(req.q(k), Some(v), "{k}");
    }
    assert_eq!(
        r,
        json!({"tasks": [{"gid": TASK, "name": "Draft homepage copy", "completed": false, "assignee": "Ada Lovelace",
        "due": "2026-12-01", "modified": "2026-11-29T16:20:00.000Z", "url": format!("https://app.asana.com/0/{PROJECT}/{TASK}")}]})
    );

    let free = t.err("asana_search_tasks", json!({"workspace": FREE, "text": "x"})).await;
    assert_eq!(free["code"], "UPSTREAM_ERROR");
    assert_eq!(free["status"], 402);
    let msg = free["message"].as_str().unwrap();
    assert!(msg.contains("Search is only available to premium users."), "{msg}");
    assert!(msg.contains("premium (paid) Asana workspace") && msg.contains("asana_list_tasks"), "{msg}");

    let date = t.err("asana_search_tasks", json!({"workspace": PAID, "due_on_before": "next friday"})).await;
    assert_eq!(date["problems"][0]["path"], "/due_on_before");
}

#[tokio::test]
async fn asana_get_task_shapes_the_details() {
    let (t, f) = asana_app().await;
    let r = t.ok("asana_get_task", json!({"task_gid": TASK, "max_chars": 100})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", format!("/api/1.0/tasks/{TASK}").as_str()));
    auth_ok(&req);
    let wanted = fields(&req);
    for field in ["notes", "assignee.name", "num_subtasks", "memberships.section.name", "custom_fields.display_value"] {
        assert!(wanted.contains(&field.to_string()), "asks for {field}");
    }
    assert_eq!(
        r,
        json!({
            "gid": TASK, "name": "Draft homepage copy", "completed": false, "assignee": "Ada Lovelace", "assignee_email": "ada@acme.test",
            "due": "2026-12-01", "notes": "Write the hero text and three feature blurbs.\nKeep it under 200 words.",
            "projects": ["Website relaunch"], "sections": ["Website relaunch / In progress"], "tags": ["copy"], "subtasks": 2,
            "followers": ["Ada Lovelace", "Grace Hopper"], "custom_fields": {"Effort": "M"},
            "created": "2026-11-20T10:00:00.000Z", "modified": "2026-11-29T16:20:00.000Z", "url": format!("https://app.asana.com/0/{PROJECT}/{TASK}")
        })
    );
    let cut = t.ok("asana_get_task", json!({"task_gid": TASK, "max_chars": 50, "include_raw": true})).await;
    assert_eq!(cut["notes"], "Write the hero text and three feature blurbs.\nKeep");
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["raw"]["data"]["num_subtasks"], 2);
}

#[tokio::test]
async fn asana_create_task_wraps_the_body_in_data() {
    let (t, f) = asana_app().await;
    let r = t
        .ok(
            "asana_create_task",
            json!({"name": "Write launch email", "projects": [PROJECT], "assignee": "me", "due_on": "2026-12-05",
                   "notes": "Announce the relaunch", "followers": ["1204000000000002"]}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/1.0/tasks"));
    auth_ok(&req);
    assert_eq!(
        body(&req),
        json!({"data": {"name": "Write launch email", "projects": [PROJECT], "assignee": "me", "due_on": "2026-12-05",
                        "notes": "Announce the relaunch", "followers": ["1204000000000002"]}})
    );
    assert_eq!(
        r,
        json!({"gid": "1209999999999100", "name": "Write launch email", "completed": false, "assignee": "Ada Lovelace", "due": "2026-12-05",
               "modified": "2026-11-29T16:20:00.000Z", "url": format!("https://app.asana.com/0/{PROJECT}/1209999999999100")})
    );

    t.ok("asana_create_task", json!({"name": "Subtask", "parent": TASK})).await;
    assert_eq!(body(&f.last()), json!({"data": {"name": "Subtask", "parent": TASK}}));

    let before = f.requests().len();
    let nowhere = t.err("asana_create_task", json!({"name": "Floating"})).await;
    assert_eq!(nowhere["code"], "INVALID_ARGUMENTS");
    let both = t
        .err(
            "asana_create_task",
            json!({"name": "x", "workspace": PAID, "due_on": "2026-12-05", "due_at": "2026-12-05T10:00:00Z"}),
        )
        .await;
    assert_eq!(both["problems"][0]["path"], "/due_at");
    assert_eq!(f.requests().len(), before);
}

#[tokio::test]
async fn asana_update_task_completes_reassigns_and_clears() {
    let (t, f) = asana_app().await;
    let done = t.ok("asana_update_task", json!({"task_gid": TASK, "completed": true})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", format!("/api/1.0/tasks/{TASK}").as_str()));
    auth_ok(&req);
    assert_eq!(body(&req), json!({"data": {"completed": true}}));
    assert_eq!(done["completed"], true);

    let cleared = t
        .ok("asana_update_task", json!({"task_gid": TASK, "name": "Homepage copy v2", "assignee": "", "due_on": ""}))
        .await;
    assert_eq!(body(&f.last()), json!({"data": {"name": "Homepage copy v2", "assignee": null, "due_on": null}}));
    assert_eq!(cleared["name"], "Homepage copy v2");
    assert!(cleared.get("assignee").is_none() && cleared.get("due").is_none());

    let nothing = t.err("asana_update_task", json!({"task_gid": TASK})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn asana_create_comment_on_a_task() {
    let (t, f) = asana_app().await;
    let c = t
        .ok("asana_create_comment", json!({"task_gid": TASK, "text": "Draft is ready for review", "is_pinned": true}))
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", format!("/api/1.0/tasks/{TASK}/stories").as_str()));
    auth_ok(&req);
    assert_eq!(body(&req), json!({"data": {"text": "Draft is ready for review", "is_pinned": true}}));
    assert_eq!(
        c,
        json!({"gid": "1210000000000001", "task_gid": TASK, "text": "Draft is ready for review", "author": "Ada Lovelace",
               "created": "2026-11-30T09:30:00.000Z", "is_pinned": true})
    );
    t.ok("asana_create_comment", json!({"task_gid": TASK, "html_text": "<body>See <b>PR</b></body>"})).await;
    assert_eq!(body(&f.last()), json!({"data": {"html_text": "<body>See <b>PR</b></body>"}}));
    let neither = t.err("asana_create_comment", json!({"task_gid": TASK})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn asana_rejected_token_rate_limit_and_identity() {
    let fake = Fake::start(|r: &Recorded| {
        if r.path == "/api/1.0/workspaces" && r.header("authorization") == Some(format!("Bearer {TOKEN}").as_str()) {
            return errors(429, "You have made too many requests recently. Please, be chill.")
                .with_header("retry-after", "120");
        }
        asana_api(r)
    })
    .await;
    let wrong = app_with(&[
        ("WORKBENCH_ASANA_BASE_URL", format!("{}/api/1.0", fake.url)),
        ("WORKBENCH_ASANA_TOKEN", "2/1204000000000001/9999999999999999:deadbeefdeadbeefdeadbeefdeadbeef".into()),
    ]);
    let e = wrong.err("asana_list_projects", json!({"workspace": PAID})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Not Authorized"), "{msg}");

    let t = app_with(&[
        ("WORKBENCH_ASANA_BASE_URL", format!("{}/api/1.0", fake.url)),
        ("WORKBENCH_ASANA_TOKEN", TOKEN.to_string()),
    ]);

    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> =
            HashMap::from([("token".to_string(), Secret::new(token.to_string()))]);
        workbench::auth::from_fields(&plugins::asana::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::asana::INTEGRATION, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("Ada Lovelace <ada@acme.test>"));
    assert_eq!(fake.last().path, "/api/1.0/users/me");
    let err = workbench::send::verify_identity(&t.app, &plugins::asana::INTEGRATION, conn("0/revoked-token-0000"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Asana rejected this credential"), "{err}");

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let rl = t.err("asana_list_workspaces", json!({})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn asana_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("mark asana task complete", "asana_update_task"),
        ("comment on an asana task", "asana_create_comment"),
        ("search overdue asana tasks", "asana_search_tasks"),
        ("asana workspaces", "asana_list_workspaces"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
