//! Google Calendar: events in a time window, one event, create/reschedule/cancel (with invitations
//! and Meet links), RSVP, free/busy (with the common free slots worked out), and the calendar list.
//! Times cross the boundary as RFC 3339 with offsets (or a local time plus an IANA `time_zone`);
//! all-day events use plain dates with an exclusive end, as Google does.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_inline_default::serde_inline_default;
use serde_json::{Value, json};

use crate::api::*;
mod flow;
mod times;

use crate::flow::Audience;
use crate::google::{self, format_datetime, invalid, now_secs, parse_datetime, require_datetime};
use crate::text::html_to_text;
use crate::tool;

use times::{event_span, event_time, free_slots};

pub static INTEGRATION: Integration = Integration {
    name: "google_calendar",
    display_name: "Google Calendar",
    version: "1.0.0",
    auth: AuthSpec {
        kind: AuthKind::OAuth2,
        fields: &[],
        inject: Inject::Bearer("token"),
        identity: Some(Identity {
            request: || HttpRequest::get("/users/me/calendarList/primary"),
            label: |b| b["id"].as_str().or(b["summary"].as_str()).map(str::to_string),
        }),
        oauth: Some(google::oauth(&[
            "https://www.googleapis.com/auth/calendar.events",
            "https://www.googleapis.com/auth/calendar.readonly",
        ])),
    },
    keywords: &[
        "calendar",
        "gcal",
        "google calendar",
        "meeting",
        "event",
        "invite",
        "schedule",
        "appointment",
        "agenda",
        "availability",
    ],
    hosts: &[Host { key: "base_url", default_url: "https://www.googleapis.com/calendar/v3" }],
    curl_proxy: crate::api::CurlProxy::Full,
    rate_limit: crate::api::RateLimit::per_minute(600),
    side: Some(flow::side),
    tools: &[
        LIST_EVENTS,
        GET_EVENT,
        CREATE_EVENT,
        UPDATE_EVENT,
        DELETE_EVENT,
        UPDATE_RSVP,
        GET_FREE_BUSY,
        LIST_CALENDARS,
    ],
    error_message: google::error_message,
};

fn events_path(calendar_id: &str) -> String {
    format!("/calendars/{}/events", encode_segment(calendar_id.trim()))
}

fn event_path(calendar_id: &str, event_id: &str) -> String {
    format!("{}/{}", events_path(calendar_id), encode_segment(event_id.trim()))
}

/// The user's own calendar, the default calendar id.
const PRIMARY: &str = "primary";

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum SendUpdates {
    #[default]
    All,
    ExternalOnly,
    None,
}

impl SendUpdates {
    fn api(self) -> &'static str {
        match self {
            SendUpdates::All => "all",
            SendUpdates::ExternalOnly => "externalOnly",
            SendUpdates::None => "none",
        }
    }
}

// ------------------------------------------------------------------------------------ shaping

fn when(t: &Value) -> Value {
    t["dateTime"].as_str().or(t["date"].as_str()).map(Value::from).unwrap_or(Value::Null)
}

fn who(p: &Value) -> Value {
    match (p["displayName"].as_str(), p["email"].as_str()) {
        (Some(n), Some(e)) => json!(format!("{n} <{e}>")),
        (None, Some(e)) => json!(e),
        (Some(n), None) => json!(n),
        _ => Value::Null,
    }
}

fn meet_link(e: &Value) -> Value {
    if let Some(l) = e["hangoutLink"].as_str() {
        return json!(l);
    }
    e["conferenceData"]["entryPoints"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["entryPointType"] == "video")
        .and_then(|p| p["uri"].as_str())
        .map(Value::from)
        .unwrap_or(Value::Null)
}

fn description(e: &Value, max_chars: usize) -> (Value, bool) {
    let Some(d) = e["description"].as_str() else { return (Value::Null, false) };
    let text = if d.contains('<') { html_to_text(d) } else { d.trim().to_string() };
    let (cut, truncated) = truncate_chars(&text, max_chars);
    (json!(cut), truncated)
}

/// An event as a person reads it; `detail` adds attendees, recurrence, reminders and times of change.
fn shape_event(e: &Value, detail: bool, max_chars: usize) -> Value {
    let attendees = e["attendees"].as_array();
    let me = attendees.and_then(|a| a.iter().find(|x| x["self"] == true));
    let (desc, cut) = description(e, max_chars);
    let mut out = compact(json!({
        "id": e["id"],
        "summary": e["summary"].as_str().unwrap_or("(no title)"),
        "status": e["status"].as_str().filter(|s| *s != "confirmed"),
        "start": when(&e["start"]),
        "end": when(&e["end"]),
        "all_day": e["start"]["date"].is_string().then_some(true),
        "time_zone": e["start"]["timeZone"],
        "location": e["location"],
        "organizer": who(&e["organizer"]),
        "my_response": me.and_then(|m| m["responseStatus"].as_str()),
        "meet_link": meet_link(e),
        "url": e["htmlLink"],
        "recurring_event_id": e["recurringEventId"],
        "description": desc,
        "truncated": cut.then_some(true),
    }));
    let Value::Object(o) = &mut out else { return out };
    if detail {
        if let Some(list) = attendees {
            let people: Vec<Value> = list
                .iter()
                .map(|a| {
                    compact(json!({
                        "email": a["email"],
                        "name": a["displayName"],
                        "response": a["responseStatus"],
                        "optional": a["optional"].as_bool().filter(|x| *x),
                        "organizer": a["organizer"].as_bool().filter(|x| *x),
                        "self": a["self"].as_bool().filter(|x| *x),
                        "comment": a["comment"],
                    }))
                })
                .collect();
            o.insert("attendees".into(), Value::Array(people));
        }
        for (k, v) in [
            ("recurrence", e["recurrence"].clone()),
            ("creator", who(&e["creator"])),
            ("created", e["created"].clone()),
            ("updated", e["updated"].clone()),
            ("visibility", e["visibility"].clone()),
            ("transparency", e["transparency"].clone()),
        ] {
            if !v.is_null() {
                o.insert(k.into(), v);
            }
        }
        if let Some(r) = e["reminders"].as_object() {
            let minutes: Vec<Value> = r
                .get("overrides")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|x| x["minutes"].clone())
                .collect();
            let reminders =
                if r.get("useDefault") == Some(&json!(true)) { json!("calendar default") } else { json!(minutes) };
            o.insert("reminders_minutes_before".into(), reminders);
        }
    } else if let Some(list) = attendees {
        o.insert("attendee_count".into(), json!(list.len()));
    }
    out
}

// -------------------------------------------------------------------------------------- list

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListEvents {
    /// Calendar id: "primary" (the user's own, default), an email address, or an id from google_calendar_list_calendars.
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// Window start, RFC 3339 with offset, e.g. "2026-03-02T00:00:00+01:00" (default: now). Events ending after it are included.
    time_min: Option<String>,
    /// Window end, RFC 3339 with offset, e.g. "2026-03-09T00:00:00+01:00". Events starting before it are included.
    time_max: Option<String>,
    /// Free-text search in title, description, location and attendees.
    query: Option<String>,
    /// IANA time zone for the returned times, e.g. "America/New_York" (default: the calendar's).
    time_zone: Option<String>,
    /// How many events to return (1-250).
    #[serde_inline_default(25)]
    #[schemars(range(min = 1, max = 250))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Google's event resources as `raw`.
    #[serde(default)]
    include_raw: bool,
}

const LIST_DESCRIPTION_CHARS: usize = 300;

pub(crate) const LIST_EVENTS: ToolSpec = tool! {
    name: "google_calendar_list_events",
    effect: Read,
    results: Private,
    args: ListEvents,
    run: list_events,
    keywords: ["agenda", "what's on my calendar", "meetings today", "upcoming events", "schedule", "this week", "appointments", "my calendar", "upcoming meetings", "what meetings"],
    description: "List Google Calendar events/meetings in a time window (default: from now), soonest first, with recurring events expanded: title, start/end, location, organizer, your response, Meet link; optional text search.",
};

async fn list_events(up: Arc<dyn Upstream>, args: ListEvents) -> Result<Value, ToolError> {
    let min = match &args.time_min {
        Some(t) => Some((require_datetime("/time_min", t)?, t.clone())),
        None => None,
    };
    if let Some(t) = &args.time_max {
        let max = require_datetime("/time_max", t)?;
        if let Some((m, _)) = &min
            && max <= *m
        {
            return Err(invalid("/time_max", "time_max must be after time_min"));
        }
    }
    // Without a start the list would begin at the calendar's first event years ago.
    let time_min = match (&min, &args.cursor) {
        (Some((_, t)), _) => Some(t.clone()),
        (None, None) => Some(format_datetime(now_secs(), 0)),
        (None, Some(_)) => None,
    };
    let req = HttpRequest::get(events_path(&args.calendar_id))
        .query("singleEvents", "true")
        .query("orderBy", "startTime")
        .query("maxResults", args.limit.clamp(1, 250))
        .query_opt("timeMin", time_min)
        .query_opt("timeMax", args.time_max.as_deref())
        .query_opt("q", args.query.as_deref().filter(|q| !q.trim().is_empty()))
        .query_opt("timeZone", args.time_zone.as_deref())
        .query_opt("pageToken", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let events: Vec<Value> =
        body["items"].as_array().into_iter().flatten().map(|e| shape_event(e, false, LIST_DESCRIPTION_CHARS)).collect();
    let mut out = compact(json!({
        "calendar": body["summary"],
        "time_zone": body["timeZone"],
        "events": events,
        "next_cursor": body["nextPageToken"],
    }));
    if args.include_raw {
        out["raw"] = body["items"].clone();
    }
    Ok(out)
}

// --------------------------------------------------------------------------------------- get

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetEvent {
    /// The event id (from google_calendar_list_events).
    #[schemars(length(min = 1))]
    event_id: String,
    /// Calendar id (default "primary").
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// IANA time zone for the returned times, e.g. "Europe/London".
    time_zone: Option<String>,
    /// Cut the description to this many characters (100-50000).
    #[serde_inline_default(MAX_CHARS)]
    #[schemars(range(min = 100, max = 50_000))]
    max_chars: usize,
    /// Also return Google's event resource as `raw`.
    #[serde(default)]
    include_raw: bool,
}

/// Characters of an event's description kept by default.
const MAX_CHARS: usize = 5_000;

pub(crate) const GET_EVENT: ToolSpec = tool! {
    name: "google_calendar_get_event",
    effect: Read,
    results: Private,
    args: GetEvent,
    run: get_event,
    keywords: ["meeting details", "who is attending", "attendees", "meet link", "event description", "invite details", "who accepted", "attendee responses"],
    description: "Get one Google Calendar event/meeting: attendees and their responses (accepted, declined), organizer, Meet/video link, description, recurrence and reminders.",
};

async fn get_event(up: Arc<dyn Upstream>, args: GetEvent) -> Result<Value, ToolError> {
    let req = HttpRequest::get(event_path(&args.calendar_id, &args.event_id)).query_opt("timeZone", args.time_zone);
    let e = up.send(req).await?.json()?;
    let mut out = shape_event(&e, true, args.max_chars);
    if args.include_raw {
        out["raw"] = e;
    }
    Ok(out)
}

// ------------------------------------------------------------------------------------ create

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateEvent {
    /// Event title.
    #[schemars(length(min = 1))]
    summary: String,
    /// Start: RFC 3339 with offset ("2026-03-02T09:00:00+01:00"), a local time with time_zone ("2026-03-02T09:00"), or a date for an all-day event ("2026-03-02").
    #[schemars(length(min = 1))]
    start: String,
    /// End, in the same form as start. All-day ends are exclusive: a one-day event on 2026-03-02 ends "2026-03-03".
    #[schemars(length(min = 1))]
    end: String,
    /// IANA time zone, e.g. "Europe/Berlin"; needed for local times and recurring events.
    time_zone: Option<String>,
    /// Calendar id.
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// The guests' email addresses.
    attendees: Option<Vec<String>>,
    /// Details or agenda (plain text).
    description: Option<String>,
    /// Place, address or room.
    location: Option<String>,
    /// Add a Google Meet link.
    #[serde(default)]
    add_meet_link: bool,
    /// Recurrence rules, e.g. ["RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10"].
    recurrence: Option<Vec<String>>,
    /// Popup reminders, minutes before the start, e.g. [10, 60] (default: the calendar's).
    reminders_minutes: Option<Vec<u32>>,
    /// Who gets an email: all (default), external_only (guests outside your organisation) or none.
    #[serde(default)]
    send_updates: SendUpdates,
}

fn attendee_list(path: &str, emails: &[String]) -> Result<Vec<Value>, ToolError> {
    emails
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let e = e.trim();
            if e.contains('@') && !e.contains([' ', ',', '<']) {
                Ok(json!({ "email": e }))
            } else {
                Err(invalid(&format!("{path}/{i}"), format!("'{e}' is not an email address")))
            }
        })
        .collect()
}

fn meet_request(up: &dyn Upstream) -> Value {
    json!({"createRequest": {"requestId": up.new_id(), "conferenceSolutionKey": {"type": "hangoutsMeet"}}})
}

pub(crate) const CREATE_EVENT: ToolSpec = tool! {
    name: "google_calendar_create_event",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::create_audience),
    args: CreateEvent,
    run: create_event,
    keywords: ["schedule meeting", "book", "add to calendar", "invite", "set up a call", "new event", "google meet", "block time"],
    description: "Create a Google Calendar event or meeting: title, start/end (or all-day dates), guests to invite, description, location, a Google Meet link, recurrence (RRULE) and reminders; sends the invitations.",
};

async fn create_event(up: Arc<dyn Upstream>, args: CreateEvent) -> Result<Value, ToolError> {
    let tz = args.time_zone.as_deref().filter(|t| !t.trim().is_empty());
    let (start, end) = event_span(&args.start, &args.end, tz)?;
    let recurring = args.recurrence.as_ref().is_some_and(|r| !r.is_empty());
    if recurring && tz.is_none() && start.get("date").is_none() {
        return Err(invalid(
            "/time_zone",
            "recurring events need time_zone (e.g. 'Europe/Berlin') so repeats follow daylight saving",
        ));
    }
    let mut body = json!({"summary": args.summary, "start": start, "end": end});
    if let Some(a) = &args.attendees {
        body["attendees"] = json!(attendee_list("/attendees", a)?);
    }
    if let Some(d) = &args.description {
        body["description"] = json!(d);
    }
    if let Some(l) = &args.location {
        body["location"] = json!(l);
    }
    if recurring {
        body["recurrence"] = json!(args.recurrence);
    }
    if let Some(m) = &args.reminders_minutes {
        let overrides: Vec<Value> = m.iter().map(|x| json!({"method": "popup", "minutes": x})).collect();
        body["reminders"] = json!({"useDefault": false, "overrides": overrides});
    }
    if args.add_meet_link {
        body["conferenceData"] = meet_request(&*up);
    }
    let req = HttpRequest::post(events_path(&args.calendar_id))
        .query("sendUpdates", args.send_updates.api())
        .query_opt("conferenceDataVersion", args.add_meet_link.then_some(1))
        .json(body);
    let e = up.send(req).await?.json()?;
    Ok(shape_event(&e, true, MAX_CHARS))
}

// ------------------------------------------------------------------------------------ update

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateEvent {
    /// The event id (from google_calendar_list_events). For one occurrence of a repeating event use that occurrence's id.
    #[schemars(length(min = 1))]
    event_id: String,
    /// Calendar id (default "primary").
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// New title.
    summary: Option<String>,
    /// New start (same forms as in google_calendar_create_event); give end too when rescheduling.
    start: Option<String>,
    /// New end.
    end: Option<String>,
    /// IANA time zone for local start/end times.
    time_zone: Option<String>,
    /// New description (replaces the old one).
    description: Option<String>,
    /// New location.
    location: Option<String>,
    /// Replace the whole guest list with these email addresses.
    attendees: Option<Vec<String>>,
    /// Invite these guests as well (email addresses); others keep their responses.
    add_attendees: Option<Vec<String>>,
    /// Take these guests off the event (email addresses).
    remove_attendees: Option<Vec<String>>,
    /// Add a Google Meet link.
    #[serde(default)]
    add_meet_link: bool,
    /// Who gets an email about the change: all (default), external_only or none.
    #[serde(default)]
    send_updates: SendUpdates,
}

pub(crate) const UPDATE_EVENT: ToolSpec = tool! {
    name: "google_calendar_update_event",
    effect: Write,
    results: Private,
    audience: Audience::Decide(flow::update_audience),
    args: UpdateEvent,
    run: update_event,
    keywords: ["reschedule", "move meeting", "rename event", "add guest", "remove attendee", "change time", "edit event"],
    description: "Change a Google Calendar event: reschedule (new start/end), rename, edit description or location, add or remove guests, add a Meet link; notifies guests by default.",
};

async fn update_event(up: Arc<dyn Upstream>, args: UpdateEvent) -> Result<Value, ToolError> {
    let tz = args.time_zone.as_deref().filter(|t| !t.trim().is_empty());
    let mut body = json!({});
    match (&args.start, &args.end) {
        (Some(s), Some(e)) => {
            let (s, e) = event_span(s, e, tz)?;
            body["start"] = s;
            body["end"] = e;
        }
        (Some(s), None) => body["start"] = event_time("/start", s, tz)?.0,
        (None, Some(e)) => body["end"] = event_time("/end", e, tz)?.0,
        (None, None) => {}
    }
    for (k, v) in [("summary", &args.summary), ("description", &args.description), ("location", &args.location)] {
        if let Some(v) = v {
            body[k] = json!(v);
        }
    }
    let adding = args.add_attendees.as_ref().is_some_and(|a| !a.is_empty());
    let removing = args.remove_attendees.as_ref().is_some_and(|a| !a.is_empty());
    if args.attendees.is_some() && (adding || removing) {
        return Err(invalid(
            "/attendees",
            "give either attendees (the whole new list) or add_attendees/remove_attendees",
        ));
    }
    if let Some(a) = &args.attendees {
        body["attendees"] = json!(attendee_list("/attendees", a)?);
    }
    if adding || removing {
        let add = attendee_list("/add_attendees", args.add_attendees.as_deref().unwrap_or_default())?;
        let remove: Vec<String> =
            args.remove_attendees.iter().flatten().map(|e| e.trim().to_ascii_lowercase()).collect();
        let current = up.send(HttpRequest::get(event_path(&args.calendar_id, &args.event_id))).await?.json()?;
        let mut list: Vec<Value> = current["attendees"].as_array().cloned().unwrap_or_default();
        let email = |a: &Value| a["email"].as_str().unwrap_or("").to_ascii_lowercase();
        for (i, r) in remove.iter().enumerate() {
            if !list.iter().any(|a| &email(a) == r) {
                return Err(invalid(&format!("/remove_attendees/{i}"), format!("{r} is not a guest of this event")));
            }
        }
        list.retain(|a| !remove.contains(&email(a)));
        for a in add {
            if !list.iter().any(|x| email(x) == email(&a)) {
                list.push(a);
            }
        }
        body["attendees"] = Value::Array(list);
    }
    if args.add_meet_link {
        body["conferenceData"] = meet_request(&*up);
    }
    if body.as_object().is_some_and(|b| b.is_empty()) {
        return Err(invalid(
            "",
            "nothing to change: give summary, start/end, description, location, attendees or add_meet_link",
        ));
    }
    let req = HttpRequest::new(Method::Patch, event_path(&args.calendar_id, &args.event_id))
        .query("sendUpdates", args.send_updates.api())
        .query_opt("conferenceDataVersion", args.add_meet_link.then_some(1))
        .json(body);
    let e = up.send(req).await?.json()?;
    Ok(shape_event(&e, true, MAX_CHARS))
}

// ------------------------------------------------------------------------------------ delete

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteEvent {
    /// The event id.
    #[schemars(length(min = 1))]
    event_id: String,
    /// Calendar id (default "primary").
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// Who gets a cancellation email: all (default), external_only or none.
    #[serde(default)]
    send_updates: SendUpdates,
}

pub(crate) const DELETE_EVENT: ToolSpec = tool! {
    name: "google_calendar_delete_event",
    effect: Destructive,
    results: Private,
    audience: Audience::Own,
    args: DeleteEvent,
    run: delete_event,
    keywords: ["cancel meeting", "remove event", "delete appointment", "call off"],
    description: "Cancel (delete) a Google Calendar event or meeting, optionally notifying the guests.",
};

async fn delete_event(up: Arc<dyn Upstream>, args: DeleteEvent) -> Result<Value, ToolError> {
    let req = HttpRequest::new(Method::Delete, event_path(&args.calendar_id, &args.event_id))
        .query("sendUpdates", args.send_updates.api());
    up.send(req).await?;
    Ok(json!({"event_id": args.event_id, "deleted": true, "guests_notified": args.send_updates.api()}))
}

// -------------------------------------------------------------------------------------- rsvp

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Response {
    Accepted,
    Declined,
    Tentative,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdateRsvp {
    /// The event id of the invitation.
    #[schemars(length(min = 1))]
    event_id: String,
    /// accepted (yes), declined (no) or tentative (maybe).
    response: Response,
    /// Calendar id (default "primary").
    #[serde_inline_default(PRIMARY.to_string())]
    calendar_id: String,
    /// A note to the organizer, e.g. "Running 10 minutes late".
    comment: Option<String>,
    /// Whether the organizer is emailed: all (default), external_only or none.
    #[serde(default)]
    send_updates: SendUpdates,
}

pub(crate) const UPDATE_RSVP: ToolSpec = tool! {
    name: "google_calendar_update_rsvp",
    effect: Write,
    results: Private,
    audience: Audience::Own,
    args: UpdateRsvp,
    run: update_rsvp,
    keywords: ["accept invitation", "decline meeting", "maybe", "tentative", "respond to invite", "rsvp", "accept invite", "decline invite", "accept meeting"],
    description: "Respond to a Google Calendar invitation (RSVP): accept, decline or tentatively accept (maybe), with an optional note to the organizer.",
};

async fn update_rsvp(up: Arc<dyn Upstream>, args: UpdateRsvp) -> Result<Value, ToolError> {
    let response = match args.response {
        Response::Accepted => "accepted",
        Response::Declined => "declined",
        Response::Tentative => "tentative",
    };
    let path = event_path(&args.calendar_id, &args.event_id);
    let e = up.send(HttpRequest::get(path.clone())).await?.json()?;
    let mut attendees = e["attendees"].as_array().cloned().unwrap_or_default();
    let Some(me) = attendees.iter_mut().find(|a| a["self"] == true) else {
        let why = if e["organizer"]["self"] == true {
            "you organise this event, so there is no invitation to answer"
        } else {
            "you are not on this event's guest list"
        };
        return Err(invalid("/event_id", why));
    };
    me["responseStatus"] = json!(response);
    if let Some(c) = &args.comment {
        me["comment"] = json!(c);
    }
    let req = HttpRequest::new(Method::Patch, path)
        .query("sendUpdates", args.send_updates.api())
        .json(json!({ "attendees": attendees }));
    let updated = up.send(req).await?.json()?;
    let mine = updated["attendees"].as_array().and_then(|a| a.iter().find(|x| x["self"] == true)).cloned();
    Ok(compact(json!({
        "event_id": updated["id"],
        "summary": updated["summary"],
        "start": when(&updated["start"]),
        "organizer": who(&updated["organizer"]),
        "response": mine.as_ref().and_then(|m| m["responseStatus"].as_str()),
        "comment": mine.as_ref().map(|m| m["comment"].clone()),
    })))
}

// --------------------------------------------------------------------------------- free/busy

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetFreeBusy {
    /// Window start, RFC 3339 with offset, e.g. "2026-03-02T09:00:00+01:00".
    #[schemars(length(min = 1))]
    time_min: String,
    /// Window end, RFC 3339 with offset, e.g. "2026-03-02T18:00:00+01:00".
    #[schemars(length(min = 1))]
    time_max: String,
    /// Calendars to check: people's email addresses, calendar ids, or "primary" for the user (1-50).
    #[schemars(length(min = 1, max = 50))]
    calendars: Vec<String>,
    /// IANA time zone for the busy times in the answer (default UTC).
    time_zone: Option<String>,
    /// Only list common free slots at least this long, in minutes (e.g. 30 for a half-hour meeting).
    #[schemars(range(min = 1))]
    min_free_minutes: Option<u32>,
}

pub(crate) const GET_FREE_BUSY: ToolSpec = tool! {
    name: "google_calendar_get_free_busy",
    effect: Read,
    results: Private,
    args: GetFreeBusy,
    run: get_free_busy,
    keywords: ["availability", "when is everyone free", "find a slot", "free time", "busy times", "find meeting time", "when are we free", "free slot", "common free time"],
    description: "Free/busy availability for calendars or people (by email) in a time window: each one's busy intervals and the free slots common to all, to find a meeting time.",
};

async fn get_free_busy(up: Arc<dyn Upstream>, args: GetFreeBusy) -> Result<Value, ToolError> {
    let min = require_datetime("/time_min", &args.time_min)?;
    let max = require_datetime("/time_max", &args.time_max)?;
    if max <= min {
        return Err(invalid("/time_max", "time_max must be after time_min"));
    }
    let ids: Vec<String> = args.calendars.iter().map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
    if ids.is_empty() {
        return Err(invalid("/calendars", "name at least one calendar or email address"));
    }
    let mut body = json!({
        "timeMin": args.time_min,
        "timeMax": args.time_max,
        "items": ids.iter().map(|id| json!({"id": id})).collect::<Vec<_>>(),
    });
    if let Some(tz) = &args.time_zone {
        body["timeZone"] = json!(tz);
    }
    let fb = up.send(HttpRequest::post("/freeBusy").json(body)).await?.json()?;
    let mut calendars = Vec::new();
    let mut all_busy = Vec::new();
    let mut unknown = Vec::new();
    for id in &ids {
        let c = &fb["calendars"][id.as_str()];
        let busy: Vec<Value> =
            c["busy"].as_array().into_iter().flatten().map(|b| json!({"start": b["start"], "end": b["end"]})).collect();
        for b in c["busy"].as_array().into_iter().flatten() {
            if let (Some((s, _)), Some((e, _))) =
                (b["start"].as_str().and_then(parse_datetime), b["end"].as_str().and_then(parse_datetime))
            {
                all_busy.push((s, e));
            }
        }
        let error =
            c["errors"].as_array().and_then(|e| e.first()).and_then(|e| e["reason"].as_str()).map(|r| match r {
                "notFound" => "no calendar found (or not shared with you)".to_string(),
                other => other.to_string(),
            });
        if error.is_some() {
            unknown.push(id.clone());
        }
        calendars.push(compact(json!({"calendar": id, "busy": busy, "error": error})));
    }
    let offset = parse_datetime(&args.time_min).and_then(|(_, o)| o).unwrap_or(0);
    let min_len = i64::from(args.min_free_minutes.unwrap_or(0)) * 60;
    let free: Vec<Value> = free_slots((min, max), all_busy, min_len.max(1))
        .into_iter()
        .map(|(s, e)| json!({"start": format_datetime(s, offset), "end": format_datetime(e, offset), "minutes": (e - s) / 60}))
        .collect();
    Ok(compact(json!({
        "time_min": args.time_min,
        "time_max": args.time_max,
        "calendars": calendars,
        "free": free,
        "note": (!unknown.is_empty()).then(|| format!("free slots ignore {} (no free/busy information)", unknown.join(", "))),
    })))
}

// ---------------------------------------------------------------------------------- calendars

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum AccessRole {
    FreeBusyReader,
    Reader,
    Writer,
    Owner,
}

#[serde_inline_default]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListCalendars {
    /// Only calendars where the user has at least this access: free_busy_reader, reader, writer (can add events) or owner.
    min_access_role: Option<AccessRole>,
    /// Also list calendars hidden from the calendar list.
    #[serde(default)]
    show_hidden: bool,
    /// How many calendars to return (1-250).
    #[serde_inline_default(100)]
    #[schemars(range(min = 1, max = 250))]
    limit: u32,
    /// Opaque cursor from a previous call's next_cursor, for the next page.
    cursor: Option<String>,
    /// Also return Google's calendar-list entries as `raw`.
    #[serde(default)]
    include_raw: bool,
}

pub(crate) const LIST_CALENDARS: ToolSpec = tool! {
    name: "google_calendar_list_calendars",
    effect: Read,
    results: Private,
    args: ListCalendars,
    run: list_calendars,
    keywords: ["my calendars", "shared calendars", "calendar ids", "team calendar"],
    description: "List the user's Google calendars (own, shared and subscribed): calendar ids, names, access role and time zones; the ids work as calendar_id in the other tools.",
};

async fn list_calendars(up: Arc<dyn Upstream>, args: ListCalendars) -> Result<Value, ToolError> {
    let role = args.min_access_role.map(|r| match r {
        AccessRole::FreeBusyReader => "freeBusyReader",
        AccessRole::Reader => "reader",
        AccessRole::Writer => "writer",
        AccessRole::Owner => "owner",
    });
    let req = HttpRequest::get("/users/me/calendarList")
        .query("maxResults", args.limit.clamp(1, 250))
        .query_opt("minAccessRole", role)
        .query_opt("showHidden", args.show_hidden.then_some("true"))
        .query_opt("pageToken", args.cursor.as_deref());
    let body = up.send(req).await?.json()?;
    let calendars: Vec<Value> = body["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            compact(json!({
                "id": c["id"],
                "name": c["summaryOverride"].as_str().or(c["summary"].as_str()),
                "description": c["description"],
                "time_zone": c["timeZone"],
                "access_role": c["accessRole"],
                "primary": c["primary"].as_bool().filter(|p| *p),
                "hidden": c["hidden"].as_bool().filter(|h| *h),
            }))
        })
        .collect();
    let mut out = compact(json!({"calendars": calendars, "next_cursor": body["nextPageToken"]}));
    if args.include_raw {
        out["raw"] = body["items"].clone();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_in_html_become_text() {
        let e = json!({"description": "<p>Agenda:</p><ul><li>Q3</li><li>Hiring</li></ul>"});
        assert_eq!(description(&e, 100).0, json!("Agenda:\n\n- Q3\n\n- Hiring"));
        let e = json!({"description": "plain words"});
        assert_eq!(description(&e, 5), (json!("plain"), true));
    }
}

#[cfg(test)]
mod tool_tests;
