"""The one claimable-job machine every worker job runs on.

A job is a row of a concrete subclass of :class:`pitweb.jobs.models.ClaimableJob`
(``runs.VerificationJob``, ``pricing.PlatformScore``; judging and execution will be
two more). Each subclass keeps its own table, its own state names and its own result
columns, because each kind answers a different question and the API shows its states by
name; what they share is the machine: a queued state, a running state, the final states,
the legal moves between them as data, and :mod:`pitweb.jobs.machine`, which alone moves
a job (one conditional UPDATE per move, so of two workers racing for a move exactly one
wins), claims it, keeps its heartbeat, releases it for another try, and sweeps the jobs
whose worker stopped heart-beating (again, up to ``MAX_ATTEMPTS``, then the kind's
harness-error state: our failure, never shown as the run's result).

Workers themselves heart-beat too, job or no job (``WorkerBeat``, written by the Celery
signal handlers in ``workers``), so the status page tells a live worker from a dead one;
``machine.queue_summary`` is its view of a queue.

The periodic sweep is ``tasks.sweep_stale_jobs``: it runs the share each app registered
in its ``AppConfig.ready`` (``sweeps.register_sweep``); every job task is a call of
``tasks.run_job`` (the work run as this worker, dead workers' folders swept around it,
the task sent again when the work's ``Outcome`` asks for a retry).

Imports go one way: an app's models subclass ``ClaimableJob``, its services call the
machine and send their tasks by name (``dispatch.send_on_commit``, which leaves a job the
broker could not take queued for the sweep), its tasks call ``tasks.run_job`` with their
work. This app imports no other ``pitweb`` app (only ``pitweb.artifacts``, to clear the
scratch folders dead workers left) and no other app's task.
"""
