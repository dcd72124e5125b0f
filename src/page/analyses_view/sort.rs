//! Sorting an analysis table by one of its columns (a click on its header): typed cells compared
//! as what they are (figures and numbers numerically, text and names alphabetically), stable, with
//! missing cells last in either direction.

use std::cmp::Ordering;

use super::{Cell, Table};

/// Which way a column is sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortDir {
    Ascending,
    Descending,
}

impl SortDir {
    /// The header's `aria-sort` value.
    pub fn aria(self) -> &'static str {
        match self {
            SortDir::Ascending => "ascending",
            SortDir::Descending => "descending",
        }
    }
}

/// A table's sort: a column (index into text columns, then number columns) and a direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortBy {
    pub column: usize,
    pub dir: SortDir,
}

impl SortBy {
    /// The sort after a click on `column`'s header: the same column turns around; another one
    /// starts largest first for numbers and A to Z for text.
    pub fn after_click(current: Option<SortBy>, column: usize, numeric: bool) -> SortBy {
        match current {
            Some(s) if s.column == column => SortBy {
                column,
                dir: match s.dir {
                    SortDir::Ascending => SortDir::Descending,
                    SortDir::Descending => SortDir::Ascending,
                },
            },
            _ => SortBy {
                column,
                dir: if numeric {
                    SortDir::Descending
                } else {
                    SortDir::Ascending
                },
            },
        }
    }

    /// `aria-sort` of `column`'s header under this sort (`none` for the other columns).
    pub fn aria_of(sort: Option<SortBy>, column: usize) -> &'static str {
        match sort {
            Some(s) if s.column == column => s.dir.aria(),
            _ => "none",
        }
    }
}

/// What a cell is compared by.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Number(f64),
    Text(String),
    Missing,
}

/// A number written for people: `1,234.5`, `12 %`, `3.1 ms` → its leading number.
fn leading_number(text: &str) -> Option<f64> {
    let t: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | 'e' | 'E'))
        .filter(|c| *c != ',')
        .collect();
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn key(cell: &Cell) -> Key {
    match cell {
        Cell::Figure(f) if f.value.is_finite() => Key::Number(f.value),
        Cell::Figure(_) | Cell::Missing | Cell::Blank => Key::Missing,
        Cell::Number(t) => leading_number(t).map_or(Key::Text(t.to_lowercase()), Key::Number),
        Cell::Text(t) | Cell::Name(_, t) if t.is_empty() => Key::Missing,
        Cell::Text(t) | Cell::Name(_, t) => Key::Text(t.to_lowercase()),
        Cell::Steps { shown, .. } => shown
            .first()
            .map_or(Key::Missing, |s| Key::Text(s.to_lowercase())),
    }
}

/// Ascending order of two keys: numbers before text (a column mixes them only by accident),
/// missing cells compare equal here (the caller puts them last).
fn compare(a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::Number(x), Key::Number(y)) => x.total_cmp(y),
        (Key::Text(x), Key::Text(y)) => x.cmp(y),
        (Key::Number(_), Key::Text(_)) => Ordering::Less,
        (Key::Text(_), Key::Number(_)) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// The row indices of `rows` in the order of `sort` (stable: equal cells keep their order; missing
/// cells last whichever the direction). `None`: the table's own order.
pub fn sorted_order(rows: &[Vec<Cell>], sort: Option<SortBy>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let Some(SortBy { column, dir }) = sort else {
        return order;
    };
    let keys: Vec<Key> = rows
        .iter()
        .map(|r| r.get(column).map_or(Key::Missing, key))
        .collect();
    crate::sort::sort_by(&mut order, |&i, &j| {
        let (a, b) = (&keys[i], &keys[j]);
        match (a == &Key::Missing, b == &Key::Missing) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => match dir {
                SortDir::Ascending => compare(a, b),
                SortDir::Descending => compare(b, a),
            },
        }
    });
    order
}

impl Table {
    /// Whether column `column` (text columns first) holds numbers.
    pub fn is_numeric_column(&self, column: usize) -> bool {
        column >= self.text_columns.len()
    }

    /// Every header, text columns first.
    pub fn headers(&self) -> Vec<&'static str> {
        self.text_columns
            .iter()
            .chain(&self.num_columns)
            .copied()
            .collect()
    }

    /// The rows in the order of `sort`.
    pub fn sorted_rows(&self, sort: Option<SortBy>) -> Vec<Vec<Cell>> {
        sorted_order(&self.rows, sort)
            .into_iter()
            .map(|i| self.rows[i].clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Figure, Unit};
    use super::*;
    use crate::report::redact::NameKind;

    fn fig(v: f64) -> Cell {
        Cell::Figure(Figure {
            metric: "m",
            value: v,
            unit: Unit::Micros,
            context: Vec::new(),
        })
    }

    fn table() -> Table {
        Table::new(
            &["name"],
            &["time", "rank"],
            vec![
                vec![
                    Cell::Name(NameKind::Op, "beta".into()),
                    fig(10.0),
                    Cell::Number("2".into()),
                ],
                vec![
                    Cell::Name(NameKind::Op, "Alpha".into()),
                    fig(2.0),
                    Cell::Number("10".into()),
                ],
                vec![
                    Cell::Name(NameKind::Op, "gamma".into()),
                    Cell::Missing,
                    Cell::Number("1,000".into()),
                ],
                vec![
                    Cell::Name(NameKind::Op, "alpha".into()),
                    fig(10.0),
                    Cell::Number("3".into()),
                ],
            ],
        )
    }

    fn names(rows: &[Vec<Cell>]) -> Vec<String> {
        rows.iter()
            .map(|r| match &r[0] {
                Cell::Name(_, n) => n.clone(),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn numbers_sort_numerically_text_alphabetically_and_stably() {
        let t = table();
        let by = |column, dir| Some(SortBy { column, dir });
        assert_eq!(
            names(&t.sorted_rows(None)),
            ["beta", "Alpha", "gamma", "alpha"]
        );
        // Equal names (case aside) keep their order.
        assert_eq!(
            names(&t.sorted_rows(by(0, SortDir::Ascending))),
            ["Alpha", "alpha", "beta", "gamma"]
        );
        assert_eq!(
            names(&t.sorted_rows(by(0, SortDir::Descending))),
            ["gamma", "beta", "Alpha", "alpha"]
        );
        // Figures by value, ties in table order, the missing one last both ways.
        assert_eq!(
            names(&t.sorted_rows(by(1, SortDir::Descending))),
            ["beta", "alpha", "Alpha", "gamma"]
        );
        assert_eq!(
            names(&t.sorted_rows(by(1, SortDir::Ascending))),
            ["Alpha", "beta", "alpha", "gamma"]
        );
        // Numbers written as text: 2 < 3 < 10 < 1,000 (not as strings).
        assert_eq!(
            names(&t.sorted_rows(by(2, SortDir::Ascending))),
            ["beta", "alpha", "Alpha", "gamma"]
        );
        // A column past the row's cells: every cell missing, the order stays.
        assert_eq!(
            names(&t.sorted_rows(by(9, SortDir::Ascending))),
            names(&t.rows)
        );
    }

    #[test]
    fn a_click_starts_numbers_largest_first_and_turns_the_same_column_around() {
        let t = table();
        assert!(!t.is_numeric_column(0) && t.is_numeric_column(1));
        assert_eq!(t.headers(), ["name", "time", "rank"]);
        let s = SortBy::after_click(None, 1, true);
        assert_eq!(s.dir, SortDir::Descending);
        let s = SortBy::after_click(Some(s), 1, true);
        assert_eq!(s.dir, SortDir::Ascending);
        let s = SortBy::after_click(Some(s), 0, false);
        assert_eq!((s.column, s.dir), (0, SortDir::Ascending));
        assert_eq!(SortBy::aria_of(Some(s), 0), "ascending");
        assert_eq!(SortBy::aria_of(Some(s), 1), "none");
        assert_eq!(SortBy::aria_of(None, 0), "none");
        assert_eq!(leading_number("12.5 %"), Some(12.5));
        assert_eq!(leading_number("n/a"), None);
    }
}
