#include "platform/yaml_reader.h"

namespace autocomp {

QString fromStd(const std::string &text) { return QString::fromStdString(text); }

std::string toStd(const QString &text) { return text.toStdString(); }

std::optional<YAML::Node> YamlReader::parse(const QByteArray &text)
{
    try {
        return YAML::Load(text.toStdString());
    } catch (const YAML::Exception &e) {
        m_errors << QStringLiteral("%1:%2:%3: YAML syntax error: %4")
                        .arg(m_fileName)
                        .arg(e.mark.line + 1)
                        .arg(e.mark.column + 1)
                        .arg(fromStd(e.msg));
        return std::nullopt;
    }
}

QString YamlReader::where(const YAML::Node &node) const
{
    if (!node.IsDefined() || node.Mark().is_null())
        return m_fileName;
    return QStringLiteral("%1:%2").arg(m_fileName).arg(node.Mark().line + 1);
}

void YamlReader::error(const YAML::Node &node, const QString &message)
{
    m_errors << where(node) + QLatin1String(": ") + message;
}

void YamlReader::checkKeys(const YAML::Node &map, const QString &path, const QStringList &known)
{
    if (!map.IsMap()) {
        error(map, QStringLiteral("'%1' must be a mapping").arg(path));
        return;
    }
    for (const auto &entry : map) {
        const QString key = fromStd(entry.first.as<std::string>(""));
        if (!known.contains(key)) {
            const QString full = path.isEmpty() ? key : path + QLatin1Char('.') + key;
            error(entry.first,
                  QStringLiteral("unknown key '%1' (expected one of: %2)").arg(full, known.join(QLatin1String(", "))));
        }
    }
}

std::optional<QString> YamlReader::string(const YAML::Node &node, const QString &key)
{
    if (!node.IsScalar()) {
        error(node, QStringLiteral("'%1' must be a string").arg(key));
        return std::nullopt;
    }
    return fromStd(node.Scalar());
}

std::optional<double> YamlReader::number(const YAML::Node &node, const QString &key)
{
    try {
        if (node.IsScalar())
            return node.as<double>();
    } catch (const YAML::Exception &) {}
    error(node,
          QStringLiteral("'%1' must be a number, got '%2'")
              .arg(key, node.IsScalar() ? fromStd(node.Scalar()) : QStringLiteral("a collection")));
    return std::nullopt;
}

std::optional<qint64> YamlReader::integer(const YAML::Node &node, const QString &key)
{
    try {
        if (node.IsScalar())
            return node.as<long long>();
    } catch (const YAML::Exception &) {}
    error(node,
          QStringLiteral("'%1' must be an integer, got '%2'")
              .arg(key, node.IsScalar() ? fromStd(node.Scalar()) : QStringLiteral("a collection")));
    return std::nullopt;
}

std::optional<bool> YamlReader::boolean(const YAML::Node &node, const QString &key)
{
    try {
        if (node.IsScalar())
            return node.as<bool>();
    } catch (const YAML::Exception &) {}
    error(node, QStringLiteral("'%1' must be true or false").arg(key));
    return std::nullopt;
}

std::optional<QStringList> YamlReader::stringList(const YAML::Node &node, const QString &key)
{
    if (node.IsNull())
        return QStringList{};
    if (node.IsScalar())
        return QStringList{fromStd(node.Scalar())};
    if (!node.IsSequence()) {
        error(node, QStringLiteral("'%1' must be a list of strings").arg(key));
        return std::nullopt;
    }
    QStringList out;
    for (const auto &item : node) {
        if (!item.IsScalar()) {
            error(item, QStringLiteral("'%1' entries must be strings").arg(key));
            return std::nullopt;
        }
        out << fromStd(item.Scalar());
    }
    return out;
}

QVariant YamlReader::toVariant(const YAML::Node &node)
{
    if (node.IsScalar()) {
        const std::string &s = node.Scalar();
        bool ok = false;
        const qlonglong i = QString::fromStdString(s).toLongLong(&ok);
        if (ok)
            return i;
        const double d = QString::fromStdString(s).toDouble(&ok);
        if (ok)
            return d;
        return fromStd(s);
    }
    if (node.IsSequence()) {
        QVariantList list;
        for (const auto &item : node)
            list << toVariant(item);
        return list;
    }
    if (node.IsMap()) {
        QVariantMap map;
        for (const auto &entry : node)
            map.insert(fromStd(entry.first.as<std::string>("")), toVariant(entry.second));
        return map;
    }
    return {};
}

} // namespace autocomp
