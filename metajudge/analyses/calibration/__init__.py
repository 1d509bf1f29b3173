"""Judge calibration: fit a map from a judge's output to the human scale (:mod:`.fit`,
:mod:`.maps`), conformal intervals for ratings (:mod:`.conformal`), on a
:class:`~.table.RatingTable` (:mod:`.table`, built by :mod:`.sources`)."""
