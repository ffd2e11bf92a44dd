//! Notion blocks and rich text <-> Markdown, both ways, without I/O.
//!
//! Reading: a block tree (each block may carry its fetched `children` array) becomes Markdown:
//! headings, paragraphs, bulleted/numbered/to-do lists with nesting, quotes, callouts, code
//! fences, dividers, tables, images/files/bookmarks as links, equations, child pages and
//! databases as labelled lines; rich text keeps bold, italic, strikethrough, code and links.
//!
//! Writing: Markdown, read by the shared reader (`crate::markdown`, Notion's flavor: to-dos and
//! `$$` equations), becomes request-ready blocks (rich text split at Notion's 2,000-character
//! limit, nesting capped at the two levels one request may carry; deeper items are lifted).

use serde_json::{Value, json};

use crate::markdown::{self, Block, Inline, Item, NOTION, write};

/// Notion's limit on one rich-text object's content.
pub const TEXT_LIMIT: usize = 2000;
/// Notion's limit on a URL (a link's target, an image's address).
pub const URL_LIMIT: usize = 2000;
/// Nesting levels of children one create/append request may carry.
pub const MAX_NESTING: usize = 2;

// ---------------------------------------------------------------- rich text -> Markdown

/// Plain text of a rich-text array.
pub fn plain_text(rich_text: &Value) -> String {
    rich_text
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["plain_text"].as_str().or(t["text"]["content"].as_str()).unwrap_or_default())
        .collect()
}

/// Markdown for a rich-text array: **bold**, *italic*, ~~strike~~, `code`, [links](url), $math$.
pub fn rich_text_to_md(rich_text: &Value) -> String {
    let mut out = String::new();
    for t in rich_text.as_array().into_iter().flatten() {
        let text = t["plain_text"].as_str().or(t["text"]["content"].as_str()).unwrap_or_default();
        if text.is_empty() {
            continue;
        }
        if t["type"] == "equation" {
            out.push_str(&format!("${}$", t["equation"]["expression"].as_str().unwrap_or(text)));
            continue;
        }
        let a = &t["annotations"];
        let on = |k: &str| a[k].as_bool() == Some(true);
        let href = t["href"].as_str().or(t["text"]["link"]["url"].as_str());
        out.push_str(&write::hug(text, |core| {
            let mut s = if on("code") { format!("`{core}`") } else { core.to_string() };
            for (mark, marker) in [("italic", "*"), ("bold", "**"), ("strikethrough", "~~")] {
                if on(mark) {
                    s = format!("{marker}{s}{marker}");
                }
            }
            match href {
                Some(url) => format!("[{s}]({url})"),
                None => s,
            }
        }));
    }
    out
}

// ---------------------------------------------------------------- blocks -> Markdown

/// Which Markdown list a block continues: bullets and to-dos share one, numbers have their own.
fn list_family(t: &str) -> Option<u8> {
    match t {
        "bulleted_list_item" | "to_do" => Some(0),
        "numbered_list_item" => Some(1),
        _ => None,
    }
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| if l.is_empty() { String::new() } else { format!("{prefix}{l}") })
        .collect::<Vec<_>>()
        .join("\n")
}

fn file_url(obj: &Value) -> Option<&str> {
    obj["external"]["url"].as_str().or(obj["file"]["url"].as_str()).or(obj["url"].as_str())
}

/// Deepest JSON nesting of a block tree rendered as structure (each level of children is two, its
/// rich text three more); the plugin reads at most 5 levels of children, serde_json at most 128.
pub const MAX_JSON_DEPTH: usize = 96;

/// Markdown for a list of sibling blocks (each may carry its fetched `children`). Rendering
/// recurses once per level, so a tree deeper than [`MAX_JSON_DEPTH`] is read as its text.
pub fn blocks_to_md(blocks: &[Value]) -> String {
    if blocks.iter().any(|b| crate::text::nests_deeper_than(b, MAX_JSON_DEPTH)) {
        return blocks
            .iter()
            .flat_map(|b| crate::text::strings_under(b, &["plain_text"]))
            .collect::<Vec<_>>()
            .join("\n");
    }
    render_blocks(blocks)
}

fn render_blocks(blocks: &[Value]) -> String {
    let mut out = String::new();
    let mut prev: Option<&str> = None;
    let mut number = 0;
    for b in blocks {
        let t = b["type"].as_str().unwrap_or_default();
        number = if t == "numbered_list_item" { if prev == Some(t) { number + 1 } else { 1 } } else { 0 };
        let md = block_to_md(b, number);
        if md.is_empty() {
            continue;
        }
        if let Some(p) = prev {
            // Items of one list stay together; a different kind of list starts a new one.
            let same_list = list_family(p).is_some() && list_family(p) == list_family(t);
            out.push_str(if same_list { "\n" } else { "\n\n" });
        }
        out.push_str(&md);
        prev = Some(t);
    }
    out
}

fn children_md(b: &Value) -> String {
    b["children"].as_array().map(|c| render_blocks(c)).unwrap_or_default()
}

fn block_to_md(b: &Value, number: usize) -> String {
    let t = b["type"].as_str().unwrap_or_default();
    let data = &b[t];
    let text = rich_text_to_md(&data["rich_text"]);
    let kids = children_md(b);
    let with_kids = |head: String, pad: &str| {
        if kids.is_empty() { head } else { format!("{head}\n{}", indent(&kids, pad)) }
    };
    match t {
        "paragraph" => with_kids(text, "  "),
        "heading_1" | "heading_2" | "heading_3" | "heading_4" => {
            let level: usize = t[8..].parse().unwrap_or(3);
            let head = write::heading(level, &text);
            if kids.is_empty() { head } else { format!("{head}\n\n{kids}") }
        }
        "bulleted_list_item" => with_kids(format!("- {text}"), "  "),
        "numbered_list_item" => {
            let marker = write::number(number as u64);
            let pad = " ".repeat(marker.len());
            with_kids(format!("{marker}{text}"), &pad)
        }
        "to_do" => {
            let mark = if data["checked"].as_bool() == Some(true) { "x" } else { " " };
            with_kids(format!("- [{mark}] {text}"), "  ")
        }
        "toggle" => with_kids(format!("▸ {text}"), "  "),
        "quote" => {
            let body = if kids.is_empty() { text } else { format!("{text}\n\n{kids}") };
            write::quote(&body)
        }
        "callout" => {
            let icon = data["icon"]["emoji"].as_str().map(|e| format!("{e} ")).unwrap_or_default();
            let body = format!("{icon}{text}");
            let body = if kids.is_empty() { body } else { format!("{body}\n\n{kids}") };
            write::quote(&body)
        }
        "code" => {
            let lang = data["language"].as_str().filter(|l| *l != "plain text").unwrap_or_default();
            format!("```{lang}\n{}\n```", plain_text(&data["rich_text"]))
        }
        "equation" => format!("$$\n{}\n$$", data["expression"].as_str().unwrap_or_default()),
        "divider" => "---".to_string(),
        "image" => {
            let caption = plain_text(&data["caption"]);
            format!("![{caption}]({})", file_url(data).unwrap_or_default())
        }
        "video" | "audio" | "file" | "pdf" => {
            let caption = plain_text(&data["caption"]);
            let name = data["name"].as_str().filter(|n| !n.is_empty()).map(str::to_string);
            let label = name.or((!caption.is_empty()).then_some(caption)).unwrap_or_else(|| t.to_string());
            format!("[{label}]({})", file_url(data).unwrap_or_default())
        }
        "bookmark" | "embed" | "link_preview" => {
            let url = data["url"].as_str().unwrap_or_default();
            let caption = plain_text(&data["caption"]);
            format!("[{}]({url})", if caption.is_empty() { url } else { caption.as_str() })
        }
        "child_page" => format!(
            "📄 {} (child page {})",
            data["title"].as_str().unwrap_or("Untitled"),
            b["id"].as_str().unwrap_or("")
        ),
        "child_database" => {
            format!("🗃 {} (database {})", data["title"].as_str().unwrap_or("Untitled"), b["id"].as_str().unwrap_or(""))
        }
        "link_to_page" => {
            let id = data["page_id"].as_str().or(data["database_id"].as_str()).unwrap_or_default();
            format!("→ linked page {id}")
        }
        "table" => table_md(b),
        "column_list" | "column" | "synced_block" => kids,
        "table_of_contents" => "[Table of contents]".to_string(),
        "breadcrumb" | "template" => String::new(),
        "meeting_notes" => {
            let title = plain_text(&data["title"]);
            with_kids(
                format!("🎙 Meeting notes{}", if title.is_empty() { String::new() } else { format!(": {title}") }),
                "  ",
            )
        }
        "unsupported" => "[unsupported block]".to_string(),
        other => {
            if text.is_empty() {
                format!("[{other} block]")
            } else {
                with_kids(text, "  ")
            }
        }
    }
}

fn table_md(b: &Value) -> String {
    let rows: Vec<Vec<String>> = b["children"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["type"] == "table_row")
        .map(|r| {
            r["table_row"]["cells"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| rich_text_to_md(c).replace('|', "\\|").replace('\n', " "))
                .collect()
        })
        .collect();
    write::table(&rows, b["table"]["table_width"].as_u64().unwrap_or(0) as usize)
}

// ---------------------------------------------------------------- Markdown -> rich text

/// Whether Notion takes `url` as a link: web and mail URLs, and workspace paths (`/…`). Other
/// targets (relative paths, `javascript:`) and URLs past [`URL_LIMIT`] are refused by the API;
/// their label stays as text.
fn linkable(url: &str) -> bool {
    url.chars().count() <= URL_LIMIT && url.starts_with("http://")
        || url.starts_with("https://")
        || url.starts_with("mailto:")
        || url.starts_with('/')
}

/// Request-ready rich text for inline content, each run split at the 2,000-character limit.
fn rich_text(inlines: &[Inline]) -> Vec<Value> {
    let mut runs: Vec<(String, markdown::Marks)> = Vec::new();
    for i in inlines {
        let (text, mut marks) = match i {
            Inline::Text(t, m) => (t.as_str(), m.clone()),
            Inline::Break => ("\n", markdown::Marks::default()),
        };
        if marks.link.as_deref().is_some_and(|u| !linkable(u)) {
            marks.link = None;
        }
        match runs.last_mut() {
            Some((prev, m)) if *m == marks => prev.push_str(text),
            _ => runs.push((text.to_string(), marks)),
        }
    }
    let mut out = Vec::new();
    for (text, s) in runs {
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(TEXT_LIMIT) {
            let content: String = chunk.iter().collect();
            let mut t = json!({"type": "text", "text": {"content": content}});
            if let Some(url) = &s.link {
                t["text"]["link"] = json!({"url": url});
            }
            let mut ann = serde_json::Map::new();
            for (k, on) in [("bold", s.strong), ("italic", s.em), ("strikethrough", s.strike), ("code", s.code)] {
                if on {
                    ann.insert(k.into(), json!(true));
                }
            }
            if !ann.is_empty() {
                t["annotations"] = Value::Object(ann);
            }
            out.push(t);
        }
    }
    out
}

/// Request-ready rich text for one field of inline Markdown (a title, a comment, a property):
/// marks and links are read, block syntax stays text; split at the 2,000-character limit.
pub fn md_to_rich_text(text: &str) -> Vec<Value> {
    rich_text(&markdown::inlines(text, &NOTION))
}

/// Unformatted rich text (code blocks), split at the limit.
fn raw_rich_text(text: &str) -> Vec<Value> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(TEXT_LIMIT)
        .map(|c| json!({"type": "text", "text": {"content": c.iter().collect::<String>()}}))
        .collect()
}

// ---------------------------------------------------------------- Markdown -> blocks

fn block(kind: &str, mut data: Value, children: Vec<Value>) -> Value {
    if !children.is_empty() {
        data["children"] = Value::Array(children);
    }
    json!({"object": "block", "type": kind, kind: data})
}

fn text_block(kind: &str, inlines: &[Inline], children: Vec<Value>) -> Value {
    block(kind, json!({"rich_text": rich_text(inlines)}), children)
}

const LANGUAGES: &[&str] = &[
    "abap",
    "arduino",
    "bash",
    "basic",
    "c",
    "clojure",
    "coffeescript",
    "c++",
    "c#",
    "css",
    "dart",
    "diff",
    "docker",
    "elixir",
    "elm",
    "erlang",
    "flow",
    "fortran",
    "f#",
    "gherkin",
    "glsl",
    "go",
    "graphql",
    "groovy",
    "haskell",
    "html",
    "java",
    "javascript",
    "json",
    "julia",
    "kotlin",
    "latex",
    "less",
    "lisp",
    "livescript",
    "lua",
    "makefile",
    "markdown",
    "markup",
    "matlab",
    "mermaid",
    "nix",
    "objective-c",
    "ocaml",
    "pascal",
    "perl",
    "php",
    "plain text",
    "powershell",
    "prolog",
    "protobuf",
    "python",
    "r",
    "reason",
    "ruby",
    "rust",
    "sass",
    "scala",
    "scheme",
    "scss",
    "shell",
    "sql",
    "swift",
    "typescript",
    "vb.net",
    "verilog",
    "vhdl",
    "visual basic",
    "webassembly",
    "xml",
    "yaml",
];

fn notion_language(lang: &str) -> &'static str {
    let l = lang.trim().to_lowercase();
    let alias = match l.as_str() {
        "js" | "jsx" | "node" => "javascript",
        "ts" | "tsx" => "typescript",
        "py" | "python3" => "python",
        "sh" | "zsh" | "console" => "shell",
        "rs" => "rust",
        "yml" => "yaml",
        "cpp" | "cc" | "hpp" => "c++",
        "cs" | "csharp" => "c#",
        "rb" => "ruby",
        "kt" => "kotlin",
        "golang" => "go",
        "dockerfile" => "docker",
        "md" => "markdown",
        "text" | "txt" | "" => "plain text",
        "ps1" | "pwsh" => "powershell",
        other => other,
    };
    LANGUAGES.iter().find(|x| **x == alias).copied().unwrap_or("plain text")
}

/// Request-ready blocks for a Markdown document.
pub fn md_to_blocks(md: &str) -> Vec<Value> {
    let blocks: Vec<Value> = markdown::parse(md, &NOTION).iter().flat_map(to_notion).collect();
    limit_depth(blocks, 0)
}

/// A block's first paragraph is its text, the rest its children (list items, quotes).
fn text_and_children(blocks: &[Block]) -> (&[Inline], Vec<Value>) {
    match blocks {
        [Block::Paragraph(inl), rest @ ..] => (inl, rest.iter().flat_map(to_notion).collect()),
        all => (&[], all.iter().flat_map(to_notion).collect()),
    }
}

fn list_item(ordered: bool, item: &Item) -> Value {
    let (text, children) = text_and_children(&item.blocks);
    match (item.checked, ordered) {
        (Some(checked), _) => block("to_do", json!({"rich_text": rich_text(text), "checked": checked}), children),
        (None, true) => text_block("numbered_list_item", text, children),
        (None, false) => text_block("bulleted_list_item", text, children),
    }
}

fn to_notion(b: &Block) -> Vec<Value> {
    let one = match b {
        Block::Paragraph(inl) => text_block("paragraph", inl, Vec::new()),
        Block::Heading(level, inl) => {
            let kind = match level {
                1 => "heading_1",
                2 => "heading_2",
                _ => "heading_3",
            };
            text_block(kind, inl, Vec::new())
        }
        Block::Code { lang, text } => block(
            "code",
            json!({"rich_text": raw_rich_text(text), "language": notion_language(lang.as_deref().unwrap_or(""))}),
            Vec::new(),
        ),
        Block::Quote(inner) => {
            let (text, children) = text_and_children(inner);
            text_block("quote", text, children)
        }
        Block::List { ordered, items, .. } => return items.iter().map(|i| list_item(*ordered, i)).collect(),
        Block::Rule => block("divider", json!({}), Vec::new()),
        Block::Table { header, rows } => {
            let width = header.len().max(1);
            let children: Vec<Value> = std::iter::once(header)
                .chain(rows)
                .map(|r| {
                    let mut cells: Vec<Value> = r.iter().map(|c| json!(rich_text(c))).collect();
                    cells.resize(width, json!([]));
                    block("table_row", json!({"cells": cells}), Vec::new())
                })
                .collect();
            block("table", json!({"table_width": width, "has_column_header": true, "has_row_header": false}), children)
        }
        Block::Image { url, alt }
            if (url.starts_with("https://") || url.starts_with("http://")) && !url.contains(' ') && linkable(url) =>
        {
            let mut data = json!({"type": "external", "external": {"url": url}});
            if !alt.is_empty() {
                data["caption"] = json!(rich_text(&[Inline::Text(alt.clone(), markdown::Marks::default())]));
            }
            block("image", data, Vec::new())
        }
        Block::Image { url, alt } => {
            text_block("paragraph", &[markdown::image_link(url, alt, &markdown::Marks::default())], Vec::new())
        }
        Block::Math(expr) => block("equation", json!({"expression": expr}), Vec::new()),
    };
    vec![one]
}

/// Keeps children at most [`MAX_NESTING`] levels deep; deeper blocks are lifted to follow their
/// ancestor at the deepest allowed level.
fn limit_depth(blocks: Vec<Value>, depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    for mut b in blocks {
        let kind = b["type"].as_str().unwrap_or_default().to_string();
        let kids = b[&kind].as_object_mut().and_then(|d| d.remove("children"));
        let mut lifted = Vec::new();
        if let Some(Value::Array(kids)) = kids {
            if depth < MAX_NESTING || kind == "table" {
                let kept = limit_depth(kids, depth + 1);
                b[&kind]["children"] = Value::Array(kept);
            } else {
                lifted = limit_depth(kids, depth);
            }
        }
        out.push(b);
        out.extend(lifted);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(text: &str, ann: Value, href: Option<&str>) -> Value {
        json!({"type": "text", "text": {"content": text, "link": href.map(|u| json!({"url": u}))}, "plain_text": text, "href": href, "annotations": ann})
    }

    fn blk(kind: &str, text: &str) -> Value {
        json!({"object": "block", "id": format!("id-{text}"), "type": kind, kind: {"rich_text": [rt(text, json!({}), None)], "color": "default"}, "has_children": false})
    }

    #[test]
    fn rich_text_marks_and_links_become_markdown() {
        let text = json!([
            rt("Plain ", json!({"bold": false}), None),
            rt("bold ", json!({"bold": true}), None),
            rt("both", json!({"bold": true, "italic": true}), None),
            rt(" and ", json!({}), None),
            rt("code", json!({"code": true}), None),
            rt(" ", json!({}), None),
            rt("gone", json!({"strikethrough": true}), None),
            rt(" see ", json!({}), None),
            rt("docs", json!({}), Some("https://example.com/docs")),
            {"type": "equation", "equation": {"expression": "e=mc^2"}, "plain_text": "e=mc^2", "annotations": {}}
        ]);
        assert_eq!(
            rich_text_to_md(&text),
            "Plain **bold** ***both*** and `code` ~~gone~~ see [docs](https://example.com/docs)$e=mc^2$"
        );
        assert_eq!(plain_text(&text), "Plain bold both and code gone see docse=mc^2");
    }

    #[test]
    fn blocks_render_as_markdown_with_nesting_and_numbering() {
        let mut parent = blk("bulleted_list_item", "Fruits");
        parent["children"] = json!([blk("bulleted_list_item", "Apple"), blk("bulleted_list_item", "Pear")]);
        let mut todo = blk("to_do", "Ship it");
        todo["to_do"]["checked"] = json!(true);
        let mut code = blk("code", "fn main() {}");
        code["code"]["language"] = json!("rust");
        let mut callout = blk("callout", "Heads up");
        callout["callout"]["icon"] = json!({"type": "emoji", "emoji": "💡"});
        let mut table = json!({"type": "table", "table": {"table_width": 2, "has_column_header": true}});
        table["children"] = json!([
            {"type": "table_row", "table_row": {"cells": [[rt("Name", json!({}), None)], [rt("Qty", json!({}), None)]]}},
            {"type": "table_row", "table_row": {"cells": [[rt("a|b", json!({}), None)], [rt("2", json!({}), None)]]}}
        ]);
        let image = json!({"type": "image", "image": {"type": "file", "file": {"url": "https://s3.example/img.png", "expiry_time": "2026-01-01T00:00:00.000Z"}, "caption": [rt("Chart", json!({}), None)]}});
        let blocks = vec![
            blk("heading_1", "Plan"),
            blk("paragraph", "Intro text."),
            parent,
            blk("bulleted_list_item", "Vegetables"),
            blk("numbered_list_item", "First"),
            blk("numbered_list_item", "Second"),
            todo,
            blk("quote", "Be brief."),
            callout,
            code,
            json!({"type": "divider", "divider": {}}),
            table,
            image,
            json!({"id": "c0ffee", "type": "child_page", "child_page": {"title": "Notes"}}),
        ];
        assert_eq!(
            blocks_to_md(&blocks),
            "# Plan\n\nIntro text.\n\n- Fruits\n  - Apple\n  - Pear\n- Vegetables\n\n1. First\n2. Second\n\n- [x] Ship it\n\n> Be brief.\n\n> 💡 Heads up\n\n```rust\nfn main() {}\n```\n\n---\n\n| Name | Qty |\n| --- | --- |\n| a\\|b | 2 |\n\n![Chart](https://s3.example/img.png)\n\n📄 Notes (child page c0ffee)"
        );
    }

    #[test]
    fn inline_markdown_becomes_rich_text() {
        let r = md_to_rich_text("Hi **bold _it_** and `x*y` see [site](https://a.io) snake_case_name ~~old~~");
        let view: Vec<(String, Value)> = r
            .iter()
            .map(|t| {
                (t["text"]["content"].as_str().unwrap().to_string(), t.get("annotations").cloned().unwrap_or(json!({})))
            })
            .collect();
        assert_eq!(
            view,
            vec![
                ("Hi ".to_string(), json!({})),
                ("bold ".to_string(), json!({"bold": true})),
                ("it".to_string(), json!({"bold": true, "italic": true})),
                (" and ".to_string(), json!({})),
                ("x*y".to_string(), json!({"code": true})),
                (" see ".to_string(), json!({})),
                ("site".to_string(), json!({})),
                (" snake_case_name ".to_string(), json!({})),
                ("old".to_string(), json!({"strikethrough": true})),
            ]
        );
        assert_eq!(r[6]["text"]["link"]["url"], "https://a.io");
        assert_eq!(md_to_rich_text("2 * 3 * 4")[0]["text"]["content"], "2 * 3 * 4");
        let long = "a".repeat(4500);
        let split = md_to_rich_text(&long);
        assert_eq!(split.len(), 3);
        assert_eq!(split[2]["text"]["content"].as_str().unwrap().len(), 500);
    }

    #[test]
    fn markdown_documents_become_blocks() {
        let md = "# Title\n\nFirst line\nsecond line\n\n- one\n  - nested\n    - deeper\n      - deepest\n- two\n\n1. alpha\n2. beta\n\n- [ ] todo\n- [x] done\n\n> quoted\n\n```js\nlet x = 1;\n```\n\n---\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\n![Logo](https://example.com/logo.png)\n\n$$\nx^2\n$$";
        let b = md_to_blocks(md);
        let kinds: Vec<&str> = b.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "heading_1",
                "paragraph",
                "bulleted_list_item",
                "bulleted_list_item",
                "numbered_list_item",
                "numbered_list_item",
                "to_do",
                "to_do",
                "quote",
                "code",
                "divider",
                "table",
                "image",
                "equation"
            ]
        );
        assert_eq!(b[1]["paragraph"]["rich_text"][0]["text"]["content"], "First line\nsecond line");
        // Nesting is capped at two levels: "deepest" is lifted beside "deeper".
        let nested = &b[2]["bulleted_list_item"]["children"][0];
        assert_eq!(nested["bulleted_list_item"]["rich_text"][0]["text"]["content"], "nested");
        let level2 = nested["bulleted_list_item"]["children"].as_array().unwrap();
        let texts: Vec<&str> = level2
            .iter()
            .map(|b| b["bulleted_list_item"]["rich_text"][0]["text"]["content"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["deeper", "deepest"]);
        assert!(level2[0]["bulleted_list_item"].get("children").is_none());
        assert_eq!(b[7]["to_do"]["checked"], true);
        assert_eq!(b[9]["code"]["language"], "javascript");
        assert_eq!(b[9]["code"]["rich_text"][0]["text"]["content"], "let x = 1;");
        assert_eq!(b[11]["table"]["table_width"], 2);
        assert_eq!(b[11]["table"]["children"][1]["table_row"]["cells"][1][0]["text"]["content"], "2");
        assert_eq!(b[12]["image"]["external"]["url"], "https://example.com/logo.png");
        assert_eq!(b[13]["equation"]["expression"], "x^2");
    }

    #[test]
    fn markdown_round_trips_through_blocks() {
        let md = "## Steps\n\n1. Build **fast**\n2. Test\n   - unit\n\n- [ ] Deploy to [prod](https://prod.example)\n\n> Note: *careful*";
        let blocks = md_to_blocks(md);
        // Request blocks carry children inside the type object; rendered blocks carry them beside it.
        fn lift(b: &Value) -> Value {
            let mut b = b.clone();
            let kind = b["type"].as_str().unwrap().to_string();
            if let Some(Value::Array(kids)) = b[&kind].as_object_mut().unwrap().remove("children") {
                b["children"] = Value::Array(kids.iter().map(lift).collect());
            }
            b
        }
        let rendered: Vec<Value> = blocks.iter().map(lift).collect();
        assert_eq!(blocks_to_md(&rendered), md);
    }

    /// A page whose blocks nest 100,000 levels (a tree built in memory; the plugin reads 5 levels
    /// and serde_json stops at 128) is read as its text instead of recursing once per level.
    #[test]
    fn deep_block_trees_are_read_as_text() {
        let mut b = blk("paragraph", "innermost");
        for i in 0..100_000 {
            let mut parent = blk("toggle", &format!("t{i}"));
            parent["children"] = Value::Array(vec![b]);
            b = parent;
        }
        let md = blocks_to_md(std::slice::from_ref(&b));
        assert!(md.starts_with("t99999\n"), "{}", &md[..40]);
        assert!(md.ends_with("\ninnermost"));
        let mut stack = vec![b];
        while let Some(v) = stack.pop() {
            match v {
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    /// Markdown from the agent nested as deep as one 8 MiB message allows (a list item per line,
    /// each indented one more space) and inline spans nested 100,000 times: bounded recursion,
    /// every word kept.
    #[test]
    fn deep_markdown_becomes_bounded_blocks() {
        let md: String = (0..2_000).map(|k| format!("{}- item{k}\n", " ".repeat(k))).collect();
        let blocks = md_to_blocks(&md);
        let all = Value::Array(blocks).to_string();
        assert!(all.contains("item0") && all.contains("item1999"));
        assert!(!crate::text::nests_deeper_than(&serde_json::from_str::<Value>(&all).unwrap(), 64));
        let quotes: String =
            (0..1_000).map(|k| format!("{} x{k}\n{}\n", "> ".repeat(k + 1), "> ".repeat(k + 1).trim_end())).collect();
        let all = Value::Array(md_to_blocks(&quotes)).to_string();
        assert!(all.contains("x999"));
        for md in [">".repeat(100_000) + " q", "- ".repeat(100_000) + "item", "> 1. ".repeat(100_000) + "both"] {
            let all = Value::Array(md_to_blocks(&md));
            assert!(!crate::text::nests_deeper_than(&all, 16), "two levels of children at most");
            let all = all.to_string();
            assert!(all.contains(md.rsplit(' ').next().unwrap()), "{:.200}", all);
        }
        let link = format!("{}x{}", "[".repeat(100_000), "](https://e.io)".repeat(100_000));
        let rt = Value::Array(md_to_rich_text(&link)).to_string();
        assert!(rt.contains('x'));
        assert!(rt.len() < 4 * link.len(), "{} bytes from {}", rt.len(), link.len());
    }

    /// Attack: every 2,000-character piece of a run, and every run of a link's label, repeats the
    /// link's URL. A 1.5 MB "bare URL" (no space in it) became a 1.1 GB request body, and a label
    /// of 40,000 runs would repeat one long URL 40,000 times. URLs past Notion's 2,000 characters
    /// are not links, and the links of one document share a budget linear in its length.
    #[test]
    fn links_cannot_amplify_the_request() {
        let bare = format!("see https://e.io/{}", "a".repeat(1_500_000));
        let out = Value::Array(md_to_rich_text(&bare)).to_string();
        assert!(out.len() < 2 * bare.len(), "{}", out.len());
        assert!(!out.contains("\"link\""));
        let url = format!("https://e.io/{}", "u".repeat(1_900));
        let text = "*a* b ".repeat(20_000);
        let label = format!("[{text}]({url})");
        // The links add at most a few times the input to what the label alone converts to.
        let unlinked = Value::Array(md_to_rich_text(&text)).to_string().len();
        for out in [Value::Array(md_to_rich_text(&label)), Value::Array(md_to_blocks(&label))] {
            let out = out.to_string();
            assert!(out.len() < unlinked + 6 * label.len(), "{} bytes from {}", out.len(), label.len());
            assert!(out.contains(&url), "the first runs keep their link");
        }
        // Ordinary links are untouched; targets Notion refuses leave their label.
        let r = md_to_rich_text("[a](https://a.io) [b](javascript:alert(1)) [c](docs/c.md) [d](/page)");
        let links: Vec<(&Value, &Value)> =
            r.iter().map(|t| (&t["text"]["content"], &t["text"]["link"]["url"])).collect();
        assert_eq!(
            links,
            [(&json!("a"), &json!("https://a.io")), (&json!(" b c "), &Value::Null), (&json!("d"), &json!("/page"))]
        );
        assert_eq!(plain_text(&json!(r)), "a b c d");
    }
}
