//! Scoring a forecast made before the measurement: per model, kernel and input size, the
//! median forecast time of one launch against the median measured time of one launch, and
//! whether the measured median lies inside the median forecast interval (docs/methods.md,
//! section 6; the rule was fixed with the forecast, in its bundle's SOURCES.md).

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use yosoku_devices::Catalogue;
use yosoku_tables::rows::{PredictionRow, error_pct, predictions_batch, read_predictions};
use yosoku_tables::{RUNS, col};

use crate::compare::FLAG_UNMEASURED;
use crate::{Input, ModelError, median};

/// Flag of a (kernel, size) whose measured median lies outside the forecast's median interval.
pub const FLAG_OUTSIDE_INTERVAL: &str = "outside_interval";

/// What the validation column says of a scored row.
pub const VALIDATION_FORECAST: &str = "forecast made before the measurement";

/// One model's score over the (kernel, size) pairs of a forecast, or over one kernel's sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelScore {
    pub model: String,
    /// The kernel (program) the score is of; `None`: every kernel of the forecast.
    pub kernel: Option<String>,
    /// The band of measured durations the score is of (one of
    /// [`DURATION_BANDS`](super::split::DURATION_BANDS), every kernel's sizes measured in it);
    /// `None`: every duration.
    pub band: Option<&'static str>,
    /// The pairs the forecast has, and how many of them were measured.
    pub pairs: usize,
    pub measured_pairs: usize,
    /// Median and mean |error|, and the median signed error (its sign: over or under the
    /// measurement), in percent over the measured pairs.
    pub median_abs_error_pct: Option<f64>,
    pub median_error_pct: Option<f64>,
    pub mean_abs_error_pct: Option<f64>,
    /// Measured pairs with a forecast interval, and how many of those hold the measured median.
    pub with_interval: usize,
    pub inside_interval: usize,
}

/// The scored forecast: one `predictions` row per model, kernel and size (the medians, the
/// error, the median interval; flagged `unmeasured` or `outside_interval`), and each model's
/// score over every kernel, then per kernel (in the order of the model, the kernel).
#[derive(Debug, Clone)]
pub struct ForecastScore {
    pub predictions: RecordBatch,
    pub scores: Vec<ModelScore>,
}

impl ModelScore {
    fn new(model: &str, kernel: Option<String>, band: Option<&'static str>) -> Self {
        Self {
            model: model.to_owned(),
            kernel,
            band,
            pairs: 0,
            measured_pairs: 0,
            median_abs_error_pct: None,
            median_error_pct: None,
            mean_abs_error_pct: None,
            with_interval: 0,
            inside_interval: 0,
        }
    }
}

/// Four texts launches are grouped by: (model or device, program, variant, phase).
type LaunchKey = (String, String, String, String);

/// A forecast's rows of one model, kernel and size, per launch.
#[derive(Default)]
struct Group {
    device: String,
    predicted: Vec<f64>,
    low: Vec<f64>,
    high: Vec<f64>,
}

/// The forecast's rows of one device grouped by (model, program, variant, phase), each time per
/// launch, each device by its catalogue name (`canonical`). The device is `device`, or the one
/// device the forecast is for; a forecast of several devices must be told which.
fn forecast_groups(
    forecast: &RecordBatch,
    canonical: &dyn Fn(&str) -> String,
    device: Option<&str>,
) -> Result<BTreeMap<LaunchKey, Group>, ModelError> {
    let rows = read_predictions("forecast", forecast)?;
    if rows.is_empty() {
        return Err(ModelError::invalid(
            "input `forecast` has no rows: nothing was forecast",
        ));
    }
    let mut forecast_devices: Vec<String> = rows.iter().map(|p| canonical(&p.device)).collect();
    forecast_devices.sort_unstable();
    forecast_devices.dedup();
    let scored = match device {
        Some(d) if forecast_devices.contains(&canonical(d)) => canonical(d),
        Some(d) => {
            return Err(ModelError::invalid(format!(
                "`device = \"{d}\"`: the forecast has no launch on it; it is for {}",
                forecast_devices.join(", ")
            )));
        }
        None if forecast_devices.len() == 1 => forecast_devices.remove(0),
        None => {
            return Err(ModelError::invalid(format!(
                "the forecast is for {}: name the device that was measured (`device = \"...\"`)",
                forecast_devices.join(", ")
            )));
        }
    };
    let mut groups: BTreeMap<LaunchKey, Group> = BTreeMap::new();
    for p in rows.iter().filter(|p| canonical(&p.device) == scored) {
        if p.repetitions < 1 {
            return Err(ModelError::invalid(format!(
                "input `forecast`: the row for {} {} has {} repetitions",
                p.program, p.variant, p.repetitions
            )));
        }
        let per_launch = p.repetitions as f64;
        let g = groups
            .entry((
                p.model.clone(),
                p.program.clone(),
                p.variant.clone(),
                p.phase.clone(),
            ))
            .or_default();
        g.device = canonical(&p.device);
        g.predicted.push(p.predicted_secs / per_launch);
        if let Some((lo, hi)) = p.interval_secs {
            g.low.push(lo / per_launch);
            g.high.push(hi / per_launch);
        }
    }
    Ok(groups)
}

/// Measurements of other devices than the forecast's are an error: a forecast is scored on the
/// device it is for.
fn check_same_devices(
    groups: &BTreeMap<LaunchKey, Group>,
    runs: &BTreeMap<LaunchKey, f64>,
) -> Result<(), ModelError> {
    let mut devices: Vec<&str> = groups.values().map(|g| g.device.as_str()).collect();
    devices.sort_unstable();
    devices.dedup();
    if runs.is_empty() || runs.keys().any(|(d, ..)| devices.contains(&d.as_str())) {
        return Ok(());
    }
    let mut measured_devices: Vec<&str> = runs.keys().map(|(d, ..)| d.as_str()).collect();
    measured_devices.dedup();
    Err(ModelError::invalid(format!(
        "the forecast is for {}, but the measured runs are of {}: score a forecast against measurements on the device it is for",
        devices.join(", "),
        measured_devices.join(", ")
    )))
}

/// Each model's score so far, over every kernel, per kernel and per band of measured durations,
/// with its signed errors.
type Scores = BTreeMap<(String, Option<String>, Option<&'static str>), (ModelScore, Vec<f64>)>;

/// The band of [`DURATION_BANDS`](super::split::DURATION_BANDS) a measured time lies in.
fn duration_band(secs: f64) -> Option<&'static str> {
    super::split::DURATION_BANDS
        .iter()
        .find(|(_, from, to)| secs >= *from && secs < *to)
        .map(|(name, ..)| *name)
}

/// One scored (model, kernel, size): its `predictions` row, counted into `scores`.
fn scored_row(
    (model, program, variant, phase): LaunchKey,
    mut g: Group,
    measured: Option<f64>,
    scores: &mut Scores,
) -> PredictionRow {
    let predicted = median(&mut g.predicted);
    let interval = (!g.low.is_empty()).then(|| (median(&mut g.low), median(&mut g.high)));
    let error_pct = measured.map(|m| error_pct(predicted, m));
    let inside = match (measured, interval) {
        (Some(m), Some((lo, hi))) => Some((lo..=hi).contains(&m)),
        _ => None,
    };
    let mut scopes = vec![(None, None), (Some(program.clone()), None)];
    if let Some(band) = measured.and_then(duration_band) {
        scopes.push((None, Some(band)));
    }
    for (kernel, band) in scopes {
        let (score, errors) = scores
            .entry((model.clone(), kernel.clone(), band))
            .or_insert_with(|| (ModelScore::new(&model, kernel, band), Vec::new()));
        score.pairs += 1;
        if let Some(inside) = inside {
            score.with_interval += 1;
            score.inside_interval += usize::from(inside);
        }
        if let Some(e) = error_pct {
            score.measured_pairs += 1;
            errors.push(e);
        }
    }
    let mut flags = Vec::new();
    if measured.is_none() {
        flags.push(FLAG_UNMEASURED);
    }
    if inside == Some(false) {
        flags.push(FLAG_OUTSIDE_INTERVAL);
    }
    PredictionRow {
        model,
        device: g.device,
        program,
        variant,
        phase,
        repetitions: 1,
        predicted_secs: predicted,
        measured_secs: measured,
        error_pct,
        flags: (!flags.is_empty()).then(|| flags.join(",")),
        run_id: None,
        model_group: None,
        validation: Some(VALIDATION_FORECAST.to_owned()),
        held_out: None,
        interval_secs: interval,
    }
}

/// Scores `forecast` (a `predictions` table without measurements: one row per model and
/// forecast launch) against `measured` (`runs` of the same kernels on the forecast's device).
/// Times are per launch (divided by their repetitions). Forecast rows are matched with runs of
/// the same device, program (kernel), variant (input size) and phase; device names are compared
/// by the catalogue's name of the device they name (`TitanX` is the `GeForce GTX TITAN X`).
/// A forecast of several devices is scored on `device` alone (which it must then name).
pub fn score_forecast(
    forecast: &RecordBatch,
    measured: &RecordBatch,
    devices: &Catalogue,
    device: Option<&str>,
) -> Result<ForecastScore, ModelError> {
    let canonical = |name: &str| {
        devices
            .find(name)
            .map_or_else(|| name.to_owned(), |d| d.name.clone())
    };
    let groups = forecast_groups(forecast, &canonical, device)?;
    let runs = measured_medians(measured, &canonical)?;
    check_same_devices(&groups, &runs)?;
    let mut scores: Scores = BTreeMap::new();
    let mut out = Vec::new();
    for (key, g) in groups {
        let measured = runs
            .get(&(
                g.device.clone(),
                key.1.clone(),
                key.2.clone(),
                key.3.clone(),
            ))
            .copied();
        out.push(scored_row(key, g, measured, &mut scores));
    }
    let scores = scores
        .into_values()
        .map(|(mut s, mut errors)| {
            if !errors.is_empty() {
                let mut abs: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
                s.mean_abs_error_pct = Some(abs.iter().sum::<f64>() / abs.len() as f64);
                s.median_abs_error_pct = Some(median(&mut abs));
                s.median_error_pct = Some(median(&mut errors));
            }
            s
        })
        .collect();
    Ok(ForecastScore {
        predictions: predictions_batch(&out)?,
        scores,
    })
}

/// (device, program, variant, phase) -> the median measured time of one launch.
fn measured_medians(
    measured: &RecordBatch,
    canonical: &dyn Fn(&str) -> String,
) -> Result<BTreeMap<LaunchKey, f64>, ModelError> {
    let runs = Input::new("measured", &RUNS, measured)?;
    let device = runs.utf8(col::DEVICE)?;
    let program = runs.utf8(col::PROGRAM)?;
    let variant = runs.utf8(col::VARIANT)?;
    let phase = runs.utf8(col::PHASE)?;
    let repetitions = runs.int64(col::REPETITIONS)?;
    let secs = runs.float64(col::MEASURED_SECS)?;
    let mut times: BTreeMap<LaunchKey, Vec<f64>> = BTreeMap::new();
    for i in 0..runs.rows() {
        let r = repetitions.value(i);
        if r < 1 {
            return Err(ModelError::invalid(format!(
                "input `measured`: row {i} has {r} repetitions"
            )));
        }
        times
            .entry((
                canonical(device.value(i)),
                program.value(i).to_owned(),
                variant.value(i).to_owned(),
                phase.value(i).to_owned(),
            ))
            .or_default()
            .push(secs.value(i) / r as f64);
    }
    Ok(times
        .into_iter()
        .map(|(k, mut v)| (k, median(&mut v)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::runs;

    fn forecast_row(model: &str, variant: &str, secs: f64, interval: (f64, f64)) -> PredictionRow {
        PredictionRow {
            model: model.into(),
            device: "H100".into(),
            program: "p".into(),
            variant: variant.into(),
            phase: "kernel".into(),
            repetitions: 1,
            predicted_secs: secs,
            measured_secs: None,
            error_pct: None,
            flags: None,
            run_id: None,
            model_group: None,
            validation: Some("forecast".into()),
            held_out: None,
            interval_secs: Some(interval),
        }
    }

    /// Two sizes forecast by two models, three launches each; one size measured three times:
    /// medians against medians, the interval of the medians, the unmeasured size flagged.
    #[test]
    fn medians_against_medians_per_kernel_and_size() {
        let forecast = predictions_batch(&[
            forecast_row("transfer", "64", 1.0, (0.5, 2.0)),
            forecast_row("transfer", "64", 3.0, (1.5, 6.0)),
            forecast_row("transfer", "64", 2.0, (1.0, 4.0)),
            forecast_row("transfer", "128", 4.0, (2.0, 8.0)),
            forecast_row("wave", "64", 1.0, (0.9, 1.1)),
            forecast_row("wave", "64", 1.0, (0.9, 1.1)),
        ])
        .unwrap();
        // Three runs of size 64 (the fixture's run id is the variant: the three differ only in
        // it, so the size is spelled alike after trimming).
        let measured = runs(&[
            ("H100", "64", "kernel", 1, 1.0),
            ("H100", "64", "kernel", 2, 3.0),
            ("H100", "64", "kernel", 1, 1.6),
        ]);
        let s = score_forecast(&forecast, &measured, &Catalogue::default(), None).unwrap();
        let rows = read_predictions("p", &s.predictions).unwrap();
        let at = |model: &str, variant: &str| {
            rows.iter()
                .find(|r| r.model == model && r.variant == variant)
                .unwrap()
        };
        // Medians of 1, 3, 2 and of 1.0, 1.5 (3 s over 2 launches), 1.6.
        let t = at("transfer", "64");
        assert_eq!((t.predicted_secs, t.measured_secs), (2.0, Some(1.5)));
        assert!((t.error_pct.unwrap() - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(t.interval_secs, Some((1.0, 4.0)));
        assert_eq!(t.flags, None);
        assert_eq!(at("transfer", "128").flags.as_deref(), Some("unmeasured"));
        assert_eq!(at("wave", "64").flags.as_deref(), Some("outside_interval"));
        let score = |model: &str, kernel: Option<&str>| {
            s.scores
                .iter()
                .find(|x| x.model == model && x.kernel.as_deref() == kernel)
                .unwrap()
        };
        let transfer = score("transfer", None);
        // Over every kernel, over the band of the measured durations (1.5 s: over 100 us), then
        // per kernel: one kernel here, so the same score.
        let over = Some("over 100 us");
        assert_eq!(
            s.scores
                .iter()
                .map(|x| (x.kernel.as_deref(), x.band))
                .collect::<Vec<_>>(),
            [
                (None, None),
                (None, over),
                (Some("p"), None),
                (None, None),
                (None, over),
                (Some("p"), None)
            ]
        );
        let band = s.scores.iter().find(|x| x.band.is_some()).unwrap();
        assert_eq!(
            (band.measured_pairs, band.median_abs_error_pct),
            (1, transfer.median_abs_error_pct)
        );
        assert_eq!(duration_band(4e-6), Some("under 10 us"));
        assert_eq!(duration_band(1e-5), Some("10 to 100 us"));
        assert_eq!(
            score("transfer", Some("p")).median_abs_error_pct,
            transfer.median_abs_error_pct
        );
        assert_eq!(
            (
                transfer.pairs,
                transfer.measured_pairs,
                transfer.with_interval
            ),
            (2, 1, 1)
        );
        assert_eq!(transfer.inside_interval, 1);
        let wave = score("wave", None);
        assert_eq!((wave.model.as_str(), wave.inside_interval), ("wave", 0));
        assert!((wave.median_abs_error_pct.unwrap() - 100.0 / 3.0).abs() < 1e-9);
        // 1 s forecast, 1.5 s measured: under by a third, the sign kept.
        assert!((wave.median_error_pct.unwrap() + 100.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn measurements_of_another_device_are_refused() {
        let forecast = predictions_batch(&[forecast_row("t", "64", 1.0, (0.5, 2.0))]).unwrap();
        let measured = runs(&[("H200", "64", "kernel", 1, 1.0)]);
        let none = Catalogue::default();
        let e = score_forecast(&forecast, &measured, &none, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the forecast is for H100, but the measured runs are of H200"),
            "{e}"
        );
        // The catalogue's names: a measurement on `TitanX` is one on the GeForce GTX TITAN X.
        let catalogue = Catalogue::built_in().unwrap();
        let mut titan = forecast_row("t", "64", 1.0, (0.5, 2.0));
        titan.device = "GeForce GTX TITAN X".into();
        let forecast = predictions_batch(&[titan]).unwrap();
        let measured = runs(&[("TitanX", "64", "kernel", 1, 1.5)]);
        let s = score_forecast(&forecast, &measured, &catalogue, None).unwrap();
        assert_eq!(s.scores[0].measured_pairs, 1);
        let empty = predictions_batch(&[]).unwrap();
        let e = score_forecast(&empty, &measured, &none, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing was forecast"), "{e}");
    }

    /// A forecast of two devices is scored on the one named, the other's rows left out; with
    /// none named, or one it has no launch on, it is refused, naming its devices.
    #[test]
    fn a_forecast_of_two_devices_is_scored_on_the_one_named() {
        let mut h200 = forecast_row("t", "64", 4.0, (2.0, 8.0));
        h200.device = "H200".into();
        let forecast = predictions_batch(&[
            forecast_row("t", "64", 1.0, (0.5, 2.0)),
            forecast_row("t", "128", 2.0, (1.0, 4.0)),
            h200,
        ])
        .unwrap();
        let measured = runs(&[("H200", "64", "kernel", 1, 2.0)]);
        let none = Catalogue::default();
        let s = score_forecast(&forecast, &measured, &none, Some("H200")).unwrap();
        let rows = read_predictions("p", &s.predictions).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].device.as_str(), rows[0].error_pct),
            ("H200", Some(100.0))
        );
        let e = score_forecast(&forecast, &measured, &none, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the forecast is for H100, H200: name the device that was measured"),
            "{e}"
        );
        let e = score_forecast(&forecast, &measured, &none, Some("A100"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "`device = \"A100\"`: the forecast has no launch on it; it is for H100, H200"
            ),
            "{e}"
        );
    }
}
