//! The lean call paths (issue 19): a few rows of float64 read straight from a NumPy array's
//! buffer and the outputs written straight into a fresh array, by calls that hold the GIL from
//! start to end ([`crate::shared::Work::Attached`]). Anything unusual gives `None` and the
//! estimator takes its general path, which checks and converts.

use numpy::npyffi::{self, PyArrayObject, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_TYPES};
use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::data::Matrix;

/// Rows per call on the lean paths: "a few", as a stream sends them.
const MAX_ROWS: usize = 64;

/// The fields of `x` when it is a NumPy array (exactly: not a subclass) of native float64 or
/// int64 (`type_num`), else None.
fn array_fields<'a>(
    x: &'a Bound<'_, PyAny>,
    type_num: NPY_TYPES,
) -> Option<&'a npyffi::PyArrayObject_fields> {
    let array_type = unsafe { npyffi::get_type_object(x.py(), npyffi::NpyTypes::PyArray_Type) };
    if unsafe { ffi::Py_TYPE(x.as_ptr()) } != array_type {
        return None;
    }
    // SAFETY: `x` is an ndarray, whose object starts with these fields, as does its dtype's.
    let fields = unsafe { &(*x.as_ptr().cast::<PyArrayObject>()).fields };
    let dtype = unsafe { &(*fields.descr).fields };
    (dtype.type_num == type_num as i32 && dtype.byteorder as u8 == b'=').then_some(fields)
}

/// The values of `x` when it is 1 to 64 aligned C-contiguous rows of float64 of width `n_features`.
///
/// The buffer is read without NumPy's borrow tracking, which is sound because the caller holds
/// the GIL until it no longer uses the view (`Work::Attached`): no Python code runs meanwhile
/// that could resize or free the array, and the array object, held by the caller, keeps the
/// buffer alive. A writer that releases the GIL (a NumPy loop or another extension in another
/// thread) races with any reader, tracked or not, as with NumPy's own functions.
pub(super) fn rows<'a>(x: &'a Bound<'_, PyAny>, n_features: usize) -> Option<&'a [f64]> {
    let fields = array_fields(x, NPY_TYPES::NPY_DOUBLE)?;
    if fields.nd != 2 {
        return None;
    }
    let [n_rows, n_cols] = unsafe { *fields.dimensions.cast::<[usize; 2]>() };
    let flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    let fits = n_cols == n_features && (1..=MAX_ROWS).contains(&n_rows);
    if !fits || fields.flags & flags != flags {
        return None;
    }
    // SAFETY: n_rows · n_cols aligned float64 values from `data` (C order), see above.
    Some(unsafe { std::slice::from_raw_parts(fields.data.cast::<f64>(), n_rows * n_cols) })
}

/// Row-major `values` as rows of `n_cols`.
pub(super) fn matrix(values: &[f64], n_cols: usize) -> Matrix<'_> {
    let n_rows = values.len() / n_cols.max(1);
    Matrix::Dense {
        values,
        n_rows,
        n_cols,
    }
}

/// The native targets of the labels `y` of `n_rows` rows: each label a key of `targets` (label
/// → target), or, without `targets`, a finite number (not a bool). `y` is a 1-D array, a list
/// or a tuple; None for anything else.
pub(super) fn targets(
    y: &Bound<'_, PyAny>,
    n_rows: usize,
    targets: Option<&Bound<'_, PyDict>>,
) -> Option<Vec<f64>> {
    let py = y.py();
    let target = |label: Bound<'_, PyAny>| match targets {
        Some(targets) => targets.get_item(label).ok()??.extract::<f64>().ok(),
        None if label.is_instance_of::<pyo3::types::PyBool>() => None,
        None => label.extract::<f64>().ok().filter(|t| t.is_finite()),
    };
    // Labels in an int64 or float64 array, the usual cases, read from its buffer: no list of
    // them is built.
    let read = |type_num, float| {
        let fields = array_fields(y, type_num)?;
        if fields.nd != 1 {
            return Some(None);
        }
        let (length, stride) = unsafe { (*fields.dimensions, *fields.strides) };
        if length as usize != n_rows {
            return Some(None);
        }
        let label = |i: usize| {
            // SAFETY: i < length, along the array's stride, read holding the GIL.
            let at = unsafe { fields.data.offset(i as isize * stride) };
            let label = match float {
                true => unsafe { at.cast::<f64>().read_unaligned() }
                    .into_pyobject(py)
                    .ok()?
                    .into_any(),
                false => unsafe { at.cast::<i64>().read_unaligned() }
                    .into_pyobject(py)
                    .ok()?
                    .into_any(),
            };
            target(label)
        };
        Some((0..n_rows).map(label).collect())
    };
    if let Some(targets) =
        read(NPY_TYPES::NPY_LONG, false).or_else(|| read(NPY_TYPES::NPY_DOUBLE, true))
    {
        return targets;
    }
    let labels = match y.cast::<numpy::PyUntypedArray>() {
        Ok(array) if numpy::PyUntypedArrayMethods::ndim(array) == 1 => {
            y.call_method0(pyo3::intern!(py, "tolist")).ok()?
        }
        Ok(_) => return None,
        Err(_) => y.clone(),
    };
    let labels = match labels.cast_exact::<pyo3::types::PyList>() {
        Ok(list) => list.clone(),
        Err(_) => labels.cast_exact::<pyo3::types::PyTuple>().ok()?.to_list(),
    };
    if labels.len() != n_rows {
        return None;
    }
    labels.iter().map(target).collect()
}

/// A fresh float64 array of `n_rows` values, or `n_rows` × `columns` (Some), uninitialised:
/// see [`values`].
pub(super) fn output(py: Python<'_>, n_rows: usize, columns: Option<usize>) -> Bound<'_, PyAny> {
    // SAFETY: its values are written (by `values`) before Python sees it.
    unsafe {
        match columns {
            None => PyArray1::<f64>::new(py, n_rows, false).into_any(),
            Some(columns) => PyArray2::<f64>::new(py, [n_rows, columns], false).into_any(),
        }
    }
}

/// The `length` values of `array`, a fresh [`output`] of that many values, to fill.
///
/// # Safety
/// `array` is an [`output`] of `length` values that no one else holds yet; the values are all
/// written before it is given to Python.
#[allow(clippy::mut_from_ref)]
pub(super) unsafe fn values<'a>(array: &'a Bound<'_, PyAny>, length: usize) -> &'a mut [f64] {
    let fields = unsafe { &(*array.as_ptr().cast::<PyArrayObject>()).fields };
    unsafe { std::slice::from_raw_parts_mut(fields.data.cast::<f64>(), length) }
}

/// `classes.take(best)`: the labels of the best class indices (`classes`, an ndarray), a copy
/// of `class_rows[k]` (`classes[k:k+1]`) for one row; None if they are not arrays.
pub(super) fn take<'py>(
    classes: &Bound<'py, PyAny>,
    class_rows: &Bound<'py, PyTuple>,
    mut best: impl ExactSizeIterator<Item = usize>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = classes.py();
    let api = &npyffi::PY_ARRAY_API;
    let array_type = unsafe { npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type) };
    let is_array = |a: &Bound<'_, PyAny>| unsafe { ffi::Py_TYPE(a.as_ptr()) } == array_type;
    let n_rows = best.len();
    // SAFETY (both): arrays; NewCopy and TakeFrom return a new reference or NULL with an
    // exception set.
    let taken = if n_rows == 1 {
        let row = class_rows.get_item(best.next().unwrap_or(0))?;
        if !is_array(&row) {
            return Ok(None);
        }
        unsafe { api.PyArray_NewCopy(py, row.as_ptr().cast(), npyffi::NPY_ORDER::NPY_ANYORDER) }
    } else {
        if !is_array(classes) {
            return Ok(None);
        }
        let indices = unsafe { PyArray1::<isize>::new(py, n_rows, false) };
        // SAFETY: the fresh array, all of it written here before NumPy reads it.
        let slots =
            unsafe { indices.as_slice_mut() }.map_err(|e| PyValueError::new_err(e.to_string()))?;
        slots
            .iter_mut()
            .zip(best)
            .for_each(|(slot, k)| *slot = k as isize);
        let (clip, out) = (npyffi::NPY_CLIPMODE::NPY_RAISE, std::ptr::null_mut());
        let (classes, indices) = (classes.as_ptr().cast(), indices.as_ptr());
        unsafe { api.PyArray_TakeFrom(py, classes, indices, 0, out, clip) }
    };
    unsafe { Bound::from_owned_ptr_or_err(py, taken).map(Some) }
}
