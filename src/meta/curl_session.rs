//! curl_session: mint a short-lived proxy token for raw API calls (all-or-nothing validation).
//!
//! The token is an HS256 JWT signed with the per-install key in the secret store (see
//! `crate::proxy::token`); the proxy on the loopback listener checks it on every request.
//! An entry `"github:work"` binds the token to that account (one account per integration per
//! token); a bare `"github"` to the default account as it is when the token is minted.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use super::{Annotations, Failure, Hint, MetaTool, schema_of};
use crate::app::App;
use crate::engine::Hooks;
use crate::engine::policy::Policy;
use crate::proxy::{self, token};
use crate::storage::AuditEntry;

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Integrations the token may call, e.g. ["github"]; "github:work" binds it to that account.
    #[schemars(length(min = 1))]
    pub integrations: Vec<String>,
    /// Token lifetime in seconds.
    #[serde(rename = "expiresInSeconds")]
    #[serde_inline_default(proxy::DEFAULT_TTL)]
    #[schemars(range(min = proxy::MIN_TTL, max = proxy::MAX_TTL))]
    pub expires_in_seconds: u64,
}

/// A minted proxy session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub token: String,
    pub expires_in: u64,
    pub proxy_base_url: String,
    pub usage: String,
    /// integration -> `{forwardsTo, allows}`.
    pub upstreams: Map<String, Value>,
    /// integration -> the account its requests use.
    pub accounts: BTreeMap<String, String>,
}

pub async fn run(app: &Arc<App>, args: Args, hooks: &crate::engine::Hooks) -> Result<Session, Failure> {
    let names: Vec<String> = args.integrations.iter().map(|s| s.trim().to_string()).collect();
    let ttl = args.expires_in_seconds;
    let registry = app.registry();
    let mut failures = Vec::new();
    if !(proxy::MIN_TTL..=proxy::MAX_TTL).contains(&ttl) {
        failures.push(format!("expiresInSeconds must be between {} and {}", proxy::MIN_TTL, proxy::MAX_TTL));
    }
    let mut upstreams = Map::new();
    let mut seen = Vec::new();
    // integration -> the account its requests use (named as `github:work`, else the default).
    let mut accounts = BTreeMap::new();
    for entry in &names {
        let (name, named_account) = match entry.split_once(':') {
            Some((n, a)) => (n.trim().to_string(), Some(a.trim().to_string())),
            None => (entry.clone(), None),
        };
        let name = &name;
        if let Some(problem) = named_account.as_deref().and_then(crate::auth::account_problem) {
            failures.push(format!("{name}: {problem}"));
            continue;
        }
        if seen.contains(name) {
            if named_account.is_some() && accounts.get(name) != named_account.as_ref() {
                failures.push(format!(
                    "{name}: one token uses one account per integration; mint a separate curl_session for each account"
                ));
            }
            continue;
        }
        seen.push(name.clone());
        let resolved = match registry.integration(name) {
            Some(i) if i.curl_proxy.enabled() && app.is_connected(i.name) => {
                match app.resolve_account(i, named_account.as_deref()) {
                    Ok(a) => a,
                    Err(f) => {
                        failures.push(f.message);
                        continue;
                    }
                }
            }
            _ => None,
        };
        if let Some(a) = &resolved {
            accounts.insert(name.clone(), a.clone());
        }
        let account = resolved.as_deref();
        match registry.integration(name) {
            None => failures.push(format!("Unknown integration: {name}")),
            Some(i) if !i.curl_proxy.enabled() => failures.push(format!(
                "{name}: curl proxy is not enabled for this integration (use http_send_request for public URLs)"
            )),
            Some(i) if !app.is_connected(i.name) => {
                failures.push(format!("{name}: not connected (call connect first)"))
            }
            Some(i) if crate::engine::policy::for_curl_session_as(app, i.name, account) == Ok(Policy::ReadOnly) => {
                failures.push(format!(
                    "{name}: read-only by the user's policy, and a curl session could write; use its tools instead"
                ))
            }
            Some(i) if let Err(f) = crate::engine::policy::for_curl_session_as(app, i.name, account) => {
                failures.push(format!("{name}: {}", f.message))
            }
            Some(i) => {
                let connection = account.and_then(|a| app.connection_of(i, a).ok().flatten());
                let key = i.hosts.first().map(|h| h.key).unwrap_or("base_url");
                let base = crate::send::host_url(app, i, key, &[], connection.as_ref())
                    .unwrap_or_else(|_| i.hosts.first().map(|h| h.default_url.to_string()).unwrap_or_default());
                upstreams.insert(name.clone(), json!({ "forwardsTo": base, "allows": i.curl_proxy.describe() }));
            }
        }
    }
    if names.is_empty() {
        failures.push("integrations must name at least one integration".into());
    }
    if !failures.is_empty() {
        return Err(Failure::plain(failures.join("; ")));
    }
    // Arbitrary calls with the user's credential: confirmed by the user unless they allowed it.
    let confirm: Vec<&String> = seen
        .iter()
        .filter(|n| {
            crate::engine::policy::for_curl_session_as(app, n, accounts.get(*n).map(String::as_str))
                == Ok(Policy::Confirm)
        })
        .collect();
    if !confirm.is_empty() {
        let names = confirm.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
        let request = crate::engine::policy::ApprovalRequest {
            action: "curl_session".into(),
            integration: names.clone(),
            summary: format!(
                "Allow the agent to make ANY API call (including deletions) to {names} with your credentials for {} minutes?",
                ttl.div_ceil(60)
            ),
            args_sha256: crate::approval::args_digest(&if named_accounts(&accounts) {
                json!({ "integrations": seen, "ttl": ttl, "accounts": accounts })
            } else {
                json!({ "integrations": seen, "ttl": ttl })
            }),
            shown: json!({ "integrations": seen, "accounts": accounts, "expiresInSeconds": ttl, "forwardsTo": upstreams }),
        };
        if let Err(f) = crate::engine::policy::check(app, Policy::Confirm, request, hooks.approve.as_ref()).await {
            // The message for the agent, plus the code and (no elicitation) the approval page.
            let message = f.message.clone();
            return Err(Failure::plain(message).hint(Hint::Refusal(f)));
        }
    }
    let key = match proxy::signing_key(app).await {
        Ok(k) => k,
        Err(e) => {
            return Err(Failure::plain(format!(
                "the curl proxy key could not be read from the {} secret store: {e}. {}",
                app.secrets.name(),
                crate::secrets::STORE_HELP
            )));
        }
    };
    let listener = crate::connect::ensure_listener(app).await.map_err(|e| Failure::plain(e.to_string()))?;
    let user = app.storage.user().await.ok().flatten().map(|(id, _)| id).unwrap_or_default();
    let now = crate::auth::oauth::now_unix();
    let claims = token::Claims {
        iss: "workbench".into(),
        aud: token::AUDIENCE.into(),
        sub: user,
        integrations: seen.clone(),
        accounts: accounts.clone(),
        iat: now,
        exp: now + ttl as i64,
        jti: crate::ids::random_hex(12),
    };
    let jwt = token::sign(key.expose(), &claims);
    let base = format!("{}/c", listener.base());
    let row = AuditEntry {
        tool: "curl_session".into(),
        integration: seen.join(","),
        args: json!({ "integrations": seen, "accounts": accounts, "expiresInSeconds": ttl, "jti": claims.jti })
            .to_string(),
        mutating: true,
        ok: true,
        error_code: None,
        error: None,
        duration_ms: 0,
        account: named_accounts(&accounts)
            .then(|| accounts.iter().map(|(i, a)| format!("{i}:{a}")).collect::<Vec<_>>().join(",")),
    };
    if let Err(e) = app.storage.record_audit(row).await {
        tracing::warn!(error = %e, "could not write the curl_session audit row");
    }
    Ok(Session {
        token: jwt,
        expires_in: ttl,
        usage: format!("Send requests to {base}/<integration>/<path> with Authorization: Bearer <token>"),
        proxy_base_url: base,
        upstreams,
        accounts,
    })
}

/// Whether any integration of the session uses an account other than `default`.
fn named_accounts(accounts: &BTreeMap<String, String>) -> bool {
    accounts.values().any(|a| a != crate::auth::DEFAULT_ACCOUNT)
}

const DESCRIPTION: &str = "HIGH RISK — do not call without explicit user approval. Mints a short-lived proxy token (15 min by default; set expiresInSeconds for 60s–1h, and ask for no longer than the task needs) granting ARBITRARY API calls (GET/POST/PUT/PATCH/DELETE), including destructive writes, against the listed integration(s) — the proxy injects the user's real credential transparently at /c/<integration>/<path>, so anything reachable via that credential is reachable through this token. Before invoking, tell the user exactly which integration(s) and what action you intend to perform, and wait for their explicit go-ahead; do not mint speculatively or as a default first step. Only integrations that have curl proxy enabled are accepted.";

/// The meta-tool.
pub struct CurlSession;

impl MetaTool for CurlSession {
    const NAME: &'static str = "curl_session";
    const TITLE: &'static str = "Mint a curl proxy session";
    const DESCRIPTION: &'static str = DESCRIPTION;
    const ANNOTATIONS: Annotations = Annotations::ANYTHING;
    type Args = Args;
    type Answer = Session;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, hooks: &Hooks) -> Result<Session, Failure> {
        run(app, args, hooks).await
    }
}
