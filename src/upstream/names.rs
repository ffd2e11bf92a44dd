//! What a listed tool is offered as: its effect (annotations, or the user's word in config.json),
//! its normalised listing, and its exposed name (a name two tools claim is nobody's).

use std::collections::{BTreeMap, HashMap};

use plugins::api::Effect;
use serde_json::Value;

pub use config::ServerConfig;

use super::*;

/// What a tool's annotations make of its effect: the server's claims only make a tool stricter,
/// so unclear or contradictory claims are destructive.
fn annotated_effect(annotations: Option<&Value>) -> (Effect, EffectSource) {
    let hint = |key: &str| annotations.and_then(|a| a.get(key)).and_then(Value::as_bool);
    match (hint("readOnlyHint"), hint("destructiveHint")) {
        (Some(true), Some(true)) => (Effect::Destructive, EffectSource::Contradictory),
        (Some(true), _) => (Effect::Read, EffectSource::Annotations),
        (_, Some(false)) => (Effect::Write, EffectSource::Annotations),
        (_, Some(true)) => (Effect::Destructive, EffectSource::Annotations),
        (_, None) => (Effect::Destructive, EffectSource::Missing),
    }
}

/// The effect a raw `tools/list` tool of `server` is treated with, and why: the user's word in
/// config.json first, else its annotations.
pub fn effect_of(config: Option<&ServerConfig>, tool: &Value) -> (Effect, EffectSource) {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    match config.and_then(|c| c.effects().of(name)) {
        Some(e) => (e, EffectSource::Config),
        None => annotated_effect(tool.get("annotations")),
    }
}

/// One tool of a `tools/list` answer, normalised; `None` for an entry without a name.
pub(super) fn listed_from(tool: &Value) -> Option<Listed> {
    let name = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty())?;
    let annotations = tool.get("annotations");
    let (effect, _) = annotated_effect(annotations);
    let normalised = schema::normalise(tool.get("inputSchema").unwrap_or(&Value::Null));
    let mut description = tool
        .get("description")
        .and_then(Value::as_str)
        .or_else(|| tool.get("title").and_then(Value::as_str))
        .unwrap_or("")
        .trim()
        .to_string();
    description = plugins::api::truncate_chars(&description, MAX_DESCRIPTION).0;
    if !normalised.unchecked.is_empty() {
        description.push_str(&format!(
            "\n(Rules only the upstream server checks: {}.)",
            plugins::api::truncate_chars(&normalised.unchecked.join("; "), 400).0
        ));
    }
    Some(Listed {
        tool: name.to_string(),
        description,
        schema: normalised.schema.into(),
        effect,
        unchecked: normalised.unchecked,
    })
}

/// `<server>_<tool>` under the portable name rule (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`): what a
/// tool is offered as, if no other tool claims the same name ([`assign_names`]).
pub fn base_name(server: &str, tool: &str) -> String {
    let mut base: String = format!("{server}_{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if !base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        base.insert(0, '_');
    }
    base.truncate(64);
    base
}

/// A name that more than one tool claims: none of them is offered under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    pub name: String,
    /// The upstream tools that claim it, as (server, tool on that server).
    pub tools: Vec<(String, String)>,
    /// One of workbench's own tools (or a meta-tool) has the name.
    pub workbench: bool,
}

impl Collision {
    /// One line for `servers list`, doctor and the portal.
    pub fn describe(&self) -> String {
        let who: Vec<String> = self.tools.iter().map(|(s, t)| format!("tool '{t}' of server '{s}'")).collect();
        format!(
            "{} {} the name {}{}, so none of them is offered under it; rename a server (workbench servers remove, then add it under another name)",
            who.join(" and "),
            if who.len() == 1 { "claims" } else { "all claim" },
            self.name,
            if self.workbench { ", which is workbench's own" } else { "" },
        )
    }
}

/// The exposed name of every offered upstream tool, and the names nobody gets.
#[derive(Debug, Default)]
pub struct Names {
    /// By (server, tool on that server).
    pub names: HashMap<(String, String), String>,
    pub collisions: Vec<Collision>,
}

/// Names the tools of `servers` (each `(server, its tools)`): a tool is offered as
/// [`base_name`] only when no other tool (of any server, its own included) has the same base
/// name and `taken` (workbench's own tools and the meta-tools) does not have it. Otherwise every
/// claimant is left out and the clash is a [`Collision`]. So names are unique by construction,
/// and no server, listed before or after, can take a name from another: at worst a clash makes a
/// name unusable, never someone else's.
pub fn assign_names<'a>(
    servers: impl IntoIterator<Item = (&'a str, &'a [Listed])>,
    taken: &dyn Fn(&str) -> bool,
) -> Names {
    let mut claims: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (server, listed) in servers {
        for l in listed {
            claims.entry(base_name(server, &l.tool)).or_default().push((server.to_string(), l.tool.clone()));
        }
    }
    let mut out = Names::default();
    for (name, tools) in claims {
        let workbench = taken(&name);
        if tools.len() == 1 && !workbench {
            let (server, tool) = tools.into_iter().next().unwrap_or_default();
            out.names.insert((server, tool), name);
        } else {
            out.collisions.push(Collision { name, tools, workbench });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed(tool: &str) -> Listed {
        Listed {
            tool: tool.into(),
            description: String::new(),
            schema: json!({}).into(),
            effect: Effect::Destructive,
            unchecked: vec![],
        }
    }

    #[test]
    fn names_follow_the_portable_rule() {
        assert_eq!(base_name("fs", "read_file"), "fs_read_file");
        assert_eq!(base_name("fs", "read.file/v2"), "fs_read_file_v2");
        assert_eq!(base_name("fs", &"x".repeat(80)).len(), 64);
    }

    /// Attack (issue 26): a server `notes` with a tool `files_read` and the user's `notes_files`
    /// with `read` both want `notes_files_read`. Neither gets it, whichever sorts or lists first;
    /// a name workbench has is nobody's; names of different length cut to 64 clash the same way.
    #[test]
    fn no_server_takes_another_servers_name() {
        let none = |_: &str| false;
        for order in [["notes", "notes_files"], ["notes_files", "notes"]] {
            let tools =
                |s: &str| if s == "notes" { vec![listed("files_read"), listed("list")] } else { vec![listed("read")] };
            let lists: Vec<(String, Vec<Listed>)> = order.iter().map(|s| (s.to_string(), tools(s))).collect();
            let names = assign_names(lists.iter().map(|(s, l)| (s.as_str(), l.as_slice())), &none);
            assert!(names.names.values().all(|n| n != "notes_files_read"), "{:?}", names.names);
            assert_eq!(names.names[&("notes".to_string(), "list".to_string())], "notes_list");
            assert_eq!(names.collisions.len(), 1);
            let c = &names.collisions[0];
            assert_eq!(c.name, "notes_files_read");
            assert_eq!(c.tools.len(), 2);
            assert!(c.describe().contains("server 'notes'") && c.describe().contains("server 'notes_files'"));
        }
        let lists = [("search".to_string(), vec![listed("tools"), listed("read.file"), listed("read_file")])];
        let names = assign_names(lists.iter().map(|(s, l)| (s.as_str(), l.as_slice())), &|n: &str| n == "search_tools");
        assert!(names.names.is_empty(), "{:?}", names.names);
        assert!(names.collisions.iter().any(|c| c.workbench && c.name == "search_tools"));
        assert!(names.collisions.iter().any(|c| !c.workbench && c.name == "search_read_file"));
    }

    #[test]
    fn annotations_set_the_effect() {
        let t = |a: Value| {
            listed_from(&json!({ "name": "t", "inputSchema": { "type": "object" }, "annotations": a })).unwrap().effect
        };
        assert_eq!(t(json!({ "readOnlyHint": true })), Effect::Read);
        assert_eq!(t(json!({ "readOnlyHint": true, "destructiveHint": false })), Effect::Read);
        assert_eq!(t(json!({ "destructiveHint": true })), Effect::Destructive);
        assert_eq!(t(json!({ "readOnlyHint": false, "destructiveHint": false })), Effect::Write);
        assert_eq!(t(json!({ "destructiveHint": false })), Effect::Write);
        // Attack (issue 26): contradictory or missing claims count as the stricter effect.
        assert_eq!(t(json!({ "readOnlyHint": true, "destructiveHint": true })), Effect::Destructive);
        assert_eq!(t(json!({})), Effect::Destructive);
        assert_eq!(t(json!({ "readOnlyHint": "true" })), Effect::Destructive);
        assert_eq!(t(Value::Null), Effect::Destructive);
    }
}
