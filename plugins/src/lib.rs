//! workbench's statically compiled integrations.
//!
//! # Layout
//! - [`api`]: the contract with the engine (integration and tool descriptions, requests, errors).
//! - [`atlassian`]: the Atlassian Cloud sign-in (site, email, API token) Jira and Confluence share.
//! - [`flow`]: the outbound-data guard's labels (results public or private, a write's audience, the user's side).
//! - [`codec`]: base64 (standard and URL-safe) and percent-encoding, for file contents, MIME, URLs.
//! - [`markdown`]: the one Markdown reader (pulldown-cmark) the Jira, Confluence and Notion converters
//!   render from.
//! - `mock` (tests only): `MockUpstream`, an [`api::Upstream`] that records requests and answers
//!   with canned replies, for request-building and shaping tests next to each tool.
//! - [`schema`]: argument types to portable JSON Schema.
//! - [`schemas`] (generated): every tool's schema as committed text, read at run time;
//!   `schema_file` (tests only) rewrites it with `UPDATE_SCHEMAS=1`.
//! - [`text`]: rich text (HTML) to plain text at the tool boundary.
//! - [`time`]: calendar arithmetic (chrono) for dates agents type and timestamps results show.
//! - one module per integration, each exporting `INTEGRATION`, all listed in [`INTEGRATIONS`].
//!
//! Adding an integration: write `plugins/src/<name>.rs` with a `pub static INTEGRATION` whose
//! `tools` lists the tool specs, each defined next to its handler
//! (`pub(crate) const LIST_TASKS: ToolSpec = tool! {..}`), add it to [`INTEGRATIONS`], put each
//! tool's request- and result-shaping tests on `MockUpstream` in `plugins/src/<name>/tool_tests.rs`
//! (declared at the end of the integration's root file), and its engine tests (auth, 401, 429,
//! paging over HTTP) under `tests/it/`.

pub mod api;
pub mod codec;
pub mod flow;
pub mod markdown;
#[cfg(test)]
pub mod mock;
pub mod schema;
#[cfg(test)]
mod schema_file;
pub mod schemas;
pub mod text;
pub mod time;

pub mod airtable;
pub mod asana;
pub mod atlassian;
pub mod confluence;
pub mod discord;
pub mod github;
pub mod gitlab;
pub mod gmail;
pub mod google;
pub mod google_calendar;
pub mod google_drive;
pub mod google_sheets;
pub mod hackernews;
pub mod hubspot;
pub mod jira;
pub mod linear;
pub mod notion;
pub mod open_meteo;
pub mod pagerduty;
pub mod sentry;
pub mod slack;
pub mod stripe;
pub mod superset;
pub mod todoist;
pub mod trello;
pub mod wikipedia;

use api::Integration;

/// Every integration workbench ships, in display order. The registry is built from this slice.
pub static INTEGRATIONS: &[&Integration] = &[
    &github::INTEGRATION,
    &gitlab::INTEGRATION,
    &slack::INTEGRATION,
    &discord::INTEGRATION,
    &jira::INTEGRATION,
    &linear::INTEGRATION,
    &asana::INTEGRATION,
    &trello::INTEGRATION,
    &todoist::INTEGRATION,
    &notion::INTEGRATION,
    &confluence::INTEGRATION,
    &gmail::INTEGRATION,
    &google_drive::INTEGRATION,
    &google_sheets::INTEGRATION,
    &google_calendar::INTEGRATION,
    &superset::INTEGRATION,
    &airtable::INTEGRATION,
    &hubspot::INTEGRATION,
    &stripe::INTEGRATION,
    &sentry::INTEGRATION,
    &pagerduty::INTEGRATION,
    &hackernews::INTEGRATION,
    &wikipedia::INTEGRATION,
    &open_meteo::INTEGRATION,
];

#[cfg(test)]
mod tests {
    use crate::api::AuthKind;
    use crate::flow::{Audience, Results};

    /// Every tool carries the outbound-data guard's labels (issue 24 item 1): what its results
    /// are, and for a write who sees what it sends; every credentialed integration says how to
    /// find the user's own side; a public integration's results are public and it has no side.
    #[test]
    fn every_tool_carries_its_flow_labels() {
        let mut problems = Vec::new();
        for i in super::INTEGRATIONS {
            let public = i.auth.kind == AuthKind::None;
            if public && i.side.is_some() {
                problems.push(format!("{}: a public integration has no side of its own", i.name));
            }
            if !public && i.side.is_none() {
                problems.push(format!("{}: a credentialed integration needs its side lookup", i.name));
            }
            for t in i.tools {
                match t.results {
                    None => problems.push(format!("{}: no results label", t.name)),
                    Some(r) if public && r != Results::Public => {
                        problems.push(format!("{}: a public integration's results are public", t.name))
                    }
                    Some(Results::Public) if !public => {
                        problems.push(format!("{}: read with the user's credential, so not always public", t.name))
                    }
                    _ => {}
                }
                if t.effect.mutating() && t.audience.is_none() {
                    problems.push(format!("{}: a write without an audience label", t.name));
                }
                if !t.effect.mutating() && t.audience.is_some() {
                    problems.push(format!("{}: a read with an audience label (reads send nothing)", t.name));
                }
                if let Some(Audience::Outside(why)) = t.audience
                    && why.trim().len() < 10
                {
                    problems.push(format!("{}: say why it is always outside", t.name));
                }
            }
        }
        assert!(problems.is_empty(), "flow labels missing:\n{}", problems.join("\n"));
    }
}
