"""flash-linear-attention's own reference of the gated delta product's
chunked form, its products counted as it runs, for
tests/data/gated_delta_product/.

fla's chunk_gated_delta_product_ref (fla/ops/gated_delta_product/chunk_ref.py)
lays each token's num_householder keys, values and betas out one after the
other, puts the token's query at its last slot (zeros at the others) and its
decay at its first, and runs the chunked gated delta rule
(chunk_gated_delta_rule) over that sequence of num_householder L positions
per document, in chunks of 64 positions; fla's chunk_gated_delta_product
runs its backward so (chunk_gated_delta_rule_bwd over the same layout).
Here chunk_ref runs as written, with fla's PyTorch reference
naive_chunk_gated_delta_rule (fla/ops/gated_delta_rule/naive.py) in place of
the Triton kernel, document by document: the whole chunks in one call, then
the last partial chunk in a call of its own size from the state the first
left (naive pads a partial chunk to a whole one; the kernels mask it).

A dispatch counter counts the multiply-adds: b m k n per batched matrix
product, and one per entry summed by the forward substitution's sums (its
only reduction), so row i of a chunk's substitution counts i^2.

    /usr/bin/python3 -m validation.fla_delta_product_reference FLA_CHECKOUT OUT_DIR

FLA_CHECKOUT holds fla/ops/gated_delta_rule/naive.py and
fla/ops/gated_delta_product/chunk_ref.py; OUT_DIR/fla_chunk_ref.json gets
one record per case: its shape and each document's multiply-adds.
"""

import json
import math
import os
import re
import sys
import types

import torch
from torch.utils._python_dispatch import TorchDispatchMode

CHUNK = 64  # chunk_gated_delta_rule's and chunk_gated_delta_product's


def rearrange(x, pattern, **sizes):
    """einops.rearrange for the patterns fla's references use here: regroupings that keep the axes' order."""
    left, right = (side.split() for side in pattern.replace("(", " ( ").replace(")", " ) ").split("->"))

    def groups(side):
        out, group = [], None
        for token in side:
            if token == "(":
                group = []
            elif token == ")":
                out.append(group)
                group = None
            elif group is not None:
                group.append(token)
            else:
                out.append([token])
        return out

    left, right = groups(left), groups(right)
    if [a for g in left for a in g] != [a for g in right for a in g]:
        raise ValueError("not a regrouping: " + pattern)
    known = dict(sizes)
    for group, size in zip(left, x.shape):
        unknown = [a for a in group if a not in known]
        if unknown:
            known[unknown[0]] = size // math.prod(known[a] for a in group if a in known)
    return x.reshape([math.prod(known[a] for a in group) for group in right])


class ProductCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.fmas = 0

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in ("bmm", "mm"):
            a, b = args[0], args[1]
            self.fmas += math.prod(a.shape) * b.shape[-1]
        elif name in ("baddbmm", "addmm", "matmul", "einsum"):
            raise RuntimeError("uncounted product " + name)
        elif name == "sum":
            self.fmas += args[0].numel()
        return func(*args, **(kwargs or {}))


def load(path, name, scope):
    module = types.ModuleType(name)
    module.__dict__.update(scope)
    source = open(path).read()
    source = re.sub(r"^from einops import rearrange$", "", source, flags=re.M)
    source = re.sub(r"^from fla\.ops\.\S+ import \S+$", "", source, flags=re.M)
    source = re.sub(r"^@torch\.compiler\.disable$", "", source, flags=re.M)  # torch 2's; nothing here compiles
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def main(checkout, out_dir):
    naive = load(os.path.join(checkout, "fla/ops/gated_delta_rule/naive.py"), "naive", {"rearrange": rearrange})

    def chunk_gated_delta_rule(q, k, v, g, beta, initial_state, output_final_state, cu_seqlens,
                               use_qk_l2norm_in_kernel, scale):
        """The kernel's chunks, document by document, by fla's reference."""
        assert initial_state is None and not use_qk_l2norm_in_kernel
        outputs = []
        for start, end in zip(cu_seqlens[:-1].tolist(), cu_seqlens[1:].tolist()):
            state, whole = None, (end - start) // CHUNK * CHUNK
            for first, last, size in ((start, start + whole, CHUNK), (start + whole, end, end - start - whole)):
                if last > first:
                    o, state = naive.naive_chunk_gated_delta_rule(
                        *(x[:, first:last] for x in (q, k, v, g, beta)), chunk_size=size, scale=scale,
                        initial_state=state, output_final_state=True)
                    outputs.append(o)
        return torch.cat(outputs, dim=1), None

    chunk_ref = load(os.path.join(checkout, "fla/ops/gated_delta_product/chunk_ref.py"), "chunk_ref",
                     {"rearrange": rearrange, "chunk_gated_delta_rule": chunk_gated_delta_rule,
                      "chunk_delta_rule": None})
    records = []
    torch.manual_seed(0)
    for householder, heads, dk, dv, documents in [(3, 2, 3, 5, [1, 21, 22, 50, 64]), (2, 1, 4, 2, [32, 33, 7]),
                                                   (1, 3, 2, 2, [64, 65, 1]), (4, 1, 6, 3, [16, 17, 40])]:
        fmas = []
        for length in documents:
            positions = length * householder
            q = torch.randn(1, length, heads, dk).bfloat16()
            k, v = torch.randn(1, positions, heads, dk).bfloat16(), torch.randn(1, positions, heads, dv).bfloat16()
            g, beta = -torch.rand(1, length, heads), torch.rand(1, positions, heads).bfloat16()
            counter = ProductCounter()
            with counter:
                chunk_ref.chunk_gated_delta_product_ref(q, k, v, g, beta, householder, scale=dk ** -0.5,
                                                        cu_seqlens=torch.tensor([0, length]))
            fmas.append(counter.fmas)
        records.append({"num_householder": householder, "heads": heads, "key_dim": dk, "value_dim": dv,
                        "documents": documents, "forward_fmas": fmas})
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "fla_chunk_ref.json"), "w") as f:
        json.dump({"chunk_size": CHUNK, "records": records}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
