//! Times into Calendar's shape: RFC 3339 with an offset, a local time with an IANA zone, or a date
//! for all-day events (exclusive end); and the free gaps between busy intervals.

use serde_json::{Value, json};

use crate::api::ToolError;
use crate::google::{invalid, parse_date, parse_datetime};

/// `2026-03-02T09:00` and `2026-03-02T09:00+01:00` gain their seconds.
fn with_seconds(s: &str) -> String {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() >= 16 && b[10] == b'T' && b[13] == b':' && (b.len() == 16 || matches!(b[16], b'+' | b'-' | b'Z' | b'z'))
    {
        format!("{}:00{}", &s[..16], &s[16..])
    } else {
        s.to_string()
    }
}

/// One end of an event in Google's form, and a comparable instant (local times compare as local).
pub(super) fn event_time(path: &str, value: &str, time_zone: Option<&str>) -> Result<(Value, i64, bool), ToolError> {
    let v = value.trim();
    if let Some(days) = parse_date(v) {
        return Ok((json!({ "date": v }), days * 86_400, true));
    }
    let v = with_seconds(v);
    match parse_datetime(&v) {
        Some((secs, Some(_))) => {
            let mut t = json!({ "dateTime": v });
            if let Some(tz) = time_zone {
                t["timeZone"] = json!(tz);
            }
            Ok((t, secs, false))
        }
        Some((secs, None)) => match time_zone {
            Some(tz) => Ok((json!({"dateTime": v, "timeZone": tz}), secs, false)),
            None => Err(invalid(
                path,
                format!(
                    "'{value}' has no UTC offset; add one (e.g. '{v}+01:00') or give time_zone (e.g. 'Europe/Berlin')"
                ),
            )),
        },
        None => Err(invalid(
            path,
            format!(
                "'{value}' is not a time; use '2026-03-02T09:00:00+01:00', a local '2026-03-02T09:00' with time_zone, or a date '2026-03-02' for all-day"
            ),
        )),
    }
}

/// Start and end in Google's form, checked for order and kind.
pub(super) fn event_span(start: &str, end: &str, time_zone: Option<&str>) -> Result<(Value, Value), ToolError> {
    let (s, s_at, s_day) = event_time("/start", start, time_zone)?;
    let (e, e_at, e_day) = event_time("/end", end, time_zone)?;
    if s_day != e_day {
        return Err(invalid("/end", "start and end must both be dates (all-day) or both be date-times"));
    }
    if e_at <= s_at {
        let hint =
            if s_day { "; all-day ends are exclusive, so a one-day event on 2026-03-02 ends 2026-03-03" } else { "" };
        return Err(invalid("/end", format!("end {end} is not after start {start}{hint}")));
    }
    Ok((s, e))
}

/// Gaps in `busy` (merged) inside `window` that last at least `min_len` seconds.
pub(super) fn free_slots(window: (i64, i64), mut busy: Vec<(i64, i64)>, min_len: i64) -> Vec<(i64, i64)> {
    busy.sort_unstable();
    let mut out = Vec::new();
    let mut cursor = window.0;
    for (s, e) in busy {
        let (s, e) = (s.max(window.0), e.min(window.1));
        if e <= s {
            continue;
        }
        if s > cursor && s - cursor >= min_len {
            out.push((cursor, s));
        }
        cursor = cursor.max(e);
    }
    if window.1 > cursor && window.1 - cursor >= min_len {
        out.push((cursor, window.1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_times_take_offsets_local_times_and_dates() {
        let (t, _, day) = event_time("/start", "2026-03-02T09:00:00+01:00", None).unwrap();
        assert_eq!((t, day), (json!({"dateTime": "2026-03-02T09:00:00+01:00"}), false));
        let (t, _, _) = event_time("/start", "2026-03-02T09:30", Some("Europe/Berlin")).unwrap();
        assert_eq!(t, json!({"dateTime": "2026-03-02T09:30:00", "timeZone": "Europe/Berlin"}));
        let (t, _, _) = event_time("/start", "2026-03-02T09:30Z", None).unwrap();
        assert_eq!(t, json!({"dateTime": "2026-03-02T09:30:00Z"}));
        let (t, _, day) = event_time("/start", "2026-03-02", None).unwrap();
        assert_eq!((t, day), (json!({"date": "2026-03-02"}), true));
        assert!(event_time("/start", "2026-03-02T09:30", None).is_err(), "a local time needs a zone");
        assert!(event_time("/start", "next tuesday", None).is_err());
    }

    #[test]
    fn spans_are_ordered_and_of_one_kind() {
        assert!(event_span("2026-03-02T10:00:00Z", "2026-03-02T11:00:00+01:00", None).is_err(), "11:00+01 is 10:00Z");
        assert!(event_span("2026-03-02", "2026-03-02", None).is_err(), "all-day ends are exclusive");
        assert!(event_span("2026-03-02", "2026-03-03", None).is_ok());
        assert!(event_span("2026-03-02", "2026-03-02T10:00:00Z", None).is_err());
    }

    #[test]
    fn free_slots_are_the_gaps_between_merged_busy_times() {
        let window = (0, 10 * 3600);
        let busy = vec![(3600, 7200), (5400, 9000), (4 * 3600, 5 * 3600), (11 * 3600, 12 * 3600)];
        assert_eq!(free_slots(window, busy.clone(), 1), vec![(0, 3600), (9000, 4 * 3600), (5 * 3600, 10 * 3600)]);
        assert_eq!(free_slots(window, busy, 3 * 3600), vec![(5 * 3600, 10 * 3600)]);
        assert_eq!(free_slots(window, vec![(0, 10 * 3600)], 1), vec![]);
    }
}
