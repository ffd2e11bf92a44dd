//! Atlassian Cloud sign-in, shared by Jira and Confluence: the user's own site, the account email and
//! an API token, sent as Basic `email:token`. Each product names its site and token help its own way
//! and reads its own "who am I" endpoint.

use crate::api::{AuthKind, AuthSpec, Field, Identity, Inject};

/// The connect form (site, email, token) and Basic `email:token` on every request.
pub(crate) const fn auth(fields: &'static [Field; 3], identity: Identity) -> AuthSpec {
    AuthSpec {
        kind: AuthKind::ApiKey,
        fields,
        inject: Inject::Basic { user: "email", pass: "token" },
        identity: Some(identity),
        oauth: None,
    }
}

/// The site's host name (`acme.atlassian.net`), the `{site}` of the integration's base URL.
pub(crate) const fn site(label: &'static str, help: &'static str) -> Field {
    Field { name: "site", label, secret: false, required: true, help }
}

/// The account's email, the Basic user name.
pub(crate) const EMAIL: Field = Field {
    name: "email",
    label: "Atlassian account email",
    secret: false,
    required: true,
    help: "The email you log in to Atlassian with",
};

/// An API token from the account's security page, the Basic password.
pub(crate) const fn token(help: &'static str) -> Field {
    Field { name: "token", label: "API token", secret: true, required: true, help }
}
