#!/usr/bin/env bash
# keras_estimator on the next TensorFlow, before it ships: builds a side venv with the newest
# TensorFlow on the index (release candidates included: `pip index versions tensorflow --pre`)
# and the Keras it pulls in, installs this project past its TensorFlow pin (--no-deps, then
# its other dependencies), and runs the import check, the demo, the test suite (or the paths
# given) and the peer suite (tf.estimator 2.15's own tests, ../shared/peer/README.md).
#
#   tools/check_next_tensorflow.sh                          # the whole default suite
#   tools/check_next_tensorflow.sh tests/estimator tests/hooks   # a subset
#
# Environment: TF_VERSION (default: the newest on the index), PYTHON (makes the venv,
# default python3), VENV (default ${TMPDIR:-/tmp}/keras_estimator_next_tf; rebuilt unless
# REUSE_VENV=1), PEER_SRC (the git dir of github.com/tensorflow/estimator; the peer suite is
# skipped without it), PEER_HARNESS (default ../shared/peer/run_peer.sh beside the repo).
# Exit status: 0 when every step passed, else that of the first failing step (all steps run).
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
export TF_CPP_MIN_LOG_LEVEL=2
python="${PYTHON:-python3}"
venv="${VENV:-${TMPDIR:-/tmp}/keras_estimator_next_tf}"
status=0
step() {  # step NAME COMMAND...: runs it, reports its time and status, keeps the first failure
  local name="$1" started=$SECONDS rc=0
  shift
  echo "== $name"
  "$@" || rc=$?
  echo "== $name: exit $rc in $((SECONDS - started)) s"
  if [[ $rc != 0 && $status == 0 ]]; then status=$rc; fi
  return "$rc"
}

version="${TF_VERSION:-}"
if [[ -z "$version" ]]; then
  # "tensorflow (2.22.0rc0)": the newest version, pre-releases included.
  version="$("$python" -m pip index versions tensorflow --pre 2>/dev/null \
    | sed -n 's/^tensorflow (\(.*\))$/\1/p')"
  if [[ -z "$version" ]]; then
    echo "check_next_tensorflow: pip index found no tensorflow version; set TF_VERSION" >&2
    exit 2
  fi
fi
echo "check_next_tensorflow: tensorflow==$version in $venv"

if [[ "${REUSE_VENV:-0}" != 1 || ! -x "$venv/bin/python" ]]; then
  rm -rf "$venv"
  "$python" -m venv "$venv" || exit 2
fi
vpy="$venv/bin/python"
# The project's dependencies but TensorFlow and Keras (TensorFlow brings the Keras it wants,
# possibly keras-nightly, which a `keras` requirement would replace), and its test extra.
others="$("$vpy" - <<'EOF'
import re, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
for requirement in project["dependencies"] + project["optional-dependencies"]["test"]:
    if re.match(r"(tensorflow|keras)\b(?![-_])", requirement) is None:
        print(requirement)
EOF
)"
constraints="$venv/constraints.txt"
echo "tensorflow==$version" > "$constraints"
step install "$vpy" -m pip install -q "tensorflow==$version" || exit "$status"
# shellcheck disable=SC2086  # one requirement per word
step install-project "$vpy" -m pip install -q -c "$constraints" $others \
  && step install-project-no-deps "$vpy" -m pip install -q --no-deps -e . || exit "$status"
"$vpy" -m pip list 2>/dev/null | grep -iE '^(tensorflow|keras|keras-nightly|tensorboard|numpy) '

step import "$vpy" -c "import keras_estimator.seam.internals, keras_estimator as e; print(e.Estimator)"
rm -rf "$venv/demo_model_dir"  # a fresh run, not a resumed one
step demo "$vpy" -m keras_estimator demo --steps 300 --model-dir "$venv/demo_model_dir"
step suite "$vpy" -m pytest -q -p no:cacheprovider "$@"
peer_harness="${PEER_HARNESS:-$repo/../shared/peer/run_peer.sh}"
if [[ -n "${PEER_SRC:-}" && -x "$peer_harness" ]]; then
  step peer env PEER_PY="$vpy" PEER_MODULE=keras_estimator PYTHONPATH="$repo" \
    "$peer_harness" --tier all --details
else
  echo "== peer: skipped (set PEER_SRC to a tensorflow/estimator git dir; harness: $peer_harness)"
fi
echo "check_next_tensorflow: tensorflow==$version: exit $status"
exit "$status"
