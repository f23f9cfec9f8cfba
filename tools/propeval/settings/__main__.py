"""``python -m propeval.settings > docs/settings.md``."""

import sys

from propeval.settings.docs import render_docs

sys.stdout.write(render_docs())
