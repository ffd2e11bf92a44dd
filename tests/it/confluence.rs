//! Confluence Cloud against a fake on 127.0.0.1 that serves everything under `/wiki`, checks Basic
//! email:token auth and storage-format bodies, pages v2 lists with `_links.next` cursors, searches
//! with CQL on v1, and enforces `version.number = current + 1` on updates (409 otherwise).

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const EMAIL: &str = "ada@acme.test";
const TOKEN: &str = "ATATT3xFfGF0-confluence-token-42";
const NEXT_CURSOR: &str = "raNDoM+c2==";

fn basic(email: &str, token: &str) -> String {
    format!("Basic {}", plugins::codec::base64_encode(format!("{email}:{token}").as_bytes()))
}

fn v2_error(status: u16, code: &str, title: &str) -> Reply {
    Reply::json(status, json!({"errors": [{"status": status, "code": code, "title": title, "detail": null}]}))
}

fn base(r: &Recorded) -> String {
    format!("http://{}/wiki", r.header("host").unwrap_or("localhost"))
}

const RUNBOOK: &str = r#"<h2>Restart the API</h2><p>Page <strong>on-call</strong> first.</p><ac:structured-macro ac:name="code" ac:schema-version="1" ac:macro-id="a1"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[kubectl rollout restart deploy/api]]></ac:plain-text-body></ac:structured-macro><ac:structured-macro ac:name="warning" ac:schema-version="1"><ac:rich-text-body><p>Never during a deploy.</p></ac:rich-text-body></ac:structured-macro>"#;

fn page(id: &str, title: &str, version: u64, storage: Option<&str>, b: &str) -> Value {
    let mut p = json!({
        "parentType": "page", "parentId": "65537", "spaceId": "98306", "ownerId": "5b10ac8d82e05b22cc7d4ef5",
        "lastOwnerId": null, "createdAt": "2026-01-02T10:00:00.000Z", "authorId": "5b10ac8d82e05b22cc7d4ef5",
        "position": 42,
        "version": {"number": version, "message": "tidy", "minorEdit": false, "authorId": "5b10ac8d82e05b22cc7d4ef5",
                    "createdAt": "2026-01-10T12:00:00.000Z", "ncsStepVersion": "3"},
        "status": "current", "title": title, "id": id,
        "_links": {"editui": format!("/pages/resumedraft.action?draftId={id}"), "webui": format!("/spaces/ENG/pages/{id}/{}", title.replace(' ', "+")),
                   "edituiv2": format!("/spaces/ENG/pages/edit-v2/{id}"), "tinyui": "/x/AbCd", "base": b}
    });
    if let Some(s) = storage {
        p["body"] = json!({"storage": {"representation": "storage", "value": s}});
    }
    p
}

fn spaces(b: &str) -> Vec<Value> {
    [("98306", "ENG", "Engineering", "global", "65537"), ("98307", "OPS", "Operations", "global", "65600"), ("98308", "~ada", "Ada Lovelace", "personal", "65700")]
        .iter()
        .map(|(id, key, name, kind, home)| {
            json!({"id": id, "key": key, "name": name, "type": kind, "status": "current", "authorId": "5b10ac8d82e05b22cc7d4ef5",
                   "createdAt": "2025-06-01T09:00:00.000Z", "homepageId": home, "spaceOwnerId": "5b10ac8d82e05b22cc7d4ef5",
                   "currentActiveAlias": key, "description": null, "icon": {"path": "/images/logo/default-space-logo.svg", "apiDownloadLink": format!("{b}/download/{id}")},
                   "_links": {"webui": format!("/spaces/{key}")}})
        })
        .collect()
}

/// A v2 list page: `limit` items from an opaque cursor, `_links.next` while more remain.
fn v2_list(r: &Recorded, items: Vec<Value>, path: &str, b: &str) -> Reply {
    let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(25);
    let start = match r.q("cursor") {
        None => 0,
        Some(NEXT_CURSOR) => limit,
        Some(_) => return v2_error(400, "INVALID_REQUEST_PARAMETER", "Invalid cursor"),
    };
    let page: Vec<Value> = items.iter().skip(start).take(limit).cloned().collect();
    let mut links = json!({"base": b});
    if start + limit < items.len() {
        links["next"] = json!(format!("/wiki{path}?limit={limit}&cursor=raNDoM%2Bc2%3D%3D"));
    }
    Reply::json(200, json!({"results": page, "_links": links}))
}

fn search_hit(id: &str, title: &str, excerpt: &str) -> Value {
    json!({
        "content": {"id": id, "type": "page", "status": "current", "title": title, "childTypes": {}, "macroRenderedOutput": {},
                    "restrictions": {}, "_expandable": {"container": "", "metadata": "", "extensions": "", "operations": "", "children": "",
                    "history": format!("/rest/api/content/{id}/history"), "ancestors": "", "body": "", "version": "", "descendants": "",
                    "space": "/rest/api/space/ENG"},
                    "_links": {"webui": format!("/spaces/ENG/pages/{id}"), "self": format!("https://acme.atlassian.net/wiki/rest/api/content/{id}"), "tinyui": "/x/AbCd"}},
        "title": title, "excerpt": excerpt, "url": format!("/spaces/ENG/pages/{id}"),
        "resultGlobalContainer": {"title": "Engineering", "displayUrl": "/spaces/ENG"}, "breadcrumbs": [], "entityType": "content",
        "iconCssClass": "aui-icon content-type-page", "lastModified": "2026-01-10T12:00:00.000Z", "friendlyLastModified": "Jan 10, 2026", "score": 1.5
    })
}

fn body_json(r: &Recorded) -> Option<Value> {
    if r.header("content-type").is_none_or(|c| !c.starts_with("application/json")) {
        return None;
    }
    serde_json::from_slice(&r.body).ok()
}

fn confluence_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return v2_error(400, "BAD_REQUEST", "bad request");
    }
    if r.header("authorization") != Some(basic(EMAIL, TOKEN).as_str()) {
        return Reply::json(401, json!({"code": 401, "message": "Unauthorized; scope does not match"}));
    }
    let b = base(r);
    let body = if matches!(r.method.as_str(), "POST" | "PUT") {
        match body_json(r) {
            Some(v) => v,
            None => return v2_error(415, "UNSUPPORTED_MEDIA_TYPE", "Unsupported Media Type"),
        }
    } else {
        Value::Null
    };
    let path = r.path.as_str();
    match (r.method.as_str(), path) {
        ("GET", "/wiki/rest/api/user/current") => Reply::json(
            200,
            json!({"type": "known", "accountId": "5b10ac8d82e05b22cc7d4ef5", "accountType": "atlassian", "email": EMAIL,
                   "publicName": "Ada Lovelace", "displayName": "Ada Lovelace", "isExternalCollaborator": false,
                   "profilePicture": {"path": "/wiki/aa-avatar/5b10.png", "width": 48, "height": 48, "isDefault": false}}),
        ),
        ("GET", "/wiki/rest/api/search") => {
            let Some(cql) = r.q("cql") else {
                return Reply::json(
                    400,
                    json!({"statusCode": 400, "data": {"authorized": false, "valid": true, "errors": [], "successful": false}, "message": "CQL query parameter is required"}),
                );
            };
            if cql.contains("~ \"\"") || cql.ends_with('~') || cql.contains("===") {
                return Reply::json(
                    400,
                    json!({"statusCode": 400, "data": {"authorized": false, "valid": true, "errors": [], "successful": false},
                                               "message": format!("com.atlassian.confluence.api.service.exceptions.BadRequestException: Could not parse cql : {cql}")}),
                );
            }
            let hits = [
                search_hit(
                    "123456",
                    "Restart the API",
                    "How to @@@hl@@@restart@@@endhl@@@ the @@@hl@@@API@@@endhl@@@ safely&hellip;",
                ),
                search_hit("123457", "API on-call", "Paging &amp; @@@hl@@@restart@@@endhl@@@ rules"),
                search_hit("123458", "Postmortem 12", "The @@@hl@@@API@@@endhl@@@ was down"),
            ];
            let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(25);
            let start = match r.q("cursor") {
                None => 0,
                Some(NEXT_CURSOR) => limit,
                Some(_) => return Reply::json(400, json!({"statusCode": 400, "message": "Invalid cursor"})),
            };
            let page: Vec<Value> = hits.iter().skip(start).take(limit).cloned().collect();
            let mut links = json!({"base": b, "context": "/wiki", "self": format!("{b}/rest/api/search")});
            if start + limit < hits.len() {
                links["next"] = json!(format!(
                    "/rest/api/search?next=true&cursor=raNDoM%2Bc2%3D%3D&limit={limit}&start={}&cql={}",
                    start + limit,
                    "x"
                ));
            }
            Reply::json(
                200,
                json!({"results": page, "start": start, "limit": limit, "size": page.len(), "totalSize": hits.len(),
                                    "cqlQuery": cql, "searchDuration": 35, "_links": links}),
            )
        }
        ("GET", "/wiki/api/v2/pages/429") => {
            v2_error(429, "TOO_MANY_REQUESTS", "Rate limit exceeded").with_header("retry-after", "120")
        }
        ("GET", "/wiki/api/v2/pages/123456") | ("GET", "/wiki/api/v2/pages/999") => {
            if r.q("body-format") != Some("storage") {
                return Reply::json(200, page("123456", "Restart the API", 5, None, &b));
            }
            if path.ends_with("999") {
                Reply::json(200, page("999", "Contended", 7, Some("<p>old</p>"), &b))
            } else {
                Reply::json(200, page("123456", "Restart the API", 5, Some(RUNBOOK), &b))
            }
        }
        ("PUT", "/wiki/api/v2/pages/999") => {
            v2_error(409, "CONFLICT", "Version must be incremented on update. Current version is: 8")
        }
        ("PUT", "/wiki/api/v2/pages/123456") => {
            if body["id"] != "123456"
                || body["status"].as_str().is_none()
                || body["title"].as_str().is_none_or(str::is_empty)
            {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "id, status, title, body and version are required");
            }
            if body["body"]["representation"] != "storage" || body["body"]["value"].as_str().is_none() {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "body must have representation and value");
            }
            if body["version"]["number"] != 6 {
                return v2_error(409, "CONFLICT", "Version must be incremented on update. Current version is: 5");
            }
            let mut p = page("123456", body["title"].as_str().unwrap(), 6, body["body"]["value"].as_str(), &b);
            p["version"]["message"] = body["version"]["message"].clone();
            Reply::json(200, p)
        }
        ("GET", p) if p.starts_with("/wiki/api/v2/pages/") && !p.ends_with("/children") => {
            v2_error(404, "NOT_FOUND", "Not Found")
        }
        ("POST", "/wiki/api/v2/pages") => {
            if body["spaceId"] != "98306" {
                return v2_error(
                    400,
                    "INVALID_REQUEST_PARAMETER",
                    "Provided value {ENG} for 'spaceId' is not the correct type. Expected type is long",
                );
            }
            if !matches!(body["status"].as_str(), Some("current" | "draft")) {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "status must be current or draft");
            }
            if body["body"]["representation"] != "storage" || body["body"]["value"].as_str().is_none_or(str::is_empty) {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "body is required");
            }
            if body["title"] == "Restart the API" {
                return v2_error(
                    400,
                    "BAD_REQUEST",
                    "A page with this title already exists: A page already exists with the same TITLE in this space",
                );
            }
            let mut p = page("777", body["title"].as_str().unwrap_or(""), 1, body["body"]["value"].as_str(), &b);
            p["status"] = body["status"].clone();
            p["parentId"] = body.get("parentId").cloned().unwrap_or(json!("65537"));
            Reply::json(200, p)
        }
        ("GET", "/wiki/api/v2/spaces") => {
            let keys: Option<Vec<&str>> = r.q("keys").map(|k| k.split(',').collect());
            let items: Vec<Value> = spaces(&b)
                .into_iter()
                .filter(|s| keys.as_ref().is_none_or(|k| k.contains(&s["key"].as_str().unwrap())))
                .filter(|s| r.q("type").is_none_or(|t| s["type"] == t))
                .collect();
            v2_list(r, items, "/api/v2/spaces", &b)
        }
        ("GET", "/wiki/api/v2/spaces/98306/pages") => {
            let mut items: Vec<Value> = vec![
                page("123456", "Restart the API", 5, None, &b),
                page("123457", "API on-call", 2, None, &b),
                page("123458", "Postmortem 12", 1, None, &b),
            ];
            if let Some(t) = r.q("title") {
                items.retain(|p| p["title"] == t);
            }
            match r.q("sort") {
                None | Some("id") => {}
                Some("title") => items.sort_by(|a, b| a["title"].as_str().cmp(&b["title"].as_str())),
                Some("-modified-date") => items.reverse(),
                Some(other) => {
                    return v2_error(400, "INVALID_REQUEST_PARAMETER", &format!("Invalid sort value: {other}"));
                }
            }
            v2_list(r, items, "/api/v2/spaces/98306/pages", &b)
        }
        ("GET", "/wiki/api/v2/pages/123456/children") => {
            if r.q("sort").is_some_and(|s| {
                ![
                    "child-position",
                    "-child-position",
                    "created-date",
                    "-created-date",
                    "modified-date",
                    "-modified-date",
                    "id",
                    "-id",
                ]
                .contains(&s)
            }) {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "Invalid sort value");
            }
            let items = vec![
                json!({"id": "200001", "status": "current", "title": "Restart: staging", "spaceId": "98306", "childPosition": 1}),
                json!({"id": "200002", "status": "draft", "title": "Restart: prod", "spaceId": "98306", "childPosition": 2}),
            ];
            v2_list(r, items, "/api/v2/pages/123456/children", &b)
        }
        ("POST", "/wiki/api/v2/footer-comments") => {
            let targets =
                ["pageId", "blogPostId", "parentCommentId"].iter().filter(|k| body.get(**k).is_some()).count();
            if targets != 1 {
                return v2_error(
                    400,
                    "INVALID_REQUEST_PARAMETER",
                    "Exactly one of pageId, blogPostId or parentCommentId must be provided",
                );
            }
            if body["body"]["representation"] != "storage" || body["body"]["value"].as_str().is_none_or(str::is_empty) {
                return v2_error(400, "INVALID_REQUEST_PARAMETER", "body is required");
            }
            let mut c = json!({"id": "5001", "status": "current", "title": "Re: Restart the API",
                               "version": {"number": 1, "createdAt": "2026-01-11T08:00:00.000Z", "message": "", "minorEdit": false, "authorId": "5b10ac8d82e05b22cc7d4ef5"},
                               "body": {"storage": {"representation": "storage", "value": body["body"]["value"].clone()}},
                               "_links": {"webui": "/spaces/ENG/pages/123456/Restart+the+API?focusedCommentId=5001"}});
            match body.get("pageId") {
                Some(p) => c["pageId"] = p.clone(),
                None => {
                    c["parentCommentId"] = body["parentCommentId"].clone();
                    c["pageId"] = json!("123456");
                }
            }
            Reply::json(201, c)
        }
        _ => v2_error(404, "NOT_FOUND", "Not Found"),
    }
}

async fn confluence() -> (TestApp, Fake) {
    let fake = Fake::start(confluence_api).await;
    let t = app_with(&[
        ("WORKBENCH_CONFLUENCE_BASE_URL", format!("{}/wiki", fake.url)),
        ("WORKBENCH_CONFLUENCE_SITE", "acme.atlassian.net".into()),
        ("WORKBENCH_CONFLUENCE_EMAIL", EMAIL.into()),
        ("WORKBENCH_CONFLUENCE_TOKEN", TOKEN.into()),
    ]);
    (t, fake)
}

fn assert_auth(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(basic(EMAIL, TOKEN).as_str()));
}

fn sent(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn confluence_search_builds_cql_and_follows_the_cursor() {
    let (t, fake) = confluence().await;
    let wiki = format!("{}/wiki", fake.url);
    let r = t.ok("confluence_search_pages", json!({"query": "restart api", "space_key": "ENG", "limit": 2})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/wiki/rest/api/search"));
    assert_auth(&req);
    assert_eq!(req.q("cql"), Some("type in (page, blogpost) AND text ~ \"restart api\" AND space = \"ENG\""));
    assert_eq!((req.q("limit"), req.q("cursor")), (Some("2"), None));
    assert_eq!(
        r["results"][0],
        json!({"id": "123456", "type": "page", "title": "Restart the API", "space": "Engineering",
               "excerpt": "How to restart the API safely…", "last_modified": "2026-01-10T12:00:00.000Z",
               "url": format!("{wiki}/spaces/ENG/pages/123456")})
    );
    assert_eq!(r["results"][1]["excerpt"], "Paging & restart rules");
    assert_eq!(r["total"], 3);
    assert_eq!(r["next_cursor"], NEXT_CURSOR);
    let raw_len = confluence_api(&req).body.len();
    let shaped_len = r.to_string().len();
    eprintln!("confluence_search_pages: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 2 < raw_len);

    let r2 = t
        .ok(
            "confluence_search_pages",
            json!({"query": "restart api", "space_key": "ENG", "limit": 2, "cursor": NEXT_CURSOR}),
        )
        .await;
    assert_eq!(fake.last().q("cursor"), Some(NEXT_CURSOR), "the cursor survives encoding both ways");
    assert_eq!(r2["results"].as_array().unwrap().len(), 1);
    assert_eq!(r2["results"][0]["id"], "123458");
    assert!(r2.get("next_cursor").is_none());

    let cql = t.ok("confluence_search_pages", json!({"cql": "label = runbook ORDER BY lastmodified DESC"})).await;
    assert_eq!(fake.last().q("cql"), Some("label = runbook ORDER BY lastmodified DESC"));
    assert_eq!(cql["cql"], "label = runbook ORDER BY lastmodified DESC");

    let blog = t.ok("confluence_search_pages", json!({"query": "say \"hi\"", "content_type": "blogpost"})).await;
    assert_eq!(fake.last().q("cql"), Some("type = blogpost AND text ~ \"say \\\"hi\\\"\""));
    assert!(blog["results"].is_array());

    let neither = t.err("confluence_search_pages", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    let both = t.err("confluence_search_pages", json!({"query": "a", "cql": "b"})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let bad = t.err("confluence_search_pages", json!({"cql": "title === x"})).await;
    assert_eq!(bad["status"], 400);
    assert!(bad["message"].as_str().unwrap().contains("Could not parse cql : title === x"), "{bad}");
}

#[tokio::test]
async fn confluence_get_page_as_markdown_or_storage() {
    let (t, fake) = confluence().await;
    let wiki = format!("{}/wiki", fake.url);
    let p = t.ok("confluence_get_page", json!({"page_id": "123456"})).await;
    let req = fake.last();
    assert_eq!((req.path.as_str(), req.q("body-format")), ("/wiki/api/v2/pages/123456", Some("storage")));
    assert_auth(&req);
    assert_eq!(
        p,
        json!({
            "id": "123456", "title": "Restart the API", "status": "current", "space_id": "98306", "parent_id": "65537",
            "version": 5, "version_message": "tidy", "last_updated": "2026-01-10T12:00:00.000Z", "created": "2026-01-02T10:00:00.000Z",
            "author_id": "5b10ac8d82e05b22cc7d4ef5", "url": format!("{wiki}/spaces/ENG/pages/123456/Restart+the+API"),
            "body_format": "markdown",
            "body": "## Restart the API\n\nPage **on-call** first.\n\n```bash\nkubectl rollout restart deploy/api\n```\n\n> **Warning:** Never during a deploy.",
            "truncated": false
        })
    );
    let raw = t
        .ok(
            "confluence_get_page",
            json!({"page_id": "123456", "body_format": "storage", "max_chars": 100, "include_raw": true}),
        )
        .await;
    assert_eq!(raw["body"], RUNBOOK.chars().take(100).collect::<String>());
    assert_eq!(raw["truncated"], true);
    assert_eq!(raw["raw"]["body"]["storage"]["value"], RUNBOOK);

    let missing = t.err("confluence_get_page", json!({"page_id": "404"})).await;
    assert_eq!((missing["code"].as_str(), missing["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(404)));
    assert!(missing["message"].as_str().unwrap().contains("Not Found"), "{missing}");
    let n = fake.requests().len();
    let bad = t.err("confluence_get_page", json!({"page_id": "../admin"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(fake.requests().len(), n);
}

#[tokio::test]
async fn confluence_list_pages_of_a_space_by_key_and_children() {
    let (t, fake) = confluence().await;
    let wiki = format!("{}/wiki", fake.url);
    let r = t.ok("confluence_list_pages", json!({"space_id": "ENG", "sort": "title", "limit": 2})).await;
    let reqs = fake.requests();
    let (lookup, list) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!((lookup.path.as_str(), lookup.q("keys")), ("/wiki/api/v2/spaces", Some("ENG")));
    assert_auth(list);
    assert_eq!(list.path, "/wiki/api/v2/spaces/98306/pages");
    assert_eq!((list.q("sort"), list.q("limit"), list.q("cursor")), (Some("title"), Some("2"), None));
    assert_eq!(
        r,
        json!({
            "space_id": "98306",
            "pages": [
                {"id": "123457", "title": "API on-call", "parent_id": "65537", "version": 2, "last_updated": "2026-01-10T12:00:00.000Z", "url": format!("{wiki}/spaces/ENG/pages/123457/API+on-call")},
                {"id": "123458", "title": "Postmortem 12", "parent_id": "65537", "version": 1, "last_updated": "2026-01-10T12:00:00.000Z", "url": format!("{wiki}/spaces/ENG/pages/123458/Postmortem+12")}
            ],
            "next_cursor": NEXT_CURSOR
        })
    );
    let r2 = t
        .ok("confluence_list_pages", json!({"space_id": "98306", "sort": "title", "limit": 2, "cursor": NEXT_CURSOR}))
        .await;
    assert_eq!(fake.last().q("cursor"), Some(NEXT_CURSOR));
    assert_eq!(r2["pages"][0]["title"], "Restart the API");
    assert!(r2.get("next_cursor").is_none());
    let titled = t.ok("confluence_list_pages", json!({"space_id": "98306", "title": "Postmortem 12"})).await;
    assert_eq!(fake.last().q("title"), Some("Postmortem 12"));
    assert_eq!(titled["pages"].as_array().unwrap().len(), 1);

    let kids = t.ok("confluence_list_pages", json!({"parent_id": "123456", "sort": "position"})).await;
    let req = fake.last();
    assert_eq!((req.path.as_str(), req.q("sort")), ("/wiki/api/v2/pages/123456/children", Some("child-position")));
    assert_eq!(
        kids["pages"],
        json!([
            {"id": "200001", "title": "Restart: staging", "url": format!("{wiki}/pages/viewpage.action?pageId=200001")},
            {"id": "200002", "title": "Restart: prod", "status": "draft", "url": format!("{wiki}/pages/viewpage.action?pageId=200002")}
        ])
    );
    assert_eq!(kids["parent_id"], "123456");

    for bad in [
        json!({}),
        json!({"space_id": "1", "parent_id": "2"}),
        json!({"parent_id": "123456", "title": "x"}),
        json!({"parent_id": "123456", "sort": "title"}),
    ] {
        let e = t.err("confluence_list_pages", bad.clone()).await;
        assert_eq!(e["code"], "INVALID_ARGUMENTS", "{bad}");
    }
    let unknown = t.err("confluence_list_pages", json!({"space_id": "NOPE"})).await;
    assert!(unknown["message"].as_str().unwrap().contains("no space with key 'NOPE'"), "{unknown}");
}

#[tokio::test]
async fn confluence_create_page_converts_markdown_to_storage() {
    let (t, fake) = confluence().await;
    let wiki = format!("{}/wiki", fake.url);
    let r = t
        .ok(
            "confluence_create_page",
            json!({"space_id": "ENG", "title": "Rollback", "body": "## Steps\n\n1. `helm rollback api`\n2. Tell **#ops**", "parent_id": "123456", "status": "draft"}),
        )
        .await;
    let post = fake.last();
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/wiki/api/v2/pages"));
    assert_auth(&post);
    assert_eq!(
        sent(&post),
        json!({
            "spaceId": "98306", "status": "draft", "title": "Rollback",
            "body": {"representation": "storage", "value": "<h2>Steps</h2><ol><li><code>helm rollback api</code></li><li>Tell <strong>#ops</strong></li></ol>"},
            "parentId": "123456"
        })
    );
    assert_eq!(
        r,
        json!({"id": "777", "title": "Rollback", "status": "draft", "space_id": "98306", "parent_id": "123456", "version": 1,
               "url": format!("{wiki}/spaces/ENG/pages/777/Rollback")})
    );
    let raw = t
        .ok(
            "confluence_create_page",
            json!({"space_id": "98306", "title": "Raw", "body": "<p>as is</p>", "body_format": "storage"}),
        )
        .await;
    assert_eq!(sent(&fake.last())["body"]["value"], "<p>as is</p>");
    assert_eq!(sent(&fake.last())["status"], "current");
    assert_eq!(raw["id"], "777");

    let dup =
        t.err("confluence_create_page", json!({"space_id": "98306", "title": "Restart the API", "body": "x"})).await;
    assert_eq!(dup["status"], 400);
    assert!(dup["message"].as_str().unwrap().contains("A page with this title already exists"), "{dup}");
}

#[tokio::test]
async fn confluence_update_page_bumps_the_version_and_reports_conflicts() {
    let (t, fake) = confluence().await;
    let r = t
        .ok(
            "confluence_update_page",
            json!({"page_id": "123456", "body": "Use the **new** script.", "version_message": "new script"}),
        )
        .await;
    let reqs = fake.requests();
    let (get, put) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!(
        (get.method.as_str(), get.path.as_str(), get.q("body-format")),
        ("GET", "/wiki/api/v2/pages/123456", Some("storage"))
    );
    assert_eq!((put.method.as_str(), put.path.as_str()), ("PUT", "/wiki/api/v2/pages/123456"));
    assert_auth(put);
    assert_eq!(
        sent(put),
        json!({
            "id": "123456", "status": "current", "title": "Restart the API",
            "body": {"representation": "storage", "value": "<p>Use the <strong>new</strong> script.</p>"},
            "version": {"number": 6, "message": "new script"}
        })
    );
    assert_eq!(r["version"], 6);
    assert_eq!(r["title"], "Restart the API");

    t.ok(
        "confluence_update_page",
        json!({"page_id": "123456", "body": "- appended", "append": true, "title": "Restart the API (v2)"}),
    )
    .await;
    let put = fake.last();
    assert_eq!(sent(&put)["body"]["value"], format!("{RUNBOOK}<ul><li>appended</li></ul>"));
    assert_eq!(sent(&put)["title"], "Restart the API (v2)");
    assert_eq!(sent(&put)["version"], json!({"number": 6}));

    t.ok("confluence_update_page", json!({"page_id": "123456", "title": "Renamed"})).await;
    assert_eq!(sent(&fake.last())["body"]["value"], RUNBOOK, "the body is kept when only the title changes");

    let conflict = t.err("confluence_update_page", json!({"page_id": "999", "body": "mine"})).await;
    assert_eq!(conflict["code"], "UPSTREAM_ERROR");
    assert_eq!(conflict["status"], 409);
    let msg = conflict["message"].as_str().unwrap();
    assert!(
        msg.contains("version conflict") && msg.contains("read at version 7") && msg.contains("Current version is: 8"),
        "{msg}"
    );

    let nothing = t.err("confluence_update_page", json!({"page_id": "123456"})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn confluence_list_spaces_and_comment() {
    let (t, fake) = confluence().await;
    let wiki = format!("{}/wiki", fake.url);
    let s = t.ok("confluence_list_spaces", json!({"type": "global", "limit": 1})).await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("type"), req.q("limit"), req.q("keys")),
        ("/wiki/api/v2/spaces", Some("global"), Some("1"), None)
    );
    assert_auth(&req);
    assert_eq!(
        s,
        json!({"spaces": [{"id": "98306", "key": "ENG", "name": "Engineering", "type": "global", "homepage_id": "65537", "url": format!("{wiki}/spaces/ENG")}],
               "next_cursor": NEXT_CURSOR})
    );
    let raw_len = confluence_api(&req).body.len();
    eprintln!("confluence_list_spaces: raw {raw_len} bytes -> shaped {} bytes", s.to_string().len());
    assert!(s.to_string().len() * 2 < raw_len);
    let s2 = t.ok("confluence_list_spaces", json!({"type": "global", "limit": 1, "cursor": NEXT_CURSOR})).await;
    assert_eq!(s2["spaces"][0]["key"], "OPS");
    assert!(s2.get("next_cursor").is_none());
    let keyed = t.ok("confluence_list_spaces", json!({"keys": ["ENG", "~ada"]})).await;
    assert_eq!(fake.last().q("keys"), Some("ENG,~ada"));
    assert_eq!(keyed["spaces"].as_array().unwrap().len(), 2);

    let c = t.ok("confluence_create_comment", json!({"page_id": "123456", "body": "Tested on **staging**."})).await;
    let post = fake.last();
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/wiki/api/v2/footer-comments"));
    assert_auth(&post);
    assert_eq!(
        sent(&post),
        json!({"pageId": "123456", "body": {"representation": "storage", "value": "<p>Tested on <strong>staging</strong>.</p>"}})
    );
    // The comment response has no _links.base: the link is built from the connection's site.
    assert_eq!(
        c,
        json!({"id": "5001", "page_id": "123456", "version": 1,
               "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/123456/Restart+the+API?focusedCommentId=5001"})
    );
    let reply = t
        .ok("confluence_create_comment", json!({"page_id": "123456", "body": "Agreed", "parent_comment_id": "4999"}))
        .await;
    assert_eq!(
        sent(&fake.last()),
        json!({"parentCommentId": "4999", "body": {"representation": "storage", "value": "<p>Agreed</p>"}})
    );
    assert_eq!(reply["parent_comment_id"], "4999");
}

#[tokio::test]
async fn confluence_rejected_token_and_rate_limit() {
    let fake = Fake::start(confluence_api).await;
    let t = app_with(&[
        ("WORKBENCH_CONFLUENCE_BASE_URL", format!("{}/wiki", fake.url)),
        ("WORKBENCH_CONFLUENCE_SITE", "acme.atlassian.net".into()),
        ("WORKBENCH_CONFLUENCE_EMAIL", EMAIL.into()),
        ("WORKBENCH_CONFLUENCE_TOKEN", "revoked".into()),
    ]);
    let e = t.err("confluence_list_spaces", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Unauthorized"), "{msg}");

    let (t, _) = confluence().await;
    let rl = t.err("confluence_get_page", json!({"page_id": "429"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn confluence_identity_and_site_host() {
    let (t, _fake) = confluence().await;
    let integration = &plugins::confluence::INTEGRATION;
    let fields = |token: &str| -> HashMap<String, Secret<String>> {
        HashMap::from([
            ("site".to_string(), Secret::new("acme.atlassian.net".to_string())),
            ("email".to_string(), Secret::new(EMAIL.to_string())),
            ("token".to_string(), Secret::new(token.to_string())),
        ])
    };
    let good = workbench::auth::from_fields(integration, fields(TOKEN), workbench::auth::Source::Store);
    assert_eq!(workbench::send::verify_identity(&t.app, integration, good).await.unwrap().as_deref(), Some(EMAIL));
    let bad = workbench::auth::from_fields(integration, fields("nope"), workbench::auth::Source::Store);
    let err = workbench::send::verify_identity(&t.app, integration, bad).await.unwrap_err();
    assert!(err.to_string().contains("rejected this credential"), "{err}");

    let plain = crate::support::app();
    let conn = workbench::auth::from_fields(integration, fields(TOKEN), workbench::auth::Source::Store);
    let url = workbench::send::host_url(&plain.app, integration, "base_url", &[], Some(&conn)).unwrap();
    assert_eq!(url, "https://acme.atlassian.net/wiki");
}

#[tokio::test]
async fn confluence_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("search the wiki for the deploy runbook", "confluence_search_pages"),
        ("create a confluence page", "confluence_create_page"),
        ("edit confluence page", "confluence_update_page"),
        ("child pages of a confluence page", "confluence_list_pages"),
        ("confluence space key", "confluence_list_spaces"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
