//! What a collective does and which library runs it: the enums, and the nccl-tests bus-bandwidth
//! factor of each kind. The names that map to them are classed in `analysis/names.rs`.

use serde::{Deserialize, Serialize};

crate::stable_enum! {
    /// The operation of a collective (one enum for NCCL, RCCL, HCCL, MSCCL++, custom kernels, Gloo).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CollectiveKind {
        AllReduce,
        AllGather,
        ReduceScatter,
        Broadcast,
        Reduce,
        AllToAll,
        /// Point-to-point send/recv (pipeline stages, or NCCL's kernel for a grouped exchange).
        SendRecv,
        Barrier,
        /// A communication kernel whose operation neither its name nor its args say.
        #[default]
        Other,
    }
}

crate::stable_enum! {
    /// The library (or kind of kernel) that runs a collective.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CollectiveLibrary {
        Nccl,
        Rccl,
        Hccl,
        /// MSCCL / MSCCL++.
        Msccl,
        /// Hand-written all-reduce kernels (vLLM/TRT-LLM custom all-reduce, symmetric memory, multimem).
        CustomAllReduce,
        /// NVSHMEM-based kernels (DeepEP and others).
        Nvshmem,
        /// Gloo: collectives on the CPU (no device kernel; the host op's span is the instance).
        Gloo,
        #[default]
        Other,
    }
}

impl CollectiveKind {
    /// nccl-tests' bus-bandwidth factor for `n` ranks (`busbw = algbw * factor`): all-reduce
    /// 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast, reduce and
    /// send/recv 1. `None` for a barrier or an unknown operation (no bytes to speak of).
    pub fn bus_factor(self, n: u32) -> Option<f64> {
        let n = f64::from(n.max(1));
        match self {
            CollectiveKind::AllReduce => Some(2.0 * (n - 1.0) / n),
            CollectiveKind::AllGather
            | CollectiveKind::ReduceScatter
            | CollectiveKind::AllToAll => Some((n - 1.0) / n),
            CollectiveKind::Broadcast | CollectiveKind::Reduce | CollectiveKind::SendRecv => {
                Some(1.0)
            }
            CollectiveKind::Barrier | CollectiveKind::Other => None,
        }
    }

    /// The operation in words, for reports.
    pub fn label(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::Broadcast => "broadcast",
            CollectiveKind::Reduce => "reduce",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::SendRecv => "send/recv",
            CollectiveKind::Barrier => "barrier",
            CollectiveKind::Other => "other collective",
        }
    }
}

/// Bytes of one element of a `dtype` arg (`Float`, `BFloat16`, `Long`, `float`, `c10::Half`, ...);
/// `None` for a type it does not know.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    let d = dtype
        .trim()
        .trim_start_matches("c10::")
        .to_ascii_lowercase();
    Some(match d.as_str() {
        "double" | "float64" | "long" | "int64" | "long int" | "complexfloat" | "uint64" => 8,
        "float" | "float32" | "int" | "int32" | "uint32" => 4,
        "half" | "float16" | "bfloat16" | "short" | "int16" | "uint16" => 2,
        "byte" | "char" | "bool" | "int8" | "uint8" | "signed char" | "unsigned char"
        | "float8_e4m3fn" | "float8_e5m2" | "float8_e4m3fnuz" | "float8_e5m2fnuz" => 1,
        "complexdouble" => 16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_are_those_of_nccl_tests() {
        assert_eq!(CollectiveKind::AllReduce.bus_factor(8), Some(1.75));
        assert_eq!(CollectiveKind::AllGather.bus_factor(4), Some(0.75));
        assert_eq!(CollectiveKind::Broadcast.bus_factor(4), Some(1.0));
        assert_eq!(CollectiveKind::Barrier.bus_factor(4), None);
        assert_eq!(CollectiveKind::AllReduce.as_str(), "all_reduce");
        assert_eq!(dtype_bytes("BFloat16"), Some(2));
        assert_eq!(dtype_bytes("Float"), Some(4));
        assert_eq!(dtype_bytes("signed char"), Some(1));
        assert_eq!(dtype_bytes("mystery"), None);
    }
}
