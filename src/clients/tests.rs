//! Tests of client config editing: textual round trips over many file shapes, refusals, and the
//! file side (backups, atomic writes, private new files, symlinks).

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
        format!("{{\"a\":1,\"mcpServers\":{{\"b\":{{\"command\":\"b\"}},\"workbench\":{{\"command\":\"{CMD}\"}}}}}}")
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
        (Client::ClaudeDesktop, include_str!("../../examples/config/claude_desktop_config.json")),
        (Client::Cursor, include_str!("../../examples/config/cursor-mcp.json")),
        (Client::ClaudeCode, include_str!("../../examples/config/claude-code.json")),
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
