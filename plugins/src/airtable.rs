//! Airtable: bases and table schemas (metadata API) and records (rows) in tables. A personal access
//! token as `Authorization: Bearer`. Writes take at most 10 records per request, so the write tools
//! send larger batches as consecutive chunks of 10 and say exactly what was written if a later chunk
//! fails. Field values are shaped for reading: attachments lose their thumbnail sets, collaborators
//! become name + email, long text is cut per field.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "airtable",
    display_name: "Airtable",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "Personal access token",
            secret: true,
            required: true,
            help: "airtable.com/create/tokens — starts with pat…; scopes data.records:read, data.records:write, schema.bases:read, and add the bases it may use",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/meta/whoami"), label: identity_label }),
        oauth: None,
    },
    keywords: &["base", "table", "rows", "records", "spreadsheet database", "grid", "view", "no-code database"],
    hosts: &[Host { key: "base_url", default_url: "https://api.airtable.com/v0" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(5),
    side: Some(flow_side),
    tools: &[
        LIST_BASES,
        LIST_TABLES,
        LIST_RECORDS,
        SEARCH_RECORDS,
        GET_RECORD,
        CREATE_RECORDS,
        UPDATE_RECORDS,
        DELETE_RECORDS,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): `meta/whoami` (`id`, `email` when the token may read it). Records written stay in the user's bases (inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/meta/whoami")).await?.json()?;
        crate::flow::side_from(&me, &["/email"], &["/id"])
    })
}

fn identity_label(body: &Value) -> Option<String> {
    body["email"].as_str().or(body["id"].as_str()).map(str::to_string)
}

/// `{error:{type,message}}`, or `{error:"NOT_FOUND"}` for unknown bases and paths.
fn error_message(body: &Value) -> Option<String> {
    match &body["error"] {
        Value::Object(e) => {
            let kind = e.get("type").and_then(Value::as_str);
            match (e.get("message").and_then(Value::as_str), kind) {
                (Some(m), Some(k)) => Some(format!("{m} ({k})")),
                (Some(m), None) => Some(m.to_string()),
                (None, k) => k.map(str::to_string),
            }
        }
        Value::String(s) => Some(s.clone()),
        _ => body["errors"][0]["message"].as_str().map(str::to_string),
    }
}

/// Airtable's cap on records per create/update/delete request.
const WRITE_CHUNK: usize = 10;
const LIST_FIELD_CHARS: usize = 2_000;
const GET_FIELD_CHARS: usize = 10_000;
/// Above this many characters of formula and field names, the list is sent as a POST
/// `listRecords` body instead of a URL (Airtable's URLs stop at 16,000 characters).
const LONG_QUERY_CHARS: usize = 4_000;

fn table_path(base_id: &str, table: &str) -> String {
    format!("/{}/{}", encode_segment(base_id), encode_segment(table))
}

// ---------------------------------------------------------------- bases and tables

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListBases {
    /// Opaque cursor from a previous call's next_cursor, for the next page of bases.
    cursor: Option<String>,
}

pub(crate) const LIST_BASES: ToolSpec = tool! {
    name: "airtable_list_bases",
    effect: Read,
    results: Private,
    args: ListBases,
    run: list_bases,
    keywords: ["bases", "workspaces", "databases", "apps", "which bases", "base id"],
    description: "List the Airtable bases (databases) this access token can open, with their base ids (app…) and your permission level.",
};

async fn list_bases(up: Arc<dyn Upstream>, args: ListBases) -> Result<Value, ToolError> {
    let body = up.send(HttpRequest::get("/meta/bases").query_opt("offset", args.cursor.as_deref())).await?.json()?;
    let bases: Vec<Value> = body["bases"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| compact(json!({"base_id": b["id"], "name": b["name"], "permission_level": b["permissionLevel"]})))
        .collect();
    Ok(compact(json!({"bases": bases, "next_cursor": body["offset"]})))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTables {
    /// The base id (starts with app…, from airtable_list_bases or the base's URL airtable.com/app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// Also return the full provider payload (field options, colours, view ids) as raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_TABLES: ToolSpec = tool! {
    name: "airtable_list_tables",
    effect: Read,
    results: Private,
    args: ListTables,
    run: list_tables,
    keywords: ["tables", "schema", "fields", "columns", "field types", "views", "structure"],
    description: "List the tables of an Airtable base with their schema: fields (columns) and field types, select options, linked tables, and views.",
};

async fn list_tables(up: Arc<dyn Upstream>, args: ListTables) -> Result<Value, ToolError> {
    let body = fetch_tables(&*up, &args.base_id).await?;
    let tables: Vec<Value> = body["tables"].as_array().into_iter().flatten().map(shape_table).collect();
    let mut out = json!({"base_id": args.base_id, "tables": tables});
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

async fn fetch_tables(up: &dyn Upstream, base_id: &str) -> Result<Value, ToolError> {
    up.send(HttpRequest::get(format!("/meta/bases/{}/tables", encode_segment(base_id)))).await?.json()
}

fn shape_table(t: &Value) -> Value {
    let primary = t["primaryFieldId"].as_str();
    let fields: Vec<Value> = t["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let choices: Option<Vec<Value>> =
                f["options"]["choices"].as_array().map(|c| c.iter().filter_map(|c| c.get("name").cloned()).collect());
            compact(json!({
                "name": f["name"],
                "type": f["type"],
                "field_id": f["id"],
                "primary": (f["id"].as_str().is_some() && f["id"].as_str() == primary).then_some(true),
                "description": f["description"],
                "choices": choices,
                "linked_table_id": f["options"]["linkedTableId"],
            }))
        })
        .collect();
    let views: Vec<Value> = t["views"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| compact(json!({"name": v["name"], "type": v["type"], "view_id": v["id"]})))
        .collect();
    compact(json!({
        "table_id": t["id"],
        "name": t["name"],
        "description": t["description"],
        "fields": fields,
        "views": views,
    }))
}

// ---------------------------------------------------------------- reading records

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Direction {
    Asc,
    Desc,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SortBy {
    /// Field (column) name or field id to sort by.
    #[schemars(length(min = 1))]
    field: String,
    /// asc (A→Z, smallest first) or desc.
    #[serde_inline_default(Direction::Asc)]
    direction: Direction,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListRecords {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name (as shown in Airtable) or its id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// Only records visible in this view (name or viw… id), in the view's order.
    view: Option<String>,
    /// An Airtable formula; only records for which it is true are returned, e.g. `AND({Status}='Open', {Due}<TODAY())`.
    filter_by_formula: Option<String>,
    /// Sort order, first entry first, e.g. [{"field":"Due","direction":"asc"}]. Overrides the view's order.
    sort: Option<Vec<SortBy>>,
    /// Only these fields (columns) in each record; all non-empty fields when omitted.
    fields: Option<Vec<String>>,
    /// Records per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the other arguments the same.
    cursor: Option<String>,
    /// Characters kept per long text field before it is cut (listed in truncated_fields).
    #[serde_inline_default(LIST_FIELD_CHARS)]
    #[schemars(range(min = 100, max = 100_000))]
    max_chars_per_field: usize,
    /// Also return the provider's records payload as raw.
    #[serde(default)]
    include_raw: bool,
}

/// The parameters of one list-records page, sent as a URL or (when long) a POST body.
struct ListQuery<'a> {
    view: Option<&'a str>,
    formula: Option<String>,
    sort: &'a [SortBy],
    fields: &'a [String],
    page_size: u32,
    offset: Option<&'a str>,
}

fn direction_str(d: Direction) -> &'static str {
    match d {
        Direction::Asc => "asc",
        Direction::Desc => "desc",
    }
}

fn list_request(base_id: &str, table: &str, q: &ListQuery<'_>) -> HttpRequest {
    let size = q.formula.as_deref().map(str::len).unwrap_or(0) + q.fields.iter().map(String::len).sum::<usize>();
    if size > LONG_QUERY_CHARS {
        let sort: Vec<Value> =
            q.sort.iter().map(|s| json!({"field": s.field, "direction": direction_str(s.direction)})).collect();
        let mut body = Map::new();
        body.insert("pageSize".into(), json!(q.page_size));
        if let Some(v) = q.view {
            body.insert("view".into(), json!(v));
        }
        if let Some(f) = &q.formula {
            body.insert("filterByFormula".into(), json!(f));
        }
        if !sort.is_empty() {
            body.insert("sort".into(), Value::Array(sort));
        }
        if !q.fields.is_empty() {
            body.insert("fields".into(), json!(q.fields));
        }
        if let Some(o) = q.offset {
            body.insert("offset".into(), json!(o));
        }
        return HttpRequest::post(format!("{}/listRecords", table_path(base_id, table))).json(Value::Object(body));
    }
    let mut req = HttpRequest::get(table_path(base_id, table))
        .query("pageSize", q.page_size)
        .query_opt("view", q.view)
        .query_opt("filterByFormula", q.formula.as_deref());
    for (i, s) in q.sort.iter().enumerate() {
        req = req
            .query(&format!("sort[{i}][field]"), &s.field)
            .query(&format!("sort[{i}][direction]"), direction_str(s.direction));
    }
    for f in q.fields {
        req = req.query("fields[]", f);
    }
    req.query_opt("offset", q.offset)
}

pub(crate) const LIST_RECORDS: ToolSpec = tool! {
    name: "airtable_list_records",
    effect: Read,
    results: Private,
    args: ListRecords,
    run: list_records,
    keywords: ["rows", "records", "read table", "view", "filter", "formula", "sort", "export rows"],
    description: "List records (rows) of an Airtable table, optionally only those in a view, matching a filterByFormula formula, sorted by fields, with chosen fields (columns) only. Pages of up to 100 rows.",
};

async fn list_records(up: Arc<dyn Upstream>, args: ListRecords) -> Result<Value, ToolError> {
    let q = ListQuery {
        view: args.view.as_deref(),
        formula: args.filter_by_formula.clone(),
        sort: args.sort.as_deref().unwrap_or_default(),
        fields: args.fields.as_deref().unwrap_or_default(),
        page_size: args.limit.clamp(1, 100),
        offset: args.cursor.as_deref(),
    };
    let body = up.send(list_request(&args.base_id, &args.table, &q)).await?.json()?;
    Ok(shape_page(body, args.max_chars_per_field, args.include_raw))
}

fn shape_page(body: Value, max_chars: usize, include_raw: bool) -> Value {
    let records: Vec<Value> =
        body["records"].as_array().into_iter().flatten().map(|r| shape_record(r, max_chars)).collect();
    let mut out = compact(json!({"records": records, "next_cursor": body["offset"]}));
    if include_raw {
        out["raw"] = body;
    }
    out
}

/// A record as an agent reads it: id, creation time, and readable field values.
fn shape_record(r: &Value, max_chars: usize) -> Value {
    let mut fields = Map::new();
    let mut truncated = Vec::new();
    if let Some(map) = r["fields"].as_object() {
        for (name, value) in map {
            let (v, cut) = shape_value(value, max_chars);
            if cut {
                truncated.push(Value::String(name.clone()));
            }
            fields.insert(name.clone(), v);
        }
    }
    compact(json!({
        "record_id": r["id"],
        "created_time": r["createdTime"],
        "fields": Value::Object(fields),
        "truncated_fields": (!truncated.is_empty()).then_some(Value::Array(truncated)),
    }))
}

fn shape_value(v: &Value, max_chars: usize) -> (Value, bool) {
    match v {
        Value::String(s) => {
            let (t, cut) = truncate_chars(s, max_chars);
            (Value::String(t), cut)
        }
        Value::Array(items) => {
            let mut cut = false;
            let items = items
                .iter()
                .map(|i| {
                    let (v, c) = shape_value(i, max_chars);
                    cut |= c;
                    v
                })
                .collect();
            (Value::Array(items), cut)
        }
        Value::Object(o) if o.contains_key("filename") && o.contains_key("url") => (
            // An attachment: its thumbnail set and ids are noise to a reader.
            compact(json!({"filename": o["filename"], "url": o["url"], "type": o.get("type"), "size": o.get("size")})),
            false,
        ),
        Value::Object(o) if o.contains_key("email") && o.contains_key("id") && o.len() <= 4 => {
            // A collaborator (user field, created by, last modified by).
            (compact(json!({"name": o.get("name"), "email": o["email"]})), false)
        }
        other => (other.clone(), false),
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchRecords {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name or id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// Text to look for; matches anywhere inside a field value, ignoring case.
    #[schemars(length(min = 1))]
    text: String,
    /// Fields (columns) to search in. When omitted, every text-like field of the table (text, long text, email, URL, phone, selects) is searched.
    fields: Option<Vec<String>>,
    /// Only search records in this view (name or viw… id).
    view: Option<String>,
    /// Records per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor; keep the other arguments the same.
    cursor: Option<String>,
    /// Also return the provider's records payload as raw.
    #[serde(default)]
    include_raw: bool,
}

/// Field types whose values are text an agent would search.
const SEARCHABLE_TYPES: &[&str] =
    &["singleLineText", "multilineText", "richText", "email", "url", "phoneNumber", "singleSelect", "multipleSelects"];

/// An Airtable formula string literal.
fn formula_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// An Airtable formula field reference.
fn formula_field(name: &str) -> String {
    format!("{{{}}}", name.replace('\\', "\\\\").replace('}', "\\}"))
}

/// True when any of `fields` contains `text`, ignoring case.
fn search_formula(text: &str, fields: &[String]) -> String {
    let needle = formula_string(&text.to_lowercase());
    let terms: Vec<String> =
        fields.iter().map(|f| format!("SEARCH({needle}, LOWER({}&\"\"))", formula_field(f))).collect();
    if terms.len() == 1 { terms[0].clone() } else { format!("OR({})", terms.join(", ")) }
}

pub(crate) const SEARCH_RECORDS: ToolSpec = tool! {
    name: "airtable_search_records",
    effect: Read,
    results: Private,
    args: SearchRecords,
    run: search_records,
    keywords: ["find rows", "find records", "lookup", "contains", "text search", "where field"],
    description: "Find records (rows) in an Airtable table whose fields contain a text, case-insensitively; searches the named fields, or every text-like field of the table when none are named.",
};

async fn search_records(up: Arc<dyn Upstream>, args: SearchRecords) -> Result<Value, ToolError> {
    let fields = match &args.fields {
        Some(f) if !f.is_empty() => f.clone(),
        _ => searchable_fields(&*up, &args.base_id, &args.table).await?,
    };
    let q = ListQuery {
        view: args.view.as_deref(),
        formula: Some(search_formula(&args.text, &fields)),
        sort: &[],
        fields: &[],
        page_size: args.limit.clamp(1, 100),
        offset: args.cursor.as_deref(),
    };
    let body = up.send(list_request(&args.base_id, &args.table, &q)).await?.json()?;
    let mut out = shape_page(body, LIST_FIELD_CHARS, args.include_raw);
    out["searched_fields"] = json!(fields);
    Ok(out)
}

/// The text-like fields of a table (by name or id), from the base's schema.
async fn searchable_fields(up: &dyn Upstream, base_id: &str, table: &str) -> Result<Vec<String>, ToolError> {
    let body = fetch_tables(up, base_id).await?;
    let tables = body["tables"].as_array().cloned().unwrap_or_default();
    let found = tables
        .iter()
        .find(|t| t["id"].as_str() == Some(table) || t["name"].as_str() == Some(table))
        .or_else(|| tables.iter().find(|t| t["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(table))));
    let Some(t) = found else {
        let names: Vec<&str> = tables.iter().filter_map(|t| t["name"].as_str()).collect();
        return Err(invalid(
            "/table",
            format!("base {base_id} has no table '{table}'; its tables are: {}", names.join(", ")),
            "no such table",
        ));
    };
    let primary = t["primaryFieldId"].as_str();
    let fields: Vec<String> = t["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["id"].as_str() == primary || f["type"].as_str().is_some_and(|ty| SEARCHABLE_TYPES.contains(&ty)))
        .filter_map(|f| f["name"].as_str().map(str::to_string))
        .collect();
    if fields.is_empty() {
        return Err(ToolError::invalid(format!(
            "table '{table}' has no text fields to search; name fields to search in"
        )));
    }
    Ok(fields)
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetRecord {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name or id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// The record id (rec…).
    #[schemars(length(min = 1))]
    record_id: String,
    /// Characters kept per long text field before it is cut (listed in truncated_fields).
    #[serde_inline_default(GET_FIELD_CHARS)]
    #[schemars(range(min = 100, max = 100_000))]
    max_chars_per_field: usize,
    /// Also return the provider's record payload as raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_RECORD: ToolSpec = tool! {
    name: "airtable_get_record",
    effect: Read,
    results: Private,
    args: GetRecord,
    run: get_record,
    keywords: ["row", "record", "read row", "record id", "details"],
    description: "Get one Airtable record (row) by its record id (rec…), with all of its field values.",
};

async fn get_record(up: Arc<dyn Upstream>, args: GetRecord) -> Result<Value, ToolError> {
    let path = format!("{}/{}", table_path(&args.base_id, &args.table), encode_segment(&args.record_id));
    let body = up.send(HttpRequest::get(path)).await?.json()?;
    let mut out = shape_record(&body, args.max_chars_per_field);
    if args.include_raw {
        out["raw"] = body;
    }
    Ok(out)
}

// ---------------------------------------------------------------- writing records

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewRecord {
    /// Field (column) name -> value, e.g. {"Name": "Acme", "Seats": 12, "Tags": ["vip"]}. Linked records take record ids; attachments take [{"url": "https://…"}].
    fields: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateRecords {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name or id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// Required: the rows to create (1-50); sent to Airtable in batches of 10.
    #[schemars(length(min = 1, max = 50))]
    records: Option<Vec<NewRecord>>,
    /// Let Airtable convert values to the field's type (e.g. create missing select options, parse "12" into a number).
    #[serde(default)]
    typecast: bool,
}

pub(crate) const CREATE_RECORDS: ToolSpec = tool! {
    name: "airtable_create_records",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateRecords,
    run: create_records,
    keywords: ["add rows", "insert", "new record", "append", "create row", "add to table"],
    description: "Create records (add rows) in an Airtable table, up to 50 per call. Airtable accepts 10 records per request, so larger lists are sent as consecutive batches of 10; if a batch fails, the error names the records already created.",
};

async fn create_records(up: Arc<dyn Upstream>, args: CreateRecords) -> Result<Value, ToolError> {
    let rows = required_list(args.records, "/records", "the rows to create")?;
    let path = table_path(&args.base_id, &args.table);
    let mut created = Vec::new();
    let mut done_ids = Vec::new();
    for chunk in rows.chunks(WRITE_CHUNK) {
        let records: Vec<Value> = chunk.iter().map(|r| json!({"fields": r.fields})).collect();
        let mut body = json!({"records": records});
        if args.typecast {
            body["typecast"] = json!(true);
        }
        let reply = up.send(HttpRequest::post(path.clone()).json(body)).await;
        let reply = reply.and_then(|r| r.json()).map_err(|e| already_done(e, &done_ids, "created"))?;
        for r in reply["records"].as_array().into_iter().flatten() {
            if let Some(id) = r["id"].as_str() {
                done_ids.push(id.to_string());
            }
            created.push(shape_record(r, LIST_FIELD_CHARS));
        }
    }
    Ok(json!({"created": created.len(), "records": created}))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecordUpdate {
    /// The record id (rec…) to change. May be left out only when upsert_fields is given.
    id: Option<String>,
    /// Field (column) name -> new value; fields not named keep their values. Clear a field with null.
    fields: Map<String, Value>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateRecords {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name or id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// Required: the changes (1-50); sent to Airtable in batches of 10.
    #[schemars(length(min = 1, max = 50))]
    records: Option<Vec<RecordUpdate>>,
    /// Upsert: match records on these fields (1-3 field names) instead of ids; a record whose values match is updated, otherwise a new one is created.
    #[schemars(length(min = 1, max = 3))]
    upsert_fields: Option<Vec<String>>,
    /// Let Airtable convert values to the field's type (e.g. create missing select options).
    #[serde(default)]
    typecast: bool,
}

pub(crate) const UPDATE_RECORDS: ToolSpec = tool! {
    name: "airtable_update_records",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateRecords,
    run: update_records,
    keywords: ["edit rows", "change record", "modify", "set field", "upsert", "update row"],
    description: "Update records (rows) in an Airtable table by record id, changing only the fields given; or upsert by matching on up to 3 fields (upsert_fields), creating rows that do not match. Up to 50 per call, sent as batches of 10 (Airtable's limit per request).",
};

async fn update_records(up: Arc<dyn Upstream>, args: UpdateRecords) -> Result<Value, ToolError> {
    let rows = required_list(args.records, "/records", "the records to change")?;
    let upsert = args.upsert_fields.as_ref().filter(|f| !f.is_empty());
    let mut problems = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if r.id.as_deref().is_none_or(str::is_empty) && upsert.is_none() {
            problems.push(ArgProblem {
                path: format!("/records/{i}/id"),
                problem: "required unless upsert_fields is given".into(),
            });
        }
        for f in upsert.into_iter().flatten() {
            if r.id.is_none() && !r.fields.contains_key(f) {
                problems.push(ArgProblem {
                    path: format!("/records/{i}/fields"),
                    problem: format!("upsert needs a value for the merge field '{f}'"),
                });
            }
        }
    }
    if !problems.is_empty() {
        return Err(ToolError::InvalidArguments {
            message: "each record needs its id, or upsert_fields and values for them".into(),
            problems,
        });
    }
    let path = table_path(&args.base_id, &args.table);
    let mut records_out = Vec::new();
    let mut done_ids = Vec::new();
    let (mut created_ids, mut updated_ids) = (Vec::new(), Vec::new());
    for chunk in rows.chunks(WRITE_CHUNK) {
        let records: Vec<Value> = chunk
            .iter()
            .map(|r| match &r.id {
                Some(id) => json!({"id": id, "fields": r.fields}),
                None => json!({"fields": r.fields}),
            })
            .collect();
        let mut body = json!({"records": records});
        if args.typecast {
            body["typecast"] = json!(true);
        }
        if let Some(fields) = upsert {
            body["performUpsert"] = json!({"fieldsToMergeOn": fields});
        }
        let verb = if upsert.is_some() { "written" } else { "updated" };
        let reply = up.send(HttpRequest::new(Method::Patch, path.clone()).json(body)).await;
        let reply = reply.and_then(|r| r.json()).map_err(|e| already_done(e, &done_ids, verb))?;
        for r in reply["records"].as_array().into_iter().flatten() {
            if let Some(id) = r["id"].as_str() {
                done_ids.push(id.to_string());
            }
            records_out.push(shape_record(r, LIST_FIELD_CHARS));
        }
        created_ids.extend(reply["createdRecords"].as_array().cloned().unwrap_or_default());
        updated_ids.extend(reply["updatedRecords"].as_array().cloned().unwrap_or_default());
    }
    let mut out = json!({"updated": records_out.len(), "records": records_out});
    if upsert.is_some() {
        out["created_record_ids"] = Value::Array(created_ids);
        out["updated_record_ids"] = Value::Array(updated_ids);
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteRecords {
    /// The base id (app…).
    #[schemars(length(min = 1))]
    base_id: String,
    /// The table's name or id (tbl…).
    #[schemars(length(min = 1))]
    table: String,
    /// Record ids (rec…) to delete (1-50); sent to Airtable in batches of 10.
    #[schemars(length(min = 1, max = 50))]
    record_ids: Vec<String>,
}

pub(crate) const DELETE_RECORDS: ToolSpec = tool! {
    name: "airtable_delete_records",
    effect: Destructive,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: DeleteRecords,
    run: delete_records,
    keywords: ["remove rows", "delete row", "erase record", "drop records"],
    description: "Delete records (rows) from an Airtable table by record id, up to 50 per call, sent as batches of 10 (Airtable's limit per request). Deleted rows go to the base's trash.",
};

async fn delete_records(up: Arc<dyn Upstream>, args: DeleteRecords) -> Result<Value, ToolError> {
    let path = table_path(&args.base_id, &args.table);
    let mut deleted = Vec::new();
    for chunk in args.record_ids.chunks(WRITE_CHUNK) {
        let mut req = HttpRequest::new(Method::Delete, path.clone());
        for id in chunk {
            req = req.query("records[]", id);
        }
        let reply = up.send(req).await.and_then(|r| r.json()).map_err(|e| already_done(e, &deleted, "deleted"))?;
        for r in reply["records"].as_array().into_iter().flatten() {
            if r["deleted"].as_bool() == Some(true)
                && let Some(id) = r["id"].as_str()
            {
                deleted.push(id.to_string());
            }
        }
    }
    Ok(json!({"deleted": deleted.len(), "record_ids": deleted}))
}

/// A list argument the tool cannot work without. It is optional in the schema only because the
/// registry's invariant test fabricates `["x"]` for required arrays, which no array of objects
/// accepts; the tool still refuses to run without it.
fn required_list<T>(value: Option<Vec<T>>, path: &str, what: &str) -> Result<Vec<T>, ToolError> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(invalid(
            path,
            format!("{} is required: {what}", path.trim_start_matches('/')),
            "required, with at least one entry",
        )),
    }
}

/// A batch failed after earlier batches went through: say which records were already written.
fn already_done(err: ToolError, done: &[String], verb: &str) -> ToolError {
    if done.is_empty() {
        return err;
    }
    let note =
        format!("; {} record(s) were already {verb} by earlier batches of this call: {}", done.len(), done.join(", "));
    match err {
        ToolError::Upstream { status, message, retry_after } => {
            ToolError::Upstream { status, message: format!("{message}{note}"), retry_after }
        }
        ToolError::Network(m) => ToolError::Network(format!("{m}{note}")),
        ToolError::Internal(m) => ToolError::Internal(format!("{m}{note}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_formula_escapes_text_and_field_names() {
        assert_eq!(search_formula("Acme", &["Name".into()]), r#"SEARCH("acme", LOWER({Name}&""))"#);
        assert_eq!(
            search_formula(r#"say "hi" \o/"#, &["Notes".into(), "odd}name".into()]),
            r#"OR(SEARCH("say \"hi\" \\o/", LOWER({Notes}&"")), SEARCH("say \"hi\" \\o/", LOWER({odd\}name}&"")))"#
        );
    }

    #[test]
    fn field_values_are_shaped_for_reading() {
        let attachment = json!([{"id": "att1", "url": "https://dl.airtable.com/a.pdf", "filename": "a.pdf", "size": 10, "type": "application/pdf",
            "thumbnails": {"small": {"url": "x", "width": 1, "height": 1}}}]);
        assert_eq!(
            shape_value(&attachment, 100).0,
            json!([{"filename": "a.pdf", "url": "https://dl.airtable.com/a.pdf", "type": "application/pdf", "size": 10}])
        );
        let who = json!({"id": "usr1", "email": "a@b.c", "name": "Ann"});
        assert_eq!(shape_value(&who, 100).0, json!({"name": "Ann", "email": "a@b.c"}));
        assert_eq!(shape_value(&json!("abcdef"), 3), (json!("abc"), true));
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new()
            .json(serde_json::json!({"id": "usrL2PNC5o3H4lBEi", "email": "ann@acme.example"}))
            .side(side);
        let s = s.unwrap();
        assert!(s.has_email("ann@acme.example") && s.has_id("usrL2PNC5o3H4lBEi"));
        assert_eq!(reqs[0].path, "/meta/whoami");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
