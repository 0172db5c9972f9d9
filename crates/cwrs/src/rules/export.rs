//! The rule table as named states (Python: `_cwrs.rule_table()`, a list of dicts), from which
//! the Python estimators take their hyper-parameter checks and docstrings.

use super::{Entry, Param, TABLE};
use crate::model::state::State;

/// Every rule: name, kind ("classification" or "regression"), second_order, params (name,
/// default, low, high, low_open, high_open, requirement, doc), title, reference, summary
/// (the update in words), weighted (the step of a row of weight h in words) and
/// weighted_exact (whether that step is the limit of repetition, docs/design.md §2.10).
pub fn table_states() -> Vec<State<'static>> {
    TABLE.iter().map(|entry| entry_state(entry)).collect()
}

fn entry_state(entry: &Entry) -> State<'static> {
    let params = entry.params.iter().map(param_state).collect::<Vec<_>>();
    State::default()
        .with("name", entry.name)
        .with("kind", entry.kind().name())
        .with("second_order", entry.second_order)
        .with("params", params)
        .with("title", entry.title)
        .with("reference", entry.reference)
        .with("summary", entry.summary)
        .with("weighted", entry.weighted.summary)
        .with("weighted_exact", entry.weighted.exact)
}

fn param_state(param: &Param) -> State<'static> {
    let range = param.range;
    State::default()
        .with("name", param.name)
        .with("default", param.default)
        .with("low", range.low)
        .with("high", range.high)
        .with("low_open", range.low_open)
        .with("high_open", range.high_open)
        .with("requirement", range.requirement())
        .with("doc", param.doc)
}
