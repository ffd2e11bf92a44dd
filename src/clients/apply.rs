//! Applying an edit to each client's config file: the dry-run diff, the backup, the atomic
//! replace (through a symlink to its target, private on unix) and the report of what happened.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::text::{Edit, register_text, replace_text, unregister_text};
use super::{Client, Locations};

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
