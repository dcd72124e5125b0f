//! The diagnosis rules: each a pure function of [`DiagnosisInputs`] with its threshold, giving a [`Finding`].

use super::findings::{
    EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingKind, Impact, Severity,
};
use super::inputs::{pct, DiagnosisInputs};

/// A kernel shorter than this (ns) is "small": launch costs ~5-10 µs of CPU time each.
pub const SMALL_KERNEL_NS: i64 = 10_000;
/// A copy moving fewer bytes than this is "small".
pub const SMALL_COPY_BYTES: i64 = 64 * 1024;
/// Launch overhead: mean kernel below 10 µs, or at least this share (%) of kernel time in small kernels...
pub const SMALL_KERNEL_TIME_PCT: f64 = 50.0;
/// ... and the GPU idle at least this share (%) of its window.
pub const LAUNCH_IDLE_PCT: f64 = 10.0;
/// Fewest kernels for the launch-overhead rule.
pub const MIN_KERNELS_FOR_LAUNCH: u64 = 20;
/// One kernel dominates above this share (%) of kernel time.
pub const DOMINANT_KERNEL_PCT: f64 = 50.0;
/// Copies and sets above this share (%) of GPU busy time are heavy.
pub const MEMORY_BUSY_PCT: f64 = 10.0;
/// Pageable host copies above this share (%) of GPU busy time are worth pinning.
pub const PAGEABLE_BUSY_PCT: f64 = 1.0;
/// At least this many copies, most of them small, is "many small copies".
pub const MANY_SMALL_COPIES: u64 = 100;
/// Communication not hidden behind compute above this share (%) of the GPU window.
pub const EXPOSED_COMM_PCT: f64 = 10.0;
/// GPU idle inside DataLoader operations above this share (%) of the window.
pub const DATA_LOADER_IDLE_PCT: f64 = 10.0;
/// GPU waiting on the host above this share (%) of the window.
pub const HOST_WAIT_PCT: f64 = 15.0;
/// Kernel-wait gaps above this share (%) of the window.
pub const KERNEL_WAIT_PCT: f64 = 5.0;
/// Host time blocked in synchronising calls above this share (%) of the GPU window.
pub const SYNC_PCT: f64 = 2.0;
/// A rank whose busy time exceeds the median rank's by this share (%) is a straggler.
pub const STRAGGLER_PCT: f64 = 10.0;

/// Every rule's finding, most important first.
pub fn evaluate(inputs: &DiagnosisInputs) -> Vec<Finding> {
    let rules: [fn(&DiagnosisInputs) -> Option<Finding>; 10] = [
        no_gpu_kernels,
        launch_overhead,
        dominant_kernel,
        memory_traffic,
        communication,
        data_loading,
        host_bound,
        synchronization,
        straggler,
        one_rank_only,
    ];
    let mut out: Vec<Finding> = rules.iter().filter_map(|r| r(inputs)).collect();
    for f in &mut out {
        if f.filter.is_none() {
            f.filter = EvidenceFilter::of(&f.evidence);
        }
    }
    out.sort_by_key(|f| f.rank_key());
    out
}

/// A short display form of a kernel or op name: no `void `, no template arguments or parameters.
pub fn short_name(name: &str) -> String {
    let s = name.strip_prefix("void ").unwrap_or(name);
    if !(s.contains("::") || s.contains('<') || name.starts_with("void ")) {
        return s.chars().take(80).collect();
    }
    let mut out = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        if depth < 0 {
            break;
        }
    }
    let out = out.trim();
    let out = if out.is_empty() { s.trim() } else { out };
    if out.chars().count() > 80 {
        let cut: String = out.chars().take(77).collect();
        format!("{cut}...")
    } else {
        out.to_string()
    }
}

/// Display forms of several names at once: [`short_name`] where that is unique among them; names
/// whose short forms collide keep their template arguments (cut at 80 characters), then a `#N`.
pub fn short_names(names: &[&str]) -> Vec<String> {
    let short: Vec<String> = names.iter().map(|n| short_name(n)).collect();
    let collides =
        |i: usize, forms: &[String]| forms.iter().filter(|f| **f == forms[i]).count() > 1;
    let mut out: Vec<String> = (0..names.len())
        .map(|i| {
            if !collides(i, &short) {
                return short[i].clone();
            }
            let s = names[i].strip_prefix("void ").unwrap_or(names[i]);
            // The kernel and its template arguments, without its parameter list.
            let mut depth = 0i32;
            let end = s
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '<' => depth += 1,
                        '>' => depth -= 1,
                        _ => {}
                    }
                    c == '(' && depth == 0
                })
                .map_or(s.len(), |(i, _)| i);
            let long = s[..end].trim();
            if long.chars().count() > 80 {
                format!("{}...", long.chars().take(77).collect::<String>())
            } else {
                long.to_string()
            }
        })
        .collect();
    for i in 0..out.len() {
        if collides(i, &out) {
            let n = out[..i].iter().filter(|f| **f == out[i]).count();
            if n > 0 {
                out[i] = format!("{} #{}", out[i], n + 1);
            }
        }
    }
    out
}

fn us(ns: f64) -> String {
    format!("{:.1} µs", ns / 1000.0)
}

fn ms(ns: i64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

fn impact(inputs: &DiagnosisInputs, time_ns: i64) -> Impact {
    Impact {
        pct_of_gpu_time: (inputs.time.window_ns > 0).then(|| inputs.time.pct(time_ns)),
        ms_per_step: inputs.ms_per_step(time_ns),
        time_ns,
    }
}

/// Critical above twice the threshold, warning above it.
fn severity(value: f64, threshold: f64) -> Severity {
    if value >= 2.0 * threshold {
        Severity::Critical
    } else {
        Severity::Warning
    }
}

fn top_evidence(refs: impl Iterator<Item = EvidenceRef>, n: usize) -> Vec<EvidenceRef> {
    let mut v: Vec<EvidenceRef> = refs.collect();
    v.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name)));
    v.truncate(n);
    v
}

/// The trace has no GPU kernels at all.
pub fn no_gpu_kernels(i: &DiagnosisInputs) -> Option<Finding> {
    if i.kernel_count > 0 {
        return None;
    }
    let (explanation, action) = if i.accelerator_ops > 0 {
        (
            format!(
                "The trace has {} accelerator operations but no CUDA/HIP kernels, so kernel-level findings \
                 (launch overhead, dominant kernel, overlap) are limited.",
                i.accelerator_ops
            ),
            "Use the accelerator vendor's tooling for kernel-level detail.".to_string(),
        )
    } else {
        (
            "The trace has no GPU kernels: it was captured without ProfilerActivity.CUDA, or the model ran \
             on the CPU; GPU findings cannot be made."
                .to_string(),
            "Re-capture with `torch.profiler.profile(activities=[ProfilerActivity.CPU, \
             ProfilerActivity.CUDA])` and make sure the model and inputs are on the GPU."
                .to_string(),
        )
    };
    Some(Finding {
        id: "no_gpu_kernels".into(),
        kind: FindingKind::TraceLimitation,
        title: "No GPU kernels in the trace".into(),
        severity: Severity::Warning,
        threshold: "at least 1 GPU kernel".into(),
        measured: format!("{} GPU kernels", i.kernel_count),
        value: 0.0,
        impact: Impact::default(),
        explanation,
        actions: vec![action],
        evidence: Vec::new(),
        filter: None,
    })
}

/// Many small kernels with the GPU idle between them: kernel launch overhead.
pub fn launch_overhead(i: &DiagnosisInputs) -> Option<Finding> {
    if i.kernel_count < MIN_KERNELS_FOR_LAUNCH {
        return None;
    }
    let mean = i.mean_kernel_ns();
    let small_pct = pct(i.small_kernel_time_ns, i.kernel_time_ns);
    let t = &i.time;
    let idle = t.idle_ns - t.idle_in_data_loader_ns;
    let idle_pct = t.pct(idle);
    let small = mean < SMALL_KERNEL_NS as f64 || small_pct >= SMALL_KERNEL_TIME_PCT;
    if !small || idle_pct < LAUNCH_IDLE_PCT {
        return None;
    }
    let small_share = pct(i.small_kernel_count as i64, i.kernel_count as i64);
    let launch_avg = if i.launch_calls > 0 {
        format!(
            "; each launch call takes {} on the CPU",
            us(i.launch_call_ns as f64 / i.launch_calls as f64)
        )
    } else {
        String::new()
    };
    Some(Finding {
        id: "launch_overhead".into(),
        kind: FindingKind::LaunchOverhead,
        title: "Many small kernels: kernel launch overhead".into(),
        severity: severity(idle_pct, LAUNCH_IDLE_PCT),
        threshold: format!(
            "mean kernel < 10 µs or ≥ {SMALL_KERNEL_TIME_PCT:.0}% of kernel time in kernels < 10 µs, \
             with GPU idle ≥ {LAUNCH_IDLE_PCT:.0}% of its time"
        ),
        measured: format!(
            "mean kernel {}; {small_pct:.1}% of kernel time in kernels < 10 µs; GPU idle {idle_pct:.1}%",
            us(mean)
        ),
        value: mean / 1000.0,
        impact: impact(i, idle),
        explanation: format!(
            "{} kernels average {}; {small_share:.0}% of them run under 10 µs{launch_avg}, so the GPU \
             finishes each kernel before the next is launched and sits idle {idle_pct:.1}% of the time.",
            i.kernel_count,
            us(mean)
        ),
        actions: vec![
            "Compile the model with `torch.compile(model)` (mode=\"reduce-overhead\" also uses CUDA graphs) \
             to fuse the small element-wise kernels."
                .into(),
            "Capture the steady-state step in CUDA graphs (`torch.cuda.graphs`/`make_graphed_callables`) to \
             launch it with one call."
                .into(),
            "Use fused operators (fused optimizers `foreach=True`/`fused=True`, fused LayerNorm/attention) and \
             larger batches so each kernel does more work."
                .into(),
        ],
        evidence: top_evidence(
            i.kernels
                .iter()
                .filter(|k| k.small_calls > 0)
                .flat_map(|k| k.evidence.iter().cloned()),
            5,
        ),
        filter: None,
    })
}

/// Names of fp32 SIMT GEMM/convolution kernels (no tensor cores).
pub fn is_fp32_simt_gemm(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    let tensor = [
        "tensorop", "s1688", "s16816", "h884", "h1688", "h16816", "hmma", "xmma", "wgmma", "bf16",
        "f16", "tf32", "i8816", "imma",
    ];
    (l.contains("sgemm") || l.contains("gemm_fp32") || l.contains("gemmsn") || l.contains("gemv"))
        && !tensor.iter().any(|t| l.contains(t))
}

/// One kernel takes more than half of the kernel time.
pub fn dominant_kernel(i: &DiagnosisInputs) -> Option<Finding> {
    let top = i.kernels.first()?;
    let share = pct(top.total_ns, i.kernel_time_ns);
    if share <= DOMINANT_KERNEL_PCT {
        return None;
    }
    let short = short_name(&top.name);
    let simt = is_fp32_simt_gemm(&top.name);
    let mut actions = Vec::new();
    if simt {
        actions.push(format!(
            "`{short}` is an fp32 SIMT kernel (no tensor cores): enable TF32 \
             (`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`) or \
             mixed precision (`torch.autocast(\"cuda\", dtype=torch.bfloat16)`)."
        ));
    } else if top.communication {
        actions.push(format!(
            "`{short}` is a communication kernel: see the communication finding (overlap, bucket sizes)."
        ));
    } else {
        actions.push(format!(
            "This is normal for compute-heavy work; check that `{short}` is the optimised variant \
             (tensor-core GEMM/conv under AMP or TF32, `torch.backends.cudnn.benchmark = True` for convolutions)."
        ));
    }
    actions.push(format!(
        "Speeding up this one kernel bounds the whole gain: it is {share:.1}% of kernel time ({} over {} calls).",
        ms(top.total_ns),
        top.calls
    ));
    Some(Finding {
        id: "dominant_kernel".into(),
        kind: FindingKind::DominantKernel,
        title: format!("One kernel dominates: `{short}`"),
        severity: if simt {
            Severity::Warning
        } else {
            Severity::Info
        },
        threshold: format!("one kernel > {DOMINANT_KERNEL_PCT:.0}% of kernel time"),
        measured: format!("{share:.1}% of kernel time"),
        value: share,
        impact: impact(i, top.total_ns),
        explanation: format!(
            "`{short}` takes {share:.1}% of all kernel time ({} calls, mean {}){}.",
            top.calls,
            us(top.total_ns as f64 / top.calls.max(1) as f64),
            if simt {
                "; it runs in fp32 without tensor cores"
            } else {
                ""
            }
        ),
        actions,
        evidence: top.evidence.clone(),
        filter: None,
    })
}

/// Heavy memory copies/sets, pageable host copies, or many small copies.
pub fn memory_traffic(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    if t.busy_ns <= 0 || i.copies.is_empty() {
        return None;
    }
    let mem_pct = pct(t.memory_ns, t.busy_ns);
    let pageable_ns: i64 = i
        .copies
        .iter()
        .filter(|c| c.pageable)
        .map(|c| c.total_ns)
        .sum();
    let pageable_n: u64 = i
        .copies
        .iter()
        .filter(|c| c.pageable)
        .map(|c| c.count)
        .sum();
    let pageable_pct = pct(pageable_ns, t.busy_ns);
    let copies_n: u64 = i
        .copies
        .iter()
        .filter(|c| c.name.starts_with("Memcpy"))
        .map(|c| c.count)
        .sum();
    let small_n: u64 = i.copies.iter().map(|c| c.small_count).sum();
    let many_small = copies_n >= MANY_SMALL_COPIES && 2 * small_n >= copies_n;
    let heavy = mem_pct >= MEMORY_BUSY_PCT;
    let pageable = pageable_n > 0 && pageable_pct >= PAGEABLE_BUSY_PCT;
    if !heavy && !pageable && !many_small {
        return None;
    }
    let mut actions = Vec::new();
    if pageable {
        actions.push(format!(
            "{pageable_n} host copies use pageable memory ({pageable_pct:.1}% of GPU busy time): use pinned \
             memory (`DataLoader(pin_memory=True)`, `tensor.pin_memory()`) and `.to(device, non_blocking=True)`."
        ));
    }
    if many_small {
        actions.push(format!(
            "{small_n} of {copies_n} copies move < 64 KiB: batch them into one tensor, keep data on the GPU, \
             and avoid per-element `.item()`/`.cpu()`/`.cuda()` calls."
        ));
    }
    actions.push(
        "Cut copies: create tensors directly on the GPU (`torch.zeros(..., device=\"cuda\")`), use in-place \
         ops, and avoid `.cpu()`/`.cuda()`/`.item()` round trips inside the step."
            .into(),
    );
    let (value, severity_value, threshold) = if heavy {
        (mem_pct, mem_pct, MEMORY_BUSY_PCT)
    } else if pageable {
        (mem_pct, pageable_pct, PAGEABLE_BUSY_PCT)
    } else {
        (mem_pct, MEMORY_BUSY_PCT, MEMORY_BUSY_PCT)
    };
    Some(Finding {
        id: "memory_traffic".into(),
        kind: FindingKind::MemoryTraffic,
        title: "Heavy memory operations: data movement".into(),
        severity: severity(severity_value, threshold),
        threshold: format!(
            "copies/sets ≥ {MEMORY_BUSY_PCT:.0}% of GPU busy time, or pageable copies ≥ \
             {PAGEABLE_BUSY_PCT:.0}%, or ≥ {MANY_SMALL_COPIES} copies mostly < 64 KiB"
        ),
        measured: format!(
            "copies/sets {mem_pct:.1}% of GPU busy time; {pageable_n} pageable copies ({pageable_pct:.1}%); \
             {small_n} of {copies_n} copies < 64 KiB"
        ),
        value,
        impact: impact(i, t.memory_exposed_ns.max(pageable_ns.min(t.memory_ns))),
        explanation: format!(
            "Memory copies and sets keep the GPU busy {mem_pct:.1}% of its busy time ({} total), {} of it \
             with no kernel running.",
            ms(t.memory_ns),
            ms(t.memory_exposed_ns)
        ),
        actions,
        evidence: top_evidence(i.copies.iter().flat_map(|c| c.evidence.iter().cloned()), 5),
        filter: None,
    })
}

/// Communication that is not hidden behind compute.
pub fn communication(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    if t.comm_ns <= 0 {
        return None;
    }
    let exposed_pct = t.pct(t.comm_exposed_ns);
    let overlap_pct = pct(t.comm_ns - t.comm_exposed_ns, t.comm_ns);
    if exposed_pct < EXPOSED_COMM_PCT {
        return None;
    }
    Some(Finding {
        id: "communication".into(),
        kind: FindingKind::Communication,
        title: "Communication not overlapped with compute".into(),
        severity: severity(exposed_pct, EXPOSED_COMM_PCT),
        threshold: format!("communication without compute ≥ {EXPOSED_COMM_PCT:.0}% of GPU time"),
        measured: format!(
            "communication {:.1}% of GPU time, {overlap_pct:.1}% of it overlapped; exposed {exposed_pct:.1}%",
            t.pct(t.comm_ns)
        ),
        value: exposed_pct,
        impact: impact(i, t.comm_exposed_ns),
        explanation: format!(
            "Collectives run {} in total and only {overlap_pct:.1}% of that time overlaps computation, so \
             {exposed_pct:.1}% of GPU time is spent waiting on communication.",
            ms(t.comm_ns)
        ),
        actions: vec![
            "Overlap communication with compute: DDP already buckets gradients; tune `bucket_cap_mb` (e.g. \
             25 → 50-100 MB for large models, smaller to start all-reduce earlier) and keep \
             `gradient_as_bucket_view=True`."
                .into(),
            "Use asynchronous collectives (`dist.all_reduce(..., async_op=True)` and wait later) and avoid \
             `torch.cuda.synchronize()` around them; with FSDP enable `forward_prefetch`/`backward_prefetch`."
                .into(),
            "Reduce the volume: gradient accumulation (`no_sync()`), bf16 gradients / DDP comm hooks \
             (`bf16_compress_hook`)."
                .into(),
        ],
        evidence: top_evidence(
            i.kernels
                .iter()
                .filter(|k| k.communication)
                .flat_map(|k| k.evidence.iter().cloned()),
            5,
        ),
        filter: None,
    })
}

/// The GPU waits while the CPU loads data.
pub fn data_loading(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    let idle_pct = t.pct(t.idle_in_data_loader_ns);
    if i.data_loader_ops.is_empty() || idle_pct < DATA_LOADER_IDLE_PCT {
        return None;
    }
    Some(Finding {
        id: "data_loading".into(),
        kind: FindingKind::DataLoading,
        title: "GPU starved by the DataLoader: CPU-bound input pipeline".into(),
        severity: severity(idle_pct, DATA_LOADER_IDLE_PCT),
        threshold: format!("GPU idle during DataLoader ops ≥ {DATA_LOADER_IDLE_PCT:.0}% of GPU time"),
        measured: format!(
            "GPU idle {idle_pct:.1}% of its time while the DataLoader runs ({} of DataLoader time)",
            ms(i.data_loader_ns)
        ),
        value: idle_pct,
        impact: impact(i, t.idle_in_data_loader_ns),
        explanation: format!(
            "The GPU sits idle for {} while the CPU fetches the next batch ({idle_pct:.1}% of GPU time).",
            ms(t.idle_in_data_loader_ns)
        ),
        actions: vec![
            "Load batches in parallel: `DataLoader(num_workers=N)` with N up to the CPU cores per GPU, \
             `persistent_workers=True`, `prefetch_factor=2-4`."
                .into(),
            "Use `pin_memory=True` and `.to(device, non_blocking=True)` so the copy overlaps compute.".into(),
            "Move preprocessing (decode, augment, normalise) to the GPU (e.g. torchvision v2 transforms on \
             CUDA tensors, NVIDIA DALI) or precompute it."
                .into(),
        ],
        evidence: i.data_loader_ops.iter().take(5).cloned().collect(),
        filter: None,
    })
}

/// The GPU waits on the host for reasons other than data loading or tiny kernels.
pub fn host_bound(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    let wait = (t.host_wait_ns - t.idle_in_data_loader_ns).max(0);
    let wait_pct = t.pct(wait);
    if wait_pct < HOST_WAIT_PCT || launch_overhead(i).is_some() {
        return None;
    }
    Some(Finding {
        id: "host_bound".into(),
        kind: FindingKind::HostBound,
        title: "GPU waiting on the host: CPU-bound".into(),
        severity: severity(wait_pct, HOST_WAIT_PCT),
        threshold: format!("host-wait idle ≥ {HOST_WAIT_PCT:.0}% of GPU time"),
        measured: format!("host-wait idle {wait_pct:.1}% of GPU time"),
        value: wait_pct,
        impact: impact(i, wait),
        explanation: format!(
            "For {wait_pct:.1}% of GPU time the next kernel had not even been launched: the Python/CPU side \
             is slower than the GPU ({} in total).",
            ms(wait)
        ),
        actions: vec![
            "Find the CPU work between steps (logging, metrics, `.item()`, Python loops) in the CPU timeline \
             and move it off the critical path or run it every N steps."
                .into(),
            "If data loading is involved: `DataLoader(num_workers>0, pin_memory=True)`; consider \
             `torch.compile` to cut Python overhead."
                .into(),
        ],
        evidence: Vec::new(),
        filter: None,
    })
}

/// GPU idle between kernels, and synchronising calls.
pub fn synchronization(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    // With many tiny kernels the kernel-wait gaps are launch overhead, stated by that rule.
    let kernel_wait_ns = if launch_overhead(i).is_some() {
        0
    } else {
        t.kernel_wait_ns
    };
    let kw_pct = t.pct(kernel_wait_ns);
    let sync_ns: i64 = i.syncs.iter().map(|s| s.total_ns).sum();
    let sync_n: u64 = i.syncs.iter().map(|s| s.count).sum();
    // What a sync costs is the GPU idle it causes (while it blocks and until the drained queue
    // has work again), not the host's blocked time: a sync while the GPU stays busy is harmless.
    let sync_pct = t.pct(t.sync_gpu_idle_ns);
    if kw_pct < KERNEL_WAIT_PCT && (sync_n == 0 || sync_pct < SYNC_PCT) {
        return None;
    }
    let mut actions = Vec::new();
    for s in i.syncs.iter().take(3) {
        let from = s
            .callers
            .iter()
            .take(2)
            .map(|(c, n)| format!("{c} ({n}×)"))
            .collect::<Vec<_>>()
            .join(", ");
        actions.push(format!(
            "{} × `{}` ({} blocked on the CPU), from {from}: remove it from the step (`.item()`, `.cpu()`, \
             `print(tensor)`, `torch.cuda.synchronize()`), or do it every N steps.",
            s.count,
            s.name,
            ms(s.total_ns)
        ));
    }
    actions.push(
        "Fuse small back-to-back kernels (`torch.compile`) and avoid host round trips so kernels queue \
         ahead of the GPU."
            .into(),
    );
    Some(Finding {
        id: "synchronization".into(),
        kind: FindingKind::Synchronization,
        title: "GPU idle between kernels: launch gaps and synchronisations".into(),
        severity: severity(kw_pct.max(sync_pct), KERNEL_WAIT_PCT),
        threshold: format!(
            "kernel-wait idle ≥ {KERNEL_WAIT_PCT:.0}% of GPU time, or GPU idle around synchronising calls ≥ {SYNC_PCT:.0}%"
        ),
        measured: format!(
            "kernel-wait idle {kw_pct:.1}%; {sync_n} synchronising calls blocking {} \
             ({} of it inside the GPU window), the GPU idle {} around them: {sync_pct:.1}%",
            ms(sync_ns),
            ms(t.sync_in_window_ns),
            ms(t.sync_gpu_idle_ns)
        ),
        value: kw_pct,
        impact: impact(i, kernel_wait_ns.max(t.sync_gpu_idle_ns)),
        explanation: format!(
            "Short gaps between kernels add up to {kw_pct:.1}% of GPU time, and {sync_n} calls make the CPU \
             wait for the GPU."
        ),
        actions,
        evidence: top_evidence(i.syncs.iter().flat_map(|s| s.evidence.iter().cloned()), 5),
        filter: None,
    })
}

/// One rank is busier than the median rank (the others wait for it in collectives).
pub fn straggler(i: &DiagnosisInputs) -> Option<Finding> {
    if i.ranks.len() < 2 {
        return None;
    }
    // Work a rank does = GPU busy time without communication (communication includes waiting for others).
    let work = |r: &super::inputs::RankFigure| r.time.busy_ns - r.time.comm_exposed_ns;
    let mut sorted: Vec<i64> = i.ranks.iter().map(work).collect();
    sorted.sort_unstable();
    let median = sorted[(sorted.len() - 1) / 2];
    let slow = i
        .ranks
        .iter()
        .max_by(|a, b| work(a).cmp(&work(b)).then(b.rank.cmp(&a.rank)))?;
    let excess = work(slow) - median;
    let excess_pct = pct(excess, median);
    if median <= 0 || excess_pct < STRAGGLER_PCT {
        return None;
    }
    Some(Finding {
        id: "straggler".into(),
        kind: FindingKind::Straggler,
        title: format!("Straggler: rank {} does more work than the others", slow.rank),
        severity: severity(excess_pct, STRAGGLER_PCT),
        threshold: format!("a rank's GPU work ≥ {STRAGGLER_PCT:.0}% above the median rank"),
        measured: format!(
            "rank {}: {} of GPU work vs median {} (+{excess_pct:.1}%)",
            slow.rank,
            ms(work(slow)),
            ms(median)
        ),
        value: excess_pct,
        impact: Impact {
            pct_of_gpu_time: (slow.time.window_ns > 0).then(|| pct(excess, slow.time.window_ns)),
            ms_per_step: (slow.steps > 0).then(|| excess as f64 / 1e6 / slow.steps as f64),
            time_ns: excess,
        },
        explanation: format!(
            "Rank {} keeps its GPU busy {} longer than the median rank; in synchronous training every other \
             rank waits that long in the next collective.",
            slow.rank,
            ms(excess)
        ),
        actions: vec![
            format!(
                "Check the data distribution and batch sizes of rank {}: uneven sequence lengths or samples \
                 per rank (use a `DistributedSampler`, bucket by length, pad to equal shapes).",
                slow.rank
            ),
            "Check the slow rank's hardware (GPU clocks/thermals, PCIe/NVLink topology, noisy neighbours)."
                .into(),
        ],
        evidence: i
            .ranks
            .iter()
            .map(|r| EvidenceRef {
                kind: EvidenceKind::Rank,
                rank: Some(r.rank),
                name: format!("rank {}", r.rank),
                stream: None,
                count: r.steps,
                time_ns: work(r),
                rows: Vec::new(),
            })
            .collect(),
        filter: Some(EvidenceFilter {
            kind: Some(EvidenceKind::Rank),
            names: vec![format!("rank {}", slow.rank)],
        }),
    })
}

/// Only one rank: straggler analysis is not possible.
pub fn one_rank_only(i: &DiagnosisInputs) -> Option<Finding> {
    if i.ranks.len() != 1 || i.kernel_count == 0 || i.time.comm_ns == 0 {
        return None;
    }
    Some(Finding {
        id: "one_rank_only".into(),
        kind: FindingKind::TraceLimitation,
        title: "One rank only: no straggler analysis".into(),
        severity: Severity::Info,
        threshold: "at least 2 ranks".into(),
        measured: "1 rank".into(),
        value: 1.0,
        impact: Impact::default(),
        explanation:
            "The job communicates but only one rank's trace was given, so ranks cannot be compared."
                .into(),
        actions: vec!["Load the traces of all ranks together to compare them.".into()],
        evidence: Vec::new(),
        filter: None,
    })
}
