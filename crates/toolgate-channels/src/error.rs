//! [`ChannelsError`]: why the approval channels could not be built.

use crate::secret::MissingSecret;

/// Why the hub could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ChannelsError {
    #[error(transparent)]
    Secret(#[from] MissingSecret),
    #[error("channel `{0}`: {1}")]
    Channel(String, String),
}
