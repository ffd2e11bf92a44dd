//! The composition root: the one place that knows every module. It builds an [`App`] from its
//! shared handles, installs the catalogue (the compiled integrations, the built-ins, the
//! meta-tools' reserved names) and mounts each module's routes on the loopback listener, so no
//! module below has to name a module above it.
//!
//! `App::new` (the binary's app) and `App::with_parts` (tests: a catalogue and a secret store of
//! their own) are defined here, not in `src/app.rs`, because they name the registry and the
//! listener's routes.

use std::sync::Arc;

use crate::app::{App, State};
use crate::config::Settings;
use crate::listener::Mount;
use crate::registry::{Registry, Snapshot};
use crate::secrets::SecretStore;

impl Registry {
    /// The shipped catalogue: every plugin integration plus the built-ins, with the meta-tools'
    /// names reserved.
    pub fn standard() -> Registry {
        Registry::new_reserving(plugins::INTEGRATIONS, crate::builtins::BUILTINS, meta_tool_name)
    }
}

impl State {
    /// Every module's state, empty but for the catalogue (`registry`, whose meta-tool names are
    /// reserved) and the configured upstream servers; no I/O.
    fn new(settings: &Settings, registry: Registry) -> State {
        let upstreams =
            crate::upstream::Upstreams::new(settings.mcp_servers.clone()).watching(settings.home.join("config.json"));
        State {
            integrations: registry.integrations().to_vec(),
            registry: Arc::new(Snapshot::new(registry)),
            upstreams: Arc::new(upstreams),
            sessions: Default::default(),
            refresh_locks: Default::default(),
            flow: Default::default(),
            callback_hooks: Default::default(),
            connect_flows: Default::default(),
            listener: Default::default(),
            live_checks: Default::default(),
            signing_key: Default::default(),
            governor: Default::default(),
            approvals: Default::default(),
        }
    }
}

/// Whether `name` is a meta-tool's (no upstream tool or custom app may take it).
fn meta_tool_name(name: &str) -> bool {
    crate::meta::find(name).is_some()
}

impl App {
    /// The app as the binary runs it: the shipped catalogue and the configured secret store.
    pub fn new(settings: Settings) -> Arc<App> {
        let store = crate::app::secret_store(&settings);
        // The standard catalogue has the meta-tools' names reserved already: built once, not
        // rebuilt to reserve them again (start-up time, docs/footprint.md).
        Self::assemble(settings, Registry::standard(), store)
    }

    /// An app with `registry` as its compiled catalogue and `secrets` as its secret store.
    pub fn with_parts(settings: Settings, registry: Registry, secrets: Arc<dyn SecretStore>) -> Arc<App> {
        Self::assemble(settings, registry.reserving(meta_tool_name), secrets)
    }

    /// The app around `registry`, whose meta-tool names are reserved.
    fn assemble(settings: Settings, registry: Registry, secrets: Arc<dyn SecretStore>) -> Arc<App> {
        crate::registry::search::set_threads(settings.search_threads);
        let state = State::new(&settings, registry);
        let app = App::from_parts(settings, secrets, state);
        for mount in [
            Mount::Bare(crate::proxy::routes),
            Mount::Pages(crate::connect::routes),
            Mount::Pages(crate::approval::routes),
            Mount::Pages(crate::portal::routes),
        ] {
            crate::listener::mount(&app, mount);
        }
        // An upstream MCP server's OAuth consent comes back on the same /oauth/callback.
        crate::connect::add_callback_hook(&app, |app, state, query| {
            Box::pin(async move { crate::upstream::oauth::callback(&app, &state, &query).await })
        });
        Arc::new(app)
    }
}
