//! Tidy checks that guard invariants by reading the source: the top-level modules of `src/` form
//! no cycle, only `src/mcp/` (the server side and, in `src/mcp/client.rs`, the client side to
//! upstream MCP servers) imports rmcp, every
//! Rust file opens with a `//!` doc, plugins import no I/O crate, no comment points outside
//! the repository (a rule a comment relies on is written down in the repository itself), no test
//! reads outside it, and
//! every relative link in README.md, ARCHITECTURE.md and docs/*.md resolves (file and heading).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
        .filter(|(p, _)| !p.starts_with("src/mcp/"))
        .filter(|(_, t)| split(t).0.iter().any(|l| l.contains("rmcp::") || l.trim_start().starts_with("use rmcp")))
        .map(|(p, _)| p)
        .collect();
    assert!(offenders.is_empty(), "rmcp outside src/mcp/: {offenders:?}");
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
    let mut offenders = Vec::new();
    for (p, t) in files(&["plugins/src"]) {
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
/// its code names as `crate::<module>`, with the file and line of every such reference.
/// The MCP client's file and its node in the module graph.
const MCP_CLIENT_FILE: &str = "src/mcp/client.rs";
const MCP_CLIENT: &str = "mcp::client";

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
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap();
            let shown = p.strip_prefix(root()).unwrap().display().to_string();
            // The MCP client is a node of its own: a leaf under `upstream` that only rmcp's types
            // share a directory with the server side (`only_src_mcp_imports_rmcp`).
            let node = if shown == MCP_CLIENT_FILE { MCP_CLIENT.to_string() } else { module.clone() };
            let edges: &mut std::collections::BTreeMap<String, Vec<String>> = graph.entry(node.clone()).or_default();
            for (i, line) in split(&text).0.iter().enumerate() {
                let mut rest = *line;
                while let Some(at) = rest.find("crate::") {
                    rest = &rest[at + "crate::".len()..];
                    let mut target: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
                    if rest.starts_with(MCP_CLIENT) {
                        target = MCP_CLIENT.to_string();
                    }
                    if target != node && (modules.contains_key(&target) || target == MCP_CLIENT) {
                        edges.entry(target).or_default().push(format!("{shown}:{}", i + 1));
                    }
                }
                // `super::` from the client reaches the server side of `mcp`.
                if node == MCP_CLIENT && line.contains("super::") {
                    edges.entry("mcp".to_string()).or_default().push(format!("{shown}:{}", i + 1));
                }
            }
        }
    }
    graph
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
    assert!(graph["upstream"].contains_key(MCP_CLIENT), "upstream drives the MCP client");
    assert!(graph[MCP_CLIENT].is_empty(), "the MCP client is a leaf: {:?}", graph[MCP_CLIENT]);
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
