"""How scores and verdicts enter metajudge: score files, columns a dataset ships, released judge
outputs, and the scoring of a dataset with registry metrics.

- :mod:`~metajudge.scores.readers.rows` — the score row (``make_row``, ``check_score_row``), the one row
  type, and ``score_cell``, the one rule of a score read from a file (NaN: missing).
- :mod:`~metajudge.scores.readers` — the one registry of score-file formats (a ``Reader`` per
  format: how it recognises a file, how it reads it); :mod:`~metajudge.scores.files` —
  ``read_scores``, which reads any file with it.
- :mod:`~metajudge.scores.readers.alignment` — a row's ids aligned with a dataset (``KeyMap``,
  ``IdPolicy``, ``Collector``).
- :mod:`~metajudge.scores.spec` — the ``--scores SPEC`` grammar (``parse_score_spec``) and
  ``gather_scores``, the one way a command's scores are gathered.
- :mod:`~metajudge.scores.readers.upstream`, :mod:`~metajudge.scores.shipped` — the upstream datasets'
  score files and the columns a dataset's card ships.
- :mod:`~metajudge.scores.scoring` — scoring a dataset with registry metrics, ``write_scores``.
"""
