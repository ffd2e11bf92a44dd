//! The audit log: rows written (or, while another process holds the database, kept in memory and
//! written with the next audit write or read), read back with filters, and the trace context of the
//! request that wrote them.

use std::sync::Arc;

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use super::{Storage, StorageError, now_rfc3339};

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

/// An audit row waiting to be written: its time, trace context, the row, the guard's record.
pub(super) type PendingAudit = (String, Option<String>, AuditEntry, Option<String>);

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
impl Storage {
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
}

/// Whether SQLite gave up waiting for another connection's lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}
