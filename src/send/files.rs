//! Local files for uploads and downloads, confined to the one folder the user chose.
//!
//! Tools take paths instead of pushing large base64 blobs through the agent, and the agent may be
//! prompt-injected, so every path is held to the files folder (`Settings::files_dir`:
//! `WORKBENCH_FILES_DIR` or `files_dir` in config.json, default `~/workbench-files`, created with
//! mode 0700 on first use). A path is absolute or relative to the folder; `~` is not expanded.
//! Symlinks are resolved (the file itself when reading, its folder when writing) and the result
//! must lie inside the canonical folder. Refused, with an error naming the folder and how to
//! change it: anything outside, `..`, any hidden component (`.ssh`, `.bashrc`) inside the folder,
//! workbench's data directory and anything under it (even when the folder contains it), and
//! anything but a regular file.
//!
//! Writes go into a folder that already exists inside the files folder (intermediate folders are
//! never created), never through a symlink at the final component: the bytes go to a fresh temp
//! file (create-new, in the resolved folder), are fsynced, and then take the target's name by
//! rename (replace, only with `overwrite` and only over a regular file) or by hard link (no
//! replace: fails if the name appeared meanwhile). The parent is resolved once and everything
//! after works on that resolved path. Sizes are capped.
//!
//! On unix the resolved path is then walked again from an open handle of the folder, one
//! component at a time with `openat(O_NOFOLLOW)` ([`beneath`]), and every later step (the file's
//! open, the temp file, the link or rename into place, the fsync) works on the parent folder's
//! handle: a folder on the way swapped for a link by another local process between the check and
//! the open makes the open fail (`ELOOP`/`ENOTDIR`), it never leads out. A file with more than one
//! hard link is refused for reads and writes (its other name may be outside the folder, and
//! nothing in the folder tells where), with the same error as a link out of the folder.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use plugins::api::ToolError;

use crate::config::Settings;

/// Largest file a tool may upload or download.
pub const MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;

/// Where local files may be read and written: the user's files folder, minus workbench's own
/// data directory.
#[derive(Debug, Clone)]
pub struct FilesDir {
    /// The folder as the user configured it (shown in errors).
    pub folder: PathBuf,
    /// workbench's data directory (`Settings::home`): never readable or writable as a file.
    pub data_dir: PathBuf,
}

impl FilesDir {
    pub fn of(settings: &Settings) -> FilesDir {
        FilesDir { folder: settings.files_dir.clone(), data_dir: settings.home.clone() }
    }

    /// `path` as the user would find it: relative paths are shown inside the folder.
    pub fn shown(&self, path: &str) -> String {
        let p = Path::new(path);
        if p.is_absolute() || path.starts_with('~') {
            path.to_string()
        } else {
            self.folder.join(p).display().to_string()
        }
    }

    fn tail(&self) -> String {
        format!(
            "use a file in the files folder {} (an absolute path, or one relative to it); the user can choose another folder with WORKBENCH_FILES_DIR or files_dir in config.json",
            self.folder.display()
        )
    }

    /// An argument error for `path`: `why`, then where files may be and how to change it.
    fn refuse(&self, path: &str, why: &str) -> ToolError {
        ToolError::invalid(format!("'{path}' {why}; {}", self.tail()))
    }

    fn outside(&self, path: &str) -> ToolError {
        ToolError::invalid(format!(
            "'{path}' is outside the files folder {}; put the file there, or the user can choose another folder with WORKBENCH_FILES_DIR or files_dir in config.json",
            self.folder.display()
        ))
    }

    /// A file with more than one hard link: its other names may be anywhere on the disk.
    fn hard_linked(&self, path: &str, links: u64) -> ToolError {
        ToolError::invalid(format!(
            "'{path}' is outside the files folder {}: it is a hard link (the same file has {links} names, and the others may be outside the folder), and workbench never reads or writes a hard-linked file; copy the file into the folder instead, or the user can choose another folder with WORKBENCH_FILES_DIR or files_dir in config.json",
            self.folder.display()
        ))
    }

    /// The canonical folder (created, mode 0700, when missing) and the canonical data directory.
    fn root(&self) -> Result<(PathBuf, PathBuf), ToolError> {
        let data = canonical_lenient(&self.data_dir);
        let folder_error = |why: String| {
            ToolError::invalid(format!(
                "the files folder {} {why}; the user can choose another folder with WORKBENCH_FILES_DIR or files_dir in config.json",
                self.folder.display()
            ))
        };
        if !self.folder.is_absolute() {
            return Err(folder_error("is not an absolute path".into()));
        }
        if canonical_lenient(&self.folder).starts_with(&data) {
            return Err(folder_error(format!(
                "is inside workbench's data directory {}, which is never read or written as local files",
                self.data_dir.display()
            )));
        }
        if std::fs::symlink_metadata(&self.folder).is_err() {
            create_private_dir(&self.folder).map_err(|e| folder_error(format!("could not be created: {e}")))?;
            tracing::info!(folder = %self.folder.display(), "created the files folder");
        }
        let real = std::fs::canonicalize(&self.folder).map_err(|e| folder_error(format!("cannot be opened: {e}")))?;
        if !real.is_dir() {
            return Err(folder_error("is not a folder".into()));
        }
        if real.starts_with(&data) {
            return Err(folder_error(format!(
                "is inside workbench's data directory {}, which is never read or written as local files",
                self.data_dir.display()
            )));
        }
        Ok((real, data))
    }

    /// The checks on the path as given, before anything is resolved; returns the path joined to
    /// the canonical folder when it is relative.
    fn lexical(&self, path: &str, root: &Path) -> Result<PathBuf, ToolError> {
        if path.trim().is_empty() {
            return Err(ToolError::invalid(format!("the path is empty; {}", self.tail())));
        }
        if path.starts_with('~') {
            return Err(self.refuse(path, "starts with '~', which workbench does not expand"));
        }
        if path.contains('\0') {
            return Err(self.refuse(path, "contains a NUL byte"));
        }
        let p = Path::new(path);
        if p.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(self.refuse(path, "contains '..'"));
        }
        // Hidden names are checked in the part of the path below the folder as written too, so
        // a link named `.x` is refused before it is resolved.
        let below =
            if p.is_absolute() { p.strip_prefix(&self.folder).or_else(|_| p.strip_prefix(root)).ok() } else { Some(p) };
        if let Some(name) = below.and_then(hidden_component) {
            return Err(self.hidden(path, name));
        }
        Ok(if p.is_absolute() { p.to_path_buf() } else { root.join(p) })
    }

    fn hidden(&self, path: &str, name: &std::ffi::OsStr) -> ToolError {
        self.refuse(
            path,
            &format!(
                "names the hidden file or folder '{}', and workbench never reads or writes hidden files, even in the files folder",
                name.to_string_lossy()
            ),
        )
    }

    /// The checks on a resolved path: inside the folder, not in the data directory, nothing
    /// hidden on the way.
    fn contained(&self, path: &str, real: &Path, root: &Path, data: &Path) -> Result<(), ToolError> {
        if real.starts_with(data) {
            return Err(self.refuse(
                path,
                &format!(
                    "is in workbench's data directory {}, which is never read or written as a local file",
                    self.data_dir.display()
                ),
            ));
        }
        let Ok(below) = real.strip_prefix(root) else { return Err(self.outside(path)) };
        if let Some(name) = hidden_component(below) {
            return Err(self.hidden(path, name));
        }
        Ok(())
    }
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

fn hidden_component(p: &Path) -> Option<&std::ffi::OsStr> {
    p.components().find_map(|c| match c {
        Component::Normal(n) if is_hidden(n) => Some(n),
        _ => None,
    })
}

/// The canonical form of `p`'s longest existing ancestor with the rest appended (the data
/// directory may not exist yet).
fn canonical_lenient(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = p;
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

fn create_private_dir(p: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(p)
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Windows has no stable file id in the standard library: size and modification time, and
/// [`open_read`] never follows a link swapped in after the checks.
#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// How many names (hard links) a file has.
#[cfg(unix)]
fn links(m: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(m)
}

#[cfg(not(unix))]
fn links(_: &std::fs::Metadata) -> u64 {
    1
}

/// An open that failed on the way down from the folder's handle: a link where a folder was
/// (`ELOOP`, `ENOTDIR`) means something changed the path since it was checked.
fn swapped_or(dir: &FilesDir, path: &str, e: std::io::Error, doing: &str) -> ToolError {
    #[cfg(unix)]
    if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) {
        return dir.refuse(path, "changed while it was being opened (a folder on the way became a link); try again");
    }
    dir.refuse(path, &format!("cannot be {doing} ({e})"))
}

/// Paths resolved from an open folder handle, never following a link (unix: `openat` with
/// `O_NOFOLLOW` per component and the `*at` calls after it); elsewhere, by path.
mod beneath {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    #[cfg(unix)]
    use std::path::Component;
    use std::path::{Path, PathBuf};

    /// What `stat` says about a name in the folder (without following it).
    pub struct Stat {
        pub symlink: bool,
        pub file: bool,
        pub links: u64,
    }

    pub struct Dir {
        #[cfg(unix)]
        fd: std::os::fd::OwnedFd,
        #[cfg_attr(unix, allow(dead_code))]
        path: PathBuf,
    }

    #[cfg(unix)]
    fn c_name(name: &OsStr) -> io::Result<std::ffi::CString> {
        use std::os::unix::ffi::OsStrExt;
        if name.as_bytes().contains(&b'/') {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        std::ffi::CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
    }

    #[cfg(unix)]
    fn open_at(
        dir: libc::c_int,
        name: &OsStr,
        flags: libc::c_int,
        mode: libc::c_uint,
    ) -> io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::FromRawFd;
        let c = c_name(name)?;
        // SAFETY: `c` is a valid NUL-terminated string that outlives the call; the returned
        // descriptor is new and owned by nobody else.
        let fd = unsafe { libc::openat(dir, c.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOFOLLOW, mode) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by openat and is open.
        Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
    }

    #[cfg(unix)]
    fn check(r: libc::c_int) -> io::Result<()> {
        if r < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    impl Dir {
        /// The folder `root` (canonical), then each component of `below` without following links.
        #[cfg(unix)]
        pub fn open(root: &Path, below: &Path) -> io::Result<Dir> {
            use std::os::fd::AsRawFd;
            use std::os::unix::fs::OpenOptionsExt;
            let root_file =
                std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC).open(root)?;
            let mut fd: std::os::fd::OwnedFd = root_file.into();
            for c in below.components() {
                let Component::Normal(name) = c else { return Err(io::Error::from_raw_os_error(libc::EINVAL)) };
                fd = open_at(fd.as_raw_fd(), name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            }
            Ok(Dir { fd, path: root.join(below) })
        }

        #[cfg(not(unix))]
        pub fn open(root: &Path, below: &Path) -> io::Result<Dir> {
            Ok(Dir { path: root.join(below) })
        }

        /// Opens `name` for reading (not a link; a FIFO does not block the open).
        #[cfg(unix)]
        pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
            use std::os::fd::AsRawFd;
            Ok(File::from(open_at(self.fd.as_raw_fd(), name, libc::O_RDONLY | libc::O_NONBLOCK, 0)?))
        }

        /// On Windows a symbolic link or junction put in the file's place after the checks opens
        /// as itself (`FILE_FLAG_OPEN_REPARSE_POINT`), which is then not a regular file and refused.
        #[cfg(not(unix))]
        pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
            let mut options = std::fs::OpenOptions::new();
            options.read(true);
            #[cfg(windows)]
            std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, 0x0020_0000);
            options.open(self.path.join(name))
        }

        /// Creates `name` new (fails if anything has that name, a dangling link included).
        #[cfg(unix)]
        pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
            use std::os::fd::AsRawFd;
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
            Ok(File::from(open_at(self.fd.as_raw_fd(), name, flags, 0o666)?))
        }

        #[cfg(not(unix))]
        pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
            std::fs::OpenOptions::new().write(true).create_new(true).open(self.path.join(name))
        }

        /// What `name` is, without following it; `None` when nothing has that name.
        #[cfg(unix)]
        pub fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
            use std::os::fd::AsRawFd;
            let c = c_name(name)?;
            // SAFETY: an all-zero `stat` is a valid value for fstatat to overwrite.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid descriptor, NUL-terminated name and a writable stat buffer.
            let r = unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
            if r < 0 {
                let e = io::Error::last_os_error();
                return if e.kind() == io::ErrorKind::NotFound { Ok(None) } else { Err(e) };
            }
            let kind = st.st_mode & libc::S_IFMT;
            Ok(Some(Stat { symlink: kind == libc::S_IFLNK, file: kind == libc::S_IFREG, links: st.st_nlink as u64 }))
        }

        #[cfg(not(unix))]
        pub fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
            match std::fs::symlink_metadata(self.path.join(name)) {
                Ok(m) => Ok(Some(Stat { symlink: m.file_type().is_symlink(), file: m.is_file(), links: 1 })),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        /// Gives the file `from` the name `to` too (fails if `to` exists).
        #[cfg(unix)]
        pub fn link(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            use std::os::fd::AsRawFd;
            let (a, b) = (c_name(from)?, c_name(to)?);
            let fd = self.fd.as_raw_fd();
            // SAFETY: valid descriptor and NUL-terminated names; no flag: links are not followed.
            check(unsafe { libc::linkat(fd, a.as_ptr(), fd, b.as_ptr(), 0) })
        }

        #[cfg(not(unix))]
        pub fn link(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            std::fs::hard_link(self.path.join(from), self.path.join(to))
        }

        /// Moves `from` over `to` (the directory entry is replaced, never followed).
        #[cfg(unix)]
        pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            use std::os::fd::AsRawFd;
            let (a, b) = (c_name(from)?, c_name(to)?);
            let fd = self.fd.as_raw_fd();
            // SAFETY: valid descriptor and NUL-terminated names.
            check(unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) })
        }

        #[cfg(not(unix))]
        pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
            std::fs::rename(self.path.join(from), self.path.join(to))
        }

        #[cfg(unix)]
        pub fn remove(&self, name: &OsStr) -> io::Result<()> {
            use std::os::fd::AsRawFd;
            let c = c_name(name)?;
            // SAFETY: valid descriptor and NUL-terminated name.
            check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) })
        }

        #[cfg(not(unix))]
        pub fn remove(&self, name: &OsStr) -> io::Result<()> {
            std::fs::remove_file(self.path.join(name))
        }

        /// Flushes the folder's entries (a new name survives a crash).
        pub fn sync(&self) {
            #[cfg(unix)]
            {
                use std::os::fd::AsRawFd;
                // SAFETY: a valid, open descriptor.
                unsafe { libc::fsync(self.fd.as_raw_fd()) };
            }
        }
    }
}

fn too_large() -> String {
    format!("is larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)
}

/// Reads a file inside the files folder.
pub async fn read(dir: &FilesDir, path: &str) -> Result<Vec<u8>, ToolError> {
    let (dir, path) = (dir.clone(), path.to_string());
    tokio::task::spawn_blocking(move || read_blocking(&dir, &path))
        .await
        .map_err(|e| ToolError::Internal(format!("reading a local file failed: {e}")))?
}

fn read_blocking(dir: &FilesDir, path: &str) -> Result<Vec<u8>, ToolError> {
    let (root, data) = dir.root()?;
    let full = dir.lexical(path, &root)?;
    let real = match std::fs::canonicalize(&full) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Say "outside" rather than "missing" for a path that could never be read.
            let parent = full.parent().map(canonical_lenient).unwrap_or_default();
            dir.contained(path, &parent, &root, &data)?;
            return Err(dir.refuse(path, "does not exist"));
        }
        Err(e) => return Err(dir.refuse(path, &format!("cannot be read ({e})"))),
    };
    dir.contained(path, &real, &root, &data)?;
    // The name as given, too (a hidden-named link reached through another spelling of the folder).
    if let Some(name) = Path::new(path).file_name().filter(|n| is_hidden(n)) {
        return Err(dir.hidden(path, name));
    }
    let before = std::fs::symlink_metadata(&real).map_err(|e| dir.refuse(path, &format!("cannot be read ({e})")))?;
    if !before.is_file() {
        return Err(dir.refuse(path, "is not a regular file (a folder, link, device or pipe)"));
    }
    if before.len() > MAX_FILE_BYTES {
        return Err(dir.refuse(path, &too_large()));
    }
    if links(&before) > 1 {
        return Err(dir.hard_linked(path, links(&before)));
    }
    let below = real.strip_prefix(&root).map_err(|_| dir.outside(path))?;
    let (Some(parent), Some(name)) = (below.parent(), below.file_name()) else {
        return Err(dir.refuse(path, "does not name a file"));
    };
    let mut file = beneath::Dir::open(&root, parent)
        .and_then(|d| d.open_read(name))
        .map_err(|e| swapped_or(dir, path, e, "read"))?;
    let opened = file.metadata().map_err(|e| dir.refuse(path, &format!("cannot be read ({e})")))?;
    // Something swapped the file (for a link, say) between the checks and the open.
    if !opened.is_file() || !same_file(&before, &opened) {
        return Err(dir.refuse(path, "changed while it was being opened; try again"));
    }
    if links(&opened) > 1 {
        return Err(dir.hard_linked(path, links(&opened)));
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    (&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| dir.refuse(path, &format!("cannot be read ({e})")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(dir.refuse(path, &too_large()));
    }
    Ok(bytes)
}

/// Writes a file inside the files folder; replaces an existing regular file only with
/// `overwrite`. Returns the number of bytes written.
pub async fn write(dir: &FilesDir, path: &str, bytes: Vec<u8>, overwrite: bool) -> Result<u64, ToolError> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ToolError::invalid(format!("the download is larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)));
    }
    let (dir, path) = (dir.clone(), path.to_string());
    tokio::task::spawn_blocking(move || write_blocking(&dir, &path, &bytes, overwrite))
        .await
        .map_err(|e| ToolError::Internal(format!("writing a local file failed: {e}")))?
}

fn write_blocking(dir: &FilesDir, path: &str, bytes: &[u8], overwrite: bool) -> Result<u64, ToolError> {
    let (root, data) = dir.root()?;
    let full = dir.lexical(path, &root)?;
    if path.ends_with(['/', '\\']) {
        return Err(dir.refuse(path, "names a folder; give the file's name too"));
    }
    let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
        return Err(dir.refuse(path, "does not name a file"));
    };
    let real_parent = match std::fs::canonicalize(parent) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            dir.contained(path, &canonical_lenient(parent), &root, &data)?;
            return Err(dir.refuse(
                path,
                &format!(
                    "goes into the folder {}, which does not exist (workbench creates no folders but the files folder itself)",
                    parent.display()
                ),
            ));
        }
        Err(e) => return Err(dir.refuse(path, &format!("cannot be written ({e})"))),
    };
    // The parent is resolved once; everything below works on that resolved path.
    dir.contained(path, &real_parent, &root, &data)?;
    if !real_parent.is_dir() {
        return Err(dir.refuse(path, &format!("goes into {}, which is not a folder", parent.display())));
    }
    let target = real_parent.join(name);
    dir.contained(path, &target, &root, &data)?;
    if is_hidden(name) {
        return Err(dir.hidden(path, name));
    }
    let below = real_parent.strip_prefix(&root).map_err(|_| dir.outside(path))?;
    // Everything from here works on the folder's handle, reached without following a link.
    let folder = beneath::Dir::open(&root, below).map_err(|e| swapped_or(dir, path, e, "written"))?;
    let exists = match folder.stat(name) {
        Ok(Some(m)) if m.symlink => {
            return Err(dir.refuse(path, "is a symbolic link, and workbench never writes through a link"));
        }
        Ok(Some(m)) if !m.file => return Err(dir.refuse(path, "exists and is not a regular file")),
        Ok(Some(m)) if m.links > 1 => return Err(dir.hard_linked(path, m.links)),
        Ok(Some(_)) => true,
        Ok(None) => false,
        Err(e) => return Err(dir.refuse(path, &format!("cannot be written ({e})"))),
    };
    if exists && !overwrite {
        return Err(already_exists(path));
    }
    let fail = |e: std::io::Error| dir.refuse(path, &format!("cannot be written ({e})"));
    // A fresh, unique temp file beside the target: create-new never follows or reuses anything.
    let tmp = std::ffi::OsString::from(format!(".{}.{}.part", name.to_string_lossy(), crate::ids::random_hex(8)));
    let written = (|| {
        let mut f = folder.create_new(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = folder.remove(&tmp);
        return Err(fail(e));
    }
    let placed = if exists {
        // Replaces the directory entry itself (a link swapped in meanwhile is replaced, not followed).
        folder.rename(&tmp, name).map_err(fail)
    } else {
        // A hard link fails when the name appeared meanwhile: no silent replace.
        match folder.link(&tmp, name) {
            Ok(()) => {
                let _ = folder.remove(&tmp);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(already_exists(path)),
            // File systems without hard links: the name was free a moment ago.
            Err(_) => folder.rename(&tmp, name).map_err(fail),
        }
    };
    if placed.is_err() {
        let _ = folder.remove(&tmp);
    }
    placed?;
    folder.sync();
    Ok(bytes.len() as u64)
}

fn already_exists(path: &str) -> ToolError {
    ToolError::invalid(format!("'{path}' already exists; pass overwrite: true to replace it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _tmp: tempfile::TempDir,
        dir: FilesDir,
        /// Stands in for the user's home: holds `.ssh/id_rsa` and `.bashrc`, outside the folder.
        home: PathBuf,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
        std::fs::write(home.join(".bashrc"), "echo hi").unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("workbench.db"), "sqlite").unwrap();
        let dir = FilesDir { folder: home.join("workbench-files"), data_dir: data };
        Fixture { _tmp: tmp, dir, home }
    }

    fn message(e: ToolError) -> String {
        match e {
            ToolError::InvalidArguments { message, .. } => message,
            other => panic!("expected an argument error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn round_trip_relative_and_absolute_and_no_silent_overwrite() {
        let f = fixture();
        assert_eq!(write(&f.dir, "a.txt", b"hello".to_vec(), false).await.unwrap(), 5);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&f.dir.folder).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "the folder is created private on first use");
        }
        let abs = f.dir.folder.join("a.txt");
        assert_eq!(read(&f.dir, abs.to_str().unwrap()).await.unwrap(), b"hello");
        assert_eq!(read(&f.dir, "a.txt").await.unwrap(), b"hello");
        let e = message(write(&f.dir, "a.txt", b"x".to_vec(), false).await.unwrap_err());
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(write(&f.dir, "a.txt", b"x".to_vec(), true).await.unwrap(), 1);
        assert_eq!(std::fs::read(&abs).unwrap(), b"x");
        std::fs::create_dir(f.dir.folder.join("sub")).unwrap();
        write(&f.dir, "sub/b.txt", b"b".to_vec(), false).await.unwrap();
        assert_eq!(read(&f.dir, "sub/b.txt").await.unwrap(), b"b");
        let leftovers: Vec<_> = std::fs::read_dir(&f.dir.folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".part"))
            .collect();
        assert!(leftovers.is_empty(), "no temp files left: {leftovers:?}");
    }

    /// Attack: an injected agent reads `~/.ssh/id_rsa` and the data directory's database.
    #[tokio::test]
    async fn outside_paths_and_the_data_dir_are_refused_naming_the_folder() {
        let f = fixture();
        for p in [f.home.join(".ssh/id_rsa"), f.dir.data_dir.join("workbench.db"), PathBuf::from("/etc/passwd")] {
            let e = message(read(&f.dir, p.to_str().unwrap()).await.unwrap_err());
            assert!(e.contains(&f.dir.folder.display().to_string()) && e.contains("WORKBENCH_FILES_DIR"), "{e}");
            assert!(e.contains("files_dir in config.json"), "{e}");
        }
        let e = message(read(&f.dir, f.home.join(".ssh/id_rsa").to_str().unwrap()).await.unwrap_err());
        assert!(e.contains("is outside the files folder"), "{e}");
        for p in ["~/.ssh/id_rsa", "../.bashrc", "sub/../../.bashrc", ""] {
            let e = message(read(&f.dir, p).await.unwrap_err());
            assert!(e.contains("WORKBENCH_FILES_DIR"), "{p}: {e}");
        }
        assert!(message(read(&f.dir, "~/x").await.unwrap_err()).contains("does not expand"));
        let bashrc = f.home.join(".bashrc");
        assert!(write(&f.dir, bashrc.to_str().unwrap(), b"pwned".to_vec(), true).await.is_err());
        assert_eq!(std::fs::read(&bashrc).unwrap(), b"echo hi");
        assert!(write(&f.dir, f.home.join(".ssh/authorized_keys").to_str().unwrap(), vec![1], false).await.is_err());
        assert!(!f.home.join(".ssh/authorized_keys").exists());
    }

    /// Attack: dotfiles (and dot-folders) inside the folder, directly or through a link's name.
    #[tokio::test]
    async fn hidden_names_are_refused_inside_the_folder() {
        let f = fixture();
        write(&f.dir, "ok.txt", b"x".to_vec(), false).await.unwrap();
        std::fs::create_dir(f.dir.folder.join(".git")).unwrap();
        std::fs::write(f.dir.folder.join(".env"), "SECRET=1").unwrap();
        std::fs::write(f.dir.folder.join(".git/config"), "x").unwrap();
        for p in [".env", ".git/config", f.dir.folder.join(".env").to_str().unwrap()] {
            let e = message(read(&f.dir, p).await.unwrap_err());
            assert!(e.contains("hidden") && e.contains("WORKBENCH_FILES_DIR"), "{e}");
        }
        assert!(write(&f.dir, ".profile", vec![1], false).await.is_err());
        assert!(write(&f.dir, ".git/hooks-x", vec![1], false).await.is_err());
        assert!(!f.dir.folder.join(".profile").exists());
        #[cfg(unix)]
        {
            // A visible link to a hidden file, and a hidden-named link to a visible one.
            std::os::unix::fs::symlink(f.dir.folder.join(".env"), f.dir.folder.join("env.txt")).unwrap();
            std::os::unix::fs::symlink(f.dir.folder.join("ok.txt"), f.dir.folder.join(".ok")).unwrap();
            assert!(message(read(&f.dir, "env.txt").await.unwrap_err()).contains("hidden"));
            assert!(message(read(&f.dir, ".ok").await.unwrap_err()).contains("hidden"));
        }
    }

    /// Attack: a symlink planted in the folder points at `~/.ssh/id_rsa` (read) or `~/.bashrc`
    /// (write); neither is followed out.
    #[cfg(unix)]
    #[tokio::test]
    async fn symlinks_out_of_the_folder_are_never_followed() {
        let f = fixture();
        write(&f.dir, "seed.txt", b"x".to_vec(), false).await.unwrap();
        let folder = &f.dir.folder;
        std::os::unix::fs::symlink(f.home.join(".ssh/id_rsa"), folder.join("key.txt")).unwrap();
        std::os::unix::fs::symlink(f.home.join(".bashrc"), folder.join("notes.txt")).unwrap();
        std::os::unix::fs::symlink(f.home.join(".ssh"), folder.join("keys")).unwrap();
        std::os::unix::fs::symlink(folder.join("seed.txt"), folder.join("inside-link.txt")).unwrap();
        let e = message(read(&f.dir, "key.txt").await.unwrap_err());
        assert!(e.contains("outside the files folder"), "{e}");
        assert!(read(&f.dir, "keys/id_rsa").await.is_err());
        for overwrite in [false, true] {
            let e = message(write(&f.dir, "notes.txt", b"pwned".to_vec(), overwrite).await.unwrap_err());
            assert!(e.contains("symbolic link"), "{e}");
        }
        // A link to a file inside the folder is still a link: written through never.
        assert!(write(&f.dir, "inside-link.txt", b"y".to_vec(), true).await.is_err());
        assert!(write(&f.dir, "keys/authorized_keys", b"ssh-ed25519 AAAA".to_vec(), false).await.is_err());
        assert_eq!(std::fs::read(f.home.join(".bashrc")).unwrap(), b"echo hi");
        assert!(!f.home.join(".ssh/authorized_keys").exists());
        // Reading through a link that stays inside the folder is fine.
        assert_eq!(read(&f.dir, "inside-link.txt").await.unwrap(), b"x");
    }

    #[tokio::test]
    async fn folders_devices_and_missing_parents_are_refused() {
        let f = fixture();
        std::fs::create_dir_all(f.dir.folder.join("sub")).unwrap();
        assert!(message(read(&f.dir, "sub").await.unwrap_err()).contains("not a regular file"));
        assert!(message(write(&f.dir, "sub", vec![1], true).await.unwrap_err()).contains("not a regular file"));
        assert!(message(read(&f.dir, "nope.txt").await.unwrap_err()).contains("does not exist"));
        let e = message(write(&f.dir, "new/dir/x.txt", vec![1], false).await.unwrap_err());
        assert!(e.contains("does not exist") && e.contains("WORKBENCH_FILES_DIR"), "{e}");
        assert!(message(write(&f.dir, "sub/", vec![1], false).await.unwrap_err()).contains("names a folder"));
        #[cfg(target_os = "linux")]
        assert!(read(&f.dir, "/dev/zero").await.is_err(), "outside anyway, and not regular");
    }

    /// A folder the user put inside the data directory would expose it: nothing is served.
    #[tokio::test]
    async fn a_folder_inside_the_data_dir_serves_nothing_and_a_folder_holding_it_skips_it() {
        let f = fixture();
        let inside = FilesDir { folder: f.dir.data_dir.join("files"), data_dir: f.dir.data_dir.clone() };
        let e = message(write(&inside, "x.txt", vec![1], false).await.unwrap_err());
        assert!(e.contains("inside workbench's data directory") && e.contains("WORKBENCH_FILES_DIR"), "{e}");
        assert!(!f.dir.data_dir.join("files").exists(), "not created either");
        // The folder contains the data directory: everything but the data directory is usable.
        let parent = f.dir.data_dir.parent().unwrap().to_path_buf();
        let around = FilesDir { folder: parent.clone(), data_dir: f.dir.data_dir.clone() };
        let e = message(read(&around, "data/workbench.db").await.unwrap_err());
        assert!(e.contains("data directory"), "{e}");
        assert!(write(&around, "data/evil.db", vec![1], false).await.is_err());
        assert!(!f.dir.data_dir.join("evil.db").exists());
        write(&around, "fine.txt", b"ok".to_vec(), false).await.unwrap();
        assert_eq!(std::fs::read(parent.join("fine.txt")).unwrap(), b"ok");
    }

    /// Attack (issue 26): a hard link in the folder to `~/.ssh/id_rsa` is the key itself, with no
    /// link to resolve; it is refused for reads and writes like a link out of the folder.
    #[cfg(unix)]
    #[tokio::test]
    async fn hard_links_are_refused_like_links_out_of_the_folder() {
        let f = fixture();
        write(&f.dir, "seed.txt", b"x".to_vec(), false).await.unwrap();
        std::fs::hard_link(f.home.join(".ssh/id_rsa"), f.dir.folder.join("key.txt")).unwrap();
        std::fs::hard_link(f.home.join(".bashrc"), f.dir.folder.join("notes.txt")).unwrap();
        let e = message(read(&f.dir, "key.txt").await.unwrap_err());
        assert!(e.contains("outside the files folder") && e.contains("hard link"), "{e}");
        assert!(e.contains("WORKBENCH_FILES_DIR"), "{e}");
        for overwrite in [false, true] {
            let e = message(write(&f.dir, "notes.txt", b"pwned".to_vec(), overwrite).await.unwrap_err());
            assert!(e.contains("outside the files folder") || e.contains("already exists"), "{e}");
        }
        let e = message(write(&f.dir, "notes.txt", b"pwned".to_vec(), true).await.unwrap_err());
        assert!(e.contains("hard link"), "{e}");
        assert_eq!(std::fs::read(f.home.join(".bashrc")).unwrap(), b"echo hi");
        // A file with one name reads as before.
        assert_eq!(read(&f.dir, "seed.txt").await.unwrap(), b"x");
    }

    /// Attack (issue 26): another local process swaps a folder inside the files folder for a
    /// link out of it between workbench's check and its open. The walk from the folder's handle
    /// never follows a link, so the swapped path fails instead of leading out.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_folder_swapped_for_a_link_after_the_check_never_leads_out() {
        let f = fixture();
        write(&f.dir, "seed.txt", b"x".to_vec(), false).await.unwrap();
        let root = std::fs::canonicalize(&f.dir.folder).unwrap();
        std::os::unix::fs::symlink(f.home.join(".ssh"), root.join("sub")).unwrap();
        // What a swap leaves behind once the path was checked: the open refuses the link.
        let e = beneath::Dir::open(&root, Path::new("sub")).err().unwrap();
        assert!(matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)), "{e}");
        let d = beneath::Dir::open(&root, Path::new("")).unwrap();
        assert!(d.open_read(std::ffi::OsStr::new("sub")).is_err(), "the final component is not followed either");
        // And a live race: a real folder and a link out take turns under the same name.
        std::fs::remove_file(root.join("sub")).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::fs::write(root.join("real/id_rsa"), "public").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (root, ssh, stop) = (root.clone(), f.home.join(".ssh"), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let _ = std::os::unix::fs::symlink(root.join("real"), root.join("tmp-in"));
                    let _ = std::fs::rename(root.join("tmp-in"), root.join("sub"));
                    let _ = std::os::unix::fs::symlink(&ssh, root.join("tmp-out"));
                    let _ = std::fs::rename(root.join("tmp-out"), root.join("sub"));
                }
            })
        };
        for _ in 0..2000 {
            if let Ok(bytes) = read(&f.dir, "sub/id_rsa").await {
                assert_ne!(bytes, b"PRIVATE KEY", "read the key through a swapped folder");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        swapper.join().unwrap();
    }
}
