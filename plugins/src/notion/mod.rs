//! Notion: the public API pinned to `Notion-Version: 2026-03-11`, with an internal integration
//! secret. Pages and their content cross the tool boundary as Markdown ([`markdown`] converts both
//! ways); database rows and page properties as simple values (a status name, a date string, a
//! list of tag names) converted with the data source's schema. Databases are containers of data
//! sources since 2025-09-03: tools take a database id and resolve its data source.

mod flow;
pub mod markdown;
mod properties;

use std::sync::Arc;

use futures_util::{StreamExt, stream};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::flow::Audience;
use crate::tool;
use markdown::{blocks_to_md, md_to_blocks, md_to_rich_text, plain_text};
use properties::{build_properties, simple_properties, title_property_name};

pub const NOTION_VERSION: &str = "2026-03-11";

pub static INTEGRATION: Integration = Integration {
    name: "notion",
    display_name: "Notion",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "Internal integration secret (ntn_…)",
            secret: true,
            required: true,
            help: "notion.so/profile/integrations → New integration → Internal Integration Secret. Then share each page or database with it: ••• → Connections → your integration",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || notion(HttpRequest::get("/users/me")), label: identity_label }),
        oauth: None,
    },
    keywords: &["notion page", "notion database", "notion doc", "knowledge base", "second brain", "meeting notes"],
    hosts: &[Host { key: "base_url", default_url: "https://api.notion.com/v1" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(3),
    side: Some(flow::side),
    tools: &[
        SEARCH_PAGES,
        GET_PAGE,
        GET_PAGE_CONTENT,
        CREATE_PAGE,
        UPDATE_PAGE,
        ADD_BLOCKS,
        GET_DATABASE,
        QUERY_DATABASE,
        CREATE_COMMENT,
    ],
    error_message,
};

const SHARE_HINT: &str =
    "Notion only shows pages and databases shared with the integration (open the page → ••• → Connections → add it).";

/// Every request carries the pinned API version.
fn notion(req: HttpRequest) -> HttpRequest {
    req.header("Notion-Version", NOTION_VERSION)
}

async fn call(up: &dyn Upstream, req: HttpRequest) -> Result<Value, ToolError> {
    up.send(notion(req)).await?.json()
}

fn patch(path: String) -> HttpRequest {
    HttpRequest::new(Method::Patch, path)
}

fn identity_label(body: &Value) -> Option<String> {
    let name = body["name"].as_str().unwrap_or("integration");
    Some(match body["bot"]["workspace_name"].as_str() {
        Some(ws) => format!("{name} @ {ws}"),
        None => name.to_string(),
    })
}

fn error_message(body: &Value) -> Option<String> {
    let message = body["message"].as_str()?;
    Some(match body["code"].as_str() {
        Some(code) => format!("{code}: {message}"),
        None => message.to_string(),
    })
}

fn problem(path: &str, message: impl Into<String>) -> ToolError {
    let message = message.into();
    ToolError::InvalidArguments { problems: vec![ArgProblem { path: path.into(), problem: message.clone() }], message }
}

/// A Notion id from a UUID (with or without dashes) or a Notion URL, as a dashed UUID.
fn notion_id(path: &str, input: &str) -> Result<String, ToolError> {
    let s = input.trim();
    let s = s.split(['?', '#']).next().unwrap_or(s).trim_end_matches('/');
    let last = s.rsplit('/').next().unwrap_or(s);
    let compact: String = last.chars().filter(|c| *c != '-').collect();
    let n = compact.chars().count();
    let tail: String = compact.chars().skip(n.saturating_sub(32)).collect();
    if n < 32 || !tail.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(problem(
            path,
            format!("'{input}' is not a Notion id (32 hex digits, with or without dashes) or a Notion page URL"),
        ));
    }
    let h = tail.to_ascii_lowercase();
    Ok(format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]))
}

fn icon_value(icon: &str) -> Value {
    let i = icon.trim();
    if i.is_empty() || i == "none" {
        Value::Null
    } else if i.starts_with("https://") || i.starts_with("http://") {
        json!({"type": "external", "external": {"url": i}})
    } else {
        json!({"type": "emoji", "emoji": i})
    }
}

fn icon_text(icon: &Value) -> Value {
    match icon["type"].as_str() {
        Some("emoji") => icon["emoji"].clone(),
        Some("external") => icon["external"]["url"].clone(),
        Some("file") => icon["file"]["url"].clone(),
        Some("custom_emoji") => icon["custom_emoji"]["name"].clone(),
        _ => Value::Null,
    }
}

// ---------------------------------------------------------------- shaping

fn shape_parent(p: &Value) -> Value {
    match p["type"].as_str() {
        Some("page_id") => json!({"type": "page", "id": p["page_id"]}),
        Some("data_source_id") => {
            compact(json!({"type": "database", "id": p["database_id"], "data_source_id": p["data_source_id"]}))
        }
        Some("database_id") => json!({"type": "database", "id": p["database_id"]}),
        Some("block_id") => json!({"type": "block", "id": p["block_id"]}),
        Some("workspace") => json!({"type": "workspace"}),
        _ => Value::Null,
    }
}

fn page_title(page: &Value) -> String {
    page["properties"]
        .as_object()
        .and_then(|props| props.values().find(|p| p["type"] == "title"))
        .map(|p| plain_text(&p["title"]))
        .unwrap_or_default()
}

fn shape_page(page: &Value) -> Value {
    let props = simple_properties(page);
    compact(json!({
        "id": page["id"],
        "title": page_title(page),
        "url": page["url"],
        "parent": shape_parent(&page["parent"]),
        "icon": icon_text(&page["icon"]),
        "in_trash": page["in_trash"].as_bool().filter(|t| *t),
        "created_time": page["created_time"],
        "last_edited_time": page["last_edited_time"],
        "properties": props.as_object().is_some_and(|m| !m.is_empty()).then_some(props),
    }))
}

fn shape_schema(properties: &Value) -> Value {
    let mut out = Map::new();
    for (name, p) in properties.as_object().into_iter().flatten() {
        let t = p["type"].as_str().unwrap_or_default();
        let options = |key: &str| -> Value {
            p[t][key].as_array().map(|o| o.iter().map(|x| x["name"].clone()).collect()).unwrap_or(Value::Null)
        };
        out.insert(
            name.clone(),
            compact(json!({
                "type": t,
                "options": if matches!(t, "select" | "multi_select" | "status") { options("options") } else { Value::Null },
                "groups": if t == "status" { options("groups") } else { Value::Null },
                "format": if t == "number" { p["number"]["format"].clone() } else { Value::Null },
                "expression": if t == "formula" { p["formula"]["expression"].clone() } else { Value::Null },
                "related_data_source_id": if t == "relation" { p["relation"]["data_source_id"].clone() } else { Value::Null },
            })),
        );
    }
    Value::Object(out)
}

// ---------------------------------------------------------------- data sources

/// How the agent picks one of several data sources: the argument to set, and how.
struct Pick {
    path: &'static str,
    how: &'static str,
}

const PICK_FOR_QUERY: Pick = Pick { path: "/data_source_id", how: "pass one as data_source_id" };
const PICK_FOR_CREATE: Pick =
    Pick { path: "/parent_type", how: "pass parent_type \"data_source\" with one of them as parent_id" };

/// The data source of a database: its only one, or an error naming them when there are several.
async fn resolve_data_source(up: &dyn Upstream, database_id: &str, pick: Pick) -> Result<String, ToolError> {
    let db = call(up, HttpRequest::get(format!("/databases/{}", encode_segment(database_id)))).await?;
    let sources = db["data_sources"].as_array().cloned().unwrap_or_default();
    match sources.as_slice() {
        [one] => one["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ToolError::Internal("Notion listed a data source without an id".into())),
        [] => Err(ToolError::Upstream {
            status: 404,
            message: format!("database {database_id} has no data sources this integration can see. {SHARE_HINT}"),
            retry_after: None,
        }),
        many => {
            let list: Vec<String> = many
                .iter()
                .map(|s| format!("{} ({})", s["name"].as_str().unwrap_or("untitled"), s["id"].as_str().unwrap_or("")))
                .collect();
            Err(problem(
                pick.path,
                format!("this database has {} data sources ({}); {}", many.len(), list.join(", "), pick.how),
            ))
        }
    }
}

async fn get_data_source(up: &dyn Upstream, id: &str) -> Result<Value, ToolError> {
    call(up, HttpRequest::get(format!("/data_sources/{}", encode_segment(id)))).await
}

// ---------------------------------------------------------------- search and pages

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ObjectFilter {
    Page,
    Database,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SearchSort {
    #[default]
    Relevance,
    LastEditedNewest,
    LastEditedOldest,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchPages {
    /// Words in the page or database title; leave out to list everything shared with the integration.
    query: Option<String>,
    /// Only pages, or only databases (their data sources).
    filter: Option<ObjectFilter>,
    /// Order: relevance (default), last_edited_newest or last_edited_oldest.
    #[serde(default)]
    sort: SearchSort,
    /// Results per page (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const SEARCH_PAGES: ToolSpec = tool! {
    name: "notion_search_pages",
    effect: Read,
    results: Private,
    args: SearchPages,
    run: search_pages,
    keywords: ["find page", "search", "look up", "docs", "notes", "wiki", "find database", "recent pages", "find a page by title", "search notion"],
    description: "Search Notion pages and databases shared with the integration by title (or list the most recently edited ones); returns ids, titles, URLs and parents.",
};

async fn search_pages(up: Arc<dyn Upstream>, args: SearchPages) -> Result<Value, ToolError> {
    let mut body = json!({"page_size": args.limit.clamp(1, 100)});
    if let Some(q) = args.query.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        body["query"] = json!(q);
    }
    if let Some(f) = args.filter {
        let value = match f {
            ObjectFilter::Page => "page",
            ObjectFilter::Database => "data_source",
        };
        body["filter"] = json!({"property": "object", "value": value});
    }
    match args.sort {
        SearchSort::Relevance => {}
        SearchSort::LastEditedNewest => {
            body["sort"] = json!({"direction": "descending", "timestamp": "last_edited_time"})
        }
        SearchSort::LastEditedOldest => {
            body["sort"] = json!({"direction": "ascending", "timestamp": "last_edited_time"})
        }
    }
    if let Some(c) = &args.cursor {
        body["start_cursor"] = json!(c);
    }
    let r = call(&*up, HttpRequest::post("/search").json(body)).await?;
    let results: Vec<Value> = r["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| match o["object"].as_str() {
            Some("data_source") => compact(json!({
                "object": "database",
                "id": o["parent"]["database_id"],
                "data_source_id": o["id"],
                "title": plain_text(&o["title"]),
                "url": o["url"],
                "last_edited_time": o["last_edited_time"],
                "in_trash": o["in_trash"].as_bool().filter(|t| *t),
            })),
            _ => compact(json!({
                "object": "page",
                "id": o["id"],
                "title": page_title(o),
                "url": o["url"],
                "parent": shape_parent(&o["parent"]),
                "last_edited_time": o["last_edited_time"],
                "in_trash": o["in_trash"].as_bool().filter(|t| *t),
            })),
        })
        .collect();
    let empty = results.is_empty();
    Ok(compact(json!({
        "results": results,
        "next_cursor": r["next_cursor"].as_str().filter(|_| r["has_more"].as_bool() == Some(true)),
        "note": empty.then_some(SHARE_HINT),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetPage {
    /// The page id (or database row id), or the page's Notion URL.
    #[schemars(length(min = 1))]
    page_id: String,
    /// Also return Notion's full page object under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_PAGE: ToolSpec = tool! {
    name: "notion_get_page",
    effect: Read,
    results: Private,
    args: GetPage,
    run: get_page,
    keywords: ["page properties", "metadata", "row", "status", "fields", "page info"],
    description: "Get a Notion page's title, URL, parent, icon, timestamps and properties (status, dates, tags, people… as simple values); for its text use notion_get_page_content.",
};

async fn get_page(up: Arc<dyn Upstream>, args: GetPage) -> Result<Value, ToolError> {
    let id = notion_id("/page_id", &args.page_id)?;
    let page = call(&*up, HttpRequest::get(format!("/pages/{}", encode_segment(&id)))).await?;
    Ok(with_raw(shape_page(&page), args.include_raw, &page))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetPageContent {
    /// The page id (or any block id), or the page's Notion URL.
    #[schemars(length(min = 1))]
    page_id: String,
    /// How many levels of nested blocks (list children, toggles, columns) to read below the top level (0-5).
    #[serde_inline_default(3)]
    #[schemars(range(min = 0, max = 5))]
    max_depth: u32,
    /// Top-level blocks per call (1-100); long pages continue with next_cursor.
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Longest Markdown to return (1,000-100,000 characters); longer content is cut and marked truncated.
    #[serde_inline_default(20_000)]
    #[schemars(range(min = 1000, max = 100000))]
    max_chars: usize,
}

/// Most blocks one call reads, nested ones included (each 100 costs a request).
const MAX_BLOCKS: usize = 1_000;

async fn children_page(up: &dyn Upstream, id: &str, size: u32, cursor: Option<&str>) -> Result<Value, ToolError> {
    call(
        up,
        HttpRequest::get(format!("/blocks/{}/children", encode_segment(id)))
            .query("page_size", size)
            .query_opt("start_cursor", cursor),
    )
    .await
}

/// All children of one block (following next_cursor), up to `cap` blocks.
async fn all_children(up: Arc<dyn Upstream>, id: String, cap: usize) -> Result<(Vec<Value>, bool), ToolError> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = children_page(&*up, &id, 100, cursor.as_deref()).await?;
        out.extend(page["results"].as_array().cloned().unwrap_or_default());
        let more = page["has_more"].as_bool() == Some(true);
        cursor = page["next_cursor"].as_str().map(str::to_string);
        if !more || cursor.is_none() {
            return Ok((out, false));
        }
        if out.len() >= cap {
            return Ok((out, true));
        }
    }
}

fn expandable(b: &Value) -> bool {
    b["has_children"].as_bool() == Some(true) && !matches!(b["type"].as_str(), Some("child_page" | "child_database"))
}

fn at_path<'a>(root: &'a mut [Value], path: &[usize]) -> &'a mut Value {
    let mut cur = &mut root[path[0]];
    for &i in &path[1..] {
        cur = &mut cur["children"][i];
    }
    cur
}

pub(crate) const GET_PAGE_CONTENT: ToolSpec = tool! {
    name: "notion_get_page_content",
    effect: Read,
    results: Private,
    args: GetPageContent,
    run: get_page_content,
    keywords: ["read page", "page text", "document", "body", "content", "markdown", "notes", "wiki page", "doc", "page content", "what the page says"],
    description: "Read a Notion page's content (its blocks: headings, lists, to-dos, tables, code…) as Markdown, including nested blocks down to max_depth.",
};

async fn get_page_content(up: Arc<dyn Upstream>, args: GetPageContent) -> Result<Value, ToolError> {
    let id = notion_id("/page_id", &args.page_id)?;
    let first = children_page(&*up, &id, args.limit.clamp(1, 100), args.cursor.as_deref()).await?;
    let mut top = first["results"].as_array().cloned().unwrap_or_default();
    let mut fetched = top.len();
    let mut truncated = false;
    let mut frontier: Vec<Vec<usize>> = (0..top.len()).filter(|i| expandable(&top[*i])).map(|i| vec![i]).collect();
    for _ in 0..args.max_depth {
        if frontier.is_empty() {
            break;
        }
        let jobs: Vec<(Vec<usize>, String)> = frontier
            .iter()
            .map(|p| (p.clone(), at_path(&mut top, p)["id"].as_str().unwrap_or_default().to_string()))
            .collect();
        let budget = MAX_BLOCKS.saturating_sub(fetched);
        if budget == 0 {
            truncated = true;
            break;
        }
        let results: Vec<Result<(Vec<Value>, bool), ToolError>> = stream::iter(jobs.iter().cloned())
            .map(|(_, bid)| all_children(up.clone(), bid, budget))
            .buffered(3)
            .collect()
            .await;
        let mut next = Vec::new();
        for ((path, _), res) in jobs.into_iter().zip(results) {
            let (kids, cut) = res?;
            truncated |= cut;
            fetched += kids.len();
            for (i, k) in kids.iter().enumerate() {
                if expandable(k) {
                    let mut p = path.clone();
                    p.push(i);
                    next.push(p);
                }
            }
            at_path(&mut top, &path)["children"] = Value::Array(kids);
        }
        frontier = next;
        if fetched >= MAX_BLOCKS {
            truncated |= !frontier.is_empty();
            break;
        }
    }
    let unexpanded = frontier.len();
    let md = blocks_to_md(&top);
    let (md, cut) = truncate_chars(&md, args.max_chars);
    let empty = top.is_empty() && args.cursor.is_none();
    Ok(compact(json!({
        "page_id": id,
        "markdown": md,
        "block_count": fetched,
        "truncated": (cut || truncated).then_some(true),
        "nested_blocks_not_read": (unexpanded > 0).then_some(unexpanded),
        "next_cursor": first["next_cursor"].as_str().filter(|_| first["has_more"].as_bool() == Some(true)),
        "note": empty.then_some("The page has no content blocks (its properties are in notion_get_page)."),
    })))
}

// ---------------------------------------------------------------- writing

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum ParentType {
    #[default]
    Page,
    Database,
    DataSource,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePage {
    /// Where the new page goes: a page id (sub-page) or a database id (new row), or its Notion URL.
    #[schemars(length(min = 1))]
    parent_id: String,
    /// What parent_id is: page (default), database, or data_source (one table of a multi-source database).
    #[serde(default)]
    parent_type: ParentType,
    /// The page title (the database's title column for a row).
    #[schemars(length(min = 1))]
    title: String,
    /// Page body as Markdown: # headings, paragraphs, - lists, 1. lists, - [ ] to-dos, > quotes, ``` code, tables, ![image](https://…).
    content: Option<String>,
    /// Database rows only: property values by column name, as simple values, e.g. {"Status": "In progress", "Due": "2026-05-01", "Tags": ["a", "b"], "Estimate": 3, "Done": false}.
    properties: Option<Map<String, Value>>,
    /// An emoji (e.g. 📝) or an image URL for the page icon.
    icon: Option<String>,
}

/// Most blocks one create/append request may carry.
const BLOCKS_PER_REQUEST: usize = 100;

/// Appends blocks in requests of up to 100, each batch after the previous one. Returns the ids
/// of the top-level blocks created.
async fn append_blocks(
    up: &dyn Upstream,
    block_id: &str,
    blocks: &[Value],
    mut position: Option<Value>,
) -> Result<Vec<String>, ToolError> {
    let mut ids = Vec::new();
    for chunk in blocks.chunks(BLOCKS_PER_REQUEST) {
        let mut body = json!({"children": chunk});
        if let Some(p) = &position {
            body["position"] = p.clone();
        }
        let r = call(up, patch(format!("/blocks/{}/children", encode_segment(block_id))).json(body)).await?;
        let created: Vec<String> = r["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["id"].as_str().map(str::to_string))
            .collect();
        if position.is_some()
            && let Some(last) = created.last()
        {
            position = Some(json!({"type": "after_block", "after_block": {"id": last}}));
        }
        ids.extend(created);
    }
    Ok(ids)
}

pub(crate) const CREATE_PAGE: ToolSpec = tool! {
    name: "notion_create_page",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::create_audience),
    args: CreatePage,
    run: create_page,
    keywords: ["new page", "write", "create doc", "add note", "add row", "new entry", "database item", "document"],
    description: "Create a Notion page under a parent page, or a new row (entry) in a database, with a title, Markdown content and property values (status, dates, tags, people…).",
};

async fn create_page(up: Arc<dyn Upstream>, args: CreatePage) -> Result<Value, ToolError> {
    let parent_id = notion_id("/parent_id", &args.parent_id)?;
    let blocks = args.content.as_deref().map(md_to_blocks).unwrap_or_default();
    let title_rt = md_to_rich_text(&args.title);
    let (parent, properties) = match args.parent_type {
        ParentType::Page => {
            if args.properties.as_ref().is_some_and(|p| !p.is_empty()) {
                return Err(problem(
                    "/properties",
                    "a page under a page has only a title; properties are for rows of a database (parent_type database)",
                ));
            }
            let mut props = Map::new();
            props.insert("title".into(), json!({"title": title_rt}));
            (json!({"type": "page_id", "page_id": parent_id}), props)
        }
        ParentType::Database | ParentType::DataSource => {
            let ds_id = if args.parent_type == ParentType::Database {
                resolve_data_source(&*up, &parent_id, PICK_FOR_CREATE).await?
            } else {
                parent_id.clone()
            };
            let ds = get_data_source(&*up, &ds_id).await?;
            let schema = &ds["properties"];
            let mut props = build_properties(schema, args.properties.as_ref().unwrap_or(&Map::new()))?;
            let title_name = title_property_name(schema).unwrap_or_else(|| "title".into());
            props.insert(title_name, json!({"title": title_rt}));
            (json!({"type": "data_source_id", "data_source_id": ds_id}), props)
        }
    };
    let mut body = json!({"parent": parent, "properties": properties});
    if let Some(icon) = args.icon.as_deref().map(icon_value).filter(|i| !i.is_null()) {
        body["icon"] = icon;
    }
    let (first, rest) = blocks.split_at(blocks.len().min(BLOCKS_PER_REQUEST));
    if !first.is_empty() {
        body["children"] = json!(first);
    }
    let page = call(&*up, HttpRequest::post("/pages").json(body)).await?;
    let page_id = page["id"].as_str().unwrap_or_default().to_string();
    if !rest.is_empty() {
        append_blocks(&*up, &page_id, rest, None).await?;
    }
    let mut out = shape_page(&page);
    out["blocks_added"] = json!(blocks.len());
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdatePage {
    /// The page (or database row) id, or its Notion URL.
    #[schemars(length(min = 1))]
    page_id: String,
    /// A new title.
    #[schemars(length(min = 1))]
    title: Option<String>,
    /// Property values by name, as simple values, e.g. {"Status": "Done", "Due": "2026-05-01", "Tags": ["urgent"], "Owner": ["<user id>"]}; null clears a select, date, number or URL.
    properties: Option<Map<String, Value>>,
    /// true moves the page to the trash (delete), false restores it.
    in_trash: Option<bool>,
    /// A new icon: an emoji or an image URL; "none" removes it.
    icon: Option<String>,
}

pub(crate) const UPDATE_PAGE: ToolSpec = tool! {
    name: "notion_update_page",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::page_audience),
    args: UpdatePage,
    run: update_page,
    keywords: ["edit properties", "set status", "rename", "change", "archive", "trash", "delete page", "restore", "update row", "update page", "set property"],
    description: "Update a Notion page or database row: rename it, set property values (status, dates, tags…), change its icon, or move it to the trash (in_trash) and restore it.",
};

async fn update_page(up: Arc<dyn Upstream>, args: UpdatePage) -> Result<Value, ToolError> {
    let id = notion_id("/page_id", &args.page_id)?;
    let path = format!("/pages/{}", encode_segment(&id));
    let mut body = Map::new();
    if args.title.is_some() || args.properties.as_ref().is_some_and(|p| !p.is_empty()) {
        // The page's own properties say each one's type.
        let page = call(&*up, HttpRequest::get(path.clone())).await?;
        let schema = &page["properties"];
        let mut props = build_properties(schema, args.properties.as_ref().unwrap_or(&Map::new()))?;
        if let Some(title) = &args.title {
            let name = title_property_name(schema).unwrap_or_else(|| "title".into());
            props.insert(name, json!({"title": md_to_rich_text(title)}));
        }
        body.insert("properties".into(), Value::Object(props));
    }
    if let Some(t) = args.in_trash {
        body.insert("in_trash".into(), json!(t));
    }
    if let Some(icon) = &args.icon {
        body.insert("icon".into(), icon_value(icon));
    }
    if body.is_empty() {
        return Err(problem("", "nothing to change: give title, properties, in_trash or icon"));
    }
    let page = call(&*up, patch(path).json(Value::Object(body))).await?;
    Ok(shape_page(&page))
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Position {
    #[default]
    End,
    Start,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddBlocks {
    /// The page (or a block that can hold children, e.g. a toggle), by id or Notion URL.
    #[schemars(length(min = 1))]
    page_id: String,
    /// The content to add, as Markdown (headings, paragraphs, lists, to-dos, code, tables, quotes).
    #[schemars(length(min = 1))]
    content: String,
    /// Where: end (default) or start of the page. Ignored when after_block_id is given.
    #[serde(default)]
    position: Position,
    /// Insert right after this block (a block id from the page).
    after_block_id: Option<String>,
}

pub(crate) const ADD_BLOCKS: ToolSpec = tool! {
    name: "notion_add_blocks",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::page_audience),
    args: AddBlocks,
    run: add_blocks,
    keywords: ["append", "add content", "write to page", "insert", "add paragraph", "add to-do", "add text", "edit page"],
    description: "Add content to a Notion page from Markdown (headings, paragraphs, lists, to-dos, code, tables, quotes): at the end, at the start, or after a given block.",
};

async fn add_blocks(up: Arc<dyn Upstream>, args: AddBlocks) -> Result<Value, ToolError> {
    let id = notion_id("/page_id", &args.page_id)?;
    let blocks = md_to_blocks(&args.content);
    if blocks.is_empty() {
        return Err(problem("/content", "the Markdown has no content"));
    }
    let position = match (&args.after_block_id, args.position) {
        (Some(after), _) => {
            let after = notion_id("/after_block_id", after)?;
            Some(json!({"type": "after_block", "after_block": {"id": after}}))
        }
        (None, Position::Start) => Some(json!({"type": "start"})),
        (None, Position::End) => None,
    };
    let ids = append_blocks(&*up, &id, &blocks, position).await?;
    Ok(compact(json!({
        "page_id": id,
        "blocks_added": ids.len(),
        "first_block_id": ids.first(),
        "last_block_id": ids.last(),
    })))
}

// ---------------------------------------------------------------- databases

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetDatabase {
    /// The database id, or its Notion URL.
    #[schemars(length(min = 1))]
    database_id: String,
    /// Also return Notion's database and data source objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_DATABASE: ToolSpec = tool! {
    name: "notion_get_database",
    effect: Read,
    results: Private,
    args: GetDatabase,
    run: get_database,
    keywords: ["schema", "columns", "fields", "properties", "select options", "table structure", "data source"],
    description: "Get a Notion database's schema: its data sources and their properties (columns) with types and the options of select, multi-select and status fields.",
};

async fn get_database(up: Arc<dyn Upstream>, args: GetDatabase) -> Result<Value, ToolError> {
    let id = notion_id("/database_id", &args.database_id)?;
    let db = call(&*up, HttpRequest::get(format!("/databases/{}", encode_segment(&id)))).await?;
    let source_ids: Vec<String> = db["data_sources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["id"].as_str().map(str::to_string))
        .collect();
    let sources: Vec<Result<Value, ToolError>> = stream::iter(source_ids)
        .map(|ds| {
            let up = up.clone();
            async move { get_data_source(&*up, &ds).await }
        })
        .buffered(3)
        .collect()
        .await;
    let sources = sources.into_iter().collect::<Result<Vec<_>, _>>()?;
    let shaped: Vec<Value> = sources
        .iter()
        .map(|s| {
            compact(json!({
                "id": s["id"],
                "name": plain_text(&s["title"]),
                "properties": shape_schema(&s["properties"]),
            }))
        })
        .collect();
    let out = compact(json!({
        "id": db["id"],
        "title": plain_text(&db["title"]),
        "description": Some(plain_text(&db["description"])).filter(|d| !d.is_empty()),
        "url": db["url"],
        "parent": shape_parent(&db["parent"]),
        "is_inline": db["is_inline"].as_bool().filter(|i| *i),
        "in_trash": db["in_trash"].as_bool().filter(|t| *t),
        "data_sources": shaped,
    }));
    Ok(with_raw(out, args.include_raw, &json!({"database": db, "data_sources": sources})))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueryDatabase {
    /// The database id (or Notion URL); its data source is looked up. Give this or data_source_id.
    database_id: Option<String>,
    /// A data source id, for databases with several sources. Give this or database_id.
    data_source_id: Option<String>,
    /// A Notion filter object, e.g. {"property": "Status", "status": {"equals": "Done"}} or {"and": [{"property": "Due", "date": {"before": "2026-06-01"}}, …]}.
    filter: Option<Map<String, Value>>,
    /// Notion sorts, e.g. [{"property": "Due", "direction": "ascending"}] or [{"timestamp": "last_edited_time", "direction": "descending"}].
    sorts: Option<Vec<Map<String, Value>>>,
    /// Rows per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// Also return Notion's full page objects under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const QUERY_DATABASE: ToolSpec = tool! {
    name: "notion_query_database",
    effect: Read,
    results: Private,
    args: QueryDatabase,
    run: query_database,
    keywords: ["rows", "records", "entries", "filter", "table", "list items", "tasks", "query", "sort"],
    description: "List the rows (entries) of a Notion database, optionally filtered and sorted with Notion filter objects; properties come back as simple values.",
};

async fn query_database(up: Arc<dyn Upstream>, args: QueryDatabase) -> Result<Value, ToolError> {
    let ds = match (&args.database_id, &args.data_source_id) {
        (Some(db), None) => resolve_data_source(&*up, &notion_id("/database_id", db)?, PICK_FOR_QUERY).await?,
        (None, Some(ds)) => notion_id("/data_source_id", ds)?,
        _ => {
            return Err(invalid(
                "",
                "give exactly one of database_id or data_source_id",
                "expected database_id or data_source_id",
            ));
        }
    };
    let mut body = json!({"page_size": args.limit.clamp(1, 100)});
    if let Some(f) = &args.filter {
        body["filter"] = Value::Object(f.clone());
    }
    if let Some(s) = &args.sorts {
        body["sorts"] = json!(s);
    }
    if let Some(c) = &args.cursor {
        body["start_cursor"] = json!(c);
    }
    let r = call(&*up, HttpRequest::post(format!("/data_sources/{}/query", encode_segment(&ds))).json(body)).await?;
    let rows: Vec<Value> = r["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            compact(json!({
                "id": p["id"],
                "title": page_title(p),
                "url": p["url"],
                "properties": simple_properties(p),
                "last_edited_time": p["last_edited_time"],
                "in_trash": p["in_trash"].as_bool().filter(|t| *t),
            }))
        })
        .collect();
    let out = compact(json!({
        "data_source_id": ds,
        "rows": rows,
        "next_cursor": r["next_cursor"].as_str().filter(|_| r["has_more"].as_bool() == Some(true)),
    }));
    Ok(with_raw(out, args.include_raw, &r["results"]))
}

// ---------------------------------------------------------------- comments

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// Comment on this page (id or Notion URL). Give this or discussion_id.
    page_id: Option<String>,
    /// Reply in this existing discussion thread. Give this or page_id.
    discussion_id: Option<String>,
    /// The comment text; inline Markdown (**bold**, *italic*, `code`, [links](https://…)) is kept.
    #[schemars(length(min = 1, max = 2000))]
    text: String,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "notion_create_comment",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::page_audience),
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "feedback", "note on page", "discussion", "mention"],
    description: "Add a comment to a Notion page, or reply in an existing discussion thread (discussion_id); text may use inline Markdown (bold, italic, code, links).",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let rich_text = md_to_rich_text(&args.text);
    let body = match (&args.page_id, &args.discussion_id) {
        (Some(page), None) => {
            json!({"parent": {"page_id": notion_id("/page_id", page)?}, "rich_text": rich_text})
        }
        (None, Some(d)) if !d.trim().is_empty() => json!({"discussion_id": d.trim(), "rich_text": rich_text}),
        _ => {
            return Err(invalid(
                "",
                "give exactly one of page_id or discussion_id",
                "expected page_id or discussion_id",
            ));
        }
    };
    let c = call(&*up, HttpRequest::post("/comments").json(body)).await?;
    Ok(compact(json!({
        "id": c["id"],
        "discussion_id": c["discussion_id"],
        "page_id": c["parent"]["page_id"],
        "created_time": c["created_time"],
        "text": plain_text(&c["rich_text"]),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_uuids_and_urls() {
        let want = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
        assert_eq!(notion_id("/p", want).unwrap(), want);
        assert_eq!(notion_id("/p", "1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d").unwrap(), want);
        assert_eq!(
            notion_id("/p", "https://www.notion.so/acme/Road-map-1a2b3c4d5e6f4a7b8c9d0e1f2a3b4c5d?pvs=4").unwrap(),
            want
        );
        assert_eq!(notion_id("/p", "https://www.notion.so/1A2B3C4D5E6F4A7B8C9D0E1F2A3B4C5D").unwrap(), want);
        assert!(notion_id("/p", "Road map").is_err());
        assert!(notion_id("/p", "1a2b3c4d").is_err());
    }
}

#[cfg(test)]
mod tool_tests;
