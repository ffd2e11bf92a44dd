//! Custom apps: defined through custom_create_app, stored in SQLite, run as real tools against a
//! fake API that checks what a real one would (method, path, auth, body).

use serde_json::{Value, json};

use crate::support::fake::{Fake, Reply, has_user_agent};
use crate::support::{TestApp, app, app_in, app_with};

const TOKEN: &str = "acme-secret-token-81f3c2";

/// A fake "Acme invoices" API: bearer auth, list with a status filter, get by id, create.
async fn acme() -> Fake {
    Fake::start(|r| {
        if !has_user_agent(r) {
            return Reply::json(400, json!({"message": "missing user agent"}));
        }
        if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
            return Reply::json(401, json!({"message": "bad token"}));
        }
        if r.header("x-acme-version") != Some("2024-01") {
            return Reply::json(400, json!({"message": "missing X-Acme-Version"}));
        }
        match (r.method.as_str(), r.path.as_str()) {
            ("GET", "/v2/invoices") => {
                let status = r.q("status").unwrap_or("any");
                Reply::json(200, json!({"invoices": [{"id": "inv_1", "status": status}], "limit": r.q("limit")}))
            }
            ("GET", "/v2/invoices/inv%2F7") | ("GET", "/v2/invoices/inv/7") => {
                Reply::json(400, json!({"message": "id must be one path segment"}))
            }
            ("GET", p) if p.starts_with("/v2/invoices/") => {
                // The real API echoes nothing secret; this one does, to prove results are scrubbed.
                Reply::json(200, json!({"id": &p[13..], "debug_auth": r.header("authorization")}))
            }
            ("POST", "/v2/invoices") => {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                if r.header("content-type") != Some("application/json")
                    || body["customer"]["id"].as_str().is_none_or(str::is_empty)
                {
                    return Reply::json(422, json!({"message": "customer.id is required"}));
                }
                Reply::json(201, json!({"id": "inv_2", "received": body}))
            }
            ("DELETE", p) if p.starts_with("/v2/invoices/") => {
                Reply { status: 204, headers: vec![], body: String::new() }
            }
            _ => Reply::json(404, json!({"message": "no route"})),
        }
    })
    .await
}

fn definition(base: &str) -> Value {
    json!({
        "name": "acme",
        "description": "Acme billing: invoices and customers",
        "base_url": format!("{base}/v2/"),
        "auth": {"type": "bearer", "token": "{{vault:ACME_TOKEN}}"},
        "headers": {"X-Acme-Version": "2024-01"},
        "operations": [
            {
                "tool_name": "acme_list_invoices",
                "method": "GET",
                "path": "/invoices",
                "description": "List Acme invoices, optionally by status",
                "params": {"type": "object", "properties": {
                    "status": {"type": "string", "enum": ["draft", "open", "paid"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100}
                }}
            },
            {
                "tool_name": "acme_get_invoice",
                "method": "GET",
                "path": "/invoices/{invoice_id}",
                "description": "Get one Acme invoice by id",
                "params": {"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]}
            },
            {
                "tool_name": "acme_create_invoice",
                "method": "POST",
                "path": "/invoices",
                "description": "Create an Acme invoice for a customer",
                "params": {"type": "object", "properties": {
                    "customer_id": {"type": "string"}, "amount_cents": {"type": "integer"}, "memo": {"type": "string"}
                }, "required": ["customer_id", "amount_cents"]},
                "body": {"customer": {"id": "{{customer_id}}"}, "amount": "{{amount_cents}}", "memo": "Invoice: {{memo}}"}
            },
            {
                "tool_name": "acme_delete_invoice",
                "method": "DELETE",
                "path": "/invoices/{invoice_id}",
                "description": "Delete a draft Acme invoice",
                "params": {"type": "object", "properties": {"invoice_id": {"type": "string"}}, "required": ["invoice_id"]}
            }
        ]
    })
}

/// An app whose user listed `fake`'s origin in WORKBENCH_PRIVATE_HOSTS (loopback is refused
/// otherwise, issue 13 item 3).
fn app_allowing(fake: &Fake) -> TestApp {
    app_with(&[("WORKBENCH_PRIVATE_HOSTS", fake.url.clone())])
}

async fn with_acme() -> (TestApp, Fake) {
    let fake = acme().await;
    let t = app_allowing(&fake);
    t.ok("vault_set_secret", json!({"name": "ACME_TOKEN", "value": TOKEN, "allowed_hosts": [&fake.url]})).await;
    let created = t.ok("custom_create_app", definition(&fake.url)).await;
    assert_eq!(created["created"], true);
    assert_eq!(created["tools"].as_array().unwrap().len(), 4);
    assert!(created.get("warnings").is_none(), "{created}");
    (t, fake)
}

#[tokio::test]
async fn operations_run_as_tools_with_auth_path_query_and_body() {
    let (t, fake) = with_acme().await;
    let list = t.ok("acme_list_invoices", json!({"status": "open", "limit": 5})).await;
    assert_eq!(list["invoices"][0]["status"], "open");
    let req = fake.last();
    assert_eq!(req.q("limit"), Some("5"));

    let got = t.ok("acme_get_invoice", json!({"invoice_id": "inv_1"})).await;
    assert_eq!(got["id"], "inv_1");
    assert!(!got.to_string().contains(TOKEN), "the echoed credential is scrubbed: {got}");

    // A path parameter is one segment: a slash in it is encoded, never a new path.
    t.err("acme_get_invoice", json!({"invoice_id": "inv/7"})).await;
    assert_eq!(fake.last().path, "/v2/invoices/inv%2F7");

    let made = t.ok("acme_create_invoice", json!({"customer_id": "cus_9", "amount_cents": 1250, "memo": "Nov"})).await;
    assert_eq!(made["received"], json!({"customer": {"id": "cus_9"}, "amount": 1250, "memo": "Invoice: Nov"}));

    let deleted = t.ok("acme_delete_invoice", json!({"invoice_id": "inv_2"})).await;
    assert_eq!(deleted, json!({"ok": true, "status": 204}));

    // The arguments are validated against the operation's own schema, all problems at once.
    let e = t.err("acme_list_invoices", json!({"status": "void", "limit": 0, "page": 2})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"].as_array().unwrap().len(), 3, "{e}");
    let e = t.err("acme_create_invoice", json!({"amount_cents": 5})).await;
    assert_eq!(e["problems"][0]["path"], "/customer_id");

    // The provider's own error message comes through.
    let bad = t.err("acme_create_invoice", json!({"customer_id": "", "amount_cents": 5})).await;
    assert_eq!(bad["code"], "UPSTREAM_ERROR", "{bad}");

    // Every run is audited, without the secret.
    let log = t.ok("audit_search_log", json!({"integration": "acme", "limit": 50})).await;
    let rows = log["entries"].as_array().unwrap();
    assert!(rows.len() >= 6, "{log}");
    assert!(rows.iter().any(|r| r["tool"] == "acme_delete_invoice" && r["mutating"] == true));
    assert!(!log.to_string().contains(TOKEN));
}

#[tokio::test]
async fn custom_tools_are_searchable_and_have_schemas() {
    let (t, _fake) = with_acme().await;
    let found = t.call("search_tools", json!({"query": "list acme invoices"})).await;
    assert_eq!(found.body["tools"][0]["name"], "acme_list_invoices", "{}", found.body);
    let schema = t.call("get_tool_schema", json!({"tool": "acme_create_invoice"})).await;
    assert!(!schema.is_error, "{}", schema.body);
    let text = schema.body.to_string();
    assert!(text.contains("customer_id") && text.contains("amount_cents"), "{text}");
    let listed = t.ok("custom_list_apps", json!({})).await;
    assert_eq!(listed["apps"][0]["name"], "acme");
    assert_eq!(listed["apps"][0]["auth"], "bearer");
    assert_eq!(listed["apps"][0]["vault_secrets"], json!(["ACME_TOKEN"]));
    let one = t.ok("custom_list_apps", json!({"name": "acme"})).await;
    assert_eq!(one["apps"][0]["definition"]["auth"]["token"], "{{vault:ACME_TOKEN}}");
    assert!(!one.to_string().contains(TOKEN));
    let integrations = t.call("list_integrations", json!({})).await;
    assert!(
        integrations.body["integrations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == "acme" && i["custom"] == true),
        "{}",
        integrations.body
    );
}

#[tokio::test]
async fn a_malformed_definition_is_rejected_with_every_problem() {
    let t = app();
    let bad = json!({
        "name": "Gmail",
        "base_url": "ftp://files.example.com",
        "auth": {"type": "bearer", "token": "sk_live_literal_secret"},
        "headers": {"Host": "evil.example.com"},
        "operations": [
            {"tool_name": "other_list_things", "method": "GET", "path": "/things", "description": "x"},
            {"tool_name": "gmail_get_thing", "method": "FETCH", "path": "things/{id}", "description": ""},
            {"tool_name": "gmail_find_thing", "method": "GET", "path": "/../admin",
             "description": "d", "params": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}}},
            {"tool_name": "gmail_make_thing", "method": "GET", "path": "/t", "description": "d", "body": {"x": "{{nope}}"}}
        ]
    });
    let e = t.err("custom_create_app", bad).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    let problems: Vec<(String, String)> = e["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["path"].as_str().unwrap().to_string(), p["problem"].as_str().unwrap().to_string()))
        .collect();
    let has = |path: &str, words: &str| problems.iter().any(|(p, m)| p == path && m.contains(words));
    assert!(has("/name", "lowercase"), "{problems:?}");
    assert!(has("/base_url", "http or https"), "{problems:?}");
    assert!(has("/auth/token", "vault"), "{problems:?}");
    assert!(has("/headers/Host", "sets this header"), "{problems:?}");
    assert!(has("/operations/0/tool_name", "gmail_") || has("/operations/0/tool_name", "Gmail_"), "{problems:?}");
    assert!(has("/operations/1/method", "GET, POST"), "{problems:?}");
    assert!(has("/operations/1/path", "start the path"), "{problems:?}");
    assert!(has("/operations/1/path", "placeholder {id}"), "{problems:?}");
    assert!(has("/operations/1/description", "say what"), "{problems:?}");
    assert!(has("/operations/2/path", "'..'"), "{problems:?}");
    assert!(has("/operations/2/params/properties/q", "'pattern'"), "{problems:?}");
    assert!(has("/operations/3/body", "GET and DELETE"), "{problems:?}");
    assert!(has("/operations/3/body", "{{nope}}"), "{problems:?}");
    assert!(!e.to_string().contains("sk_live_literal_secret") || e["provided"].is_array(), "{e}");
    // Nothing was stored.
    assert_eq!(t.ok("custom_list_apps", json!({})).await["apps"], json!([]));

    // Names of the catalogue are not free: an integration, its product prefix, a built-in namespace.
    for taken in ["github", "google", "vault", "custom"] {
        let mut def = definition("http://127.0.0.1:9");
        def["name"] = json!(taken);
        let e = t.err("custom_create_app", def).await;
        assert!(e["problems"].as_array().unwrap().iter().any(|p| p["path"] == "/name"), "{taken}: {e}");
    }
}

#[tokio::test]
async fn apps_persist_and_another_process_sees_changes_without_a_restart() {
    let fake = acme().await;
    let home = tempfile::tempdir().unwrap();
    // The user lists the fake's origin in config.json (both processes read it).
    std::fs::write(home.path().join("config.json"), json!({"private_hosts": [&fake.url]}).to_string()).unwrap();
    // Two apps on one data dir: two processes as SQLite sees them (separate connections).
    let a = TestApp { app: app_in(home.path()), home: tempfile::tempdir().unwrap() };
    let b = TestApp { app: app_in(home.path()), home: tempfile::tempdir().unwrap() };
    a.ok("vault_set_secret", json!({"name": "ACME_TOKEN", "value": TOKEN, "allowed_hosts": [&fake.url]})).await;
    let unknown = b.exec("acme_list_invoices", json!({})).await;
    assert_eq!(unknown["error"]["code"], "TOOL_NOT_FOUND");
    a.ok("custom_create_app", definition(&fake.url)).await;
    let found = b.call("search_tools", json!({"query": "acme invoices"})).await;
    assert!(found.body.to_string().contains("acme_list_invoices"), "{}", found.body);
    // b has its own (memory) secret store: the vault metadata is shared, the value is not.
    b.ok("vault_set_secret", json!({"name": "ACME_TOKEN", "value": TOKEN, "allowed_hosts": [&fake.url]})).await;
    assert_eq!(b.ok("acme_list_invoices", json!({"status": "paid"})).await["invoices"][0]["status"], "paid");

    // Replacing drops a tool everywhere; deleting drops the app.
    let mut def = definition(&fake.url);
    def["operations"].as_array_mut().unwrap().truncate(1);
    assert_eq!(a.ok("custom_create_app", def).await["replaced"], true);
    assert_eq!(b.exec("acme_get_invoice", json!({"invoice_id": "x"})).await["error"]["code"], "TOOL_NOT_FOUND");
    a.ok("custom_delete_app", json!({"name": "acme"})).await;
    assert_eq!(b.exec("acme_list_invoices", json!({})).await["error"]["code"], "TOOL_NOT_FOUND");
    let e = b.err("custom_delete_app", json!({"name": "acme"})).await;
    assert!(e["message"].as_str().unwrap().contains("no custom app named 'acme'"));

    // A restart (a fresh app on the same dir) still has what is stored.
    a.ok("custom_create_app", definition(&fake.url)).await;
    drop(a);
    let c = TestApp { app: app_in(home.path()), home: tempfile::tempdir().unwrap() };
    assert_eq!(c.ok("custom_list_apps", json!({})).await["apps"][0]["tools"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn secrets_go_only_to_the_apps_host_and_stay_while_referenced() {
    let fake = acme().await;
    let t = app_allowing(&fake);
    // Created before its secret exists: stored, with a warning that says what to do.
    let created = t.ok("custom_create_app", definition(&fake.url)).await;
    assert!(created["warnings"][0].as_str().unwrap().contains("vault_set_secret"), "{created}");
    let e = t.err("acme_list_invoices", json!({})).await;
    assert_eq!(e["code"], "BAD_REF", "{e}");
    // A secret for another host is refused for this app.
    t.ok("vault_set_secret", json!({"name": "ACME_TOKEN", "value": TOKEN, "allowed_hosts": ["api.acme.com"]})).await;
    let e = t.err("acme_list_invoices", json!({})).await;
    assert_eq!(e["code"], "VAULT_DENIED", "{e}");
    assert!(fake.requests().is_empty(), "nothing was sent");
    // A secret still referenced is not deleted without force.
    let e = t.err("vault_delete_secret", json!({"name": "ACME_TOKEN"})).await;
    assert!(e["message"].as_str().unwrap().contains("acme"), "{e}");
    t.ok("vault_delete_secret", json!({"name": "ACME_TOKEN", "force": true})).await;
}

#[tokio::test]
async fn header_basic_and_query_auth() {
    let fake = Fake::start(|r| {
        let ok = match r.path.as_str() {
            "/h/ping" => r.header("x-api-key") == Some("key-123"),
            // "user:pa55-word" in base64.
            "/b/ping" => r.header("authorization") == Some("Basic dXNlcjpwYTU1LXdvcmQ="),
            "/q/ping" => r.q("api_key") == Some("key-123"),
            _ => false,
        };
        if ok { Reply::json(200, json!({"pong": true})) } else { Reply::json(401, json!({"error": "unauthorized"})) }
    })
    .await;
    let t = app_allowing(&fake);
    t.ok("vault_set_secret", json!({"name": "K", "value": "key-123", "allowed_hosts": [&fake.url]})).await;
    t.ok("vault_set_secret", json!({"name": "P", "value": "pa55-word", "allowed_hosts": [&fake.url]})).await;
    let auths = [
        ("hdr", "h", json!({"type": "header", "name": "X-Api-Key", "value": "{{vault:K}}"})),
        ("bas", "b", json!({"type": "basic", "username": "user", "password": "{{vault:P}}"})),
        ("qry", "q", json!({"type": "query", "name": "api_key", "value": "{{vault:K}}"})),
    ];
    for (name, prefix, auth) in auths {
        t.ok(
            "custom_create_app",
            json!({"name": name, "base_url": format!("{}/{prefix}", fake.url), "auth": auth,
                   "operations": [{"tool_name": format!("{name}_get_ping"), "method": "GET", "path": "/ping", "description": "Ping"}]}),
        )
        .await;
        let r = t.ok(&format!("{name}_get_ping"), json!({})).await;
        assert_eq!(r["pong"], true, "{name}");
    }
    let log = t.ok("audit_search_log", json!({"limit": 50})).await.to_string();
    assert!(!log.contains("key-123") && !log.contains("pa55-word"));
}

#[tokio::test]
async fn the_example_definition_in_the_repo_is_valid() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/custom-app.json");
    let def: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let t = app();
    let created = t.ok("custom_create_app", def).await;
    assert_eq!(created["tools"].as_array().unwrap().len(), 2);
    // Its secret is not stored yet: the answer says what to do.
    assert!(created["warnings"][0].as_str().unwrap().contains("ACME_TOKEN"), "{created}");
}
