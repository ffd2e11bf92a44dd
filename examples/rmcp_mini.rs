//! rmcp-mini: the smallest useful rmcp stdio server (one tool, `echo`), the yardstick
//! `scripts/footprint.sh` measures workbench against: the same rmcp, the same tokio, the same
//! release profile, so the difference is what workbench itself adds.
//!
//! ```text
//! cargo build --release --example rmcp_mini
//! ```

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

#[derive(Clone)]
struct Mini;

fn echo_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string", "description": "What to echo." } },
        "required": ["text"]
    });
    let schema: JsonObject = serde_json::from_value(schema).expect("an object");
    Tool::new("echo", "Echo the text back.", Arc::new(schema))
}

impl ServerHandler for Mini {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-mini", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![echo_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request.arguments.as_ref().and_then(|a| a.get("text")).and_then(|t| t.as_str()).unwrap_or("");
        Ok(CallToolResult::success(vec![ContentBlock::text(text.to_string())]).into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let running = Mini.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
