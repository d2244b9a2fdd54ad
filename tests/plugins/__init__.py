"""pytest plugins by subject, registered by tests/conftest.py (``pytest_plugins``)."""
