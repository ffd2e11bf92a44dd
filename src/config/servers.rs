//! Upstream server entries: the shape Claude Desktop and Cursor use (`{"command", "args", "env"}`
//! for stdio, `{"url", "headers"}` for Streamable HTTP), read from `config.json`'s `mcp_servers`
//! and written back atomically with every other key kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// What is wrong with one `mcp_servers` entry, in words a user can act on (shown by `servers
/// list`, `servers import` and to the agent).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("an entry must be an object")]
    NotAnObject,
    #[error("{key}.{name} must be a string")]
    NotAString { key: String, name: String },
    #[error("{0} must be an object of strings")]
    NotStrings(String),
    #[error("type '{0}' is not supported (stdio or http)")]
    UnsupportedType(String),
    #[error("args must be a list of strings")]
    Args,
    #[error("give either command (stdio) or url (HTTP), not both")]
    Both,
    #[error("url must be an http:// or https:// URL")]
    Url,
    #[error("needs a command (stdio: {{\"command\", \"args\", \"env\"}}) or a url (HTTP: {{\"url\", \"headers\"}})")]
    Neither,
    #[error("the name '{name}' does not follow the rule ({rule}); rename it, e.g. '{clean}'", rule = NAME_RULE)]
    Name { name: String, clean: String },
    #[error("{key} is '{value}', but an effect is read, write or destructive")]
    Effect { key: String, value: String },
    #[error("tool_effects must be an object of tool names to read, write or destructive")]
    ToolEffects,
}

/// The effects the user set for a server's tools in its entry (`"effect"` for every tool,
/// `"tool_effects": {"<tool>": ...}` for one), which win over anything the server's annotations
/// say (`crate::upstream`, "Policy").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effects {
    pub server: Option<plugins::api::Effect>,
    /// By the tool's name on its server.
    pub tools: BTreeMap<String, plugins::api::Effect>,
}

impl Effects {
    /// The effect the user set for `tool`, if any (the tool's own, else the server's).
    pub fn of(&self, tool: &str) -> Option<plugins::api::Effect> {
        self.tools.get(tool).copied().or(self.server)
    }

    fn parse(o: &Map<String, Value>) -> Result<Effects, EntryError> {
        let one = |key: String, v: &Value| match v.as_str() {
            Some("read") => Ok(plugins::api::Effect::Read),
            Some("write") => Ok(plugins::api::Effect::Write),
            Some("destructive") => Ok(plugins::api::Effect::Destructive),
            _ => Err(EntryError::Effect { key, value: v.as_str().map_or_else(|| v.to_string(), str::to_string) }),
        };
        let server = match o.get("effect") {
            None | Some(Value::Null) => None,
            Some(v) => Some(one("effect".into(), v)?),
        };
        let tools = match o.get("tool_effects") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| Ok((k.clone(), one(format!("tool_effects.{k}"), v)?)))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(EntryError::ToolEffects),
        };
        Ok(Effects { server, tools })
    }

    fn write(&self, o: &mut Map<String, Value>) {
        let word = |e: plugins::api::Effect| match e {
            plugins::api::Effect::Read => "read",
            plugins::api::Effect::Write => "write",
            plugins::api::Effect::Destructive => "destructive",
        };
        if let Some(e) = self.server {
            o.insert("effect".into(), Value::from(word(e)));
        }
        if !self.tools.is_empty() {
            let m: Map<String, Value> = self.tools.iter().map(|(k, e)| (k.clone(), Value::from(word(*e)))).collect();
            o.insert("tool_effects".into(), Value::Object(m));
        }
    }
}

/// Why `config.json` could not be edited (nothing was changed).
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{} is not a JSON object; fix it first", path.display())]
    NotAnObject { path: PathBuf },
    #[error("{} is not valid JSON ({source}); fix it first, nothing was changed", path.display())]
    InvalidJson { path: PathBuf, source: serde_json::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("mcp_servers in {} is not an object; fix it first", path.display())]
    ServersNotAnObject { path: PathBuf },
    #[error(transparent)]
    Serialize(#[from] serde_json::Error),
    #[error("cannot create {}: {source}", path.display())]
    CreateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// One configured upstream MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerConfig {
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, effects: Effects },
    Http { url: String, headers: BTreeMap<String, String>, effects: Effects },
}

/// The rule for a server's name: it becomes the tools' namespace (`<server>_<tool>`), the policy
/// key (`WORKBENCH_POLICY_<SERVER>`) and the vault pseudo-host `mcp:<server>`.
pub const NAME_RULE: &str = "1-32 lowercase letters, digits or '_', starting with a letter";

/// Whether `name` follows [`NAME_RULE`].
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

/// A name from another client's config made to follow [`NAME_RULE`] (`My Files` -> `my_files`).
pub fn clean_name(name: &str) -> String {
    let mut out: String = name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .split('_')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "mcp_");
    }
    out.truncate(32);
    out.trim_end_matches('_').to_string()
}

impl ServerConfig {
    /// Parses one entry; the error says what is wrong in words a user can act on.
    pub fn parse(entry: &Value) -> Result<ServerConfig, EntryError> {
        let Value::Object(o) = entry else { return Err(EntryError::NotAnObject) };
        let strings = |key: &str| -> Result<BTreeMap<String, String>, EntryError> {
            match o.get(key) {
                None | Some(Value::Null) => Ok(BTreeMap::new()),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => Ok((k.clone(), s.clone())),
                        _ => Err(EntryError::NotAString { key: key.to_string(), name: k.clone() }),
                    })
                    .collect(),
                Some(_) => Err(EntryError::NotStrings(key.to_string())),
            }
        };
        if let Some(kind) = o.get("type").and_then(Value::as_str)
            && !matches!(kind, "stdio" | "http" | "streamable-http" | "streamableHttp")
        {
            return Err(EntryError::UnsupportedType(kind.to_string()));
        }
        match (o.get("command"), o.get("url")) {
            (Some(Value::String(command)), None) if !command.trim().is_empty() => {
                let args = match o.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|x| x.as_str().map(str::to_string).ok_or(EntryError::Args))
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(EntryError::Args),
                };
                Ok(ServerConfig::Stdio {
                    command: command.clone(),
                    args,
                    env: strings("env")?,
                    effects: Effects::parse(o)?,
                })
            }
            (None, Some(Value::String(url))) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(ServerConfig::Http { url: url.clone(), headers: strings("headers")?, effects: Effects::parse(o)? })
            }
            (Some(_), Some(_)) => Err(EntryError::Both),
            (None, Some(_)) => Err(EntryError::Url),
            _ => Err(EntryError::Neither),
        }
    }

    /// The entry as config.json holds it.
    pub fn to_value(&self) -> Value {
        let mut o = Map::new();
        match self {
            ServerConfig::Stdio { command, args, env, .. } => {
                o.insert("command".into(), Value::from(command.clone()));
                o.insert("args".into(), Value::from(args.clone()));
                if !env.is_empty() {
                    o.insert("env".into(), serde_json::to_value(env).unwrap_or_default());
                }
            }
            ServerConfig::Http { url, headers, .. } => {
                o.insert("url".into(), Value::from(url.clone()));
                if !headers.is_empty() {
                    o.insert("headers".into(), serde_json::to_value(headers).unwrap_or_default());
                }
            }
        }
        self.effects().write(&mut o);
        Value::Object(o)
    }

    /// The effects the user set in the entry.
    pub fn effects(&self) -> &Effects {
        match self {
            ServerConfig::Stdio { effects, .. } | ServerConfig::Http { effects, .. } => effects,
        }
    }

    /// A one-line description for `servers list` (values of env and headers are never shown).
    pub fn describe(&self) -> String {
        match self {
            ServerConfig::Stdio { command, args, env, .. } => {
                let mut s = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                if !env.is_empty() {
                    s.push_str(&format!(" (env: {})", env.keys().cloned().collect::<Vec<_>>().join(", ")));
                }
                s
            }
            ServerConfig::Http { url, .. } => url.clone(),
        }
    }
}

/// Every configured server, parsed; a bad entry is kept as its error (its tools are not offered
/// and `servers list` says why) instead of failing the whole configuration.
pub fn parse_all(section: Option<&Value>) -> BTreeMap<String, Result<ServerConfig, EntryError>> {
    let mut out = BTreeMap::new();
    let Some(Value::Object(entries)) = section else { return out };
    for (name, entry) in entries {
        let parsed = if valid_name(name) {
            ServerConfig::parse(entry)
        } else {
            Err(EntryError::Name { name: name.clone(), clean: clean_name(name) })
        };
        out.insert(name.clone(), parsed);
    }
    out
}

/// Changes `config.json` in `home` with `edit` on its `mcp_servers` object, keeping every other key
/// (and their order); written to a temporary file and renamed over the old one.
pub fn edit_config(
    home: &Path,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), EditError>,
) -> Result<(), EditError> {
    let path = home.join("config.json");
    let mut root: Map<String, Value> = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(EditError::NotAnObject { path }),
            Err(source) => return Err(EditError::InvalidJson { path, source }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(source) => return Err(EditError::Read { path, source }),
    };
    let mut servers = match root.remove("mcp_servers") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(EditError::ServersNotAnObject { path }),
    };
    edit(&mut servers)?;
    root.insert("mcp_servers".into(), Value::Object(servers));
    let text = serde_json::to_string_pretty(&Value::Object(root))? + "\n";
    std::fs::create_dir_all(home).map_err(|source| EditError::CreateDir { path: home.to_path_buf(), source })?;
    let tmp = home.join(format!(".config.json.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        use std::io::Write as _;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        EditError::Write { path: path.clone(), source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_desktop_entries_parse() {
        let e = json!({ "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": { "A": "b" } });
        let c = ServerConfig::parse(&e).unwrap();
        assert!(matches!(&c, ServerConfig::Stdio { command, args, .. } if command == "npx" && args.len() == 3));
        assert_eq!(ServerConfig::parse(&c.to_value()).unwrap(), c);
        let h = ServerConfig::parse(
            &json!({ "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer {{vault:t}}" } }),
        );
        assert!(matches!(h, Ok(ServerConfig::Http { .. })));
        assert!(ServerConfig::parse(&json!({ "args": [] })).unwrap_err().to_string().contains("needs a command"));
        assert!(
            ServerConfig::parse(&json!({ "command": "x", "env": { "A": 1 } }))
                .unwrap_err()
                .to_string()
                .contains("env.A")
        );
    }

    #[test]
    fn entry_errors_keep_their_texts() {
        assert_eq!(
            ServerConfig::parse(&json!({})).unwrap_err().to_string(),
            "needs a command (stdio: {\"command\", \"args\", \"env\"}) or a url (HTTP: {\"url\", \"headers\"})"
        );
        assert_eq!(
            ServerConfig::parse(&json!({ "url": "https://x", "headers": { "A": 1 } })).unwrap_err().to_string(),
            "headers.A must be a string"
        );
        let all = parse_all(Some(&json!({ "My Files": { "command": "x" } })));
        assert_eq!(
            all["My Files"].as_ref().unwrap_err().to_string(),
            format!("the name 'My Files' does not follow the rule ({NAME_RULE}); rename it, e.g. 'my_files'")
        );
    }

    /// The user's word on a server's or one tool's effect is kept, written back and checked;
    /// a misspelt effect fails the entry (closed), never silently.
    #[test]
    fn effects_in_entries_parse_round_trip_and_fail_closed() {
        use plugins::api::Effect;
        let c = ServerConfig::parse(
            &json!({ "command": "x", "effect": "destructive", "tool_effects": { "get_time": "read" } }),
        )
        .unwrap();
        assert_eq!(c.effects().of("get_time"), Some(Effect::Read));
        assert_eq!(c.effects().of("other"), Some(Effect::Destructive));
        assert_eq!(ServerConfig::parse(&c.to_value()).unwrap(), c);
        let e = ServerConfig::parse(&json!({ "url": "https://x", "effect": "readonly" })).unwrap_err();
        assert_eq!(e.to_string(), "effect is 'readonly', but an effect is read, write or destructive");
        let e = ServerConfig::parse(&json!({ "command": "x", "tool_effects": { "a": true } })).unwrap_err();
        assert!(e.to_string().contains("tool_effects.a"), "{e}");
        assert_eq!(
            ServerConfig::parse(&json!({ "command": "x", "tool_effects": [] })).unwrap_err(),
            EntryError::ToolEffects
        );
    }

    #[test]
    fn names_are_cleaned_for_import() {
        assert_eq!(clean_name("My Files"), "my_files");
        assert_eq!(clean_name("github-mcp"), "github_mcp");
        assert_eq!(clean_name("1password"), "mcp_1password");
        assert!(valid_name("fs") && !valid_name("Fs") && !valid_name("_x") && !valid_name(""));
    }

    #[test]
    fn edits_keep_other_keys_and_replace_atomically() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), r#"{"email": "ada@example.com", "policy": {"fs": "confirm"}}"#)
            .unwrap();
        edit_config(dir.path(), |s| {
            s.insert("fs".into(), json!({ "command": "x" }));
            Ok(())
        })
        .unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json")).unwrap()).unwrap();
        assert_eq!(v["email"], "ada@example.com");
        assert_eq!(v["policy"]["fs"], "confirm");
        assert_eq!(v["mcp_servers"]["fs"]["command"], "x");
        std::fs::write(dir.path().join("config.json"), "{ not json").unwrap();
        assert!(edit_config(dir.path(), |_| Ok(())).unwrap_err().to_string().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(dir.path().join("config.json")).unwrap(), "{ not json");
    }
}
