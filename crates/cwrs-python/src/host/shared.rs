//! A model shared by the threads of a program, and panics turned into errors: what the Python
//! bindings wrap around every call into the core. Free of Python, so that `cargo test` covers it.
//!
//! - [`catch_panic`]: a panic (a bug in the core) becomes an error value instead of unwinding
//!   into the caller.
//! - [`Shared`]: a model behind a read-write lock. Any number of threads read it at once
//!   (predictions); an update waits for the calls running on the model, and they for it. A thread
//!   never waits for the lock while holding the host's thread state (Python's GIL): it waits
//!   detached (see [`Detach`]), so the thread that holds the lock can always finish.
//! - An update that panics leaves the model in an unknown state (half updated): the lock is then
//!   poisoned and every later call on the model fails with [`Failure::Poisoned`] instead of
//!   using it. A read that panics leaves the model as it was.
//! - A call on a model from inside a call on the same model, on the same thread (a callback: a
//!   signal handler run during a long update), would wait for itself forever: it fails with
//!   [`Failure::Reentrant`] instead.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{LockResult, RwLock, TryLockError, TryLockResult};

pub use cwrs::error::catch_panic;

/// Why a call on a [`Shared`] model failed.
#[derive(Debug, PartialEq)]
pub enum Failure<E> {
    /// The call's own error (bad input, ...); the model is as it was.
    Error(E),
    /// The call panicked (a bug), with this message.
    Panic(String),
    /// An earlier update panicked: the model may be half updated and is no longer used.
    Poisoned,
    /// Called from inside a call on the same model on this thread, which holds it.
    Reentrant,
}

impl<E: From<Internal>> Failure<E> {
    /// The call's own error, or the host's error for a failure of `class.operation`.
    pub fn into_error(self, class: &str, operation: &str) -> E {
        let message = match self {
            Failure::Error(err) => return err,
            Failure::Panic(message) => return internal_error(class, operation, &message).into(),
            Failure::Reentrant => format!(
                "cwrs: {class}.{operation} was called from inside another call on the same model \
                 (one of its own calls, by a callback such as a kernel function or a signal \
                 handler); that call would wait for itself forever. Use a copy of the estimator \
                 inside the callback"
            ),
            Failure::Poisoned => format!(
                "cwrs: this {class} was left in an unknown state by an internal error in an \
                 earlier call and can no longer be used; refit it or load a saved copy"
            ),
        };
        Internal(message).into()
    }
}

/// A failure that is no fault of the caller's input (a bug, a call on a model from inside a call
/// on it, a poisoned model), as the message the host raises (Python: `RuntimeError`).
#[derive(Debug, PartialEq)]
pub struct Internal(pub String);

/// The message of a panic in `class.operation`.
pub fn internal_error(class: &str, operation: &str, message: &str) -> Internal {
    Internal(format!(
        "cwrs: internal error in {class}.{operation}: {message}; please report it"
    ))
}

/// Runs `f`, a call into the core that holds no model (constructors, readers), turning a panic
/// into an [`Internal`] error.
pub fn guarded<T, E: From<Internal>>(
    class: &str,
    operation: &str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    catch_panic(f).unwrap_or_else(|message| Err(internal_error(class, operation, &message).into()))
}

/// What `poll` gives, waited for detached (see [`Detach`]) in slices of `slice`, running the
/// host's `check` (Python: its signal handlers) between them: an error it gives
/// (KeyboardInterrupt) ends the wait. A panic in `poll` is an [`Internal`] error of
/// `class.operation`.
pub fn wait<T: Send, E: From<Internal>>(
    detach: impl Detach + Copy,
    (class, operation): (&str, &str),
    slice: std::time::Duration,
    mut check: impl FnMut() -> Result<(), E>,
    mut poll: impl FnMut(std::time::Duration) -> Option<T> + Send,
) -> Result<T, E> {
    loop {
        let polled = guarded(class, operation, || {
            Ok::<_, E>(detach.run_detached(|| poll(slice)))
        });
        match polled? {
            Some(value) => return Ok(value),
            None => check()?,
        }
    }
}

thread_local! {
    /// The addresses of the models this thread holds (calls in progress, innermost last).
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks a model as held by this thread while it lives.
struct Holding(usize);

impl Holding {
    /// `None` when this thread holds the model already.
    fn new(address: usize) -> Option<Holding> {
        HELD.with_borrow_mut(|held| {
            (!held.contains(&address)).then(|| {
                held.push(address);
                Holding(address)
            })
        })
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        HELD.with_borrow_mut(|held| {
            if let Some(k) = held.iter().rposition(|&a| a == self.0) {
                held.remove(k);
            }
        });
    }
}

/// Runs work with the caller's thread state released (for Python: without the GIL), so that
/// other threads run meanwhile.
pub trait Detach {
    fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R;
}

/// How much work a call does, which decides where it waits for the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// A batch: always run detached.
    Batch,
    /// Little work (one row, a getter): run attached when the model is free at once, since
    /// releasing and retaking the thread state would cost more than the work; otherwise wait
    /// and run detached.
    Quick,
}

/// A model that threads share: see the module documentation.
#[derive(Debug, Default)]
pub struct Shared<T> {
    model: RwLock<T>,
}

impl<T: Send + Sync> Shared<T> {
    pub fn new(model: T) -> Self {
        Shared {
            model: RwLock::new(model),
        }
    }

    /// Runs `f` on the model alongside other readers, after any update in progress.
    pub fn read<R: Send, E: Send>(
        &self,
        detach: impl Detach,
        work: Work,
        f: impl FnOnce(&T) -> Result<R, E> + Send,
    ) -> Result<R, Failure<E>> {
        let (try_lock, lock) = (|| self.model.try_read(), || self.model.read());
        access(self.address(), detach, work, try_lock, lock, |m| f(&m))
    }

    /// Runs `f` on the model alone, after the calls in progress on it.
    pub fn write<R: Send, E: Send>(
        &self,
        detach: impl Detach,
        work: Work,
        f: impl FnOnce(&mut T) -> Result<R, E> + Send,
    ) -> Result<R, Failure<E>> {
        let (try_lock, lock) = (|| self.model.try_write(), || self.model.write());
        access(self.address(), detach, work, try_lock, lock, |mut m| {
            f(&mut m)
        })
    }

    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}

/// A [`Shared`] model of the host class `class`, whose failures come back as the host's errors
/// `E` (see [`Failure::into_error`]).
pub struct Guarded<T, E> {
    class: &'static str,
    shared: Shared<T>,
    error: PhantomData<fn() -> E>,
}

impl<T: Send + Sync, E: Send + From<Internal>> Guarded<T, E> {
    pub fn new(class: &'static str, model: T) -> Self {
        Guarded {
            class,
            shared: Shared::new(model),
            error: PhantomData,
        }
    }

    /// Runs `f` on the model alongside other readers (see [`Shared::read`]).
    pub fn read<R: Send>(
        &self,
        detach: impl Detach,
        operation: &str,
        work: Work,
        f: impl FnOnce(&T) -> Result<R, E> + Send,
    ) -> Result<R, E> {
        let result = self.shared.read(detach, work, f);
        result.map_err(|failure| failure.into_error(self.class, operation))
    }

    /// Runs `f` on the model alone (see [`Shared::write`]).
    pub fn write<R: Send>(
        &self,
        detach: impl Detach,
        operation: &str,
        work: Work,
        f: impl FnOnce(&mut T) -> Result<R, E> + Send,
    ) -> Result<R, E> {
        let result = self.shared.write(detach, work, f);
        result.map_err(|failure| failure.into_error(self.class, operation))
    }
}

/// Locks with `try_lock` (attached, never waits) or `lock` (detached, waits), then runs `f`
/// on the guard; a panic anywhere becomes [`Failure::Panic`]. `address` identifies the model,
/// to refuse a call from inside a call on it.
fn access<G, R: Send, E: Send>(
    address: usize,
    detach: impl Detach,
    work: Work,
    try_lock: impl FnOnce() -> TryLockResult<G>,
    lock: impl FnOnce() -> LockResult<G> + Send,
    f: impl FnOnce(G) -> Result<R, E> + Send,
) -> Result<R, Failure<E>> {
    let run = |guard: LockResult<G>| match guard {
        Ok(guard) => f(guard).map_err(Failure::Error),
        Err(_) => Err(Failure::Poisoned),
    };
    let Some(_holding) = Holding::new(address) else {
        return Err(Failure::Reentrant);
    };
    catch_panic(|| {
        if work != Work::Batch {
            match try_lock() {
                Ok(guard) => return run(Ok(guard)),
                Err(TryLockError::Poisoned(_)) => return Err(Failure::Poisoned),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        detach.run_detached(|| run(lock()))
    })
    .unwrap_or_else(|message| Err(Failure::Panic(message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Barrier;

    /// Records whether work ran detached.
    struct Probe<'a>(&'a AtomicBool);

    impl Detach for Probe<'_> {
        fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
            self.0.store(true, Ordering::SeqCst);
            f()
        }
    }

    fn detached(
        call: impl FnOnce(Probe) -> Result<i32, Failure<String>>,
    ) -> (Result<i32, Failure<String>>, bool) {
        let flag = AtomicBool::new(false);
        let result = call(Probe(&flag));
        (result, flag.load(Ordering::SeqCst))
    }

    #[test]
    fn catch_panic_gives_the_message() {
        assert_eq!(catch_panic(|| 7), Ok(7));
        assert_eq!(
            catch_panic(|| -> i32 { panic!("static text") }),
            Err("static text".to_string())
        );
        let index = 5;
        let result = catch_panic(|| [1, 2, 3][index % 8]);
        assert!(result.unwrap_err().contains("index out of bounds"));
        let boxed = catch_panic(|| std::panic::panic_any(42_u8));
        assert_eq!(boxed, Err("panic with a non-text payload".to_string()));
    }

    #[test]
    fn quick_work_runs_attached_and_batches_detached() {
        let shared = Shared::new(1);
        let (result, was_detached) =
            detached(|p| shared.read(p, Work::Quick, |m| Ok::<_, String>(*m + 1)));
        assert_eq!((result, was_detached), (Ok(2), false));
        let (result, was_detached) = detached(|p| {
            shared.write(p, Work::Batch, |m| {
                *m += 10;
                Ok::<_, String>(*m)
            })
        });
        assert_eq!((result, was_detached), (Ok(11), true));
        let (result, _) = detached(|p| shared.read(p, Work::Quick, |_| Err("bad".to_string())));
        assert_eq!(result, Err(Failure::Error("bad".to_string())));
    }

    #[test]
    fn quick_work_waits_detached_while_the_model_is_busy() {
        let shared = Shared::new(0);
        let (started, release) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let flag = AtomicBool::new(false);
                shared
                    .write(Probe(&flag), Work::Batch, |m| {
                        started.wait();
                        release.wait();
                        *m = 5;
                        Ok::<_, String>(())
                    })
                    .unwrap();
            });
            started.wait();
            // The writer holds the model: a quick read cannot run attached, so it waits detached
            // (the probe releases the writer just before the read blocks) and sees the update.
            struct ReleaseThenRun<'a>(&'a Barrier);
            impl Detach for ReleaseThenRun<'_> {
                fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
                    self.0.wait();
                    f()
                }
            }
            let seen = shared.read(ReleaseThenRun(&release), Work::Quick, |m| {
                Ok::<_, String>(*m)
            });
            assert_eq!(seen, Ok(5));
        });
    }

    #[test]
    fn a_call_from_inside_a_call_on_the_same_model_fails_instead_of_deadlocking() {
        let (shared, other) = (Shared::new(1), Shared::new(2));
        let flag = AtomicBool::new(false);
        let nested = shared.write(Probe(&flag), Work::Batch, |m| {
            let inner = shared.read(Probe(&flag), Work::Quick, |m| Ok::<_, String>(*m));
            assert_eq!(inner, Err(Failure::Reentrant));
            let inner = shared.write(Probe(&flag), Work::Batch, |m| Ok::<_, String>(*m));
            assert_eq!(inner, Err(Failure::Reentrant));
            // Another model is free to use.
            let elsewhere = other.read(Probe(&flag), Work::Quick, |o| Ok::<_, String>(*o));
            *m += elsewhere.unwrap();
            Ok::<_, String>(*m)
        });
        assert_eq!(nested, Ok(3));
        let after = shared.read(Probe(&flag), Work::Batch, |m| Ok::<_, String>(*m));
        assert_eq!(after, Ok(3));
    }

    #[test]
    fn a_panic_becomes_a_failure_and_a_panicking_update_poisons_the_model() {
        let shared = Shared::new(vec![1.0, 2.0]);
        for work in [Work::Quick, Work::Batch] {
            let (result, _) = detached(|p| {
                shared.read(p, work, |m| -> Result<i32, String> {
                    panic!("read {}", m.len())
                })
            });
            assert_eq!(result, Err(Failure::Panic("read 2".to_string())));
        }
        // A read that panicked left the model usable.
        let (result, _) = detached(|p| shared.read(p, Work::Quick, |m| Ok(m.len() as i32)));
        assert_eq!(result, Ok(2));
        let (result, _) = detached(|p| {
            shared.write(p, Work::Batch, |m| -> Result<i32, String> {
                m[0] = f64::NAN; // half updated
                panic!("update")
            })
        });
        assert_eq!(result, Err(Failure::Panic("update".to_string())));
        for work in [Work::Quick, Work::Batch] {
            let (read, _) = detached(|p| shared.read(p, work, |m| Ok(m.len() as i32)));
            assert_eq!(read, Err(Failure::Poisoned));
            let (write, _) = detached(|p| shared.write(p, work, |m| Ok(m.len() as i32)));
            assert_eq!(write, Err(Failure::Poisoned));
        }
    }
}
