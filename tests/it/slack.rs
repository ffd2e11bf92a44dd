//! Slack against a fake Web API on 127.0.0.1 that checks what Slack checks (the Bearer user token,
//! GET vs JSON POST vs form POST per method, required arguments) and answers like Slack: HTTP 200
//! with `{"ok": false, "error": …}` for most failures, `response_metadata.next_cursor` pages, and
//! an HTTP 429 with `Retry-After` when rate-limited. A second fake plays the files.slack.com host.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with, files_dir};

const TOKEN: &str = "xoxp-1111111111-2222222222-3333333333-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const AUTH: &str = "Bearer xoxp-1111111111-2222222222-3333333333-0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const JSON_CT: &str = "application/json; charset=utf-8";
const PAGE2: &str = "dGVhbTpDMDYxRkE1UEI=";

fn ok(mut body: Value) -> Reply {
    body["ok"] = json!(true);
    Reply::json(200, body)
}

fn fail(error: &str) -> Reply {
    Reply::json(200, json!({"ok": false, "error": error}))
}

fn form(body: &[u8]) -> HashMap<String, String> {
    let dec = |s: &str| {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("percent escape"));
                    i += 2;
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    };
    String::from_utf8_lossy(body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (dec(k), dec(v))
        })
        .collect()
}

fn channel(id: &str, name: &str, private: bool) -> Value {
    json!({
        "id": id, "name": name, "is_channel": !private, "is_group": private, "is_im": false, "is_mpim": false,
        "is_private": private, "created": 1449252889, "is_archived": false, "is_general": name == "general",
        "unlinked": 0, "name_normalized": name, "is_shared": false, "is_org_shared": false, "is_pending_ext_shared": false,
        "pending_shared": [], "context_team_id": "T012AB3C4", "updated": 1678229664302u64, "parent_conversation": null,
        "creator": "U012A3CDE", "is_ext_shared": false, "shared_team_ids": ["T012AB3C4"], "pending_connected_team_ids": [],
        "is_member": name != "random",
        "topic": {"value": if name == "general" { "Company-wide announcements" } else { "" }, "creator": "U012A3CDE", "last_set": 1449709364},
        "purpose": {"value": format!("This channel is for {name}."), "creator": "U012A3CDE", "last_set": 1449709352},
        "properties": {"posting_restricted_to": {"type": ["admin"]}}, "previous_names": ["old-name"], "num_members": 42
    })
}

fn member(id: &str, name: &str, real: &str, email: &str) -> Value {
    json!({
        "id": id, "team_id": "T012AB3C4", "name": name, "deleted": false, "color": "9f69e7", "real_name": real,
        "tz": "America/Los_Angeles", "tz_label": "Pacific Standard Time", "tz_offset": -28800,
        "profile": {
            "avatar_hash": "ge3b51ca72de", "status_text": "Riding a train", "status_emoji": ":mountain_railway:",
            "real_name": real, "display_name": name, "real_name_normalized": real, "display_name_normalized": name,
            "email": email, "title": "Staff Engineer", "phone": "+1 555 0100", "skype": "",
            "image_24": "https://secure.gravatar.com/avatar/x-24.jpg", "image_192": "https://secure.gravatar.com/avatar/x-192.jpg",
            "team": "T012AB3C4", "fields": null
        },
        "is_admin": true, "is_owner": false, "is_primary_owner": false, "is_restricted": false,
        "is_ultra_restricted": false, "is_bot": false, "is_app_user": false, "updated": 1502138686, "has_2fa": false
    })
}

fn members() -> Vec<Value> {
    let mut bot = member("B0BOTBOT01", "deploybot", "Deploy Bot", "");
    bot["is_bot"] = json!(true);
    let mut gone = member("U0GONE0001", "oldtimer", "Old Timer", "old@example.com");
    gone["deleted"] = json!(true);
    let mut slackbot = member("USLACKBOT", "slackbot", "Slackbot", "");
    slackbot["is_admin"] = json!(false);
    vec![
        member("U0GRACE001", "grace", "Grace Hopper", "grace@example.com"),
        slackbot,
        gone,
        bot,
        member("U0ADA00001", "ada", "Ada Lovelace", "ada@example.com"),
    ]
}

fn message(ts: &str, user: &str, text: &str) -> Value {
    json!({
        "type": "message", "user": user, "text": text, "ts": ts, "team": "T012AB3C4",
        "client_msg_id": "5f8a5a2c-1d2e-4d4c-9f5e-2e1b7b4f3c21",
        "blocks": [{"type": "rich_text", "block_id": "Xy1", "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}]
    })
}

fn history() -> Vec<Value> {
    let mut parent = message("1700000300.000400", "U0GRACE001", "Deploy is done :rocket:");
    parent["thread_ts"] = json!("1700000300.000400");
    parent["reply_count"] = json!(2);
    parent["reply_users_count"] = json!(1);
    parent["latest_reply"] = json!("1700000400.000500");
    parent["reply_users"] = json!(["U0ADA00001"]);
    parent["is_locked"] = json!(false);
    parent["subscribed"] = json!(true);
    parent["reactions"] = json!([{"name": "tada", "users": ["U0ADA00001", "U0GRACE001"], "count": 2}]);
    let mut edited = message("1700000200.000300", "U0ADA00001", "Starting the deploy now");
    edited["edited"] = json!({"user": "U0ADA00001", "ts": "1700000210.000000"});
    let mut bot = json!({
        "type": "message", "subtype": "bot_message", "text": "", "ts": "1700000100.000200", "bot_id": "B0BOTBOT01",
        "username": "deploybot", "attachments": [{"id": 1, "fallback": "Build #42 passed", "color": "36a64f", "text": "Build #42 passed"}]
    });
    bot["icons"] = json!({"emoji": ":robot_face:"});
    let mut file = message("1700000000.000100", "U0GRACE001", "Here's the runbook");
    file["files"] = json!([{
        "id": "F0RUNBOOK1", "created": 1700000000, "timestamp": 1700000000, "name": "runbook.pdf", "title": "Runbook",
        "mimetype": "application/pdf", "filetype": "pdf", "pretty_type": "PDF", "user": "U0GRACE001", "size": 52011,
        "url_private": "https://files.slack.com/files-pri/T012AB3C4-F0RUNBOOK1/runbook.pdf",
        "permalink": "https://acme.slack.com/files/U0GRACE001/F0RUNBOOK1/runbook.pdf"
    }]);
    file["upload"] = json!(false);
    vec![parent, edited, bot, file]
}

fn is_known_channel(id: &str) -> bool {
    ["C0GENERAL1", "C0RANDOM01", "G0SECRET01", "D0DMGRACE1", "D0DMADA001", "G0MPIMGA01"].contains(&id)
}

/// The Web API on `/api/<method>`.
pub(crate) fn slack(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return Reply::json(400, json!({"ok": false, "error": "invalid_request"}));
    }
    let Some(method) = r.path.strip_prefix("/api/") else {
        return Reply::json(404, json!({"ok": false, "error": "unknown_method"}));
    };
    match r.header("authorization") {
        Some(AUTH) => {}
        Some(_) => return fail("invalid_auth"),
        None => return fail("not_authed"),
    }
    let reads = [
        "auth.test",
        "conversations.list",
        "conversations.history",
        "conversations.replies",
        "search.messages",
        "users.list",
        "users.info",
        "users.lookupByEmail",
    ];
    let json_writes =
        ["chat.postMessage", "chat.update", "conversations.open", "reactions.add", "files.completeUploadExternal"];
    let body: Value = if reads.contains(&method) {
        if r.method != "GET" {
            return fail("invalid_request");
        }
        Value::Null
    } else if json_writes.contains(&method) {
        if r.method != "POST" || r.header("content-type") != Some(JSON_CT) {
            return fail("invalid_arguments");
        }
        match serde_json::from_slice(&r.body) {
            Ok(v) => v,
            Err(_) => return fail("invalid_json"),
        }
    } else if method == "files.getUploadURLExternal" {
        if r.method != "POST" || r.header("content-type") != Some("application/x-www-form-urlencoded") {
            return fail("invalid_arguments");
        }
        let f = form(&r.body);
        let length: u64 = f.get("length").and_then(|l| l.parse().ok()).unwrap_or(0);
        if length == 0 || f.get("filename").is_none_or(|n| n.is_empty()) {
            return fail("missing_argument");
        }
        return ok(
            json!({"upload_url": "https://files.slack.com/upload/v1/CwABAAAAXAoAAZuAAAAL?sig=abc%2Fdef", "file_id": "F0NEWFILE1"}),
        );
    } else {
        return Reply::json(404, json!({"ok": false, "error": "unknown_method", "req_method": method}));
    };
    match method {
        "auth.test" => ok(json!({
            "url": "https://acme.slack.com/", "team": "Acme Corp", "user": "grace", "team_id": "T012AB3C4",
            "user_id": "U0GRACE001", "is_enterprise_install": false
        })),
        "conversations.list" => {
            let all = [
                channel("C0GENERAL1", "general", false),
                channel("C0RANDOM01", "random", false),
                channel("G0SECRET01", "secret-plans", true),
            ];
            let (page, next) = match r.q("cursor") {
                None => (&all[..2], PAGE2),
                Some(PAGE2) => (&all[2..], ""),
                Some(_) => return fail("invalid_cursor"),
            };
            ok(json!({"channels": page, "response_metadata": {"next_cursor": next}}))
        }
        "conversations.history" => {
            let ch = r.q("channel").unwrap_or_default();
            if !is_known_channel(ch) {
                return fail("channel_not_found");
            }
            if ch == "G0SECRET01" {
                return Reply::json(
                    200,
                    json!({"ok": false, "error": "missing_scope", "needed": "groups:history", "provided": "channels:history"}),
                );
            }
            let all = history();
            let limit: usize = r.q("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
            let start = match r.q("cursor") {
                None => 0,
                Some(c) => match c.strip_prefix("bmV4dF90czox") {
                    Some(n) => n.parse().unwrap_or(0),
                    None => return fail("invalid_cursor"),
                },
            };
            let page: Vec<Value> = all.iter().skip(start).take(limit).cloned().collect();
            let end = start + page.len();
            let more = end < all.len();
            ok(json!({
                "messages": page, "has_more": more, "pin_count": 0, "channel_actions_ts": null, "channel_actions_count": 0,
                "response_metadata": {"next_cursor": if more { format!("bmV4dF90czox{end}") } else { String::new() }}
            }))
        }
        "conversations.replies" => {
            if r.q("channel") != Some("C0GENERAL1") {
                return fail("channel_not_found");
            }
            if r.q("ts") != Some("1700000300.000400") {
                return fail("thread_not_found");
            }
            let mut parent = history()[0].clone();
            parent["reply_users"] = json!(["U0ADA00001"]);
            let mut r1 = message("1700000350.000450", "U0ADA00001", "Nice, thanks!");
            r1["thread_ts"] = json!("1700000300.000400");
            r1["parent_user_id"] = json!("U0GRACE001");
            let mut r2 = message("1700000400.000500", "U0ADA00001", "Metrics look good too");
            r2["thread_ts"] = json!("1700000300.000400");
            r2["parent_user_id"] = json!("U0GRACE001");
            ok(json!({"messages": [parent, r1, r2], "has_more": false, "response_metadata": {"next_cursor": ""}}))
        }
        "search.messages" => {
            let query = r.q("query").unwrap_or_default();
            if query == "slow" {
                return Reply::json(429, json!({"ok": false, "error": "ratelimited"}))
                    .with_header("retry-after", "120");
            }
            let page: u64 = r.q("page").and_then(|p| p.parse().ok()).unwrap_or(1);
            let count: u64 = r.q("count").and_then(|p| p.parse().ok()).unwrap_or(20);
            let hit = json!({
                "iid": "cb64bdaa-c1e8-4631-8a91-0f78080113e9", "team": "T012AB3C4",
                "channel": {"id": "C0GENERAL1", "is_channel": true, "is_group": false, "is_im": false, "name": "general",
                            "is_shared": false, "is_org_shared": false, "is_ext_shared": false, "is_private": false, "is_mpim": false,
                            "pending_shared": [], "is_pending_ext_shared": false},
                "type": "message", "user": "U0GRACE001", "username": "grace", "ts": format!("17000003{page:02}.000400"),
                "blocks": [], "text": format!("Deploy is done (page {page}) for {query}"),
                "permalink": format!("https://acme.slack.com/archives/C0GENERAL1/p17000003{page:02}000400")
            });
            ok(json!({
                "query": query,
                "messages": {
                    "total": 3, "matches": [hit],
                    "pagination": {"total_count": 3, "page": page, "per_page": count, "page_count": 3, "first": page, "last": page},
                    "paging": {"count": count, "total": 3, "page": page, "pages": 3}
                }
            }))
        }
        "users.list" => {
            let all = members();
            let (page, next) = match r.q("cursor") {
                None => (&all[..3], "dXNlcjpVMEc5V0ZYTlo="),
                Some("dXNlcjpVMEc5V0ZYTlo=") => (&all[3..], ""),
                Some(_) => return fail("invalid_cursor"),
            };
            ok(json!({"members": page, "cache_ts": 1498777272, "response_metadata": {"next_cursor": next}}))
        }
        "users.info" => match members().into_iter().find(|m| Some(m["id"].as_str().unwrap()) == r.q("user")) {
            Some(u) => ok(json!({"user": u})),
            None => fail("user_not_found"),
        },
        "users.lookupByEmail" => {
            match members().into_iter().find(|m| Some(m["profile"]["email"].as_str().unwrap()) == r.q("email")) {
                Some(u) => ok(json!({"user": u})),
                None => fail("users_not_found"),
            }
        }
        "chat.postMessage" => {
            let ch = body["channel"].as_str().unwrap_or_default();
            let id = if ch == "#general" { "C0GENERAL1" } else { ch };
            if !is_known_channel(id) {
                return fail("channel_not_found");
            }
            let text = body["text"].as_str().unwrap_or_default();
            if text.is_empty() && body.get("blocks").is_none() {
                return fail("no_text");
            }
            let mut msg = json!({"bot_id": null, "type": "message", "text": text, "user": "U0GRACE001", "ts": "1700000500.000600", "team": "T012AB3C4"});
            if let Some(t) = body.get("thread_ts") {
                msg["thread_ts"] = t.clone();
            }
            ok(json!({"channel": id, "ts": "1700000500.000600", "message": msg}))
        }
        "chat.update" => {
            if !is_known_channel(body["channel"].as_str().unwrap_or_default()) {
                return fail("channel_not_found");
            }
            match body["ts"].as_str() {
                Some("1700000200.000300") => fail("cant_update_message"),
                Some("1700000300.000400") => ok(json!({
                    "channel": body["channel"], "ts": body["ts"], "text": body["text"],
                    "message": {"text": body["text"], "user": "U0GRACE001", "edited": {"user": "U0GRACE001", "ts": "1700000600.000000"}}
                })),
                _ => fail("message_not_found"),
            }
        }
        "conversations.open" => match body["users"].as_str() {
            Some("U0GRACE001") => ok(json!({"no_op": true, "already_open": true, "channel": {"id": "D0DMGRACE1"}})),
            Some("U0ADA00001") => ok(json!({"channel": {"id": "D0DMADA001"}})),
            Some("U0GRACE001,U0ADA00001") => ok(json!({"channel": {"id": "G0MPIMGA01"}})),
            Some(_) => fail("user_not_found"),
            None => fail("users_list_not_supplied"),
        },
        "reactions.add" => {
            if !is_known_channel(body["channel"].as_str().unwrap_or_default()) {
                return fail("channel_not_found");
            }
            if body["timestamp"].as_str() != Some("1700000300.000400") {
                return fail("message_not_found");
            }
            match body["name"].as_str() {
                Some("tada") => fail("already_reacted"),
                Some("thumbsup") | Some("eyes") => ok(json!({})),
                _ => fail("invalid_name"),
            }
        }
        "files.completeUploadExternal" => {
            let f = &body["files"][0];
            if f["id"] != "F0NEWFILE1" {
                return fail("file_not_found");
            }
            if !is_known_channel(body["channel_id"].as_str().unwrap_or_default()) {
                return fail("channel_not_found");
            }
            ok(json!({"files": [{
                "id": "F0NEWFILE1", "created": 1700000700, "timestamp": 1700000700, "name": "notes.txt",
                "title": f["title"].as_str().unwrap_or("Untitled"), "mimetype": "", "filetype": "", "pretty_type": "",
                "user": "U0GRACE001", "user_team": "T012AB3C4", "editable": false, "size": 0, "mode": "hosted",
                "is_external": false, "external_type": "", "is_public": false, "public_url_shared": false,
                "url_private": "https://files.slack.com/files-pri/T012AB3C4-F0NEWFILE1/notes.txt",
                "permalink": "https://acme.slack.com/files/U0GRACE001/F0NEWFILE1/notes.txt",
                "comments_count": 0, "shares": {}, "channels": [], "groups": [], "ims": [], "has_rich_preview": false
            }]}))
        }
        _ => unreachable!(),
    }
}

/// files.slack.com: takes the raw bytes POSTed to the upload URL and answers in plain text.
pub(crate) fn files_host(r: &Recorded) -> Reply {
    if r.method != "POST" || r.path != "/upload/v1/CwABAAAAXAoAAZuAAAAL" || r.q("sig") != Some("abc/def") {
        return Reply { status: 404, headers: vec![], body: "Not Found".into() };
    }
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/plain; charset=utf-8".into())],
        body: format!("OK - {}", r.body.len()),
    }
}

async fn slack_app_with_token(token: &str) -> (TestApp, Fake, Fake) {
    slack_app_with(token, &[]).await
}

/// Slack's API and files-host fakes and the settings that connect an App to them.
pub(crate) async fn fakes_and_env(token: &str) -> (Fake, Fake, Vec<(&'static str, String)>) {
    let api = Fake::start(slack).await;
    let files = Fake::start(files_host).await;
    let env = vec![
        ("WORKBENCH_SLACK_BASE_URL", format!("{}/api", api.url)),
        ("WORKBENCH_SLACK_FILES_BASE_URL", files.url.clone()),
        ("WORKBENCH_SLACK_TOKEN", token.into()),
    ];
    (api, files, env)
}

pub(crate) const SLACK_TOKEN: &str = TOKEN;

/// Slack's fakes and an App connected to them, with extra settings (a files folder).
async fn slack_app_with(token: &str, extra: &[(&'static str, String)]) -> (TestApp, Fake, Fake) {
    let (api, files, mut env) = fakes_and_env(token).await;
    env.extend(extra.iter().cloned());
    (app_with(&env), api, files)
}

async fn slack_app() -> (TestApp, Fake, Fake) {
    slack_app_with_token(TOKEN).await
}

fn json_body(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).expect("a JSON body")
}

fn query(r: &Recorded) -> Vec<(&str, &str)> {
    r.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[tokio::test]
async fn slack_send_message_posts_json_and_replies_in_threads() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_send_message", json!({"channel": "#general", "text": "Ship it :rocket:"})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/chat.postMessage"));
    assert_eq!(req.header("authorization"), Some(AUTH));
    assert_eq!(req.header("content-type"), Some(JSON_CT));
    assert_eq!(json_body(&req), json!({"channel": "#general", "text": "Ship it :rocket:", "unfurl_links": true}));
    assert_eq!(r, json!({"channel": "C0GENERAL1", "ts": "1700000500.000600", "time": "2023-11-14T22:21:40Z"}));

    let blocks = json!([{"type": "section", "text": {"type": "mrkdwn", "text": "*Done*"}}]);
    let r = t
        .ok(
            "slack_send_message",
            json!({"channel": "C0GENERAL1", "text": "Done", "thread_ts": "1700000300.000400", "reply_broadcast": true, "unfurl_links": false, "blocks": blocks}),
        )
        .await;
    assert_eq!(
        json_body(&api.last()),
        json!({"channel": "C0GENERAL1", "text": "Done", "unfurl_links": false, "thread_ts": "1700000300.000400", "reply_broadcast": true, "blocks": blocks})
    );
    assert_eq!(r["thread_ts"], "1700000300.000400");

    let bad = t.err("slack_send_message", json!({"channel": "C0GENERAL1", "text": "x", "reply_broadcast": true})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["problems"][0]["path"], "/reply_broadcast");

    let nf = t.err("slack_send_message", json!({"channel": "C0NOPE0001", "text": "hello"})).await;
    assert_eq!(nf["code"], "UPSTREAM_ERROR");
    assert_eq!(nf["status"], 404);
    assert!(nf["message"].as_str().unwrap().contains("channel_not_found"), "{nf}");
}

#[tokio::test]
async fn slack_send_dm_resolves_handles_emails_and_ids() {
    // Counts Slack's requests: without the outbound-data guard's lookups (`flow_guard.rs`).
    let (t, api, _) = slack_app_with(TOKEN, &[("WORKBENCH_FLOW", "off".into())]).await;
    // @handle: users.list is paged until the member is found, then conversations.open, then post.
    let r = t.ok("slack_send_dm", json!({"user": "@ada", "text": "lunch?"})).await;
    let reqs = api.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/api/users.list", "/api/users.list", "/api/conversations.open", "/api/chat.postMessage"]);
    assert_eq!(reqs[1].q("cursor"), Some("dXNlcjpVMEc5V0ZYTlo="));
    assert_eq!(json_body(&reqs[2]), json!({"users": "U0ADA00001"}));
    assert_eq!(reqs[2].header("content-type"), Some(JSON_CT));
    assert_eq!(json_body(&reqs[3]), json!({"channel": "D0DMADA001", "text": "lunch?"}));
    assert_eq!(
        r,
        json!({"channel": "D0DMADA001", "ts": "1700000500.000600", "time": "2023-11-14T22:21:40Z", "users": ["U0ADA00001"]})
    );

    let (t, api, _) = slack_app_with(TOKEN, &[("WORKBENCH_FLOW", "off".into())]).await;
    let r = t.ok("slack_send_dm", json!({"user": "grace@example.com", "text": "hi Grace"})).await;
    let reqs = api.requests();
    assert_eq!(reqs[0].path, "/api/users.lookupByEmail");
    assert_eq!(reqs[0].method, "GET");
    assert_eq!(query(&reqs[0]), [("email", "grace@example.com")]);
    assert_eq!(reqs[1].path, "/api/conversations.open");
    assert_eq!(json_body(&reqs[1]), json!({"users": "U0GRACE001"}));
    assert_eq!(reqs[2].path, "/api/chat.postMessage");
    assert_eq!(json_body(&reqs[2]), json!({"channel": "D0DMGRACE1", "text": "hi Grace"}));
    assert_eq!(r["channel"], "D0DMGRACE1");
    assert_eq!(r["users"], json!(["U0GRACE001"]));

    let (t, api, _) = slack_app_with(TOKEN, &[("WORKBENCH_FLOW", "off".into())]).await;
    let r = t.ok("slack_send_dm", json!({"user": "U0GRACE001, <@U0ADA00001>", "text": "standup?"})).await;
    let reqs = api.requests();
    assert_eq!(reqs.len(), 2, "ids need no lookup");
    assert_eq!(json_body(&reqs[0]), json!({"users": "U0GRACE001,U0ADA00001"}));
    assert_eq!(r["channel"], "G0MPIMGA01");

    let missing = t.err("slack_send_dm", json!({"user": "nobody@example.com", "text": "hi"})).await;
    assert_eq!(missing["status"], 404);
    assert!(missing["message"].as_str().unwrap().contains("users_not_found"), "{missing}");
    let nohandle = t.err("slack_send_dm", json!({"user": "@nobody", "text": "hi"})).await;
    assert!(nohandle["message"].as_str().unwrap().contains("no Slack member with the handle @nobody"), "{nohandle}");
}

#[tokio::test]
async fn slack_update_message_and_its_errors() {
    let (t, api, _) = slack_app_with(TOKEN, &[("WORKBENCH_FLOW", "off".into())]).await;
    let r = t
        .ok(
            "slack_update_message",
            json!({"channel": "#general", "ts": "1700000300.000400", "text": "Deploy is done (v2)"}),
        )
        .await;
    let reqs = api.requests();
    assert_eq!(reqs[0].path, "/api/conversations.list", "the #name is resolved to an id first");
    assert_eq!(reqs[0].q("types"), Some("public_channel,private_channel"));
    let req = reqs.last().unwrap();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/chat.update"));
    assert_eq!(req.header("content-type"), Some(JSON_CT));
    assert_eq!(
        json_body(req),
        json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "text": "Deploy is done (v2)"})
    );
    assert_eq!(
        r,
        json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "text": "Deploy is done (v2)", "updated": true})
    );

    let e =
        t.err("slack_update_message", json!({"channel": "C0GENERAL1", "ts": "1700000200.000300", "text": "x"})).await;
    assert_eq!(e["status"], 400);
    assert!(
        e["message"].as_str().unwrap().contains("cant_update_message (only messages the user posted can be edited)"),
        "{e}"
    );
    // A private channel found on the second page of conversations.list.
    let e = t.err("slack_update_message", json!({"channel": "#secret-plans", "ts": "1.2", "text": "x"})).await;
    assert!(e["message"].as_str().unwrap().contains("message_not_found"), "{e}");
    let e = t.err("slack_update_message", json!({"channel": "#nowhere", "ts": "1.2", "text": "x"})).await;
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("no channel named #nowhere"), "{e}");
}

#[tokio::test]
async fn slack_list_channels_pages_with_cursor_and_shapes() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_list_channels", json!({"limit": 2})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/conversations.list"));
    assert_eq!(req.header("authorization"), Some(AUTH));
    assert_eq!(
        query(&req),
        [("types", "public_channel,private_channel"), ("exclude_archived", "true"), ("limit", "2")]
    );
    assert_eq!(
        r["channels"][0],
        json!({
            "id": "C0GENERAL1", "name": "general", "type": "public_channel", "topic": "Company-wide announcements",
            "purpose": "This channel is for general.", "members": 42, "is_member": true, "created": "2015-12-04T18:14:49Z"
        })
    );
    assert_eq!(r["next_cursor"], PAGE2);
    let r2 = t
        .ok(
            "slack_list_channels",
            json!({"cursor": PAGE2, "types": ["private_channel", "im"], "exclude_archived": false}),
        )
        .await;
    let req = api.last();
    assert_eq!(req.q("cursor"), Some(PAGE2));
    assert_eq!(req.q("types"), Some("private_channel,im"));
    assert_eq!(req.q("exclude_archived"), Some("false"));
    assert_eq!(r2["channels"][0]["type"], "private_channel");
    assert!(r2.get("next_cursor").is_none(), "an empty next_cursor means the last page");

    let raw = t.ok("slack_list_channels", json!({"include_raw": true})).await;
    assert_eq!(raw["raw"][0]["previous_names"], json!(["old-name"]));
}

#[tokio::test]
async fn slack_list_messages_shapes_history_and_pages() {
    let (t, api, _) = slack_app().await;
    let r = t
        .ok(
            "slack_list_messages",
            json!({"channel": "C0GENERAL1", "limit": 2, "oldest": "2023-11-14", "latest": "1700000999.000000"}),
        )
        .await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/conversations.history"));
    assert_eq!(
        query(&req),
        [("channel", "C0GENERAL1"), ("oldest", "1699920000"), ("latest", "1700000999.000000"), ("limit", "2")]
    );
    assert_eq!(
        r["messages"][0],
        json!({
            "ts": "1700000300.000400", "time": "2023-11-14T22:18:20Z", "user": "U0GRACE001", "text": "Deploy is done :rocket:",
            "reply_count": 2, "latest_reply": "2023-11-14T22:20:00Z", "reactions": [{"emoji": "tada", "count": 2}]
        })
    );
    assert_eq!(r["messages"][1]["edited"], true);
    let cursor = r["next_cursor"].as_str().unwrap().to_string();

    let r2 = t.ok("slack_list_messages", json!({"channel": "C0GENERAL1", "limit": 2, "cursor": cursor})).await;
    assert_eq!(api.last().q("cursor"), Some(cursor.as_str()));
    assert_eq!(
        r2["messages"][0],
        json!({"ts": "1700000100.000200", "time": "2023-11-14T22:15:00Z", "user": "B0BOTBOT01", "user_name": "deploybot", "subtype": "bot_message", "text": "Build #42 passed"})
    );
    assert_eq!(
        r2["messages"][1]["files"],
        json!([{"id": "F0RUNBOOK1", "name": "runbook.pdf", "title": "Runbook", "type": "pdf", "permalink": "https://acme.slack.com/files/U0GRACE001/F0RUNBOOK1/runbook.pdf"}])
    );
    assert!(r2.get("next_cursor").is_none());

    let bad = t.err("slack_list_messages", json!({"channel": "C0GENERAL1", "oldest": "last tuesday"})).await;
    assert_eq!(bad["code"], "INVALID_ARGUMENTS");
    assert_eq!(bad["problems"][0]["path"], "/oldest");

    let scope = t.err("slack_list_messages", json!({"channel": "G0SECRET01"})).await;
    assert_eq!(scope["status"], 403);
    let msg = scope["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("needed scope: groups:history"), "{scope}");
}

#[tokio::test]
async fn slack_list_messages_is_smaller_than_the_raw_history() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_list_messages", json!({"channel": "C0GENERAL1"})).await;
    let raw = t.ok("slack_list_messages", json!({"channel": "C0GENERAL1", "include_raw": true})).await;
    assert_eq!(api.requests().len(), 2);
    let raw_bytes = raw["raw"].to_string().len();
    let shaped = r.to_string().len();
    eprintln!("slack_list_messages: raw {raw_bytes} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw_bytes, "{shaped} >= {raw_bytes}");
    let users =
        t.ok("slack_list_users", json!({"include_raw": true, "include_bots": true, "include_deleted": true})).await;
    let raw_bytes = users["raw"].to_string().len();
    let mut shaped = users.clone();
    shaped.as_object_mut().unwrap().remove("raw");
    let shaped = shaped.to_string().len();
    eprintln!("slack_list_users: raw {raw_bytes} bytes -> shaped {shaped} bytes");
    assert!(shaped * 2 < raw_bytes, "{shaped} vs {raw_bytes}");
}

#[tokio::test]
async fn slack_get_thread_returns_parent_and_replies() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_get_thread", json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "limit": 50})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/conversations.replies"));
    assert_eq!(query(&req), [("channel", "C0GENERAL1"), ("ts", "1700000300.000400"), ("limit", "50")]);
    assert_eq!(r["thread_ts"], "1700000300.000400");
    let msgs = r["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert!(msgs[0].get("thread_ts").is_none(), "the parent is not marked as a reply");
    assert_eq!(
        msgs[1],
        json!({"ts": "1700000350.000450", "time": "2023-11-14T22:19:10Z", "user": "U0ADA00001", "text": "Nice, thanks!", "thread_ts": "1700000300.000400"})
    );
    assert!(r.get("next_cursor").is_none());
    let e = t.err("slack_get_thread", json!({"channel": "C0GENERAL1", "ts": "1.1"})).await;
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("thread_not_found"));
}

#[tokio::test]
async fn slack_search_messages_pages_and_rate_limits() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_search_messages", json!({"query": "deploy in:#general", "sort": "newest", "limit": 1})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/search.messages"));
    assert_eq!(
        query(&req),
        [("query", "deploy in:#general"), ("sort", "timestamp"), ("sort_dir", "desc"), ("count", "1"), ("page", "1")]
    );
    assert_eq!(r["total"], 3);
    assert_eq!(
        r["matches"][0],
        json!({
            "channel": {"id": "C0GENERAL1", "name": "general"}, "ts": "1700000301.000400", "time": "2023-11-14T22:18:21Z",
            "user": "U0GRACE001", "user_name": "grace", "text": "Deploy is done (page 1) for deploy in:#general",
            "permalink": "https://acme.slack.com/archives/C0GENERAL1/p1700000301000400"
        })
    );
    assert_eq!(r["next_cursor"], "2");
    let last = t.ok("slack_search_messages", json!({"query": "deploy", "cursor": "3"})).await;
    assert_eq!(api.last().q("page"), Some("3"));
    assert_eq!(api.last().q("sort"), Some("score"));
    assert!(last.get("next_cursor").is_none());

    let rl = t.err("slack_search_messages", json!({"query": "slow"})).await;
    assert_eq!(rl["code"], "RATE_LIMITED");
    assert_eq!(rl["retry_after_seconds"], 120);
    assert!(rl["message"].as_str().unwrap().contains("ratelimited"), "{rl}");
}

#[tokio::test]
async fn slack_list_users_filters_bots_and_deactivated_accounts() {
    let (t, api, _) = slack_app().await;
    let r = t.ok("slack_list_users", json!({"limit": 3})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/users.list"));
    assert_eq!(query(&req), [("limit", "3")]);
    assert_eq!(
        r["users"],
        json!([{
            "id": "U0GRACE001", "handle": "grace", "real_name": "Grace Hopper", "display_name": "grace", "title": "Staff Engineer",
            "email": "grace@example.com", "tz": "America/Los_Angeles", "is_admin": true
        }]),
        "Slackbot and the deactivated account are left out"
    );
    let cursor = r["next_cursor"].as_str().unwrap();
    let r2 = t.ok("slack_list_users", json!({"cursor": cursor, "include_bots": true})).await;
    let ids: Vec<&str> = r2["users"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["B0BOTBOT01", "U0ADA00001"]);
    assert_eq!(r2["users"][0]["is_bot"], true);
    assert!(r2.get("next_cursor").is_none());
}

#[tokio::test]
async fn slack_get_user_by_id_handle_and_email() {
    let (t, api, _) = slack_app().await;
    let u = t.ok("slack_get_user", json!({"user": "U0ADA00001"})).await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/users.info"));
    assert_eq!(query(&req), [("user", "U0ADA00001")]);
    assert_eq!(
        u,
        json!({
            "id": "U0ADA00001", "handle": "ada", "real_name": "Ada Lovelace", "display_name": "ada", "title": "Staff Engineer",
            "email": "ada@example.com", "tz": "America/Los_Angeles", "phone": "+1 555 0100", "tz_label": "Pacific Standard Time",
            "status": ":mountain_railway: Riding a train", "role": "admin", "team_id": "T012AB3C4",
            "image": "https://secure.gravatar.com/avatar/x-192.jpg"
        })
    );
    let by_mail = t.ok("slack_get_user", json!({"email": "grace@example.com"})).await;
    assert_eq!(api.last().path, "/api/users.lookupByEmail");
    assert_eq!(by_mail["id"], "U0GRACE001");
    let by_handle = t.ok("slack_get_user", json!({"user": "@Grace"})).await;
    assert_eq!(api.last().path, "/api/users.list");
    assert_eq!(by_handle["real_name"], "Grace Hopper");

    let neither = t.err("slack_get_user", json!({})).await;
    assert_eq!(neither["code"], "INVALID_ARGUMENTS");
    let unknown = t.err("slack_get_user", json!({"user": "U0NOBODY01"})).await;
    assert_eq!(unknown["status"], 404);
    assert!(unknown["message"].as_str().unwrap().contains("user_not_found"));
}

#[tokio::test]
async fn slack_add_reaction_strips_colons_and_tolerates_repeats() {
    let (t, api, _) = slack_app().await;
    let r = t
        .ok("slack_add_reaction", json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "emoji": ":thumbsup:"}))
        .await;
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/api/reactions.add"));
    assert_eq!(req.header("content-type"), Some(JSON_CT));
    assert_eq!(json_body(&req), json!({"channel": "C0GENERAL1", "timestamp": "1700000300.000400", "name": "thumbsup"}));
    assert_eq!(r, json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "emoji": "thumbsup", "added": true}));
    let again =
        t.ok("slack_add_reaction", json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "emoji": "tada"})).await;
    assert_eq!(again["already_reacted"], true);
    let bad = t
        .err("slack_add_reaction", json!({"channel": "C0GENERAL1", "ts": "1700000300.000400", "emoji": "not-an-emoji"}))
        .await;
    assert!(bad["message"].as_str().unwrap().contains("invalid_name (no such emoji)"), "{bad}");
}

#[tokio::test]
async fn slack_upload_file_runs_the_three_step_external_upload() {
    let dir = tempfile::tempdir().unwrap();
    let (t, api, files) = slack_app_with(TOKEN, &[files_dir(dir.path()), ("WORKBENCH_FLOW", "off".into())]).await;
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, b"line one\nline two\n").unwrap();
    let r = t
        .ok(
            "slack_upload_file",
            json!({"channel": "C0GENERAL1", "path": path.to_str().unwrap(), "title": "Notes", "initial_comment": "see attached", "thread_ts": "1700000300.000400"}),
        )
        .await;
    let reqs = api.requests();
    assert_eq!(reqs[0].path, "/api/files.getUploadURLExternal");
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].header("authorization"), Some(AUTH));
    let f = form(&reqs[0].body);
    assert_eq!((f["filename"].as_str(), f["length"].as_str()), ("notes.txt", "18"));
    let up = files.last();
    assert_eq!(up.path, "/upload/v1/CwABAAAAXAoAAZuAAAAL", "the bytes go to the files host, not slack.com");
    assert_eq!(up.q("sig"), Some("abc/def"), "the upload URL's query is kept as Slack signed it");
    assert_eq!(up.body, b"line one\nline two\n");
    assert_eq!(up.header("content-type"), Some("application/octet-stream"));
    let done = &reqs[1];
    assert_eq!(done.path, "/api/files.completeUploadExternal");
    assert_eq!(done.header("content-type"), Some(JSON_CT));
    assert_eq!(
        json_body(done),
        json!({"files": [{"id": "F0NEWFILE1", "title": "Notes"}], "channel_id": "C0GENERAL1", "initial_comment": "see attached", "thread_ts": "1700000300.000400"})
    );
    assert_eq!(
        r,
        json!({
            "file_id": "F0NEWFILE1", "name": "notes.txt", "title": "Notes", "size": 18,
            "permalink": "https://acme.slack.com/files/U0GRACE001/F0NEWFILE1/notes.txt", "channel": "C0GENERAL1",
            "thread_ts": "1700000300.000400"
        })
    );

    let (t, api, files) = slack_app_with(TOKEN, &[("WORKBENCH_FLOW", "off".into())]).await;
    t.ok("slack_upload_file", json!({"channel": "#general", "content": "a,b\n1,2\n", "filename": "data.csv"})).await;
    assert_eq!(files.last().body, b"a,b\n1,2\n");
    let reqs = api.requests();
    assert_eq!(reqs[0].path, "/api/conversations.list", "#general is resolved to its id for channel_id");
    assert_eq!(json_body(&reqs[2])["channel_id"], "C0GENERAL1");
    let f = form(&reqs[1].body);
    assert_eq!((f["filename"].as_str(), f["length"].as_str()), ("data.csv", "8"));
    let both = t
        .err("slack_upload_file", json!({"channel": "C0GENERAL1", "content": "x", "path": "/tmp/x", "filename": "x"}))
        .await;
    assert_eq!(both["code"], "INVALID_ARGUMENTS");
    let unnamed = t.err("slack_upload_file", json!({"channel": "C0GENERAL1", "content": "x"})).await;
    assert_eq!(unnamed["problems"][0]["path"], "/filename");
    // A relative path is taken inside the files folder (this App's is a refused one).
    let relative = t.err("slack_upload_file", json!({"channel": "C0GENERAL1", "path": "notes.txt"})).await;
    assert!(relative["message"].as_str().unwrap().contains("WORKBENCH_FILES_DIR"), "{relative}");
}

#[tokio::test]
async fn slack_rejected_token_asks_to_reconnect() {
    let (t, _, _) = slack_app_with_token("xoxp-revoked-0000").await;
    let e = t.err("slack_list_channels", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("reconnect") && msg.contains("invalid_auth"), "{e}");
}

#[tokio::test]
async fn slack_identity_names_the_user_and_workspace() {
    let (t, api, _) = slack_app().await;
    let fields = |token: &str| {
        let mut f = HashMap::new();
        f.insert("token".to_string(), workbench::secrets::Secret::new(token.to_string()));
        workbench::auth::from_fields(&plugins::slack::INTEGRATION, f, workbench::auth::Source::Store)
    };
    let label = workbench::send::verify_identity(&t.app, &plugins::slack::INTEGRATION, fields(TOKEN)).await;
    assert_eq!(label.unwrap().as_deref(), Some("grace @ Acme Corp"));
    let req = api.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/api/auth.test"));
    assert_eq!(req.header("authorization"), Some(AUTH));
    // Slack rejects a bad token with HTTP 200 and ok:false; the identity check must still fail.
    let bad = workbench::send::verify_identity(&t.app, &plugins::slack::INTEGRATION, fields("xoxp-bad")).await;
    let err = bad.unwrap_err().to_string();
    assert!(err.contains("rejected this credential") && err.contains("invalid_auth"), "{err}");
}
