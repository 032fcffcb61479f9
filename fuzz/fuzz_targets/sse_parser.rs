//! cargo-fuzz's entry into `toolgate_fuzz_targets::targets::sse_parser` (the target and its
//! properties are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolgate_fuzz_targets::targets::sse_parser::run(data));
