//! Sentry: organizations, projects, issue (error group) search and triage, events with their stack
//! traces and breadcrumbs, and releases. Bearer token; errors come as `{detail}`; lists page through
//! `Link` headers whose `rel="next"` part carries a `cursor` and says `results="true"` when there is
//! more. The host is `https://sentry.io` unless the connection names a region host or a self-hosted
//! Sentry (`base_url`); every path starts with `/api/0`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

mod event;

use event::shape_event;

pub static INTEGRATION: Integration = Integration {
    name: "sentry",
    display_name: "Sentry",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field {
                name: "token",
                label: "Auth token",
                secret: true,
                required: true,
                help: "Sentry → Settings → Account → Personal Tokens (sntryu_…) with org:read, project:read, event:read and event:write",
            },
            Field {
                name: "organization",
                label: "Default organization slug",
                secret: false,
                required: false,
                help: "The slug in your Sentry URLs (acme in acme.sentry.io); used when a tool is not given an organization",
            },
            Field {
                name: "base_url",
                label: "Sentry URL",
                secret: false,
                required: false,
                help: "Only for a data-region host or self-hosted Sentry, e.g. https://de.sentry.io or https://sentry.example.com (no /api/0)",
            },
        ],
        inject: Inject::Bearer("token"),
        identity: Some(Identity { request: || HttpRequest::get("/api/0/organizations/"), label: organizations_label }),
        oauth: None,
    },
    // Single words here mark a query as naming Sentry; generic ones ("errors") stay multi-word.
    keywords: &[
        "exceptions",
        "crash",
        "crashes",
        "stacktrace",
        "stack trace",
        "error tracking",
        "error monitoring",
        "unresolved errors",
        "production errors",
        "application errors",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://sentry.io" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_second(20),
    side: Some(flow_side),
    tools: &[LIST_ORGANIZATIONS, LIST_PROJECTS, SEARCH_ISSUES, GET_ISSUE, GET_EVENT, UPDATE_ISSUE, LIST_RELEASES],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): the organisations the token sees (`GET /api/0/organizations/`: each `slug` and `id`). Issue updates stay in the user's organisation (inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/api/0/organizations/")).await?.json()?;
        let mut side = crate::flow::Side::default();
        for o in me.as_array().into_iter().flatten() {
            for k in ["slug", "id"] {
                if let Some(v) = o[k].as_str() {
                    side.add_id(v);
                }
            }
        }
        if side.ids.is_empty() {
            return Err(crate::flow::undecided("Sentry listed no organisation"));
        }
        Ok(side)
    })
}

/// Sentry answers errors as `{"detail": "..."}` (sometimes `{"detail": {"message": ...}}`), and
/// validation errors as `{"field": ["problem", ...]}`.
fn error_message(body: &Value) -> Option<String> {
    match body.get("detail") {
        Some(Value::String(s)) => return Some(s.clone()),
        Some(d) => {
            if let Some(m) = d.get("message").and_then(Value::as_str) {
                return Some(m.to_string());
            }
        }
        None => {}
    }
    let fields: Vec<String> = body
        .as_object()?
        .iter()
        .filter_map(|(k, v)| {
            let msgs: Vec<&str> = v.as_array()?.iter().filter_map(Value::as_str).collect();
            (!msgs.is_empty()).then(|| format!("{k}: {}", msgs.join(" ")))
        })
        .collect();
    (!fields.is_empty()).then(|| fields.join("; "))
}

fn organizations_label(body: &Value) -> Option<String> {
    let slugs: Vec<&str> = body.as_array()?.iter().filter_map(|o| o["slug"].as_str()).collect();
    (!slugs.is_empty()).then(|| slugs.join(", "))
}

const DEFAULT_MAX_CHARS: usize = 10_000;

/// The organization slug from the arguments, else the connection's default.
fn organization(up: &dyn Upstream, given: Option<&str>) -> Result<String, ToolError> {
    let org = given.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).or_else(|| up.field("organization"));
    match org {
        Some(o) => Ok(encode_segment(o.trim())),
        None => Err(invalid(
            "/organization",
            "give organization (a slug from sentry_list_organizations); this Sentry connection has no default organization",
            "missing",
        )),
    }
}

/// The cursor of the `rel="next"` link when Sentry says it has results.
fn next_cursor(resp: &HttpResponse) -> Option<String> {
    let link = resp.header("link")?;
    for part in link.split('<').skip(1) {
        let Some((_, params)) = part.split_once('>') else { continue };
        let mut rel = None;
        let mut results = None;
        let mut cursor = None;
        for p in params.split(';') {
            let p = p.trim().trim_end_matches(',').trim();
            let Some((k, v)) = p.split_once('=') else { continue };
            let v = v.trim().trim_matches('"').to_string();
            match k.trim() {
                "rel" => rel = Some(v),
                "results" => results = Some(v),
                "cursor" => cursor = Some(v),
                _ => {}
            }
        }
        if rel.as_deref() == Some("next") {
            return if results.as_deref() == Some("true") { cursor.filter(|c| !c.is_empty()) } else { None };
        }
    }
    None
}

fn number(v: &Value) -> Value {
    match v {
        Value::String(s) => s.parse::<u64>().map(Value::from).unwrap_or_else(|_| v.clone()),
        _ => v.clone(),
    }
}

fn person(v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let kind = v["type"].as_str().unwrap_or("user");
    let name = v["name"].as_str().or(v["email"].as_str()).or(v["username"].as_str());
    match name {
        Some(n) if kind == "team" => Value::String(format!("team:{n}")),
        Some(n) => Value::String(n.to_string()),
        None => Value::Null,
    }
}

// ---------------------------------------------------------------- organizations and projects

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListOrganizations {
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_ORGANIZATIONS: ToolSpec = tool! {
    name: "sentry_list_organizations",
    effect: Read,
    results: Private,
    args: ListOrganizations,
    run: list_organizations,
    keywords: ["orgs", "organization slug", "accounts", "which sentry"],
    description: "List the Sentry organizations (orgs) this token can see, with their slugs — the organization argument every other Sentry tool needs.",
};

async fn list_organizations(up: Arc<dyn Upstream>, args: ListOrganizations) -> Result<Value, ToolError> {
    let resp = up.send(HttpRequest::get("/api/0/organizations/").query_opt("cursor", args.cursor.as_deref())).await?;
    let body = resp.json()?;
    let orgs: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            compact(json!({
                "slug": o["slug"],
                "name": o["name"],
                "id": o["id"],
                "status": o["status"]["id"],
                "created": o["dateCreated"],
                "url": o["links"]["organizationUrl"],
                "region_url": o["links"]["regionUrl"],
            }))
        })
        .collect();
    let shaped = compact(json!({ "organizations": orgs, "next_cursor": next_cursor(&resp) }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListProjects {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_PROJECTS: ToolSpec = tool! {
    name: "sentry_list_projects",
    effect: Read,
    results: Private,
    args: ListProjects,
    run: list_projects,
    keywords: ["apps", "services", "project slug", "platforms"],
    description: "List the projects (apps/services sending errors) in a Sentry organization: slug, numeric id, platform, teams and when they first received an event.",
};

async fn list_projects(up: Arc<dyn Upstream>, args: ListProjects) -> Result<Value, ToolError> {
    let org = organization(&*up, args.organization.as_deref())?;
    let req =
        HttpRequest::get(format!("/api/0/organizations/{org}/projects/")).query_opt("cursor", args.cursor.as_deref());
    let resp = up.send(req).await?;
    let body = resp.json()?;
    let projects: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let teams: Vec<&Value> = p["teams"].as_array().into_iter().flatten().map(|t| &t["slug"]).collect();
            compact(json!({
                "slug": p["slug"],
                "id": p["id"],
                "name": p["name"],
                "platform": p["platform"],
                "teams": (!teams.is_empty()).then_some(teams),
                "first_event": p["firstEvent"],
                "created": p["dateCreated"],
                "is_member": p["isMember"],
            }))
        })
        .collect();
    let shaped = compact(json!({ "projects": projects, "next_cursor": next_cursor(&resp) }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

// ---------------------------------------------------------------- issues

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum IssueSort {
    Date,
    New,
    Freq,
    User,
    Trends,
}

impl IssueSort {
    fn as_str(self) -> &'static str {
        match self {
            IssueSort::Date => "date",
            IssueSort::New => "new",
            IssueSort::Freq => "freq",
            IssueSort::User => "user",
            IssueSort::Trends => "trends",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchIssues {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// Sentry search query, e.g. "is:unresolved level:error", "TypeError checkout", "assigned:me", "release:1.2.0", "project:web". Default is:unresolved; an empty string returns every issue.
    #[serde_inline_default("is:unresolved".to_string())]
    query: String,
    /// Numeric project ids to restrict to (from sentry_list_projects); or put project:<slug> in query.
    project_ids: Option<Vec<String>>,
    /// Environment names to restrict to, e.g. ["production"].
    environments: Option<Vec<String>>,
    /// Time window of events to consider, e.g. "24h", "7d", "14d" (Sentry's default is 14d).
    stats_period: Option<String>,
    /// Order: date (last seen, default), new (first seen), freq (event count), user (users affected), trends.
    sort: Option<IssueSort>,
    /// Issues per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

fn shape_issue(i: &Value) -> Value {
    compact(json!({
        "id": i["id"],
        "short_id": i["shortId"],
        "title": i["title"],
        "culprit": i["culprit"],
        "level": i["level"],
        "status": i["status"],
        "substatus": i["substatus"],
        "priority": i["priority"],
        "project": i["project"]["slug"],
        "events": number(&i["count"]),
        "users": i["userCount"],
        "first_seen": i["firstSeen"],
        "last_seen": i["lastSeen"],
        "assigned_to": person(&i["assignedTo"]),
        "is_unhandled": i["isUnhandled"],
        "url": i["permalink"],
    }))
}

pub(crate) const SEARCH_ISSUES: ToolSpec = tool! {
    name: "sentry_search_issues",
    effect: Read,
    results: Private,
    args: SearchIssues,
    run: search_issues,
    keywords: ["errors", "exceptions", "crashes", "unresolved", "error groups", "bugs", "show errors", "list issues", "production errors", "what is breaking", "top errors", "most frequent errors", "what is crashing", "error list"],
    description: "Search Sentry issues (grouped application errors/exceptions/crashes, not tickets) in an organization with Sentry's query syntax; unresolved errors by default, newest first, with event and user counts.",
};

async fn search_issues(up: Arc<dyn Upstream>, args: SearchIssues) -> Result<Value, ToolError> {
    let org = organization(&*up, args.organization.as_deref())?;
    let mut req = HttpRequest::get(format!("/api/0/organizations/{org}/issues/")).query("query", &args.query);
    for p in args.project_ids.iter().flatten() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            return Err(invalid(
                "/project_ids",
                format!(
                    "project id '{p}' is not numeric; use the id from sentry_list_projects, or project:{p} in query"
                ),
                "expected numeric ids",
            ));
        }
        req = req.query("project", p);
    }
    for e in args.environments.iter().flatten() {
        req = req.query("environment", e);
    }
    let req = req
        .query_opt("statsPeriod", args.stats_period.as_deref())
        .query_opt("sort", args.sort.map(IssueSort::as_str))
        .query("limit", args.limit.clamp(1, 100))
        .query_opt("cursor", args.cursor.as_deref());
    let resp = up.send(req).await?;
    let body = resp.json()?;
    let issues: Vec<Value> = body.as_array().into_iter().flatten().map(shape_issue).collect();
    let shaped = compact(json!({
        "query": args.query,
        "issues": issues,
        "next_cursor": next_cursor(&resp),
    }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

/// The numeric id for `issue_id`; a short id (`PROJ-1Z`) is looked up through the issues list.
async fn resolve_issue_id(up: &dyn Upstream, org: &str, issue_id: &str) -> Result<String, ToolError> {
    let issue_id = issue_id.trim();
    if !issue_id.is_empty() && issue_id.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(issue_id.to_string());
    }
    if issue_id.is_empty() || !issue_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return Err(invalid(
            "/issue_id",
            format!("'{issue_id}' is neither a numeric issue id nor a short id like PROJ-1Z"),
            "expected 12345 or PROJ-1Z",
        ));
    }
    let req = HttpRequest::get(format!("/api/0/organizations/{org}/issues/"))
        .query("query", issue_id)
        .query("shortIdLookup", 1);
    let found = up.send(req).await?.json()?;
    found
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["shortId"].as_str().is_some_and(|s| s.eq_ignore_ascii_case(issue_id)))
        .and_then(|i| i["id"].as_str().map(str::to_string))
        .ok_or_else(|| ToolError::Upstream {
            status: 404,
            message: format!("Sentry has no issue with short id {issue_id} in this organization"),
            retry_after: None,
        })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetIssue {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// The issue's numeric id (e.g. "4509231234") or its short id as shown in Sentry (e.g. "WEB-1Z").
    #[schemars(length(min = 1))]
    issue_id: String,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_ISSUE: ToolSpec = tool! {
    name: "sentry_get_issue",
    effect: Read,
    results: Private,
    args: GetIssue,
    run: get_issue,
    keywords: ["error details", "exception", "crash", "first seen", "last seen", "users affected", "short id"],
    description: "Get one Sentry issue (error group) by numeric id or short id like PROJ-1Z: status, error type and message, event and affected-user counts, first/last seen, releases, assignee and link.",
};

async fn get_issue(up: Arc<dyn Upstream>, args: GetIssue) -> Result<Value, ToolError> {
    let org = organization(&*up, args.organization.as_deref())?;
    let id = resolve_issue_id(&*up, &org, &args.issue_id).await?;
    let issue = up.send(HttpRequest::get(format!("/api/0/organizations/{org}/issues/{id}/"))).await?.json()?;
    let mut shaped = shape_issue(&issue);
    let events_24h: Option<u64> = issue["stats"]["24h"]
        .as_array()
        .map(|points| points.iter().filter_map(|p| p.get(1).and_then(Value::as_u64)).sum());
    let extra = compact(json!({
        "error_type": issue["metadata"]["type"],
        "error_value": issue["metadata"]["value"],
        "in_file": issue["metadata"]["filename"],
        "in_function": issue["metadata"]["function"],
        "platform": issue["platform"],
        "issue_type": issue["issueType"],
        "events_last_24h": events_24h,
        "first_release": issue["firstRelease"]["version"],
        "last_release": issue["lastRelease"]["version"],
        "status_details": issue["statusDetails"].as_object().filter(|d| !d.is_empty()).map(|_| issue["statusDetails"].clone()),
        "comments": issue["numComments"],
        "user_reports": issue["userReportCount"],
        "tags": issue["tags"].as_array().map(|t| t.iter().filter_map(|t| t["key"].as_str()).collect::<Vec<_>>()),
    }));
    if let (Value::Object(o), Value::Object(e)) = (&mut shaped, extra) {
        o.extend(e);
    }
    Ok(with_raw(shaped, args.include_raw, &issue))
}

// ---------------------------------------------------------------- events

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetEvent {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// The issue's numeric id or short id (e.g. "WEB-1Z").
    #[schemars(length(min = 1))]
    issue_id: String,
    /// Which event: "latest" (default), "oldest", "recommended" (Sentry's pick of the most helpful), or a 32-character event id.
    #[serde_inline_default("latest".to_string())]
    event_id: String,
    /// Only consider events from this environment, e.g. "production".
    environment: Option<String>,
    /// How many breadcrumbs (the steps leading up to the error) to return, newest last (0-100).
    #[serde_inline_default(20)]
    #[schemars(range(min = 0, max = 100))]
    max_breadcrumbs: usize,
    /// Character budget for the stack traces; longer traces keep their most recent frames and set truncated.
    #[serde_inline_default(DEFAULT_MAX_CHARS)]
    #[schemars(range(min = 500, max = 100000))]
    max_chars: usize,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

fn check_event_id(id: &str) -> Result<(), ToolError> {
    let alias = matches!(id, "latest" | "oldest" | "recommended");
    let hex = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    let dashed = id.len() == 36 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if alias || hex || dashed {
        Ok(())
    } else {
        Err(invalid(
            "/event_id",
            format!("'{id}' is not latest, oldest, recommended or a 32-character event id"),
            "expected latest, oldest, recommended or an event id",
        ))
    }
}

pub(crate) const GET_EVENT: ToolSpec = tool! {
    name: "sentry_get_event",
    effect: Read,
    results: Private,
    args: GetEvent,
    run: get_event,
    keywords: ["stack trace", "stacktrace", "traceback", "exception", "breadcrumbs", "latest event", "crash report", "tags", "full traceback", "exception details"],
    description: "Get an event of a Sentry issue — the latest by default, or oldest, recommended or a specific event id — with its exception and stack trace (traceback), breadcrumbs, tags, request, user and release.",
};

async fn get_event(up: Arc<dyn Upstream>, args: GetEvent) -> Result<Value, ToolError> {
    check_event_id(&args.event_id)?;
    let org = organization(&*up, args.organization.as_deref())?;
    let id = resolve_issue_id(&*up, &org, &args.issue_id).await?;
    let req =
        HttpRequest::get(format!("/api/0/organizations/{org}/issues/{id}/events/{}/", encode_segment(&args.event_id)))
            .query_opt("environment", args.environment.as_deref());
    let event = up.send(req).await?.json()?;
    let mut shaped = shape_event(&event, args.max_breadcrumbs, args.max_chars);
    if let Value::Object(o) = &mut shaped {
        o.insert("issue_id".into(), Value::String(id));
    }
    Ok(with_raw(shaped, args.include_raw, &event))
}

// ---------------------------------------------------------------- triage

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum IssueStatus {
    Resolved,
    ResolvedInNextRelease,
    Unresolved,
    Ignored,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Priority {
    High,
    Medium,
    Low,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateIssue {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// The issue's numeric id or short id (e.g. "WEB-1Z").
    #[schemars(length(min = 1))]
    issue_id: String,
    /// New status: resolved (fixed now), resolved_in_next_release, unresolved (reopen), or ignored (archive/mute).
    status: Option<IssueStatus>,
    /// With status resolved: the release version the fix shipped in (e.g. "web@1.4.2"); later events from older releases will not reopen it.
    in_release: Option<String>,
    /// With status ignored: ignore for this many minutes, then it becomes unresolved again.
    #[schemars(range(min = 1))]
    ignore_minutes: Option<u32>,
    /// With status ignored: ignore until it happens this many more times.
    #[schemars(range(min = 1))]
    ignore_count: Option<u32>,
    /// Assign to a user or team: "user:<id>", "team:<id>", a username or an email; "" unassigns.
    assigned_to: Option<String>,
    /// Issue priority: high, medium or low.
    priority: Option<Priority>,
}

pub(crate) const UPDATE_ISSUE: ToolSpec = tool! {
    name: "sentry_update_issue",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateIssue,
    run: update_issue,
    keywords: ["resolve", "ignore", "archive", "reopen", "unresolve", "assign", "mute", "triage", "priority"],
    description: "Triage a Sentry issue (error): resolve it (now, in the next release or in a given release), ignore/archive it, reopen it, assign it to a user or team, or set its priority.",
};

async fn update_issue(up: Arc<dyn Upstream>, args: UpdateIssue) -> Result<Value, ToolError> {
    let mut body = Map::new();
    let mut details = Map::new();
    let wrong = |path: &str, problem: &str| invalid(path, problem.to_string(), problem);
    if let Some(v) = &args.in_release {
        if !matches!(args.status, Some(IssueStatus::Resolved)) {
            return Err(wrong("/in_release", "in_release goes with status resolved"));
        }
        details.insert("inRelease".into(), json!(v));
    }
    if args.ignore_minutes.is_some() || args.ignore_count.is_some() {
        if !matches!(args.status, Some(IssueStatus::Ignored)) {
            return Err(wrong("/status", "ignore_minutes and ignore_count go with status ignored"));
        }
        if let Some(m) = args.ignore_minutes {
            details.insert("ignoreDuration".into(), json!(m));
        }
        if let Some(c) = args.ignore_count {
            details.insert("ignoreCount".into(), json!(c));
        }
    }
    match args.status {
        Some(IssueStatus::Resolved) => {
            body.insert("status".into(), json!("resolved"));
        }
        Some(IssueStatus::ResolvedInNextRelease) => {
            body.insert("status".into(), json!("resolved"));
            details.insert("inNextRelease".into(), json!(true));
        }
        Some(IssueStatus::Unresolved) => {
            body.insert("status".into(), json!("unresolved"));
        }
        Some(IssueStatus::Ignored) => {
            body.insert("status".into(), json!("ignored"));
        }
        None => {}
    }
    if args.status.is_some() {
        body.insert("statusDetails".into(), Value::Object(details));
    }
    if let Some(a) = &args.assigned_to {
        body.insert("assignedTo".into(), json!(a.trim()));
    }
    if let Some(p) = args.priority {
        body.insert("priority".into(), json!(format!("{p:?}").to_lowercase()));
    }
    if body.is_empty() {
        return Err(ToolError::invalid("nothing to change: give status, assigned_to or priority"));
    }
    let org = organization(&*up, args.organization.as_deref())?;
    let id = resolve_issue_id(&*up, &org, &args.issue_id).await?;
    let req =
        HttpRequest::new(Method::Put, format!("/api/0/organizations/{org}/issues/{id}/")).json(Value::Object(body));
    let issue = up.send(req).await?.json()?;
    let mut shaped = shape_issue(&issue);
    if let Value::Object(o) = &mut shaped {
        o.insert("id".into(), Value::String(id));
        if let Some(d) = issue["statusDetails"].as_object().filter(|d| !d.is_empty()) {
            o.insert("status_details".into(), Value::Object(d.clone()));
        }
        o.insert("updated".into(), Value::Bool(true));
    }
    Ok(shaped)
}

// ---------------------------------------------------------------- releases

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListReleases {
    /// Organization slug (from sentry_list_organizations); defaults to the connection's organization.
    organization: Option<String>,
    /// Only releases of this numeric project id (from sentry_list_projects).
    project_id: Option<String>,
    /// Only versions starting with this text, e.g. "web@1.4".
    query: Option<String>,
    /// Releases per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Sentry's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_RELEASES: ToolSpec = tool! {
    name: "sentry_list_releases",
    effect: Read,
    results: Private,
    args: ListReleases,
    run: list_releases,
    keywords: ["versions", "deploys", "deployments", "release health", "new issues"],
    description: "List releases (versions) of a Sentry organization, newest first, with their deploys, commit counts, new issues and projects; filter by project or version prefix.",
};

async fn list_releases(up: Arc<dyn Upstream>, args: ListReleases) -> Result<Value, ToolError> {
    let org = organization(&*up, args.organization.as_deref())?;
    let req = HttpRequest::get(format!("/api/0/organizations/{org}/releases/"))
        .query_opt("project", args.project_id.as_deref())
        .query_opt("query", args.query.as_deref())
        .query("per_page", args.limit.clamp(1, 100))
        .query_opt("cursor", args.cursor.as_deref());
    let resp = up.send(req).await?;
    let body = resp.json()?;
    let releases: Vec<Value> = body
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let projects: Vec<&Value> = r["projects"].as_array().into_iter().flatten().map(|p| &p["slug"]).collect();
            let deploy = &r["lastDeploy"];
            compact(json!({
                "version": r["version"],
                "short_version": r["shortVersion"],
                "created": r["dateCreated"],
                "released": r["dateReleased"],
                "new_issues": r["newGroups"],
                "commits": r["commitCount"],
                "deploys": r["deployCount"],
                "last_deploy": deploy.is_object().then(|| compact(json!({
                    "environment": deploy["environment"],
                    "finished": deploy["dateFinished"],
                }))),
                "authors": r["authors"].as_array().map(|a| a.iter().filter_map(|p| p["name"].as_str().or(p["email"].as_str())).collect::<Vec<_>>()).filter(|a| !a.is_empty()),
                "projects": projects,
                "first_event": r["firstEvent"],
                "last_event": r["lastEvent"],
            }))
        })
        .collect();
    let shaped = compact(json!({ "releases": releases, "next_cursor": next_cursor(&resp) }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(link: &str) -> HttpResponse {
        HttpResponse { status: 200, headers: vec![("Link".into(), link.into())], body: Vec::new() }
    }

    #[test]
    fn link_header_gives_the_next_cursor_only_when_it_has_results() {
        let more = resp(
            "<https://sentry.io/api/0/organizations/acme/issues/?query=is%3Aunresolved%2Clevel&cursor=0:0:1>; rel=\"previous\"; results=\"false\"; cursor=\"0:0:1\", \
             <https://sentry.io/api/0/organizations/acme/issues/?query=is%3Aunresolved%2Clevel&cursor=0:25:0>; rel=\"next\"; results=\"true\"; cursor=\"0:25:0\"",
        );
        assert_eq!(next_cursor(&more).as_deref(), Some("0:25:0"));
        let last = resp(
            "<https://sentry.io/x/?cursor=0:0:1>; rel=\"previous\"; results=\"true\"; cursor=\"0:0:1\", <https://sentry.io/x/?cursor=0:50:0>; rel=\"next\"; results=\"false\"; cursor=\"0:50:0\"",
        );
        assert_eq!(next_cursor(&last), None);
    }

    #[test]
    fn validation_errors_are_joined() {
        assert_eq!(error_message(&json!({"detail": "Invalid token"})).as_deref(), Some("Invalid token"));
        assert_eq!(
            error_message(&json!({"status": ["\"bogus\" is not a valid choice."]})).as_deref(),
            Some("status: \"bogus\" is not a valid choice.")
        );
    }
}

#[cfg(test)]
mod flow_tests {
    use super::*;
    use crate::mock::MockUpstream;

    #[test]
    fn side_names_the_account() {
        let side = INTEGRATION.side.expect("a side lookup");
        let (s, reqs) = MockUpstream::new().json(serde_json::json!([{"id": "1", "slug": "acme"}])).side(side);
        let s = s.unwrap();
        assert!(s.has_id("acme") && s.has_id("1"));
        assert_eq!(reqs[0].path, "/api/0/organizations/");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
