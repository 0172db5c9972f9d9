//! Work on a thread of its own, or on the calling thread when the system refuses the thread (at
//! its limit on threads or memory), which only takes longer: the one place of that rule, for
//! every call that uses more threads than the caller's.

use std::convert::Infallible;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Duration;

/// Work given to [`spawn_or_keep`]: running on its thread, or refused one and kept to do here.
pub(crate) enum Spawned<'scope, T, F> {
    /// Its thread, which yields the result, and a channel that disconnects when the work ends.
    Thread(ScopedJoinHandle<'scope, Option<T>>, Receiver<Infallible>),
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
    let (running, ended) = mpsc::channel();
    let theirs = Arc::clone(&slot);
    let thread = std::thread::Builder::new().spawn_scoped(scope, move || {
        let _running = running;
        let work = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
        work.map(|work| work())
    });
    match thread {
        Ok(thread) => Spawned::Thread(thread, ended),
        Err(_) => {
            let work = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
            Spawned::Refused(work.expect("a thread that never started left its work"))
        }
    }
}

impl<T, F: FnOnce() -> T> Spawned<'_, T, F> {
    /// The work's result: its thread's (whose panic is resumed here), or the kept work done here.
    pub(crate) fn join(self) -> T {
        self.join_polling(Duration::MAX, || {})
    }

    /// [`Spawned::join`], calling `poll` every `interval` while the thread works (the caller's
    /// check for an interruption, which only the caller's thread may ask).
    pub(crate) fn join_polling(self, interval: Duration, mut poll: impl FnMut()) -> T {
        match self {
            Spawned::Thread(thread, ended) => {
                while let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(interval) {
                    poll();
                }
                let result = thread.join();
                let result = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                result.expect("a started thread takes its work")
            }
            Spawned::Refused(work) => work(),
        }
    }
}
