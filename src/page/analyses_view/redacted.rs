//! The deeper analyses with names hashed (the page's redact switch), by the one definition in
//! [`crate::report::redact`]: each name cell by the kind it carries, sequences' operators as ops and kernels as kernels.

use super::{AnalysesModel, Cell, Figure, Part, Table};
use crate::report::redact::{redact_name, NameKind};

/// Context attributes that hold a name (`data-kernel`, `data-event`, `data-pattern`).
fn redact_figure(mut f: Figure) -> Figure {
    for (key, value) in &mut f.context {
        match *key {
            "kernel" => *value = redact_name(NameKind::Kernel, value),
            "event" => *value = redact_name(NameKind::Op, value),
            "pattern" => *value = redact_pattern(value, '|'),
            _ => {}
        }
    }
    f
}

/// A kernel sequence `op|kernel|kernel…`: the operator hashed as an op, the kernels as kernels.
fn redact_pattern(pattern: &str, sep: char) -> String {
    pattern
        .split(sep)
        .enumerate()
        .map(|(i, p)| {
            redact_name(
                if i == 0 {
                    NameKind::Op
                } else {
                    NameKind::Kernel
                },
                p,
            )
        })
        .collect::<Vec<_>>()
        .join(&sep.to_string())
}

fn redact_cell(cell: Cell) -> Cell {
    match cell {
        Cell::Name(kind, n) => {
            let hashed = redact_name(kind, &n);
            Cell::Name(kind, hashed)
        }
        Cell::Figure(f) => Cell::Figure(redact_figure(f)),
        Cell::Steps { shown, more } => Cell::Steps {
            shown: shown
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    redact_name(
                        if i == 0 {
                            NameKind::Op
                        } else {
                            NameKind::Kernel
                        },
                        s,
                    )
                })
                .collect(),
            more,
        },
        other => other,
    }
}

fn redact_table(t: Table) -> Table {
    Table {
        rows: t
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(redact_cell).collect())
            .collect(),
        locate: None,
        ..t
    }
}

fn redact_part(part: Part) -> Part {
    match part {
        Part::Table(t) => Part::Table(redact_table(t)),
        Part::Folded { summary, table } => Part::Folded {
            summary,
            table: redact_table(table),
        },
        Part::Facts(facts) => Part::Facts(
            facts
                .into_iter()
                .map(|mut f| {
                    f.figure = redact_figure(f.figure);
                    f
                })
                .collect(),
        ),
        Part::Collective {
            kernel,
            stream,
            steps,
        } => Part::Collective {
            kernel: redact_name(NameKind::Kernel, &kernel),
            stream,
            steps,
        },
        Part::Roofline(mut chart) => {
            for p in &mut chart.points {
                p.kernel = redact_name(NameKind::Kernel, &p.kernel);
            }
            Part::Roofline(chart)
        }
        other => other,
    }
}

impl AnalysesModel {
    /// The same analyses with every kernel, op and event name hashed.
    pub fn redacted(mut self) -> AnalysesModel {
        for block in &mut self.blocks {
            block.parts = std::mem::take(&mut block.parts)
                .into_iter()
                .map(redact_part)
                .collect();
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::Unit;
    use super::*;
    use crate::report::redact::redacted_name;

    #[test]
    fn names_in_tables_figures_and_sequences_are_hashed() {
        let fig = Figure {
            metric: "breakdown-kernel-count",
            value: 3.0,
            unit: Unit::Count,
            context: vec![("rank", "0".into()), ("kernel", "gemm".into())],
        };
        let t = Table::new(
            &["Kernel", "Type"],
            &["Count"],
            vec![vec![
                Cell::Name(NameKind::Kernel, "gemm".into()),
                Cell::Text("compute".into()),
                Cell::Figure(fig),
            ]],
        );
        let Part::Table(t) = redact_part(Part::Table(t)) else {
            unreachable!()
        };
        assert_eq!(
            t.rows[0][0],
            Cell::Name(NameKind::Kernel, redacted_name("kernel", "gemm"))
        );
        assert_eq!(
            t.rows[0][1],
            Cell::Text("compute".into()),
            "other text stays"
        );
        let Cell::Figure(f) = &t.rows[0][2] else {
            unreachable!()
        };
        assert_eq!(f.context[0].1, "0");
        assert_eq!(f.context[1].1, redacted_name("kernel", "gemm"));
        let rows = vec![vec![
            Cell::Name(NameKind::Op, "aten::mm".into()),
            Cell::Name(NameKind::Copy, "Memcpy HtoD (Pageable -> Device)".into()),
        ]];
        let t = redact_table(Table::new(&["Kernel", "Copy"], &[], rows));
        assert_eq!(
            t.rows[0][0],
            Cell::Name(NameKind::Op, redacted_name("op", "aten::mm")),
            "a cell is hashed by its own kind, whatever its column is called"
        );
        assert_eq!(
            t.rows[0][1],
            Cell::Name(NameKind::Copy, "Memcpy HtoD (Pageable -> Device)".into()),
            "copies are kept"
        );
        assert_eq!(
            redact_pattern("aten::mm|k1|k2", '|'),
            format!(
                "{}|{}|{}",
                redacted_name("op", "aten::mm"),
                redacted_name("kernel", "k1"),
                redacted_name("kernel", "k2")
            )
        );
    }
}
