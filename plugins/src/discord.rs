//! Discord: the REST API v10 with the user's own bot token (`Authorization: Bot <token>`). Servers
//! (guilds), channels, messages with before/after snowflake paging, replies, DMs (open a DM channel,
//! then post), threads and reactions. Discord asks clients to identify themselves with a
//! `DiscordBot (url, version)` User-Agent, which every request here carries.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "discord",
    display_name: "Discord",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "Bot token",
            secret: true,
            required: true,
            help: "discord.com/developers/applications → your app → Bot → Reset Token. Invite the bot with View Channels, Send Messages, Read Message History, Add Reactions, Create Public Threads, and enable the Message Content intent",
        }],
        inject: Inject::Header { name: "authorization", prefix: "Bot ", field: "token" },
        identity: Some(Identity { request: || discord(HttpRequest::get("/users/@me")), label: identity_label }),
        oauth: None,
    },
    keywords: &["server", "guild", "discord server", "discord bot", "discord channel"],
    hosts: &[Host { key: "base_url", default_url: "https://discord.com/api/v10" }],
    curl_proxy: crate::api::CurlProxy::WritesUnder(&["/channels/*/messages", "/channels/*/threads"]),
    rate_limit: crate::api::RateLimit::per_second(50),
    side: Some(flow_side),
    tools: &[LIST_SERVERS, LIST_CHANNELS, LIST_MESSAGES, SEND_MESSAGE, SEND_DM, CREATE_THREAD, ADD_REACTION],
    error_message,
};

/// Discord wants `DiscordBot (url, version)`; the engine's own agent string follows it. The URL
/// must exist: workbench has no public home, so it names the protocol it is a gateway for.
const USER_AGENT: &str =
    concat!("DiscordBot (https://modelcontextprotocol.io, ", env!("CARGO_PKG_VERSION"), ") workbench");

fn discord(req: HttpRequest) -> HttpRequest {
    req.header("user-agent", USER_AGENT)
}

// ---------------------------------------------------------------- outbound-data guard

/// The user's side (`shared/design/flows.md` section 2): the bot's own id (`GET /users/@me`) and
/// the people behind the application (`GET /oauth2/applications/@me`: its `owner`, or every
/// member of its `team`).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(discord(HttpRequest::get("/users/@me"))).await?.json()?;
        let mut side = crate::flow::side_from(&me, &[], &["/id"])?;
        let app = up.send(discord(HttpRequest::get("/oauth2/applications/@me"))).await?.json()?;
        let mut owners = 0;
        for id in std::iter::once(&app["owner"]["id"])
            .chain(app["team"]["members"].as_array().into_iter().flatten().map(|m| &m["user"]["id"]))
            .filter_map(Value::as_str)
        {
            side.add_id(id);
            owners += 1;
        }
        if owners == 0 {
            return Err(crate::flow::undecided("Discord named no owner of the application"));
        }
        Ok(side)
    })
}

/// Who reads a Discord channel. Discord servers are open communities whose members workbench
/// cannot vet, so a server channel counts as the user's own workspace only when the server is
/// the user's (its `owner_id` is the application's owner or a member of its team); every
/// other server is outside, whoever is in it. A DM or group DM is inside only when every
/// recipient is on the user's side. Lookups: `GET /channels/{id}`, then for a server channel
/// `GET /guilds/{guild_id}`.
async fn channel_verdict(
    up: &dyn Upstream,
    channel: &str,
    side: &crate::flow::Side,
) -> Result<crate::flow::Verdict, ToolError> {
    use crate::flow::{Party, Verdict, undecided};
    let id = snowflake("/channel_id", channel)?;
    let ch = up.send(discord(HttpRequest::get(format!("/channels/{id}")))).await?.json()?;
    if let Some(recipients) = ch["recipients"].as_array().filter(|_| ch["guild_id"].is_null()) {
        if recipients.is_empty() {
            return Err(undecided(format!("Discord named no recipients of the DM {id}")));
        }
        let mut verdict = Verdict::Inside;
        for r in recipients {
            let rid = r["id"].as_str().unwrap_or("?");
            if !side.has_id(rid) {
                let name = r["username"].as_str().unwrap_or(rid);
                verdict = verdict.and(Verdict::outside(Party::Named(format!("Discord user {name} ({rid})"))));
            }
        }
        return Ok(verdict);
    }
    let Some(guild) = ch["guild_id"].as_str() else {
        return Err(undecided(format!("Discord named no server or recipients of channel {id}")));
    };
    let g = up.send(discord(HttpRequest::get(format!("/guilds/{}", snowflake("/guild_id", guild)?)))).await?.json()?;
    let Some(owner) = g["owner_id"].as_str() else {
        return Err(undecided(format!("Discord named no owner of server {guild}")));
    };
    if side.has_id(owner) {
        return Ok(Verdict::Inside);
    }
    let name = g["name"].as_str().unwrap_or(guild);
    Ok(Verdict::outside(Party::Named(format!("the members of the Discord server {name}, which the user does not own"))))
}

/// `discord_send_message`, `discord_create_thread`, `discord_add_reaction`: the channel's readers.
fn channel_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<crate::flow::Side>,
) -> BoxFuture<Result<crate::flow::Verdict, ToolError>> {
    Box::pin(async move {
        let channel =
            crate::flow::arg_str(&args, "channel_id").ok_or_else(|| crate::flow::undecided("no channel_id"))?;
        channel_verdict(&*up, channel, &side).await
    })
}

/// `discord_send_dm`: the recipient, inside only when it is the user (the application's owner).
fn dm_audience(
    _up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<crate::flow::Side>,
) -> BoxFuture<Result<crate::flow::Verdict, ToolError>> {
    use crate::flow::{Party, Verdict};
    let user = crate::flow::arg_str(&args, "user_id").unwrap_or("?");
    crate::flow::ready(Ok(if side.has_id(user) {
        Verdict::Inside
    } else {
        Verdict::outside(Party::Named(format!("Discord user {user}")))
    }))
}

fn identity_label(body: &Value) -> Option<String> {
    let name = body["username"].as_str()?;
    Some(match body["bot"].as_bool() {
        Some(true) => format!("{name} (bot)"),
        _ => name.to_string(),
    })
}

/// `{code, message}` plus, for invalid form bodies, the first field errors
/// (`{"errors": {"content": {"_errors": [{"message": …}]}}}`).
fn error_message(body: &Value) -> Option<String> {
    let message = body["message"].as_str()?;
    let mut out = message.to_string();
    if let Some(code) = body["code"].as_u64().filter(|c| *c != 0) {
        out.push_str(&format!(" (code {code})"));
    }
    let mut fields = Vec::new();
    collect_errors(&body["errors"], String::new(), &mut fields);
    if !fields.is_empty() {
        out.push_str(&format!(": {}", fields.into_iter().take(5).collect::<Vec<_>>().join("; ")));
    }
    Some(out)
}

fn collect_errors(v: &Value, path: String, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else { return };
    for (k, child) in map {
        if k == "_errors" {
            for e in child.as_array().into_iter().flatten() {
                if let Some(m) = e["message"].as_str() {
                    out.push(if path.is_empty() { m.to_string() } else { format!("{path}: {m}") });
                }
            }
        } else {
            let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            collect_errors(child, p, out);
        }
    }
}

fn problem(path: &str, message: impl Into<String>) -> ToolError {
    let message = message.into();
    ToolError::InvalidArguments { problems: vec![ArgProblem { path: path.into(), problem: message.clone() }], message }
}

/// Checks a snowflake id (a 17-20 digit number) and returns it ready for a path.
fn snowflake(path: &str, id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if (15..=21).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(encode_segment(id))
    } else {
        Err(problem(path, format!("'{id}' is not a Discord id (a long number such as 1234567890123456789)")))
    }
}

fn channel_type(t: u64) -> &'static str {
    match t {
        0 => "text",
        1 => "dm",
        2 => "voice",
        3 => "group_dm",
        4 => "category",
        5 => "announcement",
        10 => "announcement_thread",
        11 => "public_thread",
        12 => "private_thread",
        13 => "stage",
        14 => "directory",
        15 => "forum",
        16 => "media",
        _ => "other",
    }
}

// ---------------------------------------------------------------- servers and channels

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListServers {
    /// Servers per page (1-200).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Also return Discord's full guild objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_SERVERS: ToolSpec = tool! {
    name: "discord_list_servers",
    effect: Read,
    results: Private,
    args: ListServers,
    run: list_servers,
    keywords: ["servers", "guilds", "communities", "which servers", "discord servers", "guild id"],
    description: "List the Discord servers (guilds) the bot is a member of, with id, name and approximate member count; the ids are needed to list a server's channels.",
};

async fn list_servers(up: Arc<dyn Upstream>, args: ListServers) -> Result<Value, ToolError> {
    let after = args.cursor.as_deref().map(|c| snowflake("/cursor", c)).transpose()?;
    let limit = args.limit.clamp(1, 200);
    let req = discord(HttpRequest::get("/users/@me/guilds"))
        .query("limit", limit)
        .query_opt("after", after)
        .query("with_counts", "true");
    let body = up.send(req).await?.json()?;
    let guilds = body.as_array().cloned().unwrap_or_default();
    let servers: Vec<Value> = guilds
        .iter()
        .map(|g| {
            compact(json!({
                "id": g["id"],
                "name": g["name"],
                "members": g["approximate_member_count"],
                "online": g["approximate_presence_count"],
                "bot_is_owner": g["owner"].as_bool().filter(|o| *o),
            }))
        })
        .collect();
    let next = (guilds.len() as u32 >= limit).then(|| max_id(&guilds)).flatten();
    Ok(with_raw(compact(json!({"servers": servers, "next_cursor": next})), args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum ChannelKind {
    Text,
    Voice,
    Category,
    Announcement,
    Forum,
    Stage,
    Media,
}

impl ChannelKind {
    fn matches(self, t: u64) -> bool {
        matches!(
            (self, t),
            (ChannelKind::Text, 0)
                | (ChannelKind::Voice, 2)
                | (ChannelKind::Category, 4)
                | (ChannelKind::Announcement, 5)
                | (ChannelKind::Stage, 13)
                | (ChannelKind::Forum, 15)
                | (ChannelKind::Media, 16)
        )
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListChannels {
    /// The server (guild) id, from discord_list_servers.
    #[schemars(length(min = 1))]
    guild_id: String,
    /// Only channels of this type: text, voice, category, announcement, forum, stage or media.
    r#type: Option<ChannelKind>,
    /// Also return Discord's full channel objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_CHANNELS: ToolSpec = tool! {
    name: "discord_list_channels",
    effect: Read,
    results: Private,
    args: ListChannels,
    run: list_channels,
    keywords: ["channels", "text channels", "voice channels", "categories", "forum", "channel id", "server channels", "guild"],
    description: "List the channels of a Discord server (guild): text, voice, announcement, forum and stage channels with their category, topic and id, optionally filtered by type.",
};

async fn list_channels(up: Arc<dyn Upstream>, args: ListChannels) -> Result<Value, ToolError> {
    let guild = snowflake("/guild_id", &args.guild_id)?;
    let body = up.send(discord(HttpRequest::get(format!("/guilds/{guild}/channels")))).await?.json()?;
    let all = body.as_array().cloned().unwrap_or_default();
    let category = |id: &Value| all.iter().find(|c| c["id"] == *id && c["type"] == 4);
    let mut rows: Vec<(i64, u8, u8, i64, Value)> = all
        .iter()
        .filter(|c| args.r#type.is_none_or(|k| k.matches(c["type"].as_u64().unwrap_or(99))))
        .map(|c| {
            let t = c["type"].as_u64().unwrap_or(99);
            let parent = category(&c["parent_id"]);
            let pos = c["position"].as_i64().unwrap_or(0);
            // Discord's own order: uncategorised first, then each category followed by its
            // channels, text-like before voice-like.
            let group = match (t, parent) {
                (4, _) => pos,
                (_, Some(p)) => p["position"].as_i64().unwrap_or(0),
                (_, None) => -1,
            };
            let voice_like = u8::from(matches!(t, 2 | 13));
            let shaped = compact(json!({
                "id": c["id"],
                "name": c["name"],
                "type": channel_type(t),
                "category": parent.map(|p| p["name"].clone()),
                "topic": c["topic"].as_str().filter(|s| !s.is_empty()),
                "nsfw": c["nsfw"].as_bool().filter(|n| *n),
            }));
            (group, u8::from(t != 4), voice_like, pos, shaped)
        })
        .collect();
    rows.sort_by_key(|r| (r.0, r.1, r.2, r.3));
    let channels: Vec<Value> = rows.into_iter().map(|r| r.4).collect();
    Ok(with_raw(json!({"guild_id": args.guild_id.trim(), "channels": channels}), args.include_raw, &body))
}

// ---------------------------------------------------------------- messages

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListMessages {
    /// The channel (or thread, or DM channel) id.
    #[schemars(length(min = 1))]
    channel_id: String,
    /// Messages per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Only messages older than this message id.
    before: Option<String>,
    /// Only messages newer than this message id (pages forward in time).
    after: Option<String>,
    /// Messages around this message id (context of a message).
    around: Option<String>,
    /// Opaque cursor from a previous call's next_cursor (continues in the same direction).
    cursor: Option<String>,
    /// Also return Discord's full message objects under raw.
    #[serde(default)]
    include_raw: bool,
}

fn id_num(v: &Value) -> Option<u64> {
    v.as_str().and_then(|s| s.parse().ok())
}

fn max_id(items: &[Value]) -> Option<String> {
    items.iter().filter_map(|m| id_num(&m["id"])).max().map(|n| n.to_string())
}

fn min_id(items: &[Value]) -> Option<String> {
    items.iter().filter_map(|m| id_num(&m["id"])).min().map(|n| n.to_string())
}

const MESSAGE_CHARS: usize = 4_000;

fn shape_message(m: &Value) -> Value {
    let content = m["content"].as_str().unwrap_or_default();
    let (content, truncated) = truncate_chars(content, MESSAGE_CHARS);
    let author = &m["author"];
    let attachments: Vec<Value> = m["attachments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            compact(json!({"filename": a["filename"], "url": a["url"], "size": a["size"], "type": a["content_type"]}))
        })
        .collect();
    let embeds: Vec<Value> = m["embeds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let (desc, _) = truncate_chars(e["description"].as_str().unwrap_or_default(), 500);
            compact(json!({"title": e["title"], "url": e["url"], "description": (!desc.is_empty()).then_some(desc)}))
        })
        .collect();
    let reactions: Vec<Value> = m["reactions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let e = &r["emoji"];
            let emoji = match (e["id"].as_str(), e["name"].as_str()) {
                (Some(id), Some(name)) => format!("{name}:{id}"),
                (_, Some(name)) => name.to_string(),
                _ => String::new(),
            };
            json!({"emoji": emoji, "count": r["count"]})
        })
        .collect();
    let kind = m["type"].as_u64().unwrap_or(0);
    let hidden = content.is_empty()
        && attachments.is_empty()
        && embeds.is_empty()
        && m["sticker_items"].as_array().is_none_or(Vec::is_empty)
        && matches!(kind, 0 | 19);
    compact(json!({
        "id": m["id"],
        "author": author["global_name"].as_str().or(author["username"].as_str()),
        "author_id": author["id"],
        "bot": author["bot"].as_bool().filter(|b| *b),
        "time": m["timestamp"],
        "edited": m["edited_timestamp"].as_str(),
        "content": content,
        "truncated": truncated.then_some(true),
        "content_hidden": hidden.then_some(true),
        "reply_to": m["message_reference"]["message_id"].as_str().filter(|_| kind == 19),
        "attachments": (!attachments.is_empty()).then_some(attachments),
        "embeds": (!embeds.is_empty()).then_some(embeds),
        "reactions": (!reactions.is_empty()).then_some(reactions),
        "thread": m["thread"].is_object().then(|| compact(json!({"id": m["thread"]["id"], "name": m["thread"]["name"]}))),
        "pinned": m["pinned"].as_bool().filter(|p| *p),
    }))
}

const INTENT_NOTE: &str = "Some messages came back without their content: turn on the Message Content intent for the bot (Discord Developer Portal → your app → Bot → Privileged Gateway Intents).";

pub(crate) const LIST_MESSAGES: ToolSpec = tool! {
    name: "discord_list_messages",
    effect: Read,
    results: Private,
    args: ListMessages,
    run: list_messages,
    keywords: ["read", "history", "recent messages", "new messages", "latest", "chat log", "what was said", "catch up", "channel history", "channel messages"],
    description: "Read recent messages in a Discord channel (newest first), or the messages before/after/around a message id, with author, content, attachments, reactions and replies.",
};

async fn list_messages(up: Arc<dyn Upstream>, args: ListMessages) -> Result<Value, ToolError> {
    let channel = snowflake("/channel_id", &args.channel_id)?;
    let given = [&args.before, &args.after, &args.around, &args.cursor].iter().filter(|v| v.is_some()).count();
    if given > 1 {
        return Err(invalid(
            "",
            "give at most one of before, after, around or cursor",
            "before, after, around and cursor exclude each other",
        ));
    }
    let (mode, anchor) = if let Some(c) = &args.cursor {
        let (mode, id) = c
            .split_once(':')
            .filter(|(m, _)| matches!(*m, "before" | "after"))
            .ok_or_else(|| problem("/cursor", format!("cursor '{c}' is not one this tool issued")))?;
        (mode, Some(snowflake("/cursor", id)?))
    } else if let Some(b) = &args.before {
        ("before", Some(snowflake("/before", b)?))
    } else if let Some(a) = &args.after {
        ("after", Some(snowflake("/after", a)?))
    } else if let Some(a) = &args.around {
        ("around", Some(snowflake("/around", a)?))
    } else {
        ("before", None)
    };
    let mut req = discord(HttpRequest::get(format!("/channels/{channel}/messages"))).query("limit", args.limit);
    if let Some(id) = anchor {
        req = req.query(mode, id);
    }
    let body = up.send(req).await?.json()?;
    let items = body.as_array().cloned().unwrap_or_default();
    let messages: Vec<Value> = items.iter().map(shape_message).collect();
    let full = items.len() as u32 >= args.limit;
    let next = match mode {
        "before" if full => min_id(&items).map(|id| format!("before:{id}")),
        "after" if full => max_id(&items).map(|id| format!("after:{id}")),
        _ => None,
    };
    let hidden = messages.iter().any(|m| m.get("content_hidden").is_some());
    let out = compact(json!({
        "channel_id": args.channel_id.trim(),
        "messages": messages,
        "next_cursor": next,
        "note": hidden.then_some(INTENT_NOTE),
    }));
    Ok(with_raw(out, args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mentions {
    #[default]
    Users,
    All,
    None,
}

impl Mentions {
    fn allowed(self) -> Value {
        match self {
            Mentions::Users => json!({"parse": ["users"], "replied_user": true}),
            Mentions::All => json!({"parse": ["users", "roles", "everyone"], "replied_user": true}),
            Mentions::None => json!({"parse": [], "replied_user": false}),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendMessage {
    /// The channel (or thread) id to post in.
    #[schemars(length(min = 1))]
    channel_id: String,
    /// Message text (Discord Markdown: **bold**, *italic*, `code`, <@user_id> to mention), up to 2000 characters.
    #[schemars(length(min = 1, max = 2000))]
    content: String,
    /// Reply to this message id (shown as a reply, pinging its author unless mentions is none).
    reply_to_message_id: Option<String>,
    /// Rich embeds (up to 10), e.g. [{"title":"Build #42","description":"passed","color":3066993}].
    #[schemars(length(max = 10))]
    embeds: Option<Vec<Map<String, Value>>>,
    /// Who may be pinged: users (mentioned users only, default), all (also @everyone/@here and roles) or none.
    #[serde(default)]
    mentions: Mentions,
}

fn shape_sent(m: &Value) -> Value {
    compact(json!({
        "id": m["id"],
        "channel_id": m["channel_id"],
        "time": m["timestamp"],
        "reply_to": m["message_reference"]["message_id"],
    }))
}

pub(crate) const SEND_MESSAGE: ToolSpec = tool! {
    name: "discord_send_message",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(channel_audience),
    args: SendMessage,
    run: send_message,
    keywords: ["post", "message", "reply", "say", "announce", "notify", "chat", "send to channel", "announcement", "post in channel"],
    description: "Send (post) a message to a Discord channel, optionally as a reply to another message, with optional embeds; mentions of users ping them, @everyone and roles only when allowed.",
};

async fn send_message(up: Arc<dyn Upstream>, args: SendMessage) -> Result<Value, ToolError> {
    let channel = snowflake("/channel_id", &args.channel_id)?;
    let mut body = json!({"content": args.content, "allowed_mentions": args.mentions.allowed()});
    if let Some(id) = &args.reply_to_message_id {
        snowflake("/reply_to_message_id", id)?;
        body["message_reference"] = json!({"message_id": id.trim(), "fail_if_not_exists": false});
    }
    if let Some(embeds) = args.embeds {
        body["embeds"] = json!(embeds);
    }
    let m = up.send(discord(HttpRequest::post(format!("/channels/{channel}/messages")).json(body))).await?.json()?;
    Ok(shape_sent(&m))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendDm {
    /// The user's id (right-click → Copy User ID, or author_id from discord_list_messages).
    #[schemars(length(min = 1))]
    user_id: String,
    /// Message text (Discord Markdown), up to 2000 characters.
    #[schemars(length(min = 1, max = 2000))]
    content: String,
    /// Rich embeds (up to 10).
    #[schemars(length(max = 10))]
    embeds: Option<Vec<Map<String, Value>>>,
}

pub(crate) const SEND_DM: ToolSpec = tool! {
    name: "discord_send_dm",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(dm_audience),
    args: SendDm,
    run: send_dm,
    keywords: ["direct message", "DM", "private message", "message a user", "PM", "whisper"],
    description: "Send a direct message (DM, private message) from the bot to a Discord user by user id; the user must share a server with the bot and accept DMs.",
};

async fn send_dm(up: Arc<dyn Upstream>, args: SendDm) -> Result<Value, ToolError> {
    snowflake("/user_id", &args.user_id)?;
    let dm = up
        .send(discord(HttpRequest::post("/users/@me/channels").json(json!({"recipient_id": args.user_id.trim()}))))
        .await?
        .json()?;
    let channel =
        dm["id"].as_str().ok_or_else(|| ToolError::Internal("Discord opened no DM channel".into()))?.to_string();
    let mut body = json!({"content": args.content});
    if let Some(embeds) = args.embeds {
        body["embeds"] = json!(embeds);
    }
    let m = up
        .send(discord(HttpRequest::post(format!("/channels/{}/messages", encode_segment(&channel))).json(body)))
        .await?
        .json()?;
    let mut out = shape_sent(&m);
    out["user_id"] = json!(args.user_id.trim());
    Ok(out)
}

// ---------------------------------------------------------------- threads and reactions

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateThread {
    /// The channel (text, announcement or forum) to start the thread in.
    #[schemars(length(min = 1))]
    channel_id: String,
    /// Thread name (title), 1-100 characters.
    #[schemars(length(min = 1, max = 100))]
    name: String,
    /// Start the thread from this existing message. Without it a standalone thread (or forum post) is created.
    message_id: Option<String>,
    /// First message: the post body in a forum channel (required there), or posted into a new standalone thread.
    #[schemars(length(min = 1, max = 2000))]
    content: Option<String>,
    /// Minutes of inactivity before the thread is hidden: 60, 1440 (1 day), 4320 (3 days) or 10080 (1 week).
    #[serde_inline_default(1440)]
    auto_archive_duration: u32,
    /// A private thread (invite-only) instead of a public one; standalone threads in text channels only.
    #[serde(default)]
    private: bool,
}

pub(crate) const CREATE_THREAD: ToolSpec = tool! {
    name: "discord_create_thread",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(channel_audience),
    args: CreateThread,
    run: create_thread,
    keywords: ["thread", "start thread", "discussion", "forum post", "sub-conversation", "topic"],
    description: "Start a Discord thread: from an existing message (message_id) or standalone in a channel (public or private), or a new forum post with a first message.",
};

async fn create_thread(up: Arc<dyn Upstream>, args: CreateThread) -> Result<Value, ToolError> {
    let channel = snowflake("/channel_id", &args.channel_id)?;
    if ![60, 1440, 4320, 10080].contains(&args.auto_archive_duration) {
        return Err(problem("/auto_archive_duration", "must be 60, 1440, 4320 or 10080 (minutes)"));
    }
    let mut body = json!({"name": args.name, "auto_archive_duration": args.auto_archive_duration});
    let (thread, first_message) = if let Some(mid) = &args.message_id {
        if args.content.is_some() || args.private {
            return Err(problem(
                "/message_id",
                "a thread started from a message is public and has that message first; leave out content and private",
            ));
        }
        let mid = snowflake("/message_id", mid)?;
        let t = up
            .send(discord(HttpRequest::post(format!("/channels/{channel}/messages/{mid}/threads")).json(body)))
            .await?
            .json()?;
        (t, None)
    } else {
        // Forum and media channels take the first message with the thread; others get it after.
        let forum = match &args.content {
            Some(_) => {
                let c = up.send(discord(HttpRequest::get(format!("/channels/{channel}")))).await?.json()?;
                matches!(c["type"].as_u64(), Some(15 | 16))
            }
            None => false,
        };
        if forum {
            if args.private {
                return Err(problem("/private", "forum posts cannot be private"));
            }
            body["message"] = json!({"content": args.content});
        } else {
            body["type"] = json!(if args.private { 12 } else { 11 });
        }
        let t = up.send(discord(HttpRequest::post(format!("/channels/{channel}/threads")).json(body))).await?.json()?;
        let first = match (&args.content, forum) {
            (Some(content), false) => {
                let id = t["id"].as_str().unwrap_or_default();
                let m = up
                    .send(
                        discord(HttpRequest::post(format!("/channels/{}/messages", encode_segment(id))))
                            .json(json!({"content": content, "allowed_mentions": Mentions::Users.allowed()})),
                    )
                    .await?
                    .json()?;
                m["id"].as_str().map(str::to_string)
            }
            (Some(_), true) => t["message"]["id"].as_str().map(str::to_string),
            _ => None,
        };
        (t, first)
    };
    Ok(compact(json!({
        "id": thread["id"],
        "name": thread["name"],
        "type": thread["type"].as_u64().map(channel_type),
        "parent_id": thread["parent_id"],
        "auto_archive_duration": thread["thread_metadata"]["auto_archive_duration"],
        "started_from_message_id": args.message_id.as_deref().map(str::trim),
        "first_message_id": first_message,
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddReaction {
    /// The channel (or thread) the message is in.
    #[schemars(length(min = 1))]
    channel_id: String,
    /// The message to react to.
    #[schemars(length(min = 1))]
    message_id: String,
    /// The emoji: a Unicode emoji (👍), a common name (thumbsup, heart, white_check_mark, eyes, tada) or a custom emoji as name:id or <:name:id>.
    #[schemars(length(min = 1))]
    emoji: String,
}

/// Common emoji names people type, as the Unicode characters Discord's API wants.
const NAMED: &[(&str, &str)] = &[
    ("thumbsup", "👍"),
    ("+1", "👍"),
    ("thumbsdown", "👎"),
    ("-1", "👎"),
    ("heart", "❤️"),
    ("white_check_mark", "✅"),
    ("heavy_check_mark", "✔️"),
    ("check", "✅"),
    ("x", "❌"),
    ("eyes", "👀"),
    ("tada", "🎉"),
    ("rocket", "🚀"),
    ("fire", "🔥"),
    ("joy", "😂"),
    ("smile", "😄"),
    ("pray", "🙏"),
    ("100", "💯"),
    ("ok_hand", "👌"),
    ("clap", "👏"),
    ("wave", "👋"),
    ("thinking", "🤔"),
    ("warning", "⚠️"),
];

/// The emoji as Discord's reaction route wants it (before URL encoding): Unicode, or `name:id`.
fn reaction_emoji(input: &str) -> Result<String, ToolError> {
    let e = input.trim();
    if let Some(inner) = e.strip_prefix("<").and_then(|s| s.strip_suffix('>')) {
        // <:name:id> or <a:name:id> (animated)
        let parts: Vec<&str> = inner.trim_start_matches('a').trim_start_matches(':').split(':').collect();
        if let [name, id] = parts[..]
            && !name.is_empty()
            && id.bytes().all(|b| b.is_ascii_digit())
        {
            return Ok(format!("{name}:{id}"));
        }
        return Err(problem("/emoji", format!("'{e}' is not a custom emoji like <:name:id>")));
    }
    let bare = e.trim_matches(':');
    if let Some((_, uni)) = NAMED.iter().find(|(n, _)| *n == bare) {
        return Ok(uni.to_string());
    }
    if let Some((name, id)) = bare.split_once(':')
        && !name.is_empty()
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
    {
        return Ok(format!("{name}:{id}"));
    }
    if !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Err(problem(
            "/emoji",
            format!(
                "'{e}' is not an emoji workbench knows by name; give the emoji character itself (e.g. 👍) or a custom emoji as name:id"
            ),
        ));
    }
    Ok(e.to_string())
}

pub(crate) const ADD_REACTION: ToolSpec = tool! {
    name: "discord_add_reaction",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(channel_audience),
    args: AddReaction,
    run: add_reaction,
    keywords: ["react", "emoji", "reaction", "thumbs up", "acknowledge", "upvote"],
    description: "Add an emoji reaction to a Discord message as the bot: a Unicode emoji (👍), a common name (thumbsup, white_check_mark) or a custom server emoji (name:id).",
};

async fn add_reaction(up: Arc<dyn Upstream>, args: AddReaction) -> Result<Value, ToolError> {
    let channel = snowflake("/channel_id", &args.channel_id)?;
    let message = snowflake("/message_id", &args.message_id)?;
    let emoji = reaction_emoji(&args.emoji)?;
    let path = format!("/channels/{channel}/messages/{message}/reactions/{}/@me", encode_segment(&emoji));
    up.send(discord(HttpRequest::new(Method::Put, path))).await?;
    Ok(
        json!({"channel_id": args.channel_id.trim(), "message_id": args.message_id.trim(), "emoji": emoji, "added": true}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_forms() {
        assert_eq!(reaction_emoji("👍").unwrap(), "👍");
        assert_eq!(reaction_emoji(":thumbsup:").unwrap(), "👍");
        assert_eq!(reaction_emoji("white_check_mark").unwrap(), "✅");
        assert_eq!(reaction_emoji("partyparrot:112233445566778899").unwrap(), "partyparrot:112233445566778899");
        assert_eq!(reaction_emoji("<:blob:112233445566778899>").unwrap(), "blob:112233445566778899");
        assert_eq!(reaction_emoji("<a:dance:112233445566778899>").unwrap(), "dance:112233445566778899");
        assert!(reaction_emoji("nonsense_name").is_err());
        assert_eq!(encode_segment("👍"), "%F0%9F%91%8D");
    }

    #[test]
    fn form_errors_are_flattened() {
        let body = json!({"code": 50035, "errors": {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}, "message": "Invalid Form Body"});
        assert_eq!(
            error_message(&body).unwrap(),
            "Invalid Form Body (code 50035): content: Must be 2000 or fewer in length."
        );
        assert_eq!(error_message(&json!({"message": "401: Unauthorized", "code": 0})).unwrap(), "401: Unauthorized");
    }

    #[test]
    fn snowflakes_are_checked() {
        assert!(snowflake("/c", "1234567890123456789").is_ok());
        assert!(snowflake("/c", "general").is_err());
        assert!(snowflake("/c", "12").is_err());
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::flow::{Results, Side, Verdict};
    use crate::mock::MockUpstream;

    const OWNER: &str = "111111111111111111";
    const CHANNEL: &str = "222222222222222222";
    const GUILD: &str = "333333333333333333";
    const STRANGER: &str = "444444444444444444";

    fn me() -> Side {
        let mut s = Side::default();
        s.add_id("999999999999999999");
        s.add_id(OWNER);
        s
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_bot_and_its_owners() {
        let side = INTEGRATION.side.unwrap();
        let (s, reqs) = MockUpstream::new()
            .json(json!({"id": "999999999999999999", "username": "wb", "bot": true}))
            .json(json!({"owner": {"id": OWNER}, "team": {"members": [{"user": {"id": "555555555555555555"}}]}}))
            .side(side);
        let s = s.unwrap();
        assert!(s.has_id(OWNER) && s.has_id("555555555555555555") && s.has_id("999999999999999999"));
        assert_eq!(reqs[1].path, "/oauth2/applications/@me");
        let (s, _) = MockUpstream::new().json(json!({"id": "999999999999999999"})).json(json!({})).side(side);
        assert!(s.is_err(), "no owner, no side");
    }

    #[test]
    fn own_servers_are_inside_others_outside() {
        let args = json!({"channel_id": CHANNEL, "content": "x", "name": "t", "message_id": CHANNEL, "emoji": "👍"});
        for tool in [&SEND_MESSAGE, &CREATE_THREAD, &ADD_REACTION] {
            let (v, reqs) = MockUpstream::new()
                .json(json!({"id": CHANNEL, "guild_id": GUILD, "type": 0}))
                .json(json!({"id": GUILD, "owner_id": OWNER, "name": "Acme"}))
                .audience(tool, args.clone(), &me());
            assert_eq!(v.unwrap(), Verdict::Inside, "{}", tool.name);
            assert_eq!(reqs[1].path, format!("/guilds/{GUILD}"));
            let v = MockUpstream::new()
                .json(json!({"id": CHANNEL, "guild_id": GUILD, "type": 0}))
                .json(json!({"id": GUILD, "owner_id": STRANGER, "name": "Loot"}))
                .verdict(tool, args.clone(), &me());
            assert!(matches!(v, Verdict::Outside { .. }), "{}", tool.name);
        }
    }

    #[test]
    fn dms_are_inside_only_with_the_user() {
        let v = MockUpstream::new().verdict(&SEND_DM, json!({"user_id": OWNER, "content": "x"}), &me());
        assert_eq!(v, Verdict::Inside);
        let v = MockUpstream::new().verdict(&SEND_DM, json!({"user_id": STRANGER, "content": "x"}), &me());
        assert!(matches!(v, Verdict::Outside { .. }));
        let dm = json!({"id": CHANNEL, "type": 1, "recipients": [{"id": STRANGER, "username": "mallory"}]});
        let v =
            MockUpstream::new().json(dm).verdict(&SEND_MESSAGE, json!({"channel_id": CHANNEL, "content": "x"}), &me());
        assert!(matches!(v, Verdict::Outside { .. }));
        let dm = json!({"id": CHANNEL, "type": 1, "recipients": [{"id": OWNER}]});
        assert_eq!(
            MockUpstream::new().json(dm).verdict(&SEND_MESSAGE, json!({"channel_id": CHANNEL, "content": "x"}), &me()),
            Verdict::Inside
        );
    }

    #[test]
    fn failed_lookups_are_errors() {
        let args = json!({"channel_id": CHANNEL, "content": "x"});
        let err = ToolError::Upstream { status: 403, message: "Missing Access".into(), retry_after: None };
        assert!(MockUpstream::new().error(err).audience(&SEND_MESSAGE, args.clone(), &me()).0.is_err());
        assert!(
            MockUpstream::new().json(json!({"id": CHANNEL})).audience(&SEND_MESSAGE, args.clone(), &me()).0.is_err()
        );
        let no_owner = json!({"id": GUILD});
        assert!(
            MockUpstream::new()
                .json(json!({"guild_id": GUILD}))
                .json(no_owner)
                .audience(&SEND_MESSAGE, args, &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .audience(&SEND_MESSAGE, json!({"channel_id": "general", "content": "x"}), &me())
                .0
                .is_err()
        );
    }
}

#[cfg(test)]
mod tool_tests;
