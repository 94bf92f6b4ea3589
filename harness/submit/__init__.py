"""Submitting to a pitweb site (``pit-harness submit``): the API token found in the
environment or a file of the submitter's own (``credentials``), the site's API spoken over
HTTP with a streamed upload (``client``), and the job states the site answers with, in
words and exit codes, waited for (``verdicts``). Pure Python: the site's code is never
imported, only its published API spoken."""
