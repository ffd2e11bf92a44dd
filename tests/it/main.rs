//! workbench's integration tests: one binary, one file per area.

mod support;

mod binary;
mod builtins;
mod discord;
mod engine;
mod meta_tools;
mod notion;
mod plugins_public;
mod registry;
mod slack;
