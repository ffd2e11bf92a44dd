//! Built-in tools: they run inside workbench and reach no service (except `http_send_request`).
//! Listed in one slice, described like plugin tools, searchable and run the same way.

pub mod audit;
pub mod connection;
pub mod custom;
pub mod data;
pub mod http;
pub mod time;
pub mod vault;

/// The address guard's old path (it is the top-level [`crate::net`] now).
use crate::registry::BuiltinSpec;

/// Defines a [`BuiltinSpec`] from an argument type and an
/// `async fn(Arc<App>, Args) -> Result<Value, ToolError>`.
macro_rules! builtin {
    (
        name: $name:literal,
        namespace: $ns:literal,
        effect: $effect:ident,
        $(results: $results:ident,)?
        $(audience: $audience:expr,)?
        args: $args:ty,
        run: $run:path,
        keywords: [$($kw:literal),* $(,)?],
        description: $desc:expr $(,)?
    ) => {
        $crate::registry::BuiltinSpec {
            name: $name,
            namespace: $ns,
            description: $desc,
            keywords: &[$($kw),*],
            effect: plugins::api::Effect::$effect,
            results: plugins::tool!(@opt $(plugins::flow::Results::$results)?),
            audience: plugins::tool!(@opt $($audience)?),
            schema: {
                // The committed schema; in this crate's tests, the one generated from the
                // argument type (a test checks the two are the same text: `meta::schema`). `src/schemas.rs` is the committed file.
                #[cfg(not(test))]
                let schema: fn() -> _ =
                    || plugins::schema::committed($crate::schemas::SCHEMAS, concat!("builtin/", $name));
                #[cfg(test)]
                let schema: fn() -> _ = plugins::schema::schema_for::<$args>;
                schema
            },
            run: |app, args| {
                Box::pin(async move {
                    let args: $args = plugins::api::parse_args(args)?;
                    $run(app, args).await
                })
            },
        }
    };
}
pub(crate) use builtin;

/// Every built-in tool.
pub static BUILTINS: &[BuiltinSpec] = &[
    data::QUERY_JSON,
    data::CONVERT_CSV,
    time::GET_CURRENT,
    audit::SEARCH_LOG,
    vault::SET_SECRET,
    vault::LIST_SECRETS,
    vault::DELETE_SECRET,
    connection::DELETE_CREDENTIALS,
    custom::CREATE_APP,
    custom::LIST_APPS,
    custom::DELETE_APP,
    http::SEND_REQUEST,
];
