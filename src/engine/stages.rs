//! One execution as a pipeline of named stages (ARCHITECTURE.md, "The execution pipeline"):
//!
//! look up -> choose the account -> resolve refs (vault, steps) -> read the credential ->
//! validate -> decide (safety policy, then the outbound-data guard) -> run -> shape and scrub
//! -> audit.
//!
//! Each stage takes what the ones before it produced and returns its own typed output, or a
//! [`ToolFailure`] when it refuses; [`run_one`] strings them together and is the only place that
//! knows their order. The account is chosen before the refs are resolved because a vault ref's
//! allowed hosts depend on the account's connection (a GitHub Enterprise host).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Value, json};

use super::failure::{failure_from, invalid_arguments};
use super::flow::{self, Sources};
use super::{AbortOnDrop, Execution, Hooks, Progress, Steps, policy};
use crate::app::App;
use crate::auth::Connection;
use crate::error::{ErrorCode, ToolFailure};
use crate::registry::{Registry, Runner, ToolEntry};
use crate::scrub::{self, Scrubber};
use crate::storage::AuditEntry;
use crate::template::{self, Scope};

/// Audit rows keep at most this much of the arguments.
const AUDIT_ARGS_CHARS: usize = 4_000;

/// How one execution ended.
pub(crate) enum Executed {
    /// It started (and left an audit row): its result, and the private sources behind a
    /// successful result (empty: public data, or a failure).
    Ran { result: Result<Value, ToolFailure>, private: Sources },
    /// A cancellation kept it from starting, or a probe stopped it at the decision: no progress
    /// report, no audit row.
    NotStarted(ToolFailure),
}

impl Executed {
    pub(crate) fn started(&self) -> bool {
        matches!(self, Executed::Ran { .. })
    }

    pub(crate) fn result(&self) -> Result<&Value, &ToolFailure> {
        match self {
            Executed::Ran { result, .. } => result.as_ref(),
            Executed::NotStarted(f) => Err(f),
        }
    }

    pub(crate) fn into_parts(self) -> (Result<Value, ToolFailure>, Sources) {
        match self {
            Executed::Ran { result, private } => (result, private),
            Executed::NotStarted(f) => (Err(f), Sources::default()),
        }
    }
}

/// Why a stage stopped the pipeline.
enum Stop {
    Failed(ToolFailure),
    /// The outbound-data guard held the call and the user did not approve it (yet): the failure,
    /// and the guard's record for the audit row.
    Held {
        failure: ToolFailure,
        record: String,
    },
    /// A probe (`Hooks::probe`) reached the decision: nothing runs.
    Probed,
}

impl From<ToolFailure> for Stop {
    fn from(f: ToolFailure) -> Self {
        Stop::Failed(f)
    }
}

/// What the audit row records beside the outcome, as the stages learn it.
#[derive(Default)]
struct Trail {
    /// The account the execution resolved to.
    account: Option<String>,
    /// The outbound-data guard's decision, when it held the call.
    flow: Option<String>,
    /// The private sources behind the result (its own read, and what flowed into it).
    private: Sources,
}

/// The failure of an execution that a cancellation kept from starting.
fn not_started() -> ToolFailure {
    ToolFailure::new(ErrorCode::Cancelled, "the call was cancelled before this execution started; nothing was run")
        .with("started", false)
}

/// One execution through the whole pipeline; always leaves an audit row once the tool is known
/// and the execution started (a cancelled one is audited as `CANCELLED`).
pub(crate) async fn run_one(app: &Arc<App>, exec: &Execution, steps: Option<&Steps>, hooks: &Hooks) -> Executed {
    if hooks.cancelled() {
        return Executed::NotStarted(not_started());
    }
    let started = Instant::now();
    let registry = app.registry();
    let entry = match look_up(&registry, &exec.tool) {
        Ok(entry) => entry,
        Err(f) => return Executed::Ran { result: Err(f), private: Sources::default() },
    };
    // Starts knowing every secret this process has used, so a value written upstream by one call
    // cannot come back in clear through another one.
    let mut scrubber = app.exposed.scrubber();
    let mut trail = Trail::default();
    let stopped = match &hooks.cancel {
        // Dropping the pipeline on cancellation aborts the tool's task and its upstream requests.
        Some(cancel) => tokio::select! {
            biased;
            r = pipeline(app, entry, exec, steps, &mut scrubber, hooks, &mut trail) => r,
            () = cancel.cancelled() => Err(Stop::Failed(ToolFailure::new(
                ErrorCode::Cancelled,
                format!("{} was cancelled by the client while it ran; it may have taken effect upstream", entry.name),
            ))),
        },
        None => pipeline(app, entry, exec, steps, &mut scrubber, hooks, &mut trail).await,
    };
    let result = match stopped {
        Ok(v) => Ok(v),
        Err(Stop::Failed(f)) => Err(f),
        Err(Stop::Held { failure, record }) => {
            trail.flow = Some(record);
            Err(failure)
        }
        Err(Stop::Probed) => return Executed::NotStarted(not_started()),
    };
    let result = shape(result, &scrubber);
    app.exposed.remember_all(&scrubber);
    audit(app, entry, exec, &result, started, &scrubber, trail.account, trail.flow).await;
    let private = if result.is_ok() { trail.private } else { Sources::default() };
    Executed::Ran { result, private }
}

/// The stages after the look-up, in order.
async fn pipeline(
    app: &Arc<App>,
    entry: &ToolEntry,
    exec: &Execution,
    steps: Option<&Steps>,
    scrubber: &mut Scrubber,
    hooks: &Hooks,
    trail: &mut Trail,
) -> Result<Value, Stop> {
    let account = choose_account(app, entry, exec).await?;
    trail.account = account.clone();
    let refs = resolve_refs(app, entry, exec, steps, account.as_deref(), scrubber).await?;
    let connection = credential(app, entry, account.as_deref(), refs.stored, scrubber).await?;
    let args = validate(app, entry, &refs.args)?;
    let deadline = Instant::now() + app.settings.call_timeout;
    let mut inputs = refs.private;
    for path in entry.files.read_paths(&args) {
        inputs.add_from(flow::LOCAL_FILES, &flow::local_file_source(&path));
    }
    let decided = Decide {
        app,
        entry,
        args: &args,
        account: account.as_deref(),
        connection: connection.clone(),
        deadline,
        inputs: &inputs,
    };
    trail.flow = decide(decided, scrubber, hooks).await?;
    if hooks.probe {
        return Err(Stop::Probed);
    }
    let ran = run(app, entry, args, &refs.args, connection, account.as_deref(), scrubber, hooks, deadline).await?;
    if flow::result_is_private(app, entry, ran.marked_public) {
        inputs.add_from(&flow::origin_of(entry), &scrubber.text(&flow::source_of(entry, &refs.args)));
    }
    trail.private = inputs;
    Ok(ran.value)
}

/// Stage 1, look up: the tool by name, or a failure naming similar tools.
fn look_up<'r>(registry: &'r Registry, tool: &str) -> Result<&'r ToolEntry, ToolFailure> {
    registry.get(tool).ok_or_else(|| {
        let similar = registry.similar_names(tool, 3);
        let mut f = ToolFailure::new(
            ErrorCode::ToolNotFound,
            format!("no tool named '{tool}'; use search_tools to find the right name"),
        );
        if !similar.is_empty() {
            f = f.with("did_you_mean", similar);
        }
        f
    })
}

/// Stage 2, choose the account: the one the execution names (it must exist, never a silent
/// fall-back to the default) or the integration's default; a built-in, a custom app or a public
/// integration has no accounts to name.
async fn choose_account(app: &Arc<App>, entry: &ToolEntry, exec: &Execution) -> Result<Option<String>, ToolFailure> {
    match entry.plugin() {
        Some(i) if !crate::registry::is_public(i) => {
            let requested = exec.account.clone();
            off_the_runtime(app, move |app| app.resolve_account(i, requested.as_deref())).await?
        }
        _ if exec.account.is_some() => Err(ToolFailure::new(
            ErrorCode::InvalidArguments,
            format!("{} needs no connection, so it has no accounts; leave account out; nothing was run", entry.name),
        )),
        _ => Ok(None),
    }
}

type Stored = Option<Result<Option<Connection>, crate::secrets::StoreError>>;

/// What resolving the refs produced.
struct Refs {
    /// The arguments with every `{{vault:...}}` and `{{step:...}}` ref substituted.
    args: Value,
    /// The credential, when the vault refs' hosts needed it (read once).
    stored: Stored,
    /// Private data the step refs brought in (compose).
    private: Sources,
}

/// Reads the account's credential off the async workers (SQLite metadata, the secret store).
async fn read_connection(
    app: &Arc<App>,
    integration: &'static plugins::api::Integration,
    account: Option<&str>,
) -> Result<Option<Connection>, crate::secrets::StoreError> {
    match account.map(str::to_string) {
        Some(a) => off_the_runtime(app, move |app| app.connection_of(integration, &a))
            .await
            .unwrap_or_else(|f| Err(crate::secrets::StoreError::Unavailable { store: "engine", reason: f.message })),
        None => Ok(None),
    }
}

/// Stage 3, resolve refs: vault values are fetched first (async, only for the origins the call's
/// requests really reach), then one synchronous pass substitutes them and the step refs.
async fn resolve_refs(
    app: &Arc<App>,
    entry: &ToolEntry,
    exec: &Execution,
    steps: Option<&Steps>,
    account: Option<&str>,
    scrubber: &mut Scrubber,
) -> Result<Refs, ToolFailure> {
    // Vault and custom-app tools take refs as data: a definition stores `{{vault:NAME}}` itself.
    let literal_args = matches!(entry.integration, "vault" | "custom");
    let names = if literal_args { Vec::new() } else { template::vault_names(&exec.args)? };
    let mut stored = None;
    let hosts = match (entry.plugin(), entry.custom()) {
        _ if names.is_empty() => Vec::new(),
        (Some(integration), _) => {
            if !crate::registry::is_public(integration) {
                stored = Some(read_connection(app, integration, account).await);
            }
            let connection = stored.as_ref().and_then(|r| r.as_ref().ok()).and_then(Option::as_ref);
            crate::send::target_hosts(app, integration, connection)
        }
        (None, Some(op)) => vec![op.app.origin.clone()],
        // An upstream MCP server's tool: only secrets bound to its pseudo-host `mcp:<server>`.
        (None, None) => entry.upstream().map(|u| vec![crate::upstream::pseudo_host(&u.server)]).unwrap_or_default(),
    };
    let vault_values = app.vault.resolve(&names, &hosts).await?;
    let lookup = |name: &str| vault_values.lookup(name);
    let resolving = match &exec.ref_id {
        Some(id) => format!("the arguments of step '{id}'"),
        None => format!("the arguments of {}", entry.name),
    };
    let scope = Scope {
        steps: steps.map(|s| &s.outcomes),
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
    // Private data flows along step refs: a step whose inputs were private has private output.
    let mut private = Sources::default();
    if let Some(steps) = steps
        && template::mentions_step(&exec.args)
    {
        for id in template::step_refs(&exec.args).unwrap_or_default() {
            if let Some(sources) = steps.private.get(&id) {
                private.merge(sources);
            }
        }
    }
    Ok(Refs { args: resolved.value, stored, private })
}

/// Stage 4, the credential: read once (reusing what resolving refs read), its secrets known to the
/// scrubber; a tool that needs one without it fails with NOT_CONNECTED.
async fn credential(
    app: &Arc<App>,
    entry: &ToolEntry,
    account: Option<&str>,
    stored: Stored,
    scrubber: &mut Scrubber,
) -> Result<Option<Arc<Connection>>, ToolFailure> {
    let needs_credential = entry.plugin().is_some_and(|i| !crate::registry::is_public(i));
    let connection = match entry.plugin() {
        Some(i) if needs_credential => match stored {
            Some(r) => r,
            None => read_connection(app, i, account).await,
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
    if needs_credential && connection.is_none() {
        return Err(ToolFailure::new(
            ErrorCode::NotConnected,
            format!("{} is not connected; call connect with integration '{}' and have the user finish in the browser, then retry", entry.integration, entry.integration),
        )
        .with("integration", entry.integration)
        .with("next_step", json!({ "tool": "connect", "arguments": { "integration": entry.integration } })));
    }
    Ok(connection)
}

/// Stage 5, validate: the arguments against the tool's schema, and a request budget the user
/// misspelled fails closed (nothing is sent to that integration).
fn validate(app: &App, entry: &ToolEntry, resolved: &Value) -> Result<Value, ToolFailure> {
    let args = crate::validate::validate(entry.schema(), resolved)
        .map_err(|problems| invalid_arguments(entry, resolved, problems, None))?;
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
    Ok(args)
}

/// What the decision looks at.
struct Decide<'a> {
    app: &'a Arc<App>,
    entry: &'a ToolEntry,
    args: &'a Value,
    account: Option<&'a str>,
    connection: Option<Arc<Connection>>,
    deadline: Instant,
    /// Private data flowing into the arguments (step refs, local files the call sends).
    inputs: &'a Sources,
}

/// Stage 6, decide: the user's safety policy first (nothing the model sends gets past it; a call
/// that names local files counts as a write), then the outbound-data guard. Either may hold the
/// call; the user is asked once, with the guard's reason first. Returns the guard's record for
/// the audit row when it held the call.
async fn decide(d: Decide<'_>, scrubber: &Scrubber, hooks: &Hooks) -> Result<Option<String>, Stop> {
    let Decide { app, entry, args, account, .. } = d;
    let effect = policy::effect_of_call(app, entry, args).await;
    let policy = if effect.mutating() {
        policy::for_tool_as(app, entry.integration, account, effect)?
    } else {
        policy::Policy::Allow
    };
    let hold = if policy == policy::Policy::ReadOnly {
        None
    } else {
        flow::judge(flow::Call {
            app,
            entry,
            args,
            effect,
            account,
            connection: d.connection,
            deadline: d.deadline,
            inputs: d.inputs,
            policy_asks: policy == policy::Policy::Confirm,
        })
        .await
    };
    if policy == policy::Policy::Allow && hold.is_none() {
        return Ok(None);
    }
    let mut shown = args.clone();
    scrubber.value(&mut shown);
    let mut summary = policy::summarize(entry.name, entry.integration, entry.description, &shown)
        + &local_files_note(app, entry, &shown);
    if let Some(sent) = policy::what_is_sent(entry, &shown) {
        summary.push_str(&format!("\nWill send: {sent}"));
    }
    if let Some(hold) = &hold {
        summary = format!("{}\n\n{summary}", hold.question);
    }
    // A named account is part of what the user approves: the same call on another account is
    // another call (its own digest, its own question).
    let named = account.filter(|a| *a != crate::auth::DEFAULT_ACCOUNT);
    if let Some(a) = named {
        summary.push_str(&format!("\nAccount: {a}"));
    }
    let summary = scrubber.text(&summary);
    let digest = match named {
        Some(a) => crate::approval::args_digest(&json!({ "account": a, "args": args })),
        None => crate::approval::args_digest(args),
    };
    let request = policy::ApprovalRequest {
        action: entry.name.to_string(),
        integration: entry.integration.to_string(),
        summary,
        args_sha256: digest,
        shown,
    };
    let asked = if hold.is_some() { policy::Policy::Confirm } else { policy };
    let answer = policy::check(app, asked, request, hooks.approve.as_ref()).await;
    let Some(hold) = hold else { return answer.map(|()| None).map_err(Stop::Failed) };
    let record = match &answer {
        Ok(()) => format!("held, approved by the user; {}", hold.record),
        Err(f) if f.code == ErrorCode::ConfirmationRequired => format!("held, waiting for approval; {}", hold.record),
        Err(_) => format!("held, refused; {}", hold.record),
    };
    let record = scrubber.text(&record);
    if hooks.probe {
        return answer.map(|()| None).map_err(Stop::Failed);
    }
    match answer {
        Ok(()) => Ok(Some(record)),
        Err(mut f) => {
            f.message = format!("{} {}", f.message, flow_note(&hold));
            f.details.insert("flow".into(), json!("held by the outbound-data guard"));
            tracing::info!(tool = entry.name, "the outbound-data guard held a write");
            Err(Stop::Held { failure: f, record })
        }
    }
}

/// The guard's reason, for the error the agent gets back when a held write was not approved.
fn flow_note(hold: &flow::Hold) -> String {
    format!("({})", hold.question.trim_end_matches('.'))
}

/// What `run` produced.
struct Ran {
    value: Value,
    /// The tool said the resource it read is public ([`plugins::api::Upstream::mark_public`]).
    marked_public: bool,
}

/// Stage 7, run: the tool's task, bounded by the call's deadline, aborted if the pipeline is
/// dropped (cancellation), a panic caught; a plugin's error mapped to the agent-facing failure.
#[allow(clippy::too_many_arguments)]
async fn run(
    app: &Arc<App>,
    entry: &ToolEntry,
    args: Value,
    resolved: &Value,
    connection: Option<Arc<Connection>>,
    account: Option<&str>,
    scrubber: &mut Scrubber,
    hooks: &Hooks,
    deadline: Instant,
) -> Result<Ran, ToolFailure> {
    let timeout = app.settings.call_timeout;
    let mut revealed = None;
    let mut public = None;
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
            public = Some(upstream.marked_public());
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
    let marked_public = public.is_some_and(|p| p.load(Ordering::SeqCst));
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
        Ok(Ok(Ok(value))) => Ok(Ran { value, marked_public }),
        Ok(Ok(Err(e))) => Err(failure_from(e, entry, resolved, account)),
    }
}

/// Stage 8, shape and scrub: every secret the execution touched leaves the result and the error.
fn shape(result: Result<Value, ToolFailure>, scrubber: &Scrubber) -> Result<Value, ToolFailure> {
    match result {
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
    }
}

/// Stage 9, audit: one row per started execution (scrubbed, size-capped arguments; the vault's
/// values masked), with the guard's decision when it held the call.
#[allow(clippy::too_many_arguments)]
async fn audit(
    app: &Arc<App>,
    entry: &ToolEntry,
    exec: &Execution,
    outcome: &Result<Value, ToolFailure>,
    started: Instant,
    scrubber: &Scrubber,
    account: Option<String>,
    flow: Option<String>,
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
    if let Err(e) = app.storage.record_audit_with_flow(row, flow).await {
        tracing::warn!(error = %e, tool = entry.name, "could not write the audit row");
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
