//! A contextual bandit in Rust: Thompson sampling and UCB over AROW regression with a full
//! covariance (exact Bayesian linear regression), on rounds of 20 actions whose reward is
//! linear in their 8 features plus noise. Each round the policy chooses from the model
//! (`cwrs::bandit::Policy::choose`) and the model learns the reward of the action played
//! (`learn_reward`); the example prints each policy's mean regret against the best action, and
//! the greedy policy's, which does not explore.
//!
//!     cargo run --example bandit

use cwrs::bandit::{learn_reward, Generator, Policy};
use cwrs::{CovarianceKind, CwError, Matrix, Model, ModelConfig};

const N_FEATURES: usize = 8;
const N_ACTIONS: usize = 20;
const N_ROUNDS: usize = 1000;

/// Standard normals from the bandit's own generator, seeded apart from the policy's.
fn normals(generator: &mut Generator, n: usize) -> Vec<f64> {
    let mut z = vec![0.0; n];
    generator.fill_standard_normal(&mut z);
    z
}

/// The mean regret per round of `policy` on the same stream of rounds (seed 1).
fn mean_regret(policy: Policy) -> Result<f64, CwError> {
    let config = ModelConfig::regressor("AROW", &[("r", 0.25)])
        .covariance(CovarianceKind::Full)
        .n_features(N_FEATURES);
    let mut model = Model::from_config(config, None)?;
    let mut world = Generator::seed_from_u64(1);
    let theta = normals(&mut world, N_FEATURES);
    let mut choices = Generator::seed_from_u64(2);
    let mut regret = 0.0;
    for _ in 0..N_ROUNDS {
        let actions = normals(&mut world, N_ACTIONS * N_FEATURES);
        let rows = Matrix::Dense {
            values: &actions,
            n_rows: N_ACTIONS,
            n_cols: N_FEATURES,
        };
        let decision = policy.choose(&model, &rows, &mut choices)?;
        let value = |k: usize| -> f64 {
            let x = &actions[k * N_FEATURES..(k + 1) * N_FEATURES];
            x.iter().zip(&theta).map(|(a, b)| a * b).sum()
        };
        let best = (0..N_ACTIONS).map(value).fold(f64::NEG_INFINITY, f64::max);
        regret += best - value(decision.index);
        let reward = value(decision.index) + 0.5 * normals(&mut world, 1)[0];
        learn_reward(&mut model, rows.row(decision.index), reward)?;
    }
    Ok(regret / N_ROUNDS as f64)
}

fn main() -> Result<(), CwError> {
    let policies = [
        (
            "Thompson sampling, alpha 0.3",
            Policy::Thompson {
                alpha: 0.3,
                n_probability_draws: 0,
            },
        ),
        ("UCB, alpha 0.3", Policy::Ucb { alpha: 0.3 }),
        ("greedy", Policy::Greedy),
    ];
    for (name, policy) in policies {
        println!("{name}: mean regret {:.4} per round", mean_regret(policy)?);
    }
    Ok(())
}
