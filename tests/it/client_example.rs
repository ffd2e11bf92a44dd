//! examples/client.rs (rmcp's client over a child process) run against the built binary.

#[path = "../../examples/client.rs"]
#[allow(dead_code)]
mod example;

use serde_json::json;

#[tokio::test]
async fn the_rust_client_example_connects_searches_inspects_and_composes() {
    let home = tempfile::tempdir().unwrap();
    let report = example::run(&crate::support::binary(), home.path(), false).await.expect("the example runs");
    assert_eq!(report.server, format!("workbench {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(report.tools.len(), 9, "{:?}", report.tools);
    assert_eq!(report.top_hit, "time_get_current");
    assert!(report.schema_properties.iter().any(|p| p == "timezone"), "{:?}", report.schema_properties);
    let weekday = report.result["tokyo"]["weekday"].as_str().unwrap_or_default().to_string();
    assert!(
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].contains(&weekday.as_str()),
        "{}",
        report.result
    );
    assert_eq!(report.result["tokyo"], json!({"zone": "Asia/Tokyo", "weekday": weekday}));
    assert!(report.result["local_time"].as_str().unwrap().ends_with("+09:00"), "{}", report.result);
    assert_eq!(report.result.as_object().unwrap().len(), 2, "only the return projection comes back");
    assert_eq!(report.progress, ["1/2 time_get_current ok", "2/2 data_query_json ok"]);
}
