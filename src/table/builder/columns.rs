//! Typed columns under construction: nullable ones, and integer ones that widen from 32 to 64 bits.

use arrow2::array::PrimitiveArray;
use arrow2::bitmap::{Bitmap, MutableBitmap};
use arrow2::types::NativeType;

use crate::table::IntColumn;

/// A nullable column under construction: a plain `Vec` of values (0 for a null) and a validity bitmap
/// made only at the first null. Same array as arrow2's `MutablePrimitiveArray`, with pushes inlined.
pub(super) struct NullableColumn<T: NativeType> {
    pub(super) values: Vec<T>,
    pub(super) validity: Option<MutableBitmap>,
}

impl<T: NativeType> NullableColumn<T> {
    pub(super) fn new() -> Self {
        NullableColumn {
            values: Vec::new(),
            validity: None,
        }
    }

    pub(super) fn reserve_exact(&mut self, additional: usize) {
        self.values.reserve_exact(additional);
        if let Some(v) = self.validity.as_mut() {
            v.reserve(additional);
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, value: Option<T>) {
        match value {
            Some(v) => {
                self.values.push(v);
                if let Some(validity) = &mut self.validity {
                    validity.push(true);
                }
            }
            None => {
                self.values.push(T::default());
                match &mut self.validity {
                    Some(validity) => validity.push(false),
                    None => self.first_null(),
                }
            }
        }
    }

    /// The first null (just pushed as the last value): every earlier row is valid.
    #[cold]
    #[inline(never)]
    pub(super) fn first_null(&mut self) {
        let n = self.values.len();
        let mut validity = MutableBitmap::with_capacity(self.values.capacity());
        validity.extend_constant(n - 1, true);
        validity.push(false);
        self.validity = Some(validity);
    }

    /// Sets a row to a value (never to null).
    pub(super) fn set_valid(&mut self, row: usize, value: T) {
        self.values[row] = value;
        if let Some(validity) = &mut self.validity {
            validity.set(row, true);
        }
    }

    /// Sets a row to null.
    pub(super) fn set_null(&mut self, row: usize) {
        self.values[row] = T::default();
        if self.validity.is_none() {
            let mut validity = MutableBitmap::with_capacity(self.values.capacity());
            validity.extend_constant(self.values.len(), true);
            self.validity = Some(validity);
        }
        if let Some(validity) = &mut self.validity {
            validity.set(row, false);
        }
    }

    #[inline]
    pub(super) fn values(&self) -> &[T] {
        &self.values
    }

    #[inline]
    pub(super) fn validity(&self) -> Option<&MutableBitmap> {
        self.validity.as_ref()
    }

    /// As arrow2 converts a `MutablePrimitiveArray`: no validity when nothing is null.
    pub(super) fn into_array(self) -> PrimitiveArray<T> {
        let validity = self.validity.and_then(|v| {
            let bitmap: Bitmap = v.into();
            (bitmap.unset_bits() != 0).then_some(bitmap)
        });
        PrimitiveArray::<T>::new(T::PRIMITIVE.into(), self.values.into(), validity)
    }
}

/// An [`IntColumn`] under construction: Int32 while every value fits (stream and device numbers
/// do, but for such as CUDA's 4294967295 "all streams" on a context sync), widened to Int64 at the
/// first that does not.
pub(super) enum IntColumnBuilder {
    Int32(NullableColumn<i32>),
    Int64(NullableColumn<i64>),
}

impl IntColumnBuilder {
    pub(super) fn reserve_exact(&mut self, additional: usize) {
        match self {
            IntColumnBuilder::Int32(c) => c.reserve_exact(additional),
            IntColumnBuilder::Int64(c) => c.reserve_exact(additional),
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, value: Option<i64>) {
        match self {
            IntColumnBuilder::Int32(c) => match value.map(i32::try_from) {
                None => c.push(None),
                Some(Ok(v)) => c.push(Some(v)),
                Some(Err(_)) => {
                    self.widen();
                    self.push(value);
                }
            },
            IntColumnBuilder::Int64(c) => c.push(value),
        }
    }

    pub(super) fn get(&self, row: usize) -> Option<i64> {
        let valid = |v: Option<&MutableBitmap>| v.is_none_or(|b| b.get(row));
        match self {
            IntColumnBuilder::Int32(c) => valid(c.validity()).then(|| i64::from(c.values()[row])),
            IntColumnBuilder::Int64(c) => valid(c.validity()).then(|| c.values()[row]),
        }
    }

    /// Sets a row to a value, widening when it does not fit.
    pub(super) fn set(&mut self, row: usize, value: i64) {
        match self {
            IntColumnBuilder::Int32(c) => match i32::try_from(value) {
                Ok(v) => c.set_valid(row, v),
                Err(_) => {
                    self.widen();
                    self.set(row, value);
                }
            },
            IntColumnBuilder::Int64(c) => c.set_valid(row, value),
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn widen(&mut self) {
        if let IntColumnBuilder::Int32(c) = self {
            let mut values = Vec::with_capacity(c.values.capacity());
            values.extend(c.values.iter().map(|&v| i64::from(v)));
            *self = IntColumnBuilder::Int64(NullableColumn {
                values,
                validity: c.validity.take(),
            });
        }
    }

    pub(super) fn into_array(self) -> IntColumn {
        match self {
            IntColumnBuilder::Int32(c) => IntColumn::Int32(c.into_array()),
            IntColumnBuilder::Int64(c) => IntColumn::Int64(c.into_array()),
        }
    }
}
