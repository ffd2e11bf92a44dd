//! Custom apps as stored (name and validated definition) and the generation counter every process
//! reads to notice another process's changes.

use std::sync::Arc;

use rusqlite::params;

use super::{Storage, StorageError, now_rfc3339};

/// Custom-app changes this process committed (see [`Storage::custom_writes_here`]).
static CUSTOM_WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(super) fn wrote_custom_app() {
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
