//! The datasheet table of device peaks (per dtype, memory bandwidth, host link) and the constructors its rows
//! are written with.

use super::*;

const fn p(fp64: f64, fp32: f64, tf32: f64, fp16: f64, bf16: f64, fp8: f64) -> Peaks {
    // 0 means the device has no such unit.
    Peaks {
        fp64,
        fp32,
        tf32: if tf32 > 0.0 { Some(tf32) } else { None },
        fp16,
        bf16: if bf16 > 0.0 { Some(bf16) } else { None },
        fp8: if fp8 > 0.0 { Some(fp8) } else { None },
    }
}

#[allow(clippy::too_many_arguments)]
const fn spec(
    name: &'static str,
    tokens: &'static [&'static str],
    sms: u32,
    arch: (u8, u8),
    boost_mhz: f64,
    peaks: Peaks,
    memory_gbps: f64,
    pcie: u8,
) -> Spec {
    Spec {
        name,
        tokens,
        sms,
        exact_sms: false,
        arch,
        amd: false,
        boost_mhz,
        peaks,
        memory_gbps,
        pcie,
        accepts: &[],
    }
}

/// A row that also accepts these variant words in a name ([`Spec::accepts`]).
const fn accepting(mut s: Spec, accepts: &'static [&'static str]) -> Spec {
    s.accepts = accepts;
    s
}

/// A laptop part's row: it accepts `Mobile` and `Max-Q` (the same chip at a lower power limit).
/// NVIDIA gives laptop parts no TFLOP/s: the peaks are the per-SM rates of the architecture
/// (Ampere GA10x and Ada GeForce: 256 fp32 and TF32, 512 fp16/bf16 tensor with fp32 accumulate,
/// 1,024 fp8 (Ada), 4 fp64 FLOP per clock per SM) × the SM count × the highest boost clock of
/// NVIDIA's specifications (a laptop's power limit may hold it lower); memory bandwidth from the
/// memory's bus width and data rate.
const fn laptop(s: Spec) -> Spec {
    accepting(s, &["mobile", "maxq"])
}

const fn amd(mut s: Spec, exact_sms: bool) -> Spec {
    s.amd = true;
    s.exact_sms = exact_sms;
    s
}

/// The datasheet table, most specific names first (the first row whose tokens all match wins).
pub(super) const SPECS: &[Spec] = &[
    // NVIDIA Tesla V100 datasheet (SXM2): 7.8 fp64, 15.7 fp32, 125 tensor (fp16), HBM2 900 GB/s.
    accepting(
        spec(
            "V100 SXM2",
            &["v100", "sxm2"],
            80,
            (7, 0),
            1530.0,
            p(7.8, 15.7, 0.0, 125.0, 0.0, 0.0),
            900.0,
            3,
        ),
        &["16gb", "32gb"],
    ),
    // NVIDIA Tesla V100 datasheet (PCIe): 7 fp64, 14 fp32, 112 tensor, 900 GB/s.
    accepting(
        spec(
            "V100 PCIe",
            &["v100"],
            80,
            (7, 0),
            1380.0,
            p(7.0, 14.0, 0.0, 112.0, 0.0, 0.0),
            900.0,
            3,
        ),
        &["pcie", "16gb", "32gb"],
    ),
    // NVIDIA T4 datasheet: 8.1 fp32, 65 fp16 mixed precision, 320 GB/s; fp64 1/32 of fp32.
    accepting(
        spec(
            "T4",
            &["t4"],
            40,
            (7, 5),
            1590.0,
            p(0.25, 8.1, 0.0, 65.0, 0.0, 0.0),
            320.0,
            3,
        ),
        &["16gb"],
    ),
    // NVIDIA Turing GPU architecture whitepaper (RTX 2080 Ti FE): 13.4 fp32, 53.8 fp16 tensor with fp32
    // accumulate, GDDR6 616 GB/s; fp64 1/32.
    spec(
        "RTX 2080 Ti",
        &["2080", "ti"],
        68,
        (7, 5),
        1545.0,
        p(0.42, 13.4, 0.0, 53.8, 0.0, 0.0),
        616.0,
        3,
    ),
    // NVIDIA A100 Tensor Core GPU datasheet: 19.5 fp64 tensor, 19.5 fp32, 156 tf32, 312 bf16/fp16;
    // 80GB PCIe: HBM2e 1,935 GB/s.
    spec(
        "A100 PCIe 80GB",
        &["a100", "pcie", "80gb"],
        108,
        (8, 0),
        1410.0,
        p(19.5, 19.5, 156.0, 312.0, 312.0, 0.0),
        1935.0,
        4,
    ),
    // A100 datasheet, 40GB PCIe: HBM2 1,555 GB/s.
    accepting(
        spec(
            "A100 PCIe 40GB",
            &["a100", "pcie"],
            108,
            (8, 0),
            1410.0,
            p(19.5, 19.5, 156.0, 312.0, 312.0, 0.0),
            1555.0,
            4,
        ),
        &["40gb"],
    ),
    // A100 datasheet, 80GB SXM: HBM2e 2,039 GB/s.
    accepting(
        spec(
            "A100 SXM4 80GB",
            &["a100", "80gb"],
            108,
            (8, 0),
            1410.0,
            p(19.5, 19.5, 156.0, 312.0, 312.0, 0.0),
            2039.0,
            4,
        ),
        &["sxm4", "sxm"],
    ),
    // A100 datasheet, 40GB SXM: HBM2 1,555 GB/s (also internal variants such as PG509-200).
    accepting(
        spec(
            "A100 SXM4 40GB",
            &["a100"],
            108,
            (8, 0),
            1410.0,
            p(19.5, 19.5, 156.0, 312.0, 312.0, 0.0),
            1555.0,
            4,
        ),
        &["sxm4", "sxm", "40gb"],
    ),
    // NVIDIA A10G (AWS EC2 G5; no NVIDIA datasheet): 31.2 fp32, 70 bf16/fp16 tensor dense, 35 tf32,
    // GDDR6 600 GB/s (AWS G5 instance documentation).
    accepting(
        spec(
            "A10G",
            &["a10g"],
            80,
            (8, 6),
            1710.0,
            p(0.49, 31.2, 35.0, 70.0, 70.0, 0.0),
            600.0,
            4,
        ),
        &["24gb"],
    ),
    // NVIDIA A10 Tensor Core GPU datasheet: 31.2 fp32, 62.5 tf32, 125 bf16/fp16, 600 GB/s; fp64 1/64.
    accepting(
        spec(
            "A10",
            &["a10"],
            72,
            (8, 6),
            1695.0,
            p(0.49, 31.2, 62.5, 125.0, 125.0, 0.0),
            600.0,
            4,
        ),
        &["24gb"],
    ),
    // NVIDIA Ampere GA102 GPU architecture whitepaper (RTX 3090): 35.6 fp32, 35.6 tf32, 71 fp16/bf16
    // tensor with fp32 accumulate, GDDR6X 936 GB/s; fp64 1/64.
    spec(
        "RTX 3090",
        &["3090"],
        82,
        (8, 6),
        1695.0,
        p(0.56, 35.6, 35.6, 71.0, 71.0, 0.0),
        936.0,
        4,
    ),
    // NVIDIA L40S datasheet: 91.6 fp32, 183 tf32, 362.05 bf16/fp16, 733 fp8, GDDR6 864 GB/s; fp64 1/64.
    accepting(
        spec(
            "L40S",
            &["l40s"],
            142,
            (8, 9),
            2520.0,
            p(1.43, 91.6, 183.0, 362.05, 362.05, 733.0),
            864.0,
            4,
        ),
        &["48gb"],
    ),
    // NVIDIA L40 datasheet: 90.5 fp32, 90.5 tf32, 181.05 bf16/fp16, 362 fp8, 864 GB/s; fp64 1/64.
    accepting(
        spec(
            "L40",
            &["l40"],
            142,
            (8, 9),
            2490.0,
            p(1.41, 90.5, 90.5, 181.05, 181.05, 362.0),
            864.0,
            4,
        ),
        &["48gb"],
    ),
    // NVIDIA L4 datasheet: 30.3 fp32, 60 tf32, 121 bf16/fp16, 242.5 fp8, 300 GB/s; fp64 1/64.
    accepting(
        spec(
            "L4",
            &["l4"],
            58,
            (8, 9),
            2040.0,
            p(0.47, 30.3, 60.0, 121.0, 121.0, 242.5),
            300.0,
            4,
        ),
        &["24gb"],
    ),
    // NVIDIA GeForce RTX 30 and 40 series laptop GPUs: see [`laptop`].
    laptop(spec(
        "RTX 3050 Laptop",
        &["3050", "laptop"],
        16,
        (8, 6),
        1740.0,
        p(0.11, 7.13, 7.13, 14.25, 14.25, 0.0),
        192.0,
        4,
    )),
    laptop(spec(
        "RTX 3050 Ti Laptop",
        &["3050", "ti", "laptop"],
        20,
        (8, 6),
        1695.0,
        p(0.14, 8.68, 8.68, 17.36, 17.36, 0.0),
        192.0,
        4,
    )),
    laptop(spec(
        "RTX 3060 Laptop",
        &["3060", "laptop"],
        30,
        (8, 6),
        1703.0,
        p(0.2, 13.08, 13.08, 26.16, 26.16, 0.0),
        336.0,
        4,
    )),
    laptop(spec(
        "RTX 3070 Laptop",
        &["3070", "laptop"],
        40,
        (8, 6),
        1620.0,
        p(0.26, 16.59, 16.59, 33.18, 33.18, 0.0),
        448.0,
        4,
    )),
    laptop(spec(
        "RTX 3070 Ti Laptop",
        &["3070", "ti", "laptop"],
        46,
        (8, 6),
        1485.0,
        p(0.27, 17.49, 17.49, 34.97, 34.97, 0.0),
        448.0,
        4,
    )),
    laptop(spec(
        "RTX 3080 Laptop",
        &["3080", "laptop"],
        48,
        (8, 6),
        1710.0,
        p(0.33, 21.01, 21.01, 42.02, 42.02, 0.0),
        448.0,
        4,
    )),
    laptop(spec(
        "RTX 3080 Ti Laptop",
        &["3080", "ti", "laptop"],
        58,
        (8, 6),
        1590.0,
        p(0.37, 23.61, 23.61, 47.22, 47.22, 0.0),
        512.0,
        4,
    )),
    laptop(spec(
        "RTX 4050 Laptop",
        &["4050", "laptop"],
        20,
        (8, 9),
        2370.0,
        p(0.19, 12.13, 12.13, 24.27, 24.27, 48.54),
        192.0,
        4,
    )),
    laptop(spec(
        "RTX 4060 Laptop",
        &["4060", "laptop"],
        24,
        (8, 9),
        2370.0,
        p(0.23, 14.56, 14.56, 29.12, 29.12, 58.25),
        256.0,
        4,
    )),
    laptop(spec(
        "RTX 4070 Laptop",
        &["4070", "laptop"],
        36,
        (8, 9),
        2175.0,
        p(0.31, 20.04, 20.04, 40.09, 40.09, 80.18),
        256.0,
        4,
    )),
    laptop(spec(
        "RTX 4080 Laptop",
        &["4080", "laptop"],
        58,
        (8, 9),
        2280.0,
        p(0.53, 33.85, 33.85, 67.71, 67.71, 135.41),
        432.0,
        4,
    )),
    laptop(spec(
        "RTX 4090 Laptop",
        &["4090", "laptop"],
        76,
        (8, 9),
        2040.0,
        p(0.62, 39.69, 39.69, 79.38, 79.38, 158.76),
        576.0,
        4,
    )),
    // NVIDIA Ada GPU architecture whitepaper (RTX 4090): 82.6 fp32, 82.6 tf32, 165.2 fp16/bf16 and
    // 330.3 fp8 tensor with fp32 accumulate, GDDR6X 1,008 GB/s; fp64 1/64.
    spec(
        "RTX 4090",
        &["4090"],
        128,
        (8, 9),
        2520.0,
        p(1.29, 82.6, 82.6, 165.2, 165.2, 330.3),
        1008.0,
        4,
    ),
    // NVIDIA GH200 Grace Hopper Superchip datasheet: H100 compute (67 fp64 tensor, 67 fp32, 494 tf32,
    // 990 bf16/fp16, 1,979 fp8), HBM3 4 TB/s (96 GB; HBM3e 144 GB: 4.9 TB/s), NVLink-C2C to the CPU.
    accepting(
        spec(
            "GH200",
            &["gh200"],
            132,
            (9, 0),
            1980.0,
            p(67.0, 67.0, 494.0, 990.0, 990.0, 1979.0),
            4000.0,
            0,
        ),
        &["480gb", "96gb"],
    ),
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): 67 fp64 tensor, 67 fp32, 494.5 tf32, 989.5 bf16/fp16,
    // 1,979 fp8, HBM3e 4.8 TB/s.
    accepting(
        spec(
            "H200",
            &["h200"],
            132,
            (9, 0),
            1980.0,
            p(67.0, 67.0, 494.5, 989.5, 989.5, 1979.0),
            4800.0,
            5,
        ),
        &["sxm", "141gb"],
    ),
    // NVIDIA H100 Tensor Core GPU datasheet (NVL): 60 fp64 tensor, 60 fp32, 417.5 tf32, 835.5 bf16/fp16,
    // 1,670.5 fp8 (half the sparse figures), HBM3 3.9 TB/s.
    accepting(
        spec(
            "H100 NVL",
            &["h100", "nvl"],
            132,
            (9, 0),
            1785.0,
            p(60.0, 60.0, 417.5, 835.5, 835.5, 1670.5),
            3900.0,
            5,
        ),
        &["94gb"],
    ),
    // H100 datasheet (PCIe): 51 fp64 tensor, 51 fp32, 378 tf32, 756 bf16/fp16, 1,513 fp8, HBM2e 2 TB/s.
    accepting(
        spec(
            "H100 PCIe",
            &["h100", "pcie"],
            114,
            (9, 0),
            1755.0,
            p(51.0, 51.0, 378.0, 756.0, 756.0, 1513.0),
            2000.0,
            5,
        ),
        &["80gb"],
    ),
    // H100 datasheet (SXM): 67 fp64 tensor, 67 fp32, 494.5 tf32, 989.5 bf16/fp16, 1,979 fp8, HBM3 3.35 TB/s.
    accepting(
        spec(
            "H100 SXM",
            &["h100"],
            132,
            (9, 0),
            1980.0,
            p(67.0, 67.0, 494.5, 989.5, 989.5, 1979.0),
            3350.0,
            5,
        ),
        &["sxm", "sxm5", "80gb"],
    ),
    // NVIDIA HGX B200 datasheet, per GPU (8 GPUs): 37 fp64, 75 fp32, 1,100 tf32, 2,250 bf16/fp16,
    // 4,500 fp8 dense, HBM3e 8 TB/s.
    accepting(
        spec(
            "B200",
            &["b200"],
            148,
            (10, 0),
            1965.0,
            p(37.0, 75.0, 1100.0, 2250.0, 2250.0, 4500.0),
            8000.0,
            5,
        ),
        &["sxm", "180gb", "192gb"],
    ),
    // NVIDIA RTX Blackwell GPU architecture whitepaper (RTX 5090): 104.8 fp32, 104.8 tf32, 209.5
    // fp16/bf16 and 419 fp8 tensor with fp32 accumulate, GDDR7 1,792 GB/s; fp64 1/64.
    spec(
        "RTX 5090",
        &["5090"],
        170,
        (12, 0),
        2407.0,
        p(1.64, 104.8, 104.8, 209.5, 209.5, 419.0),
        1792.0,
        5,
    ),
    // AMD Instinct MI325X datasheet: 163.4 fp64 matrix, 163.4 fp32, 653.7 tf32, 1,307.4 bf16/fp16,
    // 2,614.9 fp8, HBM3E 6 TB/s.
    amd(
        spec(
            "MI325X",
            &["mi325x"],
            304,
            (9, 4),
            2100.0,
            p(163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9),
            6000.0,
            5,
        ),
        false,
    ),
    // AMD Instinct MI300X datasheet: 163.4 fp64 matrix, 163.4 fp32, 653.7 tf32, 1,307.4 bf16/fp16,
    // 2,614.9 fp8, HBM3 5.3 TB/s.
    amd(
        spec(
            "MI300X",
            &["mi300x"],
            304,
            (9, 4),
            2100.0,
            p(163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9),
            5300.0,
            5,
        ),
        false,
    ),
    // AMD Instinct MI250X datasheet, one of two GCDs: 47.85 fp64 matrix, 47.85 fp32 matrix, 191.5
    // bf16/fp16, HBM2e 1.6 TB/s (package: 95.7, 95.7, 383, 3.2 TB/s).
    amd(
        spec(
            "MI250X (one GCD)",
            &["mi250x"],
            110,
            (9, 0),
            1700.0,
            p(47.85, 47.85, 0.0, 191.5, 191.5, 0.0),
            1600.0,
            4,
        ),
        true,
    ),
    // AMD Instinct MI250 datasheet, one of two GCDs: 45.25 fp64 matrix, 45.25 fp32 matrix, 181
    // bf16/fp16, HBM2e 1.6 TB/s (package: 90.5, 90.5, 362.1, 3.2 TB/s).
    amd(
        spec(
            "MI250 (one GCD)",
            &["mi250"],
            104,
            (9, 0),
            1700.0,
            p(45.25, 45.25, 0.0, 181.0, 181.0, 0.0),
            1600.0,
            4,
        ),
        false,
    ),
    // AMD Instinct MI210 datasheet: 45.3 fp64 matrix, 45.3 fp32 matrix, 181 bf16/fp16, HBM2e 1.6 TB/s.
    amd(
        spec(
            "MI210",
            &["mi210"],
            104,
            (9, 0),
            1700.0,
            p(45.3, 45.3, 0.0, 181.0, 181.0, 0.0),
            1638.4,
            4,
        ),
        false,
    ),
];
