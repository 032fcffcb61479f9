//! Deterministic fakes: a seeded generator expanding a secret format into a sample.

/// A seeded xorshift generator: the same fakes on every run.
pub(crate) struct Fakes(u64);

impl Fakes {
    pub(crate) fn new(seed: &str) -> Fakes {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in seed.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Fakes(h | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn pick(&mut self, alphabet: &[u8]) -> char {
        char::from(alphabet[(self.next() % alphabet.len() as u64) as usize])
    }

    /// `format` with each `{<class><n>}` replaced by `n` random characters of the class:
    /// `a` alphanumeric, `h` lowercase hex, `H` uppercase hex, `d` digits, `u` uppercase and
    /// digits, `l` lowercase and digits, `L` letters, `x` alphanumeric with `_-`, `e` with
    /// `_-=`, `b` base64. Random runs of 8 or more start with a letter and hold a digit, as
    /// real keys almost always do. Returns the text and its random runs.
    pub(crate) fn expand(&mut self, format: &str) -> (String, Vec<String>) {
        let mut out = String::new();
        let mut parts = Vec::new();
        let mut rest = format;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = open + rest[open..].find('}').unwrap();
            let spec = &rest[open + 1..close];
            let (class, n) = spec.split_at(1);
            let n: usize = n.parse().unwrap();
            let alphabet: &[u8] = match class {
                "a" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "h" => b"0123456789abcdef",
                "H" => b"0123456789ABCDEF",
                "d" => b"0123456789",
                "u" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                "l" => b"abcdefghijklmnopqrstuvwxyz0123456789",
                "L" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                "x" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
                "e" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=",
                "b" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                other => panic!("unknown class {other}"),
            };
            let mut part: Vec<char> = (0..n).map(|_| self.pick(alphabet)).collect();
            if n >= 8 && !matches!(class, "d" | "L") {
                let letters: Vec<u8> = alphabet
                    .iter()
                    .copied()
                    .filter(u8::is_ascii_alphabetic)
                    .collect();
                part[0] = self.pick(&letters);
                part[1 + (self.next() % (n as u64 - 1)) as usize] = self.pick(b"0123456789");
            }
            let part: String = part.into_iter().collect();
            out.push_str(&part);
            parts.push(part);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        (out, parts)
    }
}
