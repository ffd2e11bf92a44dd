//! Superset tools on `MockUpstream`: the exact request of reads and writes (Rison `q` list
//! queries, SQL Lab's execute body) and the shapes an agent reads (absolute links, rows as arrays
//! in column order).

use serde_json::json;

use super::browse::{GET_CHART_DATA, GET_DASHBOARD, LIST_CHARTS, LIST_DASHBOARDS, LIST_DATABASES, LIST_DATASETS};
use super::sqllab::{EXPORT_CSV, RUN_SQL};
use crate::mock::{MockUpstream, message, sent};

#[test]
fn list_dashboards_sends_a_rison_query_and_makes_links_absolute() {
    let body = json!({"count": 3, "ids": [7], "result": [{"id": 7, "dashboard_title": "Sales report", "slug": "sales",
        "status": "published", "url": "/superset/dashboard/sales/", "changed_on_utc": "2026-01-02T10:00:00.000000+0000",
        "changed_on_delta_humanized": "2 days ago", "changed_by": {"first_name": "Ann", "last_name": "Lee"},
        "owners": [{"first_name": "Ann", "last_name": "Lee", "id": 1}], "certified_by": "",
        "tags": [{"id": 1, "name": "owner:1", "type": 3}, {"id": 2, "name": "finance", "type": 1}]}]});
    let (out, reqs) = MockUpstream::new()
        .with_field("base_url", "bi.example.com/")
        .json(body)
        .ok(&LIST_DASHBOARDS, json!({"search": " sales ", "limit": 1}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/dashboard/", "body": null, "query": [["q",
            "(filters:!((col:dashboard_title,opr:ct,value:sales)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:1)"]]})
    );
    assert_eq!(
        out,
        json!({"count": 3, "next_cursor": "1:1", "dashboards": [{"id": 7, "title": "Sales report", "slug": "sales",
            "status": "published", "url": "https://bi.example.com/superset/dashboard/sales/",
            "changed_on": "2026-01-02T10:00:00.000000+0000", "changed": "2 days ago", "changed_by": "Ann Lee",
            "owners": ["Ann Lee"], "tags": ["finance"]}]})
    );
    // A search term with Rison's own syntax stays a quoted value.
    let (_, reqs) =
        MockUpstream::new().json(json!({"count": 0, "result": []})).ok(&LIST_DASHBOARDS, json!({"search": "a'),(b"}));
    assert!(reqs[0].query[0].1.contains("value:'a!'),(b'"), "{}", reqs[0].query[0].1);
    let (r, reqs) = MockUpstream::new().call(&LIST_DASHBOARDS, json!({"cursor": "x"}));
    assert!(message(&r.unwrap_err()).contains("not one this tool issued"));
    assert!(reqs.is_empty());
}

/// run_sql (synchronous answer): SQL Lab's execute body with a generated client id; rows come
/// back as arrays in column order.
#[test]
fn run_sql_posts_to_sql_lab_and_shapes_the_rows() {
    let payload = json!({"query_id": 91, "status": "success",
        "columns": [{"column_name": "region", "type": "STRING"}, {"column_name": "total", "type": "DOUBLE"}],
        "data": [{"region": "EU", "total": 12.5}, {"region": "US", "total": 30.0}],
        "query": {"id": "00000000000", "queryId": 91, "state": "success", "rows": 2, "limitingFactor": "NOT_LIMITED",
                  "executedSql": "SELECT region, SUM(x) AS total FROM sales GROUP BY region LIMIT 101"}});
    let (out, reqs) = MockUpstream::new().json(payload).ok(
        &RUN_SQL,
        json!({"database_id": 1, "sql": "SELECT region, SUM(x) AS total FROM sales GROUP BY region", "schema": "public"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/api/v1/sqllab/execute/", "query": [], "body": {"database_id": 1,
            "sql": "SELECT region, SUM(x) AS total FROM sales GROUP BY region", "client_id": "00000000000", "queryLimit": 100,
            "runAsync": false, "select_as_cta": false, "tab": "workbench", "expand_data": true, "schema": "public"}})
    );
    assert_eq!(
        out,
        json!({"query_id": 91, "client_id": "00000000000", "state": "success", "columns": ["region", "total"],
            "column_types": ["STRING", "DOUBLE"], "rows": [["EU", 12.5], ["US", 30.0]], "row_count": 2,
            "executed_sql": "SELECT region, SUM(x) AS total FROM sales GROUP BY region LIMIT 101"})
    );
    for (args, why) in [
        (json!({"database_id": 1, "sql": "  "}), "sql is empty"),
        (json!({"database_id": 1, "sql": "SELECT 1", "client_id": "a/b"}), "not a SQL Lab client id"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&RUN_SQL, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

/// An async answer without the query's id is a clear error, not a wait on nothing.
#[test]
fn run_sql_async_without_an_id_is_an_error() {
    let (r, reqs) = MockUpstream::new()
        .answer(202, json!({"query": {"state": "pending"}}).to_string().into_bytes())
        .call(&RUN_SQL, json!({"database_id": 1, "sql": "SELECT 1", "run_async": true}));
    assert!(message(&r.unwrap_err()).contains("did not say its id"));
    assert_eq!(reqs.len(), 1);
}

/// get_dashboard reads the dashboard and its charts; native filters come out of the
/// `json_metadata` string, and a metadata string that is not JSON leaves them out.
#[test]
fn get_dashboard_reads_charts_and_native_filters() {
    let metadata = json!({"native_filter_configuration": [{"id": "NATIVE_FILTER-1", "name": "Region", "filterType": "filter_select",
        "targets": [{"datasetId": 3, "column": {"name": "region"}}]}]}).to_string();
    let dashboard = json!({"result": {"id": 7, "dashboard_title": "Sales", "url": "/superset/dashboard/sales/", "published": true,
        "json_metadata": metadata}});
    let charts = json!({"result": [{"id": 41, "slice_name": "Revenue by region", "viz_type": "echarts_timeseries_bar",
        "description": "", "slice_url": "/explore/?slice_id=41", "form_data": {}}]});
    let (out, reqs) = MockUpstream::new()
        .with_field("base_url", "https://bi.example.com")
        .json(dashboard.clone())
        .json(charts.clone())
        .ok(&GET_DASHBOARD, json!({"dashboard": "sales"}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/api/v1/dashboard/sales", "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/api/v1/dashboard/sales/charts", "query": [], "body": null})
    );
    assert_eq!((out["status"].clone(), out["chart_count"].clone()), (json!("published"), json!(1)));
    assert_eq!(
        out["charts"],
        json!([{"id": 41, "name": "Revenue by region", "viz_type": "echarts_timeseries_bar", "url": "https://bi.example.com/explore/?slice_id=41"}])
    );
    assert_eq!(
        out["native_filters"],
        json!([{"id": "NATIVE_FILTER-1", "name": "Region", "type": "filter_select", "column": "region", "dataset_id": 3}])
    );
    let mut broken = dashboard;
    broken["result"]["json_metadata"] = json!("{not json");
    let (out, reqs) =
        MockUpstream::new().json(broken).json(charts).ok(&GET_DASHBOARD, json!({"dashboard": "../../security/login"}));
    assert!(out.get("native_filters").is_none());
    assert_eq!(reqs[0].path, "/api/v1/dashboard/..%2F..%2Fsecurity%2Flogin");
}

/// list_charts: each filter a Rison clause (a dashboard as a many-to-many relation); links made
/// absolute; the offset cursor.
#[test]
fn list_charts_filters_by_name_type_and_dashboard() {
    let body = json!({"count": 5, "ids": [42], "result": [{"id": 42, "slice_name": "Revenue by region", "viz_type": "echarts_timeseries_bar",
        "datasource_name_text": "public.orders", "datasource_id": 3, "description": "", "url": "/explore/?slice_id=42",
        "dashboards": [{"id": 7, "dashboard_title": "Sales report"}], "changed_on_utc": "2026-01-02T10:00:00.000000+0000",
        "changed_by_name": "Ann Lee", "owners": [{"first_name": "Ann", "last_name": "Lee", "id": 1}], "certified_by": null}]});
    let (out, reqs) = MockUpstream::new().with_field("base_url", "https://bi.example.com").json(body).ok(
        &LIST_CHARTS,
        json!({"search": "revenue", "viz_type": "echarts_timeseries_bar", "dashboard_id": 7, "limit": 2}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/chart/", "body": null, "query": [["q", "(filters:!((col:slice_name,opr:ct,value:revenue),(col:viz_type,opr:eq,value:echarts_timeseries_bar),(col:dashboards,opr:rel_m_m,value:7)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:2)"]]})
    );
    assert_eq!(
        out,
        json!({"count": 5, "next_cursor": "1:2", "charts": [{"id": 42, "name": "Revenue by region", "viz_type": "echarts_timeseries_bar",
            "dataset": "public.orders", "dataset_id": 3, "dashboards": [{"id": 7, "title": "Sales report"}],
            "url": "https://bi.example.com/explore/?slice_id=42", "changed_on": "2026-01-02T10:00:00.000000+0000",
            "changed_by": "Ann Lee", "owners": ["Ann Lee"]}]})
    );
}

/// get_chart_data: the chart's saved query as JSON, rows as arrays in column order, cut at the
/// limit; a 202 (async queries) says the result is pending.
#[test]
fn get_chart_data_reads_rows_in_column_order() {
    let body = json!({"result": [{"colnames": ["region", "revenue"], "coltypes": [1, 0], "rowcount": 3, "is_cached": true,
        "cached_dttm": "2026-01-02T10:00:00", "query": "SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region",
        "data": [{"region": "EU", "revenue": 12.5}, {"revenue": 30, "region": "US"}, {"region": "APAC", "revenue": 7}],
        "applied_filters": [], "rejected_filters": []}]});
    let (out, reqs) =
        MockUpstream::new().json(body).ok(&GET_CHART_DATA, json!({"chart_id": 42, "limit": 2, "force": true}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/chart/42/data/", "body": null, "query": [["format", "json"], ["force", "true"]]})
    );
    assert_eq!(
        out,
        json!({"chart_id": 42, "columns": ["region", "revenue"], "column_types": ["string", "numeric"],
            "rows": [["EU", 12.5], ["US", 30]], "row_count": 3, "truncated": true, "is_cached": true,
            "cached_at": "2026-01-02T10:00:00", "sql": "SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region"})
    );
    let (out, _) = MockUpstream::new()
        .answer(202, json!({"channel_id": "c1", "job_id": "j-9", "status": "pending"}).to_string().into_bytes())
        .ok(&GET_CHART_DATA, json!({"chart_id": 42}));
    assert_eq!(out["status"], json!("pending"));
    assert_eq!(out["job_id"], json!("j-9"));
}

/// list_datasets: database as a one-to-many relation, schema exact; a virtual dataset's SQL kept.
#[test]
fn list_datasets_filters_and_keeps_the_sql() {
    let body = json!({"count": 1, "result": [{"id": 3, "table_name": "orders_eu", "schema": "public", "catalog": null,
        "database": {"id": 1, "database_name": "warehouse"}, "kind": "virtual", "description": null,
        "sql": "SELECT * FROM orders WHERE region = 'EU'", "explore_url": "/explore/?datasource_type=table&datasource_id=3",
        "changed_on_utc": "2026-01-02T10:00:00.000000+0000", "changed_by_name": "", "owners": []}]});
    let (out, reqs) = MockUpstream::new()
        .with_field("base_url", "https://bi.example.com")
        .json(body)
        .ok(&LIST_DATASETS, json!({"search": "orders", "database_id": 1, "schema": "public"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/dataset/", "body": null, "query": [["q", "(filters:!((col:table_name,opr:ct,value:orders),(col:database,opr:rel_o_m,value:1),(col:schema,opr:eq,value:public)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:25)"]]})
    );
    assert_eq!(
        out,
        json!({"count": 1, "datasets": [{"id": 3, "name": "orders_eu", "schema": "public", "database": "warehouse", "database_id": 1,
            "kind": "virtual", "sql": "SELECT * FROM orders WHERE region = 'EU'",
            "url": "https://bi.example.com/explore/?datasource_type=table&datasource_id=3",
            "changed_on": "2026-01-02T10:00:00.000000+0000"}]})
    );
}

/// list_databases: by name, ascending; the capabilities an agent needs for SQL Lab.
#[test]
fn list_databases_sorts_by_name() {
    let body = json!({"count": 1, "result": [{"id": 1, "database_name": "warehouse", "backend": "postgresql",
        "expose_in_sqllab": true, "allow_dml": false, "allow_run_async": false, "allow_file_upload": false,
        "changed_on_delta_humanized": "a month ago"}]});
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_DATABASES, json!({}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/database/", "body": null,
               "query": [["q", "(order_column:database_name,order_direction:asc,page:0,page_size:50)"]]})
    );
    assert_eq!(
        out,
        json!({"count": 1, "databases": [{"id": 1, "name": "warehouse", "backend": "postgresql", "in_sql_lab": true,
            "allow_dml": false, "allow_run_async": false, "changed": "a month ago"}]})
    );
}

/// export_csv: a chart's CSV read inline (byte-order mark dropped) or saved to a local file;
/// neither or both sources is refused before any request.
#[test]
fn export_csv_reads_inline_or_saves() {
    let csv = "\u{feff}region,revenue\nEU,12.5\nUS,30\n".as_bytes().to_vec();
    let headers =
        [("content-type", "text/csv; charset=utf-8"), ("content-disposition", "attachment; filename=\"revenue.csv\"")];
    let (out, reqs) = MockUpstream::new().reply_raw(csv.clone(), &headers).ok(&EXPORT_CSV, json!({"chart_id": 42}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/chart/42/data/", "body": null, "query": [["format", "csv"]]})
    );
    assert_eq!(
        out,
        json!({"chart_id": 42, "filename": "revenue.csv", "size_bytes": csv.len(), "rows": 2, "csv": "region,revenue\nEU,12.5\nUS,30\n"})
    );
    let (out, reqs) = MockUpstream::new()
        .reply_raw(b"a,b\n1,2\n".to_vec(), &[("content-type", "text/csv")])
        .ok(&EXPORT_CSV, json!({"sql_client_id": "Hk3x9", "save_to": "/tmp/q.csv"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/v1/sqllab/export/Hk3x9/", "body": null, "query": []})
    );
    assert_eq!(out, json!({"sql_client_id": "Hk3x9", "saved_to": "/tmp/q.csv", "size_bytes": 8}));
    let (r, reqs) = MockUpstream::new().call(&EXPORT_CSV, json!({"chart_id": 42, "sql_client_id": "Hk3x9"}));
    assert!(message(&r.unwrap_err()).contains("give exactly one of chart_id and sql_client_id"));
    assert!(reqs.is_empty());
}
