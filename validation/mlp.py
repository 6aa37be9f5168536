"""Channel-mixer references: dense MLP, SwiGLU, and MoE with real routing,
a shared expert and an optional latent projection."""

import types

import torch
import torch.nn.functional as F

from validation.config import Moe


def mlp_parameters(mlp, input_size, parameters):
    width = 2 * mlp.ffn_hidden_size if mlp.gated else mlp.ffn_hidden_size
    return types.SimpleNamespace(
        up=parameters.weight(width, input_size),  # SwiGLU: gate and up projections fused
        down=parameters.weight(input_size, mlp.ffn_hidden_size),
    )


def moe_parameters(moe, hidden_size, parameters):
    expert_size = moe.latent_size or hidden_size
    return types.SimpleNamespace(
        router=parameters.weight(moe.num_experts, hidden_size),
        experts=[mlp_parameters(moe.expert, expert_size, parameters) for _ in range(moe.num_experts)],
        shared=mlp_parameters(moe.shared, hidden_size, parameters) if moe.shared else None,
        latent_down=parameters.weight(moe.latent_size, hidden_size) if moe.latent_size else None,
        latent_up=parameters.weight(hidden_size, moe.latent_size) if moe.latent_size else None,
    )


def channel_mixer_parameters(channel_mixer, hidden_size, parameters):
    if isinstance(channel_mixer, Moe):
        return moe_parameters(channel_mixer, hidden_size, parameters)
    return mlp_parameters(channel_mixer, hidden_size, parameters)


def mlp(config, p, x):
    """x -> down(act(up(x))): 2 h ffn FMAs per token, 3 h ffn with SwiGLU."""
    hidden = F.linear(x, p.up)
    if config.gated:
        gate, up = hidden.chunk(2, dim=-1)
        hidden = F.silu(gate) * up
    else:
        hidden = F.gelu(hidden)
    return F.linear(hidden, p.down)


def moe(config, p, x, tags):
    """Routes each token to its top-k experts by the router's softmax scores.
    Each expert runs its tokens as one GEMM (an idle expert runs none), and
    the outputs are combined with the routing scores. With a latent size the
    routed experts work in the latent space, entered and left once per token."""
    with tags.scope(component="moe_router"):
        logits = F.linear(x, p.router)
    scores, experts = torch.topk(torch.softmax(logits, dim=-1), config.topk, dim=-1)
    with tags.scope(component="moe_routed"):
        expert_input = F.linear(x, p.latent_down) if p.latent_down is not None else x
        combined = expert_input.new_zeros(expert_input.shape)
        for e, expert in enumerate(p.experts):
            tokens, slots = (experts == e).nonzero(as_tuple=True)
            if tokens.numel() == 0:
                continue
            out = mlp(config.expert, expert, expert_input.index_select(0, tokens))
            combined = combined.index_add(0, tokens, out * scores[tokens, slots].unsqueeze(1))
        output = F.linear(combined, p.latent_up) if p.latent_up is not None else combined
    if p.shared is not None:
        with tags.scope(component="moe_shared"):
            output = output + mlp(config.shared, p.shared, x)
    return output


def channel_mixer(config, p, x, tags):
    if isinstance(config, Moe):
        return moe(config, p, x, tags)
    with tags.scope(component="mlp"):
        return mlp(config, p, x)
