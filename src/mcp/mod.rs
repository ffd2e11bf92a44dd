//! The MCP surface: the only module that knows rmcp. It lists the profile's meta-tools and forwards
//! each call to `meta` (or `meta::runstack`), turning outcomes into tool results: a success carries
//! `structuredContent` (the JSON object) plus its text copy, an error is `isError` with text.
//!
//! Per call it wires the client's protocol features into the engine's hooks: a `_meta.progressToken`
//! gets one `notifications/progress` per finished execution, `notifications/cancelled` cancels the
//! batch (running executions are aborted and audited as `CANCELLED`, the rest never start), and a
//! per-request log level (`_meta["io.modelcontextprotocol/logLevel"]`) rides on the call's tracing
//! span (see [`logging`]). A panic inside a call becomes an error result; the server keeps serving.

pub mod logging;

pub mod mrtr;

pub mod transport;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode, Implementation, InputRequiredResult, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::app::App;
use crate::engine::{AbortOnDrop, CancelToken, Hooks, Progress, ProgressFn};
use crate::meta::{self, Answer, Tool as MetaTool};

pub const INSTRUCTIONS: &str = "Tools for many services sit behind these meta-tools. Discover: search_tools \
with plain words (\"create jira issue\"). Inspect: get_tool_schema for the exact args. Run: execute_tools \
(one or many; compose + return keep big payloads out of your context). On NOT_CONNECTED: connect, give the \
user the URL, wait_for_connection, retry.";

/// How long a cancelled call may take to stop and write its audit rows before it is aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How long a finished call waits for its progress notifications to be written.
const PROGRESS_FLUSH: Duration = Duration::from_secs(2);

/// Which set of meta-tools the server exposes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// The nine meta-tools.
    #[default]
    Default,
    /// The four tools of the Runstack design (`meta::runstack`).
    Runstack,
}

/// A profile name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile '{0}'; profiles are: default, runstack")]
pub struct UnknownProfile(pub String);

impl Profile {
    pub fn from_name(name: &str) -> Result<Profile, UnknownProfile> {
        match name {
            "default" => Ok(Profile::Default),
            "runstack" => Ok(Profile::Runstack),
            other => Err(UnknownProfile(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Default => "default",
            Profile::Runstack => "runstack",
        }
    }

    pub fn tools(self) -> &'static [MetaTool] {
        match self {
            Profile::Default => meta::META_TOOLS,
            Profile::Runstack => meta::runstack::RUNSTACK_TOOLS,
        }
    }

    pub fn instructions(self) -> &'static str {
        match self {
            Profile::Default => INSTRUCTIONS,
            Profile::Runstack => meta::runstack::INSTRUCTIONS,
        }
    }

    fn find(self, name: &str) -> Option<&'static MetaTool> {
        self.tools().iter().find(|t| t.name == name)
    }

    async fn call(self, app: &Arc<App>, name: &str, args: Value, hooks: &Hooks) -> Option<Answer> {
        Some(self.find(name)?.call(app, args, hooks).await)
    }

    /// What to tell an agent that calls a catalogue tool directly.
    fn direct_call_hint(self, name: &str) -> String {
        match self {
            Profile::Default => format!(
                "{name} is not a top-level tool; run it with execute_tools: {{\"executions\": [{{\"tool\": \"{name}\", \"args\": {{...}}}}]}}"
            ),
            Profile::Runstack => format!(
                "{name} is not a top-level tool; run it with execute_tool: {{\"toolName\": \"{name}\", \"args\": {{...}}}}"
            ),
        }
    }
}

#[derive(Clone)]
pub struct Server {
    app: Arc<App>,
    profile: Profile,
    log: Arc<logging::ClientLog>,
    /// A random id of this server session: sealed request states (2026-07-28 approvals) bind to it.
    session: Arc<str>,
    /// Request states already used (single use).
    spent: Arc<mrtr::Spent>,
}

impl Server {
    pub fn new(app: Arc<App>) -> Self {
        Server::with_profile(app, Profile::Default)
    }

    pub fn with_profile(app: Arc<App>, profile: Profile) -> Self {
        // This server stays up, so a client without elicitation can be sent to an approval page.
        app.approvals().enable_browser();
        Server {
            log: logging::ClientLog::new(app.exposed.clone()),
            app,
            profile,
            session: crate::ids::random_hex(16).into(),
            spent: Arc::new(mrtr::Spent::default()),
        }
    }

    /// The progress hook of one call: logs each finished execution at debug and, when the client
    /// sent a progress token, queues a progress notification (written in order by one task).
    fn progress_hook(&self, context: &RequestContext<RoleServer>) -> (ProgressFn, Option<tokio::task::JoinHandle<()>>) {
        let (tx, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
                let peer = context.peer.clone();
                let forwarder = tokio::spawn(async move {
                    let mut last = 0.0;
                    while let Some(p) = rx.recv().await {
                        let Some(value) = p.value_after(last) else { continue };
                        last = value;
                        let mut param = ProgressNotificationParam::new(token.clone(), last).with_message(p.message());
                        if p.running.is_none() {
                            param = param.with_total(p.total as f64);
                        }
                        if peer.notify_progress(param).await.is_err() {
                            break;
                        }
                    }
                });
                (Some(tx), Some(forwarder))
            }
            None => (None, None),
        };
        let hook = move |p: Progress| {
            tracing::debug!(tool = %p.tool, "execution {}/{} finished: {}", p.done, p.total, p.message());
            if let Some(tx) = &tx {
                let _ = tx.send(p);
            }
        };
        (Arc::new(hook), forwarder)
    }
}

/// The profile's tools exactly as tools/list shows them.
pub fn tools_for(profile: Profile) -> Vec<Tool> {
    profile
        .tools()
        .iter()
        .map(|t| {
            let schema: JsonObject = match (t.schema)() {
                Value::Object(o) => o,
                _ => JsonObject::new(),
            };
            Tool::new(t.name, t.description, Arc::new(schema)).with_annotations(annotations(t))
        })
        .collect()
}

/// A meta-tool's annotations, without the hints that say nothing: `destructiveHint` and
/// `idempotentHint` mean something only when `readOnlyHint` is false (the specification), and an
/// `idempotentHint` of false is the default. `readOnlyHint`, `destructiveHint` (of a tool that
/// writes) and `openWorldHint` are always stated.
fn annotations(t: &MetaTool) -> ToolAnnotations {
    let mut a = ToolAnnotations::with_title(t.title).read_only(t.read_only);
    if !t.read_only {
        a = a.destructive(t.destructive);
        if t.idempotent {
            a = a.idempotent(true);
        }
    }
    a.open_world(t.open_world)
}

/// The error for a request rmcp could not type: rmcp hands a request to `on_custom_request` both when
/// its method is unknown and when a known method's params do not fit (`tools/call` with
/// `{"name": 5}`); the second is `Invalid params` (-32602) saying what is wrong, not "method not
/// found".
///
/// It also answers the stand-in the transport sends for a request over the line limit.
fn untyped_request_error(method: &str, params: Option<&Value>) -> McpError {
    let params = params.cloned().unwrap_or(Value::Null);
    if method == transport::TOO_LARGE_METHOD {
        let (bytes, limit) = (&params["bytes"], &params["limit"]);
        if params["busy"] == json!(true) {
            let (weight, budget) = (&params["weight"], &params["budget"]);
            return McpError::invalid_request(
                format!(
                    "Server busy: this request weighs {weight} (JSON values, or bytes / {per}) and the requests already running leave less than that of workbench's in-flight budget of {budget}; it was not read. Retry when earlier calls have answered, or send smaller arguments.",
                    per = transport::BYTES_PER_UNIT
                ),
                Some(json!({ "bytes": bytes, "weight": weight, "in_flight_budget": budget })),
            );
        }
        if let Some(max) = params.get("max_values") {
            return McpError::invalid_request(
                format!(
                    "Message too large: more than {max} JSON values on one line (an object counts as 8; workbench's limit per message); it was not read. Send smaller arguments."
                ),
                Some(json!({ "bytes": bytes, "max_values": max })),
            );
        }
        return McpError::invalid_request(
            format!(
                "Message too large: {bytes} bytes on one line, over workbench's limit of {limit} bytes per message; it was not read. Send smaller arguments."
            ),
            Some(json!({ "bytes": bytes, "limit": limit })),
        );
    }
    let problem = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err().map(|e| e.to_string()),
        "initialize" | "ping" | "tools/list" | "server/discover" => None,
        _ => return McpError::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"), None),
    };
    let problem = problem.unwrap_or_else(|| "they do not match the method's schema".into());
    McpError::invalid_params(format!("Invalid params for {method}: {problem}"), None)
}

/// The nine tools of the default profile.
pub fn tool_list() -> Vec<Tool> {
    tools_for(Profile::Default)
}

/// A success carries the object as `structuredContent` and as text; an error is text only.
pub fn to_result(body: Value, is_error: bool) -> CallToolResult {
    if !is_error && body.is_object() {
        return CallToolResult::structured(body);
    }
    let text = serde_json::to_string(&body).unwrap_or_else(|_| "{}".into());
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin (lines bounded by the transport).
pub async fn serve_stdio(app: Arc<App>, profile: Profile) -> anyhow::Result<()> {
    transport::serve_with(
        Server::with_profile(app, profile),
        tokio::io::stdin(),
        tokio::io::stdout(),
        transport::MAX_LINE_BYTES,
    )
    .await
}

impl ServerHandler for Server {
    #[allow(deprecated)] // logging is deprecated by SEP-2577 but still what 2025-11-25 clients use
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_logging().build())
            .with_server_info(
                Implementation::new("workbench", env!("CARGO_PKG_VERSION"))
                    .with_title("workbench")
                    .with_description("Local MCP tool gateway: search, inspect and run tools for many services"),
            )
            .with_instructions(self.profile.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Always in the profile's fixed order (the specification: a deterministic order). On
        // 2026-07-28 the list says it is cacheable (fixed for the life of the process and the same
        // for everyone) and names the server; 2025-11-25 results stay as they were (rmcp would
        // send the cache hints to both generations).
        let mut result = ListToolsResult::with_all_items(tools_for(self.profile));
        if is_modern(&context) {
            result = result.with_ttl_ms(LIST_TTL_MS).with_cache_scope(CacheScope::Public);
            stamp_server_info(&mut result.meta);
        }
        Ok(result)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(untyped_request_error(&request.method, request.params.as_ref()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools_for(self.profile).into_iter().find(|t| t.name == name)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log.set_session_level(request.level);
        tracing::info!("client log level set to {:?}", request.level);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let modern = is_modern(&context);
        let mut response = self.call(request, context).await?;
        if modern {
            let meta = match &mut response {
                CallToolResponse::Complete(r) => &mut r.meta,
                CallToolResponse::InputRequired(r) => &mut r.meta,
                _ => return Ok(response),
            };
            stamp_server_info(meta);
        }
        Ok(response)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        // What discover says (versions, capabilities, instructions) is fixed for the life of the
        // process and the same for everyone; rmcp's default result is "do not cache" (0, private).
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), self.get_info())
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }
}

/// `_meta["io.modelcontextprotocol/serverInfo"]` on a 2026-07-28 result (the schema: servers
/// SHOULD name themselves on every response; rmcp does so on `server/discover` only).
fn stamp_server_info(meta: &mut Option<MetaObject>) {
    let info = Implementation::new("workbench", env!("CARGO_PKG_VERSION")).with_title("workbench");
    if let Ok(v) = serde_json::to_value(info) {
        meta.get_or_insert_default().0.insert(SERVER_INFO_META.to_string(), v);
    }
}

const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

impl Server {
    /// One `tools/call`, before the 2026-07-28 result metadata.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if self.profile.find(&name).is_none() {
            if self.app.registry().get(&name).is_some() {
                // An agent calling a catalogue tool directly: tell it how, in words it reads.
                let hint = json!({ "error": self.profile.direct_call_hint(&name) });
                return Ok(to_result(hint, true).into());
            }
            return Err(McpError::invalid_params(format!("Unknown tool: {name}"), None));
        }
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let call = mrtr::call_digest(&name, &args);
        // 2026-07-28 and a client that opens links: `connect` is a round whose question is the link.
        let offers_link = self.profile.find(&name).is_some_and(|t| t.offers_link);
        let links = offers_link && is_modern(&context) && opens_links(&context);
        if links && let Some(state) = &request.request_state {
            return Ok(self.link_retry(state, request.input_responses.as_ref(), &call).await.into());
        }
        let (approve, round) = match self.approval_path(&request, &context, &call).await {
            Ok(path) => path,
            Err(refused) => return Ok(refused.into()),
        };
        // 2026-07-28, first round of a batch: ask first, run after. A pre-pass takes every
        // execution as far as the policy; if any is held, the round asks and nothing has run (a
        // retry would otherwise run the executions nobody held a second time).
        if let Some(round) = round.as_ref()
            && request.request_state.is_none()
            && needs_probe(&name, &args)
        {
            let probe = Hooks { approve: Some(round.approver()), probe: true, ..Default::default() };
            let _ = self.profile.call(&self.app, &name, args.clone(), &probe).await;
            if let Some((requests, state)) = round.input_required(&call) {
                tracing::info!(
                    questions = requests.len(),
                    "{name} needs the user's approval before any of it runs: input required"
                );
                return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
            }
        }
        let trace = trace_context(&context.meta);
        let level = logging::request_level(&context.meta);
        let span = tracing::info_span!("mcp_request", tool = %name, client_log_level = level);
        let cancel = CancelToken::new();
        let (progress, forwarder) = self.progress_hook(&context);
        let hooks =
            Hooks { progress: Some(progress), cancel: Some(cancel.clone()), approve: Some(approve), probe: false };
        let (app, profile, tool) = (self.app.clone(), self.profile, name.clone());
        let started = Instant::now();
        let mut task = AbortOnDrop(tokio::spawn(
            crate::storage::with_trace(trace, async move { profile.call(&app, &tool, args, &hooks).await })
                .instrument(span.clone()),
        ));
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = context.ct.cancelled() => {
                // The engine stops running executions, audits them and skips the rest; anything
                // still going after the grace period is aborted when `task` drops.
                cancel.cancel();
                let stopped = tokio::time::timeout(CANCEL_GRACE, &mut task).await.is_ok();
                tracing::info!(parent: &span, stopped, "{name} cancelled by the client");
                // rmcp sends no response to a cancelled request; this is never written.
                return Ok(to_result(json!({ "error": "cancelled by the client" }), true).into());
            }
        };
        if let Some(f) = forwarder {
            let _ = tokio::time::timeout(PROGRESS_FLUSH, f).await;
        }
        // 2026-07-28: executions the policy held become questions for the client to ask.
        if let Some((requests, state)) = round.as_ref().and_then(|r| r.input_required(&call)) {
            tracing::info!(parent: &span, questions = requests.len(), "{name} needs the user's approval: input required");
            return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
        }
        let result = match joined {
            Ok(Some(outcome)) => {
                tracing::info!(
                    parent: &span,
                    ms = started.elapsed().as_millis() as u64,
                    error = outcome.is_error,
                    "{name} finished"
                );
                let mut body = outcome.body;
                // Whatever any meta-tool answers passes every secret this process has used (known
                // values only: curl_session's answer is a token the agent is meant to have).
                self.app.exposed.scrub_known(&mut body);
                if !outcome.is_error && self.profile.find(&name).is_some_and(|t| t.offers_link) {
                    if links {
                        if let Some(round) = self.link_round(&call, &body).await {
                            tracing::info!(parent: &span, "{name}: the client is asked to open the connect page (input required)");
                            return Ok(round.into());
                        }
                    } else {
                        open_through_client(&context, &mut body).await;
                    }
                }
                to_result(body, outcome.is_error)
            }
            Ok(None) => return Err(McpError::invalid_params("Unknown tool", None)),
            Err(e) => {
                tracing::error!(parent: &span, panic = e.is_panic(), "meta-tool task failed");
                to_result(json!({ "error": "internal error in workbench; the server is still running" }), true)
            }
        };
        Ok(result.into())
    }
}

/// How long the user has to answer an approval question.
const APPROVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// tools/list's cache lifetime on 2026-07-28 (the list never changes while the process runs).
const LIST_TTL_MS: u64 = 3_600_000;

/// The `traceparent` of the request's `_meta` (W3C trace context), when well formed.
fn trace_context(meta: &rmcp::model::RequestMetaObject) -> Option<String> {
    meta.get("traceparent").and_then(Value::as_str).and_then(crate::storage::parse_traceparent)
}

/// Whether a call is a batch whose executions run side by side (more than one, no compose): the
/// ones whose approval the pre-pass collects before any runs. (A compose runs in order, each step
/// on the results of the ones before, so its later steps cannot be known before those run.)
fn needs_probe(name: &str, args: &Value) -> bool {
    name == <meta::execute_tools::ExecuteTools as meta::MetaTool>::NAME
        && args["executions"].as_array().is_some_and(|e| e.len() > 1)
        && args["compose"].as_bool() != Some(true)
}

/// Whether the request speaks 2026-07-28 (or later): no server-to-client requests, rounds instead.
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Whether the client declared URL-mode elicitation (it can open a link for the user).
fn opens_links(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some())
}

/// What the client shows the user with the connect link.
fn link_question(integration: &str) -> String {
    format!(
        "Open this workbench page on this computer to connect {integration}; you type the credential there, never in the chat."
    )
}

/// `connect`'s answer once the client has shown (or not shown) the page.
fn mark_opened(body: &mut Value, opened: bool) {
    body["openedByClient"] = json!(opened);
    if opened {
        let integration = body["integration"].as_str().unwrap_or("the integration").to_string();
        body["message"] = json!(format!(
            "The client showed the user the connect page for {integration}; call wait_for_connection with this connectionId."
        ));
    }
}

/// `connect` on a 2025-11-25 session whose client declared URL-mode elicitation: the client is
/// asked to open the loopback connect page for the user (secrets never go through form
/// elicitation). The answer only says whether the user agreed to open it; the link stays in the
/// result either way. (On 2026-07-28 the same question is a round: `Server::link_round`.)
async fn open_through_client(context: &RequestContext<RoleServer>, body: &mut Value) {
    use rmcp::model::ElicitationAction;
    let (Some(url), Some(id)) = (body["url"].as_str(), body["connectionId"].as_str()) else { return };
    let Ok(parsed) = reqwest::Url::parse(url) else { return };
    if is_modern(context) || !opens_links(context) {
        return;
    }
    let message = link_question(body["integration"].as_str().unwrap_or("the integration"));
    let answer = context.peer.elicit_url_with_timeout(message, parsed, id.to_string(), Some(APPROVAL_TIMEOUT)).await;
    mark_opened(body, matches!(answer, Ok(ElicitationAction::Accept)));
}

/// An approver for a client that cannot ask: the policy sends the user to the approval page.
fn cannot_ask(why: &'static str) -> crate::engine::policy::ApproveFn {
    Arc::new(move |_| Box::pin(async move { crate::engine::policy::Approval::Unavailable(why.into()) }))
}

impl Server {
    /// `connect` on 2026-07-28 with a client that opens links: the answer the engine gave (a fresh
    /// link) becomes an `input_required` round with one URL-mode elicitation, and the answer itself
    /// is sealed into the request state, so the retry hands back this link instead of minting
    /// another. `None` when there is no link to open (already connected, custom app, ...).
    async fn link_round(&self, call: &str, body: &Value) -> Option<InputRequiredResult> {
        let (url, id) = (body["url"].as_str()?, body["connectionId"].as_str()?);
        reqwest::Url::parse(url).ok()?;
        let sealer = match mrtr::sealer(&self.app).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "the connect round could not be sealed; answering the link as is");
                return None;
            }
        };
        let requests =
            mrtr::link_request(link_question(body["integration"].as_str().unwrap_or("the integration")), url, id);
        let state = sealer.seal_link(&self.session, call, body.clone(), mrtr::STATE_TTL);
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The retry of a `connect` round: the sealed link, marked with whether the client opened it.
    /// A state that does not verify (altered, replayed, expired, another call's) gives no link.
    async fn link_retry(
        &self,
        state: &str,
        responses: Option<&rmcp::model::InputResponses>,
        call: &str,
    ) -> CallToolResult {
        let opened = match mrtr::sealer(&self.app).await {
            Ok(sealer) => sealer.open(state, &self.session, call, now_ms(), &self.spent),
            Err(e) => Err(e),
        };
        match opened {
            Ok(mrtr::Opened { link: Some(mut body), .. }) => {
                mark_opened(&mut body, mrtr::link_opened(responses));
                to_result(body, false)
            }
            Ok(_) => to_result(
                json!({ "error": format!("Refused: {}. Call connect again for a new link.", mrtr::StateError::Altered) }),
                true,
            ),
            Err(e) => {
                tracing::warn!(error = %e, "a connect request state was refused");
                to_result(json!({ "error": format!("Refused: {e}. Call connect again for a new link.") }), true)
            }
        }
    }

    /// How this call's held executions are approved: form elicitation on a 2025-11-25 session,
    /// the input-required round on a 2026-07-28 session whose client declared form elicitation,
    /// the browser page otherwise. A retry's request state is verified (and spent) here, before
    /// anything runs; a bad one refuses the whole call.
    async fn approval_path(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        call: &str,
    ) -> Result<(crate::engine::policy::ApproveFn, Option<Arc<mrtr::Round>>), CallToolResult> {
        let modern = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if !modern {
            return Ok((approver(context.peer.clone()), None));
        }
        let form = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !form {
            return Ok((cannot_ask("this MCP client cannot ask the user (it declared no form elicitation)"), None));
        }
        let answered = match &request.request_state {
            None => Vec::new(),
            Some(state) => {
                let opened = match mrtr::sealer(&self.app).await {
                    Ok(sealer) => sealer.open(state, &self.session, call, now_ms(), &self.spent),
                    Err(e) => Err(e),
                };
                match opened {
                    // A `connect` round's state carries no questions: it approves nothing.
                    Ok(opened) => opened.entries,
                    Err(e) => {
                        tracing::warn!(error = %e, "a request state was refused");
                        let body =
                            json!({ "error": format!("Refused: {e}. Nothing was run."), "code": "POLICY_DENIED" });
                        return Err(to_result(body, true));
                    }
                }
            }
        };
        let responses = request.input_responses.clone().unwrap_or_default();
        let round = mrtr::Round::new(self.app.clone(), self.session.clone(), answered, responses);
        Ok((round.approver(), Some(round)))
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// rmcp's `Peer::elicit_with_timeout::<mrtr::Approve>` (on the sessions before 2026-07-28 that
/// [`approver`] serves) with the committed form ([`mrtr::approve_form`]) instead of one generated
/// by schemars on every question: the same request, the same answers and errors.
async fn ask_approval(
    peer: &rmcp::Peer<RoleServer>,
    message: String,
) -> Result<Option<mrtr::Approve>, rmcp::service::ElicitationError> {
    use rmcp::model::{ElicitRequestParams, ElicitationAction};
    use rmcp::service::{ElicitationError, ElicitationMode};
    if !peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
        return Err(ElicitationError::CapabilityNotSupported);
    }
    let requested_schema = mrtr::approve_form().map_err(|e| {
        ElicitationError::Service(rmcp::ServiceError::McpError(McpError::invalid_params(
            format!("Invalid schema for type {}: {e}", std::any::type_name::<mrtr::Approve>()),
            None,
        )))
    })?;
    let params = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
    let response = peer.create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT)).await?;
    match response.action {
        ElicitationAction::Accept => match response.content {
            Some(value) => match serde_json::from_value::<mrtr::Approve>(value.clone()) {
                Ok(parsed) => Ok(Some(parsed)),
                Err(error) => Err(ElicitationError::ParseError { error, data: value }),
            },
            None => Err(ElicitationError::NoContent),
        },
        ElicitationAction::Decline => Err(ElicitationError::UserDeclined),
        // `Cancel` (and any action a later revision adds: no answer either).
        _ => Err(ElicitationError::UserCancelled),
    }
}

/// Asks the human behind the client to approve an action the safety policy holds. The answer
/// comes from the client's own UI (elicitation), never from anything the model sends.
fn approver(peer: rmcp::Peer<RoleServer>) -> crate::engine::policy::ApproveFn {
    use crate::engine::policy::Approval;
    use rmcp::service::ElicitationError;
    Arc::new(move |request| {
        let peer = peer.clone();
        Box::pin(async move {
            match ask_approval(&peer, request.summary).await {
                Ok(Some(a)) if a.approve => Approval::Approved,
                Ok(Some(_)) => Approval::Declined("the user answered no".into()),
                Ok(None) => Approval::Declined("the user gave no answer".into()),
                Err(ElicitationError::UserDeclined) => Approval::Declined("the user declined".into()),
                Err(ElicitationError::UserCancelled) => Approval::Declined("the user dismissed the question".into()),
                Err(ElicitationError::CapabilityNotSupported) => Approval::Unavailable(
                    "this MCP client cannot ask the user (it does not support elicitation)".into(),
                ),
                Err(ElicitationError::Service(rmcp::ServiceError::Timeout { .. })) => {
                    Approval::Declined("no answer within 2 minutes".into())
                }
                Err(e) => Approval::Unavailable(format!("the client could not ask the user ({e})")),
            }
        })
    })
}
