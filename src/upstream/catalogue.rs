//! The configured servers and their listings: config.json re-read when it changes, the SQLite
//! cache of each server's last `tools/list`, the pins the user accepted, and the catalogue every
//! registry snapshot is built from.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::app::App;
use crate::storage::Storage;

use super::names::listed_from;
use super::*;

/// One server's raw `tools/list` tools: how many, and a digest of their compact JSON text. The
/// text itself is in SQLite (`upstream_listing`, the cache a restart reads) and is read and parsed
/// only when it is needed: the catalogue rebuilt, a listing accepted or pinned. Held as a
/// `serde_json::Value` tree, 10,000 upstream tools took about 24 MiB of the server's memory, and
/// 5.7 MB as text, for nothing between rebuilds. The text is held here only while SQLite does
/// not have it (a fresh listing not yet written, or a write that failed).
#[derive(Clone, Default)]
pub struct Listing {
    text: Option<Arc<str>>,
    digest: [u8; 32],
    count: usize,
}

impl PartialEq for Listing {
    fn eq(&self, other: &Listing) -> bool {
        self.digest == other.digest && self.count == other.count
    }
}

impl Listing {
    /// A fresh listing, its text held until SQLite has it.
    pub fn new(tools: &[Value]) -> Listing {
        let text = serde_json::to_string(tools).unwrap_or_else(|_| "[]".to_string());
        let mut l = Listing::stored(&text, tools.len());
        l.text = Some(text.into());
        l
    }

    /// A listing whose text SQLite holds.
    fn stored(text: &str, count: usize) -> Listing {
        use sha2::Digest as _;
        Listing { text: None, digest: sha2::Sha256::digest(text.as_bytes()).into(), count }
    }

    /// The text, when this listing holds it.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// From this many servers on, the catalogue is read on more than one thread (the machine's
/// cores, at most [`BUILD_THREADS`]): fewer are read in less time than a thread takes to start.
const PARALLEL_SERVERS: usize = 64;
const BUILD_THREADS: usize = 4;

/// Parses a listing's text (an empty list when it is not a JSON array).
fn tools_of(text: &str) -> Vec<Value> {
    match serde_json::from_str(text) {
        Ok(Value::Array(tools)) => tools,
        _ => Vec::new(),
    }
}

impl Upstreams {
    /// No I/O: the cache is read on first use.
    pub fn new(configs: Configs) -> Upstreams {
        Upstreams {
            configs: std::sync::RwLock::new(Arc::new(configs)),
            watch: None,
            stamp: Mutex::new(None),
            catalogue: Mutex::new(None),
            listings: Mutex::new(BTreeMap::new()),
            attempted: Mutex::new(Default::default()),
            slots: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            stale: std::sync::atomic::AtomicBool::new(false),
            empty: Arc::default(),
            oauth: Default::default(),
            pins: Mutex::new(None),
            pending: Mutex::new(Arc::default()),
        }
    }

    /// Reads the pins when they were never read or were read more than [`pins::REREAD`] ago;
    /// true when they changed (another process accepted a change).
    fn reread_pins(&self, storage: &Storage) -> bool {
        let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|r| r.at.elapsed() < pins::REREAD) {
            return false;
        }
        // Read before the pins, so that a commit in between is seen at the next look.
        let version = storage.pins_version().ok();
        if let Some(r) = current.as_mut()
            && version.is_some()
            && r.version == version
        {
            r.at = Instant::now();
            return false;
        }
        match pins::Pins::load(storage) {
            Ok(fresh) => {
                let changed = current.as_ref().is_none_or(|r| r.pins != fresh);
                *current = Some(pins::Read { pins: fresh, at: Instant::now(), version });
                changed
            }
            Err(e) => {
                tracing::warn!(error = %e, "the accepted upstream tool definitions could not be read; no upstream tool is offered");
                let changed = current.is_some();
                *current = None;
                changed
            }
        }
    }

    /// Trust on first use: a configured server with a listing and no pins (listed for the first
    /// time, or added before pinning existed) has that listing accepted.
    /// `listed` is a server that just answered `tools/list`: pinned even when it listed nothing
    /// (a cached empty listing may be a failure record, never a listing).
    /// `read_texts` holds listings' text already read from SQLite (by server), if any.
    fn pin_first_listings(&self, storage: &Storage, listed: Option<&str>, read_texts: &HashMap<String, String>) {
        let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        let Some(read) = current.as_mut() else { return };
        for (server, listing) in listings.iter() {
            if read.pins.servers.contains(server)
                || !self.is_server(server)
                || (listing.is_empty() && listed != Some(server.as_str()))
            {
                continue;
            }
            let tools = self.tools_of(storage, server, listing, read_texts);
            match read.pins.accept(storage, server, &tools) {
                Ok(()) => {
                    tracing::info!(server, tools = tools.len(), "upstream tool definitions pinned (first listing)")
                }
                Err(e) => tracing::warn!(server, error = %e, "could not pin the upstream tool definitions"),
            }
        }
    }

    /// Accepts the current listing of `server` (its new and changed tools become searchable and
    /// callable); returns how many changes were accepted.
    pub fn accept(&self, storage: &Storage, server: &str) -> Result<usize, crate::storage::StorageError> {
        let _ = self.catalogue(storage);
        let waiting = self.pending.lock().unwrap_or_else(|p| p.into_inner()).get(server).map_or(0, Vec::len);
        let listing = self.listings.lock().unwrap_or_else(|p| p.into_inner()).get(server).cloned();
        let tools = listing.map(|l| self.tools_of(storage, server, &l, &HashMap::new())).unwrap_or_default();
        {
            let mut current = self.pins.lock().unwrap_or_else(|p| p.into_inner());
            let read = current.get_or_insert_with(|| pins::Read {
                pins: Default::default(),
                at: Instant::now(),
                version: None,
            });
            read.pins.accept(storage, server, &tools)?;
        }
        let fresh = Arc::new(self.build(storage));
        *self.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh);
        Ok(waiting)
    }

    /// The tools of each server waiting for the user's review (new or changed definitions).
    pub fn pending(&self, storage: &Storage) -> Arc<BTreeMap<String, Vec<pins::Change>>> {
        let _ = self.catalogue(storage);
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        // What each changed tool's accepted definition was is read from SQLite only now, for the
        // review (the pins in memory are hashes).
        if pending.values().flatten().any(|c| c.pinned && c.was.is_none()) {
            let mut filled = (**pending).clone();
            for (server, changes) in filled.iter_mut() {
                for c in changes {
                    c.read_accepted(storage, server);
                }
            }
            *pending = Arc::new(filled);
        }
        pending.clone()
    }

    /// The user finished an OAuth consent for `server`: the next call connects with the new token
    /// at once (no backoff wait).
    pub fn authorized(&self, server: &str) {
        let slot = self.slots.lock().unwrap_or_else(|p| p.into_inner()).remove(server);
        drop(slot);
        let slot = self.slot(server);
        let mut status = slot.status.lock().unwrap_or_else(|p| p.into_inner());
        status.retry_at = None;
        status.failures = 0;
    }

    /// Follows `config_json` (still no I/O here): when the file changes on disk while workbench
    /// runs, its `mcp_servers` replace the configured servers at the next registry snapshot, so a
    /// server added or removed by hand (or by `workbench servers add` in another process) shows up
    /// without a restart.
    pub fn watching(mut self, config_json: std::path::PathBuf) -> Upstreams {
        self.watch = Some(config_json);
        self
    }

    /// The configured servers (including entries that did not parse, as their error).
    pub fn configs(&self) -> Arc<Configs> {
        self.configs.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether `name` is a configured server.
    pub fn is_server(&self, name: &str) -> bool {
        matches!(self.configs.read().unwrap_or_else(|p| p.into_inner()).get(name), Some(Ok(_)))
    }

    /// Reads config.json's `mcp_servers` again if the file changed since the last look (one
    /// `stat` per call otherwise). A file that does not parse keeps the servers as they were.
    pub(super) fn refresh_config(&self) {
        let Some(path) = &self.watch else { return };
        let now: Stamp = std::fs::metadata(path).ok().map(|m| {
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            (m.modified().unwrap_or(std::time::UNIX_EPOCH), m.len(), ino)
        });
        {
            let mut stamp = self.stamp.lock().unwrap_or_else(|p| p.into_inner());
            if stamp.as_ref() == Some(&now) {
                return;
            }
            *stamp = Some(now);
        }
        if now.is_none() {
            return;
        }
        let fresh = match std::fs::read_to_string(path).map(|t| serde_json::from_str::<Value>(&t)) {
            Ok(Ok(root)) => config::parse_all(root.get("mcp_servers")),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "config.json does not parse; the upstream servers stay as they were");
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, "config.json could not be read");
                return;
            }
        };
        let old = self.configs();
        if *old == fresh {
            return;
        }
        let gone: Vec<String> =
            old.iter().filter(|(name, c)| fresh.get(*name) != Some(*c)).map(|(name, _)| name.clone()).collect();
        tracing::info!(servers = fresh.len(), "config.json changed: upstream servers reloaded");
        *self.configs.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(fresh);
        // A removed or changed server's process ends when its last call is done (its handle drops).
        {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            let mut attempted = self.attempted.lock().unwrap_or_else(|p| p.into_inner());
            for name in &gone {
                slots.remove(name);
                attempted.remove(name);
            }
        }
        self.stale.store(true, Ordering::SeqCst);
    }

    /// The catalogue now; the first call reads the SQLite cache (one query). Every call first
    /// checks whether config.json changed ([`Upstreams::watching`]).
    pub fn catalogue(&self, storage: &Storage) -> Arc<Catalogue> {
        self.refresh_config();
        if !self.configs().values().any(Result::is_ok) {
            return self.empty.clone();
        }
        let mut current = self.catalogue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = current.as_ref() {
            let stale = self.stale.swap(false, Ordering::SeqCst);
            if !self.reread_pins(storage) && !stale {
                return c.clone();
            }
            let fresh = Arc::new(self.build(storage));
            *current = Some(fresh.clone());
            return fresh;
        }
        self.stale.store(false, Ordering::SeqCst);
        // The cache is read once here; its text serves the first pins and the first build, and
        // is dropped after them.
        let mut texts = HashMap::new();
        match storage.upstream_listings() {
            Ok(rows) => {
                let mut listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
                for row in rows {
                    // Every cached row, also of servers not configured now: one may come back.
                    // Checked to be a JSON array and counted, without building its values.
                    if let Ok(tools) = serde_json::from_str::<Vec<serde::de::IgnoredAny>>(&row.tools) {
                        listings.entry(row.server.clone()).or_insert_with(|| Listing::stored(&row.tools, tools.len()));
                        texts.insert(row.server, row.tools);
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "the upstream tool cache could not be read"),
        }
        self.reread_pins(storage);
        self.pin_first_listings(storage, None, &texts);
        let fresh = Arc::new(self.build_with(&texts));
        *current = Some(fresh.clone());
        fresh
    }

    /// A server's tools: the listing's own text, else the one already read (`read_texts`), else
    /// the one SQLite holds for it.
    fn tools_of(
        &self,
        storage: &Storage,
        server: &str,
        listing: &Listing,
        read_texts: &HashMap<String, String>,
    ) -> Vec<Value> {
        match listing.text().or(read_texts.get(server).map(String::as_str)) {
            Some(text) => tools_of(text),
            None => match storage.upstream_listing(server) {
                Ok(Some(text)) => tools_of(&text),
                Ok(None) => Vec::new(),
                Err(e) => {
                    tracing::warn!(server, error = %e, "the upstream tool cache could not be read");
                    Vec::new()
                }
            },
        }
    }

    /// Lists the configured servers that have no tool listing yet (pasted into config.json by
    /// hand, never listed; or failing last time), so the search or schema lookup that could need
    /// them finds their tools: each is started in parallel, at most once per process, and this
    /// waits at most [`LIST_WAIT`] for them (a slower one goes on in the background). Failures are
    /// recorded for `workbench servers list`. Nothing happens when every server has a listing.
    pub async fn list_unlisted(&self, app: &Arc<App>) {
        let _ = self.catalogue(&app.storage);
        let todo: Vec<String> = {
            let configs = self.configs();
            let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
            let mut attempted = self.attempted.lock().unwrap_or_else(|p| p.into_inner());
            configs
                .iter()
                .filter(|(name, c)| c.is_ok() && listings.get(*name).is_none_or(Listing::is_empty))
                .filter(|&(name, _)| attempted.insert(name.clone()))
                .map(|(name, _)| name.clone())
                .collect()
        };
        if todo.is_empty() {
            return;
        }
        tracing::info!(servers = ?todo, "listing upstream servers that have no cached tool list");
        let tasks: Vec<_> = todo
            .into_iter()
            .map(|server| {
                let app = app.clone();
                tokio::spawn(async move {
                    if let Err(e) = app.upstream().ensure_started(&app, &server).await {
                        tracing::warn!(server, error = %e, "could not list a never-listed upstream server");
                    }
                })
            })
            .collect();
        let _ = tokio::time::timeout(LIST_WAIT, futures::future::join_all(tasks)).await;
    }

    /// The catalogue from the listings, their text read from SQLite in one query when any is needed.
    fn build(&self, storage: &Storage) -> Catalogue {
        let needed = {
            let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
            listings.iter().any(|(server, l)| l.text().is_none() && self.is_server(server))
        };
        let mut stored = HashMap::new();
        if needed {
            match storage.upstream_listings() {
                Ok(rows) => stored = rows.into_iter().map(|r| (r.server, r.tools)).collect(),
                Err(e) => tracing::warn!(error = %e, "the upstream tool cache could not be read"),
            }
        }
        self.build_with(&stored)
    }

    /// The catalogue from the listings, `stored` holding the text of those that do not hold it.
    /// Each server's tools are read on their own (parsed, checked against their pins,
    /// normalised), so many servers are read on the machine's cores, in runs of neighbours; the
    /// catalogue is the same as one thread makes.
    fn build_with(&self, stored: &HashMap<String, String>) -> Catalogue {
        let listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
        let read = self.pins.lock().unwrap_or_else(|p| p.into_inner());
        let configs = self.configs();
        let servers: Vec<(&String, &Listing)> = listings.iter().filter(|(server, _)| self.is_server(server)).collect();
        let one = |&(server, listing): &(&String, &Listing)| {
            // Only the definitions the user accepted are offered ([`pins`]).
            let mut changes = Vec::new();
            let tools = tools_of(listing.text().or(stored.get(server).map(String::as_str)).unwrap_or("[]"));
            let accepted: Vec<&Value> = tools
                .iter()
                .filter(|t| match read.as_ref() {
                    Some(r) => match r.pins.check(server, t) {
                        None => true,
                        Some(change) => {
                            changes.push(change);
                            false
                        }
                    },
                    None => false,
                })
                .collect();
            let mut listed: Vec<Listed> = accepted.into_iter().filter_map(listed_from).collect();
            listed.sort_by(|a, b| a.tool.cmp(&b.tool));
            // The user's word on effects wins over the server's annotations.
            if let Some(Ok(config)) = configs.get(server) {
                for l in &mut listed {
                    if let Some(e) = config.effects().of(&l.tool) {
                        l.effect = e;
                    }
                }
            }
            (server.clone(), listed, changes)
        };
        let threads = if servers.len() >= PARALLEL_SERVERS { crate::platform::cores().min(BUILD_THREADS) } else { 1 };
        let read: Vec<(String, Vec<Listed>, Vec<pins::Change>)> = if threads <= 1 {
            servers.iter().map(one).collect()
        } else {
            let run = servers.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let mut parts = servers.chunks(run);
                let first = parts.next().unwrap_or_default();
                let started: Vec<_> = parts
                    .map(|part| {
                        let one = &one;
                        // A thread that cannot be started leaves its part to this one.
                        std::thread::Builder::new()
                            .name("workbench-catalogue".into())
                            .spawn_scoped(scope, move || part.iter().map(one).collect::<Vec<_>>())
                            .map_err(|_| part)
                    })
                    .collect();
                let mut all: Vec<_> = first.iter().map(one).collect();
                for part in started {
                    match part {
                        Ok(thread) => match thread.join() {
                            Ok(done) => all.extend(done),
                            Err(panic) => std::panic::resume_unwind(panic),
                        },
                        Err(part) => all.extend(part.iter().map(one)),
                    }
                }
                all
            })
        };
        let mut pending = BTreeMap::new();
        let servers = read
            .into_iter()
            .map(|(server, listed, changes)| {
                if !changes.is_empty() {
                    pending.insert(server.clone(), changes);
                }
                (server, listed)
            })
            .collect();
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(pending);
        Catalogue { generation: self.generation.fetch_add(1, Ordering::SeqCst) + 1, servers }
    }

    /// Takes a server's fresh `tools/list`: cached in SQLite, and a new catalogue generation when
    /// it changed.
    pub(super) async fn store_listing(&self, app: &App, server: &str, raw: Vec<Value>) -> usize {
        let count = raw.len();
        let listing = Listing::new(&raw);
        drop(raw);
        let changed = {
            let mut listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
            listings.insert(server.to_string(), listing.clone()).as_ref() != Some(&listing)
        };
        // The pins are read (and a first listing pinned) off the async workers.
        let pinned = {
            let (app, storage, server) = (app.upstream(), app.storage.clone(), server.to_string());
            tokio::task::spawn_blocking(move || {
                let first = app.pins.lock().unwrap_or_else(|p| p.into_inner()).is_none();
                let changed = app.reread_pins(&storage) && !first;
                app.pin_first_listings(&storage, Some(&server), &HashMap::new());
                changed
            })
            .await
            .unwrap_or(false)
        };
        // Cached first: then the listing's text need not be held here (a rebuild reads SQLite).
        let text = listing.text().unwrap_or("[]").to_string();
        match app.storage.put_upstream_listing(server.to_string(), text).await {
            Ok(()) => {
                let mut listings = self.listings.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(l) = listings.get_mut(server).filter(|l| **l == listing) {
                    l.text = None;
                }
            }
            Err(e) => tracing::warn!(server, error = %e, "could not cache the upstream tool list"),
        }
        if changed || pinned {
            let (up, storage) = (app.upstream(), app.storage.clone());
            let _ = tokio::task::spawn_blocking(move || {
                let fresh = Arc::new(up.build(&storage));
                *up.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh);
            })
            .await;
        }
        count
    }
}
