//! Confluence Cloud: wiki pages, spaces, comments and CQL search.
//!
//! Everything lives under the site's `/wiki` prefix (`https://{site}/wiki`). Pages, spaces and
//! comments use REST v2 (`/api/v2`, numeric space ids, `_links.next` cursors); CQL search exists only
//! in v1 (`/rest/api/search`). Page bodies are storage XHTML on the wire and Markdown at the tool
//! boundary ([`storage`]). Auth is the same Basic `email:token` as Jira.

mod flow;
pub mod storage;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::text::html_to_text;
use crate::{atlassian, tool};

pub static INTEGRATION: Integration = Integration {
    name: "confluence",
    display_name: "Confluence Cloud",
    version: "1.0.0",
    auth: atlassian::auth(
        &[
            atlassian::site(
                "Confluence site",
                "Your Atlassian site's host name, e.g. acme.atlassian.net (the same site as Jira)",
            ),
            atlassian::EMAIL,
            atlassian::token(
                "id.atlassian.com/manage-profile/security/api-tokens — the same token works for Jira; tokens expire after 1–365 days",
            ),
        ],
        Identity { request: || HttpRequest::get("/rest/api/user/current"), label: current_user_label },
    ),
    keywords: &[
        "confluence",
        "wiki",
        "cql",
        "space",
        "page",
        "docs",
        "documentation",
        "knowledge base",
        "runbook",
        "atlassian",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://{site}/wiki" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(10),
    side: Some(flow::side),
    tools: &[SEARCH_PAGES, GET_PAGE, LIST_PAGES, CREATE_PAGE, UPDATE_PAGE, LIST_SPACES, CREATE_COMMENT],
    error_message,
};

fn current_user_label(body: &Value) -> Option<String> {
    if body["type"] == "anonymous" {
        return None;
    }
    body["email"]
        .as_str()
        .or(body["displayName"].as_str())
        .or(body["publicName"].as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// v2 `{errors: [{status, code, title, detail}]}`, v1 `{statusCode, message}`, or Jira-style.
fn error_message(body: &Value) -> Option<String> {
    if let Some(errors) = body["errors"].as_array() {
        let parts: Vec<String> = errors
            .iter()
            .filter_map(|e| {
                let title = e["title"].as_str().or(e["message"].as_str())?;
                Some(match e["detail"].as_str().filter(|d| !d.is_empty()) {
                    Some(d) => format!("{title}: {d}"),
                    None => title.to_string(),
                })
            })
            .collect();
        if !parts.is_empty() {
            return Some(parts.join("; "));
        }
    }
    if let Some(m) = body["message"].as_str() {
        return Some(m.to_string());
    }
    let msgs: Vec<&str> = body["errorMessages"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}

const BODY_CHARS: usize = 10_000;
const EXCERPT_CHARS: usize = 300;

/// The `cursor` parameter of a `_links.next` link.
fn next_cursor(body: &Value) -> Option<String> {
    let next = body["_links"]["next"].as_str()?;
    let query = next.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "cursor" && !v.is_empty()).then(|| crate::codec::form_decode(v))
    })
}

/// The wiki's base URL (`https://acme.atlassian.net/wiki`) for building links.
fn wiki_base(body: &Value, up: &dyn Upstream) -> Option<String> {
    if let Some(b) = body["_links"]["base"].as_str() {
        return Some(b.trim_end_matches('/').to_string());
    }
    up.field("site").map(|s| {
        let host = s.trim().trim_start_matches("https://").trim_start_matches("http://").trim_end_matches('/');
        format!("https://{host}/wiki")
    })
}

fn link(base: &Option<String>, path: &Value) -> Value {
    match (base, path.as_str()) {
        (Some(b), Some(p)) => json!(format!("{b}{p}")),
        _ => Value::Null,
    }
}

fn page_link(base: &Option<String>, page: &Value) -> Value {
    let l = link(base, &page["_links"]["webui"]);
    if !l.is_null() {
        return l;
    }
    match (base, page["id"].as_str()) {
        (Some(b), Some(id)) => json!(format!("{b}/pages/viewpage.action?pageId={id}")),
        _ => Value::Null,
    }
}

fn check_id(path: &str, id: &str) -> Result<(), ToolError> {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(invalid(path, format!("'{id}' is not a Confluence id (digits, e.g. 123456)"), "expected a numeric id"))
    }
}

/// A numeric space id, looking a space key up when that is what was given.
async fn resolve_space_id(up: &dyn Upstream, space: &str) -> Result<String, ToolError> {
    let space = space.trim();
    if !space.is_empty() && space.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(space.to_string());
    }
    let body = up.send(HttpRequest::get("/api/v2/spaces").query("keys", space)).await?.json()?;
    body["results"]
        .as_array()
        .and_then(|r| r.iter().find(|s| s["key"].as_str().is_some_and(|k| k.eq_ignore_ascii_case(space))))
        .and_then(|s| s["id"].as_str().map(str::to_string))
        .ok_or_else(|| {
            invalid(
                "/space_id",
                format!("no space with key '{space}' is visible to you; see confluence_list_spaces"),
                "unknown space",
            )
        })
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum BodyFormat {
    #[default]
    Markdown,
    Storage,
}

fn storage_body(text: &str, format: BodyFormat) -> String {
    match format {
        BodyFormat::Markdown => storage::from_markdown(text),
        BodyFormat::Storage => text.to_string(),
    }
}

// ---------------------------------------------------------------- search

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ContentType {
    #[default]
    Any,
    Page,
    Blogpost,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchPages {
    /// Words to search for in titles and page text (full-text); give this or cql.
    query: Option<String>,
    /// A raw CQL query instead of words, e.g. `space = ENG AND label = runbook ORDER BY lastmodified DESC`.
    cql: Option<String>,
    /// Only search this space (its key, e.g. ENG); with query only.
    space_key: Option<String>,
    /// Which content to search with query: any (pages and blog posts), page or blogpost.
    #[serde(default)]
    content_type: ContentType,
    /// Results per page (1-50).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor (repeat the same query).
    cursor: Option<String>,
}

fn cql_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn build_cql(args: &SearchPages) -> Result<String, ToolError> {
    match (args.query.as_deref().map(str::trim), args.cql.as_deref().map(str::trim)) {
        (Some(q), None) if !q.is_empty() => {
            let types = match args.content_type {
                ContentType::Any => "type in (page, blogpost)",
                ContentType::Page => "type = page",
                ContentType::Blogpost => "type = blogpost",
            };
            let mut cql = format!("{types} AND text ~ {}", cql_string(q));
            if let Some(space) = args.space_key.as_deref().filter(|s| !s.trim().is_empty()) {
                cql.push_str(&format!(" AND space = {}", cql_string(space.trim())));
            }
            Ok(cql)
        }
        (None, Some(c)) if !c.is_empty() => {
            if args.space_key.is_some() {
                return Err(invalid(
                    "/space_key",
                    "space_key only applies to query; put `space = KEY` in the CQL instead",
                    "not used with cql",
                ));
            }
            Ok(c.to_string())
        }
        _ => Err(invalid("", "give either query (words) or cql, not both and not neither", "expected query or cql")),
    }
}

fn clean_excerpt(excerpt: &str) -> String {
    let plain = html_to_text(&excerpt.replace("@@@hl@@@", "").replace("@@@endhl@@@", ""));
    let folded = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&folded, EXCERPT_CHARS).0
}

pub(crate) const SEARCH_PAGES: ToolSpec = tool! {
    name: "confluence_search_pages",
    effect: Read,
    results: Private,
    args: SearchPages,
    run: search_pages,
    keywords: ["find page", "wiki search", "cql", "docs", "documentation", "knowledge base", "blog post", "search confluence", "find doc", "find runbook", "runbook", "how-to"],
    description: "Search Confluence wiki pages and blog posts (docs, runbooks, how-tos, specs) by words (full-text) or with a CQL query, optionally within one space; returns title, space, excerpt and link.",
};

async fn search_pages(up: Arc<dyn Upstream>, args: SearchPages) -> Result<Value, ToolError> {
    let cql = build_cql(&args)?;
    let req = HttpRequest::get("/rest/api/search")
        .query("cql", &cql)
        .query("limit", args.limit.clamp(1, 50))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let base = wiki_base(&body, &*up);
    let results: Vec<Value> = body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let content = &r["content"];
            compact(json!({
                "id": content["id"],
                "type": content["type"].as_str().or(r["entityType"].as_str()),
                "title": r["title"].as_str().or(content["title"].as_str()),
                "space": r["resultGlobalContainer"]["title"],
                "excerpt": r["excerpt"].as_str().map(clean_excerpt).filter(|e| !e.is_empty()),
                "last_modified": r["lastModified"],
                "url": link(&base, &r["url"]),
            }))
        })
        .collect();
    Ok(compact(json!({
        "cql": cql,
        "results": results,
        "total": body["totalSize"],
        "next_cursor": next_cursor(&body),
    })))
}

// ---------------------------------------------------------------- pages

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetPage {
    /// The page's numeric id (from search, a list, or the page URL .../pages/<id>/...).
    #[schemars(length(min = 1))]
    page_id: String,
    /// Body as markdown (default) or storage (Confluence's XHTML, e.g. to edit macros exactly).
    #[serde(default)]
    body_format: BodyFormat,
    /// Character budget for the body; longer bodies are cut and `truncated` is set.
    #[serde_inline_default(BODY_CHARS)]
    #[schemars(range(min = 100, max = 200000))]
    max_chars: usize,
    /// Also return Confluence's full response as `raw`.
    #[serde(default)]
    include_raw: bool,
}

async fn fetch_page(up: &dyn Upstream, page_id: &str) -> Result<Value, ToolError> {
    let req = HttpRequest::get(format!("/api/v2/pages/{}", encode_segment(page_id))).query("body-format", "storage");
    up.send(req).await?.json()
}

pub(crate) const GET_PAGE: ToolSpec = tool! {
    name: "confluence_get_page",
    effect: Read,
    results: Private,
    args: GetPage,
    run: get_page,
    keywords: ["read page", "wiki page", "doc", "content", "runbook", "open page", "show page", "page content"],
    description: "Read a Confluence wiki page by id: title, space, version, last update and the body as Markdown (or raw storage XHTML).",
};

async fn get_page(up: Arc<dyn Upstream>, args: GetPage) -> Result<Value, ToolError> {
    check_id("/page_id", &args.page_id)?;
    let page = fetch_page(&*up, &args.page_id).await?;
    let xhtml = page["body"]["storage"]["value"].as_str().unwrap_or("");
    let text = match args.body_format {
        BodyFormat::Markdown => storage::to_markdown(xhtml),
        BodyFormat::Storage => xhtml.to_string(),
    };
    let (body, cut) = truncate_chars(&text, args.max_chars);
    let base = wiki_base(&page, &*up);
    let mut out = compact(json!({
        "id": page["id"],
        "title": page["title"],
        "status": page["status"],
        "space_id": page["spaceId"],
        "parent_id": page["parentId"],
        "version": page["version"]["number"],
        "version_message": page["version"]["message"].as_str().filter(|m| !m.is_empty()),
        "last_updated": page["version"]["createdAt"],
        "created": page["createdAt"],
        "author_id": page["authorId"],
        "url": page_link(&base, &page),
        "body_format": match args.body_format { BodyFormat::Markdown => "markdown", BodyFormat::Storage => "storage" },
        "body": body,
        "truncated": cut,
    }));
    if args.include_raw {
        out["raw"] = page;
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum PageSort {
    Title,
    TitleDesc,
    Created,
    CreatedDesc,
    Modified,
    ModifiedDesc,
    Position,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListPages {
    /// List the pages of this space: its numeric id, or its key (e.g. ENG), which is looked up.
    space_id: Option<String>,
    /// Instead, list the child pages of this page id.
    parent_id: Option<String>,
    /// Only pages with exactly this title (with space_id).
    title: Option<String>,
    /// Order: title, title_desc, created, created_desc, modified, modified_desc, or position (page-tree order, with parent_id).
    sort: Option<PageSort>,
    /// Pages per page of results (1-250).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 250))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_PAGES: ToolSpec = tool! {
    name: "confluence_list_pages",
    effect: Read,
    results: Private,
    args: ListPages,
    run: list_pages,
    keywords: ["pages in space", "child pages", "subpages", "page tree", "browse wiki"],
    description: "List the pages of a Confluence space, or the child pages (subpages) of a page, with id, title, version and link; filter by exact title.",
};

async fn list_pages(up: Arc<dyn Upstream>, args: ListPages) -> Result<Value, ToolError> {
    let sort = args.sort.map(|s| match s {
        PageSort::Title => "title",
        PageSort::TitleDesc => "-title",
        PageSort::Created => "created-date",
        PageSort::CreatedDesc => "-created-date",
        PageSort::Modified => "modified-date",
        PageSort::ModifiedDesc => "-modified-date",
        PageSort::Position => "child-position",
    });
    let (req, scope) = match (args.space_id.as_deref(), args.parent_id.as_deref()) {
        (Some(space), None) => {
            if sort == Some("child-position") {
                return Err(invalid(
                    "/sort",
                    "position order applies to child pages (parent_id)",
                    "use with parent_id",
                ));
            }
            let id = resolve_space_id(&*up, space).await?;
            let req = HttpRequest::get(format!("/api/v2/spaces/{id}/pages")).query_opt("title", args.title.as_deref());
            (req, json!({ "space_id": id }))
        }
        (None, Some(parent)) => {
            check_id("/parent_id", parent)?;
            if args.title.is_some() {
                return Err(invalid(
                    "/title",
                    "title filters the pages of a space; it cannot be used with parent_id",
                    "use with space_id",
                ));
            }
            if matches!(sort, Some("title" | "-title")) {
                return Err(invalid(
                    "/sort",
                    "child pages cannot be sorted by title; use position, created or modified",
                    "unsupported for child pages",
                ));
            }
            (HttpRequest::get(format!("/api/v2/pages/{parent}/children")), json!({ "parent_id": parent }))
        }
        _ => {
            return Err(invalid("", "give exactly one of space_id or parent_id", "expected space_id or parent_id"));
        }
    };
    let req = req
        .query_opt("sort", sort)
        .query("limit", args.limit.clamp(1, 250))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let base = wiki_base(&body, &*up);
    let pages: Vec<Value> = body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            compact(json!({
                "id": p["id"],
                "title": p["title"],
                "status": p["status"].as_str().filter(|s| *s != "current"),
                "parent_id": p["parentId"],
                "version": p["version"]["number"],
                "last_updated": p["version"]["createdAt"],
                "url": page_link(&base, p),
            }))
        })
        .collect();
    let mut out = compact(json!({ "pages": pages, "next_cursor": next_cursor(&body) }));
    if let (Value::Object(o), Value::Object(s)) = (&mut out, scope) {
        for (k, v) in s {
            o.insert(k, v);
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum PageStatus {
    #[default]
    Current,
    Draft,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreatePage {
    /// Space to create the page in: its numeric id, or its key (e.g. ENG), which is looked up.
    #[schemars(length(min = 1))]
    space_id: String,
    /// Page title (unique within the space).
    #[schemars(length(min = 1, max = 255))]
    title: String,
    /// Page content in Markdown (headings, lists, tables, code blocks, links), or storage XHTML with body_format=storage.
    body: String,
    /// Put the page under this parent page id; default: under the space's homepage.
    parent_id: Option<String>,
    /// current (publish, default) or draft.
    #[serde(default)]
    status: PageStatus,
    /// Whether body is markdown (default) or storage XHTML.
    #[serde(default)]
    body_format: BodyFormat,
}

pub(crate) const CREATE_PAGE: ToolSpec = tool! {
    name: "confluence_create_page",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(flow::space_audience),
    args: CreatePage,
    run: create_page,
    keywords: ["new page", "write doc", "publish", "wiki page", "draft", "document"],
    description: "Create a Confluence wiki page in a space (optionally under a parent page) from Markdown, published or as a draft.",
};

async fn create_page(up: Arc<dyn Upstream>, args: CreatePage) -> Result<Value, ToolError> {
    if let Some(p) = &args.parent_id {
        check_id("/parent_id", p)?;
    }
    let space_id = resolve_space_id(&*up, &args.space_id).await?;
    let mut body = json!({
        "spaceId": space_id,
        "status": match args.status { PageStatus::Current => "current", PageStatus::Draft => "draft" },
        "title": args.title,
        "body": { "representation": "storage", "value": storage_body(&args.body, args.body_format) },
    });
    if let Some(p) = &args.parent_id {
        body["parentId"] = json!(p);
    }
    let page = up.send(HttpRequest::post("/api/v2/pages").json(body)).await?.json()?;
    let base = wiki_base(&page, &*up);
    Ok(compact(json!({
        "id": page["id"],
        "title": page["title"],
        "status": page["status"],
        "space_id": page["spaceId"],
        "parent_id": page["parentId"],
        "version": page["version"]["number"],
        "url": page_link(&base, &page),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdatePage {
    /// The page's numeric id.
    #[schemars(length(min = 1))]
    page_id: String,
    /// New title; default: keep the current one.
    title: Option<String>,
    /// New content in Markdown (or storage XHTML with body_format=storage); default: keep the current body.
    body: Option<String>,
    /// Add body after the existing content instead of replacing it.
    #[serde(default)]
    append: bool,
    /// Whether body is markdown (default) or storage XHTML.
    #[serde(default)]
    body_format: BodyFormat,
    /// A note for the page history, e.g. "Updated rollout steps".
    version_message: Option<String>,
}

pub(crate) const UPDATE_PAGE: ToolSpec = tool! {
    name: "confluence_update_page",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(flow::space_audience),
    args: UpdatePage,
    run: update_page,
    keywords: ["edit page", "rewrite", "append", "rename page", "update doc", "wiki", "add a section", "update page"],
    description: "Update a Confluence page: replace or append to its body (Markdown) and/or change its title; the next version number is fetched and set for you, and a concurrent edit is reported as a version conflict.",
};

async fn update_page(up: Arc<dyn Upstream>, args: UpdatePage) -> Result<Value, ToolError> {
    check_id("/page_id", &args.page_id)?;
    if args.title.is_none() && args.body.is_none() {
        return Err(invalid("", "nothing to change: give title and/or body", "expected title or body"));
    }
    if args.append && args.body.is_none() {
        return Err(invalid("/append", "append needs a body to add", "requires body"));
    }
    let page = fetch_page(&*up, &args.page_id).await?;
    let current = page["version"]["number"].as_u64().ok_or_else(|| ToolError::Upstream {
        status: 502,
        message: format!("Confluence returned page {} without a version number", args.page_id),
        retry_after: None,
    })?;
    let existing = page["body"]["storage"]["value"].as_str().unwrap_or("").to_string();
    let value = match &args.body {
        Some(b) if args.append => format!("{existing}{}", storage_body(b, args.body_format)),
        Some(b) => storage_body(b, args.body_format),
        None => existing,
    };
    let next = current + 1;
    let mut version = json!({ "number": next });
    if let Some(m) = &args.version_message {
        version["message"] = json!(m);
    }
    let body = json!({
        "id": args.page_id,
        "status": page["status"].as_str().unwrap_or("current"),
        "title": args.title.clone().or_else(|| page["title"].as_str().map(str::to_string)),
        "body": { "representation": "storage", "value": value },
        "version": version,
    });
    let req = HttpRequest::new(Method::Put, format!("/api/v2/pages/{}", encode_segment(&args.page_id))).json(body);
    let updated = match up.send(req).await {
        Ok(r) => r.json()?,
        Err(ToolError::Upstream { status: 409, message, retry_after }) => {
            return Err(ToolError::Upstream {
                status: 409,
                message: format!(
                    "version conflict: page {} changed after it was read at version {current} (this edit was version {next}); read it again with confluence_get_page and redo the change. Confluence said: {message}",
                    args.page_id
                ),
                retry_after,
            });
        }
        Err(e) => return Err(e),
    };
    let base = wiki_base(&updated, &*up);
    Ok(compact(json!({
        "id": updated["id"],
        "title": updated["title"],
        "version": updated["version"]["number"],
        "url": page_link(&base, &updated),
    })))
}

// ---------------------------------------------------------------- spaces and comments

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SpaceType {
    Global,
    Personal,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListSpaces {
    /// Only these space keys, e.g. ["ENG","OPS"].
    keys: Option<Vec<String>>,
    /// Only global (team) or personal spaces.
    #[serde(rename = "type")]
    space_type: Option<SpaceType>,
    /// Spaces per page (1-250).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 250))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_SPACES: ToolSpec = tool! {
    name: "confluence_list_spaces",
    effect: Read,
    results: Private,
    args: ListSpaces,
    run: list_spaces,
    keywords: ["spaces", "space key", "space id", "wiki spaces", "team spaces"],
    description: "List Confluence spaces with their numeric id and key (id ⇄ key), name, type and homepage; filter by keys or type.",
};

async fn list_spaces(up: Arc<dyn Upstream>, args: ListSpaces) -> Result<Value, ToolError> {
    let keys = args.keys.as_ref().filter(|k| !k.is_empty()).map(|k| k.join(","));
    let req = HttpRequest::get("/api/v2/spaces")
        .query_opt("keys", keys)
        .query_opt(
            "type",
            args.space_type.map(|t| match t {
                SpaceType::Global => "global",
                SpaceType::Personal => "personal",
            }),
        )
        .query("limit", args.limit.clamp(1, 250))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let base = wiki_base(&body, &*up);
    let spaces: Vec<Value> = body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            compact(json!({
                "id": s["id"],
                "key": s["key"],
                "name": s["name"],
                "type": s["type"],
                "status": s["status"].as_str().filter(|x| *x != "current"),
                "homepage_id": s["homepageId"],
                "url": link(&base, &s["_links"]["webui"]),
            }))
        })
        .collect();
    Ok(compact(json!({ "spaces": spaces, "next_cursor": next_cursor(&body) })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The page's numeric id.
    #[schemars(length(min = 1))]
    page_id: String,
    /// The comment in Markdown.
    #[schemars(length(min = 1))]
    body: String,
    /// Reply to this existing comment id instead of starting a new thread.
    parent_comment_id: Option<String>,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "confluence_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(flow::space_audience),
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "feedback", "footer comment", "page comment"],
    description: "Add a comment to a Confluence page (a footer comment), or reply to an existing comment, written in Markdown.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    check_id("/page_id", &args.page_id)?;
    let value = storage::from_markdown(&args.body);
    // A reply names only its parent comment; a new thread names the page.
    let body = match &args.parent_comment_id {
        Some(parent) => {
            check_id("/parent_comment_id", parent)?;
            json!({ "parentCommentId": parent, "body": { "representation": "storage", "value": value } })
        }
        None => json!({ "pageId": args.page_id, "body": { "representation": "storage", "value": value } }),
    };
    let comment = up.send(HttpRequest::post("/api/v2/footer-comments").json(body)).await?.json()?;
    let base = wiki_base(&comment, &*up);
    Ok(compact(json!({
        "id": comment["id"],
        "page_id": comment["pageId"].as_str().unwrap_or(&args.page_id),
        "parent_comment_id": comment["parentCommentId"],
        "version": comment["version"]["number"],
        "url": link(&base, &comment["_links"]["webui"]),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_come_from_next_links() {
        let body =
            json!({"_links": {"next": "/wiki/api/v2/spaces?limit=2&cursor=eyJpZCI6%2B3%3D", "base": "https://a/wiki"}});
        assert_eq!(next_cursor(&body).as_deref(), Some("eyJpZCI6+3="));
        assert_eq!(next_cursor(&json!({"_links": {}})), None);
    }

    #[test]
    fn cql_is_built_and_quoted() {
        let args = SearchPages {
            query: Some("say \"hi\"".into()),
            cql: None,
            space_key: Some("ENG".into()),
            content_type: ContentType::Any,
            limit: 10,
            cursor: None,
        };
        assert_eq!(
            build_cql(&args).unwrap(),
            "type in (page, blogpost) AND text ~ \"say \\\"hi\\\"\" AND space = \"ENG\""
        );
    }

    #[test]
    fn error_shapes() {
        let v2 = json!({"errors": [{"status": 409, "code": "CONFLICT", "title": "Version must be incremented on update. Current version is: 6", "detail": null}]});
        assert_eq!(error_message(&v2).unwrap(), "Version must be incremented on update. Current version is: 6");
        let v1 = json!({"statusCode": 400, "message": "Could not parse cql : text ~", "data": {}});
        assert_eq!(error_message(&v1).unwrap(), "Could not parse cql : text ~");
    }

    #[test]
    fn excerpts_lose_highlight_markers() {
        assert_eq!(clean_excerpt("How to @@@hl@@@restart@@@endhl@@@ the&nbsp;API\n…"), "How to restart the API …");
    }
}

#[cfg(test)]
mod tool_tests;
