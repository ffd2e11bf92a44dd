//! Linear against a GraphQL fake on 127.0.0.1 that takes the raw key in `Authorization` (a
//! `Bearer` prefix is refused, as Linear refuses it for personal keys), checks every operation's
//! declared and used variables, accepts identifiers like ENG-123 in `issue(id:)`, pages with
//! `pageInfo.endCursor`, and reports failures in `errors[]` (with HTTP 200, 400 or 401).

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

const KEY: &str = "lin_api_T3stK3y0123456789abcdefABCDEFghij";
const ENG: &str = "9cfb482a-81e3-4154-b5b9-2c805e70a02d";
const OPS: &str = "b7e2c1d0-1111-4222-8333-944455566677";
const ME: &str = "1a2b3c4d-0000-4000-8000-000000000001";
const GRACE: &str = "1a2b3c4d-0000-4000-8000-000000000002";
const TODO: &str = "5e000000-0000-4000-8000-000000000002";
const DONE: &str = "5e000000-0000-4000-8000-000000000005";
const BUG: &str = "1abe1000-0000-4000-8000-0000000000b1";

fn issue_uuid(n: u64) -> String {
    format!("e1000000-0000-4000-8000-000000000{n:03}")
}

fn states() -> Vec<Value> {
    [("1", "Backlog", "backlog", 0.0), ("2", "Todo", "unstarted", 1.0), ("3", "In Progress", "started", 2.0), ("4", "In Review", "started", 3.0), ("5", "Done", "completed", 4.0), ("6", "Canceled", "canceled", 5.0)]
        .iter()
        .map(|(n, name, kind, pos)| {
            json!({"id": format!("5e000000-0000-4000-8000-00000000000{n}"), "name": name, "type": kind, "color": "#bec2c8", "position": pos, "team": {"key": "ENG"}})
        })
        .collect()
}

fn state_by_id(id: &str) -> Option<Value> {
    states().into_iter().find(|s| s["id"] == id)
}

struct Seed {
    n: u64,
    title: &'static str,
    state: &'static str,
    assignee: Option<(&'static str, &'static str, &'static str)>,
    label: Option<&'static str>,
    cycle: Option<u64>,
}

fn seeds() -> Vec<Seed> {
    let ada = Some((ME, "Ada Lovelace", "ada@acme.test"));
    let grace = Some((GRACE, "Grace Hopper", "grace@acme.test"));
    vec![
        Seed { n: 123, title: "Login fails with SSO", state: "3", assignee: ada, label: Some("Bug"), cycle: Some(14) },
        Seed { n: 124, title: "Login page copy", state: "2", assignee: ada, label: Some("Bug"), cycle: Some(14) },
        Seed { n: 125, title: "Login audit log", state: "2", assignee: ada, label: Some("Bug"), cycle: Some(14) },
        Seed { n: 126, title: "Old login flow", state: "5", assignee: ada, label: Some("Bug"), cycle: Some(13) },
        Seed { n: 127, title: "Billing export", state: "3", assignee: grace, label: None, cycle: None },
    ]
}

fn node(s: &Seed) -> Value {
    let state = state_by_id(&format!("5e000000-0000-4000-8000-00000000000{}", s.state)).unwrap();
    json!({
        "id": issue_uuid(s.n), "identifier": format!("ENG-{}", s.n), "title": s.title, "priority": 2, "priorityLabel": "High",
        "estimate": 3, "dueDate": if s.n == 123 { json!("2026-02-01") } else { Value::Null },
        "url": format!("https://linear.app/acme/issue/ENG-{}/{}", s.n, s.title.to_lowercase().replace(' ', "-")),
        "createdAt": "2026-01-05T10:00:00.000Z", "updatedAt": format!("2026-01-{:02}T10:00:00.000Z", s.n - 100),
        "completedAt": if state["type"] == "completed" { json!("2026-01-04T10:00:00.000Z") } else { Value::Null },
        "state": {"name": state["name"], "type": state["type"]},
        "assignee": s.assignee.map(|(_, name, email)| json!({"name": name, "email": email})),
        "team": {"key": "ENG"},
        "project": if s.label.is_some() { json!({"name": "SSO"}) } else { Value::Null },
        "cycle": s.cycle.map(|c| json!({"number": c})),
        "labels": {"nodes": s.label.map(|l| vec![json!({"name": l})]).unwrap_or_default()}
    })
}

fn find_issue(id: &str) -> Option<Seed> {
    seeds().into_iter().find(|s| issue_uuid(s.n) == id || format!("ENG-{}", s.n).eq_ignore_ascii_case(id))
}

fn gql_error(status: u16, message: &str, code: &str, kind: &str, shown: &str) -> Reply {
    Reply::json(
        status,
        json!({"errors": [{"message": message, "extensions": {"type": kind, "code": code, "statusCode": status, "userError": true, "userPresentableMessage": shown}}]}),
    )
}

fn not_found(what: &str) -> Reply {
    Reply::json(
        200,
        json!({"errors": [{"message": format!("Entity not found: {what}"), "path": ["issue"], "locations": [{"line": 1, "column": 30}],
                           "extensions": {"type": "invalid input", "code": "INPUT_ERROR", "statusCode": 400, "userError": true,
                                          "userPresentableMessage": format!("Could not find referenced {what}.")}}], "data": null}),
    )
}

fn validation(message: &str) -> Reply {
    Reply::json(
        400,
        json!({"errors": [{"message": message, "extensions": {"code": "GRAPHQL_VALIDATION_FAILED", "type": "graphql error", "userError": false}}]}),
    )
}

/// `($a: T!, $b: T)` of the operation: name and whether it is required.
fn declared(query: &str) -> Vec<(String, bool)> {
    let brace = query.find('{').unwrap_or(query.len());
    let Some(open) = query[..brace].find('(') else { return Vec::new() };
    let close = query[open..].find(')').map(|c| c + open).unwrap_or(open);
    query[open + 1..close]
        .split(',')
        .filter_map(|d| {
            let (name, ty) = d.split_once(':')?;
            Some((name.trim().trim_start_matches('$').to_string(), ty.trim().ends_with('!')))
        })
        .collect()
}

fn used(query: &str) -> Vec<String> {
    let body = &query[query.find('{').unwrap_or(0)..];
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        let name: String = rest[at + 1..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        out.push(name);
        rest = &rest[at + 1..];
    }
    out
}

fn page(items: Vec<Value>, vars: &Value) -> Value {
    let first = vars["first"].as_u64().unwrap_or(50) as usize;
    let start =
        vars["after"].as_str().and_then(|c| c.strip_prefix("cur-")).and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
    let nodes: Vec<Value> = items.iter().skip(start).take(first).cloned().collect();
    let end = start + nodes.len();
    json!({"nodes": nodes, "pageInfo": {"hasNextPage": end < items.len(), "endCursor": if nodes.is_empty() { Value::Null } else { json!(format!("cur-{end}")) }}})
}

fn matches_filter(s: &Seed, f: &Value) -> bool {
    let n = node(s);
    let ci = |a: &Value, b: &Value| a.as_str().zip(b.as_str()).is_some_and(|(a, b)| a.eq_ignore_ascii_case(b));
    if let Some(k) = f.pointer("/team/key/eqIgnoreCase")
        && !ci(&n["team"]["key"], k)
    {
        return false;
    }
    if f.pointer("/assignee/isMe/eq") == Some(&json!(true)) && s.assignee.is_none_or(|a| a.0 != ME) {
        return false;
    }
    if let Some(t) = f.pointer("/state/type/eq")
        && n["state"]["type"] != *t
    {
        return false;
    }
    if let Some(nin) = f.pointer("/state/type/nin").and_then(Value::as_array)
        && nin.contains(&n["state"]["type"])
    {
        return false;
    }
    if let Some(name) = f.pointer("/state/name/eqIgnoreCase")
        && !ci(&n["state"]["name"], name)
    {
        return false;
    }
    if let Some(l) = f.pointer("/labels/some/name/eqIgnoreCase")
        && !s.label.is_some_and(|x| x.eq_ignore_ascii_case(l.as_str().unwrap_or("")))
    {
        return false;
    }
    if f.pointer("/cycle/isActive/eq") == Some(&json!(true)) && s.cycle != Some(14) {
        return false;
    }
    true
}

fn teams() -> Vec<Value> {
    vec![
        // `Team.visibility` (the schema deprecates `private` for it): public, private or restricted.
        json!({"id": ENG, "key": "ENG", "name": "Engineering", "description": "Product engineering", "visibility": "public"}),
        json!({"id": OPS, "key": "OPS", "name": "Operations", "description": "", "visibility": "private"}),
    ]
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

fn linear_api(r: &Recorded) -> Reply {
    if r.method != "POST" || r.path != "/graphql" || !has_user_agent(r) {
        return Reply::json(404, json!({"errors": [{"message": "Not found"}]}));
    }
    if r.header("authorization") != Some(KEY) {
        return gql_error(
            401,
            "Authentication required, not authenticated",
            "AUTHENTICATION_ERROR",
            "authentication error",
            "You need to authenticate to access this operation.",
        );
    }
    if r.header("content-type").is_none_or(|c| !c.starts_with("application/json")) {
        return validation("Must provide query string.");
    }
    let Ok(body) = serde_json::from_slice::<Value>(&r.body) else { return validation("Unexpected token in JSON") };
    let query = body["query"].as_str().unwrap_or("");
    let vars = body.get("variables").cloned().unwrap_or(json!({}));
    if query.matches('{').count() != query.matches('}').count() {
        return validation("Syntax Error: Expected Name, found <EOF>.");
    }
    let decl = declared(query);
    for u in used(query) {
        if !decl.iter().any(|(d, _)| *d == u) {
            return validation(&format!("Variable \"${u}\" is not defined."));
        }
    }
    for (name, required) in &decl {
        if *required && vars.get(name).is_none_or(Value::is_null) {
            return validation(&format!("Variable \"${name}\" of required type was not provided."));
        }
    }
    let op: String = query
        .trim_start()
        .trim_start_matches("query")
        .trim_start_matches("mutation")
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    let data = match op.as_str() {
        "Viewer" => json!({"viewer": {"id": ME, "name": "Ada Lovelace", "email": "ada@acme.test"}}),
        "ViewerId" => json!({"viewer": {"id": ME}}),
        "TeamByKey" => {
            let key = vars["key"].as_str().unwrap_or("");
            json!({"teams": {"nodes": teams().into_iter().filter(|t| t["key"].as_str().unwrap().eq_ignore_ascii_case(key)).map(|t| json!({"id": t["id"], "key": t["key"]})).collect::<Vec<_>>()}})
        }
        "Teams" => {
            // Linear's schema marks `Team.private` deprecated ("Use `Team.visibility` instead"); this
            // fake is stricter than Linear (which still answers it) so a deprecated selection shows.
            if query.contains(" private ") {
                return validation(
                    "Cannot query deprecated field \"private\" on type \"Team\": use `Team.visibility`.",
                );
            }
            json!({"teams": page(teams(), &vars)})
        }
        "Issues" => {
            if !query.contains("issues(filter: $filter, first: $first, after: $after, orderBy: $orderBy)") {
                return validation("Unknown argument");
            }
            if !matches!(vars["orderBy"].as_str(), Some("createdAt" | "updatedAt")) {
                return validation("Value for PaginationOrderBy is invalid");
            }
            let f = vars["filter"].clone();
            let items: Vec<Value> = seeds().iter().filter(|s| matches_filter(s, &f)).map(node).collect();
            json!({"issues": page(items, &vars)})
        }
        "SearchIssues" => {
            if vars["teamId"].as_str().is_some_and(|t| !is_uuid(t)) {
                return not_found("Team");
            }
            let term = vars["term"].as_str().unwrap_or("").to_lowercase();
            let items: Vec<Value> =
                seeds().iter().filter(|s| s.title.to_lowercase().contains(&term)).map(node).collect();
            let total = items.len();
            let mut conn = page(items, &vars);
            conn["totalCount"] = json!(total);
            json!({"searchIssues": conn})
        }
        "IssueId" => match find_issue(vars["id"].as_str().unwrap_or("")) {
            Some(s) => json!({"issue": {"id": issue_uuid(s.n)}}),
            None => return not_found("Issue"),
        },
        "Issue" => {
            let Some(s) = find_issue(vars["id"].as_str().unwrap_or("")) else { return not_found("Issue") };
            let mut n = node(&s);
            n["description"] = json!("Steps:\n\n1. Open `/login`\n2. Choose **SSO**");
            n["creator"] = json!({"name": "Grace Hopper"});
            n["parent"] = json!({"identifier": "ENG-100", "title": "SSO epic"});
            n["children"] =
                json!({"nodes": [{"identifier": "ENG-130", "title": "Add SAML test", "state": {"name": "Todo"}}]});
            if query.contains("comments(first: 50)") {
                n["comments"] = json!({"nodes": [
                    {"id": "c0000000-0000-4000-8000-000000000002", "body": "Reproduced on Safari.", "createdAt": "2026-01-06T09:00:00.000Z", "user": {"name": "Ada Lovelace"}, "parent": {"id": "c0000000-0000-4000-8000-000000000001"}},
                    {"id": "c0000000-0000-4000-8000-000000000001", "body": "Cannot reproduce.", "createdAt": "2026-01-05T11:00:00.000Z", "user": {"name": "Grace Hopper"}, "parent": null}
                ]});
            }
            json!({"issue": n})
        }
        "TeamStates" => {
            if vars["id"] != ENG {
                return not_found("Team");
            }
            json!({"team": {"states": {"nodes": states().iter().map(|s| json!({"id": s["id"], "name": s["name"], "type": s["type"]})).collect::<Vec<_>>()}}})
        }
        "IssueTeamStates" => {
            if find_issue(vars["id"].as_str().unwrap_or("")).is_none() {
                return not_found("Issue");
            }
            json!({"issue": {"team": {"states": {"nodes": states().iter().map(|s| json!({"id": s["id"], "name": s["name"], "type": s["type"]})).collect::<Vec<_>>()}}}})
        }
        "IssueCreate" => {
            let input = &vars["input"];
            if input["teamId"] != ENG {
                return not_found("Team");
            }
            let uuids = ["stateId", "assigneeId", "parentId", "projectId", "cycleId"];
            let bad_id = uuids.iter().any(|k| input[*k].as_str().is_some_and(|v| !is_uuid(v)))
                || input["labelIds"].as_array().is_some_and(|l| l.iter().any(|v| !v.as_str().is_some_and(is_uuid)));
            if bad_id {
                return Reply::json(
                    200,
                    json!({"errors": [{"message": "Argument Validation Error", "path": ["issueCreate"],
                    "extensions": {"type": "invalid input", "code": "INVALID_INPUT", "statusCode": 400, "userError": true,
                                   "userPresentableMessage": "labelIds must each be a UUID."}}], "data": null}),
                );
            }
            let state = input["stateId"].as_str().and_then(state_by_id).unwrap_or_else(|| state_by_id(TODO).unwrap());
            let mut n = node(&Seed { n: 131, title: "x", state: "2", assignee: None, label: None, cycle: None });
            n["title"] = input["title"].clone();
            n["url"] = json!("https://linear.app/acme/issue/ENG-131/new");
            n["state"] = json!({"name": state["name"], "type": state["type"]});
            n["priority"] = input["priority"].clone();
            n["priorityLabel"] = json!(match input["priority"].as_u64() {
                Some(1) => "Urgent",
                Some(2) => "High",
                Some(3) => "Medium",
                Some(4) => "Low",
                _ => "No priority",
            });
            n["dueDate"] = input["dueDate"].clone();
            n["estimate"] = Value::Null;
            if input["assigneeId"] == ME {
                n["assignee"] = json!({"name": "Ada Lovelace", "email": "ada@acme.test"});
            }
            json!({"issueCreate": {"success": true, "issue": n}})
        }
        "IssueUpdate" => {
            let Some(s) = find_issue(vars["id"].as_str().unwrap_or("")) else { return not_found("Issue") };
            let input = vars["input"].as_object().cloned().unwrap_or_default();
            if input.is_empty() {
                return validation("input must not be empty");
            }
            let mut n = node(&s);
            if let Some(st) = input.get("stateId").and_then(Value::as_str) {
                let Some(state) = state_by_id(st) else { return not_found("WorkflowState") };
                n["state"] = json!({"name": state["name"], "type": state["type"]});
            }
            if input.get("assigneeId").is_some_and(Value::is_null) {
                n["assignee"] = Value::Null;
            }
            if let Some(p) = input.get("priority").and_then(Value::as_u64) {
                n["priority"] = json!(p);
                n["priorityLabel"] = json!(if p == 1 { "Urgent" } else { "Low" });
            }
            if let Some(t) = input.get("title") {
                n["title"] = t.clone();
            }
            json!({"issueUpdate": {"success": true, "issue": n}})
        }
        "CommentCreate" => {
            let input = &vars["input"];
            let Some(issue) = input["issueId"].as_str().filter(|i| is_uuid(i)).and_then(find_issue) else {
                return not_found("Issue");
            };
            if input["body"].as_str().is_none_or(str::is_empty) {
                return Reply::json(
                    200,
                    json!({"errors": [{"message": "Argument Validation Error", "extensions": {"code": "INVALID_INPUT", "type": "invalid input", "userPresentableMessage": "body should not be empty"}}], "data": null}),
                );
            }
            json!({"commentCreate": {"success": true, "comment": {
                "id": "c0000000-0000-4000-8000-000000000009", "url": format!("https://linear.app/acme/issue/ENG-{}#comment-c0000009", issue.n),
                "createdAt": "2026-01-08T08:00:00.000Z", "issue": {"identifier": format!("ENG-{}", issue.n)},
                "parent": input.get("parentId").map(|p| json!({"id": p}))
            }}})
        }
        "Projects" => {
            let all = vec![
                json!({"id": "p0000000-0000-4000-8000-000000000001", "name": "SSO", "description": "Single sign-on for every customer.", "url": "https://linear.app/acme/project/sso-1a2b",
                       "progress": 0.4567, "startDate": "2026-01-01", "targetDate": "2026-03-31", "status": {"name": "In Progress", "type": "started"},
                       "lead": {"name": "Ada Lovelace"}, "teams": {"nodes": [{"key": "ENG"}]}}),
                json!({"id": "p0000000-0000-4000-8000-000000000002", "name": "Billing v2", "description": "", "url": "https://linear.app/acme/project/billing-v2-3c4d",
                       "progress": 0.0, "startDate": null, "targetDate": null, "status": {"name": "Planned", "type": "planned"},
                       "lead": null, "teams": {"nodes": [{"key": "OPS"}]}}),
            ];
            let f = vars["filter"].clone();
            let items: Vec<Value> = all
                .into_iter()
                .filter(|p| f.pointer("/status/type/eq").is_none_or(|t| p["status"]["type"] == *t))
                .filter(|p| {
                    f.pointer("/name/containsIgnoreCase")
                        .and_then(Value::as_str)
                        .is_none_or(|n| p["name"].as_str().unwrap().to_lowercase().contains(&n.to_lowercase()))
                })
                .filter(|p| {
                    f.pointer("/accessibleTeams/some/key/eqIgnoreCase")
                        .and_then(Value::as_str)
                        .is_none_or(|k| p["teams"]["nodes"][0]["key"] == k.to_uppercase())
                })
                .collect();
            json!({"projects": page(items, &vars)})
        }
        "WorkflowStates" => {
            let f = vars["filter"].clone();
            let team_ok = f.is_null()
                || f.pointer("/team/key/eqIgnoreCase")
                    .is_some_and(|k| k.as_str().is_some_and(|k| k.eq_ignore_ascii_case("ENG")))
                || f.pointer("/team/id/eq") == Some(&json!(ENG));
            let mut items: Vec<Value> = if team_ok { states() } else { Vec::new() };
            items.reverse(); // The API does not promise an order.
            json!({"workflowStates": page(items, &vars)})
        }
        other => return validation(&format!("Unknown operation {other}")),
    };
    Reply::json(200, json!({ "data": data }))
}

async fn linear() -> (TestApp, Fake) {
    let fake = Fake::start(linear_api).await;
    let t = app_with(&[("WORKBENCH_LINEAR_BASE_URL", fake.url.clone()), ("WORKBENCH_LINEAR_API_KEY", KEY.into())]);
    (t, fake)
}

/// Operation name and variables of a recorded GraphQL call, after checking it was sent right.
fn call(r: &Recorded) -> (String, Value) {
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/graphql"));
    assert_eq!(r.header("authorization"), Some(KEY), "the raw key, no Bearer");
    assert!(r.header("content-type").is_some_and(|c| c.starts_with("application/json")));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    let query = body["query"].as_str().unwrap();
    let op: String = query.split_whitespace().nth(1).unwrap().chars().take_while(|c| c.is_alphanumeric()).collect();
    (op, body["variables"].clone())
}

#[tokio::test]
async fn linear_list_issues_filters_and_pages() {
    let (t, fake) = linear().await;
    let r = t
        .ok(
            "linear_list_issues",
            json!({"team": "ENG", "assignee": "me", "open_only": true, "label": "bug", "cycle": "current", "limit": 2}),
        )
        .await;
    let (op, vars) = call(&fake.last());
    assert_eq!(op, "Issues");
    assert_eq!(
        vars,
        json!({
            "filter": {
                "team": {"key": {"eqIgnoreCase": "ENG"}},
                "assignee": {"isMe": {"eq": true}},
                "state": {"type": {"nin": ["completed", "canceled"]}},
                "labels": {"some": {"name": {"eqIgnoreCase": "bug"}}},
                "cycle": {"isActive": {"eq": true}}
            },
            "first": 2, "after": null, "orderBy": "updatedAt"
        })
    );
    assert_eq!(
        r["issues"][0],
        json!({
            "identifier": "ENG-123", "id": issue_uuid(123), "title": "Login fails with SSO", "state": "In Progress", "state_type": "started",
            "priority": "High", "assignee": "Ada Lovelace", "team": "ENG", "project": "SSO", "cycle": 14, "labels": ["Bug"],
            "estimate": 3, "due_date": "2026-02-01", "updated": "2026-01-23T10:00:00.000Z", "url": "https://linear.app/acme/issue/ENG-123/login-fails-with-sso"
        })
    );
    assert_eq!(r["issues"].as_array().unwrap().len(), 2);
    assert_eq!(r["next_cursor"], "cur-2");
    let raw_len = linear_api(&fake.last()).body.len();
    let shaped_len = r.to_string().len();
    eprintln!("linear_list_issues: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len < raw_len);

    let r2 = t
        .ok("linear_list_issues", json!({"team": "ENG", "assignee": "me", "open_only": true, "label": "bug", "cycle": "current", "limit": 2, "cursor": "cur-2"}))
        .await;
    assert_eq!(call(&fake.last()).1["after"], "cur-2");
    assert_eq!(r2["issues"].as_array().unwrap().len(), 1);
    assert_eq!(r2["issues"][0]["identifier"], "ENG-125");
    assert!(r2.get("next_cursor").is_none());

    t.ok("linear_list_issues", json!({"state": "In Review", "assignee": "grace@acme.test", "project": "sso", "cycle": "13", "order_by": "created"})).await;
    assert_eq!(
        call(&fake.last()).1,
        json!({"filter": {"assignee": {"email": {"eqIgnoreCase": "grace@acme.test"}}, "state": {"name": {"eqIgnoreCase": "In Review"}},
                          "project": {"name": {"containsIgnoreCase": "sso"}}, "cycle": {"number": {"eq": 13}}},
               "first": 25, "after": null, "orderBy": "createdAt"})
    );
    let done = t.ok("linear_list_issues", json!({"state": "completed"})).await;
    assert_eq!(call(&fake.last()).1["filter"], json!({"state": {"type": {"eq": "completed"}}}));
    assert_eq!(done["issues"][0]["completed"], "2026-01-04T10:00:00.000Z");
    let bad = t.err("linear_list_issues", json!({"cycle": "someday"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn linear_search_resolves_team_keys() {
    let (t, fake) = linear().await;
    let r = t
        .ok("linear_search_issues", json!({"term": "login", "team_id": "eng", "include_comments": true, "limit": 3}))
        .await;
    let reqs = fake.requests();
    let (lookup, search) = (call(&reqs[reqs.len() - 2]), call(&reqs[reqs.len() - 1]));
    assert_eq!(lookup, ("TeamByKey".to_string(), json!({"key": "eng"})));
    assert_eq!(search.0, "SearchIssues");
    assert_eq!(search.1, json!({"term": "login", "first": 3, "after": null, "teamId": ENG, "includeComments": true}));
    assert_eq!(r["total"], 4);
    assert_eq!(r["issues"].as_array().unwrap().len(), 3);
    assert_eq!(r["next_cursor"], "cur-3");
    let unknown = t.err("linear_search_issues", json!({"term": "x", "team_id": "NOPE"})).await;
    assert_eq!(unknown["code"], "INVALID_ARGUMENTS");
    assert!(unknown["message"].as_str().unwrap().contains("no Linear team with key 'NOPE'"), "{unknown}");
}

#[tokio::test]
async fn linear_get_issue_by_identifier_with_comments() {
    let (t, fake) = linear().await;
    let r = t.ok("linear_get_issue", json!({"id": "ENG-123"})).await;
    let req = fake.last();
    assert_eq!(call(&req), ("Issue".to_string(), json!({"id": "ENG-123"})));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert!(body["query"].as_str().unwrap().contains("comments(first: 50)"));
    assert_eq!(
        r,
        json!({
            "identifier": "ENG-123", "id": issue_uuid(123), "title": "Login fails with SSO", "state": "In Progress", "state_type": "started",
            "priority": "High", "assignee": "Ada Lovelace", "team": "ENG", "project": "SSO", "cycle": 14, "labels": ["Bug"],
            "estimate": 3, "due_date": "2026-02-01", "updated": "2026-01-23T10:00:00.000Z", "url": "https://linear.app/acme/issue/ENG-123/login-fails-with-sso",
            "creator": "Grace Hopper", "created": "2026-01-05T10:00:00.000Z",
            "parent": {"identifier": "ENG-100", "title": "SSO epic"},
            "sub_issues": [{"identifier": "ENG-130", "title": "Add SAML test", "state": "Todo"}],
            "description": "Steps:\n\n1. Open `/login`\n2. Choose **SSO**",
            "comments": [
                {"id": "c0000000-0000-4000-8000-000000000001", "author": "Grace Hopper", "created": "2026-01-05T11:00:00.000Z", "body": "Cannot reproduce."},
                {"id": "c0000000-0000-4000-8000-000000000002", "author": "Ada Lovelace", "created": "2026-01-06T09:00:00.000Z", "body": "Reproduced on Safari.", "reply_to": "c0000000-0000-4000-8000-000000000001"}
            ]
        })
    );
    let lean =
        t.ok("linear_get_issue", json!({"id": issue_uuid(124), "include_comments": false, "max_chars": 50})).await;
    let body: Value = serde_json::from_slice(&fake.last().body).unwrap();
    assert!(!body["query"].as_str().unwrap().contains("comments("));
    assert!(lean.get("comments").is_none());
    assert_eq!(lean["identifier"], "ENG-124");

    let missing = t.err("linear_get_issue", json!({"id": "ENG-999"})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
    assert!(missing["message"].as_str().unwrap().contains("Entity not found: Issue"), "{missing}");
}

#[tokio::test]
async fn linear_create_issue_resolves_team_me_status_and_parent() {
    let (t, fake) = linear().await;
    let before = fake.requests().len();
    let r = t
        .ok(
            "linear_create_issue",
            json!({"team_id": "ENG", "title": "SSO state mismatch", "description": "Seen on **Safari**.", "assignee_id": "me",
                   "priority": 2, "state_id": "todo", "parent_id": "ENG-123", "due_date": "2026-02-15", "label_ids": [BUG]}),
        )
        .await;
    let calls: Vec<(String, Value)> = fake.requests()[before..].iter().map(call).collect();
    let ops: Vec<&str> = calls.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(ops, ["TeamByKey", "ViewerId", "TeamStates", "IssueId", "IssueCreate"]);
    assert_eq!(calls[2].1, json!({"id": ENG}));
    assert_eq!(calls[3].1, json!({"id": "ENG-123"}));
    assert_eq!(
        calls[4].1,
        json!({"input": {"teamId": ENG, "title": "SSO state mismatch", "description": "Seen on **Safari**.", "assigneeId": ME,
                         "priority": 2, "stateId": TODO, "labelIds": [BUG], "dueDate": "2026-02-15", "parentId": issue_uuid(123)}})
    );
    assert_eq!(r["identifier"], "ENG-131");
    assert_eq!(r["state"], "Todo");
    assert_eq!(r["assignee"], "Ada Lovelace");
    assert_eq!(r["due_date"], "2026-02-15");

    let bad = t.err("linear_create_issue", json!({"team_id": ENG, "title": "x", "label_ids": ["bug"]})).await;
    assert_eq!(bad["code"], "UPSTREAM_ERROR");
    assert_eq!(bad["status"], 400);
    assert!(bad["message"].as_str().unwrap().contains("labelIds must each be a UUID."), "{bad}");
    let nostate = t.err("linear_create_issue", json!({"team_id": ENG, "title": "x", "state_id": "Shipped"})).await;
    assert_eq!(nostate["code"], "INVALID_ARGUMENTS");
    assert!(
        nostate["message"].as_str().unwrap().contains("Backlog, Todo, In Progress, In Review, Done, Canceled"),
        "{nostate}"
    );
}

#[tokio::test]
async fn linear_update_issue_moves_status_by_name() {
    let (t, fake) = linear().await;
    let before = fake.requests().len();
    let r = t
        .ok(
            "linear_update_issue",
            json!({"id": "ENG-123", "state_id": "done", "unassign": true, "priority": 1, "add_label_ids": [BUG]}),
        )
        .await;
    let calls: Vec<(String, Value)> = fake.requests()[before..].iter().map(call).collect();
    assert_eq!(calls[0], ("IssueTeamStates".to_string(), json!({"id": "ENG-123"})));
    assert_eq!(calls[1].0, "IssueUpdate");
    assert_eq!(
        calls[1].1,
        json!({"id": "ENG-123", "input": {"stateId": DONE, "assigneeId": null, "priority": 1, "addedLabelIds": [BUG]}})
    );
    assert_eq!(r["state"], "Done");
    assert_eq!(r["priority"], "Urgent");
    assert!(r.get("assignee").is_none());

    t.ok("linear_update_issue", json!({"id": "ENG-124", "title": "Login page copy v2", "state_id": DONE})).await;
    assert_eq!(
        call(&fake.last()).1,
        json!({"id": "ENG-124", "input": {"stateId": DONE, "title": "Login page copy v2"}}),
        "a state id needs no lookup"
    );

    let nothing = t.err("linear_update_issue", json!({"id": "ENG-123"})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
    let missing = t.err("linear_update_issue", json!({"id": "ENG-999", "title": "x"})).await;
    assert_eq!(missing["status"], 404);
}

#[tokio::test]
async fn linear_comment_on_an_identifier() {
    let (t, fake) = linear().await;
    let before = fake.requests().len();
    let r = t
        .ok("linear_create_comment", json!({"issue_id": "ENG-123", "body": "Fixed in `v2.1`.", "parent_id": "c0000000-0000-4000-8000-000000000001"}))
        .await;
    let calls: Vec<(String, Value)> = fake.requests()[before..].iter().map(call).collect();
    assert_eq!(calls[0], ("IssueId".to_string(), json!({"id": "ENG-123"})));
    assert_eq!(
        calls[1],
        (
            "CommentCreate".to_string(),
            json!({"input": {"issueId": issue_uuid(123), "body": "Fixed in `v2.1`.", "parentId": "c0000000-0000-4000-8000-000000000001"}})
        )
    );
    assert_eq!(
        r,
        json!({"id": "c0000000-0000-4000-8000-000000000009", "issue": "ENG-123", "reply_to": "c0000000-0000-4000-8000-000000000001",
               "created": "2026-01-08T08:00:00.000Z", "url": "https://linear.app/acme/issue/ENG-123#comment-c0000009"})
    );
    let before = fake.requests().len();
    t.ok("linear_create_comment", json!({"issue_id": issue_uuid(124), "body": "ok"})).await;
    assert_eq!(fake.requests().len(), before + 1, "a UUID needs no lookup");
}

#[tokio::test]
async fn linear_teams_projects_and_states() {
    let (t, fake) = linear().await;
    let p1 = t.ok("linear_list_teams", json!({"limit": 1})).await;
    assert_eq!(call(&fake.last()), ("Teams".to_string(), json!({"first": 1, "after": null})));
    assert_eq!(
        p1,
        json!({"teams": [{"id": ENG, "key": "ENG", "name": "Engineering", "description": "Product engineering"}], "next_cursor": "cur-1"})
    );
    let p2 = t.ok("linear_list_teams", json!({"limit": 1, "cursor": "cur-1"})).await;
    assert_eq!(call(&fake.last()).1["after"], "cur-1");
    assert_eq!(p2, json!({"teams": [{"id": OPS, "key": "OPS", "name": "Operations", "visibility": "private"}]}));

    let pr = t.ok("linear_list_projects", json!({"status": "started", "team": "eng", "name": "ss"})).await;
    assert_eq!(
        call(&fake.last()),
        (
            "Projects".to_string(),
            json!({"filter": {"name": {"containsIgnoreCase": "ss"}, "status": {"type": {"eq": "started"}}, "accessibleTeams": {"some": {"key": {"eqIgnoreCase": "eng"}}}},
                   "first": 25, "after": null})
        )
    );
    assert_eq!(
        pr,
        json!({"projects": [{"id": "p0000000-0000-4000-8000-000000000001", "name": "SSO", "status": "In Progress", "lead": "Ada Lovelace",
                             "progress_percent": 46, "start_date": "2026-01-01", "target_date": "2026-03-31", "teams": ["ENG"],
                             "description": "Single sign-on for every customer.", "url": "https://linear.app/acme/project/sso-1a2b"}]})
    );
    let all = t.ok("linear_list_projects", json!({})).await;
    assert_eq!(call(&fake.last()).1["filter"], Value::Null);
    assert_eq!(all["projects"].as_array().unwrap().len(), 2);

    let s = t.ok("linear_list_workflow_states", json!({"team_id": "ENG"})).await;
    assert_eq!(
        call(&fake.last()),
        (
            "WorkflowStates".to_string(),
            json!({"filter": {"team": {"key": {"eqIgnoreCase": "ENG"}}}, "first": 100, "after": null})
        )
    );
    let names: Vec<&str> = s["states"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Backlog", "Todo", "In Progress", "In Review", "Done", "Canceled"], "sorted by position");
    assert_eq!(s["states"][4], json!({"id": DONE, "name": "Done", "type": "completed", "team": "ENG"}));
    t.ok("linear_list_workflow_states", json!({"team_id": ENG})).await;
    assert_eq!(call(&fake.last()).1["filter"], json!({"team": {"id": {"eq": ENG}}}));
}

#[tokio::test]
async fn linear_errors_rejected_key_and_rate_limits() {
    // A Bearer prefix (or any wrong key) is refused with HTTP 401 and errors[].
    let fake = Fake::start(linear_api).await;
    let t = app_with(&[
        ("WORKBENCH_LINEAR_BASE_URL", fake.url.clone()),
        ("WORKBENCH_LINEAR_API_KEY", format!("Bearer {KEY}")),
    ]);
    let e = t.err("linear_list_teams", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Authentication required, not authenticated"), "{msg}");

    // RATELIMITED arrives with HTTP 200 or 400 depending on the path; both become RATE_LIMITED.
    let limited = |status: u16| {
        move |_: &Recorded| {
            Reply::json(status, json!({"errors": [{"message": "Rate limit exceeded", "extensions": {"type": "ratelimited", "code": "RATELIMITED", "statusCode": 429, "userError": true, "userPresentableMessage": "You've hit the rate limit. Try again later."}}]}))
                .with_header("retry-after", "120")
        }
    };
    for status in [200, 400] {
        let f = Fake::start(limited(status)).await;
        let t = app_with(&[("WORKBENCH_LINEAR_BASE_URL", f.url.clone()), ("WORKBENCH_LINEAR_API_KEY", KEY.into())]);
        let rl = t.err("linear_list_issues", json!({})).await;
        assert_eq!(rl["code"], "RATE_LIMITED", "HTTP {status}: {rl}");
        assert_eq!(rl["retry_after_seconds"], 120);
        assert!(rl["message"].as_str().unwrap().contains("Rate limit exceeded"));
    }

    // A forbidden operation with HTTP 200 is a 403, not a success.
    let f = Fake::start(|_: &Recorded| {
        Reply::json(200, json!({"errors": [{"message": "Forbidden", "extensions": {"type": "forbidden", "code": "FORBIDDEN", "userPresentableMessage": "You don't have access to this team."}}], "data": null}))
    })
    .await;
    let t = app_with(&[("WORKBENCH_LINEAR_BASE_URL", f.url.clone()), ("WORKBENCH_LINEAR_API_KEY", KEY.into())]);
    let forbidden = t.err("linear_list_teams", json!({})).await;
    assert_eq!(forbidden["status"], 403);
    assert!(forbidden["message"].as_str().unwrap().contains("You don't have access to this team."), "{forbidden}");
}

#[tokio::test]
async fn linear_identity() {
    let (t, _fake) = linear().await;
    let integration = &plugins::linear::INTEGRATION;
    let key = |k: &str| HashMap::from([("api_key".to_string(), Secret::new(k.to_string()))]);
    let good = workbench::auth::from_fields(integration, key(KEY), workbench::auth::Source::Store);
    let label = workbench::send::verify_identity(&t.app, integration, good).await.unwrap();
    assert_eq!(label.as_deref(), Some("ada@acme.test"));
    let bad = workbench::auth::from_fields(integration, key("lin_api_wrong"), workbench::auth::Source::Store);
    let err = workbench::send::verify_identity(&t.app, integration, bad).await.unwrap_err();
    assert!(err.to_string().contains("rejected this credential"), "{err}");
}

#[tokio::test]
async fn linear_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("linear issues assigned to me in the current cycle", "linear_list_issues"),
        ("comment on ENG-123", "linear_create_comment"),
        ("change linear issue status to done", "linear_update_issue"),
        ("linear workflow states", "linear_list_workflow_states"),
        ("search linear issues", "linear_search_issues"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
