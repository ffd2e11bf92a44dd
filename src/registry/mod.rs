//! The catalogue of every runnable tool: plugin tools from `plugins::INTEGRATIONS` plus built-ins.
//!
//! Built once at start from static data only (no schema generation, no index), so start-up stays in
//! microseconds; schemas and the search index are computed on first use and then cached.

pub mod search;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use plugins::api::{AuthKind, BoxFuture, Effect, Handler, Integration, ToolError};
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
#[derive(Clone, Copy)]
pub enum Runner {
    Plugin { integration: &'static Integration, run: Handler },
    Builtin(BuiltinHandler),
}

/// One runnable tool.
pub struct ToolEntry {
    pub name: &'static str,
    pub integration: &'static str,
    pub description: &'static str,
    pub keywords: &'static [&'static str],
    pub effect: Effect,
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

    pub fn plugin(&self) -> Option<&'static Integration> {
        match self.runner {
            Runner::Plugin { integration, .. } => Some(integration),
            Runner::Builtin(_) => None,
        }
    }
}

/// The tool catalogue and the integrations behind it.
pub struct Registry {
    tools: Vec<ToolEntry>,
    by_name: HashMap<&'static str, usize>,
    integrations: Vec<&'static Integration>,
    index: OnceLock<search::SearchIndex>,
}

impl Registry {
    pub fn new(integrations: &[&'static Integration], builtins: &'static [BuiltinSpec]) -> Registry {
        let mut tools = Vec::new();
        for integration in integrations {
            for spec in integration.tools {
                tools.push(ToolEntry {
                    name: spec.name,
                    integration: integration.name,
                    description: spec.description,
                    keywords: spec.keywords,
                    effect: spec.effect,
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
                runner: Runner::Builtin(spec.run),
                schema_fn: spec.schema,
                schema: OnceLock::new(),
            });
        }
        let by_name = tools.iter().enumerate().map(|(i, t)| (t.name, i)).collect();
        Registry { tools, by_name, integrations: integrations.to_vec(), index: OnceLock::new() }
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
        self.tools.iter().any(|t| matches!(t.runner, Runner::Builtin(_)) && t.integration == name)
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
