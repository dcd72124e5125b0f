//! Reading an operator's `record_shapes` args: `Input Dims`, `Input type`, `Input Strides` and
//! `Concrete Inputs` (JSON text in the table), and Inductor's `kernel_flop` / `kernel_num_gb`.

use serde_json::Value;

use super::kinds::Dtype;
use crate::table::{ArgColumn, TraceTable};

/// One input of an operator as `record_shapes` describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Input {
    /// Sizes of a tensor (empty for a 0-d tensor or a non-tensor).
    pub dims: Vec<i64>,
    /// Element type of a tensor; `None` for scalars, lists and absent optionals.
    pub dtype: Option<Dtype>,
    /// Strides, when the trace gives them.
    pub strides: Option<Vec<i64>>,
    /// The `Concrete Inputs` text of a scalar or list argument (`"1"`, `"[1, 1]"`, `"True"`), `""` otherwise.
    pub concrete: String,
    /// For a `TensorList`: its tensors' sizes.
    pub list: Vec<Vec<i64>>,
}

impl Input {
    /// Whether this input is a tensor (it has a tensor element type).
    pub fn is_tensor(&self) -> bool {
        self.dtype.is_some()
    }

    /// Number of elements of a tensor input (1 for a 0-d tensor).
    pub fn numel(&self) -> u64 {
        self.dims.iter().map(|&d| d.max(0) as u64).product()
    }

    /// Bytes of a tensor input (0 for a non-tensor), or of all the tensors of a list of `elem` bytes.
    pub fn bytes(&self, list_elem: u64) -> u64 {
        match self.dtype {
            Some(d) => self.numel() * d.bytes(),
            None => {
                self.list
                    .iter()
                    .map(|t| t.iter().map(|&d| d.max(0) as u64).product::<u64>())
                    .sum::<u64>()
                    * list_elem
            }
        }
    }

    /// The concrete value as integers (`"[2, 2]"` → `[2, 2]`, `"3"` → `[3]`).
    pub fn ints(&self) -> Option<Vec<i64>> {
        let t = self.concrete.trim();
        if t.is_empty() {
            return None;
        }
        let inner = t.trim_start_matches('[').trim_end_matches(']');
        if inner.trim().is_empty() {
            return Some(Vec::new());
        }
        inner.split(',').map(|x| x.trim().parse().ok()).collect()
    }

    /// The concrete value as a boolean (`True`/`False`, `1`/`0`).
    pub fn flag(&self) -> Option<bool> {
        match self.concrete.trim() {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }

    /// The concrete value as booleans (`"[True, False, True]"`).
    pub fn flags(&self) -> Option<Vec<bool>> {
        let t = self.concrete.trim();
        let inner = t.strip_prefix('[')?.strip_suffix(']')?;
        inner
            .split(',')
            .map(|x| match x.trim() {
                "True" | "true" | "1" => Some(true),
                "False" | "false" | "0" => Some(false),
                _ => None,
            })
            .collect()
    }
}

/// What `record_shapes` says of one operator call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpArgs {
    pub inputs: Vec<Input>,
    /// `Concrete Inputs` was present.
    pub has_concrete: bool,
}

impl OpArgs {
    /// The first tensor input's element type.
    pub fn first_dtype(&self) -> Option<Dtype> {
        self.inputs.iter().find_map(|i| i.dtype)
    }

    pub fn get(&self, i: usize) -> Option<&Input> {
        self.inputs.get(i)
    }
}

/// The args columns the model reads, looked up once per table.
pub struct ShapeColumns<'a> {
    dims: Option<&'a ArgColumn>,
    types: Option<&'a ArgColumn>,
    strides: Option<&'a ArgColumn>,
    concrete: Option<&'a ArgColumn>,
    kernel_flop: Option<&'a ArgColumn>,
    kernel_num_gb: Option<&'a ArgColumn>,
}

fn json_of(c: Option<&ArgColumn>, row: usize) -> Option<Value> {
    let c = c?;
    let i = c.find(row)?;
    match c.text_at(i) {
        Some(s) => serde_json::from_str(s).ok(),
        None => Some(c.json_at(i)),
    }
}

fn dims_of(v: &Value) -> Option<Vec<i64>> {
    v.as_array()?.iter().map(Value::as_i64).collect()
}

fn number(c: Option<&ArgColumn>, row: usize) -> Option<f64> {
    let c = c?;
    let i = c.find(row)?;
    c.f64_at(i)
        .or_else(|| c.text_at(i).and_then(|s| s.trim().parse().ok()))
}

impl<'a> ShapeColumns<'a> {
    pub fn of(t: &'a TraceTable) -> ShapeColumns<'a> {
        ShapeColumns {
            dims: t.arg("Input Dims"),
            types: t.arg("Input type"),
            strides: t.arg("Input Strides"),
            concrete: t.arg("Concrete Inputs"),
            kernel_flop: t.arg("kernel_flop"),
            kernel_num_gb: t.arg("kernel_num_gb"),
        }
    }

    /// Inductor's own figures of a row: (FLOPs, bytes) when either arg is present.
    pub fn inductor(&self, row: usize) -> Option<(f64, f64)> {
        let flop = number(self.kernel_flop, row);
        let gb = number(self.kernel_num_gb, row);
        (flop.is_some() || gb.is_some()).then(|| (flop.unwrap_or(0.0), gb.unwrap_or(0.0) * 1e9))
    }

    /// The shapes of an operator row; `None` when it has no `Input Dims`.
    pub fn read(&self, row: usize) -> Option<OpArgs> {
        let dims = json_of(self.dims, row)?;
        let dims = dims.as_array()?.clone();
        let types = json_of(self.types, row);
        let strides = json_of(self.strides, row);
        let concrete = json_of(self.concrete, row);
        let at = |v: &Option<Value>, i: usize| v.as_ref().and_then(|v| v.get(i)).cloned();
        let inputs = dims
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let ty = at(&types, i);
                let ty = ty.as_ref().and_then(Value::as_str).unwrap_or("");
                let list = if ty == "TensorList" {
                    d.as_array()
                        .map(|ts| ts.iter().filter_map(dims_of).collect())
                        .unwrap_or_default()
                } else {
                    Vec::new()
                };
                Input {
                    dims: dims_of(d).unwrap_or_default(),
                    dtype: Dtype::of_input_type(ty),
                    strides: at(&strides, i).as_ref().and_then(dims_of),
                    concrete: at(&concrete, i)
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .unwrap_or_default(),
                    list,
                }
            })
            .collect();
        Some(OpArgs {
            inputs,
            has_concrete: concrete.is_some(),
        })
    }
}
