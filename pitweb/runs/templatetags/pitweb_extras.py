from typing import Any

from django import template

register = template.Library()


@register.filter
def get_item(mapping: dict[str, Any], key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


@register.filter
def pct(value: Any, places: int = 2) -> str:
    """A fraction as a percentage (0.0123 -> "1.23%"); "n/a" for none."""
    if value is None or value == "":
        return "n/a"
    try:
        number = float(value) * 100
    except (TypeError, ValueError):
        return "n/a"
    return f"{number + 0.0:.{int(places)}f}%"


@register.filter
def pp(value: Any, places: int = 2) -> str:
    """A difference of fractions in percentage points, signed (0.004 -> "+0.40 pp")."""
    if value is None or value == "":
        return "n/a"
    try:
        number = float(value) * 100
    except (TypeError, ValueError):
        return "n/a"
    return f"{number + 0.0:+.{int(places)}f} pp"


@register.filter
def short_sha(value: Any) -> str:
    return str(value or "").removeprefix("sha256:")[:12]
