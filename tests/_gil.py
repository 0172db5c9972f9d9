"""Whether a call releases the GIL, checked so that the check can fail."""

from __future__ import annotations

import sys
import threading
import time


def runs_during(call, attempts):
    """Whether another Python thread runs Python code while `call` runs (in one of `attempts`
    calls), with a switch interval far longer than the calls: only a call that releases the GIL
    lets it. The other thread stamps the time under the GIL; a stamp inside a call's window
    proves it. (A count compared before and after the call would also move when the GIL is
    released between the calls, so it could pass for a call that holds the GIL throughout.)"""
    call()  # once before: a first call may import modules (file reads release the GIL)
    stamps, go, stop = [], threading.Event(), threading.Event()

    def spin():
        go.wait()
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)  # without the GIL, so the main thread never waits for it

    spinner = threading.Thread(target=spin)
    spinner.start()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    try:
        go.set()
        for _ in range(attempts):
            start = time.perf_counter()
            call()
            end = time.perf_counter()
            if any(start < t < end for t in stamps):
                return True
        return False
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        spinner.join()

