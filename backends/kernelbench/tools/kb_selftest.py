"""Runs one kernelbench evaluation without the workbench, as the evaluator would (static check, build,
then the judge driving a worker over a memfd), but without the sandbox: for checking the harness on a
machine without the workbench (a GPU host) and for debugging a candidate by hand.

  kb_selftest.py PROBLEM_DIR CANDIDATE [--device cpu|cuda] [--trials N] [--python PY]

Prints result.json and each step's time. PROBLEM_DIR holds problem.yaml (format kernelbench).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def problem_settings(problem_dir):
    text = open(os.path.join(problem_dir, 'problem.yaml')).read()

    def key(name, default=None):
        m = re.search(rf'^{name}:\s*"?([^"\n#]+)"?', text, re.M)
        return m.group(1).strip() if m else default
    ref = key('reference')
    return {'reference': ref if os.path.isabs(ref) else os.path.join(problem_dir, ref),
            'start': os.path.join(problem_dir, key('start', 'start.py')), 'scale': key('scale', '1')}


def main():
    p = argparse.ArgumentParser()
    p.add_argument('problem_dir')
    p.add_argument('candidate')
    p.add_argument('--device', default='cpu')
    p.add_argument('--trials', default='100')
    p.add_argument('--threads', default='1')
    p.add_argument('--python', default=sys.executable)
    p.add_argument('--scale', default='', help="override the problem's scale (e.g. 1 on a GPU)")
    a = p.parse_args()
    prob = problem_settings(a.problem_dir)
    if a.scale:
        prob['scale'] = a.scale
    work = tempfile.mkdtemp(prefix='kb-selftest-')
    judge_dir = os.path.join(work, 'judge')
    os.makedirs(judge_dir)
    candidate = os.path.join(work, 'candidate.py')
    with open(a.candidate) as f, open(candidate, 'w') as g:
        g.write(f.read())
    result = os.path.join(judge_dir, 'result.json')
    py = a.python

    def step(name, cmd, **kw):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, **kw)
        print(f"step {name}: exit {r.returncode} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return r.returncode

    rc = step('static', [py, f'{HERE}/kb_judge.py', 'static', '--candidate', candidate, '--start', prob['start'],
                         '--device', a.device, '--result', result])
    if rc == 0:
        # Builds are kept by the candidate's content hash, as the evaluator's reuse does.
        import hashlib
        import shutil
        digest = hashlib.sha256(open(candidate, 'rb').read()).hexdigest()[:24]
        cached = os.path.join(os.path.expanduser('~/.cache/kb-selftest'), digest + '-' + a.device)
        if os.path.isdir(cached):
            shutil.copytree(cached, f'{work}/ext')
            print("step build: reused", file=sys.stderr)
        else:
            rc = step('build', [py, f'{HERE}/kb_worker.py', 'build', candidate, '--ext-dir', f'{work}/ext'])
            if rc != 0:
                print('{"status": "compile_error"}')
                return 1
            shutil.copytree(f'{work}/ext', cached + '.tmp', dirs_exist_ok=True)
            os.replace(cached + '.tmp', cached)
        fd = os.memfd_create('kb-channel')
        os.ftruncate(fd, 1 << 30)
        env = dict(os.environ, OMP_NUM_THREADS=a.threads)
        worker = subprocess.Popen([py, f'{HERE}/kb_worker.py', 'serve', candidate, '--ext-dir', f'{work}/ext',
                                   '--channel-fd', '3'], pass_fds=(fd,), env=env,
                                  preexec_fn=lambda: (os.dup2(fd, 3), None)[1])
        rc = step('check', [py, f'{HERE}/kb_judge.py', 'check', '--candidate', candidate, '--start', prob['start'],
                            '--reference', prob['reference'], '--device', a.device, '--channels', '3',
                            '--worker-pids', str(worker.pid), '--seed', str(random.getrandbits(62)), '--scale', prob['scale'],
                            '--threads', a.threads, '--trials', a.trials, '--result', result],
                  pass_fds=(fd,), preexec_fn=lambda: (os.dup2(fd, 3), None)[1], env=env)
        worker.kill()
        worker.wait()
    if os.path.exists(result):
        print(open(result).read())
    return rc


if __name__ == '__main__':
    sys.exit(main())
