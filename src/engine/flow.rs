//! The outbound-data guard (`shared/design/flows.md`, `docs/outbound-data-guard.md`): the
//! session's private-read state, the user's side of each account (looked up once per session
//! through the one credentialed send path), a write's audience, and the decision to hold a write
//! for the user's approval. The engine's `decide` stage asks [`judge`] after the safety policy;
//! a held write goes through the policy's approval paths (`policy::check`).
//!
//! Nothing the agent sends reaches this state: sources are recorded by the engine from the labels
//! of the tools that ran, the trusted list and the mode come from the user's settings only, and
//! an approval is the user's answer through `Hooks::approve`, bound to the exact call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use plugins::api::{BoxFuture, Effect, HttpRequest, HttpResponse, ToolError, Upstream};
use plugins::flow::{Audience, Party, Results, Side, Verdict};
use serde_json::Value;

use crate::app::App;
use crate::auth::Connection;
use crate::config::flow::{FlowMode, Trusted};
use crate::registry::{Runner, ToolEntry};

/// Most sources a session (or one step) remembers; more are counted, not named.
const MAX_SOURCES: usize = 32;

/// The private sources behind some data: `"github_get_file acme/secret-repo (private)"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    named: Vec<String>,
    more: usize,
    /// Where the data was read (`origin_of`): every origin, never capped (one per integration,
    /// server, custom app or the local files folder).
    origins: Vec<String>,
}

impl Sources {
    pub fn one(source: String) -> Sources {
        Sources { named: vec![source], more: 0, origins: Vec::new() }
    }

    /// Remembers one private read and where it was read.
    pub fn add_from(&mut self, origin: &str, source: &str) {
        if !self.origins.iter().any(|o| o == origin) {
            self.origins.push(origin.to_string());
        }
        self.add(source);
    }

    /// Whether every private read behind this data came from `origin` (and there is one).
    fn only_from(&self, origin: &str) -> bool {
        !self.is_empty() && self.more == 0 && !self.origins.is_empty() && self.origins.iter().all(|o| o == origin)
    }

    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.more == 0
    }

    pub fn add(&mut self, source: &str) {
        if self.named.iter().any(|s| s == source) {
            return;
        }
        if self.named.len() < MAX_SOURCES {
            self.named.push(source.to_string());
        } else {
            self.more += 1;
        }
    }

    pub fn merge(&mut self, other: &Sources) {
        for o in &other.origins {
            if !self.origins.contains(o) {
                self.origins.push(o.clone());
            }
        }
        for s in &other.named {
            self.add(s);
        }
        self.more += other.more;
    }

    /// In words, at most three named: `a, b and 2 more`.
    pub fn describe(&self) -> String {
        let shown: Vec<&str> = self.named.iter().take(3).map(String::as_str).collect();
        let rest = self.named.len().saturating_sub(3) + self.more;
        let mut text = shown.join(", ");
        if rest > 0 {
            text.push_str(&format!(" and {rest} more"));
        }
        text
    }
}

/// The guard's state for this process (one MCP session: a stdio client keeps one process for as
/// long as it runs, across its conversations; see the docs for why the state is not reset).
#[derive(Default)]
pub struct FlowState {
    /// Private data that went back to the agent in this session.
    session: Mutex<Sources>,
    /// The user's side per (integration, account), looked up once per session.
    sides: Mutex<HashMap<(&'static str, String), Arc<Side>>>,
    /// Requests the guard made to tell a write's audience (side and audience lookups).
    lookups: AtomicU64,
    /// Decisions to hold a write.
    holds: AtomicU64,
}

/// What the guard has seen in this session, for the user's views and the measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figures {
    pub private_sources: usize,
    pub lookups: u64,
    pub holds: u64,
}

impl FlowState {
    /// Records private data that went back to the agent.
    pub fn absorb(&self, sources: &Sources) {
        if !sources.is_empty() {
            self.session.lock().unwrap_or_else(|p| p.into_inner()).merge(sources);
        }
    }

    /// The private sources of this session so far.
    pub fn sources(&self) -> Sources {
        self.session.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn figures(&self) -> Figures {
        let s = self.session.lock().unwrap_or_else(|p| p.into_inner());
        Figures {
            private_sources: s.named.len() + s.more,
            lookups: self.lookups.load(Ordering::Relaxed),
            holds: self.holds.load(Ordering::Relaxed),
        }
    }
}

impl App {
    /// The outbound-data guard's state for this process.
    pub fn flow(&self) -> Arc<FlowState> {
        self.state.flow.clone()
    }
}

/// Whether a call's result is private data (flows.md section 1). Unlabelled plugin tools and
/// built-ins count as private (the label test keeps that from happening); custom apps' results
/// are private; an upstream server's are, unless the user marked the server public.
pub fn result_is_private(app: &App, entry: &ToolEntry, marked_public: bool) -> bool {
    match entry.results {
        Some(Results::Public) => false,
        Some(Results::Private) => true,
        Some(Results::PrivateUnlessPublic) => !marked_public,
        None => match &entry.runner {
            Runner::Plugin { integration, .. } => !crate::registry::is_public(integration),
            Runner::Upstream(t) => !app.settings.flow.public_servers.iter().any(|s| *s == t.server),
            Runner::Custom(_) | Runner::Builtin(_) => true,
        },
    }
}

/// Where a call reads or sends: the integration, `mcp:<server>` for an upstream server's tool,
/// `custom:<origin>` for a custom app's operation (its origin, which the agent cannot rename),
/// the built-in's namespace.
pub fn origin_of(entry: &ToolEntry) -> String {
    match &entry.runner {
        Runner::Upstream(t) => format!("mcp:{}", t.server),
        Runner::Custom(op) => format!("custom:{}", op.app.origin),
        _ => entry.integration.to_string(),
    }
}

/// Origin of a local file a call sends.
pub const LOCAL_FILES: &str = "local files";

/// Names one private read for the question to the user: the tool and what it read
/// (`github_get_file acme/secret-repo/README.md (private)`), from the call's own arguments.
pub fn source_of(entry: &ToolEntry, args: &Value) -> String {
    const KEYS: &[&str] = &[
        "owner",
        "repo",
        "repository",
        "channel",
        "channel_id",
        "file_id",
        "document_id",
        "spreadsheet_id",
        "page_id",
        "database_id",
        "issue_key",
        "issue_number",
        "number",
        "message_id",
        "thread_id",
        "event_id",
        "calendar_id",
        "project",
        "path",
        "id",
        "query",
    ];
    let mut parts = Vec::new();
    for k in KEYS {
        let v = match args.get(*k) {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        parts.push(v);
        if parts.len() == 3 {
            break;
        }
    }
    let what: String = parts.join("/").chars().filter(|c| !c.is_control()).take(80).collect();
    if what.is_empty() { format!("{} (private)", entry.name) } else { format!("{} {what} (private)", entry.name) }
}

/// A local file a call sends: data of the user's own machine, private like a read.
pub fn local_file_source(path: &str) -> String {
    let shown: String = path.chars().filter(|c| !c.is_control()).take(80).collect();
    format!("local file {shown} (private)")
}

/// The guard's decision to hold one call: the sentence for the user and the audit row.
#[derive(Debug, Clone)]
pub struct Hold {
    /// `Outbound data guard: this email to mallory@evil.example follows reads of ... in this
    /// session.`
    pub question: String,
    /// The audit row's record: the audience and the sources.
    pub record: String,
}

/// Everything the guard needs about one call.
pub struct Call<'a> {
    pub app: &'a Arc<App>,
    pub entry: &'a ToolEntry,
    pub args: &'a Value,
    pub effect: Effect,
    pub account: Option<&'a str>,
    pub connection: Option<Arc<Connection>>,
    pub deadline: Instant,
    /// Private data that flows into this call's arguments through compose step refs or local
    /// files it sends.
    pub inputs: &'a Sources,
    /// The safety policy already asks the user about this call: the guard only words its reason
    /// (no lookups).
    pub policy_asks: bool,
}

/// Whether the guard holds this call (`None`: it may run as far as the guard is concerned).
pub async fn judge(call: Call<'_>) -> Option<Hold> {
    let mode = call.app.settings.flow.mode();
    if mode == FlowMode::Off || !is_outbound_kind(call.app, call.entry) {
        return None;
    }
    let session = call.app.flow().sources();
    // A read of an upstream server or custom app whose arguments carry only what that same
    // server or app returned sends its operator nothing it does not have: not held on account
    // of flow (a write there may reach others through it, so writes still are).
    if mode != FlowMode::Strict
        && !call.effect.mutating()
        && matches!(call.entry.runner, Runner::Upstream(_) | Runner::Custom(_))
    {
        let mut all = call.inputs.clone();
        all.merge(&session);
        if all.is_empty() || all.only_from(&origin_of(call.entry)) {
            return None;
        }
    }
    let carried = !call.inputs.is_empty();
    let tainted = carried || !session.is_empty() || mode == FlowMode::Strict;
    // With no private data in play only a grant is held: the audience is first decided without
    // any lookup (the side is the trusted list alone), and only a grant found that way is looked
    // at again with the account's side, so ordinary writes cost no extra request.
    let verdict = if tainted {
        audience(&call, !call.policy_asks).await
    } else {
        match audience(&call, false).await {
            // The safety policy asks about this call anyway: no lookups for the wording.
            Verdict::Outside { grants: true, .. } if call.policy_asks => return None,
            Verdict::Outside { grants: true, .. } => audience(&call, true).await,
            _ => return None,
        }
    };
    let Verdict::Outside { parties, grants } = trusted_filter(call.app, verdict) else { return None };
    if !(grants || tainted) {
        return None;
    }
    call.app.flow().holds.fetch_add(1, Ordering::Relaxed);
    let to: Vec<String> = parties.iter().take(5).map(Party::to_string).collect();
    let mut to = to.join(", ");
    if parties.len() > 5 {
        to.push_str(&format!(" and {} more", parties.len() - 5));
    }
    let what = what_leaves(call.entry);
    let mut reasons = Vec::new();
    if grants {
        reasons.push(format!("{what} gives {to} access to everything behind it (a grant or a publication)"));
    }
    if carried {
        reasons.push(format!("{what} to {to} carries data from {} read in this call", call.inputs.describe()));
    }
    if !session.is_empty() {
        reasons.push(format!("{what} to {to} follows reads of {} in this session", session.describe()));
    }
    if reasons.is_empty() {
        reasons.push(format!("{what} goes to {to}, outside your side (WORKBENCH_FLOW=strict holds every such write)"));
    }
    let question = format!("Outbound data guard: {}.", reasons.join("; "));
    let mut all = call.inputs.clone();
    all.merge(&session);
    let record = format!(
        "audience: {to}{}; sources: {}; mode: {}",
        if grants { " (grant)" } else { "" },
        if all.is_empty() { "none".to_string() } else { all.describe() },
        mode.as_str()
    );
    Some(Hold { question, record })
}

/// Calls the guard looks at: writes and every call whose tool declares an audience (a send that
/// reads, like `http_send_request`), and every call of a custom app or an upstream server (their
/// operator reads the request).
///
/// For a compiled tool the tool's own effect decides, not the call's: a read that writes a local
/// file (a download into the files folder) counts as a write for the safety policy, but what it
/// writes stays on the user's disk, so it is no outbound write.
fn is_outbound_kind(app: &App, entry: &ToolEntry) -> bool {
    match &entry.runner {
        Runner::Custom(_) => true,
        Runner::Upstream(t) => !app.settings.flow.own_servers.iter().any(|s| *s == t.server),
        Runner::Plugin { .. } | Runner::Builtin(_) => entry.audience.is_some() || entry.effect.mutating(),
    }
}

/// What leaves, in the user's words.
fn what_leaves(entry: &ToolEntry) -> String {
    let name = entry.name;
    match &entry.runner {
        Runner::Custom(op) => format!("this request to the custom app {} ({})", entry.integration, op.app.origin),
        Runner::Upstream(t) => format!("this call to the MCP server {}", t.server),
        _ if name.contains("permission") || name.contains("share") => format!("this sharing ({name})"),
        _ if entry.integration == "gmail" || name.contains("email") => "this email".to_string(),
        _ if name.starts_with("slack_") => "this Slack message".to_string(),
        _ if name.contains("event") => "this calendar event".to_string(),
        _ if name == "http_send_request" => "this HTTP request".to_string(),
        _ => format!("this {name} call"),
    }
}

/// The write's audience. A lookup that fails counts as outside, naming why. `online: false`
/// decides without asking the service (a lookup fails, and the verdict is then no grant).
async fn audience(call: &Call<'_>, online: bool) -> Verdict {
    let entry = call.entry;
    match (&entry.runner, entry.audience) {
        (Runner::Custom(op), _) => Verdict::outside(Party::Url(op.app.origin.clone())),
        (Runner::Upstream(t), _) => Verdict::outside(Party::Named(format!("the MCP server {}", t.server))),
        (_, Some(Audience::Own)) => Verdict::Inside,
        (_, Some(Audience::Outside(why))) => Verdict::outside(url_party(call.args).unwrap_or(Party::Named(why.into()))),
        (_, None) => Verdict::outside(Party::Named(format!("{} (no audience label)", entry.name))),
        (Runner::Plugin { .. } | Runner::Builtin(_), Some(Audience::Decide(decide))) if !online => {
            // Without lookups: a verdict that needs one comes back as an error, which the caller
            // takes as "a grant is possible" (it asks again with lookups).
            let upstream: Arc<dyn Upstream> = Arc::new(Offline);
            match decide(upstream, call.args.clone(), Arc::new(trusted_side(call.app))).await {
                Ok(v) => v,
                Err(_) => Verdict::grant(Party::Named("an audience workbench did not look up".into())),
            }
        }
        (Runner::Plugin { integration, .. }, Some(Audience::Decide(decide))) => {
            let side = match side_of(call, integration).await {
                Ok(side) => side,
                Err(why) => return undecided(why),
            };
            let upstream = counting(call, integration);
            match decide(upstream, call.args.clone(), side).await {
                Ok(v) => v,
                Err(e) => undecided(e.to_string()),
            }
        }
        (Runner::Builtin(_), Some(Audience::Decide(decide))) => {
            let upstream: Arc<dyn Upstream> = Arc::new(Offline);
            match decide(upstream, call.args.clone(), Arc::new(trusted_side(call.app))).await {
                Ok(v) => v,
                Err(e) => undecided(e.to_string()),
            }
        }
    }
}

fn undecided(why: String) -> Verdict {
    let why: String = crate::scrub::redact_tokens(&why).unwrap_or(why).chars().take(200).collect();
    Verdict::outside(Party::Named(format!("an audience workbench could not tell ({why})")))
}

/// The origin of a call's `url` argument, as a party.
fn url_party(args: &Value) -> Option<Party> {
    let url = reqwest::Url::parse(args.get("url")?.as_str()?).ok()?;
    crate::net::Origin::of(&url).map(|o| Party::Url(o.to_string()))
}

/// The trusted list as a side (addresses and domains).
fn trusted_side(app: &App) -> Side {
    let mut side = Side::default();
    for t in &app.settings.flow.trusted {
        match t {
            Trusted::Email(e) => side.add_email(e),
            Trusted::Domain(d) => {
                if !side.domains.contains(d) {
                    side.domains.push(d.clone());
                }
            }
            Trusted::Origin(_) => {}
        }
    }
    side
}

/// Parties on the user's trusted list are inside.
fn trusted_filter(app: &App, verdict: Verdict) -> Verdict {
    let trusted = &app.settings.flow.trusted;
    let Verdict::Outside { parties, grants } = verdict else { return verdict };
    if trusted.is_empty() {
        return Verdict::Outside { parties, grants };
    }
    let side = trusted_side(app);
    let is_trusted = |p: &Party| match p {
        Party::Email(e) => side.has_email(e),
        Party::Domain(d) => side.has_domain(d),
        Party::Url(u) => {
            let origin = reqwest::Url::parse(u).ok().and_then(|u| crate::net::Origin::of(&u));
            origin.is_some_and(|o| trusted.iter().any(|t| matches!(t, Trusted::Origin(x) if *x == o)))
        }
        Party::Anyone(_) | Party::Named(_) => false,
    };
    let left: Vec<Party> = parties.into_iter().filter(|p| !is_trusted(p)).collect();
    if left.is_empty() { Verdict::Inside } else { Verdict::Outside { parties: left, grants } }
}

/// The user's side of the account a call uses, looked up once per session per (integration,
/// account) through the integration's own `side` function on the credentialed send path; the
/// user's trusted list is part of it. A failed lookup is not cached (the next write asks again).
async fn side_of(call: &Call<'_>, integration: &'static plugins::api::Integration) -> Result<Arc<Side>, String> {
    let key = (integration.name, call.account.unwrap_or(crate::auth::DEFAULT_ACCOUNT).to_string());
    let state = call.app.flow();
    if let Some(side) = state.sides.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return Ok(side.clone());
    }
    let mut side = trusted_side(call.app);
    if let Some(lookup) = integration.side {
        let found = lookup(counting(call, integration)).await.map_err(|e| e.to_string())?;
        side.merge(&found);
    }
    let side = Arc::new(side);
    state.sides.lock().unwrap_or_else(|p| p.into_inner()).insert(key, side.clone());
    Ok(side)
}

/// The integration's upstream for the guard's lookups, counting the requests it sends.
fn counting(call: &Call<'_>, integration: &'static plugins::api::Integration) -> Arc<dyn Upstream> {
    let inner = crate::send::EngineUpstream::new(call.app.clone(), integration, call.deadline, call.connection.clone());
    Arc::new(Counting { inner, state: call.app.flow() })
}

struct Counting {
    inner: crate::send::EngineUpstream,
    state: Arc<FlowState>,
}

impl Upstream for Counting {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>> {
        self.state.lookups.fetch_add(1, Ordering::Relaxed);
        self.inner.send(request)
    }
    fn field(&self, name: &str) -> Option<String> {
        self.inner.field(name)
    }
    fn read_local_file(&self, path: &str) -> BoxFuture<Result<Vec<u8>, ToolError>> {
        // A lookup never reads local files (the call's own file rights are not lent to it).
        let refused = ToolError::Internal(format!("an audience lookup may not read the local file '{path}'"));
        Box::pin(std::future::ready(Err(refused)))
    }
    fn write_local_file(&self, path: &str, _bytes: Vec<u8>, _overwrite: bool) -> BoxFuture<Result<u64, ToolError>> {
        let refused = ToolError::Internal(format!("an audience lookup may not write the local file '{path}'"));
        Box::pin(std::future::ready(Err(refused)))
    }
    fn new_id(&self) -> String {
        self.inner.new_id()
    }
}

/// The upstream a built-in's audience function gets: built-ins have no service to ask.
struct Offline;

impl Upstream for Offline {
    fn send(&self, _request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>> {
        Box::pin(std::future::ready(Err(ToolError::Internal("a built-in's audience has no service to ask".into()))))
    }
    fn field(&self, _name: &str) -> Option<String> {
        None
    }
    fn read_local_file(&self, path: &str) -> BoxFuture<Result<Vec<u8>, ToolError>> {
        let refused = ToolError::Internal(format!("an audience decision may not read the local file '{path}'"));
        Box::pin(std::future::ready(Err(refused)))
    }
    fn write_local_file(&self, path: &str, _bytes: Vec<u8>, _overwrite: bool) -> BoxFuture<Result<u64, ToolError>> {
        let refused = ToolError::Internal(format!("an audience decision may not write the local file '{path}'"));
        Box::pin(std::future::ready(Err(refused)))
    }
    fn new_id(&self) -> String {
        crate::ids::random_hex(16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_three_and_count_the_rest() {
        let mut s = Sources::default();
        assert!(s.is_empty());
        for i in 0..5 {
            s.add(&format!("t{i} (private)"));
        }
        s.add("t0 (private)");
        assert_eq!(s.describe(), "t0 (private), t1 (private), t2 (private) and 2 more");
    }
}
