//! The encrypted file store shared by several processes (issue 13, item 9): two real binaries on
//! one data directory, each storing 50 secrets at once, lose nothing.

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use workbench::secrets::file::{FileStore, Passphrase};
use workbench::secrets::{Secret, SecretStore};

use crate::support::binary;

const PASSPHRASE: &str = "two processes, one vault";

/// Attack (data loss): 2 processes x 25 concurrent `vault_set_secret` lost 6 values and failed 6
/// calls, because each read, changed and rewrote `secrets.enc` without a lock through one fixed
/// temp name. Now 2 processes x 50 concurrent writes: every call succeeds and all 100 values read
/// back exactly.
#[test]
fn two_processes_writing_fifty_secrets_each_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let value = |p: usize, i: usize| format!("secret-value-{p}-{i}-{}", "x".repeat(i % 7));
    let children: Vec<_> = (0..2)
        .map(|p| {
            let executions: Vec<Value> = (0..50)
                .map(|i| {
                    json!({"tool": "vault_set_secret", "args": {
                        "name": format!("P{p}_KEY_{i}"), "value": value(p, i), "allowed_hosts": ["api.example.com"]
                    }})
                })
                .collect();
            let batch = dir.path().join(format!("batch{p}.json"));
            std::fs::write(&batch, json!({"executions": executions}).to_string()).unwrap();
            Command::new(binary())
                .args(["tools", "call", "--batch", batch.to_str().unwrap()])
                .env("WORKBENCH_HOME", &data)
                .env("HOME", &home)
                .env("WORKBENCH_SECRET_STORE", "file")
                .env("WORKBENCH_VAULT_PASSPHRASE", PASSPHRASE)
                .env("WORKBENCH_NO_BROWSER", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout:.2000}\n{}", String::from_utf8_lossy(&out.stderr));
        let body: Value = serde_json::from_str(&stdout).unwrap();
        let results = body["results"].as_array().unwrap();
        assert_eq!(results.len(), 50);
        for r in results {
            assert!(r.get("error").is_none(), "a call failed: {r}");
        }
    }
    let store = FileStore::new(data.join("secrets.enc"), Passphrase::Value(Secret::new(PASSPHRASE.into())));
    for p in 0..2 {
        for i in 0..50 {
            let got = store.get(&format!("vault:P{p}_KEY_{i}")).unwrap();
            assert_eq!(got.map(|s| s.expose().clone()), Some(value(p, i)), "P{p}_KEY_{i}");
        }
    }
    let leftovers: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
