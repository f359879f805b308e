"""Loading compiled modules without letting an interrupt disguise itself.

A Ctrl-C that lands while a C extension initialises (numpy's, pyarrow's)
surfaces as an unrelated ImportError ("PyCapsule_Import could not import
module 'datetime'"), not as KeyboardInterrupt: the command line would then
print a traceback, or say an installed extra is missing. Imports inside
``interrupts_deferred()`` run with SIGINT held; one pressed meanwhile is
delivered as KeyboardInterrupt as soon as the block ends.
"""
import contextlib
import signal
import threading


@contextlib.contextmanager
def interrupts_deferred():
    """Hold SIGINT for the block (POSIX, main thread; elsewhere a no-op).

    Threads started inside the block (a BLAS pool) keep SIGINT blocked,
    which leaves it to the main thread, where Python handles it anyway.
    """
    if (not hasattr(signal, "pthread_sigmask")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
