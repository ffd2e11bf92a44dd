//! list_integrations: every integration with its connection state.

use std::sync::Arc;

use serde_json::{Value, json};

use super::ok;
use crate::app::App;
use crate::engine::Outcome;

pub fn run(app: &Arc<App>) -> Outcome {
    let integrations: Vec<Value> = app
        .registry
        .integrations()
        .iter()
        .map(|i| json!({ "name": i.name, "version": i.version, "connected": app.is_connected(i.name) }))
        .collect();
    ok(json!({ "integrations": integrations }))
}
