//! Google Sheets against a fake of `sheets.googleapis.com/v4` (plus the OpenID userinfo endpoint
//! for the identity) that checks the bearer token, decodes A1 ranges from the path (with the
//! `:append`/`:clear`/`:batchUpdate` custom verbs after the last raw colon), requires
//! `valueInputOption` on writes like Sheets does, and answers with Sheets' own resources and
//! `{error: {code, message, status, details}}` errors. (The Sheets API has no paginated endpoint,
//! so there is no cursor round trip here; `max_rows` truncation is tested instead.)

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "ya29.a0AfB_sheets-test-access-token";
const BOOK: &str = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms";
const NEW_BOOK: &str = "1NewSheetIdXyZ0123456789abcdefghijklmnopqr";

fn sheets_error(code: u16, status: &str, message: &str, reason: Option<&str>) -> Reply {
    let mut e = json!({"code": code, "message": message, "status": status});
    if let Some(r) = reason {
        e["details"] = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": r, "domain": "googleapis.com",
                                "metadata": {"service": "sheets.googleapis.com", "consumer": "projects/123456789"}}]);
    }
    Reply::json(code, json!({ "error": e }))
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap(), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn sales(render: &str) -> Vec<Value> {
    match render {
        "UNFORMATTED_VALUE" => vec![
            json!(["Region", "Revenue", "Double"]),
            json!(["EMEA", 1250, 2500]),
            json!(["APAC", 980.5, 1961]),
            json!(["LATAM"]),
        ],
        "FORMULA" => vec![
            json!(["Region", "Revenue", "Double"]),
            json!(["EMEA", 1250, "=B2*2"]),
            json!(["APAC", 980.5, "=B3*2"]),
            json!(["LATAM"]),
        ],
        _ => vec![
            json!(["Region", "Revenue", "Double"]),
            json!(["EMEA", "$1,250.00", "$2,500.00"]),
            json!(["APAC", "$980.50", "$1,961.00"]),
            json!(["LATAM"]),
        ],
    }
}

fn tabs() -> Value {
    json!([
        {"properties": {"sheetId": 0, "title": "Sales", "index": 0, "sheetType": "GRID", "gridProperties": {"rowCount": 1000, "columnCount": 26, "frozenRowCount": 1}}},
        {"properties": {"sheetId": 1834712, "title": "Q3 Sales", "index": 1, "sheetType": "GRID", "hidden": true, "gridProperties": {"rowCount": 200, "columnCount": 8}}},
        {"properties": {"sheetId": 99, "title": "Chart1", "index": 2, "sheetType": "OBJECT"}}
    ])
}

fn spreadsheet_meta() -> Value {
    json!({
        "spreadsheetId": BOOK,
        "properties": {"title": "2026 Revenue", "locale": "en_US", "timeZone": "Europe/Berlin"},
        "sheets": tabs(),
        "spreadsheetUrl": format!("https://docs.google.com/spreadsheets/d/{BOOK}/edit")
    })
}

fn col_index(letters: &str) -> u32 {
    letters.bytes().fold(0, |acc, b| acc * 26 + u32::from(b - b'A' + 1))
}

fn col_letters(mut n: u32) -> String {
    let mut s = Vec::new();
    while n > 0 {
        let r = (n - 1) % 26;
        s.push(b'A' + r as u8);
        n = (n - 1) / 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap()
}

/// The A1 range Sheets reports as updated for rows written from the range's top-left cell.
fn written_range(range: &str, rows: &[Value]) -> (String, usize, usize) {
    let (sheet, cells) = range.split_once('!').unwrap_or((range, "A1"));
    let start = cells.split(':').next().unwrap();
    let letters: String = start.chars().take_while(char::is_ascii_alphabetic).collect();
    let row: usize = start[letters.len()..].parse().unwrap_or(1);
    let width = rows.iter().map(|r| r.as_array().map_or(0, Vec::len)).max().unwrap_or(0);
    let end_col = col_letters(col_index(&letters) + width as u32 - 1);
    (format!("{sheet}!{start}:{end_col}{}", row + rows.len() - 1), rows.len(), width)
}

fn known_sheet(book: &str, range: &str) -> bool {
    let sheet = range.split('!').next().unwrap().trim_matches('\'');
    match book {
        BOOK => ["Sales", "Q3 Sales"].contains(&sheet),
        NEW_BOOK => ["Roster", "Notes"].contains(&sheet),
        _ => false,
    }
}

fn check_rows(body: &Value) -> Result<&Vec<Value>, Reply> {
    if body["majorDimension"] != "ROWS" {
        return Err(sheets_error(400, "INVALID_ARGUMENT", "Invalid value at 'data.major_dimension'", None));
    }
    match body["values"].as_array() {
        Some(rows) if rows.iter().all(Value::is_array) => Ok(rows),
        _ => Err(sheets_error(
            400,
            "INVALID_ARGUMENT",
            "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue)",
            None,
        )),
    }
}

fn sheets(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return sheets_error(400, "INVALID_ARGUMENT", "bad request", None);
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return sheets_error(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            Some("ACCESS_TOKEN_EXPIRED"),
        );
    }
    if r.path == "/v1/userinfo" {
        return Reply::json(
            200,
            json!({"sub": "110248495921238986420", "name": "Bob Smith", "given_name": "Bob", "family_name": "Smith", "picture": "https://lh3.googleusercontent.com/a/x", "email": "bob@example.com", "email_verified": true}),
        );
    }
    let Some(rest) = r.path.strip_prefix("/v4/spreadsheets") else {
        return sheets_error(404, "NOT_FOUND", "Requested entity was not found.", None);
    };
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let json_body = r.header("content-type").is_some_and(|c| c.starts_with("application/json"));
    // The custom verb follows the last raw (unescaped) colon.
    let (raw, verb) = match rest.rsplit_once(':') {
        Some((p, v)) => (p, Some(v)),
        None => (rest, None),
    };
    let segs: Vec<String> = raw.trim_start_matches('/').split('/').map(pct_decode).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).filter(|s| !s.is_empty()).collect();
    let book = segs.first().copied().unwrap_or("");
    if book == "busy" {
        return sheets_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:123456789'.", Some("RATE_LIMIT_EXCEEDED"))
            .with_header("retry-after", "120");
    }
    if !segs.is_empty() && book != BOOK && book != NEW_BOOK {
        return sheets_error(404, "NOT_FOUND", "Requested entity was not found.", None);
    }
    match (r.method.as_str(), segs.as_slice(), verb) {
        ("POST", [], None) if json_body => {
            let title = body["properties"]["title"].as_str().unwrap_or("Untitled spreadsheet");
            let names: Vec<String> = match body["sheets"].as_array() {
                Some(s) => s.iter().map(|x| x["properties"]["title"].as_str().unwrap().to_string()).collect(),
                None => vec!["Sheet1".to_string()],
            };
            let sheets: Vec<Value> = names
                .iter()
                .enumerate()
                .map(|(i, n)| json!({"properties": {"sheetId": if i == 0 { 0 } else { 401_000 + i }, "title": n, "index": i, "sheetType": "GRID", "gridProperties": {"rowCount": 1000, "columnCount": 26}}}))
                .collect();
            Reply::json(
                200,
                json!({
                    "spreadsheetId": NEW_BOOK,
                    "properties": {"title": title, "locale": "en_US", "autoRecalc": "ON_CHANGE", "timeZone": "Etc/GMT",
                                   "defaultFormat": {"backgroundColor": {"red": 1, "green": 1, "blue": 1}, "padding": {"top": 2, "right": 3, "bottom": 2, "left": 3}, "verticalAlignment": "BOTTOM", "wrapStrategy": "OVERFLOW_CELL", "textFormat": {"foregroundColor": {}, "fontFamily": "arial,sans,sans-serif", "fontSize": 10, "bold": false, "italic": false, "strikethrough": false, "underline": false}},
                                   "spreadsheetTheme": {"primaryFontFamily": "Arial"}},
                    "sheets": sheets,
                    "spreadsheetUrl": format!("https://docs.google.com/spreadsheets/d/{NEW_BOOK}/edit")
                }),
            )
        }
        ("GET", [_], None) => {
            let expected = "spreadsheetId,spreadsheetUrl,properties(title,locale,timeZone),sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount,frozenRowCount,frozenColumnCount)))";
            if r.q("fields") != Some(expected) {
                return sheets_error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", None);
            }
            Reply::json(200, spreadsheet_meta())
        }
        ("POST", [_], Some("batchUpdate")) if json_body => {
            let Some(props) = body["requests"][0]["addSheet"]["properties"].as_object() else {
                return sheets_error(400, "INVALID_ARGUMENT", "Invalid requests[0]: No request set.", None);
            };
            let title = props["title"].as_str().unwrap_or("");
            if title == "Sales" {
                return sheets_error(
                    400,
                    "INVALID_ARGUMENT",
                    "Invalid requests[0].addSheet: A sheet with the name \"Sales\" already exists. Please enter another name.",
                    None,
                );
            }
            let grid = &props.get("gridProperties").cloned().unwrap_or(json!({}));
            Reply::json(
                200,
                json!({"spreadsheetId": book, "replies": [{"addSheet": {"properties": {
                    "sheetId": 2093416171u64, "title": title, "index": props.get("index").cloned().unwrap_or(json!(2)), "sheetType": "GRID",
                    "gridProperties": {"rowCount": grid.get("rowCount").cloned().unwrap_or(json!(1000)), "columnCount": grid.get("columnCount").cloned().unwrap_or(json!(26))}
                }}}]}),
            )
        }
        ("GET", [_, "values"], Some("batchGet")) => {
            let ranges: Vec<&str> = r.query.iter().filter(|(k, _)| k == "ranges").map(|(_, v)| v.as_str()).collect();
            let value_ranges: Vec<Value> = ranges
                .iter()
                .map(|range| json!({"range": range, "majorDimension": "ROWS", "values": if range.starts_with("Sales") { sales("FORMATTED_VALUE") } else { vec![json!(["Week", "Units"]), json!(["W27", "14"])] }}))
                .collect();
            Reply::json(200, json!({"spreadsheetId": book, "valueRanges": value_ranges}))
        }
        ("GET", [_, "values", range], None) => {
            if !known_sheet(book, range) {
                return sheets_error(400, "INVALID_ARGUMENT", &format!("Unable to parse range: {range}"), None);
            }
            let render = r.q("valueRenderOption").unwrap_or("FORMATTED_VALUE");
            if !["FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA"].contains(&render) {
                return sheets_error(400, "INVALID_ARGUMENT", "Invalid value at 'value_render_option'", None);
            }
            let values = sales(render);
            if r.q("majorDimension") == Some("COLUMNS") {
                return Reply::json(
                    200,
                    json!({"range": "Sales!A1:C4", "majorDimension": "COLUMNS", "values": [["Region", "EMEA", "APAC", "LATAM"], ["Revenue", "$1,250.00", "$980.50"]]}),
                );
            }
            Reply::json(200, json!({"range": "Sales!A1:Z1000", "majorDimension": "ROWS", "values": values}))
        }
        ("PUT", [_, "values", range], None) if json_body => {
            let Some(input) = r.q("valueInputOption") else {
                return sheets_error(400, "INVALID_ARGUMENT", "'valueInputOption' is required but not specified", None);
            };
            if !["RAW", "USER_ENTERED"].contains(&input) {
                return sheets_error(400, "INVALID_ARGUMENT", "Invalid value at 'value_input_option'", None);
            }
            if !known_sheet(book, range) {
                return sheets_error(400, "INVALID_ARGUMENT", &format!("Unable to parse range: {range}"), None);
            }
            let rows = match check_rows(&body) {
                Ok(rows) => rows,
                Err(e) => return e,
            };
            let (updated, n, w) = written_range(range, rows);
            let cells: usize = rows.iter().map(|r| r.as_array().unwrap().len()).sum();
            Reply::json(
                200,
                json!({"spreadsheetId": book, "updatedRange": updated, "updatedRows": n, "updatedColumns": w, "updatedCells": cells}),
            )
        }
        ("POST", [_, "values", range], Some("append")) if json_body => {
            let Some(input) = r.q("valueInputOption") else {
                return sheets_error(400, "INVALID_ARGUMENT", "'valueInputOption' is required but not specified", None);
            };
            if !["RAW", "USER_ENTERED"].contains(&input)
                || !["INSERT_ROWS", "OVERWRITE"].contains(&r.q("insertDataOption").unwrap_or("OVERWRITE"))
            {
                return sheets_error(400, "INVALID_ARGUMENTS", "Invalid value", None);
            }
            if !known_sheet(book, range) {
                return sheets_error(400, "INVALID_ARGUMENT", &format!("Unable to parse range: {range}"), None);
            }
            let rows = match check_rows(&body) {
                Ok(rows) => rows,
                Err(e) => return e,
            };
            let (updated, n, w) = written_range("Sales!A5", rows);
            let cells: usize = rows.iter().map(|r| r.as_array().unwrap().len()).sum();
            Reply::json(
                200,
                json!({"spreadsheetId": book, "tableRange": "Sales!A1:C4",
                "updates": {"spreadsheetId": book, "updatedRange": updated, "updatedRows": n, "updatedColumns": w, "updatedCells": cells}}),
            )
        }
        ("POST", [_, "values", range], Some("clear")) if json_body && body == json!({}) => {
            if !known_sheet(book, range) {
                return sheets_error(400, "INVALID_ARGUMENT", &format!("Unable to parse range: {range}"), None);
            }
            let cleared = if range.contains('!') { format!("{range}1000") } else { format!("{range}!A1:Z1000") };
            Reply::json(200, json!({"spreadsheetId": book, "clearedRange": cleared}))
        }
        _ => sheets_error(404, "NOT_FOUND", "Requested entity was not found.", None),
    }
}

async fn setup() -> (TestApp, Fake) {
    let fake = Fake::start(sheets).await;
    let t = app_with(&[
        ("WORKBENCH_GOOGLE_SHEETS_BASE_URL", format!("{}/v4", fake.url)),
        ("WORKBENCH_GOOGLE_SHEETS_USERINFO_BASE_URL", format!("{}/v1", fake.url)),
        ("WORKBENCH_GOOGLE_SHEETS_TOKEN", TOKEN.into()),
    ]);
    (t, fake)
}

#[tokio::test]
async fn google_sheets_get_values_reads_rows_by_a1_range() {
    let (t, fake) = setup().await;
    let r = t.ok("google_sheets_get_values", json!({"spreadsheet_id": BOOK, "range": "Sales"})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", format!("/v4/spreadsheets/{BOOK}/values/Sales").as_str())
    );
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(req.q("valueRenderOption"), Some("FORMATTED_VALUE"));
    assert_eq!(req.q("majorDimension"), Some("ROWS"));
    assert_eq!(
        r,
        json!({"range": "Sales!A1:Z1000", "row_count": 4, "rows": [["Region", "Revenue", "Double"], ["EMEA", "$1,250.00", "$2,500.00"], ["APAC", "$980.50", "$1,961.00"], ["LATAM"]]})
    );

    let r = t
        .ok("google_sheets_get_values", json!({"spreadsheet_id": BOOK, "range": "'Q3 Sales'!A1:C3", "value_render_option": "formula", "max_rows": 2}))
        .await;
    let req = fake.last();
    assert_eq!(
        req.path,
        format!("/v4/spreadsheets/{BOOK}/values/%27Q3%20Sales%27%21A1%3AC3"),
        "the A1 range is one encoded segment"
    );
    assert_eq!(req.q("valueRenderOption"), Some("FORMULA"));
    assert_eq!(r["rows"], json!([["Region", "Revenue", "Double"], ["EMEA", 1250, "=B2*2"]]));
    assert_eq!((r["row_count"].clone(), r["truncated"].clone()), (json!(4), json!(true)));

    let cols = t
        .ok(
            "google_sheets_get_values",
            json!({"spreadsheet_id": BOOK, "range": "Sales!A1:C4", "major_dimension": "columns"}),
        )
        .await;
    assert_eq!(fake.last().q("majorDimension"), Some("COLUMNS"));
    assert_eq!(cols["major_dimension"], "columns");
    assert_eq!(cols["rows"][0], json!(["Region", "EMEA", "APAC", "LATAM"]));

    let e = t.err("google_sheets_get_values", json!({"spreadsheet_id": BOOK, "range": "Nope!A1"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 400);
    assert!(e["message"].as_str().unwrap().contains("Unable to parse range: Nope!A1"), "{e}");
}

#[tokio::test]
async fn google_sheets_get_values_batches_several_ranges() {
    let (t, fake) = setup().await;
    let r = t
        .ok("google_sheets_get_values", json!({"spreadsheet_id": BOOK, "range": "Sales!A1:C2", "ranges": ["'Q3 Sales'!A:B"], "value_render_option": "unformatted_value"}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, format!("/v4/spreadsheets/{BOOK}/values:batchGet"));
    let ranges: Vec<&str> = req.query.iter().filter(|(k, _)| k == "ranges").map(|(_, v)| v.as_str()).collect();
    assert_eq!(ranges, ["Sales!A1:C2", "'Q3 Sales'!A:B"]);
    assert_eq!(req.q("valueRenderOption"), Some("UNFORMATTED_VALUE"));
    assert_eq!(r["ranges"][0]["range"], "Sales!A1:C2");
    assert_eq!(
        r["ranges"][1],
        json!({"range": "'Q3 Sales'!A:B", "row_count": 2, "rows": [["Week", "Units"], ["W27", "14"]]})
    );
}

#[tokio::test]
async fn google_sheets_update_values_overwrites_a_range() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_sheets_update_values",
            json!({"spreadsheet_id": BOOK, "range": "Sales!B2", "values": [[1300, "=B2*2"], [990, "=B3*2"]]}),
        )
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("PUT", format!("/v4/spreadsheets/{BOOK}/values/Sales%21B2").as_str())
    );
    assert_eq!(req.q("valueInputOption"), Some("USER_ENTERED"));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"majorDimension": "ROWS", "values": [[1300, "=B2*2"], [990, "=B3*2"]]})
    );
    assert_eq!(r, json!({"updated_range": "Sales!B2:C3", "updated_rows": 2, "updated_columns": 2, "updated_cells": 4}));

    // A flat list is one row; raw input is passed through.
    let r = t
        .ok("google_sheets_update_values", json!({"spreadsheet_id": BOOK, "range": "Sales!A5", "values": ["LATAM", "0012"], "value_input_option": "raw"}))
        .await;
    let req = fake.last();
    assert_eq!(req.q("valueInputOption"), Some("RAW"));
    assert_eq!(serde_json::from_slice::<Value>(&req.body).unwrap()["values"], json!([["LATAM", "0012"]]));
    assert_eq!(r["updated_range"], "Sales!A5:B5");

    let before = fake.requests().len();
    let e = t
        .err(
            "google_sheets_update_values",
            json!({"spreadsheet_id": BOOK, "range": "Sales!A1", "values": [[{"v": 1}]]}),
        )
        .await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    let e =
        t.err("google_sheets_update_values", json!({"spreadsheet_id": BOOK, "range": "Sales!A1", "values": []})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(fake.requests().len(), before, "bad values never reach Sheets");
}

#[tokio::test]
async fn google_sheets_add_rows_appends_after_the_table() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_sheets_add_rows",
            json!({"spreadsheet_id": BOOK, "range": "Sales", "values": [["NA", 2100, "=B5*2"], ["ANZ", 450, "=B6*2"]]}),
        )
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", format!("/v4/spreadsheets/{BOOK}/values/Sales:append").as_str())
    );
    assert_eq!(req.q("valueInputOption"), Some("USER_ENTERED"));
    assert_eq!(req.q("insertDataOption"), Some("INSERT_ROWS"));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"majorDimension": "ROWS", "values": [["NA", 2100, "=B5*2"], ["ANZ", 450, "=B6*2"]]})
    );
    assert_eq!(
        r,
        json!({"table_range": "Sales!A1:C4", "updated_range": "Sales!A5:C6", "updated_rows": 2, "updated_columns": 3, "updated_cells": 6})
    );
    t.ok("google_sheets_add_rows", json!({"spreadsheet_id": BOOK, "range": "'Q3 Sales'!A:B", "values": ["W28", 9], "insert_data_option": "overwrite", "value_input_option": "raw"}))
        .await;
    let req = fake.last();
    assert_eq!(req.path, format!("/v4/spreadsheets/{BOOK}/values/%27Q3%20Sales%27%21A%3AB:append"));
    assert_eq!(req.q("insertDataOption"), Some("OVERWRITE"));
    assert_eq!(req.q("valueInputOption"), Some("RAW"));
}

#[tokio::test]
async fn google_sheets_delete_values_clears_a_range() {
    let (t, fake) = setup().await;
    let r = t.ok("google_sheets_delete_values", json!({"spreadsheet_id": BOOK, "range": "Sales!A2:C"})).await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", format!("/v4/spreadsheets/{BOOK}/values/Sales%21A2%3AC:clear").as_str())
    );
    assert_eq!(serde_json::from_slice::<Value>(&req.body).unwrap(), json!({}));
    assert_eq!(r, json!({"cleared_range": "Sales!A2:C1000"}));
    let e = t.err("google_sheets_delete_values", json!({"spreadsheet_id": "1Unknown", "range": "Sales"})).await;
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("Requested entity was not found."));
}

#[tokio::test]
async fn google_sheets_create_spreadsheet_with_tabs_and_starting_rows() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_sheets_create_spreadsheet",
            json!({"title": "Offsite 2026", "sheet_titles": ["Roster", "Notes"], "values": [["Name", "Email"], ["Ada", "ada@example.com"]]}),
        )
        .await;
    let reqs = fake.requests();
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("POST", "/v4/spreadsheets"));
    assert_eq!(
        serde_json::from_slice::<Value>(&reqs[0].body).unwrap(),
        json!({"properties": {"title": "Offsite 2026"}, "sheets": [{"properties": {"title": "Roster"}}, {"properties": {"title": "Notes"}}]})
    );
    assert_eq!(
        (reqs[1].method.as_str(), reqs[1].path.as_str()),
        ("PUT", format!("/v4/spreadsheets/{NEW_BOOK}/values/%27Roster%27%21A1").as_str())
    );
    assert_eq!(reqs[1].q("valueInputOption"), Some("USER_ENTERED"));
    assert_eq!(
        r,
        json!({
            "spreadsheet_id": NEW_BOOK, "title": "Offsite 2026", "url": format!("https://docs.google.com/spreadsheets/d/{NEW_BOOK}/edit"),
            "sheets": [{"sheet_id": 0, "title": "Roster", "index": 0, "rows": 1000, "columns": 26}, {"sheet_id": 401001, "title": "Notes", "index": 1, "rows": 1000, "columns": 26}],
            "updated_range": "'Roster'!A1:B2", "updated_rows": 2, "updated_columns": 2, "updated_cells": 4
        })
    );
    let plain = t.ok("google_sheets_create_spreadsheet", json!({"title": "Scratch"})).await;
    assert_eq!(
        serde_json::from_slice::<Value>(&fake.last().body).unwrap(),
        json!({"properties": {"title": "Scratch"}})
    );
    assert_eq!(plain["sheets"][0]["title"], "Sheet1");
    assert!(plain.get("updated_range").is_none());
}

#[tokio::test]
async fn google_sheets_get_spreadsheet_lists_tabs() {
    let (t, fake) = setup().await;
    let r = t.ok("google_sheets_get_spreadsheet", json!({"spreadsheet_id": BOOK})).await;
    assert_eq!(fake.last().path, format!("/v4/spreadsheets/{BOOK}"));
    assert_eq!(
        r,
        json!({
            "spreadsheet_id": BOOK, "title": "2026 Revenue", "url": format!("https://docs.google.com/spreadsheets/d/{BOOK}/edit"),
            "locale": "en_US", "time_zone": "Europe/Berlin",
            "sheets": [
                {"sheet_id": 0, "title": "Sales", "index": 0, "rows": 1000, "columns": 26, "frozen_rows": 1},
                {"sheet_id": 1834712, "title": "Q3 Sales", "index": 1, "rows": 200, "columns": 8, "hidden": true},
                {"sheet_id": 99, "title": "Chart1", "index": 2, "type": "object"}
            ]
        })
    );
    assert!(r.get("raw").is_none());
    let with_raw = t.ok("google_sheets_get_spreadsheet", json!({"spreadsheet_id": BOOK, "include_raw": true})).await;
    assert_eq!(with_raw["raw"], spreadsheet_meta());
    let raw = spreadsheet_meta().to_string().len();
    let shaped = r.to_string().len();
    eprintln!("google_sheets_get_spreadsheet: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw);
}

#[tokio::test]
async fn google_sheets_create_sheet_adds_a_tab() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_sheets_create_sheet",
            json!({"spreadsheet_id": BOOK, "title": "Q4 Sales", "index": 1, "rows": 500, "columns": 10}),
        )
        .await;
    let req = fake.last();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", format!("/v4/spreadsheets/{BOOK}:batchUpdate").as_str())
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"requests": [{"addSheet": {"properties": {"title": "Q4 Sales", "index": 1, "gridProperties": {"rowCount": 500, "columnCount": 10}}}}]})
    );
    assert_eq!(r, json!({"sheet_id": 2093416171u64, "title": "Q4 Sales", "index": 1, "rows": 500, "columns": 10}));
    let e = t.err("google_sheets_create_sheet", json!({"spreadsheet_id": BOOK, "title": "Sales"})).await;
    assert!(e["message"].as_str().unwrap().contains("A sheet with the name \"Sales\" already exists"), "{e}");
}

#[tokio::test]
async fn google_sheets_rejected_token_rate_limit_and_identity() {
    let (t, fake) = setup().await;

    let bad = app_with(&[
        ("WORKBENCH_GOOGLE_SHEETS_BASE_URL", format!("{}/v4", fake.url)),
        ("WORKBENCH_GOOGLE_SHEETS_TOKEN", "ya29.expired".into()),
    ]);
    let e = bad.err("google_sheets_get_spreadsheet", json!({"spreadsheet_id": BOOK})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> = [("token".to_string(), Secret::new(token.to_string()))].into();
        workbench::auth::from_fields(&plugins::google_sheets::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let integration = &plugins::google_sheets::INTEGRATION;
    let label = workbench::send::verify_identity(&t.app, integration, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("bob@example.com"));
    assert_eq!(fake.last().path, "/v1/userinfo");
    assert!(workbench::send::verify_identity(&t.app, integration, conn("ya29.nope")).await.is_err());

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let e = t.err("google_sheets_get_values", json!({"spreadsheet_id": "busy", "range": "A1"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["retry_after_seconds"], 120);
    assert!(e["message"].as_str().unwrap().contains("RATE_LIMIT_EXCEEDED"), "{e}");
}

#[tokio::test]
async fn google_sheets_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("read cells from a spreadsheet", "google_sheets_get_values"),
        ("write values into spreadsheet cells", "google_sheets_update_values"),
        ("append rows to a spreadsheet", "google_sheets_add_rows"),
        ("clear a range of cells", "google_sheets_delete_values"),
        ("create a new spreadsheet", "google_sheets_create_spreadsheet"),
        ("list the tabs of a spreadsheet", "google_sheets_get_spreadsheet"),
        ("add a tab to the spreadsheet", "google_sheets_create_sheet"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
    // "A new Google Sheet" may mean a spreadsheet or a tab: both come first.
    let out = t.call("search_tools", json!({"query": "create a new google sheet", "limit": 2})).await;
    let mut top: Vec<&str> =
        out.body["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    top.sort_unstable();
    assert_eq!(top, ["google_sheets_create_sheet", "google_sheets_create_spreadsheet"]);
}
