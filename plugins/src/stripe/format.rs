//! Money and time at Stripe's boundary: amounts in the smallest currency unit shown in major
//! units, unix timestamps as RFC 3339, and the dates an agent types turned into unix seconds.

use serde_json::Value;

use crate::api::{ToolError, invalid};

/// Decimal places of a currency's smallest unit (Stripe's zero- and three-decimal currencies).
fn decimals(currency: &str) -> u32 {
    match currency.to_ascii_lowercase().as_str() {
        "bif" | "clp" | "djf" | "gnf" | "jpy" | "kmf" | "krw" | "mga" | "pyg" | "rwf" | "ugx" | "vnd" | "vuv"
        | "xaf" | "xof" | "xpf" => 0,
        "bhd" | "jod" | "kwd" | "omr" | "tnd" => 3,
        _ => 2,
    }
}

/// `1999, "usd"` -> `"19.99 USD"`.
pub(super) fn display(amount: &Value, currency: &Value) -> Value {
    let (Some(amount), Some(currency)) = (amount.as_i64(), currency.as_str()) else { return Value::Null };
    let d = decimals(currency);
    let sign = if amount < 0 { "-" } else { "" };
    let abs = amount.unsigned_abs();
    let text = if d == 0 {
        format!("{sign}{abs}")
    } else {
        let unit = 10u64.pow(d);
        format!("{sign}{}.{:0width$}", abs / unit, abs % unit, width = d as usize)
    };
    Value::String(format!("{text} {}", currency.to_ascii_uppercase()))
}

pub(super) fn time(secs: &Value) -> Value {
    let Some(secs) = secs.as_i64() else { return Value::Null };
    crate::time::utc_text(secs).map(Value::String).unwrap_or(Value::Null)
}

/// `2026-01-31`, `2026-01-31T12:00:00Z` or unix seconds -> unix seconds.
pub(super) fn parse_time(path: &str, value: &str) -> Result<i64, ToolError> {
    let bad = || {
        invalid(
            path,
            format!("'{value}' is not a date (YYYY-MM-DD), a UTC date-time (YYYY-MM-DDTHH:MM:SSZ) or unix seconds"),
            "expected YYYY-MM-DD",
        )
    };
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse().map_err(|_| bad());
    }
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Result<i64, ToolError> {
        let s = v.get(r).ok_or_else(bad)?;
        if s.bytes().all(|c| c.is_ascii_digit()) { s.parse().map_err(|_| bad()) } else { Err(bad()) }
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let (y, m, d) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let mut secs = crate::time::days_from_month_day(y, m, d).ok_or_else(bad)? * 86_400;
    if b.len() > 10 {
        if b.len() != 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'Z' {
            return Err(bad());
        }
        secs += digits(11..13)? * 3600 + digits(14..16)? * 60 + digits(17..19)?;
    }
    Ok(secs)
}

pub(super) fn currency_code(path: &str, c: &str) -> Result<String, ToolError> {
    if c.len() == 3 && c.bytes().all(|b| b.is_ascii_alphabetic()) {
        Ok(c.to_ascii_lowercase())
    } else {
        Err(invalid(
            path,
            format!("'{c}' is not a three-letter ISO currency code such as usd or eur"),
            "expected e.g. usd",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn amounts_display_in_major_units() {
        assert_eq!(display(&json!(1999), &json!("usd")), json!("19.99 USD"));
        assert_eq!(display(&json!(-500), &json!("eur")), json!("-5.00 EUR"));
        assert_eq!(display(&json!(1500), &json!("jpy")), json!("1500 JPY"));
        assert_eq!(display(&json!(12345), &json!("kwd")), json!("12.345 KWD"));
        assert_eq!(display(&json!(7), &json!("usd")), json!("0.07 USD"));
    }

    #[test]
    fn times_parse_and_render() {
        assert_eq!(parse_time("/x", "2026-01-31").unwrap(), 1_769_817_600);
        assert_eq!(parse_time("/x", "2026-01-31T12:30:00Z").unwrap(), 1_769_862_600);
        assert_eq!(parse_time("/x", "1700000000").unwrap(), 1_700_000_000);
        assert!(parse_time("/x", "31/01/2026").is_err());
        assert!(parse_time("/x", "2026-13-01").is_err());
        assert_eq!(time(&json!(1_769_862_600)), json!("2026-01-31T12:30:00Z"));
    }
}
