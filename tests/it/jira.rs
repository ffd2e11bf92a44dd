//! Jira Cloud against a fake on 127.0.0.1 that checks Basic email:token auth, JSON bodies (ADF
//! where Jira wants ADF), answers with Jira-shaped payloads, filters fields the way
//! `/search/jql` does, and refuses the removed `/rest/api/3/search` with a 410.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

pub(crate) const EMAIL: &str = "ada@acme.test";
pub(crate) const TOKEN: &str = "ATATT3xFfGF0-test-token-0123456789";

fn basic(email: &str, token: &str) -> String {
    format!("Basic {}", plugins::codec::base64_encode(format!("{email}:{token}").as_bytes()))
}

fn errors(status: u16, messages: &[&str], fields: Value) -> Reply {
    Reply::json(status, json!({ "errorMessages": messages, "errors": fields }))
}

fn text_reply(status: u16, body: &str) -> Reply {
    Reply { status, headers: vec![("content-type".into(), "text/plain;charset=UTF-8".into())], body: body.into() }
}

fn host(r: &Recorded) -> String {
    format!("http://{}", r.header("host").unwrap_or("localhost"))
}

fn user(name: &str, id: &str, email: &str, h: &str) -> Value {
    json!({
        "self": format!("{h}/rest/api/3/user?accountId={id}"), "accountId": id, "emailAddress": email,
        "avatarUrls": {"48x48": "https://avatar.example/48.png", "24x24": "https://avatar.example/24.png",
                       "16x16": "https://avatar.example/16.png", "32x32": "https://avatar.example/32.png"},
        "displayName": name, "active": true, "timeZone": "Europe/London", "accountType": "atlassian"
    })
}

fn status(name: &str, cat_key: &str, cat_name: &str) -> Value {
    json!({"self": "https://x/status/1", "description": "", "iconUrl": "https://x/i.png", "name": name, "id": "3",
           "statusCategory": {"self": "https://x/cat", "id": 4, "key": cat_key, "colorName": "yellow", "name": cat_name}})
}

fn comment(id: &str, author: Value, body: Value, created: &str, updated: &str, h: &str) -> Value {
    json!({
        "self": format!("{h}/rest/api/3/issue/10001/comment/{id}"), "id": id, "author": author.clone(),
        "body": body, "updateAuthor": author, "created": created, "updated": updated, "jsdPublic": true
    })
}

fn comments(h: &str) -> Vec<Value> {
    let ada = user("Ada Lovelace", "5b10ac8d82e05b22cc7d4ef5", EMAIL, h);
    let grace = user("Grace Hopper", "5b10a2844c20165700ede21g", "grace@acme.test", h);
    vec![
        comment(
            "10100",
            grace.clone(),
            json!({"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "First look: "}, {"type": "text", "text": "cannot reproduce", "marks": [{"type": "strong"}]}, {"type": "text", "text": "."}]}]}),
            "2026-01-05T11:00:00.000+0000",
            "2026-01-05T11:00:00.000+0000",
            h,
        ),
        comment(
            "10101",
            ada,
            json!({"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "Reproduced with "}, {"type": "text", "text": "okta", "marks": [{"type": "code"}]}]}]}),
            "2026-01-06T09:00:00.000+0000",
            "2026-01-06T09:30:00.000+0000",
            h,
        ),
        comment(
            "10102",
            grace,
            json!({"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [
                {"type": "mention", "attrs": {"id": "5b10ac8d82e05b22cc7d4ef5", "text": "@Ada Lovelace", "accessLevel": ""}},
                {"type": "text", "text": " thanks!"}]}]}),
            "2026-01-07T16:30:00.000+0000",
            "2026-01-07T16:30:00.000+0000",
            h,
        ),
    ]
}

fn transitions() -> Value {
    json!({"expand": "transitions", "transitions": [
        {"id": "11", "name": "To Do", "to": status("To Do", "new", "To Do"), "hasScreen": false, "isGlobal": true, "isInitial": false, "isAvailable": true, "isConditional": false, "isLooped": false},
        {"id": "21", "name": "Start Progress", "to": status("In Progress", "indeterminate", "In Progress"), "hasScreen": false, "isGlobal": false, "isInitial": false, "isAvailable": true, "isConditional": false, "isLooped": false},
        {"id": "31", "name": "Close", "to": status("Done", "done", "Done"), "hasScreen": true, "isGlobal": false, "isInitial": false, "isAvailable": true, "isConditional": false, "isLooped": false}
    ]})
}

/// A full issue as Jira stores it; `/issue` and `/search/jql` return only the requested fields.
fn full_issue(n: u64, h: &str) -> Value {
    let key = format!("ENG-{n}");
    let description = json!({"type": "doc", "version": 1, "content": [
        {"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Steps"}]},
        {"type": "orderedList", "attrs": {"order": 1}, "content": [
            {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Open "}, {"type": "text", "text": "/login", "marks": [{"type": "code"}]}]}]},
            {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Choose SSO"}]}]}
        ]},
        {"type": "panel", "attrs": {"panelType": "info"}, "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Only on Safari."}]}]},
        {"type": "codeBlock", "attrs": {"language": "text"}, "content": [{"type": "text", "text": "ERR_SSO_STATE"}]}
    ]});
    let all = comments(h);
    json!({
        "expand": "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations",
        "id": format!("{}", 10000 + n), "self": format!("{h}/rest/api/3/issue/{}", 10000 + n), "key": key,
        "fields": {
            "summary": format!("Login fails with SSO ({n})"),
            "description": description,
            "status": status("In Progress", "indeterminate", "In Progress"),
            "assignee": user("Ada Lovelace", "5b10ac8d82e05b22cc7d4ef5", EMAIL, h),
            "reporter": user("Grace Hopper", "5b10a2844c20165700ede21g", "grace@acme.test", h),
            "priority": {"self": format!("{h}/rest/api/3/priority/2"), "iconUrl": "https://x/high.svg", "name": "High", "id": "2"},
            "issuetype": {"self": format!("{h}/rest/api/3/issuetype/10004"), "id": "10004", "description": "A problem.", "iconUrl": "https://x/bug.svg", "name": "Bug", "subtask": false, "avatarId": 10303, "hierarchyLevel": 0},
            "project": {"self": format!("{h}/rest/api/3/project/10000"), "id": "10000", "key": "ENG", "name": "Engineering", "projectTypeKey": "software", "simplified": false, "avatarUrls": {"48x48": "https://x/p48.png"}},
            "labels": ["sso", "login"],
            "components": [{"self": format!("{h}/rest/api/3/component/10100"), "id": "10100", "name": "Auth"}],
            "created": "2026-01-05T10:00:00.000+0000",
            "updated": format!("2026-01-0{}T16:30:00.000+0000", n.min(9)),
            "duedate": "2026-02-01",
            "resolution": null,
            "parent": {"id": "10100", "key": "ENG-100", "self": format!("{h}/rest/api/3/issue/10100"), "fields": {"summary": "Q1 auth epic", "status": status("To Do", "new", "To Do"), "issuetype": {"name": "Epic"}}},
            "subtasks": [{"id": "10002", "key": "ENG-2", "self": format!("{h}/rest/api/3/issue/10002"), "fields": {"summary": "Add SAML test", "status": status("To Do", "new", "To Do"), "issuetype": {"name": "Sub-task"}}}],
            "issuelinks": [{"id": "10200", "self": format!("{h}/rest/api/3/issueLink/10200"), "type": {"id": "10000", "name": "Blocks", "inward": "is blocked by", "outward": "blocks"},
                            "outwardIssue": {"id": "10005", "key": "ENG-5", "self": format!("{h}/rest/api/3/issue/10005"), "fields": {"summary": "Release 2.0", "status": status("To Do", "new", "To Do")}}}],
            "customfield_10016": 5.0,
            "comment": {"comments": all, "self": format!("{h}/rest/api/3/issue/10001/comment"), "maxResults": 3, "total": 3, "startAt": 0},
            "watches": {"self": format!("{h}/rest/api/3/issue/ENG-1/watchers"), "watchCount": 2, "isWatching": true},
            "votes": {"self": format!("{h}/rest/api/3/issue/ENG-1/votes"), "votes": 0, "hasVoted": false},
            "timetracking": {}, "attachment": [], "worklog": {"startAt": 0, "maxResults": 20, "total": 0, "worklogs": []}
        }
    })
}

/// Keeps only the fields a request asked for, as Jira does.
fn only_fields(mut issue: Value, fields: &[String]) -> Value {
    if !fields.iter().any(|f| f == "*all")
        && let Some(map) = issue["fields"].as_object_mut()
    {
        map.retain(|k, _| fields.iter().any(|f| f == k));
    }
    issue
}

fn is_adf_doc(v: &Value) -> bool {
    v["type"] == "doc" && v["version"] == 1 && v["content"].is_array()
}

fn body_json(r: &Recorded) -> Option<Value> {
    if r.header("content-type").is_none_or(|c| !c.starts_with("application/json")) {
        return None;
    }
    serde_json::from_slice(&r.body).ok()
}

fn search_page(jql: &str, max: usize, token: Option<&str>, fields: &[String], h: &str) -> Reply {
    if jql.trim().is_empty() || !jql.to_lowercase().contains("project") {
        return errors(
            400,
            &["Unbounded JQL queries are not allowed here. Please add a search restriction to your query."],
            json!({}),
        );
    }
    if jql.contains("project = NOPE") {
        return errors(400, &["The value 'NOPE' does not exist for the field 'project'."], json!({}));
    }
    let start = match token {
        None => 0,
        Some("tok-page-2") => 2,
        Some(_) => return errors(400, &["The provided next page token is invalid or expired."], json!({})),
    };
    let all: Vec<u64> = vec![1, 3, 4];
    let page: Vec<Value> = all.iter().skip(start).take(max).map(|n| only_fields(full_issue(*n, h), fields)).collect();
    let last = start + max >= all.len();
    let mut body = json!({ "issues": page, "isLast": last });
    if !last {
        body["nextPageToken"] = json!("tok-page-2");
    }
    Reply::json(200, body)
}

pub(crate) fn jira_api(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return errors(400, &["bad request"], json!({}));
    }
    if r.header("authorization") != Some(basic(EMAIL, TOKEN).as_str()) {
        return text_reply(401, "Client must be authenticated to access this resource.");
    }
    let h = host(r);
    let body = if matches!(r.method.as_str(), "POST" | "PUT") {
        match body_json(r) {
            Some(b) => b,
            None => return Reply::json(415, json!({"message": "Unsupported Media Type", "status-code": 415})),
        }
    } else {
        Value::Null
    };
    let path = r.path.as_str();
    match (r.method.as_str(), path) {
        ("GET", "/rest/api/3/myself") => Reply::json(200, user("Ada Lovelace", "5b10ac8d82e05b22cc7d4ef5", EMAIL, &h)),
        (_, "/rest/api/3/search") => errors(
            410,
            &[
                "The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046",
            ],
            json!({}),
        ),
        ("GET", "/rest/api/3/search/jql") => {
            let fields: Vec<String> = r.q("fields").unwrap_or("id").split(',').map(str::to_string).collect();
            let max = r.q("maxResults").and_then(|m| m.parse().ok()).unwrap_or(50);
            search_page(r.q("jql").unwrap_or(""), max, r.q("nextPageToken"), &fields, &h)
        }
        ("POST", "/rest/api/3/search/jql") => {
            let fields: Vec<String> = body["fields"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_else(|| vec!["id".into()]);
            let max = body["maxResults"].as_u64().unwrap_or(50) as usize;
            search_page(body["jql"].as_str().unwrap_or(""), max, body["nextPageToken"].as_str(), &fields, &h)
        }
        ("GET", "/rest/api/3/issue/ENG-429") => {
            Reply::json(429, json!({"errorMessages": ["Rate limit exceeded."], "errors": {}}))
                .with_header("retry-after", "120")
        }
        ("GET", "/rest/api/3/issue/ENG-1") => {
            let fields: Vec<String> = r
                .q("fields")
                .map(|f| f.split(',').map(str::to_string).collect())
                .unwrap_or_else(|| vec!["*all".into()]);
            let mut issue = only_fields(full_issue(1, &h), &fields);
            if r.q("expand").is_some_and(|e| e.split(',').any(|x| x == "transitions")) {
                issue["transitions"] = transitions()["transitions"].clone();
            }
            Reply::json(200, issue)
        }
        ("GET", "/rest/api/3/issue/ENG-1/transitions") => Reply::json(200, transitions()),
        ("POST", "/rest/api/3/issue/ENG-1/transitions") => {
            let id = body["transition"]["id"].as_str().unwrap_or("");
            if !["11", "21", "31"].contains(&id) {
                return errors(400, &[&format!("Transition id '{id}' is not valid for this issue.")], json!({}));
            }
            if let Some(c) = body["update"]["comment"].as_array()
                && !c.iter().all(|op| is_adf_doc(&op["add"]["body"]))
            {
                return errors(400, &[], json!({"comment": "Comment body is not valid!"}));
            }
            Reply { status: 204, headers: vec![], body: String::new() }
        }
        ("GET", "/rest/api/3/issue/ENG-1/comment") => {
            let all = comments(&h);
            let start: usize = r.q("startAt").and_then(|s| s.parse().ok()).unwrap_or(0);
            let max: usize = r.q("maxResults").and_then(|s| s.parse().ok()).unwrap_or(5000);
            let mut ordered = all.clone();
            if r.q("orderBy") == Some("-created") {
                ordered.reverse();
            }
            let page: Vec<Value> = ordered.into_iter().skip(start).take(max).collect();
            Reply::json(200, json!({"comments": page, "maxResults": max, "total": all.len(), "startAt": start}))
        }
        ("POST", "/rest/api/3/issue/ENG-1/comment") => {
            if !is_adf_doc(&body["body"]) {
                return errors(400, &[], json!({"comment": "Comment body can not be empty!"}));
            }
            let mut c = comment(
                "10103",
                user("Ada Lovelace", "5b10ac8d82e05b22cc7d4ef5", EMAIL, &h),
                body["body"].clone(),
                "2026-01-08T08:00:00.000+0000",
                "2026-01-08T08:00:00.000+0000",
                &h,
            );
            if body.get("visibility").is_some() {
                c["visibility"] = body["visibility"].clone();
            }
            Reply::json(201, c)
        }
        ("PUT", "/rest/api/3/issue/ENG-1") => {
            if body.get("fields").is_none() && body.get("update").is_none() {
                return errors(400, &["No fields to update."], json!({}));
            }
            if let Some(d) = body["fields"].get("description")
                && !is_adf_doc(d)
            {
                return errors(
                    400,
                    &[],
                    json!({"description": "Operation value must be an Atlassian Document (see the Atlassian Document Format)"}),
                );
            }
            Reply { status: 204, headers: vec![], body: String::new() }
        }
        ("PUT", "/rest/api/3/issue/ENG-1/assignee") => {
            if !body.as_object().is_some_and(|o| o.contains_key("accountId")) {
                return errors(400, &[], json!({"accountId": "accountId is required"}));
            }
            Reply { status: 204, headers: vec![], body: String::new() }
        }
        ("POST", "/rest/api/3/issue") => {
            let f = &body["fields"];
            if f["project"]["key"] == "NOPE" {
                return errors(400, &[], json!({"project": "valid project is required"}));
            }
            if f["summary"].as_str().is_none_or(str::is_empty) {
                return errors(400, &[], json!({"summary": "You must specify a summary of the issue."}));
            }
            if f["issuetype"]["name"].as_str().is_none() {
                return errors(400, &[], json!({"issuetype": "Specify an issue type"}));
            }
            if let Some(d) = f.get("description")
                && !is_adf_doc(d)
            {
                return errors(
                    400,
                    &[],
                    json!({"description": "Operation value must be an Atlassian Document (see the Atlassian Document Format)"}),
                );
            }
            Reply::json(201, json!({"id": "10042", "key": "ENG-42", "self": format!("{h}/rest/api/3/issue/10042")}))
        }
        ("GET", p) if p.starts_with("/rest/api/3/issue/") => {
            errors(404, &["Issue does not exist or you do not have permission to see it."], json!({}))
        }
        ("GET", "/rest/api/3/project/search") => {
            let all = [
                ("10000", "ENG", "Engineering", "classic"),
                ("10001", "ENGX", "Engineering Experiments", "next-gen"),
                ("10002", "OPS", "Operations", "classic"),
            ];
            let q = r.q("query").unwrap_or("").to_lowercase();
            let matching: Vec<Value> = all
                .iter()
                .filter(|(_, k, n, _)| k.to_lowercase().contains(&q) || n.to_lowercase().contains(&q))
                .map(|(id, k, n, style)| json!({
                    "expand": "description,lead,issueTypes,url,projectKeys,permissions,insight",
                    "self": format!("{h}/rest/api/3/project/{id}"), "id": id, "key": k, "name": n,
                    "avatarUrls": {"48x48": format!("{h}/secure/projectavatar?pid={id}&avatarId=10400"), "24x24": format!("{h}/secure/projectavatar?size=small&s=small&pid={id}&avatarId=10400"),
                                   "16x16": format!("{h}/secure/projectavatar?size=xsmall&s=xsmall&pid={id}&avatarId=10400"), "32x32": format!("{h}/secure/projectavatar?size=medium&s=medium&pid={id}&avatarId=10400")},
                    "projectTypeKey": "software", "simplified": *style == "next-gen", "style": style, "isPrivate": false, "properties": {}
                }))
                .collect();
            let start: usize = r.q("startAt").and_then(|s| s.parse().ok()).unwrap_or(0);
            let max: usize = r.q("maxResults").and_then(|s| s.parse().ok()).unwrap_or(50);
            let page: Vec<Value> = matching.iter().skip(start).take(max).cloned().collect();
            let last = start + max >= matching.len();
            let mut out = json!({"self": format!("{h}/rest/api/3/project/search"), "maxResults": max, "startAt": start,
                                 "total": matching.len(), "isLast": last, "values": page});
            if !last {
                out["nextPage"] =
                    json!(format!("{h}/rest/api/3/project/search?startAt={}&maxResults={max}", start + max));
            }
            Reply::json(200, out)
        }
        ("GET", "/rest/api/3/user/search") => {
            let Some(q) = r.q("query") else {
                return errors(400, &["The query parameter 'query' is required."], json!({}));
            };
            let mut bot = user("Automation for Jira", "557058:f58131cb", "", &h);
            bot["accountType"] = json!("app");
            bot.as_object_mut().unwrap().remove("emailAddress");
            let users = vec![user("Ada Lovelace", "5b10ac8d82e05b22cc7d4ef5", EMAIL, &h), bot];
            let found: Vec<Value> = users
                .into_iter()
                .filter(|u| {
                    u["displayName"].as_str().unwrap().to_lowercase().contains(&q.to_lowercase()) || q.contains('@')
                })
                .collect();
            Reply::json(200, json!(found))
        }
        ("GET", "/rest/agile/1.0/board") => {
            if r.q("projectKeyOrId") != Some("ENG") {
                return Reply::json(
                    200,
                    json!({"maxResults": 50, "startAt": 0, "total": 0, "isLast": true, "values": []}),
                );
            }
            Reply::json(
                200,
                json!({"maxResults": 50, "startAt": 0, "total": 2, "isLast": true, "values": [
                    {"id": 7, "self": format!("{h}/rest/agile/1.0/board/7"), "name": "ENG Kanban", "type": "kanban",
                     "location": {"projectId": 10000, "displayName": "Engineering (ENG)", "projectName": "Engineering", "projectKey": "ENG", "projectTypeKey": "software", "name": "Engineering (ENG)"}},
                    {"id": 9, "self": format!("{h}/rest/agile/1.0/board/9"), "name": "ENG Scrum", "type": "scrum",
                     "location": {"projectId": 10000, "displayName": "Engineering (ENG)", "projectName": "Engineering", "projectKey": "ENG", "projectTypeKey": "software", "name": "Engineering (ENG)"}}
                ]}),
            )
        }
        ("GET", "/rest/agile/1.0/board/7/sprint") => errors(400, &["The board does not support sprints"], json!({})),
        ("GET", "/rest/agile/1.0/board/9/sprint") => {
            let states: Vec<&str> = r.q("state").unwrap_or("active,future,closed").split(',').collect();
            let all = vec![
                json!({"id": 40, "self": format!("{h}/rest/agile/1.0/sprint/40"), "state": "closed", "name": "ENG Sprint 40", "startDate": "2025-12-01T09:00:00.000Z", "endDate": "2025-12-15T09:00:00.000Z", "completeDate": "2025-12-15T10:00:00.000Z", "createdDate": "2025-11-28T09:00:00.000Z", "originBoardId": 9, "goal": ""}),
                json!({"id": 41, "self": format!("{h}/rest/agile/1.0/sprint/41"), "state": "active", "name": "ENG Sprint 41", "startDate": "2026-01-05T09:00:00.000Z", "endDate": "2026-01-19T09:00:00.000Z", "createdDate": "2025-12-15T09:00:00.000Z", "originBoardId": 9, "goal": "Ship SSO"}),
                json!({"id": 42, "self": format!("{h}/rest/agile/1.0/sprint/42"), "state": "future", "name": "ENG Sprint 42", "createdDate": "2026-01-02T09:00:00.000Z", "originBoardId": 9, "goal": ""}),
            ];
            let picked: Vec<Value> =
                all.into_iter().filter(|s| states.contains(&s["state"].as_str().unwrap())).collect();
            let start: usize = r.q("startAt").and_then(|s| s.parse().ok()).unwrap_or(0);
            let max: usize = r.q("maxResults").and_then(|s| s.parse().ok()).unwrap_or(50);
            let page: Vec<Value> = picked.iter().skip(start).take(max).cloned().collect();
            Reply::json(
                200,
                json!({"maxResults": max, "startAt": start, "isLast": start + max >= picked.len(), "values": page}),
            )
        }
        _ => errors(404, &[&format!("null for uri: {h}{path}")], json!({})),
    }
}

async fn jira() -> (TestApp, Fake) {
    let fake = Fake::start(jira_api).await;
    let t = app_with(&[
        ("WORKBENCH_JIRA_BASE_URL", fake.url.clone()),
        ("WORKBENCH_JIRA_SITE", "acme.atlassian.net".into()),
        ("WORKBENCH_JIRA_EMAIL", EMAIL.into()),
        ("WORKBENCH_JIRA_TOKEN", TOKEN.into()),
    ]);
    (t, fake)
}

fn assert_auth(r: &Recorded) {
    assert_eq!(r.header("authorization"), Some(basic(EMAIL, TOKEN).as_str()));
}

#[tokio::test]
async fn jira_search_issues_pages_with_next_page_token_and_never_calls_the_removed_search() {
    let (t, fake) = jira().await;
    let r = t
        .ok(
            "jira_search_issues",
            json!({"jql": "project = ENG ORDER BY updated DESC", "limit": 2, "fields": ["labels", "customfield_10016"]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/rest/api/3/search/jql"));
    assert_auth(&req);
    assert_eq!(req.q("jql"), Some("project = ENG ORDER BY updated DESC"));
    assert_eq!(req.q("maxResults"), Some("2"));
    assert_eq!(req.q("fields"), Some("summary,status,assignee,priority,issuetype,updated,labels,customfield_10016"));
    assert_eq!(req.q("nextPageToken"), None);
    assert_eq!(req.q("startAt"), None, "startAt does not work on /search/jql");
    assert_eq!(
        r["issues"][0],
        json!({
            "key": "ENG-1", "id": "10001", "summary": "Login fails with SSO (1)", "type": "Bug", "status": "In Progress",
            "status_category": "In Progress", "priority": "High", "assignee": "Ada Lovelace",
            "updated": "2026-01-01T16:30:00.000+0000", "url": format!("{}/browse/ENG-1", fake.url),
            "fields": {"labels": ["sso", "login"], "customfield_10016": 5.0}
        })
    );
    assert_eq!(r["issues"].as_array().unwrap().len(), 2);
    assert_eq!(r["next_cursor"], "tok-page-2");

    let r2 = t
        .ok(
            "jira_search_issues",
            json!({"jql": "project = ENG ORDER BY updated DESC", "limit": 2, "cursor": "tok-page-2"}),
        )
        .await;
    assert_eq!(fake.last().q("nextPageToken"), Some("tok-page-2"));
    assert_eq!(r2["issues"].as_array().unwrap().len(), 1);
    assert_eq!(r2["issues"][0]["key"], "ENG-4");
    assert!(r2.get("next_cursor").is_none(), "the last page has no cursor: {r2}");

    // Long JQL goes in a POST body with the same fields and token.
    let long = format!(
        "project = ENG AND ({})",
        (0..120).map(|i| format!("summary ~ \"w{i}\"")).collect::<Vec<_>>().join(" OR ")
    );
    let r3 = t.ok("jira_search_issues", json!({"jql": long, "limit": 1, "cursor": "tok-page-2"})).await;
    let post = fake.last();
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/rest/api/3/search/jql"));
    let sent: Value = serde_json::from_slice(&post.body).unwrap();
    assert_eq!(
        sent,
        json!({"jql": long, "maxResults": 1, "fields": ["summary", "status", "assignee", "priority", "issuetype", "updated"], "nextPageToken": "tok-page-2"})
    );
    assert_eq!(r3["issues"][0]["key"], "ENG-4");

    // Raw vs shaped.
    let raw = t.ok("jira_search_issues", json!({"jql": "project = ENG", "limit": 2, "include_raw": true})).await;
    let raw_len = raw["raw"].to_string().len();
    let mut shaped = raw.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped_len = shaped.to_string().len();
    eprintln!("jira_search_issues: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 2 < raw_len);

    let bad = t.err("jira_search_issues", json!({"jql": "project = NOPE"})).await;
    assert_eq!(bad["code"], "UPSTREAM_ERROR");
    assert_eq!(bad["status"], 400);
    assert!(
        bad["message"].as_str().unwrap().contains("The value 'NOPE' does not exist for the field 'project'."),
        "{bad}"
    );
    assert!(fake.requests().iter().all(|r| r.path != "/rest/api/3/search"));
}

#[tokio::test]
async fn jira_get_issue_renders_description_comments_links_and_transitions() {
    let (t, fake) = jira().await;
    let r = t
        .ok(
            "jira_get_issue",
            json!({"issue_key": "ENG-1", "include_comments": true, "include_transitions": true, "fields": ["customfield_10016"]}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/rest/api/3/issue/ENG-1"));
    assert_auth(&req);
    assert_eq!(
        req.q("fields"),
        Some(
            "summary,description,status,assignee,reporter,priority,issuetype,project,labels,components,created,updated,duedate,resolution,parent,subtasks,issuelinks,comment,customfield_10016"
        )
    );
    assert_eq!(req.q("expand"), Some("transitions"));
    let url = format!("{}/browse/ENG-1", fake.url);
    assert_eq!(
        r,
        json!({
            "key": "ENG-1", "id": "10001", "url": url, "summary": "Login fails with SSO (1)", "type": "Bug",
            "status": "In Progress", "status_category": "In Progress", "priority": "High",
            "assignee": {"name": "Ada Lovelace", "account_id": "5b10ac8d82e05b22cc7d4ef5"},
            "reporter": {"name": "Grace Hopper", "account_id": "5b10a2844c20165700ede21g"},
            "project": "ENG", "parent": {"key": "ENG-100", "summary": "Q1 auth epic"},
            "labels": ["sso", "login"], "components": ["Auth"],
            "created": "2026-01-05T10:00:00.000+0000", "updated": "2026-01-01T16:30:00.000+0000", "due_date": "2026-02-01",
            "description": "## Steps\n\n1. Open `/login`\n2. Choose SSO\n\n> **Info:** Only on Safari.\n\n```text\nERR_SSO_STATE\n```",
            "subtasks": [{"key": "ENG-2", "summary": "Add SAML test", "status": "To Do"}],
            "links": [{"relation": "blocks", "key": "ENG-5", "summary": "Release 2.0", "status": "To Do"}],
            "comments": [
                {"id": "10100", "author": "Grace Hopper", "created": "2026-01-05T11:00:00.000+0000", "body": "First look: **cannot reproduce**.", "url": format!("{url}?focusedCommentId=10100")},
                {"id": "10101", "author": "Ada Lovelace", "created": "2026-01-06T09:00:00.000+0000", "updated": "2026-01-06T09:30:00.000+0000", "body": "Reproduced with `okta`", "url": format!("{url}?focusedCommentId=10101")},
                {"id": "10102", "author": "Grace Hopper", "created": "2026-01-07T16:30:00.000+0000", "body": "@Ada Lovelace thanks!", "url": format!("{url}?focusedCommentId=10102")}
            ],
            "comment_count": 3,
            "transitions": [
                {"id": "11", "name": "To Do", "to_status": "To Do", "to_category": "To Do"},
                {"id": "21", "name": "Start Progress", "to_status": "In Progress", "to_category": "In Progress"},
                {"id": "31", "name": "Close", "to_status": "Done", "to_category": "Done"}
            ],
            "fields": {"customfield_10016": 5.0}
        })
    );

    let short = t.ok("jira_get_issue", json!({"issue_key": "ENG-1", "max_chars": 50})).await;
    assert_eq!(fake.last().q("expand"), None);
    assert_eq!(short["truncated"], true);
    assert_eq!(short["description"].as_str().unwrap().chars().count(), 50);
    assert!(short.get("comments").is_none() && short.get("transitions").is_none());

    let missing = t.err("jira_get_issue", json!({"issue_key": "ENG-404"})).await;
    assert_eq!(missing["code"], "UPSTREAM_ERROR");
    assert_eq!(missing["status"], 404);
    assert!(
        missing["message"].as_str().unwrap().contains("Issue does not exist or you do not have permission to see it."),
        "{missing}"
    );
}

#[tokio::test]
async fn jira_create_issue_sends_adf_and_all_fields() {
    let (t, fake) = jira().await;
    let r = t
        .ok(
            "jira_create_issue",
            json!({
                "project_key": "ENG", "summary": "SSO state mismatch", "issue_type": "Bug",
                "description": "Happens on **Safari**:\n\n- step one\n- step two",
                "assignee_account_id": "5b10ac8d82e05b22cc7d4ef5", "priority": "High", "labels": ["sso"],
                "parent_key": "ENG-100", "due_date": "2026-02-01", "components": ["Auth"],
                "fields": {"customfield_10016": 3}
            }),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/rest/api/3/issue"));
    assert_auth(&req);
    let sent: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        sent,
        json!({"fields": {
            "customfield_10016": 3,
            "project": {"key": "ENG"}, "summary": "SSO state mismatch", "issuetype": {"name": "Bug"},
            "description": {"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [
                    {"type": "text", "text": "Happens on "}, {"type": "text", "text": "Safari", "marks": [{"type": "strong"}]}, {"type": "text", "text": ":"}]},
                {"type": "bulletList", "content": [
                    {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "step one"}]}]},
                    {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "step two"}]}]}]}
            ]},
            "assignee": {"accountId": "5b10ac8d82e05b22cc7d4ef5"}, "priority": {"name": "High"}, "labels": ["sso"],
            "parent": {"key": "ENG-100"}, "duedate": "2026-02-01", "components": [{"name": "Auth"}]
        }})
    );
    assert_eq!(r, json!({"key": "ENG-42", "id": "10042", "url": format!("{}/browse/ENG-42", fake.url)}));

    let bad = t.err("jira_create_issue", json!({"project_key": "NOPE", "summary": "x", "issue_type": "Task"})).await;
    assert_eq!(bad["status"], 400);
    assert!(bad["message"].as_str().unwrap().contains("project: valid project is required"), "{bad}");
    let n = fake.requests().len();
    let date = t
        .err(
            "jira_create_issue",
            json!({"project_key": "ENG", "summary": "x", "issue_type": "Task", "due_date": "next week"}),
        )
        .await;
    assert_eq!(date["code"], "INVALID_ARGUMENTS");
    assert_eq!(fake.requests().len(), n, "no request for a bad date");
}

#[tokio::test]
async fn jira_update_issue_edits_fields_labels_and_assignee() {
    let (t, fake) = jira().await;
    let r = t
        .ok(
            "jira_update_issue",
            json!({"issue_key": "ENG-1", "summary": "SSO broken on Safari", "description": "Now with `logs`.",
                   "labels_add": ["p1"], "labels_remove": ["login"], "due_date": "", "assignee_account_id": "5b10a2844c20165700ede21g"}),
        )
        .await;
    let reqs = fake.requests();
    let (edit, assign) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!((edit.method.as_str(), edit.path.as_str()), ("PUT", "/rest/api/3/issue/ENG-1"));
    assert_auth(edit);
    assert_eq!(
        serde_json::from_slice::<Value>(&edit.body).unwrap(),
        json!({
            "fields": {
                "summary": "SSO broken on Safari",
                "description": {"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [
                    {"type": "text", "text": "Now with "}, {"type": "text", "text": "logs", "marks": [{"type": "code"}]}, {"type": "text", "text": "."}]}]},
                "duedate": null
            },
            "update": {"labels": [{"add": "p1"}, {"remove": "login"}]}
        })
    );
    assert_eq!((assign.method.as_str(), assign.path.as_str()), ("PUT", "/rest/api/3/issue/ENG-1/assignee"));
    assert_eq!(
        serde_json::from_slice::<Value>(&assign.body).unwrap(),
        json!({"accountId": "5b10a2844c20165700ede21g"})
    );
    assert_eq!(
        r,
        json!({"key": "ENG-1", "updated": ["summary", "description", "due_date", "labels", "assignee"], "url": "https://acme.atlassian.net/browse/ENG-1"})
    );

    let before = fake.requests().len();
    let un = t.ok("jira_update_issue", json!({"issue_key": "ENG-1", "unassign": true})).await;
    let reqs = fake.requests();
    assert_eq!(reqs.len(), before + 1, "only the assignee call");
    assert_eq!(reqs[before].path, "/rest/api/3/issue/ENG-1/assignee");
    assert_eq!(serde_json::from_slice::<Value>(&reqs[before].body).unwrap(), json!({"accountId": null}));
    assert_eq!(un["updated"], json!(["unassigned"]));

    let nothing = t.err("jira_update_issue", json!({"issue_key": "ENG-1"})).await;
    assert_eq!(nothing["code"], "INVALID_ARGUMENTS");
    assert!(nothing["message"].as_str().unwrap().contains("nothing to change"), "{nothing}");
}

#[tokio::test]
async fn jira_transitions_by_status_name_or_id_with_comment() {
    let (t, fake) = jira().await;
    let list = t.ok("jira_list_transitions", json!({"issue_key": "ENG-1"})).await;
    assert_eq!(fake.last().path, "/rest/api/3/issue/ENG-1/transitions");
    assert_eq!(
        list["transitions"][1],
        json!({"id": "21", "name": "Start Progress", "to_status": "In Progress", "to_category": "In Progress"})
    );

    let done = t
        .ok(
            "jira_transition_issue",
            json!({"issue_key": "ENG-1", "transition": "done", "comment": "Fixed in **#42**", "resolution": "Fixed"}),
        )
        .await;
    let reqs = fake.requests();
    let (lookup, post) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!((lookup.method.as_str(), lookup.path.as_str()), ("GET", "/rest/api/3/issue/ENG-1/transitions"));
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/rest/api/3/issue/ENG-1/transitions"));
    assert_auth(post);
    assert_eq!(
        serde_json::from_slice::<Value>(&post.body).unwrap(),
        json!({
            "transition": {"id": "31"},
            "fields": {"resolution": {"name": "Fixed"}},
            "update": {"comment": [{"add": {"body": {"type": "doc", "version": 1, "content": [{"type": "paragraph", "content": [
                {"type": "text", "text": "Fixed in "}, {"type": "text", "text": "#42", "marks": [{"type": "strong"}]}]}]}}}]}
        })
    );
    assert_eq!(
        done,
        json!({"key": "ENG-1", "transition": {"id": "31", "name": "Close"}, "status": "Done", "url": "https://acme.atlassian.net/browse/ENG-1"})
    );

    let by_id = t.ok("jira_transition_issue", json!({"issue_key": "ENG-1", "transition": "21"})).await;
    assert_eq!(serde_json::from_slice::<Value>(&fake.last().body).unwrap(), json!({"transition": {"id": "21"}}));
    assert_eq!(by_id["status"], "In Progress");

    let before = fake.requests().len();
    let unknown = t.err("jira_transition_issue", json!({"issue_key": "ENG-1", "transition": "Deployed"})).await;
    assert_eq!(unknown["code"], "INVALID_ARGUMENTS");
    let msg = unknown["message"].as_str().unwrap();
    assert!(msg.contains("no transition 'Deployed'") && msg.contains("Start Progress → In Progress (id 21)"), "{msg}");
    assert_eq!(fake.requests().len(), before + 1, "looked up, did not post");
}

#[tokio::test]
async fn jira_comments_page_and_post_with_visibility() {
    let (t, fake) = jira().await;
    let p1 = t.ok("jira_list_comments", json!({"issue_key": "ENG-1", "limit": 2})).await;
    let req = fake.last();
    assert_eq!(req.path, "/rest/api/3/issue/ENG-1/comment");
    assert_auth(&req);
    assert_eq!((req.q("startAt"), req.q("maxResults"), req.q("orderBy")), (Some("0"), Some("2"), Some("created")));
    assert_eq!(p1["total"], 3);
    assert_eq!(p1["comments"][0]["body"], "First look: **cannot reproduce**.");
    assert_eq!(p1["comments"][1]["updated"], "2026-01-06T09:30:00.000+0000");
    assert_eq!(p1["next_cursor"], "2");
    let p2 = t.ok("jira_list_comments", json!({"issue_key": "ENG-1", "limit": 2, "cursor": "2"})).await;
    assert_eq!(fake.last().q("startAt"), Some("2"));
    assert_eq!(p2["comments"].as_array().unwrap().len(), 1);
    assert_eq!(p2["comments"][0]["body"], "@Ada Lovelace thanks!");
    assert!(p2.get("next_cursor").is_none());
    let newest = t.ok("jira_list_comments", json!({"issue_key": "ENG-1", "order_by": "newest_first"})).await;
    assert_eq!(fake.last().q("orderBy"), Some("-created"));
    assert_eq!(newest["comments"][0]["id"], "10102");

    let c = t
        .ok("jira_create_comment", json!({"issue_key": "ENG-1", "body": "Deployed to staging.\n\nSee <https://ci.acme.test/42>", "visible_to_role": "Developers"}))
        .await;
    let post = fake.last();
    assert_eq!((post.method.as_str(), post.path.as_str()), ("POST", "/rest/api/3/issue/ENG-1/comment"));
    assert_auth(&post);
    assert_eq!(
        serde_json::from_slice::<Value>(&post.body).unwrap(),
        json!({
            "body": {"type": "doc", "version": 1, "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "Deployed to staging."}]},
                {"type": "paragraph", "content": [{"type": "text", "text": "See "}, {"type": "text", "text": "https://ci.acme.test/42", "marks": [{"type": "link", "attrs": {"href": "https://ci.acme.test/42"}}]}]}
            ]},
            "visibility": {"type": "role", "value": "Developers"}
        })
    );
    assert_eq!(
        c,
        json!({"id": "10103", "author": "Ada Lovelace", "created": "2026-01-08T08:00:00.000+0000", "visibility": "Developers",
               "url": format!("{}/browse/ENG-1?focusedCommentId=10103", fake.url), "issue_key": "ENG-1"})
    );
    let both = t
        .err(
            "jira_create_comment",
            json!({"issue_key": "ENG-1", "body": "x", "visible_to_role": "a", "visible_to_group": "b"}),
        )
        .await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn jira_projects_and_users() {
    let (t, fake) = jira().await;
    let p = t.ok("jira_list_projects", json!({"query": "eng", "limit": 1})).await;
    let req = fake.last();
    assert_eq!(req.path, "/rest/api/3/project/search");
    assert_auth(&req);
    assert_eq!((req.q("query"), req.q("startAt"), req.q("maxResults")), (Some("eng"), Some("0"), Some("1")));
    assert_eq!(
        p,
        json!({"projects": [{"key": "ENG", "id": "10000", "name": "Engineering", "type": "software", "style": "company-managed"}], "total": 2, "next_cursor": "1"})
    );
    let raw_len = jira_api(&req).body.len();
    let shaped_len = p.to_string().len();
    eprintln!("jira_list_projects: raw {raw_len} bytes -> shaped {shaped_len} bytes");
    assert!(shaped_len * 3 < raw_len);
    let p2 = t.ok("jira_list_projects", json!({"query": "eng", "limit": 1, "cursor": "1"})).await;
    assert_eq!(fake.last().q("startAt"), Some("1"));
    assert_eq!(p2["projects"][0]["style"], "team-managed");
    assert!(p2.get("next_cursor").is_none());

    let u = t.ok("jira_search_users", json!({"query": "a", "limit": 5})).await;
    let req = fake.last();
    assert_eq!(
        (req.path.as_str(), req.q("query"), req.q("maxResults")),
        ("/rest/api/3/user/search", Some("a"), Some("5"))
    );
    assert_eq!(
        u,
        json!({"users": [
            {"account_id": "5b10ac8d82e05b22cc7d4ef5", "name": "Ada Lovelace", "email": EMAIL, "active": true},
            {"account_id": "557058:f58131cb", "name": "Automation for Jira", "active": true, "account_type": "app"}
        ]})
    );
}

#[tokio::test]
async fn jira_sprints_by_project_or_board() {
    let (t, fake) = jira().await;
    let s = t.ok("jira_list_sprints", json!({"project_key": "ENG"})).await;
    let reqs = fake.requests();
    let (boards, sprints) = (&reqs[reqs.len() - 2], &reqs[reqs.len() - 1]);
    assert_eq!((boards.path.as_str(), boards.q("projectKeyOrId")), ("/rest/agile/1.0/board", Some("ENG")));
    assert_auth(boards);
    assert_eq!(sprints.path, "/rest/agile/1.0/board/9/sprint");
    assert_eq!(
        (sprints.q("state"), sprints.q("startAt"), sprints.q("maxResults")),
        (Some("active,future"), Some("0"), Some("50"))
    );
    assert_eq!(
        s,
        json!({
            "board": {"id": 9, "name": "ENG Scrum", "type": "scrum"},
            "other_boards": [{"id": 7, "name": "ENG Kanban", "type": "kanban"}],
            "sprints": [
                {"id": 41, "name": "ENG Sprint 41", "state": "active", "start": "2026-01-05T09:00:00.000Z", "end": "2026-01-19T09:00:00.000Z", "goal": "Ship SSO"},
                {"id": 42, "name": "ENG Sprint 42", "state": "future"}
            ]
        })
    );
    let closed = t.ok("jira_list_sprints", json!({"board_id": 9, "state": ["closed"], "limit": 1})).await;
    assert_eq!(fake.last().q("state"), Some("closed"));
    assert_eq!(closed["board"], json!({"id": 9}));
    assert_eq!(closed["sprints"][0]["completed"], "2025-12-15T10:00:00.000Z");
    assert!(closed.get("next_cursor").is_none());

    let kanban = t.err("jira_list_sprints", json!({"board_id": 7})).await;
    assert_eq!(kanban["status"], 400);
    assert!(kanban["message"].as_str().unwrap().contains("The board does not support sprints"), "{kanban}");
    let neither = t.err("jira_list_sprints", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    let none = t.err("jira_list_sprints", json!({"project_key": "OPS"})).await;
    assert_eq!(none["status"], 404);
}

#[tokio::test]
async fn jira_rejected_token_and_rate_limit() {
    let fake = Fake::start(jira_api).await;
    let t = app_with(&[
        ("WORKBENCH_JIRA_BASE_URL", fake.url.clone()),
        ("WORKBENCH_JIRA_SITE", "acme.atlassian.net".into()),
        ("WORKBENCH_JIRA_EMAIL", EMAIL.into()),
        ("WORKBENCH_JIRA_TOKEN", "expired-token".into()),
    ]);
    let e = t.err("jira_get_issue", json!({"issue_key": "ENG-1"})).await;
    assert_eq!(fake.last().header("authorization"), Some(basic(EMAIL, "expired-token").as_str()));
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("Client must be authenticated"), "{msg}");

    let (t, _) = jira().await;
    let rl = t.err("jira_get_issue", json!({"issue_key": "ENG-429"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
}

fn fields(site: &str, email: &str, token: &str) -> HashMap<String, Secret<String>> {
    HashMap::from([
        ("site".to_string(), Secret::new(site.to_string())),
        ("email".to_string(), Secret::new(email.to_string())),
        ("token".to_string(), Secret::new(token.to_string())),
    ])
}

#[tokio::test]
async fn jira_identity_and_site_host() {
    let (t, _fake) = jira().await;
    let integration = &plugins::jira::INTEGRATION;
    let good = workbench::auth::from_fields(
        integration,
        fields("acme.atlassian.net", EMAIL, TOKEN),
        workbench::auth::Source::Store,
    );
    let label = workbench::send::verify_identity(&t.app, integration, good).await.unwrap();
    assert_eq!(label.as_deref(), Some(EMAIL));
    let bad = workbench::auth::from_fields(
        integration,
        fields("acme.atlassian.net", EMAIL, "nope"),
        workbench::auth::Source::Store,
    );
    let err = workbench::send::verify_identity(&t.app, integration, bad).await.unwrap_err();
    assert!(err.to_string().contains("rejected this credential"), "{err}");

    // Without an override, the host is the connection's own site.
    let plain = crate::support::app();
    let conn = workbench::auth::from_fields(
        integration,
        fields("https://acme.atlassian.net/", EMAIL, TOKEN),
        workbench::auth::Source::Store,
    );
    let url = workbench::send::host_url(&plain.app, integration, "base_url", &[], Some(&conn)).unwrap();
    assert_eq!(url, "https://acme.atlassian.net");
}

#[tokio::test]
async fn jira_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("move jira ticket to done", "jira_transition_issue"),
        ("file a bug in jira", "jira_create_issue"),
        ("what's in the current sprint", "jira_list_sprints"),
        ("JQL search my open tickets", "jira_search_issues"),
        ("assign the ticket to someone else", "jira_update_issue"),
        ("find jira user account id", "jira_search_users"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
