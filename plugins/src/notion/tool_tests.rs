//! Notion tools on `MockUpstream`: the exact request of reads and writes (the Notion-Version
//! header, search bodies, ids normalised from URLs before they reach a path, Markdown sent as rich
//! text) and the shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, header, message, sent};

const PAGE: &str = "1c2d3e4f-5a6b-7c8d-9e0f-a1b2c3d4e5f6";

fn page() -> Value {
    json!({"object": "page", "id": PAGE, "created_time": "2026-01-01T10:00:00.000Z", "last_edited_time": "2026-01-02T10:00:00.000Z",
        "in_trash": false, "url": "https://www.notion.so/Roadmap-1c2d3e4f5a6b7c8d9e0fa1b2c3d4e5f6",
        "parent": {"type": "page_id", "page_id": "00000000-0000-0000-0000-000000000001"},
        "properties": {"title": {"id": "title", "type": "title", "title": [{"type": "text", "plain_text": "Roadmap", "text": {"content": "Roadmap"}}]}}})
}

#[test]
fn search_pages_sends_the_search_body_and_shapes_results() {
    let reply = json!({"object": "list", "results": [page(), {"object": "data_source", "id": "ds-1",
        "parent": {"type": "database_id", "database_id": "db-1"}, "title": [{"plain_text": "Tasks"}],
        "url": "https://www.notion.so/db1", "last_edited_time": "2026-01-03T10:00:00.000Z"}],
        "next_cursor": "cur2", "has_more": true});
    let (out, reqs) = MockUpstream::new()
        .json(reply)
        .ok(&SEARCH_PAGES, json!({"query": " roadmap ", "sort": "last_edited_newest", "limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/search", "query": [], "body": {"page_size": 2, "query": "roadmap",
            "sort": {"direction": "descending", "timestamp": "last_edited_time"}}})
    );
    assert_eq!(header(&reqs[0], "notion-version"), Some(NOTION_VERSION));
    assert_eq!(
        out,
        json!({"next_cursor": "cur2", "results": [
            {"object": "page", "id": PAGE, "title": "Roadmap", "url": "https://www.notion.so/Roadmap-1c2d3e4f5a6b7c8d9e0fa1b2c3d4e5f6",
             "parent": {"type": "page", "id": "00000000-0000-0000-0000-000000000001"}, "last_edited_time": "2026-01-02T10:00:00.000Z"},
            {"object": "database", "id": "db-1", "data_source_id": "ds-1", "title": "Tasks", "url": "https://www.notion.so/db1",
             "last_edited_time": "2026-01-03T10:00:00.000Z"}]})
    );
    // Nothing shared: the note says how to share, no cursor.
    let (out, _) = MockUpstream::new().json(json!({"results": [], "has_more": false})).ok(&SEARCH_PAGES, json!({}));
    assert_eq!(out["results"], json!([]));
    assert!(out["note"].as_str().unwrap().contains("Connections"));
}

/// A page URL is reduced to its id before it reaches the path; anything else is refused unsent.
#[test]
fn get_page_takes_a_url_and_refuses_a_path() {
    let (_, reqs) = MockUpstream::new()
        .json(page())
        .ok(&GET_PAGE, json!({"page_id": "https://www.notion.so/acme/Roadmap-1c2d3e4f5a6b7c8d9e0fa1b2c3d4e5f6?pvs=4"}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": format!("/pages/{PAGE}"), "query": [], "body": null}));
    let (r, reqs) = MockUpstream::new().call(&GET_PAGE, json!({"page_id": "../users/me"}));
    assert!(message(&r.unwrap_err()).contains("is not a Notion id"));
    assert!(reqs.is_empty());
}

#[test]
fn create_comment_sends_rich_text_to_the_page() {
    let reply = json!({"object": "comment", "id": "cm-1", "discussion_id": "d-1", "parent": {"type": "page_id", "page_id": PAGE},
        "created_time": "2026-01-04T10:00:00.000Z", "rich_text": [{"type": "text", "plain_text": "Ship it", "text": {"content": "Ship it"}}]});
    let (out, reqs) = MockUpstream::new()
        .json(reply)
        .ok(&CREATE_COMMENT, json!({"page_id": PAGE.replace('-', ""), "text": "Ship **it**"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/comments", "query": [],
               "body": {"parent": {"page_id": PAGE}, "rich_text": markdown::md_to_rich_text("Ship **it**")}})
    );
    assert_eq!(
        out,
        json!({"id": "cm-1", "discussion_id": "d-1", "page_id": PAGE, "created_time": "2026-01-04T10:00:00.000Z", "text": "Ship it"})
    );
    let (r, reqs) =
        MockUpstream::new().call(&CREATE_COMMENT, json!({"page_id": PAGE, "discussion_id": "d-1", "text": "x"}));
    assert!(message(&r.unwrap_err()).contains("exactly one of page_id or discussion_id"));
    assert!(reqs.is_empty());
}

const DB: &str = "2f26ee68-df30-4251-aad4-8ddc420cba3d";
const DS: &str = "aa11bb22-cc33-4d44-8e55-ff6677889900";

/// query_database with a database id: its one data source is looked up, then queried with the
/// filter and sorts passed as Notion takes them; a database with several sources is an argument
/// error naming them.
#[test]
fn query_database_resolves_the_data_source() {
    let mut row = page();
    row["properties"]["Status"] = json!({"id": "s", "type": "status", "status": {"name": "Doing"}});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"object": "database", "id": DB, "data_sources": [{"id": DS, "name": "Tasks"}]}))
        .json(json!({"object": "list", "results": [row], "next_cursor": "c2", "has_more": true}))
        .ok(&QUERY_DATABASE, json!({"database_id": DB.replace('-', ""), "filter": {"property": "Status", "status": {"equals": "Doing"}},
                                    "sorts": [{"timestamp": "last_edited_time", "direction": "descending"}], "limit": 1}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": format!("/databases/{DB}"), "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": format!("/data_sources/{DS}/query"), "query": [], "body": {"page_size": 1,
            "filter": {"property": "Status", "status": {"equals": "Doing"}},
            "sorts": [{"timestamp": "last_edited_time", "direction": "descending"}]}})
    );
    assert_eq!((out["data_source_id"].clone(), out["next_cursor"].clone()), (json!(DS), json!("c2")));
    assert_eq!(out["rows"][0]["title"], "Roadmap");
    assert_eq!(out["rows"][0]["properties"]["Status"], "Doing");
    let (r, reqs) = MockUpstream::new()
        .json(json!({"data_sources": [{"id": "a", "name": "One"}, {"id": "b", "name": "Two"}]}))
        .call(&QUERY_DATABASE, json!({"database_id": DB}));
    let m = message(&r.unwrap_err());
    assert!(m.contains("2 data sources") && m.contains("One (a)"), "{m}");
    assert_eq!(reqs.len(), 1);
}

fn para(id: &str, text: &str, has_children: bool) -> Value {
    json!({"object": "block", "id": id, "type": "paragraph", "has_children": has_children,
        "paragraph": {"rich_text": [{"type": "text", "plain_text": text, "text": {"content": text}, "annotations": {}}]}})
}

/// get_page_content: the top blocks of a page (by its URL), each nested block read below its
/// parent, rendered as Markdown; Notion's cursor passed on.
#[test]
fn get_page_content_reads_nested_blocks_as_markdown() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"object": "list", "results": [
            {"object": "block", "id": "b1", "type": "heading_2", "has_children": false,
             "heading_2": {"rich_text": [{"type": "text", "plain_text": "Goals", "text": {"content": "Goals"}, "annotations": {}}]}},
            para("b2", "Ship search", true)], "next_cursor": "b3", "has_more": true}))
        .json(json!({"object": "list", "results": [para("b2a", "by March", false)], "next_cursor": null, "has_more": false}))
        .ok(&GET_PAGE_CONTENT, json!({"page_id": "https://www.notion.so/Roadmap-1c2d3e4f5a6b7c8d9e0fa1b2c3d4e5f6", "limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": format!("/blocks/{PAGE}/children"), "body": null, "query": [["page_size", "2"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/blocks/b2/children", "body": null, "query": [["page_size", "100"]]})
    );
    assert_eq!(
        out,
        json!({"page_id": PAGE, "markdown": "## Goals\n\nShip search\n  by March", "block_count": 3, "next_cursor": "b3"})
    );
    // An empty page says where its properties are.
    let (out, _) = MockUpstream::new()
        .json(json!({"object": "list", "results": [], "next_cursor": null, "has_more": false}))
        .ok(&GET_PAGE_CONTENT, json!({"page_id": PAGE}));
    assert_eq!(
        out,
        json!({"page_id": PAGE, "markdown": "", "block_count": 0,
            "note": "The page has no content blocks (its properties are in notion_get_page)."})
    );
}

/// create_page under a page: title as rich text, Markdown as children, in one request; database
/// properties under a page are refused before any request.
#[test]
fn create_page_sends_title_and_blocks_in_one_request() {
    let (out, reqs) = MockUpstream::new().json(page()).ok(
        &CREATE_PAGE,
        json!({"parent_id": "00000000000000000000000000000001", "title": "Roadmap", "content": "Ship **search**", "icon": "🚀"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/pages", "query": [], "body": {
            "parent": {"type": "page_id", "page_id": "00000000-0000-0000-0000-000000000001"},
            "properties": {"title": {"title": [{"type": "text", "text": {"content": "Roadmap"}}]}},
            "icon": {"type": "emoji", "emoji": "🚀"},
            "children": [{"object": "block", "type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": "Ship "}},
                {"type": "text", "text": {"content": "search"}, "annotations": {"bold": true}}]}}]}})
    );
    assert_eq!(out["id"], json!(PAGE));
    assert_eq!(out["blocks_added"], json!(1));
    let (r, reqs) = MockUpstream::new()
        .call(&CREATE_PAGE, json!({"parent_id": PAGE, "title": "Row", "properties": {"Status": "Done"}}));
    assert!(message(&r.unwrap_err()).contains("a page under a page has only a title"));
    assert!(reqs.is_empty());
}

/// update_page: the page is read first for its property types, then patched with the new title
/// under the page's own title property name.
#[test]
fn update_page_reads_the_schema_then_patches() {
    let mut row = page();
    row["properties"] = json!({"Name": {"id": "title", "type": "title", "title": [{"plain_text": "Old"}]},
        "Done": {"id": "d%3Ax", "type": "checkbox", "checkbox": false}});
    let (out, reqs) = MockUpstream::new()
        .json(row.clone())
        .json(row)
        .ok(&UPDATE_PAGE, json!({"page_id": PAGE, "title": "New", "properties": {"Done": true}}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": format!("/pages/{PAGE}"), "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PATCH", "path": format!("/pages/{PAGE}"), "query": [], "body": {"properties": {
            "Done": {"checkbox": true}, "Name": {"title": [{"type": "text", "text": {"content": "New"}}]}}}})
    );
    assert_eq!(out["id"], json!(PAGE));
    let (r, reqs) = MockUpstream::new().call(&UPDATE_PAGE, json!({"page_id": PAGE}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
}

/// add_blocks: Markdown appended after a given block; the ids of what Notion created.
#[test]
fn add_blocks_appends_after_a_block() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"object": "list", "results": [para("n1", "one", false), para("n2", "two", false)]}))
        .ok(
            &ADD_BLOCKS,
            json!({"page_id": PAGE, "content": "one\n\ntwo", "after_block_id": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": format!("/blocks/{PAGE}/children"), "query": [], "body": {"children": [
            {"object": "block", "type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": "one"}}]}},
            {"object": "block", "type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": "two"}}]}}],
            "position": {"type": "after_block", "after_block": {"id": "b1b1b1b1-b1b1-b1b1-b1b1-b1b1b1b1b1b1"}}}})
    );
    assert_eq!(out, json!({"page_id": PAGE, "blocks_added": 2, "first_block_id": "n1", "last_block_id": "n2"}));
    let (r, reqs) = MockUpstream::new().call(&ADD_BLOCKS, json!({"page_id": PAGE, "content": "   "}));
    assert!(message(&r.unwrap_err()).contains("the Markdown has no content"));
    assert!(reqs.is_empty());
}

/// get_database: the database, then each of its data sources for their property schemas.
#[test]
fn get_database_reads_each_data_source() {
    let db = json!({"object": "database", "id": "db-1", "title": [{"plain_text": "Tasks"}], "url": "https://www.notion.so/db1",
        "data_sources": [{"id": "ds-1", "name": "Tasks"}]});
    let ds = json!({"object": "data_source", "id": "ds-1", "title": [{"plain_text": "Tasks"}], "properties": {
        "Name": {"id": "title", "name": "Name", "type": "title", "title": {}},
        "Status": {"id": "s", "name": "Status", "type": "select", "select": {"options": [{"id": "o1", "name": "Done", "color": "green"}]}}}});
    let (out, reqs) = MockUpstream::new()
        .json(db)
        .json(ds)
        .ok(&GET_DATABASE, json!({"database_id": "db1db1db1db1db1db1db1db1db1db1db"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/databases/db1db1db-1db1-db1d-b1db-1db1db1db1db", "query": [], "body": null})
    );
    assert_eq!(sent(&reqs[1]), json!({"method": "GET", "path": "/data_sources/ds-1", "query": [], "body": null}));
    assert_eq!(
        out,
        json!({"id": "db-1", "title": "Tasks", "url": "https://www.notion.so/db1", "data_sources": [{"id": "ds-1", "name": "Tasks",
            "properties": {"Name": {"type": "title"}, "Status": {"type": "select", "options": ["Done"]}}}]})
    );
}
