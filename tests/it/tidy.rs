//! Tidy checks that guard invariants by reading the source: the top-level modules of `src/` form
//! no cycle (grouped imports read too), only `src/mcp/` (the server side) and
//! `src/mcp_client.rs` (the client side to upstream MCP servers) import rmcp, every Rust file opens with a `//!` doc, plugins import no I/O crate, no comment points outside
//! the repository (a rule a comment relies on is written down in the repository itself), no test
//! reads outside it, no source file under `src/` or `plugins/src/` is over 1,000 lines, and
//! every relative link in README.md, ARCHITECTURE.md and docs/*.md resolves (file and heading).

use std::path::{Path, PathBuf};

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn files(dirs: &[&str]) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for d in dirs {
        rust_files(&root().join(d), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(root()).unwrap().display().to_string(), text)
        })
        .collect()
}

/// The code of a file without its comments' text (for import checks) and its comments alone.
fn split(text: &str) -> (Vec<&str>, Vec<&str>) {
    let mut code = Vec::new();
    let mut comments = Vec::new();
    for line in text.lines() {
        match line.find("//") {
            Some(i) if !line[..i].contains('"') => {
                code.push(&line[..i]);
                comments.push(&line[i..]);
            }
            _ => code.push(line),
        }
    }
    (code, comments)
}

#[test]
fn only_src_mcp_imports_rmcp() {
    let offenders: Vec<String> = files(&["src"])
        .into_iter()
        .filter(|(p, _)| !p.starts_with("src/mcp/") && p != "src/mcp_client.rs" && !p.starts_with("src/mcp_client/"))
        .filter(|(_, t)| split(t).0.iter().any(|l| l.contains("rmcp::") || l.trim_start().starts_with("use rmcp")))
        .map(|(p, _)| p)
        .collect();
    assert!(offenders.is_empty(), "rmcp outside src/mcp/ and src/mcp_client(.rs, /): {offenders:?}");
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing: Vec<String> = files(&["src", "plugins/src", "tests", "benches", "examples"])
        .into_iter()
        .filter(|(_, t)| !t.trim_start().starts_with("//!"))
        .map(|(p, _)| p)
        .collect();
    assert!(missing.is_empty(), "files without a //! doc: {missing:?}");
}

#[test]
fn plugins_import_no_io_crate() {
    // The one exception: the tests' rewrite of the committed schema table, compiled only in tests.
    let exempt = "plugins/src/schema_file.rs";
    let lib = std::fs::read_to_string(root().join("plugins/src/lib.rs")).unwrap();
    assert!(lib.contains("#[cfg(test)]\nmod schema_file;"), "{exempt} is a test-only module");
    let mut offenders = Vec::new();
    for (p, t) in files(&["plugins/src"]).into_iter().filter(|(p, _)| p != exempt) {
        for line in split(&t).0 {
            for banned in ["tokio", "reqwest", "std::fs", "std::net", "std::process", "hyper"] {
                if line.contains(&format!("{banned}::")) || line.contains(&format!("use {banned}")) {
                    offenders.push(format!("{p}: {}", line.trim()));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "I/O in plugins (use Upstream): {offenders:?}");
    let manifest = std::fs::read_to_string(root().join("plugins/Cargo.toml")).unwrap();
    for banned in ["tokio", "reqwest", "hyper", "axum"] {
        assert!(
            !manifest.lines().any(|l| l.trim_start().starts_with(banned)),
            "plugins/Cargo.toml depends on {banned}"
        );
    }
}

#[test]
fn no_comment_points_outside_the_repository() {
    let outside = ["../shared", "shared/spec", "shared/seeds", "the seed", "seed's", "catalogue §", "mcp-harness"];
    let mut offenders = Vec::new();
    for (p, t) in files(&["src", "plugins/src", "tests", "benches", "examples"]) {
        for c in split(&t).1 {
            if outside.iter().any(|o| c.contains(o)) {
                offenders.push(format!("{p}: {}", c.trim()));
            }
        }
    }
    for dir in ["scripts", "tests/clients", "tests/python"] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if !p.is_file() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else { continue };
            for line in text.lines().filter(|l| l.trim_start().starts_with('#')) {
                if outside.iter().any(|o| line.contains(o)) {
                    offenders.push(format!("{}: {}", p.display(), line.trim()));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "comments pointing outside the repository: {offenders:#?}");
}

/// The modules a file's code names through `crate::` paths, each with the (1-based) line of the
/// reference: `crate::a::b`, and every member of a grouped import, `use crate::{a, b::{c, d}}`
/// naming `a` and `b` (a group may span lines). Comments are not read.
fn crate_paths(text: &str) -> Vec<(String, usize)> {
    let code: Vec<&str> = split(text).0;
    let joined = code.join("\n");
    let line_of = |at: usize| joined[..at].matches('\n').count() + 1;
    let word = |from: usize| -> String {
        joined[from..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
    };
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = joined[from..].find("crate::") {
        let at = from + found + "crate::".len();
        from = at;
        if !joined[at..].starts_with('{') {
            out.push((word(at), line_of(at)));
            continue;
        }
        // A group: the first name of each member at the group's own depth.
        let mut depth = 0usize;
        let mut expect = true;
        for (i, c) in joined[at..].char_indices() {
            match c {
                '{' => {
                    depth += 1;
                    if depth == 1 {
                        expect = true;
                    }
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => expect = true,
                c if depth == 1 && expect && (c.is_ascii_alphanumeric() || c == '_') => {
                    out.push((word(at + i), line_of(at + i)));
                    expect = false;
                }
                _ => {}
            }
        }
    }
    out
}

/// No test reads outside the repository: test data lives in the checkout (`tests/it/data`, the
/// snapshots, files the test writes into its own temporary folder). Test code names no shared
/// folder beside the checkout, no absolute machine path, no home directory, and every relative
/// path literal (`"../x"`, resolved from the file's folder, or from the checkout for a
/// `.join("../x")`) stays inside the checkout. Tool dependencies under `.deps/` are programs the
/// tests run, not data they read.
#[test]
fn no_test_reads_outside_the_repository() {
    let mut offenders = Vec::new();
    let normalised = |p: &Path| -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    for (p, t) in files(&["src", "plugins/src", "tests", "benches", "examples"]) {
        if p == "tests/it/tidy.rs" {
            continue; // names the banned spellings
        }
        let test_code = p.starts_with("tests/") || p.starts_with("benches/") || p.starts_with("examples/");
        let folder = root().join(&p).parent().unwrap().to_path_buf();
        for line in split(&t).0 {
            for banned in ["../shared", "\"/work/", "\"/home/", "\"/root/", "\"/Users/"] {
                if line.contains(banned) && (test_code || !banned.starts_with("\"/")) {
                    offenders.push(format!("{p}: {}", line.trim()));
                }
            }
            if test_code {
                for banned in ["var(\"HOME\")", "env!(\"HOME\")", "home_dir(", "BaseDirs", "dirs::"] {
                    if line.contains(banned) {
                        offenders.push(format!("{p}: {}", line.trim()));
                    }
                }
                for (i, _) in line.match_indices("\"../") {
                    let literal = line[i + 1..].split('"').next().unwrap_or("");
                    let base = if line[..i].trim_end().ends_with("join(") { root() } else { folder.clone() };
                    if !normalised(&base.join(literal)).starts_with(root()) {
                        offenders.push(format!("{p}: {}", line.trim()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "tests reading outside the repository: {offenders:#?}");
}

/// The top-level modules of `src/` (lib.rs and main.rs aside) and, for each, the other modules
/// its code names through `crate::` paths ([`crate_paths`]), with the file and line of every
/// such reference.
fn module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>> {
    let src = root().join("src");
    let mut modules = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let module = name.strip_suffix(".rs").unwrap_or(&name).to_string();
        if module != "lib" && module != "main" && (e.path().is_dir() || name.ends_with(".rs")) {
            modules.insert(module, e.path());
        }
    }
    let mut graph = std::collections::BTreeMap::new();
    for (module, path) in &modules {
        let mut paths = Vec::new();
        if path.is_dir() {
            rust_files(path, &mut paths);
        } else {
            paths.push(path.clone());
        }
        paths.sort();
        let edges: &mut std::collections::BTreeMap<String, Vec<String>> = graph.entry(module.clone()).or_default();
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap();
            let shown = p.strip_prefix(root()).unwrap().display().to_string();
            // The handle's state fields are typed by the modules above `app` (their state); they
            // are what `app` holds, not what it calls (see `app_state_is_named_fields`).
            let held = if shown == APP_FILE { state_block(&text) } else { 0..0 };
            for (target, line) in crate_paths(&text) {
                if held.contains(&line) {
                    continue;
                }
                if &target != module && modules.contains_key(&target) {
                    edges.entry(target).or_default().push(format!("{shown}:{line}"));
                }
            }
        }
    }
    graph
}

/// One vault resolution: outside `src/secrets/`, no code reads a vault value with the lookup that
/// registers nothing (`resolve_for_hosts`), and the three places that resolve refs (the engine,
/// custom apps, upstream servers) call `vault.resolve`, which registers every value with the
/// process's exposed-secret set (behaviour: `tests/it/vault_resolution.rs`).
#[test]
fn vault_values_are_resolved_in_one_place() {
    let mut offenders = Vec::new();
    let mut callers = std::collections::BTreeSet::new();
    for (p, t) in files(&["src"]) {
        let code = split(&t).0.join("\n");
        if !p.starts_with("src/secrets/") && code.contains("resolve_for_hosts") {
            offenders.push(p.clone());
        }
        if code.contains("vault.resolve(") {
            callers.insert(p.split('/').nth(1).unwrap_or_default().trim_end_matches(".rs").to_string());
        }
    }
    assert!(offenders.is_empty(), "vault values read outside Vault::resolve: {offenders:?}");
    for module in ["engine", "custom", "upstream"] {
        assert!(callers.contains(module), "{module} resolves vault refs through Vault::resolve: {callers:?}");
    }
}

/// The handle's file, whose [`state_block`] holds the modules' state.
const APP_FILE: &str = "src/app.rs";

/// The (1-based, end-exclusive) lines of `pub struct State { .. }` in a file: the named state
/// fields, one per module (`0..0` when there is none).
fn state_block(text: &str) -> std::ops::Range<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_start().starts_with("pub struct State {")) else { return 0..0 };
    let end = lines[start..].iter().position(|l| l.trim_end() == "}").map_or(lines.len(), |n| start + n);
    start + 1..end + 2
}

/// Issue 25 item 4: module state is named, not looked up by type. `App` holds no map keyed by
/// `TypeId` (no module can create another's state on first touch), its `State` is one field per
/// module, typed by the module that owns it, and that block is only field declarations (so the
/// cycle check may read it as what `app` holds rather than what it calls); nothing but the
/// composition root builds it.
#[test]
fn app_state_is_named_fields() {
    let text = std::fs::read_to_string(root().join(APP_FILE)).unwrap();
    let problems = state_violations(&text, &files(&["src"]));
    assert!(problems.is_empty(), "{problems:#?}");
}

/// What [`app_state_is_named_fields`] reports for `src/app.rs`'s text and the source files.
fn state_violations(text: &str, sources: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let code = split(text).0.join("\n");
    for banned in ["TypeId", "dyn Any", "downcast"] {
        if code.contains(banned) {
            problems.push(format!("src/app.rs keeps state by type ({banned})"));
        }
    }
    let block = state_block(text);
    if block.len() <= 5 {
        problems.push("src/app.rs has no `pub struct State` of named fields".to_string());
        return problems;
    }
    let lines: Vec<&str> = split(text).0;
    let mut fields = 0;
    for n in block.start + 1..block.end - 1 {
        let line = lines[n - 1].trim();
        if line.is_empty() {
            continue;
        }
        let field = line.strip_prefix("pub ").and_then(|l| l.split_once(": ")).filter(|(name, ty)| {
            name.chars().all(|c| c.is_ascii_lowercase() || c == '_') && ty.ends_with(',') && !ty.contains('(')
        });
        if field.is_none() {
            problems.push(format!("src/app.rs:{n}: only `pub name: Type,` fields in State: {line}"));
        }
        fields += 1;
    }
    if fields < 10 {
        problems.push(format!("one field per module's state ({fields})"));
    }
    // A `State { .. }` literal (not `FlowState {`, not the declaration) outside the root.
    let builds = |l: &str| {
        l.match_indices("State {").any(|(i, _)| {
            let before = l[..i].trim_end();
            !l[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') && !before.ends_with("struct")
        })
    };
    for (p, t) in sources {
        if p != "src/start.rs" && split(t).0.iter().any(|l| builds(l)) {
            problems.push(format!("only src/start.rs builds the state, not {p}"));
        }
    }
    problems
}

/// The state check fails on each regression it guards: a type-keyed map back in `App`, a field
/// that is not a plain named one, and a module building the state outside the composition root.
#[test]
fn the_state_check_finds_planted_regressions() {
    let text = std::fs::read_to_string(root().join(APP_FILE)).unwrap();
    let sources = files(&["src"]);
    assert!(state_violations(&text, &sources).is_empty());
    let typed =
        text.replacen("pub struct State {", "pub struct State {\n    pub any: HashMap<TypeId, Box<dyn Any>>,", 1);
    let found = state_violations(&typed, &sources);
    assert!(found.iter().any(|p| p.contains("TypeId")), "{found:?}");
    let unnamed = text.replacen("pub struct State {", "pub struct State {\n    extras: Vec<Box<dyn Fn()>>,", 1);
    let found = state_violations(&unnamed, &sources);
    assert!(found.iter().any(|p| p.contains("only `pub name: Type,` fields")), "{found:?}");
    let mut planted = sources.clone();
    planted.push(("src/engine/sneaky.rs".into(), "fn f(search: Search) -> State {\n    State { search }\n}\n".into()));
    let found = state_violations(&text, &planted);
    assert_eq!(found, vec!["only src/start.rs builds the state, not src/engine/sneaky.rs".to_string()]);
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>,
) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>>,
        index: std::collections::HashMap<&'a str, usize>,
        low: std::collections::HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            for w in self.graph[v].keys() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut walk =
        Walk { graph, index: Default::default(), low: Default::default(), stack: Vec::new(), out: Vec::new() };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.out
}

/// The layering ARCHITECTURE.md describes: no top-level module of `src/` reaches, through
/// `crate::` paths, a module that reaches it back. A failure prints every edge inside each cycle
/// with the file and line that makes it.
#[test]
fn src_module_graph_has_no_cycles() {
    let graph = module_graph();
    assert!(graph.len() > 20, "the module list was read: {:?}", graph.keys());
    assert!(graph["engine"].contains_key("registry"), "edges are read (engine names the registry)");
    assert!(graph["upstream"].contains_key("mcp_client"), "upstream drives the MCP client");
    assert!(graph["engine"].contains_key("scrub"), "grouped imports are read (engine names scrub in a group)");
    assert!(!graph["mcp_client"].contains_key("mcp"), "the MCP client names no server side");
    let found = cycles(&graph);
    let mut report = String::new();
    for component in &found {
        report.push_str(&format!("cycle among {component:?}:\n"));
        for a in component {
            for (b, places) in &graph[a] {
                if component.contains(b) {
                    report.push_str(&format!("  {a} -> {b} ({}x): {}\n", places.len(), places.join(", ")));
                }
            }
        }
    }
    assert!(found.is_empty(), "the module graph of src/ has cycles:\n{report}");
}

/// The cycle finder itself: a planted two-module cycle is found, a chain is not.
#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let edge = |to: &str| (to.to_string(), vec!["x.rs:1".to_string()]);
    let mut graph = std::collections::BTreeMap::new();
    graph.insert("a".to_string(), [edge("b")].into_iter().collect());
    graph.insert("b".to_string(), [edge("c")].into_iter().collect());
    graph.insert("c".to_string(), std::collections::BTreeMap::new());
    assert!(cycles(&graph).is_empty());
    graph.get_mut("c").unwrap().insert("a".to_string(), vec!["c.rs:9".to_string()]);
    assert_eq!(cycles(&graph), vec![vec!["a".to_string(), "b".to_string(), "c".to_string()]]);
}

/// The path reader: plain paths, grouped imports (nested, over several lines) and no comments.
#[test]
fn crate_paths_reads_grouped_imports() {
    let text = "use crate::app::App;\nuse crate::{scrub, template::{self, Kept},\n    net::{Guard}};\n// crate::storage\nlet x = crate::ids::random_hex(4);\n";
    let found: Vec<(String, usize)> = crate_paths(text);
    let names: Vec<(&str, usize)> = found.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    assert_eq!(names, [("app", 1), ("scrub", 2), ("template", 2), ("net", 3), ("ids", 5)]);
}

/// The Markdown files whose links are checked: README.md, ARCHITECTURE.md and docs/*.md.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Every `[text](target)` of a Markdown text outside code blocks and code spans.
fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans, so `[a](b)` written as code is not a link.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            links.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    links
}

/// GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`.
fn heading_anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim().to_lowercase();
        let slug: String = title
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        out.push(slug);
    }
    out
}

/// Issue 29: the README was split into docs/; no link between the pages may dangle.
#[test]
fn every_relative_markdown_link_resolves() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(root()).unwrap().display().to_string();
        for link in markdown_links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            if !target.exists() {
                broken.push(format!("{shown}: {link} (no {})", target.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && target.extension().is_some_and(|x| x == "md")
                && !heading_anchors(&std::fs::read_to_string(&target).unwrap()).iter().any(|a| a == anchor)
            {
                broken.push(format!("{shown}: {link} (no heading #{anchor})"));
            }
        }
    }
    assert!(broken.is_empty(), "links that do not resolve:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_finds_a_planted_broken_link() {
    let links = markdown_links("see [a](docs/nowhere.md) and `[b](c)`\n```\n[d](e)\n```\n[f](g.md#h)");
    assert_eq!(links, ["docs/nowhere.md", "g.md#h"]);
    assert_eq!(
        heading_anchors("# Vault `allowed_hosts`\n## Fetching public URLs: `http_send_request`"),
        ["vault-allowed_hosts", "fetching-public-urls-http_send_request"]
    );
}

/// The longest a Rust source file under `src/` or `plugins/src/` may be: a file longer than this
/// holds more than one thing and is split along its seams (tests under `tests/` are exempt).
const MAX_LINES: usize = 1_000;

/// The files of `files` (path, text) longer than `MAX_LINES`, each as "path (lines)".
fn too_long(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(_, t)| t.lines().count() > MAX_LINES)
        .map(|(p, t)| format!("{p} ({} lines)", t.lines().count()))
        .collect()
}

#[test]
fn no_source_file_is_over_a_thousand_lines() {
    let files = files(&["src", "plugins/src"]);
    assert!(files.iter().any(|(p, _)| p == "src/main.rs"), "the sources were read");
    let offenders = too_long(&files);
    assert!(offenders.is_empty(), "files over {MAX_LINES} lines (split them along their seams): {offenders:?}");
}

/// The length rule can fail: a planted 1,001-line file is reported by name, a 1,000-line one is not.
#[test]
fn the_length_rule_reports_a_planted_long_file() {
    let lines = |n: usize| "let x = 1;\n".repeat(n);
    let files = vec![("src/ok.rs".to_string(), lines(1_000)), ("src/long.rs".to_string(), lines(1_001))];
    assert_eq!(too_long(&files), ["src/long.rs (1001 lines)"]);
}
