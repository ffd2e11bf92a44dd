//! Tidy check that a tool is one unit with its tests (issue 25 item 6): every plugin tool (each
//! `const X: ToolSpec = tool! { name: "..." }` under `plugins/src`) has its const named in its
//! integration's `plugins/src/<integration>/tool_tests.rs`, where its request- and
//! result-shaping tests run on `MockUpstream`. The tools the scan finds are counted against
//! `plugins::INTEGRATIONS`, so a scan that finds nothing cannot pass. The check also runs on a
//! planted tool without a test, which it must report by name.

use crate::tidy::{root, rust_files};

/// A tool as its source declares it.
#[derive(Debug, PartialEq)]
struct Declared {
    integration: String,
    ident: String,
    name: String,
}

/// The plugin crate's files, as (path under `plugins/src`, text), sorted.
fn plugin_files() -> Vec<(String, String)> {
    let base = root().join("plugins/src");
    let mut paths = Vec::new();
    rust_files(&base, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(&base).unwrap().display().to_string().replace('\\', "/"), text)
        })
        .collect()
}

/// The code lines of a text: comment lines (`//`, `///`, `//!`) left out.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with("//"))
}

/// The integration a file under `plugins/src` belongs to: its first path component, minus `.rs`.
fn integration_of(path: &str) -> &str {
    let first = path.split('/').next().unwrap_or(path);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// Every `const X: ToolSpec = tool! { name: "..." ...` in the files (the name on the next code line).
fn declared_tools(files: &[(String, String)]) -> Vec<Declared> {
    let mut out = Vec::new();
    for (path, text) in files {
        let lines: Vec<&str> = code_lines(text).collect();
        for (i, line) in lines.iter().enumerate() {
            let Some((head, _)) = line.split_once(": ToolSpec = tool! {") else { continue };
            let Some(ident) = head.trim().rsplit(' ').next().filter(|_| head.contains("const ")) else { continue };
            let name = lines
                .get(i + 1)
                .and_then(|l| l.trim().strip_prefix("name: \""))
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("{path}: `{ident}` has no `name: \"...\"` on the line after it"));
            out.push(Declared {
                integration: integration_of(path).to_string(),
                ident: ident.to_string(),
                name: name.to_string(),
            });
        }
    }
    out
}

/// Whether `ident` appears as a whole word in the code of `text`.
fn mentions(text: &str, ident: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code_lines(text).any(|line| {
        line.match_indices(ident).any(|(i, _)| {
            let before = line[..i].chars().next_back();
            let after = line[i + ident.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
    })
}

/// The tools (by name) whose const is not named in their integration's `tool_tests.rs`.
fn untested(files: &[(String, String)]) -> Vec<String> {
    declared_tools(files)
        .into_iter()
        .filter(|t| {
            let tests = format!("{}/tool_tests.rs", t.integration);
            let text = files.iter().find(|(p, _)| *p == tests).map(|(_, t)| t.as_str()).unwrap_or("");
            !mentions(text, &t.ident)
        })
        .map(|t| t.name)
        .collect()
}

#[test]
fn every_plugin_tool_has_its_tool_tests() {
    let files = plugin_files();
    let declared = declared_tools(&files);
    let registered: Vec<&str> = plugins::INTEGRATIONS.iter().flat_map(|i| i.tools.iter().map(|t| t.name)).collect();
    assert_eq!(declared.len(), registered.len(), "the source scan finds every registered tool");
    let mut scanned: Vec<&str> = declared.iter().map(|t| t.name.as_str()).collect();
    let mut listed = registered.clone();
    scanned.sort_unstable();
    listed.sort_unstable();
    assert_eq!(scanned, listed, "the source scan finds exactly the registered tools");
    for t in &declared {
        let tool = plugins::INTEGRATIONS
            .iter()
            .find(|i| i.tools.iter().any(|s| s.name == t.name))
            .unwrap_or_else(|| panic!("{} is registered", t.name));
        assert_eq!(tool.name, t.integration, "{} is declared under its integration's path", t.name);
    }
    let untested = untested(&files);
    assert!(
        untested.is_empty(),
        "tools whose const no test in their integration's tool_tests.rs names:\n{}",
        untested.join("\n")
    );
}

#[test]
fn a_planted_tool_without_a_test_is_reported_by_name() {
    let tool = |ident: &str, name: &str| {
        format!("pub(crate) const {ident}: ToolSpec = tool! {{\n    name: \"{name}\",\n    effect: Read,\n}};\n")
    };
    let files = vec![
        ("acme.rs".to_string(), "pub mod send;\n".to_string()),
        ("acme/mod.rs".to_string(), tool("LIST_WIDGETS", "acme_list_widgets")),
        ("acme/send.rs".to_string(), tool("SEND_WIDGET", "acme_send_widget")),
        ("acme/list.rs".to_string(), tool("GET_WIDGET", "acme_get_widget")),
        (
            "acme/tool_tests.rs".to_string(),
            "// SEND_WIDGET is named only in a comment\nfn t() { run(LIST_WIDGETS); run(GET_WIDGET_X); }\n".to_string(),
        ),
        ("other.rs".to_string(), tool("LIST_WIDGETS", "other_list_widgets")),
    ];
    assert_eq!(declared_tools(&files).len(), 4);
    assert_eq!(untested(&files), ["acme_send_widget", "acme_get_widget", "other_list_widgets"]);
}
