//! Trello against a fake that checks the `key` and `token` query parameters (and that no credential
//! travels anywhere else), answers plain-text errors ("invalid token", "invalid id") and JSON rate
//! limits, and returns whole collections like the real API. It reads what Trello's API description
//! declares and nothing else: write fields come from the query string (a JSON body is not read),
//! card listings take their filter in the path and carry no `members` (no parameter asks for them).

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const KEY: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const TOKEN: &str = "ATTA5f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1F0E9D8C";
const BOARD: &str = "5abbe4b7ddc1b351ef961414";
const TODO: &str = "5abbe4b7ddc1b351ef961415";
const DONE: &str = "5abbe4b7ddc1b351ef961417";
const CARD: &str = "5abbe4b7ddc1b351ef961420";
const ME: &str = "5a4e1c2b3d4f5a6b7c8d9e0f";

fn text(status: u16, body: &str) -> Reply {
    Reply { status, headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())], body: body.to_string() }
}

fn label(id: &str, name: &str, color: &str) -> Value {
    json!({"id": id, "idBoard": BOARD, "name": name, "color": color, "uses": 3})
}

fn card(id: &str, name: &str, list: &str, due: Option<&str>) -> Value {
    json!({
        "id": id, "name": name, "desc": format!("Details for {name}. ").repeat(3), "due": due, "dueComplete": false, "start": null,
        "closed": false, "idList": list, "idBoard": BOARD, "idMembers": [ME],
        "labels": [label("5b1", "urgent", "red"), label("5b2", "", "green")],
        "shortUrl": format!("https://trello.com/c/{}", &id[16..]), "url": format!("https://trello.com/c/{}/1-card", &id[16..]),
        "dateLastActivity": "2026-11-29T15:00:00.000Z", "idShort": 12, "pos": 16384, "badges": {"comments": 2, "attachments": 0, "checkItems": 3, "checkItemsChecked": 1},
        "members": [{"id": ME, "fullName": "Ada Lovelace", "username": "adalovelace"}]
    })
}

fn board_cards() -> Vec<Value> {
    vec![
        card(CARD, "Fix login bug", TODO, Some("2026-12-01T17:00:00.000Z")),
        card("5abbe4b7ddc1b351ef961421", "Write release notes", TODO, None),
        card("5abbe4b7ddc1b351ef961422", "Ship 1.4.2", DONE, None),
    ]
}

fn lists(with_cards: bool) -> Value {
    let l = |id: &str, name: &str, n: usize| {
        let mut v = json!({"id": id, "name": name, "closed": false, "pos": 16384, "idBoard": BOARD, "subscribed": false, "softLimit": null});
        if with_cards {
            v["cards"] = json!((0..n).map(|i| json!({"id": format!("c{i}")})).collect::<Vec<_>>());
        }
        v
    };
    json!([l(TODO, "To Do", 2), l("5abbe4b7ddc1b351ef961416", "Doing", 0), l(DONE, "Done", 1)])
}

/// The declared parameters of a write: the query string (less the credentials), as an object.
fn declared(r: &Recorded) -> Value {
    Value::Object(
        r.query.iter().filter(|(k, _)| k != "key" && k != "token").map(|(k, v)| (k.clone(), json!(v))).collect(),
    )
}

/// A card as the card listings send it: `idMembers`, no `members` objects.
fn listed(mut c: Value) -> Value {
    c.as_object_mut().unwrap().remove("members");
    c
}

fn trello_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return text(400, "missing user agent");
    }
    if r.q("key") != Some(KEY) {
        return text(401, "invalid key");
    }
    if r.q("token") != Some(TOKEN) {
        return text(401, "invalid token");
    }
    if r.header("authorization").is_some() || String::from_utf8_lossy(&r.body).contains(TOKEN) {
        return text(400, "credentials belong in the key and token parameters");
    }
    let path = r.path.as_str();
    match (r.method.as_str(), path) {
        ("GET", "/1/members/me") => {
            Reply::json(200, json!({"id": ME, "username": "adalovelace", "fullName": "Ada Lovelace"}))
        }
        ("GET", "/1/members/me/boards") => match r.q("filter") {
            Some("starred") => {
                Reply::json(429, json!({"error": "API_TOKEN_LIMIT_EXCEEDED", "message": "Rate limit exceeded"}))
                    .with_header("retry-after", "120")
            }
            Some("open") | Some("closed") | Some("all") => Reply::json(
                200,
                json!([
                    {"id": BOARD, "name": "Product roadmap", "desc": "What ships when", "closed": false, "starred": true,
                     "shortUrl": "https://trello.com/b/nC8QJJoZ", "dateLastActivity": "2026-11-30T08:00:00.000Z", "idOrganization": "5e1",
                     "organization": {"id": "5e1", "displayName": "Acme"}, "prefs": {"background": "blue", "permissionLevel": "org", "voting": "disabled"},
                     "labelNames": {"green": "", "yellow": "", "red": "urgent"}, "limits": {}},
                    {"id": "5abbe4b7ddc1b351ef9614ff", "name": "Personal", "desc": "", "closed": false, "starred": false,
                     "shortUrl": "https://trello.com/b/aaaaaaaa", "dateLastActivity": null, "idOrganization": null, "organization": null,
                     "prefs": {"background": "green"}, "labelNames": {}, "limits": {}}
                ]),
            ),
            _ => text(400, "invalid value for filter"),
        },
        ("GET", p) if p == format!("/1/boards/{BOARD}/lists") => Reply::json(200, lists(r.q("cards") == Some("open"))),
        ("GET", p) if p.starts_with(&format!("/1/boards/{BOARD}/cards/")) => match p.rsplit('/').next() {
            Some("open" | "visible") => {
                Reply::json(200, json!(board_cards().into_iter().map(listed).collect::<Vec<_>>()))
            }
            Some("closed") => Reply::json(200, json!([])),
            Some("all") => Reply::json(200, json!(board_cards().into_iter().map(listed).collect::<Vec<_>>())),
            _ => text(400, "invalid value for filter"),
        },
        ("GET", p) if p == format!("/1/boards/{BOARD}/members") => {
            Reply::json(200, json!([{"id": ME, "fullName": "Ada Lovelace", "username": "adalovelace"}]))
        }
        // Open cards only: `GET /lists/{id}/cards` declares no filter.
        ("GET", p) if p == format!("/1/lists/{TODO}/cards") => Reply::json(
            200,
            json!(board_cards().into_iter().filter(|c| c["idList"] == TODO).map(listed).collect::<Vec<_>>()),
        ),
        ("GET", p) if p == format!("/1/lists/{TODO}") => {
            Reply::json(200, json!({"id": TODO, "name": "To Do", "closed": false, "idBoard": BOARD, "pos": 16384}))
        }
        ("GET", "/1/search") => {
            if r.q("modelTypes") != Some("cards") {
                return text(400, "invalid value for modelTypes");
            }
            if r.q("query") == Some("flood") {
                return Reply::json(429, json!({"error": "API_KEY_LIMIT_EXCEEDED", "message": "Rate limit exceeded"}));
            }
            let limit: usize = r.q("cards_limit").and_then(|l| l.parse().ok()).unwrap_or(10);
            let page: usize = r.q("cards_page").and_then(|l| l.parse().ok()).unwrap_or(0);
            let with_context = r.q("card_board") == Some("true") && r.q("card_list") == Some("true");
            let found: Vec<Value> = board_cards()
                .into_iter()
                .skip(page * limit)
                .take(limit)
                .map(|mut c| {
                    if with_context {
                        c["board"] = json!({"id": BOARD, "name": "Product roadmap"});
                        let list = if c["idList"] == TODO { "To Do" } else { "Done" };
                        c["list"] = json!({"id": c["idList"], "name": list});
                    }
                    c
                })
                .collect();
            Reply::json(
                200,
                json!({"options": {"terms": [{"text": r.q("query")}], "modelTypes": ["cards"], "partial": r.q("partial") == Some("true")}, "cards": found}),
            )
        }
        ("GET", p) if p == format!("/1/cards/{CARD}") => {
            let mut c = card(CARD, "Fix login bug", TODO, Some("2026-12-01T17:00:00.000Z"));
            c["desc"] = json!("Users on Safari get logged out after 5 minutes.\n\nSteps: open, wait, click.");
            if r.q("list") == Some("true") {
                c["list"] = json!({"id": TODO, "name": "To Do"});
            }
            if r.q("board") == Some("true") {
                c["board"] = json!({"id": BOARD, "name": "Product roadmap"});
            }
            if r.q("checklists") == Some("all") {
                c["checklists"] = json!([{"id": "cl1", "name": "QA", "idCard": CARD, "checkItems": [
                    {"id": "i1", "name": "Reproduce on Safari", "state": "complete", "pos": 1},
                    {"id": "i2", "name": "Add regression test", "state": "incomplete", "pos": 2}
                ]}]);
            }
            if r.q("actions") == Some("commentCard") {
                c["actions"] = json!([
                    {"id": "a2", "idMemberCreator": ME, "type": "commentCard", "date": "2026-11-29T15:00:00.000Z",
                     "data": {"text": "Found it: cookie max-age", "card": {"id": CARD, "name": "Fix login bug"}, "board": {"id": BOARD}},
                     "memberCreator": {"id": ME, "fullName": "Ada Lovelace", "username": "adalovelace"}},
                    {"id": "a1", "idMemberCreator": ME, "type": "commentCard", "date": "2026-11-28T10:00:00.000Z",
                     "data": {"text": "Looking into it", "card": {"id": CARD}}, "memberCreator": {"id": ME, "fullName": "Ada Lovelace"}}
                ]);
            }
            Reply::json(200, c)
        }
        ("POST", "/1/cards") => {
            let b = declared(r);
            if b["idList"] != TODO && b["idList"] != DONE {
                return text(400, "invalid value for idList");
            }
            let mut c = card(
                "5abbe4b7ddc1b351ef961499",
                b["name"].as_str().unwrap_or(""),
                b["idList"].as_str().unwrap(),
                b["due"].as_str(),
            );
            c["desc"] = b["desc"].clone();
            c["labels"] = json!([]);
            Reply::json(200, c)
        }
        ("PUT", p) if p == format!("/1/cards/{CARD}") => {
            let b = declared(r);
            let mut c = card(
                CARD,
                b["name"].as_str().unwrap_or("Fix login bug"),
                b["idList"].as_str().unwrap_or(TODO),
                Some("2026-12-01T17:00:00.000Z"),
            );
            if b["due"] == "" {
                c["due"] = Value::Null;
            }
            if let Some(closed) = b["closed"].as_str() {
                c["closed"] = json!(closed == "true");
            }
            Reply::json(200, c)
        }
        ("POST", p) if p == format!("/1/cards/{CARD}/actions/comments") => {
            let b = declared(r);
            let Some(t) = b["text"].as_str().filter(|t| !t.is_empty()) else {
                return text(400, "invalid value for text");
            };
            Reply::json(
                200,
                json!({"id": "6a1b2c3d4e5f60718293a4b5", "idMemberCreator": ME, "type": "commentCard", "date": "2026-11-30T09:45:00.000Z",
                       "data": {"text": t, "textData": {"emoji": {}}, "card": {"id": CARD, "name": "Fix login bug", "idShort": 12, "shortLink": "ef961420"},
                                "board": {"id": BOARD, "name": "Product roadmap", "shortLink": "nC8QJJoZ"}, "list": {"id": TODO, "name": "To Do"}},
                       "appCreator": null, "limits": {}, "memberCreator": {"id": ME, "fullName": "Ada Lovelace", "username": "adalovelace"}}),
            )
        }
        (_, p) if p.starts_with("/1/cards/") => {
            let id = p.trim_start_matches("/1/cards/").split('/').next().unwrap_or("");
            if id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                text(404, "The requested resource was not found.")
            } else {
                text(400, "invalid id")
            }
        }
        _ => text(404, "Cannot GET"),
    }
}

async fn trello_app() -> (TestApp, Fake) {
    let fake = Fake::start(trello_api).await;
    let t = app_with(&[
        ("WORKBENCH_TRELLO_BASE_URL", format!("{}/1", fake.url)),
        ("WORKBENCH_TRELLO_API_KEY", KEY.to_string()),
        ("WORKBENCH_TRELLO_TOKEN", TOKEN.to_string()),
    ]);
    (t, fake)
}

/// The query minus the credentials the engine attaches.
fn params(r: &Recorded) -> Vec<(String, String)> {
    assert_eq!(r.q("key"), Some(KEY));
    assert_eq!(r.q("token"), Some(TOKEN));
    assert!(r.header("authorization").is_none());
    r.query.iter().filter(|(k, _)| k != "key" && k != "token").cloned().collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[tokio::test]
async fn trello_list_boards_and_lists() {
    let (t, f) = trello_app().await;
    let b = t.ok("trello_list_boards", json!({"include_raw": true})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/1/members/me/boards"));
    assert_eq!(
        params(&req),
        pairs(&[
            ("filter", "open"),
            ("fields", "name,desc,closed,starred,shortUrl,dateLastActivity,idOrganization"),
            ("organization", "true"),
            ("organization_fields", "displayName")
        ])
    );
    assert_eq!(
        b["boards"],
        json!([
            {"id": BOARD, "name": "Product roadmap", "desc": "What ships when", "workspace": "Acme", "starred": true,
             "last_activity": "2026-11-30T08:00:00.000Z", "url": "https://trello.com/b/nC8QJJoZ"},
            {"id": "5abbe4b7ddc1b351ef9614ff", "name": "Personal", "url": "https://trello.com/b/aaaaaaaa"}
        ])
    );
    let raw_bytes = b["raw"].to_string().len();
    let shaped_bytes = b["boards"].to_string().len();
    eprintln!("trello_list_boards: raw {raw_bytes} bytes -> shaped {shaped_bytes} bytes");
    assert!(shaped_bytes < raw_bytes);

    let l = t.ok("trello_list_lists", json!({"board_id": BOARD})).await;
    let req = f.last();
    assert_eq!(req.path, format!("/1/boards/{BOARD}/lists"));
    assert_eq!(
        params(&req),
        pairs(&[("filter", "open"), ("fields", "name,closed,pos"), ("cards", "open"), ("card_fields", "id")])
    );
    assert_eq!(
        l,
        json!({"lists": [
            {"id": TODO, "name": "To Do", "open_cards": 2},
            {"id": "5abbe4b7ddc1b351ef961416", "name": "Doing", "open_cards": 0},
            {"id": DONE, "name": "Done", "open_cards": 1}
        ]})
    );
}

#[tokio::test]
async fn trello_list_cards_by_list_or_board_with_a_cursor() {
    let (t, f) = trello_app().await;
    let by_list = t.ok("trello_list_cards", json!({"list_id": TODO})).await;
    let req = f.requests()[0].clone();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", format!("/1/lists/{TODO}/cards").as_str()));
    assert!(params(&req).is_empty(), "GET /lists/{{id}}/cards declares no parameters");
    assert_eq!(by_list["total"], 2);
    assert_eq!(
        by_list["cards"][0],
        json!({
            "id": CARD, "name": "Fix login bug", "list_id": TODO,
            "desc": "Details for Fix login bug. Details for Fix login bug. Details for Fix login bug. ",
            "due": "2026-12-01T17:00:00.000Z", "due_complete": false, "labels": ["urgent", "green"], "members": ["Ada Lovelace"],
            "last_activity": "2026-11-29T15:00:00.000Z", "url": "https://trello.com/c/ef961420"
        })
    );

    assert_eq!(f.requests()[1].path, format!("/1/boards/{BOARD}/members"), "member names come from the board");

    // A list's archived cards come from its board's closed cards (the list path declares no filter).
    let closed = t.ok("trello_list_cards", json!({"list_id": TODO, "filter": "all"})).await;
    let reqs: Vec<String> = f.requests()[2..].iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        reqs,
        [format!("/1/lists/{TODO}"), format!("/1/boards/{BOARD}/cards/all"), format!("/1/boards/{BOARD}/members")]
    );
    assert_eq!(closed["total"], 2, "only the list's own cards");

    let p1 = t.ok("trello_list_cards", json!({"board_id": BOARD, "limit": 2})).await;
    let reqs = f.requests();
    let n = reqs.len();
    assert_eq!(reqs[n - 3].path, format!("/1/boards/{BOARD}/cards/open"));
    assert!(params(&reqs[n - 3]).is_empty());
    assert_eq!(reqs[n - 2].path, format!("/1/boards/{BOARD}/lists"), "board listings name each card's list");
    assert_eq!(p1["cards"][0]["members"], json!(["Ada Lovelace"]));
    assert_eq!(p1["cards"][0]["list"], "To Do");
    assert_eq!(p1["cards"].as_array().unwrap().len(), 2);
    assert_eq!(p1["total"], 3);
    assert_eq!(p1["next_cursor"], "2");
    let p2 = t.ok("trello_list_cards", json!({"board_id": BOARD, "limit": 2, "cursor": "2"})).await;
    assert_eq!(p2["cards"][0]["name"], "Ship 1.4.2");
    assert_eq!(p2["cards"][0]["list"], "Done");
    assert!(p2.get("next_cursor").is_none());

    let before = f.requests().len();
    let both = t.err("trello_list_cards", json!({"board_id": BOARD, "list_id": TODO})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let neither = t.err("trello_list_cards", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    assert_eq!(f.requests().len(), before);
}

#[tokio::test]
async fn trello_search_cards_pages() {
    let (t, f) = trello_app().await;
    let r =
        t.ok("trello_search_cards", json!({"query": "login", "board_ids": [BOARD], "partial": true, "limit": 2})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/1/search"));
    let p = params(&req);
    for (k, v) in [
        ("query", "login"),
        ("modelTypes", "cards"),
        ("idBoards", BOARD),
        ("partial", "true"),
        ("cards_limit", "2"),
        ("cards_page", "0"),
        ("card_board", "true"),
        ("card_list", "true"),
    ] {
        assert!(p.contains(&(k.to_string(), v.to_string())), "{k}={v} in {p:?}");
    }
    assert_eq!(r["cards"][0]["board"], "Product roadmap");
    assert_eq!(r["cards"][0]["list"], "To Do");
    assert_eq!(r["next_cursor"], "1");
    let r2 = t.ok("trello_search_cards", json!({"query": "login", "limit": 2, "cursor": "1"})).await;
    assert_eq!(f.last().q("cards_page"), Some("1"));
    assert_eq!(f.last().q("partial"), Some("false"));
    assert_eq!(r2["cards"].as_array().unwrap().len(), 1);
    assert!(r2.get("next_cursor").is_none());
}

#[tokio::test]
async fn trello_get_card_with_checklists_and_comments() {
    let (t, f) = trello_app().await;
    let c = t.ok("trello_get_card", json!({"card_id": CARD, "max_comments": 1, "max_chars": 50})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", format!("/1/cards/{CARD}").as_str()));
    let p = params(&req);
    for (k, v) in [("checklists", "all"), ("actions", "commentCard"), ("list", "true"), ("board", "true")] {
        assert!(p.contains(&(k.to_string(), v.to_string())), "{k}={v} in {p:?}");
    }
    assert!(!p.iter().any(|(k, _)| k == "actions_limit" || k == "list_fields"), "not declared for GET /cards/{{id}}");
    assert_eq!(c["board"], "Product roadmap");
    assert_eq!(c["list"], "To Do");
    assert_eq!(c["desc"], "Users on Safari get logged out after 5 minutes.\n\nS");
    assert_eq!(c["truncated"], true);
    assert_eq!(
        c["checklists"],
        json!([{"name": "QA", "done": "1/2", "items": [{"name": "Reproduce on Safari", "done": true}, {"name": "Add regression test", "done": false}]}])
    );
    assert_eq!(
        c["comments"],
        json!([{"id": "a2", "author": "Ada Lovelace", "date": "2026-11-29T15:00:00.000Z", "text": "Found it: cookie max-age"}])
    );

    let bare =
        t.ok("trello_get_card", json!({"card_id": CARD, "include_comments": false, "include_checklists": false})).await;
    let p = params(&f.last());
    assert!(!p.iter().any(|(k, _)| k == "actions" || k == "checklists"));
    assert!(bare.get("comments").is_none() && bare.get("checklists").is_none() && bare.get("truncated").is_none());

    // Trello's plain-text errors reach the agent as they are.
    let missing = t.err("trello_get_card", json!({"card_id": "5abbe4b7ddc1b351ef96ffff"})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["message"], "trello answered 404: The requested resource was not found.");
    let invalid = t.err("trello_get_card", json!({"card_id": "nope"})).await;
    assert_eq!(invalid["message"], "trello answered 400: invalid id");
}

#[tokio::test]
async fn trello_create_card_sends_the_declared_query_parameters() {
    let (t, f) = trello_app().await;
    let c = t
        .ok(
            "trello_create_card",
            json!({"list_id": TODO, "name": "Rotate API keys", "desc": "Quarterly", "due": "2026-12-05", "member_ids": [ME],
                   "label_ids": ["5b1aaaaaaaaaaaaaaaaaaaaa"], "pos": "top"}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/1/cards"));
    assert!(req.body.is_empty(), "Trello declares every field of POST /cards as a query parameter");
    assert_eq!(
        params(&req),
        pairs(&[
            ("idList", TODO),
            ("name", "Rotate API keys"),
            ("desc", "Quarterly"),
            ("due", "2026-12-05"),
            ("pos", "top"),
            ("idMembers", ME),
            ("idLabels", "5b1aaaaaaaaaaaaaaaaaaaaa")
        ])
    );
    assert_eq!(c["id"], "5abbe4b7ddc1b351ef961499");
    assert_eq!(c["name"], "Rotate API keys");
    assert_eq!(c["desc"], "Quarterly");
    assert_eq!(c["due"], "2026-12-05");

    let bad_list = t.err("trello_create_card", json!({"list_id": "5abbe4b7ddc1b351ef960000", "name": "x"})).await;
    assert_eq!(bad_list["message"], "trello answered 400: invalid value for idList");
    let bad_pos = t.err("trello_create_card", json!({"list_id": TODO, "name": "x", "pos": "middle"})).await;
    assert_eq!(bad_pos["problems"][0]["path"], "/pos");
}

#[tokio::test]
async fn trello_update_card_moves_archives_and_clears_due() {
    // Counts the requests writes send: without the outbound-data guard's lookups (`flow_guard.rs`).
    let f = Fake::start(trello_api).await;
    let t = app_with(&[
        ("WORKBENCH_TRELLO_BASE_URL", format!("{}/1", f.url)),
        ("WORKBENCH_TRELLO_API_KEY", KEY.to_string()),
        ("WORKBENCH_TRELLO_TOKEN", TOKEN.to_string()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    let moved = t.ok("trello_update_card", json!({"card_id": CARD, "list_id": DONE, "due_complete": true})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", format!("/1/cards/{CARD}").as_str()));
    assert!(req.body.is_empty());
    assert_eq!(params(&req), pairs(&[("idList", DONE), ("dueComplete", "true")]));
    assert_eq!(moved["list_id"], DONE);

    let archived =
        t.ok("trello_update_card", json!({"card_id": CARD, "due": "", "closed": true, "member_ids": []})).await;
    assert_eq!(params(&f.last()), pairs(&[("due", ""), ("closed", "true"), ("idMembers", "")]));
    assert_eq!(archived["archived"], true);
    assert!(archived.get("due").is_none());

    let before = f.requests().len();
    let nothing = t.err("trello_update_card", json!({"card_id": CARD})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
    let board_only = t.err("trello_update_card", json!({"card_id": CARD, "board_id": BOARD})).await;
    assert_eq!(board_only["problems"][0]["path"], "/list_id");
    assert_eq!(f.requests().len(), before);
}

#[tokio::test]
async fn trello_create_comment_on_a_card() {
    let (t, f) = trello_app().await;
    let c = t.ok("trello_create_comment", json!({"card_id": CARD, "text": "Fixed in 1.4.3 @adalovelace"})).await;
    let req = f.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", format!("/1/cards/{CARD}/actions/comments").as_str())
    );
    assert!(req.body.is_empty());
    assert_eq!(params(&req), pairs(&[("text", "Fixed in 1.4.3 @adalovelace")]));
    assert_eq!(
        c,
        json!({"id": "6a1b2c3d4e5f60718293a4b5", "card_id": CARD, "card": "Fix login bug", "text": "Fixed in 1.4.3 @adalovelace",
               "author": "Ada Lovelace", "date": "2026-11-30T09:45:00.000Z"})
    );
}

#[tokio::test]
async fn trello_rejected_token_rate_limits_and_identity() {
    let fake = Fake::start(trello_api).await;
    let wrong = app_with(&[
        ("WORKBENCH_TRELLO_BASE_URL", format!("{}/1", fake.url)),
        ("WORKBENCH_TRELLO_API_KEY", KEY.to_string()),
        ("WORKBENCH_TRELLO_TOKEN", "ATTAexpiredexpiredexpiredexpired0000".into()),
    ]);
    let e = wrong.err("trello_list_boards", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.ends_with("invalid token"), "{msg}");

    let (t, _) = trello_app().await;
    let rl = t.err("trello_list_boards", json!({"filter": "starred"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
    assert!(rl["message"].as_str().unwrap().contains("API_TOKEN_LIMIT_EXCEEDED"), "{rl}");
    // Trello usually sends no Retry-After: after the engine's short retries the agent learns which limit hit.
    let (t, _) = trello_app().await;
    let key_limit = t.err("trello_search_cards", json!({"query": "flood"})).await;
    assert_eq!(key_limit["code"], "RATE_LIMITED");
    assert!(key_limit.get("retry_after_seconds").is_none());
    assert!(key_limit["message"].as_str().unwrap().contains("API_KEY_LIMIT_EXCEEDED"), "{key_limit}");

    let app = app_with(&[("WORKBENCH_TRELLO_BASE_URL", format!("{}/1", fake.url))]);
    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> = HashMap::from([
            ("api_key".to_string(), Secret::new(KEY.to_string())),
            ("token".to_string(), Secret::new(token.to_string())),
        ]);
        workbench::auth::from_fields(&plugins::trello::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&app.app, &plugins::trello::INTEGRATION, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("Ada Lovelace (@adalovelace)"));
    assert_eq!(fake.last().path, "/1/members/me");
    let err = workbench::send::verify_identity(&app.app, &plugins::trello::INTEGRATION, conn("ATTAnope00000000"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Trello rejected this credential: invalid token"), "{err}");
}

#[tokio::test]
async fn trello_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("move trello card to done", "trello_update_card"),
        ("add a card to trello", "trello_create_card"),
        ("trello checklist of a card", "trello_get_card"),
        ("find trello card about login", "trello_search_cards"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
