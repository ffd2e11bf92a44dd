//! Trello tools on `MockUpstream`: the exact request of reads and writes (Trello takes its
//! parameters in the query, even on POST and PUT; ids checked before they reach a path) and the
//! boards and cards as an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn list_boards_asks_for_its_fields_and_shapes_the_boards() {
    let body = json!([{"id": "5abbe4b7ddc1b351ef961414", "name": "Launch", "desc": "", "closed": false, "starred": true,
        "shortUrl": "https://trello.com/b/nC8QJJoZ", "dateLastActivity": "2026-01-02T10:00:00.000Z", "idOrganization": "org1",
        "organization": {"id": "org1", "displayName": "Acme"}, "prefs": {"permissionLevel": "org"}}]);
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_BOARDS, json!({"filter": "starred"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/members/me/boards", "body": null, "query": [["filter", "starred"],
            ["fields", "name,desc,closed,starred,shortUrl,dateLastActivity,idOrganization"], ["organization", "true"],
            ["organization_fields", "displayName"]]})
    );
    assert_eq!(
        out,
        json!({"boards": [{"id": "5abbe4b7ddc1b351ef961414", "name": "Launch", "workspace": "Acme", "starred": true,
            "last_activity": "2026-01-02T10:00:00.000Z", "url": "https://trello.com/b/nC8QJJoZ"}]})
    );
    let (out, _) = MockUpstream::new().json(json!({"message": "odd"})).ok(&LIST_BOARDS, json!({}));
    assert_eq!(out, json!({"boards": []}));
}

#[test]
fn create_card_sends_its_fields_in_the_query() {
    let card = json!({"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Write copy", "idList": "5abbe4b7ddc1b351ef961415",
        "desc": "Hero text", "due": "2026-02-01T12:00:00.000Z", "dueComplete": false, "start": null, "closed": false,
        "labels": [{"id": "l1", "name": "copy", "color": "green"}], "idMembers": [], "shortUrl": "https://trello.com/c/abc123",
        "dateLastActivity": "2026-01-03T10:00:00.000Z"});
    let (out, reqs) = MockUpstream::new().json(card).ok(
        &CREATE_CARD,
        json!({"list_id": "5abbe4b7ddc1b351ef961415", "name": "Write copy", "desc": "Hero text", "due": "2026-02-01T12:00:00.000Z",
               "pos": "top", "label_ids": ["5abbe4b7ddc1b351ef961416"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/cards", "body": null, "query": [["idList", "5abbe4b7ddc1b351ef961415"],
            ["name", "Write copy"], ["desc", "Hero text"], ["due", "2026-02-01T12:00:00.000Z"], ["pos", "top"],
            ["idLabels", "5abbe4b7ddc1b351ef961416"]]})
    );
    assert_eq!(
        out,
        json!({"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Write copy", "list_id": "5abbe4b7ddc1b351ef961415", "desc": "Hero text",
            "due": "2026-02-01T12:00:00.000Z", "due_complete": false, "labels": ["copy"], "last_activity": "2026-01-03T10:00:00.000Z",
            "url": "https://trello.com/c/abc123"})
    );
    let (r, reqs) = MockUpstream::new().call(&CREATE_CARD, json!({"list_id": "../boards", "name": "x"}));
    assert!(message(&r.unwrap_err()).contains("is not a Trello id"));
    assert!(reqs.is_empty());
}

#[test]
fn create_comment_posts_the_text_and_shapes_the_action() {
    let action = json!({"id": "act1", "type": "commentCard", "date": "2026-01-04T10:00:00.000Z",
        "data": {"text": "Ready for review", "card": {"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Write copy"}},
        "memberCreator": {"id": "m1", "fullName": "Ann Lee", "username": "annlee"}});
    let (out, reqs) =
        MockUpstream::new().json(action).ok(&CREATE_COMMENT, json!({"card_id": "abc123", "text": "Ready for review"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/cards/abc123/actions/comments", "body": null, "query": [["text", "Ready for review"]]})
    );
    assert_eq!(
        out,
        json!({"id": "act1", "card_id": "60d5ecb2a4b1c2d3e4f5a6b7", "card": "Write copy", "text": "Ready for review",
            "author": "Ann Lee", "date": "2026-01-04T10:00:00.000Z"})
    );
}

/// update_card moves a card with its parameters in the query; an empty due clears it; a board
/// without a list, or nothing to change, is refused unsent.
#[test]
fn update_card_moves_and_clears() {
    let card = json!({"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Write copy", "idList": "5abbe4b7ddc1b351ef961499", "closed": false,
        "due": null, "labels": [], "shortUrl": "https://trello.com/c/abc123"});
    let (out, reqs) = MockUpstream::new().json(card).ok(
        &UPDATE_CARD,
        json!({"card_id": "abc123", "list_id": "5abbe4b7ddc1b351ef961499", "due": " ", "pos": "top"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/cards/abc123", "body": null,
               "query": [["idList", "5abbe4b7ddc1b351ef961499"], ["due", ""], ["pos", "top"]]})
    );
    assert_eq!(
        out,
        json!({"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Write copy", "list_id": "5abbe4b7ddc1b351ef961499", "url": "https://trello.com/c/abc123"})
    );
    for (args, why) in [
        (json!({"card_id": "abc123", "board_id": "5abbe4b7ddc1b351ef961414"}), "needs list_id too"),
        (json!({"card_id": "abc123"}), "nothing to change"),
        (json!({"card_id": "abc123/../../members/me", "name": "x"}), "is not a Trello id"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_CARD, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

/// get_card with checklists: done counts per checklist.
#[test]
fn get_card_counts_checklist_items() {
    let card = json!({"id": "60d5ecb2a4b1c2d3e4f5a6b7", "name": "Launch", "desc": "", "list": {"name": "Doing"}, "board": {"name": "Launch"},
        "members": [{"fullName": "Ann Lee", "username": "annlee"}],
        "checklists": [{"name": "Steps", "checkItems": [{"name": "Draft", "state": "complete"}, {"name": "Review", "state": "incomplete"}]}]});
    let (out, reqs) =
        MockUpstream::new().json(card).ok(&GET_CARD, json!({"card_id": "abc123", "include_checklists": true}));
    let q = sent(&reqs[0])["query"].clone();
    assert!(q.as_array().unwrap().contains(&json!(["checklists", "all"])), "{q}");
    assert_eq!((out["list"].clone(), out["board"].clone()), (json!("Doing"), json!("Launch")));
    assert_eq!(
        out["checklists"],
        json!([{"name": "Steps", "done": "1/2", "items": [{"name": "Draft", "done": true}, {"name": "Review", "done": false}]}])
    );
}

/// list_lists: a board's lists with how many open cards each holds (Trello sends the cards' ids).
#[test]
fn list_lists_counts_open_cards() {
    let body = json!([{"id": "5abbe4b7ddc1b351ef961420", "name": "To do", "closed": false, "pos": 16384,
            "cards": [{"id": "5abbe4b7ddc1b351ef961501"}, {"id": "5abbe4b7ddc1b351ef961502"}]},
        {"id": "5abbe4b7ddc1b351ef961421", "name": "Old", "closed": true, "pos": 32768, "cards": []}]);
    let (out, reqs) = MockUpstream::new()
        .json(body)
        .ok(&LIST_LISTS, json!({"board_id": "5abbe4b7ddc1b351ef961414", "filter": "all"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/boards/5abbe4b7ddc1b351ef961414/lists", "body": null, "query": [["filter", "all"],
            ["fields", "name,closed,pos"], ["cards", "open"], ["card_fields", "id"]]})
    );
    assert_eq!(
        out,
        json!({"lists": [{"id": "5abbe4b7ddc1b351ef961420", "name": "To do", "open_cards": 2},
            {"id": "5abbe4b7ddc1b351ef961421", "name": "Old", "open_cards": 0, "archived": true}]})
    );
    let (r, reqs) = MockUpstream::new().call(&LIST_LISTS, json!({"board_id": "../members/me"}));
    assert!(message(&r.unwrap_err()).contains("is not a Trello id"));
    assert!(reqs.is_empty());
}

fn card(id: &str, name: &str, list: &str, members: &[&str]) -> Value {
    json!({"id": id, "name": name, "desc": "", "closed": false, "idBoard": "5abbe4b7ddc1b351ef961414", "idList": list,
        "idMembers": members, "labels": [], "due": null, "dueComplete": false, "shortUrl": format!("https://trello.com/c/{id}"),
        "dateLastActivity": "2026-01-02T10:00:00.000Z"})
}

/// list_cards on a board: the board's cards, its lists to name each card's column, its members
/// to name who is on a card; the offset cursor.
#[test]
fn list_cards_on_a_board_names_columns_and_members() {
    let (out, reqs) = MockUpstream::new()
        .json(json!([card("c1", "Write launch post", "5abbe4b7ddc1b351ef961420", &["m1"]), card("c2", "Book venue", "5abbe4b7ddc1b351ef961421", &[])]))
        .json(json!([{"id": "5abbe4b7ddc1b351ef961420", "name": "To do"}, {"id": "5abbe4b7ddc1b351ef961421", "name": "Done"}]))
        .json(json!([{"id": "m1", "fullName": "Ann Lee", "username": "annlee"}]))
        .ok(&LIST_CARDS, json!({"board_id": "5abbe4b7ddc1b351ef961414", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/boards/5abbe4b7ddc1b351ef961414/cards/open", "body": null, "query": []})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/boards/5abbe4b7ddc1b351ef961414/lists", "body": null, "query": [["filter", "all"], ["fields", "name"]]})
    );
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "GET", "path": "/boards/5abbe4b7ddc1b351ef961414/members", "body": null, "query": []})
    );
    assert_eq!(
        out,
        json!({"total": 2, "next_cursor": "1", "cards": [{"id": "c1", "name": "Write launch post", "list": "To do",
            "list_id": "5abbe4b7ddc1b351ef961420", "members": ["Ann Lee"], "last_activity": "2026-01-02T10:00:00.000Z",
            "url": "https://trello.com/c/c1"}]})
    );
    let (r, reqs) = MockUpstream::new().call(&LIST_CARDS, json!({}));
    assert!(message(&r.unwrap_err()).contains("give exactly one of list_id or board_id"));
    assert!(reqs.is_empty());
}

/// search_cards: Trello's search for cards only, on the boards given, with the card's board,
/// list and members; a full page offers the next.
#[test]
fn search_cards_pages_through_trello_search() {
    let mut hit = card("c1", "Write launch post", "5abbe4b7ddc1b351ef961420", &[]);
    hit["board"] = json!({"id": "5abbe4b7ddc1b351ef961414", "name": "Launch"});
    hit["list"] = json!({"id": "5abbe4b7ddc1b351ef961420", "name": "To do"});
    let (out, reqs) = MockUpstream::new().json(json!({"options": {"terms": [{"text": "launch"}]}, "cards": [hit]})).ok(
        &SEARCH_CARDS,
        json!({"query": "launch", "board_ids": ["5abbe4b7ddc1b351ef961414"], "limit": 1, "cursor": "2"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search", "body": null, "query": [["query", "launch"], ["modelTypes", "cards"],
            ["idBoards", "5abbe4b7ddc1b351ef961414"], ["partial", "false"], ["cards_limit", "1"], ["cards_page", "2"],
            ["card_fields", CARD_FIELDS], ["card_board", "true"], ["card_list", "true"], ["card_members", "true"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "3", "cards": [{"id": "c1", "name": "Write launch post", "board": "Launch", "list": "To do",
            "list_id": "5abbe4b7ddc1b351ef961420", "last_activity": "2026-01-02T10:00:00.000Z", "url": "https://trello.com/c/c1"}]})
    );
}
