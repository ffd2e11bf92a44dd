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
