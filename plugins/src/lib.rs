//! workbench's statically compiled integrations.
//!
//! # Layout
//! - [`api`]: the contract with the engine (integration and tool descriptions, requests, errors).
//! - [`codec`]: base64 (standard and URL-safe) for file contents and MIME.
//! - [`schema`]: argument types to portable JSON Schema.
//! - [`text`]: rich text (HTML) to plain text at the tool boundary.
//! - one module per integration, each exporting `INTEGRATION`, all listed in [`INTEGRATIONS`].
//!
//! Adding an integration: write `plugins/src/<name>.rs` with a `pub static INTEGRATION`, add it to
//! [`INTEGRATIONS`], and add its fake-server tests under `tests/it/`.

pub mod api;
pub mod codec;
pub mod schema;
pub mod text;

/// Shared by the four Google Workspace integrations.
pub mod google;

pub mod gmail;
pub mod google_calendar;
pub mod google_drive;
pub mod google_sheets;
pub mod hackernews;
pub mod open_meteo;
pub mod wikipedia;

use api::Integration;

/// Every integration workbench ships, in display order. The registry is built from this slice.
pub static INTEGRATIONS: &[&Integration] = &[
    &gmail::INTEGRATION,
    &google_drive::INTEGRATION,
    &google_sheets::INTEGRATION,
    &google_calendar::INTEGRATION,
    &hackernews::INTEGRATION,
    &wikipedia::INTEGRATION,
    &open_meteo::INTEGRATION,
];
