//! A model's state by name: what [`crate::model::Model::state`] returns and
//! [`crate::model::Model::from_state`] takes back, and (without the learned entries) the
//! configuration a new model is built from. Python sees it as a dict; pickles, `.cwrs` files and
//! the river adapter store it (docs/model-format.md lists the entries of every kind).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::CwError;

/// The version of the entries' layout; a state of another version is refused.
pub const STATE_VERSION: i64 = 1;

/// One entry of a [`State`]; arrays are borrowed (from Python's buffers) or owned.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// An optional entry left empty (Python's `None`).
    None,
    /// A bool.
    Bool(bool),
    /// An int (a count, an index).
    Int(i64),
    /// A float.
    Float(f64),
    /// A string (a name: a rule, a form, a kind).
    Str(String),
    /// A float64 array (means, covariances, sums).
    Floats(Cow<'a, [f64]>),
    /// A uint32 array (column indices).
    U32s(Cow<'a, [u32]>),
    /// A uint64 array (counters, coordinates).
    U64s(Cow<'a, [u64]>),
    /// An int64 array.
    I64s(Cow<'a, [i64]>),
    /// Named numbers in order: a rule's hyper-parameters.
    Params(Vec<(String, f64)>),
    /// Nested states: one per class of a multiclass kernel model.
    States(Vec<State<'a>>),
    /// Named values shown together (a model's configuration, a kernel model's support rows);
    /// never read from a saved state.
    State(Box<State<'a>>),
}

impl Value<'_> {
    /// What the value is, for error messages.
    fn describe(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "a bool",
            Value::Int(_) => "an int",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Floats(_) => "a float64 array",
            Value::U32s(_) => "a uint32 array",
            Value::U64s(_) => "a uint64 array",
            Value::I64s(_) => "an int64 array",
            Value::Params(_) => "a dict of numbers",
            Value::States(_) => "a list of states",
            Value::State(_) => "a state",
        }
    }
}

macro_rules! value_from {
    ($($t:ty => $variant:ident $(($wrap:path))?),*) => {
        $(impl<'a> From<$t> for Value<'a> {
            fn from(value: $t) -> Value<'a> {
                Value::$variant($($wrap)?(value))
            }
        })*
    };
}

value_from!(bool => Bool, i64 => Int, f64 => Float, String => Str,
    Vec<f64> => Floats(Cow::Owned), Vec<u32> => U32s(Cow::Owned), Vec<u64> => U64s(Cow::Owned),
    Vec<(String, f64)> => Params, Vec<State<'a>> => States, &'a [f64] => Floats(Cow::Borrowed),
    &'a [u64] => U64s(Cow::Borrowed), &'a [i64] => I64s(Cow::Borrowed),
    Cow<'a, [f64]> => Floats, Cow<'a, [u32]> => U32s, Cow<'a, [u64]> => U64s,
    Cow<'a, [i64]> => I64s, State<'a> => State(Box::new));

impl From<&str> for Value<'_> {
    fn from(value: &str) -> Self {
        Value::Str(value.to_string())
    }
}

impl From<usize> for Value<'_> {
    fn from(value: usize) -> Self {
        Value::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl From<u64> for Value<'_> {
    fn from(value: u64) -> Self {
        Value::Int(i64::try_from(value).unwrap_or(i64::MAX))
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Value::None, Into::into)
    }
}

impl Value<'_> {
    /// The value with every array owned.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::None => Value::None,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::Float(x) => Value::Float(x),
            Value::Str(s) => Value::Str(s),
            Value::Floats(x) => Value::Floats(Cow::Owned(x.into_owned())),
            Value::U32s(x) => Value::U32s(Cow::Owned(x.into_owned())),
            Value::U64s(x) => Value::U64s(Cow::Owned(x.into_owned())),
            Value::I64s(x) => Value::I64s(Cow::Owned(x.into_owned())),
            Value::Params(p) => Value::Params(p),
            Value::States(s) => Value::States(s.into_iter().map(State::into_owned).collect()),
            Value::State(s) => Value::State(Box::new(s.into_owned())),
        }
    }
}

/// An entry of a state as a host passes it (Python: a dict), its arrays held by `A` (the host's
/// array objects, kept borrowed while a [`State`] made from them with [`State::from_held`] lives):
/// one pass over the host's values collects them, so that the state refers to the host's
/// buffers instead of copying them (a large covariance).
pub enum Held<A> {
    /// A value that is not an array, copied into the state.
    Value(Value<'static>),
    /// An array of the host's, borrowed by the state.
    Array(A),
    /// Nested states (see [`Value::States`]), entry by entry.
    States(Vec<Vec<(String, Held<A>)>>),
}

/// An array a host holds for a [`Held`] entry.
pub trait HeldArray {
    /// The values, borrowed where they can be.
    fn value(&self) -> Value<'_>;
}

/// Named entries and the version of their layout.
#[derive(Clone, Debug, PartialEq)]
pub struct State<'a> {
    /// The layout's version, [`STATE_VERSION`] for a state this crate writes or reads.
    pub version: i64,
    /// The entries by name (docs/model-format.md lists each kind's).
    pub entries: BTreeMap<String, Value<'a>>,
}

impl Default for State<'_> {
    fn default() -> Self {
        State {
            version: STATE_VERSION,
            entries: BTreeMap::new(),
        }
    }
}

/// The error of a missing or malformed entry.
fn invalid(key: &str, problem: &str) -> CwError {
    CwError::InvalidState(format!("entry {key:?} {problem}"))
}

impl<'a> State<'a> {
    /// `self` with `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<Value<'a>>) -> Self {
        self.set(key, value);
        self
    }

    /// Sets `key` to `value`, replacing any entry of that name.
    pub fn set(&mut self, key: &str, value: impl Into<Value<'a>>) {
        self.entries.insert(key.to_string(), value.into());
    }

    /// The state with every array owned.
    pub fn into_owned(self) -> State<'static> {
        State {
            version: self.version,
            entries: (self.entries.into_iter())
                .map(|(k, v)| (k, v.into_owned()))
                .collect(),
        }
    }

    /// Every entry of `other` added to (or replacing those of) `self`.
    pub fn merged(mut self, other: Self) -> Self {
        self.entries.extend(other.entries);
        self
    }

    /// The state of the named `entries`, whose `version` entry (an int) becomes its version;
    /// `versioned`: that entry is required (a saved state; a configuration has none).
    pub fn from_entries(
        entries: Vec<(String, Value<'a>)>,
        versioned: bool,
    ) -> Result<Self, CwError> {
        let mut state = State::default();
        state.entries.extend(entries);
        match state.entries.remove("version") {
            Some(Value::Int(version)) => state.version = version,
            None if !versioned => {}
            _ => return Err(invalid("version", "must be an int")),
        }
        Ok(state)
    }

    /// The state of the named `held` entries (see [`Held`]), their arrays borrowed from the
    /// holders; `versioned` as in [`State::from_entries`] (nested states always are).
    pub fn from_held<A: HeldArray>(
        held: &'a [(String, Held<A>)],
        versioned: bool,
    ) -> Result<Self, CwError> {
        let value = |held: &'a Held<A>| match held {
            Held::Value(value) => Ok(value.clone()),
            Held::Array(array) => Ok(array.value()),
            Held::States(states) => {
                let states = states.iter().map(|s| State::from_held(s, true));
                states.collect::<Result<_, _>>().map(Value::States)
            }
        };
        let entries = held
            .iter()
            .map(|(key, held)| Ok((key.clone(), value(held)?)));
        State::from_entries(entries.collect::<Result<_, CwError>>()?, versioned)
    }

    /// Refuses a state of another layout version.
    pub fn check_version(&self) -> Result<(), CwError> {
        if self.version == STATE_VERSION {
            Ok(())
        } else {
            Err(CwError::InvalidState(format!(
                "version {} is not known to this cwrs (it reads version {STATE_VERSION}); \
                 upgrade cwrs",
                self.version
            )))
        }
    }

    /// The entry `key`, an invalid-state error if it is missing.
    pub fn get(&self, key: &str) -> Result<&Value<'a>, CwError> {
        self.entries
            .get(key)
            .ok_or_else(|| invalid(key, "is missing"))
    }

    /// The entry, or `None` when it is absent or `None`.
    fn optional(&self, key: &str) -> Option<&Value<'a>> {
        self.entries.get(key).filter(|v| **v != Value::None)
    }

    fn typed<'s, T>(
        &'s self,
        key: &str,
        what: &str,
        pick: impl FnOnce(&'s Value<'a>) -> Option<T>,
    ) -> Result<T, CwError> {
        let value = self.get(key)?;
        pick(value)
            .ok_or_else(|| invalid(key, &format!("must be {what}, got {}", value.describe())))
    }

    /// A string entry.
    pub fn string(&self, key: &str) -> Result<&str, CwError> {
        self.typed(key, "a string", |v| match v {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// A string entry that may be absent or `None`.
    pub fn optional_string(&self, key: &str) -> Result<Option<&str>, CwError> {
        self.optional(key).map(|_| self.string(key)).transpose()
    }

    /// A bool entry.
    pub fn bool(&self, key: &str) -> Result<bool, CwError> {
        self.typed(key, "a bool", |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        })
    }

    /// A float entry (an int is taken as its float value).
    pub fn float(&self, key: &str) -> Result<f64, CwError> {
        self.typed(key, "a float", |v| match v {
            Value::Float(x) => Some(*x),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        })
    }

    /// A non-negative int entry.
    pub fn count<T: TryFrom<i64>>(&self, key: &str) -> Result<T, CwError> {
        self.typed(key, "a non-negative int in range", |v| match v {
            Value::Int(i) if *i >= 0 => T::try_from(*i).ok(),
            _ => None,
        })
    }

    /// A float entry that may be absent or `None`.
    pub fn optional_float(&self, key: &str) -> Result<Option<f64>, CwError> {
        self.optional(key).map(|_| self.float(key)).transpose()
    }

    /// A float64 array entry that may be absent or `None`.
    pub fn optional_floats(&self, key: &str) -> Result<Option<&[f64]>, CwError> {
        self.optional(key).map(|_| self.floats(key)).transpose()
    }

    /// A non-negative int entry that may be absent or `None`.
    pub fn optional_count<T: TryFrom<i64>>(&self, key: &str) -> Result<Option<T>, CwError> {
        self.optional(key).map(|_| self.count(key)).transpose()
    }

    /// A float64 array entry.
    pub fn floats(&self, key: &str) -> Result<&[f64], CwError> {
        self.typed(key, "a float64 array", |v| match v {
            Value::Floats(x) => Some(x.as_ref()),
            _ => None,
        })
    }

    /// A float64 array of exactly `len` values.
    pub fn floats_of(&self, key: &str, len: usize) -> Result<&[f64], CwError> {
        let values = self.floats(key)?;
        if values.len() == len {
            Ok(values)
        } else {
            Err(invalid(
                key,
                &format!("must hold {len} values, got {}", values.len()),
            ))
        }
    }

    /// A uint32 array entry.
    pub fn u32s(&self, key: &str) -> Result<&[u32], CwError> {
        self.typed(key, "a uint32 array", |v| match v {
            Value::U32s(x) => Some(x.as_ref()),
            _ => None,
        })
    }

    /// A uint64 array entry.
    pub fn u64s(&self, key: &str) -> Result<&[u64], CwError> {
        self.typed(key, "a uint64 array", |v| match v {
            Value::U64s(x) => Some(x.as_ref()),
            _ => None,
        })
    }

    /// A hyper-parameters entry: named numbers in order.
    pub fn params(&self, key: &str) -> Result<&[(String, f64)], CwError> {
        self.typed(key, "a dict of numbers", |v| match v {
            Value::Params(x) => Some(x.as_slice()),
            _ => None,
        })
    }

    /// A nested-states entry (one state per class of a multiclass kernel model).
    pub fn states(&self, key: &str) -> Result<&[State<'a>], CwError> {
        self.typed(key, "a list of states", |v| match v {
            Value::States(x) => Some(x.as_slice()),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's array: a vector that lends its values.
    struct HostArray(Vec<f64>);

    impl HeldArray for HostArray {
        fn value(&self) -> Value<'_> {
            Value::Floats(Cow::Borrowed(&self.0))
        }
    }

    #[test]
    fn held_entries_become_a_state_that_borrows_their_arrays() {
        let nested = vec![
            ("version".to_string(), Held::Value(Value::Int(1))),
            ("nu".to_string(), Held::Array(HostArray(vec![0.5]))),
        ];
        let held = vec![
            ("version".to_string(), Held::Value(Value::Int(1))),
            ("mean".to_string(), Held::Array(HostArray(vec![1.0, 2.0]))),
            ("classes".to_string(), Held::States(vec![nested])),
        ];
        let state = State::from_held(&held, true).unwrap();
        let Held::Array(mean) = &held[1].1 else {
            unreachable!()
        };
        assert!(std::ptr::eq(
            state.floats("mean").unwrap(),
            mean.0.as_slice()
        ));
        assert_eq!(
            state.states("classes").unwrap()[0].floats("nu"),
            Ok(&[0.5][..])
        );
        // A nested state needs its version; a configuration does not.
        let unversioned = vec![("nu".to_string(), Held::Array(HostArray(vec![])))];
        let held = vec![("classes".to_string(), Held::States(vec![unversioned]))];
        assert!(State::from_held(&held, true).is_err());
        assert!(State::from_held(&held[..0], false).is_ok());
    }

    #[test]
    fn entries_are_typed_and_errors_name_them() {
        let state = State::default()
            .with("rule", "AROW")
            .with("mean", vec![1.0, 2.0])
            .with("n", 3usize)
            .with("budget", None::<usize>);
        assert_eq!(state.string("rule"), Ok("AROW"));
        assert_eq!(state.floats_of("mean", 2), Ok(&[1.0, 2.0][..]));
        assert_eq!(state.count::<usize>("n"), Ok(3));
        assert_eq!(state.float("n"), Ok(3.0));
        assert_eq!(state.optional_count::<usize>("budget"), Ok(None));
        assert_eq!(state.optional_string("kernel"), Ok(None));
        let message = |e: CwError| e.to_string();
        assert_eq!(
            message(state.floats("absent").unwrap_err()),
            "entry \"absent\" is missing"
        );
        assert_eq!(
            message(state.u32s("mean").unwrap_err()),
            "entry \"mean\" must be a uint32 array, got a float64 array"
        );
        assert_eq!(
            message(state.floats_of("mean", 3).unwrap_err()),
            "entry \"mean\" must hold 3 values, got 2"
        );
        assert!(State::default().check_version().is_ok());
        let newer = State {
            version: STATE_VERSION + 1,
            ..State::default()
        };
        assert!(matches!(
            newer.check_version(),
            Err(CwError::InvalidState(_))
        ));
    }
}
