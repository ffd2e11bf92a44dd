//! workbench's integration tests: one binary, one file per area.

mod support;

mod airtable;
mod asana;
mod binary;
mod builtins;
mod confluence;
mod connect;
mod discord;
mod engine;
mod github;
mod gitlab;
mod gmail;
mod google_calendar;
mod google_drive;
mod google_sheets;
mod hubspot;
mod jira;
mod keychain;
mod linear;
mod meta_tools;
mod notion;
mod pagerduty;
mod plugins_public;
mod registry;
mod search_eval;
mod sentry;
mod slack;
mod stripe;
mod superset;
mod todoist;
mod transport;
mod trello;
