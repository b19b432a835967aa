"""autocomp_kit: the pieces every Python judge of this project shares (trusted code, standard library only
at import; NumPy or torch are imported by the functions that need them).

  results    result.json: the one verdict writer, and reading a file the candidate could have written
             (bounded, decoded, truncation reported)
  compare    tolerances and element-wise comparison of outputs with the reference (NaN where the reference
             has a number is always wrong), for NumPy arrays; torch tensors go through .numpy()
  stats      summaries of timed samples, the paired speedup and its interval
  draw       the judge's secret seed: sub-seeds, the calls picked for checking, rotating input buffers
  channel    the shared-memory channel between a judge and its workers (memfd, fd 3 in the worker):
             control words, bounded areas, the judge's Worker (requests and timed calls on its clock)
             and the worker's Server
  isolation  launching a Python worker isolated (-I: no user site, no usercustomize, no script directory on
             sys.path), and the worker's own refusal to serve in an interpreter a candidate could have prepared
  py_guard   static checks of a candidate on its resolved AST against a target's allow-list

How a backend gets it: its setup copies backends/common/python/autocomp_kit next to its tools in the
per-machine cache (named by the backend's hash, which covers this folder through the backend's
sandbox_read_only entry), and its tools import it from their own folder there, a folder no candidate step can
write. Run from the source tree (tests, availability probes), the tools find it at backends/common/python.
"""
