//! GPU kernel breakdown: time by kernel type (unions, with exclusive overlap combinations) and
//! per-kernel statistics with a top-k view, per rank and across ranks.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::gpu::{hta_merge, sweep_masks, sweep_masks_in, us, KernelType, RankPrep};
use super::options::AnalysisOptions;
use crate::table::{TraceSet, TraceTable};

/// A set of kernel types (`COMPUTATION`, `COMMUNICATION`, `MEMORY`; never `OTHER`): the types active
/// together during some time. Written as HTA writes it, the members in that order joined by
/// ` overlapping ` (`COMPUTATION overlapping COMMUNICATION`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KernelTypeSet {
    /// [`KernelType::bit`]s of the members.
    mask: u8,
}

impl KernelTypeSet {
    /// The types a set can hold, in HTA's order.
    pub const MEMBERS: [KernelType; 3] = [
        KernelType::Computation,
        KernelType::Communication,
        KernelType::Memory,
    ];

    /// The set of one type (empty for `OTHER`).
    pub fn of(t: KernelType) -> KernelTypeSet {
        KernelTypeSet { mask: t.bit() }
    }

    /// The set of an overlap mask (bits as [`KernelType::bit`]; other bits ignored).
    pub fn from_mask(mask: usize) -> KernelTypeSet {
        let all = Self::MEMBERS.iter().fold(0, |m, t| m | t.bit());
        KernelTypeSet {
            mask: (mask as u8) & all,
        }
    }

    /// Whether `t` is a member.
    pub fn has(self, t: KernelType) -> bool {
        t.bit() != 0 && self.mask & t.bit() != 0
    }

    /// The members, in HTA's order.
    pub fn types(self) -> impl Iterator<Item = KernelType> {
        Self::MEMBERS.into_iter().filter(move |&t| self.has(t))
    }

    /// The one member of a single-type set (`None` when empty or several types overlap).
    pub fn single(self) -> Option<KernelType> {
        let mut types = self.types();
        match (types.next(), types.next()) {
            (Some(t), None) => Some(t),
            _ => None,
        }
    }

    /// Whether two or more types overlap.
    pub fn is_overlap(self) -> bool {
        self.types().count() > 1
    }

    /// The set of HTA's text (`COMPUTATION overlapping MEMORY`), if every part is a member type.
    pub fn parse(text: &str) -> Option<KernelTypeSet> {
        text.split(SEPARATOR)
            .try_fold(KernelTypeSet::default(), |set, part| {
                let t = KernelType::parse(part).filter(|t| t.bit() != 0)?;
                Some(KernelTypeSet {
                    mask: set.mask | t.bit(),
                })
            })
    }
}

/// What joins the members of a [`KernelTypeSet`] in its text.
const SEPARATOR: &str = " overlapping ";

impl std::fmt::Display for KernelTypeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.types().map(KernelType::as_str).collect();
        f.pad(&names.join(SEPARATOR))
    }
}

impl Serialize for KernelTypeSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for KernelTypeSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        KernelTypeSet::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "expected kernel types joined by {SEPARATOR:?}, found {text:?}"
            ))
        })
    }
}

/// Time of one exclusive combination of kernel types (`COMPUTATION`, `COMPUTATION overlapping
/// COMMUNICATION`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeTime {
    pub kernel_type: KernelTypeSet,
    /// Wall-clock time with exactly this combination active, µs.
    pub time_us: f64,
    /// Share of all kernel wall-clock time, percent (1 decimal in HTA-compat mode).
    pub pct: f64,
}

/// Statistics of one kernel name (per invocation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    pub name: String,
    pub kernel_type: KernelType,
    pub count: u64,
    pub sum_us: f64,
    pub mean_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// Sample standard deviation (0 for a single call).
    pub std_us: f64,
    pub median_us: f64,
    /// Share of the total time of its kernel type, percent.
    pub pct_of_type: f64,
}

/// Kernel breakdown of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankKernelBreakdown {
    pub rank: i64,
    /// Exclusive combinations, largest first.
    pub by_type: Vec<TypeTime>,
    /// Every kernel name, by type then largest total first.
    pub kernels: Vec<KernelStats>,
    /// The `top_k` largest names of each type, the rest gathered as `others` (true per-call stats).
    pub top: Vec<KernelStats>,
}

/// Kernel breakdown of every rank and the type table summed over ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelBreakdown {
    pub ranks: Vec<RankKernelBreakdown>,
    /// By-type times summed over ranks (HTA's `kernel_type_breakdown`).
    pub by_type_all_ranks: Vec<TypeTime>,
    /// Per-kernel statistics over the calls of every rank (kernels matched by name).
    pub kernels_all_ranks: Vec<KernelStats>,
    /// Top `TOP_K` names per type over every rank, the rest as `others`.
    pub top_all_ranks: Vec<KernelStats>,
    pub notes: Vec<String>,
}

/// How many kernel names per type the top view keeps.
pub const TOP_K: usize = 10;

/// The by-type table summed over ranks (`by_type_all_ranks`) from each rank's table: the times of
/// each combination added in whole ns. `analyze` and the merge of shards both call it.
pub fn by_type_all_ranks(ranks: &[RankKernelBreakdown], compat: bool) -> Vec<TypeTime> {
    let mut all = [0i64; 8];
    for r in ranks {
        for t in &r.by_type {
            all[t.kernel_type.mask as usize] += ns_of(t.time_us);
        }
    }
    type_table(&all, compat)
}

fn type_table(masks: &[i64; 8], compat: bool) -> Vec<TypeTime> {
    let total: i64 = masks.iter().sum();
    let mut out: Vec<TypeTime> = (1..8)
        .filter(|&m| masks[m] > 0)
        .map(|m| {
            let pct = if total > 0 {
                100.0 * masks[m] as f64 / total as f64
            } else {
                0.0
            };
            TypeTime {
                kernel_type: KernelTypeSet::from_mask(m),
                time_us: us(masks[m]),
                pct: if compat {
                    super::gpu::round_to(pct, 1)
                } else {
                    pct
                },
            }
        })
        .collect();
    crate::sort::sort_by(&mut out, |a, b| {
        b.time_us
            .total_cmp(&a.time_us)
            // Ties in the order of HTA's text.
            .then_with(|| a.kernel_type.to_string().cmp(&b.kernel_type.to_string()))
    });
    out
}

/// Statistics of one name's durations (µs, each a whole number of ns). The sum is taken in whole ns
/// (exact, whatever the order), so sums, means and the order of a list are the same whether the
/// calls are summed at once or rank by rank ([`super::kernel_merge`]).
fn stats_of(name: String, kernel_type: KernelType, mut d: Vec<f64>) -> KernelStats {
    d.sort_unstable_by(|a, b| a.total_cmp(b));
    let sum_ns: i64 = d.iter().map(|&x| ns_of(x)).sum();
    let n = d.len();
    let sum_us = us(sum_ns);
    let mean = if n > 0 { sum_us / n as f64 } else { f64::NAN };
    let std = if n > 1 {
        (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    KernelStats {
        name,
        kernel_type,
        count: n as u64,
        sum_us,
        mean_us: mean,
        min_us: d.first().copied().unwrap_or(0.0),
        max_us: d.last().copied().unwrap_or(0.0),
        std_us: std,
        median_us: super::gpu::percentile_sorted(&d, 0.5),
        pct_of_type: 0.0,
    }
}

/// The whole ns of a time in µs made by [`us`] (exact below 2^52 ns, about 52 days).
pub fn ns_of(t_us: f64) -> i64 {
    (t_us * 1000.0).round() as i64
}

/// Per-kernel statistics and the top view from durations (µs) per (type, name). Both are sorted by
/// type, then sum (largest first), then name; the top view keeps [`TOP_K`] names per type and the
/// full list [`MAX_NAMES_PER_TYPE`], each with one `others` row for the rest.
fn stats_and_top(
    per: BTreeMap<(KernelType, String), Vec<f64>>,
) -> (Vec<KernelStats>, Vec<KernelStats>) {
    let per = crate::sort::map_of(
        per.into_iter()
            .map(|((t, name), v)| ((t, name.clone()), (stats_of(name, t, v.clone()), v))),
    );
    rank_and_cut(per, |t, rest: &[&Vec<f64>]| {
        let calls = rest.iter().flat_map(|v| v.iter().copied()).collect();
        stats_of("others".into(), t, calls)
    })
}

/// The lists of [`stats_and_top`] from each name's statistics and what makes an `others` row of
/// several names (`others(type, the names' data)`): one definition of the order, the shares and the
/// cut, for the calls of a set and for statistics combined over shards of it.
pub(crate) fn rank_and_cut<E>(
    per: BTreeMap<(KernelType, String), (KernelStats, E)>,
    others: impl Fn(KernelType, &[&E]) -> KernelStats,
) -> (Vec<KernelStats>, Vec<KernelStats>) {
    let mut by_type: BTreeMap<KernelType, Vec<(KernelStats, E)>> = BTreeMap::new();
    for ((t, _), entry) in per {
        by_type.entry(t).or_default().push(entry);
    }
    let mut kernels = Vec::new();
    let mut top = Vec::new();
    for (t, mut list) in by_type {
        let type_sum: f64 = list.iter().map(|(k, _)| k.sum_us).sum();
        for (k, _) in list.iter_mut() {
            k.pct_of_type = share(k.sum_us, type_sum);
        }
        crate::sort::sort_by(&mut list, |a, b| {
            b.0.sum_us
                .total_cmp(&a.0.sum_us)
                .then_with(|| a.0.name.cmp(&b.0.name))
        });
        for (k, out) in [(TOP_K, &mut top), (MAX_NAMES_PER_TYPE, &mut kernels)] {
            out.extend(list.iter().take(k).map(|(s, _)| s.clone()));
            if list.len() > k {
                let rest: Vec<&E> = list[k..].iter().map(|(_, e)| e).collect();
                let mut s = others(t, &rest);
                s.pct_of_type = share(s.sum_us, type_sum);
                out.push(s);
            }
        }
    }
    (kernels, top)
}

/// Kernel names listed per type in the full list (bounded output); the rest make one `others` row.
pub const MAX_NAMES_PER_TYPE: usize = 500;

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// Durations (µs) per (type, name id) of one rank.
fn durations_by_name(prep: &RankPrep) -> BTreeMap<(KernelType, u32), Vec<f64>> {
    let mut per: BTreeMap<(KernelType, u32), Vec<f64>> = BTreeMap::new();
    for d in prep.dev.iter().filter(|d| d.ktype != KernelType::Other) {
        per.entry((d.ktype, d.name))
            .or_default()
            .push(us(d.end - d.ts));
    }
    per
}

/// Breakdown of one rank from its prepared rows.
pub fn rank_breakdown(rank: i64, prep: &RankPrep) -> (RankKernelBreakdown, [i64; 8]) {
    let compat = prep.mode == super::options::Mode::HtaCompat;
    let tagged: Vec<(i64, i64, u8)> = prep
        .dev
        .iter()
        .filter(|d| d.ktype != KernelType::Other)
        .map(|d| (d.ts, d.end, d.ktype.bit()))
        .collect();
    let masks = if compat {
        // HTA merges each type's intervals, sweeps the merged ones and casts each piece's length
        // to whole µs (which only cuts anything when its times are not whole µs).
        let mut merged: Vec<(i64, i64, u8)> = Vec::new();
        for t in KernelTypeSet::MEMBERS {
            let iv = tagged
                .iter()
                .filter(|x| x.2 == t.bit())
                .map(|x| (x.0, x.1))
                .collect();
            merged.extend(hta_merge(iv).into_iter().map(|(s, e)| (s, e, t.bit())));
        }
        sweep_masks_in(&merged, 1000)
    } else {
        sweep_masks(&tagged)
    };
    let per = crate::sort::map_of(
        durations_by_name(prep)
            .into_iter()
            .map(|((t, id), v)| ((t, prep.table.name_of_id(id).to_string()), v)),
    );
    let (kernels, top) = stats_and_top(per);
    (
        RankKernelBreakdown {
            rank,
            by_type: type_table(&masks, compat),
            kernels,
            top,
        },
        masks,
    )
}

/// Kernel breakdown of every rank of a set.
pub fn kernel_breakdown(set: &TraceSet, opts: &AnalysisOptions) -> KernelBreakdown {
    let preps: Vec<(i64, RankPrep)> = set
        .ranks
        .iter()
        .map(|r| (r.rank, RankPrep::new(&r.table, opts)))
        .collect();
    kernel_breakdown_prepared(&preps, opts)
}

/// Kernel breakdown of one table (rank from its metadata, else 0).
pub fn kernel_breakdown_table(table: &TraceTable, opts: &AnalysisOptions) -> RankKernelBreakdown {
    let prep = RankPrep::new(table, opts);
    rank_breakdown(table.metadata.rank.unwrap_or(0), &prep).0
}

pub(crate) fn kernel_breakdown_prepared(
    preps: &[(i64, RankPrep)],
    opts: &AnalysisOptions,
) -> KernelBreakdown {
    let compat = opts.mode == super::options::Mode::HtaCompat;
    let mut ranks = Vec::new();
    let mut notes = Vec::new();
    let mut across: BTreeMap<(KernelType, String), Vec<f64>> = BTreeMap::new();
    for (rank, prep) in preps {
        ranks.push(rank_breakdown(*rank, prep).0);
        if preps.len() > 1 {
            for ((t, id), v) in durations_by_name(prep) {
                across
                    .entry((t, prep.table.name_of_id(id).to_string()))
                    .or_default()
                    .extend(v);
            }
        }
    }
    let (kernels_all_ranks, top_all_ranks) = if preps.len() > 1 {
        stats_and_top(across)
    } else {
        ranks
            .first()
            .map(|r| (r.kernels.clone(), r.top.clone()))
            .unwrap_or_default()
    };
    if !compat {
        notes.push("kernel types come from the event kind (copies and sets are MEMORY) and current collective names (ncclDevKernel_*, RCCL, HCCL are COMMUNICATION); HTA 0.5.0 uses name patterns and rows with a stream".into());
    }
    if preps.iter().all(|(_, p)| p.dev.is_empty()) {
        notes.push("no GPU kernels, copies or sets in the trace".into());
    }
    KernelBreakdown {
        by_type_all_ranks: by_type_all_ranks(&ranks, compat),
        ranks,
        kernels_all_ranks,
        top_all_ranks,
        notes,
    }
}
