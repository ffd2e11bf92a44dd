//! Where workbench keeps its files and how it is tuned, from the environment and `config.json`.
//!
//! `WORKBENCH_HOME` overrides the data directory (tests always set it); otherwise the platform's
//! data directory from `directories`. Settings come from `<home>/config.json` when present, then
//! environment variables, which win. Reading them costs microseconds, so it happens at start.

pub mod flow;
pub mod servers;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// Tunables with their defaults; see docs/configuration.md.
#[derive(Debug, Clone)]
pub struct Settings {
    pub home: PathBuf,
    /// The one folder whose files tools may read (uploads, attachments) and write (downloads,
    /// exports): `WORKBENCH_FILES_DIR`, else config.json's `files_dir`, else
    /// `<user's home>/workbench-files`. Always absolute; created (mode 0700) on first use. Only
    /// the user sets it: the agent can set no variable and cannot write the data directory.
    pub files_dir: PathBuf,
    /// The local user's email, when the user told us (whoami).
    pub email: Option<String>,
    /// Parallel executions in one execute_tools batch.
    pub concurrency: usize,
    /// Threads one long `search_tools` request over a large catalogue is ranked on (0: the
    /// machine's cores, at most 3).
    pub search_threads: usize,
    /// Deadline for one tool execution.
    pub call_timeout: Duration,
    /// How long a pending connect link stays valid.
    pub connect_ttl: Duration,
    /// Per-integration host overrides: (`integration`, `key`) -> URL.
    pub base_urls: HashMap<(String, String), String>,
    /// Where secrets live.
    pub secret_store: StoreKind,
    /// The file whose contents open the encrypted file store when no passphrase is given in the
    /// environment: config.json's `vault_key_file` (written by `workbench setup`), so a server a
    /// client launches finds it with no environment of its own.
    pub vault_key_file: Option<PathBuf>,
    /// Loopback listener port for connect pages and OAuth callbacks (0 = any free port).
    pub listener_port: u16,
    /// Open connect links in the user's browser (off with `WORKBENCH_NO_BROWSER=1`).
    pub open_browser: bool,
    /// OAuth clients by name (`google`, `slack`): client id and optional secret.
    pub oauth_clients: HashMap<String, OAuthClient>,
    /// Every non-empty `WORKBENCH_*` variable, by name: credentials
    /// (`WORKBENCH_<INTEGRATION>_<FIELD>`) and host overrides (`WORKBENCH_<INTEGRATION>_<HOST_KEY>`).
    pub credential_env: HashMap<String, String>,
    /// Exact `IP:port` addresses `http_send_request` may reach although its SSRF guard refuses
    /// them (fakes on 127.0.0.1 in tests). Deliberately read from neither the environment nor
    /// config.json: only code that builds `Settings` itself (the test suite) can fill it, so no
    /// user of the binary can weaken the guard by configuration. Host names never match it.
    pub http_reachable_for_tests: Vec<std::net::SocketAddr>,
    /// The safety policies the user set, parsed once at start-up, by key: `default` or an
    /// integration (or custom app) name in lowercase. A value that did not parse is kept as its
    /// [`BadSetting`]: that policy fails closed (writes refused) instead of falling back.
    pub policies: HashMap<String, Result<Policy, BadSetting>>,
    /// Request budgets the user set (`WORKBENCH_<INTEGRATION>_RATE_LIMIT`), parsed once at
    /// start-up, by integration name in lowercase; a bad value fails closed like a bad policy.
    pub rate_limits: HashMap<String, Result<plugins::api::RateLimit, BadSetting>>,
    /// Origins (scheme, host, port) the user allows workbench to reach although they are private
    /// or loopback (an internal API for a custom app): `private_hosts` in config.json, or
    /// `WORKBENCH_PRIVATE_HOSTS` (comma-separated), which wins. workbench's own listener is never
    /// reachable, listed or not.
    pub private_hosts: Vec<crate::net::Origin>,
    /// The user's other MCP servers (`config.json`'s `mcp_servers`), by name; an entry that did
    /// not parse is kept as its error (see `upstream::config`). Nothing starts until first use.
    pub mcp_servers: std::collections::BTreeMap<String, Result<servers::ServerConfig, servers::EntryError>>,
    /// The outbound-data guard: `WORKBENCH_FLOW` and config.json's `flow` (see [`flow`]).
    pub flow: flow::FlowSettings,
}

/// The safety policy for writes the user set for an integration (see `engine::policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Writes run.
    Allow,
    /// Writes are refused.
    ReadOnly,
    /// Writes need the user's approval.
    Confirm,
}

impl Policy {
    /// The words a policy is written with.
    pub const ACCEPTED: &'static str = "allow, read_only or confirm";

    pub fn parse(text: &str) -> Option<Policy> {
        match text.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "allow" => Some(Policy::Allow),
            "read_only" | "readonly" => Some(Policy::ReadOnly),
            "confirm" => Some(Policy::Confirm),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Allow => "allow",
            Policy::ReadOnly => "read_only",
            Policy::Confirm => "confirm",
        }
    }
}

/// A setting whose value did not parse. Whatever it governs fails closed and `workbench doctor`
/// reports it as a FAIL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSetting {
    /// Where it was set: the variable's name, or `config.json policy.<key>`.
    pub source: String,
    pub value: String,
    /// What would have been accepted.
    pub accepted: &'static str,
}

impl std::fmt::Display for BadSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={:?} is not valid (accepted: {})", self.source, self.value, self.accepted)
    }
}

/// The accepted spellings of a request budget.
pub const RATE_LIMIT_ACCEPTED: &str = "a count per window like 100/10s, 5/s, 150/min or 5000/h";

/// Which secret store holds credentials and vault values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// The OS keychain (default).
    Keychain,
    /// An encrypted file in the data directory (opt-in, for machines without a keychain).
    File,
    /// Process memory only: nothing survives a restart (tests, throwaway sessions).
    Memory,
}

impl StoreKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Keychain => "keychain",
            StoreKind::File => "file",
            StoreKind::Memory => "memory",
        }
    }
}

/// A bring-your-own OAuth client (see docs/accounts.md for how to create one).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct OAuthClient {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ConfigFile {
    secret_store: Option<StoreKind>,
    vault_key_file: Option<String>,
    listener_port: Option<u16>,
    oauth_clients: HashMap<String, OAuthClient>,
    email: Option<String>,
    concurrency: Option<usize>,
    search_threads: Option<u64>,
    call_timeout_secs: Option<u64>,
    connect_ttl_seconds: Option<u64>,
    base_urls: HashMap<String, HashMap<String, String>>,
    /// Safety policies by integration (or `default`): allow, read_only, confirm.
    policy: HashMap<String, String>,
    files_dir: Option<String>,
    private_hosts: Option<Vec<String>>,
    /// Upstream MCP servers in Claude Desktop / Cursor shape (parsed entry by entry).
    mcp_servers: Option<serde_json::Value>,
    /// The outbound-data guard's mode, trusted list and servers.
    flow: flow::FlowFile,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("no data directory: set WORKBENCH_HOME or HOME")]
    NoHome,
    #[error("{path}: {message}")]
    BadFile { path: String, message: String },
    #[error("{name}={value:?} is not valid: {message}")]
    BadVar { name: String, value: String, message: String },
}

impl Settings {
    /// Reads settings from the process environment.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Self::load(&std::env::vars().collect())
    }

    /// Reads settings with `vars` standing in for the environment (tests pass their own).
    pub fn load(vars: &HashMap<String, String>) -> Result<Settings, ConfigError> {
        let var = |name: &str| vars.get(name).cloned();
        let home = match var("WORKBENCH_HOME").filter(|h| !h.is_empty()) {
            Some(h) => PathBuf::from(h),
            None => directories::ProjectDirs::from("dev", "workbench", "workbench")
                .map(|d| d.data_dir().to_path_buf())
                .ok_or(ConfigError::NoHome)?,
        };
        let file_path = home.join("config.json");
        let file: ConfigFile = match std::fs::read_to_string(&file_path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| ConfigError::BadFile { path: file_path.display().to_string(), message: e.to_string() })?,
            Err(_) => ConfigFile::default(),
        };
        let number = |name: &str, from_file: Option<u64>, default: u64, min: u64, max: u64| {
            let value = match var(name) {
                Some(v) => v.trim().parse::<u64>().map_err(|_| ConfigError::BadVar {
                    name: name.into(),
                    value: v.clone(),
                    message: "expected a whole number".into(),
                })?,
                None => from_file.unwrap_or(default),
            };
            if value < min || value > max {
                return Err(ConfigError::BadVar {
                    name: name.into(),
                    value: value.to_string(),
                    message: format!("must be between {min} and {max}"),
                });
            }
            Ok(value)
        };
        let concurrency = number("WORKBENCH_CONCURRENCY", file.concurrency.map(|c| c as u64), 8, 1, 64)?;
        let search_threads = number("WORKBENCH_SEARCH_THREADS", file.search_threads, 0, 0, 3)?;
        let call_timeout = number("WORKBENCH_CALL_TIMEOUT_SECS", file.call_timeout_secs, 60, 1, 3600)?;
        let connect_ttl = number("CONNECT_TTL_SECONDS", file.connect_ttl_seconds, 600, 10, 86_400)?;

        let mut base_urls = HashMap::new();
        for (integration, hosts) in file.base_urls {
            for (key, url) in hosts {
                base_urls.insert((integration.clone(), key), url.trim_end_matches('/').to_string());
            }
        }
        // Credential variables are looked up by name later (see `auth::from_env`); keep them all.
        let credential_env: HashMap<String, String> = vars
            .iter()
            .filter(|(k, v)| k.starts_with("WORKBENCH_") && !v.is_empty())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let secret_store = match var("WORKBENCH_SECRET_STORE").filter(|v| !v.is_empty()) {
            Some(v) => serde_json::from_value(serde_json::Value::String(v.to_ascii_lowercase())).map_err(|_| {
                ConfigError::BadVar {
                    name: "WORKBENCH_SECRET_STORE".into(),
                    value: v.clone(),
                    message: "expected keychain, file or memory".into(),
                }
            })?,
            None => file.secret_store.unwrap_or(StoreKind::Keychain),
        };
        let private_hosts = match var("WORKBENCH_PRIVATE_HOSTS") {
            Some(v) => v
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty())
                .map(|o| {
                    crate::net::Origin::parse(o).map_err(|e| ConfigError::BadVar {
                        name: "WORKBENCH_PRIVATE_HOSTS".into(),
                        value: v.clone(),
                        message: e.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => file
                .private_hosts
                .unwrap_or_default()
                .iter()
                .map(|o| {
                    crate::net::Origin::parse(o).map_err(|e| ConfigError::BadFile {
                        path: file_path.display().to_string(),
                        message: format!("private_hosts: {e}"),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let listener_port = number("WORKBENCH_PORT", file.listener_port.map(u64::from), 0, 0, 65_535)? as u16;
        let mut oauth_clients = file.oauth_clients;
        for client in ["google", "slack"] {
            let prefix = format!("WORKBENCH_{}", client.to_ascii_uppercase());
            if let Some(id) = var(&format!("{prefix}_CLIENT_ID")).filter(|v| !v.is_empty()) {
                let secret = var(&format!("{prefix}_CLIENT_SECRET")).filter(|v| !v.is_empty());
                oauth_clients.insert(client.to_string(), OAuthClient { client_id: id, client_secret: secret });
            }
        }
        let (policies, rate_limits) = parse_policies_and_limits(vars, &file.policy);
        let files_dir = files_dir(vars, file.files_dir, &file_path)?;
        let mcp_servers = servers::parse_all(file.mcp_servers.as_ref());
        let vault_key_file = match file.vault_key_file.filter(|p| !p.trim().is_empty()) {
            Some(p) if PathBuf::from(&p).is_absolute() => Some(PathBuf::from(p)),
            Some(p) => {
                return Err(ConfigError::BadFile {
                    path: file_path.display().to_string(),
                    message: format!("vault_key_file {p:?} must be an absolute path"),
                });
            }
            None => None,
        };
        let flow = flow::parse(var("WORKBENCH_FLOW").as_deref(), file.flow)
            .map_err(|message| ConfigError::BadFile { path: file_path.display().to_string(), message })?;
        Ok(Settings {
            vault_key_file,
            flow,
            mcp_servers,
            files_dir,
            policies,
            rate_limits,
            secret_store,
            listener_port,
            open_browser: var("WORKBENCH_NO_BROWSER").is_none_or(|v| v.is_empty() || v == "0"),
            oauth_clients,
            credential_env,
            home,
            email: var("WORKBENCH_EMAIL").filter(|e| !e.is_empty()).or(file.email),
            concurrency: concurrency as usize,
            search_threads: search_threads as usize,
            call_timeout: Duration::from_secs(call_timeout),
            connect_ttl: Duration::from_secs(connect_ttl),
            base_urls,
            http_reachable_for_tests: Vec::new(),
            private_hosts,
        })
    }

    /// The URL for one of an integration's hosts: `WORKBENCH_<INTEGRATION>_<KEY>` wins, then
    /// config.json's `base_urls`, then `default`.
    pub fn host_url(&self, integration: &str, key: &str, default: &str) -> String {
        let var = format!("WORKBENCH_{integration}_{key}").to_ascii_uppercase();
        self.credential_env
            .get(&var)
            .or_else(|| self.base_urls.get(&(integration.to_string(), key.to_string())))
            .map(|u| u.trim_end_matches('/').to_string())
            .unwrap_or_else(|| default.to_string())
    }

    pub fn database_path(&self) -> PathBuf {
        self.home.join("workbench.db")
    }

    /// Every policy or rate-limit value that did not parse (for `workbench doctor`).
    pub fn bad_settings(&self) -> Vec<&BadSetting> {
        let mut bad: Vec<&BadSetting> = self
            .policies
            .values()
            .filter_map(|p| p.as_ref().err())
            .chain(self.rate_limits.values().filter_map(|r| r.as_ref().err()))
            .chain(self.flow.mode.as_ref().err())
            .collect();
        bad.sort_by(|a, b| a.source.cmp(&b.source));
        bad
    }
}

type Policies = HashMap<String, Result<Policy, BadSetting>>;
type RateLimits = HashMap<String, Result<plugins::api::RateLimit, BadSetting>>;

/// `WORKBENCH_POLICY_<KEY>` (and config.json's `policy`) and `WORKBENCH_<I>_RATE_LIMIT`, parsed
/// once. The environment wins over the file, as for every setting.
fn parse_policies_and_limits(vars: &HashMap<String, String>, file: &HashMap<String, String>) -> (Policies, RateLimits) {
    let mut policies = HashMap::new();
    for (key, value) in file {
        let key = key.trim().to_ascii_lowercase();
        let parsed = Policy::parse(value).ok_or_else(|| BadSetting {
            source: format!("config.json policy.{key}"),
            value: value.clone(),
            accepted: Policy::ACCEPTED,
        });
        policies.insert(key, parsed);
    }
    let mut rate_limits = HashMap::new();
    for (name, value) in vars.iter().filter(|(_, v)| !v.trim().is_empty()) {
        if let Some(key) = name.strip_prefix("WORKBENCH_POLICY_").filter(|k| !k.is_empty()) {
            let parsed = Policy::parse(value).ok_or_else(|| BadSetting {
                source: name.clone(),
                value: value.clone(),
                accepted: Policy::ACCEPTED,
            });
            policies.insert(key.to_ascii_lowercase(), parsed);
        } else if let Some(key) =
            name.strip_prefix("WORKBENCH_").and_then(|n| n.strip_suffix("_RATE_LIMIT")).filter(|k| !k.is_empty())
        {
            let parsed = plugins::api::RateLimit::parse(value).ok_or_else(|| BadSetting {
                source: name.clone(),
                value: value.clone(),
                accepted: RATE_LIMIT_ACCEPTED,
            });
            rate_limits.insert(key.to_ascii_lowercase(), parsed);
        }
    }
    (policies, rate_limits)
}

/// The files folder: `WORKBENCH_FILES_DIR`, then config.json's `files_dir`, then
/// `<user's home>/workbench-files` (`HOME`, else the platform's home directory). A relative or
/// empty value is refused: which folder that would mean depends on where workbench was started.
fn files_dir(
    vars: &HashMap<String, String>,
    from_file: Option<String>,
    config_path: &std::path::Path,
) -> Result<PathBuf, ConfigError> {
    let must_be_absolute = "must be an absolute path to a folder, e.g. /home/me/workbench-files";
    if let Some(v) = vars.get("WORKBENCH_FILES_DIR") {
        let p = PathBuf::from(v.trim());
        if v.trim().is_empty() || !p.is_absolute() {
            return Err(ConfigError::BadVar {
                name: "WORKBENCH_FILES_DIR".into(),
                value: v.clone(),
                message: must_be_absolute.into(),
            });
        }
        return Ok(p);
    }
    if let Some(v) = from_file {
        let p = PathBuf::from(v.trim());
        if v.trim().is_empty() || !p.is_absolute() {
            return Err(ConfigError::BadFile {
                path: config_path.display().to_string(),
                message: format!("files_dir {v:?} {must_be_absolute}"),
            });
        }
        return Ok(p);
    }
    let home = vars
        .get("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()))
        .ok_or_else(|| ConfigError::BadVar {
            name: "WORKBENCH_FILES_DIR".into(),
            value: String::new(),
            message: format!("there is no home directory for the default files folder; set it: {must_be_absolute}"),
        })?;
    Ok(home.join("workbench-files"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn environment_overrides_hosts_and_tunables() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap();
        let s = Settings::load(&env(&[
            ("WORKBENCH_HOME", home),
            ("WORKBENCH_OPEN_METEO_BASE_URL", "http://127.0.0.1:9/v1/"),
            ("WORKBENCH_HACKERNEWS_ALGOLIA_BASE_URL", "http://127.0.0.1:8"),
            ("WORKBENCH_CONCURRENCY", "3"),
        ]))
        .unwrap();
        assert_eq!(s.host_url("open_meteo", "base_url", "x"), "http://127.0.0.1:9/v1");
        assert_eq!(s.host_url("hackernews", "algolia_base_url", "x"), "http://127.0.0.1:8");
        assert_eq!(s.host_url("hackernews", "base_url", "default"), "default");
        assert_eq!(s.concurrency, 3);
        assert_eq!(s.search_threads, 0, "the machine's cores unless set");
        assert_eq!(s.call_timeout, Duration::from_secs(60));
    }

    #[test]
    fn config_file_is_read_and_bad_values_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), r#"{"email": "ada@example.com", "call_timeout_secs": 5}"#)
            .unwrap();
        let home = dir.path().to_str().unwrap();
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home)])).unwrap();
        assert_eq!(s.email.as_deref(), Some("ada@example.com"));
        assert_eq!(s.call_timeout, Duration::from_secs(5));
        let err = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_CONCURRENCY", "0")])).unwrap_err();
        assert_eq!(err.to_string(), "WORKBENCH_CONCURRENCY=\"0\" is not valid: must be between 1 and 64");
        let err = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_SEARCH_THREADS", "8")])).unwrap_err();
        assert_eq!(err.to_string(), "WORKBENCH_SEARCH_THREADS=\"8\" is not valid: must be between 0 and 3");
        let err = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_SEARCH_THREADS", "two")])).unwrap_err();
        assert_eq!(err.to_string(), "WORKBENCH_SEARCH_THREADS=\"two\" is not valid: expected a whole number");
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_SEARCH_THREADS", "1")])).unwrap();
        assert_eq!(s.search_threads, 1);
    }

    #[test]
    fn files_dir_comes_from_the_environment_then_the_file_then_home() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap();
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home), ("HOME", "/home/ada")])).unwrap();
        assert_eq!(s.files_dir, PathBuf::from("/home/ada/workbench-files"));
        std::fs::write(dir.path().join("config.json"), r#"{"files_dir": "/srv/shared"}"#).unwrap();
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home), ("HOME", "/home/ada")])).unwrap();
        assert_eq!(s.files_dir, PathBuf::from("/srv/shared"));
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_FILES_DIR", "/data/wb")])).unwrap();
        assert_eq!(s.files_dir, PathBuf::from("/data/wb"));
        for bad in ["", "relative/dir", "~/files"] {
            let err = Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_FILES_DIR", bad)])).unwrap_err();
            assert!(err.to_string().contains("WORKBENCH_FILES_DIR") && err.to_string().contains("absolute"), "{err}");
        }
        std::fs::write(dir.path().join("config.json"), r#"{"files_dir": "files"}"#).unwrap();
        let err = Settings::load(&env(&[("WORKBENCH_HOME", home)])).unwrap_err();
        assert!(err.to_string().contains("files_dir \"files\" must be an absolute path"), "{err}");
    }

    #[test]
    fn private_hosts_are_origins_from_the_file_or_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"private_hosts": ["http://10.0.0.5:8080", "https://wiki.corp"]}"#,
        )
        .unwrap();
        let home = dir.path().to_str().unwrap();
        let s = Settings::load(&env(&[("WORKBENCH_HOME", home)])).unwrap();
        let shown: Vec<String> = s.private_hosts.iter().map(|o| o.to_string()).collect();
        assert_eq!(shown, ["http://10.0.0.5:8080", "https://wiki.corp:443"]);
        let s =
            Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_PRIVATE_HOSTS", "http://127.0.0.1:9000, ")]))
                .unwrap();
        assert_eq!(s.private_hosts.len(), 1);
        let err =
            Settings::load(&env(&[("WORKBENCH_HOME", home), ("WORKBENCH_PRIVATE_HOSTS", "10.0.0.5")])).unwrap_err();
        assert!(
            err.to_string().contains("WORKBENCH_PRIVATE_HOSTS") && err.to_string().contains("http://host:port"),
            "{err}"
        );
    }
}
