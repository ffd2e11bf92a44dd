//! Connection metadata: which accounts of which integrations are connected, as whom, until when,
//! which is the default, and where the secret lives (the secret itself is in the secret store).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::custom_apps::wrote_custom_app;
use super::{Storage, StorageError};

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
