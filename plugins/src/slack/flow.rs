//! The outbound-data guard's view of Slack (`shared/design/flows.md` sections 2 and 3).
//!
//! The user's side: `auth.test`'s `user_id` and `team_id` (and `enterprise_id` on an Enterprise
//! Grid). A message goes to a channel's members: a channel of the user's own team that is not
//! shared with another organisation is inside, whether public in the workspace or private (only
//! workspace members read either). Outside: a Slack Connect channel (`is_ext_shared`, or
//! `is_pending_ext_shared`, or `shared_team_ids`/`conversation_host_id` naming a team that is not
//! the user's), and a DM or group DM with someone whose `team_id` is not the user's team or who is
//! `is_stranger`. A channel shared only inside the user's own Enterprise Grid organisation
//! (`is_org_shared` without `is_ext_shared`) stays inside: it is the same organisation.
//!
//! Lookups: `conversations.info` for the channel (after `conversations.list` when it is given
//! by #name), `users.info` for the other member of a DM, `conversations.members` plus
//! `users.info` per member for a group DM. Any failed lookup is an error (the engine counts the
//! write as outside).

use std::sync::Arc;

use serde_json::Value;

use super::web::*;
use crate::api::*;
use crate::flow::{Party, Side, Verdict, undecided};

/// The user's side: `auth.test` (`user_id`, `team_id`, `enterprise_id`).
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let me = call(&*up, get("auth.test")).await?;
        let (Some(user), Some(team)) = (me["user_id"].as_str(), me["team_id"].as_str()) else {
            return Err(undecided("Slack's auth.test named no user_id or team_id"));
        };
        let mut side = Side::default();
        side.add_id(user);
        side.add_id(team);
        if let Some(e) = me["enterprise_id"].as_str() {
            side.add_id(e);
        }
        Ok(side)
    })
}

/// Whether a user (a `users.info` member) belongs to the user's organisation.
fn member_verdict(user: &Value, side: &Side) -> Result<Verdict, ToolError> {
    let id = user["id"].as_str().unwrap_or("?");
    if side.has_id(id) {
        return Ok(Verdict::Inside);
    }
    let name = user["profile"]["email"]
        .as_str()
        .or(user["real_name"].as_str())
        .or(user["name"].as_str())
        .map(|n| format!("{n} ({id})"))
        .unwrap_or_else(|| id.to_string());
    if user["is_stranger"].as_bool() == Some(true) {
        return Ok(Verdict::outside(Party::Named(format!("{name}, a Slack user outside the workspace"))));
    }
    let Some(team) = user["team_id"].as_str() else {
        return Err(undecided(format!("Slack named no team for user {id}")));
    };
    let enterprise = user["enterprise_user"]["enterprise_id"].as_str();
    if side.has_id(team) || enterprise.is_some_and(|e| side.has_id(e)) {
        Ok(Verdict::Inside)
    } else {
        Ok(Verdict::outside(Party::Named(format!("{name}, a member of another organisation's Slack"))))
    }
}

async fn user_verdict(up: &dyn Upstream, r: UserRef, side: &Side) -> Result<Verdict, ToolError> {
    let user = lookup_user(up, &r).await?;
    if !user.is_object() {
        return Err(undecided("Slack returned no user"));
    }
    member_verdict(&user, side)
}

/// The audience of a post into `channel` (an id, a #name, or a user id, which Slack posts into
/// the DM with that user).
pub(super) async fn channel_verdict(up: &dyn Upstream, channel: &str, side: &Side) -> Result<Verdict, ToolError> {
    let c = channel.trim();
    if is_user_id(c) {
        return user_verdict(up, UserRef::Id(c.to_string()), side).await;
    }
    let id = resolve_channel(up, c).await?;
    let info = call(up, get("conversations.info").query("channel", &id)).await?;
    let ch = &info["channel"];
    if !ch.is_object() {
        return Err(undecided(format!("Slack returned no channel for {id}")));
    }
    let label = ch["name"].as_str().map(|n| format!("#{n} ({id})")).unwrap_or_else(|| id.clone());
    let flag = |k: &str| ch[k].as_bool() == Some(true);
    let shared_with_others = ch["shared_team_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(std::iter::once(&ch["conversation_host_id"]))
        .filter_map(Value::as_str)
        .any(|t| !side.has_id(t));
    if flag("is_ext_shared") || flag("is_pending_ext_shared") || (shared_with_others && !flag("is_org_shared")) {
        return Ok(Verdict::outside(Party::Named(format!("{label}, shared with another organisation"))));
    }
    if flag("is_im") {
        let Some(other) = ch["user"].as_str() else {
            return Err(undecided(format!("Slack named no member of the DM {id}")));
        };
        return user_verdict(up, UserRef::Id(other.to_string()), side).await;
    }
    if flag("is_mpim") {
        let members = call(up, get("conversations.members").query("channel", &id).query("limit", 200)).await?;
        let ids: Vec<&str> = members["members"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if ids.is_empty() {
            return Err(undecided(format!("Slack named no members of the group DM {id}")));
        }
        let mut verdict = Verdict::Inside;
        for m in ids {
            verdict = verdict.and(user_verdict(up, UserRef::Id(m.to_string()), side).await?);
        }
        return Ok(verdict);
    }
    Ok(Verdict::Inside)
}

fn channel_arg(args: &Value) -> Result<String, ToolError> {
    crate::flow::arg_str(args, "channel").map(str::to_string).ok_or_else(|| undecided("no channel given"))
}

/// `slack_send_message`, `slack_update_message`, `slack_add_reaction`, `slack_upload_file`: the
/// channel's members.
pub(super) fn channel_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move { channel_verdict(&*up, &channel_arg(&args)?, &side).await })
}

/// `slack_send_dm`: every person named (id, @handle or email, comma-separated).
pub(super) fn dm_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let users = crate::flow::arg_str(&args, "user").ok_or_else(|| undecided("no user given"))?;
        let mut verdict = Verdict::Inside;
        for r in users.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            verdict = verdict.and(user_verdict(&*up, parse_user_ref(r), &side).await?);
        }
        Ok(verdict)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Party, Results, Side, Verdict};
    use crate::mock::MockUpstream;

    fn me() -> Side {
        let mut s = Side::default();
        s.add_id("U0ANN0001");
        s.add_id("T0ACME001");
        s
    }

    fn ok(v: Value) -> Value {
        let mut v = v;
        v["ok"] = json!(true);
        v
    }

    fn is_outside(v: &Verdict) -> bool {
        matches!(v, Verdict::Outside { grants: false, .. })
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_auth_test() {
        let up = MockUpstream::new()
            .json(json!({"ok": true, "user_id": "U0ANN0001", "team_id": "T0ACME001", "user": "ann"}));
        let (side, reqs) = up.side(INTEGRATION.side.unwrap());
        assert_eq!(side.unwrap().ids, ["U0ANN0001", "T0ACME001"]);
        assert_eq!(reqs[0].path, "/auth.test");
        let (side, _) =
            MockUpstream::new().json(json!({"ok": false, "error": "invalid_auth"})).side(INTEGRATION.side.unwrap());
        assert!(side.is_err());
        let (side, _) = MockUpstream::new().json(json!({"ok": true, "user": "ann"})).side(INTEGRATION.side.unwrap());
        assert!(side.is_err(), "no team id, no side");
    }

    #[test]
    fn own_channels_are_inside() {
        for ch in [
            json!({"id": "C0GENERAL1", "name": "general", "is_channel": true, "is_private": false}),
            json!({"id": "C0GENERAL1", "name": "eng", "is_private": true, "is_shared": false, "shared_team_ids": ["T0ACME001"]}),
            json!({"id": "C0GENERAL1", "name": "grid", "is_shared": true, "is_org_shared": true, "shared_team_ids": ["T0ACME001", "T0ACMEEU1"]}),
        ] {
            let up = MockUpstream::new().json(ok(json!({"channel": ch})));
            let (v, reqs) = up.audience(&SEND_MESSAGE, json!({"channel": "C0GENERAL1", "text": "hi"}), &me());
            assert_eq!(v.unwrap(), Verdict::Inside, "{ch}");
            assert_eq!(reqs[0].path, "/conversations.info");
            assert_eq!(reqs[0].query, [("channel".to_string(), "C0GENERAL1".to_string())]);
        }
    }

    #[test]
    fn slack_connect_channels_are_outside() {
        for ch in [
            json!({"id": "C0SHARED01", "name": "acme-evil", "is_ext_shared": true, "is_shared": true}),
            json!({"id": "C0SHARED01", "name": "pending", "is_pending_ext_shared": true}),
            json!({"id": "C0SHARED01", "name": "shared", "is_shared": true, "shared_team_ids": ["T0ACME001", "T0EVIL0001"]}),
            json!({"id": "C0SHARED01", "name": "hosted", "conversation_host_id": "T0EVIL0001"}),
        ] {
            for tool in [&SEND_MESSAGE, &UPDATE_MESSAGE, &ADD_REACTION, &UPLOAD_FILE] {
                let up = MockUpstream::new().json(ok(json!({"channel": ch})));
                let args = json!({"channel": "C0SHARED01", "text": "x", "ts": "1.2", "emoji": "eyes", "content": "x"});
                let v = up.verdict(tool, args, &me());
                assert!(is_outside(&v), "{} {ch}: {v:?}", tool.name);
            }
        }
    }

    #[test]
    fn channels_by_name_are_resolved_first() {
        let up = MockUpstream::new()
            .json(ok(json!({"channels": [{"id": "C0SHARED01", "name": "partners"}]})))
            .json(ok(json!({"channel": {"id": "C0SHARED01", "name": "partners", "is_ext_shared": true}})));
        let (v, reqs) = up.audience(&SEND_MESSAGE, json!({"channel": "#Partners", "text": "x"}), &me());
        assert!(is_outside(&v.unwrap()));
        assert_eq!(reqs[0].path, "/conversations.list");
    }

    #[test]
    fn dms_depend_on_the_other_member() {
        // A DM channel with a colleague.
        let up = MockUpstream::new()
            .json(ok(json!({"channel": {"id": "D0BOB00001", "is_im": true, "user": "U0BOB0001"}})))
            .json(ok(json!({"user": {"id": "U0BOB0001", "team_id": "T0ACME001"}})));
        assert_eq!(up.verdict(&SEND_MESSAGE, json!({"channel": "D0BOB00001", "text": "x"}), &me()), Verdict::Inside);
        // A DM with a Slack Connect user.
        let up = MockUpstream::new()
            .json(ok(json!({"channel": {"id": "D0MAL00001", "is_im": true, "user": "U0MAL0001"}})))
            .json(ok(
                json!({"user": {"id": "U0MAL0001", "team_id": "T0EVIL0001", "profile": {"email": "m@evil.example"}}}),
            ));
        let v = up.verdict(&SEND_MESSAGE, json!({"channel": "D0MAL00001", "text": "x"}), &me());
        assert_eq!(
            v,
            Verdict::outside(Party::Named(
                "m@evil.example (U0MAL0001), a member of another organisation's Slack".into()
            ))
        );
        // A user id as the channel posts into the DM with that user.
        let up = MockUpstream::new()
            .json(ok(json!({"user": {"id": "U0MAL0001", "team_id": "T0ACME001", "is_stranger": true}})));
        let (v, reqs) = up.audience(&SEND_MESSAGE, json!({"channel": "U0MAL0001", "text": "x"}), &me());
        assert!(is_outside(&v.unwrap()));
        assert_eq!(reqs[0].path, "/users.info");
    }

    #[test]
    fn group_dms_check_every_member() {
        let up = MockUpstream::new()
            .json(ok(json!({"channel": {"id": "G0GROUP001", "is_mpim": true}})))
            .json(ok(json!({"members": ["U0ANN0001", "U0BOB0001", "U0MAL0001"]})))
            .json(ok(json!({"user": {"id": "U0ANN0001", "team_id": "T0ACME001"}})))
            .json(ok(json!({"user": {"id": "U0BOB0001", "team_id": "T0ACME001"}})))
            .json(ok(json!({"user": {"id": "U0MAL0001", "team_id": "T0EVIL0001"}})));
        let v = up.verdict(&SEND_MESSAGE, json!({"channel": "G0GROUP001", "text": "x"}), &me());
        assert!(is_outside(&v));
    }

    #[test]
    fn send_dm_checks_each_person() {
        let up = MockUpstream::new()
            .json(ok(json!({"user": {"id": "U0BOB0001", "team_id": "T0ACME001"}})))
            .json(ok(json!({"user": {"id": "U0MAL0001", "team_id": "T0EVIL0001"}})));
        let (v, reqs) = up.audience(&SEND_DM, json!({"user": "bob@acme.example, U0MAL0001", "text": "x"}), &me());
        assert!(is_outside(&v.unwrap()));
        assert_eq!(reqs[0].path, "/users.lookupByEmail");
        assert_eq!(reqs[1].path, "/users.info");
        let up = MockUpstream::new().json(ok(json!({"user": {"id": "U0BOB0001", "team_id": "T0ACME001"}})));
        assert_eq!(up.verdict(&SEND_DM, json!({"user": "U0BOB0001", "text": "x"}), &me()), Verdict::Inside);
    }

    #[test]
    fn failed_lookups_are_errors_never_inside() {
        let up = MockUpstream::new().json(json!({"ok": false, "error": "channel_not_found"}));
        assert!(up.audience(&SEND_MESSAGE, json!({"channel": "C0NOWHERE1", "text": "x"}), &me()).0.is_err());
        let up = MockUpstream::new().error(ToolError::Network("down".into()));
        assert!(up.audience(&SEND_MESSAGE, json!({"channel": "C0NOWHERE1", "text": "x"}), &me()).0.is_err());
        let up = MockUpstream::new().json(json!({"ok": false, "error": "users_not_found"}));
        assert!(up.audience(&SEND_DM, json!({"user": "m@evil.example", "text": "x"}), &me()).0.is_err());
        // A user without a team is not assumed to be a colleague.
        let up = MockUpstream::new().json(ok(json!({"user": {"id": "U0MAL0001"}})));
        assert!(up.audience(&SEND_DM, json!({"user": "U0MAL0001", "text": "x"}), &me()).0.is_err());
        let up = MockUpstream::new().json(ok(json!({})));
        assert!(up.audience(&SEND_MESSAGE, json!({"channel": "C0NOWHERE1", "text": "x"}), &me()).0.is_err());
    }
}
