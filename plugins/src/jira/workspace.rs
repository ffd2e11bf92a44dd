//! The tools around issues: comments (listed and added, Markdown as ADF), projects, people
//! search and sprints on a board.

use super::*;

// ---------------------------------------------------------------- comments

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum CommentOrder {
    #[default]
    OldestFirst,
    NewestFirst,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListComments {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// Comments per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
    /// oldest_first (default, reads like a conversation) or newest_first.
    #[serde(default)]
    order_by: CommentOrder,
}

pub(super) fn shape_comment(c: &Value, root: &Option<String>, key: &Value) -> Value {
    let (body, cut) = truncate_chars(&adf::to_markdown(&c["body"]), COMMENT_CHARS);
    let edited = c["updated"].is_string() && c["updated"] != c["created"];
    let url = match (root, key.as_str(), c["id"].as_str()) {
        (Some(r), Some(k), Some(id)) => json!(format!("{r}/browse/{k}?focusedCommentId={id}")),
        _ => Value::Null,
    };
    compact(json!({
        "id": c["id"],
        "author": c["author"]["displayName"],
        "created": c["created"],
        "updated": if edited { c["updated"].clone() } else { Value::Null },
        "body": body,
        "truncated": cut.then_some(true),
        "visibility": c["visibility"]["value"],
        "url": url,
    }))
}

pub(crate) const LIST_COMMENTS: ToolSpec = tool! {
    name: "jira_list_comments",
    effect: Read,
    results: Private,
    args: ListComments,
    run: list_comments,
    keywords: ["comments", "discussion", "replies", "conversation", "ticket comments", "read comments", "show comments"],
    description: "List the comments on a Jira issue (ticket), oldest or newest first, with author, date and the comment text as Markdown.",
};

pub(super) async fn list_comments(up: Arc<dyn Upstream>, args: ListComments) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let order = match args.order_by {
        CommentOrder::OldestFirst => "created",
        CommentOrder::NewestFirst => "-created",
    };
    let req = HttpRequest::get(format!("{}/comment", issue_path(&args.issue_key)))
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 100))
        .query("orderBy", order);
    let body = up.send(req).await?.json()?;
    let comments = body["comments"].as_array().cloned().unwrap_or_default();
    let root = comments.first().and_then(|c| site_root(&c["self"], &*up)).or_else(|| site_root(&Value::Null, &*up));
    let key = json!(args.issue_key);
    let shaped: Vec<Value> = comments.iter().map(|c| shape_comment(c, &root, &key)).collect();
    let next = start + comments.len() as u64;
    let total = body["total"].as_u64().unwrap_or(next);
    Ok(compact(json!({
        "issue_key": args.issue_key,
        "total": total,
        "comments": shaped,
        "next_cursor": (!comments.is_empty() && next < total).then(|| next.to_string()),
    })))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateComment {
    /// The issue key, e.g. PROJ-123.
    #[schemars(length(min = 1))]
    issue_key: String,
    /// The comment in Markdown (lists, code, links, tables work).
    #[schemars(length(min = 1))]
    body: String,
    /// Restrict visibility to members of this project role, e.g. Developers.
    visible_to_role: Option<String>,
    /// Restrict visibility to members of this group, e.g. jira-software-users.
    visible_to_group: Option<String>,
}

pub(crate) const CREATE_COMMENT: ToolSpec = tool! {
    name: "jira_create_comment",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateComment,
    run: create_comment,
    keywords: ["comment", "reply", "note", "add comment", "ticket update"],
    description: "Add a comment to a Jira issue (ticket), written in Markdown; optionally visible only to a project role or group.",
};

pub(super) async fn create_comment(up: Arc<dyn Upstream>, args: CreateComment) -> Result<Value, ToolError> {
    let mut body = json!({ "body": adf::from_markdown(&args.body) });
    match (&args.visible_to_role, &args.visible_to_group) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "/visible_to_group",
                "a comment can be restricted to a role or to a group, not both",
                "conflicts with visible_to_role",
            ));
        }
        (Some(role), None) => body["visibility"] = json!({ "type": "role", "value": role }),
        (None, Some(group)) => body["visibility"] = json!({ "type": "group", "value": group }),
        (None, None) => {}
    }
    let created =
        up.send(HttpRequest::post(format!("{}/comment", issue_path(&args.issue_key))).json(body)).await?.json()?;
    let root = site_root(&created["self"], &*up);
    let mut out = shape_comment(&created, &root, &json!(args.issue_key));
    if let Value::Object(o) = &mut out {
        o.remove("body");
        o.remove("truncated");
        o.insert("issue_key".into(), json!(args.issue_key));
    }
    Ok(out)
}

// ---------------------------------------------------------------- projects and people

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListProjects {
    /// Filter: text matched against project name and key (case-insensitive).
    query: Option<String>,
    /// Projects per page (1-100).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "jira_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["projects", "project key", "spaces", "boards"],
    description: "List the Jira projects you can see (key, name, type), optionally filtered by name or key; project keys are what JQL and jira_create_issue need.",
};

pub(super) async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let req = HttpRequest::get("/rest/api/3/project/search")
        .query_opt("query", args.query.as_deref())
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 100));
    let body = up.send(req).await?.json()?;
    let values = body["values"].as_array().cloned().unwrap_or_default();
    let projects: Vec<Value> = values
        .iter()
        .map(|p| {
            let managed = match p["style"].as_str() {
                Some("next-gen") => Some("team-managed"),
                Some("classic") => Some("company-managed"),
                _ => None,
            };
            compact(json!({
                "key": p["key"],
                "id": p["id"],
                "name": p["name"],
                "type": p["projectTypeKey"],
                "style": managed,
                "category": p["projectCategory"]["name"],
            }))
        })
        .collect();
    let next = start + values.len() as u64;
    let last = body["isLast"].as_bool().unwrap_or(values.is_empty());
    Ok(compact(json!({
        "projects": projects,
        "total": body["total"],
        "next_cursor": (!last && !values.is_empty()).then(|| next.to_string()),
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchUsers {
    /// Name, part of a name, or email address to look for.
    #[schemars(length(min = 1))]
    query: String,
    /// Most users to return (1-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
}

pub(crate) const SEARCH_USERS: ToolSpec = tool! {
    name: "jira_search_users",
    effect: Read,
    results: Private,
    args: SearchUsers,
    run: search_users,
    keywords: ["people", "user", "account id", "assignee", "mention", "find person", "colleague"],
    description: "Find Jira users (people) by name or email to get their accountId, which assigning issues and @-mentions need.",
};

pub(super) async fn search_users(up: Arc<dyn Upstream>, args: SearchUsers) -> Result<Value, ToolError> {
    let req = HttpRequest::get("/rest/api/3/user/search")
        .query("query", &args.query)
        .query("maxResults", args.limit.clamp(1, 100));
    let body = up.send(req).await?.json()?;
    let users: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| {
            compact(json!({
                "account_id": u["accountId"],
                "name": u["displayName"],
                "email": u["emailAddress"],
                "active": u["active"],
                "account_type": u["accountType"].as_str().filter(|t| *t != "atlassian"),
            }))
        })
        .collect();
    Ok(json!({ "users": users }))
}

// ---------------------------------------------------------------- sprints

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(super) enum SprintState {
    Active,
    Future,
    Closed,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ListSprints {
    /// Numeric id of the scrum board; give this or project_key.
    #[schemars(range(min = 1))]
    board_id: Option<u64>,
    /// Project key whose (first scrum) board to use when board_id is not known, e.g. ENG.
    project_key: Option<String>,
    /// Which sprints: any of active, future, closed. Default: active and future.
    state: Option<Vec<SprintState>>,
    /// Sprints per page (1-50).
    #[serde_inline_default(50)]
    #[schemars(range(min = 1, max = 50))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor.
    cursor: Option<String>,
}

pub(crate) const LIST_SPRINTS: ToolSpec = tool! {
    name: "jira_list_sprints",
    effect: Read,
    results: Private,
    args: ListSprints,
    run: list_sprints,
    keywords: ["sprint", "scrum", "board", "iteration", "active sprint", "agile", "current sprint", "sprints", "upcoming sprint", "sprint board"],
    description: "List the sprints (active, future or closed) of a Jira Software scrum board, by board id or project key, with dates and sprint goal.",
};

pub(super) async fn list_sprints(up: Arc<dyn Upstream>, args: ListSprints) -> Result<Value, ToolError> {
    let start = offset_cursor(&args.cursor)?;
    let mut board = Value::Null;
    let mut other_boards = Vec::new();
    let board_id = match (args.board_id, args.project_key.as_deref()) {
        (Some(id), None) => id,
        (None, Some(project)) => {
            let req = HttpRequest::get("/rest/agile/1.0/board").query("projectKeyOrId", project.trim());
            let boards = up.send(req).await?.json()?;
            let values = boards["values"].as_array().cloned().unwrap_or_default();
            let chosen = values
                .iter()
                .find(|b| b["type"] == "scrum")
                .or_else(|| values.iter().find(|b| b["type"] == "simple"))
                .or(values.first())
                .cloned()
                .ok_or_else(|| ToolError::Upstream {
                    status: 404,
                    message: format!("project {project} has no board you can see; sprints live on scrum boards"),
                    retry_after: None,
                })?;
            for b in &values {
                if b["id"] != chosen["id"] {
                    other_boards.push(compact(json!({"id": b["id"], "name": b["name"], "type": b["type"]})));
                }
            }
            board = compact(json!({"id": chosen["id"], "name": chosen["name"], "type": chosen["type"]}));
            chosen["id"].as_u64().ok_or_else(|| ToolError::Internal("board without a numeric id".into()))?
        }
        _ => {
            return Err(invalid("", "give exactly one of board_id or project_key", "expected board_id or project_key"));
        }
    };
    let states = args.state.clone().unwrap_or_else(|| vec![SprintState::Active, SprintState::Future]);
    let state_param: Vec<&str> = states
        .iter()
        .map(|s| match s {
            SprintState::Active => "active",
            SprintState::Future => "future",
            SprintState::Closed => "closed",
        })
        .collect();
    let req = HttpRequest::get(format!("/rest/agile/1.0/board/{board_id}/sprint"))
        .query("state", state_param.join(","))
        .query("startAt", start)
        .query("maxResults", args.limit.clamp(1, 50));
    let body = up.send(req).await?.json()?;
    let values = body["values"].as_array().cloned().unwrap_or_default();
    let sprints: Vec<Value> = values
        .iter()
        .map(|s| {
            compact(json!({
                "id": s["id"],
                "name": s["name"],
                "state": s["state"],
                "start": s["startDate"],
                "end": s["endDate"],
                "completed": s["completeDate"],
                "goal": s["goal"].as_str().filter(|g| !g.is_empty()),
            }))
        })
        .collect();
    let next = start + values.len() as u64;
    let last = body["isLast"].as_bool().unwrap_or(true);
    if board.is_null() {
        board = json!({ "id": board_id });
    }
    Ok(compact(json!({
        "board": board,
        "other_boards": (!other_boards.is_empty()).then_some(other_boards),
        "sprints": sprints,
        "next_cursor": (!last && !values.is_empty()).then(|| next.to_string()),
    })))
}
