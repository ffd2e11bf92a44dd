//! workbench: a local, single-user MCP server that puts a catalogue of service integrations behind
//! nine meta-tools.
//!
//! # Layout
//! The top-level modules form no cycle (ARCHITECTURE.md, "Layers"; `tests/it/tidy.rs`). [`start`]
//! is the composition root; [`app`] holds only shared handles and per-module state slots.
//!
//! - [`mcp`]: the MCP surface (the only module that knows rmcp).
//! - [`meta`]: the nine meta-tools as plain Rust.
//! - [`engine`]: execute_tools: batch rules, refs, validation, bounded runs, scrub, cap, audit.
//! - [`registry`]: the tool catalogue (plugins + built-ins) and search.
//! - [`builtins`]: tools that run inside workbench.
//! - [`schemas`] (generated): the built-in and meta-tools' input schemas as committed text.
//! - [`validate`]: JSON Schema argument validation with agent-friendly errors.
//! - [`storage`]: SQLite metadata (user, audit log, vault metadata); never secrets.
//! - [`auth`]: connections: credentials from the environment or the secret store, and injection.
//! - [`secrets`]: `Secret<T>`, secret stores, the vault.
//! - [`listener`]: the loopback listener's core (bind, guards, mounted routes).
//! - [`connect`]: connect pages, the OAuth callback, the vault secret and unlock pages.
//! - [`send`]: the one credentialed send path (credentials, refresh, sessions, governor, cap).
//! - [`net`]: the address guard and the guarded HTTP clients.
//! - [`approval`]: approving held calls on a local page (clients without elicitation).
//! - [`portal`]: `workbench portal`, the local web page over that listener.
//! - [`config`]: data directory and settings.
//! - [`setup`]: `workbench setup`, the one-time choice of secret store where no keychain answers.
//! - `plugins` (workspace crate): the integrations themselves.

pub mod app;
pub mod approval;
pub mod auth;
pub mod builtins;
pub mod cli;
pub mod clients;
pub mod config;
pub mod connect;
pub mod custom;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod ids;
pub mod jsonrpc;
pub mod listener;
pub mod mcp;
pub mod mcp_client;
pub mod meta;
pub mod net;
pub mod platform;
pub mod portal;
pub mod proxy;
pub mod registry;
pub mod schemas;
pub mod scrub;
pub mod secrets;
pub mod send;
pub mod setup;
pub mod start;
pub mod storage;
pub mod template;
pub mod upstream;
pub mod validate;

/// Sent with every upstream request (Wikimedia requires a descriptive one). It names no address:
/// the project has no public home yet, and a User-Agent must not point at one that does not exist.
pub const USER_AGENT: &str = concat!("workbench/", env!("CARGO_PKG_VERSION"), " (local MCP tool gateway)");
