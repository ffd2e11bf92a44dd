//! Confluence tools on `MockUpstream`: the exact request of reads and writes (v2 API, space keys
//! looked up to ids, Markdown sent as storage XHTML, cursors from `_links.next`, numeric ids only)
//! and the shapes an agent reads.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn list_spaces_pages_with_the_next_link_cursor() {
    let body = json!({"results": [{"id": "98306", "key": "ENG", "name": "Engineering", "type": "global", "status": "current",
        "homepageId": "98310", "_links": {"webui": "/spaces/ENG"}}],
        "_links": {"next": "/wiki/api/v2/spaces?cursor=eyJpZCI6IjEifQ%3D%3D&limit=1", "base": "https://acme.atlassian.net/wiki"}});
    let (out, reqs) =
        MockUpstream::new().json(body).ok(&LIST_SPACES, json!({"keys": ["ENG", "OPS"], "type": "global", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/spaces", "body": null, "query": [["keys", "ENG,OPS"], ["type", "global"], ["limit", "1"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "eyJpZCI6IjEifQ==", "spaces": [{"id": "98306", "key": "ENG", "name": "Engineering", "type": "global",
            "homepage_id": "98310", "url": "https://acme.atlassian.net/wiki/spaces/ENG"}]})
    );
}

/// create_page with a space key: the key is looked up, the Markdown body goes as storage XHTML.
#[test]
fn create_page_looks_the_space_up_and_sends_storage() {
    let (out, reqs) = MockUpstream::new()
        .with_field("site", "acme.atlassian.net")
        .json(json!({"results": [{"id": "98306", "key": "ENG"}]}))
        .json(json!({"id": "131073", "title": "Runbook", "status": "current", "spaceId": "98306", "parentId": "98310",
            "version": {"number": 1, "createdAt": "2026-01-05T10:00:00.000Z"}, "_links": {"webui": "/spaces/ENG/pages/131073/Runbook"}}))
        .ok(&CREATE_PAGE, json!({"space_id": "eng", "title": "Runbook", "body": "# Steps\n\n1. **Page** on-call", "parent_id": "98310"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/spaces", "body": null, "query": [["keys", "eng"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/api/v2/pages", "query": [], "body": {"spaceId": "98306", "status": "current",
            "title": "Runbook", "parentId": "98310",
            "body": {"representation": "storage", "value": storage::from_markdown("# Steps\n\n1. **Page** on-call")}}})
    );
    assert_eq!(
        out,
        json!({"id": "131073", "title": "Runbook", "status": "current", "space_id": "98306", "parent_id": "98310", "version": 1,
            "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131073/Runbook"})
    );
    // An unknown key is an argument error naming it; a parent that is not numeric is refused unsent.
    let (r, _) = MockUpstream::new()
        .json(json!({"results": []}))
        .call(&CREATE_PAGE, json!({"space_id": "NOPE", "title": "t", "body": "b"}));
    assert!(message(&r.unwrap_err()).contains("no space with key 'NOPE'"));
    let (r, reqs) = MockUpstream::new()
        .call(&CREATE_PAGE, json!({"space_id": "1", "title": "t", "body": "b", "parent_id": "../1"}));
    assert!(message(&r.unwrap_err()).contains("is not a Confluence id"));
    assert!(reqs.is_empty());
}

#[test]
fn create_comment_starts_a_thread_or_replies() {
    let answer = json!({"id": "200001", "pageId": "131073", "version": {"number": 1},
        "_links": {"webui": "/spaces/ENG/pages/131073?focusedCommentId=200001", "base": "https://acme.atlassian.net/wiki"}});
    let (out, reqs) =
        MockUpstream::new().json(answer).ok(&CREATE_COMMENT, json!({"page_id": "131073", "body": "Looks *good*"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/api/v2/footer-comments", "query": [],
               "body": {"pageId": "131073", "body": {"representation": "storage", "value": storage::from_markdown("Looks *good*")}}})
    );
    assert_eq!(
        out,
        json!({"id": "200001", "page_id": "131073", "version": 1,
               "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131073?focusedCommentId=200001"})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!({"id": "200002", "parentCommentId": "200001"}))
        .ok(&CREATE_COMMENT, json!({"page_id": "131073", "body": "Agreed", "parent_comment_id": "200001"}));
    assert_eq!(sent(&reqs[0])["body"]["parentCommentId"], "200001");
    assert!(sent(&reqs[0])["body"].get("pageId").is_none());
}

/// search_pages builds CQL from words: the text is a quoted CQL string (a quote in it cannot
/// end the string), the space key too; excerpt highlight markers are removed.
#[test]
fn search_pages_builds_quoted_cql() {
    let body = json!({"results": [{"content": {"id": "131073", "type": "page", "title": "Runbook"}, "title": "Runbook",
        "excerpt": "How to @@@hl@@@page@@@endhl@@@ the   on-call", "url": "/spaces/ENG/pages/131073/Runbook",
        "resultGlobalContainer": {"title": "Engineering"}, "lastModified": "2026-01-05T10:00:00.000Z", "entityType": "content"}],
        "totalSize": 1, "_links": {"base": "https://acme.atlassian.net/wiki"}});
    let (out, reqs) =
        MockUpstream::new().json(body).ok(&SEARCH_PAGES, json!({"query": "page \" OR space = X", "space_key": "ENG"}));
    let cql = format!(
        "type in (page, blogpost) AND text ~ {} AND space = {}",
        cql_string("page \" OR space = X"),
        cql_string("ENG")
    );
    assert!(cql.contains("text ~ \"page \\\" OR space = X\""), "{cql}");
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/rest/api/search", "body": null, "query": [["cql", cql], ["limit", "25"]]})
    );
    assert_eq!(
        out["results"],
        json!([{"id": "131073", "type": "page", "title": "Runbook", "space": "Engineering", "excerpt": "How to page the on-call",
            "last_modified": "2026-01-05T10:00:00.000Z", "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131073/Runbook"}])
    );
    let (r, reqs) = MockUpstream::new().call(&SEARCH_PAGES, json!({"cql": "type = page", "space_key": "ENG"}));
    assert!(message(&r.unwrap_err()).contains("space_key only applies to query"));
    assert!(reqs.is_empty());
}

/// get_page turns the storage body into Markdown and cuts it to max_chars.
#[test]
fn get_page_converts_the_body() {
    let xhtml = "<h1>Steps</h1><p>Page the <strong>on-call</strong></p>";
    let page = json!({"id": "131073", "title": "Runbook", "status": "current", "spaceId": "98306", "parentId": "98310", "authorId": "5b10",
        "createdAt": "2026-01-01T10:00:00.000Z", "version": {"number": 3, "message": "", "createdAt": "2026-01-05T10:00:00.000Z"},
        "body": {"storage": {"value": xhtml, "representation": "storage"}}, "_links": {"webui": "/spaces/ENG/pages/131073", "base": "https://acme.atlassian.net/wiki"}});
    let (out, reqs) = MockUpstream::new().json(page).ok(&GET_PAGE, json!({"page_id": "131073"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/pages/131073", "body": null, "query": [["body-format", "storage"]]})
    );
    assert_eq!(out["body"], storage::to_markdown(xhtml));
    assert_eq!((out["version"].clone(), out["truncated"].clone()), (json!(3), json!(false)));
    assert!(out.get("version_message").is_none());
    let (r, reqs) = MockUpstream::new().call(&GET_PAGE, json!({"page_id": "../admin"}));
    assert!(message(&r.unwrap_err()).contains("is not a Confluence id"));
    assert!(reqs.is_empty());
}

/// list_pages of a space by key: the key is looked up to its id, Confluence's sort names and the
/// `_links.next` cursor; a page in draft says so, a current one does not.
#[test]
fn list_pages_of_a_space_looks_the_key_up_and_pages() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"results": [{"id": "98306", "key": "ENG", "name": "Engineering"}]}))
        .json(json!({"results": [
            {"id": "131073", "title": "Runbook", "status": "current", "parentId": "98310",
             "version": {"number": 4, "createdAt": "2026-02-01T10:00:00.000Z"}, "_links": {"webui": "/spaces/ENG/pages/131073/Runbook"}},
            {"id": "131080", "title": "Runbook", "status": "draft", "version": {"number": 1, "createdAt": "2026-02-02T10:00:00.000Z"}, "_links": {}}],
            "_links": {"next": "/wiki/api/v2/spaces/98306/pages?cursor=abc%3D&limit=2", "base": "https://acme.atlassian.net/wiki"}}))
        .ok(&LIST_PAGES, json!({"space_id": "ENG", "title": "Runbook", "sort": "modified_desc", "limit": 2, "cursor": "prev"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/spaces", "body": null, "query": [["keys", "ENG"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/api/v2/spaces/98306/pages", "body": null,
               "query": [["title", "Runbook"], ["sort", "-modified-date"], ["limit", "2"], ["cursor", "prev"]]})
    );
    assert_eq!(
        out,
        json!({"space_id": "98306", "next_cursor": "abc=", "pages": [
            {"id": "131073", "title": "Runbook", "parent_id": "98310", "version": 4, "last_updated": "2026-02-01T10:00:00.000Z",
             "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131073/Runbook"},
            {"id": "131080", "title": "Runbook", "status": "draft", "version": 1, "last_updated": "2026-02-02T10:00:00.000Z",
             "url": "https://acme.atlassian.net/wiki/pages/viewpage.action?pageId=131080"}]})
    );
}

/// Child pages of a page in tree order; arguments that do not fit child pages (a title filter,
/// both scopes) are refused before anything is sent.
#[test]
fn list_pages_of_a_parent_and_refused_combinations() {
    let (out, reqs) = MockUpstream::new()
        .with_field("site", "acme.atlassian.net")
        .json(json!({"results": [{"id": "131090", "title": "Step 1", "status": "current", "_links": {"webui": "/spaces/ENG/pages/131090"}}]}))
        .ok(&LIST_PAGES, json!({"parent_id": "131073", "sort": "position"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/pages/131073/children", "body": null, "query": [["sort", "child-position"], ["limit", "25"]]})
    );
    assert_eq!(
        out,
        json!({"parent_id": "131073", "pages": [{"id": "131090", "title": "Step 1", "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131090"}]})
    );
    for args in [
        json!({"parent_id": "131073", "title": "Step 1"}),
        json!({"parent_id": "131073", "sort": "title"}),
        json!({"space_id": "98306", "parent_id": "131073"}),
        json!({"space_id": "98306", "sort": "position"}),
        json!({"parent_id": "../1"}),
    ] {
        let (r, reqs) = MockUpstream::new().call(&LIST_PAGES, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}

/// update_page reads the page for its version, appends the new storage to the existing body and
/// sends the next version with the history note; the title is kept when not given.
#[test]
fn update_page_appends_with_the_next_version() {
    let current = json!({"id": "131073", "title": "Runbook", "status": "current", "spaceId": "98306",
        "version": {"number": 4}, "body": {"storage": {"value": "<p>Old steps</p>", "representation": "storage"}}});
    let (out, reqs) = MockUpstream::new()
        .json(current)
        .json(json!({"id": "131073", "title": "Runbook", "status": "current", "version": {"number": 5},
            "_links": {"webui": "/spaces/ENG/pages/131073/Runbook", "base": "https://acme.atlassian.net/wiki"}}))
        .ok(
            &UPDATE_PAGE,
            json!({"page_id": "131073", "body": "**New** step", "append": true, "version_message": "Added a step"}),
        );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v2/pages/131073", "body": null, "query": [["body-format", "storage"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PUT", "path": "/api/v2/pages/131073", "query": [], "body": {"id": "131073", "status": "current", "title": "Runbook",
            "body": {"representation": "storage", "value": format!("<p>Old steps</p>{}", storage::from_markdown("**New** step"))},
            "version": {"number": 5, "message": "Added a step"}}})
    );
    assert_eq!(
        out,
        json!({"id": "131073", "title": "Runbook", "version": 5, "url": "https://acme.atlassian.net/wiki/spaces/ENG/pages/131073/Runbook"})
    );
}

/// A rename keeps the body; a 409 on the write is a version conflict naming both versions;
/// nothing to change is refused unsent.
#[test]
fn update_page_renames_and_reports_a_conflict() {
    let current = json!({"id": "131073", "title": "Runbook", "status": "current", "version": {"number": 7},
        "body": {"storage": {"value": "<p>Body</p>"}}});
    let (r, reqs) = MockUpstream::new()
        .json(current)
        .error(ToolError::Upstream { status: 409, message: "Version must be incremented".into(), retry_after: None })
        .call(&UPDATE_PAGE, json!({"page_id": "131073", "title": "On-call runbook"}));
    assert_eq!(
        sent(&reqs[1])["body"],
        json!({"id": "131073", "status": "current", "title": "On-call runbook",
               "body": {"representation": "storage", "value": "<p>Body</p>"}, "version": {"number": 8}})
    );
    let Err(ToolError::Upstream { status: 409, message, .. }) = r else { panic!("{r:?}") };
    assert!(
        message.starts_with(
            "version conflict: page 131073 changed after it was read at version 7 (this edit was version 8)"
        ),
        "{message}"
    );
    assert!(message.ends_with("Confluence said: Version must be incremented"), "{message}");

    let (r, reqs) = MockUpstream::new().call(&UPDATE_PAGE, json!({"page_id": "131073"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}
