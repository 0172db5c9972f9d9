//! Python values to core values and back: batches of rows (dense or CSR NumPy buffers, borrowed
//! without a copy), targets, the presentation arguments, and named states (`State` ⇄ dict).

use std::borrow::Cow;

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::data::Matrix;
use crate::error::CwError;
use crate::state::{State, Value};

/// A batch of rows as passed from Python: a C-contiguous float64 matrix, or the arrays of a CSR
/// matrix `(data, indices, indptr, n_cols)` with one integer type for indices and indptr.
#[derive(FromPyObject)]
pub(super) enum MatrixArg<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr32(
        PyReadonlyArray1<'py, f64>,
        PyReadonlyArray1<'py, i32>,
        PyReadonlyArray1<'py, i32>,
        usize,
    ),
    Csr64(
        PyReadonlyArray1<'py, f64>,
        PyReadonlyArray1<'py, i64>,
        PyReadonlyArray1<'py, i64>,
        usize,
    ),
}

impl MatrixArg<'_> {
    /// A zero-copy view of the buffers.
    pub(super) fn view(&self) -> PyResult<Matrix<'_>> {
        Ok(match self {
            MatrixArg::Dense(x) => {
                let shape = x.shape();
                Matrix::Dense {
                    values: contiguous(x.as_slice())?,
                    n_rows: shape[0],
                    n_cols: shape[1],
                }
            }
            MatrixArg::Csr32(values, indices, indptr, n_cols) => Matrix::Csr32 {
                values: slice(values)?,
                indices: slice(indices)?,
                indptr: slice(indptr)?,
                n_cols: *n_cols,
            },
            MatrixArg::Csr64(values, indices, indptr, n_cols) => Matrix::Csr64 {
                values: slice(values)?,
                indices: slice(indices)?,
                indptr: slice(indptr)?,
                n_cols: *n_cols,
            },
        })
    }
}

fn contiguous<T>(result: Result<T, numpy::AsSliceError>) -> PyResult<T> {
    result.map_err(|e| PyValueError::new_err(e.to_string()))
}

pub(super) fn slice<'a, T: numpy::Element>(array: &'a PyReadonlyArray1<T>) -> PyResult<&'a [T]> {
    contiguous(array.as_slice())
}

/// Non-negative integers (row indices or class indices) as `usize`.
pub(super) fn indices(array: &PyReadonlyArray1<i64>, what: &str) -> PyResult<Vec<usize>> {
    array
        .as_array()
        .iter()
        .map(|&i| usize::try_from(i))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err(format!("{what} holds a negative index")))
}

/// What `partial_fit` learns from: float64 labels ±1 or targets, or int64 class indices.
#[derive(FromPyObject)]
pub(super) enum TargetsArg<'py> {
    Values(PyReadonlyArray1<'py, f64>),
    Classes(PyReadonlyArray1<'py, i64>),
}

/// A NumPy array of a dict state, borrowed while a [`State`] built from it is used (`None`: an
/// array of another type or shape, refused when the state is built).
pub(super) type Held<'py> = Option<HeldArray<'py>>;

/// The array types of a state, each with its [`Value`] variant.
macro_rules! held_arrays {
    ($($t:ty => $variant:ident),*) => {
        pub(super) enum HeldArray<'py> {
            $($variant(PyReadonlyArray1<'py, $t>)),*
        }

        impl<'py> HeldArray<'py> {
            fn extract(value: &Bound<'py, PyAny>) -> Held<'py> {
                $(if let Ok(a) = value.extract() {
                    return Some(HeldArray::$variant(a));
                })*
                None
            }

            fn value(&self) -> Value<'_> {
                match self {
                    $(HeldArray::$variant(a) => Value::$variant(values(a))),*
                }
            }
        }
    };
}

held_arrays!(f64 => Floats, u32 => U32s, u64 => U64s, i64 => I64s);

/// The values: borrowed when contiguous, else copied.
fn values<'a, T: numpy::Element + Clone>(array: &'a PyReadonlyArray1<T>) -> Cow<'a, [T]> {
    let slice = array.as_slice().map(Cow::Borrowed);
    slice.unwrap_or_else(|_| Cow::Owned(array.as_array().to_vec()))
}

/// The dicts in a list or tuple entry (nested states), in order.
fn nested<'py>(value: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    let is_sequence = value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>();
    is_sequence.then(|| value.try_iter().into_iter().flatten().flatten().collect())
}

/// Borrows the arrays of `dict` (and of the dicts nested in its lists), in the order in which
/// [`state_from_dict`] meets them: a state refers to Python's buffers instead of copying them.
pub(super) fn hold_arrays<'py>(dict: &Bound<'py, PyDict>, held: &mut Vec<Held<'py>>) {
    for value in dict.values() {
        if value.is_instance_of::<PyUntypedArray>() {
            held.push(HeldArray::extract(&value));
        } else if let Some(items) = nested(&value) {
            for item in items {
                if let Ok(item) = item.cast::<PyDict>() {
                    hold_arrays(item, held);
                }
            }
        }
    }
}

/// A dict of named entries as a [`State`], its arrays taken from `held` (see [`hold_arrays`]);
/// `versioned`: it must have a `version` entry (a saved state; a configuration has none). A
/// malformed entry is an invalid state.
pub(super) fn state_from_dict<'a>(
    dict: &Bound<'_, PyDict>,
    versioned: bool,
    held: &mut impl Iterator<Item = &'a Held<'a>>,
) -> Result<State<'a>, CwError> {
    let entries = dict.iter().map(|(key, value)| {
        let key = key
            .extract::<String>()
            .map_err(|_| CwError::InvalidState(format!("key {key} is not a string")))?;
        let value = value_from_py(&key, &value, held)?;
        Ok((key, value))
    });
    State::from_entries(entries.collect::<Result<_, CwError>>()?, versioned)
}

fn value_from_py<'a>(
    key: &str,
    value: &Bound<'_, PyAny>,
    held: &mut impl Iterator<Item = &'a Held<'a>>,
) -> Result<Value<'a>, CwError> {
    let bad = |what: &str| CwError::InvalidState(format!("entry {key:?} {what}"));
    let type_name = || {
        value
            .get_type()
            .name()
            .map_or("?".into(), |n| n.to_string())
    };
    if value.is_none() {
        return Ok(Value::None);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(x) = value.cast::<PyFloat>() {
        return Ok(Value::Float(x.value()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Value::Str(s.to_string()));
    }
    if value.is_instance_of::<PyUntypedArray>() {
        return match held.next() {
            Some(Some(array)) => Ok(array.value()),
            _ => Err(bad("must be a 1-D float64, uint32, uint64 or int64 array")),
        };
    }
    if let Ok(params) = value.cast::<PyDict>() {
        let entry = |(k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>)| Ok((k.extract()?, v.extract()?));
        let params = params.iter().map(entry).collect::<PyResult<Vec<_>>>();
        return params
            .map(Value::Params)
            .map_err(|_| bad("must map names to numbers"));
    }
    if let Some(items) = nested(value) {
        let states = items.iter().map(|item| {
            let dict = item
                .cast::<PyDict>()
                .map_err(|_| bad("must be a list of dicts"))?;
            state_from_dict(dict, true, held)
        });
        return states.collect::<Result<_, _>>().map(Value::States);
    }
    match value.extract::<i64>() {
        Ok(i) => Ok(Value::Int(i)),
        Err(_) => Err(bad(&format!("has an unsupported type {}", type_name()))),
    }
}

/// A [`State`] as a dict, its `version` first; its arrays move into NumPy without a copy.
pub(super) fn state_to_dict<'py>(
    py: Python<'py>,
    state: State<'_>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("version", state.version)?;
    for (key, value) in state.entries {
        dict.set_item(key, value_to_py(py, value)?)?;
    }
    Ok(dict)
}

pub(super) fn value_to_py<'py>(py: Python<'py>, value: Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Str(s) => s.into_pyobject(py)?.into_any(),
        Value::Floats(x) => PyArray1::from_vec(py, x.into_owned()).into_any(),
        Value::U32s(x) => PyArray1::from_vec(py, x.into_owned()).into_any(),
        Value::U64s(x) => PyArray1::from_vec(py, x.into_owned()).into_any(),
        Value::I64s(x) => PyArray1::from_vec(py, x.into_owned()).into_any(),
        Value::Params(params) => params.into_py_dict(py)?.into_any(),
        Value::States(states) => {
            let states = states.into_iter().map(|s| state_to_dict(py, s));
            PyList::new(py, states.collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}
