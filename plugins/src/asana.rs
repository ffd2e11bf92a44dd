//! Asana: workspaces, projects, tasks (list, premium search, read, create, update) and task comments
//! (stories). Bearer personal access token; every body is wrapped in `{"data": …}` both ways; ids are
//! string `gid`s; fields are asked for with `opt_fields`; lists page with `limit` + `offset` tokens
//! from `next_page.offset`. Task search is premium-only and answers 402 on free workspaces.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::codec::{base64_decode, base64url_encode};
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "asana",
    display_name: "Asana",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "Personal access token",
            secret: true,
            required: true,
            help: "app.asana.com/0/my-apps → Create new token (starts with 2/ or 1/)",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/users/me"), label: user_label }),
        oauth: None,
    },
    // Single words here mark a query as naming Asana, so generic ones ("tasks") stay multi-word.
    keywords: &["project management", "work management", "my tasks", "assigned tasks", "team tasks"],
    hosts: &[Host { key: "base_url", default_url: "https://app.asana.com/api/1.0" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(150),
    side: Some(flow_side),
    tools: &[
        LIST_WORKSPACES,
        LIST_PROJECTS,
        LIST_TASKS,
        SEARCH_TASKS,
        GET_TASK,
        CREATE_TASK,
        UPDATE_TASK,
        CREATE_COMMENT,
    ],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): `users/me` (`gid`, `email`, and each workspace's `gid`). Every task and comment stays in the user's workspaces (inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/users/me")).await?.json()?;
        let mut side = crate::flow::side_from(&me, &["/data/email"], &["/data/gid"])?;
        for w in me["data"]["workspaces"].as_array().into_iter().flatten() {
            if let Some(g) = w["gid"].as_str() {
                side.add_id(g);
            }
        }
        Ok(side)
    })
}

/// `{"errors": [{"message": "...", "help": "..."}]}`.
fn error_message(body: &Value) -> Option<String> {
    let msgs: Vec<&str> =
        body.get("errors")?.as_array()?.iter().filter_map(|e| e.get("message").and_then(Value::as_str)).collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}

fn user_label(body: &Value) -> Option<String> {
    let user = &body["data"];
    match (user["name"].as_str(), user["email"].as_str()) {
        (Some(n), Some(e)) => Some(format!("{n} <{e}>")),
        (n, e) => n.or(e).map(str::to_string),
    }
}

const LIST_TASK_FIELDS: &str = "name,completed,assignee.name,due_on,due_at,permalink_url,modified_at";
const TASK_FIELDS: &str = "name,notes,completed,completed_at,assignee.name,assignee.email,due_on,due_at,start_on,\
projects.name,memberships.project.name,memberships.section.name,tags.name,parent.name,num_subtasks,followers.name,\
custom_fields.name,custom_fields.display_value,created_at,modified_at,permalink_url,resource_subtype";
const DEFAULT_MAX_CHARS: usize = 10_000;

/// The `data` of a response, and the whole body (for `next_page` and `raw`).
async fn fetch(up: &dyn Upstream, req: HttpRequest) -> Result<(Value, Value), ToolError> {
    let body = up.send(req).await?.json()?;
    Ok((body["data"].clone(), body))
}

/// Asana's `next_page.offset` is a JWT-shaped token; it travels base64url-wrapped so it stays an
/// opaque cursor (and is not mistaken for a credential on its way through the engine's scrubber).
fn next_cursor(body: &Value) -> Option<String> {
    body["next_page"]["offset"].as_str().filter(|o| !o.is_empty()).map(|o| base64url_encode(o.as_bytes()))
}

fn offset(cursor: &Option<String>) -> Result<Option<String>, ToolError> {
    let Some(c) = cursor else { return Ok(None) };
    base64_decode(c)
        .and_then(|b| String::from_utf8(b).ok())
        .filter(|o| !o.is_empty() && o.bytes().all(|b| b.is_ascii_graphic()))
        .map(Some)
        .ok_or_else(|| {
            invalid("/cursor", format!("cursor '{c}' is not one this tool issued"), "pass next_cursor back unchanged")
        })
}

fn gid(path: &str, value: &str) -> Result<String, ToolError> {
    let v = value.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(
            path,
            format!("'{value}' is not an Asana gid (a number like 1204567890123456)"),
            "expected a numeric gid",
        ));
    }
    Ok(encode_segment(v))
}

fn shape_task(t: &Value) -> Value {
    compact(json!({
        "gid": t["gid"],
        "name": t["name"],
        "completed": t["completed"],
        "assignee": t["assignee"]["name"],
        "due": t["due_at"].as_str().or(t["due_on"].as_str()),
        "modified": t["modified_at"],
        "url": t["permalink_url"],
    }))
}

// ---------------------------------------------------------------- workspaces and projects

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListWorkspaces {
    /// Workspaces per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
}

pub(crate) const LIST_WORKSPACES: ToolSpec = tool! {
    name: "asana_list_workspaces",
    effect: Read,
    results: Private,
    args: ListWorkspaces,
    run: list_workspaces,
    keywords: ["workspaces", "organizations", "org", "workspace gid", "companies"],
    description: "List the Asana workspaces and organizations the user belongs to, with the workspace gid other Asana tools need.",
};

async fn list_workspaces(up: Arc<dyn Upstream>, args: ListWorkspaces) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/workspaces")
        .query("opt_fields", "name,is_organization")
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("offset", offset(&args.cursor)?);
    let (data, body) = fetch(&*up, req).await?;
    let workspaces: Vec<Value> = data
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| compact(json!({ "gid": w["gid"], "name": w["name"], "is_organization": w["is_organization"] })))
        .collect();
    Ok(compact(json!({ "workspaces": workspaces, "next_cursor": next_cursor(&body) })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProjects {
    /// Workspace gid (from asana_list_workspaces).
    #[schemars(length(min = 1))]
    workspace: String,
    /// Only projects of this team gid.
    team: Option<String>,
    /// true for archived projects only; false (default) for active ones.
    #[serde(default)]
    archived: bool,
    /// Projects per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Asana's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "asana_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["projects", "boards", "portfolio", "project gid", "team projects"],
    description: "List Asana projects in a workspace (optionally one team's), active ones by default, with owner, team, due date and link.",
};

async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let workspace = gid("/workspace", &args.workspace)?;
    let team = args.team.as_deref().map(|t| gid("/team", t)).transpose()?;
    let req = HttpRequest::get("/projects")
        .query("workspace", workspace)
        .query_opt("team", team)
        .query("archived", args.archived)
        .query("opt_fields", "name,archived,owner.name,team.name,due_on,start_on,modified_at,permalink_url")
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("offset", offset(&args.cursor)?);
    let (data, body) = fetch(&*up, req).await?;
    let projects: Vec<Value> = data
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            compact(json!({
                "gid": p["gid"],
                "name": p["name"],
                "archived": p["archived"],
                "owner": p["owner"]["name"],
                "team": p["team"]["name"],
                "start_on": p["start_on"],
                "due_on": p["due_on"],
                "modified": p["modified_at"],
                "url": p["permalink_url"],
            }))
        })
        .collect();
    let shaped = compact(json!({ "projects": projects, "next_cursor": next_cursor(&body) }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

// ---------------------------------------------------------------- tasks

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTasks {
    /// Tasks of this project gid (from asana_list_projects).
    project: Option<String>,
    /// Tasks of this section gid (a column/heading inside a project).
    section: Option<String>,
    /// Tasks assigned to this user: "me", a user gid or an email; needs workspace.
    assignee: Option<String>,
    /// Workspace gid; required together with assignee.
    workspace: Option<String>,
    /// Also include completed tasks (default: only incomplete ones).
    #[serde(default)]
    include_completed: bool,
    /// Tasks per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Asana's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_TASKS: ToolSpec = tool! {
    name: "asana_list_tasks",
    effect: Read,
    results: Private,
    args: ListTasks,
    run: list_tasks,
    keywords: ["tasks", "to-dos", "todo list", "my tasks", "assigned to me", "open tasks", "section", "project tasks", "task list", "what's on my plate"],
    description: "List Asana tasks (to-dos) in a project or section, or the tasks assigned to someone (assignee \"me\" + workspace) — open ones by default — with assignee, due date and link.",
};

async fn list_tasks(up: Arc<dyn Upstream>, args: ListTasks) -> Result<Value, ToolError> {
    let by_assignee = args.assignee.is_some() || args.workspace.is_some();
    let chosen = [args.project.is_some(), args.section.is_some(), by_assignee].iter().filter(|b| **b).count();
    if chosen != 1 || (by_assignee && (args.assignee.is_none() || args.workspace.is_none())) {
        return Err(invalid(
            "",
            "give exactly one of: project, section, or assignee together with workspace",
            "expected project, section, or assignee + workspace",
        ));
    }
    let mut req = HttpRequest::get("/tasks");
    if let Some(p) = &args.project {
        req = req.query("project", gid("/project", p)?);
    }
    if let Some(s) = &args.section {
        req = req.query("section", gid("/section", s)?);
    }
    if let (Some(a), Some(w)) = (&args.assignee, &args.workspace) {
        req = req.query("assignee", a.trim()).query("workspace", gid("/workspace", w)?);
    }
    let req = req
        .query_opt("completed_since", (!args.include_completed).then_some("now"))
        .query("opt_fields", LIST_TASK_FIELDS)
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("offset", offset(&args.cursor)?);
    let (data, body) = fetch(&*up, req).await?;
    let tasks: Vec<Value> = data.as_array().into_iter().flatten().map(shape_task).collect();
    let shaped = compact(json!({ "tasks": tasks, "next_cursor": next_cursor(&body) }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SortBy {
    DueDate,
    CreatedAt,
    CompletedAt,
    ModifiedAt,
    Likes,
}

impl SortBy {
    fn as_str(self) -> &'static str {
        match self {
            SortBy::DueDate => "due_date",
            SortBy::CreatedAt => "created_at",
            SortBy::CompletedAt => "completed_at",
            SortBy::ModifiedAt => "modified_at",
            SortBy::Likes => "likes",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchTasks {
    /// Workspace gid to search in (from asana_list_workspaces).
    #[schemars(length(min = 1))]
    workspace: String,
    /// Words to find in task names and descriptions.
    text: Option<String>,
    /// Only tasks assigned to any of these users ("me", user gids or emails).
    assignee_any: Option<Vec<String>>,
    /// Only tasks in any of these project gids.
    projects_any: Option<Vec<String>>,
    /// true: only completed tasks; false: only incomplete ones; omit for both.
    completed: Option<bool>,
    /// Only tasks due before this date (YYYY-MM-DD), e.g. today's date for overdue work.
    due_on_before: Option<String>,
    /// Only tasks due after this date (YYYY-MM-DD).
    due_on_after: Option<String>,
    /// Order of results (default modified_at, newest first).
    sort_by: Option<SortBy>,
    /// Oldest/earliest first instead of newest first.
    #[serde(default)]
    sort_ascending: bool,
    /// How many tasks to return (1-100; search has no further pages, so narrow the query instead).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
}

pub(crate) const SEARCH_TASKS: ToolSpec = tool! {
    name: "asana_search_tasks",
    effect: Read,
    results: Private,
    args: SearchTasks,
    run: search_tasks,
    keywords: ["find tasks", "search", "overdue", "due soon", "text search", "filter tasks", "advanced search"],
    description: "Search Asana tasks in a workspace by text, assignee, project, due date and completion (advanced search; premium/paid workspaces only — free ones get a 402).",
};

async fn search_tasks(up: Arc<dyn Upstream>, args: SearchTasks) -> Result<Value, ToolError> {
    let workspace = gid("/workspace", &args.workspace)?;
    for (path, d) in [("/due_on_before", &args.due_on_before), ("/due_on_after", &args.due_on_after)] {
        if let Some(d) = d {
            check_date(path, d)?;
        }
    }
    let projects = match &args.projects_any {
        Some(p) => Some(p.iter().map(|p| gid("/projects_any", p)).collect::<Result<Vec<_>, _>>()?.join(",")),
        None => None,
    };
    let req = HttpRequest::get(format!("/workspaces/{workspace}/tasks/search"))
        .query_opt("text", args.text.as_deref())
        .query_opt("assignee.any", args.assignee_any.as_ref().map(|a| a.join(",")))
        .query_opt("projects.any", projects)
        .query_opt("completed", args.completed)
        .query_opt("due_on.before", args.due_on_before.as_deref())
        .query_opt("due_on.after", args.due_on_after.as_deref())
        .query_opt("sort_by", args.sort_by.map(SortBy::as_str))
        .query_opt("sort_ascending", args.sort_ascending.then_some(true))
        .query("opt_fields", LIST_TASK_FIELDS)
        .query("limit", args.limit.clamp(1, 100));
    let (data, _) = fetch(&*up, req).await.map_err(|e| match e {
        ToolError::Upstream { status: 402, message, retry_after } => ToolError::Upstream {
            status: 402,
            message: format!(
                "{message} — task search needs a premium (paid) Asana workspace; asana_list_tasks (by project, section or assignee) works on every plan"
            ),
            retry_after,
        },
        other => other,
    })?;
    let tasks: Vec<Value> = data.as_array().into_iter().flatten().map(shape_task).collect();
    let limited = tasks.len() as u32 >= args.limit;
    Ok(compact(json!({
        "tasks": tasks,
        "more_may_exist": limited.then_some(true),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetTask {
    /// The task's gid (the number in its URL, app.asana.com/0/<project>/<task_gid>).
    #[schemars(length(min = 1))]
    task_gid: String,
    /// Character budget for the description; longer ones are cut and truncated is set.
    #[serde_inline_default(DEFAULT_MAX_CHARS)]
    #[schemars(range(min = 50, max = 100000))]
    max_chars: usize,
    /// Also return Asana's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_TASK: ToolSpec = tool! {
    name: "asana_get_task",
    effect: Read,
    results: Private,
    args: GetTask,
    run: get_task,
    keywords: ["task details", "description", "notes", "subtasks", "assignee", "due date", "custom fields", "show task"],
    description: "Get one Asana task by gid: name, description (notes), assignee, due date, completion, projects and sections, tags, parent, subtask count, followers, custom fields and link.",
};

async fn get_task(up: Arc<dyn Upstream>, args: GetTask) -> Result<Value, ToolError> {
    let task_gid = gid("/task_gid", &args.task_gid)?;
    let (t, body) =
        fetch(&*up, HttpRequest::get(format!("/tasks/{task_gid}")).query("opt_fields", TASK_FIELDS)).await?;
    let (notes, truncated) = match t["notes"].as_str().filter(|n| !n.is_empty()) {
        Some(n) => {
            let (text, cut) = truncate_chars(n, args.max_chars);
            (Value::String(text), cut)
        }
        None => (Value::Null, false),
    };
    let names = |list: &Value| -> Option<Vec<Value>> {
        let v: Vec<Value> = list.as_array()?.iter().map(|x| x["name"].clone()).filter(|n| !n.is_null()).collect();
        (!v.is_empty()).then_some(v)
    };
    let sections: Vec<Value> = t["memberships"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let section = m["section"]["name"].as_str()?;
            Some(json!(match m["project"]["name"].as_str() {
                Some(p) => format!("{p} / {section}"),
                None => section.to_string(),
            }))
        })
        .collect();
    let custom: Map<String, Value> = t["custom_fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f["name"].as_str()?.to_string(), f["display_value"].clone())))
        .filter(|(_, v)| !v.is_null())
        .collect();
    let shaped = compact(json!({
        "gid": t["gid"],
        "name": t["name"],
        "type": t["resource_subtype"].as_str().filter(|s| *s != "default_task"),
        "completed": t["completed"],
        "completed_at": t["completed_at"],
        "assignee": t["assignee"]["name"],
        "assignee_email": t["assignee"]["email"],
        "start_on": t["start_on"],
        "due": t["due_at"].as_str().or(t["due_on"].as_str()),
        "notes": notes,
        "projects": names(&t["projects"]),
        "sections": (!sections.is_empty()).then_some(sections),
        "tags": names(&t["tags"]),
        "parent": t["parent"]["name"],
        "parent_gid": t["parent"]["gid"],
        "subtasks": t["num_subtasks"],
        "followers": names(&t["followers"]),
        "custom_fields": (!custom.is_empty()).then_some(Value::Object(custom)),
        "created": t["created_at"],
        "modified": t["modified_at"],
        "url": t["permalink_url"],
        "truncated": truncated.then_some(true),
    }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateTask {
    /// The task's name (title).
    #[schemars(length(min = 1))]
    name: String,
    /// Workspace gid; needed unless projects or parent is given.
    workspace: Option<String>,
    /// Project gids to put the task in.
    projects: Option<Vec<String>>,
    /// Make it a subtask of this task gid.
    parent: Option<String>,
    /// Assign to "me", a user gid or an email.
    assignee: Option<String>,
    /// Due date, YYYY-MM-DD (not together with due_at).
    due_on: Option<String>,
    /// Due date and time, ISO 8601 in UTC, e.g. 2026-12-01T17:00:00Z (not together with due_on).
    due_at: Option<String>,
    /// Description in plain text.
    notes: Option<String>,
    /// Followers (collaborators notified of changes): "me", user gids or emails.
    followers: Option<Vec<String>>,
}

pub(crate) const CREATE_TASK: ToolSpec = tool! {
    name: "asana_create_task",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateTask,
    run: create_task,
    keywords: ["add task", "new task", "to-do", "todo", "subtask", "assign", "create"],
    description: "Create an Asana task (to-do) in a workspace or project, or as a subtask, with description, assignee, due date and followers.",
};

async fn create_task(up: Arc<dyn Upstream>, args: CreateTask) -> Result<Value, ToolError> {
    if args.workspace.is_none() && args.projects.as_ref().is_none_or(Vec::is_empty) && args.parent.is_none() {
        return Err(invalid(
            "/workspace",
            "say where the task goes: workspace, projects or parent",
            "give workspace, projects or parent",
        ));
    }
    if args.due_on.is_some() && args.due_at.is_some() {
        return Err(invalid("/due_at", "give due_on or due_at, not both", "conflicts with due_on"));
    }
    if let Some(d) = &args.due_on {
        check_date("/due_on", d)?;
    }
    let mut data = Map::new();
    data.insert("name".into(), json!(args.name));
    if let Some(w) = &args.workspace {
        data.insert("workspace".into(), json!(gid("/workspace", w)?));
    }
    if let Some(p) = args.projects.as_ref().filter(|p| !p.is_empty()) {
        let ids = p.iter().map(|p| gid("/projects", p)).collect::<Result<Vec<_>, _>>()?;
        data.insert("projects".into(), json!(ids));
    }
    if let Some(p) = &args.parent {
        data.insert("parent".into(), json!(gid("/parent", p)?));
    }
    for (key, value) in
        [("assignee", &args.assignee), ("due_on", &args.due_on), ("due_at", &args.due_at), ("notes", &args.notes)]
    {
        if let Some(v) = value {
            data.insert(key.into(), json!(v));
        }
    }
    if let Some(f) = args.followers.as_ref().filter(|f| !f.is_empty()) {
        data.insert("followers".into(), json!(f));
    }
    let req = HttpRequest::post("/tasks").query("opt_fields", LIST_TASK_FIELDS).json(json!({ "data": data }));
    let (task, _) = fetch(&*up, req).await?;
    Ok(shape_task(&task))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateTask {
    /// The task's gid.
    #[schemars(length(min = 1))]
    task_gid: String,
    /// true marks the task complete (done); false reopens it.
    completed: Option<bool>,
    /// New name.
    #[schemars(length(min = 1))]
    name: Option<String>,
    /// New assignee: "me", a user gid or an email; "" unassigns.
    assignee: Option<String>,
    /// New due date, YYYY-MM-DD; "" clears the due date.
    due_on: Option<String>,
    /// New description (replaces the old one).
    notes: Option<String>,
}

pub(crate) const UPDATE_TASK: ToolSpec = tool! {
    name: "asana_update_task",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateTask,
    run: update_task,
    keywords: ["complete", "mark done", "finish", "close", "reopen", "rename", "reassign", "reschedule", "due date", "mark complete", "change due date"],
    description: "Update an Asana task: mark it complete (done) or incomplete, rename it, reassign it, reschedule its due date, or change its description.",
};

async fn update_task(up: Arc<dyn Upstream>, args: UpdateTask) -> Result<Value, ToolError> {
    let task_gid = gid("/task_gid", &args.task_gid)?;
    let mut data = Map::new();
    if let Some(c) = args.completed {
        data.insert("completed".into(), json!(c));
    }
    if let Some(n) = &args.name {
        data.insert("name".into(), json!(n));
    }
    if let Some(a) = &args.assignee {
        data.insert("assignee".into(), if a.trim().is_empty() { Value::Null } else { json!(a.trim()) });
    }
    if let Some(d) = &args.due_on {
        if d.is_empty() {
            data.insert("due_on".into(), Value::Null);
        } else {
            check_date("/due_on", d)?;
            data.insert("due_on".into(), json!(d));
        }
    }
    if let Some(n) = &args.notes {
        data.insert("notes".into(), json!(n));
    }
    if data.is_empty() {
        return Err(ToolError::invalid("nothing to change: give completed, name, assignee, due_on or notes"));
    }
    let req = HttpRequest::new(Method::Put, format!("/tasks/{task_gid}"))
        .query("opt_fields", LIST_TASK_FIELDS)
        .json(json!({ "data": data }));
    let (task, _) = fetch(&*up, req).await?;
    Ok(shape_task(&task))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The task's gid.
    #[schemars(length(min = 1))]
    task_gid: String,
    /// The comment in plain text (give this or html_text).
    text: Option<String>,
    /// The comment as Asana rich text, wrapped in <body>…</body>, e.g. "<body>Done, see <a href=\"https://x\">PR</a></body>".
    html_text: Option<String>,
    /// Pin the comment to the top of the task.
    #[serde(default)]
    is_pinned: bool,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "asana_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "note", "story", "mention", "update"],
    description: "Add a comment to an Asana task (plain text or Asana rich-text HTML), optionally pinned.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let task_gid = gid("/task_gid", &args.task_gid)?;
    let mut data = Map::new();
    match (&args.text, &args.html_text) {
        (Some(t), None) if !t.trim().is_empty() => {
            data.insert("text".into(), json!(t));
        }
        (None, Some(h)) if !h.trim().is_empty() => {
            data.insert("html_text".into(), json!(h));
        }
        _ => {
            return Err(invalid(
                "/text",
                "give the comment as text or as html_text (exactly one, not empty)",
                "give text or html_text",
            ));
        }
    }
    if args.is_pinned {
        data.insert("is_pinned".into(), json!(true));
    }
    let req = HttpRequest::post(format!("/tasks/{task_gid}/stories")).json(json!({ "data": data }));
    let (story, _) = fetch(&*up, req).await?;
    Ok(compact(json!({
        "gid": story["gid"],
        "task_gid": args.task_gid.trim(),
        "text": story["text"],
        "author": story["created_by"]["name"],
        "created": story["created_at"],
        "is_pinned": story["is_pinned"],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_and_labels() {
        assert_eq!(
            error_message(
                &json!({"errors": [{"message": "project: Not a recognized ID: 12", "help": "For more information..."}]})
            ),
            Some("project: Not a recognized ID: 12".into())
        );
        assert_eq!(
            user_label(&json!({"data": {"gid": "1", "name": "Ada", "email": "ada@x.test"}})),
            Some("Ada <ada@x.test>".into())
        );
        assert!(gid("/x", "12a").is_err());
        assert_eq!(gid("/x", " 120 ").unwrap(), "120");
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new()
            .json(serde_json::json!({"data": {"gid": "1", "email": "ann@acme.example", "workspaces": [{"gid": "w1"}]}}))
            .side(side);
        let s = s.unwrap();
        assert!(s.has_email("ann@acme.example"));
        assert!(s.has_id("1") && s.has_id("w1"));
        assert_eq!(reqs[0].path, "/users/me");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
