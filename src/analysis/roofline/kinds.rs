//! The roofline's categories: element types, operator families, bounds, why a figure is missing and
//! where a device's roof comes from. Each serialises to stable text (`stable_enum!`).

use serde::{Deserialize, Serialize};

crate::stable_enum! {
    /// Element type of a tensor, from `Input type` (`float`, `c10::BFloat16`, ...).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Dtype {
        Fp64,
        Fp32,
        /// fp32 tensors multiplied on tensor cores (the kernel says so, or it ran faster than fp32 can).
        Tf32,
        Fp16,
        Bf16,
        Fp8,
        Int64,
        Int32,
        Int16,
        Int8,
        Bool,
        Complex64,
        Complex128,
    }
}

impl Dtype {
    /// The type of a PyTorch `Input type` text; `None` for non-tensor entries (`Scalar`, `""`, lists).
    pub fn of_input_type(text: &str) -> Option<Dtype> {
        Some(match text {
            "double" => Dtype::Fp64,
            "float" => Dtype::Fp32,
            "c10::Half" | "half" => Dtype::Fp16,
            "c10::BFloat16" | "bfloat16" => Dtype::Bf16,
            t if t.starts_with("c10::Float8") => Dtype::Fp8,
            "long" | "long int" | "int64_t" => Dtype::Int64,
            "int" => Dtype::Int32,
            "short" | "short int" => Dtype::Int16,
            "signed char" | "unsigned char" | "c10::qint8" | "c10::quint8" => Dtype::Int8,
            "bool" => Dtype::Bool,
            "c10::complex<float>" => Dtype::Complex64,
            "c10::complex<double>" => Dtype::Complex128,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::Fp64 | Dtype::Int64 | Dtype::Complex64 => 8,
            Dtype::Complex128 => 16,
            Dtype::Fp32 | Dtype::Tf32 | Dtype::Int32 => 4,
            Dtype::Fp16 | Dtype::Bf16 | Dtype::Int16 => 2,
            Dtype::Fp8 | Dtype::Int8 | Dtype::Bool => 1,
        }
    }

    /// A floating-point type whose multiply rate a device's roof lists.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::Fp64 | Dtype::Fp32 | Dtype::Tf32 | Dtype::Fp16 | Dtype::Bf16 | Dtype::Fp8
        )
    }
}

crate::stable_enum! {
    /// What an operator does, as the FLOP/byte model sees it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum OpFamily {
        /// `mm`, `addmm`, `linear`, `matmul` of 2-D operands, `_scaled_mm`.
        Gemm,
        /// `bmm`, `baddbmm`, `matmul` with batch dimensions.
        BatchedGemm,
        /// Convolution forward (`convolution`, `cudnn_convolution`, `conv2d`, ...).
        Convolution,
        /// `convolution_backward`: the input gradient (dgrad) and/or the weight gradient (wgrad).
        ConvolutionBackward,
        /// Fused attention forward (SDPA: flash, memory-efficient, cuDNN).
        Attention,
        /// Fused attention backward.
        AttentionBackward,
        /// Element-wise arithmetic: one FLOP per output element.
        Elementwise,
        /// Reductions and normalisations: one FLOP per input element.
        Reduction,
        /// Copies and fills (no arithmetic), and the device's memory copies and sets.
        Copy,
        /// A compiled (Inductor) kernel whose `kernel_flop` / `kernel_num_gb` args say its work.
        Inductor,
    }
}

impl OpFamily {
    /// Families whose figures go to the op's main (longest) kernel rather than split by duration.
    pub fn has_main_kernel(self) -> bool {
        matches!(
            self,
            OpFamily::Gemm
                | OpFamily::BatchedGemm
                | OpFamily::Convolution
                | OpFamily::ConvolutionBackward
                | OpFamily::Attention
                | OpFamily::AttentionBackward
        )
    }
}

crate::stable_enum! {
    /// What limits a kernel at its arithmetic intensity: compute (right of the ridge point) or memory.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Bound {
        Compute,
        Memory,
        /// A copy between host and device: the host link limits it.
        HostLink,
    }
}

crate::stable_enum! {
    /// Why a kernel or operator has no FLOP/byte figures. Nothing is guessed.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum MissingReason {
        /// No CPU operator launched the kernel (no runtime call with its correlation, or none under an op).
        NoOperator,
        /// The operator has no `Input Dims` (the profile was taken without `record_shapes=True`).
        NoShapes,
        /// The model needs `Concrete Inputs` (a convolution's stride, attention's `is_causal`) and the
        /// trace does not have them (PyTorch before 2.3, or the arg is not a scalar).
        NoConcreteInputs,
        /// The shapes do not fit the operator (wrong rank, mismatched inner dimensions).
        ShapeMismatch,
        /// The operator (and every operator above it) is not in the FLOP/byte model.
        UnmodelledOp,
        /// A helper kernel of an operator whose figures went to its main (GEMM/conv/attention) kernel.
        HelperKernel,
        /// A copy or set without a `bytes` arg.
        NoBytes,
        /// A collective: the collectives analysis judges those.
        Collective,
    }
}

crate::stable_enum! {
    /// Where a device's roof comes from.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum RoofSource {
        /// The device name is in the table of vendor datasheet figures.
        Datasheet,
        /// The name is unknown: scaled from a datasheet device of the same architecture by SM (CU) count
        /// and clock. An estimate.
        SmCountEstimate,
        /// Neither the name nor the architecture is known: no roof.
        Unknown,
    }
}

crate::stable_enum! {
    /// The link between two GPUs of one node that collectives cross.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum PeerLinkKind {
        /// NVIDIA NVLink (through NVSwitch on HGX boards, a bridge on NVL pairs).
        Nvlink,
        /// AMD Infinity Fabric links between Instinct GPUs.
        InfinityFabric,
        /// No GPU-to-GPU link: peers talk over PCIe (through the switch or the host).
        Pcie,
    }
}

crate::stable_enum! {
    /// The link between host and device that host copies cross.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum LinkKind {
        Pcie,
        /// NVLink-C2C (Grace Hopper): the CPU and GPU share a coherent 900 GB/s link.
        NvlinkC2c,
    }
}
