//! Dashboards, charts (and the data behind them), datasets and databases.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::*;

// ------------------------------------------------------------------------------ dashboards

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDashboards {
    /// Only dashboards whose title contains this text (case-insensitive).
    search: Option<String>,
    /// How many dashboards to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Superset's full list items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_DASHBOARDS: ToolSpec = tool! {
    name: "superset_list_dashboards",
    effect: Read,
    results: Private,
    args: ListDashboards,
    run: list_dashboards,
    keywords: ["dashboards", "reports", "BI", "analytics", "find dashboard", "KPI"],
    description: "List Apache Superset dashboards (BI reports), optionally filtered by title, most recently changed first, with status (published/draft), owners and links.",
};

pub(crate) async fn list_dashboards(up: Arc<dyn Upstream>, args: ListDashboards) -> Result<Value, ToolError> {
    let (page, size) = paging(args.limit, args.cursor.as_deref())?;
    let filters: Vec<Value> =
        search_term(&args.search).map(|s| filter("dashboard_title", "ct", json!(s))).into_iter().collect();
    let q = list_q(filters, ("changed_on_delta_humanized", "desc"), page, size);
    let body = up.send(HttpRequest::get("/api/v1/dashboard/").query("q", q)).await?.json()?;
    let base = base_url(&*up);
    let dashboards: Vec<Value> =
        body["result"].as_array().into_iter().flatten().map(|d| shape_dashboard(d, base.as_deref())).collect();
    let out = compact(json!({
        "count": body["count"],
        "dashboards": dashboards,
        "next_cursor": next_cursor(&body["count"], page, size),
    }));
    Ok(with_raw(out, args.include_raw, &body["result"]))
}

fn shape_dashboard(d: &Value, base: Option<&str>) -> Value {
    let status = d["status"]
        .as_str()
        .map(str::to_string)
        .or_else(|| d["published"].as_bool().map(|p| if p { "published".to_string() } else { "draft".to_string() }));
    // Custom tags only (type 1); owner:/type:/favorited_by: tags are Superset's own bookkeeping.
    let tags: Vec<Value> = d["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"].as_u64() == Some(1) || t["type"] == "custom")
        .map(|t| t["name"].clone())
        .collect();
    let changed_by = match &d["changed_by_name"] {
        Value::String(s) if !s.is_empty() => json!(s),
        _ => person(&d["changed_by"]),
    };
    compact(json!({
        "id": d["id"],
        "title": d["dashboard_title"],
        "slug": d["slug"],
        "status": status,
        "url": link(base, &d["url"]),
        "changed_on": d.get("changed_on_utc").or_else(|| d.get("changed_on")),
        "changed": d["changed_on_delta_humanized"],
        "changed_by": changed_by,
        "owners": people(&d["owners"]),
        "certified_by": d["certified_by"].as_str().filter(|s| !s.is_empty()),
        "tags": (!tags.is_empty()).then_some(tags),
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetDashboard {
    /// The dashboard's numeric id (e.g. 7) or its slug (e.g. "sales"), as in its URL /superset/dashboard/<id or slug>/.
    dashboard: crate::api::IdOrName,
    /// Also return Superset's full dashboard and charts payloads under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_DASHBOARD: ToolSpec = tool! {
    name: "superset_get_dashboard",
    effect: Read,
    results: Private,
    args: GetDashboard,
    run: get_dashboard,
    keywords: ["dashboard details", "charts on dashboard", "filters", "report", "BI"],
    description: "Get one Superset dashboard by id or slug: title, status, owners, native filters and the charts on it (ids, names, visualization types) to read data from.",
};

pub(crate) async fn get_dashboard(up: Arc<dyn Upstream>, args: GetDashboard) -> Result<Value, ToolError> {
    let path = format!("/api/v1/dashboard/{}", encode_segment(&args.dashboard.0));
    let (dashboard, charts) = futures_util::future::try_join(
        up.send(HttpRequest::get(path.clone())),
        up.send(HttpRequest::get(format!("{path}/charts"))),
    )
    .await?;
    let (dashboard, charts) = (dashboard.json()?, charts.json()?);
    let d = &dashboard["result"];
    let base = base_url(&*up);
    let mut out = shape_dashboard(d, base.as_deref());
    let chart_list: Vec<Value> = charts["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            compact(json!({
                "id": c["id"],
                "name": c["slice_name"],
                "viz_type": c["viz_type"].as_str().or_else(|| c["form_data"]["viz_type"].as_str()),
                "description": c["description"].as_str().filter(|s| !s.is_empty()),
                "url": link(base.as_deref(), c.get("slice_url").unwrap_or(&c["url"])),
            }))
        })
        .collect();
    let metadata: Value = d["json_metadata"].as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
    let filters: Vec<Value> = metadata["native_filter_configuration"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            compact(json!({
                "id": f["id"],
                "name": f["name"],
                "type": f["filterType"],
                "column": f["targets"][0]["column"]["name"],
                "dataset_id": f["targets"][0]["datasetId"],
            }))
        })
        .collect();
    if let Value::Object(o) = &mut out {
        o.insert("chart_count".into(), json!(chart_list.len()));
        o.insert("charts".into(), Value::Array(chart_list));
        if !filters.is_empty() {
            o.insert("native_filters".into(), Value::Array(filters));
        }
    }
    Ok(with_raw(out, args.include_raw, &json!({"dashboard": d, "charts": charts["result"]})))
}

// ---------------------------------------------------------------------------------- charts

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListCharts {
    /// Only charts whose name contains this text (case-insensitive).
    search: Option<String>,
    /// Only charts of this visualization type, e.g. "table", "pie", "big_number_total", "echarts_timeseries_line".
    viz_type: Option<String>,
    /// Only charts on this dashboard (its numeric id).
    dashboard_id: Option<u64>,
    /// How many charts to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Superset's full list items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_CHARTS: ToolSpec = tool! {
    name: "superset_list_charts",
    effect: Read,
    results: Private,
    args: ListCharts,
    run: list_charts,
    keywords: ["charts", "visualizations", "slices", "graphs", "plots", "find chart"],
    description: "List Superset charts (visualizations, slices), filtered by name, visualization type or the dashboard they are on, with their dataset and dashboards.",
};

pub(crate) async fn list_charts(up: Arc<dyn Upstream>, args: ListCharts) -> Result<Value, ToolError> {
    let (page, size) = paging(args.limit, args.cursor.as_deref())?;
    let mut filters = Vec::new();
    if let Some(s) = search_term(&args.search) {
        filters.push(filter("slice_name", "ct", json!(s)));
    }
    if let Some(v) = search_term(&args.viz_type) {
        filters.push(filter("viz_type", "eq", json!(v)));
    }
    if let Some(id) = args.dashboard_id {
        filters.push(filter("dashboards", "rel_m_m", json!(id)));
    }
    let q = list_q(filters, ("changed_on_delta_humanized", "desc"), page, size);
    let body = up.send(HttpRequest::get("/api/v1/chart/").query("q", q)).await?.json()?;
    let base = base_url(&*up);
    let charts: Vec<Value> = body["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let dashboards: Vec<Value> = c["dashboards"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| compact(json!({"id": d["id"], "title": d["dashboard_title"]})))
                .collect();
            compact(json!({
                "id": c["id"],
                "name": c["slice_name"],
                "viz_type": c["viz_type"],
                "dataset": c["datasource_name_text"],
                "dataset_id": c["datasource_id"],
                "description": c["description"].as_str().filter(|s| !s.is_empty()),
                "dashboards": (!dashboards.is_empty()).then_some(dashboards),
                "url": link(base.as_deref(), &c["url"]),
                "changed_on": c["changed_on_utc"],
                "changed_by": c["changed_by_name"].as_str().filter(|s| !s.is_empty()),
                "owners": people(&c["owners"]),
                "certified_by": c["certified_by"].as_str().filter(|s| !s.is_empty()),
            }))
        })
        .collect();
    let out = compact(json!({
        "count": body["count"],
        "charts": charts,
        "next_cursor": next_cursor(&body["count"], page, size),
    }));
    Ok(with_raw(out, args.include_raw, &body["result"]))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetChartData {
    /// The chart's numeric id (superset_list_charts, or slice_id in an explore URL).
    chart_id: u64,
    /// Most rows to return per query (1-10000); the chart's own row limit applies first.
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 10000))]
    limit: usize,
    /// Bypass Superset's cache and run the chart's query again.
    #[serde(default)]
    force: bool,
    /// Apply this dashboard's native filters (their saved defaults) to the chart's query.
    filters_dashboard_id: Option<u64>,
    /// Also return Superset's full data payload under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_CHART_DATA: ToolSpec = tool! {
    name: "superset_get_chart_data",
    effect: Read,
    results: Private,
    args: GetChartData,
    run: get_chart_data,
    keywords: ["chart data", "numbers behind", "rows", "metrics", "values", "results", "underlying data"],
    description: "Get the rows behind a saved Superset chart (its saved query: metrics, groupings, filters), as columns and rows, optionally with a dashboard's native filters applied or the cache bypassed.",
};

pub(crate) async fn get_chart_data(up: Arc<dyn Upstream>, args: GetChartData) -> Result<Value, ToolError> {
    let (resp, filters) = match args.filters_dashboard_id {
        // `GET .../data/` reads only format, type and force: a dashboard's filters go into the
        // chart's saved query context, sent to `POST /api/v1/chart/data`.
        Some(dashboard) => {
            let (context, filters) = filtered_query_context(&*up, args.chart_id, dashboard, args.force).await?;
            (up.send(HttpRequest::post("/api/v1/chart/data").json(context)).await?, Some(filters))
        }
        None => {
            let req = HttpRequest::get(format!("/api/v1/chart/{}/data/", args.chart_id))
                .query("format", "json")
                .query_opt("force", args.force.then_some("true"));
            (up.send(req).await?, None)
        }
    };
    let body = resp.json()?;
    if resp.status == 202 {
        // Global async queries: Superset queued the query; the cache serves it once it ran.
        return Ok(compact(json!({
            "chart_id": args.chart_id,
            "status": "pending",
            "job_id": body["job_id"],
            "note": "Superset is running this chart's query in the background (async queries are on); call again in a few seconds without force to read the cached result.",
        })));
    }
    let queries: Vec<Value> =
        body["result"].as_array().into_iter().flatten().map(|q| shape_chart_query(q, args.limit)).collect();
    let mut queries = queries.into_iter();
    let mut out = json!({"chart_id": args.chart_id});
    if let (Value::Object(o), Some(Value::Object(first))) = (&mut out, queries.next()) {
        o.extend(first);
    }
    let others: Vec<Value> = queries.collect();
    if !others.is_empty() {
        out["other_queries"] = Value::Array(others);
    }
    if let Some(filters) = filters {
        out["dashboard_filters"] = filters;
    }
    Ok(with_raw(out, args.include_raw, &body))
}

/// A JSON document Superset stores as a string (`json_metadata`, `query_context`), parsed.
fn stored_json(v: &Value) -> Option<Value> {
    v.as_str().and_then(|s| serde_json::from_str(s).ok()).filter(Value::is_object)
}

/// The chart's saved query context with the dashboard's native filters (their default values) added
/// to every query, and a note of which filters were applied or skipped and why.
async fn filtered_query_context(
    up: &dyn Upstream,
    chart_id: u64,
    dashboard_id: u64,
    force: bool,
) -> Result<(Value, Value), ToolError> {
    let dashboard = up.send(HttpRequest::get(format!("/api/v1/dashboard/{dashboard_id}"))).await?.json()?;
    let chart = up.send(HttpRequest::get(format!("/api/v1/chart/{chart_id}"))).await?.json()?;
    let Some(mut context) = stored_json(&chart["result"]["query_context"]) else {
        return Err(invalid(
            "filters_dashboard_id",
            format!("chart {chart_id} has no saved query context, so dashboard filters cannot be added to it"),
            "open the chart in Superset and save it once, or call again without filters_dashboard_id",
        ));
    };
    let dataset = chart["result"]["datasource_id"].as_u64().or_else(|| context["datasource"]["id"].as_u64());
    let metadata = stored_json(&dashboard["result"]["json_metadata"]).unwrap_or_default();
    let (extra, time_range, applied, skipped) = native_filters(&metadata, chart_id, dataset);
    if let Some(queries) = context["queries"].as_array_mut() {
        for q in queries {
            if !q["filters"].is_array() {
                q["filters"] = json!([]);
            }
            if let Some(list) = q["filters"].as_array_mut() {
                list.extend(extra.iter().cloned());
            }
            if let Some(range) = &time_range {
                q["time_range"] = json!(range);
            }
        }
    }
    context["force"] = json!(force);
    context["result_format"] = json!("json");
    context["result_type"] = json!("full");
    let note = compact(json!({
        "dashboard_id": dashboard_id,
        "applied": (!applied.is_empty()).then_some(applied),
        "skipped": (!skipped.is_empty()).then_some(skipped),
    }));
    Ok((context, note))
}

type NativeFilters = (Vec<Value>, Option<String>, Vec<Value>, Vec<Value>);

/// Query filters from a dashboard's `native_filter_configuration` for one chart: (filters, a time
/// range, names applied, {name, reason} skipped).
fn native_filters(metadata: &Value, chart_id: u64, dataset: Option<u64>) -> NativeFilters {
    let (mut filters, mut time_range, mut applied, mut skipped) = (Vec::new(), None, Vec::new(), Vec::new());
    for f in metadata["native_filter_configuration"].as_array().into_iter().flatten() {
        if f["type"].as_str().is_some_and(|t| t != "NATIVE_FILTER") {
            continue; // dividers
        }
        let name = f["name"].clone();
        let mut skip = |reason: &str| skipped.push(json!({"name": name, "reason": reason}));
        let value = &f["defaultDataMask"]["filterState"]["value"];
        if value.is_null() || value.as_array().is_some_and(Vec::is_empty) {
            skip("no default value");
            continue;
        }
        let scope = &f["scope"];
        let in_scope = match f["chartsInScope"].as_array() {
            Some(charts) => charts.iter().any(|c| c.as_u64() == Some(chart_id)),
            None => !scope["excluded"].as_array().is_some_and(|ex| ex.iter().any(|c| c.as_u64() == Some(chart_id))),
        };
        if !in_scope {
            skip("the chart is not in this filter's scope");
            continue;
        }
        let target = &f["targets"][0];
        let column = target["column"]["name"].as_str();
        let on_dataset = target["datasetId"].as_u64();
        let kind = f["filterType"].as_str().unwrap_or("");
        if kind != "filter_time" && (on_dataset.is_none() || on_dataset != dataset) {
            skip("it filters another dataset than the chart's");
            continue;
        }
        match (kind, column) {
            ("filter_select", Some(col)) => {
                let inverse = f["controlValues"]["inverseSelection"].as_bool() == Some(true);
                let values = if value.is_array() { value.clone() } else { json!([value]) };
                filters.push(json!({"col": col, "op": if inverse { "NOT IN" } else { "IN" }, "val": values}));
            }
            ("filter_range", Some(col)) => {
                for (bound, op) in [(&value[0], ">="), (&value[1], "<=")] {
                    if !bound.is_null() {
                        filters.push(json!({"col": col, "op": op, "val": bound}));
                    }
                }
            }
            ("filter_time", _) if value.is_string() => time_range = value.as_str().map(str::to_string),
            _ => {
                skip("this kind of native filter is not applied outside the dashboard");
                continue;
            }
        }
        applied.push(name);
    }
    (filters, time_range, applied, skipped)
}

/// Superset's GenericDataType numbers as words.
fn generic_type(t: &Value) -> Value {
    match t.as_u64() {
        Some(0) => json!("numeric"),
        Some(1) => json!("string"),
        Some(2) => json!("temporal"),
        Some(3) => json!("boolean"),
        _ => t.clone(),
    }
}

fn shape_chart_query(q: &Value, limit: usize) -> Value {
    let columns: Vec<String> =
        q["colnames"].as_array().into_iter().flatten().filter_map(|c| c.as_str().map(str::to_string)).collect();
    let data = q["data"].as_array().map(Vec::as_slice).unwrap_or_default();
    let rows = rows_of(data, &columns, limit);
    let (sql, sql_cut) = cut(q["query"].as_str(), SQL_BUDGET);
    let rejected: Vec<Value> = q["rejected_filters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| compact(json!({"column": f["column"], "reason": f["reason"]})))
        .collect();
    let applied: Vec<Value> =
        q["applied_filters"].as_array().into_iter().flatten().map(|f| f["column"].clone()).collect();
    compact(json!({
        "columns": columns,
        "column_types": q["coltypes"].as_array().map(|t| t.iter().map(generic_type).collect::<Vec<_>>()),
        "rows": rows,
        "row_count": q["rowcount"].as_u64().unwrap_or(data.len() as u64),
        "truncated": (data.len() > limit).then_some(true),
        "is_cached": q["is_cached"].as_bool().filter(|c| *c),
        "cached_at": q["cached_dttm"],
        "applied_filters": (!applied.is_empty()).then_some(applied),
        "rejected_filters": (!rejected.is_empty()).then_some(rejected),
        "sql": sql,
        "sql_truncated": sql_cut.then_some(true),
        "error": q["error"],
    }))
}

/// Row objects as arrays in column order (compact), at most `limit` of them.
pub(super) fn rows_of(data: &[Value], columns: &[String], limit: usize) -> Vec<Value> {
    data.iter()
        .take(limit)
        .map(|row| match row {
            Value::Object(o) => {
                Value::Array(columns.iter().map(|c| o.get(c).cloned().unwrap_or(Value::Null)).collect())
            }
            other => other.clone(),
        })
        .collect()
}

// -------------------------------------------------------------------------------- datasets

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDatasets {
    /// Only datasets whose table name contains this text (case-insensitive).
    search: Option<String>,
    /// Only datasets of this database (its numeric id, from superset_list_databases).
    database_id: Option<u64>,
    /// Only datasets in this schema, e.g. "public".
    schema: Option<String>,
    /// How many datasets to return (1-100).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Superset's full list items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_DATASETS: ToolSpec = tool! {
    name: "superset_list_datasets",
    effect: Read,
    results: Private,
    args: ListDatasets,
    run: list_datasets,
    keywords: ["datasets", "tables", "data sources", "virtual dataset", "schema", "physical table"],
    description: "List Superset datasets (physical tables and virtual SQL datasets) with their database and schema, filtered by name, database or schema.",
};

pub(crate) async fn list_datasets(up: Arc<dyn Upstream>, args: ListDatasets) -> Result<Value, ToolError> {
    let (page, size) = paging(args.limit, args.cursor.as_deref())?;
    let mut filters = Vec::new();
    if let Some(s) = search_term(&args.search) {
        filters.push(filter("table_name", "ct", json!(s)));
    }
    if let Some(id) = args.database_id {
        filters.push(filter("database", "rel_o_m", json!(id)));
    }
    if let Some(s) = search_term(&args.schema) {
        filters.push(filter("schema", "eq", json!(s)));
    }
    let q = list_q(filters, ("changed_on_delta_humanized", "desc"), page, size);
    let body = up.send(HttpRequest::get("/api/v1/dataset/").query("q", q)).await?.json()?;
    let base = base_url(&*up);
    let datasets: Vec<Value> = body["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let (sql, sql_cut) = cut(d["sql"].as_str().filter(|s| !s.trim().is_empty()), SQL_BUDGET);
            let kind = d["kind"]
                .as_str()
                .map(str::to_string)
                .or_else(|| Some(if sql.is_null() { "physical".to_string() } else { "virtual".to_string() }));
            compact(json!({
                "id": d["id"],
                "name": d["table_name"],
                "schema": d["schema"],
                "catalog": d["catalog"],
                "database": d["database"]["database_name"],
                "database_id": d["database"]["id"],
                "kind": kind,
                "description": d["description"].as_str().filter(|s| !s.is_empty()),
                "sql": sql,
                "sql_truncated": sql_cut.then_some(true),
                "url": link(base.as_deref(), &d["explore_url"]),
                "changed_on": d["changed_on_utc"],
                "changed_by": d["changed_by_name"].as_str().filter(|s| !s.is_empty()),
                "owners": people(&d["owners"]),
            }))
        })
        .collect();
    let out = compact(json!({
        "count": body["count"],
        "datasets": datasets,
        "next_cursor": next_cursor(&body["count"], page, size),
    }));
    Ok(with_raw(out, args.include_raw, &body["result"]))
}

// ------------------------------------------------------------------------------- databases

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListDatabases {
    /// Only databases whose name contains this text (case-insensitive).
    search: Option<String>,
    /// How many databases to return (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Superset's full list items under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_DATABASES: ToolSpec = tool! {
    name: "superset_list_databases",
    effect: Read,
    results: Private,
    args: ListDatabases,
    run: list_databases,
    keywords: ["databases", "connections", "data warehouse", "database id", "backend", "SQL Lab"],
    description: "List the database connections in Superset (ids to run SQL Lab queries against), with backend and whether DML and async queries are allowed.",
};

pub(crate) async fn list_databases(up: Arc<dyn Upstream>, args: ListDatabases) -> Result<Value, ToolError> {
    let (page, size) = paging(args.limit, args.cursor.as_deref())?;
    let filters: Vec<Value> =
        search_term(&args.search).map(|s| filter("database_name", "ct", json!(s))).into_iter().collect();
    let q = list_q(filters, ("database_name", "asc"), page, size);
    let body = up.send(HttpRequest::get("/api/v1/database/").query("q", q)).await?.json()?;
    let databases: Vec<Value> = body["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            compact(json!({
                "id": d["id"],
                "name": d["database_name"],
                "backend": d["backend"],
                "in_sql_lab": d["expose_in_sqllab"],
                "allow_dml": d["allow_dml"],
                "allow_run_async": d["allow_run_async"],
                "allow_file_upload": d["allow_file_upload"].as_bool().filter(|a| *a),
                "changed": d["changed_on_delta_humanized"],
            }))
        })
        .collect();
    let out = compact(json!({
        "count": body["count"],
        "databases": databases,
        "next_cursor": next_cursor(&body["count"], page, size),
    }));
    Ok(with_raw(out, args.include_raw, &body["result"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which of a dashboard's native filters reach a chart's query, and as what.
    #[test]
    fn native_filters_apply_only_to_charts_in_scope_on_their_dataset() {
        let f = |name: &str, kind: &str, dataset: u64, value: Value, extra: Value| {
            let mut v = json!({"id": name, "name": name, "type": "NATIVE_FILTER", "filterType": kind,
                "targets": [{"column": {"name": "region"}, "datasetId": dataset}],
                "defaultDataMask": {"filterState": {"value": value}}, "scope": {"rootPath": ["ROOT_ID"], "excluded": []}});
            if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
                o.extend(e);
            }
            v
        };
        let meta = json!({"native_filter_configuration": [
            f("Region", "filter_select", 3, json!(["EMEA"]), json!({"controlValues": {"inverseSelection": true}})),
            f("Revenue", "filter_range", 3, json!([10, null]), json!({})),
            f("Elsewhere", "filter_select", 4, json!(["x"]), json!({})),
            f("Excluded", "filter_select", 3, json!(["x"]), json!({"scope": {"excluded": [42]}})),
            f("Unset", "filter_select", 3, Value::Null, json!({})),
            f("When", "filter_time", 3, json!("Last week"), json!({})),
            {"id": "DIVIDER-1", "type": "DIVIDER", "title": "Section"},
        ]});
        let (filters, time_range, applied, skipped) = native_filters(&meta, 42, Some(3));
        assert_eq!(
            filters,
            vec![
                json!({"col": "region", "op": "NOT IN", "val": ["EMEA"]}),
                json!({"col": "region", "op": ">=", "val": 10})
            ]
        );
        assert_eq!(time_range.as_deref(), Some("Last week"));
        assert_eq!(applied, vec![json!("Region"), json!("Revenue"), json!("When")]);
        let skipped: Vec<&str> = skipped.iter().filter_map(|s| s["name"].as_str()).collect();
        assert_eq!(skipped, ["Elsewhere", "Excluded", "Unset"]);
    }
}
