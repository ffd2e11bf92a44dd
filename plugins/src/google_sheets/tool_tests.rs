//! Google Sheets tools on `MockUpstream`: the exact request of reads and writes (the A1 range as
//! one encoded segment, render and input options, batch reads, append options) and the values as
//! an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn get_values_reads_one_range_or_a_batch() {
    let body = json!({"range": "'Q1 Sales'!A1:B3", "majorDimension": "ROWS", "values": [["Region", "Total"], ["EU", "12.5"], ["US", "30"]]});
    let (out, reqs) = MockUpstream::new()
        .json(body)
        .ok(&GET_VALUES, json!({"spreadsheet_id": "1BxiMVs0XRA5", "range": "'Q1 Sales'!A1:B3", "max_rows": 2}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/spreadsheets/1BxiMVs0XRA5/values/%27Q1%20Sales%27%21A1%3AB3", "body": null,
               "query": [["valueRenderOption", "FORMATTED_VALUE"], ["majorDimension", "ROWS"]]})
    );
    assert_eq!(
        out,
        json!({"range": "'Q1 Sales'!A1:B3", "row_count": 3, "rows": [["Region", "Total"], ["EU", "12.5"]], "truncated": true})
    );
    let batch = json!({"spreadsheetId": "1BxiMVs0XRA5", "valueRanges": [{"range": "A!A1:A1", "values": [["x"]]}, {"range": "B!A1:A1"}]});
    let (out, reqs) = MockUpstream::new().json(batch).ok(
        &GET_VALUES,
        json!({"spreadsheet_id": "1BxiMVs0XRA5", "range": "A!A1", "ranges": ["B!A1"], "value_render_option": "formula"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/spreadsheets/1BxiMVs0XRA5/values:batchGet", "body": null,
               "query": [["ranges", "A!A1"], ["ranges", "B!A1"], ["valueRenderOption", "FORMULA"], ["majorDimension", "ROWS"]]})
    );
    assert_eq!(
        out,
        json!({"ranges": [{"range": "A!A1:A1", "row_count": 1, "rows": [["x"]]}, {"range": "B!A1:A1", "row_count": 0, "rows": []}]})
    );
}

#[test]
fn update_values_puts_rows_as_typed() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"spreadsheetId": "1BxiMVs0XRA5", "updatedRange": "Sheet1!B2:C3", "updatedRows": 2, "updatedColumns": 2, "updatedCells": 4}))
        .ok(&UPDATE_VALUES, json!({"spreadsheet_id": "1BxiMVs0XRA5", "range": "Sheet1!B2", "values": [["Apples", 3], ["Total", "=SUM(C2:C2)"]]}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/spreadsheets/1BxiMVs0XRA5/values/Sheet1%21B2", "query": [["valueInputOption", "USER_ENTERED"]],
               "body": {"majorDimension": "ROWS", "values": [["Apples", 3], ["Total", "=SUM(C2:C2)"]]}})
    );
    assert_eq!(
        out,
        json!({"updated_range": "Sheet1!B2:C3", "updated_rows": 2, "updated_columns": 2, "updated_cells": 4})
    );
    // Nested cells and empty rows are refused before anything is sent.
    for values in [json!([[{"a": 1}]]), json!([[]])] {
        let (r, reqs) =
            MockUpstream::new().call(&UPDATE_VALUES, json!({"spreadsheet_id": "1", "range": "A1", "values": values}));
        assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
        assert!(reqs.is_empty());
    }
}

/// add_rows: one flat list is one row; the range cannot leave the values path.
#[test]
fn add_rows_appends_a_flat_list_as_one_row() {
    let reply = json!({"spreadsheetId": "1BxiMVs0XRA5", "tableRange": "Sheet1!A1:C9",
        "updates": {"updatedRange": "Sheet1!A10:C10", "updatedRows": 1, "updatedColumns": 3, "updatedCells": 3}});
    let (out, reqs) = MockUpstream::new()
        .json(reply)
        .ok(&ADD_ROWS, json!({"spreadsheet_id": "1BxiMVs0XRA5", "range": "Sheet1", "values": ["2026-03-02", "Coffee", 4.5], "value_input_option": "raw"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/spreadsheets/1BxiMVs0XRA5/values/Sheet1:append",
               "query": [["valueInputOption", "RAW"], ["insertDataOption", "INSERT_ROWS"]],
               "body": {"majorDimension": "ROWS", "values": [["2026-03-02", "Coffee", 4.5]]}})
    );
    assert_eq!(
        out,
        json!({"updated_range": "Sheet1!A10:C10", "updated_rows": 1, "updated_columns": 3, "updated_cells": 3, "table_range": "Sheet1!A1:C9"})
    );
    let (_, reqs) = MockUpstream::new()
        .json(json!({}))
        .ok(&ADD_ROWS, json!({"spreadsheet_id": "../../drive", "range": "../x", "values": [1]}));
    assert_eq!(reqs[0].path, "/spreadsheets/..%2F..%2Fdrive/values/..%2Fx:append");
    let (r, _) = MockUpstream::new().call(&ADD_ROWS, json!({"spreadsheet_id": "1", "range": "  ", "values": [1]}));
    assert!(message(&r.unwrap_err()).contains("A1 range"));
}

#[test]
fn delete_values_clears_the_range() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"spreadsheetId": "1BxiMVs0XRA5", "clearedRange": "Sheet1!A2:F100"}))
        .ok(&DELETE_VALUES, json!({"spreadsheet_id": "1BxiMVs0XRA5", "range": "Sheet1!A2:F100"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/spreadsheets/1BxiMVs0XRA5/values/Sheet1%21A2%3AF100:clear", "query": [], "body": {}})
    );
    assert_eq!(out, json!({"cleared_range": "Sheet1!A2:F100"}));
}

/// get_spreadsheet asks only for the fields it shows; tabs are listed with their grid sizes.
#[test]
fn get_spreadsheet_lists_the_tabs() {
    let body = json!({"spreadsheetId": "1BxiMVs0XRA5", "spreadsheetUrl": "https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5/edit",
        "properties": {"title": "Budget", "locale": "en_US", "timeZone": "Europe/Berlin"},
        "sheets": [{"properties": {"sheetId": 0, "title": "2026", "index": 0, "sheetType": "GRID",
                    "gridProperties": {"rowCount": 1000, "columnCount": 26, "frozenRowCount": 1}}},
                   {"properties": {"sheetId": 7, "title": "Chart", "index": 1, "sheetType": "OBJECT", "hidden": true}}]});
    let (out, reqs) = MockUpstream::new().json(body).ok(&GET_SPREADSHEET, json!({"spreadsheet_id": "1BxiMVs0XRA5"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/spreadsheets/1BxiMVs0XRA5", "query": [["fields", SPREADSHEET_FIELDS]], "body": null})
    );
    assert_eq!(
        out,
        json!({"spreadsheet_id": "1BxiMVs0XRA5", "title": "Budget", "url": "https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5/edit",
            "locale": "en_US", "time_zone": "Europe/Berlin", "sheets": [
                {"sheet_id": 0, "title": "2026", "index": 0, "rows": 1000, "columns": 26, "frozen_rows": 1},
                {"sheet_id": 7, "title": "Chart", "index": 1, "type": "object", "hidden": true}]})
    );
}

/// create_spreadsheet: the spreadsheet with its named tabs, then the starting rows written into
/// the first tab from A1 (its quoted name as the range).
#[test]
fn create_spreadsheet_creates_then_writes_the_first_tab() {
    let created = json!({"spreadsheetId": "1NewSheet", "spreadsheetUrl": "https://docs.google.com/spreadsheets/d/1NewSheet/edit",
        "properties": {"title": "Budget 2026", "locale": "en_US"}, "sheets": [
            {"properties": {"sheetId": 0, "title": "Ann's plan", "index": 0, "sheetType": "GRID", "gridProperties": {"rowCount": 1000, "columnCount": 26}}},
            {"properties": {"sheetId": 71, "title": "Notes", "index": 1, "sheetType": "GRID", "gridProperties": {"rowCount": 1000, "columnCount": 26}}}]});
    let written = json!({"spreadsheetId": "1NewSheet", "updatedRange": "'Ann''s plan'!A1:B2", "updatedRows": 2, "updatedColumns": 2, "updatedCells": 4});
    let (out, reqs) = MockUpstream::new().json(created).json(written).ok(
        &CREATE_SPREADSHEET,
        json!({"title": "Budget 2026", "sheet_titles": ["Ann's plan", "Notes"], "values": [["Month", "Total"], ["Jan", 10]]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/spreadsheets", "query": [], "body": {"properties": {"title": "Budget 2026"},
            "sheets": [{"properties": {"title": "Ann's plan"}}, {"properties": {"title": "Notes"}}]}})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PUT", "path": "/spreadsheets/1NewSheet/values/%27Ann%27%27s%20plan%27%21A1", "query": [["valueInputOption", "USER_ENTERED"]],
            "body": {"majorDimension": "ROWS", "values": [["Month", "Total"], ["Jan", 10]]}})
    );
    assert_eq!(
        out,
        json!({"spreadsheet_id": "1NewSheet", "title": "Budget 2026", "url": "https://docs.google.com/spreadsheets/d/1NewSheet/edit",
            "sheets": [{"sheet_id": 0, "title": "Ann's plan", "index": 0, "rows": 1000, "columns": 26},
                {"sheet_id": 71, "title": "Notes", "index": 1, "rows": 1000, "columns": 26}],
            "updated_range": "'Ann''s plan'!A1:B2", "updated_rows": 2, "updated_columns": 2, "updated_cells": 4})
    );
}

/// create_sheet: one addSheet request with position and size; the new tab as Sheets answers it.
#[test]
fn create_sheet_adds_a_tab() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"spreadsheetId": "1BxiMVs0XRA5", "replies": [{"addSheet": {"properties": {"sheetId": 123456, "title": "Q2", "index": 1,
            "sheetType": "GRID", "gridProperties": {"rowCount": 200, "columnCount": 8}}}}]}))
        .ok(&CREATE_SHEET, json!({"spreadsheet_id": "1BxiMVs0XRA5", "title": "Q2", "index": 1, "rows": 200, "columns": 8}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/spreadsheets/1BxiMVs0XRA5:batchUpdate", "query": [], "body": {"requests": [{"addSheet":
            {"properties": {"title": "Q2", "index": 1, "gridProperties": {"rowCount": 200, "columnCount": 8}}}}]}})
    );
    assert_eq!(out, json!({"sheet_id": 123456, "title": "Q2", "index": 1, "rows": 200, "columns": 8}));
}
