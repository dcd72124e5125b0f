//! Fuzz target: `profile_model::fuzzing::reader_in_pieces` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    profile_model::fuzzing::reader_in_pieces(data);
});
