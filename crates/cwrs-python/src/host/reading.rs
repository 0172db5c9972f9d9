//! Waiting for the reading thread of a LIBSVM file ([`cwrs::data::libsvm::stream_file`]) as a
//! host does: in slices, detached, its `check` (Python: the signal handlers) run every
//! [`STOP_POLL`] in between, so a FIFO that no one writes to or a slow disk never blocks it.

use cwrs::data::libsvm::{Chunk, FileChunks, Pending};
use cwrs::data::STOP_POLL;
use cwrs::error::CwError;

use crate::host::shared::{internal_error, wait, Detach, Internal};

/// The next chunk of `chunks` (`None` at the end). Refused in a process forked from the one
/// that made the chunks.
pub fn next_chunk<E: From<Internal> + From<CwError>>(
    chunks: &FileChunks,
    detach: impl Detach + Copy,
    check: impl FnMut() -> Result<(), E>,
) -> Result<Option<Chunk>, E> {
    if !chunks.made_in_this_process() {
        return Err(Internal(
            "this iter_svmlight iterator was made before a fork, in another process: its \
             reading thread does not exist here; make a new iterator in this process"
                .into(),
        )
        .into());
    }
    let names = ("SvmlightChunks", "__next__");
    Ok(wait(detach, names, STOP_POLL, check, |t| chunks.poll(t))??)
}

/// The result of `pending`; an interrupted wait cancels the work. A panic of the work is an
/// [`Internal`] error of `class.operation`.
pub fn result_of<T: Send, E: From<Internal> + From<CwError>>(
    mut pending: Pending<T>,
    detach: impl Detach + Copy,
    (class, operation): (&str, &str),
    check: impl FnMut() -> Result<(), E>,
) -> Result<T, E> {
    let outcome = wait(detach, (class, operation), STOP_POLL, check, |t| {
        pending.poll(t)
    });
    match outcome.inspect_err(|_| pending.cancel())? {
        Ok(result) => Ok(result?),
        Err(bug) => Err(internal_error(class, operation, &bug).into()),
    }
}
