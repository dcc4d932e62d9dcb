"""What the tests share: stand-ins, builders and waits. A test module imports from here (and gets
fixtures from a conftest.py), never from another test module."""
