//! Shared test support: fake upstream servers on 127.0.0.1, an App wired to them, and helpers to
//! call meta-tools in-process or drive the real binary over stdio.

pub mod fake;
pub mod raw;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use workbench::app::App;
use workbench::config::Settings;
use workbench::meta::Answer as Outcome;
use workbench::registry::Registry;
use workbench::secrets::MemoryStore;

/// An App whose data lives in a fresh temp dir, with extra environment settings. Unless the test
/// gives `WORKBENCH_FILES_DIR`, the files folder is one inside the data dir, which workbench
/// refuses outright: a test that reads or writes local files names its own temp folder, and no
/// test can reach the real home's `~/workbench-files`.
pub struct TestApp {
    pub app: Arc<App>,
    pub home: tempfile::TempDir,
}

pub fn app_with(env: &[(&str, String)]) -> TestApp {
    let home = tempfile::tempdir().expect("temp dir");
    let mut vars: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    vars.entry("WORKBENCH_NO_BROWSER".into()).or_insert_with(|| "1".into());
    vars.entry("WORKBENCH_FILES_DIR".into()).or_insert_with(|| home.path().join("files").display().to_string());
    let settings = Settings::load(&vars).expect("settings");
    let app = App::with_parts(settings, Registry::standard(), Arc::new(MemoryStore::default()));
    TestApp { app, home }
}

/// An App on an existing data dir (a second process, or a restart, as SQLite sees it).
pub fn app_in(home: &std::path::Path) -> Arc<App> {
    let mut vars = HashMap::new();
    vars.insert("WORKBENCH_HOME".to_string(), home.display().to_string());
    vars.insert("WORKBENCH_NO_BROWSER".to_string(), "1".to_string());
    vars.insert("WORKBENCH_FILES_DIR".to_string(), home.join("files").display().to_string());
    let settings = Settings::load(&vars).expect("settings");
    App::with_parts(settings, Registry::standard(), Arc::new(MemoryStore::default()))
}

/// An App whose `http_send_request` may reach exactly `reachable` (fakes on 127.0.0.1) although
/// the SSRF guard refuses loopback: the test-only allowance no environment variable can set.
pub fn app_reaching(env: &[(&str, String)], reachable: &[std::net::SocketAddr]) -> TestApp {
    let home = tempfile::tempdir().expect("temp dir");
    let mut vars: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    vars.insert("WORKBENCH_HOME".into(), home.path().display().to_string());
    vars.entry("WORKBENCH_NO_BROWSER".into()).or_insert_with(|| "1".into());
    vars.entry("WORKBENCH_FILES_DIR".into()).or_insert_with(|| home.path().join("files").display().to_string());
    let mut settings = Settings::load(&vars).expect("settings");
    settings.http_reachable_for_tests = reachable.to_vec();
    let app = App::with_parts(settings, Registry::standard(), Arc::new(MemoryStore::default()));
    TestApp { app, home }
}

/// The environment entry that makes `dir` the files folder.
pub fn files_dir(dir: &std::path::Path) -> (&'static str, String) {
    ("WORKBENCH_FILES_DIR", dir.display().to_string())
}

pub fn app() -> TestApp {
    app_with(&[])
}

impl TestApp {
    /// Calls a meta-tool as a client whose user approves what the safety policy asks about (the
    /// policy's own tests use [`workbench::meta::call_with`] with other answers).
    pub async fn call(&self, tool: &str, args: Value) -> Outcome {
        workbench::meta::call_with(&self.app, tool, args, &approving()).await.expect("known meta-tool")
    }

    /// Runs one tool through execute_tools and returns its single result entry.
    pub async fn exec(&self, tool: &str, args: Value) -> Value {
        let out =
            self.call("execute_tools", serde_json::json!({ "executions": [{ "tool": tool, "args": args }] })).await;
        assert!(!out.is_error, "batch failed: {}", out.body);
        out.body["results"][0].clone()
    }

    /// Runs one tool and expects success; returns the result.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let entry = self.exec(tool, args).await;
        assert!(entry.get("error").is_none(), "{tool} failed: {entry}");
        entry["result"].clone()
    }

    /// Runs one tool and expects an error; returns the error object.
    pub async fn err(&self, tool: &str, args: Value) -> Value {
        let entry = self.exec(tool, args).await;
        assert!(entry.get("error").is_some(), "{tool} unexpectedly succeeded: {entry}");
        entry["error"].clone()
    }
}

/// Hooks of a client whose user approves every question.
pub fn approving() -> workbench::engine::Hooks {
    answering(workbench::engine::policy::Approval::Approved)
}

/// Hooks of a client whose user gives `answer` to every question.
pub fn answering(answer: workbench::engine::policy::Approval) -> workbench::engine::Hooks {
    workbench::engine::Hooks {
        approve: Some(Arc::new(move |_| {
            let answer = answer.clone();
            Box::pin(async move { answer })
        })),
        ..Default::default()
    }
}

/// The built binary (cargo builds it for integration tests).
pub fn binary() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_workbench"))
}

/// Compares `actual` with the committed snapshot `name`; `UPDATE_SNAPSHOTS=1` rewrites it. On a
/// difference the panic shows only the differing lines (a line diff with context), not both texts.
pub fn assert_snapshot(name: &str, actual: &Value) {
    let path = snapshots_dir().join(name);
    let pretty = serde_json::to_string_pretty(actual).expect("json") + "\n";
    if updating_snapshots() {
        std::fs::write(&path, &pretty).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {}; run with UPDATE_SNAPSHOTS=1 and review it", path.display()));
    if expected != pretty {
        panic!(
            "snapshot {name} changed; review the difference and rerun with UPDATE_SNAPSHOTS=1 if it is intended.\n{}",
            line_diff(&expected, &pretty)
        );
    }
}

/// One snapshot file per entry in the folder `dir` (`<dir>/<name>.json`): every entry must match
/// its file and no file may be left without an entry. `UPDATE_SNAPSHOTS=1` rewrites the folder
/// (stale files removed). A failure lists every changed, missing and stale file, each changed one
/// with its line diff.
pub fn assert_snapshot_dir(dir: &str, entries: &[(String, Value)]) {
    let folder = snapshots_dir().join(dir);
    let mut wanted = std::collections::BTreeMap::new();
    for (name, value) in entries {
        assert!(
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "snapshot entry name {name:?} is not a plain file name"
        );
        let pretty = serde_json::to_string_pretty(value).expect("json") + "\n";
        assert!(wanted.insert(format!("{name}.json"), pretty).is_none(), "two snapshot entries are named {name}");
    }
    let present: std::collections::BTreeSet<String> = std::fs::read_dir(&folder)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    if updating_snapshots() {
        std::fs::create_dir_all(&folder).expect("create snapshot folder");
        for stale in present.iter().filter(|f| !wanted.contains_key(*f)) {
            std::fs::remove_file(folder.join(stale)).expect("remove stale snapshot");
        }
        for (file, text) in &wanted {
            std::fs::write(folder.join(file), text).expect("write snapshot");
        }
        return;
    }
    let mut report = String::new();
    for (file, text) in &wanted {
        match std::fs::read_to_string(folder.join(file)) {
            Ok(expected) if &expected == text => {}
            Ok(expected) => report.push_str(&format!("changed {dir}/{file}:\n{}\n", line_diff(&expected, text))),
            Err(_) => report.push_str(&format!("missing {dir}/{file}\n")),
        }
    }
    for stale in present.iter().filter(|f| !wanted.contains_key(*f)) {
        report.push_str(&format!("stale {dir}/{stale} (no such entry any more)\n"));
    }
    if !report.is_empty() {
        panic!(
            "snapshots under {dir}/ changed; review the difference and rerun with UPDATE_SNAPSHOTS=1 if it is intended.\n{report}"
        );
    }
}

fn snapshots_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots")
}

fn updating_snapshots() -> bool {
    std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1")
}

/// A unified-style diff of two texts: `-` lines only in `expected`, `+` lines only in `actual`,
/// two lines of context, `@@ line N @@` headers. Common head and tail are skipped first; the middle
/// is aligned by longest common subsequence when it is small, else shown whole.
pub fn line_diff(expected: &str, actual: &str) -> String {
    const CONTEXT: usize = 2;
    const MAX_CELLS: usize = 4_000_000;
    let (a, b): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    // (tag, line): ' ' same, '-' expected only, '+' actual only.
    let mut ops: Vec<(char, &str)> = Vec::new();
    if am.len().saturating_mul(bm.len()) <= MAX_CELLS {
        let (n, m) = (am.len(), bm.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                ops.push((' ', am[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
                ops.push(('-', am[i]));
                i += 1;
            } else {
                ops.push(('+', bm[j]));
                j += 1;
            }
        }
    } else {
        ops.extend(am.iter().map(|l| ('-', *l)));
        ops.extend(bm.iter().map(|l| ('+', *l)));
    }
    let before: Vec<(char, &str)> = a[head.saturating_sub(CONTEXT)..head].iter().map(|l| (' ', *l)).collect();
    let after: Vec<(char, &str)> = a[a.len() - tail..].iter().take(CONTEXT).map(|l| (' ', *l)).collect();
    let all: Vec<(char, &str)> = before.into_iter().chain(ops).chain(after).collect();
    let first_line = head.saturating_sub(CONTEXT) + 1;
    // Keep changed lines and CONTEXT lines around each; elide longer unchanged runs.
    let near_change = |k: usize| {
        let lo = k.saturating_sub(CONTEXT);
        let hi = (k + CONTEXT + 1).min(all.len());
        all[lo..hi].iter().any(|(t, _)| *t != ' ')
    };
    let mut out = format!("@@ line {first_line} @@\n");
    let mut line = first_line;
    let mut elided = false;
    for (k, (tag, text)) in all.iter().enumerate() {
        if near_change(k) {
            if elided {
                out.push_str(&format!("@@ line {line} @@\n"));
                elided = false;
            }
            out.push_str(&format!("{tag}{text}\n"));
        } else {
            elided = true;
        }
        if *tag != '+' {
            line += 1;
        }
    }
    out
}

/// How a vault secret's `allowed_hosts` names a fake's origin.
pub fn fake_origin(fake: &fake::Fake) -> String {
    format!("http://{}", fake.addr())
}

/// The settings with which the user lets custom apps reach a fake on 127.0.0.1.
pub fn private_origin_env(fake: &fake::Fake) -> Vec<(&'static str, String)> {
    vec![("WORKBENCH_PRIVATE_HOSTS", fake_origin(fake))]
}

/// Hooks that record every question the safety policy asks and give `answer` to each.
pub fn recording(
    answer: workbench::engine::policy::Approval,
) -> (workbench::engine::Hooks, Arc<std::sync::Mutex<Vec<workbench::engine::policy::ApprovalRequest>>>) {
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = asked.clone();
    let hooks = workbench::engine::Hooks {
        approve: Some(Arc::new(move |req| {
            log.lock().unwrap().push(req);
            let answer = answer.clone();
            Box::pin(async move { answer })
        })),
        ..Default::default()
    };
    (hooks, asked)
}

/// Runs one tool through execute_tools with `hooks` and returns its single result entry.
pub async fn run(t: &TestApp, hooks: &workbench::engine::Hooks, tool: &str, args: Value) -> Value {
    let out = workbench::meta::call_with(
        &t.app,
        "execute_tools",
        serde_json::json!({"executions": [{"tool": tool, "args": args}]}),
        hooks,
    )
    .await
    .unwrap();
    out.body["results"][0].clone()
}
