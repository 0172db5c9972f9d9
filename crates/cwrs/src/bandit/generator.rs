//! The bandit's random numbers: xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom
//! number generators", ACM TOMS 2021), its four words the whole state, so that a bandit saved
//! and loaded, or pickled, continues the same stream; standard normals by Marsaglia's polar
//! method with `libm`, so the draws are the same on every machine.

use crate::error::CwError;

/// A xoshiro256++ generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    state: [u64; 4],
}

/// SplitMix64, the seeding its authors advise: four words from one, never all zero.
fn split_mix(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Generator {
    /// The generator seeded by `seed` (through SplitMix64).
    pub fn seed_from_u64(seed: u64) -> Generator {
        let mut s = seed;
        Generator {
            state: std::array::from_fn(|_| split_mix(&mut s)),
        }
    }

    /// The generator in the state [`Generator::state`] gave; all zeros is not a state of
    /// xoshiro256++ (it would give zeros forever) and is refused.
    pub fn from_state(state: [u64; 4]) -> Result<Generator, CwError> {
        if state == [0; 4] {
            return Err(CwError::InvalidState(
                "a random generator's state must not be all zeros".into(),
            ));
        }
        Ok(Generator { state })
    }

    /// The four words of the state.
    pub fn state(&self) -> [u64; 4] {
        self.state
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform number in [0, 1), a multiple of 2⁻⁵³ (the top 53 bits).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in [0, n) for n ≥ 1, by the high word of a 64 × 64-bit product (Lemire's
    /// map, without its rejection step: the bias is below n/2⁶⁴).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Fills `out` with independent standard normals by Marsaglia's polar method: pairs
    /// (u, v) uniform in [−1, 1)² are drawn until s = u² + v² is in (0, 1), and u·√(−2 ln s / s),
    /// v·√(−2 ln s / s) are two normals (no sine or cosine, and a pair is kept with probability
    /// π/4); with an odd length the last pair's second value is dropped.
    pub fn fill_standard_normal(&mut self, out: &mut [f64]) {
        for pair in out.chunks_mut(2) {
            let (u, v, s) = loop {
                let u = 2.0 * self.uniform() - 1.0;
                let v = 2.0 * self.uniform() - 1.0;
                let s = u * u + v * v;
                if s < 1.0 && s > 0.0 {
                    break (u, v, s);
                }
            };
            let factor = libm::sqrt(-2.0 * libm::log(s) / s);
            pair[0] = u * factor;
            if let Some(second) = pair.get_mut(1) {
                *second = v * factor;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference implementation's output (xoshiro256plusplus.c) from the state 1, 2, 3, 4.
    #[test]
    fn matches_the_reference_stream() {
        let mut g = Generator::from_state([1, 2, 3, 4]).unwrap();
        let first: Vec<u64> = (0..4).map(|_| g.next_u64()).collect();
        assert_eq!(
            first,
            [41943041, 58720359, 3588806011781223, 3591011842654386]
        );
    }

    #[test]
    fn refuses_the_zero_state_and_round_trips_its_state() {
        assert!(Generator::from_state([0; 4]).is_err());
        let mut g = Generator::seed_from_u64(7);
        g.next_u64();
        let mut copy = Generator::from_state(g.state()).unwrap();
        assert_eq!(copy.next_u64(), g.next_u64());
    }

    #[test]
    fn normals_have_the_moments_of_a_standard_normal() {
        let mut g = Generator::seed_from_u64(1);
        let mut z = vec![0.0; 200_001];
        g.fill_standard_normal(&mut z);
        let n = z.len() as f64;
        let mean = z.iter().sum::<f64>() / n;
        let var = z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let fourth = z.iter().map(|v| v.powi(4)).sum::<f64>() / n;
        assert!(mean.abs() < 0.01 && (var - 1.0).abs() < 0.01 && (fourth - 3.0).abs() < 0.06);
    }

    #[test]
    fn below_is_uniform_over_its_range() {
        let mut g = Generator::seed_from_u64(3);
        let mut counts = [0u32; 7];
        (0..70_000).for_each(|_| counts[g.below(7)] += 1);
        assert!(counts.iter().all(|&c| (9_500..10_500).contains(&c)));
        assert!((0..1000).all(|_| g.uniform() < 1.0));
    }
}
