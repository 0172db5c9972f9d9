//! The standard normal distribution: Φ, Φ⁻¹ and the probability of a margin.

use crate::error::CwError;

/// P(y = +1 | x) = Φ(μ·x / √v) under the Gaussian over weights, with v = xᵀΣx; 1/2 when
/// v = 0 (an all-zero row without intercept).
///
/// It is on the side of 1/2 that the score is, as predictions are: an overflowed score (±∞)
/// gives 1 or 0 by its sign, and where Φ rounds to 1/2 (a tiny score, or an infinite v) the
/// result is the float next to 1/2 on the score's side. A NaN score stays NaN.
pub fn margin_probability(score: f64, v: f64) -> f64 {
    if score.is_nan() {
        return f64::NAN;
    }
    let p = if score.is_infinite() {
        f64::from(score > 0.0)
    } else if v > 0.0 {
        normal_cdf(score / v.sqrt())
    } else {
        0.5
    };
    if score > 0.0 {
        p.max(0.5f64.next_up())
    } else if score < 0.0 {
        p.min(0.5f64.next_down())
    } else {
        p
    }
}

/// Standard normal CDF Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Φ(score / √v) per row (1/2 where v = 0), for scores and variances of one length.
pub fn margin_probabilities(scores: &[f64], variances: &[f64]) -> Result<Vec<f64>, CwError> {
    if scores.len() != variances.len() {
        return Err(CwError::InvalidInput(
            "scores and variances differ in length".into(),
        ));
    }
    let p = scores.iter().zip(variances);
    Ok(p.map(|(&s, &v)| margin_probability(s, v)).collect())
}

/// Standard normal quantile Φ⁻¹(p) for p in (0, 1): Wichura's AS 241 (PPND16), accurate to
/// about 1e-16 relative.
pub fn normal_quantile(p: f64) -> f64 {
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * poly(&AS241_A, r) / poly(&AS241_B, r);
    }
    let r = if q < 0.0 { p } else { 1.0 - p };
    let r = (-r.ln()).sqrt();
    let value = if r <= 5.0 {
        let r = r - 1.6;
        poly(&AS241_C, r) / poly(&AS241_D, r)
    } else {
        let r = r - 5.0;
        poly(&AS241_E, r) / poly(&AS241_F, r)
    };
    if q < 0.0 {
        -value
    } else {
        value
    }
}

/// Evaluates Σ coeffs[i]·x^i by Horner's scheme.
fn poly(coeffs: &[f64; 8], x: f64) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, &c| acc * x + c)
}

const AS241_A: [f64; 8] = [
    3.387_132_872_796_366_5,
    1.331_416_678_917_843_8e2,
    1.971_590_950_306_551_3e3,
    1.373_169_376_550_946e4,
    4.592_195_393_154_987e4,
    6.726_577_092_700_87e4,
    3.343_057_558_358_813e4,
    2.509_080_928_730_122_7e3,
];
const AS241_B: [f64; 8] = [
    1.0,
    4.231_333_070_160_091e1,
    6.871_870_074_920_579e2,
    5.394_196_021_424_751e3,
    2.121_379_430_158_659_7e4,
    3.930_789_580_009_271e4,
    2.872_908_573_572_194_3e4,
    5.226_495_278_852_545e3,
];
const AS241_C: [f64; 8] = [
    1.423_437_110_749_683_5,
    4.630_337_846_156_546,
    5.769_497_221_460_691,
    3.647_848_324_763_204_5,
    1.270_458_252_452_368_4,
    2.417_807_251_774_506e-1,
    2.272_384_498_926_918_4e-2,
    7.745_450_142_783_414e-4,
];
const AS241_D: [f64; 8] = [
    1.0,
    2.053_191_626_637_759,
    1.676_384_830_183_803_8,
    6.897_673_349_851e-1,
    1.481_039_764_274_800_8e-1,
    1.519_866_656_361_645_7e-2,
    5.475_938_084_995_345e-4,
    1.050_750_071_644_416_9e-9,
];
const AS241_E: [f64; 8] = [
    6.657_904_643_501_103,
    5.463_784_911_164_114,
    1.784_826_539_917_291_3,
    2.965_605_718_285_048_7e-1,
    2.653_218_952_657_612_4e-2,
    1.242_660_947_388_078_4e-3,
    2.711_555_568_743_487_6e-5,
    2.010_334_399_292_288_1e-7,
];
const AS241_F: [f64; 8] = [
    1.0,
    5.998_322_065_558_88e-1,
    1.369_298_809_227_358e-1,
    1.487_536_129_085_061_5e-2,
    7.868_691_311_456_133e-4,
    1.846_318_317_510_054_8e-5,
    1.421_511_758_316_446e-7,
    2.044_263_103_389_939_7e-15,
];
