//! OAuth 2 authorization code with PKCE (S256) for loopback clients (RFC 8252), token exchange and
//! refresh. Authorize and token URLs are overridable like hosts (`WORKBENCH_<I>_AUTHORIZE_URL`,
//! `WORKBENCH_<I>_TOKEN_URL`), so tests run the whole flow against a fake authorization server.

use std::collections::HashMap;
use std::sync::Arc;

use plugins::api::{Integration, OAuth, ToolError, encode_segment as encode};
use plugins::codec::base64url_encode;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::auth::{self, AccountDetails, Connection, Source};
use crate::config::OAuthClient;
use crate::secrets::Secret;

/// A PKCE verifier (43 characters from 256 random bits) and its S256 challenge.
pub fn pkce_pair() -> (String, String) {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).expect("the operating system's random source is available");
    let verifier = base64url_encode(&raw);
    (verifier.clone(), challenge(&verifier))
}

pub fn challenge(verifier: &str) -> String {
    base64url_encode(&Sha256::digest(verifier.as_bytes()))
}

/// The secret-store key of an OAuth client the user pasted on the connect page's guide.
pub fn client_store_key(client: &str) -> String {
    format!("oauth_client:{client}")
}

/// The OAuth client for `oauth`: the environment or `config.json` (`WORKBENCH_<CLIENT>_CLIENT_ID`,
/// `oauth_clients`), else the one the user pasted on the connect page (kept in the secret store,
/// never in a file or SQLite).
pub fn client_for(app: &App, oauth: &OAuth) -> Option<OAuthClient> {
    if let Some(c) = app.settings.oauth_clients.get(oauth.client) {
        return Some(c.clone());
    }
    let blob = app.secrets.get(&client_store_key(oauth.client)).ok().flatten()?;
    let client: OAuthClient = serde_json::from_str(blob.expose()).ok()?;
    if let Some(secret) = &client.client_secret {
        app.exposed.remember(secret);
    }
    Some(client)
}

/// Stores the OAuth client the user pasted (id and secret) in the secret store.
pub fn store_client(
    app: &App,
    oauth: &OAuth,
    client_id: &str,
    client_secret: Option<&str>,
) -> Result<(), crate::secrets::StoreError> {
    let blob = serde_json::json!({ "client_id": client_id, "client_secret": client_secret }).to_string();
    app.secrets.set(&client_store_key(oauth.client), &Secret::new(blob))
}

pub fn authorize_url_base(app: &App, integration: &Integration, oauth: &OAuth) -> String {
    app.settings.host_url(integration.name, "authorize_url", oauth.authorize_url)
}

/// The token endpoint, and whether the user configured it (then it may be a private origin).
fn token_url(app: &App, integration: &Integration, oauth: &OAuth) -> (String, bool) {
    let overridden = !app.settings.host_url(integration.name, "token_url", "").is_empty();
    (app.settings.host_url(integration.name, "token_url", oauth.token_url), overridden)
}

/// The provider's consent URL for one authorization.
pub fn authorize_url(
    app: &App,
    integration: &Integration,
    oauth: &OAuth,
    client: &OAuthClient,
    redirect_uri: &str,
    state: &str,
    challenge: &str,
) -> String {
    // Slack separates user scopes with commas; everyone else with spaces.
    let sep = if oauth.scope_param == "user_scope" { "," } else { " " };
    let mut url = format!(
        "{}?response_type=code&client_id={}&redirect_uri={}&{}={}&state={}&code_challenge={}&code_challenge_method=S256",
        authorize_url_base(app, integration, oauth),
        encode(&client.client_id),
        encode(redirect_uri),
        oauth.scope_param,
        encode(&oauth.scopes.join(sep)),
        encode(state),
        encode(challenge),
    );
    for (k, v) in oauth.extra_params {
        url.push_str(&format!("&{}={}", encode(k), encode(v)));
    }
    url
}

/// Tokens from a token endpoint answer (standard, or Slack's `authed_user` envelope).
#[derive(Debug)]
pub struct Tokens {
    pub access: Secret<String>,
    pub refresh: Option<Secret<String>>,
    pub expires_in: Option<i64>,
    pub scope: Option<String>,
}

fn parse_tokens(body: &Value) -> Result<Tokens, ToolError> {
    if body.get("ok") == Some(&Value::Bool(false)) || body.get("error").is_some() {
        let message = body
            .get("error_description")
            .or_else(|| body.get("error"))
            .map(|e| e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string()))
            .unwrap_or_else(|| "the token endpoint refused".into());
        return Err(ToolError::Upstream { status: 400, message, retry_after: None });
    }
    let t = body.get("authed_user").filter(|u| u.get("access_token").is_some()).unwrap_or(body);
    let access = t.get("access_token").and_then(Value::as_str).ok_or_else(|| ToolError::Upstream {
        status: 502,
        message: "the token endpoint sent no access_token".into(),
        retry_after: None,
    })?;
    Ok(Tokens {
        access: Secret::new(access.to_string()),
        refresh: t.get("refresh_token").and_then(Value::as_str).map(|r| Secret::new(r.to_string())),
        expires_in: t.get("expires_in").and_then(Value::as_i64),
        scope: t.get("scope").and_then(Value::as_str).map(str::to_string),
    })
}

/// The most of a token endpoint's answer read.
const MAX_TOKEN_ANSWER: usize = 256 * 1024;

async fn post_token(
    app: &App,
    (url, user_origin): (String, bool),
    form: Vec<(&str, String)>,
) -> Result<Tokens, ToolError> {
    let url = reqwest::Url::parse(&url).map_err(|e| ToolError::Internal(format!("token endpoint {url}: {e}")))?;
    // Through the address guard like every request: the listener and unlisted private addresses
    // are refused.
    let response = app
        .request(reqwest::Method::POST, url, user_origin)?
        .header("accept", "application/json")
        .form(&form)
        .timeout(std::time::Duration::from_secs(20))
        .send()
        .await
        .map_err(|e| ToolError::Network(format!("token endpoint: {e}")))?;
    let status = response.status().as_u16();
    // A token answer is a few hundred bytes; a longer one is not read past 256 KiB.
    let body: Value = match crate::net::read_limited(response, MAX_TOKEN_ANSWER).await {
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        Ok(None) => {
            return Err(ToolError::Upstream {
                status,
                message: format!("the token endpoint sent more than {} KiB", MAX_TOKEN_ANSWER / 1024),
                retry_after: None,
            });
        }
        Err(_) => Value::Null,
    };
    if !(200..300).contains(&status) {
        let message = body
            .get("error_description")
            .or_else(|| body.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("the token endpoint refused")
            .to_string();
        return Err(ToolError::Upstream { status, message, retry_after: None });
    }
    parse_tokens(&body)
}

/// Exchanges an authorization code (with its PKCE verifier) for tokens.
pub async fn exchange_code(
    app: &App,
    integration: &Integration,
    oauth: &OAuth,
    client: &OAuthClient,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Tokens, ToolError> {
    let mut form = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code.to_string()),
        ("redirect_uri", redirect_uri.to_string()),
        ("client_id", client.client_id.clone()),
        ("code_verifier", verifier.to_string()),
    ];
    if let Some(secret) = &client.client_secret {
        form.push(("client_secret", secret.clone()));
    }
    post_token(app, token_url(app, integration, oauth), form).await
}

pub fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A connection built from fresh tokens, keeping the non-token fields of `previous`.
pub fn connection_from_tokens(
    integration: &'static Integration,
    tokens: &Tokens,
    previous: Option<&Connection>,
) -> Connection {
    let mut fields: HashMap<String, Secret<String>> = previous.map(|p| p.fields.clone()).unwrap_or_default();
    fields.insert("token".into(), tokens.access.clone());
    if let Some(r) = &tokens.refresh {
        fields.insert("refresh_token".into(), r.clone());
    }
    let mut c = auth::from_fields(integration, fields, Source::Store);
    c.expires_at = tokens.expires_in.map(|s| now_unix() + s);
    if let Some(p) = previous {
        c.account = p.account.clone();
    }
    c
}

/// One lock per account, so concurrent callers wait for the same token refresh (the app's
/// `RefreshLocks` state).
#[derive(Default)]
pub struct RefreshLocks(std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>);

impl RefreshLocks {
    fn of(&self, account_key: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).entry(account_key.to_string()).or_default().clone()
    }
}

/// Refreshes an OAuth connection. Concurrent callers wait on one lock per account; whoever
/// comes second finds the token already fresh and uses it instead of refreshing again.
pub async fn refresh(
    app: &Arc<App>,
    integration: &'static Integration,
    stale: &Connection,
) -> Result<Connection, ToolError> {
    let lock = app.state.refresh_locks.of(&stale.account_key());
    let _guard = lock.lock().await;
    if let Ok(Some(current)) = app.connection_of(integration, &stale.account)
        && current.fields.get("token") != stale.fields.get("token")
    {
        return Ok(current);
    }
    let (Some(oauth), Some(refresh_token)) = (integration.auth.oauth.as_ref(), stale.fields.get("refresh_token"))
    else {
        return Err(ToolError::Upstream {
            status: 401,
            message: "the access token expired and there is no refresh token".into(),
            retry_after: None,
        });
    };
    let Some(client) = client_for(app, oauth) else {
        return Err(ToolError::Upstream {
            status: 401,
            message: format!(
                "the access token expired and no '{}' OAuth client is configured to refresh it",
                oauth.client
            ),
            retry_after: None,
        });
    };
    let mut form = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", refresh_token.expose().clone()),
        ("client_id", client.client_id.clone()),
    ];
    if let Some(secret) = &client.client_secret {
        form.push(("client_secret", secret.clone()));
    }
    // A refused refresh (revoked, expired refresh token) means reconnecting: say so as a 401.
    let tokens = post_token(app, token_url(app, integration, oauth), form).await.map_err(|e| match e {
        ToolError::Upstream { status: 400..=499, message, .. } => ToolError::Upstream {
            status: 401,
            message: format!("the access token expired and the provider refused to refresh it: {message}"),
            retry_after: None,
        },
        other => other,
    })?;
    let fresh = connection_from_tokens(integration, &tokens, Some(stale));
    let meta = app.storage.account_meta(integration.name, &stale.account).ok().flatten();
    auth::save(
        app,
        &fresh,
        AccountDetails {
            account_label: meta.as_ref().and_then(|m| m.account_label.clone()),
            scopes: tokens.scope.clone().or_else(|| meta.and_then(|m| m.scopes)),
            expires_at: fresh.expires_at,
        },
    )
    .map_err(|e| ToolError::Internal(format!("the refreshed token could not be stored: {e}")))?;
    tracing::info!(integration = integration.name, account = stale.account, "refreshed the OAuth access token");
    Ok(fresh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_matches_rfc_7636_appendix_b() {
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let (v, c) = pkce_pair();
        assert_eq!(v.len(), 43);
        assert_eq!(challenge(&v), c);
    }

    #[test]
    fn token_answers_of_both_shapes() {
        let std = parse_tokens(
            &serde_json::json!({"access_token": "a", "refresh_token": "r", "expires_in": 3600, "scope": "x y"}),
        )
        .unwrap();
        assert_eq!(std.access.expose(), "a");
        assert_eq!(std.expires_in, Some(3600));
        let slack = parse_tokens(&serde_json::json!({"ok": true, "authed_user": {"access_token": "xoxp-1", "refresh_token": "xoxe-1", "expires_in": 43200}})).unwrap();
        assert_eq!(slack.access.expose(), "xoxp-1");
        assert!(parse_tokens(&serde_json::json!({"ok": false, "error": "invalid_code"})).is_err());
        assert!(parse_tokens(&serde_json::json!({"error": "invalid_grant", "error_description": "Bad code"})).is_err());
    }
}
