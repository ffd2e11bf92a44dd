//! Wikipedia tools on `MockUpstream`: the request each tool sends (the language edition as a host
//! variable, titles as one encoded segment) and the shape of what it returns from answers with
//! the REST and Action APIs' own field names.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn search_articles_sends_the_query_to_the_language_edition() {
    let body = json!({"pages": [{"id": 2, "key": "Ada_Lovelace", "title": "Ada Lovelace",
        "excerpt": "<span class=\"searchmatch\">Ada</span> Lovelace was a mathematician",
        "matched_title": null, "description": "English mathematician (1815–1852)", "thumbnail": null}]});
    let (out, reqs) =
        MockUpstream::new().json(body).ok(&SEARCH_ARTICLES, json!({"query": "ada lovelace", "lang": "de", "limit": 5}));
    assert_eq!(reqs[0].host_vars, [("lang", "de".to_string())]);
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/w/rest.php/v1/search/page", "query": [["q", "ada lovelace"], ["limit", "5"]], "body": null})
    );
    assert_eq!(
        out,
        json!({"results": [{"title": "Ada Lovelace", "description": "English mathematician (1815–1852)",
            "excerpt": "Ada Lovelace was a mathematician", "url": "https://de.wikipedia.org/wiki/Ada_Lovelace"}]})
    );
}

/// A language code is a host variable: anything but a plain code is refused before sending.
#[test]
fn a_language_that_would_steer_the_host_is_refused() {
    for lang in ["evil.example/x", "EN", "en.", ""] {
        let (r, reqs) = MockUpstream::new().call(&GET_SUMMARY, json!({"title": "X", "lang": lang}));
        assert!(message(&r.unwrap_err()).contains("language code"), "{lang}");
        assert!(reqs.is_empty());
    }
}

#[test]
fn get_summary_encodes_the_title_and_shapes_the_summary() {
    let body = json!({"type": "standard", "title": "Ada Lovelace", "description": "English mathematician",
        "extract": "Augusta Ada King, Countess of Lovelace was an English mathematician.",
        "thumbnail": {"source": "https://upload.wikimedia.org/a.jpg", "width": 320, "height": 400},
        "content_urls": {"desktop": {"page": "https://en.wikipedia.org/wiki/Ada_Lovelace"}}, "pageid": 974});
    let (out, reqs) = MockUpstream::new().json(body).ok(&GET_SUMMARY, json!({"title": " Ada Lovelace "}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/rest_v1/page/summary/Ada_Lovelace", "query": [["redirect", "true"]], "body": null})
    );
    assert_eq!(
        out,
        json!({"title": "Ada Lovelace", "description": "English mathematician",
            "summary": "Augusta Ada King, Countess of Lovelace was an English mathematician.", "type": "standard",
            "thumbnail": "https://upload.wikimedia.org/a.jpg", "url": "https://en.wikipedia.org/wiki/Ada_Lovelace"})
    );
    let (_, reqs) = MockUpstream::new().json(json!({})).ok(&GET_SUMMARY, json!({"title": "../../w/api.php?x=1"}));
    assert_eq!(reqs[0].path, "/api/rest_v1/page/summary/..%2F..%2Fw%2Fapi.php%3Fx%3D1");
}

#[test]
fn get_article_reads_one_section_and_names_a_missing_article() {
    let body = json!({"batchcomplete": true, "query": {"pages": [{"pageid": 25768, "ns": 0,
        "title": "Rust (programming language)",
        "extract": "Rust is a language.\n\n== History ==\nStarted in 2006.\n\n=== Mozilla ===\nSponsored.\n\n== Syntax ==\nBraces."}]}});
    let (out, reqs) = MockUpstream::new()
        .json(body)
        .ok(&GET_ARTICLE, json!({"title": "Rust (programming language)", "section": "history"}));
    assert_eq!(
        sent(&reqs[0])["query"],
        json!([
            ["action", "query"],
            ["prop", "extracts"],
            ["explaintext", "1"],
            ["exsectionformat", "wiki"],
            ["redirects", "1"],
            ["titles", "Rust (programming language)"],
            ["format", "json"],
            ["formatversion", "2"]
        ])
    );
    assert_eq!(
        out,
        json!({"title": "Rust (programming language)",
            "url": "https://en.wikipedia.org/wiki/Rust_%28programming_language%29", "section": "history",
            "text": "Started in 2006.\n\nSponsored.", "truncated": false, "sections": ["History", "Mozilla", "Syntax"]})
    );
    let missing = json!({"query": {"pages": [{"ns": 0, "title": "Nope", "missing": true}]}});
    let (r, _) = MockUpstream::new().json(missing).call(&GET_ARTICLE, json!({"title": "Nope"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, ref message, .. }) if message.contains("'Nope'")));
    // An answer without pages is the same clear 404, not a panic.
    let (r, _) = MockUpstream::new().json(json!({"query": 3})).call(&GET_ARTICLE, json!({"title": "Nope"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, .. })));
}
