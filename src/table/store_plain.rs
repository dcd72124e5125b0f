//! The stored table's parts in a plain binary layout (every target; what the page keeps): each
//! column's validity and values as they lie in memory, read back through arrow2's checked
//! constructors. No Arrow IPC reader or writer, so the page's worker carries neither.
//!
//! A part: the column count (u32 LE), then per column a type tag (u8), its length (u64 LE), its
//! validity (`0`, or `1` and the bit-packed bitmap) and its values: primitives as their LE bytes,
//! booleans bit-packed, a dictionary as its keys (a UInt32 column) and its values (a Utf8 column:
//! `len + 1` i32 offsets, the bytes' length as u64 and the bytes). Every length is checked against
//! the bytes left before it is used.

use arrow2::array::{Array, BooleanArray, DictionaryArray, PrimitiveArray, Utf8Array};
use arrow2::bitmap::Bitmap;
use arrow2::buffer::Buffer;
use arrow2::chunk::Chunk;
use arrow2::datatypes::{DataType, IntegerType};
use arrow2::offset::OffsetsBuffer;
use arrow2::types::NativeType;

use super::{corrupt, Input, StoreError};

const U8: u8 = 0;
const U32: u8 = 1;
const I32: u8 = 2;
const I64: u8 = 3;
const F64: u8 = 4;
const BOOL: u8 = 5;
const DICT: u8 = 6;
const UTF8: u8 = 7;

fn bits(out: &mut Vec<u8>, values: impl Iterator<Item = bool>) {
    let mut byte = 0u8;
    let mut n = 0;
    for v in values {
        byte |= (v as u8) << (n % 8);
        n += 1;
        if n % 8 == 0 {
            out.push(byte);
            byte = 0;
        }
    }
    if n % 8 != 0 {
        out.push(byte);
    }
}

fn validity(out: &mut Vec<u8>, v: Option<&Bitmap>) {
    match v {
        None => out.push(0),
        Some(b) => {
            out.push(1);
            bits(out, b.iter());
        }
    }
}

fn primitive<T: NativeType>(out: &mut Vec<u8>, tag: u8, a: &PrimitiveArray<T>) {
    out.push(tag);
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    validity(out, a.validity());
    for v in a.values().iter() {
        out.extend_from_slice(v.to_le_bytes().as_ref());
    }
}

fn utf8(out: &mut Vec<u8>, a: &Utf8Array<i32>) {
    out.push(UTF8);
    out.extend_from_slice(&(a.len() as u64).to_le_bytes());
    validity(out, a.validity());
    let offsets = a.offsets().buffer();
    let first = offsets[0];
    for o in offsets.iter() {
        out.extend_from_slice(&(o - first).to_le_bytes());
    }
    let bytes = &a.values()[first as usize..*offsets.last().unwrap_or(&first) as usize];
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The error for a column with no plain layout.
fn unexpected(a: &dyn Array) -> StoreError {
    StoreError::Encode(format!("no plain layout for {:?}", a.data_type()))
}

/// A column of `T`s, written under `tag`.
fn primitive_column<T: NativeType>(
    out: &mut Vec<u8>,
    tag: u8,
    a: &dyn Array,
) -> Result<(), StoreError> {
    let p = a
        .as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .ok_or_else(|| unexpected(a))?;
    primitive(out, tag, p);
    Ok(())
}

fn column(out: &mut Vec<u8>, a: &dyn Array) -> Result<(), StoreError> {
    let any = a.as_any();
    let unexpected = || unexpected(a);
    match a.data_type() {
        DataType::UInt8 => primitive_column::<u8>(out, U8, a)?,
        DataType::UInt32 => primitive_column::<u32>(out, U32, a)?,
        DataType::Int32 => primitive_column::<i32>(out, I32, a)?,
        DataType::Int64 => primitive_column::<i64>(out, I64, a)?,
        DataType::Float64 => primitive_column::<f64>(out, F64, a)?,
        DataType::Boolean => {
            let b = any.downcast_ref::<BooleanArray>().ok_or_else(unexpected)?;
            out.push(BOOL);
            out.extend_from_slice(&(b.len() as u64).to_le_bytes());
            validity(out, b.validity());
            bits(out, b.values().iter());
        }
        DataType::Dictionary(IntegerType::UInt32, values, _) if **values == DataType::Utf8 => {
            let d = any
                .downcast_ref::<DictionaryArray<u32>>()
                .ok_or_else(unexpected)?;
            let values = d
                .values()
                .as_any()
                .downcast_ref::<Utf8Array<i32>>()
                .ok_or_else(unexpected)?;
            out.push(DICT);
            primitive(out, U32, d.keys());
            utf8(out, values);
        }
        _ => return Err(unexpected()),
    }
    Ok(())
}

/// A chunk's columns in the plain layout.
pub(super) fn write(chunk: &Chunk<Box<dyn Array>>) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::new();
    out.extend_from_slice(&(chunk.arrays().len() as u32).to_le_bytes());
    for a in chunk.arrays() {
        column(&mut out, a.as_ref())?;
    }
    Ok(out)
}

struct Reader<'a, 'w> {
    input: Input<'a>,
    what: &'w str,
}

impl<'a> Reader<'a, '_> {
    fn bad(&self, e: impl std::fmt::Display) -> StoreError {
        corrupt(format!("{}: {e}", self.what))
    }

    fn u8(&mut self) -> Result<u8, StoreError> {
        Ok(self.input.take(1, self.what)?[0])
    }

    fn len(&mut self) -> Result<usize, StoreError> {
        let n = self.input.u64(self.what)?;
        // No column can hold more items than bytes are left (a bit each at least, a byte for most).
        if n > 8 * (self.input.bytes.len() - self.input.at) as u64 + 8 {
            return Err(self.bad(format!("a column of {n} items in fewer bytes")));
        }
        Ok(n as usize)
    }

    fn bitmap(&mut self, len: usize) -> Result<Bitmap, StoreError> {
        let bytes = self.input.take(len.div_ceil(8) as u64, self.what)?;
        Bitmap::try_new(bytes.to_vec(), len).map_err(|e| self.bad(e))
    }

    fn validity(&mut self, len: usize) -> Result<Option<Bitmap>, StoreError> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.bitmap(len).map(Some),
            other => Err(self.bad(format!("validity flag {other}"))),
        }
    }

    fn values<T: NativeType>(&mut self, len: usize) -> Result<Vec<T>, StoreError> {
        let size = std::mem::size_of::<T>();
        let bytes = self.input.take((len * size) as u64, self.what)?;
        Ok(bytes
            .chunks_exact(size)
            .map(|c| T::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }

    fn primitive<T: NativeType>(&mut self, ty: DataType) -> Result<PrimitiveArray<T>, StoreError> {
        let len = self.len()?;
        let validity = self.validity(len)?;
        let values = self.values::<T>(len)?;
        PrimitiveArray::try_new(ty, Buffer::from(values), validity).map_err(|e| self.bad(e))
    }

    fn expect(&mut self, tag: u8) -> Result<(), StoreError> {
        let found = self.u8()?;
        if found != tag {
            return Err(self.bad(format!("type tag {found}, expected {tag}")));
        }
        Ok(())
    }

    fn utf8(&mut self) -> Result<Utf8Array<i32>, StoreError> {
        self.expect(UTF8)?;
        let len = self.len()?;
        let validity = self.validity(len)?;
        let offsets = self.values::<i32>(len + 1)?;
        let n = self.input.u64(self.what)?;
        let bytes = self.input.take(n, self.what)?.to_vec();
        let offsets = OffsetsBuffer::try_from(offsets).map_err(|e| self.bad(e))?;
        Utf8Array::try_new(DataType::Utf8, offsets, Buffer::from(bytes), validity)
            .map_err(|e| self.bad(e))
    }

    fn column(&mut self) -> Result<Box<dyn Array>, StoreError> {
        Ok(match self.u8()? {
            U8 => self.primitive::<u8>(DataType::UInt8)?.boxed(),
            U32 => self.primitive::<u32>(DataType::UInt32)?.boxed(),
            I32 => self.primitive::<i32>(DataType::Int32)?.boxed(),
            I64 => self.primitive::<i64>(DataType::Int64)?.boxed(),
            F64 => self.primitive::<f64>(DataType::Float64)?.boxed(),
            BOOL => {
                let len = self.len()?;
                let validity = self.validity(len)?;
                let values = self.bitmap(len)?;
                BooleanArray::try_new(DataType::Boolean, values, validity)
                    .map_err(|e| self.bad(e))?
                    .boxed()
            }
            DICT => {
                self.expect(U32)?;
                let keys = self.primitive::<u32>(DataType::UInt32)?;
                let values = self.utf8()?;
                let ty = DataType::Dictionary(IntegerType::UInt32, Box::new(DataType::Utf8), false);
                DictionaryArray::try_new(ty, keys, values.boxed())
                    .map_err(|e| self.bad(e))?
                    .boxed()
            }
            other => return Err(self.bad(format!("unknown type tag {other}"))),
        })
    }
}

/// A chunk back from [`write`]'s bytes (all of them).
pub(super) fn read(body: &[u8], what: &str) -> Result<Chunk<Box<dyn Array>>, StoreError> {
    let mut r = Reader {
        input: Input { bytes: body, at: 0 },
        what,
    };
    let mut n = [0u8; 4];
    n.copy_from_slice(r.input.take(4, what)?);
    let n = u32::from_le_bytes(n);
    let mut arrays = Vec::new();
    for _ in 0..n {
        arrays.push(r.column()?);
    }
    if r.input.at != body.len() {
        return Err(r.bad(format!(
            "{} bytes after the columns",
            body.len() - r.input.at
        )));
    }
    Chunk::try_new(arrays).map_err(|e| r.bad(e))
}
