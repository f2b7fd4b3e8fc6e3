# Snakemake's job rate limit (--max-jobs-per-timespan, 100/1s by default) arms a 1 s
# threading.Timer on every pass of its scheduler, and Python waits for the last one before it
# exits: a second after the last job. A finished run has nothing left for it to wake.
onsuccess:
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
