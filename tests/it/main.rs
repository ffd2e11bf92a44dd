//! workbench's integration tests: one binary, one file per area.

mod support;

mod binary;
mod builtins;
mod engine;
mod gmail;
mod google_calendar;
mod google_drive;
mod google_sheets;
mod meta_tools;
mod plugins_public;
mod registry;
