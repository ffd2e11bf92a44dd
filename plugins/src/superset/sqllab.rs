//! SQL Lab (run a query, sync or async with polling) and CSV export (a chart's data or a SQL Lab
//! result).

use crate::tool;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use super::browse::rows_of;
use super::*;

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSql {
    /// The database to run against (its numeric id, from superset_list_databases).
    database_id: u64,
    /// The SQL to run, e.g. "SELECT region, SUM(revenue) FROM sales GROUP BY 1". Statements that change data only run when the database allows DML.
    #[schemars(length(min = 1))]
    sql: String,
    /// The schema unqualified table names resolve in, e.g. "public".
    schema: Option<String>,
    /// The catalog, for databases that have several (e.g. Trino, Databricks).
    catalog: Option<String>,
    /// Most rows to return (1-10000); SQL Lab applies it to the query (queryLimit).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 10000))]
    limit: u32,
    /// An id of your own for this query (1-11 letters or digits), e.g. to export its results with superset_export_csv later; one is made up when absent.
    #[schemars(length(min = 1, max = 11))]
    client_id: Option<String>,
    /// Run it as an async SQL Lab query (the database must allow it); the result is polled for up to max_wait_seconds.
    #[serde(default)]
    run_async: bool,
    /// With run_async: how long to wait for the result before returning the query's state (1-50 seconds).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 50))]
    max_wait_seconds: u64,
    /// Also return Superset's full result payload under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const RUN_SQL: ToolSpec = tool! {
    name: "superset_run_sql",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: RunSql,
    run: run_sql,
    keywords: ["SQL", "query", "SQL Lab", "SELECT", "run query", "execute", "ad hoc query", "warehouse"],
    description: "Run a SQL query in Superset SQL Lab against one of its databases and return the columns and rows (row limit applies; long queries can run async and are polled). Treated as a write: SQL may change data when the database allows DML.",
};

pub(crate) async fn run_sql(up: Arc<dyn Upstream>, args: RunSql) -> Result<Value, ToolError> {
    if args.sql.trim().is_empty() {
        return Err(invalid("sql", "sql is empty", "give the SQL to run"));
    }
    let client_id = match &args.client_id {
        Some(id) if !id.is_empty() && id.len() <= 11 && id.bytes().all(|b| b.is_ascii_alphanumeric()) => id.clone(),
        Some(id) => {
            return Err(invalid(
                "client_id",
                format!("'{id}' is not a SQL Lab client id"),
                "use 1-11 letters or digits",
            ));
        }
        None => up.new_id().chars().take(11).collect(),
    };
    let mut body = json!({
        "database_id": args.database_id,
        "sql": args.sql,
        "client_id": client_id,
        "queryLimit": args.limit,
        "runAsync": args.run_async,
        "select_as_cta": false,
        "tab": "workbench",
        "expand_data": true,
    });
    if let Some(schema) = &args.schema {
        body["schema"] = json!(schema);
    }
    if let Some(catalog) = &args.catalog {
        body["catalog"] = json!(catalog);
    }
    let resp = up.send(HttpRequest::post("/api/v1/sqllab/execute/").json(body)).await?;
    let payload = resp.json()?;
    if resp.status != 202 {
        return Ok(with_raw(shape_results(&payload, args.limit as usize), args.include_raw, &payload));
    }
    // Async: SQL Lab queued the query. Poll its state, then fetch the stored results.
    let query = &payload["query"];
    let query_id =
        query["queryId"].as_u64().or_else(|| query["serverId"].as_u64()).ok_or_else(|| ToolError::Upstream {
            status: 202,
            message: "SQL Lab accepted the query but did not say its id".into(),
            retry_after: None,
        })?;
    let client_id = query["id"].as_str().unwrap_or(&client_id).to_string();
    let budget = Duration::from_secs(args.max_wait_seconds);
    let mut waited = Duration::ZERO;
    let mut step = Duration::from_millis(500);
    let mut state = query["state"].as_str().unwrap_or("pending").to_string();
    loop {
        let status = up.send(HttpRequest::get(format!("/api/v1/query/{query_id}"))).await?.json()?;
        let q = &status["result"];
        state = q["status"].as_str().unwrap_or(&state).to_string();
        match state.as_str() {
            "success" => {
                let Some(key) = q["results_key"].as_str().filter(|k| !k.is_empty()) else {
                    return Ok(compact(json!({
                        "query_id": query_id,
                        "client_id": client_id,
                        "state": state,
                        "row_count": q["rows"],
                        "note": "the query finished but Superset kept no results to fetch (no results backend); export them with superset_export_csv and sql_client_id",
                    })));
                };
                let rison = rison::encode(&json!({"key": key, "rows": args.limit}));
                let results = up.send(HttpRequest::get("/api/v1/sqllab/results/").query("q", rison)).await?.json()?;
                return Ok(with_raw(shape_results(&results, args.limit as usize), args.include_raw, &results));
            }
            "failed" | "stopped" | "timed_out" => {
                let message =
                    q["error_message"].as_str().filter(|m| !m.is_empty()).unwrap_or("the query did not finish");
                return Err(ToolError::Upstream {
                    status: 400,
                    message: format!("SQL Lab query {query_id} {state}: {message}"),
                    retry_after: None,
                });
            }
            _ => {}
        }
        if waited >= budget {
            break;
        }
        let pause = step.min(budget - waited);
        up.sleep(pause).await;
        waited += pause;
        step = (step * 2).min(Duration::from_secs(3));
    }
    Ok(json!({
        "query_id": query_id,
        "client_id": client_id,
        "state": state,
        "note": format!(
            "still {state} after {}s; export its results later with superset_export_csv and sql_client_id '{client_id}', or run it again with a larger max_wait_seconds",
            args.max_wait_seconds
        ),
    }))
}

/// A SQL Lab result payload (sync execute or `/sqllab/results/`) as columns and rows.
fn shape_results(payload: &Value, limit: usize) -> Value {
    let query = &payload["query"];
    let columns: Vec<String> = payload["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["column_name"].as_str().or_else(|| c["name"].as_str()).map(str::to_string))
        .collect();
    let types: Vec<Value> = payload["columns"].as_array().into_iter().flatten().map(|c| c["type"].clone()).collect();
    let data = payload["data"].as_array().map(Vec::as_slice).unwrap_or_default();
    let rows = rows_of(data, &columns, limit);
    let limited = query["limitingFactor"].as_str().filter(|f| *f != "NOT_LIMITED" && *f != "UNKNOWN").is_some();
    let (sql, sql_cut) = cut(query["executedSql"].as_str(), SQL_BUDGET);
    compact(json!({
        "query_id": payload["query_id"].as_u64().or_else(|| query["queryId"].as_u64()),
        "client_id": query["id"],
        "state": payload["status"].as_str().or_else(|| query["state"].as_str()),
        "columns": columns,
        "column_types": (types.iter().any(|t| !t.is_null())).then_some(types),
        "rows": rows,
        "row_count": query["rows"].as_u64().unwrap_or(data.len() as u64),
        "limited": limited.then_some(true),
        "truncated": (data.len() > limit).then_some(true),
        "executed_sql": sql,
        "sql_truncated": sql_cut.then_some(true),
    }))
}

// ----------------------------------------------------------------------------------- export

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportCsv {
    /// Export this chart's data (its numeric id). Give this or sql_client_id.
    chart_id: Option<u64>,
    /// Export this SQL Lab query's results (the client_id superset_run_sql returned). Give this or chart_id.
    #[schemars(length(min = 1, max = 11))]
    sql_client_id: Option<String>,
    /// Write the CSV to this absolute local path instead of returning it, e.g. "/home/me/sales.csv".
    save_to: Option<String>,
    /// With save_to: replace an existing file.
    #[serde(default)]
    overwrite: bool,
    /// Longest CSV text returned inline, in characters; the rest is cut and truncated is set.
    #[serde_inline_default(TEXT_BUDGET)]
    #[schemars(range(min = 100, max = 200000))]
    max_chars: usize,
}

pub(crate) const EXPORT_CSV: ToolSpec = tool! {
    name: "superset_export_csv",
    effect: Read,
    files: Writes(&["save_to"]),
    results: Private,
    args: ExportCsv,
    run: export_csv,
    keywords: ["CSV", "export", "download", "spreadsheet", "save data", "SQL Lab results"],
    description: "Export a Superset chart's data, or a SQL Lab query's results (by its client id), as CSV: returned inline (cut at max_chars) or written to a local file.",
};

pub(crate) async fn export_csv(up: Arc<dyn Upstream>, args: ExportCsv) -> Result<Value, ToolError> {
    let (req, source) = match (&args.chart_id, &args.sql_client_id) {
        (Some(id), None) => {
            (HttpRequest::get(format!("/api/v1/chart/{id}/data/")).query("format", "csv"), json!({"chart_id": id}))
        }
        (None, Some(client)) if !client.trim().is_empty() => (
            HttpRequest::get(format!("/api/v1/sqllab/export/{}/", encode_segment(client.trim()))),
            json!({"sql_client_id": client.trim()}),
        ),
        _ => {
            return Err(ToolError::InvalidArguments {
                message: "give exactly one of chart_id and sql_client_id".into(),
                problems: vec![
                    ArgProblem { path: "/chart_id".into(), problem: "a chart to export".into() },
                    ArgProblem { path: "/sql_client_id".into(), problem: "or a SQL Lab query to export".into() },
                ],
            });
        }
    };
    let resp = up.send(req).await?;
    let content_type = resp.header("content-type").unwrap_or("text/csv").to_string();
    let zip = content_type.contains("zip");
    let filename = resp.header("content-disposition").and_then(|d| {
        d.split(';').find_map(|p| p.trim().strip_prefix("filename=").map(|f| f.trim_matches('"').to_string()))
    });
    let mut out = source;
    if let Some(f) = filename {
        out["filename"] = json!(f);
    }
    match &args.save_to {
        Some(path) => {
            let written = up.write_local_file(path, resp.body, args.overwrite).await?;
            out["saved_to"] = json!(path);
            out["size_bytes"] = json!(written);
            if zip {
                out["format"] = json!("zip");
                out["note"] = json!("the chart has several queries, so Superset sent a ZIP of CSV files");
            }
        }
        None if zip => {
            return Err(invalid(
                "save_to",
                "this chart has several queries, so Superset sends a ZIP of CSV files; give save_to, an absolute local path for it",
                "an absolute path ending in .zip",
            ));
        }
        None => {
            let text = String::from_utf8_lossy(&resp.body);
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let (csv, truncated) = truncate_chars(text, args.max_chars);
            out["size_bytes"] = json!(resp.body.len());
            out["rows"] = json!(text.lines().count().saturating_sub(1));
            out["csv"] = json!(csv);
            if truncated {
                out["truncated"] = json!(true);
            }
        }
    }
    Ok(out)
}
