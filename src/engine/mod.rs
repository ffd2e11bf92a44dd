//! The execution engine behind `execute_tools`: batch rules, then each execution through the
//! pipeline of stages in [`stages`] (look up, choose the account, resolve refs, validate, decide:
//! policy then the outbound-data guard in [`flow`], run, shape and scrub, audit), then `return`
//! projection and the response size cap.

pub mod cap;
mod failure;
pub mod flow;
pub mod policy;
mod stages;

use crate::{scrub, template};

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use futures::StreamExt;
use plugins::api::ArgProblem;
use serde_json::Value;

use crate::app::App;
use crate::error::{ErrorCode, ToolFailure};
use flow::Sources;
use stages::{Executed, run_one};
use template::{Scope, StepOutcome};

/// Most executions in one compose run (a rule of the execute_tools schema; README, "execute_tools in brief").
pub const MAX_COMPOSE_STEPS: usize = 8;
/// Most executions in one batch.
pub const MAX_BATCH: usize = 100;

/// What the earlier steps of a compose run produced: their results for `{{step:...}}` refs, and
/// the private sources behind each (private data flows along refs).
#[derive(Default)]
pub(crate) struct Steps {
    pub outcomes: HashMap<String, StepOutcome>,
    pub private: HashMap<String, Sources>,
}

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

/// How a whole batch ended, typed: the MCP edge (`meta::answer`) is the one place that turns it
/// into the agent's JSON (and scrubs and caps that answer as a whole).
#[derive(Debug, Clone, PartialEq)]
pub enum Batched {
    /// The batch rules (or a `return` template) refused it before anything ran.
    Refused(ToolFailure),
    /// Side by side without `return`: one result or failure per execution, in order.
    Each(Vec<Result<Value, ToolFailure>>),
    /// Side by side with `return`: the projection (or why it failed), and the executions that
    /// failed.
    Projected { result: Result<Value, ToolFailure>, errors: Vec<Missed> },
    /// A compose run that finished: the last step's result, or the `return` projection.
    Composed(Value),
    /// A compose step failed: the rest were not run.
    StepFailed { index: usize, ref_id: String, failure: ToolFailure, completed: Vec<String>, not_run: Vec<String> },
    /// Every compose step ran, but its `return` projection failed.
    ReturnFailed { failure: ToolFailure, completed: Vec<String> },
}

/// An execution of a side-by-side batch with `return` that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Missed {
    pub index: usize,
    pub ref_id: Option<String>,
    pub failure: ToolFailure,
}

impl Batched {
    /// Whether the call as a whole failed (an execution's own failure in [`Batched::Each`] or
    /// [`Batched::Projected`]'s `errors` is not that).
    pub fn is_error(&self) -> bool {
        match self {
            Batched::Refused(_) | Batched::StepFailed { .. } | Batched::ReturnFailed { .. } => true,
            Batched::Projected { result, .. } => result.is_err(),
            Batched::Each(_) | Batched::Composed(_) => false,
        }
    }

    /// What made the call as a whole fail.
    pub fn failure(&self) -> Option<&ToolFailure> {
        match self {
            Batched::Refused(f)
            | Batched::StepFailed { failure: f, .. }
            | Batched::ReturnFailed { failure: f, .. }
            | Batched::Projected { result: Err(f), .. } => Some(f),
            _ => None,
        }
    }

    /// Whether anything in it failed: the batch, or any one execution.
    pub fn any_failed(&self) -> bool {
        match self {
            Batched::Each(results) => results.iter().any(Result::is_err),
            Batched::Projected { errors, .. } if !errors.is_empty() => true,
            _ => self.is_error(),
        }
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
    fn report(&self, done: usize, total: usize, tool: &str, result: Result<&Value, &ToolFailure>) {
        if let Some(progress) = &self.progress {
            let error = result.err().map(|f| f.code.as_str());
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

pub async fn execute(app: &Arc<App>, batch: Batch) -> Batched {
    execute_with(app, batch, &Hooks::default()).await
}

/// [`execute`] with progress reports and cancellation. The whole answer passes every secret known
/// when it is serialised (executions of one batch run side by side: one may return a value another
/// resolved after it started) and the size cap: `meta::answer::batch`.
pub async fn execute_with(app: &Arc<App>, batch: Batch, hooks: &Hooks) -> Batched {
    if let Err(f) = preflight(&batch) {
        return Batched::Refused(f);
    }
    // Private data that goes back to the agent with this answer enters the session's state.
    let mut private = Sources::default();
    let outcome = if batch.compose {
        run_compose(app, &batch, hooks, &mut private).await
    } else {
        run_parallel(app, &batch, hooks, &mut private).await
    };
    if !hooks.probe {
        app.flow().absorb(&private);
    }
    outcome
}

/// One execution outside any batch (the portal, the terminal, the runstack profile): its typed
/// result, passed through every secret known now and the size cap like an `execute_tools` answer.
/// A failure of the batch rules (a `{{step:...}}` ref, a bad account name) is its failure.
pub async fn execute_one(app: &Arc<App>, exec: Execution, hooks: &Hooks) -> Result<Value, ToolFailure> {
    let batch = Batch { executions: vec![exec], compose: false, ret: None };
    let result = match preflight(&batch) {
        Err(f) => Err(f),
        Ok(()) => {
            let exec = &batch.executions[0];
            let executed = run_one(app, exec, None, hooks).await;
            if executed.started() {
                hooks.report(1, 1, &app.exposed.text(&exec.tool), executed.result());
            }
            let (result, private) = executed.into_parts();
            if !hooks.probe {
                app.flow().absorb(&private);
            }
            result
        }
    };
    match result {
        Ok(mut v) => {
            app.exposed.scrub(&mut v);
            if cap::cap_response(&mut v, cap::MAX_RESPONSE_CHARS) {
                tracing::info!("a tool result shrunk to the size cap");
            }
            Ok(v)
        }
        Err(mut f) => {
            f.message = app.exposed.text(&f.message);
            let mut details = Value::Object(std::mem::take(&mut f.details));
            app.exposed.scrub(&mut details);
            if let Value::Object(d) = details {
                f.details = d;
            }
            Err(f)
        }
    }
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

async fn run_parallel(app: &Arc<App>, batch: &Batch, hooks: &Hooks, private: &mut Sources) -> Batched {
    let total = batch.executions.len();
    let done = AtomicUsize::new(0);
    let executed: Vec<Executed> = futures::stream::iter(batch.executions.iter().cloned())
        .map(|exec| {
            let app = app.clone();
            let done = &done;
            async move {
                let executed = run_one(&app, &exec, None, hooks).await;
                if executed.started() {
                    let tool = app.exposed.text(&exec.tool);
                    hooks.report(done.fetch_add(1, Ordering::SeqCst) + 1, total, &tool, executed.result());
                }
                executed
            }
        })
        .buffered(app.settings.concurrency)
        .collect()
        .await;
    let results: Vec<Result<Value, ToolFailure>> = executed
        .into_iter()
        .map(|e| {
            let (result, sources) = e.into_parts();
            private.merge(&sources);
            result
        })
        .collect();

    let Some(ret) = &batch.ret else {
        return Batched::Each(results);
    };

    let mut steps = HashMap::new();
    let mut errors = Vec::new();
    for (index, (exec, r)) in batch.executions.iter().zip(results).enumerate() {
        match r {
            Ok(v) => {
                if let Some(id) = &exec.ref_id {
                    steps.insert(id.clone(), StepOutcome::Ok(v));
                }
            }
            Err(failure) => {
                if let Some(id) = &exec.ref_id {
                    steps.insert(id.clone(), StepOutcome::Failed);
                }
                errors.push(Missed { index, ref_id: exec.ref_id.clone(), failure });
            }
        }
    }
    Batched::Projected { result: project(ret, &steps), errors }
}

async fn run_compose(app: &Arc<App>, batch: &Batch, hooks: &Hooks, private: &mut Sources) -> Batched {
    let mut steps = Steps::default();
    // Kept step results are weighed against a budget (per compose and process-wide).
    let mut kept = template::Kept::default();
    let mut completed = Vec::new();
    let total = batch.executions.len();
    for (index, exec) in batch.executions.iter().enumerate() {
        let ref_id = exec.ref_id.clone().unwrap_or_default();
        let executed = run_one(app, exec, Some(&steps), hooks).await;
        let started = executed.started();
        let (result, sources) = executed.into_parts();
        let result = result.and_then(|v| kept.keep(&ref_id, &v).map(|()| v));
        if started {
            hooks.report(index + 1, total, &app.exposed.text(&exec.tool), result.as_ref());
        }
        private.merge(&sources);
        match result {
            Ok(v) => {
                steps.private.insert(ref_id.clone(), sources);
                steps.outcomes.insert(ref_id.clone(), StepOutcome::Ok(v));
                completed.push(ref_id);
            }
            Err(failure) => {
                let not_run = batch.executions[index + 1..].iter().filter_map(|e| e.ref_id.clone()).collect();
                return Batched::StepFailed { index, ref_id, failure, completed, not_run };
            }
        }
    }
    match &batch.ret {
        None => {
            let last = batch.executions.last().and_then(|e| e.ref_id.as_ref()).and_then(|id| steps.outcomes.remove(id));
            Batched::Composed(match last {
                Some(StepOutcome::Ok(v)) => v,
                _ => Value::Null,
            })
        }
        Some(ret) => match project(ret, &steps.outcomes) {
            Ok(v) => Batched::Composed(v),
            Err(failure) => Batched::ReturnFailed { failure, completed },
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
