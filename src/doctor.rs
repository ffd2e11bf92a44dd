//! `workbench doctor`: checks what workbench needs on this machine and says how to fix each
//! failure. Every check is independent: one failing never hides the others.
//!
//! Levels: OK; WARN (works, but worth a look); FAIL (something will not work); SKIP (does not
//! apply here, e.g. a client that is not installed). The exit status is 1 when any check FAILs,
//! else 0.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::clients::{self, Client, Locations};
use crate::config::{ConfigError, Settings, StoreKind};
use crate::secrets::SecretStore;

/// How long the secret store may take to answer the probe.
pub const STORE_DEADLINE: Duration = crate::secrets::PROBE_DEADLINE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ok,
    Warn,
    Fail,
    Skip,
}

impl Level {
    pub fn label(self) -> &'static str {
        match self {
            Level::Ok => "OK",
            Level::Warn => "WARN",
            Level::Fail => "FAIL",
            Level::Skip => "SKIP",
        }
    }
}

/// One line of the report, with the fix for anything not OK.
#[derive(Debug, Clone)]
pub struct Check {
    pub level: Level,
    pub name: String,
    pub detail: String,
    pub fix: Option<String>,
}

fn check(level: Level, name: &str, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check { level, name: name.to_string(), detail: detail.into(), fix }
}

/// Runs every check. `settings` is what `Settings::from_env` gave (an error is itself reported);
/// `store` is the secret store to probe (the one the app would use); `locations` where client
/// configs live (None when there is no home directory); `shell_vars` the environment doctor runs
/// in (to tell what a client-launched server, which has only its entry's env, does not see).
pub fn run(
    settings: &Result<Settings, ConfigError>,
    store: Option<Arc<dyn SecretStore>>,
    locations: Option<&Locations>,
    shell_vars: &std::collections::HashMap<String, String>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    // The shell's own store, asked once; reused for clients whose servers would see the same.
    let shell_probe = match (&store, settings) {
        (Some(st), Ok(s)) if s.secret_store != StoreKind::Memory => crate::secrets::probe(st.clone(), STORE_DEADLINE),
        _ => Ok(()),
    };
    match settings {
        Err(e) => checks.push(check(
            Level::Fail,
            "settings",
            e.to_string(),
            Some("correct the value named (in <WORKBENCH_HOME>/config.json or the environment); the checks that need settings were skipped".into()),
        )),
        Ok(s) => {
            checks.push(data_dir(&s.home));
            checks.push(database(&s.database_path()));
            if let Some(store) = &store {
                checks.push(secret_store(s, &store.describe(), &shell_probe));
            }
            checks.push(port(s.listener_port));
            checks.push(policies(s));
        }
    }
    match locations {
        Some(loc) => {
            for c in Client::ALL {
                checks.push(client(loc, c));
                if let (Ok(s), Some(_)) = (settings, &store)
                    && let Some(launched) = client_server(loc, c, s, shell_vars, &shell_probe)
                {
                    checks.push(launched);
                }
            }
        }
        None => checks.push(check(
            Level::Warn,
            "clients",
            "no home directory (HOME is not set), so client configs cannot be found",
            Some("set HOME".into()),
        )),
    }
    checks
}

/// The upstream MCP servers: tool names that clash (nobody gets them) and tools waiting for the
/// user's review. `None` when no server is configured. Starts nothing.
pub fn upstream_servers(app: &crate::app::App) -> Option<Check> {
    if app.upstream().configs().is_empty() {
        return None;
    }
    let registry = app.registry();
    let mut problems: Vec<String> = registry.upstream_collisions().iter().map(|c| c.describe()).collect();
    let pending = app.upstream().pending(&app.storage);
    for (server, changes) in pending.iter() {
        let tools: Vec<String> = changes.iter().map(|c| format!("{} ({})", c.tool, c.describe())).collect();
        problems.push(format!("server '{server}' has tools waiting for review: {}", tools.join(", ")));
    }
    Some(if problems.is_empty() {
        check(Level::Ok, "mcp servers", "no tool name clashes, no changed tools waiting", None)
    } else {
        check(
            Level::Warn,
            "mcp servers",
            problems.join("; "),
            Some(
                "`workbench servers review` shows the changes and accepts them; rename a server to end a name clash"
                    .into(),
            ),
        )
    })
}

/// Prints the report; returns the exit status (1 when anything FAILed).
pub fn print(checks: &[Check], out: &mut dyn std::io::Write) -> u8 {
    let width = checks.iter().map(|c| c.name.chars().count()).max().unwrap_or(0);
    for c in checks {
        let _ = writeln!(out, "{:<5} {:<width$}  {}", c.level.label(), c.name, c.detail);
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "{:<5} {:<width$}  fix: {fix}", "", "");
        }
    }
    let count = |l: Level| checks.iter().filter(|c| c.level == l).count();
    let (fails, warns) = (count(Level::Fail), count(Level::Warn));
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let _ = writeln!(
        out,
        "\n{}, {}, {} OK",
        plural(fails, "failure", "failures"),
        plural(warns, "warning", "warnings"),
        count(Level::Ok)
    );
    if fails > 0 { 1 } else { 0 }
}

/// Every safety policy and request budget the user set parses. A bad one fails closed (that
/// integration's writes, or all its requests for a budget, are refused), so it is a FAIL.
fn policies(settings: &Settings) -> Check {
    let bad = settings.bad_settings();
    if bad.is_empty() {
        let n = settings.policies.len() + settings.rate_limits.len();
        return check(
            Level::Ok,
            "policies",
            format!("{n} policy and rate-limit setting(s) valid; {}", flow_guard(settings)),
            None,
        );
    }
    let list = bad.iter().map(|b| b.to_string()).collect::<Vec<_>>().join("; ");
    check(
        Level::Fail,
        "policies",
        format!(
            "{list}; until fixed, the integrations they name refuse writes (policies) or every request (budgets), and a bad WORKBENCH_FLOW holds every outside write; {}",
            flow_guard(settings)
        ),
        Some("correct the value in the environment workbench starts with (or config.json's policy)".into()),
    )
}

/// The outbound-data guard's setting and the user's trusted list, for the policies line (a bad
/// mode is one of the bad settings: every outside write is held as `strict` until it is fixed).
fn flow_guard(settings: &Settings) -> String {
    let flow = &settings.flow;
    let trusted = if flow.trusted.is_empty() {
        "no trusted addresses, domains or origins".to_string()
    } else {
        format!("trusted: {}", flow.trusted.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "))
    };
    let servers = match (flow.own_servers.is_empty(), flow.public_servers.is_empty()) {
        (true, true) => String::new(),
        _ => format!(
            "; own servers: [{}]; public servers: [{}]",
            flow.own_servers.join(", "),
            flow.public_servers.join(", ")
        ),
    };
    format!("flow guard: {} ({trusted}{servers})", flow.mode().as_str())
}

/// The data directory exists (created if missing), is a writable directory, and only its owner
/// can read it.
fn data_dir(home: &Path) -> Check {
    const NAME: &str = "data directory";
    let shown = home.display();
    let mut created = false;
    if !home.exists() {
        if let Err(e) = std::fs::create_dir_all(home) {
            return check(
                Level::Fail,
                NAME,
                format!("{shown} does not exist and cannot be created: {e}"),
                Some("create it yourself, or set WORKBENCH_HOME to a directory you own".into()),
            );
        }
        set_mode(home, 0o700);
        created = true;
    }
    if !home.is_dir() {
        return check(
            Level::Fail,
            NAME,
            format!("{shown} is not a directory"),
            Some("move that file away, or set WORKBENCH_HOME to a directory".into()),
        );
    }
    let probe = home.join(format!(".doctor-probe-{}", std::process::id()));
    if let Err(e) = std::fs::write(&probe, b"probe") {
        return check(
            Level::Fail,
            NAME,
            format!("{shown} is not writable: {e}"),
            Some(format!("chmod u+rwx '{shown}' (or set WORKBENCH_HOME to a directory you own)")),
        );
    }
    let _ = std::fs::remove_file(&probe);
    let created = if created { ", created now" } else { "" };
    match mode(home) {
        Some(m) if m & 0o077 != 0 => check(
            Level::Warn,
            NAME,
            format!("{shown} is writable but has mode {m:04o}: other users can list it{created}"),
            Some(format!("chmod 700 '{shown}'")),
        ),
        Some(m) => check(Level::Ok, NAME, format!("{shown} (mode {m:04o}, writable{created})"), None),
        None => check(Level::Ok, NAME, format!("{shown} (writable{created})"), None),
    }
}

/// The database opens (which applies migrations), passes `PRAGMA quick_check`, and is private.
fn database(path: &Path) -> Check {
    const NAME: &str = "database";
    let storage = crate::storage::Storage::new(path.to_path_buf());
    let result = storage.call_blocking(|c| {
        let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let quick: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        Ok((version, quick))
    });
    let shown = path.display();
    match result {
        Err(e) => check(
            Level::Fail,
            NAME,
            e.to_string(),
            Some(format!(
                "if another program holds it, close that program; if the file is damaged, move it aside (mv '{shown}' '{shown}.broken') and workbench starts a fresh one (connections are then made again)"
            )),
        ),
        Ok((_, quick)) if quick != "ok" => check(
            Level::Fail,
            NAME,
            format!("{shown}: PRAGMA quick_check says: {quick}"),
            Some(format!(
                "the file is damaged: move it aside (mv '{shown}' '{shown}.broken'); workbench starts a fresh one (the audit log starts over, connections are made again)"
            )),
        ),
        Ok((version, _)) => match mode(path) {
            Some(m) if m & 0o077 != 0 => check(
                Level::Warn,
                NAME,
                format!("{shown} opens (schema version {version}, quick_check ok) but has mode {m:04o}"),
                Some(format!("chmod 600 '{shown}'")),
            ),
            _ => check(Level::Ok, NAME, format!("{shown} (schema version {version}, quick_check ok)"), None),
        },
    }
}

/// What protects secrets in the encrypted file store opened by a key file, and what does not:
/// the words doctor, setup and the docs use.
pub const KEY_FILE_PROTECTS: &str = "other users of this machine (the key file is mode 0600) and a copy of secrets.enc alone, \
such as a backup or a synced folder (it is sealed with XChaCha20-Poly1305)";
/// The other half of [`KEY_FILE_PROTECTS`].
pub const KEY_FILE_DOES_NOT_PROTECT: &str = "anything running as you or as root (another MCP server, an agent with a shell), \
which can read the key file, nor a backup holding both files";

/// The fixes when the OS keychain does not answer.
const FIX_KEYCHAIN: &str = "run `workbench setup` to use the encrypted file store with a key file (recorded in config.json, so the servers your clients launch need no environment); \
or start and unlock a keychain (on Linux the Secret Service: gnome-keyring or KeePassXC in a desktop session); \
or give credentials as WORKBENCH_<INTEGRATION>_<FIELD> environment variables";
const FIX_FILE: &str = "run `workbench setup` (a key file in config.json), or set WORKBENCH_VAULT_PASSPHRASE, or WORKBENCH_VAULT_PASSPHRASE_COMMAND (a command that prints it) \
in the environment workbench starts with (for a client: the \"env\" of its \"workbench\" entry); if the passphrase or key is lost, move secrets.enc aside and connect again";

/// The secret-store line: which store, where, what opens it, and whether it answers a probe
/// (a read of a key that does not exist, with a deadline).
fn secret_store(settings: &Settings, described: &str, answer: &Result<(), String>) -> Check {
    const NAME: &str = "secret store";
    let kind = settings.secret_store;
    if kind == StoreKind::Memory {
        return check(
            Level::Warn,
            NAME,
            "memory: connections and vault secrets last only as long as one workbench process",
            Some(
                "for lasting connections unset WORKBENCH_SECRET_STORE (the OS keychain) or run `workbench setup`"
                    .into(),
            ),
        );
    }
    match answer {
        Ok(()) => store_ok(settings, described),
        Err(reason) => check(
            Level::Fail,
            NAME,
            format!("{described}: {reason}"),
            Some(if kind == StoreKind::File { FIX_FILE } else { FIX_KEYCHAIN }.into()),
        ),
    }
}

/// A store that answered: OK, except a key file on disk, which is a WARN saying exactly what it
/// protects and what it does not.
fn store_ok(settings: &Settings, described: &str) -> Check {
    const NAME: &str = "secret store";
    let key_file = settings.secret_store == StoreKind::File
        && !settings.credential_env.contains_key("WORKBENCH_VAULT_PASSPHRASE")
        && !settings.credential_env.contains_key("WORKBENCH_VAULT_PASSPHRASE_COMMAND")
        && settings.vault_key_file.is_some();
    if key_file {
        return check(
            Level::Warn,
            NAME,
            format!(
                "{described}, answers. It protects against {KEY_FILE_PROTECTS}; not against {KEY_FILE_DOES_NOT_PROTECT}"
            ),
            Some("nothing to do if that is acceptable here; to keep the key off the disk, use an OS keychain, or WORKBENCH_VAULT_PASSPHRASE_COMMAND (e.g. `pass show workbench`) in each client's \"env\"".into()),
        );
    }
    check(Level::Ok, NAME, format!("{described} answers"), None)
}

/// The variables that choose the data directory and the secret store: when the shell has one the
/// client's entry lacks, the server the client launches does not see it.
const STORE_VARS: [&str; 4] =
    ["WORKBENCH_HOME", "WORKBENCH_SECRET_STORE", "WORKBENCH_VAULT_PASSPHRASE", "WORKBENCH_VAULT_PASSPHRASE_COMMAND"];

/// What the server a client launches will see: the settings built from the client entry's `env`
/// (plus HOME, which every client passes), its secret store, and whether that store answers.
/// `shell` is this process's settings and `shell_probe` its store's answer (reused when the
/// client's store is the same, so a hanging keychain is not asked twice). None when the client
/// has no workbench entry (the registration line says so).
pub fn client_server(
    loc: &Locations,
    c: Client,
    shell: &Settings,
    shell_vars: &std::collections::HashMap<String, String>,
    shell_probe: &Result<(), String>,
) -> Option<Check> {
    let text = std::fs::read_to_string(loc.config_path(c)).ok()?;
    let entry = clients::inspect(&text).ok()??;
    entry.get("command").and_then(|v| v.as_str())?;
    let name = format!("{} launches", c.display());
    let env: std::collections::HashMap<String, String> = entry
        .get("env")
        .and_then(|e| e.as_object())
        .map(|o| o.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default();
    let mut vars = env.clone();
    if let Some(home) = shell_vars.get("HOME") {
        vars.entry("HOME".into()).or_insert_with(|| home.clone());
    }
    let settings = match Settings::load(&vars) {
        Ok(s) => s,
        Err(e) => {
            return Some(check(
                Level::Fail,
                &name,
                format!("a server started with this entry's env cannot read its settings: {e}"),
                Some("correct the value named".into()),
            ));
        }
    };
    let missing: Vec<&str> =
        STORE_VARS.iter().copied().filter(|v| shell_vars.contains_key(*v) && !env.contains_key(*v)).collect();
    let env_note = if env.is_empty() {
        "no env in its entry".to_string()
    } else {
        format!("env {}", {
            let mut keys: Vec<&String> = env.keys().collect();
            keys.sort();
            keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
        })
    };
    let store = crate::app::secret_store(&settings);
    let described = store.describe();
    let same = settings.home == shell.home
        && settings.secret_store == shell.secret_store
        && settings.vault_key_file == shell.vault_key_file
        && missing.is_empty();
    let probe = if settings.secret_store == StoreKind::Memory {
        Ok(())
    } else if same {
        shell_probe.clone()
    } else {
        crate::secrets::probe(store, STORE_DEADLINE)
    };
    let missing_note = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "; this shell sets {} but the entry's env does not, so that server does not see them",
            missing.join(", ")
        )
    };
    let example = format!(
        "run `workbench setup` (it records the store in config.json, so no env is needed), or add the variables to the entry in {}: \"workbench\": {{\"command\": \"...\", \"env\": {{\"WORKBENCH_SECRET_STORE\": \"file\", \"WORKBENCH_VAULT_PASSPHRASE_COMMAND\": \"pass show workbench\"}}}}",
        loc.config_path(c).display()
    );
    Some(match probe {
        Err(reason) => check(
            Level::Fail,
            &name,
            format!("a server with {env_note} uses {described}, which fails: {reason}{missing_note}"),
            Some(example),
        ),
        Ok(()) if settings.secret_store == StoreKind::Memory => check(
            Level::Warn,
            &name,
            format!(
                "a server with {env_note} keeps secrets in memory only: connections are lost when the client restarts it"
            ),
            Some(example),
        ),
        Ok(()) if settings.home != shell.home => check(
            Level::Warn,
            &name,
            format!(
                "a server with {env_note} uses the data directory {}, not this shell's {} (its connections and settings are not the ones checked above){missing_note}",
                settings.home.display(),
                shell.home.display()
            ),
            Some(format!(
                "set WORKBENCH_HOME in the entry's env to {} (or unset it in your shell)",
                shell.home.display()
            )),
        ),
        Ok(()) if !missing.is_empty() => check(
            Level::Warn,
            &name,
            format!("a server with {env_note} uses {described}, which answers{missing_note}"),
            Some(example),
        ),
        Ok(()) => check(Level::Ok, &name, format!("a server with {env_note} uses {described}, which answers"), None),
    })
}

/// The connect pages need a loopback port: the configured one free, or any free one.
fn port(configured: u16) -> Check {
    const NAME: &str = "loopback port";
    match std::net::TcpListener::bind(("127.0.0.1", configured)) {
        Ok(_) if configured == 0 => check(Level::Ok, NAME, "127.0.0.1 binds (any free port will do)", None),
        Ok(_) => check(Level::Ok, NAME, format!("127.0.0.1:{configured} is free"), None),
        Err(e) if configured != 0 && e.kind() == std::io::ErrorKind::AddrInUse => check(
            Level::Warn,
            NAME,
            format!("127.0.0.1:{configured} is in use (a running workbench may hold it for its connect pages)"),
            Some("if no workbench is running, set WORKBENCH_PORT (or listener_port in config.json) to a free port, or 0 for any".into()),
        ),
        Err(e) => check(
            Level::Fail,
            NAME,
            format!("cannot bind 127.0.0.1:{configured}: {e}"),
            Some("connect pages need a loopback port: check the loopback interface, or set WORKBENCH_PORT to a free port (0 for any)".into()),
        ),
    }
}

/// One client's registration: config present, parses, has our entry, whose command runs.
pub fn client(loc: &Locations, c: Client) -> Check {
    let name = c.display();
    let path = loc.config_path(c);
    let shown = path.display();
    let register = format!("run `workbench clients register --client {}` (or ./install.sh)", c.id());
    if !loc.installed(c) {
        return check(Level::Skip, name, format!("not installed here (no {shown})"), None);
    }
    let text = match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(_) => {
                return check(Level::Fail, name, format!("{shown} is not UTF-8 text"), Some(fix_by_hand(c)));
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return check(Level::Warn, name, format!("installed, but {shown} does not exist yet"), Some(register));
        }
        Err(e) => {
            return check(
                Level::Fail,
                name,
                format!("cannot read {shown}: {e}"),
                Some("check the file's permissions".into()),
            );
        }
    };
    let entry = match clients::inspect(&text) {
        Err(why) => return check(Level::Fail, name, format!("{shown}: {why}"), Some(fix_by_hand(c))),
        Ok(None) => return check(Level::Warn, name, format!("{shown} has no \"workbench\" server"), Some(register)),
        Ok(Some(e)) => e,
    };
    let Some(command) = entry.get("command").and_then(|v| v.as_str()) else {
        return check(Level::Fail, name, format!("{shown}: the \"workbench\" entry has no command"), Some(register));
    };
    let command_path = Path::new(command);
    if command_path.is_absolute() {
        if !command_path.is_file() {
            return check(Level::Fail, name, format!("{shown}: command {command} does not exist"), Some(register));
        }
        if !is_executable(command_path) {
            return check(
                Level::Fail,
                name,
                format!("{shown}: command {command} is not executable"),
                Some(format!("chmod 755 '{command}'")),
            );
        }
        return check(Level::Ok, name, format!("{shown} runs {command}"), None);
    }
    match find_on_path(command) {
        Some(found) => check(
            Level::Warn,
            name,
            format!(
                "{shown} runs `{command}` by name (found at {}), but clients started from the desktop may not have your shell's PATH",
                found.display()
            ),
            Some(register),
        ),
        None => check(Level::Fail, name, format!("{shown}: command `{command}` is not on PATH"), Some(register)),
    }
}

fn fix_by_hand(c: Client) -> String {
    format!(
        "workbench does not edit a file it cannot read as plain JSON: fix it by hand (or restore a *.workbench-backup-* copy beside it), then run `workbench clients register --client {}`",
        c.id()
    )
}

fn find_on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file() && is_executable(p))
}

#[cfg(unix)]
fn mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).ok().map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode(_: &Path) -> Option<u32> {
    None
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    mode(path).is_some_and(|m| m & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_is_created_private_and_loose_modes_warn() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("wb");
        let c = data_dir(&home);
        assert_eq!(c.level, Level::Ok, "{c:?}");
        assert!(c.detail.contains("created now"));
        #[cfg(unix)]
        {
            assert!(c.detail.contains("0700"), "{c:?}");
            set_mode(&home, 0o755);
            let c = data_dir(&home);
            assert_eq!(c.level, Level::Warn);
            assert!(c.fix.unwrap().contains("chmod 700"));
        }
        std::fs::write(dir.path().join("file"), "x").unwrap();
        assert_eq!(data_dir(&dir.path().join("file")).level, Level::Fail);
    }

    #[test]
    fn a_damaged_database_fails_with_a_fix() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("workbench.db");
        assert_eq!(database(&db).level, Level::Ok);
        std::fs::remove_file(&db).unwrap();
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(dir.path().join(format!("workbench.db{suffix}")));
        }
        std::fs::write(&db, vec![0x42u8; 8192]).unwrap();
        let c = database(&db);
        assert_eq!(c.level, Level::Fail, "{c:?}");
        assert!(c.fix.unwrap().contains("move it aside"));
    }

    #[test]
    fn a_busy_configured_port_warns_and_any_port_binds() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = port(taken.local_addr().unwrap().port());
        assert_eq!(c.level, Level::Warn, "{c:?}");
        assert_eq!(port(0).level, Level::Ok);
    }

    #[test]
    fn client_registrations_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Locations { home: dir.path().to_path_buf(), app_config: dir.path().join(".config") };
        assert_eq!(client(&loc, Client::Cursor).level, Level::Skip);
        std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
        assert_eq!(client(&loc, Client::Cursor).level, Level::Warn);
        let cfg = loc.config_path(Client::Cursor);
        std::fs::write(&cfg, "{\"mcpServers\": {}").unwrap();
        assert_eq!(client(&loc, Client::Cursor).level, Level::Fail);
        std::fs::write(&cfg, "{\"mcpServers\": {}}").unwrap();
        assert_eq!(client(&loc, Client::Cursor).level, Level::Warn);
        std::fs::write(&cfg, "{\"mcpServers\": {\"workbench\": {\"command\": \"/nonexistent/workbench\"}}}").unwrap();
        let c = client(&loc, Client::Cursor);
        assert_eq!(c.level, Level::Fail);
        assert!(c.detail.contains("does not exist"), "{c:?}");
        let exe = std::env::current_exe().unwrap();
        let text = format!("{{\"mcpServers\": {{\"workbench\": {{\"command\": {}}}}}}}", serde_json::json!(exe));
        std::fs::write(&cfg, text).unwrap();
        assert_eq!(client(&loc, Client::Cursor).level, Level::Ok);
    }

    #[test]
    fn the_report_names_failures_and_sets_the_status() {
        let checks = vec![
            check(Level::Ok, "a", "fine", None),
            check(Level::Fail, "longer name", "broken", Some("do this".into())),
        ];
        let mut out = Vec::new();
        assert_eq!(print(&checks, &mut out), 1);
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("FAIL  longer name  broken\n"), "{text}");
        assert!(text.contains("fix: do this"), "{text}");
        assert!(text.contains("1 failure, 0 warnings, 1 OK"), "{text}");
        assert_eq!(print(&checks[..1], &mut Vec::new()), 0);
    }
}
