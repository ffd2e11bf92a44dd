//! The textual splice: a strict parse of a client config that keeps byte offsets, the file's
//! style (newline, indent unit, colon spacing), and the edits that add, replace or remove one
//! member of `mcpServers` while every other byte stays as it was.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{ConfigError, SERVER_NAME, member_error};

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
pub(super) fn replace_text(text: &str, entry: &Value, moved: &[String]) -> Result<Edit, ConfigError> {
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
