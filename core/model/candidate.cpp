#include "model/candidate.h"

#include <array>
#include <utility>

namespace autocomp {

namespace {
constexpr std::array<std::pair<CandidateOrigin, const char *>, 5> s_origins{{
    {CandidateOrigin::Root, "root"},
    {CandidateOrigin::Llm, "llm"},
    {CandidateOrigin::Fix, "fix"},
    {CandidateOrigin::Translate, "translate"},
    {CandidateOrigin::Human, "human"},
}};
constexpr std::array<std::pair<CandidateStatus, const char *>, 11> s_statuses{{
    {CandidateStatus::Planning, "planning"},
    {CandidateStatus::Coding, "coding"},
    {CandidateStatus::Pending, "pending"},
    {CandidateStatus::Compiling, "compiling"},
    {CandidateStatus::Testing, "testing"},
    {CandidateStatus::Benchmarking, "benchmarking"},
    {CandidateStatus::Correct, "correct"},
    {CandidateStatus::Incorrect, "incorrect"},
    {CandidateStatus::CompileError, "compile_error"},
    {CandidateStatus::Failed, "failed"},
    {CandidateStatus::NoHardware, "no_hardware"},
}};
} // namespace

QString toString(CandidateOrigin origin)
{
    for (const auto &[value, name] : s_origins)
        if (value == origin)
            return QString::fromLatin1(name);
    return {};
}

CandidateOrigin candidateOriginFromString(const QString &text)
{
    for (const auto &[value, name] : s_origins)
        if (text == QLatin1String(name))
            return value;
    return CandidateOrigin::Llm;
}

QString toString(CandidateStatus status)
{
    for (const auto &[value, name] : s_statuses)
        if (value == status)
            return QString::fromLatin1(name);
    return {};
}

CandidateStatus candidateStatusFromString(const QString &text)
{
    for (const auto &[value, name] : s_statuses)
        if (text == QLatin1String(name))
            return value;
    return CandidateStatus::Failed;
}

bool isFinal(CandidateStatus status)
{
    return status == CandidateStatus::Correct || status == CandidateStatus::Incorrect
        || status == CandidateStatus::CompileError || status == CandidateStatus::Failed || status == CandidateStatus::NoHardware;
}

bool Candidate::sameContent(const Candidate &o) const
{
    const bool sameScore = hasScore() == o.hasScore() && (!hasScore() || score == o.score);
    return id == o.id && status == o.status && sameScore && inBeam == o.inBeam && code == o.code && plan == o.plan && menuItem == o.menuItem
        && error == o.error && metrics == o.metrics && feedback == o.feedback && flags == o.flags && parentId == o.parentId
        && iteration == o.iteration && origin == o.origin && planModel == o.planModel && codeModel == o.codeModel
        && planCallId == o.planCallId;
}

bool isMachineFault(const Candidate &candidate)
{
    return candidate.status == CandidateStatus::Failed && candidate.error.startsWith(QLatin1String("error: "));
}

} // namespace autocomp
