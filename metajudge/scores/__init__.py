"""How scores and verdicts enter metajudge: score files, columns a dataset ships, released judge
outputs, and the scoring of a dataset with registry metrics."""
