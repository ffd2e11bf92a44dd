//! `workbench setup`: the one-time choice of where secrets live, made where the OS keychain does
//! not answer (SSH boxes, containers, WSL, a desktop without a Secret Service).
//!
//! The keychain is probed; when it answers, nothing is written. When it does not, the user is
//! offered (or `--secret-store file` chooses) the encrypted file store opened by a random key file
//! (`<home>/secrets.key`, mode 0600). The choice is recorded in workbench's own `config.json`
//! (`secret_store`, `vault_key_file`), so the server each MCP client launches finds it with no
//! environment and no hand-edited client config. Other keys of config.json are kept.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::cli::exit;
use crate::config::Settings;
use crate::doctor::{KEY_FILE_DOES_NOT_PROTECT, KEY_FILE_PROTECTS, STORE_DEADLINE};
use crate::secrets::file::{FileStore, Passphrase};
use crate::secrets::keychain::KeychainStore;
use crate::secrets::{SecretStore, probe};

/// What `--secret-store` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// The OS keychain (config.json's choice removed).
    Keychain,
    /// The encrypted file store with a key file.
    File,
}

/// Where the answers to a question come from, and where messages go (tests pass their own).
pub struct Io<'a> {
    pub input: &'a mut dyn BufRead,
    /// Whether to ask at all (stdin is a terminal).
    pub interactive: bool,
    pub out: &'a mut dyn Write,
}

/// `workbench setup` with the process's environment, stdin and stdout.
pub fn run(choice: Option<Choice>) -> u8 {
    let settings = match Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut out = std::io::stdout();
    let keychain: Arc<dyn SecretStore> = Arc::new(KeychainStore::default());
    setup(&settings, choice, keychain, &mut Io { input: &mut input, interactive, out: &mut out })
}

/// The setup steps, with the keychain to probe given (tests give one that cannot answer).
pub fn setup(settings: &Settings, choice: Option<Choice>, keychain: Arc<dyn SecretStore>, io: &mut Io<'_>) -> u8 {
    let home = &settings.home;
    let config_path = home.join("config.json");
    macro_rules! say {
        ($($t:tt)*) => {{ let _ = writeln!(io.out, $($t)*); }};
    }
    if let Some(v) = settings.credential_env.get("WORKBENCH_SECRET_STORE") {
        say!(
            "note: WORKBENCH_SECRET_STORE={v} is set in this shell; it wins over config.json here, but the servers your MCP clients launch do not see it"
        );
    }
    let config = match read_config(&config_path) {
        Ok(c) => c,
        Err(e) => {
            say!("workbench setup: {e}");
            return exit::FAILED;
        }
    };
    let recorded = config.get("secret_store").and_then(Value::as_str).map(str::to_string);
    let choice = match choice {
        Some(c) => c,
        None => {
            if recorded.as_deref() == Some("file") {
                return report_file(settings, &config_path, io);
            }
            match probe(keychain.clone(), STORE_DEADLINE) {
                Ok(()) => {
                    say!("secret store: the OS keychain answers; credentials will be kept there. Nothing to set up.");
                    return exit::OK;
                }
                Err(reason) => {
                    say!("secret store: {reason}.");
                    say!(
                        "The encrypted file store works without a keychain: {} (encrypted) opened by a random key file {} (mode 0600), recorded in {}.",
                        home.join("secrets.enc").display(),
                        home.join("secrets.key").display(),
                        config_path.display()
                    );
                    say!("  It protects against {KEY_FILE_PROTECTS};");
                    say!("  not against {KEY_FILE_DOES_NOT_PROTECT}.");
                    if !io.interactive {
                        say!(
                            "No choice made (no terminal to ask on). To use it: workbench setup --secret-store file (or ./install.sh --secret-store file)."
                        );
                        return exit::FAILED;
                    }
                    let _ = write!(io.out, "Use the encrypted file store? [Y/n] ");
                    let _ = io.out.flush();
                    let mut answer = String::new();
                    let _ = io.input.read_line(&mut answer);
                    let answer = answer.trim().to_ascii_lowercase();
                    if !(answer.is_empty() || answer == "y" || answer == "yes") {
                        say!(
                            "Nothing changed. Connections cannot be stored until a keychain answers or a store is chosen (workbench setup)."
                        );
                        return exit::FAILED;
                    }
                    Choice::File
                }
            }
        }
    };
    match choice {
        Choice::Keychain => {
            let mut config = config;
            let changed =
                config.shift_remove("secret_store").is_some() | config.shift_remove("vault_key_file").is_some();
            if changed && let Err(e) = write_config(&config_path, &config) {
                say!("workbench setup: {e}");
                return exit::FAILED;
            }
            match probe(keychain, STORE_DEADLINE) {
                Ok(()) => {
                    say!("secret store: the OS keychain answers; credentials will be kept there.");
                    exit::OK
                }
                Err(reason) => {
                    say!(
                        "secret store: the OS keychain was chosen, but {reason}. Run `workbench setup --secret-store file` to use the encrypted file store instead."
                    );
                    exit::FAILED
                }
            }
        }
        Choice::File => choose_file(settings, config, &config_path, io),
    }
}

/// Creates the key file (or keeps a valid one), records the choice, and checks the store opens.
fn choose_file(settings: &Settings, mut config: Map<String, Value>, config_path: &Path, io: &mut Io<'_>) -> u8 {
    let home = &settings.home;
    let key_path = match config.get("vault_key_file").and_then(Value::as_str) {
        Some(p) if Path::new(p).is_absolute() => PathBuf::from(p),
        _ => home.join("secrets.key"),
    };
    let sealed = home.join("secrets.enc");
    if let Err(e) = create_private_dir(home) {
        let _ = writeln!(io.out, "workbench setup: cannot create {}: {e}", home.display());
        return exit::FAILED;
    }
    if !key_path.exists() {
        if sealed.exists() {
            let _ = writeln!(
                io.out,
                "workbench setup: {} already exists, sealed with a passphrase, and a new key could not open it. Keep using that passphrase (WORKBENCH_VAULT_PASSPHRASE in each client's \"env\"), or move the file aside (mv '{}' '{}.old') and connect your accounts again.",
                sealed.display(),
                sealed.display(),
                sealed.display()
            );
            return exit::FAILED;
        }
        if let Err(e) = write_key(&key_path) {
            let _ = writeln!(io.out, "workbench setup: cannot write the key file {}: {e}", key_path.display());
            return exit::FAILED;
        }
        let _ = writeln!(io.out, "Created the key file {} (mode 0600).", key_path.display());
    }
    config.insert("secret_store".into(), Value::String("file".into()));
    config.insert("vault_key_file".into(), Value::String(key_path.display().to_string()));
    if let Err(e) = write_config(config_path, &config) {
        let _ = writeln!(io.out, "workbench setup: {e}");
        return exit::FAILED;
    }
    let _ = writeln!(
        io.out,
        "Recorded in {}: \"secret_store\": \"file\", \"vault_key_file\": \"{}\".",
        config_path.display(),
        key_path.display()
    );
    report_file(settings, config_path, io)
}

/// Says what holds the secrets with the recorded file store, and whether it opens.
fn report_file(settings: &Settings, config_path: &Path, io: &mut Io<'_>) -> u8 {
    let key_path = match read_config(config_path)
        .ok()
        .and_then(|c| c.get("vault_key_file").and_then(Value::as_str).map(PathBuf::from))
    {
        Some(p) => p,
        None => {
            let _ = writeln!(
                io.out,
                "secret store: config.json chooses the file store without a key file; run `workbench setup --secret-store file` to create one"
            );
            return exit::FAILED;
        }
    };
    let store: Arc<dyn SecretStore> =
        Arc::new(FileStore::new(settings.home.join("secrets.enc"), Passphrase::KeyFile(key_path)));
    let described = store.describe();
    match probe(store, STORE_DEADLINE) {
        Ok(()) => {
            let _ = writeln!(
                io.out,
                "secret store: {described}; it answers. The servers your MCP clients launch read this from config.json: no env needed."
            );
            exit::OK
        }
        Err(reason) => {
            let _ = writeln!(io.out, "secret store: {described}, which fails: {reason}");
            exit::FAILED
        }
    }
}

/// config.json as a JSON object (empty when the file does not exist).
fn read_config(path: &Path) -> Result<Map<String, Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(format!("{} is not a JSON object; fix it by hand first", path.display())),
            Err(e) => Err(format!("{} is not valid JSON ({e}); fix it by hand first", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes config.json through a temp file and a rename, mode 0600 (it may hold OAuth client
/// secrets), keeping its other keys in their order.
fn write_config(path: &Path, config: &Map<String, Value>) -> Result<(), String> {
    let text = serde_json::to_string_pretty(config).map_err(|e| e.to_string())? + "\n";
    let tmp = path.with_extension(format!("json.setup-{}", std::process::id()));
    let written = private_file(&tmp).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

/// 32 random bytes, base64, in a new file only its owner can read.
fn write_key(path: &Path) -> std::io::Result<()> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut f = private_file(path)?;
    f.write_all(plugins::codec::base64_encode(&key).as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

/// The data directory, created mode 0700 when missing.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::{Secret, StoreError};

    /// A keychain that never answers, as on a box without a D-Bus session.
    struct NoKeychain;
    impl SecretStore for NoKeychain {
        fn name(&self) -> &'static str {
            "keychain"
        }
        fn get(&self, _: &str) -> Result<Option<Secret<String>>, StoreError> {
            Err(StoreError::Unavailable { store: "keychain", reason: "no OS keychain answers here".into() })
        }
        fn set(&self, _: &str, _: &Secret<String>) -> Result<(), StoreError> {
            self.get("").map(|_| ())
        }
        fn delete(&self, _: &str) -> Result<bool, StoreError> {
            self.get("").map(|_| false)
        }
    }

    fn settings(home: &Path) -> Settings {
        let vars = [("WORKBENCH_HOME".to_string(), home.display().to_string())].into_iter().collect();
        Settings::load(&vars).unwrap()
    }

    fn run_setup(home: &Path, choice: Option<Choice>, interactive: bool, answer: &str) -> (u8, String) {
        let mut input = std::io::Cursor::new(answer.as_bytes().to_vec());
        let mut out = Vec::new();
        let code = setup(
            &settings(home),
            choice,
            Arc::new(NoKeychain),
            &mut Io { input: &mut input, interactive, out: &mut out },
        );
        (code, String::from_utf8(out).unwrap())
    }

    #[test]
    fn without_a_keychain_the_file_store_is_offered_recorded_and_opens() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("wb");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.json"), "{\"email\": \"me@example.com\", \"listener_port\": 0}").unwrap();
        // No terminal and no flag: nothing chosen, and it says how.
        let (code, text) = run_setup(&home, None, false, "");
        assert_eq!(code, exit::FAILED);
        assert!(text.contains("--secret-store file") && text.contains("not against anything running as you"), "{text}");
        assert!(!home.join("secrets.key").exists());
        // Declined on the terminal: nothing changed.
        let (code, _) = run_setup(&home, None, true, "n\n");
        assert_eq!(code, exit::FAILED);
        assert!(!home.join("secrets.key").exists());
        // Accepted: key file 0600, config.json records it and keeps the other keys.
        let (code, text) = run_setup(&home, None, true, "\n");
        assert_eq!(code, exit::OK, "{text}");
        let key = home.join("secrets.key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let config: Value = serde_json::from_str(&std::fs::read_to_string(home.join("config.json")).unwrap()).unwrap();
        assert_eq!(config["secret_store"], "file");
        assert_eq!(config["vault_key_file"], key.display().to_string());
        assert_eq!(config["email"], "me@example.com");
        // The settings a client-launched server reads (no env but the home) open the store.
        let s = settings(&home);
        assert_eq!(s.secret_store, crate::config::StoreKind::File);
        let store = crate::app::secret_store(&s);
        store.set("k", &Secret::new("v".into())).unwrap();
        assert_eq!(store.get("k").unwrap().unwrap().expose(), "v");
        assert!(!std::fs::read_to_string(home.join("secrets.enc")).unwrap().contains("\"v\""));
        // Run again: the same key is kept, the store still opens.
        let before = std::fs::read(&key).unwrap();
        let (code, text) = run_setup(&home, None, false, "");
        assert_eq!(code, exit::OK, "{text}");
        assert_eq!(std::fs::read(&key).unwrap(), before);
        assert_eq!(crate::app::secret_store(&settings(&home)).get("k").unwrap().unwrap().expose(), "v");
    }

    #[test]
    fn a_loose_or_missing_key_file_and_a_passphrase_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("wb");
        let (code, _) = run_setup(&home, Some(Choice::File), false, "");
        assert_eq!(code, exit::OK);
        let key = home.join("secrets.key");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = crate::app::secret_store(&settings(&home)).get("x").unwrap_err().to_string();
            assert!(err.contains("other users could read it"), "{err}");
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::remove_file(&key).unwrap();
        let err = crate::app::secret_store(&settings(&home)).get("x").unwrap_err().to_string();
        assert!(err.contains("does not exist") && err.contains("workbench setup"), "{err}");
        // A store sealed earlier with a passphrase is never overwritten by a new key.
        std::fs::write(home.join("secrets.enc"), "{}").unwrap();
        let (code, text) = run_setup(&home, Some(Choice::File), false, "");
        assert_eq!(code, exit::FAILED);
        assert!(text.contains("sealed with a passphrase"), "{text}");
        assert!(!key.exists());
        // A relative key file path in config.json is refused when settings are read, not guessed.
        std::fs::write(home.join("config.json"), "{\"secret_store\": \"file\", \"vault_key_file\": \"secrets.key\"}")
            .unwrap();
        let vars = [("WORKBENCH_HOME".to_string(), home.display().to_string())].into_iter().collect();
        let err = Settings::load(&vars).unwrap_err().to_string();
        assert!(err.contains("vault_key_file") && err.contains("absolute"), "{err}");
        // A config.json that is not a JSON object is never rewritten.
        std::fs::write(home.join("config.json"), "[1]").unwrap();
        assert!(read_config(&home.join("config.json")).unwrap_err().contains("not a JSON object"));
    }
}
