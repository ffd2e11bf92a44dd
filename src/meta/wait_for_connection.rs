//! wait_for_connection: block until a pending connect finishes, polling once a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{ok, plain_error, str_arg};
use crate::app::App;
use crate::connect::PendingState;
use crate::engine::Outcome;

pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

enum Poll {
    Unknown,
    Connected,
    Expired,
    Waiting,
}

fn poll(app: &App, id: &str) -> Poll {
    let flows = crate::connect::flows(app);
    let mut pending = flows.pending();
    let Some(p) = pending.get(id) else {
        return Poll::Unknown;
    };
    if p.state == PendingState::Connected {
        pending.remove(id);
        return Poll::Connected;
    }
    if Instant::now() >= p.expires {
        pending.remove(id);
        return Poll::Expired;
    }
    Poll::Waiting
}

pub async fn run(app: &Arc<App>, args: Value) -> Outcome {
    let id = str_arg(&args, "connectionId").to_string();
    let timeout = Duration::from_secs(args.get("timeoutSec").and_then(Value::as_u64).unwrap_or(DEFAULT_TIMEOUT_SECS));
    let started = tokio::time::Instant::now();
    loop {
        match poll(app, &id) {
            Poll::Unknown => return plain_error("Unknown connectionId"),
            Poll::Connected => return ok(json!({ "status": "CONNECTED" })),
            Poll::Expired => return ok(json!({ "status": "EXPIRED" })),
            Poll::Waiting => {}
        }
        if started.elapsed() >= timeout {
            crate::connect::flows(app).pending().remove(&id);
            return ok(json!({ "status": "TIMEOUT" }));
        }
        tokio::time::sleep(
            Duration::from_secs(1).min(timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(10))),
        )
        .await;
    }
}
