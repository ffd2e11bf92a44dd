//! PagerDuty tools on `MockUpstream`: the exact request of reads and writes (the v2 Accept
//! header, bracketed list parameters, offset paging, the `From` header on writes, ids checked
//! before they reach a path) and the incident as an agent reads it.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, header, message, sent};

fn incident() -> Value {
    json!({"id": "PT4KHLK", "type": "incident", "incident_number": 1234, "title": "The server is on fire.",
        "status": "triggered", "urgency": "high", "priority": {"id": "P1", "summary": "P1"},
        "service": {"id": "PIJ90N7", "type": "service_reference", "summary": "My Mail Service"},
        "assignments": [{"at": "2026-01-01T10:00:00Z", "assignee": {"id": "PXPGF42", "type": "user_reference", "summary": "Earline Greenholt"}}],
        "acknowledgements": [], "escalation_policy": {"id": "PT20YPA", "summary": "Another Escalation Policy"},
        "created_at": "2026-01-01T10:00:00Z", "last_status_change_at": "2026-01-01T10:00:00Z",
        "alert_counts": {"all": 2, "triggered": 1, "resolved": 1}, "incident_key": "baf7cf21b1da41b4b0db2e6ec7e3b1a5",
        "html_url": "https://subdomain.pagerduty.com/incidents/PT4KHLK"})
}

const SHAPED: &str = r#"{"id": "PT4KHLK", "number": 1234, "title": "The server is on fire.", "status": "triggered",
    "urgency": "high", "priority": "P1", "service": "My Mail Service", "service_id": "PIJ90N7",
    "assigned_to": ["Earline Greenholt"], "escalation_policy": "Another Escalation Policy",
    "created": "2026-01-01T10:00:00Z", "last_status_change": "2026-01-01T10:00:00Z", "alerts": 2,
    "incident_key": "baf7cf21b1da41b4b0db2e6ec7e3b1a5", "url": "https://subdomain.pagerduty.com/incidents/PT4KHLK"}"#;

#[test]
fn list_incidents_sends_bracketed_filters_and_pages_by_offset() {
    let (out, reqs) = MockUpstream::new().json(json!({"incidents": [incident()], "limit": 1, "offset": 0, "more": true})).ok(
        &LIST_INCIDENTS,
        json!({"statuses": ["triggered", "acknowledged"], "service_ids": ["PIJ90N7"], "since": "2026-01-01T00:00:00Z", "limit": 1}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/incidents", "body": null, "query": [["statuses[]", "triggered"], ["statuses[]", "acknowledged"],
            ["service_ids[]", "PIJ90N7"], ["since", "2026-01-01T00:00:00Z"], ["sort_by", "created_at:desc"], ["limit", "1"], ["offset", "0"]]})
    );
    assert_eq!(header(&reqs[0], "accept"), Some(ACCEPT));
    let shaped: Value = serde_json::from_str(SHAPED).unwrap();
    assert_eq!(out, json!({"next_cursor": "1", "incidents": [shaped]}));
    let (r, reqs) = MockUpstream::new().call(&LIST_INCIDENTS, json!({"cursor": "next"}));
    assert!(message(&r.unwrap_err()).contains("not one this tool issued"));
    assert!(reqs.is_empty());
}

/// create_incident: the connection's login email rides as `From`; the body is PagerDuty's
/// incident object with references.
#[test]
fn create_incident_sends_from_and_the_incident() {
    let (out, reqs) = MockUpstream::new().with_field("email", " oncall@acme.example ").json(json!({"incident": incident()})).ok(
        &CREATE_INCIDENT,
        json!({"title": "The server is on fire.", "service_id": "PIJ90N7", "urgency": "high", "details": "Smoke seen", "assignee_ids": ["PXPGF42"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/incidents", "query": [], "body": {"incident": {"type": "incident",
            "title": "The server is on fire.", "service": {"id": "PIJ90N7", "type": "service_reference"}, "urgency": "high",
            "body": {"type": "incident_body", "details": "Smoke seen"},
            "assignments": [{"assignee": {"id": "PXPGF42", "type": "user_reference"}}]}}})
    );
    assert_eq!(header(&reqs[0], "from"), Some("oncall@acme.example"));
    assert_eq!(out, serde_json::from_str::<Value>(SHAPED).unwrap());
}

/// Without a login email a 400 says what to fix; both an escalation policy and assignees is
/// refused unsent.
#[test]
fn create_incident_explains_a_missing_email_and_refuses_both_targets() {
    let (r, reqs) = MockUpstream::new()
        .error(ToolError::Upstream {
            status: 400,
            message: "You must specify a user's email address in the \"From\" header".into(),
            retry_after: None,
        })
        .call(&CREATE_INCIDENT, json!({"title": "t", "service_id": "PIJ90N7"}));
    assert!(message(&r.unwrap_err()).contains("reconnect pagerduty and fill in the email"));
    assert!(header(&reqs[0], "from").is_none());
    let (r, reqs) = MockUpstream::new().call(
        &CREATE_INCIDENT,
        json!({"title": "t", "service_id": "S", "escalation_policy_id": "E", "assignee_ids": ["U"]}),
    );
    assert!(message(&r.unwrap_err()).contains("not both"));
    assert!(reqs.is_empty());
}

#[test]
fn update_incident_puts_a_reference_and_checks_the_id() {
    let (_, reqs) = MockUpstream::new()
        .json(json!({"incident": incident()}))
        .ok(&UPDATE_INCIDENT, json!({"incident_id": "PT4KHLK", "status": "resolved", "resolution": "Fire out"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "PUT", "path": "/incidents/PT4KHLK", "query": [],
               "body": {"incident": {"type": "incident_reference", "status": "resolved", "resolution": "Fire out"}}})
    );
    for (args, why) in [
        (json!({"incident_id": "../services", "status": "resolved"}), "is not a PagerDuty id"),
        (json!({"incident_id": "PT4KHLK"}), "nothing to change"),
        (json!({"incident_id": "PT4KHLK", "resolution": "x"}), "goes with status resolved"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&UPDATE_INCIDENT, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

/// A write answer without the incident object shapes to nothing, not a panic.
#[test]
fn create_note_survives_an_answer_without_the_note() {
    let (out, reqs) =
        MockUpstream::new().json(json!({})).ok(&CREATE_NOTE, json!({"incident_id": "PT4KHLK", "content": "Paged DBA"}));
    assert_eq!(sent(&reqs[0])["body"], json!({"note": {"content": "Paged DBA"}}));
    assert_eq!(out, json!({"incident_id": "PT4KHLK"}));
}

/// get_incident by number: the log entries are read by the id PagerDuty returned, not by the
/// number given; the timeline names who did what.
#[test]
fn get_incident_reads_the_timeline_by_the_real_id() {
    let mut detail = incident();
    detail["description"] = json!("Smoke seen in rack 4");
    let log = json!({"log_entries": [
        {"type": "trigger_log_entry", "created_at": "2026-01-01T10:00:00Z", "summary": "Triggered through the API",
         "agent": {"summary": "Nagios"}, "channel": {"type": "api"}},
        {"type": "annotate_log_entry", "created_at": "2026-01-01T10:05:00Z", "summary": "Note added",
         "agent": {"summary": "Earline Greenholt"}, "channel": {"type": "note", "summary": "Paged DBA"}}], "more": true});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"incident": detail}))
        .json(log)
        .ok(&GET_INCIDENT, json!({"incident_id": "1234", "log_limit": 2}));
    assert_eq!(sent(&reqs[0]), json!({"method": "GET", "path": "/incidents/1234", "query": [], "body": null}));
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/incidents/PT4KHLK/log_entries", "body": null, "query": [["is_overview", "true"], ["limit", "2"]]})
    );
    assert_eq!(out["description"], "Smoke seen in rack 4");
    assert_eq!(
        out["timeline"],
        json!([{"time": "2026-01-01T10:00:00Z", "type": "trigger", "summary": "Triggered through the API", "by": "Nagios", "channel": "api"},
               {"time": "2026-01-01T10:05:00Z", "type": "annotate", "summary": "Note added", "by": "Earline Greenholt", "channel": "note", "note": "Paged DBA"}])
    );
    assert_eq!(out["timeline_truncated"], true);
}

#[test]
fn list_oncalls_names_people_and_levels() {
    let body = json!({"oncalls": [{"user": {"id": "PXPGF42", "summary": "Earline Greenholt"},
        "escalation_policy": {"id": "PT20YPA", "summary": "Engineering"}, "escalation_level": 1,
        "schedule": {"id": "PI7DH85", "summary": "Daily rotation"}, "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"},
        {"user": {"id": "P1", "summary": "Boss"}, "escalation_policy": {"id": "PT20YPA", "summary": "Engineering"}, "escalation_level": 2,
         "schedule": null, "start": null, "end": null}], "more": false});
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_ONCALLS, json!({"escalation_policy_ids": ["PT20YPA"]}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/oncalls", "body": null, "query": [["escalation_policy_ids[]", "PT20YPA"], ["earliest", "true"],
            ["limit", "25"], ["offset", "0"]]})
    );
    assert_eq!(out["oncalls"][0]["schedule"], "Daily rotation");
    assert_eq!(out["oncalls"][1]["always_on_call"], true);
    assert!(out.get("next_cursor").is_none());
}

/// list_services: the name filter and team ids as `team_ids[]`, offset paging while PagerDuty says
/// there is `more`; each service with its escalation policy and teams.
#[test]
fn list_services_filters_by_team_and_pages_by_offset() {
    let svc = json!({"id": "PIJ90N7", "type": "service", "name": "My Mail Service", "description": "Outbound mail", "status": "active",
        "escalation_policy": {"id": "PT20YPA", "type": "escalation_policy_reference", "summary": "Another Escalation Policy"},
        "teams": [{"id": "PQ9K7I8", "type": "team_reference", "summary": "Engineering"}], "last_incident_timestamp": "2026-01-01T10:00:00Z",
        "html_url": "https://subdomain.pagerduty.com/service-directory/PIJ90N7"});
    let (out, reqs) = MockUpstream::new()
        .json(json!({"services": [svc], "limit": 1, "offset": 4, "more": true}))
        .ok(&LIST_SERVICES, json!({"query": "mail", "team_ids": ["PQ9K7I8", "PX1"], "limit": 1, "cursor": "4"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/services", "body": null, "query": [["query", "mail"], ["team_ids[]", "PQ9K7I8"],
            ["team_ids[]", "PX1"], ["limit", "1"], ["offset", "4"]]})
    );
    assert_eq!(header(&reqs[0], "accept"), Some(ACCEPT));
    assert_eq!(
        out,
        json!({"next_cursor": "5", "services": [{"id": "PIJ90N7", "name": "My Mail Service", "description": "Outbound mail",
            "status": "active", "escalation_policy": "Another Escalation Policy", "escalation_policy_id": "PT20YPA", "teams": ["Engineering"],
            "last_incident": "2026-01-01T10:00:00Z", "url": "https://subdomain.pagerduty.com/service-directory/PIJ90N7"}]})
    );
    let (out, reqs) = MockUpstream::new()
        .json(json!({"services": [{"id": "PX2", "name": "Billing", "description": "", "status": "disabled", "teams": []}], "more": false}))
        .ok(&LIST_SERVICES, json!({}));
    assert_eq!(sent(&reqs[0])["query"], json!([["limit", "25"], ["offset", "0"]]));
    assert_eq!(out, json!({"services": [{"id": "PX2", "name": "Billing", "status": "disabled"}]}));
    let (r, reqs) = MockUpstream::new().call(&LIST_SERVICES, json!({"cursor": "next"}));
    assert!(matches!(r, Err(ToolError::InvalidArguments { .. })), "{r:?}");
    assert!(reqs.is_empty());
}
