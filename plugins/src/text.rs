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

/// Decodes the named entities that occur in practice and every numeric entity.
pub fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let decoded = after.find(';').filter(|&semi| semi <= 10).and_then(|semi| {
            let entity = &after[1..semi];
            let ch = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                _ => entity.strip_prefix('#').and_then(|num| {
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => num.parse().ok(),
                    };
                    code.and_then(char::from_u32)
                }),
            };
            ch.map(|c| (c, semi))
        });
        match decoded {
            Some((c, semi)) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
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
