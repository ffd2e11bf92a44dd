//! Calendar arithmetic at the tool boundary, on chrono (pure, no clock): dates an agent types to
//! days since the epoch, and Unix seconds to the `YYYY-MM-DD[THH:MM:SS]` text results show.
//!
//! Years print as at least four digits with no `+` sign (chrono's `%Y` would add one past 9999);
//! an instant chrono cannot hold (past year 262,143) has no text, and callers show `null`.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};

const EPOCH: NaiveDate = NaiveDate::from_ymd_opt(1970, 1, 1).expect("1970-01-01 is a date");

/// Days since 1970-01-01 of a valid calendar date (`None` for 2024-02-30 and the like).
pub fn days_from_date(y: i64, m: i64, d: i64) -> Option<i64> {
    let date = NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, u32::try_from(m).ok()?, u32::try_from(d).ok()?)?;
    Some(date.signed_duration_since(EPOCH).num_days())
}

/// Days since 1970-01-01 of day `d` counted from the first of month `m` (1-12) of year `y`, so
/// that day 31 of February runs on into March, as the Stripe and Slack date bounds always took it.
pub fn days_from_month_day(y: i64, m: i64, d: i64) -> Option<i64> {
    let first = days_from_date(y, m, 1)?;
    Some(first + d - 1)
}

fn wall_clock_of(secs: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp(secs, 0).map(|dt| dt.naive_utc())
}

/// The UTC calendar day holding `secs` as `YYYY-MM-DD`.
pub fn date_text(secs: i64) -> Option<String> {
    let d = wall_clock_of(secs)?.date();
    Some(format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day()))
}

/// `secs` as `YYYY-MM-DDTHH:MM:SS` on a UTC wall clock (no zone suffix: the caller adds one).
pub fn wall_clock_text(secs: i64) -> Option<String> {
    let t = wall_clock_of(secs)?;
    Some(format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year(), t.month(), t.day(), t.hour(), t.minute(), t.second()))
}

/// `secs` as RFC 3339 in UTC (`...Z`).
pub fn utc_text(secs: i64) -> Option<String> {
    wall_clock_text(secs).map(|t| t + "Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_days() {
        assert_eq!(days_from_date(1970, 1, 1), Some(0));
        assert_eq!(days_from_date(2024, 2, 29), Some(19_782));
        assert_eq!(days_from_date(2023, 2, 29), None);
        assert_eq!(days_from_month_day(2026, 2, 31), days_from_date(2026, 3, 3));
        assert_eq!(days_from_date(1969, 12, 31), Some(-1));
    }

    #[test]
    fn instants_as_text() {
        assert_eq!(utc_text(0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(utc_text(1_700_000_000).as_deref(), Some("2023-11-14T22:13:20Z"));
        assert_eq!(date_text(-1).as_deref(), Some("1969-12-31"));
        assert_eq!(utc_text(253_402_300_800).as_deref(), Some("10000-01-01T00:00:00Z"));
        assert_eq!(utc_text(i64::MAX), None);
    }
}
