//! The commands every entry point understands: `/new`, `/stop`, `/tools`, `/help` (and
//! Telegram's `/start`, which is `/help`). A message is a command only when its first word is
//! one of them (a bot's `@name` suffix allowed); anything else starting with `/` is an
//! ordinary message (a path, say).

use toolgate_gateway::Gateway;

/// The most tools `/tools` lists.
const TOOLS_SHOWN: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    New,
    Stop,
    Tools,
    Help,
}

impl Command {
    pub fn parse(text: &str) -> Option<Command> {
        let word = text.split_whitespace().next()?;
        // `/stop@toolgate_bot` in a Telegram group.
        let word = word.split_once('@').map_or(word, |(w, _)| w);
        Some(match word {
            "/new" => Command::New,
            "/stop" => Command::Stop,
            "/tools" => Command::Tools,
            "/help" | "/start" => Command::Help,
            _ => return None,
        })
    }

    pub fn help() -> String {
        "Ask me anything; I can use the tools your role allows, and a tool that needs approval shows a card here first.\n\
         /new — end this conversation and start a new one\n\
         /stop — stop the current turn\n\
         /tools — the tools I can use for you\n\
         /help — this list"
            .to_owned()
    }
}

/// `/tools`: what `role` may use, one line each.
pub fn tools(gateway: &Gateway, role: &str) -> String {
    let tools = toolgate_agent::visible_tools(gateway, role);
    if tools.is_empty() {
        return "No tools are available to you.".to_owned();
    }
    let mut lines = vec![format!("{} tools:", tools.len())];
    for t in tools.iter().take(TOOLS_SHOWN) {
        let first = t.description.lines().next().unwrap_or("").trim();
        let short: String = first.chars().take(100).collect();
        lines.push(format!("• {} — {short}", t.name));
    }
    if tools.len() > TOOLS_SHOWN {
        lines.push(format!("… and {} more", tools.len() - TOOLS_SHOWN));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_first_words_are_commands() {
        assert_eq!(Command::parse("/new"), Some(Command::New));
        assert_eq!(Command::parse("  /stop please"), Some(Command::Stop));
        assert_eq!(Command::parse("/tools@toolgate_bot"), Some(Command::Tools));
        assert_eq!(Command::parse("/start"), Some(Command::Help));
        assert_eq!(Command::parse("/etc/passwd: what is it?"), None);
        assert_eq!(Command::parse("hello /new"), None);
        assert_eq!(Command::parse(""), None);
    }
}
