//! What chat services send the bots (`toolgate_chatbots`), whoever sends it: a Telegram
//! update, a Slack event or interaction, a WeCom callback (its XML, and its ciphertext under
//! a fixed key, signed so decryption is reached), and the text splitting of answers.
//!
//! Properties: nothing panics; WeCom's crypto opens what it sealed, byte for byte, and
//! refuses a flipped signature; every piece of a split answer is within the limit, in the
//! service's measure, and the pieces keep every character but the separators cut at.

use serde_json::Value;
use toolgate_chatbots::telegram::inbound::{Me, incoming};
use toolgate_chatbots::text::{split, split_bytes};
use toolgate_chatbots::wecom::crypto::WecomCrypto;
use toolgate_chatbots::wecom::inbound;

/// WeCom's documented example key.
const KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

pub fn run(data: &[u8]) {
    let _ = toolgate_chatbots::slack::request(data, Some("U0TGBOT01"));
    if let Ok(update) = serde_json::from_slice::<Value>(data) {
        let me = Me {
            id: 7,
            username: "toolgate_test_bot".into(),
        };
        let _ = incoming(&update, Some(&me));
        let _ = incoming(&update, None);
    }
    let text = String::from_utf8_lossy(data);
    let _ = inbound::message(&text);
    let _ = inbound::field(&text, "Encrypt");
    let Ok(crypto) = WecomCrypto::new("tok", KEY, "ww1") else {
        panic!("the example key is valid");
    };
    // Whatever the ciphertext, opening it never panics.
    let sig = crypto.signature("1", "2", &text);
    let _ = crypto.open(&sig, "1", "2", &text);
    // What it seals it opens, and only with the right signature.
    let random = [data.first().copied().unwrap_or(0); 16];
    let Ok(sealed) = crypto.encrypt(&text, random) else {
        panic!("sealing never fails");
    };
    let sig = crypto.signature("3", "4", &sealed);
    assert_eq!(crypto.open(&sig, "3", "4", &sealed).as_deref(), Ok(&*text));
    let mut flipped = sig.clone().into_bytes();
    flipped[0] = if flipped[0] == b'0' { b'1' } else { b'0' };
    let flipped = String::from_utf8(flipped).unwrap_or_default();
    assert!(crypto.open(&flipped, "3", "4", &sealed).is_err());
    // Splitting: within the limit, nothing lost but the separators.
    let max = 4 + usize::from(data.first().copied().unwrap_or(0)) % 60;
    for (pieces, measure) in [
        (split(&text, max), char::len_utf16 as fn(char) -> usize),
        (split_bytes(&text, max), char::len_utf8),
    ] {
        for p in &pieces {
            assert!(
                p.chars().map(measure).sum::<usize>() <= max,
                "{p:?} over {max}"
            );
        }
        let kept: usize = pieces.iter().map(|p| p.chars().count()).sum();
        let all = text.chars().count();
        assert!(
            kept <= all && all - kept < pieces.len(),
            "{kept} of {all} kept"
        );
    }
}
