//! Airtable tools on `MockUpstream`: the exact request of a read and a write (table names as one
//! encoded segment, sort and fields as Airtable's bracketed parameters, writes in batches of ten)
//! and the records as an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

#[test]
fn list_records_sends_airtables_parameters_and_shapes_the_page() {
    let page = json!({"records": [{"id": "recA1", "createdTime": "2026-01-05T10:00:00.000Z", "fields": {
        "Name": "Acme", "Owner": {"id": "usr1", "email": "ann@acme.example", "name": "Ann"},
        "Files": [{"id": "att1", "url": "https://dl.airtable.com/a.pdf", "filename": "a.pdf", "size": 10, "type": "application/pdf",
                   "thumbnails": {"small": {"url": "https://x"}}}]}}], "offset": "itrX/recA1"});
    let (out, reqs) = MockUpstream::new().json(page).ok(
        &LIST_RECORDS,
        json!({"base_id": "appB", "table": "Deals / 2026", "view": "Open", "filter_by_formula": "{Status}='Open'",
               "sort": [{"field": "Due", "direction": "desc"}], "fields": ["Name", "Owner"], "limit": 500}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/appB/Deals%20%2F%202026", "body": null, "query": [
            ["pageSize", "100"], ["view", "Open"], ["filterByFormula", "{Status}='Open'"],
            ["sort[0][field]", "Due"], ["sort[0][direction]", "desc"], ["fields[]", "Name"], ["fields[]", "Owner"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "itrX/recA1", "records": [{"record_id": "recA1", "created_time": "2026-01-05T10:00:00.000Z",
            "fields": {"Name": "Acme", "Owner": {"name": "Ann", "email": "ann@acme.example"},
                       "Files": [{"filename": "a.pdf", "url": "https://dl.airtable.com/a.pdf", "type": "application/pdf", "size": 10}]}}]})
    );
}

/// A long formula goes as a POST listRecords body (Airtable's URLs are bounded); the cursor rides
/// along as `offset`.
#[test]
fn list_records_sends_a_long_formula_in_a_body() {
    let formula = format!("FIND('{}', {{Notes}})", "x".repeat(4_100));
    let (out, reqs) = MockUpstream::new()
        .json(json!({"records": []}))
        .ok(&LIST_RECORDS, json!({"base_id": "appB", "table": "tblT", "filter_by_formula": formula, "cursor": "itr2"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/appB/tblT/listRecords", "query": [],
               "body": {"pageSize": 50, "filterByFormula": formula, "offset": "itr2"}})
    );
    assert_eq!(out, json!({"records": []}));
}

/// create_records sends batches of ten; a failed batch names what earlier batches created.
#[test]
fn create_records_batches_and_names_what_was_created_before_a_failure() {
    let rows: Vec<Value> = (0..12).map(|i| json!({"fields": {"Name": format!("Row {i}")}})).collect();
    let created = |ids: std::ops::Range<usize>| {
        json!({"records": ids.map(|i| json!({"id": format!("rec{i}"), "createdTime": "2026-01-01T00:00:00.000Z",
            "fields": {"Name": format!("Row {i}")}})).collect::<Vec<_>>()})
    };
    let (out, reqs) = MockUpstream::new()
        .json(created(0..10))
        .json(created(10..12))
        .ok(&CREATE_RECORDS, json!({"base_id": "appB", "table": "Deals", "records": rows, "typecast": true}));
    assert_eq!(reqs.len(), 2);
    assert_eq!(sent(&reqs[0])["method"], "POST");
    assert_eq!(sent(&reqs[0])["path"], "/appB/Deals");
    assert_eq!(
        sent(&reqs[1])["body"],
        json!({"records": [{"fields": {"Name": "Row 10"}}, {"fields": {"Name": "Row 11"}}], "typecast": true})
    );
    assert_eq!(out["created"], 12);
    assert_eq!(
        out["records"][11],
        json!({"record_id": "rec11", "created_time": "2026-01-01T00:00:00.000Z", "fields": {"Name": "Row 11"}})
    );

    let (r, _) = MockUpstream::new()
        .json(created(0..10))
        .error(ToolError::Upstream { status: 422, message: "INVALID_VALUE_FOR_COLUMN".into(), retry_after: None })
        .call(&CREATE_RECORDS, json!({"base_id": "appB", "table": "Deals", "records": rows}));
    let m = message(&r.unwrap_err());
    assert!(m.starts_with("INVALID_VALUE_FOR_COLUMN; 10 record(s) were already created"), "{m}");
    assert!(m.contains("rec0, rec1"));
}

/// Without records nothing is sent; an answer without `records` creates nothing, no panic.
#[test]
fn create_records_needs_rows_and_survives_an_odd_answer() {
    let (r, reqs) = MockUpstream::new().call(&CREATE_RECORDS, json!({"base_id": "appB", "table": "Deals"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
    let (out, _) = MockUpstream::new()
        .json(json!({"records": "nope"}))
        .ok(&CREATE_RECORDS, json!({"base_id": "appB", "table": "Deals", "records": [{"fields": {}}]}));
    assert_eq!(out, json!({"created": 0, "records": []}));
}

#[test]
fn get_record_encodes_the_ids() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"id": "recA", "createdTime": "2026-01-01T00:00:00.000Z", "fields": {"Notes": "hi"}}))
        .ok(&GET_RECORD, json!({"base_id": "appB", "table": "../meta", "record_id": "recA?x=1"}));
    assert_eq!(sent(&reqs[0])["path"], "/appB/..%2Fmeta/recA%3Fx%3D1");
    assert_eq!(
        out,
        json!({"record_id": "recA", "created_time": "2026-01-01T00:00:00.000Z", "fields": {"Notes": "hi"}})
    );
}

/// update_records with upsert: merge fields in `performUpsert`, the created and updated ids
/// from Airtable's answer; a record with neither id nor merge value is refused unsent.
#[test]
fn update_records_upserts_on_merge_fields() {
    let reply = json!({"records": [{"id": "recN", "createdTime": "2026-01-06T00:00:00.000Z", "fields": {"Email": "a@acme.example", "Seats": 3}}],
        "createdRecords": ["recN"], "updatedRecords": []});
    let (out, reqs) = MockUpstream::new().json(reply).ok(
        &UPDATE_RECORDS,
        json!({"base_id": "appB", "table": "Customers", "upsert_fields": ["Email"], "records": [{"fields": {"Email": "a@acme.example", "Seats": 3}}]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PATCH", "path": "/appB/Customers", "query": [], "body": {"records": [{"fields": {"Email": "a@acme.example", "Seats": 3}}],
            "performUpsert": {"fieldsToMergeOn": ["Email"]}}})
    );
    assert_eq!(out["created_record_ids"], json!(["recN"]));
    assert_eq!(out["updated"], 1);
    let (r, reqs) = MockUpstream::new()
        .call(&UPDATE_RECORDS, json!({"base_id": "appB", "table": "Customers", "records": [{"fields": {"Seats": 3}}]}));
    let Err(ToolError::InvalidArguments { problems, .. }) = r else { panic!("{r:?}") };
    assert_eq!(problems[0].path, "/records/0/id");
    assert!(reqs.is_empty());
}

/// delete_records: ids as `records[]` parameters; only ids Airtable says it deleted count.
#[test]
fn delete_records_counts_what_airtable_deleted() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"records": [{"id": "recA", "deleted": true}, {"id": "recB", "deleted": false}]}))
        .ok(&DELETE_RECORDS, json!({"base_id": "appB", "table": "Deals", "record_ids": ["recA", "recB"]}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "DELETE", "path": "/appB/Deals", "body": null, "query": [["records[]", "recA"], ["records[]", "recB"]]})
    );
    assert_eq!(out, json!({"deleted": 1, "record_ids": ["recA"]}));
}

/// list_bases: the cursor rides as `offset`, Airtable's next `offset` comes back as next_cursor.
#[test]
fn list_bases_pages_with_offset() {
    let (out, reqs) = MockUpstream::new()
        .json(json!({"bases": [{"id": "appA1", "name": "Sales CRM", "permissionLevel": "create"},
                               {"id": "appB2", "name": "Hiring", "permissionLevel": "read"}], "offset": "itrB/appB2"}))
        .ok(&LIST_BASES, json!({"cursor": "itrA"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/meta/bases", "query": [["offset", "itrA"]], "body": null})
    );
    assert_eq!(
        out,
        json!({"bases": [{"base_id": "appA1", "name": "Sales CRM", "permission_level": "create"},
                         {"base_id": "appB2", "name": "Hiring", "permission_level": "read"}], "next_cursor": "itrB/appB2"})
    );
    let (out, reqs) = MockUpstream::new().json(json!({"bases": []})).ok(&LIST_BASES, json!({}));
    assert_eq!(sent(&reqs[0])["query"], json!([]));
    assert_eq!(out, json!({"bases": []}));
}

/// list_tables: fields with their type, the primary field marked, select choices by name, the
/// linked table of a link field, and views.
#[test]
fn list_tables_shapes_the_schema() {
    let schema = json!({"tables": [{"id": "tblD", "name": "Deals", "primaryFieldId": "fldN", "description": "Open deals",
        "fields": [
            {"id": "fldN", "name": "Name", "type": "singleLineText"},
            {"id": "fldS", "name": "Stage", "type": "singleSelect", "description": "Pipeline stage",
             "options": {"choices": [{"id": "selA", "name": "Lead", "color": "blueLight2"}, {"id": "selB", "name": "Won", "color": "greenLight2"}]}},
            {"id": "fldC", "name": "Company", "type": "multipleRecordLinks", "options": {"linkedTableId": "tblC", "isReversed": false}}],
        "views": [{"id": "viwG", "name": "Grid view", "type": "grid"}]}]});
    let (out, reqs) = MockUpstream::new().json(schema.clone()).ok(&LIST_TABLES, json!({"base_id": "appB/x"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/meta/bases/appB%2Fx/tables", "query": [], "body": null})
    );
    assert_eq!(
        out,
        json!({"base_id": "appB/x", "tables": [{"table_id": "tblD", "name": "Deals", "description": "Open deals",
            "fields": [
                {"name": "Name", "type": "singleLineText", "field_id": "fldN", "primary": true},
                {"name": "Stage", "type": "singleSelect", "field_id": "fldS", "description": "Pipeline stage", "choices": ["Lead", "Won"]},
                {"name": "Company", "type": "multipleRecordLinks", "field_id": "fldC", "linked_table_id": "tblC"}],
            "views": [{"name": "Grid view", "type": "grid", "view_id": "viwG"}]}]})
    );
    let (out, _) =
        MockUpstream::new().json(schema.clone()).ok(&LIST_TABLES, json!({"base_id": "appB", "include_raw": true}));
    assert_eq!(out["raw"], schema);
}

/// search_records without named fields looks up the table's text-like fields (the primary field
/// whatever its type) and searches them case-insensitively in one formula.
#[test]
fn search_records_searches_the_tables_text_fields() {
    let schema = json!({"tables": [{"id": "tblD", "name": "Deals", "primaryFieldId": "fldN", "fields": [
        {"id": "fldN", "name": "Deal #", "type": "autoNumber"},
        {"id": "fldE", "name": "Email", "type": "email"},
        {"id": "fldA", "name": "Amount", "type": "currency"},
        {"id": "fldT", "name": "Notes {x}", "type": "multilineText"}]}]});
    let page = json!({"records": [{"id": "recA", "createdTime": "2026-02-01T09:00:00.000Z", "fields": {"Deal #": 7, "Email": "ann@acme.example"}}]});
    let (out, reqs) = MockUpstream::new()
        .json(schema)
        .json(page)
        .ok(&SEARCH_RECORDS, json!({"base_id": "appB", "table": "deals", "text": "ACME \"co\"", "view": "Open"}));
    assert_eq!(sent(&reqs[0])["path"], "/meta/bases/appB/tables");
    let formula = "OR(SEARCH(\"acme \\\"co\\\"\", LOWER({Deal #}&\"\")), SEARCH(\"acme \\\"co\\\"\", LOWER({Email}&\"\")), \
                   SEARCH(\"acme \\\"co\\\"\", LOWER({Notes {x\\}}&\"\")))";
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/appB/deals", "body": null,
               "query": [["pageSize", "25"], ["view", "Open"], ["filterByFormula", formula]]})
    );
    assert_eq!(
        out,
        json!({"records": [{"record_id": "recA", "created_time": "2026-02-01T09:00:00.000Z", "fields": {"Deal #": 7, "Email": "ann@acme.example"}}],
               "searched_fields": ["Deal #", "Email", "Notes {x}"]})
    );
}

/// Named fields skip the schema lookup; an unknown table is refused after the lookup, naming the
/// base's tables, and no list is sent.
#[test]
fn search_records_with_named_fields_or_an_unknown_table() {
    let (out, reqs) = MockUpstream::new().json(json!({"records": [], "offset": "itr9"})).ok(
        &SEARCH_RECORDS,
        json!({"base_id": "appB", "table": "tblD", "text": "acme", "fields": ["Name"], "limit": 5, "cursor": "itr8"}),
    );
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        sent(&reqs[0])["query"],
        json!([["pageSize", "5"], ["filterByFormula", "SEARCH(\"acme\", LOWER({Name}&\"\"))"], ["offset", "itr8"]])
    );
    assert_eq!(out, json!({"records": [], "next_cursor": "itr9", "searched_fields": ["Name"]}));

    let (r, reqs) = MockUpstream::new()
        .json(json!({"tables": [{"id": "tblD", "name": "Deals", "fields": []}, {"id": "tblC", "name": "Companies", "fields": []}]}))
        .call(&SEARCH_RECORDS, json!({"base_id": "appB", "table": "Leads", "text": "acme"}));
    assert_eq!(reqs.len(), 1);
    assert_eq!(message(&r.unwrap_err()), "base appB has no table 'Leads'; its tables are: Deals, Companies");
}
