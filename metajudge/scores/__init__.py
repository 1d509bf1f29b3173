"""How scores and verdicts enter metajudge: score files, columns a dataset ships, released judge
outputs, and the scoring of a dataset with registry metrics.

- :mod:`~metajudge.scores.rows` — the score row (``make_row``, ``check_score_row``), the one row type.
- :mod:`~metajudge.scores.files` — ``read_scores``, the one reader of every score-file format.
- :mod:`~metajudge.scores.spec` — the ``--scores SPEC`` grammar (``parse_score_spec``) and
  ``gather_scores``, the one way a command's scores are gathered.
- :mod:`~metajudge.scores.upstream`, :mod:`~metajudge.scores.shipped` — the upstream formats and
  the columns a dataset's card ships.
- :mod:`~metajudge.scores.scoring` — scoring a dataset with registry metrics, ``write_scores``.
"""
