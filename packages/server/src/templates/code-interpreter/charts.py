"""Results that E2B's Code Interpreter SDK reads beyond Jupyter's own formats, for the IPython kernel.

`e2b/chart` (the SDK's `result.chart`): what a matplotlib figure shows, as data next to its PNG: the
chart's type, title, axes and its points, bars, slices or box statistics. `e2b/data` (`result.data`):
a pandas DataFrame's columns. Both are IPython display formatters, so `plt.show()`, a figure or a
DataFrame as a cell's last expression, and `display(...)` all get them.

An IPython extension: install-kernels.sh links this file onto Python's path as `sandpit_charts` (its
own name, so that a user's `import charts` finds theirs) and names it in the kernel's config.
"""
import datetime
import functools
import math
import numbers
import re
import sys
import weakref

# The boxes drawn by Axes.bxp, per Axes: once drawn, nothing tells a median line from a whisker.
_BOXPLOTS = weakref.WeakKeyDictionary()
# "Time (s)" or "Distance [m]": a unit in brackets at the end of an axis label.
_UNIT = re.compile(r"[(\[]([^()\[\]]+)[)\]]\s*$")
_MATHDEFAULT = re.compile(r"\\mathdefault\{(.*)\}")


def load_ipython_extension(ip):
    from IPython.core.formatters import BaseFormatter

    class JSONObjectFormatter(BaseFormatter):
        """Formats the instances of one class, named by module and name, as a JSON object."""

        _return_type = dict

        def __init__(self, module, name, extract, **kwargs):
            super().__init__(**kwargs)
            self.cls, self.extract = (module, name), _quiet(extract)

        def __call__(self, obj):
            # Not through IPython's registry of types: matplotlib's inline backend removes Figure from
            # every formatter there when it sets up its PNG (on a kernel's first figure, for one).
            # Looked up among loaded modules: a library not imported yet has no instances to show.
            module, name = self.cls
            cls = getattr(sys.modules.get(module), name, None)
            if self.enabled and cls is not None and isinstance(obj, cls):
                return self.extract(obj)
            return super().__call__(obj)

    _keep_boxplots()
    for mime, module, name, extract in (
        ("e2b/chart", "matplotlib.figure", "Figure", figure_chart),
        ("e2b/data", "pandas", "DataFrame", dataframe_data),
    ):
        print_method = "_repr_" + mime.replace("/", "_") + "_"
        fmt = JSONObjectFormatter(module, name, extract, parent=ip.display_formatter, format_type=mime, print_method=print_method)
        ip.display_formatter.formatters[mime] = fmt


def _quiet(extract):
    # A figure or frame this cannot read still shows its PNG or table; IPython would print a traceback.
    @functools.wraps(extract)
    def safe(obj):
        try:
            return extract(obj)
        except Exception:  # noqa: BLE001
            return None

    return safe


def _keep_boxplots():
    """Wraps Axes.bxp (which boxplot, pandas and seaborn draw boxes with) to keep each box's statistics."""
    try:
        from matplotlib.axes import Axes
    except ImportError:
        return
    draw = Axes.bxp
    if getattr(draw, "_sandpit_keeps_stats", False):
        return

    @functools.wraps(draw)
    def bxp(self, bxpstats, *args, **kwargs):
        bxpstats = list(bxpstats)
        artists = draw(self, bxpstats, *args, **kwargs)
        _BOXPLOTS.setdefault(self, []).append((bxpstats, artists))
        return artists

    bxp._sandpit_keeps_stats = True
    Axes.bxp = bxp


# ---- figures ----


def figure_chart(fig):
    """The e2b/chart object of a figure: one chart, or a superchart of one per Axes; None when empty."""
    axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.get_label() != "<colorbar>" and ax.has_data()]
    suptitle = _text(_suptitle(fig))
    if not axes:
        return None
    if len(axes) == 1:
        chart = axes_chart(axes[0])
        chart["title"] = chart["title"] or suptitle
        return chart
    return {"type": "superchart", "title": suptitle, "elements": [axes_chart(ax) for ax in axes]}


def _suptitle(fig):
    if hasattr(fig, "get_suptitle"):
        return fig.get_suptitle()
    # Before matplotlib 3.8 (Debian bookworm has 3.6) the figure keeps it only here.
    text = getattr(fig, "_suptitle", None)
    return text.get_text() if text is not None else ""


def axes_chart(ax):
    """One Axes as a chart of the kind of data it holds; a mix of kinds (or none known) is `unknown`."""
    title = _text(ax.get_title()) or _text(ax.get_title("left")) or _text(ax.get_title("right"))
    kinds = _data_by_kind(ax) if ax.name == "rectilinear" else {}
    if len(kinds) != 1:
        return {"type": "unknown", "title": title, "elements": []}
    ((kind, items),) = kinds.items()
    if kind in ("line", "scatter"):
        return _point_chart(kind, ax, title, items)
    return {"bar": _bar_chart, "pie": _pie_chart, "box_and_whisker": _box_chart}[kind](ax, title, items)


def _data_by_kind(ax):
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.patches import Wedge

    boxes = [(stats, artists) for stats, artists in _BOXPLOTS.get(ax, ()) if artists["medians"] and artists["medians"][0] in ax.lines]
    # Lines that draw a box plot or error bars are part of those, not series of their own.
    parts = {id(a) for _, artists in boxes for drawn in artists.values() for a in drawn}
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            parts.update(id(a) for a in c.lines[1])
    kinds = {
        "box_and_whisker": boxes,
        "pie": [p for p in ax.patches if isinstance(p, Wedge) and p.get_visible()],
        "bar": [c for c in ax.containers if isinstance(c, BarContainer)],
        # axhline and the like are placed partly in axes coordinates: guides, not data.
        "line": [l for l in ax.get_lines() if id(l) not in parts and l.get_visible() and l.get_transform() is ax.transData],
        "scatter": [c for c in ax.collections if isinstance(c, PathCollection) and c.get_visible()],
    }
    return {kind: items for kind, items in kinds.items() if items}


def _point_chart(kind, ax, title, series):
    chart = _chart_2d(kind, title, ax.get_xlabel(), ax.get_ylabel())
    columns = []
    for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        scale = _scale(axis)
        ticks = _visible_ticks(axis)
        locs = _values(axis, scale, [loc for loc, _ in ticks])
        # A locator's arithmetic leaves float noise in plain numbers (0.4000000000000001 for 0.4).
        chart[f"{name}_ticks"] = [_round(v, 12) if isinstance(v, float) else v for v in locs]
        chart[f"{name}_tick_labels"] = [label for _, label in ticks]
        chart[f"{name}_scale"] = scale
        columns.append((axis, scale))
    (xaxis, xscale), (yaxis, yscale) = columns
    chart["elements"] = []
    for s in series:
        # In data coordinates, after matplotlib's unit conversion (dates and categories are numbers here).
        xy = s.get_xydata() if kind == "line" else _filled(s.get_offsets())
        xs, ys = _values(xaxis, xscale, xy[:, 0]), _values(yaxis, yscale, xy[:, 1])
        chart["elements"].append({"label": _label(s), "points": [list(p) for p in zip(xs, ys)]})
    return chart


def _bar_chart(ax, title, containers):
    horizontal = containers[0].orientation == "horizontal"
    # x_label names the categories and y_label the values, whichever way the bars point.
    if horizontal:
        chart, categories = _chart_2d("bar", title, ax.get_ylabel(), ax.get_xlabel()), ax.yaxis
    else:
        chart, categories = _chart_2d("bar", title, ax.get_xlabel(), ax.get_ylabel()), ax.xaxis
    name = _namer(categories)
    chart["elements"] = []
    for i, container in enumerate(containers):
        # An unlabelled group (matplotlib's "_container0") is told apart by its place.
        group = _label(container) or str(i)
        for bar in container:
            start, size, value = (bar.get_y(), bar.get_height(), bar.get_width()) if horizontal else (bar.get_x(), bar.get_width(), bar.get_height())
            chart["elements"].append({"label": name(start, start + size), "group": group, "value": _number(value)})
    return chart


def _pie_chart(ax, title, wedges):
    elements = [{"label": _label(w), "angle": _round(w.theta2 - w.theta1, 6), "radius": _number(w.r)} for w in wedges]
    return {"type": "pie", "title": title, "elements": elements}


def _box_chart(ax, title, boxes):
    elements = []
    horizontal = False
    for stats, artists in boxes:
        for s, median in zip(stats, artists["medians"]):
            xs, ys = median.get_xdata(), median.get_ydata()
            # A median line runs across its box: level in an upright box plot, upright in a horizontal one.
            horizontal = xs[0] == xs[-1] and ys[0] != ys[-1]
            across = ys if horizontal else xs
            label = s.get("label")
            if label is None:
                label = _namer(ax.yaxis if horizontal else ax.xaxis)(min(across), max(across))
            elements.append(
                {
                    "label": str(label),
                    "min": _number(s["whislo"]),
                    "first_quartile": _number(s["q1"]),
                    "median": _number(s["med"]),
                    "third_quartile": _number(s["q3"]),
                    "max": _number(s["whishi"]),
                    "outliers": [_number(v) for v in s["fliers"]],
                }
            )
    if horizontal:
        chart = _chart_2d("box_and_whisker", title, ax.get_ylabel(), ax.get_xlabel())
    else:
        chart = _chart_2d("box_and_whisker", title, ax.get_xlabel(), ax.get_ylabel())
    chart["elements"] = elements
    return chart


def _chart_2d(kind, title, x_label, y_label):
    x_label, y_label = _text(x_label), _text(y_label)
    return {"type": kind, "title": title, "x_label": x_label, "y_label": y_label, "x_unit": _unit(x_label), "y_unit": _unit(y_label)}


# ---- axes: scales, ticks, values ----


def _scale(axis):
    from matplotlib import category, dates

    date_formatters = (dates.DateFormatter, dates.AutoDateFormatter, dates.ConciseDateFormatter)
    if isinstance(axis.get_major_locator(), dates.DateLocator) or isinstance(axis.get_major_formatter(), date_formatters):
        return "datetime"
    if _pandas_freq(axis) is not None:
        return "datetime"
    if isinstance(axis.get_units(), category.UnitData):
        return "categorical"
    return axis.get_scale()


def _pandas_freq(axis):
    # pandas plots a time series of regular frequency against period numbers (days since 1970 for
    # daily data, months for monthly...), with a formatter of its own that knows the frequency.
    formatter = axis.get_major_formatter()
    return getattr(formatter, "freq", None) if type(formatter).__name__ == "TimeSeries_DateFormatter" else None


def _visible_ticks(axis):
    """The major ticks inside the view and their labels, as matplotlib draws them (before any draw)."""
    locs = list(axis.get_majorticklocs())
    # Formatted all together, as a draw does: a formatter may label a tick by its neighbours.
    labels = axis.get_major_formatter().format_ticks(locs)
    low, high = sorted(axis.get_view_interval())
    slack = (high - low) * 1e-9
    return [(float(loc), _plain(label)) for loc, label in zip(locs, labels) if low - slack <= loc <= high + slack]


def _namer(axis):
    """Names a span of an axis (a bar, a box) by the tick inside it nearest its middle, else by its middle."""
    ticks = _visible_ticks(axis)
    scale = _scale(axis)

    def name(start, end):
        low, high = min(start, end), max(start, end)
        middle = (low + high) / 2
        slack = (high - low) * 1e-9
        inside = [(abs(loc - middle), label) for loc, label in ticks if low - slack <= loc <= high + slack]
        if inside:
            return min(inside)[1]
        value = _values(axis, scale, [middle])[0]
        return f"{value:g}" if isinstance(value, float) else str(value)

    return name


def _values(axis, scale, values):
    """Data-space numbers as E2B reports them: ISO dates on a date axis, names on a categorical one."""
    floats = [float(v) for v in values]
    if scale == "datetime":
        from matplotlib import dates

        freq = _pandas_freq(axis)
        if freq is not None:
            import pandas

            return [pandas.Period(ordinal=round(v), freq=freq).to_timestamp().isoformat() if math.isfinite(v) else None for v in floats]
        return [dates.num2date(v).isoformat() if math.isfinite(v) else None for v in floats]
    if scale == "categorical":
        names = axis.get_major_formatter().format_ticks(floats)
        return [str(n) if math.isfinite(v) else None for n, v in zip(names, floats)]
    return [_number(v) for v in floats]


def _filled(offsets):
    import numpy

    return numpy.ma.filled(numpy.ma.asarray(offsets, dtype=float), numpy.nan)


# ---- small conversions ----


def _number(v):
    # JSON has no NaN or infinity (and Jupyter's messages refuse them).
    v = float(v)
    return v if math.isfinite(v) else None


def _round(v, digits):
    # For numbers matplotlib computed (ticks, angles), not the data: 0.4000000000000001 is 0.4, and a
    # pie's angles, worked out in float32 (7 digits), are 324 and 36, not 323.999991417 and 36.000000536.
    v = _number(v)
    return None if v is None else float(f"{v:.{digits}g}")


def _text(s):
    return str(s) if s else None


def _unit(label):
    match = _UNIT.search(label) if label else None
    return match.group(1).strip() if match else None


def _label(artist):
    # matplotlib marks labels of its own (for artists given none) with a leading underscore.
    label = artist.get_label()
    return "" if label is None or str(label).startswith("_") else str(label)


def _plain(label):
    # Log axes label ticks in mathtext ("$\mathdefault{10^{2}}$"); the text without the markup reads "10^{2}".
    label = str(label)
    if len(label) > 1 and label[0] == label[-1] == "$":
        label = _MATHDEFAULT.sub(r"\1", label[1:-1])
    return label


# ---- DataFrames ----


def dataframe_data(frame):
    """The e2b/data object of a DataFrame: each column's values by its name, in JSON's types."""
    import numpy
    import pandas

    def value(v):
        if v is None or v is pandas.NaT or v is pandas.NA:
            return None
        if isinstance(v, (bool, str)):
            return v
        if isinstance(v, numbers.Integral):
            return int(v)
        if isinstance(v, numbers.Real):
            return _number(v)
        if isinstance(v, (datetime.date, datetime.time)):
            return v.isoformat()
        return str(v)

    def values(column):
        # tolist() gives Python's own types (and Timestamps) for numpy's, so plain numbers need no look
        # each; pandas' own dtypes (Int64 with NA, ...) give numpy's scalars.
        items = column.tolist()
        if isinstance(column.dtype, numpy.dtype) and column.dtype.kind in "biu":
            return items
        if isinstance(column.dtype, numpy.dtype) and column.dtype.kind == "f":
            return [v if math.isfinite(v) else None for v in items]
        return [value(v) for v in items]

    return {str(name): values(column) for name, column in frame.items()}
