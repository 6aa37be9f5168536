"""One training iteration of a reference model, counted.

The model: embedding, decoder layers (pre-norm attention and channel mixer
with residuals), MTP depths (norms of the previous hidden state and of the
next tokens' embedding, the 2h -> h projection, one transformer layer, the
shared output layer), and the logits with cross-entropy. Every activation
requires grad (the embedding trains), so the first layer's projections
compute data gradients too.

The attention sublayer is GQA, MLA or DSA from the arguments, or the case's
native mixer (block-sparse, QSA, Kimi Delta Attention, CSA2). With attention
residuals the decoder layers read softmaxes over their sources in place of
the residual sum, and one more read feeds the output layer
(validation/attention_residuals.py).

Recompute, with torch.utils.checkpoint: `selective` checkpoints each core
attention, `full` each decoder and MTP transformer layer; the checkpointed
forward runs again in the backward and is counted again.
"""

import types
import typing

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from validation import attention_residuals, hyper_connections
from validation.attention import (absorbed_mla_attention, attention_parameters, block_sparse_key_rows,
                                  block_sparse_parameters, gqa_attention, mla_attention, selected_keys_attention)
from validation.compressed_block_sparse import qsa_key_rows, qsa_parameters
from validation.config import BlockSparse, Csa2Stack, Gdn, Gqa, Kda, Qsa
from validation.counting import counting
from validation.gated_delta_net import gated_delta_net, gdn_parameters
from validation.indexer import attended_keys, indexer_parameters, run_indexer
from validation.kimi_delta_attention import kda_parameters, kimi_delta_attention
from validation.mlp import channel_mixer, channel_mixer_parameters
from validation.shared_compressed_attention import csa2_attention, csa2_parameters
from validation.tensors import Parameters, rms_norm

RECOMPUTE = ("none", "selective", "full")


class Shared(typing.NamedTuple):
    """What a layer leaves the layers after it: DSA's top-k selection or
    CSA2's Selection, and CSA2's cache entries, apart, so that activation
    checkpointing takes them as a tensor argument and lets their gradient through."""
    selection: object
    entries: torch.Tensor | None


def layer_parameters(config, channel_mixer_config, parameters, csa2=None, reads=False):
    """One layer's parameters; `csa2`: its CSA2 layer config, with a Csa2Stack;
    `reads`: whether it reads attention residuals (a decoder layer of a model with them)."""
    h, native = config.hidden_size, config.native_mixer
    indexer = None
    if config.indexer is not None:
        indexer = indexer_parameters(config.indexer, h, config.attention.q_lora_rank or h, parameters)
    elif isinstance(native, BlockSparse):
        indexer = block_sparse_parameters(native, h, parameters)
    elif isinstance(native, Qsa):
        indexer = qsa_parameters(native, h, parameters)
    streams = config.residual_streams
    return types.SimpleNamespace(
        attention=(kda_parameters(native, h, parameters) if isinstance(native, Kda)
                   else gdn_parameters(native, h, parameters) if isinstance(native, Gdn)
                   else csa2_parameters(csa2, h, parameters) if csa2
                   else attention_parameters(config.attention, h, parameters)),
        indexer=indexer,
        channel_mixer=channel_mixer_parameters(channel_mixer_config, h, parameters),
        csa2=csa2,
        hc=[hyper_connections.sublayer_parameters(streams, h, parameters) for _ in range(2)] if streams else None,
        reads=attention_residuals.layer_parameters(h, parameters) if reads else None,
    )


def model_parameters(config, parameters):
    h = config.hidden_size
    stack = config.native_mixer if isinstance(config.native_mixer, Csa2Stack) else None
    csa2_layers = stack.layers if stack else [None] * len(config.channel_mixers)
    return types.SimpleNamespace(
        embedding=parameters.tensor(config.vocab_size, h),
        decoder=[layer_parameters(config, mixer, parameters, csa2, reads=bool(config.attention_residuals))
                 for mixer, csa2 in zip(config.channel_mixers, csa2_layers)],
        mtp=[types.SimpleNamespace(projection=parameters.weight(h, 2 * h),
                                   layer=layer_parameters(config, config.mtp_channel_mixer, parameters,
                                                          stack.mtp if stack else None))
             for _ in range(config.mtp_depths)],
        output=parameters.weight(config.vocab_size, h),
        # The final read of each head: the decoder's and every MTP depth's.
        heads=[hyper_connections.head_parameters(config.residual_streams, h, parameters)
               for _ in range(config.mtp_depths + 1)] if config.residual_streams else None,
        # Attention residuals' read before the final norm (the MTP depths keep a plain residual).
        output_read=attention_residuals.read_parameters(h, parameters) if config.attention_residuals else None,
    )


class Runner:
    """Runs layers of one model on one batch under a recompute policy."""

    def __init__(self, config, batch, recompute, tags):
        self.config, self.batch, self.recompute, self.tags = config, batch, recompute, tags

    def checkpointed(self, function):
        """`function`, re-executed in the backward (its forward counted twice)."""
        bound = self.tags.bound(function)
        return lambda *args: checkpoint(bound, *args)

    def core(self, function):
        return self.checkpointed(function) if self.recompute == "selective" else function

    def layer(self, channel_mixer_config, p, x, shared, runs_indexer, index=0, sealed=None):
        """One transformer layer. `shared`: what the layers before it left
        (a Shared, or None). Returns its output and the Shared the next
        layers see. With hyper-connections `x` and the output are the
        residual streams; with attention residuals (`p.reads`) `x` is the
        running sum of decoder layer `index` (from 0), `sealed` the sealed
        sources, and the sealed sources it leaves come third."""

        def forward(x, sealed, shared_selection, entries):
            tags = self.tags
            selection, written = shared_selection, None

            def attend(layer_input):
                nonlocal selection, written
                out, selection, written = self.attention(p, rms_norm(layer_input), selection, entries, runs_indexer)
                return out

            def mix_channels(layer_input):
                return channel_mixer(channel_mixer_config, p.channel_mixer, rms_norm(layer_input), tags)

            if p.reads is not None:
                x, sealed = attention_residuals.layer(p.reads, index, self.config.attention_residuals, x, sealed,
                                                      attend, mix_channels, tags)
            elif p.hc is None:
                x = x + attend(x)
                x = x + mix_channels(x)
            else:
                x = hyper_connections.sublayer(p.hc[0], x, attend, tags)
                x = hyper_connections.sublayer(p.hc[1], x, mix_channels, tags)
            return x, sealed, selection, written

        shared = shared or Shared(None, None)
        run = self.checkpointed(forward) if self.recompute == "full" else forward
        x, sealed, selection, written = run(x, sealed, shared.selection, shared.entries)
        return x, Shared(selection, shared.entries if written is None else written), sealed

    def attention(self, p, attention_input, shared_selection, entries, runs_indexer):
        """The attention sublayer: its output, the selection the next layers
        may reuse (DSA, CSA2), and the cache entries it wrote (CSA2; else None)."""
        config, batch, tags = self.config, self.batch, self.tags
        selection = shared_selection
        native = config.native_mixer
        if p.csa2 is not None:
            return csa2_attention(p.attention, attention_input, batch, selection, entries, tags, self.core)
        if isinstance(native, Kda):
            out = kimi_delta_attention(native, p.attention, attention_input, batch, tags)
        elif isinstance(native, Gdn):
            out = gated_delta_net(native, p.attention, attention_input, batch, tags)
        elif isinstance(native, (BlockSparse, Qsa)):
            key_rows_of = block_sparse_key_rows if isinstance(native, BlockSparse) else qsa_key_rows
            key_rows = key_rows_of(native, p.indexer, attention_input, batch, tags)
            out = selected_keys_attention(config.attention, p.attention, attention_input, batch, key_rows, tags,
                                          self.core)
        elif isinstance(config.attention, Gqa):
            out = gqa_attention(config.attention, p.attention, attention_input, batch, tags, self.core)
        elif config.indexer is None:
            out = mla_attention(config.attention, p.attention, attention_input, batch, tags, self.core)
        else:
            def key_rows_of(query_latent):
                nonlocal selection
                loss = None
                if runs_indexer:
                    selection, loss = run_indexer(config.indexer, p.indexer, attention_input, query_latent,
                                                  batch, tags)
                # A sharing layer reuses the computing layer's selection tensors as they are.
                return attended_keys(selection, config.indexer, batch), loss

            out = absorbed_mla_attention(config.attention, p.attention, attention_input, batch, key_rows_of,
                                         tags, self.core)
        return out, selection, None


def train_step(config, batch, recompute, seed, tags):
    """Forward and backward of one iteration; returns the product FMAs per
    (layer, component), layers named as trainflops names them."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute = {recompute!r}: must be one of {RECOMPUTE}")
    p = model_parameters(config, Parameters(seed))
    tokens = torch.randint(config.vocab_size, (batch.tokens,), generator=torch.Generator().manual_seed(seed + 1))
    runner = Runner(config, batch, recompute, tags)

    def logits_loss(hidden, shift):
        with tags.scope(layer="logits", component="logits"):
            logits = F.linear(rms_norm(hidden), p.output)
        return F.cross_entropy(logits, tokens.roll(-shift))

    streams = config.residual_streams

    def read_head(x, head):
        """The hidden state an output layer sees: with hyper-connections, the
        head's final read of the streams."""
        if streams is None:
            return x
        with tags.scope(layer="logits"):
            return hyper_connections.head(p.heads[head], x, tags)

    with counting(tags) as counter:
        losses = []
        x = F.embedding(tokens, p.embedding)
        if streams:
            x = hyper_connections.expand(x, streams)
        sealed = None
        if config.attention_residuals:
            x, sealed = attention_residuals.start(x)
        shared = None
        for number, layer in enumerate(p.decoder, start=1):
            with tags.scope(layer=f"decoder.{number}"):
                runs_indexer = config.indexer is not None and config.indexer.runs_at(number)
                x, shared, sealed = runner.layer(config.channel_mixers[number - 1], layer, x, shared, runs_indexer,
                                                 number - 1, sealed)
        if config.attention_residuals:
            x = attention_residuals.read(p.output_read, x, sealed, tags)
        x = read_head(x, 0)
        losses.append(logits_loss(x, 1))
        for depth, mtp in enumerate(p.mtp, start=1):
            with tags.scope(layer=f"mtp{depth}.projection", component="mtp"):
                embedded = F.embedding(tokens.roll(-depth), p.embedding)
                x = F.linear(torch.cat([rms_norm(x), rms_norm(embedded)], dim=-1), mtp.projection)
            if streams:
                x = hyper_connections.expand(x, streams)
            with tags.scope(layer=f"mtp{depth}.1"):
                # Each MTP depth numbers its layers from 1 again (docs/accounting.md, 7.2).
                runs_indexer = config.indexer is not None and config.indexer.runs_at(1)
                x, _, _ = runner.layer(config.mtp_channel_mixer, mtp.layer, x, None, runs_indexer)
            x = read_head(x, depth)
            losses.append(logits_loss(x, depth + 1))
        sum(losses).backward()
    return counter.fmas
