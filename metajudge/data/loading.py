"""ONE way to load a dataset: :func:`load`.

Every command that takes ``--dataset NAME`` or ``--input FILE`` (through :func:`open_dataset`),
the public API (``mj.load_dataset``, ``mj.load_file``), scoring and the HTML report load their
data here. A source is a built-in dataset name, or a path to one of the file kinds
:func:`file_kind` recognises:

- ``jsonl``: a canonical JSONL file (docs/own-data.md): an optional card line,
  then one record per line;
- ``columnar``: the canonical records as a Parquet or Arrow IPC table
  (:mod:`metajudge.data.columnar`; docs/own-data.md names the columns);
- ``arena``: a Chatbot Arena battle file as released (JSON or Parquet; one pairwise record per
  battle, :mod:`metajudge.data.arena`);
- ``judge_bench``: a file in JUDGE-BENCH's unified format (:mod:`metajudge.data.judge_bench`);
- ``upstream``: an upstream file of a built-in dataset, recognised by its size and pinned sha256
  (e.g. RAGChecker's ``human_labeled_data.json``), loaded by that dataset's converter;
- ``released_probs``: a JSONL file in the Trust-or-Escalate released format (instruction,
  outputs, preferences, probs; :mod:`metajudge.data.released_probs`): its pairs and its judge's
  class probabilities as the judge column;
- ``folder``: a folder ``<dir>/<name>`` holding a built-in dataset's files.

The loaded :class:`~metajudge.data.registry.Dataset` records where it came from in
:attr:`~metajudge.data.registry.Dataset.source` (``{"dataset": NAME}`` or ``{"input": PATH}``,
plus ``subset`` and converter ``options``); a run folder keeps that mapping, and :func:`load`
takes it back (``metajudge report DIR`` re-renders from it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from metajudge.data.formats import DatasetCard, PairwiseRecord, Record
from metajudge.data.registry import Dataset, cards_dir, describe_counts, list_datasets, load_card
from metajudge.errors import InputError

FileKind = Literal[
    "jsonl", "columnar", "arena", "judge_bench", "upstream", "released_probs", "folder"
]


def load(
    source: str | Path | Mapping[str, Any] | Dataset,
    data_dir: str | Path | None = None,
    *,
    subset: str | None = None,
    card: DatasetCard | None = None,
    progress: Callable[[int, int], None] | None = None,
    tracking_uri: str | None = None,
    texts: bool = True,
    **options: Any,
) -> Dataset:
    """The dataset at ``source``: what every ``--dataset``/``--input`` option, the API and the
    report load.

    ``source``:

    - a built-in dataset name (a card in :func:`~metajudge.data.registry.cards_dir`): its upstream
      files (:func:`~metajudge.data.registry.resolve_file`, from ``data_dir`` or
      ``$METAJUDGE_DATA_DIR``, the cache or a pinned download) through its converter;
    - a path (a ``Path``, or a string that names no dataset) of a kind :func:`file_kind`
      recognises; ``data_dir`` serves the other files of an upstream file's dataset and ``card``
      is the card of a canonical JSONL file without a card line (else one is inferred);
    - a recorded source (:attr:`~metajudge.data.registry.Dataset.source`, e.g. a run folder's);
    - a :class:`~metajudge.data.registry.Dataset`, taken as it is (also when it already is
      subset ``subset``).

    ``subset``: only that part. ``options`` go to the dataset's converter (e.g. ``fully='tie'``
    for ``lftqa_mitigation_pradhumant``; see the card's notes). ``progress``: called
    ``(lines read, lines)`` while a canonical JSONL file is read (a display's callback).
    ``texts`` False: a file of canonical records (JSONL, columnar, Arena) is loaded text-free,
    where no metric reads the texts (:meth:`~metajudge.data.fast_records.FastRecords.lean`:
    each pairwise response's word count kept, not its text).
    """
    from metajudge.data.mlflow_traces import is_mlflow

    if is_mlflow(source):  # ``tracking_uri``: where the experiment is (else $MLFLOW_TRACKING_URI)
        ds = _mlflow(str(source), tracking_uri=tracking_uri, **options)
    elif isinstance(source, Dataset):
        if subset and source.source.get("subset") == subset:
            return source  # already that subset
        ds = source
    elif isinstance(source, Mapping):
        return _recorded(source, data_dir, subset=subset, card=card, progress=progress, **options)
    elif isinstance(source, str) and _is_name(source):
        ds = _builtin(source, data_dir, **options)
        ds.source = {"dataset": source, **({"options": dict(options)} if options else {})}
    elif isinstance(source, (str, Path)):
        got = {"card": card, "progress": progress, "texts": texts}
        ds = _load_path(Path(source), data_dir=data_dir, **got, **options)
    else:
        raise InputError(
            f"cannot load a {type(source).__name__}: give a dataset name, a path or a Dataset",
            field="dataset",
        )
    return ds.subset(subset) if subset else ds


def open_dataset(
    dataset: str | Dataset | None = None,
    input: str | Path | None = None,
    *,
    subset: str | None = None,
    data_dir: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    tracking_uri: str | None = None,
    texts: bool = True,
    **options: Any,
) -> Dataset:
    """The dataset named by ``--dataset NAME`` or ``--input FILE`` (exactly one of them), loaded
    by :func:`load` (``progress``, ``texts``: see there).

    ``dataset`` is only ever a name (or an already loaded Dataset); a file is read only through
    ``input`` (a path given as ``dataset`` is refused with a message saying ``--input``).
    """
    if (dataset is None) == (input is None):
        raise InputError("give exactly one of --dataset NAME and --input FILE", field="dataset")
    if isinstance(dataset, str):
        load_card(dataset)  # raises: not a name, or unknown (naming the known ones)
    target = Path(input) if input is not None and not _is_uri(input) else (input or dataset)
    kw = {"progress": progress, "tracking_uri": tracking_uri, "texts": texts}
    return load(target, data_dir, subset=subset, **kw, **options)  # type: ignore[arg-type]


def _is_uri(s: str | Path) -> bool:
    """Does ``s`` name a source that is no file (``mlflow:EXPERIMENT``)?"""
    from metajudge.data.mlflow_traces import is_mlflow

    return is_mlflow(s)


def _mlflow(source: str, **options: Any) -> Dataset:
    """:func:`load` of ``mlflow:EXPERIMENT`` (:mod:`metajudge.data.mlflow_traces`; ``options``:
    ``tracking_uri``, ``dimension``)."""
    from metajudge.data.mlflow_traces import read_experiment

    ds = read_experiment(source, **options)
    said = {k: v for k, v in options.items() if k != "tracking_uri"}  # a URI may hold a password
    ds.source = {"input": source, **({"options": said} if said else {})}
    return ds


def _is_name(s: str) -> bool:
    """Does ``s`` name a built-in dataset (a card), rather than a path?"""
    from metajudge.data.names import NAME_PATTERN

    if not NAME_PATTERN.fullmatch(s) or ".." in s:
        return False
    if (cards_dir() / f"{s}.json").is_file():
        return True
    # no such file and no file suffix: an unknown name (load_card says which ones are known)
    return not Path(s).exists() and not Path(s).suffix


def _recorded(
    source: Mapping[str, Any], data_dir: Any, *, subset: str | None, **kw: Any
) -> Dataset:
    """:func:`load` of a recorded :attr:`~metajudge.data.registry.Dataset.source`."""
    if source.get("input"):
        given = str(source["input"])
        target: str | Path = given if _is_uri(given) else Path(given)
    elif source.get("dataset"):
        target = str(source["dataset"])
    else:
        raise InputError(
            f"the recorded source {dict(source)!r} names neither a dataset nor an input file",
            field="source",
        )
    opts = {**dict(source.get("options") or {}), **kw}
    return load(target, data_dir, subset=subset or source.get("subset"), **opts)


def _builtin(
    name: str,
    data_dir: str | Path | None = None,
    *,
    files: Mapping[str, Path] | None = None,
    **options: Any,
) -> Dataset:
    """Built-in dataset ``name`` from its upstream files (``files``: a card file's ``local`` name
    -> a path to use instead, still sha256-checked) through its converter."""
    from metajudge.data import converters

    card = load_card(name)
    if card.kind == "benchmark":
        from metajudge.data import benchmarks

        items = benchmarks.load_benchmark_items(name, data_dir=data_dir)
        subsets = tuple(
            dict.fromkeys(getattr(i, "variant", "") for i in items if getattr(i, "variant", ""))
        )
        return Dataset(card=card, records=[], subsets=subsets, items=items)
    if card.name in converters.COLLECTIONS:
        return converters.COLLECTIONS[card.name](card, data_dir, files)
    records = converters.convert(card, data_dir=data_dir, files=files, **options)
    return Dataset(card=card, records=records, subsets=_subsets_of(records))


def file_kind(path: str | Path) -> tuple[FileKind, tuple[str, str] | None]:
    """The kind of file at ``path`` (see the module docstring) and, for a built-in dataset's
    upstream file, ``(dataset, local name)``; an error names the path and why it is none of them."""
    p = Path(path)
    if p.is_dir():
        if (cards_dir() / f"{p.name}.json").is_file():
            return "folder", (p.name, "")
        raise InputError(
            "is a folder: give a canonical JSONL file, or a folder named like a built-in "
            f"dataset ({', '.join(list_datasets())})",
            path=p,
        )
    if not p.is_file():
        raise InputError("file not found", path=p)
    from metajudge.data.arena import is_arena
    from metajudge.data.columnar import is_columnar

    if is_arena(p):
        return "arena", None
    if is_columnar(p):
        return "columnar", None
    found = upstream_match(p)
    if p.suffix == ".json":
        from metajudge.data.judge_bench import is_judge_bench
        from metajudge.io import read_json

        if is_judge_bench(read_json(p)):
            return "judge_bench", found
    if found is not None:
        return "upstream", found
    from metajudge.data.released_probs import is_released_probs

    if is_released_probs(p):
        return "released_probs", None
    return "jsonl", None


def _load_path(
    p: Path,
    *,
    data_dir: str | Path | None,
    card: DatasetCard | None,
    progress: Callable[[int, int], None] | None = None,
    texts: bool = True,
    **options: Any,
) -> Dataset:
    """:func:`load` of a path, by its :func:`file_kind` (``texts``: see :func:`load`)."""
    kind, found = file_kind(p)
    if kind == "folder":
        ds = _builtin(p.name, p.parent, **options)
    elif kind == "judge_bench":
        from metajudge.data import judge_bench
        from metajudge.io import read_json

        ds = judge_bench.read_obj(read_json(p), p, **judge_bench.provenance_of(p, found))
    elif kind == "upstream":
        assert found is not None
        from metajudge.data.converters import COLLECTIONS

        if found[0] in COLLECTIONS:
            raise InputError(
                f"a file of dataset {found[0]!r} that is not one of its data files (its data "
                f"files load one by one with --input FILE, all of them with --dataset {found[0]})",
                path=p,
            )
        ds = _builtin(found[0], data_dir, files={found[1]: p}, **options)
    elif kind == "released_probs":
        from metajudge.data.released_probs import dataset_of

        ds = dataset_of(p)
    else:  # canonical records: JSONL, a columnar table, Arena battles
        ds = _load_jsonl(p, card, None if kind != "jsonl" else progress, texts)
    ds.source = {"input": str(p.resolve()), **({"options": dict(options)} if options else {})}
    return ds


def upstream_match(path: Path) -> tuple[str, str] | None:
    """``(dataset, local name)`` of the built-in dataset file with this size and sha256, if any."""
    from metajudge.data.fetch import local_relpath
    from metajudge.io import sha256_file

    size = path.stat().st_size
    digest: str | None = None
    for name in list_datasets():
        card = load_card(name)
        for sf in card.files:
            if sf.bytes is not None and sf.bytes != size:
                continue
            digest = digest or sha256_file(path)
            if digest == sf.sha256 and card.kind != "benchmark":
                return name, local_relpath(sf)
    return None


def _load_jsonl(
    path: Path,
    card: DatasetCard | None = None,
    progress: Callable[[int, int], None] | None = None,
    texts: bool = True,
) -> Dataset:
    """Canonical records (JSONL, a columnar table or Arena battles, read by
    :func:`~metajudge.data.validation.read_jsonl`; ``texts``: see :func:`load`): the file's
    card, else ``card``, else an inferred card. A text-free load of a pairwise file of the
    common shape is read in record batches (:func:`~metajudge.data.batch_load.batch_load`),
    the same records, and line by line wherever that route declines it."""
    from metajudge.bulk import paused_gc
    from metajudge.data.batch_load import batch_load
    from metajudge.data.validation import read_jsonl

    tick = None if progress is None else _line_ticks(path, progress)
    with paused_gc():
        got = None if texts else batch_load(path, card, tick)
    found, records = got if got is not None else read_jsonl(path, card, progress=tick, texts=texts)
    card = found or card or infer_card(records, path)
    return Dataset(card=card, records=records, subsets=_subsets_of(records))


def _line_ticks(path: Path, progress: Callable[[int, int], None]) -> Callable[[int], None]:
    """``progress(line, lines of the file)`` as a callback of the line reached."""
    with open(path, "rb") as fh:
        lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))

    def tick(done: int) -> None:
        progress(min(done, lines), lines)

    return tick


def _subsets_of(records: Sequence[Record]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for r in records:
        s = r.meta.get("subset")
        if isinstance(s, str):
            seen.setdefault(s, None)
    return tuple(seen)


def infer_card(records: Sequence[Record], path: Path) -> DatasetCard:
    """A card for header-less records: kind, dimensions and the range (or labels) seen."""
    from metajudge.data.formats import Scale

    pairwise = isinstance(records[0], PairwiseRecord)
    labels = [r.labels if isinstance(r, PairwiseRecord) else r.scores for r in records]
    dims = tuple(dict.fromkeys(d for lab in labels for d in lab))
    vals = [v for lab in labels for vs in lab.values() for v in vs if v is not None]
    strings = sorted({v for v in vals if isinstance(v, str)})
    if strings:
        kind, scale = "categorical", Scale(0.0, len(strings) - 1.0, None, tuple(strings))
    else:
        nums = [float(v) for v in vals]
        kind = "pairwise" if pairwise else "likert"
        scale = Scale(min(nums, default=0.0), max(nums, default=0.0))
    return DatasetCard(
        name=path.stem,
        kind=kind,  # type: ignore[arg-type]
        description=f"records read from {path} (no card: kind, dimensions and scale inferred)",
        repository="",
        commit="",
        files=(),
        license="",
        dimensions=dims,
        scale=scale,
        annotators=None,
        direction="positive = b better" if pairwise else "higher = better",
    )


def list_local(data_dir: str | Path) -> list[dict[str, Any]]:
    """What a data folder holds, without downloading: built-in datasets (``<dir>/<name>/``) whose
    files are all there, with their counts, those with files missing, and canonical JSONL files."""
    from metajudge.data.fetch import local_relpath

    root = Path(data_dir)
    if not root.is_dir():
        raise InputError("data folder not found", path=root, field="data_dir")
    rows: list[dict[str, Any]] = []
    names = set(list_datasets())
    for name in sorted(n for n in names if (root / n).is_dir()):
        card = load_card(name)
        missing = [
            local_relpath(f) for f in card.files if not (root / name / local_relpath(f)).is_file()
        ]
        if missing:
            status = f"missing {len(missing)} of {len(card.files)} files ({', '.join(missing)})"
            rows.append({"name": name, "kind": card.kind, "status": status})
            continue
        ds = load(name, root)
        rows.append({**describe_counts(ds), "status": "ok", "path": str(root / name)})
    for p in sorted(root.rglob("*.jsonl")):
        if p.relative_to(root).parts[0] in names:
            continue  # an upstream file of a built-in dataset
        try:
            rows.append({**describe_counts(load(p)), "status": "ok", "path": str(p)})
        except InputError as e:
            rows.append({"name": str(p.relative_to(root)), "kind": "?", "status": f"invalid: {e}"})
    return rows
