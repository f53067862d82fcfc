"""Regression tests of the controls around the write (issue 25): each named after what it proves."""
