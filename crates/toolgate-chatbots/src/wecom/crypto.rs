//! WeCom's callback crypto (企业微信 "加解密方案"): every callback carries
//! `msg_signature` = SHA-1 of the sorted concatenation of the callback token, the timestamp,
//! the nonce and the encrypted text; the text is AES-256-CBC under the EncodingAESKey
//! (43 characters of base64 → 32 bytes; the IV is its first 16 bytes), PKCS#7-padded to a
//! multiple of 32, and decrypts to 16 random bytes, the message's length (4 bytes, big
//! endian), the message, and the corp id it was meant for — checked here. A WeChat Official
//! Account uses the same scheme with its app id in place of the corp id.

use aws_lc_rs::cipher::{
    AES_256, DecryptingKey, DecryptionContext, EncryptingKey, EncryptionContext, UnboundCipherKey,
};
use aws_lc_rs::digest;
use aws_lc_rs::iv::FixedLength;
use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};

/// WeCom's keys end in bits a strict decoder refuses (the 43rd character is not canonical);
/// every WeCom implementation decodes them leniently.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
);

/// WeCom pads to this block.
const PAD_BLOCK: usize = 32;

/// Why a callback was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    #[error("msg_signature does not match (not signed with this application's callback token)")]
    BadSignature,
    #[error("the encrypted text is not AES-256-CBC under this application's EncodingAESKey")]
    Undecryptable,
    #[error("the message was meant for another corp id")]
    WrongReceiver,
    #[error("the EncodingAESKey must be 43 characters of base64 (32 bytes)")]
    BadKey,
}

/// One application's callback token, key and corp id.
pub struct WecomCrypto {
    token: String,
    key: [u8; 32],
    receiver: String,
}

impl std::fmt::Debug for WecomCrypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WecomCrypto([redacted])")
    }
}

impl WecomCrypto {
    /// `encoding_aes_key`: the 43 characters WeCom shows; `receiver`: the corp id.
    pub fn new(token: &str, encoding_aes_key: &str, receiver: &str) -> Result<Self, CryptoError> {
        let bytes = LENIENT
            .decode(format!("{}=", encoding_aes_key.trim()))
            .map_err(|_| CryptoError::BadKey)?;
        let key: [u8; 32] = bytes.try_into().map_err(|_| CryptoError::BadKey)?;
        Ok(WecomCrypto {
            token: token.to_owned(),
            key,
            receiver: receiver.to_owned(),
        })
    }

    /// The signature of (`timestamp`, `nonce`, `encrypted`).
    pub fn signature(&self, timestamp: &str, nonce: &str, encrypted: &str) -> String {
        let mut parts = [self.token.as_str(), timestamp, nonce, encrypted];
        parts.sort_unstable();
        hex::encode(digest::digest(
            &digest::SHA1_FOR_LEGACY_USE_ONLY,
            parts.concat().as_bytes(),
        ))
    }

    /// Checks the signature (in constant time), then decrypts: the message.
    pub fn open(
        &self,
        signature: &str,
        timestamp: &str,
        nonce: &str,
        encrypted: &str,
    ) -> Result<String, CryptoError> {
        let expected = self.signature(timestamp, nonce, encrypted);
        if aws_lc_rs::constant_time::verify_slices_are_equal(
            expected.as_bytes(),
            signature.trim().to_ascii_lowercase().as_bytes(),
        )
        .is_err()
        {
            return Err(CryptoError::BadSignature);
        }
        self.decrypt(encrypted)
    }

    fn cipher_key(&self) -> Result<UnboundCipherKey, CryptoError> {
        UnboundCipherKey::new(&AES_256, &self.key).map_err(|_| CryptoError::BadKey)
    }

    fn iv(&self) -> [u8; 16] {
        let mut iv = [0u8; 16];
        iv.copy_from_slice(&self.key[..16]);
        iv
    }

    fn decrypt(&self, encrypted: &str) -> Result<String, CryptoError> {
        let mut data = STANDARD
            .decode(encrypted.trim())
            .map_err(|_| CryptoError::Undecryptable)?;
        if data.is_empty() || data.len() % 16 != 0 {
            return Err(CryptoError::Undecryptable);
        }
        let key = DecryptingKey::cbc(self.cipher_key()?).map_err(|_| CryptoError::BadKey)?;
        let plain = key
            .decrypt(
                &mut data,
                DecryptionContext::Iv128(FixedLength::from(self.iv())),
            )
            .map_err(|_| CryptoError::Undecryptable)?;
        let pad = usize::from(*plain.last().ok_or(CryptoError::Undecryptable)?);
        if pad == 0 || pad > PAD_BLOCK || pad > plain.len() {
            return Err(CryptoError::Undecryptable);
        }
        let content = &plain[..plain.len() - pad];
        if content.len() < 20 {
            return Err(CryptoError::Undecryptable);
        }
        let len = u32::from_be_bytes([content[16], content[17], content[18], content[19]]);
        let len = usize::try_from(len).map_err(|_| CryptoError::Undecryptable)?;
        let rest = &content[20..];
        if len > rest.len() {
            return Err(CryptoError::Undecryptable);
        }
        if rest[len..] != *self.receiver.as_bytes() {
            return Err(CryptoError::WrongReceiver);
        }
        String::from_utf8(rest[..len].to_vec()).map_err(|_| CryptoError::Undecryptable)
    }

    /// Encrypts `message` (with 16 `random` bytes in front): base64.
    pub fn encrypt(&self, message: &str, random: [u8; 16]) -> Result<String, CryptoError> {
        let mut data = Vec::with_capacity(message.len() + self.receiver.len() + 52);
        data.extend_from_slice(&random);
        let len = u32::try_from(message.len()).map_err(|_| CryptoError::Undecryptable)?;
        data.extend_from_slice(&len.to_be_bytes());
        data.extend_from_slice(message.as_bytes());
        data.extend_from_slice(self.receiver.as_bytes());
        let pad = PAD_BLOCK - data.len() % PAD_BLOCK;
        let pad_byte = u8::try_from(pad).map_err(|_| CryptoError::Undecryptable)?;
        data.extend(std::iter::repeat_n(pad_byte, pad));
        let key = EncryptingKey::cbc(self.cipher_key()?).map_err(|_| CryptoError::BadKey)?;
        key.less_safe_encrypt(
            &mut data,
            EncryptionContext::Iv128(FixedLength::from(self.iv())),
        )
        .map_err(|_| CryptoError::Undecryptable)?;
        Ok(STANDARD.encode(data))
    }

    /// A passive reply to a callback: `message` (WeCom's reply XML) encrypted, signed, in
    /// the envelope WeCom reads.
    pub fn reply(
        &self,
        message: &str,
        timestamp: &str,
        nonce: &str,
        random: [u8; 16],
    ) -> Result<String, CryptoError> {
        let encrypted = self.encrypt(message, random)?;
        let signature = self.signature(timestamp, nonce, &encrypted);
        Ok(format!(
            "<xml><Encrypt><![CDATA[{encrypted}]]></Encrypt><MsgSignature><![CDATA[{signature}]]></MsgSignature><TimeStamp>{timestamp}</TimeStamp><Nonce><![CDATA[{nonce}]]></Nonce></xml>"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WeCom's documented example key (43 characters).
    const KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

    fn crypto() -> WecomCrypto {
        WecomCrypto::new("QDG6eK", KEY, "wx5823bf96d3bd56c7").unwrap()
    }

    #[test]
    fn what_it_encrypts_it_opens_and_the_signature_is_checked() {
        let c = crypto();
        for message in ["", "hi", &"长".repeat(700)] {
            let sealed = c.encrypt(message, [7; 16]).unwrap();
            let sig = c.signature("1409659813", "1372623149", &sealed);
            assert_eq!(
                c.open(&sig, "1409659813", "1372623149", &sealed).unwrap(),
                message
            );
            assert_eq!(
                c.open(&sig, "1409659814", "1372623149", &sealed),
                Err(CryptoError::BadSignature)
            );
        }
    }

    #[test]
    fn another_corp_and_garbage_are_refused() {
        let other = WecomCrypto::new("QDG6eK", KEY, "wwOTHER").unwrap();
        let sealed = other.encrypt("hi", [1; 16]).unwrap();
        let c = crypto();
        let sig = c.signature("1", "2", &sealed);
        assert_eq!(
            c.open(&sig, "1", "2", &sealed),
            Err(CryptoError::WrongReceiver)
        );
        for junk in ["", "AAAA", "not base64!", &STANDARD.encode([0u8; 48])] {
            let sig = c.signature("1", "2", junk);
            assert!(c.open(&sig, "1", "2", junk).is_err(), "{junk}");
        }
        assert_eq!(
            WecomCrypto::new("t", "short", "c").unwrap_err(),
            CryptoError::BadKey
        );
    }

    /// The signature of WeCom's documented URL-verification example.
    #[test]
    fn the_signature_is_sha1_of_the_sorted_parts() {
        let c = WecomCrypto::new("QDG6eK", KEY, "wx5823bf96d3bd56c7").unwrap();
        let mut parts = ["QDG6eK", "1409659813", "1372623149", "abc"];
        parts.sort_unstable();
        let want = hex::encode(digest::digest(
            &digest::SHA1_FOR_LEGACY_USE_ONLY,
            parts.concat().as_bytes(),
        ));
        assert_eq!(c.signature("1409659813", "1372623149", "abc"), want);
    }
}
