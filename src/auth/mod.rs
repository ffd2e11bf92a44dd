//! Connections: which credential an integration uses, where it comes from, and how it is attached.
//!
//! A connection is the set of an integration's form fields (token, email, site, ...). It comes from
//! the environment (`WORKBENCH_<INTEGRATION>_<FIELD>`, read-only from workbench's side, for CI and
//! headless use) or from the secret store (what the connect page saved). Secret fields travel as
//! [`Secret`]; only the engine's upstream attaches them to requests, as the integration's
//! [`Inject`] rule says.

use std::collections::HashMap;

use plugins::api::{AuthKind, Inject, Integration};

use crate::app::App;
use crate::secrets::{Secret, SecretStore, StoreError};
use crate::storage::ConnectionMeta;

/// Where a connection's credential lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Environment,
    Store,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Environment => "environment",
            Source::Store => "store",
        }
    }
}

/// Name/value pairs whose values are secret (headers or query parameters).
pub type SecretPairs = Vec<(String, Secret<String>)>;

/// A usable credential for one integration.
#[derive(Debug, Clone)]
pub struct Connection {
    pub integration: &'static str,
    pub fields: HashMap<String, Secret<String>>,
    pub source: Source,
    /// Unix seconds when an OAuth access token expires, if known.
    pub expires_at: Option<i64>,
    public_names: Vec<&'static str>,
}

impl Connection {
    /// A field declared non-secret (site, email, host); secret fields are never handed out this way.
    pub fn public_field(&self, name: &str) -> Option<String> {
        if !self.public_names.contains(&name) {
            return None;
        }
        self.fields.get(name).map(|v| v.expose().clone())
    }

    /// Every secret value, so results and errors can be scrubbed of them.
    pub fn secret_values(&self) -> Vec<String> {
        self.fields
            .iter()
            .filter(|(k, _)| !self.public_names.contains(&k.as_str()))
            .map(|(_, v)| v.expose().clone())
            .collect()
    }

    fn is_public(&self, name: &str) -> bool {
        self.public_names.contains(&name)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(|s| s.expose().as_str())
    }

    /// The headers and query parameters that carry this credential.
    pub fn injection(&self, inject: &Inject) -> (SecretPairs, SecretPairs) {
        let mut headers = Vec::new();
        let mut query = Vec::new();
        match inject {
            Inject::None => {}
            Inject::Bearer(field) => {
                if let Some(v) = self.get(field) {
                    headers.push(("authorization".to_string(), Secret::new(format!("Bearer {v}"))));
                }
            }
            Inject::Header { name, prefix, field } => {
                if let Some(v) = self.get(field) {
                    headers.push((name.to_ascii_lowercase(), Secret::new(format!("{prefix}{v}"))));
                }
            }
            Inject::Basic { user, pass } => {
                if let (Some(u), Some(p)) = (self.get(user), self.get(pass)) {
                    headers.push((
                        "authorization".to_string(),
                        Secret::new(format!("Basic {}", plugins::codec::base64_encode(format!("{u}:{p}").as_bytes()))),
                    ));
                }
            }
            Inject::Query(pairs) => {
                for (param, field) in *pairs {
                    if let Some(v) = self.get(field) {
                        query.push((param.to_string(), Secret::new(v.to_string())));
                    }
                }
            }
            // The engine's session layer logs in and attaches the session (engine::session).
            Inject::Session(_) => {}
        }
        (headers, query)
    }
}

/// The environment variable for one field of one integration.
pub fn env_name(integration: &str, field: &str) -> String {
    format!("WORKBENCH_{integration}_{field}").to_ascii_uppercase()
}

fn store_key(integration: &str) -> String {
    format!("connection:{integration}")
}

/// Fields an integration's connection has, as (name, secret, required). OAuth connections also
/// carry `token` and `refresh_token`, both secret.
fn field_names(integration: &Integration) -> Vec<(&'static str, bool, bool)> {
    let mut names: Vec<(&'static str, bool, bool)> =
        integration.auth.fields.iter().map(|f| (f.name, f.secret, f.required)).collect();
    if integration.auth.kind == AuthKind::OAuth2 {
        for extra in ["token", "refresh_token"] {
            if !names.iter().any(|(n, _, _)| *n == extra) {
                names.push((extra, true, extra == "token"));
            }
        }
    }
    names
}

/// Fields declared non-secret; everything else a connection holds is treated as secret.
fn public_names(integration: &Integration) -> Vec<&'static str> {
    integration.auth.fields.iter().filter(|f| !f.secret).map(|f| f.name).collect()
}

/// The credential from the environment, when every required field is set there.
pub fn from_env(integration: &'static Integration, var: &dyn Fn(&str) -> Option<String>) -> Option<Connection> {
    if integration.auth.kind == AuthKind::None {
        return None;
    }
    let names = field_names(integration);
    let mut fields = HashMap::new();
    for (name, _, required) in &names {
        match var(&env_name(integration.name, name)).filter(|v| !v.is_empty()) {
            Some(v) => {
                fields.insert(name.to_string(), Secret::new(v));
            }
            None if *required => return None,
            None => {}
        }
    }
    Some(Connection {
        integration: integration.name,
        fields,
        source: Source::Environment,
        expires_at: None,
        public_names: public_names(integration),
    })
}

/// The credential saved in the secret store for a connection SQLite knows about.
pub fn from_store(
    integration: &'static Integration,
    store: &dyn SecretStore,
    meta: &ConnectionMeta,
) -> Result<Option<Connection>, StoreError> {
    let Some(blob) = store.get(&store_key(integration.name))? else { return Ok(None) };
    let map: HashMap<String, String> = serde_json::from_str(blob.expose()).unwrap_or_default();
    if map.is_empty() {
        return Ok(None);
    }
    let mut connection =
        from_fields(integration, map.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(), Source::Store);
    connection.expires_at = meta.expires_at;
    Ok(Some(connection))
}

/// A connection built from form fields (before it is verified and stored).
pub fn from_fields(
    integration: &'static Integration,
    fields: HashMap<String, Secret<String>>,
    source: Source,
) -> Connection {
    Connection {
        integration: integration.name,
        fields,
        source,
        expires_at: None,
        public_names: public_names(integration),
    }
}

/// What to record about a verified connection besides its fields.
#[derive(Debug, Clone, Default)]
pub struct Saved {
    pub account_label: Option<String>,
    pub scopes: Option<String>,
    pub expires_at: Option<i64>,
}

/// Stores a verified connection: every field in the secret store as one entry, and the metadata
/// (account, scopes, expiry, non-secret fields, which store) in SQLite. The secret is written first,
/// so SQLite never claims a connection whose secret is missing.
pub fn save(app: &App, connection: &Connection, saved: Saved) -> Result<(), StoreError> {
    let plain: HashMap<&str, &str> = connection.fields.iter().map(|(k, v)| (k.as_str(), v.expose().as_str())).collect();
    let blob = Secret::new(serde_json::to_string(&plain).unwrap_or_default());
    app.secrets.set(&store_key(connection.integration), &blob)?;
    let mut public = serde_json::Map::new();
    for (k, v) in &connection.fields {
        if connection.is_public(k) {
            public.insert(k.clone(), serde_json::Value::String(v.expose().clone()));
        }
    }
    let now = crate::storage::now_rfc3339();
    let created = app
        .storage
        .connection_meta(connection.integration)
        .ok()
        .flatten()
        .map(|m| m.created_at)
        .unwrap_or_else(|| now.clone());
    app.storage
        .put_connection_meta(&ConnectionMeta {
            integration: connection.integration.to_string(),
            account_label: saved.account_label,
            scopes: saved.scopes,
            expires_at: saved.expires_at,
            store: app.secrets.name().to_string(),
            public_fields: public,
            created_at: created,
            updated_at: now,
        })
        .map_err(|e| StoreError::Unavailable { store: "sqlite", reason: e.to_string() })
}

/// Removes a stored connection (metadata first, so a half-done erase never looks connected).
/// True when there was one.
pub fn erase(app: &App, integration: &str) -> Result<bool, StoreError> {
    let had_meta = app
        .storage
        .delete_connection_meta(integration)
        .map_err(|e| StoreError::Unavailable { store: "sqlite", reason: e.to_string() })?;
    let had_secret = app.secrets.delete(&store_key(integration))?;
    Ok(had_meta || had_secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names() {
        assert_eq!(env_name("google_drive", "token"), "WORKBENCH_GOOGLE_DRIVE_TOKEN");
    }
}
