//! The crate's exp against a reference written from the math in double-double arithmetic
//! (about 106 bits): within 1 ulp of the correctly rounded value over [−746, 0], subnormal
//! results included, and the edges exact.

use super::*;

/// a + b as (sum, rounding error), exactly (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// A double-double: the unevaluated sum hi + lo, |lo| ≤ ulp(hi)/2.
#[derive(Clone, Copy)]
struct Dd(f64, f64);

impl Dd {
    fn normalized(hi: f64, lo: f64) -> Dd {
        let (s, e) = two_sum(hi, lo);
        Dd(s, e)
    }

    fn add(self, b: Dd) -> Dd {
        let (s, e) = two_sum(self.0, b.0);
        Dd::normalized(s, e + self.1 + b.1)
    }

    fn mul(self, b: Dd) -> Dd {
        let p = self.0 * b.0;
        // The product's rounding error, exactly, from a fused multiply-add.
        let e = self.0.mul_add(b.0, -p);
        Dd::normalized(p, e + self.0 * b.1 + self.1 * b.0)
    }

    fn div_integer(self, n: f64) -> Dd {
        let q = self.0 / n;
        let rest = Dd(self.0, self.1).add(Dd(-q * n, -q.mul_add(n, -q * n)));
        Dd::normalized(q, (rest.0 + rest.1) / n)
    }
}

/// exp(x) ≈ hi + lo and k with exp(x) = (hi + lo)·2^k: x − k·ln 2 with ln 2 to 159 bits, then
/// 30 terms of the Taylor series (the rest is below 10^−45 for |r| ≤ 0.35).
fn reference(x: f64) -> (Dd, i32) {
    const LN2: [f64; 3] = [
        std::f64::consts::LN_2,
        2.319_046_813_846_299_6e-17,
        5.707_708_438_416_212e-34,
    ];
    let k = (x / LN2[0]).round();
    let mut r = Dd(x, 0.0);
    for part in LN2 {
        r = r.add(Dd(-k, 0.0).mul(Dd(part, 0.0)));
    }
    let mut p = Dd(1.0, 0.0);
    for n in (1..=30).rev() {
        p = Dd(1.0, 0.0).add(p.mul(r).div_integer(n as f64));
    }
    (p, k as i32)
}

/// The correctly rounded exp(x) from [`reference`] (its hi is already rounded; a subnormal
/// result is rounded once, by the last product).
fn correctly_rounded(x: f64) -> f64 {
    let (p, k) = reference(x);
    let half = k.div_euclid(2);
    p.0 * 2f64.powi(half) * 2f64.powi(k - half)
}

fn ulps(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
}

fn exp_of(x: &[f64]) -> Vec<f64> {
    let mut values = x.to_vec();
    exp_in_place_portable(&mut values);
    values
}

#[test]
fn the_reference_agrees_with_the_math() {
    // exp(−1) and exp(−700) to 20 digits (from their series), and exp(−1)'s product with e.
    let (p, k) = reference(-1.0);
    assert!(((p.0 + p.1) * 2f64.powi(k) - 0.367_879_441_171_442_32).abs() < 1e-17);
    assert!((correctly_rounded(-700.0) / 9.859_676_543_759_77e-305 - 1.0).abs() < 1e-15);
    let e = Dd(std::f64::consts::E, 1.445_646_891_729_250_2e-16);
    let one = Dd(p.0 * 2f64.powi(k), p.1 * 2f64.powi(k)).mul(e);
    assert!((one.0 - 1.0 + one.1).abs() < 1e-30);
}

#[test]
fn exp_is_within_one_ulp_of_the_correctly_rounded_value() {
    let mut next = crate::test_rng::uniform(0x0E4B_5EED);
    // Uniform over the RBF's domain, over [−1, 0] where exp is near 1, and over the subnormal
    // results below −708.4.
    let x: Vec<f64> = (0..2_000_000)
        .map(|i| match i % 4 {
            0 | 1 => 372.75 * (next() - 1.0),
            2 => 0.5 * (next() - 1.0),
            _ => -708.4 - 18.4 * (next() + 1.0),
        })
        .collect();
    let mut worst = (0, 0.0);
    for (&x, &e) in x.iter().zip(&exp_of(&x)) {
        let distance = ulps(e, correctly_rounded(x));
        if distance > worst.0 {
            worst = (distance, x);
        }
        // glibc's exp is within 1 ulp too, so they differ by 2 at most.
        assert!(
            ulps(e, x.exp()) <= 2,
            "exp({x:e}) = {e:e}, glibc {:e}",
            x.exp()
        );
    }
    assert!(worst.0 <= 1, "{} ulps at exp({:e})", worst.0, worst.1);
}

#[test]
fn exp_is_exact_at_the_edges() {
    let below_subnormals = -745.133_219_101_941_2;
    let x = [
        0.0,
        -0.0,
        -1e-300,
        -5e-17,
        -6e-17,
        -745.2,
        -746.0,
        -1e6,
        f64::MIN,
        f64::NEG_INFINITY,
        below_subnormals - 1e-13,
        -745.1,
        f64::NAN,
    ];
    let e = exp_of(&x);
    assert_eq!(e[0].to_bits(), 1f64.to_bits());
    assert_eq!(e[1].to_bits(), 1f64.to_bits());
    assert_eq!(e[2], 1.0);
    assert_eq!(e[3], 1.0);
    assert_eq!(e[4], 1.0 - f64::EPSILON / 2.0);
    for (i, &e) in e[5..11].iter().enumerate() {
        assert_eq!(e.to_bits(), 0, "exp({:e})", x[5 + i]);
    }
    // The smallest subnormal, 2^−1074.
    assert_eq!(e[11].to_bits(), 1);
    assert!(e[12].is_nan());
}
