//! Python values to core values and back: batches of rows (dense or CSR NumPy buffers, borrowed
//! without a copy), targets, and named states (`State` ⇄ dict).

use std::borrow::Cow;

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::data::{CsrIndex, Matrix};
use crate::error::CwError;
use crate::estimator::Targets;
use crate::state::{Held, HeldArray, State, Value};

/// A batch of rows as passed from Python: a C-contiguous float64 matrix, or the arrays of a CSR
/// matrix `(data, indices, indptr, n_cols)` with one integer type for indices and indptr.
#[derive(FromPyObject)]
pub(super) enum MatrixArg<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr32(CsrArg<'py, i32>),
    Csr64(CsrArg<'py, i64>),
}

#[derive(FromPyObject)]
pub(super) struct CsrArg<'py, I: numpy::Element>(
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, I>,
    PyReadonlyArray1<'py, I>,
    usize,
);

impl MatrixArg<'_> {
    /// A zero-copy view of the buffers.
    pub(super) fn view(&self) -> PyResult<Matrix<'_>> {
        match self {
            MatrixArg::Dense(x) => Ok(Matrix::Dense {
                values: contiguous(x.as_slice())?,
                n_rows: x.shape()[0],
                n_cols: x.shape()[1],
            }),
            MatrixArg::Csr32(csr) => csr.view(),
            MatrixArg::Csr64(csr) => csr.view(),
        }
    }
}

impl<I: CsrIndex + numpy::Element> CsrArg<'_, I> {
    fn view(&self) -> PyResult<Matrix<'_>> {
        let CsrArg(values, indices, indptr, n_cols) = self;
        Ok(I::matrix(
            slice(values)?,
            slice(indices)?,
            slice(indptr)?,
            *n_cols,
        ))
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
    Ok(crate::data::indices(
        array.as_array().iter().copied(),
        what,
    )?)
}

/// What `partial_fit` learns from: float64 labels ±1 or targets, or int64 class indices.
#[derive(FromPyObject)]
pub(super) enum TargetsArg<'py> {
    Values(PyReadonlyArray1<'py, f64>),
    Classes(PyReadonlyArray1<'py, i64>),
}

impl TargetsArg<'_> {
    /// The core's targets, class indices checked and converted into `classes`.
    pub(super) fn targets<'a>(&'a self, classes: &'a mut Vec<usize>) -> PyResult<Targets<'a>> {
        Ok(match self {
            TargetsArg::Values(values) => Targets::Values(slice(values)?),
            TargetsArg::Classes(labels) => {
                *classes = indices(labels, "labels")?;
                Targets::Classes(classes)
            }
        })
    }
}

/// A NumPy array of a state dict, borrowed while a [`State`] built from it is used.
#[derive(FromPyObject)]
pub(super) enum Array<'py> {
    Floats(PyReadonlyArray1<'py, f64>),
    U32s(PyReadonlyArray1<'py, u32>),
    U64s(PyReadonlyArray1<'py, u64>),
    I64s(PyReadonlyArray1<'py, i64>),
}

impl HeldArray for Array<'_> {
    fn value(&self) -> Value<'_> {
        match self {
            Array::Floats(a) => values(a).into(),
            Array::U32s(a) => values(a).into(),
            Array::U64s(a) => values(a).into(),
            Array::I64s(a) => values(a).into(),
        }
    }
}

/// The values: borrowed when contiguous, else copied.
fn values<'a, T: numpy::Element + Clone>(array: &'a PyReadonlyArray1<T>) -> Cow<'a, [T]> {
    let slice = array.as_slice().map(Cow::Borrowed);
    slice.unwrap_or_else(|_| Cow::Owned(array.as_array().to_vec()))
}

/// The entries of a dict (a state or a configuration) for [`State::from_held`], its arrays
/// borrowed. A malformed entry is an invalid state.
pub(super) fn held_entries<'py>(
    dict: &Bound<'py, PyDict>,
) -> Result<Vec<(String, Held<Array<'py>>)>, CwError> {
    let entry = |(key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>)| {
        let key = key
            .extract::<String>()
            .map_err(|_| CwError::InvalidState(format!("key {key} is not a string")))?;
        let held = held(&key, &value)?;
        Ok((key, held))
    };
    dict.iter().map(entry).collect()
}

fn held<'py>(key: &str, value: &Bound<'py, PyAny>) -> Result<Held<Array<'py>>, CwError> {
    let bad = |what: &str| CwError::InvalidState(format!("entry {key:?} {what}"));
    if value.is_instance_of::<PyUntypedArray>() {
        let array = value.extract().map(Held::Array);
        return array.map_err(|_| bad("must be a 1-D float64, uint32, uint64 or int64 array"));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let dicts = value.extract::<Vec<Bound<'py, PyDict>>>();
        let dicts = dicts.map_err(|_| bad("must be a list of dicts"))?;
        return dicts
            .iter()
            .map(held_entries)
            .collect::<Result<_, _>>()
            .map(Held::States);
    }
    if let Ok(params) = value.cast::<PyDict>() {
        let entry = |(k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>)| Ok((k.extract()?, v.extract()?));
        let params = params.iter().map(entry).collect::<PyResult<Vec<_>>>();
        return params
            .map(|params| Held::Value(Value::Params(params)))
            .map_err(|_| bad("must map names to numbers"));
    }
    scalar(value).map(Held::Value).ok_or_else(|| {
        let type_name = value.get_type().name();
        let type_name = type_name.map_or("?".into(), |n| n.to_string());
        bad(&format!("has an unsupported type {type_name}"))
    })
}

/// None, a bool, a float, a string or an int (in that order: a bool is an int to Python).
fn scalar(value: &Bound<'_, PyAny>) -> Option<Value<'static>> {
    if value.is_none() {
        Some(Value::None)
    } else if let Ok(b) = value.cast::<PyBool>() {
        Some(Value::Bool(b.is_true()))
    } else if let Ok(x) = value.cast::<PyFloat>() {
        Some(Value::Float(x.value()))
    } else if let Ok(s) = value.cast::<PyString>() {
        Some(Value::Str(s.to_string()))
    } else {
        value.extract::<i64>().ok().map(Value::Int)
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
        Value::State(state) => state_to_dict(py, *state)?.into_any(),
    })
}
