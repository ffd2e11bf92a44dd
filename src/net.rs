//! The address guard of every request workbench sends: which URLs and addresses a request may reach.
//!
//! Three layers, each with an error that names what was refused and why:
//! 1. the URL as written ([`check_url`]): http(s) only, no user info, no odd IP spellings
//!    (`http://2130706433/`, `0x7f.1`, `017700000001`), no cloud-metadata or `.internal` names;
//! 2. an IP literal's address ([`check_ip`]): only globally reachable unicast addresses;
//! 3. a host name's addresses, checked inside the HTTP client's own resolver ([`GuardedResolver`]):
//!    the addresses the client connects to are exactly the ones that were checked, from one lookup,
//!    so a DNS answer that changes between a check and the connection (rebinding) cannot get through.
//!
//! A [`Guard`] says what one request may reach beyond public addresses: an origin the *user*
//! configured (an integration's host override, a host field typed on the connect page, or an entry
//! of `private_hosts`) may be private or loopback, and is then sent with the [`Reach::Private`]
//! client, whose resolver does not refuse its addresses. workbench's own listener port on a
//! loopback or unspecified address is never reachable, configured or not. A definition the agent
//! wrote (a custom app) never widens a guard: only `private_hosts` does.
//!
//! `http_send_request`'s client ([`client`]) follows no redirects (the tool re-checks every hop
//! itself); the engine's clients (`App::client_for`) follow redirects only within the first
//! request's origin. None uses a proxy from the environment (a proxy would resolve names where we
//! cannot check them) or keeps cookies. Tests reach fakes on 127.0.0.1 through
//! `Settings::http_reachable_for_tests` (http_send_request only; exact socket addresses for IP
//! literals that no environment variable or config key can set) or through configured origins.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::OnceLock;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A request the guard will not send, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

fn refuse(message: impl Into<String>) -> Refusal {
    Refusal(message.into())
}

/// Host names of cloud metadata services (they answer with instance credentials).
const METADATA_NAMES: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "metadata.azure.internal",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.ec2.internal",
    "metadata.tencentyun.com",
    "metadata.packet.net",
    "metadata.platformequinix.com",
];

/// An origin: scheme, host (lowercase; an IPv6 address in brackets, as URLs write it) and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl Origin {
    /// The origin a URL reaches (http and https only).
    pub fn of(url: &Url) -> Option<Origin> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        Some(Origin {
            scheme: scheme.to_string(),
            host: url.host_str()?.trim_end_matches('.').to_ascii_lowercase(),
            port: url.port_or_known_default()?,
        })
    }

    /// An origin as the user writes it in configuration: `http://10.0.0.5:8080`,
    /// `https://wiki.corp` (the scheme's default port), nothing after the port but `/`.
    pub fn parse(raw: &str) -> Result<Origin, OriginError> {
        let raw = raw.trim();
        let lower = raw.to_ascii_lowercase();
        if !lower.starts_with("http://") && !lower.starts_with("https://") {
            return Err(OriginError::NotHttp(raw.to_string()));
        }
        let url = Url::parse(raw).map_err(|source| OriginError::Invalid { raw: raw.to_string(), source })?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(OriginError::UserInfo(raw.to_string()));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(OriginError::Path(raw.to_string()));
        }
        Origin::of(&url).ok_or_else(|| OriginError::NoHost(raw.to_string()))
    }
}

/// Why a configured origin (`private_hosts`) cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum OriginError {
    #[error("'{0}' is not an origin; write it as http://host:port or https://host:port")]
    NotHttp(String),
    #[error("'{raw}' is not a valid origin: {source}")]
    Invalid { raw: String, source: <Url as std::str::FromStr>::Err },
    #[error("'{0}' has a user name or password; write only scheme, host and port")]
    UserInfo(String),
    #[error("'{0}' has a path; write only scheme, host and port (e.g. http://10.0.0.5:8080)")]
    Path(String),
    #[error("'{0}' has no host")]
    NoHost(String),
}

/// Why an address is not a globally reachable unicast address: what it is, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotPublic(std::borrow::Cow<'static, str>);

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// Which of the two kinds of client a request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Public addresses only: host names are resolved and checked by [`GuardedResolver`].
    Public,
    /// An origin the user configured: its addresses may be private or loopback.
    Private,
}

/// The configuration key that lists private origins, named in every refusal that it could lift.
pub const PRIVATE_HOSTS_HELP: &str =
    "list the origin in private_hosts in config.json (or WORKBENCH_PRIVATE_HOSTS, comma-separated) if it is yours";

/// What one request may reach beyond public addresses.
#[derive(Debug, Clone, Copy)]
pub struct Guard<'a> {
    /// Exact socket addresses an IP literal may have although [`check_ip`] refuses them (tests of
    /// http_send_request only; empty in the binary).
    pub reachable: &'a [SocketAddr],
    /// Origins the user listed as reachable although private (`private_hosts`).
    pub private: &'a [Origin],
    /// The URL's origin is the user's own configuration (a host override, a connection's host
    /// field): whatever it resolves to may be reached (but never the listener).
    pub user_origin: bool,
    /// workbench's own listener ports: never reachable on a loopback or unspecified address.
    pub listener_ports: &'a [u16],
    /// Who is asking, for the refusals ("http_send_request", "workbench").
    pub who: &'a str,
}

impl Guard<'_> {
    /// The guard of `http_send_request`: public addresses and the test allowance only.
    pub fn public<'a>(reachable: &'a [SocketAddr], listener_ports: &'a [u16]) -> Guard<'a> {
        Guard { reachable, private: &[], user_origin: false, listener_ports, who: "http_send_request" }
    }
}

/// Checks a URL as written and returns it parsed, with the client it needs.
pub fn check_url(raw: &str, guard: &Guard<'_>) -> Result<(Url, Reach), Refusal> {
    if raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(refuse(format!("the URL '{}' contains spaces or control characters", raw.escape_debug())));
    }
    let lower = raw.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("http://").or_else(|| lower.strip_prefix("https://")) else {
        let scheme = raw.split_once(':').map(|(s, _)| s).filter(|s| !s.is_empty() && !s.contains('/'));
        return Err(match scheme {
            Some(s) if !s.eq_ignore_ascii_case("http") && !s.eq_ignore_ascii_case("https") => {
                refuse(format!("the scheme '{s}:' is refused; only http:// and https:// URLs can be fetched"))
            }
            _ => refuse(format!("'{raw}' is not an absolute URL; write it as https://host/path")),
        });
    };
    let authority = &rest[..rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len())];
    if authority.is_empty() {
        return Err(refuse(format!("'{raw}' has no host after '//'")));
    }
    if authority.contains('@') {
        return Err(refuse(format!(
            "user names and passwords in URLs are refused ('{raw}'); {} sends no credentials in URLs",
            guard.who
        )));
    }
    let url = Url::parse(raw).map_err(|e| refuse(format!("'{raw}' is not a valid URL: {e}")))?;
    let written_host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    let reach = check_parsed(&url, Some(written_host), guard)?;
    Ok((url, reach))
}

/// Checks an already parsed URL (a redirect target relative to a checked one, a URL workbench
/// built). `written_host` is the host as the user wrote it, when known, to catch IP spellings the
/// parser normalises.
pub fn check_parsed(url: &Url, written_host: Option<&str>, guard: &Guard<'_>) -> Result<Reach, Refusal> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(refuse(format!(
            "the scheme '{scheme}:' is refused; only http:// and https:// URLs can be fetched"
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse(format!(
            "user names and passwords in URLs are refused ('{url}'); {} sends no credentials in URLs",
            guard.who
        )));
    }
    let Some(origin) = Origin::of(url) else { return Err(refuse(format!("'{url}' has no host"))) };
    let port = origin.port;
    let configured = guard.user_origin || guard.private.contains(&origin);
    let listener = guard.listener_ports.contains(&port);
    let own_listener = || {
        refuse(format!(
            "{origin} would reach workbench's own listener (port {port}), which no request of workbench may reach"
        ))
    };
    let host = origin.host.as_str();
    let literal = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => Some(IpAddr::V6(v6.parse().map_err(|_| refuse(format!("'{host}' is not an IPv6 address")))?)),
        // The URL parser turns every IPv4 spelling into dotted decimal; a domain never parses as one.
        None => match host.parse::<Ipv4Addr>() {
            Ok(ip) => {
                if let Some(written) = written_host
                    && written != ip.to_string()
                {
                    return Err(refuse(format!(
                        "the host '{written}' is an unusual spelling of the IP address {ip} (decimal, octal, hex or shortened forms are refused); write addresses as four decimal numbers"
                    )));
                }
                Some(IpAddr::V4(ip))
            }
            Err(_) => None,
        },
    };
    match literal {
        Some(ip) => {
            if listener && check_ip(ip).is_err() {
                return Err(own_listener());
            }
            if configured || guard.reachable.contains(&SocketAddr::new(ip, port)) {
                return Ok(Reach::Private);
            }
            check_ip(ip).map_err(|why| refuse(format!("{ip} is {why}; {}", only_public(guard, &origin))))?;
            Ok(Reach::Public)
        }
        None => {
            // A configured name may resolve to loopback, where the listener is; so may any
            // `localhost`. Public names are resolved by the checking resolver, which refuses loopback.
            let loopback_name = host == "localhost" || host.ends_with(".localhost");
            if listener && (configured || loopback_name) {
                return Err(own_listener());
            }
            if configured {
                return Ok(Reach::Private);
            }
            check_name(host).map_err(|r| refuse(format!("{}; {}", r.0, only_public(guard, &origin))))?;
            Ok(Reach::Public)
        }
    }
}

fn only_public(guard: &Guard<'_>, origin: &Origin) -> String {
    if guard.who == "http_send_request" {
        "http_send_request only reaches public addresses".to_string()
    } else {
        format!("{} only reaches public addresses unless the user allows {origin}: {PRIVATE_HOSTS_HELP}", guard.who)
    }
}

/// Refuses host names of metadata services and of private-use domains, before any lookup.
pub fn check_name(name: &str) -> Result<(), Refusal> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if METADATA_NAMES.contains(&name.as_str()) {
        return Err(refuse(format!(
            "'{name}' is a cloud metadata service, which hands out machine credentials; it is never fetched"
        )));
    }
    if name == "internal" || name.ends_with(".internal") {
        return Err(refuse(format!("'{name}' is in the private-use .internal domain")));
    }
    Ok(())
}

/// Why an address is refused, or `Ok` when it is a globally reachable unicast address.
pub fn check_ip(ip: IpAddr) -> Result<(), NotPublic> {
    match ip {
        IpAddr::V4(v4) => check_v4(v4).map_err(|why| NotPublic(why.into())),
        IpAddr::V6(v6) => check_v6(v6).map_err(NotPublic),
    }
}

fn check_v4(ip: Ipv4Addr) -> Result<(), &'static str> {
    let [a, b, c, d] = ip.octets();
    let why = match (a, b, c, d) {
        (0, ..) => "an unspecified address (0.0.0.0/8, 'this network')",
        (127, ..) => "a loopback address (127.0.0.0/8)",
        (10, ..) => "a private address (RFC 1918, 10.0.0.0/8)",
        (172, 16..=31, ..) => "a private address (RFC 1918, 172.16.0.0/12)",
        (192, 168, ..) => "a private address (RFC 1918, 192.168.0.0/16)",
        (100, 64..=127, ..) => "a carrier-grade NAT address (100.64.0.0/10), which is not public",
        (169, 254, 169, 254) => "the cloud metadata service (169.254.169.254), which hands out machine credentials",
        (169, 254, ..) => "a link-local address (169.254.0.0/16)",
        (192, 0, 0, _) => "an IETF protocol assignment (192.0.0.0/24)",
        (192, 0, 2, _) | (198, 51, 100, _) | (203, 0, 113, _) => "a documentation address (TEST-NET)",
        (198, 18..=19, ..) => "a benchmarking address (198.18.0.0/15)",
        (192, 88, 99, _) => "a 6to4 relay anycast address (192.88.99.0/24)",
        (224..=239, ..) => "a multicast address (224.0.0.0/4)",
        (255, 255, 255, 255) => "the broadcast address",
        (240..=255, ..) => "a reserved address (240.0.0.0/4)",
        _ => return Ok(()),
    };
    Err(why)
}

fn check_v6(ip: Ipv6Addr) -> Result<(), std::borrow::Cow<'static, str>> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    let via = |kind: &str, v4: Ipv4Addr| check_v4(v4).map_err(|why| format!("{kind} of {v4}, which is {why}").into());
    if ip.is_unspecified() {
        return Err("the unspecified address (::)".into());
    }
    if ip.is_loopback() {
        return Err("the loopback address (::1)".into());
    }
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => return via("an IPv4-mapped form", embedded(hi, lo)),
        [0, 0, 0, 0, 0, 0, hi, lo] => {
            return Err(format!(
                "an IPv4-compatible form of {} (::/96, deprecated and never routed)",
                embedded(hi, lo)
            )
            .into());
        }
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => return via("an IPv4-translated form", embedded(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return via("a NAT64 form", embedded(hi, lo)),
        [0x2002, hi, lo, ..] => return via("a 6to4 address", embedded(hi, lo)),
        _ => {}
    }
    let why = match s[0] {
        0x64 if s[1] == 0xff9b && s[2] == 1 => "a local-use NAT64 address (64:ff9b:1::/48)",
        0x100 if s[1..4] == [0, 0, 0] => "a discard-only address (100::/64)",
        0x2001 if s[1] == 0xdb8 => "a documentation address (2001:db8::/32)",
        0x2001 if s[1] < 0x200 => "an IETF special-purpose address (2001::/23, incl. Teredo)",
        0x3fff if s[1] < 0x1000 => "a documentation address (3fff::/20)",
        x if x & 0xfe00 == 0xfc00 => "a unique local address (fc00::/7, private IPv6)",
        x if x & 0xffc0 == 0xfe80 => "a link-local address (fe80::/10)",
        x if x & 0xffc0 == 0xfec0 => "a site-local address (fec0::/10)",
        x if x & 0xff00 == 0xff00 => "a multicast address (ff00::/8)",
        x if x & 0xe000 != 0x2000 => "outside the global unicast range (2000::/3)",
        _ => return Ok(()),
    };
    Err(why.into())
}

/// The HTTP client's resolver: one system lookup, every address checked, only checked addresses
/// handed to the connector. A name with any refused address is refused as a whole (a name that
/// resolves to a public and a private address is the shape of a rebinding attempt).
#[derive(Debug, Default, Clone, Copy)]
pub struct GuardedResolver;

impl GuardedResolver {
    pub async fn lookup(name: &str) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        check_name(name)?;
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, 0)).await?.collect();
        if addrs.is_empty() {
            return Err(Box::new(refuse(format!("'{name}' has no address"))));
        }
        for a in &addrs {
            if let Err(why) = check_ip(a.ip()) {
                return Err(Box::new(refuse(format!(
                    "'{name}' resolves to {}, {why}; only public addresses are reached",
                    a.ip()
                ))));
            }
        }
        Ok(addrs)
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_string();
        Box::pin(async move {
            let addrs = GuardedResolver::lookup(&name).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// The guard's refusal inside a client error, if that is why the request failed.
pub fn refusal_in(e: &(dyn std::error::Error + 'static)) -> Option<Refusal> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refusal>() {
            return Some(r.clone());
        }
        cur = err.source();
    }
    None
}

/// A response's body read within `max` bytes, the announced length checked first: `None` when it
/// is longer, and no more of it is read (a body without a length, chunked, is counted as it
/// comes: `bytes()` or `json()` would hold all of it first).
pub async fn read_limited(mut response: reqwest::Response, max: usize) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// The client `http_send_request` sends with: guarded resolver, no redirects, no proxy, no cookies.
/// (The engine's clients are built by [`engine_client`], lazily, one per [`Reach`].)
pub fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .user_agent(crate::USER_AGENT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(GuardedResolver)
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .expect("the guarded HTTP client builds")
    })
}

/// An engine client (plugin calls, custom apps, the curl proxy, OAuth, logins): redirects only
/// within the first request's origin (a credential never moves to another one), at most 5, no
/// proxy, no cookies; [`Reach::Public`] resolves through [`GuardedResolver`].
pub fn engine_client(reach: Reach) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder()
        .user_agent(crate::USER_AGENT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .map(|first| {
                    first.scheme() == attempt.url().scheme()
                        && first.host_str() == attempt.url().host_str()
                        && first.port_or_known_default() == attempt.url().port_or_known_default()
                })
                .unwrap_or(false);
            if attempt.previous().len() >= 5 || !same_origin { attempt.stop() } else { attempt.follow() }
        }))
        .no_proxy()
        .connect_timeout(std::time::Duration::from_secs(10));
    let builder = match reach {
        Reach::Public => builder.dns_resolver(GuardedResolver),
        Reach::Private => builder,
    };
    builder.build().expect("the engine's HTTP client builds")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body without a length that never ends (a hostile OAuth metadata or token endpoint):
    /// read up to the bound, then dropped; a short one is read whole.
    #[tokio::test]
    async fn a_body_without_end_is_read_only_to_its_bound() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else { return };
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let n = sock.read(&mut request).await.unwrap_or(0);
                    if String::from_utf8_lossy(&request[..n]).starts_with("GET /short") {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
                            .await;
                        return;
                    }
                    let _ = sock.write_all(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").await;
                    let chunk = format!("100000\r\n{}\r\n", "x".repeat(0x100000));
                    // Up to 4 GiB, until the reader hangs up.
                    for _ in 0..4096 {
                        if sock.write_all(chunk.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let client = engine_client(Reach::Private);
        let endless = client.get(format!("http://{addr}/endless")).send().await.unwrap();
        assert_eq!(read_limited(endless, 256 * 1024).await.unwrap(), None);
        let short = client.get(format!("http://{addr}/short")).send().await.unwrap();
        assert_eq!(read_limited(short, 256 * 1024).await.unwrap(), Some(b"{}".to_vec()));
    }

    fn refused(url: &str) -> String {
        check_url(url, &Guard::public(&[], &[])).expect_err(url).0
    }

    #[test]
    fn schemes_user_info_and_spellings_are_refused_with_reasons() {
        assert!(refused("file:///etc/passwd").contains("scheme 'file:'"));
        assert!(refused("gopher://example.com/").contains("scheme 'gopher:'"));
        assert!(refused("ftp://example.com/").contains("only http:// and https://"));
        assert!(refused("example.com/page").contains("not an absolute URL"));
        assert!(refused("http:example.com").contains("not an absolute URL"));
        assert!(refused("https://user:pw@example.com/").contains("user names and passwords"));
        assert!(refused("https://@example.com/").contains("user names and passwords"));
        assert!(refused("http://example.com/a b").contains("spaces"));
        assert!(refused("http:///etc").contains("no host"));
        for odd in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0x7f000001/",
            "http://017700000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://127.0.0.1./",
            "http://134744072/",
        ] {
            assert!(refused(odd).contains("unusual spelling"), "{odd}: {}", refused(odd));
        }
        assert!(refused("http://127.0.0.%31/").contains("unusual spelling"));
    }

    #[test]
    fn addresses_outside_public_unicast_are_refused() {
        for (ip, why) in [
            ("127.0.0.1", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("10.1.2.3", "RFC 1918"),
            ("172.16.0.1", "RFC 1918"),
            ("172.31.255.255", "RFC 1918"),
            ("192.168.1.1", "RFC 1918"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.100.100.200", "carrier-grade NAT"),
            ("169.254.169.254", "metadata"),
            ("169.254.1.1", "link-local"),
            ("192.0.0.192", "IETF"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("240.0.0.1", "reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1, which is a loopback"),
            ("::ffff:169.254.169.254", "metadata"),
            ("::ffff:10.0.0.1", "RFC 1918"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::ffff:0:7f00:1", "IPv4-translated"),
            ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
            ("2002:7f00:1::", "6to4 address of 127.0.0.1"),
            ("fc00::1", "unique local"),
            ("fd00:ec2::254", "unique local"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("2001:0:4136:e378::1", "Teredo"),
            ("100::1", "discard-only"),
            ("4000::1", "global unicast"),
        ] {
            let addr: IpAddr = ip.parse().unwrap();
            let err = check_ip(addr).expect_err(ip);
            assert!(err.to_string().contains(why), "{ip}: {err}");
        }
        for ok in
            ["93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]
        {
            assert_eq!(check_ip(ok.parse().unwrap()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn literals_in_urls_are_checked_and_the_test_allowance_is_exact() {
        assert!(refused("http://127.0.0.1:8080/").contains("127.0.0.1 is a loopback address"));
        assert!(refused("http://[::1]/").contains("loopback"));
        assert!(refused("http://[::ffff:7f00:1]/").contains("IPv4-mapped"));
        assert!(refused("http://169.254.169.254/latest/meta-data/").contains("metadata"));
        assert!(refused("http://metadata.google.internal/computeMetadata/v1/").contains("cloud metadata"));
        assert!(refused("http://METADATA.google.internal./").contains("cloud metadata"));
        assert!(refused("http://db.corp.internal/").contains(".internal"));
        let fake: SocketAddr = "127.0.0.1:4567".parse().unwrap();
        let reach = |url: &str| check_url(url, &Guard::public(&[fake], &[])).map(|(_, r)| r);
        assert_eq!(reach("http://127.0.0.1:4567/x"), Ok(Reach::Private));
        assert!(reach("http://127.0.0.1:4568/x").is_err());
        assert!(reach("http://127.0.0.2:4567/x").is_err());
        assert_eq!(reach("https://example.com/a?b=c#d"), Ok(Reach::Public));
        assert_eq!(reach("HTTPS://Example.COM:8443/"), Ok(Reach::Public));
    }

    /// Issue 13 item 3: private origins are reachable only when listed exactly (scheme, host and
    /// port), and workbench's own listener port on loopback never is.
    #[test]
    fn private_origins_must_be_listed_exactly_and_the_listener_never_is() {
        let listed =
            vec![Origin::parse("http://127.0.0.1:9000").unwrap(), Origin::parse("http://localhost:7000").unwrap()];
        let guard = Guard {
            reachable: &[],
            private: &listed,
            user_origin: false,
            listener_ports: &[7000, 9100],
            who: "workbench",
        };
        let reach = |url: &str| check_url(url, &guard).map(|(_, r)| r);
        assert_eq!(reach("http://127.0.0.1:9000/api"), Ok(Reach::Private));
        let err = reach("http://127.0.0.1:9001/api").unwrap_err().0;
        assert!(
            err.contains("loopback") && err.contains("private_hosts") && err.contains("http://127.0.0.1:9001"),
            "{err}"
        );
        assert!(reach("https://127.0.0.1:9000/").is_err(), "the scheme is part of the origin");
        assert!(reach("http://10.0.0.1/").unwrap_err().0.contains("RFC 1918"));
        assert!(reach("http://169.254.169.254/").unwrap_err().0.contains("metadata"));
        assert!(reach("http://[::1]:9000/").unwrap_err().0.contains("loopback"));
        assert_eq!(reach("http://localhost:8000/"), Ok(Reach::Public), "names are checked by the resolver");
        assert!(reach("http://localhost:7000/").unwrap_err().0.contains("own listener"), "listed, but the listener");
        assert!(reach("http://127.0.0.1:9100/").unwrap_err().0.contains("own listener"));
        assert!(reach("http://0.0.0.0:9100/").unwrap_err().0.contains("own listener"));
        let user = Guard { user_origin: true, ..guard };
        assert_eq!(check_url("http://127.0.0.1:5555/", &user).map(|(_, r)| r), Ok(Reach::Private));
        assert!(check_url("http://127.0.0.1:9100/", &user).unwrap_err().0.contains("own listener"));
        assert_eq!(Origin::parse("https://api.acme.com").unwrap().to_string(), "https://api.acme.com:443");
        assert_eq!(Origin::parse("HTTP://Host:8080/").unwrap().to_string(), "http://host:8080");
        assert!(Origin::parse("api.acme.com").is_err());
        assert!(Origin::parse("http://h:1/path").is_err());
    }

    #[tokio::test]
    async fn the_resolver_refuses_names_that_resolve_to_refused_addresses() {
        let err = GuardedResolver::lookup("localhost").await.unwrap_err();
        assert!(err.to_string().contains("'localhost' resolves to 127.0.0.1, a loopback address"), "{err}");
        let err = GuardedResolver::lookup("metadata.google.internal").await.unwrap_err();
        assert!(err.to_string().contains("cloud metadata"), "{err}");
    }
}
