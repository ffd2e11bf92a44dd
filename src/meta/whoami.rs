//! whoami: the local workbench user, created on first start and stable across restarts. The email
//! comes from config, else from the first connected account that is an email address.

use std::sync::Arc;

use serde_json::json;

use super::{ok, plain_error};
use crate::app::App;
use crate::engine::Outcome;

pub async fn run(app: &Arc<App>) -> Outcome {
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
            ok(json!({ "id": id, "email": email }))
        }
        Ok(None) => plain_error("User not found"),
        Err(e) => {
            tracing::error!(error = %e, "whoami could not read the user record");
            plain_error(format!("User not found: {e}"))
        }
    }
}
