//! `application/x-www-form-urlencoded` parsing for the connect pages: bounded, total, no panics.

/// Most fields a form may carry; more is not a form we served.
pub const MAX_FIELDS: usize = 64;

/// Parses a form body into pairs; `None` when it is not a form we could have served (too many
/// fields, invalid UTF-8 after decoding).
pub fn parse(body: &[u8]) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for pair in body.split(|b| *b == b'&') {
        if pair.is_empty() {
            continue;
        }
        if out.len() >= MAX_FIELDS {
            return None;
        }
        let (k, v) = match pair.iter().position(|b| *b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        out.push((decode(k)?, decode(v)?));
    }
    Some(out)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn decode(s: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'+' => out.push(b' '),
            b'%' => match (s.get(i + 1).and_then(|b| hex(*b)), s.get(i + 2).and_then(|b| hex(*b))) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes a value for a query string or form body.
pub fn encode(s: &str) -> String {
    plugins::api::encode_segment(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms_and_rejects_nonsense() {
        assert_eq!(
            parse(b"token=ab%2Bc&site=acme.atlassian.net&email=a+b%40x.io&empty=").unwrap(),
            vec![
                ("token".into(), "ab+c".into()),
                ("site".into(), "acme.atlassian.net".into()),
                ("email".into(), "a b@x.io".into()),
                ("empty".into(), "".into())
            ]
        );
        assert_eq!(parse(b"a=%zz&b=%4").unwrap(), vec![("a".into(), "%zz".into()), ("b".into(), "%4".into())]);
        assert!(parse(b"a=%ff%fe").is_none(), "invalid UTF-8");
        let many: Vec<u8> = (0..100).flat_map(|i| format!("k{i}=v&").into_bytes()).collect();
        assert!(parse(&many).is_none());
        assert_eq!(parse(b"").unwrap(), vec![]);
    }
}
