//! Rich text crossing the tool boundary: providers send HTML fragments ([`html_to_text`]) and
//! whole pages ([`html_page`], for `http_send_request`), agents read plain text or Markdown.
//! Also the depth guards for JSON documents that converters walk recursively (ADF, Notion blocks).

use serde_json::Value;

/// Whether `value` nests arrays and objects more than `max` levels deep (a scalar is 0, `[1]` is
/// 1). Iterative, so it is safe to ask about any depth.
pub fn nests_deeper_than(value: &Value, max: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(_) | Value::Object(_) if depth + 1 > max => return true,
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Every string held under one of `keys`, anywhere in `value`, in document order; iterative. The
/// degraded reading of a document too deep to convert structurally.
pub fn strings_under(value: &Value, keys: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => {
                let mut children = Vec::new();
                for (k, c) in map {
                    match c {
                        Value::String(s) if keys.contains(&k.as_str()) => out.push(s.clone()),
                        Value::Array(_) | Value::Object(_) => children.push(c),
                        _ => {}
                    }
                }
                stack.extend(children.into_iter().rev());
            }
            _ => {}
        }
    }
    out
}

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

// ------------------------------------------------------------------------------ whole pages

/// An HTML page as readable text.
#[derive(Debug, Default, PartialEq)]
pub struct Page {
    pub title: Option<String>,
    pub text: String,
}

/// Elements whose content is never text a reader sees.
const SKIPPED: &[&str] =
    &["script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas", "select"];
/// Elements that start a new line.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hgroup",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "section",
    "summary",
    "table",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "ul",
    "caption",
    "body",
    "html",
];

/// Turns a link's `href` into the absolute link to show, or `None` to show only its text.
pub type LinkResolver<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Reduces a whole HTML page to its title and text: scripts, styles and comments dropped,
/// entities decoded, whitespace collapsed, one line per block. With `markdown` (a resolver that
/// turns an `href` into the absolute link to show, or `None` to drop it), headings, list items,
/// links and preformatted text are marked up as Markdown. A loop over tags, never a recursion, so
/// any nesting depth is read in one pass.
pub fn html_page(html: &str, markdown: Option<&LinkResolver<'_>>) -> Page {
    let mut page = Page::default();
    let mut out = String::new();
    let lower = html.to_ascii_lowercase();
    let bytes = html.as_bytes();
    let mut pre = 0usize;
    let mut links: Vec<Option<String>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            let end = html[i..].find('<').map_or(html.len(), |n| i + n);
            push_text(&mut out, &decode_entities(&html[i..end]), pre > 0);
            i = end;
            continue;
        }
        if lower[i..].starts_with("<!--") {
            i = lower[i..].find("-->").map_or(html.len(), |n| i + n + 3);
            continue;
        }
        if lower[i..].starts_with("<!") || lower[i..].starts_with("<?") {
            i = lower[i..].find('>').map_or(html.len(), |n| i + n + 1);
            continue;
        }
        let closing = bytes.get(i + 1) == Some(&b'/');
        let name_start = i + 1 + usize::from(closing);
        let name_len = lower[name_start..].bytes().take_while(|b| b.is_ascii_alphanumeric()).count();
        if name_len == 0 || !bytes[name_start].is_ascii_alphabetic() {
            push_text(&mut out, "<", pre > 0);
            i += 1;
            continue;
        }
        let name = &lower[name_start..name_start + name_len];
        let tag_end = tag_end_at(bytes, name_start + name_len);
        let attrs_end = if bytes[tag_end - 1] == b'>' { tag_end - 1 } else { tag_end };
        let attrs = &html[name_start + name_len..attrs_end.max(name_start + name_len)];
        i = tag_end;
        if !closing && (SKIPPED.contains(&name) || name == "title") {
            let close = format!("</{name}");
            let inner_end = lower[i..].find(&close).map_or(html.len(), |n| i + n);
            if name == "title" && page.title.is_none() {
                let title = collapse(&decode_entities(&html[i..inner_end]));
                page.title = (!title.is_empty()).then_some(title);
            }
            i = lower[inner_end..].find('>').map_or(html.len(), |n| inner_end + n + 1);
            continue;
        }
        match (name, closing) {
            ("br", _) => newline(&mut out, 1),
            ("p", _) => newline(&mut out, 2),
            ("h1" | "h2" | "h3" | "h4" | "h5" | "h6", false) => {
                newline(&mut out, 2);
                if markdown.is_some() {
                    let level = usize::from(name.as_bytes()[1] - b'0');
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                }
            }
            ("h1" | "h2" | "h3" | "h4" | "h5" | "h6", true) => newline(&mut out, 2),
            ("li", false) => {
                newline(&mut out, 1);
                out.push_str("- ");
            }
            ("li", true) => newline(&mut out, 1),
            ("td" | "th", false) if !out.ends_with('\n') && !out.is_empty() => out.push_str(" | "),
            ("pre", false) => {
                newline(&mut out, 2);
                if markdown.is_some() {
                    out.push_str("```\n");
                }
                pre += 1;
            }
            ("pre", true) => {
                pre = pre.saturating_sub(1);
                if markdown.is_some() {
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str("```");
                }
                newline(&mut out, 2);
            }
            ("a", false) if markdown.is_some() => {
                let href = attribute_value(attrs, "href").and_then(|h| markdown?(decode_entities(&h).trim()));
                if href.is_some() {
                    push_text(&mut out, "[", false);
                }
                links.push(href);
            }
            ("a", true) if markdown.is_some() => {
                if let Some(Some(href)) = links.pop() {
                    while out.ends_with(' ') {
                        out.pop();
                    }
                    out.push_str(&format!("]({href})"));
                }
            }
            ("img", _) if markdown.is_some() => {
                if let Some(alt) =
                    attribute_value(attrs, "alt").map(|a| collapse(&decode_entities(&a))).filter(|a| !a.is_empty())
                {
                    push_text(&mut out, &format!("[image: {alt}]"), false);
                }
            }
            (n, _) if BLOCKS.contains(&n) => newline(&mut out, 1),
            _ => {}
        }
    }
    page.text = tidy(&out);
    page
}

/// Index just past the `>` that ends a tag whose name ends at `from`, skipping quoted attributes.
fn tag_end_at(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    let mut j = from;
    while j < bytes.len() {
        match (quote, bytes[j]) {
            (None, b'"' | b'\'') => quote = Some(bytes[j]),
            (Some(q), b) if b == q => quote = None,
            (None, b'>') => return j + 1,
            _ => {}
        }
        j += 1;
    }
    bytes.len()
}

/// The value of one attribute in a tag's attribute text.
fn attribute_value(attrs: &str, name: &str) -> Option<String> {
    let lower = attrs.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = lower[from..].find(name).map(|p| p + from) {
        let before_ok = pos == 0 || lower.as_bytes()[pos - 1].is_ascii_whitespace();
        let rest = lower[pos + name.len()..].trim_start();
        if before_ok && rest.starts_with('=') {
            let value_start = attrs.len() - rest.len() + 1;
            let value = attrs[value_start..].trim_start();
            return Some(match value.chars().next() {
                Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or("").to_string(),
                _ => value.split(|c: char| c.is_whitespace() || c == '>').next().unwrap_or("").to_string(),
            });
        }
        from = pos + name.len();
    }
    None
}

fn push_text(out: &mut String, text: &str, pre: bool) {
    if pre {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        if c.is_whitespace() {
            if !out.is_empty() && !out.ends_with([' ', '\n', '[']) {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
}

fn newline(out: &mut String, n: usize) {
    while out.ends_with(' ') {
        out.pop();
    }
    if out.is_empty() {
        return;
    }
    let have = out.len() - out.trim_end_matches('\n').len();
    for _ in have..n {
        out.push('\n');
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Trailing spaces off every line, at most one blank line in a row, no blank start or end.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
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

    /// HTML from a service nested 100,000 levels deep: the reader is a loop, not a recursion, so
    /// it finishes with the text.
    #[test]
    fn deeply_nested_html_is_read_in_one_pass() {
        let n = 100_000;
        for tag in ["div", "a href='https://e.io'", "p", "li", "b"] {
            let name = tag.split(' ').next().unwrap();
            let html = format!("{}deep{}after", format!("<{tag}>").repeat(n), format!("</{name}>").repeat(n));
            let text = html_to_text(&html);
            assert!(text.contains("deep") && text.ends_with("after"), "{tag}");
        }
    }

    /// The depth guard and the degraded reading work at any depth without recursion.
    #[test]
    fn depth_guard_and_strings_under_are_iterative() {
        let mut v = serde_json::json!({"text": "leaf"});
        for i in 0..100_000 {
            let mut parent = serde_json::json!({"type": "x", "text": format!("t{i}")});
            parent["content"] = serde_json::Value::Array(vec![v]);
            v = parent;
        }
        assert!(nests_deeper_than(&v, 128));
        assert!(!nests_deeper_than(&serde_json::json!([[1]]), 2));
        assert!(nests_deeper_than(&serde_json::json!([[1]]), 1));
        let texts = strings_under(&v, &["text"]);
        assert_eq!(texts.len(), 100_001);
        assert_eq!(texts[0], "t99999");
        assert_eq!(texts[100_000], "leaf");
        dismantle(v);
    }

    /// Drops a deep test value without serde_json's recursive drop.
    fn dismantle(value: serde_json::Value) {
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::Array(items) => stack.extend(items),
                serde_json::Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    /// A page's links go through the caller's resolver, which may drop them.
    #[test]
    fn page_links_use_the_resolver() {
        let html = "<title>T</title><p>see <a href='/a'>one</a> and <a href='javascript:x'>two</a></p>";
        let resolve = |h: &str| h.starts_with('/').then(|| format!("https://e.io{h}"));
        let page = html_page(html, Some(&resolve));
        assert_eq!(page.title.as_deref(), Some("T"));
        assert_eq!(page.text, "see [one](https://e.io/a) and two");
        assert_eq!(html_page(html, None).text, "see one and two");
    }

    #[test]
    fn entities_and_broken_markup_do_not_panic() {
        assert_eq!(decode_entities("a &unknown; b &#9731; &"), "a &unknown; b ☃ &");
        assert_eq!(html_to_text("<span class=\"searchmatch\">Rust</span> is"), "Rust is");
        assert_eq!(html_to_text("x < y and <b"), "x < y and <b");
    }
}
