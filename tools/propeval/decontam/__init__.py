"""`propeval decontaminate`: find the corpus's texts in a model's training data.

index (what is searched for: the corpus's n-grams), ngrams (tokens and the hashing kernel), scan (one
shard), run (every shard: in this process, a process pool or on Dask, resumable), paraphrase (the
optional embedding pass on a sample). The command is :mod:`propeval.cli.decontaminate`.
"""
