//! Atlassian Document Format (ADF) <-> Markdown, for Jira descriptions and comments.
//!
//! Jira Cloud's v3 API takes and returns rich text as ADF JSON documents; agents read and write
//! Markdown. Both directions are pure functions: [`from_markdown`] builds a valid ADF `doc`
//! (respecting ADF's nesting rules: list items start with a paragraph, `code` marks only combine
//! with links, no empty text nodes), [`to_markdown`] renders every node Jira commonly produces
//! (panels, mentions, emoji, dates, status lozenges, cards, media, tables, task lists) as text.

use serde_json::{Value, json};

use crate::markdown::{self, ATLASSIAN, Block, Inline, Item, Marks, write};

/// Deepest JSON nesting (each ADF level is two: a node and its `content` array) rendered as
/// structure; serde_json already refuses bodies deeper than 128.
pub const MAX_JSON_DEPTH: usize = 96;

/// A Markdown string as an ADF document.
pub fn from_markdown(md: &str) -> Value {
    let content: Vec<Value> = markdown::parse(md, &ATLASSIAN).iter().map(block_node).collect();
    json!({ "type": "doc", "version": 1, "content": content })
}

fn block_node(block: &Block) -> Value {
    match block {
        Block::Paragraph(inl) => paragraph(inl),
        Block::Heading(level, inl) => {
            json!({"type": "heading", "attrs": {"level": level}, "content": inline_nodes(inl)})
        }
        Block::Code { lang, text } => {
            let mut node = json!({"type": "codeBlock", "attrs": {}, "content": []});
            if let Some(l) = lang {
                node["attrs"]["language"] = json!(l);
            }
            if !text.is_empty() {
                node["content"] = json!([{"type": "text", "text": text}]);
            }
            node
        }
        Block::Quote(blocks) => {
            let content: Vec<Value> = blocks.iter().flat_map(quote_child).collect();
            json!({"type": "blockquote", "content": content})
        }
        Block::List { ordered, start, items } => {
            let items: Vec<Value> = items.iter().map(list_item).collect();
            if *ordered {
                json!({"type": "orderedList", "attrs": {"order": start}, "content": items})
            } else {
                json!({"type": "bulletList", "content": items})
            }
        }
        Block::Rule => json!({"type": "rule"}),
        Block::Image { url, alt } => paragraph(&[markdown::image_link(url, alt, &Marks::default())]),
        Block::Math(expr) => paragraph(&[Inline::Text(format!("$${expr}$$"), Marks::default())]),
        Block::Table { header, rows } => {
            let cell = |kind: &str, inl: &Vec<Inline>| json!({"type": kind, "attrs": {}, "content": [paragraph(inl)]});
            let mut trs = vec![
                json!({"type": "tableRow", "content": header.iter().map(|c| cell("tableHeader", c)).collect::<Vec<_>>()}),
            ];
            for row in rows {
                trs.push(json!({"type": "tableRow", "content": row.iter().map(|c| cell("tableCell", c)).collect::<Vec<_>>()}));
            }
            json!({"type": "table", "attrs": {"isNumberColumnEnabled": false, "layout": "default"}, "content": trs})
        }
    }
}

fn paragraph(inl: &[Inline]) -> Value {
    json!({"type": "paragraph", "content": inline_nodes(inl)})
}

/// Blocks a blockquote may hold (paragraphs, lists, code); others degrade to a paragraph.
fn quote_child(block: &Block) -> Vec<Value> {
    match block {
        Block::Paragraph(_) | Block::List { .. } | Block::Code { .. } | Block::Image { .. } | Block::Math(_) => {
            vec![block_node(block)]
        }
        Block::Heading(_, inl) => vec![paragraph(&strong(inl))],
        Block::Quote(inner) => inner.iter().flat_map(quote_child).collect(),
        Block::Rule => Vec::new(),
        Block::Table { header, rows } => std::iter::once(header).chain(rows).map(|r| paragraph(&row_text(r))).collect(),
    }
}

fn strong(inl: &[Inline]) -> Vec<Inline> {
    inl.iter()
        .map(|i| match i {
            Inline::Text(t, m) => Inline::Text(t.clone(), Marks { strong: true, ..m.clone() }),
            other => other.clone(),
        })
        .collect()
}

fn row_text(cells: &[Vec<Inline>]) -> Vec<Inline> {
    let mut out = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            out.push(Inline::Text(" | ".into(), Marks::default()));
        }
        out.extend(c.iter().cloned());
    }
    out
}

/// A list item: first child must be a paragraph (or code block); nested lists follow.
fn list_item(item: &Item) -> Value {
    let mut content = Vec::new();
    for b in &item.blocks {
        match b {
            Block::Paragraph(_) | Block::List { .. } | Block::Code { .. } | Block::Image { .. } | Block::Math(_) => {
                content.push(block_node(b))
            }
            Block::Heading(_, inl) => content.push(paragraph(&strong(inl))),
            other => content.extend(quote_child(other)),
        }
    }
    let starts_ok = content.first().is_some_and(|c| c["type"] == "paragraph" || c["type"] == "codeBlock");
    if !starts_ok {
        content.insert(0, json!({"type": "paragraph", "content": []}));
    }
    json!({"type": "listItem", "content": content})
}

fn inline_nodes(inl: &[Inline]) -> Vec<Value> {
    inl.iter()
        .filter_map(|i| match i {
            Inline::Break => Some(json!({"type": "hardBreak"})),
            Inline::Text(t, _) if t.is_empty() => None,
            Inline::Text(t, m) => {
                let mut marks = Vec::new();
                if m.code {
                    marks.push(json!({"type": "code"}));
                } else {
                    if m.strong {
                        marks.push(json!({"type": "strong"}));
                    }
                    if m.em {
                        marks.push(json!({"type": "em"}));
                    }
                    if m.strike {
                        marks.push(json!({"type": "strike"}));
                    }
                }
                if let Some(href) = &m.link {
                    marks.push(json!({"type": "link", "attrs": {"href": href}}));
                }
                let mut node = json!({"type": "text", "text": t});
                if !marks.is_empty() {
                    node["marks"] = Value::Array(marks);
                }
                Some(node)
            }
        })
        .collect()
}

/// An ADF document (or any ADF node) as Markdown. Non-ADF input (a plain string, as Jira Server
/// and some custom fields return) is passed through as text.
pub fn to_markdown(adf: &Value) -> String {
    // Rendering recurses once per level; a document nested deeper than any real one (ADF allows a
    // few levels of lists and panels) is read as its text, one node per line.
    if crate::text::nests_deeper_than(adf, MAX_JSON_DEPTH) {
        return crate::text::strings_under(adf, &["text"]).join("\n");
    }
    match adf {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("doc") => blocks_md(children(adf)),
        other => blocks_md(std::slice::from_ref(other)),
    }
}

fn children(node: &Value) -> &[Value] {
    node.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn attr<'a>(node: &'a Value, name: &str) -> &'a Value {
    &node["attrs"][name]
}

fn blocks_md(nodes: &[Value]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut inline_run: Vec<Value> = Vec::new();
    for node in nodes {
        if is_inline(node) {
            inline_run.push(node.clone());
            continue;
        }
        if !inline_run.is_empty() {
            parts.push(inline_md(&std::mem::take(&mut inline_run)));
        }
        let md = block_md(node);
        if !md.trim().is_empty() {
            parts.push(md);
        }
    }
    if !inline_run.is_empty() {
        parts.push(inline_md(&inline_run));
    }
    parts.join("\n\n")
}

fn is_inline(node: &Value) -> bool {
    matches!(
        node["type"].as_str().unwrap_or(""),
        "text"
            | "hardBreak"
            | "mention"
            | "emoji"
            | "inlineCard"
            | "date"
            | "status"
            | "placeholder"
            | "inlineExtension"
    )
}

fn block_md(node: &Value) -> String {
    let kind = node["type"].as_str().unwrap_or("");
    match kind {
        "paragraph" => inline_md(children(node)),
        "heading" => {
            let level = attr(node, "level").as_u64().unwrap_or(1).clamp(1, 6) as usize;
            write::heading(level, &inline_md(children(node)))
        }
        "codeBlock" => {
            let text: String = children(node).iter().filter_map(|t| t["text"].as_str()).collect();
            write::fenced(attr(node, "language").as_str().unwrap_or(""), &text)
        }
        "blockquote" => write::quote(&blocks_md(children(node))),
        "bulletList" => children(node)
            .iter()
            .map(|item| write::item(&item_md(children(item)), "- ", 2))
            .collect::<Vec<_>>()
            .join("\n"),
        "orderedList" => {
            let start = attr(node, "order").as_u64().unwrap_or(1);
            children(node)
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let marker = write::number(start + i as u64);
                    write::item(&item_md(children(item)), &marker, marker.len())
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        "taskList" => children(node)
            .iter()
            .map(|item| {
                if item["type"] == "taskList" {
                    return write::item(&block_md(item), "  ", 2);
                }
                let done = attr(item, "state").as_str() == Some("DONE");
                write::item(&inline_md(children(item)), if done { "- [x] " } else { "- [ ] " }, 2)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "decisionList" => children(node)
            .iter()
            .map(|item| write::item(&inline_md(children(item)), "- Decision: ", 2))
            .collect::<Vec<_>>()
            .join("\n"),
        "rule" => "---".to_string(),
        "panel" => {
            let label = write::panel_label(attr(node, "panelType").as_str().unwrap_or("info"));
            write::quote(&format!("**{label}:** {}", blocks_md(children(node))))
        }
        "expand" | "nestedExpand" => {
            let title = attr(node, "title").as_str().unwrap_or("");
            let body = blocks_md(children(node));
            if title.is_empty() { body } else { format!("**{title}**\n\n{body}") }
        }
        "table" => table_md(node),
        "mediaSingle" | "mediaGroup" => {
            children(node).iter().map(block_md).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
        }
        "media" => {
            let name = attr(node, "alt").as_str().filter(|s| !s.is_empty()).unwrap_or("file");
            format!("[attachment: {name}]")
        }
        "blockCard" | "embedCard" => attr(node, "url").as_str().map(|u| format!("<{u}>")).unwrap_or_default(),
        "extension" | "bodiedExtension" => {
            let body = blocks_md(children(node));
            if body.is_empty() {
                let key = attr(node, "extensionKey").as_str().unwrap_or("extension");
                format!("[{key}]")
            } else {
                body
            }
        }
        _ if is_inline(node) => inline_md(std::slice::from_ref(node)),
        _ => blocks_md(children(node)),
    }
}

/// A list item's blocks: nested lists follow their paragraph directly (a tight list).
fn item_md(nodes: &[Value]) -> String {
    write::item_body(
        nodes.iter().map(|node| {
            (matches!(node["type"].as_str(), Some("bulletList" | "orderedList" | "taskList")), block_md(node))
        }),
    )
}

fn table_md(node: &Value) -> String {
    let rows: Vec<Vec<String>> = children(node)
        .iter()
        .map(|row| children(row).iter().map(|cell| write::cell(&blocks_md(children(cell)))).collect())
        .collect();
    write::table(&rows, 0)
}

/// Mark names of a text node, in a canonical order.
fn marks_of(node: &Value) -> (Vec<&str>, Option<&str>) {
    let mut names = Vec::new();
    let mut href = None;
    for m in node["marks"].as_array().into_iter().flatten() {
        match m["type"].as_str() {
            Some("link") => href = m["attrs"]["href"].as_str(),
            Some(n @ ("strong" | "em" | "strike" | "code")) => names.push(n),
            _ => {}
        }
    }
    names.sort_unstable();
    (names, href)
}

fn inline_md(nodes: &[Value]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < nodes.len() {
        let node = &nodes[i];
        match node["type"].as_str().unwrap_or("") {
            "text" => {
                // Adjacent text nodes with the same marks render as one run.
                let key = marks_of(node);
                let mut text = node["text"].as_str().unwrap_or("").to_string();
                while let Some(next) = nodes.get(i + 1) {
                    if next["type"] == "text" && marks_of(next) == key {
                        text.push_str(next["text"].as_str().unwrap_or(""));
                        i += 1;
                    } else {
                        break;
                    }
                }
                out.push_str(&decorate(&text, &key.0, key.1));
            }
            "hardBreak" => out.push_str("  \n"),
            "mention" => {
                let text = attr(node, "text").as_str().unwrap_or("");
                if text.is_empty() {
                    out.push_str(&format!("@{}", attr(node, "id").as_str().unwrap_or("someone")));
                } else if text.starts_with('@') {
                    out.push_str(text);
                } else {
                    out.push('@');
                    out.push_str(text);
                }
            }
            "emoji" => {
                let text = attr(node, "text").as_str().or(attr(node, "shortName").as_str()).unwrap_or("");
                out.push_str(text);
            }
            "inlineCard" => {
                if let Some(u) = attr(node, "url").as_str() {
                    out.push_str(u);
                }
            }
            "date" => {
                let ts = attr(node, "timestamp");
                let ms = ts.as_str().and_then(|s| s.parse::<i64>().ok()).or(ts.as_i64());
                if let Some(day) = ms.and_then(|ms| crate::time::date_text(ms.div_euclid(1000))) {
                    out.push_str(&day);
                }
            }
            "status" => {
                if let Some(t) = attr(node, "text").as_str() {
                    out.push_str(&format!("[{t}]"));
                }
            }
            "placeholder" => {}
            _ => {
                if let Some(t) = node["text"].as_str() {
                    out.push_str(t);
                } else {
                    out.push_str(&inline_md(children(node)));
                }
            }
        }
        i += 1;
    }
    out
}

/// Wraps text in Markdown marks, keeping surrounding spaces outside the markers.
fn decorate(text: &str, marks: &[&str], href: Option<&str>) -> String {
    write::hug(text, |core| {
        let mut core = core.to_string();
        if marks.contains(&"code") {
            let ticks = if core.contains('`') { "``" } else { "`" };
            let pad = if core.starts_with('`') || core.ends_with('`') { " " } else { "" };
            core = format!("{ticks}{pad}{core}{pad}{ticks}");
        } else {
            for (mark, marker) in [("strike", "~~"), ("em", "*"), ("strong", "**")] {
                if marks.contains(&mark) {
                    core = format!("{marker}{core}{marker}");
                }
            }
        }
        match href {
            Some(h) => write::link(&core, h),
            None => core,
        }
    })
}

/// Whether a JSON value is an ADF document (custom fields may hold one).
pub fn is_doc(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("doc") && v.get("content").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_valid_adf() {
        let doc = from_markdown(
            "## Steps\n\n1. Open **the** [app](https://a.io)\n2. Run `make`\n   - nested\n\n```sh\nmake test\n```\n\n> note",
        );
        assert_eq!(doc["type"], "doc");
        assert_eq!(doc["version"], 1);
        let c = &doc["content"];
        assert_eq!(
            c[0],
            json!({"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Steps"}]})
        );
        assert_eq!(c[1]["type"], "orderedList");
        assert_eq!(c[1]["attrs"]["order"], 1);
        let first = &c[1]["content"][0]["content"][0]["content"];
        assert_eq!(
            first,
            &json!([
                {"type": "text", "text": "Open "},
                {"type": "text", "text": "the", "marks": [{"type": "strong"}]},
                {"type": "text", "text": " "},
                {"type": "text", "text": "app", "marks": [{"type": "link", "attrs": {"href": "https://a.io"}}]}
            ])
        );
        let second = &c[1]["content"][1];
        assert_eq!(
            second["content"][0]["content"][1],
            json!({"type": "text", "text": "make", "marks": [{"type": "code"}]})
        );
        assert_eq!(second["content"][1]["type"], "bulletList");
        assert_eq!(
            c[2],
            json!({"type": "codeBlock", "attrs": {"language": "sh"}, "content": [{"type": "text", "text": "make test"}]})
        );
        assert_eq!(c[3]["type"], "blockquote");
        assert_eq!(from_markdown(""), json!({"type": "doc", "version": 1, "content": []}));
    }

    #[test]
    fn code_marks_only_combine_with_links() {
        let doc = from_markdown("**`x`**");
        assert_eq!(doc["content"][0]["content"][0]["marks"], json!([{"type": "code"}]));
    }

    #[test]
    fn list_items_start_with_a_paragraph() {
        let doc = from_markdown("- # heading item\n-\n  - only nested");
        let items = &doc["content"][0]["content"];
        assert_eq!(items[0]["content"][0]["type"], "paragraph");
        assert_eq!(items[0]["content"][0]["content"][0]["marks"], json!([{"type": "strong"}]));
        assert_eq!(items[1]["content"][0], json!({"type": "paragraph", "content": []}));
        assert_eq!(items[1]["content"][1]["type"], "bulletList");
    }

    #[test]
    fn adf_renders_as_markdown() {
        let adf = json!({"type": "doc", "version": 1, "content": [
            {"type": "heading", "attrs": {"level": 3}, "content": [{"type": "text", "text": "Context"}]},
            {"type": "paragraph", "content": [
                {"type": "text", "text": "Hi "},
                {"type": "mention", "attrs": {"id": "5b10", "text": "@Ada Lovelace"}},
                {"type": "text", "text": ", see ", "marks": []},
                {"type": "text", "text": "the log ", "marks": [{"type": "strong"}]},
                {"type": "text", "text": "here", "marks": [{"type": "link", "attrs": {"href": "https://l.io"}}, {"type": "em"}]},
                {"type": "hardBreak"},
                {"type": "text", "text": "due "},
                {"type": "date", "attrs": {"timestamp": "1767225600000"}},
                {"type": "text", "text": " "},
                {"type": "status", "attrs": {"text": "BLOCKED", "color": "red"}},
                {"type": "emoji", "attrs": {"shortName": ":smile:", "text": "😄"}}
            ]},
            {"type": "bulletList", "content": [
                {"type": "listItem", "content": [
                    {"type": "paragraph", "content": [{"type": "text", "text": "one"}]},
                    {"type": "orderedList", "attrs": {"order": 3}, "content": [
                        {"type": "listItem", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "three"}]}]}
                    ]}
                ]}
            ]},
            {"type": "panel", "attrs": {"panelType": "warning"}, "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Careful"}]}]},
            {"type": "codeBlock", "attrs": {"language": "rust"}, "content": [{"type": "text", "text": "let x = 1;"}]},
            {"type": "taskList", "attrs": {"localId": "t"}, "content": [
                {"type": "taskItem", "attrs": {"localId": "a", "state": "DONE"}, "content": [{"type": "text", "text": "shipped"}]},
                {"type": "taskItem", "attrs": {"localId": "b", "state": "TODO"}, "content": [{"type": "text", "text": "announce"}]}
            ]},
            {"type": "table", "content": [
                {"type": "tableRow", "content": [
                    {"type": "tableHeader", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "Env"}]}]},
                    {"type": "tableHeader", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "State"}]}]}
                ]},
                {"type": "tableRow", "content": [
                    {"type": "tableCell", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "prod"}]}]},
                    {"type": "tableCell", "content": [{"type": "paragraph", "content": [{"type": "text", "text": "a|b"}]}]}
                ]}
            ]},
            {"type": "mediaSingle", "content": [{"type": "media", "attrs": {"id": "abc", "type": "file", "collection": "c", "alt": "screenshot.png"}}]},
            {"type": "rule"}
        ]});
        let md = to_markdown(&adf);
        assert_eq!(
            md,
            "### Context\n\n\
             Hi @Ada Lovelace, see **the log** [*here*](https://l.io)  \ndue 2026-01-01 [BLOCKED]😄\n\n\
             - one\n  3. three\n\n\
             > **Warning:** Careful\n\n\
             ```rust\nlet x = 1;\n```\n\n\
             - [x] shipped\n- [ ] announce\n\n\
             | Env | State |\n| --- | --- |\n| prod | a\\|b |\n\n\
             [attachment: screenshot.png]\n\n\
             ---"
        );
    }

    /// Attack: every run of a link's label carries the link's URL as a mark, so a label of 40,000
    /// runs around a long URL multiplied it 40,000 times. The links of one document share a budget
    /// linear in its length; past it labels stay, without links.
    #[test]
    fn links_cannot_amplify_the_document() {
        let url = format!("https://e.io/{}", "u".repeat(8_000));
        let label = "*a* b ".repeat(20_000);
        let md = format!("[{label}]({url})");
        // The links add at most a few times the input to what the label alone converts to.
        let (out, unlinked) = (from_markdown(&md).to_string(), from_markdown(&label).to_string());
        assert!(out.len() < unlinked.len() + 6 * md.len(), "{} bytes from {}", out.len(), md.len());
        assert!(out.contains(&url), "the first runs keep their link");
        let storage = crate::confluence::storage::from_markdown(&md);
        let unlinked = crate::confluence::storage::from_markdown(&label);
        assert!(storage.len() < unlinked.len() + 6 * md.len(), "{} bytes from {}", storage.len(), md.len());
    }

    /// Attack: an issue description whose ADF nests `content` 100,000 levels (a value built in
    /// memory; over the wire serde_json stops at 128) recursed once per level. It is read as text.
    #[test]
    fn deep_documents_are_read_as_text() {
        let mut node = json!({"type": "text", "text": "innermost"});
        // Built by moving each level in (`json!` would serialise, recursively, what it is given).
        for _ in 0..100_000 {
            let mut parent = json!({"type": "blockquote"});
            parent["content"] = Value::Array(vec![node]);
            node = parent;
        }
        let mut doc = json!({"type": "doc", "version": 1});
        doc["content"] = Value::Array(vec![node]);
        assert_eq!(to_markdown(&doc), "innermost");
        let mut stack = vec![doc];
        while let Some(v) = stack.pop() {
            match v {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
        // Up to the bound (and so anything serde_json parses) is rendered with its structure.
        let mut node = json!({"type": "paragraph", "content": [{"type": "text", "text": "q"}]});
        for _ in 0..45 {
            let mut parent = json!({"type": "blockquote"});
            parent["content"] = Value::Array(vec![node]);
            node = parent;
        }
        let md = to_markdown(&json!({"type": "doc", "content": [node]}));
        assert!(md.starts_with("> > > "), "{md}");
        // Markdown from the agent nested 100,000 levels becomes a bounded document.
        let doc = from_markdown(&("> ".repeat(100_000) + "deep"));
        assert!(!crate::text::nests_deeper_than(&doc, MAX_JSON_DEPTH));
        assert!(doc.to_string().contains("deep"));
        let doc = from_markdown(&("- ".repeat(100_000) + "deep"));
        assert!(!crate::text::nests_deeper_than(&doc, MAX_JSON_DEPTH));
        assert!(doc.to_string().contains("deep"));
    }

    #[test]
    fn round_trip_keeps_structure() {
        let md = "Intro with **bold**, *em*, ~~old~~ and `code`.\n\n- a\n- b\n  1. c\n\n```\nraw\n```\n\n| A | B |\n| --- | --- |\n| 1 | 2 |";
        assert_eq!(to_markdown(&from_markdown(md)), md);
        assert_eq!(to_markdown(&json!("plain text")), "plain text");
        assert_eq!(to_markdown(&Value::Null), "");
    }
}
