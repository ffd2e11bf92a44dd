//! Hacker News: the official Firebase API for lists, items and users, and the community Algolia
//! API for search and whole comment trees. No authentication.

use std::sync::Arc;

use futures_util::{StreamExt, stream};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::text::html_to_text;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "hackernews",
    display_name: "Hacker News",
    version: "1.0.0",
    auth: AuthSpec::NONE,
    keywords: &["hn", "ycombinator", "y combinator", "front page", "tech news"],
    hosts: &[
        Host { key: "base_url", default_url: "https://hacker-news.firebaseio.com/v0" },
        Host { key: "algolia_base_url", default_url: "https://hn.algolia.com/api/v1" },
    ],
    curl_proxy: crate::api::CurlProxy::Off,
    rate_limit: crate::api::RateLimit::per_hour(10000),
    side: None,
    tools: &[LIST_STORIES, GET_ITEM, SEARCH_STORIES, GET_USER],
    error_message,
};

fn error_message(body: &Value) -> Option<String> {
    body.get("error").or_else(|| body.get("message")).and_then(Value::as_str).map(str::to_string)
}

const MAX_STORIES: usize = 30;
const FAN_OUT: usize = 8;

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum StoryList {
    #[default]
    Top,
    New,
    Best,
    Ask,
    Show,
    Job,
}

impl StoryList {
    fn path(self) -> &'static str {
        match self {
            StoryList::Top => "/topstories.json",
            StoryList::New => "/newstories.json",
            StoryList::Best => "/beststories.json",
            StoryList::Ask => "/askstories.json",
            StoryList::Show => "/showstories.json",
            StoryList::Job => "/jobstories.json",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListStories {
    /// Which list: top (front page), new, best, ask (Ask HN), show (Show HN) or job.
    #[serde(default)]
    list: StoryList,
    /// How many stories to return (1-30).
    #[serde_inline_default(MAX_STORIES)]
    #[schemars(range(min = 1, max = 30))]
    limit: usize,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
}

pub(crate) const LIST_STORIES: ToolSpec = tool! {
    name: "hackernews_list_stories",
    effect: Read,
    results: Public,
    args: ListStories,
    run: list_stories,
    keywords: ["top stories", "front page", "newest", "best", "ask hn", "show hn", "jobs", "trending", "headlines"],
    description: "List Hacker News stories: the front page (top), newest, best, Ask HN, Show HN or job posts, with title, link, points, author and comment count.",
};

async fn list_stories(up: Arc<dyn Upstream>, args: ListStories) -> Result<Value, ToolError> {
    let ids = up.send(HttpRequest::get(args.list.path())).await?.json()?;
    let ids: Vec<u64> = ids.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default();
    let offset = match &args.cursor {
        Some(c) => {
            c.parse::<usize>().map_err(|_| ToolError::invalid(format!("cursor '{c}' is not one this tool issued")))?
        }
        None => 0,
    };
    let limit = args.limit.clamp(1, MAX_STORIES);
    let page: Vec<u64> = ids.iter().skip(offset).take(limit).copied().collect();
    let items: Vec<Result<Value, ToolError>> = stream::iter(page)
        .map(|id| {
            let up = up.clone();
            async move { up.send(HttpRequest::get(format!("/item/{id}.json"))).await?.json() }
        })
        .buffered(FAN_OUT)
        .collect()
        .await;
    let mut stories = Vec::new();
    for item in items {
        let item = item?;
        if item.is_null() || item.get("deleted").is_some() || item.get("dead").is_some() {
            continue;
        }
        stories.push(shape_story(&item));
    }
    let next = offset + limit;
    Ok(compact(json!({
        "list": format!("{:?}", args.list).to_lowercase(),
        "stories": stories,
        "next_cursor": (next < ids.len()).then(|| next.to_string()),
    })))
}

/// The news.ycombinator.com link of an item. The Firebase API sends ids as numbers, Algolia's
/// `objectID` is a string: both print bare (a JSON `Value`'s `Display` would quote a string).
fn hn_url(id: &Value) -> Value {
    let id = match id {
        Value::Number(n) => n.to_string(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.clone(),
        _ => return Value::Null,
    };
    Value::String(format!("https://news.ycombinator.com/item?id={id}"))
}

fn unix_to_rfc3339(secs: Option<i64>) -> Value {
    let Some(secs) = secs else { return Value::Null };
    crate::time::utc_text(secs).map(Value::String).unwrap_or(Value::Null)
}

fn shape_story(item: &Value) -> Value {
    compact(json!({
        "id": item["id"],
        "type": item["type"],
        "title": item["title"],
        "url": item["url"],
        "author": item["by"],
        "points": item["score"],
        "comments": item["descendants"],
        "time": unix_to_rfc3339(item["time"].as_i64()),
        "hn_url": hn_url(&item["id"]),
    }))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetItem {
    /// The item's numeric id (from a story list, a search hit or a news.ycombinator.com/item?id= link).
    #[schemars(range(min = 1))]
    item_id: u64,
    /// Also return the comment tree.
    #[serde(default)]
    include_comments: bool,
    /// How many levels of replies to include with include_comments (1-10).
    #[serde_inline_default(3)]
    #[schemars(range(min = 1, max = 10))]
    max_depth: u32,
}

const MAX_COMMENTS: usize = 200;
const COMMENT_CHARS: usize = 2_000;

pub(crate) const GET_ITEM: ToolSpec = tool! {
    name: "hackernews_get_item",
    effect: Read,
    results: Public,
    args: GetItem,
    run: get_item,
    keywords: ["story", "comment", "poll", "discussion", "thread", "comments"],
    description: "Get one Hacker News item (story, comment, poll or job) by id, optionally with its comment tree (discussion thread) down to max_depth.",
};

async fn get_item(up: Arc<dyn Upstream>, args: GetItem) -> Result<Value, ToolError> {
    if args.include_comments {
        let tree =
            up.send(HttpRequest::get(format!("/items/{}", args.item_id)).on("algolia_base_url")).await?.json()?;
        let mut budget = MAX_COMMENTS;
        let comments = shape_children(&tree["children"], 1, args.max_depth, &mut budget);
        let mut out = compact(json!({
            "id": tree["id"],
            "type": tree["type"],
            "title": tree["title"],
            "url": tree["url"],
            "author": tree["author"],
            "points": tree["points"],
            "time": tree["created_at"],
            "text": tree["text"].as_str().map(html_to_text),
            "hn_url": hn_url(&tree["id"]),
            "comments": comments,
        }));
        if budget == 0 {
            out["truncated"] = json!(true);
        }
        return Ok(out);
    }
    let item = up.send(HttpRequest::get(format!("/item/{}.json", args.item_id))).await?.json()?;
    if item.is_null() {
        return Err(ToolError::Upstream {
            status: 404,
            message: format!("Hacker News has no item {}", args.item_id),
            retry_after: None,
        });
    }
    let (text, truncated) = match item["text"].as_str() {
        Some(html) => {
            let (t, cut) = truncate_chars(&html_to_text(html), 10_000);
            (Value::String(t), cut)
        }
        None => (Value::Null, false),
    };
    let mut out = shape_story(&item);
    let extra = compact(json!({
        "text": text,
        "parent": item["parent"],
        "reply_ids": item["kids"],
        "deleted": item["deleted"],
        "dead": item["dead"],
        "truncated": truncated.then_some(true),
    }));
    if let (Value::Object(o), Value::Object(e)) = (&mut out, extra) {
        o.extend(e);
    }
    Ok(out)
}

fn shape_children(children: &Value, depth: u32, max_depth: u32, budget: &mut usize) -> Value {
    let mut out = Vec::new();
    for child in children.as_array().into_iter().flatten() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let text = child["text"].as_str().map(html_to_text).map(|t| truncate_chars(&t, COMMENT_CHARS).0);
        let replies = if depth < max_depth {
            shape_children(&child["children"], depth + 1, max_depth, budget)
        } else {
            Value::Null
        };
        let reply_count = child["children"].as_array().map(Vec::len).unwrap_or(0);
        out.push(compact(json!({
            "id": child["id"],
            "author": child["author"],
            "time": child["created_at"],
            "text": text,
            "replies": replies.as_array().filter(|r| !r.is_empty()).map(|_| replies.clone()),
            "more_replies": (depth >= max_depth && reply_count > 0).then_some(reply_count),
        })));
    }
    Value::Array(out)
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchStories {
    /// Keywords to search for.
    query: String,
    /// Algolia tags filter, comma-separated (AND): story, comment, ask_hn, show_hn, poll, author_USERNAME, story_ID. Default: story.
    tags: Option<String>,
    /// Algolia numeric filters, comma-separated, e.g. "points>100,created_at_i>1700000000".
    numeric_filters: Option<String>,
    /// Newest first instead of by relevance.
    #[serde(default)]
    sort_by_date: bool,
    /// Hits per page (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const SEARCH_STORIES: ToolSpec = tool! {
    name: "hackernews_search_stories",
    effect: Read,
    results: Public,
    args: SearchStories,
    run: search_stories,
    keywords: ["find", "algolia", "posts", "articles", "discussions", "mentions"],
    description: "Search Hacker News stories and comments by keyword, with filters for author, type (story, comment, Ask HN, Show HN), date and points; newest first with sort_by_date.",
};

async fn search_stories(up: Arc<dyn Upstream>, args: SearchStories) -> Result<Value, ToolError> {
    let page = match &args.cursor {
        Some(c) => {
            c.parse::<u32>().map_err(|_| ToolError::invalid(format!("cursor '{c}' is not one this tool issued")))?
        }
        None => 0,
    };
    let path = if args.sort_by_date { "/search_by_date" } else { "/search" };
    let req = HttpRequest::get(path)
        .on("algolia_base_url")
        .query("query", &args.query)
        .query("tags", args.tags.as_deref().unwrap_or("story"))
        .query_opt("numericFilters", args.numeric_filters.as_deref())
        .query("hitsPerPage", args.limit.clamp(1, 100))
        .query("page", page);
    let body = up.send(req).await?.json()?;
    let hits: Vec<Value> = body["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            let text = h["story_text"]
                .as_str()
                .or(h["comment_text"].as_str())
                .map(|t| truncate_chars(&html_to_text(t), 500).0);
            compact(json!({
                "id": h["objectID"].as_str().and_then(|s| s.parse::<u64>().ok()),
                "title": h["title"].as_str().or(h["story_title"].as_str()),
                "url": h["url"],
                "author": h["author"],
                "points": h["points"],
                "comments": h["num_comments"],
                "time": h["created_at"],
                "text": text,
                "story_id": h["story_id"],
                "hn_url": hn_url(&h["objectID"]),
            }))
        })
        .collect();
    let next_page = page + 1;
    let pages = body["nbPages"].as_u64().unwrap_or(0);
    Ok(compact(json!({
        "hits": hits,
        "total": body["nbHits"],
        "next_cursor": (u64::from(next_page) < pages).then(|| next_page.to_string()),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetUser {
    /// The Hacker News username (case-sensitive).
    #[schemars(length(min = 1))]
    username: String,
}

pub(crate) const GET_USER: ToolSpec = tool! {
    name: "hackernews_get_user",
    effect: Read,
    results: Public,
    args: GetUser,
    run: get_user,
    keywords: ["profile", "karma", "account", "member"],
    description: "Get a Hacker News user's profile: karma, about text, account age and recent submissions.",
};

async fn get_user(up: Arc<dyn Upstream>, args: GetUser) -> Result<Value, ToolError> {
    let user = up.send(HttpRequest::get(format!("/user/{}.json", encode_segment(&args.username)))).await?.json()?;
    if user.is_null() {
        return Err(ToolError::Upstream {
            status: 404,
            message: format!("Hacker News has no user '{}'", args.username),
            retry_after: None,
        });
    }
    let submitted = user["submitted"].as_array();
    Ok(compact(json!({
        "username": user["id"],
        "karma": user["karma"],
        "created": unix_to_rfc3339(user["created"].as_i64()),
        "about": user["about"].as_str().map(html_to_text),
        "submission_count": submitted.map(Vec::len),
        "recent_submission_ids": submitted.map(|s| s.iter().take(10).cloned().collect::<Vec<_>>()),
        "profile_url": format!("https://news.ycombinator.com/user?id={}", args.username),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_render_as_utc() {
        assert_eq!(unix_to_rfc3339(Some(0)), json!("1970-01-01T00:00:00Z"));
        assert_eq!(unix_to_rfc3339(Some(1_700_000_000)), json!("2023-11-14T22:13:20Z"));
        assert_eq!(unix_to_rfc3339(Some(951_782_400)), json!("2000-02-29T00:00:00Z"));
    }

    #[test]
    fn item_links_carry_the_bare_id_whether_it_came_as_a_number_or_a_string() {
        let want = json!("https://news.ycombinator.com/item?id=8863");
        assert_eq!(hn_url(&json!(8863)), want);
        assert_eq!(hn_url(&json!("8863")), want, "Algolia's objectID is a string");
        assert_eq!(hn_url(&json!("8863\"><script>")), Value::Null);
        assert_eq!(hn_url(&Value::Null), Value::Null);
    }
}

#[cfg(test)]
mod tool_tests;
