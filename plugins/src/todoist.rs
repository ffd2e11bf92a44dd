//! Todoist, unified API v1 (`https://api.todoist.com/api/v1`; the retired REST v2 answers 410 and
//! is never called): tasks (list, filter search, add or natural-language quick add, update,
//! complete), projects and comments. Bearer token; lists page with `cursor` / `next_cursor`.
//! Priorities are the API's 1 (normal) to 4 (urgent), which the apps show the other way round as
//! p4..p1; results carry both.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

pub static INTEGRATION: Integration = Integration {
    name: "todoist",
    display_name: "Todoist",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[Field {
            name: "token",
            label: "API token",
            secret: true,
            required: true,
            help: "Todoist → Settings → Integrations → Developer → API token (40 hex characters)",
        }],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/user"), label: user_label }),
        oauth: None,
    },
    // Single words here mark a query as naming Todoist (the product-word rule in docs/writing-an-integration.md: to-do, p1, today's tasks).
    keywords: &["todo", "todos", "to-do list", "todo list", "p1", "today's tasks", "errands", "gtd"],
    hosts: &[Host { key: "base_url", default_url: "https://api.todoist.com/api/v1" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit { requests: 1000, per_seconds: 900 },
    side: Some(flow_side),
    tools: &[LIST_TASKS, SEARCH_TASKS, CREATE_TASK, UPDATE_TASK, COMPLETE_TASK, LIST_PROJECTS, CREATE_COMMENT],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): `user` (`id`, `email`). Every task and comment stays in the user's Todoist (inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/user")).await?.json()?;
        crate::flow::side_from(&me, &["/email"], &["/id"])
    })
}

/// API v1 errors: `{"error": "...", "error_code": 478, "error_tag": "NOT_FOUND", "http_code": 404, ...}`;
/// plain-text ones are passed through by the engine.
fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error").and_then(Value::as_str)?;
    match body.pointer("/error_extra/argument").and_then(Value::as_str) {
        Some(arg) if !error.contains(arg) => Some(format!("{error} (argument: {arg})")),
        _ => Some(error.to_string()),
    }
}

fn user_label(body: &Value) -> Option<String> {
    match (body["full_name"].as_str(), body["email"].as_str()) {
        (Some(n), Some(e)) => Some(format!("{n} <{e}>")),
        (n, e) => n.or(e).map(str::to_string),
    }
}

const LIST_DESC_CHARS: usize = 500;

fn todoist_id(path: &str, value: &str) -> Result<String, ToolError> {
    let v = value.trim();
    if v.is_empty() || v.len() > 64 || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return Err(invalid(path, format!("'{value}' is not a Todoist id"), "expected an id such as 6X7rM8997g3RQmvh"));
    }
    Ok(encode_segment(v))
}

/// A due date as YYYY-MM-DD; words like "tomorrow" belong in due_string, and the error says so.
fn check_due_date(path: &str, value: &str) -> Result<(), ToolError> {
    check_date(path, value).map_err(|_| {
        invalid(
            path,
            format!("'{value}' is not a date in YYYY-MM-DD form (use due_string for words like \"tomorrow\")"),
            "expected YYYY-MM-DD",
        )
    })
}

/// API priority 4 is the app's p1 (urgent); 1 is p4 (normal).
fn priority_label(p: &Value) -> Option<String> {
    p.as_u64().filter(|p| (1..=4).contains(p)).map(|p| format!("p{}", 5 - p))
}

fn shape_task(t: &Value, desc_chars: usize) -> (Value, bool) {
    let (description, cut) = match t["description"].as_str().filter(|d| !d.is_empty()) {
        Some(d) => {
            let (text, cut) = truncate_chars(d, desc_chars);
            (Value::String(text), cut)
        }
        None => (Value::Null, false),
    };
    let due = &t["due"];
    let due = if due.is_object() {
        compact(json!({
            "date": due["datetime"].as_str().or(due["date"].as_str()),
            "string": due["string"],
            "timezone": due["timezone"],
            "recurring": due["is_recurring"].as_bool().filter(|r| *r),
        }))
    } else {
        Value::Null
    };
    let labels = t["labels"].as_array().filter(|l| !l.is_empty()).map(|_| t["labels"].clone());
    let shaped = compact(json!({
        "id": t["id"],
        "content": t["content"],
        "description": description,
        "project_id": t["project_id"],
        "section_id": t["section_id"],
        "parent_id": t["parent_id"],
        "due": due,
        "deadline": t["deadline"]["date"],
        "priority": t["priority"],
        "priority_label": priority_label(&t["priority"]),
        "labels": labels,
        "assignee_id": t["responsible_uid"],
        "completed": (t["checked"].as_bool() == Some(true)).then_some(true),
        "comments": t["note_count"].as_u64().filter(|n| *n > 0),
        "added_at": t["added_at"],
        "url": t["id"].as_str().map(|id| format!("https://app.todoist.com/app/task/{id}")),
    }));
    (shaped, cut)
}

fn shape_page(body: &Value, include_raw: bool) -> Value {
    let tasks: Vec<Value> =
        body["results"].as_array().into_iter().flatten().map(|t| shape_task(t, LIST_DESC_CHARS).0).collect();
    let shaped = compact(json!({
        "tasks": tasks,
        "next_cursor": body["next_cursor"].as_str().filter(|c| !c.is_empty()),
    }));
    with_raw(shaped, include_raw, body)
}

// ---------------------------------------------------------------- tasks

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListTasks {
    /// Only tasks of this project id (from todoist_list_projects).
    project_id: Option<String>,
    /// Only tasks of this section id.
    section_id: Option<String>,
    /// Only tasks with this label name (without the @).
    label: Option<String>,
    /// Tasks per page (1-200).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Todoist's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_TASKS: ToolSpec = tool! {
    name: "todoist_list_tasks",
    effect: Read,
    results: Private,
    args: ListTasks,
    run: list_tasks,
    keywords: ["to-dos", "todo list", "open tasks", "project tasks", "label", "section", "inbox", "today", "whats on my list", "my tasks", "list tasks"],
    description: "List active (open) Todoist tasks/to-dos, optionally in one project or section or with a label: content, due date, priority (p1-p4), labels and link.",
};

async fn list_tasks(up: Arc<dyn Upstream>, args: ListTasks) -> Result<Value, ToolError> {
    let project = args.project_id.as_deref().map(|p| todoist_id("/project_id", p)).transpose()?;
    let section = args.section_id.as_deref().map(|s| todoist_id("/section_id", s)).transpose()?;
    let req = HttpRequest::get("/tasks")
        .query_opt("project_id", project)
        .query_opt("section_id", section)
        .query_opt("label", args.label.as_deref().map(|l| l.trim_start_matches('@')))
        .query("limit", args.limit.clamp(1, 200))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    Ok(shape_page(&body, args.include_raw))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchTasks {
    /// A Todoist filter query, e.g. "today | overdue", "#Work & p1", "7 days", "@errands", "no date", "search: dentist".
    #[schemars(length(min = 1))]
    query: String,
    /// Language of the filter words when not English, e.g. "de", "fr", "ja".
    lang: Option<String>,
    /// Tasks per page (1-200).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Todoist's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_TASKS: ToolSpec = tool! {
    name: "todoist_search_tasks",
    effect: Read,
    results: Private,
    args: SearchTasks,
    run: search_tasks,
    keywords: ["today", "overdue", "today's tasks", "due this week", "filter", "p1", "find task", "search", "due today", "what's due"],
    description: "Find Todoist tasks with a Todoist filter query: \"today | overdue\", \"#Work & p1\", \"7 days\", \"@errands\", \"search: dentist\", \"assigned to: me\".",
};

async fn search_tasks(up: Arc<dyn Upstream>, args: SearchTasks) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/tasks/filter")
        .query("query", &args.query)
        .query_opt("lang", args.lang.as_deref())
        .query("limit", args.limit.clamp(1, 200))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    Ok(shape_page(&body, args.include_raw))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateTask {
    /// The task's title (Markdown allowed). With quick_add, the whole sentence to parse, e.g. "Call mum tomorrow 6pm #Family p2 @phone".
    #[schemars(length(min = 1))]
    content: String,
    /// Longer description (Markdown).
    description: Option<String>,
    /// Due date in words, e.g. "tomorrow 5pm", "next monday", "every weekday at 9am".
    due_string: Option<String>,
    /// Due date as YYYY-MM-DD (instead of due_string).
    due_date: Option<String>,
    /// Priority: 4 = urgent (p1 in the app), 3 = p2, 2 = p3, 1 = normal (p4, the default).
    #[schemars(range(min = 1, max = 4))]
    priority: Option<u8>,
    /// Project id (default: the Inbox).
    project_id: Option<String>,
    /// Section id within the project.
    section_id: Option<String>,
    /// Make it a subtask of this task id.
    parent_id: Option<String>,
    /// Label names (without @); unknown ones are created.
    labels: Option<Vec<String>>,
    /// Parse content like the app's Quick Add (dates, #project, @label, p1-p4 inside the text); only description may be given with it.
    #[serde(default)]
    quick_add: bool,
}

pub(crate) const CREATE_TASK: ToolSpec = tool! {
    name: "todoist_create_task",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateTask,
    run: create_task,
    keywords: ["add task", "new to-do", "remind me", "todo", "quick add", "natural language", "due tomorrow", "buy", "groceries", "shopping list"],
    description: "Add a Todoist task (to-do) with description, due date in words (\"tomorrow 5pm\", \"every monday\") or as a date, priority, project, section, parent and labels; or quick-add a whole sentence like \"Pay rent every 1st #Home p1\".",
};

async fn create_task(up: Arc<dyn Upstream>, args: CreateTask) -> Result<Value, ToolError> {
    if args.due_string.is_some() && args.due_date.is_some() {
        return Err(invalid("/due_date", "give due_string or due_date, not both", "conflicts with due_string"));
    }
    if let Some(d) = &args.due_date {
        check_due_date("/due_date", d)?;
    }
    if args.quick_add {
        let extra: Vec<&str> = [
            ("due_string", args.due_string.is_some()),
            ("due_date", args.due_date.is_some()),
            ("priority", args.priority.is_some()),
            ("project_id", args.project_id.is_some()),
            ("section_id", args.section_id.is_some()),
            ("parent_id", args.parent_id.is_some()),
            ("labels", args.labels.is_some()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| *name)
        .collect();
        if !extra.is_empty() {
            return Err(ToolError::InvalidArguments {
                message: format!(
                    "quick_add reads dates, #project, @labels and p1-p4 from content itself; drop {}",
                    extra.join(", ")
                ),
                problems: extra
                    .iter()
                    .map(|e| ArgProblem { path: format!("/{e}"), problem: "not used with quick_add".into() })
                    .collect(),
            });
        }
        let mut body = Map::new();
        body.insert("text".into(), json!(args.content));
        if let Some(d) = &args.description {
            body.insert("note".into(), json!(d));
        }
        let task = up.send(HttpRequest::post("/tasks/quick").json(Value::Object(body))).await?.json()?;
        return Ok(shape_task(&task, LIST_DESC_CHARS).0);
    }
    let mut body = Map::new();
    body.insert("content".into(), json!(args.content));
    for (key, value) in
        [("description", &args.description), ("due_string", &args.due_string), ("due_date", &args.due_date)]
    {
        if let Some(v) = value {
            body.insert(key.into(), json!(v));
        }
    }
    if let Some(p) = args.priority {
        body.insert("priority".into(), json!(p));
    }
    for (key, path, value) in [
        ("project_id", "/project_id", &args.project_id),
        ("section_id", "/section_id", &args.section_id),
        ("parent_id", "/parent_id", &args.parent_id),
    ] {
        if let Some(v) = value {
            body.insert(key.into(), json!(todoist_id(path, v)?));
        }
    }
    if let Some(l) = &args.labels {
        body.insert("labels".into(), json!(l.iter().map(|l| l.trim_start_matches('@')).collect::<Vec<_>>()));
    }
    let task = up.send(HttpRequest::post("/tasks").json(Value::Object(body))).await?.json()?;
    Ok(shape_task(&task, LIST_DESC_CHARS).0)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateTask {
    /// The task's id.
    #[schemars(length(min = 1))]
    task_id: String,
    /// New title.
    #[schemars(length(min = 1))]
    content: Option<String>,
    /// New description ("" clears it).
    description: Option<String>,
    /// New due date in words, e.g. "friday 3pm", "every month"; "no date" removes the due date.
    due_string: Option<String>,
    /// New due date as YYYY-MM-DD (instead of due_string).
    due_date: Option<String>,
    /// Priority: 4 = urgent (p1 in the app), 3 = p2, 2 = p3, 1 = normal (p4).
    #[schemars(range(min = 1, max = 4))]
    priority: Option<u8>,
    /// Replace the task's labels with these names ([] removes all).
    labels: Option<Vec<String>>,
}

pub(crate) const UPDATE_TASK: ToolSpec = tool! {
    name: "todoist_update_task",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateTask,
    run: update_task,
    keywords: ["edit task", "reschedule", "postpone", "change due date", "rename", "priority", "labels"],
    description: "Edit a Todoist task: change its content (title), description, due date (in words or as a date, or remove it), priority or labels.",
};

async fn update_task(up: Arc<dyn Upstream>, args: UpdateTask) -> Result<Value, ToolError> {
    let id = todoist_id("/task_id", &args.task_id)?;
    if args.due_string.is_some() && args.due_date.is_some() {
        return Err(invalid("/due_date", "give due_string or due_date, not both", "conflicts with due_string"));
    }
    if let Some(d) = &args.due_date {
        check_due_date("/due_date", d)?;
    }
    let mut body = Map::new();
    for (key, value) in [
        ("content", &args.content),
        ("description", &args.description),
        ("due_string", &args.due_string),
        ("due_date", &args.due_date),
    ] {
        if let Some(v) = value {
            body.insert(key.into(), json!(v));
        }
    }
    if let Some(p) = args.priority {
        body.insert("priority".into(), json!(p));
    }
    if let Some(l) = &args.labels {
        body.insert("labels".into(), json!(l.iter().map(|l| l.trim_start_matches('@')).collect::<Vec<_>>()));
    }
    if body.is_empty() {
        return Err(ToolError::invalid(
            "nothing to change: give content, description, due_string, due_date, priority or labels",
        ));
    }
    let task = up.send(HttpRequest::post(format!("/tasks/{id}")).json(Value::Object(body))).await?.json()?;
    Ok(shape_task(&task, LIST_DESC_CHARS).0)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CompleteTask {
    /// The task's id.
    #[schemars(length(min = 1))]
    task_id: String,
}

pub(crate) const COMPLETE_TASK: ToolSpec = tool! {
    name: "todoist_complete_task",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CompleteTask,
    run: complete_task,
    keywords: ["complete", "done", "check off", "finish", "close", "tick", "mark done", "mark complete"],
    description: "Mark a Todoist task done (check it off); a recurring task moves on to its next date instead.",
};

async fn complete_task(up: Arc<dyn Upstream>, args: CompleteTask) -> Result<Value, ToolError> {
    let id = todoist_id("/task_id", &args.task_id)?;
    up.send(HttpRequest::post(format!("/tasks/{id}/close"))).await?;
    Ok(json!({ "task_id": args.task_id.trim(), "completed": true }))
}

// ---------------------------------------------------------------- projects and comments

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProjects {
    /// Projects per page (1-200).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 200))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Todoist's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "todoist_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["projects", "lists", "inbox", "project id", "folders"],
    description: "List the user's Todoist projects (including the Inbox) with their ids, parent project, colour and favourite/shared flags.",
};

async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/projects")
        .query("limit", args.limit.clamp(1, 200))
        .query_opt("cursor", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let projects: Vec<Value> = body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let flag = |k: &str| (p[k].as_bool() == Some(true)).then_some(true);
            compact(json!({
                "id": p["id"],
                "name": p["name"],
                "parent_id": p["parent_id"],
                "color": p["color"],
                "inbox": flag("inbox_project"),
                "favorite": flag("is_favorite"),
                "shared": flag("is_shared"),
                "archived": flag("is_archived"),
                "view": p["view_style"],
                "url": p["id"].as_str().map(|id| format!("https://app.todoist.com/app/project/{id}")),
            }))
        })
        .collect();
    let shaped = compact(json!({
        "projects": projects,
        "next_cursor": body["next_cursor"].as_str().filter(|c| !c.is_empty()),
    }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateComment {
    /// The comment's text (Markdown).
    #[schemars(length(min = 1))]
    content: String,
    /// Comment on this task id (give this or project_id).
    task_id: Option<String>,
    /// Comment on this project id (give this or task_id).
    project_id: Option<String>,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "todoist_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "note", "add note", "reply"],
    description: "Add a comment (note) to a Todoist task or project.",
};

async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let mut body = Map::new();
    body.insert("content".into(), json!(args.content));
    match (&args.task_id, &args.project_id) {
        (Some(t), None) => {
            body.insert("task_id".into(), json!(todoist_id("/task_id", t)?));
        }
        (None, Some(p)) => {
            body.insert("project_id".into(), json!(todoist_id("/project_id", p)?));
        }
        _ => {
            return Err(invalid("/task_id", "give exactly one of task_id or project_id", "give task_id or project_id"));
        }
    }
    let c = up.send(HttpRequest::post("/comments").json(Value::Object(body))).await?.json()?;
    Ok(compact(json!({
        "id": c["id"],
        "task_id": c["item_id"].as_str().or(c["task_id"].as_str()),
        "project_id": c["project_id"],
        "content": c["content"],
        "posted_at": c["posted_at"],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockUpstream;

    /// list_tasks: the filters become query parameters (a label's `@` dropped, the limit capped at
    /// Todoist's 200), the page is shaped to the fields a person reads and the cursor comes back.
    #[test]
    fn list_tasks_builds_the_query_and_shapes_the_page() {
        let page = json!({
            "results": [{
                "id": "6X7rM8997g3RQmvh", "content": "Buy milk", "description": "", "priority": 4,
                "labels": ["errands"], "checked": false, "child_order": 3, "user_id": "1",
                "due": {"date": "2026-03-02", "string": "tomorrow", "is_recurring": false, "lang": "en"}
            }],
            "next_cursor": "c2"
        });
        let (out, requests) = MockUpstream::new()
            .json(page)
            .ok(&LIST_TASKS, json!({"project_id": "220474322", "label": "@errands", "limit": 500}));
        assert_eq!(requests.len(), 1);
        let req = &requests[0];
        assert_eq!((req.method, req.path.as_str(), req.body.clone()), (Method::Get, "/tasks", Body::None));
        let query: Vec<(&str, &str)> = req.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(query, [("project_id", "220474322"), ("label", "errands"), ("limit", "200")]);
        assert_eq!(
            out,
            json!({
                "tasks": [{
                    "id": "6X7rM8997g3RQmvh", "content": "Buy milk", "priority": 4,
                    "priority_label": "p1", "labels": ["errands"],
                    "due": {"date": "2026-03-02", "string": "tomorrow"},
                    "url": "https://app.todoist.com/app/task/6X7rM8997g3RQmvh"
                }],
                "next_cursor": "c2"
            })
        );
    }

    /// quick_add parses the sentence itself: a structured field beside it is refused before any
    /// request is sent, naming each extra argument; without one, the sentence goes to /tasks/quick.
    #[test]
    fn quick_add_refuses_structured_fields_and_posts_the_sentence() {
        let (result, requests) = MockUpstream::new()
            .call(&CREATE_TASK, json!({"content": "Pay rent every 1st #Home", "quick_add": true, "priority": 4}));
        let Err(ToolError::InvalidArguments { problems, .. }) = result else { panic!("{result:?}") };
        assert_eq!(problems.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["/priority"]);
        assert!(requests.is_empty());

        let (out, requests) = MockUpstream::new()
            .json(json!({"id": "7", "content": "Pay rent", "priority": 1}))
            .ok(&CREATE_TASK, json!({"content": "Pay rent every 1st #Home", "quick_add": true, "description": "flat"}));
        assert_eq!((requests[0].method, requests[0].path.as_str()), (Method::Post, "/tasks/quick"));
        assert_eq!(requests[0].body, Body::Json(json!({"text": "Pay rent every 1st #Home", "note": "flat"})));
        assert_eq!(out["priority_label"], "p4");
    }

    #[test]
    fn priorities_read_like_the_app() {
        assert_eq!(priority_label(&json!(4)).as_deref(), Some("p1"));
        assert_eq!(priority_label(&json!(1)).as_deref(), Some("p4"));
        assert_eq!(priority_label(&json!(0)), None);
    }

    #[test]
    fn v1_errors_name_the_argument() {
        assert_eq!(
            error_message(
                &json!({"error": "Invalid argument value", "error_code": 20, "error_extra": {"argument": "due_date"}, "error_tag": "INVALID_ARGUMENT_VALUE", "http_code": 400})
            ),
            Some("Invalid argument value (argument: due_date)".into())
        );
        assert_eq!(error_message(&json!({"error": "Task not found", "http_code": 404})), Some("Task not found".into()));
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) =
            MockUpstream::new().json(serde_json::json!({"id": "2671355", "email": "ann@acme.example"})).side(side);
        let s = s.unwrap();
        assert!(s.has_email("ann@acme.example") && s.has_id("2671355"));
        assert_eq!(reqs[0].path, "/user");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
