//! Fuzz target: `profile_model::fuzzing::gzip_and_reader` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    profile_model::fuzzing::gzip_and_reader(data);
});
