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

/// list_channels in Discord's own order: uncategorised first, then each category followed by its
/// channels, text-like before voice; a type filter keeps category names.
#[test]
fn list_channels_orders_like_discord_and_filters_by_type() {
    let guild = "1100000000000000001";
    let chans = json!([
        {"id": "1300000000000000021", "type": 2, "name": "Lounge", "position": 0, "parent_id": "1300000000000000020", "guild_id": guild},
        {"id": "1300000000000000010", "type": 4, "name": "General", "position": 0, "parent_id": null},
        {"id": "1300000000000000013", "type": 0, "name": "memes", "position": 2, "parent_id": "1300000000000000010", "topic": null, "nsfw": true},
        {"id": "1300000000000000020", "type": 4, "name": "Voice", "position": 1, "parent_id": null},
        {"id": "1300000000000000014", "type": 2, "name": "standup", "position": 0, "parent_id": "1300000000000000010"},
        {"id": "1300000000000000011", "type": 0, "name": "welcome", "position": 0, "parent_id": "1300000000000000010", "topic": "Say hi", "nsfw": false},
        {"id": "1300000000000000001", "type": 0, "name": "rules", "position": 5, "parent_id": null, "topic": ""},
        {"id": "1300000000000000012", "type": 15, "name": "help", "position": 1, "parent_id": "1300000000000000010"}]);
    let (out, reqs) =
        MockUpstream::new().json(chans.clone()).ok(&LIST_CHANNELS, json!({"guild_id": format!(" {guild} ")}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": format!("/guilds/{guild}/channels"), "query": [], "body": null})
    );
    assert!(header(&reqs[0], "user-agent").is_some_and(|ua| ua.starts_with("DiscordBot")));
    assert_eq!(
        out,
        json!({"guild_id": guild, "channels": [
            {"id": "1300000000000000001", "name": "rules", "type": "text"},
            {"id": "1300000000000000010", "name": "General", "type": "category"},
            {"id": "1300000000000000011", "name": "welcome", "type": "text", "category": "General", "topic": "Say hi"},
            {"id": "1300000000000000012", "name": "help", "type": "forum", "category": "General"},
            {"id": "1300000000000000013", "name": "memes", "type": "text", "category": "General", "nsfw": true},
            {"id": "1300000000000000014", "name": "standup", "type": "voice", "category": "General"},
            {"id": "1300000000000000020", "name": "Voice", "type": "category"},
            {"id": "1300000000000000021", "name": "Lounge", "type": "voice", "category": "Voice"}]})
    );
    let (out, _) = MockUpstream::new().json(chans).ok(&LIST_CHANNELS, json!({"guild_id": guild, "type": "voice"}));
    assert_eq!(
        out["channels"],
        json!([{"id": "1300000000000000014", "name": "standup", "type": "voice", "category": "General"},
               {"id": "1300000000000000021", "name": "Lounge", "type": "voice", "category": "Voice"}])
    );
    let (r, reqs) = MockUpstream::new().call(&LIST_CHANNELS, json!({"guild_id": "../users/@me"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}

fn thread(id: &str, kind: u64) -> Value {
    json!({"id": id, "type": kind, "guild_id": "1100000000000000001", "parent_id": CHANNEL, "name": "Launch plan",
           "owner_id": "80351110224678912", "thread_metadata": {"archived": false, "auto_archive_duration": 4320, "locked": false}})
}

/// A standalone private thread in a text channel: the channel's type is read, the thread created
/// as type 12, then the first message posted into it with user mentions only.
#[test]
fn create_thread_standalone_posts_the_first_message() {
    let tid = "1400000000000000001";
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": CHANNEL, "type": 0, "name": "general"}))
        .json(thread(tid, 12))
        .json(msg("1400000000000000002", "Kickoff notes"))
        .ok(&CREATE_THREAD, json!({"channel_id": CHANNEL, "name": "Launch plan", "content": "Kickoff notes", "private": true, "auto_archive_duration": 4320}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": format!("/channels/{CHANNEL}"), "query": [], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "POST", "path": format!("/channels/{CHANNEL}/threads"), "query": [],
               "body": {"name": "Launch plan", "auto_archive_duration": 4320, "type": 12}})
    );
    assert_eq!(
        sent(&reqs[2]),
        json!({"method": "POST", "path": format!("/channels/{tid}/messages"), "query": [],
               "body": {"content": "Kickoff notes", "allowed_mentions": {"parse": ["users"], "replied_user": true}}})
    );
    assert_eq!(
        out,
        json!({"id": tid, "name": "Launch plan", "type": "private_thread", "parent_id": CHANNEL, "auto_archive_duration": 4320,
               "first_message_id": "1400000000000000002"})
    );
}

/// In a forum the first message goes with the thread (one write); a thread from a message names
/// that message; combinations Discord refuses are refused unsent.
#[test]
fn create_thread_in_a_forum_and_from_a_message() {
    let mut post = thread("1400000000000000005", 11);
    post["message"] = json!({"id": "1400000000000000005", "content": "How do I deploy?"});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": CHANNEL, "type": 15, "name": "help"}))
        .json(post)
        .ok(&CREATE_THREAD, json!({"channel_id": CHANNEL, "name": "Deploying", "content": "How do I deploy?"}));
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        sent(&reqs[1])["body"],
        json!({"name": "Deploying", "auto_archive_duration": 1440, "message": {"content": "How do I deploy?"}})
    );
    assert_eq!(out["first_message_id"], "1400000000000000005");

    let (out, reqs) = MockUpstream::new()
        .json(thread("1200000000000000009", 11))
        .ok(&CREATE_THREAD, json!({"channel_id": CHANNEL, "name": "Launch plan", "message_id": "1200000000000000009"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": format!("/channels/{CHANNEL}/messages/1200000000000000009/threads"), "query": [],
               "body": {"name": "Launch plan", "auto_archive_duration": 1440}})
    );
    assert_eq!(
        out,
        json!({"id": "1200000000000000009", "name": "Launch plan", "type": "public_thread", "parent_id": CHANNEL,
               "auto_archive_duration": 4320, "started_from_message_id": "1200000000000000009"})
    );

    for args in [
        json!({"channel_id": CHANNEL, "name": "x", "message_id": "1200000000000000009", "private": true}),
        json!({"channel_id": CHANNEL, "name": "x", "auto_archive_duration": 30}),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_THREAD, args.clone());
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{args}: {r:?}");
        assert!(reqs.is_empty(), "{args}");
    }
}
