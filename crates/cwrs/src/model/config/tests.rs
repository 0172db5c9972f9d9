use proptest::prelude::{any, prop, prop_assert_eq, prop_oneof, proptest, Just};
use proptest::strategy::Strategy as ValueStrategy;

use super::*;
use crate::model::Model;

fn message(config: &ModelConfig) -> String {
    config.check().unwrap_err().to_string()
}

fn rbf() -> KernelConfig {
    KernelConfig {
        gamma: 0.5,
        ..KernelConfig::built_in("rbf")
    }
}

#[test]
fn check_refuses_each_bad_value_and_combination_with_its_message() {
    let arow = || ModelConfig::binary("AROW", &[("r", 1.0)]).n_features(3);
    let l1 = |config: ModelConfig| config.penalty(Penalty::CoordinateDependent, 0.01, false);
    let kernel = || ModelConfig::kernel("AROW", &[("r", 1.0)], rbf()).n_features(3);
    let cases = [
        (arow().a(0.0), "a must be a positive finite number, got 0"),
        (arow().n_features(0), "a model needs at least one feature"),
        (
            ModelConfig::binary("AROW", &[("r", -1.0)]),
            "r must be a positive finite number",
        ),
        (ModelConfig::binary("NOPE", &[]), "NOPE"),
        (
            ModelConfig::binary("PA", &[]).loss(Loss::Logistic),
            "\"PA\" takes no loss",
        ),
        (
            arow().covariance(CovarianceKind::LowRank { rank: 0 }),
            "rank must be an integer in [1, 1024], got 0",
        ),
        (
            arow().covariance(CovarianceKind::Identity),
            "needs a \"diag\", \"full\" or \"lowrank\" covariance, got \"identity\"",
        ),
        (
            ModelConfig::regressor("PA", &[]).covariance(CovarianceKind::Full),
            "regression cannot use a \"full\" covariance",
        ),
        (
            ModelConfig::multiclass("AROW", &[("r", 1.0)], 1),
            "a multiclass model needs at least 2 classes, got 1",
        ),
        (
            l1(arow().covariance(CovarianceKind::Full)),
            "an L1 penalty needs the diagonal covariance, not \"full\"",
        ),
        (
            arow().penalty(Penalty::DualAveraging, 0.01, false),
            "penalty \"l1-rda\" is AdaGrad's dual averaging form",
        ),
        (
            arow().penalty(Penalty::Uniform, -1.0, false),
            "alpha must be a non-negative finite number, got -1",
        ),
        (
            l1(arow()).average(1),
            "average cannot be combined with an L1 penalty",
        ),
        (
            arow().average(0),
            "average must be True, False or a positive row count",
        ),
        (
            ModelConfig::binary("ROMMA", &[])
                .covariance(CovarianceKind::Identity)
                .average(1),
            "average cannot be combined with ROMMA",
        ),
        (
            l1(arow()).process_noise(ProcessNoise::Constant(0.1)),
            "process_noise cannot be combined with an L1 penalty",
        ),
        (
            arow().process_noise(ProcessNoise::Constant(-0.1)),
            "process_noise must be a non-negative finite number or \"auto\", got -0.1",
        ),
        (
            arow().process_noise(ProcessNoise::Constant(1e300)),
            "process_noise must be at most",
        ),
        (
            arow()
                .covariance(CovarianceKind::LowRank { rank: 2 })
                .process_noise(ProcessNoise::Auto),
            "process_noise needs a primal second-order model",
        ),
        (
            kernel().process_noise(ProcessNoise::Constant(0.1)),
            "process_noise needs a primal second-order model",
        ),
        (
            l1(kernel()),
            "an L1 penalty applies to the primal learners, not with a kernel",
        ),
        (
            kernel().budget(Some(4)).average(1),
            "average cannot be combined with a kernel budget",
        ),
        (kernel().budget(Some(0)), "budget must be at least 1"),
        (
            ModelConfig::kernel("AROW", &[("r", 1.0)], KernelConfig::built_in("sigmoid")),
            "kernel must be \"linear\", \"rbf\" or \"poly\", got \"sigmoid\"",
        ),
        (
            ModelConfig::kernel(
                "AROW",
                &[("r", 1.0)],
                KernelConfig {
                    gamma: -1.0,
                    ..rbf()
                },
            ),
            "gamma must be a positive finite number, got -1",
        ),
        (
            ModelConfig::kernel(
                "AROW",
                &[("r", 1.0)],
                KernelConfig {
                    degree: 0,
                    ..KernelConfig::built_in("poly")
                },
            ),
            "poly kernel needs a degree in [1, 2147483647] and a finite coef0 >= 0",
        ),
        (
            ModelConfig::kernel("ROMMA", &[], rbf()),
            "ROMMA has no kernel form in cwrs",
        ),
        (
            ModelConfig::multiclass_kernel("AROW", &[("r", 1.0)], KernelConfig::custom(), 3),
            "a multiclass kernel model needs a built-in kernel",
        ),
    ];
    for (config, expected) in cases {
        let refused = message(&config);
        assert!(refused.contains(expected), "{refused:?} for {config:?}");
        // The same refusal builds no model, from the config or from its state.
        let built = Model::from_config(config.clone(), None).unwrap_err();
        assert!(built.to_string().contains(expected), "{built}");
        let from_state = Model::new(config.to_state(), None).unwrap_err();
        assert!(from_state.to_string().contains(expected), "{from_state}");
    }
}

#[test]
fn malformed_entries_are_named() {
    let state = ModelConfig::binary("AROW", &[("r", 1.0)]).to_state();
    let refused = |state: State| ModelConfig::from_state(&state).unwrap_err().to_string();
    assert_eq!(
        refused(state.clone().with("n_features", -1i64)),
        "entry \"n_features\" must be a non-negative int in range, got an int"
    );
    assert_eq!(
        refused(state.clone().with("covariance", "dense")),
        "covariance must be \"diag\" or \"full\" (or \"lowrank\", with rank), got \"dense\""
    );
    assert_eq!(
        refused(state.clone().with("covariance", "lowrank")),
        "entry \"rank\" is missing"
    );
    assert_eq!(
        refused(state.clone().with("penalty", "l2")),
        "penalty must be None, \"l1\", \"l1-uniform\" or \"l1-rda\", got \"l2\""
    );
    assert_eq!(
        refused(state.clone().with("kind", "tree")),
        "unknown model kind \"tree\""
    );
    // Entries a configuration may lack take the values they had before they existed.
    let mut old = state.clone();
    for key in ["average", "process_noise"] {
        old.entries.remove(key);
    }
    assert_eq!(ModelConfig::from_state(&old).unwrap().to_state(), state);
}

/// Configurations of every kind and option, from the builder.
fn configs() -> impl ValueStrategy<Value = ModelConfig> {
    let params = prop::collection::vec((0u8..4, 0.1f64..10.0), 0..3).prop_map(|params| {
        let names = ["r", "C", "eta", "b"];
        let params = params.iter().map(|&(k, v)| (names[usize::from(k)], v));
        params.collect::<Vec<(&str, f64)>>()
    });
    let covariance = prop_oneof![
        Just(CovarianceKind::Identity),
        Just(CovarianceKind::Diagonal),
        Just(CovarianceKind::Full),
        (1usize..20).prop_map(|rank| CovarianceKind::LowRank { rank }),
        Just(CovarianceKind::from_name("adagrad").unwrap()),
    ];
    let kernel = (
        0u8..4,
        0.01f64..3.0,
        1u32..5,
        0.0f64..2.0,
        prop::option::of(1usize..50),
    )
        .prop_map(|(name, gamma, degree, coef0, budget)| KernelConfig {
            name: ["linear", "rbf", "poly"]
                .get(usize::from(name))
                .map(|n| n.to_string()),
            gamma,
            degree,
            coef0,
            budget,
        });
    let strategy = prop_oneof![Just(Strategy::MaxScore), Just(Strategy::OneVsRest)];
    let kind = (0u8..5, 2usize..6, kernel, strategy, any::<bool>()).prop_map(
        |(kind, n_classes, kernel, strategy, with_strategy)| match kind {
            0 => ModelKind::Binary,
            1 => ModelKind::Regressor,
            2 => ModelKind::Multiclass {
                n_classes,
                strategy,
            },
            3 => ModelKind::Kernel {
                kernel,
                strategy: with_strategy.then_some(strategy),
            },
            _ => ModelKind::MulticlassKernel {
                kernel,
                n_classes,
                strategy,
            },
        },
    );
    let penalty = prop::option::of((0u8..3, 0.0f64..1.0, any::<bool>()));
    let noise = prop_oneof![
        Just(ProcessNoise::Constant(0.0)),
        (0.0f64..1.0).prop_map(ProcessNoise::Constant),
        Just(ProcessNoise::Auto),
    ];
    let loss = prop::option::of(prop_oneof![Just(Loss::Hinge), Just(Loss::Logistic)]);
    (
        (kind, params, loss, covariance, penalty),
        (1usize..100, any::<bool>(), 0.1f64..5.0, noise),
        prop::option::of(1u64..10),
    )
        .prop_map(
            |((kind, params, loss, covariance, penalty), (n, intercept, a, noise), average)| {
                let mut config = ModelConfig::of(kind, "AROW", &params)
                    .covariance(covariance)
                    .n_features(n)
                    .fit_intercept(intercept)
                    .a(a)
                    .process_noise(noise);
                config.rule.loss = loss;
                config.average = average;
                if let Some((form, alpha, penalize)) = penalty {
                    let forms = [
                        Penalty::CoordinateDependent,
                        Penalty::Uniform,
                        Penalty::DualAveraging,
                    ];
                    config = config.penalty(forms[usize::from(form)], alpha, penalize);
                }
                // A kernel model keeps no covariance form: its state names none.
                if config.kind.kernel().is_some() {
                    config.covariance = CovarianceKind::Diagonal;
                }
                config
            },
        )
}

proptest! {
    #[test]
    fn a_configuration_comes_back_from_its_state(config in configs()) {
        let state = config.to_state();
        prop_assert_eq!(&ModelConfig::from_state(&state).unwrap(), &config);
        // And the state from the configuration read back is the same state.
        prop_assert_eq!(ModelConfig::from_state(&state).unwrap().to_state(), state);
    }
}

#[test]
fn a_model_built_from_the_builder_is_the_model_of_its_state() {
    let configs = [
        ModelConfig::binary("AROW", &[("r", 0.5)]).n_features(4),
        ModelConfig::regressor("PA1", &[("epsilon", 0.1), ("C", 1.0)])
            .covariance(CovarianceKind::Identity)
            .n_features(4),
        ModelConfig::multiclass("SCW1", &[("C", 1.0), ("eta", 0.8)], 3)
            .strategy(Strategy::OneVsRest)
            .covariance(CovarianceKind::Full)
            .process_noise(ProcessNoise::Constant(0.01))
            .n_features(4),
        ModelConfig::binary("OGD", &[("eta", 0.5)])
            .loss(Loss::Logistic)
            .covariance(CovarianceKind::Identity)
            .average(2)
            .n_features(4),
        ModelConfig::kernel("AROW", &[("r", 1.0)], rbf()).n_features(4),
        ModelConfig::multiclass_kernel("CW", &[("eta", 0.7)], rbf(), 3).n_features(4),
    ];
    for config in configs {
        let built = Model::from_config(config.clone(), None).unwrap();
        let from_state = Model::new(config.to_state(), None).unwrap();
        assert_eq!(built.state(), from_state.state(), "{config:?}");
        assert_eq!(from_state.model_config(), &config);
    }
}
