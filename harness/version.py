from typing import Final

HARNESS_NAME = "pit-harness"
HARNESS_VERSION = "0.1.0"
RECEIPT_VERSION: Final = 2  # Final: a type checker reads it as the Literal the body holds
