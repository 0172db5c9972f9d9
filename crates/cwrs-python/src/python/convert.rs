//! Python values to core values and back: rows, targets and indices read straight from NumPy
//! buffers (no copy), fresh output arrays, and named states (`State` ⇄ dict).

use std::borrow::Cow;
use std::ptr::null_mut;

use numpy::npyffi::{self, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::npyffi::{NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS};
use numpy::{Element, PyArray1, PyArrayDescr, PyArrayDescrMethods};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::{ffi, intern, Borrowed};

use cwrs::data::{CsrIndex, Matrix};
use cwrs::error::CwError;
use cwrs::model::state::{Held, HeldArray, State, Value};
use cwrs::model::Targets;

use super::{Dict, Object, PyResult};

/// The values and shape of `x` when it is an ndarray (`exact`: not a subclass) of native `T`
/// with `nd` dimensions, aligned and C-contiguous; else None.
///
/// The one place where the bindings borrow NumPy buffers, without NumPy's borrow tracking (which
/// only keeps other Rust borrowers off). It is sound because every caller holds `x` (and the
/// tuple of a CSR matrix, which holds its arrays) until it no longer uses the values, with the
/// GIL released or not: NumPy frees or moves a buffer only with its array, or on `resize`, which
/// refuses an array referenced elsewhere. A Python thread writing to the array meanwhile races
/// with any reader, tracked or not, as with NumPy's own functions that release the GIL.
fn buffer<'a, T: Element>(
    x: Borrowed<'a, '_, PyAny>,
    nd: usize,
    exact: bool,
) -> Option<(&'a [T], &'a [usize])> {
    let (py, ptr, ndarray) = (x.py(), x.as_ptr(), array_type(x.py()));
    let type_ = unsafe { ffi::Py_TYPE(ptr) };
    let array = type_ == ndarray || !exact && unsafe { ffi::PyType_IsSubtype(type_, ndarray) } != 0;
    // SAFETY: an ndarray, whose object starts with these fields; its descr is a dtype.
    let fields = array.then(|| unsafe { &(*ptr.cast::<npyffi::PyArrayObject>()).fields })?;
    let dtype = unsafe { Borrowed::from_ptr(py, fields.descr.cast()) };
    let dtype = unsafe { dtype.cast_unchecked::<PyArrayDescr>() };
    let flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    let fits = fields.nd as usize == nd && fields.flags & flags == flags;
    if !fits || !dtype.is_equiv_to(&T::get_dtype(py)) {
        return None;
    }
    // SAFETY: `nd` dimensions, then their product of aligned values of T in C order (see above).
    let shape = unsafe { std::slice::from_raw_parts(fields.dimensions.cast::<usize>(), nd) };
    let values = match shape.iter().product() {
        0 => &[],
        length => unsafe { std::slice::from_raw_parts(fields.data.cast::<T>(), length) },
    };
    Some((values, shape))
}

fn array_type(py: Python) -> *mut ffi::PyTypeObject {
    unsafe { npyffi::get_type_object(py, NpyTypes::PyArray_Type) }
}

/// A contiguous 1-D array of `T` (see [`buffer`]).
pub(super) fn vector<'a, T: Element>(x: &'a Object) -> PyResult<&'a [T]> {
    let values = buffer(x.as_borrowed(), 1, false).map(|(values, _)| values);
    let dtype = T::get_dtype(x.py());
    let refused = || PyTypeError::new_err(format!("expected a C-contiguous 1-D {dtype} array"));
    Ok(values.ok_or_else(refused)?)
}

/// Float64 rows (see [`buffer`]; `exact`: not in a subclass of ndarray).
pub(super) fn dense<'a>(x: &'a Object, exact: bool) -> Option<Matrix<'a>> {
    let (values, shape) = buffer(x.as_borrowed(), 2, exact)?;
    let (n_rows, n_cols) = (shape[0], shape[1]);
    Some(Matrix::Dense {
        values,
        n_rows,
        n_cols,
    })
}

/// A batch of rows as the general path takes it: float64 rows ([`dense`]), or the arrays of a CSR
/// matrix `(data, indices, indptr, n_cols)` with one integer type for indices and indptr.
pub(super) fn matrix<'a>(x: &'a Object) -> PyResult<Matrix<'a>> {
    fn csr<'a, I: CsrIndex + Element + 'a>(csr: &'a Bound<PyTuple>) -> Option<Matrix<'a>> {
        let item = |i| csr.get_borrowed_item(i).ok();
        let [indices, indptr] = [1, 2].map(|i| Some(buffer(item(i)?, 1, false)?.0));
        let (values, n_cols) = (buffer(item(0)?, 1, false)?.0, item(3)?.extract().ok()?);
        Some(I::matrix(values, indices?, indptr?, n_cols))
    }
    let tuple = x.cast::<PyTuple>().ok().filter(|t| t.len() == 4);
    let sparse = || tuple.and_then(|t| csr::<i32>(t).or_else(|| csr::<i64>(t)));
    let refused = || {
        PyTypeError::new_err(
            "x must be a C-contiguous float64 matrix or the CSR arrays (data, indices, indptr, \
             n_cols) with one integer type, int32 or int64, for indices and indptr",
        )
    };
    Ok(dense(x, false).or_else(sparse).ok_or_else(refused)?)
}

/// What the general `partial_fit` learns from: float64 labels ±1 or targets, or int64 class
/// indices (checked and converted into `classes`).
pub(super) fn targets<'a>(y: &'a Object, classes: &'a mut Vec<usize>) -> PyResult<Targets<'a>> {
    if let Ok(values) = vector(y) {
        return Ok(Targets::Values(values));
    }
    *classes = indices(y, "labels")?;
    Ok(Targets::Classes(classes))
}

/// Non-negative integers (row indices or class indices) from an int64 array, as `usize`.
pub(super) fn indices(array: &Object, what: &str) -> PyResult<Vec<usize>> {
    let values = vector::<i64>(array)?.iter().copied();
    Ok(cwrs::data::indices(values, what)?)
}

/// The native targets of the labels `y` of `n_rows` rows on the lean path: each label a key of
/// `targets` (label → target), or, without `targets`, a finite number (not a bool). `y` is a
/// 1-D array, a list or a tuple; None for anything else.
pub(super) fn lean_targets(y: &Object, n_rows: usize, targets: Option<&Dict>) -> Option<Vec<f64>> {
    let target = |label: Object| match targets {
        Some(targets) => targets.get_item(label).ok()??.extract::<f64>().ok(),
        None if label.is_instance_of::<PyBool>() => None,
        None => label.extract::<f64>().ok().filter(|t| t.is_finite()),
    };
    // Labels in a contiguous int64 or float64 array, the usual cases, read from its buffer.
    let (py, array) = (y.py(), y.as_borrowed());
    if let Some((labels, _)) = buffer::<i64>(array, 1, false) {
        let labels = labels.iter().map(|&l| PyInt::new(py, l).into_any());
        return all(labels, n_rows, target);
    }
    if let Some((labels, _)) = buffer::<f64>(array, 1, false) {
        let labels = labels.iter().map(|&l| PyFloat::new(py, l).into_any());
        return all(labels, n_rows, target);
    }
    let labels = match y.cast::<PyUntypedArray>() {
        Ok(array) if array.ndim() == 1 => &y.call_method0(intern!(py, "tolist")).ok()?,
        Ok(_) => return None,
        Err(_) => y,
    };
    match labels.cast_exact::<PyList>() {
        Ok(list) => all(list.iter(), n_rows, target),
        Err(_) => all(labels.cast_exact::<PyTuple>().ok()?.iter(), n_rows, target),
    }
}

/// The targets of `labels` when there are `n_rows` of them and `target` takes each.
fn all<'py>(
    labels: impl ExactSizeIterator<Item = Object<'py>>,
    n_rows: usize,
    target: impl Fn(Object<'py>) -> Option<f64>,
) -> Option<Vec<f64>> {
    (labels.len() == n_rows).then(|| labels.map(target).collect())?
}

/// A fresh float64 array of `n_rows` values, or `n_rows` × `columns` (Some), uninitialised:
/// see [`values`].
pub(super) fn output(py: Python, n_rows: usize, columns: Option<usize>) -> PyResult<Object> {
    let mut shape = [n_rows as npy_intp, columns.unwrap_or(1) as npy_intp];
    let nd = 1 + i32::from(columns.is_some());
    let (ndarray, dtype) = (array_type(py), f64::get_dtype(py).into_dtype_ptr());
    // SAFETY: takes the reference to `dtype`; a new reference, or NULL with an exception set.
    let array = unsafe {
        let shape = shape.as_mut_ptr();
        let (strides, data, base) = (null_mut(), null_mut(), null_mut());
        PY_ARRAY_API.PyArray_NewFromDescr(py, ndarray, dtype, nd, shape, strides, data, 0, base)
    };
    Ok(unsafe { Bound::from_owned_ptr_or_err(py, array) }?)
}

/// The values of `array`, a fresh [`output`], to fill.
///
/// # Safety
/// No one else holds `array` yet, and its values are all written before Python sees it.
#[allow(clippy::mut_from_ref)]
pub(super) unsafe fn values<'a>(array: &'a Object) -> &'a mut [f64] {
    let fields = unsafe { &(*array.as_ptr().cast::<npyffi::PyArrayObject>()).fields };
    let shape = unsafe { std::slice::from_raw_parts(fields.dimensions, fields.nd as usize) };
    let length = shape.iter().product::<npy_intp>() as usize;
    unsafe { std::slice::from_raw_parts_mut(fields.data.cast::<f64>(), length) }
}

/// The entries of a state or configuration dict.
type Entries<'py> = Vec<(String, Held<Array<'py>>)>;

/// A NumPy array of a state dict: 1-D float64, uint32, uint64 or int64 (see [`buffer`]),
/// borrowed while a [`State`] built from it is used.
pub(super) struct Array<'py>(Object<'py>);

impl Array<'_> {
    fn readable(&self) -> bool {
        !matches!(self.value(), Value::None)
    }
}

impl HeldArray for Array<'_> {
    fn value(&self) -> Value<'_> {
        let x = self.0.as_borrowed();
        let floats = buffer::<f64>(x, 1, false).map(|v| Cow::Borrowed(v.0).into());
        let u32s = || buffer::<u32>(x, 1, false).map(|v| Cow::Borrowed(v.0).into());
        let u64s = || buffer::<u64>(x, 1, false).map(|v| Cow::Borrowed(v.0).into());
        let i64s = || buffer::<i64>(x, 1, false).map(|v| Cow::Borrowed(v.0).into());
        let values = floats.or_else(u32s).or_else(u64s);
        values.or_else(i64s).unwrap_or(Value::None)
    }
}

/// The entries of a state or configuration dict for [`State::from_held`], its arrays borrowed;
/// a malformed entry is an invalid state (see `host::calls::build_model`).
pub(super) fn held_entries<'py>(dict: &Bound<'py, PyDict>) -> Result<Entries<'py>, CwError> {
    let entry = |(key, value): (Object<'py>, Object<'py>)| {
        let Ok(key) = key.extract::<String>() else {
            return Err(CwError::InvalidState(format!("key {key} is not a string")));
        };
        let bad = |what: &str| CwError::InvalidState(format!("entry {key:?} {what}"));
        let held = held(&value, bad)?;
        Ok((key, held))
    };
    dict.iter().map(entry).collect()
}

fn held<'py>(
    value: &Object<'py>,
    bad: impl Fn(&str) -> CwError,
) -> Result<Held<Array<'py>>, CwError> {
    if value.is_instance_of::<PyUntypedArray>() {
        // Borrowed, or else copied (C order, aligned) if that is what it lacks.
        let copy = || value.call_method0(intern!(value.py(), "copy")).ok();
        let array = Some(Array(value.clone())).filter(Array::readable);
        let array = array.or_else(|| copy().map(Array)).filter(Array::readable);
        let array = array.map(Held::Array);
        return array.ok_or_else(|| bad("must be a 1-D float64, uint32, uint64 or int64 array"));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let dicts = value.extract::<Vec<Bound<'py, PyDict>>>();
        let dicts = dicts.map_err(|_| bad("must be a list of dicts"))?;
        let states = dicts.iter().map(held_entries);
        return states.collect::<Result<_, _>>().map(Held::States);
    }
    if let Ok(params) = value.cast::<PyDict>() {
        let entry = |(k, v): (Object, Object)| Ok((k.extract()?, v.extract()?));
        let params = params.iter().map(entry).collect::<PyResult<Vec<_>>>();
        let params = params.map_err(|_| bad("must map names to numbers"))?;
        return Ok(Held::Value(Value::Params(params)));
    }
    scalar(value).map(Held::Value).ok_or_else(|| {
        let name = value
            .get_type()
            .name()
            .map_or("?".into(), |n| n.to_string());
        bad(&format!("has an unsupported type {name}"))
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
