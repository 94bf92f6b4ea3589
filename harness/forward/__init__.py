"""The forward track: commitments on a hash-chained public log, and the checks that make
a run forward-tested (its agent committed before the rows it traded existed)."""
