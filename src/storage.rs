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
use serde_json::{Value, json};

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

tokio::task_local! {
    /// The validated `traceparent` of the MCP request being served; audit rows written inside
    /// it (the engine writes them on the calling task) carry it.
    static TRACE: Option<String>;
}

/// Runs `fut` with `traceparent` as the trace context of the audit rows it writes.
pub async fn with_trace<F: std::future::Future>(traceparent: Option<String>, fut: F) -> F::Output {
    TRACE.scope(traceparent, fut).await
}

/// A W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`, ids not all zero), lower-cased; anything
/// else is `None` (the value is the client's, so nothing else is stored).
pub fn parse_traceparent(text: &str) -> Option<String> {
    let t = text.trim().to_ascii_lowercase();
    let parts: Vec<&str> = t.split('-').collect();
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let ok = parts.len() == 4
        && hex(parts[0], 2)
        && parts[0] != "ff"
        && hex(parts[1], 32)
        && hex(parts[2], 16)
        && hex(parts[3], 2)
        && parts[1].bytes().any(|b| b != b'0')
        && parts[2].bytes().any(|b| b != b'0');
    ok.then_some(t)
}

pub struct Storage {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
    /// Audit rows (with their time) not yet written because the database was busy.
    pending_audit: Mutex<Vec<PendingAudit>>,
}

/// An audit row waiting to be written: its time, trace context, the row, the guard's record.
type PendingAudit = (String, Option<String>, AuditEntry, Option<String>);

/// Most audit rows kept in memory while the database stays busy; the oldest go first.
const MAX_PENDING_AUDIT: usize = 10_000;

/// One audit row as written.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub tool: String,
    pub integration: String,
    /// Arguments as the agent wrote them, scrubbed and size-capped.
    pub args: String,
    pub mutating: bool,
    pub ok: bool,
    pub error_code: Option<String>,
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The account of the integration the call used (`None`: no connection, or a built-in).
    pub account: Option<String>,
}

/// Filters for reading the audit log back.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub since: Option<String>,
    pub until: Option<String>,
    pub integration: Option<String>,
    pub tool: Option<String>,
    pub mutating_only: bool,
    pub status: Option<String>,
    pub text: Option<String>,
    pub before_id: Option<i64>,
    pub limit: usize,
}

/// Vault secret metadata (the value lives in the secret store).
#[derive(Debug, Clone, PartialEq)]
pub struct VaultMeta {
    pub name: String,
    pub description: Option<String>,
    pub allowed_hosts: Vec<String>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Storage {
    pub fn new(path: PathBuf) -> Arc<Storage> {
        Arc::new(Storage { path, conn: Mutex::new(None), pending_audit: Mutex::new(Vec::new()) })
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

    /// Appends an audit row. When the database stays busy past the busy timeout (another process
    /// holds the write lock) the row is kept and written with the next audit write or read, and
    /// this still succeeds: the call it records must not fail for it.
    pub async fn record_audit(self: &Arc<Self>, entry: AuditEntry) -> Result<(), StorageError> {
        self.record_audit_with_flow(entry, None).await
    }

    /// [`Storage::record_audit`] with the outbound-data guard's decision on the call (held,
    /// approved, refused; its sources and audience), kept in a column the agent's audit tools do
    /// not read.
    pub async fn record_audit_with_flow(
        self: &Arc<Self>,
        entry: AuditEntry,
        flow: Option<String>,
    ) -> Result<(), StorageError> {
        let trace = TRACE.try_with(Clone::clone).ok().flatten();
        self.pending_audit.lock().unwrap_or_else(|p| p.into_inner()).push((now_rfc3339(), trace, entry, flow));
        let this = self.clone();
        match self.call(move |c| this.flush_audit(c)).await {
            Err(StorageError::Sqlite { source, .. }) if is_busy(&source) => {
                let waiting = self.pending_audit.lock().unwrap_or_else(|p| p.into_inner()).len();
                tracing::warn!(waiting, "the database is busy (another process holds it); audit rows wait in memory");
                Ok(())
            }
            other => other,
        }
    }

    /// Writes the waiting audit rows in one transaction; on failure they wait again, in order.
    fn flush_audit(&self, c: &Connection) -> rusqlite::Result<()> {
        let rows = std::mem::take(&mut *self.pending_audit.lock().unwrap_or_else(|p| p.into_inner()));
        if rows.is_empty() {
            return Ok(());
        }
        let written = (|| {
            let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
            for (ts, trace, entry, flow) in &rows {
                tx.execute(
                    "INSERT INTO audit (ts, tool, integration, args, mutating, status, error_code, error, duration_ms, traceparent, account, flow)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    params![
                        ts,
                        entry.tool,
                        entry.integration,
                        entry.args,
                        entry.mutating,
                        if entry.ok { "ok" } else { "error" },
                        entry.error_code,
                        entry.error,
                        entry.duration_ms as i64,
                        trace,
                        entry.account,
                        flow
                    ],
                )?;
            }
            tx.commit()
        })();
        if let Err(e) = written {
            let mut pending = self.pending_audit.lock().unwrap_or_else(|p| p.into_inner());
            let newer = std::mem::replace(&mut *pending, rows);
            pending.extend(newer);
            let excess = pending.len().saturating_sub(MAX_PENDING_AUDIT);
            if excess > 0 {
                pending.drain(..excess);
                tracing::warn!(
                    dropped = excess,
                    "too many audit rows waiting for a busy database; the oldest were dropped"
                );
            }
            return Err(e);
        }
        Ok(())
    }

    /// The outbound-data guard's latest decisions, newest first: (time, tool, decision). For the
    /// user's own views (the portal); the agent's audit tools never read this column.
    pub async fn flow_decisions(self: &Arc<Self>, limit: usize) -> Result<Vec<(String, String, String)>, StorageError> {
        let this = self.clone();
        self.call(move |c| {
            let _ = this.flush_audit(c);
            let mut stmt =
                c.prepare("SELECT ts, tool, flow FROM audit WHERE flow IS NOT NULL ORDER BY id DESC LIMIT ?1")?;
            let rows = stmt.query_map(params![limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
        .await
    }

    pub async fn search_audit(self: &Arc<Self>, q: AuditQuery) -> Result<Vec<Value>, StorageError> {
        let this = self.clone();
        self.call(move |c| {
            // Rows that waited for a busy database come first; if it is still busy they wait on.
            let _ = this.flush_audit(c);
            let mut sql = String::from(
                "SELECT id, ts, tool, integration, args, mutating, status, error_code, error, duration_ms, traceparent, account FROM audit WHERE 1=1",
            );
            let mut args: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
            let mut filters: Vec<(&str, Box<dyn rusqlite::ToSql>)> = Vec::new();
            if let Some(s) = q.since {
                filters.push(("ts >= ?N", Box::new(s)));
            }
            if let Some(u) = q.until {
                filters.push(("ts <= ?N", Box::new(u)));
            }
            if let Some(i) = q.integration {
                filters.push(("integration = ?N", Box::new(i)));
            }
            if let Some(t) = q.tool {
                filters.push(("tool = ?N", Box::new(t)));
            }
            if let Some(s) = q.status {
                filters.push(("status = ?N", Box::new(s)));
            }
            if let Some(t) = q.text {
                let pattern = format!("%{}%", t.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
                filters.push((
                    "(args LIKE ?N ESCAPE '\\' OR tool LIKE ?N ESCAPE '\\' OR IFNULL(error, '') LIKE ?N ESCAPE '\\')",
                    Box::new(pattern),
                ));
            }
            if let Some(b) = q.before_id {
                filters.push(("id < ?N", Box::new(b)));
            }
            for (clause, value) in filters {
                args.push(value);
                sql.push_str(" AND ");
                sql.push_str(&clause.replace("?N", &format!("?{}", args.len())));
            }
            if q.mutating_only {
                sql.push_str(" AND mutating = 1");
            }
            sql.push_str(&format!(" ORDER BY id DESC LIMIT {}", q.limit));
            let mut stmt = c.prepare(&sql)?;
            let params: Vec<&dyn rusqlite::ToSql> = args.iter().map(|b| b.as_ref()).collect();
            let rows = stmt.query_map(params.as_slice(), |r| {
                let args_text: String = r.get(4)?;
                let mut row = json!({
                    "id": r.get::<_, i64>(0)?,
                    "time": r.get::<_, String>(1)?,
                    "tool": r.get::<_, String>(2)?,
                    "integration": r.get::<_, String>(3)?,
                    "args": serde_json::from_str::<Value>(&args_text).unwrap_or(Value::String(args_text)),
                    "mutating": r.get::<_, bool>(5)?,
                    "status": r.get::<_, String>(6)?,
                    "error_code": r.get::<_, Option<String>>(7)?,
                    "error": r.get::<_, Option<String>>(8)?,
                    "duration_ms": r.get::<_, i64>(9)?,
                });
                if let Some(t) = r.get::<_, Option<String>>(10)? {
                    row["traceparent"] = json!(t);
                }
                if let Some(a) = r.get::<_, Option<String>>(11)? {
                    row["account"] = json!(a);
                }
                Ok(row)
            })?;
            rows.collect()
        })
        .await
    }

    /// The local user as `(id, email)`, or `None` when the record is missing.
    pub async fn user(self: &Arc<Self>) -> Result<Option<(String, Option<String>)>, StorageError> {
        self.call(|c| {
            c.query_row("SELECT id, email FROM user WHERE singleton = 1", [], |r| Ok((r.get(0)?, r.get(1)?))).optional()
        })
        .await
    }

    pub async fn vault_meta(self: &Arc<Self>, name: String) -> Result<Option<VaultMeta>, StorageError> {
        self.call(move |c| {
            c.query_row(
                "SELECT name, description, allowed_hosts, created_at, last_used_at FROM vault_secret WHERE name = ?1",
                [name],
                vault_row,
            )
            .optional()
        })
        .await
    }

    pub async fn put_vault_meta(self: &Arc<Self>, meta: VaultMeta) -> Result<(), StorageError> {
        self.call(move |c| {
            c.execute(
                "INSERT INTO vault_secret (name, description, allowed_hosts, created_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (name) DO UPDATE SET description = excluded.description, allowed_hosts = excluded.allowed_hosts",
                params![meta.name, meta.description, serde_json::to_string(&meta.allowed_hosts).unwrap_or_default(), meta.created_at],
            )
            .map(|_| ())
        })
        .await
    }

    pub async fn list_vault_meta(self: &Arc<Self>, prefix: Option<String>) -> Result<Vec<VaultMeta>, StorageError> {
        self.call(move |c| {
            let mut stmt = c.prepare(
                "SELECT name, description, allowed_hosts, created_at, last_used_at FROM vault_secret WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name",
            )?;
            let rows = stmt.query_map([prefix.unwrap_or_default()], vault_row)?;
            rows.collect()
        })
        .await
    }

    pub async fn delete_vault_meta(self: &Arc<Self>, name: String) -> Result<bool, StorageError> {
        self.call(move |c| c.execute("DELETE FROM vault_secret WHERE name = ?1", [name]).map(|n| n > 0)).await
    }

    pub async fn touch_vault(self: &Arc<Self>, name: String) -> Result<(), StorageError> {
        self.call(move |c| {
            c.execute("UPDATE vault_secret SET last_used_at = ?1 WHERE name = ?2", params![now_rfc3339(), name])
                .map(|_| ())
        })
        .await
    }
}

/// What SQLite knows about a stored connection (no secrets): one account of one integration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionMeta {
    pub integration: String,
    /// The account's name the user picked (`default` for a connection from before accounts).
    pub account: String,
    /// Whether this is the integration's default account (the one a call naming none uses).
    pub is_default: bool,
    /// The identity workbench verified (login, email).
    pub account_label: Option<String>,
    pub scopes: Option<String>,
    /// Unix seconds when the access token expires (OAuth), if known.
    pub expires_at: Option<i64>,
    pub store: String,
    /// Non-secret fields (site, email, base_url) as JSON.
    pub public_fields: serde_json::Map<String, Value>,
    pub created_at: String,
    pub updated_at: String,
}

fn connection_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConnectionMeta> {
    let fields: String = r.get(7)?;
    Ok(ConnectionMeta {
        integration: r.get(0)?,
        account: r.get(1)?,
        is_default: r.get(2)?,
        account_label: r.get(3)?,
        scopes: r.get(4)?,
        expires_at: r.get(5)?,
        store: r.get(6)?,
        public_fields: serde_json::from_str(&fields).unwrap_or_default(),
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

const CONNECTION_COLUMNS: &str =
    "integration, account, is_default, account_label, scopes, expires_at, store, public_fields, created_at, updated_at";

impl Storage {
    /// The integration's default account's metadata.
    pub fn connection_meta(&self, integration: &str) -> Result<Option<ConnectionMeta>, StorageError> {
        Ok(self.accounts_of(integration)?.into_iter().find(|m| m.is_default))
    }

    /// One named account's metadata.
    pub fn account_meta(&self, integration: &str, account: &str) -> Result<Option<ConnectionMeta>, StorageError> {
        let (integration, account) = (integration.to_string(), account.to_string());
        self.call_blocking(move |c| {
            c.query_row(
                &format!("SELECT {CONNECTION_COLUMNS} FROM connection WHERE integration = ?1 AND account = ?2"),
                [integration, account],
                connection_row,
            )
            .optional()
        })
    }

    /// Every stored account of one integration, oldest first.
    pub fn accounts_of(&self, integration: &str) -> Result<Vec<ConnectionMeta>, StorageError> {
        let integration = integration.to_string();
        self.call_blocking(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {CONNECTION_COLUMNS} FROM connection WHERE integration = ?1 ORDER BY created_at, account"
            ))?;
            let rows = stmt.query_map([integration], connection_row)?;
            rows.collect()
        })
    }

    /// Every stored account of every integration, oldest first.
    pub fn connections(&self) -> Result<Vec<ConnectionMeta>, StorageError> {
        self.call_blocking(|c| {
            let mut stmt =
                c.prepare(&format!("SELECT {CONNECTION_COLUMNS} FROM connection ORDER BY created_at, account"))?;
            let rows = stmt.query_map([], connection_row)?;
            rows.collect()
        })
    }

    /// Writes one account's metadata. A new account becomes the default when its integration
    /// has no default yet (the first account connected); an existing one keeps its default flag.
    pub fn put_connection_meta(&self, meta: &ConnectionMeta) -> Result<(), StorageError> {
        let m = meta.clone();
        self.call_blocking(move |c| {
            let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
            let has_default: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM connection WHERE integration = ?1 AND is_default = 1 AND account <> ?2)",
                [&m.integration, &m.account],
                |r| r.get(0),
            )?;
            tx.execute(
                "INSERT INTO connection (integration, account, is_default, account_label, scopes, expires_at, store, public_fields, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (integration, account) DO UPDATE SET account_label = excluded.account_label, scopes = excluded.scopes,
                   expires_at = excluded.expires_at, store = excluded.store, public_fields = excluded.public_fields,
                   updated_at = excluded.updated_at, is_default = excluded.is_default OR connection.is_default",
                params![
                    m.integration,
                    m.account,
                    !has_default,
                    m.account_label,
                    m.scopes,
                    m.expires_at,
                    m.store,
                    Value::Object(m.public_fields.clone()).to_string(),
                    m.created_at,
                    m.updated_at
                ],
            )?;
            tx.commit()
        })
    }

    /// Removes one account's metadata; when it was the default, the oldest remaining account
    /// becomes the default. True when there was one.
    pub fn delete_connection_meta(&self, integration: &str, account: &str) -> Result<bool, StorageError> {
        let (integration, account) = (integration.to_string(), account.to_string());
        self.call_blocking(move |c| {
            let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
            let n =
                tx.execute("DELETE FROM connection WHERE integration = ?1 AND account = ?2", [&integration, &account])?;
            promote_default(&tx, &integration)?;
            tx.commit()?;
            if n > 0 {
                wrote_custom_app();
            }
            Ok(n > 0)
        })
    }

    /// Makes `account` the integration's default (the user's choice: CLI or portal only). False
    /// when no such account is stored.
    pub fn set_default_account(&self, integration: &str, account: &str) -> Result<bool, StorageError> {
        let (integration, account) = (integration.to_string(), account.to_string());
        self.call_blocking(move |c| {
            let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM connection WHERE integration = ?1 AND account = ?2)",
                [&integration, &account],
                |r| r.get(0),
            )?;
            if exists {
                tx.execute(
                    "UPDATE connection SET is_default = (account = ?2) WHERE integration = ?1",
                    [&integration, &account],
                )?;
            }
            tx.commit()?;
            Ok(exists)
        })
    }
}

/// Gives an integration without a default account one (its oldest).
fn promote_default(c: &Connection, integration: &str) -> rusqlite::Result<()> {
    c.execute(
        "UPDATE connection SET is_default = 1 WHERE integration = ?1
           AND NOT EXISTS (SELECT 1 FROM connection WHERE integration = ?1 AND is_default = 1)
           AND account = (SELECT account FROM connection WHERE integration = ?1 ORDER BY created_at, account LIMIT 1)",
        [integration],
    )
    .map(|_| ())
}

/// Custom-app changes this process committed (see [`Storage::custom_writes_here`]).
static CUSTOM_WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn wrote_custom_app() {
    CUSTOM_WRITES.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
}

/// A stored custom app: its name and definition (JSON text, validated before it was stored).
#[derive(Debug, Clone, PartialEq)]
pub struct CustomAppRow {
    pub name: String,
    pub definition: String,
    pub created_at: String,
    pub updated_at: String,
}

impl Storage {
    /// How many custom-app changes this process made (any database): a registry snapshot reads
    /// SQLite's generation at once after one, and otherwise only now and then.
    pub fn custom_writes_here() -> u64 {
        CUSTOM_WRITES.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The custom-apps generation: bumped by every change, by any process.
    pub fn custom_generation(&self) -> Result<i64, StorageError> {
        self.call_blocking(|c| c.query_row("SELECT value FROM counter WHERE name = 'custom_apps'", [], |r| r.get(0)))
    }

    /// Every custom app with the generation they belong to, read in one transaction.
    pub fn custom_apps(&self) -> Result<(i64, Vec<CustomAppRow>), StorageError> {
        self.call_blocking(|c| {
            let tx = c.unchecked_transaction()?;
            let generation: i64 =
                tx.query_row("SELECT value FROM counter WHERE name = 'custom_apps'", [], |r| r.get(0))?;
            let rows = {
                let mut stmt =
                    tx.prepare("SELECT name, definition, created_at, updated_at FROM custom_app ORDER BY name")?;
                let rows = stmt.query_map([], |r| {
                    Ok(CustomAppRow {
                        name: r.get(0)?,
                        definition: r.get(1)?,
                        created_at: r.get(2)?,
                        updated_at: r.get(3)?,
                    })
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()?
            };
            tx.commit()?;
            Ok((generation, rows))
        })
    }

    /// Stores or replaces a custom app; true when it replaced one.
    pub async fn put_custom_app(self: &Arc<Self>, name: String, definition: String) -> Result<bool, StorageError> {
        self.call(move |c| {
            let tx = c.unchecked_transaction()?;
            let now = now_rfc3339();
            let existed: bool =
                tx.query_row("SELECT COUNT(*) FROM custom_app WHERE name = ?1", [&name], |r| r.get::<_, i64>(0))? > 0;
            tx.execute(
                "INSERT INTO custom_app (name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at",
                params![name, definition, now],
            )?;
            tx.execute("UPDATE counter SET value = value + 1 WHERE name = 'custom_apps'", [])?;
            tx.commit()?;
            wrote_custom_app();
            Ok(existed)
        })
        .await
    }

    /// Deletes a custom app; true when it existed.
    pub async fn delete_custom_app(self: &Arc<Self>, name: String) -> Result<bool, StorageError> {
        self.call(move |c| {
            let tx = c.unchecked_transaction()?;
            let n = tx.execute("DELETE FROM custom_app WHERE name = ?1", [&name])?;
            if n > 0 {
                tx.execute("UPDATE counter SET value = value + 1 WHERE name = 'custom_apps'", [])?;
            }
            tx.commit()?;
            if n > 0 {
                wrote_custom_app();
            }
            Ok(n > 0)
        })
        .await
    }
}

/// One upstream MCP server's cached listing (see `src/upstream`).
#[derive(Debug, Clone)]
pub struct UpstreamListing {
    pub server: String,
    /// The `tools/list` answer's tools, as JSON text.
    pub tools: String,
    pub listed_at: String,
    pub last_error: Option<String>,
}

/// One upstream tool definition the user accepted (see `src/upstream`, "Pinning").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamPin {
    pub server: String,
    pub tool: String,
    /// Hex SHA-256 of the definition's name, title, description, input schema and annotations.
    pub hash: String,
    /// Those fields as JSON text.
    pub definition: String,
}

impl Storage {
    /// Every cached upstream listing, by server name.
    pub fn upstream_listings(&self) -> Result<Vec<UpstreamListing>, StorageError> {
        self.call_blocking(|c| {
            let mut stmt =
                c.prepare("SELECT server, tools, listed_at, last_error FROM upstream_listing ORDER BY server")?;
            let rows = stmt.query_map([], |r| {
                Ok(UpstreamListing { server: r.get(0)?, tools: r.get(1)?, listed_at: r.get(2)?, last_error: r.get(3)? })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
    }

    /// Stores a server's fresh listing (clearing its last error).
    pub async fn put_upstream_listing(self: &Arc<Self>, server: String, tools: String) -> Result<(), StorageError> {
        self.call(move |c| {
            c.execute(
                "INSERT INTO upstream_listing (server, tools, listed_at, last_error) VALUES (?1, ?2, ?3, NULL)
                 ON CONFLICT (server) DO UPDATE SET tools = excluded.tools, listed_at = excluded.listed_at,
                 last_error = NULL",
                params![server, tools, now_rfc3339()],
            )
            .map(|_| ())
        })
        .await
    }

    /// Records a server's last error (already scrubbed), keeping its listing.
    pub async fn set_upstream_error(self: &Arc<Self>, server: String, error: String) -> Result<(), StorageError> {
        self.call(move |c| {
            c.execute(
                "INSERT INTO upstream_listing (server, tools, listed_at, last_error) VALUES (?1, '[]', ?2, ?3)
                 ON CONFLICT (server) DO UPDATE SET last_error = excluded.last_error",
                params![server, now_rfc3339(), error],
            )
            .map(|_| ())
        })
        .await
    }

    /// Every pinned (accepted) upstream tool definition, and the servers accepted at least once.
    pub fn upstream_pins(&self) -> Result<(Vec<UpstreamPin>, Vec<String>), StorageError> {
        self.call_blocking(|c| {
            let mut stmt =
                c.prepare("SELECT server, tool, hash, definition FROM upstream_pin ORDER BY server, tool")?;
            let pins = stmt
                .query_map([], |r| {
                    Ok(UpstreamPin { server: r.get(0)?, tool: r.get(1)?, hash: r.get(2)?, definition: r.get(3)? })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = c.prepare("SELECT server FROM upstream_pinned_server ORDER BY server")?;
            let servers = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
            Ok((pins, servers))
        })
    }

    /// Accepts `pins` for `server` (marking it accepted); with `replace`, its other pins go.
    pub fn pin_upstream(&self, server: &str, pins: Vec<UpstreamPin>, replace: bool) -> Result<(), StorageError> {
        let server = server.to_string();
        self.call_blocking(move |c| {
            let tx = rusqlite::Transaction::new_unchecked(c, rusqlite::TransactionBehavior::Immediate)?;
            let now = now_rfc3339();
            tx.execute(
                "INSERT INTO upstream_pinned_server (server, pinned_at) VALUES (?1, ?2) ON CONFLICT (server) DO NOTHING",
                params![server, now],
            )?;
            if replace {
                tx.execute("DELETE FROM upstream_pin WHERE server = ?1", [&server])?;
            }
            for p in &pins {
                tx.execute(
                    "INSERT INTO upstream_pin (server, tool, hash, definition, accepted_at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition,
                     accepted_at = excluded.accepted_at",
                    params![server, p.tool, p.hash, p.definition, now],
                )?;
            }
            tx.commit()
        })
    }

    /// Forgets what the user accepted of a server (it is removed).
    pub fn delete_upstream_pins(&self, server: &str) -> Result<(), StorageError> {
        let server = server.to_string();
        self.call_blocking(move |c| {
            c.execute("DELETE FROM upstream_pin WHERE server = ?1", [&server])?;
            c.execute("DELETE FROM upstream_pinned_server WHERE server = ?1", [&server]).map(|_| ())
        })
    }

    /// Forgets a server's listing; true when there was one.
    pub async fn delete_upstream_listing(self: &Arc<Self>, server: String) -> Result<bool, StorageError> {
        self.call(move |c| c.execute("DELETE FROM upstream_listing WHERE server = ?1", [&server]).map(|n| n > 0)).await
    }
}

/// Whether SQLite gave up waiting for another connection's lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

fn vault_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<VaultMeta> {
    let hosts: String = r.get(2)?;
    Ok(VaultMeta {
        name: r.get(0)?,
        description: r.get(1)?,
        allowed_hosts: serde_json::from_str(&hosts).unwrap_or_default(),
        created_at: r.get(3)?,
        last_used_at: r.get(4)?,
    })
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
