"""The README's first example runs as printed (issue 29: it used input_fns it never defined),
with a temporary model_dir and fewer steps."""

import os
import re

from helpers import ROOT


def test_the_readme_first_example_runs(tmp_path, capsys):
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"<!-- recipe:first -->\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "README has no recipe:first block"
    code = match.group(1)
    assert '"runs/a"' in code and "max_steps=2000" in code
    code = code.replace('"runs/a"', repr(str(tmp_path / "a"))).replace(
        "max_steps=2000", "max_steps=20"
    )
    namespace = {}
    exec(compile(code, "README.md:first", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "'accuracy':" in printed and "'global_step': 20" in printed, printed
    predictions = list(namespace["est"].predict(namespace["predict_input_fn"]))
    assert len(predictions) == 8 and 0 <= int(predictions[0]["classes"]) < 10
