//! scripts/setup-system-deps.sh's choices (issue 29): which packages, under which names, per
//! distribution, and how it becomes root. The real script runs against a fake `/etc/os-release`
//! and fakes of `apt-get`, `sudo`, `id` and `python3` on a PATH of their own, which log what they
//! were asked; nothing is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

const DEBIAN: &str = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n";
const UBUNTU: &str = "PRETTY_NAME=\"Ubuntu 24.04 LTS\"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n";
const FEDORA: &str = "ID=fedora\nVERSION_ID=40\n";

struct Machine {
    dir: tempfile::TempDir,
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

impl Machine {
    /// A machine with `os_release`; `present` names the tools already installed; `sudo` whether
    /// sudo exists; `venv` whether python3 has its venv module.
    fn new(os_release: &str, present: &[&str], sudo: bool, venv: bool) -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(dir.path().join("os-release"), os_release).unwrap();
        // The real tools the script uses, and nothing else from the system.
        for tool in ["sed", "tr", "head", "readlink", "grep", "env", "dirname", "cat"] {
            let real = ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(tool)).find(|p| p.exists());
            std::os::unix::fs::symlink(real.unwrap_or_else(|| panic!("no {tool}")), bin.join(tool)).unwrap();
        }
        let log = dir.path().join("log");
        script(&bin.join("id"), "[ \"$1\" = -u ] && echo \"${FAKE_UID:-1000}\"");
        script(
            &bin.join("apt-get"),
            &format!(
                "echo \"apt-get uid=${{FAKE_UID:-1000}} $*\" >> '{}'\n[ \"${{FAKE_UID:-1000}}\" = 0 ] || {{ echo 'E: Could not open lock file - open (13: Permission denied)' >&2; exit 100; }}",
                log.display()
            ),
        );
        if sudo {
            script(&bin.join("sudo"), &format!("echo \"sudo $*\" >> '{}'\nFAKE_UID=0 exec \"$@\"", log.display()));
        }
        script(&bin.join("python3"), if venv { "exit 0" } else { "exit 1" });
        for tool in present {
            script(&bin.join(tool), "exit 0");
        }
        Machine { dir }
    }

    fn browser(&self, name: &str, body: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        script(&path, body);
        path
    }

    /// Runs the script as `uid`; (exit code, stdout + stderr, the fakes' log).
    fn run(&self, uid: u32, browsers: &[PathBuf]) -> (i32, String, String) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let paths: Vec<String> = browsers.iter().map(|p| p.display().to_string()).collect();
        let paths = if paths.is_empty() { self.dir.path().join("none").display().to_string() } else { paths.join(" ") };
        let out = Command::new("/bin/bash")
            .arg(root.join("scripts/setup-system-deps.sh"))
            .env_clear()
            .env("PATH", self.dir.path().join("bin"))
            .env("OS_RELEASE", self.dir.path().join("os-release"))
            .env("BROWSER_PATHS", paths)
            .env("FAKE_UID", uid.to_string())
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        (out.status.code().unwrap_or(-1), text, log)
    }
}

// Every tool the tests need but python3-venv and a browser (the keyring, and the Windows cross build and Wine).
const KEYRING: [&str; 5] =
    ["dbus-run-session", "gnome-keyring-daemon", "secret-tool", "x86_64-w64-mingw32-gcc", "wine"];

#[test]
fn debian_as_root_installs_venv_keyring_and_chromium_with_apt_directly() {
    let m = Machine::new(DEBIAN, &[], false, false);
    let (code, text, log) = m.run(0, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(!log.contains("sudo"), "root needs no sudo: {log}");
    let install = log.lines().find(|l| l.contains(" install ")).unwrap_or_else(|| panic!("{log}"));
    assert!(install.starts_with("apt-get uid=0"), "{install}");
    for pkg in ["python3-venv", "dbus", "gnome-keyring", "libsecret-tools", "chromium"] {
        assert!(install.split_whitespace().any(|w| w == pkg), "{pkg} missing from: {install}");
    }
}

#[test]
fn ubuntu_as_a_user_goes_through_sudo_and_never_installs_the_chromium_snap() {
    let m = Machine::new(UBUNTU, &[], true, false);
    // Ubuntu's transitional chromium-browser: a launcher script for the snap.
    let shim = m.browser("chromium-browser", "exec /snap/bin/chromium \"$@\"");
    let (code, text, log) = m.run(1000, &[shim]);
    assert_eq!(code, 0, "{text}");
    let install =
        log.lines().find(|l| l.starts_with("apt-get") && l.contains(" install ")).unwrap_or_else(|| panic!("{log}"));
    assert!(install.starts_with("apt-get uid=0"), "apt-get ran as root through sudo: {log}");
    assert!(log.lines().any(|l| l.starts_with("sudo env DEBIAN_FRONTEND=noninteractive apt-get install")), "{log}");
    assert!(install.contains("python3-venv"), "{install}");
    assert!(!install.contains("chromium"), "the snap transition package is never installed: {install}");
    assert!(text.contains("only install the snap") && text.contains("CHROMIUM="), "{text}");
    assert!(!text.contains("as root to"), "never asks to run as root: {text}");
}

#[test]
fn a_user_without_sudo_is_told_what_to_install_not_to_run_the_tests_as_root() {
    let m = Machine::new(DEBIAN, &KEYRING, false, false);
    let (code, text, log) = m.run(1000, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(log.is_empty(), "nothing ran: {log}");
    assert!(text.contains("missing python3-venv chromium"), "{text}");
    assert!(text.contains("then run the tests again as yourself"), "{text}");
}

#[test]
fn a_real_browser_and_every_tool_present_means_nothing_to_do_anywhere() {
    for release in [DEBIAN, UBUNTU, FEDORA] {
        let m = Machine::new(release, &KEYRING, true, true);
        let chrome = m.browser("google-chrome", "exit 0");
        let (code, text, log) = m.run(1000, &[chrome]);
        assert_eq!(code, 0, "{text}");
        assert!(log.is_empty(), "{log}");
        assert!(text.contains("are present"), "{text}");
    }
    // Elsewhere, without apt-get's names to trust, nothing is installed: the note says what to do.
    let m = Machine::new(FEDORA, &KEYRING, true, false);
    let (code, text, log) = m.run(1000, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(log.is_empty(), "{log}");
    assert!(text.contains("venv") && text.contains("set CHROMIUM"), "{text}");
}
