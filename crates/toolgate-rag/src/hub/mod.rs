//! Fetching an embedding model: `toolgate rag model pull` downloads a sentence-transformers
//! model in the Hugging Face Hub's file layout through toolgate-net's guard, verifies every
//! file's SHA-256 (pinned in the source for the default all-MiniLM-L6-v2, recorded on first
//! use for others), resumes a broken download with `Range`, and renames each file into the
//! cache only once it verified. Retrieval finds the default model there without configuration
//! (`toolgate_app::rag`); nothing but an explicit pull downloads.
//!
//! # Layout
//! - [`pins`]: the default repository, revision and the files' SHA-256.
//! - [`cache`]: [`ModelRef`] (a checked repo + revision) and [`ModelCache`] (where models live).
//! - [`manifest`]: `toolgate-model.json`, the record of a pulled directory.
//! - [`pull`](mod@pull): [`pull()`] and its events and report.
//! - `transfer`: one file's bytes into `FILE.part`, fresh or resumed.
//! - [`error`]: [`PullError`], why a pull failed.

pub mod cache;
pub mod error;
pub mod manifest;
pub mod pins;
pub mod pull;
mod transfer;

pub use cache::{MODEL_CACHE_ENV, ModelCache, ModelRef};
pub use error::{Expected, PullError};
pub use manifest::{MANIFEST_FILE, Manifest};
pub use pins::{DEFAULT_PINS, DEFAULT_REPO, DEFAULT_REVISION, FilePin, MODEL_FILES};
pub use pull::{
    DEFAULT_ENDPOINT, ENDPOINT_ENV, FileStatus, PullEvent, PullReport, PullRequest, PulledFile,
    Trust, check_endpoint, endpoint_from_env, file_url, pull, sha256_file,
};
