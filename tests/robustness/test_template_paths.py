"""Issue 66, group 5: an AlpacaEval ``configs.yaml`` reads its ``prompt_template`` only inside
the evaluator folders.

Before: a ``prompt_template`` that was an absolute path, a ``../`` escape or a symlinked
``basic_prompt.txt`` pointing at a private file was read (and its text sent to the backbone).
Now each is refused with exit 2 naming the config file and the field, before the file is read;
a template in a sibling evaluator folder (as AlpacaEval's weighted config names) still loads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.robustness.conftest import InputGuard

CONFIG = """chatgpt:
  prompt_template: "{template}"
  fn_completions: "openai_completions"
  completions_kwargs:
    model_name: "gpt-3.5-turbo-0301"
    max_tokens: 50
    temperature: 0
  fn_completion_parser: "regex_parser"
  completion_parser_kwargs:
    outputs_to_match:
      1: '(?:^|\\n) ?Output \\(a\\)'
      2: '(?:^|\\n) ?Output \\(b\\)'
"""
PROMPT = (
    "<|im_start|>user\\nWhich is better? {instruction} (a) {output_1} (b) {output_2}<|im_end|>\\n"
)


def _evaluators(tmp_path: Path, template: str) -> Path:
    """Evaluator folders ``ev/chatgpt`` (the config naming ``template``) and ``ev/other``
    (a template of its own), a private file beside ``ev``; the config's path."""
    (tmp_path / "private.txt").write_text("PRIVATE {instruction} {output_1} {output_2}\n")
    (tmp_path / "ev" / "other").mkdir(parents=True)
    (tmp_path / "ev" / "other" / "prompt.txt").write_text(PROMPT.replace("\\n", "\n"))
    cfg = tmp_path / "ev" / "chatgpt" / "configs.yaml"
    cfg.parent.mkdir()
    cfg.write_text(CONFIG.format(template=template.format(tmp=tmp_path)))
    (cfg.parent / "basic_prompt.txt").symlink_to(tmp_path / "private.txt")
    return cfg


@pytest.mark.parametrize(
    "template", ["{tmp}/private.txt", "../../private.txt", "chatgpt/basic_prompt.txt"]
)
def test_a_template_outside_the_evaluator_folders_is_refused(
    tmp_path: Path, inputs_unchanged: InputGuard, template: str
) -> None:
    cfg = _evaluators(tmp_path, template)
    proc = inputs_unchanged.run(["metrics", "show", f"judge:{cfg}"], tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-600:], proc.stdout[-300:])
    assert f"{cfg}: field prompt_template" in proc.stderr and "not read" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_template_in_a_sibling_evaluator_folder_loads(
    tmp_path: Path, inputs_unchanged: InputGuard
) -> None:
    cfg = _evaluators(tmp_path, "other/prompt.txt")
    proc = inputs_unchanged.run(["metrics", "show", "--format", "json", f"judge:{cfg}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-600:]
    assert "origin:alpaca_eval" in proc.stdout
