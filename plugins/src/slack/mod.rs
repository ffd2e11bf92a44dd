//! Slack: the Web API with a user token (OAuth 2 with PKCE, or a pasted `xoxp-` token from the
//! user's own app). Methods are paths (`/chat.postMessage`); reads are GETs with query parameters,
//! writes are JSON POSTs. Slack answers most errors with HTTP 200 and `{"ok": false, "error": …}`, so
//! every call goes through [`call`], which turns those into upstream errors with a fitting status.
//! File uploads use the external upload flow: get an upload URL, POST the bytes to the files host,
//! then complete the upload into a channel.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::flow::Audience;
use crate::tool;

mod flow;
mod shape;
mod web;

use shape::*;
use web::*;

const SCOPES: &[&str] = &[
    "channels:read",
    "groups:read",
    "im:read",
    "mpim:read",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "chat:write",
    "im:write",
    "reactions:write",
    "search:read",
    "users:read",
    "users:read.email",
    "files:write",
];

pub static INTEGRATION: Integration = Integration {
    name: "slack",
    display_name: "Slack",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[Field {
            name: "token",
            label: "User OAuth token (xoxp-…)",
            secret: true,
            required: true,
            help: "Instead of signing in: api.slack.com/apps → your app → OAuth & Permissions → User OAuth Token (xoxp-…), with the user scopes chat:write, channels:history, search:read, users:read, files:write …",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/auth.test"), label: identity_label }),
        oauth: Some(OAuth {
            authorize_url: "https://slack.com/oauth/v2/authorize",
            token_url: "https://slack.com/api/oauth.v2.user.access",
            revoke_url: Some("https://slack.com/api/auth.revoke"),
            scopes: SCOPES,
            scope_param: "user_scope",
            extra_params: &[],
            client: "slack",
        }),
    },
    keywords: &["workspace", "huddle", "slack channel", "slack message", "team chat"],
    hosts: &[
        Host { key: "base_url", default_url: "https://slack.com/api" },
        Host { key: "files_base_url", default_url: "https://files.slack.com" },
    ],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(50),
    side: Some(flow::side),
    tools: &[
        SEND_MESSAGE,
        SEND_DM,
        UPDATE_MESSAGE,
        LIST_CHANNELS,
        LIST_MESSAGES,
        GET_THREAD,
        SEARCH_MESSAGES,
        LIST_USERS,
        GET_USER,
        ADD_REACTION,
        UPLOAD_FILE,
    ],
    error_message,
};
// ---------------------------------------------------------------- send / update

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendMessage {
    /// The channel: its id (C…, G…, D…) or #name (e.g. "#general").
    #[schemars(length(min = 1))]
    channel: String,
    /// Message text in Slack mrkdwn: *bold*, _italic_, `code`, <https://example.com|label>, <@U123> to mention. With blocks it is the notification fallback.
    #[schemars(length(min = 1, max = 40000))]
    text: String,
    /// Reply in this thread: the ts of the thread's parent message.
    thread_ts: Option<String>,
    /// Block Kit blocks (layout), e.g. [{"type":"section","text":{"type":"mrkdwn","text":"*Hi*"}}].
    blocks: Option<Vec<Map<String, Value>>>,
    /// With thread_ts: also show the reply in the channel.
    #[serde(default)]
    reply_broadcast: bool,
    /// Show link previews (unfurls) for links in the text.
    #[serde_inline_default(true)]
    unfurl_links: bool,
}

pub(crate) const SEND_MESSAGE: ToolSpec = tool! {
    name: "slack_send_message",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::channel_audience),
    args: SendMessage,
    run: send_message,
    keywords: ["post", "message", "#channel", "reply", "thread reply", "announce", "notify", "chat", "say", "post in channel", "announcement"],
    description: "Send (post) a message to a Slack channel (#channel name or id), or reply in a thread with thread_ts. Text uses Slack mrkdwn (*bold*, _italic_, <https://url|label>, <@U123> mentions); Block Kit blocks optional.",
};

async fn send_message(up: Arc<dyn Upstream>, args: SendMessage) -> Result<Value, ToolError> {
    if args.reply_broadcast && args.thread_ts.is_none() {
        return Err(problem("/reply_broadcast", "reply_broadcast only applies to a thread reply; give thread_ts too"));
    }
    let mut body = json!({"channel": args.channel.trim(), "text": args.text, "unfurl_links": args.unfurl_links});
    if let Some(ts) = &args.thread_ts {
        body["thread_ts"] = json!(ts);
        if args.reply_broadcast {
            body["reply_broadcast"] = json!(true);
        }
    }
    if let Some(blocks) = args.blocks {
        body["blocks"] = json!(blocks);
    }
    let r = call(&*up, post_json("chat.postMessage", body)).await?;
    Ok(compact(json!({
        "channel": r["channel"],
        "ts": r["ts"],
        "thread_ts": r["message"]["thread_ts"].as_str().or(args.thread_ts.as_deref()),
        "time": ts_time(&r["ts"]),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendDm {
    /// Who to message: a user id (U…), an @handle, or an email address. Several people (a group DM, up to 8) separated by commas.
    #[schemars(length(min = 1))]
    user: String,
    /// Message text in Slack mrkdwn (*bold*, _italic_, <https://url|label>).
    #[schemars(length(min = 1, max = 40000))]
    text: String,
    /// Block Kit blocks (layout); text is then the notification fallback.
    blocks: Option<Vec<Map<String, Value>>>,
}

pub(crate) const SEND_DM: ToolSpec = tool! {
    name: "slack_send_dm",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::dm_audience),
    args: SendDm,
    run: send_dm,
    keywords: ["direct message", "DM", "private message", "message someone", "ping", "tell", "PM", "group DM"],
    description: "Send a direct message (DM, private message) on Slack to a person, found by user id, @handle or email address, or to a small group (comma-separated, up to 8 people).",
};

async fn send_dm(up: Arc<dyn Upstream>, args: SendDm) -> Result<Value, ToolError> {
    let refs: Vec<&str> = args.user.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if refs.is_empty() || refs.len() > 8 {
        return Err(problem("/user", "give one to eight people (id, @handle or email), separated by commas"));
    }
    let mut ids = Vec::new();
    for r in refs {
        ids.push(user_id(&*up, parse_user_ref(r)).await?);
    }
    let opened = call(&*up, post_json("conversations.open", json!({"users": ids.join(",")}))).await?;
    let channel = opened["channel"]["id"]
        .as_str()
        .ok_or_else(|| ToolError::Internal("conversations.open returned no channel id".into()))?
        .to_string();
    let mut body = json!({"channel": channel, "text": args.text});
    if let Some(blocks) = args.blocks {
        body["blocks"] = json!(blocks);
    }
    let r = call(&*up, post_json("chat.postMessage", body)).await?;
    Ok(compact(json!({
        "channel": r["channel"],
        "ts": r["ts"],
        "time": ts_time(&r["ts"]),
        "users": ids,
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateMessage {
    /// The channel the message is in: id (C…, D…) or #name.
    #[schemars(length(min = 1))]
    channel: String,
    /// The message's ts (its id), e.g. "1712345678.000200".
    #[schemars(length(min = 1))]
    ts: String,
    /// The new text (replaces the old), in Slack mrkdwn.
    #[schemars(length(min = 1, max = 40000))]
    text: String,
    /// New Block Kit blocks; replaces the old ones.
    blocks: Option<Vec<Map<String, Value>>>,
}

pub(crate) const UPDATE_MESSAGE: ToolSpec = tool! {
    name: "slack_update_message",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::channel_audience),
    args: UpdateMessage,
    run: update_message,
    keywords: ["edit", "change", "correct", "fix typo", "modify message", "rewrite"],
    description: "Edit (update) a Slack message the user posted earlier, by channel and message ts: replaces its text (and optionally its blocks).",
};

async fn update_message(up: Arc<dyn Upstream>, args: UpdateMessage) -> Result<Value, ToolError> {
    let channel = resolve_channel(&*up, &args.channel).await?;
    let mut body = json!({"channel": channel, "ts": args.ts, "text": args.text});
    if let Some(blocks) = args.blocks {
        body["blocks"] = json!(blocks);
    }
    let r = call(&*up, post_json("chat.update", body)).await?;
    Ok(compact(json!({"channel": r["channel"], "ts": r["ts"], "text": r["text"], "updated": true})))
}

// ---------------------------------------------------------------- lists

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum ChannelType {
    PublicChannel,
    PrivateChannel,
    Mpim,
    Im,
}

impl ChannelType {
    fn as_str(self) -> &'static str {
        match self {
            ChannelType::PublicChannel => "public_channel",
            ChannelType::PrivateChannel => "private_channel",
            ChannelType::Mpim => "mpim",
            ChannelType::Im => "im",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListChannels {
    /// Which kinds: public_channel, private_channel, mpim (group DMs), im (DMs).
    #[serde_inline_default(vec![ChannelType::PublicChannel, ChannelType::PrivateChannel])]
    #[schemars(length(min = 1))]
    types: Vec<ChannelType>,
    /// Leave out archived channels.
    #[serde_inline_default(true)]
    exclude_archived: bool,
    /// Channels per page (1-200).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Also return Slack's full channel objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_CHANNELS: ToolSpec = tool! {
    name: "slack_list_channels",
    effect: Read,
    results: Private,
    args: ListChannels,
    run: list_channels,
    keywords: ["channels", "#channel", "conversations", "rooms", "private channels", "DMs", "workspace", "find channel id", "list channels", "public channels"],
    description: "List Slack channels (public and private) the user can see, optionally DMs and group DMs, with id, name, topic, purpose, member count and whether the user is a member.",
};

async fn list_channels(up: Arc<dyn Upstream>, args: ListChannels) -> Result<Value, ToolError> {
    let types: Vec<&str> = args.types.iter().map(|t| t.as_str()).collect();
    let body = call(
        &*up,
        get("conversations.list")
            .query("types", types.join(","))
            .query("exclude_archived", args.exclude_archived)
            .query("limit", args.limit.clamp(1, 200))
            .query_opt("cursor", args.cursor.as_deref()),
    )
    .await?;
    let channels: Vec<Value> = body["channels"].as_array().into_iter().flatten().map(shape_channel).collect();
    let out = compact(json!({"channels": channels, "next_cursor": next_cursor(&body)}));
    Ok(with_raw(out, args.include_raw, &body["channels"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListMessages {
    /// The channel or DM: its id (C…, G…, D…) or #name.
    #[schemars(length(min = 1))]
    channel: String,
    /// Only messages after this time: a Slack ts, Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC).
    oldest: Option<String>,
    /// Only messages before this time (same formats as oldest).
    latest: Option<String>,
    /// Messages per page (1-200), newest first.
    #[serde_inline_default(30)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor (older messages).
    cursor: Option<String>,
    /// Also return Slack's full message objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_MESSAGES: ToolSpec = tool! {
    name: "slack_list_messages",
    effect: Read,
    results: Private,
    args: ListMessages,
    run: list_messages,
    keywords: ["history", "read channel", "recent messages", "new messages", "latest", "unread", "what was said", "catch up", "conversation history", "#channel", "DM history", "channel messages", "what people said"],
    description: "Read recent messages (channel history) in a Slack channel or DM, newest first, optionally between two times (oldest/latest), with authors, reactions, files and thread reply counts.",
};

async fn list_messages(up: Arc<dyn Upstream>, args: ListMessages) -> Result<Value, ToolError> {
    let oldest = args.oldest.as_deref().map(|v| time_bound("/oldest", v)).transpose()?;
    let latest = args.latest.as_deref().map(|v| time_bound("/latest", v)).transpose()?;
    let channel = resolve_channel(&*up, &args.channel).await?;
    let body = call(
        &*up,
        get("conversations.history")
            .query("channel", &channel)
            .query_opt("oldest", oldest)
            .query_opt("latest", latest)
            .query("limit", args.limit.clamp(1, 200))
            .query_opt("cursor", args.cursor.as_deref()),
    )
    .await?;
    let messages: Vec<Value> = body["messages"].as_array().into_iter().flatten().map(shape_message).collect();
    let out = compact(json!({"channel": channel, "messages": messages, "next_cursor": next_cursor(&body)}));
    Ok(with_raw(out, args.include_raw, &body["messages"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetThread {
    /// The channel the thread is in: id (C…, D…) or #name.
    #[schemars(length(min = 1))]
    channel: String,
    /// The ts of the thread's parent message (a reply's thread_ts).
    #[schemars(length(min = 1))]
    ts: String,
    /// Messages per page (1-200), oldest first.
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Also return Slack's full message objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_THREAD: ToolSpec = tool! {
    name: "slack_get_thread",
    effect: Read,
    results: Private,
    args: GetThread,
    run: get_thread,
    keywords: ["thread", "replies", "conversation", "discussion", "reply chain", "read thread"],
    description: "Get a Slack thread: the parent message and all replies, oldest first, by channel and the parent message's ts.",
};

async fn get_thread(up: Arc<dyn Upstream>, args: GetThread) -> Result<Value, ToolError> {
    let channel = resolve_channel(&*up, &args.channel).await?;
    let body = call(
        &*up,
        get("conversations.replies")
            .query("channel", &channel)
            .query("ts", &args.ts)
            .query("limit", args.limit.clamp(1, 200))
            .query_opt("cursor", args.cursor.as_deref()),
    )
    .await?;
    let messages: Vec<Value> = body["messages"].as_array().into_iter().flatten().map(shape_message).collect();
    let out = compact(json!({
        "channel": channel,
        "thread_ts": args.ts,
        "messages": messages,
        "next_cursor": next_cursor(&body),
    }));
    Ok(with_raw(out, args.include_raw, &body["messages"]))
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SearchSort {
    #[default]
    Relevance,
    Newest,
    Oldest,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchMessages {
    /// Search words with Slack modifiers: in:#channel, from:@handle, to:@handle, before:/after:/on:YYYY-MM-DD, has:link, "exact phrase".
    #[schemars(length(min = 1))]
    query: String,
    /// Order: relevance (default), newest or oldest.
    #[serde(default)]
    sort: SearchSort,
    /// Matches per page (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const SEARCH_MESSAGES: ToolSpec = tool! {
    name: "slack_search_messages",
    effect: Read,
    results: Private,
    args: SearchMessages,
    run: search_messages,
    keywords: ["find", "search", "look up", "mentions", "in:#channel", "from:@user", "after:", "keyword", "who said", "find conversation", "find discussion", "search slack"],
    description: "Search Slack messages and conversations across the workspace with Slack's search syntax (in:#channel, from:@user, after:2026-01-01, has:link, quoted \"phrases\"); returns matches with channel, author, text and permalink.",
};

async fn search_messages(up: Arc<dyn Upstream>, args: SearchMessages) -> Result<Value, ToolError> {
    let page = match &args.cursor {
        Some(c) => c
            .parse::<u64>()
            .ok()
            .filter(|p| *p >= 1)
            .ok_or_else(|| problem("/cursor", format!("cursor '{c}' is not one this tool issued")))?,
        None => 1,
    };
    let (sort, dir) = match args.sort {
        SearchSort::Relevance => ("score", "desc"),
        SearchSort::Newest => ("timestamp", "desc"),
        SearchSort::Oldest => ("timestamp", "asc"),
    };
    let body = call(
        &*up,
        get("search.messages")
            .query("query", &args.query)
            .query("sort", sort)
            .query("sort_dir", dir)
            .query("count", args.limit.clamp(1, 100))
            .query("page", page),
    )
    .await?;
    let m = &body["messages"];
    let matches: Vec<Value> = m["matches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|hit| {
            let (text, truncated) = truncate_chars(hit["text"].as_str().unwrap_or_default(), 1_000);
            compact(json!({
                "channel": compact(json!({"id": hit["channel"]["id"], "name": hit["channel"]["name"]})),
                "ts": hit["ts"],
                "time": ts_time(&hit["ts"]),
                "user": hit["user"],
                "user_name": hit["username"],
                "text": text,
                "truncated": truncated.then_some(true),
                "permalink": hit["permalink"],
            }))
        })
        .collect();
    let pages = m["pagination"]["page_count"].as_u64().or(m["paging"]["pages"].as_u64()).unwrap_or(0);
    let total = m["pagination"]["total_count"].as_u64().or(m["total"].as_u64());
    Ok(compact(json!({
        "total": total,
        "matches": matches,
        "next_cursor": (page < pages).then(|| (page + 1).to_string()),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListUsers {
    /// Members per page (1-200).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Include deactivated accounts.
    #[serde(default)]
    include_deleted: bool,
    /// Include bots and apps (Slackbot, integrations).
    #[serde(default)]
    include_bots: bool,
    /// Also return Slack's full member objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_USERS: ToolSpec = tool! {
    name: "slack_list_users",
    effect: Read,
    results: Private,
    args: ListUsers,
    run: list_users,
    keywords: ["members", "people", "team", "directory", "colleagues", "who is", "workspace members", "user ids"],
    description: "List the members (people) of the Slack workspace with id, @handle, real name, title, email and time zone.",
};

async fn list_users(up: Arc<dyn Upstream>, args: ListUsers) -> Result<Value, ToolError> {
    let body = call(
        &*up,
        get("users.list").query("limit", args.limit.clamp(1, 200)).query_opt("cursor", args.cursor.as_deref()),
    )
    .await?;
    let users: Vec<Value> = body["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| args.include_deleted || u["deleted"].as_bool() != Some(true))
        .filter(|u| args.include_bots || !(u["is_bot"].as_bool() == Some(true) || u["id"] == "USLACKBOT"))
        .map(shape_user)
        .collect();
    let out = compact(json!({"users": users, "next_cursor": next_cursor(&body)}));
    Ok(with_raw(out, args.include_raw, &body["members"]))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetUser {
    /// The person's user id (U…) or @handle. Give this or email.
    user: Option<String>,
    /// The person's email address. Give this or user.
    email: Option<String>,
    /// Also return Slack's full user object under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_USER: ToolSpec = tool! {
    name: "slack_get_user",
    effect: Read,
    results: Private,
    args: GetUser,
    run: get_user,
    keywords: ["profile", "person", "member", "email", "timezone", "status", "title", "who is", "lookup by email", "user info", "job title"],
    description: "Get a Slack user's profile by user id, @handle or email address: name, title, email, phone, time zone, status and role.",
};

async fn get_user(up: Arc<dyn Upstream>, args: GetUser) -> Result<Value, ToolError> {
    let r = match (args.user.as_deref().map(str::trim), args.email.as_deref().map(str::trim)) {
        (Some(u), None) if !u.is_empty() => parse_user_ref(u),
        (None, Some(e)) if e.contains('@') => UserRef::Email(e.to_string()),
        _ => {
            return Err(invalid("", "give exactly one of user (id or @handle) or email", "expected user or email"));
        }
    };
    let user = lookup_user(&*up, &r).await?;
    Ok(with_raw(shape_user_full(&user), args.include_raw, &user))
}

// ---------------------------------------------------------------- reactions and files

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddReaction {
    /// The channel the message is in: id (C…, D…) or #name.
    #[schemars(length(min = 1))]
    channel: String,
    /// The message's ts (its id), e.g. "1712345678.000200".
    #[schemars(length(min = 1))]
    ts: String,
    /// Emoji name without colons, e.g. thumbsup, eyes, white_check_mark, or a custom emoji's name.
    #[schemars(length(min = 1))]
    emoji: String,
}

pub(crate) const ADD_REACTION: ToolSpec = tool! {
    name: "slack_add_reaction",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::channel_audience),
    args: AddReaction,
    run: add_reaction,
    keywords: ["react", "emoji", "reaction", "thumbs up", "+1", "acknowledge", "eyes", "white_check_mark"],
    description: "Add an emoji reaction (e.g. thumbsup, eyes, white_check_mark) to a Slack message, by channel and message ts.",
};

async fn add_reaction(up: Arc<dyn Upstream>, args: AddReaction) -> Result<Value, ToolError> {
    let name = args.emoji.trim().trim_matches(':').to_string();
    if name.is_empty() {
        return Err(problem("/emoji", "give an emoji name such as thumbsup"));
    }
    let channel = resolve_channel(&*up, &args.channel).await?;
    let req = post_json("reactions.add", json!({"channel": channel, "timestamp": args.ts, "name": name}));
    match call(&*up, req).await {
        Ok(_) => Ok(json!({"channel": channel, "ts": args.ts, "emoji": name, "added": true})),
        Err(ToolError::Upstream { message, .. }) if message.starts_with("already_reacted") => {
            Ok(json!({"channel": channel, "ts": args.ts, "emoji": name, "added": false, "already_reacted": true}))
        }
        Err(e) => Err(e),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UploadFile {
    /// The channel to share the file in: id (C…, D…) or #name.
    #[schemars(length(min = 1))]
    channel: String,
    /// Absolute path of a local file to upload, e.g. /home/me/report.pdf. Give this or content.
    path: Option<String>,
    /// Text to upload as the file's contents (a snippet, log, CSV…). Give this or path.
    content: Option<String>,
    /// The file name shown in Slack, e.g. notes.txt. Defaults to the path's file name; required with content.
    filename: Option<String>,
    /// Title shown above the file.
    title: Option<String>,
    /// Message posted with the file, in Slack mrkdwn.
    initial_comment: Option<String>,
    /// Share in this thread: the ts of the thread's parent message.
    thread_ts: Option<String>,
}

/// The path and query of an upload URL, which is then sent to the integration's files host.
fn upload_path(upload_url: &str) -> Option<String> {
    let rest = upload_url.split_once("://")?.1;
    let path = &rest[rest.find('/')?..];
    let ok = path.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'#' | b'"' | b'<' | b'>' | b'\\'));
    ok.then(|| path.to_string())
}

pub(crate) const UPLOAD_FILE: ToolSpec = tool! {
    name: "slack_upload_file",
    effect: Write,
    files: Reads(&["path"]),
    results: Private,
    audience: Audience::Decide(flow::channel_audience),
    args: UploadFile,
    run: upload_file,
    keywords: ["upload", "attach", "post a file", "send file", "snippet", "attachment", "image", "document"],
    description: "Upload a file to Slack and share it in a channel or thread: a local file by absolute path, or text content given directly (a snippet), with optional title and message.",
};

async fn upload_file(up: Arc<dyn Upstream>, args: UploadFile) -> Result<Value, ToolError> {
    let (bytes, default_name) = match (&args.path, &args.content) {
        (Some(path), None) => {
            let name = path.rsplit(['/', '\\']).next().unwrap_or_default().to_string();
            (up.read_local_file(path).await?, Some(name).filter(|n| !n.is_empty()))
        }
        (None, Some(content)) => (content.clone().into_bytes(), None),
        _ => {
            return Err(invalid(
                "",
                "give exactly one of path (a local file) or content (text)",
                "expected path or content",
            ));
        }
    };
    let filename = args
        .filename
        .clone()
        .filter(|f| !f.trim().is_empty())
        .or(default_name)
        .ok_or_else(|| problem("/filename", "give a file name (e.g. notes.txt) for content"))?;
    if bytes.is_empty() {
        return Err(problem(
            if args.path.is_some() { "/path" } else { "/content" },
            "the file is empty; Slack refuses empty uploads",
        ));
    }
    let channel = resolve_channel(&*up, &args.channel).await?;
    let ticket = call(
        &*up,
        HttpRequest::post("/files.getUploadURLExternal")
            .form(vec![("filename".into(), filename.clone()), ("length".into(), bytes.len().to_string())]),
    )
    .await?;
    let (Some(upload_url), Some(file_id)) = (ticket["upload_url"].as_str(), ticket["file_id"].as_str()) else {
        return Err(ToolError::Internal("files.getUploadURLExternal returned no upload_url or file_id".into()));
    };
    let path = upload_path(upload_url).ok_or_else(|| {
        ToolError::Internal(format!("Slack returned an upload URL workbench cannot use: {upload_url}"))
    })?;
    let size = bytes.len();
    up.send(HttpRequest {
        body: Body::Raw { content_type: "application/octet-stream".into(), bytes },
        ..HttpRequest::post(path).on("files_base_url")
    })
    .await?;
    let mut file = json!({"id": file_id});
    if let Some(title) = &args.title {
        file["title"] = json!(title);
    }
    let mut body = json!({"files": [file], "channel_id": channel});
    if let Some(c) = &args.initial_comment {
        body["initial_comment"] = json!(c);
    }
    if let Some(ts) = &args.thread_ts {
        body["thread_ts"] = json!(ts);
    }
    let done = call(&*up, post_json("files.completeUploadExternal", body)).await?;
    let f = &done["files"][0];
    Ok(compact(json!({
        "file_id": f["id"].as_str().unwrap_or(file_id),
        "name": f["name"].as_str().unwrap_or(&filename),
        "title": f["title"],
        "size": size,
        "type": f["filetype"].as_str().filter(|t| !t.is_empty()),
        "permalink": f["permalink"],
        "channel": channel,
        "thread_ts": args.thread_ts,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_urls_keep_path_and_query() {
        assert_eq!(
            upload_path("https://files.slack.com/upload/v1/CwABAAAAXAoAAZu?x=1").as_deref(),
            Some("/upload/v1/CwABAAAAXAoAAZu?x=1")
        );
        assert_eq!(upload_path("nonsense"), None);
    }
}

#[cfg(test)]
mod tool_tests;
