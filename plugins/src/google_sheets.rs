//! Google Sheets: read and write cell values by A1 range (values as rows), append rows, clear,
//! create spreadsheets and tabs, list tabs. Finding a spreadsheet by name is Drive's job
//! (`google_drive_search_files`); the Sheets API has no search.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
use crate::flow::{Audience, Side, Verdict};
use crate::google::{self, invalid};
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "google_sheets",
    display_name: "Google Sheets",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[],
        inject: Inject::Bearer("token"),
        // The Sheets API has no "who am I"; the OpenID userinfo endpoint names the account.
        identity: Some(Identity {
            request: || HttpRequest::get("/userinfo").on("userinfo_base_url"),
            label: |b| b["email"].as_str().or(b["name"].as_str()).map(str::to_string),
        }),
        // drive.metadata.readonly: who owns a spreadsheet and who it is shared with, for the
        // outbound-data guard (the Sheets API does not say).
        oauth: Some(google::oauth(&[
            "https://www.googleapis.com/auth/spreadsheets",
            "https://www.googleapis.com/auth/drive.metadata.readonly",
            "openid",
            "email",
        ])),
    },
    keywords: &["spreadsheet", "sheet", "google sheets", "gsheet", "worksheet", "rows", "columns", "excel"],
    hosts: &[
        Host { key: "base_url", default_url: "https://sheets.googleapis.com/v4" },
        Host { key: "userinfo_base_url", default_url: "https://openidconnect.googleapis.com/v1" },
        Host { key: "drive_base_url", default_url: "https://www.googleapis.com/drive/v3" },
    ],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(60),
    side: Some(flow_side),
    tools: &[GET_VALUES, UPDATE_VALUES, ADD_ROWS, DELETE_VALUES, CREATE_SPREADSHEET, GET_SPREADSHEET, CREATE_SHEET],
    error_message: google::error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the OpenID
/// userinfo `email` (the Sheets API has no "who am I").
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/userinfo").on("userinfo_base_url")).await?.json()?;
        crate::flow::side_from(&me, &["/email"], &[])
    })
}

/// Writing into a spreadsheet (values, rows, a new tab): its owners and everyone it is shared
/// with read what is written (flows.md section 3, "files written into someone else's
/// document"). Looked up through the Drive API (`GET /files/{id}` with owners and permissions,
/// on `drive_base_url`); a new spreadsheet, and clearing values, are the user's own.
fn spreadsheet_audience(up: Arc<dyn Upstream>, args: Value, side: Arc<Side>) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let id = crate::flow::arg_str(&args, "spreadsheet_id")
            .ok_or_else(|| crate::flow::undecided("no spreadsheet_id given"))?;
        crate::google_drive::flow::file_verdict_on(&*up, "drive_base_url", id, &side).await
    })
}

/// Cell values as rows. A flat list of plain values is taken as one row.
#[derive(Debug, Clone, PartialEq)]
struct Rows(Vec<Vec<Value>>);

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<Value>::deserialize(d)?;
        if items.iter().all(Value::is_array) {
            let mut rows = Vec::with_capacity(items.len());
            for item in items {
                let Value::Array(cells) = item else { unreachable!() };
                if cells.iter().any(|c| c.is_array() || c.is_object()) {
                    return Err(serde::de::Error::custom("a cell must be a string, number, boolean or null"));
                }
                rows.push(cells);
            }
            Ok(Rows(rows))
        } else if items.iter().all(|c| !c.is_array() && !c.is_object()) {
            Ok(Rows(vec![items]))
        } else {
            Err(serde::de::Error::custom(
                "values are rows (arrays of cells), e.g. [[\"Name\", \"Qty\"], [\"Apples\", 3]]",
            ))
        }
    }
}

impl JsonSchema for Rows {
    fn schema_name() -> Cow<'static, str> {
        "Rows".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": {
                "type": ["array", "string", "number", "boolean", "null"],
                "items": {"type": ["string", "number", "boolean", "null"]}
            }
        })
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ValueInput {
    #[default]
    UserEntered,
    Raw,
}

impl ValueInput {
    fn api(self) -> &'static str {
        match self {
            ValueInput::UserEntered => "USER_ENTERED",
            ValueInput::Raw => "RAW",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ValueRender {
    #[default]
    FormattedValue,
    UnformattedValue,
    Formula,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Dimension {
    #[default]
    Rows,
    Columns,
}

fn sheet_path(id: &str) -> String {
    format!("/spreadsheets/{}", encode_segment(id))
}

fn values_path(id: &str, range: &str) -> String {
    format!("{}/values/{}", sheet_path(id), encode_segment(range.trim()))
}

fn check_range(path: &str, range: &str) -> Result<(), ToolError> {
    if range.trim().is_empty() {
        return Err(invalid(path, "give an A1 range such as \"Sheet1!A1:D20\" or a tab name such as \"Sheet1\""));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------- read

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetValues {
    /// The spreadsheet id: the long id in its URL (docs.google.com/spreadsheets/d/<id>/edit), or from google_drive_search_files.
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// A1 range to read, e.g. "Sheet1!A1:D50", "Sheet1!A:C" (whole columns) or "Sheet1" (the whole tab); quote tab names with spaces: "'Q3 Sales'!A1:F".
    #[schemars(length(min = 1))]
    range: String,
    /// More ranges to read in the same call.
    ranges: Option<Vec<String>>,
    /// formatted_value (as shown, default), unformatted_value (raw numbers) or formula (the formulas themselves).
    #[serde(default)]
    value_render_option: ValueRender,
    /// rows (default: each inner list is a row) or columns.
    #[serde(default)]
    major_dimension: Dimension,
    /// Return at most this many rows per range (1-10000); `truncated: true` says there were more.
    #[serde_inline_default(1_000)]
    #[schemars(range(min = 1, max = 10_000))]
    max_rows: usize,
}

fn render_api(r: ValueRender) -> &'static str {
    match r {
        ValueRender::FormattedValue => "FORMATTED_VALUE",
        ValueRender::UnformattedValue => "UNFORMATTED_VALUE",
        ValueRender::Formula => "FORMULA",
    }
}

fn dimension_api(d: Dimension) -> &'static str {
    match d {
        Dimension::Rows => "ROWS",
        Dimension::Columns => "COLUMNS",
    }
}

fn shape_value_range(vr: &Value, max_rows: usize) -> Value {
    let rows = vr["values"].as_array().cloned().unwrap_or_default();
    let total = rows.len();
    let kept: Vec<Value> = rows.into_iter().take(max_rows).collect();
    compact(json!({
        "range": vr["range"],
        "major_dimension": (vr["majorDimension"] == "COLUMNS").then_some("columns"),
        "row_count": total,
        "rows": kept,
        "truncated": (total > max_rows).then_some(true),
    }))
}

pub(crate) const GET_VALUES: ToolSpec = tool! {
    name: "google_sheets_get_values",
    effect: Read,
    results: Private,
    args: GetValues,
    run: get_values,
    keywords: ["read cells", "cell", "read spreadsheet", "get rows", "cell values", "lookup", "table data", "A1 range", "read a range", "cell range"],
    description: "Read cell values from a Google Sheets spreadsheet by A1 range (e.g. \"Sheet1!A1:D50\", \"Sheet1\" for a whole tab), as rows; several ranges at once. Find the spreadsheet id with google_drive_search_files.",
};

async fn get_values(up: Arc<dyn Upstream>, args: GetValues) -> Result<Value, ToolError> {
    check_range("/range", &args.range)?;
    let extra: Vec<&String> = args.ranges.iter().flatten().filter(|r| !r.trim().is_empty()).collect();
    let render = render_api(args.value_render_option);
    let dim = dimension_api(args.major_dimension);
    if extra.is_empty() {
        let req = HttpRequest::get(values_path(&args.spreadsheet_id, &args.range))
            .query("valueRenderOption", render)
            .query("majorDimension", dim);
        let body = up.send(req).await?.json()?;
        return Ok(shape_value_range(&body, args.max_rows));
    }
    let mut req = HttpRequest::get(format!("{}/values:batchGet", sheet_path(&args.spreadsheet_id)));
    for r in std::iter::once(&args.range).chain(extra) {
        req = req.query("ranges", r.trim());
    }
    let body = up.send(req.query("valueRenderOption", render).query("majorDimension", dim)).await?.json()?;
    let ranges: Vec<Value> =
        body["valueRanges"].as_array().into_iter().flatten().map(|vr| shape_value_range(vr, args.max_rows)).collect();
    Ok(json!({ "ranges": ranges }))
}

// ------------------------------------------------------------------------------------ write

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateValues {
    /// The spreadsheet id (from its URL or google_drive_search_files).
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// A1 range to write, e.g. "Sheet1!B2:D3", or just the top-left cell "Sheet1!B2" (the rows decide the size).
    #[schemars(length(min = 1))]
    range: String,
    /// Rows of cell values, e.g. [["Name", "Qty"], ["Apples", 3], ["Total", "=SUM(B2:B2)"]]; "" empties a cell.
    values: Rows,
    /// user_entered (default: parsed as if typed, so "=SUM(A1:A3)" is a formula and "2026-03-01" a date) or raw (stored exactly as given).
    #[serde(default)]
    value_input_option: ValueInput,
}

fn check_rows(rows: &Rows) -> Result<(), ToolError> {
    if rows.0.is_empty() || rows.0.iter().all(Vec::is_empty) {
        return Err(invalid("/values", "give at least one row with one value"));
    }
    Ok(())
}

fn shape_update(u: &Value) -> Value {
    compact(json!({
        "updated_range": u["updatedRange"],
        "updated_rows": u["updatedRows"],
        "updated_columns": u["updatedColumns"],
        "updated_cells": u["updatedCells"],
    }))
}

pub(crate) const UPDATE_VALUES: ToolSpec = tool! {
    name: "google_sheets_update_values",
    effect: Write,
    results: Private,
    audience: Audience::Decide(spreadsheet_audience),
    args: UpdateValues,
    run: update_values,
    keywords: ["write cells", "edit spreadsheet", "set cell", "overwrite range", "fill in", "formula"],
    description: "Write (overwrite) cells of a Google Sheets range with rows of values; formulas and dates are parsed as if typed (USER_ENTERED) unless raw is asked for.",
};

async fn update_values(up: Arc<dyn Upstream>, args: UpdateValues) -> Result<Value, ToolError> {
    check_range("/range", &args.range)?;
    check_rows(&args.values)?;
    let req = HttpRequest::new(Method::Put, values_path(&args.spreadsheet_id, &args.range))
        .query("valueInputOption", args.value_input_option.api())
        .json(json!({"majorDimension": "ROWS", "values": args.values.0}));
    let body = up.send(req).await?.json()?;
    Ok(shape_update(&body))
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum InsertData {
    #[default]
    InsertRows,
    Overwrite,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddRows {
    /// The spreadsheet id (from its URL or google_drive_search_files).
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// The tab (e.g. "Sheet1") or table range (e.g. "Sheet1!A:E") to append to; rows go after the table's last row.
    #[schemars(length(min = 1))]
    range: String,
    /// Rows to add, e.g. [["2026-03-02", "Coffee", 4.5]]; one flat list is one row.
    values: Rows,
    /// user_entered (default: parsed as if typed) or raw (stored exactly as given).
    #[serde(default)]
    value_input_option: ValueInput,
    /// insert_rows (default: new rows are inserted, nothing below is overwritten) or overwrite (write into empty cells after the table).
    #[serde(default)]
    insert_data_option: InsertData,
}

pub(crate) const ADD_ROWS: ToolSpec = tool! {
    name: "google_sheets_add_rows",
    effect: Write,
    results: Private,
    audience: Audience::Decide(spreadsheet_audience),
    args: AddRows,
    run: add_rows,
    keywords: ["append rows", "add row", "insert rows", "log to sheet", "add record", "new line", "append a row", "add to the bottom"],
    description: "Append rows to a spreadsheet: add rows after the last row of a table in a Google Sheets tab (values.append), e.g. to log entries or add records.",
};

async fn add_rows(up: Arc<dyn Upstream>, args: AddRows) -> Result<Value, ToolError> {
    check_range("/range", &args.range)?;
    check_rows(&args.values)?;
    let insert = match args.insert_data_option {
        InsertData::InsertRows => "INSERT_ROWS",
        InsertData::Overwrite => "OVERWRITE",
    };
    let req = HttpRequest::post(format!("{}:append", values_path(&args.spreadsheet_id, &args.range)))
        .query("valueInputOption", args.value_input_option.api())
        .query("insertDataOption", insert)
        .json(json!({"majorDimension": "ROWS", "values": args.values.0}));
    let body = up.send(req).await?.json()?;
    let mut out = shape_update(&body["updates"]);
    if let Some(t) = body["tableRange"].as_str() {
        out["table_range"] = json!(t);
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteValues {
    /// The spreadsheet id.
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// A1 range to clear, e.g. "Sheet1!A2:F100" or "Sheet1" (every value on the tab).
    #[schemars(length(min = 1))]
    range: String,
}

pub(crate) const DELETE_VALUES: ToolSpec = tool! {
    name: "google_sheets_delete_values",
    effect: Destructive,
    results: Private,
    audience: Audience::Own,
    args: DeleteValues,
    run: delete_values,
    keywords: ["clear cells", "erase range", "empty cells", "remove values", "cell"],
    description: "Clear the values of a Google Sheets range (cells become empty; formatting and the rows themselves stay).",
};

async fn delete_values(up: Arc<dyn Upstream>, args: DeleteValues) -> Result<Value, ToolError> {
    check_range("/range", &args.range)?;
    let req = HttpRequest::post(format!("{}:clear", values_path(&args.spreadsheet_id, &args.range))).json(json!({}));
    let body = up.send(req).await?.json()?;
    Ok(json!({"cleared_range": body["clearedRange"]}))
}

// ------------------------------------------------------------------------------ spreadsheets

fn shape_sheet(p: &Value) -> Value {
    let grid = &p["gridProperties"];
    compact(json!({
        "sheet_id": p["sheetId"],
        "title": p["title"],
        "index": p["index"],
        "type": p["sheetType"].as_str().filter(|t| *t != "GRID").map(str::to_lowercase),
        "rows": grid["rowCount"],
        "columns": grid["columnCount"],
        "frozen_rows": grid["frozenRowCount"],
        "frozen_columns": grid["frozenColumnCount"],
        "hidden": p["hidden"].as_bool().filter(|h| *h),
    }))
}

fn sheets_of(s: &Value) -> Vec<Value> {
    s["sheets"].as_array().into_iter().flatten().map(|sh| shape_sheet(&sh["properties"])).collect()
}

/// A tab name as the start of an A1 range ('Q3 Sales'!A1), quotes doubled.
fn a1_sheet(title: &str) -> String {
    format!("'{}'", title.replace('\'', "''"))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateSpreadsheet {
    /// The spreadsheet's title (its file name in Drive).
    #[schemars(length(min = 1))]
    title: String,
    /// Names of the tabs to create, in order (default: one tab, "Sheet1").
    sheet_titles: Option<Vec<String>>,
    /// Rows to write into the first tab from A1, e.g. [["Name", "Email"], ["Ada", "ada@example.com"]].
    values: Option<Rows>,
}

pub(crate) const CREATE_SPREADSHEET: ToolSpec = tool! {
    name: "google_sheets_create_spreadsheet",
    effect: Write,
    results: Private,
    audience: Audience::Own,
    args: CreateSpreadsheet,
    run: create_spreadsheet,
    keywords: ["new spreadsheet", "new sheet", "create workbook", "start a spreadsheet"],
    description: "Create a new Google Sheets spreadsheet with a title, optional sheet names and optional starting rows in the first sheet; returns its id and link.",
};

async fn create_spreadsheet(up: Arc<dyn Upstream>, args: CreateSpreadsheet) -> Result<Value, ToolError> {
    let mut body = json!({"properties": {"title": args.title}});
    if let Some(titles) = args.sheet_titles.as_ref().filter(|t| !t.is_empty()) {
        body["sheets"] = Value::Array(titles.iter().map(|t| json!({"properties": {"title": t}})).collect());
    }
    if let Some(v) = &args.values {
        check_rows(v)?;
    }
    let s = up.send(HttpRequest::post("/spreadsheets").json(body)).await?.json()?;
    let id = s["spreadsheetId"].as_str().unwrap_or_default().to_string();
    let sheets = sheets_of(&s);
    let mut out = compact(json!({
        "spreadsheet_id": id,
        "title": s["properties"]["title"],
        "url": s["spreadsheetUrl"],
        "sheets": sheets,
    }));
    if let Some(values) = args.values {
        let first = sheets.first().and_then(|sh| sh["title"].as_str()).unwrap_or("Sheet1");
        let req = HttpRequest::new(Method::Put, values_path(&id, &format!("{}!A1", a1_sheet(first))))
            .query("valueInputOption", "USER_ENTERED")
            .json(json!({"majorDimension": "ROWS", "values": values.0}));
        let written = match up.send(req).await {
            Ok(r) => r.json()?,
            Err(ToolError::Upstream { status, message, retry_after }) => {
                return Err(ToolError::Upstream {
                    status,
                    message: format!(
                        "the spreadsheet was created (spreadsheet_id {id}) but writing the values failed: {message}"
                    ),
                    retry_after,
                });
            }
            Err(e) => return Err(e),
        };
        if let Value::Object(o) = &mut out
            && let Value::Object(u) = shape_update(&written)
        {
            o.extend(u);
        }
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetSpreadsheet {
    /// The spreadsheet id (from its URL or google_drive_search_files).
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// Also return Sheets' spreadsheet object as `raw`.
    #[serde(default)]
    include_raw: bool,
}

const SPREADSHEET_FIELDS: &str = "spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount,frozenRowCount,frozenColumnCount)))";

pub(crate) const GET_SPREADSHEET: ToolSpec = tool! {
    name: "google_sheets_get_spreadsheet",
    effect: Read,
    results: Private,
    args: GetSpreadsheet,
    run: get_spreadsheet,
    keywords: ["list tabs", "sheet names", "worksheets", "spreadsheet info", "sheet size"],
    description: "Get a Google Sheets spreadsheet's title, link, locale and time zone, and its tabs (worksheets): sheet ids, names, positions and sizes in rows and columns.",
};

async fn get_spreadsheet(up: Arc<dyn Upstream>, args: GetSpreadsheet) -> Result<Value, ToolError> {
    let req = HttpRequest::get(sheet_path(&args.spreadsheet_id)).query("fields", SPREADSHEET_FIELDS);
    let s = up.send(req).await?.json()?;
    let mut out = compact(json!({
        "spreadsheet_id": s["spreadsheetId"],
        "title": s["properties"]["title"],
        "url": s["spreadsheetUrl"],
        "locale": s["properties"]["locale"],
        "time_zone": s["properties"]["timeZone"],
        "sheets": sheets_of(&s),
    }));
    if args.include_raw {
        out["raw"] = s;
    }
    Ok(out)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateSheet {
    /// The spreadsheet id.
    #[schemars(length(min = 1))]
    spreadsheet_id: String,
    /// Name of the new tab, unique within the spreadsheet.
    #[schemars(length(min = 1))]
    title: String,
    /// Position among the tabs, 0 = first (default: last).
    index: Option<u32>,
    /// Number of rows (default 1000).
    #[schemars(range(min = 1))]
    rows: Option<u32>,
    /// Number of columns (default 26, A-Z).
    #[schemars(range(min = 1))]
    columns: Option<u32>,
}

pub(crate) const CREATE_SHEET: ToolSpec = tool! {
    name: "google_sheets_create_sheet",
    effect: Write,
    results: Private,
    audience: Audience::Decide(spreadsheet_audience),
    args: CreateSheet,
    run: create_sheet,
    keywords: ["add tab", "new tab", "add worksheet", "new sheet tab", "spreadsheet tab"],
    description: "Add a tab (worksheet) to an existing Google Sheets spreadsheet, with an optional position and size.",
};

async fn create_sheet(up: Arc<dyn Upstream>, args: CreateSheet) -> Result<Value, ToolError> {
    let mut props = json!({"title": args.title});
    if let Some(i) = args.index {
        props["index"] = json!(i);
    }
    if args.rows.is_some() || args.columns.is_some() {
        let mut grid = json!({});
        if let Some(r) = args.rows {
            grid["rowCount"] = json!(r);
        }
        if let Some(c) = args.columns {
            grid["columnCount"] = json!(c);
        }
        props["gridProperties"] = grid;
    }
    let req = HttpRequest::post(format!("{}:batchUpdate", sheet_path(&args.spreadsheet_id)))
        .json(json!({"requests": [{"addSheet": {"properties": props}}]}));
    let body = up.send(req).await?.json()?;
    let added = &body["replies"][0]["addSheet"]["properties"];
    Ok(shape_sheet(added))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_accept_a_grid_or_one_flat_row() {
        let r: Rows = serde_json::from_value(json!([["a", 1], ["b", true, null]])).unwrap();
        assert_eq!(r.0, vec![vec![json!("a"), json!(1)], vec![json!("b"), json!(true), Value::Null]]);
        let r: Rows = serde_json::from_value(json!(["2026-03-02", "Coffee", 4.5])).unwrap();
        assert_eq!(r.0.len(), 1);
        assert!(serde_json::from_value::<Rows>(json!([["a"], "b"])).is_err());
        assert!(serde_json::from_value::<Rows>(json!([[{"v": 1}]])).is_err());
    }

    #[test]
    fn ranges_and_tab_names_encode() {
        assert_eq!(values_path("1Abc", "'Q3 Sales'!A1:F"), "/spreadsheets/1Abc/values/%27Q3%20Sales%27%21A1%3AF");
        assert_eq!(a1_sheet("Bob's tab"), "'Bob''s tab'");
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::flow::Results;
    use crate::mock::MockUpstream;

    fn me() -> Side {
        Side::from_email("ann@acme.example")
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_userinfo_email() {
        let side = INTEGRATION.side.unwrap();
        let (s, reqs) = MockUpstream::new().json(json!({"email": "ann@acme.example"})).side(side);
        assert_eq!(s.unwrap(), me());
        assert_eq!((reqs[0].host, reqs[0].path.as_str()), ("userinfo_base_url", "/userinfo"));
        assert!(MockUpstream::new().json(json!({"name": "Ann"})).side(side).0.is_err());
    }

    #[test]
    fn writes_follow_the_spreadsheets_owner_and_sharing() {
        let args = json!({"spreadsheet_id": "s1", "range": "A1", "values": [["x"]], "title": "t"});
        let own = json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "user", "emailAddress": "bob@acme.example"}]});
        for tool in [&UPDATE_VALUES, &ADD_ROWS, &CREATE_SHEET] {
            let (v, reqs) = MockUpstream::new().json(own.clone()).audience(tool, args.clone(), &me());
            assert_eq!(v.unwrap(), Verdict::Inside, "{}", tool.name);
            assert_eq!((reqs[0].host, reqs[0].path.as_str()), ("drive_base_url", "/files/s1"));
        }
        for theirs in [
            json!({"owners": [{"emailAddress": "m@evil.example"}], "permissions": [{"type": "user", "emailAddress": "ann@acme.example"}]}),
            json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "anyone"}]}),
            json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "domain", "domain": "acme.example.evil.example"}]}),
        ] {
            let v = MockUpstream::new().json(theirs.clone()).verdict(&ADD_ROWS, args.clone(), &me());
            assert!(matches!(v, Verdict::Outside { grants: false, .. }), "{theirs}");
        }
        let err = ToolError::Upstream { status: 403, message: "insufficient scope".into(), retry_after: None };
        assert!(MockUpstream::new().error(err).audience(&UPDATE_VALUES, args.clone(), &me()).0.is_err());
        assert_eq!(MockUpstream::new().verdict(&CREATE_SPREADSHEET, json!({"title": "t"}), &me()), Verdict::Inside);
    }
}

#[cfg(test)]
mod tool_tests;
