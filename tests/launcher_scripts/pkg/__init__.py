"""A package for testing ``disttorch-launch -m``."""
