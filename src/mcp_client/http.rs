//! Streamable HTTP to the user's servers with every answer weighed before it is parsed.
//!
//! rmcp's client over reqwest bounds a JSON answer and an SSE event in bytes (8 MiB here), then
//! parses what fits: 8 MB of `[{},{},...]` is 2.7 million values, several hundred MiB once
//! parsed (a hostile server took workbench to 778 MiB). [`Weighed`] is rmcp's
//! `StreamableHttpClient` with its POST adapted from rmcp 3.11's implementation for
//! `reqwest::Client` (Apache-2.0; changed: a JSON answer's values are counted as the stdio
//! reader counts them, before it is parsed, and an SSE answer's events are bounded and counted
//! here) and its GET stream and session deletion rmcp's own, the stream's events counted as they
//! come. A JSON answer over [`MAX_UPSTREAM_LINE_VALUES`] is replaced by a JSON-RPC error for its
//! request (the connection stays); an event over it, or over the bytes an event may hold, ends
//! the connection, as on stdio, and the reason is kept for the calls that waited ([`Refused`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse, SseStream};

use super::{MAX_UPSTREAM_LINE_VALUES, Refused, RequestBudget};
use crate::jsonrpc::IdScan;

type HttpError = StreamableHttpError<reqwest::Error>;

/// Headers a server's entry may not set: the transport's own (rmcp's `RESERVED_HEADERS`, but
/// `MCP-Protocol-Version`, which rmcp's worker injects after the handshake).
const RESERVED: [&str; 3] = ["accept", HEADER_SESSION_ID, HEADER_LAST_EVENT_ID];

/// The longest `Retry-After` kept (rmcp's bound).
const MAX_RETRY_AFTER: usize = 128;

/// rmcp's Streamable HTTP client with answers weighed before they are parsed.
#[derive(Clone)]
pub(super) struct Weighed {
    pub client: reqwest::Client,
    pub refused: Refused,
    /// The server's own requests to workbench, counted as on stdio.
    pub requests: Arc<std::sync::Mutex<RequestBudget>>,
}

impl Weighed {
    /// An SSE stream with each event's data counted before rmcp's transport parses it: a dense
    /// one, or a request of the server's past [`super::MAX_SERVER_REQUESTS`], ends the stream
    /// and the connection with it (the reason kept for the waiting calls).
    fn counted(&self, stream: BoxStream<'static, Result<Sse, SseError>>) -> BoxStream<'static, Result<Sse, SseError>> {
        let (refused, requests) = (self.refused.clone(), self.requests.clone());
        stream
            .map(move |item| {
                let Ok(sse) = item else { return item };
                let Some(scan) = sse.data.as_deref().map(|d| scan(d.as_bytes())) else { return Ok(sse) };
                let why = if scan.values > MAX_UPSTREAM_LINE_VALUES {
                    Some(dense("an event", "closed the connection"))
                } else if scan.has_method && scan.id().is_some() {
                    requests.lock().unwrap_or_else(|e| e.into_inner()).take()
                } else {
                    None
                };
                match why {
                    Some(why) => Err(SseError::Body(refuse(&refused, why).into())),
                    None => Ok(sse),
                }
            })
            .boxed()
    }

    /// An SSE body with each event bounded at `max` bytes before it is buffered whole (the
    /// bytes between blank lines, as rmcp's `bounded_sse_stream` bounds them), its events
    /// counted.
    fn events(&self, response: reqwest::Response, max: usize) -> BoxStream<'static, Result<Sse, SseError>> {
        self.counted(bounded_events(response.bytes_stream(), max, self.refused.clone()))
    }
}

/// Why a dense `what` (a message, an event) is refused, and what workbench did.
fn dense(what: &str, done: &str) -> String {
    format!(
        "the server sent {what} of more than {MAX_UPSTREAM_LINE_VALUES} JSON values (an object counts as 8), over workbench's limit per message; workbench {done} without reading it"
    )
}

/// Keeps `why` for the calls that waited on a connection workbench ends.
fn refuse(refused: &Refused, why: String) -> String {
    tracing::warn!("{why}");
    *refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
    why
}

/// The answer to `message` in place of a dense one: a JSON-RPC error for its request.
fn dense_answer(message: &ClientJsonRpcMessage, session: Option<String>) -> StreamableHttpPostResponse {
    let ClientJsonRpcMessage::Request(request) = message else { return StreamableHttpPostResponse::Accepted };
    let why = dense("an answer", "refused it");
    tracing::warn!("{why}");
    let error = ErrorData::new(ErrorCode::INTERNAL_ERROR, why, None);
    StreamableHttpPostResponse::Json(ServerJsonRpcMessage::error(error, Some(request.id.clone())), session)
}

/// A message read by [`IdScan`], stopped once it holds more weighed values than a message may.
fn scan(bytes: &[u8]) -> IdScan {
    let mut scan = IdScan::default();
    for &b in bytes {
        scan.push(b);
        if scan.values > MAX_UPSTREAM_LINE_VALUES {
            break;
        }
    }
    scan
}

/// Whether a message holds more weighed values than a message may.
fn too_dense(bytes: &[u8]) -> bool {
    scan(bytes).values > MAX_UPSTREAM_LINE_VALUES
}

/// Whether a `Content-Type` is `mime` (parameters aside).
fn media_type_is(content_type: &str, mime: &str) -> bool {
    content_type.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case(mime))
}

/// The `scope=` of a `WWW-Authenticate` challenge, quoted or not.
fn scope_of(header: &str) -> Option<String> {
    let start = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let value = &header[start..];
    match value.strip_prefix('"') {
        Some(quoted) => quoted.find('"').map(|end| quoted[..end].to_string()),
        None => {
            let end = value.find(|c: char| c == ',' || c == ';' || c.is_whitespace()).unwrap_or(value.len());
            (end > 0).then(|| value[..end].to_string())
        }
    }
}

/// A body read whole within `max` bytes ([`crate::net::read_limited`]), as rmcp's errors.
async fn read_bounded(response: reqwest::Response, max: usize) -> Result<Vec<u8>, HttpError> {
    crate::net::read_limited(response, max)
        .await
        .map_err(StreamableHttpError::Client)?
        .ok_or(StreamableHttpError::ResponseBodyTooLarge { max_size: max })
}

/// At most `max` bytes of a body (a diagnostic), as text.
async fn read_prefix(response: reqwest::Response, max: usize) -> String {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(Ok(chunk)) = chunks.next().await {
        body.extend_from_slice(&chunk[..chunk.len().min(max - body.len())]);
        if body.len() >= max {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// An SSE body with each event bounded at `max` bytes (an event over it ends the stream and the
/// connection, the reason kept in `refused`).
fn bounded_events<S, D, E>(body: S, max: usize, refused: Refused) -> BoxStream<'static, Result<Sse, SseError>>
where
    S: futures::Stream<Item = Result<D, E>> + Send + 'static,
    D: bytes::Buf + AsRef<[u8]> + Send + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // Bytes of the event so far; whether the line read so far is empty; whether the last byte
    // was a CR (whose LF, if one follows, ends the same line).
    let (mut event, mut line_empty, mut after_cr) = (0usize, true, false);
    let bytes = body.map(move |chunk| {
        let chunk = chunk.map_err(|e| SseError::Body(e.into()))?;
        for &b in chunk.as_ref() {
            if b == b'\n' && after_cr {
                after_cr = false;
            } else if b == b'\n' || b == b'\r' {
                if line_empty {
                    event = 0;
                }
                line_empty = true;
                after_cr = b == b'\r';
            } else {
                (line_empty, after_cr) = (false, false);
                event += 1;
                if event > max {
                    let why = format!(
                        "the server sent an event over workbench's limit of {max} bytes (8 MiB) per message; workbench closed the connection without reading it"
                    );
                    return Err(SseError::Body(refuse(&refused, why).into()));
                }
            }
        }
        Ok::<_, SseError>(chunk)
    });
    // After an error the stream ends: nothing more of that body is read.
    let bytes = bytes.scan(false, |failed, item| {
        if *failed {
            return futures::future::ready(None);
        }
        *failed = item.is_err();
        futures::future::ready(Some(item.map_err(|e| std::io::Error::other(e.to_string()))))
    });
    SseStream::from_bytes_stream(bytes).boxed()
}

/// rmcp's worker posts through `post_message_with_response_limits`, with the transport's limits;
/// `post_message` (required) takes rmcp's default ones.
impl StreamableHttpClient for Weighed {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request =
            self.client.post(uri.as_ref()).header(ACCEPT, format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"));
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if RESERVED.iter().any(|r| name.as_str().eq_ignore_ascii_case(r)) {
                return Err(StreamableHttpError::ReservedHeaderConflict(name.to_string()));
            }
            request = request.header(name, value);
        }
        let session_was_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let response = request.json(&message).send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        let challenge = response.headers().get(WWW_AUTHENTICATE).cloned();
        if let Some(header) = challenge.filter(|_| matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)) {
            let header = header.to_str().map_err(|_| {
                StreamableHttpError::UnexpectedServerResponse(Cow::from("invalid www-authenticate header value"))
            })?;
            return Err(if status == StatusCode::UNAUTHORIZED {
                StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_string()))
            } else {
                StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
                    header.to_string(),
                    scope_of(header),
                ))
            });
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_was_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type =
            response.headers().get(CONTENT_TYPE).map(|ct| String::from_utf8_lossy(ct.as_bytes()).to_string());
        let is_json = content_type.as_deref().is_some_and(|ct| media_type_is(ct, JSON_MIME_TYPE));
        let status_error = (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()).then(|| {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .filter(|v| v.as_bytes().len() <= MAX_RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            HttpStatusError::new(status.as_u16(), retry_after)
        });
        let status_error = match status_error {
            Some(error) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => return Err(error.into()),
            other => other,
        };
        let session = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
        let awaits_no_response = matches!(
            message,
            ClientJsonRpcMessage::Notification(_) | ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)
        );
        if status.is_success() && response.content_length() == Some(0) && awaits_no_response {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            // A JSON-RPC error in a failure's JSON body is the answer; anything else is a
            // diagnostic, kept short.
            let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            let body = if is_json && !auth_failure {
                match read_bounded(response, limits.max_json_response_size).await {
                    Ok(body) if too_dense(&body) => return Ok(dense_answer(&message, session)),
                    Ok(body) => {
                        if let Ok(error @ JsonRpcMessage::Error(_)) =
                            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                        {
                            if let Some(answer) = discover_rejected(&message, session_was_attached, status, &body) {
                                return Ok(answer);
                            }
                            return Ok(StreamableHttpPostResponse::Json(error, session));
                        }
                        let text = String::from_utf8_lossy(&body[..body.len().min(limits.max_error_response_size)]);
                        text.into_owned()
                    }
                    Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                        return Err(status_error.map(StreamableHttpError::from).unwrap_or(e));
                    }
                    Err(_) => "<failed to read response body>".to_string(),
                }
            } else {
                read_prefix(response, limits.max_error_response_size.max(1)).await
            };
            if let Some(answer) = discover_rejected(&message, session_was_attached, status, body.as_bytes()) {
                return Ok(answer);
            }
            if let Some(error) = status_error {
                return Err(error.into());
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}: {body}"))));
        }
        match content_type.as_deref() {
            Some(ct) if media_type_is(ct, EVENT_STREAM_MIME_TYPE) => {
                Ok(StreamableHttpPostResponse::Sse(self.events(response, limits.max_sse_event_size), session))
            }
            Some(ct) if media_type_is(ct, JSON_MIME_TYPE) => {
                let body = read_bounded(response, limits.max_json_response_size).await?;
                if too_dense(&body) {
                    return Ok(dense_answer(&message, session));
                }
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                    Err(e) if awaits_no_response => {
                        tracing::warn!("could not parse a JSON answer to a notification, taken as accepted: {e}");
                        Ok(StreamableHttpPostResponse::Accepted)
                    }
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                        "the server's answer is not a JSON-RPC message: {e}"
                    )))),
                }
            }
            _ if awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
            _ => Err(StreamableHttpError::UnexpectedContentType(content_type)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.client.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let stream = self.client.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await?;
        Ok(self.counted(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let stream = self
            .client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.counted(stream))
    }
}

/// A `server/discover` that a server without it rejected (4xx, no session yet): its answer is
/// the JSON-RPC error the server sent, or one made of the status, so the handshake goes on
/// (rmcp's `legacy_discover_response`).
fn discover_rejected(
    message: &ClientJsonRpcMessage,
    session_was_attached: bool,
    status: StatusCode,
    body: &[u8],
) -> Option<StreamableHttpPostResponse> {
    if session_was_attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else { return None };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_slice::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {}", String::from_utf8_lossy(body)),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::error(error, Some(request.id.clone())), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_messages_are_told_from_plain_ones() {
        let plain = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"text\":\"{}\"}}}}", "x".repeat(1 << 20));
        assert!(!too_dense(plain.as_bytes()));
        let dense = format!("[{}]", vec!["{}"; 30_000].join(","));
        assert!(too_dense(dense.as_bytes()), "30,000 objects weigh 240,000");
        let zeros = format!("[{}]", vec!["0"; 150_000].join(","));
        assert!(!too_dense(zeros.as_bytes()), "150,000 numbers are within the limit");
    }

    #[test]
    fn a_challenges_scope_is_read_quoted_or_not() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#).as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(scope_of("Bearer scope=read:data, realm=x").as_deref(), Some("read:data"));
        assert_eq!(scope_of("Bearer realm=x"), None);
    }

    /// Events bounded one by one: blank lines (LF, CRLF or CR) end an event and its count; an
    /// event over the bound ends the stream, and the connection's reason is kept.
    #[tokio::test]
    async fn each_event_is_bounded_on_its_own() {
        let events = |chunks: Vec<&'static [u8]>| {
            let refused: Refused = Arc::default();
            let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
            (bounded_events(stream, 16, refused.clone()), refused)
        };
        let (stream, refused) =
            events(vec![b"data: 0123456789\r\n\r\ndata: 0123", b"456789\n\ndata: ab\r\rdata: c\n\n"]);
        let got: Vec<_> = stream.collect().await;
        let data: Vec<_> = got.iter().map(|e| e.as_ref().ok().and_then(|e| e.data.clone())).collect();
        assert_eq!(data, [Some("0123456789".into()), Some("0123456789".into()), Some("ab".into()), Some("c".into())]);
        assert!(refused.lock().unwrap().is_none());
        // 17 bytes of one event, across chunks and its lines: refused.
        let (stream, refused) = events(vec![b"data: 0123", b"4567\ndata: 890\n\n"]);
        let got: Vec<_> = stream.collect().await;
        assert!(
            got.iter().any(Result::is_err) && got.iter().all(|e| e.as_ref().map_or(true, |e| e.data.is_none())),
            "{got:?}"
        );
        assert!(refused.lock().unwrap().as_deref().is_some_and(|w| w.contains("limit of 16 bytes")));
    }

    #[test]
    fn media_types_are_read_without_their_parameters() {
        assert!(media_type_is("application/json; charset=utf-8", JSON_MIME_TYPE));
        assert!(media_type_is("Text/Event-Stream", EVENT_STREAM_MIME_TYPE));
        assert!(!media_type_is("application/jsonl", JSON_MIME_TYPE));
    }
}
