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

/// send_dm: each person (an id as is, an email looked up) into one conversations.open, then the
/// message posted there; more than eight people is refused before any request.
#[test]
fn send_dm_opens_the_conversation_then_posts() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"ok": true, "user": {"id": "U07BOB", "name": "bob", "real_name": "Bob Roe"}}))
        .json(json!({"ok": true, "channel": {"id": "G0MPDM1"}}))
        .json(json!({"ok": true, "channel": "G0MPDM1", "ts": "1767261600.000100", "message": {"text": "Standup moved to 10"}}))
        .ok(&SEND_DM, json!({"user": "U012AB3CD, bob@acme.example", "text": "Standup moved to 10"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users.lookupByEmail", "query": [["email", "bob@acme.example"]], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/conversations.open", "query": [], "body": {"users": "U012AB3CD,U07BOB"}})
    );
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "POST", "path": "/chat.postMessage", "query": [], "body": {"channel": "G0MPDM1", "text": "Standup moved to 10"}})
    );
    assert_eq!(
        out,
        json!({"channel": "G0MPDM1", "ts": "1767261600.000100", "time": "2026-01-01T10:00:00Z", "users": ["U012AB3CD", "U07BOB"]})
    );
    let (r, reqs) = MockUpstream::new().call(&SEND_DM, json!({"user": "U1,U2,U3,U4,U5,U6,U7,U8,U9", "text": "hi"}));
    assert!(message(&r.unwrap_err()).contains("one to eight people"));
    assert!(reqs.is_empty());
}

/// update_message: chat.update with the new text on the message's ts.
#[test]
fn update_message_replaces_the_text() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"ok": true, "channel": "C02GHIJKL", "ts": "1767261600.000100", "text": "Shipped 2.1.1"}))
        .ok(&UPDATE_MESSAGE, json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "text": "Shipped 2.1.1"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/chat.update", "query": [],
               "body": {"channel": "C02GHIJKL", "ts": "1767261600.000100", "text": "Shipped 2.1.1"}})
    );
    assert_eq!(
        out,
        json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "text": "Shipped 2.1.1", "updated": true})
    );
}

/// get_thread: the replies of one thread, paged by Slack's cursor.
#[test]
fn get_thread_reads_the_replies() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"ok": true, "has_more": true, "messages": [
            {"type": "message", "user": "U012AB3CD", "text": "Deploy?", "ts": "1767261600.000100", "thread_ts": "1767261600.000100", "reply_count": 1},
            {"type": "message", "user": "U07BOB", "text": "Go", "ts": "1767261700.000200", "thread_ts": "1767261600.000100"}],
            "response_metadata": {"next_cursor": "bmV4dA=="}}))
        .ok(&GET_THREAD, json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "limit": 2, "cursor": "Zmlyc3Q="}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/conversations.replies", "body": null, "query": [["channel", "C02GHIJKL"],
            ["ts", "1767261600.000100"], ["limit", "2"], ["cursor", "Zmlyc3Q="]]})
    );
    assert_eq!(
        out,
        json!({"channel": "C02GHIJKL", "thread_ts": "1767261600.000100", "next_cursor": "bmV4dA==", "messages": [
            {"ts": "1767261600.000100", "time": "2026-01-01T10:00:00Z", "user": "U012AB3CD", "text": "Deploy?", "reply_count": 1},
            {"ts": "1767261700.000200", "time": "2026-01-01T10:01:40Z", "user": "U07BOB", "text": "Go", "thread_ts": "1767261600.000100"}]})
    );
}

/// search_messages: Slack's page numbers become the cursor; the sort maps to Slack's fields.
#[test]
fn search_messages_pages_by_number() {
    let body = json!({"ok": true, "query": "deploy", "messages": {"total": 3, "matches": [
        {"iid": "a1", "channel": {"id": "C02GHIJKL", "name": "deploys"}, "user": "U012AB3CD", "username": "ann",
         "ts": "1767261600.000100", "text": "deploy done", "permalink": "https://acme.slack.com/archives/C02GHIJKL/p1767261600000100"}],
        "pagination": {"total_count": 3, "page": 2, "per_page": 1, "page_count": 3, "first": 2, "last": 2}}});
    let (out, reqs) = MockUpstream::new()
        .json(body)
        .ok(&SEARCH_MESSAGES, json!({"query": "deploy", "sort": "newest", "limit": 1, "cursor": "2"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/search.messages", "body": null, "query": [["query", "deploy"], ["sort", "timestamp"],
            ["sort_dir", "desc"], ["count", "1"], ["page", "2"]]})
    );
    assert_eq!(
        out,
        json!({"total": 3, "next_cursor": "3", "matches": [{"channel": {"id": "C02GHIJKL", "name": "deploys"}, "ts": "1767261600.000100",
            "time": "2026-01-01T10:00:00Z", "user": "U012AB3CD", "user_name": "ann", "text": "deploy done",
            "permalink": "https://acme.slack.com/archives/C02GHIJKL/p1767261600000100"}]})
    );
    let (r, reqs) = MockUpstream::new().call(&SEARCH_MESSAGES, json!({"query": "deploy", "cursor": "abc"}));
    assert!(message(&r.unwrap_err()).contains("cursor 'abc' is not one this tool issued"));
    assert!(reqs.is_empty());
}

/// list_users: deleted members and bots left out unless asked for.
#[test]
fn list_users_leaves_out_deleted_members_and_bots() {
    let body = json!({"ok": true, "members": [
        {"id": "U012AB3CD", "name": "ann", "real_name": "Ann Lee", "tz": "Europe/Berlin", "profile": {"display_name": "ann", "email": "ann@acme.example"}},
        {"id": "U0GONE", "name": "old", "deleted": true, "profile": {}},
        {"id": "B0BOT", "name": "ci", "is_bot": true, "profile": {}},
        {"id": "USLACKBOT", "name": "slackbot", "profile": {}}],
        "response_metadata": {"next_cursor": "dXNlcjpVMEc5V0ZYTlo="}});
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_USERS, json!({"limit": 4}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users.list", "body": null, "query": [["limit", "4"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "dXNlcjpVMEc5V0ZYTlo=", "users": [{"id": "U012AB3CD", "handle": "ann", "real_name": "Ann Lee",
            "display_name": "ann", "email": "ann@acme.example", "tz": "Europe/Berlin"}]})
    );
    let (out, _) = MockUpstream::new()
        .json(json!({"ok": true, "members": [{"id": "B0BOT", "name": "ci", "is_bot": true, "profile": {}}]}))
        .ok(&LIST_USERS, json!({"include_bots": true}));
    assert_eq!(out, json!({"users": [{"id": "B0BOT", "handle": "ci", "is_bot": true}]}));
}

/// add_reaction: the emoji name without colons; a reaction already there is not an error.
#[test]
fn add_reaction_reacts_once() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"ok": true}))
        .ok(&ADD_REACTION, json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "emoji": ":tada:"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/reactions.add", "query": [],
               "body": {"channel": "C02GHIJKL", "timestamp": "1767261600.000100", "name": "tada"}})
    );
    assert_eq!(out, json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "emoji": "tada", "added": true}));
    let (out, _) = MockUpstream::new()
        .json(json!({"ok": false, "error": "already_reacted"}))
        .ok(&ADD_REACTION, json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "emoji": "tada"}));
    assert_eq!(
        out,
        json!({"channel": "C02GHIJKL", "ts": "1767261600.000100", "emoji": "tada", "added": false, "already_reacted": true})
    );
}

/// upload_file: Slack's three-step upload (a ticket, the bytes to its URL, then completion into
/// the channel); empty content is refused before any request.
#[test]
fn upload_file_gets_a_ticket_sends_the_bytes_and_completes() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"ok": true, "upload_url": "https://files.slack.com/upload/v1/CwABAAAAXAoAAZu?x=1", "file_id": "F07UPLOAD"}))
        .answer(200, b"OK - 11".to_vec())
        .json(json!({"ok": true, "files": [{"id": "F07UPLOAD", "name": "notes.txt", "title": "Notes", "filetype": "text",
            "permalink": "https://acme.slack.com/files/U012AB3CD/F07UPLOAD/notes.txt"}]}))
        .ok(&UPLOAD_FILE, json!({"channel": "C02GHIJKL", "content": "hello world", "filename": "notes.txt", "title": "Notes",
            "thread_ts": "1767261600.000100"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/files.getUploadURLExternal", "query": [],
               "body": {"form": [["filename", "notes.txt"], ["length", "11"]]}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/upload/v1/CwABAAAAXAoAAZu?x=1", "query": [],
               "body": {"content_type": "application/octet-stream", "text": "hello world"}})
    );
    assert_eq!(reqs[1].host, "files_base_url");
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "POST", "path": "/files.completeUploadExternal", "query": [],
               "body": {"files": [{"id": "F07UPLOAD", "title": "Notes"}], "channel_id": "C02GHIJKL", "thread_ts": "1767261600.000100"}})
    );
    assert_eq!(
        out,
        json!({"file_id": "F07UPLOAD", "name": "notes.txt", "title": "Notes", "size": 11, "type": "text",
               "permalink": "https://acme.slack.com/files/U012AB3CD/F07UPLOAD/notes.txt", "channel": "C02GHIJKL",
               "thread_ts": "1767261600.000100"})
    );
    let (r, reqs) =
        MockUpstream::new().call(&UPLOAD_FILE, json!({"channel": "C02GHIJKL", "content": "", "filename": "a.txt"}));
    assert!(message(&r.unwrap_err()).contains("Slack refuses empty uploads"));
    assert!(reqs.is_empty());
}
