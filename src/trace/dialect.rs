//! Kineto dialects 2020-2026: maps old and new category names and phases to one canonical event kind.

use serde::{Deserialize, Serialize};

crate::stable_enum! {
    /// What an event is, whatever the Kineto version called it. Stored as `u8` in the `kind` column.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[repr(u8)]
    pub enum EventKind {
        /// A GPU kernel (`kernel`, old `Kernel`).
        Kernel = 0,
        /// A GPU memory copy (`gpu_memcpy`, old `Memcpy`).
        Memcpy = 1,
        /// A GPU memory set (`gpu_memset`, old `Memset`).
        Memset = 2,
        /// A CPU operator (`cpu_op`, old `Operator`).
        CpuOp = 3,
        /// A CUDA/HIP/MTIA runtime call (`cuda_runtime`, old `Runtime`, `hip_runtime`, `mtia_runtime`).
        Runtime = 4,
        /// A CUDA driver call (`cuda_driver`).
        Driver = 5,
        /// A CPU-side annotation (`user_annotation`, `record_param_comms`, `ProfilerStep#N`).
        UserAnnotation = 6,
        /// A GPU-side annotation (`gpu_user_annotation`).
        GpuUserAnnotation = 7,
        /// A Python function (`python_function`, with_stack).
        PythonFunction = 8,
        /// A synchronisation event (`cuda_sync`: Event Sync, Stream Wait Event, Context Sync, ...).
        Sync = 9,
        /// Profiler overhead (`overhead`).
        Overhead = 10,
        /// An instant event (`cpu_instant_event`, ph `i`/`I`).
        Instant = 11,
        /// A flow link (`ac2g`, `fwdbwd`, old `async`; ph `s`/`f`/`t`).
        Flow = 12,
        /// The profiler's own span (`Trace`).
        Trace = 13,
        /// Process/thread names and sort indexes (ph `M`).
        Metadata = 14,
        /// A counter sample (ph `C`).
        Counter = 15,
        /// A CUPTI profiler range (`cuda_profiler_range`).
        ProfilerRange = 16,
        /// An operation on a non-CUDA accelerator (`mtia_ccp_events`).
        AcceleratorOp = 17,
        /// Anything else (unknown category or phase); the original category is kept.
        Other = 18,
    }
}

impl EventKind {
    pub fn from_u8(v: u8) -> EventKind {
        EventKind::ALL
            .get(v as usize)
            .copied()
            .unwrap_or(EventKind::Other)
    }

    /// Work that runs on the device: kernels, copies, sets and accelerator ops.
    pub fn is_gpu_activity(self) -> bool {
        matches!(
            self,
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset | EventKind::AcceleratorOp
        )
    }
}

/// The canonical kind of a category string, or `None` when the category is unknown.
/// Matching ignores case, spaces and underscores, so `gpu_memcpy`, `Memcpy` and `GPU Memcpy` agree.
pub fn kind_of_category(category: &str) -> Option<EventKind> {
    let mut norm = [0u8; 32];
    let mut n = 0;
    for b in category.bytes() {
        if b == b' ' || b == b'_' || b == b'-' {
            continue;
        }
        if n == norm.len() {
            return None;
        }
        norm[n] = b.to_ascii_lowercase();
        n += 1;
    }
    let kind = match &norm[..n] {
        b"kernel" | b"gpukernel" => EventKind::Kernel,
        b"gpumemcpy" | b"memcpy" => EventKind::Memcpy,
        b"gpumemset" | b"memset" => EventKind::Memset,
        b"cpuop" | b"operator" => EventKind::CpuOp,
        b"cudaruntime"
        | b"runtime"
        | b"hipruntime"
        | b"mtiaruntime"
        | b"xpuruntime"
        | b"privateuse1runtime" => EventKind::Runtime,
        b"cudadriver" | b"driver" | b"hipdriver" | b"privateuse1driver" => EventKind::Driver,
        b"userannotation" | b"recordparamcomms" => EventKind::UserAnnotation,
        b"gpuuserannotation" => EventKind::GpuUserAnnotation,
        b"pythonfunction" | b"python" => EventKind::PythonFunction,
        b"cudasync" | b"sync" => EventKind::Sync,
        b"overhead" => EventKind::Overhead,
        b"cpuinstantevent" | b"instant" => EventKind::Instant,
        b"ac2g" | b"fwdbwd" | b"async" | b"flow" | b"flowevent" => EventKind::Flow,
        b"trace" => EventKind::Trace,
        b"cudaprofilerrange" => EventKind::ProfilerRange,
        b"mtiaccpevents" | b"mtiainsight" => EventKind::AcceleratorOp,
        _ => return None,
    };
    Some(kind)
}

/// The canonical kind of an event from its phase and (already resolved) category kind.
/// Phases that fix the kind (metadata, counters, flows) win over the category.
pub fn kind_of_event(phase: u8, category_kind: Option<EventKind>) -> EventKind {
    match phase {
        b'M' => EventKind::Metadata,
        b'C' => EventKind::Counter,
        b's' | b'f' | b't' => EventKind::Flow,
        b'i' | b'I' | b'R' => match category_kind {
            Some(k) if k != EventKind::Flow => k,
            _ => EventKind::Instant,
        },
        _ => category_kind.unwrap_or(EventKind::Other),
    }
}

/// Phases of the Chrome trace format this tool understands.
pub fn is_known_phase(phase: u8) -> bool {
    matches!(
        phase,
        b'X' | b'B'
            | b'E'
            | b'i'
            | b'I'
            | b'C'
            | b's'
            | b'f'
            | b't'
            | b'M'
            | b'b'
            | b'e'
            | b'n'
            | b'R'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_new_names_agree() {
        assert_eq!(kind_of_category("kernel"), Some(EventKind::Kernel));
        assert_eq!(kind_of_category("Kernel"), Some(EventKind::Kernel));
        assert_eq!(kind_of_category("gpu_memcpy"), kind_of_category("Memcpy"));
        assert_eq!(kind_of_category("Operator"), Some(EventKind::CpuOp));
        assert_eq!(kind_of_category("Runtime"), Some(EventKind::Runtime));
        assert_eq!(kind_of_category("async"), Some(EventKind::Flow));
        assert_eq!(kind_of_category("no such thing"), None);
        for k in EventKind::ALL {
            assert_eq!(EventKind::from_u8(k as u8), k);
        }
    }

    #[test]
    fn phase_wins_over_category() {
        assert_eq!(kind_of_event(b'M', None), EventKind::Metadata);
        assert_eq!(kind_of_event(b's', Some(EventKind::Flow)), EventKind::Flow);
        assert_eq!(
            kind_of_event(b'X', Some(EventKind::Kernel)),
            EventKind::Kernel
        );
        assert_eq!(kind_of_event(b'i', None), EventKind::Instant);
        assert_eq!(kind_of_event(b'X', None), EventKind::Other);
    }
}
