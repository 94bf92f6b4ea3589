"""The board: which runs rank and how (``query``, ``selectors``, ``rows``), the stored
copy a worker keeps of each public board (``store``, read by ``stored_pages``), its cache
(``cache``, keyed by ``stamp``), the families' pages, the published snapshots, and the
pages, API and tasks of all these.

Other apps tell it that what it shows changed through one function,
``changes.board_changed``; they import no other module of the board. The board reads
runs, pricing and releases; none of them reads it."""
