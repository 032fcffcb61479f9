//! Opening regular files for reading, and telling text from binary.
//!
//! Files are opened with `O_NOFOLLOW` (a symlink swapped in after resolution fails the
//! open instead of being followed) and `O_NONBLOCK` (a FIFO cannot hang the open); the
//! opened handle is then checked to be a regular file.

use std::fs::{File, Metadata, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use toolgate_core::ToolError;

/// How many leading bytes decide whether a file is binary.
pub(crate) const SNIFF_LEN: usize = 8 * 1024;

/// A NUL byte in the first [`SNIFF_LEN`] bytes marks a file as binary.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(SNIFF_LEN)].contains(&0)
}

/// Opens the resolved `path` (shown to the model as `rel`) as a regular file.
pub(crate) fn open_regular(path: &Path, rel: &str) -> Result<(File, Metadata), ToolError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                ToolError::PolicyDenied(format!(
                    "`{rel}` became a symlink after it was checked; refusing to follow it"
                ))
            } else {
                ToolError::failed(format!("cannot open `{rel}`: {e}"))
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::failed(format!("cannot stat `{rel}`: {e}")))?;
    if meta.is_dir() {
        return Err(ToolError::InvalidArguments(format!(
            "`{rel}` is a directory; use list_dir to see its entries"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::InvalidArguments(format!(
            "`{rel}` is not a regular file (a device, socket or FIFO)"
        )));
    }
    Ok((file, meta))
}

/// The failure for a file too large to load whole.
pub(crate) fn too_large(rel: &str, size: u64, max: u64, hint: &str) -> ToolError {
    ToolError::failed(format!(
        "`{rel}` is {size} bytes, over the {max}-byte limit; {hint}"
    ))
}
