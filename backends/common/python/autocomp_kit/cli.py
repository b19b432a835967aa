"""The command line every judge step shares, and the guard around it.

A judge's step passes the evaluation's {channels}, {worker_pids} and {seed}, the candidate and the problem's
reference, the timing settings and where result.json goes; add_common() declares those options, and run()
turns an exception escaping the judge (a fault of the harness or the problem's reference, never the
candidate's) into the status `error` with its traceback, exit status 2.
"""
import sys


def add_common(parser, tolerance, trials, timeout, candidate_required=False):
    parser.add_argument('--candidate', required=candidate_required, default='')
    parser.add_argument('--reference', default='')
    parser.add_argument('--channels', default='3')
    parser.add_argument('--worker-pids', default='')
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--tolerance', default=tolerance)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--trials', type=int, default=trials)
    parser.add_argument('--checked-calls', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=timeout)
    parser.add_argument('--result', required=True)


def add_worker(parser, modes):
    """A worker's command line: MODE [CANDIDATE] --channel-fd N (fd 3 as the evaluator starts workers); a mode that
    runs no code of the candidate's (tpu's run-exported) has no CANDIDATE."""
    parser.add_argument('mode', choices=list(modes))
    parser.add_argument('candidate', nargs='?', default='')
    parser.add_argument('--channel-fd', type=int, default=3)


def first_int(text):
    """The first of a comma-separated list ({channels}, {worker_pids}) as an int; 0 when empty."""
    head = (text or '').split(',')[0].strip()
    return int(head) if head else 0


def run(command, args):
    """command(args), with an escaping exception written as `error` to args.result (exit status 2)."""
    from . import results
    try:
        return command(args)
    except Exception as e:  # noqa: BLE001 - a fault of the harness or the reference, not the candidate
        import traceback
        results.write_result(args.result, 'error', False,
                             f"the judge failed: {type(e).__name__}: {e}\n{traceback.format_exc()[-3000:]}", echo='error')
        return 2


def print_parsed(path, parse, errors):
    """For a judge's `parse` mode: prints parse(text of `path`) as JSON; exit status 1 with `path: why` on stderr
    when parse raises one of `errors`."""
    import json
    from .results import read_untrusted
    text, _ = read_untrusted(path)
    try:
        out = parse(text)
    except errors as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0
