//! cargo-fuzz's entry into `toolgate_fuzz_targets::targets::chat_inbound` (the target and its
//! properties are documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolgate_fuzz_targets::targets::chat_inbound::run(data));
