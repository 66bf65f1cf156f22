//! What the transfer family's step kinds share: their `published` figures, the default
//! interval level, the grouping of operators, the check of launches described by their work, and
//! the lookup of the GPUs `on` names.

use yosoku_models::transfer::work_forecast::WorkLaunch;

use super::super::counters::PublishedSpec;
use super::super::step::{ParamError, StepError};

/// `launches`, checked: at least one; every count and amount a finite number at least its least
/// (blocks and threads 1, work 0, dependent steps 1); some work in each.
pub(super) fn check_launches(launches: &[WorkLaunch]) -> Result<(), ParamError> {
    if launches.is_empty() {
        return Err(ParamError::new(
            "launches",
            "`launches`: describe at least one launch",
        ));
    }
    for (i, l) in launches.iter().enumerate() {
        let fields = [
            ("blocks", Some(l.blocks), 1.0),
            ("threads_per_block", Some(l.threads_per_block), 1.0),
            ("flops", Some(l.flops), 0.0),
            ("dram_bytes", Some(l.dram_bytes), 0.0),
            ("moved_bytes", l.moved_bytes, 0.0),
            ("dependent_steps", l.dependent_steps, 1.0),
            ("dram_round_trips", l.dram_round_trips, 1.0),
        ];
        for (name, value, least) in fields {
            let Some(value) = value else { continue };
            if !value.is_finite() || value < least {
                return Err(ParamError::new(
                    "launches",
                    format!(
                        "launch {} ({} {}): `{name}` is {value}; expected a number >= {least}",
                        i + 1,
                        l.program,
                        l.variant
                    ),
                ));
            }
        }
        if l.flops == 0.0 && l.dram_bytes == 0.0 {
            return Err(ParamError::new(
                "launches",
                format!(
                    "launch {} ({} {}): no FLOPs and no DRAM bytes: a launch that does no work has no roofline",
                    i + 1,
                    l.program,
                    l.variant
                ),
            ));
        }
    }
    Ok(())
}

/// The `published` figures of a step scored by mean |error|: (row, value), each with its value.
pub(super) fn mean_error_anchors(
    published: &[PublishedSpec],
) -> Result<Vec<(String, f64)>, ParamError> {
    published
        .iter()
        .map(|p| {
            p.value.map(|v| (p.row.clone(), v)).ok_or_else(|| {
                ParamError::new(
                    "published",
                    format!(
                        "published figure `{}`: give its `value` (mean |error| in %)",
                        p.row
                    ),
                )
            })
        })
        .collect()
}

pub(super) fn default_level() -> f64 {
    0.95
}

/// The device a step's `on` names as `name`, from `devices`; an error naming the closest
/// entries where the catalogue has none.
pub(super) fn on_device<'c>(
    devices: &'c yosoku_devices::Catalogue,
    name: &str,
) -> Result<&'c yosoku_devices::Device, StepError> {
    devices.find(name).ok_or_else(|| {
        StepError::Invalid(format!(
            "`on`: `{name}` is not in the device catalogue (closest: {})",
            devices.closest(name, 3).join(", ")
        ))
    })
}
