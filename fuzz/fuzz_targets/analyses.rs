//! Fuzz target: `profile_model::fuzzing::analyses_and_report` on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    profile_model::fuzzing::analyses_and_report(data);
});
