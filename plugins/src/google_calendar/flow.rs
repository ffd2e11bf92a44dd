//! The outbound-data guard's view of Google Calendar (`shared/design/flows.md` sections 2 and 3).
//!
//! The user's side: the primary calendar's `id` (the user's address) from
//! `GET /users/me/calendarList/primary`. An event's audience is its guests (and, for an existing
//! event, its organizer) plus whoever can read the calendar it is written into:
//!
//! - `google_calendar_create_event`: every guest in `attendees`; outside guests make it outside.
//! - `google_calendar_update_event`: looks the event up (`GET .../events/{id}`): its current
//!   guests and organizer read what the update writes (outside ones make it outside), and a guest
//!   the update adds who is outside and was not on the event is a **grant**: the invitation sends
//!   the whole event (description, notes), whatever the call carries.
//! - The calendar: `primary` (or the user's own address) is the user's; any other calendar is
//!   judged by its access list (`GET /calendars/{id}/acl`): a `default` scope (public calendar),
//!   or a user, group or domain outside, makes the write outside. Only the calendar's owner may
//!   read the list; a failed lookup is an error (counted as outside).
//! - Deleting an event and answering an invitation are inside (flows.md: an RSVP is inside).
//!
//! Rooms (`resource: true` guests at `resource.calendar.google.com`) are the organisation's own.

use std::sync::Arc;

use serde_json::Value;

use super::{PRIMARY, event_path};
use crate::api::*;
use crate::flow::{Party, Side, Verdict, arg_str, arg_strings, undecided};

/// The user's side: the primary calendar's id (the user's address).
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let cal = up.send(HttpRequest::get("/users/me/calendarList/primary")).await?.json()?;
        match cal["id"].as_str().filter(|e| e.contains('@')) {
            Some(email) => Ok(Side::from_email(email)),
            None => Err(undecided("Calendar's primary calendar has no address id")),
        }
    })
}

/// Who can read `calendar_id`, beyond the event's guests.
async fn calendar_verdict(up: &dyn Upstream, calendar_id: &str, side: &Side) -> Result<Verdict, ToolError> {
    let id = calendar_id.trim();
    if id.eq_ignore_ascii_case(PRIMARY) || side.emails.iter().any(|e| e.eq_ignore_ascii_case(id)) {
        return Ok(Verdict::Inside);
    }
    let acl = up.send(HttpRequest::get(format!("/calendars/{}/acl", encode_segment(id)))).await?.json()?;
    let Some(rules) = acl["items"].as_array() else {
        return Err(undecided(format!("Calendar did not list who can read {id}")));
    };
    let mut verdict = Verdict::Inside;
    for r in rules {
        if r["role"].as_str() == Some("none") {
            continue;
        }
        let value = r["scope"]["value"].as_str().unwrap_or_default();
        verdict = verdict.and(match r["scope"]["type"].as_str() {
            Some("default") => Verdict::outside(Party::Anyone(format!("anyone: the calendar {id} is public"))),
            Some("domain") if side.has_domain(value) => Verdict::Inside,
            Some("domain") => Verdict::outside(Party::Domain(value.to_ascii_lowercase())),
            Some("user") | Some("group") => Verdict::for_emails(side, [value]),
            other => return Err(undecided(format!("an access rule of unknown scope {other:?} on {id}"))),
        });
    }
    Ok(verdict)
}

fn is_room(a: &Value) -> bool {
    a["resource"].as_bool() == Some(true)
        && a["email"].as_str().is_some_and(|e| e.to_ascii_lowercase().ends_with("@resource.calendar.google.com"))
}

fn as_grant(v: Verdict) -> Verdict {
    match v {
        Verdict::Outside { parties, .. } => Verdict::Outside { parties, grants: true },
        inside => inside,
    }
}

fn calendar_arg(args: &Value) -> String {
    arg_str(args, "calendar_id").unwrap_or(PRIMARY).to_string()
}

/// `google_calendar_create_event`: the guests and the calendar.
pub(super) fn create_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let guests = arg_strings(&args, "attendees");
        let verdict = Verdict::for_emails(&side, guests.iter().map(String::as_str));
        Ok(verdict.and(calendar_verdict(&*up, &calendar_arg(&args), &side).await?))
    })
}

/// `google_calendar_update_event`: the event's current guests and organizer, the guests added
/// (outside ones are grants), and the calendar.
pub(super) fn update_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let calendar = calendar_arg(&args);
        let event_id = arg_str(&args, "event_id").ok_or_else(|| undecided("no event_id given"))?;
        let event = up.send(HttpRequest::get(event_path(&calendar, event_id))).await?.json()?;
        if !event.is_object() || event.get("id").is_none() {
            return Err(undecided(format!("Calendar returned no event {event_id}")));
        }
        let current: Vec<&Value> =
            event["attendees"].as_array().into_iter().flatten().filter(|a| !is_room(a)).collect();
        let mut existing: Vec<String> =
            current.iter().filter_map(|a| a["email"].as_str()).map(str::to_ascii_lowercase).collect();
        if event["organizer"]["self"].as_bool() != Some(true)
            && let Some(o) = event["organizer"]["email"].as_str()
        {
            existing.push(o.to_ascii_lowercase());
        }
        let mut verdict = Verdict::for_emails(&side, existing.iter().map(String::as_str));
        let added: Vec<String> = arg_strings(&args, "attendees")
            .into_iter()
            .chain(arg_strings(&args, "add_attendees"))
            .filter(|a| !existing.iter().any(|e| e.eq_ignore_ascii_case(a.trim())))
            .collect();
        verdict = verdict.and(as_grant(Verdict::for_emails(&side, added.iter().map(String::as_str))));
        Ok(verdict.and(calendar_verdict(&*up, &calendar, &side).await?))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Party, Results, Side, Verdict};
    use crate::mock::MockUpstream;

    fn me() -> Side {
        Side::from_email("ann@acme.example")
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_primary_calendar() {
        let (s, reqs) = MockUpstream::new()
            .json(json!({"id": "ann@acme.example", "summary": "Ann"}))
            .side(INTEGRATION.side.unwrap());
        assert_eq!(s.unwrap(), me());
        assert_eq!(reqs[0].path, "/users/me/calendarList/primary");
        assert!(MockUpstream::new().json(json!({"summary": "x"})).side(INTEGRATION.side.unwrap()).0.is_err());
    }

    fn ev(extra: Value) -> Value {
        let mut a = json!({"summary": "s", "start": "2026-03-02", "end": "2026-03-03"});
        a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        a
    }

    #[test]
    fn create_checks_each_guest() {
        let v = MockUpstream::new().verdict(
            &CREATE_EVENT,
            ev(json!({"attendees": ["Bob@Acme.Example", "c@eu.acme.example"]})),
            &me(),
        );
        assert_eq!(v, Verdict::Inside);
        for bad in ["m@acme.example.evil.example", "m@evil-acme.example", "M@EVIL.EXAMPLE"] {
            let v =
                MockUpstream::new().verdict(&CREATE_EVENT, ev(json!({"attendees": ["bob@acme.example", bad]})), &me());
            assert!(matches!(v, Verdict::Outside { grants: false, .. }), "{bad}");
        }
    }

    #[test]
    fn other_calendars_are_judged_by_their_access_list() {
        let own = json!({"items": [{"role": "owner", "scope": {"type": "user", "value": "ann@acme.example"}},
                                   {"role": "reader", "scope": {"type": "domain", "value": "acme.example"}}]});
        let (v, reqs) = MockUpstream::new().json(own).audience(
            &CREATE_EVENT,
            ev(json!({"calendar_id": "team@group.calendar.google.com"})),
            &me(),
        );
        assert_eq!(v.unwrap(), Verdict::Inside);
        assert_eq!(reqs[0].path, "/calendars/team%40group.calendar.google.com/acl");
        let public = json!({"items": [{"role": "reader", "scope": {"type": "default"}}]});
        let v = MockUpstream::new().json(public).verdict(&CREATE_EVENT, ev(json!({"calendar_id": "c1"})), &me());
        assert!(matches!(v, Verdict::Outside { .. }));
        let err = ToolError::Upstream { status: 403, message: "forbidden".into(), retry_after: None };
        assert!(
            MockUpstream::new().error(err).audience(&CREATE_EVENT, ev(json!({"calendar_id": "c1"})), &me()).0.is_err()
        );
        // The user's own address is the primary calendar: no lookup.
        assert_eq!(
            MockUpstream::new().verdict(&CREATE_EVENT, ev(json!({"calendar_id": "ANN@acme.example"})), &me()),
            Verdict::Inside
        );
    }

    fn event(attendees: Value) -> Value {
        json!({"id": "e1", "description": "board notes", "organizer": {"email": "ann@acme.example", "self": true}, "attendees": attendees})
    }

    #[test]
    fn adding_an_outside_guest_grants_the_whole_event() {
        let up = MockUpstream::new().json(event(json!([{"email": "bob@acme.example"}])));
        let (v, reqs) =
            up.audience(&UPDATE_EVENT, json!({"event_id": "e1", "add_attendees": ["m@evil.example"]}), &me());
        assert_eq!(v.unwrap(), Verdict::grant(Party::Email("m@evil.example".into())));
        assert_eq!(reqs[0].path, "/calendars/primary/events/e1");
        let up = MockUpstream::new().json(event(json!([])));
        let v = up.verdict(
            &UPDATE_EVENT,
            json!({"event_id": "e1", "attendees": ["bob@acme.example", "\"bob@acme.example\" <m@evil.example>"]}),
            &me(),
        );
        assert!(matches!(v, Verdict::Outside { grants: true, .. }));
        // An inside guest added to an own event: inside.
        let up = MockUpstream::new().json(event(
            json!([{"email": "bob@acme.example"}, {"email": "c_1@resource.calendar.google.com", "resource": true}]),
        ));
        assert_eq!(
            up.verdict(&UPDATE_EVENT, json!({"event_id": "e1", "add_attendees": ["carol@acme.example"]}), &me()),
            Verdict::Inside
        );
    }

    #[test]
    fn updating_an_event_with_outside_guests_is_outside() {
        let up = MockUpstream::new().json(event(json!([{"email": "m@evil.example"}])));
        let v = up.verdict(&UPDATE_EVENT, json!({"event_id": "e1", "description": "new notes"}), &me());
        assert_eq!(v, Verdict::outside(Party::Email("m@evil.example".into())));
        let up = MockUpstream::new().json(json!({"id": "e1", "organizer": {"email": "boss@evil.example"}}));
        let v = up.verdict(&UPDATE_EVENT, json!({"event_id": "e1", "summary": "x"}), &me());
        assert_eq!(v, Verdict::outside(Party::Email("boss@evil.example".into())));
        let err = ToolError::Upstream { status: 404, message: "Not Found".into(), retry_after: None };
        assert!(
            MockUpstream::new()
                .error(err)
                .audience(&UPDATE_EVENT, json!({"event_id": "e1", "summary": "x"}), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .json(json!({}))
                .audience(&UPDATE_EVENT, json!({"event_id": "e1", "summary": "x"}), &me())
                .0
                .is_err()
        );
    }

    #[test]
    fn rsvp_and_delete_are_inside() {
        assert_eq!(
            MockUpstream::new().verdict(&UPDATE_RSVP, json!({"event_id": "e1", "response": "accepted"}), &me()),
            Verdict::Inside
        );
        assert_eq!(MockUpstream::new().verdict(&DELETE_EVENT, json!({"event_id": "e1"}), &me()), Verdict::Inside);
    }
}
