//! Google Calendar tools on `MockUpstream`: the exact request of reads and writes (calendar and
//! event ids as encoded segments, expanded single events in start order, `sendUpdates`, start
//! and end in Google's shape) and the events as an agent reads them.

use serde_json::json;

use super::*;
use crate::mock::{MockUpstream, message, sent};

fn event() -> Value {
    json!({"kind": "calendar#event", "id": "evt123", "status": "confirmed", "htmlLink": "https://www.google.com/calendar/event?eid=ZXZ0",
        "summary": "Design review", "location": "Room 4", "creator": {"email": "ann@acme.example"},
        "organizer": {"email": "ann@acme.example", "displayName": "Ann Lee"},
        "start": {"dateTime": "2026-03-02T10:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2026-03-02T11:00:00+01:00", "timeZone": "Europe/Berlin"},
        "attendees": [{"email": "ann@acme.example", "organizer": true, "responseStatus": "accepted"},
                      {"email": "me@acme.example", "self": true, "responseStatus": "needsAction"}],
        "hangoutLink": "https://meet.google.com/abc-defg-hij", "etag": "\"3181161784712000\""})
}

#[test]
fn list_events_expands_single_events_in_a_window() {
    let body = json!({"kind": "calendar#events", "summary": "me@acme.example", "timeZone": "Europe/Berlin",
        "items": [event()], "nextPageToken": "pg2"});
    let (out, reqs) = MockUpstream::new().json(body).ok(
        &LIST_EVENTS,
        json!({"calendar_id": "team@group.calendar.google.com", "time_min": "2026-03-02T00:00:00Z", "time_max": "2026-03-03T00:00:00Z",
               "query": "review", "limit": 10}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/calendars/team%40group.calendar.google.com/events", "body": null, "query": [
            ["singleEvents", "true"], ["orderBy", "startTime"], ["maxResults", "10"], ["timeMin", "2026-03-02T00:00:00Z"],
            ["timeMax", "2026-03-03T00:00:00Z"], ["q", "review"]]})
    );
    assert_eq!(
        out,
        json!({"calendar": "me@acme.example", "time_zone": "Europe/Berlin", "next_cursor": "pg2", "events": [{"id": "evt123",
            "summary": "Design review", "start": "2026-03-02T10:00:00+01:00", "end": "2026-03-02T11:00:00+01:00",
            "time_zone": "Europe/Berlin", "location": "Room 4", "organizer": "Ann Lee <ann@acme.example>",
            "my_response": "needsAction", "meet_link": "https://meet.google.com/abc-defg-hij",
            "url": "https://www.google.com/calendar/event?eid=ZXZ0", "attendee_count": 2}]})
    );
    // An end before the start is refused before anything is sent.
    let (r, reqs) = MockUpstream::new()
        .call(&LIST_EVENTS, json!({"time_min": "2026-03-02T00:00:00Z", "time_max": "2026-03-01T00:00:00Z"}));
    assert!(message(&r.unwrap_err()).contains("time_max must be after time_min"));
    assert!(reqs.is_empty());
}

#[test]
fn create_event_sends_start_end_and_guests() {
    let (out, reqs) = MockUpstream::new().json(event()).ok(
        &CREATE_EVENT,
        json!({"summary": "Design review", "start": "2026-03-02T10:00:00", "end": "2026-03-02T11:00:00", "time_zone": "Europe/Berlin",
               "attendees": ["ann@acme.example"], "location": "Room 4", "reminders_minutes": [10], "send_updates": "none"}),
    );
    let (start, end) = times::event_span("2026-03-02T10:00:00", "2026-03-02T11:00:00", Some("Europe/Berlin")).unwrap();
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/calendars/primary/events", "query": [["sendUpdates", "none"]], "body": {
            "summary": "Design review", "start": start, "end": end, "attendees": [{"email": "ann@acme.example"}],
            "location": "Room 4", "reminders": {"useDefault": false, "overrides": [{"method": "popup", "minutes": 10}]}}})
    );
    assert_eq!(out["attendees"][1], json!({"email": "me@acme.example", "response": "needsAction", "self": true}));
    for (args, why) in [
        (
            json!({"summary": "x", "start": "2026-03-02T10:00:00Z", "end": "2026-03-02T11:00:00Z", "attendees": ["Eve <eve@evil.example>"]}),
            "is not an email address",
        ),
        (json!({"summary": "x", "start": "2026-03-02T11:00:00Z", "end": "2026-03-02T10:00:00Z"}), "is not after start"),
    ] {
        let (r, reqs) = MockUpstream::new().call(&CREATE_EVENT, args);
        assert!(message(&r.unwrap_err()).contains(why), "{why}");
        assert!(reqs.is_empty());
    }
}

/// delete_event: both ids are segments; the answer says who was told.
#[test]
fn delete_event_encodes_both_ids() {
    let (out, reqs) = MockUpstream::new()
        .answer(204, Vec::new())
        .ok(&DELETE_EVENT, json!({"event_id": "../../users/me", "send_updates": "external_only"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "DELETE", "path": "/calendars/primary/events/..%2F..%2Fusers%2Fme", "query": [["sendUpdates", "externalOnly"]], "body": null})
    );
    assert_eq!(out, json!({"event_id": "../../users/me", "deleted": true, "guests_notified": "externalOnly"}));
}

/// get_free_busy: busy blocks per calendar, the free slots between them in the caller's offset;
/// a calendar Google cannot see is named and left out of the free slots.
#[test]
fn get_free_busy_finds_the_gaps() {
    let fb = json!({"kind": "calendar#freeBusy", "timeMin": "2026-03-02T08:00:00.000Z", "timeMax": "2026-03-02T12:00:00.000Z", "calendars": {
        "ann@acme.example": {"busy": [{"start": "2026-03-02T09:00:00Z", "end": "2026-03-02T10:00:00Z"}]},
        "bob@acme.example": {"busy": [{"start": "2026-03-02T09:30:00Z", "end": "2026-03-02T10:30:00Z"}]},
        "ghost@acme.example": {"errors": [{"domain": "global", "reason": "notFound"}], "busy": []}}});
    let (out, reqs) = MockUpstream::new().json(fb).ok(
        &GET_FREE_BUSY,
        json!({"time_min": "2026-03-02T09:00:00+01:00", "time_max": "2026-03-02T13:00:00+01:00",
               "calendars": ["ann@acme.example", "bob@acme.example", " ghost@acme.example "], "min_free_minutes": 45}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "POST", "path": "/freeBusy", "query": [], "body": {"timeMin": "2026-03-02T09:00:00+01:00",
            "timeMax": "2026-03-02T13:00:00+01:00",
            "items": [{"id": "ann@acme.example"}, {"id": "bob@acme.example"}, {"id": "ghost@acme.example"}]}})
    );
    assert_eq!(
        out["free"],
        json!([{"start": "2026-03-02T09:00:00+01:00", "end": "2026-03-02T10:00:00+01:00", "minutes": 60},
               {"start": "2026-03-02T11:30:00+01:00", "end": "2026-03-02T13:00:00+01:00", "minutes": 90}])
    );
    assert_eq!(
        out["calendars"][2],
        json!({"calendar": "ghost@acme.example", "busy": [], "error": "no calendar found (or not shared with you)"})
    );
    assert!(out["note"].as_str().unwrap().contains("ghost@acme.example"));
    let (r, reqs) = MockUpstream::new().call(
        &GET_FREE_BUSY,
        json!({"time_min": "2026-03-02T09:00:00Z", "time_max": "2026-03-02T10:00:00Z", "calendars": [" "]}),
    );
    assert!(message(&r.unwrap_err()).contains("at least one calendar"));
    assert!(reqs.is_empty());
}

/// get_event: one read in the time zone asked for, shaped with its attendees and their answers.
#[test]
fn get_event_reads_attendees_and_answers() {
    let (out, reqs) = MockUpstream::new().json(event()).ok(
        &GET_EVENT,
        json!({"event_id": "evt123", "calendar_id": "team@group.calendar.google.com", "time_zone": "Europe/Berlin"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/calendars/team%40group.calendar.google.com/events/evt123", "body": null,
               "query": [["timeZone", "Europe/Berlin"]]})
    );
    assert_eq!(
        out,
        json!({"id": "evt123", "summary": "Design review", "start": "2026-03-02T10:00:00+01:00", "end": "2026-03-02T11:00:00+01:00",
            "time_zone": "Europe/Berlin", "location": "Room 4", "organizer": "Ann Lee <ann@acme.example>", "creator": "ann@acme.example",
            "my_response": "needsAction", "meet_link": "https://meet.google.com/abc-defg-hij",
            "url": "https://www.google.com/calendar/event?eid=ZXZ0", "attendees": [
                {"email": "ann@acme.example", "response": "accepted", "organizer": true},
                {"email": "me@acme.example", "response": "needsAction", "self": true}]})
    );
}

/// update_event: a guest added is merged into the current list (read first); the patch carries
/// only what changes, and guests are notified by default.
#[test]
fn update_event_merges_added_guests_and_patches() {
    let mut updated = event();
    updated["summary"] = json!("Design review (moved)");
    let (out, reqs) = MockUpstream::new().json(event()).json(updated).ok(
        &UPDATE_EVENT,
        json!({"event_id": "evt123", "summary": "Design review (moved)", "add_attendees": ["Carol@acme.example"], "remove_attendees": ["ann@acme.example"]}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/calendars/primary/events/evt123", "query": [], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PATCH", "path": "/calendars/primary/events/evt123", "query": [["sendUpdates", "all"]],
            "body": {"summary": "Design review (moved)", "attendees": [{"email": "me@acme.example", "self": true, "responseStatus": "needsAction"},
                {"email": "Carol@acme.example"}]}})
    );
    assert_eq!(out["summary"], json!("Design review (moved)"));
    // Nothing to change, or a guest who is not there: refused before the patch.
    let (r, reqs) = MockUpstream::new().call(&UPDATE_EVENT, json!({"event_id": "evt123"}));
    assert!(message(&r.unwrap_err()).contains("nothing to change"));
    assert!(reqs.is_empty());
    let (r, reqs) = MockUpstream::new()
        .json(event())
        .call(&UPDATE_EVENT, json!({"event_id": "evt123", "remove_attendees": ["zed@acme.example"]}));
    assert!(message(&r.unwrap_err()).contains("zed@acme.example is not a guest of this event"));
    assert_eq!(reqs.len(), 1);
}

/// update_rsvp: the user's own attendee entry gets the answer and note; the others go back as
/// they were.
#[test]
fn update_rsvp_answers_for_the_user_only() {
    let mut updated = event();
    updated["attendees"][1] =
        json!({"email": "me@acme.example", "self": true, "responseStatus": "declined", "comment": "On leave"});
    let (out, reqs) = MockUpstream::new().json(event()).json(updated).ok(
        &UPDATE_RSVP,
        json!({"event_id": "evt123", "response": "declined", "comment": "On leave", "send_updates": "none"}),
    );
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/calendars/primary/events/evt123", "query": [], "body": null})
    );
    assert_eq!(
        sent(&reqs[1]),
        json!({"method": "PATCH", "path": "/calendars/primary/events/evt123", "query": [["sendUpdates", "none"]],
               "body": {"attendees": [{"email": "ann@acme.example", "organizer": true, "responseStatus": "accepted"},
                   {"email": "me@acme.example", "self": true, "responseStatus": "declined", "comment": "On leave"}]}})
    );
    assert_eq!(
        out,
        json!({"event_id": "evt123", "summary": "Design review", "start": "2026-03-02T10:00:00+01:00",
               "organizer": "Ann Lee <ann@acme.example>", "response": "declined", "comment": "On leave"})
    );
    // The organiser has no invitation to answer.
    let mut mine = event();
    mine["organizer"] = json!({"email": "me@acme.example", "self": true});
    mine["attendees"] = json!([{"email": "ann@acme.example", "responseStatus": "accepted"}]);
    let (r, reqs) =
        MockUpstream::new().json(mine).call(&UPDATE_RSVP, json!({"event_id": "evt123", "response": "accepted"}));
    assert!(message(&r.unwrap_err()).contains("you organise this event"));
    assert_eq!(reqs.len(), 1);
}

/// list_calendars: the user's calendar list with the name they chose, only true flags kept,
/// paged by cursor.
#[test]
fn list_calendars_pages_and_prefers_the_users_name() {
    let body = json!({"kind": "calendar#calendarList", "nextPageToken": "cl2", "items": [
        {"kind": "calendar#calendarListEntry", "id": "me@acme.example", "summary": "me@acme.example", "timeZone": "Europe/Berlin",
         "accessRole": "owner", "primary": true, "backgroundColor": "#9fe1e7"},
        {"kind": "calendar#calendarListEntry", "id": "team@group.calendar.google.com", "summary": "Team", "summaryOverride": "Team rota",
         "description": "On-call", "timeZone": "UTC", "accessRole": "reader", "hidden": false}]});
    let (out, reqs) = MockUpstream::new()
        .json(body)
        .ok(&LIST_CALENDARS, json!({"min_access_role": "reader", "show_hidden": true, "limit": 2, "cursor": "cl1"}));
    assert_eq!(
        sent(&reqs[0]),
        json!({"method": "GET", "path": "/users/me/calendarList", "body": null, "query": [["maxResults", "2"],
            ["minAccessRole", "reader"], ["showHidden", "true"], ["pageToken", "cl1"]]})
    );
    assert_eq!(
        out,
        json!({"next_cursor": "cl2", "calendars": [
            {"id": "me@acme.example", "name": "me@acme.example", "time_zone": "Europe/Berlin", "access_role": "owner", "primary": true},
            {"id": "team@group.calendar.google.com", "name": "Team rota", "description": "On-call", "time_zone": "UTC", "access_role": "reader"}]})
    );
}
