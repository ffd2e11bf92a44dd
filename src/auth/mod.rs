//! Connections: which credential an integration uses, where it comes from, and how it is attached.
//!
//! A connection is the set of an integration's form fields (token, email, site, ...). It comes from
//! the environment (`WORKBENCH_<INTEGRATION>_<FIELD>`, read-only from workbench's side, for CI and
//! headless use) or from the secret store (what the connect page saved). Secret fields travel as
//! [`Secret`]; only the engine's upstream attaches them to requests, as the integration's
//! [`Inject`] rule says.
//!
//! An integration can hold several named **accounts** (`work`, `personal`), each a connection of
//! its own: its own secret-store entry (`connection:<integration>` for the account `default`, as
//! before accounts, `connection:<integration>:<account>` for the others), metadata row, token
//! refresh, session and request budget. In the environment the account `default` is spelled as
//! always (`WORKBENCH_GITHUB_TOKEN`) and another account with double underscores
//! (`WORKBENCH_GITHUB__WORK__TOKEN`): integration names and fields never contain `__`, and
//! account names never contain `_`, so the spelling cannot be read two ways.

pub mod oauth;
pub mod sessions;

use std::collections::HashMap;

use plugins::api::{AuthKind, Inject, Integration};

use crate::app::App;
use crate::secrets::{Secret, SecretStore, StoreError};
use crate::storage::ConnectionMeta;

/// One of the app's integrations by name.
pub fn integration(app: &App, name: &str) -> Option<&'static Integration> {
    app.state.integrations.iter().copied().find(|i| i.name == name)
}

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
    /// The account this credential belongs to ([`DEFAULT_ACCOUNT`] unless the user named one).
    pub account: String,
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

    /// The key of this account's request budget, session and refresh lock: `<integration>:<account>`.
    pub fn account_key(&self) -> String {
        account_key(self.integration, &self.account)
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
            // The engine's session layer logs in and attaches the session (send::session).
            Inject::Session(_) => {}
        }
        (headers, query)
    }
}

/// The account a connection made before accounts became, and the one the plain environment
/// variables name.
pub const DEFAULT_ACCOUNT: &str = "default";

/// Longest account name.
pub const MAX_ACCOUNT_CHARS: usize = 32;

/// Why `name` cannot be an account name, if it cannot: 1-32 lowercase letters, digits or `-`,
/// starting with a letter or digit (no `_`, so environment spellings stay unambiguous).
pub fn account_problem(name: &str) -> Option<String> {
    let ok_chars = name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let starts = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if name.is_empty() || name.len() > MAX_ACCOUNT_CHARS || !ok_chars || !starts {
        return Some(format!(
            "account names are 1-{MAX_ACCOUNT_CHARS} lowercase letters, digits or '-', starting with a letter or digit (like 'work' or 'client-a')"
        ));
    }
    None
}

/// The key of one account's budget, session and refresh lock.
pub fn account_key(integration: &str, account: &str) -> String {
    format!("{integration}:{account}")
}

/// The environment variable for one field of one integration's account `default`.
pub fn env_name(integration: &str, field: &str) -> String {
    format!("WORKBENCH_{integration}_{field}").to_ascii_uppercase()
}

/// The environment variable for one field of one account: the plain spelling for `default`,
/// `WORKBENCH_<INTEGRATION>__<ACCOUNT>__<FIELD>` (a `-` in the account written `_`) otherwise.
pub fn env_name_as(integration: &str, account: &str, field: &str) -> String {
    if account == DEFAULT_ACCOUNT {
        return env_name(integration, field);
    }
    format!("WORKBENCH_{integration}__{}__{field}", account.replace('-', "_")).to_ascii_uppercase()
}

/// The named accounts (not `default`) the environment has variables for: every
/// `WORKBENCH_<INTEGRATION>__<ACCOUNT>__<FIELD>` whose account is a valid name, sorted.
pub fn env_account_names<'a>(integration: &str, names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let prefix = format!("WORKBENCH_{}__", integration.to_ascii_uppercase());
    let mut found: Vec<String> = names
        .filter_map(|n| n.strip_prefix(&prefix))
        .filter_map(|rest| {
            let (account, field) = rest.split_once("__")?;
            (!field.is_empty() && !field.contains("__")).then(|| account.to_ascii_lowercase().replace('_', "-"))
        })
        .filter(|a| account_problem(a).is_none() && a != DEFAULT_ACCOUNT)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn store_key(integration: &str, account: &str) -> String {
    if account == DEFAULT_ACCOUNT {
        format!("connection:{integration}")
    } else {
        format!("connection:{integration}:{account}")
    }
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

/// The account `default`'s credential from the environment, when every required field is set there.
pub fn from_env(integration: &'static Integration, var: &dyn Fn(&str) -> Option<String>) -> Option<Connection> {
    from_env_as(integration, DEFAULT_ACCOUNT, var)
}

/// One account's credential from the environment, when every required field is set there.
pub fn from_env_as(
    integration: &'static Integration,
    account: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Option<Connection> {
    if integration.auth.kind == AuthKind::None {
        return None;
    }
    let names = field_names(integration);
    let mut fields = HashMap::new();
    for (name, _, required) in &names {
        match var(&env_name_as(integration.name, account, name)).filter(|v| !v.is_empty()) {
            Some(v) => {
                fields.insert(name.to_string(), Secret::new(v));
            }
            None if *required => return None,
            None => {}
        }
    }
    Some(Connection {
        integration: integration.name,
        account: account.to_string(),
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
    let Some(blob) = store.get(&store_key(integration.name, &meta.account))? else { return Ok(None) };
    let map: HashMap<String, String> = serde_json::from_str(blob.expose()).unwrap_or_default();
    if map.is_empty() {
        return Ok(None);
    }
    let mut connection =
        from_fields(integration, map.into_iter().map(|(k, v)| (k, Secret::new(v))).collect(), Source::Store);
    connection.expires_at = meta.expires_at;
    connection.account = meta.account.clone();
    Ok(Some(connection))
}

/// A connection built from form fields (before it is verified and stored), for the account
/// `default`; set [`Connection::account`] for another one.
pub fn from_fields(
    integration: &'static Integration,
    fields: HashMap<String, Secret<String>>,
    source: Source,
) -> Connection {
    Connection {
        integration: integration.name,
        account: DEFAULT_ACCOUNT.to_string(),
        fields,
        source,
        expires_at: None,
        public_names: public_names(integration),
    }
}

/// What to record about a verified connection besides its fields.
#[derive(Debug, Clone, Default)]
pub struct AccountDetails {
    pub account_label: Option<String>,
    pub scopes: Option<String>,
    pub expires_at: Option<i64>,
}

/// Stores a verified connection: every field in the secret store as one entry, and the metadata
/// (account, scopes, expiry, non-secret fields, which store) in SQLite. The secret is written first,
/// so SQLite never claims a connection whose secret is missing.
pub fn save(app: &App, connection: &Connection, saved: AccountDetails) -> Result<(), StoreError> {
    let plain: HashMap<&str, &str> = connection.fields.iter().map(|(k, v)| (k.as_str(), v.expose().as_str())).collect();
    let blob = Secret::new(serde_json::to_string(&plain).unwrap_or_default());
    app.secrets.set(&store_key(connection.integration, &connection.account), &blob)?;
    let mut public = serde_json::Map::new();
    for (k, v) in &connection.fields {
        if connection.is_public(k) {
            public.insert(k.clone(), serde_json::Value::String(v.expose().clone()));
        }
    }
    let now = crate::storage::now_rfc3339();
    let created = app
        .storage
        .account_meta(connection.integration, &connection.account)
        .ok()
        .flatten()
        .map(|m| m.created_at)
        .unwrap_or_else(|| now.clone());
    app.storage
        .put_connection_meta(&ConnectionMeta {
            integration: connection.integration.to_string(),
            account: connection.account.clone(),
            is_default: false,
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

/// Removes one stored account (metadata first, so a half-done erase never looks connected; the
/// oldest remaining account becomes the default if this one was). True when there was one.
pub fn erase(app: &App, integration: &str, account: &str) -> Result<bool, StoreError> {
    let had_meta = app
        .storage
        .delete_connection_meta(integration, account)
        .map_err(|e| StoreError::Unavailable { store: "sqlite", reason: e.to_string() })?;
    let had_secret = app.secrets.delete(&store_key(integration, account))?;
    app.state.sessions.forget(&account_key(integration, account));
    Ok(had_meta || had_secret)
}

/// One account of an integration, as `list_integrations` and `status` show it (no secret).
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    pub name: String,
    /// The identity workbench verified (login, email), when known.
    pub identity: Option<String>,
    pub default: bool,
    pub source: Source,
}

impl App {
    fn env_var(&self, name: &str) -> Option<String> {
        self.settings.credential_env.get(name).cloned()
    }

    /// An integration's accounts: those the environment names (its credential complete there)
    /// and those stored, the environment's winning for a name in both. The default is the one
    /// the user chose (stored), else `default`, else the first by name. No secret store access.
    pub fn accounts(&self, integration: &'static Integration) -> Vec<Account> {
        let mut out: Vec<Account> = Vec::new();
        let stored = self.storage.accounts_of(integration.name).unwrap_or_default();
        let mut env_names = vec![DEFAULT_ACCOUNT.to_string()];
        env_names.extend(env_account_names(integration.name, self.settings.credential_env.keys()));
        for name in env_names {
            if from_env_as(integration, &name, &|v| self.env_var(v)).is_some() {
                let identity = stored.iter().find(|m| m.account == name).and_then(|m| m.account_label.clone());
                out.push(Account { name, identity, default: false, source: Source::Environment });
            }
        }
        for m in &stored {
            if !out.iter().any(|a| a.name == m.account) {
                out.push(Account {
                    name: m.account.clone(),
                    identity: m.account_label.clone(),
                    default: false,
                    source: Source::Store,
                });
            }
        }
        let chosen = stored
            .iter()
            .find(|m| m.is_default)
            .map(|m| m.account.clone())
            .or_else(|| out.iter().find(|a| a.name == DEFAULT_ACCOUNT).map(|a| a.name.clone()))
            .or_else(|| out.iter().map(|a| a.name.clone()).min());
        for a in &mut out {
            a.default = Some(&a.name) == chosen.as_ref();
        }
        out.sort_by(|a, b| b.default.cmp(&a.default).then(a.name.cmp(&b.name)));
        out
    }

    /// The account a call uses: the one it named (which must exist: an unknown name is an error
    /// listing the accounts, never a silent fall-back to the default), else the default one.
    /// `Ok(None)`: the integration has no account and the call named none.
    pub fn resolve_account(
        &self,
        integration: &'static Integration,
        requested: Option<&str>,
    ) -> Result<Option<String>, crate::error::ToolFailure> {
        let accounts = self.accounts(integration);
        match requested {
            None => Ok(accounts.iter().find(|a| a.default).map(|a| a.name.clone())),
            Some(name) if accounts.iter().any(|a| a.name == name) => Ok(Some(name.to_string())),
            Some(name) => Err(unknown_account(integration, name, &accounts)),
        }
    }

    /// The credential for an integration's default account: the environment wins over a stored
    /// connection.
    pub fn connection(&self, integration: &'static Integration) -> Result<Option<Connection>, StoreError> {
        match self.resolve_account(integration, None).ok().flatten() {
            Some(account) => self.connection_of(integration, &account),
            None => Ok(None),
        }
    }

    /// The credential of one account: the environment's wins over a stored one of that name.
    pub fn connection_of(
        &self,
        integration: &'static Integration,
        account: &str,
    ) -> Result<Option<Connection>, StoreError> {
        let found = match from_env_as(integration, account, &|name| self.env_var(name)) {
            Some(c) => Some(c),
            None => {
                let meta = self
                    .storage
                    .account_meta(integration.name, account)
                    .map_err(|e| StoreError::Unavailable { store: "sqlite", reason: e.to_string() })?;
                match meta {
                    Some(meta) => from_store(integration, self.secrets.as_ref(), &meta)?,
                    None => None,
                }
            }
        };
        // A credential read in this process is never shown to the agent, whichever call reads it.
        if let Some(c) = &found {
            for secret in c.secret_values() {
                self.exposed.remember(&secret);
            }
        }
        Ok(found)
    }
}

/// The error for a call naming an account the integration does not have: it lists the accounts
/// (names only) and how the user adds one.
pub fn unknown_account(integration: &Integration, name: &str, accounts: &[Account]) -> crate::error::ToolFailure {
    let names: Vec<&str> = accounts.iter().map(|a| a.name.as_str()).collect();
    let listed =
        if names.is_empty() { "it has none yet".to_string() } else { format!("its accounts: {}", names.join(", ")) };
    crate::error::ToolFailure::new(
        crate::error::ErrorCode::NotConnected,
        format!(
            "{} has no account named '{name}' ({listed}); name one of those, or leave account out for the default; to add '{name}', call connect with integration '{}' and account '{name}' and have the user finish in the browser",
            integration.display_name, integration.name
        ),
    )
    .with("integration", integration.name)
    .with("account", name)
    .with("accounts", names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names() {
        assert_eq!(env_name("google_drive", "token"), "WORKBENCH_GOOGLE_DRIVE_TOKEN");
        assert_eq!(env_name_as("google_drive", "default", "token"), "WORKBENCH_GOOGLE_DRIVE_TOKEN");
        assert_eq!(
            env_name_as("google_drive", "client-a", "refresh_token"),
            "WORKBENCH_GOOGLE_DRIVE__CLIENT_A__REFRESH_TOKEN"
        );
    }

    /// The double-underscore spelling reads one way only: `google` and `google_drive` never
    /// see each other's accounts, and malformed names are ignored.
    #[test]
    fn env_accounts_cannot_be_read_two_ways() {
        let names: Vec<String> = [
            "WORKBENCH_GOOGLE_DRIVE__WORK__TOKEN",
            "WORKBENCH_GOOGLE_DRIVE_TOKEN",
            "WORKBENCH_GOOGLE__HOME__TOKEN",
            "WORKBENCH_GITHUB__CLIENT_A__TOKEN",
            "WORKBENCH_GITHUB__BAD!__TOKEN",
            "WORKBENCH_GITHUB___X__TOKEN",
            "WORKBENCH_GITHUB__DEFAULT__TOKEN",
            "WORKBENCH_GITHUB__A__B__TOKEN",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(env_account_names("google_drive", names.iter()), vec!["work"]);
        assert_eq!(env_account_names("google", names.iter()), vec!["home"]);
        assert_eq!(env_account_names("github", names.iter()), vec!["client-a"]);
        assert!(account_problem("work").is_none());
        for bad in ["", "Work", "a_b", "-x", "x".repeat(33).as_str(), "a:b"] {
            assert!(account_problem(bad).is_some(), "{bad}");
        }
    }
}
