//! `workbench servers`: the user's other MCP servers behind workbench (`src/upstream/`): add, list,
//! review, remove and import from the installed clients.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::app::App;
use crate::clients::{self, Client, Locations, Op};

use super::clients::{clients, registration_command};
use super::exit;

/// Why a server name cannot be used, if it cannot.
fn server_name_problem(name: &str) -> Option<String> {
    if !crate::upstream::config::valid_name(name) {
        return Some(format!(
            "'{name}' is not a usable server name ({}); try '{}'",
            crate::upstream::config::NAME_RULE,
            crate::upstream::config::clean_name(name)
        ));
    }
    let compiled = crate::registry::Registry::standard();
    if compiled.reserved_namespace(name) || matches!(name, "vault" | "custom" | "connection" | "curl" | "workbench") {
        return Some(format!("'{name}' is taken by workbench's own tools; call it '{name}_mcp' instead"));
    }
    None
}

/// Why `servers add` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ServerAddError {
    /// The name cannot be used (the text says why and what to use instead).
    #[error("{0}")]
    Name(String),
    #[error("give the server's command after --, e.g. workbench servers add clock -- uvx mcp-server-time")]
    NoCommand,
    #[error(transparent)]
    Settings(#[from] crate::config::ConfigError),
    /// config.json could not be edited.
    #[error(transparent)]
    Config(#[from] crate::upstream::config::EditError),
}

/// `servers add NAME -- CMD ARGS...` (or `-- URL` for a Streamable HTTP server): writes the entry
/// to config.json (atomically, other keys kept). Returns the data directory.
pub fn servers_add_config(name: &str, command: &[String]) -> Result<PathBuf, ServerAddError> {
    if let Some(p) = server_name_problem(name) {
        return Err(ServerAddError::Name(p));
    }
    let Some((program, args)) = command.split_first() else {
        return Err(ServerAddError::NoCommand);
    };
    let settings = crate::config::Settings::from_env()?;
    let entry = if args.is_empty() && (program.starts_with("http://") || program.starts_with("https://")) {
        crate::upstream::ServerConfig::Http {
            url: program.clone(),
            headers: Default::default(),
            effects: Default::default(),
        }
    } else {
        crate::upstream::ServerConfig::Stdio {
            command: program.clone(),
            args: args.to_vec(),
            env: Default::default(),
            effects: Default::default(),
        }
    };
    crate::upstream::config::edit_config(&settings.home, |servers| {
        servers.insert(name.to_string(), entry.to_value());
        Ok(())
    })
    .map_err(ServerAddError::Config)?;
    Ok(settings.home)
}

/// After `servers add`: starts the server once to cache its tool list, then stops it.
pub async fn servers_fetch(app: &Arc<App>, name: &str) -> u8 {
    out!("{name}: added to {}", app.settings.home.join("config.json").display());
    let result = app.upstream().ensure_started(app, name).await;
    app.upstream().shutdown().await;
    // The definitions listed now are the ones the user accepted by adding the server.
    if result.is_ok()
        && let Err(e) = app.upstream().accept(&app.storage, name)
    {
        out!("{name}: its tool definitions could not be pinned: {e}");
    }
    match result {
        Ok(n) => {
            out!("{name}: started, {n} tool(s) listed and cached; they are searchable now as {name}_*");
            out!("    restart your MCP client (or workbench) so a running workbench picks the server up");
            exit::OK
        }
        Err(e) => {
            out!("{name}: FAILED to start: {e}");
            out!(
                "    the entry stays in config.json; fix the command and run `workbench servers add` again, or `workbench servers remove {name}`"
            );
            exit::FAILED
        }
    }
}

/// `servers list`: every configured server with its state, tool count and last error.
pub fn servers_list(app: &Arc<App>) -> u8 {
    let upstreams = app.upstream();
    let configs = upstreams.configs();
    if configs.is_empty() {
        out!("No upstream MCP servers. Add one with `workbench servers add NAME -- COMMAND ARGS...`");
        out!("or bring over the ones your MCP clients run with `workbench servers import`.");
        return exit::OK;
    }
    let cached: std::collections::HashMap<String, crate::storage::UpstreamListing> =
        app.storage.upstream_listings().unwrap_or_default().into_iter().map(|l| (l.server.clone(), l)).collect();
    let pending = upstreams.pending(&app.storage);
    let registry = app.registry();
    let collisions = registry.upstream_collisions();
    let exposed: std::collections::HashMap<(&str, &str), &str> = registry
        .tools()
        .iter()
        .filter_map(|t| t.upstream().map(|u| ((u.server.as_str(), u.tool.as_str()), t.name)))
        .collect();
    let mut failed = false;
    for (name, config) in configs.iter() {
        match config {
            Err(e) => {
                failed = true;
                out!("{name}: INVALID entry in config.json: {e}");
            }
            Ok(c) => {
                let status = app.upstream().status(name);
                let state = if status.running {
                    format!("running (pid {})", status.pid.map(|p| p.to_string()).unwrap_or_default())
                } else {
                    "not running (starts on first use)".to_string()
                };
                let tools = match cached.get(name) {
                    Some(l) => {
                        let n = serde_json::from_str::<Value>(&l.tools).ok().and_then(|v| v.as_array().map(Vec::len));
                        format!("{} tool(s), listed {}", n.unwrap_or(0), l.listed_at)
                    }
                    None => "no tools listed yet".to_string(),
                };
                out!("{name}: {state}; {tools}");
                out!("    {}", c.describe());
                if let Some(problem) = server_name_problem(name) {
                    out!("    NOT OFFERED: {problem}");
                }
                // Each tool: the name it is offered as and the effect it is treated with.
                let waiting = pending.get(name.as_str());
                let listed = cached
                    .get(name)
                    .and_then(|l| serde_json::from_str::<Value>(&l.tools).ok())
                    .and_then(|v| v.as_array().cloned())
                    .unwrap_or_default();
                for t in &listed {
                    let Some(tool) = t.get("name").and_then(Value::as_str) else { continue };
                    let (effect, why) = crate::upstream::effect_of(Some(c), t);
                    let offered = match waiting.and_then(|w| w.iter().find(|ch| ch.tool == tool)) {
                        Some(ch) => format!("WAITING FOR REVIEW ({})", ch.describe()),
                        None => exposed.get(&(name.as_str(), tool)).map_or_else(
                            || "NOT OFFERED (see the name clash below)".to_string(),
                            |n| format!("offered as {n}"),
                        ),
                    };
                    out!(
                        "    tool {tool}: {offered}; effect {} ({})",
                        crate::upstream::effect_word(effect),
                        why.describe()
                    );
                }
                if let Some(w) = waiting {
                    out!(
                        "    {} change(s) waiting: run `workbench servers review {name}` to see them and accept them",
                        w.len()
                    );
                }
                for clash in collisions.iter().filter(|cl| cl.tools.iter().any(|(s, _)| s == name)) {
                    out!("    NAME CLASH: {}", clash.describe());
                }
                if let Some(e) = status.last_error.or_else(|| cached.get(name).and_then(|l| l.last_error.clone())) {
                    out!("    last error: {e}");
                }
            }
        }
    }
    if failed { exit::FAILED } else { exit::OK }
}

/// `servers review [NAME] [--accept]`: the tools whose definitions a server changed since the user
/// accepted them (or added), with what changed; `--accept` accepts NAME's current definitions.
pub fn servers_review(app: &Arc<App>, name: Option<&str>, accept: bool) -> u8 {
    let pending = app.upstream().pending(&app.storage);
    let configs = app.upstream().configs();
    if let Some(n) = name
        && !matches!(configs.get(n), Some(Ok(_)))
    {
        out!("{n}: not configured (`workbench servers list` shows the configured ones)");
        return exit::FAILED;
    }
    let chosen: Vec<(&String, &Vec<crate::upstream::pins::Change>)> =
        pending.iter().filter(|(s, _)| name.is_none_or(|n| n == s.as_str())).collect();
    if chosen.is_empty() {
        match name {
            Some(n) => out!("{n}: no changes waiting; its tools are the definitions you accepted"),
            None => out!("No changes waiting: every upstream tool is the definition you accepted."),
        }
        return exit::OK;
    }
    let text = |v: &Value, key: &str| -> String {
        let t = v.get(key).map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)).unwrap_or_default();
        plugins::api::truncate_chars(&app.exposed.text(&t), 400).0
    };
    for (server, changes) in &chosen {
        let config = configs.get(*server).and_then(|c| c.as_ref().ok());
        out!("{server}: {} tool(s) waiting for your review (not searchable or callable until accepted)", changes.len());
        for ch in changes.iter() {
            let (effect, why) = crate::upstream::effect_of(config, &ch.now);
            out!(
                "  tool {}: {}; effect {} ({})",
                ch.tool,
                ch.describe(),
                crate::upstream::effect_word(effect),
                why.describe()
            );
            if let Some(was) = &ch.was {
                for key in ["description", "inputSchema", "annotations"] {
                    if was.get(key) != ch.now.get(key) {
                        out!("    {key} was: {}", text(was, key));
                        out!("    {key} now: {}", text(&ch.now, key));
                    }
                }
            } else {
                out!("    description: {}", text(&ch.now, "description"));
            }
        }
    }
    if !accept {
        out!("To accept a server's current tools: workbench servers review NAME --accept");
        return exit::OK;
    }
    let Some(server) = name else { return exit::USAGE };
    match app.upstream().accept(&app.storage, server) {
        Ok(n) => {
            out!("{server}: accepted {n} change(s); its tools are offered as listed now");
            exit::OK
        }
        Err(e) => {
            out!("{server}: could not record the acceptance: {e}");
            exit::FAILED
        }
    }
}

/// `servers remove NAME`: takes it out of config.json and forgets its cached tools.
pub async fn servers_remove(app: &Arc<App>, name: &str) -> u8 {
    let mut found = false;
    let edited = crate::upstream::config::edit_config(&app.settings.home, |servers| {
        found = servers.remove(name).is_some();
        Ok(())
    });
    if let Err(e) = edited {
        out!("workbench: {e}");
        return exit::FAILED;
    }
    let _ = app.storage.delete_upstream_listing(name.to_string()).await;
    let _ = app.storage.delete_upstream_pins(name);
    if found {
        out!("{name}: removed from {}", app.settings.home.join("config.json").display());
        exit::OK
    } else {
        out!("{name}: not configured; nothing changed (`workbench servers list` shows the configured ones)");
        exit::FAILED
    }
}

/// One server another client runs, as `servers import` offers it.
#[derive(Debug, Clone)]
pub struct Offer {
    pub client: Client,
    /// Its name in the client's config.
    pub original: String,
    /// The name it gets in workbench.
    pub name: String,
    pub config: Result<crate::upstream::ServerConfig, crate::upstream::config::EntryError>,
}

/// The servers registered in the installed clients' configs that workbench does not have yet.
pub fn import_offers(loc: &Locations, chosen: &[Client], have: &dyn Fn(&str) -> bool) -> Vec<Offer> {
    let targets: Vec<Client> = if chosen.is_empty() { Client::ALL.to_vec() } else { chosen.to_vec() };
    let mut offers: Vec<Offer> = Vec::new();
    for client in targets {
        let Ok(text) = std::fs::read_to_string(loc.config_path(client)) else { continue };
        let Ok(servers) = clients::other_servers(&text) else { continue };
        for (original, entry) in servers {
            let mut name = crate::upstream::config::clean_name(&original);
            if server_name_problem(&name).is_some() {
                name = crate::upstream::config::clean_name(&format!("{name}_mcp"));
            }
            if have(&name) || offers.iter().any(|o| o.name == name) {
                continue;
            }
            offers.push(Offer { client, original, name, config: crate::upstream::ServerConfig::parse(&entry) });
        }
    }
    offers
}

/// `servers import [--yes] [--replace]`: offers the servers Claude Desktop, Cursor and Claude
/// Code run, adds the chosen ones to config.json, and with `--replace` removes them from those
/// clients' configs (registering workbench there instead; backup + byte-exact splice).
/// Returns the exit status and the names added (whose tools `servers_fetch_all` lists next).
pub fn servers_import(chosen: &[Client], yes: bool, replace: bool, dry_run: bool) -> (u8, Vec<String>) {
    let mut added = Vec::new();
    let status = import_inner(chosen, yes, replace, dry_run, &mut added);
    (status, added)
}

/// Starts each named server once to cache its tool list (so its tools are searchable and callable
/// at once), then stops them all.
pub async fn servers_fetch_all(app: &Arc<App>, names: &[String]) -> u8 {
    let mut status = exit::OK;
    for name in names {
        match app.upstream().ensure_started(app, name).await {
            Ok(n) => {
                out!("{name}: {n} tool(s) listed and cached");
                if let Err(e) = app.upstream().accept(&app.storage, name) {
                    out!("{name}: its tool definitions could not be pinned: {e}");
                }
            }
            Err(e) => {
                status = exit::FAILED;
                out!("{name}: FAILED to start: {e} (it stays configured; `workbench servers list` shows it)");
            }
        }
    }
    app.upstream().shutdown().await;
    status
}

fn import_inner(chosen: &[Client], yes: bool, replace: bool, dry_run: bool, added: &mut Vec<String>) -> u8 {
    let Some(loc) = Locations::from_env() else {
        eprintln!("workbench: HOME is not set, so client configs cannot be found");
        return exit::FAILED;
    };
    let settings = match crate::config::Settings::from_env() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let offers = import_offers(&loc, chosen, &|n| settings.mcp_servers.contains_key(n));
    if offers.is_empty() {
        out!("No MCP servers to import: the clients' configs list none that workbench does not already have.");
        return exit::OK;
    }
    out!("MCP servers registered in your clients:");
    for o in &offers {
        let rename = if o.name != o.original { format!(" (as {})", o.name) } else { String::new() };
        match &o.config {
            Ok(c) => out!("  {}{rename} from {}: {}", o.original, o.client.display(), c.describe()),
            Err(e) => out!("  {}{rename} from {}: SKIPPED ({e})", o.original, o.client.display()),
        }
    }
    let usable: Vec<&Offer> = offers.iter().filter(|o| o.config.is_ok()).collect();
    if usable.is_empty() {
        out!("None of them can be imported as they are; nothing was changed.");
        return exit::OK;
    }
    if dry_run {
        out!("(dry run: nothing was changed)");
        return exit::OK;
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            out!(
                "Run `workbench servers import --yes` to add them (add --replace to also move them out of the clients' configs)."
            );
            return exit::OK;
        }
        out!("Add these {} server(s) to workbench? [y/N] ", usable.len());
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            out!("Nothing was changed.");
            return exit::OK;
        }
    }
    let edited = crate::upstream::config::edit_config(&settings.home, |servers| {
        for o in &usable {
            if let Ok(c) = &o.config {
                servers.insert(o.name.clone(), c.to_value());
            }
        }
        Ok(())
    });
    if let Err(e) = edited {
        out!("workbench: {e}");
        return exit::FAILED;
    }
    added.extend(usable.iter().map(|o| o.name.clone()));
    out!(
        "Added {} server(s) to {}; listing their tools once:",
        usable.len(),
        settings.home.join("config.json").display()
    );
    if !replace {
        out!(
            "Your clients still run them directly; `workbench servers import --replace --yes` moves them behind workbench."
        );
        return exit::OK;
    }
    let command = match registration_command(None, false) {
        Ok(c) => c,
        Err(e) => {
            out!("workbench: {e}");
            return exit::FAILED;
        }
    };
    let mut status = exit::OK;
    for client in Client::ALL {
        let moved: Vec<String> = usable.iter().filter(|o| o.client == client).map(|o| o.original.clone()).collect();
        if moved.is_empty() {
            continue;
        }
        if clients(Op::Replace(&command, &moved), &[client], false) != exit::OK {
            status = exit::FAILED;
        }
    }
    status
}
