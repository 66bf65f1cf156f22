//! Launch times summarised as the `kernel_timings` table summarises them (the runners: `opencl`'s
//! suite, `cuda`'s calibration).

/// Median, minimum, maximum, and coefficient of variation (sample standard deviation / mean).
pub fn statistics(values: &[f64]) -> (f64, f64, f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let mean = values.iter().sum::<f64>() / n as f64;
    let cv = if n > 1 && mean > 0.0 {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        var.sqrt() / mean
    } else {
        0.0
    };
    (median, sorted[0], sorted[n - 1], cv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_of_launch_times() {
        let (median, min, max, cv) = statistics(&[3.0, 1.0, 2.0, 4.0]);
        assert_eq!((median, min, max), (2.5, 1.0, 4.0));
        // mean 2.5, sample variance 5/3
        assert!((cv - (5.0f64 / 3.0).sqrt() / 2.5).abs() < 1e-15);
        assert_eq!(statistics(&[7.0]).3, 0.0);
    }
}
