//! SQLite metadata: the local user, the audit log and vault secret metadata. Never a secret.
//!
//! The database is opened lazily (nothing touches disk on the start-up path), in WAL mode with a
//! busy timeout so that two workbench processes on one data directory (Claude Desktop and Cursor at
//! once) both work, with file mode 0600. Migrations run by `PRAGMA user_version`. Every call runs on
//! the blocking pool so a slow disk or a busy database never stalls the protocol loop. An audit row
//! that cannot be written because another process holds the write lock past the busy timeout is
//! kept in memory and written with the next audit write or read, so a busy database delays a row
//! but never loses it (while the process lives) and never fails the call it records.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

mod audit;
mod connections;
mod custom_apps;
mod upstream;
mod vault;

use self::audit::PendingAudit;
pub use self::audit::{AuditEntry, AuditQuery, parse_traceparent, with_trace};
pub use self::connections::ConnectionMeta;
pub use self::custom_apps::CustomAppRow;
pub use self::upstream::{UpstreamListing, UpstreamPin};
pub use self::vault::VaultMeta;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("database {path}: {source}")]
    Sqlite { path: String, source: rusqlite::Error },
    #[error("cannot create data directory {path}: {source}")]
    Dir { path: String, source: std::io::Error },
    #[error("database task failed: {0}")]
    Task(String),
}

/// Schema migrations, applied in order; `user_version` is the index of the last one applied.
const MIGRATIONS: &[&str] = &[
    // 1: user, audit log, vault metadata.
    "CREATE TABLE user (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        id TEXT NOT NULL,
        email TEXT,
        created_at TEXT NOT NULL
     );
     CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        tool TEXT NOT NULL,
        integration TEXT NOT NULL,
        args TEXT NOT NULL,
        mutating INTEGER NOT NULL,
        status TEXT NOT NULL,
        error_code TEXT,
        error TEXT,
        duration_ms INTEGER NOT NULL
     );
     CREATE INDEX audit_ts ON audit (ts);
     CREATE INDEX audit_tool ON audit (tool);
     CREATE TABLE vault_secret (
        name TEXT PRIMARY KEY,
        description TEXT,
        allowed_hosts TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT
     );",
    // 2: connection metadata (which integrations are connected, as whom, until when, where the
    // secret lives). The secret itself is in the secret store.
    "CREATE TABLE connection (
        integration TEXT PRIMARY KEY,
        account_label TEXT,
        scopes TEXT,
        expires_at INTEGER,
        store TEXT NOT NULL,
        public_fields TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
     );",
    // 3: custom apps (declarative HTTP apps the user defined; secret parts are vault refs) and a
    // generation counter every process reads to notice another one's changes.
    "CREATE TABLE custom_app (
        name TEXT PRIMARY KEY,
        definition TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
     );
     CREATE TABLE counter (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
     );
     INSERT INTO counter (name, value) VALUES ('custom_apps', 0);",
    // 4: the W3C trace context (`traceparent`) a 2026-07-28 client sent in a call's `_meta`.
    "ALTER TABLE audit ADD COLUMN traceparent TEXT;",
    // 5: the last tool listing of each upstream MCP server (`src/upstream`), so search works before
    // a server first starts, and its last error for `workbench servers list`. Never a secret: the
    // listing is the server's public tool descriptions; the error text is scrubbed first.
    "CREATE TABLE upstream_listing (
        server TEXT PRIMARY KEY,
        tools TEXT NOT NULL,
        listed_at TEXT NOT NULL,
        last_error TEXT
     );",
    // 6: several accounts per integration. The connection table is keyed by (integration,
    // account); every existing row becomes the account `default`, the integration's default
    // (its secret-store entry keeps its key, `connection:<integration>`, so nothing moves there).
    // Audit rows record the account a call used. Touches nothing migration 5 creates.
    "CREATE TABLE connection_account (
        integration TEXT NOT NULL,
        account TEXT NOT NULL,
        is_default INTEGER NOT NULL DEFAULT 0,
        account_label TEXT,
        scopes TEXT,
        expires_at INTEGER,
        store TEXT NOT NULL,
        public_fields TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (integration, account)
     );
     INSERT INTO connection_account (integration, account, is_default, account_label, scopes, expires_at, store,
        public_fields, created_at, updated_at)
        SELECT integration, 'default', 1, account_label, scopes, expires_at, store, public_fields, created_at, updated_at
        FROM connection;
     DROP TABLE connection;
     ALTER TABLE connection_account RENAME TO connection;
     ALTER TABLE audit ADD COLUMN account TEXT;",
    // 7 (upstream pins): the tool definitions of each upstream MCP server that the user accepted
    // (`src/upstream`, "Pinning"): a hash of each tool's name, description, schema and
    // annotations, and the definition itself (to show what changed). A server listed in
    // `upstream_pinned_server` has been accepted once; a tool of it without a matching pin waits
    // for `workbench servers review`. Public tool descriptions only, never a secret.
    "CREATE TABLE upstream_pinned_server (
        server TEXT PRIMARY KEY,
        pinned_at TEXT NOT NULL
     );
     CREATE TABLE upstream_pin (
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        hash TEXT NOT NULL,
        definition TEXT NOT NULL,
        accepted_at TEXT NOT NULL,
        PRIMARY KEY (server, tool)
     );",
    // 8: the outbound-data guard's decision on a call (held, approved, refused; its sources and
    // audience). Not in the rows the agent's audit tools read (`search_audit`): the user's views
    // (the portal) read it with `flow_decisions`.
    "ALTER TABLE audit ADD COLUMN flow TEXT;",
    // 9: the search index's vectors of each upstream server's tools, keyed by a hash of what is
    // embedded of them (`src/registry/search/store.rs`): a restart embeds nothing. A cache only.
    "CREATE TABLE search_vectors (
        server TEXT PRIMARY KEY,
        hash BLOB NOT NULL,
        vectors BLOB NOT NULL
     );",
];

pub struct Storage {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
    /// Audit rows (with their time) not yet written because the database was busy.
    pending_audit: Mutex<Vec<PendingAudit>>,
    /// Upstream pin writes made through this connection ([`Storage::pins_version`]).
    pin_writes: std::sync::atomic::AtomicU64,
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Storage {
    pub fn new(path: PathBuf) -> Arc<Storage> {
        Arc::new(Storage {
            path,
            conn: Mutex::new(None),
            pending_audit: Mutex::new(Vec::new()),
            pin_writes: std::sync::atomic::AtomicU64::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with the connection on the blocking pool, opening the database on first use.
    pub async fn call<T, F>(self: &Arc<Self>, f: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.call_blocking(f))
            .await
            .map_err(|e| StorageError::Task(e.to_string()))?
    }

    /// The same, on the current thread (CLI paths and tests).
    pub fn call_blocking<T, F>(&self, f: F) -> Result<T, StorageError>
    where
        F: FnOnce(&Connection) -> rusqlite::Result<T>,
    {
        let mut guard = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.is_none() {
            *guard = Some(self.open()?);
        }
        let conn = guard.as_ref().expect("connection was just opened");
        f(conn).map_err(|source| self.err(source))
    }

    fn err(&self, source: rusqlite::Error) -> StorageError {
        StorageError::Sqlite { path: self.path.display().to_string(), source }
    }

    fn open(&self) -> Result<Connection, StorageError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|source| StorageError::Dir { path: dir.display().to_string(), source })?;
            restrict_dir(dir);
        }
        let conn = Connection::open(&self.path).map_err(|e| self.err(e))?;
        restrict_file(&self.path);
        conn.busy_timeout(Duration::from_secs(5)).map_err(|e| self.err(e))?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| self.err(e))?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.err(e))?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(|e| self.err(e))?;
        migrate(&conn).map_err(|e| self.err(e))?;
        for suffix in ["-wal", "-shm"] {
            let mut p = self.path.as_os_str().to_owned();
            p.push(suffix);
            restrict_file(Path::new(&p));
        }
        ensure_user(&conn).map_err(|e| self.err(e))?;
        Ok(conn)
    }
}

impl Storage {
    /// The local user as `(id, email)`, or `None` when the record is missing.
    pub async fn user(self: &Arc<Self>) -> Result<Option<(String, Option<String>)>, StorageError> {
        self.call(|c| {
            c.query_row("SELECT id, email FROM user WHERE singleton = 1", [], |r| Ok((r.get(0)?, r.get(1)?))).optional()
        })
        .await
    }
}

fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let version: usize = conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        // BEGIN IMMEDIATE takes the write lock first, so a second process migrating at the same
        // moment waits (busy timeout) and then sees the new version instead of failing halfway.
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current as usize > i {
            conn.execute_batch("COMMIT")?;
            continue;
        }
        let result = conn.execute_batch(sql).and_then(|_| conn.pragma_update(None, "user_version", (i + 1) as i64));
        match result {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    Ok(())
}

/// The local user is created on first start and stays the same across restarts.
fn ensure_user(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO user (singleton, id, email, created_at) VALUES (1, ?1, NULL, ?2)",
        params![format!("usr_{}", crate::ids::random_hex(12)), now_rfc3339()],
    )?;
    Ok(())
}

#[cfg(unix)]
fn restrict_file(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if path.exists() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
}

#[cfg(unix)]
fn restrict_dir(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
}

#[cfg(not(unix))]
fn restrict_file(_: &Path) {}
#[cfg(not(unix))]
fn restrict_dir(_: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The pins' version moves when another process commits a pin (or anything) and when this
    /// process writes pins itself, and stays put otherwise: what lets a server with thousands
    /// of upstream tools skip reading them all again every few seconds, without missing a change.
    #[test]
    fn the_pins_version_moves_with_every_pin_change_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workbench.db");
        let here = Storage::new(path.clone());
        let other = Storage::new(path);
        let pin = |tool: &str| UpstreamPin {
            server: "notes".into(),
            tool: tool.into(),
            hash: "ab".into(),
            definition: "{}".into(),
        };
        let v0 = here.pins_version().unwrap();
        assert_eq!(here.pins_version().unwrap(), v0, "nothing changed");
        assert!(here.upstream_pin_hashes().unwrap().0.is_empty());
        other.pin_upstream("notes", vec![pin("read")], true).unwrap();
        let v1 = here.pins_version().unwrap();
        assert_ne!(v1, v0, "another connection's pin is seen");
        here.pin_upstream("notes", vec![pin("write")], false).unwrap();
        let v2 = here.pins_version().unwrap();
        assert_ne!(v2, v1, "this connection's own pin write is seen");
        assert_eq!(here.pins_version().unwrap(), v2);
        here.delete_upstream_pins("notes").unwrap();
        assert_ne!(here.pins_version().unwrap(), v2, "a removal is seen");
        assert!(here.upstream_pin_hashes().unwrap().0.is_empty());
        assert_eq!(here.upstream_pin_definition("notes", "read").unwrap(), None);
    }

    /// A database as today's workbench leaves it (migrations 1-4, one GitHub connection, one
    /// audit row) migrates to accounts with nothing lost: the connection becomes the account
    /// `default`, the integration's default, every column kept; the audit row stays.
    #[tokio::test]
    async fn a_database_from_before_accounts_migrates_to_the_default_account() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workbench.db");
        {
            let c = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..4] {
                c.execute_batch(sql).unwrap();
            }
            c.pragma_update(None, "user_version", 4).unwrap();
            c.execute(
                "INSERT INTO connection (integration, account_label, scopes, expires_at, store, public_fields, created_at, updated_at)
                 VALUES ('github', 'octocat', 'repo', 1234, 'memory', '{\"base_url\":\"https://ghe.example\"}', '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z')",
                [],
            )
            .unwrap();
            c.execute(
                "INSERT INTO audit (ts, tool, integration, args, mutating, status, duration_ms) VALUES ('t', 'github_get_me', 'github', '{}', 0, 'ok', 3)",
                [],
            )
            .unwrap();
        }
        let s = Storage::new(path);
        let metas = s.accounts_of("github").unwrap();
        assert_eq!(metas.len(), 1);
        let m = &metas[0];
        assert_eq!(m.account, "default");
        assert!(m.is_default);
        assert_eq!(m.account_label.as_deref(), Some("octocat"));
        assert_eq!(m.scopes.as_deref(), Some("repo"));
        assert_eq!(m.expires_at, Some(1234));
        assert_eq!(m.store, "memory");
        assert_eq!(m.public_fields.get("base_url").and_then(Value::as_str), Some("https://ghe.example"));
        assert_eq!(m.created_at, "2026-01-01T00:00:00.000Z");
        assert_eq!(s.connection_meta("github").unwrap().as_ref(), Some(m));
        let rows = s.search_audit(AuditQuery { limit: 10, ..Default::default() }).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["tool"], "github_get_me");
        assert!(rows[0].get("account").is_none());
        let v: i64 = s.call(|c| c.query_row("PRAGMA user_version", [], |r| r.get(0))).await.unwrap();
        assert_eq!(v as usize, MIGRATIONS.len());
    }

    /// The first account connected is the default; another one is not until the user says so;
    /// removing the default promotes the oldest remaining one.
    #[test]
    fn the_first_account_is_the_default_until_the_user_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(dir.path().join("workbench.db"));
        let meta = |account: &str, at: &str| ConnectionMeta {
            integration: "github".into(),
            account: account.into(),
            is_default: false,
            account_label: None,
            scopes: None,
            expires_at: None,
            store: "memory".into(),
            public_fields: Default::default(),
            created_at: at.into(),
            updated_at: at.into(),
        };
        s.put_connection_meta(&meta("work", "1")).unwrap();
        s.put_connection_meta(&meta("personal", "2")).unwrap();
        s.put_connection_meta(&meta("work", "1")).unwrap();
        assert_eq!(s.connection_meta("github").unwrap().unwrap().account, "work");
        assert!(s.set_default_account("github", "personal").unwrap());
        assert!(!s.set_default_account("github", "nobody").unwrap());
        assert_eq!(s.connection_meta("github").unwrap().unwrap().account, "personal");
        assert!(s.delete_connection_meta("github", "personal").unwrap());
        assert_eq!(s.connection_meta("github").unwrap().unwrap().account, "work");
    }

    /// Attack: a client puts arbitrary text (an injection, a huge string) in `_meta.traceparent`;
    /// only a well-formed W3C trace context reaches the audit row.
    #[tokio::test]
    async fn audit_rows_carry_only_a_well_formed_traceparent() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(parse_traceparent(&good.to_ascii_uppercase()).as_deref(), Some(good));
        for bad in
            ["", "00-abc-def-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "x'); DROP TABLE audit;--"]
        {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::new(dir.path().join("wb.db"));
        let row = |tool: &str| AuditEntry {
            tool: tool.into(),
            integration: "x".into(),
            args: "{}".into(),
            mutating: false,
            ok: true,
            error_code: None,
            error: None,
            duration_ms: 1,
            account: None,
        };
        with_trace(parse_traceparent(good), s.record_audit(row("traced"))).await.unwrap();
        s.record_audit(row("plain")).await.unwrap();
        let rows = s.search_audit(AuditQuery { limit: 10, ..Default::default() }).await.unwrap();
        assert_eq!(rows[1]["traceparent"], good);
        assert!(rows[0].get("traceparent").is_none());
    }

    #[tokio::test]
    async fn migrates_once_creates_a_stable_user_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("w.db");
        let a = Storage::new(path.clone());
        let (id1, email) = a.user().await.unwrap().unwrap();
        assert!(id1.starts_with("usr_") && email.is_none());
        drop(a);
        let b = Storage::new(path.clone());
        let (id2, _) = b.user().await.unwrap().unwrap();
        assert_eq!(id1, id2, "user id stable across restarts");
        let v: i64 = b.call(|c| c.query_row("PRAGMA user_version", [], |r| r.get(0))).await.unwrap();
        assert_eq!(v as usize, MIGRATIONS.len());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[tokio::test]
    async fn two_handles_write_the_audit_log_concurrently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let a = Storage::new(path.clone());
        let b = Storage::new(path);
        let mut tasks = Vec::new();
        for i in 0..20 {
            let s = if i % 2 == 0 { a.clone() } else { b.clone() };
            tasks.push(tokio::spawn(async move {
                s.record_audit(AuditEntry {
                    tool: format!("t{i}"),
                    integration: "x".into(),
                    args: "{}".into(),
                    mutating: i % 3 == 0,
                    ok: true,
                    error_code: None,
                    error: None,
                    duration_ms: 1,
                    account: None,
                })
                .await
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        let rows = a.search_audit(AuditQuery { limit: 100, ..Default::default() }).await.unwrap();
        assert_eq!(rows.len(), 20);
        let muts = b.search_audit(AuditQuery { limit: 100, mutating_only: true, ..Default::default() }).await.unwrap();
        assert_eq!(muts.len(), 7);
        let text =
            a.search_audit(AuditQuery { limit: 100, text: Some("t1".into()), ..Default::default() }).await.unwrap();
        assert_eq!(text.len(), 11, "t1, t10..t19");
    }
}
