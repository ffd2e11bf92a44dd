//! Upstream MCP servers: each server's cached tool listing and last error, and the tool definitions
//! the user accepted (pins).

use std::sync::Arc;

use rusqlite::params;

use super::{Storage, StorageError, now_rfc3339};

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

    /// One server's cached listing (the tools as JSON text), if any.
    pub fn upstream_listing(&self, server: &str) -> Result<Option<String>, StorageError> {
        let server = server.to_string();
        self.call_blocking(move |c| {
            use rusqlite::OptionalExtension as _;
            c.query_row("SELECT tools FROM upstream_listing WHERE server = ?1", [&server], |r| r.get(0)).optional()
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

    /// Every pinned tool's (server, tool, hash), and the servers accepted at least once: what a
    /// process keeps of the pins (the definitions are read one at a time, [`Self::upstream_pin_definition`]).
    #[allow(clippy::type_complexity)]
    pub fn upstream_pin_hashes(&self) -> Result<(Vec<(String, String, String)>, Vec<String>), StorageError> {
        self.call_blocking(|c| {
            let mut stmt = c.prepare("SELECT server, tool, hash FROM upstream_pin ORDER BY server, tool")?;
            let pins =
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<rusqlite::Result<Vec<_>>>()?;
            let mut stmt = c.prepare("SELECT server FROM upstream_pinned_server ORDER BY server")?;
            let servers = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
            Ok((pins, servers))
        })
    }

    /// The definition the user accepted for one tool of `server` (JSON text), if any.
    pub fn upstream_pin_definition(&self, server: &str, tool: &str) -> Result<Option<String>, StorageError> {
        let (server, tool) = (server.to_string(), tool.to_string());
        self.call_blocking(move |c| {
            use rusqlite::OptionalExtension as _;
            c.query_row("SELECT definition FROM upstream_pin WHERE server = ?1 AND tool = ?2", [&server, &tool], |r| {
                r.get(0)
            })
            .optional()
        })
    }

    /// What may have changed the pins since a last look, cheaply: SQLite's `data_version` (it
    /// moves when another connection, another workbench process, commits anything) and the pin
    /// writes made through this one. Equal versions: the pins are as last read, and a process
    /// with thousands of upstream tools does not read them all again every few seconds.
    pub fn pins_version(&self) -> Result<(i64, u64), StorageError> {
        let data = self.call_blocking(|c| c.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)))?;
        Ok((data, self.pin_writes.load(std::sync::atomic::Ordering::Acquire)))
    }

    fn pins_written(&self) {
        self.pin_writes.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// Accepts `pins` for `server` (marking it accepted); with `replace`, its other pins go.
    pub fn pin_upstream(&self, server: &str, pins: Vec<UpstreamPin>, replace: bool) -> Result<(), StorageError> {
        self.pins_written();
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
        self.pins_written();
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
