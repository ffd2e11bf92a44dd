//! whoami: the local workbench user, created on first start and stable across restarts.

use std::sync::Arc;

use serde_json::json;

use super::{ok, plain_error};
use crate::app::App;
use crate::engine::Outcome;

pub async fn run(app: &Arc<App>) -> Outcome {
    match app.storage.user().await {
        Ok(Some((id, stored_email))) => ok(json!({ "id": id, "email": app.settings.email.clone().or(stored_email) })),
        Ok(None) => plain_error("User not found"),
        Err(e) => {
            tracing::error!(error = %e, "whoami could not read the user record");
            plain_error(format!("User not found: {e}"))
        }
    }
}
