//! time_get_current: the current time in the user's zone and UTC, zone conversion, and relative
//! expressions ("next Tuesday 3pm", "in 2 hours", "tomorrow 9:00") resolved to RFC 3339, because
//! agents routinely mis-date "tomorrow" and drop time zones in calendar, Jira and Sentry calls.

use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Tz;
use plugins::api::{ArgProblem, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::builtin;
use crate::app::App;
use crate::registry::BuiltinSpec;

pub const GET_CURRENT: BuiltinSpec = builtin! {
    name: "time_get_current",
    namespace: "time",
    effect: Read,
    results: Public,
    args: GetCurrent,
    run: get_current,
    keywords: ["date", "today", "now", "clock", "timezone", "time zone", "convert time", "tomorrow", "next week", "what day", "utc"],
    description: "Current date and time in the user's time zone and UTC. Also converts a timestamp to another time zone, or resolves a relative expression like 'next Tuesday 3pm', 'tomorrow 9:00' or 'in 2 hours' to an exact RFC 3339 time.",
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetCurrent {
    /// IANA time zone, e.g. "Europe/Berlin" or "America/New_York". Default: the computer's zone.
    timezone: Option<String>,
    /// A time to resolve: "tomorrow 9am", "next friday", "in 3 days", "2 hours ago", "2026-12-01 15:00", or an RFC 3339 timestamp to convert.
    expression: Option<String>,
    /// Resolve relative expressions from this RFC 3339 time instead of now.
    reference_time: Option<String>,
}

fn bad(path: &str, message: String) -> ToolError {
    ToolError::InvalidArguments {
        message: message.clone(),
        problems: vec![ArgProblem { path: path.into(), problem: message }],
    }
}

/// The computer's IANA zone, or UTC when it cannot be determined.
fn local_zone() -> Tz {
    std::env::var("TZ")
        .ok()
        .and_then(|z| z.trim_start_matches(':').parse().ok())
        .or_else(|| iana_time_zone::get_timezone().ok().and_then(|z| z.parse().ok()))
        .unwrap_or(Tz::UTC)
}

async fn get_current(_app: Arc<App>, args: GetCurrent) -> Result<Value, ToolError> {
    let tz: Tz = match &args.timezone {
        Some(name) => name.parse().map_err(|_| {
            bad(
                "/timezone",
                format!(
                    "'{name}' is not an IANA time zone; use names like Europe/Paris, America/Chicago, Asia/Tokyo or UTC"
                ),
            )
        })?,
        None => local_zone(),
    };
    let reference: DateTime<Utc> = match &args.reference_time {
        Some(t) => DateTime::parse_from_rfc3339(t)
            .map_err(|_| bad("/reference_time", format!("'{t}' is not an RFC 3339 time like 2026-11-30T09:00:00Z")))?
            .with_timezone(&Utc),
        None => Utc::now(),
    };
    let mut out = json!({ "now": describe(reference.with_timezone(&tz)) });
    if let Some(expr) = &args.expression {
        let resolved = resolve(expr, reference.with_timezone(&tz)).map_err(|why| {
            bad("/expression", format!("could not understand '{expr}': {why}. Try forms like 'tomorrow 9am', 'next monday', 'in 2 hours', '3 days ago', '2026-12-01 15:00'"))
        })?;
        let mut r = describe(resolved);
        r["expression"] = json!(expr);
        out["resolved"] = r;
    }
    Ok(out)
}

fn describe(t: DateTime<Tz>) -> Value {
    json!({
        "local": t.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        "utc": t.with_timezone(&Utc).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "timezone": t.timezone().name(),
        "utc_offset": t.format("%:z").to_string(),
        "weekday": t.format("%A").to_string(),
        "date": t.format("%Y-%m-%d").to_string(),
        "unix": t.timestamp(),
    })
}

/// Resolves an expression relative to `now` (already in the target zone).
pub fn resolve(expr: &str, now: DateTime<Tz>) -> Result<DateTime<Tz>, String> {
    let tz = now.timezone();
    let text = expr.trim().to_lowercase();
    if text.is_empty() || text == "now" {
        return Ok(now);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(expr.trim()) {
        return Ok(t.with_timezone(&tz));
    }
    for fmt in ["%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(expr.trim(), fmt) {
            return local(tz, naive);
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(expr.trim(), "%Y-%m-%d") {
        return local(tz, d.and_time(NaiveTime::MIN));
    }
    let words: Vec<&str> = text.split_whitespace().filter(|w| *w != "at" && *w != "on").collect();
    // "in N units" / "N units ago"
    if words.first() == Some(&"in") && words.len() == 3 {
        let n: i64 = words[1].parse().map_err(|_| format!("'{}' is not a number", words[1]))?;
        return add_units(now, n, words[2]);
    }
    if words.len() == 3 && words[2] == "ago" {
        let n: i64 = words[0].parse().map_err(|_| format!("'{}' is not a number", words[0]))?;
        return add_units(now, -n, words[1]);
    }
    // A day word, optionally followed by a time of day.
    let (day, rest): (NaiveDate, &[&str]) = match words.as_slice() {
        ["today", rest @ ..] | ["tonight", rest @ ..] => (now.date_naive(), rest),
        ["tomorrow", rest @ ..] => (now.date_naive() + Duration::days(1), rest),
        ["yesterday", rest @ ..] => (now.date_naive() - Duration::days(1), rest),
        ["next", "week", rest @ ..] => (now.date_naive() + Duration::days(7), rest),
        ["next", w, rest @ ..] if weekday(w).is_some() => {
            (next_weekday(now.date_naive(), weekday(w).unwrap_or(Weekday::Mon), true), rest)
        }
        ["this", w, rest @ ..] if weekday(w).is_some() => {
            (next_weekday(now.date_naive(), weekday(w).unwrap_or(Weekday::Mon), false), rest)
        }
        ["last", w, rest @ ..] if weekday(w).is_some() => {
            (prev_weekday(now.date_naive(), weekday(w).unwrap_or(Weekday::Mon)), rest)
        }
        [w, rest @ ..] if weekday(w).is_some() => {
            (next_weekday(now.date_naive(), weekday(w).unwrap_or(Weekday::Mon), false), rest)
        }
        rest => (now.date_naive(), rest),
    };
    let time = match rest {
        [] => {
            if words.len() == rest.len() {
                return Err("no date or time found".into());
            }
            if text.starts_with("tonight") {
                NaiveTime::from_hms_opt(20, 0, 0).unwrap_or(NaiveTime::MIN)
            } else {
                NaiveTime::MIN
            }
        }
        parts => parse_time(&parts.join(" ")).ok_or_else(|| format!("'{}' is not a time of day", parts.join(" ")))?,
    };
    local(tz, day.and_time(time))
}

fn local(tz: Tz, naive: NaiveDateTime) -> Result<DateTime<Tz>, String> {
    tz.from_local_datetime(&naive)
        .earliest()
        .ok_or_else(|| "that local time does not exist (a clock change skips it)".to_string())
}

fn add_units(now: DateTime<Tz>, n: i64, unit: &str) -> Result<DateTime<Tz>, String> {
    let unit = unit.trim_end_matches('s');
    let d = match unit {
        "second" | "sec" => Duration::seconds(n),
        "minute" | "min" => Duration::minutes(n),
        "hour" | "hr" | "h" => Duration::hours(n),
        "day" | "d" => Duration::days(n),
        "week" | "wk" | "w" => Duration::weeks(n),
        "month" => {
            let months = chrono::Months::new(n.unsigned_abs() as u32);
            let moved = if n >= 0 { now.checked_add_months(months) } else { now.checked_sub_months(months) };
            return moved.ok_or_else(|| "that date is out of range".into());
        }
        "year" => {
            let months = chrono::Months::new((n.unsigned_abs() * 12) as u32);
            let moved = if n >= 0 { now.checked_add_months(months) } else { now.checked_sub_months(months) };
            return moved.ok_or_else(|| "that date is out of range".into());
        }
        other => {
            return Err(format!("'{other}' is not a unit (minutes, hours, days, weeks, months, years)"));
        }
    };
    now.checked_add_signed(d).ok_or_else(|| "that date is out of range".into())
}

fn weekday(w: &str) -> Option<Weekday> {
    Some(match w.trim_end_matches(',') {
        "monday" | "mon" => Weekday::Mon,
        "tuesday" | "tue" | "tues" => Weekday::Tue,
        "wednesday" | "wed" => Weekday::Wed,
        "thursday" | "thu" | "thurs" => Weekday::Thu,
        "friday" | "fri" => Weekday::Fri,
        "saturday" | "sat" => Weekday::Sat,
        "sunday" | "sun" => Weekday::Sun,
        _ => return None,
    })
}

/// The coming `target` day; `strictly_next` skips today even when today is that day.
fn next_weekday(from: NaiveDate, target: Weekday, strictly_next: bool) -> NaiveDate {
    let mut ahead = (7 + target.num_days_from_monday() as i64 - from.weekday().num_days_from_monday() as i64) % 7;
    if ahead == 0 && strictly_next {
        ahead = 7;
    }
    from + Duration::days(ahead)
}

fn prev_weekday(from: NaiveDate, target: Weekday) -> NaiveDate {
    let mut back = (7 + from.weekday().num_days_from_monday() as i64 - target.num_days_from_monday() as i64) % 7;
    if back == 0 {
        back = 7;
    }
    from - Duration::days(back)
}

/// "3pm", "3:30 pm", "15:00", "9", "noon", "midnight".
fn parse_time(s: &str) -> Option<NaiveTime> {
    let s = s.trim().replace(' ', "");
    match s.as_str() {
        "noon" | "midday" => return NaiveTime::from_hms_opt(12, 0, 0),
        "midnight" => return Some(NaiveTime::MIN),
        "morning" => return NaiveTime::from_hms_opt(9, 0, 0),
        "afternoon" => return NaiveTime::from_hms_opt(15, 0, 0),
        "evening" => return NaiveTime::from_hms_opt(19, 0, 0),
        _ => {}
    }
    let (body, pm) = if let Some(b) = s.strip_suffix("pm") {
        (b, Some(true))
    } else if let Some(b) = s.strip_suffix("am") {
        (b, Some(false))
    } else {
        (s.as_str(), None)
    };
    let (h, m) = match body.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None => (body.parse::<u32>().ok()?, 0),
    };
    let h = match pm {
        Some(true) if (1..=12).contains(&h) => h % 12 + 12,
        Some(false) if (1..=12).contains(&h) => h % 12,
        Some(_) => return None,
        None => h,
    };
    NaiveTime::from_hms_opt(h, m, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str, tz: Tz) -> DateTime<Tz> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&tz)
    }

    fn check(expr: &str, want_local: &str) {
        // Monday 30 November 2026, 10:15 in Berlin.
        let now = at("2026-11-30T09:15:00Z", chrono_tz::Europe::Berlin);
        let got = resolve(expr, now).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(got.to_rfc3339_opts(chrono::SecondsFormat::Secs, false), want_local, "{expr}");
    }

    #[test]
    fn relative_expressions() {
        check("now", "2026-11-30T10:15:00+01:00");
        check("tomorrow 9am", "2026-12-01T09:00:00+01:00");
        check("next Tuesday 3pm", "2026-12-01T15:00:00+01:00");
        check("next monday", "2026-12-07T00:00:00+01:00");
        check("monday at 14:30", "2026-11-30T14:30:00+01:00");
        check("last friday noon", "2026-11-27T12:00:00+01:00");
        check("in 2 hours", "2026-11-30T12:15:00+01:00");
        check("3 days ago", "2026-11-27T10:15:00+01:00");
        check("in 1 month", "2026-12-30T10:15:00+01:00");
        check("2026-12-24 18:00", "2026-12-24T18:00:00+01:00");
        check("2026-07-01T12:00:00Z", "2026-07-01T14:00:00+02:00");
        check("today 12:30 pm", "2026-11-30T12:30:00+01:00");
    }

    #[test]
    fn nonsense_is_refused() {
        let now = at("2026-11-30T09:15:00Z", Tz::UTC);
        for bad in ["the day after the party", "in many days", "tomorrow 25pm", "in 3 fortnights"] {
            assert!(resolve(bad, now).is_err(), "{bad}");
        }
    }
}
