//! Tidy checks that guard invariants by reading the source: only `src/mcp/` (the server side and,
//! in `src/mcp/client.rs`, the client side to upstream MCP servers) imports rmcp, every
//! Rust file opens with a `//!` doc, plugins import no I/O crate, and no comment points outside
//! the repository (a rule a comment relies on is written down in the repository itself).

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
