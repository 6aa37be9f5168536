"""By hand, on a machine with a CUDA GPU (CI has none; test_seq_stats.py runs
the same code path on CPU tensors):
  - SeqStats over CUDA tensors equals SeqStats over the same offsets as lists,
    for models whose statistics need every kind of moment;
  - add_cu_seqlens never synchronizes with the host: every call runs under
    torch.cuda.set_sync_debug_mode("error"), which turns a synchronizing
    operation (a copy to the host, .item(), ...) into an error;
  - the time per call, on the GPU.

Usage: PYTHONPATH=build/python python3 python/tests/seq_stats_cuda.py
Prints one line per check and exits non-zero when one fails.
"""
import random
import sys
import time

import torch

import trainflops

DSA_KPOOL = {
    "num_layers": 4, "hidden_size": 1024, "ffn_hidden_size": 4096, "num_attention_heads": 16, "swiglu": True,
    "padded_vocab_size": 32000, "seq_length": 4096, "multi_latent_attention": True, "q_lora_rank": 256,
    "kv_lora_rank": 128, "qk_head_dim": 64, "qk_pos_emb_head_dim": 32, "v_head_dim": 64,
    "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 8, "dsa_indexer_head_dim": 64,
    "dsa_indexer_topk": 256, "dsa_kpool_size": 4,
}
DSV4 = {"num_layers": 3, "hidden_size": 64, "num_attention_heads": 2, "ffn_hidden_size": 32, "swiglu": True,
        "padded_vocab_size": 100, "multi_latent_attention": True, "q_lora_rank": 8, "v_head_dim": 8,
        "experimental_attention_variant": "dsv4_hybrid", "o_groups": 2, "o_lora_rank": 4, "csa_window_size": 20,
        "dsa_indexer_n_heads": 2, "dsa_indexer_head_dim": 4, "dsa_indexer_topk": 6, "seq_length": 64,
        "csa_compress_ratios": [0, 4, 128]}
BLOCK_SPARSE = {"hidden_size": 16, "vocab_size": 50, "mixers": {
    "sparse": {"type": "block_sparse", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "indexer_num_heads": 2,
               "indexer_head_dim": 4, "block_size": 4, "topk_blocks": 3, "init_blocks": 1},
    "window": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "window": 5},
    "chunk": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "chunk": 6}},
    "layers": [{"mixer": "sparse"}, {"mixer": "window"}, {"mixer": "chunk"}]}
MODELS = {"dsa-kpool": DSA_KPOOL, "dsv4": DSV4, "block-sparse": BLOCK_SPARSE, "preset glm-5": None}


def micro_batches(count, seed):
    """Offsets of `count` micro-batches: lengths around the thresholds and pools, up to 8192 tokens each."""
    rng = random.Random(seed)
    batches = []
    for _ in range(count):
        docs = [rng.choice([0, 1, 3, 4, 5, 255, 256, 257, 2048, rng.randrange(1, 8192)])
                for _ in range(rng.randrange(1, 17))]
        offsets = [0]
        for length in docs:
            offsets.append(offsets[-1] + length)
        batches.append(offsets)
    return batches


def stats_of(name, model):
    return trainflops.SeqStats(preset="glm-5") if model is None else trainflops.SeqStats(model)


def check_model(name, model, dtype):
    batches = micro_batches(200, seed=len(name))
    on_gpu, from_lists = stats_of(name, model), stats_of(name, model)
    tensors = [torch.tensor(offsets, dtype=dtype, device="cuda") for offsets in batches]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        start = time.perf_counter()
        for offsets in tensors:
            on_gpu.add_cu_seqlens(offsets)
        queued = time.perf_counter() - start
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    for offsets in batches:
        from_lists.add_cu_seqlens(offsets)
    same = on_gpu.vector() == from_lists.vector() and on_gpu.flops() == from_lists.flops()
    print(f"{'ok' if same else 'FAILED'}: {name}, {dtype}: {len(batches)} CUDA micro-batches equal the lists "
          f"({on_gpu.tokens()} tokens), no host sync, {1e6 * queued / len(batches):.0f} us per call")
    return same


def check_errors():
    """An invalid tensor is recorded on the device, without a sync, and raised at the next read."""
    stats = trainflops.SeqStats(DSA_KPOOL)
    torch.cuda.set_sync_debug_mode("error")
    try:
        stats.add_cu_seqlens(torch.tensor([0, 7, 300], dtype=torch.int32, device="cuda"))
        stats.add_cu_seqlens(torch.tensor([0, 5, 9, 8], dtype=torch.int32, device="cuda"))
        stats.add_cu_seqlens(torch.tensor([0, 2**40, 2**41 + 5], dtype=torch.int64, device="cuda"))
    finally:
        torch.cuda.set_sync_debug_mode("default")
    try:
        stats.tokens()
        message = "no error"
    except trainflops.InvalidInputError as error:
        message = str(error)
    expected = "cu_seqlens[3] = 8: must not be smaller than the previous offset 9"
    ok = message == expected and stats.tokens() == 300 + 2**41 + 5
    print(f"{'ok' if ok else 'FAILED'}: an invalid CUDA tensor raises at the next read ({message!r}), adds nothing")
    return ok


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 2
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    results = [check_model(name, model, dtype) for name, model in MODELS.items()
               for dtype in (torch.int32, torch.int64)]
    results.append(check_errors())
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
