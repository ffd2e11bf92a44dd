//! An encrypted file for machines without a keychain (opt-in: `WORKBENCH_SECRET_STORE=file`).
//!
//! `<home>/secrets.enc` holds one JSON map of secrets, sealed with XChaCha20-Poly1305 under a key
//! derived from the user's passphrase with Argon2id (salt stored beside the ciphertext, a fresh
//! nonce on every write). The file is mode 0600 and replaced atomically. Several processes may share
//! one data directory (Claude Desktop and Cursor each start one): every read-modify-write holds an
//! exclusive lock on `<home>/secrets.enc.lock` (and an in-process mutex) and re-reads the file under
//! it, nothing is cached but the derived key, and each write goes through its own temp file
//! (`create_new`, random name, fsync'd before the rename, the directory fsync'd after). The passphrase comes from
//! `WORKBENCH_VAULT_PASSPHRASE`, the output of `WORKBENCH_VAULT_PASSPHRASE_COMMAND`, or the key
//! file config.json's `vault_key_file` names (`workbench setup` writes both where no keychain
//! answers, so a server launched by a client needs no environment); without one the store says
//! exactly that instead of falling back to anything weaker.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use plugins::codec::{base64_decode, base64_encode};
use serde::{Deserialize, Serialize};

use super::{Secret, SecretStore, StoreError};

#[derive(Serialize, Deserialize)]
struct Sealed {
    version: u32,
    kdf: String,
    m_cost: u32,
    t_cost: u32,
    p_cost: u32,
    salt: String,
    nonce: String,
    ciphertext: String,
}

/// Where the passphrase comes from.
#[derive(Clone)]
pub enum Passphrase {
    Value(Secret<String>),
    Command(String),
    /// A key file of the user's (`vault_key_file` in config.json, written by `workbench setup`):
    /// its contents are the passphrase. Refused when other users could read it.
    KeyFile(PathBuf),
    Missing,
}

/// The shortest key file contents accepted (setup writes 43 characters: 32 random bytes).
const MIN_KEY_CHARS: usize = 32;

/// Reads a key file's passphrase: private to its owner (on Unix), not empty, not short.
pub fn read_key_file(path: &Path) -> Result<Secret<String>, StoreError> {
    let shown = path.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                return Err(fail(format!(
                    "the key file {shown} has mode {:04o}: other users could read it, so it is not used (chmod 600 '{shown}')",
                    m.permissions().mode() & 0o7777
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(fail(format!(
                    "the key file {shown} (vault_key_file in config.json) does not exist: run `workbench setup`, or restore it from your backup"
                )));
            }
            Err(e) => return Err(fail(format!("cannot read the key file {shown}: {e}"))),
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read the key file {shown}: {e}")))?;
    let key = text.trim();
    if key.chars().count() < MIN_KEY_CHARS {
        return Err(fail(format!(
            "the key file {shown} holds fewer than {MIN_KEY_CHARS} characters, too short to be a key"
        )));
    }
    Ok(Secret::new(key.to_string()))
}

pub struct FileStore {
    path: PathBuf,
    passphrase: Mutex<Passphrase>,
    /// (salt, key) of the last derivation, so each call does not pay Argon2 again.
    key: Mutex<Option<(Vec<u8>, [u8; 32])>>,
    /// Serialises this process's own readers and writers (the file lock does so across processes).
    io: Mutex<()>,
}

const M_COST: u32 = 19 * 1024;
const T_COST: u32 = 2;
const P_COST: u32 = 1;

fn fail(reason: impl Into<String>) -> StoreError {
    StoreError::Unavailable { store: "file", reason: reason.into() }
}

impl FileStore {
    /// Where the key comes from, in words (for status, doctor and the portal; never the key).
    pub fn key_source(&self) -> String {
        match &*self.passphrase.lock().unwrap_or_else(|p| p.into_inner()) {
            Passphrase::Value(_) => "the passphrase in WORKBENCH_VAULT_PASSPHRASE".into(),
            Passphrase::Command(_) => "the passphrase WORKBENCH_VAULT_PASSPHRASE_COMMAND prints".into(),
            Passphrase::KeyFile(p) => format!("the key file {}", p.display()),
            Passphrase::Missing => "a passphrase typed on the local unlock page".into(),
        }
    }

    pub fn new(path: PathBuf, passphrase: Passphrase) -> Self {
        FileStore { path, passphrase: Mutex::new(passphrase), key: Mutex::new(None), io: Mutex::new(()) }
    }

    /// Runs `f` holding the in-process mutex and an exclusive lock on the lock file, so a read,
    /// change and rewrite by one process or task never interleaves with another's.
    fn locked_io<T>(&self, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        let _guard = self.io.lock().unwrap_or_else(|p| p.into_inner());
        let lock_path = self.path.with_extension("enc.lock");
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        }
        let file = open_private(&lock_path, false)
            .map_err(|e| fail(format!("cannot open the lock file {}: {e}", lock_path.display())))?;
        file.lock().map_err(|e| fail(format!("cannot lock {}: {e}", lock_path.display())))?;
        let result = f();
        // Closing the file releases the lock too; unlocking first says so explicitly.
        let _ = file.unlock();
        result
    }

    fn passphrase(&self) -> Result<Secret<String>, StoreError> {
        let source = self.passphrase.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match &source {
            Passphrase::Value(v) => Ok(v.clone()),
            Passphrase::Command(cmd) => {
                let out = crate::platform::shell_command(cmd)
                    .stdin(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .output()
                    .map_err(|e| fail(format!("WORKBENCH_VAULT_PASSPHRASE_COMMAND could not run: {e}")))?;
                if !out.status.success() {
                    return Err(fail(format!("WORKBENCH_VAULT_PASSPHRASE_COMMAND exited with {}", out.status)));
                }
                let text = String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']).to_string();
                if text.is_empty() {
                    return Err(fail("WORKBENCH_VAULT_PASSPHRASE_COMMAND printed nothing"));
                }
                Ok(Secret::new(text))
            }
            Passphrase::KeyFile(path) => read_key_file(path),
            Passphrase::Missing => Err(fail(
                "the encrypted file store is locked: type its passphrase on the local unlock page, or set WORKBENCH_VAULT_PASSPHRASE, or WORKBENCH_VAULT_PASSPHRASE_COMMAND (a command that prints it, e.g. `pass show workbench`)",
            )),
        }
    }

    fn derive(&self, salt: &[u8]) -> Result<[u8; 32], StoreError> {
        let mut cached = self.key.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, k)) = cached.as_ref()
            && s == salt
        {
            return Ok(*k);
        }
        let pass = self.passphrase()?;
        let params = argon2::Params::new(M_COST, T_COST, P_COST, Some(32)).map_err(|e| fail(e.to_string()))?;
        let argon = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let mut key = [0u8; 32];
        argon.hash_password_into(pass.expose().as_bytes(), salt, &mut key).map_err(|e| fail(e.to_string()))?;
        *cached = Some((salt.to_vec(), key));
        Ok(key)
    }

    fn load(&self) -> Result<(Vec<u8>, BTreeMap<String, String>), StoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // No file yet: still refuse without a passphrase, or nothing could be stored later.
                self.passphrase()?;
                let mut salt = vec![0u8; 16];
                getrandom::fill(&mut salt).map_err(|e| fail(e.to_string()))?;
                return Ok((salt, BTreeMap::new()));
            }
            Err(e) => return Err(fail(format!("cannot read {}: {e}", self.path.display()))),
        };
        let sealed: Sealed =
            serde_json::from_str(&text).map_err(|e| fail(format!("{} is damaged: {e}", self.path.display())))?;
        let salt = base64_decode(&sealed.salt).ok_or_else(|| fail("damaged salt"))?;
        let nonce = base64_decode(&sealed.nonce).ok_or_else(|| fail("damaged nonce"))?;
        let ciphertext = base64_decode(&sealed.ciphertext).ok_or_else(|| fail("damaged ciphertext"))?;
        if nonce.len() != 24 {
            return Err(fail("damaged nonce"));
        }
        let key = self.derive(&salt)?;
        let cipher = XChaCha20Poly1305::new(&key.into());
        let plain = cipher.decrypt(XNonce::from_slice(&nonce), ciphertext.as_ref()).map_err(|_| {
            // A wrong passphrase must not stay cached.
            *self.key.lock().unwrap_or_else(|p| p.into_inner()) = None;
            fail(format!("the passphrase does not open {}", self.path.display()))
        })?;
        let map = serde_json::from_slice(&plain).map_err(|e| fail(format!("damaged contents: {e}")))?;
        Ok((salt, map))
    }

    fn save(&self, salt: &[u8], map: &BTreeMap<String, String>) -> Result<(), StoreError> {
        let key = self.derive(salt)?;
        let cipher = XChaCha20Poly1305::new(&key.into());
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).map_err(|e| fail(e.to_string()))?;
        let plain = serde_json::to_vec(map).map_err(|e| fail(e.to_string()))?;
        let ciphertext =
            cipher.encrypt(XNonce::from_slice(&nonce), plain.as_ref()).map_err(|_| fail("encryption failed"))?;
        let sealed = Sealed {
            version: 1,
            kdf: "argon2id".into(),
            m_cost: M_COST,
            t_cost: T_COST,
            p_cost: P_COST,
            salt: base64_encode(salt),
            nonce: base64_encode(&nonce),
            ciphertext: base64_encode(&ciphertext),
        };
        replace_file(&self.path, serde_json::to_string(&sealed).unwrap_or_default().as_bytes())
    }
}

/// Opens `path` for writing with mode 0600 (on Unix): `create_new` for temp files, or created if
/// missing (the lock file).
fn open_private(path: &Path, create_new: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if create_new {
        options.create_new(true);
    } else {
        options.create(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Replaces `path` with `bytes` atomically: a temp file of its own (random name, `create_new`,
/// mode 0600) written and fsync'd, renamed over `path`, then the directory fsync'd (Unix) so the
/// rename itself survives a crash. The temp file is removed on any failure.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|e| fail(e.to_string()))?;
    let hex = hex::encode(suffix);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "secrets.enc".into());
    let tmp = path.with_file_name(format!(".{name}.{hex}.tmp"));
    let written = open_private(&tmp, true).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!("cannot write {}: {e}", tmp.display())));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(format!("cannot replace {}: {e}", path.display())));
    }
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        File::open(dir).and_then(|d| d.sync_all()).map_err(|e| fail(format!("cannot sync {}: {e}", dir.display())))?;
    }
    Ok(())
}

impl SecretStore for FileStore {
    fn name(&self) -> &'static str {
        "file"
    }

    fn describe(&self) -> String {
        format!("the encrypted file {}, opened with {}", self.path.display(), self.key_source())
    }

    fn get(&self, key: &str) -> Result<Option<Secret<String>>, StoreError> {
        // Under the lock, so a read never meets a half-finished write's state of the world.
        let (_, map) = self.locked_io(|| self.load())?;
        Ok(map.get(key).cloned().map(Secret::new))
    }

    fn set(&self, key: &str, value: &Secret<String>) -> Result<(), StoreError> {
        self.locked_io(|| {
            let (salt, mut map) = self.load()?;
            map.insert(key.to_string(), value.expose().clone());
            self.save(&salt, &map)
        })
    }

    fn locked(&self) -> bool {
        matches!(*self.passphrase.lock().unwrap_or_else(|p| p.into_inner()), Passphrase::Missing)
    }

    fn unlock(&self, passphrase: Secret<String>) -> Result<(), StoreError> {
        let previous = std::mem::replace(
            &mut *self.passphrase.lock().unwrap_or_else(|p| p.into_inner()),
            Passphrase::Value(passphrase),
        );
        *self.key.lock().unwrap_or_else(|p| p.into_inner()) = None;
        // An existing file must open with it; a wrong passphrase leaves the store locked.
        if let Err(e) = self.locked_io(|| self.load()) {
            *self.passphrase.lock().unwrap_or_else(|p| p.into_inner()) = previous;
            return Err(e);
        }
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.locked_io(|| {
            let (salt, mut map) = self.load()?;
            let had = map.remove(key).is_some();
            if had {
                self.save(&salt, &map)?;
            }
            Ok(had)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_round_trips_and_refuses_a_wrong_passphrase() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.enc");
        let store = FileStore::new(path.clone(), Passphrase::Value(Secret::new("correct horse".into())));
        assert!(store.get("a").unwrap().is_none());
        store.set("a", &Secret::new("s3cret-value-42".into())).unwrap();
        store.set("b", &Secret::new("other".into())).unwrap();
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "s3cret-value-42");
        assert!(store.delete("b").unwrap());
        assert!(!store.delete("b").unwrap());
        let raw = std::fs::read_to_string(&path).unwrap();
        assert!(!raw.contains("s3cret-value-42"), "the file holds ciphertext only");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // A second process with the same passphrase reads it; a wrong one is told so.
        let again = FileStore::new(path.clone(), Passphrase::Command("printf 'correct horse'".into()));
        assert_eq!(again.get("a").unwrap().unwrap().expose(), "s3cret-value-42");
        let wrong = FileStore::new(path.clone(), Passphrase::Value(Secret::new("wrong".into())));
        let err = wrong.get("a").unwrap_err().to_string();
        assert!(err.contains("passphrase does not open"), "{err}");
        let missing = FileStore::new(path, Passphrase::Missing);
        assert!(missing.locked());
        assert!(missing.get("a").unwrap_err().to_string().contains("WORKBENCH_VAULT_PASSPHRASE"));
        assert!(missing.unlock(Secret::new("wrong".into())).is_err());
        assert!(missing.locked(), "a wrong passphrase leaves it locked");
        missing.unlock(Secret::new("correct horse".into())).unwrap();
        assert!(!missing.locked());
        assert_eq!(missing.get("a").unwrap().unwrap().expose(), "s3cret-value-42");
    }

    /// Attack (data loss): concurrent writers read, changed and rewrote the file without a lock
    /// through one fixed temp name, so writes were lost and renames failed. 16 threads on one store
    /// and 16 on a second store of the same file (as another process would open it) x 8 writes
    /// each: every value is there, no call fails, no temp file is left, the file stays 0600.
    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.enc");
        let pass = || Passphrase::Value(Secret::new("correct horse".into()));
        let stores = [
            std::sync::Arc::new(FileStore::new(path.clone(), pass())),
            std::sync::Arc::new(FileStore::new(path.clone(), pass())),
        ];
        std::thread::scope(|scope| {
            for t in 0..32 {
                let store = stores[t % 2].clone();
                scope.spawn(move || {
                    for i in 0..8 {
                        store.set(&format!("k{t}-{i}"), &Secret::new(format!("value-{t}-{i}"))).unwrap();
                    }
                });
            }
        });
        let fresh = FileStore::new(path.clone(), pass());
        for t in 0..32 {
            for i in 0..8 {
                assert_eq!(fresh.get(&format!("k{t}-{i}")).unwrap().unwrap().expose(), &format!("value-{t}-{i}"));
            }
        }
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for n in ["secrets.enc", "secrets.enc.lock"] {
                assert_eq!(std::fs::metadata(dir.path().join(n)).unwrap().permissions().mode() & 0o777, 0o600, "{n}");
            }
        }
    }
}
