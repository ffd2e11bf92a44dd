//! curl_session: mint a short-lived proxy token for raw API calls (all-or-nothing validation).

use std::sync::Arc;

use serde_json::Value;

use super::plain_error;
use crate::app::App;
use crate::engine::Outcome;

pub fn run(app: &Arc<App>, args: Value) -> Outcome {
    let names: Vec<String> = args
        .get("integrations")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let mut failures = Vec::new();
    for name in &names {
        match app.registry.integration(name) {
            None => failures.push(format!("Unknown integration: {name}")),
            Some(i) if !i.curl_proxy => failures.push(format!(
                "{name}: curl proxy is not enabled for this integration (use http_send_request for public URLs)"
            )),
            Some(i) if !app.is_connected(i.name) => {
                failures.push(format!("{name}: not connected (call connect first)"))
            }
            Some(_) => {}
        }
    }
    if !failures.is_empty() {
        return plain_error(failures.join("; "));
    }
    plain_error(format!("the curl proxy cannot serve {} in this build", names.join(", ")))
}
