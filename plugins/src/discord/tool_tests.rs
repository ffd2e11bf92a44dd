//! Discord tools on `MockUpstream`: the exact request of reads and writes (snowflake ids only in
//! paths, the bot's User-Agent, allowed mentions, emoji encoded as one segment) and the messages
//! as an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, header, message, sent};

const CHANNEL: &str = "1109876543210987654";

fn msg(id: &str, content: &str) -> Value {
    json!({"id": id, "type": 0, "channel_id": CHANNEL, "content": content, "timestamp": "2026-02-01T10:00:00.000000+00:00",
        "edited_timestamp": null, "pinned": false, "mention_everyone": false,
        "author": {"id": "80351110224678912", "username": "nelly", "global_name": "Nelly", "discriminator": "0"},
        "attachments": [{"id": "1", "filename": "plan.pdf", "size": 2048, "url": "https://cdn.discordapp.com/a/plan.pdf",
                         "proxy_url": "https://media.discordapp.net/a/plan.pdf", "content_type": "application/pdf"}],
        "embeds": [], "reactions": [{"count": 3, "me": false, "emoji": {"id": null, "name": "👍"}}]})
}

/// list_messages: a full page gives a `before:` cursor from the oldest id; the cursor round trips
/// into Discord's `before` parameter.
#[test]
fn list_messages_pages_backwards_with_a_cursor() {
    let page = json!([msg("1200000000000000002", "second"), msg("1200000000000000001", "first")]);
    let (out, reqs) = MockUpstream::new().json(page).ok(&LIST_MESSAGES, json!({"channel_id": CHANNEL, "limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": format!("/channels/{CHANNEL}/messages"), "query": [["limit", "2"]], "body": null})
    );
    assert!(header(&reqs[0], "user-agent").is_some_and(|ua| ua.starts_with("DiscordBot")));
    assert_eq!(out["next_cursor"], "before:1200000000000000001");
    assert_eq!(
        out["messages"][0],
        json!({"id": "1200000000000000002", "author": "Nelly", "author_id": "80351110224678912",
            "time": "2026-02-01T10:00:00.000000+00:00", "content": "second",
            "attachments": [{"filename": "plan.pdf", "url": "https://cdn.discordapp.com/a/plan.pdf", "size": 2048, "type": "application/pdf"}],
            "reactions": [{"emoji": "👍", "count": 3}]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!([msg("1200000000000000000", "zeroth")]))
        .ok(&LIST_MESSAGES, json!({"channel_id": CHANNEL, "limit": 2, "cursor": "before:1200000000000000001"}));
    assert_eq!(sent(&reqs[0])["query"], json!([["limit", "2"], ["before", "1200000000000000001"]]));
    assert!(out.get("next_cursor").is_none());
}

/// Ids are snowflakes: a path-shaped channel or cursor is refused before sending; an answer that
/// is not a list is an empty page.
#[test]
fn list_messages_refuses_what_is_not_a_snowflake() {
    for args in [json!({"channel_id": "../../users/@me"}), json!({"channel_id": CHANNEL, "cursor": "before:../x"})] {
        let (r, reqs) = MockUpstream::new().call(&LIST_MESSAGES, args);
        assert!(message(&r.unwrap_err()).contains("is not a Discord id"));
        assert!(reqs.is_empty());
    }
    let (out, _) =
        MockUpstream::new().json(json!({"message": "odd"})).ok(&LIST_MESSAGES, json!({"channel_id": CHANNEL}));
    assert_eq!(out, json!({"channel_id": CHANNEL, "messages": []}));
}

#[test]
fn send_message_allows_only_user_mentions_by_default() {
    let answer = json!({"id": "1300000000000000000", "channel_id": CHANNEL, "timestamp": "2026-02-01T11:00:00.000000+00:00",
        "content": "Deploy done", "message_reference": {"message_id": "1200000000000000002"}});
    let (out, reqs) = MockUpstream::new().json(answer).ok(
        &SEND_MESSAGE,
        json!({"channel_id": CHANNEL, "content": "Deploy done", "reply_to_message_id": "1200000000000000002"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": format!("/channels/{CHANNEL}/messages"), "query": [], "body": {
            "content": "Deploy done", "allowed_mentions": {"parse": ["users"], "replied_user": true},
            "message_reference": {"message_id": "1200000000000000002", "fail_if_not_exists": false}}})
    );
    assert_eq!(
        out,
        json!({"id": "1300000000000000000", "channel_id": CHANNEL, "time": "2026-02-01T11:00:00.000000+00:00", "reply_to": "1200000000000000002"})
    );
}

/// send_dm opens the DM channel, then posts into it; a DM answer without an id is a clear error.
#[test]
fn send_dm_opens_the_channel_then_posts() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "1400000000000000000", "type": 1, "recipients": [{"id": "80351110224678912"}]}))
        .json(json!({"id": "1400000000000000001", "channel_id": "1400000000000000000", "timestamp": "2026-02-01T12:00:00Z"}))
        .ok(&SEND_DM, json!({"user_id": " 80351110224678912 ", "content": "hi"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/users/@me/channels", "query": [], "body": {"recipient_id": "80351110224678912"}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": "/channels/1400000000000000000/messages", "query": [], "body": {"content": "hi"}})
    );
    assert_eq!(out["user_id"], "80351110224678912");
    let (r, reqs) = MockUpstream::new()
        .json(json!({"id": 5}))
        .call(&SEND_DM, json!({"user_id": "80351110224678912", "content": "hi"}));
    assert!(message(&r.unwrap_err()).contains("opened no DM channel"));
    assert_eq!(reqs.len(), 1);
}

#[test]
fn add_reaction_encodes_the_emoji_as_one_segment() {
    let (out, reqs) = MockUpstream::new()
        .answer(204, Vec::new())
        .ok(&ADD_REACTION, json!({"channel_id": CHANNEL, "message_id": "1200000000000000002", "emoji": "thumbsup"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": format!("/channels/{CHANNEL}/messages/1200000000000000002/reactions/%F0%9F%91%8D/@me"),
               "query": [], "body": null})
    );
    assert_eq!(out, json!({"channel_id": CHANNEL, "message_id": "1200000000000000002", "emoji": "👍", "added": true}));
    let (_, reqs) = MockUpstream::new().answer(204, Vec::new()).ok(
        &ADD_REACTION,
        json!({"channel_id": CHANNEL, "message_id": "1200000000000000002", "emoji": "party:123/../x"}),
    );
    assert!(!reqs[0].path.contains("/../"), "{}", reqs[0].path);
}

/// list_servers pages by the largest id (`after`), with member counts.
#[test]
fn list_servers_pages_after_the_largest_id() {
    let guilds = json!([
        {"id": "197038439483310086", "name": "Discord Testers", "owner": false, "approximate_member_count": 3268, "approximate_presence_count": 784, "features": []},
        {"id": "81384788765712384", "name": "Discord API", "owner": true, "approximate_member_count": 12, "approximate_presence_count": 3}]);
    let (out, reqs) = MockUpstream::new().json(guilds).ok(&LIST_SERVERS, json!({"limit": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users/@me/guilds", "body": null, "query": [["limit", "2"], ["with_counts", "true"]]})
    );
    assert_eq!(out["next_cursor"], "197038439483310086");
    assert_eq!(
        out["servers"][1],
        json!({"id": "81384788765712384", "name": "Discord API", "members": 12, "online": 3, "bot_is_owner": true})
    );
    let (_, reqs) =
        MockUpstream::new().json(json!([])).ok(&LIST_SERVERS, json!({"limit": 2, "cursor": "197038439483310086"}));
    assert_eq!(sent(&reqs[0])["query"][1], json!(["after", "197038439483310086"]));
    let (r, reqs) = MockUpstream::new().call(&LIST_SERVERS, json!({"cursor": "../x"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })));
    assert!(reqs.is_empty());
}
