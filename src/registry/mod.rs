//! The catalogue of every runnable tool: plugin tools from `plugins::INTEGRATIONS` plus built-ins.
//!
//! Built once at start from static data only (no schema generation, no index), so start-up stays in
//! microseconds; schemas and the search index are computed on first use and then cached.

pub mod search;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use plugins::api::{AuthKind, BoxFuture, Effect, Files, Handler, Integration, ToolError};
use serde_json::Value;

use crate::app::App;
use crate::storage::Storage;

/// A built-in tool's handler: it runs inside workbench with access to the app (audit log, vault).
pub type BuiltinHandler = fn(Arc<App>, Value) -> BoxFuture<Result<Value, ToolError>>;

/// A built-in tool, described like a plugin tool.
pub struct BuiltinSpec {
    pub name: &'static str,
    /// The local namespace (`data`, `time`, `audit`, ...), shown as the tool's integration.
    pub namespace: &'static str,
    pub description: &'static str,
    pub keywords: &'static [&'static str],
    pub effect: Effect,
    /// The outbound-data guard's labels, as for plugin tools ([`plugins::flow`]).
    pub results: Option<plugins::flow::Results>,
    pub audience: Option<plugins::flow::Audience>,
    pub schema: fn() -> Value,
    pub run: BuiltinHandler,
}

/// How a tool runs.
#[derive(Clone)]
pub enum Runner {
    Plugin {
        integration: &'static Integration,
        run: Handler,
    },
    Builtin(BuiltinHandler),
    /// An operation of a user-defined custom app (see [`crate::custom`]).
    Custom(Arc<crate::custom::Operation>),
    /// A tool of one of the user's other MCP servers (see [`crate::upstream`]).
    Upstream(Arc<crate::upstream::UpstreamTool>),
}

/// One runnable tool.
pub struct ToolEntry {
    pub name: &'static str,
    pub integration: &'static str,
    pub description: &'static str,
    pub keywords: &'static [&'static str],
    pub effect: Effect,
    /// The arguments naming local files the tool reads or writes (plugin tools only).
    pub files: Files,
    /// The outbound-data guard's labels ([`plugins::flow`]); `None` where the tool has none
    /// (custom apps, upstream servers' tools: the guard decides those from config.json).
    pub results: Option<plugins::flow::Results>,
    pub audience: Option<plugins::flow::Audience>,
    pub runner: Runner,
    schema_fn: fn() -> Value,
    schema: OnceLock<Value>,
    /// An upstream tool's place in the catalogue its schema text is read from (server, tool): the
    /// schema is not copied per snapshot, and parsed only when asked for.
    listed: Option<(Arc<crate::upstream::Catalogue>, usize, usize)>,
}

impl ToolEntry {
    /// The tool's JSON Schema: an upstream or custom tool's as listed, a compiled tool's parsed
    /// from its committed text on first use (`plugins::schema::committed`) and kept.
    pub fn schema(&self) -> &Value {
        if let Runner::Custom(op) = &self.runner {
            return &op.schema;
        }
        self.schema.get_or_init(|| match self.listed_schema() {
            Some(text) => text.parse(),
            None => (self.schema_fn)(),
        })
    }

    /// An upstream tool's schema text, as its catalogue keeps it.
    pub fn listed_schema(&self) -> Option<&crate::upstream::SchemaText> {
        self.listed.as_ref().map(|(catalogue, server, tool)| &catalogue.servers[*server].1[*tool].schema)
    }

    /// The schema when it is at hand (a custom tool's, or one parsed before), without parsing
    /// it.
    pub fn schema_if_ready(&self) -> Option<&Value> {
        if matches!(self.runner, Runner::Custom(_)) {
            return Some(self.schema());
        }
        self.schema.get()
    }

    /// The schema, parsed for the caller and not kept when it was not at hand.
    pub fn with_schema<T>(&self, f: impl FnOnce(&Value) -> T) -> T {
        match (self.schema_if_ready(), self.listed_schema()) {
            (Some(schema), _) => f(schema),
            (None, Some(text)) => f(&text.parse()),
            (None, None) => f(&(self.schema_fn)()),
        }
    }

    pub fn mutating(&self) -> bool {
        self.effect.mutating()
    }

    /// The effect of one call with `args`: a read that names a local file to read or write is a
    /// write for the safety policy and the audit log.
    pub fn effect_for(&self, args: &Value) -> Effect {
        self.files.effect_of(self.effect, args)
    }

    pub fn plugin(&self) -> Option<&'static Integration> {
        match self.runner {
            Runner::Plugin { integration, .. } => Some(integration),
            _ => None,
        }
    }

    /// The upstream MCP server tool behind this entry, if it is one.
    pub fn upstream(&self) -> Option<&Arc<crate::upstream::UpstreamTool>> {
        match &self.runner {
            Runner::Upstream(t) => Some(t),
            _ => None,
        }
    }

    /// The custom app operation behind this tool, if it is one.
    pub fn custom(&self) -> Option<&Arc<crate::custom::Operation>> {
        match &self.runner {
            Runner::Custom(op) => Some(op),
            _ => None,
        }
    }
}

fn no_schema() -> Value {
    Value::Null
}

/// The tool catalogue and the integrations behind it: one immutable snapshot. The compiled part
/// never changes; upstream MCP servers' tools and custom apps are added by building a new snapshot
/// ([`Registry::with_upstream`], [`Registry::with_custom`]), which `App::registry()` does when the
/// upstream catalogue's generation or the custom-apps generation in SQLite moves. Compiled tools
/// and meta-tool names always win: an upstream or custom tool never shadows one.
pub struct Registry {
    tools: Vec<ToolEntry>,
    by_name: HashMap<&'static str, usize>,
    integrations: Vec<&'static Integration>,
    builtins: &'static [BuiltinSpec],
    custom: Arc<crate::custom::Loaded>,
    upstream: Arc<crate::upstream::Catalogue>,
    /// The upstream servers whose tools this snapshot offers.
    upstream_servers: Vec<&'static str>,
    /// Names outside the catalogue that nothing may take (the meta-tools'), given by the
    /// composition root ([`Registry::reserving`]).
    reserved: fn(&str) -> bool,
    index: OnceLock<search::SearchIndex>,
    /// Where the index keeps upstream servers' tool vectors across restarts (set by the app).
    vector_store: OnceLock<Arc<dyn search::VectorStore>>,
}

fn nothing_reserved(_: &str) -> bool {
    false
}

impl Registry {
    pub fn new(integrations: &[&'static Integration], builtins: &'static [BuiltinSpec]) -> Registry {
        Self::build(integrations, builtins, nothing_reserved, Arc::default(), Arc::default())
    }

    /// [`Registry::new`] with `reserved` names (one build, where `new(..).reserving(..)` is two).
    pub fn new_reserving(
        integrations: &[&'static Integration],
        builtins: &'static [BuiltinSpec],
        reserved: fn(&str) -> bool,
    ) -> Registry {
        Self::build(integrations, builtins, reserved, Arc::default(), Arc::default())
    }

    /// This catalogue with `reserved` names (the meta-tools') that no upstream server or custom
    /// app may take.
    pub fn reserving(&self, reserved: fn(&str) -> bool) -> Registry {
        Self::build(&self.integrations, self.builtins, reserved, self.upstream.clone(), self.custom.clone())
    }

    /// This catalogue with `custom` apps' operations as tools (replacing any earlier ones).
    pub fn with_custom(&self, custom: crate::custom::Loaded) -> Registry {
        Self::build(&self.integrations, self.builtins, self.reserved, self.upstream.clone(), Arc::new(custom))
    }

    /// This catalogue with `upstream` servers' tools (replacing any earlier ones; custom apps are
    /// dropped: load them again on top with [`Registry::with_custom`]).
    pub fn with_upstream(&self, upstream: Arc<crate::upstream::Catalogue>) -> Registry {
        Self::build(&self.integrations, self.builtins, self.reserved, upstream, Arc::default())
    }

    /// The upstream catalogue this snapshot was built with (and its generation).
    pub fn upstream(&self) -> &crate::upstream::Catalogue {
        &self.upstream
    }

    /// The names upstream tools clash on in this snapshot (none of the claimants is offered).
    pub fn upstream_collisions(&self) -> Vec<crate::upstream::Collision> {
        let taken: std::collections::HashSet<&str> = self
            .tools
            .iter()
            .filter(|t| !matches!(t.runner, Runner::Upstream(_) | Runner::Custom(_)))
            .map(|t| t.name)
            .collect();
        let offered = self.upstream.servers.iter().filter(|(s, _)| self.is_upstream_server(s));
        let reserved = self.reserved;
        crate::upstream::assign_names(offered.map(|(s, l)| (s.as_str(), l.as_slice())), &|n: &str| {
            taken.contains(n) || reserved(n)
        })
        .collisions
    }

    /// Whether `name` is an upstream server whose tools this snapshot offers.
    pub fn is_upstream_server(&self, name: &str) -> bool {
        self.upstream_servers.contains(&name)
    }

    fn build(
        integrations: &[&'static Integration],
        builtins: &'static [BuiltinSpec],
        reserved: fn(&str) -> bool,
        upstream: Arc<crate::upstream::Catalogue>,
        custom: Arc<crate::custom::Loaded>,
    ) -> Registry {
        let mut tools = Vec::new();
        for integration in integrations {
            for spec in integration.tools {
                tools.push(ToolEntry {
                    name: spec.name,
                    integration: integration.name,
                    description: spec.description,
                    keywords: spec.keywords,
                    effect: spec.effect,
                    files: spec.files,
                    results: spec.results,
                    audience: spec.audience,
                    runner: Runner::Plugin { integration, run: spec.run },
                    schema_fn: spec.schema,
                    schema: OnceLock::new(),
                    listed: None,
                });
            }
        }
        for spec in builtins {
            tools.push(ToolEntry {
                name: spec.name,
                integration: spec.namespace,
                description: spec.description,
                keywords: spec.keywords,
                effect: spec.effect,
                files: Files::None,
                results: spec.results,
                audience: spec.audience,
                runner: Runner::Builtin(spec.run),
                schema_fn: spec.schema,
                schema: OnceLock::new(),
                listed: None,
            });
        }
        // Upstream servers: a server named like an integration, a built-in namespace or a
        // meta-tool is skipped (its tools would pass for workbench's own); a name that more than
        // one tool claims (or one of workbench's) is nobody's (`upstream::assign_names`).
        let mut upstream_servers = Vec::new();
        {
            let taken: std::collections::HashSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
            let offered: Vec<(usize, &(String, Vec<crate::upstream::Listed>))> = upstream
                .servers
                .iter()
                .enumerate()
                .filter(|(_, (server, _))| {
                    let workbench_own =
                        integrations.iter().any(|i| i.name == server || i.name.split('_').next() == Some(server))
                            || builtins.iter().any(|b| b.namespace == server)
                            || reserved(server)
                            || matches!(server.as_str(), "vault" | "custom" | "connection" | "curl" | "workbench");
                    if workbench_own {
                        tracing::warn!(server, "upstream server skipped: its name is taken by workbench's own tools");
                    }
                    !workbench_own
                })
                .collect();
            let names = crate::upstream::assign_names(
                offered.iter().map(|(_, (s, l))| (s.as_str(), l.as_slice())),
                &|n: &str| taken.contains(n) || reserved(n),
            );
            for (server_index, (server, listed)) in offered {
                upstream_servers.push(crate::ids::intern(server));
                for (tool_index, l) in listed.iter().enumerate() {
                    let Some(name) = names.names.get(&(server.clone(), l.tool.clone())) else { continue };
                    tools.push(ToolEntry {
                        name: crate::ids::intern(name),
                        integration: crate::ids::intern(server),
                        description: crate::ids::intern(&l.description),
                        keywords: &[],
                        effect: l.effect,
                        files: Files::None,
                        results: None,
                        audience: None,
                        runner: Runner::Upstream(Arc::new(crate::upstream::UpstreamTool {
                            server: server.clone(),
                            tool: l.tool.clone(),
                        })),
                        schema_fn: no_schema,
                        schema: OnceLock::new(),
                        listed: Some((upstream.clone(), server_index, tool_index)),
                    });
                }
            }
        }
        for app in &custom.apps {
            for op in &app.operations {
                tools.push(ToolEntry {
                    name: crate::ids::intern(&op.tool_name),
                    integration: crate::ids::intern(&app.name),
                    description: crate::ids::intern(&op.description),
                    keywords: &[],
                    effect: op.effect,
                    files: Files::None,
                    results: None,
                    audience: None,
                    runner: Runner::Custom(op.clone()),
                    schema_fn: no_schema,
                    schema: OnceLock::new(),
                    listed: None,
                });
            }
        }
        // The first entry of a name wins: compiled tools, then upstream ones, then custom ones.
        let mut by_name = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            by_name.entry(t.name).or_insert(i);
        }
        Registry {
            tools,
            by_name,
            integrations: integrations.to_vec(),
            builtins,
            custom,
            upstream,
            upstream_servers,
            reserved,
            index: OnceLock::new(),
            vector_store: OnceLock::new(),
        }
    }

    /// The custom apps this snapshot was built with (and their generation).
    pub fn custom(&self) -> &crate::custom::Loaded {
        &self.custom
    }

    /// Whether `name` is a custom app with working tools.
    pub fn is_custom_app(&self, name: &str) -> bool {
        self.custom.apps.iter().any(|a| a.name == name && !a.operations.is_empty())
    }

    /// Whether a custom app or its tools would take `name` from the compiled catalogue: an
    /// integration, a built-in namespace or a meta-tool name.
    pub fn reserved_namespace(&self, name: &str) -> bool {
        self.integration(name).is_some()
            || self.builtins.iter().any(|b| b.namespace == name)
            || (self.reserved)(name)
            || self.integrations.iter().any(|i| i.name.split('_').next() == Some(name))
            || self.is_upstream_server(name)
    }

    /// Whether `name` is a compiled (plugin or built-in) tool.
    pub fn compiled_tool(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.custom().is_none())
    }

    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub fn tools(&self) -> &[ToolEntry] {
        &self.tools
    }

    pub fn integrations(&self) -> &[&'static Integration] {
        &self.integrations
    }

    pub fn integration(&self, name: &str) -> Option<&'static Integration> {
        self.integrations.iter().copied().find(|i| i.name == name)
    }

    /// Whether `name` is a built-in namespace (`data`, `time`, ...).
    pub fn is_builtin_namespace(&self, name: &str) -> bool {
        self.builtins.iter().any(|b| b.namespace == name)
    }

    /// Keeps this snapshot's upstream tool vectors in `store` (per server, across restarts); set
    /// before the index is first built, else it has no effect on this snapshot.
    pub fn keep_vectors_in(&self, store: Arc<dyn search::VectorStore>) {
        let _ = self.vector_store.set(store);
    }

    pub fn vector_store(&self) -> Option<&Arc<dyn search::VectorStore>> {
        self.vector_store.get()
    }

    pub fn index(&self) -> &search::SearchIndex {
        self.index.get_or_init(|| search::SearchIndex::build(self))
    }

    /// Names close to a mistyped tool name, best first.
    /// (Search results scored below this are not offered as the name meant.)
    pub fn similar_names(&self, wrong: &str, max: usize) -> Vec<&'static str> {
        let mut scored: Vec<(usize, &'static str)> = self
            .tools
            .iter()
            .map(|t| (crate::validate::levenshtein(wrong, t.name), t.name))
            .filter(|(d, n)| *d <= (n.len() / 3).max(2))
            .collect();
        scored.sort();
        let mut out: Vec<&'static str> = scored.into_iter().map(|(_, n)| n).take(max).collect();
        if out.is_empty() {
            // Not the weak guesses that fill a search's list: only names that match fairly.
            out = self
                .index()
                .search(&wrong.replace('_', " "), max, &|_| false)
                .into_iter()
                .filter(|h| h.score >= SUGGESTION_SCORE)
                .map(|h| h.name)
                .collect();
        }
        out
    }
}

/// The least search score a tool needs to be suggested for a mistyped name (the floor search
/// results had before weak guesses filled its lists).
const SUGGESTION_SCORE: f64 = 0.1;

/// How often a snapshot asks SQLite whether another process changed the custom apps. A change
/// made in this process is seen at once (`Storage::custom_writes_here`); one made by another
/// process within this long.
const CROSS_PROCESS_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// The registry's state: the current snapshot, and when SQLite's custom-apps generation was last
/// read (with this process's custom-app write count then).
pub struct Snapshot {
    current: RwLock<Arc<Registry>>,
    checked: Mutex<Option<(Instant, u64)>>,
}

impl Snapshot {
    pub fn new(registry: Registry) -> Snapshot {
        Snapshot { current: RwLock::new(Arc::new(registry)), checked: Mutex::new(None) }
    }

    fn get(&self) -> Arc<Registry> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, registry: Arc<Registry>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = registry;
    }

    /// Whether the custom apps may have changed since the last look: this process wrote some,
    /// or the last look at SQLite is older than [`CROSS_PROCESS_CHECK`].
    fn due(&self) -> bool {
        let writes = Storage::custom_writes_here();
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        match *checked {
            Some((at, seen)) if seen == writes && at.elapsed() < CROSS_PROCESS_CHECK => false,
            _ => {
                *checked = Some((Instant::now(), writes));
                true
            }
        }
    }
}

impl App {
    fn snapshot(&self) -> Arc<Snapshot> {
        self.state.registry.clone()
    }

    /// The catalogue as it stands now: the compiled tools, the upstream servers' tools and the
    /// custom apps in SQLite. A change made by any process (the generation counter moved) builds a
    /// new snapshot here; SQLite is asked only after a write of this process or every
    /// [`CROSS_PROCESS_CHECK`], so a call's path reads no database most of the time.
    pub fn registry(&self) -> Arc<Registry> {
        let snapshot = self.snapshot();
        let current = snapshot.get();
        if self.upstream().catalogue(&self.storage).generation != current.upstream().generation {
            return self.reload_registry();
        }
        if !snapshot.due() {
            return current;
        }
        match self.storage.custom_generation() {
            Ok(generation) if generation == current.custom().generation => current,
            Ok(_) => self.reload_registry(),
            Err(e) => {
                tracing::debug!(error = %e, "custom apps could not be read; using the last catalogue");
                current
            }
        }
    }

    /// Reads the custom apps again and builds a new catalogue snapshot.
    pub fn reload_registry(&self) -> Arc<Registry> {
        let snapshot = self.snapshot();
        let mut base = snapshot.get();
        // Upstream servers' tools come before custom apps, so a custom app cannot take their names.
        let upstream = self.upstream().catalogue(&self.storage);
        if upstream.generation != base.upstream().generation {
            base = Arc::new(base.with_upstream(upstream));
        }
        let reserved = crate::custom::ReservedNames {
            namespaces: &|n: &str| base.reserved_namespace(n),
            tools: &|n: &str| base.compiled_tool(n),
        };
        match crate::custom::load(&self.storage, &reserved) {
            Ok(loaded) => {
                let fresh = Arc::new(base.with_custom(loaded));
                fresh.keep_vectors_in(self.storage.clone());
                snapshot.set(fresh.clone());
                fresh
            }
            Err(e) => {
                tracing::warn!(error = %e, "custom apps could not be loaded");
                base.keep_vectors_in(self.storage.clone());
                snapshot.set(base.clone());
                base
            }
        }
    }

    /// Whether the user can run `integration`'s tools now. Public integrations always can; the rest
    /// need a credential (any account) in the environment or a stored connection (SQLite says
    /// so; the secret store is not touched here).
    pub fn is_connected(&self, integration: &str) -> bool {
        // The snapshot as the caller's own `registry()` left it: asked once per integration (search
        // ranking, list_integrations), so no second generation read per integration.
        let registry = self.snapshot().get();
        match registry.integration(integration) {
            Some(i) => is_public(i) || !self.accounts(i).is_empty(),
            None => {
                registry.is_builtin_namespace(integration)
                    || registry.is_custom_app(integration)
                    || registry.is_upstream_server(integration)
            }
        }
    }
}

/// Whether an integration needs no credentials at all.
pub fn is_public(integration: &Integration) -> bool {
    integration.auth.kind == AuthKind::None
}
