//! What a button says, in at most 64 bytes (Telegram's `callback_data` limit): the approval
//! it belongs to and what pressing it asks for. The request a tap acts on is the one its card
//! announced (the store's chat posts, which outlive a restart); the id in the data is only
//! checked against it, never trusted on its own.

use toolgate_store::approvals::DecisionScope;

/// What a tap asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Approve(DecisionScope),
    Deny,
    /// Show page `n` (0-based) of the request's preview.
    Page(u16),
}

/// One button's data: `a.once.apr_0123456789ab`, `d.apr_…`, `p.2.apr_…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonData {
    pub approval_id: String,
    pub action: Action,
}

impl ButtonData {
    pub fn new(approval_id: &str, action: Action) -> ButtonData {
        ButtonData {
            approval_id: approval_id.to_owned(),
            action,
        }
    }

    pub fn encode(&self) -> String {
        let id = &self.approval_id;
        match self.action {
            Action::Approve(scope) => format!("a.{}.{id}", scope.as_str()),
            Action::Deny => format!("d.{id}"),
            Action::Page(n) => format!("p.{n}.{id}"),
        }
    }

    /// `None` for anything this version did not write (the tap is answered as unknown).
    pub fn decode(data: &str) -> Option<ButtonData> {
        let mut parts = data.splitn(3, '.');
        let kind = parts.next()?;
        let (action, id) = match kind {
            "a" => {
                let scope = parts.next()?.parse().ok()?;
                (Action::Approve(scope), parts.next()?)
            }
            "d" => {
                let rest = parts.collect::<Vec<_>>().join(".");
                return is_approval_id(&rest).then(|| ButtonData::new(&rest, Action::Deny));
            }
            "p" => (Action::Page(parts.next()?.parse().ok()?), parts.next()?),
            _ => return None,
        };
        is_approval_id(id).then(|| ButtonData::new(id, action))
    }
}

/// `apr_` and 12 lowercase hex characters, as the store makes them.
pub fn is_approval_id(s: &str) -> bool {
    s.len() == 16
        && s.starts_with("apr_")
        && s[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "apr_0123456789ab";

    #[test]
    fn every_action_round_trips_within_64_bytes() {
        for action in [
            Action::Approve(DecisionScope::Once),
            Action::Approve(DecisionScope::Session),
            Action::Approve(DecisionScope::Always),
            Action::Deny,
            Action::Page(0),
            Action::Page(u16::MAX),
        ] {
            let data = ButtonData::new(ID, action);
            let text = data.encode();
            assert!(text.len() <= 64, "{text}");
            assert_eq!(ButtonData::decode(&text), Some(data));
        }
    }

    #[test]
    fn foreign_or_forged_data_is_not_understood() {
        for bad in [
            "",
            "a.once",
            "a.forever.apr_0123456789ab",
            "d.apr_0123456789AB",
            "d.apr_0123",
            "d.../etc/passwd",
            "p.x.apr_0123456789ab",
            "z.apr_0123456789ab",
            "a.once.apr_0123456789ab.extra",
        ] {
            assert_eq!(ButtonData::decode(bad), None, "{bad}");
        }
    }
}
