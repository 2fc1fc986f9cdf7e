"""Delegates: TFLite's delegate mechanism (:mod:`.delegate`) and the float delegate
(:mod:`.float_delegate`) that models a float accelerator."""
from .delegate import Delegate, DelegateContext, DelegateError  # noqa: F401
