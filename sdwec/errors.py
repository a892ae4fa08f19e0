"""Exceptions raised at the library's boundary."""


class DataError(ValueError):
    """Input data that cannot be used, with a message that says what to fix."""
