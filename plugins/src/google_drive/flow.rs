//! The outbound-data guard's view of Google Drive (`shared/design/flows.md` sections 2 and 3).
//!
//! The user's side: `about.user.emailAddress` (and its domain unless a public mail provider's).
//! A file's audience is its owners and everyone its permissions name (Drive lists inherited
//! permissions with the file): inside when every owner is on the user's side and every
//! permission is a `user`/`group` on the user's side or a `domain` permission for the user's own
//! domain; an `anyone` permission, another domain, or an outside owner, user or group is outside.
//! A shared drive's file has no owner: its permissions (the drive's members) decide.
//!
//! - `google_drive_create_permission`: a grant. `anyone`, another domain, or an outside user or
//!   group is outside and grants the whole file; no lookup.
//! - `google_drive_update_file`: the file's audience (`GET /files/{id}` with owners and
//!   permissions); each folder in `add_parents` too, and moving the file into an outside-shared
//!   folder is a grant (the folder's audience gets the whole file).
//! - `google_drive_upload_file` / `google_drive_create_folder`: the target folder's audience
//!   (what is put in a folder inherits its sharing); the top of My Drive is inside, no lookup.
//! - `google_drive_delete_file`: inside (nothing is sent).
//!
//! A failed lookup, or an answer without owners and permissions, is an error.

use std::sync::Arc;

use serde_json::Value;

use super::file_path;
use crate::api::*;
use crate::flow::{Party, Side, Verdict, arg_str, arg_strings, undecided};

const AUDIENCE_FIELDS: &str = "id,name,driveId,owners(emailAddress),permissions(type,role,emailAddress,domain,deleted)";

/// The user's side: `GET /about?fields=user`.
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let about = up.send(HttpRequest::get("/about").query("fields", "user")).await?.json()?;
        match about["user"]["emailAddress"].as_str().filter(|e| e.contains('@')) {
            Some(email) => Ok(Side::from_email(email)),
            None => Err(undecided("Drive's about.user named no emailAddress")),
        }
    })
}

/// Who a permission lets in, and whether they are on the user's side.
fn permission_verdict(p: &Value, side: &Side) -> Result<Verdict, ToolError> {
    if p["deleted"].as_bool() == Some(true) {
        return Ok(Verdict::Inside);
    }
    match p["type"].as_str() {
        Some("anyone") => Ok(Verdict::outside(Party::Anyone("anyone with the link".into()))),
        Some("domain") => match p["domain"].as_str() {
            Some(d) if side.has_domain(d) => Ok(Verdict::Inside),
            Some(d) => Ok(Verdict::outside(Party::Domain(d.to_ascii_lowercase()))),
            None => Err(undecided("a domain permission without its domain")),
        },
        Some("user") | Some("group") => match p["emailAddress"].as_str() {
            Some(e) => Ok(Verdict::for_emails(side, [e])),
            None => Err(undecided("a user or group permission without its address")),
        },
        other => Err(undecided(format!("a permission of unknown type {other:?}"))),
    }
}

/// The audience of a file or folder: its owners and its permissions.
pub(super) async fn file_verdict(up: &dyn Upstream, id: &str, side: &Side) -> Result<Verdict, ToolError> {
    file_verdict_on(up, "base_url", id, side).await
}

/// [`file_verdict`] through the Drive API at the integration's host `host` (Sheets reaches
/// Drive's file metadata through its own `drive_base_url`).
pub(crate) async fn file_verdict_on(
    up: &dyn Upstream,
    host: &'static str,
    id: &str,
    side: &Side,
) -> Result<Verdict, ToolError> {
    let req = HttpRequest::get(file_path(id)).on(host);
    let f = up.send(req.query("fields", AUDIENCE_FIELDS).query("supportsAllDrives", "true")).await?.json()?;
    let owners = f["owners"].as_array();
    let permissions = f["permissions"].as_array();
    if owners.is_none_or(|o| o.is_empty()) && permissions.is_none_or(|p| p.is_empty()) {
        return Err(undecided(format!("Drive named no owner or permissions of {id}")));
    }
    let mut verdict = Verdict::Inside;
    for o in owners.into_iter().flatten() {
        let Some(e) = o["emailAddress"].as_str() else {
            return Err(undecided(format!("an owner of {id} without an address")));
        };
        verdict = verdict.and(Verdict::for_emails(side, [e]));
    }
    match permissions {
        Some(list) => {
            for p in list {
                verdict = verdict.and(permission_verdict(p, side)?);
            }
        }
        // Only someone who may share the file sees its permissions; without them we cannot tell.
        None => return Err(undecided(format!("Drive did not list who can see {id}"))),
    }
    Ok(verdict)
}

fn as_grant(v: Verdict) -> Verdict {
    match v {
        Verdict::Outside { parties, .. } => Verdict::Outside { parties, grants: true },
        inside => inside,
    }
}

/// `google_drive_create_permission`: the grantee.
pub(super) fn permission_audience(
    _up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    let p = serde_json::json!({"type": args["type"], "emailAddress": args["email_address"], "domain": args["domain"]});
    crate::flow::ready(permission_verdict(&p, &side).map(as_grant))
}

/// `google_drive_update_file`: the file, and every folder it is moved into (a grant).
pub(super) fn update_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let id = arg_str(&args, "file_id").ok_or_else(|| undecided("no file_id given"))?;
        let mut verdict = file_verdict(&*up, id, &side).await?;
        for folder in arg_strings(&args, "add_parents") {
            verdict = verdict.and(as_grant(file_verdict(&*up, folder.trim(), &side).await?));
        }
        Ok(verdict)
    })
}

/// `google_drive_upload_file` (`folder_id`) and `google_drive_create_folder` (`parent_id`): the
/// folder it goes into; the top of My Drive is the user's own.
pub(super) fn folder_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        match arg_str(&args, "folder_id").or(arg_str(&args, "parent_id")) {
            None | Some("root") => Ok(Verdict::Inside),
            Some(folder) => file_verdict(&*up, folder, &side).await,
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Party, Results, Side, Verdict};
    use crate::mock::MockUpstream;

    fn me() -> Side {
        Side::from_email("ann@acme.example")
    }

    fn grant(v: &Verdict) -> bool {
        matches!(v, Verdict::Outside { grants: true, .. })
    }

    fn own_file() -> Value {
        json!({"id": "f1", "owners": [{"emailAddress": "ann@acme.example"}],
               "permissions": [{"type": "user", "role": "owner", "emailAddress": "ann@acme.example"},
                               {"type": "user", "role": "writer", "emailAddress": "Bob@EU.Acme.Example"},
                               {"type": "domain", "role": "reader", "domain": "acme.example"}]})
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert_eq!(t.results, Some(Results::Private), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
        }
    }

    #[test]
    fn side_is_about_user() {
        let (s, reqs) = MockUpstream::new()
            .json(json!({"user": {"emailAddress": "ann@acme.example"}}))
            .side(INTEGRATION.side.unwrap());
        assert_eq!(s.unwrap(), me());
        assert_eq!((reqs[0].path.as_str(), reqs[0].query[0].1.as_str()), ("/about", "user"));
        assert!(MockUpstream::new().json(json!({"user": {}})).side(INTEGRATION.side.unwrap()).0.is_err());
    }

    #[test]
    fn permissions_for_outside_parties_are_grants() {
        let cases = [
            (json!({"type": "anyone"}), Party::Anyone("anyone with the link".into())),
            (json!({"type": "domain", "domain": "Evil-Acme.example"}), Party::Domain("evil-acme.example".into())),
            (
                json!({"type": "domain", "domain": "acme.example.evil.example"}),
                Party::Domain("acme.example.evil.example".into()),
            ),
            (json!({"type": "user", "email_address": "m@evil.example"}), Party::Email("m@evil.example".into())),
            (
                json!({"type": "group", "email_address": "all@acme-example.com"}),
                Party::Email("all@acme-example.com".into()),
            ),
            (
                json!({"type": "user", "email_address": "\"ann@acme.example\" <m@evil.example>"}),
                Party::Email("m@evil.example".into()),
            ),
        ];
        for (extra, party) in cases {
            let mut args = json!({"file_id": "f1", "role": "reader"});
            args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let (v, reqs) = MockUpstream::new().audience(&CREATE_PERMISSION, args.clone(), &me());
            assert_eq!(v.unwrap(), Verdict::grant(party), "{args}");
            assert!(reqs.is_empty());
        }
        for extra in [
            json!({"type": "user", "email_address": "bob@acme.example"}),
            json!({"type": "domain", "domain": "eu.acme.example"}),
        ] {
            let mut args = json!({"file_id": "f1", "role": "writer"});
            args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            assert_eq!(MockUpstream::new().verdict(&CREATE_PERMISSION, args, &me()), Verdict::Inside);
        }
        assert!(
            MockUpstream::new().audience(&CREATE_PERMISSION, json!({"file_id": "f", "type": "user"}), &me()).0.is_err()
        );
    }

    #[test]
    fn writes_into_own_files_are_inside() {
        let (v, reqs) =
            MockUpstream::new().json(own_file()).audience(&UPDATE_FILE, json!({"file_id": "f1", "path": "/x"}), &me());
        assert_eq!(v.unwrap(), Verdict::Inside);
        assert_eq!(reqs[0].path, "/files/f1");
        assert!(reqs[0].query.iter().any(|(k, v)| k == "fields" && v.contains("permissions")));
        assert_eq!(MockUpstream::new().verdict(&transfer::UPLOAD_FILE, json!({"path": "/x"}), &me()), Verdict::Inside);
        assert_eq!(MockUpstream::new().verdict(&CREATE_FOLDER, json!({"name": "x"}), &me()), Verdict::Inside);
        assert_eq!(
            MockUpstream::new().json(own_file()).verdict(
                &CREATE_FOLDER,
                json!({"name": "x", "parent_id": "f1"}),
                &me()
            ),
            Verdict::Inside
        );
        assert_eq!(MockUpstream::new().verdict(&DELETE_FILE, json!({"file_id": "f1"}), &me()), Verdict::Inside);
    }

    #[test]
    fn files_owned_or_shared_outside_are_outside() {
        let shared_anyone = json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "anyone", "role": "reader"}]});
        let owned_outside = json!({"owners": [{"emailAddress": "m@evil.example"}], "permissions": [{"type": "user", "emailAddress": "ann@acme.example"}]});
        let other_domain = json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "domain", "domain": "evil.example"}]});
        for f in [shared_anyone, owned_outside, other_domain] {
            let v =
                MockUpstream::new().json(f.clone()).verdict(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me());
            assert!(matches!(v, Verdict::Outside { grants: false, .. }), "{f}");
            let v = MockUpstream::new().json(f.clone()).verdict(
                &transfer::UPLOAD_FILE,
                json!({"path": "/x", "folder_id": "d1"}),
                &me(),
            );
            assert!(matches!(v, Verdict::Outside { .. }), "{f}");
        }
        // Moving an own file into an outside-shared folder grants that folder's audience the file.
        let folder = json!({"owners": [{"emailAddress": "m@evil.example"}], "permissions": []});
        let v = MockUpstream::new().json(own_file()).json(folder).verdict(
            &UPDATE_FILE,
            json!({"file_id": "f1", "add_parents": ["d9"]}),
            &me(),
        );
        assert!(grant(&v));
    }

    #[test]
    fn failed_or_unclear_lookups_are_errors() {
        let err = ToolError::Upstream { status: 404, message: "File not found".into(), retry_after: None };
        assert!(
            MockUpstream::new()
                .error(err)
                .audience(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me())
                .0
                .is_err()
        );
        let no_perms = json!({"owners": [{"emailAddress": "ann@acme.example"}]});
        assert!(
            MockUpstream::new()
                .json(no_perms)
                .audience(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .json(json!({}))
                .audience(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me())
                .0
                .is_err()
        );
        let odd = json!({"owners": [{"emailAddress": "ann@acme.example"}], "permissions": [{"type": "audience"}]});
        assert!(
            MockUpstream::new()
                .json(odd)
                .audience(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me())
                .0
                .is_err()
        );
        // A shared drive's file: no owner, the members decide.
        let drive = json!({"driveId": "0A", "permissions": [{"type": "user", "emailAddress": "bob@acme.example"}]});
        assert_eq!(
            MockUpstream::new().json(drive).verdict(&UPDATE_FILE, json!({"file_id": "f1", "name": "n"}), &me()),
            Verdict::Inside
        );
    }
}
