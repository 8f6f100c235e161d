"""CLI commands kept out of cli.py; each module exposes `register(app)`."""
