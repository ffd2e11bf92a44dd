//! The outbound-data guard's labels (`shared/design/flows.md`): what a tool's results are
//! (public or private) and, for a write, who will see what it sends (its audience), decided
//! against the user's own side (the connected account's identities, domain, organisations).
//!
//! Labels live in the tool contract ([`crate::api::ToolSpec::results`] and
//! [`crate::api::ToolSpec::audience`]); the side of an account comes from its integration's
//! [`crate::api::Integration::side`] lookup. The engine keeps the session's private-read state,
//! asks the audience function of a write, and holds an outbound write for the user's approval.
//! Plugins only describe; they never decide to hold anything.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{BoxFuture, ToolError, Upstream};

/// What a tool returns, for the guard (flows.md section 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Results {
    /// Anyone can read it: no credential (Hacker News, Wikipedia, weather, time), or a resource
    /// the service always reports as public.
    Public,
    /// Read with the user's credential from a resource that is not public.
    Private,
    /// Depends on the resource: private unless the tool's shaping code calls
    /// [`Upstream::mark_public`] because the service's own answer says the resource is public
    /// (a public repository, a public Slack channel's messages).
    PrivateUnlessPublic,
}

/// Who will see what a write sends (flows.md sections 2 and 3).
#[derive(Clone, Copy)]
pub enum Audience {
    /// Only the user's own side ever sees it (a Jira issue on the user's site, a Notion page in
    /// the workspace, a HubSpot note, a Linear issue, a Todoist task).
    Own,
    /// Always outside: publishing, a send to an address the service does not let workbench
    /// check, an HTTP request to any URL.
    Outside(&'static str),
    /// Decided per call from the validated arguments; may look things up through the
    /// integration's [`Upstream`] (a channel's `is_ext_shared`, a repository's visibility, a
    /// file's owner and permissions).
    Decide(AudienceFn),
}

impl std::fmt::Debug for Audience {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Audience::Own => f.write_str("Own"),
            Audience::Outside(why) => write!(f, "Outside({why:?})"),
            Audience::Decide(_) => f.write_str("Decide(..)"),
        }
    }
}

/// Decides a write's audience: the integration's upstream, the validated arguments, the user's
/// side of the account the call uses.
pub type AudienceFn = fn(Arc<dyn Upstream>, Value, Arc<Side>) -> BoxFuture<Result<Verdict, ToolError>>;

/// Looks up the user's own side of a connected account (its identity call and whatever else the
/// service reports: the organisations of a GitHub user, a Slack team id).
pub type SideFn = fn(Arc<dyn Upstream>) -> BoxFuture<Result<Side, ToolError>>;

/// The user's own side as one connected account reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Side {
    /// The user's own addresses (lower-cased): `ann@acme.example`.
    pub emails: Vec<String>,
    /// Whole domains on the user's side (lower-cased, no public mail provider): `acme.example`.
    pub domains: Vec<String>,
    /// Account and organisation ids or logins the service uses (GitHub login and orgs, a Slack
    /// `team_id` and `user_id`), compared case-insensitively.
    pub ids: Vec<String>,
}

impl Side {
    /// Builds a side from the user's own address: the address, and its domain unless it is a
    /// public mail provider's.
    pub fn from_email(email: &str) -> Side {
        let mut side = Side::default();
        side.add_email(email);
        side
    }

    pub fn add_email(&mut self, email: &str) {
        let email = email.trim().to_ascii_lowercase();
        if email.is_empty() {
            return;
        }
        if let Some(domain) = email_domain(&email)
            && !is_public_mail_domain(domain)
            && !self.domains.iter().any(|d| d == domain)
        {
            self.domains.push(domain.to_string());
        }
        if !self.emails.contains(&email) {
            self.emails.push(email);
        }
    }

    pub fn add_id(&mut self, id: &str) {
        let id = id.trim();
        if !id.is_empty() && !self.ids.iter().any(|x| x.eq_ignore_ascii_case(id)) {
            self.ids.push(id.to_string());
        }
    }

    /// Whether an email address is on the user's side: one of the user's own addresses, or an
    /// address at one of the user's domains (whole labels: `eu.acme.example` is inside,
    /// `acme.example.evil.example` and `evil-acme.example` are not). Anything that is not exactly
    /// one plain address (a comma-separated list, two `@`, a quoted local part, a display name
    /// without angle brackets) is not on the user's side.
    pub fn has_email(&self, address: &str) -> bool {
        let Some(address) = mail_address(address) else { return false };
        if self.emails.contains(&address) {
            return true;
        }
        email_domain(&address).is_some_and(|d| self.has_domain(d))
    }

    /// Whether a domain is one of the user's, matched on label boundaries.
    pub fn has_domain(&self, domain: &str) -> bool {
        let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
        self.domains.iter().any(|own| domain_within(&domain, own))
    }

    /// Whether an account or organisation id is the user's.
    pub fn has_id(&self, id: &str) -> bool {
        self.ids.iter().any(|x| x.eq_ignore_ascii_case(id.trim()))
    }

    /// Everything of `other` added to this side.
    pub fn merge(&mut self, other: &Side) {
        for e in &other.emails {
            self.add_email(e);
        }
        for d in &other.domains {
            let d = d.to_ascii_lowercase();
            if !self.domains.contains(&d) {
                self.domains.push(d);
            }
        }
        for id in &other.ids {
            self.add_id(id);
        }
    }
}

/// One party outside the user's side, as the question to the user names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Party {
    /// A mail address (a recipient, a guest, a Drive grantee).
    Email(String),
    /// A whole domain (a Drive `domain` permission).
    Domain(String),
    /// An origin or URL (`https://collector.example`).
    Url(String),
    /// Anyone at all (a public repository, an `anyone` permission, a public page).
    Anyone(String),
    /// Something else the service names (a Slack Connect channel `C123 (shared with another
    /// organisation)`, a repository `mallory/loot`).
    Named(String),
}

impl std::fmt::Display for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Party::Email(s) | Party::Domain(s) | Party::Url(s) | Party::Anyone(s) | Party::Named(s) => f.write_str(s),
        }
    }
}

/// A write's audience for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Everyone who will see it is on the user's side.
    Inside,
    /// Someone outside will see it.
    Outside {
        /// Who, in words the user recognises.
        parties: Vec<Party>,
        /// The write grants access to or publishes a whole resource (a Drive permission for
        /// `anyone`, making a repository public, an outside collaborator, a guest added to an
        /// event with private notes): it sends everything behind it, so it is held whatever the
        /// session read before.
        grants: bool,
    },
}

impl Verdict {
    pub fn outside(party: Party) -> Verdict {
        Verdict::Outside { parties: vec![party], grants: false }
    }

    pub fn grant(party: Party) -> Verdict {
        Verdict::Outside { parties: vec![party], grants: true }
    }

    /// The verdict for a list of mail addresses: inside when every one is on the user's side
    /// (an entry that is not exactly one address counts as outside, named as it was given).
    pub fn for_emails<'a>(side: &Side, addresses: impl IntoIterator<Item = &'a str>) -> Verdict {
        let outside: Vec<Party> = addresses
            .into_iter()
            .filter(|a| !a.trim().is_empty() && !side.has_email(a))
            .map(|a| Party::Email(mail_address(a).unwrap_or_else(|| a.trim().to_string())))
            .collect();
        if outside.is_empty() { Verdict::Inside } else { Verdict::Outside { parties: outside, grants: false } }
    }

    /// Both verdicts together: outside if either is, with both lists of parties.
    pub fn and(self, other: Verdict) -> Verdict {
        match (self, other) {
            (Verdict::Inside, v) | (v, Verdict::Inside) => v,
            (Verdict::Outside { parties: mut a, grants: ga }, Verdict::Outside { parties: b, grants: gb }) => {
                for p in b {
                    if !a.contains(&p) {
                        a.push(p);
                    }
                }
                Verdict::Outside { parties: a, grants: ga || gb }
            }
        }
    }
}

/// An audience function's answer that needed no lookup.
pub fn ready(verdict: Result<Verdict, ToolError>) -> BoxFuture<Result<Verdict, ToolError>> {
    Box::pin(std::future::ready(verdict))
}

/// The strings an argument holds: one string, or each string of a list (anything else in a list
/// as its JSON text); nothing when the argument is absent or null.
pub fn arg_strings(args: &Value, name: &str) -> Vec<String> {
    match args.get(name) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => {
            items.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).collect()
        }
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other.to_string()],
    }
}

/// A string argument, trimmed; `None` when absent, null, blank or not a string.
pub fn arg_str<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// The error of a lookup whose answer did not say what the guard needs (the engine counts the
/// write as outside).
pub fn undecided(what: impl std::fmt::Display) -> ToolError {
    ToolError::Internal(format!("could not tell who will see this write: {what}"))
}

/// The user's side from one identity answer: the addresses at the JSON Pointers `emails` and the
/// ids at `ids` (strings or numbers). An answer that names none of them is an error: a side is
/// never guessed.
pub fn side_from(body: &Value, emails: &[&str], ids: &[&str]) -> Result<Side, ToolError> {
    let mut side = Side::default();
    for p in emails {
        if let Some(e) = body.pointer(p).and_then(Value::as_str).filter(|e| e.contains('@')) {
            side.add_email(e);
        }
    }
    for p in ids {
        match body.pointer(p) {
            Some(Value::String(s)) => side.add_id(s),
            Some(Value::Number(n)) => side.add_id(&n.to_string()),
            _ => {}
        }
    }
    if side.emails.is_empty() && side.ids.is_empty() {
        return Err(undecided("the account's identity answer named no user"));
    }
    Ok(side)
}

/// The address part of `Ann <ann@acme.example>`, lower-cased and trimmed.
pub fn bare_address(address: &str) -> String {
    let a = address.trim();
    let a = match (a.rfind('<'), a.rfind('>')) {
        (Some(l), Some(r)) if l < r => &a[l + 1..r],
        _ => a,
    };
    a.trim().trim_matches(|c| c == '"' || c == '\'').to_ascii_lowercase()
}

/// The one address a recipient string names, lower-cased, or `None` when it is not exactly one
/// plain address: `ann@acme.example`, `Ann <ann@acme.example>` and `"ceo@acme.example"
/// <m@evil.example>` (that one is `m@evil.example`, the address mail goes to) parse;
/// `a@acme.example, m@evil.example`, `m@evil.example@acme.example`, `"a@acme.example"@evil.example`
/// and anything with spaces, quotes, brackets or control characters in the address do not. The
/// shapes accepted are those Gmail's MIME builder accepts (a name, then `<address>` at the end).
pub fn mail_address(recipient: &str) -> Option<String> {
    let r = recipient.trim();
    let email = match (r.rfind('<'), r.ends_with('>')) {
        (Some(lt), true) => &r[lt + 1..r.len() - 1],
        (None, false) => r,
        _ => return None,
    };
    let email = email.trim().to_ascii_lowercase();
    let (local, domain) = email.split_once('@')?;
    let plain = |c: char| !c.is_control() && !c.is_whitespace() && !"@\"(),:;<>[]\\".contains(c);
    let domain_ok = domain.contains('.')
        && domain.split('.').all(|l| !l.is_empty() && l.chars().all(|c| c.is_alphanumeric() || c == '-'));
    (!local.is_empty() && local.chars().all(plain) && domain_ok).then_some(email)
}

/// The domain of an address (after the last `@`), if any.
pub fn email_domain(address: &str) -> Option<&str> {
    address.rsplit_once('@').map(|(_, d)| d.trim_end_matches('.')).filter(|d| !d.is_empty())
}

/// Whether `domain` is `own` or a subdomain of it, on label boundaries.
pub fn domain_within(domain: &str, own: &str) -> bool {
    let own = own.trim_end_matches('.');
    !own.is_empty()
        && (domain.eq_ignore_ascii_case(own) || {
            let d = domain.to_ascii_lowercase();
            let o = own.to_ascii_lowercase();
            d.len() > o.len() && d.ends_with(&o) && d.as_bytes()[d.len() - o.len() - 1] == b'.'
        })
}

/// Mail providers anyone can get an address at: they give the user no domain of their own.
pub const PUBLIC_MAIL_DOMAINS: &[&str] = &[
    "gmail.com",
    "googlemail.com",
    "outlook.com",
    "hotmail.com",
    "live.com",
    "msn.com",
    "yahoo.com",
    "ymail.com",
    "icloud.com",
    "me.com",
    "mac.com",
    "aol.com",
    "proton.me",
    "protonmail.com",
    "pm.me",
    "gmx.com",
    "gmx.de",
    "gmx.net",
    "web.de",
    "mail.com",
    "yandex.com",
    "yandex.ru",
    "qq.com",
    "163.com",
    "fastmail.com",
    "zoho.com",
    "tutanota.com",
    "hey.com",
];

/// Whether a domain belongs to a public mail provider (or a subdomain of one).
pub fn is_public_mail_domain(domain: &str) -> bool {
    PUBLIC_MAIL_DOMAINS.iter().any(|p| domain_within(domain, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_match_on_label_boundaries() {
        let side = Side::from_email("Ann@Acme.Example");
        assert!(side.has_email("bob@acme.example"));
        assert!(side.has_email("Bob <BOB@eu.acme.example>"));
        assert!(!side.has_email("bob@acme.example.evil.example"));
        assert!(!side.has_email("bob@evil-acme.example"));
        assert!(!side.has_email("bob@acme-example.com"));
        assert!(!side.has_email("bob@xacme.example"));
    }

    #[test]
    fn public_mail_providers_give_no_domain() {
        let side = Side::from_email("ann@gmail.com");
        assert!(side.domains.is_empty());
        assert!(side.has_email("ann@gmail.com"));
        assert!(!side.has_email("mallory@gmail.com"));
    }

    #[test]
    fn verdicts_combine() {
        let side = Side::from_email("ann@acme.example");
        assert_eq!(Verdict::for_emails(&side, ["bob@acme.example", ""]), Verdict::Inside);
        let v = Verdict::for_emails(&side, ["bob@acme.example", "m@evil.example"])
            .and(Verdict::grant(Party::Anyone("anyone with the link".into())));
        let Verdict::Outside { parties, grants } = v else { panic!("outside expected") };
        assert!(grants);
        assert_eq!(parties.len(), 2);
    }

    #[test]
    fn recipients_parse_only_as_one_plain_address() {
        assert_eq!(mail_address(" Ann <ANN@Acme.Example> ").as_deref(), Some("ann@acme.example"));
        assert_eq!(mail_address("\"ceo@acme.example\" <m@evil.example>").as_deref(), Some("m@evil.example"));
        assert_eq!(mail_address("o'brien@acme.example").as_deref(), Some("o'brien@acme.example"));
        for bad in [
            "a@acme.example, m@evil.example",
            "m@evil.example@acme.example",
            "\"a@acme.example\"@evil.example",
            "a b@acme.example",
            "a@acme.example>",
            "<a@acme.example",
            "a@acme..example",
            "a@localhost",
            "@acme.example",
            "a@acme.example;m@evil.example",
            "a@acme.example\nbcc: m@evil.example",
            "",
        ] {
            assert_eq!(mail_address(bad), None, "{bad:?}");
            assert!(!Side::from_email("ann@acme.example").has_email(bad), "{bad:?}");
        }
        // A list given as one string is outside, named as given.
        let side = Side::from_email("ann@acme.example");
        assert_eq!(
            Verdict::for_emails(&side, ["m@evil.example, bob@acme.example"]),
            Verdict::outside(Party::Email("m@evil.example, bob@acme.example".into()))
        );
    }

    #[test]
    fn sides_come_only_from_what_the_service_names() {
        let body = serde_json::json!({"user": {"email": "Ann@Acme.Example", "id": 42}, "org": "acme"});
        let side = side_from(&body, &["/user/email"], &["/user/id", "/org", "/missing"]).unwrap();
        assert_eq!(
            (side.emails, side.domains, side.ids),
            (
                vec!["ann@acme.example".to_string()],
                vec!["acme.example".to_string()],
                vec!["42".to_string(), "acme".to_string()]
            )
        );
        assert!(side_from(&serde_json::json!({"user": {"email": "not an address"}}), &["/user/email"], &[]).is_err());
        assert!(side_from(&serde_json::Value::Null, &["/email"], &["/id"]).is_err());
    }

    #[test]
    fn arguments_read_as_strings() {
        let args = serde_json::json!({"one": "a", "many": ["b", 3], "none": null, "n": 5});
        assert_eq!(arg_strings(&args, "one"), ["a"]);
        assert_eq!(arg_strings(&args, "many"), ["b", "3"]);
        assert!(arg_strings(&args, "none").is_empty() && arg_strings(&args, "absent").is_empty());
        assert_eq!(arg_strings(&args, "n"), ["5"]);
        assert_eq!(arg_str(&serde_json::json!({"a": "  "}), "a"), None);
    }
}
