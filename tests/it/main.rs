//! workbench's integration tests: one binary, one file per area.

mod support;

mod airtable;
mod asana;
mod binary;
mod builtins;
mod confluence;
mod connect;
mod engine;
mod github;
mod gitlab;
mod hubspot;
mod jira;
mod linear;
mod meta_tools;
mod pagerduty;
mod plugins_public;
mod registry;
mod sentry;
mod stripe;
mod todoist;
mod trello;
