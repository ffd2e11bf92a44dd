//! `workbench connect`, `disconnect` and `status`: accounts of the compiled integrations, connected
//! through the same local pages the agent's `connect` opens.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::app::App;
use crate::meta::connect::Connection;
use crate::meta::wait_for_connection::Finished;
use crate::meta::{self, Failure};

use super::{StatusLine, exit};

/// Connects an integration from the terminal: prints the local page's URL and waits for it.
pub async fn connect(app: &Arc<App>, integration: &str) -> u8 {
    connect_account(app, integration, None, false).await
}

/// `workbench connect <integration> [--account NAME] [--default]`: connects (or reconnects) one
/// account; `--default` makes it the integration's default, at once when it is connected already
/// (no page), else once the page is completed. Only the user sets the default: the agent has no
/// tool for it.
pub async fn connect_account(app: &Arc<App>, integration: &str, account: Option<&str>, make_default: bool) -> u8 {
    if let Some(problem) = account.and_then(crate::auth::account_problem) {
        eprintln!("workbench: --account: {problem}");
        return exit::USAGE;
    }
    if make_default {
        let Some(i) = app.registry().integration(integration) else {
            eprintln!("workbench: unknown integration '{integration}'; `workbench status` lists them");
            return exit::FAILED;
        };
        let name = account.unwrap_or(crate::auth::DEFAULT_ACCOUNT);
        if app.accounts(i).iter().any(|a| a.name == name) {
            return set_default(app, i, name);
        }
    }
    let connection = meta::connect::run(app, meta::connect::Args::new(integration, account)).await;
    let code = finish_connect(app, integration, connection).await;
    if code == exit::OK
        && make_default
        && let Some(i) = app.registry().integration(integration)
    {
        return set_default(app, i, account.unwrap_or(crate::auth::DEFAULT_ACCOUNT));
    }
    code
}

/// Makes a stored account the integration's default (an environment-only account cannot be:
/// the default lives in SQLite with the stored accounts).
fn set_default(app: &Arc<App>, integration: &'static plugins::api::Integration, account: &str) -> u8 {
    match app.storage.set_default_account(integration.name, account) {
        Ok(true) => {
            out!("{}'s default account is now '{account}'.", integration.name);
            exit::OK
        }
        Ok(false) => {
            eprintln!(
                "workbench: '{account}' is not a stored account of {} (an account from environment variables cannot be made the default; connect it here first)",
                integration.name
            );
            exit::FAILED
        }
        Err(e) => {
            eprintln!("workbench: {e}");
            exit::FAILED
        }
    }
}

/// How often `workbench connect` looks whether the page was completed.
const CONNECT_POLL: Duration = Duration::from_millis(250);

async fn finish_connect(app: &Arc<App>, integration: &str, connection: Result<Connection, Failure>) -> u8 {
    let link = match connection {
        Err(failure) => {
            eprintln!("workbench: {}", failure.message());
            if let Some(near) = failure.nearest() {
                eprintln!("           did you mean '{near}'?");
            }
            return exit::FAILED;
        }
        Ok(Connection::Ready(ready)) => {
            out!("{}", ready.message);
            return exit::OK;
        }
        // Connected already: its tools work; the page would only replace the account.
        Ok(Connection::Link(link)) if link.existing.is_some() => {
            out!("{}", link.message);
            return exit::OK;
        }
        // An upstream MCP server's sign-in: its own page; the next call uses the token.
        Ok(Connection::Consent(consent)) => {
            out!("{}", consent.message);
            return exit::OK;
        }
        Ok(Connection::Link(link)) => link,
    };
    out!("Open this page to connect {integration}:\n\n    {}\n", link.url);
    if link.opened_in_browser {
        out!("(opened in your browser)");
    }
    let _ = std::io::stdout().flush();
    let mut line = StatusLine::new();
    let finished = meta::wait_for_connection::wait(app, &link.connection_id, None, CONNECT_POLL, |left| {
        let left = left.as_secs();
        line.tick(&format!("waiting for the page to be completed; the link expires in {}:{:02}", left / 60, left % 60));
    })
    .await;
    line.finish();
    match finished {
        Ok(Finished::Connected { account }) => {
            let who = account.map(|a| format!(" as {a}")).unwrap_or_default();
            out!("{integration} connected{who}.");
            exit::OK
        }
        Ok(Finished::Expired | Finished::TimedOut) => {
            out!("The link expired before the page was completed; run the command again.");
            exit::FAILED
        }
        Err(_) => {
            out!("The connection attempt is gone; run the command again.");
            exit::FAILED
        }
    }
}

/// Erases an integration's stored credential through `connection_delete_credentials` (so it is
/// audited, and the token is revoked at the provider where it has an endpoint for that).
pub async fn disconnect(app: &Arc<App>, integration: &str, revoke: bool) -> u8 {
    disconnect_account(app, integration, None, revoke).await
}

/// `workbench disconnect <integration> [--account NAME]`: erases one account (the default when
/// none is named); the oldest remaining account becomes the default if it was.
pub async fn disconnect_account(app: &Arc<App>, integration: &str, account: Option<&str>, revoke: bool) -> u8 {
    if app.registry().integration(integration).is_none() {
        eprintln!("workbench: unknown integration '{integration}'; `workbench status` lists them");
        return exit::FAILED;
    }
    use crate::builtins::connection::{self, DeleteCredentials, Disconnected};
    let args = DeleteCredentials {
        integration: integration.to_string(),
        revoke_remote: revoke,
        account: account.map(String::from),
    };
    // The user typed this command: no model is involved, so no safety policy asks.
    match connection::disconnect_by_user(app, args).await {
        Err(e) => {
            eprintln!("workbench: {}", app.exposed.text(&connection::message(&e)));
            return exit::FAILED;
        }
        Ok(Disconnected::Erased { account, erased: true, revoked, .. }) => {
            let revoked = match revoked {
                Some(true) => " and revoked its token at the provider",
                Some(false) => " (the provider did not confirm the token's revocation)",
                None => "",
            };
            let which = match account.as_str() {
                crate::auth::DEFAULT_ACCOUNT => String::new(),
                a => format!(" (account '{a}')"),
            };
            out!("{integration}{which} disconnected: erased the stored credential{revoked}.");
        }
        Ok(_) => out!("{integration} was not connected; nothing to erase."),
    }
    exit::OK
}

/// Prints integrations with their connection state and the stores in use.
pub fn status(app: &Arc<App>) -> u8 {
    out!("data directory: {}", app.settings.home.display());
    out!("secret store:   {} ({})", app.secrets.name(), app.secrets.describe());
    let answer = if app.secrets.locked() {
        "locked: type its passphrase on the unlock page a connect link opens, or run `workbench setup`".to_string()
    } else if app.secrets.name() == "memory" {
        "in memory: nothing is kept after this process".to_string()
    } else {
        match crate::secrets::probe(app.secrets.clone(), crate::doctor::STORE_DEADLINE) {
            Ok(()) => "answers".to_string(),
            Err(reason) => format!("DOES NOT ANSWER: {reason} (see `workbench doctor`)"),
        }
    };
    out!("store state:    {answer}");
    out!();
    out!("{:<18} {:<10} {:<12} account", "integration", "auth", "connected");
    let mut several = false;
    for i in app.registry().integrations() {
        let accounts = if crate::registry::is_public(i) { Vec::new() } else { app.accounts(i) };
        let state = |a: Option<&crate::auth::Account>| match a {
            _ if crate::registry::is_public(i) => "public",
            Some(a) if a.source == crate::auth::Source::Environment => "env",
            Some(_) => "yes",
            None => "no",
        };
        // One account named `default`: the line as it always was. Several (or a named one): one
        // line per account, `name: identity`, the default marked.
        if accounts.len() <= 1 && accounts.iter().all(|a| a.name == crate::auth::DEFAULT_ACCOUNT) {
            let identity = accounts.first().and_then(|a| a.identity.clone()).unwrap_or_default();
            out!("{:<18} {:<10} {:<12} {}", i.name, i.auth.kind.as_str(), state(accounts.first()), identity);
            continue;
        }
        several = true;
        for (n, a) in accounts.iter().enumerate() {
            let (name, kind) = if n == 0 { (i.name, i.auth.kind.as_str()) } else { ("", "") };
            let mark = if a.default { " (default)" } else { "" };
            let identity = a.identity.as_deref().map(|l| format!(": {l}")).unwrap_or_default();
            out!("{:<18} {:<10} {:<12} {}{mark}{identity}", name, kind, state(Some(a)), a.name);
        }
    }
    if several {
        out!();
        out!(
            "Change an integration's default account with `workbench connect <integration> --account <name> --default`."
        );
    }
    exit::OK
}
