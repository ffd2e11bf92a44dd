//! The stdio transport: a bound on the size of one incoming message, a clear answer to a request
//! over it, and a prompt end when the input closes.
//!
//! rmcp 3.11's `AsyncRwTransport` reads lines through a bounded reader of its own (default 16 MiB),
//! but it drops an over-long line without a word to the client, whose request then waits for its
//! own timeout. [`LineGuard`] sits in front of it and enforces our limit, [`MAX_LINE_BYTES`]: it
//! never holds more than one read chunk, hands rmcp at most the limit of any line (ended so that it
//! cannot parse), swallows the rest, and, when the message had a top-level `id`, hands rmcp a short
//! `workbench/message_too_large` request with that id instead, which [`super::Server`] answers with
//! an `Invalid request` (-32600) error saying how large the message was and what the limit is. The
//! id is found by a small streaming scanner ([`IdScan`], shared with the MCP client) over the bytes as they pass, wherever in
//! the object it stands (the TypeScript SDK writes it last).
//!
//! What else happens to bad input (checked by `tests/it/transport.rs`,
//! `tests/clients/stdout_hygiene.py` and `fuzz/`):
//! - a line that is not JSON (including nesting deeper than serde_json's 128 levels): ignored, as
//!   the other official MCP SDKs do (answering garbage invites an error storm);
//! - JSON that is not a JSON-RPC message: an `Invalid request` (-32600) error response;
//! - a known method with params of the wrong shape: `Invalid params` (-32602), see `mcp::Server`.
//!
//! When the input closes, rmcp waits up to 5 s for handlers still running before it returns. A client
//! that closes our stdin is gone (the MCP stdio shutdown sequence), so [`serve`] gives in-flight calls
//! [`EOF_GRACE`] to answer and then stops them: the process exits within about a second even with a
//! 600 s `wait_for_connection` pending.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub use crate::jsonrpc::IdScan;
use rmcp::RoleServer;
use rmcp::ServiceExt;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

use super::Server;
use crate::app::App;

/// Longest incoming line (one JSON-RPC message) we read: 8 MiB. Requests carry tool arguments (local
/// files are passed by path, not inline), orders of magnitude below this; answers are capped at
/// 60,000 characters.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Most JSON values one incoming line may hold, counted from the `,` (1), `[` (2) and `{` (8: a
/// parsed object takes several times an array's memory) outside strings: parsed, every value takes
/// 32 bytes or more, and the request is held several times over before any tool runs, so 8 MiB of
/// `[0,0,...]` would take gigabytes. A line over it is refused like an over-long one.
pub const MAX_LINE_VALUES: usize = 100_000;

/// Most weight (the [`MAX_LINE_VALUES`] measure) of requests in flight at once, over every
/// connection of the process: two messages at the line limit. A request line weighs the larger of
/// its weighed values and its bytes / [`BYTES_PER_UNIT`]; it is counted from when its newline is
/// read until a line with its id is written back. A heavy request that would pass the budget is
/// answered at once with a `Server busy` error naming the budget (it is never parsed). Requests
/// lighter than [`LIGHT_REQUEST`] may also use [`LIGHT_RESERVE`] above the budget, so ordinary
/// traffic goes through while two large requests run.
pub const IN_FLIGHT_BUDGET: usize = 2 * MAX_LINE_VALUES;
/// Bytes that weigh as one value: a line at the byte limit weighs [`MAX_LINE_VALUES`].
pub const BYTES_PER_UNIT: usize = MAX_LINE_BYTES / MAX_LINE_VALUES;
/// Below this weight a request is light (about 83 KB or 1,000 values).
pub const LIGHT_REQUEST: usize = 1_000;
/// Room above [`IN_FLIGHT_BUDGET`] for light requests only.
pub const LIGHT_RESERVE: usize = MAX_LINE_VALUES / 10;
/// A request not answered after this long (a cancelled one rmcp never answers) stops counting.
pub const IN_FLIGHT_FORGET: Duration = Duration::from_secs(60);

/// Weight of the requests in flight, process-wide.
static IN_FLIGHT_USED: Mutex<usize> = Mutex::new(0);

/// One connection's requests in flight (by id, as JSON text) with their weights; what is still
/// held returns to the process budget when the connection ends.
#[derive(Default)]
pub struct InFlight {
    held: Mutex<HashMap<String, (usize, Instant)>>,
}

impl InFlight {
    /// Counts the request `id` of `weight` if the budget allows (else false). An id already in
    /// flight is refused (JSON-RPC ids are unique among pending requests).
    fn admit(&self, id: &Value, weight: usize) -> bool {
        let key = id.to_string();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let mut used = IN_FLIGHT_USED.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|_, (w, since)| {
            let keep = now.duration_since(*since) < IN_FLIGHT_FORGET;
            if !keep {
                *used = used.saturating_sub(*w);
            }
            keep
        });
        if held.contains_key(&key) {
            return false;
        }
        let limit = if weight < LIGHT_REQUEST { IN_FLIGHT_BUDGET + LIGHT_RESERVE } else { IN_FLIGHT_BUDGET };
        if *used + weight > limit {
            return false;
        }
        *used += weight;
        held.insert(key, (weight, now));
        true
    }

    /// The answer to `id` went out.
    fn release(&self, id: &Value) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((w, _)) = held.remove(&id.to_string()) {
            let mut used = IN_FLIGHT_USED.lock().unwrap_or_else(|e| e.into_inner());
            *used = used.saturating_sub(w);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let held = self.held.get_mut().unwrap_or_else(|e| e.into_inner());
        let total: usize = held.drain().map(|(_, (w, _))| w).sum();
        let mut used = IN_FLIGHT_USED.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(total);
    }
}

/// The server's output, watched for answers: a line with a top-level id ends that request's
/// count in [`InFlight`].
pub struct AnswerWatch<W> {
    inner: W,
    inflight: Arc<InFlight>,
    scan: IdScan,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for AnswerWatch<W> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            for &b in &buf[..*n] {
                if b == b'\n' {
                    if let Some(id) = std::mem::take(&mut this.scan).id() {
                        this.inflight.release(&id);
                    }
                } else {
                    this.scan.push(b);
                }
            }
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// How long calls still running when the input closes may take to answer before they are stopped.
pub const EOF_GRACE: Duration = Duration::from_millis(1000);

/// The method of the request [`LineGuard`] substitutes for an over-long one (answered by
/// `mcp::Server` with -32600).
pub const TOO_LARGE_METHOD: &str = "workbench/message_too_large";

/// Any reader/writer pair as a server transport, lines bounded by a [`LineGuard`] of
/// `max_line_bytes`; `closed` turns true when the input ends.
fn bounded<R, W>(
    read: R,
    write: W,
    max_line_bytes: usize,
    closed: watch::Sender<bool>,
) -> impl Transport<RoleServer> + 'static
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let inflight = Arc::new(InFlight::default());
    let mut guard = LineGuard::new(read, max_line_bytes, closed);
    guard.inflight = Some(inflight.clone());
    let write = AnswerWatch { inner: write, inflight, scan: IdScan::default() };
    // rmcp's own bound stays above ours: the guard never passes a longer line.
    AsyncRwTransport::new_server(guard, write).with_max_line_length(max_line_bytes + 2)
}

/// Serves `app` on stdin/stdout until stdin closes: `workbench serve`.
pub async fn serve_stdio(app: Arc<App>) -> anyhow::Result<()> {
    serve(app, tokio::io::stdin(), tokio::io::stdout(), MAX_LINE_BYTES).await
}

/// Serves `app` (the default profile) over `read`/`write`; see [`serve_with`].
pub async fn serve<R, W>(app: Arc<App>, read: R, write: W, max_line_bytes: usize) -> anyhow::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    serve_with(Server::new(app), read, write, max_line_bytes).await
}

/// Serves `server` over `read`/`write` until the peer closes its side (EOF on `read`), the way the
/// binary serves stdio. A peer that goes away before `initialize` is not an error; calls still
/// running [`EOF_GRACE`] after the input closed are cancelled. Client logging is active while it
/// serves.
pub async fn serve_with<R, W>(server: Server, read: R, write: W, max_line_bytes: usize) -> anyhow::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (closed_tx, mut closed) = watch::channel(false);
    let log = server.log.clone();
    let profile = server.profile;
    let running = match server.serve(bounded(read, write, max_line_bytes, closed_tx)).await {
        Ok(s) => s,
        Err(e) if e.to_string().contains("connection closed") => {
            tracing::info!("input closed before initialize; exiting");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(profile = profile.name(), "serving MCP");
    let forwarder = super::logging::activate(&log, running.peer().clone());
    let input_closed = async {
        let _ = closed.wait_for(|c| *c).await;
        tokio::time::sleep(EOF_GRACE).await;
    };
    let result = tokio::select! {
        done = running.waiting() => done.map(|_| ()).map_err(anyhow::Error::from),
        // Dropping the running service cancels its handlers.
        () = input_closed => {
            tracing::info!("input closed; calls still running after {EOF_GRACE:?} were stopped");
            Ok(())
        }
    };
    super::logging::deactivate(&log);
    forwarder.abort();
    result
}

/// The client's byte stream as rmcp reads it, with lines of at most `max` bytes (see the module
/// docs). Also reports the end of input (or a read error) on `closed`.
pub struct LineGuard<R> {
    inner: R,
    max: usize,
    closed: watch::Sender<bool>,
    /// Bytes read from `inner`, one chunk at a time.
    chunk: Vec<u8>,
    /// Bytes for rmcp, handed out before anything more is read.
    out: Vec<u8>,
    out_pos: usize,
    /// Length of the current line so far (all of it, also the part being swallowed).
    line_len: usize,
    /// The current line passed the limit: swallow it up to its newline.
    swallowing: bool,
    /// It passed [`MAX_LINE_VALUES`] (not the byte limit).
    too_many_values: bool,
    scan: IdScan,
    /// The budget of requests in flight (none: not counted).
    pub inflight: Option<Arc<InFlight>>,
}

const CHUNK: usize = 64 * 1024;

impl<R> LineGuard<R> {
    pub fn new(inner: R, max: usize, closed: watch::Sender<bool>) -> Self {
        LineGuard {
            inner,
            max,
            closed,
            chunk: vec![0; CHUNK],
            out: Vec::with_capacity(CHUNK + 256),
            out_pos: 0,
            line_len: 0,
            swallowing: false,
            too_many_values: false,
            scan: IdScan::default(),
            inflight: None,
        }
    }

    /// Moves one chunk through the line rules into `out`.
    fn process(&mut self, n: usize) {
        self.out.clear();
        self.out_pos = 0;
        let mut start = 0; // first byte of the current run that passes through unchanged
        for i in 0..n {
            let b = self.chunk[i];
            self.line_len += 1;
            if self.swallowing {
                if b == b'\n' {
                    self.end_over_long_line();
                    start = i + 1;
                } else {
                    self.scan.push(b);
                }
                continue;
            }
            if b == b'\n' {
                let scan = std::mem::take(&mut self.scan);
                let bytes = self.line_len - 1;
                self.line_len = 0;
                if let (Some(inflight), Some(id)) = (&self.inflight, scan.id()) {
                    let weight = scan.values.max(bytes / BYTES_PER_UNIT).max(1);
                    if !inflight.admit(&id, weight) {
                        tracing::warn!(
                            weight,
                            budget = IN_FLIGHT_BUDGET,
                            "refused a request over the in-flight budget"
                        );
                        self.out.extend_from_slice(&self.chunk[start..i]);
                        self.out.extend_from_slice(b"\0\n");
                        let params =
                            json!({"bytes": bytes, "busy": true, "weight": weight, "budget": IN_FLIGHT_BUDGET});
                        let line = json!({"jsonrpc": "2.0", "id": id, "method": TOO_LARGE_METHOD, "params": params});
                        self.out.extend_from_slice(line.to_string().as_bytes());
                        self.out.push(b'\n');
                        start = i + 1;
                    }
                }
                continue;
            }
            let too_many_values = self.scan.values > MAX_LINE_VALUES;
            if self.line_len > self.max || too_many_values {
                self.too_many_values = too_many_values && self.line_len <= self.max;
                // rmcp gets what passed so far, ended by a NUL so that it never parses (not even
                // when a whole message was followed by megabytes of spaces), then the newline.
                self.out.extend_from_slice(&self.chunk[start..i]);
                self.out.extend_from_slice(b"\0\n");
                self.swallowing = true;
                self.scan.push(b);
                continue;
            }
            self.scan.push(b);
        }
        if !self.swallowing && start < n {
            self.out.extend_from_slice(&self.chunk[start..n]);
        }
    }

    /// The newline of an over-long line: answer it if it was a request, then start afresh.
    fn end_over_long_line(&mut self) {
        let bytes = self.line_len - 1;
        let scan = std::mem::take(&mut self.scan);
        match scan.id() {
            Some(id) => {
                tracing::warn!(
                    bytes,
                    limit = self.max,
                    "an incoming request exceeded the line limit; answering it with an error"
                );
                let mut params = json!({"bytes": bytes, "limit": self.max});
                if self.too_many_values {
                    params["max_values"] = json!(MAX_LINE_VALUES);
                }
                let line = json!({"jsonrpc": "2.0", "id": id, "method": TOO_LARGE_METHOD, "params": params});
                self.out.extend_from_slice(line.to_string().as_bytes());
                self.out.push(b'\n');
            }
            None => tracing::warn!(
                bytes,
                limit = self.max,
                "dropped an incoming message over the line limit (no id to answer)"
            ),
        }
        self.swallowing = false;
        self.too_many_values = false;
        self.line_len = 0;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.out_pos < this.out.len() {
                let take = buf.remaining().min(this.out.len() - this.out_pos);
                buf.put_slice(&this.out[this.out_pos..this.out_pos + take]);
                this.out_pos += take;
                return Poll::Ready(Ok(()));
            }
            let mut rb = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut rb) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    this.closed.send_replace(true);
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        this.closed.send_replace(true);
                        return Poll::Ready(Ok(()));
                    }
                    this.process(n);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_messages_have_the_clients_limits() {
        assert_eq!(crate::mcp_client::MAX_UPSTREAM_LINE_BYTES, MAX_LINE_BYTES);
        assert_eq!(crate::mcp_client::MAX_UPSTREAM_LINE_VALUES, 2 * MAX_LINE_VALUES);
    }

    fn scan(text: &str) -> Option<Value> {
        let mut s = IdScan::default();
        text.bytes().for_each(|b| s.push(b));
        s.id()
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_stands() {
        assert_eq!(scan(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":1}}"#), Some(json!(7)));
        assert_eq!(
            scan(r#"{"method":"tools/call","params":{"id":1,"a":[{"id":2}]},"jsonrpc":"2.0","id":"abc"}"#),
            Some(json!("abc"))
        );
        assert_eq!(scan(r#"{ "id" : -1.5e3 , "method":"x"}"#), Some(json!(-1500.0)));
        assert_eq!(scan(r#"{"i\u0064":"esc\u0061ped"}"#), Some(json!("escaped")), "escapes in the name and value");
        let escaped_128 = format!(r#"{{"id":"{}"}}"#, r"\u0041".repeat(128));
        assert_eq!(scan(&escaped_128), Some(json!("A".repeat(128))));
        assert_eq!(scan(r#"{"params":{"k":"\"id\":9,"},"id":"q\"uote"}"#), Some(json!("q\"uote")));
    }

    /// A request is an object with an id and a top-level `method`, however its name is written.
    #[test]
    fn a_request_is_told_by_its_method() {
        let method = |text: &str| {
            let mut s = IdScan::default();
            text.bytes().for_each(|b| s.push(b));
            s.has_method
        };
        assert!(method(r#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#));
        assert!(method(r#"{"id":1,"\u006d\u0065\u0074\u0068\u006f\u0064":"roots/list"}"#), "all in escapes");
        assert!(!method(r#"{"jsonrpc":"2.0","id":1,"result":{"method":"ping"}}"#), "a member of a member");
        assert!(!method(r#"{"id":1,"methods":"x","a":"method"}"#));
    }

    #[test]
    fn no_id_when_there_is_none_or_it_is_not_a_scalar() {
        assert_eq!(scan(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
        assert_eq!(scan(r#"{"params":{"id":3}}"#), None);
        assert_eq!(scan(r#"{"idx":3,"xid":4,"i\"d":5}"#), None);
        assert_eq!(scan(r#"{"id":{"a":1}}"#), None);
        assert_eq!(scan(r#"{"id":null}"#), None);
        assert_eq!(scan(r#"[{"id":1}]"#), None);
        assert_eq!(scan(&format!(r#"{{"id":"{}"}}"#, "x".repeat(200))), None);
        assert_eq!(scan(r#"{"id":5"#), None, "a value is only taken once it ends");
    }

    fn guard_output(input: &[u8], max: usize) -> Vec<u8> {
        let (tx, _rx) = watch::channel(false);
        let mut g = LineGuard::new(input, max, tx);
        let mut out = Vec::new();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            use tokio::io::AsyncReadExt;
            g.read_to_end(&mut out).await.unwrap();
        });
        out
    }

    #[test]
    fn lines_within_the_limit_pass_unchanged() {
        let input = b"{\"a\":1}\r\n\n{\"b\":\"0123456789\"}\n{\"tail\":true}";
        assert_eq!(guard_output(input, 20), input.to_vec());
        let long: Vec<u8> = (0..300_000u32).map(|i| if i % 1001 == 1000 { b'\n' } else { b'x' }).collect();
        assert_eq!(guard_output(&long, 1000), long, "lines of exactly the limit pass, across chunks");
    }

    #[test]
    fn an_over_long_request_becomes_a_short_one_with_its_id() {
        let big =
            format!(r#"{{"method":"tools/call","params":{{"q":"{}"}},"jsonrpc":"2.0","id":42}}"#, "y".repeat(200_000));
        let input = format!("{{\"id\":1}}\n{big}\n{{\"id\":2}}\n");
        let out = String::from_utf8(guard_output(input.as_bytes(), 1000)).unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"id":1}"#);
        assert_eq!(lines[1].len(), 1001, "the limit's worth, then a NUL");
        assert!(lines[1].ends_with('\0'));
        let substitute: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(substitute["id"], 42);
        assert_eq!(substitute["method"], TOO_LARGE_METHOD);
        assert_eq!(substitute["params"], json!({"bytes": big.len(), "limit": 1000}));
        assert_eq!(lines[3], r#"{"id":2}"#);
        assert_eq!(lines.len(), 5);
    }

    #[test]
    fn an_over_long_notification_is_only_dropped() {
        let input = format!("{{\"method\":\"x\",\"p\":\"{}\"}}\n{{\"id\":3}}\n", "z".repeat(5000));
        let out = String::from_utf8(guard_output(input.as_bytes(), 100)).unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].ends_with('\0') && lines[0].len() == 101);
        assert_eq!(lines[1], r#"{"id":3}"#);
    }

    /// Attack (issue 26): 7.5 MB of `[0,0,...]` is within the byte limit but parses to millions
    /// of values (755 MiB resident before any tool ran). Refused like an over-long line; commas
    /// inside strings do not count.
    #[test]
    fn a_line_of_too_many_values_is_refused_like_an_over_long_one() {
        let wide = format!("{{\"id\":7,\"p\":[{}]}}\n", vec!["0"; MAX_LINE_VALUES + 10].join(","));
        let out = String::from_utf8(guard_output(wide.as_bytes(), MAX_LINE_BYTES)).unwrap();
        let lines: Vec<&str> = out.split('\n').collect();
        let substitute: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(substitute["method"], TOO_LARGE_METHOD);
        assert_eq!(substitute["id"], 7);
        assert_eq!(substitute["params"]["max_values"], MAX_LINE_VALUES);
        let text = format!("{{\"id\":8,\"p\":\"{}\"}}\n", ",".repeat(MAX_LINE_VALUES * 2));
        assert_eq!(guard_output(text.as_bytes(), MAX_LINE_BYTES), text.as_bytes(), "commas in a string are text");
    }
}
