//! Tests only: reading and rewriting the committed schema table `plugins/src/schemas.rs` (the one
//! place in this crate that touches a file; `tests/it/tidy.rs` allows it here, compiled only
//! under `cfg(test)`). The server reads the table compiled in, never the file.

use serde_json::Value;

/// The committed file's text as this test build saw it.
pub const PLUGINS_SCHEMAS: &str = include_str!("schemas.rs");

/// With `UPDATE_SCHEMAS=1`, rewrites `path` (under the crate) as [`crate::schema::render_table`]
/// makes it from `generated` and answers `Ok(true)` (the table compiled into this test is the old
/// one until the next build); otherwise does nothing (`Ok(false)`).
pub fn update_if_asked(path: &str, doc: &str, generated: &[(String, Value)]) -> Result<bool, String> {
    if std::env::var_os("UPDATE_SCHEMAS").is_none_or(|v| v != "1") {
        return Ok(false);
    }
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::write(&file, crate::schema::render_table(doc, generated)).map_err(|e| format!("{path}: {e}"))?;
    Ok(true)
}
