//! Terminal commands (`workbench connect`, `workbench status`): the same meta-tools and pages the
//! agent uses, driven from a shell so a user can set up accounts before opening their agent.

use std::io::Write;
use std::sync::Arc;

use serde_json::json;

use crate::app::{App, PendingState};

/// Connects an integration from the terminal; returns the process exit code.
pub async fn connect(app: &Arc<App>, integration: &str) -> u8 {
    let out =
        crate::meta::call(app, "connect", json!({ "integration": integration })).await.expect("connect is a meta-tool");
    if out.is_error {
        let msg = out.body["error"].as_str().map(str::to_string).unwrap_or_else(|| out.body.to_string());
        eprintln!("workbench: {msg}");
        if let Some(near) = out.body["did_you_mean"].as_str() {
            eprintln!("           did you mean '{near}'?");
        }
        return 1;
    }
    if out.body["status"] == "CONNECTED" {
        println!("{}", out.body["message"].as_str().unwrap_or("connected"));
        return 0;
    }
    let url = out.body["url"].as_str().unwrap_or_default();
    println!("Open this page to connect {integration}:\n\n    {url}\n");
    if out.body["openedInBrowser"] == true {
        println!("(opened in your browser)");
    }
    print!("Waiting");
    let _ = std::io::stdout().flush();
    let id = out.body["connectionId"].as_str().unwrap_or_default().to_string();
    let mut ticks = 0u32;
    loop {
        let state = {
            let pending = app.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.get(&id).map(|p| (p.state, p.expires, p.account.clone()))
        };
        match state {
            Some((PendingState::Connected, _, account)) => {
                let who = account.map(|a| format!(" as {a}")).unwrap_or_default();
                println!(" connected{who}.");
                return 0;
            }
            Some((_, expires, _)) if std::time::Instant::now() >= expires => {
                println!(" the link expired; run the command again.");
                return 1;
            }
            Some(_) => {}
            None => {
                println!(" the connection attempt is gone; run the command again.");
                return 1;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        ticks += 1;
        if ticks.is_multiple_of(8) {
            print!(".");
            let _ = std::io::stdout().flush();
        }
    }
}

/// Prints integrations with their connection state and the stores in use.
pub fn status(app: &Arc<App>) -> u8 {
    println!("data directory: {}", app.settings.home.display());
    println!("secret store:   {}", app.secrets.name());
    println!();
    println!("{:<18} {:<10} {:<12} account", "integration", "auth", "connected");
    for i in app.registry().integrations() {
        let env = crate::auth::from_env(i, &|v| app.settings.credential_env.get(v).cloned()).is_some();
        let meta = app.storage.connection_meta(i.name).ok().flatten();
        let state = if crate::registry::is_public(i) {
            "public"
        } else if env {
            "env"
        } else if meta.is_some() {
            "yes"
        } else {
            "no"
        };
        let account = meta.and_then(|m| m.account_label).unwrap_or_default();
        println!("{:<18} {:<10} {:<12} {}", i.name, i.auth.kind.as_str(), state, account);
    }
    0
}
