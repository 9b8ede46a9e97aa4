"""The analyst's release report: one self-contained HTML page built from a release.

:func:`build_report` renders a Jinja2 template with inline CSS and inline
SVG figures drawn by matplotlib; nothing is fetched from the network and only
the release is used (post-processing, no privacy cost).  The command line is
``dpgraph report FILE.dpg -o report.html``.
"""

from .builder import build_report, render_report, report_context
from .flags import detectability

__all__ = ["build_report", "detectability", "render_report", "report_context"]
