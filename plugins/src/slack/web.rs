//! Slack Web API conventions: one call with `ok:false` mapped to errors, Slack's error codes in
//! words, cursors, and turning #names, @handles and emails into ids.

use serde_json::Value;

use crate::api::*;

// ---------------------------------------------------------------- errors and calls

pub(super) fn identity_label(body: &Value) -> Option<String> {
    if body["ok"].as_bool() != Some(true) {
        return None;
    }
    let user = body["user"].as_str()?;
    Some(match body["team"].as_str() {
        Some(team) => format!("{user} @ {team}"),
        None => user.to_string(),
    })
}

pub(super) fn error_message(body: &Value) -> Option<String> {
    body["error"].as_str().map(|code| describe_error(code, body))
}

/// Slack's error code with a short explanation an agent can act on.
pub(super) fn describe_error(code: &str, body: &Value) -> String {
    let hint = match code {
        "invalid_auth" | "not_authed" => "the token is missing or invalid",
        "token_revoked" | "token_expired" => "the token was revoked or has expired",
        "account_inactive" => "the account behind the token is deactivated",
        "missing_scope" => "the token lacks a permission (scope) this needs",
        "not_allowed_token_type" => "this method needs a different kind of token (user token xoxp-)",
        "channel_not_found" => "no such channel, or the user cannot see it",
        "not_in_channel" => "the user is not a member of this channel; join it first",
        "is_archived" => "the channel is archived",
        "user_not_found" | "users_not_found" => "no such user in this workspace",
        "message_not_found" => "no message with that ts in this channel",
        "thread_not_found" => "no thread with that ts in this channel",
        "cant_update_message" => "only messages the user posted can be edited",
        "edit_window_closed" => "the workspace no longer allows editing this message",
        "msg_too_long" => "the message text is too long (Slack caps it at 40,000 characters)",
        "no_text" => "the message has no text",
        "invalid_blocks" | "invalid_blocks_format" => "the Block Kit blocks are malformed",
        "invalid_name" => "no such emoji",
        "too_many_reactions" => "the message has too many reactions",
        "invalid_cursor" => "the cursor is invalid or expired; start again without it",
        "ratelimited" => "Slack is rate-limiting this method",
        "file_uploads_disabled" => "the workspace has disabled file uploads",
        _ => "",
    };
    let mut msg = code.to_string();
    if !hint.is_empty() {
        msg.push_str(&format!(" ({hint})"));
    }
    if let Some(needed) = body["needed"].as_str() {
        msg.push_str(&format!("; needed scope: {needed}"));
    }
    if let Some(details) = body["response_metadata"]["messages"].as_array() {
        let lines: Vec<&str> = details.iter().filter_map(Value::as_str).take(3).collect();
        if !lines.is_empty() {
            msg.push_str(&format!("; {}", lines.join("; ")));
        }
    }
    msg
}

pub(super) fn status_for(code: &str) -> u16 {
    match code {
        "invalid_auth" | "not_authed" | "token_revoked" | "token_expired" | "account_inactive" => 401,
        "missing_scope" | "not_allowed_token_type" | "no_permission" | "access_denied" | "ekm_access_denied" => 403,
        "ratelimited" => 429,
        "channel_not_found" | "user_not_found" | "users_not_found" | "message_not_found" | "thread_not_found"
        | "file_not_found" => 404,
        _ => 400,
    }
}

/// Sends one Web API call and returns its body when `ok` is true; maps `ok:false` to an error.
pub(super) async fn call(up: &dyn Upstream, req: HttpRequest) -> Result<Value, ToolError> {
    let resp = up.send(req).await?;
    let body = resp.json()?;
    if body["ok"].as_bool() == Some(true) {
        return Ok(body);
    }
    let code = body["error"].as_str().unwrap_or("unknown_error");
    let retry_after = resp.header("retry-after").and_then(|v| v.trim().parse::<u64>().ok());
    Err(ToolError::Upstream {
        status: status_for(code),
        message: describe_error(code, &body),
        retry_after: if code == "ratelimited" { retry_after } else { None },
    })
}

pub(super) fn get(method: &str) -> HttpRequest {
    HttpRequest::get(format!("/{method}"))
}

pub(super) fn post_json(method: &str, body: Value) -> HttpRequest {
    HttpRequest::post(format!("/{method}")).header("content-type", "application/json; charset=utf-8").json(body)
}

pub(super) fn not_found(message: String) -> ToolError {
    ToolError::Upstream { status: 404, message, retry_after: None }
}

pub(super) fn next_cursor(body: &Value) -> Option<String> {
    body["response_metadata"]["next_cursor"].as_str().filter(|c| !c.is_empty()).map(str::to_string)
}

pub(super) fn problem(path: &str, message: impl Into<String>) -> ToolError {
    let message = message.into();
    ToolError::InvalidArguments { problems: vec![ArgProblem { path: path.into(), problem: message.clone() }], message }
}

// ---------------------------------------------------------------- ids, names, times

/// Conversation ids: C… (channel), G… (private/group), D… (DM).
pub(super) fn is_conversation_id(s: &str) -> bool {
    s.len() >= 9
        && matches!(s.as_bytes()[0], b'C' | b'G' | b'D')
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub(super) fn is_user_id(s: &str) -> bool {
    s.len() >= 9
        && matches!(s.as_bytes()[0], b'U' | b'W')
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub(super) const MAX_LOOKUP_PAGES: usize = 10;

/// A channel id as given, or the id of the channel with that `#name` (looked up in
/// conversations.list, public and private, unarchived).
pub(super) async fn resolve_channel(up: &dyn Upstream, channel: &str) -> Result<String, ToolError> {
    let c = channel.trim();
    let c = c.strip_prefix("<#").map(|s| s.trim_end_matches('>').split('|').next().unwrap_or(s)).unwrap_or(c);
    if is_conversation_id(c) {
        return Ok(c.to_string());
    }
    let name = c.trim_start_matches('#').to_lowercase();
    if name.is_empty() {
        return Err(problem("/channel", "give a channel id (C…) or a #name"));
    }
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LOOKUP_PAGES {
        let body = call(
            up,
            get("conversations.list")
                .query("types", "public_channel,private_channel")
                .query("exclude_archived", "true")
                .query("limit", 200)
                .query_opt("cursor", cursor.as_deref()),
        )
        .await?;
        for ch in body["channels"].as_array().into_iter().flatten() {
            if (ch["name"].as_str() == Some(name.as_str()) || ch["name_normalized"].as_str() == Some(name.as_str()))
                && let Some(id) = ch["id"].as_str()
            {
                return Ok(id.to_string());
            }
        }
        cursor = next_cursor(&body);
        if cursor.is_none() {
            break;
        }
    }
    Err(not_found(format!(
        "no channel named #{name} that this user can see; pass its id (C…) from slack_list_channels"
    )))
}

pub(super) enum UserRef {
    Id(String),
    Email(String),
    Handle(String),
}

pub(super) fn parse_user_ref(s: &str) -> UserRef {
    let s = s.trim();
    let s = s.strip_prefix("<@").map(|r| r.trim_end_matches('>').split('|').next().unwrap_or(r)).unwrap_or(s);
    if let Some(handle) = s.strip_prefix('@') {
        UserRef::Handle(handle.to_string())
    } else if s.contains('@') {
        UserRef::Email(s.to_string())
    } else if is_user_id(s) {
        UserRef::Id(s.to_string())
    } else {
        UserRef::Handle(s.to_string())
    }
}

/// Finds a member by @handle: their username, display name or real name, case-insensitively.
pub(super) async fn find_by_handle(up: &dyn Upstream, handle: &str) -> Result<Value, ToolError> {
    let want = handle.to_lowercase();
    let matches = |m: &Value| {
        [&m["name"], &m["profile"]["display_name"], &m["profile"]["display_name_normalized"], &m["real_name"]]
            .iter()
            .any(|v| v.as_str().is_some_and(|s| !s.is_empty() && s.to_lowercase() == want))
    };
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LOOKUP_PAGES {
        let body = call(up, get("users.list").query("limit", 200).query_opt("cursor", cursor.as_deref())).await?;
        if let Some(m) = body["members"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["deleted"].as_bool() != Some(true) && matches(m))
        {
            return Ok(m.clone());
        }
        cursor = next_cursor(&body);
        if cursor.is_none() {
            break;
        }
    }
    Err(not_found(format!(
        "no Slack member with the handle @{handle}; use slack_list_users to find their id, or give their email"
    )))
}

/// The full member object for an id, email or @handle.
pub(super) async fn lookup_user(up: &dyn Upstream, r: &UserRef) -> Result<Value, ToolError> {
    match r {
        UserRef::Id(id) => Ok(call(up, get("users.info").query("user", id)).await?["user"].clone()),
        UserRef::Email(email) => Ok(call(up, get("users.lookupByEmail").query("email", email)).await?["user"].clone()),
        UserRef::Handle(h) => find_by_handle(up, h).await,
    }
}

pub(super) async fn user_id(up: &dyn Upstream, r: UserRef) -> Result<String, ToolError> {
    match r {
        UserRef::Id(id) => Ok(id),
        other => {
            let user = lookup_user(up, &other).await?;
            user["id"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| ToolError::Internal("Slack returned a user without an id".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn user_and_channel_references() {
        assert!(matches!(parse_user_ref("U012AB3CDE"), UserRef::Id(id) if id == "U012AB3CDE"));
        assert!(matches!(parse_user_ref("<@U012AB3CDE>"), UserRef::Id(_)));
        assert!(matches!(parse_user_ref("@grace"), UserRef::Handle(h) if h == "grace"));
        assert!(matches!(parse_user_ref("grace"), UserRef::Handle(_)));
        assert!(matches!(parse_user_ref("grace@example.com"), UserRef::Email(_)));
        assert!(is_conversation_id("C012AB3CD"));
        assert!(!is_conversation_id("general"));
        assert!(!is_conversation_id("CAT"));
    }

    #[test]
    fn errors_map_to_statuses() {
        assert_eq!(status_for("invalid_auth"), 401);
        assert_eq!(status_for("ratelimited"), 429);
        assert_eq!(status_for("channel_not_found"), 404);
        assert_eq!(status_for("missing_scope"), 403);
        assert_eq!(status_for("msg_too_long"), 400);
        let body = json!({"ok": false, "error": "missing_scope", "needed": "chat:write", "provided": "users:read"});
        assert_eq!(
            describe_error("missing_scope", &body),
            "missing_scope (the token lacks a permission (scope) this needs); needed scope: chat:write"
        );
    }
}
