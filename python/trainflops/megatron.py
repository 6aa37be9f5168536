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
from trainflops import _core

__all__ = ["num_floating_point_operations"]


def num_floating_point_operations(args, batch_size, seqlen_squared_sum_in_batch=None,
                                  total_real_tokens_in_batch=None):
    """FLOPs of one training iteration over a global batch of batch_size sequences, a float.

    Without the aggregates the batch is BSHD: batch_size sequences of
    args.seq_length tokens. With packed sequences, seqlen_squared_sum_in_batch
    (sum of squared document lengths) and total_real_tokens_in_batch (sum of
    lengths) replace batch_size * seq_length**2 and batch_size * seq_length;
    either one left None takes that BSHD value, as in Megatron-LM. With both
    given, batch_size is not read and may be None.

    args may also be a trainflops.Model built once from it, which skips
    reading the arguments on every call.
    """
    return _core.megatron_flops(args, batch_size, seqlen_squared_sum_in_batch, total_real_tokens_in_batch)
