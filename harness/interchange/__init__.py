"""Results that travel: a verified run or judged set exported in shared formats, Every
Eval Ever's aggregate record (``every_eval_ever``, ``run_record``, ``points_record``) and
Inspect's eval log (``inspect_log``), each written only after the result verifies."""
