//! Long learning calls that the caller can interrupt (Python: Ctrl-C): the stop of
//! [`Model::partial_fit_stoppable`] asks the caller's check (Python: its signal handlers)
//! every [`STOP_POLL`]; an error the check gives (KeyboardInterrupt) ends the batch early, the
//! core restores the model, and the error is the caller's to raise: an interrupted call leaves
//! the model as it was, like any refused call. A batch too cheap to be worth a copy runs to its
//! end, and the caller handles the signal as soon as it returns.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;
use std::time::Instant;

use cwrs::data::STOP_POLL;
#[cfg(doc)]
use cwrs::model::Model;

/// The caller's check for an interruption, asked at most every [`STOP_POLL`] and only on the
/// thread that made it: a host's signal handlers run there (Python runs them on its main thread
/// only, so the check on a sharded fit's other threads never saw a signal, yet took the turn
/// of the one that could). It keeps the first error the check gives, which stops every thread.
pub struct Interrupt<E, F> {
    check: F,
    state: Mutex<(Instant, Option<E>)>,
    caller: ThreadId,
}

impl<E: Send, F: Fn() -> Result<(), E> + Sync> Interrupt<E, F> {
    pub fn new(check: F) -> Self {
        Interrupt {
            check,
            state: Mutex::new((Instant::now(), None)),
            caller: std::thread::current().id(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (Instant, Option<E>)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether to stop: asks the check when [`STOP_POLL`] has passed since the last time, on
    /// the thread that made the interrupt.
    pub fn stop(&self) -> bool {
        let mut state = self.lock();
        let caller = std::thread::current().id() == self.caller;
        if caller && state.1.is_none() && state.0.elapsed() >= STOP_POLL {
            state.0 = Instant::now();
            state.1 = (self.check)().err();
        }
        state.1.is_some()
    }

    /// The error the check gave, if it gave one.
    pub fn into_error(self) -> Option<E> {
        let state = self.state.into_inner();
        state.unwrap_or_else(PoisonError::into_inner).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check is asked only on the thread that made the interrupt (where Python's signal
    /// handlers run); another thread (a sharded fit's) sees its error once it has given one.
    #[test]
    fn an_interrupt_asks_its_check_on_the_calling_thread_only() {
        let caller = std::thread::current().id();
        let asked_on = std::sync::Mutex::new(Vec::new());
        let interrupt = Interrupt::new(|| {
            asked_on.lock().unwrap().push(std::thread::current().id());
            Err("stop")
        });
        std::thread::sleep(STOP_POLL);
        let elsewhere =
            || std::thread::scope(|scope| scope.spawn(|| interrupt.stop()).join().unwrap());
        assert!(!elsewhere());
        assert!(interrupt.stop());
        assert!(elsewhere());
        assert_eq!(*asked_on.lock().unwrap(), vec![caller]);
    }
}
