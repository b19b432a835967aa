#include "model/candidate.h"

#include <algorithm>
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
constexpr std::array<std::pair<CandidateStatus, const char *>, 13> s_statuses{{
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
    {CandidateStatus::Duplicate, "duplicate"},
    {CandidateStatus::Cancelled, "cancelled"},
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
        || status == CandidateStatus::CompileError || status == CandidateStatus::Failed
        || status == CandidateStatus::NoHardware || status == CandidateStatus::Duplicate;
}

bool Candidate::sameContent(const Candidate &o) const
{
    const bool sameScore = hasScore() == o.hasScore() && (!hasScore() || score == o.score);
    return id == o.id && status == o.status && sameScore && inBeam == o.inBeam && code == o.code && plan == o.plan
        && menuItem == o.menuItem && error == o.error && metrics == o.metrics && feedback == o.feedback
        && flags == o.flags && parentId == o.parentId && iteration == o.iteration && origin == o.origin
        && planModel == o.planModel && codeModel == o.codeModel && planCallId == o.planCallId;
}

bool isMachineFault(const Candidate &candidate)
{
    return candidate.status == CandidateStatus::Failed && candidate.error.startsWith(QLatin1String("error: "));
}

QString statusWord(const Candidate &candidate)
{
    switch (candidate.status) {
    case CandidateStatus::CompileError: return QStringLiteral("compile error");
    case CandidateStatus::NoHardware: return QStringLiteral("no hardware");
    case CandidateStatus::Failed: {
        // The evaluation's own status leads the error ("timeout: ...", "error: ..."); anything else is a
        // failure before there was code to evaluate (the LLM call, an answer without code, an edit).
        QString kind = candidate.error.section(QLatin1Char(':'), 0, 0);
        if (kind == QLatin1String("error"))
            return QStringLiteral("error (machine)");
        if (kind == QLatin1String("timeout") || kind == QLatin1String("crash") || kind == QLatin1String("rejected")
            || kind == QLatin1String("incorrect") || kind == QLatin1String("cancelled"))
            return kind;
        if (kind == QLatin1String("compile_error"))
            return QStringLiteral("compile error");
        return QStringLiteral("no code");
    }
    default: return toString(candidate.status);
    }
}

std::optional<ScoreInterval> scoreInterval(const Candidate &candidate)
{
    if (candidate.status != CandidateStatus::Correct || !candidate.hasScore())
        return std::nullopt;
    const QJsonObject ratio = candidate.metrics.value(QStringLiteral("paired_ratio")).toObject();
    const double value = ratio.value(QStringLiteral("value")).toDouble();
    const double low = ratio.value(QStringLiteral("ci_low")).toDouble();
    const double high = ratio.value(QStringLiteral("ci_high")).toDouble();
    const double floor = std::clamp(candidate.metrics.value(QStringLiteral("noise_floor")).toDouble(), 0.0, 0.5);
    ScoreInterval interval{candidate.score, candidate.score};
    if (value > 0 && low > 0 && high >= low)
        interval = ScoreInterval{candidate.score * low / value, candidate.score * high / value};
    interval.low *= 1.0 - floor;
    interval.high *= 1.0 + floor;
    return interval;
}

bool withinNoise(const Candidate &a, const Candidate &b)
{
    const auto ia = scoreInterval(a);
    const auto ib = scoreInterval(b);
    if (!ia || !ib)
        return false;
    if (ia->low == ia->high && ib->low == ib->high)
        return ia->low == ib->low;
    return ia->low <= ib->high && ib->low <= ia->high;
}

} // namespace autocomp
