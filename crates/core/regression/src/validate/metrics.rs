//! Error metrics of predictions against measurements, and rows too small to score.

use faer::MatRef;

/// Error metrics of predictions against actual values.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub n: usize,
    pub mean_abs_pct: f64,
    pub median_abs_pct: f64,
    pub max_abs_pct: f64,
    /// 1 - SSE / SST of the predictions.
    pub r2: f64,
    pub rmse: f64,
    /// Mean of predicted / actual.
    pub mean_ratio: f64,
}

pub fn metrics(actual: &[f64], predicted: &[f64]) -> Metrics {
    let n = actual.len();
    let mut pct: Vec<f64> = actual
        .iter()
        .zip(predicted)
        .map(|(a, p)| 100.0 * (p - a).abs() / a.abs())
        .collect();
    // Summed in row order; the median and the maximum by selection, not a sort (a
    // cross-validation takes these metrics thousands of times).
    let mean_abs_pct = pct.iter().sum::<f64>() / n as f64;
    let max_abs_pct = pct
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(f64::NAN);
    let median = crate::pmnf::median_by_selection(&mut pct);
    let mean_actual = actual.iter().sum::<f64>() / n as f64;
    let sse: f64 = actual
        .iter()
        .zip(predicted)
        .map(|(a, p)| (a - p).powi(2))
        .sum();
    let sst: f64 = actual.iter().map(|a| (a - mean_actual).powi(2)).sum();
    Metrics {
        n,
        mean_abs_pct,
        median_abs_pct: median,
        max_abs_pct,
        r2: if sst > 0.0 { 1.0 - sse / sst } else { f64::NAN },
        rmse: (sse / n as f64).sqrt(),
        mean_ratio: actual
            .iter()
            .zip(predicted)
            .map(|(a, p)| p / a)
            .sum::<f64>()
            / n as f64,
    }
}

/// Rows whose counters are far smaller than the rest (the paper's Sobel and Dwt failures, whose
/// counters were 1/25000 of the mean): the median, over the columns that are raw counts (no
/// negative value, a positive mean), of the row's value over the column's mean is below
/// `threshold` (e.g. 1e-3). A column with negative values (standardised, centred) says nothing
/// of size and is not used; a table with no raw column flags no row.
pub fn tiny_rows(x: MatRef<'_, f64>, threshold: f64) -> Vec<bool> {
    let columns: Vec<std::borrow::Cow<'_, [f64]>> =
        (0..x.ncols()).map(|j| crate::ols::column(x, j)).collect();
    let columns: Vec<&[f64]> = columns.iter().map(|c| &**c).collect();
    tiny_rows_of_columns(&columns, x.nrows(), threshold)
}

/// [`tiny_rows`] of `n` rows given as columns.
pub fn tiny_rows_of_columns(columns: &[&[f64]], n: usize, threshold: f64) -> Vec<bool> {
    let usable: Vec<(&[f64], f64)> = columns
        .iter()
        .filter_map(|&column| {
            if n == 0 || column.iter().any(|&v| v < 0.0) {
                return None;
            }
            let mean = column.iter().sum::<f64>() / n as f64;
            (mean > 0.0).then_some((column, mean))
        })
        .collect();
    if usable.is_empty() {
        return vec![false; n];
    }
    // The median ratio by selection, in one buffer reused from row to row.
    let mut ratios: Vec<f64> = Vec::with_capacity(usable.len());
    (0..n)
        .map(|i| {
            ratios.clear();
            ratios.extend(usable.iter().map(|&(column, m)| column[i] / m));
            let middle = ratios.len() / 2;
            *ratios.select_nth_unstable_by(middle, f64::total_cmp).1 < threshold
        })
        .collect()
}
