#include "model/eval_result.h"

#include <QJsonArray>

#include <cmath>
#include <limits>

namespace autocomp {

namespace {

QStringList stringList(const QJsonValue &value)
{
    QStringList out;
    for (const QJsonValue &v : value.toArray())
        out << v.toString();
    return out;
}

} // namespace

QJsonObject StepResult::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name},
                  {QStringLiteral("command"), QJsonArray::fromStringList(command)},
                  {QStringLiteral("exit_code"), exitCode},
                  {QStringLiteral("timed_out"), timedOut},
                  {QStringLiteral("crashed"), crashed},
                  {QStringLiteral("output_flooded"), outputFlooded},
                  {QStringLiteral("duration_ms"), durationMs},
                  {QStringLiteral("log"), log}};
    if (setupFailed)
        o.insert(QStringLiteral("setup_failed"), true);
    return o;
}

StepResult StepResult::fromJson(const QJsonObject &o)
{
    StepResult s;
    s.name = o.value(QStringLiteral("name")).toString();
    s.command = stringList(o.value(QStringLiteral("command")));
    s.exitCode = o.value(QStringLiteral("exit_code")).toInt(-1);
    s.timedOut = o.value(QStringLiteral("timed_out")).toBool();
    s.crashed = o.value(QStringLiteral("crashed")).toBool();
    s.outputFlooded = o.value(QStringLiteral("output_flooded")).toBool();
    s.setupFailed = o.value(QStringLiteral("setup_failed")).toBool();
    s.durationMs = o.value(QStringLiteral("duration_ms")).toDouble();
    s.log = o.value(QStringLiteral("log")).toString();
    return s;
}

QStringList EvalResult::judgeStatuses()
{
    return {QStringLiteral("ok"),      QStringLiteral("compile_error"), QStringLiteral("incorrect"),
            QStringLiteral("timeout"), QStringLiteral("crash"),         QStringLiteral("rejected")};
}

QStringList EvalResult::statuses()
{
    return judgeStatuses() << QStringLiteral("error") << QStringLiteral("no_hardware");
}

std::optional<EvalResult> EvalResult::fromJson(const QJsonObject &o, Source source, const QString &metric,
                                               QString *error)
{
    const QStringList allowed = source == Source::Judge ? judgeStatuses() : statuses();
    const QString status = o.value(QStringLiteral("status")).toString();
    if (!allowed.contains(status)) {
        *error = QStringLiteral("'status' must be one of %1, got '%2'").arg(allowed.join(QLatin1String(", ")), status);
        return std::nullopt;
    }
    if (!o.value(QStringLiteral("correct")).isBool()) {
        *error = QStringLiteral("'correct' must be true or false");
        return std::nullopt;
    }
    if (o.contains(QStringLiteral("metrics")) && !o.value(QStringLiteral("metrics")).isObject()) {
        *error = QStringLiteral("'metrics' must be an object");
        return std::nullopt;
    }
    EvalResult r;
    r.status = status;
    r.correct = o.value(QStringLiteral("correct")).toBool() && status == QLatin1String("ok");
    r.metrics = o.value(QStringLiteral("metrics")).toObject();
    r.feedback = stringList(o.value(QStringLiteral("feedback")));
    r.flags = stringList(o.value(QStringLiteral("flags")));
    r.log = o.value(QStringLiteral("log")).toString();
    for (const QJsonValue &v : o.value(QStringLiteral("steps")).toArray())
        r.steps << StepResult::fromJson(v.toObject());
    if (!metric.isEmpty() && r.correct && std::isnan(r.metricValue(metric))) {
        *error = QStringLiteral("says the candidate is correct but has no '%1' metric").arg(metric);
        return std::nullopt;
    }
    return r;
}

QJsonObject EvalResult::toJson() const
{
    QJsonArray stepArray;
    for (const StepResult &s : steps)
        stepArray.append(s.toJson());
    return {{QStringLiteral("status"), status},
            {QStringLiteral("correct"), correct},
            {QStringLiteral("metrics"), metrics},
            {QStringLiteral("feedback"), QJsonArray::fromStringList(feedback)},
            {QStringLiteral("flags"), QJsonArray::fromStringList(flags)},
            {QStringLiteral("log"), log},
            {QStringLiteral("steps"), stepArray}};
}

double EvalResult::metricValue(const QString &metric) const
{
    const QJsonValue value = metrics.value(metric);
    if (value.isDouble())
        return value.toDouble();
    if (value.isObject()) {
        const QJsonValue median = value.toObject().value(QLatin1String("median"));
        if (median.isDouble())
            return median.toDouble();
    }
    return std::numeric_limits<double>::quiet_NaN();
}

} // namespace autocomp
