"""The ``dynid`` command line."""
