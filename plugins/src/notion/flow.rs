//! The outbound-data guard's view of Notion (`shared/design/flows.md` sections 2 and 3).
//!
//! The user's side: `GET /users/me` (the integration's bot): its owner user's id and email when a
//! person owns it, and the workspace id. Notion pages and databases in the connected workspace are
//! inside, unless the page written to is published to the web: a page or database whose object
//! carries a `public_url` is outside (anyone reads it).
//!
//! Lookups: `notion_update_page`, `notion_add_blocks` and `notion_create_comment` (on a page) read
//! the page (`GET /pages/{id}`); `notion_create_page` reads its parent (`GET /pages/{id}`, or
//! `GET /databases/{id}`, or `GET /data_sources/{id}` and then its database). A reply in a
//! discussion (`discussion_id`) cannot be traced to its page through the API: it counts as
//! outside (an error the engine treats so). A block id that is not a page (a toggle given to
//! `notion_add_blocks`) is not readable as a page either: an error too. Limit: Notion's API
//! reports `public_url` for the published page itself; a sub-page that is visible only through
//! a published ancestor is judged as its own object says.

use std::sync::Arc;

use serde_json::Value;

use super::{call, notion_id};
use crate::api::*;
use crate::flow::{Party, Side, Verdict, arg_str, undecided};

/// The user's side: the bot's owner (id, email) and workspace.
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let me = call(&*up, HttpRequest::get("/users/me")).await?;
        let bot = &me["bot"];
        let mut side = Side::default();
        let owner = &bot["owner"]["user"];
        if let Some(email) = owner["person"]["email"].as_str() {
            side.add_email(email);
        }
        if let Some(id) = owner["id"].as_str() {
            side.add_id(id);
        }
        if let Some(ws) = bot["workspace_id"].as_str() {
            side.add_id(ws);
        }
        if side.ids.is_empty() && side.emails.is_empty() {
            return Err(undecided("Notion's /users/me named no owner or workspace"));
        }
        Ok(side)
    })
}

fn verdict_of(object: &Value, what: &str) -> Result<Verdict, ToolError> {
    if !object.is_object() || object.get("id").is_none() {
        return Err(undecided(format!("Notion returned no {what}")));
    }
    match object["public_url"].as_str().filter(|u| !u.is_empty()) {
        Some(url) => Ok(Verdict::outside(Party::Anyone(format!("anyone: the {what} is published at {url}")))),
        None => Ok(Verdict::Inside),
    }
}

async fn page_verdict(up: &dyn Upstream, id: &str) -> Result<Verdict, ToolError> {
    let page = call(up, HttpRequest::get(format!("/pages/{}", encode_segment(id)))).await?;
    verdict_of(&page, "page")
}

async fn database_verdict(up: &dyn Upstream, id: &str) -> Result<Verdict, ToolError> {
    let db = call(up, HttpRequest::get(format!("/databases/{}", encode_segment(id)))).await?;
    verdict_of(&db, "database")
}

/// `notion_update_page`, `notion_add_blocks`, `notion_create_comment`: the page written to.
pub(super) fn page_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    _side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        match arg_str(&args, "page_id") {
            Some(p) => page_verdict(&*up, &notion_id("/page_id", p)?).await,
            None if arg_str(&args, "discussion_id").is_some() => {
                Err(undecided("Notion cannot say which page a discussion belongs to"))
            }
            None => Err(undecided("no page_id given")),
        }
    })
}

/// `notion_create_page`: the parent page, database or data source (its database).
pub(super) fn create_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    _side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let parent = notion_id("/parent_id", arg_str(&args, "parent_id").unwrap_or_default())?;
        match arg_str(&args, "parent_type").unwrap_or("page") {
            "page" => page_verdict(&*up, &parent).await,
            "database" => database_verdict(&*up, &parent).await,
            "data_source" => {
                let ds = call(&*up, HttpRequest::get(format!("/data_sources/{}", encode_segment(&parent)))).await?;
                let Some(db) = ds["parent"]["database_id"].as_str() else {
                    return Err(undecided("Notion named no database for the data source"));
                };
                database_verdict(&*up, db).await
            }
            other => Err(undecided(format!("unknown parent_type {other}"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Results, Side, Verdict};
    use crate::mock::MockUpstream;

    const PAGE: &str = "59833787-2cf9-4fdf-8782-e53db20768a5";

    fn me() -> Side {
        Side::default()
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_the_bot_owner_and_workspace() {
        let me = json!({"object": "user", "type": "bot", "bot": {"owner": {"type": "user", "user": {"id": "u1", "person": {"email": "Ann@Acme.Example"}}}, "workspace_id": "w1", "workspace_name": "Acme"}});
        let (s, reqs) = MockUpstream::new().json(me).side(INTEGRATION.side.unwrap());
        let s = s.unwrap();
        assert_eq!(
            (s.emails.as_slice(), s.ids.as_slice()),
            (&["ann@acme.example".to_string()][..], &["u1".to_string(), "w1".to_string()][..])
        );
        assert_eq!(reqs[0].path, "/users/me");
        let ws = json!({"bot": {"owner": {"type": "workspace", "workspace": true}, "workspace_id": "w1"}});
        assert_eq!(MockUpstream::new().json(ws).side(INTEGRATION.side.unwrap()).0.unwrap().ids, ["w1"]);
        assert!(MockUpstream::new().json(json!({"bot": {}})).side(INTEGRATION.side.unwrap()).0.is_err());
    }

    #[test]
    fn workspace_pages_are_inside_published_ones_outside() {
        for tool in [&UPDATE_PAGE, &ADD_BLOCKS, &CREATE_COMMENT] {
            let args = json!({"page_id": PAGE, "content": "x", "text": "x", "title": "t"});
            let (v, reqs) =
                MockUpstream::new().json(json!({"id": PAGE, "public_url": null})).audience(tool, args.clone(), &me());
            assert_eq!(v.unwrap(), Verdict::Inside, "{}", tool.name);
            assert_eq!(reqs[0].path, format!("/pages/{PAGE}"));
            let v = MockUpstream::new().json(json!({"id": PAGE, "public_url": "https://acme.notion.site/x"})).verdict(
                tool,
                args,
                &me(),
            );
            assert!(matches!(v, Verdict::Outside { .. }), "{}", tool.name);
        }
    }

    #[test]
    fn new_pages_are_judged_by_their_parent() {
        let (v, reqs) = MockUpstream::new().json(json!({"id": PAGE})).audience(
            &CREATE_PAGE,
            json!({"parent_id": PAGE, "title": "t"}),
            &me(),
        );
        assert_eq!(v.unwrap(), Verdict::Inside);
        assert_eq!(reqs[0].path, format!("/pages/{PAGE}"));
        let v = MockUpstream::new().json(json!({"id": PAGE, "public_url": "https://acme.notion.site/db"})).verdict(
            &CREATE_PAGE,
            json!({"parent_id": PAGE, "parent_type": "database", "title": "t"}),
            &me(),
        );
        assert!(matches!(v, Verdict::Outside { .. }));
        let (v, reqs) = MockUpstream::new()
            .json(json!({"id": "ds", "parent": {"type": "database_id", "database_id": "db1"}}))
            .json(json!({"id": "db1"}))
            .audience(&CREATE_PAGE, json!({"parent_id": PAGE, "parent_type": "data_source", "title": "t"}), &me());
        assert_eq!(v.unwrap(), Verdict::Inside);
        assert_eq!(reqs[1].path, "/databases/db1");
    }

    #[test]
    fn unknown_pages_and_discussions_are_errors() {
        let err = ToolError::Upstream { status: 404, message: "object_not_found".into(), retry_after: None };
        assert!(
            MockUpstream::new()
                .error(err)
                .audience(&ADD_BLOCKS, json!({"page_id": PAGE, "content": "x"}), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .audience(&CREATE_COMMENT, json!({"discussion_id": "d1", "text": "x"}), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .audience(&CREATE_COMMENT, json!({"page_id": "not-an-id", "text": "x"}), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .json(json!({}))
                .audience(&UPDATE_PAGE, json!({"page_id": PAGE, "title": "t"}), &me())
                .0
                .is_err()
        );
    }
}
