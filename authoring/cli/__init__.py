"""The `taskforge` command line: one module per noun (`world`, `author`, `review`, `eval`, ...), the options
they share declared once (`options`), the application assembled in `app`."""

from .app import app, main

__all__ = ["app", "main"]
