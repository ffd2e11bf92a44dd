//! A small Markdown reader for the Atlassian converters: agents write Markdown, Jira wants ADF
//! ([`super::adf`]) and Confluence wants storage XHTML (`crate::confluence::storage`). Both render
//! from the block tree built here, so the two products read Markdown the same way.
//!
//! Supported: paragraphs, ATX headings, fenced code, block quotes, bullet and ordered lists (nested
//! by indentation), thematic breaks, GFM tables; inline strong, emphasis, strike, code spans,
//! links, autolinks (`<https://…>` and bare URLs), hard line breaks and backslash escapes.

/// Inline formatting that applies to a run of text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    pub strong: bool,
    pub em: bool,
    pub strike: bool,
    pub code: bool,
    pub link: Option<String>,
}

/// A run of inline content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String, Marks),
    Break,
}

/// A block of a Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    Code { lang: Option<String>, text: String },
    Quote(Vec<Block>),
    List { ordered: bool, start: u64, items: Vec<Vec<Block>> },
    Rule,
    Table { header: Vec<Vec<Inline>>, rows: Vec<Vec<Vec<Inline>>> },
}

/// Deepest nesting of block quotes and lists read as structure. The block tree is built and
/// rendered recursively, so lines nested deeper are kept as the text of one paragraph at this
/// level: `>` repeated 100,000 times converts (degraded) instead of overflowing the stack.
pub const MAX_DEPTH: usize = 16;
/// Deepest nesting of inline spans (emphasis, links inside link labels); deeper text stays literal.
pub const MAX_INLINE_DEPTH: usize = 16;

/// Parses a Markdown document into blocks.
pub fn parse(markdown: &str) -> Vec<Block> {
    let text = markdown.replace("\r\n", "\n").replace('\r', "\n").replace('\t', "    ");
    let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    parse_blocks(&lines, 0)
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn strip_spaces(line: &str, n: usize) -> String {
    let k = leading_spaces(line).min(n);
    line[k..].to_string()
}

fn heading(trimmed: &str) -> Option<(u8, &str)> {
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    // A closing run of #s is decoration.
    let rest = rest.trim();
    let rest = match rest.trim_end_matches('#') {
        r if r.is_empty() || r.ends_with(' ') => r.trim_end(),
        _ => rest,
    };
    Some((level as u8, rest))
}

fn is_rule(trimmed: &str) -> bool {
    let t: String = trimmed.chars().filter(|c| *c != ' ').collect();
    t.len() >= 3 && (t.bytes().all(|b| b == b'-') || t.bytes().all(|b| b == b'*') || t.bytes().all(|b| b == b'_'))
}

fn fence(trimmed: &str) -> Option<(u8, usize)> {
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|&b| b == first).count();
    (len >= 3).then_some((first, len))
}

struct ListMarker {
    indent: usize,
    ordered: bool,
    number: u64,
    content: usize,
}

fn list_marker(line: &str) -> Option<ListMarker> {
    let indent = leading_spaces(line);
    let rest = &line[indent..];
    let bytes = rest.as_bytes();
    let (ordered, number, marker_len) = match bytes.first()? {
        b'-' | b'*' | b'+' => (false, 0, 1),
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.') | Some(b')')) {
                return None;
            }
            (true, rest[..digits].parse().ok()?, digits + 1)
        }
        _ => return None,
    };
    let after = &rest[marker_len..];
    if !after.is_empty() && !after.starts_with(' ') {
        return None;
    }
    let gap = leading_spaces(after);
    let gap = if after.trim().is_empty() || gap > 4 { 1 } else { gap };
    Some(ListMarker { indent, ordered, number, content: indent + marker_len + gap })
}

fn is_table_separator(line: &str) -> bool {
    let t = line.trim();
    t.contains('-') && t.contains('|') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
        || (t.contains('-') && t.chars().all(|c| matches!(c, '-' | ':')) && t.contains(':'))
}

fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") { &t[..t.len() - 1] } else { t };
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    let mut in_code = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                cur.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    cells.push(cur.trim().to_string());
    cells
}

/// Whether a line opens a block other than a paragraph (so it ends a running paragraph).
fn interrupts_paragraph(line: &str) -> bool {
    let trimmed = line.trim_start();
    if leading_spaces(line) >= 4 {
        return false;
    }
    heading(trimmed).is_some()
        || fence(trimmed).is_some()
        || trimmed.starts_with('>')
        || is_rule(trimmed)
        || list_marker(line).is_some_and(|m| !m.ordered || m.number == 1)
}

fn parse_blocks(lines: &[String], depth: usize) -> Vec<Block> {
    if depth > MAX_DEPTH {
        let text: Vec<&str> = lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
        return if text.is_empty() { Vec::new() } else { vec![Block::Paragraph(parse_inlines(&text.join("\n")))] };
    }
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let trimmed = line.trim_start();
        let indent = leading_spaces(line);
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        if let Some((ch, len)) = fence(trimmed) {
            let info = trimmed[len..].trim();
            let lang = info.split_whitespace().next().filter(|l| !l.contains(ch as char)).map(str::to_string);
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() {
                let t = lines[i].trim();
                if fence(t).is_some_and(|(c, l)| c == ch && l >= len) && t.bytes().all(|b| b == ch) {
                    i += 1;
                    break;
                }
                body.push(strip_spaces(&lines[i], indent));
                i += 1;
            }
            blocks.push(Block::Code { lang, text: body.join("\n") });
            continue;
        }
        if let Some((level, text)) = heading(trimmed) {
            blocks.push(Block::Heading(level, parse_inlines(text)));
            i += 1;
            continue;
        }
        if is_rule(trimmed) {
            blocks.push(Block::Rule);
            i += 1;
            continue;
        }
        if trimmed.starts_with('>') {
            let mut inner = Vec::new();
            while i < lines.len() {
                let t = lines[i].trim_start();
                let Some(rest) = t.strip_prefix('>') else { break };
                inner.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
                i += 1;
            }
            blocks.push(Block::Quote(parse_blocks(&inner, depth + 1)));
            continue;
        }
        if let Some(first) = list_marker(line) {
            let (block, next) = parse_list(lines, i, &first, depth);
            blocks.push(block);
            i = next;
            continue;
        }
        if trimmed.contains('|') && lines.get(i + 1).is_some_and(|l| is_table_separator(l)) {
            let header: Vec<Vec<Inline>> = split_row(line).iter().map(|c| parse_inlines(c)).collect();
            let width = header.len();
            i += 2;
            let mut rows = Vec::new();
            while i < lines.len() && !lines[i].trim().is_empty() && lines[i].contains('|') {
                let mut cells: Vec<Vec<Inline>> = split_row(&lines[i]).iter().map(|c| parse_inlines(c)).collect();
                cells.resize(width, Vec::new());
                rows.push(cells);
                i += 1;
            }
            blocks.push(Block::Table { header, rows });
            continue;
        }
        let mut para = vec![trimmed.to_string()];
        i += 1;
        while i < lines.len() && !lines[i].trim().is_empty() && !interrupts_paragraph(&lines[i]) {
            if lines[i].contains('|') && lines.get(i + 1).is_some_and(|l| is_table_separator(l)) {
                break;
            }
            para.push(lines[i].trim_start().to_string());
            i += 1;
        }
        blocks.push(Block::Paragraph(parse_inlines(&para.join("\n"))));
    }
    blocks
}

fn parse_list(lines: &[String], mut i: usize, first: &ListMarker, depth: usize) -> (Block, usize) {
    let mut items = Vec::new();
    loop {
        // Blank lines between items of the same list.
        let mut j = i;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        let Some(m) = lines.get(j).and_then(|l| list_marker(l)) else { break };
        if m.indent != first.indent || m.ordered != first.ordered || (j > i && items.is_empty()) {
            break;
        }
        if is_rule(lines[j].trim_start()) {
            break;
        }
        i = j;
        let line = &lines[i];
        let mut item = vec![line.get(m.content..).unwrap_or("").to_string()];
        i += 1;
        while i < lines.len() {
            let l = &lines[i];
            if l.trim().is_empty() {
                let next = (i + 1..lines.len()).find(|&k| !lines[k].trim().is_empty());
                match next {
                    Some(k) if leading_spaces(&lines[k]) > first.indent => {
                        item.push(String::new());
                        i += 1;
                        continue;
                    }
                    _ => break,
                }
            }
            let ind = leading_spaces(l);
            if ind > first.indent {
                item.push(strip_spaces(l, m.content));
                i += 1;
                continue;
            }
            let lazy = list_marker(l).is_none()
                && !interrupts_paragraph(l)
                && item.last().is_some_and(|p| !p.trim().is_empty());
            if lazy {
                item.push(l.trim_start().to_string());
                i += 1;
                continue;
            }
            break;
        }
        items.push(parse_blocks(&item, depth + 1));
    }
    (Block::List { ordered: first.ordered, start: first.number, items }, i)
}

/// Parses inline Markdown (one paragraph's text, newlines included).
pub fn parse_inlines(text: &str) -> Vec<Inline> {
    let chars: Vec<char> = text.trim().chars().collect();
    let mut out = Vec::new();
    inline_into(&chars, &Marks::default(), &mut out, 0);
    merge(out)
}

fn merge(items: Vec<Inline>) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::with_capacity(items.len());
    for item in items {
        match (out.last_mut(), item) {
            (Some(Inline::Text(prev, pm)), Inline::Text(t, m)) if *pm == m => prev.push_str(&t),
            (_, Inline::Text(t, _)) if t.is_empty() => {}
            (_, item) => out.push(item),
        }
    }
    out
}

fn flush(buf: &mut String, marks: &Marks, out: &mut Vec<Inline>) {
    if !buf.is_empty() {
        out.push(Inline::Text(std::mem::take(buf), marks.clone()));
    }
}

fn collect(chars: &[char]) -> String {
    chars.iter().collect()
}

fn run_len(chars: &[char], at: usize, c: char) -> usize {
    chars[at..].iter().take_while(|&&x| x == c).count()
}

/// Finds the closing delimiter for a double-character span (`**`, `__`, `~~`) starting after `from`.
fn find_double(chars: &[char], from: usize, c: char) -> Option<usize> {
    let mut j = from;
    while j + 1 < chars.len() {
        if chars[j] == '`' {
            let k = run_len(chars, j, '`');
            j += k;
            continue;
        }
        if chars[j] == c {
            let run = run_len(chars, j, c);
            if run >= 2 && j > from && !chars[j - 1].is_whitespace() {
                let close = j + run - 2;
                if c != '_' || chars.get(close + 2).is_none_or(|n| !n.is_alphanumeric()) {
                    return Some(close);
                }
            }
            j += run;
            continue;
        }
        j += 1;
    }
    None
}

/// Finds the closing single delimiter for emphasis, skipping doubled runs.
fn find_single(chars: &[char], from: usize, c: char) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '`' {
            j += run_len(chars, j, '`');
            continue;
        }
        if chars[j] == c {
            let run = run_len(chars, j, c);
            if run == 1 && j > from && !chars[j - 1].is_whitespace() {
                if c != '_' || chars.get(j + 1).is_none_or(|n| !n.is_alphanumeric()) {
                    return Some(j);
                }
            } else if run == 3 && j > from && !chars[j - 1].is_whitespace() {
                // `***` closes emphasis wrapped around strong: the last star is ours.
                return Some(j + 2);
            }
            j += run;
            continue;
        }
        j += 1;
    }
    None
}

/// Where each bracket and parenthesis of one run of inline text closes, found in one pass
/// (backslash escapes skipped). Scanning ahead from every `[` instead would be quadratic.
struct Pairs {
    bracket: Vec<u32>,
    paren: Vec<u32>,
}

const UNMATCHED: u32 = u32::MAX;

impl Pairs {
    fn new(chars: &[char]) -> Pairs {
        let mut bracket = vec![UNMATCHED; chars.len()];
        let mut paren = vec![UNMATCHED; chars.len()];
        let (mut open_b, mut open_p) = (Vec::new(), Vec::new());
        let mut j = 0;
        while j < chars.len() {
            match chars[j] {
                '\\' => j += 1,
                '[' => open_b.push(j),
                '(' => open_p.push(j),
                ']' => {
                    if let Some(o) = open_b.pop() {
                        bracket[o] = j as u32;
                    }
                }
                ')' => {
                    if let Some(o) = open_p.pop() {
                        paren[o] = j as u32;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        Pairs { bracket, paren }
    }

    fn close(table: &[u32], open: usize) -> Option<usize> {
        table.get(open).filter(|&&c| c != UNMATCHED).map(|&c| c as usize)
    }
}

fn with<F: FnOnce(&mut Marks)>(marks: &Marks, f: F) -> Marks {
    let mut m = marks.clone();
    f(&mut m);
    m
}

fn inline_into(chars: &[char], marks: &Marks, out: &mut Vec<Inline>, depth: usize) {
    if depth > MAX_INLINE_DEPTH {
        out.push(Inline::Text(collect(chars), marks.clone()));
        return;
    }
    let n = chars.len();
    let mut buf = String::new();
    let mut i = 0;
    let mut pairs: Option<Pairs> = None;
    // The next '>' at or after some index, remembered so runs of '<' stay linear.
    let mut next_gt: Option<(usize, Option<usize>)> = None;
    while i < n {
        let c = chars[i];
        match c {
            '\\' if i + 1 < n && chars[i + 1] == '\n' => {
                flush(&mut buf, marks, out);
                out.push(Inline::Break);
                i += 2;
                while i < n && chars[i] == ' ' {
                    i += 1;
                }
            }
            '\\' if i + 1 < n && chars[i + 1].is_ascii_punctuation() => {
                buf.push(chars[i + 1]);
                i += 2;
            }
            '\n' => {
                let hard = buf.ends_with("  ");
                let kept = buf.trim_end_matches(' ').len();
                buf.truncate(kept);
                if hard {
                    flush(&mut buf, marks, out);
                    out.push(Inline::Break);
                } else {
                    buf.push(' ');
                }
                i += 1;
                while i < n && chars[i] == ' ' {
                    i += 1;
                }
            }
            '`' => {
                let k = run_len(chars, i, '`');
                let mut j = i + k;
                let mut close = None;
                while j < n {
                    if chars[j] == '`' {
                        let r = run_len(chars, j, '`');
                        if r == k {
                            close = Some(j);
                            break;
                        }
                        j += r;
                    } else {
                        j += 1;
                    }
                }
                match close {
                    Some(j) => {
                        flush(&mut buf, marks, out);
                        let mut code = collect(&chars[i + k..j]).replace('\n', " ");
                        if code.len() > 2 && code.starts_with(' ') && code.ends_with(' ') && !code.trim().is_empty() {
                            code = code[1..code.len() - 1].to_string();
                        }
                        out.push(Inline::Text(code, with(marks, |m| m.code = true)));
                        i = j + k;
                    }
                    None => {
                        buf.extend(&chars[i..i + k]);
                        i += k;
                    }
                }
            }
            '*' | '_' | '~' => {
                let run = run_len(chars, i, c);
                let prev_alnum = i > 0 && chars[i - 1].is_alphanumeric();
                let next_ws = chars.get(i + run).is_none_or(|x| x.is_whitespace());
                if next_ws || (c == '_' && prev_alnum) || (c == '~' && run < 2) {
                    buf.extend(&chars[i..i + run]);
                    i += run;
                    continue;
                }
                if run >= 2
                    && let Some(close) = find_double(chars, i + 2, c)
                {
                    flush(&mut buf, marks, out);
                    let m = with(marks, |m| if c == '~' { m.strike = true } else { m.strong = true });
                    inline_into(&chars[i + 2..close], &m, out, depth + 1);
                    i = close + 2;
                    continue;
                }
                if c != '~'
                    && let Some(close) = find_single(chars, i + 1, c)
                {
                    flush(&mut buf, marks, out);
                    inline_into(&chars[i + 1..close], &with(marks, |m| m.em = true), out, depth + 1);
                    i = close + 1;
                    continue;
                }
                buf.extend(&chars[i..i + run]);
                i += run;
            }
            '!' if chars.get(i + 1) == Some(&'[') => {
                // Images become links to the image.
                match link_at(chars, i + 1, pairs.get_or_insert_with(|| Pairs::new(chars))) {
                    Some((label, url, end)) => {
                        flush(&mut buf, marks, out);
                        let text = if label.is_empty() { url.clone() } else { collect(&label) };
                        out.push(Inline::Text(text, with(marks, |m| m.link = Some(url))));
                        i = end;
                    }
                    None => {
                        buf.push('!');
                        i += 1;
                    }
                }
            }
            '[' => match link_at(chars, i, pairs.get_or_insert_with(|| Pairs::new(chars))) {
                Some((label, url, end)) => {
                    flush(&mut buf, marks, out);
                    let m = with(marks, |m| m.link = Some(url.clone()));
                    if label.is_empty() {
                        out.push(Inline::Text(url, m));
                    } else {
                        inline_into(&label, &m, out, depth + 1);
                    }
                    i = end;
                }
                None => {
                    buf.push('[');
                    i += 1;
                }
            },
            '<' => {
                let close = match next_gt {
                    Some((from, found)) if from <= i && found.is_none_or(|f| f >= i) => found,
                    _ => {
                        let found = chars[i..].iter().position(|&x| x == '>').map(|p| p + i);
                        next_gt = Some((i, found));
                        found
                    }
                };
                // An autolink is one URL: a far '>' is not one (and copying up to it per '<' is quadratic).
                let target = close.filter(|&j| j - i <= 4096).map(|j| collect(&chars[i + 1..j]));
                match target {
                    Some(t) if is_url(&t) && !t.contains(' ') => {
                        flush(&mut buf, marks, out);
                        out.push(Inline::Text(t.clone(), with(marks, |m| m.link = Some(t.clone()))));
                        i = close.unwrap_or(i) + 1;
                    }
                    _ => {
                        buf.push('<');
                        i += 1;
                    }
                }
            }
            'h' if marks.link.is_none()
                && (i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == '(')
                && is_url(&collect(&chars[i..n.min(i + 8)])) =>
            {
                let mut j = i;
                while j < n && !chars[j].is_whitespace() && chars[j] != '<' {
                    j += 1;
                }
                while j > i && matches!(chars[j - 1], '.' | ',' | ';' | ':' | '!' | '?' | ')' | '\'' | '"') {
                    j -= 1;
                }
                flush(&mut buf, marks, out);
                let url = collect(&chars[i..j]);
                out.push(Inline::Text(url.clone(), with(marks, |m| m.link = Some(url))));
                i = j;
            }
            _ => {
                buf.push(c);
                i += 1;
            }
        }
    }
    flush(&mut buf, marks, out);
}

fn is_url(s: &str) -> bool {
    s.starts_with("https://") || s.starts_with("http://") || s.starts_with("mailto:")
}

/// `[label](url "title")` at `open`: the label's characters, the URL and the index after `)`.
fn link_at(chars: &[char], open: usize, pairs: &Pairs) -> Option<(Vec<char>, String, usize)> {
    let close = Pairs::close(&pairs.bracket, open)?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = Pairs::close(&pairs.paren, close + 1)?;
    let inside = collect(&chars[close + 2..end]);
    let inside = inside.trim();
    let url = match inside.strip_prefix('<') {
        Some(rest) => rest.split('>').next().unwrap_or_default().to_string(),
        None => inside.split_whitespace().next().unwrap_or_default().to_string(),
    };
    if url.is_empty() {
        return None;
    }
    Some((chars[open + 1..close].to_vec(), url, end + 1))
}

/// The plain text of inline content (for places that cannot hold formatting).
pub fn plain(inlines: &[Inline]) -> String {
    inlines
        .iter()
        .map(|i| match i {
            Inline::Text(t, _) => t.as_str(),
            Inline::Break => " ",
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Inline {
        Inline::Text(s.into(), Marks::default())
    }

    fn m(s: &str, f: impl FnOnce(&mut Marks)) -> Inline {
        let mut marks = Marks::default();
        f(&mut marks);
        Inline::Text(s.into(), marks)
    }

    #[test]
    fn inline_marks_nest_and_escape() {
        assert_eq!(
            parse_inlines("a **bold *both*** and `code` \\*not\\*"),
            vec![
                t("a "),
                m("bold ", |m| m.strong = true),
                m("both", |m| {
                    m.strong = true;
                    m.em = true
                }),
                t(" and "),
                m("code", |m| m.code = true),
                t(" *not*"),
            ]
        );
        assert_eq!(parse_inlines("snake_case_name stays"), vec![t("snake_case_name stays")]);
        assert_eq!(parse_inlines("~~gone~~"), vec![m("gone", |m| m.strike = true)]);
        assert_eq!(parse_inlines("2 * 3 * 4"), vec![t("2 * 3 * 4")]);
    }

    #[test]
    fn links_autolinks_and_breaks() {
        assert_eq!(
            parse_inlines("see [the **docs**](https://x.io/a_(b)) or https://y.io/p."),
            vec![
                t("see "),
                m("the ", |m| m.link = Some("https://x.io/a_(b)".into())),
                m("docs", |m| {
                    m.link = Some("https://x.io/a_(b)".into());
                    m.strong = true
                }),
                t(" or "),
                m("https://y.io/p", |m| m.link = Some("https://y.io/p".into())),
                t("."),
            ]
        );
        assert_eq!(parse_inlines("one  \ntwo\nthree"), vec![t("one"), Inline::Break, t("two three")]);
    }

    #[test]
    fn blocks_lists_code_tables() {
        let md = "# Title\n\nIntro line\ncontinues.\n\n- a\n- b\n  1. inner\n  2. more\n- c\n\n```rust\nfn main() {}\n```\n\n> quoted\n\n---\n\n| A | B |\n|---|:-:|\n| 1 | `x|y` |\n";
        let blocks = parse(md);
        assert_eq!(blocks[0], Block::Heading(1, vec![t("Title")]));
        assert_eq!(blocks[1], Block::Paragraph(vec![t("Intro line continues.")]));
        let Block::List { ordered: false, items, .. } = &blocks[2] else { panic!("{:?}", blocks[2]) };
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[1],
            vec![
                Block::Paragraph(vec![t("b")]),
                Block::List {
                    ordered: true,
                    start: 1,
                    items: vec![vec![Block::Paragraph(vec![t("inner")])], vec![Block::Paragraph(vec![t("more")])]]
                }
            ]
        );
        assert_eq!(blocks[3], Block::Code { lang: Some("rust".into()), text: "fn main() {}".into() });
        assert_eq!(blocks[4], Block::Quote(vec![Block::Paragraph(vec![t("quoted")])]));
        assert_eq!(blocks[5], Block::Rule);
        assert_eq!(
            blocks[6],
            Block::Table {
                header: vec![vec![t("A")], vec![t("B")]],
                rows: vec![vec![vec![t("1")], vec![m("x|y", |m| m.code = true)]]]
            }
        );
    }

    /// Attack: Markdown from the agent nested 100,000 levels (quotes, lists, link labels) recursed
    /// once per level. Past the limits the rest is kept as text, in linear time.
    #[test]
    fn deep_nesting_degrades_to_text() {
        fn depth(blocks: &[Block]) -> usize {
            blocks
                .iter()
                .map(|b| match b {
                    Block::Quote(inner) => 1 + depth(inner),
                    Block::List { items, .. } => 1 + items.iter().map(|i| depth(i)).max().unwrap_or(0),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
        }
        let n = 100_000;
        for md in [">".repeat(n) + " end", "- ".repeat(n) + "end", "1. ".repeat(n) + "end", "> - ".repeat(n) + "end"] {
            let blocks = parse(&md);
            assert!(depth(&blocks) <= MAX_DEPTH + 1, "{}", depth(&blocks));
            assert!(format!("{blocks:?}").contains("end"));
        }
        let link = format!("{}x{}", "[".repeat(n), "](https://e.io)".repeat(n));
        let inl = parse_inlines(&link);
        assert!(plain(&inl).contains('x'), "the innermost text survives");
        for md in ["[".repeat(n), "<".repeat(n) + ">", "`".repeat(n), "](".repeat(n)] {
            assert!(!parse_inlines(&md).is_empty());
        }
        // Ordinary nesting is untouched.
        assert_eq!(depth(&parse("> > > x")), 3);
    }

    #[test]
    fn ordered_start_and_loose_lists() {
        let blocks = parse("3. three\n\n4. four\n\nafter");
        assert_eq!(
            blocks[0],
            Block::List {
                ordered: true,
                start: 3,
                items: vec![vec![Block::Paragraph(vec![t("three")])], vec![Block::Paragraph(vec![t("four")])]]
            }
        );
        assert_eq!(blocks[1], Block::Paragraph(vec![t("after")]));
    }
}
