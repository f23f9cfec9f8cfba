"""propeval: curate a corpus of censorship and propaganda evaluation items."""

__version__ = "0.1.0"
