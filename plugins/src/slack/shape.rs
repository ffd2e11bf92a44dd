//! Slack payloads shaped for an agent: messages, users and channels with the fields a person reads,
//! and Slack timestamps (`ts`) as UTC times both ways.

use serde_json::{Value, json};

use super::web::problem;
use crate::api::*;

/// A Slack ts ("1712345678.000200") as an RFC 3339 UTC time.
pub(super) fn ts_time(ts: &Value) -> Value {
    ts.as_str()
        .and_then(|t| t.split('.').next())
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(crate::time::utc_text)
        .map(Value::String)
        .unwrap_or(Value::Null)
}

/// A time bound for history: a Slack ts / Unix seconds as they are, or a date or UTC date-time
/// (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z]) converted to Unix seconds.
pub(super) fn time_bound(path: &str, value: &str) -> Result<String, ToolError> {
    let v = value.trim();
    if !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && v.bytes().filter(|b| *b == b'.').count() <= 1
    {
        return Ok(v.to_string());
    }
    let bad = || problem(path, format!("'{value}' is not a Slack ts, Unix time, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ"));
    let b = v.trim_end_matches('Z').as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = std::str::from_utf8(b.get(r)?).ok()?;
        if s.bytes().all(|c| c.is_ascii_digit()) { s.parse().ok() } else { None }
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(bad());
    }
    let (y, m, d) = (num(0..4).ok_or_else(bad)?, num(5..7).ok_or_else(bad)?, num(8..10).ok_or_else(bad)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let mut secs = crate::time::days_from_month_day(y, m, d).ok_or_else(bad)? * 86_400;
    if b.len() > 10 {
        if !matches!(b[10], b'T' | b' ') || b.len() < 16 || b[13] != b':' {
            return Err(bad());
        }
        let (h, mi) = (num(11..13).ok_or_else(bad)?, num(14..16).ok_or_else(bad)?);
        let s = if b.len() >= 19 && b[16] == b':' { num(17..19).ok_or_else(bad)? } else { 0 };
        if b.len() != 16 && b.len() != 19 {
            return Err(bad());
        }
        secs += h * 3600 + mi * 60 + s;
    }
    Ok(secs.to_string())
}

// ---------------------------------------------------------------- shaping

pub(super) const MESSAGE_CHARS: usize = 4_000;

pub(super) fn shape_message(m: &Value) -> Value {
    let mut text = m["text"].as_str().unwrap_or_default().to_string();
    if text.is_empty() {
        // Bot posts often carry their words in attachments only.
        text = m["attachments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["fallback"].as_str().or(a["text"].as_str()))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let (text, truncated) = truncate_chars(&text, MESSAGE_CHARS);
    let profile = &m["user_profile"];
    let name = [&profile["display_name"], &profile["real_name"], &m["username"]]
        .into_iter()
        .find_map(|v| v.as_str().filter(|s| !s.is_empty()));
    let reactions: Vec<Value> = m["reactions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| json!({"emoji": r["name"], "count": r["count"]}))
        .collect();
    let files: Vec<Value> = m["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| compact(json!({"id": f["id"], "name": f["name"], "title": f["title"], "type": f["filetype"], "permalink": f["permalink"]})))
        .collect();
    let is_reply = m["thread_ts"].is_string() && m["thread_ts"] != m["ts"];
    compact(json!({
        "ts": m["ts"],
        "time": ts_time(&m["ts"]),
        "user": m["user"].as_str().or(m["bot_id"].as_str()),
        "user_name": name,
        "subtype": m["subtype"],
        "text": text,
        "truncated": truncated.then_some(true),
        "thread_ts": if is_reply { m["thread_ts"].clone() } else { Value::Null },
        "reply_count": m["reply_count"],
        "latest_reply": ts_time(&m["latest_reply"]),
        "reactions": (!reactions.is_empty()).then_some(reactions),
        "files": (!files.is_empty()).then_some(files),
        "edited": m["edited"].is_object().then_some(true),
    }))
}

pub(super) fn shape_user(u: &Value) -> Value {
    let p = &u["profile"];
    let nonempty = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    compact(json!({
        "id": u["id"],
        "handle": u["name"],
        "real_name": nonempty(&u["real_name"]).or_else(|| nonempty(&p["real_name"])),
        "display_name": nonempty(&p["display_name"]),
        "title": nonempty(&p["title"]),
        "email": nonempty(&p["email"]),
        "tz": u["tz"],
        "is_bot": (u["is_bot"].as_bool() == Some(true) || u["id"] == "USLACKBOT").then_some(true),
        "is_admin": (u["is_admin"].as_bool() == Some(true)).then_some(true),
        "deleted": (u["deleted"].as_bool() == Some(true)).then_some(true),
    }))
}

pub(super) fn shape_user_full(u: &Value) -> Value {
    let p = &u["profile"];
    let nonempty = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let mut out = shape_user(u);
    let status = match (nonempty(&p["status_emoji"]), nonempty(&p["status_text"])) {
        (None, None) => None,
        (e, t) => Some([e, t].into_iter().flatten().collect::<Vec<_>>().join(" ")),
    };
    let role = if u["is_primary_owner"].as_bool() == Some(true) {
        "primary owner"
    } else if u["is_owner"].as_bool() == Some(true) {
        "owner"
    } else if u["is_admin"].as_bool() == Some(true) {
        "admin"
    } else if u["is_ultra_restricted"].as_bool() == Some(true) {
        "single-channel guest"
    } else if u["is_restricted"].as_bool() == Some(true) {
        "multi-channel guest"
    } else if u["is_bot"].as_bool() == Some(true) {
        "bot"
    } else {
        "member"
    };
    let extra = compact(json!({
        "phone": nonempty(&p["phone"]),
        "tz_label": u["tz_label"],
        "status": status,
        "role": role,
        "team_id": u["team_id"],
        "image": nonempty(&p["image_192"]),
    }));
    if let (Value::Object(o), Value::Object(e)) = (&mut out, extra) {
        o.remove("is_admin");
        o.extend(e);
    }
    out
}

pub(super) fn channel_type(c: &Value) -> &'static str {
    if c["is_im"].as_bool() == Some(true) {
        "im"
    } else if c["is_mpim"].as_bool() == Some(true) {
        "mpim"
    } else if c["is_private"].as_bool() == Some(true) || c["is_group"].as_bool() == Some(true) {
        "private_channel"
    } else {
        "public_channel"
    }
}

pub(super) fn shape_channel(c: &Value) -> Value {
    let nonempty = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    compact(json!({
        "id": c["id"],
        "name": c["name"],
        "type": channel_type(c),
        "user": c["user"],
        "topic": nonempty(&c["topic"]["value"]),
        "purpose": nonempty(&c["purpose"]["value"]),
        "members": c["num_members"],
        "is_member": c["is_member"],
        "is_archived": (c["is_archived"].as_bool() == Some(true)).then_some(true),
        "created": c["created"].as_i64().and_then(crate::time::utc_text),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_and_bounds() {
        assert_eq!(ts_time(&json!("1700000000.000200")), json!("2023-11-14T22:13:20Z"));
        assert_eq!(time_bound("/o", "1700000000.000200").unwrap(), "1700000000.000200");
        assert_eq!(time_bound("/o", "2023-11-14").unwrap(), "1699920000");
        assert_eq!(time_bound("/o", "2023-11-14T22:13:20Z").unwrap(), "1700000000");
        assert_eq!(time_bound("/o", "2023-11-14T22:13").unwrap(), "1699999980");
        assert!(time_bound("/o", "yesterday").is_err());
        assert!(time_bound("/o", "2023-13-01").is_err());
        assert!(time_bound("/o", "1.2.3").is_err());
    }
}
