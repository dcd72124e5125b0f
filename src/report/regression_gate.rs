//! The regression gate of `profile-model diff --fail-if`: conditions over a comparison's headline
//! figures (`step_time>+5%`, `gpu_busy<-3pp`, `data_loading>+2ms`), judged against a [`Comparison`].
//!
//! A condition is `METRIC OP LIMIT`: OP is `>`, `>=`, `<` or `<=`; LIMIT is a signed number, either
//! relative (`%`, of the baseline's figure) or absolute in the figure's own unit (the comparison's
//! basis for times: ms per step, or µs per ms of GPU window; percentage points `pp` for
//! `gpu_busy`). A condition that holds is a regression.

use serde::{Deserialize, Serialize};

use super::attribution::IdleCause;
use super::compare::{
    idle_part_name, Basis, Comparison, Delta, CATEGORY_KEYS, EXPOSED_COMMUNICATION,
};

crate::stable_enum! {
    /// A headline figure the gate can watch (idle causes are watched by their own names too).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum GateFigure {
        /// Mean step time (both runs need profiler steps).
        StepTime,
        /// The GPU's busy share of its window, percent.
        GpuBusy,
        /// Kernel time by type, in the comparison's basis.
        Computation,
        Communication,
        Memory,
        /// Communication not hidden behind computation.
        ExposedCommunication,
        /// Idle time of every cause together.
        Idle,
    }
}

/// What a condition watches: a headline figure or the idle time of one cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateMetric {
    Figure(GateFigure),
    IdleOf(IdleCause),
}

impl GateMetric {
    fn parse(text: &str) -> Option<Self> {
        GateFigure::parse(text)
            .map(GateMetric::Figure)
            .or_else(|| IdleCause::parse(text).map(GateMetric::IdleOf))
    }

    /// The stable name the user wrote.
    pub fn name(self) -> &'static str {
        match self {
            GateMetric::Figure(f) => f.as_str(),
            GateMetric::IdleOf(c) => c.as_str(),
        }
    }

    /// Every name a condition may use, for messages.
    pub fn known() -> Vec<&'static str> {
        let figures = GateFigure::ALL.iter().map(|f| f.as_str());
        figures
            .chain(IdleCause::ALL.iter().map(|c| c.as_str()))
            .collect()
    }
}

/// The comparison of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateOp {
    Above,
    AtLeast,
    Below,
    AtMost,
}

impl GateOp {
    fn text(self) -> &'static str {
        match self {
            GateOp::Above => ">",
            GateOp::AtLeast => ">=",
            GateOp::Below => "<",
            GateOp::AtMost => "<=",
        }
    }

    fn holds(self, change: f64, limit: f64) -> bool {
        match self {
            GateOp::Above => change > limit,
            GateOp::AtLeast => change >= limit,
            GateOp::Below => change < limit,
            GateOp::AtMost => change <= limit,
        }
    }
}

/// How the limit is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitKind {
    /// Percent of the baseline's figure.
    Relative,
    /// In the figure's own unit.
    Absolute,
}

/// One parsed condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateCondition {
    pub metric: GateMetric,
    pub op: GateOp,
    pub limit: f64,
    pub kind: LimitKind,
}

/// The verdict on one condition.
#[derive(Clone, Debug, PartialEq)]
pub struct GateVerdict {
    pub condition: GateCondition,
    /// The condition held: a regression.
    pub failed: bool,
    /// One line: the figure, its change and the limit.
    pub line: String,
}

/// Parses `--fail-if` text: one or more conditions separated by commas.
pub fn parse_conditions(text: &str) -> Result<Vec<GateCondition>, String> {
    let parts: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return Err("--fail-if takes a condition such as 'step_time>+5%', found nothing".into());
    }
    parts.into_iter().map(parse_condition).collect()
}

fn parse_condition(text: &str) -> Result<GateCondition, String> {
    let no_op = || {
        format!(
            "--fail-if: expected METRIC>LIMIT or METRIC<LIMIT (as 'step_time>+5%'), found {text:?}"
        )
    };
    let at = text.find(['>', '<']).ok_or_else(no_op)?;
    let name = text[..at].trim();
    let metric = GateMetric::parse(name).ok_or_else(|| {
        format!(
            "--fail-if: unknown figure {name:?} in {text:?}; known: {}",
            GateMetric::known().join(", ")
        )
    })?;
    let rest = &text[at..];
    let (op, rest) = split_op(rest).ok_or_else(no_op)?;
    let (limit, kind) = parse_limit(rest.trim(), metric).ok_or_else(|| {
        format!(
            "--fail-if: expected a limit such as +5% or +2ms after {:?} in {text:?}",
            op.text()
        )
    })?;
    Ok(GateCondition {
        metric,
        op,
        limit,
        kind,
    })
}

/// The comparison at the start of `text` and what follows it.
fn split_op(text: &str) -> Option<(GateOp, &str)> {
    [
        (">=", GateOp::AtLeast),
        ("<=", GateOp::AtMost),
        (">", GateOp::Above),
        ("<", GateOp::Below),
    ]
    .into_iter()
    .find_map(|(sign, op)| text.strip_prefix(sign).map(|rest| (op, rest)))
}

/// `+5%`, `-3pp`, `2ms`, `0.5`: the number and how it is measured. Units must fit the figure:
/// `pp` only for `gpu_busy`, `ms` only for times.
fn parse_limit(text: &str, metric: GateMetric) -> Option<(f64, LimitKind)> {
    let is_share = metric == GateMetric::Figure(GateFigure::GpuBusy);
    let (number, kind, unit_fits) = if let Some(n) = text.strip_suffix('%') {
        (n, LimitKind::Relative, true)
    } else if let Some(n) = text.strip_suffix("pp") {
        (n, LimitKind::Absolute, is_share)
    } else if let Some(n) = text.strip_suffix("ms") {
        (n, LimitKind::Absolute, !is_share)
    } else {
        (text, LimitKind::Absolute, true)
    };
    let value: f64 = number.trim().parse().ok()?;
    (unit_fits && value.is_finite()).then_some((value, kind))
}

/// The figure of `metric` in both runs, or why the comparison has none.
fn figure(c: &Comparison, metric: GateMetric) -> Result<Delta, String> {
    let category = |key: &str| {
        c.categories
            .iter()
            .find(|d| d.key == key)
            .cloned()
            .unwrap_or_else(|| Delta::new(key, 0.0, 0.0))
    };
    let part = |key: &str| {
        c.waterfall
            .iter()
            .find(|d| d.key == key)
            .cloned()
            .unwrap_or_else(|| Delta::new(key, 0.0, 0.0))
    };
    Ok(match metric {
        GateMetric::Figure(GateFigure::StepTime) => {
            if c.basis != Basis::PerStep {
                return Err(
                    "step_time needs profiler steps in both runs; watch gpu_busy or idle instead"
                        .into(),
                );
            }
            c.total.clone()
        }
        GateMetric::Figure(GateFigure::GpuBusy) => {
            Delta::new("gpu_busy", c.baseline.busy_pct, c.candidate.busy_pct)
        }
        GateMetric::Figure(GateFigure::Computation) => category(CATEGORY_KEYS[0]),
        GateMetric::Figure(GateFigure::Communication) => category(CATEGORY_KEYS[1]),
        GateMetric::Figure(GateFigure::Memory) => category(CATEGORY_KEYS[2]),
        GateMetric::Figure(GateFigure::ExposedCommunication) => part(EXPOSED_COMMUNICATION),
        GateMetric::Figure(GateFigure::Idle) => {
            let parts: Vec<Delta> = IdleCause::ALL
                .iter()
                .map(|&k| part(idle_part_name(k)))
                .collect();
            let sum = |f: fn(&Delta) -> f64| parts.iter().map(f).sum::<f64>();
            Delta::new("idle", sum(|d| d.baseline), sum(|d| d.candidate))
        }
        GateMetric::IdleOf(cause) => part(idle_part_name(cause)),
    })
}

/// The unit of `metric`'s absolute figures in this comparison.
fn unit(c: &Comparison, metric: GateMetric) -> &'static str {
    if metric == GateMetric::Figure(GateFigure::GpuBusy) {
        "% of the GPU window"
    } else {
        c.basis.unit()
    }
}

/// Judges every condition against `c`. An error names a condition the comparison cannot judge.
pub fn judge(c: &Comparison, conditions: &[GateCondition]) -> Result<Vec<GateVerdict>, String> {
    conditions.iter().map(|&cond| judge_one(c, cond)).collect()
}

fn judge_one(c: &Comparison, cond: GateCondition) -> Result<GateVerdict, String> {
    let d = figure(c, cond.metric)?;
    let change = match cond.kind {
        LimitKind::Absolute => d.change,
        LimitKind::Relative => relative_change(&d),
    };
    let failed = cond.op.holds(change, cond.limit);
    let limit = match cond.kind {
        LimitKind::Relative => format!("{:+}%", cond.limit),
        LimitKind::Absolute => format!("{:+}", cond.limit),
    };
    let change_text = match cond.kind {
        LimitKind::Relative if change.is_infinite() => "from nothing".to_string(),
        LimitKind::Relative => format!("{change:+.1}%"),
        LimitKind::Absolute => format!("{change:+.3}"),
    };
    let line = format!(
        "{} {} {} ({:.3} -> {:.3} {}), condition {}{}{}",
        if failed {
            "regression:"
        } else {
            "within limits:"
        },
        cond.metric.name(),
        change_text,
        d.baseline,
        d.candidate,
        unit(c, cond.metric),
        cond.metric.name(),
        cond.op.text(),
        limit
    );
    Ok(GateVerdict {
        condition: cond,
        failed,
        line,
    })
}

/// The change in percent of the baseline; from 0 to more is +∞, 0 to 0 is 0.
fn relative_change(d: &Delta) -> f64 {
    d.change_pct.unwrap_or(if d.change > 0.0 {
        f64::INFINITY
    } else if d.change < 0.0 {
        f64::NEG_INFINITY
    } else {
        0.0
    })
}
