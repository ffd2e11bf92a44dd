//! Sentry against a fake that checks the Bearer token, answers `{detail}` errors, pages through
//! `Link` headers with `cursor` + `results`, resolves short ids and serves the `latest` event alias.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const TOKEN: &str = "sntryu_5f0c8d2e9a7b4c3d1e6f0a9b8c7d6e5f4a3b2c1d0e9f8a7b";

fn issue(id: &str, short_id: &str, title: &str, status: &str) -> Value {
    json!({
        "id": id, "shortId": short_id, "title": title, "culprit": "checkout.views in submit_order",
        "permalink": format!("https://acme.sentry.io/issues/{id}/"), "logger": null, "level": "error",
        "status": status, "statusDetails": {}, "substatus": if status == "unresolved" { "ongoing" } else { "archived_until_escalating" },
        "isPublic": false, "platform": "python",
        "project": {"id": "4504", "name": "web", "slug": "web", "platform": "python"},
        "type": "error", "metadata": {"type": "ZeroDivisionError", "value": "division by zero", "filename": "checkout/views.py", "function": "submit_order"},
        "numComments": 2, "assignedTo": {"type": "user", "id": "77", "name": "Dana Scully", "email": "dana@acme.test"},
        "isBookmarked": false, "isSubscribed": true, "subscriptionDetails": {"reason": "mentioned"}, "hasSeen": true,
        "annotations": [], "issueType": "error", "issueCategory": "error", "priority": "high", "priorityLockedAt": null,
        "isUnhandled": true, "count": "1532", "userCount": 211, "firstSeen": "2026-10-01T08:12:44.000000Z",
        "lastSeen": "2026-11-30T09:01:02.000000Z",
        "stats": {"24h": [[1764460800, 3], [1764464400, 0], [1764468000, 9]]}
    })
}

fn issue_detail() -> Value {
    let mut i = issue("4509231234", "WEB-1Z", "ZeroDivisionError: division by zero", "unresolved");
    i["firstRelease"] = json!({"version": "web@1.4.0", "shortVersion": "1.4.0", "dateCreated": "2026-09-30T10:00:00Z"});
    i["lastRelease"] = json!({"version": "web@1.4.2", "shortVersion": "1.4.2", "dateCreated": "2026-11-28T10:00:00Z"});
    i["userReportCount"] = json!(1);
    i["seenBy"] = json!([{"id": "77", "name": "Dana Scully"}]);
    i["participants"] = json!([]);
    i["activity"] = json!([{"id": "1", "type": "first_seen", "data": {}, "dateCreated": "2026-10-01T08:12:44Z"}]);
    i["tags"] = json!([{"key": "browser", "name": "Browser", "totalValues": 1500}, {"key": "environment", "name": "Environment", "totalValues": 1532}]);
    i
}

fn latest_event() -> Value {
    let frames = json!([
        {"filename": "django/core/handlers/base.py", "absPath": "/usr/lib/python3.12/site-packages/django/core/handlers/base.py",
         "module": "django.core.handlers.base", "function": "_get_response", "lineNo": 197, "colNo": null, "inApp": false,
         "context": [[196, "        try:"], [197, "            response = wrapped_callback(request, *callback_args, **callback_kwargs)"]],
         "vars": {"request": "<WSGIRequest>"}},
        {"filename": "checkout/views.py", "absPath": "/srv/app/checkout/views.py", "module": "checkout.views", "function": "submit_order",
         "lineNo": 42, "colNo": null, "inApp": true,
         "context": [[41, "    items = cart.items()"], [42, "    average = total / len(items)"], [43, "    return render(request)"]],
         "vars": {"total": "0"}}
    ]);
    let exception = json!({"type": "exception", "data": {"values": [{
        "type": "ZeroDivisionError", "value": "division by zero", "module": "builtins",
        "mechanism": {"type": "django", "handled": false}, "stacktrace": {"frames": frames}, "rawStacktrace": null
    }]}});
    let breadcrumbs = json!({"type": "breadcrumbs", "data": {"values": [
        {"timestamp": "2026-11-30T09:00:58Z", "type": "http", "category": "httplib", "level": "info", "message": null,
         "data": {"url": "https://payments.example/api", "status_code": 200}},
        {"timestamp": "2026-11-30T09:01:00Z", "type": "default", "category": "query", "level": "info",
         "message": "SELECT * FROM cart_item WHERE cart_id = %s", "data": {}},
        {"timestamp": "2026-11-30T09:01:01Z", "type": "default", "category": "django", "level": "warning",
         "message": "empty cart submitted", "data": null}
    ]}});
    let request = json!({"type": "request", "data": {"method": "POST", "url": "https://shop.acme.test/checkout/submit", "query": [],
        "headers": [["User-Agent", "Mozilla/5.0"]], "env": {"SERVER_NAME": "web-1"}}});
    let tags = json!([{"key": "environment", "value": "production"}, {"key": "release", "value": "web@1.4.2"},
                      {"key": "browser", "value": "Firefox 133"}]);
    let contexts = json!({"browser": {"name": "Firefox", "version": "133.0", "type": "browser"},
                          "runtime": {"name": "CPython", "version": "3.12.7", "type": "runtime"}});
    json!({
        "id": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "eventID": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "groupID": "4509231234",
        "title": "ZeroDivisionError: division by zero", "message": "", "platform": "python",
        "dateCreated": "2026-11-30T09:01:02Z", "dateReceived": "2026-11-30T09:01:03Z", "type": "error",
        "tags": tags,
        "user": {"id": "u-42", "email": "buyer@example.com", "username": null, "ip_address": "203.0.113.9", "name": null, "data": null},
        "release": {"version": "web@1.4.2", "shortVersion": "1.4.2", "dateCreated": "2026-11-28T10:00:00Z"},
        "sdk": {"name": "sentry.python.django", "version": "2.18.0"},
        "contexts": contexts,
        "entries": [exception, breadcrumbs, request],
        "errors": [], "fingerprints": ["c4a4d06bc314205bb3b6bdb612dde7f1"], "size": 8450
    })
}

fn releases() -> Value {
    json!([
        {"id": 901, "version": "web@1.4.2", "shortVersion": "1.4.2", "status": "open", "ref": "6ba09a7c53235ee8a8fa5ee4c1ca8ca886e7fdbb", "url": null,
         "dateReleased": "2026-11-28T10:05:00Z", "dateCreated": "2026-11-28T10:00:00Z", "data": {}, "newGroups": 3, "owner": null,
         "commitCount": 12, "lastCommit": {"id": "6ba09a7c53235ee8a8fa5ee4c1ca8ca886e7fdbb", "message": "fix cart totals"},
         "deployCount": 2, "lastDeploy": {"id": "55", "environment": "production", "dateStarted": null, "dateFinished": "2026-11-28T10:04:00Z", "name": "web@1.4.2 to production", "url": null},
         "authors": [{"name": "Dana Scully", "email": "dana@acme.test"}], "projects": [{"id": 4504, "slug": "web", "name": "web", "newGroups": 3, "platform": "python", "platforms": ["python"], "hasHealthData": false}],
         "firstEvent": "2026-11-28T10:06:00Z", "lastEvent": "2026-11-30T09:01:02Z", "currentProjectMeta": {}, "userAgent": "sentry-cli/2.39.1"}
    ])
}

fn link(base: &str, next: Option<&str>) -> String {
    let next_part = match next {
        Some(c) => format!("<{base}?&cursor={c}>; rel=\"next\"; results=\"true\"; cursor=\"{c}\""),
        None => format!("<{base}?&cursor=0:50:0>; rel=\"next\"; results=\"false\"; cursor=\"0:50:0\""),
    };
    format!("<{base}?&cursor=0:0:1>; rel=\"previous\"; results=\"false\"; cursor=\"0:0:1\", {next_part}")
}

fn not_found() -> Reply {
    Reply::json(404, json!({"detail": "The requested resource does not exist"}))
}

fn sentry_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return Reply::json(400, json!({"detail": "Missing User-Agent"}));
    }
    if r.header("authorization") != Some(format!("Bearer {TOKEN}").as_str()) {
        return Reply::json(401, json!({"detail": "Invalid token"}));
    }
    let path = r.path.as_str();
    if path.starts_with("/api/0/organizations/busy/") {
        return Reply::json(
            429,
            json!({"detail": "You are attempting to use this endpoint too frequently. Limit is 40 requests in 1 seconds"}),
        )
        .with_header("retry-after", "120");
    }
    match (r.method.as_str(), path) {
        ("GET", "/api/0/organizations/") => Reply::json(
            200,
            json!([{
                "id": "1041", "slug": "acme", "name": "Acme Inc", "dateCreated": "2021-03-01T12:00:00Z", "isEarlyAdopter": false,
                "require2FA": true, "avatar": {"avatarType": "letter_avatar", "avatarUuid": null}, "status": {"id": "active", "name": "active"},
                "features": ["performance-view", "session-replay", "issue-priority-ui"],
                "links": {"organizationUrl": "https://acme.sentry.io", "regionUrl": "https://us.sentry.io"}, "hasAuthProvider": false
            }]),
        ),
        ("GET", "/api/0/organizations/acme/projects/") => Reply::json(
            200,
            json!([
                {"id": "4504", "slug": "web", "name": "web", "platform": "python", "dateCreated": "2021-03-02T09:00:00Z", "isBookmarked": false,
                 "isMember": true, "hasAccess": true, "features": ["alert-filters"], "firstEvent": "2021-03-02T09:30:00Z", "firstTransactionEvent": true,
                 "access": ["project:read"], "hasMinifiedStackTrace": false, "hasMonitors": false, "hasProfiles": false, "hasReplays": false,
                 "teams": [{"id": "8", "slug": "checkout", "name": "Checkout"}], "team": {"id": "8", "slug": "checkout", "name": "Checkout"}},
                {"id": "4505", "slug": "ios", "name": "iOS", "platform": "apple-ios", "dateCreated": "2022-01-10T09:00:00Z", "isMember": false,
                 "firstEvent": null, "teams": []}
            ]),
        ),
        ("GET", "/api/0/organizations/acme/issues/") => {
            let limit: u32 = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
            if limit > 100 {
                return Reply::json(400, json!({"detail": "Invalid per_page value. Cannot exceed 100."}));
            }
            if r.q("shortIdLookup") == Some("1") {
                return match r.q("query") {
                    Some(q) if q.eq_ignore_ascii_case("WEB-1Z") => Reply::json(
                        200,
                        json!([issue("4509231234", "WEB-1Z", "ZeroDivisionError: division by zero", "unresolved")]),
                    ),
                    _ => Reply::json(200, json!([])),
                };
            }
            if r.q("query") == Some("is:nonsense") {
                return Reply::json(
                    400,
                    json!({"detail": "Error parsing search query: Invalid value for \"is\" search, valid values are [\"assigned\", \"unassigned\", \"resolved\", \"unresolved\"]"}),
                );
            }
            let base = "https://sentry.io/api/0/organizations/acme/issues/";
            match r.q("cursor") {
                None => Reply::json(
                    200,
                    json!([
                        issue("4509231234", "WEB-1Z", "ZeroDivisionError: division by zero", "unresolved"),
                        issue("4509231300", "WEB-20", "KeyError: 'sku'", "unresolved")
                    ]),
                )
                .with_header("link", &link(base, Some("1764460800000:2:0"))),
                Some("1764460800000:2:0") => Reply::json(
                    200,
                    json!([issue("4509231400", "WEB-21", "TimeoutError: payment gateway", "unresolved")]),
                )
                .with_header("link", &link(base, None)),
                Some(_) => Reply::json(400, json!({"detail": "Invalid cursor parameter."})),
            }
        }
        ("GET", "/api/0/organizations/acme/issues/4509231234/") => Reply::json(200, issue_detail()),
        ("PUT", "/api/0/organizations/acme/issues/4509231234/") => {
            if !r.header("content-type").is_some_and(|c| c.starts_with("application/json")) {
                return Reply::json(415, json!({"detail": "Unsupported media type \"\" in request."}));
            }
            let body: Value = match serde_json::from_slice(&r.body) {
                Ok(b) => b,
                Err(_) => return Reply::json(400, json!({"detail": "JSON parse error"})),
            };
            if let Some(s) = body["status"].as_str()
                && !["resolved", "resolvedInNextRelease", "unresolved", "ignored", "reprocessing"].contains(&s)
            {
                return Reply::json(400, json!({"status": [format!("\"{s}\" is not a valid choice.")]}));
            }
            let mut updated = issue_detail();
            for (k, v) in body.as_object().unwrap() {
                updated[k] = v.clone();
            }
            if body["assignedTo"].as_str() == Some("team:8") {
                updated["assignedTo"] = json!({"type": "team", "id": "8", "name": "checkout"});
            }
            Reply::json(200, updated)
        }
        ("GET", "/api/0/organizations/acme/issues/4509231234/events/latest/")
        | ("GET", "/api/0/organizations/acme/issues/4509231234/events/9fac2ceed9344f2bbfdd1fdacb0ed9b1/") => {
            Reply::json(200, latest_event())
        }
        ("GET", "/api/0/organizations/acme/releases/") => Reply::json(200, releases())
            .with_header("link", &link("https://sentry.io/api/0/organizations/acme/releases/", None)),
        _ => not_found(),
    }
}

async fn sentry_app(extra: &[(&str, String)]) -> (TestApp, Fake) {
    let fake = Fake::start(sentry_api).await;
    let mut env = vec![("WORKBENCH_SENTRY_BASE_URL", fake.url.clone()), ("WORKBENCH_SENTRY_TOKEN", TOKEN.to_string())];
    env.extend(extra.iter().cloned());
    (app_with(&env), fake)
}

fn auth_ok(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

#[tokio::test]
async fn sentry_lists_organizations_and_projects() {
    let (t, f) = sentry_app(&[]).await;
    let orgs = t.ok("sentry_list_organizations", json!({})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/0/organizations/"));
    assert!(req.query.is_empty());
    auth_ok(&req);
    assert_eq!(
        orgs,
        json!({"organizations": [{
            "slug": "acme", "name": "Acme Inc", "id": "1041", "status": "active", "created": "2021-03-01T12:00:00Z",
            "url": "https://acme.sentry.io", "region_url": "https://us.sentry.io"
        }]})
    );

    let projects = t.ok("sentry_list_projects", json!({"organization": "acme"})).await;
    assert_eq!(f.last().path, "/api/0/organizations/acme/projects/");
    assert_eq!(
        projects["projects"][0],
        json!({"slug": "web", "id": "4504", "name": "web", "platform": "python", "teams": ["checkout"],
               "first_event": "2021-03-02T09:30:00Z", "created": "2021-03-02T09:00:00Z", "is_member": true})
    );
    assert_eq!(projects["projects"][1]["slug"], "ios");
    assert!(projects["projects"][1].get("teams").is_none());
    assert!(projects.get("next_cursor").is_none());
}

#[tokio::test]
async fn sentry_search_issues_maps_filters_and_pages_through_link_cursors() {
    let (t, f) = sentry_app(&[]).await;
    let page1 = t
        .ok(
            "sentry_search_issues",
            json!({"organization": "acme", "query": "is:unresolved level:error", "project_ids": ["4504"],
                   "environments": ["production"], "stats_period": "24h", "sort": "freq", "limit": 2}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/0/organizations/acme/issues/"));
    auth_ok(&req);
    assert_eq!(
        req.query,
        [
            ("query", "is:unresolved level:error"),
            ("project", "4504"),
            ("environment", "production"),
            ("statsPeriod", "24h"),
            ("sort", "freq"),
            ("limit", "2")
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert_eq!(
        page1["issues"][0],
        json!({
            "id": "4509231234", "short_id": "WEB-1Z", "title": "ZeroDivisionError: division by zero",
            "culprit": "checkout.views in submit_order", "level": "error", "status": "unresolved", "substatus": "ongoing",
            "priority": "high", "project": "web", "events": 1532, "users": 211,
            "first_seen": "2026-10-01T08:12:44.000000Z", "last_seen": "2026-11-30T09:01:02.000000Z",
            "assigned_to": "Dana Scully", "is_unhandled": true, "url": "https://acme.sentry.io/issues/4509231234/"
        })
    );
    assert_eq!(page1["next_cursor"], "1764460800000:2:0");

    let page2 = t.ok("sentry_search_issues", json!({"organization": "acme", "cursor": "1764460800000:2:0"})).await;
    let req = f.last();
    assert_eq!(req.q("cursor"), Some("1764460800000:2:0"));
    assert_eq!(req.q("query"), Some("is:unresolved"), "unresolved by default");
    assert_eq!(req.q("limit"), Some("25"));
    assert_eq!(page2["issues"][0]["short_id"], "WEB-21");
    assert!(page2.get("next_cursor").is_none(), "results=\"false\" on the next link ends the pages");

    let all = t.ok("sentry_search_issues", json!({"organization": "acme", "query": ""})).await;
    assert_eq!(f.last().q("query"), Some(""), "an empty query means every issue");
    assert_eq!(all["issues"].as_array().unwrap().len(), 2);

    // The shaped list is much smaller than Sentry's payload.
    let raw = t.ok("sentry_search_issues", json!({"organization": "acme", "include_raw": true})).await;
    let raw_bytes = raw["raw"].to_string().len();
    let shaped_bytes = all.to_string().len();
    eprintln!("sentry_search_issues: raw {raw_bytes} bytes -> shaped {shaped_bytes} bytes");
    assert!(shaped_bytes * 2 < raw_bytes, "shaped {shaped_bytes} vs raw {raw_bytes}");

    let bad = t.err("sentry_search_issues", json!({"organization": "acme", "project_ids": ["web"]})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert!(bad["message"].as_str().unwrap().contains("project:web"), "{bad}");
}

#[tokio::test]
async fn sentry_get_issue_by_numeric_or_short_id() {
    let (t, f) = sentry_app(&[]).await;
    let by_id = t.ok("sentry_get_issue", json!({"organization": "acme", "issue_id": "4509231234"})).await;
    assert_eq!(f.requests().len(), 1);
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/0/organizations/acme/issues/4509231234/"));
    auth_ok(&req);
    assert_eq!(by_id["short_id"], "WEB-1Z");
    assert_eq!(by_id["error_type"], "ZeroDivisionError");
    assert_eq!(by_id["error_value"], "division by zero");
    assert_eq!(by_id["in_file"], "checkout/views.py");
    assert_eq!(by_id["events_last_24h"], 12);
    assert_eq!(by_id["first_release"], "web@1.4.0");
    assert_eq!(by_id["last_release"], "web@1.4.2");
    assert_eq!(by_id["comments"], 2);
    assert_eq!(by_id["tags"], json!(["browser", "environment"]));
    assert!(by_id.get("activity").is_none() && by_id.get("raw").is_none());

    let by_short = t.ok("sentry_get_issue", json!({"organization": "acme", "issue_id": "web-1z"})).await;
    let reqs = f.requests();
    let lookup = &reqs[reqs.len() - 2];
    assert_eq!(lookup.path, "/api/0/organizations/acme/issues/");
    assert_eq!(lookup.q("query"), Some("web-1z"));
    assert_eq!(lookup.q("shortIdLookup"), Some("1"));
    assert_eq!(reqs.last().unwrap().path, "/api/0/organizations/acme/issues/4509231234/");
    assert_eq!(by_short["id"], "4509231234");

    let missing = t.err("sentry_get_issue", json!({"organization": "acme", "issue_id": "WEB-999"})).await;
    assert_eq!(missing["status"], 404);
    assert!(missing["message"].as_str().unwrap().contains("no issue with short id WEB-999"), "{missing}");
    let unknown = t.err("sentry_get_issue", json!({"organization": "acme", "issue_id": "12"})).await;
    assert_eq!(unknown["code"], "UPSTREAM_ERROR");
    assert_eq!(unknown["status"], 404);
    assert!(unknown["message"].as_str().unwrap().contains("The requested resource does not exist"), "{unknown}");
}

#[tokio::test]
async fn sentry_get_event_defaults_to_latest_with_stack_trace_and_breadcrumbs() {
    let (t, f) = sentry_app(&[]).await;
    let e = t
        .ok("sentry_get_event", json!({"organization": "acme", "issue_id": "4509231234", "environment": "production"}))
        .await;
    let req = f.last();
    assert_eq!(req.method, "GET");
    assert_eq!(req.path, "/api/0/organizations/acme/issues/4509231234/events/latest/");
    assert_eq!(req.q("environment"), Some("production"));
    auth_ok(&req);
    assert_eq!(e["event_id"], "9fac2ceed9344f2bbfdd1fdacb0ed9b1");
    assert_eq!(e["issue_id"], "4509231234");
    assert_eq!(e["environment"], "production");
    assert_eq!(e["release"], "web@1.4.2");
    assert_eq!(e["exceptions"][0]["type"], "ZeroDivisionError");
    assert_eq!(e["exceptions"][0]["handled"], false);
    assert_eq!(
        e["exceptions"][0]["stacktrace"],
        "  django/core/handlers/base.py:197 in _get_response\n      response = wrapped_callback(request, *callback_args, **callback_kwargs)\n  checkout/views.py:42 in submit_order [app]\n      average = total / len(items)"
    );
    assert_eq!(e["breadcrumbs"].as_array().unwrap().len(), 3);
    assert_eq!(
        e["breadcrumbs"][2],
        json!({"time": "2026-11-30T09:01:01Z", "category": "django", "level": "warning", "message": "empty cart submitted"})
    );
    assert_eq!(e["request"], json!({"method": "POST", "url": "https://shop.acme.test/checkout/submit"}));
    assert_eq!(e["user"], json!({"id": "u-42", "email": "buyer@example.com", "ip_address": "203.0.113.9"}));
    assert_eq!(e["contexts"], json!({"browser": "Firefox 133.0", "runtime": "CPython 3.12.7"}));
    assert_eq!(e["tags"]["browser"], "Firefox 133");
    assert!(e.get("message").is_none(), "an empty message is dropped");
    assert!(e.get("truncated").is_none());

    let short = t
        .ok(
            "sentry_get_event",
            json!({"organization": "acme", "issue_id": "WEB-1Z", "event_id": "9fac2ceed9344f2bbfdd1fdacb0ed9b1", "max_breadcrumbs": 1, "max_chars": 500}),
        )
        .await;
    assert_eq!(f.last().path, "/api/0/organizations/acme/issues/4509231234/events/9fac2ceed9344f2bbfdd1fdacb0ed9b1/");
    assert_eq!(short["breadcrumbs"].as_array().unwrap().len(), 1);
    assert_eq!(short["breadcrumbs"][0]["message"], "empty cart submitted");

    let bad = t
        .err("sentry_get_event", json!({"organization": "acme", "issue_id": "4509231234", "event_id": "newest"}))
        .await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    let gone = t
        .err("sentry_get_event", json!({"organization": "acme", "issue_id": "4509231234", "event_id": "oldest"}))
        .await;
    assert_eq!(gone["status"], 404);
}

#[tokio::test]
async fn sentry_update_issue_sends_sentry_status_fields() {
    let (t, f) = sentry_app(&[]).await;
    let r = t
        .ok(
            "sentry_update_issue",
            json!({"organization": "acme", "issue_id": "4509231234", "status": "resolved_in_next_release", "assigned_to": "team:8", "priority": "medium"}),
        )
        .await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("PUT", "/api/0/organizations/acme/issues/4509231234/"));
    auth_ok(&req);
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        body,
        json!({"status": "resolved", "statusDetails": {"inNextRelease": true}, "assignedTo": "team:8", "priority": "medium"})
    );
    assert_eq!(r["status"], "resolved");
    assert_eq!(r["status_details"], json!({"inNextRelease": true}));
    assert_eq!(r["assigned_to"], "team:checkout");
    assert_eq!(r["priority"], "medium");
    assert_eq!(r["updated"], true);

    t.ok(
        "sentry_update_issue",
        json!({"organization": "acme", "issue_id": "WEB-1Z", "status": "ignored", "ignore_minutes": 60, "ignore_count": 100}),
    )
    .await;
    let body: Value = serde_json::from_slice(&f.last().body).unwrap();
    assert_eq!(body, json!({"status": "ignored", "statusDetails": {"ignoreDuration": 60, "ignoreCount": 100}}));

    t.ok(
        "sentry_update_issue",
        json!({"organization": "acme", "issue_id": "4509231234", "status": "resolved", "in_release": "web@1.4.2"}),
    )
    .await;
    let body: Value = serde_json::from_slice(&f.last().body).unwrap();
    assert_eq!(body, json!({"status": "resolved", "statusDetails": {"inRelease": "web@1.4.2"}}));

    let before = f.requests().len();
    let nothing = t.err("sentry_update_issue", json!({"organization": "acme", "issue_id": "4509231234"})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
    let mismatch = t
        .err(
            "sentry_update_issue",
            json!({"organization": "acme", "issue_id": "4509231234", "status": "unresolved", "in_release": "x"}),
        )
        .await;
    assert_eq!(mismatch["code"], "INVALID_ARGUMENTS");
    assert_eq!(f.requests().len(), before, "argument errors send nothing");
}

#[tokio::test]
async fn sentry_list_releases_and_default_organization_from_the_connection() {
    let (t, f) = sentry_app(&[("WORKBENCH_SENTRY_ORGANIZATION", "acme".into())]).await;
    let r = t.ok("sentry_list_releases", json!({"project_id": "4504", "query": "web@1.4", "limit": 10})).await;
    let req = f.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/0/organizations/acme/releases/"));
    auth_ok(&req);
    assert_eq!(req.q("project"), Some("4504"));
    assert_eq!(req.q("query"), Some("web@1.4"));
    assert_eq!(req.q("per_page"), Some("10"));
    assert_eq!(
        r,
        json!({"releases": [{
            "version": "web@1.4.2", "short_version": "1.4.2", "created": "2026-11-28T10:00:00Z", "released": "2026-11-28T10:05:00Z",
            "new_issues": 3, "commits": 12, "deploys": 2, "last_deploy": {"environment": "production", "finished": "2026-11-28T10:04:00Z"},
            "authors": ["Dana Scully"], "projects": ["web"], "first_event": "2026-11-28T10:06:00Z", "last_event": "2026-11-30T09:01:02Z"
        }]})
    );

    let (t2, f2) = sentry_app(&[]).await;
    let e = t2.err("sentry_list_releases", json!({})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/organization");
    assert!(f2.requests().is_empty());
}

#[tokio::test]
async fn sentry_errors_rejected_token_provider_message_and_rate_limit() {
    let fake = Fake::start(sentry_api).await;
    let wrong = app_with(&[
        ("WORKBENCH_SENTRY_BASE_URL", fake.url.clone()),
        ("WORKBENCH_SENTRY_TOKEN", "sntryu_notthetokenatall000000000000000000".into()),
    ]);
    let e = wrong.err("sentry_list_organizations", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Invalid token"), "{e}");

    let (t, _) = sentry_app(&[]).await;
    let q = t.err("sentry_search_issues", json!({"organization": "acme", "query": "is:nonsense"})).await;
    assert_eq!(q["status"], 400);
    assert!(q["message"].as_str().unwrap().contains("Error parsing search query"), "{q}");

    let rl = t.err("sentry_search_issues", json!({"organization": "busy"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
    assert!(rl["message"].as_str().unwrap().contains("too frequently"), "{rl}");
}

#[tokio::test]
async fn sentry_identity_names_the_organizations_and_honours_a_self_hosted_url() {
    let fake = Fake::start(sentry_api).await;
    // No override in the settings: the connection's own base_url (self-hosted / region) is used.
    let t = app_with(&[]);
    let fields = |token: &str| -> HashMap<String, Secret<String>> {
        HashMap::from([
            ("token".to_string(), Secret::new(token.to_string())),
            ("base_url".to_string(), Secret::new(fake.url.clone())),
        ])
    };
    let conn =
        workbench::auth::from_fields(&plugins::sentry::INTEGRATION, fields(TOKEN), workbench::auth::Source::Store);
    let label = workbench::send::verify_identity(&t.app, &plugins::sentry::INTEGRATION, conn).await.unwrap();
    assert_eq!(label.as_deref(), Some("acme"));
    assert_eq!(fake.last().path, "/api/0/organizations/");

    let bad = workbench::auth::from_fields(
        &plugins::sentry::INTEGRATION,
        fields("sntryu_revoked000000000000000000000000000"),
        workbench::auth::Source::Store,
    );
    let err = workbench::send::verify_identity(&t.app, &plugins::sentry::INTEGRATION, bad).await.unwrap_err();
    assert!(err.to_string().contains("rejected this credential"), "{err}");
}

#[tokio::test]
async fn sentry_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("stack trace of the latest sentry crash", "sentry_get_event"),
        ("resolve sentry issue", "sentry_update_issue"),
        ("show unresolved errors in sentry", "sentry_search_issues"),
        ("sentry releases and deploys", "sentry_list_releases"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
