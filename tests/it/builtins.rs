//! Built-in tools through execute_tools, as an agent calls them.

use serde_json::json;

use crate::support::app;

#[tokio::test]
async fn data_tools_query_and_convert() {
    let t = app();
    let r = t
        .ok("data_query_json", json!({"expression": "items[?state=='open'].{id: id}", "data": {"items": [{"id": 1, "state": "open"}, {"id": 2, "state": "closed"}]}}))
        .await;
    assert_eq!(r["result"], json!([{"id": 1}]));
    let r =
        t.ok("data_query_json", json!({"expression": "$.a[*].b", "data": "{\"a\": [{\"b\": 1}, {\"b\": 2}]}"})).await;
    assert_eq!(r["result"], json!([1, 2]), "JSON text is parsed; $ selects JSONPath");
    let e = t.err("data_query_json", json!({"expression": "items[?", "data": {}})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert!(e["message"].as_str().unwrap().contains("JMESPath"));

    let csv = t.ok("data_convert_csv", json!({"input": "a\tb\n1\tx\n", "to": "json", "delimiter": "\t"})).await;
    assert_eq!(csv["rows"], json!([{"a": 1, "b": "x"}]));
    let back = t.ok("data_convert_csv", json!({"input": [{"a": 1, "b": "x,y"}], "to": "csv"})).await;
    assert_eq!(back["csv"], "a,b\n1,\"x,y\"\n");
    let md = t.ok("data_convert_csv", json!({"input": "[{\"k\": \"v|w\"}]", "to": "markdown"})).await;
    assert_eq!(md["markdown"], "| k |\n| --- |\n| v\\|w |\n");
    let e = t.err("data_convert_csv", json!({"input": [{"a": 1}], "to": "csv", "columns": ["z"]})).await;
    assert!(e["message"].as_str().unwrap().contains("no column 'z'"));
    let e = t.err("data_convert_csv", json!({"input": "a", "to": "yaml"})).await;
    assert_eq!(e["problems"][0]["path"], "/to");
}

#[tokio::test]
async fn time_tool_resolves_and_converts() {
    let t = app();
    let r = t
        .ok("time_get_current", json!({"timezone": "America/New_York", "reference_time": "2026-11-30T09:00:00Z", "expression": "tomorrow 9am"}))
        .await;
    assert_eq!(r["now"]["local"], "2026-11-30T04:00:00-05:00");
    assert_eq!(r["resolved"]["utc"], "2026-12-01T14:00:00Z");
    assert_eq!(r["resolved"]["weekday"], "Tuesday");
    let e = t.err("time_get_current", json!({"timezone": "Mars/Olympus"})).await;
    assert_eq!(e["problems"][0]["path"], "/timezone");
    let e = t.err("time_get_current", json!({"expression": "when pigs fly"})).await;
    assert!(e["message"].as_str().unwrap().contains("could not understand"));
}

#[tokio::test]
async fn audit_log_filters_and_pages() {
    let t = app();
    for i in 0..5 {
        t.ok("time_get_current", json!({"timezone": "UTC", "expression": format!("in {i} days")})).await;
    }
    t.err("data_query_json", json!({"expression": "[", "data": {}})).await;
    let all = t.ok("audit_search_log", json!({"limit": 4})).await;
    let entries = all["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    assert_eq!(entries[0]["tool"], "data_query_json", "newest first");
    assert_eq!(entries[0]["status"], "error");
    assert_eq!(entries[0]["error_code"], "INVALID_ARGUMENTS");
    let next = all["next_cursor"].as_str().unwrap().to_string();
    let rest = t.ok("audit_search_log", json!({"limit": 4, "cursor": next})).await;
    // The first page saw 6 rows (5 time calls and the error); the rest are the 2 oldest. The first
    // audit_search_log call is newer than the cursor, so it is not on this page.
    assert_eq!(rest["entries"].as_array().unwrap().len(), 2);
    let text = t.ok("audit_search_log", json!({"text": "in 3 days"})).await;
    assert_eq!(text["entries"].as_array().unwrap().len(), 1);
    assert_eq!(text["entries"][0]["args"]["expression"], "in 3 days");
    let recent = t.ok("audit_search_log", json!({"since": "1 hours ago", "integration": "time"})).await;
    assert_eq!(recent["entries"].as_array().unwrap().len(), 5);
    let future = t.ok("audit_search_log", json!({"since": "tomorrow"})).await;
    assert_eq!(future["entries"].as_array().unwrap().len(), 0);
}
