//! MCP client registration: where Claude Desktop, Cursor and Claude Code keep their server list,
//! and how workbench adds or removes its own `mcpServers.workbench` entry there.
//!
//! The files belong to the user and to the clients, so edits are textual splices: the file is first
//! parsed strictly (a file that is not plain JSON is refused and left alone), then only the bytes of
//! the `workbench` member (or one new member) change. Everything else — other servers, other keys,
//! key order, indentation, CRLF line ends, unicode — stays byte-for-byte. Registering and then
//! unregistering gives back the original bytes. A changed file is backed up first, written to a
//! temporary file beside it and renamed over it (through a symlink to its target).
//!
//! `install.sh` calls `workbench clients register|unregister`; `workbench doctor` reads the same
//! locations with [`inspect`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// Why a client config's text cannot be edited; each reads after "the file is refused: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// serde_json refused the text (`hint` names comments and trailing commas when they are why).
    #[error("it is not valid JSON: {detail}{hint}")]
    NotJson { detail: String, hint: &'static str },
    #[error("its top level is {0}, not an object")]
    TopNotObject(&'static str),
    #[error("its \"mcpServers\" is {0}, not an object")]
    ServersNotObject(&'static str),
    #[error("it has the key \"{0}\" twice, so which one a client reads is unclear")]
    DuplicateKey(String),
    /// The splice scanner disagreed with serde_json at a byte (a bug: reported, never a wrong splice).
    #[error("expected {what} at byte {at}")]
    Expected { what: &'static str, at: usize },
    #[error("unterminated string")]
    UnterminatedString,
    #[error("unbalanced brackets")]
    UnbalancedBrackets,
    #[error("unexpected end of text")]
    UnexpectedEnd,
    /// serde_json refused one member it had accepted as part of the whole (its message).
    #[error("{0}")]
    Member(String),
}

fn member_error(e: serde_json::Error) -> ConfigError {
    ConfigError::Member(e.to_string())
}

/// The name of our member in `mcpServers`.
pub const SERVER_NAME: &str = "workbench";

/// An MCP client whose config workbench knows how to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    Cursor,
    ClaudeCode,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::ClaudeDesktop, Client::Cursor, Client::ClaudeCode];

    /// The id used on the command line (`--client cursor`).
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::ClaudeCode => "claude-code",
        }
    }

    pub fn display(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Cursor => "Cursor",
            Client::ClaudeCode => "Claude Code",
        }
    }

    pub fn from_id(id: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The entry workbench writes for this client (see examples/config/).
    pub fn entry(self, command: &str) -> Value {
        match self {
            // Claude Code's own `claude mcp add` writes the transport type explicitly.
            Client::ClaudeCode => json!({ "type": "stdio", "command": command, "args": [] }),
            Client::ClaudeDesktop | Client::Cursor => json!({ "command": command }),
        }
    }

    /// What to do after the file changed.
    pub fn after_change(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "quit and reopen Claude Desktop",
            Client::Cursor => "reload Cursor",
            Client::ClaudeCode => "start a new Claude Code session (`claude mcp list` shows it)",
        }
    }
}

/// The directories client configs are found under; from the environment, or given by tests.
#[derive(Debug, Clone)]
pub struct Locations {
    pub home: PathBuf,
    /// Claude Desktop's parent folder: `~/Library/Application Support` (macOS), `%APPDATA%`
    /// (Windows), `$XDG_CONFIG_HOME` or `~/.config` (Linux and others).
    pub app_config: PathBuf,
}

impl Locations {
    pub fn from_env() -> Option<Locations> {
        use crate::platform::{Os, app_config_dir, home_dir};
        let var = |n: &str| std::env::var_os(n);
        let home = home_dir(Os::current(), &var)?;
        let app_config = app_config_dir(Os::current(), &home, &var);
        Some(Locations { home, app_config })
    }

    /// The config file of `client`.
    pub fn config_path(&self, client: Client) -> PathBuf {
        match client {
            Client::ClaudeDesktop => self.app_config.join("Claude").join("claude_desktop_config.json"),
            Client::Cursor => self.home.join(".cursor").join("mcp.json"),
            Client::ClaudeCode => self.home.join(".claude.json"),
        }
    }

    /// Whether the client looks installed: its config file exists, or (Claude Desktop, Cursor) the
    /// folder it keeps it in does. Claude Code counts only when `~/.claude.json` exists.
    pub fn installed(&self, client: Client) -> bool {
        let path = self.config_path(client);
        if path.exists() {
            return true;
        }
        match client {
            Client::ClaudeCode => false,
            _ => path.parent().is_some_and(Path::is_dir),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The textual splice.

/// The result of an edit on a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Nothing to do: the file already says what we want.
    Unchanged,
    /// The new text and what changed, in words.
    Changed { text: String, summary: String },
}

/// One member of a JSON object, as byte offsets into the text.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    key_end: usize,
    value_start: usize,
    value_end: usize,
}

/// A JSON object's braces and members.
#[derive(Debug, Clone)]
struct Obj {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

impl Obj {
    fn find<'a>(&'a self, key: &str) -> Result<Option<&'a Member>, ConfigError> {
        let mut found = self.members.iter().filter(|m| m.key == key);
        let first = found.next();
        if found.next().is_some() {
            return Err(ConfigError::DuplicateKey(key.to_string()));
        }
        Ok(first)
    }
}

/// A scanner over text that serde_json has already accepted; it still checks every step, so a bug
/// here is an error, never a panic or a wrong splice.
struct Scan<'a> {
    b: &'a [u8],
    text: &'a str,
}

impl<'a> Scan<'a> {
    fn ws(&self, mut i: usize) -> usize {
        while i < self.b.len() && matches!(self.b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    fn string_end(&self, i: usize) -> Result<usize, ConfigError> {
        if self.b.get(i) != Some(&b'"') {
            return Err(ConfigError::Expected { what: "a string", at: i });
        }
        let mut j = i + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'"' => return Ok(j + 1),
                _ => j += 1,
            }
        }
        Err(ConfigError::UnterminatedString)
    }

    fn value_end(&self, i: usize) -> Result<usize, ConfigError> {
        match self.b.get(i) {
            Some(b'"') => self.string_end(i),
            Some(b'{') | Some(b'[') => {
                let mut depth = 0usize;
                let mut j = i;
                while j < self.b.len() {
                    match self.b[j] {
                        b'"' => {
                            j = self.string_end(j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                Err(ConfigError::UnbalancedBrackets)
            }
            Some(_) => {
                let mut j = i;
                while j < self.b.len() && !matches!(self.b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    j += 1;
                }
                if j == i { Err(ConfigError::Expected { what: "a value", at: i }) } else { Ok(j) }
            }
            None => Err(ConfigError::UnexpectedEnd),
        }
    }

    fn object(&self, open: usize) -> Result<Obj, ConfigError> {
        if self.b.get(open) != Some(&b'{') {
            return Err(ConfigError::Expected { what: "an object", at: open });
        }
        let mut members = Vec::new();
        let mut i = self.ws(open + 1);
        if self.b.get(i) == Some(&b'}') {
            return Ok(Obj { open, close: i, members });
        }
        loop {
            let key_start = i;
            let key_end = self.string_end(i)?;
            let key: String = serde_json::from_str(&self.text[key_start..key_end]).map_err(member_error)?;
            i = self.ws(key_end);
            if self.b.get(i) != Some(&b':') {
                return Err(ConfigError::Expected { what: "':'", at: i });
            }
            let value_start = self.ws(i + 1);
            let value_end = self.value_end(value_start)?;
            members.push(Member { key, key_start, key_end, value_start, value_end });
            i = self.ws(value_end);
            match self.b.get(i) {
                Some(b',') => i = self.ws(i + 1),
                Some(b'}') => return Ok(Obj { open, close: i, members }),
                _ => return Err(ConfigError::Expected { what: "',' or '}'", at: i }),
            }
        }
    }
}

/// How the file is laid out, so inserted text looks like the rest.
#[derive(Debug, Clone)]
struct Style {
    newline: &'static str,
    unit: String,
    colon: String,
    inline: bool,
}

impl Style {
    fn of(text: &str, top: &Obj) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let Some(first) = top.members.first() else {
            return Style { newline, unit: "  ".into(), colon: ": ".into(), inline: false };
        };
        let before = &text[top.open + 1..first.key_start];
        let colon = text[first.key_end..first.value_start].to_string();
        match before.rfind('\n') {
            Some(nl) => {
                let unit = &before[nl + 1..];
                let unit = if unit.is_empty() { "  " } else { unit };
                Style { newline, unit: unit.to_string(), colon, inline: false }
            }
            None => Style { newline, unit: "  ".into(), colon, inline: true },
        }
    }

    /// This style as `obj` itself is laid out (one object may be compact inside a pretty file).
    fn local(&self, text: &str, obj: &Obj) -> Style {
        let mut s = self.clone();
        if let Some(first) = obj.members.first() {
            s.colon = text[first.key_end..first.value_start].to_string();
            s.inline = !text[obj.open + 1..first.key_start].contains('\n');
        }
        s
    }

    /// `value` as JSON text, its nested lines indented from `indent`.
    fn render(&self, value: &Value, indent: &str) -> String {
        let mut out = String::new();
        self.render_into(&mut out, value, indent);
        out
    }

    fn render_into(&self, out: &mut String, value: &Value, indent: &str) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                out.push('{');
                let inner = format!("{indent}{}", self.unit);
                for (n, (k, v)) in map.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    if self.inline {
                        if n > 0 && self.colon.ends_with(' ') {
                            out.push(' ');
                        }
                    } else {
                        out.push_str(self.newline);
                        out.push_str(&inner);
                    }
                    out.push_str(&json_string(k));
                    out.push_str(&self.colon);
                    self.render_into(out, v, &inner);
                }
                if !self.inline {
                    out.push_str(self.newline);
                    out.push_str(indent);
                }
                out.push('}');
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('[');
                for (n, v) in items.iter().enumerate() {
                    if n > 0 {
                        out.push_str(if self.colon.ends_with(' ') { ", " } else { "," });
                    }
                    self.render_into(out, v, indent);
                }
                out.push(']');
            }
            other => {
                let _ = write!(out, "{other}");
            }
        }
    }
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The leading whitespace of the line `at` is on.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map(|n| n + 1).unwrap_or(0);
    let line = &text[start..];
    let end = line.find(|c| c != ' ' && c != '\t').unwrap_or(line.len());
    &line[..end]
}

/// Inserts `"key": value` as the last member of `obj`, separated and indented like its siblings.
fn insert_member(text: &str, doc: &Style, obj: &Obj, key: &str, value: &Value) -> String {
    let style = doc.local(text, obj);
    let mut out = String::with_capacity(text.len() + 128);
    match obj.members.last() {
        Some(last) => {
            // The separator the object already uses: between its last two members, or (with one
            // member) a comma plus what stands between '{' and the first member.
            let sep = match obj.members.len() {
                1 => {
                    let lead = &text[obj.open + 1..last.key_start];
                    if lead.contains('\n') {
                        format!(",{lead}")
                    } else if style.colon.ends_with(' ') {
                        ", ".to_string()
                    } else {
                        ",".to_string()
                    }
                }
                n => text[obj.members[n - 2].value_end..last.key_start].to_string(),
            };
            let indent = match sep.rfind('\n') {
                Some(nl) => sep[nl + 1..].to_string(),
                None => line_indent(text, last.key_start).to_string(),
            };
            out.push_str(&text[..last.value_end]);
            out.push_str(&sep);
            out.push_str(&json_string(key));
            out.push_str(&style.colon);
            out.push_str(&style.render(value, &indent));
            out.push_str(&text[last.value_end..]);
        }
        None => {
            out.push_str(&text[..obj.open + 1]);
            let base = line_indent(text, obj.open);
            if style.inline {
                out.push_str(&json_string(key));
                out.push_str(&style.colon);
                out.push_str(&style.render(value, base));
            } else {
                let inner = format!("{base}{}", style.unit);
                out.push_str(style.newline);
                out.push_str(&inner);
                out.push_str(&json_string(key));
                out.push_str(&style.colon);
                out.push_str(&style.render(value, &inner));
                out.push_str(style.newline);
                out.push_str(base);
            }
            // Whatever stood between the braces was whitespace only; it is replaced.
            out.push_str(&text[obj.close..]);
        }
    }
    out
}

/// Removes member `index` of `obj` with its separating comma.
fn remove_member(text: &str, obj: &Obj, index: usize) -> String {
    let m = &obj.members[index];
    let (from, to) = if index > 0 {
        // From the end of the previous value (its comma included) to the end of this value.
        (obj.members[index - 1].value_end, m.value_end)
    } else if let Some(next) = obj.members.get(1) {
        (m.key_start, next.key_start)
    } else {
        (obj.open + 1, obj.close)
    };
    format!("{}{}", &text[..from], &text[to..])
}

/// The parsed file: its BOM (kept), the JSON text, its top-level object and the `mcpServers` one.
struct Parsed<'a> {
    bom: &'a str,
    json: &'a str,
    top: Obj,
    servers: Option<(Member, Obj)>,
}

fn parse(text: &str) -> Result<Parsed<'_>, ConfigError> {
    let (bom, json) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (&text[..3], rest),
        None => ("", text),
    };
    let value: Value = serde_json::from_str(json).map_err(|e| {
        let hint = if json.contains("//") || json.contains("/*") || e.to_string().contains("trailing comma") {
            " (comments and trailing commas are not plain JSON)"
        } else {
            ""
        };
        ConfigError::NotJson { detail: e.to_string(), hint }
    })?;
    if !value.is_object() {
        return Err(ConfigError::TopNotObject(kind(&value)));
    }
    let scan = Scan { b: json.as_bytes(), text: json };
    let top = scan.object(scan.ws(0))?;
    let servers = match top.find("mcpServers")? {
        None => None,
        Some(m) => {
            if json.as_bytes()[m.value_start] != b'{' {
                return Err(ConfigError::ServersNotObject(kind(&value["mcpServers"])));
            }
            let obj = scan.object(m.value_start)?;
            Some((m.clone(), obj))
        }
    };
    Ok(Parsed { bom, json, top, servers })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The `mcpServers.workbench` entry of a config file's text, if it has one; an error says why the
/// text cannot be read as a client config.
pub fn inspect(text: &str) -> Result<Option<Value>, ConfigError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let p = parse(text)?;
    let Some((_, servers)) = &p.servers else { return Ok(None) };
    match servers.find(SERVER_NAME)? {
        None => Ok(None),
        Some(m) => serde_json::from_str(&p.json[m.value_start..m.value_end]).map(Some).map_err(member_error),
    }
}

/// Adds (or updates) the `workbench` entry. An existing entry that already runs `entry`'s command is
/// left as it is (with whatever `env` or `args` the user added); one with another command gets just
/// its `command` replaced; anything else is replaced whole.
pub fn register_text(text: &str, entry: &Value) -> Result<Edit, ConfigError> {
    if text.trim().is_empty() {
        let style = Style { newline: "\n", unit: "  ".into(), colon: ": ".into(), inline: false };
        let mut servers = Map::new();
        servers.insert(SERVER_NAME.into(), entry.clone());
        let doc = json!({ "mcpServers": Value::Object(servers) });
        return Ok(Edit::Changed {
            text: style.render(&doc, "") + "\n",
            summary: "new file with an \"mcpServers\" object holding \"workbench\"".into(),
        });
    }
    let p = parse(text)?;
    let style = Style::of(p.json, &p.top);
    let new_json = match &p.servers {
        None => {
            let mut servers = Map::new();
            servers.insert(SERVER_NAME.into(), entry.clone());
            let text = insert_member(p.json, &style, &p.top, "mcpServers", &Value::Object(servers));
            (text, "added \"mcpServers\" with \"workbench\"".to_string())
        }
        Some((_, servers)) => match servers.find(SERVER_NAME)? {
            None => (insert_member(p.json, &style, servers, SERVER_NAME, entry), "added \"workbench\"".to_string()),
            Some(m) => {
                let current: Value = serde_json::from_str(&p.json[m.value_start..m.value_end]).map_err(member_error)?;
                let wanted = &entry["command"];
                if current.get("command") == Some(wanted) {
                    return Ok(Edit::Unchanged);
                }
                let scan = Scan { b: p.json.as_bytes(), text: p.json };
                let command_member = if p.json.as_bytes()[m.value_start] == b'{' {
                    let obj = scan.object(m.value_start)?;
                    obj.find("command")?.filter(|c| p.json.as_bytes()[c.value_start] == b'"').cloned()
                } else {
                    None
                };
                match command_member {
                    Some(c) => {
                        let old = current["command"].as_str().unwrap_or_default().to_string();
                        let text = format!("{}{}{}", &p.json[..c.value_start], wanted, &p.json[c.value_end..]);
                        (
                            text,
                            format!(
                                "changed the \"workbench\" command from {old} to {}",
                                wanted.as_str().unwrap_or("")
                            ),
                        )
                    }
                    None => {
                        let indent = line_indent(p.json, m.key_start);
                        let rendered = style.local(p.json, servers).render(entry, indent);
                        let text = format!("{}{}{}", &p.json[..m.value_start], rendered, &p.json[m.value_end..]);
                        (text, "replaced the \"workbench\" entry".to_string())
                    }
                }
            }
        },
    };
    Ok(Edit::Changed { text: format!("{}{}", p.bom, new_json.0), summary: new_json.1 })
}

/// Removes the `workbench` entry, keeping everything else (an `mcpServers` left empty stays).
pub fn unregister_text(text: &str) -> Result<Edit, ConfigError> {
    remove_server_text(text, SERVER_NAME)
}

/// Removes the `name` entry of `mcpServers` with the same byte-exact splice (for `workbench
/// servers import --replace`, which moves a server behind workbench).
pub fn remove_server_text(text: &str, name: &str) -> Result<Edit, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Edit::Unchanged);
    }
    let p = parse(text)?;
    let Some((_, servers)) = &p.servers else { return Ok(Edit::Unchanged) };
    let Some(index) = servers.members.iter().position(|m| m.key == name) else {
        return Ok(Edit::Unchanged);
    };
    servers.find(name)?;
    Ok(Edit::Changed {
        text: format!("{}{}", p.bom, remove_member(p.json, servers, index)),
        summary: format!("removed {}", json_string(name)),
    })
}

/// The servers other than workbench a client config lists in `mcpServers`, in file order.
pub fn other_servers(text: &str) -> Result<Vec<(String, Value)>, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let p = parse(text)?;
    let value: Value = serde_json::from_str(p.json).map_err(member_error)?;
    let Some((_, servers)) = &p.servers else { return Ok(Vec::new()) };
    Ok(servers
        .members
        .iter()
        .filter(|m| m.key != SERVER_NAME)
        .filter_map(|m| value["mcpServers"].get(&m.key).map(|v| (m.key.clone(), v.clone())))
        .collect())
}

/// Registers `entry` and removes the `moved` servers, one splice after the other.
fn replace_text(text: &str, entry: &Value, moved: &[String]) -> Result<Edit, ConfigError> {
    let mut current = text.to_string();
    let mut summaries = Vec::new();
    if let Edit::Changed { text, summary } = register_text(&current, entry)? {
        current = text;
        summaries.push(summary);
    }
    for name in moved {
        if let Edit::Changed { text, summary } = remove_server_text(&current, name)? {
            current = text;
            summaries.push(summary);
        }
    }
    if summaries.is_empty() {
        Ok(Edit::Unchanged)
    } else {
        Ok(Edit::Changed { text: current, summary: summaries.join(", ") })
    }
}

// ---------------------------------------------------------------------------------------------
// Files.

/// What happened to one client's config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The client is not installed here (nothing was touched).
    NotInstalled,
    /// Already as wanted (nothing was touched).
    Unchanged,
    /// Changed (or, in a dry run, would be).
    Changed { summary: String, backup: Option<PathBuf> },
    /// The file could not be read as a client config; left untouched.
    Refused(String),
    /// Reading or writing failed.
    Failed(String),
}

/// One client's outcome.
#[derive(Debug, Clone)]
pub struct Report {
    pub client: Client,
    pub path: PathBuf,
    pub action: Action,
    /// The new file text, for dry runs to show.
    pub preview: Option<String>,
}

impl Report {
    pub fn is_failure(&self) -> bool {
        matches!(self.action, Action::Refused(_) | Action::Failed(_))
    }
}

/// What to do to each client's config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// Add or update the entry running this command.
    Register(&'a str),
    Unregister,
    /// Register this command and remove these servers (now behind workbench) from the config.
    Replace(&'a str, &'a [String]),
}

/// Applies `op` to each client in `clients` that is installed; `dry_run` computes without writing.
pub fn apply(locations: &Locations, clients: &[Client], op: Op<'_>, dry_run: bool) -> Vec<Report> {
    clients.iter().map(|c| apply_one(locations, *c, op, dry_run)).collect()
}

fn apply_one(locations: &Locations, client: Client, op: Op<'_>, dry_run: bool) -> Report {
    let path = locations.config_path(client);
    let report = |action, preview| Report { client, path: path.clone(), action, preview };
    if !locations.installed(client) {
        return report(Action::NotInstalled, None);
    }
    // Write through a symlink (dotfile managers) to the file it points at.
    let target = match std::fs::canonicalize(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.clone(),
        Err(e) => return report(Action::Failed(format!("cannot resolve {}: {e}", path.display())), None),
    };
    // A client may rewrite its file while we work (Claude Code does, often): if the file changed
    // between our read and our rename, read it again.
    for _ in 0..3 {
        let original = match std::fs::read(&target) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return report(Action::Failed(format!("cannot read it: {e}")), None),
        };
        let text = match &original {
            Some(bytes) => match std::str::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => return report(Action::Refused("it is not UTF-8 text".into()), None),
            },
            None => "",
        };
        if original.is_none() && op == Op::Unregister {
            return report(Action::Unchanged, None);
        }
        let edit = match op {
            Op::Register(command) => register_text(text, &client.entry(command)),
            Op::Unregister => unregister_text(text),
            Op::Replace(command, moved) => replace_text(text, &client.entry(command), moved),
        };
        let (new_text, summary) = match edit {
            Ok(Edit::Unchanged) => return report(Action::Unchanged, None),
            Ok(Edit::Changed { text, summary }) => (text, summary),
            Err(why) => return report(Action::Refused(why.to_string()), None),
        };
        if dry_run {
            return report(Action::Changed { summary, backup: None }, Some(diff(text, &new_text)));
        }
        let backup = match &original {
            Some(_) => match write_backup(&target) {
                Ok(b) => Some(b),
                Err(e) => {
                    return report(Action::Failed(format!("cannot write a backup, so nothing was changed: {e}")), None);
                }
            },
            None => None,
        };
        match replace(&target, original.as_deref(), new_text.as_bytes()) {
            Ok(true) => return report(Action::Changed { summary, backup }, None),
            Ok(false) => {
                // Changed under us: drop the now-stale backup and start over.
                if let Some(b) = backup {
                    let _ = std::fs::remove_file(b);
                }
                continue;
            }
            Err(e) => return report(Action::Failed(format!("cannot write it: {e}")), None),
        }
    }
    report(Action::Failed("it kept changing while workbench tried to edit it; close the client and retry".into()), None)
}

/// The lines that differ between `old` and `new` (one changed region, as our splices make), as
/// `-`/`+` lines.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let mut out = String::new();
    for line in &a[head..a.len() - tail] {
        let _ = writeln!(out, "- {line}");
    }
    for line in &b[head..b.len() - tail] {
        let _ = writeln!(out, "+ {line}");
    }
    out
}

/// Copies `path` to `<path>.workbench-backup-<UTC time>` (a new name each time), keeping its mode.
fn write_backup(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for n in 0..1000 {
        let suffix = if n == 0 { String::new() } else { format!("-{n}") };
        let backup = path.with_file_name(format!("{name}.workbench-backup-{stamp}{suffix}"));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&backup) {
            Ok(_) => {
                std::fs::copy(path, &backup)?;
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many backups with the same time stamp"))
}

/// Writes `new` to a temporary file beside `path` (same mode as the old file; 0600 for a new one)
/// and renames it over `path`, unless `path` no longer holds `expected`. False when it changed.
fn replace(path: &Path, expected: Option<&[u8]>, new: &[u8]) -> std::io::Result<bool> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.workbench-tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        match std::fs::metadata(path) {
            Ok(meta) => f.set_permissions(meta.permissions())?,
            Err(_) => restrict(&f)?,
        }
        f.write_all(new)?;
        f.sync_all()?;
        drop(f);
        let now = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if now.as_deref() != expected {
            let _ = std::fs::remove_file(&tmp);
            return Ok(false);
        }
        std::fs::rename(&tmp, path)?;
        Ok(true)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn restrict(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn restrict(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// A short, human description of a home-relative path (`~/.cursor/mcp.json`).
pub fn tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/home/ada/.local/bin/workbench";

    fn entry() -> Value {
        Client::Cursor.entry(CMD)
    }

    fn changed(e: Result<Edit, ConfigError>) -> String {
        match e {
            Ok(Edit::Changed { text, .. }) => text,
            other => panic!("expected a change, got {other:?}"),
        }
    }

    /// Registering then unregistering gives back the original bytes, registering twice changes
    /// nothing the second time, and the result parses with our entry and everything else intact.
    fn round_trip(original: &str) -> String {
        let added = changed(register_text(original, &entry()));
        assert_eq!(register_text(&added, &entry()), Ok(Edit::Unchanged), "idempotent:\n{added}");
        let v: Value = serde_json::from_str(added.trim_start_matches('\u{feff}')).expect("result is JSON");
        assert_eq!(v["mcpServers"]["workbench"], entry(), "{added}");
        if !original.trim().is_empty() {
            let before: Value = serde_json::from_str(original.trim_start_matches('\u{feff}')).unwrap();
            let mut after = v.clone();
            after["mcpServers"].as_object_mut().unwrap().remove("workbench");
            if before.get("mcpServers").is_none() {
                after.as_object_mut().unwrap().remove("mcpServers");
            }
            assert_eq!(before, after, "other content is kept");
        }
        let removed = changed(unregister_text(&added));
        // Exact whenever the original had a top-level mcpServers that was not whitespace-only
        // inside (`{ }` comes back as `{}`); without one, an empty `"mcpServers": {}` stays.
        let had_servers = serde_json::from_str::<Value>(original.trim_start_matches('\u{feff}'))
            .is_ok_and(|v| v.get("mcpServers").is_some());
        if had_servers && !original.contains("{ }") {
            assert_eq!(removed, original, "unregister restores the bytes");
        }
        assert_eq!(unregister_text(&removed), Ok(Edit::Unchanged));
        added
    }

    #[test]
    fn empty_file_gets_a_fresh_document() {
        let text = round_trip("");
        assert_eq!(
            text,
            "{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"command\": \"/home/ada/.local/bin/workbench\"\n    }\n  }\n}\n"
        );
        round_trip("  \n");
    }

    #[test]
    fn empty_object_and_no_mcp_servers() {
        assert_eq!(
            round_trip("{}"),
            "{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"command\": \"/home/ada/.local/bin/workbench\"\n    }\n  }\n}"
        );
        let original = "{\n    \"theme\": \"dark\",\n    \"numStartups\": 3\n}\n";
        let added = round_trip(original);
        assert_eq!(
            added,
            "{\n    \"theme\": \"dark\",\n    \"numStartups\": 3,\n    \"mcpServers\": {\n        \"workbench\": {\n            \"command\": \"/home/ada/.local/bin/workbench\"\n        }\n    }\n}\n"
        );
        // No mcpServers before: unregistering leaves an empty one, everything else as it was.
        assert_eq!(
            changed(unregister_text(&added)),
            "{\n    \"theme\": \"dark\",\n    \"numStartups\": 3,\n    \"mcpServers\": {}\n}\n"
        );
    }

    #[test]
    fn other_servers_and_keys_are_kept_byte_for_byte() {
        let original = "{\n  \"globalShortcut\": \"\",\n  \"mcpServers\": {\n    \"files\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]\n    },\n    \"git\": {\"command\": \"uvx\", \"args\": [\"mcp-server-git\"]}\n  },\n  \"zeta\": [1, 2.50, {\"x\": null}]\n}\n";
        let added = round_trip(original);
        let at = added.find("\"git\"").unwrap();
        assert_eq!(&added[..at], &original[..at]);
        assert!(added.ends_with("  },\n  \"zeta\": [1, 2.50, {\"x\": null}]\n}\n"), "{added}");
        assert!(
            added.contains("[\"mcp-server-git\"]},\n    \"workbench\": {\n      \"command\": \"/home/ada/.local/bin/workbench\"\n    }\n  },"),
            "{added}"
        );
    }

    #[test]
    fn empty_mcp_servers_object() {
        let original = "{\n  \"mcpServers\": {},\n  \"other\": true\n}";
        let added = round_trip(original);
        assert_eq!(
            added,
            "{\n  \"mcpServers\": {\n    \"workbench\": {\n      \"command\": \"/home/ada/.local/bin/workbench\"\n    }\n  },\n  \"other\": true\n}"
        );
        let spaced = "{\"mcpServers\": { }}";
        assert_eq!(changed(unregister_text(&round_trip(spaced))), "{\"mcpServers\": {}}");
    }

    #[test]
    fn workbench_first_middle_or_last_is_removed_cleanly() {
        let w = "\"workbench\": {\"command\": \"x\"}";
        for (text, expected) in [
            (format!("{{\"mcpServers\": {{{w}, \"a\": 1}}}}"), "{\"mcpServers\": {\"a\": 1}}"),
            (format!("{{\"mcpServers\": {{\"a\": 1, {w}, \"b\": 2}}}}"), "{\"mcpServers\": {\"a\": 1, \"b\": 2}}"),
            (format!("{{\"mcpServers\": {{\"a\": 1, {w}}}}}"), "{\"mcpServers\": {\"a\": 1}}"),
            (format!("{{\"mcpServers\": {{ {w} }}}}"), "{\"mcpServers\": {}}"),
            (
                format!("{{\n  \"mcpServers\": {{\n    {w},\n    \"a\": 1\n  }}\n}}"),
                "{\n  \"mcpServers\": {\n    \"a\": 1\n  }\n}",
            ),
        ] {
            assert_eq!(changed(unregister_text(&text)), expected);
        }
    }

    #[test]
    fn an_existing_entry_with_our_command_is_left_alone() {
        let text = format!(
            "{{\"mcpServers\": {{\"workbench\": {{\"command\": \"{CMD}\", \"env\": {{\"WORKBENCH_LOG\": \"debug\"}}}}}}}}"
        );
        assert_eq!(register_text(&text, &entry()), Ok(Edit::Unchanged));
    }

    #[test]
    fn an_entry_with_another_command_gets_only_its_command_replaced() {
        let text = "{\"mcpServers\": {\"workbench\": {\"command\": \"/old/workbench\", \"env\": {\"A\": \"1\"}}}}";
        assert_eq!(
            changed(register_text(text, &entry())),
            format!("{{\"mcpServers\": {{\"workbench\": {{\"command\": \"{CMD}\", \"env\": {{\"A\": \"1\"}}}}}}}}")
        );
        // Not an object, or no command: replaced whole.
        let text = "{\n  \"mcpServers\": {\n    \"workbench\": {\"url\": \"http://x\"}\n  }\n}";
        assert_eq!(
            changed(register_text(text, &entry())),
            format!("{{\n  \"mcpServers\": {{\n    \"workbench\": {{\n      \"command\": \"{CMD}\"\n    }}\n  }}\n}}")
        );
        let text = "{\"mcpServers\": {\"workbench\": null}}";
        assert_eq!(
            changed(register_text(text, &entry())),
            format!("{{\"mcpServers\": {{\"workbench\": {{\"command\": \"{CMD}\"}}}}}}")
        );
    }

    #[test]
    fn crlf_and_tabs_are_followed() {
        let original = "{\r\n\t\"mcpServers\": {\r\n\t\t\"a\": {\r\n\t\t\t\"command\": \"a\"\r\n\t\t}\r\n\t}\r\n}\r\n";
        let added = round_trip(original);
        assert!(!added.replace("\r\n", "").contains('\n'), "only CRLF line ends: {added:?}");
        assert!(
            added.contains(
                "},\r\n\t\t\"workbench\": {\r\n\t\t\t\"command\": \"/home/ada/.local/bin/workbench\"\r\n\t\t}\r\n\t}"
            ),
            "{added:?}"
        );
        round_trip("{\r\n  \"x\": 1\r\n}");
    }

    #[test]
    fn compact_files_stay_compact() {
        let added = round_trip("{\"a\":1,\"mcpServers\":{\"b\":{\"command\":\"b\"}}}");
        assert_eq!(
            added,
            format!(
                "{{\"a\":1,\"mcpServers\":{{\"b\":{{\"command\":\"b\"}},\"workbench\":{{\"command\":\"{CMD}\"}}}}}}"
            )
        );
        round_trip("{\"a\": 1}");
    }

    #[test]
    fn unicode_escapes_and_a_bom() {
        let original = "\u{feff}{\n  \"name\": \"Zoë ✓ \\\"quoted\\\" \\u00e9 {not a brace}\",\n  \"mcpServers\": {\n    \"données\": {\"command\": \"/opt/ç/bin\"}\n  }\n}\n";
        let added = round_trip(original);
        assert!(added.starts_with('\u{feff}'));
        let cmd = "/home/zoë/bin/work bench";
        let text = changed(register_text("{}", &Client::Cursor.entry(cmd)));
        assert_eq!(inspect(&text).unwrap().unwrap()["command"], cmd);
        // A key spelled with escapes is the same key.
        let escaped = "{\"mcp\\u0053ervers\": {\"work\\u0062ench\": {\"command\": \"x\"}}}";
        assert_eq!(changed(unregister_text(escaped)), "{\"mcp\\u0053ervers\": {}}");
    }

    #[test]
    fn nested_mcp_servers_elsewhere_are_not_ours() {
        // Claude Code keeps per-project servers under projects.<path>.mcpServers; ours is top-level.
        let original = "{\n  \"projects\": {\n    \"/src/x\": {\n      \"mcpServers\": {\"workbench\": {\"command\": \"local\"}}\n    }\n  }\n}";
        let added = round_trip(original);
        assert!(added.contains("\"mcpServers\": {\"workbench\": {\"command\": \"local\"}}"));
        assert_eq!(unregister_text(original), Ok(Edit::Unchanged));
    }

    #[test]
    fn files_that_are_not_plain_json_objects_are_refused() {
        for (text, says) in [
            ("{\n  // my servers\n  \"mcpServers\": {}\n}", "comments and trailing commas"),
            ("{\"mcpServers\": {\"a\": {\"command\": \"a\"},}}", "trailing comma"),
            ("{\"mcpServers\": {}", "not valid JSON"),
            ("[1, 2]", "top level is an array"),
            ("\"hello\"", "top level is a string"),
            ("{\"mcpServers\": []}", "\"mcpServers\" is an array"),
            ("{\"mcpServers\": null}", "\"mcpServers\" is null"),
            ("{\"mcpServers\": {}, \"mcpServers\": {}}", "the key \"mcpServers\" twice"),
            ("{\"mcpServers\": {\"workbench\": 1, \"workbench\": 2}}", "the key \"workbench\" twice"),
        ] {
            for result in [register_text(text, &entry()), unregister_text(text)] {
                match result {
                    Err(why) => assert!(why.to_string().contains(says), "{text}: {why}"),
                    Ok(e) => panic!("{text}: expected a refusal, got {e:?}"),
                }
            }
            assert!(inspect(text).is_err(), "{text}");
        }
    }

    #[test]
    fn diffs_show_only_the_changed_lines() {
        let old = "{\n  \"a\": 1,\n  \"mcpServers\": {}\n}\n";
        let new = changed(register_text(old, &entry()));
        assert_eq!(
            diff(old, &new),
            "-   \"mcpServers\": {}\n+   \"mcpServers\": {\n+     \"workbench\": {\n+       \"command\": \"/home/ada/.local/bin/workbench\"\n+     }\n+   }\n"
        );
    }

    #[test]
    fn the_examples_are_what_register_writes() {
        let cmd = "/home/you/.local/bin/workbench";
        for (client, example) in [
            (Client::ClaudeDesktop, include_str!("../examples/config/claude_desktop_config.json")),
            (Client::Cursor, include_str!("../examples/config/cursor-mcp.json")),
            (Client::ClaudeCode, include_str!("../examples/config/claude-code.json")),
        ] {
            assert_eq!(changed(register_text("", &client.entry(cmd))), example, "{client:?}");
        }
    }

    #[test]
    fn claude_code_entry_names_the_transport() {
        assert_eq!(Client::ClaudeCode.entry("/x"), json!({"type": "stdio", "command": "/x", "args": []}));
        let text = changed(register_text("{\"numStartups\": 1}", &Client::ClaudeCode.entry("/x")));
        assert_eq!(
            text,
            "{\"numStartups\": 1, \"mcpServers\": {\"workbench\": {\"type\": \"stdio\", \"command\": \"/x\", \"args\": []}}}"
        );
        let pretty = changed(register_text("{\n  \"a\": 1\n}", &Client::ClaudeCode.entry("/x")));
        assert!(
            pretty.contains("      \"type\": \"stdio\",\n      \"command\": \"/x\",\n      \"args\": []\n"),
            "{pretty}"
        );
    }

    fn locations(dir: &Path) -> Locations {
        Locations { home: dir.to_path_buf(), app_config: dir.join(".config") }
    }

    #[test]
    fn files_are_backed_up_written_atomically_and_refusals_leave_them_alone() {
        let dir = tempfile::tempdir().unwrap();
        let loc = locations(dir.path());
        std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
        std::fs::create_dir_all(dir.path().join(".config/Claude")).unwrap();
        let cursor = loc.config_path(Client::Cursor);
        let original = "{\"mcpServers\": {\"a\": {\"command\": \"a\"}}}";
        std::fs::write(&cursor, original).unwrap();
        let claude = loc.config_path(Client::ClaudeDesktop);
        let broken = "{ \"mcpServers\": { // hi\n } }";
        std::fs::write(&claude, broken).unwrap();

        let dry = apply(&loc, &Client::ALL, Op::Register(CMD), true);
        assert!(matches!(dry[0].action, Action::Refused(_)), "{:?}", dry[0]);
        assert!(matches!(dry[1].action, Action::Changed { backup: None, .. }), "{:?}", dry[1]);
        assert_eq!(dry[2].action, Action::NotInstalled);
        assert_eq!(std::fs::read_to_string(&cursor).unwrap(), original, "a dry run writes nothing");

        let done = apply(&loc, &Client::ALL, Op::Register(CMD), false);
        assert!(done[0].is_failure() && !done[1].is_failure());
        assert_eq!(std::fs::read_to_string(&claude).unwrap(), broken, "a refused file is untouched");
        let Action::Changed { backup: Some(backup), .. } = &done[1].action else { panic!("{:?}", done[1]) };
        assert_eq!(std::fs::read_to_string(backup).unwrap(), original);
        assert_eq!(inspect(&std::fs::read_to_string(&cursor).unwrap()).unwrap(), Some(Client::Cursor.entry(CMD)));
        assert_eq!(apply(&loc, &[Client::Cursor], Op::Register(CMD), false)[0].action, Action::Unchanged);

        let removed = apply(&loc, &[Client::Cursor], Op::Unregister, false);
        assert!(matches!(removed[0].action, Action::Changed { backup: Some(_), .. }));
        assert_eq!(std::fs::read_to_string(&cursor).unwrap(), original);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join(".cursor"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_missing_file_in_an_installed_client_is_created_private() {
        let dir = tempfile::tempdir().unwrap();
        let loc = locations(dir.path());
        std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
        let r = apply(&loc, &[Client::Cursor], Op::Register(CMD), false);
        assert!(matches!(r[0].action, Action::Changed { backup: None, .. }), "{:?}", r[0]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(loc.config_path(Client::Cursor)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Claude Code counts as installed only when its file exists.
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        assert!(!loc.installed(Client::ClaudeCode));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_config_is_edited_at_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let loc = locations(dir.path());
        let real = dir.path().join("dotfiles-claude.json");
        std::fs::write(&real, "{\"theme\": \"dark\"}").unwrap();
        std::os::unix::fs::symlink(&real, loc.config_path(Client::ClaudeCode)).unwrap();
        let r = apply(&loc, &[Client::ClaudeCode], Op::Register(CMD), false);
        assert!(matches!(r[0].action, Action::Changed { .. }), "{:?}", r[0]);
        assert!(std::fs::symlink_metadata(loc.config_path(Client::ClaudeCode)).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&real).unwrap().contains("workbench"));
    }
}
