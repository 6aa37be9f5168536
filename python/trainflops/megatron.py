"""A drop-in for Megatron-LM's num_floating_point_operations (its main branch,
with its DSA FLOPs fix).

In megatron/training/training.py, replace the function with:

    from trainflops.megatron import num_floating_point_operations

It reads the same args namespace (the names in
trainflops._core.megatron_arg_names(), by getattr, a missing one as None),
never modifies it, and returns what Megatron-LM's function returns, bit for
bit, for arguments in every form Megatron-LM's function accepts: ints or
floats (whole or not), numpy scalars, 0-d tensors, None, ints as flags.
Where Megatron-LM's function raises (a tuple moe_layer_freq, None where it
multiplies), it raises trainflops.TrainflopsError (a ValueError) saying why;
where it fails an assert, a trainflops.FailedAssertionError, also an
AssertionError.
"""
from trainflops import _core

__all__ = ["num_floating_point_operations"]


def num_floating_point_operations(args, batch_size, seqlen_squared_sum_in_batch=None, total_real_tokens_in_batch=None):
    """FLOPs of one training iteration over a global batch, a float: Megatron-LM's function.

    Without the aggregates the batch is BSHD: batch_size sequences of
    args.seq_length tokens. With packed sequences, seqlen_squared_sum_in_batch
    (sum of squared document lengths) and total_real_tokens_in_batch (sum of
    lengths) replace batch_size * seq_length**2 and batch_size * seq_length;
    either one left None takes that BSHD value, as in Megatron-LM. With both
    given, batch_size is not read and may be None. Each may be an int or a
    float, a numpy scalar or a 0-d tensor, as Megatron-LM's training loop
    passes them (its packed aggregates are floats).

    args may also be a trainflops.Model built once from it, which skips
    reading the arguments on every call.
    """
    return _core.megatron_num_floating_point_operations(args, batch_size, seqlen_squared_sum_in_batch,
                                                        total_real_tokens_in_batch)
