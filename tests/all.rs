//! Every integration test in one test binary (`cargo test --test all`; one test file's tests:
//! `cargo test --test all public_traces::`). One binary links the crate once instead of once per file:
//! the suite builds in a fraction of the time (README, Tests). A new test file is a module here;
//! `every_test_file_is_a_module` fails when one is left out.

mod common;

mod analyses_vs_hta;
mod analysis_view;
mod cache;
mod chunking;
mod cli;
mod collectives;
mod compare;
mod copy_speed;
mod diagnosis_cold;
mod diagnosis_context;
mod diagnosis_cpu_runs;
mod diagnosis_device_side;
mod diagnosis_devices;
mod diagnosis_host_work;
mod diagnosis_identity;
mod diagnosis_kinds;
mod diagnosis_one_event;
mod diagnosis_ranks;
mod diagnosis_scenarios;
mod diagnosis_serving;
mod diagnosis_variants;
mod dialects;
mod explore;
mod export;
mod fused_ranks;
mod fuzz_smoke;
mod hta_quirks;
mod json_stability;
mod mcp;
mod merge;
mod perfetto;
mod profile_views;
mod public_traces;
mod rank_lanes;
mod real_traces;
mod report;
mod report_parts;
mod report_steps;
mod robustness;
mod roofline;
mod sample;
mod scenarios;
mod sequences;
mod shard_merge;
mod sql_tables;
mod structure_attacks;
mod structure_attacks_chunked;
mod timeline;
mod views;

/// Cargo builds only this file's modules (`autotests = false`): a test file not listed above would
/// silently never run.
#[test]
fn every_test_file_is_a_module() {
    let listed = include_str!("all.rs");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the tests folder") {
        let path = entry.expect("a tests/ entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_rust_file = path.extension().is_some_and(|e| e == "rs");
        if is_rust_file && stem != "all" && !listed.contains(&format!("\nmod {stem};")) {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/{{{}}}.rs not declared in tests/all.rs",
        missing.join(",")
    );
}
