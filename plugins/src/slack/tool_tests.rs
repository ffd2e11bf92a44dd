//! Slack tools on `MockUpstream`: the exact Web API request of reads and writes (a #name looked
//! up to its id, dates turned into Slack ts bounds, JSON posts), `ok: false` answers mapped to
//! statuses, and the messages as an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

/// list_messages by #name: the name is looked up in conversations.list, then the history is
/// read with the date turned into a ts bound; replies and reactions are shaped.
#[test]
fn list_messages_looks_the_channel_up_and_reads_the_history() {
    let channels = json!({"ok": true, "channels": [{"id": "C01ABCDEF", "name": "general", "name_normalized": "general"},
        {"id": "C02GHIJKL", "name": "deploys", "name_normalized": "deploys"}], "response_metadata": {"next_cursor": ""}});
    let history = json!({"ok": true, "has_more": true, "messages": [
        {"type": "message", "user": "U012AB3CD", "text": "Shipped 2.1", "ts": "1767261600.000100",
         "user_profile": {"display_name": "ann", "real_name": "Ann Lee"},
         "reactions": [{"name": "tada", "count": 2, "users": ["U1", "U2"]}], "reply_count": 1, "thread_ts": "1767261600.000100",
         "latest_reply": "1767261700.000200"}],
        "response_metadata": {"next_cursor": "bmV4dF90czoxNTEy"}});
    let (out, reqs) = MockUpstream::new()
        .json(channels)
        .json(history)
        .ok(&LIST_MESSAGES, json!({"channel": "#Deploys", "oldest": "2026-01-01", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/conversations.list", "body": null, "query": [
            ["types", "public_channel,private_channel"], ["exclude_archived", "true"], ["limit", "200"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/conversations.history", "body": null, "query": [
            ["channel", "C02GHIJKL"], ["oldest", "1767225600"], ["limit", "1"]]})
    );
    assert_eq!(
        out,
        json!({"channel": "C02GHIJKL", "next_cursor": "bmV4dF90czoxNTEy", "messages": [{"ts": "1767261600.000100",
            "time": "2026-01-01T10:00:00Z", "user": "U012AB3CD", "user_name": "ann", "text": "Shipped 2.1", "reply_count": 1,
            "latest_reply": "2026-01-01T10:01:40Z", "reactions": [{"emoji": "tada", "count": 2}]}]})
    );
}

/// A channel nobody can see is a 404 naming it; a bad date is refused before any request.
#[test]
fn list_messages_names_an_unknown_channel_and_a_bad_date() {
    let (r, _) = MockUpstream::new()
        .json(json!({"ok": true, "channels": [], "response_metadata": {"next_cursor": ""}}))
        .call(&LIST_MESSAGES, json!({"channel": "#secret"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, ref message, .. }) if message.contains("#secret")));
    let (r, reqs) = MockUpstream::new().call(&LIST_MESSAGES, json!({"channel": "C01ABCDEF", "oldest": "last tuesday"}));
    assert!(message(&r.unwrap_err()).contains("is not a Slack ts"));
    assert!(reqs.is_empty());
}

#[test]
fn send_message_posts_json_and_maps_ok_false() {
    let answer = json!({"ok": true, "channel": "C02GHIJKL", "ts": "1767261800.000300",
        "message": {"type": "message", "text": "Done", "thread_ts": "1767261600.000100"}});
    let (out, reqs) = MockUpstream::new().json(answer).ok(
        &SEND_MESSAGE,
        json!({"channel": " C02GHIJKL ", "text": "Done", "thread_ts": "1767261600.000100", "reply_broadcast": true}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/chat.postMessage", "query": [], "body": {"channel": "C02GHIJKL", "text": "Done",
            "unfurl_links": true, "thread_ts": "1767261600.000100", "reply_broadcast": true}})
    );
    assert_eq!(
        out,
        json!({"channel": "C02GHIJKL", "ts": "1767261800.000300", "thread_ts": "1767261600.000100", "time": "2026-01-01T10:03:20Z"})
    );
    // Slack says no with HTTP 200: the code becomes the status.
    let (r, _) = MockUpstream::new()
        .json(json!({"ok": false, "error": "channel_not_found"}))
        .call(&SEND_MESSAGE, json!({"channel": "C0NOPE000", "text": "x"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, .. })), "{r:?}");
    let (r, _) = MockUpstream::new()
        .json(json!({"ok": false, "error": "invalid_auth"}))
        .call(&SEND_MESSAGE, json!({"channel": "C0NOPE000", "text": "x"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 401, .. })), "{r:?}");
    let (r, reqs) =
        MockUpstream::new().call(&SEND_MESSAGE, json!({"channel": "C01ABCDEF", "text": "x", "reply_broadcast": true}));
    assert!(message(&r.unwrap_err()).contains("give thread_ts too"));
    assert!(reqs.is_empty());
}

/// An answer without `ok` is not a success.
#[test]
fn an_answer_without_ok_is_an_error() {
    let (r, _) = MockUpstream::new()
        .json(json!({"channel": "C1"}))
        .call(&SEND_MESSAGE, json!({"channel": "C01ABCDEF", "text": "x"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 400, .. })), "{r:?}");
}

#[test]
fn list_channels_sends_the_types_and_shapes_channels() {
    let body = json!({"ok": true, "channels": [{"id": "C012AB3CD", "name": "general", "is_channel": true, "is_private": false,
        "is_archived": false, "is_member": true, "created": 1449252889, "num_members": 4,
        "topic": {"value": "Company-wide", "creator": "U1", "last_set": 0}, "purpose": {"value": "", "creator": "", "last_set": 0}}],
        "response_metadata": {"next_cursor": "dGVhbTpDMDYxRkE1UEI="}});
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_CHANNELS, json!({"limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/conversations.list", "body": null, "query": [["types", "public_channel,private_channel"],
            ["exclude_archived", "true"], ["limit", "1"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "dGVhbTpDMDYxRkE1UEI=", "channels": [{"id": "C012AB3CD", "name": "general", "type": "public_channel",
            "topic": "Company-wide", "members": 4, "is_member": true, "created": "2015-12-04T18:14:49Z"}]})
    );
}

/// get_user by email asks users.lookupByEmail; by id users.info; both or neither is refused.
#[test]
fn get_user_looks_up_by_email_or_id() {
    let user = json!({"ok": true, "user": {"id": "W012A3CDE", "name": "spengler", "real_name": "Egon Spengler", "tz_label": "Pacific Standard Time",
        "is_admin": true, "profile": {"display_name": "spengler", "real_name": "Egon Spengler", "email": "spengler@ghostbusters.example",
        "status_text": "Riding a train", "status_emoji": ":mountain_railway:", "phone": ""}}});
    let (out, reqs) =
        MockUpstream::new().json(user.clone()).ok(&GET_USER, json!({"email": "spengler@ghostbusters.example"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users.lookupByEmail", "body": null, "query": [["email", "spengler@ghostbusters.example"]]})
    );
    assert_eq!(out["id"], "W012A3CDE");
    assert!(out.get("phone").is_none(), "an empty phone is left out");
    let (_, reqs) = MockUpstream::new().json(user).ok(&GET_USER, json!({"user": "<@W012A3CDE>"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users.info", "body": null, "query": [["user", "W012A3CDE"]]})
    );
    let (r, reqs) = MockUpstream::new().call(&GET_USER, json!({"user": "W012A3CDE", "email": "a@b.example"}));
    assert!(message(&r.unwrap_err()).contains("exactly one of user"));
    assert!(reqs.is_empty());
    let (r, _) = MockUpstream::new()
        .json(json!({"ok": false, "error": "users_not_found"}))
        .call(&GET_USER, json!({"email": "nobody@x.example"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, .. })), "{r:?}");
}
