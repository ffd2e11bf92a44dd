//! workbench's integration tests: one binary, one file per area.

mod support;

mod binary;
mod builtins;
mod engine;
mod gmail;
mod meta_tools;
mod plugins_public;
mod registry;
