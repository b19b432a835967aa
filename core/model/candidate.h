#pragma once

#include <QJsonObject>

#include <optional>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>

namespace autocomp {

enum class CandidateOrigin { Root, Llm, Fix, Translate, Human };

// Lifecycle of one candidate. The order is the order a candidate passes through.
enum class CandidateStatus {
    Planning, // plan requested, no code yet
    Coding, // code requested
    Pending, // code received, waiting for an evaluation slot
    Compiling,
    Testing,
    Benchmarking,
    Correct, // evaluated, correct, has a score
    Incorrect, // compiled, wrong results
    CompileError,
    Failed, // timeout, crash, rejected, evaluation error, failed LLM call, bad edit
    NoHardware, // compiled, but the target's hardware is absent (or compile_only): not run, no score
    Duplicate, // its normalized code equals that of a candidate evaluated before in the run: not evaluated
               // again; metrics["duplicate_of"] names that candidate, whose verdict it shares
    Cancelled, // its work was in flight when the run stopped or paused: not a verdict; redone on resume
};

QString toString(CandidateOrigin origin);
CandidateOrigin candidateOriginFromString(const QString &text);
QString toString(CandidateStatus status);
CandidateStatus candidateStatusFromString(const QString &text);
bool isFinal(CandidateStatus status);

struct Candidate
{
    qint64 id = 0;
    qint64 runId = 0;
    qint64 parentId = 0; // 0: the root
    int iteration = 0; // the root is iteration 0
    CandidateOrigin origin = CandidateOrigin::Llm;
    CandidateStatus status = CandidateStatus::Planning;
    QString plan;
    QString menuItem; // the optimization the plan says it applies
    QString code;
    double score = std::numeric_limits<double>::quiet_NaN(); // the target's metric, lower is better
    QJsonObject metrics;
    QStringList feedback;
    QStringList flags;
    QString planModel;
    QString codeModel;
    QString error; // why it failed, one paragraph
    bool inBeam = false;
    qint64 planCallId = 0; // the LLM call that wrote the plan (shared by the plan's code samples)
    int planSlot = -1; // position of its plan request in the iteration (resume matches on it)
    int sample = 0; // index of the code sample for its plan
    qint64 fixOf = 0; // for origin fix: the failed candidate it repairs

    bool hasScore() const { return !std::isnan(score); }
    // Every field a view shows is equal (a NaN score equals a NaN score).
    bool sameContent(const Candidate &other) const;
};

// One word (or two) for a candidate's state, the same in every view and in the CLI: planning, coding,
// pending, compiling, testing, benchmarking, correct, incorrect, compile error, crash, timeout, rejected,
// duplicate, error (machine), cancelled, no hardware, no code (the LLM call failed or its answer held no
// usable code).
QString statusWord(const Candidate &candidate);
// The 95 % interval of a correct candidate's score, in the target's unit: from the paired timing
// (metrics.paired_ratio's ci_low and ci_high, scaled like the score), zero width for a deterministic
// metric (an instruction count); nullopt without a score. A timed candidate also carries the run's noise floor
// (metrics.noise_floor, a fraction): what separate evaluations of the same machine code differ by on this kind
// of machine (new worker processes, new buffers), which one evaluation's paired interval cannot see. The
// interval is widened by it on both sides, so "within noise" and every ranking that uses the interval hold
// across evaluations, not only within one.
struct ScoreInterval
{
    double low = 0;
    double high = 0;
    bool contains(double value) const { return value >= low && value <= high; }
};
std::optional<ScoreInterval> scoreInterval(const Candidate &candidate);
// Both are correct and their intervals overlap: the difference between them is within the measurement's
// noise (never for zero-width intervals of different values).
bool withinNoise(const Candidate &a, const Candidate &b);

// The evaluation ended in `error`: a fault of the machine or of the target's tools (a setup step, the
// sandbox, a loader, an absent tool), no verdict about the candidate's code. Never sent for a fix.
bool isMachineFault(const Candidate &candidate);

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::Candidate)
