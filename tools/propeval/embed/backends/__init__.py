"""The built-in embedding backends, one module each, each a :class:`propeval.embed.registry.Backend`.

A backend module owns every fact about its model: its name and description, the ``[tool.propeval.dedup]``
options and runtimes it reads, the languages its scores mean something in, the extra that installs it,
its margin prior, its threshold tables (with grey zones and provenance) per scoring model, and its
optional second model. The registry (:mod:`propeval.embed.registry`) loads these through the same door
as a plugin's, and no other module names a backend.
"""
