//! Why a conversation refused something.

use toolgate_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    #[error("no conversation {0}")]
    NotFound(String),
    /// The caller is not the conversation's user (nor an operator).
    #[error("conversation {0} is not yours")]
    NotYours(String),
    #[error("the message is empty")]
    Empty,
    #[error(
        "the message is {got} bytes, over the {max}-byte limit ([conversations] max_message_bytes)"
    )]
    TooLong { got: usize, max: usize },
    /// Too many messages already wait behind the running turn.
    #[error("{queued} messages already wait for their turn: wait for the answer, or send /stop")]
    Busy { queued: usize },
    /// Too many of the principal's conversations are busy at once.
    #[error(
        "{busy} of your conversations are already working ([conversations] max_busy_per_principal = {max}): wait for one to answer"
    )]
    TooManyBusy { busy: usize, max: usize },
    #[error("conversation {0} was ended (/new): continue in a new one")]
    Closed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
