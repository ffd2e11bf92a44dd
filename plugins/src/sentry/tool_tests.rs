//! Sentry tools on `MockUpstream`: the exact request of reads and writes (the organization from
//! the argument or the connection, as one encoded segment; short ids looked up before a write;
//! Link-header cursors) and the issue as an agent reads it.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn issue() -> Value {
    json!({"id": "1170820242", "shortId": "BACKEND-1Z", "title": "ZeroDivisionError: division by zero",
        "culprit": "app.views.divide", "level": "error", "status": "unresolved", "substatus": "ongoing", "priority": "high",
        "project": {"id": "4509", "slug": "backend", "name": "Backend"}, "count": "42", "userCount": 7,
        "firstSeen": "2026-01-01T10:00:00.000000Z", "lastSeen": "2026-01-02T10:00:00.000000Z",
        "assignedTo": {"type": "team", "id": "3", "name": "payments"}, "isUnhandled": true,
        "permalink": "https://acme.sentry.io/issues/1170820242/", "metadata": {"value": "division by zero"}})
}

const SHAPED: &str = r#"{"id": "1170820242", "short_id": "BACKEND-1Z", "title": "ZeroDivisionError: division by zero",
    "culprit": "app.views.divide", "level": "error", "status": "unresolved", "substatus": "ongoing", "priority": "high",
    "project": "backend", "events": 42, "users": 7, "first_seen": "2026-01-01T10:00:00.000000Z",
    "last_seen": "2026-01-02T10:00:00.000000Z", "assigned_to": "team:payments", "is_unhandled": true,
    "url": "https://acme.sentry.io/issues/1170820242/"}"#;

/// search_issues takes the connection's organization, sends Sentry's parameters and reads the
/// next cursor from the Link header only when it says results="true".
#[test]
fn search_issues_uses_the_connections_organization_and_the_link_cursor() {
    let link = r#"<https://sentry.io/api/0/organizations/acme/issues/?cursor=0:0:1>; rel="previous"; results="false"; cursor="0:0:1", <https://sentry.io/api/0/organizations/acme/issues/?cursor=0:25:0>; rel="next"; results="true"; cursor="0:25:0""#;
    let (out, reqs) = MockUpstream::new().with_field("organization", "acme").json_with_headers(json!([issue()]), &[("link", link)]).ok(
        &SEARCH_ISSUES,
        json!({"query": "is:unresolved", "project_ids": ["4509"], "environments": ["production"], "stats_period": "14d"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/issues/", "body": null, "query": [["query", "is:unresolved"],
            ["project", "4509"], ["environment", "production"], ["statsPeriod", "14d"], ["limit", "25"]]})
    );
    let shaped: Value = serde_json::from_str(SHAPED).unwrap();
    assert_eq!(out, json!({"query": "is:unresolved", "issues": [shaped], "next_cursor": "0:25:0"}));
}

/// No organization anywhere is an argument error; a project slug where an id belongs is refused;
/// an organization is one segment.
#[test]
fn search_issues_checks_the_organization_and_project_ids() {
    let (r, reqs) = MockUpstream::new().call(&SEARCH_ISSUES, json!({"query": "x"}));
    assert!(message(&r.unwrap_err()).contains("no default organization"));
    assert!(reqs.is_empty());
    let (r, reqs) = MockUpstream::new()
        .call(&SEARCH_ISSUES, json!({"query": "x", "organization": "acme", "project_ids": ["backend"]}));
    assert!(message(&r.unwrap_err()).contains("is not numeric"));
    assert!(reqs.is_empty());
    let (out, reqs) = MockUpstream::new()
        .json(json!({"detail": "odd"}))
        .ok(&SEARCH_ISSUES, json!({"query": "x", "organization": "../../users"}));
    assert_eq!(reqs[0].path, "/api/0/organizations/..%2F..%2Fusers/issues/");
    assert_eq!(out, json!({"query": "x", "issues": []}));
}

/// update_issue with a short id: look it up, then PUT the change to the numeric id.
#[test]
fn update_issue_resolves_a_short_id_then_puts() {
    let mut resolved = issue();
    resolved["status"] = json!("resolved");
    resolved["statusDetails"] = json!({"inRelease": "backend@2.1.0"});
    let (out, reqs) = MockUpstream::new()
        .with_field("organization", "acme")
        .json(json!([issue()]))
        .json(resolved)
        .ok(&UPDATE_ISSUE, json!({"issue_id": "backend-1z", "status": "resolved", "in_release": "backend@2.1.0"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/issues/", "body": null,
               "query": [["query", "backend-1z"], ["shortIdLookup", "1"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PUT", "path": "/api/0/organizations/acme/issues/1170820242/", "query": [],
               "body": {"status": "resolved", "statusDetails": {"inRelease": "backend@2.1.0"}}})
    );
    assert_eq!((out["status"].clone(), out["updated"].clone()), (json!("resolved"), json!(true)));
    assert_eq!(out["status_details"], json!({"inRelease": "backend@2.1.0"}));
    // A short id nobody has is a 404; an id with a slash is refused before any lookup.
    let (r, _) = MockUpstream::new()
        .json(json!([]))
        .call(&UPDATE_ISSUE, json!({"organization": "acme", "issue_id": "NOPE-1", "status": "resolved"}));
    assert!(matches!(r, Err(ToolError::Upstream { status: 404, .. })));
    let (r, reqs) = MockUpstream::new()
        .call(&UPDATE_ISSUE, json!({"organization": "acme", "issue_id": "1/../2", "status": "resolved"}));
    assert!(message(&r.unwrap_err()).contains("neither a numeric issue id"));
    assert!(reqs.is_empty());
}

/// get_issue: a numeric id needs no lookup; the 24-hour stats are summed; metadata names the error.
#[test]
fn get_issue_sums_the_last_day() {
    let mut detail = issue();
    detail["stats"] = json!({"24h": [[1767225600, 3], [1767229200, 5]]});
    detail["metadata"] = json!({"type": "ZeroDivisionError", "value": "division by zero", "filename": "app/views.py", "function": "divide"});
    detail["platform"] = json!("python");
    detail["firstRelease"] = json!({"version": "backend@2.0.0"});
    let (out, reqs) =
        MockUpstream::new().json(detail).ok(&GET_ISSUE, json!({"organization": "acme", "issue_id": "1170820242"}));
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/issues/1170820242/", "query": [], "body": null})
    );
    assert_eq!(out["events_last_24h"], 8);
    assert_eq!((out["error_type"].clone(), out["in_function"].clone()), (json!("ZeroDivisionError"), json!("divide")));
    assert_eq!(out["first_release"], "backend@2.0.0");
    // Stats of the wrong shape are left out, not a panic.
    let mut odd = issue();
    odd["stats"] = json!({"24h": "many"});
    let (out, _) = MockUpstream::new().json(odd).ok(&GET_ISSUE, json!({"organization": "acme", "issue_id": "1"}));
    assert!(out.get("events_last_24h").is_none());
}

#[test]
fn list_projects_shapes_teams() {
    let body = json!([{"id": "4509", "slug": "backend", "name": "Backend", "platform": "python", "teams": [{"id": "3", "slug": "payments"}],
        "firstEvent": "2025-06-01T00:00:00Z", "dateCreated": "2025-05-01T00:00:00Z", "isMember": true, "features": ["x"]}]);
    let (out, reqs) = MockUpstream::new().json(body).ok(&LIST_PROJECTS, json!({"organization": "acme"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/projects/", "query": [], "body": null})
    );
    assert_eq!(
        out,
        json!({"projects": [{"slug": "backend", "id": "4509", "name": "Backend", "platform": "python", "teams": ["payments"],
            "first_event": "2025-06-01T00:00:00Z", "created": "2025-05-01T00:00:00Z", "is_member": true}]})
    );
}

/// list_organizations: the user's organizations with their URLs, paged by the Link cursor.
#[test]
fn list_organizations_reads_the_link_cursor() {
    let link = r#"<https://sentry.io/api/0/organizations/?cursor=100:0:1>; rel="previous"; results="false"; cursor="100:0:1", <https://sentry.io/api/0/organizations/?cursor=100:1:0>; rel="next"; results="true"; cursor="100:1:0""#;
    let orgs = json!([{"id": "2", "slug": "acme", "name": "Acme", "dateCreated": "2024-05-01T10:00:00.000000Z",
        "status": {"id": "active", "name": "active"}, "isEarlyAdopter": false,
        "links": {"organizationUrl": "https://acme.sentry.io", "regionUrl": "https://de.sentry.io"}}]);
    let (out, reqs) = MockUpstream::new()
        .json_with_headers(orgs, &[("link", link)])
        .ok(&LIST_ORGANIZATIONS, json!({"cursor": "100:0:0"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/", "body": null, "query": [["cursor", "100:0:0"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "100:1:0", "organizations": [{"slug": "acme", "name": "Acme", "id": "2", "status": "active",
            "created": "2024-05-01T10:00:00.000000Z", "url": "https://acme.sentry.io", "region_url": "https://de.sentry.io"}]})
    );
}

/// get_event: a short id is looked up to the numeric issue id, then the event read; an event id
/// that is none of Sentry's is refused before any request.
#[test]
fn get_event_looks_the_short_id_up() {
    let event = json!({"id": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "eventID": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "groupID": "1170820242",
        "title": "ZeroDivisionError: division by zero", "message": "", "platform": "python", "dateCreated": "2026-01-02T10:00:00Z",
        "tags": [{"key": "environment", "value": "production"}, {"key": "release", "value": "backend@2.1.0"}],
        "entries": [], "contexts": {}, "user": {"id": "42", "email": "ann@acme.example"}});
    let (out, reqs) = MockUpstream::new()
        .with_field("organization", "acme")
        .json(json!([issue()]))
        .json(event)
        .ok(&GET_EVENT, json!({"issue_id": "BACKEND-1Z", "environment": "production"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/issues/", "body": null, "query": [["query", "BACKEND-1Z"], ["shortIdLookup", "1"]]})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/issues/1170820242/events/latest/", "body": null,
               "query": [["environment", "production"]]})
    );
    assert_eq!(
        out,
        json!({"issue_id": "1170820242", "event_id": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "title": "ZeroDivisionError: division by zero",
            "date": "2026-01-02T10:00:00Z", "platform": "python", "environment": "production",
            "tags": {"environment": "production", "release": "backend@2.1.0"}, "user": {"id": "42", "email": "ann@acme.example"}})
    );
    let (r, reqs) = MockUpstream::new()
        .with_field("organization", "acme")
        .call(&GET_EVENT, json!({"issue_id": "1170820242", "event_id": "../../members"}));
    assert!(message(&r.unwrap_err()).contains("is not latest, oldest, recommended or a 32-character event id"));
    assert!(reqs.is_empty());
}

/// list_releases: filters as Sentry's parameters; the release shaped with its last deploy and
/// authors.
#[test]
fn list_releases_filters_and_shapes() {
    let releases = json!([{"version": "backend@2.1.0", "shortVersion": "2.1.0", "dateCreated": "2026-01-01T09:00:00Z",
        "dateReleased": "2026-01-01T10:00:00Z", "newGroups": 3, "commitCount": 12, "deployCount": 1,
        "lastDeploy": {"id": "5", "environment": "production", "dateFinished": "2026-01-01T10:05:00Z", "name": null},
        "authors": [{"name": "Ann Lee", "email": "ann@acme.example"}, {"email": "bob@acme.example"}],
        "projects": [{"id": 4509, "slug": "backend", "name": "Backend"}],
        "firstEvent": "2026-01-01T10:06:00Z", "lastEvent": "2026-01-02T10:00:00Z"}]);
    let (out, reqs) = MockUpstream::new()
        .with_field("organization", "acme")
        .json(releases)
        .ok(&LIST_RELEASES, json!({"project_id": "4509", "query": "2.1", "limit": 5}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/api/0/organizations/acme/releases/", "body": null,
               "query": [["project", "4509"], ["query", "2.1"], ["per_page", "5"]]})
    );
    assert_eq!(
        out,
        json!({"releases": [{"version": "backend@2.1.0", "short_version": "2.1.0", "created": "2026-01-01T09:00:00Z",
            "released": "2026-01-01T10:00:00Z", "new_issues": 3, "commits": 12, "deploys": 1,
            "last_deploy": {"environment": "production", "finished": "2026-01-01T10:05:00Z"},
            "authors": ["Ann Lee", "bob@acme.example"], "projects": ["backend"],
            "first_event": "2026-01-01T10:06:00Z", "last_event": "2026-01-02T10:00:00Z"}]})
    );
}
