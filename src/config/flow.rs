//! The outbound-data guard's settings (`WORKBENCH_FLOW`, config.json's `flow`): the mode, the
//! user's trusted addresses, domains and origins, and the upstream MCP servers the user marks as
//! their own or as public. Only the user sets them (the environment workbench starts with, the
//! data directory's config.json); no tool reads or writes them.

use serde::Deserialize;

use super::BadSetting;

/// How the guard treats outbound writes (`WORKBENCH_FLOW`, config.json `flow.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowMode {
    /// The default: a write whose audience is outside the user's side is held for the user's
    /// approval once private data entered the session (or flows into it through a compose
    /// step ref); a grant or a publication is held whatever was read.
    Guard,
    /// Every write whose audience is outside the user's side is held, private data read or not.
    Strict,
    /// No flow checks (the safety policy still applies).
    Off,
}

impl FlowMode {
    pub const ACCEPTED: &'static str = "guard, strict or off";

    pub fn parse(value: &str) -> Option<FlowMode> {
        match value.trim().to_ascii_lowercase().as_str() {
            "guard" | "on" | "" => Some(FlowMode::Guard),
            "strict" => Some(FlowMode::Strict),
            "off" => Some(FlowMode::Off),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FlowMode::Guard => "guard",
            FlowMode::Strict => "strict",
            FlowMode::Off => "off",
        }
    }
}

/// One entry of the user's trusted list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trusted {
    /// A whole address, lower-cased: `bob@partner.example`.
    Email(String),
    /// A whole domain and its subdomains, lower-cased: `partner.example`.
    Domain(String),
    /// An origin (scheme, host, port): `https://hooks.partner.example`.
    Origin(crate::net::Origin),
}

impl std::fmt::Display for Trusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trusted::Email(s) | Trusted::Domain(s) => f.write_str(s),
            Trusted::Origin(o) => write!(f, "{o}"),
        }
    }
}

impl Trusted {
    pub fn parse(entry: &str) -> Result<Trusted, String> {
        let e = entry.trim();
        if e.contains("://") {
            return crate::net::Origin::parse(e).map(Trusted::Origin).map_err(|err| format!("{e:?}: {err}"));
        }
        if e.contains('@') {
            return plugins::flow::mail_address(e)
                .map(Trusted::Email)
                .ok_or_else(|| format!("{e:?} is not one plain mail address"));
        }
        let d = e.trim_end_matches('.').to_ascii_lowercase();
        let label_ok = |l: &str| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if d.contains('.') && d.split('.').all(label_ok) {
            if plugins::flow::is_public_mail_domain(&d) {
                return Err(format!(
                    "{e:?} is a public mail provider (anyone can get an address there); list the exact addresses instead"
                ));
            }
            Ok(Trusted::Domain(d))
        } else {
            Err(format!("{e:?} is neither an address, a domain nor an origin like https://host"))
        }
    }
}

/// The guard's settings, parsed once at start-up.
#[derive(Debug, Clone)]
pub struct FlowSettings {
    /// The mode; a value that did not parse is kept as its error and the guard runs `strict`
    /// (a bad setting never fails open), and `workbench doctor` reports it.
    pub mode: Result<FlowMode, BadSetting>,
    /// Addresses, domains and origins the user counts as their own side.
    pub trusted: Vec<Trusted>,
    /// Upstream MCP servers whose tools' audience is the user's own side (their operator is the
    /// user): calls to them are not outbound.
    pub own_servers: Vec<String>,
    /// Upstream MCP servers whose tools' results are public (no private data comes back).
    pub public_servers: Vec<String>,
}

impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings {
            mode: Ok(FlowMode::Guard),
            trusted: Vec::new(),
            own_servers: Vec::new(),
            public_servers: Vec::new(),
        }
    }
}

impl FlowSettings {
    /// The mode in force: a bad value counts as `strict`.
    pub fn mode(&self) -> FlowMode {
        self.mode.clone().unwrap_or(FlowMode::Strict)
    }
}

/// config.json's `flow` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FlowFile {
    mode: Option<String>,
    trusted: Vec<String>,
    own_servers: Vec<String>,
    public_servers: Vec<String>,
}

/// `WORKBENCH_FLOW` wins over config.json's `flow.mode`; a trusted entry that does not parse is
/// an error of the file (the user sees it at start-up), not a silent skip.
pub(super) fn parse(env: Option<&str>, file: FlowFile) -> Result<FlowSettings, String> {
    let mode = match (env.filter(|v| !v.trim().is_empty()), file.mode.as_deref()) {
        (Some(v), _) => FlowMode::parse(v).ok_or_else(|| BadSetting {
            source: "WORKBENCH_FLOW".into(),
            value: v.to_string(),
            accepted: FlowMode::ACCEPTED,
        }),
        (None, Some(v)) => FlowMode::parse(v).ok_or_else(|| BadSetting {
            source: "config.json flow.mode".into(),
            value: v.to_string(),
            accepted: FlowMode::ACCEPTED,
        }),
        (None, None) => Ok(FlowMode::Guard),
    };
    let trusted = file
        .trusted
        .iter()
        .map(|t| Trusted::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("flow.trusted: {e}"))?;
    Ok(FlowSettings { mode, trusted, own_servers: file.own_servers, public_servers: file.public_servers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_entries_parse_strictly() {
        assert_eq!(Trusted::parse("Bob@Partner.Example").unwrap(), Trusted::Email("bob@partner.example".into()));
        assert_eq!(Trusted::parse("partner.example").unwrap(), Trusted::Domain("partner.example".into()));
        assert!(matches!(Trusted::parse("https://hooks.partner.example").unwrap(), Trusted::Origin(_)));
        assert!(Trusted::parse("gmail.com").is_err());
        assert!(Trusted::parse("a@x.example, m@evil.example").is_err());
        assert!(Trusted::parse("localhost").is_err());
    }

    #[test]
    fn a_bad_mode_fails_closed() {
        let s = parse(Some("yes"), FlowFile::default()).unwrap();
        assert!(s.mode.is_err());
        assert_eq!(s.mode(), FlowMode::Strict);
        assert_eq!(parse(None, FlowFile::default()).unwrap().mode(), FlowMode::Guard);
        let file = FlowFile { mode: Some("off".into()), ..Default::default() };
        assert_eq!(parse(Some("strict"), file).unwrap().mode(), FlowMode::Strict);
    }
}
