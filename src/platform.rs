//! What differs between Linux, macOS and Windows, as plain functions of an [`Os`] value, so the
//! logic of each system is unit-tested on any of them (CI runs on Linux; the release workflow
//! builds and tests macOS and Windows too). Code that only compiles on one system stays behind
//! `cfg` where it is used, and small: the Windows job object (`upstream::job`), file modes
//! (`#[cfg(unix)]`, a no-op on Windows, where the data directory under the user's profile is
//! private by its inherited ACL).
//!
//! This module names no other module of the crate.

use std::ffi::OsString;
use std::path::PathBuf;

/// The desktop system workbench runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
    /// Another Unix (a BSD): treated like Linux where a choice is needed.
    OtherUnix,
}

impl Os {
    /// The system this binary was built for.
    pub const fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "linux") {
            Os::Linux
        } else {
            Os::OtherUnix
        }
    }
}

/// The user's home directory from the environment: `HOME`, then (Windows) `USERPROFILE`. An
/// empty value counts as unset; on Windows a value without a drive (`/home/me`, as MSYS or Wine
/// pass it through) is not a Windows path and is skipped.
pub fn home_dir(os: Os, var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let get = |n: &str| var(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    match os {
        Os::Windows => get("HOME").filter(|p| is_windows_absolute(p)).or_else(|| get("USERPROFILE")),
        _ => get("HOME"),
    }
}

/// Whether `p` is an absolute Windows path (`C:\...`, `C:/...` or `\\server\share`), judged by
/// its text so that it holds on every system.
fn is_windows_absolute(p: &std::path::Path) -> bool {
    let s = p.to_string_lossy();
    let b = s.as_bytes();
    (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/'))
        || s.starts_with("\\\\")
}

/// The folder Claude Desktop keeps its `Claude/claude_desktop_config.json` under:
/// `~/Library/Application Support` (macOS), `%APPDATA%` (Windows; `<home>\AppData\Roaming`
/// without it), `$XDG_CONFIG_HOME` if absolute, else `~/.config` (Linux and other Unix systems).
pub fn app_config_dir(os: Os, home: &std::path::Path, var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    let get = |n: &str| var(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    match os {
        Os::MacOs => home.join("Library").join("Application Support"),
        Os::Windows => {
            get("APPDATA").filter(|p| is_windows_absolute(p)).unwrap_or_else(|| home.join("AppData").join("Roaming"))
        }
        Os::Linux | Os::OtherUnix => {
            get("XDG_CONFIG_HOME").filter(|p| p.is_absolute()).unwrap_or_else(|| home.join(".config"))
        }
    }
}

/// What the OS keychain is called on `os` (the `keyring` crate picks it: Keychain Services on
/// macOS, the Credential Manager on Windows, the Secret Service over D-Bus elsewhere), for
/// messages that tell the user what to unlock or start.
pub fn keychain_name(os: Os) -> &'static str {
    match os {
        Os::MacOs => "the macOS Keychain",
        Os::Windows => "the Windows Credential Manager",
        Os::Linux | Os::OtherUnix => "the Secret Service (gnome-keyring or KeePassXC, over D-Bus)",
    }
}

/// How to run a one-line shell command given by the user (`WORKBENCH_VAULT_PASSPHRASE_COMMAND`):
/// the program and its leading arguments; the command itself goes last.
pub fn shell(os: Os) -> (&'static str, &'static [&'static str]) {
    match os {
        // /D: no AutoRun commands from the registry; /S /C "...": the text between the outer
        // quotes runs as typed (see `shell_command`).
        Os::Windows => ("cmd.exe", &["/D", "/S", "/C"]),
        _ => ("sh", &["-c"]),
    }
}

/// A `Command` running `line` through the system's shell (`sh -c` on Unix, `cmd.exe /D /S /C`
/// on Windows, where the line is passed verbatim inside one pair of quotes, which `/S` strips:
/// the Rust standard library's argument quoting is not cmd.exe's).
pub fn shell_command(line: &str) -> std::process::Command {
    let (program, args) = shell(Os::current());
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    #[cfg(windows)]
    std::os::windows::process::CommandExt::raw_arg(&mut cmd, format!("\"{line}\""));
    #[cfg(not(windows))]
    cmd.arg(line);
    cmd
}

/// How many threads this process may run at once (its CPU affinity and quota; at least 1), read
/// once: work split across cores (a long search over a large catalogue, a catalogue of many
/// servers) asks for it on every use.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |n: &str| map.get(n).cloned()
    }

    #[test]
    fn claude_desktop_lives_where_each_system_keeps_app_settings() {
        let e = env(&[("APPDATA", r"C:\Users\zoë\AppData\Roaming"), ("XDG_CONFIG_HOME", "/xdg")]);
        assert_eq!(
            app_config_dir(Os::MacOs, Path::new("/Users/z"), &e),
            Path::new("/Users/z/Library/Application Support")
        );
        assert_eq!(
            app_config_dir(Os::Windows, Path::new(r"C:\Users\zoë"), &e),
            Path::new(r"C:\Users\zoë\AppData\Roaming")
        );
        assert_eq!(app_config_dir(Os::Linux, Path::new("/home/z"), &e), Path::new("/xdg"));
        // Without the variables: the documented defaults.
        let none = env(&[]);
        assert_eq!(app_config_dir(Os::Linux, Path::new("/home/z"), &none), Path::new("/home/z/.config"));
        assert_eq!(
            app_config_dir(Os::Windows, Path::new("C:/Users/z"), &none),
            Path::new("C:/Users/z").join("AppData").join("Roaming")
        );
    }

    /// A relative or drive-less value would put the config wherever workbench was started.
    #[test]
    fn relative_or_foreign_config_folders_are_ignored() {
        let e = env(&[("APPDATA", "Roaming"), ("XDG_CONFIG_HOME", "relative/dir")]);
        assert_eq!(app_config_dir(Os::Linux, Path::new("/home/z"), &e), Path::new("/home/z/.config"));
        assert_eq!(
            app_config_dir(Os::Windows, Path::new(r"C:\Users\z"), &e),
            Path::new(r"C:\Users\z").join("AppData").join("Roaming")
        );
        let e = env(&[("APPDATA", "/unix/style")]);
        assert!(app_config_dir(Os::Windows, Path::new(r"C:\Users\z"), &e).starts_with(r"C:\Users\z"));
        // Empty counts as unset.
        let e = env(&[("XDG_CONFIG_HOME", "")]);
        assert_eq!(app_config_dir(Os::Linux, Path::new("/home/z"), &e), Path::new("/home/z/.config"));
    }

    #[test]
    fn home_is_home_then_the_windows_profile() {
        let both = env(&[("HOME", "/home/z"), ("USERPROFILE", r"C:\Users\z")]);
        assert_eq!(home_dir(Os::Linux, &both), Some(PathBuf::from("/home/z")));
        assert_eq!(home_dir(Os::MacOs, &both), Some(PathBuf::from("/home/z")));
        // Wine and MSYS pass a Unix HOME through: not a Windows folder.
        assert_eq!(home_dir(Os::Windows, &both), Some(PathBuf::from(r"C:\Users\z")));
        let win = env(&[("HOME", r"D:\me"), ("USERPROFILE", r"C:\Users\z")]);
        assert_eq!(home_dir(Os::Windows, &win), Some(PathBuf::from(r"D:\me")));
        assert_eq!(home_dir(Os::Linux, &env(&[("HOME", "")])), None);
        assert_eq!(
            home_dir(Os::Windows, &env(&[("USERPROFILE", r"\\srv\home\z")])),
            Some(PathBuf::from(r"\\srv\home\z"))
        );
    }

    #[test]
    fn the_keychain_is_named_for_the_system() {
        assert!(keychain_name(Os::MacOs).contains("macOS Keychain"));
        assert!(keychain_name(Os::Windows).contains("Credential Manager"));
        assert!(keychain_name(Os::Linux).contains("Secret Service"));
        assert_eq!(keychain_name(Os::current()), keychain_name(Os::current()));
    }

    #[test]
    fn the_shell_is_sh_or_cmd() {
        assert_eq!(shell(Os::Linux), ("sh", &["-c"][..]));
        assert_eq!(shell(Os::MacOs).0, "sh");
        assert_eq!(shell(Os::Windows), ("cmd.exe", &["/D", "/S", "/C"][..]));
    }

    /// The command line reaches the shell as one argument, quotes and all.
    #[cfg(unix)]
    #[test]
    fn a_shell_command_runs_as_typed() {
        let out = shell_command("printf '%s|' \"a b\" 'c'").output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a b|c|");
    }
}
