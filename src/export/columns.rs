//! One rank's plain typed columns ([`super::plain`]) as arrow arrays: what the Arrow IPC, Parquet and
//! CSV writers and the SQL tab's streams write.

use arrow2::array::{Array, BooleanArray, MutableArray, MutableUtf8Array, PrimitiveArray, TryPush};
use arrow2::chunk::Chunk;

use super::plain::{plain_rank, PlainValues};
use super::schema::ExportSchema;
use crate::table::RankTrace;

/// One column as an arrow array. Fails only when a rank's text in one column passes 2 GiB (Utf8's
/// 32-bit offsets).
fn to_array(values: &PlainValues) -> Result<Box<dyn Array>, String> {
    Ok(match values {
        PlainValues::Int(v) => PrimitiveArray::<i64>::from_iter(v.iter().copied()).boxed(),
        PlainValues::Float(v) => PrimitiveArray::<f64>::from_iter(v.iter().copied()).boxed(),
        PlainValues::Bool(v) => BooleanArray::from_iter(v.iter().copied()).boxed(),
        PlainValues::Text(v) => {
            let mut texts = MutableUtf8Array::<i32>::with_capacity(v.len());
            for t in v {
                texts
                    .try_push(t.as_deref())
                    .map_err(|e| format!("a text column passes 2 GiB in one rank: {e}"))?;
            }
            texts.as_box()
        }
    })
}

/// One rank's plain columns as a chunk.
pub fn plain_chunk(columns: &[PlainValues]) -> Result<Chunk<Box<dyn Array>>, String> {
    let arrays = columns
        .iter()
        .map(to_array)
        .collect::<Result<Vec<_>, _>>()?;
    Chunk::try_new(arrays).map_err(|e| e.to_string())
}

/// One rank's rows in the schema's columns.
pub fn rank_chunk(
    schema: &ExportSchema,
    rank: &RankTrace,
) -> Result<Chunk<Box<dyn Array>>, String> {
    plain_chunk(&plain_rank(schema, rank))
}
