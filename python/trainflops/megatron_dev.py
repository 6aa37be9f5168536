"""A drop-in for num_floating_point_operations on Megatron-LM's dev branch
(with its DSA FLOPs fix).

In megatron/training/training.py of a dev-branch checkout, replace the
function with:

    from trainflops.megatron_dev import num_floating_point_operations

It reads the arguments and takes the forms trainflops.megatron does, and
returns what the dev branch's function returns, bit for bit. The branches
differ on the hybrid path (hybrid_layer_pattern; docs/accounting.md, section
6): at dev, multi_latent_attention makes every attention symbol MLA, '+' is
no layer symbol, the DSA variant is refused, DeepSeek-V4's variant counts
W, C and H by their compression, every M layer is Mamba-2 and every G layer
a gated delta net, and each MTP depth's projection is charged.
"""
from trainflops import _core

__all__ = ["num_floating_point_operations"]


def num_floating_point_operations(args, batch_size, seqlen_squared_sum_in_batch=None, total_real_tokens_in_batch=None):
    """FLOPs of one training iteration over a global batch, a float: the dev branch's function.

    The parameters are trainflops.megatron.num_floating_point_operations's.
    A trainflops.Model given as args is counted as it was built, and
    trainflops.Model builds Megatron-LM arguments by the main branch's rules:
    for a hybrid pattern, give the arguments themselves.
    """
    return _core.megatron_num_floating_point_operations(args, batch_size, seqlen_squared_sum_in_batch,
                                                        total_real_tokens_in_batch, "dev")
