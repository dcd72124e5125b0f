//! Stable text of field-less enums: the serde name (set by `#[serde(rename_all = ...)]`) is the only
//! place a variant's text is written; [`stable_enum!`](crate::stable_enum) adds `ALL`, `as_str`,
//! `parse` and `Display` from it.

use serde::de::value::{BorrowedStrDeserializer, Error as DeError};
use serde::de::Deserialize;
use serde::ser::{self, Impossible, Serialize, Serializer};

/// The serde name of a unit variant (what `serde_json` would write, without the quotes).
///
/// Panics when `value` does not serialise as a unit variant: only [`stable_enum!`](crate::stable_enum)
/// enums call it, and those are field-less by construction.
pub fn serde_name<T: Serialize>(value: &T) -> &'static str {
    value
        .serialize(VariantName)
        .expect("a stable_enum! serialises as a unit variant")
}

/// The variant whose serde name is `text`, if any.
pub fn from_serde_name<'de, T: Deserialize<'de>>(text: &'de str) -> Option<T> {
    T::deserialize(BorrowedStrDeserializer::<DeError>::new(text)).ok()
}

/// Declares a field-less enum (attributes, doc comments and discriminants as written) and gives it,
/// from its serde names: `ALL` (every variant in declaration order), `as_str` (the serde name),
/// `parse` (the variant of a serde name) and `Display` (the serde name, honouring width and fill).
#[macro_export]
macro_rules! stable_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident {
            $( $(#[$vmeta:meta])* $variant:ident $(= $disc:expr)? ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $( $(#[$vmeta])* $variant $(= $disc)? ),*
        }

        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: [$ty; [$(stringify!($variant)),*].len()] = [$($ty::$variant),*];

            /// The stable text (the serde name).
            pub fn as_str(self) -> &'static str {
                $crate::stable_name::serde_name(&self)
            }

            /// The variant of a stable text ([`Self::as_str`]), if any.
            pub fn parse(text: &str) -> Option<$ty> {
                $crate::stable_name::from_serde_name(text)
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

/// What [`VariantName`] reports for anything but a unit variant.
#[derive(Debug)]
pub struct NotAUnitVariant;

impl std::fmt::Display for NotAUnitVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a unit variant")
    }
}

impl std::error::Error for NotAUnitVariant {}

impl ser::Error for NotAUnitVariant {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        NotAUnitVariant
    }
}

/// A serializer that accepts only a unit variant and returns its (renamed) name.
struct VariantName;

type Never = Impossible<&'static str, NotAUnitVariant>;

/// Serializer methods that refuse their value.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, NotAUnitVariant> {
            Err(NotAUnitVariant)
        })*
    };
}

impl Serializer for VariantName {
    type Ok = &'static str;
    type Error = NotAUnitVariant;
    type SerializeSeq = Never;
    type SerializeTuple = Never;
    type SerializeTupleStruct = Never;
    type SerializeTupleVariant = Never;
    type SerializeMap = Never;
    type SerializeStruct = Never;
    type SerializeStructVariant = Never;

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<&'static str, NotAUnitVariant> {
        Ok(variant)
    }

    refuse! {
        serialize_bool(bool) -> &'static str;
        serialize_i8(i8) -> &'static str;
        serialize_i16(i16) -> &'static str;
        serialize_i32(i32) -> &'static str;
        serialize_i64(i64) -> &'static str;
        serialize_u8(u8) -> &'static str;
        serialize_u16(u16) -> &'static str;
        serialize_u32(u32) -> &'static str;
        serialize_u64(u64) -> &'static str;
        serialize_f32(f32) -> &'static str;
        serialize_f64(f64) -> &'static str;
        serialize_char(char) -> &'static str;
        serialize_str(&str) -> &'static str;
        serialize_bytes(&[u8]) -> &'static str;
        serialize_none() -> &'static str;
        serialize_unit() -> &'static str;
        serialize_unit_struct(&'static str) -> &'static str;
        serialize_seq(Option<usize>) -> Never;
        serialize_tuple(usize) -> Never;
        serialize_tuple_struct(&'static str, usize) -> Never;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Never;
        serialize_map(Option<usize>) -> Never;
        serialize_struct(&'static str, usize) -> Never;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Never;
    }

    fn serialize_some<V: ?Sized + Serialize>(self, _: &V) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_newtype_struct<V: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &V,
    ) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }

    fn serialize_newtype_variant<V: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<&'static str, NotAUnitVariant> {
        Err(NotAUnitVariant)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    crate::stable_enum! {
        /// A test enum.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Colour {
            /// Doc on a variant.
            DeepRed,
            Blue,
        }
    }

    #[test]
    fn text_is_the_serde_name() {
        for c in Colour::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(Colour::parse(c.as_str()), Some(c));
        }
        assert_eq!(Colour::DeepRed.as_str(), "deep_red");
        assert_eq!(Colour::ALL, [Colour::DeepRed, Colour::Blue]);
        assert_eq!(Colour::parse("DeepRed"), None);
        assert_eq!(Colour::parse(""), None);
        assert_eq!(format!("[{:<6}]", Colour::Blue), "[blue  ]");
    }
}
