//! Slack: cards are `chat.postMessage`s with Block Kit buttons (and, for a dangerous tool,
//! an input box for the typed name), decided cards are replaced with `chat.update`, a tap
//! arrives as a signed `block_actions` interaction on `toolgate serve`
//! (`POST /hooks/slack/<channel>`, [`verify`]), and what only the tapper should read goes
//! by `chat.postEphemeral`.

pub mod api;
pub mod interaction;
pub mod verify;

pub use api::SlackApi;
