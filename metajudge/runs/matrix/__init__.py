"""The metric × dataset matrix: the table of cells (:mod:`.table`), one cell's run (:mod:`.run`),
its stored form (:mod:`.cell`), the pairwise judge's cell (:mod:`.pairwise`) and the dry-run cost
estimate (:mod:`.cost`)."""
