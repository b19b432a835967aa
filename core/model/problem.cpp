#include "model/problem.h"

#include <QFile>

namespace autocomp {

QString Problem::startCode() const
{
    QFile file(startFile);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

static QString shapeToArgument(const QVariantMap &shape)
{
    QStringList parts;
    for (auto it = shape.cbegin(); it != shape.cend(); ++it)
        parts << it.key() + QLatin1Char('=') + it.value().toString();
    return parts.join(QLatin1Char(','));
}

QString Problem::shapesArgument() const
{
    QStringList parts;
    for (const QVariantMap &shape : shapes)
        parts << shapeToArgument(shape);
    return parts.join(QLatin1Char(';'));
}

QString Problem::shapeRangesArgument() const
{
    QStringList parts;
    for (const auto &range : shapeRanges)
        parts << QStringLiteral("%1=%2:%3").arg(range.first).arg(range.second.first).arg(range.second.second);
    return parts.join(QLatin1Char(','));
}

} // namespace autocomp
