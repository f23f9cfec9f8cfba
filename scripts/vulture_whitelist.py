"""Names vulture (``vulture``, configured in pyproject.toml's [tool.vulture]) reports as unused at
60% confidence that are used where it cannot see: each group says by what. Click's command
functions are left out by ``ignore_decorators`` instead. Not imported by anything; vulture reads it.
"""

# ruff: noqa: B018, F821
# mypy: ignore-errors

# Overrides of a library's class, called by the library.
_.format_commands  # click.Group: lists the commands in --help (cli/__init__.py)
_.log_message  # http.server.BaseHTTPRequestHandler (judge/loopback.py)
_.do_GET
_.do_POST
_.handle_error  # socketserver.BaseServer
client_address  # handle_error's parameter, named as the base class names it
protocol_version  # class attributes the http.server classes read
disable_nagle_algorithm
daemon_threads
request_queue_size
_.close_connection  # read by BaseHTTPRequestHandler after each request

# Attributes a library reads from the object they are set on.
_.n_parallel  # xllamacpp's CommonParams (judge/llama_server.py)
_.hostnames
_.model_alias
_.use_jinja
_.antiprompt
_.n_predict
_.n_threads
_.preserve_quotes  # ruamel.yaml's YAML (migrate.py, scaffold.py)
_.default_flow_style
_.allow_unicode

# Named in a file another program reads: lm-eval's task YAML (`!function utils.NAME`), promptfoo's
# assertion (`file://propeval_assert.py`), the Jinja templates (report.html.j2, card.md.j2), the
# settings tables (a key is read by its name: settings/gates.py, settings/release.py).
PropevalTask
process_results_facts
process_results_audit
mean_scored
get_assert
alt  # judge/kinds/base.Image.alt, in report.html.j2
license  # settings/release.py, in card.md.j2
task_categories
fact_states  # gates/answerability.AnswerabilityResult: keys of the JSON a maintainer signs
frame_adopted
answer_status
judge_min_accuracy  # settings/gates.py, looked up by name in gates/judge_gate.py
judge_min_kappa
judge_min_alpha
judge_min_f1

# Module-level __getattr__: Python calls it for a missing name (harness/source.py says how to refresh
# an adapter copied by an earlier version).
__getattr__

# Read through the instance's __dict__ by the class's own __getattr__ (loadcache.py).
_._name

# Used by scripts/docs_examples.py (README's cog blocks) and tests, not by the package itself.
LOCAL  # harness/recipes.py
OPENROUTER
recipes
markdown_table  # rules.py: the rule reference in the docs
TEMPLATE_TOKENS  # judge/local.py: tests/judge/test_local_server.py checks an answer has none
FaultScript  # judge/loopback.py: seeded faults for tests/judge and benchmarks/judge_faults.py
_neg_log_posterior  # difficulty/irt.py: the reference objective tests/difficulty checks the fast one against
_grm_neg_log_posterior
