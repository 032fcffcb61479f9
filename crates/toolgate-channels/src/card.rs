//! What a chat message shows for one approval request, service-neutral: plain text (never
//! markup, so nothing in the arguments can format or forge the message), rows of buttons,
//! and — for a dangerous tool — the name to type before approving.
//!
//! The preview is the console's: the whole redacted arguments with whitespace runs and
//! invisible characters made visible, never shortened. Long arguments are paged; the page
//! buttons carry the page number, so paging needs no state.

use std::time::{Duration, UNIX_EPOCH};

use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, DecisionScope, hides_value, visible_value,
};

use crate::action::{Action, ButtonData};

/// Argument text per page, in UTF-16 code units (Telegram's measure; never fewer than
/// characters, Slack's): with the header, a page stays under both Telegram's 4,096-unit
/// message and Slack's 3,000-character text block.
pub const PAGE_CHARS: usize = 2_400;

/// One button.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    pub label: String,
    /// [`ButtonData::encode`]d.
    pub data: String,
    pub style: ButtonStyle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonStyle {
    Plain,
    Primary,
    Danger,
}

/// A rendered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub text: String,
    pub rows: Vec<Vec<Button>>,
    /// Set while a dangerous request is open: approving needs this name typed.
    pub confirm: Option<String>,
}

/// The request as an open card showing `page` (clamped) of its arguments.
pub fn open_card(r: &ApprovalRequest, page: usize) -> Card {
    let pages = argument_pages(r);
    let page = page.min(pages.len() - 1);
    let mut text = header(r);
    text.push_str(&page_text(&pages, page));
    if r.requires_confirmation {
        text.push_str(&format!(
            "\n\n⚠ Approving {} needs its name typed, never a tap alone. Reply to this \
             message with `{}` (add `session` or `always` for a wider approval), or type it \
             in the box where there is one.",
            r.tool, r.tool
        ));
    }
    let mut rows = vec![vec![
        button(
            r,
            "Approve once",
            Action::Approve(DecisionScope::Once),
            ButtonStyle::Primary,
        ),
        button(
            r,
            "This session",
            Action::Approve(DecisionScope::Session),
            ButtonStyle::Plain,
        ),
        button(
            r,
            "Always",
            Action::Approve(DecisionScope::Always),
            ButtonStyle::Plain,
        ),
        button(r, "Deny", Action::Deny, ButtonStyle::Danger),
    ]];
    if pages.len() > 1 {
        let mut nav = Vec::new();
        if page > 0 {
            nav.push(page_button(r, page - 1, "◀ Previous"));
        }
        if page + 1 < pages.len() {
            nav.push(page_button(r, page + 1, "Next ▶"));
        }
        rows.push(nav);
    }
    Card {
        text,
        rows,
        confirm: r.requires_confirmation.then(|| r.tool.clone()),
    }
}

/// The request once it is no longer pending: what happened, who decided and where, the
/// first page of what was asked; no buttons.
pub fn closed_card(r: &ApprovalRequest) -> Card {
    let pages = argument_pages(r);
    let mut text = format!("{}\n\n", outcome_line(r));
    text.push_str(&header(r));
    text.push_str(&page_text(&pages, 0));
    Card {
        text,
        rows: Vec::new(),
        confirm: None,
    }
}

/// One line saying how the request ended.
pub fn outcome_line(r: &ApprovalRequest) -> String {
    let by = r.decided_by.as_deref().unwrap_or("someone");
    let via = r
        .decided_via
        .as_deref()
        .map(|v| format!(" via {v}"))
        .unwrap_or_else(|| " via the console, CLI or API".to_owned());
    let when = r.decided_at_ms.map(time).unwrap_or_default();
    match r.status {
        ApprovalStatus::Approved => {
            let scope = match r.scope.unwrap_or(DecisionScope::Once) {
                DecisionScope::Once => "once",
                DecisionScope::Session => "for this session",
                DecisionScope::Always => "always",
            };
            format!("✅ Approved {scope} by {by}{via} at {when}")
        }
        ApprovalStatus::Denied => format!("❌ Denied by {by}{via} at {when}"),
        ApprovalStatus::Expired => format!(
            "⌛ Expired at {} without a decision: the call was refused, the caller must retry",
            time(r.expires_at_ms)
        ),
        ApprovalStatus::Abandoned => {
            "⏹ Abandoned: the caller stopped waiting before a decision".to_owned()
        }
        ApprovalStatus::Pending => "⏳ Waiting for a decision".to_owned(),
    }
}

fn header(r: &ApprovalRequest) -> String {
    let mut text = format!(
        "Approval needed: {} ({} risk)\nRequest: {}\nCaller: {} · role {} · session {}\n",
        r.tool,
        r.risk.as_str(),
        r.id,
        r.principal,
        r.role,
        r.session
    );
    if let (Some(iss), Some(sub)) = (&r.issuer, &r.subject) {
        text.push_str(&format!("Vouched for by: {iss} (subject {sub})\n"));
    }
    text.push_str(&format!("Expires: {}\n", time(r.expires_at_ms)));
    if hides_value(&r.arguments) {
        text.push_str(
            "⚠ The arguments contain invisible characters or unusual whitespace, shown \
             marked below: read them as shown.\n",
        );
    }
    text.push_str("\nArguments (secrets redacted):\n");
    text
}

fn page_text(pages: &[String], page: usize) -> String {
    let mut text = pages[page].clone();
    if pages.len() > 1 {
        text.push_str(&format!("\n\n(page {} of {})", page + 1, pages.len()));
    }
    text
}

/// The arguments as shown, split into pages of at most [`PAGE_CHARS`] characters, at a line
/// break when one is near. Always at least one page.
pub fn argument_pages(r: &ApprovalRequest) -> Vec<String> {
    let shown = serde_json::to_string_pretty(&visible_value(&r.arguments))
        .unwrap_or_else(|_| "(arguments cannot be shown)".to_owned());
    split_pages(&shown, PAGE_CHARS)
}

fn split_pages(text: &str, limit: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut pages = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        // As many characters as fit in `limit` UTF-16 units.
        let mut end = start;
        let mut units = 0;
        while end < chars.len() && units + chars[end].len_utf16() <= limit {
            units += chars[end].len_utf16();
            end += 1;
        }
        if end < chars.len()
            && let Some(nl) = chars[start..end].iter().rposition(|c| *c == '\n')
            && nl > (end - start) / 2
        {
            end = start + nl + 1;
        }
        pages.push(chars[start..end].iter().collect());
        start = end;
    }
    if pages.is_empty() {
        pages.push(String::new());
    }
    pages
}

fn button(r: &ApprovalRequest, label: &str, action: Action, style: ButtonStyle) -> Button {
    Button {
        label: label.to_owned(),
        data: ButtonData::new(&r.id, action).encode(),
        style,
    }
}

fn page_button(r: &ApprovalRequest, page: usize, label: &str) -> Button {
    let n = u16::try_from(page).unwrap_or(u16::MAX);
    button(r, label, Action::Page(n), ButtonStyle::Plain)
}

fn time(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_protocol::Risk;

    pub(crate) fn request(arguments: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            id: "apr_0123456789ab".into(),
            created_at_ms: 1_700_000_000_000,
            expires_at_ms: 1_700_000_600_000,
            status: ApprovalStatus::Pending,
            principal: "agent-7".into(),
            session: "s1".into(),
            role: "default".into(),
            tool: "write_file".into(),
            risk: Risk::Write,
            args_hash: "h".into(),
            arguments,
            requires_confirmation: false,
            decided_by: None,
            decided_via: None,
            decided_at_ms: None,
            scope: None,
            pattern: None,
            reason: None,
            consumed: false,
            issuer: None,
            subject: None,
        }
    }

    #[test]
    fn the_whole_argument_text_is_on_the_pages_in_order() {
        let long: String = (0..400).map(|i| format!("line {i}\n")).collect();
        let r = request(json!({ "path": "a.md", "content": long }));
        let pages = argument_pages(&r);
        assert!(pages.len() > 1);
        assert!(pages.iter().all(|p| p.encode_utf16().count() <= PAGE_CHARS));
        let whole = serde_json::to_string_pretty(&visible_value(&r.arguments)).unwrap();
        assert_eq!(pages.concat(), whole, "nothing lost or reordered");
        let first = open_card(&r, 0);
        assert!(first.text.contains("(page 1 of"));
        assert_eq!(first.rows.len(), 2, "decision row and page row");
        assert_eq!(first.rows[1].len(), 1, "no previous on the first page");
        let last = open_card(&r, 999);
        assert!(last.text.contains(&format!("(page {} of", pages.len())));
        for card in [&first, &last] {
            assert!(card.text.chars().count() < 3_000, "fits a Slack text block");
        }
    }

    #[test]
    fn pages_of_emoji_stay_under_telegrams_limit() {
        let r = request(json!({ "content": "😀".repeat(5_000) }));
        let pages = argument_pages(&r);
        assert!(pages.len() >= 4);
        for page in 0..pages.len() {
            let card = open_card(&r, page);
            assert!(card.text.encode_utf16().count() < 4_096, "page {page}");
        }
        assert_eq!(pages.concat().matches('😀').count(), 5_000);
    }

    #[test]
    fn hidden_characters_are_shown_and_flagged() {
        let r = request(json!({ "command": "ls\u{202e}txt.exe" }));
        let card = open_card(&r, 0);
        assert!(card.text.contains("invisible characters"));
        assert!(!card.text.contains('\u{202e}'));
    }

    #[test]
    fn dangerous_requests_ask_for_the_typed_name_and_closed_cards_have_no_buttons() {
        let mut r = request(json!({ "command": "rm -rf build" }));
        r.tool = "shell".into();
        r.requires_confirmation = true;
        let card = open_card(&r, 0);
        assert_eq!(card.confirm.as_deref(), Some("shell"));
        assert!(card.text.contains("Reply to this message with `shell`"));
        assert!(card.text.contains("never a tap alone"));
        r.status = ApprovalStatus::Approved;
        r.decided_by = Some("alice".into());
        r.decided_via = Some("slack:ops".into());
        r.decided_at_ms = Some(1_700_000_001_000);
        r.scope = Some(DecisionScope::Once);
        let closed = closed_card(&r);
        assert!(closed.rows.is_empty());
        assert!(closed.confirm.is_none());
        assert!(
            closed
                .text
                .starts_with("✅ Approved once by alice via slack:ops")
        );
    }
}
