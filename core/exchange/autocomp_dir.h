#pragma once

#include <QString>

namespace autocomp {

class RunStore;

// Autocomp (ucb-bar/autocomp) output directories, both ways (DESIGN.md §7).
//
// The layout, as Autocomp's BeamSearchStrategy writes it:
//   candidates-iter-N/candidate_K.txt          the beam after iteration N (N = 0: the original code), each a Python
//                                              repr() of a CodeCandidate whose `parent` nests the whole ancestry
//   generated-plans-iter-N/prompt_parentP_MODEL_S.txt, plan_parentP_MODEL_S.txt[, plan_parentP_MODEL_S_full.txt]
//                                              P: index of the parent in candidates-iter-(N-1), S: sample per (parent,
//                                              model)
//   generated-code-iter-N/prompt_P_Q_MODEL.txt, impl_P_Q_MODEL_S.txt, impl_P_Q_MODEL_S_full.txt
//                                              Q: index of the plan in the iteration (model-major, then parent, sample)
//   eval-results-iter-N/code_I_result.txt      JSON from the evaluator: "correct", the metric ("latency"), "stdout",
//   ...
//                                              I: index of the implementation (code model, then Q, then S)
//   metrics-iter-N.json, run_metrics.json, run_metadata.json, best_candidate_so_far.<ext>
// MODEL is the model name without its provider, '/' replaced by '_'.

// Writes run `runId` into `dir` (created; must be empty if it exists). Returns false with a message on failure.
bool exportAutocompDir(RunStore &store, qint64 runId, const QString &dir, QString *error);

// Reads an Autocomp output directory (one of ours or one Autocomp wrote) into a new, finished run.
// Returns the new run id, or 0 with `error` naming the offending file; a failed import leaves no run behind.
qint64 importAutocompDir(RunStore &store, const QString &dir, QString *error);

// True when `path` is a directory that looks like an Autocomp output directory (has candidates-iter-0/).
bool isAutocompDir(const QString &path);

} // namespace autocomp
