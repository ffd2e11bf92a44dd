//! The MCP surface: the only module that knows rmcp. It lists the nine meta-tools and forwards
//! each call to `meta::call`, turning outcomes into tool results. A panic inside a call becomes an
//! error result; the server keeps serving.

pub mod transport;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest, CustomResult, ErrorCode,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::app::App;
use crate::meta;

pub const INSTRUCTIONS: &str = "workbench gives you tools for many services behind nine meta-tools. \
Discover with search_tools (plain words, e.g. \"create jira issue\"), inspect with get_tool_schema, \
then run with execute_tools (one or many executions; compose + return keep big payloads out of your context). \
If a result says NOT_CONNECTED, call connect, give the user the URL, then wait_for_connection and retry.";

#[derive(Clone)]
pub struct Server {
    app: Arc<App>,
}

impl Server {
    pub fn new(app: Arc<App>) -> Self {
        Server { app }
    }
}

/// The nine tools exactly as tools/list shows them.
pub fn tool_list() -> Vec<Tool> {
    meta::META_TOOLS
        .iter()
        .map(|t| {
            let schema: JsonObject = match (t.schema)() {
                Value::Object(o) => o,
                _ => JsonObject::new(),
            };
            let annotations = ToolAnnotations::with_title(t.title)
                .read_only(t.read_only)
                .destructive(t.destructive)
                .idempotent(t.idempotent)
                .open_world(t.open_world);
            Tool::new(t.name, t.description, Arc::new(schema)).with_annotations(annotations)
        })
        .collect()
}

/// The error for a request rmcp could not type: rmcp hands a request to `on_custom_request` both when
/// its method is unknown and when a known method's params do not fit (`tools/call` with
/// `{"name": 5}`); the second is `Invalid params` (-32602) saying what is wrong, not "method not
/// found".
///
/// It also answers the stand-in the transport sends for a request over the line limit.
fn untyped_request_error(method: &str, params: Option<&Value>) -> McpError {
    let params = params.cloned().unwrap_or(Value::Null);
    if method == transport::TOO_LARGE_METHOD {
        let (bytes, limit) = (&params["bytes"], &params["limit"]);
        return McpError::invalid_request(
            format!(
                "Message too large: {bytes} bytes on one line, over workbench's limit of {limit} bytes per message; it was not read. Send smaller arguments."
            ),
            Some(json!({ "bytes": bytes, "limit": limit })),
        );
    }
    let problem = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err().map(|e| e.to_string()),
        "initialize" | "ping" | "tools/list" | "server/discover" => None,
        _ => return McpError::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"), None),
    };
    let problem = problem.unwrap_or_else(|| "they do not match the method's schema".into());
    McpError::invalid_params(format!("Invalid params for {method}: {problem}"), None)
}

fn to_result(body: Value, is_error: bool) -> CallToolResult {
    let text = serde_json::to_string(&body).unwrap_or_else(|_| "{}".into());
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("workbench", env!("CARGO_PKG_VERSION"))
                    .with_title("workbench")
                    .with_description("Local MCP tool gateway: search, inspect and run tools for many services"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(untyped_request_error(&request.method, request.params.as_ref()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tool_list().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if meta::find(&name).is_none() {
            if self.app.registry.get(&name).is_some() {
                // An agent calling a catalogue tool directly: tell it how, in words it reads.
                let hint = json!({ "error": format!("{name} is not a top-level tool; run it with execute_tools: {{\"executions\": [{{\"tool\": \"{name}\", \"args\": {{...}}}}]}}") });
                return Ok(to_result(hint, true).into());
            }
            return Err(McpError::invalid_params(format!("Unknown tool: {name}"), None));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let app = self.app.clone();
        let task = tokio::spawn(async move { meta::call(&app, &name, args).await });
        let result = match task.await {
            Ok(Some(outcome)) => to_result(outcome.body, outcome.is_error),
            Ok(None) => return Err(McpError::invalid_params("Unknown tool", None)),
            Err(e) => {
                tracing::error!(panic = e.is_panic(), "meta-tool task failed");
                to_result(json!({ "error": "internal error in workbench; the server is still running" }), true)
            }
        };
        Ok(result.into())
    }
}
