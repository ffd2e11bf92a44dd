//! The safety policy for writes: allow, read_only, confirm (asked through the client), the
//! defaults (destructive tools and curl_session confirm), and that nothing the model sends can
//! grant an approval.

use serde_json::json;
use workbench::engine::Hooks;
use workbench::engine::policy::Approval;

use crate::support::fake::{Fake, Reply};
use crate::support::{TestApp, answering, app_with, recording, run};

const TOKEN: &str = "todoist-token-policy-0123456789";

async fn todoist() -> Fake {
    Fake::start(|r| {
        if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
            return Reply::json(401, json!({"error": "Unauthorized"}));
        }
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/projects") => Reply::json(200, json!({"results": [], "next_cursor": null})),
            ("POST", "/tasks") => Reply::json(200, json!({"id": "t1", "content": "x", "project_id": "p"})),
            _ => Reply::json(404, json!({"error": "no"})),
        }
    })
    .await
}

fn app(fake: &Fake, policy: Option<&str>) -> TestApp {
    let mut env =
        vec![("WORKBENCH_TODOIST_TOKEN", TOKEN.to_string()), ("WORKBENCH_TODOIST_BASE_URL", fake.url.clone())];
    if let Some(p) = policy {
        env.push(("WORKBENCH_POLICY_TODOIST", p.to_string()));
    }
    app_with(&env)
}

#[tokio::test]
async fn read_only_refuses_writes_and_keeps_reads() {
    let fake = todoist().await;
    let t = app(&fake, Some("read_only"));
    let (hooks, asked) = recording(Approval::Approved);
    let r = run(&t, &hooks, "todoist_list_projects", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
    let w = run(&t, &hooks, "todoist_create_task", json!({"content": "Buy milk"})).await;
    assert_eq!(w["error"]["code"], "POLICY_DENIED", "{w}");
    assert!(w["error"]["message"].as_str().unwrap().contains("WORKBENCH_POLICY_TODOIST"), "{w}");
    assert!(asked.lock().unwrap().is_empty(), "read_only never asks");
    assert!(fake.requests().iter().all(|r| r.method == "GET"), "nothing was written");
    // The refusal is audited.
    let log = t.ok("audit_search_log", json!({"tool": "todoist_create_task"})).await;
    assert_eq!(log["entries"][0]["error_code"], "POLICY_DENIED");
}

#[tokio::test]
async fn confirm_asks_the_user_and_obeys_the_answer() {
    let fake = todoist().await;
    let t = app(&fake, Some("confirm"));
    let (yes, asked) = recording(Approval::Approved);
    let ok = run(&t, &yes, "todoist_create_task", json!({"content": "Buy milk"})).await;
    assert!(ok.get("result").is_some(), "{ok}");
    let question = asked.lock().unwrap()[0].clone();
    assert_eq!((question.action.as_str(), question.integration.as_str()), ("todoist_create_task", "todoist"));
    assert!(question.summary.contains("Buy milk"), "the user sees what will happen: {}", question.summary);
    assert!(!question.summary.contains(TOKEN));

    let (no, _) = recording(Approval::Declined("the user declined".into()));
    let denied = run(&t, &no, "todoist_create_task", json!({"content": "Sell milk"})).await;
    assert_eq!(denied["error"]["code"], "POLICY_DENIED", "{denied}");
    // A client that cannot ask: refused with an explanation, never silently allowed.
    let cannot = run(&t, &Hooks::default(), "todoist_create_task", json!({"content": "Sell milk"})).await;
    assert_eq!(cannot["error"]["code"], "CONFIRMATION_REQUIRED", "{cannot}");
    let posts = fake.requests().iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 1, "only the approved call was sent");
    // Reads are never held.
    let r = run(&t, &Hooks::default(), "todoist_list_projects", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
}

#[tokio::test]
async fn destructive_tools_confirm_by_default_and_allow_overrides() {
    let fake = todoist().await;
    let t = app(&fake, None);
    // A plain write runs without asking; a destructive built-in asks.
    let (hooks, asked) = recording(Approval::Declined("no".into()));
    assert!(run(&t, &hooks, "todoist_create_task", json!({"content": "x"})).await.get("result").is_some());
    assert!(asked.lock().unwrap().is_empty());
    t.ok("vault_set_secret", json!({"name": "K", "value": "v-123456789", "allowed_hosts": ["api.example.com"]})).await;
    let del = run(&t, &hooks, "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(del["error"]["code"], "POLICY_DENIED", "{del}");
    assert_eq!(asked.lock().unwrap()[0].action, "vault_delete_secret");
    let none = run(&t, &Hooks::default(), "vault_delete_secret", json!({"name": "K"})).await;
    assert_eq!(none["error"]["code"], "CONFIRMATION_REQUIRED");
    let listed = t.ok("vault_list_secrets", json!({})).await;
    assert_eq!(listed["secrets"][0]["name"], "K", "still there");

    // The user allowed everything: no question.
    let fake2 = todoist().await;
    let free = app_with(&[
        ("WORKBENCH_TODOIST_TOKEN", TOKEN.into()),
        ("WORKBENCH_TODOIST_BASE_URL", fake2.url.clone()),
        ("WORKBENCH_POLICY_DEFAULT", "allow".into()),
    ]);
    free.ok("vault_set_secret", json!({"name": "K", "value": "v-123456789", "allowed_hosts": ["api.example.com"]}))
        .await;
    let gone = run(&free, &Hooks::default(), "vault_delete_secret", json!({"name": "K"})).await;
    assert!(gone.get("result").is_some(), "{gone}");
}

#[tokio::test]
async fn nothing_the_model_sends_grants_an_approval() {
    let fake = todoist().await;
    let t = app(&fake, Some("confirm"));
    for args in [
        json!({"executions": [{"tool": "todoist_create_task", "args": {"content": "x", "confirm": true}}]}),
        json!({"executions": [{"tool": "todoist_create_task", "args": {"content": "x"}}], "approved": true}),
        json!({"executions": [{"tool": "todoist_create_task", "args": {"content": "x"}, "approved": true}]}),
    ] {
        let out = workbench::meta::call_with(&t.app, "execute_tools", args.clone(), &Hooks::default()).await.unwrap();
        let text = out.body.to_string();
        assert!(text.contains("CONFIRMATION_REQUIRED") || text.contains("INVALID_ARGUMENTS"), "{args} -> {text}");
        assert!(!text.contains("\"result\""), "{text}");
    }
    assert!(fake.requests().iter().all(|r| r.method != "POST"));
}

#[tokio::test]
async fn curl_session_is_confirmed_by_default_and_refused_for_read_only() {
    let fake = todoist().await;
    let t = app(&fake, None);
    let (hooks, asked) = recording(Approval::Approved);
    let ok =
        workbench::meta::call_with(&t.app, "curl_session", json!({"integrations": ["todoist"]}), &hooks).await.unwrap();
    assert!(!ok.is_error, "{}", ok.body);
    assert!(asked.lock().unwrap()[0].summary.contains("ANY API call"), "{:?}", asked.lock().unwrap());
    let no = workbench::meta::call_with(
        &t.app,
        "curl_session",
        json!({"integrations": ["todoist"]}),
        &answering(Approval::Declined("the user declined".into())),
    )
    .await
    .unwrap();
    assert!(no.is_error && no.body["error"].as_str().unwrap().contains("did not approve"), "{}", no.body);
    assert!(no.body.get("token").is_none());
    let cannot =
        workbench::meta::call_with(&t.app, "curl_session", json!({"integrations": ["todoist"]}), &Hooks::default())
            .await
            .unwrap();
    assert!(cannot.is_error && cannot.body["error"].as_str().unwrap().contains("needs the user's approval"));

    let ro = app(&fake, Some("read_only"));
    let refused = ro.call("curl_session", json!({"integrations": ["todoist"]})).await;
    assert_eq!(
        refused.body["error"],
        "todoist: read-only by the user's policy, and a curl session could write; use its tools instead"
    );
}
