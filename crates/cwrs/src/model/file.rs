//! `.cwrs` model files (docs/model-format.md) in Rust: a model trained and saved in Python
//! (`estimator.save(path)`) loads here and predicts the same values, so a service written in
//! Rust can serve it; a model trained here and saved loads in Python with `cwrs.load`.
//!
//! Reading checks the file's signature, version, header and CRC-32 as Python's `cwrs.load`
//! checks them; the native model is rebuilt from its named state by [`Model::from_state`],
//! which validates every entry. What only Python can apply is refused: a random feature map
//! (`kernel_approximation="rff"`, NumPy code) and a callable kernel (never in a file).
//! Writing stores the native state and what prediction needs beside it (`classes_`,
//! `n_features_in_`); Python derives the estimator's hyper-parameters from the model's
//! configuration when a file holds none.

use std::path::Path;

use serde_json::{Map, Value as Json};

use super::state::{State, Value};
use super::{best_class, Model};
use crate::error::CwError;

/// The signature that opens every `.cwrs` file.
const MAGIC: &[u8; 9] = b"\x89CWRS\r\n\x1a\n";
/// The format version this reader knows (version 1 files: load and save them again in Python).
const FORMAT_VERSION: u32 = 2;
/// Signature, version (u32) and header length (u64).
const PREFIX: usize = 9 + 4 + 8;
/// Every array of the payload starts at a multiple of this.
const ALIGNMENT: usize = 8;

/// The labels a classifier predicts, as the file keeps them (`classes_`).
#[derive(Clone, Debug, PartialEq)]
pub enum Labels {
    /// Integer labels.
    Ints(Vec<i64>),
    /// Float labels.
    Floats(Vec<f64>),
    /// String labels.
    Strings(Vec<String>),
}

impl Labels {
    /// The number of labels.
    pub fn len(&self) -> usize {
        match self {
            Labels::Ints(v) => v.len(),
            Labels::Floats(v) => v.len(),
            Labels::Strings(v) => v.len(),
        }
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A model read from a `.cwrs` file: the native model and what the Python estimator keeps
/// around it.
#[derive(Clone, Debug)]
pub struct SavedModel {
    /// The Python class it was saved from (`"AROW"`, `"AROWRegressor"`, …).
    pub estimator: String,
    /// The model itself.
    pub model: Model,
    /// The classes, in the order of the model's classes (None for a regressor).
    pub classes: Option<Labels>,
    /// The number of features the estimator was fitted with (Python's `n_features_in_`, equal to
    /// the model's `n_features`).
    pub n_features_in: usize,
}

impl SavedModel {
    /// The class label of each score row, as the Python estimator's `predict` gives it
    /// ([`best_class`]): for two classes `classes[1]` where the score is positive, else the
    /// class of highest score.
    pub fn label_indices(&self, scores: &[f64]) -> Vec<usize> {
        let columns = self.model.n_classes().filter(|&n| n > 2).unwrap_or(1);
        scores.chunks_exact(columns).map(best_class).collect()
    }
}

impl Model {
    /// The model in the `.cwrs` file at `path`, with what Python keeps beside it (see
    /// [`load`]).
    ///
    /// ```
    /// use cwrs::model::config::ModelConfig;
    /// use cwrs::model::file::Labels;
    /// use cwrs::model::{Model, Targets};
    /// use cwrs::{Matrix, Presentation};
    ///
    /// let config = ModelConfig::binary("AROW", &[("r", 0.5)]).n_features(2);
    /// let mut model = Model::from_config(config, None)?;
    /// let x = Matrix::Dense { values: &[1.0, 0.5, -1.0, 0.2], n_rows: 2, n_cols: 2 };
    /// model.partial_fit(&x, Targets::Values(&[1.0, -1.0]), Presentation::default())?;
    /// let path = std::env::temp_dir().join(format!("cwrs-doc-{}.cwrs", std::process::id()));
    /// // The labels of the negative and the positive class, as Python's `classes_` keeps them.
    /// model.save(&path, Some(&Labels::Strings(vec!["ham".into(), "spam".into()])))?;
    /// let saved = Model::load(&path)?;
    /// assert_eq!((saved.estimator.as_str(), saved.model.state()), ("AROW", model.state()));
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), cwrs::CwError>(())
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<SavedModel, CwError> {
        load(path)
    }

    /// Writes this model to a `.cwrs` file at `path` that Python's `cwrs.load` reads (see
    /// [`save`]).
    pub fn save(&self, path: impl AsRef<Path>, classes: Option<&Labels>) -> Result<(), CwError> {
        save(path, self, classes)
    }
}

fn corrupted(what: impl std::fmt::Display) -> CwError {
    CwError::InvalidInput(format!("corrupted model file: {what}"))
}

/// The model in the `.cwrs` file at `path`.
pub fn load(path: impl AsRef<Path>) -> Result<SavedModel, CwError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path)
        .map_err(|error| CwError::InvalidInput(format!("{}: {error}", path.display())))?;
    read(&bytes).map_err(|error| match error {
        CwError::InvalidInput(message) => {
            CwError::InvalidInput(format!("{}: {message}", path.display()))
        }
        error => error,
    })
}

/// The model in the bytes of a `.cwrs` file.
pub fn read(bytes: &[u8]) -> Result<SavedModel, CwError> {
    if bytes.len() < PREFIX + 4 || &bytes[..9] != MAGIC {
        return Err(CwError::InvalidInput(
            "not a cwrs model file (its signature is missing)".into(),
        ));
    }
    let (body, checksum) = bytes.split_at(bytes.len() - 4);
    if crc32(body) != u32::from_le_bytes(checksum.try_into().expect("4 bytes")) {
        return Err(corrupted(
            "its checksum does not match (truncated or altered)",
        ));
    }
    let version = u32::from_le_bytes(bytes[9..13].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(CwError::InvalidInput(format!(
            "format version {version}: this reader knows version {FORMAT_VERSION} (load and \
             save the model again with Python's cwrs to update an older file)"
        )));
    }
    let length = u64::from_le_bytes(bytes[13..PREFIX].try_into().expect("8 bytes"));
    let end = usize::try_from(length)
        .ok()
        .and_then(|length| PREFIX.checked_add(length))
        .filter(|&end| end <= body.len())
        .ok_or_else(|| corrupted("its header is longer than the file"))?;
    let header: Json = serde_json::from_slice(&bytes[PREFIX..end])
        .map_err(|error| corrupted(format!("header: {error}")))?;
    if header.get("format").and_then(Json::as_str) != Some("cwrs-model") {
        return Err(corrupted("the header is not a cwrs model header"));
    }
    let arrays = Arrays::new(&header, &body[end..])?;
    let estimator = header
        .get("estimator")
        .and_then(Json::as_str)
        .ok_or_else(|| corrupted("no estimator name"))?
        .to_string();
    let state = header
        .get("state")
        .and_then(Json::as_object)
        .ok_or_else(|| corrupted("no estimator state"))?;
    let fitted = |key: &str| state.get(key).filter(|v| !v.is_null());
    if fitted("_feature_map").is_some() {
        return Err(CwError::InvalidInput(format!(
            "this {estimator} maps rows through random Fourier features \
             (kernel_approximation=\"rff\"), which only Python's cwrs applies"
        )));
    }
    let model = fitted("_model")
        .and_then(|model| model.get("$tuple"))
        .and_then(Json::as_array)
        .filter(|parts| parts.len() == 2 && parts[0] == "Model")
        .map(|parts| &parts[1])
        .ok_or_else(|| CwError::InvalidInput(format!("this {estimator} is not fitted")))?;
    let model = Model::from_state(&arrays.state(model, "_model")?, None)?;
    let n_features_in = fitted("n_features_in_")
        .and_then(|n| arrays.int(n))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| corrupted("no n_features_in_"))?;
    let classes = fitted("classes_")
        .map(|classes| arrays.labels(classes))
        .transpose()?;
    if let Some(problem) = classes_problem(&model, classes.as_ref()) {
        return Err(corrupted(format!("classes_: {problem}")));
    }
    // Without a feature map (refused above) the model takes the rows as they are.
    if model.model_config().n_features != n_features_in {
        return Err(corrupted(
            "n_features_in_ is not the model's number of features",
        ));
    }
    Ok(SavedModel {
        estimator,
        model,
        classes,
        n_features_in,
    })
}

/// Writes `model` to a `.cwrs` file at `path` that Python's `cwrs.load` reads: the class of
/// estimator its rule names, with `classes` as `classes_` (a classifier's, in the order of the
/// model's classes; None for a regressor). The file appears only when complete: it is written
/// beside `path` under another name, synced, then renamed over it.
pub fn save(
    path: impl AsRef<Path>,
    model: &Model,
    classes: Option<&Labels>,
) -> Result<(), CwError> {
    let path = path.as_ref();
    let bytes = write(model, classes)?;
    let failed =
        |error: std::io::Error| CwError::InvalidInput(format!("{}: {error}", path.display()));
    let name = path
        .file_name()
        .ok_or_else(|| failed(std::io::ErrorKind::InvalidInput.into()))?;
    let mut temporary = name.to_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(temporary);
    let written = (|| {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    written.map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        failed(error)
    })
}

/// The bytes of the `.cwrs` file of [`save`].
pub fn write(model: &Model, classes: Option<&Labels>) -> Result<Vec<u8>, CwError> {
    let state = model.state();
    let rule = state.string("rule")?;
    if let Some(problem) = classes_problem(model, classes) {
        return Err(CwError::InvalidInput(problem));
    }
    let regressor = model.kind() == "regressor";
    let mut encoder = Encoder::default();
    let mut fitted = Map::new();
    fitted.insert(
        "_model".into(),
        serde_json::json!({"$tuple": ["Model", encoder.state(&state)]}),
    );
    fitted.insert(
        "n_features_in_".into(),
        state.count::<u64>("n_features")?.into(),
    );
    if let Some(classes) = classes {
        fitted.insert("classes_".into(), encoder.labels(classes));
        fitted.insert("_feature_map".into(), Json::Null);
        fitted.insert("_sparse_input".into(), false.into());
    }
    let estimator = if regressor {
        format!("{rule}Regressor")
    } else {
        rule.to_string()
    };
    let mut descriptors = Vec::new();
    let mut offset = 0;
    for (dtype, len, bytes) in &encoder.arrays {
        descriptors.push(serde_json::json!({"dtype": dtype, "shape": [len], "offset": offset}));
        offset += bytes.len() + padding(bytes.len());
    }
    let header = serde_json::json!({
        "format": "cwrs-model",
        "cwrs_version": env!("CARGO_PKG_VERSION"),
        "estimator": estimator,
        "state": fitted,
        "arrays": descriptors,
    });
    let header =
        serde_json::to_vec(&header).map_err(|error| CwError::InvalidInput(error.to_string()))?;
    let mut bytes = Vec::with_capacity(PREFIX + header.len() + offset + 4);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&header);
    for (_, _, array) in &encoder.arrays {
        bytes.extend_from_slice(array);
        bytes.resize(bytes.len() + padding(array.len()), 0);
    }
    let checksum = crc32(&bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    Ok(bytes)
}

/// What is wrong with `classes` as the labels of `model`'s classes, if anything: a classifier
/// has one label per class, a regressor none.
fn classes_problem(model: &Model, classes: Option<&Labels>) -> Option<String> {
    let n_classes = model.n_classes().unwrap_or(2);
    match (classes, model.kind() == "regressor") {
        (None, true) => None,
        (Some(_), true) => Some("a regressor has no classes".into()),
        (None, false) => Some("a classifier needs its classes".into()),
        (Some(labels), false) => (labels.len() != n_classes).then(|| {
            format!(
                "the model has {n_classes} classes, but {} labels were given",
                labels.len()
            )
        }),
    }
}

/// Zero bytes after an array of `len` bytes, up to the next multiple of [`ALIGNMENT`].
fn padding(len: usize) -> usize {
    (ALIGNMENT - len % ALIGNMENT) % ALIGNMENT
}

/// The header's values of a state, its arrays gathered for the payload (type, length, bytes).
#[derive(Default)]
struct Encoder {
    arrays: Vec<(&'static str, usize, Vec<u8>)>,
}

impl Encoder {
    /// `values` as the next array of the payload, each value as its little-endian bytes.
    fn array_of<T: Copy, const N: usize>(
        &mut self,
        dtype: &'static str,
        values: &[T],
        to_le: fn(T) -> [u8; N],
    ) -> Json {
        let bytes = values.iter().flat_map(|&x| to_le(x)).collect();
        self.arrays.push((dtype, values.len(), bytes));
        serde_json::json!({"$array": self.arrays.len() - 1})
    }

    /// `{"$dict": [["version", v], [key, value], ...]}`, as Python's encoder writes a state.
    fn state(&mut self, state: &State) -> Json {
        let mut pairs = vec![serde_json::json!(["version", state.version])];
        for (key, value) in &state.entries {
            pairs.push(serde_json::json!([key, self.value(value)]));
        }
        serde_json::json!({ "$dict": pairs })
    }

    fn value(&mut self, value: &Value) -> Json {
        match value {
            Value::None => Json::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(x) => float(*x),
            Value::Str(s) => s.as_str().into(),
            Value::Floats(v) => self.array_of("<f8", v, f64::to_le_bytes),
            Value::U32s(v) => self.array_of("<u4", v, u32::to_le_bytes),
            Value::U64s(v) => self.array_of("<u8", v, u64::to_le_bytes),
            Value::I64s(v) => self.array_of("<i8", v, i64::to_le_bytes),
            Value::Params(params) => {
                let pairs: Vec<Json> = params
                    .iter()
                    .map(|(k, v)| serde_json::json!([k, float(*v)]))
                    .collect();
                serde_json::json!({ "$dict": pairs })
            }
            Value::States(states) => states
                .iter()
                .map(|s| self.state(s))
                .collect::<Vec<_>>()
                .into(),
            Value::State(state) => self.state(state),
        }
    }

    /// `classes_` as Python keeps it: a NumPy array of ints or floats, or of strings.
    fn labels(&mut self, labels: &Labels) -> Json {
        match labels {
            Labels::Ints(v) => self.array_of("<i8", v, i64::to_le_bytes),
            Labels::Floats(v) => self.array_of("<f8", v, f64::to_le_bytes),
            Labels::Strings(v) => {
                let longest = v
                    .iter()
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(1);
                serde_json::json!({"$strings": format!("<U{longest}"), "values": v})
            }
        }
    }
}

/// A float as Python's encoder writes it: a JSON number, or a tag for NaN and the infinities.
fn float(x: f64) -> Json {
    match serde_json::Number::from_f64(x) {
        Some(number) => Json::Number(number),
        None if x.is_nan() => serde_json::json!({"$float": "nan"}),
        None => serde_json::json!({"$float": if x > 0.0 { "inf" } else { "-inf" }}),
    }
}

/// The payload's arrays, as the header describes them.
struct Arrays<'a> {
    described: &'a [Json],
    payload: &'a [u8],
}

impl<'a> Arrays<'a> {
    fn new(header: &'a Json, payload: &'a [u8]) -> Result<Self, CwError> {
        let described = header
            .get("arrays")
            .and_then(Json::as_array)
            .ok_or_else(|| corrupted("no array list"))?;
        Ok(Arrays { described, payload })
    }

    /// Array `index`'s type and bytes.
    fn bytes(&self, index: &Json) -> Result<(&'a str, &'a [u8]), CwError> {
        let entry = index
            .as_u64()
            .and_then(|i| self.described.get(usize::try_from(i).ok()?))
            .ok_or_else(|| corrupted(format!("no array {index}")))?;
        let dtype = entry.get("dtype").and_then(Json::as_str);
        let size = match dtype {
            Some("|b1" | "|i1" | "|u1") => 1,
            Some("<i2" | "<u2") => 2,
            Some("<i4" | "<u4" | "<f4") => 4,
            Some("<i8" | "<u8" | "<f8") => 8,
            _ => return Err(corrupted(format!("array {index} has an unknown type"))),
        };
        let extents = entry.get("shape").and_then(Json::as_array);
        let count = extents.and_then(|extents| {
            (extents.iter()).try_fold(1usize, |n, e| {
                n.checked_mul(usize::try_from(e.as_u64()?).ok()?)
            })
        });
        let offset = entry
            .get("offset")
            .and_then(Json::as_u64)
            .and_then(|o| usize::try_from(o).ok());
        let range = count
            .and_then(|n| n.checked_mul(size))
            .zip(offset)
            .and_then(|(len, start)| Some(start..start.checked_add(len)?))
            .filter(|range| range.end <= self.payload.len())
            .ok_or_else(|| corrupted(format!("array {index} lies outside the file")))?;
        Ok((dtype.expect("a known type"), &self.payload[range]))
    }

    /// A 1-D array of the model state: float64, uint32, uint64 or int64, as the bindings take
    /// them from NumPy.
    fn state_array(&self, index: &Json) -> Result<Value<'static>, CwError> {
        let (dtype, bytes) = self.bytes(index)?;
        Ok(match dtype {
            "<f8" => Value::Floats(from_le(bytes, f64::from_le_bytes).into()),
            "<u4" => Value::U32s(from_le(bytes, u32::from_le_bytes).into()),
            "<u8" => Value::U64s(from_le(bytes, u64::from_le_bytes).into()),
            "<i8" => Value::I64s(from_le(bytes, i64::from_le_bytes).into()),
            other => return Err(corrupted(format!("a model array of type {other}"))),
        })
    }

    /// The named state encoded as `{"$dict": [[key, value], ...]}`.
    fn state(&self, encoded: &Json, what: &str) -> Result<State<'static>, CwError> {
        let entries =
            pairs(encoded).ok_or_else(|| corrupted(format!("{what} is not a mapping")))?;
        let entries = entries.iter().map(|(key, value)| {
            let value = self
                .value(value)
                .ok_or_else(|| CwError::InvalidState(format!("entry {key:?} is malformed")))??;
            Ok((key.to_string(), value))
        });
        State::from_entries(entries.collect::<Result<_, CwError>>()?, true)
    }

    /// A state entry: None, a bool, an int, a float, a string, an array, named numbers (a
    /// rule's parameters) or a list of states; None if it is none of these.
    fn value(&self, value: &Json) -> Option<Result<Value<'static>, CwError>> {
        Some(Ok(match value {
            Json::Null => Value::None,
            Json::Bool(b) => Value::Bool(*b),
            Json::String(s) => Value::Str(s.clone()),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64()?),
            },
            Json::Array(states) => {
                let states = states.iter().map(|s| self.state(s, "a nested state"));
                return Some(states.collect::<Result<_, _>>().map(Value::States));
            }
            Json::Object(_) => return self.tagged(value),
        }))
    }

    /// A tagged entry: an array, a rule's parameters (`$dict`), a non-finite float or a NumPy
    /// scalar (an int unless it is a float64).
    fn tagged(&self, tagged: &Json) -> Option<Result<Value<'static>, CwError>> {
        if let Some(index) = tagged.get("$array") {
            return Some(self.state_array(index));
        }
        if tagged.get("$dict").is_some() {
            let params = pairs(tagged)?.into_iter();
            let params = params.map(|(k, v)| Some((k.to_string(), number(v)?)));
            return Some(Ok(Value::Params(params.collect::<Option<_>>()?)));
        }
        let value = number(tagged)?;
        let int = tagged.get("value").and_then(Json::as_i64);
        Some(Ok(match int {
            Some(i) if tagged.get("$scalar").and_then(Json::as_str) != Some("<f8") => Value::Int(i),
            _ => Value::Float(value),
        }))
    }

    /// An int: a JSON integer or a NumPy integer scalar.
    fn int(&self, value: &Json) -> Option<i64> {
        value
            .as_i64()
            .or_else(|| value.get("$scalar").and(value.get("value"))?.as_i64())
    }

    /// `classes_`: a NumPy array of ints, floats or strings.
    fn labels(&self, value: &Json) -> Result<Labels, CwError> {
        if let Some(strings) = value
            .get("values")
            .filter(|_| value.get("$strings").is_some())
        {
            let strings = strings.as_array().and_then(|s| {
                s.iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            });
            return strings
                .map(Labels::Strings)
                .ok_or_else(|| corrupted("classes_ holds a non-string"));
        }
        let index = value.get("$array").ok_or_else(|| {
            CwError::InvalidInput(
                "classes_ of this type are Python objects, which only Python's cwrs reads".into(),
            )
        })?;
        let (dtype, bytes) = self.bytes(index)?;
        Ok(match dtype {
            "<i8" => Labels::Ints(from_le(bytes, i64::from_le_bytes)),
            "<i4" => Labels::Ints(from_le(bytes, |b| i64::from(i32::from_le_bytes(b)))),
            "<f8" => Labels::Floats(from_le(bytes, f64::from_le_bytes)),
            "|b1" => Labels::Ints(bytes.iter().map(|&b| i64::from(b)).collect()),
            other => return Err(corrupted(format!("classes_ of type {other}"))),
        })
    }
}

/// The pairs of `{"$dict": [[key, value], ...]}` whose keys are strings.
fn pairs(encoded: &Json) -> Option<Vec<(&str, &Json)>> {
    let pairs = encoded.get("$dict")?.as_array()?;
    pairs
        .iter()
        .map(|pair| match pair.as_array()?.as_slice() {
            [Json::String(key), value] => Some((key.as_str(), value)),
            _ => None,
        })
        .collect()
}

/// A number: JSON, `{"$float": "nan" | "inf" | "-inf"}` or a NumPy scalar.
fn number(value: &Json) -> Option<f64> {
    match value {
        Json::Number(n) => n.as_f64(),
        Json::Object(tagged) => match (tagged.get("$float"), tagged.get("value")) {
            (Some(Json::String(text)), _) => match text.as_str() {
                "nan" => Some(f64::NAN),
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            (None, Some(value)) if tagged.contains_key("$scalar") => number(value),
            _ => None,
        },
        _ => None,
    }
}

/// The little-endian values of N bytes each in `bytes`.
fn from_le<T, const N: usize>(bytes: &[u8], from: fn([u8; N]) -> T) -> Vec<T> {
    (bytes.chunks_exact(N))
        .map(|b| from(b.try_into().expect("chunks of N bytes")))
        .collect()
}

/// CRC-32 with zlib's polynomial (what Python's `zlib.crc32` computes).
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !bytes.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests;
