"""trainflops.SeqStats in one process: inputs, merging by summed vectors, errors."""
import random

import numpy as np
import pytest
import torch

import trainflops

# DeepSeek-V3.2-like DSA with KPool: the statistics are more than T and S2.
DSA_ARGS = {
    "num_layers": 4, "hidden_size": 1024, "ffn_hidden_size": 4096, "num_attention_heads": 16, "swiglu": True,
    "padded_vocab_size": 32000, "seq_length": 4096, "multi_latent_attention": True, "q_lora_rank": 256,
    "kv_lora_rank": 128, "qk_head_dim": 64, "qk_pos_emb_head_dim": 32, "v_head_dim": 64,
    "experimental_attention_variant": "dsa", "dsa_indexer_n_heads": 8, "dsa_indexer_head_dim": 64,
    "dsa_indexer_topk": 256, "dsa_kpool_size": 4,
}
DENSE_ARGS = {"num_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "ffn_hidden_size": 1024,
              "kv_channels": 64, "padded_vocab_size": 1024, "seq_length": 512}


def documents(count, seed):
    rng = random.Random(seed)
    return [rng.choice([0, 1, 2, 3, 255, 256, 257, 1000, rng.randrange(1, 5000)]) for _ in range(count)]


@pytest.mark.parametrize("args", [DSA_ARGS, DENSE_ARGS], ids=["dsa-kpool", "dense"])
def test_merged_vectors_equal_the_single_process_count(args):
    docs = documents(64, seed=5)
    whole = trainflops.SeqStats(args)
    whole.add_lengths(docs)
    ranks = [trainflops.SeqStats(args) for _ in range(4)]
    for rank, stats in enumerate(ranks):
        share = docs[rank::4]
        stats.add_cu_seqlens(np.cumsum([0] + share))
    summed = [sum(lanes) for lanes in zip(*(stats.vector() for stats in ranks))]
    merged = trainflops.SeqStats(args)
    merged.set_vector(summed)
    assert merged.flops() == whole.flops()
    assert merged.tokens() == sum(docs)
    assert whole.flops() == trainflops.count(args, docs=docs, mode="model").total
    assert len(whole.vector()) == 2 + 3 * len(whole.statistics)
    assert merged.vector()[0] == 4  # the ranks summed


def test_cu_seqlens_forms_agree():
    offsets = [0, 7, 7, 300, 4400]
    forms = [offsets, tuple(offsets), np.array(offsets, dtype=np.int32), np.array(offsets, dtype=np.int64),
             torch.tensor(offsets, dtype=torch.int32), torch.tensor(offsets, dtype=torch.int64),
             np.array(offsets, dtype=np.int16),  # copied, not viewed in place
             np.repeat(np.array(offsets, dtype=np.int64), 2)[::2],  # strided
             torch.tensor([0] + offsets, dtype=torch.int32)[1:]]  # a view at an offset
    vectors = []
    for form in forms:
        stats = trainflops.SeqStats(DSA_ARGS)
        stats.add_cu_seqlens(form)
        vectors.append(stats.vector())
    assert all(vector == vectors[0] for vector in vectors)
    stats = trainflops.SeqStats(DSA_ARGS)
    stats.set_vector(torch.tensor(vectors[0]))
    assert stats.vector() == vectors[0]


@pytest.mark.parametrize("nothing", [None, [], [0], (0,), np.array([0], dtype=np.int32), torch.tensor([0]),
                                     torch.tensor([], dtype=torch.int32)],
                         ids=["None", "[]", "[0]", "(0,)", "array [0]", "tensor [0]", "empty tensor"])
def test_no_documents_add_nothing(nothing):
    # Megatron-LM's accumulator returns at once for None and for fewer than two offsets.
    stats = trainflops.SeqStats(DSA_ARGS)
    stats.add_lengths([8, 300])
    before = stats.vector()
    stats.add_cu_seqlens(nothing)
    assert stats.vector() == before


def test_a_tensor_is_reduced_when_added_and_its_errors_raised_when_the_totals_are_read():
    # A tensor is reduced on its device at once (the caller may reuse its buffer) and read at the first read.
    offsets = torch.tensor([0, 7, 7, 300, 4400], dtype=torch.int32)
    kept = trainflops.SeqStats(DSA_ARGS)
    kept.add_cu_seqlens(offsets)
    kept.add_cu_seqlens(offsets[:3])
    offsets[1] = 4000  # reused by the caller
    at_once = trainflops.SeqStats(DSA_ARGS)
    at_once.add_cu_seqlens([0, 7, 7, 300, 4400])
    at_once.add_cu_seqlens([0, 7, 7])
    assert kept.tokens() == 4407
    assert kept.vector() == at_once.vector()
    assert kept.flops() == at_once.flops()
    invalid = trainflops.SeqStats(DSA_ARGS)
    invalid.add_cu_seqlens(torch.tensor([0, 5, 3]))
    with pytest.raises(trainflops.TrainflopsError, match="^cu_seqlens\\[2\\] = 3: must not be smaller"):
        invalid.flops()


# Models whose statistics need every kind of moment: DSA with KPool (pools, and
# their remainders past a threshold), DeepSeek-V4 (windows, compressed entries),
# block-sparse attention and windowed or chunked attention (native configs).
DSV4_ARGS = {"num_layers": 3, "hidden_size": 64, "num_attention_heads": 2, "ffn_hidden_size": 32, "swiglu": True,
             "padded_vocab_size": 100, "multi_latent_attention": True, "q_lora_rank": 8, "v_head_dim": 8,
             "experimental_attention_variant": "dsv4_hybrid", "o_groups": 2, "o_lora_rank": 4,
             "csa_window_size": 20, "dsa_indexer_n_heads": 2, "dsa_indexer_head_dim": 4, "dsa_indexer_topk": 6,
             "seq_length": 64, "csa_compress_ratios": [0, 4, 128]}
MIXED_CONFIG = {"hidden_size": 16, "vocab_size": 50, "mixers": {
    "sparse": {"type": "block_sparse", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "indexer_num_heads": 2,
               "indexer_head_dim": 4, "block_size": 4, "topk_blocks": 3, "init_blocks": 1},
    "window": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "window": 5},
    "chunk": {"type": "gqa", "num_heads": 4, "num_query_groups": 2, "head_dim": 8, "chunk": 6}},
    "layers": [{"mixer": "sparse"}, {"mixer": "window"}, {"mixer": "chunk"}]}
MOMENT_MODELS = [DSA_ARGS, DENSE_ARGS, DSV4_ARGS, MIXED_CONFIG]


@pytest.mark.parametrize("args", MOMENT_MODELS, ids=["dsa-kpool", "dense", "dsv4", "block-sparse-window-chunk"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int16])
def test_tensors_summed_on_their_device_equal_the_lists(args, dtype):
    rng = random.Random(3)
    tensors, lists = trainflops.SeqStats(args), trainflops.SeqStats(args)
    every_document = []
    for micro_batch in range(30):
        docs = documents(rng.randrange(1, 9), seed=micro_batch)
        if dtype == torch.int16:
            docs = [length % 4000 for length in docs]
        every_document += docs
        offsets = np.cumsum([0] + docs).tolist()
        tensors.add_cu_seqlens(torch.tensor(offsets, dtype=dtype))
        lists.add_cu_seqlens(offsets)
    assert tensors.vector() == lists.vector()
    assert tensors.flops() == trainflops.count(args, docs=every_document, mode="model").total


def test_adding_a_tensor_reads_none_of_its_values_on_the_host(monkeypatch):
    # What would synchronize with a GPU: a tensor's value read into Python. (seq_stats_cuda.py checks a real GPU.)
    stats = trainflops.SeqStats(MIXED_CONFIG)
    offsets = [torch.tensor([0, 7, 7, 300, 4400], dtype=torch.int32), torch.tensor([0, 5, 3]), torch.tensor([2, 9])]

    def refuse(*_):
        raise AssertionError("a tensor's value was read on the host")

    with monkeypatch.context() as patch:
        for method in ("__bool__", "__int__", "__index__", "__float__", "item", "tolist", "numpy", "cpu"):
            patch.setattr(torch.Tensor, method, refuse)
        for tensor in offsets * 3:
            stats.add_cu_seqlens(tensor)
        with pytest.raises(AssertionError, match="read on the host"):
            stats.tokens()  # reading the totals is the one place that may
    with pytest.raises(trainflops.InvalidInputError, match="^cu_seqlens\\[2\\] = 3: must not be smaller"):
        stats.tokens()
    assert stats.tokens() == 3 * 4400


def test_device_sums_past_int64_stay_exact():
    # Each call's sum of L^2 is near 2^62: the sums pass 2^63 after two calls, and stay exact in two lanes.
    longest = 2**31 - 1
    tensors, lists = trainflops.SeqStats(DSA_ARGS), trainflops.SeqStats(DSA_ARGS)
    for offsets in [[0, longest]] * 5 + [[0, longest - 5, longest]] * 3:
        tensors.add_cu_seqlens(torch.tensor(offsets, dtype=torch.int64))
        lists.add_cu_seqlens(offsets)
    assert tensors.vector() == lists.vector()
    assert tensors.tokens() == 8 * longest


def test_a_call_of_many_documents_is_summed_in_parts():
    docs = documents(3 * 2**16 + 5, seed=9)
    offsets = np.cumsum([0] + docs)
    tensors, lists = trainflops.SeqStats(DSA_ARGS), trainflops.SeqStats(DSA_ARGS)
    tensors.add_cu_seqlens(torch.from_numpy(offsets))
    lists.add_cu_seqlens(offsets)
    assert tensors.vector() == lists.vector()
    offsets[2**16 + 7] = offsets[2**16 + 6] - 1  # a bad offset in a later part
    tensors.add_cu_seqlens(torch.from_numpy(offsets))
    with pytest.raises(trainflops.InvalidInputError, match=f"^cu_seqlens\\[{2**16 + 7}\\] = "):
        tensors.flops()
    assert tensors.vector() == lists.vector()


@pytest.mark.parametrize("args", MOMENT_MODELS, ids=["dsa-kpool", "dense", "dsv4", "block-sparse-window-chunk"])
def test_device_sums_of_long_documents_stay_exact(args):
    # Lengths past 2^31 and 2^42 (a length's top limb), one near the per-rank limit of 2^94 causal pairs.
    near_limit = 199_032_864_766_429
    batches = [[0, 2**31 + 5, 2**32], [0, 2**42 + 3, 2**43 + 2**21 + 1], [0, near_limit]]
    for batch in batches:
        tensors, lists = trainflops.SeqStats(args), trainflops.SeqStats(args)
        tensors.add_cu_seqlens(torch.tensor(batch, dtype=torch.int64))
        lists.add_cu_seqlens(batch)
        assert tensors.vector() == lists.vector()


def test_tensor_errors_add_nothing_and_are_raised_once_at_the_next_read():
    stats = trainflops.SeqStats(DSA_ARGS)
    stats.add_cu_seqlens(torch.tensor([0, 7, 300]))
    stats.add_cu_seqlens(torch.tensor([0, 5, 9, 8, 10]))  # the first error is the one raised
    stats.add_cu_seqlens(torch.tensor([3, 5]))
    stats.add_cu_seqlens(torch.tensor([0, 40], dtype=torch.int32))
    with pytest.raises(trainflops.InvalidInputError) as raised:
        stats.tokens()
    assert str(raised.value) == "cu_seqlens[3] = 8: must not be smaller than the previous offset 9"
    assert stats.tokens() == 340  # the valid calls, and no error again
    first = trainflops.SeqStats(DSA_ARGS)
    first.add_cu_seqlens(torch.tensor([3, 5]))
    with pytest.raises(trainflops.InvalidInputError, match="^cu_seqlens\\[0\\] = 3: must be 0$"):
        first.vector()
    for dtype in (torch.float32, torch.float64, torch.bool):
        with pytest.raises(trainflops.InvalidInputError) as raised:
            stats.add_cu_seqlens(torch.tensor([0, 1], dtype=dtype))
        assert str(raised.value) == f"cu_seqlens holds {dtype} elements, not integers: give int32 or int64 values"


def test_reset_and_accumulation():
    stats = trainflops.SeqStats(trainflops.Model(DENSE_ARGS))
    stats.add_lengths([10, 20])
    stats.add_lengths([30])
    assert stats.tokens() == 60
    assert stats.flops() == trainflops.count(DENSE_ARGS, docs=[10, 20, 30], mode="model").total
    stats.reset()
    assert stats.tokens() == 0
    assert stats.vector()[0] == 1 and set(stats.vector()[2:]) == {0}  # one rank, no documents
    assert stats.statistics == ["tokens", "causal_pairs"]


def test_model_sources_as_count_takes_them():
    offsets = [0, 4096, 70000, 70001]
    counted = trainflops.count(preset="glm-5", cu_seqlens=offsets, mode="model", dsa_indexer_grad_mode="sparse").total
    for stats in (trainflops.SeqStats(preset="glm-5", dsa_indexer_grad_mode="sparse"),
                  trainflops.SeqStats(model=trainflops.Model(preset="glm-5", dsa_indexer_grad_mode="sparse"))):
        stats.add_cu_seqlens(offsets)
        assert stats.flops() == counted
    dense_indexer = trainflops.SeqStats(preset="glm-5")
    dense_indexer.add_cu_seqlens(offsets)
    assert dense_indexer.flops() != counted
    with pytest.raises(trainflops.InvalidInputError, match="^several models: give exactly one model source"):
        trainflops.SeqStats(DENSE_ARGS, preset="glm-5")
    with pytest.raises(trainflops.InvalidInputError, match="^no model: give exactly one model source"):
        trainflops.SeqStats()


ERRORS = [
    (lambda s: s.add_cu_seqlens([0, 5, 3]), "cu_seqlens[2] = 3: must not be smaller than the previous offset 5"),
    (lambda s: s.add_cu_seqlens([1, 5]), "cu_seqlens[0] = 1: must be 0"),
    (lambda s: s.add_cu_seqlens(np.array([0, 5, 3], dtype=np.int32)),
     "cu_seqlens[2] = 3: must not be smaller than the previous offset 5"),
    (lambda s: s.add_cu_seqlens(np.array([[0, 5]], dtype=np.int64)), "cu_seqlens has 2 dimensions: must be one-dimensional"),
    (lambda s: s.add_lengths([4, -1]), "lengths[1] = -1: must be >= 0"),
    (lambda s: s.add_lengths(np.array([1.0])),
     "lengths holds elements of buffer format 'd', not integers: give int32 or int64 values"),
    (lambda s: s.set_vector([1, 2]), "the vector has 2 entries; this model's has 8"),
    (lambda s: s.set_vector([0, 0, 0, 0, -1, 0, 0, 0]), "vector[4] is negative: not a sum of SeqStats vectors"),
    # A top lane that no sum over the vector's ranks (none here) reaches.
    (lambda s: s.set_vector([0, 0, 2**61 + 1, 0, 0, 0, 0, 0]),
     "vector[2] = 2305843009213693953: more than a sum over 0 ranks can hold: not a sum of SeqStats vectors"),
    (lambda s: s.set_vector([1, 12345, 0, 0, 0, 0, 0, 0]),
     "vector[1] = 12345: not 1 times this model's fingerprint " + str(trainflops.SeqStats(DENSE_ARGS).vector()[1]) +
     ": the vector sums SeqStats of another model (or is not a sum of SeqStats vectors)"),
]


@pytest.mark.parametrize("call,message", ERRORS, ids=[message[:40] for _, message in ERRORS])
def test_errors_add_nothing(call, message):
    stats = trainflops.SeqStats(DENSE_ARGS)
    stats.add_lengths([8])
    before = stats.vector()
    with pytest.raises(trainflops.TrainflopsError) as raised:
        call(stats)
    assert str(raised.value) == message
    assert stats.vector() == before
