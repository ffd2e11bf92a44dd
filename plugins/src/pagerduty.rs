//! PagerDuty REST API v2: incidents (list, read with their timeline, open, acknowledge/resolve/
//! reassign, notes), who is on call, and services. `Authorization: Token token=<key>` plus the v2
//! `Accept` header on every request; writes also carry `From: <login email>` (required with an
//! account-level key), taken from the connection's non-secret `email` field. Lists page with
//! `offset`/`more`. The Events API is not used: incidents are opened through REST so they are
//! attributed to a user.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::tool;

const ACCEPT: &str = "application/vnd.pagerduty+json;version=2";

pub static INTEGRATION: Integration = Integration {
    name: "pagerduty",
    display_name: "PagerDuty",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::ApiKey,
        fields: &[
            Field {
                name: "token",
                label: "REST API key",
                secret: true,
                required: true,
                help: "A user API key (My Profile → User Settings → Create API User Token) or an account key (Integrations → API Access Keys)",
            },
            Field {
                name: "email",
                label: "PagerDuty login email",
                secret: false,
                required: false,
                help: "Your PagerDuty login; sent as the From header on writes (needed with an account-level key)",
            },
            Field {
                name: "base_url",
                label: "API URL",
                secret: false,
                required: false,
                help: "Only for EU accounts: https://api.eu.pagerduty.com",
            },
        ],
        inject: Inject::Header { name: "Authorization", prefix: "Token token=", field: "token" },
        identity: Some(Identity { request: || pd(HttpRequest::get("/users/me")), label: user_label }),
        oauth: None,
    },
    // Single words here mark a query as naming PagerDuty; generic ones stay multi-word.
    keywords: &[
        "on call",
        "oncall",
        "page someone",
        "paging",
        "pager",
        "incident",
        "incidents",
        "outage",
        "escalation",
        "escalation policy",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://api.pagerduty.com" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(900),
    side: Some(flow_side),
    tools: &[LIST_INCIDENTS, GET_INCIDENT, CREATE_INCIDENT, UPDATE_INCIDENT, CREATE_NOTE, LIST_ONCALLS, LIST_SERVICES],
    error_message,
};

/// The user's side for the outbound-data guard (`shared/design/flows.md` section 2): `users/me` (`user.id`, `user.email`). Incidents and notes stay in the user's PagerDuty account (its responders are the user's organisation: inside).
fn flow_side(up: Arc<dyn Upstream>) -> BoxFuture<Result<crate::flow::Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(pd(HttpRequest::get("/users/me"))).await?.json()?;
        crate::flow::side_from(&me, &["/user/email"], &["/user/id"])
    })
}

/// `{"error": {"message": "Invalid Input Provided", "code": 2001, "errors": ["..."]}}`.
fn error_message(body: &Value) -> Option<String> {
    let err = body.get("error")?;
    if let Some(s) = err.as_str() {
        return Some(s.to_string());
    }
    let message = err.get("message").and_then(Value::as_str)?;
    let details: Vec<&str> =
        err.get("errors").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    Some(if details.is_empty() { message.to_string() } else { format!("{message}: {}", details.join("; ")) })
}

fn user_label(body: &Value) -> Option<String> {
    let user = body.get("user")?;
    match (user["name"].as_str(), user["email"].as_str()) {
        (Some(n), Some(e)) => Some(format!("{n} <{e}>")),
        (n, e) => n.or(e).map(str::to_string),
    }
}

/// Every request names the v2 API.
fn pd(req: HttpRequest) -> HttpRequest {
    req.header("Accept", ACCEPT)
}

/// Sends a write with `From: <email>` when the connection has one; a 400 without one says what to do.
async fn send_write(up: &dyn Upstream, req: HttpRequest) -> Result<Value, ToolError> {
    let email = up.field("email").filter(|e| !e.trim().is_empty());
    let req = match &email {
        Some(e) => pd(req).header("From", e.trim()),
        None => pd(req),
    };
    match up.send(req).await {
        Ok(resp) => resp.json(),
        Err(ToolError::Upstream { status: 400, message, retry_after }) if email.is_none() => Err(ToolError::Upstream {
            status: 400,
            message: format!(
                "{message} (this PagerDuty connection has no login email; writes with an account-level key need it as the From header: reconnect pagerduty and fill in the email)"
            ),
            retry_after,
        }),
        Err(e) => Err(e),
    }
}

fn parse_offset(cursor: &Option<String>) -> Result<u32, ToolError> {
    match cursor {
        None => Ok(0),
        Some(c) => c.parse::<u32>().map_err(|_| {
            invalid("/cursor", format!("cursor '{c}' is not one this tool issued"), "pass next_cursor back unchanged")
        }),
    }
}

fn next_cursor(body: &Value, offset: u32, returned: usize) -> Option<String> {
    (body["more"].as_bool() == Some(true) && returned > 0).then(|| (offset as usize + returned).to_string())
}

fn many(req: HttpRequest, key: &str, values: &Option<Vec<String>>) -> HttpRequest {
    values.iter().flatten().fold(req, |r, v| r.query(key, v))
}

fn check_id(path: &str, id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(invalid(
            path,
            format!("'{id}' is not a PagerDuty id (like PABC123) or incident number"),
            "expected an id such as PT4KHLK or 1234",
        ));
    }
    Ok(encode_segment(id))
}

fn summaries(list: &Value, key: &str) -> Option<Vec<Value>> {
    let v: Vec<Value> = list.as_array()?.iter().map(|a| a[key]["summary"].clone()).filter(|s| !s.is_null()).collect();
    (!v.is_empty()).then_some(v)
}

fn shape_incident(i: &Value) -> Value {
    compact(json!({
        "id": i["id"],
        "number": i["incident_number"],
        "title": i["title"],
        "status": i["status"],
        "urgency": i["urgency"],
        "priority": i["priority"]["summary"],
        "service": i["service"]["summary"],
        "service_id": i["service"]["id"],
        "assigned_to": summaries(&i["assignments"], "assignee"),
        "acknowledged_by": summaries(&i["acknowledgements"], "acknowledger"),
        "escalation_policy": i["escalation_policy"]["summary"],
        "created": i["created_at"],
        "last_status_change": i["last_status_change_at"],
        "alerts": i["alert_counts"]["all"],
        "incident_key": i["incident_key"],
        "url": i["html_url"],
    }))
}

// ---------------------------------------------------------------- incidents

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum IncidentStatus {
    Triggered,
    Acknowledged,
    Resolved,
}

impl IncidentStatus {
    fn as_str(self) -> &'static str {
        match self {
            IncidentStatus::Triggered => "triggered",
            IncidentStatus::Acknowledged => "acknowledged",
            IncidentStatus::Resolved => "resolved",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Urgency {
    High,
    Low,
}

impl Urgency {
    fn as_str(self) -> &'static str {
        match self {
            Urgency::High => "high",
            Urgency::Low => "low",
        }
    }
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListIncidents {
    /// Only these statuses; ["triggered","acknowledged"] for the open ones. Default: all.
    statuses: Option<Vec<IncidentStatus>>,
    /// Only incidents on these service ids (from pagerduty_list_services).
    service_ids: Option<Vec<String>>,
    /// Only these urgencies: high, low.
    urgencies: Option<Vec<Urgency>>,
    /// Only incidents assigned to these user ids.
    user_ids: Option<Vec<String>>,
    /// Start of the time window (ISO 8601, e.g. 2026-11-01T00:00:00Z). PagerDuty's default window is recent incidents.
    since: Option<String>,
    /// End of the time window (ISO 8601).
    until: Option<String>,
    /// Incidents per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return PagerDuty's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_INCIDENTS: ToolSpec = tool! {
    name: "pagerduty_list_incidents",
    effect: Read,
    results: Private,
    args: ListIncidents,
    run: list_incidents,
    keywords: ["open incidents", "outages", "alerts", "triggered", "acknowledged", "resolved", "pages", "what is on fire", "current incidents", "what paged"],
    description: "List PagerDuty incidents (outages/alerts that paged someone), newest first: open ones (triggered, acknowledged) or recent resolved ones, by service, urgency, assignee and date.",
};

async fn list_incidents(up: Arc<dyn Upstream>, args: ListIncidents) -> Result<Value, ToolError> {
    let offset = parse_offset(&args.cursor)?;
    let mut req = HttpRequest::get("/incidents");
    for s in args.statuses.iter().flatten() {
        req = req.query("statuses[]", s.as_str());
    }
    req = many(req, "service_ids[]", &args.service_ids);
    for u in args.urgencies.iter().flatten() {
        req = req.query("urgencies[]", u.as_str());
    }
    req = many(req, "user_ids[]", &args.user_ids);
    let req = req
        .query_opt("since", args.since.as_deref())
        .query_opt("until", args.until.as_deref())
        .query("sort_by", "created_at:desc")
        .query("limit", args.limit.clamp(1, 100))
        .query("offset", offset);
    let body = up.send(pd(req)).await?.json()?;
    let incidents: Vec<Value> = body["incidents"].as_array().into_iter().flatten().map(shape_incident).collect();
    let shaped = compact(json!({
        "next_cursor": next_cursor(&body, offset, incidents.len()),
        "incidents": incidents,
    }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetIncident {
    /// The incident id (e.g. "PT4KHLK") or its number (e.g. "1234").
    #[schemars(length(min = 1))]
    incident_id: String,
    /// Also return the timeline (important log entries: triggered, notified, acknowledged, escalated, resolved, notes).
    #[serde_inline_default(true)]
    include_log: bool,
    /// How many timeline entries to return (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    log_limit: u32,
    /// Also return PagerDuty's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const GET_INCIDENT: ToolSpec = tool! {
    name: "pagerduty_get_incident",
    effect: Read,
    results: Private,
    args: GetIncident,
    run: get_incident,
    keywords: ["incident details", "timeline", "log entries", "who acknowledged", "assignees", "outage"],
    description: "Get one PagerDuty incident by id or number: status, urgency, service, assignees, escalation policy, link, and its timeline (log entries: triggered, notified, acknowledged, escalated, resolved).",
};

async fn get_incident(up: Arc<dyn Upstream>, args: GetIncident) -> Result<Value, ToolError> {
    let id = check_id("/incident_id", &args.incident_id)?;
    let body = up.send(pd(HttpRequest::get(format!("/incidents/{id}")))).await?.json()?;
    let incident = &body["incident"];
    let mut shaped = shape_incident(incident);
    if let Some(desc) = incident["description"].as_str().filter(|d| Some(*d) != incident["title"].as_str()) {
        shaped["description"] = json!(truncate_chars(desc, 2_000).0);
    }
    if args.include_log {
        // The id from the response: a number given as incident_id is not a path id for log entries.
        let real_id = incident["id"].as_str().map(encode_segment).unwrap_or(id);
        let req = HttpRequest::get(format!("/incidents/{real_id}/log_entries"))
            .query("is_overview", "true")
            .query("limit", args.log_limit.clamp(1, 100));
        let log = up.send(pd(req)).await?.json()?;
        let entries: Vec<Value> = log["log_entries"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                compact(json!({
                    "time": e["created_at"],
                    "type": e["type"].as_str().map(|t| t.trim_end_matches("_log_entry")),
                    "summary": e["summary"],
                    "by": e["agent"]["summary"],
                    "channel": e["channel"]["type"],
                    "note": e["channel"]["summary"].as_str().filter(|_| e["type"] == "annotate_log_entry"),
                }))
            })
            .collect();
        shaped["timeline"] = Value::Array(entries);
        if log["more"].as_bool() == Some(true) {
            shaped["timeline_truncated"] = json!(true);
        }
    }
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateIncident {
    /// Short title of the incident, e.g. "Checkout API returning 500s".
    #[schemars(length(min = 1, max = 255))]
    title: String,
    /// The service to open it on (an id from pagerduty_list_services); its escalation policy decides who is paged.
    #[schemars(length(min = 1))]
    service_id: String,
    /// high (pages immediately, default per service) or low.
    urgency: Option<Urgency>,
    /// Longer description: what is happening, impact, links.
    details: Option<String>,
    /// Page this escalation policy instead of the service's default (not together with assignee_ids).
    escalation_policy_id: Option<String>,
    /// Assign (page) these user ids directly instead of the escalation policy.
    assignee_ids: Option<Vec<String>>,
    /// De-duplication key: a second incident with the same key on the service is rejected while this one is open.
    incident_key: Option<String>,
}

pub(crate) const CREATE_INCIDENT: ToolSpec = tool! {
    name: "pagerduty_create_incident",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateIncident,
    run: create_incident,
    keywords: ["page someone", "page on-call", "trigger", "open incident", "raise incident", "alert", "escalate", "wake up", "is down", "site down", "outage"],
    description: "Open (trigger) a PagerDuty incident on a service — this pages whoever is on call for it — with title, urgency, details, and optionally an escalation policy or specific assignees.",
};

async fn create_incident(up: Arc<dyn Upstream>, args: CreateIncident) -> Result<Value, ToolError> {
    if args.escalation_policy_id.is_some() && args.assignee_ids.as_ref().is_some_and(|a| !a.is_empty()) {
        return Err(invalid(
            "/assignee_ids",
            "give escalation_policy_id or assignee_ids, not both (PagerDuty pages one or the other)",
            "conflicts with escalation_policy_id",
        ));
    }
    let mut incident = Map::new();
    incident.insert("type".into(), json!("incident"));
    incident.insert("title".into(), json!(args.title));
    incident.insert("service".into(), json!({"id": args.service_id, "type": "service_reference"}));
    if let Some(u) = args.urgency {
        incident.insert("urgency".into(), json!(u.as_str()));
    }
    if let Some(d) = &args.details {
        incident.insert("body".into(), json!({"type": "incident_body", "details": d}));
    }
    if let Some(p) = &args.escalation_policy_id {
        incident.insert("escalation_policy".into(), json!({"id": p, "type": "escalation_policy_reference"}));
    }
    if let Some(ids) = args.assignee_ids.as_ref().filter(|a| !a.is_empty()) {
        incident.insert("assignments".into(), assignments(ids));
    }
    if let Some(k) = &args.incident_key {
        incident.insert("incident_key".into(), json!(k));
    }
    let req = HttpRequest::post("/incidents").json(json!({ "incident": incident }));
    let body = send_write(&*up, req).await?;
    Ok(shape_incident(&body["incident"]))
}

fn assignments(ids: &[String]) -> Value {
    Value::Array(ids.iter().map(|id| json!({"assignee": {"id": id, "type": "user_reference"}})).collect())
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum NewStatus {
    Acknowledged,
    Resolved,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateIncident {
    /// The incident id (e.g. "PT4KHLK").
    #[schemars(length(min = 1))]
    incident_id: String,
    /// acknowledged (ack: someone is on it, stops escalation) or resolved (fixed, closes it).
    status: Option<NewStatus>,
    /// With status resolved: a resolution note for the timeline.
    resolution: Option<String>,
    /// Reassign to these user ids (replaces the current assignees).
    assignee_ids: Option<Vec<String>>,
    /// Change urgency: high or low.
    urgency: Option<Urgency>,
    /// Escalate to this level of the incident's escalation policy (1 = first level).
    #[schemars(range(min = 1))]
    escalation_level: Option<u32>,
}

pub(crate) const UPDATE_INCIDENT: ToolSpec = tool! {
    name: "pagerduty_update_incident",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: UpdateIncident,
    run: update_incident,
    keywords: ["acknowledge", "ack", "resolve", "close", "reassign", "escalate", "urgency", "snooze"],
    description: "Update a PagerDuty incident: acknowledge (ack) or resolve it, reassign it to other users, change its urgency, or escalate it to another escalation level.",
};

async fn update_incident(up: Arc<dyn Upstream>, args: UpdateIncident) -> Result<Value, ToolError> {
    let id = check_id("/incident_id", &args.incident_id)?;
    let mut incident = Map::new();
    incident.insert("type".into(), json!("incident_reference"));
    match args.status {
        Some(NewStatus::Acknowledged) => {
            incident.insert("status".into(), json!("acknowledged"));
        }
        Some(NewStatus::Resolved) => {
            incident.insert("status".into(), json!("resolved"));
        }
        None => {}
    }
    if let Some(r) = &args.resolution {
        if !matches!(args.status, Some(NewStatus::Resolved)) {
            return Err(invalid("/resolution", "resolution goes with status resolved", "needs status resolved"));
        }
        incident.insert("resolution".into(), json!(r));
    }
    if let Some(ids) = args.assignee_ids.as_ref().filter(|a| !a.is_empty()) {
        incident.insert("assignments".into(), assignments(ids));
    }
    if let Some(u) = args.urgency {
        incident.insert("urgency".into(), json!(u.as_str()));
    }
    if let Some(l) = args.escalation_level {
        incident.insert("escalation_level".into(), json!(l));
    }
    if incident.len() == 1 {
        return Err(ToolError::invalid("nothing to change: give status, assignee_ids, urgency or escalation_level"));
    }
    let req = HttpRequest::new(Method::Put, format!("/incidents/{id}")).json(json!({ "incident": incident }));
    let body = send_write(&*up, req).await?;
    Ok(shape_incident(&body["incident"]))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateNote {
    /// The incident id (e.g. "PT4KHLK").
    #[schemars(length(min = 1))]
    incident_id: String,
    /// The note's text, e.g. "Rolled back deploy 1.4.2; error rate recovering".
    #[schemars(length(min = 1, max = 25000))]
    content: String,
}

pub(crate) const CREATE_NOTE: ToolSpec = tool! {
    name: "pagerduty_create_note",
    effect: Write,
    results: Private,
    audience: crate::flow::Audience::Own,
    args: CreateNote,
    run: create_note,
    keywords: ["note", "comment", "update", "timeline", "status update", "incident note"],
    description: "Add a note (comment/status update) to a PagerDuty incident's timeline.",
};

async fn create_note(up: Arc<dyn Upstream>, args: CreateNote) -> Result<Value, ToolError> {
    let id = check_id("/incident_id", &args.incident_id)?;
    let req = HttpRequest::post(format!("/incidents/{id}/notes")).json(json!({"note": {"content": args.content}}));
    let body = send_write(&*up, req).await?;
    let note = &body["note"];
    Ok(compact(json!({
        "id": note["id"],
        "incident_id": args.incident_id.trim(),
        "content": note["content"],
        "author": note["user"]["summary"],
        "created": note["created_at"],
    })))
}

// ---------------------------------------------------------------- on-call and services

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListOncalls {
    /// Only on-calls from these schedule ids.
    schedule_ids: Option<Vec<String>>,
    /// Only on-calls for these escalation policy ids.
    escalation_policy_ids: Option<Vec<String>>,
    /// Only these user ids.
    user_ids: Option<Vec<String>>,
    /// Start of the window (ISO 8601); default now.
    since: Option<String>,
    /// End of the window (ISO 8601); default now.
    until: Option<String>,
    /// Only the earliest on-call per policy, level and user (who is on call now rather than every future shift).
    #[serde_inline_default(true)]
    earliest: bool,
    /// Entries per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
}

pub(crate) const LIST_ONCALLS: ToolSpec = tool! {
    name: "pagerduty_list_oncalls",
    effect: Read,
    results: Private,
    args: ListOncalls,
    run: list_oncalls,
    keywords: ["who is on call", "on-call", "oncall", "rotation", "schedule", "shift", "escalation level", "primary"],
    description: "Who is on call in PagerDuty right now (or in a time window): users per escalation policy and level, with their schedule and shift start/end.",
};

async fn list_oncalls(up: Arc<dyn Upstream>, args: ListOncalls) -> Result<Value, ToolError> {
    let offset = parse_offset(&args.cursor)?;
    let mut req = HttpRequest::get("/oncalls");
    req = many(req, "schedule_ids[]", &args.schedule_ids);
    req = many(req, "escalation_policy_ids[]", &args.escalation_policy_ids);
    req = many(req, "user_ids[]", &args.user_ids);
    let req = req
        .query_opt("since", args.since.as_deref())
        .query_opt("until", args.until.as_deref())
        .query_opt("earliest", args.earliest.then_some("true"))
        .query("limit", args.limit.clamp(1, 100))
        .query("offset", offset);
    let body = up.send(pd(req)).await?.json()?;
    let oncalls: Vec<Value> = body["oncalls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            compact(json!({
                "user": o["user"]["summary"],
                "user_id": o["user"]["id"],
                "escalation_policy": o["escalation_policy"]["summary"],
                "escalation_policy_id": o["escalation_policy"]["id"],
                "level": o["escalation_level"],
                "schedule": o["schedule"]["summary"],
                "start": o["start"],
                "end": o["end"],
                "always_on_call": (o["start"].is_null() && o["end"].is_null()).then_some(true),
            }))
        })
        .collect();
    Ok(compact(json!({
        "next_cursor": next_cursor(&body, offset, oncalls.len()),
        "oncalls": oncalls,
    })))
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListServices {
    /// Only services whose name contains this text.
    query: Option<String>,
    /// Only services of these team ids.
    team_ids: Option<Vec<String>>,
    /// Services per page (1-100).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 100))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return PagerDuty's full payload under raw.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_SERVICES: ToolSpec = tool! {
    name: "pagerduty_list_services",
    effect: Read,
    results: Private,
    args: ListServices,
    run: list_services,
    keywords: ["services", "service id", "systems", "components", "applications"],
    description: "List PagerDuty services (the systems incidents are opened on) with their ids, status, escalation policy and teams; filter by name.",
};

async fn list_services(up: Arc<dyn Upstream>, args: ListServices) -> Result<Value, ToolError> {
    let offset = parse_offset(&args.cursor)?;
    let req =
        many(HttpRequest::get("/services").query_opt("query", args.query.as_deref()), "team_ids[]", &args.team_ids)
            .query("limit", args.limit.clamp(1, 100))
            .query("offset", offset);
    let body = up.send(pd(req)).await?.json()?;
    let services: Vec<Value> = body["services"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let teams: Vec<&Value> = s["teams"].as_array().into_iter().flatten().map(|t| &t["summary"]).collect();
            compact(json!({
                "id": s["id"],
                "name": s["name"],
                "description": s["description"].as_str().filter(|d| !d.is_empty()).map(|d| truncate_chars(d, 300).0),
                "status": s["status"],
                "escalation_policy": s["escalation_policy"]["summary"],
                "escalation_policy_id": s["escalation_policy"]["id"],
                "teams": (!teams.is_empty()).then_some(teams),
                "last_incident": s["last_incident_timestamp"],
                "url": s["html_url"],
            }))
        })
        .collect();
    let shaped = compact(json!({
        "next_cursor": next_cursor(&body, offset, services.len()),
        "services": services,
    }));
    Ok(with_raw(shaped, args.include_raw, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_include_the_details() {
        assert_eq!(
            error_message(
                &json!({"error": {"message": "Invalid Input Provided", "code": 2001, "errors": ["Title is required."]}})
            ),
            Some("Invalid Input Provided: Title is required.".into())
        );
        assert_eq!(error_message(&json!({"error": {"message": "Not Found", "code": 2100}})), Some("Not Found".into()));
        assert_eq!(error_message(&json!({"message": "x"})), None);
    }

    #[test]
    fn cursors_are_offsets_while_more_is_true() {
        assert_eq!(next_cursor(&json!({"more": true}), 25, 25), Some("50".into()));
        assert_eq!(next_cursor(&json!({"more": false}), 25, 10), None);
        assert!(parse_offset(&Some("x".into())).is_err());
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
            .json(serde_json::json!({"user": {"id": "PXPGF42", "email": "ann@acme.example"}}))
            .side(side);
        let s = s.unwrap();
        assert!(s.has_email("ann@acme.example") && s.has_id("PXPGF42"));
        assert_eq!(reqs[0].path, "/users/me");
        assert!(MockUpstream::new().json(serde_json::json!({})).side(side).0.is_err(), "no identity, no side");
        assert!(MockUpstream::new().error(ToolError::Network("down".into())).side(side).0.is_err());
    }
}

#[cfg(test)]
mod tool_tests;
