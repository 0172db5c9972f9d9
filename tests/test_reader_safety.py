"""The LIBSVM reader and long native calls are safe: partial_fit_file is all or nothing, memory
exhaustion raises MemoryError, a FIFO or a fork never freezes or hangs the interpreter, Ctrl-C
interrupts long calls with the model restored, compressed files are read, `zero_based` takes
exactly True, False or "auto", and errors name the file and the line.

Whatever could hang on the code this replaced runs in a subprocess with a generous timeout, and
the verdict never depends on timing: the subprocess either prints its result or is killed."""

import bz2
import gzip
import lzma
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import cwrs
from cwrs._svmlight import zero_based_file

POSIX = pytest.mark.skipif(os.name != "posix", reason="FIFOs, signals and fork are POSIX")


def run_script(*parts, timeout=120):
    """Runs the code of `parts` (each dedented) in a fresh interpreter; its stdout, or a
    failure if it hangs or fails."""
    code = "".join(textwrap.dedent(part) for part in parts)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the script hung")
    assert done.returncode == 0, done.stderr
    return done.stdout


# Script code: SIGINT after `delay` seconds into each of `calls`, printing whether the call was
# interrupted and then whether the estimator is exactly as it was before the first.
INTERRUPT_EACH = """
    import signal, threading

    def interrupt_each(est, calls, delay):
        before = repr(est.__getstate__())
        for call in calls:
            threading.Timer(delay, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT)).start()
            try:
                call()
                print("finished")
                before = repr(est.__getstate__())
            except KeyboardInterrupt:
                print("interrupted", repr(est.__getstate__()) == before)
"""


def stream_text(n_rows, seed=0, n_features=20):
    rng = np.random.RandomState(seed)
    lines = []
    for _ in range(n_rows):
        columns = np.sort(rng.choice(n_features, size=4, replace=False))
        label = 1 if rng.rand() > 0.5 else -1
        lines.append(f"{label} " + " ".join(f"{j + 1}:{rng.randn():.4f}" for j in columns))
    return "\n".join(lines) + "\n"


def model_state(est):
    """Everything that defines a fitted estimator, comparable bit for bit."""
    state = est.__getstate__()
    kind, arrays = state.pop("_model")
    return repr(state), kind, repr(arrays)


# --------------------------------------------------------------- partial_fit_file: all or nothing
@pytest.mark.parametrize(
    "last_line, message",
    [
        ("1 3:x", 'line 20003: expected index:value, got "3:x"'),
        ("7 3:1", "line 20003: y contains labels [7.0]"),
        ("1 3:1 99:1", "line 20003: n_features was set to 20, but the line has the index 99"),
    ],
    ids=["malformed", "label", "too-wide"],
)
@pytest.mark.parametrize("fitted", [False, True])
def test_partial_fit_file_keeps_nothing_of_a_failed_file(tmp_path, last_line, message, fitted):
    path = tmp_path / "stream.libsvm"
    path.write_text("# a header\n\n" + stream_text(20_000) + last_line + "\n")
    est = cwrs.AROW()
    if fitted:
        est.partial_fit(np.eye(2, 20), [-1, 1], classes=[-1, 1])
    before = model_state(est) if fitted else None
    with pytest.raises(ValueError) as info:
        est.partial_fit_file(path, classes=[-1, 1], n_features=20, chunk_rows=5000)
    assert str(info.value).startswith(f"{path}: {message}")
    if fitted:
        assert model_state(est) == before
    else:
        assert not hasattr(est, "n_features_in_") and not hasattr(est, "_model")
    # The restored estimator still learns, with its one-row path.
    est.partial_fit(np.eye(2, 20), [-1, 1], classes=[-1, 1])
    est.partial_fit(np.eye(1, 20), [1])


@POSIX
def test_partial_fit_file_interrupted_restores_the_model(tmp_path):
    """Ctrl-C while partial_fit_file waits for the rest of a FIFO: KeyboardInterrupt, and the
    20,000 rows learned so far are undone (the writer never ends the file, so the call can only
    end by the interrupt)."""
    source = tmp_path / "rows.libsvm"
    source.write_text(stream_text(20_000))
    out = run_script(f"""
        import os, signal, threading, numpy as np, cwrs
        fifo = {str(tmp_path / "fifo")!r}
        os.mkfifo(fifo)
        with open({str(source)!r}) as f:
            text = f.read()
        def write():
            with open(fifo, "w") as f:
                f.write(text)
                f.flush()
                done.wait()
        done = threading.Event()
        threading.Thread(target=write, daemon=True).start()
        est = cwrs.AROW().partial_fit(np.eye(2, 20), [-1, 1], classes=[-1, 1])
        before = repr(est.__getstate__())
        def interrupt():
            while est.n_updates_ < 1000:  # some of the file is learned
                threading.Event().wait(0.01)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
        try:
            est.partial_fit_file(fifo, chunk_rows=100)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted", repr(est.__getstate__()) == before)
        done.set()
    """)
    assert out.split() == ["interrupted", "True"]


# --------------------------------------------------------------- memory
# Limits the address space of a test script to what it uses plus 400 MiB.
LIMIT_MEMORY = """
    import os, resource
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + 400 * 2**20, resource.RLIM_INFINITY))
"""


@POSIX
@pytest.mark.parametrize("kind", ["one endless line", "endless lines"])
def test_running_out_of_memory_raises_memory_error(tmp_path, kind):
    """Under an address-space limit, reading input that never ends raises MemoryError (the
    process used to abort). The input comes from a FIFO fed by a thread, so nothing is written
    to disk."""
    start, piece = ("1 ", "1:1 " * 1000) if kind == "one endless line" else (
        "", "1 " + " ".join(f"{j}:1" for j in range(1, 61)) + "\n")
    out = run_script(f"""
        import os, resource, threading, cwrs
        fifo = {str(tmp_path / "fifo")!r}
        os.mkfifo(fifo)
        def write():
            try:
                with open(fifo, "w") as f:
                    f.write({start!r})
                    while True:
                        f.write({piece!r})
            except OSError:  # the reader gave up
                pass
        threading.Thread(target=write, daemon=True).start()
    """, LIMIT_MEMORY, """
        try:
            cwrs.load_svmlight(fifo, zero_based=False)
            print("read it all?")
        except MemoryError as error:
            print("MemoryError", fifo in str(error))
    """)
    assert out.split() == ["MemoryError", "True"]


@POSIX
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_nul_bytes_are_not_a_libsvm_file():
    """/dev/zero is refused after its first MiB (in a subprocess under a memory limit: reading
    it to the end would take all the memory there is)."""
    out = run_script(LIMIT_MEMORY, """
    import cwrs
    for read in (lambda: cwrs.load_svmlight("/dev/zero", zero_based=False),
                 lambda: next(iter(cwrs.iter_svmlight("/dev/zero")))):
        try:
            read()
        except ValueError as error:
            print(str(error) == "/dev/zero: line 1: NUL bytes: this is not a LIBSVM text file")
    """)
    assert out.split() == ["True", "True"]


# --------------------------------------------------------------- FIFOs, threads, fork, re-entry
@POSIX
def test_a_fifo_without_writer_freezes_no_thread_and_ctrl_c_interrupts(tmp_path):
    """Opening a FIFO blocks until a writer comes: the other threads run meanwhile (here the
    writer itself, a Python thread), and Ctrl-C interrupts the wait."""
    out = run_script(f"""
        import os, signal, sys, threading, cwrs
        fifo = {str(tmp_path / "fifo")!r}
        os.mkfifo(fifo)
        def write():
            with open(fifo, "w") as f:
                f.write("1 1:1\\n-1 2:1\\n")
        threading.Thread(target=write).start()
        X, y = cwrs.load_svmlight(fifo, zero_based=False)
        print(X.shape, y.tolist())
        threading.Thread(target=write).start()
        print([X.shape for X, _ in cwrs.iter_svmlight(fifo)])
        # No writer at all: only Ctrl-C ends the wait.
        threading.Timer(0.2, signal.pthread_kill,
                        (threading.main_thread().ident, signal.SIGINT)).start()
        for call in (lambda: cwrs.load_svmlight(fifo, zero_based=False),):
            try:
                call()
            except KeyboardInterrupt:
                print("interrupted")
        try:
            cwrs.iter_svmlight(fifo, zero_based="auto")
        except ValueError as error:
            print("auto:", "pass zero_based=True or False" in str(error))
        sys.stdout.flush()
        os._exit(0)  # the abandoned opener still waits for a writer
    """)
    assert out.splitlines() == [
        "(2, 2) [1.0, -1.0]", "[(2, 2)]", "interrupted", "auto: True"
    ]


@POSIX
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_an_iterator_used_after_fork_raises_in_the_child(tmp_path):
    path = tmp_path / "data.libsvm"
    path.write_text(stream_text(50))
    out = run_script(f"""
        import os, cwrs
        chunks = cwrs.iter_svmlight({str(path)!r}, chunk_rows=10)
        next(chunks)
        pid = os.fork()
        if pid == 0:
            try:
                next(chunks)
                os._exit(1)
            except RuntimeError as error:
                os._exit(3 if "before a fork" in str(error) else 2)
        _, status = os.waitpid(pid, 0)
        print(os.WEXITSTATUS(status), sum(X.shape[0] for X, _ in chunks))
    """)
    assert out.split() == ["3", "40"]


def test_a_kernel_calling_its_own_estimator_raises_instead_of_deadlocking():
    out = run_script("""
        import numpy as np, cwrs
        X = np.random.RandomState(0).randn(6, 3)
        y = np.array([1, -1, 1, -1, 1, -1])
        calls = []
        def kernel(A, B):
            if calls:
                est.decision_function(X[:1])
            return A @ B.T
        est = cwrs.AROW(kernel=kernel).partial_fit(X, y, classes=[-1, 1])
        calls.append(1)
        for call in (lambda: est.partial_fit(X, y), lambda: est.fit(X, y)):
            try:
                call()
            except RuntimeError as error:
                print("its own calls" in str(error))
    """)
    assert out.split() == ["True", "True"]


# --------------------------------------------------------------- Ctrl-C in long native calls
@POSIX
@pytest.mark.parametrize(
    "make",
    ["cwrs.AROW(covariance='full')", "cwrs.AROWRegressor(covariance='full')",
     "cwrs.SCW1(multi_class='ovr', covariance='full')", "cwrs.AROW(kernel='rbf', budget=2000)"],
)
def test_ctrl_c_interrupts_a_long_call_and_restores_the_model(make):
    """A batch of seconds (a full covariance at d = 1,000 over 4,000 rows; a kernel model's
    budget of 2,000 support rows over 40,000): SIGINT ends the call with KeyboardInterrupt, and
    the model is exactly as before it (for partial_fit, with and without progressive scores, and
    fit)."""
    out = run_script(INTERRUPT_EACH, f"""
        import numpy as np, cwrs
        rng = np.random.RandomState(0)
        kernel = "kernel" in {make!r}
        X = rng.randn(40_000, 4) if kernel else rng.randn(4_000, 1_000)
        est = {make}
        regressor = isinstance(est, cwrs.Regressor)
        y = X[:, 0] if regressor else np.arange(len(X)) % (2 if kernel else 3)
        est.fit(X[:30], y[:30])
        scored = lambda: est.partial_fit(X, y, return_scores=True)
        interrupt_each(est, (lambda: est.partial_fit(X, y), lambda: est.fit(X, y), scored), 0.2)
    """)
    assert out.splitlines() == ["interrupted True"] * 3


@POSIX
@pytest.mark.parametrize(
    "make, width",
    [("cwrs.AROW(covariance='full')", 1400), ("cwrs.AROW(covariance='lowrank', rank=50)", 2000),
     ("cwrs.AROW(kernel='rbf', budget=500)", 10)],
)
def test_ctrl_c_interrupts_a_short_expensive_batch_and_restores_the_model(make, width):
    """Fewer rows than any fixed count (3,000, each learned by many multiply-adds, a second or
    more in all: ten times the signal's delay, so that a loaded machine still sends it in time):
    Ctrl-C is polled by the work done, so SIGINT during the batch ends it with KeyboardInterrupt
    and the model exactly as before (a fitted one: restored from its copy; a fresh one: built
    again), not once the whole batch was learned."""
    out = run_script(INTERRUPT_EACH, f"""
        import numpy as np, cwrs
        rng = np.random.RandomState(0)
        X = rng.randn(3000, {width})
        y = np.where(X[:, 0] + 0.5 * rng.randn(3000) > 0, 1, -1)
        est = {make}.partial_fit(X[:200], y[:200], classes=[-1, 1])
        interrupt_each(est, (lambda: est.partial_fit(X, y), lambda: est.fit(X, y)), 0.1)
    """)
    assert out.splitlines() == ["interrupted True"] * 2


@POSIX
def test_ctrl_c_interrupts_a_few_expensive_rows_and_restores_the_model():
    """64 rows (a call the lean path of `partial_fit` could take) of a full covariance at
    d = 4,000, half a second (ten times the signal's delay): a long call is left to the
    interruptible path, so SIGINT during it ends it with KeyboardInterrupt and the model exactly
    as before."""
    out = run_script(INTERRUPT_EACH, """
        import numpy as np, cwrs
        rng = np.random.RandomState(0)
        X = rng.randn(64, 4000)
        y = np.where(X[:, 0] > 0, 1, -1)
        est = cwrs.AROW(covariance="full").partial_fit(X[:1], y[:1], classes=[-1, 1])
        interrupt_each(est, (lambda: est.partial_fit(X, y),), 0.05)
    """)
    assert out.splitlines() == ["interrupted True"]


@POSIX
def test_ctrl_c_interrupts_a_long_sharded_fit():
    """fit(n_jobs=2) of many passes in one native call: the calling thread (the only one that
    runs Python's signal handlers) keeps asking for Ctrl-C while it learns and waits for the
    other shard, so SIGINT ends the fit with KeyboardInterrupt and the estimator as it was."""
    out = run_script("""
        import signal, threading, numpy as np, cwrs
        rng = np.random.RandomState(0)
        X = rng.randn(30, 4)
        y = np.arange(30) % 2
        for shuffle in (False, True):
            est = cwrs.AROW(n_jobs=2, n_iter=1, shuffle=shuffle, random_state=0).fit(X, y)
            est.set_params(n_iter=10**9)
            before = repr(est.__getstate__())
            threading.Timer(0.2, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT)).start()
            try:
                est.fit(X, y)
                print("finished")
            except KeyboardInterrupt:
                print("interrupted", repr(est.__getstate__()) == before)
    """)
    assert out.splitlines() == ["interrupted True"] * 2


# --------------------------------------------------------------- reading what users have
COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("suffix", COMPRESSORS)
def test_compressed_files_read_like_the_plain_text(tmp_path, suffix):
    text = ("# made by a test\n" + stream_text(300)).encode()
    plain = tmp_path / "data.libsvm"
    plain.write_bytes(text)
    packed = tmp_path / f"data.libsvm.{suffix}"
    packed.write_bytes(COMPRESSORS[suffix](text))
    X, y = cwrs.load_svmlight(plain)
    Xc, yc = cwrs.load_svmlight(packed)
    assert (X != Xc).nnz == 0 and np.array_equal(y, yc)
    if suffix != "xz":  # scikit-learn decompresses by name, gzip and bzip2 only
        Xs, ys = load_svmlight_file(str(packed))
        assert (Xs != Xc).nnz == 0 and np.array_equal(ys, yc)
    chunks = list(cwrs.iter_svmlight(packed, chunk_rows=64, n_features=20))
    assert (sp.vstack([c for c, _ in chunks]) != X).nnz == 0
    streamed = cwrs.AROW().partial_fit_file(packed, classes=[-1, 1], n_features=20)
    assert np.array_equal(streamed.coef_, cwrs.AROW().partial_fit(X, y, classes=[-1, 1]).coef_)
    # Damaged compressed data is a ValueError naming the file and the format.
    truncated = tmp_path / f"truncated.{suffix}"
    truncated.write_bytes(COMPRESSORS[suffix](text)[: len(text) // 10])
    name = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}[suffix]
    with pytest.raises(ValueError, match=f"truncated.{suffix}: the {name} data is corrupt"):
        cwrs.load_svmlight(truncated)


def test_zero_based_takes_exactly_true_false_or_auto(tmp_path):
    path = tmp_path / "data.libsvm"
    path.write_text("1 1:1 2:2\n-1 3:3\n")
    for bad in ("False", "True", "yes", 0, 1, None):
        with pytest.raises(ValueError, match='zero_based must be True, False or "auto"'):
            cwrs.load_svmlight(path, zero_based=bad)
        with pytest.raises(ValueError, match='zero_based must be True, False or "auto"'):
            cwrs.iter_svmlight(path, zero_based=bad)
        if bad is None:  # partial_fit_file's default: the model's base, else one-based
            continue
        with pytest.raises(ValueError, match='zero_based must be True, False, "auto" or None'):
            cwrs.AROW().partial_fit_file(path, classes=[-1, 1], n_features=4, zero_based=bad)


def test_auto_in_the_streaming_functions_means_what_scikit_learn_means(tmp_path):
    """Zero-based exactly when an index 0 occurs anywhere in the file (even late, or after
    chunks that looked one-based); comments and qids do not count."""
    zero = tmp_path / "zero.libsvm"
    zero.write_text("1 qid:0 1:1 # 0:1\n" * 30 + "-1 0:2 00:3\n".replace(" 00:3", " 3:3"))
    one = tmp_path / "one.libsvm"
    one.write_text("0 1:1 # 0:1\n-1 2:2 10:1\n")
    # The CLI's answer for "auto" (the scan alone, nothing parsed).
    assert [zero_based_file(path, "auto") for path in (zero, one)] == [True, False]
    with pytest.raises(FileNotFoundError, match="missing.libsvm"):
        zero_based_file(tmp_path / "missing.libsvm", "auto")
    for path in (zero, one):
        X, y = load_svmlight_file(str(path))
        chunks = list(cwrs.iter_svmlight(path, chunk_rows=7, zero_based="auto",
                                         n_features=X.shape[1]))
        assert (sp.vstack([c for c, _ in chunks]) != X).nnz == 0
        est = cwrs.PA().partial_fit_file(path, classes=np.unique(y), n_features=X.shape[1],
                                         zero_based="auto")
        assert np.array_equal(est.coef_, cwrs.PA().partial_fit(X, y, classes=np.unique(y)).coef_)


def test_huge_indices_get_a_clear_message(tmp_path):
    path = tmp_path / "huge.libsvm"
    path.write_text("1 1:1\n-1 9223372036854775807:1\n")
    for call in (lambda: cwrs.load_svmlight(path), lambda: list(cwrs.iter_svmlight(path))):
        with pytest.raises(ValueError, match="huge.libsvm: .* more than any model can hold"):
            call()
    for bad in (2**63, 2**64):
        with pytest.raises(ValueError, match="n_features must be an integer from 1 to"):
            cwrs.load_svmlight(path, n_features=bad)


# --------------------------------------------------------------- the CLI's input
def run_cli(tmp_path, *args, stdin=b""):
    """`cwrs ARGS` with its temporary files in a folder of its own (to see them removed)."""
    spool = tmp_path / "spool"
    spool.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(spool))
    done = subprocess.run([sys.executable, "-m", "cwrs", *args], input=stdin,
                          capture_output=True, env=env, timeout=300)
    assert list(spool.iterdir()) == []
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def test_cli_reads_stdin_compressed_and_zero_based_files(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.RandomState(1)
    X = rng.randn(40, 3)
    X[:, 0] = np.where(np.arange(40) % 2, X[:, 0], 0.0)  # index 0 in some rows only
    y = np.where(X[:, 1] > 0, 1, -1)
    written = tmp_path / "sk.libsvm"
    dump_svmlight_file(X, y, str(written))  # zero-based, as scikit-learn writes by default
    text = written.read_bytes()
    model = tmp_path / "m.cwrs"
    for stdin in (text, gzip.compress(text)):
        code, out, err = run_cli(tmp_path, "train", "-a", "AROW", "-d", "-", "-o", str(model),
                                 "--json", "-v", stdin=stdin)
        assert code == 0, err
        assert '"features": 3' in out and "as zero-based (an index 0 occurs)" in err
    code, out, err = run_cli(tmp_path, "test", "-i", str(model), "-d", "-", "--json", stdin=text)
    assert code == 0 and '"rows": 40' in out, err
    code, _, err = run_cli(tmp_path, "train", "-a", "AROW", "-d", str(written), "-o", str(model),
                           "--one-based")
    assert code == 1 and "pass --zero-based" in err and "sk.libsvm: line" in err
    # Without any index 0 "auto" reads the file as one-based, and --verbose says so.
    shifted = tmp_path / "no_zero.libsvm"
    shifted.write_bytes(b"1 1:1 2:1\n-1 2:1\n")
    code, _, err = run_cli(tmp_path, "compare", "-d", str(shifted), "--shuffle", "0",
                           "--learners", "AROW", "-v")
    assert code == 0 and "as one-based (no index 0 occurs; --zero-based if" in err, err


@POSIX
def test_a_signal_handler_calling_the_busy_model_raises_instead_of_deadlocking():
    out = run_script("""
        import signal, threading, numpy as np, cwrs
        long = np.random.RandomState(1).randn(4_000, 1_000)
        X, y = long[:20], np.arange(4_000) % 2
        est = cwrs.AROW(covariance="full").fit(X, y[:20])
        def handler(signum, frame):
            try:
                est.predict(X)
            except RuntimeError as error:
                print("refused:", "from inside another call on the same model" in str(error))
            raise KeyboardInterrupt
        signal.signal(signal.SIGINT, handler)
        threading.Timer(0.2, signal.pthread_kill,
                        (threading.main_thread().ident, signal.SIGINT)).start()
        try:
            est.partial_fit(long, y)
        except KeyboardInterrupt:
            print("interrupted", est.predict(X).shape)
    """)
    assert out.splitlines() == ["refused: True", "interrupted (20,)"]
