//! The sample job ("Try a sample", `profile-model sample DIR`): the copies served with the page are
//! the generator's output byte for byte, and the diagnosis finds what the generator put in (its
//! constants, not the report, give the expected figures).

use crate::common;

use profile_model::sample::{
    file_names, sample_files, LATE_LOADER_EXTRA_US, LATE_RANK, STEPS, WORLD,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn cli_json(args: &[&str]) -> Value {
    serde_json::from_str(&common::cli_ok(args)).unwrap()
}

#[test]
fn the_served_copies_are_the_generators_output() {
    let files = sample_files();
    assert_eq!(files.len(), WORLD);
    assert_eq!(
        files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        file_names()
    );
    for (name, bytes) in files {
        let served = std::fs::read(samples_dir().join(&name))
            .unwrap_or_else(|e| panic!("samples/{name}: {e} (run `profile-model sample samples`)"));
        assert!(
            served == bytes,
            "samples/{name} differs from the generator: run `profile-model sample samples`"
        );
    }
}

#[test]
fn the_diagnosis_finds_what_the_generator_put_in() {
    let dir = samples_dir();
    let dir = dir.to_str().unwrap();
    let report = cli_json(&["report", "--json", dir]);
    assert_eq!(
        report["main_finding_id"], "data_loading",
        "the stall and the slow loader cost the most"
    );
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for want in ["straggler", "launch_overhead"] {
        assert!(ids.contains(&want), "{want} in {ids:?}");
    }
    let collectives = cli_json(&["collectives", "--json", dir]);
    let late = &collectives["late_ranks"][0];
    assert_eq!(late["rank"].as_u64(), Some(LATE_RANK as u64));
    assert_eq!(late["times_last"].as_u64(), Some(STEPS as u64));
    // Its DataLoader is slower every step: each of the other ranks waits that long per step.
    let expected_ns = (WORLD - 1) as f64 * STEPS as f64 * LATE_LOADER_EXTRA_US * 1e3;
    let caused = late["caused_wait_ns"].as_f64().unwrap();
    assert!(
        (caused - expected_ns).abs() < 0.01 * expected_ns,
        "{caused} vs {expected_ns}"
    );
    assert_eq!(late["causes"][0]["cause"], "data_loader");
}
