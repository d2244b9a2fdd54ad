"""A minimal concern used only by the tests: one Subject model, registered like a real one."""
