//! Notion against a fake API on 127.0.0.1 that checks what Notion checks (Bearer secret,
//! `Notion-Version: 2026-03-11`, JSON bodies, the 100-block cap, property names and types against
//! the data source schema, no `archived`/`after` since 2026-03-11) and answers with Notion's
//! shapes: `{object: "error", code, message}`, `next_cursor`/`has_more` lists, databases holding
//! data sources, `in_trash`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const SECRET: &str = "ntn_4123456789012345678901234567890123456789012345";
const VERSION: &str = "2026-03-11";
const PAGE: &str = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const ROADMAP: &str = "2b3c4d5e-6f70-4b8c-9dae-1f2a3b4c5d6e";
const DB: &str = "3c4d5e6f-7081-4c9d-aebf-2a3b4c5d6e7f";
const DS: &str = "4d5e6f70-8192-4dae-bfc0-3b4c5d6e7f80";
const DB_MULTI: &str = "5e6f7081-92a3-4ebf-c0d1-4c5d6e7f8091";
const USER: &str = "6f708192-a3b4-4fc0-d1e2-5d6e7f8091a2";
const SLOW: &str = "7f8091a2-b3c4-4d5e-8f70-6e7f8091a2b3";
const DISCUSSION: &str = "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6";

fn rt(text: &str) -> Value {
    json!({"type": "text", "text": {"content": text, "link": null},
           "annotations": {"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
           "plain_text": text, "href": null})
}

fn error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"object": "error", "status": status, "code": code, "message": message, "request_id": "b5a1c6a4-0b5f-4d8e-9f0e-1a2b3c4d5e6f"}),
    )
}

fn not_found(id: &str, what: &str) -> Reply {
    error(
        404,
        "object_not_found",
        &format!(
            "Could not find {what} with ID: {id}. Make sure the relevant pages and databases are shared with your integration."
        ),
    )
}

fn user_obj() -> Value {
    json!({"object": "user", "id": USER, "name": "Ada Lovelace", "avatar_url": null, "type": "person", "person": {"email": "ada@example.com"}})
}

fn row(id: &str, title: &str, status: &str, points: u64) -> Value {
    json!({
        "object": "page", "id": id, "created_time": "2026-04-01T09:00:00.000Z", "last_edited_time": "2026-04-02T10:30:00.000Z",
        "created_by": {"object": "user", "id": USER}, "last_edited_by": {"object": "user", "id": USER},
        "cover": null, "icon": {"type": "emoji", "emoji": "🚀"},
        "parent": {"type": "data_source_id", "data_source_id": DS, "database_id": DB},
        "in_trash": false, "is_locked": false,
        "properties": {
            "Name": {"id": "title", "type": "title", "title": [rt(title)]},
            "Status": {"id": "%3EcL%5C", "type": "status", "status": {"id": "a1", "name": status, "color": "blue"}},
            "Tags": {"id": "Xq%3A~", "type": "multi_select", "multi_select": [{"id": "t1", "name": "marketing", "color": "red"}, {"id": "t2", "name": "blog", "color": "green"}]},
            "Due": {"id": "M%3BBw", "type": "date", "date": {"start": "2026-05-01", "end": null, "time_zone": null}},
            "Owner": {"id": "p%3Ce%3E", "type": "people", "people": [user_obj()]},
            "Points": {"id": "pts", "type": "number", "number": points},
            "Notes": {"id": "nts", "type": "rich_text", "rich_text": []},
            "Task ID": {"id": "uid", "type": "unique_id", "unique_id": {"prefix": "TASK", "number": 42}}
        },
        "url": format!("https://www.notion.so/{}-{}", title.replace(' ', "-"), id.replace('-', "")), "public_url": null
    })
}

fn roadmap_page() -> Value {
    json!({
        "object": "page", "id": ROADMAP, "created_time": "2026-03-01T09:00:00.000Z", "last_edited_time": "2026-04-03T08:00:00.000Z",
        "created_by": {"object": "user", "id": USER}, "last_edited_by": {"object": "user", "id": USER},
        "cover": null, "icon": {"type": "external", "external": {"url": "https://example.com/map.png"}},
        "parent": {"type": "workspace", "workspace": true}, "in_trash": false, "is_locked": false,
        "properties": {"title": {"id": "title", "type": "title", "title": [rt("Road map")]}},
        "url": "https://www.notion.so/Road-map-2b3c4d5e6f704b8c9dae1f2a3b4c5d6e", "public_url": null
    })
}

fn data_source() -> Value {
    json!({
        "object": "data_source", "id": DS, "title": [rt("Tasks")], "description": [],
        "parent": {"type": "database_id", "database_id": DB}, "database_parent": {"type": "page_id", "page_id": ROADMAP},
        "created_time": "2026-03-01T09:00:00.000Z", "last_edited_time": "2026-04-01T09:00:00.000Z", "in_trash": false,
        "url": "https://www.notion.so/3c4d5e6f70814c9daebf2a3b4c5d6e7f",
        "properties": {
            "Name": {"id": "title", "name": "Name", "type": "title", "title": {}},
            "Status": {"id": "%3EcL%5C", "name": "Status", "type": "status", "status": {
                "options": [{"id": "s1", "name": "Not started", "color": "default"}, {"id": "s2", "name": "In progress", "color": "blue"}, {"id": "s3", "name": "Done", "color": "green"}],
                "groups": [{"id": "g1", "name": "To-do", "color": "gray", "option_ids": ["s1"]}, {"id": "g2", "name": "In progress", "color": "blue", "option_ids": ["s2"]}, {"id": "g3", "name": "Complete", "color": "green", "option_ids": ["s3"]}]}},
            "Tags": {"id": "Xq%3A~", "name": "Tags", "type": "multi_select", "multi_select": {"options": [{"id": "t1", "name": "marketing", "color": "red"}, {"id": "t2", "name": "blog", "color": "green"}]}},
            "Due": {"id": "M%3BBw", "name": "Due", "type": "date", "date": {}},
            "Owner": {"id": "p%3Ce%3E", "name": "Owner", "type": "people", "people": {}},
            "Points": {"id": "pts", "name": "Points", "type": "number", "number": {"format": "number"}},
            "Notes": {"id": "nts", "name": "Notes", "type": "rich_text", "rich_text": {}},
            "Task ID": {"id": "uid", "name": "Task ID", "type": "unique_id", "unique_id": {"prefix": "TASK"}}
        }
    })
}

fn database(id: &str, sources: Value) -> Value {
    json!({
        "object": "database", "id": id, "title": [rt("Tasks")], "description": [rt("Team tasks")],
        "parent": {"type": "page_id", "page_id": ROADMAP}, "is_inline": false, "in_trash": false, "is_locked": false,
        "created_time": "2026-03-01T09:00:00.000Z", "last_edited_time": "2026-04-01T09:00:00.000Z",
        "data_sources": sources, "icon": null, "cover": null,
        "url": format!("https://www.notion.so/{}", id.replace('-', "")), "public_url": null
    })
}

fn block(id: &str, kind: &str, data: Value, has_children: bool) -> Value {
    json!({
        "object": "block", "id": id, "parent": {"type": "page_id", "page_id": ROADMAP},
        "created_time": "2026-03-01T09:00:00.000Z", "last_edited_time": "2026-03-01T09:00:00.000Z",
        "created_by": {"object": "user", "id": USER}, "last_edited_by": {"object": "user", "id": USER},
        "has_children": has_children, "in_trash": false, "type": kind, kind: data
    })
}

fn text(kind: &str, id: &str, s: &str, has_children: bool) -> Value {
    block(id, kind, json!({"rich_text": [rt(s)], "color": "default"}), has_children)
}

fn roadmap_blocks() -> Vec<Value> {
    let mut bold = rt("Ship v2");
    bold["annotations"]["bold"] = json!(true);
    let mut link = rt("the spec");
    link["text"]["link"] = json!({"url": "https://example.com/spec"});
    link["href"] = json!("https://example.com/spec");
    vec![
        text("heading_2", "b0000000-0000-4000-8000-000000000001", "Goals", false),
        block(
            "b0000000-0000-4000-8000-000000000002",
            "paragraph",
            json!({"rich_text": [bold, rt(" by June, see "), link], "color": "default"}),
            false,
        ),
        text("bulleted_list_item", "b0000000-0000-4000-8000-000000000003", "Launch", true),
        text("toggle", "b0000000-0000-4000-8000-000000000004", "Details", true),
        block(
            "b0000000-0000-4000-8000-000000000005",
            "code",
            json!({"rich_text": [rt("print('hi')")], "language": "python", "caption": []}),
            false,
        ),
        block("b0000000-0000-4000-8000-000000000006", "child_page", json!({"title": "Archive"}), true),
    ]
}

fn children_of(id: &str) -> Option<Vec<Value>> {
    match id {
        ROADMAP => Some(roadmap_blocks()),
        "b0000000-0000-4000-8000-000000000003" => {
            let mut done = text("to_do", "b0000000-0000-4000-8000-000000000032", "Tweet", false);
            done["to_do"]["checked"] = json!(true);
            Some(vec![text("bulleted_list_item", "b0000000-0000-4000-8000-000000000031", "Blog post", true), done])
        }
        "b0000000-0000-4000-8000-000000000031" => {
            Some(vec![text("paragraph", "b0000000-0000-4000-8000-000000000311", "Draft by Friday", false)])
        }
        "b0000000-0000-4000-8000-000000000004" => {
            Some(vec![text("paragraph", "b0000000-0000-4000-8000-000000000041", "Hidden text", false)])
        }
        _ => None,
    }
}

fn list(results: Vec<Value>, next: Option<&str>, kind: &str) -> Reply {
    Reply::json(
        200,
        json!({"object": "list", "results": results, "next_cursor": next, "has_more": next.is_some(), "type": kind, kind: {}, "request_id": "r-1"}),
    )
}

/// A page of `all`, paged by start_cursor (the id of the first item of the page).
fn paged(all: Vec<Value>, size: usize, start: Option<&str>, kind: &str) -> Reply {
    let from = match start {
        None => 0,
        Some(c) => match all.iter().position(|b| b["id"] == c) {
            Some(i) => i,
            None => return error(400, "validation_error", "The start_cursor provided is invalid: not a valid cursor"),
        },
    };
    let page: Vec<Value> = all.iter().skip(from).take(size).cloned().collect();
    let next = all.get(from + size).and_then(|b| b["id"].as_str());
    list(page, next, kind)
}

/// Checks request-ready blocks like Notion: at most 100, each with a known type and its data.
fn check_children(children: &Value) -> Result<(), Reply> {
    let Some(arr) = children.as_array() else {
        return Err(error(400, "validation_error", "body.children should be an array, instead was `undefined`."));
    };
    if arr.len() > 100 {
        return Err(error(
            400,
            "validation_error",
            &format!("body.children.length should be ≤ `100`, instead was `{}`.", arr.len()),
        ));
    }
    for b in arr {
        let kind = b["type"].as_str().unwrap_or_default();
        if !b[kind].is_object() {
            return Err(error(
                400,
                "validation_error",
                &format!("body.children[0].{kind} should be defined, instead was `undefined`."),
            ));
        }
    }
    Ok(())
}

fn ids_with_data(r: &Recorded) -> Result<Value, Reply> {
    if r.header("content-type") != Some("application/json") {
        return Err(error(400, "invalid_request", "Content-Type must be application/json"));
    }
    let body: Value =
        serde_json::from_slice(&r.body).map_err(|_| error(400, "invalid_json", "Error parsing JSON body."))?;
    if body.to_string().contains("\"archived\"") {
        return Err(error(
            400,
            "validation_error",
            "body.archived is not supported in this API version; use in_trash.",
        ));
    }
    Ok(body)
}

fn check_properties(props: &Map<String, Value>) -> Result<(), Reply> {
    let schema = data_source()["properties"].clone();
    for (name, v) in props {
        let Some(p) = schema.get(name) else {
            return Err(error(400, "validation_error", &format!("{name} is not a property that exists.")));
        };
        let t = p["type"].as_str().unwrap();
        if v.get(t).is_none() {
            return Err(error(400, "validation_error", &format!("{name} is expected to be {t}.")));
        }
        if t == "status"
            && !["Not started", "In progress", "Done"].contains(&v["status"]["name"].as_str().unwrap_or(""))
        {
            return Err(error(
                400,
                "validation_error",
                &format!("Invalid status option. Status option \"{}\" does not exist\".", v["status"]["name"]),
            ));
        }
    }
    Ok(())
}

fn notion(r: &Recorded, seq: &AtomicUsize) -> Reply {
    if !has_user_agent(r) {
        return error(400, "invalid_request", "bad request");
    }
    if r.header("authorization") != Some(&format!("Bearer {SECRET}")) {
        return error(401, "unauthorized", "API token is invalid.");
    }
    if r.header("notion-version") != Some(VERSION) {
        return error(
            400,
            "missing_version",
            "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.",
        );
    }
    let Some(path) = r.path.strip_prefix("/v1/") else {
        return error(400, "invalid_request_url", "Invalid request URL.");
    };
    let segs: Vec<&str> = path.split('/').collect();
    let body = if matches!(r.method.as_str(), "POST" | "PATCH") {
        match ids_with_data(r) {
            Ok(b) => b,
            Err(e) => return e,
        }
    } else {
        Value::Null
    };
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["users", "me"]) => Reply::json(
            200,
            json!({"object": "user", "id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "name": "Workbench", "avatar_url": null, "type": "bot",
                   "bot": {"owner": {"type": "workspace", "workspace": true}, "workspace_name": "Acme Inc", "workspace_limits": {"max_file_upload_size_in_bytes": 5368709120u64}}}),
        ),
        ("POST", ["search"]) => {
            if let Some(v) = body["filter"]["value"].as_str()
                && v != "page"
                && v != "data_source"
            {
                return error(
                    400,
                    "validation_error",
                    "body.filter.value should be `\"page\"` or `\"data_source\"`, instead was `\"database\"`.",
                );
            }
            let mut ds = data_source();
            ds["object"] = json!("data_source");
            let mut all = vec![roadmap_page(), row(PAGE, "Write launch post", "In progress", 3), ds];
            if body["query"] == "nothing here" {
                all.clear();
            }
            if body["filter"]["value"] == "data_source" {
                all.retain(|o| o["object"] == "data_source");
            }
            let size = body["page_size"].as_u64().unwrap_or(100) as usize;
            paged(all, size, body["start_cursor"].as_str(), "page_or_data_source")
        }
        ("GET", ["pages", SLOW]) => {
            error(429, "rate_limited", "You have been rate limited. Please try again in a few minutes.")
                .with_header("retry-after", "120")
        }
        ("GET", ["pages", PAGE]) => Reply::json(200, row(PAGE, "Write launch post", "In progress", 3)),
        ("GET", ["pages", ROADMAP]) => Reply::json(200, roadmap_page()),
        ("GET", ["pages", id]) => not_found(id, "page"),
        ("GET", ["blocks", id, "children"]) => {
            let size: usize = r.q("page_size").and_then(|s| s.parse().ok()).unwrap_or(100);
            if size > 100 {
                return error(400, "validation_error", "query.page_size should be ≤ `100`.");
            }
            match children_of(id) {
                Some(all) => paged(all, size, r.q("start_cursor"), "block"),
                None => not_found(id, "block"),
            }
        }
        ("POST", ["pages"]) => {
            if let Err(e) = check_children(&body["children"])
                .or_else(|e| if body.get("children").is_none() { Ok(()) } else { Err(e) })
            {
                return e;
            }
            let props = body["properties"].as_object().cloned().unwrap_or_default();
            let parent = &body["parent"];
            let mut page = if parent["data_source_id"] == DS {
                if let Err(e) = check_properties(&props) {
                    return e;
                }
                let title = props.get("Name").map(|t| t["title"][0]["text"]["content"].clone()).unwrap_or_default();
                let mut p = row("8a9b0c1d-2e3f-4a5b-8c7d-9e0f1a2b3c4d", title.as_str().unwrap_or(""), "Not started", 0);
                if let Some(s) = props.get("Status") {
                    p["properties"]["Status"]["status"]["name"] = s["status"]["name"].clone();
                }
                p
            } else if parent["page_id"] == ROADMAP {
                if props.keys().any(|k| k != "title") {
                    return error(
                        400,
                        "validation_error",
                        "Invalid property identifier. Pages with a page parent only have a title.",
                    );
                }
                let mut p = roadmap_page();
                p["id"] = json!("9b0c1d2e-3f4a-4b6c-9d8e-0f1a2b3c4d5e");
                p["parent"] = json!({"type": "page_id", "page_id": ROADMAP});
                p["properties"]["title"]["title"] =
                    json!([rt(props["title"]["title"][0]["text"]["content"].as_str().unwrap_or(""))]);
                p["url"] = json!("https://www.notion.so/Launch-notes-9b0c1d2e3f4a4b6c9d8e0f1a2b3c4d5e");
                p
            } else {
                let id = parent["page_id"].as_str().or(parent["data_source_id"].as_str()).unwrap_or("");
                return not_found(id, "page");
            };
            page["icon"] = body.get("icon").cloned().unwrap_or(Value::Null);
            Reply::json(200, page)
        }
        ("PATCH", ["pages", PAGE]) => {
            let mut page = row(PAGE, "Write launch post", "In progress", 3);
            if let Some(props) = body["properties"].as_object() {
                if let Err(e) = check_properties(props) {
                    return e;
                }
                for (k, v) in props {
                    let t = page["properties"][k]["type"].as_str().unwrap().to_string();
                    page["properties"][k][&t] = v[&t].clone();
                }
            }
            if let Some(t) = body.get("in_trash") {
                page["in_trash"] = t.clone();
            }
            if let Some(i) = body.get("icon") {
                page["icon"] = i.clone();
            }
            Reply::json(200, page)
        }
        ("PATCH", ["blocks", id, "children"]) => {
            if body.get("after").is_some() {
                return error(
                    400,
                    "validation_error",
                    "body.after is not supported in this API version; use position.",
                );
            }
            if let Err(e) = check_children(&body["children"]) {
                return e;
            }
            if children_of(id).is_none() && *id != "9b0c1d2e-3f4a-4b6c-9d8e-0f1a2b3c4d5e" {
                return not_found(id, "block");
            }
            if let Some(p) = body.get("position") {
                let ok = match p["type"].as_str() {
                    Some("start") | Some("end") => true,
                    Some("after_block") => p["after_block"]["id"].is_string(),
                    _ => false,
                };
                if !ok {
                    return error(
                        400,
                        "validation_error",
                        "body.position should be an object with type start, end or after_block.",
                    );
                }
            }
            let created: Vec<Value> = body["children"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    let n = seq.fetch_add(1, Ordering::SeqCst) + 1;
                    let kind = c["type"].as_str().unwrap();
                    let mut data = c[kind].clone();
                    let has_children = data.as_object_mut().unwrap().remove("children").is_some();
                    block(&format!("c0000000-0000-4000-8000-{n:012}"), kind, data, has_children)
                })
                .collect();
            list(created, None, "block")
        }
        ("GET", ["databases", DB]) => Reply::json(200, database(DB, json!([{"id": DS, "name": "Tasks"}]))),
        ("GET", ["databases", DB_MULTI]) => Reply::json(
            200,
            database(
                DB_MULTI,
                json!([{"id": DS, "name": "Tasks"}, {"id": "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", "name": "Bugs"}]),
            ),
        ),
        ("GET", ["databases", id]) => not_found(id, "database"),
        ("GET", ["data_sources", DS]) => Reply::json(200, data_source()),
        ("POST", ["data_sources", DS, "query"]) => {
            let size = body["page_size"].as_u64().unwrap_or(100) as usize;
            if let Some(f) = body.get("filter")
                && f.get("property").is_some_and(|p| p != "Status")
            {
                return error(
                    400,
                    "validation_error",
                    &format!("Could not find property with name or id: {}", f["property"].as_str().unwrap_or("")),
                );
            }
            let all = vec![
                row(PAGE, "Write launch post", "In progress", 3),
                row("8a9b0c1d-2e3f-4a5b-8c7d-9e0f1a2b3c4e", "Record demo", "Done", 5),
                row("8a9b0c1d-2e3f-4a5b-8c7d-9e0f1a2b3c4f", "Update docs", "Not started", 1),
            ];
            paged(all, size, body["start_cursor"].as_str(), "page_or_data_source")
        }
        ("POST", ["comments"]) => {
            let rich: Vec<Value> = body["rich_text"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    let mut t = t.clone();
                    t["plain_text"] = t["text"]["content"].clone();
                    t
                })
                .collect();
            let (page, discussion) = if let Some(p) = body["parent"]["page_id"].as_str() {
                if p != PAGE {
                    return not_found(p, "page");
                }
                (p.to_string(), "e2f3a4b5-c6d7-4e8f-9a0b-c1d2e3f4a5b6".to_string())
            } else if body["discussion_id"] == DISCUSSION {
                (PAGE.to_string(), DISCUSSION.to_string())
            } else {
                return error(
                    400,
                    "validation_error",
                    "body failed validation: body.parent should be defined, instead was `undefined`.",
                );
            };
            Reply::json(
                200,
                json!({"object": "comment", "id": "f3a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8", "parent": {"type": "page_id", "page_id": page},
                       "discussion_id": discussion, "created_time": "2026-04-05T12:00:00.000Z", "last_edited_time": "2026-04-05T12:00:00.000Z",
                       "created_by": {"object": "user", "id": "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"}, "rich_text": rich, "display_name": {"type": "integration", "resolved_name": "Workbench"}}),
            )
        }
        _ => error(400, "invalid_request_url", "Invalid request URL."),
    }
}

async fn notion_app_with(secret: &str) -> (TestApp, Fake) {
    let seq = Arc::new(AtomicUsize::new(0));
    let fake = Fake::start(move |r| notion(r, &seq)).await;
    let t = app_with(&[
        ("WORKBENCH_NOTION_BASE_URL", format!("{}/v1", fake.url)),
        ("WORKBENCH_NOTION_TOKEN", secret.into()),
    ]);
    (t, fake)
}

/// Notion without the outbound-data guard, for tests that count the requests a write sends.
async fn notion_app_unguarded() -> (TestApp, Fake) {
    let seq = Arc::new(AtomicUsize::new(0));
    let fake = Fake::start(move |r| notion(r, &seq)).await;
    let t = app_with(&[
        ("WORKBENCH_NOTION_BASE_URL", format!("{}/v1", fake.url)),
        ("WORKBENCH_NOTION_TOKEN", SECRET.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    (t, fake)
}

async fn notion_app() -> (TestApp, Fake) {
    notion_app_with(SECRET).await
}

fn sent(r: &Recorded) -> Value {
    assert_eq!(r.header("notion-version"), Some(VERSION));
    assert_eq!(r.header("authorization"), Some(format!("Bearer {SECRET}").as_str()));
    serde_json::from_slice(&r.body).unwrap()
}

fn calls(fake: &Fake) -> Vec<(String, String)> {
    fake.requests().iter().map(|r| (r.method.clone(), r.path.clone())).collect()
}

fn call(m: &str, p: &str) -> (String, String) {
    (m.to_string(), format!("/v1{p}"))
}

#[tokio::test]
async fn notion_search_pages_maps_filters_and_pages() {
    let (t, fake) = notion_app().await;
    let r = t.ok("notion_search_pages", json!({"query": "launch", "limit": 2, "sort": "last_edited_newest"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/search"));
    assert_eq!(
        sent(&req),
        json!({"page_size": 2, "query": "launch", "sort": {"direction": "descending", "timestamp": "last_edited_time"}})
    );
    assert_eq!(
        r["results"],
        json!([
            {"object": "page", "id": ROADMAP, "title": "Road map", "url": "https://www.notion.so/Road-map-2b3c4d5e6f704b8c9dae1f2a3b4c5d6e",
             "parent": {"type": "workspace"}, "last_edited_time": "2026-04-03T08:00:00.000Z"},
            {"object": "page", "id": PAGE, "title": "Write launch post", "url": "https://www.notion.so/Write-launch-post-1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d",
             "parent": {"type": "database", "id": DB, "data_source_id": DS}, "last_edited_time": "2026-04-02T10:30:00.000Z"}
        ])
    );
    let cursor = r["next_cursor"].as_str().unwrap().to_string();
    assert_eq!(cursor, DS);
    let r2 = t.ok("notion_search_pages", json!({"query": "launch", "limit": 2, "cursor": cursor})).await;
    assert_eq!(sent(&fake.last())["start_cursor"], DS);
    assert_eq!(
        r2["results"],
        json!([{"object": "database", "id": DB, "data_source_id": DS, "title": "Tasks", "url": "https://www.notion.so/3c4d5e6f70814c9daebf2a3b4c5d6e7f", "last_edited_time": "2026-04-01T09:00:00.000Z"}])
    );
    assert!(r2.get("next_cursor").is_none());

    let dbs = t.ok("notion_search_pages", json!({"filter": "database"})).await;
    assert_eq!(sent(&fake.last()), json!({"page_size": 20, "filter": {"property": "object", "value": "data_source"}}));
    assert_eq!(dbs["results"].as_array().unwrap().len(), 1);
    let none = t.ok("notion_search_pages", json!({"query": "nothing here"})).await;
    assert!(none["note"].as_str().unwrap().contains("Connections"), "{none}");
}

#[tokio::test]
async fn notion_get_page_simplifies_properties() {
    let (t, fake) = notion_app().await;
    let url = "https://www.notion.so/acme/Write-launch-post-1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d?pvs=4";
    let p = t.ok("notion_get_page", json!({"page_id": url})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", format!("/v1/pages/{PAGE}").as_str()));
    assert_eq!(req.header("notion-version"), Some(VERSION));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {SECRET}").as_str()));
    assert_eq!(
        p,
        json!({
            "id": PAGE, "title": "Write launch post", "url": "https://www.notion.so/Write-launch-post-1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d",
            "parent": {"type": "database", "id": DB, "data_source_id": DS}, "icon": "🚀",
            "created_time": "2026-04-01T09:00:00.000Z", "last_edited_time": "2026-04-02T10:30:00.000Z",
            "properties": {"Status": "In progress", "Tags": ["marketing", "blog"], "Due": "2026-05-01", "Owner": ["Ada Lovelace"], "Points": 3, "Task ID": "TASK-42"}
        })
    );
    let missing = t.err("notion_get_page", json!({"page_id": "0f0f0f0f0f0f4f0f8f0f0f0f0f0f0f0f"})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
    let m = missing["message"].as_str().unwrap();
    assert!(
        m.starts_with("notion answered 404: object_not_found: Could not find page")
            && m.contains("shared with your integration"),
        "{m}"
    );
    let bad = t.err("notion_get_page", json!({"page_id": "Road map"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn notion_get_page_content_reads_nested_blocks_as_markdown() {
    let (t, fake) = notion_app().await;
    let r = t.ok("notion_get_page_content", json!({"page_id": ROADMAP})).await;
    let mut reqs: Vec<(String, Option<String>)> =
        fake.requests().iter().map(|r| (r.path.clone(), r.q("page_size").map(str::to_string))).collect();
    assert_eq!(reqs.remove(0), (format!("/v1/blocks/{ROADMAP}/children"), Some("100".into())));
    reqs.sort();
    assert_eq!(
        reqs,
        [
            ("/v1/blocks/b0000000-0000-4000-8000-000000000003/children".to_string(), Some("100".into())),
            ("/v1/blocks/b0000000-0000-4000-8000-000000000004/children".to_string(), Some("100".into())),
            ("/v1/blocks/b0000000-0000-4000-8000-000000000031/children".to_string(), Some("100".into())),
        ],
        "list items and toggles are expanded; the child page is not"
    );
    assert_eq!(
        r["markdown"],
        "## Goals\n\n**Ship v2** by June, see [the spec](https://example.com/spec)\n\n- Launch\n  - Blog post\n    Draft by Friday\n  - [x] Tweet\n\n▸ Details\n  Hidden text\n\n```python\nprint('hi')\n```\n\n📄 Archive (child page b0000000-0000-4000-8000-000000000006)"
    );
    assert_eq!(r["block_count"], 10);
    assert!(r.get("truncated").is_none() && r.get("next_cursor").is_none());

    // Top-level paging, and a depth limit that leaves nested blocks unread (and says so).
    let p1 = t.ok("notion_get_page_content", json!({"page_id": ROADMAP, "limit": 3, "max_depth": 0})).await;
    assert_eq!(fake.last().q("page_size"), Some("3"));
    assert_eq!(p1["nested_blocks_not_read"], 1);
    let cursor = p1["next_cursor"].as_str().unwrap().to_string();
    let p2 = t
        .ok("notion_get_page_content", json!({"page_id": ROADMAP, "limit": 3, "max_depth": 0, "cursor": cursor}))
        .await;
    assert_eq!(fake.last().q("start_cursor"), Some("b0000000-0000-4000-8000-000000000004"));
    assert!(p2["markdown"].as_str().unwrap().starts_with("▸ Details\n\n```python"));
    assert!(p2.get("next_cursor").is_none());
}

#[tokio::test]
async fn notion_create_page_under_a_page_with_markdown() {
    let (t, fake) = notion_app().await;
    let r = t
        .ok(
            "notion_create_page",
            json!({"parent_id": ROADMAP, "title": "Launch notes", "icon": "📝", "content": "# Plan\n\n- [ ] Write **post**\n- [x] Book room"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/pages"));
    assert_eq!(
        sent(&req),
        json!({
            "parent": {"type": "page_id", "page_id": ROADMAP},
            "properties": {"title": {"title": [{"type": "text", "text": {"content": "Launch notes"}}]}},
            "icon": {"type": "emoji", "emoji": "📝"},
            "children": [
                {"object": "block", "type": "heading_1", "heading_1": {"rich_text": [{"type": "text", "text": {"content": "Plan"}}]}},
                {"object": "block", "type": "to_do", "to_do": {"rich_text": [
                    {"type": "text", "text": {"content": "Write "}},
                    {"type": "text", "text": {"content": "post"}, "annotations": {"bold": true}}
                ], "checked": false}},
                {"object": "block", "type": "to_do", "to_do": {"rich_text": [{"type": "text", "text": {"content": "Book room"}}], "checked": true}}
            ]
        })
    );
    assert_eq!(r["id"], "9b0c1d2e-3f4a-4b6c-9d8e-0f1a2b3c4d5e");
    assert_eq!(r["title"], "Launch notes");
    assert_eq!(r["parent"], json!({"type": "page", "id": ROADMAP}));
    assert_eq!(r["blocks_added"], 3);

    // More than 100 blocks: 100 go with the page, the rest are appended in order.
    let long: String = (1..=130).map(|i| format!("Paragraph {i}\n\n")).collect();
    let r = t.ok("notion_create_page", json!({"parent_id": ROADMAP, "title": "Long", "content": long})).await;
    let reqs = fake.requests();
    let create = &reqs[reqs.len() - 2];
    assert_eq!(sent(create)["children"].as_array().unwrap().len(), 100);
    let append = reqs.last().unwrap();
    assert_eq!(
        (append.method.as_str(), append.path.as_str()),
        ("PATCH", "/v1/blocks/9b0c1d2e-3f4a-4b6c-9d8e-0f1a2b3c4d5e/children")
    );
    let rest = sent(append);
    assert_eq!(rest["children"].as_array().unwrap().len(), 30);
    assert_eq!(rest["children"][0]["paragraph"]["rich_text"][0]["text"]["content"], "Paragraph 101");
    assert!(rest.get("position").is_none(), "appending at the end needs no position");
    assert_eq!(r["blocks_added"], 130);

    let e = t
        .err("notion_create_page", json!({"parent_id": ROADMAP, "title": "x", "properties": {"Status": "Done"}}))
        .await;
    assert_eq!(e["problems"][0]["path"], "/properties");
}

#[tokio::test]
async fn notion_create_page_in_a_database_resolves_the_data_source() {
    let (t, fake) = notion_app_unguarded().await;
    let r = t
        .ok(
            "notion_create_page",
            json!({"parent_id": DB, "parent_type": "database", "title": "Plan webinar",
                   "properties": {"Status": "In progress", "Tags": ["marketing"], "Due": "2026-06-01", "Points": 2, "Owner": [USER]}}),
        )
        .await;
    assert_eq!(
        calls(&fake),
        [call("GET", &format!("/databases/{DB}")), call("GET", &format!("/data_sources/{DS}")), call("POST", "/pages")]
    );
    assert_eq!(
        sent(&fake.last()),
        json!({
            "parent": {"type": "data_source_id", "data_source_id": DS},
            "properties": {
                "Status": {"status": {"name": "In progress"}},
                "Tags": {"multi_select": [{"name": "marketing"}]},
                "Due": {"date": {"start": "2026-06-01"}},
                "Points": {"number": 2},
                "Owner": {"people": [{"id": USER}]},
                "Name": {"title": [{"type": "text", "text": {"content": "Plan webinar"}}]}
            }
        })
    );
    assert_eq!(r["title"], "Plan webinar");
    assert_eq!(r["properties"]["Status"], "In progress");

    let typo = t
        .err(
            "notion_create_page",
            json!({"parent_id": DB, "parent_type": "database", "title": "x", "properties": {"Stauts": "Done"}}),
        )
        .await;
    assert_eq!(typo["problems"][0]["path"], "/properties/Stauts");
    assert!(typo["problems"][0]["problem"].as_str().unwrap().contains("Name, Status, Tags, Due"), "{typo}");
    // The provider's own validation message reaches the agent.
    let option = t
        .err(
            "notion_create_page",
            json!({"parent_id": DS, "parent_type": "data_source", "title": "x", "properties": {"Status": "Blocked"}}),
        )
        .await;
    assert_eq!(option["status"], 400);
    assert!(option["message"].as_str().unwrap().contains("validation_error: Invalid status option"), "{option}");
    let multi =
        t.err("notion_create_page", json!({"parent_id": DB_MULTI, "parent_type": "database", "title": "x"})).await;
    assert_eq!(multi["code"], "INVALID_ARGUMENTS");
    assert!(multi["message"].as_str().unwrap().contains("Bugs (0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d)"), "{multi}");
    assert_eq!(multi["problems"][0]["path"], "/parent_type");
}

#[tokio::test]
async fn notion_update_page_sets_properties_title_and_trash() {
    let (t, fake) = notion_app_unguarded().await;
    let r = t
        .ok(
            "notion_update_page",
            json!({"page_id": PAGE, "title": "Write launch post v2", "properties": {"Status": "Done", "Points": 5}}),
        )
        .await;
    assert_eq!(calls(&fake), [call("GET", &format!("/pages/{PAGE}")), call("PATCH", &format!("/pages/{PAGE}"))]);
    assert_eq!(
        sent(&fake.last()),
        json!({"properties": {
            "Status": {"status": {"name": "Done"}},
            "Points": {"number": 5},
            "Name": {"title": [{"type": "text", "text": {"content": "Write launch post v2"}}]}
        }})
    );
    assert_eq!(r["title"], "Write launch post v2");
    assert_eq!(r["properties"]["Status"], "Done");
    assert_eq!(r["properties"]["Points"], 5);

    let (t, fake) = notion_app_unguarded().await;
    let trashed = t.ok("notion_update_page", json!({"page_id": PAGE, "in_trash": true, "icon": "none"})).await;
    assert_eq!(calls(&fake), [call("PATCH", &format!("/pages/{PAGE}"))], "no properties, no lookup");
    assert_eq!(sent(&fake.last()), json!({"in_trash": true, "icon": null}));
    assert_eq!(trashed["in_trash"], true);
    assert!(trashed.get("icon").is_none());
    let nothing = t.err("notion_update_page", json!({"page_id": PAGE})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn notion_add_blocks_positions_and_batches() {
    let (t, fake) = notion_app().await;
    let r = t.ok("notion_add_blocks", json!({"page_id": ROADMAP, "content": "## Update\n\nAll good."})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", format!("/v1/blocks/{ROADMAP}/children").as_str()));
    assert_eq!(
        sent(&req),
        json!({"children": [
            {"object": "block", "type": "heading_2", "heading_2": {"rich_text": [{"type": "text", "text": {"content": "Update"}}]}},
            {"object": "block", "type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": "All good."}}]}}
        ]})
    );
    assert_eq!(
        r,
        json!({"page_id": ROADMAP, "blocks_added": 2, "first_block_id": "c0000000-0000-4000-8000-000000000001", "last_block_id": "c0000000-0000-4000-8000-000000000002"})
    );

    t.ok(
        "notion_add_blocks",
        json!({"page_id": ROADMAP, "content": "- first", "after_block_id": "b0000000000040008000000000000001"}),
    )
    .await;
    assert_eq!(
        sent(&fake.last())["position"],
        json!({"type": "after_block", "after_block": {"id": "b0000000-0000-4000-8000-000000000001"}})
    );

    // 150 blocks at the start: the second batch goes after the first batch's last block.
    let many: String = (1..=150).map(|i| format!("- item {i}\n")).collect();
    let r = t.ok("notion_add_blocks", json!({"page_id": ROADMAP, "content": many, "position": "start"})).await;
    let reqs = fake.requests();
    let (a, b) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!(sent(a)["position"], json!({"type": "start"}));
    assert_eq!(sent(a)["children"].as_array().unwrap().len(), 100);
    assert_eq!(
        sent(b)["position"],
        json!({"type": "after_block", "after_block": {"id": "c0000000-0000-4000-8000-000000000103"}})
    );
    assert_eq!(sent(b)["children"].as_array().unwrap().len(), 50);
    assert_eq!(r["blocks_added"], 150);

    let missing =
        t.err("notion_add_blocks", json!({"page_id": "0f0f0f0f0f0f4f0f8f0f0f0f0f0f0f0f", "content": "x"})).await;
    assert_eq!(missing["status"], 404);
}

#[tokio::test]
async fn notion_get_database_shows_the_schema_of_each_data_source() {
    let (t, fake) = notion_app().await;
    let d = t.ok("notion_get_database", json!({"database_id": DB})).await;
    assert_eq!(calls(&fake), [call("GET", &format!("/databases/{DB}")), call("GET", &format!("/data_sources/{DS}"))]);
    assert_eq!(fake.requests()[1].header("notion-version"), Some(VERSION));
    assert_eq!(d["title"], "Tasks");
    assert_eq!(d["description"], "Team tasks");
    assert_eq!(d["parent"], json!({"type": "page", "id": ROADMAP}));
    let ds = &d["data_sources"][0];
    assert_eq!(ds["id"], DS);
    assert_eq!(ds["name"], "Tasks");
    assert_eq!(
        ds["properties"]["Status"],
        json!({"type": "status", "options": ["Not started", "In progress", "Done"], "groups": ["To-do", "In progress", "Complete"]})
    );
    assert_eq!(ds["properties"]["Tags"], json!({"type": "multi_select", "options": ["marketing", "blog"]}));
    assert_eq!(ds["properties"]["Points"], json!({"type": "number", "format": "number"}));
    assert_eq!(ds["properties"]["Name"], json!({"type": "title"}));
    let missing = t.err("notion_get_database", json!({"database_id": "0f0f0f0f0f0f4f0f8f0f0f0f0f0f0f0f"})).await;
    assert!(missing["message"].as_str().unwrap().contains("Could not find database"));
}

#[tokio::test]
async fn notion_query_database_filters_and_pages_rows() {
    let (t, fake) = notion_app().await;
    let filter = json!({"property": "Status", "status": {"does_not_equal": "Done"}});
    let sorts = json!([{"property": "Due", "direction": "ascending"}]);
    let r =
        t.ok("notion_query_database", json!({"database_id": DB, "filter": filter, "sorts": sorts, "limit": 2})).await;
    assert_eq!(
        calls(&fake),
        [call("GET", &format!("/databases/{DB}")), call("POST", &format!("/data_sources/{DS}/query"))]
    );
    assert_eq!(sent(&fake.last()), json!({"page_size": 2, "filter": filter, "sorts": sorts}));
    assert_eq!(r["data_source_id"], DS);
    assert_eq!(
        r["rows"][1],
        json!({
            "id": "8a9b0c1d-2e3f-4a5b-8c7d-9e0f1a2b3c4e", "title": "Record demo",
            "url": "https://www.notion.so/Record-demo-8a9b0c1d2e3f4a5b8c7d9e0f1a2b3c4e",
            "properties": {"Status": "Done", "Tags": ["marketing", "blog"], "Due": "2026-05-01", "Owner": ["Ada Lovelace"], "Points": 5, "Task ID": "TASK-42"},
            "last_edited_time": "2026-04-02T10:30:00.000Z"
        })
    );
    let cursor = r["next_cursor"].as_str().unwrap().to_string();
    let r2 = t.ok("notion_query_database", json!({"data_source_id": DS, "limit": 2, "cursor": cursor})).await;
    assert_eq!(
        calls(&fake).last().unwrap(),
        &call("POST", &format!("/data_sources/{DS}/query")),
        "a data source id needs no lookup"
    );
    assert_eq!(sent(&fake.last()), json!({"page_size": 2, "start_cursor": "8a9b0c1d-2e3f-4a5b-8c7d-9e0f1a2b3c4f"}));
    assert_eq!(r2["rows"].as_array().unwrap().len(), 1);
    assert!(r2.get("next_cursor").is_none());

    let bad = t
        .err(
            "notion_query_database",
            json!({"database_id": DB, "filter": {"property": "Priority", "select": {"equals": "High"}}}),
        )
        .await;
    assert_eq!(bad["status"], 400);
    assert!(bad["message"].as_str().unwrap().contains("Could not find property with name or id: Priority"));
    let neither = t.err("notion_query_database", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    let multi = t.err("notion_query_database", json!({"database_id": DB_MULTI})).await;
    assert_eq!(multi["problems"][0]["path"], "/data_source_id");
}

#[tokio::test]
async fn notion_query_database_is_smaller_than_the_raw_rows() {
    let (t, _) = notion_app().await;
    let r = t.ok("notion_query_database", json!({"data_source_id": DS, "include_raw": true})).await;
    let raw = r["raw"].to_string().len();
    let mut shaped = r.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = shaped.to_string().len();
    eprintln!("notion_query_database: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped * 3 < raw, "{shaped} vs {raw}");
}

#[tokio::test]
async fn notion_create_comment_on_a_page_or_in_a_discussion() {
    let (t, fake) = notion_app().await;
    let c = t.ok("notion_create_comment", json!({"page_id": PAGE, "text": "Looks **great**"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v1/comments"));
    assert_eq!(
        sent(&req),
        json!({"parent": {"page_id": PAGE}, "rich_text": [
            {"type": "text", "text": {"content": "Looks "}},
            {"type": "text", "text": {"content": "great"}, "annotations": {"bold": true}}
        ]})
    );
    assert_eq!(
        c,
        json!({"id": "f3a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8", "discussion_id": "e2f3a4b5-c6d7-4e8f-9a0b-c1d2e3f4a5b6", "page_id": PAGE, "created_time": "2026-04-05T12:00:00.000Z", "text": "Looks great"})
    );
    let reply = t.ok("notion_create_comment", json!({"discussion_id": DISCUSSION, "text": "Agreed"})).await;
    assert_eq!(
        sent(&fake.last()),
        json!({"discussion_id": DISCUSSION, "rich_text": [{"type": "text", "text": {"content": "Agreed"}}]})
    );
    assert_eq!(reply["discussion_id"], DISCUSSION);
    let both = t.err("notion_create_comment", json!({"page_id": PAGE, "discussion_id": DISCUSSION, "text": "x"})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn notion_rejected_secret_and_rate_limit() {
    let (t, _) = notion_app_with("ntn_wrong").await;
    let e = t.err("notion_get_page", json!({"page_id": PAGE})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("reconnect") && m.contains("unauthorized: API token is invalid."), "{e}");

    let (t, _) = notion_app().await;
    let rl = t.err("notion_get_page", json!({"page_id": SLOW})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn notion_identity_names_the_integration_and_workspace() {
    let (t, fake) = notion_app().await;
    let fields = |secret: &str| {
        let mut f = HashMap::new();
        f.insert("token".to_string(), workbench::secrets::Secret::new(secret.to_string()));
        workbench::auth::from_fields(&plugins::notion::INTEGRATION, f, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::notion::INTEGRATION, fields(SECRET)).await;
    assert_eq!(label.unwrap().as_deref(), Some("Workbench @ Acme Inc"));
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/v1/users/me"));
    assert_eq!(req.header("notion-version"), Some(VERSION));
    let bad = workbench::send::verify_identity(&t.app, &plugins::notion::INTEGRATION, fields("ntn_bad")).await;
    match bad {
        Err(plugins::api::ToolError::Upstream { status: 401, message, .. }) => {
            assert!(message.contains("Notion rejected this credential"), "{message}")
        }
        other => panic!("expected a 401, got {other:?}"),
    }
}
