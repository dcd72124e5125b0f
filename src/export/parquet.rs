//! The Parquet writer: the export's four column types written straight with parquet2 (what arrow2's own
//! Parquet writer uses underneath). arrow2's writer handles every arrow type and encoding, and that code
//! stays in the WebAssembly whatever is written (+276 kB gzip on the worker); this one is the little the
//! export needs: optional columns, plain encoding, V1 data pages of at most [`PAGE_ROWS`] rows, snappy
//! (pure Rust), no statistics, one row group per rank.

use std::io::Write;

use arrow2::array::{Array, BooleanArray, PrimitiveArray, Utf8Array};
use arrow2::chunk::Chunk;
use parquet2::compression::CompressionOptions;
use parquet2::encoding::hybrid_rle::encode_bool;
use parquet2::encoding::Encoding;
use parquet2::error::Error as ParquetError;
use parquet2::metadata::{Descriptor, SchemaDescriptor};
use parquet2::page::{DataPage, DataPageHeader, DataPageHeaderV1, Page};
use parquet2::schema::types::{
    FieldInfo, ParquetType, PhysicalType, PrimitiveConvertedType, PrimitiveLogicalType,
    PrimitiveType,
};
use parquet2::schema::Repetition;
use parquet2::write::{
    Compressor, DynIter, DynStreamingIterator, FileWriter, Version, WriteOptions,
};

use super::schema::{ColumnType, ExportColumn, ExportSchema};

/// Rows per data page (readers read a page at a time).
pub const PAGE_ROWS: usize = 1 << 16;

fn primitive_type(column: &ExportColumn) -> PrimitiveType {
    let (physical_type, converted_type, logical_type) = match column.ty {
        ColumnType::Int64 => (PhysicalType::Int64, None, None),
        ColumnType::Float64 => (PhysicalType::Double, None, None),
        ColumnType::Boolean => (PhysicalType::Boolean, None, None),
        ColumnType::Utf8 => (
            PhysicalType::ByteArray,
            Some(PrimitiveConvertedType::Utf8),
            Some(PrimitiveLogicalType::String),
        ),
    };
    PrimitiveType {
        field_info: FieldInfo {
            name: column.name.clone(),
            repetition: Repetition::Optional,
            id: None,
        },
        logical_type,
        converted_type,
        physical_type,
    }
}

fn schema_descriptor(schema: &ExportSchema) -> SchemaDescriptor {
    let fields = schema
        .columns
        .iter()
        .map(|c| ParquetType::PrimitiveType(primitive_type(c)))
        .collect();
    SchemaDescriptor::new("schema".to_string(), fields)
}

/// Definition levels of rows `rows` (1 valid, 0 null) as V1 writes them: a 4-byte length, then the
/// RLE/bit-packed hybrid of bit width 1.
fn push_def_levels(
    buffer: &mut Vec<u8>,
    array: &dyn Array,
    rows: std::ops::Range<usize>,
) -> Result<(), ParquetError> {
    buffer.extend_from_slice(&[0; 4]);
    let start = buffer.len();
    encode_bool(&mut *buffer, rows.map(|r| array.is_valid(r)))?;
    let length = (buffer.len() - start) as i32;
    buffer[start - 4..start].copy_from_slice(&length.to_le_bytes());
    Ok(())
}

/// The non-null values of rows `rows`, plain-encoded.
fn push_plain_values(buffer: &mut Vec<u8>, array: &dyn Array, rows: std::ops::Range<usize>) {
    let valid = rows.filter(|&r| array.is_valid(r));
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<PrimitiveArray<i64>>() {
        valid.for_each(|r| buffer.extend_from_slice(&a.value(r).to_le_bytes()));
    } else if let Some(a) = any.downcast_ref::<PrimitiveArray<f64>>() {
        valid.for_each(|r| buffer.extend_from_slice(&a.value(r).to_le_bytes()));
    } else if let Some(a) = any.downcast_ref::<Utf8Array<i32>>() {
        for r in valid {
            let v = a.value(r).as_bytes();
            buffer.extend_from_slice(&(v.len() as u32).to_le_bytes());
            buffer.extend_from_slice(v);
        }
    } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
        // Bit-packed, least significant bit first.
        let (mut byte, mut bits) = (0u8, 0);
        for r in valid {
            byte |= (a.value(r) as u8) << bits;
            bits += 1;
            if bits == 8 {
                buffer.push(byte);
                (byte, bits) = (0, 0);
            }
        }
        if bits > 0 {
            buffer.push(byte);
        }
    }
}

fn data_page(
    array: &dyn Array,
    rows: std::ops::Range<usize>,
    ty: &PrimitiveType,
) -> Result<Page, ParquetError> {
    let mut buffer = Vec::new();
    push_def_levels(&mut buffer, array, rows.clone())?;
    push_plain_values(&mut buffer, array, rows.clone());
    let header = DataPageHeader::V1(DataPageHeaderV1 {
        num_values: rows.len() as i32,
        encoding: Encoding::Plain.into(),
        definition_level_encoding: Encoding::Rle.into(),
        repetition_level_encoding: Encoding::Rle.into(),
        statistics: None,
    });
    let descriptor = Descriptor {
        primitive_type: ty.clone(),
        max_def_level: 1,
        max_rep_level: 0,
    };
    Ok(Page::Data(DataPage::new(
        header,
        buffer,
        descriptor,
        Some(rows.len()),
    )))
}

/// One column of one rank: its pages, made and compressed one at a time.
fn column_pages<'a>(
    array: &'a dyn Array,
    ty: PrimitiveType,
) -> DynStreamingIterator<'a, parquet2::page::CompressedPage, ParquetError> {
    let len = array.len();
    let pages = (0..len)
        .step_by(PAGE_ROWS)
        .map(move |start| data_page(array, start..(start + PAGE_ROWS).min(len), &ty));
    DynStreamingIterator::new(Compressor::new(
        DynIter::new(pages),
        CompressionOptions::Snappy,
        Vec::new(),
    ))
}

/// Writes a Parquet file of `chunks` (one row group each) in `schema`'s columns.
pub fn write<E: From<ParquetError>>(
    schema: &ExportSchema,
    chunks: impl Iterator<Item = Result<Chunk<Box<dyn Array>>, E>>,
    out: &mut dyn Write,
) -> Result<(), E> {
    let descriptor = schema_descriptor(schema);
    let types: Vec<PrimitiveType> = schema.columns.iter().map(primitive_type).collect();
    let options = WriteOptions {
        write_statistics: false,
        version: Version::V1,
    };
    let created_by = Some(format!("profile-model {}", env!("CARGO_PKG_VERSION")));
    let mut writer = FileWriter::new(out, descriptor, options, created_by);
    for chunk in chunks {
        let chunk = chunk?;
        let columns = chunk
            .arrays()
            .iter()
            .zip(&types)
            .map(|(array, ty)| Ok(column_pages(array.as_ref(), ty.clone())));
        writer.write(DynIter::new(columns))?;
    }
    writer.end(None)?;
    Ok(())
}
