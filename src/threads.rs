//! Work on a thread of its own, or on the calling thread when the system refuses the thread (at
//! its limit on threads or memory), which only takes longer: the one place of that rule, for
//! every call that uses more threads than the caller's.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};

/// Work given to [`spawn_or_keep`]: running on its thread, or refused one and kept to do here.
pub(crate) enum Spawned<'scope, T, F> {
    /// Its thread, which yields the result.
    Thread(ScopedJoinHandle<'scope, Option<T>>),
    Refused(F),
}

/// `work` on a new thread of `scope`, or kept (given back) when the system refuses the thread.
pub(crate) fn spawn_or_keep<'scope, T, F>(
    scope: &'scope Scope<'scope, '_>,
    work: F,
) -> Spawned<'scope, T, F>
where
    T: Send + 'scope,
    F: FnOnce() -> T + Send + 'scope,
{
    // The work waits in a slot that its thread empties; a thread that never started left it.
    let slot = Arc::new(Mutex::new(Some(work)));
    let theirs = Arc::clone(&slot);
    let thread = std::thread::Builder::new().spawn_scoped(scope, move || {
        let work = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
        work.map(|work| work())
    });
    match thread {
        Ok(thread) => Spawned::Thread(thread),
        Err(_) => {
            let work = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            Spawned::Refused(work.expect("a thread that never started left its work"))
        }
    }
}

impl<T, F: FnOnce() -> T> Spawned<'_, T, F> {
    /// The work's result: its thread's (whose panic is resumed here), or the kept work done here.
    pub(crate) fn join(self) -> T {
        match self {
            Spawned::Thread(thread) => {
                let result = thread.join();
                let result = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                result.expect("a started thread takes its work")
            }
            Spawned::Refused(work) => work(),
        }
    }
}
