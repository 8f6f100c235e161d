"""Parameter sanitisation, the way the product treats data_args it is given.

The product is asymmetric and agents trip on it: creating a widget keeps any value for a declared parameter,
drops undeclared keys and backfills defaults; updating one drops undeclared keys and also any value outside
the parameter's declared options, silently, and the call still succeeds.
"""

from __future__ import annotations

from typing import Any

from .world import WidgetDef, option_values


def value_allowed(param: dict[str, Any], value: Any) -> bool:
    """Whether `value` is one of the param's declared options (always true when it declares none)."""
    allowed = [str(v) for v in option_values(param)]
    if not allowed:
        return True
    if isinstance(value, list):
        return all(str(v) in allowed for v in value)
    return str(value) in allowed


def sanitize_create(widget: WidgetDef, data_args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    declared = {p["paramName"]: p for p in widget.params}
    for key, value in data_args.items():
        if key in declared:
            out[key] = value
    for name, param in declared.items():
        if name not in out and param.get("value") is not None:
            out[name] = param["value"]
    return out


def sanitize_update(widget: WidgetDef, data_args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    declared = {p["paramName"]: p for p in widget.params}
    for key, value in data_args.items():
        param = declared.get(key)
        if param is not None and value_allowed(param, value):
            out[key] = value
    return out
