//! The messages' wire format: one generic, compact binary serde codec ([`encode`], [`decode`]) for
//! every message between the page, the worker and its helpers, and for the results this browser
//! keeps. Any `Serialize`/`Deserialize` type goes through it with no code of its own, so a new
//! message variant needs nothing here.
//!
//! Why not JSON: serde instantiates a reader per type and per format, and serde_json's readers (the
//! text parser, key matching, whitespace, escapes) were ~420 kB of the page's code and ~500 kB of the
//! worker's (README, Size). This format's readers are a few loads per field.
//!
//! The format (little-endian, fixed width; both ends are this crate, so no versioning):
//! - `bool`, integers, floats: their bytes; `char` as `u32`; `usize` is serde's `u64`.
//! - strings and byte strings: `u32` length, then the bytes (UTF-8 checked on reading).
//! - `Option`: `0`, or `1` then the value. Unit and unit structs: nothing.
//! - sequences and maps: `u32` count, then the elements (keys and values alternating).
//! - tuples, tuple structs: the elements. Newtype structs: the value.
//! - enums: the variant's index as `u32`, then its content as the matching struct/tuple/value.
//! - structs: per declared field, `1` then the value, or `0` for a field `skip_serializing_if`
//!   left out (read back as the field's `#[serde(default)]`, which such a field must have).
//!
//! Not supported (an error, never a wrong value): `deserialize_any` (`serde_json::Value`,
//! `#[serde(untagged)]`, `#[serde(tag = ..)]`, `#[serde(flatten)]`), which this protocol avoids; a
//! field of untyped JSON (an event's args) crosses as its JSON text with `#[serde(with =
//! "crate::protocol::codec::json_text")]`, unchanged in JSON.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};
use serde::Deserialize;

/// The error of [`encode`] or [`decode`], in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// `value` in the wire format.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    value.serialize(&mut Writer { out: &mut out })?;
    Ok(out)
}

/// The value `bytes` hold, all of them.
pub fn decode<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    let (value, used) = decode_prefix(bytes)?;
    if used != bytes.len() {
        return Err(Error(format!(
            "{} bytes left over after the message",
            bytes.len() - used
        )));
    }
    Ok(value)
}

/// The value at the start of `bytes`, and how many bytes it took (the rest is not read).
pub fn decode_prefix<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<(T, usize)> {
    let mut reader = Reader { input: bytes };
    let value = T::deserialize(&mut reader)?;
    Ok((value, bytes.len() - reader.input.len()))
}

/// The variant index an encoded enum starts with.
pub fn variant_index(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?))
}

/// The variant names of enum `T` in index order (what [`variant_index`] indexes).
pub fn variant_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(VariantNames(&mut names));
    names
}

/// Appends `bytes` to `out`: one function for every write, so a type's writer is a call per field
/// rather than a growth check and a copy inlined at each (the codec's code is per type).
#[inline(never)]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

/// Appends the wire form of one message to `out`.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    fn len(&mut self, n: usize) -> Result<()> {
        let n = u32::try_from(n).map_err(|_| Error("a sequence over 2^32 items".into()))?;
        put(self.out, &n.to_le_bytes());
        Ok(())
    }

    fn bytes(&mut self, b: &[u8]) -> Result<()> {
        self.len(b.len())?;
        put(self.out, b);
        Ok(())
    }
}

macro_rules! put_le {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<()> {
            put(self.out, &v.to_le_bytes());
            Ok(())
        }
    )*};
}

impl<'a, 'b> ser::Serializer for &'a mut Writer<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Counted<'a, 'b>;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Counted<'a, 'b>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    put_le!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128, serialize_f32: f32, serialize_f64: f64);

    fn serialize_bool(self, v: bool) -> Result<()> {
        put(self.out, &[v as u8]);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.serialize_u32(v as u32)
    }
    fn serialize_str(self, v: &str) -> Result<()> {
        self.bytes(v.as_bytes())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.bytes(v)
    }
    fn serialize_none(self) -> Result<()> {
        put(self.out, &[0]);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<()> {
        put(self.out, &[1]);
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<()> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, index: u32, _: &'static str) -> Result<()> {
        self.serialize_u32(index)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<()> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        v: &T,
    ) -> Result<()> {
        self.serialize_u32(index)?;
        v.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Counted<'a, 'b>> {
        Ok(Counted::start(self))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self> {
        put(self.out, &index.to_le_bytes());
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Counted<'a, 'b>> {
        Ok(Counted::start(self))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self> {
        put(self.out, &index.to_le_bytes());
        Ok(self)
    }
    fn is_human_readable(&self) -> bool {
        false
    }
}

/// Untyped JSON (`serde_json::Map`/`Value`) as itself in JSON and as its JSON text in this
/// codec (which cannot read what does not say its type): `#[serde(with = "...::json_text")]`.
pub mod json_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return value.serialize(s);
        }
        let text = serde_json::to_string(value).map_err(serde::ser::Error::custom)?;
        s.serialize_str(&text)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: serde::de::DeserializeOwned,
        D: Deserializer<'de>,
    {
        if d.is_human_readable() {
            return T::deserialize(d);
        }
        let text = <&str>::deserialize(d)?;
        serde_json::from_str(text).map_err(serde::de::Error::custom)
    }
}

/// A sequence or map being written: its count is patched in at the end.
struct Counted<'a, 'b> {
    w: &'a mut Writer<'b>,
    at: usize,
    count: usize,
}

impl<'a, 'b> Counted<'a, 'b> {
    fn start(w: &'a mut Writer<'b>) -> Self {
        let at = w.out.len();
        put(w.out, &[0; 4]);
        Counted { w, at, count: 0 }
    }

    fn item<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        v.serialize(&mut *self.w)
    }

    fn finish(self) -> Result<()> {
        let n =
            u32::try_from(self.count).map_err(|_| Error("a sequence over 2^32 items".into()))?;
        self.w.out[self.at..self.at + 4].copy_from_slice(&n.to_le_bytes());
        Ok(())
    }
}

impl ser::SerializeSeq for Counted<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        self.count += 1;
        self.item(v)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

impl ser::SerializeMap for Counted<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<()> {
        self.count += 1;
        self.item(k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        self.item(v)
    }
    fn end(self) -> Result<()> {
        self.finish()
    }
}

macro_rules! elements {
    ($($tr:ident :: $f:ident),*) => {$(
        impl ser::$tr for &mut Writer<'_> {
            type Ok = ();
            type Error = Error;
            fn $f<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                v.serialize(&mut **self)
            }
            fn end(self) -> Result<()> {
                Ok(())
            }
        }
    )*};
}

elements!(
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

macro_rules! fields {
    ($($tr:ident),*) => {$(
        impl ser::$tr for &mut Writer<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> Result<()> {
                put(self.out, &[1]);
                v.serialize(&mut **self)
            }
            fn skip_field(&mut self, _: &'static str) -> Result<()> {
                put(self.out, &[0]);
                Ok(())
            }
            fn end(self) -> Result<()> {
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

/// Reads one message from the front of `input`.
struct Reader<'de> {
    input: &'de [u8],
}

impl<'de> Reader<'de> {
    /// The next `n` bytes (one function for every read, like [`put`]).
    #[inline(never)]
    fn take(&mut self, n: usize) -> Result<&'de [u8]> {
        if self.input.len() < n {
            return Err(Error("the message ends too early".into()));
        }
        let (head, rest) = self.input.split_at(n);
        self.input = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn count(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn str(&mut self) -> Result<&'de str> {
        let n = self.count()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| Error("a string that is not UTF-8".into()))
    }
}

macro_rules! get_le {
    ($($f:ident: $t:ty => $visit:ident),*) => {$(
        fn $f<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
            v.$visit(<$t>::from_le_bytes(self.array()?))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Error;

    get_le!(deserialize_i8: i8 => visit_i8, deserialize_i16: i16 => visit_i16,
        deserialize_i32: i32 => visit_i32, deserialize_i64: i64 => visit_i64,
        deserialize_i128: i128 => visit_i128, deserialize_u8: u8 => visit_u8,
        deserialize_u16: u16 => visit_u16, deserialize_u32: u32 => visit_u32,
        deserialize_u64: u64 => visit_u64, deserialize_u128: u128 => visit_u128,
        deserialize_f32: f32 => visit_f32, deserialize_f64: f64 => visit_f64);

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Error("the binary messages do not say their types".into()))
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_bool(self.byte()? != 0)
    }
    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        let c = u32::from_le_bytes(self.array()?);
        v.visit_char(char::from_u32(c).ok_or_else(|| Error("not a char".into()))?)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_borrowed_str(self.str()?)
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_borrowed_str(self.str()?)
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        let n = self.count()?;
        v.visit_borrowed_bytes(self.take(n)?)
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.deserialize_bytes(v)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        match self.byte()? {
            0 => v.visit_none(),
            _ => v.visit_some(self),
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        v.visit_unit()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> Result<V::Value> {
        v.visit_unit()
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        let left = self.count()?;
        v.visit_seq(Items { r: self, left })
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value> {
        v.visit_seq(Items { r: self, left: len })
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value> {
        v.visit_seq(Items { r: self, left: len })
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        let left = self.count()?;
        v.visit_map(Items { r: self, left })
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        v.visit_seq(Fields {
            r: self,
            next: 0,
            count: fields.len(),
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        v.visit_enum(self)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        self.deserialize_u32(v)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Error("a field this reader does not know".into()))
    }
    fn is_human_readable(&self) -> bool {
        false
    }
}

/// The elements of a sequence, a tuple or a map (keys and values in turn).
struct Items<'a, 'de> {
    r: &'a mut Reader<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.r).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        // Never trusted for more than the bytes left (a damaged count must not allocate much).
        Some(self.left.min(self.r.input.len()))
    }
}

impl<'de> de::MapAccess<'de> for Items<'_, 'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.r).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.r)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.left.min(self.r.input.len()))
    }
}

/// A struct's fields in their declared order, read as a sequence: serde's derived `visit_seq` is
/// a fraction of the code of its `visit_map` (no field names, no duplicate checks), once per type.
/// A field left out (presence byte `0`) is a missing element, which the derived reader takes as
/// the field's `#[serde(default)]`: so every `skip_serializing_if` field has one
/// (`every_skipped_field_has_a_default` in the tests reads the sources).
struct Fields<'a, 'de> {
    r: &'a mut Reader<'de>,
    next: usize,
    count: usize,
}

impl<'de> de::SeqAccess<'de> for Fields<'_, 'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.next == self.count {
            return Err(Error("more fields read than the struct declares".into()));
        }
        self.next += 1;
        match self.r.byte()? {
            0 => Ok(None),
            _ => seed.deserialize(&mut *self.r).map(Some),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.count - self.next)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Reader<'de> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let index = u32::from_le_bytes(self.array()?);
        let value = seed.deserialize(IntoDeserializer::<Error>::into_deserializer(index))?;
        Ok((value, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Reader<'de> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value> {
        de::Deserializer::deserialize_tuple(self, len, v)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self, "", fields, v)
    }
}

/// A deserializer that only notes the variant names an enum asks for, then stops.
struct VariantNames<'a>(&'a mut &'static [&'static str]);

impl<'de> de::Deserializer<'de> for VariantNames<'_> {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value> {
        Err(Error("not an enum".into()))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value> {
        *self.0 = variants;
        Err(Error("names noted".into()))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
