# Snakemake's job rate limit (--max-jobs-per-timespan, 100/1s by default) arms a 1 s
# threading.Timer on every pass of its scheduler, and Python waits for the last one before it
# exits: a second after the last job. A finished run, failed or not, has nothing left for it
# to wake.
def cancel_rate_limit_timers():
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()


onsuccess:
    cancel_rate_limit_timers()


onerror:
    cancel_rate_limit_timers()
