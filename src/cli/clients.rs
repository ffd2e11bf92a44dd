//! `workbench clients register|unregister`: the binary's path as a client config names it, and the
//! edit of each chosen client's config.

use std::path::{Path, PathBuf};

use crate::clients::{self, Action, Client, Locations, Op};

use super::exit;

/// Why a binary path cannot go into a client config.
#[derive(Debug, thiserror::Error)]
pub enum CommandPathError {
    #[error("cannot tell where this binary is: {0}")]
    Unknown(std::io::Error),
    #[error("--command must be an absolute path, got {}", .0.display())]
    NotAbsolute(PathBuf),
    #[error("--command {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("{} is not valid UTF-8", .0.display())]
    NotUtf8(PathBuf),
}

/// The binary itself, as a client config should name it.
pub fn current_binary() -> Result<PathBuf, CommandPathError> {
    let exe = std::env::current_exe().map_err(CommandPathError::Unknown)?;
    Ok(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// `clients register|unregister`: edits each chosen (or every installed) client's config and says
/// what it did. `explicit` means the user named the clients, so a missing one is a failure.
pub fn clients(op: Op<'_>, chosen: &[Client], dry_run: bool) -> u8 {
    let Some(loc) = Locations::from_env() else {
        eprintln!("workbench: HOME is not set, so client configs cannot be found");
        return exit::FAILED;
    };
    let explicit = !chosen.is_empty();
    let targets: Vec<Client> = if explicit { chosen.to_vec() } else { Client::ALL.to_vec() };
    let reports = clients::apply(&loc, &targets, op, dry_run);
    let mut failed = false;
    for r in &reports {
        let name = r.client.display();
        let path = r.path.display();
        match &r.action {
            Action::NotInstalled if explicit => {
                failed = true;
                out!("{name}: not found here ({path} and its folder are missing)");
            }
            Action::NotInstalled => out!("{name}: not installed, skipped"),
            Action::Unchanged => match op {
                Op::Register(_) => out!("{name}: already registered in {path}; nothing changed"),
                Op::Unregister => out!("{name}: no workbench entry in {path}; nothing changed"),
                Op::Replace(..) => out!("{name}: already as wanted in {path}; nothing changed"),
            },
            Action::Changed { summary, backup } => {
                if dry_run {
                    out!("{name}: would edit {path}: {summary} (after a backup)");
                    if let Some(diff) = &r.preview {
                        for line in diff.lines() {
                            out!("    {line}");
                        }
                    }
                } else {
                    let backup = backup.as_ref().map(|b| format!("; backup: {}", b.display())).unwrap_or_default();
                    out!("{name}: {summary} in {path}{backup}");
                    out!("    {} to use it", r.client.after_change());
                }
            }
            Action::Refused(why) => {
                failed = true;
                out!("{name}: REFUSED to edit {path}: {why}");
                out!("    The file was left exactly as it was. Fix it by hand, then run this again.");
            }
            Action::Failed(why) => {
                failed = true;
                out!("{name}: FAILED on {path}: {why}");
            }
        }
    }
    if !explicit
        && let Op::Register(command) = op
        && reports.iter().all(|r| r.action == Action::NotInstalled)
    {
        let entry = serde_json::to_string(&Client::Cursor.entry(command)).unwrap_or_default();
        out!("No MCP client found. To add workbench to one by hand, put this under \"mcpServers\":");
        out!("    \"workbench\": {entry}");
    }
    if dry_run {
        out!("(dry run: no file was changed)");
    }
    if failed { exit::FAILED } else { exit::OK }
}

/// Checks a `--command` path for registration: absolute, and present unless this is a dry run
/// (install.sh's dry run names the binary it would install).
pub fn registration_command(given: Option<&Path>, dry_run: bool) -> Result<String, CommandPathError> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None => current_binary()?,
    };
    if !path.is_absolute() {
        return Err(CommandPathError::NotAbsolute(path));
    }
    if !dry_run && !path.is_file() {
        return Err(CommandPathError::Missing(path));
    }
    match path.to_str() {
        Some(p) => Ok(p.to_string()),
        None => Err(CommandPathError::NotUtf8(path)),
    }
}
