"""Readers and writers, one file format per module."""
