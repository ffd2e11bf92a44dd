//! Approvals in the browser, for MCP clients that cannot ask the user themselves (no elicitation).
//!
//! A call the safety policy holds (`confirm`) registers a pending approval bound to exactly that
//! call: the tool, the integration and the SHA-256 of its resolved arguments in canonical JSON
//! (keys sorted), with an expiry. The agent gets `CONFIRMATION_REQUIRED` with the page's address
//! (`/approve/<random id>` on the loopback listener); the page shows the integration, the tool and
//! what will be sent (secrets scrubbed) with Approve and Deny. The POSTs pass the listener's Host
//! and Origin checks, this module's fetch-metadata check ([`fetch_metadata_ok`]) and spend a
//! one-time form token. After Approve, the same call (same tool, same arguments) run again within
//! the lifetime runs once; anything else asks again. Nothing the agent sends is read here: the
//! approval is the user's click.
//!
//! The state lives in memory only ([`Approvals`], approval's state slot of `App`); the browser path is off
//! until a transport that stays up to serve the page turns it on ([`Approvals::enable_browser`]):
//! the MCP server does, `workbench tools call` (one-shot) does not.

pub mod pages;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::connect::page;
use crate::error::{ErrorCode, ToolFailure};
use crate::listener::Site;

/// One thing the user is asked to approve.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool (or `curl_session`).
    pub action: String,
    /// The integration(s) it acts on.
    pub integration: String,
    /// What will happen, in words, with the (scrubbed, shortened) arguments.
    pub summary: String,
    /// SHA-256 of the canonical JSON of the resolved arguments (`approval::args_digest`): what an
    /// approval given outside this call (the browser page, a sealed 2026-07-28 request state) binds
    /// to. Never shown, never sent.
    pub args_sha256: String,
    /// The arguments as the user sees them (scrubbed).
    pub shown: Value,
}

/// How long an approval page (and an approval given on it) lives.
pub const APPROVAL_TTL: Duration = Duration::from_secs(600);
/// Most approvals waiting at once; older ones are dropped first (a flood cannot grow memory).
const MAX_PENDING: usize = 64;

/// Where a pending approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Waiting,
    Approved,
    Denied,
}

/// One call waiting for the user's click.
#[derive(Debug, Clone)]
pub struct PendingApproval {
    pub request: ApprovalRequest,
    pub created: Instant,
    pub expires: Instant,
    pub decision: Decision,
    /// One-time tokens of the forms handed out for this page; each POST spends one.
    pub form_tokens: Vec<String>,
}

/// The app's pending approvals (approval's state).
pub fn approvals(app: &App) -> Arc<Approvals> {
    app.state.approvals.clone()
}

impl App {
    /// The pending approvals (see [`approvals`]).
    pub fn approvals(&self) -> Arc<Approvals> {
        approvals(self)
    }
}

/// The approval page's routes, mounted on the listener by the composition root.
pub fn routes() -> axum::Router<Site> {
    axum::Router::new().route("/approve/{id}", axum::routing::get(approval_page).post(approval_submit))
}

/// The pending approvals of this process.
#[derive(Default)]
pub struct Approvals {
    pending: Mutex<HashMap<String, PendingApproval>>,
    browser: AtomicBool,
    /// A shorter lifetime than [`APPROVAL_TTL`] (tests of expiry); set by no setting or argument.
    ttl: Mutex<Option<Duration>>,
}

impl Approvals {
    /// Lets held calls be approved on a page of the loopback listener (the transport stays up to
    /// serve it). Off by default.
    pub fn enable_browser(&self) {
        self.browser.store(true, Ordering::Relaxed);
    }

    pub fn browser_enabled(&self) -> bool {
        self.browser.load(Ordering::Relaxed)
    }

    /// Shortens the lifetime of approvals registered from now on (tests of expiry).
    pub fn set_ttl(&self, ttl: Duration) {
        *self.ttl.lock().unwrap_or_else(|p| p.into_inner()) = Some(ttl.min(APPROVAL_TTL));
    }

    fn ttl(&self) -> Duration {
        self.ttl.lock().unwrap_or_else(|p| p.into_inner()).unwrap_or(APPROVAL_TTL)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, PendingApproval>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Spends an approval the user gave for exactly this call, if there is a live one.
    pub fn take_approved(&self, request: &ApprovalRequest) -> bool {
        let mut all = self.lock();
        let now = Instant::now();
        let found = all
            .iter()
            .find(|(_, p)| p.decision == Decision::Approved && p.expires > now && same_call(&p.request, request))
            .map(|(id, _)| id.clone());
        match found {
            Some(id) => {
                all.remove(&id);
                true
            }
            None => false,
        }
    }

    /// The page id for this call: the one still waiting for the same call, or a new one.
    pub fn register(&self, request: &ApprovalRequest, ttl: Duration) -> (String, Instant) {
        let mut all = self.lock();
        let now = Instant::now();
        all.retain(|_, p| p.expires > now);
        if let Some((id, p)) =
            all.iter().find(|(_, p)| p.decision == Decision::Waiting && same_call(&p.request, request))
        {
            return (id.clone(), p.expires);
        }
        while all.len() >= MAX_PENDING {
            let oldest = all.iter().min_by_key(|(_, p)| p.created).map(|(id, _)| id.clone());
            match oldest {
                Some(id) => all.remove(&id),
                None => break,
            };
        }
        let id = crate::ids::random_hex(16);
        let expires = now + ttl;
        all.insert(
            id.clone(),
            PendingApproval {
                request: request.clone(),
                created: now,
                expires,
                decision: Decision::Waiting,
                form_tokens: Vec::new(),
            },
        );
        (id, expires)
    }

    /// A live pending approval by page id.
    pub fn get(&self, id: &str) -> Option<PendingApproval> {
        self.lock().get(id).cloned()
    }

    fn issue_form_token(&self, id: &str) -> Option<String> {
        let token = crate::ids::random_hex(32);
        let mut all = self.lock();
        let p = all.get_mut(id)?;
        p.form_tokens.push(token.clone());
        Some(token)
    }

    /// Spends `token` and records the decision, if the page is live and still waiting.
    fn decide(&self, id: &str, token: &str, decision: Decision) -> Result<(), &'static str> {
        let mut all = self.lock();
        let Some(p) = all.get_mut(id) else { return Err("unknown") };
        let Some(i) = p.form_tokens.iter().position(|t| t == token) else { return Err("token") };
        p.form_tokens.remove(i);
        if Instant::now() >= p.expires {
            return Err("expired");
        }
        if p.decision != Decision::Waiting {
            return Err("decided");
        }
        p.decision = decision;
        p.form_tokens.clear();
        Ok(())
    }
}

fn same_call(a: &ApprovalRequest, b: &ApprovalRequest) -> bool {
    a.action == b.action && a.integration == b.integration && a.args_sha256 == b.args_sha256
}

/// JSON with every object's keys sorted, no whitespace: one spelling per value.
pub fn canonical_json(value: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    write(&map[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// SHA-256 (hex) of the canonical JSON of a call's resolved arguments: what an approval binds to.
/// It never leaves the process (arguments can hold resolved vault values).
pub fn args_digest(args: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(args).as_bytes()))
}

/// The `Approval::Unavailable` path of the policy check: runs a call the user approved in the
/// browser (once), or registers the page and answers `CONFIRMATION_REQUIRED` with its address.
pub async fn hold(
    app: &Arc<App>,
    request: &ApprovalRequest,
    why: &str,
    how_to_change: &str,
) -> Result<(), ToolFailure> {
    let refused = |extra: String| {
        ToolFailure::new(
            ErrorCode::ConfirmationRequired,
            format!(
                "{} needs the user's approval ({} policy: confirm), and {why}; nothing was run. {extra}",
                request.action, request.integration
            ),
        )
        .with("policy", "confirm")
    };
    if !approvals(app).browser_enabled() {
        return Err(refused(format!("Ask the user to run it themselves or allow it: {how_to_change}")));
    }
    if approvals(app).take_approved(request) {
        tracing::info!(action = request.action, "approved by the user in the browser");
        return Ok(());
    }
    let listener = match crate::connect::ensure_listener(app).await {
        Ok(l) => l,
        Err(e) => {
            return Err(refused(format!(
                "The approval page could not be served ({e}); ask the user to run it themselves or allow it: {how_to_change}"
            )));
        }
    };
    let (id, expires) = approvals(app).register(request, approvals(app).ttl());
    let url = format!("{}/approve/{id}", listener.base());
    let left = expires.saturating_duration_since(Instant::now()).as_secs();
    let opened = crate::connect::open_in_browser(app, &url);
    Err(refused(format!(
        "Ask the user to open {url}{} and approve it there within {} minutes; after they approve, run exactly the same call again (same tool, same arguments) and it runs once. A different call, or one after Deny, asks again.",
        if opened { " (it was just opened in their browser)" } else { "" },
        left.div_ceil(60).max(1),
    ))
    .with("approval_url", url)
    .with("expires_in_seconds", left)
    .with("opened_in_browser", opened))
}

/// The fetch-metadata rule of the approval POSTs: a browser says the form was sent from one of
/// our own pages by a navigation (`Sec-Fetch-Site: same-origin`, `Sec-Fetch-Mode: navigate`);
/// anything else (another site's form or script, a fetch) approves nothing. (The listener's
/// middleware has already checked Host and Origin.)
pub fn fetch_metadata_ok(headers: &HeaderMap) -> bool {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
    get("sec-fetch-site").as_deref() == Some("same-origin") && get("sec-fetch-mode").as_deref() == Some("navigate")
}

/// What the page shows as being sent: the integration's address and the scrubbed arguments.
fn target_of(app: &App, request: &ApprovalRequest) -> Option<String> {
    let mut hosts = Vec::new();
    for name in request.integration.split(',').map(str::trim) {
        if let Some(i) = crate::auth::integration(app, name)
            && let Some(h) = i.hosts.first()
        {
            let url = crate::send::host_url(app, i, h.key, &[], None).unwrap_or_else(|_| h.default_url.to_string());
            hosts.push(url);
        }
    }
    if hosts.is_empty() { None } else { Some(hosts.join(", ")) }
}

/// GET /approve/{id}: the question, with Approve and Deny. Looking approves nothing.
pub(crate) async fn approval_page(State(site): State<Site>, Path(id): Path<String>) -> Response {
    let app = &site.app;
    let Some(p) = approvals(app).get(&id) else {
        return page(StatusCode::NOT_FOUND, pages::gone("This approval link is unknown or was already used."));
    };
    if Instant::now() >= p.expires {
        return page(StatusCode::GONE, pages::gone("This approval link has expired; nothing was run."));
    }
    match p.decision {
        Decision::Approved => return page(StatusCode::OK, pages::decided(true, &p.request)),
        Decision::Denied => return page(StatusCode::OK, pages::decided(false, &p.request)),
        Decision::Waiting => {}
    }
    let Some(token) = approvals(app).issue_form_token(&id) else {
        return page(StatusCode::NOT_FOUND, pages::gone("This approval link is unknown or was already used."));
    };
    let left = p.expires.saturating_duration_since(Instant::now()).as_secs();
    let target = target_of(app, &p.request);
    page(StatusCode::OK, pages::question(&p.request, target.as_deref(), &format!("/approve/{id}"), &token, left))
}

/// POST /approve/{id}: `decision=approve|deny` with a one-time form token.
pub(crate) async fn approval_submit(
    State(site): State<Site>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let app = &site.app;
    if !fetch_metadata_ok(&headers) {
        return page(
            StatusCode::FORBIDDEN,
            pages::failure("Refused", "This form can only be sent from the page workbench served."),
        );
    }
    let Some(fields) = crate::connect::form::parse(&body) else {
        return page(StatusCode::BAD_REQUEST, pages::failure("Unreadable form", "That form could not be read."));
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let decision = match get("decision").as_deref() {
        Some("approve") => Decision::Approved,
        Some("deny") => Decision::Denied,
        _ => {
            return page(StatusCode::BAD_REQUEST, pages::failure("Unreadable form", "Choose Approve or Deny."));
        }
    };
    let token = get("form_token").unwrap_or_default();
    match approvals(app).decide(&id, &token, decision) {
        Ok(()) => {
            let request = approvals(app).get(&id).map(|p| p.request);
            tracing::info!(approved = decision == Decision::Approved, "approval page answered");
            match request {
                Some(r) => page(StatusCode::OK, pages::decided(decision == Decision::Approved, &r)),
                None => page(StatusCode::GONE, pages::gone("This approval link has expired; nothing was run.")),
            }
        }
        Err("unknown") => {
            page(StatusCode::NOT_FOUND, pages::gone("This approval link is unknown or was already used."))
        }
        Err("expired") => page(StatusCode::GONE, pages::gone("This approval link has expired; nothing was run.")),
        Err("decided") => {
            page(StatusCode::CONFLICT, pages::failure("Already answered", "This approval was already answered."))
        }
        Err(_) => page(
            StatusCode::FORBIDDEN,
            pages::failure(
                "Form expired",
                "This form was already used or is stale. Reload the approval page and try again.",
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(tool: &str, args: Value) -> ApprovalRequest {
        ApprovalRequest {
            action: tool.into(),
            integration: "vault".into(),
            summary: String::new(),
            args_sha256: args_digest(&args),
            shown: args,
        }
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":"é"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#);
        assert_eq!(args_digest(&a), args_digest(&b));
        assert_ne!(args_digest(&a), args_digest(&json!({"b": 2})));
    }

    #[test]
    fn an_approval_is_spent_once_and_only_by_the_same_call() {
        let approvals = Approvals::default();
        let call = req("vault_delete_secret", json!({"name": "K"}));
        let (id, _) = approvals.register(&call, APPROVAL_TTL);
        assert_eq!(approvals.register(&call, APPROVAL_TTL).0, id, "a repeat before the click shows the same page");
        assert!(!approvals.take_approved(&call), "waiting is not approved");
        let token = approvals.issue_form_token(&id).unwrap();
        assert_eq!(approvals.decide(&id, "forged", Decision::Approved), Err("token"));
        approvals.decide(&id, &token, Decision::Approved).unwrap();
        assert!(!approvals.take_approved(&req("vault_delete_secret", json!({"name": "L"}))), "other arguments");
        assert!(approvals.take_approved(&call));
        assert!(!approvals.take_approved(&call), "spent");
    }

    #[test]
    fn denied_and_expired_approve_nothing() {
        let approvals = Approvals::default();
        let call = req("vault_delete_secret", json!({"name": "K"}));
        let (id, _) = approvals.register(&call, APPROVAL_TTL);
        let token = approvals.issue_form_token(&id).unwrap();
        approvals.decide(&id, &token, Decision::Denied).unwrap();
        assert!(!approvals.take_approved(&call));
        let (short, _) = approvals.register(&call, Duration::from_millis(1));
        let token = approvals.issue_form_token(&short).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(approvals.decide(&short, &token, Decision::Approved), Err("expired"));
        assert!(!approvals.take_approved(&call));
    }

    #[test]
    fn fetch_metadata_must_say_same_origin_navigation() {
        let mut h = HeaderMap::new();
        assert!(!fetch_metadata_ok(&h));
        h.insert("sec-fetch-site", "cross-site".parse().unwrap());
        h.insert("sec-fetch-mode", "navigate".parse().unwrap());
        assert!(!fetch_metadata_ok(&h));
        h.insert("sec-fetch-site", "same-origin".parse().unwrap());
        assert!(fetch_metadata_ok(&h));
        h.insert("sec-fetch-mode", "cors".parse().unwrap());
        assert!(!fetch_metadata_ok(&h));
    }
}
