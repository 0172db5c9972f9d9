//! Drifting streams (docs/design.md §10): process noise, Σ ← Σ + q·I before every round (the
//! random-walk step of a Kalman filter), and `process_noise="auto"`, which resets Σ to its prior
//! a·I when a change of the stream is detected and, for the regressor, grows Σ by a q estimated
//! from the innovations (covariance matching, §10.5).
//!
//! The constant form lives in the covariance forms (a lazy clock in the diagonal form, a
//! pending multiple of I in the full form; see [`crate::covariance::Covariance::set_process_noise`]).
//! This file holds the configuration, the change detector and the noise estimate the loop runs
//! for "auto".

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

    /// Refuses a constant q under which a variance, a + q per round, could overflow: a + q·2⁶⁴
    /// must be finite (no stream has 2⁶⁴ rows), so the covariance stays finite and savable.
    pub fn check_growth(&self, a: f64) -> Result<(), CwError> {
        match *self {
            ProcessNoise::Constant(q) if !(a + q * ROUNDS_BOUND).is_finite() => {
                Err(CwError::InvalidParameter(format!(
                    "process_noise must be at most {:e} with a = {a} (a + process_noise·2^64, \
                     the variance after 2^64 rows, must be finite), got {q:e}",
                    (f64::MAX - a) / ROUNDS_BOUND
                )))
            }
            _ => Ok(()),
        }
    }

    /// The setting of the name `"auto"` (a number is given with [`ProcessNoise::constant`]).
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

/// More rows than any stream has: the rounds over which a constant process noise must keep
/// the variances finite.
const ROUNDS_BOUND: f64 = 18_446_744_073_709_551_616.0;

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

/// What the loop watches in a round before the row is learned: the loss the change detector
/// tests and, for the regressor, the innovation the noise estimate matches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Watched {
    /// The round's loss ℓ_t, fed to the [`ChangeDetector`].
    pub loss: f64,
    /// The regressor's innovation (`None` for the classifiers).
    pub innovation: Option<Innovation>,
}

/// The regressor's innovation before a row is learned: e = y − μ·x, whose variance under the
/// random-walk model is s²·(xᵀΣx + r) + q·‖x‖² (docs/design.md §10.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Innovation {
    /// e = y − μ·x, the residual before the row is learned.
    pub residual: f64,
    /// v = xᵀΣx.
    pub variance: f64,
    /// AROW's r.
    pub noise: f64,
    /// ‖x‖², the bias feature included.
    pub squared_norm: f64,
}

impl Innovation {
    /// |e|/√(v + r), the Kalman filter's standardized innovation (what the detector watches).
    pub fn standardized(&self) -> f64 {
        self.residual.abs() / (self.variance + self.noise).sqrt()
    }
}

/// Rows of the scale's warm-up: before them no process noise is estimated.
const SCALE_WARM_UP: f64 = 10.0;

/// The regressor's process noise estimated online by covariance matching (docs/design.md
/// §10.5). AROW's r is a regulariser, not the noise variance, so the innovations are matched in
/// the filter's own units: under the model y = w·x + N(0, s²r), w a random walk of variance
/// s²q per round, E\[e²\] = s²·(v + r + q·‖x‖²). The scale s² is the slow mean of e²/(v + r)
/// (its estimate on a stationary stream, where q = 0); each row then gives the unbiased
/// estimate d = (e²/s² − v − r)/‖x‖² of q, averaged over the fast window; q is that average
/// less one standard error, clipped to [0, a]: raised only when the window's excess is
/// significant, and never more than the prior variance per round.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoiseMatching {
    /// Rows in the scale's average.
    scale_rows: f64,
    /// s², the slow mean of e²/(v + r).
    scale: f64,
    /// Rows in the fast window since the last (re)start.
    rows: f64,
    /// The fast mean of d and of d².
    excess: f64,
    excess_square: f64,
}

impl NoiseMatching {
    /// The process noise q to add before the row of `innovation` is learned (its v already
    /// that of the covariance the row meets), at most `cap`; takes the row into the averages.
    pub fn process_noise(&mut self, innovation: Innovation, cap: f64) -> f64 {
        let Innovation {
            residual,
            variance,
            noise,
            squared_norm,
        } = innovation;
        let squared_error = residual * residual;
        // A row whose squares overflow (features around 1e154) tells nothing the averages
        // can hold: they stay finite, so the state stays savable.
        if !squared_error.is_finite() {
            return 0.0;
        }
        let mut q = 0.0;
        let d = (squared_error / self.scale - variance - noise) / squared_norm;
        if self.scale_rows > SCALE_WARM_UP
            && self.scale > 0.0
            && squared_norm > 0.0
            && (d * d).is_finite()
        {
            self.rows += 1.0;
            let window = self.rows.min(FAST_WINDOW);
            self.excess += (d - self.excess) / window;
            self.excess_square += (d * d - self.excess_square) / window;
            // The fast mean of `window` rows has variance σ²/(2·window − 1) (exponential
            // weights α = 1/window).
            let spread = (self.excess_square - self.excess * self.excess).max(0.0);
            let standard_error = (spread / (2.0 * window - 1.0)).sqrt();
            q = (self.excess - standard_error).clamp(0.0, cap);
        }
        self.scale_rows += 1.0;
        let standardized = squared_error / (variance + q * squared_norm + noise);
        if standardized.is_finite() {
            self.scale += (standardized - self.scale) / self.scale_rows.min(SLOW_WINDOW);
        }
        q
    }

    /// Forgets the fast window (after a reset; the scale, the noise level, is kept).
    fn restart(&mut self) {
        (self.rows, self.excess, self.excess_square) = (0.0, 0.0, 0.0);
    }

    fn statistics(&self) -> [f64; 5] {
        [
            self.scale_rows,
            self.scale,
            self.rows,
            self.excess,
            self.excess_square,
        ]
    }
}

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
    /// The regressor's process noise estimate (unused by the classifiers).
    pub matching: NoiseMatching,
    /// The process noise added since the last (re)start, Σ q_t: a never-seen coordinate's
    /// variance is a plus this (what the river adapter gives a new column, docs/design.md §10.4).
    pub noise_since_reset: f64,
}

impl ChangeDetector {
    /// A detector that has seen no rows yet, for a model of prior variance `a`.
    pub fn new(a: f64) -> Self {
        ChangeDetector {
            a,
            rows: 0.0,
            fast: 0.0,
            slow: 0.0,
            slow_square: 0.0,
            matching: NoiseMatching::default(),
            noise_since_reset: 0.0,
        }
    }

    /// Its statistics (rows since the last change, fast mean, slow mean, slow second moment,
    /// then the noise estimate's, then the noise added since the last reset), as a state
    /// stores them.
    pub fn statistics(&self) -> Vec<f64> {
        let own = [self.rows, self.fast, self.slow, self.slow_square];
        let grown = [self.noise_since_reset];
        own.into_iter()
            .chain(self.matching.statistics())
            .chain(grown)
            .collect()
    }

    /// A detector with saved [`ChangeDetector::statistics`] (4 values, from a state saved
    /// before the noise estimate existed, leave it fresh; 4 or 9, from a state saved before
    /// the added noise was kept, imply none was added, as the river adapter then assumed).
    pub fn with_statistics(mut self, values: &[f64]) -> Result<Self, CwError> {
        // Counts, the scale and mean squares are never negative; only the fast mean d may be.
        let signs_valid = |matching: &[f64]| match *matching {
            [] => true,
            [scale_rows, scale, rows, _, excess_square, ref grown @ ..] if grown.len() <= 1 => {
                [scale_rows, scale, rows, excess_square]
                    .iter()
                    .chain(grown)
                    .all(|&v| v >= 0.0)
            }
            _ => false,
        };
        match *values {
            [rows, fast, slow, slow_square, ref matching @ ..]
                if values.iter().all(|v| v.is_finite()) && rows >= 0.0 && signs_valid(matching) =>
            {
                (self.rows, self.fast, self.slow, self.slow_square) =
                    (rows, fast, slow, slow_square);
                if let [scale_rows, scale, rows, excess, excess_square, ..] = *matching {
                    self.matching = NoiseMatching {
                        scale_rows,
                        scale,
                        rows,
                        excess,
                        excess_square,
                    };
                }
                if let [_, _, _, _, _, noise_since_reset] = *matching {
                    self.noise_since_reset = noise_since_reset;
                }
                Ok(self)
            }
            _ => Err(CwError::InvalidState(
                "entry \"drift_statistics\" must hold 4, 9 or 10 finite values".into(),
            )),
        }
    }

    /// Takes one round's loss; returns whether a change is detected (the statistics then
    /// restart, as the model does). The fast mean, this loss included, is compared with the
    /// slow statistics of the rows *before* it: a reference that already held the loss under
    /// test would move towards it (a loss 40× the level raised s² by 1/1024 of its square, and
    /// the alarm came a row or two late; docs/design.md §10.2).
    pub fn observe(&mut self, loss: f64) -> bool {
        // A loss whose square overflows would make the slow second moment infinite.
        if !(loss * loss).is_finite() {
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
            let matching = std::mem::take(&mut self.matching);
            *self = ChangeDetector::new(self.a);
            self.matching = matching;
            self.matching.restart();
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
        detector.noise_since_reset = 0.25;
        let copy = ChangeDetector::new(2.0).with_statistics(&detector.statistics());
        assert_eq!(copy, Ok(detector.clone()));
        // A state saved before the added noise was kept: 9 values, which imply none was added.
        let nine = ChangeDetector::new(2.0).with_statistics(&detector.statistics()[..9]);
        assert_eq!(nine.unwrap().noise_since_reset, 0.0);
        // A state saved before the noise estimate existed: the detector's 4, the estimate fresh.
        let old = ChangeDetector::new(2.0).with_statistics(&detector.statistics()[..4]);
        assert_eq!(old.unwrap().matching, NoiseMatching::default());
        for entry in [4, 9] {
            let mut negative = detector.statistics();
            negative[entry] = -1.0;
            assert!(ChangeDetector::new(2.0).with_statistics(&negative).is_err());
        }
        assert!(ChangeDetector::new(2.0)
            .with_statistics(&[1.0, f64::NAN, 0.0, 0.0])
            .is_err());
        assert!(ChangeDetector::new(2.0).with_statistics(&[1.0]).is_err());
    }

    /// Estimates on innovations of the model E[e²] = s²·(v + r + q_t·‖x‖²), s² = 0.01, v = 0.5,
    /// r = 1, ‖x‖² = 5, with q_t = 0 for 3,000 rows and then `q` for 1,000.
    fn matched_noise(q: f64, seed: u64) -> Vec<f64> {
        let mut draws = uniforms(seed);
        let mut normal = || {
            let (u, w) = (draws.next().unwrap(), draws.next().unwrap());
            (-2.0 * (1.0 - u).ln()).sqrt() * (std::f64::consts::TAU * w).cos()
        };
        let mut matching = NoiseMatching::default();
        (0..4000)
            .map(|t| {
                let walk = if t < 3000 { 0.0 } else { q };
                let innovation = Innovation {
                    residual: 0.1 * (0.5 + 1.0 + walk * 5.0).sqrt() * normal(),
                    variance: 0.5,
                    noise: 1.0,
                    squared_norm: 5.0,
                };
                matching.process_noise(innovation, 1.0)
            })
            .collect()
    }

    fn mean(values: &[f64]) -> f64 {
        values.iter().sum::<f64>() / values.len() as f64
    }

    #[test]
    fn the_matched_noise_sees_a_walk_begin_and_stays_near_zero_without_one() {
        let estimates = matched_noise(0.4, 5);
        assert!(estimates.iter().all(|q| (0.0..=1.0).contains(q)));
        let still = mean(&estimates[1000..3000]);
        assert!(still < 0.02, "{still}");
        // One standard error below the fast mean: biased low by about that error (≈ 0.1 here);
        // and the slow scale absorbs a walk that lasts (an unchanging q is a larger s²).
        let walking = mean(&estimates[3000..3300]);
        assert!((0.15..=0.6).contains(&walking), "{walking}");
    }

    #[test]
    fn the_matched_noise_is_capped_and_an_alarm_keeps_the_scale() {
        let mut detector = ChangeDetector::new(1.0);
        // e² = 1 = s²·(v + r) exactly with s² = 0.5: every d is 0.
        let steady = |residual| Innovation {
            residual,
            variance: 1.0,
            noise: 1.0,
            squared_norm: 5.0,
        };
        for t in 0..200 {
            detector.observe(0.1);
            let residual = if t % 2 == 0 { 1.0 } else { -1.0 };
            assert_eq!(detector.matching.process_noise(steady(residual), 1.0), 0.0);
        }
        let scale = detector.matching.scale;
        detector.noise_since_reset = 0.5;
        assert!(detector.observe(50.0));
        assert_eq!(detector.matching.scale, scale);
        // The reset puts every variance back to a: no noise added since.
        assert_eq!(detector.noise_since_reset, 0.0);
        assert_eq!(detector.matching.process_noise(steady(100.0), 0.5), 0.5);
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
