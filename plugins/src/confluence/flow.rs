//! The outbound-data guard's view of Confluence (`shared/design/flows.md` sections 2 and 3).
//!
//! The user's side: `GET /rest/api/user/current` (`accountId`, `email` when the profile shows
//! it). A page or comment in a space of the connected site is inside unless the space is public:
//! a space whose permissions grant anonymous access (`anonymousAccess: true`, in
//! `GET /rest/api/space/{key}?expand=permissions`) is read by anyone, so a write there is
//! outside. A space whose permissions the user cannot see is not assumed private: an error (the
//! engine counts the write as outside).
//!
//! Lookups: a page's space (`GET /api/v2/pages/{id}` for its `spaceId`), a numeric space id's key
//! (`GET /api/v2/spaces/{id}`), then the space's permissions; a space given by key skips the
//! second.

use std::sync::Arc;

use serde_json::Value;

use crate::api::*;
use crate::flow::{Party, Side, Verdict, arg_str, undecided};

/// The user's side: the current user's account id (and email when shown).
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/rest/api/user/current")).await?.json()?;
        if me["type"] == "anonymous" {
            return Err(undecided("Confluence answered as an anonymous user"));
        }
        crate::flow::side_from(&me, &["/email"], &["/accountId"])
    })
}

/// Whether the space `key` is public.
async fn space_key_verdict(up: &dyn Upstream, key: &str) -> Result<Verdict, ToolError> {
    let req = HttpRequest::get(format!("/rest/api/space/{}", encode_segment(key))).query("expand", "permissions");
    let space = up.send(req).await?.json()?;
    let Some(perms) = space["permissions"].as_array() else {
        return Err(undecided(format!("Confluence did not show who can read the space {key}")));
    };
    if perms.iter().any(|p| p["anonymousAccess"].as_bool() == Some(true)) {
        return Ok(Verdict::outside(Party::Anyone(format!("anyone: the Confluence space {key} is public"))));
    }
    Ok(Verdict::Inside)
}

/// A space given by numeric id or by key.
async fn space_verdict(up: &dyn Upstream, space: &str) -> Result<Verdict, ToolError> {
    let space = space.trim();
    if !space.is_empty() && space.bytes().all(|b| b.is_ascii_digit()) {
        let s = up.send(HttpRequest::get(format!("/api/v2/spaces/{space}"))).await?.json()?;
        let Some(key) = s["key"].as_str() else {
            return Err(undecided(format!("Confluence named no key for space {space}")));
        };
        return space_key_verdict(up, key).await;
    }
    if space.is_empty() {
        return Err(undecided("no space given"));
    }
    space_key_verdict(up, space).await
}

/// `confluence_create_page` (its `space_id`), `confluence_update_page` and
/// `confluence_create_comment` (the space of `page_id`).
pub(super) fn space_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    _side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        if let Some(space) = arg_str(&args, "space_id") {
            return space_verdict(&*up, space).await;
        }
        let page = arg_str(&args, "page_id").ok_or_else(|| undecided("no page_id or space_id given"))?;
        if !page.bytes().all(|b| b.is_ascii_digit()) {
            return Err(undecided(format!("'{page}' is not a Confluence page id")));
        }
        let p = up.send(HttpRequest::get(format!("/api/v2/pages/{page}"))).await?.json()?;
        let space = match &p["spaceId"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return Err(undecided(format!("Confluence named no space for page {page}"))),
        };
        space_verdict(&*up, &space).await
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Results, Side, Verdict};
    use crate::mock::MockUpstream;

    fn space(anonymous: bool) -> Value {
        json!({"key": "ENG", "permissions": [{"operation": {"operation": "read", "targetType": "space"}, "anonymousAccess": anonymous},
                                             {"operation": {"operation": "read", "targetType": "space"}, "subjects": {"group": {}}}]})
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_current_user() {
        let side = INTEGRATION.side.unwrap();
        let (s, reqs) = MockUpstream::new()
            .json(json!({"type": "known", "accountId": "5b10a", "email": "ann@acme.example"}))
            .side(side);
        assert!(s.unwrap().has_id("5b10a"));
        assert_eq!(reqs[0].path, "/rest/api/user/current");
        assert!(MockUpstream::new().json(json!({"type": "anonymous"})).side(side).0.is_err());
    }

    #[test]
    fn pages_in_private_spaces_are_inside_public_spaces_outside() {
        let (v, reqs) = MockUpstream::new().json(space(false)).audience(
            &CREATE_PAGE,
            json!({"space_id": "ENG", "title": "t", "body": "b"}),
            &Side::default(),
        );
        assert_eq!(v.unwrap(), Verdict::Inside);
        assert_eq!((reqs[0].path.as_str(), reqs[0].query[0].1.as_str()), ("/rest/api/space/ENG", "permissions"));
        let v = MockUpstream::new().json(space(true)).verdict(
            &CREATE_PAGE,
            json!({"space_id": "ENG", "title": "t", "body": "b"}),
            &Side::default(),
        );
        assert!(matches!(v, Verdict::Outside { .. }));
        for tool in [&UPDATE_PAGE, &CREATE_COMMENT] {
            let (v, reqs) = MockUpstream::new()
                .json(json!({"id": "42", "spaceId": "98306"}))
                .json(json!({"id": "98306", "key": "PUB"}))
                .json(space(true))
                .audience(tool, json!({"page_id": "42", "body": "b"}), &Side::default());
            assert!(matches!(v.unwrap(), Verdict::Outside { .. }), "{}", tool.name);
            assert_eq!(
                reqs.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
                ["/api/v2/pages/42", "/api/v2/spaces/98306", "/rest/api/space/PUB"]
            );
        }
    }

    #[test]
    fn unseen_permissions_and_failed_lookups_are_errors() {
        let args = json!({"space_id": "ENG", "title": "t", "body": "b"});
        assert!(
            MockUpstream::new()
                .json(json!({"key": "ENG"}))
                .audience(&CREATE_PAGE, args.clone(), &Side::default())
                .0
                .is_err()
        );
        let err = ToolError::Upstream { status: 404, message: "not found".into(), retry_after: None };
        assert!(MockUpstream::new().error(err).audience(&CREATE_PAGE, args, &Side::default()).0.is_err());
        assert!(
            MockUpstream::new()
                .audience(&UPDATE_PAGE, json!({"page_id": "../x", "body": "b"}), &Side::default())
                .0
                .is_err()
        );
    }
}
