//! Rich text crossing the tool boundary: providers send HTML fragments, agents read plain text.

/// Reduces an HTML fragment to readable plain text: paragraphs and line breaks become newlines,
/// links keep their target, tags are dropped, entities decoded, whitespace folded.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    let mut pending_href: Option<(String, usize)> = None;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        let Some(gt) = rest[lt..].find('>') else {
            out.push_str(&decode_entities(&rest[lt..]));
            rest = "";
            break;
        };
        let tag = &rest[lt + 1..lt + gt];
        let lower = tag.trim().to_ascii_lowercase();
        let name = lower.trim_start_matches('/').split([' ', '/', '\t', '\n']).next().unwrap_or("");
        match name {
            "p" | "br" | "div" | "li" | "tr" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "pre" => {
                if !lower.starts_with('/') || name != "br" {
                    out.push('\n');
                }
                if name == "li" && !lower.starts_with('/') {
                    out.push_str("- ");
                }
            }
            "a" if !lower.starts_with('/') => pending_href = attribute(tag, "href").map(|h| (h, out.len())),
            "a" => {
                if let Some((href, start)) = pending_href.take() {
                    // Keep the target only when the link text does not already show it.
                    let text = out.get(start..).unwrap_or_default().trim().to_string();
                    if !text.is_empty() && !href.contains(&text) {
                        out.push_str(&format!(" ({href})"));
                    }
                }
            }
            _ => {}
        }
        rest = &rest[lt + gt + 1..];
    }
    out.push_str(&decode_entities(rest));
    fold_whitespace(&out)
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(&format!("{name}="))? + name.len() + 1;
    let value = &tag[at..];
    let (quote, body) = match value.chars().next()? {
        q @ ('"' | '\'') => (q, &value[1..]),
        _ => (' ', value),
    };
    let end = body.find(quote).unwrap_or(body.len());
    Some(decode_entities(&body[..end]))
}

/// Decodes character references: numeric ones and the named ones real pages use most.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '#')).map(|n| n + 1);
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = if let Some(num) = name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                u32::from_str_radix(num, 16).ok().and_then(char::from_u32)
            } else if let Some(num) = name.strip_prefix('#') {
                num.parse::<u32>().ok().and_then(char::from_u32)
            } else {
                named_entity(name)
            }?;
            let consumed = if rest[end..].starts_with(';') { end + 1 } else { end };
            Some((c, consumed))
        });
        match decoded {
            Some((c, consumed)) => {
                out.push(if c == '\u{a0}' { ' ' } else { c });
                rest = &rest[consumed..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn named_entity(name: &str) -> Option<char> {
    Some(match name {
        "amp" | "AMP" => '&',
        "lt" | "LT" => '<',
        "gt" | "GT" => '>',
        "quot" | "QUOT" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "laquo" => '«',
        "raquo" => '»',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "times" => '×',
        "divide" => '÷',
        "deg" => '°',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "cent" => '¢',
        "sect" => '§',
        "para" => '¶',
        "larr" => '←',
        "rarr" => '→',
        "uarr" => '↑',
        "darr" => '↓',
        "shy" => '\u{ad}',
        "zwj" => '\u{200d}',
        "zwnj" => '\u{200c}',
        _ => return None,
    })
}

fn fold_whitespace(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let folded = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if folded.is_empty() && lines.last().is_some_and(|l| l.is_empty()) {
            continue;
        }
        lines.push(folded);
    }
    lines.join("\n").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hacker_news_comment_html_becomes_text() {
        let html = "It&#x27;s fine.<p>See <a href=\"https:&#x2F;&#x2F;example.com&#x2F;x\" rel=\"nofollow\">https:&#x2F;&#x2F;example.com&#x2F;x</a> &amp; more";
        assert_eq!(html_to_text(html), "It's fine.\nSee https://example.com/x & more");
    }

    #[test]
    fn link_text_differs_from_target() {
        assert_eq!(html_to_text("read <a href='https://a.b'>the docs</a>"), "read the docs (https://a.b)");
    }

    #[test]
    fn entities_and_broken_markup_do_not_panic() {
        assert_eq!(decode_entities("a &unknown; b &#9731; &"), "a &unknown; b ☃ &");
        assert_eq!(html_to_text("<span class=\"searchmatch\">Rust</span> is"), "Rust is");
        assert_eq!(html_to_text("x < y and <b"), "x < y and <b");
    }
}
