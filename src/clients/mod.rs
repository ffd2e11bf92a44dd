//! MCP client registration: where Claude Desktop, Cursor and Claude Code keep their server list,
//! and how workbench adds or removes its own `mcpServers.workbench` entry there.
//!
//! The files belong to the user and to the clients, so edits are textual splices: the file is first
//! parsed strictly (a file that is not plain JSON is refused and left alone), then only the bytes of
//! the `workbench` member (or one new member) change. Everything else — other servers, other keys,
//! key order, indentation, CRLF line ends, unicode — stays byte-for-byte. Registering and then
//! unregistering gives back the original bytes. A changed file is backed up first, written to a
//! temporary file beside it and renamed over it (through a symlink to its target).
//!
//! `install.sh` calls `workbench clients register|unregister`; `workbench doctor` reads the same
//! locations with [`inspect`].

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

mod apply;
mod text;

pub use apply::{Action, Op, Report, apply, diff, tilde};
pub use text::{Edit, inspect, other_servers, register_text, remove_server_text, unregister_text};

/// Why a client config's text cannot be edited; each reads after "the file is refused: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// serde_json refused the text (`hint` names comments and trailing commas when they are why).
    #[error("it is not valid JSON: {detail}{hint}")]
    NotJson { detail: String, hint: &'static str },
    #[error("its top level is {0}, not an object")]
    TopNotObject(&'static str),
    #[error("its \"mcpServers\" is {0}, not an object")]
    ServersNotObject(&'static str),
    #[error("it has the key \"{0}\" twice, so which one a client reads is unclear")]
    DuplicateKey(String),
    /// The splice scanner disagreed with serde_json at a byte (a bug: reported, never a wrong splice).
    #[error("expected {what} at byte {at}")]
    Expected { what: &'static str, at: usize },
    #[error("unterminated string")]
    UnterminatedString,
    #[error("unbalanced brackets")]
    UnbalancedBrackets,
    #[error("unexpected end of text")]
    UnexpectedEnd,
    /// serde_json refused one member it had accepted as part of the whole (its message).
    #[error("{0}")]
    Member(String),
}

fn member_error(e: serde_json::Error) -> ConfigError {
    ConfigError::Member(e.to_string())
}

/// The name of our member in `mcpServers`.
pub const SERVER_NAME: &str = "workbench";

/// An MCP client whose config workbench knows how to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    Cursor,
    ClaudeCode,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::ClaudeDesktop, Client::Cursor, Client::ClaudeCode];

    /// The id used on the command line (`--client cursor`).
    pub fn id(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::ClaudeCode => "claude-code",
        }
    }

    pub fn display(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::Cursor => "Cursor",
            Client::ClaudeCode => "Claude Code",
        }
    }

    pub fn from_id(id: &str) -> Option<Client> {
        Client::ALL.into_iter().find(|c| c.id() == id)
    }

    /// The entry workbench writes for this client (see examples/config/).
    pub fn entry(self, command: &str) -> Value {
        match self {
            // Claude Code's own `claude mcp add` writes the transport type explicitly.
            Client::ClaudeCode => json!({ "type": "stdio", "command": command, "args": [] }),
            Client::ClaudeDesktop | Client::Cursor => json!({ "command": command }),
        }
    }

    /// What to do after the file changed.
    pub fn after_change(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "quit and reopen Claude Desktop",
            Client::Cursor => "reload Cursor",
            Client::ClaudeCode => "start a new Claude Code session (`claude mcp list` shows it)",
        }
    }
}

/// The directories client configs are found under; from the environment, or given by tests.
#[derive(Debug, Clone)]
pub struct Locations {
    pub home: PathBuf,
    /// Claude Desktop's parent folder: `~/Library/Application Support` (macOS), `%APPDATA%`
    /// (Windows), `$XDG_CONFIG_HOME` or `~/.config` (Linux and others).
    pub app_config: PathBuf,
}

impl Locations {
    pub fn from_env() -> Option<Locations> {
        use crate::platform::{Os, app_config_dir, home_dir};
        let var = |n: &str| std::env::var_os(n);
        let home = home_dir(Os::current(), &var)?;
        let app_config = app_config_dir(Os::current(), &home, &var);
        Some(Locations { home, app_config })
    }

    /// The config file of `client`.
    pub fn config_path(&self, client: Client) -> PathBuf {
        match client {
            Client::ClaudeDesktop => self.app_config.join("Claude").join("claude_desktop_config.json"),
            Client::Cursor => self.home.join(".cursor").join("mcp.json"),
            Client::ClaudeCode => self.home.join(".claude.json"),
        }
    }

    /// Whether the client looks installed: its config file exists, or (Claude Desktop, Cursor) the
    /// folder it keeps it in does. Claude Code counts only when `~/.claude.json` exists.
    pub fn installed(&self, client: Client) -> bool {
        let path = self.config_path(client);
        if path.exists() {
            return true;
        }
        match client {
            Client::ClaudeCode => false,
            _ => path.parent().is_some_and(Path::is_dir),
        }
    }
}

#[cfg(test)]
mod tests;
