//! Hacker News tools on `MockUpstream`: the exact request each tool sends (Firebase API for
//! lists, items and users, Algolia for search and comment trees) and the shape of what it returns
//! from answers with the services' own field names.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn story(id: u64, title: &str) -> Value {
    json!({"by": "pg", "descendants": 15, "id": id, "kids": [8952, 9224], "score": 111,
           "time": 1_175_714_200, "title": title, "type": "story", "url": "http://www.getdropbox.com/u/2/screencast.html"})
}

/// list_stories reads the list's ids, then each story of the page; deleted and dead items are
/// skipped; the cursor is the next offset.
#[test]
fn list_stories_reads_the_ids_then_each_story() {
    let (out, reqs) = MockUpstream::new()
        .json(json!([8863, 8864, 8865]))
        .json(story(8863, "My YC app: Dropbox"))
        .json(json!({"id": 8864, "deleted": true, "type": "story"}))
        .ok(&LIST_STORIES, json!({"list": "best", "limit": 2}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/beststories.json", "query": [], "body": null}));
    assert_eq!(sent(&reqs[1])["path"], "/item/8863.json");
    assert_eq!(sent(&reqs[2])["path"], "/item/8864.json");
    assert_eq!(
        out,
        json!({"list": "best", "next_cursor": "2", "stories": [{
            "id": 8863, "type": "story", "title": "My YC app: Dropbox",
            "url": "http://www.getdropbox.com/u/2/screencast.html", "author": "pg", "points": 111,
            "comments": 15, "time": "2007-04-04T19:16:40Z", "hn_url": "https://news.ycombinator.com/item?id=8863"
        }]})
    );
    // The second page starts at the cursor and is the last one.
    let (out, reqs) = MockUpstream::new()
        .json(json!([8863, 8864, 8865]))
        .json(story(8865, "Third"))
        .ok(&LIST_STORIES, json!({"list": "best", "limit": 2, "cursor": "2"}));
    assert_eq!(sent(&reqs[1])["path"], "/item/8865.json");
    assert!(out.get("next_cursor").is_none());
}

/// A cursor the tool did not issue is refused before anything is sent; a list answer that is
/// not an array is an empty list, not a panic.
#[test]
fn list_stories_refuses_a_foreign_cursor_and_survives_a_strange_answer() {
    let (r, reqs) = MockUpstream::new().json(json!([1])).call(&LIST_STORIES, json!({"cursor": "../x"}));
    assert!(message(&r.unwrap_err()).contains("not one this tool issued"));
    assert_eq!(reqs.len(), 1);
    let (out, _) = MockUpstream::new().json(json!({"error": "nope"})).ok(&LIST_STORIES, json!({}));
    assert_eq!(out, json!({"list": "top", "stories": []}));
}

/// get_item: one Firebase item, HTML text to plain text, kids as reply ids; a null answer (an
/// id that does not exist) is a 404 naming the id.
#[test]
fn get_item_shapes_the_item_and_names_a_missing_one() {
    let comment = json!({"by": "norvig", "id": 2921983, "kids": [2922097], "parent": 2921506,
                         "text": "Aw shucks, guys &#x2F; you <i>make</i> me blush.", "time": 1314211127, "type": "comment"});
    let (out, reqs) = MockUpstream::new().json(comment).ok(&GET_ITEM, json!({"item_id": 2921983}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/item/2921983.json", "query": [], "body": null}));
    assert_eq!(reqs[0].host, "base_url");
    assert_eq!(out["author"], "norvig");
    assert_eq!(out["text"], "Aw shucks, guys / you make me blush.");
    assert_eq!((out["parent"].clone(), out["reply_ids"].clone()), (json!(2921506), json!([2922097])));
    let (r, _) = MockUpstream::new().json(Value::Null).call(&GET_ITEM, json!({"item_id": 99}));
    let Err(ToolError::Upstream { status: 404, message, .. }) = r else { panic!("{r:?}") };
    assert!(message.contains("no item 99"));
}

/// get_item with comments reads Algolia's tree, cut at max_depth with the count of what is left.
#[test]
fn get_item_with_comments_reads_the_algolia_tree() {
    let tree = json!({"id": 1, "type": "story", "title": "T", "author": "a", "points": 3,
    "created_at": "2024-01-01T00:00:00.000Z", "children": [
        {"id": 2, "author": "b", "created_at": "2024-01-01T01:00:00.000Z", "text": "<p>first</p>",
         "children": [{"id": 3, "author": "c", "text": "deep", "children": []}]}
    ]});
    let (out, reqs) =
        MockUpstream::new().json(tree).ok(&GET_ITEM, json!({"item_id": 1, "include_comments": true, "max_depth": 1}));
    assert_eq!((reqs[0].host, reqs[0].path.as_str()), ("algolia_base_url", "/items/1"));
    assert_eq!(
        out["comments"],
        json!([{"id": 2, "author": "b", "time": "2024-01-01T01:00:00.000Z", "text": "first", "more_replies": 1}])
    );
}

/// search_stories: Algolia's parameters in order, hits shaped, the page cursor from nbPages.
#[test]
fn search_stories_sends_algolias_parameters() {
    let body = json!({"hits": [{"objectID": "39000000", "title": "Rust 2.0", "url": "https://e.example",
        "author": "steve", "points": 321, "num_comments": 45, "created_at": "2024-02-01T10:00:00Z",
        "_highlightResult": {}}], "nbHits": 40, "nbPages": 2, "page": 0});
    let (out, reqs) = MockUpstream::new().json(body).ok(
        &SEARCH_STORIES,
        json!({"query": "rust", "numeric_filters": "points>100", "sort_by_date": true, "limit": 20}),
    );
    assert_eq!(reqs[0].host, "algolia_base_url");
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search_by_date", "body": null, "query": [
            ["query", "rust"], ["tags", "story"], ["numericFilters", "points>100"], ["hitsPerPage", "20"], ["page", "0"]]})
    );
    assert_eq!(
        out,
        json!({"total": 40, "next_cursor": "1", "hits": [{"id": 39000000, "title": "Rust 2.0", "url": "https://e.example",
            "author": "steve", "points": 321, "comments": 45, "time": "2024-02-01T10:00:00Z",
            "hn_url": "https://news.ycombinator.com/item?id=39000000"}]})
    );
}

/// get_user: the name is one encoded path segment (no traversal), the profile is shaped.
#[test]
fn get_user_encodes_the_name_and_shapes_the_profile() {
    let user = json!({"about": "This is a test", "created": 1173923446, "id": "jl", "karma": 2937,
                      "submitted": [8265435, 8168423]});
    let (out, reqs) = MockUpstream::new().json(user).ok(&GET_USER, json!({"username": "jl"}));
    assert_eq!(sent(&reqs[0])["path"], "/user/jl.json");
    assert_eq!(
        out,
        json!({"username": "jl", "karma": 2937, "created": "2007-03-15T01:50:46Z", "about": "This is a test",
               "submission_count": 2, "recent_submission_ids": [8265435, 8168423],
               "profile_url": "https://news.ycombinator.com/user?id=jl"})
    );
    let (r, reqs) = MockUpstream::new().json(Value::Null).call(&GET_USER, json!({"username": "../item/1"}));
    assert_eq!(reqs[0].path, "/user/..%2Fitem%2F1.json");
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, .. })));
}
