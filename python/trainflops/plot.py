"""Pictures of trainflops' JSON output, drawn with matplotlib (Agg, no display needed).

    python3 -m trainflops.plot sweep IN.json -o OUT.png     # from `trainflops sweep --format json`
    python3 -m trainflops.plot layers IN.json -o OUT.svg    # from `trainflops count --format json`

IN.json may be `-` for stdin; the output format comes from the extension (.png or
.svg). From Python: plot_sweep(data, path) and plot_layers(data, path), where data
is the parsed JSON (a dict). Invalid input raises PlotError (a ValueError) naming
the field, the value and the rule; the command line prints it and exits with 2.
docs/plots.md in the source tree shows what each picture holds.
"""
import argparse
import json
import math
import sys
import textwrap
from pathlib import Path

__all__ = ["PlotError", "plot_layers", "plot_sweep"]

# A component under this share of the total everywhere is a band too thin to
# see; such components are drawn together as "other" to keep the legend short.
_SMALL_SHARE = 0.01
_FORMATS = {".png": "png", ".svg": "svg"}
_DPI = 100  # README pictures: about 1000 pixels wide and well under 150 KB
_OTHER_COLOUR = "0.75"
_SWEEP_SCHEMA = "not the JSON of `trainflops sweep --format json`"
_COUNT_SCHEMA = "not the JSON of `trainflops count --format json`"


class PlotError(ValueError):
    """Input that cannot be drawn: the message names the field, the value and the rule."""


def _require(data, key, kind, where):
    """data[key], checked to be `kind` ("string", "number", "positive number", "positive integer" or "object")."""
    if key not in data:
        raise PlotError(f"{where}{key} is missing")
    value = data[key]
    valid = {
        "string": isinstance(value, str),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value),
        "positive number": isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < math.inf,
        "positive integer": isinstance(value, int) and not isinstance(value, bool) and value > 0,
        "object": isinstance(value, dict),
    }[kind]
    if not valid:
        raise PlotError(f"{where}{key} = {json.dumps(value)}: must be a {kind}")
    return value


def _rows(data, key, schema):
    """The non-empty list data[key] of objects; the message says which JSON was expected."""
    if not isinstance(data, dict) or key not in data:
        raise PlotError(f'{schema} (no "{key}")')
    rows = data[key]
    if not isinstance(rows, list) or not rows:
        raise PlotError(f"{key} = {json.dumps(rows)[:60]}: must be a non-empty list")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise PlotError(f"{key}[{i}] = {json.dumps(row)[:60]}: must be an object")
    return rows


def _format_of(path):
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise PlotError(f'{path}: extension "{suffix}" is not .png or .svg (the picture format comes from it)')
    return _FORMATS[suffix]


def _length_label(tokens):
    """4096 -> "4k", 1048576 -> "1M"; lengths that are not whole multiples stay as they are."""
    for size, suffix in ((1 << 20, "M"), (1 << 10, "k")):
        if tokens % size == 0:
            return f"{tokens // size}{suffix}"
    return str(tokens)


def _bands(series, totals, stack_order=None):
    """[(label, values, colour)], bottom band first, for {component: [values]}; thin ones drawn as one "other".

    A component is thin when it stays under _SMALL_SHARE of the tallest stack.
    Colours follow the components' order in the JSON (trainflops' fixed order),
    so that a component has the same colour in a sweep and in a layer chart of
    the same model. stack_order(values) is the key the bands are sorted by; by
    default they stack in the JSON's order.
    """
    tallest = max(totals)
    small = [name for name, values in series.items() if max(values) < _SMALL_SHARE * tallest]
    if len(small) < 2:
        small = []  # an "other" holding one component would only hide its name
    # Matplotlib's default cycle without its grey (C7), which "other" uses.
    palette = [f"C{i}" for i in range(10) if i != 7]
    bands = [(name.replace("_", " "), values, palette[i % len(palette)])
             for i, (name, values) in enumerate(series.items()) if name not in small]
    if stack_order:
        bands.sort(key=lambda band: stack_order(band[1]))
    if small:
        other = [sum(series[name][i] for name in small) for i in range(len(totals))]
        label = "other (" + ", ".join(name.replace("_", " ") for name in small) + ")"
        bands.insert(0, (textwrap.fill(label, 28), other, _OTHER_COLOUR))
    return bands


def _growth(values):
    """Sorts flat components first and growing ones last: stacked over context
    length, the growth then shows as the rise of the top bands."""
    return (values[-1] / values[0] if values[0] > 0 else math.inf, -max(values))


def _legend(ax):
    """The legend right of the axes, never over the data, top band first."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8.5, frameon=False)


def _title(ax, heading, model):
    ax.set_title(heading + "\n" + textwrap.fill(model, 100), fontsize=10, loc="left")


def _save(figure, path, file_format):
    from matplotlib import rc_context

    # SVG: text stays text (searchable, selectable), and no date, so that the
    # same input gives the same file.
    metadata = {"Software": "trainflops"} if file_format == "png" else {"Creator": "trainflops", "Date": None}
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "trainflops"}):
        figure.savefig(path, format=file_format, dpi=_DPI, bbox_inches="tight", metadata=metadata)


def plot_sweep(data, path):
    """Draws `trainflops sweep --format json` output (a dict) into path (.png or .svg).

    Stacked areas: GFLOPs per token of one training iteration (forward +
    backward) by component, over context length (log scale); a dashed line: the
    same model under dense-attention accounting (dense_per_token), where it
    differs from the model.
    """
    file_format = _format_of(path)
    points = _rows(data, "points", _SWEEP_SCHEMA)
    model = _require(data, "model", "string", "")
    mode = _require(data, "mode", "string", "")
    lengths, totals, dense, series = [], [], [], {}
    for i, point in enumerate(points):
        where = f"points[{i}]."
        lengths.append(_require(point, "seq_length", "positive integer", where))
        totals.append(_require(point, "per_token", "positive number", where) / 1e9)
        dense.append(_require(point, "dense_per_token", "positive number", where) / 1e9)
        components = _require(point, "components_per_token", "object", where)
        for name in components:
            _require(components, name, "number", where + "components_per_token.")
            series.setdefault(name, [0.0] * len(points))
        for name in series:
            series[name][i] = components.get(name, 0.0) / 1e9
    if lengths != sorted(set(lengths)):
        raise PlotError(f"points: seq_length = {lengths}: must increase from point to point")

    from matplotlib.figure import Figure  # here, so that importing this module stays cheap

    bands = _bands(series, totals, stack_order=_growth)
    # Where dense accounting dwarfs the model, its components would be a thin
    # strip at the bottom: a second panel shows them at their own scale.
    zoom = max(dense) > 2 * max(totals)
    figure = Figure(figsize=(10, 7.5 if zoom else 5.2))
    axes = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2]) if zoom else [figure.add_subplot()]
    for ax in axes:
        ax.stackplot(lengths, [values for _, values, _ in bands], labels=[label for label, _, _ in bands],
                     colors=[colour for _, _, colour in bands], alpha=0.9, linewidth=0)
        ax.plot(lengths, totals, color="black", linewidth=1.2, marker="o", markersize=3.5,
                label="this model (top of the stack)")
        ax.set_ylabel("GFLOPs per token (one training\niteration: forward + backward)")
        ax.grid(True, axis="y", color="0.9")
        ax.set_axisbelow(True)
    top = axes[0]
    # Dense-attention accounting only where it differs from the model (DSA, or windows the mode counts).
    if dense != totals:
        top.plot(lengths, dense, color="crimson", linewidth=2.2, linestyle="--", marker="s", markersize=4,
                 label="dense-attention accounting\n(DSA as dense MLA, no indexer;\nwindows as full attention)")
        top.annotate(f"{dense[-1] / totals[-1]:.2f}x this model", (lengths[-1], dense[-1]), textcoords="offset points",
                     xytext=(-8, 0), ha="right", va="center", color="crimson", fontweight="bold")
    top.set_ylim(0, max(max(dense), max(totals)) * 1.08)
    if zoom:
        axes[1].set_ylim(0, max(totals) * 1.12)
        axes[1].set_title("this model alone, at its own scale", fontsize=9, loc="left")
    bottom = axes[-1]
    bottom.set_xscale("log", base=2)
    bottom.set_xticks(lengths, [_length_label(n) for n in lengths], minor=False)
    bottom.set_xticks([], minor=True)
    if len(lengths) > 1:  # one point: matplotlib widens the axis around it
        bottom.set_xlim(lengths[0], lengths[-1])
    bottom.set_xlabel("context length (tokens per sequence, log scale)")
    _legend(top)
    _title(top, f"Training FLOPs per token over context length ({mode} mode)", model)
    _save(figure, path, file_format)


def plot_layers(data, path):
    """Draws the "layers" of `trainflops count --format json` output (a dict) into path (.png or .svg).

    One bar per layer (decoder layers, MTP, logits), stacked by component, in
    FLOPs of the whole training iteration the count was taken for.
    """
    file_format = _format_of(path)
    layers = _rows(data, "layers", _COUNT_SCHEMA)
    model = _require(data, "model", "string", "")
    mode = _require(data, "mode", "string", "")
    workload = _require(_require(data, "workload", "object", ""), "description", "string", "workload.")
    names, totals, series = [], [], {}
    for i, layer in enumerate(layers):
        where = f"layers[{i}]."
        names.append(_require(layer, "name", "string", where))
        totals.append(_require(layer, "flops", "number", where))
        breakdown = _require(layer, "breakdown", "object", where)
        for name in breakdown:
            part = _require(breakdown, name, "object", where + "breakdown.")
            _require(part, "flops", "number", f"{where}breakdown.{name}.")
            series.setdefault(name, [0.0] * len(layers))
        for name in series:
            series[name][i] = breakdown[name]["flops"] if name in breakdown else 0.0

    from matplotlib.figure import Figure

    # One unit for the whole axis: the largest that keeps the tallest bar >= 1.
    exponent = max(0, min(18, 3 * (int(math.log10(max(max(totals), 1))) // 3)))
    unit = {0: "FLOPs", 3: "kFLOPs", 6: "MFLOPs", 9: "GFLOPs", 12: "TFLOPs", 15: "PFLOPs", 18: "EFLOPs"}[exponent]
    figure = Figure(figsize=(10, 5.2))
    ax = figure.add_subplot()
    positions = range(len(layers))
    base = [0.0] * len(layers)
    for label, values, colour in _bands(series, totals):
        heights = [v / 10.0 ** exponent for v in values]
        ax.bar(positions, heights, bottom=base, width=0.85, color=colour, label=label, linewidth=0)
        base = [b + h for b, h in zip(base, heights)]
    ax.set_xticks(*_layer_ticks(names), fontsize=8)
    for label in ax.get_xticklabels():
        label.set_rotation(0 if label.get_text().isdigit() else 90)  # names side by side need turning
    ax.set_xlim(-0.7, len(layers) - 0.3)
    ax.set_xlabel("decoder layer, then MTP and the output layer (logits)")
    ax.set_ylabel(f"{unit} per layer (one training\niteration: forward + backward)")
    ax.grid(True, axis="y", color="0.9")
    ax.set_axisbelow(True)
    _legend(ax)
    _title(ax, f"Training FLOPs per layer ({mode} mode), {workload}", model)
    _save(figure, path, file_format)


def _layer_ticks(names):
    """Tick positions and labels: decoder layers by number, at a step that keeps
    about 20 of them, and every other row (MTP, logits) by name."""
    decoder = [i for i, name in enumerate(names) if name.startswith("decoder.")]
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, math.inf) if len(decoder) / s <= 20)
    ticks = [i for n, i in enumerate(decoder) if n == 0 or (n + 1) % step == 0]
    ticks += [i for i, name in enumerate(names) if not name.startswith("decoder.")]
    return ticks, [names[i].removeprefix("decoder.") for i in ticks]


def _read(source):
    """The parsed JSON of a file name, or of stdin for "-"."""
    name = "stdin" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text()
    except OSError as error:
        raise PlotError(f"{name}: cannot read: {error.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PlotError(f"{name}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m trainflops.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["sweep", "layers"],
                        help="sweep: `trainflops sweep --format json`; layers: `trainflops count --format json`")
    parser.add_argument("input", metavar="IN.json", help="the JSON to draw, or - for stdin")
    parser.add_argument("-o", "--output", metavar="OUT", required=True, help="the picture: OUT.png or OUT.svg")
    options = parser.parse_args(argv)
    draw = plot_sweep if options.kind == "sweep" else plot_layers
    try:
        _format_of(options.output)  # before reading: a typo should not cost a sweep
        data = _read(options.input)
        try:
            draw(data, options.output)
        except PlotError as error:
            raise PlotError(f"{'stdin' if options.input == '-' else options.input}: {error}") from None
    except PlotError as error:
        print(f"trainflops.plot: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        print(f"trainflops.plot: needs matplotlib ({error}); on Debian: apt-get install python3-matplotlib",
              file=sys.stderr)
        return 2
    except OSError as error:
        print(f"trainflops.plot: {options.output}: cannot write: {error.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
