"""Attention residuals (AttnRes; Kimi K3, docs/kimi.md), as Moonshot's
released modeling code (`modeling_kimi_linear.py`: `_apply_attn_res`,
`KimiDecoderLayer._forward_attn_residual`, `KimiLinearModel.forward`)
computes them in training.

Each token carries sealed sources (the embedding first, then each finished
block's sum of layer outputs) and the running sum of the current block.
A read is a softmax over [sealed sources..., running sum]: every source is
RMS-normalized and scored by the read's own h x 1 projection, whose weights
the release multiplies by the norm's weights once per read (not per token),
and the sources are summed with the softmax's weights.

In a layer with index l (from 0): the mixer reads when anything is sealed
(layer 0's takes the embedding as it is); at the first layer of a block
(l % block_size == 0) the running sum, as the mixer read it, is sealed and
the mixer's output starts the next one; the channel mixer always reads.
A last read feeds the final norm and the output layer.

The release scores with an elementwise product and a sum, which a counter of
matrix products does not see; here the scores and the weighted sum both run
as batched products (selfcheck.py checks that they compute the same read),
so the counter sees every multiply-add: h per source for the score and h for
its share of the sum, each trained (the sources and the projection take
gradients).
"""

import types

import torch

from validation.tensors import rms_norm

COMPONENT = "attention_residuals"


def read_parameters(hidden_size, parameters):
    """One read: the sources' norm weights and the h x 1 score projection."""
    return types.SimpleNamespace(norm=parameters.tensor(hidden_size),
                                 projection=parameters.weight(1, hidden_size))


def layer_parameters(hidden_size, parameters):
    """A decoder layer's two reads: its mixer's and its channel mixer's."""
    return types.SimpleNamespace(mixer=read_parameters(hidden_size, parameters),
                                 channel_mixer=read_parameters(hidden_size, parameters))


def read(p, running_sum, sealed, tags):
    """The softmax over the sources: running_sum (tokens, h), sealed (tokens, sealed, h)."""
    tokens, h = running_sum.shape
    with tags.scope(layer=COMPONENT, component=COMPONENT):
        sources = torch.cat([sealed, running_sum.unsqueeze(1)], dim=1)
        score_weights = p.norm * p.projection.squeeze(0)  # once per read: no product per token
        scores = torch.bmm(rms_norm(sources), score_weights.expand(tokens, h).unsqueeze(2)).squeeze(2)
        return torch.bmm(scores.softmax(-1).unsqueeze(1), sources).squeeze(1)


def layer(p, index, block_size, running_sum, sealed, attend, mix_channels, tags):
    """Decoder layer `index` (from 0) around `attend` and `mix_channels`
    (each from its input to its output); returns the running sum and the
    sealed sources it leaves the next layer."""
    mixer_input = read(p.mixer, running_sum, sealed, tags) if sealed.shape[1] else running_sum
    if index % block_size == 0:
        sealed = torch.cat([sealed, running_sum.unsqueeze(1)], dim=1)
        running_sum = attend(mixer_input)
    else:
        running_sum = running_sum + attend(mixer_input)
    return running_sum + mix_channels(read(p.channel_mixer, running_sum, sealed, tags)), sealed


def start(embedded):
    """The embedding as the first running sum, with nothing sealed yet."""
    return embedded, embedded.new_zeros(embedded.shape[0], 0, embedded.shape[1])
