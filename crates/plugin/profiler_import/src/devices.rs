//! The `devices` table: what a driver or profiler says about the devices measurements ran on.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::DEVICES;

/// One device's description; what a source does not give stays `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceRow {
    pub device: String,
    pub vendor: Option<String>,
    pub platform: Option<String>,
    pub driver_version: Option<String>,
    pub device_type: Option<String>,
    pub compute_units: Option<i64>,
    pub clock_mhz: Option<f64>,
    pub global_memory_bytes: Option<i64>,
    pub local_memory_bytes: Option<i64>,
    pub l2_cache_bytes: Option<i64>,
    pub max_work_group_size: Option<i64>,
    /// `(type, width)` pairs, written `char=16;float=16`.
    pub preferred_vector_widths: Vec<(String, i64)>,
    pub memory_bandwidth_bytes_per_sec: Option<f64>,
    /// Further properties, written `key=value;...` (a `;` or `=` inside a value becomes `,`).
    pub description: Vec<(String, String)>,
}

fn pairs(items: impl Iterator<Item = (String, String)>) -> Option<String> {
    let clean = |s: &str| s.replace([';', '='], ",");
    let text = items
        .map(|(k, v)| format!("{}={}", clean(&k), clean(&v)))
        .collect::<Vec<_>>()
        .join(";");
    (!text.is_empty()).then_some(text)
}

/// The `devices` batch of `rows`. Counts and sizes that are not positive are left null (a driver
/// reporting 0 for a size it does not know).
pub fn devices_batch(rows: &[DeviceRow]) -> Result<RecordBatch, PluginError> {
    let text = |f: &dyn Fn(&DeviceRow) -> Option<String>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let int = |f: &dyn Fn(&DeviceRow) -> Option<i64>| -> ArrayRef {
        Arc::new(
            rows.iter()
                .map(|r| f(r).filter(|v| *v > 0))
                .collect::<Int64Array>(),
        )
    };
    let float = |f: &dyn Fn(&DeviceRow) -> Option<f64>| -> ArrayRef {
        Arc::new(
            rows.iter()
                .map(|r| f(r).filter(|v| v.is_finite() && *v > 0.0))
                .collect::<Float64Array>(),
        )
    };
    Ok(DEVICES.batch(vec![
        text(&|r| Some(r.device.clone())),
        text(&|r| r.vendor.clone()),
        text(&|r| r.platform.clone()),
        text(&|r| r.driver_version.clone()),
        text(&|r| r.device_type.clone()),
        int(&|r| r.compute_units),
        float(&|r| r.clock_mhz),
        int(&|r| r.global_memory_bytes),
        int(&|r| r.local_memory_bytes),
        int(&|r| r.l2_cache_bytes),
        int(&|r| r.max_work_group_size),
        text(&|r| {
            pairs(
                r.preferred_vector_widths
                    .iter()
                    .map(|(t, w)| (t.clone(), w.to_string())),
            )
        }),
        float(&|r| r.memory_bandwidth_bytes_per_sec),
        text(&|r| pairs(r.description.iter().cloned())),
    ])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;

    #[test]
    fn unknown_sizes_are_null_and_pairs_are_joined() {
        let row = DeviceRow {
            device: "gpu".into(),
            compute_units: Some(0),
            preferred_vector_widths: vec![("char".into(), 16), ("float".into(), 4)],
            description: vec![("a".into(), "x;y=z".into())],
            ..DeviceRow::default()
        };
        let b = devices_batch(&[row]).unwrap();
        assert!(b.column_by_name("compute_units").unwrap().is_null(0));
        let widths = b.column_by_name("preferred_vector_widths").unwrap();
        assert_eq!(widths.as_string::<i32>().value(0), "char=16;float=4");
        let d = b.column_by_name("description").unwrap();
        assert_eq!(d.as_string::<i32>().value(0), "a=x,y,z");
    }
}
