"""Comparison of the reference's FLOPs with trainflops', exact to the integer."""

import collections

# trainflops' breakdown order (docs/output.md), then anything else.
COMPONENT_ORDER = ["attention_projections", "core_attention", "dsa_core_attention", "indexer_projections",
                   "indexer_scoring", "indexer_teacher", "kpool_gate", "kpool_pooling", "mlp", "moe_router", "moe_routed",
                   "moe_shared", "hyper_connections", "attention_residuals", "mtp", "logits"]


def _by_component(flops):
    components = collections.Counter()
    for (_, component), value in flops.items():
        components[component] += value
    return components


def _ordered(keys):
    return sorted(keys, key=lambda c: (COMPONENT_ORDER.index(c) if c in COMPONENT_ORDER else len(COMPONENT_ORDER), c))


def differences(reference, trainflops_total, trainflops):
    """Lines describing where the reference (FLOPs per (layer, component))
    and trainflops (its exact total and per (layer, component) FLOPs) differ;
    empty when they agree everywhere."""
    reference_total = sum(reference.values())
    if reference_total == trainflops_total and reference == trainflops:
        return []
    lines = [f"total: reference {reference_total}, trainflops {trainflops_total}, "
             f"difference (trainflops - reference) {trainflops_total - reference_total:+d}"]
    components_ref, components_tf = _by_component(reference), _by_component(trainflops)
    lines.append(f"  {'component':<24}{'reference':>16}{'trainflops':>16}{'difference':>14}")
    for component in _ordered(set(components_ref) | set(components_tf)):
        r, t = components_ref[component], components_tf[component]
        mark = "" if r == t else "  <-"
        lines.append(f"  {component:<24}{r:>16}{t:>16}{t - r:>+14}{mark}")
    differing = [key for key in set(reference) | set(trainflops) if reference[key] != trainflops[key]]
    if differing:
        lines.append("  per layer, where they differ:")
        for layer, component in sorted(differing, key=lambda k: (k[0], _ordered([k[1]]))):
            r, t = reference[(layer, component)], trainflops[(layer, component)]
            lines.append(f"  {layer + ' ' + component:<40}{r:>16}{t:>16}{t - r:>+14}")
    return lines
