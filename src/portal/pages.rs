//! The portal's HTML: one stylesheet and one small script (both carrying the response's CSP
//! nonce), server-rendered tables and forms, every interpolated value escaped. Links are relative
//! to `/portal/<token>/`, so the token is never written into a page.

use serde_json::Value;

use super::{AuditFilters, ConnState, CustomAppRow, IntegrationRow, PERIODS, StoreInfo};
use crate::app::App;
use crate::listener::pages::escape;
use crate::storage::VaultMeta;

/// Which page is shown (the navigation marks it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Integrations,
    Audit,
    Secrets,
    Apps,
}

/// A message above the page's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    Ok(String),
    Err(String),
}

/// A page before it is wrapped in the layout; `body` is finished (escaped) HTML.
pub struct Page {
    pub tab: Tab,
    pub notice: Option<Notice>,
    pub body: String,
}

const STYLE: &str = r#"
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f8;color:#1d2330}
.wrap{max-width:1120px;margin:0 auto;padding:0 24px}
header.top{background:#171c26;color:#fff}
header.top .wrap{display:flex;align-items:center;gap:28px;height:54px}
.brand{font-weight:700;font-size:16px;letter-spacing:.2px;white-space:nowrap}
.brand span{font-weight:400;color:#9aa3b5;margin-left:6px}
nav{display:flex;gap:4px}
nav a{color:#c5cbd8;text-decoration:none;padding:6px 12px;border-radius:6px;white-space:nowrap}
nav a:hover{background:#262d3b;color:#fff}
nav a[aria-current=page]{background:#2f5bea;color:#fff}
.storetag{margin-left:auto;color:#9aa3b5;font-size:13px;white-space:nowrap}
.storetag b{color:#e6e9ef;font-weight:600}
main.wrap{padding:28px 24px 8px}
h1{font-size:22px;margin:0 0 4px}
p.sub{color:#5b6475;margin:0 0 22px;max-width:760px}
.card{background:#fff;border:1px solid #e3e6ec;border-radius:10px;box-shadow:0 1px 2px rgba(16,24,40,.04);margin-bottom:22px;overflow:hidden}
.card>h2{font-size:15px;margin:0;padding:13px 18px;border-bottom:1px solid #e3e6ec;display:flex;align-items:center;gap:8px}
.card>h2 .count{font-weight:500;color:#8a91a0;font-size:13px}
.card>p{margin:0;padding:14px 18px;color:#5b6475}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:10px 18px;border-bottom:1px solid #eef0f4;vertical-align:middle}
th{font-size:11.5px;text-transform:uppercase;letter-spacing:.05em;color:#6b7385;font-weight:600;background:#fafbfc}
tbody tr:last-child td{border-bottom:0}
tbody tr:hover td{background:#fbfcfe}
td.num{text-align:right;white-space:nowrap;color:#5b6475}
td.time{white-space:nowrap;color:#5b6475}
td.actions{text-align:right;white-space:nowrap}
td.actions form{display:inline-block;margin:0 0 0 6px}
table.integrations{table-layout:fixed}.c-name{width:27%}.c-state{width:16%}.c-actions{width:280px}
table.integrations td{overflow-wrap:anywhere}
small.name{display:block;color:#8a91a0;font-size:12px}
.badge{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600;white-space:nowrap}
.b-on{background:#e3f6ea;color:#17572c}.b-off{background:#eef0f4;color:#5b6475}.b-env{background:#fff3d1;color:#7a5200}
.b-err{background:#fdecec;color:#a12020}.b-chg{background:#efe9fd;color:#5232a8;margin-left:4px}.b-pub{background:#e8eefc;color:#2340a0}
button,.button{font:inherit;font-weight:600;font-size:13px;border-radius:6px;padding:6px 14px;cursor:pointer;border:1px solid transparent;text-decoration:none;display:inline-block;line-height:1.4}
.primary{background:#2f5bea;color:#fff}.primary:hover{background:#2449c4}
.secondary{background:#fff;color:#1d2330;border-color:#c9ced8}.secondary:hover{background:#f4f5f8}
.danger{background:#fff;color:#b42318;border-color:#f1b4b4}.danger:hover{background:#fdf1f1}
.notice{padding:10px 14px;border-radius:8px;margin:0 0 18px}
.notice.ok{background:#e9f8ee;border:1px solid #b6e2c3;color:#17572c}
.notice.err{background:#fdecec;border:1px solid #f3b9b9;color:#8a1f1f}
.stats{display:flex;gap:14px;margin:0 0 22px;flex-wrap:wrap}
.stat{background:#fff;border:1px solid #e3e6ec;border-radius:10px;padding:12px 18px;min-width:150px}
.stat b{display:block;font-size:22px;line-height:1.2}
.stat span{color:#5b6475;font-size:13px}
.chips{display:flex;flex-wrap:wrap;gap:8px;padding:14px 18px}
.chip{background:#f1f3f6;border-radius:999px;padding:3px 12px;font-size:13px}
form.filters{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end;padding:14px 18px;border-bottom:1px solid #e3e6ec;background:#fafbfc}
form.filters label{display:flex;flex-direction:column;gap:4px;font-size:12px;font-weight:600;color:#5b6475}
form.filters label.grow{flex:1 1 200px}
form.filters label.check{flex-direction:row;align-items:center;gap:6px;padding-bottom:7px;font-weight:500;color:#1d2330;font-size:13px}
input[type=text],input[type=search],select{font:inherit;font-size:13px;height:33px;padding:5px 8px;border:1px solid #c9ced8;border-radius:6px;background:#fff;color:#1d2330;min-width:0}
.filters .buttons{display:flex;gap:8px;align-items:center;padding-bottom:1px}
code{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f3f6;padding:1px 5px;border-radius:4px;word-break:break-all}
td.detail{max-width:440px}
td.detail details summary{cursor:pointer;list-style:none}
td.detail pre{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f7f9;border:1px solid #eef0f4;border-radius:6px;padding:8px 10px;margin:6px 0 0;white-space:pre-wrap;word-break:break-all;max-height:320px;overflow:auto}
.errtext{color:#a12020;font-size:13px;margin-top:3px}
.pager{display:flex;justify-content:space-between;align-items:center;padding:12px 18px;border-top:1px solid #e3e6ec;background:#fafbfc}
.pager .links{display:flex;gap:8px}
.kv{display:grid;grid-template-columns:140px 1fr;gap:10px 16px;padding:16px 18px;align-items:center}
.kv dt{color:#5b6475;font-size:13px}.kv dd{margin:0}
.kv dd form{display:inline-block;margin-left:10px}
.muted{color:#8a91a0}
.empty{padding:22px 18px;color:#5b6475}
footer.wrap{color:#8a91a0;font-size:12px;padding:6px 24px 36px}
"#;

const SCRIPT: &str = r#"
(function () {
  document.querySelectorAll("form[data-confirm]").forEach(function (f) {
    f.addEventListener("submit", function (e) {
      if (!window.confirm(f.getAttribute("data-confirm"))) e.preventDefault();
    });
  });
  // A connect page opens in a new tab. Until that integration's state changes (or the link's ten
  // minutes are over), look at this page again every 1.5 s, and show it anew once it has.
  // (Read from the text: a parsed copy would apply its style under this page's CSP nonce.)
  function state(html, name) {
    var key = 'data-integration="' + name + '" data-state="', at = html.indexOf(key);
    return at < 0 ? null : html.slice(at + key.length, html.indexOf('"', at + key.length));
  }
  document.querySelectorAll("form[action=connect]").forEach(function (f) {
    f.addEventListener("submit", function () {
      var name = f.querySelector("input[name=integration]").value, tries = 0;
      var before = f.closest("tr").getAttribute("data-state");
      var timer = setInterval(function () {
        if (++tries > 400) return clearInterval(timer);
        fetch(location.pathname, { cache: "no-store" }).then(function (r) {
          if (!r.ok) { clearInterval(timer); return null; }
          return r.text();
        }).then(function (html) {
          if (html === null) return;
          var now = state(html, name);
          if (now !== before) { clearInterval(timer); location.replace(location.pathname); }
        }).catch(function () { clearInterval(timer); });
      }, 1500);
    });
  });
})();
"#;

fn store_label(name: &str) -> &str {
    match name {
        "keychain" => "OS keychain",
        "file" => "Encrypted file",
        "memory" => "Process memory",
        other => other,
    }
}

/// The whole document around a page.
pub fn render(app: &App, page: &Page, nonce: &str) -> String {
    let tabs = [
        (Tab::Integrations, "./", "Integrations"),
        (Tab::Audit, "audit", "Audit log"),
        (Tab::Secrets, "secrets", "Secrets"),
        (Tab::Apps, "apps", "Custom apps"),
    ];
    let nav: String = tabs
        .iter()
        .map(|(t, href, label)| {
            let current = if *t == page.tab { " aria-current=\"page\"" } else { "" };
            format!("<a href=\"{href}\"{current}>{label}</a>")
        })
        .collect();
    let title = tabs.iter().find(|(t, _, _)| *t == page.tab).map(|(_, _, l)| *l).unwrap_or("Portal");
    let store = app.secrets.name();
    let locked = if app.secrets.locked() { " (locked)" } else { "" };
    let notice = match &page.notice {
        Some(Notice::Ok(m)) => format!("<div class=\"notice ok\" role=\"status\">{}</div>", escape(m)),
        Some(Notice::Err(m)) => format!("<div class=\"notice err\" role=\"alert\">{}</div>", escape(m)),
        None => String::new(),
    };
    let nonce = escape(nonce);
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title} · workbench portal</title><style nonce=\"{nonce}\">{STYLE}</style></head><body>\
         <header class=\"top\"><div class=\"wrap\"><div class=\"brand\">workbench<span>portal</span></div><nav>{nav}</nav>\
         <div class=\"storetag\">Secrets: <b>{store}</b>{locked}</div></div></header>\
         <main class=\"wrap\">{notice}{body}</main>\
         <footer class=\"wrap\">Served by workbench on 127.0.0.1 for this computer only, until you stop <code>workbench portal</code>. \
         Secret values are never shown here.</footer>\
         <script nonce=\"{nonce}\">{SCRIPT}</script></body></html>",
        store = escape(store_label(store)),
        body = page.body,
    )
}

fn hidden(csrf: &str, integration: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"integration\" value=\"{}\">",
        escape(csrf),
        escape(integration)
    )
}

fn auth_label(kind: plugins::api::AuthKind) -> &'static str {
    match kind {
        plugins::api::AuthKind::None => "public",
        plugins::api::AuthKind::ApiKey => "API key",
        plugins::api::AuthKind::OAuth2 => "OAuth",
        plugins::api::AuthKind::Cookie => "login",
    }
}

fn connect_form(csrf: &str, r: &IntegrationRow, label: &str, class: &str) -> String {
    format!(
        "<form method=\"post\" action=\"connect\" target=\"_blank\">{}<button type=\"submit\" class=\"{class}\" aria-label=\"{label} {name}\">{label}</button></form>",
        hidden(csrf, r.name),
        name = escape(r.display_name),
    )
}

fn integration_row(csrf: &str, r: &IntegrationRow) -> String {
    let (state, badge) = match r.state {
        ConnState::Stored => ("stored", "<span class=\"badge b-on\">Connected</span>"),
        ConnState::Environment => ("environment", "<span class=\"badge b-env\">From environment</span>"),
        ConnState::NotConnected => ("none", "<span class=\"badge b-off\">Not connected</span>"),
        ConnState::Public => ("public", "<span class=\"badge b-pub\">Public</span>"),
    };
    let account = match r.state {
        ConnState::Stored => {
            let who = r
                .account
                .as_deref()
                .map(escape)
                .unwrap_or_else(|| "<span class=\"muted\">(no account name)</span>".into());
            let since = r
                .since
                .as_deref()
                .map(|s| format!("<small class=\"name\">since {}</small>", escape(&local_time(s))))
                .unwrap_or_default();
            format!("{who}{since}")
        }
        ConnState::Environment => {
            format!("<span class=\"muted\">WORKBENCH_{}_* variables</span>", escape(&r.name.to_ascii_uppercase()))
        }
        _ => "<span class=\"muted\">—</span>".into(),
    };
    // Several accounts (or a named one): one line each, the default marked, with its own
    // Make default / Disconnect buttons; and a form to add another account.
    let several = r.accounts.len() > 1 || r.accounts.iter().any(|a| a.name != crate::auth::DEFAULT_ACCOUNT);
    let account = if several { accounts_list(csrf, r) } else { account };
    let add = if matches!(r.state, ConnState::Stored | ConnState::Environment) {
        format!(
            "<form method=\"post\" action=\"connect\" target=\"_blank\" class=\"add-account\">{}<input name=\"account\" placeholder=\"account name, e.g. work\" pattern=\"[a-z0-9][a-z0-9-]{{0,31}}\" required aria-label=\"New {name} account name\"><button type=\"submit\" class=\"secondary\">Add account</button></form>",
            hidden(csrf, r.name),
            name = escape(r.display_name),
        )
    } else {
        String::new()
    };
    let actions = match r.state {
        ConnState::Stored if several => add.clone(),
        ConnState::Environment => add.clone(),
        ConnState::Stored => format!(
            "{}<form method=\"post\" action=\"disconnect\" data-confirm=\"Disconnect {name}? Its stored credential is erased.\">{}<button type=\"submit\" class=\"danger\" aria-label=\"Disconnect {name}\">Disconnect</button></form>",
            connect_form(csrf, r, "Reconnect", "secondary"),
            hidden(csrf, r.name),
            name = escape(r.display_name),
        ),
        ConnState::NotConnected => connect_form(csrf, r, "Connect", "primary"),
        _ => String::new(),
    };
    let actions = if r.state == ConnState::Stored && !several { format!("{actions}{add}") } else { actions };
    format!(
        "<tr data-integration=\"{n}\" data-state=\"{state}\"><td><b>{d}</b><small class=\"name\">{n} · {auth}</small></td>\
         <td>{badge}</td><td class=\"account\">{account}</td><td class=\"actions\">{actions}</td></tr>",
        n = escape(r.name),
        d = escape(r.display_name),
        auth = auth_label(r.auth),
    )
}

/// The account cell of an integration with several accounts: each with its identity, a
/// "default" badge, and (stored ones) Make default, Reconnect and Disconnect.
fn accounts_list(csrf: &str, r: &IntegrationRow) -> String {
    let items: String = r
        .accounts
        .iter()
        .map(|a| {
            let id = a.identity.as_deref().map(|i| format!(" <span class=\"muted\">{}</span>", escape(i))).unwrap_or_default();
            let badge = if a.default { " <span class=\"badge b-on\">default</span>" } else { "" };
            let hidden_account = format!("{}<input type=\"hidden\" name=\"account\" value=\"{}\">", hidden(csrf, r.name), escape(&a.name));
            let buttons = match a.source {
                crate::auth::Source::Environment => "<small class=\"muted\">from environment</small>".to_string(),
                crate::auth::Source::Store => {
                    let make_default = if a.default {
                        String::new()
                    } else {
                        format!("<form method=\"post\" action=\"default\">{hidden_account}<button type=\"submit\" class=\"secondary\">Make default</button></form>")
                    };
                    format!(
                        "{make_default}<form method=\"post\" action=\"connect\" target=\"_blank\">{hidden_account}<button type=\"submit\" class=\"secondary\">Reconnect</button></form>\
                         <form method=\"post\" action=\"disconnect\" data-confirm=\"Disconnect the {name} account {acct}? Its stored credential is erased.\">{hidden_account}<button type=\"submit\" class=\"danger\" aria-label=\"Disconnect {name} account {acct}\">Disconnect</button></form>",
                        name = escape(r.display_name),
                        acct = escape(&a.name),
                    )
                }
            };
            format!("<li data-account=\"{}\"><b>{}</b>{badge}{id} {buttons}</li>", escape(&a.name), escape(&a.name))
        })
        .collect();
    format!("<ul class=\"accounts\">{items}</ul>")
}

fn integration_table(csrf: &str, rows: &[&IntegrationRow]) -> String {
    let body: String = rows.iter().map(|r| integration_row(csrf, r)).collect();
    format!(
        "<table class=\"integrations\"><colgroup><col class=\"c-name\"><col class=\"c-state\"><col class=\"c-account\"><col class=\"c-actions\"></colgroup><thead><tr><th>Integration</th><th>State</th><th>Account</th><th></th></tr></thead><tbody>{body}</tbody></table>"
    )
}

/// The integrations page: connected accounts, those that can be connected, and public ones.
pub fn integrations(rows: &[IntegrationRow], csrf: &str) -> String {
    let connected: Vec<&IntegrationRow> =
        rows.iter().filter(|r| matches!(r.state, ConnState::Stored | ConnState::Environment)).collect();
    let open: Vec<&IntegrationRow> = rows.iter().filter(|r| r.state == ConnState::NotConnected).collect();
    let public: Vec<&IntegrationRow> = rows.iter().filter(|r| r.state == ConnState::Public).collect();
    let connected_html = if connected.is_empty() {
        "<p class=\"empty\">Nothing is connected yet. Connect an account below, or let your agent ask for one.</p>"
            .into()
    } else {
        integration_table(csrf, &connected)
    };
    let open_html = if open.is_empty() {
        "<p class=\"empty\">Every integration that takes an account is connected.</p>".into()
    } else {
        integration_table(csrf, &open)
    };
    let chips: String = public
        .iter()
        .map(|r| {
            format!("<span class=\"chip\" data-integration=\"{}\">{}</span>", escape(r.name), escape(r.display_name))
        })
        .collect();
    format!(
        "<h1>Integrations</h1><p class=\"sub\">The services workbench can use for you. Connect opens the same local page as your agent's connect link, \
         in a new tab: the credential is checked with the service and kept in the secret store, never in the chat.</p>\
         <div class=\"stats\"><div class=\"stat\"><b>{nc}</b><span>connected</span></div><div class=\"stat\"><b>{no}</b><span>not connected</span></div>\
         <div class=\"stat\"><b>{np}</b><span>public, no account needed</span></div></div>\
         <section class=\"card\" id=\"connected\"><h2>Connected <span class=\"count\">{nc}</span></h2>{connected_html}</section>\
         <section class=\"card\" id=\"available\"><h2>Not connected <span class=\"count\">{no}</span></h2>{open_html}</section>\
         <section class=\"card\" id=\"public\"><h2>Public <span class=\"count\">{np}</span></h2><div class=\"chips\">{chips}</div></section>",
        nc = connected.len(),
        no = open.len(),
        np = public.len(),
    )
}

/// An RFC 3339 time in this computer's time zone, to the second.
fn local_time(ts: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(ts)
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|_| ts.to_string())
}

fn shorten(s: &str, chars: usize) -> String {
    if s.chars().count() <= chars {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(chars).collect();
        out.push('…');
        out
    }
}

fn options(name: &str, current: Option<&str>, choices: &[(String, String)], any: &str) -> String {
    let mut out = format!("<select name=\"{name}\"><option value=\"\">{any}</option>");
    for (value, label) in choices {
        let selected = if current == Some(value.as_str()) { " selected" } else { "" };
        out.push_str(&format!("<option value=\"{}\"{selected}>{}</option>", escape(value), escape(label)));
    }
    out.push_str("</select>");
    out
}

fn audit_row(r: &Value) -> String {
    let s = |k: &str| r[k].as_str().unwrap_or_default();
    let ok = s("status") == "ok";
    let status = if ok { "<span class=\"badge b-on\">ok</span>" } else { "<span class=\"badge b-err\">failed</span>" };
    let change = if r["mutating"] == true { "<span class=\"badge b-chg\">change</span>" } else { "" };
    let args = match &r["args"] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let args_html = if args.chars().count() <= 120 {
        format!("<code>{}</code>", escape(&args))
    } else {
        let pretty = serde_json::from_str::<Value>(&args)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| args.clone());
        format!(
            "<details><summary><code>{}</code></summary><pre>{}</pre></details>",
            escape(&shorten(&args, 100)),
            escape(&shorten(&pretty, 4000))
        )
    };
    let error = match (r["error_code"].as_str(), r["error"].as_str()) {
        (None, None) => String::new(),
        (code, message) => format!(
            "<div class=\"errtext\">{}{}</div>",
            code.map(|c| format!("<b>{}</b> ", escape(c))).unwrap_or_default(),
            escape(&shorten(message.unwrap_or_default(), 600))
        ),
    };
    format!(
        "<tr data-id=\"{id}\" data-status=\"{st}\"><td class=\"time\" title=\"{utc}\">{time}</td>\
         <td><code>{tool}</code><small class=\"name\">{integration}</small></td><td>{status}{change}</td>\
         <td class=\"num\">{ms} ms</td><td class=\"detail\">{args_html}{error}</td></tr>",
        id = r["id"].as_i64().unwrap_or_default(),
        st = if ok { "ok" } else { "error" },
        utc = escape(s("time")),
        time = escape(&local_time(s("time"))),
        tool = escape(s("tool")),
        integration = escape(s("integration")),
        ms = r["duration_ms"].as_i64().unwrap_or_default(),
    )
}

/// The audit page: filters, one page of entries, and paging.
pub fn audit(f: &AuditFilters, rows: &[Value], next: Option<i64>, integrations: &[String], tools: &[String]) -> String {
    let pairs = |v: &[String]| v.iter().map(|x| (x.clone(), x.clone())).collect::<Vec<_>>();
    let integration = options("integration", f.integration.as_deref(), &pairs(integrations), "All");
    let status = options(
        "status",
        f.status.as_deref(),
        &[("ok".into(), "Succeeded".into()), ("error".into(), "Failed".into())],
        "Any",
    );
    let periods: Vec<(String, String)> = PERIODS.iter().map(|(k, l, _)| (k.to_string(), l.to_string())).collect();
    let period = options("period", f.period.as_deref(), &periods, "Any time");
    let datalist: String = tools.iter().map(|t| format!("<option value=\"{}\">", escape(t))).collect();
    let value = |v: &Option<String>| v.as_deref().map(escape).unwrap_or_default();
    let checked = if f.changes_only { " checked" } else { "" };
    let filters = format!(
        "<form class=\"filters\" method=\"get\" action=\"audit\">\
         <label>Integration{integration}</label>\
         <label>Tool<input type=\"text\" name=\"tool\" list=\"tools\" value=\"{tool}\" placeholder=\"any tool\" autocomplete=\"off\"></label>\
         <datalist id=\"tools\">{datalist}</datalist>\
         <label>Result{status}</label><label>When{period}</label>\
         <label class=\"grow\">Text<input type=\"search\" name=\"text\" value=\"{text}\" placeholder=\"in arguments, tool name or error\"></label>\
         <label class=\"check\"><input type=\"checkbox\" name=\"changes\" value=\"1\"{checked}> Changes only</label>\
         <div class=\"buttons\"><button type=\"submit\" class=\"primary\">Filter</button><a class=\"button secondary\" href=\"audit\">Clear</a></div></form>",
        tool = value(&f.tool),
        text = value(&f.text),
    );
    let table = if rows.is_empty() {
        let why = if f.is_filtered() || f.before.is_some() {
            "No entries match these filters."
        } else {
            "Nothing has run yet. Every tool your agent runs through workbench is listed here."
        };
        format!("<p class=\"empty\">{why}</p>")
    } else {
        let body: String = rows.iter().map(audit_row).collect();
        format!(
            "<table class=\"audit\"><thead><tr><th>Time</th><th>Tool</th><th>Result</th><th class=\"num\">Took</th><th>Arguments</th></tr></thead><tbody>{body}</tbody></table>"
        )
    };
    let q = f.query();
    let sep = if q.is_empty() { "" } else { "&amp;" };
    let newest = if f.before.is_some() {
        format!("<a class=\"button secondary\" href=\"audit?{}\">← Newest</a>", escape(&q))
    } else {
        String::new()
    };
    let older = next
        .map(|id| {
            format!(
                "<a class=\"button secondary\" href=\"audit?{}{sep}before={id}\" rel=\"next\">Older →</a>",
                escape(&q)
            )
        })
        .unwrap_or_default();
    let shown = match rows.len() {
        1 => "1 entry".to_string(),
        n => format!("{n} entries"),
    };
    format!(
        "<h1>Audit log</h1><p class=\"sub\">Every tool workbench ran, newest first, with its arguments as stored (secrets redacted). \
         Times are this computer's local time.</p>\
         <section class=\"card\">{filters}{table}<div class=\"pager\"><span class=\"muted\" id=\"shown\">{shown}{filtered}</span>\
         <span class=\"links\">{newest}{older}</span></div></section>",
        filtered = if f.is_filtered() { " matching the filters" } else { "" },
    )
}

/// The secrets page: the store in use and the vault's secret names (never values).
pub fn secrets(store: &StoreInfo, secrets: &[VaultMeta], csrf: &str) -> String {
    let (what, about) = match store.name {
        "keychain" => (
            "OS keychain",
            "Credentials and vault values are kept in your operating system's keychain (macOS Keychain, Windows Credential Manager or the Linux Secret Service).",
        ),
        "file" => (
            "Encrypted file",
            "Credentials and vault values are kept in one file sealed with XChaCha20-Poly1305 under a key derived (Argon2id) from your passphrase or key file.",
        ),
        "memory" => ("Process memory", "Nothing is kept after this workbench process exits."),
        other => (other, ""),
    };
    let state = match (&store.answer, store.locked) {
        (_, true) => format!(
            "<span class=\"badge b-err\">Locked</span><form method=\"post\" action=\"unlock\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <button type=\"submit\" class=\"primary\">Unlock…</button></form>",
            escape(csrf)
        ),
        (Some(Ok(())), false) => {
            "<span class=\"badge b-on\">Answers</span> <span class=\"muted\">asked just now</span>".into()
        }
        (Some(Err(reason)), false) => format!(
            "<span class=\"badge b-err\">Does not answer</span> <span class=\"muted\">{}: connections cannot be stored or used until it does; <code>workbench doctor</code> says how to fix it (<code>workbench setup</code> where no keychain can run)</span>",
            escape(reason)
        ),
        (None, false) => "<span class=\"badge b-on\">In memory</span>".into(),
    };
    let location = store
        .location
        .as_deref()
        .map(|l| format!("<dt>Where</dt><dd><code>{}</code></dd>", escape(l)))
        .unwrap_or_default();
    let rows: String = secrets
        .iter()
        .map(|m| {
            let hosts = if m.allowed_hosts.is_empty() {
                "<span class=\"muted\">none: cannot be used</span>".to_string()
            } else {
                m.allowed_hosts.iter().map(|h| format!("<code>{}</code>", escape(h))).collect::<Vec<_>>().join(" ")
            };
            format!(
                "<tr data-secret=\"{n}\"><td><code>{n}</code></td><td>{d}</td><td>{hosts}</td><td class=\"time\">{c}</td><td class=\"time\">{u}</td></tr>",
                n = escape(&m.name),
                d = m.description.as_deref().map(escape).unwrap_or_else(|| "<span class=\"muted\">—</span>".into()),
                c = escape(&local_time(&m.created_at)),
                u = m.last_used_at.as_deref().map(|t| escape(&local_time(t))).unwrap_or_else(|| "<span class=\"muted\">never</span>".into()),
            )
        })
        .collect();
    let vault = if secrets.is_empty() {
        "<p class=\"empty\">No vault secrets yet. Ask your agent to store one with <code>vault_set_secret</code>: you type the value on a local page, never in the chat.</p>".to_string()
    } else {
        format!(
            "<table><thead><tr><th>Name</th><th>Description</th><th>Allowed hosts</th><th>Created</th><th>Last used</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    };
    format!(
        "<h1>Secrets</h1><p class=\"sub\">Where workbench keeps credentials, and the named secrets your agent may use as <code>{{{{vault:NAME}}}}</code>. \
         Values never leave the store: not to this page, not to the agent.</p>\
         <section class=\"card\" id=\"store\"><h2>Secret store</h2><dl class=\"kv\"><dt>In use</dt><dd><b>{what}</b> <span class=\"muted\">({name})</span></dd>{location}<dt>Opened by</dt><dd class=\"muted\">{described}</dd>\
         <dt>State</dt><dd>{state}</dd><dt>About</dt><dd class=\"muted\">{about}</dd></dl></section>\
         <section class=\"card\" id=\"vault\"><h2>Vault secrets <span class=\"count\">{count}</span></h2>{vault}</section>",
        what = escape(what),
        name = escape(store.name),
        described = escape(&store.described),
        about = escape(about),
        count = secrets.len(),
    )
}

/// The outbound-data guard's section (on the secrets page): the mode, the user's trusted list
/// and servers from config.json, and the latest decisions.
pub fn flow_guard(flow: &crate::config::flow::FlowSettings, decisions: &[(String, String, String)]) -> String {
    let mode = match &flow.mode {
        Ok(m) => format!("<b>{}</b>", escape(m.as_str())),
        Err(bad) => format!(
            "<b>strict</b> <span class=\"muted\">({}: held as strict until fixed)</span>",
            escape(&bad.to_string())
        ),
    };
    let list = |items: Vec<String>| {
        if items.is_empty() {
            "<span class=\"muted\">none</span>".to_string()
        } else {
            items.iter().map(|t| format!("<code>{}</code>", escape(t))).collect::<Vec<_>>().join(" ")
        }
    };
    let rows: String = decisions
        .iter()
        .map(|(ts, tool, d)| {
            format!(
                "<tr><td class=\"time\">{}</td><td><code>{}</code></td><td>{}</td></tr>",
                escape(&local_time(ts)),
                escape(tool),
                escape(d)
            )
        })
        .collect();
    let recent = if decisions.is_empty() {
        "<p class=\"empty\">No write held yet.</p>".to_string()
    } else {
        format!(
            "<table><thead><tr><th>When</th><th>Tool</th><th>Decision</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    };
    format!(
        "<section class=\"card\" id=\"flow\"><h2>Outbound data guard</h2><dl class=\"kv\"><dt>Mode</dt><dd>{mode} \
         <span class=\"muted\">(WORKBENCH_FLOW or config.json flow.mode: guard, strict, off)</span></dd>\
         <dt>Trusted</dt><dd>{trusted}</dd><dt>Own MCP servers</dt><dd>{own}</dd><dt>Public MCP servers</dt><dd>{public}</dd></dl>{recent}</section>",
        trusted = list(flow.trusted.iter().map(|t| t.to_string()).collect()),
        own = list(flow.own_servers.clone()),
        public = list(flow.public_servers.clone()),
    )
}

/// The custom apps page.
pub fn apps(apps: &[CustomAppRow]) -> String {
    let body = if apps.is_empty() {
        "<p class=\"empty\">No custom apps yet.</p>".to_string()
    } else {
        let rows: String = apps
            .iter()
            .map(|a| {
                format!(
                    "<tr data-app=\"{n}\"><td><b>{n}</b></td><td>{d}</td><td class=\"num\">{t}</td><td>{s}</td></tr>",
                    n = escape(&a.name),
                    d = escape(&a.description),
                    t = a.tools,
                    s = escape(&a.status),
                )
            })
            .collect();
        format!(
            "<table><thead><tr><th>App</th><th>Description</th><th class=\"num\">Tools</th><th>Status</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    };
    format!(
        "<h1>Custom apps</h1><p class=\"sub\">Your own integrations, defined locally; their tools are searched and run like the built-in ones.</p>\
         <section class=\"card\" id=\"apps\"><h2>Custom apps <span class=\"count\">{}</span></h2>{body}</section>",
        apps.len()
    )
}

/// The review section of the apps page: each upstream server's new and changed tools (not offered
/// until accepted), with what changed and an Accept button.
pub fn review(pending: &std::collections::BTreeMap<String, Vec<crate::upstream::pins::Change>>, csrf: &str) -> String {
    if pending.is_empty() {
        return String::new();
    }
    let servers: String = pending
        .iter()
        .map(|(server, changes)| {
            let rows: String = changes
                .iter()
                .map(|c| {
                    let text = |v: &serde_json::Value| {
                        v.get("description").and_then(serde_json::Value::as_str).unwrap_or_default().to_string()
                    };
                    let was = c.was.as_ref().map(text).filter(|w| *w != text(&c.now));
                    format!(
                        "<tr data-tool=\"{t}\"><td><b>{t}</b></td><td>{what}</td><td>{now}{was}</td></tr>",
                        t = escape(&c.tool),
                        what = escape(&c.describe()),
                        now = escape(&shorten(&text(&c.now), 400)),
                        was = was
                            .map(|w| format!("<div class=\"sub\">was: {}</div>", escape(&shorten(&w, 400))))
                            .unwrap_or_default(),
                    )
                })
                .collect();
            format!(
                "<h3>{n}</h3><table data-review=\"{n}\"><thead><tr><th>Tool</th><th>Change</th><th>Description</th></tr></thead>                 <tbody>{rows}</tbody></table><form method=\"post\" action=\"review\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">                 <input type=\"hidden\" name=\"server\" value=\"{n}\"><button type=\"submit\">Accept {count} change(s) of {n}</button></form>",
                n = escape(server),
                csrf = escape(csrf),
                count = changes.len(),
            )
        })
        .collect();
    format!(
        "<section class=\"card\" id=\"review\"><h2>Changes waiting for your review <span class=\"count\">{}</span></h2>         <p class=\"sub\">These MCP servers changed or added tools since you accepted them. Until you accept, the agent can          neither find nor call them (also: <code>workbench servers review</code>).</p>{servers}</section>",
        pending.len()
    )
}

/// The MCP servers section of the apps page: each configured upstream server with its transport,
/// state, listed tool count and last error (`crate::upstream::summaries`).
pub fn servers(servers: &[crate::upstream::Summary]) -> String {
    let body = if servers.is_empty() {
        "<p class=\"empty\">No MCP servers behind workbench. Add one with <code>workbench servers add NAME -- COMMAND ARGS...</code> \
         or bring over your clients' ones with <code>workbench servers import</code>.</p>"
            .to_string()
    } else {
        let rows: String = servers
            .iter()
            .map(|s| {
                format!(
                    "<tr data-server=\"{n}\"><td><b>{n}</b><div class=\"sub\">{target}</div></td><td>{transport}</td><td>{state}</td>\
                     <td class=\"num\">{tools}</td><td>{error}</td></tr>",
                    n = escape(&s.name),
                    target = escape(&shorten(&s.target, 120)),
                    transport = escape(s.transport),
                    state = escape(s.state),
                    tools = s.tools.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                    error = escape(s.last_error.as_deref().unwrap_or("")),
                )
            })
            .collect();
        format!(
            "<table><thead><tr><th>Server</th><th>Transport</th><th>State</th><th class=\"num\">Tools</th><th>Last error</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    };
    format!(
        "<section class=\"card\" id=\"servers\"><h2>MCP servers <span class=\"count\">{}</span></h2>\
         <p class=\"sub\">Your other MCP servers, behind the same nine tools (config.json's <code>mcp_servers</code>); \
         a server starts on its first use.</p>{body}</section>",
        servers.len()
    )
}
