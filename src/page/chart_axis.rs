//! A linear chart axis: its title (with the unit) and round ticks from 0 to a round top (steps of
//! 1, 2 or 5 × 10ⁿ), each tick's place as a fraction of the axis and its label in the page's units.

use super::analyses_view::Unit;

/// One tick: where it is (0 = the axis's start, 1 = its end) and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub frac: f64,
    pub label: String,
}

/// An axis from 0 to `top`.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// What the axis measures, with its unit ("Allocated memory (bytes)").
    pub title: String,
    /// The axis's end (a round number at or above the largest value).
    pub top: f64,
    pub ticks: Vec<Tick>,
}

/// The round step (1, 2 or 5 × 10ⁿ) that cuts `0..max` into at most `most` parts.
fn round_step(max: f64, most: usize) -> f64 {
    let raw = max / most.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw * (1.0 - 1e-12))
        .unwrap_or(10.0 * power)
}

impl Axis {
    /// An axis from 0 over values up to `max` (in `unit`), about four ticks.
    pub fn linear(title: impl Into<String>, max: f64, unit: Unit) -> Axis {
        let max = if max.is_finite() && max > 0.0 {
            max
        } else {
            1.0
        };
        let step = round_step(max, 4);
        let parts = (max / step - 1e-9).ceil().max(1.0) as usize;
        let top = step * parts as f64;
        Axis {
            title: title.into(),
            top,
            ticks: (0..=parts)
                .map(|i| Tick {
                    frac: i as f64 / parts as f64,
                    label: unit.show(step * i as f64),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_reach_past_the_largest_value() {
        let a = Axis::linear("Allocated memory (bytes)", 23.4e9, Unit::Bytes);
        // 23.4e9 / 4 = 5.85e9 → a step of 1e10 would be 3 parts; 5e9 is under 5.85e9, so 1e10.
        assert_eq!(a.top, 30e9);
        assert_eq!(
            a.ticks.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(),
            ["0 B", "10.00 GB", "20.00 GB", "30.00 GB"]
        );
        assert_eq!(a.ticks[1].frac, 1.0 / 3.0);
        let t = Axis::linear("Time (µs)", 1800.0, Unit::Micros);
        assert_eq!(t.top, 2000.0);
        assert_eq!(t.ticks.len(), 5, "0, 500, 1000, 1500, 2000");
        assert_eq!(t.ticks[4].label, "2.00 ms");
        assert_eq!(t.ticks[4].frac, 1.0);
        let exact = Axis::linear("x", 400.0, Unit::Count);
        assert_eq!(exact.top, 400.0, "a round maximum is its own top");
        assert_eq!(Axis::linear("x", 0.0, Unit::Count).top, 1.0);
    }
}
