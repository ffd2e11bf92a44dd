//! The real OS keychain (Linux Secret Service), run by CI inside a private D-Bus session with an
//! unlocked throwaway keyring (`.ci/run` sets WORKBENCH_TEST_KEYCHAIN=1). Never the developer's own:
//! without that variable the test only says it was skipped.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use workbench::app::App;
use workbench::config::Settings;
use workbench::registry::Registry;
use workbench::secrets::keychain::KeychainStore;
use workbench::secrets::{Secret, SecretStore};

use crate::support::TestApp;
use crate::support::fake::{Fake, Reply};

fn enabled() -> bool {
    if std::env::var("WORKBENCH_TEST_KEYCHAIN").is_ok_and(|v| v == "1") {
        return true;
    }
    eprintln!("keychain test skipped: set WORKBENCH_TEST_KEYCHAIN=1 inside a throwaway D-Bus session (see .ci/run)");
    false
}

#[tokio::test]
async fn secret_service_round_trip_and_a_connection_through_it() {
    if !enabled() {
        return;
    }
    let service = format!("workbench-test-{}", workbench::ids::random_hex(6));
    let store = KeychainStore::with_service(&service);
    let started = std::time::Instant::now();
    assert_eq!(store.get("k").unwrap(), None);
    store.set("k", &Secret::new("keychain-value-1".into())).unwrap();
    assert_eq!(store.get("k").unwrap().unwrap().expose(), "keychain-value-1");
    eprintln!("keychain get+set+get: {:?}", started.elapsed());
    assert!(store.delete("k").unwrap());
    assert!(!store.delete("k").unwrap());

    // A whole connection stored in the keychain and used by a tool call.
    let fake = Fake::start(|r| match r.header("authorization") {
        Some("Bearer ghp_keychainTOKEN000000000000000000000") => {
            Reply::json(200, json!({"login": "octocat", "name": "The Octocat", "public_repos": 8}))
        }
        _ => Reply::json(401, json!({"message": "Bad credentials"})),
    })
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut vars = HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.path().display().to_string());
    vars.insert("WORKBENCH_GITHUB_BASE_URL".to_string(), fake.url.clone());
    let app = App::with_parts(
        Settings::load(&vars).unwrap(),
        Registry::standard(),
        Arc::new(KeychainStore::with_service(&service)),
    );
    let t = TestApp { app, home };
    let integration = t.app.registry().integration("github").unwrap();
    let mut fields = HashMap::new();
    fields.insert("token".to_string(), Secret::new("ghp_keychainTOKEN000000000000000000000".to_string()));
    let connection = workbench::auth::from_fields(integration, fields, workbench::auth::Source::Store);
    workbench::auth::save(
        &t.app,
        &connection,
        workbench::auth::AccountDetails { account_label: Some("octocat".into()), ..Default::default() },
    )
    .unwrap();
    assert_eq!(t.app.storage.connection_meta("github").unwrap().unwrap().store, "keychain");
    assert!(t.app.is_connected("github"));
    let found = t.app.connection(integration).unwrap().unwrap();
    assert_eq!(found.fields["token"].expose(), "ghp_keychainTOKEN000000000000000000000");
    assert!(workbench::auth::erase(&t.app, "github", "default").unwrap());
    assert!(t.app.connection(integration).unwrap().is_none());
}
