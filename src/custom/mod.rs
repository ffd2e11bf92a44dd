//! Custom apps: declarative HTTP apps the user defines (a base URL, an auth scheme whose secret
//! parts are `{{vault:NAME}}` refs, and operations). Each operation becomes a real tool in the
//! registry: searchable, described by get_tool_schema and run by execute_tools with the same
//! validation, audit, scrubbing and caps as a plugin tool.
//!
//! Requests go through the engine's one send path (`send::deliver`): the address guard
//! (a private or loopback base URL only if the user listed its origin in `private_hosts`), the
//! app's own rate-limit budget (`custom:<name>`), 429 handling and the body cap.
//!
//! Definitions live in SQLite (`custom_app`) with a generation counter that every change bumps;
//! `App::registry()` compares it on use, so an app created by another workbench process shows up
//! without a restart. A definition is checked whole before it is stored: every problem is listed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use plugins::api::{ArgProblem, Effect, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::app::App;
use crate::error::ToolFailure;
use crate::secrets::Secret;
use crate::template;

mod check;
mod def;
mod run;

pub use check::*;
pub use def::*;
pub use run::*;

/// Most operations one app may define.
pub const MAX_OPERATIONS: usize = 50;
/// A custom app's request budget unless the user sets `WORKBENCH_<APP>_RATE_LIMIT`.
pub const CUSTOM_RATE_LIMIT: plugins::api::RateLimit = plugins::api::RateLimit { requests: 10, per_seconds: 1 };
/// Longest tool name (portable to strict clients).
const MAX_TOOL_NAME: usize = 64;

pub use crate::ids::intern;

/// The custom apps as loaded from SQLite: checked operations, plus apps that no longer check
/// (a catalogue tool took their name in an upgrade) with their problems.
#[derive(Default)]
pub struct Loaded {
    pub generation: i64,
    pub apps: Vec<LoadedApp>,
}

pub struct LoadedApp {
    pub name: String,
    pub def: Option<AppDef>,
    pub operations: Vec<Arc<Operation>>,
    pub problems: Vec<ArgProblem>,
    pub created_at: String,
    pub updated_at: String,
}

/// Reads and checks every stored app.
pub fn load(
    storage: &crate::storage::Storage,
    taken: &ReservedNames<'_>,
) -> Result<Loaded, crate::storage::StorageError> {
    let (generation, rows) = storage.custom_apps()?;
    let apps = rows
        .into_iter()
        .map(|row| {
            let parsed: Result<AppDef, _> = serde_json::from_str(&row.definition);
            let (def, operations, problems) = match parsed {
                Err(e) => (None, Vec::new(), vec![problem("", format!("the stored definition no longer parses: {e}"))]),
                Ok(def) => match check(&def, taken) {
                    Ok(ops) => (Some(def), ops.into_iter().map(Arc::new).collect(), Vec::new()),
                    Err(p) => (Some(def), Vec::new(), p),
                },
            };
            if !problems.is_empty() {
                tracing::warn!(app = row.name, "a stored custom app no longer checks; its tools are hidden");
            }
            LoadedApp {
                name: row.name,
                def,
                operations,
                problems,
                created_at: row.created_at,
                updated_at: row.updated_at,
            }
        })
        .collect();
    Ok(Loaded { generation, apps })
}

/// Every vault name an app's auth and headers refer to.
pub fn vault_refs(def: &AppDef) -> Vec<String> {
    let mut texts: Vec<&String> = def.headers.values().collect();
    if let Some(a) = &def.auth {
        texts.extend([&a.token, &a.value, &a.username, &a.password].into_iter().flatten());
    }
    let mut names = Vec::new();
    for t in texts {
        for n in template::vault_names(&Value::String(t.clone())).unwrap_or_default() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names
}
