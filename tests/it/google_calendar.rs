//! Google Calendar against a fake of `www.googleapis.com/calendar/v3` that checks the bearer
//! token, `singleEvents`/`orderBy`/`timeMin` the way Calendar does (ordering by start time needs
//! expanded recurring events; local times need a time zone; Meet links need
//! `conferenceDataVersion=1`), and answers with Calendar's event, calendar-list and free/busy
//! resources and its `{error: {errors, code, message}}` bodies.

use std::collections::HashMap;

use serde_json::{Value, json};
use workbench::secrets::Secret;

use crate::support::fake::{Fake, Recorded, Reply, has_user_agent};
use crate::support::{TestApp, app_with};

pub(crate) const TOKEN: &str = "ya29.a0AfB_calendar-test-access-token";
const TEAM: &str = "c_8f1e2d3c4b5a@group.calendar.google.com";
const PAGE_2: &str = "CigKGjdjYmg4cnBjMTBscmMwY2tpaDl0YWZzczk5GAEggICA6q2F2YgYGg0IABIAGPjT9O2y2YgY";
const CAL_PAGE_2: &str = "EjgKMGMuOGYxZTJkM2M0YjVhQGdyb3VwLmNhbGVuZGFyLmdvb2dsZS5jb20YASCAgICA";

fn cal_error(code: u16, message: &str, reason: &str) -> Reply {
    Reply::json(
        code,
        json!({"error": {"errors": [{"domain": "global", "reason": reason, "message": message}], "code": code, "message": message}}),
    )
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap(), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn person(email: &str, name: Option<&str>, me: bool) -> Value {
    let mut p = json!({"email": email});
    if let Some(n) = name {
        p["displayName"] = json!(n);
    }
    if me {
        p["self"] = json!(true);
    }
    p
}

fn standup() -> Value {
    json!({
        "kind": "calendar#event", "etag": "\"3421876543210000\"", "id": "evt_standup_20260302T083000Z", "status": "confirmed",
        "htmlLink": "https://www.google.com/calendar/event?eid=ZXZ0X3N0YW5kdXA",
        "created": "2025-11-03T10:00:00.000Z", "updated": "2026-02-27T16:12:44.381Z",
        "summary": "Daily standup", "description": "<p>Agenda: <b>blockers</b> &amp; demos</p><p>Notes doc linked in the invite</p>",
        "creator": person("ada@example.com", Some("Ada Lovelace"), false),
        "organizer": person("ada@example.com", Some("Ada Lovelace"), false),
        "start": {"dateTime": "2026-03-02T09:30:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2026-03-02T09:45:00+01:00", "timeZone": "Europe/Berlin"},
        "recurringEventId": "evt_standup", "originalStartTime": {"dateTime": "2026-03-02T09:30:00+01:00", "timeZone": "Europe/Berlin"},
        "iCalUID": "evt_standup@google.com", "sequence": 2,
        "attendees": [
            {"email": "ada@example.com", "displayName": "Ada Lovelace", "organizer": true, "responseStatus": "accepted"},
            {"email": "bob@example.com", "self": true, "responseStatus": "accepted"},
            {"email": "carol@example.com", "responseStatus": "needsAction", "optional": true}
        ],
        "hangoutLink": "https://meet.google.com/abc-defg-hij",
        "conferenceData": {"entryPoints": [{"entryPointType": "video", "uri": "https://meet.google.com/abc-defg-hij", "label": "meet.google.com/abc-defg-hij"},
                                            {"entryPointType": "phone", "uri": "tel:+49-30-1234-5678", "label": "+49 30 1234 5678", "pin": "123456789"}],
                           "conferenceSolution": {"key": {"type": "hangoutsMeet"}, "name": "Google Meet", "iconUri": "https://fonts.gstatic.com/s/i/productlogos/meet_2020q4/v6/web-512dp/logo_meet_2020q4_color_2x_web_512dp.png"},
                           "conferenceId": "abc-defg-hij"},
        "reminders": {"useDefault": true}, "eventType": "default"
    })
}

fn offsite() -> Value {
    json!({
        "kind": "calendar#event", "etag": "\"3421876543210001\"", "id": "evt_offsite", "status": "confirmed",
        "htmlLink": "https://www.google.com/calendar/event?eid=ZXZ0X29mZnNpdGU", "created": "2026-01-10T09:00:00.000Z", "updated": "2026-01-10T09:00:00.000Z",
        "summary": "Team offsite", "location": "Lisbon",
        "creator": person("bob@example.com", None, true), "organizer": person("bob@example.com", None, true),
        "start": {"date": "2026-03-05"}, "end": {"date": "2026-03-07"}, "transparency": "transparent",
        "iCalUID": "evt_offsite@google.com", "sequence": 0,
        "reminders": {"useDefault": false, "overrides": [{"method": "popup", "minutes": 1440}]}, "eventType": "default"
    })
}

fn one_on_one() -> Value {
    json!({
        "kind": "calendar#event", "etag": "\"3421876543210002\"", "id": "evt_1on1", "status": "confirmed",
        "htmlLink": "https://www.google.com/calendar/event?eid=ZXZ0XzFvbjE", "created": "2026-02-20T09:00:00.000Z", "updated": "2026-02-20T09:00:00.000Z",
        "summary": "Ada / Bob 1:1", "creator": person("ada@example.com", Some("Ada Lovelace"), false),
        "organizer": person("ada@example.com", Some("Ada Lovelace"), false),
        "start": {"dateTime": "2026-03-03T14:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2026-03-03T14:30:00+01:00", "timeZone": "Europe/Berlin"},
        "iCalUID": "evt_1on1@google.com", "sequence": 0,
        "attendees": [
            {"email": "ada@example.com", "displayName": "Ada Lovelace", "organizer": true, "responseStatus": "accepted"},
            {"email": "bob@example.com", "self": true, "responseStatus": "needsAction"}
        ],
        "reminders": {"useDefault": true}, "eventType": "default"
    })
}

fn event(id: &str) -> Option<Value> {
    match id {
        "evt_standup_20260302T083000Z" => Some(standup()),
        "evt_offsite" => Some(offsite()),
        "evt_1on1" => Some(one_on_one()),
        _ => None,
    }
}

fn events_page(token: Option<&str>) -> Value {
    let base = json!({
        "kind": "calendar#events", "etag": "\"p33c9v7q0ds0g0\"", "summary": "bob@example.com", "description": "",
        "updated": "2026-02-27T16:12:44.381Z", "timeZone": "Europe/Berlin", "accessRole": "owner",
        "defaultReminders": [{"method": "popup", "minutes": 10}]
    });
    let mut page = base;
    match token {
        None => {
            page["items"] = json!([standup(), offsite()]);
            page["nextPageToken"] = json!(PAGE_2);
        }
        Some(_) => page["items"] = json!([one_on_one()]),
    }
    page
}

fn calendar_entry(id: &str, summary: &str, role: &str, primary: bool) -> Value {
    let mut c = json!({
        "kind": "calendar#calendarListEntry", "etag": "\"1700000000000000\"", "id": id, "summary": summary,
        "timeZone": "Europe/Berlin", "colorId": "14", "backgroundColor": "#9fe1e7", "foregroundColor": "#000000",
        "selected": true, "accessRole": role, "defaultReminders": [{"method": "popup", "minutes": 10}],
        "conferenceProperties": {"allowedConferenceSolutionTypes": ["hangoutsMeet"]}
    });
    if primary {
        c["primary"] = json!(true);
        c["notificationSettings"] = json!({"notifications": [{"type": "eventCreation", "method": "email"}]});
    }
    c
}

fn has_offset(t: &str) -> bool {
    t.len() > 19 && t.contains('T') && (t.ends_with('Z') || t[19..].contains(['+', '-']))
}

/// Calendar's check of an event time: a date, or a date-time with an offset or a time zone.
fn check_time(t: &Value, which: &str) -> Result<(), Reply> {
    if t["date"].is_string() {
        return Ok(());
    }
    match t["dateTime"].as_str() {
        Some(dt) if has_offset(dt) || t["timeZone"].is_string() => Ok(()),
        Some(_) => Err(cal_error(400, &format!("Missing time zone definition for {which} time."), "badRequest")),
        None => Err(cal_error(400, &format!("Missing {which} time."), "required")),
    }
}

pub(crate) fn calendar(r: &Recorded) -> Reply {
    if !has_user_agent(r) {
        return cal_error(400, "Bad Request", "badRequest");
    }
    if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return cal_error(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            "authError",
        );
    }
    let Some(rest) = r.path.strip_prefix("/calendar/v3") else { return cal_error(404, "Not Found", "notFound") };
    let segs: Vec<String> = rest.trim_start_matches('/').split('/').map(pct_decode).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let send_updates_ok = r.q("sendUpdates").is_none_or(|s| ["all", "externalOnly", "none"].contains(&s));
    if !send_updates_ok {
        return cal_error(400, "Invalid sendUpdates parameter", "invalidParameter");
    }
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", ["users", "me", "calendarList", "primary"]) => {
            Reply::json(200, calendar_entry("bob@example.com", "bob@example.com", "owner", true))
        }
        ("GET", ["users", "me", "calendarList"]) => {
            if r.q("minAccessRole").is_some_and(|m| !["freeBusyReader", "reader", "writer", "owner"].contains(&m)) {
                return cal_error(400, "Invalid minAccessRole", "invalidParameter");
            }
            match r.q("pageToken") {
                None => {
                    let mut team = calendar_entry(TEAM, "Team", "writer", false);
                    team["summaryOverride"] = json!("Team (shared)");
                    team["description"] = json!("Releases, on-call and offsites");
                    Reply::json(
                        200,
                        json!({"kind": "calendar#calendarList", "etag": "\"p32g\"", "nextPageToken": CAL_PAGE_2,
                        "items": [calendar_entry("bob@example.com", "bob@example.com", "owner", true), team]}),
                    )
                }
                Some(CAL_PAGE_2) => {
                    let mut hol = calendar_entry(
                        "en.german#holiday@group.v.calendar.google.com",
                        "Holidays in Germany",
                        "reader",
                        false,
                    );
                    hol["hidden"] = json!(true);
                    Reply::json(200, json!({"kind": "calendar#calendarList", "etag": "\"p32h\"", "items": [hol]}))
                }
                Some(_) => cal_error(400, "Invalid page token value.", "invalid"),
            }
        }
        ("GET", ["calendars", cal, "events"]) => {
            if *cal != "primary" && *cal != TEAM {
                return cal_error(404, "Not Found", "notFound");
            }
            if r.q("orderBy") == Some("startTime") && r.q("singleEvents") != Some("true") {
                return cal_error(
                    400,
                    "The requested ordering is not available for the particular query.",
                    "badRequest",
                );
            }
            if r.q("timeMin").is_some_and(|t| !has_offset(t)) {
                return cal_error(400, "Bad Request", "badRequest");
            }
            match r.q("pageToken") {
                None => Reply::json(200, events_page(None)),
                Some(PAGE_2) => Reply::json(200, events_page(Some(PAGE_2))),
                Some(_) => cal_error(400, "Invalid page token value.", "invalid"),
            }
        }
        ("GET", ["calendars", "primary", "events", "busy"]) => {
            cal_error(429, "Rate Limit Exceeded", "rateLimitExceeded").with_header("retry-after", "120")
        }
        ("GET", ["calendars", "primary", "events", id]) => match event(id) {
            Some(e) => Reply::json(200, e),
            None => cal_error(404, "Not Found", "notFound"),
        },
        ("POST", ["calendars", "primary", "events"]) => {
            for (k, which) in [("start", "start"), ("end", "end")] {
                if let Err(e) = check_time(&body[k], which) {
                    return e;
                }
            }
            if body["recurrence"].is_array()
                && body["start"]["dateTime"].is_string()
                && !body["start"]["timeZone"].is_string()
            {
                return cal_error(400, "Missing time zone definition for start time.", "badRequest");
            }
            let mut e = body.clone();
            e["kind"] = json!("calendar#event");
            e["id"] = json!("7cbh8rpc10lrc0ckih9tafss99");
            e["status"] = json!("confirmed");
            e["htmlLink"] = json!("https://www.google.com/calendar/event?eid=N2NiaDhycGMxMGxyYzA");
            e["created"] = json!("2026-03-01T12:00:00.000Z");
            e["updated"] = json!("2026-03-01T12:00:00.000Z");
            e["organizer"] = person("bob@example.com", None, true);
            e["creator"] = person("bob@example.com", None, true);
            if let Some(list) = e["attendees"].as_array_mut() {
                for a in list {
                    a["responseStatus"] = json!("needsAction");
                }
            }
            if body["conferenceData"].is_object() {
                if r.q("conferenceDataVersion") == Some("1") {
                    e["hangoutLink"] = json!("https://meet.google.com/new-meet-lnk");
                    e["conferenceData"] = json!({"entryPoints": [{"entryPointType": "video", "uri": "https://meet.google.com/new-meet-lnk"}], "conferenceId": "new-meet-lnk"});
                } else if let Some(o) = e.as_object_mut() {
                    o.remove("conferenceData");
                }
            }
            Reply::json(200, e)
        }
        ("PATCH", ["calendars", "primary", "events", id]) => {
            let Some(mut e) = event(id) else { return cal_error(404, "Not Found", "notFound") };
            for k in ["start", "end"] {
                if body.get(k).is_some()
                    && let Err(err) = check_time(&body[k], k)
                {
                    return err;
                }
            }
            for (k, v) in body.as_object().unwrap() {
                e[k] = v.clone();
            }
            e["updated"] = json!("2026-03-01T12:30:00.000Z");
            e["sequence"] = json!(e["sequence"].as_i64().unwrap_or(0) + 1);
            Reply::json(200, e)
        }
        ("DELETE", ["calendars", "primary", "events", id]) => match (*id, event(id)) {
            ("evt_cancelled", _) => cal_error(410, "Resource has been deleted", "deleted"),
            (_, Some(_)) => Reply { status: 204, headers: vec![], body: String::new() },
            _ => cal_error(404, "Not Found", "notFound"),
        },
        ("POST", ["freeBusy"]) => {
            let (Some(min), Some(max)) = (body["timeMin"].as_str(), body["timeMax"].as_str()) else {
                return cal_error(400, "Missing timeMin or timeMax.", "required");
            };
            let mut cals = serde_json::Map::new();
            for item in body["items"].as_array().into_iter().flatten() {
                let id = item["id"].as_str().unwrap();
                let v = match id {
                    "primary" => {
                        json!({"busy": [{"start": "2026-03-02T08:30:00Z", "end": "2026-03-02T09:00:00Z"}, {"start": "2026-03-02T12:00:00Z", "end": "2026-03-02T13:00:00Z"}]})
                    }
                    "carol@example.com" => {
                        json!({"busy": [{"start": "2026-03-02T09:30:00Z", "end": "2026-03-02T11:00:00Z"}]})
                    }
                    _ => json!({"errors": [{"domain": "global", "reason": "notFound"}], "busy": []}),
                };
                cals.insert(id.to_string(), v);
            }
            Reply::json(200, json!({"kind": "calendar#freeBusy", "timeMin": min, "timeMax": max, "calendars": cals}))
        }
        _ => cal_error(404, "Not Found", "notFound"),
    }
}

async fn setup() -> (TestApp, Fake) {
    setup_with(&[]).await
}

async fn setup_with(extra: &[(&'static str, String)]) -> (TestApp, Fake) {
    let fake = Fake::start(calendar).await;
    let mut env = vec![
        ("WORKBENCH_GOOGLE_CALENDAR_BASE_URL", format!("{}/calendar/v3", fake.url)),
        ("WORKBENCH_GOOGLE_CALENDAR_TOKEN", TOKEN.into()),
    ];
    env.extend(extra.iter().cloned());
    (app_with(&env), fake)
}

fn body_of(r: &Recorded) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[tokio::test]
async fn google_calendar_list_events_in_a_window_and_pages() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_calendar_list_events",
            json!({"time_min": "2026-03-02T00:00:00+01:00", "time_max": "2026-03-09T00:00:00+01:00", "limit": 2, "time_zone": "Europe/Berlin"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("GET", "/calendar/v3/calendars/primary/events"));
    assert_eq!(req.header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
    for (k, v) in [
        ("singleEvents", "true"),
        ("orderBy", "startTime"),
        ("maxResults", "2"),
        ("timeMin", "2026-03-02T00:00:00+01:00"),
        ("timeMax", "2026-03-09T00:00:00+01:00"),
        ("timeZone", "Europe/Berlin"),
    ] {
        assert_eq!(req.q(k), Some(v), "{k}");
    }
    assert_eq!(req.q("pageToken"), None);
    assert_eq!(r["calendar"], "bob@example.com");
    assert_eq!(
        r["events"][0],
        json!({
            "id": "evt_standup_20260302T083000Z", "summary": "Daily standup",
            "start": "2026-03-02T09:30:00+01:00", "end": "2026-03-02T09:45:00+01:00", "time_zone": "Europe/Berlin",
            "organizer": "Ada Lovelace <ada@example.com>", "my_response": "accepted", "meet_link": "https://meet.google.com/abc-defg-hij",
            "url": "https://www.google.com/calendar/event?eid=ZXZ0X3N0YW5kdXA", "recurring_event_id": "evt_standup",
            "description": "Agenda: blockers & demos\n\nNotes doc linked in the invite", "attendee_count": 3
        })
    );
    assert_eq!(
        r["events"][1],
        json!({"id": "evt_offsite", "summary": "Team offsite", "start": "2026-03-05", "end": "2026-03-07", "all_day": true,
               "location": "Lisbon", "organizer": "bob@example.com", "url": "https://www.google.com/calendar/event?eid=ZXZ0X29mZnNpdGU"})
    );
    assert_eq!(r["next_cursor"], PAGE_2);
    let raw = events_page(None).to_string().len();
    let shaped = r.to_string().len();
    eprintln!("google_calendar_list_events: raw {raw} bytes -> shaped {shaped} bytes");
    assert!(shaped < raw);

    let r2 = t.ok("google_calendar_list_events", json!({"calendar_id": TEAM, "cursor": PAGE_2, "query": "1:1"})).await;
    let req = fake.last();
    assert_eq!(req.path, "/calendar/v3/calendars/c_8f1e2d3c4b5a%40group.calendar.google.com/events");
    assert_eq!(req.q("pageToken"), Some(PAGE_2));
    assert_eq!(req.q("q"), Some("1:1"));
    assert_eq!(req.q("timeMin"), None, "the cursor carries the window");
    assert_eq!(r2["events"][0]["my_response"], "needsAction");
    assert!(r2.get("next_cursor").is_none());

    // No window: from now on.
    t.ok("google_calendar_list_events", json!({})).await;
    let t_min = fake.last().q("timeMin").unwrap().to_string();
    assert!(t_min.ends_with('Z') && t_min.len() == 20 && t_min.as_str() > "2026-01-01", "{t_min}");

    let before = fake.requests().len();
    let e = t.err("google_calendar_list_events", json!({"time_min": "2026-03-02"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert_eq!(e["problems"][0]["path"], "/time_min");
    let e = t
        .err(
            "google_calendar_list_events",
            json!({"time_min": "2026-03-02T10:00:00Z", "time_max": "2026-03-02T09:00:00Z"}),
        )
        .await;
    assert_eq!(e["problems"][0]["path"], "/time_max");
    assert_eq!(fake.requests().len(), before);
    let e = t.err("google_calendar_list_events", json!({"calendar_id": "nobody@example.com"})).await;
    assert_eq!(e["status"], 404);
    assert!(e["message"].as_str().unwrap().contains("Not Found"), "{e}");
}

#[tokio::test]
async fn google_calendar_get_event_lists_attendees_and_meet_link() {
    let (t, fake) = setup().await;
    let r = t.ok("google_calendar_get_event", json!({"event_id": "evt_standup_20260302T083000Z"})).await;
    assert_eq!(fake.last().path, "/calendar/v3/calendars/primary/events/evt_standup_20260302T083000Z");
    assert_eq!(
        r["attendees"],
        json!([
            {"email": "ada@example.com", "name": "Ada Lovelace", "response": "accepted", "organizer": true},
            {"email": "bob@example.com", "response": "accepted", "self": true},
            {"email": "carol@example.com", "response": "needsAction", "optional": true}
        ])
    );
    assert_eq!(r["meet_link"], "https://meet.google.com/abc-defg-hij");
    assert_eq!(r["reminders_minutes_before"], "calendar default");
    assert_eq!(r["creator"], "Ada Lovelace <ada@example.com>");
    assert_eq!(r["updated"], "2026-02-27T16:12:44.381Z");
    assert!(r.get("raw").is_none() && r.get("attendee_count").is_none());

    let r = t
        .ok("google_calendar_get_event", json!({"event_id": "evt_offsite", "include_raw": true, "time_zone": "UTC"}))
        .await;
    assert_eq!(fake.last().q("timeZone"), Some("UTC"));
    assert_eq!(r["reminders_minutes_before"], json!([1440]));
    assert_eq!(r["transparency"], "transparent");
    assert_eq!(r["raw"]["iCalUID"], "evt_offsite@google.com");
}

#[tokio::test]
async fn google_calendar_create_event_with_guests_meet_and_reminders() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_calendar_create_event",
            json!({
                "summary": "Q3 review", "start": "2026-03-04T15:00", "end": "2026-03-04T16:00", "time_zone": "Europe/Berlin",
                "attendees": ["ada@example.com", "carol@example.com"], "description": "Numbers in the deck", "location": "Room 4.01",
                "add_meet_link": true, "reminders_minutes": [10, 60]
            }),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/calendar/v3/calendars/primary/events"));
    assert_eq!(req.q("sendUpdates"), Some("all"));
    assert_eq!(req.q("conferenceDataVersion"), Some("1"));
    let body = body_of(&req);
    let request_id = body["conferenceData"]["createRequest"]["requestId"].as_str().unwrap().to_string();
    assert!(request_id.len() >= 16, "a fresh request id: {request_id}");
    assert_eq!(
        body,
        json!({
            "summary": "Q3 review",
            "start": {"dateTime": "2026-03-04T15:00:00", "timeZone": "Europe/Berlin"},
            "end": {"dateTime": "2026-03-04T16:00:00", "timeZone": "Europe/Berlin"},
            "attendees": [{"email": "ada@example.com"}, {"email": "carol@example.com"}],
            "description": "Numbers in the deck", "location": "Room 4.01",
            "reminders": {"useDefault": false, "overrides": [{"method": "popup", "minutes": 10}, {"method": "popup", "minutes": 60}]},
            "conferenceData": {"createRequest": {"requestId": request_id, "conferenceSolutionKey": {"type": "hangoutsMeet"}}}
        })
    );
    assert_eq!(r["id"], "7cbh8rpc10lrc0ckih9tafss99");
    assert_eq!(r["meet_link"], "https://meet.google.com/new-meet-lnk");
    assert_eq!(r["start"], "2026-03-04T15:00:00");
    assert_eq!(r["time_zone"], "Europe/Berlin");
    assert_eq!(r["reminders_minutes_before"], json!([10, 60]));
    assert_eq!(r["attendees"][1], json!({"email": "carol@example.com", "response": "needsAction"}));

    // An all-day recurring event without a Meet link and without emails.
    let r = t
        .ok(
            "google_calendar_create_event",
            json!({"summary": "Payroll", "start": "2026-03-25", "end": "2026-03-26", "recurrence": ["RRULE:FREQ=MONTHLY;BYMONTHDAY=25"], "send_updates": "none"}),
        )
        .await;
    let req = fake.last();
    assert_eq!(req.q("sendUpdates"), Some("none"));
    assert_eq!(req.q("conferenceDataVersion"), None);
    assert_eq!(
        body_of(&req),
        json!({"summary": "Payroll", "start": {"date": "2026-03-25"}, "end": {"date": "2026-03-26"}, "recurrence": ["RRULE:FREQ=MONTHLY;BYMONTHDAY=25"]})
    );
    assert_eq!(r["all_day"], true);
    assert_eq!(r["recurrence"], json!(["RRULE:FREQ=MONTHLY;BYMONTHDAY=25"]));

    let before = fake.requests().len();
    for (args, path) in [
        (json!({"summary": "x", "start": "2026-03-04T15:00", "end": "2026-03-04T16:00"}), "/start"),
        (json!({"summary": "x", "start": "2026-03-04T15:00:00Z", "end": "2026-03-04T14:00:00Z"}), "/end"),
        (
            json!({"summary": "x", "start": "2026-03-04T15:00:00Z", "end": "2026-03-04T16:00:00Z", "recurrence": ["RRULE:FREQ=DAILY"]}),
            "/time_zone",
        ),
        (
            json!({"summary": "x", "start": "2026-03-04T15:00:00Z", "end": "2026-03-04T16:00:00Z", "attendees": ["Ada"]}),
            "/attendees/0",
        ),
    ] {
        let e = t.err("google_calendar_create_event", args).await;
        assert_eq!(e["problems"][0]["path"], path, "{e}");
    }
    assert_eq!(fake.requests().len(), before, "nothing was created");
}

#[tokio::test]
async fn google_calendar_update_event_reschedules_and_edits_guests() {
    // Counts the requests the writes send: without the outbound-data guard's lookups.
    let (t, fake) = setup_with(&[("WORKBENCH_FLOW", "off".into())]).await;
    let r = t
        .ok(
            "google_calendar_update_event",
            json!({"event_id": "evt_standup_20260302T083000Z", "start": "2026-03-02T10:00:00+01:00", "end": "2026-03-02T10:15:00+01:00",
                   "add_attendees": ["dave@example.com"], "remove_attendees": ["Carol@Example.com"], "send_updates": "external_only"}),
        )
        .await;
    let reqs = fake.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/calendar/v3/calendars/primary/events/evt_standup_20260302T083000Z")
    );
    let patch = &reqs[1];
    assert_eq!(patch.method, "PATCH");
    assert_eq!(patch.q("sendUpdates"), Some("externalOnly"));
    assert_eq!(
        body_of(patch),
        json!({
            "start": {"dateTime": "2026-03-02T10:00:00+01:00"}, "end": {"dateTime": "2026-03-02T10:15:00+01:00"},
            "attendees": [
                {"email": "ada@example.com", "displayName": "Ada Lovelace", "organizer": true, "responseStatus": "accepted"},
                {"email": "bob@example.com", "self": true, "responseStatus": "accepted"},
                {"email": "dave@example.com"}
            ]
        }),
        "existing guests keep their responses"
    );
    assert_eq!(r["start"], "2026-03-02T10:00:00+01:00");
    assert_eq!(r["attendees"].as_array().unwrap().len(), 3);

    t.ok(
        "google_calendar_update_event",
        json!({"event_id": "evt_offsite", "summary": "Team offsite (Porto)", "location": "Porto"}),
    )
    .await;
    let req = fake.last();
    assert_eq!(body_of(&req), json!({"summary": "Team offsite (Porto)", "location": "Porto"}));
    assert_eq!(req.q("sendUpdates"), Some("all"));

    let before = fake.requests().len();
    let e = t.err("google_calendar_update_event", json!({"event_id": "evt_offsite"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    let e = t
        .err(
            "google_calendar_update_event",
            json!({"event_id": "evt_offsite", "attendees": ["a@x.com"], "add_attendees": ["b@x.com"]}),
        )
        .await;
    assert_eq!(e["problems"][0]["path"], "/attendees");
    assert_eq!(fake.requests().len(), before);
    let e = t
        .err("google_calendar_update_event", json!({"event_id": "evt_1on1", "remove_attendees": ["zed@example.com"]}))
        .await;
    assert_eq!(e["problems"][0]["path"], "/remove_attendees/0");
}

#[tokio::test]
async fn google_calendar_delete_event_notifies_guests() {
    let (t, fake) = setup().await;
    let r = t.ok("google_calendar_delete_event", json!({"event_id": "evt_1on1"})).await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("DELETE", "/calendar/v3/calendars/primary/events/evt_1on1"));
    assert_eq!(req.q("sendUpdates"), Some("all"));
    assert_eq!(r, json!({"event_id": "evt_1on1", "deleted": true, "guests_notified": "all"}));
    let e = t.err("google_calendar_delete_event", json!({"event_id": "evt_cancelled", "send_updates": "none"})).await;
    assert_eq!(e["status"], 410);
    assert!(e["message"].as_str().unwrap().contains("Resource has been deleted"), "{e}");
}

/// An id of `..` would make `/calendars/team/events/..` the calendar itself once the URL is
/// parsed (its DELETE removes the calendar): the engine refuses a path with a `.` or `..`
/// segment, written or percent-encoded, before anything is sent.
#[tokio::test]
async fn a_dot_segment_in_an_id_is_never_sent() {
    let (t, fake) = setup().await;
    for event_id in ["..", "."] {
        let e = t
            .err(
                "google_calendar_delete_event",
                json!({"calendar_id": "team@group.calendar.google.com", "event_id": event_id}),
            )
            .await;
        assert_eq!(e["code"], "INVALID_ARGUMENTS", "{e}");
        assert!(e["message"].as_str().unwrap().contains("'.' or '..' segment"), "{e}");
    }
    assert!(fake.requests().is_empty(), "nothing reached the service");
}

#[tokio::test]
async fn google_calendar_update_rsvp_answers_only_for_yourself() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_calendar_update_rsvp",
            json!({"event_id": "evt_1on1", "response": "tentative", "comment": "Might run late"}),
        )
        .await;
    let reqs = fake.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/calendar/v3/calendars/primary/events/evt_1on1")
    );
    assert_eq!((reqs[1].method.as_str(), reqs[1].q("sendUpdates")), ("PATCH", Some("all")));
    assert_eq!(
        body_of(&reqs[1]),
        json!({"attendees": [
            {"email": "ada@example.com", "displayName": "Ada Lovelace", "organizer": true, "responseStatus": "accepted"},
            {"email": "bob@example.com", "self": true, "responseStatus": "tentative", "comment": "Might run late"}
        ]})
    );
    assert_eq!(
        r,
        json!({"event_id": "evt_1on1", "summary": "Ada / Bob 1:1", "start": "2026-03-03T14:00:00+01:00", "organizer": "Ada Lovelace <ada@example.com>",
               "response": "tentative", "comment": "Might run late"})
    );
    let e = t.err("google_calendar_update_rsvp", json!({"event_id": "evt_offsite", "response": "accepted"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
    assert!(e["message"].as_str().unwrap().contains("you organise this event"), "{e}");
    let e = t.err("google_calendar_update_rsvp", json!({"event_id": "evt_1on1", "response": "maybe"})).await;
    assert_eq!(e["code"], "INVALID_ARGUMENTS");
}

#[tokio::test]
async fn google_calendar_get_free_busy_finds_common_free_slots() {
    let (t, fake) = setup().await;
    let r = t
        .ok(
            "google_calendar_get_free_busy",
            json!({"time_min": "2026-03-02T09:00:00+01:00", "time_max": "2026-03-02T18:00:00+01:00",
                   "calendars": ["primary", "carol@example.com", "nobody@example.com"], "time_zone": "Europe/Berlin"}),
        )
        .await;
    let req = fake.last();
    assert_eq!((req.method.as_str(), req.path.as_str()), ("POST", "/calendar/v3/freeBusy"));
    assert_eq!(
        body_of(&req),
        json!({"timeMin": "2026-03-02T09:00:00+01:00", "timeMax": "2026-03-02T18:00:00+01:00", "timeZone": "Europe/Berlin",
               "items": [{"id": "primary"}, {"id": "carol@example.com"}, {"id": "nobody@example.com"}]})
    );
    assert_eq!(
        r["calendars"][1],
        json!({"calendar": "carol@example.com", "busy": [{"start": "2026-03-02T09:30:00Z", "end": "2026-03-02T11:00:00Z"}]})
    );
    assert_eq!(r["calendars"][2]["error"], "no calendar found (or not shared with you)");
    assert_eq!(
        r["free"],
        json!([
            {"start": "2026-03-02T09:00:00+01:00", "end": "2026-03-02T09:30:00+01:00", "minutes": 30},
            {"start": "2026-03-02T10:00:00+01:00", "end": "2026-03-02T10:30:00+01:00", "minutes": 30},
            {"start": "2026-03-02T12:00:00+01:00", "end": "2026-03-02T13:00:00+01:00", "minutes": 60},
            {"start": "2026-03-02T14:00:00+01:00", "end": "2026-03-02T18:00:00+01:00", "minutes": 240}
        ])
    );
    assert!(r["note"].as_str().unwrap().contains("nobody@example.com"));
    let r = t
        .ok(
            "google_calendar_get_free_busy",
            json!({"time_min": "2026-03-02T09:00:00+01:00", "time_max": "2026-03-02T18:00:00+01:00", "calendars": ["primary", "carol@example.com"], "min_free_minutes": 45}),
        )
        .await;
    assert_eq!(r["free"].as_array().unwrap().len(), 2);
    assert_eq!(r["free"][0]["start"], "2026-03-02T12:00:00+01:00");
    assert!(r.get("note").is_none());
    let e = t
        .err(
            "google_calendar_get_free_busy",
            json!({"time_min": "2026-03-02T09:00", "time_max": "2026-03-02T18:00:00Z", "calendars": ["primary"]}),
        )
        .await;
    assert_eq!(e["problems"][0]["path"], "/time_min");
}

#[tokio::test]
async fn google_calendar_list_calendars_pages() {
    let (t, fake) = setup().await;
    let r = t.ok("google_calendar_list_calendars", json!({"min_access_role": "free_busy_reader", "limit": 2})).await;
    let req = fake.last();
    assert_eq!(req.path, "/calendar/v3/users/me/calendarList");
    assert_eq!(req.q("minAccessRole"), Some("freeBusyReader"));
    assert_eq!(req.q("maxResults"), Some("2"));
    assert_eq!(
        r["calendars"],
        json!([
            {"id": "bob@example.com", "name": "bob@example.com", "time_zone": "Europe/Berlin", "access_role": "owner", "primary": true},
            {"id": TEAM, "name": "Team (shared)", "description": "Releases, on-call and offsites", "time_zone": "Europe/Berlin", "access_role": "writer"}
        ])
    );
    assert_eq!(r["next_cursor"], CAL_PAGE_2);
    assert!(r.get("raw").is_none());
    let r = t
        .ok("google_calendar_list_calendars", json!({"cursor": CAL_PAGE_2, "show_hidden": true, "include_raw": true}))
        .await;
    assert_eq!(r["raw"][0]["backgroundColor"], "#9fe1e7");
    let req = fake.last();
    assert_eq!(req.q("pageToken"), Some(CAL_PAGE_2));
    assert_eq!(req.q("showHidden"), Some("true"));
    assert_eq!(r["calendars"][0]["hidden"], true);
    assert!(r.get("next_cursor").is_none());
}

#[tokio::test]
async fn google_calendar_rejected_token_rate_limit_and_identity() {
    let (t, fake) = setup().await;

    let bad = app_with(&[
        ("WORKBENCH_GOOGLE_CALENDAR_BASE_URL", format!("{}/calendar/v3", fake.url)),
        ("WORKBENCH_GOOGLE_CALENDAR_TOKEN", "ya29.stale".into()),
    ]);
    let e = bad.err("google_calendar_list_calendars", json!({})).await;
    assert_eq!(e["code"], "UPSTREAM_ERROR");
    assert_eq!(e["status"], 401);
    assert!(e["message"].as_str().unwrap().contains("reconnect"), "{e}");

    let conn = |token: &str| {
        let fields: HashMap<String, Secret<String>> = [("token".to_string(), Secret::new(token.to_string()))].into();
        workbench::auth::from_fields(&plugins::google_calendar::INTEGRATION, fields, workbench::auth::Source::Store)
    };
    let integration = &plugins::google_calendar::INTEGRATION;
    let label = workbench::send::verify_identity(&t.app, integration, conn(TOKEN)).await.unwrap();
    assert_eq!(label.as_deref(), Some("bob@example.com"));
    assert_eq!(fake.last().path, "/calendar/v3/users/me/calendarList/primary");
    assert!(workbench::send::verify_identity(&t.app, integration, conn("ya29.nope")).await.is_err());

    // Last: after a 429 with Retry-After the governor holds every call to the integration.
    let e = t.err("google_calendar_get_event", json!({"event_id": "busy"})).await;
    assert_eq!(e["code"], "RATE_LIMITED");
    assert_eq!(e["retry_after_seconds"], 120);
}

#[tokio::test]
async fn google_calendar_tools_are_found_by_the_words_people_use() {
    let t = crate::support::app();
    for (query, want) in [
        ("what meetings do I have this week", "google_calendar_list_events"),
        ("who is attending the meeting", "google_calendar_get_event"),
        ("schedule a meeting with ada", "google_calendar_create_event"),
        ("reschedule the meeting to 3pm", "google_calendar_update_event"),
        ("cancel the meeting", "google_calendar_delete_event"),
        ("accept the calendar invite", "google_calendar_update_rsvp"),
        ("decline meeting", "google_calendar_update_rsvp"),
        ("when is everyone free for a meeting", "google_calendar_get_free_busy"),
        ("list my calendars", "google_calendar_list_calendars"),
    ] {
        let out = t.call("search_tools", json!({"query": query, "limit": 3})).await;
        assert_eq!(out.body["tools"][0]["name"], want, "query {query:?}: {}", out.body);
    }
}
