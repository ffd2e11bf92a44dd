//! The execution engine behind `execute_tools`: batch rules, then for each execution
//! lookup -> refs -> connection check -> validation -> run (bounded, timed, panic-safe) -> scrub
//! -> audit, then `return` projection and the response size cap.

pub mod cap;
pub mod policy;

use crate::{scrub, template};

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use futures::StreamExt;
use plugins::api::{ArgProblem, ToolError};
use serde_json::{Value, json};

use crate::app::App;
use crate::error::{ErrorCode, ToolFailure};
use crate::registry::{Runner, ToolEntry};
use crate::storage::AuditEntry;
use scrub::Scrubber;
use template::{Scope, StepOutcome};

/// Most executions in one compose run (a rule of the execute_tools schema; README, "execute_tools in brief").
pub const MAX_COMPOSE_STEPS: usize = 8;
/// Most executions in one batch.
pub const MAX_BATCH: usize = 100;
/// Audit rows keep at most this much of the arguments.
const AUDIT_ARGS_CHARS: usize = 4_000;

/// One requested execution.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Execution {
    pub tool: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default)]
    pub ref_id: Option<String>,
    /// The integration's account to use (`work`); without it, the default account.
    #[serde(default)]
    pub account: Option<String>,
}

/// A whole execute_tools call.
#[derive(Debug, Clone)]
pub struct Batch {
    pub executions: Vec<Execution>,
    pub compose: bool,
    pub ret: Option<Value>,
}

/// What goes back to the agent; `is_error` when the call as a whole failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub body: Value,
    pub is_error: bool,
}

impl Outcome {
    fn ok(body: Value) -> Self {
        Outcome { body, is_error: false }
    }
    fn failed(f: ToolFailure) -> Self {
        Outcome { body: f.to_value(), is_error: true }
    }
}

/// One finished execution, as the caller's progress hook sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Executions finished so far (1-based, counts failures too).
    pub done: usize,
    /// Executions in the batch.
    pub total: usize,
    /// The tool that just finished.
    pub tool: String,
    /// `None` on success, else the error code.
    pub error: Option<&'static str>,
    /// Set when `tool` has not finished but reported its own progress (an upstream MCP server's
    /// `notifications/progress`); then `done` and `total` are 0 (unknown to the tool).
    pub running: Option<Running>,
}

/// How far a running upstream call is (its server's own progress report).
pub use crate::upstream::Running;

impl Progress {
    /// A short line for a progress notification: `"time_get_current ok"`, or for a running tool
    /// `"everything_long_task: step 2 of 5"` (token-shaped text is scrubbed like everything else
    /// that leaves the engine).
    pub fn message(&self) -> String {
        let line = match (&self.running, self.error) {
            (Some(r), _) => match &r.message {
                Some(m) => format!("{}: {m}", self.tool),
                None => format!("{} running", self.tool),
            },
            (None, None) => format!("{} ok", self.tool),
            (None, Some(code)) => format!("{} failed ({code})", self.tool),
        };
        scrub::redact_tokens(&line).unwrap_or(line)
    }

    /// The `progress` value of this report's notification after one with value `last`: a finished
    /// execution counts 1 (the value is `done`); a running one's own progress moves inside the
    /// current unit, never reaching the next, so values only increase (the protocol's rule) however
    /// the batch's executions interleave. `None`: a running report with no room left below the
    /// next unit, not worth a notification.
    pub fn value_after(&self, last: f64) -> Option<f64> {
        let Some(r) = &self.running else { return Some(self.done as f64) };
        let base = last.floor();
        let wanted = base + r.fraction.unwrap_or(0.0).clamp(0.0, 0.9);
        if wanted > last {
            Some(wanted)
        } else {
            let room = base + 1.0 - last;
            (room > 1e-3).then(|| last + room / 2.0)
        }
    }
}

/// A cancellation signal shared by everything one batch runs. Cancelling stops executions that
/// are running (their tasks are aborted, so upstream connections close) and keeps the rest from
/// starting.
#[derive(Clone)]
pub struct CancelToken(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken(Arc::new(tokio::sync::watch::channel(false).0))
    }
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.0.send_replace(true);
    }
    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }
    /// Resolves once [`CancelToken::cancel`] has been called (at once if it already was).
    pub async fn cancelled(&self) {
        let mut rx = self.0.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }
}

/// Called once per finished execution, from the task that ran it.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// What the caller of a batch observes and controls while it runs.
#[derive(Clone, Default)]
pub struct Hooks {
    pub progress: Option<ProgressFn>,
    pub cancel: Option<CancelToken>,
    /// Asks the user to approve a mutating tool the policy holds (`confirm`); without it such a
    /// tool is refused with CONFIRMATION_REQUIRED.
    pub approve: Option<policy::ApproveFn>,
    /// A pre-pass: every execution goes as far as the safety policy (so `approve` sees each one
    /// the policy holds) and stops there: nothing runs, nothing is audited.
    pub probe: bool,
}

impl Hooks {
    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(CancelToken::is_cancelled)
    }
    fn report(&self, done: usize, total: usize, tool: &str, result: &Result<Value, ToolFailure>) {
        if let Some(progress) = &self.progress {
            let error = result.as_ref().err().map(|f| f.code.as_str());
            progress(Progress { done, total, tool: tool.to_string(), error, running: None });
        }
    }
}

/// A spawned task that is aborted when its handle is dropped (a plain `JoinHandle` detaches), so a
/// cancelled or abandoned execution stops its upstream calls.
pub struct AbortOnDrop<T>(pub tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub async fn execute(app: &Arc<App>, batch: Batch) -> Outcome {
    execute_with(app, batch, &Hooks::default()).await
}

/// [`execute`] with progress reports and cancellation.
pub async fn execute_with(app: &Arc<App>, batch: Batch, hooks: &Hooks) -> Outcome {
    if let Err(f) = preflight(&batch) {
        return Outcome::failed(f);
    }
    let mut outcome =
        if batch.compose { run_compose(app, &batch, hooks).await } else { run_parallel(app, &batch, hooks).await };
    // Executions of one batch run side by side: one may return a value another resolved after it
    // started. The whole answer (results, `return` projection, errors) passes every secret known now.
    app.exposed.scrub(&mut outcome.body);
    if cap::cap_response(&mut outcome.body, cap::MAX_RESPONSE_CHARS) {
        tracing::info!("execute_tools response shrunk to the size cap");
    }
    outcome
}

/// The batch rules, checked before anything runs.
fn preflight(batch: &Batch) -> Result<(), ToolFailure> {
    let mut problems = Vec::new();
    let n = batch.executions.len();
    if n == 0 {
        problems.push(ArgProblem { path: "/executions".into(), problem: "needs at least 1 execution".into() });
    }
    if n > MAX_BATCH {
        problems.push(ArgProblem {
            path: "/executions".into(),
            problem: format!("takes at most {MAX_BATCH} executions, got {n}"),
        });
    }
    if batch.compose && n > MAX_COMPOSE_STEPS {
        problems.push(ArgProblem {
            path: "/executions".into(),
            problem: format!("a compose runs at most {MAX_COMPOSE_STEPS} executions, got {n}"),
        });
    }
    let mut seen = HashSet::new();
    for (i, e) in batch.executions.iter().enumerate() {
        match &e.ref_id {
            None if batch.compose => problems.push(ArgProblem {
                path: format!("/executions/{i}/ref_id"),
                problem: "every execution needs a ref_id when compose is true".into(),
            }),
            Some(id) if !template::valid_ref_id(id) => problems.push(ArgProblem {
                path: format!("/executions/{i}/ref_id"),
                problem: "use 1-64 letters, digits, '_' or '-'".into(),
            }),
            Some(id) if !seen.insert(id.clone()) => problems.push(ArgProblem {
                path: format!("/executions/{i}/ref_id"),
                problem: format!("ref_id '{id}' is used twice"),
            }),
            _ => {}
        }
        if let Some(problem) = e.account.as_deref().and_then(crate::auth::account_problem) {
            problems.push(ArgProblem { path: format!("/executions/{i}/account"), problem });
        }
        if !e.args.is_null() && !e.args.is_object() {
            problems.push(ArgProblem {
                path: format!("/executions/{i}/args"),
                problem: format!("expected an object, got {}", crate::validate::describe(&e.args)),
            });
        }
    }
    if !problems.is_empty() {
        return Err(ToolFailure::new(
            ErrorCode::InvalidArguments,
            "execute_tools arguments break the batch rules; nothing was run",
        )
        .with("problems", serde_json::to_value(&problems).unwrap_or_default()));
    }
    if !batch.compose {
        for (i, e) in batch.executions.iter().enumerate() {
            if template::mentions_step(&e.args) {
                return Err(ToolFailure::new(
                    ErrorCode::BadRef,
                    "{{step:...}} refs in args need compose: true (without compose, executions run at the same time); nothing was run",
                )
                .with("index", i));
            }
        }
    }
    if let Some(ret) = &batch.ret {
        if !template::vault_names(ret)?.is_empty() {
            return Err(ToolFailure::new(
                ErrorCode::BadRef,
                "return never resolves {{vault:...}} refs; nothing was run",
            ));
        }
        for id in template::step_refs(ret)? {
            if !seen.contains(&id) {
                return Err(ToolFailure::new(
                    ErrorCode::BadRef,
                    format!("return refers to '{id}', which no execution has as its ref_id; nothing was run"),
                )
                .with("ref", id));
            }
        }
    }
    Ok(())
}

async fn run_parallel(app: &Arc<App>, batch: &Batch, hooks: &Hooks) -> Outcome {
    let total = batch.executions.len();
    let done = AtomicUsize::new(0);
    let results: Vec<Result<Value, ToolFailure>> = futures::stream::iter(batch.executions.iter().cloned())
        .map(|exec| {
            let app = app.clone();
            let done = &done;
            async move {
                let result = run_one(&app, &exec, None, hooks).await;
                if !is_not_started(&result) {
                    let tool = app.exposed.text(&exec.tool);
                    hooks.report(done.fetch_add(1, Ordering::SeqCst) + 1, total, &tool, &result);
                }
                result
            }
        })
        .buffered(app.settings.concurrency)
        .collect()
        .await;

    let Some(ret) = &batch.ret else {
        let items: Vec<Value> = results
            .into_iter()
            .map(|r| match r {
                Ok(v) => json!({ "result": v }),
                Err(f) => f.to_value(),
            })
            .collect();
        return Outcome::ok(json!({ "results": items }));
    };

    let mut steps = HashMap::new();
    let mut errors = Vec::new();
    for (i, (exec, r)) in batch.executions.iter().zip(results).enumerate() {
        match r {
            Ok(v) => {
                if let Some(id) = &exec.ref_id {
                    steps.insert(id.clone(), StepOutcome::Ok(v));
                }
            }
            Err(f) => {
                if let Some(id) = &exec.ref_id {
                    steps.insert(id.clone(), StepOutcome::Failed);
                }
                let mut e = json!({ "index": i, "error": f.body() });
                if let Some(id) = &exec.ref_id {
                    e["ref_id"] = json!(id);
                }
                errors.push(e);
            }
        }
    }
    let mut body = match project(ret, &steps) {
        Ok(v) => json!({ "result": v }),
        Err(f) => f.to_value(),
    };
    if !errors.is_empty() {
        body["errors"] = Value::Array(errors);
    }
    let is_error = body.get("error").is_some();
    Outcome { body, is_error }
}

async fn run_compose(app: &Arc<App>, batch: &Batch, hooks: &Hooks) -> Outcome {
    let mut steps: HashMap<String, StepOutcome> = HashMap::new();
    // Kept step results are weighed against a budget (per compose and process-wide).
    let mut kept = template::Kept::default();
    let mut completed = Vec::new();
    let total = batch.executions.len();
    for (i, exec) in batch.executions.iter().enumerate() {
        let ref_id = exec.ref_id.clone().unwrap_or_default();
        let result = run_one(app, exec, Some(&steps), hooks).await.and_then(|v| kept.keep(&ref_id, &v).map(|()| v));
        if !is_not_started(&result) {
            hooks.report(i + 1, total, &app.exposed.text(&exec.tool), &result);
        }
        match result {
            Ok(v) => {
                steps.insert(ref_id.clone(), StepOutcome::Ok(v));
                completed.push(Value::String(ref_id));
            }
            Err(f) => {
                let mut body = f.body();
                body["index"] = json!(i);
                body["ref_id"] = json!(ref_id);
                let skipped: Vec<Value> =
                    batch.executions[i + 1..].iter().filter_map(|e| e.ref_id.clone()).map(Value::String).collect();
                return Outcome {
                    body: json!({ "error": body, "completed": completed, "not_run": skipped }),
                    is_error: true,
                };
            }
        }
    }
    match &batch.ret {
        None => {
            let last = batch.executions.last().and_then(|e| e.ref_id.as_ref()).and_then(|id| steps.remove(id));
            let last = match last {
                Some(StepOutcome::Ok(v)) => v,
                _ => Value::Null,
            };
            Outcome::ok(json!({ "result": last }))
        }
        Some(ret) => match project(ret, &steps) {
            Ok(v) => Outcome::ok(json!({ "result": v })),
            Err(f) => Outcome { body: json!({ "error": f.body(), "completed": completed }), is_error: true },
        },
    }
}

/// Resolves a `return` template over the results; vault refs never resolve here.
fn project(ret: &Value, steps: &HashMap<String, StepOutcome>) -> Result<Value, ToolFailure> {
    let scope = Scope {
        steps: Some(steps),
        vault: None,
        no_steps_reason: "",
        no_vault_reason: "return never resolves vault refs",
        resolving: "return",
        max_bytes: template::MAX_RESOLVED_BYTES,
    };
    template::resolve(ret, &scope).map(|r| r.value)
}

/// The failure of an execution that a cancellation kept from starting.
fn not_started() -> ToolFailure {
    ToolFailure::new(ErrorCode::Cancelled, "the call was cancelled before this execution started; nothing was run")
        .with("started", false)
}

fn is_not_started(result: &Result<Value, ToolFailure>) -> bool {
    matches!(result, Err(f) if f.code == ErrorCode::Cancelled && f.details.get("started") == Some(&Value::Bool(false)))
}

/// One execution through the whole pipeline; always leaves an audit row once the tool is known
/// and the execution started (a cancelled one is audited as `CANCELLED`).
async fn run_one(
    app: &Arc<App>,
    exec: &Execution,
    steps: Option<&HashMap<String, StepOutcome>>,
    hooks: &Hooks,
) -> Result<Value, ToolFailure> {
    if hooks.cancelled() {
        return Err(not_started());
    }
    let started = Instant::now();
    let registry = app.registry();
    let Some(entry) = registry.get(&exec.tool) else {
        let similar = registry.similar_names(&exec.tool, 3);
        let mut f = ToolFailure::new(
            ErrorCode::ToolNotFound,
            format!("no tool named '{}'; use search_tools to find the right name", exec.tool),
        );
        if !similar.is_empty() {
            f = f.with("did_you_mean", similar);
        }
        return Err(f);
    };
    // Starts knowing every secret this process has used, so a value written upstream by one call
    // cannot come back in clear through another one.
    let mut scrubber = app.exposed.scrubber();
    // The account the execution resolved to, for its audit row.
    let account = std::sync::Mutex::new(None);
    let outcome = match &hooks.cancel {
        // Dropping `run_entry` on cancellation aborts the tool's task and its upstream requests.
        Some(cancel) => tokio::select! {
            biased;
            r = run_entry(app, entry, exec, steps, &mut scrubber, hooks, &account) => r,
            () = cancel.cancelled() => Err(ToolFailure::new(
                ErrorCode::Cancelled,
                format!("{} was cancelled by the client while it ran; it may have taken effect upstream", entry.name),
            )),
        },
        None => run_entry(app, entry, exec, steps, &mut scrubber, hooks, &account).await,
    };
    let account = account.into_inner().unwrap_or_else(|p| p.into_inner());
    let outcome = match outcome {
        Ok(mut v) => {
            scrubber.value(&mut v);
            Ok(v)
        }
        Err(mut f) => {
            f.message = scrubber.text(&f.message);
            let mut details = Value::Object(std::mem::take(&mut f.details));
            scrubber.value(&mut details);
            if let Value::Object(d) = details {
                f.details = d;
            }
            Err(f)
        }
    };
    app.exposed.remember_all(&scrubber);
    if !hooks.probe {
        audit(app, entry, exec, &outcome, started, &scrubber, account).await;
    }
    outcome
}

async fn run_entry(
    app: &Arc<App>,
    entry: &ToolEntry,
    exec: &Execution,
    steps: Option<&HashMap<String, StepOutcome>>,
    scrubber: &mut Scrubber,
    hooks: &Hooks,
    used_account: &std::sync::Mutex<Option<String>>,
) -> Result<Value, ToolFailure> {
    // Vault values are fetched first (async), then one synchronous pass substitutes everything.
    let mut vault_values = HashMap::new();
    // Vault and custom-app tools take refs as data: a definition stores `{{vault:NAME}}` itself.
    let literal_args = matches!(entry.integration, "vault" | "custom");
    let names = if literal_args { Vec::new() } else { template::vault_names(&exec.args)? };
    // The origins the call's requests will really reach (the connection's own host included).
    // The account the call names must exist (never a silent fall-back to the default); a
    // built-in, a custom app or a public integration has no accounts to name.
    let account = match entry.plugin() {
        Some(i) if !crate::registry::is_public(i) => {
            let requested = exec.account.clone();
            off_the_runtime(app, move |app| app.resolve_account(i, requested.as_deref())).await??
        }
        _ if exec.account.is_some() => {
            return Err(ToolFailure::new(
                ErrorCode::InvalidArguments,
                format!(
                    "{} needs no connection, so it has no accounts; leave account out; nothing was run",
                    entry.name
                ),
            ));
        }
        _ => None,
    };
    *used_account.lock().unwrap_or_else(|p| p.into_inner()) = account.clone();
    // The credential (SQLite metadata, the secret store: both blocking) is read off the async
    // workers, once, when first needed.
    let read_connection = |i: &'static plugins::api::Integration| {
        let account = account.clone();
        async move {
            match account {
                Some(a) => off_the_runtime(app, move |app| app.connection_of(i, &a)).await.unwrap_or_else(|f| {
                    Err(crate::secrets::StoreError::Unavailable { store: "engine", reason: f.message })
                }),
                None => Ok(None),
            }
        }
    };
    let mut stored = None;
    let hosts = match (entry.plugin(), entry.custom()) {
        _ if names.is_empty() => Vec::new(),
        (Some(integration), _) => {
            if !crate::registry::is_public(integration) {
                stored = Some(read_connection(integration).await);
            }
            let connection = stored.as_ref().and_then(|r| r.as_ref().ok()).and_then(Option::as_ref);
            crate::send::target_hosts(app, integration, connection)
        }
        (None, Some(op)) => vec![op.app.origin.clone()],
        // An upstream MCP server's tool: only secrets bound to its pseudo-host `mcp:<server>`.
        (None, None) => entry.upstream().map(|u| vec![crate::upstream::pseudo_host(&u.server)]).unwrap_or_default(),
    };
    for name in names {
        let secret = app.vault.resolve_for_hosts(&name, &hosts).await?;
        vault_values.insert(name, secret.expose().clone());
    }
    let lookup = |name: &str| {
        vault_values
            .get(name)
            .cloned()
            .ok_or_else(|| ToolFailure::new(ErrorCode::BadRef, format!("vault secret '{name}' was not resolved")))
    };
    let resolving = match &exec.ref_id {
        Some(id) => format!("the arguments of step '{id}'"),
        None => format!("the arguments of {}", entry.name),
    };
    let scope = Scope {
        steps,
        vault: Some(&lookup),
        no_steps_reason: "step refs need compose: true",
        no_vault_reason: "",
        resolving: &resolving,
        max_bytes: template::MAX_RESOLVED_BYTES,
    };
    // The vault tools take names literally: `{{vault:x}}` in their own arguments is data, never a
    // ref. A value given to vault_set_secret is itself a secret for the audit row and any echo.
    let resolved = if literal_args {
        if let Some(v) = exec.args.get("value").and_then(Value::as_str) {
            scrubber.add(v);
        }
        template::Resolved { value: exec.args.clone(), secrets: Vec::new() }
    } else {
        template::resolve(&exec.args, &scope)?
    };
    for s in &resolved.secrets {
        scrubber.add(s);
    }

    let connection = match entry.plugin() {
        Some(i) if !crate::registry::is_public(i) => match stored.take() {
            Some(r) => r,
            None => read_connection(i).await,
        }
        .map_err(|e| {
            ToolFailure::new(
                ErrorCode::SecretStoreUnavailable,
                format!(
                    "the credential for {} could not be read: {e}. {}",
                    entry.integration,
                    crate::secrets::STORE_HELP
                ),
            )
        })?,
        _ => None,
    }
    .map(Arc::new);
    if let Some(c) = &connection {
        for secret in c.secret_values() {
            scrubber.add(&secret);
        }
    }
    let needs_credential = entry.plugin().is_some_and(|i| !crate::registry::is_public(i));
    if needs_credential && connection.is_none() {
        return Err(ToolFailure::new(
            ErrorCode::NotConnected,
            format!("{} is not connected; call connect with integration '{}' and have the user finish in the browser, then retry", entry.integration, entry.integration),
        )
        .with("integration", entry.integration)
        .with("next_step", json!({ "tool": "connect", "arguments": { "integration": entry.integration } })));
    }

    let args = crate::validate::validate(entry.schema(), &resolved.value)
        .map_err(|problems| invalid_arguments(entry, &resolved.value, problems))?;

    // A request budget the user misspelled fails closed: nothing is sent to that integration.
    if let Some(i) = entry.plugin()
        && let Some(Err(bad)) = app.settings.rate_limits.get(i.name)
    {
        return Err(ToolFailure::new(
            ErrorCode::PolicyDenied,
            format!(
                "the request budget for {} is misconfigured ({bad}), so nothing is sent to it until the user fixes it; nothing was run",
                i.name
            ),
        )
        .with("setting", bad.source.clone()));
    }

    // The user's safety policy for writes: nothing the model sends can get past it. A call that
    // names local files to read or write counts as a write.
    let effect = policy::effect_of_call(app, entry, &args).await;
    if effect.mutating() {
        let policy = policy::for_tool_as(app, entry.integration, account.as_deref(), effect)?;
        if policy != policy::Policy::Allow {
            let mut shown = args.clone();
            scrubber.value(&mut shown);
            let mut summary = policy::summarize(entry.name, entry.integration, entry.description, &shown)
                + &local_files_note(app, entry, &shown);
            if let Some(sent) = policy::what_is_sent(entry, &shown) {
                summary.push_str(&format!("\nWill send: {sent}"));
            }
            // A named account is part of what the user approves: the same call on another
            // account is another call (its own digest, its own question).
            let named = account.as_deref().filter(|a| *a != crate::auth::DEFAULT_ACCOUNT);
            if let Some(a) = named {
                summary.push_str(&format!("\nAccount: {a}"));
            }
            let summary = scrubber.text(&summary);
            let digest = match named {
                Some(a) => crate::approval::args_digest(&json!({ "account": a, "args": args })),
                None => crate::approval::args_digest(&args),
            };
            let request = policy::ApprovalRequest {
                action: entry.name.to_string(),
                integration: entry.integration.to_string(),
                summary,
                args_sha256: digest,
                shown,
            };
            policy::check(app, policy, request, hooks.approve.as_ref()).await?;
        }
    }
    if hooks.probe {
        return Err(not_started());
    }

    let timeout = app.settings.call_timeout;
    let deadline = Instant::now() + timeout;
    let mut revealed = None;
    // The task keeps the caller's tracing span (a client's per-request log level follows it) and is
    // aborted if this future is dropped (cancellation).
    let task = AbortOnDrop(match &entry.runner {
        Runner::Plugin { integration, run } => {
            let upstream =
                Arc::new(crate::send::EngineUpstream::new(app.clone(), integration, deadline, connection).with_files(
                    entry.name,
                    entry.files,
                    &args,
                ));
            revealed = Some(upstream.attached_secrets());
            tokio::spawn(tracing::Instrument::in_current_span(run(upstream, args)))
        }
        Runner::Builtin(run) => tokio::spawn(tracing::Instrument::in_current_span(run(app.clone(), args))),
        Runner::Upstream(tool) => {
            // The server's own progress notifications go to the caller's progress hook.
            let name = entry.name;
            let running = hooks.progress.clone().map(|hook| -> crate::upstream::OnRunning {
                Arc::new(move |running| {
                    hook(Progress { done: 0, total: 0, tool: name.to_string(), error: None, running: Some(running) })
                })
            });
            let call = crate::upstream::call(app.clone(), tool.clone(), args, running);
            tokio::spawn(tracing::Instrument::in_current_span(call))
        }
        Runner::Custom(op) => {
            // The app's own credentials are vault refs, resolved for its host only.
            let prepared = crate::custom::prepare(app, op).await?;
            for s in &prepared.secrets {
                scrubber.add(s);
            }
            tokio::spawn(tracing::Instrument::in_current_span(crate::custom::send(
                app.clone(),
                op.clone(),
                prepared,
                args,
                deadline,
            )))
        }
    });
    let abort = task.0.abort_handle();
    let finished = tokio::time::timeout(timeout, task).await;
    // Session values (login tokens, cookies) the call used are secrets like the connection's own.
    if let Some(revealed) = revealed {
        for secret in revealed.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            scrubber.add(secret);
        }
    }
    match finished {
        Err(_) => {
            abort.abort();
            Err(ToolFailure::new(
                ErrorCode::Timeout,
                format!("{} did not finish within {}s", entry.name, timeout.as_secs()),
            )
            .with("timeout_seconds", timeout.as_secs()))
        }
        Ok(Err(join_error)) => {
            tracing::error!(tool = entry.name, panic = join_error.is_panic(), "tool task failed");
            Err(ToolFailure::new(
                ErrorCode::InternalError,
                format!("{} crashed inside workbench; this is a bug, and the server is still running", entry.name),
            ))
        }
        Ok(Ok(Ok(value))) => Ok(value),
        Ok(Ok(Err(e))) => {
            let mut f = failure_from(e, entry, &resolved.value);
            // A rejected credential of a named account: reconnect that account, not the default.
            if let Some(a) = account.as_deref().filter(|a| *a != crate::auth::DEFAULT_ACCOUNT)
                && f.details.contains_key("integration")
            {
                let old = format!("call connect with integration '{}'", entry.integration);
                f.message = f.message.replace(&old, &format!("{old} and account '{a}'"));
                f.details.insert("account".into(), json!(a));
            }
            Err(f)
        }
    }
}

/// Runs a blocking lookup (SQLite, the secret store) on the blocking pool, so a slow store or a
/// busy database never holds an async worker.
async fn off_the_runtime<T: Send + 'static>(
    app: &Arc<App>,
    f: impl FnOnce(&App) -> T + Send + 'static,
) -> Result<T, ToolFailure> {
    let app = app.clone();
    tokio::task::spawn_blocking(move || f(&app))
        .await
        .map_err(|e| ToolFailure::new(ErrorCode::InternalError, format!("a credential lookup did not finish: {e}")))
}

/// The local files a call reads or writes, as full paths, for the approval question (the
/// arguments shown above it may be cut short).
fn local_files_note(app: &App, entry: &ToolEntry, args: &Value) -> String {
    let dir = crate::send::files::FilesDir::of(&app.settings);
    let list = |paths: Vec<String>| paths.iter().map(|p| dir.shown(p)).collect::<Vec<_>>().join(", ");
    let (reads, writes) = (entry.files.read_paths(args), entry.files.write_paths(args));
    let mut note = String::new();
    if !reads.is_empty() {
        note += &format!("\nReads these local files and sends their content: {}", list(reads));
    }
    if !writes.is_empty() {
        note += &format!("\nWrites local files at: {}", list(writes));
    }
    note
}

fn invalid_arguments(entry: &ToolEntry, given: &Value, problems: Vec<ArgProblem>) -> ToolFailure {
    let provided: Vec<&String> = given.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    ToolFailure::new(
        ErrorCode::InvalidArguments,
        format!("{} problem(s) with the arguments for {}; fix them all and retry", problems.len(), entry.name),
    )
    .with("problems", serde_json::to_value(&problems).unwrap_or_default())
    .with("expected_parameters", crate::validate::expected_parameters(entry.schema()))
    .with("provided", json!(provided))
}

fn is_rate_limit_text(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("rate limit")
        || m.contains("ratelimit")
        || m.contains("too many requests")
        || m.contains("quota exceeded")
}

/// Maps a plugin's error to the agent-facing error object.
fn failure_from(e: ToolError, entry: &ToolEntry, args: &Value) -> ToolFailure {
    let e = match entry.upstream() {
        Some(tool) => match crate::upstream::failure(e, entry.name, tool) {
            Ok(f) => return f,
            Err(e) => e,
        },
        None => e,
    };
    match e {
        ToolError::InvalidArguments { message, problems } => {
            let mut f = invalid_arguments(entry, args, problems);
            f.message = format!("{} ({message})", f.message.trim_end_matches("; fix them all and retry"));
            if f.details.get("problems").is_some_and(|p| p.as_array().is_some_and(Vec::is_empty)) {
                f.details.insert("problems".into(), json!([{ "path": "", "problem": message }]));
            }
            f
        }
        // GitHub and Google also signal rate limits with 403; the provider's words tell them apart
        // from a credential problem.
        ToolError::Upstream { status: status @ (429 | 403), message, retry_after }
            if status == 429 || is_rate_limit_text(&message) =>
        {
            let mut f = ToolFailure::new(
                ErrorCode::RateLimited,
                format!("{} is rate-limiting requests: {message}", entry.integration),
            )
            .with("status", status);
            if let Some(s) = retry_after {
                f = f.with("retry_after_seconds", s);
            }
            f
        }
        ToolError::Upstream { status, message, .. } if status == 401 || status == 403 => {
            let hint = if entry.plugin().is_some_and(crate::registry::is_public) {
                "the service refused the request".to_string()
            } else {
                format!(
                    "the credential for {} was rejected or lacks permission; call connect with integration '{}' to reconnect",
                    entry.integration, entry.integration
                )
            };
            ToolFailure::new(ErrorCode::UpstreamError, format!("{hint}: {message}"))
                .with("status", status)
                .with("integration", entry.integration)
        }
        ToolError::Upstream { status, message, .. } => {
            ToolFailure::new(ErrorCode::UpstreamError, format!("{} answered {status}: {message}", entry.integration))
                .with("status", status)
        }
        ToolError::Network(m) => {
            ToolFailure::new(ErrorCode::NetworkError, format!("could not reach {}: {m}", entry.integration))
        }
        ToolError::Timeout { seconds } => {
            ToolFailure::new(ErrorCode::Timeout, format!("{} did not finish within {seconds}s", entry.name))
        }
        ToolError::Internal(m) => ToolFailure::new(ErrorCode::InternalError, m),
    }
}

async fn audit(
    app: &Arc<App>,
    entry: &ToolEntry,
    exec: &Execution,
    outcome: &Result<Value, ToolFailure>,
    started: Instant,
    scrubber: &Scrubber,
    account: Option<String>,
) {
    let mut args = exec.args.clone();
    if entry.integration == "vault"
        && let Some(v) = args.get_mut("value")
    {
        *v = Value::String(scrub::MARKER.to_string());
    }
    scrubber.value(&mut args);
    let (args, _) = plugins::api::truncate_chars(&args.to_string(), AUDIT_ARGS_CHARS);
    let (ok, code, error) = match outcome {
        Ok(_) => (true, None, None),
        Err(f) => (false, Some(f.code.as_str().to_string()), Some(plugins::api::truncate_chars(&f.message, 500).0)),
    };
    let row = AuditEntry {
        tool: entry.name.to_string(),
        integration: entry.integration.to_string(),
        args,
        mutating: entry.effect_for(&exec.args).mutating(),
        ok,
        error_code: code,
        error,
        duration_ms: started.elapsed().as_millis() as u64,
        account,
    };
    if let Err(e) = app.storage.record_audit(row).await {
        tracing::warn!(error = %e, tool = entry.name, "could not write the audit row");
    }
}

impl From<ToolFailure> for Outcome {
    fn from(f: ToolFailure) -> Self {
        Outcome::failed(f)
    }
}
