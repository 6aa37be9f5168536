"""A drop-in for Megatron-LM's num_floating_point_operations.

In megatron/training/training.py, replace the function with:

    from trainflops.megatron import num_floating_point_operations

It reads the same args namespace (only the names in
trainflops._core.megatron_arg_names(), by getattr, a missing one as None),
never modifies it, and returns what Megatron-LM's function returns, DSA and
KPool counted as Megatron-LM counts them since its fix. Invalid arguments raise
trainflops.TrainflopsError (a ValueError) where Megatron-LM's function would
raise or return a meaningless number.
"""
from trainflops._core import num_floating_point_operations

__all__ = ["num_floating_point_operations"]
