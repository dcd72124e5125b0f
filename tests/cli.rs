//! The command line: figures equal the library's, folders load as ranks, bad input exits non-zero with a message.

use crate::common;

use serde_json::Value;

use crate::common::cli;

#[test]
fn summary_json_of_a_file() {
    let path = common::trace("hta__nccl_data.json.gz");
    let (code, out, err) = cli(&["summary", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // Independent count from the JSON itself.
    let doc: Value = serde_json::from_slice(&common::json_text(&path)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let kernels: Vec<&Value> = events.iter().filter(|e| e["cat"] == "kernel").collect();
    let time: f64 = kernels.iter().map(|e| e["dur"].as_f64().unwrap()).sum();
    assert_eq!(v["events"].as_u64().unwrap() as usize, events.len());
    assert_eq!(v["kernels"].as_u64().unwrap() as usize, kernels.len());
    assert!((v["kernel_time_us"].as_f64().unwrap() - time).abs() < 1e-6 * time);
    assert_eq!(v["rank"], 0);
    assert_eq!(v["top_kernels"].as_array().unwrap().len(), 10);
}

#[test]
fn summary_of_a_rank_folder() {
    let dir = std::env::temp_dir().join(format!("pm-cli-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for r in [0, 1] {
        let name = format!("hta__sampled_rank-{r}.json.gz");
        std::fs::copy(common::trace(&name), dir.join(&name)).unwrap();
    }
    std::fs::write(dir.join("notes.json"), b"{\"not\": \"a trace\"}").unwrap();
    let (code, out, err) = cli(&["summary", "--json", dir.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("notes.json"),
        "the skipped file is named: {err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for (i, r) in ranks.iter().enumerate() {
        assert_eq!(r["rank"], i as i64);
        assert_eq!(r["rank_source"], "distributedInfo");
        let doc: Value = serde_json::from_slice(&common::json_text(&common::trace(&format!(
            "hta__sampled_rank-{i}.json.gz"
        ))))
        .unwrap();
        assert_eq!(
            r["events"].as_u64().unwrap() as usize,
            doc["traceEvents"].as_array().unwrap().len()
        );
    }
}

#[test]
fn a_folder_of_per_rank_folders_loads_its_nested_traces() {
    let dir = std::env::temp_dir().join(format!("pm-cli-nested-{}", std::process::id()));
    for r in [0, 1] {
        let sub = dir.join(format!("rank{r}_pt")).join("OUTPUT");
        std::fs::create_dir_all(&sub).unwrap();
        let name = format!("hta__sampled_rank-{r}.json.gz");
        std::fs::copy(common::trace(&name), sub.join("trace_view.json.gz")).unwrap();
    }
    let (code, out, err) = cli(&["summary", "--json", dir.to_str().unwrap()]);
    let empty = dir.join("rank0_pt").join("OUTPUT").join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code_empty, _, err_empty) = cli(&["summary", empty.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let ranks: Vec<i64> = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1], "both nested rank files are read");
    assert_eq!(code_empty, 1);
    assert!(err_empty.contains("subfolders"), "{err_empty}");
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let et = common::trace("hta__simple_add_execution_trace_NOT_KINETO.json.gz");
    let (code, out, err) = cli(&["summary", "--json", et.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("execution trace"), "{err}");
    let (code, _, err) = cli(&["summary", "/no/such/file.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("could not be read"), "{err}");
    let (code, _, err) = cli(&["summary"]);
    assert_eq!(code, 2);
    assert!(err.contains("usage"), "{err}");
    let (code, _, err) = cli(&["summary", "--bogus", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown option"), "{err}");
}

#[test]
fn report_redact_hides_kernel_names() {
    let path = common::trace("hta__nccl_data.json.gz");
    let p = path.to_str().unwrap();
    let (code, plain, err) = cli(&["report", p]);
    assert_eq!(code, 0, "{err}");
    let (code, redacted, err) = cli(&["report", "--redact", p]);
    assert_eq!(code, 0, "{err}");
    // The top kernel by time, from the summary (computed separately from the report).
    let (_, summary, _) = cli(&["summary", "--json", p]);
    let v: Value = serde_json::from_str(&summary).unwrap();
    let top = v["top_kernels"][0]["name"].as_str().unwrap().to_string();
    let shown = &top[..top.len().min(30)];
    assert!(plain.contains(shown), "plain report names {shown}");
    assert!(
        !redacted.contains(shown),
        "redacted report still names {shown}"
    );
    assert!(redacted.contains("## Trace Analysis Summary"));
    // Stable: the same input gives the same redacted text.
    let (_, again, _) = cli(&["report", "--redact", p]);
    assert_eq!(redacted, again);
}

#[test]
fn events_filters_groups_and_exports() {
    let path = common::trace("hta__simple_add_kineto.json.gz");
    if !path.exists() {
        return;
    }
    let p = path.to_str().unwrap();
    let (code, out, err) = cli(&[
        "events",
        "--json",
        "--kind",
        "kernel",
        "--group-by",
        "name",
        "--sort",
        "total",
        "--desc",
        p,
    ]);
    assert_eq!(code, 0, "{err}");
    let page: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (_, summary, _) = cli(&["summary", "--json", p]);
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(page["matched"], summary["kernels"]);
    let groups = page["groups"].as_array().unwrap();
    let total: u64 = groups.iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(Some(total), summary["kernels"].as_u64());
    let totals: Vec<f64> = groups
        .iter()
        .map(|g| g["total_us"].as_f64().unwrap())
        .collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");

    let (code, csv, _) = cli(&["events", "--csv", "--kind", "kernel", p]);
    assert_eq!(code, 0);
    assert_eq!(
        csv.lines().count() as u64,
        summary["kernels"].as_u64().unwrap() + 1
    );
    assert!(csv.starts_with("rank,row,ts_us,"));

    let (code, _, err) = cli(&["events", "--kind", "kernels", p]);
    assert_eq!(code, 2);
    assert!(err.contains("--kind takes one of kernel"), "{err}");
    let (code, _, err) = cli(&["events", "--limit", "ten", p]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--limit takes a number, found \"ten\""),
        "{err}"
    );
}

/// The rows of an Arrow IPC file and its column names, read with arrow2.
fn arrow_file(
    path: &std::path::Path,
) -> (
    Vec<String>,
    Vec<arrow2::chunk::Chunk<Box<dyn arrow2::array::Array>>>,
) {
    use arrow2::io::ipc::read::{read_file_metadata, FileReader};
    let mut f = std::fs::File::open(path).unwrap();
    let metadata = read_file_metadata(&mut f).unwrap();
    let names = metadata
        .schema
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    let chunks = FileReader::new(f, metadata, None, None)
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (names, chunks)
}

#[test]
fn export_of_a_rank_folder_has_every_event_and_a_rank_column() {
    use arrow2::array::PrimitiveArray;
    let dir = std::env::temp_dir().join(format!("pm-cli-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut events = Vec::new();
    for r in [0, 1] {
        let name = format!("hta__sampled_rank-{r}.json.gz");
        std::fs::copy(common::trace(&name), dir.join(&name)).unwrap();
        let doc: Value = serde_json::from_slice(&common::json_text(&common::trace(&name))).unwrap();
        events.push(doc["traceEvents"].as_array().unwrap().len());
    }
    let out = dir.join("out.arrow");
    let (code, stdout, err) = cli(&["export", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains(&format!("wrote {} rows", events[0] + events[1])),
        "{stdout}"
    );
    let (names, chunks) = arrow_file(&out);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        &names[..9],
        ["name", "cat", "ph", "ts", "dur", "pid", "tid", "id", "rank"]
    );
    // One batch per rank, in rank order, each with its rank's events.
    assert_eq!(chunks.iter().map(|c| c.len()).collect::<Vec<_>>(), events);
    for (r, c) in chunks.iter().enumerate() {
        let rank = c.arrays()[8]
            .as_any()
            .downcast_ref::<PrimitiveArray<i64>>()
            .unwrap();
        assert!(rank.values().iter().all(|&v| v == r as i64));
    }
}

#[test]
fn export_columns_to_stdout_and_clear_errors() {
    let path = common::trace("hta__call_stack_backward_thread.json");
    let p = path.to_str().unwrap();
    let doc: Value = serde_json::from_slice(&common::json_text(&path)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let (code, csv, err) = cli(&[
        "export",
        "--format",
        "csv",
        "--columns",
        "dur,name",
        p,
        "-o",
        "-",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "dur,name");
    assert_eq!(lines.len(), events.len() + 1);
    for (line, e) in lines[1..].iter().zip(events) {
        let dur = e["dur"].as_f64().map_or(String::new(), |d| d.to_string());
        assert_eq!(*line, format!("{dur},{}", e["name"].as_str().unwrap()));
    }

    let dir = std::env::temp_dir().join(format!("pm-cli-export-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("x.parquet");
    let o = out.to_str().unwrap();
    let (code, _, err) = cli(&["export", "--format", "xlsx", p, "-o", o]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--format takes parquet, arrow or csv, found \"xlsx\""),
        "{err}"
    );
    let (code, _, err) = cli(&["export", "--columns", "name,durr", p, "-o", o]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no column durr") && err.contains("name, cat, ph, ts, dur"),
        "{err}"
    );
    assert!(!out.exists(), "a failed export leaves no file");
    let (code, _, err) = cli(&["export", p, "-o", dir.join("x.txt").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("export needs --format"), "{err}");
    let (code, _, err) = cli(&["export", p, "-o", "/no/such/dir/x.csv"]);
    assert_eq!(code, 3);
    assert!(err.contains("could not write /no/such/dir/x.csv"), "{err}");
    let (code, _, _) = cli(&["export", p, "-o", o]);
    assert_eq!(code, 0);
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(&bytes[..4], b"PAR1");
}
