#pragma once

#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <cmath>
#include <limits>

namespace autocomp {

enum class CandidateOrigin { Root, Llm, Fix, Translate, Human };

// Lifecycle of one candidate. The order is the order a candidate passes through.
enum class CandidateStatus {
    Planning,     // plan requested, no code yet
    Coding,       // code requested
    Pending,      // code received, waiting for an evaluation slot
    Compiling,
    Testing,
    Benchmarking,
    Correct,      // evaluated, correct, has a score
    Incorrect,    // compiled, wrong results
    CompileError,
    Failed,       // timeout, crash, rejected, evaluation error, failed LLM call, bad edit
    NoHardware,   // compiled, but the target's hardware is absent (or compile_only): not run, no score
};

QString toString(CandidateOrigin origin);
CandidateOrigin candidateOriginFromString(const QString &text);
QString toString(CandidateStatus status);
CandidateStatus candidateStatusFromString(const QString &text);
bool isFinal(CandidateStatus status);

struct Candidate {
    qint64 id = 0;
    qint64 runId = 0;
    qint64 parentId = 0; // 0: the root
    int iteration = 0;   // the root is iteration 0
    CandidateOrigin origin = CandidateOrigin::Llm;
    CandidateStatus status = CandidateStatus::Planning;
    QString plan;
    QString menuItem;  // the optimization the plan says it applies
    QString code;
    double score = std::numeric_limits<double>::quiet_NaN(); // the target's metric, lower is better
    QJsonObject metrics;
    QStringList feedback;
    QStringList flags;
    QString planModel;
    QString codeModel;
    QString error;      // why it failed, one paragraph
    bool inBeam = false;
    qint64 planCallId = 0; // the LLM call that wrote the plan (shared by the plan's code samples)
    int planSlot = -1;     // position of its plan request in the iteration (resume matches on it)
    int sample = 0;        // index of the code sample for its plan
    qint64 fixOf = 0;      // for origin fix: the failed candidate it repairs

    bool hasScore() const { return !std::isnan(score); }
    // Every field a view shows is equal (a NaN score equals a NaN score).
    bool sameContent(const Candidate &other) const;
};

// The evaluation ended in `error`: a fault of the machine or of the target's tools (a setup step, the
// sandbox, a loader, an absent tool), no verdict about the candidate's code. Never sent for a fix.
bool isMachineFault(const Candidate &candidate);

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::Candidate)
