//! Attacks of a prompt-injected agent on the user's approvals, policies and secrets (issue 13
//! items 5, 6 and 10): each test is one attack that worked before, and what holds now.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use workbench::engine::Hooks;
use workbench::engine::policy::Approval;

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, app_with, recording};

const DEPLOY_PASSWORD: &str = "correct horse battery staple 42";
const GITHUB_TOKEN: &str = "github-test-token-not-token-shaped";
const TODOIST_TOKEN: &str = "todoist-credential-value-0042";

async fn batch(t: &TestApp, hooks: &Hooks, args: Value) -> workbench::meta::Answer {
    workbench::meta::call_with(&t.app, "execute_tools", args, hooks).await.unwrap()
}

async fn run(t: &TestApp, hooks: &Hooks, tool: &str, args: Value) -> Value {
    batch(t, hooks, json!({"executions": [{"tool": tool, "args": args}]})).await.body["results"][0].clone()
}

/// A GitHub that stores issue bodies and gives them back, like the real one.
async fn github() -> Fake {
    let issues: Arc<Mutex<Vec<String>>> = Arc::default();
    Fake::start(move |r| {
        if r.header("authorization") != Some(&format!("Bearer {GITHUB_TOKEN}")) {
            return Reply::json(401, json!({"message": "Bad credentials"}));
        }
        let issue = |n: usize, body: &str| {
            json!({"number": n, "title": "t", "body": body, "state": "open", "html_url": format!("https://github.com/o/r/issues/{n}"),
                   "user": {"login": "u"}, "labels": [], "assignees": [], "comments": 0,
                   "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"})
        };
        match (r.method.as_str(), r.path.as_str()) {
            ("POST", "/repos/o/r/issues") => {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or_default();
                let text = body["body"].as_str().unwrap_or_default().to_string();
                let mut all = issues.lock().unwrap();
                all.push(text.clone());
                Reply::json(201, issue(all.len(), &text))
            }
            ("GET", p) if p.starts_with("/repos/o/r/issues/") => {
                let n: usize = p.trim_start_matches("/repos/o/r/issues/").parse().unwrap_or(0);
                match issues.lock().unwrap().get(n.wrapping_sub(1)) {
                    Some(text) => Reply::json(200, issue(n, text)),
                    // The real API quotes nothing back, but a service may: errors are scrubbed too.
                    None => Reply::json(404, json!({"message": format!("Not Found: {}", r.path)})),
                }
            }
            ("PATCH", p) if p.starts_with("/repos/o/r/issues/") => {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or_default();
                Reply::json(422, json!({"message": format!("Validation failed for {}", body["body"])}))
            }
            _ => Reply::json(404, json!({"message": "Not Found"})),
        }
    })
    .await
}

async fn github_app(fake: &Fake) -> TestApp {
    let t =
        app_with(&[("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()), ("WORKBENCH_GITHUB_TOKEN", GITHUB_TOKEN.into())]);
    t.ok(
        "vault_set_secret",
        json!({"name": "DEPLOY_PASSWORD", "value": DEPLOY_PASSWORD, "allowed_hosts": [crate::support::fake_origin(fake)]}),
    )
    .await;
    t
}

/// Item 6: the vault value written upstream by one step and read back by the next never comes
/// back in clear: not in the step's result, not in a `return` projection.
#[tokio::test]
async fn a_vault_value_written_then_read_back_in_one_compose_is_scrubbed() {
    let fake = github().await;
    let t = github_app(&fake).await;
    let out = t
        .call(
            "execute_tools",
            json!({
                "compose": true,
                "executions": [
                    {"ref_id": "wr", "tool": "github_create_issue", "args": {"owner": "o", "repo": "r", "title": "x", "body": "{{vault:DEPLOY_PASSWORD}}"}},
                    {"ref_id": "rd", "tool": "github_get_issue", "args": {"owner": "o", "repo": "r", "issue_number": "{{step:wr.number}}"}}
                ],
                "return": {"leak": "{{step:rd.body}}", "also": "{{step:wr}}"}
            }),
        )
        .await;
    assert!(!out.is_error, "{}", out.body);
    // The password really went upstream (the user allowed that host) ...
    assert_eq!(fake.requests()[0].method, "POST");
    assert!(String::from_utf8_lossy(&fake.requests()[0].body).contains(DEPLOY_PASSWORD));
    // ... and never came back.
    let text = out.body.to_string();
    assert!(!text.contains(DEPLOY_PASSWORD), "{text}");
    assert_eq!(out.body["result"]["leak"], "[redacted]", "{text}");
}

/// Item 6, across separate calls and kinds of output: a later execute_tools call (a plain read
/// that resolves no vault ref itself), an upstream error message quoting the value, and a
/// connection secret of another integration read earlier in the process.
#[tokio::test]
async fn secrets_used_earlier_in_the_process_never_reach_the_agent_later() {
    let fake = github().await;
    let todoist = Fake::start(|r| {
        if r.header("authorization") != Some(&format!("Bearer {TODOIST_TOKEN}")) {
            return Reply::json(401, json!({"error": "Unauthorized"}));
        }
        Reply::json(200, json!({"results": [], "next_cursor": null}))
    })
    .await;
    let t = app_with(&[
        ("WORKBENCH_GITHUB_BASE_URL", fake.url.clone()),
        ("WORKBENCH_GITHUB_TOKEN", GITHUB_TOKEN.into()),
        ("WORKBENCH_TODOIST_BASE_URL", todoist.url.clone()),
        ("WORKBENCH_TODOIST_TOKEN", TODOIST_TOKEN.into()),
    ]);
    t.ok(
        "vault_set_secret",
        json!({"name": "DEPLOY_PASSWORD", "value": DEPLOY_PASSWORD, "allowed_hosts": [crate::support::fake_origin(&fake)]}),
    )
    .await;
    t.ok("github_create_issue", json!({"owner": "o", "repo": "r", "title": "x", "body": "{{vault:DEPLOY_PASSWORD}}"}))
        .await;
    // Todoist's credential is read once in this process.
    t.ok("todoist_list_projects", json!({})).await;
    // The agent plants the Todoist token in an issue (it learned it nowhere, but a service could
    // echo it): a GitHub call later must not show it.
    t.ok(
        "github_create_issue",
        json!({"owner": "o", "repo": "r", "title": "y", "body": format!("tok {TODOIST_TOKEN}")}),
    )
    .await;

    let first = t.ok("github_get_issue", json!({"owner": "o", "repo": "r", "issue_number": 1})).await;
    assert_eq!(first["body"], "[redacted]", "{first}");
    let second = t.ok("github_get_issue", json!({"owner": "o", "repo": "r", "issue_number": 2})).await;
    assert_eq!(second["body"], "tok [redacted]", "{second}");
    // An error message that quotes the value.
    let err = t
        .err(
            "github_update_issue",
            json!({"owner": "o", "repo": "r", "issue_number": 1, "body": "{{vault:DEPLOY_PASSWORD}}"}),
        )
        .await;
    assert!(!err.to_string().contains(DEPLOY_PASSWORD), "{err}");
    // The audit log never has it either.
    let log = t.ok("audit_search_log", json!({"limit": 50})).await;
    assert!(!log.to_string().contains(DEPLOY_PASSWORD) && !log.to_string().contains(TODOIST_TOKEN), "{log}");
}

fn acme_definition(base: &str, delete_mutating: Option<bool>) -> Value {
    let mut delete = json!({
        "tool_name": "acme_delete_item",
        "method": "DELETE",
        "path": "/items/{item_id}",
        "description": "Delete an item",
        "params": {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}
    });
    if let Some(m) = delete_mutating {
        delete["mutating"] = json!(m);
    }
    json!({
        "name": "acme",
        "base_url": format!("{base}/v1"),
        "operations": [
            {"tool_name": "acme_list_items", "method": "GET", "path": "/items", "description": "List items"},
            {"tool_name": "acme_create_item", "method": "POST", "path": "/items", "description": "Create an item",
             "params": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
            delete
        ]
    })
}

async fn acme() -> Fake {
    Fake::start(|r| match r.method.as_str() {
        "GET" => Reply::json(200, json!({"items": []})),
        _ => Reply::json(200, json!({"ok": true})),
    })
    .await
}

fn acme_app(fake: &Fake, policy: Option<&str>) -> TestApp {
    let mut env = crate::support::private_origin_env(fake);
    if let Some(p) = policy {
        env.push(("WORKBENCH_POLICY_ACME", p.to_string()));
    }
    app_with(&env)
}

/// Item 5: defining a custom app changes what workbench may do, so it needs the user's yes by
/// default; a declined definition is not stored, and the question shows where requests will go.
#[tokio::test]
async fn defining_a_custom_app_asks_the_user_and_shows_where_it_sends() {
    let fake = acme().await;
    let t = acme_app(&fake, None);
    let (deny, asked) = recording(Approval::Declined("no".into()));
    let r = run(&t, &deny, "custom_create_app", acme_definition(&fake.url, None)).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    let question = asked.lock().unwrap()[0].summary.clone();
    assert!(question.contains(&format!("{}/v1", fake.url)), "{question}");
    assert!(question.contains(&format!("DELETE {}/v1/items/{{item_id}}", fake.url)), "{question}");
    assert!(t.app.registry().get("acme_list_items").is_none(), "nothing was stored");
    // Deleting one asks too.
    let (yes, _) = recording(Approval::Approved);
    run(&t, &yes, "custom_create_app", acme_definition(&fake.url, None)).await;
    let (deny, asked) = recording(Approval::Declined("no".into()));
    let r = run(&t, &deny, "custom_delete_app", json!({"name": "acme"})).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(t.app.registry().get("acme_list_items").is_some());
}

/// Item 5: the attack itself. Under `WORKBENCH_POLICY_ACME=read_only` a DELETE is refused; the
/// agent redefines the app with `"mutating": false` on it. The definition is refused, and even a
/// stored definition saying so (written before this rule) cannot make the DELETE a read.
#[tokio::test]
async fn a_definition_cannot_turn_a_delete_into_a_read() {
    let fake = acme().await;
    let t = acme_app(&fake, Some("read_only"));
    let (yes, _) = recording(Approval::Approved);
    let created = run(&t, &yes, "custom_create_app", acme_definition(&fake.url, None)).await;
    assert!(created.get("result").is_some(), "{created}");
    let r = run(&t, &yes, "acme_delete_item", json!({"item_id": "7"})).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("WORKBENCH_POLICY_ACME"), "{r}");

    let lowered = run(&t, &yes, "custom_create_app", acme_definition(&fake.url, Some(false))).await;
    assert_eq!(lowered["error"]["code"], "INVALID_ARGUMENTS", "{lowered}");
    assert!(lowered.to_string().contains("/operations/2/mutating"), "{lowered}");

    // A definition stored by hand (an older workbench) with mutating: false.
    let def = acme_definition(&fake.url, Some(false));
    t.app.storage.put_custom_app("acme".into(), def.to_string()).await.unwrap();
    let entry = t.app.registry().get("acme_delete_item").map(|e| e.mutating());
    assert_eq!(entry, Some(true));
    let r = run(&t, &yes, "acme_delete_item", json!({"item_id": "7"})).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    assert!(fake.requests().iter().all(|r| r.method == "GET"), "no write reached the service");
    // Reads still work under read_only.
    let r = run(&t, &yes, "acme_list_items", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
}

/// Item 5: the question for a custom operation shows the method, full URL and scrubbed body that
/// will really be sent, not only the agent-written name and description.
#[tokio::test]
async fn the_approval_question_shows_the_real_request() {
    let fake = acme().await;
    let t = acme_app(&fake, Some("confirm"));
    let (yes, _) = recording(Approval::Approved);
    run(&t, &yes, "custom_create_app", acme_definition(&fake.url, None)).await;
    let (deny, asked) = recording(Approval::Declined("no".into()));
    let r = run(&t, &deny, "acme_delete_item", json!({"item_id": "7/../../admin"})).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    let q = asked.lock().unwrap()[0].summary.clone();
    assert!(q.contains(&format!("DELETE {}/v1/items/7%2F..%2F..%2Fadmin", fake.url)), "{q}");
    let r = run(&t, &deny, "acme_create_item", json!({"name": "widget"})).await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    let q = asked.lock().unwrap()[1].summary.clone();
    assert!(q.contains(&format!("POST {}/v1/items", fake.url)) && q.contains(r#"Body: {"name":"widget"}"#), "{q}");
    assert!(fake.requests().is_empty(), "nothing was sent");
}

/// Item 5: replacing an existing vault secret's value or hosts needs the user's yes; a new one
/// does not.
#[tokio::test]
async fn overwriting_a_vault_secret_needs_approval() {
    let t = app_with(&[]);
    let (deny, asked) = recording(Approval::Declined("no".into()));
    let r = run(
        &t,
        &deny,
        "vault_set_secret",
        json!({"name": "K", "value": "first-value-1", "allowed_hosts": ["api.example.com"]}),
    )
    .await;
    assert!(r.get("result").is_some(), "a new secret is stored without a question: {r}");
    assert!(asked.lock().unwrap().is_empty());
    let r = run(
        &t,
        &deny,
        "vault_set_secret",
        json!({"name": "K", "value": "attacker-value", "allowed_hosts": ["evil.example"]}),
    )
    .await;
    assert_eq!(r["error"]["code"], "POLICY_DENIED", "{r}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(!asked.lock().unwrap()[0].summary.contains("attacker-value"), "the value is not shown");
    let meta = t.app.storage.vault_meta("K".into()).await.unwrap().unwrap();
    assert_eq!(meta.allowed_hosts, vec!["api.example.com".to_string()], "hosts unchanged");
    let value = t.app.vault.resolve_for_hosts("K", &["api.example.com".into()]).await.unwrap();
    assert_eq!(value.expose(), "first-value-1", "value unchanged");
}

/// Item 10: a misspelled policy (`ro`, `read only`) used to fall back to the default and allow
/// writes; now that integration's writes are refused with an error naming the variable and the
/// accepted values, reads still work, and `workbench doctor` FAILs.
#[tokio::test]
async fn a_misspelled_policy_fails_closed() {
    let todoist = Fake::start(|r| match r.method.as_str() {
        "GET" => Reply::json(200, json!({"results": [], "next_cursor": null})),
        _ => Reply::json(200, json!({"id": "t1", "content": "x", "project_id": "p"})),
    })
    .await;
    for (var, value) in [("WORKBENCH_POLICY_TODOIST", "ro"), ("WORKBENCH_POLICY_DEFAULT", "read only")] {
        let t = app_with(&[
            ("WORKBENCH_TODOIST_BASE_URL", todoist.url.clone()),
            ("WORKBENCH_TODOIST_TOKEN", TODOIST_TOKEN.into()),
            (var, value.into()),
        ]);
        let (yes, asked) = recording(Approval::Approved);
        let w = run(&t, &yes, "todoist_create_task", json!({"content": "x"})).await;
        assert_eq!(w["error"]["code"], "POLICY_DENIED", "{w}");
        let message = w["error"]["message"].as_str().unwrap();
        assert!(message.contains(var) && message.contains("read_only"), "{message}");
        assert!(asked.lock().unwrap().is_empty(), "a broken policy is not a question");
        let r = run(&t, &yes, "todoist_list_projects", json!({})).await;
        assert!(r.get("result").is_some(), "{r}");
        let checks = workbench::doctor::run(&Ok(t.app.settings.clone()), None, None, &Default::default());
        let policy = checks.iter().find(|c| c.name == "policies").unwrap();
        assert_eq!(policy.level, workbench::doctor::Level::Fail, "{}", policy.detail);
        assert!(policy.detail.contains(var), "{}", policy.detail);
    }
    assert!(todoist.requests().iter().all(|r| r.method == "GET"), "nothing was written");
}

/// Item 10: a request budget that does not parse sends nothing to that integration (it used to
/// fall back to the catalogue's budget with a log line).
#[tokio::test]
async fn a_misspelled_rate_limit_fails_closed() {
    let todoist = Fake::start(|_| Reply::json(200, json!({"results": [], "next_cursor": null}))).await;
    let t = app_with(&[
        ("WORKBENCH_TODOIST_BASE_URL", todoist.url.clone()),
        ("WORKBENCH_TODOIST_TOKEN", TODOIST_TOKEN.into()),
        ("WORKBENCH_TODOIST_RATE_LIMIT", "100 per minute".into()),
    ]);
    let e = t.err("todoist_list_projects", json!({})).await;
    assert_eq!(e["code"], "POLICY_DENIED", "{e}");
    assert!(e["message"].as_str().unwrap().contains("WORKBENCH_TODOIST_RATE_LIMIT"), "{e}");
    assert!(todoist.requests().is_empty());
    let checks = workbench::doctor::run(&Ok(t.app.settings.clone()), None, None, &Default::default());
    assert!(checks.iter().any(|c| c.name == "policies" && c.level == workbench::doctor::Level::Fail));
}
