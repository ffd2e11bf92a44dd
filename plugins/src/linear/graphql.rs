//! Linear's GraphQL transport: one POST per operation, `errors[]` (with HTTP 200, 400 or 401)
//! mapped to upstream statuses, and the lookups that turn identifiers (ENG-123), team keys (ENG),
//! "me" and status names into the ids mutations need.

use serde_json::{Value, json};

use crate::api::*;

pub(super) fn one_error(e: &Value) -> String {
    let message = e["message"].as_str().unwrap_or("unknown error");
    let mut out = message.to_string();
    if let Some(p) = e["extensions"]["userPresentableMessage"].as_str().filter(|p| *p != message && !p.is_empty()) {
        out.push_str(&format!(" ({p})"));
    }
    if let Some(code) = e["extensions"]["code"].as_str().filter(|c| !c.is_empty()) {
        out.push_str(&format!(" [{code}]"));
    }
    out
}

/// GraphQL `errors[]`: each message, what Linear says to show users, and the error code.
pub(super) fn error_message(body: &Value) -> Option<String> {
    let errors = body["errors"].as_array().filter(|e| !e.is_empty())?;
    Some(errors.iter().map(one_error).collect::<Vec<_>>().join("; "))
}

/// The HTTP status a GraphQL error stands for.
pub(super) fn classify(code: &str, kind: &str, message: &str) -> u16 {
    let code = code.to_ascii_uppercase();
    let kind = kind.to_ascii_lowercase();
    let message = message.to_ascii_lowercase();
    if code == "RATELIMITED" || code == "RATE_LIMITED" || kind == "ratelimited" {
        429
    } else if code.contains("AUTHENTICATION") || code == "UNAUTHENTICATED" || kind == "authentication error" {
        401
    } else if code == "FORBIDDEN" || kind == "forbidden" {
        403
    } else if code.contains("NOT_FOUND") || message.contains("not found") || message.contains("could not find") {
        404
    } else {
        400
    }
}

pub(super) fn status_of(e: &Value) -> u16 {
    classify(
        e["extensions"]["code"].as_str().unwrap_or(""),
        e["extensions"]["type"].as_str().unwrap_or(""),
        e["message"].as_str().unwrap_or(""),
    )
}

/// A 400 from Linear carries its real meaning in the error code [`error_message`] appended.
pub(super) fn remap(e: ToolError) -> ToolError {
    match e {
        ToolError::Upstream { status: 400, message, retry_after } => {
            let code = message.rsplit_once(" [").and_then(|(_, c)| c.strip_suffix(']')).unwrap_or("");
            let status = classify(code, "", &message);
            ToolError::Upstream { status, message, retry_after }
        }
        other => other,
    }
}

/// Runs one GraphQL operation; `data` on success, `errors[]` as an upstream error.
pub(super) async fn gql(up: &dyn Upstream, query: &str, variables: Value) -> Result<Value, ToolError> {
    let req = HttpRequest::post("/graphql").json(json!({ "query": query, "variables": variables }));
    let resp = up.send(req).await.map_err(remap)?;
    let body = resp.json()?;
    if let Some(errors) = body["errors"].as_array().filter(|e| !e.is_empty()) {
        return Err(ToolError::Upstream {
            status: status_of(&errors[0]),
            message: errors.iter().map(one_error).collect::<Vec<_>>().join("; "),
            retry_after: resp.header("retry-after").and_then(|v| v.trim().parse().ok()),
        });
    }
    Ok(body["data"].clone())
}

pub(super) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
}

pub(super) fn not_found(what: String) -> ToolError {
    ToolError::Upstream { status: 404, message: what, retry_after: None }
}

pub(super) use crate::api::invalid;

/// An issue's UUID from a UUID or an identifier like ENG-123.
pub(super) async fn issue_uuid(up: &dyn Upstream, id: &str) -> Result<String, ToolError> {
    let id = id.trim();
    if is_uuid(id) {
        return Ok(id.to_string());
    }
    let data = gql(up, "query IssueId($id: String!) { issue(id: $id) { id } }", json!({ "id": id })).await?;
    data["issue"]["id"].as_str().map(str::to_string).ok_or_else(|| not_found(format!("Linear has no issue {id}")))
}

/// A team's UUID from a UUID or a team key like ENG.
pub(super) async fn team_uuid(up: &dyn Upstream, team: &str, path: &str) -> Result<String, ToolError> {
    let team = team.trim();
    if is_uuid(team) {
        return Ok(team.to_string());
    }
    let data = gql(
        up,
        "query TeamByKey($key: String!) { teams(filter: { key: { eqIgnoreCase: $key } }, first: 1) { nodes { id key } } }",
        json!({ "key": team }),
    )
    .await?;
    data["teams"]["nodes"][0]["id"].as_str().map(str::to_string).ok_or_else(|| {
        invalid(path, format!("no Linear team with key '{team}'; see linear_list_teams"), "unknown team")
    })
}

/// A user id, with "me" meaning the key's owner.
pub(super) async fn user_id(up: &dyn Upstream, who: &str) -> Result<String, ToolError> {
    if who.trim().eq_ignore_ascii_case("me") {
        let data = gql(up, "query ViewerId { viewer { id } }", json!({})).await?;
        return data["viewer"]["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| ToolError::Internal("no viewer id".into()));
    }
    Ok(who.trim().to_string())
}

/// A workflow state id from an id or a status name, among the given team's states.
pub(super) fn pick_state(states: &Value, wanted: &str) -> Result<String, ToolError> {
    let wanted = wanted.trim();
    let nodes = states["nodes"].as_array().cloned().unwrap_or_default();
    nodes
        .iter()
        .find(|s| s["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(wanted)))
        .and_then(|s| s["id"].as_str().map(str::to_string))
        .ok_or_else(|| {
            let names: Vec<&str> = nodes.iter().filter_map(|s| s["name"].as_str()).collect();
            invalid(
                "/state_id",
                format!("no status '{wanted}' in this team; its statuses are: {}", names.join(", ")),
                "unknown status",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn graphql_errors_map_to_statuses() {
        let e = |code: &str, kind: &str, msg: &str| json!({"message": msg, "extensions": {"code": code, "type": kind}});
        assert_eq!(status_of(&e("RATELIMITED", "ratelimited", "Rate limit exceeded")), 429);
        assert_eq!(status_of(&e("AUTHENTICATION_ERROR", "authentication error", "Authentication required")), 401);
        assert_eq!(status_of(&e("FORBIDDEN", "forbidden", "No access")), 403);
        assert_eq!(status_of(&e("INPUT_ERROR", "invalid input", "Entity not found: Issue")), 404);
        assert_eq!(status_of(&e("GRAPHQL_VALIDATION_FAILED", "graphql error", "Cannot query field")), 400);
        let body = json!({"errors": [{"message": "Entity not found: Issue", "extensions": {"code": "INPUT_ERROR", "userPresentableMessage": "Could not find referenced Issue."}}]});
        let msg = error_message(&body).unwrap();
        assert_eq!(msg, "Entity not found: Issue (Could not find referenced Issue.) [INPUT_ERROR]");
        let remapped = remap(ToolError::Upstream {
            status: 400,
            message: "Rate limit exceeded [RATELIMITED]".into(),
            retry_after: Some(3),
        });
        assert_eq!(
            remapped,
            ToolError::Upstream {
                status: 429,
                message: "Rate limit exceeded [RATELIMITED]".into(),
                retry_after: Some(3)
            }
        );
    }

    #[test]
    fn uuids_and_identifiers() {
        assert!(is_uuid("9cfb482a-81e3-4154-b5b9-2c805e70a02d"));
        assert!(!is_uuid("ENG-123"));
        assert!(!is_uuid("9cfb482a81e34154b5b92c805e70a02d0000"));
    }
}
