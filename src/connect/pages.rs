//! The connect pages a person sees: plain server-rendered HTML with one small stylesheet, every
//! interpolated value escaped.

use plugins::api::{Field, Integration};

pub use crate::listener::pages::{CREDENTIAL_FOOTER, escape, failure, layout, layout_with_footer, success};

fn field_input(f: &Field) -> String {
    let kind = if f.secret { "password" } else { "text" };
    let required = if f.required { " required" } else { "" };
    format!(
        "<label for=\"{n}\">{label}{opt}</label><input id=\"{n}\" name=\"{n}\" type=\"{kind}\" autocomplete=\"off\" spellcheck=\"false\"{required}>{help}",
        n = escape(f.name),
        label = escape(f.label),
        opt = if f.required { "" } else { " <span style=\"font-weight:400;color:#8a91a0\">(optional)</span>" },
        help = if f.help.is_empty() { String::new() } else { format!("<small>{}</small>", escape(f.help)) },
    )
}

/// The credential form of an integration.
pub fn credential_form(
    integration: &Integration,
    action: &str,
    form_token: &str,
    error: Option<&str>,
    note: Option<&str>,
    replacing: Option<&str>,
    store: &StoreState,
) -> String {
    let mut inputs: String = integration.auth.fields.iter().map(field_input).collect();
    let mut note = note.map(str::to_string);
    if let Some(account) = replacing {
        let warning = format!(
            "{} is already connected as <strong>{}</strong>. Connecting again replaces that connection.",
            escape(integration.display_name),
            escape(account)
        );
        note = Some(match note {
            Some(n) => format!("{warning}</p><p>{n}"),
            None => warning,
        });
        inputs.push_str(&replace_box(account));
    }
    let note = note.as_deref();
    let mut error = error.map(|e| format!("<div class=\"err\">{}</div>", escape(e))).unwrap_or_default();
    if let Err(reason) = &store.answer {
        error.push_str(&format!(
            "<div class=\"err\" id=\"store-error\">The secret store does not answer: {}. Connecting fails until it does: run <code>workbench doctor</code> to see why (where no keychain can run, <code>workbench setup</code> chooses the encrypted file store).</div>",
            escape(reason)
        ));
    }
    let note = note.map(|n| format!("<p>{n}</p>")).unwrap_or_default();
    layout(
        &format!("Connect {}", integration.display_name),
        &format!(
            "<h1>Connect {name}</h1><p class=\"sub\">Your agent asked to use {name}. The credential is checked with {name} and stored in <span id=\"store\">{store}</span>.</p>{note}{error}\
             <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\">{inputs}<button type=\"submit\">Connect</button></form>",
            name = escape(integration.display_name),
            action = escape(action),
            token = escape(form_token),
            store = escape(&store.described),
        ),
    )
}

/// Which secret store a credential typed on a page goes to, and whether it answered just now.
pub struct StoreState {
    /// `SecretStore::describe`.
    pub described: String,
    pub answer: Result<(), String>,
}

/// The required "Replace" checkbox of a form that replaces a stored connection.
fn replace_box(account: &str) -> String {
    format!(
        "<label for=\"replace\"><input id=\"replace\" name=\"replace\" type=\"checkbox\" value=\"yes\" required style=\"width:auto;margin-right:8px\">Replace the connection as {}</label>",
        escape(account)
    )
}

/// The page before signing in again with OAuth: which connection will be replaced, and the
/// "Replace" box the user must tick.
pub fn replace_confirm(
    integration: &Integration,
    account: &str,
    action: &str,
    form_token: &str,
    error: Option<&str>,
) -> String {
    let error = error.map(|e| format!("<div class=\"err\">{}</div>", escape(e))).unwrap_or_default();
    layout(
        &format!("Reconnect {}", integration.display_name),
        &format!(
            "<h1>Reconnect {name}</h1><p class=\"sub\">{name} is already connected as <strong>{account}</strong>. Signing in again replaces that connection with the account you choose next.</p>{error}\
             <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\">{boxed}<button type=\"submit\">Continue to sign in</button></form>",
            name = escape(integration.display_name),
            account = escape(account),
            boxed = replace_box(account),
            action = escape(action),
            token = escape(form_token),
        ),
    )
}

/// The page for a vault secret: one password field.
pub fn secret_form(
    name: &str,
    description: Option<&str>,
    hosts: &[String],
    action: &str,
    form_token: &str,
    error: Option<&str>,
) -> String {
    let error = error.map(|e| format!("<div class=\"err\">{}</div>", escape(e))).unwrap_or_default();
    let hosts = if hosts.is_empty() {
        "no host yet".to_string()
    } else {
        hosts.iter().map(|h| format!("<code>{}</code>", escape(h))).collect::<Vec<_>>().join(", ")
    };
    layout(
        &format!("Store secret {name}"),
        &format!(
            "<h1>Store secret <code>{n}</code></h1><p class=\"sub\">{desc}Your agent can use it as <code>{{{{vault:{n}}}}}</code> for requests to {hosts}, but can never read it.</p>{error}\
             <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\">\
             <label for=\"value\">Value</label><input id=\"value\" name=\"value\" type=\"password\" autocomplete=\"off\" required><button type=\"submit\">Store</button></form>",
            n = escape(name),
            desc = description.map(|d| format!("{}. ", escape(d))).unwrap_or_default(),
            action = escape(action),
            token = escape(form_token),
        ),
    )
}

/// The bring-your-own OAuth client guide: where to create the client, the app type, the exact
/// redirect URI and the scopes, then a form for the client ID and secret.
pub fn oauth_client_guide(
    integration: &Integration,
    spec: &plugins::api::OAuth,
    redirect_uri: &str,
    fixed_port: bool,
    action: &str,
    form_token: &str,
    error: Option<&str>,
) -> String {
    let (console, app_type) = match spec.client {
        "google" => (
            "<a href=\"https://console.cloud.google.com/apis/credentials\">Google Cloud console → APIs &amp; Services → Credentials</a>",
            "Create credentials → <b>OAuth client ID</b>, application type <b>Desktop app</b> (enable the API of this service in the project first, and add yourself as a test user on the OAuth consent screen)",
        ),
        "slack" => (
            "<a href=\"https://api.slack.com/apps\">api.slack.com/apps</a>",
            "<b>Create New App → From scratch</b>, pick your workspace; under <b>OAuth &amp; Permissions</b> add the redirect URL below and the scopes below as <b>User Token Scopes</b>",
        ),
        _ => ("the provider's developer console", "a <b>web / desktop OAuth app</b> (authorization code with PKCE)"),
    };
    let scopes: String = spec.scopes.iter().map(|s| format!("<li><code>{}</code></li>", escape(s))).collect();
    let port_note = if fixed_port {
        String::new()
    } else {
        "<p class=\"sub\">The port in this address changes each time workbench starts unless you set <code>WORKBENCH_PORT</code>; set it (and register that address) if the provider needs an exact redirect URI.</p>".to_string()
    };
    let error = error.map(|e| format!("<div class=\"err\">{}</div>", escape(e))).unwrap_or_default();
    let client_upper = escape(&spec.client.to_ascii_uppercase());
    layout(
        &format!("Connect {}: your OAuth client", integration.display_name),
        &format!(
            "<h1>Connect {name}</h1><p class=\"sub\">{name} signs in through an OAuth client of your own. Create it once, paste its ID and secret here, and the sign-in continues.</p>{error}\
             <ol class=\"guide\"><li>Open {console}.</li><li>{app_type}.</li>\
             <li>Redirect URI to register: <code id=\"redirect-uri\">{redirect}</code></li>\
             <li>Scopes to request:<ul>{scopes}</ul></li></ol>{port_note}\
             <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"form_token\" value=\"{token}\">\
             <label>Client ID<input name=\"oauth_client_id\" required autocomplete=\"off\"></label>\
             <label>Client secret<input name=\"oauth_client_secret\" type=\"password\" autocomplete=\"off\"></label>\
             <button type=\"submit\">Save and sign in</button></form>\
             <p class=\"sub\">The client is kept in your secret store (never in a file or the database). You can also set <code>WORKBENCH_{client_upper}_CLIENT_ID</code> and <code>_CLIENT_SECRET</code>, or <code>oauth_clients</code> in config.json.</p>",
            name = escape(integration.display_name),
            redirect = escape(redirect_uri),
            action = escape(action),
            token = escape(form_token),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_interpolated_is_escaped() {
        assert_eq!(escape("<script>\"&'"), "&lt;script&gt;&quot;&amp;&#39;");
        let page = failure("x", "<img src=x onerror=alert(1)>");
        assert!(!page.contains("<img"));
    }
}
