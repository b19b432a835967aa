#pragma once

#include <QString>
#include <QStringList>
#include <QVariant>

#include <yaml-cpp/yaml.h>

#include <optional>

namespace autocomp {

// Reads typed values out of yaml-cpp nodes and collects errors that name the file, line and key.
// Internal to core (yaml-cpp is a private dependency).
class YamlReader
{
public:
    explicit YamlReader(QString fileName) : m_fileName(std::move(fileName)) {}

    // Parses text; a syntax error is recorded with its line.
    std::optional<YAML::Node> parse(const QByteArray &text);

    QString where(const YAML::Node &node) const;
    void error(const YAML::Node &node, const QString &message);
    void error(const QString &message) { m_errors << m_fileName + QLatin1String(": ") + message; }

    // Reports every key of a map that is not in `known`.
    void checkKeys(const YAML::Node &map, const QString &path, const QStringList &known);

    std::optional<QString> string(const YAML::Node &node, const QString &key);
    std::optional<double> number(const YAML::Node &node, const QString &key);
    std::optional<qint64> integer(const YAML::Node &node, const QString &key);
    std::optional<bool> boolean(const YAML::Node &node, const QString &key);
    std::optional<QStringList> stringList(const YAML::Node &node, const QString &key);
    QVariant toVariant(const YAML::Node &node);

    QStringList errors() const { return m_errors; }
    bool ok() const { return m_errors.isEmpty(); }

private:
    QString m_fileName;
    QStringList m_errors;
};

QString fromStd(const std::string &text);
std::string toStd(const QString &text);

} // namespace autocomp
