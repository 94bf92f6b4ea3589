"""The receipt: its body built from a run (``build``), the hashes that bind it to its
config and trajectory (``binding``), offline verification (``verify``), the trades and
scores derived again from the trajectory (``rederive``), the reasoning audit of what the
agent wrote on the control arms (``audit``), every run priced alike
(``rescore``) and the body's published schema (``schemas``)."""
