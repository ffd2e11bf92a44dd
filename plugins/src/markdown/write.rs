//! The one Markdown writer: the pieces the converters use to write Markdown from Jira ADF,
//! Confluence storage XHTML and Notion blocks (marks that hug their text, links, headings, code
//! fences, quotes, list items and their indentation, tables), and the escape that keeps text
//! inline when the reader parses it.

/// `text` with every line's block syntax escaped, so that CommonMark reads it as inline content
/// only. Leading spaces become character references (they would open code blocks or continue
/// lists); a leading marker character is backslash-escaped where it would open a block.
pub fn inline_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches([' ', '\t']);
        for c in line[..line.len() - body.len()].chars() {
            out.push_str(if c == '\t' { "&#9;" } else { "&#32;" });
        }
        let bytes = body.as_bytes();
        let first = bytes.first().copied().unwrap_or(b' ');
        let second = bytes.get(1).copied().unwrap_or(b' ');
        let run = bytes.iter().take_while(|&&b| b == first).count();
        let only = |set: &[u8]| bytes.iter().all(|b| set.contains(b) || *b == b' ' || *b == b'\t');
        let escape_first = match first {
            b'#' | b'>' | b'-' | b'+' | b'=' | b'|' | b':' => true,
            b'*' | b'_' => second == b' ' || second == b'\t' || only(&[first]),
            b'`' | b'~' => run >= 3,
            b'[' => body.contains("]:"),
            b'<' => !body.starts_with("<http") && !body.starts_with("<mailto:"),
            _ => false,
        };
        if escape_first {
            out.push('\\');
            out.push_str(body);
            continue;
        }
        // `1.` / `1)` opens an ordered list: escape the delimiter.
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && digits <= 9 && matches!(bytes.get(digits), Some(b'.' | b')')) {
            out.push_str(&body[..digits]);
            out.push('\\');
            out.push_str(&body[digits..]);
            continue;
        }
        out.push_str(body);
    }
    out
}

/// `text` with `mark` applied to its trimmed core: Markdown markers must hug the text, so the
/// surrounding spaces stay outside them. Blank text is returned as it is.
pub fn hug(text: &str, mark: impl FnOnce(&str) -> String) -> String {
    let core = text.trim();
    if core.is_empty() {
        return text.to_string();
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    format!("{lead}{}{trail}", mark(core))
}

/// `text` between two `marker`s (`**`, `*`, `~~`), hugging it.
pub fn wrap(text: &str, marker: &str) -> String {
    hug(text, |core| format!("{marker}{core}{marker}"))
}

/// A link: `<url>` when its label is the URL itself (or empty), `[label](url)` otherwise.
pub fn link(label: &str, url: &str) -> String {
    if label.is_empty() || label == url { format!("<{url}>") } else { format!("[{label}]({url})") }
}

/// An ATX heading of `level` (1-6).
pub fn heading(level: usize, text: &str) -> String {
    format!("{} {text}", "#".repeat(level))
}

/// A fenced code block; text that holds a ``` fence is fenced with `~~~~`.
pub fn fenced(lang: &str, text: &str) -> String {
    let fence = if text.contains("```") { "~~~~" } else { "```" };
    format!("{fence}{lang}\n{text}\n{fence}")
}

/// Every line of `text` quoted (`> `); a blank line becomes a bare `>`.
pub fn quote(text: &str) -> String {
    text.lines().map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") }).collect::<Vec<_>>().join("\n")
}

/// The marker of item `n` of an ordered list (`3. `).
pub fn number(n: u64) -> String {
    format!("{n}. ")
}

/// A list item: its first line after `marker`, the rest indented by `pad` spaces (blank lines
/// stay blank); an empty item is the marker alone.
pub fn item(text: &str, marker: &str, pad: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push_str(marker);
            out.push_str(line);
        } else {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&" ".repeat(pad));
                out.push_str(line);
            }
        }
    }
    if text.is_empty() {
        out.push_str(marker.trim_end());
    }
    out
}

/// A list item's pieces in order, blank ones dropped: a nested list (`true`) follows the text
/// before it directly (a tight list), anything else after a blank line.
pub fn item_body(pieces: impl IntoIterator<Item = (bool, String)>) -> String {
    let mut out = String::new();
    for (nested, md) in pieces.into_iter().filter(|(_, m)| !m.trim().is_empty()) {
        if !out.is_empty() {
            out.push_str(if nested { "\n" } else { "\n\n" });
        }
        out.push_str(&md);
    }
    out
}

/// The label a panel, callout or admonition kind is read as (`**Note:** …`).
pub fn panel_label(kind: &str) -> &'static str {
    match kind {
        "note" => "Note",
        "warning" => "Warning",
        "error" => "Error",
        "success" => "Success",
        "tip" => "Tip",
        _ => "Info",
    }
}

/// A table cell's Markdown on one line: pipes escaped, paragraphs joined by `<br>`.
pub fn cell(md: &str) -> String {
    md.replace('|', "\\|").replace("\n\n", "<br>").replace('\n', " ")
}

/// A GFM table whose first row is the header, at least `min_width` columns wide; short rows are
/// padded with empty cells. No rows (or no columns) is no table.
pub fn table(rows: &[Vec<String>], min_width: usize) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(min_width);
    if rows.is_empty() || width == 0 {
        return String::new();
    }
    let line = |cells: &[String]| {
        let mut padded = cells.to_vec();
        padded.resize(width, String::new());
        format!("| {} |", padded.join(" | "))
    };
    let mut out = vec![line(&rows[0]), format!("|{}", " --- |".repeat(width))];
    out.extend(rows[1..].iter().map(|r| line(r)));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_hug_and_links_collapse() {
        assert_eq!(wrap("  bold ", "**"), "  **bold** ");
        assert_eq!(wrap("  ", "**"), "  ");
        assert_eq!(link("https://x.io", "https://x.io"), "<https://x.io>");
        assert_eq!(link("", "https://x.io"), "<https://x.io>");
        assert_eq!(link("site", "https://x.io"), "[site](https://x.io)");
        assert_eq!(fenced("rust", "a```b"), "~~~~rust\na```b\n~~~~");
        assert_eq!(quote("a\n\nb"), "> a\n>\n> b");
    }

    #[test]
    fn items_indent_and_tables_pad() {
        assert_eq!(item("one\n\ntwo", &number(10), 4), "10. one\n\n    two");
        assert_eq!(item("", "- ", 2), "-");
        assert_eq!(
            item_body([(false, "a".into()), (true, "- b".into()), (false, " ".into()), (false, "c".into())]),
            "a\n- b\n\nc"
        );
        let rows = vec![vec!["h".to_string()], vec!["a".into(), cell("x|y\n\nz")]];
        assert_eq!(table(&rows, 0), "| h |  |\n| --- | --- |\n| a | x\\|y<br>z |");
        assert_eq!(table(&[], 3), "");
    }
}
