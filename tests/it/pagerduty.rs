//! PagerDuty against a fake that checks `Authorization: Token token=…`, the v2 `Accept` header and
//! the `From` header on writes (400 without it, like the real API), pages with `offset`/`more`, and
//! answers `{error: {message, code, errors}}`.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const KEY: &str = "u+Xy7Qm3pLk9sVw2bN4cTz";
const EMAIL: &str = "dana.scully@acme.test";
const ACCEPT: &str = "application/vnd.pagerduty+json;version=2";

fn reference(kind: &str, id: &str, summary: &str) -> Value {
    let plural = match kind {
        "service_reference" => "services",
        "user_reference" => "users",
        "escalation_policy_reference" => "escalation_policies",
        _ => "things",
    };
    json!({"id": id, "type": kind, "summary": summary, "self": format!("https://api.pagerduty.com/{plural}/{id}"),
           "html_url": format!("https://acme.pagerduty.com/{plural}/{id}")})
}

fn incident(id: &str, number: u64, title: &str, status: &str, urgency: &str) -> Value {
    let assignments = if status == "resolved" {
        json!([])
    } else {
        json!([{"at": "2026-11-30T08:55:00Z", "assignee": reference("user_reference", "PXPGF42", "Dana Scully")}])
    };
    let acks = if status == "acknowledged" {
        json!([{"at": "2026-11-30T08:58:00Z", "acknowledger": reference("user_reference", "PXPGF42", "Dana Scully")}])
    } else {
        json!([])
    };
    json!({
        "id": id, "type": "incident", "summary": format!("[#{number}] {title}"), "self": format!("https://api.pagerduty.com/incidents/{id}"),
        "html_url": format!("https://acme.pagerduty.com/incidents/{id}"), "incident_number": number, "title": title,
        "description": title, "created_at": "2026-11-30T08:55:00Z", "updated_at": "2026-11-30T08:58:00Z", "status": status,
        "incident_key": format!("key-{number}"), "service": reference("service_reference", "PIJ90N7", "Checkout API"),
        "assignments": assignments, "assigned_via": "escalation_policy", "acknowledgements": acks,
        "last_status_change_at": "2026-11-30T08:58:00Z", "last_status_change_by": reference("user_reference", "PXPGF42", "Dana Scully"),
        "first_trigger_log_entry": {"id": "Q02JTSNZWHSEKV", "type": "trigger_log_entry_reference", "summary": "Triggered through the API"},
        "escalation_policy": reference("escalation_policy_reference", "PT20YPA", "Checkout escalation"),
        "teams": [], "pending_actions": [], "urgency": urgency, "priority": {"id": "P53ZZH5", "type": "priority", "summary": "P1", "name": "P1"},
        "resolve_reason": null, "alert_counts": {"all": 2, "triggered": 1, "resolved": 1}, "is_mergeable": true,
        "incident_type": {"name": "incident_default"}, "conference_bridge": null, "body": {"type": "incident_body", "details": null}
    })
}

fn all_incidents() -> Vec<Value> {
    vec![
        incident("PT4KHLK", 1234, "Checkout API returning 500s", "triggered", "high"),
        incident("PQ12ABC", 1233, "Disk almost full on db-2", "acknowledged", "low"),
        incident("PZZ9XYZ", 1230, "Login latency above SLO", "triggered", "high"),
    ]
}

fn error(status: u16, message: &str, code: u32, errors: &[&str]) -> Reply {
    let mut e = json!({"message": message, "code": code});
    if !errors.is_empty() {
        e["errors"] = json!(errors);
    }
    Reply::json(status, json!({ "error": e }))
}

fn page(r: &Recorded, key: &str, items: Vec<Value>) -> Reply {
    let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(25);
    let offset: usize = r.q("offset").and_then(|l| l.parse().ok()).unwrap_or(0);
    let slice: Vec<Value> = items.iter().skip(offset).take(limit).cloned().collect();
    Reply::json(
        200,
        json!({ key: slice, "limit": limit, "offset": offset, "total": null, "more": offset + limit < items.len() }),
    )
}

fn all(r: &Recorded, key: &str) -> Vec<String> {
    r.query.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect()
}

fn pagerduty_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return error(400, "Invalid Input Provided", 2001, &["User-Agent missing"]);
    }
    if r.header("authorization") != Some(format!("Token token={KEY}").as_str()) {
        return error(401, "Authentication failed", 2006, &[]);
    }
    if r.header("accept") != Some(ACCEPT) {
        return error(406, "Not Acceptable", 2001, &["Accept must be application/vnd.pagerduty+json;version=2"]);
    }
    let writes = matches!(r.method.as_str(), "POST" | "PUT");
    if writes && r.header("from") != Some(EMAIL) {
        return error(
            400,
            "Invalid Input Provided",
            2001,
            &["A valid From header containing the requester's email address is required for this action."],
        );
    }
    let body: Value = if writes {
        if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
            return error(400, "Invalid Input Provided", 2001, &["Content-Type must be application/json"]);
        }
        serde_json::from_slice(&r.body).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/users/me") => Reply::json(
            200,
            json!({"user": {"id": "PXPGF42", "type": "user", "name": "Dana Scully", "email": EMAIL, "time_zone": "America/New_York",
                            "role": "admin", "html_url": "https://acme.pagerduty.com/users/PXPGF42", "teams": []}}),
        ),
        ("GET", "/incidents") => {
            let statuses = all(r, "statuses[]");
            if statuses.iter().any(|s| !["triggered", "acknowledged", "resolved"].contains(&s.as_str())) {
                return error(400, "Invalid Input Provided", 2001, &["Statuses is invalid."]);
            }
            let urgencies = all(r, "urgencies[]");
            let items: Vec<Value> = all_incidents()
                .into_iter()
                .filter(|i| statuses.is_empty() || statuses.iter().any(|s| i["status"] == s.as_str()))
                .filter(|i| urgencies.is_empty() || urgencies.iter().any(|u| i["urgency"] == u.as_str()))
                .collect();
            page(r, "incidents", items)
        }
        ("GET", "/incidents/PT4KHLK") | ("GET", "/incidents/1234") => {
            Reply::json(200, json!({"incident": all_incidents()[0].clone()}))
        }
        ("GET", "/incidents/PT4KHLK/log_entries") => {
            if r.q("is_overview") != Some("true") {
                return error(400, "Invalid Input Provided", 2001, &["expected is_overview"]);
            }
            Reply::json(
                200,
                json!({"log_entries": [
                    {"id": "R1", "type": "trigger_log_entry", "summary": "Triggered through the API.", "created_at": "2026-11-30T08:55:00Z",
                     "agent": reference("service_reference", "PIJ90N7", "Checkout API"), "channel": {"type": "api"}, "incident": {"id": "PT4KHLK"}},
                    {"id": "R2", "type": "notify_log_entry", "summary": "Notified Dana Scully by phone.", "created_at": "2026-11-30T08:55:30Z",
                     "agent": null, "channel": {"type": "phone"}, "user": reference("user_reference", "PXPGF42", "Dana Scully")},
                    {"id": "R3", "type": "annotate_log_entry", "summary": "Note added", "created_at": "2026-11-30T08:57:00Z",
                     "agent": reference("user_reference", "PXPGF42", "Dana Scully"), "channel": {"type": "note", "summary": "Rolling back 1.4.2"}}
                ], "limit": 25, "offset": 0, "more": false, "total": null}),
            )
        }
        ("POST", "/incidents") => {
            let i = &body["incident"];
            if i["type"] != "incident" || i["title"].as_str().is_none_or(str::is_empty) {
                return error(400, "Invalid Input Provided", 2001, &["Incident title is required."]);
            }
            if i["service"] != json!({"id": "PIJ90N7", "type": "service_reference"}) {
                return error(400, "Invalid Input Provided", 2001, &["Service not found."]);
            }
            if i["incident_key"] == "dup-key" {
                return error(
                    400,
                    "Invalid Input Provided",
                    2001,
                    &["Open incident with key 'dup-key' already exists on this service."],
                );
            }
            let mut created = incident("PNEW001", 1235, i["title"].as_str().unwrap(), "triggered", "high");
            if let Some(u) = i["urgency"].as_str() {
                created["urgency"] = json!(u);
            }
            created["incident_key"] = i["incident_key"].clone();
            Reply::json(201, json!({ "incident": created }))
        }
        ("PUT", "/incidents/PT4KHLK") => {
            let i = &body["incident"];
            if !["incident", "incident_reference"].contains(&i["type"].as_str().unwrap_or("")) {
                return error(400, "Invalid Input Provided", 2001, &["Type is invalid."]);
            }
            if let Some(s) = i["status"].as_str()
                && !["acknowledged", "resolved"].contains(&s)
            {
                return error(400, "Invalid Input Provided", 2001, &["Status is invalid."]);
            }
            let status = i["status"].as_str().unwrap_or("triggered");
            let mut updated = incident("PT4KHLK", 1234, "Checkout API returning 500s", status, "high");
            if let Some(u) = i["urgency"].as_str() {
                updated["urgency"] = json!(u);
            }
            Reply::json(200, json!({ "incident": updated }))
        }
        ("POST", "/incidents/PT4KHLK/notes") => {
            let Some(content) = body["note"]["content"].as_str() else {
                return error(400, "Invalid Input Provided", 2001, &["Content is required."]);
            };
            Reply::json(
                201,
                json!({"note": {"id": "PWL7QXS", "user": reference("user_reference", "PXPGF42", "Dana Scully"),
                                "channel": {"summary": "The PagerDuty website or APIs"}, "content": content, "created_at": "2026-11-30T09:10:00Z"}}),
            )
        }
        ("GET", "/oncalls") => {
            let mk = |user: (&str, &str), level: u64, schedule: Option<(&str, &str)>, start: Value, end: Value| {
                json!({
                    "escalation_policy": reference("escalation_policy_reference", "PT20YPA", "Checkout escalation"),
                    "escalation_level": level,
                    "schedule": schedule.map(|(id, s)| json!({"id": id, "type": "schedule_reference", "summary": s, "html_url": format!("https://acme.pagerduty.com/schedules/{id}")})),
                    "user": reference("user_reference", user.0, user.1),
                    "start": start, "end": end
                })
            };
            let mut items = vec![
                mk(
                    ("PXPGF42", "Dana Scully"),
                    1,
                    Some(("PI7DH85", "Checkout primary")),
                    json!("2026-11-30T00:00:00Z"),
                    json!("2026-12-07T00:00:00Z"),
                ),
                mk(("PAM4FGS", "Fox Mulder"), 2, None, Value::Null, Value::Null),
            ];
            if r.q("earliest") != Some("true") {
                items.push(mk(
                    ("PXPGF42", "Dana Scully"),
                    1,
                    Some(("PI7DH85", "Checkout primary")),
                    json!("2026-12-14T00:00:00Z"),
                    json!("2026-12-21T00:00:00Z"),
                ));
            }
            let policies = all(r, "escalation_policy_ids[]");
            if !policies.is_empty() && !policies.contains(&"PT20YPA".to_string()) {
                items.clear();
            }
            page(r, "oncalls", items)
        }
        ("GET", "/services") => {
            if r.q("query") == Some("flood") {
                return error(429, "Rate Limit Exceeded", 2020, &[]).with_header("retry-after", "120");
            }
            let svc = |id: &str, name: &str, status: &str| {
                json!({"id": id, "type": "service", "summary": name, "name": name, "self": format!("https://api.pagerduty.com/services/{id}"),
                       "html_url": format!("https://acme.pagerduty.com/service-directory/{id}"), "description": format!("{name} in production"),
                       "auto_resolve_timeout": 14400, "acknowledgement_timeout": 600, "created_at": "2024-01-01T10:00:00Z", "status": status,
                       "last_incident_timestamp": "2026-11-30T08:55:00Z", "alert_creation": "create_alerts_and_incidents",
                       "escalation_policy": reference("escalation_policy_reference", "PT20YPA", "Checkout escalation"),
                       "teams": [{"id": "PQ9K7I8", "type": "team_reference", "summary": "Payments"}],
                       "incident_urgency_rule": {"type": "constant", "urgency": "high"}, "integrations": [{"id": "PE1U9CH", "type": "generic_events_api_inbound_integration_reference"}],
                       "support_hours": null, "scheduled_actions": [], "addons": []})
            };
            let items: Vec<Value> = [
                ("PIJ90N7", "Checkout API", "critical"),
                ("PSVC002", "Search", "active"),
                ("PSVC003", "Checkout worker", "active"),
            ]
            .iter()
            .map(|(id, n, s)| svc(id, n, s))
            .filter(|s| {
                r.q("query").is_none_or(|q| s["name"].as_str().unwrap().to_lowercase().contains(&q.to_lowercase()))
            })
            .collect();
            page(r, "services", items)
        }
        _ => error(404, "Not Found", 2100, &[]),
    }
}

async fn pd_app() -> (TestApp, Fake) {
    let fake = Fake::start(pagerduty_api).await;
    let t = app_with(&[
        ("WORKBENCH_PAGERDUTY_BASE_URL", fake.url.clone()),
        ("WORKBENCH_PAGERDUTY_TOKEN", KEY.to_string()),
        ("WORKBENCH_PAGERDUTY_EMAIL", EMAIL.to_string()),
    ]);
    (t, fake)
}

fn headers_ok(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(format!("Token token={KEY}").as_str()));
    assert_eq!(r.header("accept"), Some(ACCEPT));
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[tokio::test]
async fn pagerduty_list_incidents_filters_and_pages_by_offset() {
    let (t, f) = pd_app().await;
    let p1 = t
        .ok(
            "pagerduty_list_incidents",
            json!({"statuses": ["triggered", "acknowledged"], "service_ids": ["PIJ90N7"], "urgencies": ["high", "low"],
                   "user_ids": ["PXPGF42"], "since": "2026-11-01T00:00:00Z", "until": "2026-12-01T00:00:00Z", "limit": 2}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/incidents"));
    headers_ok(&req);
    assert!(req.header("from").is_none(), "reads carry no From");
    assert_eq!(
        req.query,
        pairs(&[
            ("statuses[]", "triggered"),
            ("statuses[]", "acknowledged"),
            ("service_ids[]", "PIJ90N7"),
            ("urgencies[]", "high"),
            ("urgencies[]", "low"),
            ("user_ids[]", "PXPGF42"),
            ("since", "2026-11-01T00:00:00Z"),
            ("until", "2026-12-01T00:00:00Z"),
            ("sort_by", "created_at:desc"),
            ("limit", "2"),
            ("offset", "0"),
        ])
    );
    assert_eq!(
        p1["incidents"][0],
        json!({
            "id": "PT4KHLK", "number": 1234, "title": "Checkout API returning 500s", "status": "triggered", "urgency": "high",
            "priority": "P1", "service": "Checkout API", "service_id": "PIJ90N7", "assigned_to": ["Dana Scully"],
            "escalation_policy": "Checkout escalation", "created": "2026-11-30T08:55:00Z", "last_status_change": "2026-11-30T08:58:00Z",
            "alerts": 2, "incident_key": "key-1234", "url": "https://acme.pagerduty.com/incidents/PT4KHLK"
        })
    );
    assert_eq!(p1["incidents"][1]["acknowledged_by"], json!(["Dana Scully"]));
    assert_eq!(p1["next_cursor"], "2");

    let p2 = t.ok("pagerduty_list_incidents", json!({"limit": 2, "cursor": "2"})).await;
    assert_eq!(f.last().q("offset"), Some("2"));
    assert_eq!(p2["incidents"].as_array().unwrap().len(), 1);
    assert_eq!(p2["incidents"][0]["id"], "PZZ9XYZ");
    assert!(p2.get("next_cursor").is_none(), "more: false ends the pages");

    let raw = t.ok("pagerduty_list_incidents", json!({"include_raw": true})).await;
    let raw_bytes = raw["raw"].to_string().len();
    let mut shaped = raw.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped_bytes = shaped.to_string().len();
    eprintln!("pagerduty_list_incidents: raw {raw_bytes} bytes -> shaped {shaped_bytes} bytes");
    assert!(shaped_bytes * 3 < raw_bytes, "shaped {shaped_bytes} vs raw {raw_bytes}");

    let bad = t.err("pagerduty_list_incidents", json!({"cursor": "page-two"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn pagerduty_get_incident_with_timeline_by_id_or_number() {
    let (t, f) = pd_app().await;
    let i = t.ok("pagerduty_get_incident", json!({"incident_id": "1234"})).await;
    let reqs = f.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!((reqs[0].method.as_str(), reqs[0].path.as_str()), ("GET", "/incidents/1234"));
    assert_eq!(reqs[1].path, "/incidents/PT4KHLK/log_entries", "the timeline uses the real id");
    assert_eq!(reqs[1].q("is_overview"), Some("true"));
    assert_eq!(reqs[1].q("limit"), Some("25"));
    headers_ok(&reqs[1]);
    assert_eq!(i["id"], "PT4KHLK");
    assert_eq!(i["title"], "Checkout API returning 500s");
    assert!(i.get("description").is_none(), "a description equal to the title is not repeated");
    assert_eq!(
        i["timeline"],
        json!([
            {"time": "2026-11-30T08:55:00Z", "type": "trigger", "summary": "Triggered through the API.", "by": "Checkout API", "channel": "api"},
            {"time": "2026-11-30T08:55:30Z", "type": "notify", "summary": "Notified Dana Scully by phone.", "channel": "phone"},
            {"time": "2026-11-30T08:57:00Z", "type": "annotate", "summary": "Note added", "by": "Dana Scully", "channel": "note", "note": "Rolling back 1.4.2"}
        ])
    );

    let plain = t.ok("pagerduty_get_incident", json!({"incident_id": "PT4KHLK", "include_log": false})).await;
    assert_eq!(f.last().path, "/incidents/PT4KHLK");
    assert!(plain.get("timeline").is_none());

    let missing = t.err("pagerduty_get_incident", json!({"incident_id": "PNOPE00"})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
    assert!(missing["message"].as_str().unwrap().contains("Not Found"), "{missing}");
    let bad = t.err("pagerduty_get_incident", json!({"incident_id": "../services"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn pagerduty_create_incident_sends_from_and_the_rest_body() {
    let (t, f) = pd_app().await;
    let r = t
        .ok(
            "pagerduty_create_incident",
            json!({"title": "Checkout down", "service_id": "PIJ90N7", "urgency": "low", "details": "500s since deploy 1.4.2",
                   "assignee_ids": ["PXPGF42"], "incident_key": "checkout-500"}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/incidents"));
    headers_ok(&req);
    assert_eq!(req.header("from"), Some(EMAIL));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        body,
        json!({"incident": {
            "type": "incident", "title": "Checkout down", "service": {"id": "PIJ90N7", "type": "service_reference"},
            "urgency": "low", "body": {"type": "incident_body", "details": "500s since deploy 1.4.2"},
            "assignments": [{"assignee": {"id": "PXPGF42", "type": "user_reference"}}], "incident_key": "checkout-500"
        }})
    );
    assert_eq!(r["id"], "PNEW001");
    assert_eq!(r["number"], 1235);
    assert_eq!(r["urgency"], "low");
    assert_eq!(r["incident_key"], "checkout-500");

    t.ok(
        "pagerduty_create_incident",
        json!({"title": "Search slow", "service_id": "PIJ90N7", "escalation_policy_id": "PT20YPA"}),
    )
    .await;
    let body: Value = serde_json::from_slice(&f.last().body).unwrap();
    assert_eq!(body["incident"]["escalation_policy"], json!({"id": "PT20YPA", "type": "escalation_policy_reference"}));
    assert!(body["incident"].get("assignments").is_none() && body["incident"].get("urgency").is_none());

    // The provider's own words reach the agent.
    let dup = t
        .err("pagerduty_create_incident", json!({"title": "Again", "service_id": "PIJ90N7", "incident_key": "dup-key"}))
        .await;
    assert_eq!(dup["code"], "UPSTREAM_ERROR");
    assert_eq!(dup["status"], 400);
    assert_eq!(
        dup["message"],
        "pagerduty answered 400: Invalid Input Provided: Open incident with key 'dup-key' already exists on this service."
    );

    let before = f.requests().len();
    let both = t
        .err(
            "pagerduty_create_incident",
            json!({"title": "x", "service_id": "PIJ90N7", "escalation_policy_id": "PT20YPA", "assignee_ids": ["PXPGF42"]}),
        )
        .await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    assert_eq!(f.requests().len(), before);
}

#[tokio::test]
async fn pagerduty_update_incident_acknowledges_resolves_and_reassigns() {
    let (t, f) = pd_app().await;
    let ack = t.ok("pagerduty_update_incident", json!({"incident_id": "PT4KHLK", "status": "acknowledged"})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", "/incidents/PT4KHLK"));
    headers_ok(&req);
    assert_eq!(req.header("from"), Some(EMAIL));
    assert_eq!(
        serde_json::from_slice::<Value>(&req.body).unwrap(),
        json!({"incident": {"type": "incident_reference", "status": "acknowledged"}})
    );
    assert_eq!(ack["status"], "acknowledged");
    assert_eq!(ack["acknowledged_by"], json!(["Dana Scully"]));

    let res = t
        .ok(
            "pagerduty_update_incident",
            json!({"incident_id": "PT4KHLK", "status": "resolved", "resolution": "Rolled back 1.4.2"}),
        )
        .await;
    assert_eq!(
        serde_json::from_slice::<Value>(&f.last().body).unwrap(),
        json!({"incident": {"type": "incident_reference", "status": "resolved", "resolution": "Rolled back 1.4.2"}})
    );
    assert_eq!(res["status"], "resolved");
    assert!(res.get("assigned_to").is_none());

    t.ok(
        "pagerduty_update_incident",
        json!({"incident_id": "PT4KHLK", "assignee_ids": ["PAM4FGS"], "urgency": "low", "escalation_level": 2}),
    )
    .await;
    assert_eq!(
        serde_json::from_slice::<Value>(&f.last().body).unwrap(),
        json!({"incident": {"type": "incident_reference", "assignments": [{"assignee": {"id": "PAM4FGS", "type": "user_reference"}}],
                            "urgency": "low", "escalation_level": 2}})
    );

    let nothing = t.err("pagerduty_update_incident", json!({"incident_id": "PT4KHLK"})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
    let loose = t.err("pagerduty_update_incident", json!({"incident_id": "PT4KHLK", "resolution": "x"})).await;
    assert_eq!(loose["problems"][0]["path"], "/resolution");
}

#[tokio::test]
async fn pagerduty_create_note_and_the_missing_from_header() {
    let (t, f) = pd_app().await;
    let n = t.ok("pagerduty_create_note", json!({"incident_id": "PT4KHLK", "content": "Rolling back 1.4.2"})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/incidents/PT4KHLK/notes"));
    headers_ok(&req);
    assert_eq!(req.header("from"), Some(EMAIL));
    assert_eq!(serde_json::from_slice::<Value>(&req.body).unwrap(), json!({"note": {"content": "Rolling back 1.4.2"}}));
    assert_eq!(
        n,
        json!({"id": "PWL7QXS", "incident_id": "PT4KHLK", "content": "Rolling back 1.4.2", "author": "Dana Scully", "created": "2026-11-30T09:10:00Z"})
    );

    // A connection without the login email: the write goes out without From, PagerDuty refuses it,
    // and the agent is told what to fix.
    let no_email =
        app_with(&[("WORKBENCH_PAGERDUTY_BASE_URL", f.url.clone()), ("WORKBENCH_PAGERDUTY_TOKEN", KEY.to_string())]);
    let e = no_email.err("pagerduty_create_note", json!({"incident_id": "PT4KHLK", "content": "hi"})).await;
    assert!(f.last().header("from").is_none());
    assert_eq!(e["status"], 400);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("From header containing the requester's email"), "{msg}");
    assert!(msg.contains("reconnect pagerduty and fill in the email"), "{msg}");
}

#[tokio::test]
async fn pagerduty_list_oncalls_now_by_policy() {
    let (t, f) = pd_app().await;
    let r = t
        .ok("pagerduty_list_oncalls", json!({"escalation_policy_ids": ["PT20YPA"], "schedule_ids": ["PI7DH85"]}))
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/oncalls"));
    headers_ok(&req);
    assert_eq!(
        req.query,
        pairs(&[
            ("schedule_ids[]", "PI7DH85"),
            ("escalation_policy_ids[]", "PT20YPA"),
            ("earliest", "true"),
            ("limit", "25"),
            ("offset", "0")
        ])
    );
    assert_eq!(
        r,
        json!({"oncalls": [
            {"user": "Dana Scully", "user_id": "PXPGF42", "escalation_policy": "Checkout escalation", "escalation_policy_id": "PT20YPA",
             "level": 1, "schedule": "Checkout primary", "start": "2026-11-30T00:00:00Z", "end": "2026-12-07T00:00:00Z"},
            {"user": "Fox Mulder", "user_id": "PAM4FGS", "escalation_policy": "Checkout escalation", "escalation_policy_id": "PT20YPA",
             "level": 2, "always_on_call": true}
        ]})
    );
    let future = t
        .ok(
            "pagerduty_list_oncalls",
            json!({"earliest": false, "since": "2026-12-01T00:00:00Z", "until": "2026-12-31T00:00:00Z"}),
        )
        .await;
    assert_eq!(f.last().q("earliest"), None);
    assert_eq!(f.last().q("since"), Some("2026-12-01T00:00:00Z"));
    assert_eq!(future["oncalls"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn pagerduty_list_services_pages_and_rate_limits() {
    let (t, f) = pd_app().await;
    let r = t.ok("pagerduty_list_services", json!({"query": "checkout", "team_ids": ["PQ9K7I8"], "limit": 1})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/services"));
    headers_ok(&req);
    assert_eq!(req.query, pairs(&[("query", "checkout"), ("team_ids[]", "PQ9K7I8"), ("limit", "1"), ("offset", "0")]));
    assert_eq!(
        r["services"][0],
        json!({"id": "PIJ90N7", "name": "Checkout API", "description": "Checkout API in production", "status": "critical",
               "escalation_policy": "Checkout escalation", "escalation_policy_id": "PT20YPA", "teams": ["Payments"],
               "last_incident": "2026-11-30T08:55:00Z", "url": "https://acme.pagerduty.com/service-directory/PIJ90N7"})
    );
    assert_eq!(r["next_cursor"], "1");
    let r2 = t.ok("pagerduty_list_services", json!({"query": "checkout", "limit": 1, "cursor": "1"})).await;
    assert_eq!(r2["services"][0]["name"], "Checkout worker");
    assert!(r2.get("next_cursor").is_none());

    let rl = t.err("pagerduty_list_services", json!({"query": "flood"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

#[tokio::test]
async fn pagerduty_rejected_key_and_identity() {
    let fake = Fake::start(pagerduty_api).await;
    let wrong = app_with(&[
        ("WORKBENCH_PAGERDUTY_BASE_URL", fake.url.clone()),
        ("WORKBENCH_PAGERDUTY_TOKEN", "y_NbAkKc66ryYTWUXYEu".into()),
        ("WORKBENCH_PAGERDUTY_EMAIL", EMAIL.into()),
    ]);
    let e = wrong.err("pagerduty_list_services", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");
    assert_eq!(
        fake.last().header("authorization"),
        Some("Token token=y_NbAkKc66ryYTWUXYEu"),
        "neither Bearer nor Basic"
    );

    let t = app_with(&[("WORKBENCH_PAGERDUTY_BASE_URL", fake.url.clone())]);
    let conn = |key: &str| {
        let fields: HashMap<String, Secret<String>> = HashMap::from([
            ("token".to_string(), Secret::new(key.to_string())),
            ("email".to_string(), Secret::new(EMAIL.to_string())),
        ]);
        workbench::auth::from_fields(&plugins::pagerduty::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::pagerduty::INTEGRATION, conn(KEY)).await.unwrap();
    assert_eq!(label.as_deref(), Some("Dana Scully <dana.scully@acme.test>"));
    let req = fake.last();
    assert_eq!(req.path, "/users/me");
    assert_eq!(req.header("accept"), Some(ACCEPT));
    let err = workbench::send::verify_identity(&t.app, &plugins::pagerduty::INTEGRATION, conn("bad-key-000000"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("PagerDuty rejected this credential"), "{err}");
}

#[tokio::test]
async fn pagerduty_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("who is on call in pagerduty", "pagerduty_list_oncalls"),
        ("acknowledge the pagerduty incident", "pagerduty_update_incident"),
        ("page someone on pagerduty, checkout is down", "pagerduty_create_incident"),
        ("add a note to the pagerduty incident", "pagerduty_create_note"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
