//! [`MockUpstream`]: a test double of the engine's [`Upstream`] for unit tests that sit next to a
//! tool. It records every request a handler builds and answers each with the next canned reply,
//! so a test can assert the exact request (method, path, query, headers, body) and the shaped
//! result without a server. The contract cases (auth, 401, 429, paging across real HTTP) stay in
//! the fake-server tests under `tests/it/`.
//!
//! Handlers finish in one poll against it (nothing waits), so [`MockUpstream::call`] runs a tool
//! synchronously.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt as _;
use serde_json::Value;

use crate::api::{BoxFuture, HttpRequest, HttpResponse, ToolError, ToolSpec, Upstream};
use crate::flow::{Audience, Party, Side, SideFn, Verdict};

/// Records requests and answers them in order with canned replies.
#[derive(Default)]
pub struct MockUpstream {
    replies: Mutex<VecDeque<Result<HttpResponse, ToolError>>>,
    requests: Mutex<Vec<HttpRequest>>,
    fields: Vec<(String, String)>,
    files: Vec<(String, Vec<u8>)>,
    written: Mutex<Vec<(String, Vec<u8>)>>,
    ids: Mutex<u64>,
    public: std::sync::atomic::AtomicBool,
}

impl MockUpstream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a 200 answer with a JSON body.
    pub fn json(self, body: Value) -> Self {
        self.answer(200, body.to_string().into_bytes())
    }

    /// Queues a 200 answer with a JSON body and extra response headers (`Link`, paging).
    pub fn json_with_headers(self, body: Value, headers: &[(&str, &str)]) -> Self {
        self.reply(200, body.to_string().into_bytes(), headers)
    }

    /// Queues a 200 answer with a raw (non-JSON) body and response headers (file contents).
    pub fn reply_raw(self, body: Vec<u8>, headers: &[(&str, &str)]) -> Self {
        let headers = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.replies.lock().unwrap().push_back(Ok(HttpResponse { status: 200, headers, body }));
        self
    }

    /// Queues an answer with any 2xx status and raw body.
    pub fn answer(self, status: u16, body: Vec<u8>) -> Self {
        self.reply(status, body, &[])
    }

    fn reply(self, status: u16, body: Vec<u8>, extra: &[(&str, &str)]) -> Self {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self.replies.lock().unwrap().push_back(Ok(HttpResponse { status, headers, body }));
        self
    }

    /// Queues an error (what the engine returns for a non-2xx answer or a network failure).
    pub fn error(self, error: ToolError) -> Self {
        self.replies.lock().unwrap().push_back(Err(error));
        self
    }

    /// A non-secret connection field the handler may read.
    pub fn with_field(mut self, name: &str, value: &str) -> Self {
        self.fields.push((name.into(), value.into()));
        self
    }

    /// A local file the handler may read.
    pub fn with_file(mut self, path: &str, bytes: &[u8]) -> Self {
        self.files.push((path.into(), bytes.to_vec()));
        self
    }

    /// Runs `tool` with `args` (parsed exactly as the engine does) and returns the handler's result
    /// with every request it sent. Panics if the handler waits on something, which a mock never
    /// provides.
    pub fn call(self, tool: &ToolSpec, args: Value) -> (Result<Value, ToolError>, Vec<HttpRequest>) {
        let me = Arc::new(self);
        let result = (tool.run)(me.clone(), args).now_or_never().expect("the handler finished without waiting");
        let left = me.replies.lock().unwrap().len();
        assert_eq!(left, 0, "{}: {left} canned replies were never asked for", tool.name);
        let requests = me.requests.lock().unwrap().clone();
        (result, requests)
    }

    /// Like [`MockUpstream::ok`], and whether the handler called [`Upstream::mark_public`].
    pub fn ok_marked(self, tool: &ToolSpec, args: Value) -> (Value, bool) {
        let me = Arc::new(self);
        let result = (tool.run)(me.clone(), args).now_or_never().expect("the handler finished without waiting");
        let value = result.unwrap_or_else(|e| panic!("{} failed: {e}", tool.name));
        let left = me.replies.lock().unwrap().len();
        assert_eq!(left, 0, "{}: {left} canned replies were never asked for", tool.name);
        (value, me.public.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// Like [`MockUpstream::call`], for a call expected to succeed.
    pub fn ok(self, tool: &ToolSpec, args: Value) -> (Value, Vec<HttpRequest>) {
        let (result, requests) = self.call(tool, args);
        (result.unwrap_or_else(|e| panic!("{} failed: {e}", tool.name)), requests)
    }

    /// Runs a tool's audience label for `args` against `side`, the way the engine asks it: `Own`
    /// is [`Verdict::Inside`], `Outside(why)` names `why`, `Decide(f)` runs `f` on this mock.
    /// Returns the verdict with every lookup request it sent. Panics for a tool without an
    /// audience.
    pub fn audience(self, tool: &ToolSpec, args: Value, side: &Side) -> (Result<Verdict, ToolError>, Vec<HttpRequest>) {
        let me = Arc::new(self);
        let verdict = match tool.audience {
            Some(Audience::Own) => Ok(Verdict::Inside),
            Some(Audience::Outside(why)) => Ok(Verdict::outside(Party::Named(why.to_string()))),
            Some(Audience::Decide(f)) => f(me.clone(), args, Arc::new(side.clone()))
                .now_or_never()
                .expect("the audience finished without waiting"),
            None => panic!("{} has no audience label", tool.name),
        };
        let left = me.replies.lock().unwrap().len();
        assert_eq!(left, 0, "{}: {left} canned replies were never asked for", tool.name);
        let requests = me.requests.lock().unwrap().clone();
        (verdict, requests)
    }

    /// Like [`MockUpstream::audience`], for a decision expected to succeed.
    pub fn verdict(self, tool: &ToolSpec, args: Value, side: &Side) -> Verdict {
        let (v, _) = self.audience(tool, args, side);
        v.unwrap_or_else(|e| panic!("{}: the audience failed: {e}", tool.name))
    }

    /// Runs an integration's side lookup on this mock.
    pub fn side(self, f: SideFn) -> (Result<Side, ToolError>, Vec<HttpRequest>) {
        let me = Arc::new(self);
        let side = f(me.clone()).now_or_never().expect("the side lookup finished without waiting");
        let left = me.replies.lock().unwrap().len();
        assert_eq!(left, 0, "side: {left} canned replies were never asked for");
        let requests = me.requests.lock().unwrap().clone();
        (side, requests)
    }
}

/// One request as a comparable value: `{"method", "path", "query": [[key, value], ..] in order,
/// "body"}`; a JSON body as itself, a form as `{"form": [[key, value], ..]}`, raw bytes as
/// `{"content_type", "text"}` (lossy UTF-8), no body as `null`. Host and headers are left out:
/// assert them separately where a tool sets them. Per-tool tests compare it whole with `json!`,
/// so a changed method, path, parameter or body field fails.
pub fn sent(request: &HttpRequest) -> Value {
    use crate::api::Body;
    let pairs = |p: &[(String, String)]| Value::Array(p.iter().map(|(k, v)| serde_json::json!([k, v])).collect());
    let body = match &request.body {
        Body::None => Value::Null,
        Body::Json(v) => v.clone(),
        Body::Form(p) => serde_json::json!({ "form": pairs(p) }),
        Body::Raw { content_type, bytes } => {
            serde_json::json!({"content_type": content_type, "text": String::from_utf8_lossy(bytes)})
        }
    };
    serde_json::json!({
        "method": request.method.as_str(),
        "path": request.path,
        "query": pairs(&request.query),
        "body": body,
    })
}

/// The value of request header `name` (case-insensitive), if the tool set one.
pub fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// The message of a tool error, for asserting what the agent reads.
pub fn message(error: &ToolError) -> String {
    match error {
        ToolError::InvalidArguments { message, .. } => message.clone(),
        ToolError::Upstream { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

impl Upstream for MockUpstream {
    fn send(&self, request: HttpRequest) -> BoxFuture<Result<HttpResponse, ToolError>> {
        let what = format!("{} {}", request.method.as_str(), request.path);
        self.requests.lock().unwrap().push(request);
        let reply = self.replies.lock().unwrap().pop_front();
        Box::pin(std::future::ready(
            reply.unwrap_or_else(|| Err(ToolError::Internal(format!("MockUpstream has no reply for {what}")))),
        ))
    }

    fn field(&self, name: &str) -> Option<String> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn read_local_file(&self, path: &str) -> BoxFuture<Result<Vec<u8>, ToolError>> {
        let found = self.files.iter().find(|(p, _)| p == path).map(|(_, b)| b.clone());
        Box::pin(std::future::ready(found.ok_or_else(|| ToolError::invalid(format!("no such file: {path}")))))
    }

    fn write_local_file(&self, path: &str, bytes: Vec<u8>, _overwrite: bool) -> BoxFuture<Result<u64, ToolError>> {
        let n = bytes.len() as u64;
        self.written.lock().unwrap().push((path.into(), bytes));
        Box::pin(std::future::ready(Ok(n)))
    }

    fn mark_public(&self) {
        self.public.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn new_id(&self) -> String {
        let mut n = self.ids.lock().unwrap();
        *n += 1;
        format!("{:032x}", *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The mock itself: requests recorded in order, replies consumed in order, a missing reply
    /// is an error that names the request.
    #[test]
    fn records_requests_and_answers_in_order() {
        let up = MockUpstream::new().json(json!({"a": 1})).with_field("site", "acme");
        let first = up.send(HttpRequest::get("/one")).now_or_never().unwrap().unwrap();
        assert_eq!(first.json().unwrap(), json!({"a": 1}));
        let second = up.send(HttpRequest::get("/two")).now_or_never().unwrap();
        assert!(matches!(second, Err(ToolError::Internal(m)) if m.contains("GET /two")));
        assert_eq!(up.requests.lock().unwrap().len(), 2);
        assert_eq!(up.field("site").as_deref(), Some("acme"));
        assert_eq!(up.new_id().len(), 32);
    }
}
