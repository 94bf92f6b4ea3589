"""The market a run trades in: the exchange's sessions (``calendar``), when a row becomes
knowable under each clock (``clocks``), the price file (``prices``) and what a pick
earns (``scoring``)."""
