//! Confluence storage format (XHTML with `ac:`/`ri:` elements) <-> Markdown.
//!
//! [`from_markdown`] renders the shared Markdown reader's blocks (`crate::markdown`) as storage
//! XHTML, with fenced code as the `code` macro. [`to_markdown`] parses storage leniently (unclosed
//! and mismatched tags are tolerated) and renders headings, lists, tables, code and panel macros,
//! task lists, page/user/attachment links, images, emoticons and dates as Markdown.

use crate::markdown::{self, ATLASSIAN, Block, Inline, Marks, write};
use crate::text::decode_entities;

// ---------------------------------------------------------------- Markdown -> storage

/// Markdown as Confluence storage XHTML.
pub fn from_markdown(md: &str) -> String {
    markdown::parse(md, &ATLASSIAN).iter().map(block).collect::<Vec<_>>().join("")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn escape_attr(text: &str) -> String {
    escape(text).replace('"', "&quot;")
}

fn block(b: &Block) -> String {
    match b {
        Block::Paragraph(inl) => format!("<p>{}</p>", inlines(inl)),
        Block::Heading(level, inl) => format!("<h{level}>{}</h{level}>", inlines(inl)),
        Block::Code { lang, text } => {
            let lang = lang
                .as_deref()
                .map(|l| format!("<ac:parameter ac:name=\"language\">{}</ac:parameter>", escape(l)))
                .unwrap_or_default();
            let body = text.replace("]]>", "]]]]><![CDATA[>");
            format!(
                "<ac:structured-macro ac:name=\"code\">{lang}<ac:plain-text-body><![CDATA[{body}]]></ac:plain-text-body></ac:structured-macro>"
            )
        }
        Block::Quote(blocks) => format!("<blockquote>{}</blockquote>", blocks.iter().map(block).collect::<String>()),
        Block::List { ordered, start, items } => {
            let tag = if *ordered { "ol" } else { "ul" };
            let open = if *ordered && *start != 1 { format!("<ol start=\"{start}\">") } else { format!("<{tag}>") };
            let lis: String = items
                .iter()
                .map(|item| {
                    let inner = match item.blocks.as_slice() {
                        [Block::Paragraph(inl)] => inlines(inl),
                        [Block::Paragraph(inl), rest @ ..] => {
                            format!("{}{}", inlines(inl), rest.iter().map(block).collect::<String>())
                        }
                        blocks => blocks.iter().map(block).collect(),
                    };
                    format!("<li>{inner}</li>")
                })
                .collect();
            format!("{open}{lis}</{tag}>")
        }
        Block::Rule => "<hr />".to_string(),
        Block::Image { url, alt } => {
            format!("<p>{}</p>", inlines(&[markdown::image_link(url, alt, &Marks::default())]))
        }
        Block::Math(expr) => format!("<p>{}</p>", escape(&format!("$${expr}$$"))),
        Block::Table { header, rows } => {
            let cells = |tag: &str, row: &[Vec<Inline>]| -> String {
                row.iter().map(|c| format!("<{tag}><p>{}</p></{tag}>", inlines(c))).collect()
            };
            let mut out = format!("<table><tbody><tr>{}</tr>", cells("th", header));
            for r in rows {
                out.push_str(&format!("<tr>{}</tr>", cells("td", r)));
            }
            out.push_str("</tbody></table>");
            out
        }
    }
}

fn inlines(inl: &[Inline]) -> String {
    inl.iter()
        .map(|i| match i {
            Inline::Break => "<br />".to_string(),
            Inline::Text(t, m) => marked(t, m),
        })
        .collect()
}

fn marked(text: &str, m: &Marks) -> String {
    let mut s = escape(text);
    if m.code {
        s = format!("<code>{s}</code>");
    }
    if m.strike {
        s = format!("<s>{s}</s>");
    }
    if m.em {
        s = format!("<em>{s}</em>");
    }
    if m.strong {
        s = format!("<strong>{s}</strong>");
    }
    if let Some(href) = &m.link {
        s = format!("<a href=\"{}\">{s}</a>", escape_attr(href));
    }
    s
}

// ---------------------------------------------------------------- storage -> Markdown

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Elem {
        name: String,
        attrs: Vec<(String, String)>,
        children: Vec<Node>,
    },
    Text(String),
    /// CDATA content, kept verbatim (code macro bodies).
    Raw(String),
}

impl Node {
    fn attr(&self, name: &str) -> Option<&str> {
        match self {
            Node::Elem { attrs, .. } => attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()),
            _ => None,
        }
    }
    fn name(&self) -> &str {
        match self {
            Node::Elem { name, .. } => name,
            _ => "",
        }
    }
    fn children(&self) -> &[Node] {
        match self {
            Node::Elem { children, .. } => children,
            _ => &[],
        }
    }
    fn child(&self, name: &str) -> Option<&Node> {
        self.children().iter().find(|c| c.name() == name)
    }
    /// A macro's `<ac:parameter ac:name="...">` value.
    fn param(&self, name: &str) -> Option<String> {
        self.children()
            .iter()
            .find(|c| c.name() == "ac:parameter" && c.attr("ac:name") == Some(name))
            .map(|p| text_content(p.children()))
    }
}

/// An element still open while parsing: name, attributes, children so far.
type Open = (String, Vec<(String, String)>, Vec<Node>);

const VOID: &[&str] = &["br", "hr", "img", "col", "input", "meta", "link", "wbr"];

fn parse_attrs(tag: &str) -> Vec<(String, String)> {
    let mut attrs = Vec::new();
    let mut rest = tag;
    loop {
        rest = rest.trim_start();
        let Some(eq) = rest.find('=') else { break };
        let name = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let (value, remaining) = match after.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = &after[1..];
                let end = body.find(q).unwrap_or(body.len());
                (&body[..end], body.get(end + 1..).unwrap_or(""))
            }
            _ => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if !name.is_empty() && !name.contains(char::is_whitespace) {
            attrs.push((name, decode_entities(value)));
        }
        rest = remaining;
    }
    attrs
}

/// Deepest element nesting kept as a tree. Rendering (and dropping) the tree recurses once per
/// level, so an element opened deeper than this is not kept: its text joins the element at the
/// limit (a degraded but complete conversion) and no page can overflow the stack.
pub const MAX_DEPTH: usize = 64;

fn parse(xhtml: &str) -> Vec<Node> {
    let mut stack: Vec<Open> = vec![(String::new(), Vec::new(), Vec::new())];
    // Names of elements opened past MAX_DEPTH, so their end tags close them and not an ancestor.
    let mut flattened: Vec<String> = Vec::new();
    let mut flattened_names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut rest = xhtml;
    fn push(stack: &mut [Open], node: Node) {
        if let Some(top) = stack.last_mut() {
            top.2.push(node);
        }
    }
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            push(&mut stack, Node::Text(decode_entities(rest)));
            break;
        };
        if lt > 0 {
            push(&mut stack, Node::Text(decode_entities(&rest[..lt])));
        }
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").unwrap_or(after.len());
            push(&mut stack, Node::Raw(after[..end].to_string()));
            rest = after.get(end + 3..).unwrap_or("");
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map(|e| &after[e + 3..]).unwrap_or("");
            continue;
        }
        let Some(gt) = rest.find('>') else {
            push(&mut stack, Node::Text(decode_entities(rest)));
            break;
        };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim().to_ascii_lowercase();
            if flattened_names.get(&name).is_some_and(|&n| n > 0) {
                // Each flattened element is popped once: linear however the tags interleave.
                while let Some(open) = flattened.pop() {
                    if let Some(n) = flattened_names.get_mut(&open) {
                        *n -= 1;
                    }
                    if open == name {
                        break;
                    }
                }
                continue;
            }
            if let Some(pos) = stack.iter().rposition(|(n, _, _)| *n == name)
                && pos > 0
            {
                while stack.len() > pos {
                    let (n, a, c) = stack.pop().unwrap_or_default();
                    push(&mut stack, Node::Elem { name: n, attrs: a, children: c });
                }
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(|c: char| c.is_whitespace()).unwrap_or(tag.len());
        let name = tag[..name_end].to_ascii_lowercase();
        let attrs = parse_attrs(&tag[name_end..]);
        if self_closing || VOID.contains(&name.as_str()) {
            push(&mut stack, Node::Elem { name, attrs, children: Vec::new() });
        } else if stack.len() > MAX_DEPTH {
            *flattened_names.entry(name.clone()).or_default() += 1;
            flattened.push(name);
        } else {
            stack.push((name, attrs, Vec::new()));
        }
    }
    while stack.len() > 1 {
        let (n, a, c) = stack.pop().unwrap_or_default();
        push(&mut stack, Node::Elem { name: n, attrs: a, children: c });
    }
    stack.pop().map(|(_, _, c)| c).unwrap_or_default()
}

fn text_content(nodes: &[Node]) -> String {
    nodes
        .iter()
        .map(|n| match n {
            Node::Text(t) | Node::Raw(t) => t.clone(),
            Node::Elem { children, .. } => text_content(children),
        })
        .collect()
}

/// Confluence storage XHTML as Markdown.
pub fn to_markdown(xhtml: &str) -> String {
    blocks(&parse(xhtml)).trim().to_string()
}

fn is_block(node: &Node) -> bool {
    match node {
        Node::Elem { name, .. } => {
            matches!(
                name.as_str(),
                "p" | "h1"
                    | "h2"
                    | "h3"
                    | "h4"
                    | "h5"
                    | "h6"
                    | "ul"
                    | "ol"
                    | "pre"
                    | "blockquote"
                    | "hr"
                    | "table"
                    | "div"
                    | "section"
                    | "ac:task-list"
                    | "ac:layout"
                    | "ac:layout-section"
                    | "ac:layout-cell"
                    | "ac:rich-text-body"
            ) || (name == "ac:structured-macro" && !is_inline_macro(node))
        }
        _ => false,
    }
}

fn is_inline_macro(node: &Node) -> bool {
    matches!(node.attr("ac:name"), Some("status" | "anchor" | "jira"))
}

fn blocks(nodes: &[Node]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Vec<Node> = Vec::new();
    let flush = |run: &mut Vec<Node>, parts: &mut Vec<String>| {
        let text = inline(run).trim().to_string();
        if !text.is_empty() {
            parts.push(text);
        }
        run.clear();
    };
    for node in nodes {
        if is_block(node) {
            flush(&mut run, &mut parts);
            let md = block_md(node);
            if !md.trim().is_empty() {
                parts.push(md);
            }
        } else {
            run.push(node.clone());
        }
    }
    flush(&mut run, &mut parts);
    parts.join("\n\n")
}

/// A list item's content: nested lists follow their text directly.
fn item_md(nodes: &[Node]) -> String {
    let mut run: Vec<Node> = Vec::new();
    let mut pieces: Vec<(bool, String)> = Vec::new();
    for node in nodes {
        if is_block(node) {
            if !run.is_empty() {
                pieces.push((false, inline(&run).trim().to_string()));
                run.clear();
            }
            pieces.push((matches!(node.name(), "ul" | "ol" | "ac:task-list"), block_md(node)));
        } else {
            run.push(node.clone());
        }
    }
    if !run.is_empty() {
        pieces.push((false, inline(&run).trim().to_string()));
    }
    write::item_body(pieces)
}

fn block_md(node: &Node) -> String {
    let name = node.name();
    match name {
        "p" => inline(node.children()).trim().to_string(),
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            let level: usize = name[1..].parse().unwrap_or(1);
            write::heading(level, inline(node.children()).trim())
        }
        "ul" | "ol" => {
            let start: u64 = node.attr("start").and_then(|s| s.parse().ok()).unwrap_or(1);
            node.children()
                .iter()
                .filter(|c| c.name() == "li")
                .enumerate()
                .map(|(i, li)| {
                    let marker = if name == "ol" { write::number(start + i as u64) } else { "- ".to_string() };
                    write::item(&item_md(li.children()), &marker, marker.len())
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        "pre" => write::fenced("", text_content(node.children()).trim_end_matches('\n')),
        "blockquote" => write::quote(&blocks(node.children())),
        "hr" => "---".to_string(),
        "table" => table_md(node),
        "ac:task-list" => node
            .children()
            .iter()
            .filter(|c| c.name() == "ac:task")
            .map(|task| {
                let done = task.child("ac:task-status").map(|s| text_content(s.children()));
                let body = task.child("ac:task-body").map(|b| item_md(b.children())).unwrap_or_default();
                let marker = if done.as_deref().map(str::trim) == Some("complete") { "- [x] " } else { "- [ ] " };
                write::item(&body, marker, 2)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "ac:structured-macro" => macro_md(node),
        _ => blocks(node.children()),
    }
}

fn macro_md(node: &Node) -> String {
    let body = || node.child("ac:rich-text-body").map(|b| blocks(b.children())).unwrap_or_default();
    match node.attr("ac:name").unwrap_or("") {
        "code" | "noformat" => {
            let text = node.child("ac:plain-text-body").map(|b| text_content(b.children())).unwrap_or_default();
            write::fenced(node.param("language").as_deref().unwrap_or(""), &text)
        }
        kind @ ("info" | "note" | "warning" | "tip" | "panel" | "success" | "error") => {
            let label = write::panel_label(kind);
            let title = node.param("title").map(|t| format!("{t} — ")).unwrap_or_default();
            write::quote(&format!("**{label}:** {title}{}", body()))
        }
        "expand" => {
            let title = node.param("title").unwrap_or_else(|| "Details".into());
            format!("**{title}**\n\n{}", body())
        }
        "toc" | "children" | "anchor" | "pagetree" | "recently-updated" => String::new(),
        _ => {
            let b = body();
            if !b.is_empty() {
                b
            } else if let Some(plain) = node.child("ac:plain-text-body") {
                text_content(plain.children())
            } else {
                String::new()
            }
        }
    }
}

fn table_md(node: &Node) -> String {
    fn rows<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
        for c in n.children() {
            match c.name() {
                "tr" => out.push(c),
                "thead" | "tbody" | "tfoot" => rows(c, out),
                _ => {}
            }
        }
    }
    let mut trs = Vec::new();
    rows(node, &mut trs);
    let grid: Vec<Vec<String>> = trs
        .iter()
        .map(|tr| {
            tr.children()
                .iter()
                .filter(|c| matches!(c.name(), "th" | "td"))
                .map(|cell| write::cell(&blocks(cell.children())))
                .collect()
        })
        .collect();
    write::table(&grid, 0)
}

fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            if !space {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    out
}

fn inline(nodes: &[Node]) -> String {
    let mut out = String::new();
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(&collapse(t)),
            Node::Raw(t) => out.push_str(t),
            Node::Elem { name, children, .. } => match name.as_str() {
                "strong" | "b" => out.push_str(&write::wrap(&inline(children), "**")),
                "em" | "i" => out.push_str(&write::wrap(&inline(children), "*")),
                "s" | "del" | "strike" => out.push_str(&write::wrap(&inline(children), "~~")),
                "code" => {
                    let t = text_content(children);
                    let ticks = if t.contains('`') { "``" } else { "`" };
                    out.push_str(&format!("{ticks}{t}{ticks}"));
                }
                "br" => out.push_str("  \n"),
                "a" => {
                    let text = inline(children).trim().to_string();
                    match node.attr("href") {
                        Some(h) => out.push_str(&write::link(&text, h)),
                        None => out.push_str(&text),
                    }
                }
                "ac:link" => out.push_str(&link_md(node)),
                "ac:image" => {
                    let alt = node.attr("ac:alt").unwrap_or("");
                    if let Some(url) = node.child("ri:url").and_then(|u| u.attr("ri:value")) {
                        out.push_str(&format!("![{alt}]({url})"));
                    } else if let Some(f) = node.child("ri:attachment").and_then(|a| a.attr("ri:filename")) {
                        out.push_str(&format!("[image: {f}]"));
                    }
                }
                "ac:emoticon" => {
                    let e = node
                        .attr("ac:emoji-fallback")
                        .map(str::to_string)
                        .or_else(|| node.attr("ac:name").map(|n| format!(":{n}:")));
                    out.push_str(&e.unwrap_or_default());
                }
                "time" => out.push_str(node.attr("datetime").unwrap_or("")),
                "ac:structured-macro" => match node.attr("ac:name") {
                    Some("status") => out.push_str(&format!("[{}]", node.param("title").unwrap_or_default())),
                    Some("jira") => out.push_str(&node.param("key").unwrap_or_default()),
                    _ => out.push_str(&macro_md(node)),
                },
                "ac:placeholder" | "ac:parameter" => {}
                _ if is_block(node) => {
                    out.push_str(&block_md(node));
                }
                _ => out.push_str(&inline(children)),
            },
        }
    }
    out
}

/// `<ac:link>` to a page, a person, an attachment or a URL.
fn link_md(node: &Node) -> String {
    let body = node
        .child("ac:link-body")
        .map(|b| inline(b.children()))
        .or_else(|| node.child("ac:plain-text-link-body").map(|b| text_content(b.children())))
        .filter(|t| !t.trim().is_empty());
    if let Some(page) = node.child("ri:page").or_else(|| node.child("ri:blog-post")) {
        let title = page.attr("ri:content-title").unwrap_or("page");
        return match body {
            Some(b) if b.trim() != title => format!("{} (page: {title})", b.trim()),
            _ => format!("[[{title}]]"),
        };
    }
    if let Some(user) = node.child("ri:user") {
        let id = user.attr("ri:account-id").or(user.attr("ri:username")).unwrap_or("someone");
        return body.map(|b| format!("@{}", b.trim().trim_start_matches('@'))).unwrap_or_else(|| format!("@user:{id}"));
    }
    if let Some(a) = node.child("ri:attachment") {
        let f = a.attr("ri:filename").unwrap_or("file");
        return format!("[attachment: {f}]");
    }
    if let Some(u) = node.child("ri:url") {
        let url = u.attr("ri:value").unwrap_or("");
        return match body {
            Some(b) => format!("[{}]({url})", b.trim()),
            None => format!("<{url}>"),
        };
    }
    if let Some(anchor) = node.attr("ac:anchor") {
        return body.unwrap_or_else(|| format!("#{anchor}"));
    }
    body.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_storage() {
        let xhtml = from_markdown(
            "# Runbook\n\nRestart **the** [API](https://a.io?x=1&y=2) <now>.\n\n1. drain\n2. restart\n   - check `health`\n\n```bash\necho \"]]>\" && make\n```\n\n| Host | Role |\n| --- | --- |\n| db1 | primary |\n\n---",
        );
        assert_eq!(
            xhtml,
            "<h1>Runbook</h1>\
             <p>Restart <strong>the</strong> <a href=\"https://a.io?x=1&amp;y=2\">API</a> &lt;now&gt;.</p>\
             <ol><li>drain</li><li>restart<ul><li>check <code>health</code></li></ul></li></ol>\
             <ac:structured-macro ac:name=\"code\"><ac:parameter ac:name=\"language\">bash</ac:parameter><ac:plain-text-body><![CDATA[echo \"]]]]><![CDATA[>\" && make]]></ac:plain-text-body></ac:structured-macro>\
             <table><tbody><tr><th><p>Host</p></th><th><p>Role</p></th></tr><tr><td><p>db1</p></td><td><p>primary</p></td></tr></tbody></table>\
             <hr />"
        );
    }

    #[test]
    fn storage_becomes_markdown() {
        let storage = r#"<h2>Overview</h2>
<p>Owned by <ac:link><ri:user ri:account-id="5b10ac8d82e05b22cc7d4ef5" /></ac:link>, see <ac:link><ri:page ri:content-title="Deploy guide" /></ac:link> and <a href="https://status.acme.test">status&nbsp;page</a>.</p>
<ac:structured-macro ac:name="info" ac:schema-version="1"><ac:rich-text-body><p>Read <em>before</em> paging.</p></ac:rich-text-body></ac:structured-macro>
<ul><li><p>first</p><ol start="2"><li>two</li></ol></li><li>second <strong>bold</strong></li></ul>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">sql</ac:parameter><ac:plain-text-body><![CDATA[SELECT * FROM t WHERE a < 3;]]></ac:plain-text-body></ac:structured-macro>
<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>complete</ac:task-status><ac:task-body>backup</ac:task-body></ac:task><ac:task><ac:task-id>2</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>restore <time datetime="2026-03-01" /></ac:task-body></ac:task></ac:task-list>
<table><tbody><tr><th>Env</th><th>Status</th></tr><tr><td><p>prod</p></td><td><ac:structured-macro ac:name="status"><ac:parameter ac:name="title">GREEN</ac:parameter></ac:structured-macro></td></tr></tbody></table>
<p>Line one<br/>line two <ac:emoticon ac:name="tick" ac:emoji-fallback="✅" /> <ac:image><ri:attachment ri:filename="graph.png" /></ac:image></p>
<ac:structured-macro ac:name="toc" />"#;
        assert_eq!(
            to_markdown(storage),
            "## Overview\n\n\
             Owned by @user:5b10ac8d82e05b22cc7d4ef5, see [[Deploy guide]] and [status page](https://status.acme.test).\n\n\
             > **Info:** Read *before* paging.\n\n\
             - first\n  2. two\n- second **bold**\n\n\
             ```sql\nSELECT * FROM t WHERE a < 3;\n```\n\n\
             - [x] backup\n- [ ] restore 2026-03-01\n\n\
             | Env | Status |\n| --- | --- |\n| prod | [GREEN] |\n\n\
             Line one  \nline two ✅ [image: graph.png]"
        );
    }

    #[test]
    fn broken_markup_is_tolerated() {
        assert_eq!(to_markdown("<p>open <strong>bold</p><p>next"), "open **bold**\n\nnext");
        assert_eq!(to_markdown("plain &amp; simple"), "plain & simple");
        assert_eq!(to_markdown(""), "");
    }

    /// Attack: a page whose storage nests `<div>` 20,000 deep overflowed the stack while being
    /// rendered. Nesting past [`MAX_DEPTH`] is flattened into text; the conversion finishes.
    #[test]
    fn nesting_deeper_than_the_limit_is_flattened_not_recursed() {
        let pairs = [
            ("<div>", "</div>"),
            ("<blockquote>", "</blockquote>"),
            ("<strong>", "</strong>"),
            ("<ul><li>", "</li></ul>"),
            ("<table><tbody><tr><td>", "</td></tr></tbody></table>"),
            ("<ac:structured-macro ac:name=\"info\"><ac:rich-text-body>", "</ac:rich-text-body></ac:structured-macro>"),
            ("<x>", "</x>"),
        ];
        for (open, close) in pairs {
            let n = 100_000;
            let xhtml = format!("{}deep text{}<p>after</p>", open.repeat(n), close.repeat(n));
            let md = to_markdown(&xhtml);
            assert!(md.contains("deep text"), "{open}: {}", &md[..md.len().min(200)]);
            assert!(md.contains("after"), "{open}");
            // Unclosed tags, too.
            let md = to_markdown(&format!("{}tail", open.repeat(n)));
            assert!(md.contains("tail"), "{open}");
        }
        // Below the limit the structure is kept, and end tags of flattened elements close only them.
        let xhtml = format!("{}x{}<p>y</p>", "<blockquote>".repeat(3), "</blockquote>".repeat(3));
        assert_eq!(to_markdown(&xhtml), "> > > x\n\ny");
        let deep = format!("<div>{}<strong>in</strong>{}</div><p>out</p>", "<div>".repeat(200), "</div>".repeat(200));
        let md = to_markdown(&deep);
        assert!(md.ends_with("out"), "{md}");
        // Markdown -> storage with deep quotes and lists finishes too.
        let xhtml = from_markdown(&(">".repeat(100_000) + " q"));
        assert!(xhtml.contains('q'));
        let xhtml = from_markdown(&("- ".repeat(100_000) + "item"));
        assert!(xhtml.contains("item"));
    }

    #[test]
    fn round_trip_keeps_structure() {
        let md = "## Plan\n\n- a *b*\n- c\n  1. d\n\n```rust\nfn x() {}\n```\n\n> quoted\n\n| A | B |\n| --- | --- |\n| 1 | 2 |";
        assert_eq!(to_markdown(&from_markdown(md)), md);
    }
}
