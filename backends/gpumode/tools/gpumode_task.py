"""gpumode_task.py — a GPU MODE problem directory as it is: its task.yml and the run directory it
describes. Trusted code, used by the judge and by the worker wrapper.

task.yml (reference-kernels) lists `files:` as {"name": ..., "source": ...} with sources relative to
the problem's directory (`../eval.py`, `../utils.py`, ...) and "@SUBMISSION@" for the submission;
`tests:` and `benchmarks:` are lists of mappings such as {"size": 1024, "seed": 31232}. eval.py reads
them as lines "size: 1024; seed: 31232".
"""
import json
import os
import re
import shutil


class TaskError(ValueError):
    pass


def _flow_items(text, key):
    """The `- {...}` items under a top-level `key:`, read as JSON (task.yml writes them that way)."""
    items, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"^[A-Za-z_]+:", line):
            inside = line.split(":", 1)[0] == key
            continue
        if inside:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if not stripped.startswith("- "):
                raise TaskError(f"task.yml:{number}: '{key}' entry is not a '- {{...}}' item")
            body = stripped[2:].strip()
            try:
                value = json.loads(body)
            except ValueError:
                # YAML flow mappings without quotes: {size: 1024, seed: 7}
                value = dict((k.strip().strip("\"'"), _scalar(v.strip())) for k, v in
                             (part.split(":", 1) for part in body.strip("{}").split(",") if ":" in part))
            if not isinstance(value, dict):
                raise TaskError(f"task.yml:{number}: '{key}' entry is not a mapping")
            items.append(value)
    return items


def _scalar(text):
    text = text.strip("\"'")
    try:
        return int(text)
    except ValueError:
        return text


def load(task_dir):
    path = os.path.join(task_dir, "task.yml")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1 << 20)
    except OSError as e:
        raise TaskError(f"{path}: cannot read ({e.strerror})")
    try:
        import yaml  # PyYAML, when the user's environment has it
        data = yaml.safe_load(text) or {}
        task = {"files": data.get("files") or [], "tests": data.get("tests") or [], "benchmarks": data.get("benchmarks") or []}
    except ImportError:
        task = {key: _flow_items(text, key) for key in ("files", "tests", "benchmarks")}
    if not task["files"]:
        raise TaskError(f"{path}: no 'files:' list")
    for f in task["files"]:
        if not isinstance(f, dict) or "name" not in f or "source" not in f:
            raise TaskError(f"{path}: every 'files' entry needs name and source")
        if "/" in str(f["name"]) or str(f["name"]) in ("", ".", ".."):
            raise TaskError(f"{path}: file name '{f['name']}' must be a plain file name")
    if not any(f["source"] == "@SUBMISSION@" for f in task["files"]):
        raise TaskError(f"{path}: no file has source @SUBMISSION@")
    return task


def spec_line(case):
    """eval.py's test-file line (and the spec it echoes back): 'size: 1024; seed: 31232'."""
    for k, v in case.items():
        if not re.fullmatch(r"[a-zA-Z]+", str(k)) or not re.fullmatch(r"[a-zA-Z]+|[+-]?[0-9]+", str(v)):
            raise TaskError(f"task.yml case {case!r}: keys must be letters, values letters or integers")
    return "; ".join(f"{k}: {v}" for k, v in case.items())


def assemble(task_dir, task, submission, run_dir, mode):
    """Copies the files task.yml lists into run_dir (the submission as submission.py's name) and
    writes the cases of `mode` (tests for 'test', benchmarks otherwise) to run_dir/cases.txt."""
    os.makedirs(run_dir, exist_ok=True)
    for f in task["files"]:
        src = submission if f["source"] == "@SUBMISSION@" else os.path.normpath(os.path.join(task_dir, f["source"]))
        if not os.path.isfile(src):
            raise TaskError(f"task.yml names {f['source']} for {f['name']}, which is not a file ({src})")
        shutil.copyfile(src, os.path.join(run_dir, f["name"]))
    cases = task["tests"] if mode == "test" else task["benchmarks"]
    if not cases:
        raise TaskError(f"task.yml has no {'tests' if mode == 'test' else 'benchmarks'}")
    lines = [spec_line(c) for c in cases]
    with open(os.path.join(run_dir, "cases.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    return lines
