//! One args key's column under construction: its values typed as they come, widened to text on a mixed type.

use arrow2::array::{BooleanArray, DictionaryArray, PrimitiveArray, Utf8Array};
use arrow2::bitmap::Bitmap;
use arrow2::datatypes::DataType;

use crate::table::float_text::float_text;
use crate::table::intern::Interner;
use crate::table::{ArgColumn, ArgValues};
use crate::trace::ArgValue;

/// The type a well-known args key always gets, whatever the values look like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum FixedType {
    Int,
    Float,
    Text,
}

pub(super) fn fixed_type_of(key: &[u8]) -> Option<FixedType> {
    Some(match key {
        b"bytes"
        | b"cbid"
        | b"queued"
        | b"context"
        | b"registers per thread"
        | b"shared memory"
        | b"Record function id"
        | b"Sequence number"
        | b"Fwd thread id"
        | b"Ev Idx"
        | b"Python id"
        | b"Python parent id"
        | b"Python thread"
        | b"In msg nelems"
        | b"Out msg nelems"
        | b"Group size"
        | b"Process Group Ranks size" => FixedType::Int,
        b"memory bandwidth (GB/s)"
        | b"blocks per SM"
        | b"warps per SM"
        | b"est. achieved occupancy %" => FixedType::Float,
        b"grid"
        | b"block"
        | b"Input Dims"
        | b"Input type"
        | b"Input Strides"
        | b"Concrete Inputs"
        | b"Collective name"
        | b"Process Group Name"
        | b"Process Group Description"
        | b"dtype"
        | b"kernel_backend"
        | b"name" => FixedType::Text,
        _ => return None,
    })
}

pub(super) enum ArgData {
    /// Only nulls so far.
    Empty,
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    Text(Vec<u32>),
}

/// One sparse args column under construction.
pub(super) struct ArgBuilder {
    pub(super) key: Vec<u8>,
    pub(super) rows: Vec<u32>,
    pub(super) data: ArgData,
    /// Validity, created at the first null.
    pub(super) valid: Option<Vec<bool>>,
    pub(super) strings: Interner,
    pub(super) mixed: bool,
    pub(super) fixed: Option<FixedType>,
}

impl ArgBuilder {
    pub(super) fn new(key: &[u8]) -> Self {
        ArgBuilder {
            key: key.to_vec(),
            rows: Vec::new(),
            data: ArgData::Empty,
            valid: None,
            strings: Interner::default(),
            mixed: false,
            fixed: fixed_type_of(key),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(super) fn reserve_exact(&mut self, additional: usize) {
        self.rows.reserve_exact(additional);
        match &mut self.data {
            ArgData::Empty => {}
            ArgData::Int(v) => v.reserve_exact(additional),
            ArgData::Float(v) => v.reserve_exact(additional),
            ArgData::Bool(v) => v.reserve_exact(additional),
            ArgData::Text(v) => v.reserve_exact(additional),
        }
        if let Some(v) = &mut self.valid {
            v.reserve_exact(additional);
        }
    }

    pub(super) fn push_validity(&mut self, ok: bool) {
        match (&mut self.valid, ok) {
            (Some(v), _) => v.push(ok),
            (None, true) => {}
            (None, false) => {
                let mut v = vec![true; self.len()];
                v.push(false);
                self.valid = Some(v);
            }
        }
    }

    pub(super) fn to_text(&mut self) {
        let n_before = self.len();
        let texts: Vec<String> = match &self.data {
            ArgData::Empty => vec![String::new(); n_before],
            ArgData::Int(v) => v.iter().map(|x| x.to_string()).collect(),
            ArgData::Float(v) => v.iter().map(|x| float_text(*x)).collect(),
            ArgData::Bool(v) => v.iter().map(|x| x.to_string()).collect(),
            ArgData::Text(_) => return,
        };
        let ids = texts
            .iter()
            .map(|t| self.strings.intern(t.as_bytes()))
            .collect();
        self.data = ArgData::Text(ids);
    }

    /// Adds the value of `row`. Returns `false` when a well-known key got a value of the wrong type.
    pub(super) fn push(&mut self, row: u32, value: &ArgValue<'_>) -> bool {
        let n = self.len();
        let mut ok = true;
        let value = match (self.fixed, *value) {
            (Some(FixedType::Int), ArgValue::Float(f)) if f.fract() == 0.0 && f.abs() < 9e18 => {
                ArgValue::Int(f as i64)
            }
            (Some(FixedType::Int), ArgValue::Int(_) | ArgValue::Null) => *value,
            (Some(FixedType::Int), _) => {
                ok = false;
                ArgValue::Null
            }
            (Some(FixedType::Float), ArgValue::Int(i)) => ArgValue::Float(i as f64),
            (Some(FixedType::Float), ArgValue::Float(_) | ArgValue::Null) => *value,
            (Some(FixedType::Float), _) => {
                ok = false;
                ArgValue::Null
            }
            _ => *value,
        };
        if self.fixed == Some(FixedType::Text) && matches!(self.data, ArgData::Empty) {
            self.to_text();
        }
        self.push_validity(!matches!(value, ArgValue::Null));
        match value {
            ArgValue::Null => match &mut self.data {
                ArgData::Empty => {}
                ArgData::Int(v) => v.push(0),
                ArgData::Float(v) => v.push(0.0),
                ArgData::Bool(v) => v.push(false),
                ArgData::Text(v) => v.push(0),
            },
            ArgValue::Int(i) => match &mut self.data {
                ArgData::Int(v) => v.push(i),
                ArgData::Float(v) => v.push(i as f64),
                ArgData::Empty => {
                    let mut v = vec![0; n];
                    v.push(i);
                    self.data = ArgData::Int(v);
                }
                ArgData::Bool(_) | ArgData::Text(_) => {
                    self.push_text(i.to_string().as_bytes(), false)
                }
            },
            ArgValue::Float(f) => match &mut self.data {
                ArgData::Float(v) => v.push(f),
                ArgData::Int(v) => {
                    let mut fl: Vec<f64> = v.iter().map(|&x| x as f64).collect();
                    fl.push(f);
                    self.data = ArgData::Float(fl);
                }
                ArgData::Empty => {
                    let mut v = vec![0.0; n];
                    v.push(f);
                    self.data = ArgData::Float(v);
                }
                ArgData::Bool(_) | ArgData::Text(_) => {
                    self.push_text(float_text(f).as_bytes(), false)
                }
            },
            ArgValue::Bool(b) => match &mut self.data {
                ArgData::Bool(v) => v.push(b),
                ArgData::Empty => {
                    let mut v = vec![false; n];
                    v.push(b);
                    self.data = ArgData::Bool(v);
                }
                _ => self.push_text(if b { b"true" } else { b"false" }, false),
            },
            ArgValue::Text(t) | ArgValue::Json(t) => self.push_text(t, true),
        }
        self.rows.push(row);
        ok
    }

    /// Stores a value as text, turning the column into text first if it was not (a mixed-type key).
    pub(super) fn push_text(&mut self, t: &[u8], value_is_text: bool) {
        let data_is_text = matches!(self.data, ArgData::Text(_));
        let differs = if value_is_text {
            !data_is_text && !matches!(self.data, ArgData::Empty)
        } else {
            data_is_text
        };
        if differs && self.fixed != Some(FixedType::Text) {
            self.mixed = true;
        }
        self.to_text();
        let id = self.strings.intern(t);
        if let ArgData::Text(v) = &mut self.data {
            v.push(id);
        }
    }

    pub(super) fn finish(self) -> ArgColumn {
        let validity = self.valid.map(|v| Bitmap::from_iter(v.iter().copied()));
        let n = self.rows.len();
        let values = match self.data {
            ArgData::Empty => ArgValues::Int(PrimitiveArray::new(
                DataType::Int64,
                vec![0i64; n].into(),
                validity,
            )),
            ArgData::Int(v) => {
                ArgValues::Int(PrimitiveArray::new(DataType::Int64, v.into(), validity))
            }
            ArgData::Float(v) => {
                ArgValues::Float(PrimitiveArray::new(DataType::Float64, v.into(), validity))
            }
            ArgData::Bool(v) => ArgValues::Bool(BooleanArray::new(
                DataType::Boolean,
                Bitmap::from_iter(v),
                validity,
            )),
            ArgData::Text(v) => {
                let keys = PrimitiveArray::<u32>::new(DataType::UInt32, v.into(), validity);
                ArgValues::Text(dictionary(keys, self.strings.into_strings()))
            }
        };
        ArgColumn {
            key: String::from_utf8_lossy(&self.key).into_owned(),
            rows: PrimitiveArray::<u32>::from_vec(self.rows),
            values,
            mixed_types: self.mixed,
        }
    }
}

pub(super) fn dictionary(keys: PrimitiveArray<u32>, values: Vec<String>) -> DictionaryArray<u32> {
    let dict = Utf8Array::<i32>::from_iter_values(values.iter());
    let dtype = DataType::Dictionary(
        arrow2::datatypes::IntegerType::UInt32,
        Box::new(DataType::Utf8),
        false,
    );
    DictionaryArray::try_new(dtype, keys, dict.boxed()).expect("dictionary keys in range")
}
