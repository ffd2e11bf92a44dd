//! The catalogue of every runnable tool: plugin tools from `plugins::INTEGRATIONS` plus built-ins.
//!
//! Built once at start from static data only (no schema generation, no index), so start-up stays in
//! microseconds; schemas and the search index are computed on first use and then cached.

pub mod search;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use plugins::api::{AuthKind, BoxFuture, Effect, Files, Handler, Integration, ToolError};
use serde_json::Value;

use crate::app::App;

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
    pub runner: Runner,
    schema_fn: fn() -> Value,
    schema: OnceLock<Value>,
}

impl ToolEntry {
    /// The tool's JSON Schema, generated on first use.
    pub fn schema(&self) -> &Value {
        self.schema.get_or_init(self.schema_fn)
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
    index: OnceLock<search::SearchIndex>,
}

impl Registry {
    pub fn new(integrations: &[&'static Integration], builtins: &'static [BuiltinSpec]) -> Registry {
        Self::build(integrations, builtins, Arc::default(), Arc::default())
    }

    /// This catalogue with `custom` apps' operations as tools (replacing any earlier ones).
    pub fn with_custom(&self, custom: crate::custom::Loaded) -> Registry {
        Self::build(&self.integrations, self.builtins, self.upstream.clone(), Arc::new(custom))
    }

    /// This catalogue with `upstream` servers' tools (replacing any earlier ones; custom apps are
    /// dropped: load them again on top with [`Registry::with_custom`]).
    pub fn with_upstream(&self, upstream: Arc<crate::upstream::Catalogue>) -> Registry {
        Self::build(&self.integrations, self.builtins, upstream, Arc::default())
    }

    /// The upstream catalogue this snapshot was built with (and its generation).
    pub fn upstream(&self) -> &crate::upstream::Catalogue {
        &self.upstream
    }

    /// Whether `name` is an upstream server whose tools this snapshot offers.
    pub fn is_upstream_server(&self, name: &str) -> bool {
        self.upstream_servers.contains(&name)
    }

    fn build(
        integrations: &[&'static Integration],
        builtins: &'static [BuiltinSpec],
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
                    runner: Runner::Plugin { integration, run: spec.run },
                    schema_fn: spec.schema,
                    schema: OnceLock::new(),
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
                runner: Runner::Builtin(spec.run),
                schema_fn: spec.schema,
                schema: OnceLock::new(),
            });
        }
        // Upstream servers: a server named like an integration, a built-in namespace or a
        // meta-tool is skipped (its tools would pass for workbench's own); tool names that
        // collide with any tool before them get `_2`, `_3`, ...
        let mut upstream_servers = Vec::new();
        {
            let mut taken: std::collections::HashSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
            for (server, listed) in &upstream.servers {
                let reserved =
                    integrations.iter().any(|i| i.name == server || i.name.split('_').next() == Some(server))
                        || builtins.iter().any(|b| b.namespace == server)
                        || crate::meta::find(server).is_some()
                        || matches!(server.as_str(), "vault" | "custom" | "connection" | "curl" | "workbench");
                if reserved {
                    tracing::warn!(server, "upstream server skipped: its name is taken by workbench's own tools");
                    continue;
                }
                upstream_servers.push(crate::custom::intern(server));
                for l in listed {
                    let name = crate::upstream::exposed_name(server, &l.tool, &|n: &str| {
                        taken.contains(n) || crate::meta::find(n).is_some()
                    });
                    taken.insert(name.clone());
                    tools.push(ToolEntry {
                        name: crate::custom::intern(&name),
                        integration: crate::custom::intern(server),
                        description: crate::custom::intern(&l.description),
                        keywords: &[],
                        effect: l.effect,
                        files: Files::None,
                        runner: Runner::Upstream(Arc::new(crate::upstream::UpstreamTool {
                            server: server.clone(),
                            tool: l.tool.clone(),
                        })),
                        schema_fn: no_schema,
                        schema: OnceLock::from(l.schema.clone()),
                    });
                }
            }
        }
        for app in &custom.apps {
            for op in &app.operations {
                tools.push(ToolEntry {
                    name: crate::custom::intern(&op.tool_name),
                    integration: crate::custom::intern(&app.name),
                    description: crate::custom::intern(&op.description),
                    keywords: &[],
                    effect: op.effect,
                    files: Files::None,
                    runner: Runner::Custom(op.clone()),
                    schema_fn: no_schema,
                    schema: OnceLock::from(op.schema.clone()),
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
            index: OnceLock::new(),
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
            || crate::meta::find(name).is_some()
            || self.integrations.iter().any(|i| i.name.split('_').next() == Some(name))
            || self.is_upstream_server(name)
    }

    /// Whether `name` is a compiled (plugin or built-in) tool.
    pub fn compiled_tool(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.custom().is_none())
    }

    /// The shipped catalogue: every plugin integration plus the built-ins.
    pub fn standard() -> Registry {
        Registry::new(plugins::INTEGRATIONS, crate::builtins::BUILTINS)
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

    pub fn index(&self) -> &search::SearchIndex {
        self.index.get_or_init(|| search::SearchIndex::build(self))
    }

    /// Names close to a mistyped tool name, best first.
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
            out = self.index().search(&wrong.replace('_', " "), max, &|_| false).into_iter().map(|h| h.name).collect();
        }
        out
    }
}

/// Whether an integration needs no credentials at all.
pub fn is_public(integration: &Integration) -> bool {
    integration.auth.kind == AuthKind::None
}
