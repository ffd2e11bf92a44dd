//! Trello: boards, lists (columns), cards (list, search, read with checklists and comments, create,
//! move/update) and card comments. The API key and user token travel as the `key` and `token` query
//! parameters (attached by the engine). Trello answers most errors as plain text ("invalid id",
//! "invalid token"), rate limits as JSON (`API_TOKEN_LIMIT_EXCEEDED`), and returns whole
//! collections at once: list tools page through them with an offset cursor.

use std::collections::HashMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "trello",
    display_name: "Trello",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field {
                name: "api_key",
                label: "API key",
                secret: true,
                required: true,
                help: "trello.com/power-ups/admin → your Power-Up → API key (32 hex characters)",
            },
            Field {
                name: "token",
                label: "User token",
                secret: true,
                required: true,
                help: "The token link next to the API key on the same page; authorize it for your account (starts with ATTA)",
            },
        ],
        inject: Inject::Query(&[("key", "api_key"), ("token", "token")]),
        identity: Some(Identity {
            request: || HttpRequest::get("/members/me").query("fields", "username,fullName"),
            label: member_label,
        }),
        oauth: None,
    },
    // Single words here mark a query as naming Trello ("card", "board" per the catalogue; not "list").
    keywords: &["card", "cards", "board", "boards", "column", "columns", "kanban", "to do doing done"],
    hosts: &[Host { key: "base_url", default_url: "https://api.trello.com/1" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit { requests: 100, per_seconds: 10 },
    side: Some(flow_side),
    tools: &[LIST_BOARDS, LIST_LISTS, LIST_CARDS, SEARCH_CARDS, GET_CARD, CREATE_CARD, UPDATE_CARD, CREATE_COMMENT],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): `members/me` (`id`, `username`). Every card and comment stays on the user's boards (inside; flows.md section 3).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/members/me").query("fields", "id,username,fullName")).await?.json()?;
        crate::flow::side_from(&me, &["/email"], &["/id", "/username"])
    })
}

/// Who reads a board: its members and workspace, unless the board is public
/// (`prefs.permissionLevel: "public"`: anyone on the web reads its cards and comments).
async fn board_verdict(up: &dyn Upstream, path: String) -> Result<crate::flow::Verdict, ToolError> {
    use crate::flow::{Party, Verdict, undecided};
    let board = up.send(HttpRequest::get(path).query("fields", "name,prefs")).await?.json()?;
    match board["prefs"]["permissionLevel"].as_str() {
        Some("public") => {
            let name = board["name"].as_str().unwrap_or("a board");
            Ok(Verdict::outside(Party::Anyone(format!("anyone: the Trello board {name} is public"))))
        }
        Some(_) => Ok(Verdict::Inside),
        None => Err(undecided("Trello did not say who can see the board")),
    }
}

/// `trello_create_card` (the board of `list_id`), `trello_update_card` and
/// `trello_create_comment` (the board of `card_id`, and for a move the target board or list's
/// board: moving a card onto a public board publishes it, a grant). Lookups:
/// `GET /lists/{id}/board`, `GET /cards/{id}/board`, `GET /boards/{id}` (fields `name,prefs`).
fn board_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    _side: Arc<crate::flow::Side>,
) -> BoxFuture<Result<crate::flow::Verdict, ToolError>> {
    use crate::flow::{Verdict, arg_str};
    Box::pin(async move {
        let seg = |id: &str| encode_segment(id);
        let mut verdict = Verdict::Inside;
        if let Some(card) = arg_str(&args, "card_id") {
            verdict = board_verdict(&*up, format!("/cards/{}/board", seg(card))).await?;
        }
        let target = match (arg_str(&args, "board_id"), arg_str(&args, "list_id")) {
            (Some(b), _) => Some(format!("/boards/{}", seg(b))),
            (None, Some(l)) => Some(format!("/lists/{}/board", seg(l))),
            (None, None) => None,
        };
        if let Some(path) = target {
            let v = board_verdict(&*up, path).await?;
            // Moving an existing card somewhere public hands over all of it.
            verdict = verdict.and(match v {
                Verdict::Outside { parties, .. } if arg_str(&args, "card_id").is_some() => {
                    Verdict::Outside { parties, grants: true }
                }
                v => v,
            });
        }
        if arg_str(&args, "card_id").is_none() && arg_str(&args, "list_id").is_none() {
            return Err(crate::flow::undecided("no card_id or list_id given"));
        }
        Ok(verdict)
    })
}

/// JSON errors (`{"message": "...", "error": "API_TOKEN_LIMIT_EXCEEDED"}`); plain-text ones are
/// passed through by the engine as they are.
fn error_message(body: &Value) -> Option<String> {
    let message = body.get("message").and_then(Value::as_str);
    let code = body.get("error").and_then(Value::as_str);
    match (code, message) {
        (Some(c), Some(m)) if c != m => Some(format!("{c}: {m}")),
        (_, Some(m)) => Some(m.to_string()),
        (Some(c), None) => Some(c.to_string()),
        (None, None) => None,
    }
}

fn member_label(body: &Value) -> Option<String> {
    match (body["fullName"].as_str(), body["username"].as_str()) {
        (Some(n), Some(u)) => Some(format!("{n} (@{u})")),
        (n, u) => n.or(u).map(str::to_string),
    }
}

const CARD_FIELDS: &str =
    "name,desc,due,dueComplete,start,closed,idList,idBoard,idMembers,labels,shortUrl,dateLastActivity";
const DEFAULT_MAX_CHARS: usize = 10_000;
const LIST_DESC_CHARS: usize = 300;

/// Trello ids are 24 hex characters; boards and cards also answer to their 8-character short link.
fn trello_id(path: &str, value: &str) -> Result<String, ToolError> {
    let v = value.trim();
    if v.is_empty() || v.len() > 32 || !v.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(invalid(
            path,
            format!("'{value}' is not a Trello id (24 hex characters) or short link"),
            "expected an id such as 5abbe4b7ddc1b351ef961414",
        ));
    }
    Ok(encode_segment(v))
}

fn parse_offset(cursor: &Option<String>) -> Result<usize, ToolError> {
    match cursor {
        None => Ok(0),
        Some(c) => c.parse::<usize>().map_err(|_| {
            invalid("/cursor", format!("cursor '{c}' is not one this tool issued"), "pass next_cursor back unchanged")
        }),
    }
}

fn label_names(labels: &Value) -> Option<Vec<Value>> {
    let v: Vec<Value> = labels
        .as_array()?
        .iter()
        .filter_map(|l| {
            let name = l["name"].as_str().filter(|n| !n.is_empty());
            name.or(l["color"].as_str()).map(|n| Value::String(n.to_string()))
        })
        .collect();
    (!v.is_empty()).then_some(v)
}

fn member_names(members: &Value) -> Option<Vec<Value>> {
    let v: Vec<Value> = members
        .as_array()?
        .iter()
        .filter_map(|m| m["fullName"].as_str().or(m["username"].as_str()).map(|n| Value::String(n.to_string())))
        .collect();
    (!v.is_empty()).then_some(v)
}

fn shape_card(c: &Value, list_names: &HashMap<String, String>, desc_chars: usize) -> (Value, bool) {
    let (desc, cut) = match c["desc"].as_str().filter(|d| !d.is_empty()) {
        Some(d) => {
            let (t, cut) = truncate_chars(d, desc_chars);
            (Value::String(t), cut)
        }
        None => (Value::Null, false),
    };
    let list = c["list"]["name"]
        .as_str()
        .map(str::to_string)
        .or_else(|| c["idList"].as_str().and_then(|id| list_names.get(id).cloned()));
    let shaped = compact(json!({
        "id": c["id"],
        "name": c["name"],
        "board": c["board"]["name"],
        "list": list,
        "list_id": c["idList"],
        "desc": desc,
        "start": c["start"],
        "due": c["due"],
        "due_complete": c["due"].as_str().map(|_| c["dueComplete"].clone()),
        "labels": label_names(&c["labels"]),
        "members": member_names(&c["members"]),
        "archived": (c["closed"].as_bool() == Some(true)).then_some(true),
        "last_activity": c["dateLastActivity"],
        "url": c["shortUrl"].as_str().or(c["url"].as_str()),
    }));
    (shaped, cut)
}

// ---------------------------------------------------------------- boards and lists

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum BoardFilter {
    #[default]
    Open,
    Closed,
    Starred,
    All,
}

impl BoardFilter {
    fn as_str(self) -> &'static str {
        match self {
            BoardFilter::Open => "open",
            BoardFilter::Closed => "closed",
            BoardFilter::Starred => "starred",
            BoardFilter::All => "all",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListBoards {
    /// Which boards: open (default), closed (archived), starred, or all.
    #[serde(default)]
    filter: BoardFilter,
    /// Also return Trello's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_BOARDS: ToolSpec = tool! {
    name: "trello_list_boards",
    effect: Read,
    results: Private,
    args: ListBoards,
    run: list_boards,
    keywords: ["boards", "my boards", "kanban", "workspace", "starred boards", "list boards", "kanban boards"],
    description: "List the user's Trello boards (open ones by default; or closed, starred, all) with their ids, workspace, last activity and link.",
};

async fn list_boards(up: Arc<dyn Upstream>, args: ListBoards) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/members/me/boards")
        .query("filter", args.filter.as_str())
        .query("fields", "name,desc,closed,starred,shortUrl,dateLastActivity,idOrganization")
        .query("organization", "true")
        .query("organization_fields", "displayName");
    let body = up.send(req).await?.json()?;
    let boards: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            compact(json!({
                "id": b["id"],
                "name": b["name"],
                "desc": b["desc"].as_str().filter(|d| !d.is_empty()).map(|d| truncate_chars(d, LIST_DESC_CHARS).0),
                "workspace": b["organization"]["displayName"],
                "starred": (b["starred"].as_bool() == Some(true)).then_some(true),
                "archived": (b["closed"].as_bool() == Some(true)).then_some(true),
                "last_activity": b["dateLastActivity"],
                "url": b["shortUrl"],
            }))
        })
        .collect();
    Ok(with_raw(json!({ "boards": boards }), args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ListFilter {
    #[default]
    Open,
    Closed,
    All,
}

impl ListFilter {
    fn as_str(self) -> &'static str {
        match self {
            ListFilter::Open => "open",
            ListFilter::Closed => "closed",
            ListFilter::All => "all",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListLists {
    /// The board's id or short link (from trello_list_boards or the board URL trello.com/b/<short link>/…).
    #[schemars(length(min = 1))]
    board_id: String,
    /// Which lists: open (default), closed (archived) or all.
    #[serde(default)]
    filter: ListFilter,
}

pub(crate) const LIST_LISTS: ToolSpec = tool! {
    name: "trello_list_lists",
    effect: Read,
    results: Private,
    args: ListLists,
    run: list_lists,
    keywords: ["lists", "columns", "stages", "to do", "doing", "done", "board columns"],
    description: "List the lists (columns such as To Do / Doing / Done) of a Trello board, left to right as on the board, with their ids and how many open cards each holds.",
};

async fn list_lists(up: Arc<dyn Upstream>, args: ListLists) -> Result<Value, ToolError> {
    let board = trello_id("/board_id", &args.board_id)?;
    let req = HttpRequest::get(format!("/boards/{board}/lists"))
        .query("filter", args.filter.as_str())
        .query("fields", "name,closed,pos")
        .query("cards", "open")
        .query("card_fields", "id");
    let body = up.send(req).await?.json()?;
    let lists: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            compact(json!({
                "id": l["id"],
                "name": l["name"],
                "open_cards": l["cards"].as_array().map(Vec::len),
                "archived": (l["closed"].as_bool() == Some(true)).then_some(true),
            }))
        })
        .collect();
    Ok(json!({ "lists": lists }))
}

// ---------------------------------------------------------------- cards

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CardFilter {
    #[default]
    Open,
    Closed,
    All,
}

impl CardFilter {
    fn as_str(self) -> &'static str {
        match self {
            CardFilter::Open => "open",
            CardFilter::Closed => "closed",
            CardFilter::All => "all",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListCards {
    /// Cards of this list (column) id (from trello_list_lists); give this or board_id.
    list_id: Option<String>,
    /// Cards of this whole board (id or short link); give this or list_id.
    board_id: Option<String>,
    /// Which cards: open (default), closed (archived) or all.
    #[serde(default)]
    filter: CardFilter,
    /// How many cards to return (1-1000); Trello sends them all at once and the cursor pages through them.
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 1000))]
    limit: usize,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Trello's payload for this page's cards under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_CARDS: ToolSpec = tool! {
    name: "trello_list_cards",
    effect: Read,
    results: Private,
    args: ListCards,
    run: list_cards,
    keywords: ["cards", "tasks", "items", "column", "board cards", "whats on the board", "backlog", "cards in a list", "cards in a column", "what's in the column"],
    description: "List the cards on a Trello board or in one list (column): name, list, due date, labels, members and link; open cards by default.",
};

/// Trello's description declares no query parameters for `GET /boards/{id}/cards/{filter}` and
/// `GET /lists/{id}/cards` (open cards only): the filter goes in the board path, a list's closed or
/// all cards come from its board's, and member names from `GET /boards/{id}/members`.
async fn list_cards(up: Arc<dyn Upstream>, args: ListCards) -> Result<Value, ToolError> {
    let offset = parse_offset(&args.cursor)?;
    let filter = args.filter.as_str();
    let (body, board, only_list) = match (&args.list_id, &args.board_id) {
        (Some(l), None) => {
            let l = trello_id("/list_id", l)?;
            if matches!(args.filter, CardFilter::Open) {
                (up.send(HttpRequest::get(format!("/lists/{l}/cards"))).await?.json()?, None, None)
            } else {
                let list = up.send(HttpRequest::get(format!("/lists/{l}")).query("fields", "idBoard")).await?.json()?;
                let b = list["idBoard"].as_str().map(|b| trello_id("/list_id", b)).transpose()?.ok_or_else(|| {
                    ToolError::Upstream {
                        status: 200,
                        message: format!("Trello did not say which board list {l} is on"),
                        retry_after: None,
                    }
                })?;
                (up.send(HttpRequest::get(format!("/boards/{b}/cards/{filter}"))).await?.json()?, Some(b), Some(l))
            }
        }
        (None, Some(b)) => {
            let b = trello_id("/board_id", b)?;
            (up.send(HttpRequest::get(format!("/boards/{b}/cards/{filter}"))).await?.json()?, Some(b), None)
        }
        _ => {
            return Err(invalid("/list_id", "give exactly one of list_id or board_id", "give list_id or board_id"));
        }
    };
    let mut all: Vec<Value> = body.as_array().cloned().unwrap_or_default();
    if let Some(l) = &only_list {
        all.retain(|c| c["idList"].as_str() == Some(l.as_str()));
    }
    // Board-wide listings name each card's column, which needs the board's lists.
    let mut list_names = HashMap::new();
    if board.is_some() && only_list.is_none() {
        let b = board.as_deref().unwrap_or_default();
        let lists = up
            .send(HttpRequest::get(format!("/boards/{b}/lists")).query("filter", "all").query("fields", "name"))
            .await?
            .json()?;
        for l in lists.as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (l["id"].as_str(), l["name"].as_str()) {
                list_names.insert(id.to_string(), name.to_string());
            }
        }
    }
    let limit = args.limit.clamp(1, 1000);
    let mut page: Vec<Value> = all.iter().skip(offset).take(limit).cloned().collect();
    name_members(&*up, board.as_deref(), &mut page).await?;
    let cards: Vec<Value> = page.iter().map(|c| shape_card(c, &list_names, LIST_DESC_CHARS).0).collect();
    let next = offset + limit;
    let shaped = compact(json!({
        "cards": cards,
        "total": all.len(),
        "next_cursor": (next < all.len()).then(|| next.to_string()),
    }));
    Ok(with_raw(shaped, args.include_raw, &Value::Array(page)))
}

/// Puts `members` (id, fullName, username) on cards that only carry `idMembers`, from their board's
/// member list (one request, only when a card has members).
async fn name_members(up: &dyn Upstream, board: Option<&str>, cards: &mut [Value]) -> Result<(), ToolError> {
    let has_members = |c: &Value| c["idMembers"].as_array().is_some_and(|m| !m.is_empty());
    let Some(first) = cards.iter().find(|c| has_members(c)) else { return Ok(()) };
    let board = match board.map(str::to_string).or_else(|| first["idBoard"].as_str().map(str::to_string)) {
        Some(b) => trello_id("/board_id", &b)?,
        None => return Ok(()),
    };
    let members = up.send(HttpRequest::get(format!("/boards/{board}/members"))).await?.json()?;
    let by_id: HashMap<&str, &Value> =
        members.as_array().into_iter().flatten().filter_map(|m| Some((m["id"].as_str()?, m))).collect();
    for c in cards.iter_mut().filter(|c| has_members(c)) {
        let named: Vec<Value> = c["idMembers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|id| by_id.get(id.as_str()?).map(|m| (*m).clone()))
            .collect();
        c["members"] = Value::Array(named);
    }
    Ok(())
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchCards {
    /// Words to search for in card names and descriptions; Trello operators work too (e.g. "label:urgent", "due:week", "@me", "list:Doing").
    #[schemars(length(min = 1))]
    query: String,
    /// Only search these board ids.
    board_ids: Option<Vec<String>>,
    /// Match word beginnings too ("deplo" finds "deploy").
    #[serde(default)]
    partial: bool,
    /// Cards per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
}

pub(crate) const SEARCH_CARDS: ToolSpec = tool! {
    name: "trello_search_cards",
    effect: Read,
    results: Private,
    args: SearchCards,
    run: search_cards,
    keywords: ["find card", "search", "lookup", "text search"],
    description: "Search Trello cards by text across the user's boards (or some boards), with their board, list, due date and link.",
};

async fn search_cards(up: Arc<dyn Upstream>, args: SearchCards) -> Result<Value, ToolError> {
    let page = parse_offset(&args.cursor)?;
    let boards = match &args.board_ids {
        Some(b) if !b.is_empty() => {
            Some(b.iter().map(|b| trello_id("/board_ids", b)).collect::<Result<Vec<_>, _>>()?.join(","))
        }
        _ => None,
    };
    let limit = args.limit.clamp(1, 100);
    let req = HttpRequest::get("/search")
        .query("query", &args.query)
        .query("modelTypes", "cards")
        .query_opt("idBoards", boards)
        .query("partial", args.partial)
        .query("cards_limit", limit)
        .query("cards_page", page)
        .query("card_fields", CARD_FIELDS)
        .query("card_board", "true")
        .query("card_list", "true")
        .query("card_members", "true");
    let body = up.send(req).await?.json()?;
    let cards: Vec<Value> = body["cards"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| shape_card(c, &HashMap::new(), LIST_DESC_CHARS).0)
        .collect();
    // Trello serves at most 1,000 results per query, in pages.
    let more = cards.len() as u32 == limit && (page as u32 + 1) * limit < 1000;
    Ok(compact(json!({
        "cards": cards,
        "next_cursor": more.then(|| (page + 1).to_string()),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetCard {
    /// The card's id or short link (the code in trello.com/c/<short link>/…).
    #[schemars(length(min = 1))]
    card_id: String,
    /// Include the newest comments.
    #[serde_inline_default(true)]
    include_comments: bool,
    /// How many comments to include (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    max_comments: u32,
    /// Include checklists and their items.
    #[serde_inline_default(true)]
    include_checklists: bool,
    /// Character budget for the description; longer ones are cut and truncated is set.
    #[serde_inline_default(DEFAULT_MAX_CHARS)]
    #[schemars(range(min = 50, max = 100000))]
    max_chars: usize,
    /// Also return Trello's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_CARD: ToolSpec = tool! {
    name: "trello_get_card",
    effect: Read,
    results: Private,
    args: GetCard,
    run: get_card,
    keywords: ["card details", "description", "checklist", "checklists", "comments", "due date", "labels", "members", "show card"],
    description: "Get one Trello card: description, board and list (column), due date, labels, members, checklists with their items, and recent comments.",
};

async fn get_card(up: Arc<dyn Upstream>, args: GetCard) -> Result<Value, ToolError> {
    let id = trello_id("/card_id", &args.card_id)?;
    let mut req = HttpRequest::get(format!("/cards/{id}"))
        .query("fields", CARD_FIELDS)
        .query("members", "true")
        .query("member_fields", "fullName,username")
        .query("list", "true")
        .query("board", "true")
        .query("board_fields", "name");
    if args.include_checklists {
        req = req.query("checklists", "all").query("checklist_fields", "name");
    }
    if args.include_comments {
        // `actions_limit` is not declared for `GET /cards/{id}`: the newest come first, cut here.
        req = req.query("actions", "commentCard");
    }
    let card = up.send(req).await?.json()?;
    let (mut shaped, truncated) = shape_card(&card, &HashMap::new(), args.max_chars);
    if args.include_checklists {
        let checklists: Vec<Value> = card["checklists"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|cl| {
                let items: Vec<Value> = cl["checkItems"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| json!({ "name": i["name"], "done": i["state"] == "complete" }))
                    .collect();
                let done = items.iter().filter(|i| i["done"] == true).count();
                json!({ "name": cl["name"], "done": format!("{done}/{}", items.len()), "items": items })
            })
            .collect();
        if !checklists.is_empty() {
            shaped["checklists"] = Value::Array(checklists);
        }
    }
    if args.include_comments {
        let comments: Vec<Value> = card["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["type"] == "commentCard")
            .take(args.max_comments.clamp(1, 100) as usize)
            .map(|a| {
                compact(json!({
                    "id": a["id"],
                    "author": a["memberCreator"]["fullName"].as_str().or(a["memberCreator"]["username"].as_str()),
                    "date": a["date"],
                    "text": a["data"]["text"].as_str().map(|t| truncate_chars(t, 2_000).0),
                }))
            })
            .collect();
        if !comments.is_empty() {
            shaped["comments"] = Value::Array(comments);
        }
    }
    if truncated {
        shaped["truncated"] = json!(true);
    }
    Ok(with_raw(shaped, args.include_raw, &card))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateCard {
    /// The list (column) to create it in (an id from trello_list_lists).
    #[schemars(length(min = 1))]
    list_id: String,
    /// The card's title.
    #[schemars(length(min = 1, max = 16384))]
    name: String,
    /// Description (Markdown).
    desc: Option<String>,
    /// Due date, ISO 8601, e.g. 2026-12-05 or 2026-12-05T17:00:00Z.
    due: Option<String>,
    /// Start date, ISO 8601.
    start: Option<String>,
    /// Member ids to put on the card.
    member_ids: Option<Vec<String>>,
    /// Label ids to add (from the board).
    label_ids: Option<Vec<String>>,
    /// Position in the list: "top", "bottom" (default) or a positive number.
    pos: Option<String>,
}

fn check_pos(pos: &Option<String>) -> Result<(), ToolError> {
    match pos.as_deref() {
        None | Some("top") | Some("bottom") => Ok(()),
        Some(p) if p.parse::<f64>().is_ok_and(|n| n > 0.0) => Ok(()),
        Some(p) => Err(invalid(
            "/pos",
            format!("pos '{p}' is not top, bottom or a positive number"),
            "expected top, bottom or a positive number",
        )),
    }
}

fn ids(path: &str, values: &[String]) -> Result<Vec<String>, ToolError> {
    values.iter().map(|v| trello_id(path, v)).collect()
}

pub(crate) const CREATE_CARD: ToolSpec = tool! {
    name: "trello_create_card",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(board_audience),
    args: CreateCard,
    run: create_card,
    keywords: ["add card", "new card", "task", "to-do", "create"],
    description: "Create a Trello card in a list (column) with description, due date, members, labels and position (top or bottom).",
};

/// Trello's description declares every field of `POST /cards`, `PUT /cards/{id}` and `POST
/// /cards/{id}/actions/comments` as a query parameter (lists comma-separated): sent so.
async fn create_card(up: Arc<dyn Upstream>, args: CreateCard) -> Result<Value, ToolError> {
    check_pos(&args.pos)?;
    let mut req = HttpRequest::post("/cards")
        .query("idList", trello_id("/list_id", &args.list_id)?)
        .query("name", &args.name)
        .query_opt("desc", args.desc.as_ref())
        .query_opt("due", args.due.as_ref())
        .query_opt("start", args.start.as_ref())
        .query_opt("pos", args.pos.as_ref());
    if let Some(m) = args.member_ids.as_ref().filter(|m| !m.is_empty()) {
        req = req.query("idMembers", ids("/member_ids", m)?.join(","));
    }
    if let Some(l) = args.label_ids.as_ref().filter(|l| !l.is_empty()) {
        req = req.query("idLabels", ids("/label_ids", l)?.join(","));
    }
    let card = up.send(req).await?.json()?;
    Ok(shape_card(&card, &HashMap::new(), LIST_DESC_CHARS).0)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateCard {
    /// The card's id or short link.
    #[schemars(length(min = 1))]
    card_id: String,
    /// Move it to this list (column) id, e.g. the "Done" list.
    list_id: Option<String>,
    /// Move it to another board (give list_id of a list on that board too).
    board_id: Option<String>,
    /// New title.
    #[schemars(length(min = 1))]
    name: Option<String>,
    /// New description (Markdown; replaces the old one).
    desc: Option<String>,
    /// New due date (ISO 8601); "" removes the due date.
    due: Option<String>,
    /// Mark the due date complete (true) or not (false).
    due_complete: Option<bool>,
    /// true archives (closes) the card; false restores it.
    closed: Option<bool>,
    /// Replace the card's members with these member ids ([] removes everyone).
    member_ids: Option<Vec<String>>,
    /// New position in its list: "top", "bottom" or a positive number.
    pos: Option<String>,
}

pub(crate) const UPDATE_CARD: ToolSpec = tool! {
    name: "trello_update_card",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(board_audience),
    args: UpdateCard,
    run: update_card,
    keywords: ["move card", "move to done", "rename", "archive", "close", "due date", "mark complete", "assign", "reorder"],
    description: "Update a Trello card: move it to another list (column) or board, rename it, edit its description, set or clear the due date, mark the due date complete, change members, or archive (close) it.",
};

async fn update_card(up: Arc<dyn Upstream>, args: UpdateCard) -> Result<Value, ToolError> {
    let id = trello_id("/card_id", &args.card_id)?;
    check_pos(&args.pos)?;
    if args.board_id.is_some() && args.list_id.is_none() {
        return Err(invalid(
            "/list_id",
            "moving to another board needs list_id too (a list on that board)",
            "needed with board_id",
        ));
    }
    let mut params: Vec<(&str, String)> = Vec::new();
    if let Some(l) = &args.list_id {
        params.push(("idList", trello_id("/list_id", l)?));
    }
    if let Some(b) = &args.board_id {
        params.push(("idBoard", trello_id("/board_id", b)?));
    }
    if let Some(n) = &args.name {
        params.push(("name", n.clone()));
    }
    if let Some(d) = &args.desc {
        params.push(("desc", d.clone()));
    }
    if let Some(d) = &args.due {
        // An empty due clears it.
        params.push(("due", d.trim().to_string()));
    }
    if let Some(c) = args.due_complete {
        params.push(("dueComplete", c.to_string()));
    }
    if let Some(c) = args.closed {
        params.push(("closed", c.to_string()));
    }
    if let Some(m) = &args.member_ids {
        params.push(("idMembers", ids("/member_ids", m)?.join(",")));
    }
    if let Some(p) = &args.pos {
        params.push(("pos", p.clone()));
    }
    if params.is_empty() {
        return Err(ToolError::invalid(
            "nothing to change: give list_id, name, desc, due, due_complete, closed, member_ids or pos",
        ));
    }
    let req = params.into_iter().fold(HttpRequest::new(Method::Put, format!("/cards/{id}")), |r, (k, v)| r.query(k, v));
    let card = up.send(req).await?.json()?;
    Ok(shape_card(&card, &HashMap::new(), LIST_DESC_CHARS).0)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The card's id or short link.
    #[schemars(length(min = 1))]
    card_id: String,
    /// The comment (Markdown; @username mentions notify people).
    #[schemars(length(min = 1, max = 16384))]
    text: String,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "trello_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(board_audience),
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "note", "mention", "update"],
    description: "Add a comment (reply, note, @mention) to a Trello card; it shows in the card's activity.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let id = trello_id("/card_id", &args.card_id)?;
    let req = HttpRequest::post(format!("/cards/{id}/actions/comments")).query("text", &args.text);
    let action = up.send(req).await?.json()?;
    Ok(compact(json!({
        "id": action["id"],
        "card_id": action["data"]["card"]["id"],
        "card": action["data"]["card"]["name"],
        "text": action["data"]["text"],
        "author": action["memberCreator"]["fullName"],
        "date": action["date"],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_errors_name_the_limit() {
        assert_eq!(
            error_message(&json!({"error": "API_TOKEN_LIMIT_EXCEEDED", "message": "Rate limit exceeded"})),
            Some("API_TOKEN_LIMIT_EXCEEDED: Rate limit exceeded".into())
        );
        assert_eq!(
            error_message(&json!({"message": "invalid value for idList"})),
            Some("invalid value for idList".into())
        );
        assert_eq!(error_message(&json!("invalid id")), None);
    }

    #[test]
    fn ids_and_positions_are_checked() {
        assert!(trello_id("/x", "5abbe4b7ddc1b351ef961414").is_ok());
        assert!(trello_id("/x", "../boards").is_err());
        assert!(check_pos(&Some("top".into())).is_ok());
        assert!(check_pos(&Some("65535.5".into())).is_ok());
        assert!(check_pos(&Some("middle".into())).is_err());
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new().json(serde_json::json!({"id": "m1", "username": "ann"})).side(side);
        let s = s.unwrap();
        assert!(s.has_id("m1") && s.has_id("ANN"));
        assert_eq!(reqs[0].path, "/members/me");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
