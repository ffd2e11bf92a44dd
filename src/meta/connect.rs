//! connect (and its deprecated alias get_auth_url): begin connecting an integration.

use std::sync::Arc;

use plugins::api::AuthKind;
use serde_json::{Value, json};

use super::{ok, plain_error, str_arg};
use crate::app::App;
use crate::engine::Outcome;

pub fn run(app: &Arc<App>, args: Value) -> Outcome {
    let name = str_arg(&args, "integration").trim();
    let Some(integration) = app.registry.integration(name) else {
        if app.registry.is_builtin_namespace(name) {
            return ok(json!({
                "status": "CONNECTED",
                "integration": name,
                "message": format!("{name} is built into workbench; its tools need no connection."),
            }));
        }
        let names: Vec<String> = app.registry.integrations().iter().map(|i| i.name.to_string()).collect();
        let mut body = json!({ "error": format!("Unknown integration: {name}") });
        if let Some(near) = crate::validate::nearest(name, names.iter()) {
            body["did_you_mean"] = json!(near);
        }
        return Outcome { body, is_error: true };
    };
    match integration.auth.kind {
        AuthKind::None => ok(json!({
            "status": "CONNECTED",
            "integration": integration.name,
            "message": format!("{} needs no connection; its tools work as they are.", integration.display_name),
        })),
        other => plain_error(format!(
            "{} uses {} credentials, and this workbench has no connect page for them",
            integration.display_name,
            other.as_str()
        )),
    }
}
