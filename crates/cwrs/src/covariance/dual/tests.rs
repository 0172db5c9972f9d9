use super::*;
use crate::covariance::CovarianceKind;
use crate::data::Presentation;
use crate::learn::learner::{DualLearner, Learner};
use crate::rules::Rule;

fn stream(n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut next = crate::test_rng::uniform(0x2545_F491_4F6C_DD1D);
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let y = (0..n)
        .map(|i| {
            if x[i * d] - 0.4 * x[i * d + 1] + 0.2 * next() > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

#[test]
fn a_restored_support_set_must_fit_the_budget() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let (x, y) = ([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0]);
    let m = Matrix::Dense {
        values: &x,
        n_rows: 3,
        n_cols: 2,
    };
    let mut model = DualLearner::new(rule, Kernel::Linear, 2, true, 1.0, None).unwrap();
    model.partial_fit(&m, &y, Presentation::default()).unwrap();
    let g = model.model();
    let (values, indices, indptr) = g.support_vectors();
    let (pi, gram) = (g.dual_covariance(), g.gram());
    let state = DualState {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        nu: g.dual_coef(),
        pi: &pi,
        gram: &gram,
    };
    assert!(g.n_support() > 1);
    let fresh = |budget| DualGaussian::new(Kernel::Linear, true, 2, true, 1.0, budget);
    assert!(fresh(None).unwrap().with_state(state).is_ok());
    assert!(fresh(Some(g.n_support()))
        .unwrap()
        .with_state(state)
        .is_ok());
    assert!(fresh(Some(1)).unwrap().with_state(state).is_err());
}

#[test]
fn linear_kernel_equals_the_primal_full_covariance_learner() {
    let (n, d) = (50, 4);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    for name in crate::rules::RULE_NAMES {
        let rule = Rule::from_name(name, &[]).unwrap();
        if !rule.has_kernel_form() {
            // No kernel form (docs/design.md §2.9): `DualLearner::new` refuses it.
            assert!(DualLearner::new(rule, Kernel::Linear, d, true, 0.7, None).is_err());
            continue;
        }
        let kind = if rule.is_second_order() {
            CovarianceKind::Full
        } else {
            CovarianceKind::Identity
        };
        let mut primal = Learner::new(rule, kind, d, true, 0.7).unwrap();
        let mut dual = DualLearner::new(rule, Kernel::Linear, d, true, 0.7, None).unwrap();
        let (mut fp, mut fd) = (vec![0.0; 1], vec![0.0; 1]);
        for i in 0..n {
            let one = Matrix::Dense {
                values: &x[i * d..(i + 1) * d],
                n_rows: 1,
                n_cols: d,
            };
            primal.decision_function(&one, &mut fp).unwrap();
            dual.decision_function(&one, &mut fd).unwrap();
            assert!(
                (fp[0] - fd[0]).abs() <= 1e-9 * fp[0].abs().max(1.0),
                "{name} round {i}"
            );
            primal
                .partial_fit(&one, &y[i..i + 1], Presentation::default())
                .unwrap();
            dual.partial_fit(&one, &y[i..i + 1], Presentation::default())
                .unwrap();
        }
        assert_eq!(primal.n_mistakes(), dual.n_mistakes(), "{name}");
        assert_eq!(primal.n_updates(), dual.n_updates(), "{name}");
        assert_eq!(
            primal.n_updates(),
            dual.model().n_support() as u64,
            "{name}"
        );
        let (mut vp, mut vd) = (vec![0.0; n], vec![0.0; n]);
        primal.variances(&m, &mut vp).unwrap();
        dual.variances(&m, &mut vd).unwrap();
        for (a, b) in vp.iter().zip(&vd) {
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{name}: {a} vs {b}"
            );
        }
    }
}

#[test]
fn budget_removal_keeps_the_covariance_positive() {
    let (n, d) = (400, 2);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let kernel = Kernel::Rbf { gamma: 1.0 };
    let mut model = DualLearner::new(rule, kernel.clone(), d, true, 1.0, Some(15)).unwrap();
    model.partial_fit(&m, &y, Presentation::default()).unwrap();
    let mut v = vec![0.0; n];
    model.variances(&m, &mut v).unwrap();
    assert!(
        v.iter().all(|&v| v > 0.0),
        "min variance {}",
        v.iter().copied().fold(f64::INFINITY, f64::min)
    );
    // It keeps learning after the budget is full.
    assert!(model.n_updates() > 100, "{}", model.n_updates());
}

#[test]
fn budget_removal_drops_exactly_the_removed_precision_term() {
    // AROW's precision increment is the constant 1/r, so after any removals the dual
    // covariance must equal (I/a + Σ_{p ∈ S} x_p x_pᵀ / r)⁻¹ over the remaining supports.
    let (n, d, r, a) = (120, 2, 2.0, 1.5);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let rule = Rule::from_name("AROW", &[("r", r)]).unwrap();
    let mut model = DualLearner::new(rule, Kernel::Linear, d, false, a, Some(6)).unwrap();
    model.partial_fit(&m, &y, Presentation::default()).unwrap();
    assert!(model.n_updates() > 6);
    let (values, indices, indptr) = model.model().support_vectors();
    let mut precision = [1.0 / a, 0.0, 0.0, 1.0 / a];
    for w in indptr.windows(2) {
        let mut row = [0.0; 2];
        for t in w[0] as usize..w[1] as usize {
            row[indices[t] as usize] = values[t];
        }
        for p in 0..2 {
            for q in 0..2 {
                precision[2 * p + q] += row[p] * row[q] / r;
            }
        }
    }
    let det = precision[0] * precision[3] - precision[1] * precision[2];
    let sigma = [
        precision[3] / det,
        -precision[1] / det,
        -precision[2] / det,
        precision[0] / det,
    ];
    let mut v = vec![0.0; n];
    model.variances(&m, &mut v).unwrap();
    for (i, &got) in v.iter().enumerate() {
        let (x0, x1) = (x[2 * i], x[2 * i + 1]);
        let want = sigma[0] * x0 * x0 + 2.0 * sigma[1] * x0 * x1 + sigma[3] * x1 * x1;
        assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    }
}

/// A restored state is what a learner can have saved: Π and the Gram matrix are exactly
/// symmetric (only their lower triangles were kept, so an asymmetric one was silently
/// changed), and the support set fits the budget (an overfull one stayed overfull, as each
/// update removes one row).
#[test]
fn with_state_refuses_asymmetric_matrices_and_an_overfull_budget() {
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let fresh = |budget| DualGaussian::new(kernel.clone(), true, 2, true, 1.0, budget).unwrap();
    let (values, indices, indptr) = ([1.0, 2.0, 3.0], [0, 1, 0], [0, 2, 3]);
    let symmetric = [1.0, 0.5, 0.5, 2.0];
    let asymmetric = [1.0, 0.5, 0.25, 2.0];
    let state = |pi, gram| DualState {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        nu: &[0.5, -0.5],
        pi,
        gram,
    };
    assert!(fresh(None)
        .with_state(state(&symmetric, &symmetric))
        .is_ok());
    assert!(fresh(Some(2))
        .with_state(state(&symmetric, &symmetric))
        .is_ok());
    for (pi, gram) in [(&asymmetric, &symmetric), (&symmetric, &asymmetric)] {
        assert!(fresh(None).with_state(state(pi, gram)).is_err());
    }
    let error = fresh(Some(1))
        .with_state(state(&symmetric, &symmetric))
        .unwrap_err();
    assert!(error.to_string().contains("budget"), "{error}");
}

#[test]
fn budget_caps_the_support_set() {
    let (n, d) = (300, 3);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let mut model = DualLearner::new(rule, kernel.clone(), d, true, 1.0, Some(20)).unwrap();
    model.partial_fit(&m, &y, Presentation::default()).unwrap();
    assert_eq!(model.model().n_support(), 20);
    assert_eq!(model.model().dual_covariance().len(), 400);
    assert!(model.n_updates() > 20);
    let pi = model.model().dual_covariance();
    for p in 0..20 {
        for q in 0..20 {
            assert_eq!(pi[p * 20 + q], pi[q * 20 + p]);
        }
    }
}

#[test]
fn a_batch_learns_exactly_as_its_rows_one_at_a_time() {
    // In a batch, each update also prepares the next row during its sweep over Π.
    let (n, d) = (150, 3);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let weights: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.75).collect();
    let presentation = Presentation {
        weights: Some(&weights),
        ..Presentation::default()
    };
    for (name, budget) in [
        ("AROW", Some(12)),
        ("SCW1", Some(12)),
        ("CW", None),
        ("PA1", Some(12)),
    ] {
        let rule = Rule::from_name(name, &[]).unwrap();
        let kernel = Kernel::Rbf { gamma: 0.5 };
        let mut batch = DualLearner::new(rule, kernel.clone(), d, true, 1.0, budget).unwrap();
        let mut single = batch.clone();
        batch.partial_fit(&m, &y, presentation).unwrap();
        for i in 0..n {
            let one = Matrix::Dense {
                values: &x[i * d..(i + 1) * d],
                n_rows: 1,
                n_cols: d,
            };
            let weight = Presentation {
                weights: Some(&weights[i..i + 1]),
                ..Presentation::default()
            };
            single.partial_fit(&one, &y[i..i + 1], weight).unwrap();
        }
        assert!(batch.n_updates() > 20, "{name}");
        assert_eq!(batch, single, "{name}");
    }
}

/// Budgeted learning with many removals, every kind of rule, against values recorded from
/// the first implementation (full square Π, sequential sums, one pass per step): the fused
/// passes over the packed Π only reorder floating-point sums.
#[test]
fn budgeted_learning_matches_recorded_values() {
    type Case = (
        &'static str,
        Kernel,
        usize,
        bool,
        (u64, u64),
        [f64; 8],
        [f64; 8],
    );
    let cases: [Case; 6] = [
        (
            "AROW",
            Kernel::Rbf { gamma: 0.5 },
            20,
            true,
            (600, 93),
            [
                0.0014220974296528244,
                -0.05758487276870916,
                -0.22972949606139093,
                -0.12438453307167374,
                0.11888170428855394,
                0.12055881431447246,
                -0.11554270227709362,
                0.16302535218620595,
            ],
            [
                0.3961455541142611,
                0.657311926871855,
                0.6040049697019148,
                0.46025533983082534,
                0.2806272593799233,
                0.4797526394394587,
                0.4037763063678066,
                0.49026471515818537,
            ],
        ),
        (
            "SCW1",
            Kernel::Rbf { gamma: 0.5 },
            20,
            true,
            (457, 51),
            [
                -0.17113712506892353,
                -0.3186543516704148,
                -0.3313646782215933,
                -0.31117124570198396,
                0.258781908937209,
                0.018557243168187076,
                -0.19164503935794164,
                0.058367120863416,
            ],
            [
                0.2179486765705605,
                0.43485484899966376,
                0.4402793477085114,
                0.23230200585024097,
                0.1773634525545602,
                0.1899932660973742,
                0.215732748171916,
                0.16696888898414652,
            ],
        ),
        (
            "NHERD",
            Kernel::Poly {
                gamma: 0.5,
                degree: 2,
                coef0: 1.0,
            },
            12,
            false,
            (582, 64),
            [
                -0.41494765344749873,
                -0.7018370790837964,
                -0.42216571231599787,
                -0.34204375344301813,
                0.03214544978278433,
                0.22710872382562552,
                -0.12037320260905932,
                0.13302688845247168,
            ],
            [
                0.9798172698933867,
                1.807774672443191,
                0.3444632497717661,
                0.2083258321532866,
                0.7003663552339285,
                0.22618767085619096,
                0.12600765349181398,
                0.13506545034236384,
            ],
        ),
        (
            "CW",
            Kernel::Rbf { gamma: 1.0 },
            20,
            true,
            (521, 78),
            [
                -0.06742121902937837,
                -0.0702118902107347,
                -0.11732429583994475,
                -0.037792581387804836,
                0.28067147120317415,
                0.02353199730044353,
                0.02348742104494672,
                0.1415631746347379,
            ],
            [
                0.4400249270041443,
                0.7765717315364715,
                0.7801435307097433,
                0.45325534854089455,
                0.3114554696299281,
                0.6262940504700429,
                0.44550904312049444,
                0.6600875527031427,
            ],
        ),
        (
            "PA1",
            Kernel::Rbf { gamma: 0.5 },
            20,
            true,
            (372, 85),
            [
                -0.2176005580165956,
                -0.6216499016929153,
                -0.4555307895343452,
                -0.18271986850369704,
                0.8976591807829102,
                0.4510525131891079,
                0.116877778702837,
                0.6658882275984777,
            ],
            [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
        ),
        (
            "AROW",
            Kernel::Linear,
            3,
            false,
            (600, 162),
            [
                -0.00384268164059981,
                0.015313346188670196,
                -0.02716459026831941,
                0.11952045313543458,
                0.20344209858323903,
                -0.13135266022419856,
                0.11529930856599724,
                -0.13551176795034836,
            ],
            [
                0.9148249565219917,
                1.4459598356319014,
                1.0106928928177858,
                0.307228561005064,
                0.36761487763438316,
                0.3628720568267991,
                0.41783961482059573,
                0.30589095212841366,
            ],
        ),
    ];
    let (n, d) = (600, 3);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let probe = Matrix::Dense {
        values: &x[..8 * d],
        n_rows: 8,
        n_cols: d,
    };
    for (name, kernel, budget, bias, counts, scores, variances) in cases {
        let rule = Rule::from_name(name, &[]).unwrap();
        let mut model = DualLearner::new(rule, kernel.clone(), d, bias, 1.0, Some(budget)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        assert_eq!((model.n_updates(), model.n_mistakes()), counts, "{name}");
        assert_eq!(model.model().n_support(), budget, "{name}");
        let (mut f, mut v) = (vec![0.0; 8], vec![0.0; 8]);
        model.decision_function(&probe, &mut f).unwrap();
        model.variances(&probe, &mut v).unwrap();
        for (got, want) in f.iter().zip(&scores).chain(v.iter().zip(&variances)) {
            assert!(
                (got - want).abs() <= 1e-9 * want.abs(),
                "{name}: {got} vs {want}"
            );
        }
    }
}

/// The RBF kernel computed by rows, as a custom kernel (a Python callable) is: from dense rows
/// against the CSR support rows, with the built-in kernel's arithmetic. It fails once it has
/// been asked `fail_after` times.
#[derive(Debug)]
struct RowsRbf {
    gamma: f64,
    calls: std::sync::atomic::AtomicUsize,
    fail_after: usize,
}

impl RowsRbf {
    fn new(gamma: f64, fail_after: usize) -> Self {
        RowsRbf {
            gamma,
            calls: Default::default(),
            fail_after,
        }
    }

    fn call(&self) -> Result<(), CwError> {
        let calls = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if calls < self.fail_after {
            Ok(())
        } else {
            Err(CwError::InvalidInput("kernel service down".into()))
        }
    }
}

impl KernelFunction for RowsRbf {
    fn evaluate(&self, rows: &Matrix, support: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.call()?;
        let (kernel, m) = (Kernel::Rbf { gamma: self.gamma }, support.n_rows());
        for i in 0..rows.n_rows() {
            let Row::Dense(x) = rows.row(i) else {
                panic!("dense rows expected")
            };
            for p in 0..m {
                let z = support.row(p);
                // `simd::dot`'s sum of fewer than 8 terms: fused in order onto 0.
                let mut dot = 0.0;
                z.for_each(|j, v| dot = v.mul_add(x[j], dot));
                let (xx, zz) = (rows.row(i).squared_norm(), z.squared_norm());
                let mut k = [dot];
                kernel.values(xx, &[zz], &mut k);
                out[i * m + p] = k[0];
            }
        }
        Ok(())
    }

    fn diagonal(&self, _rows: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.call()?;
        out.iter_mut().for_each(|k| *k = 1.0);
        Ok(())
    }
}

#[test]
fn a_custom_kernel_learns_exactly_as_the_built_in_one() {
    let (n, d) = (300, 3);
    let (x, y) = stream(n, d);
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    for (name, budget) in [("AROW", Some(15)), ("SCW1", None), ("PA1", Some(10))] {
        let rule = Rule::from_name(name, &[]).unwrap();
        let custom = Kernel::Custom(std::sync::Arc::new(RowsRbf::new(0.5, usize::MAX)));
        let mut built_in =
            DualLearner::new(rule, Kernel::Rbf { gamma: 0.5 }, d, true, 1.0, budget).unwrap();
        let mut by_rows = DualLearner::new(rule, custom, d, true, 1.0, budget).unwrap();
        built_in
            .partial_fit(&m, &y, Presentation::default())
            .unwrap();
        by_rows
            .partial_fit(&m, &y, Presentation::default())
            .unwrap();
        let counts = |l: &DualLearner| (l.n_updates(), l.n_mistakes(), l.model().n_support());
        assert_eq!(counts(&by_rows), counts(&built_in), "{name}");
        assert!(built_in.n_updates() > 20, "{name}");
        assert_eq!(by_rows.model().dual_coef(), built_in.model().dual_coef());
        assert_eq!(
            by_rows.model().dual_covariance(),
            built_in.model().dual_covariance()
        );
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
        by_rows.variances(&m, &mut a).unwrap();
        built_in.variances(&m, &mut b).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn a_failing_custom_kernel_leaves_the_learner_as_it_was() {
    let (n, d) = (80, 3);
    let (x, y) = stream(n, d);
    let rows = |r: std::ops::Range<usize>| Matrix::Dense {
        values: &x[r.start * d..r.end * d],
        n_rows: r.len(),
        n_cols: d,
    };
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let kernel = Kernel::Custom(std::sync::Arc::new(RowsRbf::new(0.5, 60)));
    let mut model = DualLearner::new(rule, kernel, d, true, 1.0, Some(8)).unwrap();
    model
        .partial_fit(&rows(0..20), &y[..20], Presentation::default())
        .unwrap();
    assert!(model.n_updates() > 0);
    let before = model.clone();
    let error = model
        .partial_fit(&rows(20..n), &y[20..], Presentation::default())
        .unwrap_err();
    assert_eq!(error.to_string(), "kernel service down");
    assert_eq!(model, before);
    let mut out = vec![0.0; 5];
    assert!(model.decision_function(&rows(0..5), &mut out).is_err());
}
