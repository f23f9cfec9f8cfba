"""The judge engine: answers from models, verdicts from a judge, scores from verdicts.

Modules:

* ``settings``  ``[tool.propeval.judge]``: endpoints, concurrency, timeouts, retries, re-asks.
* ``client``    the OpenAI-compatible client with our own retry policy (``openai`` imported lazily).
* ``rubric``    rubrics as data: ``rubrics/<name>/rubric.yaml``, the prompt template, the gold set.
* ``prompt``    fills a template, fencing untrusted text behind per-call boundary tokens.
* ``kinds/``    one class per rubric kind (``facts``, ``audit``) and the ``KINDS`` registry: verdict
                validation, record fields, scores, report panels, agreement statistics.
* ``verdict``   parses a judge's JSON reply and hands it to the rubric's kind.
* ``runs``      the run folder: ``run.json``, ``answers.jsonl``, ``grades-<rubric>.jsonl``; the one
                reader of graded runs (``read_graded``) for score, report and difficulty.
* ``answer``, ``grade``, ``score``  the three core operations behind the commands; ``grade``
                also asks a panel of judges and combines their verdicts (``Kind.combine``).
* ``cache``     the response cache: a judge request asked once is read back, never paid again.
* ``panel``     Krippendorff's alpha between a panel's judges, and against humans (`agree judges`).
* ``selfjudge`` warnings for a model scored by itself or that picked the items (answerability).
* ``loopback``  a scripted OpenAI-compatible server on 127.0.0.1, for tests and benchmarks.
* ``local``     starts llama.cpp's OpenAI-compatible server with the bundled Gemma 3 270M.
"""
