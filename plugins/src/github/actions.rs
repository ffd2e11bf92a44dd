//! GitHub Actions: workflow runs and workflow_dispatch.

use crate::tool;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use super::*;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunStatus {
    Queued,
    InProgress,
    Completed,
    Success,
    Failure,
    Cancelled,
    Skipped,
    TimedOut,
    ActionRequired,
    Neutral,
    Stale,
    Requested,
    Waiting,
    Pending,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListWorkflowRuns {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// Only runs of this workflow: its numeric id or its file name, e.g. "ci.yml".
    workflow_id: Option<crate::api::IdOrName>,
    /// Only runs on this branch.
    branch: Option<String>,
    /// Only runs with this status or conclusion, e.g. failure, success, in_progress, queued, completed.
    status: Option<RunStatus>,
    /// Only runs triggered by this event, e.g. push, pull_request, schedule, workflow_dispatch.
    event: Option<String>,
    /// Only runs started by this login.
    actor: Option<String>,
    /// How many runs to return (1-100), newest first.
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return GitHub's full run objects under "raw".
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_WORKFLOW_RUNS: ToolSpec = tool! {
    name: "github_list_workflow_runs",
    effect: Read,
    results: PrivateUnlessPublic,
    args: ListWorkflowRuns,
    run: list_workflow_runs,
    keywords: ["Actions", "CI", "build status", "checks", "pipeline", "failed builds", "workflow run", "tests", "CI status", "did the build pass", "GitHub Actions runs"],
    description: "List GitHub Actions workflow runs (CI builds) for a repository or one workflow, filtered by branch, status (failure, success, in_progress) or event, with conclusion and links.",
};

pub(crate) async fn list_workflow_runs(up: Arc<dyn Upstream>, args: ListWorkflowRuns) -> Result<Value, ToolError> {
    let (page, per_page) = paging(args.limit, args.cursor.as_deref())?;
    let base = repo_path(&args.owner, &args.repo);
    let path = match &args.workflow_id {
        Some(w) => format!("{base}/actions/workflows/{}/runs", encode_segment(&w.0)),
        None => format!("{base}/actions/runs"),
    };
    let req = HttpRequest::get(path)
        .query_opt("branch", args.branch.as_deref())
        .query_opt("status", args.status.as_ref().map(wire))
        .query_opt("event", args.event.as_deref())
        .query_opt("actor", args.actor.as_deref());
    let resp = send(&*up, with_paging(req, page, per_page)).await?;
    let body = resp.json()?;
    super::flow::mark_if_all_public(
        &*up,
        body["workflow_runs"].as_array().into_iter().flatten().map(|r| &r["repository"]),
    );
    let runs: Vec<Value> = body["workflow_runs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            compact(json!({
                "id": r["id"],
                "workflow": r["name"],
                "title": r["display_title"],
                "status": r["status"],
                "conclusion": r["conclusion"],
                "branch": r["head_branch"],
                "sha": r["head_sha"],
                "event": r["event"],
                "run_number": r["run_number"],
                "attempt": r["run_attempt"].as_u64().filter(|a| *a > 1),
                "actor": login(&r["actor"]),
                "created_at": r["created_at"],
                "updated_at": r["updated_at"],
                "url": r["html_url"],
            }))
        })
        .collect();
    let out = compact(json!({"total_count": body["total_count"], "runs": runs, "next_cursor": next_cursor(&resp)}));
    Ok(with_raw(out, args.include_raw, &body["workflow_runs"]))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunWorkflow {
    /// The account that owns the repository (user or organization).
    #[schemars(length(min = 1))]
    owner: String,
    /// The repository name.
    #[schemars(length(min = 1))]
    repo: String,
    /// The workflow to run: its numeric id or its file name, e.g. "deploy.yml". It must have an on: workflow_dispatch trigger.
    workflow_id: crate::api::IdOrName,
    /// The branch or tag to run the workflow on, e.g. "main".
    #[serde(rename = "ref")]
    #[schemars(length(min = 1))]
    git_ref: String,
    /// Values for the workflow's declared inputs (at most 25), e.g. {"environment": "staging"}.
    inputs: Option<Map<String, Value>>,
}

pub(crate) const RUN_WORKFLOW: ToolSpec = tool! {
    name: "github_run_workflow",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Decide(super::flow::repo_audience),
    args: RunWorkflow,
    run: run_workflow,
    keywords: ["trigger workflow", "workflow_dispatch", "Actions", "start CI", "deploy", "run pipeline", "run workflow", "kick off workflow", "rerun"],
    description: "Trigger (dispatch) a GitHub Actions workflow that has a workflow_dispatch trigger, on a branch or tag, with optional inputs.",
};

pub(crate) async fn run_workflow(up: Arc<dyn Upstream>, args: RunWorkflow) -> Result<Value, ToolError> {
    if args.inputs.as_ref().is_some_and(|i| i.len() > 25) {
        return Err(invalid("inputs", "GitHub accepts at most 25 inputs", "at most 25 keys"));
    }
    let path = format!(
        "{}/actions/workflows/{}/dispatches",
        repo_path(&args.owner, &args.repo),
        encode_segment(&args.workflow_id.0)
    );
    let mut body = json!({"ref": args.git_ref});
    if let Some(i) = &args.inputs {
        body["inputs"] = Value::Object(i.clone());
    }
    let mut with_details = body.clone();
    with_details["return_run_details"] = json!(true);
    // Since 2026 GitHub can answer with the new run's id; Enterprise servers that predate it reject
    // the flag, so the dispatch is then repeated without it.
    let resp = match send(&*up, HttpRequest::post(&path).json(with_details)).await {
        Err(ToolError::Upstream { status: 400 | 422, message, .. }) if message.contains("return_run_details") => {
            send(&*up, HttpRequest::post(&path).json(body)).await?
        }
        other => other?,
    };
    let r = resp.json()?;
    let mut out = compact(json!({
        "dispatched": true,
        "workflow_id": args.workflow_id.0,
        "ref": args.git_ref,
        "run_id": r["workflow_run_id"],
        "run_url": r["html_url"],
    }));
    if r["workflow_run_id"].is_null() {
        out["note"] = json!(
            "GitHub accepted the dispatch but did not return the run; find it with github_list_workflow_runs (event workflow_dispatch)"
        );
    }
    Ok(out)
}
