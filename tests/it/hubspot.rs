//! HubSpot CRM against a fake on 127.0.0.1 that checks the Bearer token, paths, `idProperty`, JSON
//! bodies (string property values, HubSpot-defined association type ids) and answers like
//! api.hubapi.com: `{status,message,category}` errors, `paging.next.after` cursors, and a search
//! that refuses to page past 10,000 results.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "pat-na1-5b1f0c2e-7d3a-4e9b-a1c8-0f2d3e4a5b6c";

fn hs_err(status: u16, category: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"status": "error", "message": message, "correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf", "category": category}),
    )
}

fn contacts() -> Vec<Value> {
    vec![
        json!({"id": "151", "createdAt": "2025-11-02T10:00:00.000Z", "updatedAt": "2026-01-15T08:30:00.000Z", "archived": false,
               "properties": {"email": "ada@example.com", "firstname": "Ada", "lastname": "Lovelace", "phone": "+44 20 7946 0000",
                              "company": "Analytical Engines", "jobtitle": "CTO", "lifecyclestage": "customer", "hs_lead_status": null,
                              "hubspot_owner_id": "88001", "city": "London"}}),
        json!({"id": "152", "createdAt": "2025-12-01T10:00:00.000Z", "updatedAt": "2026-01-10T08:30:00.000Z", "archived": false,
               "properties": {"email": "grace@navy.example", "firstname": "Grace", "lastname": "Hopper", "phone": null,
                              "company": "US Navy", "jobtitle": "Rear Admiral", "lifecyclestage": "lead", "hs_lead_status": "NEW",
                              "hubspot_owner_id": null}}),
        json!({"id": "153", "createdAt": "2026-01-03T10:00:00.000Z", "updatedAt": "2026-01-04T08:30:00.000Z", "archived": false,
               "properties": {"email": "alan@bletchley.example", "firstname": "Alan", "lastname": "Turing", "phone": null,
                              "company": "Bletchley Park", "jobtitle": null, "lifecyclestage": "lead", "hs_lead_status": "OPEN",
                              "hubspot_owner_id": "88001"}}),
    ]
}

fn companies() -> Vec<Value> {
    vec![
        json!({"id": "9001", "createdAt": "2025-10-01T09:00:00.000Z", "updatedAt": "2026-01-02T09:00:00.000Z", "archived": false,
               "properties": {"name": "Analytical Engines", "domain": "engines.example", "industry": "COMPUTER_SOFTWARE", "city": "London",
                              "state": null, "country": "United Kingdom", "phone": null, "numberofemployees": "120", "annualrevenue": "4000000",
                              "lifecyclestage": "customer", "hubspot_owner_id": "88001", "hs_num_open_deals": "2", "website": "engines.example",
                              "description": "Difference and analytical engines, made to order.", "hs_analytics_source": "DIRECT_TRAFFIC"}}),
    ]
}

fn deals() -> Vec<Value> {
    vec![
        json!({"id": "7001", "createdAt": "2025-12-10T09:00:00.000Z", "updatedAt": "2026-01-20T09:00:00.000Z", "archived": false,
               "properties": {"dealname": "Analytical Engines — 50 seats", "amount": "25000", "deal_currency_code": "GBP", "dealstage": "closedwon",
                              "pipeline": "default", "closedate": "2026-01-20T00:00:00Z", "hubspot_owner_id": "88001"}}),
    ]
}

/// Properties as HubSpot returns them: every requested one (null when unset) plus the system ones.
fn project(o: &Value, props: &[String]) -> Value {
    let mut out = o.clone();
    let mut p = Map::new();
    for name in props {
        p.insert(name.clone(), o["properties"].get(name).cloned().unwrap_or(Value::Null));
    }
    p.insert("hs_object_id".into(), o["id"].clone());
    p.insert("createdate".into(), o["createdAt"].clone());
    p.insert("lastmodifieddate".into(), o["updatedAt"].clone());
    out["properties"] = Value::Object(p);
    out
}

fn json_body(r: &Recorded) -> Result<Value, Reply> {
    if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err(hs_err(415, "VALIDATION_ERROR", "Unsupported Media Type"));
    }
    serde_json::from_slice(&r.body).map_err(|_| hs_err(400, "VALIDATION_ERROR", "Invalid input JSON on line 1"))
}

/// Property values are strings, and must be known properties.
fn check_properties(props: &Value, known: &[&str]) -> Result<(), Reply> {
    let Some(map) = props.as_object() else {
        return Err(hs_err(400, "VALIDATION_ERROR", "Invalid input JSON: properties must be an object"));
    };
    for (k, v) in map {
        if !known.contains(&k.as_str()) {
            return Err(hs_err(
                400,
                "VALIDATION_ERROR",
                &format!(
                    "Property values were not valid: [{{\"isValid\":false,\"message\":\"Property \\\"{k}\\\" does not exist\",\"error\":\"PROPERTY_DOESNT_EXIST\",\"name\":\"{k}\"}}]"
                ),
            ));
        }
        if !v.is_string() {
            return Err(hs_err(
                400,
                "VALIDATION_ERROR",
                &format!("Property values were not valid: {k} must be a string"),
            ));
        }
    }
    Ok(())
}

/// Associations: `[{to:{id}, types:[{associationCategory:HUBSPOT_DEFINED, associationTypeId}]}]` with allowed ids.
fn check_associations(body: &Value, allowed: &[u64]) -> Result<(), Reply> {
    for a in body["associations"].as_array().into_iter().flatten() {
        let t = &a["types"][0];
        let ok = a["to"]["id"].is_string()
            && t["associationCategory"] == "HUBSPOT_DEFINED"
            && t["associationTypeId"].as_u64().is_some_and(|id| allowed.contains(&id));
        if !ok {
            return Err(hs_err(400, "VALIDATION_ERROR", &format!("invalid association {a}")));
        }
    }
    Ok(())
}

const CONTACT_PROPS: &[&str] = &[
    "email",
    "firstname",
    "lastname",
    "phone",
    "company",
    "jobtitle",
    "lifecyclestage",
    "hs_lead_status",
    "hubspot_owner_id",
    "city",
];
const DEAL_PROPS: &[&str] = &[
    "dealname",
    "amount",
    "deal_currency_code",
    "dealstage",
    "pipeline",
    "closedate",
    "hubspot_owner_id",
    "description",
];

fn search(r: &Recorded, kind: &str) -> Reply {
    let body = match json_body(r) {
        Ok(b) => b,
        Err(e) => return e,
    };
    let allowed = ["filterGroups", "sorts", "query", "properties", "limit", "after"];
    if let Some(k) = body.as_object().unwrap().keys().find(|k| !allowed.contains(&k.as_str())) {
        return hs_err(400, "VALIDATION_ERROR", &format!("Invalid input JSON on line 1: Unrecognized field \"{k}\""));
    }
    if body["query"] == "slow" {
        return Reply::json(
            429,
            json!({"status": "error", "message": "You have reached your secondly limit.", "errorType": "RATE_LIMIT",
                   "correlationId": "c0ffee00-0000-4000-8000-000000000000", "policyName": "SECONDLY"}),
        )
        .with_header("retry-after", "120");
    }
    let limit = body["limit"].as_u64().unwrap_or(10);
    if !(1..=200).contains(&limit) {
        return hs_err(400, "VALIDATION_ERROR", "limit must be between 1 and 200");
    }
    let after: u64 = match &body["after"] {
        Value::Null => 0,
        Value::String(s) => s.parse().unwrap_or(u64::MAX),
        _ => return hs_err(400, "VALIDATION_ERROR", "after must be a string"),
    };
    if after >= 10_000 {
        return hs_err(
            400,
            "VALIDATION_ERROR",
            "There was a problem with the request. Paging beyond 10000 results is not supported.",
        );
    }
    let props: Vec<String> =
        body["properties"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
    if body["query"] == "everyone" {
        let page: Vec<Value> = (0..limit)
            .map(|i| project(&json!({"id": format!("{}", 20_000 + after + i), "createdAt": "2024-01-01T00:00:00Z", "updatedAt": "2024-01-01T00:00:00Z",
                                     "archived": false, "properties": {"email": format!("p{}@bulk.example", after + i)}}), &props))
            .collect();
        return Reply::json(
            200,
            json!({"total": 25_000, "results": page, "paging": {"next": {"after": format!("{}", after + limit), "link": "?after=x"}}}),
        );
    }
    let mut rows = match kind {
        "contacts" => contacts(),
        "companies" => companies(),
        _ => deals(),
    };
    if let Some(q) = body["query"].as_str() {
        let q = q.to_lowercase();
        rows.retain(|o| {
            o["properties"]
                .as_object()
                .unwrap()
                .values()
                .any(|v| v.as_str().is_some_and(|s| s.to_lowercase().contains(&q)))
        });
    }
    for group in body["filterGroups"].as_array().into_iter().flatten() {
        for f in group["filters"].as_array().into_iter().flatten() {
            let prop = f["propertyName"].as_str().unwrap_or_default().to_string();
            match f["operator"].as_str() {
                Some("EQ") => rows.retain(|o| o["properties"][&prop] == f["value"]),
                Some("IN") => rows.retain(|o| f["values"].as_array().unwrap().contains(&o["properties"][&prop])),
                Some("GTE") => {
                    let min: f64 = f["value"].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0);
                    rows.retain(|o| {
                        o["properties"][&prop].as_str().and_then(|v| v.parse::<f64>().ok()).is_some_and(|v| v >= min)
                    })
                }
                Some("HAS_PROPERTY") if f.get("value").is_none() => rows.retain(|o| !o["properties"][&prop].is_null()),
                other => return hs_err(400, "VALIDATION_ERROR", &format!("unsupported filter {other:?} in the fake")),
            }
        }
    }
    let sort = &body["sorts"][0];
    if sort["propertyName"] == "createdate" && sort["direction"] == "DESCENDING" {
        rows.reverse();
    }
    let total = rows.len() as u64;
    let page: Vec<Value> = rows.iter().skip(after as usize).take(limit as usize).map(|o| project(o, &props)).collect();
    let mut reply = json!({"total": total, "results": page});
    if after + limit < total {
        reply["paging"] = json!({"next": {"after": format!("{}", after + limit), "link": "https://api.hubapi.com/crm/v3/objects/contacts/search?after=x"}});
    }
    Reply::json(200, reply)
}

fn created(id: &str, body: &Value) -> Reply {
    let mut props = body["properties"].clone();
    props["hs_object_id"] = json!(id);
    props["createdate"] = json!("2026-02-01T12:00:00.000Z");
    props["lastmodifieddate"] = json!("2026-02-01T12:00:00.000Z");
    Reply::json(
        201,
        json!({"id": id, "properties": props, "createdAt": "2026-02-01T12:00:00.000Z", "updatedAt": "2026-02-01T12:00:00.000Z", "archived": false}),
    )
}

fn hubspot(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return hs_err(400, "VALIDATION_ERROR", "missing user agent");
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return hs_err(
            401,
            "INVALID_AUTHENTICATION",
            "Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview",
        );
    }
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/account-info/v3/details") => Reply::json(
            200,
            json!({"portalId": 62515, "accountType": "STANDARD", "timeZone": "US/Eastern", "companyCurrency": "USD", "additionalCurrencies": [],
                   "utcOffset": "-05:00", "utcOffsetMilliseconds": -18000000, "uiDomain": "app.hubspot.com", "dataHostingLocation": "na1"}),
        ),
        ("POST", "/crm/v3/objects/contacts/search") => search(r, "contacts"),
        ("POST", "/crm/v3/objects/companies/search") => search(r, "companies"),
        ("POST", "/crm/v3/objects/deals/search") => search(r, "deals"),
        ("GET", p) if p.starts_with("/crm/v3/objects/contacts/") => {
            let key = p.trim_start_matches("/crm/v3/objects/contacts/");
            let found = match r.q("idProperty") {
                Some("email") => contacts()
                    .into_iter()
                    .find(|c| key == c["properties"]["email"].as_str().unwrap().replace('@', "%40")),
                None => contacts().into_iter().find(|c| c["id"] == key),
                Some(_) => return hs_err(400, "VALIDATION_ERROR", "unknown idProperty"),
            };
            let Some(c) = found else {
                return hs_err(404, "OBJECT_NOT_FOUND", "resource not found");
            };
            let props: Vec<String> = r.q("properties").unwrap_or_default().split(',').map(str::to_string).collect();
            let mut out = project(&c, &props);
            if r.q("associations") == Some("companies,deals") && c["id"] == "151" {
                out["associations"] = json!({
                    "companies": {"results": [{"id": "9001", "type": "contact_to_company"}, {"id": "9001", "type": "contact_to_company_unlabeled"}]},
                    "deals": {"results": [{"id": "7001", "type": "contact_to_deal"}]}
                });
            }
            Reply::json(200, out)
        }
        ("POST", "/crm/v3/objects/contacts") => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Err(e) =
                check_properties(&body["properties"], CONTACT_PROPS).and(check_associations(&body, &[1, 279, 4]))
            {
                return e;
            }
            match body["properties"]["email"].as_str() {
                None => hs_err(400, "VALIDATION_ERROR", "Property values were not valid: email is required"),
                Some("ada@example.com") => hs_err(409, "CONFLICT", "Contact already exists. Existing ID: 151"),
                Some(_) => created("1201", &body),
            }
        }
        ("PATCH", p) if p.starts_with("/crm/v3/objects/contacts/") => {
            let key = p.trim_start_matches("/crm/v3/objects/contacts/");
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Err(e) = check_properties(&body["properties"], CONTACT_PROPS) {
                return e;
            }
            let found = match r.q("idProperty") {
                Some("email") => contacts()
                    .into_iter()
                    .find(|c| key == c["properties"]["email"].as_str().unwrap().replace('@', "%40")),
                _ => contacts().into_iter().find(|c| c["id"] == key),
            };
            let Some(mut c) = found else {
                return hs_err(404, "OBJECT_NOT_FOUND", "resource not found");
            };
            for (k, v) in body["properties"].as_object().unwrap() {
                c["properties"][k] = v.clone();
            }
            c["updatedAt"] = json!("2026-02-02T00:00:00.000Z");
            Reply::json(200, c)
        }
        ("POST", "/crm/v3/objects/deals") => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Err(e) =
                check_properties(&body["properties"], DEAL_PROPS).and(check_associations(&body, &[3, 5, 341]))
            {
                return e;
            }
            let p = &body["properties"];
            if p["dealname"].is_null() || p["pipeline"].is_null() || p["dealstage"].is_null() {
                return hs_err(
                    400,
                    "VALIDATION_ERROR",
                    "Property values were not valid: dealname, pipeline and dealstage are required",
                );
            }
            if p["pipeline"] == "default" && p["dealstage"] == "nonsense" {
                return hs_err(
                    400,
                    "VALIDATION_ERROR",
                    "Property values were not valid: nonsense is not a valid stage of pipeline default",
                );
            }
            created("7002", &body)
        }
        ("PATCH", "/crm/v3/objects/deals/7001") => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Err(e) = check_properties(&body["properties"], DEAL_PROPS) {
                return e;
            }
            let mut d = deals().remove(0);
            for (k, v) in body["properties"].as_object().unwrap() {
                d["properties"][k] = v.clone();
            }
            Reply::json(200, d)
        }
        ("PATCH", p) if p.starts_with("/crm/v3/objects/deals/") => {
            hs_err(404, "OBJECT_NOT_FOUND", "resource not found")
        }
        ("POST", "/crm/v3/objects/notes") => {
            let body = match json_body(r) {
                Ok(b) => b,
                Err(e) => return e,
            };
            if let Err(e) = check_properties(&body["properties"], &["hs_note_body", "hs_timestamp", "hubspot_owner_id"])
                .and(check_associations(&body, &[202, 190, 214]))
            {
                return e;
            }
            if body["properties"]["hs_timestamp"].is_null() {
                return hs_err(400, "VALIDATION_ERROR", "Property values were not valid: hs_timestamp is required");
            }
            created("5501", &body)
        }
        _ => hs_err(404, "OBJECT_NOT_FOUND", "resource not found"),
    }
}

async fn setup() -> (TestApp, Fake) {
    let fake = Fake::start(hubspot).await;
    let t = app_with(&[("WORKBENCH_HUBSPOT_BASE_URL", fake.url.clone()), ("WORKBENCH_HUBSPOT_TOKEN", TOKEN.into())]);
    (t, fake)
}

fn body(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn hubspot_search_contacts_sends_filters_and_pages() {
    let (t, fake) = setup().await;
    let args = json!({"filters": [{"property": "lifecyclestage", "operator": "eq", "value": "lead"}],
                      "properties": ["city"], "sort_by": "createdate", "sort_direction": "asc", "limit": 1});
    let r = t.ok("hubspot_search_contacts", args.clone()).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/crm/v3/objects/contacts/search"));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    assert_eq!(
        body(&req),
        json!({
            "properties": ["email", "firstname", "lastname", "phone", "company", "jobtitle", "lifecyclestage", "hs_lead_status", "hubspot_owner_id", "city"],
            "sorts": [{"propertyName": "createdate", "direction": "ASCENDING"}],
            "limit": 1,
            "filterGroups": [{"filters": [{"propertyName": "lifecyclestage", "operator": "EQ", "value": "lead"}]}]
        })
    );
    assert_eq!(r["total"], 2);
    assert_eq!(
        r["contacts"],
        json!([{"id": "152", "email": "grace@navy.example", "firstname": "Grace", "lastname": "Hopper", "company": "US Navy",
                "jobtitle": "Rear Admiral", "lifecyclestage": "lead", "hs_lead_status": "NEW",
                "created_at": "2025-12-01T10:00:00.000Z", "updated_at": "2026-01-10T08:30:00.000Z"}])
    );
    assert_eq!(r["next_cursor"], "1");
    let mut next = args;
    next["cursor"] = json!("1");
    let r2 = t.ok("hubspot_search_contacts", next).await;
    assert_eq!(body(&fake.last())["after"], "1");
    assert_eq!(r2["contacts"][0]["id"], "153");
    assert!(r2.get("next_cursor").is_none(), "the last page has no cursor");
    assert!(r2.get("note").is_none());

    let q = t.ok("hubspot_search_contacts", json!({"query": "bletchley"})).await;
    assert_eq!(body(&fake.last())["query"], "bletchley");
    assert_eq!(body(&fake.last())["limit"], 25);
    assert!(body(&fake.last()).get("filterGroups").is_none());
    assert_eq!(q["contacts"][0]["lastname"], "Turing");
}

#[tokio::test]
async fn hubspot_search_stops_at_the_10k_cap() {
    let (t, fake) = setup().await;
    let r = t.ok("hubspot_search_contacts", json!({"query": "everyone"})).await;
    assert_eq!(r["total"], 25_000);
    assert_eq!(r["next_cursor"], "25");
    assert!(r["note"].as_str().unwrap().contains("at most 10000 of the 25000 matches"), "{r}");
    let last = t.ok("hubspot_search_contacts", json!({"query": "everyone", "cursor": "9975"})).await;
    assert_eq!(body(&fake.last())["after"], "9975");
    assert_eq!(last["contacts"].as_array().unwrap().len(), 25);
    assert!(last.get("next_cursor").is_none(), "no cursor HubSpot would refuse: {last}");
    let refused = t.err("hubspot_search_contacts", json!({"query": "everyone", "cursor": "10000"})).await;
    assert_eq!(refused["status"], 400);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("Paging beyond 10000 results is not supported. (VALIDATION_ERROR)"),
        "{refused}"
    );

    let bad = t
        .err("hubspot_search_deals", json!({"filters": [{"property": "amount", "operator": "between", "value": "1"}]}))
        .await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["problems"][0]["path"], "/filters/0/high_value");
    let bad = t.err("hubspot_search_contacts", json!({"filters": [{"property": "email", "operator": "in"}]})).await;
    assert_eq!(bad["problems"][0]["path"], "/filters/0/values");
}

#[tokio::test]
async fn hubspot_search_companies_is_smaller_than_raw() {
    let (t, fake) = setup().await;
    let r = t.ok("hubspot_search_companies", json!({"query": "engines", "include_raw": true})).await;
    let req = fake.last();
    assert_eq!(req.path, "/crm/v3/objects/companies/search");
    let b = body(&req);
    assert_eq!(b["properties"][0], "name");
    assert_eq!(b["sorts"], json!([{"propertyName": "createdate", "direction": "DESCENDING"}]));
    assert_eq!(
        r["companies"][0],
        json!({"id": "9001", "name": "Analytical Engines", "domain": "engines.example", "industry": "COMPUTER_SOFTWARE", "city": "London",
               "country": "United Kingdom", "numberofemployees": "120", "annualrevenue": "4000000", "lifecyclestage": "customer",
               "hubspot_owner_id": "88001", "created_at": "2025-10-01T09:00:00.000Z", "updated_at": "2026-01-02T09:00:00.000Z"})
    );
    let raw = serde_json::to_string(&r["raw"]).unwrap().len();
    let mut shaped = r.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = serde_json::to_string(&shaped).unwrap().len();
    eprintln!("hubspot_search_companies: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw, "shaped {shaped} >= raw {raw}");
}

#[tokio::test]
async fn hubspot_search_deals_by_stage_and_amount() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "hubspot_search_deals",
            json!({"filters": [{"property": "dealstage", "operator": "in", "values": ["closedwon", "contractsent"]},
                               {"property": "amount", "operator": "gte", "value": "10000"}],
                   "sort_by": "closedate", "limit": 10}),
        )
        .await;
    let b = body(&fake.last());
    assert_eq!(fake.last().path, "/crm/v3/objects/deals/search");
    assert_eq!(
        b["filterGroups"],
        json!([{"filters": [{"propertyName": "dealstage", "operator": "IN", "values": ["closedwon", "contractsent"]},
                            {"propertyName": "amount", "operator": "GTE", "value": "10000"}]}])
    );
    assert_eq!(b["sorts"], json!([{"propertyName": "closedate", "direction": "DESCENDING"}]));
    assert_eq!(
        b["properties"],
        json!(["dealname", "amount", "deal_currency_code", "dealstage", "pipeline", "closedate", "hubspot_owner_id"])
    );
    assert_eq!(r["deals"][0]["dealname"], "Analytical Engines — 50 seats");
    assert_eq!(r["deals"][0]["amount"], "25000");
    assert_eq!(r["total"], 1);
}

#[tokio::test]
async fn hubspot_get_contact_by_id_or_email_with_associations() {
    let (t, fake) = setup().await;
    let r = t.ok("hubspot_get_contact", json!({"contact_id": "151", "properties": ["city"]})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/crm/v3/objects/contacts/151"));
    assert_eq!(
        req.q("properties"),
        Some("email,firstname,lastname,phone,company,jobtitle,lifecyclestage,hs_lead_status,hubspot_owner_id,city")
    );
    assert_eq!(req.q("associations"), Some("companies,deals"));
    assert_eq!(req.q("idProperty"), None);
    assert_eq!(r["email"], "ada@example.com");
    assert_eq!(r["city"], "London");
    assert_eq!(r["company_ids"], json!(["9001"]), "the labelled and unlabeled association are one company");
    assert_eq!(r["deal_ids"], json!(["7001"]));
    assert!(r.get("hs_lead_status").is_none(), "empty properties are dropped");

    let by_email =
        t.ok("hubspot_get_contact", json!({"email": "ada@example.com", "include_associations": false})).await;
    let req = fake.last();
    assert_eq!(req.path, "/crm/v3/objects/contacts/ada%40example.com");
    assert_eq!(req.q("idProperty"), Some("email"));
    assert_eq!(req.q("associations"), None);
    assert_eq!(by_email["id"], "151");

    let missing = t.err("hubspot_get_contact", json!({"contact_id": "999"})).await;
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["message"], "hubspot answered 404: resource not found (OBJECT_NOT_FOUND)");
    let neither = t.err("hubspot_get_contact", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    let both = t.err("hubspot_get_contact", json!({"contact_id": "151", "email": "ada@example.com"})).await;
    assert!(both["message"].as_str().unwrap().contains("either contact_id or email"));
}

#[tokio::test]
async fn hubspot_create_contact_with_associations_and_conflict() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "hubspot_create_contact",
            json!({"email": "katherine@nasa.example", "firstname": "Katherine", "lastname": "Johnson", "lifecyclestage": "lead",
                   "properties": {"city": "Hampton", "hs_lead_status": null}, "company_ids": ["9001"], "deal_ids": ["7001"]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/crm/v3/objects/contacts"));
    assert_eq!(
        body(&req),
        json!({
            "properties": {"email": "katherine@nasa.example", "firstname": "Katherine", "lastname": "Johnson", "lifecyclestage": "lead",
                           "city": "Hampton", "hs_lead_status": ""},
            "associations": [
                {"to": {"id": "9001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 279}]},
                {"to": {"id": "7001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 4}]}
            ]
        })
    );
    assert_eq!(
        r,
        json!({"id": "1201", "email": "katherine@nasa.example", "firstname": "Katherine", "lastname": "Johnson", "lifecyclestage": "lead",
               "city": "Hampton", "created_at": "2026-02-01T12:00:00.000Z", "updated_at": "2026-02-01T12:00:00.000Z"})
    );
    let dup = t.err("hubspot_create_contact", json!({"email": "ada@example.com"})).await;
    assert_eq!(dup["status"], 409);
    assert_eq!(dup["message"], "hubspot answered 409: Contact already exists. Existing ID: 151 (CONFLICT)");
}

#[tokio::test]
async fn hubspot_update_contact_by_email_converts_values() {
    let (t, fake) = setup().await;
    let r = t
        .ok("hubspot_update_contact", json!({"email": "grace@navy.example", "properties": {"lifecyclestage": "customer", "phone": 5550100, "city": null}}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", "/crm/v3/objects/contacts/grace%40navy.example"));
    assert_eq!(req.q("idProperty"), Some("email"));
    assert_eq!(body(&req), json!({"properties": {"lifecyclestage": "customer", "phone": "5550100", "city": ""}}));
    assert_eq!(r["id"], "152");
    assert_eq!(r["lifecyclestage"], "customer");
    assert_eq!(r["updated_at"], "2026-02-02T00:00:00.000Z");

    let by_id =
        t.ok("hubspot_update_contact", json!({"contact_id": "153", "properties": {"jobtitle": "Mathematician"}})).await;
    assert_eq!(fake.last().path, "/crm/v3/objects/contacts/153");
    assert_eq!(fake.last().q("idProperty"), None);
    assert_eq!(by_id["jobtitle"], "Mathematician");

    let unknown = t
        .err("hubspot_update_contact", json!({"contact_id": "153", "properties": {"favourite_colour": "green"}}))
        .await;
    assert_eq!(unknown["status"], 400);
    assert!(
        unknown["message"].as_str().unwrap().contains("Property \\\"favourite_colour\\\" does not exist"),
        "{unknown}"
    );
    let empty = t.err("hubspot_update_contact", json!({"contact_id": "153", "properties": {}})).await;
    assert_eq!(empty["problems"][0]["path"], "/properties");
    let nested =
        t.err("hubspot_update_contact", json!({"contact_id": "153", "properties": {"city": {"name": "x"}}})).await;
    assert_eq!(nested["problems"][0]["path"], "/properties/city");
}

#[tokio::test]
async fn hubspot_create_and_update_deals() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "hubspot_create_deal",
            json!({"dealname": "Navy — pilot", "amount": 12500.5, "closedate": "2026-06-30", "hubspot_owner_id": "88001",
                   "contact_ids": ["152"], "company_ids": ["9001"]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/crm/v3/objects/deals"));
    assert_eq!(
        body(&req),
        json!({
            "properties": {"dealname": "Navy — pilot", "pipeline": "default", "dealstage": "appointmentscheduled", "amount": "12500.5",
                           "closedate": "2026-06-30T00:00:00.000Z", "hubspot_owner_id": "88001"},
            "associations": [
                {"to": {"id": "152"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 3}]},
                {"to": {"id": "9001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 341}]}
            ]
        })
    );
    assert_eq!(r["id"], "7002");
    assert_eq!(r["dealstage"], "appointmentscheduled");
    assert_eq!(r["amount"], "12500.5");

    let whole =
        t.ok("hubspot_create_deal", json!({"dealname": "Round", "amount": 3000, "dealstage": "qualifiedtobuy"})).await;
    assert_eq!(body(&fake.last())["properties"]["amount"], "3000");
    assert!(body(&fake.last()).get("associations").is_none());
    assert_eq!(whole["dealstage"], "qualifiedtobuy");

    let stage = t.err("hubspot_create_deal", json!({"dealname": "X", "pipeline": "8812345"})).await;
    assert_eq!(stage["problems"][0]["path"], "/dealstage");
    let invalid = t.err("hubspot_create_deal", json!({"dealname": "X", "dealstage": "nonsense"})).await;
    assert!(
        invalid["message"].as_str().unwrap().contains("nonsense is not a valid stage of pipeline default"),
        "{invalid}"
    );
    let date = t.err("hubspot_create_deal", json!({"dealname": "X", "closedate": "30/06/2026"})).await;
    assert_eq!(date["problems"][0]["path"], "/closedate");

    let moved = t
        .ok("hubspot_update_deal", json!({"deal_id": "7001", "properties": {"dealstage": "closedlost", "amount": 0, "closedate": "2026-02-01"}}))
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PATCH", "/crm/v3/objects/deals/7001"));
    assert_eq!(
        body(&req),
        json!({"properties": {"dealstage": "closedlost", "amount": "0", "closedate": "2026-02-01T00:00:00.000Z"}})
    );
    assert_eq!(moved["dealstage"], "closedlost");
    let gone = t.err("hubspot_update_deal", json!({"deal_id": "404404", "properties": {"amount": 1}})).await;
    assert_eq!(gone["status"], 404);
}

#[tokio::test]
async fn hubspot_create_note_on_a_deal() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "hubspot_create_note",
            json!({"body": "Call with Ada:\n- price < budget & timeline OK", "object_type": "deal", "object_id": "7001",
                   "timestamp": "2026-03-02T15:30:00Z", "owner_id": "88001"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/crm/v3/objects/notes"));
    assert_eq!(
        body(&req),
        json!({
            "properties": {"hs_note_body": "Call with Ada:<br>- price &lt; budget &amp; timeline OK", "hs_timestamp": "2026-03-02T15:30:00Z",
                           "hubspot_owner_id": "88001"},
            "associations": [{"to": {"id": "7001"}, "types": [{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": 214}]}]
        })
    );
    assert_eq!(
        r,
        json!({"id": "5501", "attached_to": {"object_type": "deal", "object_id": "7001"}, "timestamp": "2026-03-02T15:30:00Z",
               "body": "Call with Ada:\n- price < budget & timeline OK", "owner_id": "88001", "created_at": "2026-02-01T12:00:00.000Z"})
    );

    t.ok("hubspot_create_note", json!({"body": "Met at the conference", "object_type": "contact", "object_id": "151"}))
        .await;
    let b = body(&fake.last());
    assert_eq!(b["associations"][0]["types"][0]["associationTypeId"], 202);
    let ts = b["properties"]["hs_timestamp"].as_str().unwrap();
    assert!(ts.len() == 24 && ts.starts_with("20") && ts.ends_with('Z'), "defaults to now: {ts}");
    t.ok("hubspot_create_note", json!({"body": "Renewal coming", "object_type": "company", "object_id": "9001"})).await;
    assert_eq!(body(&fake.last())["associations"][0]["types"][0]["associationTypeId"], 190);
}

#[tokio::test]
async fn hubspot_rejected_token_rate_limit_and_identity() {
    let (t, fake) = setup().await;
    let wrong = app_with(&[
        ("WORKBENCH_HUBSPOT_BASE_URL", fake.url.clone()),
        ("WORKBENCH_HUBSPOT_TOKEN", "pat-na1-revoked".into()),
    ]);
    let e = wrong.err("hubspot_search_deals", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let integration = &plugins::hubspot::INTEGRATION;
    let connection = |token: &str| {
        let fields = HashMap::from([("token".to_string(), Secret::new(token.to_string()))]);
        workbench::auth::from_fields(integration, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, integration, connection(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("portal 62515 (app.hubspot.com)"));
    assert_eq!(fake.last().path, "/account-info/v3/details");
    let bad = workbench::send::verify_identity(&t.app, integration, connection("pat-na1-revoked")).await.unwrap_err();
    assert!(
        bad.to_string().contains("HubSpot CRM rejected this credential: Authentication credentials not found"),
        "{bad}"
    );

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let rl = t.err("hubspot_search_contacts", json!({"query": "slow"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn hubspot_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("move the deal to closed won", "hubspot_update_deal"),
        ("log call notes on a crm contact", "hubspot_create_note"),
        ("search companies in hubspot by domain", "hubspot_search_companies"),
        ("which deals in the pipeline close this month", "hubspot_search_deals"),
        ("add a new lead to the crm", "hubspot_create_contact"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
