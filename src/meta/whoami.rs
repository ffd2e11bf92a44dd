//! whoami: the local workbench user, created on first start and stable across restarts. The email
//! comes from config, else from the first connected account that is an email address.

use std::sync::Arc;

use serde::Serialize;

use serde_json::Value;

use super::{Annotations, Failure, MetaTool, NoArgs, schema_of};
use crate::app::App;
use crate::engine::Hooks;

/// The local user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct User {
    pub id: String,
    pub email: Option<String>,
}

pub async fn run(app: &Arc<App>) -> Result<User, Failure> {
    match app.storage.user().await {
        Ok(Some((id, stored_email))) => {
            let from_accounts = || {
                app.storage
                    .connections()
                    .ok()?
                    .into_iter()
                    .filter_map(|c| c.account_label)
                    .find(|l| l.contains('@') && !l.contains(' '))
            };
            let email = app.settings.email.clone().or(stored_email).or_else(from_accounts);
            Ok(User { id, email })
        }
        Ok(None) => Err(Failure::plain("User not found")),
        Err(e) => {
            tracing::error!(error = %e, "whoami could not read the user record");
            Err(Failure::plain(format!("User not found: {e}")))
        }
    }
}

/// The meta-tool.
pub struct Whoami;

impl MetaTool for Whoami {
    const NAME: &'static str = "whoami";
    const TITLE: &'static str = "Who am I";
    const DESCRIPTION: &'static str = "Return the current authenticated workbench user (id + email). Like /me — identity only, not connected integrations.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Args = NoArgs;
    type Answer = User;
    fn schema() -> Value {
        schema_of!(NoArgs)
    }
    async fn run(app: &Arc<App>, _: NoArgs, _: &Hooks) -> Result<User, Failure> {
        run(app).await
    }
}
