//! The rate-limit governor: one token bucket per integration (the catalogue's budget, or the
//! user's `WORKBENCH_<INTEGRATION>_RATE_LIMIT` such as `100/10s`), plus a "blocked until" time
//! learned from the provider (`Retry-After` on a 429, or remaining = 0 with a reset header).
//!
//! Every upstream request reserves its slot first: a request that fits waits its turn (queueing
//! inside the execute_tools pool instead of hammering the provider); one whose wait would pass the
//! call's deadline is not sent and becomes RATE_LIMITED with the seconds until it would fit.
//! Budgets are per process: two workbench processes each keep their own.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use plugins::api::RateLimit;

/// The longest block a provider's reset header may impose (guards against nonsense values).
const MAX_BLOCK: Duration = Duration::from_secs(3600);

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Instant,
    blocked_until: Option<Instant>,
}

#[derive(Default)]
pub struct Governor {
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// The outcome of asking for a slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slot {
    /// Send after waiting this long (zero: now).
    After(Duration),
    /// Would not fit before the deadline: try again in this long.
    TooLate(Duration),
}

impl Governor {
    /// Reserves a slot for one request to `integration`, to be sent no later than `deadline`.
    pub fn reserve(&self, integration: &str, limit: RateLimit, now: Instant, deadline: Instant) -> Slot {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let capacity = f64::from(limit.requests.max(1));
        let bucket = buckets.entry(integration.to_string()).or_insert(Bucket {
            tokens: capacity,
            last: now,
            blocked_until: None,
        });
        let mut wait = Duration::ZERO;
        if !limit.is_none() {
            let rate = f64::from(limit.requests) / f64::from(limit.per_seconds);
            let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * rate).min(capacity);
            bucket.last = now;
            if bucket.tokens < 1.0 {
                wait = Duration::from_secs_f64((1.0 - bucket.tokens) / rate);
            }
        }
        if let Some(until) = bucket.blocked_until {
            if until <= now {
                bucket.blocked_until = None;
            } else {
                wait = wait.max(until - now);
            }
        }
        if now + wait > deadline {
            return Slot::TooLate(wait);
        }
        if !limit.is_none() {
            bucket.tokens -= 1.0;
        }
        Slot::After(wait)
    }

    /// The provider said to hold off until `until`.
    pub fn block_until(&self, integration: &str, until: Instant) {
        let now = Instant::now();
        let until = until.min(now + MAX_BLOCK);
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket =
            buckets.entry(integration.to_string()).or_insert(Bucket { tokens: 0.0, last: now, blocked_until: None });
        if bucket.blocked_until.is_none_or(|b| b < until) {
            bucket.blocked_until = Some(until);
        }
    }

    /// Learns from a response's headers: `Retry-After` on 429/503, or remaining = 0 with a reset.
    pub fn observe(&self, integration: &str, status: u16, headers: &[(String, String)]) {
        let get = |names: &[&str]| {
            headers.iter().find(|(k, _)| names.iter().any(|n| k.eq_ignore_ascii_case(n))).map(|(_, v)| v.trim())
        };
        let now = Instant::now();
        if matches!(status, 429 | 503)
            && let Some(secs) = get(&["retry-after"]).and_then(|v| v.parse::<f64>().ok())
        {
            self.block_until(integration, now + Duration::from_secs_f64(secs.clamp(0.0, 3600.0)));
            return;
        }
        let remaining = get(&[
            "x-ratelimit-remaining",
            "ratelimit-remaining",
            "x-sentry-rate-limit-remaining",
            "x-ratelimit-requests-remaining",
        ]);
        if remaining.and_then(|r| r.parse::<f64>().ok()) != Some(0.0) {
            return;
        }
        if let Some(after) = get(&["x-ratelimit-reset-after"]).and_then(|v| v.parse::<f64>().ok()) {
            self.block_until(integration, now + Duration::from_secs_f64(after.clamp(0.0, 3600.0)));
            return;
        }
        let reset =
            get(&["x-ratelimit-reset", "ratelimit-reset", "x-sentry-rate-limit-reset", "x-ratelimit-requests-reset"])
                .and_then(|v| v.parse::<f64>().ok());
        if let Some(reset) = reset {
            let unix_now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
            // Epoch milliseconds, epoch seconds, or seconds from now.
            let secs = if reset > 1e12 {
                reset / 1000.0 - unix_now
            } else if reset > 1e9 {
                reset - unix_now
            } else {
                reset
            };
            self.block_until(integration, now + Duration::from_secs_f64(secs.clamp(0.0, 3600.0)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_queues_then_refuses_past_the_deadline() {
        let g = Governor::default();
        let t0 = Instant::now();
        let far = t0 + Duration::from_secs(100);
        let limit = RateLimit { requests: 2, per_seconds: 1 };
        assert_eq!(g.reserve("x", limit, t0, far), Slot::After(Duration::ZERO));
        assert_eq!(g.reserve("x", limit, t0, far), Slot::After(Duration::ZERO));
        // The third waits half a second (2 per second), the fourth a whole one: queued, in order.
        let Slot::After(w3) = g.reserve("x", limit, t0, far) else { panic!() };
        let Slot::After(w4) = g.reserve("x", limit, t0, far) else { panic!() };
        assert!((w3.as_secs_f64() - 0.5).abs() < 0.01 && (w4.as_secs_f64() - 1.0).abs() < 0.01, "{w3:?} {w4:?}");
        // One that cannot fit before its deadline is refused and takes no slot.
        let Slot::TooLate(w) = g.reserve("x", limit, t0, t0 + Duration::from_millis(100)) else { panic!() };
        assert!(w.as_secs_f64() > 1.0);
        // Other integrations have their own budget.
        assert_eq!(g.reserve("y", limit, t0, far), Slot::After(Duration::ZERO));
        assert_eq!(g.reserve("free", RateLimit::NONE, t0, far), Slot::After(Duration::ZERO));
    }

    #[test]
    fn provider_headers_block() {
        let g = Governor::default();
        let now = Instant::now();
        let far = now + Duration::from_secs(100);
        g.observe(
            "gh",
            200,
            &[("X-RateLimit-Remaining".into(), "0".into()), ("X-RateLimit-Reset-After".into(), "3".into())],
        );
        let Slot::After(w) = g.reserve("gh", RateLimit::NONE, now, far) else { panic!() };
        assert!(w.as_secs_f64() > 2.5, "{w:?}");
        g.observe("s", 429, &[("retry-after".into(), "7".into())]);
        let Slot::TooLate(w) = g.reserve("s", RateLimit::NONE, now, now + Duration::from_secs(1)) else { panic!() };
        assert!(w.as_secs_f64() > 6.0);
        let epoch = chrono::Utc::now().timestamp() + 20;
        g.observe(
            "e",
            200,
            &[("x-ratelimit-remaining".into(), "0".into()), ("x-ratelimit-reset".into(), epoch.to_string())],
        );
        let Slot::After(w) = g.reserve("e", RateLimit::NONE, now, far) else { panic!() };
        assert!(w.as_secs_f64() > 18.0 && w.as_secs_f64() <= 21.0, "{w:?}");
        // Remaining above zero says nothing.
        g.observe(
            "ok",
            200,
            &[("x-ratelimit-remaining".into(), "10".into()), ("x-ratelimit-reset".into(), epoch.to_string())],
        );
        assert_eq!(g.reserve("ok", RateLimit::NONE, now, far), Slot::After(Duration::ZERO));
    }
}
