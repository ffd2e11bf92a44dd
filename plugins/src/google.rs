//! What the four Google Workspace integrations (Gmail, Drive, Sheets, Calendar) share: the OAuth
//! client, the error body (`{error: {code, message, status, errors: [{reason}]}}`), RFC 3339 times,
//! file names and MIME types of local files, and the `multipart/related` body Drive uploads use.

use serde_json::Value;

use crate::api::{ArgProblem, OAuth, ToolError};

/// The shared Google desktop OAuth client with one integration's scopes. `include_granted_scopes`
/// lets each Google integration add its scopes to the same grant; `access_type=offline` with
/// `prompt=consent` makes Google issue a refresh token.
pub const fn oauth(scopes: &'static [&'static str]) -> OAuth {
    OAuth {
        authorize_url: "https://accounts.google.com/o/oauth2/v2/auth",
        token_url: "https://oauth2.googleapis.com/token",
        revoke_url: Some("https://oauth2.googleapis.com/revoke"),
        scopes,
        scope_param: "scope",
        extra_params: &[("access_type", "offline"), ("prompt", "consent"), ("include_granted_scopes", "true")],
        client: "google",
    }
}

/// Google's error message, with the machine reason when it says more than the message
/// (`rateLimitExceeded`, `insufficientPermissions`); OAuth endpoint errors use
/// `{error, error_description}`.
pub fn error_message(body: &Value) -> Option<String> {
    match body.get("error") {
        Some(Value::Object(e)) => {
            let message = e.get("message").and_then(Value::as_str).filter(|m| !m.is_empty());
            let reason =
                e.get("errors").and_then(|a| a.get(0)).and_then(|x| x.get("reason")).and_then(Value::as_str).or_else(
                    || {
                        e.get("details")
                            .and_then(Value::as_array)
                            .and_then(|d| d.iter().find_map(|x| x.get("reason").and_then(Value::as_str)))
                    },
                );
            match (message, reason) {
                (Some(m), Some(r)) if !m.contains(r) => Some(format!("{m} ({r})")),
                (Some(m), _) => Some(m.to_string()),
                (None, Some(r)) => Some(r.to_string()),
                (None, None) => e.get("status").and_then(Value::as_str).map(str::to_string),
            }
        }
        Some(Value::String(code)) => Some(match body.get("error_description").and_then(Value::as_str) {
            Some(d) => format!("{code}: {d}"),
            None => code.clone(),
        }),
        _ => None,
    }
}

/// An argument problem the schema cannot express, pointing at one field.
pub fn invalid(path: &str, message: impl Into<String>) -> ToolError {
    let message = message.into();
    ToolError::InvalidArguments {
        problems: vec![ArgProblem { path: path.to_string(), problem: message.clone() }],
        message,
    }
}

/// The file name of a local path (`/home/me/report.pdf` -> `report.pdf`).
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().filter(|n| !n.is_empty()).unwrap_or("file")
}

/// A name from a provider made safe to use as one local file name (no folders, no `..`).
pub fn safe_file_name(name: &str) -> String {
    let cleaned: String =
        name.chars().map(|c| if matches!(c, '/' | '\\' | '\0') || c.is_control() { '_' } else { c }).collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_string();
    if cleaned.is_empty() { "attachment".to_string() } else { cleaned }
}

/// The MIME type for a file name's extension; `application/octet-stream` when unknown.
pub fn mime_for(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        "mov" => "video/quicktime",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt" => "application/vnd.oasis.opendocument.text",
        "ods" => "application/vnd.oasis.opendocument.spreadsheet",
        "rtf" => "application/rtf",
        "ics" => "text/calendar",
        _ => "application/octet-stream",
    }
}

/// Whether bytes of this MIME type read as text.
pub fn is_text_mime(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m.starts_with("text/")
        || matches!(
            m.as_str(),
            "application/json" | "application/xml" | "application/javascript" | "application/x-yaml" | "image/svg+xml"
        )
}

/// A `multipart/related` body (JSON metadata, then the content) as Drive's `uploadType=multipart`
/// wants it; returns the Content-Type (with boundary) and the body.
pub fn multipart_related(boundary: &str, metadata: &Value, content_type: &str, content: &[u8]) -> (String, Vec<u8>) {
    let mut body = Vec::with_capacity(content.len() + 512);
    body.extend_from_slice(format!("--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n").as_bytes());
    body.extend_from_slice(metadata.to_string().as_bytes());
    body.extend_from_slice(format!("\r\n--{boundary}\r\nContent-Type: {content_type}\r\n\r\n").as_bytes());
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/related; boundary={boundary}"), body)
}

/// A JSON number from Google's int64-as-string fields (`size`, `internalDate`).
pub fn int64(v: &Value) -> Value {
    match v {
        Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(Value::Null),
        Value::Number(_) => v.clone(),
        _ => Value::Null,
    }
}

// ------------------------------------------------------------------------------------------ time

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A calendar date `YYYY-MM-DD` as days since 1970-01-01.
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    crate::time::days_from_date(y, m, d)
}

/// An RFC 3339 date-time: seconds since the epoch (UTC) and the UTC offset in minutes, or `None`
/// when the text is not one. `offset` is `None` for a local time without `Z`/`±hh:mm`.
pub fn parse_datetime(s: &str) -> Option<(i64, Option<i32>)> {
    let (date, rest) = s.split_once(['T', 't', ' '])?;
    let days = parse_date(date)?;
    if rest.len() < 8 || rest.as_bytes()[2] != b':' || rest.as_bytes()[5] != b':' {
        return None;
    }
    let (h, mi, sec) = (digits(&rest[0..2])?, digits(&rest[3..5])?, digits(&rest[6..8])?);
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut tail = &rest[8..];
    if let Some(frac) = tail.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        tail = &frac[n..];
    }
    let offset = match tail {
        "" => None,
        "Z" | "z" => Some(0),
        t if (t.starts_with('+') || t.starts_with('-')) && t.len() == 6 && t.as_bytes()[3] == b':' => {
            let (oh, om) = (digits(&t[1..3])?, digits(&t[4..6])?);
            if oh > 23 || om > 59 {
                return None;
            }
            let minutes = (oh * 60 + om) as i32;
            Some(if t.starts_with('-') { -minutes } else { minutes })
        }
        _ => return None,
    };
    let local = days * 86_400 + h * 3600 + mi * 60 + sec;
    Some((local - i64::from(offset.unwrap_or(0)) * 60, offset))
}

/// Seconds since the epoch as RFC 3339 at a fixed UTC offset (minutes); `Z` for UTC.
pub fn format_datetime(secs: i64, offset_minutes: i32) -> String {
    let local = secs + i64::from(offset_minutes) * 60;
    let zone = if offset_minutes == 0 {
        "Z".to_string()
    } else {
        let sign = if offset_minutes < 0 { '-' } else { '+' };
        let a = offset_minutes.abs();
        format!("{sign}{:02}:{:02}", a / 60, a % 60)
    };
    // An instant past chrono's range (year 262,143) is shown as the seconds it was given.
    match crate::time::wall_clock_text(local) {
        Some(wall) => format!("{wall}{zone}"),
        None => secs.to_string(),
    }
}

/// Checks that an argument is an RFC 3339 date-time with a UTC offset, as Google's `timeMin`,
/// `timeMax` and free/busy windows require.
pub fn require_datetime(path: &str, value: &str) -> Result<i64, ToolError> {
    match parse_datetime(value) {
        Some((secs, Some(_))) => Ok(secs),
        Some((_, None)) => Err(invalid(
            path,
            format!(
                "'{value}' has no UTC offset; add one, e.g. '{value}Z' or '{value}+02:00' (time_get_current gives the local offset)"
            ),
        )),
        None => Err(invalid(
            path,
            format!(
                "'{value}' is not an RFC 3339 date-time; use e.g. '2026-03-02T09:00:00+01:00' or '2026-03-02T08:00:00Z'"
            ),
        )),
    }
}

/// The current time as seconds since the epoch (a default for open time windows).
pub fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn google_errors_name_message_and_reason() {
        let e = json!({"error": {"code": 403, "message": "Rate Limit Exceeded", "status": "PERMISSION_DENIED",
            "errors": [{"message": "Rate Limit Exceeded", "domain": "usageLimits", "reason": "rateLimitExceeded"}]}});
        assert_eq!(error_message(&e).unwrap(), "Rate Limit Exceeded (rateLimitExceeded)");
        let e = json!({"error": {"code": 404, "message": "File not found: x.", "status": "NOT_FOUND", "errors": [{"reason": "notFound"}]}});
        assert_eq!(error_message(&e).unwrap(), "File not found: x. (notFound)");
        let e = json!({"error": {"code": 400, "message": "Invalid requests[0].addSheet: A sheet with the name \"Q3\" already exists.", "status": "INVALID_ARGUMENT"}});
        assert!(error_message(&e).unwrap().contains("already exists"));
        assert_eq!(
            error_message(
                &json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
            )
            .unwrap(),
            "invalid_grant: Token has been expired or revoked."
        );
        assert_eq!(error_message(&json!({"nothing": 1})), None);
    }

    #[test]
    fn rfc3339_round_trips_with_offsets() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00Z"), Some((0, Some(0))));
        assert_eq!(parse_datetime("2026-03-02T09:00:00+01:00"), Some((1_772_438_400, Some(60))));
        assert_eq!(parse_datetime("2026-03-02T08:00:00.250Z").map(|p| p.0), Some(1_772_438_400));
        assert_eq!(parse_datetime("2026-03-02T09:00:00"), Some((1_772_442_000, None)));
        assert_eq!(format_datetime(1_772_438_400, 60), "2026-03-02T09:00:00+01:00");
        assert_eq!(format_datetime(1_772_438_400, -330), "2026-03-02T02:30:00-05:30");
        assert_eq!(format_datetime(1_772_438_400, 0), "2026-03-02T08:00:00Z");
        assert_eq!(parse_datetime("2024-02-30T00:00:00Z"), None);
        assert_eq!(parse_datetime("tomorrow 9am"), None);
        assert_eq!(parse_datetime("2026-03-02"), None);
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        assert!(require_datetime("/t", "2026-03-02T09:00:00").is_err());
        assert!(require_datetime("/t", "2026-03-02T09:00:00-08:00").is_ok());
    }

    #[test]
    fn local_files_have_names_and_types() {
        assert_eq!(file_name("/home/me/Q3 report.pdf"), "Q3 report.pdf");
        assert_eq!(mime_for("Q3 report.PDF"), "application/pdf");
        assert_eq!(mime_for("notes"), "application/octet-stream");
        assert_eq!(safe_file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_file_name(""), "attachment");
        assert!(is_text_mime("text/csv; charset=utf-8") && !is_text_mime("application/pdf"));
    }

    #[test]
    fn multipart_related_has_metadata_then_content() {
        let (ct, body) = multipart_related("b0", &json!({"name": "a.txt"}), "text/plain", b"hello");
        assert_eq!(ct, "multipart/related; boundary=b0");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "--b0\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"a.txt\"}\r\n--b0\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b0--\r\n"
        );
    }
}
