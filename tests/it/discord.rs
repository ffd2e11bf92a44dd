//! Discord against a fake REST API v10 on 127.0.0.1 that checks what Discord checks (`Bot` token
//! scheme, a `DiscordBot (url, version)` User-Agent, JSON bodies, form-body limits) and answers with
//! Discord's shapes: `{code, message}` errors, newest-first message pages around snowflakes, 204 for
//! reactions, and empty `content` on messages when the bot lacks the Message Content intent.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::support::TestApp;
use crate::support::app_with;
use crate::support::fake::{Fake, Recorded, Reply};

const TOKEN: &str = "MTA5ODc2NTQzMjEwOTg3NjU0Mw.GhJkLm.abcdefghijklmnopqrstuvwxyz0123456789AB";
const GUILD: &str = "81384788765712384";
const GENERAL: &str = "81384788765712385";
const FORUM: &str = "81384788765712390";
const BUSY: &str = "81384788765712399";
const ADA: &str = "80351110224678912";
const GHOST: &str = "80351110224678999";

fn api_error(status: u16, code: u64, message: &str) -> Reply {
    Reply::json(status, json!({"message": message, "code": code}))
}

fn user(id: &str, name: &str, bot: bool) -> Value {
    json!({
        "id": id, "username": name, "discriminator": "0", "global_name": if bot { Value::Null } else { json!(format!("{name} (display)")) },
        "avatar": "8342729096ea3675442027381ff50dfe", "public_flags": 64, "flags": 64, "banner": null,
        "accent_color": null, "avatar_decoration_data": null, "bot": bot
    })
}

fn msg(id: u64, author: Value, content: &str) -> Value {
    json!({
        "type": 0, "channel_id": GENERAL, "content": content, "attachments": [], "embeds": [], "mentions": [],
        "mention_roles": [], "pinned": false, "mention_everyone": false, "tts": false,
        "timestamp": format!("2026-05-01T10:0{}:00.000000+00:00", id % 10), "edited_timestamp": null, "flags": 0,
        "components": [], "id": id.to_string(), "author": author
    })
}

fn messages() -> Vec<Value> {
    let ada = user(ADA, "ada", false);
    let mut m1 = msg(1100000000000000001, ada.clone(), "Has anyone seen the release notes?");
    m1["attachments"] = json!([{
        "id": "1100000000000000100", "filename": "notes.pdf", "size": 48213, "content_type": "application/pdf",
        "url": "https://cdn.discordapp.com/attachments/1/2/notes.pdf", "proxy_url": "https://media.discordapp.net/attachments/1/2/notes.pdf"
    }]);
    // Without the Message Content intent, other people's messages arrive with everything blank.
    let m2 = msg(1100000000000000002, user(GHOST, "grace", false), "");
    let mut m3 = msg(1100000000000000003, ada.clone(), "Found them, thanks");
    m3["type"] = json!(19);
    m3["message_reference"] =
        json!({"type": 0, "channel_id": GENERAL, "message_id": "1100000000000000001", "guild_id": GUILD});
    m3["referenced_message"] = m1.clone();
    m3["reactions"] = json!([
        {"emoji": {"id": null, "name": "👍"}, "count": 3, "count_details": {"burst": 0, "normal": 3}, "burst_colors": [], "me_burst": false, "burst_me": false, "me": false, "burst_count": 0},
        {"emoji": {"id": "112233445566778899", "name": "blob"}, "count": 1, "count_details": {"burst": 0, "normal": 1}, "burst_colors": [], "me_burst": false, "burst_me": false, "me": true, "burst_count": 0}
    ]);
    let mut m4 = msg(1100000000000000004, user("1098765432109876543", "workbench-bot", true), "Deploy finished");
    m4["embeds"] = json!([{"type": "rich", "title": "Build #42", "description": "All checks passed", "color": 3066993, "fields": []}]);
    m4["edited_timestamp"] = json!("2026-05-01T10:05:00.000000+00:00");
    let mut m5 = msg(1100000000000000005, ada, "Starting a thread about it");
    m5["thread"] = json!({"id": "1100000000000000555", "type": 11, "name": "Release chat", "parent_id": GENERAL});
    vec![m1, m2, m3, m4, m5]
}

fn channel(id: &str, kind: u64, name: &str, position: i64, parent: Option<&str>) -> Value {
    json!({
        "id": id, "type": kind, "guild_id": GUILD, "name": name, "position": position, "parent_id": parent,
        "permission_overwrites": [{"id": GUILD, "type": 0, "allow": "0", "deny": "1024"}], "flags": 0,
        "topic": if kind == 0 { json!(format!("All about {name}")) } else { Value::Null },
        "nsfw": false, "last_message_id": "1100000000000000005", "rate_limit_per_user": 0,
        "bitrate": if kind == 2 { json!(64000) } else { Value::Null }, "user_limit": 0, "rtc_region": null
    })
}

fn channels() -> Vec<Value> {
    vec![
        channel("81384788765712386", 2, "Lounge", 0, Some("81384788765712389")),
        channel(GENERAL, 0, "general", 0, Some("81384788765712389")),
        channel("81384788765712389", 4, "Text Channels", 1, None),
        channel("81384788765712387", 0, "rules", 0, None),
        channel(FORUM, 15, "ideas", 2, Some("81384788765712389")),
        channel("81384788765712388", 4, "Archive", 5, None),
    ]
}

fn thread(id: &str, kind: u64, name: &str, parent: &str, archive: u64) -> Value {
    json!({
        "id": id, "guild_id": GUILD, "parent_id": parent, "owner_id": "1098765432109876543", "type": kind, "name": name,
        "last_message_id": null, "thread_metadata": {"archived": false, "archive_timestamp": "2026-05-01T10:10:00.000000+00:00",
        "auto_archive_duration": archive, "locked": false, "create_timestamp": "2026-05-01T10:10:00.000000+00:00"},
        "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0, "total_message_sent": 0,
        "member": {"id": id, "flags": 1, "join_timestamp": "2026-05-01T10:10:00.000000+00:00", "user_id": "1098765432109876543"}
    })
}

fn body_json(r: &Recorded) -> Option<Value> {
    if r.header("content-type") != Some("application/json") {
        return None;
    }
    serde_json::from_slice(&r.body).ok()
}

fn form_error(field: &str, code: &str, message: &str) -> Reply {
    Reply::json(
        400,
        json!({"code": 50035, "errors": {field: {"_errors": [{"code": code, "message": message}]}}, "message": "Invalid Form Body"}),
    )
}

fn discord(r: &Recorded) -> Reply {
    if !r.header("user-agent").is_some_and(|ua| ua.starts_with("DiscordBot (https://") && ua.contains("workbench")) {
        return api_error(400, 0, "Missing or invalid User-Agent");
    }
    if r.method == "GET" && !r.body.is_empty() {
        return api_error(400, 50109, "The request body contains invalid JSON.");
    }
    if r.header("authorization") != Some(&format!("Bot {TOKEN}")) {
        return api_error(401, 0, "401: Unauthorized");
    }
    let Some(path) = r.path.strip_prefix("/api/v10") else { return api_error(404, 0, "404: Not Found") };
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let json_body = || body_json(r).ok_or_else(|| api_error(400, 50109, "The request body contains invalid JSON."));
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["users", "@me"]) => Reply::json(200, user("1098765432109876543", "workbench-bot", true)),
        ("GET", ["users", "@me", "guilds"]) => {
            let all: Vec<Value> = ["81384788765712384", "81384788765712500", "81384788765712600"]
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    json!({
                        "id": id, "name": format!("Server {i}"), "icon": "a_8342729096ea3675442027381ff50dfe", "banner": null,
                        "owner": i == 2, "permissions": "2248473465835073", "features": ["COMMUNITY", "NEWS"],
                        "approximate_member_count": 100 * (i + 1), "approximate_presence_count": 10 * (i + 1)
                    })
                })
                .collect();
            let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(200);
            let after: u64 = r.q("after").and_then(|a| a.parse().ok()).unwrap_or(0);
            let page: Vec<Value> = all
                .into_iter()
                .filter(|g| g["id"].as_str().unwrap().parse::<u64>().unwrap() > after)
                .take(limit)
                .collect();
            if r.q("with_counts") != Some("true") {
                return Reply::json(
                    200,
                    json!(
                        page.iter()
                            .map(|g| {
                                let mut g = g.clone();
                                g.as_object_mut().unwrap().remove("approximate_member_count");
                                g
                            })
                            .collect::<Vec<_>>()
                    ),
                );
            }
            Reply::json(200, json!(page))
        }
        ("GET", ["guilds", GUILD, "channels"]) => Reply::json(200, json!(channels())),
        ("GET", ["guilds", "81384788765712500", "channels"]) => api_error(403, 50001, "Missing Access"),
        ("GET", ["guilds", _, "channels"]) => api_error(404, 10004, "Unknown Guild"),
        ("GET", ["channels", BUSY, "messages"]) => {
            Reply::json(429, json!({"message": "You are being rate limited.", "retry_after": 120.0, "global": false}))
                .with_header("retry-after", "120")
        }
        ("GET", ["channels", GENERAL, "messages"]) => {
            let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(50);
            let id = |m: &Value| m["id"].as_str().unwrap().parse::<u64>().unwrap();
            let all = messages();
            let page: Vec<Value> = if let Some(b) = r.q("before").and_then(|v| v.parse::<u64>().ok()) {
                all.into_iter().rev().filter(|m| id(m) < b).take(limit).collect()
            } else if let Some(a) = r.q("after").and_then(|v| v.parse::<u64>().ok()) {
                let mut p: Vec<Value> = all.into_iter().filter(|m| id(m) > a).take(limit).collect();
                p.reverse();
                p
            } else if let Some(a) = r.q("around").and_then(|v| v.parse::<u64>().ok()) {
                all.into_iter().rev().filter(|m| id(m).abs_diff(a) <= 1).take(limit).collect()
            } else {
                all.into_iter().rev().take(limit).collect()
            };
            Reply::json(200, json!(page))
        }
        ("GET", ["channels", "81384788765712777", "messages"]) => api_error(404, 10003, "Unknown Channel"),
        ("GET", ["channels", FORUM]) => Reply::json(200, channel(FORUM, 15, "ideas", 2, Some("81384788765712389"))),
        ("GET", ["channels", GENERAL]) => {
            Reply::json(200, channel(GENERAL, 0, "general", 0, Some("81384788765712389")))
        }
        ("POST", ["channels", ch, "messages"]) => {
            let body = match json_body() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let content = body["content"].as_str().unwrap_or_default();
            if content.chars().count() > 2000 {
                return form_error("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.");
            }
            if let Some(i) = body["embeds"]
                .as_array()
                .and_then(|e| e.iter().position(|e| e["title"].as_str().is_some_and(|t| t.chars().count() > 256)))
            {
                return Reply::json(
                    400,
                    json!({"code": 50035, "message": "Invalid Form Body", "errors": {"embeds": {i.to_string(): {"title": {"_errors": [
                        {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 256 or fewer in length."}
                    ]}}}}}),
                );
            }
            if content.is_empty() && body.get("embeds").is_none() {
                return api_error(400, 50006, "Cannot send an empty message");
            }
            if *ch == "1200000000000000999" {
                return api_error(403, 50007, "Cannot send messages to this user");
            }
            let mut m = msg(1100000000000000042, user("1098765432109876543", "workbench-bot", true), content);
            m["channel_id"] = json!(ch);
            if let Some(refd) = body.get("message_reference") {
                m["type"] = json!(19);
                m["message_reference"] =
                    json!({"type": 0, "channel_id": ch, "message_id": refd["message_id"], "guild_id": GUILD});
            }
            if let Some(e) = body.get("embeds") {
                m["embeds"] = e.clone();
            }
            Reply::json(200, m)
        }
        ("POST", ["users", "@me", "channels"]) => {
            let body = match json_body() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let (id, recipient) = match body["recipient_id"].as_str() {
                Some(ADA) => ("1200000000000000001", user(ADA, "ada", false)),
                Some(GHOST) => ("1200000000000000999", user(GHOST, "grace", false)),
                Some(_) => return api_error(400, 50033, "Invalid Recipient(s)"),
                None => return form_error("recipient_id", "BASE_TYPE_REQUIRED", "This field is required"),
            };
            Reply::json(
                200,
                json!({"id": id, "type": 1, "last_message_id": null, "flags": 0, "recipients": [recipient]}),
            )
        }
        ("POST", ["channels", GENERAL, "messages", mid, "threads"]) => {
            let body = match json_body() {
                Ok(b) => b,
                Err(e) => return e,
            };
            if *mid != "1100000000000000001" {
                return api_error(404, 10008, "Unknown Message");
            }
            let name = body["name"].as_str().unwrap_or_default();
            let mut t = thread(mid, 11, name, GENERAL, body["auto_archive_duration"].as_u64().unwrap_or(4320));
            t["id"] = json!(mid);
            Reply::json(201, t)
        }
        ("POST", ["channels", ch, "threads"]) => {
            let body = match json_body() {
                Ok(b) => b,
                Err(e) => return e,
            };
            let name = body["name"].as_str().unwrap_or_default();
            let archive = body["auto_archive_duration"].as_u64().unwrap_or(4320);
            if *ch == FORUM {
                let Some(content) = body["message"]["content"].as_str() else {
                    return form_error("message", "BASE_TYPE_REQUIRED", "This field is required");
                };
                let mut t = thread("1300000000000000002", 11, name, FORUM, archive);
                let mut first = msg(1300000000000000002, user("1098765432109876543", "workbench-bot", true), content);
                first["channel_id"] = json!("1300000000000000002");
                t["message"] = first;
                return Reply::json(201, t);
            }
            match body["type"].as_u64() {
                Some(k @ (11 | 12)) => Reply::json(201, thread("1300000000000000001", k, name, ch, archive)),
                _ => form_error("type", "BASE_TYPE_REQUIRED", "This field is required"),
            }
        }
        ("PUT", ["channels", GENERAL, "messages", "1100000000000000003", "reactions", emoji, "@me"]) => {
            if !r.body.is_empty() {
                return api_error(400, 50109, "The request body contains invalid JSON.");
            }
            match *emoji {
                "%F0%9F%91%8D" | "%E2%9C%85" | "blob%3A112233445566778899" => {
                    Reply { status: 204, headers: vec![], body: String::new() }
                }
                _ => api_error(400, 10014, "Unknown Emoji"),
            }
        }
        _ => api_error(404, 0, "404: Not Found"),
    }
}

async fn discord_app_with(token: &str) -> (TestApp, Fake) {
    let fake = Fake::start(discord).await;
    let t = app_with(&[
        ("WORKBENCH_DISCORD_BASE_URL", format!("{}/api/v10", fake.url)),
        ("WORKBENCH_DISCORD_TOKEN", token.into()),
    ]);
    (t, fake)
}

async fn discord_app() -> (TestApp, Fake) {
    discord_app_with(TOKEN).await
}

fn query(r: &Recorded) -> Vec<(&str, &str)> {
    r.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn sent_json(r: &Recorded) -> Value {
    assert_eq!(r.header("content-type"), Some("application/json"));
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn discord_list_servers_pages_after_the_last_guild() {
    let (t, fake) = discord_app().await;
    let r = t.ok("discord_list_servers", json!({"limit": 2})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v10/users/@me/guilds"));
    assert_eq!(req.header("authorization"), Some(format!("Bot {TOKEN}").as_str()));
    assert_eq!(query(&req), [("limit", "2"), ("with_counts", "true")]);
    assert_eq!(
        r["servers"],
        json!([
            {"id": "81384788765712384", "name": "Server 0", "members": 100, "online": 10},
            {"id": "81384788765712500", "name": "Server 1", "members": 200, "online": 20}
        ])
    );
    assert_eq!(r["next_cursor"], "81384788765712500");
    let r2 = t.ok("discord_list_servers", json!({"limit": 2, "cursor": "81384788765712500"})).await;
    assert_eq!(fake.last().q("after"), Some("81384788765712500"));
    assert_eq!(
        r2["servers"],
        json!([{"id": "81384788765712600", "name": "Server 2", "members": 300, "online": 30, "bot_is_owner": true}])
    );
    assert!(r2.get("next_cursor").is_none(), "a short page is the last");
}

#[tokio::test]
async fn discord_list_channels_orders_by_category_and_filters() {
    let (t, fake) = discord_app().await;
    let r = t.ok("discord_list_channels", json!({"guild_id": GUILD})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", format!("/api/v10/guilds/{GUILD}/channels").as_str()));
    assert!(req.query.is_empty());
    assert_eq!(
        r["channels"],
        json!([
            {"id": "81384788765712387", "name": "rules", "type": "text", "topic": "All about rules"},
            {"id": "81384788765712389", "name": "Text Channels", "type": "category"},
            {"id": GENERAL, "name": "general", "type": "text", "category": "Text Channels", "topic": "All about general"},
            {"id": FORUM, "name": "ideas", "type": "forum", "category": "Text Channels"},
            {"id": "81384788765712386", "name": "Lounge", "type": "voice", "category": "Text Channels"},
            {"id": "81384788765712388", "name": "Archive", "type": "category"}
        ])
    );
    let voice = t.ok("discord_list_channels", json!({"guild_id": GUILD, "type": "voice"})).await;
    assert_eq!(voice["channels"].as_array().unwrap().len(), 1);
    assert_eq!(voice["channels"][0]["name"], "Lounge");

    let denied = t.err("discord_list_channels", json!({"guild_id": "81384788765712500"})).await;
    assert_eq!(denied["status"], 403);
    assert!(denied["message"].as_str().unwrap().contains("Missing Access (code 50001)"), "{denied}");
    let unknown = t.err("discord_list_channels", json!({"guild_id": "81384788765719999"})).await;
    assert_eq!(unknown["code"], "UPSTREAM_ERROR");
    assert_eq!(unknown["status"], 404);
    assert_eq!(unknown["message"], "discord answered 404: Unknown Guild (code 10004)");
    let bad = t.err("discord_list_channels", json!({"guild_id": "my server"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["problems"][0]["path"], "/guild_id");
}

#[tokio::test]
async fn discord_list_messages_pages_back_with_snowflakes_and_flags_hidden_content() {
    let (t, fake) = discord_app().await;
    let r = t.ok("discord_list_messages", json!({"channel_id": GENERAL, "limit": 3})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", format!("/api/v10/channels/{GENERAL}/messages").as_str())
    );
    assert_eq!(query(&req), [("limit", "3")]);
    let msgs = r["messages"].as_array().unwrap();
    let ids: Vec<&str> = msgs.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["1100000000000000005", "1100000000000000004", "1100000000000000003"]);
    assert_eq!(msgs[0]["thread"], json!({"id": "1100000000000000555", "name": "Release chat"}));
    assert_eq!(
        msgs[1],
        json!({
            "id": "1100000000000000004", "author": "workbench-bot", "author_id": "1098765432109876543", "bot": true,
            "time": "2026-05-01T10:04:00.000000+00:00", "edited": "2026-05-01T10:05:00.000000+00:00", "content": "Deploy finished",
            "embeds": [{"title": "Build #42", "description": "All checks passed"}]
        })
    );
    assert_eq!(
        msgs[2],
        json!({
            "id": "1100000000000000003", "author": "ada (display)", "author_id": ADA, "time": "2026-05-01T10:03:00.000000+00:00",
            "content": "Found them, thanks", "reply_to": "1100000000000000001",
            "reactions": [{"emoji": "👍", "count": 3}, {"emoji": "blob:112233445566778899", "count": 1}]
        })
    );
    assert!(r.get("note").is_none());
    assert_eq!(r["next_cursor"], "before:1100000000000000003");

    let r2 = t
        .ok("discord_list_messages", json!({"channel_id": GENERAL, "limit": 3, "cursor": "before:1100000000000000003"}))
        .await;
    assert_eq!(query(&fake.last()), [("limit", "3"), ("before", "1100000000000000003")]);
    let msgs = r2["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["content_hidden"], true, "the empty message is flagged");
    assert!(r2["note"].as_str().unwrap().contains("Message Content intent"));
    assert_eq!(
        msgs[1]["attachments"],
        json!([{"filename": "notes.pdf", "url": "https://cdn.discordapp.com/attachments/1/2/notes.pdf", "size": 48213, "type": "application/pdf"}])
    );
    assert!(r2.get("next_cursor").is_none(), "a short page is the last");

    let fwd =
        t.ok("discord_list_messages", json!({"channel_id": GENERAL, "limit": 2, "after": "1100000000000000001"})).await;
    assert_eq!(query(&fake.last()), [("limit", "2"), ("after", "1100000000000000001")]);
    assert_eq!(fwd["next_cursor"], "after:1100000000000000003", "forward paging continues after the newest");
    let around = t
        .ok("discord_list_messages", json!({"channel_id": GENERAL, "around": "1100000000000000003", "limit": 3}))
        .await;
    assert_eq!(fake.last().q("around"), Some("1100000000000000003"));
    assert!(around.get("next_cursor").is_none());

    let both = t
        .err(
            "discord_list_messages",
            json!({"channel_id": GENERAL, "before": "1100000000000000003", "after": "1100000000000000001"}),
        )
        .await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let unknown = t.err("discord_list_messages", json!({"channel_id": "81384788765712777"})).await;
    assert_eq!(unknown["status"], 404);
    assert!(unknown["message"].as_str().unwrap().contains("Unknown Channel"));
}

#[tokio::test]
async fn discord_list_messages_raw_is_larger_than_shaped() {
    let (t, _) = discord_app().await;
    let r = t.ok("discord_list_messages", json!({"channel_id": GENERAL, "include_raw": true})).await;
    let raw = r["raw"].to_string().len();
    let mut shaped = r.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = shaped.to_string().len();
    eprintln!("discord_list_messages: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped * 2 < raw, "{shaped} vs {raw}");
}

#[tokio::test]
async fn discord_send_message_replies_and_limits_mentions() {
    let (t, fake) = discord_app().await;
    let r = t
        .ok(
            "discord_send_message",
            json!({"channel_id": GENERAL, "content": "On it <@80351110224678912>", "reply_to_message_id": "1100000000000000001", "embeds": [{"title": "Status", "color": 3066993}]}),
        )
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", format!("/api/v10/channels/{GENERAL}/messages").as_str())
    );
    assert_eq!(req.header("authorization"), Some(format!("Bot {TOKEN}").as_str()));
    assert_eq!(
        sent_json(&req),
        json!({
            "content": "On it <@80351110224678912>",
            "allowed_mentions": {"parse": ["users"], "replied_user": true},
            "message_reference": {"message_id": "1100000000000000001", "fail_if_not_exists": false},
            "embeds": [{"title": "Status", "color": 3066993}]
        })
    );
    assert_eq!(
        r,
        json!({"id": "1100000000000000042", "channel_id": GENERAL, "time": "2026-05-01T10:02:00.000000+00:00", "reply_to": "1100000000000000001"})
    );
    t.ok("discord_send_message", json!({"channel_id": GENERAL, "content": "@everyone standup", "mentions": "all"}))
        .await;
    assert_eq!(
        sent_json(&fake.last())["allowed_mentions"],
        json!({"parse": ["users", "roles", "everyone"], "replied_user": true})
    );

    // Discord's own form-body error reaches the agent in its words.
    let long = "x".repeat(2001);
    let e = t.err("discord_send_message", json!({"channel_id": GENERAL, "content": long})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS", "the schema's 2000-character cap catches it first");
    let title = "T".repeat(300);
    let e = t
        .err(
            "discord_send_message",
            json!({"channel_id": GENERAL, "content": "see embed", "embeds": [{"title": title}]}),
        )
        .await;
    assert_eq!(e["status"], 400);
    assert_eq!(
        e["message"],
        "discord answered 400: Invalid Form Body (code 50035): embeds.0.title: Must be 256 or fewer in length."
    );
}

#[tokio::test]
async fn discord_send_dm_opens_the_channel_then_posts() {
    let (t, fake) = discord_app().await;
    let r = t.ok("discord_send_dm", json!({"user_id": ADA, "content": "Your report is ready"})).await;
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/api/v10/users/@me/channels"));
    assert_eq!(sent_json(&reqs[0]), json!({"recipient_id": ADA}));
    assert_eq!(reqs[1].path, "/api/v10/channels/1200000000000000001/messages");
    assert_eq!(sent_json(&reqs[1]), json!({"content": "Your report is ready"}));
    assert_eq!(r["channel_id"], "1200000000000000001");
    assert_eq!(r["id"], "1100000000000000042");
    assert_eq!(r["user_id"], ADA);

    let closed = t.err("discord_send_dm", json!({"user_id": GHOST, "content": "hi"})).await;
    assert_eq!(closed["status"], 403);
    assert!(closed["message"].as_str().unwrap().contains("Cannot send messages to this user (code 50007)"), "{closed}");
}

#[tokio::test]
async fn discord_create_thread_from_a_message_standalone_and_in_a_forum() {
    // Counts the requests writes send: without the outbound-data guard's lookups (`flow_guard.rs`).
    let fake = Fake::start(discord).await;
    let t = app_with(&[
        ("WORKBENCH_DISCORD_BASE_URL", format!("{}/api/v10", fake.url)),
        ("WORKBENCH_DISCORD_TOKEN", TOKEN.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    let r = t
        .ok("discord_create_thread", json!({"channel_id": GENERAL, "name": "Release notes", "message_id": "1100000000000000001", "auto_archive_duration": 60}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, format!("/api/v10/channels/{GENERAL}/messages/1100000000000000001/threads"));
    assert_eq!(sent_json(&req), json!({"name": "Release notes", "auto_archive_duration": 60}));
    assert_eq!(
        r,
        json!({"id": "1100000000000000001", "name": "Release notes", "type": "public_thread", "parent_id": GENERAL, "auto_archive_duration": 60, "started_from_message_id": "1100000000000000001"})
    );

    let fake = Fake::start(discord).await;
    let t = app_with(&[
        ("WORKBENCH_DISCORD_BASE_URL", format!("{}/api/v10", fake.url)),
        ("WORKBENCH_DISCORD_TOKEN", TOKEN.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    let r = t
        .ok(
            "discord_create_thread",
            json!({"channel_id": GENERAL, "name": "Planning", "private": true, "content": "Agenda below"}),
        )
        .await;
    let reqs = fake.requests();
    let paths: Vec<(&str, &str)> = reqs.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect();
    assert_eq!(
        paths,
        [
            ("GET", "/api/v10/channels/81384788765712385"),
            ("POST", "/api/v10/channels/81384788765712385/threads"),
            ("POST", "/api/v10/channels/1300000000000000001/messages")
        ]
    );
    assert_eq!(sent_json(&reqs[1]), json!({"name": "Planning", "auto_archive_duration": 1440, "type": 12}));
    assert_eq!(sent_json(&reqs[2])["content"], "Agenda below");
    assert_eq!(r["type"], "private_thread");
    assert_eq!(r["first_message_id"], "1100000000000000042");

    let fake = Fake::start(discord).await;
    let t = app_with(&[
        ("WORKBENCH_DISCORD_BASE_URL", format!("{}/api/v10", fake.url)),
        ("WORKBENCH_DISCORD_TOKEN", TOKEN.into()),
        ("WORKBENCH_FLOW", "off".into()),
    ]);
    let r = t
        .ok(
            "discord_create_thread",
            json!({"channel_id": FORUM, "name": "Dark mode", "content": "Please add dark mode"}),
        )
        .await;
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        sent_json(&reqs[1]),
        json!({"name": "Dark mode", "auto_archive_duration": 1440, "message": {"content": "Please add dark mode"}})
    );
    assert_eq!(r["first_message_id"], "1300000000000000002");
    assert_eq!(r["parent_id"], FORUM);

    let forum_without_post = t.err("discord_create_thread", json!({"channel_id": FORUM, "name": "Empty"})).await;
    assert_eq!(forum_without_post["status"], 400);
    assert!(
        forum_without_post["message"].as_str().unwrap().contains("message: This field is required"),
        "{forum_without_post}"
    );
    let bad =
        t.err("discord_create_thread", json!({"channel_id": GENERAL, "name": "x", "auto_archive_duration": 30})).await;
    assert_eq!(bad["problems"][0]["path"], "/auto_archive_duration");
}

#[tokio::test]
async fn discord_add_reaction_url_encodes_the_emoji() {
    let (t, fake) = discord_app().await;
    let r = t
        .ok("discord_add_reaction", json!({"channel_id": GENERAL, "message_id": "1100000000000000003", "emoji": "👍"}))
        .await;
    let req = fake.last();
    assert_eq!(req.method, "PUT");
    assert_eq!(
        req.path,
        format!("/api/v10/channels/{GENERAL}/messages/1100000000000000003/reactions/%F0%9F%91%8D/@me")
    );
    assert!(req.body.is_empty());
    assert_eq!(r, json!({"channel_id": GENERAL, "message_id": "1100000000000000003", "emoji": "👍", "added": true}));
    t.ok(
        "discord_add_reaction",
        json!({"channel_id": GENERAL, "message_id": "1100000000000000003", "emoji": ":white_check_mark:"}),
    )
    .await;
    assert!(fake.last().path.ends_with("/reactions/%E2%9C%85/@me"));
    t.ok(
        "discord_add_reaction",
        json!({"channel_id": GENERAL, "message_id": "1100000000000000003", "emoji": "<:blob:112233445566778899>"}),
    )
    .await;
    assert!(fake.last().path.ends_with("/reactions/blob%3A112233445566778899/@me"));
    let unknown = t
        .err("discord_add_reaction", json!({"channel_id": GENERAL, "message_id": "1100000000000000003", "emoji": "🦄"}))
        .await;
    assert!(unknown["message"].as_str().unwrap().contains("Unknown Emoji (code 10014)"), "{unknown}");
}

#[tokio::test]
async fn discord_rejected_token_and_rate_limits() {
    let (t, _) = discord_app_with("not-the-token").await;
    let e = t.err("discord_list_servers", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("reconnect") && m.contains("401: Unauthorized"), "{e}");

    let (t, _) = discord_app().await;
    let rl = t.err("discord_list_messages", json!({"channel_id": BUSY})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
    assert!(rl["message"].as_str().unwrap().contains("You are being rate limited."));
}

#[tokio::test]
async fn discord_identity_names_the_bot() {
    let (t, fake) = discord_app().await;
    let fields = |token: &str| {
        let mut f = HashMap::new();
        f.insert("token".to_string(), workbench::secrets::Secret::new(token.to_string()));
        workbench::auth::from_fields(&plugins::discord::INTEGRATION, f, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::discord::INTEGRATION, fields(TOKEN)).await;
    assert_eq!(label.unwrap().as_deref(), Some("workbench-bot (bot)"));
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v10/users/@me"));
    assert_eq!(req.header("authorization"), Some(format!("Bot {TOKEN}").as_str()));
    let bad = workbench::send::verify_identity(&t.app, &plugins::discord::INTEGRATION, fields("wrong")).await;
    match bad {
        Err(plugins::api::ToolError::Upstream { status: 401, message, .. }) => {
            assert!(message.contains("Discord rejected this credential: 401: Unauthorized"), "{message}")
        }
        other => panic!("expected a 401, got {other:?}"),
    }
}
