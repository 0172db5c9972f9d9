//! Drifting streams (docs/design.md §10): process noise, Σ ← Σ + q·I before every round (the
//! random-walk step of a Kalman filter), and `process_noise="auto"`, which keeps q = 0 and
//! instead resets Σ to its prior a·I when a change of the stream is detected.
//!
//! The constant form lives in the covariance forms (a lazy clock in the diagonal form, a
//! pending multiple of I in the full form; see [`crate::covariance::Covariance::set_process_noise`]).
//! This file holds the configuration and the change detector the loop runs for "auto".

use crate::error::CwError;

/// What the `process_noise` configuration entry asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProcessNoise {
    /// Σ ← Σ + q·I before every round (q = 0: off, the learner of old).
    Constant(f64),
    /// q = 0, and Σ ← a·I when [`ChangeDetector`] signals a change.
    Auto,
}

impl ProcessNoise {
    /// `q` as a constant process noise: non-negative and finite.
    pub fn constant(q: f64) -> Result<ProcessNoise, CwError> {
        if q.is_finite() && q >= 0.0 {
            Ok(ProcessNoise::Constant(q))
        } else {
            Err(CwError::InvalidParameter(format!(
                "process_noise must be a non-negative finite number or \"auto\", got {q}"
            )))
        }
    }

    pub fn from_name(name: &str) -> Result<ProcessNoise, CwError> {
        match name {
            "auto" => Ok(ProcessNoise::Auto),
            _ => Err(CwError::InvalidParameter(format!(
                "process_noise must be a non-negative finite number or \"auto\", got {name:?}"
            ))),
        }
    }

    /// Whether the option is off (the loop and the forms then run as without it).
    pub fn is_off(&self) -> bool {
        *self == ProcessNoise::Constant(0.0)
    }
}

/// Rows of the fast average: its effective window (a change is seen within about this many rows).
const FAST_WINDOW: f64 = 32.0;
/// Rows of the slow average and variance (the level the fast average is compared with).
const SLOW_WINDOW: f64 = 1024.0;
/// Rows after a (re)start before a change may be signalled: the slow statistics need them.
const WARM_UP: f64 = 100.0;
/// How many standard deviations of the fast average above the slow mean signal a change. The
/// fast average of n rows has variance σ²·α/(2 − α), α = 1/32, so the threshold is 6 of those:
/// a false alarm needs a streak of losses some 6σ above the level (rare on stationary data; see
/// docs/design.md §10.3 for the measured rate).
const THRESHOLD: f64 = 6.0;

/// A change detector on the per-round loss ℓ_t the loop feeds it (0/1 mistakes for the
/// classifiers, |y − μ·x| for the regressor): two exponentially weighted averages of the loss, a
/// fast one (window 32) and a slow one (window 1024, with the loss's variance s²), and a change
/// when fast − slow > 6·s·√(α/(2 − α)). Scale-free: it compares the loss with its own level.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeDetector {
    /// The prior variance a, which a reset restores.
    pub a: f64,
    /// Rows since the last (re)start.
    rows: f64,
    fast: f64,
    slow: f64,
    /// The slow second moment of the loss.
    slow_square: f64,
}

impl ChangeDetector {
    pub fn new(a: f64) -> Self {
        ChangeDetector {
            a,
            rows: 0.0,
            fast: 0.0,
            slow: 0.0,
            slow_square: 0.0,
        }
    }

    /// Its statistics (rows since the last change, fast mean, slow mean, slow second moment),
    /// as a state stores them.
    pub fn statistics(&self) -> Vec<f64> {
        vec![self.rows, self.fast, self.slow, self.slow_square]
    }

    /// A detector with saved [`ChangeDetector::statistics`].
    pub fn with_statistics(mut self, values: &[f64]) -> Result<Self, CwError> {
        match *values {
            [rows, fast, slow, slow_square]
                if values.iter().all(|v| v.is_finite()) && rows >= 0.0 =>
            {
                (self.rows, self.fast, self.slow, self.slow_square) =
                    (rows, fast, slow, slow_square);
                Ok(self)
            }
            _ => Err(CwError::InvalidState(
                "entry \"drift_statistics\" must hold 4 finite values".into(),
            )),
        }
    }

    /// Takes one round's loss; returns whether a change is detected (the statistics then
    /// restart, as the model does). The fast mean, this loss included, is compared with the
    /// slow statistics of the rows *before* it: a reference that already held the loss under
    /// test would move towards it (a loss 40× the level raised s² by 1/1024 of its square, and
    /// the alarm came a row or two late; docs/design.md §10.2).
    pub fn observe(&mut self, loss: f64) -> bool {
        if !loss.is_finite() {
            return false;
        }
        self.rows += 1.0;
        // Plain averages while fewer rows than the window have come, then exponential ones.
        self.fast += (loss - self.fast) / self.rows.min(FAST_WINDOW);
        let alarm = self.rows > WARM_UP && self.fast - self.slow > THRESHOLD * self.spread();
        let slow_rate = 1.0 / self.rows.min(SLOW_WINDOW);
        self.slow += slow_rate * (loss - self.slow);
        self.slow_square += slow_rate * (loss * loss - self.slow_square);
        if alarm {
            *self = ChangeDetector::new(self.a);
        }
        alarm
    }

    /// The stationary standard deviation of the fast mean, s·√(α/(2 − α)) with α = 1/32.
    fn spread(&self) -> f64 {
        let alpha = 1.0 / FAST_WINDOW;
        let variance = (self.slow_square - self.slow * self.slow).max(0.0);
        (variance * alpha / (2.0 - alpha)).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random stream in [0, 1).
    fn uniforms(seed: u64) -> impl Iterator<Item = f64> {
        let mut state = seed;
        std::iter::repeat_with(move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
    }

    #[test]
    fn a_jump_of_the_mistake_rate_is_detected_quickly_and_a_steady_rate_is_not() {
        let mut detector = ChangeDetector::new(1.0);
        let mut draws = uniforms(7);
        let mut alarms = 0;
        for _ in 0..20_000 {
            let mistake = f64::from(u8::from(draws.next().unwrap() < 0.05));
            alarms += usize::from(detector.observe(mistake));
        }
        assert_eq!(alarms, 0, "false alarms on a steady 5% mistake rate");
        let delay = (1..=200)
            .find(|_| detector.observe(f64::from(u8::from(draws.next().unwrap() < 0.5))))
            .expect("a jump from 5% to 50% mistakes is detected");
        assert!(delay <= 40, "detected after {delay} rows");
    }

    #[test]
    fn one_loss_far_above_a_steady_level_is_an_alarm_on_its_own_row() {
        // Losses uniform in [0, 0.2): level 0.1, s ≈ 0.058, so the fast mean's threshold is
        // ≈ 0.044 and one loss of 2 raises it by 0.059. Had the loss entered the slow
        // statistics first, s² would have grown by 4/1024 and the threshold to ≈ 0.064.
        let mut detector = ChangeDetector::new(1.0);
        let mut draws = uniforms(3);
        for _ in 0..3000 {
            assert!(!detector.observe(0.2 * draws.next().unwrap()));
        }
        assert!(detector.observe(2.0));
    }

    #[test]
    fn statistics_round_trip_and_bad_ones_are_refused() {
        let mut detector = ChangeDetector::new(2.0);
        for loss in [0.0, 1.0, 0.5] {
            detector.observe(loss);
        }
        let copy = ChangeDetector::new(2.0).with_statistics(&detector.statistics());
        assert_eq!(copy, Ok(detector));
        assert!(ChangeDetector::new(2.0)
            .with_statistics(&[1.0, f64::NAN, 0.0, 0.0])
            .is_err());
        assert!(ChangeDetector::new(2.0).with_statistics(&[1.0]).is_err());
    }

    #[test]
    fn process_noise_is_validated() {
        assert_eq!(ProcessNoise::constant(0.5), Ok(ProcessNoise::Constant(0.5)));
        assert!(ProcessNoise::constant(0.0).unwrap().is_off());
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(ProcessNoise::constant(bad).is_err());
        }
        assert_eq!(ProcessNoise::from_name("auto"), Ok(ProcessNoise::Auto));
        assert!(ProcessNoise::from_name("sometimes").is_err());
    }
}
