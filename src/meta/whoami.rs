//! whoami: the local workbench user, created on first start and stable across restarts. The email
//! comes from config, else from the first connected account that is an email address.

use std::sync::Arc;

use serde::Serialize;

use super::Failure;
use crate::app::App;

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
