"""metajudge — meta-evaluation and judge calibration.

How far can you trust a metric or an LLM judge compared with humans, and does that hold
when the judge's backbone changes?  ``import metajudge`` stays light: heavy libraries
(torch, bert_score, llama_cpp, matplotlib, pandas) load inside the functions that need them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
