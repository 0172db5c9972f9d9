use std::path::PathBuf;

use serde_json::Value as Json;

use super::*;
use crate::data::Matrix;
use crate::model::config::ModelConfig;
use serde_json::Map;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/format_v2")
}

/// The rows of the fixtures and what each model gave for them when Python saved it.
fn decisions() -> (Vec<f64>, usize, Map<String, Json>) {
    let text = std::fs::read_to_string(fixtures().join("decisions.json")).unwrap();
    let Json::Object(mut decisions) = serde_json::from_str(&text).unwrap() else {
        panic!("decisions.json is not a mapping")
    };
    let rows = decisions.remove("X").unwrap();
    let rows: Vec<Vec<f64>> = serde_json::from_value(rows).unwrap();
    let width = rows[0].len();
    (rows.concat(), width, decisions)
}

fn flat(values: &Json) -> Vec<f64> {
    match values {
        Json::Array(items) => items.iter().flat_map(flat).collect(),
        number => vec![number.as_f64().unwrap()],
    }
}

#[test]
fn every_python_saved_model_predicts_the_same_values() {
    let (x, width, decisions) = decisions();
    let n = x.len() / width;
    let rows = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: width,
    };
    let mut read = 0;
    for (name, expected) in &decisions {
        let path = fixtures().join(format!("{name}.cwrs"));
        if name.ends_with("_rff") {
            let error = load(&path).unwrap_err().to_string();
            assert!(error.contains("random Fourier features"), "{error}");
            continue;
        }
        let saved = load(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
        let expected = flat(expected);
        let mut values = vec![0.0; expected.len()];
        saved.model.decision_function(&rows, &mut values).unwrap();
        if name.contains("rbf") || name.contains("poly") {
            // Kernel values from the crate's own exp and fused products: last bits may differ
            // between builds (docs/design.md §3.4.1), as tests/test_persist_compat.py allows.
            for (v, e) in values.iter().zip(&expected) {
                assert!(
                    (v - e).abs() <= 1e-12 * e.abs().max(1.0),
                    "{name}: {v} against {e}"
                );
            }
        } else {
            assert_eq!(values, expected, "{name}");
        }
        assert_eq!(saved.n_features_in, width, "{name}");
        assert_eq!(
            saved.classes.is_some(),
            !name.contains("regressor"),
            "{name}"
        );
        read += 1;
    }
    assert!(read >= 30, "{read} fixtures read");
}

#[test]
fn labels_come_back_as_python_keeps_them() {
    let saved = load(fixtures().join("arow_diag.cwrs")).unwrap();
    assert_eq!(saved.estimator, "AROW");
    let strings = Labels::Strings(vec!["no".into(), "yes".into()]);
    assert_eq!(saved.classes, Some(strings));
    assert_eq!(saved.label_indices(&[-1.0, 2.0, 0.0]), [0, 1, 0]);
    let saved = load(fixtures().join("arow_multiclass_ovr_full.cwrs")).unwrap();
    assert_eq!(saved.classes, Some(Labels::Ints(vec![0, 1, 2])));
    assert_eq!(
        saved.label_indices(&[0.0, 2.0, 1.0, 5.0, -1.0, 0.0]),
        [1, 0]
    );
}

#[test]
fn damaged_files_are_refused() {
    let bytes = std::fs::read(fixtures().join("arow_full.cwrs")).unwrap();
    assert!(read(&bytes).is_ok());
    // Any byte changed: the checksum no longer matches.
    for at in [0, 10, 30, bytes.len() / 2, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x20;
        assert!(read(&damaged).is_err(), "byte {at}");
    }
    for len in [0, 12, 40, bytes.len() - 1] {
        assert!(read(&bytes[..len]).is_err(), "{len} bytes");
    }
    let error = load(fixtures().join("missing.cwrs"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("missing.cwrs"), "{error}");
}

#[test]
fn crc32_is_zlibs() {
    assert_eq!(crc32(b""), 0);
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
}

/// The files this crate writes for the models of the Python fixtures, kept in
/// tests/data/format_v2/rust/ for Python's tests to load (tests/test_persist_compat.py): the
/// writer must go on writing them byte for byte (`CWRS_WRITE_FIXTURES=1 cargo test` writes
/// them again, after a deliberate change of the format or of the crate's version).
#[test]
fn written_files_read_back_and_are_the_committed_ones() {
    let (x, width, decisions) = decisions();
    let rows = Matrix::Dense {
        values: &x,
        n_rows: x.len() / width,
        n_cols: width,
    };
    let folder = fixtures().join("rust");
    let write_them = std::env::var_os("CWRS_WRITE_FIXTURES").is_some();
    for name in decisions.keys().filter(|name| !name.ends_with("_rff")) {
        let saved = load(fixtures().join(format!("{name}.cwrs"))).unwrap();
        let bytes = write(&saved.model, saved.classes.as_ref()).unwrap();
        let again = read(&bytes).unwrap();
        assert_eq!(again.classes, saved.classes, "{name}");
        assert_eq!(again.n_features_in, saved.n_features_in, "{name}");
        assert_eq!(again.model.state(), saved.model.state(), "{name}");
        let path = folder.join(format!("{name}.cwrs"));
        if write_them {
            std::fs::create_dir_all(&folder).unwrap();
            save(&path, &saved.model, saved.classes.as_ref()).unwrap();
        }
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}");
        let mut values = vec![0.0; flat(&decisions[name]).len()];
        again.model.decision_function(&rows, &mut values).unwrap();
        assert_eq!(values, flat(&decisions[name]), "{name}");
    }
}

#[test]
fn a_classifier_is_written_with_its_classes_and_a_regressor_without() {
    let classifier = load(fixtures().join("arow_diag.cwrs")).unwrap();
    let regressor = load(fixtures().join("arow_regressor.cwrs")).unwrap();
    assert!(write(&classifier.model, None).is_err());
    let three = Labels::Ints(vec![1, 2, 3]);
    assert!(write(&classifier.model, Some(&three)).is_err());
    assert!(write(&regressor.model, Some(&three)).is_err());
    assert!(write(&regressor.model, None).is_ok());
}

#[test]
fn save_leaves_no_partial_file() {
    let saved = load(fixtures().join("arow_full.cwrs")).unwrap();
    let folder = std::env::temp_dir().join(format!("cwrs-save-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("model.cwrs");
    std::fs::write(&path, b"the old model").unwrap();
    save(&path, &saved.model, saved.classes.as_ref()).unwrap();
    assert_eq!(load(&path).unwrap().model.state(), saved.model.state());
    // A folder that does not exist: refused, nothing written.
    let missing = folder.join("no such folder").join("model.cwrs");
    assert!(save(&missing, &saved.model, saved.classes.as_ref()).is_err());
    let left: Vec<_> = std::fs::read_dir(&folder).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// `bytes` with its checksum made right again, so that a change reaches the parser.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let body = bytes.len() - 4;
    let checksum = crc32(&bytes[..body]);
    bytes[body..].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

#[test]
fn header_entries_that_contradict_the_model_are_refused() {
    let bytes = std::fs::read(fixtures().join("arow_diag.cwrs")).unwrap();
    let length = u64::from_le_bytes(bytes[13..21].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&bytes[21..21 + length]).unwrap();
    // Same lengths, so that the offsets stay right: another width, another format, one class.
    for (from, to, message) in [
        (
            "\"n_features_in_\":6",
            "\"n_features_in_\":5",
            "n_features_in_",
        ),
        (
            "\"cwrs-model\"",
            "\"cwrs-other\"",
            "not a cwrs model header",
        ),
        ("[\"no\",\"yes\"]", "[\"no\"      ]", "classes_"),
    ] {
        assert!(header.contains(from), "{from}");
        let changed = header.replacen(from, to, 1);
        let mut crafted = bytes.clone();
        crafted[21..21 + length].copy_from_slice(changed.as_bytes());
        let error = read(&resealed(crafted)).unwrap_err().to_string();
        assert!(error.contains(message), "{error}");
    }
}

mod crafted {
    use proptest::prelude::*;

    use super::*;

    const NAMES: [&str; 6] = [
        "arow_diag",
        "arow_full",
        "arow_lowrank",
        "cw_poly_multiclass",
        "arow_regressor_auto_noise",
        "adagrad_l1",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Bytes changed anywhere (the checksum made right again, so that the header and the
        /// arrays reach the parser) or cut short: the file reads, or is refused with an error;
        /// never a panic, and what reads predicts finite or infinite values, never a crash.
        #[test]
        fn changed_files_read_or_are_refused(
            which in 0..NAMES.len(),
            changes in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            cut in proptest::option::of(any::<prop::sample::Index>()),
        ) {
            let mut bytes = std::fs::read(fixtures().join(format!("{}.cwrs", NAMES[which]))).unwrap();
            for (at, value) in changes {
                let at = at.index(bytes.len() - 4);
                bytes[at] = value;
            }
            let mut bytes = resealed(bytes);
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            if let Ok(saved) = read(&bytes) {
                let d = saved.n_features_in.min(64);
                let x = vec![0.5; d];
                let rows = Matrix::Dense { values: &x, n_rows: 1, n_cols: d };
                let columns = saved.model.n_classes().filter(|&n| n > 2).unwrap_or(1);
                let mut out = vec![0.0; columns];
                let _ = saved.model.decision_function(&rows, &mut out);
            }
        }

        /// Header text changed (a character of the JSON replaced): read or refused, never a
        /// panic.
        #[test]
        fn changed_headers_read_or_are_refused(
            which in 0..NAMES.len(),
            at in any::<prop::sample::Index>(),
            with in prop::sample::select(vec![b'0', b'9', b'-', b'"', b'[', b']', b'{', b'}', b',', b'e', b'.', b' ']),
        ) {
            let mut bytes = std::fs::read(fixtures().join(format!("{}.cwrs", NAMES[which]))).unwrap();
            let length = u64::from_le_bytes(bytes[13..21].try_into().unwrap()) as usize;
            bytes[21 + at.index(length)] = with;
            let _ = read(&resealed(bytes));
        }
    }
}

/// The model's state as the file holds it, before any model is built from it.
fn stored_state(bytes: &[u8]) -> State<'static> {
    let length = u64::from_le_bytes(bytes[13..PREFIX].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[PREFIX..PREFIX + length]).unwrap();
    let arrays = Arrays::new(&header, &bytes[PREFIX + length..bytes.len() - 4]).unwrap();
    let model = &header["state"]["_model"]["$tuple"][1];
    arrays.state(model, "_model").unwrap()
}

/// Every fixture's configuration, read into a `ModelConfig` and written back, gives the
/// entries Python saved; the model loaded from it gives back the whole state it was read from.
#[test]
fn every_fixture_configuration_comes_back_from_its_typed_form() {
    let (_, _, decisions) = decisions();
    for name in decisions.keys() {
        let bytes = std::fs::read(fixtures().join(format!("{name}.cwrs"))).unwrap();
        let stored = stored_state(&bytes);
        let config = ModelConfig::from_state(&stored).unwrap();
        let entries = config.to_state();
        for (key, value) in &entries.entries {
            assert_eq!(stored.entries.get(key), Some(value), "{name}: {key}");
        }
        assert_eq!(ModelConfig::from_state(&entries).unwrap(), config, "{name}");
        if !name.ends_with("_rff") {
            let loaded = Model::from_state(&stored, None).unwrap();
            assert_eq!(loaded.state(), stored, "{name}");
            assert_eq!(loaded.model_config(), &config, "{name}");
        }
    }
}
