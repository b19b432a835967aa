#include "common/value_format.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace autocomp {

QString ValueFormat::unitOfMetric(const QString &metric, const QString &unit)
{
    // The unit the run's target declared (backend.yaml `unit:`) wins over the name's suffix.
    if (!unit.isEmpty())
        return unit;
    const QString name = metric.toLower();
    struct Suffix
    {
        const char *suffix;
        const char *unit;
    };
    static constexpr Suffix s_suffixes[] = {
        {"_ms", "ms"},          {"_us", "µs"},          {"_ns", "ns"},     {"_s", "s"},
        {"_gflops", "GFLOP/s"}, {"_tflops", "TFLOP/s"}, {"_gbps", "GB/s"}, {"_cycles", "cycles"},
        {"_bytes", "B"},        {"_pct", "%"},          {"_percent", "%"},
    };
    for (const Suffix &s : s_suffixes)
        if (name.endsWith(QLatin1String(s.suffix)))
            return QString::fromUtf8(s.unit);
    if (name == QLatin1String("gflops"))
        return QStringLiteral("GFLOP/s");
    if (name == QLatin1String("tflops"))
        return QStringLiteral("TFLOP/s");
    if (name == QLatin1String("cycles"))
        return QStringLiteral("cycles");
    if (name == QLatin1String("gbps"))
        return QStringLiteral("GB/s");
    if (name == QLatin1String("instructions") || name.endsWith(QLatin1String("_instructions")))
        return QStringLiteral("instructions");
    return {};
}

QString ValueFormat::number(double value)
{
    if (std::isnan(value))
        return QStringLiteral("—");
    const double magnitude = std::abs(value);
    // Four significant digits, without switching to exponent notation for everyday magnitudes.
    if (magnitude != 0 && (magnitude >= 1e7 || magnitude < 1e-4))
        return QLocale::c().toString(value, 'g', 4);
    const int decimals = magnitude >= 1000 ? 0 : magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : magnitude >= 1 ? 3 : 4;
    return QLocale::c().toString(value, 'f', decimals);
}

QString ValueFormat::score(double value, const QString &metric, const QString &unit)
{
    if (std::isnan(value))
        return QStringLiteral("—");
    const QString shown = unitOfMetric(metric, unit);
    return shown.isEmpty() ? number(value) : number(value) + QLatin1Char(' ') + shown;
}

QString ValueFormat::metricValue(const QString &metric, const QJsonValue &value, const QString &unit)
{
    if (value.isDouble())
        return score(value.toDouble(), metric, unit);
    if (value.isBool())
        return value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
    if (value.isString())
        return value.toString();
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        QStringList parts;
        // The usual distribution keys first, in a reading order, then anything else.
        const QStringList preferred{QStringLiteral("median"), QStringLiteral("mean"), QStringLiteral("min"),
                                    QStringLiteral("p99"),    QStringLiteral("max"),  QStringLiteral("stddev")};
        for (const QString &key : preferred)
            if (object.contains(key))
                parts << key + QLatin1Char(' ') + metricValue(metric, object.value(key), unit);
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (preferred.contains(it.key()))
                continue;
            if (it.key() == QLatin1String("n"))
                parts << QStringLiteral("n %1").arg(it.value().toVariant().toString());
            else
                parts << it.key() + QLatin1Char(' ') + metricValue(metric, it.value(), unit);
        }
        return parts.join(QStringLiteral(", "));
    }
    if (value.isArray())
        return QStringLiteral("[%1 values]").arg(value.toArray().size());
    return QStringLiteral("—");
}

QString ValueFormat::speedup(double factor)
{
    if (std::isnan(factor) || factor <= 0)
        return QStringLiteral("—");
    return QLocale::c().toString(factor, 'f', 2) + QStringLiteral("×");
}

namespace {

QString threeDigits(double value)
{
    const double magnitude = std::abs(value);
    if (magnitude != 0 && (magnitude >= 1e7 || magnitude < 1e-4))
        return QLocale::c().toString(value, 'g', 3);
    const int decimals = magnitude == 0 ? 0 : std::clamp(2 - int(std::floor(std::log10(magnitude))), 0, 6);
    return QLocale::c().toString(value, 'f', decimals);
}

} // namespace

QString ValueFormat::figure(double value, const QString &metric, const QString &unit)
{
    if (std::isnan(value))
        return QStringLiteral("—");
    const QString shown = unitOfMetric(metric, unit);
    return shown.isEmpty() ? threeDigits(value) : threeDigits(value) + QLatin1Char(' ') + shown;
}

QString ValueFormat::factorValue(double factor)
{
    return std::isnan(factor) ? QStringLiteral("—") : threeDigits(factor);
}

QString ValueFormat::factor(double factor)
{
    if (std::isnan(factor) || factor <= 0)
        return QStringLiteral("—");
    return threeDigits(factor) + QStringLiteral("×");
}

QString ValueFormat::dollars(double usd)
{
    return QStringLiteral("$") + QLocale::c().toString(usd, 'f', usd == 0 || usd >= 1 ? 2 : usd >= 0.01 ? 3 : 4);
}

QString ValueFormat::durationMs(double ms)
{
    if (ms >= 1000)
        return QLocale::c().toString(ms / 1000.0, 'f', 2) + QStringLiteral(" s");
    return QLocale::c().toString(ms, 'f', 0) + QStringLiteral(" ms");
}

QString ValueFormat::summary(const QString &text, bool *truncated)
{
    constexpr qsizetype maxLength = 300;
    const QString trimmed = text.trimmed();
    QString line = trimmed.section(QLatin1Char('\n'), 0, 0).trimmed();
    if (line.size() > maxLength)
        line = line.left(maxLength - 1) + QChar(0x2026);
    const bool more = line != trimmed;
    // "...: " followed by the log reads as a sentence once the log is behind a link.
    if (more && line.endsWith(QLatin1Char(':')))
        line.chop(1);
    if (truncated)
        *truncated = more;
    return line;
}

} // namespace autocomp
