"""The pure core: models, rules and arithmetic. No I/O, no clock, no OS imports.

Everything here takes its inputs as arguments (the time included) and returns values,
so it can be table-tested. ``tests/unit/test_core_purity.py`` enforces this.
"""
