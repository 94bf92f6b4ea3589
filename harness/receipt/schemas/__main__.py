"""``python -m harness.receipt.schemas``: write the receipt body's schema from its types."""

from harness.receipt.schemas import write_schema

if __name__ == "__main__":
    print(write_schema())
