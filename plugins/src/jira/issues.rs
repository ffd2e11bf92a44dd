//! The issue tools: JQL search, one issue in full, create, update, and workflow transitions
//! (listed, and applied by target status name).

use super::*;

// ---------------------------------------------------------------- search

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchIssues {
    /// JQL query, e.g. `project = ENG AND status != Done AND assignee = currentUser() ORDER BY updated DESC` or `text ~ "login error"`. Unbounded queries are rejected by Jira: include a restriction such as a project.
    #[schemars(length(min = 1))]
    jql: String,
    /// Extra fields to return per issue besides key, summary, type, status, priority, assignee and updated, e.g. ["labels","duedate","customfield_10016"].
    fields: Option<Vec<String>>,
    /// Issues per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page of the same JQL.
    cursor: Option<String>,
    /// Also return Jira's full response as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const SEARCH_ISSUES: ToolSpec = tool! {
    name: "jira_search_issues",
    effect: Read,
    results: Private,
    args: SearchIssues,
    run: search_issues,
    keywords: ["jql", "find tickets", "query", "filter", "my issues", "open bugs", "backlog", "assigned to me", "stories", "list tickets", "open tickets", "search jira"],
    description: "Search Jira issues (tickets, bugs, stories, tasks, epics) with JQL, e.g. `project = ENG AND status != Done AND assignee = currentUser()`; returns key, summary, status, assignee, priority and type, page by page.",
};

pub(super) async fn search_issues(up: Arc<dyn Upstream>, args: SearchIssues) -> Result<Value, ToolError> {
    let extra: Vec<String> = args.fields.clone().unwrap_or_default();
    let mut fields: Vec<String> = SEARCH_FIELDS.iter().map(|s| s.to_string()).collect();
    fields.extend(extra.iter().filter(|f| !SEARCH_FIELDS.contains(&f.as_str())).cloned());
    let limit = args.limit.clamp(1, 100);
    let req = if args.jql.len() > LONG_JQL {
        let mut body = json!({ "jql": args.jql, "maxResults": limit, "fields": fields });
        if let Some(c) = &args.cursor {
            body["nextPageToken"] = json!(c);
        }
        HttpRequest::post("/rest/api/3/search/jql").json(body)
    } else {
        HttpRequest::get("/rest/api/3/search/jql")
            .query("jql", &args.jql)
            .query("maxResults", limit)
            .query("fields", fields.join(","))
            .query_opt("nextPageToken", args.cursor.as_deref())
    };
    let body = up.send(req).await?.json()?;
    let issues = body["issues"].as_array().cloned().unwrap_or_default();
    let root = issues.first().and_then(|i| site_root(&i["self"], &*up)).or_else(|| site_root(&Value::Null, &*up));
    let shaped: Vec<Value> = issues.iter().map(|i| shape_issue_summary(i, &root, &extra)).collect();
    let last = body["isLast"].as_bool().unwrap_or(true) || body["nextPageToken"].as_str().is_none();
    let out = compact(json!({
        "issues": shaped,
        "next_cursor": if last { Value::Null } else { body["nextPageToken"].clone() },
    }));
    Ok(with_raw(out, args.include_raw, &body))
}

// ---------------------------------------------------------------- get issue

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GetIssue {
    /// The issue key, e.g. PROJ-123 (the numeric issue id works too).
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Extra fields to include besides the standard ones, e.g. ["customfield_10016","fixVersions","environment"].
    fields: Option<Vec<String>>,
    /// Also return the most recent comments (up to 20; use jira_list_comments for more).
    #[serde(default)]
    include_comments: bool,
    /// Also return the workflow transitions available now (as jira_list_transitions does).
    #[serde(default)]
    include_transitions: bool,
    /// Character budget for the description (Markdown); longer text is cut and `truncated` is set.
    #[serde_inline_default(BODY_CHARS)]
    #[schemars(range(min = 50, max = 100000))]
    max_chars: usize,
    /// Also return Jira's full response as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_ISSUE: ToolSpec = tool! {
    name: "jira_get_issue",
    effect: Read,
    results: Private,
    args: GetIssue,
    run: get_issue,
    keywords: ["ticket", "bug", "story", "details", "description", "read issue", "PROJ-123", "show ticket", "issue details"],
    description: "Get one Jira issue (ticket/bug/story) by key such as PROJ-123: summary, status, assignee, reporter, priority, labels, parent/epic, sub-tasks, links and the description as Markdown; optionally comments and available transitions.",
};

pub(super) async fn get_issue(up: Arc<dyn Upstream>, args: GetIssue) -> Result<Value, ToolError> {
    let extra = args.fields.clone().unwrap_or_default();
    let mut fields: Vec<String> = ISSUE_FIELDS.iter().map(|s| s.to_string()).collect();
    if args.include_comments {
        fields.push("comment".into());
    }
    fields.extend(extra.iter().filter(|f| !fields.contains(f)).cloned().collect::<Vec<_>>());
    let req = HttpRequest::get(issue_path(&args.issue_key))
        .query("fields", fields.join(","))
        .query_opt("expand", args.include_transitions.then_some("transitions"));
    let issue = up.send(req).await?.json()?;
    let root = site_root(&issue["self"], &*up);
    let f = &issue["fields"];
    let (description, cut) = truncate_chars(&adf::to_markdown(&f["description"]), args.max_chars);
    let subtasks: Vec<Value> = f["subtasks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            compact(
                json!({"key": s["key"], "summary": s["fields"]["summary"], "status": s["fields"]["status"]["name"]}),
            )
        })
        .collect();
    let links: Vec<Value> = f["issuelinks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let (relation, other) = if l["outwardIssue"].is_object() {
                (&l["type"]["outward"], &l["outwardIssue"])
            } else {
                (&l["type"]["inward"], &l["inwardIssue"])
            };
            compact(json!({
                "relation": relation,
                "key": other["key"],
                "summary": other["fields"]["summary"],
                "status": other["fields"]["status"]["name"],
            }))
        })
        .collect();
    let names = |v: &Value| -> Value {
        let list: Vec<Value> = v.as_array().into_iter().flatten().map(|c| c["name"].clone()).collect();
        if list.is_empty() { Value::Null } else { Value::Array(list) }
    };
    let mut out = compact(json!({
        "key": issue["key"],
        "id": issue["id"],
        "url": browse_url(&root, &issue["key"]),
        "summary": f["summary"],
        "type": f["issuetype"]["name"],
        "status": f["status"]["name"],
        "status_category": f["status"]["statusCategory"]["name"],
        "resolution": f["resolution"]["name"],
        "priority": f["priority"]["name"],
        "assignee": person(&f["assignee"]),
        "reporter": person(&f["reporter"]),
        "project": f["project"]["key"],
        "parent": if f["parent"].is_object() {
            compact(json!({"key": f["parent"]["key"], "summary": f["parent"]["fields"]["summary"]}))
        } else { Value::Null },
        "labels": f["labels"].as_array().filter(|a| !a.is_empty()).map(|_| f["labels"].clone()),
        "components": names(&f["components"]),
        "created": f["created"],
        "updated": f["updated"],
        "due_date": f["duedate"],
        "description": (!description.is_empty()).then_some(description),
        "truncated": cut.then_some(true),
        "subtasks": (!subtasks.is_empty()).then_some(subtasks),
        "links": (!links.is_empty()).then_some(links),
    }));
    if args.include_comments {
        let comments = &f["comment"]["comments"];
        let all = comments.as_array().cloned().unwrap_or_default();
        let recent: Vec<Value> =
            all.iter().skip(all.len().saturating_sub(20)).map(|c| shape_comment(c, &root, &issue["key"])).collect();
        out["comments"] = Value::Array(recent);
        out["comment_count"] = f["comment"]["total"].clone();
    }
    if args.include_transitions {
        out["transitions"] =
            Value::Array(issue["transitions"].as_array().into_iter().flatten().map(shape_transition).collect());
    }
    let mut extras = Map::new();
    for name in &extra {
        if let Some(v) = f.get(name).filter(|v| !v.is_null()) {
            extras.insert(name.clone(), simple_field(v));
        }
    }
    if !extras.is_empty() {
        out["fields"] = Value::Object(extras);
    }
    Ok(with_raw(out, args.include_raw, &issue))
}

// ---------------------------------------------------------------- create / update

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateIssue {
    /// Key of the project to create the issue in, e.g. ENG (see jira_list_projects).
    #[schemars(length(min = 1))]
    project_key: String,
    /// One-line title (summary) of the issue.
    #[schemars(length(min = 1, max = 255))]
    summary: String,
    /// Issue type name as the project defines it, e.g. Task, Bug, Story, Epic or Sub-task.
    #[schemars(length(min = 1))]
    issue_type: String,
    /// Description in Markdown (headings, lists, code blocks, links, tables); converted to Jira's rich text.
    description: Option<String>,
    /// accountId of the assignee (from jira_search_users).
    assignee_account_id: Option<String>,
    /// Priority name, e.g. Highest, High, Medium, Low, Lowest.
    priority: Option<String>,
    /// Labels to set (no spaces inside a label).
    labels: Option<Vec<String>>,
    /// Key of the parent issue: the epic for a story/task, or the parent task for a sub-task.
    parent_key: Option<String>,
    /// Due date, YYYY-MM-DD.
    due_date: Option<String>,
    /// Component names to set.
    components: Option<Vec<String>>,
    /// Other fields by id, passed through as Jira expects them, e.g. {"customfield_10016": 5} for story points.
    fields: Option<Map<String, Value>>,
}

pub(crate) const CREATE_ISSUE: ToolSpec = tool! {
    name: "jira_create_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateIssue,
    run: create_issue,
    keywords: ["new ticket", "file a bug", "open issue", "create story", "task", "sub-task", "epic", "report"],
    description: "Create a Jira issue: a ticket, bug, story, task, epic or sub-task in a project, with a Markdown description, assignee, priority, labels, components, due date and parent (epic or parent task).",
};

pub(super) async fn create_issue(up: Arc<dyn Upstream>, args: CreateIssue) -> Result<Value, ToolError> {
    if let Some(d) = &args.due_date {
        check_date("/due_date", d)?;
    }
    let mut fields = args.fields.clone().unwrap_or_default();
    fields.insert("project".into(), json!({ "key": args.project_key.trim() }));
    fields.insert("summary".into(), json!(args.summary));
    fields.insert("issuetype".into(), json!({ "name": args.issue_type }));
    if let Some(d) = &args.description {
        fields.insert("description".into(), adf::from_markdown(d));
    }
    if let Some(a) = &args.assignee_account_id {
        fields.insert("assignee".into(), json!({ "accountId": a }));
    }
    if let Some(p) = &args.priority {
        fields.insert("priority".into(), json!({ "name": p }));
    }
    if let Some(l) = &args.labels {
        fields.insert("labels".into(), json!(l));
    }
    if let Some(p) = &args.parent_key {
        fields.insert("parent".into(), json!({ "key": p }));
    }
    if let Some(d) = &args.due_date {
        fields.insert("duedate".into(), json!(d));
    }
    if let Some(c) = &args.components {
        fields.insert("components".into(), Value::Array(c.iter().map(|n| json!({ "name": n })).collect()));
    }
    let created = up.send(HttpRequest::post("/rest/api/3/issue").json(json!({ "fields": fields }))).await?.json()?;
    let root = site_root(&created["self"], &*up);
    Ok(compact(json!({
        "key": created["key"],
        "id": created["id"],
        "url": browse_url(&root, &created["key"]),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UpdateIssue {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// New one-line title (summary).
    summary: Option<String>,
    /// New description in Markdown; replaces the whole description.
    description: Option<String>,
    /// accountId to assign the issue to (from jira_search_users).
    assignee_account_id: Option<String>,
    /// Remove the assignee (leave the issue unassigned).
    #[serde(default)]
    unassign: bool,
    /// New priority name, e.g. High.
    priority: Option<String>,
    /// Labels to add (others stay).
    labels_add: Option<Vec<String>>,
    /// Labels to remove.
    labels_remove: Option<Vec<String>>,
    /// New due date, YYYY-MM-DD; an empty string clears it.
    due_date: Option<String>,
    /// Other fields by id to set, passed through as Jira expects them, e.g. {"customfield_10016": 8}.
    fields: Option<Map<String, Value>>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "jira_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateIssue,
    run: update_issue,
    keywords: ["edit ticket", "assign", "unassign", "reassign", "change priority", "labels", "due date", "rename"],
    description: "Edit a Jira issue (ticket): change summary, Markdown description, priority, due date or custom fields, add/remove labels, and assign it to someone, reassign or unassign it. Use jira_transition_issue to change its status.",
};

pub(super) async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    if args.unassign && args.assignee_account_id.is_some() {
        return Err(invalid(
            "/unassign",
            "give either assignee_account_id or unassign, not both",
            "conflicts with assignee_account_id",
        ));
    }
    if let Some(d) = args.due_date.as_deref().filter(|d| !d.is_empty()) {
        check_date("/due_date", d)?;
    }
    let mut fields = args.fields.clone().unwrap_or_default();
    let mut changed: Vec<String> = fields.keys().cloned().collect();
    if let Some(s) = &args.summary {
        fields.insert("summary".into(), json!(s));
        changed.push("summary".into());
    }
    if let Some(d) = &args.description {
        fields.insert("description".into(), adf::from_markdown(d));
        changed.push("description".into());
    }
    if let Some(p) = &args.priority {
        fields.insert("priority".into(), json!({ "name": p }));
        changed.push("priority".into());
    }
    if let Some(d) = &args.due_date {
        fields.insert("duedate".into(), if d.is_empty() { Value::Null } else { json!(d) });
        changed.push("due_date".into());
    }
    let mut label_ops: Vec<Value> = Vec::new();
    for l in args.labels_add.iter().flatten() {
        label_ops.push(json!({ "add": l }));
    }
    for l in args.labels_remove.iter().flatten() {
        label_ops.push(json!({ "remove": l }));
    }
    if !label_ops.is_empty() {
        changed.push("labels".into());
    }
    let assignment =
        if args.unassign { Some(Value::Null) } else { args.assignee_account_id.clone().map(Value::String) };
    if fields.is_empty() && label_ops.is_empty() && assignment.is_none() {
        return Err(ToolError::invalid(
            "nothing to change: give at least one of summary, description, assignee_account_id, unassign, priority, labels_add, labels_remove, due_date or fields",
        ));
    }
    if !fields.is_empty() || !label_ops.is_empty() {
        let mut body = json!({});
        if !fields.is_empty() {
            body["fields"] = Value::Object(fields);
        }
        if !label_ops.is_empty() {
            body["update"] = json!({ "labels": label_ops });
        }
        up.send(HttpRequest::new(Method::Put, issue_path(&args.issue_key)).json(body)).await?;
    }
    if let Some(account) = assignment {
        let path = format!("{}/assignee", issue_path(&args.issue_key));
        up.send(HttpRequest::new(Method::Put, path).json(json!({ "accountId": account }))).await?;
        changed.push(if args.unassign { "unassigned".into() } else { "assignee".into() });
    }
    let root = site_root(&Value::Null, &*up);
    Ok(compact(json!({
        "key": args.issue_key,
        "updated": changed,
        "url": browse_url(&root, &json!(args.issue_key)),
    })))
}

// ---------------------------------------------------------------- transitions

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListTransitions {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
}

pub(super) fn shape_transition(t: &Value) -> Value {
    compact(json!({
        "id": t["id"],
        "name": t["name"],
        "to_status": t["to"]["name"],
        "to_category": t["to"]["statusCategory"]["name"],
    }))
}

pub(super) async fn fetch_transitions(up: &dyn Upstream, key: &str) -> Result<Vec<Value>, ToolError> {
    let body = up.send(HttpRequest::get(format!("{}/transitions", issue_path(key)))).await?.json()?;
    Ok(body["transitions"].as_array().cloned().unwrap_or_default())
}

pub(crate) const LIST_TRANSITIONS: ToolSpec = tool! {
    name: "jira_list_transitions",
    effect: Read,
    results: Private,
    args: ListTransitions,
    run: list_transitions,
    keywords: ["workflow", "status", "next status", "move", "available transitions", "possible statuses", "what status next", "allowed moves"],
    description: "List the workflow transitions (status moves such as Start Progress, Done, Reopen) currently available for a Jira issue, with the status each leads to.",
};

pub(super) async fn list_transitions(up: Arc<dyn Upstream>, args: ListTransitions) -> Result<Value, ToolError> {
    let transitions = fetch_transitions(&*up, &args.issue_key).await?;
    Ok(json!({
        "issue_key": args.issue_key,
        "transitions": transitions.iter().map(shape_transition).collect::<Vec<_>>(),
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TransitionIssue {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Where to move it: a transition id from jira_list_transitions (e.g. "31"), or the target status name (e.g. "Done", "In Progress") or transition name; names match case-insensitively.
    #[schemars(length(min = 1))]
    transition: String,
    /// A comment to add with the move, in Markdown.
    comment: Option<String>,
    /// Resolution name to set when closing, e.g. Done, Won't Do, Duplicate (only if the transition screen has it).
    resolution: Option<String>,
    /// Other fields the transition screen requires, by id, passed through as Jira expects them.
    fields: Option<Map<String, Value>>,
}

pub(crate) const TRANSITION_ISSUE: ToolSpec = tool! {
    name: "jira_transition_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: TransitionIssue,
    run: transition_issue,
    keywords: ["change status", "move to done", "close ticket", "resolve", "reopen", "in progress", "workflow", "mark done", "move ticket"],
    description: "Move a Jira issue (ticket) to another status, e.g. In Progress or Done: give a transition id or simply the target status name; optionally add a Markdown comment and a resolution.",
};

pub(super) async fn transition_issue(up: Arc<dyn Upstream>, args: TransitionIssue) -> Result<Value, ToolError> {
    let available = fetch_transitions(&*up, &args.issue_key).await?;
    let wanted = args.transition.trim();
    let found = available
        .iter()
        .find(|t| t["id"].as_str() == Some(wanted))
        .or_else(|| available.iter().find(|t| t["to"]["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(wanted))))
        .or_else(|| available.iter().find(|t| t["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(wanted))));
    let Some(found) = found else {
        let options: Vec<String> = available
            .iter()
            .map(|t| {
                format!(
                    "{} → {} (id {})",
                    t["name"].as_str().unwrap_or("?"),
                    t["to"]["name"].as_str().unwrap_or("?"),
                    t["id"].as_str().unwrap_or("?")
                )
            })
            .collect();
        let listed = if options.is_empty() { "none".to_string() } else { options.join(", ") };
        return Err(invalid(
            "/transition",
            format!("{} has no transition '{wanted}' from its current status; available: {listed}", args.issue_key),
            "not an available transition",
        ));
    };
    let mut body = json!({ "transition": { "id": found["id"] } });
    let mut fields = args.fields.clone().unwrap_or_default();
    if let Some(r) = &args.resolution {
        fields.insert("resolution".into(), json!({ "name": r }));
    }
    if !fields.is_empty() {
        body["fields"] = Value::Object(fields);
    }
    if let Some(c) = &args.comment {
        body["update"] = json!({ "comment": [{ "add": { "body": adf::from_markdown(c) } }] });
    }
    up.send(HttpRequest::post(format!("{}/transitions", issue_path(&args.issue_key))).json(body)).await?;
    let root = site_root(&Value::Null, &*up);
    Ok(compact(json!({
        "key": args.issue_key,
        "transition": { "id": found["id"], "name": found["name"] },
        "status": found["to"]["name"],
        "url": browse_url(&root, &json!(args.issue_key)),
    })))
}
