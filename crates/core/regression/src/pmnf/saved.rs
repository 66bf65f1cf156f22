//! The saved form of numbers that may not be finite: JSON has no NaN or infinity (serde_json
//! writes `null` and cannot read it back as a number), so a fitted model's residual variance
//! with no degrees of freedom, or the covariance of a singular fit, is written as the string
//! `"NaN"`, `"inf"` or `"-inf"` and read back as that value; every finite number is a JSON
//! number, as written.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Number {
    Finite(f64),
    Text(String),
}

impl Number {
    fn of(x: f64) -> Self {
        if x.is_finite() {
            Number::Finite(x)
        } else if x.is_nan() {
            Number::Text("NaN".to_owned())
        } else if x > 0.0 {
            Number::Text("inf".to_owned())
        } else {
            Number::Text("-inf".to_owned())
        }
    }

    fn value<E: de::Error>(self) -> Result<f64, E> {
        match self {
            Number::Finite(x) => Ok(x),
            Number::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(E::custom(format!(
                    "`{other}`: expected a number, \"NaN\", \"inf\" or \"-inf\""
                ))),
            },
        }
    }
}

/// One number (`#[serde(with = "saved::number")]`).
pub mod number {
    use super::*;

    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        Number::of(*x).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Number::deserialize(d)?.value()
    }
}

/// A list of numbers (`#[serde(with = "saved::numbers")]`).
pub mod numbers {
    use super::*;

    pub fn serialize<S: Serializer>(xs: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(xs.iter().map(|x| Number::of(*x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Vec::<Number>::deserialize(d)?
            .into_iter()
            .map(Number::value)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[derive(Debug, serde::Serialize, serde::Deserialize)]
    struct Saved {
        #[serde(with = "super::number")]
        one: f64,
        #[serde(with = "super::numbers")]
        many: Vec<f64>,
    }

    #[test]
    fn numbers_that_are_not_finite_come_back_as_they_were() {
        let saved = Saved {
            one: f64::NAN,
            many: vec![1.5e-300, f64::INFINITY, f64::NEG_INFINITY, 0.1 + 0.2],
        };
        let text = serde_json::to_string(&saved).unwrap();
        assert_eq!(
            text,
            r#"{"one":"NaN","many":[1.5e-300,"inf","-inf",0.30000000000000004]}"#
        );
        let back: Saved = serde_json::from_str(&text).unwrap();
        assert!(back.one.is_nan());
        assert_eq!(back.many[..3], saved.many[..3]);
        assert_eq!(back.many[3].to_bits(), saved.many[3].to_bits());
        let e = serde_json::from_str::<Saved>(r#"{"one":"many","many":[]}"#).unwrap_err();
        assert!(e.to_string().contains("`many`: expected a number"), "{e}");
    }
}
