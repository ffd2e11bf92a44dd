//! Apache Superset against a fake on 127.0.0.1 that checks what Superset checks: the login body
//! (`POST /api/v1/security/login`), the JWT on every API call (flask-jwt-extended's 401s), and on
//! writes the `X-CSRFToken` header plus the `session` cookie it belongs to (Flask-WTF's 400 "The CSRF
//! token is missing."). List endpoints decode the Rison `q` and page with `page`/`page_size`; SQL
//! Lab answers 202 for async queries, which are polled through `/api/v1/query/<id>`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with, files_dir};

const USERNAME: &str = "ada";
const PASSWORD: &str = "correct-horse-battery-9";

// ---------------------------------------------------------------- a tiny Rison decoder

/// Decodes Rison the way Superset's `prison` does (enough of it for `q`): objects, arrays,
/// `!t`/`!f`/`!n`, quoted strings with `!` escapes, numbers and bare ids.
fn rison(text: &str) -> Option<Value> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let v = rison_value(&chars, &mut i)?;
    (i == chars.len()).then_some(v)
}

fn rison_value(c: &[char], i: &mut usize) -> Option<Value> {
    match c.get(*i)? {
        '(' => {
            *i += 1;
            let mut map = serde_json::Map::new();
            if c.get(*i) == Some(&')') {
                *i += 1;
                return Some(Value::Object(map));
            }
            loop {
                let key = match rison_value(c, i)? {
                    Value::String(s) => s,
                    _ => return None,
                };
                if c.get(*i) != Some(&':') {
                    return None;
                }
                *i += 1;
                map.insert(key, rison_value(c, i)?);
                match c.get(*i)? {
                    ',' => *i += 1,
                    ')' => {
                        *i += 1;
                        return Some(Value::Object(map));
                    }
                    _ => return None,
                }
            }
        }
        '!' => {
            *i += 1;
            match c.get(*i)? {
                't' => {
                    *i += 1;
                    Some(json!(true))
                }
                'f' => {
                    *i += 1;
                    Some(json!(false))
                }
                'n' => {
                    *i += 1;
                    Some(Value::Null)
                }
                '(' => {
                    *i += 1;
                    let mut items = Vec::new();
                    if c.get(*i) == Some(&')') {
                        *i += 1;
                        return Some(Value::Array(items));
                    }
                    loop {
                        items.push(rison_value(c, i)?);
                        match c.get(*i)? {
                            ',' => *i += 1,
                            ')' => {
                                *i += 1;
                                return Some(Value::Array(items));
                            }
                            _ => return None,
                        }
                    }
                }
                _ => None,
            }
        }
        '\'' => {
            *i += 1;
            let mut s = String::new();
            loop {
                match c.get(*i)? {
                    '\'' => {
                        *i += 1;
                        return Some(Value::String(s));
                    }
                    '!' => {
                        let next = *c.get(*i + 1)?;
                        if next != '!' && next != '\'' {
                            return None;
                        }
                        s.push(next);
                        *i += 2;
                    }
                    ch => {
                        s.push(*ch);
                        *i += 1;
                    }
                }
            }
        }
        ch if ch.is_ascii_digit() || *ch == '-' => {
            let start = *i;
            while c.get(*i).is_some_and(|ch| ch.is_ascii_digit() || matches!(ch, '-' | '.' | 'e' | '+')) {
                *i += 1;
            }
            let n: String = c[start..*i].iter().collect();
            serde_json::from_str::<serde_json::Number>(&n).ok().map(Value::Number)
        }
        _ => {
            let start = *i;
            while c.get(*i).is_some_and(|ch| !" '!:(),*@$".contains(*ch)) {
                *i += 1;
            }
            (*i > start).then(|| Value::String(c[start..*i].iter().collect()))
        }
    }
}

#[test]
fn the_fakes_rison_decoder_reads_superset_queries() {
    assert_eq!(
        rison("(filters:!((col:dashboard_title,opr:ct,value:'sales report')),page:0,page_size:25)"),
        Some(
            json!({"filters": [{"col": "dashboard_title", "opr": "ct", "value": "sales report"}], "page": 0, "page_size": 25})
        )
    );
    assert_eq!(rison("(key:'9f!'x',rows:100,on:!t)"), Some(json!({"key": "9f'x", "rows": 100, "on": true})));
    assert_eq!(rison("(page:0"), None);
}

// ---------------------------------------------------------------- Superset-shaped payloads

fn ada() -> Value {
    json!({"first_name": "Ada", "id": 1, "last_name": "Lovelace"})
}

fn grace() -> Value {
    json!({"first_name": "Grace", "id": 2, "last_name": "Hopper"})
}

fn dashboard(id: u64, title: &str, slug: Option<&str>, published: bool) -> Value {
    let key = slug.map(str::to_string).unwrap_or_else(|| id.to_string());
    json!({
        "certification_details": null, "certified_by": if id == 7 { json!("Finance team") } else { Value::Null },
        "changed_by": ada(), "changed_by_name": "Ada Lovelace", "changed_on_delta_humanized": format!("{} days ago", id.saturating_sub(5)),
        "changed_on_utc": format!("2026-03-0{}T10:00:00.000000+0000", 10u64.saturating_sub(id).max(1)), "created_by": ada(),
        "created_on_delta_humanized": "a month ago", "css": ".header { color: #333; }", "dashboard_title": title, "id": id,
        "is_managed_externally": false,
        "json_metadata": json!({"color_scheme": "supersetColors", "refresh_frequency": 0, "native_filter_configuration": [], "timed_refresh_immune_slices": [], "expanded_slices": {}, "label_colors": {}, "shared_label_colors": [], "cross_filters_enabled": true}).to_string(),
        "owners": [ada(), grace()],
        "position_json": json!({"DASHBOARD_VERSION_KEY": "v2", "ROOT_ID": {"children": ["GRID_ID"], "id": "ROOT_ID", "type": "ROOT"}, "GRID_ID": {"children": ["ROW-1"], "id": "GRID_ID", "parents": ["ROOT_ID"], "type": "GRID"}}).to_string(),
        "published": published, "roles": [], "slug": slug, "status": if published { "published" } else { "draft" },
        "tags": [{"id": 1, "name": "owner:1", "type": 3}, {"id": 5, "name": "finance", "type": 1}],
        "thumbnail_url": format!("/api/v1/dashboard/{id}/thumbnail/4c3f8e0b2a/"), "url": format!("/superset/dashboard/{key}/")
    })
}

fn dashboards() -> Vec<Value> {
    vec![
        dashboard(7, "Sales Overview", Some("sales"), true),
        dashboard(8, "Sales Pipeline", None, false),
        dashboard(9, "Marketing KPIs", Some("marketing"), true),
    ]
}

fn chart(id: u64, name: &str, viz: &str, dashboards: &[(u64, &str)]) -> Value {
    json!({
        "cache_timeout": null, "certification_details": null, "certified_by": null, "changed_by": ada(),
        "changed_by_name": "Ada Lovelace", "changed_on_delta_humanized": "3 days ago", "changed_on_dttm": 1_740_823_200_000u64,
        "changed_on_utc": "2026-02-28T10:00:00.000000+0000", "created_by": ada(), "created_on_delta_humanized": "a month ago",
        "dashboards": dashboards.iter().map(|(id, t)| json!({"dashboard_title": t, "id": id})).collect::<Vec<_>>(),
        "datasource_id": 3, "datasource_name_text": "public.orders", "datasource_type": "table",
        "datasource_url": "/explore/?datasource_type=table&datasource_id=3", "description": if id == 42 { json!("Revenue per sales region") } else { Value::Null },
        "description_markeddown": "", "edit_url": format!("/chart/edit/{id}"),
        "form_data": {"datasource": "3__table", "viz_type": viz, "slice_id": id, "metrics": ["sum__revenue"], "groupby": ["region"], "row_limit": 10000},
        "id": id, "is_managed_externally": false, "last_saved_at": "2026-02-28T10:00:00", "last_saved_by": ada(), "owners": [ada()],
        "params": json!({"viz_type": viz, "metrics": ["sum__revenue"], "groupby": ["region"]}).to_string(), "slice_name": name,
        "slice_url": format!("/explore/?slice_id={id}"), "table": {"default_endpoint": null, "table_name": "orders"}, "tags": [],
        "thumbnail_url": format!("/api/v1/chart/{id}/thumbnail/ab12cd/"), "url": format!("/explore/?slice_id={id}"), "viz_type": viz
    })
}

fn charts() -> Vec<Value> {
    vec![
        chart(42, "Revenue by region", "echarts_timeseries_bar", &[(7, "Sales Overview")]),
        chart(43, "Orders table", "table", &[(7, "Sales Overview"), (9, "Marketing KPIs")]),
        chart(44, "Signups", "big_number_total", &[(9, "Marketing KPIs")]),
    ]
}

fn dashboard_charts() -> Value {
    json!({"result": [
        {"cache_timeout": null, "certification_details": null, "certified_by": null, "changed_on": "2026-02-28T10:00:00",
         "description": "Revenue per sales region", "description_markeddown": "<p>Revenue per sales region</p>",
         "form_data": {"viz_type": "echarts_timeseries_bar", "slice_id": 42, "metrics": ["sum__revenue"], "groupby": ["region"], "dashboards": [7]},
         "id": 42, "is_managed_externally": false, "query_context": null, "slice_name": "Revenue by region",
         "slice_url": "/explore/?slice_id=42", "viz_type": "echarts_timeseries_bar"},
        {"cache_timeout": null, "certification_details": null, "certified_by": null, "changed_on": "2026-02-27T10:00:00",
         "description": null, "description_markeddown": "", "form_data": {"viz_type": "table", "slice_id": 43},
         "id": 43, "is_managed_externally": false, "query_context": null, "slice_name": "Orders table",
         "slice_url": "/explore/?slice_id=43", "viz_type": "table"}
    ]})
}

fn datasets() -> Vec<Value> {
    let base = |id: u64, table: &str, schema: &str, db: (u64, &str), sql: Option<&str>| {
        json!({
            "catalog": null, "changed_by": ada(), "changed_by_name": "Ada Lovelace", "changed_on_delta_humanized": "a week ago",
            "changed_on_utc": "2026-02-20T10:00:00.000000+0000", "database": {"database_name": db.1, "id": db.0},
            "datasource_type": "table", "default_endpoint": null, "description": if id == 3 { json!("Orders fact table") } else { Value::Null },
            "explore_url": format!("/explore/?datasource_type=table&datasource_id={id}"), "extra": null, "id": id,
            "kind": if sql.is_some() { "virtual" } else { "physical" }, "owners": [ada()], "schema": schema, "sql": sql,
            "table_name": table
        })
    };
    vec![
        base(3, "orders", "public", (1, "analytics"), None),
        base(
            4,
            "orders_by_region",
            "public",
            (1, "analytics"),
            Some("SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1"),
        ),
        base(5, "events", "raw", (2, "warehouse"), None),
    ]
}

fn databases() -> Vec<Value> {
    let db = |id: u64, name: &str, backend: &str, dml: bool, run_async: bool| {
        json!({
            "allow_ctas": false, "allow_cvas": false, "allow_dml": dml, "allow_file_upload": false, "allow_multi_catalog": false,
            "allow_run_async": run_async, "allows_cost_estimate": null, "allows_subquery": true, "allows_virtual_table_explore": true,
            "backend": backend, "changed_by": null, "changed_on": "2026-01-10T10:00:00", "changed_on_delta_humanized": "2 months ago",
            "created_by": ada(), "database_name": name, "disable_data_preview": false, "disable_drill_to_detail": false,
            "engine_information": {"disable_ssh_tunneling": false, "supports_file_upload": true, "supports_dynamic_catalog": false, "supports_oauth2": false},
            "explore_database_id": id, "expose_in_sqllab": true, "extra": "{\"allows_virtual_table_explore\": true}",
            "force_ctas_schema": null, "id": id, "uuid": format!("0b6f2a5e-8d1c-4f7a-9e3b-00000000000{id}")
        })
    };
    vec![db(1, "analytics", "postgresql", false, true), db(2, "warehouse", "trino", true, false)]
}

fn sql_payload(query_id: u64, client_id: &str, sql: &str, limit: u64) -> Value {
    let rows = vec![
        json!({"region": "EMEA", "revenue": 1200.5}),
        json!({"region": "AMER", "revenue": 980.0}),
        json!({"region": "APAC", "revenue": 455.25}),
    ];
    let rows: Vec<Value> = rows.into_iter().take(limit as usize).collect();
    let factor = if limit < 3 { "QUERY" } else { "NOT_LIMITED" };
    let cols = json!([
        {"column_name": "region", "name": "region", "type": "VARCHAR", "type_generic": 1, "is_dttm": false},
        {"column_name": "revenue", "name": "revenue", "type": "NUMERIC", "type_generic": 0, "is_dttm": false}
    ]);
    json!({
        "columns": cols, "data": rows, "expanded_columns": [], "query_id": query_id, "selected_columns": cols, "status": "success",
        "query": {
            "changed_on": "2026-03-02T10:00:00.123456", "dbId": 1, "db": "analytics", "endDttm": 1_772_445_600_123.0f64,
            "errorMessage": null, "executedSql": format!("{sql}\nLIMIT {}", limit + 1), "id": client_id, "queryId": query_id,
            "limit": limit, "limitingFactor": factor, "progress": 100, "rows": rows.len(), "schema": "public", "catalog": null,
            "ctas": false, "serverId": query_id, "sql": sql, "sqlEditorId": null, "startDttm": 1_772_445_600_000.0f64,
            "state": "success", "tab": "workbench", "tempSchema": null, "tempTable": null, "userId": 1, "user": "Ada Lovelace",
            "resultsKey": null, "trackingUrl": null, "extra": {}
        }
    })
}

// ---------------------------------------------------------------- the fake

#[derive(Default)]
struct State {
    /// Tokens flask-jwt-extended would accept, and ones that have expired.
    valid: HashSet<String>,
    expired: HashSet<String>,
    /// Flask sessions: `session` cookie -> the CSRF token stored in it.
    sessions: HashMap<String, String>,
    logins: usize,
    csrf_fetches: usize,
    /// Polls of async queries that still answer "running".
    running_polls: usize,
    /// Async queries never finish.
    stuck: bool,
    /// Tokens are already expired when issued (a clock-skewed or misconfigured server).
    expire_on_issue: bool,
    /// Issue opaque (non-JWT) tokens and echo them back on the "echo" dashboard.
    careless: bool,
}

type Shared = Arc<Mutex<State>>;

fn not_found() -> Reply {
    Reply::json(404, json!({"message": "Not found"}))
}

fn csrf_error(what: &str) -> Reply {
    Reply::json(
        400,
        json!({"errors": [{"message": format!("400 Bad Request: {what}"), "error_type": "GENERIC_BACKEND_ERROR", "level": "error",
               "extra": {"issue_codes": [{"code": 1011, "message": "Issue 1011 - Superset encountered an unexpected error."}]}}]}),
    )
}

fn cookie(r: &Recorded, name: &str) -> Option<String> {
    r.header("cookie")?.split(';').find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

/// A FAB list answer for `q`: filters applied by `keep`, then paged.
fn fab_list(r: &Recorded, all: Vec<Value>, title: &str, keep: impl Fn(&Value, &Value) -> bool) -> Reply {
    let q = match r.q("q") {
        Some(text) => match rison(text) {
            Some(q) => q,
            None => return Reply::json(400, json!({"message": "Not a valid rison argument"})),
        },
        None => json!({}),
    };
    let page = q["page"].as_u64().unwrap_or(0) as usize;
    let size = q["page_size"].as_u64().unwrap_or(20) as usize;
    if size > 100 {
        return Reply::json(400, json!({"message": "Page size is too big"}));
    }
    let filters = q["filters"].as_array().cloned().unwrap_or_default();
    let hits: Vec<Value> = all.into_iter().filter(|item| filters.iter().all(|f| keep(item, f))).collect();
    let result: Vec<Value> = hits.iter().skip(page * size).take(size).cloned().collect();
    Reply::json(
        200,
        json!({
            "count": hits.len(), "description_columns": {}, "ids": result.iter().map(|i| i["id"].clone()).collect::<Vec<_>>(),
            "label_columns": {"id": "Id", "changed_by.first_name": "Changed By First Name"}, "list_columns": ["id", "changed_on_delta_humanized"],
            "list_title": title, "order_columns": ["changed_on_delta_humanized"], "result": result
        }),
    )
}

fn contains(item: &Value, field: &str, f: &Value) -> bool {
    let needle = f["value"].as_str().unwrap_or("").to_lowercase();
    item[field].as_str().unwrap_or("").to_lowercase().contains(&needle)
}

/// Chart 42's saved query context (as Superset stores it, a JSON string in `query_context`).
fn revenue_query_context() -> Value {
    json!({
        "datasource": {"id": 3, "type": "table"}, "force": false,
        "queries": [{"columns": ["region"], "metrics": ["sum__revenue"], "filters": [], "extras": {"having": "", "where": ""},
                     "orderby": [["sum__revenue", false]], "row_limit": 10000, "time_range": "No filter"}],
        "form_data": {"datasource": "3__table", "viz_type": "echarts_timeseries_bar", "slice_id": 42},
        "result_format": "json", "result_type": "full"
    })
}

fn revenue_rows() -> Vec<Value> {
    vec![
        json!({"region": "EMEA", "SUM(revenue)": 1200.5}),
        json!({"region": "AMER", "SUM(revenue)": 980.0}),
        json!({"region": "APAC", "SUM(revenue)": 455.25}),
    ]
}

fn revenue_result(data: Vec<Value>, applied: Vec<Value>, force: bool) -> Value {
    json!({
        "annotation_data": [], "applied_filters": applied,
        "cache_key": "e3b0c44298fc1c149afbf4c8996fb924", "cache_timeout": 86400,
        "cached_dttm": if force { Value::Null } else { json!("2026-03-02T09:00:00") }, "colnames": ["region", "SUM(revenue)"],
        "coltypes": [1, 0], "error": null, "from_dttm": null, "is_cached": !force, "rowcount": data.len(), "data": data,
        "label_map": {"region": ["region"], "SUM(revenue)": ["SUM(revenue)"]},
        "query": "SELECT region AS region, sum(revenue) AS \"SUM(revenue)\"\nFROM public.orders GROUP BY region ORDER BY \"SUM(revenue)\" DESC\nLIMIT 10000",
        "rejected_filters": [], "result_format": "json", "stacktrace": null, "status": "success", "to_dttm": null
    })
}

fn superset(state: &Shared, r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return Reply::json(400, json!({"message": "no user agent"}));
    }
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let mut s = state.lock().unwrap();
    if (r.method.as_str(), r.path.as_str()) == ("POST", "/api/v1/security/login") {
        if r.header("content-type") != Some("application/json") {
            return Reply::json(400, json!({"message": "Request is not JSON"}));
        }
        for field in ["username", "password", "provider"] {
            if !body[field].is_string() {
                return Reply::json(400, json!({"message": {field: ["Missing data for required field."]}}));
            }
        }
        if body["provider"] != "db" {
            return Reply::json(400, json!({"message": "Provider ldap not supported"}));
        }
        if body["username"] != USERNAME || body["password"] != PASSWORD {
            return Reply::json(401, json!({"message": "Not authorized"}));
        }
        s.logins += 1;
        let n = s.logins;
        let access = if s.careless {
            format!("opaque-access-{n:04}-k2v9x7q3w8")
        } else {
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJmcmVzaCI6dHJ1ZSwic3ViIjoxLCJuIjo{n}fQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ{n:04}"
            )
        };
        if s.expire_on_issue {
            s.expired.insert(access.clone());
        } else {
            s.valid.insert(access.clone());
        }
        let refresh =
            format!("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXBlIjoicmVmcmVzaCIsIm4iOj{n}fQ.cmVmcmVzaC1zaWc{n:04}");
        return Reply::json(200, json!({"access_token": access, "refresh_token": refresh}));
    }
    // Everything else under /api/v1 needs the JWT (flask-jwt-extended's answers).
    let token = match r.header("authorization").and_then(|a| a.strip_prefix("Bearer ")) {
        Some(t) => t.to_string(),
        None => return Reply::json(401, json!({"msg": "Missing Authorization Header"})),
    };
    if s.expired.contains(&token) {
        return Reply::json(401, json!({"msg": "Token has expired"}));
    }
    if !s.valid.contains(&token) {
        return Reply::json(422, json!({"msg": "Signature verification failed"}));
    }
    if (r.method.as_str(), r.path.as_str()) == ("GET", "/api/v1/security/csrf_token/") {
        s.csrf_fetches += 1;
        let n = s.csrf_fetches;
        let csrf = if s.careless {
            format!("opaque-csrf-{n:04}-p4m8n2")
        } else {
            format!("IjVhMmQ0ZjYxYjNjOGU5ZDAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzgi.Z8Qx{n:04}.Hc2zVt3rYp1bq9wXo4n8sK7mL0c")
        };
        let session = format!(".eJwlzjEOwjAMQNG7ZGYgjuMkXAbFsS0QCKmtJsTdqcT_-t_fnm3ZfIv1dCJN{n:04}.Z8Qx.Aa1Bb2Cc3Dd4");
        s.sessions.insert(session.clone(), csrf.clone());
        return Reply::json(200, json!({"result": csrf}))
            .with_header("set-cookie", &format!("session={session}; HttpOnly; Path=/; SameSite=Lax"));
    }
    // Flask-WTF on every write: the token must be sent and match the one in the session cookie.
    if r.method != "GET" {
        let Some(sent) = r.header("x-csrftoken") else { return csrf_error("The CSRF token is missing.") };
        let Some(stored) = cookie(r, "session").and_then(|c| s.sessions.get(&c).cloned()) else {
            return csrf_error("The CSRF session token is missing.");
        };
        if sent != stored {
            return csrf_error("The CSRF tokens do not match.");
        }
    }
    let path = r.path.as_str();
    match (r.method.as_str(), path) {
        ("GET", "/api/v1/me/") => Reply::json(
            200,
            json!({"result": {"email": "ada@example.com", "first_name": "Ada", "id": 1, "is_active": true, "is_anonymous": false, "last_name": "Lovelace", "username": USERNAME}}),
        ),
        ("GET", "/api/v1/dashboard/") => fab_list(r, dashboards(), "List Dashboard", |d, f| match f["col"].as_str() {
            Some("dashboard_title") if f["opr"] == "ct" => contains(d, "dashboard_title", f),
            _ => false,
        }),
        ("GET", "/api/v1/dashboard/busy") => {
            Reply::json(429, json!({"message": "429 Too Many Requests: 100 per 1 minute"}))
                .with_header("retry-after", "120")
        }
        ("GET", "/api/v1/dashboard/echo") => {
            // A misbehaving plugin or proxy in front of Superset that echoes what it was sent.
            let csrf = s.sessions.values().next().cloned().unwrap_or_default();
            let mut d = dashboard(99, &format!("token {token}"), Some("echo"), true);
            d["css"] = json!(format!("/* csrf {csrf} password {PASSWORD} */"));
            d["certified_by"] = json!(format!("{} {}", r.header("authorization").unwrap_or(""), token));
            Reply::json(200, json!({"id": 99, "result": d}))
        }
        ("GET", "/api/v1/dashboard/echo/charts") => Reply::json(200, json!({"result": []})),
        ("GET", "/api/v1/dashboard/7") | ("GET", "/api/v1/dashboard/sales") => {
            let mut d = dashboard(7, "Sales Overview", Some("sales"), true);
            d["charts"] = json!(["Revenue by region", "Orders table"]);
            d["json_metadata"] = json!(json!({"native_filter_configuration": [
                {"id": "NATIVE_FILTER-a1", "name": "Region", "filterType": "filter_select", "targets": [{"column": {"name": "region"}, "datasetId": 3}], "defaultDataMask": {"filterState": {"value": ["EMEA"]}}, "controlValues": {"multiSelect": true}, "scope": {"rootPath": ["ROOT_ID"], "excluded": []}, "type": "NATIVE_FILTER"}
            ], "color_scheme": "supersetColors"}).to_string());
            Reply::json(200, json!({"id": 7, "result": d}))
        }
        ("GET", "/api/v1/dashboard/7/charts") | ("GET", "/api/v1/dashboard/sales/charts") => {
            Reply::json(200, dashboard_charts())
        }
        ("GET", p) if p.starts_with("/api/v1/dashboard/") => not_found(),
        ("GET", "/api/v1/chart/") => {
            fab_list(r, charts(), "List Charts", |c, f| match (f["col"].as_str(), f["opr"].as_str()) {
                (Some("slice_name"), Some("ct")) => contains(c, "slice_name", f),
                (Some("viz_type"), Some("eq")) => c["viz_type"] == f["value"],
                (Some("dashboards"), Some("rel_m_m")) => {
                    c["dashboards"].as_array().unwrap().iter().any(|d| d["id"] == f["value"])
                }
                _ => false,
            })
        }
        ("GET", "/api/v1/chart/42") => {
            let mut c = chart(42, "Revenue by region", "echarts_timeseries_bar", &[(7, "Sales Overview")]);
            c["query_context"] = json!(revenue_query_context().to_string());
            Reply::json(200, json!({"id": 42, "result": c}))
        }
        ("GET", "/api/v1/chart/43") => {
            let mut c = chart(43, "Orders table", "table", &[(7, "Sales Overview")]);
            c["query_context"] = Value::Null;
            Reply::json(200, json!({"id": 43, "result": c}))
        }
        // Superset's `ChartDataQueryContextSchema` (marshmallow, unknown fields raise): the
        // dashboard's filters arrive inside the queries, nowhere else.
        ("POST", "/api/v1/chart/data") => {
            let known =
                ["datasource", "queries", "custom_cache_timeout", "force", "result_type", "result_format", "form_data"];
            if let Some(unknown) = body.as_object().and_then(|o| o.keys().find(|k| !known.contains(&k.as_str()))) {
                return Reply::json(
                    400,
                    json!({"message": format!("Request is incorrect: {{'{unknown}': ['Unknown field.']}}")}),
                );
            }
            if body["datasource"]["id"] != 3 || body["queries"].as_array().is_none_or(Vec::is_empty) {
                return Reply::json(
                    400,
                    json!({"message": "Request is incorrect: {'datasource': ['Missing data for required field.']}"}),
                );
            }
            let filters = body["queries"][0]["filters"].as_array().cloned().unwrap_or_default();
            let regions: Option<Vec<Value>> = filters
                .iter()
                .find(|f| f["col"] == "region" && f["op"] == "IN")
                .and_then(|f| f["val"].as_array().cloned());
            let mut data = revenue_rows();
            if let Some(keep) = &regions {
                data.retain(|row| keep.contains(&row["region"]));
            }
            let applied: Vec<Value> = filters.iter().map(|f| json!({"column": f["col"]})).collect();
            Reply::json(200, json!({"result": [revenue_result(data, applied, body["force"] == true)]}))
        }
        // `GET /api/v1/chart/<id>/data/` reads `format`, `type` and `force` only (Superset 6.1.0).
        ("GET", "/api/v1/chart/42/data/") => match r.q("format") {
            Some("json") => Reply::json(
                200,
                json!({"result": [revenue_result(revenue_rows(), vec![], r.q("force") == Some("true"))]}),
            ),
            Some("csv") => Reply {
                status: 200,
                headers: vec![
                    ("content-type".into(), "text/csv; charset=utf-8".into()),
                    ("content-disposition".into(), "attachment; filename=revenue_by_region.csv".into()),
                ],
                body: "\u{feff}region,SUM(revenue)\nEMEA,1200.5\nAMER,980.0\nAPAC,455.25\n".into(),
            },
            _ => Reply::json(400, json!({"message": {"format": ["Must be one of: csv, json, xlsx."]}})),
        },
        ("GET", "/api/v1/chart/43/data/") => {
            Reply::json(400, json!({"message": "Chart has no query context saved. Please save the chart again."}))
        }
        ("GET", "/api/v1/dataset/") => {
            fab_list(r, datasets(), "List Dataset", |d, f| match (f["col"].as_str(), f["opr"].as_str()) {
                (Some("table_name"), Some("ct")) => contains(d, "table_name", f),
                (Some("database"), Some("rel_o_m")) => d["database"]["id"] == f["value"],
                (Some("schema"), Some("eq")) => d["schema"] == f["value"],
                _ => false,
            })
        }
        ("GET", "/api/v1/database/") => fab_list(r, databases(), "List Database", |d, f| match f["col"].as_str() {
            Some("database_name") => contains(d, "database_name", f),
            _ => false,
        }),
        // Superset 6.1.0's `ExecutePayloadSchema` (marshmallow: an unknown field is a 400; 5.0.0 also
        // had `json`, which it never read).
        ("POST", "/api/v1/sqllab/execute/") => {
            if r.header("content-type") != Some("application/json") {
                return Reply::json(400, json!({"message": "Request is not JSON"}));
            }
            let known = [
                "database_id",
                "sql",
                "client_id",
                "queryLimit",
                "sql_editor_id",
                "schema",
                "catalog",
                "tab",
                "ctas_method",
                "templateParams",
                "tmp_table_name",
                "select_as_cta",
                "runAsync",
                "expand_data",
            ];
            if let Some(unknown) = body.as_object().unwrap().keys().find(|k| !known.contains(&k.as_str())) {
                return Reply::json(400, json!({"message": {unknown: ["Unknown field."]}}));
            }
            if !body["database_id"].is_u64() || !body["sql"].is_string() {
                return Reply::json(400, json!({"message": {"database_id": ["Missing data for required field."]}}));
            }
            let sql = body["sql"].as_str().unwrap();
            let client = body["client_id"].as_str().unwrap_or("");
            if client.len() > 11 {
                return Reply::json(400, json!({"message": {"client_id": ["Length must be between 0 and 11."]}}));
            }
            if sql.contains("nope") {
                return Reply::json(
                    400,
                    json!({"errors": [{"message": "postgresql error: relation \"nope\" does not exist\nLINE 1: SELECT * FROM nope\n                      ^",
                           "error_type": "GENERIC_DB_ENGINE_ERROR", "level": "error",
                           "extra": {"engine_name": "PostgreSQL", "issue_codes": [{"code": 1002, "message": "Issue 1002 - The database returned an unexpected error."}]}}]}),
                );
            }
            let limit = body["queryLimit"].as_u64().unwrap_or(1000);
            if body["runAsync"] == true {
                s.running_polls = 1;
                let mut q = sql_payload(311, client, sql, limit)["query"].clone();
                q["state"] = json!("pending");
                q["rows"] = Value::Null;
                q["progress"] = json!(0);
                q["endDttm"] = Value::Null;
                return Reply::json(202, json!({"query": q}));
            }
            Reply::json(200, sql_payload(310, client, sql, limit))
        }
        ("GET", "/api/v1/query/311") => {
            let running = s.stuck || s.running_polls > 0;
            s.running_polls = s.running_polls.saturating_sub(1);
            Reply::json(
                200,
                json!({"id": 311, "result": {
                    "changed_on": "2026-03-02T10:00:01", "client_id": "asyncq00001", "database": {"id": 1}, "end_result_backend_time": null,
                    "end_time": if running { Value::Null } else { json!(1_772_445_601_500.0f64) }, "error_message": null,
                    "executed_sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1\nLIMIT 101", "id": 311, "limit": 100,
                    "progress": if running { 40 } else { 100 }, "results_key": if running { Value::Null } else { json!("9f3c1c4e-2b7a-4c1e-8d2f-5a6b7c8d9e0f") },
                    "rows": if running { Value::Null } else { json!(3) }, "schema": "public", "select_as_cta": false, "select_as_cta_used": false,
                    "select_sql": null, "sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1", "sql_editor_id": null,
                    "start_running_time": 1_772_445_600_100.0f64, "start_time": 1_772_445_600_000.0f64, "status": if running { "running" } else { "success" },
                    "tab_name": "workbench", "tmp_schema_name": null, "tmp_table_name": null, "tracking_url": null
                }}),
            )
        }
        ("GET", "/api/v1/sqllab/results/") => {
            let q = r.q("q").and_then(rison).unwrap_or_default();
            if q["key"] != "9f3c1c4e-2b7a-4c1e-8d2f-5a6b7c8d9e0f" {
                return Reply::json(
                    410,
                    json!({"errors": [{"message": "Data could not be retrieved from the results backend. You need to re-run the original query.", "error_type": "RESULTS_BACKEND_ERROR", "level": "error"}]}),
                );
            }
            let rows = q["rows"].as_u64().unwrap_or(1000);
            Reply::json(
                200,
                sql_payload(311, "asyncq00001", "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1", rows),
            )
        }
        ("GET", "/api/v1/sqllab/export/asyncq00001/") => Reply {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/csv; charset=utf-8".into()),
                ("content-disposition".into(), "attachment; filename=sqllab_asyncq00001_20260302_100001.csv".into()),
            ],
            body: "region,revenue\nEMEA,1200.5\nAMER,980.0\nAPAC,455.25\n".into(),
        },
        ("GET", p) if p.starts_with("/api/v1/sqllab/export/") => Reply::json(
            404,
            json!({"errors": [{"message": "The query with client id nope000001 could not be found", "error_type": "RESULTS_BACKEND_ERROR", "level": "error"}]}),
        ),
        _ => Reply::json(
            404,
            json!({"errors": [{"message": "404 Not Found: The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.", "error_type": "GENERIC_BACKEND_ERROR", "level": "error"}]}),
        ),
    }
}

async fn start(careless: bool) -> (Fake, Shared) {
    let state: Shared = Arc::new(Mutex::new(State { careless, ..State::default() }));
    let shared = state.clone();
    let fake = Fake::start(move |r| superset(&shared, r)).await;
    (fake, state)
}

fn app_for(fake: &Fake, password: &str) -> TestApp {
    app_with(&env_for(fake, password))
}

fn env_for(fake: &Fake, password: &str) -> Vec<(&'static str, String)> {
    vec![
        ("WORKBENCH_SUPERSET_BASE_URL", fake.url.clone()),
        ("WORKBENCH_SUPERSET_USERNAME", USERNAME.into()),
        ("WORKBENCH_SUPERSET_PASSWORD", password.into()),
    ]
}

/// Superset's fake and the settings that connect an App to it.
pub(crate) async fn fake_and_env() -> (Fake, Vec<(&'static str, String)>) {
    let (fake, _state) = start(false).await;
    let env = env_for(&fake, PASSWORD);
    (fake, env)
}

/// Superset's fake and an App connected to it, with extra settings (a files folder).
async fn sup_with(extra: &[(&'static str, String)]) -> (TestApp, Fake) {
    let (fake, mut env) = fake_and_env().await;
    env.extend(extra.iter().cloned());
    (app_with(&env), fake)
}

async fn sup() -> (TestApp, Fake, Shared) {
    let (fake, state) = start(false).await;
    (app_for(&fake, PASSWORD), fake, state)
}

fn body_of(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

fn paths(fake: &Fake) -> Vec<String> {
    fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect()
}

/// The access token the fake issued on login `n` (JWT-shaped).
fn access_token(n: usize) -> String {
    format!(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJmcmVzaCI6dHJ1ZSwic3ViIjoxLCJuIjo{n}fQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ{n:04}"
    )
}

// ---------------------------------------------------------------- login and session

#[tokio::test]
async fn superset_logs_in_once_then_sends_the_bearer_token_on_reads() {
    let (t, fake, state) = sup().await;
    let r = t.ok("superset_list_databases", json!({})).await;
    assert_eq!(
        paths(&fake),
        ["POST /api/v1/security/login", "GET /api/v1/security/csrf_token/", "GET /api/v1/database/"]
    );
    let all = fake.requests();
    assert_eq!(
        body_of(&all[0]),
        json!({"username": USERNAME, "password": PASSWORD, "provider": "db", "refresh": true})
    );
    assert_eq!(all[0].header("authorization"), None);
    assert_eq!(all[1].header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    let read = &all[2];
    assert_eq!(read.header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    // Reads carry only the JWT: no CSRF header, no cookie, no Referer.
    assert_eq!((read.header("x-csrftoken"), read.header("cookie"), read.header("referer")), (None, None, None));
    assert_eq!(read.q("q"), Some("(order_column:database_name,order_direction:asc,page:0,page_size:50)"));
    assert_eq!(
        r["databases"],
        json!([
            {"id": 1, "name": "analytics", "backend": "postgresql", "in_sql_lab": true, "allow_dml": false, "allow_run_async": true, "changed": "2 months ago"},
            {"id": 2, "name": "warehouse", "backend": "trino", "in_sql_lab": true, "allow_dml": true, "allow_run_async": false, "changed": "2 months ago"}
        ])
    );
    assert_eq!(r["count"], 2);
    assert!(r.get("next_cursor").is_none());

    // The session is kept: the next calls go straight to the API.
    t.ok("superset_list_databases", json!({"search": "ware"})).await;
    assert_eq!(
        fake.last().q("q"),
        Some(
            "(filters:!((col:database_name,opr:ct,value:ware)),order_column:database_name,order_direction:asc,page:0,page_size:50)"
        )
    );
    assert_eq!(state.lock().unwrap().logins, 1);
    assert_eq!(fake.requests().len(), 4);
}

#[tokio::test]
async fn superset_concurrent_calls_share_one_login() {
    let (t, fake, state) = sup().await;
    let out = t
        .call(
            "execute_tools",
            json!({"executions": [
                {"tool": "superset_list_databases", "args": {}},
                {"tool": "superset_list_dashboards", "args": {}},
                {"tool": "superset_list_charts", "args": {}},
                {"tool": "superset_list_datasets", "args": {}}
            ]}),
        )
        .await;
    assert!(!out.is_error, "{}", out.body);
    for r in out.body["results"].as_array().unwrap() {
        assert!(r.get("error").is_none(), "{r}");
    }
    let s = state.lock().unwrap();
    assert_eq!((s.logins, s.csrf_fetches), (1, 1), "{:?}", paths(&fake));
}

#[tokio::test]
async fn superset_rejected_login_says_reconnect() {
    let (fake, _state) = start(false).await;
    let t = app_for(&fake, "wrong-password-123");
    let e = t.err("superset_list_dashboards", json!({})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(401)));
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("refused the login") && msg.contains("Not authorized"), "{msg}");
    assert!(!msg.contains("wrong-password-123"));
    // Nothing but the login was tried.
    assert_eq!(paths(&fake), ["POST /api/v1/security/login"]);
}

#[tokio::test]
async fn superset_expired_session_logs_in_again_once() {
    let (t, fake, state) = sup().await;
    t.ok("superset_list_dashboards", json!({})).await;
    // The JWT expires (15 minutes by default): the fake answers 401 to the old token.
    {
        let mut s = state.lock().unwrap();
        let old: Vec<String> = s.valid.drain().collect();
        s.expired.extend(old);
    }
    let before = fake.requests().len();
    let r = t.ok("superset_get_dashboard", json!({"dashboard": "sales"})).await;
    assert_eq!(r["title"], "Sales Overview");
    let after: Vec<String> = paths(&fake)[before..].to_vec();
    // Two requests in parallel find the token expired; one fresh login serves both retries.
    assert_eq!(after.iter().filter(|p| p.as_str() == "POST /api/v1/security/login").count(), 1, "{after:?}");
    assert_eq!(after.iter().filter(|p| p.contains("/csrf_token/")).count(), 1, "{after:?}");
    assert_eq!(state.lock().unwrap().logins, 2);
    let last = fake.last();
    assert_eq!(last.header("authorization"), Some(format!("Bearer {}", access_token(2)).as_str()));

    // A session that keeps failing is not retried forever: one re-login, then the error.
    {
        let mut s = state.lock().unwrap();
        let old: Vec<String> = s.valid.drain().collect();
        s.expired.extend(old);
        s.expire_on_issue = true;
    }
    let e = t.err("superset_list_charts", json!({})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(401)), "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Token has expired"), "{msg}");
    assert_eq!(state.lock().unwrap().logins, 3);
}

#[tokio::test]
async fn superset_lost_csrf_session_renews_the_session_on_a_write() {
    let (t, fake, state) = sup().await;
    t.ok("superset_list_databases", json!({})).await;
    // Superset restarted with a new SECRET_KEY: the session cookie no longer holds a CSRF token.
    state.lock().unwrap().sessions.clear();
    let r = t.ok("superset_run_sql", json!({"database_id": 1, "sql": "SELECT 1", "client_id": "renew000001"})).await;
    assert_eq!(r["state"], "success");
    let tail: Vec<String> = paths(&fake)[3..].to_vec();
    assert_eq!(
        tail,
        [
            "POST /api/v1/sqllab/execute/",
            "POST /api/v1/security/login",
            "GET /api/v1/security/csrf_token/",
            "POST /api/v1/sqllab/execute/"
        ]
    );
}

#[test]
fn the_fake_refuses_writes_without_the_csrf_token_and_cookie() {
    let state: Shared = Arc::new(Mutex::new(State::default()));
    let token = access_token(1);
    state.lock().unwrap().valid.insert(token.clone());
    state.lock().unwrap().sessions.insert("cookie-1".into(), "csrf-1".into());
    let mut headers: HashMap<String, String> = [
        ("user-agent".to_string(), "workbench/0.1".to_string()),
        ("authorization".to_string(), format!("Bearer {token}")),
        ("content-type".to_string(), "application/json".to_string()),
    ]
    .into();
    let mut req = Recorded {
        method: "POST".into(),
        path: "/api/v1/sqllab/execute/".into(),
        query: vec![],
        headers: headers.clone(),
        body: br#"{"database_id": 1, "sql": "SELECT 1"}"#.to_vec(),
    };
    let message = |reply: Reply| {
        let body: Value = serde_json::from_str(&reply.body).unwrap();
        (reply.status, body["errors"][0]["message"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(message(superset(&state, &req)), (400, "400 Bad Request: The CSRF token is missing.".into()));
    headers.insert("x-csrftoken".into(), "csrf-1".into());
    req.headers = headers.clone();
    assert_eq!(message(superset(&state, &req)), (400, "400 Bad Request: The CSRF session token is missing.".into()));
    headers.insert("cookie".into(), "session=cookie-1".into());
    req.headers = headers.clone();
    assert_eq!(superset(&state, &req).status, 200);
    headers.insert("x-csrftoken".into(), "csrf-2".into());
    req.headers = headers;
    assert_eq!(message(superset(&state, &req)), (400, "400 Bad Request: The CSRF tokens do not match.".into()));
}

fn fields(pairs: &[(&str, &str)]) -> HashMap<String, Secret<String>> {
    pairs.iter().map(|(k, v)| (k.to_string(), Secret::new(v.to_string()))).collect()
}

#[tokio::test]
async fn superset_identity_logs_in_and_names_the_user() {
    let (fake, _state) = start(false).await;
    // No environment override: the host comes from the connection's base_url.
    let t = app_with(&[]);
    let integration = &plugins::superset::INTEGRATION;
    let conn = |password: &str| {
        workbench::auth::from_fields(
            integration,
            fields(&[("base_url", &format!("{}/", fake.url)), ("username", USERNAME), ("password", password)]),
            workbench::auth::Source::Store,
        )
    };
    let label = workbench::send::verify_identity(&t.app, integration, conn(PASSWORD)).await.unwrap();
    assert_eq!(label.as_deref(), Some("ada (Ada Lovelace)"));
    assert_eq!(paths(&fake), ["POST /api/v1/security/login", "GET /api/v1/security/csrf_token/", "GET /api/v1/me/"]);
    assert_eq!(fake.last().header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));

    let e = workbench::send::verify_identity(&t.app, integration, conn("not-the-password")).await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("Apache Superset rejected this credential") && text.contains("Not authorized"), "{text}");
    assert!(!text.contains("not-the-password"));
}

#[tokio::test]
async fn superset_login_provider_comes_from_the_connection() {
    let (fake, _state) = start(false).await;
    let t = app_with(&[
        ("WORKBENCH_SUPERSET_BASE_URL", fake.url.clone()),
        ("WORKBENCH_SUPERSET_USERNAME", USERNAME.into()),
        ("WORKBENCH_SUPERSET_PASSWORD", PASSWORD.into()),
        ("WORKBENCH_SUPERSET_PROVIDER", "ldap".into()),
    ]);
    let e = t.err("superset_list_databases", json!({})).await;
    assert_eq!(body_of(&fake.last())["provider"], "ldap");
    assert_eq!(e["status"], 400);
    assert!(e["message"].as_str().unwrap().contains("Provider ldap not supported"), "{e}");
}

#[tokio::test]
async fn superset_never_returns_or_records_the_password_or_session_values() {
    let (fake, state) = start(true).await;
    let t = app_for(&fake, PASSWORD);
    let r = t.ok("superset_get_dashboard", json!({"dashboard": "echo", "include_raw": true})).await;
    let access = state.lock().unwrap().valid.iter().next().cloned().unwrap();
    let csrf = state.lock().unwrap().sessions.values().next().cloned().unwrap();
    assert!(
        access.starts_with("opaque-access-"),
        "the token is not JWT-shaped, so only known-value scrubbing can catch it"
    );
    let text = r.to_string();
    for secret in [PASSWORD, access.as_str(), csrf.as_str()] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
    assert!(text.contains("[redacted]"), "{text}");
    // A write that fails echoes nothing either, and neither does the audit log.
    let e = t.err("superset_run_sql", json!({"database_id": 1, "sql": "SELECT * FROM nope"})).await;
    assert!(e["message"].as_str().unwrap().contains("relation \"nope\" does not exist"), "{e}");
    let log = t.ok("audit_search_log", json!({"integration": "superset"})).await;
    let log_text = log.to_string();
    assert!(log_text.contains("superset_get_dashboard") && log_text.contains("superset_run_sql"), "{log_text}");
    for secret in [PASSWORD, access.as_str(), csrf.as_str()] {
        assert!(!log_text.contains(secret), "{secret} in the audit log: {log_text}");
    }
}

// ---------------------------------------------------------------- dashboards

#[tokio::test]
async fn superset_list_dashboards_filters_and_pages_with_rison() {
    let (t, fake, _state) = sup().await;
    let r = t.ok("superset_list_dashboards", json!({"search": "sales", "limit": 1})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/dashboard/"));
    assert_eq!(
        req.q("q"),
        Some(
            "(filters:!((col:dashboard_title,opr:ct,value:sales)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:1)"
        )
    );
    assert_eq!(
        r,
        json!({
            "count": 2,
            "dashboards": [{
                "id": 7, "title": "Sales Overview", "slug": "sales", "status": "published",
                "url": format!("{}/superset/dashboard/sales/", fake.url), "changed_on": "2026-03-03T10:00:00.000000+0000",
                "changed": "2 days ago", "changed_by": "Ada Lovelace", "owners": ["Ada Lovelace", "Grace Hopper"],
                "certified_by": "Finance team", "tags": ["finance"]
            }],
            "next_cursor": "1:1"
        })
    );
    let r2 = t.ok("superset_list_dashboards", json!({"search": "sales", "cursor": "1:1"})).await;
    assert_eq!(
        fake.last().q("q"),
        Some(
            "(filters:!((col:dashboard_title,opr:ct,value:sales)),order_column:changed_on_delta_humanized,order_direction:desc,page:1,page_size:1)"
        )
    );
    assert_eq!(r2["dashboards"][0]["title"], "Sales Pipeline");
    assert_eq!(r2["dashboards"][0]["status"], "draft");
    assert!(r2.get("next_cursor").is_none(), "the last page has no next_cursor: {r2}");

    let spaced = t.ok("superset_list_dashboards", json!({"search": "marketing kpis"})).await;
    assert!(fake.last().q("q").unwrap().contains("value:'marketing kpis'"));
    assert_eq!(spaced["dashboards"][0]["id"], 9);

    let e = t.err("superset_list_dashboards", json!({"cursor": "page-two"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");

    let raw = t.ok("superset_list_dashboards", json!({"include_raw": true})).await;
    let shaped = t.ok("superset_list_dashboards", json!({})).await;
    assert_eq!(
        fake.last().q("q"),
        Some("(order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:25)")
    );
    let (raw_len, shaped_len) = (raw["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("superset_list_dashboards: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 3 < raw_len, "shaping should cut the payload a lot");
}

#[tokio::test]
async fn superset_get_dashboard_by_slug_or_id_with_its_charts() {
    let (t, fake, _state) = sup().await;
    let r = t.ok("superset_get_dashboard", json!({"dashboard": "sales"})).await;
    let reqs = fake.requests();
    let mut api: Vec<String> = reqs[2..].iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    api.sort();
    assert_eq!(api, ["GET /api/v1/dashboard/sales", "GET /api/v1/dashboard/sales/charts"]);
    for req in &reqs[2..] {
        assert_eq!(req.header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    }
    assert_eq!(
        r,
        json!({
            "id": 7, "title": "Sales Overview", "slug": "sales", "status": "published",
            "url": format!("{}/superset/dashboard/sales/", fake.url), "changed_on": "2026-03-03T10:00:00.000000+0000",
            "changed": "2 days ago", "changed_by": "Ada Lovelace", "owners": ["Ada Lovelace", "Grace Hopper"],
            "certified_by": "Finance team", "tags": ["finance"], "chart_count": 2,
            "charts": [
                {"id": 42, "name": "Revenue by region", "viz_type": "echarts_timeseries_bar", "description": "Revenue per sales region", "url": format!("{}/explore/?slice_id=42", fake.url)},
                {"id": 43, "name": "Orders table", "viz_type": "table", "url": format!("{}/explore/?slice_id=43", fake.url)}
            ],
            "native_filters": [{"id": "NATIVE_FILTER-a1", "name": "Region", "type": "filter_select", "column": "region", "dataset_id": 3}]
        })
    );
    let by_id = t.ok("superset_get_dashboard", json!({"dashboard": 7})).await;
    assert_eq!(by_id["slug"], "sales");
    assert!(fake.requests().iter().any(|r| r.path == "/api/v1/dashboard/7/charts"));

    let e = t.err("superset_get_dashboard", json!({"dashboard": "nope"})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(404)));
    assert!(e["message"].as_str().unwrap().contains("Not found"), "{e}");
    // Slugs are one path segment, whatever they contain.
    t.err("superset_get_dashboard", json!({"dashboard": "sales/../7"})).await;
    assert!(fake.requests().iter().any(|r| r.path == "/api/v1/dashboard/sales%2F..%2F7"));
}

#[tokio::test]
async fn superset_rate_limits_become_rate_limited() {
    let (t, _fake, _state) = sup().await;
    let e = t.err("superset_get_dashboard", json!({"dashboard": "busy"})).await;
    assert_eq!((e["code"].as_str(), e["retry_after_seconds"].as_u64()), (Some("RATE_LIMITED"), Some(120)));
    assert!(e["message"].as_str().unwrap().contains("100 per 1 minute"), "{e}");
    assert!(!e["message"].as_str().unwrap().contains("reconnect"));
}

// ---------------------------------------------------------------- charts

#[tokio::test]
async fn superset_list_charts_by_name_type_and_dashboard() {
    let (t, fake, _state) = sup().await;
    let r = t.ok("superset_list_charts", json!({"dashboard_id": 9, "viz_type": "table", "search": "orders"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/chart/"));
    assert_eq!(
        req.q("q"),
        Some(
            "(filters:!((col:slice_name,opr:ct,value:orders),(col:viz_type,opr:eq,value:table),(col:dashboards,opr:rel_m_m,value:9)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:25)"
        )
    );
    assert_eq!(
        r,
        json!({
            "count": 1,
            "charts": [{
                "id": 43, "name": "Orders table", "viz_type": "table", "dataset": "public.orders", "dataset_id": 3,
                "dashboards": [{"id": 7, "title": "Sales Overview"}, {"id": 9, "title": "Marketing KPIs"}],
                "url": format!("{}/explore/?slice_id=43", fake.url), "changed_on": "2026-02-28T10:00:00.000000+0000",
                "changed_by": "Ada Lovelace", "owners": ["Ada Lovelace"]
            }]
        })
    );
    let raw = t.ok("superset_list_charts", json!({"include_raw": true})).await;
    let shaped = t.ok("superset_list_charts", json!({})).await;
    assert_eq!(shaped["charts"].as_array().unwrap().len(), 3);
    let (raw_len, shaped_len) = (raw["raw"].to_string().len(), shaped.to_string().len());
    eprintln!("superset_list_charts: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 3 < raw_len, "shaping should cut the payload a lot");
}

#[tokio::test]
async fn superset_get_chart_data_returns_columns_and_rows() {
    let (t, fake, _state) = sup().await;
    let r = t.ok("superset_get_chart_data", json!({"chart_id": 42, "limit": 2})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/chart/42/data/"));
    assert_eq!(req.query, vec![("format".to_string(), "json".to_string())]);
    assert_eq!(req.header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    assert_eq!(
        r,
        json!({
            "chart_id": 42, "columns": ["region", "SUM(revenue)"], "column_types": ["string", "numeric"],
            "rows": [["EMEA", 1200.5], ["AMER", 980.0]], "row_count": 3, "truncated": true, "is_cached": true,
            "cached_at": "2026-03-02T09:00:00",
            "sql": "SELECT region AS region, sum(revenue) AS \"SUM(revenue)\"\nFROM public.orders GROUP BY region ORDER BY \"SUM(revenue)\" DESC\nLIMIT 10000"
        })
    );
    // The provider's own words reach the agent.
    let e = t.err("superset_get_chart_data", json!({"chart_id": 43})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(400)));
    assert!(e["message"].as_str().unwrap().contains("Chart has no query context saved"), "{e}");
}

/// Superset 6.1.0's `GET /api/v1/chart/<id>/data/` reads only `format`, `type` and `force` (the fake
/// ignores anything else, as Superset does): a dashboard's native filters only apply when they are
/// added to the chart's saved query context and that is posted to `/api/v1/chart/data`.
#[tokio::test]
async fn superset_get_chart_data_applies_the_dashboards_native_filters_through_the_query_context() {
    let (t, fake, _state) = sup().await;
    let f = t.ok("superset_get_chart_data", json!({"chart_id": 42, "force": true, "filters_dashboard_id": 7})).await;
    let reqs: Vec<String> = paths(&fake).into_iter().filter(|p| !p.contains("/security/")).collect();
    assert_eq!(reqs, ["GET /api/v1/dashboard/7", "GET /api/v1/chart/42", "POST /api/v1/chart/data"]);
    let sent = body_of(&fake.last());
    assert_eq!(sent["queries"][0]["filters"], json!([{"col": "region", "op": "IN", "val": ["EMEA"]}]));
    assert_eq!((sent["force"].clone(), sent["datasource"].clone()), (json!(true), json!({"id": 3, "type": "table"})));
    assert_eq!(f["rows"], json!([["EMEA", 1200.5]]));
    assert_eq!(f["applied_filters"], json!(["region"]));
    assert_eq!(f["dashboard_filters"], json!({"dashboard_id": 7, "applied": ["Region"]}));
    assert!(f.get("is_cached").is_none() && f.get("truncated").is_none(), "{f}");

    // A chart without a saved query context cannot take filters: said, not silently ignored.
    let e = t.err("superset_get_chart_data", json!({"chart_id": 43, "filters_dashboard_id": 7})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS", "{e}");
    assert!(e["message"].as_str().unwrap().contains("no saved query context"), "{e}");
}

// ---------------------------------------------------------------- datasets

#[tokio::test]
async fn superset_list_datasets_with_database_and_schema_filters() {
    let (t, fake, _state) = sup().await;
    let r = t.ok("superset_list_datasets", json!({"database_id": 1, "search": "orders"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/dataset/"));
    assert_eq!(
        req.q("q"),
        Some(
            "(filters:!((col:table_name,opr:ct,value:orders),(col:database,opr:rel_o_m,value:1)),order_column:changed_on_delta_humanized,order_direction:desc,page:0,page_size:25)"
        )
    );
    assert_eq!(
        r,
        json!({
            "count": 2,
            "datasets": [
                {"id": 3, "name": "orders", "schema": "public", "database": "analytics", "database_id": 1, "kind": "physical",
                 "description": "Orders fact table", "url": format!("{}/explore/?datasource_type=table&datasource_id=3", fake.url),
                 "changed_on": "2026-02-20T10:00:00.000000+0000", "changed_by": "Ada Lovelace", "owners": ["Ada Lovelace"]},
                {"id": 4, "name": "orders_by_region", "schema": "public", "database": "analytics", "database_id": 1, "kind": "virtual",
                 "sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1",
                 "url": format!("{}/explore/?datasource_type=table&datasource_id=4", fake.url),
                 "changed_on": "2026-02-20T10:00:00.000000+0000", "changed_by": "Ada Lovelace", "owners": ["Ada Lovelace"]}
            ]
        })
    );
    let raw = t.ok("superset_list_datasets", json!({"schema": "raw", "limit": 1})).await;
    assert!(fake.last().q("q").unwrap().starts_with("(filters:!((col:schema,opr:eq,value:raw)),"));
    assert_eq!(raw["datasets"][0]["name"], "events");
}

// ---------------------------------------------------------------- SQL Lab

#[tokio::test]
async fn superset_run_sql_sends_csrf_cookie_and_referer_and_returns_rows() {
    let (t, fake, state) = sup().await;
    // SQL Lab client ids are at most 11 letters or digits; others are refused before anything is sent.
    for bad in ["wb0000000001", "has space"] {
        let e = t.err("superset_run_sql", json!({"database_id": 1, "sql": "SELECT 1", "client_id": bad})).await;
        assert_eq!(e["code"], "INVALID_ARGUMENTS", "{e}");
    }
    assert!(fake.requests().is_empty());

    let r = t
        .ok(
            "superset_run_sql",
            json!({"database_id": 1, "sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1", "schema": "public", "limit": 2, "client_id": "wb000000001"}),
        )
        .await;
    let req = fake.last();
    assert_eq!(
        paths(&fake),
        ["POST /api/v1/security/login", "GET /api/v1/security/csrf_token/", "POST /api/v1/sqllab/execute/"]
    );
    assert_eq!(req.header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    let (session, csrf) = state.lock().unwrap().sessions.iter().next().map(|(k, v)| (k.clone(), v.clone())).unwrap();
    assert_eq!(req.header("x-csrftoken"), Some(csrf.as_str()));
    assert_eq!(req.header("cookie"), Some(format!("session={session}").as_str()));
    assert_eq!(req.header("referer"), Some(fake.url.as_str()));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        body_of(&req),
        json!({
            "database_id": 1, "sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1", "client_id": "wb000000001",
            "queryLimit": 2, "runAsync": false, "select_as_cta": false, "tab": "workbench", "expand_data": true,
            "schema": "public"
        })
    );
    assert_eq!(
        r,
        json!({
            "query_id": 310, "client_id": "wb000000001", "state": "success", "columns": ["region", "revenue"],
            "column_types": ["VARCHAR", "NUMERIC"], "rows": [["EMEA", 1200.5], ["AMER", 980.0]], "row_count": 2, "limited": true,
            "executed_sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1\nLIMIT 3"
        })
    );
    // Without a client id one is made up (SQL Lab allows 11 characters).
    t.ok("superset_run_sql", json!({"database_id": 2, "sql": "SELECT 1"})).await;
    let made_up = body_of(&fake.last())["client_id"].as_str().unwrap().to_string();
    assert_eq!(made_up.len(), 11);

    let e = t.err("superset_run_sql", json!({"database_id": 1, "sql": "SELECT * FROM nope"})).await;
    assert_eq!((e["code"].as_str(), e["status"].as_u64()), (Some("UPSTREAM_ERROR"), Some(400)));
    assert!(e["message"].as_str().unwrap().contains("relation \"nope\" does not exist"), "{e}");
}

#[tokio::test]
async fn superset_run_sql_async_polls_the_query_then_fetches_results() {
    let (t, fake, _state) = sup().await;
    let r = t
        .ok(
            "superset_run_sql",
            json!({"database_id": 1, "sql": "SELECT region, SUM(revenue) AS revenue FROM orders GROUP BY 1", "run_async": true, "client_id": "asyncq00001"}),
        )
        .await;
    let tail: Vec<String> = paths(&fake)[2..].to_vec();
    assert_eq!(
        tail,
        [
            "POST /api/v1/sqllab/execute/",
            "GET /api/v1/query/311",
            "GET /api/v1/query/311",
            "GET /api/v1/sqllab/results/"
        ]
    );
    let reqs = fake.requests();
    assert_eq!(body_of(&reqs[2])["runAsync"], true);
    // Polls are reads: JWT only.
    assert_eq!((reqs[3].header("x-csrftoken"), reqs[3].header("cookie")), (None, None));
    assert_eq!(fake.last().q("q"), Some("(key:'9f3c1c4e-2b7a-4c1e-8d2f-5a6b7c8d9e0f',rows:100)"));
    assert_eq!(r["state"], "success");
    assert_eq!(r["query_id"], 311);
    assert_eq!(r["client_id"], "asyncq00001");
    assert_eq!(r["rows"], json!([["EMEA", 1200.5], ["AMER", 980.0], ["APAC", 455.25]]));
}

#[tokio::test]
async fn superset_run_sql_async_returns_the_state_when_it_takes_too_long() {
    let (t, fake, state) = sup().await;
    state.lock().unwrap().stuck = true;
    let started = std::time::Instant::now();
    let r = t
        .ok(
            "superset_run_sql",
            json!({"database_id": 1, "sql": "SELECT pg_sleep(60)", "run_async": true, "client_id": "asyncq00001", "max_wait_seconds": 1}),
        )
        .await;
    let elapsed = started.elapsed();
    assert!(
        elapsed >= std::time::Duration::from_millis(900) && elapsed < std::time::Duration::from_secs(5),
        "{elapsed:?}"
    );
    // Polled right away, after 0.5 s and after 1 s in all.
    assert_eq!(paths(&fake).iter().filter(|p| p.as_str() == "GET /api/v1/query/311").count(), 3, "{:?}", paths(&fake));
    assert_eq!(r["state"], "running");
    assert_eq!(r["query_id"], 311);
    assert!(r["note"].as_str().unwrap().contains("superset_export_csv"), "{r}");
}

// ---------------------------------------------------------------- CSV export

#[tokio::test]
async fn superset_export_csv_of_a_chart_or_a_sql_lab_result() {
    let dir = tempfile::tempdir().unwrap();
    let (t, fake) = sup_with(&[files_dir(dir.path())]).await;
    let r = t.ok("superset_export_csv", json!({"chart_id": 42})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/v1/chart/42/data/"));
    assert_eq!(req.query, vec![("format".to_string(), "csv".to_string())]);
    assert_eq!(
        r,
        json!({
            "chart_id": 42, "filename": "revenue_by_region.csv", "size_bytes": 58, "rows": 3,
            "csv": "region,SUM(revenue)\nEMEA,1200.5\nAMER,980.0\nAPAC,455.25\n"
        })
    );

    let path = dir.path().join("sqllab.csv");
    let saved = t
        .ok("superset_export_csv", json!({"sql_client_id": "asyncq00001", "save_to": path.display().to_string()}))
        .await;
    assert_eq!(fake.last().path, "/api/v1/sqllab/export/asyncq00001/");
    assert_eq!(saved["saved_to"], path.display().to_string());
    assert_eq!(saved["filename"], "sqllab_asyncq00001_20260302_100001.csv");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "region,revenue\nEMEA,1200.5\nAMER,980.0\nAPAC,455.25\n");
    // An existing file is not overwritten unless asked.
    let e = t
        .err("superset_export_csv", json!({"sql_client_id": "asyncq00001", "save_to": path.display().to_string()}))
        .await;
    assert!(e["message"].as_str().unwrap().contains("exist"), "{e}");

    let short = t.ok("superset_export_csv", json!({"chart_id": 42, "max_chars": 100})).await;
    assert!(short.get("truncated").is_none());

    let both = t.err("superset_export_csv", json!({"chart_id": 42, "sql_client_id": "asyncq00001"})).await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let neither = t.err("superset_export_csv", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    assert!(neither["message"].as_str().unwrap().contains("exactly one of chart_id and sql_client_id"), "{neither}");

    let gone = t.err("superset_export_csv", json!({"sql_client_id": "nope000001"})).await;
    assert_eq!(gone["status"], 404);
    assert!(gone["message"].as_str().unwrap().contains("could not be found"), "{gone}");
}

// ---------------------------------------------------------------- the connect page

fn form_encode(pairs: &[(&str, &str)]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    pairs.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect::<Vec<_>>().join("&")
}

#[tokio::test]
async fn superset_connects_on_the_local_page_and_reuses_the_verified_session() {
    let (fake, state) = start(false).await;
    let t = app_with(&[]);
    let out = t.call("connect", json!({"integration": "superset"})).await;
    assert!(!out.is_error, "{}", out.body);
    assert_eq!(out.body["authType"], "cookie");
    let url = out.body["url"].as_str().unwrap().to_string();
    let origin = url[..url.find("/connect/").unwrap()].to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let html = http.get(&url).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("name=\"base_url\"") && html.contains("name=\"username\""), "{html}");
    assert!(html.contains("name=\"password\"") && html.contains("type=\"password\""), "{html}");
    let token = |html: &str| {
        let at = html.find("name=\"form_token\" value=\"").unwrap() + 25;
        html[at..at + html[at..].find('"').unwrap()].to_string()
    };
    let post = |body: String| {
        // What a browser sends with a form submission from the page (credential POSTs need it).
        http.post(&url)
            .header("origin", &origin)
            .header("sec-fetch-site", "same-origin")
            .header("sec-fetch-mode", "navigate")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
    };
    let wrong = post(form_encode(&[
        ("form_token", &token(&html)),
        ("base_url", &fake.url),
        ("username", USERNAME),
        ("password", "guess-guess-guess"),
    ]))
    .await
    .unwrap();
    assert_eq!(wrong.status(), 400);
    let wrong_html = wrong.text().await.unwrap();
    assert!(wrong_html.contains("Not authorized") && wrong_html.contains("Nothing was stored"), "{wrong_html}");
    assert!(!wrong_html.contains("guess-guess-guess"));

    let good = post(form_encode(&[
        ("form_token", &token(&wrong_html)),
        ("base_url", &fake.url),
        ("username", USERNAME),
        ("password", PASSWORD),
    ]))
    .await
    .unwrap();
    assert_eq!(good.status(), 200);
    assert!(good.text().await.unwrap().contains("connected to Apache Superset as ada (Ada Lovelace)"));
    let meta = t.app.storage.connection_meta("superset").unwrap().unwrap();
    assert_eq!(
        (meta.public_fields["base_url"].as_str(), meta.public_fields["username"].as_str()),
        (Some(fake.url.as_str()), Some(USERNAME))
    );
    assert!(meta.public_fields.get("password").is_none());

    // The session the connect page opened belongs to this exact connection: tools reuse it.
    t.ok("superset_list_dashboards", json!({})).await;
    assert_eq!(state.lock().unwrap().logins, 1);
    assert_eq!(fake.last().path, "/api/v1/dashboard/");

    // Disconnecting forgets the session too: the same credential has to log in again.
    t.ok("connection_delete_credentials", json!({"integration": "superset"})).await;
    assert_eq!(t.err("superset_list_dashboards", json!({})).await["code"], "NOT_CONNECTED");
    let again = workbench::auth::from_fields(
        &plugins::superset::INTEGRATION,
        fields(&[("base_url", &fake.url), ("username", USERNAME), ("password", PASSWORD)]),
        workbench::auth::Source::Store,
    );
    workbench::send::verify_identity(&t.app, &plugins::superset::INTEGRATION, again).await.unwrap();
    assert_eq!(state.lock().unwrap().logins, 2);
}

#[tokio::test]
async fn superset_tools_are_found_by_what_people_ask() {
    let t = app_with(&[]);
    for (query, want) in [
        ("run a SQL query in SQL Lab", "superset_run_sql"),
        ("list our BI dashboards", "superset_list_dashboards"),
        ("numbers behind the revenue chart", "superset_get_chart_data"),
        ("export chart data as csv", "superset_export_csv"),
        ("which databases can I query in superset", "superset_list_databases"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}

#[tokio::test]
async fn list_integrations_checks_the_superset_session_live_and_caches_it() {
    let entry = |out: &Value| {
        out["integrations"].as_array().unwrap().iter().find(|i| i["name"] == "superset").unwrap()["connected"].clone()
    };
    let (t, fake, _) = sup().await;
    let out = t.call("list_integrations", json!({})).await;
    assert_eq!(entry(&out.body), true);
    let logins = || fake.requests().iter().filter(|r| r.path == "/api/v1/security/login").count();
    assert_eq!(logins(), 1, "the check logged in");
    t.call("list_integrations", json!({})).await;
    assert_eq!(logins(), 1, "a second listing uses the cached check");

    let (fake2, _) = start(false).await;
    let wrong = app_for(&fake2, "not-the-password");
    let out = wrong.call("list_integrations", json!({})).await;
    assert_eq!(entry(&out.body), false, "credentials that no longer log in are not connected");
}

// ---------------------------------------------------------------- curl proxy

#[tokio::test]
async fn superset_through_the_curl_proxy_gets_bearer_cookie_and_csrf() {
    let (t, fake, state) = sup().await;
    let minted = t.call("curl_session", json!({"integrations": ["superset"]})).await;
    assert!(!minted.is_error, "{}", minted.body);
    let token = minted.body["token"].as_str().unwrap();
    let base = minted.body["proxyBaseUrl"].as_str().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let read = http
        .get(format!("{base}/superset/api/v1/database/"))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(read.json::<Value>().await.unwrap()["count"], 2);
    assert_eq!(fake.last().header("authorization"), Some(format!("Bearer {}", access_token(1)).as_str()));
    // A write carries the session cookie and the CSRF token Flask-WTF checks, added by the proxy.
    let write = http
        .post(format!("{base}/superset/api/v1/sqllab/execute/"))
        .header("authorization", format!("Bearer {token}"))
        .json(&json!({"database_id": 1, "sql": "SELECT 1", "client_id": "wb000000002", "runAsync": false}))
        .send()
        .await
        .unwrap();
    let status = write.status();
    let text = write.text().await.unwrap();
    assert!(fake.last().header("x-csrftoken").is_some(), "{status} {text}");
    assert!(fake.last().header("cookie").is_some_and(|c| c.starts_with("session=")));
    assert_ne!(status.as_u16(), 400, "{text}");
    assert!(!text.contains(&access_token(1)), "the session token never comes back: {text}");
    assert_eq!(state.lock().unwrap().logins, 1, "the proxy shares the tools' session");
}
