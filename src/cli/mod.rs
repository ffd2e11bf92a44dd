//! Terminal commands: the same meta-tools, engine, stores and pages the agent uses, driven from a
//! shell so a user can set up accounts and try tools before opening their agent.
//!
//! Each command returns its exit status (see [`exit`]). Results go to stdout (JSON for `tools`),
//! messages to stderr; progress is drawn on stderr only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `println!` that ignores a closed stdout (`workbench status | head` must not panic).
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

mod accounts;
mod clients;
mod doctor;
mod servers;
mod tools;

pub use self::accounts::{connect, connect_account, disconnect, disconnect_account, status};
pub use self::clients::{CommandPathError, clients, current_binary, registration_command};
pub use self::doctor::doctor;
pub use self::servers::{
    Offer, ServerAddError, import_offers, servers_add_config, servers_fetch, servers_fetch_all, servers_import,
    servers_list, servers_remove, servers_review,
};
pub use self::tools::{InputError, parse_batch, read_json_arg, tools_batch, tools_call, tools_schema, tools_search};

/// Exit statuses of every command.
pub mod exit {
    /// Done.
    pub const OK: u8 = 0;
    /// The command ran and something failed: a tool error, a connection that did not finish, a
    /// doctor FAIL, a client config that was refused.
    pub const FAILED: u8 = 1;
    /// The command line or its input was wrong (unknown command or option, arguments that are
    /// not JSON); nothing was done.
    pub const USAGE: u8 = 2;
}

/// A one-line progress display on stderr, drawn only when stderr is a terminal, and only once the
/// work has taken long enough to be worth it.
pub struct StatusLine {
    enabled: bool,
    drawn: bool,
    started: Instant,
    frame: usize,
}

impl StatusLine {
    /// Work shorter than this shows nothing.
    const DELAY: Duration = Duration::from_millis(300);

    pub fn new() -> StatusLine {
        StatusLine { enabled: std::io::stderr().is_terminal(), drawn: false, started: Instant::now(), frame: 0 }
    }

    /// Redraws the line with `message` and the time since start.
    pub fn tick(&mut self, message: &str) {
        if !self.enabled || self.started.elapsed() < Self::DELAY {
            return;
        }
        const FRAMES: [char; 4] = ['|', '/', '-', '\\'];
        self.frame = (self.frame + 1) % FRAMES.len();
        self.drawn = true;
        let secs = self.started.elapsed().as_secs();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{} {message} ({secs}s)", FRAMES[self.frame]);
        let _ = err.flush();
    }

    /// Clears the line, if anything was drawn.
    pub fn finish(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

impl Default for StatusLine {
    fn default() -> Self {
        Self::new()
    }
}

fn print_json(v: &Value) {
    out!("{}", serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()));
}
