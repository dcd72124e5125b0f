//! `profile-model mcp` spoken to over stdio as an MCP client does (JSON-RPC 2.0, one message a line):
//! initialize, tools/list, open_trace on a shared trace, report, analysis, view, events, diff, export,
//! and the errors an agent meets. Figures are checked against the CLI's own output (`report --json`,
//! `events --json`, run as a separate process) and against counts made here from the trace's JSON.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

/// A running `profile-model mcp` and the lines it writes.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_profile-model"))
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the CLI starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        server.initialize();
        server
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (every line on stdout must be JSON-RPC).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("no answer to {method} ({e})"));
            let msg: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout holds a line that is not JSON ({e}): {line}"));
            assert_eq!(msg["jsonrpc"], "2.0", "{line}");
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    fn initialize(&mut self) {
        let r = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tests/mcp.rs", "version": "0"}
            }),
        );
        assert_eq!(r["result"]["serverInfo"]["name"], "profile-model", "{r}");
        assert!(r["result"]["capabilities"]["tools"].is_object(), "{r}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// A tool's result (`content`, `isError`), failing on a protocol error.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(r.get("error").is_none(), "{tool}: {r}");
        r["result"].clone()
    }

    /// A tool's first text block, failing when the tool reports an error.
    fn text(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_ne!(result["isError"], json!(true), "{tool}: {result}");
        texts(&result)[0].clone()
    }

    /// A tool's error text, failing when the tool did not report one.
    fn error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(
            result["isError"],
            json!(true),
            "{tool} should fail: {result}"
        );
        texts(&result).join("\n")
    }

    fn open(&mut self, path: &std::path::Path) -> u64 {
        let text = self.text("open_trace", json!({"path": path}));
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("trace_id: "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok());
        id.unwrap_or_else(|| panic!("open_trace names no trace_id: {text}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"))
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "text", "{c}");
            c["text"].as_str().unwrap().to_string()
        })
        .collect()
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

const TRACE: &str = "hta__df_index_resolver.json.gz";

/// Complete ("X") events whose `cat` is `kernel`, counted from the trace's JSON text.
fn kernels_in_json(path: &std::path::Path) -> (usize, f64) {
    let doc: Value = serde_json::from_slice(&common::json_text(path)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let kernels: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "kernel")
        .collect();
    let dur: f64 = kernels.iter().filter_map(|e| e["dur"].as_f64()).sum();
    (kernels.len(), dur)
}

#[test]
fn tools_list_names_every_tool_with_a_described_schema() {
    let mut s = Server::start();
    let r = s.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "open_trace",
        "list_traces",
        "close_trace",
        "report",
        "analysis",
        "view",
        "events",
        "diff",
        "export",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for t in tools {
        let d = t["description"].as_str().unwrap_or("");
        assert!(d.len() > 20, "{} has no real description", t["name"]);
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let events = tools.iter().find(|t| t["name"] == "events").unwrap();
    let props = &events["inputSchema"]["properties"];
    let kinds = props["kinds"]["items"]["enum"]
        .as_array()
        .expect("kinds enum");
    assert!(kinds.contains(&json!("kernel")) && kinds.contains(&json!("cpu_op")));
    assert!(props["group_by"]["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("name")));
    assert!(
        props["line_offset"].is_object() && props["limit"].is_object(),
        "{props}"
    );
    assert!(props["trace_id"]["description"].as_str().is_some());
    let required = events["inputSchema"]["required"].as_array().unwrap();
    assert_eq!(
        required,
        &vec![json!("trace_id")],
        "only the id is required"
    );
    let analysis = tools.iter().find(|t| t["name"] == "analysis").unwrap();
    let keys = analysis["inputSchema"]["properties"]["name"]["enum"]
        .as_array()
        .unwrap();
    assert!(keys.contains(&json!("kernel_breakdown")) && keys.contains(&json!("critical_path")));
}

#[test]
fn report_and_events_match_the_cli_and_the_trace() {
    let path = common::trace(TRACE);
    let p = path.to_str().unwrap();
    let mut s = Server::start();
    let id = s.open(&path);

    // The report: the same document the CLI writes (a separate process computing it again).
    let mcp_report = parse(&s.text(
        "report",
        json!({"trace_id": id, "format": "json", "max_bytes": 400000}),
    ));
    let cli_report = parse(&common::cli_ok(&["report", "--json", p]));
    assert_eq!(mcp_report, cli_report, "report --json differs");
    let markdown = s.text("report", json!({"trace_id": id}));
    assert_eq!(markdown, common::cli_ok(&["report", p]));

    // Kernels: the count and time from the trace's own JSON.
    let (kernels, kernel_dur) = kernels_in_json(&path);
    assert!(kernels > 0);
    let page = parse(&s.text(
        "events",
        json!({"trace_id": id, "kinds": ["kernel"], "format": "json", "limit": 5, "sort": "duration", "descending": true}),
    ));
    assert_eq!(page["matched"], json!(kernels), "kernel rows");
    let matched_dur = page["matched_dur_us"].as_f64().unwrap();
    assert!(
        (matched_dur - kernel_dur).abs() <= 1e-6 * kernel_dur.max(1.0),
        "{matched_dur} vs {kernel_dur}"
    );
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    let durs: Vec<f64> = rows.iter().map(|r| r["dur_us"].as_f64().unwrap()).collect();
    assert!(
        durs.windows(2).all(|w| w[0] >= w[1]),
        "longest first: {durs:?}"
    );

    // A grouped query: the same groups as `events --json`.
    let mcp_groups = parse(&s.text(
        "events",
        json!({"trace_id": id, "group_by": "kind", "sort": "total", "descending": true, "format": "json"}),
    ));
    let cli_groups = parse(&common::cli_ok(&[
        "events",
        "--group-by",
        "kind",
        "--sort",
        "total",
        "--desc",
        "--limit",
        "50",
        "--json",
        p,
    ]));
    assert_eq!(mcp_groups["groups"], cli_groups["groups"]);
    assert_eq!(mcp_groups["matched"], cli_groups["matched"]);
    let kernel_group = mcp_groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["key"] == "kernel")
        .expect("a kernel group");
    assert_eq!(kernel_group["count"], json!(kernels));
}

#[test]
fn long_answers_are_cut_with_a_note_on_how_to_go_on() {
    let path = common::trace(TRACE);
    let mut s = Server::start();
    let id = s.open(&path);
    let whole = s.text("report", json!({"trace_id": id}));
    let cut = s.call("report", json!({"trace_id": id, "max_bytes": 300}));
    let parts = texts(&cut);
    assert_eq!(parts.len(), 2, "text and note: {cut}");
    assert!(parts[0].len() <= 300 && whole.starts_with(&parts[0]));
    let next: usize = parts[1]
        .split("line_offset=")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the note says where to go on: {}", parts[1]));
    let rest = s.text("report", json!({"trace_id": id, "line_offset": next}));
    assert_eq!(
        format!("{}{}", parts[0], rest),
        whole,
        "the two parts are the whole"
    );

    // Events pages: the note names the next offset.
    let first = s.call(
        "events",
        json!({"trace_id": id, "kinds": ["kernel"], "limit": 3}),
    );
    let notes = texts(&first);
    assert!(notes.iter().any(|n| n.contains("offset=3")), "{notes:?}");
}

#[test]
fn analysis_view_diff_and_export_answer_as_the_cli_does() {
    let path = common::trace(TRACE);
    let p = path.to_str().unwrap();
    let mut s = Server::start();
    let id = s.open(&path);
    let analysis = parse(&s.text(
        "analysis",
        json!({"trace_id": id, "name": "kernel_breakdown", "format": "json", "max_bytes": 400000}),
    ));
    let cli = parse(&common::cli_ok(&["analyze", "--json", p]));
    assert_eq!(analysis, cli["kernel_breakdown"]);
    let text = s.text(
        "analysis",
        json!({"trace_id": id, "name": "temporal_breakdown"}),
    );
    assert!(text.contains("Temporal breakdown"), "{text}");

    let view = s.text(
        "view",
        json!({"trace_id": id, "view": "kernels", "format": "csv", "max_bytes": 400000}),
    );
    assert_eq!(view, common::cli_ok(&["kernels", "--csv", p]));

    let other = s.open(&common::trace("hta__trace_compare_test.json.gz"));
    let diff = parse(&s.text(
        "diff",
        json!({"baseline_id": id, "candidate_id": other, "format": "json", "max_bytes": 400000}),
    ));
    let base = common::trace("hta__trace_compare_test.json.gz");
    let cli_diff = parse(&common::cli_ok(&[
        "diff",
        "--json",
        p,
        base.to_str().unwrap(),
    ]));
    assert_eq!(diff, cli_diff);

    let dir = std::env::temp_dir().join(format!("pm-mcp-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("events.csv");
    let line = s.text(
        "export",
        json!({"trace_id": id, "path": out, "columns": ["name", "dur"]}),
    );
    let (kernels, _) = kernels_in_json(&path);
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        line.starts_with(&format!("wrote {} rows", written.lines().count() - 1)),
        "{line}"
    );
    assert!(written.lines().count() > kernels);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_gets_an_error_saying_what_to_call_next() {
    let mut s = Server::start();
    let e = s.error("report", json!({"trace_id": 3}));
    assert!(
        e.contains("no trace with id 3 is open") && e.contains("open_trace"),
        "{e}"
    );
    let e = s.error("open_trace", json!({"path": "/no/such/trace.json"}));
    assert!(e.contains("does not exist"), "{e}");
    let dir = std::env::temp_dir().join(format!("pm-mcp-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let e = s.error("open_trace", json!({"path": dir}));
    assert!(e.contains("holds no .json"), "{e}");
    let not_json = dir.join("x.json");
    std::fs::write(&not_json, "not a trace").unwrap();
    let e = s.error("open_trace", json!({"path": not_json}));
    assert!(e.contains("could not open"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);

    let id = s.open(&common::trace(TRACE));
    let e = s.error("analysis", json!({"trace_id": id, "name": "speed"}));
    assert!(
        e.contains("`speed`") && e.contains("kernel_breakdown") && e.contains("collectives"),
        "{e}"
    );
    let e = s.error("report", json!({"trace_id": id, "format": "yaml"}));
    assert!(
        e.contains("`yaml`") && e.contains("markdown") && e.contains("json"),
        "{e}"
    );
    let e = s.error("events", json!({"trace_id": id, "format": "csv"}));
    assert!(e.contains("`csv`"), "{e}");
    let e = s.error(
        "view",
        json!({"trace_id": id, "view": "ops", "format": "xml"}),
    );
    assert!(e.contains("`xml`") && e.contains("csv"), "{e}");
    let e = s.error("export", json!({"trace_id": id, "path": "/tmp/out.txt"}));
    assert!(e.contains("format"), "{e}");
    let e = s.error("diff", json!({"baseline_id": id, "candidate_id": 99}));
    assert!(
        e.contains("no trace with id 99") && e.contains(&format!("{id} (")),
        "{e}"
    );

    // Arguments of the wrong type are an error result that says what was expected; the server goes on.
    let e = s.error("events", json!({"trace_id": id, "limit": "many"}));
    assert!(
        e.contains("\"many\"") && e.contains("expected usize"),
        "{e}"
    );
    let e = s.error("events", json!({"trace_id": id, "kinds": ["gpu"]}));
    assert!(e.contains("`gpu`") && e.contains("kernel"), "{e}");
    let listed = s.text("list_traces", json!({}));
    assert!(listed.starts_with(&format!("{id}: ")), "{listed}");
    let closed = s.text("close_trace", json!({"trace_id": id}));
    assert!(closed.contains("closed trace"), "{closed}");
    let e = s.error("events", json!({"trace_id": id}));
    assert!(e.contains("call open_trace"), "{e}");
}

#[test]
fn opening_the_same_path_again_reuses_the_loaded_tables() {
    let path = common::trace(TRACE);
    let mut s = Server::start();
    let first = s.open(&path);
    let again = s.text("open_trace", json!({"path": path}));
    assert!(
        again.contains(&format!("trace_id: {first} (already open")),
        "{again}"
    );
    let reloaded = s.text("open_trace", json!({"path": path, "reload": true}));
    assert!(
        reloaded.starts_with(&format!("trace_id: {}\n", first + 1)),
        "{reloaded}"
    );
}

#[test]
fn report_over_chosen_steps_matches_the_cli_and_refuses_a_range_the_trace_lacks() {
    // Steps 1-6, 2 ms each, each 6 kernels of 250 µs (enough for one step to be diagnosed); steps
    // 1-3 run `alpha_gemm`, 4-6 `beta_gemm`.
    let mut b = common::TraceBuilder::new();
    for step in 1..=6 {
        let t0 = (step - 1) as f64 * 2000.0;
        b.step(step, t0, 2000.0);
        let name = if step <= 3 { "alpha_gemm" } else { "beta_gemm" };
        for k in 0..6 {
            let k = k as f64;
            b.kernel(
                name,
                7,
                t0 + 5.0 + 10.0 * k,
                5.0,
                t0 + 100.0 + 300.0 * k,
                250.0,
            );
        }
    }
    let dir = std::env::temp_dir().join(format!("pm-mcp-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("steps.json");
    std::fs::write(&path, b.json()).unwrap();
    let mut s = Server::start();
    let id = s.open(&path);
    let md = s.text(
        "report",
        json!({"trace_id": id, "first_step": 4, "last_step": 6}),
    );
    let cli = common::cli_ok(&["report", "--steps", "4..6", path.to_str().unwrap()]);
    assert_eq!(md, cli, "the CLI's report over the same steps");
    assert!(
        md.contains("beta_gemm") && !md.contains("alpha_gemm"),
        "{md}"
    );
    let one = s.text("report", json!({"trace_id": id, "first_step": 2}));
    assert!(one.contains("Analysed: step 2 (as chosen)"), "{one}");
    let e = s.error(
        "report",
        json!({"trace_id": id, "first_step": 9, "last_step": 12}),
    );
    assert!(
        e.contains("no ProfilerStep in 9..12: the trace has steps 1-6")
            && e.contains("without first_step/last_step"),
        "{e}"
    );
    let e = s.error(
        "report",
        json!({"trace_id": id, "first_step": 5, "last_step": 4}),
    );
    assert!(
        e.contains("first_step (5) comes after last_step (4)"),
        "{e}"
    );
    // The automatic report is still the CLI's.
    let auto = s.text("report", json!({"trace_id": id}));
    assert_eq!(auto, common::cli_ok(&["report", path.to_str().unwrap()]));
    let _ = std::fs::remove_dir_all(&dir);
}
