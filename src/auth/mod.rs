//! Connections: which credential an integration uses, where it comes from, and how it is attached.
//!
//! A connection is the set of an integration's form fields (token, email, site, ...). It comes from
//! the environment (`WORKBENCH_<INTEGRATION>_<FIELD>`, read-only from workbench's side, for CI and
//! headless use) or from the secret store (what the connect page saved). Secret fields travel as
//! [`Secret`]; only the engine's upstream attaches them to requests, as the integration's
//! [`Inject`] rule says.

use std::collections::HashMap;

use plugins::api::{AuthKind, Inject, Integration};

use crate::secrets::{Secret, SecretStore, StoreError};

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
    secret_names: Vec<&'static str>,
}

impl Connection {
    /// A non-secret field (site, email, host); secret fields are never handed out this way.
    pub fn public_field(&self, name: &str) -> Option<String> {
        if self.secret_names.contains(&name) && !name.ends_with("base_url") {
            return None;
        }
        self.fields.get(name).map(|v| v.expose().clone())
    }

    /// Every secret value, so results and errors can be scrubbed of them.
    pub fn secret_values(&self) -> Vec<String> {
        self.secret_names.iter().filter_map(|n| self.fields.get(*n)).map(|s| s.expose().clone()).collect()
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

/// Fields an integration's connection has (OAuth ones always carry at least a `token`).
fn field_names(integration: &Integration) -> Vec<(&'static str, bool, bool)> {
    let mut names: Vec<(&'static str, bool, bool)> =
        integration.auth.fields.iter().map(|f| (f.name, f.secret, f.required)).collect();
    if integration.auth.kind == AuthKind::OAuth2 && !names.iter().any(|(n, _, _)| *n == "token") {
        names.push(("token", true, true));
    }
    names
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
        secret_names: names.iter().filter(|(_, s, _)| *s).map(|(n, _, _)| *n).collect(),
    })
}

/// The credential saved in the secret store, if any.
pub fn from_store(
    integration: &'static Integration,
    store: &dyn SecretStore,
) -> Result<Option<Connection>, StoreError> {
    let Some(blob) = store.get(&store_key(integration.name))? else { return Ok(None) };
    let map: HashMap<String, String> = serde_json::from_str(blob.expose()).unwrap_or_default();
    if map.is_empty() {
        return Ok(None);
    }
    let names = field_names(integration);
    Ok(Some(Connection {
        integration: integration.name,
        fields: map.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(),
        source: Source::Store,
        secret_names: names.iter().filter(|(_, s, _)| *s).map(|(n, _, _)| *n).collect(),
    }))
}

/// A connection built from form fields (before it is verified and stored).
pub fn from_fields(
    integration: &'static Integration,
    fields: HashMap<String, Secret<String>>,
    source: Source,
) -> Connection {
    let names = field_names(integration);
    Connection {
        integration: integration.name,
        fields,
        source,
        secret_names: names.iter().filter(|(_, s, _)| *s).map(|(n, _, _)| *n).collect(),
    }
}

/// Saves a connection's fields to the secret store as one entry.
pub fn save(
    integration: &str,
    fields: &HashMap<String, Secret<String>>,
    store: &dyn SecretStore,
) -> Result<(), StoreError> {
    let plain: HashMap<&str, &str> = fields.iter().map(|(k, v)| (k.as_str(), v.expose().as_str())).collect();
    let blob = Secret::new(serde_json::to_string(&plain).unwrap_or_default());
    store.set(&store_key(integration), &blob)
}

/// Removes a saved connection; true when there was one.
pub fn erase(integration: &str, store: &dyn SecretStore) -> Result<bool, StoreError> {
    store.delete(&store_key(integration))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names() {
        assert_eq!(env_name("google_drive", "token"), "WORKBENCH_GOOGLE_DRIVE_TOKEN");
    }
}
