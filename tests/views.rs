//! The TensorBoard-style views (operators, kernels, step time, memory) against independent
//! computations straight from the JSON of the shared traces, and their CLI twins.

use crate::common;

use std::collections::HashMap;
use std::io::Read;

use profile_model::analysis::views::kernel_table::{kernels, uses_tensor_cores};
use profile_model::analysis::views::memory::memory;
use profile_model::analysis::views::operators::operators;
use profile_model::analysis::views::step_time::{step_time, StepCategory};
use profile_model::table::load_path;
use serde_json::Value;

/// Traces with CPU operators launching GPU work (new Kineto category names).
const TRACES: [&str; 5] = [
    "hta__critical_path_alexnet.json.gz",
    "hta__critical_path_simple_add.json.gz",
    "hta__amd_mi250_minitoy_train.json.gz",
    "hta__sampled_rank-0.json.gz",
    "hta__nccl_data.json.gz",
];

fn events(file: &str) -> Vec<Value> {
    let bytes = std::fs::read(common::traces_dir().join(file)).unwrap();
    let mut text = Vec::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
    } else {
        text = bytes;
    }
    let doc: Value = serde_json::from_slice(&text).unwrap();
    doc["traceEvents"].as_array().cloned().unwrap_or_default()
}

/// A complete event: (name, cat, thread, ts µs, dur µs, correlation).
struct Span {
    name: String,
    cat: String,
    thread: String,
    ts: f64,
    dur: f64,
    corr: Option<i64>,
}

fn spans(file: &str) -> Vec<Span> {
    events(file)
        .iter()
        .filter(|e| e["ph"] == "X" && e["dur"].is_number())
        .map(|e| Span {
            name: e["name"].as_str().unwrap_or("").to_string(),
            cat: e["cat"].as_str().unwrap_or("").to_string(),
            thread: format!("{}/{}", e["pid"], e["tid"]),
            ts: e["ts"].as_f64().unwrap(),
            dur: e["dur"].as_f64().unwrap().max(0.0),
            corr: e["args"]["correlation"].as_i64(),
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()) + 0.01
}

/// The runtime call of each correlation id and the CPU operators, for the brute-force joins below.
fn launches_and_ops(s: &[Span]) -> (HashMap<i64, &Span>, Vec<&Span>) {
    let runtime = s
        .iter()
        .filter(|x| x.cat.ends_with("_runtime") || x.cat == "cuda_driver")
        .filter_map(|x| x.corr.map(|c| (c, x)))
        .rev()
        .collect();
    (runtime, s.iter().filter(|x| x.cat == "cpu_op").collect())
}

/// Device self/total per operator name by brute force: the runtime call with the kernel's
/// correlation, then every cpu_op on its thread whose span holds it.
fn device_time_by_op(s: &[Span]) -> (HashMap<String, f64>, HashMap<String, f64>) {
    let (runtime, ops) = launches_and_ops(s);
    let (mut own, mut total) = (HashMap::new(), HashMap::new());
    for k in s
        .iter()
        .filter(|x| matches!(x.cat.as_str(), "kernel" | "gpu_memcpy" | "gpu_memset"))
    {
        let Some(r) = k.corr.and_then(|c| runtime.get(&c)) else {
            continue;
        };
        let around: Vec<&&Span> = ops
            .iter()
            .filter(|o| o.thread == r.thread && o.ts <= r.ts && r.ts + r.dur <= o.ts + o.dur)
            .collect();
        for o in &around {
            *total.entry(o.name.clone()).or_insert(0.0) += k.dur;
        }
        if let Some(inner) = around
            .iter()
            .max_by(|a, b| a.ts.total_cmp(&b.ts).then(b.dur.total_cmp(&a.dur)))
        {
            *own.entry(inner.name.clone()).or_insert(0.0) += k.dur;
        }
    }
    (own, total)
}

#[test]
fn operators_device_and_host_time_match_a_brute_force_join() {
    for file in TRACES {
        let s = spans(file);
        let t = load_path(&common::traces_dir().join(file)).unwrap();
        let got = operators(&t, false);
        let (own, total) = device_time_by_op(&s);
        let mut host: HashMap<String, (u64, f64)> = HashMap::new();
        for o in s.iter().filter(|x| x.cat == "cpu_op") {
            let e = host.entry(o.name.clone()).or_default();
            e.0 += 1;
            e.1 += o.dur;
        }
        assert_eq!(
            got.rows.len(),
            host.len(),
            "{file}: one row per operator name"
        );
        for r in &got.rows {
            let (calls, host_total) = host[&r.name];
            assert_eq!(r.calls, calls, "{file} {}", r.name);
            assert!(
                close(r.host_total_us, host_total),
                "{file} {} host {} vs {host_total}",
                r.name,
                r.host_total_us
            );
            assert!(
                r.host_self_us <= r.host_total_us + 0.01,
                "{file} {}",
                r.name
            );
            let want_own = own.get(&r.name).copied().unwrap_or(0.0);
            let want_total = total.get(&r.name).copied().unwrap_or(0.0);
            assert!(
                close(r.device_self_us, want_own),
                "{file} {} device self {} vs {want_own}",
                r.name,
                r.device_self_us
            );
            assert!(
                close(r.device_total_us, want_total),
                "{file} {} device total {} vs {want_total}",
                r.name,
                r.device_total_us
            );
        }
        let device: f64 = s
            .iter()
            .filter(|x| matches!(x.cat.as_str(), "kernel" | "gpu_memcpy" | "gpu_memset"))
            .map(|x| x.dur)
            .sum();
        assert!(
            close(got.device_time_us, device),
            "{file}: {} vs {device}",
            got.device_time_us
        );
        let launched: f64 = own.values().sum();
        assert!(
            close(
                got.device_time_us - got.device_time_outside_ops_us,
                launched
            ),
            "{file}"
        );
    }
}

/// Per operator name, the device operations (by name) its innermost calls launched, by brute force:
/// the runtime call with the kernel's correlation, then the innermost cpu_op on its thread around it.
fn kernels_by_op(s: &[Span]) -> HashMap<(String, String), f64> {
    let (runtime, ops) = launches_and_ops(s);
    let mut out = HashMap::new();
    for k in s
        .iter()
        .filter(|x| matches!(x.cat.as_str(), "kernel" | "gpu_memcpy" | "gpu_memset"))
    {
        let Some(r) = k.corr.and_then(|c| runtime.get(&c)) else {
            continue;
        };
        let inner = ops
            .iter()
            .filter(|o| o.thread == r.thread && o.ts <= r.ts && r.ts + r.dur <= o.ts + o.dur)
            .max_by(|a, b| a.ts.total_cmp(&b.ts).then(b.dur.total_cmp(&a.dur)));
        if let Some(o) = inner {
            *out.entry((o.name.clone(), k.name.clone())).or_insert(0.0) += k.dur;
        }
    }
    out
}

#[test]
fn an_operator_opens_to_the_kernels_it_launched_and_the_frames_above_its_longest_call() {
    use profile_model::analysis::views::operators::{OP_KERNELS, STACK_FRAMES};
    for file in TRACES {
        let s = spans(file);
        let t = load_path(&common::traces_dir().join(file)).unwrap();
        let got = operators(&t, false);
        let want = kernels_by_op(&s);
        let mut checked_stacks = 0;
        for r in &got.rows {
            let mut mine: Vec<(&String, f64)> = want
                .iter()
                .filter(|((op, _), _)| *op == r.name)
                .map(|((_, k), us)| (k, *us))
                .collect();
            mine.sort_by(|a, b| b.1.total_cmp(&a.1));
            assert_eq!(
                r.kernels.len(),
                mine.len().min(OP_KERNELS),
                "{file} {}",
                r.name
            );
            for k in &r.kernels {
                let us = want[&(r.name.clone(), k.name.clone())];
                assert!(
                    close(k.total_us, us),
                    "{file} {} {}: {} vs {us}",
                    r.name,
                    k.name,
                    k.total_us
                );
            }
            // The frames above the longest call: every host span on its thread that holds it
            // (the innermost STACK_FRAMES of them), by name.
            let longest = s
                .iter()
                .filter(|x| x.cat == "cpu_op" && x.name == r.name)
                .max_by(|a, b| a.dur.total_cmp(&b.dur))
                .unwrap();
            let holds = |x: &&Span| {
                matches!(
                    x.cat.as_str(),
                    "cpu_op" | "user_annotation" | "python_function"
                ) && x.thread == longest.thread
                    && x.ts <= longest.ts
                    && longest.ts + longest.dur <= x.ts + x.dur
                    && !std::ptr::eq(*x, longest)
            };
            let above: Vec<&Span> = s.iter().filter(holds).collect();
            let unique_times = above.iter().all(|a| {
                above
                    .iter()
                    .filter(|b| b.ts == a.ts && b.dur == a.dur)
                    .count()
                    == 1
                    && !(a.ts == longest.ts && a.dur == longest.dur)
            });
            let lengths_unique = s
                .iter()
                .filter(|x| x.cat == "cpu_op" && x.name == r.name && x.dur == longest.dur)
                .count()
                == 1;
            if unique_times && lengths_unique && above.len() <= STACK_FRAMES {
                let mut names: Vec<&str> = above.iter().map(|a| a.name.as_str()).collect();
                let mut stack: Vec<&str> = r.call_stack.iter().map(String::as_str).collect();
                names.sort_unstable();
                stack.sort_unstable();
                assert_eq!(stack, names, "{file} {}", r.name);
                checked_stacks += 1;
            }
        }
        assert!(checked_stacks > 0, "{file}: no call stack was checked");
    }
}

#[test]
fn operators_by_shape_split_the_same_totals() {
    let file = "hta__critical_path_alexnet.json.gz";
    let t = load_path(&common::traces_dir().join(file)).unwrap();
    let (by_name, by_shape) = (operators(&t, false), operators(&t, true));
    assert!(by_shape.rows.len() >= by_name.rows.len());
    for r in &by_name.rows {
        let parts: Vec<_> = by_shape.rows.iter().filter(|s| s.name == r.name).collect();
        let calls: u64 = parts.iter().map(|s| s.calls).sum();
        let device: f64 = parts.iter().map(|s| s.device_total_us).sum();
        assert_eq!(calls, r.calls, "{}", r.name);
        assert!(close(device, r.device_total_us), "{}", r.name);
    }
}

#[test]
fn kernels_match_the_kernel_events() {
    for file in TRACES {
        let s = spans(file);
        let t = load_path(&common::traces_dir().join(file)).unwrap();
        let got = kernels(&t);
        let mut want: HashMap<String, (u64, f64, f64)> = HashMap::new();
        for k in s.iter().filter(|x| x.cat == "kernel") {
            let e = want.entry(k.name.clone()).or_insert((0, 0.0, f64::MAX));
            e.0 += 1;
            e.1 += k.dur;
            e.2 = e.2.min(k.dur);
        }
        assert_eq!(got.rows.len(), want.len(), "{file}");
        for r in &got.rows {
            let (calls, total, min) = want[&r.name];
            assert_eq!(r.calls, calls, "{file} {}", r.name);
            assert!(
                close(r.total_us, total) && close(r.min_us, min),
                "{file} {}",
                r.name
            );
            assert!(close(r.mean_us * calls as f64, total), "{file} {}", r.name);
        }
        let tc: f64 = s
            .iter()
            .filter(|x| x.cat == "kernel" && uses_tensor_cores(&x.name))
            .map(|x| x.dur)
            .sum();
        assert!(close(got.tensor_core_time_us, tc), "{file}");
    }
    assert!(uses_tensor_cores("volta_h884gemm_64x64_ldg8_nn"));
    assert!(uses_tensor_cores(
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"
    ));
    assert!(!uses_tensor_cores("volta_sgemm_128x64_nn"));
}

/// Kernel time has the first priority, so each step's kernel share is the union of its
/// (non-communication) kernels clipped to the step's window; the parts sum to the window.
#[test]
fn step_time_parts_sum_to_the_step_and_kernels_come_first() {
    for file in [
        "hta__critical_path_alexnet.json.gz",
        "hta__nccl_data.json.gz",
        "hta__sampled_rank-0.json.gz",
    ] {
        let s = spans(file);
        let t = load_path(&common::traces_dir().join(file)).unwrap();
        let got = step_time(&t);
        assert!(!got.steps.is_empty(), "{file}");
        let mut kernels: Vec<(f64, f64)> = s
            .iter()
            .filter(|x| x.cat == "kernel" && !x.name.starts_with("nccl"))
            .map(|x| (x.ts, x.ts + x.dur))
            .collect();
        kernels.sort_by(|a, b| a.0.total_cmp(&b.0));
        for st in &got.steps {
            let sum: f64 = st.parts.iter().map(|p| p.1).sum();
            assert!(
                close(sum, st.total_us),
                "{file} step {:?}: {sum} vs {}",
                st.step,
                st.total_us
            );
            // Union of the kernels clipped to [start, end).
            let (mut union, mut reach) = (0.0, st.start_us);
            for &(a, b) in &kernels {
                let (a, b) = (a.max(reach), b.min(st.end_us));
                if b > a {
                    union += b - a;
                    reach = b;
                }
            }
            let kernel = st
                .parts
                .iter()
                .find(|p| p.0 == StepCategory::Kernel)
                .unwrap()
                .1;
            assert!(
                (kernel - union).abs() <= 0.01 + 1e-6 * union,
                "{file} step {:?}: {kernel} vs {union}",
                st.step
            );
        }
        for w in got.steps.windows(2) {
            assert!(w[0].end_us <= w[1].start_us + 1e-6, "{file}: steps overlap");
        }
    }
}

#[test]
fn memory_peak_is_the_largest_total_allocated() {
    let file = "hta__df_index_resolver.json.gz";
    let ev = events(file);
    let mut peak: HashMap<(i64, i64), (i64, u64)> = HashMap::new();
    for e in ev.iter().filter(|e| e["name"] == "[memory]") {
        let a = &e["args"];
        let key = (
            a["Device Type"].as_i64().unwrap(),
            a["Device Id"].as_i64().unwrap(),
        );
        let p = peak.entry(key).or_insert((i64::MIN, 0));
        p.0 = p.0.max(a["Total Allocated"].as_i64().unwrap());
        p.1 += 1;
    }
    let t = load_path(&common::traces_dir().join(file)).unwrap();
    let got = memory(&t);
    assert_eq!(got.devices.len(), peak.len());
    for d in &got.devices {
        let (p, n) = peak[&(d.device_type, d.device_id)];
        assert_eq!(d.peak_allocated_bytes, p, "{}", d.device);
        assert_eq!(d.events, n, "{}", d.device);
        assert!(
            d.curve.iter().any(|x| x.allocated_bytes == p),
            "the curve keeps the peak"
        );
        assert_eq!(d.alive_at_peak_bytes + d.allocated_before_trace_bytes, p);
        assert!(d.alive_at_peak.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
    let none = memory(
        &load_path(&common::traces_dir().join("hta__critical_path_alexnet.json.gz")).unwrap(),
    );
    assert!(none.devices.is_empty() && none.note.contains("profile_memory=True"));
}

/// Over chosen steps the memory view keeps the `[memory]` events that start in those steps (the
/// ProfilerStep spans read straight from the JSON): their count, their peak, a curve inside them.
#[test]
fn memory_over_chosen_steps_is_the_memory_of_those_steps() {
    use profile_model::analysis::views::memory::memory_in;
    use profile_model::analysis::views::HostOps;
    let file = "hta__df_index_resolver.json.gz";
    let ev = events(file);
    let step = |n: i64| {
        let e = ev
            .iter()
            .find(|e| e["name"] == format!("ProfilerStep#{n}").as_str() && e["ph"] == "X")
            .unwrap();
        let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as i64;
        (
            ts,
            ts + (e["dur"].as_f64().unwrap() * 1000.0).round() as i64,
        )
    };
    let (start, end) = (step(3).0, step(4).1);
    let mut want: HashMap<(i64, i64), (i64, u64)> = HashMap::new();
    for e in ev.iter().filter(|e| e["name"] == "[memory]") {
        let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as i64;
        if ts < start || ts >= end {
            continue;
        }
        let a = &e["args"];
        let key = (
            a["Device Type"].as_i64().unwrap(),
            a["Device Id"].as_i64().unwrap(),
        );
        let p = want.entry(key).or_insert((i64::MIN, 0));
        p.0 = p.0.max(a["Total Allocated"].as_i64().unwrap());
        p.1 += 1;
    }
    assert!(!want.is_empty(), "steps 3-4 hold [memory] events");
    let t = load_path(&common::traces_dir().join(file)).unwrap();
    let whole = memory(&t);
    let got = memory_in(&t, Some(&HostOps::within(&t, Some((3, 4)))));
    assert_eq!(got.devices.len(), want.len());
    for d in &got.devices {
        let (p, n) = want[&(d.device_type, d.device_id)];
        assert_eq!(d.events, n, "{}", d.device);
        assert_eq!(d.peak_allocated_bytes, p, "{}", d.device);
        let all = whole.devices.iter().find(|w| w.device == d.device).unwrap();
        assert!(
            d.events < all.events,
            "{}: fewer events than the whole trace",
            d.device
        );
        assert!(
            d.curve
                .iter()
                .all(|x| x.ts_us * 1000.0 >= start as f64 - 1.0
                    && x.ts_us * 1000.0 < end as f64 + 1.0)
        );
        assert_eq!(d.alive_at_peak_bytes + d.allocated_before_trace_bytes, p);
    }
}

fn cli(args: &[&str]) -> String {
    common::cli_ok(args)
}

/// `ops`, `kernels`, `memory` and `steps` give the library's figures as JSON, and CSV with one
/// line per row.
#[test]
fn the_cli_twins_give_the_same_figures() {
    let path = common::traces_dir().join("hta__df_index_resolver.json.gz");
    let p = path.to_str().unwrap();
    let t = load_path(&path).unwrap();
    let json = |cmd: &str| -> Value { serde_json::from_str(&cli(&[cmd, "--json", p])).unwrap() };
    let ops = json("ops");
    let lib = operators(&t, false);
    assert_eq!(
        ops[0]["result"]["rows"].as_array().unwrap().len(),
        lib.rows.len()
    );
    assert_eq!(
        ops[0]["result"]["rows"][0]["name"],
        lib.rows[0].name.as_str()
    );
    assert_eq!(
        ops[0]["result"]["rows"][0]["device_total_us"]
            .as_f64()
            .unwrap(),
        lib.rows[0].device_total_us
    );
    let k = json("kernels");
    assert_eq!(
        k[0]["result"]["kernel_time_us"].as_f64().unwrap(),
        kernels(&t).kernel_time_us
    );
    let m = json("memory");
    let lm = memory(&t);
    assert_eq!(
        m[0]["result"]["devices"][1]["peak_allocated_bytes"]
            .as_i64()
            .unwrap(),
        lm.devices[1].peak_allocated_bytes
    );
    let s = json("steps");
    assert_eq!(
        s[0]["result"]["steps"].as_array().unwrap().len(),
        step_time(&t).steps.len()
    );
    let csv = cli(&["ops", "--by-shape", "--csv", p]);
    assert!(csv.starts_with("rank,name,input_shapes,calls,"));
    assert_eq!(csv.lines().count(), 1 + operators(&t, true).rows.len());
    let steps_csv = cli(&["steps", "--csv", p]);
    assert!(steps_csv
        .lines()
        .next()
        .unwrap()
        .ends_with("cpu_exec_us,other_us"));
}

/// A model `Net_0` with two `Linear` children; the second launches two kernels, the first one.
#[test]
fn modules_nest_and_carry_the_device_time_launched_inside_them() {
    use profile_model::analysis::views::modules::modules;
    let py = |name: &str, ts: i64, dur: i64| {
        format!(
            r#"{{"ph":"X","cat":"python_function","name":"nn.Module: {name}","pid":1,"tid":1,"ts":{ts},"dur":{dur}}}"#
        )
    };
    let launch = |ts: i64, corr: i64, kdur: i64| {
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{ts},"dur":2,"args":{{"correlation":{corr}}}}},
               {{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":{},"dur":{kdur},"args":{{"correlation":{corr},"stream":7}}}}"#,
            ts + 50
        )
    };
    let ev = [
        py("Net_0", 0, 100),
        py("Linear_0", 10, 20),
        launch(12, 1, 5),
        py("Linear_1", 40, 30),
        launch(45, 2, 7),
        launch(50, 3, 11),
        py("Net_0", 200, 10),
    ];
    let text = format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","));
    let t = profile_model::table::load_bytes("m.json", text.as_bytes()).unwrap();
    let got = modules(&t);
    let rows: Vec<(&str, u64, f64, f64)> = got
        .rows
        .iter()
        .map(|r| (r.path.as_str(), r.calls, r.host_us, r.device_us))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("Net_0", 2, 110.0, 23.0),
            ("Net_0/Linear_1", 1, 30.0, 18.0),
            ("Net_0/Linear_0", 1, 20.0, 5.0),
        ]
    );
    let none = modules(
        &load_path(&common::traces_dir().join("hta__critical_path_alexnet.json.gz")).unwrap(),
    );
    assert!(none.rows.is_empty() && none.note.contains("with_stack=True"));
}
