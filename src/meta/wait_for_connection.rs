//! wait_for_connection: block until a pending connect finishes. The wait itself ([`wait`]) is the
//! one loop every waiter uses: this meta-tool (polling once a second) and `workbench connect`
//! (polling faster, to draw its progress line).

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;

use serde_json::Value;

use super::{Annotations, Failure, MetaTool, schema_of};
use crate::app::App;
use crate::connect::PendingState;
use crate::engine::Hooks;

pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Longest wait one call may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 600;
/// How often the meta-tool looks.
const POLL: Duration = Duration::from_secs(1);

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connectionId returned by connect.
    #[serde(rename = "connectionId")]
    #[schemars(length(min = 1))]
    pub connection_id: String,
    /// Longest wait in seconds.
    #[serde(rename = "timeoutSec")]
    #[serde_inline_default(DEFAULT_TIMEOUT_SECS)]
    #[schemars(range(min = 1, max = MAX_TIMEOUT_SECS))]
    pub timeout_sec: u64,
}

/// How the wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    Connected,
    Timeout,
    Expired,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waited {
    pub status: Status,
}

pub async fn run(app: &Arc<App>, args: Args) -> Result<Waited, Failure> {
    let timeout = Duration::from_secs(args.timeout_sec.min(MAX_TIMEOUT_SECS));
    let status = match wait(app, &args.connection_id, Some(timeout), POLL, |_| {}).await? {
        Finished::Connected { .. } => Status::Connected,
        Finished::Expired => Status::Expired,
        Finished::TimedOut => Status::Timeout,
    };
    Ok(Waited { status })
}

/// How a wait for a pending connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finished {
    /// The user completed the page, as this account (its identity, when known).
    Connected { account: Option<String> },
    /// The link expired first.
    Expired,
    /// The caller's timeout passed first (the pending connection is dropped).
    TimedOut,
}

enum Poll {
    Unknown,
    Connected(Option<String>),
    Expired,
    /// Still waiting; the link expires in this long.
    Waiting(Duration),
}

fn poll(app: &App, id: &str) -> Poll {
    let flows = crate::connect::flows(app);
    let mut pending = flows.pending();
    let Some(p) = pending.get(id) else {
        return Poll::Unknown;
    };
    if p.state == PendingState::Connected {
        let account = p.account.clone();
        pending.remove(id);
        return Poll::Connected(account);
    }
    let now = Instant::now();
    if now >= p.expires {
        pending.remove(id);
        return Poll::Expired;
    }
    Poll::Waiting(p.expires - now)
}

/// Waits for the pending connection `id`, looking every `every`, until it is connected, its link
/// expires, or `timeout` passes (`None`: as long as the link lives). `tick` hears how long the
/// link has left after each look that found it still waiting. An unknown id is "Unknown
/// connectionId".
pub async fn wait(
    app: &App,
    id: &str,
    timeout: Option<Duration>,
    every: Duration,
    mut tick: impl FnMut(Duration),
) -> Result<Finished, Failure> {
    let started = tokio::time::Instant::now();
    loop {
        let left = match poll(app, id) {
            Poll::Unknown => return Err(Failure::plain("Unknown connectionId")),
            Poll::Connected(account) => return Ok(Finished::Connected { account }),
            Poll::Expired => return Ok(Finished::Expired),
            Poll::Waiting(left) => left,
        };
        let remaining = match timeout {
            Some(t) if started.elapsed() >= t => {
                crate::connect::flows(app).pending().remove(id);
                return Ok(Finished::TimedOut);
            }
            Some(t) => t.saturating_sub(started.elapsed()),
            None => left,
        };
        tick(left);
        tokio::time::sleep(every.min(remaining).max(Duration::from_millis(10))).await;
    }
}

/// The meta-tool.
pub struct WaitForConnection;

impl MetaTool for WaitForConnection {
    const NAME: &'static str = "wait_for_connection";
    const TITLE: &'static str = "Wait for a connection";
    const DESCRIPTION: &'static str =
        "Block until a connection started by connect() completes. Returns status CONNECTED, TIMEOUT, or EXPIRED.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Args = Args;
    type Answer = Waited;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, _: &Hooks) -> Result<Waited, Failure> {
        run(app, args).await
    }
}
