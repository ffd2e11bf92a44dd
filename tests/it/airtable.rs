//! Airtable against a fake on 127.0.0.1 that checks the Bearer token, the paths (with encoded table
//! names), the query and JSON bodies the way api.airtable.com does: the 10-record cap per write, 422
//! on unknown fields or formulas, `offset` paging, `{error:{type,message}}` errors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "patQk3Jc8ZtYw1.0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d";
const BASE: &str = "appSales0123456";
/// The table is addressed by a name with a space, so the path must be percent-encoded.
const TABLE_PATH: &str = "/v0/appSales0123456/Sales%20Leads";
const FIELDS: &[&str] = &["Name", "Email", "Status", "Seats", "Notes", "Files", "Owner"];

fn err(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(status, json!({"error": {"type": kind, "message": message}}))
}

fn seed() -> Vec<Value> {
    vec![
        json!({"id": "rec0000000000001", "createdTime": "2026-01-05T09:00:00.000Z", "fields": {
            "Name": "Acme Corp", "Email": "ops@acme.test", "Status": "Open", "Seats": 12,
            "Notes": "n".repeat(3_000),
            "Files": [{"id": "attR2d4", "width": 800, "height": 600, "url": "https://v5.airtableusercontent.com/contract.pdf",
                       "filename": "contract.pdf", "size": 48213, "type": "application/pdf",
                       "thumbnails": {"small": {"url": "https://v5.airtableusercontent.com/s.png", "width": 36, "height": 36},
                                      "large": {"url": "https://v5.airtableusercontent.com/l.png", "width": 512, "height": 512},
                                      "full": {"url": "https://v5.airtableusercontent.com/f.png", "width": 3000, "height": 3000}}}],
            "Owner": {"id": "usrAda0000000001", "email": "ada@example.com", "name": "Ada Lovelace"}
        }}),
        json!({"id": "rec0000000000002", "createdTime": "2026-01-06T09:00:00.000Z", "fields": {"Name": "Globex", "Status": "Won", "Seats": 40}}),
        json!({"id": "rec0000000000003", "createdTime": "2026-01-07T09:00:00.000Z", "fields": {
            "Name": "Initech", "Status": "Lost", "Notes": "Met them at the ACME conference"}}),
    ]
}

fn schema() -> Value {
    json!({"tables": [{
        "id": "tblLeads0000001", "name": "Sales Leads", "primaryFieldId": "fldName00000001", "description": "Inbound leads",
        "fields": [
            {"id": "fldName00000001", "name": "Name", "type": "singleLineText"},
            {"id": "fldEmail0000001", "name": "Email", "type": "email"},
            {"id": "fldStatus000001", "name": "Status", "type": "singleSelect", "options": {"choices": [
                {"id": "selOpen", "name": "Open", "color": "blueLight2"}, {"id": "selWon", "name": "Won", "color": "greenLight2"},
                {"id": "selLost", "name": "Lost", "color": "redLight2"}]}},
            {"id": "fldSeats0000001", "name": "Seats", "type": "number", "options": {"precision": 0}},
            {"id": "fldNotes0000001", "name": "Notes", "type": "multilineText"},
            {"id": "fldFiles0000001", "name": "Files", "type": "multipleAttachments", "options": {"isReversed": false}},
            {"id": "fldOwner0000001", "name": "Owner", "type": "singleCollaborator"}
        ],
        "views": [{"id": "viwGrid00000001", "name": "Grid view", "type": "grid"}, {"id": "viwOpen00000001", "name": "Open leads", "type": "grid"}]
    }, {
        "id": "tblCompanies001", "name": "Companies", "primaryFieldId": "fldCoName000001",
        "fields": [{"id": "fldCoName000001", "name": "Company", "type": "singleLineText"},
                   {"id": "fldLeads0000001", "name": "Leads", "type": "multipleRecordLinks", "options": {"linkedTableId": "tblLeads0000001", "isReversed": false, "prefersSingleRecordLink": false}}],
        "views": [{"id": "viwCo0000000001", "name": "All", "type": "grid"}]
    }]})
}

/// Evaluates the one formula shape the search tool sends: OR(SEARCH("x", LOWER({F}&"")), …).
fn eval_search(formula: &str, rec: &Value) -> Result<bool, String> {
    let mut hit = false;
    let mut rest = formula;
    let mut any = false;
    while let Some(i) = rest.find("SEARCH(\"") {
        any = true;
        let after = &rest[i + 8..];
        let end = after.find("\", LOWER({").ok_or("bad SEARCH")?;
        let needle = &after[..end];
        let after_field = &after[end + 10..];
        let fend = after_field.find("}&\"\"))").ok_or("bad LOWER")?;
        let field = &after_field[..fend];
        if !FIELDS.contains(&field) {
            return Err(format!("Unknown field names: {}", field.to_lowercase()));
        }
        let value = match &rec["fields"][field] {
            Value::String(s) => s.to_lowercase(),
            Value::Null => String::new(),
            v => v.to_string().to_lowercase(),
        };
        hit |= value.contains(needle);
        rest = &after_field[fend..];
    }
    if any { Ok(hit) } else { Err("The formula for filtering records is invalid: unsupported by the fake".into()) }
}

struct State {
    next_id: u32,
}

fn json_body(r: &Recorded) -> Result<Value, Reply> {
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err(err(415, "UNSUPPORTED_MEDIA_TYPE", "Expected application/json"));
    }
    serde_json::from_slice(&r.body).map_err(|_| err(400, "INVALID_REQUEST_BODY", "Could not parse request body"))
}

fn check_fields(fields: &Value, typecast: bool) -> Result<(), Reply> {
    let Some(map) = fields.as_object() else {
        return Err(err(422, "INVALID_RECORDS", "Each record needs a \"fields\" object"));
    };
    for k in map.keys() {
        if !FIELDS.contains(&k.as_str()) {
            return Err(err(422, "UNKNOWN_FIELD_NAME", &format!("Unknown field name: \"{k}\"")));
        }
    }
    let converts = |v: &Value| typecast && v.as_str().is_some_and(|s| s.parse::<u64>().is_ok());
    if map.get("Seats").is_some_and(|v| !v.is_number() && !v.is_null() && !converts(v)) {
        return Err(err(422, "INVALID_VALUE_FOR_COLUMN", "Field \"Seats\" cannot accept the provided value"));
    }
    Ok(())
}

fn airtable(state: &Mutex<State>, r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return err(400, "INVALID_REQUEST", "missing user agent");
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return err(401, "AUTHENTICATION_REQUIRED", "Authentication required");
    }
    let records = seed();
    let page_size = match r.q("pageSize").map(str::parse::<usize>) {
        None => 100,
        Some(Ok(n)) if (1..=100).contains(&n) => n,
        _ => {
            return err(
                422,
                "INVALID_REQUEST_UNKNOWN",
                "Invalid request: parameter validation failed. Check your request data.",
            );
        }
    };
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/v0/meta/whoami") => Reply::json(
            200,
            json!({"id": "usrAda0000000001", "email": "ada@example.com", "scopes": ["data.records:read", "data.records:write", "schema.bases:read"]}),
        ),
        ("GET", "/v0/meta/bases") => match r.q("offset") {
            None => Reply::json(
                200,
                json!({"bases": [{"id": BASE, "name": "Sales CRM", "permissionLevel": "create"},
                                 {"id": "appHiring000001", "name": "Hiring", "permissionLevel": "read"}],
                       "offset": "itrBasesPage2/appHiring000001"}),
            ),
            Some("itrBasesPage2/appHiring000001") => Reply::json(
                200,
                json!({"bases": [{"id": "appRoadmap00001", "name": "Roadmap", "permissionLevel": "owner"}]}),
            ),
            Some(_) => err(422, "INVALID_OFFSET_VALUE", "The value of offset is invalid"),
        },
        ("GET", "/v0/meta/bases/appSales0123456/tables") => Reply::json(200, schema()),
        ("GET", p) if p.starts_with("/v0/meta/bases/") => err(
            403,
            "INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND",
            "Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct.",
        ),
        ("GET", "/v0/appBusy0000000001/Sales%20Leads") => Reply::json(
            429,
            json!({"errors": [{"error": "RATE_LIMIT_REACHED", "message": "Rate limit exceeded. Please try again later"}]}),
        )
        .with_header("retry-after", "120"),
        ("GET", TABLE_PATH) => {
            let allowed = |k: &str| {
                ["pageSize", "offset", "view", "filterByFormula", "fields[]"].contains(&k)
                    || (k.starts_with("sort[") && (k.ends_with("][field]") || k.ends_with("][direction]")))
            };
            if let Some((k, _)) = r.query.iter().find(|(k, _)| !allowed(k)) {
                return err(422, "INVALID_REQUEST_UNKNOWN", &format!("Invalid request: parameter validation failed. Unknown parameter {k}"));
            }
            for (k, f) in &r.query {
                if k == "fields[]" && !FIELDS.contains(&f.as_str()) {
                    return err(422, "UNKNOWN_FIELD_NAME", &format!("Unknown field name: \"{f}\""));
                }
            }
            if r.q("view").is_some_and(|v| v != "Open leads" && v != "viwOpen00000001") {
                return err(422, "VIEW_NAME_NOT_FOUND", &format!("View \"{}\" not found", r.q("view").unwrap()));
            }
            let mut rows: Vec<Value> = records;
            if r.q("view").is_some() {
                rows.retain(|rec| rec["fields"]["Status"] == "Open");
            }
            if let Some(f) = r.q("filterByFormula") {
                let mut kept = Vec::new();
                for rec in rows {
                    match eval_search(f, &rec) {
                        Ok(true) => kept.push(rec),
                        Ok(false) => {}
                        Err(m) => return err(422, "INVALID_FILTER_BY_FORMULA", &m),
                    }
                }
                rows = kept;
            }
            if r.q("sort[0][field]") == Some("Seats") && r.q("sort[0][direction]") == Some("desc") {
                rows.sort_by_key(|rec| std::cmp::Reverse(rec["fields"]["Seats"].as_u64().unwrap_or(0)));
            }
            let fields: Vec<&str> = r.query.iter().filter(|(k, _)| k == "fields[]").map(|(_, v)| v.as_str()).collect();
            if !fields.is_empty() {
                for rec in &mut rows {
                    rec["fields"].as_object_mut().unwrap().retain(|k, _| fields.contains(&k.as_str()));
                }
            }
            let start = match r.q("offset") {
                None => 0,
                Some(o) => match o.strip_prefix("itrLeads/") {
                    Some(n) => n.parse().unwrap_or(usize::MAX),
                    None => return err(422, "LIST_RECORDS_ITERATOR_NOT_AVAILABLE", "The iterator is no longer available"),
                },
            };
            let page: Vec<Value> = rows.iter().skip(start).take(page_size).cloned().collect();
            let mut body = json!({"records": page});
            if start + page_size < rows.len() {
                body["offset"] = json!(format!("itrLeads/{}", start + page_size));
            }
            Reply::json(200, body)
        }
        ("POST", "/v0/appSales0123456/Sales%20Leads/listRecords") => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            let formula = body["filterByFormula"].as_str().unwrap_or_default();
            let mut rows = Vec::new();
            for rec in records {
                match eval_search(formula, &rec) {
                    Ok(true) => rows.push(rec),
                    Ok(false) => {}
                    Err(m) => return err(422, "INVALID_FILTER_BY_FORMULA", &m),
                }
            }
            Reply::json(200, json!({"records": rows}))
        }
        ("GET", p) if p.starts_with("/v0/appSales0123456/Sales%20Leads/") => {
            let id = p.rsplit('/').next().unwrap();
            match records.into_iter().find(|rec| rec["id"] == id) {
                Some(rec) => Reply::json(200, rec),
                None => err(404, "MODEL_ID_NOT_FOUND", &format!("Could not find a record with ID \"{id}\".")),
            }
        }
        ("POST", TABLE_PATH) | ("PATCH", TABLE_PATH) => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Some(k) = body.as_object().unwrap().keys().find(|k| !["records", "typecast", "performUpsert"].contains(&k.as_str())) {
                return err(422, "INVALID_REQUEST_UNKNOWN", &format!("Invalid request: parameter validation failed. Unknown key {k}"));
            }
            let recs = body["records"].as_array().cloned().unwrap_or_default();
            if recs.is_empty() || recs.len() > 10 {
                return err(422, "INVALID_RECORDS", "You must provide an array of up to 10 record objects");
            }
            let merge_on: Option<Vec<String>> = body["performUpsert"]["fieldsToMergeOn"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect());
            let mut out = Vec::new();
            let (mut created, mut updated) = (Vec::new(), Vec::new());
            // Airtable validates the whole batch before writing any of it.
            for rec in &recs {
                if let Err(e) = check_fields(&rec["fields"], body["typecast"] == true) {
                    return e;
                }
            }
            let mut st = state.lock().unwrap();
            for rec in recs {
                let mut fields = rec["fields"].clone();
                if r.method == "POST" || (rec.get("id").is_none() && merge_on.is_some()) {
                    let existing = merge_on.as_ref().and_then(|m| {
                        seed().into_iter().find(|s| m.iter().all(|f| s["fields"][f] == rec["fields"][f]))
                    });
                    if r.method == "POST" && rec.get("id").is_some() {
                        return err(422, "INVALID_RECORDS", "Record ids cannot be set when creating records");
                    }
                    match existing {
                        Some(mut s) => {
                            for (k, v) in fields.as_object().unwrap() {
                                s["fields"][k] = v.clone();
                            }
                            updated.push(s["id"].clone());
                            out.push(s);
                        }
                        None => {
                            st.next_id += 1;
                            let id = format!("recNew{:010}", st.next_id);
                            created.push(json!(id));
                            if body["typecast"] == true && fields["Seats"].is_string() {
                                fields["Seats"] = json!(fields["Seats"].as_str().unwrap().parse::<u64>().unwrap_or(0));
                            }
                            out.push(json!({"id": id, "createdTime": "2026-02-01T12:00:00.000Z", "fields": fields}));
                        }
                    }
                } else {
                    let Some(mut s) = seed().into_iter().find(|s| s["id"] == rec["id"]) else {
                        return err(422, "ROW_DOES_NOT_EXIST", &format!("Record ID {} does not exist in this table", rec["id"]));
                    };
                    for (k, v) in fields.as_object().unwrap() {
                        s["fields"][k] = v.clone();
                    }
                    out.push(s);
                }
            }
            if merge_on.is_some() {
                Reply::json(200, json!({"records": out, "createdRecords": created, "updatedRecords": updated}))
            } else {
                Reply::json(200, json!({"records": out}))
            }
        }
        ("DELETE", TABLE_PATH) => {
            let ids: Vec<&str> = r.query.iter().filter(|(k, _)| k == "records[]").map(|(_, v)| v.as_str()).collect();
            if ids.is_empty() || ids.len() > 10 || r.query.len() != ids.len() {
                return err(422, "INVALID_REQUEST_UNKNOWN", "Invalid request: parameter validation failed. Check your request data.");
            }
            let out: Vec<Value> = ids.iter().map(|id| json!({"id": id, "deleted": true})).collect();
            Reply::json(200, json!({"records": out}))
        }
        _ => Reply::json(404, json!({"error": "NOT_FOUND"})),
    }
}

async fn setup() -> (TestApp, Fake) {
    let state = Arc::new(Mutex::new(State { next_id: 0 }));
    let fake = Fake::start(move |r| airtable(&state, r)).await;
    let t = app_with(&[
        ("WORKBENCH_AIRTABLE_BASE_URL", format!("{}/v0", fake.url)),
        ("WORKBENCH_AIRTABLE_TOKEN", TOKEN.into()),
    ]);
    (t, fake)
}

#[tokio::test]
async fn airtable_list_bases_pages_through_offset() {
    let (t, fake) = setup().await;
    let r = t.ok("airtable_list_bases", json!({})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/v0/meta/bases"));
    assert!(req.query.is_empty());
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(
        r,
        json!({"bases": [{"base_id": BASE, "name": "Sales CRM", "permission_level": "create"},
                         {"base_id": "appHiring000001", "name": "Hiring", "permission_level": "read"}],
               "next_cursor": "itrBasesPage2/appHiring000001"})
    );
    let r2 = t.ok("airtable_list_bases", json!({"cursor": "itrBasesPage2/appHiring000001"})).await;
    assert_eq!(fake.last().q("offset"), Some("itrBasesPage2/appHiring000001"));
    assert_eq!(r2, json!({"bases": [{"base_id": "appRoadmap00001", "name": "Roadmap", "permission_level": "owner"}]}));
}

#[tokio::test]
async fn airtable_list_tables_shapes_the_schema() {
    let (t, fake) = setup().await;
    let r = t.ok("airtable_list_tables", json!({"base_id": BASE})).await;
    assert_eq!(fake.last().path, "/v0/meta/bases/appSales0123456/tables");
    let leads = &r["tables"][0];
    assert_eq!(leads["table_id"], "tblLeads0000001");
    assert_eq!(leads["name"], "Sales Leads");
    assert_eq!(
        leads["fields"][0],
        json!({"name": "Name", "type": "singleLineText", "field_id": "fldName00000001", "primary": true})
    );
    assert_eq!(leads["fields"][2]["choices"], json!(["Open", "Won", "Lost"]), "select options by name, no colours");
    assert_eq!(leads["views"][1], json!({"name": "Open leads", "type": "grid", "view_id": "viwOpen00000001"}));
    assert_eq!(r["tables"][1]["fields"][1]["linked_table_id"], "tblLeads0000001");
    assert!(r.get("raw").is_none());
    let raw = t.ok("airtable_list_tables", json!({"base_id": BASE, "include_raw": true})).await;
    assert_eq!(raw["raw"], schema());

    let e = t.err("airtable_list_tables", json!({"base_id": "appNotMine00001"})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 403);
    assert!(e["message"].as_str().unwrap().contains("the requested model was not found"), "{e}");
}

#[tokio::test]
async fn airtable_list_records_maps_view_sort_fields_and_pages() {
    let (t, fake) = setup().await;
    let args = json!({"base_id": BASE, "table": "Sales Leads", "sort": [{"field": "Seats", "direction": "desc"}],
                      "fields": ["Name", "Seats"], "limit": 2});
    let r = t.ok("airtable_list_records", args.clone()).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", TABLE_PATH));
    assert_eq!(
        req.query,
        [
            ("pageSize", "2"),
            ("sort[0][field]", "Seats"),
            ("sort[0][direction]", "desc"),
            ("fields[]", "Name"),
            ("fields[]", "Seats")
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert_eq!(
        r["records"],
        json!([{"record_id": "rec0000000000002", "created_time": "2026-01-06T09:00:00.000Z", "fields": {"Name": "Globex", "Seats": 40}},
               {"record_id": "rec0000000000001", "created_time": "2026-01-05T09:00:00.000Z", "fields": {"Name": "Acme Corp", "Seats": 12}}])
    );
    assert_eq!(r["next_cursor"], "itrLeads/2");
    let mut next = args.clone();
    next["cursor"] = json!("itrLeads/2");
    let r2 = t.ok("airtable_list_records", next).await;
    assert_eq!(fake.last().q("offset"), Some("itrLeads/2"));
    assert_eq!(r2["records"].as_array().unwrap().len(), 1);
    assert_eq!(r2["records"][0]["record_id"], "rec0000000000003");
    assert!(r2.get("next_cursor").is_none(), "the last page has no cursor");

    let v = t.ok("airtable_list_records", json!({"base_id": BASE, "table": "Sales Leads", "view": "Open leads"})).await;
    assert_eq!(fake.last().q("view"), Some("Open leads"));
    assert_eq!(fake.last().q("pageSize"), Some("50"));
    assert_eq!(v["records"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn airtable_list_records_is_smaller_than_the_raw_page() {
    let (t, _fake) = setup().await;
    let r = t.ok("airtable_list_records", json!({"base_id": BASE, "table": "Sales Leads", "include_raw": true})).await;
    let acme = &r["records"][0]["fields"];
    assert_eq!(
        acme["Files"],
        json!([{"filename": "contract.pdf", "url": "https://v5.airtableusercontent.com/contract.pdf", "type": "application/pdf", "size": 48213}])
    );
    assert_eq!(acme["Owner"], json!({"name": "Ada Lovelace", "email": "ada@example.com"}));
    assert_eq!(acme["Notes"].as_str().unwrap().len(), 2_000, "long text is cut per field");
    assert_eq!(r["records"][0]["truncated_fields"], json!(["Notes"]));
    let raw = serde_json::to_string(&r["raw"]).unwrap().len();
    let mut shaped = r.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = serde_json::to_string(&shaped).unwrap().len();
    eprintln!("airtable_list_records: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw, "shaped {shaped} >= raw {raw}");
}

#[tokio::test]
async fn airtable_search_records_builds_a_formula_over_text_fields() {
    let (t, fake) = setup().await;
    let r = t.ok("airtable_search_records", json!({"base_id": BASE, "table": "Sales Leads", "text": "ACME"})).await;
    let reqs = fake.requests();
    assert_eq!(reqs[reqs.len() - 2].path, "/v0/meta/bases/appSales0123456/tables", "the schema names the text fields");
    let req = fake.last();
    assert_eq!(req.path, TABLE_PATH);
    assert_eq!(
        req.q("filterByFormula"),
        Some(
            r#"OR(SEARCH("acme", LOWER({Name}&"")), SEARCH("acme", LOWER({Email}&"")), SEARCH("acme", LOWER({Status}&"")), SEARCH("acme", LOWER({Notes}&"")))"#
        )
    );
    assert_eq!(req.q("pageSize"), Some("25"));
    assert_eq!(r["searched_fields"], json!(["Name", "Email", "Status", "Notes"]));
    let ids: Vec<&str> = r["records"].as_array().unwrap().iter().map(|x| x["record_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["rec0000000000001", "rec0000000000003"]);

    // Named fields: one request, no schema lookup.
    let before = fake.requests().len();
    let r = t
        .ok(
            "airtable_search_records",
            json!({"base_id": BASE, "table": "Sales Leads", "text": "globex", "fields": ["Name"]}),
        )
        .await;
    assert_eq!(fake.requests().len(), before + 1);
    assert_eq!(fake.last().q("filterByFormula"), Some(r#"SEARCH("globex", LOWER({Name}&""))"#));
    assert_eq!(r["records"][0]["fields"]["Name"], "Globex");

    // A field Airtable does not know: its 422 reaches the agent.
    let e = t
        .err(
            "airtable_search_records",
            json!({"base_id": BASE, "table": "Sales Leads", "text": "x", "fields": ["Nmae"]}),
        )
        .await;
    assert_eq!(e["status"], 422);
    assert!(e["message"].as_str().unwrap().contains("Unknown field names: nmae (INVALID_FILTER_BY_FORMULA)"), "{e}");

    let e = t.err("airtable_search_records", json!({"base_id": BASE, "table": "Deals", "text": "x"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert!(e["message"].as_str().unwrap().contains("its tables are: Sales Leads, Companies"), "{e}");
}

#[tokio::test]
async fn airtable_long_formulas_go_through_the_post_list_variant() {
    let (t, fake) = setup().await;
    let many: Vec<String> = (0..300).map(|_| "Notes".to_string()).collect();
    let r = t
        .ok(
            "airtable_search_records",
            json!({"base_id": BASE, "table": "Sales Leads", "text": "conference", "fields": many}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/v0/appSales0123456/Sales%20Leads/listRecords"));
    assert!(req.query.is_empty());
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["pageSize"], 25);
    assert!(body["filterByFormula"].as_str().unwrap().len() > 4_000);
    assert_eq!(r["records"][0]["record_id"], "rec0000000000003");
}

#[tokio::test]
async fn airtable_get_record_and_missing_record() {
    let (t, fake) = setup().await;
    let r = t
        .ok("airtable_get_record", json!({"base_id": BASE, "table": "Sales Leads", "record_id": "rec0000000000001"}))
        .await;
    assert_eq!(fake.last().path, "/v0/appSales0123456/Sales%20Leads/rec0000000000001");
    assert_eq!(r["record_id"], "rec0000000000001");
    assert_eq!(r["fields"]["Notes"].as_str().unwrap().len(), 3_000, "get keeps up to 10,000 chars per field");
    assert_eq!(r["fields"]["Email"], "ops@acme.test");
    assert!(r.get("truncated_fields").is_none());
    let short = t
        .ok("airtable_get_record", json!({"base_id": BASE, "table": "Sales Leads", "record_id": "rec0000000000001", "max_chars_per_field": 100}))
        .await;
    assert_eq!(short["truncated_fields"], json!(["Notes"]));

    let e =
        t.err("airtable_get_record", json!({"base_id": BASE, "table": "Sales Leads", "record_id": "recNope"})).await;
    assert_eq!(e["status"], 404);
    assert_eq!(
        e["message"],
        "airtable answered 404: Could not find a record with ID \"recNope\". (MODEL_ID_NOT_FOUND)"
    );
}

fn new_rows(n: usize) -> Vec<Value> {
    (0..n).map(|i| json!({"fields": {"Name": format!("Lead {i}"), "Seats": i}})).collect()
}

#[tokio::test]
async fn airtable_create_records_sends_batches_of_ten() {
    let (t, fake) = setup().await;
    let r = t
        .ok("airtable_create_records", json!({"base_id": BASE, "table": "Sales Leads", "records": new_rows(23)}))
        .await;
    let posts: Vec<Recorded> = fake.requests().into_iter().filter(|q| q.method == "POST").collect();
    assert_eq!(posts.len(), 3);
    let sizes: Vec<usize> = posts
        .iter()
        .map(|p| serde_json::from_slice::<Value>(&p.body).unwrap()["records"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [10, 10, 3]);
    let first: Value = serde_json::from_slice(&posts[0].body).unwrap();
    assert_eq!(first["records"][0], json!({"fields": {"Name": "Lead 0", "Seats": 0}}));
    assert!(first.get("typecast").is_none());
    assert_eq!(r["created"], 23);
    assert_eq!(r["records"][22]["record_id"], "recNew0000000023");
    assert_eq!(r["records"][22]["fields"], json!({"Name": "Lead 22", "Seats": 22}));

    let typed = t
        .ok("airtable_create_records", json!({"base_id": BASE, "table": "Sales Leads", "typecast": true, "records": [{"fields": {"Name": "Typed", "Seats": "7"}}]}))
        .await;
    assert_eq!(serde_json::from_slice::<Value>(&fake.last().body).unwrap()["typecast"], true);
    assert_eq!(typed["records"][0]["fields"]["Seats"], 7);

    let too_many = t
        .err("airtable_create_records", json!({"base_id": BASE, "table": "Sales Leads", "records": new_rows(51)}))
        .await;
    assert_eq!(too_many["code"], "INVALID_ARGUMENTS");
    let before = fake.requests().len();
    let none = t.err("airtable_create_records", json!({"base_id": BASE, "table": "Sales Leads"})).await;
    assert_eq!(none["code"], "INVALID_ARGUMENTS");
    assert_eq!(none["problems"][0]["path"], "/records");
    assert_eq!(fake.requests().len(), before, "nothing is sent without records");
}

#[tokio::test]
async fn airtable_create_records_reports_what_a_failed_batch_left_behind() {
    let (t, _fake) = setup().await;
    let mut rows = new_rows(14);
    rows[12] = json!({"fields": {"Name": "Bad", "Colour": "red"}});
    let e = t.err("airtable_create_records", json!({"base_id": BASE, "table": "Sales Leads", "records": rows})).await;
    assert_eq!(e["status"], 422);
    let m = e["message"].as_str().unwrap();
    assert!(m.starts_with("airtable answered 422: Unknown field name: \"Colour\" (UNKNOWN_FIELD_NAME)"), "{m}");
    assert!(m.contains("10 record(s) were already created by earlier batches of this call: recNew0000000001,"), "{m}");
    assert!(m.contains("recNew0000000010"), "{m}");

    // A failure in the first batch writes nothing, so nothing extra is said.
    let e = t
        .err(
            "airtable_create_records",
            json!({"base_id": BASE, "table": "Sales Leads", "records": [{"fields": {"Seats": "many"}}]}),
        )
        .await;
    assert_eq!(
        e["message"],
        "airtable answered 422: Field \"Seats\" cannot accept the provided value (INVALID_VALUE_FOR_COLUMN)"
    );
}

#[tokio::test]
async fn airtable_update_records_by_id_and_by_upsert() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "airtable_update_records",
            json!({"base_id": BASE, "table": "Sales Leads",
             "records": [{"id": "rec0000000000002", "fields": {"Status": "Open", "Seats": 41}}]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", TABLE_PATH));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"records": [{"id": "rec0000000000002", "fields": {"Status": "Open", "Seats": 41}}]})
    );
    assert_eq!(r["updated"], 1);
    assert_eq!(r["records"][0]["fields"], json!({"Name": "Globex", "Status": "Open", "Seats": 41}));

    let up = t
        .ok(
            "airtable_update_records",
            json!({"base_id": BASE, "table": "Sales Leads", "upsert_fields": ["Name"],
             "records": [{"fields": {"Name": "Globex", "Seats": 50}}, {"fields": {"Name": "Hooli", "Seats": 3}}]}),
        )
        .await;
    let body: Value = serde_json::from_slice(&fake.last().body).unwrap();
    assert_eq!(body["performUpsert"], json!({"fieldsToMergeOn": ["Name"]}));
    assert_eq!(body["records"][1], json!({"fields": {"Name": "Hooli", "Seats": 3}}));
    assert_eq!(up["updated_record_ids"], json!(["rec0000000000002"]));
    assert_eq!(up["created_record_ids"], json!(["recNew0000000001"]));

    let missing_id = t
        .err(
            "airtable_update_records",
            json!({"base_id": BASE, "table": "Sales Leads", "records": [{"fields": {"Seats": 1}}]}),
        )
        .await;
    assert_eq!(missing_id["code"], "INVALID_ARGUMENTS");
    assert_eq!(missing_id["problems"][0]["path"], "/records/0/id");

    let gone = t
        .err(
            "airtable_update_records",
            json!({"base_id": BASE, "table": "Sales Leads", "records": [{"id": "recGone", "fields": {"Seats": 1}}]}),
        )
        .await;
    assert!(gone["message"].as_str().unwrap().contains("Record ID \"recGone\" does not exist in this table"), "{gone}");
}

#[tokio::test]
async fn airtable_delete_records_in_batches() {
    let (t, fake) = setup().await;
    let ids: Vec<String> = (1..=12).map(|i| format!("rec{i:013}")).collect();
    let r = t.ok("airtable_delete_records", json!({"base_id": BASE, "table": "Sales Leads", "record_ids": ids})).await;
    let dels: Vec<Recorded> = fake.requests().into_iter().filter(|q| q.method == "DELETE").collect();
    assert_eq!(dels.len(), 2);
    assert_eq!(dels[0].path, TABLE_PATH);
    assert_eq!(dels[0].query.len(), 10);
    assert_eq!(dels[0].query[0], ("records[]".to_string(), "rec0000000000001".to_string()));
    assert_eq!(
        dels[1].query,
        vec![
            ("records[]".to_string(), "rec0000000000011".to_string()),
            ("records[]".to_string(), "rec0000000000012".to_string())
        ]
    );
    assert!(dels[0].body.is_empty());
    assert_eq!(r["deleted"], 12);
    assert_eq!(r["record_ids"][11], "rec0000000000012");
}

#[tokio::test]
async fn airtable_rejected_token_rate_limit_and_identity() {
    let (t, fake) = setup().await;
    let wrong = app_with(&[
        ("WORKBENCH_AIRTABLE_BASE_URL", format!("{}/v0", fake.url)),
        ("WORKBENCH_AIRTABLE_TOKEN", "patWrong.000".into()),
    ]);
    let e = wrong.err("airtable_list_bases", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let integration = &plugins::airtable::INTEGRATION;
    let connection = |token: &str| {
        let fields = HashMap::from([("token".to_string(), Secret::new(token.to_string()))]);
        workbench::auth::from_fields(integration, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, integration, connection(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("ada@example.com"));
    assert_eq!(fake.last().path, "/v0/meta/whoami");
    let bad = workbench::send::verify_identity(&t.app, integration, connection("patWrong.000")).await.unwrap_err();
    assert!(bad.to_string().contains("Airtable rejected this credential: Authentication required"), "{bad}");

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let rl = t.err("airtable_list_records", json!({"base_id": "appBusy0000000001", "table": "Sales Leads"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn airtable_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("add rows to my airtable base", "airtable_create_records"),
        ("what columns does this airtable table have", "airtable_list_tables"),
        ("find records in airtable where the name contains acme", "airtable_search_records"),
        ("delete rows from an airtable table", "airtable_delete_records"),
        ("upsert records in airtable", "airtable_update_records"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
