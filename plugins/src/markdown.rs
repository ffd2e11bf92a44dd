//! The one Markdown reader of the converters: agents write Markdown, Jira wants ADF
//! (`crate::jira::adf`), Confluence storage XHTML (`crate::confluence::storage`) and Notion request
//! blocks (`crate::notion::markdown`). All three render from the block tree built here from
//! pulldown-cmark's event stream, so every product reads Markdown the same way: CommonMark with
//! GFM tables, strikethrough and (per [`Flavor`]) task lists and `$$` math; autolinks
//! (`<https://…>`) and bare `http(s)://` URLs become links, images links to the image (or an
//! image block when alone in a paragraph), raw HTML stays text.
//!
//! pulldown-cmark parses with its own stacks (no recursion per level); the tree built here is
//! rendered recursively, so quotes and lists nested past [`MAX_DEPTH`] are kept as the text of one
//! paragraph at that level.

pub mod write;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

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
    /// A hard line break (two trailing spaces or a backslash before the newline).
    Break,
}

/// One item of a list: its task checkbox (with [`Flavor::tasks`]) and its blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub checked: Option<bool>,
    pub blocks: Vec<Block>,
}

/// A block of a Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    Code {
        lang: Option<String>,
        text: String,
    },
    Quote(Vec<Block>),
    List {
        ordered: bool,
        start: u64,
        items: Vec<Item>,
    },
    Rule,
    Table {
        header: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    /// A paragraph that is one image and nothing else: its URL and alt text.
    Image {
        url: String,
        alt: String,
    },
    /// A paragraph that is one `$$…$$` display equation (with [`Flavor::math`]).
    Math(String),
}

/// How a product reads the Markdown it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavor {
    /// `- [ ]` / `- [x]` items carry a checkbox ([`Item::checked`]); otherwise the brackets stay text.
    pub tasks: bool,
    /// `$$…$$` alone in a paragraph is a [`Block::Math`]; other `$…$` spans stay text as written.
    pub math: bool,
    /// What a soft line break (a newline inside a paragraph) becomes in the text.
    pub soft_break: &'static str,
}

/// Jira and Confluence: newlines inside a paragraph fold to spaces, as in rendered Markdown.
pub const ATLASSIAN: Flavor = Flavor { tasks: false, math: false, soft_break: " " };
/// Notion: to-do items and block equations; newlines stay newlines (Notion shows them).
pub const NOTION: Flavor = Flavor { tasks: true, math: true, soft_break: "\n" };

/// Deepest nesting of block quotes and lists read as structure. Deeper content is kept as the
/// text of one paragraph at this level: `>` repeated 100,000 times converts (degraded) and the
/// recursive renderers never see more than this many levels.
pub const MAX_DEPTH: usize = 16;
/// Longest link target read as a link; a longer one leaves its label as plain text.
pub const MAX_URL: usize = 8192;

/// How many bytes of link targets the runs of one document may carry in all: every run of a
/// link's label repeats its URL (ADF marks, Notion rich text), so without a budget a label of many
/// short runs multiplies one long URL. Past it, labels stay and links are dropped.
fn link_budget(input: usize) -> usize {
    input.saturating_mul(4).saturating_add(64 * 1024)
}

/// Parses a Markdown document into blocks.
pub fn parse(markdown: &str, flavor: &Flavor) -> Vec<Block> {
    let mut options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    if flavor.tasks {
        options |= Options::ENABLE_TASKLISTS;
    }
    if flavor.math {
        options |= Options::ENABLE_MATH;
    }
    let mut b = Builder::new(*flavor, link_budget(markdown.len()));
    for event in Parser::new_ext(markdown, options) {
        b.event(event);
    }
    b.finish()
}

/// Inline Markdown of a one-line field (a title, a comment, a property): marks and links are read,
/// but no line opens a block (`# x`, `- x`, `1. x`, `> x` and indentation stay text as written).
/// Paragraphs (text after a blank line) join with a blank line.
pub fn inlines(text: &str, flavor: &Flavor) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::new();
    for block in parse(&write::inline_only(text), flavor) {
        let inl = match block {
            Block::Paragraph(inl) | Block::Heading(_, inl) => inl,
            Block::Code { text, .. } => vec![Inline::Text(text, Marks::default())],
            Block::Image { url, alt } => vec![image_link(&url, &alt, &Marks::default())],
            Block::Math(expr) => vec![Inline::Text(format!("$${expr}$$"), Marks::default())],
            other => vec![Inline::Text(plain_blocks(&[other]), Marks::default())],
        };
        if !out.is_empty() {
            out.push(Inline::Text("\n\n".into(), Marks::default()));
        }
        out.extend(inl);
    }
    merge(out)
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

/// The plain text of blocks, one block per line; iterative, for any depth.
pub fn plain_blocks(blocks: &[Block]) -> String {
    let mut lines = Vec::new();
    let mut stack: Vec<&Block> = blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        match b {
            Block::Paragraph(inl) | Block::Heading(_, inl) => lines.push(plain(inl)),
            Block::Code { text, .. } | Block::Math(text) => lines.push(text.clone()),
            Block::Quote(inner) => stack.extend(inner.iter().rev()),
            Block::List { items, .. } => stack.extend(items.iter().rev().flat_map(|i| i.blocks.iter().rev())),
            Block::Rule => {}
            Block::Table { header, rows } => {
                for row in std::iter::once(header).chain(rows) {
                    lines.push(row.iter().map(|c| plain(c)).collect::<Vec<_>>().join(" | "));
                }
            }
            Block::Image { url, alt } => lines.push(if alt.is_empty() { url.clone() } else { alt.clone() }),
        }
    }
    lines.join("\n")
}

/// An image inside text: a link to the image, labelled with its alt text (or its URL).
pub fn image_link(url: &str, alt: &str, marks: &Marks) -> Inline {
    let text = if alt.trim().is_empty() { url.to_string() } else { alt.to_string() };
    Inline::Text(text, Marks { link: Some(url.to_string()), ..marks.clone() })
}

/// Joins adjacent runs with the same marks; drops empty runs.
fn merge(items: Vec<Inline>) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::with_capacity(items.len());
    for item in items {
        match (out.last_mut(), item) {
            (_, Inline::Text(t, _)) if t.is_empty() => {}
            (Some(Inline::Text(prev, pm)), Inline::Text(t, m)) if *pm == m => prev.push_str(&t),
            (_, item) => out.push(item),
        }
    }
    out
}

fn is_url_start(s: &str) -> bool {
    s.starts_with("https://") || s.starts_with("http://")
}

/// Bare `http(s)://` URLs in unlinked, non-code runs become links (GFM's extended autolinks):
/// the URL ends at whitespace or `<`; trailing punctuation and an unbalanced `)` stay text.
fn linkify(items: Vec<Inline>, budget: &mut usize) -> Vec<Inline> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Inline::Text(text, marks) = item else {
            out.push(item);
            continue;
        };
        if marks.link.is_some() || marks.code || !text.contains("http") {
            out.push(Inline::Text(text, marks));
            continue;
        }
        let mut rest = text.as_str();
        let mut before = String::new();
        let mut prev: Option<char> = None;
        while !rest.is_empty() {
            let at_boundary = prev.is_none_or(|p| p.is_whitespace() || p == '(' || p == '*' || p == '_' || p == '~');
            if at_boundary && is_url_start(rest) {
                let run = rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len());
                if run > MAX_URL || run > *budget {
                    // Too long to be a link: the whole run is text (skipped once, so the scan stays linear).
                    before.push_str(&rest[..run]);
                    prev = rest[..run].chars().last();
                    rest = &rest[run..];
                    continue;
                }
                let mut end = run;
                loop {
                    let url = &rest[..end];
                    let Some(last) = url.chars().last() else { break };
                    let unbalanced = last == ')' && url.matches(')').count() > url.matches('(').count();
                    if matches!(last, '.' | ',' | ';' | ':' | '!' | '?' | '\'' | '"' | '*' | '_' | '~') || unbalanced {
                        end -= last.len_utf8();
                    } else {
                        break;
                    }
                }
                let url = &rest[..end];
                if url.len() > "https://".len() {
                    *budget -= url.len();
                    out.push(Inline::Text(std::mem::take(&mut before), marks.clone()));
                    out.push(Inline::Text(url.to_string(), Marks { link: Some(url.to_string()), ..marks.clone() }));
                    prev = url.chars().last();
                    rest = &rest[end..];
                    continue;
                }
            }
            let c = rest.chars().next().unwrap_or_default();
            before.push(c);
            prev = Some(c);
            rest = &rest[c.len_utf8()..];
        }
        out.push(Inline::Text(before, marks));
    }
    merge(out)
}

/// A container open while building.
enum Frame {
    Root(Vec<Block>),
    Quote(Vec<Block>),
    List { ordered: bool, start: u64, items: Vec<Item> },
    Item(Item),
    Table { header: Vec<Vec<Inline>>, rows: Vec<Vec<Vec<Inline>>>, row: Vec<Vec<Inline>> },
}

/// Where inline content is going.
enum Leaf {
    /// Loose text: a tight list item's, or a paragraph's.
    Text,
    Heading(u8),
    Cell,
    Code {
        lang: Option<String>,
        text: String,
    },
    Html(String),
}

struct Builder {
    flavor: Flavor,
    frames: Vec<Frame>,
    /// Quote and list levels open as structure.
    depth: usize,
    /// Block tags open inside a part flattened to text (past [`MAX_DEPTH`]); 0 when not flattening.
    flat: usize,
    leaf: Leaf,
    inl: Vec<Inline>,
    strong: usize,
    em: usize,
    strike: usize,
    links: Vec<Option<String>>,
    /// An open image: where its alt text starts in `inl`, and its URL.
    images: Vec<(usize, String)>,
    /// A paragraph that so far is one image: its index in `inl`, URL and alt text.
    lone_image: Option<(usize, String, String)>,
    /// Whether the paragraph holds anything but whitespace and one image.
    other_content: bool,
    /// A display equation alone in the paragraph.
    lone_math: Option<String>,
    /// Bytes of link targets runs may still carry ([`link_budget`]).
    budget: usize,
}

impl Builder {
    fn new(flavor: Flavor, budget: usize) -> Builder {
        Builder {
            flavor,
            frames: vec![Frame::Root(Vec::new())],
            depth: 0,
            flat: 0,
            leaf: Leaf::Text,
            inl: Vec::new(),
            strong: 0,
            em: 0,
            strike: 0,
            links: Vec::new(),
            images: Vec::new(),
            lone_image: None,
            other_content: false,
            lone_math: None,
            budget,
        }
    }

    /// The marks of the next run; a link is charged to the document's budget.
    fn marks(&mut self) -> Marks {
        let link = self.links.iter().rev().flatten().next().filter(|u| u.len() <= self.budget).cloned();
        if let Some(u) = &link {
            self.budget -= u.len();
        }
        Marks { strong: self.strong > 0, em: self.em > 0, strike: self.strike > 0, code: false, link }
    }

    fn text(&mut self, text: &str, marks: Marks) {
        if self.images.is_empty() && !text.trim().is_empty() {
            self.other_content = true;
        }
        self.inl.push(Inline::Text(text.to_string(), marks));
    }

    fn push_block(&mut self, block: Block) {
        match self.frames.last_mut() {
            Some(Frame::Root(blocks) | Frame::Quote(blocks)) => blocks.push(block),
            Some(Frame::Item(item)) => item.blocks.push(block),
            // Blocks never arrive directly inside a list or table; keep them in the item or root.
            Some(Frame::List { items, .. }) => items.push(Item { checked: None, blocks: vec![block] }),
            Some(Frame::Table { rows, .. }) => {
                rows.push(vec![vec![Inline::Text(plain_blocks(&[block]), Marks::default())]])
            }
            None => self.frames.push(Frame::Root(vec![block])),
        }
    }

    /// The inline content gathered so far, ready for a block.
    fn take_inlines(&mut self) -> Vec<Inline> {
        self.images.clear();
        linkify(merge(std::mem::take(&mut self.inl)), &mut self.budget)
    }

    /// Ends loose text (a paragraph, or a tight item's text) as a block.
    fn flush_text(&mut self) {
        let lone_image = self.lone_image.take();
        let lone_math = self.lone_math.take();
        let other = std::mem::replace(&mut self.other_content, false);
        if self.inl.is_empty() {
            return;
        }
        if let Some(expr) = lone_math
            && !other
        {
            self.inl.clear();
            self.push_block(Block::Math(expr.trim().to_string()));
            return;
        }
        if let Some((_, url, alt)) = lone_image
            && !other
        {
            self.inl.clear();
            self.push_block(Block::Image { url, alt });
            return;
        }
        let inl = self.take_inlines();
        if !inl.is_empty() {
            self.push_block(Block::Paragraph(inl));
        }
    }

    /// A separator between blocks flattened into one paragraph.
    fn flat_separator(&mut self) {
        if self.inl.last().is_some_and(|i| !matches!(i, Inline::Text(t, _) if t.ends_with(self.flavor.soft_break))) {
            let sep = self.flavor.soft_break.to_string();
            self.inl.push(Inline::Text(sep, Marks::default()));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => match &mut self.leaf {
                Leaf::Code { text, .. } if self.flat == 0 => text.push_str(&t),
                _ => {
                    let m = self.marks();
                    self.text(&t, m);
                }
            },
            Event::Code(t) => {
                let m = Marks { code: true, ..self.marks() };
                self.text(&t, m);
            }
            Event::InlineMath(t) => {
                let m = self.marks();
                self.text(&format!("${t}$"), m);
            }
            Event::DisplayMath(t) => {
                if self.inl.is_empty() && self.flat == 0 && matches!(self.leaf, Leaf::Text) {
                    self.lone_math = Some(t.to_string());
                    self.inl.push(Inline::Text(format!("$${t}$$"), Marks::default()));
                } else {
                    let m = self.marks();
                    self.text(&format!("$${t}$$"), m);
                }
            }
            Event::Html(t) => match &mut self.leaf {
                Leaf::Html(text) if self.flat == 0 => text.push_str(&t),
                _ => self.text(&t, Marks::default()),
            },
            Event::InlineHtml(t) => {
                let m = self.marks();
                self.text(&t, m);
            }
            Event::SoftBreak => {
                let m = self.marks();
                let sep = self.flavor.soft_break;
                self.inl.push(Inline::Text(sep.into(), m));
            }
            Event::HardBreak => self.inl.push(Inline::Break),
            Event::Rule => {
                if self.flat > 0 {
                    self.flat_separator();
                } else {
                    self.flush_text();
                    self.push_block(Block::Rule);
                }
            }
            Event::TaskListMarker(checked) => {
                if let Some(Frame::Item(item)) = self.frames.last_mut()
                    && self.flat == 0
                {
                    item.checked = Some(checked);
                } else {
                    let box_ = if checked { "[x] " } else { "[ ] " };
                    self.text(box_, Marks::default());
                }
            }
            Event::FootnoteReference(t) => {
                let m = self.marks();
                self.text(&format!("[^{t}]"), m);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Emphasis => self.em += 1,
            Tag::Strong => self.strong += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Superscript | Tag::Subscript => {}
            Tag::Link { link_type, dest_url, .. } => {
                let url = match link_type {
                    LinkType::Email => format!("mailto:{dest_url}"),
                    _ => dest_url.to_string(),
                };
                self.links.push((!url.is_empty() && url.len() <= MAX_URL).then_some(url));
            }
            Tag::Image { dest_url, .. } => {
                if self.images.is_empty() {
                    let alone = self.flat == 0 && matches!(self.leaf, Leaf::Text) && !self.other_content;
                    if alone && self.lone_image.is_none() {
                        self.lone_image = Some((self.inl.len(), dest_url.to_string(), String::new()));
                    } else {
                        self.other_content = true;
                    }
                }
                self.images.push((self.inl.len(), dest_url.to_string()));
            }
            _ if self.flat > 0 => {
                self.flat += 1;
                self.flat_separator();
            }
            Tag::Paragraph => {
                self.flush_text();
                self.leaf = Leaf::Text;
            }
            Tag::Heading { level, .. } => {
                self.flush_text();
                self.leaf = Leaf::Heading(heading_level(level));
            }
            Tag::CodeBlock(kind) => {
                self.flush_text();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                self.leaf = Leaf::Code { lang, text: String::new() };
            }
            Tag::HtmlBlock => {
                self.flush_text();
                self.leaf = Leaf::Html(String::new());
            }
            Tag::BlockQuote(_) | Tag::List(_) if self.depth >= MAX_DEPTH => {
                // Too deep to keep as structure: the rest of this container is one paragraph.
                self.flush_text();
                self.leaf = Leaf::Text;
                self.flat = 1;
            }
            Tag::BlockQuote(_) => {
                self.flush_text();
                self.depth += 1;
                self.frames.push(Frame::Quote(Vec::new()));
            }
            Tag::List(start) => {
                self.flush_text();
                self.depth += 1;
                self.frames.push(Frame::List {
                    ordered: start.is_some(),
                    start: start.unwrap_or(1),
                    items: Vec::new(),
                });
            }
            Tag::Item => {
                self.flush_text();
                self.leaf = Leaf::Text;
                self.frames.push(Frame::Item(Item { checked: None, blocks: Vec::new() }));
            }
            Tag::Table(_) => {
                self.flush_text();
                self.frames.push(Frame::Table { header: Vec::new(), rows: Vec::new(), row: Vec::new() });
            }
            Tag::TableHead | Tag::TableRow => {}
            Tag::TableCell => {
                self.inl.clear();
                self.leaf = Leaf::Cell;
            }
            // Not enabled: footnotes, definition lists, metadata blocks. Their text is kept.
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_text(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Emphasis => self.em = self.em.saturating_sub(1),
            TagEnd::Strong => self.strong = self.strong.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Superscript | TagEnd::Subscript => {}
            TagEnd::Link => {
                self.links.pop();
            }
            TagEnd::Image => {
                let Some((start, url)) = self.images.pop() else { return };
                let start = start.min(self.inl.len());
                let alt = plain(&self.inl[start..]);
                self.inl.truncate(start);
                if self.images.is_empty()
                    && let Some((at, _, text)) = &mut self.lone_image
                    && *at == start
                {
                    text.clone_from(&alt);
                }
                let marks = self.marks();
                if url.len() <= MAX_URL && url.len() <= self.budget {
                    self.budget -= url.len();
                    self.inl.push(image_link(&url, &alt, &marks));
                } else {
                    self.lone_image = None;
                    self.inl.push(Inline::Text(alt, marks));
                }
            }
            _ if self.flat > 0 => {
                self.flat -= 1;
                if self.flat == 0 {
                    // The flattened container ends: its text is one paragraph here.
                    self.leaf = Leaf::Text;
                    let inl = self.take_inlines();
                    let inl = trim_separators(inl, self.flavor.soft_break);
                    if !inl.is_empty() {
                        self.push_block(Block::Paragraph(inl));
                    }
                    self.lone_image = None;
                    self.lone_math = None;
                    self.other_content = false;
                } else {
                    self.flat_separator();
                }
            }
            TagEnd::Paragraph => self.flush_text(),
            TagEnd::Heading(_) => {
                let level = match self.leaf {
                    Leaf::Heading(l) => l,
                    _ => 1,
                };
                self.leaf = Leaf::Text;
                let inl = self.take_inlines();
                self.clear_paragraph_state();
                self.push_block(Block::Heading(level, inl));
            }
            TagEnd::CodeBlock => {
                if let Leaf::Code { lang, text } = std::mem::replace(&mut self.leaf, Leaf::Text) {
                    let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
                    self.push_block(Block::Code { lang, text });
                }
            }
            TagEnd::HtmlBlock => {
                if let Leaf::Html(text) = std::mem::replace(&mut self.leaf, Leaf::Text) {
                    let text = text.trim_end().split('\n').collect::<Vec<_>>().join(self.flavor.soft_break);
                    if !text.trim().is_empty() {
                        self.push_block(Block::Paragraph(vec![Inline::Text(text, Marks::default())]));
                    }
                }
            }
            TagEnd::BlockQuote(_) => {
                self.flush_text();
                if let Some(Frame::Quote(blocks)) = self.pop_frame() {
                    self.depth = self.depth.saturating_sub(1);
                    self.push_block(Block::Quote(blocks));
                }
            }
            TagEnd::List(_) => {
                self.flush_text();
                if let Some(Frame::List { ordered, start, items }) = self.pop_frame() {
                    self.depth = self.depth.saturating_sub(1);
                    self.push_block(Block::List { ordered, start, items });
                }
            }
            TagEnd::Item => {
                self.flush_text();
                if let Some(Frame::Item(item)) = self.pop_frame()
                    && let Some(Frame::List { items, .. }) = self.frames.last_mut()
                {
                    items.push(item);
                }
            }
            TagEnd::TableCell => {
                self.leaf = Leaf::Text;
                let cell = self.take_inlines();
                self.clear_paragraph_state();
                if let Some(Frame::Table { row, .. }) = self.frames.last_mut() {
                    row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(Frame::Table { header, row, .. }) = self.frames.last_mut() {
                    *header = std::mem::take(row);
                }
            }
            TagEnd::TableRow => {
                if let Some(Frame::Table { rows, row, .. }) = self.frames.last_mut() {
                    rows.push(std::mem::take(row));
                }
            }
            TagEnd::Table => {
                if let Some(Frame::Table { header, mut rows, .. }) = self.pop_frame() {
                    let width = header.len();
                    for r in &mut rows {
                        r.resize(width, Vec::new());
                    }
                    self.push_block(Block::Table { header, rows });
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => self.flush_text(),
        }
    }

    fn clear_paragraph_state(&mut self) {
        self.lone_image = None;
        self.lone_math = None;
        self.other_content = false;
    }

    /// Pops a container, never the root.
    fn pop_frame(&mut self) -> Option<Frame> {
        if self.frames.len() > 1 { self.frames.pop() } else { None }
    }

    fn finish(mut self) -> Vec<Block> {
        self.flush_text();
        // Events are balanced, so only the root is left; fold any rest in defensively.
        while self.frames.len() > 1 {
            match self.frames.pop() {
                Some(Frame::Quote(blocks)) => self.push_block(Block::Quote(blocks)),
                Some(Frame::List { ordered, start, items }) => self.push_block(Block::List { ordered, start, items }),
                Some(Frame::Item(item)) => {
                    if let Some(Frame::List { items, .. }) = self.frames.last_mut() {
                        items.push(item);
                    }
                }
                Some(Frame::Table { header, rows, .. }) => self.push_block(Block::Table { header, rows }),
                Some(Frame::Root(blocks)) => blocks.into_iter().for_each(|b| self.push_block(b)),
                None => break,
            }
        }
        match self.frames.pop() {
            Some(Frame::Root(blocks)) => blocks,
            _ => Vec::new(),
        }
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Drops separators at the ends of a flattened paragraph.
fn trim_separators(mut inl: Vec<Inline>, sep: &str) -> Vec<Inline> {
    while matches!(inl.last(), Some(Inline::Text(t, _)) if t.trim().is_empty() || t == sep) {
        inl.pop();
    }
    if let Some(Inline::Text(t, _)) = inl.last_mut() {
        let kept = t.trim_end().len();
        t.truncate(kept);
    }
    while matches!(inl.first(), Some(Inline::Text(t, _)) if t.trim().is_empty()) {
        inl.remove(0);
    }
    inl
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

    fn item(blocks: Vec<Block>) -> Item {
        Item { checked: None, blocks }
    }

    fn para(s: &str) -> Block {
        Block::Paragraph(vec![t(s)])
    }

    #[test]
    fn inline_marks_nest_and_escape() {
        assert_eq!(
            inlines("a **bold *both*** and `code` \\*not\\*", &ATLASSIAN),
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
        assert_eq!(inlines("snake_case_name stays", &ATLASSIAN), vec![t("snake_case_name stays")]);
        assert_eq!(
            inlines("~~gone~~ and ~also~", &ATLASSIAN),
            vec![m("gone", |m| m.strike = true), t(" and "), m("also", |m| m.strike = true)]
        );
        assert_eq!(inlines("2 * 3 * 4", &ATLASSIAN), vec![t("2 * 3 * 4")]);
        assert_eq!(inlines("AT&amp;T &copy;", &ATLASSIAN), vec![t("AT&T ©")]);
    }

    #[test]
    fn links_autolinks_and_breaks() {
        assert_eq!(
            inlines("see [the **docs**](https://x.io/a_(b)) or https://y.io/p.", &ATLASSIAN),
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
        assert_eq!(inlines("one  \ntwo\nthree", &ATLASSIAN), vec![t("one"), Inline::Break, t("two three")]);
        assert_eq!(inlines("one\ntwo", &NOTION), vec![t("one\ntwo")]);
        // Autolinks, e-mail autolinks, a bare URL in parentheses, reference links.
        assert_eq!(
            inlines("<https://a.io/x> <ada@example.com>", &ATLASSIAN),
            vec![
                m("https://a.io/x", |m| m.link = Some("https://a.io/x".into())),
                t(" "),
                m("ada@example.com", |m| m.link = Some("mailto:ada@example.com".into())),
            ]
        );
        assert_eq!(
            inlines("(see https://a.io/x_(y))", &ATLASSIAN),
            vec![t("(see "), m("https://a.io/x_(y)", |m| m.link = Some("https://a.io/x_(y)".into())), t(")"),]
        );
        let blocks = parse("[docs][d]\n\n[d]: https://d.io", &ATLASSIAN);
        assert_eq!(blocks, vec![Block::Paragraph(vec![m("docs", |m| m.link = Some("https://d.io".into()))])]);
        // Raw HTML is text; an image inside text is a link to the image.
        assert_eq!(
            inlines("a <b>x</b> ![chart](https://i.io/c.png)", &ATLASSIAN),
            vec![t("a <b>x</b> "), m("chart", |m| m.link = Some("https://i.io/c.png".into())),]
        );
    }

    #[test]
    fn one_line_fields_open_no_blocks() {
        for text in
            ["# not a heading", "- not a list", "1. not a list", "> not a quote", "    not code", "---", "| a |"]
        {
            assert_eq!(plain(&inlines(text, &NOTION)), text, "{text}");
        }
        assert_eq!(inlines("*em* title", &NOTION), vec![m("em", |m| m.em = true), t(" title")]);
        assert_eq!(
            inlines("<https://a.io>", &NOTION),
            vec![m("https://a.io", |m| m.link = Some("https://a.io".into()))]
        );
        assert_eq!(plain(&inlines("[x]: y", &NOTION)), "[x]: y");
        assert_eq!(plain(&inlines("a\n\nb", &NOTION)), "a\n\nb");
        assert_eq!(plain(&inlines("echo $HOME/$USER", &NOTION)), "echo $HOME/$USER");
    }

    #[test]
    fn blocks_lists_code_tables() {
        // A `|` inside a code span in a table cell is escaped (GFM), as a cell boundary otherwise.
        let md = "# Title\n\nIntro line\ncontinues.\n\n- a\n- b\n  1. inner\n  2. more\n- c\n\n```rust\nfn main() {}\n```\n\n> quoted\n\n---\n\n| A | B |\n|---|:-:|\n| 1 | `x\\|y` |\n";
        let blocks = parse(md, &ATLASSIAN);
        assert_eq!(blocks[0], Block::Heading(1, vec![t("Title")]));
        assert_eq!(blocks[1], para("Intro line continues."));
        let Block::List { ordered: false, items, .. } = &blocks[2] else { panic!("{:?}", blocks[2]) };
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[1],
            item(vec![
                para("b"),
                Block::List {
                    ordered: true,
                    start: 1,
                    items: vec![item(vec![para("inner")]), item(vec![para("more")])]
                }
            ])
        );
        assert_eq!(blocks[3], Block::Code { lang: Some("rust".into()), text: "fn main() {}".into() });
        assert_eq!(blocks[4], Block::Quote(vec![para("quoted")]));
        assert_eq!(blocks[5], Block::Rule);
        assert_eq!(
            blocks[6],
            Block::Table {
                header: vec![vec![t("A")], vec![t("B")]],
                rows: vec![vec![vec![t("1")], vec![m("x|y", |m| m.code = true)]]]
            }
        );
        assert_eq!(blocks.len(), 7);
    }

    #[test]
    fn ordered_start_and_loose_lists() {
        let blocks = parse("3. three\n\n4. four\n\nafter", &ATLASSIAN);
        assert_eq!(
            blocks[0],
            Block::List { ordered: true, start: 3, items: vec![item(vec![para("three")]), item(vec![para("four")])] }
        );
        assert_eq!(blocks[1], para("after"));
    }

    #[test]
    fn flavors_tasks_math_images() {
        let md = "- [ ] todo\n- [x] done\n\n$$\nx^2\n$$\n\n![Logo](https://e.io/l.png)\n\ncosts $5 and $6";
        let blocks = parse(md, &NOTION);
        assert_eq!(
            blocks[0],
            Block::List {
                ordered: false,
                start: 1,
                items: vec![
                    Item { checked: Some(false), blocks: vec![para("todo")] },
                    Item { checked: Some(true), blocks: vec![para("done")] }
                ]
            }
        );
        assert_eq!(blocks[1], Block::Math("x^2".into()));
        assert_eq!(blocks[2], Block::Image { url: "https://e.io/l.png".into(), alt: "Logo".into() });
        assert_eq!(blocks[3], para("costs $5 and $6"));
        let blocks = parse(md, &ATLASSIAN);
        let Block::List { items, .. } = &blocks[0] else { panic!("{:?}", blocks[0]) };
        assert_eq!(items[0], item(vec![para("[ ] todo")]));
        assert_eq!(blocks[1], para("$$ x^2 $$"));
    }

    fn depth(blocks: &[Block]) -> usize {
        let mut max = 0;
        let mut stack: Vec<(&Block, usize)> = blocks.iter().map(|b| (b, 0)).collect();
        while let Some((b, d)) = stack.pop() {
            match b {
                Block::Quote(inner) => stack.extend(inner.iter().map(|b| (b, d + 1))),
                Block::List { items, .. } => {
                    stack.extend(items.iter().flat_map(|i| i.blocks.iter()).map(|b| (b, d + 1)))
                }
                _ => {}
            }
            max = max.max(d + usize::from(matches!(b, Block::Quote(_) | Block::List { .. })));
        }
        max
    }

    /// Attack: Markdown from the agent nested 100,000 levels (quotes, lists, both, emphasis, link
    /// labels). pulldown-cmark reads it without recursing per level (checked here on a 512 KiB
    /// stack, a quarter of a tokio worker's), and the tree keeps at most [`MAX_DEPTH`] levels: the
    /// rest is text, every word kept.
    #[test]
    fn deep_nesting_degrades_to_text() {
        let run = || {
            let n = 100_000;
            let deep = [
                ">".repeat(n) + " end",
                "- ".repeat(n) + "end",
                "1. ".repeat(n) + "end",
                "> - ".repeat(n) + "end",
                (0..n).map(|k| format!("{}- x{k}\n", "  ".repeat(k % 40))).collect::<String>(),
            ];
            for md in deep {
                for flavor in [ATLASSIAN, NOTION] {
                    let blocks = parse(&md, &flavor);
                    assert!(depth(&blocks) <= MAX_DEPTH, "{}", depth(&blocks));
                    let text = plain_blocks(&blocks);
                    assert!(text.contains("end") || text.contains("x99999"), "{}", &text[..text.len().min(200)]);
                }
            }
            let link = format!("{}x{}", "[".repeat(n), "](https://e.io)".repeat(n));
            assert!(plain(&inlines(&link, &ATLASSIAN)).contains('x'), "the innermost text survives");
            let em = format!("{}x{}", "*".repeat(n), "*".repeat(n));
            assert!(plain(&inlines(&em, &ATLASSIAN)).contains('x'));
            for md in ["[".repeat(n), "<".repeat(n) + ">", "`".repeat(n), "](".repeat(n), "$".repeat(n)] {
                assert!(!inlines(&md, &NOTION).is_empty());
            }
        };
        std::thread::Builder::new().stack_size(512 * 1024).spawn(run).unwrap().join().unwrap();
        // Ordinary nesting is untouched; past the limit the text stays, without the markers.
        assert_eq!(depth(&parse("> > > x", &ATLASSIAN)), 3);
        let blocks = parse(&(">".repeat(MAX_DEPTH + 3) + " deep\n\nafter"), &ATLASSIAN);
        assert_eq!(depth(&blocks), MAX_DEPTH);
        assert_eq!(plain_blocks(&blocks), "deep\nafter");
    }
}
