"""propeval: curate a corpus of censorship and propaganda evaluation items."""

__version__ = "0.2.0"
