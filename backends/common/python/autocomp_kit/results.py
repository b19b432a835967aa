"""result.json, the judge's verdict, and reading files that are not the judge's own.

The verdict's fields are the ones EvalResult::fromJson reads (core/model/eval_result.h): status, correct,
log, metrics, feedback, flags. A failing verdict's log is also printed (stdout; stderr for `error`), because
the fix prompt quotes the failing step's output: `echo` 'error' prints the log of an `error` to stderr,
'failure' also the log of any other failing status to stdout; None (a step that prints what it wants) neither.
"""
import json
import sys

STATUSES = ('ok', 'incorrect', 'compile_error', 'rejected', 'crash', 'timeout', 'error', 'no_hardware')
# What a judge reads of a file a candidate step wrote (its logs, its reports): at most this many bytes.
UNTRUSTED_LIMIT = 1 << 20


def write_result(path, status, correct, log, metrics=None, feedback=None, flags=None, echo=None):
    """Writes result.json. `status` must be one of STATUSES (a ValueError otherwise: a fault of the judge)."""
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r} (one of {', '.join(STATUSES)})")
    if echo in ('error', 'failure') and status == 'error':
        print(log, file=sys.stderr)
    elif echo == 'failure' and status != 'ok':
        print(log)
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({'status': status, 'correct': bool(correct), 'log': log, 'metrics': metrics or {},
                   'feedback': list(feedback or []), 'flags': list(flags or [])}, f, indent=1, ensure_ascii=False)
        f.write('\n')


def read_text(path):
    """A trusted text file (the judge's own, the problem's), decoded with replacement."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def read_untrusted(path, limit=UNTRUSTED_LIMIT):
    """(text, note) of a file a candidate step could have written: at most `limit` bytes, decoded with
    replacement, NUL bytes dropped; `note` says what was cut ('' when nothing was). OSError propagates."""
    with open(path, 'rb') as f:
        raw = f.read(limit + 1)
    note = ''
    if len(raw) > limit:
        raw = raw[:limit]
        note = f"{path}: truncated to its first {limit} bytes"
    return raw.decode('utf-8', errors='replace').replace('\0', ''), note
