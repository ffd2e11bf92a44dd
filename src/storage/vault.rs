//! Vault secret metadata: names, descriptions, allowed hosts, times. The values live in the secret
//! store.

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};

use super::{Storage, StorageError, now_rfc3339};

/// Vault secret metadata (the value lives in the secret store).
#[derive(Debug, Clone, PartialEq)]
pub struct VaultMeta {
    pub name: String,
    pub description: Option<String>,
    pub allowed_hosts: Vec<String>,
    pub created_at: String,
    pub last_used_at: Option<String>,
}
impl Storage {
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
