//! workbench's integration tests: one binary, one file per area.

mod support;

mod asana;
mod binary;
mod builtins;
mod engine;
mod meta_tools;
mod pagerduty;
mod plugins_public;
mod registry;
mod sentry;
mod todoist;
mod trello;
