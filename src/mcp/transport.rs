//! The stdio transport, with a bound on the size of one incoming message.
//!
//! rmcp 3.11's `AsyncRwTransport` already reads lines through a bounded reader (it never buffers
//! more than its limit, default 16 MiB): a longer line is discarded up to its newline, logged at
//! `error` and the connection stays open. This module pins our own, smaller limit and gives tests
//! and the fuzz targets one way to serve the real [`Server`] over any byte stream (an in-memory
//! duplex) exactly as the binary serves stdin/stdout.
//!
//! What the transport does with bad input (checked by `tests/it/transport.rs` and `fuzz/`):
//! - a line over [`MAX_LINE_BYTES`]: dropped unread, one `error` log line on stderr (the id of a
//!   message that was never read cannot be known, so no response is sent), then the next line is
//!   served as usual;
//! - a line that is not JSON (including nesting deeper than serde_json's 128 levels): ignored, as
//!   the other official MCP SDKs do (answering garbage invites an error storm);
//! - JSON that is not a JSON-RPC message: an `Invalid request` (-32600) error response;
//! - a known method with params of the wrong shape: `Invalid params` (-32602), see `mcp::Server`.
//!
//! When the input closes, rmcp waits up to 5 s for handlers still running before it returns. A client
//! that closes our stdin is gone (the MCP stdio shutdown sequence), so [`serve`] gives in-flight calls
//! [`EOF_GRACE`] to answer and then stops them: the process exits within about a second even with a
//! 600 s `wait_for_connection` pending.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::ServiceExt;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

use super::Server;
use crate::app::App;

/// Longest incoming line (one JSON-RPC message) we read: 8 MiB. Requests carry tool arguments (local
/// files are passed by path, not inline), orders of magnitude below this; answers are capped at
/// 60,000 characters.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How long calls still running when the input closes may take to answer before they are stopped.
pub const EOF_GRACE: Duration = Duration::from_millis(1000);

/// Any reader/writer pair as a server transport with a line bound of `max_line_bytes`.
pub fn bounded<R, W>(read: R, write: W, max_line_bytes: usize) -> impl Transport<RoleServer> + 'static
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    AsyncRwTransport::new_server(read, write).with_max_line_length(max_line_bytes)
}

/// Serves `app` on stdin/stdout until stdin closes: `workbench serve`.
pub async fn serve_stdio(app: Arc<App>) -> anyhow::Result<()> {
    serve(app, tokio::io::stdin(), tokio::io::stdout(), MAX_LINE_BYTES).await
}

/// Serves `app` over `read`/`write` until the peer closes its side (EOF on `read`), the way the
/// binary serves stdio. A peer that goes away before `initialize` is not an error; calls still
/// running [`EOF_GRACE`] after the input closed are cancelled.
pub async fn serve<R, W>(app: Arc<App>, read: R, write: W, max_line_bytes: usize) -> anyhow::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (closed_tx, mut closed) = watch::channel(false);
    let read = EofSignal { inner: read, closed: closed_tx };
    let running = match Server::new(app).serve(bounded(read, write, max_line_bytes)).await {
        Ok(s) => s,
        Err(e) if e.to_string().contains("connection closed") => {
            tracing::info!("input closed before initialize; exiting");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    let input_closed = async {
        let _ = closed.wait_for(|c| *c).await;
        tokio::time::sleep(EOF_GRACE).await;
    };
    tokio::select! {
        done = running.waiting() => { done?; }
        // Dropping the running service cancels its handlers.
        () = input_closed => tracing::info!("input closed; calls still running after {EOF_GRACE:?} were stopped"),
    }
    Ok(())
}

/// A reader that reports end of input (or a read error) on a watch channel.
struct EofSignal<R> {
    inner: R,
    closed: watch::Sender<bool>,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                self.closed.send_replace(true);
            }
            Poll::Ready(Err(_)) => {
                self.closed.send_replace(true);
            }
            _ => {}
        }
        polled
    }
}
