//! The outbound-data guard's view of GitHub (`shared/design/flows.md` sections 1-3).
//!
//! The user's side: `GET /user` (`login`) and `GET /user/orgs` (each `login`). A write into a
//! repository (file, branch, issue, comment, pull request, review, merge, workflow dispatch) is
//! inside only when the repository's owner is the user or one of the user's organisations **and**
//! its visibility is `private` or `internal`, as `GET /repos/{owner}/{repo}` reports it (the
//! owner in that answer counts, so a renamed or transferred repository is judged where it now
//! lives). A public repository, the user's own included, is outside: anyone reads its issues,
//! comments and files. An owner that is not the user's is outside without a lookup.
//!
//! Results: a repository's contents, issues, pull requests and runs are private unless GitHub's
//! own answer says the repository is public (`private: false` / `visibility: public`); then the
//! handler calls [`Upstream::mark_public`]. Where the answer carries no visibility (contents,
//! issues), the handler asks `GET /repos/{owner}/{repo}` once more; if that fails, the result
//! stays private.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::flow::{Party, Side, Verdict, arg_str, undecided};

/// The user's side: their login and their organisations' logins.
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let user = send(&*up, HttpRequest::get("/user")).await?.json()?;
        let Some(login) = user["login"].as_str().filter(|l| !l.is_empty()) else {
            return Err(undecided("GitHub's /user named no login"));
        };
        let mut side = Side::default();
        side.add_id(login);
        let orgs = send(&*up, HttpRequest::get("/user/orgs").query("per_page", 100)).await?.json()?;
        let Some(orgs) = orgs.as_array() else {
            return Err(undecided("GitHub's /user/orgs was not a list"));
        };
        for o in orgs {
            if let Some(l) = o["login"].as_str() {
                side.add_id(l);
            }
        }
        Ok(side)
    })
}

/// Whether a repository resource GitHub returned is public.
pub(super) fn is_public(repo: &Value) -> bool {
    repo["private"].as_bool() == Some(false) || repo["visibility"].as_str() == Some("public")
}

/// Whether a repository resource is private (or internal), as GitHub reports it. Missing fields
/// count as not private.
fn is_private(repo: &Value) -> bool {
    match repo["visibility"].as_str() {
        Some(v) => v == "private" || v == "internal",
        None => repo["private"].as_bool() == Some(true),
    }
}

/// Whether `GET /repos/{owner}/{repo}` says the repository is public; any failure says no (the
/// result stays private). Asked before the tool's own request, so a handler marks its result
/// public only once that request succeeded.
pub(super) async fn repo_is_public(up: &dyn Upstream, owner: &str, repo: &str) -> bool {
    match send(up, HttpRequest::get(repo_path(owner, repo))).await {
        Ok(resp) => resp.json().is_ok_and(|r| is_public(&r)),
        Err(_) => false,
    }
}

/// Marks the call's result public when it lists at least one repository and every one is public.
pub(super) fn mark_if_all_public<'a>(up: &dyn Upstream, repos: impl IntoIterator<Item = &'a Value>) {
    let mut any = false;
    for r in repos {
        if !is_public(r) {
            return;
        }
        any = true;
    }
    if any {
        up.mark_public();
    }
}

/// The audience of a write into `owner/repo`.
pub(super) async fn repo_verdict(
    up: &dyn Upstream,
    owner: &str,
    repo: &str,
    side: &Side,
) -> Result<Verdict, ToolError> {
    let name = format!("{owner}/{repo}");
    if !side.has_id(owner) {
        return Ok(Verdict::outside(Party::Named(format!(
            "{name} (a repository the user and their organisations do not own)"
        ))));
    }
    let r = send(up, HttpRequest::get(repo_path(owner, repo))).await?.json()?;
    let Some(real_owner) = r["owner"]["login"].as_str() else {
        return Err(undecided(format!("GitHub named no owner for {name}")));
    };
    let name = r["full_name"].as_str().unwrap_or(&name).to_string();
    if !side.has_id(real_owner) {
        return Ok(Verdict::outside(Party::Named(format!(
            "{name} (a repository the user and their organisations do not own)"
        ))));
    }
    if is_public(&r) {
        return Ok(Verdict::outside(Party::Anyone(format!("anyone: {name} is a public repository"))));
    }
    if !is_private(&r) {
        return Err(undecided(format!("GitHub did not say whether {name} is private")));
    }
    Ok(Verdict::Inside)
}

/// Every write into a repository named by `owner` and `repo`.
pub(super) fn repo_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let (Some(owner), Some(repo)) = (arg_str(&args, "owner"), arg_str(&args, "repo")) else {
            return Err(undecided("no owner and repo given"));
        };
        repo_verdict(&*up, owner, repo, &side).await
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Audience, Party, Results, Side, Verdict};
    use crate::mock::MockUpstream;

    fn me() -> Side {
        let mut s = Side::default();
        s.add_id("ann");
        s.add_id("acme");
        s
    }

    fn writes() -> Vec<&'static ToolSpec> {
        INTEGRATION.tools.iter().filter(|t| t.effect.mutating()).collect()
    }

    fn args() -> Value {
        json!({"owner": "acme", "repo": "secret", "path": "a.txt", "content": "x", "message": "m", "title": "t", "body": "b",
               "issue_number": 1, "pull_number": 1, "branch": "b", "head": "h", "base": "main", "event": "COMMENT", "workflow_id": "ci.yml", "ref": "main"})
    }

    #[test]
    fn every_tool_is_labelled() {
        for t in INTEGRATION.tools {
            assert!(t.results.is_some(), "{}", t.name);
            assert_eq!(t.audience.is_some(), t.effect.mutating(), "{}", t.name);
            if t.effect.mutating() {
                assert!(matches!(t.audience, Some(Audience::Decide(_))), "{}", t.name);
            }
        }
        assert_eq!(
            INTEGRATION.tools.iter().find(|t| t.name == "github_search_issues").unwrap().results,
            Some(Results::Private)
        );
    }

    #[test]
    fn side_is_the_login_and_orgs() {
        let up =
            MockUpstream::new().json(json!({"login": "Ann"})).json(json!([{"login": "acme"}, {"login": "acme-labs"}]));
        let (side, reqs) = up.side(INTEGRATION.side.unwrap());
        assert_eq!(side.unwrap().ids, ["Ann", "acme", "acme-labs"]);
        assert_eq!(reqs[0].path, "/user");
        assert_eq!(reqs[1].path, "/user/orgs");
        let up = MockUpstream::new().json(json!({"login": "ann"})).error(ToolError::Upstream {
            status: 403,
            message: "no".into(),
            retry_after: None,
        });
        assert!(up.side(INTEGRATION.side.unwrap()).0.is_err(), "no orgs, no side");
        assert!(MockUpstream::new().json(json!({})).side(INTEGRATION.side.unwrap()).0.is_err());
    }

    #[test]
    fn private_repos_of_the_user_and_orgs_are_inside() {
        for tool in writes() {
            for (owner, vis) in [("acme", "private"), ("ACME", "internal"), ("ann", "private")] {
                let up = MockUpstream::new().json(json!({"full_name": format!("{owner}/secret"), "owner": {"login": owner}, "private": true, "visibility": vis}));
                let mut a = args();
                a["owner"] = json!(owner);
                let (v, reqs) = up.audience(tool, a, &me());
                assert_eq!(v.unwrap(), Verdict::Inside, "{} {owner}", tool.name);
                assert_eq!(reqs[0].path, format!("/repos/{owner}/secret"));
            }
        }
    }

    #[test]
    fn public_repos_even_the_users_own_are_outside() {
        for tool in writes() {
            let up = MockUpstream::new().json(json!({"full_name": "ann/dotfiles", "owner": {"login": "ann"}, "private": false, "visibility": "public"}));
            let mut a = args();
            a["owner"] = json!("ann");
            let v = up.verdict(tool, a, &me());
            assert_eq!(
                v,
                Verdict::outside(Party::Anyone("anyone: ann/dotfiles is a public repository".into())),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn repos_owned_outside_are_outside_without_a_lookup() {
        for owner in ["mallory", "acme-evil", "acme.evil", "evilacme"] {
            let mut a = args();
            a["owner"] = json!(owner);
            let (v, reqs) = MockUpstream::new().audience(&issues::CREATE_ISSUE, a, &me());
            assert!(matches!(v.unwrap(), Verdict::Outside { grants: false, .. }), "{owner}");
            assert!(reqs.is_empty());
        }
        // A repository transferred out of the user's organisation is judged by its real owner.
        let up = MockUpstream::new()
            .json(json!({"full_name": "mallory/secret", "owner": {"login": "mallory"}, "private": true}));
        assert!(matches!(up.verdict(&issues::CREATE_COMMENT, args(), &me()), Verdict::Outside { .. }));
    }

    #[test]
    fn failed_or_unclear_lookups_are_errors() {
        let up = MockUpstream::new().error(ToolError::Upstream {
            status: 404,
            message: "Not Found".into(),
            retry_after: None,
        });
        assert!(up.audience(&repos::UPDATE_FILE, args(), &me()).0.is_err());
        let up = MockUpstream::new().json(json!({"full_name": "acme/secret", "owner": {"login": "acme"}}));
        assert!(up.audience(&repos::UPDATE_FILE, args(), &me()).0.is_err(), "no visibility, no verdict");
        let up = MockUpstream::new().json(json!({"private": true}));
        assert!(up.audience(&repos::UPDATE_FILE, args(), &me()).0.is_err(), "no owner, no verdict");
        assert!(MockUpstream::new().audience(&repos::UPDATE_FILE, json!({"owner": "acme"}), &me()).0.is_err());
    }

    #[test]
    fn public_repo_reads_are_marked_public() {
        let file = json!({"type": "file", "path": "README.md", "encoding": "base64", "content": "aGk=", "size": 2, "sha": "x"});
        let public = json!({"full_name": "rust-lang/rust", "owner": {"login": "rust-lang"}, "private": false, "visibility": "public"});
        let private =
            json!({"full_name": "acme/secret", "owner": {"login": "acme"}, "private": true, "visibility": "private"});
        let a = json!({"owner": "rust-lang", "repo": "rust", "path": "README.md"});
        let (_, marked) =
            MockUpstream::new().json(public.clone()).json(file.clone()).ok_marked(&repos::GET_FILE, a.clone());
        assert!(marked);
        let (_, marked) =
            MockUpstream::new().json(private.clone()).json(file.clone()).ok_marked(&repos::GET_FILE, a.clone());
        assert!(!marked);
        let (_, marked) = MockUpstream::new()
            .error(ToolError::Upstream { status: 500, message: "x".into(), retry_after: None })
            .json(file)
            .ok_marked(&repos::GET_FILE, a.clone());
        assert!(!marked, "a failed lookup leaves the result private");
        let (_, marked) =
            MockUpstream::new().json(public.clone()).ok_marked(&repos::GET_REPO, json!({"owner": "o", "repo": "r"}));
        assert!(marked);
        let (_, marked) =
            MockUpstream::new().json(private.clone()).ok_marked(&repos::GET_REPO, json!({"owner": "o", "repo": "r"}));
        assert!(!marked);
        let (_, marked) =
            MockUpstream::new().json(json!([public.clone(), private])).ok_marked(&repos::LIST_REPOS, json!({}));
        assert!(!marked, "one private repository in the list keeps it private");
        let (_, marked) = MockUpstream::new().json(json!([])).ok_marked(&repos::LIST_REPOS, json!({}));
        assert!(!marked);
        let (_, marked) = MockUpstream::new()
            .json(json!({"items": [{"path": "a", "repository": public}]}))
            .ok_marked(&repos::SEARCH_CODE, json!({"q": "x"}));
        assert!(marked);
    }
}
