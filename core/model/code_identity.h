#pragma once

#include "model/candidate.h"

#include <QList>
#include <QString>

namespace autocomp {

// The code without whitespace: two candidates equal here are the same program. Comments stay: harness
// markers and scripted evaluators (tests/support/fake_eval_main.cpp) read them.
QString normalizedCode(const QString &code);

// For a run's candidates (any order): each one whose normalized code equals that of an earlier candidate
// (by id) that has code and is not itself such a copy, given metrics["duplicate_of"] and a flag saying so.
// Its status and score stay as recorded (an imported run keeps its own verdicts); returns the candidates
// changed.
QList<Candidate> flagIdenticalCode(QList<Candidate> candidates);

} // namespace autocomp
