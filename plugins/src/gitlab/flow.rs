//! The outbound-data guard's view of GitLab (`shared/design/flows.md` sections 1-3), as GitHub's.
//!
//! The user's side: `GET /user` (`username`, `id`, `email`) and the groups the user belongs to
//! (`GET /groups?min_access_level=10`, each `full_path`; their subgroups count too). A write into
//! a project (issue, comment, merge request, merge, pipeline) is inside only when the project's
//! namespace (`GET /projects/:id`, `namespace.full_path`) is the user's or one of the user's
//! groups **and** its visibility is `private`, or `internal` on a self-managed instance (there,
//! internal means the instance's own users). `public`, and `internal` on gitlab.com (any
//! signed-in gitlab.com user reads it), are outside. A failed lookup is an error.
//!
//! Results: `gitlab_list_projects` is public when every project listed is public;
//! `gitlab_get_file` asks `GET /projects/:id` first and is public when the project is.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::flow::{Party, Side, Verdict, undecided};

/// The user's side: their username, id and email, and their groups.
pub(super) fn side(up: Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>> {
    Box::pin(async move {
        let me = up.send(HttpRequest::get("/user")).await?.json()?;
        if me["username"].as_str().is_none_or(str::is_empty) {
            return Err(undecided("GitLab's /user named no username"));
        }
        let mut side = crate::flow::side_from(&me, &["/email"], &["/username", "/id"])?;
        let groups =
            up.send(HttpRequest::get("/groups").query("min_access_level", 10).query("per_page", 100)).await?.json()?;
        let Some(groups) = groups.as_array() else {
            return Err(undecided("GitLab's /groups was not a list"));
        };
        for g in groups {
            if let Some(p) = g["full_path"].as_str() {
                side.add_id(p);
            }
        }
        Ok(side)
    })
}

/// Whether a namespace path is the user's or inside one of the user's groups.
fn own_namespace(side: &Side, path: &str) -> bool {
    let path = path.trim_matches('/').to_ascii_lowercase();
    side.ids.iter().map(|id| id.to_ascii_lowercase()).any(|id| path == id || path.starts_with(&format!("{id}/")))
}

/// Whether the connection talks to gitlab.com (where `internal` means every signed-in user).
fn on_gitlab_com(up: &dyn Upstream) -> bool {
    up.field("base_url").is_none_or(|u| {
        let host = u.split("://").nth(1).unwrap_or(&u).split(['/', ':']).next().unwrap_or("").to_ascii_lowercase();
        host.is_empty() || crate::flow::domain_within(&host, "gitlab.com")
    })
}

pub(super) fn is_public(project: &Value) -> bool {
    project["visibility"].as_str() == Some("public")
}

/// Whether `GET /projects/:id` says the project is public; any failure says no.
pub(super) async fn project_is_public(up: &dyn Upstream, project: &ProjectId) -> bool {
    match up.send(HttpRequest::get(project.path())).await {
        Ok(resp) => resp.json().is_ok_and(|p| is_public(&p)),
        Err(_) => false,
    }
}

/// Every write into the project named by `project`.
pub(super) fn project_audience(
    up: Arc<dyn Upstream>,
    args: Value,
    side: Arc<Side>,
) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(async move {
        let project: ProjectId =
            serde_json::from_value(args["project"].clone()).map_err(|_| undecided("no project given"))?;
        let p = up.send(HttpRequest::get(project.path())).await?.json()?;
        let Some(namespace) = p["namespace"]["full_path"].as_str() else {
            return Err(undecided(format!("GitLab named no namespace for {}", project.0)));
        };
        let name = p["path_with_namespace"].as_str().unwrap_or(&project.0).to_string();
        if !own_namespace(&side, namespace) {
            return Ok(Verdict::outside(Party::Named(format!("{name} (a project outside the user's namespaces)"))));
        }
        match p["visibility"].as_str() {
            Some("private") => Ok(Verdict::Inside),
            Some("internal") if !on_gitlab_com(&*up) => Ok(Verdict::Inside),
            Some("internal") => {
                Ok(Verdict::outside(Party::Anyone(format!("every gitlab.com user: {name} is internal"))))
            }
            Some("public") => Ok(Verdict::outside(Party::Anyone(format!("anyone: {name} is a public project")))),
            _ => Err(undecided(format!("GitLab did not say whether {name} is private"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::*;
    use crate::flow::{Audience, Side, Verdict};
    use crate::mock::MockUpstream;

    fn me() -> Side {
        let mut s = Side::default();
        s.add_id("ann");
        s.add_id("acme");
        s
    }

    fn project(ns: &str, vis: &str) -> Value {
        json!({"id": 7, "path_with_namespace": format!("{ns}/app"), "visibility": vis, "namespace": {"full_path": ns}})
    }

    fn writes() -> Vec<&'static ToolSpec> {
        INTEGRATION.tools.iter().filter(|t| t.effect.mutating()).collect()
    }

    fn args() -> Value {
        json!({"project": "acme/app", "title": "t", "body": "b", "issue_iid": 1, "mr_iid": 1, "source_branch": "a", "target_branch": "b", "ref": "main"})
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
    }

    #[test]
    fn side_is_the_user_and_groups() {
        let up = MockUpstream::new()
            .json(json!({"id": 1, "username": "ann", "email": "ann@acme.example"}))
            .json(json!([{"full_path": "acme"}]));
        let (s, reqs) = up.side(INTEGRATION.side.unwrap());
        let s = s.unwrap();
        assert!(s.has_id("ann") && s.has_id("acme") && s.has_email("ann@acme.example"));
        assert_eq!(reqs[1].path, "/groups");
        assert!(MockUpstream::new().json(json!({"id": 1})).side(INTEGRATION.side.unwrap()).0.is_err());
    }

    #[test]
    fn private_projects_of_own_namespaces_are_inside() {
        for tool in writes() {
            for ns in ["acme", "acme/platform", "ann"] {
                let (v, reqs) = MockUpstream::new().json(project(ns, "private")).audience(tool, args(), &me());
                assert_eq!(v.unwrap(), Verdict::Inside, "{} {ns}", tool.name);
                assert_eq!(reqs[0].path, "/projects/acme%2Fapp");
            }
        }
        // internal on a self-managed instance is the instance's own users.
        let up = MockUpstream::new()
            .json(project("acme", "internal"))
            .with_field("base_url", "https://git.acme.example/api/v4");
        assert_eq!(up.verdict(&issues::CREATE_ISSUE, args(), &me()), Verdict::Inside);
    }

    #[test]
    fn public_internal_on_gitlab_com_and_foreign_projects_are_outside() {
        for (ns, vis) in [
            ("ann", "public"),
            ("acme", "internal"),
            ("acme-evil", "private"),
            ("evil/acme", "private"),
            ("acmex", "private"),
        ] {
            let v = MockUpstream::new().json(project(ns, vis)).verdict(&issues::CREATE_COMMENT, args(), &me());
            assert!(matches!(v, Verdict::Outside { .. }), "{ns} {vis}");
        }
        let up = MockUpstream::new()
            .json(project("acme", "internal"))
            .with_field("base_url", "https://gitlab.com.evil.example/api/v4");
        assert_eq!(
            up.verdict(&issues::CREATE_ISSUE, args(), &me()),
            Verdict::Inside,
            "a self-managed host is not gitlab.com"
        );
    }

    #[test]
    fn failed_lookups_are_errors() {
        let err = ToolError::Upstream { status: 404, message: "404 Project Not Found".into(), retry_after: None };
        assert!(MockUpstream::new().error(err).audience(&issues::CREATE_ISSUE, args(), &me()).0.is_err());
        assert!(
            MockUpstream::new()
                .json(json!({"visibility": "private"}))
                .audience(&issues::CREATE_ISSUE, args(), &me())
                .0
                .is_err()
        );
        assert!(
            MockUpstream::new()
                .json(json!({"namespace": {"full_path": "acme"}}))
                .audience(&issues::CREATE_ISSUE, args(), &me())
                .0
                .is_err()
        );
    }

    #[test]
    fn public_reads_are_marked() {
        let (_, marked) = MockUpstream::new()
            .json(project("gnome", "public"))
            .answer(200, b"hello".to_vec())
            .ok_marked(&projects::GET_FILE, json!({"project": "gnome/app", "file_path": "README"}));
        assert!(marked);
        let (_, marked) = MockUpstream::new()
            .json(project("acme", "private"))
            .answer(200, b"hello".to_vec())
            .ok_marked(&projects::GET_FILE, json!({"project": "acme/app", "file_path": "README"}));
        assert!(!marked);
        let (_, marked) = MockUpstream::new()
            .json(json!([project("gnome", "public")]))
            .ok_marked(&projects::LIST_PROJECTS, json!({}));
        assert!(marked);
    }
}
