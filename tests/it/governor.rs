//! The rate-limit governor against a fake: requests queue inside the budget instead of
//! hammering, provider reset headers hold later calls, and a wait past the deadline is a
//! RATE_LIMITED error with when to retry, sent nowhere.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::app_with;
use crate::support::fake::{Fake, Reply};

const TOKEN: &str = "todoist-token-0123456789abcdef";

async fn todoist(headers: Arc<Mutex<Vec<(String, String)>>>, seen: Arc<Mutex<Vec<Instant>>>) -> Fake {
    Fake::start(move |r| {
        seen.lock().unwrap().push(Instant::now());
        if r.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
            return Reply::json(401, json!({"error": "Unauthorized"}));
        }
        let mut reply = Reply::json(200, json!({"results": [{"id": "1", "name": "Inbox"}], "next_cursor": null}));
        for (k, v) in headers.lock().unwrap().iter() {
            reply = reply.with_header(k, v);
        }
        reply
    })
    .await
}

fn batch(n: usize) -> Value {
    let executions: Vec<Value> = (0..n).map(|_| json!({"tool": "todoist_list_projects", "args": {}})).collect();
    json!({ "executions": executions })
}

#[tokio::test]
async fn a_batch_queues_inside_the_budget_instead_of_hammering() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = todoist(Arc::default(), seen.clone()).await;
    let t = app_with(&[
        ("WORKBENCH_TODOIST_TOKEN", TOKEN.into()),
        ("WORKBENCH_TODOIST_BASE_URL", fake.url.clone()),
        ("WORKBENCH_TODOIST_RATE_LIMIT", "10/s".into()),
    ]);
    let out = t.call("execute_tools", batch(20)).await;
    assert!(!out.is_error, "{}", out.body);
    assert!(out.body["results"].as_array().unwrap().iter().all(|r| r.get("result").is_some()), "{}", out.body);
    let times = seen.lock().unwrap().clone();
    assert_eq!(times.len(), 20, "no request was retried or lost");
    // 10 at once (the bucket is full), then 10 more at 10 per second: about a second in all.
    let span = *times.last().unwrap() - times[0];
    assert!(span >= Duration::from_millis(850), "the budget was not kept: {span:?}");
    let first_second = times.iter().filter(|t| **t - times[0] < Duration::from_millis(500)).count();
    assert!(
        first_second <= 15,
        "{first_second} requests in the first half second: {:?}",
        times.iter().map(|t| *t - times[0]).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_wait_past_the_deadline_is_rate_limited_with_when_to_retry() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = todoist(Arc::default(), seen.clone()).await;
    let t = app_with(&[
        ("WORKBENCH_TODOIST_TOKEN", TOKEN.into()),
        ("WORKBENCH_TODOIST_BASE_URL", fake.url.clone()),
        ("WORKBENCH_TODOIST_RATE_LIMIT", "1/min".into()),
        ("WORKBENCH_CALL_TIMEOUT_SECS", "2".into()),
    ]);
    t.ok("todoist_list_projects", json!({})).await;
    let started = Instant::now();
    let e = t.err("todoist_list_projects", json!({})).await;
    assert!(started.elapsed() < Duration::from_millis(500), "refused at once, not after waiting");
    assert_eq!(e["code"], "RATE_LIMITED", "{e}");
    let retry = e["retry_after_seconds"].as_u64().unwrap();
    assert!((55..=60).contains(&retry), "{e}");
    assert!(e["message"].as_str().unwrap().contains("1 requests per 60 s"), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 1, "the refused call sent nothing");
}

#[tokio::test]
async fn provider_reset_headers_hold_the_next_calls() {
    let headers = Arc::new(Mutex::new(vec![
        ("x-ratelimit-remaining".to_string(), "0".to_string()),
        ("x-ratelimit-reset-after".to_string(), "1".to_string()),
    ]));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fake = todoist(headers.clone(), seen.clone()).await;
    let t = app_with(&[("WORKBENCH_TODOIST_TOKEN", TOKEN.into()), ("WORKBENCH_TODOIST_BASE_URL", fake.url.clone())]);
    t.ok("todoist_list_projects", json!({})).await;
    headers.lock().unwrap().clear();
    t.ok("todoist_list_projects", json!({})).await;
    let times = seen.lock().unwrap().clone();
    assert!(
        times[1] - times[0] >= Duration::from_millis(900),
        "the second call waited for the reset: {:?}",
        times[1] - times[0]
    );

    // A reset beyond the call's deadline: refused with the provider's wait, nothing sent.
    *headers.lock().unwrap() =
        vec![("x-ratelimit-remaining".into(), "0".into()), ("x-ratelimit-reset-after".into(), "600".into())];
    t.ok("todoist_list_projects", json!({})).await;
    let e = t.err("todoist_list_projects", json!({})).await;
    assert_eq!(e["code"], "RATE_LIMITED", "{e}");
    assert!(e["retry_after_seconds"].as_u64().unwrap() >= 590, "{e}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}
