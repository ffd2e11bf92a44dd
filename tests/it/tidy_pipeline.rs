//! Tidy checks of the pipeline's shape, read from the source: a meta-tool is one item (its name is
//! written once, in its own module under `src/meta/`; no table, dispatch `match` or special case
//! elsewhere in `src/meta/` or `src/mcp/` names it), and only the wire module
//! (`src/meta/wire.rs`) builds or reads the JSON of an answer in the engine, the meta-tools, the
//! portal and the CLI (the MCP server in `src/mcp/` is the edge that sends it), and an argument's
//! default is written as data beside its field (`#[serde_inline_default(..)]`), never as a
//! `#[serde(default = "fn")]` helper function elsewhere. Each check also runs on a planted
//! regression, which it must find.

use crate::tidy::{root, rust_files};

fn src_files() -> Vec<(String, String)> {
    files_under("src")
}

/// The Rust files under `dir` (relative to the repository root), each as (path, text).
fn files_under(dir: &str) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&root().join(dir), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(root()).unwrap().display().to_string().replace('\\', "/"), text)
        })
        .collect()
}

/// The code of a file: its unit tests (from the first `#[cfg(test)]`) and its comments removed.
fn code_of(text: &str) -> Vec<&str> {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect()
}

/// The meta-tools' names as their items declare them (`const NAME: &'static str = "...";`), each
/// with the modules that declare it (a name two profiles share has two).
fn declared_names(files: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let mut names: Vec<(String, Vec<String>)> = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| p.starts_with("src/meta/")) {
        for line in code_of(text) {
            let Some(rest) = line.trim().strip_prefix("const NAME: &'static str = \"") else { continue };
            let Some(name) = rest.split('"').next() else { continue };
            match names.iter_mut().find(|(n, _)| n == name) {
                Some((_, homes)) => homes.push(path.clone()),
                None => names.push((name.to_string(), vec![path.clone()])),
            }
        }
    }
    names
}

/// Where a meta-tool is not one item: its name as a string literal in `src/meta/` or `src/mcp/`
/// outside the module that declares it (a table, a dispatch `match`, a special case), a
/// description table in `src/meta/mod.rs`, or a profile list with anything but `Tool::of` items.
fn item_violations(files: &[(String, String)]) -> Vec<String> {
    let names = declared_names(files);
    let mut found = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| p.starts_with("src/meta/") || p.starts_with("src/mcp/")) {
        let code = code_of(text);
        for (i, line) in code.iter().enumerate() {
            for (name, homes) in &names {
                if !homes.contains(path) && line.contains(&format!("\"{name}\"")) {
                    found.push(format!("{path}:{}: names the meta-tool \"{name}\" (declared in {homes:?})", i + 1));
                }
            }
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if path == "src/meta/mod.rs" && (squashed.starts_with("name:\"") || squashed.starts_with("description:\""))
            {
                found.push(format!("{path}:{}: a table of meta-tools (each one's data lives in its module)", i + 1));
            }
        }
        // A profile's list of tools: `static ...: &[Tool] = &[ Tool::of::<...>(), ... ];`.
        let joined = code.join("\n");
        for list in joined.split(": &[Tool] = &[").skip(1) {
            let body = list.split("];").next().unwrap_or_default();
            for entry in body.split("()").map(str::trim).map(|e| e.trim_start_matches(',').trim()) {
                if !entry.is_empty() && !entry.starts_with("Tool::of::<") {
                    found.push(format!("{path}: a profile lists something other than a Tool::of item: {entry}"));
                }
            }
        }
    }
    found
}

#[test]
fn a_meta_tool_is_one_item() {
    let files = src_files();
    let names = declared_names(&files);
    for name in ["search_tools", "execute_tools", "connect", "get_auth_url", "execute_tool", "check_authentication"] {
        assert!(names.iter().any(|(n, _)| n == name), "the names were read: {names:?}");
    }
    assert_eq!(names.iter().find(|(n, _)| n == "search_tools").unwrap().1.len(), 2, "both profiles declare it");
    let found = item_violations(&files);
    assert!(found.is_empty(), "a meta-tool's name, data or dispatch outside its own item:\n{}", found.join("\n"));
}

#[test]
fn the_item_check_finds_a_planted_table() {
    let whoami = (
        "src/meta/whoami.rs".to_string(),
        "impl MetaTool for Whoami {\n    const NAME: &'static str = \"whoami\";\n}\n".to_string(),
    );
    let clean = (
        "src/meta/mod.rs".to_string(),
        "pub static META_TOOLS: &[Tool] = &[\n    Tool::of::<whoami::Whoami>(),\n];\n".to_string(),
    );
    assert!(item_violations(&[clean.clone(), whoami.clone()]).is_empty());
    // A dispatch `match` on the name, in the dispatch or in the MCP server.
    for (path, text) in [
        ("src/meta/mod.rs", "match name {\n    \"whoami\" => whoami::run(app).await,\n}\n"),
        ("src/mcp/mod.rs", "if name == \"whoami\" {}\n"),
    ] {
        let found = item_violations(&[(path.to_string(), text.to_string()), whoami.clone()]);
        assert_eq!(found.len(), 1, "{path}: {found:?}");
    }
    // A central table of names and descriptions.
    let table = "pub static META_TOOLS: &[MetaTool] = &[\n    MetaTool {\n        name: \"whoami\",\n        description: \"Who\",\n    },\n];\n";
    assert!(item_violations(&[("src/meta/mod.rs".to_string(), table.to_string()), whoami.clone()]).len() >= 2);
    // A profile list with a hand-built entry.
    let list = "pub static META_TOOLS: &[Tool] = &[\n    Tool::of::<whoami::Whoami>(),\n    Tool { name: NAME },\n];\n";
    assert_eq!(item_violations(&[("src/meta/mod.rs".to_string(), list.to_string()), whoami]).len(), 1);
}

/// The modules in which an answer travels as types: the engine, the meta-tools, the portal, the
/// CLI (`src/cli.rs`, or `src/cli/` once it is split by command group).
const TYPED: &[&str] = &["src/engine/", "src/meta/", "src/portal/", "src/cli.rs", "src/cli/"];
/// The one module there that turns answers into JSON.
const WIRE: &str = "src/meta/wire.rs";
/// Reading or building an answer's JSON (spaces removed before matching).
const ANSWER_JSON: &[&str] = &[
    "[\"results\"]",
    "[\"result\"]",
    "[\"errors\"]",
    "[\"error\"][",
    ".get(\"results\")",
    ".get(\"result\")",
    ".get(\"error\")",
    "json!({\"results\"",
    "json!({\"result\"",
    "json!({\"error\"",
    "json!({\"errors\"",
    "Answer{body",
    "Outcome{body",
];

fn answer_json_violations(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| TYPED.iter().any(|t| p.starts_with(t)) && p != WIRE) {
        for (i, line) in code_of(text).iter().enumerate() {
            let squashed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            for pattern in ANSWER_JSON {
                if squashed.contains(pattern) {
                    found.push(format!("{path}:{}: {pattern}", i + 1));
                }
            }
        }
    }
    found
}

#[test]
fn only_the_wire_module_builds_or_reads_answer_json() {
    let files = src_files();
    assert!(files.iter().any(|(p, t)| p == WIRE && t.contains("\"results\"")));
    let found = answer_json_violations(&files);
    assert!(found.is_empty(), "answer JSON outside {WIRE}:\n{}", found.join("\n"));
}

#[test]
fn the_answer_json_check_finds_planted_parsing() {
    let file = |path: &str, text: &str| vec![(path.to_string(), text.to_string())];
    let reading = "let entry = &out.body[\"results\"][0];\nmatch entry.get(\"error\") {}\n";
    assert_eq!(answer_json_violations(&file("src/cli.rs", reading)).len(), 2);
    assert_eq!(answer_json_violations(&file("src/cli/tools.rs", reading)).len(), 2);
    let building = "Outcome::ok(json!({ \"results\": items }))\n";
    assert_eq!(answer_json_violations(&file("src/engine/mod.rs", building)).len(), 1);
    let message = "body[\"error\"][\"message\"].as_str()\n";
    assert_eq!(answer_json_violations(&file("src/meta/mod.rs", message)).len(), 1);
    // The wire module, the MCP server, comments and unit tests may.
    assert!(answer_json_violations(&file(WIRE, building)).is_empty());
    assert!(answer_json_violations(&file("src/mcp/mod.rs", reading)).is_empty());
    assert!(answer_json_violations(&file("src/cli.rs", "// out.body[\"results\"][0]\n")).is_empty());
    assert!(
        answer_json_violations(&file("src/engine/cap.rs", "#[cfg(test)]\nmod tests { json!({\"results\": []}) }\n"))
            .is_empty()
    );
}

/// Where a serde default is a helper function (`#[serde(default = "ten")]`, alone or beside other
/// keys) instead of the value beside its field (`#[serde_inline_default(10)]`). Unit tests, which
/// may exercise the attribute itself, are skipped.
fn fn_default_violations(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        for (i, line) in code_of(text).iter().enumerate() {
            let line = line.trim();
            if line.starts_with("#[serde(") && line.replace(' ', "").contains("default=\"") {
                found.push(format!("{path}:{}: {line}", i + 1));
            }
        }
    }
    found
}

#[test]
fn serde_defaults_are_written_beside_their_field() {
    let mut files = src_files();
    files.extend(files_under("plugins/src"));
    assert!(
        files.iter().any(|(p, t)| p == "src/meta/search_tools.rs" && t.contains("serde_inline_default(DEFAULT_LIMIT)"))
    );
    let found = fn_default_violations(&files);
    assert!(found.is_empty(), "a serde default as a helper function:\n{}", found.join("\n"));
}

#[test]
fn the_serde_default_check_finds_a_planted_helper() {
    let file = |text: &str| vec![("src/meta/search_tools.rs".to_string(), text.to_string())];
    let planted = "    #[serde(default = \"default_limit\")]\n    pub limit: usize,\n}\nfn default_limit() -> usize {\n    10\n}\n";
    assert_eq!(fn_default_violations(&file(planted)).len(), 1);
    let beside = "    #[serde(rename = \"timeoutSec\", default = \"default_timeout\")]\n";
    assert_eq!(fn_default_violations(&file(beside)).len(), 1);
    // The value beside the field, a plain `default`, comments and unit tests pass.
    assert!(fn_default_violations(&file("    #[serde_inline_default(10)]\n    pub limit: usize,\n")).is_empty());
    assert!(fn_default_violations(&file("    #[serde(default)]\n    pub all: bool,\n")).is_empty());
    assert!(fn_default_violations(&file("// #[serde(default = \"ten\")]\n")).is_empty());
    assert!(fn_default_violations(&file("#[cfg(test)]\nmod tests {\n    #[serde(default = \"ten\")]\n}\n")).is_empty());
}
