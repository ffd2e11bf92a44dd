//! time_get_current: the current time in the user's zone and UTC, zone conversion, and relative
//! expressions ("next Tuesday 3pm", "in 2 hours", "tomorrow 9:00") resolved to RFC 3339, because
//! agents routinely mis-date "tomorrow" and drop time zones in calendar, Jira and Sentry calls.

use std::sync::Arc;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, MappedLocalTime, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
    Weekday,
};
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

/// An IANA time zone for chrono's calendar arithmetic. The rules come from jiff's database:
/// the system's copy on Linux and macOS (`/usr/share/zoneinfo`, kept current by the OS's
/// updates), a copy bundled into the binary on Windows, which has none. (chrono-tz compiled the
/// whole database into every build as about 1.3 MB of tables; docs/footprint.md.)
#[derive(Clone, Debug)]
pub struct Tz {
    name: Arc<str>,
    rules: jiff::tz::TimeZone,
}

/// A zone's offset at one instant, with the zone (chrono rebuilds the zone from it).
#[derive(Clone, Debug)]
pub struct ZoneOffset {
    zone: Tz,
    fixed: FixedOffset,
}

impl chrono::Offset for ZoneOffset {
    fn fix(&self) -> FixedOffset {
        self.fixed
    }
}

impl std::fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fixed.fmt(f)
    }
}

/// Years jiff's calendar covers; a time outside them is refused ("out of range").
const YEARS: std::ops::RangeInclusive<i32> = -9999..=9999;

impl Tz {
    pub fn utc() -> Tz {
        Tz { name: "UTC".into(), rules: jiff::tz::TimeZone::UTC }
    }

    /// The zone an IANA name ("Europe/Berlin", any case) names, or `None`. A name is looked up
    /// in the database's list of zones, never used as a path: "../../etc/passwd" is no zone.
    pub fn named(name: &str) -> Option<Tz> {
        let plausible = !name.is_empty()
            && name.len() <= 64
            && name.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'));
        if !plausible {
            return None;
        }
        let rules = jiff::tz::TimeZone::get(name).ok()?;
        let name = rules.iana_name().unwrap_or(name).into();
        Some(Tz { name, rules })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn offset(&self, offset: jiff::tz::Offset) -> ZoneOffset {
        let fixed = FixedOffset::east_opt(offset.seconds()).unwrap_or(FixedOffset::east_opt(0).expect("zero offset"));
        ZoneOffset { zone: self.clone(), fixed }
    }
}

impl TimeZone for Tz {
    type Offset = ZoneOffset;

    fn from_offset(offset: &ZoneOffset) -> Tz {
        offset.zone.clone()
    }

    fn offset_from_local_date(&self, local: &NaiveDate) -> MappedLocalTime<ZoneOffset> {
        self.offset_from_local_datetime(&local.and_time(NaiveTime::MIN))
    }

    fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> MappedLocalTime<ZoneOffset> {
        use jiff::tz::AmbiguousOffset;
        let civil = i16::try_from(local.year()).ok().filter(|_| YEARS.contains(&local.year())).and_then(|year| {
            jiff::civil::DateTime::new(
                year,
                local.month() as i8,
                local.day() as i8,
                chrono::Timelike::hour(local) as i8,
                chrono::Timelike::minute(local) as i8,
                chrono::Timelike::second(local).min(59) as i8,
                0,
            )
            .ok()
        });
        let Some(civil) = civil else { return MappedLocalTime::None };
        match self.rules.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => MappedLocalTime::Single(self.offset(offset)),
            AmbiguousOffset::Gap { .. } => MappedLocalTime::None,
            // The earlier instant first: the offset before the clocks went back.
            AmbiguousOffset::Fold { before, after } => {
                MappedLocalTime::Ambiguous(self.offset(before), self.offset(after))
            }
        }
    }

    fn offset_from_utc_date(&self, utc: &NaiveDate) -> ZoneOffset {
        self.offset_from_utc_datetime(&utc.and_time(NaiveTime::MIN))
    }

    fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> ZoneOffset {
        let offset = jiff::Timestamp::from_second(utc.and_utc().timestamp())
            .map(|t| self.rules.to_offset(t))
            .unwrap_or(jiff::tz::Offset::UTC);
        self.offset(offset)
    }
}

/// The computer's IANA zone, or UTC when it cannot be determined.
fn local_zone() -> Tz {
    std::env::var("TZ")
        .ok()
        .and_then(|z| Tz::named(z.trim_start_matches(':')))
        .or_else(|| iana_time_zone::get_timezone().ok().and_then(|z| Tz::named(&z)))
        .unwrap_or_else(Tz::utc)
}

async fn get_current(_app: Arc<App>, args: GetCurrent) -> Result<Value, ToolError> {
    let tz: Tz = match &args.timezone {
        Some(name) => Tz::named(name).ok_or_else(|| {
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
    if !YEARS.contains(&naive.year()) {
        return Err("that date is out of range".into());
    }
    tz.from_local_datetime(&naive)
        .earliest()
        .ok_or_else(|| "that local time does not exist (a clock change skips it)".to_string())
}

fn add_units(now: DateTime<Tz>, n: i64, unit: &str) -> Result<DateTime<Tz>, String> {
    let unit = unit.trim_end_matches('s');
    let out_of_range = || "that date is out of range".to_string();
    let d = match unit {
        "second" | "sec" => Duration::try_seconds(n),
        "minute" | "min" => Duration::try_minutes(n),
        "hour" | "hr" | "h" => Duration::try_hours(n),
        "day" | "d" => Duration::try_days(n),
        "week" | "wk" | "w" => Duration::try_weeks(n),
        "month" | "year" => {
            let per = if unit == "year" { 12 } else { 1 };
            let months =
                n.unsigned_abs().checked_mul(per).and_then(|m| u32::try_from(m).ok()).ok_or_else(out_of_range)?;
            let months = chrono::Months::new(months);
            let moved = if n >= 0 { now.checked_add_months(months) } else { now.checked_sub_months(months) };
            return moved.filter(|t| YEARS.contains(&t.year())).ok_or_else(out_of_range);
        }
        other => {
            return Err(format!("'{other}' is not a unit (minutes, hours, days, weeks, months, years)"));
        }
    }
    .ok_or_else(out_of_range)?;
    now.checked_add_signed(d).filter(|t| YEARS.contains(&t.year())).ok_or_else(|| "that date is out of range".into())
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
        let now = at("2026-11-30T09:15:00Z", Tz::named("Europe/Berlin").unwrap());
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
    fn zones_come_from_the_database_by_name_never_by_path() {
        assert_eq!(Tz::named("europe/berlin").unwrap().name(), "Europe/Berlin");
        assert_eq!(Tz::named("America/New_York").unwrap().name(), "America/New_York");
        for hostile in [
            "../../../../etc/passwd",
            "/etc/localtime",
            "Europe/../../../etc/passwd",
            "Europe//Berlin",
            "./UTC",
            "",
            "Not/A_Zone",
            "Europe/Berlin\0",
            &"A".repeat(100_000),
        ] {
            assert!(Tz::named(hostile).is_none(), "{hostile:.40}");
        }
    }

    #[test]
    fn clock_changes_are_the_zones_own() {
        // Berlin: summer time ends 2026-10-25 03:00 (+02:00 -> +01:00), starts 2026-03-29 02:00.
        let berlin = Tz::named("Europe/Berlin").unwrap();
        let now = at("2026-10-20T08:00:00Z", berlin.clone());
        assert_eq!(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, false), "2026-10-20T10:00:00+02:00");
        // 02:30 happens twice: the earlier one (still summer time) is meant.
        let fold = resolve("2026-10-25 02:30", now.clone()).unwrap();
        assert_eq!(fold.to_rfc3339_opts(chrono::SecondsFormat::Secs, false), "2026-10-25T02:30:00+02:00");
        let gap = resolve("2026-03-29 02:30", now.clone()).unwrap_err();
        assert!(gap.contains("does not exist"), "{gap}");
        // Sydney is on summer time in December, behind Berlin's winter by ten hours.
        let sydney = at("2026-12-01T00:00:00Z", Tz::named("Australia/Sydney").unwrap());
        assert_eq!(sydney.to_rfc3339_opts(chrono::SecondsFormat::Secs, false), "2026-12-01T11:00:00+11:00");
        assert_eq!(describe(sydney)["utc_offset"], "+11:00");
    }

    #[test]
    fn far_dates_are_refused_not_a_panic() {
        let now = at("2026-11-30T09:15:00Z", Tz::utc());
        for far in [
            "in 99999999999999 weeks",
            "in 9223372036854775807 seconds",
            "in 99999999999 years",
            "in 5000000000 months",
            "in 10000 years",
            "9223372036854775807 days ago",
        ] {
            let err = resolve(far, now.clone()).unwrap_err();
            assert!(err.contains("out of range") || err.contains("not"), "{far}: {err}");
        }
        assert!(resolve("in 100 years", now).is_ok());
    }

    #[test]
    fn nonsense_is_refused() {
        let now = at("2026-11-30T09:15:00Z", Tz::utc());
        for bad in ["the day after the party", "in many days", "tomorrow 25pm", "in 3 fortnights"] {
            assert!(resolve(bad, now.clone()).is_err(), "{bad}");
        }
    }
}
