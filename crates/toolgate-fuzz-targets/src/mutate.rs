//! The fuzz smoke's mutator: libFuzzer's basic mutations without its coverage feedback —
//! bit flips, byte edits, ASCII digit changes, runs inserted, deleted and duplicated,
//! crossover with another corpus input, dictionary words inserted — from a seeded generator,
//! so a failure is reproduced from its seed (`TOOLGATE_FUZZ_SEED`).

/// xorshift64*: small, fast, and the same sequence for the same seed everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        usize::try_from(self.next_u64() % u64::try_from(n).unwrap_or(u64::MAX)).unwrap_or(0)
    }

    fn byte(&mut self) -> u8 {
        self.next_u64().to_le_bytes()[0]
    }
}

/// The words of a libFuzzer dictionary file (`"…"` per line, `\xNN`, `\"` and `\\` escapes;
/// `#` comments).
pub fn parse_dict(text: &str) -> Vec<Vec<u8>> {
    let mut words = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let (Some(start), Some(end)) = (line.find('"'), line.rfind('"')) else {
            continue;
        };
        if line.starts_with('#') || end <= start {
            continue;
        }
        let raw = &line.as_bytes()[start + 1..end];
        let mut word = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            match (raw[i], raw.get(i + 1)) {
                (b'\\', Some(b'x')) => {
                    let hex = std::str::from_utf8(raw.get(i + 2..i + 4).unwrap_or_default())
                        .ok()
                        .and_then(|h| u8::from_str_radix(h, 16).ok());
                    match hex {
                        Some(b) => {
                            word.push(b);
                            i += 4;
                        }
                        None => {
                            word.push(b'\\');
                            i += 1;
                        }
                    }
                }
                (b'\\', Some(&c)) => {
                    word.push(c);
                    i += 2;
                }
                (c, _) => {
                    word.push(c);
                    i += 1;
                }
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

/// Interesting bytes libFuzzer also tries.
const SPECIAL: [u8; 12] = [
    0, 1, 0x7f, 0x80, 0xff, b'"', b'\\', b'\n', b'{', b'}', b'%', b' ',
];

/// A mutation of `input` (1 to 4 edits), at most `max_len` bytes; `other` is a second corpus
/// input for crossover.
pub fn mutate(
    rng: &mut Rng,
    input: &[u8],
    other: &[u8],
    dict: &[Vec<u8>],
    max_len: usize,
) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(10) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = rng.byte();
            }
            2 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = SPECIAL[rng.below(SPECIAL.len())];
            }
            3 => {
                let n = 1 + rng.below(8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
                out.splice(at..at, bytes);
            }
            4 if !out.is_empty() => {
                let n = 1 + rng.below(out.len().min(16));
                let end = (at + n).min(out.len());
                out.drain(at.min(end)..end);
            }
            5 if !out.is_empty() => {
                let from = rng.below(out.len());
                let n = 1 + rng.below((out.len() - from).min(32));
                let run = out[from..from + n].to_vec();
                out.splice(at..at, run);
            }
            6 if !other.is_empty() => {
                let from = rng.below(other.len());
                let n = 1 + rng.below((other.len() - from).min(64));
                out.splice(at..at, other[from..from + n].iter().copied());
            }
            7 if !other.is_empty() => {
                // Crossover: this input's head, the other's tail.
                let cut = rng.below(other.len());
                out.truncate(at);
                out.extend_from_slice(&other[cut..]);
            }
            8 if !dict.is_empty() => {
                let word = &dict[rng.below(dict.len())];
                out.splice(at..at, word.iter().copied());
            }
            _ => {
                if let Some(i) = (0..out.len())
                    .map(|k| (k + at) % out.len().max(1))
                    .find(|&i| out.get(i).is_some_and(u8::is_ascii_digit))
                {
                    out[i] = b'0' + u8::try_from(rng.below(10)).unwrap_or(0);
                } else {
                    out.insert(at, SPECIAL[rng.below(SPECIAL.len())]);
                }
            }
        }
    }
    out.truncate(max_len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_mutations() {
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..50)
                .map(|_| mutate(&mut rng, b"{\"a\": 12}", b"[1,2,3]", &[b"xyz".to_vec()], 64))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().all(|m| m.len() <= 64));
    }

    #[test]
    fn dictionary_words_are_unescaped() {
        let words = parse_dict("# comment\n\"[limits]\"\nkw=\"\\x00a\\\"b\"\n\n");
        assert_eq!(words, vec![b"[limits]".to_vec(), b"\x00a\"b".to_vec()]);
    }
}
