//! Telegram: what arrives ([`inbound`]) and how the bot is reached (`toolgate_channels`'
//! Bot API client).

pub mod inbound;
