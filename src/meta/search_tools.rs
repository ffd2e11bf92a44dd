//! search_tools: ranked tool discovery over the whole catalogue.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_inline_default::serde_inline_default;

use serde_json::Value;

use super::{Annotations, Failure, MetaTool, schema_of};
use crate::app::App;
use crate::engine::Hooks;

/// Results when the call names no `limit`.
pub const DEFAULT_LIMIT: usize = 10;
/// Most results one call returns.
pub const MAX_LIMIT: usize = 50;

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What you want to do, in plain words.
    #[schemars(length(min = 1))]
    pub query: String,
    /// Most results to return (1-50).
    #[serde_inline_default(DEFAULT_LIMIT)]
    #[schemars(range(min = 1, max = MAX_LIMIT))]
    pub limit: usize,
}

/// The best matches, best first. The agent reads them as [`super::search_answer::Answer`].
#[derive(Debug, Clone, Serialize)]
#[serde(into = "super::search_answer::Answer")]
pub struct Found {
    pub tools: Vec<Hit>,
    /// Upstream servers whose new or changed tools wait for the user's review (not offered).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes_waiting: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub name: &'static str,
    pub description: &'static str,
    pub integration: &'static str,
    /// Relevance, 0 to 1.
    pub score: f64,
    /// A guess: nothing scored as relevant in its place (below 0.4). Left out when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub weak: bool,
    pub connected: bool,
}

pub fn run(app: &Arc<App>, args: Args) -> Result<Found, Failure> {
    let query = args.query.trim();
    if query.is_empty() {
        return Err(Failure::plain("query is empty: describe what you want to do, e.g. \"list open pull requests\""));
    }
    let limit = args.limit.clamp(1, MAX_LIMIT);
    let connected = |integration: &str| app.is_connected(integration);
    let hits = app.registry().index().search(query, limit, &connected);
    let tools = hits
        .into_iter()
        .map(|h| Hit {
            name: h.name,
            description: h.description,
            integration: h.integration,
            score: h.score,
            weak: h.weak,
            connected: app.is_connected(h.integration),
        })
        .collect();
    Ok(Found { tools, changes_waiting: crate::upstream::waiting_notes(app) })
}

/// The meta-tool.
pub struct SearchTools;

impl MetaTool for SearchTools {
    const NAME: &'static str = "search_tools";
    const TITLE: &'static str = "Search tools";
    const DESCRIPTION: &'static str = "Search available tools by what you want to do, e.g. \"create jira issue\" or \"send email\". Matches words in any order, tolerates typos and common synonyms, and returns the best matches first with a relevance score.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    const LOOKS_UP_TOOLS: bool = true;
    type Args = Args;
    type Answer = Found;
    fn schema() -> Value {
        schema_of!(Args)
    }
    async fn run(app: &Arc<App>, args: Args, _: &Hooks) -> Result<Found, Failure> {
        run(app, args)
    }
}
