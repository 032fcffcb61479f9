//! A DOM subtree → plain text, the way a reader sees it: whitespace collapsed inside text,
//! blocks separated by a blank line, list items on their own line after `- `, table cells
//! separated by ` | `, `<br>` a line break, `<pre>` kept verbatim, images as their alt text.

use markup5ever_rcdom::{Node, NodeData};

const BLOCKS: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "body",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
];

/// The text of `root` and everything under it.
pub fn plain_text(root: &Node) -> String {
    let mut out = TextOut::default();
    out.walk(root, false);
    out.text.trim_end().to_owned()
}

/// Text written so far and the separator owed before the next word.
#[derive(Default)]
struct TextOut {
    text: String,
    /// Line breaks owed (0, 1 or 2).
    breaks: usize,
    /// A space is owed (whitespace seen between words).
    space: bool,
}

impl TextOut {
    fn walk(&mut self, node: &Node, pre: bool) {
        match &node.data {
            NodeData::Text { contents } => self.words(&contents.borrow(), pre),
            NodeData::Element { name, attrs, .. } => {
                let tag = &*name.local;
                match tag {
                    "br" => self.owe(1),
                    "img" => {
                        let alt = attrs
                            .borrow()
                            .iter()
                            .find(|a| &*a.name.local == "alt")
                            .map(|a| a.value.to_string());
                        if let Some(alt) = alt {
                            self.words(&alt, false);
                        }
                    }
                    "li" => {
                        self.owe(1);
                        self.push("- ");
                        self.children(node, pre);
                        self.owe(1);
                    }
                    "tr" => {
                        self.owe(1);
                        self.children(node, pre);
                        self.owe(1);
                    }
                    "td" | "th" => {
                        if !self.text.is_empty() && self.breaks == 0 {
                            self.push(" | ");
                        }
                        self.children(node, pre);
                    }
                    _ if BLOCKS.contains(&tag) => {
                        self.owe(2);
                        self.children(node, pre || tag == "pre");
                        self.owe(2);
                    }
                    _ => self.children(node, pre),
                }
            }
            _ => self.children(node, pre),
        }
    }

    fn children(&mut self, node: &Node, pre: bool) {
        for child in node.children.borrow().iter() {
            self.walk(child, pre);
        }
    }

    fn words(&mut self, text: &str, pre: bool) {
        if pre {
            self.push(text);
            return;
        }
        if text.starts_with(char::is_whitespace) {
            self.space = true;
        }
        let mut words = text.split_whitespace().peekable();
        while let Some(word) = words.next() {
            self.push(word);
            if words.peek().is_some() {
                self.space = true;
            }
        }
        if text.ends_with(char::is_whitespace) && !text.trim().is_empty() {
            self.space = true;
        }
    }

    /// Owes at least `n` line breaks before the next text.
    fn owe(&mut self, n: usize) {
        if !self.text.is_empty() {
            self.breaks = self.breaks.max(n);
        }
    }

    fn push(&mut self, s: &str) {
        if self.breaks > 0 {
            let trimmed = self.text.trim_end_matches([' ', '\t']).len();
            self.text.truncate(trimmed);
            let have = self.text.len() - self.text.trim_end_matches('\n').len();
            for _ in have..self.breaks {
                self.text.push('\n');
            }
        } else if self.space && !self.text.is_empty() && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
        self.breaks = 0;
        self.space = false;
        self.text.push_str(s);
    }
}
