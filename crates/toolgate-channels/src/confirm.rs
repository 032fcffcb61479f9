//! The typed confirmation a dangerous tool needs, and what a text reply to a card asks —
//! shared by the approval channels and the conversations' cards in chat apps, so both hold
//! the same rule: a tap alone never approves a dangerous tool.

use toolgate_store::approvals::{ApprovalRequest, DecisionScope};

/// Checks what was typed for `request`: `Ok(Some(name))` to pass as the decision's
/// confirmation, `Ok(None)` when none is needed, or the refusal to tell the user.
///
/// `replied` is a text reply to the card: it approves only when it is the tool's name,
/// whatever the tool.
pub fn typed_name(
    typed: Option<&str>,
    replied: bool,
    request: &ApprovalRequest,
    approve: bool,
) -> Result<Option<String>, String> {
    let typed = typed.map(str::trim);
    if replied && typed != Some(request.tool.as_str()) {
        return Err(format!(
            "`{}` is not `{}`: a reply approves only when it is the tool's name (optionally \
             followed by session or always). Not approved; use the buttons otherwise.",
            typed.unwrap_or_default(),
            request.tool
        ));
    }
    if !(approve && request.requires_confirmation) {
        return Ok(None);
    }
    match typed {
        Some(typed) if typed == request.tool => Ok(Some(request.tool.clone())),
        Some("") | None => Err(format!(
            "{} is dangerous: a tap does not approve it. Reply to the card with `{}` (or type \
             it in the card's box, then tap Approve).",
            request.tool, request.tool
        )),
        Some(other) => Err(format!(
            "`{other}` is not `{}`: not approved. Type the tool's name exactly.",
            request.tool
        )),
    }
}

/// A text reply to a card: the name typed, and the scope named after it (once when none).
pub fn reply(text: &str) -> Result<(String, DecisionScope), String> {
    let mut words = text.split_whitespace();
    let typed = words.next().unwrap_or_default().to_owned();
    let scope = match words.next() {
        None => DecisionScope::Once,
        Some(word) => word
            .parse()
            .map_err(|_| format!("`{word}` is not once, session or always: not approved."))?,
    };
    Ok((typed, scope))
}
