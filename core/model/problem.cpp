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

// Keys in `order` first (problem.yaml's), then any others (a shape built in code).
static QString shapeToArgument(const QVariantMap &shape, const QStringList &order)
{
    QStringList parts;
    for (const QString &key : order)
        if (shape.contains(key))
            parts << key + QLatin1Char('=') + shape.value(key).toString();
    for (auto it = shape.cbegin(); it != shape.cend(); ++it)
        if (!order.contains(it.key()))
            parts << it.key() + QLatin1Char('=') + it.value().toString();
    return parts.join(QLatin1Char(','));
}

QString Problem::shapesArgument() const
{
    QStringList parts;
    for (const QVariantMap &shape : shapes)
        parts << shapeToArgument(shape, shapeKeys);
    return parts.join(QLatin1Char(';'));
}

QString Problem::shapeArgument(int index) const
{
    if (index < 0 || index >= shapes.size())
        return {};
    return shapeToArgument(shapes.at(index), shapeKeys);
}

QString Problem::shapeRangesArgument() const
{
    QStringList parts;
    for (const auto &range : shapeRanges)
        parts << QStringLiteral("%1=%2:%3").arg(range.first).arg(range.second.first).arg(range.second.second);
    return parts.join(QLatin1Char(','));
}

} // namespace autocomp
